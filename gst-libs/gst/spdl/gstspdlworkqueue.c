/* GStreamer SPDL: the decoders' work queue
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlworkqueue.h"

#include <string.h>

void
gst_spdl_work_queue_init (GstSpdlWorkQueue * queue, GDestroyNotify free_item)
{
  memset (queue, 0, sizeof (*queue));
  g_mutex_init (&queue->lock);
  g_cond_init (&queue->done_cond);
  g_cond_init (&queue->space_cond);
  g_cond_init (&queue->drain_cond);
  g_queue_init (&queue->items);
  g_queue_init (&queue->pending);
  g_queue_init (&queue->idle_states);
  queue->flushing = TRUE;
  queue->result = GST_FLOW_FLUSHING;
  queue->max_bytes_in_flight = G_MAXSIZE;
  queue->free_item = free_item;
}

void
gst_spdl_work_queue_clear (GstSpdlWorkQueue * queue)
{
  g_mutex_clear (&queue->lock);
  g_cond_clear (&queue->done_cond);
  g_cond_clear (&queue->space_cond);
  g_cond_clear (&queue->drain_cond);
}

/* Runs in a pool thread, once per input queued: the oldest pending input
 * with an idle state. */
static void
worker_func (gpointer data, gpointer user_data)
{
  GstSpdlWorkQueue *queue = user_data;
  GstSpdlWorkItem *item;
  gpointer state;
  guint64 start, cpu_start;

  g_mutex_lock (&queue->lock);
  if (queue->flushing || g_queue_is_empty (&queue->pending)) {
    g_mutex_unlock (&queue->lock);
    return;
  }
  item = g_queue_pop_head (&queue->pending);
  state = g_queue_pop_head (&queue->idle_states);
  queue->busy++;
  g_mutex_unlock (&queue->lock);

  start = gst_spdl_now_ns ();
  cpu_start = gst_spdl_thread_cpu_ns ();
  queue->decode (queue->user_data, state, item);
  /* beside the wall time: what a decode costs when threads share cores */
  gst_spdl_stats_record_with_cpu (queue->stats, gst_spdl_now_ns () - start,
      gst_spdl_thread_cpu_ns () - cpu_start);

  g_mutex_lock (&queue->lock);
  g_queue_push_head (&queue->idle_states, state);
  item->done = TRUE;
  queue->busy--;
  g_cond_broadcast (&queue->done_cond);
  g_mutex_unlock (&queue->lock);
}

gboolean
gst_spdl_work_queue_start (GstSpdlWorkQueue * queue, GList * states,
    GstSpdlWorkQueueDecode decode, gpointer user_data, GstSpdlStats * stats,
    GError ** error)
{
  GList *l;
  guint n = g_list_length (states);

  queue->decode = decode;
  queue->user_data = user_data;
  queue->stats = stats;
  g_mutex_lock (&queue->lock);
  for (l = states; l; l = l->next)
    g_queue_push_tail (&queue->idle_states, l->data);
  queue->states = states;
  g_mutex_unlock (&queue->lock);
  /* exclusive: the threads are ours from start to stop, none created per
   * input */
  queue->workers = g_thread_pool_new (worker_func, queue, n, TRUE, error);
  return queue->workers != NULL;
}

/* with the lock */
static void
clear_items_locked (GstSpdlWorkQueue * queue)
{
  /* workers hold no item once busy is 0 */
  while (queue->busy > 0)
    g_cond_wait (&queue->done_cond, &queue->lock);
  g_queue_clear (&queue->pending);
  g_queue_clear_full (&queue->items, queue->free_item);
  queue->in_flight = 0;
  queue->bytes_in_flight = 0;
  g_cond_broadcast (&queue->space_cond);
}

void
gst_spdl_work_queue_stop (GstSpdlWorkQueue * queue, GFunc free_state,
    gpointer user_data)
{
  /* inputs not started yet are dropped; the running ones finish */
  if (queue->workers)
    g_thread_pool_free (queue->workers, TRUE, TRUE);
  queue->workers = NULL;
  g_mutex_lock (&queue->lock);
  clear_items_locked (queue);
  g_queue_clear (&queue->idle_states);
  g_list_foreach (queue->states, free_state, user_data);
  g_clear_pointer (&queue->states, g_list_free);
  g_mutex_unlock (&queue->lock);
}

GstFlowReturn
gst_spdl_work_queue_push_input (GstSpdlWorkQueue * queue,
    GstSpdlWorkItem * item)
{
  GstFlowReturn ret;

  g_mutex_lock (&queue->lock);
  /* beyond base_in_flight, only while the inputs held stay within
   * max_bytes_in_flight: a long input's wait does not make the element
   * hold many large ones */
  while (!queue->flushing && queue->result == GST_FLOW_OK &&
      (queue->in_flight >= queue->max_in_flight ||
          (queue->in_flight >= queue->base_in_flight &&
              queue->bytes_in_flight + item->input_size >
              queue->max_bytes_in_flight)))
    g_cond_wait (&queue->space_cond, &queue->lock);
  ret = queue->result;
  if (ret != GST_FLOW_OK) {
    g_mutex_unlock (&queue->lock);
    queue->free_item (item);
    return ret;
  }
  g_queue_push_tail (&queue->items, item);
  g_queue_push_tail (&queue->pending, item);
  queue->in_flight++;
  queue->bytes_in_flight += item->input_size;
  g_mutex_unlock (&queue->lock);
  /* the pool's item only wakes a thread (an exclusive pool creates none
   * here) */
  if (!g_thread_pool_push (queue->workers, queue, NULL))
    return GST_FLOW_CUSTOM_ERROR;
  return GST_FLOW_OK;
}

void
gst_spdl_work_queue_push_event (GstSpdlWorkQueue * queue,
    GstSpdlWorkItem * item)
{
  item->done = TRUE;
  g_mutex_lock (&queue->lock);
  if (queue->flushing) {
    g_mutex_unlock (&queue->lock);
    queue->free_item (item);
    return;
  }
  g_queue_push_tail (&queue->items, item);
  g_cond_broadcast (&queue->done_cond);
  g_mutex_unlock (&queue->lock);
}

/* with the lock */
static GstSpdlWorkItem *
take_ready_locked (GstSpdlWorkQueue * queue, gboolean ordered)
{
  GList *l;

  for (l = queue->items.head; l; l = l->next) {
    GstSpdlWorkItem *item = l->data;

    if (item->done && (l == queue->items.head || !item->event)) {
      g_queue_delete_link (&queue->items, l);
      return item;
    }
    if (ordered || item->event)
      break;
  }
  return NULL;
}

GstSpdlWorkItem *
gst_spdl_work_queue_take (GstSpdlWorkQueue * queue, gboolean ordered)
{
  GstSpdlWorkItem *item = NULL;

  g_mutex_lock (&queue->lock);
  /* the item of the previous call is out: a DRAIN may be answered */
  queue->outputting = FALSE;
  g_cond_broadcast (&queue->drain_cond);
  while (!queue->flushing &&
      (item = take_ready_locked (queue, ordered)) == NULL)
    g_cond_wait (&queue->done_cond, &queue->lock);
  if (queue->flushing) {
    g_mutex_unlock (&queue->lock);
    return NULL;
  }
  queue->outputting = TRUE;
  if (item->event == NULL) {
    queue->in_flight--;
    queue->bytes_in_flight -= item->input_size;
    g_cond_signal (&queue->space_cond);
  }
  g_mutex_unlock (&queue->lock);
  return item;
}

void
gst_spdl_work_queue_stop_output (GstSpdlWorkQueue * queue,
    GstElement * element, GstPad * srcpad, GstFlowReturn ret)
{
  g_mutex_lock (&queue->lock);
  if (queue->result == GST_FLOW_OK)
    queue->result = ret;
  g_cond_broadcast (&queue->space_cond);
  g_cond_broadcast (&queue->drain_cond);
  g_mutex_unlock (&queue->lock);
  if (ret != GST_FLOW_EOS && ret != GST_FLOW_FLUSHING &&
      ret != GST_FLOW_ERROR)
    GST_ELEMENT_FLOW_ERROR (element, ret);
  if (ret == GST_FLOW_ERROR || ret == GST_FLOW_NOT_LINKED ||
      ret == GST_FLOW_NOT_NEGOTIATED)
    gst_pad_push_event (srcpad, gst_event_new_eos ());
  gst_pad_pause_task (srcpad);
}

void
gst_spdl_work_queue_set_flushing (GstSpdlWorkQueue * queue)
{
  g_mutex_lock (&queue->lock);
  queue->flushing = TRUE;
  queue->result = GST_FLOW_FLUSHING;
  g_cond_broadcast (&queue->done_cond);
  g_cond_broadcast (&queue->space_cond);
  g_cond_broadcast (&queue->drain_cond);
  g_mutex_unlock (&queue->lock);
}

void
gst_spdl_work_queue_flush_stop (GstSpdlWorkQueue * queue,
    GstSpdlHeldEvents * held)
{
  GList *l;

  g_mutex_lock (&queue->lock);
  for (l = queue->items.head; l; l = l->next)
    gst_spdl_held_events_keep_sticky (held,
        ((GstSpdlWorkItem *) l->data)->event);
  clear_items_locked (queue);
  queue->flushing = FALSE;
  queue->result = GST_FLOW_OK;
  queue->outputting = FALSE;
  g_mutex_unlock (&queue->lock);
}

void
gst_spdl_work_queue_set_flowing (GstSpdlWorkQueue * queue)
{
  g_mutex_lock (&queue->lock);
  queue->flushing = FALSE;
  queue->result = GST_FLOW_OK;
  g_mutex_unlock (&queue->lock);
}

gboolean
gst_spdl_work_queue_drain (GstSpdlWorkQueue * queue)
{
  gboolean ok;

  g_mutex_lock (&queue->lock);
  while (!queue->flushing && queue->result == GST_FLOW_OK &&
      (!g_queue_is_empty (&queue->items) || queue->outputting))
    g_cond_wait (&queue->drain_cond, &queue->lock);
  ok = !queue->flushing && queue->result == GST_FLOW_OK;
  g_mutex_unlock (&queue->lock);
  return ok;
}
