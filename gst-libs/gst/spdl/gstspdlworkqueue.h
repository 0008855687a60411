/* GStreamer SPDL: the decoders' work queue
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_WORK_QUEUE_H__
#define __GST_SPDL_WORK_QUEUE_H__

#include <gst/gst.h>

#include "gstspdlheldevents.h"
#include "gstspdlstats.h"

G_BEGIN_DECLS

/* The head of every item queued: an input (event NULL) to decode, or a
 * serialized event kept in its place between the inputs. The element's
 * own item struct starts with it. */
typedef struct
{
  GstEvent *event;
  gsize input_size;             /* counted against max_bytes_in_flight */
  gboolean done;                /* decoded, or an event */
} GstSpdlWorkItem;

/* Runs on a worker thread: decodes @item with @state (an idle one of
 * those added), without the queue's lock. */
typedef void (*GstSpdlWorkQueueDecode) (gpointer user_data, gpointer state,
    GstSpdlWorkItem * item);

/* What spdldecode and the parallel decoders share: inputs and the events
 * between them in arrival order; an exclusive GThreadPool whose threads
 * each take the oldest input not taken yet with an idle per-thread state
 * (its work item is only a wake-up: the inputs stay here, so a flush can
 * drop them); the source task taking the outputs in input order (or, not
 * ordered, the first decoded before any event); upstream blocked while
 * max_in_flight inputs are in flight (beyond base_in_flight only while
 * they hold at most max_bytes_in_flight bytes); flushing, draining and
 * the downstream flow result. */
typedef struct
{
  GMutex lock;
  GCond done_cond;              /* an input decoded, an event, flushing */
  GCond space_cond;             /* room for one more input */
  GCond drain_cond;             /* an output went, the items changed */
  GQueue items;                 /* inputs and events, arrival order */
  GQueue pending;               /* inputs no thread took yet */
  GQueue idle_states;
  GList *states;                /* all, for stats (read under lock) */
  guint in_flight;
  guint max_in_flight;
  guint base_in_flight;         /* always allowed, whatever their size */
  gsize bytes_in_flight;
  gsize max_bytes_in_flight;
  guint busy;
  gboolean flushing;
  gboolean outputting;          /* the source task holds an item */
  GstFlowReturn result;         /* downstream's, FLUSHING when flushing */
  GThreadPool *workers;
  GstSpdlWorkQueueDecode decode;
  gpointer user_data;
  GDestroyNotify free_item;
  GstSpdlStats *stats;          /* decode times recorded here */
} GstSpdlWorkQueue;

void gst_spdl_work_queue_init (GstSpdlWorkQueue * queue,
    GDestroyNotify free_item);
void gst_spdl_work_queue_clear (GstSpdlWorkQueue * queue);

/* READY->PAUSED: @states (one per thread, taken) and as many threads
 * running @decode, recording into @stats. FALSE with @error set if the
 * threads could not start (gst_spdl_work_queue_stop() then). */
gboolean gst_spdl_work_queue_start (GstSpdlWorkQueue * queue,
    GList * states, GstSpdlWorkQueueDecode decode, gpointer user_data,
    GstSpdlStats * stats, GError ** error);
/* PAUSED->READY: the inputs no thread took are dropped, the running
 * decodes finish; each state goes to @free_state. */
void gst_spdl_work_queue_stop (GstSpdlWorkQueue * queue,
    GFunc free_state, gpointer user_data);

/* The chain function: queues @item (an input) once there is room, or
 * frees it and returns the flow result that stopped it;
 * GST_FLOW_CUSTOM_ERROR when no thread could be woken (the item queued:
 * the caller posts the error and returns GST_FLOW_ERROR). */
GstFlowReturn gst_spdl_work_queue_push_input (GstSpdlWorkQueue * queue,
    GstSpdlWorkItem * item);
/* A serialized event in its place (@item->event set), dropped while
 * flushing. */
void gst_spdl_work_queue_push_event (GstSpdlWorkQueue * queue,
    GstSpdlWorkItem * item);

/* The source task: the next item to output (@ordered: the oldest, once
 * done; otherwise the first done before any event), waiting for one; NULL
 * when flushing (then pause the task). Marks the previous one out. */
GstSpdlWorkItem *gst_spdl_work_queue_take (GstSpdlWorkQueue * queue,
    gboolean ordered);
/* The source task, after a push that did not return OK: @ret stops the
 * chain function; a flow error is posted on @element as GStreamer's own
 * elements post it, EOS follows an error downstream, and the task on
 * @srcpad pauses. */
void gst_spdl_work_queue_stop_output (GstSpdlWorkQueue * queue,
    GstElement * element, GstPad * srcpad, GstFlowReturn ret);

/* Flush-start or deactivation: everything waiting returns. */
void gst_spdl_work_queue_set_flushing (GstSpdlWorkQueue * queue);
/* Flush-stop (the source task paused): the items dropped, as queue does
 * but for the sticky events among them, kept in @held to go out before
 * the next output; flowing again. */
void gst_spdl_work_queue_flush_stop (GstSpdlWorkQueue * queue,
    GstSpdlHeldEvents * held);
/* The source pad's activation: flowing. */
void gst_spdl_work_queue_set_flowing (GstSpdlWorkQueue * queue);

/* A DRAIN query: waits until every item queued so far went downstream;
 * FALSE if flushing or downstream stopped first. */
gboolean gst_spdl_work_queue_drain (GstSpdlWorkQueue * queue);

G_END_DECLS

#endif /* __GST_SPDL_WORK_QUEUE_H__ */
