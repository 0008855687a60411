/* gst-spdl CUDA upload benchmark
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Upload throughput of spdlcudaupload against plain cudaMemcpyAsync from
 * pinned memory of the same bytes (back to back on one stream, one sync at
 * the end: the best the bus gives), interleaved over rounds in the same run,
 * medians reported; then, with a DATASET, the whole pipeline's images/s into
 * host batches, device batches, and normalized float16 device batches.
 *
 *   cuda-upload-bench [--batches 200] [--batch-size 256] [--rounds 3] [DATASET]
 */
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"

static gint batches = 200;
static gint batch_size = 256;
static gint rounds = 3;

static GOptionEntry entries[] = {
  {"batches", 'n', 0, G_OPTION_ARG_INT, &batches, "Batches per run", "N"},
  {"batch-size", 'b', 0, G_OPTION_ARG_INT, &batch_size, "Images per batch",
      "N"},
  {"rounds", 'r', 0, G_OPTION_ARG_INT, &rounds, "Interleaved rounds", "N"},
  {NULL}
};

#define CHECK_CUDA(call) G_STMT_START {                                 \
  cudaError_t _e = (call);                                              \
  if (_e != cudaSuccess) {                                              \
    g_printerr ("%s: %s\n", #call, cudaGetErrorString (_e));            \
    exit (1);                                                           \
  }                                                                     \
} G_STMT_END

static gdouble
plain_copy_gbps (guint8 * host, gsize size)
{
  void *dev[4];
  cudaStream_t stream;
  gint64 start;
  gint i;

  /* as many device batches as the element's pool */
  for (i = 0; i < 4; i++)
    CHECK_CUDA (cudaMalloc (&dev[i], size));
  CHECK_CUDA (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  CHECK_CUDA (cudaMemcpy (dev[0], host, size, cudaMemcpyHostToDevice));
  start = g_get_monotonic_time ();
  for (i = 0; i < batches; i++)
    CHECK_CUDA (cudaMemcpyAsync (dev[i % 4], host, size,
            cudaMemcpyHostToDevice, stream));
  CHECK_CUDA (cudaStreamSynchronize (stream));
  start = g_get_monotonic_time () - start;
  cudaStreamDestroy (stream);
  for (i = 0; i < 4; i++)
    cudaFree (dev[i]);
  return (gdouble) size * batches / (start / 1e6) / 1e9;
}

static void
free_nothing (gpointer data)
{
}

/* The element does not wait for its copies: the clock stops once the
 * device has finished them */
static void
device_synchronize (void)
{
  CHECK_CUDA (cudaDeviceSynchronize ());
}

/* appsrc (pinned batches) ! spdlcudaupload @props ! fakesink; GB/s of the
 * uint8 bytes that cross the bus */
static gdouble
element_gbps (guint8 * host, gsize size, const gchar * props)
{
  gchar *caps = g_strdup_printf ("other/tensors,format=static,num_tensors=1,"
      "dimensions=\"3:224:224:%d\",types=uint8,framerate=0/1", batch_size);
  gchar *launch = g_strdup_printf ("appsrc name=src caps=\"%s\" max-bytes=0 ! "
      "spdlcudaupload %s ! fakesink sync=false", caps, props);
  GstElement *pipeline = gst_parse_launch (launch, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  gdouble seconds;
  gint i;

  for (i = 0; i < batches + 1; i++)
    gst_app_src_push_buffer (GST_APP_SRC (src),
        gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, host, size, 0,
            size, NULL, free_nothing));
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  /* one batch prerolls, @batches are timed */
  seconds = spdl_bench_play_settled (pipeline, TRUE, device_synchronize);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  g_free (launch);
  g_free (caps);
  return seconds > 0 ? (gdouble) size * batches / seconds / 1e9 : 0;
}

static gdouble
pipeline_images_per_s (const gchar * dataset, const gchar * tail)
{
  gchar *launch = g_strdup_printf ("spdlsrc location=%s ! spdldecode "
      "width=224 height=224 mode=center-crop resize-shorter=256 ! spdlbatch "
      "batch-size=%d layout=nchw ! %s fakesink sync=false", dataset,
      batch_size, tail);
  GstElement *pipeline = gst_parse_launch (launch, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "spdlsrc0");
  gdouble seconds = spdl_bench_play (pipeline, FALSE);
  guint64 n = 0;

  g_object_get (src, "num-samples", &n, NULL);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  g_free (launch);
  return seconds > 0 ? n / seconds : 0;
}

static int
compare_doubles (const void *a, const void *b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return (x > y) - (x < y);
}

static gdouble
median (gdouble * v, gint n)
{
  qsort (v, n, sizeof (gdouble), compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define N_UPLOADS 4
static const struct
{
  const gchar *name;
  const gchar *props;
} uploads[N_UPLOADS] = {
  {"spdlcudaupload (uint8, events)", ""},
  {"spdlcudaupload host-sync=true", "host-sync=true"},
  {"spdlcudaupload dtype=float16 layout=nchw, normalized",
      "dtype=float16 layout=nchw mean=\"<0.485,0.456,0.406>\" "
        "std=\"<0.229,0.224,0.225>\""},
  {"spdlcudaupload dtype=float32 layout=nchw, normalized",
      "dtype=float32 layout=nchw mean=\"<0.485,0.456,0.406>\" "
        "std=\"<0.229,0.224,0.225>\""},
};

#define N_PIPELINES 3
static const struct
{
  const gchar *name;
  const gchar *tail;
} pipelines[N_PIPELINES] = {
  {"host batches (spdlbatch ! fakesink)", ""},
  {"device batches (spdlcudaupload)", "spdlcudaupload !"},
  {"device batches, float16 normalized on the device",
      "spdlcudaupload dtype=float16 mean=\"<0.485,0.456,0.406>\" "
        "std=\"<0.229,0.224,0.225>\" !"},
};

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("[DATASET]");
  GError *error = NULL;
  gdouble plain[16], up[N_UPLOADS][16], pipe[N_PIPELINES][16];
  gdouble plain_med;
  gsize size;
  guint8 *host;
  gint count = 0, r, i;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return 2;
  g_option_context_free (ctx);
  rounds = CLAMP (rounds, 1, 16);
  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  size = (gsize) batch_size * 3 * 224 * 224;
  CHECK_CUDA (cudaHostAlloc ((void **) &host, size, cudaHostAllocDefault));
  memset (host, 7, size);
  /* warm-up: contexts, pools, the kernel's first launch */
  plain_copy_gbps (host, size);
  element_gbps (host, size, uploads[2].props);
  for (r = 0; r < rounds; r++) {
    plain[r] = plain_copy_gbps (host, size);
    for (i = 0; i < N_UPLOADS; i++)
      up[i][r] = element_gbps (host, size, uploads[i].props);
  }
  plain_med = median (plain, rounds);
  printf ("| upload of %d x 3 x 224 x 224 uint8 (%.1f MB), %d batches, median "
      "of %d interleaved rounds | GB/s | vs plain |\n|---|---:|---:|\n"
      "| plain cudaMemcpyAsync from pinned, back to back | %.2f | 1.00 |\n",
      batch_size, size / 1e6, batches, rounds, plain_med);
  for (i = 0; i < N_UPLOADS; i++) {
    gdouble m = median (up[i], rounds);
    printf ("| %s | %.2f | %.3f |\n", uploads[i].name, m, m / plain_med);
  }
  printf ("\nspdlcudaupload / plain: %.3f (target >= 0.85)\n",
      median (up[0], rounds) / plain_med);
  if (argc > 1) {
    printf ("\n| whole pipeline, validation recipe, batch %d, median of %d "
        "interleaved rounds | images/s | vs host |\n|---|---:|---:|\n",
        batch_size, rounds);
    for (r = 0; r < rounds; r++)
      for (i = 0; i < N_PIPELINES; i++)
        pipe[i][r] = pipeline_images_per_s (argv[1], pipelines[i].tail);
    for (i = 0; i < N_PIPELINES; i++) {
      gdouble m = median (pipe[i], rounds);
      printf ("| %s | %.0f | %.3f |\n", pipelines[i].name, m,
          m / median (pipe[0], rounds));
    }
  }
  cudaFreeHost (host);
  return 0;
}
