/* gst-spdl test helpers: the audio readers' tests
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

#include "gstspdlerrors.h"
#include "spdlaudioreadertest.h"

GBytes *
spdl_audio_test_run_pipeline (const gchar * launch, GstCaps * src_caps,
    gconstpointer input, gsize size, GstClockTime * first_pts,
    GstClockTime * duration, GstAudioInfo * info)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (launch, &error);
  GstElement *src, *sink;
  GByteArray *out = g_byte_array_new ();
  GstBuffer *buf;
  GstSample *sample;
  GstBus *bus;
  GstMessage *msg;
  gboolean push;

  fail_unless (pipeline != NULL, "%s: %s", launch,
      error ? error->message : "?");
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_unless (sink != NULL, "%s: no sink", launch);
  push = src && GST_IS_APP_SRC (src);
  if (push) {
    if (src_caps)
      gst_app_src_set_caps (GST_APP_SRC (src), src_caps);
  } else if (src) {
    GInputStream *stream = g_memory_input_stream_new_from_data (input, size,
        NULL);
    g_object_set (src, "stream", stream, NULL);
    g_object_unref (stream);
  }
  g_object_set (sink, "sync", FALSE, NULL);
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  if (push) {
    buf = gst_buffer_new_memdup (input, size);
    /* encoders and muxers time their output from their input's */
    GST_BUFFER_PTS (buf) = 0;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), buf),
        GST_FLOW_OK);
    gst_app_src_end_of_stream (GST_APP_SRC (src));
  }

  if (first_pts)
    *first_pts = GST_CLOCK_TIME_NONE;
  if (info)
    gst_audio_info_init (info);
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              30 * GST_SECOND))) {
    GstMapInfo map;

    buf = gst_sample_get_buffer (sample);
    if (first_pts && *first_pts == GST_CLOCK_TIME_NONE)
      *first_pts = GST_BUFFER_PTS (buf);
    if (info) {
      fail_unless (gst_audio_info_from_caps (info,
              gst_sample_get_caps (sample)));
      fail_unless_equals_uint64 (gst_util_uint64_scale_round (GST_BUFFER_PTS
              (buf), info->rate, GST_SECOND), out->len / info->bpf);
    }
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
  if (src)
    gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return g_byte_array_free_to_bytes (out);
}

gfloat *
spdl_audio_test_chirp (guint rate, guint64 frames, guint channels)
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

GBytes *
spdl_audio_test_encode (const gchar * encoder, guint rate, guint64 frames,
    guint channels)
{
  static const GstAudioChannelPosition three[] = {
    GST_AUDIO_CHANNEL_POSITION_FRONT_LEFT,
    GST_AUDIO_CHANNEL_POSITION_FRONT_RIGHT,
    GST_AUDIO_CHANNEL_POSITION_FRONT_CENTER
  };
  gfloat *pcm = spdl_audio_test_chirp (rate, frames, channels);
  GstAudioInfo info;
  GstCaps *caps;
  gchar *launch;
  GBytes *file;

  gst_audio_info_set_format (&info, GST_AUDIO_FORMAT_F32, rate, channels,
      channels == 3 ? three : NULL);
  caps = gst_audio_info_to_caps (&info);
  launch = g_strdup_printf ("appsrc name=src format=time ! audioconvert ! "
      "%s ! appsink name=sink", encoder);
  file = spdl_audio_test_run_pipeline (launch, caps, pcm,
      frames * channels * sizeof (gfloat), NULL, NULL, NULL);
  g_free (launch);
  gst_caps_unref (caps);
  g_free (pcm);
  return file;
}

void
spdl_audio_test_check_reader (GstSpdlAudioReader * reader,
    const gchar * name, GstAudioFormat format, guint rate, guint channels)
{
  fail_unless (reader != NULL, "not taken (by %s)", name);
  fail_unless_equals_string (gst_spdl_audio_reader_get_name (reader), name);
  fail_unless_equals_int (GST_AUDIO_INFO_FORMAT (&reader->info), format);
  fail_unless_equals_int (GST_AUDIO_INFO_RATE (&reader->info), rate);
  fail_unless_equals_int (GST_AUDIO_INFO_CHANNELS (&reader->info), channels);
  fail_unless_equals_int (GST_AUDIO_INFO_LAYOUT (&reader->info),
      GST_AUDIO_LAYOUT_INTERLEAVED);
}

/* Checks are noted here and asserted once the read returned: a failure
 * inside the reader's callback would leave the reader mid-decode. */
static gboolean
collect (gconstpointer frames, guint64 first, gsize n_frames,
    gpointer user_data)
{
  SpdlAudioTestRuns *runs = user_data;

  if (first != runs->next && !runs->gap) {
    runs->gap = TRUE;
    runs->gap_want = runs->next;
    runs->gap_got = first;
  }
  if (n_frames == 0)
    runs->empty = TRUE;
  if ((guintptr) frames % runs->align != 0)
    runs->misaligned = TRUE;
  runs->runs++;
  runs->next = first + n_frames;
  g_byte_array_append (runs->frames, frames, n_frames * runs->bpf);
  return runs->limit == 0 || runs->frames->len / runs->bpf < runs->limit;
}

gboolean
spdl_audio_test_read (GstSpdlAudioReader * reader, guint64 first,
    guint64 limit, SpdlAudioTestRuns * runs, GError ** error)
{
  gboolean ok;

  memset (runs, 0, sizeof (*runs));
  runs->frames = g_byte_array_new ();
  runs->bpf = GST_AUDIO_INFO_BPF (&reader->info);
  runs->align = GST_AUDIO_INFO_WIDTH (&reader->info) / 8;
  if (runs->align == 0 || (runs->align & (runs->align - 1)) != 0)
    runs->align = 1;            /* packed 24-bit */
  runs->next = first;
  runs->limit = limit;
  ok = gst_spdl_audio_reader_read (reader, first, collect, runs, error);
  fail_if (runs->gap, "a run from %" G_GUINT64_FORMAT ", not %"
      G_GUINT64_FORMAT, runs->gap_got, runs->gap_want);
  fail_if (runs->empty, "an empty run");
  fail_if (runs->misaligned, "a run not aligned for its samples");
  return ok;
}

guint64
spdl_audio_test_runs_n_frames (const SpdlAudioTestRuns * runs)
{
  return runs->frames->len / runs->bpf;
}

void
spdl_audio_test_runs_clear (SpdlAudioTestRuns * runs)
{
  if (runs->frames)
    g_byte_array_unref (runs->frames);
  runs->frames = NULL;
}

gfloat *
spdl_audio_test_read_span (GstSpdlAudioReader * reader, guint64 first,
    guint64 want, guint64 * got)
{
  SpdlAudioTestRuns runs;
  GError *error = NULL;
  gsize bytes;

  fail_unless_equals_int (GST_AUDIO_INFO_FORMAT (&reader->info),
      GST_AUDIO_FORMAT_F32);
  fail_unless (want > 0);
  fail_unless (spdl_audio_test_read (reader, first, want, &runs, &error),
      "%s", error ? error->message : "?");
  *got = MIN (spdl_audio_test_runs_n_frames (&runs), want);
  /* never empty: a span at the end is still a buffer to free */
  bytes = MAX (*got, 1) * runs.bpf;
  g_byte_array_set_size (runs.frames, bytes);
  return (gfloat *) g_byte_array_free (g_steal_pointer (&runs.frames),
      FALSE);
}

gdouble
spdl_audio_test_max_diff (const gfloat * a, const gfloat * b, gsize n)
{
  gdouble m = 0;
  gsize i;

  for (i = 0; i < n; i++)
    m = MAX (m, fabs ((gdouble) a[i] - b[i]));
  return m;
}

/* A read of @reader's from @from (stopping after @limit frames) to the
 * end of what it declares, or failing as corrupt */
static void
check_read_to_end_or_corrupt (GstSpdlAudioReader * reader, guint64 from,
    guint64 limit, const gchar * what)
{
  SpdlAudioTestRuns runs;
  GError *error = NULL;

  if (spdl_audio_test_read (reader, from, limit, &runs, &error)) {
    fail_unless_equals_uint64 (spdl_audio_test_runs_n_frames (&runs),
        reader->n_frames - from);
  } else {
    fail_unless (g_error_matches (error, GST_SPDL_DECODE_ERROR,
            GST_SPDL_DECODE_ERROR_CORRUPT), "%s", error->message);
    g_clear_error (&error);
  }
  GST_INFO ("%s, from %" G_GUINT64_FORMAT ": %" G_GUINT64_FORMAT
      " frames declared, %" G_GUINT64_FORMAT " read", what, from,
      reader->n_frames, spdl_audio_test_runs_n_frames (&runs));
  spdl_audio_test_runs_clear (&runs);
}

guint
spdl_audio_test_check_truncated (GBytes * file, guint64 frames,
    guint channels)
{
  gsize size = g_bytes_get_size (file);
  guint cut, taken = 0;

  for (cut = 1; cut < 8; cut++) {
    GBytes *part = g_bytes_new_from_bytes (file, 0, size * cut / 8);
    GstSpdlAudioReader *reader = gst_spdl_audio_reader_open (part, NULL);
    gchar *what;

    if (!reader) {
      g_bytes_unref (part);
      continue;
    }
    taken++;
    fail_unless (reader->n_frames < frames);
    fail_unless_equals_int (GST_AUDIO_INFO_CHANNELS (&reader->info),
        channels);
    what = g_strdup_printf ("cut at %u/8", cut);
    check_read_to_end_or_corrupt (reader, 0, frames, what);
    /* and a seek into it */
    check_read_to_end_or_corrupt (reader, reader->n_frames / 2, frames,
        what);
    g_free (what);
    gst_spdl_audio_reader_free (reader);
    g_bytes_unref (part);
  }
  return taken;
}

void
spdl_audio_test_check_ogg_hole (GBytes * file, guint64 frames)
{
  gsize size;
  guint8 *d = g_memdup2 (g_bytes_get_data (file, &size),
      g_bytes_get_size (file));
  GBytes *bad;
  GstSpdlAudioReader *reader;
  SpdlAudioTestRuns runs;
  GError *error = NULL;
  gsize i;

  /* the page holding the middle loses its capture pattern */
  for (i = size / 2; i + 4 < size && memcmp (d + i, "OggS", 4) != 0; i++);
  fail_unless (i + 4 < size);
  d[i + 1] = 'X';
  bad = g_bytes_new_take (d, size);
  reader = gst_spdl_audio_reader_open (bad, NULL);
  fail_unless (reader != NULL);
  fail_unless_equals_uint64 (reader->n_frames, frames);
  fail_unless_equals_int (GST_AUDIO_INFO_CHANNELS (&reader->info), 1);
  fail_if (spdl_audio_test_read (reader, 0, frames, &runs, &error));
  fail_unless (g_error_matches (error, GST_SPDL_DECODE_ERROR,
          GST_SPDL_DECODE_ERROR_CORRUPT));
  fail_unless (strstr (error->message, "hole") != NULL, "%s", error->message);
  fail_unless (spdl_audio_test_runs_n_frames (&runs) < frames);
  g_clear_error (&error);
  spdl_audio_test_runs_clear (&runs);
  gst_spdl_audio_reader_free (reader);
  g_bytes_unref (bad);
}
