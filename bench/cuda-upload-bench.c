/* gst-spdl CUDA upload benchmark
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Upload throughput of spdlcudaupload against a plain cudaMemcpy from pinned
 * memory of the same size, in the same run; then, with a DATASET, the whole
 * pipeline's images/s with and without the upload.
 *
 *   cuda-upload-bench [--batches 200] [--batch-size 256] [DATASET]
 */
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "benchutil.h"
#include <stdlib.h>

static gint batches = 200;
static gint batch_size = 256;

static GOptionEntry entries[] = {
  {"batches", 'n', 0, G_OPTION_ARG_INT, &batches, "Batches per run", "N"},
  {"batch-size", 'b', 0, G_OPTION_ARG_INT, &batch_size, "Images per batch",
      "N"},
  {NULL}
};

static gdouble
plain_copy_gbps (guint8 * host, gsize size)
{
  void *dev;
  cudaStream_t stream;
  gint64 start;
  gint i;

  cudaMalloc (&dev, size);
  cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking);
  cudaMemcpy (dev, host, size, cudaMemcpyHostToDevice);
  start = g_get_monotonic_time ();
  for (i = 0; i < batches; i++) {
    cudaMemcpyAsync (dev, host, size, cudaMemcpyHostToDevice, stream);
    cudaStreamSynchronize (stream);
  }
  start = g_get_monotonic_time () - start;
  cudaStreamDestroy (stream);
  cudaFree (dev);
  return (gdouble) size * batches / (start / 1e6) / 1e9;
}

static void
free_pinned (gpointer data)
{
}

/* appsrc (pinned batches, made beforehand) ! spdlcudaupload ! fakesink */
static gdouble
element_gbps (guint8 * host, gsize size)
{
  gchar *caps = g_strdup_printf ("other/tensors,format=static,num_tensors=1,"
      "dimensions=\"3:224:224:%d\",types=uint8,framerate=0/1", batch_size);
  gchar *launch = g_strdup_printf ("appsrc name=src caps=\"%s\" max-bytes=0 ! "
      "spdlcudaupload ! fakesink sync=false", caps);
  GstElement *pipeline = gst_parse_launch (launch, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  gdouble seconds;
  gint i;

  for (i = 0; i < batches; i++)
    gst_app_src_push_buffer (GST_APP_SRC (src),
        gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, host, size, 0,
            size, NULL, free_pinned));
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  seconds = spdl_bench_play (pipeline, TRUE);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  g_free (launch);
  g_free (caps);
  return (gdouble) size * batches / seconds / 1e9;
}

static gdouble
pipeline_images_per_s (const gchar * dataset, gboolean upload)
{
  gchar *launch = g_strdup_printf ("spdlsrc location=%s ! spdldecode "
      "width=224 height=224 mode=center-crop resize-shorter=256 ! spdlbatch "
      "batch-size=%d layout=nchw ! %s fakesink sync=false", dataset,
      batch_size, upload ? "spdlcudaupload !" : "");
  GstElement *pipeline = gst_parse_launch (launch, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "spdlsrc0");
  gdouble seconds = spdl_bench_play (pipeline, FALSE);
  guint64 n = 0;

  g_object_get (src, "num-samples", &n, NULL);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  g_free (launch);
  return n / seconds;
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("[DATASET]");
  GError *error = NULL;
  gsize size;
  guint8 *host;
  gdouble plain, element;
  gint count = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return 2;
  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  size = (gsize) batch_size * 3 * 224 * 224;
  cudaHostAlloc ((void **) &host, size, cudaHostAllocDefault);
  memset (host, 7, size);
  plain = plain_copy_gbps (host, size);
  element = element_gbps (host, size);
  printf ("| upload of %d x 3 x 224 x 224 uint8 (%.1f MB) | GB/s |\n"
      "|---|---:|\n| plain cudaMemcpyAsync from pinned | %.2f |\n"
      "| spdlcudaupload | %.2f |\n\nspdlcudaupload / plain: %.3f (target "
      ">= 0.85)\n", batch_size, size / 1e6, plain, element, element / plain);
  if (argc > 1) {
    gdouble cpu = pipeline_images_per_s (argv[1], FALSE);
    gdouble gpu = pipeline_images_per_s (argv[1], TRUE);
    printf ("\nwhole pipeline (validation recipe): %.0f images/s to host "
        "batches, %.0f images/s to device batches\n", cpu, gpu);
  }
  cudaFreeHost (host);
  return 0;
}
