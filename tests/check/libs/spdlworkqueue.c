/* GStreamer SPDL: unit tests of the decoders' work queue
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

#include <gst/check/gstcheck.h>

#include "gstspdlworkqueue.h"
#include "spdlcheckmain.h"

/* An input whose decode waits until the test releases it, so the test
 * decides the order in which inputs finish. */
typedef struct
{
  GstSpdlWorkItem head;
  guint id;
  gboolean released;
  gboolean decoded;
} TestItem;

static GMutex gate_lock;
static GCond gate_cond;
static gint items_freed;

static void
test_item_free (gpointer data)
{
  TestItem *item = data;

  if (item->head.event)
    gst_event_unref (item->head.event);
  g_atomic_int_inc (&items_freed);
  g_free (item);
}

static void
gated_decode (gpointer user_data, gpointer state, GstSpdlWorkItem * head)
{
  TestItem *item = (TestItem *) head;

  g_mutex_lock (&gate_lock);
  while (!item->released)
    g_cond_wait (&gate_cond, &gate_lock);
  item->decoded = TRUE;
  g_cond_broadcast (&gate_cond);
  g_mutex_unlock (&gate_lock);
}

static void
release (TestItem * item)
{
  g_mutex_lock (&gate_lock);
  item->released = TRUE;
  g_cond_broadcast (&gate_cond);
  g_mutex_unlock (&gate_lock);
}

static void
wait_decoded (TestItem * item)
{
  g_mutex_lock (&gate_lock);
  while (!item->decoded)
    g_cond_wait (&gate_cond, &gate_lock);
  g_mutex_unlock (&gate_lock);
}

static GstSpdlStats stats;

static void
start_queue (GstSpdlWorkQueue * queue, guint threads, guint max_in_flight)
{
  GList *states = NULL;
  guint i;

  items_freed = 0;
  gst_spdl_stats_init (&stats);
  gst_spdl_work_queue_init (queue, test_item_free);
  queue->max_in_flight = queue->base_in_flight = max_in_flight;
  for (i = 0; i < threads; i++)
    states = g_list_prepend (states, GUINT_TO_POINTER (i + 1));
  fail_unless (gst_spdl_work_queue_start (queue, states, gated_decode, NULL,
          &stats, NULL));
  gst_spdl_work_queue_set_flowing (queue);
}

static void
free_state (gpointer state, gpointer user_data)
{
  /* the states are numbers */
}

static void
stop_queue (GstSpdlWorkQueue * queue)
{
  gst_spdl_work_queue_set_flushing (queue);
  gst_spdl_work_queue_stop (queue, free_state, NULL);
  gst_spdl_work_queue_clear (queue);
  gst_spdl_stats_clear (&stats);
}

static TestItem *
push_input (GstSpdlWorkQueue * queue, guint id, gsize size)
{
  TestItem *item = g_new0 (TestItem, 1);

  item->id = id;
  item->head.input_size = size;
  fail_unless_equals_int (gst_spdl_work_queue_push_input (queue, &item->head),
      GST_FLOW_OK);
  return item;
}

static TestItem *
push_event (GstSpdlWorkQueue * queue, GstEvent * event)
{
  TestItem *item = g_new0 (TestItem, 1);

  item->head.event = event;
  gst_spdl_work_queue_push_event (queue, &item->head);
  return item;
}

/* takes the next item, checks it is @expected, frees it */
static void
take_expect (GstSpdlWorkQueue * queue, gboolean ordered, TestItem * expected)
{
  GstSpdlWorkItem *item = gst_spdl_work_queue_take (queue, ordered);

  fail_unless (item == &expected->head, "took item %u, expected %u",
      item ? ((TestItem *) item)->id : 0, expected->id);
  test_item_free (item);
}

/* three threads; inputs 1 and 2, tags, input 3 */
static void
push_two_event_one (GstSpdlWorkQueue * queue, TestItem ** a, TestItem ** b,
    TestItem ** ev, TestItem ** c)
{
  start_queue (queue, 3, 8);
  *a = push_input (queue, 1, 0);
  *b = push_input (queue, 2, 0);
  *ev = push_event (queue, gst_event_new_tag (gst_tag_list_new_empty ()));
  *c = push_input (queue, 3, 0);
}

GST_START_TEST (test_ordered_keeps_input_order)
{
  GstSpdlWorkQueue queue;
  TestItem *a, *b, *c, *ev;

  push_two_event_one (&queue, &a, &b, &ev, &c);
  /* finished last to first */
  release (c);
  wait_decoded (c);
  release (b);
  wait_decoded (b);
  release (a);
  take_expect (&queue, TRUE, a);
  take_expect (&queue, TRUE, b);
  take_expect (&queue, TRUE, ev);
  take_expect (&queue, TRUE, c);
  fail_unless_equals_int (queue.in_flight, 0);
  stop_queue (&queue);
}

GST_END_TEST;

GST_START_TEST (test_unordered_stops_at_events)
{
  GstSpdlWorkQueue queue;
  TestItem *a, *b, *c, *ev;

  push_two_event_one (&queue, &a, &b, &ev, &c);
  /* b first: it leaves before a */
  release (b);
  take_expect (&queue, FALSE, b);
  /* c is done before a, but after the event: a, the event, then c */
  release (c);
  wait_decoded (c);
  release (a);
  take_expect (&queue, FALSE, a);
  take_expect (&queue, FALSE, ev);
  take_expect (&queue, FALSE, c);
  stop_queue (&queue);
}

GST_END_TEST;

typedef struct
{
  GstSpdlWorkQueue *queue;
  guint id;
  gsize size;
  gboolean done;
  GstFlowReturn ret;
} Pusher;

static gpointer
pusher_func (gpointer data)
{
  Pusher *p = data;
  TestItem *item = g_new0 (TestItem, 1);

  item->id = p->id;
  item->head.input_size = p->size;
  /* released at once: only the bound can hold it */
  item->released = TRUE;
  p->ret = gst_spdl_work_queue_push_input (p->queue, &item->head);
  g_atomic_int_set (&p->done, TRUE);
  return NULL;
}

/* A push that must wait: still waiting a moment later (a wrong queue
 * shows here; a right one never does, however loaded the machine). */
static GThread *
start_blocked_push (Pusher * p)
{
  GThread *thread = g_thread_new ("pusher", pusher_func, p);

  g_usleep (100 * 1000);
  fail_if (g_atomic_int_get (&p->done), "input %u was not held back", p->id);
  return thread;
}

GST_START_TEST (test_in_flight_bound)
{
  GstSpdlWorkQueue queue;
  Pusher p = { &queue, 2, 0, FALSE, GST_FLOW_ERROR };
  GThread *thread;
  TestItem *a;

  start_queue (&queue, 2, 1);
  a = push_input (&queue, 1, 0);
  thread = start_blocked_push (&p);
  release (a);
  /* a leaves: room for the second */
  take_expect (&queue, TRUE, a);
  g_thread_join (thread);
  fail_unless_equals_int (p.ret, GST_FLOW_OK);
  fail_unless_equals_int (queue.in_flight, 1);
  stop_queue (&queue);
  /* the second, never taken, freed by the stop */
  fail_unless_equals_int (items_freed, 2);
}

GST_END_TEST;

GST_START_TEST (test_bytes_bound)
{
  GstSpdlWorkQueue queue;
  Pusher p = { &queue, 2, 60, FALSE, GST_FLOW_ERROR };
  GThread *thread;
  TestItem *a;

  /* 4 in flight, beyond the first only within 100 bytes */
  start_queue (&queue, 2, 4);
  queue.base_in_flight = 1;
  queue.max_bytes_in_flight = 100;
  a = push_input (&queue, 1, 60);
  thread = start_blocked_push (&p);
  /* flushing: the waiting push gives up, its input freed */
  gst_spdl_work_queue_set_flushing (&queue);
  g_thread_join (thread);
  fail_unless_equals_int (p.ret, GST_FLOW_FLUSHING);
  fail_unless_equals_int (items_freed, 1);
  release (a);
  stop_queue (&queue);
}

GST_END_TEST;

GST_START_TEST (test_flush_drops_everything)
{
  GstSpdlWorkQueue queue;
  GstSpdlHeldEvents held = { NULL, NULL, FALSE };
  TestItem *a, *b;

  start_queue (&queue, 2, 8);
  a = push_input (&queue, 1, 0);
  push_event (&queue, gst_event_new_tag (gst_tag_list_new_empty ()));
  b = push_input (&queue, 2, 0);
  gst_spdl_work_queue_set_flushing (&queue);
  fail_unless (gst_spdl_work_queue_take (&queue, TRUE) == NULL);
  /* while flushing, events are dropped */
  push_event (&queue, gst_event_new_eos ());
  fail_unless_equals_int (items_freed, 1);
  /* the decodes under way finish; the flush waits for them */
  release (a);
  release (b);
  gst_spdl_work_queue_flush_stop (&queue, &held);
  /* the tags kept for the next output */
  fail_unless_equals_int (g_list_length (held.events), 1);
  fail_unless_equals_int (GST_EVENT_TYPE (held.events->data), GST_EVENT_TAG);
  gst_spdl_held_events_reset (&held);
  fail_unless_equals_int (items_freed, 4);
  fail_unless_equals_int (queue.in_flight, 0);
  fail_unless_equals_int (queue.result, GST_FLOW_OK);
  /* flowing again */
  a = push_input (&queue, 3, 0);
  release (a);
  take_expect (&queue, TRUE, a);
  stop_queue (&queue);
}

GST_END_TEST;

typedef struct
{
  GstSpdlWorkQueue *queue;
  gboolean done;
  gboolean ok;
} Drainer;

static gpointer
drain_func (gpointer data)
{
  Drainer *d = data;

  d->ok = gst_spdl_work_queue_drain (d->queue);
  g_atomic_int_set (&d->done, TRUE);
  return NULL;
}

/* the source task: takes until flushing */
static gpointer
take_func (gpointer data)
{
  GstSpdlWorkItem *item;

  while ((item = gst_spdl_work_queue_take (data, TRUE)))
    test_item_free (item);
  return NULL;
}

GST_START_TEST (test_drain_waits_for_the_output)
{
  GstSpdlWorkQueue queue;
  Drainer before = { &queue, FALSE, FALSE };
  Drainer after = { &queue, FALSE, FALSE };
  GstSpdlWorkItem *item;
  GThread *thread_before, *thread_after, *taker;
  TestItem *a;

  start_queue (&queue, 2, 8);
  a = push_input (&queue, 1, 0);
  /* a DRAIN while the input decodes waits */
  thread_before = g_thread_new ("drainer", drain_func, &before);
  g_usleep (100 * 1000);
  fail_if (g_atomic_int_get (&before.done));
  release (a);
  item = gst_spdl_work_queue_take (&queue, TRUE);
  fail_unless (item == &a->head);
  /* taken, not yet pushed: a DRAIN then waits too, the queue empty */
  thread_after = g_thread_new ("drainer", drain_func, &after);
  g_usleep (100 * 1000);
  fail_if (g_atomic_int_get (&before.done));
  fail_if (g_atomic_int_get (&after.done));
  test_item_free (item);
  /* the source task's next take marks it out, then waits */
  taker = g_thread_new ("taker", take_func, &queue);
  g_thread_join (thread_before);
  g_thread_join (thread_after);
  fail_unless (before.ok);
  fail_unless (after.ok);
  gst_spdl_work_queue_set_flushing (&queue);
  g_thread_join (taker);
  stop_queue (&queue);
}

GST_END_TEST;

static Suite *
spdlworkqueue_suite (void)
{
  Suite *s = suite_create ("spdlworkqueue");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_ordered_keeps_input_order);
  tcase_add_test (tc, test_unordered_stops_at_events);
  tcase_add_test (tc, test_in_flight_bound);
  tcase_add_test (tc, test_bytes_bound);
  tcase_add_test (tc, test_flush_drops_everything);
  tcase_add_test (tc, test_drain_waits_for_the_output);
  return s;
}

SPDL_CHECK_MAIN (spdlworkqueue);
