/* gst-spdl fuzz target: video clip arithmetic
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* gst_spdl_clip_plan() with parameters and frame times drawn from the
 * input:
 *
 *   byte 0: frames - 1 (mod 64)       byte 1: stride - 1 (mod 8)
 *   byte 2: frame rate (0: native, else 1..255 fps)
 *   byte 3: bits 0-2 clips per video - 1, bit 3 uniform sampling,
 *           bits 4-5 short-videos mode
 *   bytes 4-5: epoch, video index   byte 6: seed
 *   byte 7: end (0: unknown, else last pts + byte / 16 s)
 *   then one byte per frame: its pts step after the one before in
 *   1/64 s (0: two frames at one time), 1024 frames at most
 *
 * Checked: a video with no frame is NO_FRAMES; SHORT only from skip or
 * error; every index in range; within a clip, times never go back but by
 * wrap-around, and a native clip that fits takes every stride-th frame;
 * a time-based clip takes the frame shown at each of its times (its start
 * lies between its first frame's time and the next one's). */
#include <glib.h>
#include <math.h>
#include <stdint.h>

#include "gstspdlclip.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

#define HEADER 8

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GstSpdlClipParams p;
  GstSpdlClipPlanResult res;
  guint n, i, c, k, *indices;
  gdouble *pts, t = 0, end;

  if (size < HEADER)
    return 0;
  gst_spdl_clip_params_init (&p);
  p.frames = data[0] % 64 + 1;
  p.stride = data[1] % 8 + 1;
  p.frame_rate = data[2];
  p.clips_per_video = (data[3] & 7) + 1;
  p.sampling = data[3] & 8 ? GST_SPDL_CLIP_SAMPLING_UNIFORM :
      GST_SPDL_CLIP_SAMPLING_RANDOM;
  p.short_videos = (data[3] >> 4) & 3;
  p.seed = data[6];
  n = MIN (size - HEADER, 1024);
  pts = g_new (gdouble, MAX (n, 1));
  for (i = 0; i < n; i++) {
    t += data[HEADER + i] / 64.0;
    pts[i] = t;
  }
  end = data[7] ? t + data[7] / 16.0 : 0;
  indices = g_new (guint, p.clips_per_video * p.frames);
  res = gst_spdl_clip_plan (&p, pts, n, end, data[4], data[5], indices);
  if (n == 0) {
    g_assert_cmpint (res, ==, GST_SPDL_CLIP_PLAN_NO_FRAMES);
    goto done;
  }
  if (res == GST_SPDL_CLIP_PLAN_SHORT) {
    g_assert_true (p.short_videos == GST_SPDL_SHORT_VIDEOS_SKIP ||
        p.short_videos == GST_SPDL_SHORT_VIDEOS_ERROR);
    goto done;
  }
  g_assert_cmpint (res, ==, GST_SPDL_CLIP_PLAN_OK);
  for (c = 0; c < p.clips_per_video; c++) {
    const guint *clip = indices + c * p.frames;
    gboolean fits = TRUE;

    for (k = 0; k < p.frames; k++) {
      g_assert_cmpuint (clip[k], <, n);
      if (k > 0 && p.short_videos != GST_SPDL_SHORT_VIDEOS_WRAP)
        g_assert_cmpfloat (pts[clip[k]], >=, pts[clip[k - 1]]);
    }
    if (p.frame_rate == 0) {
      fits = clip[0] + (guint64) (p.frames - 1) * p.stride < n;
      for (k = 1; fits && k < p.frames; k++)
        g_assert_cmpuint (clip[k], ==, clip[k - 1] + p.stride);
    } else {
      /* the clip starts at a time s from pts[clip[0]] up to the next
       * frame's; frame k is the last one shown at or before s + k step */
      gdouble step = (gdouble) p.stride / p.frame_rate, eps = 1e-6;
      gdouble lo = pts[clip[0]];
      gdouble hi = clip[0] + 1 < n ? pts[clip[0] + 1] : G_MAXDOUBLE;
      /* only for a clip within the frames (a short video's clip starts
       * at its first frame and repeats or wraps) */
      for (k = 0; lo + (p.frames - 1) * step <= pts[n - 1] &&
          k < p.frames; k++) {
        g_assert_cmpfloat (pts[clip[k]], <, hi + k * step + eps);
        if (clip[k] + 1 < n)
          g_assert_cmpfloat (pts[clip[k] + 1], >, lo + k * step - eps);
      }
    }
  }
done:
  g_free (indices);
  g_free (pts);
  return 0;
}
