/* gst-spdl: unit tests of the Ogg Vorbis reader (libvorbisfile)
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
#include <string.h>

#include "gstspdlaudioreader.h"
#include "spdlaudioreadertest.h"
#include "spdlcheckmain.h"

static GBytes *
encode_vorbis (guint rate, guint64 frames, guint channels)
{
  return spdl_audio_test_encode ("vorbisenc ! oggmux", rate, frames,
      channels);
}

/* The whole file through decodebin (oggdemux ! vorbisdec), as floats,
 * in pull mode as the audio chain runs it: oggdemux then knows the last
 * granule and the decoder's last block is clipped to it (pushed,
 * vorbisdec gives the whole block: 123 frames more on a 48517-frame
 * file). @n: the length the chain takes from it, the duration in frames;
 * @n_decoded: the frames decoded, one more where the clipping's rounding
 * to time gives one (44.1 kHz). */
static GBytes *
decode_pipeline (GBytes * file, guint rate, guint channels, guint64 * n,
    guint64 * n_decoded)
{
  GstClockTime pts, duration;
  GBytes *ref;

  ref = spdl_audio_test_run_pipeline ("giostreamsrc name=src ! decodebin ! "
      "audioconvert ! audio/x-raw,format=F32LE,layout=interleaved ! "
      "appsink name=sink", NULL, g_bytes_get_data (file, NULL),
      g_bytes_get_size (file), &pts, &duration, NULL);
  fail_unless_equals_uint64 (pts, 0);
  *n = gst_util_uint64_scale_int_round (duration, rate, GST_SECOND);
  *n_decoded = g_bytes_get_size (ref) / sizeof (gfloat) / channels;
  fail_unless (*n_decoded == *n || *n_decoded == *n + 1,
      "%" G_GUINT64_FORMAT " frames decoded, %" G_GUINT64_FORMAT
      " declared", *n_decoded, *n);
  return ref;
}

static GstSpdlAudioReader *
open_vorbis (GBytes * file, guint rate, guint channels)
{
  GstSpdlAudioReader *reader = gst_spdl_audio_reader_open (file, NULL);

  spdl_audio_test_check_reader (reader, "vorbisfile", GST_AUDIO_FORMAT_F32,
      rate, channels);
  return reader;
}

static const guint rates[] = { 16000, 44100 };

/* The length is the file's exactly (the last page's granule: the input's
 * frames), as many as the pipeline decodes; a read from any frame gives
 * the continuous decode's samples bit for bit, and again the same. */
GST_START_TEST (test_length_and_seeks)
{
  guint r, channels;

  for (r = 0; r < G_N_ELEMENTS (rates); r++) {
    for (channels = 1; channels <= 2; channels++) {
      const guint rate = rates[r];
      /* 3 s and a fraction of a block: the end is trimmed exactly */
      const guint64 frames = 3 * rate + 517;
      GBytes *file = encode_vorbis (rate, frames, channels);
      GstSpdlAudioReader *reader = open_vorbis (file, rate, channels);
      const guint64 firsts[] = { 0, 1, 127, 128, 1023, 1024, 4799, 31234,
        rate, 2 * rate + 1, frames - 2000
      };
      const guint64 span = 1500;
      gfloat *whole;
      guint64 got, piped, decoded;
      guint i;

      fail_unless_equals_uint64 (reader->n_frames, frames);
      g_bytes_unref (decode_pipeline (file, rate, channels, &piped,
              &decoded));
      fail_unless_equals_uint64 (piped, frames);
      whole = spdl_audio_test_read_span (reader, 0, frames + 100, &got);
      fail_unless_equals_uint64 (got, frames);
      /* the signal came through: a chirp of amplitude 0.3 */
      fail_unless (spdl_audio_test_max_diff (whole, whole + 1, rate) > 0.01);

      for (i = 0; i < G_N_ELEMENTS (firsts); i++) {
        gfloat *a = spdl_audio_test_read_span (reader, firsts[i], span, &got);
        gfloat *b;

        fail_unless_equals_uint64 (got, span);
        fail_unless (memcmp (a, whole + firsts[i] * channels,
                span * channels * sizeof (gfloat)) == 0,
            "%u Hz, %u channels, from %" G_GUINT64_FORMAT ": %g from the "
            "continuous decode", rate, channels, firsts[i],
            spdl_audio_test_max_diff (a, whole + firsts[i] * channels,
                span * channels));
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
      /* the last frames, not one more */
      {
        gfloat *tail = spdl_audio_test_read_span (reader, frames - 10, 100,
            &got);
        fail_unless_equals_uint64 (got, 10);
        fail_unless (memcmp (tail, whole + (frames - 10) * channels,
                10 * channels * sizeof (gfloat)) == 0);
        g_free (tail);
      }

      g_free (whole);
      gst_spdl_audio_reader_free (reader);
      g_bytes_unref (file);
    }
  }
}

GST_END_TEST;

/* Reading on where the last read stopped continues the decode without a
 * seek; two readers of one file give the same samples. */
GST_START_TEST (test_consecutive_reads)
{
  const guint64 frames = 2 * 44100;
  GBytes *file = encode_vorbis (44100, frames, 2);
  GstSpdlAudioReader *reader = open_vorbis (file, 44100, 2);
  GstSpdlAudioReader *other = open_vorbis (file, 44100, 2);
  gfloat *whole, *again, *a, *b;
  guint64 got;

  whole = spdl_audio_test_read_span (reader, 0, frames, &got);
  fail_unless_equals_uint64 (got, frames);
  again = spdl_audio_test_read_span (other, 0, frames, &got);
  fail_unless (memcmp (again, whole, frames * 2 * sizeof (gfloat)) == 0);
  /* 0 again, after a seek to 0: as right after opening */
  a = spdl_audio_test_read_span (reader, 0, 1000, &got);
  fail_unless (memcmp (a, whole, 1000 * 2 * sizeof (gfloat)) == 0);
  b = spdl_audio_test_read_span (reader, 1000, 30000, &got);
  fail_unless_equals_uint64 (got, 30000);
  fail_unless (memcmp (b, whole + 2000, 30000 * 2 * sizeof (gfloat)) == 0);
  g_free (a);
  g_free (b);
  g_free (again);
  g_free (whole);
  gst_spdl_audio_reader_free (other);
  gst_spdl_audio_reader_free (reader);
  g_bytes_unref (file);
}

GST_END_TEST;

/* The samples of oggdemux ! vorbisdec ! audioconvert decoding the whole
 * file: libvorbis' float decode both ways. */
GST_START_TEST (test_equals_vorbisdec)
{
  guint r, channels;

  for (r = 0; r < G_N_ELEMENTS (rates); r++) {
    for (channels = 1; channels <= 2; channels++) {
      const guint rate = rates[r];
      const guint64 frames = 2 * rate + 333;
      GBytes *file = encode_vorbis (rate, frames, channels);
      GstSpdlAudioReader *reader = open_vorbis (file, rate, channels);
      GBytes *ref;
      guint64 n, decoded, got;
      gfloat *whole;
      gdouble d;

      whole = spdl_audio_test_read_span (reader, 0, frames, &got);
      fail_unless_equals_uint64 (got, frames);
      ref = decode_pipeline (file, rate, channels, &n, &decoded);
      fail_unless_equals_uint64 (n, frames);
      d = spdl_audio_test_max_diff (whole, g_bytes_get_data (ref, NULL),
          frames * channels);
      GST_INFO ("%u Hz, %u channels: %g from vorbisdec", rate, channels, d);
      fail_unless (d == 0, "%u Hz, %u channels: %g from vorbisdec", rate,
          channels, d);
      g_free (whole);
      g_bytes_unref (ref);
      gst_spdl_audio_reader_free (reader);
      g_bytes_unref (file);
    }
  }
}

GST_END_TEST;

static void
assert_declined (GBytes * file, const gchar * what)
{
  GstSpdlAudioReader *reader = gst_spdl_audio_reader_open (file, NULL);

  fail_unless (reader == NULL || strcmp (gst_spdl_audio_reader_get_name
          (reader), "vorbisfile") != 0, "%s was taken", what);
  gst_spdl_audio_reader_free (reader);
  fail_unless (gst_spdl_vorbis_reader_open (file, NULL) == NULL, "%s", what);
}

GST_START_TEST (test_declines)
{
  GBytes *vorbis = encode_vorbis (44100, 44100, 1);
  GBytes *vorbis2 = encode_vorbis (44100, 22050, 1);
  GBytes *opus = spdl_audio_test_encode ("opusenc ! oggmux", 48000, 48000, 1);
  GBytes *wide = encode_vorbis (44100, 22050, 3);
  const guint8 *d;
  gsize size, body;
  GByteArray *chained;
  GBytes *b;
  guint8 garbage[4000];
  guint i;

  d = g_bytes_get_data (vorbis, &size);
  assert_declined (opus, "Ogg Opus");
  assert_declined (wide, "Ogg Vorbis of 3 channels");

  /* two links (two streams, each its own serial number): the pipeline's */
  chained = g_byte_array_new ();
  g_byte_array_append (chained, d, size);
  g_byte_array_append (chained, g_bytes_get_data (vorbis2, NULL),
      g_bytes_get_size (vorbis2));
  b = g_byte_array_free_to_bytes (chained);
  assert_declined (b, "chained Ogg Vorbis");
  g_bytes_unref (b);

  for (i = 0; i < sizeof (garbage); i++)
    garbage[i] = (i * 7919u + 13) >> 3;
  b = g_bytes_new_static (garbage, sizeof (garbage));
  assert_declined (b, "garbage");
  g_bytes_unref (b);
  /* garbage after a real first page (the identification header) */
  body = 27 + d[26];
  fail_unless (memcmp (d + body, "\001vorbis", 7) == 0);
  memcpy (garbage, d, body + 30);
  b = g_bytes_new_static (garbage, sizeof (garbage));
  assert_declined (b, "garbage after a Vorbis identification page");
  g_bytes_unref (b);
  /* FLAC's magic */
  memcpy (garbage, "fLaC", 4);
  b = g_bytes_new_static (garbage, sizeof (garbage));
  assert_declined (b, "fLaC");
  g_bytes_unref (b);
  /* headers cut short: in the page header, the identification header
   * and the comment and setup headers */
  for (i = 0; i < 4000 && i < size; i += i < 80 ? 7 : 397) {
    b = g_bytes_new_static (d, i);
    assert_declined (b, "a cut header");
    g_bytes_unref (b);
  }
  b = g_bytes_new_static ("", 0);
  assert_declined (b, "nothing");
  g_bytes_unref (b);

  g_bytes_unref (wide);
  g_bytes_unref (opus);
  g_bytes_unref (vorbis2);
  g_bytes_unref (vorbis);
}

GST_END_TEST;

/* A file cut short: read up to where it ends, or fail as corrupt; never
 * more than it declares, never a hang. */
GST_START_TEST (test_truncated)
{
  const guint64 frames = 3 * 44100;
  GBytes *file = encode_vorbis (44100, frames, 2);

  /* the length comes from the last whole page: a cut file is read */
  fail_unless (spdl_audio_test_check_truncated (file, frames, 2) > 0);
  g_bytes_unref (file);
}

GST_END_TEST;

/* A page in the middle damaged: reading through it fails as corrupt
 * (vorbisfile's hole) rather than giving fewer samples than declared. */
GST_START_TEST (test_damaged_page)
{
  const guint64 frames = 3 * 44100;
  GBytes *file = encode_vorbis (44100, frames, 1);

  spdl_audio_test_check_ogg_hole (file, frames);
  g_bytes_unref (file);
}

GST_END_TEST;

static Suite *
spdlvorbisreader_suite (void)
{
  Suite *s = suite_create ("spdlvorbisreader");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_length_and_seeks);
  tcase_add_test (tc, test_consecutive_reads);
  tcase_add_test (tc, test_equals_vorbisdec);
  tcase_add_test (tc, test_declines);
  tcase_add_test (tc, test_truncated);
  tcase_add_test (tc, test_damaged_page);
  return s;
}

SPDL_CHECK_MAIN (spdlvorbisreader);
