/* GStreamer SPDL: the limit of loading audio clips
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* What AudioLoader's decoding costs with nothing around it: one thread per
 * core, each with its own GstSpdlAudioChain (the chain spdlaudiodecode
 * runs: the file in memory, decodebin, audioconvert, GStreamer's audio
 * resampler), taking files from a shared counter, reading each into
 * memory and decoding one clip of the given length at a random start,
 * exactly that span. No batching, no Python, no elements.
 *
 *   audio-limit-bench --threads 2 --duration 1.0 --rate 16000 LIST
 *
 * LIST: a file with one audio path a line. Prints one JSON line: clips,
 * failures, seconds (wall, from the first file to the last clip), and the
 * mean wall milliseconds a thread spent per file in the chain's open
 * (typefind, plugging, preroll) and read (seek, decode, resample).
 *
 *   audio-limit-bench --spans --threads 2 --rate 16000 LIST
 *
 * --spans: LIST lines are "PATH<TAB>OFFSET<TAB>DURATION" (seconds; a
 * manifest's utterances): each line's span exactly, samples
 * round (OFFSET x rate) .. + round (DURATION x rate), the whole file where
 * DURATION is negative. The JSON line adds "audio_seconds", the seconds
 * of audio decoded.
 */
#include <gst/gst.h>
#include <string.h>

#include "gstspdlaudiochain.h"

typedef struct
{
  gchar **paths;
  guint n_paths;
  gboolean spans;               /* paths are "PATH\tOFFSET\tDURATION" */
  gint64 samples;               /* atomic: output samples decoded */
  gint next;                    /* atomic */
  gint clips;                   /* atomic */
  gint failures;                /* atomic */
  gint64 open_us;               /* atomic: wall time in open, all threads */
  gint64 read_us;               /* atomic: in read (the seek and decode) */
  GstSpdlAudioLimits limits;
  gdouble duration;
  guint64 seed;
  gboolean at_start;            /* clips from sample 0: no seek */
} Work;

static gpointer
run_thread (gpointer user_data)
{
  Work *w = user_data;
  GstSpdlAudioChain *chain = gst_spdl_audio_chain_new (&w->limits);
  guint64 clip = (guint64) (w->duration * w->limits.rate + 0.5);
  guint64 out_size = clip;
  gfloat *out = g_new (gfloat, out_size * w->limits.channels);
  gint i;

  while ((i = g_atomic_int_add (&w->next, 1)) < (gint) w->n_paths) {
    GError *error = NULL;
    gchar *contents;
    gsize size;
    GBytes *bytes;
    guint64 n, start = 0, got = 0, want = clip;
    gint64 t0, t1;
    gboolean opened, whole = FALSE;
    GRand *rand = g_rand_new_with_seed ((guint32) (w->seed * 1000003 + i));
    gchar **span = NULL;
    const gchar *path = w->paths[i];

    if (w->spans) {
      gdouble offset, duration;

      span = g_strsplit (w->paths[i], "\t", 3);
      if (g_strv_length (span) != 3) {
        g_printerr ("%s: not PATH<TAB>OFFSET<TAB>DURATION\n", w->paths[i]);
        g_strfreev (span);
        g_atomic_int_inc (&w->failures);
        g_rand_free (rand);
        continue;
      }
      path = span[0];
      offset = g_ascii_strtod (span[1], NULL);
      duration = g_ascii_strtod (span[2], NULL);
      start = (guint64) (offset * w->limits.rate + 0.5);
      whole = duration < 0;
      want = whole ? 0 : (guint64) (duration * w->limits.rate + 0.5);
    }
    if (!g_file_get_contents (path, &contents, &size, &error)) {
      g_printerr ("%s: %s\n", path, error->message);
      g_strfreev (span);
      g_clear_error (&error);
      g_atomic_int_inc (&w->failures);
      g_rand_free (rand);
      continue;
    }
    bytes = g_bytes_new_take (contents, size);
    t0 = g_get_monotonic_time ();
    opened = gst_spdl_audio_chain_open (chain, bytes, &error);
    t1 = g_get_monotonic_time ();
    g_atomic_pointer_add (&w->open_us, t1 - t0);
    if (opened) {
      gboolean read;

      n = gst_spdl_audio_chain_get_n_samples (chain);
      if (whole)
        want = n > start ? n - start : 0;
      if (!w->spans && n > want && !w->at_start)
        start = (guint64) g_rand_double_range (rand, 0, (gdouble) (n - want));
      if (want > out_size) {
        out_size = want;
        g_free (out);
        out = g_new (gfloat, out_size * w->limits.channels);
      }
      read = gst_spdl_audio_chain_read (chain, start, want, out, want, &got,
          &error);
      g_atomic_pointer_add (&w->read_us, g_get_monotonic_time () - t1);
      if (read && got > 0) {
        g_atomic_int_inc (&w->clips);
        g_atomic_pointer_add (&w->samples, (gint64) got);
      } else {
        g_atomic_int_inc (&w->failures);
      }
    } else {
      g_atomic_int_inc (&w->failures);
    }
    if (error) {
      g_printerr ("%s: %s\n", path, error->message);
      g_clear_error (&error);
    }
    g_strfreev (span);
    gst_spdl_audio_chain_close (chain);
    g_bytes_unref (bytes);
    g_rand_free (rand);
  }
  g_free (out);
  gst_spdl_audio_chain_free (chain);
  return NULL;
}

int
main (int argc, char **argv)
{
  gint threads = (gint) g_get_num_processors (), rate = 16000, channels = 1;
  gint quality = -1;
  gdouble duration = 1.0;
  gint64 seed = 0;
  gboolean at_start = FALSE, inexact = FALSE, spans = FALSE;
  GOptionEntry entries[] = {
    {"threads", 0, 0, G_OPTION_ARG_INT, &threads, "decoding threads", "N"},
    {"duration", 0, 0, G_OPTION_ARG_DOUBLE, &duration, "seconds a clip", "S"},
    {"rate", 0, 0, G_OPTION_ARG_INT, &rate, "output sample rate", "HZ"},
    {"channels", 0, 0, G_OPTION_ARG_INT, &channels, "output channels", "N"},
    {"quality", 0, 0, G_OPTION_ARG_INT, &quality, "resampler quality", "Q"},
    {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "of the clips' starts", "N"},
    {"at-start", 0, 0, G_OPTION_ARG_NONE, &at_start,
        "clips from the start of each file (no seek): what seeking costs", NULL},
    {"inexact", 0, 0, G_OPTION_ARG_NONE, &inexact,
        "as spdlaudiodecode exact=false (Opus from its 80 ms pre-roll)", NULL},
    {"spans", 0, 0, G_OPTION_ARG_NONE, &spans,
        "LIST lines are PATH<TAB>OFFSET<TAB>DURATION: each span exactly", NULL},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("LIST");
  GError *error = NULL;
  gchar *list;
  GThread **pool;
  Work w;
  gint64 t0, t1;
  gint t;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 2
      || threads < 1 || rate < 1 || channels < 1 || duration <= 0) {
    g_printerr ("usage: %s [--threads N] [--duration S] [--rate HZ] LIST%s%s\n",
        argv[0], error ? ": " : "", error ? error->message : "");
    return 2;
  }
  g_option_context_free (ctx);
  if (!g_file_get_contents (argv[1], &list, NULL, &error)) {
    g_printerr ("%s\n", error->message);
    return 1;
  }

  memset (&w, 0, sizeof (w));
  w.paths = g_strsplit (g_strstrip (list), "\n", -1);
  w.n_paths = g_strv_length (w.paths);
  gst_spdl_audio_limits_init (&w.limits);
  w.limits.rate = rate;
  w.limits.channels = channels;
  if (quality >= 0)
    w.limits.quality = quality;
  w.limits.exact = !inexact;
  w.duration = duration;
  w.seed = (guint64) seed;
  w.at_start = at_start;
  w.spans = spans;

  pool = g_new (GThread *, threads);
  t0 = g_get_monotonic_time ();
  for (t = 0; t < threads; t++)
    pool[t] = g_thread_new ("limit", run_thread, &w);
  for (t = 0; t < threads; t++)
    g_thread_join (pool[t]);
  t1 = g_get_monotonic_time ();

  g_print ("{\"clips\": %d, \"failures\": %d, \"seconds\": %.6f, "
      "\"threads\": %d, \"open_ms\": %.3f, \"read_ms\": %.3f, "
      "\"audio_seconds\": %.3f}\n", w.clips,
      w.failures, (t1 - t0) / 1e6, threads,
      w.open_us / 1e3 / MAX (w.clips + w.failures, 1),
      w.read_us / 1e3 / MAX (w.clips, 1), (gdouble) w.samples / rate);
  g_free (pool);
  g_strfreev (w.paths);
  g_free (list);
  return w.failures && !w.clips ? 1 : 0;
}
