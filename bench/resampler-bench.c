/* GStreamer SPDL: the audio chain's resampler against GStreamer's
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* CPU per second of audio of GstAudioResampler (the Kaiser filters at a
 * quality, one exact filter per phase, as the audio chain ran it before)
 * and of GstSpdlResampler (the same filters and results, by AVX2 where
 * the CPU has it), on the same noise, in chunks of 4096 frames, rounds
 * interleaved; and the largest difference between the two outputs.
 *
 *   resampler-bench [--seconds 120] [--rounds 5] [--quality 4]
 *       [--channels 1] [--simd 2] IN_RATE:OUT_RATE ...
 *
 * --simd 1 or 0 runs GstSpdlResampler's SSE or plain C inner product (a
 * CPU without AVX2, another architecture) instead of AVX2.
 *
 * Prints one JSON line per rate pair: the median ms of CPU (this thread)
 * per second of input audio for each, their ratio, max_abs_diff. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gst/audio/audio.h>

#include "gstspdlresampler.h"

#define CHUNK 4096

static gdouble
thread_cpu (void)
{
  struct timespec t;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int
compare_doubles (const void *a, const void *b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

static gdouble
median (gdouble * v, guint n)
{
  qsort (v, n, sizeof (gdouble), compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Seconds of CPU to resample @frames of @in with GStreamer's resampler */
static gdouble
run_gstreamer (const gfloat * in, gsize frames, guint channels,
    gint quality, guint in_rate, guint out_rate, gfloat * out,
    gsize * produced)
{
  GstStructure *options = gst_spdl_resampler_exact_options (quality,
      in_rate, out_rate);
  GstAudioResampler *r;
  gsize pos, done = 0;
  gdouble t0;

  t0 = thread_cpu ();
  r = gst_audio_resampler_new (GST_AUDIO_RESAMPLER_METHOD_KAISER,
      GST_AUDIO_RESAMPLER_FLAG_NONE, GST_AUDIO_FORMAT_F32, channels, in_rate,
      out_rate, options);
  for (pos = 0; pos < frames; pos += CHUNK) {
    gsize n = MIN (CHUNK, frames - pos);
    gsize o = gst_audio_resampler_get_out_frames (r, n);
    gpointer ip[1] = { (gpointer) (in + pos * channels) };
    gpointer op[1] = { out + done * channels };

    gst_audio_resampler_resample (r, ip, n, op, o);
    done += o;
  }
  *produced = done;
  gst_audio_resampler_free (r);
  gst_structure_free (options);
  return thread_cpu () - t0;
}

static gdouble
run_spdl (const gfloat * in, gsize frames, guint channels, gint quality,
    guint in_rate, guint out_rate, gfloat * out, gsize * produced)
{
  GstSpdlResampler *r;
  gsize pos, done = 0;
  gdouble t0 = thread_cpu ();

  r = gst_spdl_resampler_new (quality, channels, in_rate, out_rate,
      G_MAXSIZE, 1024);
  for (pos = 0; pos < frames; pos += CHUNK) {
    gsize n = MIN (CHUNK, frames - pos);
    gsize o = gst_spdl_resampler_get_out_frames (r, n);

    gst_spdl_resampler_resample (r, in + pos * channels, n,
        out + done * channels, o);
    done += o;
  }
  *produced = done;
  gst_spdl_resampler_free (r);
  return thread_cpu () - t0;
}

int
main (int argc, char **argv)
{
  gdouble seconds = 120.0;
  gint rounds = 5, quality = 4, channels = 1, simd = 2, i;
  GOptionEntry entries[] = {
    {"seconds", 0, 0, G_OPTION_ARG_DOUBLE, &seconds, "Audio per run", "S"},
    {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Interleaved rounds", "N"},
    {"quality", 0, 0, G_OPTION_ARG_INT, &quality, "Kaiser quality", "Q"},
    {"channels", 0, 0, G_OPTION_ARG_INT, &channels, "Channels", "C"},
    {"simd", 0, 0, G_OPTION_ARG_INT, &simd,
        "GstSpdlResampler's inner product: 2 AVX2, 1 SSE, 0 C", "L"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("IN_RATE:OUT_RATE ...");
  GError *error = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc < 2 ||
      rounds < 1 || channels < 1 || quality < 0 || quality > 10 ||
      !(seconds > 0)) {
    g_printerr ("%s\n", error ? error->message :
        "usage: resampler-bench [options] IN_RATE:OUT_RATE ...");
    return 2;
  }
  gst_init (NULL, NULL);
  gst_spdl_resampler_limit_simd (CLAMP (simd, 0, 2));
  for (i = 1; i < argc; i++) {
    guint in_rate = 0, out_rate = 0;
    gsize frames, k, n_gst = 0, n_spdl = 0;
    gfloat *in, *out_gst, *out_spdl;
    gdouble *t_gst = g_new (gdouble, rounds), *t_spdl = g_new (gdouble,
        rounds), diff = 0.0, m_gst, m_spdl;
    GRand *rand = g_rand_new_with_seed (1);
    gint round;

    if (sscanf (argv[i], "%u:%u", &in_rate, &out_rate) != 2 || in_rate == 0
        || out_rate == 0) {
      g_printerr ("not IN_RATE:OUT_RATE: %s\n", argv[i]);
      return 2;
    }
    frames = (gsize) (seconds * in_rate);
    if (frames == 0) {
      g_printerr ("--seconds %g of %u Hz is no frame\n", seconds, in_rate);
      return 2;
    }
    in = g_new (gfloat, frames * channels);
    for (k = 0; k < frames * channels; k++)
      in[k] = g_rand_double_range (rand, -0.5, 0.5);
    /* the output of the last round of each, compared */
    out_gst = g_new0 (gfloat, (frames / in_rate + 2) * out_rate * channels);
    out_spdl = g_new0 (gfloat, (frames / in_rate + 2) * out_rate * channels);
    for (round = 0; round < rounds; round++) {
      t_gst[round] = run_gstreamer (in, frames, channels, quality, in_rate,
          out_rate, out_gst, &n_gst);
      t_spdl[round] = run_spdl (in, frames, channels, quality, in_rate,
          out_rate, out_spdl, &n_spdl);
    }
    if (n_gst != n_spdl) {
      g_printerr ("%u:%u: %" G_GSIZE_FORMAT " frames out of GStreamer's, %"
          G_GSIZE_FORMAT " of GstSpdlResampler\n", in_rate, out_rate, n_gst,
          n_spdl);
      return 1;
    }
    for (k = 0; k < n_gst * channels; k++)
      diff = MAX (diff, fabs (out_gst[k] - out_spdl[k]));
    m_gst = median (t_gst, rounds) * 1000.0 / seconds;
    m_spdl = median (t_spdl, rounds) * 1000.0 / seconds;
    g_print ("{\"in_rate\": %u, \"out_rate\": %u, \"channels\": %d, "
        "\"quality\": %d, \"simd\": %d, \"gstreamer_ms_per_audio_s\": %.4f, "
        "\"spdl_ms_per_audio_s\": %.4f, \"ratio\": %.3f, "
        "\"max_abs_diff\": %.3g}\n", in_rate, out_rate, channels, quality,
        CLAMP (simd, 0, 2), m_gst, m_spdl, m_spdl / m_gst, diff);
    g_free (in);
    g_free (out_gst);
    g_free (out_spdl);
    g_free (t_gst);
    g_free (t_spdl);
    g_rand_free (rand);
  }
  g_option_context_free (ctx);
  return 0;
}
