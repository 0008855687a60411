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
 *   decode-only    libjpeg-turbo decoding every pixel to RGB and nothing
 *                  else, one thread (the decode-only limit per core: what
 *                  any loader that decodes whole images pays at least)
 *   libjpeg-full   libjpeg-turbo decoding every pixel, then the same resize
 *                  (what a plain decoder + resizer does, one thread)
 *   fused          the project's decode path called directly, one thread:
 *                  the physical limit per core for spdldecode
 *   fused-noregion the same without region decoding
 *   fused-inexact-nodct  exact=false without DCT scaling (the exact path
 *                  never scales in the DCT domain)
 *   fused-inexact  the fused path with exact=false (DCT scaling from 2x the
 *                  target, the fast resampler)
 *   element-1      appsrc ! spdldecode threads=1 ! fakesink
 *   element-1-inexact  the same with exact=false
 *   element-N      the same with threads=N (N = online CPUs)
 *
 * Then exact=false's pixels against PIL's: the mean absolute difference
 * from the fused path with dct-scaling=false, which equals torchvision's
 * PIL recipe bit for bit (tests/python/test_decode_reference.py).
 *
 * Each is run --rounds times, interleaved; the median is reported with its
 * ratio to the fused limit. The one-thread runs are timed in the thread's
 * CPU time (robust to a loaded machine), the element runs in wall time (or the
 * process's CPU time with --cpu-time). --limit-only measures only decode-only
 * and fused, on one thread and on --threads threads at once (their sum: the
 * limit of that many cores). --meta-cost times the per-sample metadata the
 * elements attach and read (GstCustomMeta structures) against the fused decode
 * of one image. The fused path goes through the format dispatch, so with
 * --extensions png (or webp) --limit-only measures the PNG (WebP) decoders;
 * bench/format-bench compares that with PIL.
 *
 *   decode-bench [--rounds 5] [--recipe val|train] [--threads N]
 *                [--extensions jpg,jpeg] [--inexact] DATASET
 */
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <time.h>
#include <jpeglib.h>

#include <gst/video/video.h>

#include "benchutil.h"
#include "gstspdlstats.h"
#include "gstspdldataset.h"
#include "gstspdlimage.h"
#include "gstspdljpeg.h"
#include "gstspdlresample.h"
#include "gstspdlfielddecode.h"
#include "gstspdlmeta.h"
#include "gstspdlnormalize.h"

typedef struct
{
  GPtrArray *files;             /* GBytes */
  GstSpdlDecodeParams params;
  guint8 *out;
} Bench;

static gint rounds = 5;
static gchar *recipe = NULL;
static gint threads = 0;
static gboolean resize_only = FALSE;
static gboolean limit_only = FALSE;
static gboolean planar_only = FALSE;
static gboolean inexact_only = FALSE;
static gboolean cpu_time = FALSE;
static gchar *extensions = NULL;
static gboolean meta_cost = FALSE;
static gint simd = 2;

static GOptionEntry entries[] = {
  {"rounds", 'r', 0, G_OPTION_ARG_INT, &rounds, "Rounds (default 5)", "N"},
  {"recipe", 0, 0, G_OPTION_ARG_STRING, &recipe, "val or train", "R"},
  {"threads", 't', 0, G_OPTION_ARG_INT, &threads,
      "Threads of element-N and of --limit-only's all-cores run (default: "
        "online CPUs)", "N"},
  {"resize-only", 0, 0, G_OPTION_ARG_NONE, &resize_only,
      "Only compare the resize against GstVideoConverter", NULL},
  {"limit-only", 0, 0, G_OPTION_ARG_NONE, &limit_only,
      "Only measure decode-only and the fused path (the physical limits), "
        "on one thread and on --threads threads at once", NULL},
  {"planar", 0, 0, G_OPTION_ARG_NONE, &planar_only,
      "Only compare packed, planar (split per row) and packed + split "
        "outputs of the fused path (NCHW slots)", NULL},
  {"inexact", 0, 0, G_OPTION_ARG_NONE, &inexact_only,
        "Only compare exact=false with exact=true (fused and threads=1) and "
        "its pixels with PIL's", NULL},
  {"cpu-time", 0, 0, G_OPTION_ARG_NONE, &cpu_time,
        "Element runs: images per second of the process's CPU time (per "
        "core), not of wall time (one-thread runs always count CPU time)",
      NULL},
  {"extensions", 0, 0, G_OPTION_ARG_STRING, &extensions,
      "Files to load (default jpg,jpeg)", "EXTS"},
  {"simd", 0, 0, G_OPTION_ARG_INT, &simd,
      "Resampler kernels up to 2 (AVX2), 1 (SSE4.1) or 0 (plain C)", "N"},
  {"meta-cost", 0, 0, G_OPTION_ARG_NONE, &meta_cost,
      "Only time the per-sample metadata against one image's decode", NULL},
  {NULL}
};

typedef struct
{
  struct jpeg_error_mgr mgr;
  jmp_buf jump;
} BenchJpegError;

static void
bench_jpeg_error_exit (j_common_ptr cinfo)
{
  longjmp (((BenchJpegError *) cinfo->err)->jump, 1);
}

static void
bench_jpeg_silence (j_common_ptr cinfo, int level)
{
}

/* The single-thread runs count this thread's CPU time, not wall time: a
 * limit per core is the CPU an image costs, and a loaded machine (other
 * processes taking the core away) must not lower it. */
static gint64
thread_cpu_us (void)
{
  return (gint64) (gst_spdl_thread_cpu_ns () / 1000);
}

/* libjpeg-turbo with its defaults (the DCT PIL uses), every pixel to RGB
 * into one reused buffer: nothing of this project's code. */
static gdouble
run_decode_only (Bench * b)
{
  struct jpeg_decompress_struct cinfo;
  BenchJpegError err;
  guint8 *volatile pixels = NULL;
  volatile gsize capacity = 0;
  volatile guint i;
  gint64 start = thread_cpu_us ();

  cinfo.err = jpeg_std_error (&err.mgr);
  err.mgr.error_exit = bench_jpeg_error_exit;
  err.mgr.emit_message = bench_jpeg_silence;
  jpeg_create_decompress (&cinfo);
  for (i = 0; i < b->files->len; i++) {
    gsize size, stride;
    const guint8 *data = g_bytes_get_data (g_ptr_array_index (b->files, i),
        &size);

    if (setjmp (err.jump)) {
      jpeg_abort_decompress (&cinfo);
      continue;
    }
    jpeg_mem_src (&cinfo, data, size);
    jpeg_read_header (&cinfo, TRUE);
    cinfo.out_color_space = JCS_RGB;
    cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_decompress (&cinfo);
    stride = (gsize) cinfo.output_width * 3;
    if (stride * cinfo.output_height > capacity) {
      capacity = stride * cinfo.output_height;
      pixels = g_realloc (pixels, capacity);
    }
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = pixels + cinfo.output_scanline * stride;
      jpeg_read_scanlines (&cinfo, &row, 1);
    }
    jpeg_finish_decompress (&cinfo);
  }
  jpeg_destroy_decompress (&cinfo);
  g_free (pixels);
  return b->files->len / ((thread_cpu_us () - start) / 1e6);
}

/* What one sample's metadata costs from spdlsrc to spdlbatch: spdlsrc adds
 * it and sets the position, spdldecode reads it and copies it to the
 * output, spdlbatch reads it and the position. Microseconds per sample. */
static gdouble
run_meta_lifecycle (guint n, gboolean geometry)
{
  gint64 start = thread_cpu_us ();
  GstSpdlGeometry geom;
  guint i;

  gst_spdl_geometry_compute (&geom, &(GstSpdlDecodeParams) {
        .width = 224,.height = 224,.mode = GST_SPDL_RESIZE_CENTER_CROP,
      .resize_shorter = 256}, 500, 375, 0, 0);
  for (i = 0; i < n; i++) {
    GstBuffer *in = gst_buffer_new (), *out = gst_buffer_new ();
    GstSpdlSampleInfo info;
    guint64 position;

    gst_spdl_buffer_add_sample_meta (in, i, i % 1000, 0,
        "/data/imagenet/train/n01440764/n01440764_10026.JPEG");
    gst_spdl_buffer_set_sample_position (in, i);
    gst_spdl_buffer_get_sample_info (in, &info);
    gst_spdl_buffer_copy_sample_meta (out, in);
    gst_spdl_buffer_get_sample_info (out, &info);
    gst_spdl_buffer_get_sample_position (out, &position);
    /* spdldecode's geometry on each sample's meta */
    if (geometry) {
      GstSpdlSampleGeometry sample;

      gst_spdl_geometry_to_sample (&geom, 500, 375, &sample);
      gst_spdl_buffer_set_sample_geometry (out, &sample);
    }
    gst_buffer_unref (in);
    gst_buffer_unref (out);
  }
  return (thread_cpu_us () - start) / (gdouble) n;
}

/* microseconds of wall time, or of the process's CPU time (--cpu-time) */
static gint64
now_us (void)
{
  struct timespec ts;

  if (!cpu_time || clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
    return g_get_monotonic_time ();
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

static gdouble
run_direct_full (Bench * b, gboolean dct, gboolean region, gboolean exact)
{
  GstSpdlImageDecoder *dec = gst_spdl_image_decoder_new ();
  GstSpdlDecodeParams p = b->params;
  gint64 start = thread_cpu_us ();
  guint i;

  p.dct_scaling = dct;
  p.region_decode = region;
  p.exact = exact;
  for (i = 0; i < b->files->len; i++) {
    gsize size;
    const guint8 *data = g_bytes_get_data (g_ptr_array_index (b->files, i),
        &size);
    GstSpdlGeometry g;
    guint w, h;

    if (!gst_spdl_image_decoder_open (dec, data, size, p.max_pixels, &w, &h,
            NULL))
      continue;
    gst_spdl_geometry_compute (&g, &p, w, h, 0, i);
    gst_spdl_image_decoder_decode (dec, &p, &g, b->out, g.out_width * 3, NULL);
  }
  gst_spdl_image_decoder_free (dec);
  return b->files->len / ((thread_cpu_us () - start) / 1e6);
}

static gdouble median (gdouble * v, gint n);

typedef struct
{
  Bench bench;                  /* the shared files, its own output */
  gboolean fused;
  gdouble images_per_s;
} LimitThread;

static gpointer
limit_thread_run (gpointer data)
{
  LimitThread *t = data;

  t->images_per_s = t->fused ? run_direct_full (&t->bench, TRUE, TRUE, TRUE) :
      run_decode_only (&t->bench);
  return NULL;
}

/* The limit of n cores as the issue defines it: one thread per core, all
 * decoding at once, each timed in its own CPU time and summed. Lower than
 * one thread's rate times n by what cores decoding together cost each
 * other (shared cache and memory bandwidth), which any parallel loader
 * pays too. */
static gdouble
run_limit_concurrent (Bench * b, guint n, gboolean fused)
{
  LimitThread *t = g_new0 (LimitThread, n);
  GThread **threads = g_new0 (GThread *, n);
  gdouble total = 0;
  guint i;

  for (i = 0; i < n; i++) {
    guint k, len = b->files->len;

    t[i].bench = *b;
    /* each thread its own starting point, as a loader's threads decode
     * different images at a time (in lockstep on the same image, the
     * fused training path measured 10-25% lower) */
    t[i].bench.files = g_ptr_array_sized_new (len);
    for (k = 0; k < len; k++)
      g_ptr_array_add (t[i].bench.files, g_ptr_array_index (b->files,
              (k + (gsize) i * len / n) % len));
    t[i].bench.out = g_malloc (224 * 224 * 3);
    t[i].fused = fused;
    threads[i] = g_thread_new ("limit", limit_thread_run, &t[i]);
  }
  for (i = 0; i < n; i++) {
    g_thread_join (threads[i]);
    total += t[i].images_per_s;
    g_ptr_array_unref (t[i].bench.files);
    g_free (t[i].bench.out);
  }
  g_free (threads);
  g_free (t);
  return total;
}

typedef enum
{
  OUT_PACKED,
  OUT_PLANAR,                   /* planes split from each resampled row */
  OUT_PACKED_THEN_SPLIT,        /* a packed image, then split */
} OutputKind;

/* The fused path into packed rows or RGB planes (an NCHW batch slot);
 * images per second of this thread's CPU time. */
static gdouble
run_output (Bench * b, OutputKind kind, guint8 * planes)
{
  GstSpdlImageDecoder *dec = gst_spdl_image_decoder_new ();
  gint64 start = thread_cpu_us ();
  guint i, y;

  for (i = 0; i < b->files->len; i++) {
    gsize size, plane;
    const guint8 *data = g_bytes_get_data (g_ptr_array_index (b->files, i),
        &size);
    GstSpdlGeometry g;
    GstSpdlOutput out;
    guint w, h;

    if (!gst_spdl_image_decoder_open (dec, data, size, b->params.max_pixels,
            &w, &h, NULL))
      continue;
    gst_spdl_geometry_compute (&g, &b->params, w, h, 0, i);
    plane = (gsize) g.out_width * g.out_height;
    gst_spdl_output_init_packed (&out, b->out, g.out_width * 3);
    if (kind == OUT_PLANAR) {
      out.n_planes = 3;
      for (y = 0; y < 3; y++) {
        out.data[y] = planes + y * plane;
        out.stride[y] = g.out_width;
      }
    }
    gst_spdl_image_decoder_decode_to (dec, &b->params, &g, &out, NULL);
    if (kind == OUT_PACKED_THEN_SPLIT)
      for (y = 0; y < g.out_height; y++)
        gst_spdl_deinterleave_rgb_row (b->out + (gsize) y * g.out_width * 3,
            planes + (gsize) y * g.out_width,
            planes + plane + (gsize) y * g.out_width,
            planes + 2 * plane + (gsize) y * g.out_width, g.out_width);
  }
  gst_spdl_image_decoder_free (dec);
  return b->files->len / ((thread_cpu_us () - start) / 1e6);
}

static void
planar_comparison (Bench * b)
{
  static const gchar *names[] = { "fused, packed RGB",
    "fused, planar (split per row)", "fused, packed then split"
  };
  gdouble res[3][64], med[3];
  guint8 *planes = g_malloc (b->params.width * b->params.height * 3 + 64);
  gint r, k;

  run_output (b, OUT_PLANAR, planes);   /* warm-up */
  for (r = 0; r < rounds && r < 64; r++)
    for (k = 0; k < 3; k++)
      res[k][r] = run_output (b, (r + k) % 3, planes);
  /* rounds rotate the order; put each result under its kind */
  for (k = 0; k < 3; k++) {
    gdouble by_kind[64];
    for (r = 0; r < rounds && r < 64; r++)
      by_kind[r] = res[(k - r % 3 + 3) % 3][r];
    med[k] = median (by_kind, MIN (rounds, 64));
  }
  g_print ("\n| output | images/s of CPU time (median) | vs packed |\n"
      "|---|---:|---:|\n");
  for (k = 0; k < 3; k++)
    g_print ("| %s | %.0f | %.3f |\n", names[k], med[k], med[k] / med[0]);
  g_free (planes);
}

static gdouble
run_direct (Bench * b, gboolean dct, gboolean region)
{
  return run_direct_full (b, dct, region, TRUE);
}

/* Mean absolute difference of exact=false's output from PIL's (the exact
 * path without DCT scaling), per image: prints their mean and maximum, the
 * largest difference of one channel, and how often each DCT scale ran. */
static void
inexact_difference (Bench * b)
{
  GstSpdlImageDecoder *dec = gst_spdl_image_decoder_new ();
  GstSpdlJpegDecoder *jpeg = gst_spdl_jpeg_decoder_new ();
  GstSpdlDecodeParams exact = b->params, fast = b->params;
  guint8 *ref = NULL;
  gsize ref_size = 0;
  gdouble sum = 0, worst = 0;
  guint i, done = 0, max_abs = 0, scales[9] = { 0 };

  exact.dct_scaling = FALSE;
  fast.exact = FALSE;
  for (i = 0; i < b->files->len; i++) {
    gsize size, n, x;
    const guint8 *data = g_bytes_get_data (g_ptr_array_index (b->files, i),
        &size);
    GstSpdlGeometry g;
    GstSpdlJpegDecodeInfo info;
    GstSpdlOutput packed;
    guint w, h;
    guint64 diff = 0;

    if (!gst_spdl_image_decoder_open (dec, data, size, exact.max_pixels, &w,
            &h, NULL))
      continue;
    gst_spdl_geometry_compute (&g, &exact, w, h, 0, i);
    n = (gsize) g.out_width * g.out_height * 3;
    if (n > ref_size) {
      g_free (ref);
      ref = g_malloc (n);
      ref_size = n;
    }
    gst_spdl_output_init_packed (&packed, b->out, g.out_width * 3);
    if (!gst_spdl_image_decoder_decode (dec, &exact, &g, ref,
            g.out_width * 3, NULL) ||
        !gst_spdl_jpeg_decoder_open (jpeg, data, size, exact.max_pixels, &w,
            &h, NULL) ||
        !gst_spdl_jpeg_decoder_decode_to (jpeg, &fast, &g, &packed, NULL))
      continue;
    gst_spdl_jpeg_decoder_get_info (jpeg, &info);
    scales[MIN (info.scale_num, 8)]++;
    for (x = 0; x < n; x++) {
      guint d = ABS ((gint) ref[x] - (gint) b->out[x]);
      diff += d;
      max_abs = MAX (max_abs, d);
    }
    sum += (gdouble) diff / n;
    worst = MAX (worst, (gdouble) diff / n);
    done++;
  }
  g_print ("exact=false vs PIL (exact, no DCT scaling), %u images: mean "
      "|diff| %.3f levels, worst image %.3f, largest %u; DCT scale used:",
      done, done ? sum / done : 0.0, worst, max_abs);
  for (i = 1; i <= 8; i++)
    if (scales[i])
      g_print (" %u/8 x%u", i, scales[i]);
  g_print ("\n");
  g_free (ref);
  gst_spdl_jpeg_decoder_free (jpeg);
  gst_spdl_image_decoder_free (dec);
}

static gdouble
run_element (Bench * b, guint n_threads, gboolean exact)
{
  const gchar *tail = g_strcmp0 (recipe, "train") == 0 ?
      "mode=random-resized-crop flip=random-horizontal" :
      "mode=center-crop resize-shorter=256";
  gchar *launch = g_strdup_printf ("appsrc name=src "
      "caps=\"image/jpeg,parsed=true\" format=time max-bytes=0 ! "
      "spdldecode threads=%u width=224 height=224 exact=%s %s ! "
      "fakesink sync=false", n_threads, exact ? "true" : "false", tail);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (launch, &error);
  GstElement *src;
  gdouble seconds;
  gint64 start;
  guint i;

  if (error) {
    /* a timing of a broken pipeline is no result */
    g_printerr ("%s (is GST_PLUGIN_PATH set to build/gst/spdl?)\n",
        error->message);
    exit (1);
  }
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");

  /* everything queued in appsrc beforehand: only decoding is timed */
  for (i = 0; i < b->files->len; i++)
    gst_app_src_push_buffer (GST_APP_SRC (src),
        gst_buffer_new_wrapped_bytes (g_ptr_array_index (b->files, i)));
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  start = now_us ();
  seconds = spdl_bench_play (pipeline, TRUE);
  if (cpu_time)
    seconds = (now_us () - start) / 1e6;
  gst_object_unref (src);
  gst_object_unref (pipeline);
  g_free (launch);
  return b->files->len / seconds;
}

/* Resize alone, our resampler against GstVideoConverter (GStreamer's own,
 * linear resampler, which widens its filter when downscaling), on the same
 * decoded images: Resize(256) then the 224x224 centre crop. */
static void
resize_comparison (Bench * b)
{
  GstSpdlJpegDecoder *dec = gst_spdl_jpeg_decoder_new ();
  GstSpdlDecodeParams full;
  guint i, n = MIN (b->files->len, 200), done = 0;
  gint64 ours = 0, theirs = 0;
  guint8 *out = g_malloc (224 * 224 * 3);
  guint8 *their_out = g_malloc (224 * 224 * 3);
  guint64 diff = 0;

  gst_spdl_decode_params_init (&full);
  for (i = 0; i < n; i++) {
    gsize size;
    const guint8 *data = g_bytes_get_data (g_ptr_array_index (b->files, i),
        &size);
    GstSpdlGeometry g, crop;
    GstSpdlOutput packed;
    GstVideoInfo in_info, out_info;
    GstVideoConverter *conv;
    GstVideoFrame in_frame, out_frame;
    GstBuffer *in_buf, *out_buf;
    guint w, h, rw, rh, left, top;
    GstSpdlResampleAxis ha, va;
    guint8 *rows, *pixels;
    gint64 t;
    guint y;

    if (!gst_spdl_jpeg_decoder_open (dec, data, size, 0, &w, &h, NULL))
      continue;
    gst_spdl_geometry_compute (&g, &full, w, h, 0, 0);
    gst_video_info_set_format (&in_info, GST_VIDEO_FORMAT_RGB, w, h);
    in_buf = gst_buffer_new_allocate (NULL, in_info.size, NULL);
    gst_buffer_map (in_buf, &in_frame.map[0], GST_MAP_WRITE);
    pixels = in_frame.map[0].data;
    gst_spdl_output_init_packed (&packed, pixels, in_info.stride[0]);
    gst_spdl_jpeg_decoder_decode_to (dec, &full, &g, &packed, NULL);
    gst_buffer_unmap (in_buf, &in_frame.map[0]);
    gst_spdl_geometry_compute (&crop, &b->params, w, h, 0, 0);
    rw = (guint) (w / crop.scale_x + 0.5);
    rh = (guint) (h / crop.scale_y + 0.5);
    left = (guint) crop.offset_x;
    top = (guint) crop.offset_y;

    /* GstVideoConverter: resize the whole image, then take the crop */
    gst_video_info_set_format (&out_info, GST_VIDEO_FORMAT_RGB, rw, rh);
    out_buf = gst_buffer_new_allocate (NULL, out_info.size, NULL);
    /* image sizes vary per sample: a converter per image, timed too (our
     * side times its filter set-up the same way) */
    t = g_get_monotonic_time ();
    conv = gst_video_converter_new (&in_info, &out_info,
        gst_structure_new ("options", GST_VIDEO_CONVERTER_OPT_RESAMPLER_METHOD,
            GST_TYPE_VIDEO_RESAMPLER_METHOD, GST_VIDEO_RESAMPLER_METHOD_LINEAR,
            GST_VIDEO_CONVERTER_OPT_THREADS, G_TYPE_UINT, 1, NULL));
    gst_video_frame_map (&in_frame, &in_info, in_buf, GST_MAP_READ);
    gst_video_frame_map (&out_frame, &out_info, out_buf, GST_MAP_WRITE);
    gst_video_converter_frame (conv, &in_frame, &out_frame);
    for (y = 0; y < 224; y++)
      memcpy (their_out + y * 224 * 3, (guint8 *) GST_VIDEO_FRAME_PLANE_DATA
          (&out_frame, 0) + (top + y) * GST_VIDEO_FRAME_PLANE_STRIDE
          (&out_frame, 0) + left * 3, 224 * 3);
    gst_video_frame_unmap (&out_frame);
    gst_video_converter_free (conv);
    theirs += g_get_monotonic_time () - t;

    /* ours: only the kept outputs, PIL's arithmetic */
    t = g_get_monotonic_time ();
    gst_spdl_resample_axis_init (&ha, 0, w, crop.scale_x, crop.offset_x, 224,
        crop.virtual_width, FALSE);
    gst_spdl_resample_axis_init (&va, 0, h, crop.scale_y, crop.offset_y, 224,
        crop.virtual_height, FALSE);
    rows = g_malloc ((gsize) h * 224 * 3 + 16);
    for (y = 0; y < h; y++)
      gst_spdl_resample_row (&ha, (guint8 *) GST_VIDEO_FRAME_PLANE_DATA
          (&in_frame, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&in_frame, 0), 0,
          3, rows + y * 224 * 3);
    for (y = 0; y < 224; y++)
      gst_spdl_resample_column (&va, y, rows, 0, 224 * 3, 224 * 3,
          out + y * 224 * 3);
    ours += g_get_monotonic_time () - t;
    for (y = 0; y < 224 * 224 * 3; y++)
      diff += ABS ((gint) out[y] - (gint) their_out[y]);
    g_free (rows);
    gst_spdl_resample_axis_clear (&ha);
    gst_spdl_resample_axis_clear (&va);
    gst_video_frame_unmap (&in_frame);
    gst_buffer_unref (in_buf);
    gst_buffer_unref (out_buf);
    done++;
  }
  g_print ("resize + crop of %u decoded images: GstVideoConverter (linear) "
      "%.2f ms/image, ours %.2f ms/image (%.2fx its speed); GstVideoConverter "
      "differs from PIL's result by %.2f levels on average\n", done,
      theirs / 1000.0 / done, ours / 1000.0 / done, (gdouble) theirs / ours,
      (gdouble) diff / done / (224 * 224 * 3));
  g_free (out);
  g_free (their_out);
  gst_spdl_jpeg_decoder_free (dec);
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
{ DECODE_ONLY, LIBJPEG_FULL, FUSED, FUSED_NODCT, FUSED_NOREGION, FUSED_INEXACT,
  ELEMENT_1, ELEMENT_1_INEXACT, ELEMENT_N, N_RUNS
};

static const gchar *names[N_RUNS] = {
  "decode-only (libjpeg-turbo, every pixel, no resize)",
  "libjpeg-full (plain decode + resize)", "fused (physical limit/core)",
  "fused, exact=false without DCT scaling", "fused, no region decode",
  "fused, exact=false",
  "spdldecode threads=1", "spdldecode threads=1 exact=false",
  "spdldecode threads=N"
};

/* exact=false against exact=true alone, interleaved; the ratios are the
 * medians of each round's ratio (a loaded machine moves both alike) */
static void
inexact_comparison (Bench * b, gdouble results[N_RUNS][64])
{
  gdouble fused[64], element[64];
  gint r;

  for (r = 0; r < rounds; r++) {
    results[FUSED][r] = run_direct (b, TRUE, TRUE);
    results[FUSED_INEXACT][r] = run_direct_full (b, TRUE, TRUE, FALSE);
    results[ELEMENT_1][r] = run_element (b, 1, TRUE);
    results[ELEMENT_1_INEXACT][r] = run_element (b, 1, FALSE);
    fused[r] = results[FUSED_INEXACT][r] / results[FUSED][r];
    element[r] = results[ELEMENT_1_INEXACT][r] / results[ELEMENT_1][r];
    g_printerr ("round %d/%d: exact=false / exact=true: fused %.3f, "
        "threads=1 %.3f\n", r + 1, rounds, fused[r], element[r]);
  }
  g_print ("\n| run | images/s%s (median) |\n|---|---:|\n",
      cpu_time ? " of CPU time" : "");
  g_print ("| %s | %.0f |\n| %s | %.0f |\n| %s | %.0f |\n| %s | %.0f |\n",
      names[FUSED], median (results[FUSED], rounds), names[FUSED_INEXACT],
      median (results[FUSED_INEXACT], rounds), names[ELEMENT_1],
      median (results[ELEMENT_1], rounds), names[ELEMENT_1_INEXACT],
      median (results[ELEMENT_1_INEXACT], rounds));
  g_print ("exact=false / exact=true (median of %d rounds' ratios): fused "
      "%.3fx, spdldecode threads=1 %.3fx\n", rounds, median (fused, rounds),
      median (element, rounds));
  inexact_difference (b);
}

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
  gst_spdl_resample_limit_simd (CLAMP (simd, 0, 2));
  if (threads <= 0)
    threads = g_get_num_processors ();
  ds = gst_spdl_dataset_load (argv[1], extensions ? extensions : "jpg,jpeg",
      &error);
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

  if (resize_only) {
    resize_comparison (&b);
    return 0;
  }
  if (planar_only) {
    planar_comparison (&b);
    return 0;
  }
  run_direct (&b, TRUE, TRUE);  /* warm-up: caches, page faults */
  if (meta_cost) {
    gdouble per_image_us, meta_us[64], geometry_us[64];

    for (r = 0; r < rounds; r++) {
      results[FUSED][r] = run_direct (&b, TRUE, TRUE);
      meta_us[r] = run_meta_lifecycle (100000, FALSE);
      geometry_us[r] = run_meta_lifecycle (100000, TRUE) - meta_us[r];
    }
    per_image_us = 1e6 / median (results[FUSED], rounds);
    g_print ("per-sample metadata (add, position, 2 reads, copy): %.2f us; "
        "fused decode: %.0f us per image; metadata = %.2f%% of it\n",
        median (meta_us, rounds), per_image_us,
        100.0 * median (meta_us, rounds) / per_image_us);
    g_print ("spdldecode's sample geometry on the meta: %.2f us more per "
        "sample = %.2f%% of the fused decode\n", median (geometry_us, rounds),
        100.0 * median (geometry_us, rounds) / per_image_us);
    return 0;
  }
  if (limit_only) {
    gdouble decode_n[64], fused_n[64];

    for (r = 0; r < rounds && r < 64; r++) {
      results[DECODE_ONLY][r] = run_decode_only (&b);
      results[FUSED][r] = run_direct (&b, TRUE, TRUE);
      decode_n[r] = run_limit_concurrent (&b, threads, FALSE);
      fused_n[r] = run_limit_concurrent (&b, threads, TRUE);
    }
    r = MIN (rounds, 64);
    g_print ("| decode-only (libjpeg-turbo, every pixel) | %.0f |\n",
        median (results[DECODE_ONLY], r));
    g_print ("| fused (physical limit/core) | %.0f |\n",
        median (results[FUSED], r));
    g_print ("| decode-only, %d threads at once (total) | %.0f |\n", threads,
        median (decode_n, r));
    g_print ("| fused, %d threads at once (total) | %.0f |\n", threads,
        median (fused_n, r));
    return 0;
  }
  if (inexact_only) {
    inexact_comparison (&b, results);
    return 0;
  }
  for (r = 0; r < rounds; r++) {
    results[DECODE_ONLY][r] = run_decode_only (&b);
    results[LIBJPEG_FULL][r] = run_direct (&b, FALSE, FALSE);
    results[FUSED][r] = run_direct (&b, TRUE, TRUE);
    results[FUSED_NODCT][r] = run_direct_full (&b, FALSE, TRUE, FALSE);
    results[FUSED_NOREGION][r] = run_direct (&b, TRUE, FALSE);
    results[FUSED_INEXACT][r] = run_direct_full (&b, TRUE, TRUE, FALSE);
    results[ELEMENT_1][r] = run_element (&b, 1, TRUE);
    results[ELEMENT_1_INEXACT][r] = run_element (&b, 1, FALSE);
    results[ELEMENT_N][r] = run_element (&b, threads, TRUE);
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
  g_print ("DCT scaling bought (exact=false): %.3fx, region decoding "
      "bought: %.3fx, both vs plain libjpeg: %.3fx\n",
      med[FUSED_INEXACT] / med[FUSED_NODCT],
      med[FUSED] / med[FUSED_NOREGION], med[FUSED] / med[LIBJPEG_FULL]);
  g_print ("exact=false / exact=true: fused %.3fx, spdldecode threads=1 "
      "%.3fx\n", med[FUSED_INEXACT] / med[FUSED],
      med[ELEMENT_1_INEXACT] / med[ELEMENT_1]);
  inexact_difference (&b);
  if (g_strcmp0 (recipe, "train") != 0)
    resize_comparison (&b);
  g_free (b.out);
  g_ptr_array_unref (b.files);
  gst_spdl_dataset_free (ds);
  return 0;
}
