/* gst-spdl: unit tests of the Ogg Opus reader (libopusfile, FFmpeg's
 * decoder)
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

#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "gstspdlaudioreader.h"
#include <opusfile.h>
#include "spdlaudioreadertest.h"
#include "spdlcheckmain.h"

#define RATE 48000

/* @frames of spdl_audio_test_chirp() through @encoder into Ogg */
static GBytes *
encode (const gchar * encoder, guint64 frames, guint channels)
{
  gchar *muxed = g_strdup_printf ("%s ! oggmux", encoder);
  GBytes *file = spdl_audio_test_encode (muxed, RATE, frames, channels);

  g_free (muxed);
  return file;
}

static GstSpdlAudioReader *
open_opus (GBytes * file, guint channels)
{
  GstSpdlAudioReader *reader = gst_spdl_audio_reader_open (file, NULL);

  spdl_audio_test_check_reader (reader, "opusfile+avcodec",
      GST_AUDIO_FORMAT_F32, RATE, channels);
  return reader;
}

GST_START_TEST (test_length_and_seeks)
{
  guint channels;

  for (channels = 1; channels <= 2; channels++) {
    /* 3 s and a fraction of a 20 ms packet: the end is trimmed exactly */
    const guint64 frames = 3 * RATE + 517;
    GBytes *file = encode ("opusenc bitrate=64000", frames, channels);
    GstSpdlAudioReader *reader = open_opus (file, channels);
    const guint64 firsts[] = { 0, 1, 960, 4799, 31234, 48000, 96001,
      frames - 2000
    };
    const guint64 span = 1500;
    gfloat *whole;
    guint64 got;
    guint i;

    fail_unless_equals_uint64 (reader->n_frames, frames);
    whole = spdl_audio_test_read_span (reader, 0, frames + 100, &got);
    fail_unless_equals_uint64 (got, frames);
    /* the signal came through: a chirp of amplitude 0.3 */
    fail_unless (spdl_audio_test_max_diff (whole, whole + 1, RATE) > 0.01);

    for (i = 0; i < G_N_ELEMENTS (firsts); i++) {
      gfloat *a = spdl_audio_test_read_span (reader, firsts[i], span, &got);
      gfloat *b;
      gdouble d;

      fail_unless_equals_uint64 (got, span);
      /* a seek decodes 600 ms before the frame with a fresh decoder:
       * by then the decoder's state is the continuous decode's (identical
       * here; 80 ms, opusfile's own pre-roll, gave 0.036 at 4799) */
      d = spdl_audio_test_max_diff (a, whole + firsts[i] * channels,
          span * channels);
      GST_INFO ("%u channels, from %" G_GUINT64_FORMAT ": %g from the "
          "continuous decode", channels, firsts[i], d);
      fail_unless (d < 1e-6, "from %" G_GUINT64_FORMAT ": %g", firsts[i], d);
      /* the same span again (a seek back): the same samples exactly */
      b = spdl_audio_test_read_span (reader, firsts[i], span, &got);
      fail_unless_equals_uint64 (got, span);
      fail_unless (memcmp (a, b, span * channels * sizeof (gfloat)) == 0,
          "from %" G_GUINT64_FORMAT ": not the same twice", firsts[i]);
      g_free (a);
      g_free (b);
    }

    /* at and past the end: nothing, and no error */
    g_free (spdl_audio_test_read_span (reader, frames, 10, &got));
    fail_unless_equals_uint64 (got, 0);
    g_free (spdl_audio_test_read_span (reader, frames + 5000, 10, &got));
    fail_unless_equals_uint64 (got, 0);
    /* the last frames */
    {
      gfloat *tail = spdl_audio_test_read_span (reader, frames - 10, 100, &got);
      fail_unless_equals_uint64 (got, 10);
      g_free (tail);
    }

    g_free (whole);
    gst_spdl_audio_reader_free (reader);
    g_bytes_unref (file);
  }
}

GST_END_TEST;

/* exact = FALSE: a read from a frame is opusfile's own seek to it (its
 * 80 ms pre-roll with a fresh decoder): the same from read to read and
 * from reader to reader; exact = TRUE (as opened) is the continuous
 * decode's, which the 80 ms are not at 16 kb/s. */
GST_START_TEST (test_inexact_is_opusfiles_seek)
{
  const guint64 frames = 4 * RATE;
  GBytes *file = encode ("opusenc bitrate=16000", frames, 1);
  GstSpdlAudioReader *reader = open_opus (file, 1);
  const guint64 firsts[] = { 4799, 31234, 96001, 150000 };
  const guint64 span = 2000;
  gfloat *whole;
  gdouble worst_exact = 0, worst_inexact = 0;
  guint64 got;
  guint i;

  fail_unless (reader->exact);
  whole = spdl_audio_test_read_span (reader, 0, frames, &got);
  fail_unless_equals_uint64 (got, frames);
  for (i = 0; i < G_N_ELEMENTS (firsts); i++) {
    GstSpdlAudioReader *other = open_opus (file, 1);
    gfloat *exact, *inexact, *again, *fresh;

    reader->exact = TRUE;
    exact = spdl_audio_test_read_span (reader, firsts[i], span, &got);
    reader->exact = FALSE;
    inexact = spdl_audio_test_read_span (reader, firsts[i], span, &got);
    fail_unless_equals_uint64 (got, span);
    again = spdl_audio_test_read_span (reader, firsts[i], span, &got);
    fail_unless (memcmp (inexact, again, span * sizeof (gfloat)) == 0);
    other->exact = FALSE;
    fresh = spdl_audio_test_read_span (other, firsts[i], span, &got);
    fail_unless_equals_uint64 (got, span);
    fail_unless (memcmp (inexact, fresh, span * sizeof (gfloat)) == 0,
        "from %" G_GUINT64_FORMAT ": not a fresh reader's (%g)", firsts[i],
        spdl_audio_test_max_diff (inexact, fresh, span));
    worst_exact = MAX (worst_exact, spdl_audio_test_max_diff (exact,
            whole + firsts[i], span));
    worst_inexact = MAX (worst_inexact, spdl_audio_test_max_diff (inexact,
            whole + firsts[i], span));
    g_free (exact);
    g_free (inexact);
    g_free (again);
    g_free (fresh);
    gst_spdl_audio_reader_free (other);
  }
  GST_INFO ("from the continuous decode: exact %g, inexact %g", worst_exact,
      worst_inexact);
  fail_unless (worst_exact < 1e-6, "exact: %g", worst_exact);
  /* 16 kb/s: the 80 ms pre-roll has not settled */
  fail_unless (worst_inexact > 1e-4, "inexact equals exact: %g",
      worst_inexact);
  g_free (whole);
  gst_spdl_audio_reader_free (reader);
  g_bytes_unref (file);
}

GST_END_TEST;

/* Reading on where the last read stopped continues the decode without a
 * seek: the samples a single read gives. */
GST_START_TEST (test_consecutive_reads)
{
  const guint64 frames = 2 * RATE;
  GBytes *file = encode ("opusenc", frames, 2);
  GstSpdlAudioReader *reader = open_opus (file, 2);
  gfloat *whole, *a, *b;
  guint64 got;

  whole = spdl_audio_test_read_span (reader, 0, frames, &got);
  fail_unless_equals_uint64 (got, frames);
  /* 0 again, after a seek to 0: as right after opening */
  a = spdl_audio_test_read_span (reader, 0, 1000, &got);
  fail_unless (memcmp (a, whole, 1000 * 2 * sizeof (gfloat)) == 0);
  b = spdl_audio_test_read_span (reader, 1000, 30000, &got);
  fail_unless_equals_uint64 (got, 30000);
  fail_unless (memcmp (b, whole + 2000, 30000 * 2 * sizeof (gfloat)) == 0);
  g_free (a);
  g_free (b);
  g_free (whole);
  gst_spdl_audio_reader_free (reader);
  g_bytes_unref (file);
}

GST_END_TEST;

/* The whole file, past its first 0.1 s, decoded by @decoder in a
 * pipeline: the largest difference */
static gdouble
diff_from_pipeline (GstSpdlAudioReader * reader, GBytes * file,
    const gchar * decoder, guint64 frames, guint channels)
{
  GstCaps *caps = gst_caps_new_empty_simple ("application/ogg");
  gchar *launch = g_strdup_printf ("appsrc name=src ! oggdemux ! %s ! "
      "audioconvert ! audio/x-raw,format=F32LE,layout=interleaved ! "
      "appsink name=sink", decoder);
  GstClockTime pts;
  GBytes *ref;
  const gfloat *r;
  gsize size;
  guint64 n, got, skip = RATE / 10;
  gfloat *whole;
  gdouble d;

  whole = spdl_audio_test_read_span (reader, 0, frames, &got);
  fail_unless_equals_uint64 (got, frames);
  ref = spdl_audio_test_run_pipeline (launch, caps, g_bytes_get_data (file,
          NULL), g_bytes_get_size (file), &pts, NULL, NULL);
  gst_caps_unref (caps);
  g_free (launch);
  r = g_bytes_get_data (ref, &size);
  n = size / sizeof (gfloat) / channels;
  fail_unless (GST_CLOCK_TIME_IS_VALID (pts));
  fail_unless_equals_uint64 (gst_util_uint64_scale_round (pts, RATE,
          GST_SECOND), 0);
  fail_unless (n >= frames - RATE / 50, "%" G_GUINT64_FORMAT, n);
  n = MIN (n, frames);
  d = spdl_audio_test_max_diff (whole + skip * channels, r + skip * channels,
      (n - skip) * channels);
  GST_INFO ("%u channels: %g from %s", channels, d, decoder);
  g_free (whole);
  g_bytes_unref (ref);
  return d;
}

/* On music (CELT, mono) within opusdec's S16 rounding (2^-16) of
 * libopus's decode. FFmpeg's decode, which the reader equals, is compared
 * in tests/python/test_audio_spans.py (the ffmpeg tool; gst-libav is not
 * among these tests' plugins): on SILK speech and CELT stereo FFmpeg's
 * decoder and libopus differ by more than this. */
GST_START_TEST (test_equals_opusdec_on_music)
{
  const guint64 frames = 2 * RATE;
  GBytes *file = encode ("opusenc bitrate=48000", frames, 1);
  GstSpdlAudioReader *reader = open_opus (file, 1);
  gdouble d;

  d = diff_from_pipeline (reader, file, "opusdec", frames, 1);
  fail_unless (d < 1e-4, "from opusdec: %g", d);
  gst_spdl_audio_reader_free (reader);
  g_bytes_unref (file);
}

GST_END_TEST;

/* Ogg's page checksum (CRC-32, polynomial 0x04c11db7, not reflected) */
static guint32
ogg_crc (const guint8 * d, gsize n)
{
  guint32 crc = 0;
  gsize i;
  guint b;

  for (i = 0; i < n; i++) {
    crc ^= (guint32) d[i] << 24;
    for (b = 0; b < 8; b++)
      crc = crc & 0x80000000u ? (crc << 1) ^ 0x04c11db7u : crc << 1;
  }
  return crc;
}

/* The header's output gain (-6 dB here) is applied, as opusdec does. */
GST_START_TEST (test_output_gain)
{
  const guint64 frames = RATE;
  GBytes *file = encode ("opusenc", frames, 1), *quiet;
  GstSpdlAudioReader *reader;
  gfloat *plain, *soft, *r;
  GstCaps *caps;
  GBytes *ref;
  guint8 *d;
  gsize size, body, page, i;
  guint16 gain_q8;
  guint32 crc;
  guint64 got;
  gdouble d_scale = 0, d_opusdec;
  const gdouble gain = pow (10, -6.0 / 20);

  reader = open_opus (file, 1);
  plain = spdl_audio_test_read_span (reader, 0, frames, &got);
  gst_spdl_audio_reader_free (reader);

  /* OpusHead's output gain: Q7.8 dB at byte 16, then the page's CRC */
  d = g_memdup2 (g_bytes_get_data (file, NULL), g_bytes_get_size (file));
  size = g_bytes_get_size (file);
  body = 27 + d[26];
  for (page = body, i = 0; i < d[26]; i++)
    page += d[27 + i];
  fail_unless (memcmp (d + body, "OpusHead", 8) == 0 && page <= size);
  gain_q8 = GUINT16_TO_LE ((guint16) (gint16) (-6 * 256));
  memcpy (d + body + 16, &gain_q8, 2);
  memset (d + 22, 0, 4);
  crc = GUINT32_TO_LE (ogg_crc (d, page));
  memcpy (d + 22, &crc, 4);
  quiet = g_bytes_new_take (d, size);

  reader = open_opus (quiet, 1);
  soft = spdl_audio_test_read_span (reader, 0, frames, &got);
  fail_unless_equals_uint64 (got, frames);
  for (i = 0; i < frames; i++)
    d_scale = MAX (d_scale, fabs (soft[i] - gain * plain[i]));
  /* libopus scales inside the decode, in float */
  fail_unless (d_scale < 1e-6, "%g", d_scale);

  caps = gst_caps_new_empty_simple ("application/ogg");
  ref = spdl_audio_test_run_pipeline ("appsrc name=src ! decodebin ! "
      "audioconvert ! audio/x-raw,format=F32LE,layout=interleaved ! "
      "appsink name=sink", caps, d, size, NULL, NULL, NULL);
  gst_caps_unref (caps);
  r = (gfloat *) g_bytes_get_data (ref, &size);
  fail_unless (size / sizeof (gfloat) >= frames - RATE / 50);
  d_opusdec = spdl_audio_test_max_diff (soft, r,
      MIN (frames, size / sizeof (gfloat)));
  GST_INFO ("-6 dB: %g from scaling, %g from opusdec", d_scale, d_opusdec);
  /* opusdec scales its S16 output */
  fail_unless (d_opusdec < 1e-4, "%g", d_opusdec);

  g_bytes_unref (ref);
  g_free (plain);
  g_free (soft);
  gst_spdl_audio_reader_free (reader);
  g_bytes_unref (quiet);
  g_bytes_unref (file);
}

GST_END_TEST;

static void
assert_declined (GBytes * file, const gchar * what)
{
  GstSpdlAudioReader *reader = gst_spdl_audio_reader_open (file, NULL);

  fail_unless (reader == NULL, "%s was taken by %s", what,
      reader ? gst_spdl_audio_reader_get_name (reader) : "");
  fail_unless (gst_spdl_opus_reader_open (file, NULL) == NULL, "%s", what);
}

GST_START_TEST (test_declines)
{
  GBytes *opus = encode ("opusenc", RATE, 1);
  GBytes *opus2 = encode ("opusenc", RATE / 2, 1);
  GBytes *vorbis = encode ("vorbisenc", RATE, 1);
  GBytes *wide = encode ("opusenc", RATE / 2, 3);
  const guint8 *d;
  gsize size;
  GByteArray *chained;
  GBytes *b;
  guint8 garbage[4000];
  guint i;

  d = g_bytes_get_data (opus, &size);
  /* Ogg Vorbis: the Vorbis reader's */
  fail_unless (gst_spdl_opus_reader_open (vorbis, NULL) == NULL);
  assert_declined (wide, "Ogg Opus of 3 channels");

  /* two links (two streams, each its own serial number): the pipeline's */
  chained = g_byte_array_new ();
  g_byte_array_append (chained, d, size);
  g_byte_array_append (chained, g_bytes_get_data (opus2, NULL),
      g_bytes_get_size (opus2));
  b = g_byte_array_free_to_bytes (chained);
  assert_declined (b, "chained Ogg Opus");
  g_bytes_unref (b);

  for (i = 0; i < sizeof (garbage); i++)
    garbage[i] = (i * 7919u + 13) >> 3;
  b = g_bytes_new_static (garbage, sizeof (garbage));
  assert_declined (b, "garbage");
  g_bytes_unref (b);
  /* garbage after a real first page: opusfile finds no audio */
  memcpy (garbage, d, 47);
  b = g_bytes_new_static (garbage, sizeof (garbage));
  assert_declined (b, "garbage after an OpusHead page");
  g_bytes_unref (b);
  /* FLAC's magic */
  memcpy (garbage, "fLaC", 4);
  b = g_bytes_new_static (garbage, sizeof (garbage));
  assert_declined (b, "fLaC");
  g_bytes_unref (b);
  /* an OggS header cut short, and in its OpusHead */
  for (i = 0; i < 60; i += 7) {
    b = g_bytes_new_static (d, i);
    assert_declined (b, "a cut header");
    g_bytes_unref (b);
  }
  b = g_bytes_new_static ("", 0);
  assert_declined (b, "nothing");
  g_bytes_unref (b);

  g_bytes_unref (wide);
  g_bytes_unref (vorbis);
  g_bytes_unref (opus2);
  g_bytes_unref (opus);
}

GST_END_TEST;

/* A file cut short: read up to where it ends, or fail as corrupt; never
 * more than it declares, never a hang. */
GST_START_TEST (test_truncated)
{
  const guint64 frames = 3 * RATE;
  GBytes *file = encode ("opusenc", frames, 2);

  spdl_audio_test_check_truncated (file, frames, 2);
  g_bytes_unref (file);
}

GST_END_TEST;

/* A page in the middle damaged: reading through it fails as corrupt
 * (opusfile's hole) rather than giving fewer samples than declared. */
GST_START_TEST (test_damaged_page)
{
  const guint64 frames = 3 * RATE;
  GBytes *file = encode ("opusenc", frames, 1);

  spdl_audio_test_check_ogg_hole (file, frames);
  g_bytes_unref (file);
}

GST_END_TEST;

static Suite *
spdlopusreader_suite (void)
{
  Suite *s = suite_create ("spdlopusreader");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_length_and_seeks);
  tcase_add_test (tc, test_consecutive_reads);
  tcase_add_test (tc, test_inexact_is_opusfiles_seek);
  tcase_add_test (tc, test_equals_opusdec_on_music);
  tcase_add_test (tc, test_output_gain);
  tcase_add_test (tc, test_declines);
  tcase_add_test (tc, test_truncated);
  tcase_add_test (tc, test_damaged_page);
  return s;
}

SPDL_CHECK_MAIN (spdlopusreader);
