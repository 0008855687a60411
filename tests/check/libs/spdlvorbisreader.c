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
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gio/gio.h>
#include <math.h>
#include <string.h>

#include "gstspdlaudioreader.h"
#include "gstspdlerrors.h"
#include "spdlcheckmain.h"

/* A chirp per channel (different in each) with a little deterministic
 * noise: every band busy, so the lapping of blocks matters. */
static gfloat *
make_signal (guint rate, guint64 frames, guint channels)
{
  gfloat *pcm = g_new (gfloat, frames * channels);
  guint32 lcg = 12345;
  guint64 i;
  guint c;

  for (i = 0; i < frames; i++) {
    gdouble t = (gdouble) i / rate;
    for (c = 0; c < channels; c++) {
      gdouble f = 220.0 * (c + 1) * (1.0 + t);
      lcg = lcg * 1664525u + 1013904223u;
      pcm[i * channels + c] = 0.3 * sin (2 * G_PI * f * t) +
          0.05 * ((gdouble) (lcg >> 8) / (1 << 24) - 0.5);
    }
  }
  return pcm;
}

/* Everything @launch ("appsrc name=src ... ! appsink name=sink") gives
 * for @input (pushed as one buffer, then EOS; or, when src is a
 * giostreamsrc, read from memory in pull mode as the audio chain's
 * pipeline does); @first_pts: the first buffer's timestamp
 * (GST_CLOCK_TIME_NONE when none came); @duration: the pipeline's at the
 * end. */
static GBytes *
run_pipeline (const gchar * launch, GstCaps * src_caps, gconstpointer input,
    gsize size, GstClockTime * first_pts, GstClockTime * duration)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (launch, &error);
  GstElement *src, *sink;
  GByteArray *out = g_byte_array_new ();
  GstBuffer *buf;
  GstSample *sample;
  GstBus *bus;
  GstMessage *msg;
  gboolean pull;

  fail_unless (pipeline != NULL, "%s: %s", launch,
      error ? error->message : "?");
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pull = !GST_IS_APP_SRC (src);
  if (pull) {
    GInputStream *stream = g_memory_input_stream_new_from_data (input, size,
        NULL);
    g_object_set (src, "stream", stream, NULL);
    g_object_unref (stream);
  } else if (src_caps) {
    gst_app_src_set_caps (GST_APP_SRC (src), src_caps);
  }
  g_object_set (sink, "sync", FALSE, NULL);
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  if (!pull) {
    buf = gst_buffer_new_memdup (input, size);
    /* encoders and muxers time their output from their input's */
    GST_BUFFER_PTS (buf) = 0;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), buf),
        GST_FLOW_OK);
    gst_app_src_end_of_stream (GST_APP_SRC (src));
  }

  if (first_pts)
    *first_pts = GST_CLOCK_TIME_NONE;
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              30 * GST_SECOND))) {
    GstMapInfo map;

    buf = gst_sample_get_buffer (sample);
    if (first_pts && *first_pts == GST_CLOCK_TIME_NONE)
      *first_pts = GST_BUFFER_PTS (buf);
    fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
    g_byte_array_append (out, map.data, map.size);
    gst_buffer_unmap (buf, &map);
    gst_sample_unref (sample);
  }
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink)), "%s: no EOS",
      launch);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg == NULL, "%s: an error", launch);
  gst_object_unref (bus);
  if (duration) {
    gint64 d = -1;
    fail_unless (gst_element_query_duration (pipeline, GST_FORMAT_TIME, &d));
    *duration = d;
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return g_byte_array_free_to_bytes (out);
}

typedef struct
{
  gfloat *out;                  /* interleaved */
  guint channels;
  guint64 first;                /* of out[0] */
  guint64 want;                 /* frames */
  guint64 got;
  guint runs;
} Collect;

static gboolean
collect (gconstpointer frames, guint64 run_first, gsize n_frames,
    gpointer user_data)
{
  Collect *c = user_data;
  gsize n = MIN (n_frames, c->want - c->got);

  /* runs are consecutive and start where asked */
  fail_unless_equals_uint64 (run_first, c->first + c->got);
  fail_unless (n_frames > 0);
  memcpy (c->out + c->got * c->channels, frames,
      n * c->channels * sizeof (gfloat));
  c->got += n;
  c->runs++;
  return c->got < c->want;
}

/* frames @first .. @first + @want (fewer at the end); g_free() it */
static gfloat *
read_span (GstSpdlAudioReader * reader, guint64 first, guint64 want,
    guint64 * got)
{
  Collect c = { 0, };
  GError *error = NULL;

  c.channels = GST_AUDIO_INFO_CHANNELS (&reader->info);
  c.out = g_new0 (gfloat, MAX (want, 1) * c.channels);
  c.first = first;
  c.want = want;
  fail_unless (gst_spdl_audio_reader_read (reader, first, collect, &c,
          &error), "%s", error ? error->message : "?");
  *got = c.got;
  return c.out;
}

static gdouble
max_diff (const gfloat * a, const gfloat * b, gsize n)
{
  gdouble m = 0;
  gsize i;

  for (i = 0; i < n; i++)
    m = MAX (m, fabs ((gdouble) a[i] - b[i]));
  return m;
}

/* @frames of make_signal() at @rate through @encoder (and its muxer) */
static GBytes *
encode (const gchar * encoder, guint rate, guint64 frames, guint channels)
{
  static const GstAudioChannelPosition three[] = {
    GST_AUDIO_CHANNEL_POSITION_FRONT_LEFT,
    GST_AUDIO_CHANNEL_POSITION_FRONT_RIGHT,
    GST_AUDIO_CHANNEL_POSITION_FRONT_CENTER
  };
  gfloat *pcm = make_signal (rate, frames, channels);
  GstAudioInfo info;
  GstCaps *caps;
  gchar *launch;
  GBytes *file;

  /* positioned (vorbisenc takes no unpositioned channels) */
  gst_audio_info_set_format (&info, GST_AUDIO_FORMAT_F32, rate, channels,
      channels == 3 ? three : NULL);
  caps = gst_audio_info_to_caps (&info);
  launch = g_strdup_printf ("appsrc name=src format=time ! audioconvert ! "
      "%s ! appsink name=sink", encoder);
  file = run_pipeline (launch, caps, pcm, frames * channels * sizeof (gfloat),
      NULL, NULL);
  g_free (launch);
  gst_caps_unref (caps);
  g_free (pcm);
  return file;
}

static GBytes *
encode_vorbis (guint rate, guint64 frames, guint channels)
{
  return encode ("vorbisenc ! oggmux", rate, frames, channels);
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

  ref = run_pipeline ("giostreamsrc name=src ! decodebin ! audioconvert ! "
      "audio/x-raw,format=F32LE,layout=interleaved ! appsink name=sink",
      NULL, g_bytes_get_data (file, NULL), g_bytes_get_size (file), &pts,
      &duration);
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
  GstSpdlAudioReader *reader = gst_spdl_audio_reader_open (file);

  fail_unless (reader != NULL);
  fail_unless_equals_string (gst_spdl_audio_reader_get_name (reader),
      "vorbisfile");
  fail_unless_equals_int (GST_AUDIO_INFO_FORMAT (&reader->info),
      GST_AUDIO_FORMAT_F32);
  fail_unless_equals_int (GST_AUDIO_INFO_RATE (&reader->info), rate);
  fail_unless_equals_int (GST_AUDIO_INFO_CHANNELS (&reader->info), channels);
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
      whole = read_span (reader, 0, frames + 100, &got);
      fail_unless_equals_uint64 (got, frames);
      /* the signal came through: a chirp of amplitude 0.3 */
      fail_unless (max_diff (whole, whole + 1, rate) > 0.01);

      for (i = 0; i < G_N_ELEMENTS (firsts); i++) {
        gfloat *a = read_span (reader, firsts[i], span, &got);
        gfloat *b;

        fail_unless_equals_uint64 (got, span);
        fail_unless (memcmp (a, whole + firsts[i] * channels,
                span * channels * sizeof (gfloat)) == 0,
            "%u Hz, %u channels, from %" G_GUINT64_FORMAT ": %g from the "
            "continuous decode", rate, channels, firsts[i],
            max_diff (a, whole + firsts[i] * channels, span * channels));
        /* the same span again (a seek back): the same samples exactly */
        b = read_span (reader, firsts[i], span, &got);
        fail_unless_equals_uint64 (got, span);
        fail_unless (memcmp (a, b, span * channels * sizeof (gfloat)) == 0,
            "from %" G_GUINT64_FORMAT ": not the same twice", firsts[i]);
        g_free (a);
        g_free (b);
      }

      /* at and past the end: nothing, and no error */
      g_free (read_span (reader, frames, 10, &got));
      fail_unless_equals_uint64 (got, 0);
      g_free (read_span (reader, frames + 5000, 10, &got));
      fail_unless_equals_uint64 (got, 0);
      /* the last frames, not one more */
      {
        gfloat *tail = read_span (reader, frames - 10, 100, &got);
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

  whole = read_span (reader, 0, frames, &got);
  fail_unless_equals_uint64 (got, frames);
  again = read_span (other, 0, frames, &got);
  fail_unless (memcmp (again, whole, frames * 2 * sizeof (gfloat)) == 0);
  /* 0 again, after a seek to 0: as right after opening */
  a = read_span (reader, 0, 1000, &got);
  fail_unless (memcmp (a, whole, 1000 * 2 * sizeof (gfloat)) == 0);
  b = read_span (reader, 1000, 30000, &got);
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

      whole = read_span (reader, 0, frames, &got);
      fail_unless_equals_uint64 (got, frames);
      ref = decode_pipeline (file, rate, channels, &n, &decoded);
      fail_unless_equals_uint64 (n, frames);
      d = max_diff (whole, g_bytes_get_data (ref, NULL), frames * channels);
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
  GstSpdlAudioReader *reader = gst_spdl_audio_reader_open (file);

  fail_unless (reader == NULL || strcmp (gst_spdl_audio_reader_get_name
          (reader), "vorbisfile") != 0, "%s was taken", what);
  gst_spdl_audio_reader_free (reader);
  fail_unless (gst_spdl_vorbis_reader_open (file) == NULL, "%s", what);
}

GST_START_TEST (test_declines)
{
  GBytes *vorbis = encode_vorbis (44100, 44100, 1);
  GBytes *vorbis2 = encode_vorbis (44100, 22050, 1);
  GBytes *opus = encode ("opusenc ! oggmux", 48000, 48000, 1);
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
  gsize size = g_bytes_get_size (file);
  guint cut, taken = 0;

  for (cut = 1; cut < 8; cut++) {
    GBytes *part = g_bytes_new_from_bytes (file, 0, size * cut / 8);
    GstSpdlAudioReader *reader = gst_spdl_audio_reader_open (part);
    Collect c = { 0, };
    GError *error = NULL;
    gboolean ok;

    if (!reader) {
      g_bytes_unref (part);
      continue;
    }
    taken++;
    fail_unless (reader->n_frames < frames);
    c.channels = 2;
    c.want = frames;
    c.out = g_new0 (gfloat, frames * 2);
    ok = gst_spdl_audio_reader_read (reader, 0, collect, &c, &error);
    GST_INFO ("cut at %u/8: %" G_GUINT64_FORMAT " frames declared, %"
        G_GUINT64_FORMAT " read, %s", cut, reader->n_frames, c.got,
        error ? error->message : "no error");
    if (ok) {
      fail_unless_equals_uint64 (c.got, reader->n_frames);
    } else {
      fail_unless (g_error_matches (error, GST_SPDL_DECODE_ERROR,
              GST_SPDL_DECODE_ERROR_CORRUPT));
      g_clear_error (&error);
    }
    /* and a seek into it */
    c.got = 0;
    c.first = reader->n_frames / 2;
    ok = gst_spdl_audio_reader_read (reader, c.first, collect, &c, &error);
    if (ok) {
      fail_unless_equals_uint64 (c.got, reader->n_frames - c.first);
    } else {
      fail_unless (g_error_matches (error, GST_SPDL_DECODE_ERROR,
              GST_SPDL_DECODE_ERROR_CORRUPT));
      g_clear_error (&error);
    }
    g_free (c.out);
    gst_spdl_audio_reader_free (reader);
    g_bytes_unref (part);
  }
  /* the length comes from the last whole page: a cut file is read */
  fail_unless (taken > 0);
  g_bytes_unref (file);
}

GST_END_TEST;

/* A page in the middle damaged: reading through it fails as corrupt
 * (vorbisfile's hole) rather than giving fewer samples than declared. */
GST_START_TEST (test_damaged_page)
{
  const guint64 frames = 3 * 44100;
  GBytes *file = encode_vorbis (44100, frames, 1);
  gsize size;
  guint8 *d = g_bytes_unref_to_data (file, &size);
  GBytes *bad;
  GstSpdlAudioReader *reader;
  Collect c = { 0, };
  GError *error = NULL;
  gsize i;

  /* the page holding the middle loses its capture pattern */
  for (i = size / 2; i + 4 < size && memcmp (d + i, "OggS", 4) != 0; i++);
  fail_unless (i + 4 < size);
  d[i + 1] = 'X';
  bad = g_bytes_new_take (d, size);
  reader = gst_spdl_audio_reader_open (bad);
  fail_unless (reader != NULL);
  fail_unless_equals_uint64 (reader->n_frames, frames);
  c.channels = 1;
  c.want = frames;
  c.out = g_new0 (gfloat, frames);
  fail_if (gst_spdl_audio_reader_read (reader, 0, collect, &c, &error));
  fail_unless (g_error_matches (error, GST_SPDL_DECODE_ERROR,
          GST_SPDL_DECODE_ERROR_CORRUPT));
  fail_unless (strstr (error->message, "hole") != NULL, "%s", error->message);
  fail_unless (c.got < frames);
  g_clear_error (&error);
  g_free (c.out);
  gst_spdl_audio_reader_free (reader);
  g_bytes_unref (bad);
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
