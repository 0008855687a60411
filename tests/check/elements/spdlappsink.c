/* GStreamer SPDL plugin: spdlappsink
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsink.h>

#include "gstspdlmeta.h"
#include "spdlcheckmain.h"

#define N_EPOCH_ENDS 6

/* Pushes epoch ends from their own thread (the sink may hold it back),
 * counting those it took. */
typedef struct
{
  GstHarness *h;
  gint pushed;
  gint refused;
} EpochPusher;

static gpointer
push_epoch_ends (gpointer data)
{
  EpochPusher *p = data;
  guint e;

  for (e = 0; e < N_EPOCH_ENDS; e++) {
    if (!gst_harness_push_event (p->h, gst_spdl_epoch_end_event_new (e, 0))) {
      g_atomic_int_inc (&p->refused);
      break;
    }
    g_atomic_int_inc (&p->pushed);
  }
  return NULL;
}

/* Whether @counter reaches @want within 5 s */
static gboolean
reaches (gint * counter, gint want)
{
  gint64 end = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  while (g_atomic_int_get (counter) < want) {
    if (g_get_monotonic_time () > end)
      return FALSE;
    g_usleep (1000);
  }
  return TRUE;
}

/* ... and stays there for 200 ms */
static gboolean
stays (gint * counter, gint want)
{
  g_usleep (200 * 1000);
  return g_atomic_int_get (counter) == want;
}

static GstSample *
pull_batch_within (GstHarness * h, GstClockTime timeout)
{
  GstSample *sample = NULL;

  g_signal_emit_by_name (h->element, "try-pull-batch", timeout, &sample);
  return sample;
}

#define pull_batch(h) pull_batch_within ((h), 5 * GST_SECOND)

static EpochPusher *
start_pusher (GstHarness * h, GThread ** thread)
{
  EpochPusher *p = g_new0 (EpochPusher, 1);

  p->h = h;
  *thread = g_thread_new ("epoch-ends", push_epoch_ends, p);
  return p;
}

/* Epochs without a batch (drop-last with fewer samples than a batch, a
 * shard too small) must not run unboundedly ahead of a pull-batch
 * consumer: the fifth epoch end waits until the consumer pulled one. */
GST_START_TEST (test_epochs_ahead_bounded)
{
  GstHarness *h = gst_harness_new ("spdlappsink");
  GstSample *sample = NULL;
  GThread *thread;
  EpochPusher *p;
  guint epoch;

  gst_harness_set_src_caps_str (h, "application/x-test");
  /* a consumer of pull-batch */
  fail_unless (pull_batch_within (h, 0) == NULL);
  p = start_pusher (h, &thread);
  fail_unless (reaches (&p->pushed, 4));
  fail_unless (stays (&p->pushed, 4), "%d epoch ends queued",
      g_atomic_int_get (&p->pushed));

  /* one pulled, one more taken, in order */
  sample = pull_batch (h);
  fail_unless (sample != NULL);
  fail_unless (gst_sample_get_buffer (sample) == NULL);
  fail_unless (gst_structure_get_uint (gst_sample_get_info (sample), "epoch",
          &epoch));
  fail_unless_equals_int (epoch, 0);
  gst_sample_unref (sample);
  fail_unless (reaches (&p->pushed, 5));
  fail_unless (stays (&p->pushed, 5));

  /* stopping releases the waiting streaming thread */
  fail_unless_equals_int (gst_element_set_state (h->element,
          GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  g_thread_join (thread);
  fail_unless_equals_int (p->refused, 1);
  fail_unless_equals_int (p->pushed, 5);
  gst_harness_teardown (h);
  g_free (p);
}

GST_END_TEST;

/* Pulls epoch ends from their own thread until @n or a 5 s timeout */
typedef struct
{
  GstHarness *h;
  guint n;
  guint epochs[N_EPOCH_ENDS];
  gint pulled;
} EpochPuller;

static gpointer
pull_epoch_ends (gpointer data)
{
  EpochPuller *q = data;

  while ((guint) g_atomic_int_get (&q->pulled) < q->n) {
    GstSample *sample = pull_batch (q->h);
    guint i = g_atomic_int_get (&q->pulled);

    if (sample == NULL)
      break;
    gst_structure_get_uint (gst_sample_get_info (sample), "epoch",
        &q->epochs[i]);
    gst_sample_unref (sample);
    g_atomic_int_inc (&q->pulled);
  }
  return NULL;
}

/* A consumer already waiting when epoch ends arrive gets them all, in
 * order (GStreamer 1.22's appsink does not wake a waiting pull for an
 * event; without its slices pull-batch slept while the pipeline waited) */
GST_START_TEST (test_waiting_consumer_gets_epoch_ends)
{
  GstHarness *h = gst_harness_new ("spdlappsink");
  EpochPuller q = { h, N_EPOCH_ENDS, {0}, 0 };
  GThread *puller, *thread;
  EpochPusher *p;
  guint i;

  gst_harness_set_src_caps_str (h, "application/x-test");
  fail_unless (pull_batch_within (h, 0) == NULL);
  puller = g_thread_new ("puller", pull_epoch_ends, &q);
  g_usleep (100 * 1000);
  p = start_pusher (h, &thread);
  fail_unless (reaches (&q.pulled, N_EPOCH_ENDS), "%d pulled",
      g_atomic_int_get (&q.pulled));
  g_thread_join (puller);
  g_thread_join (thread);
  fail_unless_equals_int (p->pushed, N_EPOCH_ENDS);
  for (i = 0; i < N_EPOCH_ENDS; i++)
    fail_unless_equals_int (q.epochs[i], i);
  gst_harness_teardown (h);
  g_free (p);
}

GST_END_TEST;

/* Without pull-batch (appsink's own pulls drop epoch ends unseen) nothing
 * waits: a pull-sample consumer gets EOS after many empty epochs */
GST_START_TEST (test_pull_sample_consumer_never_waits)
{
  GstHarness *h = gst_harness_new ("spdlappsink");
  GThread *thread;
  EpochPusher *p;

  gst_harness_set_src_caps_str (h, "application/x-test");
  p = start_pusher (h, &thread);
  fail_unless (reaches (&p->pushed, N_EPOCH_ENDS));
  g_thread_join (thread);
  fail_unless_equals_int (p->refused, 0);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless (gst_app_sink_try_pull_sample (GST_APP_SINK (h->element),
          5 * GST_SECOND) == NULL);
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (h->element)));
  gst_harness_teardown (h);
  g_free (p);
}

GST_END_TEST;

/* Pulls the batch pushed first, then every epoch end, in order */
static void
assert_batch_then_epoch_ends (GstHarness * h)
{
  GstSample *sample = pull_batch (h);
  guint i, epoch;

  fail_unless (sample != NULL && gst_sample_get_buffer (sample) != NULL);
  gst_sample_unref (sample);
  for (i = 0; i < N_EPOCH_ENDS; i++) {
    sample = pull_batch (h);
    fail_unless (sample != NULL, "epoch end %u missing", i);
    fail_unless (gst_structure_get_uint (gst_sample_get_info (sample),
            "epoch", &epoch));
    fail_unless_equals_int (epoch, i);
    gst_sample_unref (sample);
  }
}

/* Pausing while the streaming thread waits keeps the epoch end: it is
 * queued once playing again */
GST_START_TEST (test_pause_keeps_waiting_epoch_end)
{
  GstHarness *h = gst_harness_new ("spdlappsink");
  GThread *thread;
  EpochPusher *p;

  gst_harness_set_src_caps_str (h, "application/x-test");
  fail_unless (pull_batch_within (h, 0) == NULL);
  /* a batch first: the sink prerolls and plays */
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_new ()),
      GST_FLOW_OK);
  p = start_pusher (h, &thread);
  fail_unless (reaches (&p->pushed, 4));
  fail_unless (stays (&p->pushed, 4));
  gst_element_set_state (h->element, GST_STATE_PAUSED);
  fail_unless (stays (&p->pushed, 4));
  gst_element_set_state (h->element, GST_STATE_PLAYING);

  assert_batch_then_epoch_ends (h);
  g_thread_join (thread);
  fail_unless_equals_int (p->refused, 0);
  gst_harness_teardown (h);
  g_free (p);
}

GST_END_TEST;

typedef struct
{
  GstElement *element;
  gint done;
} StateSetter;

static gpointer
set_playing (gpointer data)
{
  StateSetter *s = data;

  gst_element_set_state (s->element, GST_STATE_PLAYING);
  g_atomic_int_set (&s->done, 1);
  return NULL;
}

/* An epoch end that has to wait while the sink is paused must leave the
 * PREROLL_LOCK free: playing again without pulling first goes through */
GST_START_TEST (test_play_while_epoch_end_waits_paused)
{
  GstHarness *h = gst_harness_new ("spdlappsink");
  StateSetter setter = { h->element, 0 };
  GThread *thread, *state;
  EpochPusher *p;

  gst_harness_set_src_caps_str (h, "application/x-test");
  fail_unless (pull_batch_within (h, 0) == NULL);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_new ()),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_element_set_state (h->element,
          GST_STATE_PAUSED), GST_STATE_CHANGE_SUCCESS);
  p = start_pusher (h, &thread);
  fail_unless (reaches (&p->pushed, 4));
  fail_unless (stays (&p->pushed, 4));
  state = g_thread_new ("state", set_playing, &setter);
  fail_unless (reaches (&setter.done, 1), "PAUSED->PLAYING blocked");
  g_thread_join (state);

  assert_batch_then_epoch_ends (h);
  g_thread_join (thread);
  fail_unless_equals_int (p->refused, 0);
  gst_harness_teardown (h);
  g_free (p);
}

GST_END_TEST;

static Suite *
spdlappsink_suite (void)
{
  Suite *s = suite_create ("spdlappsink");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_epochs_ahead_bounded);
  tcase_add_test (tc, test_waiting_consumer_gets_epoch_ends);
  tcase_add_test (tc, test_pull_sample_consumer_never_waits);
  tcase_add_test (tc, test_pause_keeps_waiting_epoch_end);
  tcase_add_test (tc, test_play_while_epoch_end_waits_paused);
  return s;
}

SPDL_CHECK_MAIN (spdlappsink);
