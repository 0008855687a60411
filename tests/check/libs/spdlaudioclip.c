/* gst-spdl: unit tests of audio clip sampling
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

#include "gstspdlaudiochain.h"
#include "gstspdlaudioclip.h"
#include "spdlcheckmain.h"

static void
params (GstSpdlAudioClipParams * p, guint64 clip, guint clips,
    GstSpdlAudioSampling sampling, GstSpdlShortFiles short_files)
{
  gst_spdl_audio_clip_params_init (p);
  p->clip_samples = clip;
  p->clips_per_file = clips;
  p->sampling = sampling;
  p->short_files = short_files;
  p->seed = 7;
}

GST_START_TEST (test_uniform_spans_first_to_last)
{
  GstSpdlAudioClipParams p;
  GstSpdlAudioClip clips[5];

  /* 100 samples, clips of 20: starts 0 .. 80 in 4 steps of 20 */
  params (&p, 20, 5, GST_SPDL_AUDIO_SAMPLING_UNIFORM, GST_SPDL_SHORT_FILES_PAD);
  fail_unless_equals_int (gst_spdl_audio_clip_plan (&p, 100, 0, 3, clips),
      GST_SPDL_AUDIO_CLIP_PLAN_OK);
  fail_unless_equals_uint64 (clips[0].start, 0);
  fail_unless_equals_uint64 (clips[1].start, 20);
  fail_unless_equals_uint64 (clips[2].start, 40);
  fail_unless_equals_uint64 (clips[3].start, 60);
  fail_unless_equals_uint64 (clips[4].start, 80);
  fail_unless_equals_uint64 (clips[4].length, 20);

  /* truncated, as torch.linspace(0, 81, 3).long(): 0, 40, 81 */
  params (&p, 19, 3, GST_SPDL_AUDIO_SAMPLING_UNIFORM, GST_SPDL_SHORT_FILES_PAD);
  gst_spdl_audio_clip_plan (&p, 100, 0, 3, clips);
  fail_unless_equals_uint64 (clips[0].start, 0);
  fail_unless_equals_uint64 (clips[1].start, 40);
  fail_unless_equals_uint64 (clips[2].start, 81);

  /* one clip starts at the first sample; an exact fit too */
  params (&p, 100, 1, GST_SPDL_AUDIO_SAMPLING_UNIFORM, GST_SPDL_SHORT_FILES_PAD);
  gst_spdl_audio_clip_plan (&p, 100, 0, 3, clips);
  fail_unless_equals_uint64 (clips[0].start, 0);
  fail_unless_equals_uint64 (clips[0].length, 100);
}

GST_END_TEST;

GST_START_TEST (test_random_starts_fit_and_depend_on_key_only)
{
  GstSpdlAudioClipParams p;
  GstSpdlAudioClip a[4], b[4];
  guint64 hist[11] = { 0, };
  guint i, c, differ = 0;

  params (&p, 90, 4, GST_SPDL_AUDIO_SAMPLING_RANDOM, GST_SPDL_SHORT_FILES_PAD);
  /* starts 0 .. 10 all drawn, none past the last that fits */
  for (i = 0; i < 500; i++) {
    gst_spdl_audio_clip_plan (&p, 100, 1, i, a);
    for (c = 0; c < 4; c++) {
      fail_unless (a[c].start <= 10);
      fail_unless_equals_uint64 (a[c].length, 90);
      hist[a[c].start]++;
    }
  }
  for (i = 0; i <= 10; i++)
    fail_unless (hist[i] > 100, "start %u drawn %" G_GUINT64_FORMAT
        " times of 2000", i, hist[i]);

  /* the same key, the same starts; another epoch or file, others */
  params (&p, 1000, 4, GST_SPDL_AUDIO_SAMPLING_RANDOM,
      GST_SPDL_SHORT_FILES_PAD);
  gst_spdl_audio_clip_plan (&p, 1000000, 2, 5, a);
  gst_spdl_audio_clip_plan (&p, 1000000, 2, 5, b);
  fail_unless (memcmp (a, b, sizeof (a)) == 0);
  gst_spdl_audio_clip_plan (&p, 1000000, 3, 5, b);
  for (c = 0; c < 4; c++)
    differ += a[c].start != b[c].start;
  fail_unless (differ >= 3);
  differ = 0;
  gst_spdl_audio_clip_plan (&p, 1000000, 2, 6, b);
  for (c = 0; c < 4; c++)
    differ += a[c].start != b[c].start;
  fail_unless (differ >= 3);
  differ = 0;
  p.seed = 8;
  gst_spdl_audio_clip_plan (&p, 1000000, 2, 5, b);
  for (c = 0; c < 4; c++)
    differ += a[c].start != b[c].start;
  fail_unless (differ >= 3);
  /* the clips of a file differ from each other */
  fail_unless (a[0].start != a[1].start || a[1].start != a[2].start);
}

GST_END_TEST;

GST_START_TEST (test_start_sampling)
{
  GstSpdlAudioClipParams p;
  GstSpdlAudioClip clips[2];

  params (&p, 10, 2, GST_SPDL_AUDIO_SAMPLING_START, GST_SPDL_SHORT_FILES_PAD);
  gst_spdl_audio_clip_plan (&p, 1000, 4, 9, clips);
  fail_unless_equals_uint64 (clips[0].start, 0);
  fail_unless_equals_uint64 (clips[1].start, 0);
  fail_unless_equals_uint64 (clips[1].length, 10);
}

GST_END_TEST;

GST_START_TEST (test_short_files)
{
  GstSpdlAudioClipParams p;
  GstSpdlAudioClip clips[3];
  GstSpdlShortFiles kept[] = { GST_SPDL_SHORT_FILES_PAD,
    GST_SPDL_SHORT_FILES_REPEAT
  };
  GstSpdlAudioSampling sampling;
  guint i, c;

  for (sampling = GST_SPDL_AUDIO_SAMPLING_RANDOM;
      sampling <= GST_SPDL_AUDIO_SAMPLING_START; sampling++) {
    for (i = 0; i < G_N_ELEMENTS (kept); i++) {
      params (&p, 16000, 3, sampling, kept[i]);
      fail_unless_equals_int (gst_spdl_audio_clip_plan (&p, 15999, 0, 1,
              clips), GST_SPDL_AUDIO_CLIP_PLAN_OK);
      for (c = 0; c < 3; c++) {
        fail_unless_equals_uint64 (clips[c].start, 0);
        fail_unless_equals_uint64 (clips[c].length, 15999);
      }
    }
    params (&p, 16000, 3, sampling, GST_SPDL_SHORT_FILES_SKIP);
    fail_unless_equals_int (gst_spdl_audio_clip_plan (&p, 15999, 0, 1, clips),
        GST_SPDL_AUDIO_CLIP_PLAN_SHORT);
    params (&p, 16000, 3, sampling, GST_SPDL_SHORT_FILES_ERROR);
    fail_unless_equals_int (gst_spdl_audio_clip_plan (&p, 15999, 0, 1, clips),
        GST_SPDL_AUDIO_CLIP_PLAN_SHORT);
    /* exactly one clip long is not short */
    fail_unless_equals_int (gst_spdl_audio_clip_plan (&p, 16000, 0, 1, clips),
        GST_SPDL_AUDIO_CLIP_PLAN_OK);
    fail_unless_equals_int (gst_spdl_audio_clip_plan (&p, 0, 0, 1, clips),
        GST_SPDL_AUDIO_CLIP_PLAN_EMPTY);
  }
}

GST_END_TEST;

GST_START_TEST (test_whole_files)
{
  GstSpdlAudioClipParams p;
  GstSpdlAudioClip clips[1];

  params (&p, 0, 4, GST_SPDL_AUDIO_SAMPLING_RANDOM, GST_SPDL_SHORT_FILES_SKIP);
  fail_unless_equals_int (gst_spdl_audio_clip_count (&p), 1);
  fail_unless_equals_int (gst_spdl_audio_clip_plan (&p, 12345, 0, 1, clips),
      GST_SPDL_AUDIO_CLIP_PLAN_OK);
  fail_unless_equals_uint64 (clips[0].start, 0);
  fail_unless_equals_uint64 (clips[0].length, 12345);
  fail_unless_equals_int (gst_spdl_audio_clip_plan (&p, 0, 0, 1, clips),
      GST_SPDL_AUDIO_CLIP_PLAN_EMPTY);
}

GST_END_TEST;

GST_START_TEST (test_samples_from_time)
{
  fail_unless_equals_uint64 (gst_spdl_audio_samples_from_ns (GST_SECOND,
          16000), 16000);
  /* 1/44100 s is not a whole number of ns: rounded, not truncated */
  fail_unless_equals_uint64 (gst_spdl_audio_samples_from_ns
      (gst_util_uint64_scale_int (12345, GST_SECOND, 44100), 44100), 12345);
  /* ten hours at 48 kHz */
  fail_unless_equals_uint64 (gst_spdl_audio_samples_from_ns (36000 *
          GST_SECOND, 48000), G_GUINT64_CONSTANT (1728000000));
}

GST_END_TEST;

static gpointer
make_and_free_chain (gpointer start)
{
  /* all threads at once: the first chain of a process sets up its debug
   * category while the others wait for it */
  while (!g_atomic_int_get ((gint *) start))
    g_thread_yield ();
  gst_spdl_audio_chain_free (gst_spdl_audio_chain_new (NULL));
  return NULL;
}

/* Decoding threads make their chains at the same time: none waits for
 * ever on the one-time set-up (a check timeout fails this test). */
GST_START_TEST (test_chains_made_on_many_threads_at_once)
{
  GThread *threads[8];
  gint start = 0;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("chain", make_and_free_chain, &start);
  g_atomic_int_set (&start, 1);
  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
}

GST_END_TEST;

static Suite *
spdlaudioclip_suite (void)
{
  Suite *s = suite_create ("spdlaudioclip");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_uniform_spans_first_to_last);
  tcase_add_test (tc, test_random_starts_fit_and_depend_on_key_only);
  tcase_add_test (tc, test_start_sampling);
  tcase_add_test (tc, test_short_files);
  tcase_add_test (tc, test_whole_files);
  tcase_add_test (tc, test_samples_from_time);
  tcase_add_test (tc, test_chains_made_on_many_threads_at_once);
  return s;
}

SPDL_CHECK_MAIN (spdlaudioclip);
