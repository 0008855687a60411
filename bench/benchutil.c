/* gst-spdl benchmarks: shared helpers
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include "benchutil.h"

gdouble
spdl_bench_play (GstElement * pipeline, gboolean preroll_first)
{
  return spdl_bench_play_settled (pipeline, preroll_first, NULL);
}

gdouble
spdl_bench_play_settled (GstElement * pipeline, gboolean preroll_first,
    void (*settle) (void))
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;
  gboolean failed;
  gint64 start;

  if (preroll_first) {
    gst_element_set_state (pipeline, GST_STATE_PAUSED);
    gst_element_get_state (pipeline, NULL, NULL, GST_CLOCK_TIME_NONE);
  }
  if (settle)
    settle ();
  start = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (settle)
    settle ();
  start = g_get_monotonic_time () - start;
  failed = GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR;
  if (failed) {
    GError *err = NULL;
    gst_message_parse_error (msg, &err, NULL);
    g_printerr ("pipeline error: %s\n", err->message);
    g_error_free (err);
  }
  gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  return failed ? -1.0 : start / 1e6;
}
