/* gst-spdl: stop the pipeline at any moment, many times
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Builds src ! decode ! batch ! spdlappsink, plays it, and sets it to NULL
 * at a random moment: mid-decode, mid-batch, while the consumer is pulling
 * or not. Each stop must finish within 10 s (a watchdog aborts otherwise);
 * run with GST_TRACERS=leaks, gst_deinit() warns about any object left.
 *
 *   stopcycles [CYCLES]       (meson test runs 60; the soak check 500)
 */
#include <gst/gst.h>
#include <stdio.h>
#include <stdlib.h>

#include "spdltestutil.h"

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean done;
  gint cycle;
} Watchdog;

static gpointer
watchdog_func (gpointer data)
{
  Watchdog *w = data;
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;

  g_mutex_lock (&w->lock);
  while (!w->done)
    if (!g_cond_wait_until (&w->cond, &w->lock, deadline)) {
      fprintf (stderr, "cycle %d: stopping the pipeline took more than 10 s "
          "(deadlock)\n", w->cycle);
      abort ();
    }
  g_mutex_unlock (&w->lock);
  return NULL;
}

static void
run_cycle (const gchar * root, gint cycle, GRand * rand)
{
  gchar *launch = g_strdup_printf ("spdlsrc location=%s shuffle=true "
      "num-epochs=-1 prefetch=%d ! spdldecode threads=%d width=32 height=32 "
      "mode=random-resized-crop ! spdlbatch batch-size=%d ! "
      "spdlappsink name=sink max-buffers=1", root,
      g_rand_int_range (rand, 0, 5), g_rand_int_range (rand, 1, 5),
      g_rand_int_range (rand, 1, 9));
  GstElement *pipeline = gst_parse_launch (launch, NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  Watchdog w = { 0 };
  GThread *dog;
  gint pulls = g_rand_int_range (rand, 0, 4), i;

  gst_element_set_state (pipeline, g_rand_boolean (rand) ?
      GST_STATE_PLAYING : GST_STATE_PAUSED);
  for (i = 0; i < pulls; i++) {
    GstSample *sample = NULL;
    g_signal_emit_by_name (sink, "try-pull-batch", 20 * GST_MSECOND, &sample);
    if (sample)
      gst_sample_unref (sample);
  }
  g_usleep (g_rand_int_range (rand, 0, 40000));

  g_mutex_init (&w.lock);
  g_cond_init (&w.cond);
  w.cycle = cycle;
  dog = g_thread_new ("watchdog", watchdog_func, &w);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_mutex_lock (&w.lock);
  w.done = TRUE;
  g_cond_signal (&w.cond);
  g_mutex_unlock (&w.lock);
  g_thread_join (dog);
  g_mutex_clear (&w.lock);
  g_cond_clear (&w.cond);

  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (launch);
}

/* (the helpers' fail_unless needs a check test around it: not here) */
static gchar *
make_dataset (void)
{
  gchar *root = g_dir_make_tmp ("spdl-stop-XXXXXX", NULL);
  guint c, i;

  for (c = 0; c < 3; c++) {
    gchar *dir = g_strdup_printf ("%s/c%u", root, c);
    g_mkdir_with_parents (dir, 0755);
    for (i = 0; i < 12; i++) {
      SpdlTestJpeg o;
      gsize size;
      guint8 *data;
      gchar *path = g_strdup_printf ("%s/%02u.jpg", dir, i);

      spdl_test_jpeg_init (&o, 120 + i, 90);
      o.tint = c * 12 + i;
      data = spdl_test_encode_jpeg (&o, &size);
      g_file_set_contents (path, (const gchar *) data, size, NULL);
      g_free (data);
      g_free (path);
    }
    g_free (dir);
  }
  return root;
}

int
main (int argc, char **argv)
{
  gint cycles = argc > 1 ? atoi (argv[1]) : 60, i;
  GRand *rand = g_rand_new_with_seed (argc > 2 ? atoi (argv[2]) : 1);
  gchar *root;

  gst_init (&argc, &argv);
  root = make_dataset ();
  for (i = 0; i < cycles; i++) {
    run_cycle (root, i, rand);
    if ((i + 1) % 50 == 0)
      printf ("%d cycles\n", i + 1);
  }
  spdl_test_remove_tree (root);
  g_free (root);
  g_rand_free (rand);
  printf ("%d stop cycles, none took more than 10 s\n", cycles);
  gst_deinit ();
  return 0;
}
