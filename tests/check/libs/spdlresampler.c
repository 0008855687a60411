/* gst-spdl: unit tests of the audio chain's resampler
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

#include <math.h>
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/audio/audio.h>

#include "gstspdlresampler.h"
#include "spdlcheckmain.h"

/* the audio chain's bound of exact filters */
#define MAX_FULL (4 << 20)

/* GstAudioResampler as the chain ran it: exact filters, one per phase */
static GstAudioResampler *
reference_new (gint quality, guint channels, guint in_rate, guint out_rate)
{
  GstStructure *options = gst_spdl_resampler_exact_options (quality,
      in_rate, out_rate);
  GstAudioResampler *r;

  r = gst_audio_resampler_new (GST_AUDIO_RESAMPLER_METHOD_KAISER,
      GST_AUDIO_RESAMPLER_FLAG_NONE, GST_AUDIO_FORMAT_F32, channels, in_rate,
      out_rate, options);
  gst_structure_free (options);
  return r;
}

/* A sweep with a different phase per channel, and a little noise */
static gfloat *
make_signal (gsize frames, guint channels, guint rate, GRand * rand)
{
  gfloat *s = g_new (gfloat, frames * channels);
  gsize i;
  guint c;

  for (i = 0; i < frames; i++) {
    gdouble t = (gdouble) i / rate;
    for (c = 0; c < channels; c++)
      s[i * channels + c] = 0.5 * sin (2 * G_PI * (100 + 2000 * t) * t + c) +
          0.1 * (g_rand_double (rand) - 0.5);
  }
  return s;
}

/* Feeds both the same chunks (some of them silence by NULL), checking
 * every frame count and every sample; a reset in the middle, after which
 * the phase carries on as it was */
static void
compare_with_gstreamer (gint quality, guint channels, guint in_rate,
    guint out_rate, guint32 seed)
{
  GRand *rand = g_rand_new_with_seed (seed);
  /* half a second, at least a few chunks: under valgrind every sample
   * counts */
  gsize frames = MAX (in_rate / 2, 12000), pos = 0, produced = 0, n;
  /* a chunk's outputs: up to 3000 frames and the history's */
  gsize out_max = (gsize) (3000 + 4096) * out_rate / in_rate + 64;
  gfloat *in = make_signal (frames, channels, in_rate, rand);
  gfloat *out_ref = g_new0 (gfloat, out_max * channels);
  gfloat *out = g_new0 (gfloat, out_max * channels);
  GstAudioResampler *ref = reference_new (quality, channels, in_rate,
      out_rate);
  GstSpdlResampler *r = gst_spdl_resampler_new (quality, channels, in_rate,
      out_rate, MAX_FULL, 1024);
  gdouble max_err = 0.0;
  gboolean did_reset = FALSE;
  gsize i;

  fail_unless (ref != NULL && r != NULL);
  fail_unless (gst_spdl_resampler_is_exact (r));
  fail_unless_equals_uint64 (gst_spdl_resampler_get_max_latency (r),
      gst_audio_resampler_get_max_latency (ref));
  while (pos < frames) {
    gsize out_ref_n, out_n;
    gboolean silence = g_rand_int_range (rand, 0, 8) == 0;
    gpointer ip[1], op[1];

    /* drawn apart: MIN () evaluates its arguments twice */
    n = g_rand_int_range (rand, 1, 3000);
    n = MIN (n, frames - pos);
    out_ref_n = gst_audio_resampler_get_out_frames (ref, n);
    out_n = gst_spdl_resampler_get_out_frames (r, n);
    fail_unless_equals_uint64 (out_n, out_ref_n);
    fail_unless (out_n <= out_max);
    fail_unless_equals_uint64 (gst_spdl_resampler_get_in_frames (r, 37),
        gst_audio_resampler_get_in_frames (ref, 37));
    ip[0] = in + pos * channels;
    op[0] = out_ref;
    gst_audio_resampler_resample (ref, silence ? NULL : ip, n, op, out_ref_n);
    gst_spdl_resampler_resample (r, silence ? NULL : in + pos * channels, n,
        out, out_n);
    for (i = 0; i < out_n * channels; i++)
      max_err = MAX (max_err, fabs (out[i] - out_ref[i]));
    produced += out_n;
    pos += n;
    if (!did_reset && pos > frames / 2) {
      gst_audio_resampler_reset (ref);
      gst_spdl_resampler_reset (r);
      did_reset = TRUE;
    }
  }
  /* the same samples up to the order of the sums (1e-7 per product) */
  fail_unless (max_err < 2e-6, "q%d %u ch %u -> %u Hz: %g off GStreamer's",
      quality, channels, in_rate, out_rate, max_err);
  fail_unless (produced > frames * out_rate / in_rate / 2);
  gst_spdl_resampler_free (r);
  gst_audio_resampler_free (ref);
  g_free (in);
  g_free (out);
  g_free (out_ref);
  g_rand_free (rand);
}

GST_START_TEST (test_equals_gstreamer_exact_filters)
{
  static const guint rates[][2] = {
    {48000, 16000}, {44100, 16000}, {22050, 16000}, {8000, 16000},
    {11025, 16000}, {16000, 44100}, {44100, 48000}, {32000, 16000},
    {96000, 16000},
  };
  guint i;
  gint q;

  for (i = 0; i < G_N_ELEMENTS (rates); i++)
    compare_with_gstreamer (4, 1, rates[i][0], rates[i][1], 1 + i);
  for (q = 0; q <= 10; q++)
    compare_with_gstreamer (q, 1, 48000, 16000, 100 + q);
  compare_with_gstreamer (4, 2, 48000, 16000, 200);
  compare_with_gstreamer (4, 6, 44100, 16000, 201);
  compare_with_gstreamer (10, 2, 22050, 16000, 202);
}

GST_END_TEST;

/* Every inner product (AVX2 with FMA and its four-output kernel, SSE,
 * plain C: what CPUs without AVX2 and other architectures run) gives
 * GStreamer's samples, at odd rates, up and down, 1 to 8 channels */
GST_START_TEST (test_every_kernel_equals_gstreamer)
{
  static const guint rates[][2] = {
    {192000, 16000}, {48000, 16000}, {96000, 48000}, {44100, 16000},
    {37800, 22050}, {11025, 44100}, {44056, 16000}, {8000, 48000},
  };
  guint level, i;

  for (level = 0; level <= 2; level++) {
    gst_spdl_resampler_limit_simd (level);
    for (i = 0; i < G_N_ELEMENTS (rates); i++)
      compare_with_gstreamer (i % 2 ? 10 : 4, 1 + i % 4, rates[i][0],
          rates[i][1], 300 + i);
    compare_with_gstreamer (0, 8, 44100, 22050, 310);
    compare_with_gstreamer (4, 7, 48000, 16000, 311);
  }
  gst_spdl_resampler_limit_simd (2);
}

GST_END_TEST;

#ifdef __x86_64__
/* The limit takes effect: the SSE and C sums run in another order */
static gfloat *
resample_noise (guint level)
{
  GRand *rand = g_rand_new_with_seed (7);
  gsize frames = 4800, n, i;
  gfloat *in = g_new (gfloat, frames), *out = g_new0 (gfloat, frames);
  GstSpdlResampler *r;

  gst_spdl_resampler_limit_simd (level);
  r = gst_spdl_resampler_new (4, 1, 44100, 16000, MAX_FULL, 1024);
  gst_spdl_resampler_limit_simd (2);
  for (i = 0; i < frames; i++)
    in[i] = g_rand_double_range (rand, -0.5, 0.5);
  n = gst_spdl_resampler_get_out_frames (r, frames);
  gst_spdl_resampler_resample (r, in, frames, out, n);
  gst_spdl_resampler_free (r);
  g_rand_free (rand);
  g_free (in);
  return out;
}

GST_START_TEST (test_limit_simd_changes_the_kernel)
{
  gfloat *sse = resample_noise (1), *c = resample_noise (0);

  fail_if (memcmp (sse, c, 4800 * sizeof (gfloat)) == 0);
  g_free (sse);
  g_free (c);
}

GST_END_TEST;
#endif

/* A sine well inside the passband comes out at its amplitude, delayed by
 * nothing: output k is the input at k x in / out */
static gdouble
sine_error (guint in_rate, guint out_rate, gboolean exact)
{
  gsize frames = in_rate, n, i;
  gfloat *in = g_new (gfloat, frames), *out = g_new (gfloat, frames);
  GstSpdlResampler *r = gst_spdl_resampler_new (4, 1, in_rate, out_rate,
      MAX_FULL, 1024);
  gdouble err = 0.0, f = 1000.0;

  fail_unless (r != NULL);
  fail_unless_equals_int (gst_spdl_resampler_is_exact (r), exact);
  for (i = 0; i < frames; i++)
    in[i] = 0.8 * sin (2 * G_PI * f * i / in_rate);
  n = gst_spdl_resampler_get_out_frames (r, frames);
  fail_unless (n > out_rate / 2);
  gst_spdl_resampler_resample (r, in, frames, out, n);
  for (i = 200; i < n - 200; i++)
    err = MAX (err, fabs (out[i] - 0.8 * sin (2 * G_PI * f * i / out_rate)));
  gst_spdl_resampler_free (r);
  g_free (in);
  g_free (out);
  return err;
}

GST_START_TEST (test_sine_keeps_amplitude_and_time)
{
  gdouble err = sine_error (48000, 16000, TRUE);

  fail_unless (err < 1e-3, "%g", err);
  err = sine_error (44100, 16000, TRUE);
  fail_unless (err < 1e-3, "%g", err);
}

GST_END_TEST;

/* Rates whose exact filters outgrow the bound are GstAudioResampler's
 * interpolated table (16000 phases from 47999 Hz), on the same time */
GST_START_TEST (test_many_phases_use_the_table)
{
  gdouble err = sine_error (47999, 16000, FALSE);

  fail_unless (err < 1e-3, "%g", err);
}

GST_END_TEST;

static Suite *
spdlresampler_suite (void)
{
  Suite *s = suite_create ("spdlresampler");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_equals_gstreamer_exact_filters);
  tcase_add_test (tc, test_every_kernel_equals_gstreamer);
#ifdef __x86_64__
  tcase_add_test (tc, test_limit_simd_changes_the_kernel);
#endif
  tcase_add_test (tc, test_many_phases_use_the_table);
  tcase_add_test (tc, test_sine_keeps_amplitude_and_time);
  return s;
}

SPDL_CHECK_MAIN (spdlresampler);
