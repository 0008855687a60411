/* gst-spdl example: a C application reading the fields of each batch
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Prints each batch's samples with their labels and fields: a captioning
 * dataset in WebDataset shards (x.jpg, x.txt, x.cls, x.json) read as
 *
 *   spdl-batch-fields '/data/captions/train-{000000..000009}.tar' txt,cls,json
 *
 * or any pipeline that ends in spdlbatch and "appsink name=sink":
 *
 *   spdl-batch-fields --pipeline 'spdlsrc location=... fields=txt ! ...'
 */
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <stdio.h>
#include <string.h>

#include "printbatch.h"

int
main (int argc, char **argv)
{
  GstElement *pipeline, *sink;
  GstSample *sample;
  GError *error = NULL;
  gchar *launch;
  guint batches = 0;
  int ret = 0;

  gst_init (&argc, &argv);
  if (argc == 3 && strcmp (argv[1], "--pipeline") == 0) {
    launch = g_strdup (argv[2]);
  } else if (argc == 3) {
    launch = g_strdup_printf ("spdlsrc location=%s fields=%s ! spdldecode "
        "width=224 height=224 ! spdlbatch batch-size=8 ! appsink name=sink",
        argv[1], argv[2]);
  } else {
    fprintf (stderr, "usage: %s LOCATION FIELDS\n"
        "       %s --pipeline 'DESCRIPTION ! appsink name=sink'\n", argv[0],
        argv[0]);
    return 2;
  }
  pipeline = gst_parse_launch (launch, &error);
  g_free (launch);
  /* a missing element may still give a part of the pipeline */
  if (error != NULL) {
    fprintf (stderr, "%s\n", error->message);
    g_error_free (error);
    gst_clear_object (&pipeline);
    return 1;
  }
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  if (sink == NULL || !GST_IS_APP_SINK (sink)) {
    fprintf (stderr, "the pipeline has no appsink named sink\n");
    gst_clear_object (&sink);
    gst_object_unref (pipeline);
    return 1;
  }
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  while ((sample = gst_app_sink_pull_sample (GST_APP_SINK (sink)))) {
    gchar *text = spdl_example_describe_batch (sample, &error);

    if (text == NULL) {
      fprintf (stderr, "batch %u: %s\n", batches, error->message);
      g_clear_error (&error);
      ret = 1;
    } else {
      printf ("batch %u\n%s", batches, text);
      g_free (text);
    }
    gst_sample_unref (sample);
    batches++;
  }
  {
    /* the end, or an error: say which */
    GstBus *bus = gst_element_get_bus (pipeline);
    GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);

    if (msg) {
      gchar *debug = NULL;

      gst_message_parse_error (msg, &error, &debug);
      fprintf (stderr, "%s\n%s\n", error->message, debug ? debug : "");
      g_clear_error (&error);
      g_free (debug);
      gst_message_unref (msg);
      ret = 1;
    }
    gst_object_unref (bus);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return ret;
}
