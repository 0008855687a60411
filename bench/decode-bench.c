/* gst-spdl decode benchmark
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Images/s on the same in-memory JPEGs and the same recipe (validation:
 * Resize(256) + CenterCrop(224), or training: RandomResizedCrop(224)):
 *
 *   libjpeg-full   libjpeg-turbo decoding every pixel, then the same resize
 *                  (what a plain decoder + resizer does, one thread)
 *   fused          the project's decode path called directly, one thread:
 *                  the physical limit per core for spdldecode
 *   fused-nodct, fused-noregion, fused-plain: the same without DCT scaling,
 *                  without region decoding, without both
 *   element-1      appsrc ! spdldecode threads=1 ! fakesink
 *   element-N      the same with threads=N (N = online CPUs)
 *
 * Each is run --rounds times, interleaved; the median is reported with its
 * ratio to the fused limit.
 *
 *   decode-bench [--rounds 5] [--recipe val|train] [--threads N] DATASET
 */
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "gstspdldataset.h"
#include "gstspdljpeg.h"

typedef struct
{
  GPtrArray *files;             /* GBytes */
  GstSpdlDecodeParams params;
  guint8 *out;
} Bench;

static gint rounds = 5;
static gchar *recipe = NULL;
static gint threads = 0;

static GOptionEntry entries[] = {
  {"rounds", 'r', 0, G_OPTION_ARG_INT, &rounds, "Rounds (default 5)", "N"},
  {"recipe", 0, 0, G_OPTION_ARG_STRING, &recipe, "val or train", "R"},
  {"threads", 't', 0, G_OPTION_ARG_INT, &threads,
      "Threads of element-N (default: online CPUs)", "N"},
  {NULL}
};

static gdouble
run_direct (Bench * b, gboolean dct, gboolean region)
{
  GstSpdlJpegDecoder *dec = gst_spdl_jpeg_decoder_new ();
  GstSpdlDecodeParams p = b->params;
  gint64 start = g_get_monotonic_time ();
  guint i;

  p.dct_scaling = dct;
  p.region_decode = region;
  for (i = 0; i < b->files->len; i++) {
    gsize size;
    const guint8 *data = g_bytes_get_data (g_ptr_array_index (b->files, i),
        &size);
    GstSpdlGeometry g;
    guint w, h;

    if (!gst_spdl_jpeg_decoder_open (dec, data, size, p.max_pixels, &w, &h,
            NULL))
      continue;
    gst_spdl_geometry_compute (&g, &p, w, h, 0, i);
    gst_spdl_jpeg_decoder_decode (dec, &p, &g, b->out, g.out_width * 3, NULL);
  }
  gst_spdl_jpeg_decoder_free (dec);
  return b->files->len / ((g_get_monotonic_time () - start) / 1e6);
}

static gdouble
run_element (Bench * b, guint n_threads)
{
  const gchar *tail = g_strcmp0 (recipe, "train") == 0 ?
      "mode=random-resized-crop flip=random-horizontal" :
      "mode=center-crop resize-shorter=256";
  gchar *launch = g_strdup_printf ("appsrc name=src caps=image/jpeg "
      "format=time max-bytes=0 ! spdldecode threads=%u width=224 height=224 "
      "%s ! fakesink sync=false", n_threads, tail);
  GstElement *pipeline = gst_parse_launch (launch, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  gdouble seconds;
  guint i;

  /* everything queued in appsrc beforehand: only decoding is timed */
  for (i = 0; i < b->files->len; i++)
    gst_app_src_push_buffer (GST_APP_SRC (src),
        gst_buffer_new_wrapped_bytes (g_ptr_array_index (b->files, i)));
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  seconds = spdl_bench_play (pipeline, TRUE);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  g_free (launch);
  return b->files->len / seconds;
}

static gint
compare_doubles (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return x < y ? -1 : x > y;
}

static gdouble
median (gdouble * v, gint n)
{
  qsort (v, n, sizeof (gdouble), (GCompareFunc) compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum
{ LIBJPEG_FULL, FUSED, FUSED_NODCT, FUSED_NOREGION, ELEMENT_1, ELEMENT_N,
  N_RUNS
};

static const gchar *names[N_RUNS] = {
  "libjpeg-full (plain decode + resize)", "fused (physical limit/core)",
  "fused, no DCT scaling", "fused, no region decode",
  "spdldecode threads=1", "spdldecode threads=N"
};

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("DATASET");
  GError *error = NULL;
  GstSpdlDataset *ds;
  Bench b = { 0 };
  gdouble results[N_RUNS][64];
  gdouble med[N_RUNS];
  guint i;
  gint r;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc < 2) {
    g_printerr ("usage: decode-bench [--rounds N] [--recipe val|train] "
        "DATASET\n");
    return 2;
  }
  rounds = CLAMP (rounds, 1, 64);
  if (threads <= 0)
    threads = g_get_num_processors ();
  ds = gst_spdl_dataset_load (argv[1], "jpg,jpeg", &error);
  if (!ds) {
    g_printerr ("%s\n", error->message);
    return 1;
  }
  b.files = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (i = 0; i < ds->n_samples; i++) {
    gchar *path = gst_spdl_dataset_get_full_path (ds, i), *data;
    gsize size;
    if (g_file_get_contents (path, &data, &size, NULL))
      g_ptr_array_add (b.files, g_bytes_new_take (data, size));
    g_free (path);
  }
  gst_spdl_decode_params_init (&b.params);
  b.params.width = b.params.height = 224;
  if (g_strcmp0 (recipe, "train") == 0) {
    b.params.mode = GST_SPDL_RESIZE_RANDOM_RESIZED_CROP;
    b.params.flip = GST_SPDL_FLIP_RANDOM_HORIZONTAL;
  } else {
    b.params.mode = GST_SPDL_RESIZE_CENTER_CROP;
    b.params.resize_shorter = 256;
  }
  b.out = g_malloc (224 * 224 * 3);
  g_print ("%u images in memory, recipe %s, %d rounds, N=%d\n",
      b.files->len, recipe ? recipe : "val", rounds, threads);

  run_direct (&b, TRUE, TRUE);  /* warm-up: caches, page faults */
  for (r = 0; r < rounds; r++) {
    results[LIBJPEG_FULL][r] = run_direct (&b, FALSE, FALSE);
    results[FUSED][r] = run_direct (&b, TRUE, TRUE);
    results[FUSED_NODCT][r] = run_direct (&b, FALSE, TRUE);
    results[FUSED_NOREGION][r] = run_direct (&b, TRUE, FALSE);
    results[ELEMENT_1][r] = run_element (&b, 1);
    results[ELEMENT_N][r] = run_element (&b, threads);
    g_printerr ("round %d/%d: fused %.0f, element-1 %.0f, element-N %.0f "
        "images/s\n", r + 1, rounds, results[FUSED][r],
        results[ELEMENT_1][r], results[ELEMENT_N][r]);
  }
  for (i = 0; i < N_RUNS; i++)
    med[i] = median (results[i], rounds);
  g_print ("\n| run | images/s (median) | vs fused limit |\n|---|---:|---:|\n");
  for (i = 0; i < N_RUNS; i++) {
    g_print ("| %s | %.0f | %.3f |\n", names[i], med[i], med[i] / med[FUSED]);
  }
  g_print ("\nthreads=1 / limit: %.3f (target >= 0.95)\n",
      med[ELEMENT_1] / med[FUSED]);
  g_print ("threads=%d / threads=1: %.3f (target >= 1.85 on 2 cores)\n",
      threads, med[ELEMENT_N] / med[ELEMENT_1]);
  g_print ("DCT scaling bought: %.3fx, region decoding bought: %.3fx, "
      "both vs plain libjpeg: %.3fx\n", med[FUSED] / med[FUSED_NODCT],
      med[FUSED] / med[FUSED_NOREGION], med[FUSED] / med[LIBJPEG_FULL]);
  g_free (b.out);
  g_ptr_array_unref (b.files);
  gst_spdl_dataset_free (ds);
  return 0;
}
