/* GStreamer SPDL plugin: unit tests of clip sampling
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

#include "gstspdlclip.h"
#include "spdlcheckmain.h"

static gdouble *
regular_pts (guint n, gdouble rate)
{
  gdouble *pts = g_new (gdouble, MAX (n, 1));
  guint i;

  for (i = 0; i < n; i++)
    pts[i] = i / rate;
  return pts;
}

/* the brute-force answer: the last frame whose pts is at or before t */
static guint
shown_at (const gdouble * pts, guint n, gdouble t)
{
  guint i, best = 0;

  for (i = 0; i < n; i++)
    if (pts[i] <= t + 1e-6)
      best = i;
  return best;
}

/* Every native-rate case up to 40 frames: the frames are in range,
 * stride apart, start where sampling says, and short videos follow their
 * policy. */
GST_START_TEST (test_native_exhaustive)
{
  GstSpdlClipParams p;
  guint n, frames, stride, clips, sampling, policy, epoch;
  gdouble *pts = regular_pts (40, 30.0);
  guint indices[3 * 6];

  gst_spdl_clip_params_init (&p);
  for (n = 1; n <= 40; n++)
    for (frames = 1; frames <= 6; frames++)
      for (stride = 1; stride <= 3; stride++)
        for (clips = 1; clips <= 3; clips++)
          for (sampling = 0; sampling < 2; sampling++)
            for (policy = 0; policy < 4; policy++)
              for (epoch = 0; epoch < 2; epoch++) {
                guint span = (frames - 1) * stride + 1, c, k;
                GstSpdlClipPlanResult r;

                p.frames = frames;
                p.stride = stride;
                p.clips_per_video = clips;
                p.sampling = sampling;
                p.short_videos = policy;
                memset (indices, 0xff, sizeof (indices));
                r = gst_spdl_clip_plan (&p, pts, n, 0, epoch, n, indices);
                if (span > n && policy >= GST_SPDL_SHORT_VIDEOS_SKIP) {
                  fail_unless_equals_int (r, GST_SPDL_CLIP_PLAN_SHORT);
                  continue;
                }
                fail_unless_equals_int (r, GST_SPDL_CLIP_PLAN_OK);
                for (c = 0; c < clips; c++) {
                  guint *clip = indices + c * frames;
                  for (k = 0; k < frames; k++)
                    fail_unless (clip[k] < n);
                  if (span > n) {
                    for (k = 0; k < frames; k++)
                      fail_unless_equals_int (clip[k],
                          policy == GST_SPDL_SHORT_VIDEOS_WRAP ?
                          (k * stride) % n : MIN (k * stride, n - 1));
                    continue;
                  }
                  for (k = 1; k < frames; k++)
                    fail_unless_equals_int (clip[k], clip[k - 1] + stride);
                  fail_unless (clip[0] <= n - span);
                  if (sampling == GST_SPDL_CLIP_SAMPLING_UNIFORM) {
                    if (c == 0)
                      fail_unless_equals_int (clip[0], 0);
                    if (c == clips - 1 && clips > 1)
                      fail_unless_equals_int (clip[0], n - span);
                  }
                }
              }
  g_free (pts);
}

GST_END_TEST;

/* Random starts depend on (seed, epoch, video) only, cover every start
 * that fits, and differ between epochs and videos. */
GST_START_TEST (test_random_starts)
{
  GstSpdlClipParams p;
  gdouble *pts = regular_pts (100, 25.0);
  guint seen[100] = { 0 };
  guint a[4], b[4], epoch, differ = 0, video_differ = 0;

  gst_spdl_clip_params_init (&p);
  p.frames = 4;
  p.stride = 3;                 /* span 10: starts 0 .. 90 */
  for (epoch = 0; epoch < 3000; epoch++) {
    fail_unless_equals_int (gst_spdl_clip_plan (&p, pts, 100, 0, epoch, 7,
            a), GST_SPDL_CLIP_PLAN_OK);
    fail_unless_equals_int (gst_spdl_clip_plan (&p, pts, 100, 0, epoch, 7,
            b), GST_SPDL_CLIP_PLAN_OK);
    fail_unless (memcmp (a, b, sizeof (a)) == 0);
    fail_unless (a[0] <= 90);
    seen[a[0]]++;
    if (epoch > 0) {
      guint c[4];
      gst_spdl_clip_plan (&p, pts, 100, 0, epoch - 1, 7, c);
      differ += c[0] != a[0];
    }
    gst_spdl_clip_plan (&p, pts, 100, 0, epoch, 8, b);
    video_differ += b[0] != a[0];
  }
  for (epoch = 0; epoch <= 90; epoch++)
    fail_unless (seen[epoch] > 5, "start %u drawn %u times", epoch,
        seen[epoch]);
  for (epoch = 91; epoch < 100; epoch++)
    fail_unless_equals_int (seen[epoch], 0);
  fail_unless (differ > 2900);
  fail_unless (video_differ > 2900);
  /* another seed, other clips */
  p.seed = 1;
  gst_spdl_clip_plan (&p, pts, 100, 0, 0, 7, b);
  p.seed = 0;
  gst_spdl_clip_plan (&p, pts, 100, 0, 0, 7, a);
  fail_unless (a[0] != b[0] || a[1] != b[1]);
  g_free (pts);
}

GST_END_TEST;

/* Time-based clips last the same at 60 and 24 fps: frame k is the one
 * shown at start + k * stride / rate. */
GST_START_TEST (test_timed_rates)
{
  GstSpdlClipParams p;
  gdouble *fast = regular_pts (600, 60.0), *slow = regular_pts (240, 24.0);
  guint a[2 * 8], b[2 * 8], k;

  gst_spdl_clip_params_init (&p);
  p.frames = 8;
  p.frame_rate = 4.0;
  p.clips_per_video = 2;
  p.sampling = GST_SPDL_CLIP_SAMPLING_UNIFORM;
  /* 10 s each; clips span 7 / 4 s: starts 0 and 10 - 1.75 */
  fail_unless_equals_int (gst_spdl_clip_plan (&p, fast, 600, 10.0, 0, 0, a),
      GST_SPDL_CLIP_PLAN_OK);
  fail_unless_equals_int (gst_spdl_clip_plan (&p, slow, 240, 10.0, 0, 0, b),
      GST_SPDL_CLIP_PLAN_OK);
  for (k = 0; k < 8; k++) {
    fail_unless_equals_int (a[k], 15 * k);
    fail_unless_equals_int (b[k], 6 * k);
    fail_unless_equals_float (fast[a[k]], slow[b[k]]);
    /* the last clip ends at the end: its last frame is the last one */
    fail_unless_equals_int (a[8 + k], shown_at (fast, 600, 8.25 + k * 0.25));
    fail_unless_equals_int (b[8 + k], shown_at (slow, 240, 8.25 + k * 0.25));
  }
  fail_unless_equals_int (a[15], 599);
  fail_unless_equals_int (b[15], 239);
  /* stride multiplies the step */
  p.stride = 2;
  p.clips_per_video = 1;
  gst_spdl_clip_plan (&p, fast, 600, 10.0, 0, 0, a);
  for (k = 0; k < 8; k++)
    fail_unless_equals_int (a[k], 30 * k);
  g_free (fast);
  g_free (slow);
}

GST_END_TEST;

/* A variable-frame-rate video: each frame is the one shown at its time,
 * whatever the gaps; random starts keep the clip inside the video. */
GST_START_TEST (test_timed_vfr)
{
  GstSpdlClipParams p;
  gdouble pts[200];
  guint idx[3 * 10], i, epoch, c, k;
  gdouble t = 0.5;              /* a video that starts late */

  for (i = 0; i < 200; i++) {
    pts[i] = t;
    /* 30 fps, then 10 fps, then 60 fps with a hole */
    t += i < 60 ? 1.0 / 30 : i < 120 ? 0.1 : i == 150 ? 0.7 : 1.0 / 60;
  }
  gst_spdl_clip_params_init (&p);
  p.frames = 10;
  p.frame_rate = 8.0;
  p.clips_per_video = 3;
  for (epoch = 0; epoch < 200; epoch++) {
    fail_unless_equals_int (gst_spdl_clip_plan (&p, pts, 200, 0, epoch, 3,
            idx), GST_SPDL_CLIP_PLAN_OK);
    for (c = 0; c < 3; c++) {
      guint *clip = idx + c * 10;
      /* recover the start: the frame at it is clip[0] */
      fail_unless (pts[clip[0]] >= 0.5);
      for (k = 1; k < 10; k++) {
        fail_unless (clip[k] >= clip[k - 1]);
        /* the pts of frame k is within one frame interval before
         * start + k / 8 and the next frame is after it */
        fail_unless (clip[k] == 199 || pts[clip[k] + 1] > pts[clip[0]] +
            k / 8.0 - 1e-6);
      }
    }
  }
  /* uniform: exact times against brute force */
  p.sampling = GST_SPDL_CLIP_SAMPLING_UNIFORM;
  gst_spdl_clip_plan (&p, pts, 200, 0, 0, 3, idx);
  {
    /* the estimated end: the last frame lasts as long as the previous */
    gdouble end = pts[199] + (pts[199] - pts[198]);
    gdouble last = end - 9 / 8.0;
    for (c = 0; c < 3; c++)
      for (k = 0; k < 10; k++)
        fail_unless_equals_int (idx[c * 10 + k], shown_at (pts, 200,
                0.5 + (last - 0.5) * c / 2 + k / 8.0));
  }
  fail_unless_equals_int (gst_spdl_clip_frame_at (pts, 200, 0.0), 0);
  fail_unless_equals_int (gst_spdl_clip_frame_at (pts, 200, 1e9), 199);
}

GST_END_TEST;

/* Videos shorter than a time-based clip. */
GST_START_TEST (test_timed_short)
{
  GstSpdlClipParams p;
  gdouble *pts = regular_pts (10, 10.0);      /* 1 s */
  guint idx[8], k;

  gst_spdl_clip_params_init (&p);
  p.frames = 8;
  p.frame_rate = 5.0;           /* 1.4 s */
  fail_unless_equals_int (gst_spdl_clip_plan (&p, pts, 10, 1.0, 0, 0, idx),
      GST_SPDL_CLIP_PLAN_OK);
  for (k = 0; k < 8; k++)
    fail_unless_equals_int (idx[k], MIN (2 * k, 9));
  p.short_videos = GST_SPDL_SHORT_VIDEOS_WRAP;
  gst_spdl_clip_plan (&p, pts, 10, 1.0, 0, 0, idx);
  for (k = 0; k < 8; k++)
    fail_unless_equals_int (idx[k], (2 * k) % 10);
  p.short_videos = GST_SPDL_SHORT_VIDEOS_SKIP;
  fail_unless_equals_int (gst_spdl_clip_plan (&p, pts, 10, 1.0, 0, 0, idx),
      GST_SPDL_CLIP_PLAN_SHORT);
  p.short_videos = GST_SPDL_SHORT_VIDEOS_ERROR;
  fail_unless_equals_int (gst_spdl_clip_plan (&p, pts, 10, 1.0, 0, 0, idx),
      GST_SPDL_CLIP_PLAN_SHORT);
  /* exactly as long: the last time would be the end, not shown */
  p.frames = 6;
  fail_unless_equals_int (gst_spdl_clip_plan (&p, pts, 10, 1.0, 0, 0, idx),
      GST_SPDL_CLIP_PLAN_SHORT);
  /* a single frame of unknown duration lasts 1 / rate */
  p.frames = 1;
  fail_unless_equals_int (gst_spdl_clip_plan (&p, pts, 1, 0, 0, 0, idx),
      GST_SPDL_CLIP_PLAN_OK);
  fail_unless_equals_int (idx[0], 0);
  fail_unless_equals_int (gst_spdl_clip_plan (&p, pts, 0, 0, 0, 0, idx),
      GST_SPDL_CLIP_PLAN_NO_FRAMES);
  g_free (pts);
}

GST_END_TEST;

static Suite *
spdlclip_suite (void)
{
  Suite *s = suite_create ("spdlclip");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_native_exhaustive);
  tcase_add_test (tc, test_random_starts);
  tcase_add_test (tc, test_timed_rates);
  tcase_add_test (tc, test_timed_vfr);
  tcase_add_test (tc, test_timed_short);
  return s;
}

SPDL_CHECK_MAIN (spdlclip);
