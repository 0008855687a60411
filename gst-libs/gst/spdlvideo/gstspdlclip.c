/* GStreamer SPDL: which frames make a clip
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Clip sampling is arithmetic on a video's frame times only: no decoding,
 * no GStreamer, so that it can be tested exhaustively and a clip's frames
 * depend on (seed, epoch, video) alone. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlclip.h"
#include "gstspdlrandom.h"

#include <math.h>
#include <string.h>

/* keyed stream of clip starts, apart from the shuffle's and the crops' */
#define CLIP_STREAM G_GUINT64_CONSTANT (0x434c495000000000)

/* times computed as start + k / rate land on a frame's pts up to rounding:
 * far below any frame interval */
#define TIME_EPSILON 1e-6

void
gst_spdl_clip_params_init (GstSpdlClipParams * params)
{
  memset (params, 0, sizeof (*params));
  params->frames = 16;
  params->stride = 1;
  params->clips_per_video = 1;
  params->sampling = GST_SPDL_CLIP_SAMPLING_RANDOM;
  params->short_videos = GST_SPDL_SHORT_VIDEOS_REPEAT_LAST;
}

guint
gst_spdl_clip_frame_at (const gdouble * pts, guint n, gdouble t)
{
  guint lo = 0, hi = n;

  /* the first index whose pts is after t, minus one */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (pts[mid] <= t + TIME_EPSILON)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > 0 ? lo - 1 : 0;
}

/* the start of clip @c of @n_clips from the starts lo .. hi (both fit) */
static gdouble
uniform_start (gdouble lo, gdouble hi, guint c, guint n_clips)
{
  if (n_clips <= 1)
    return lo;
  return lo + (hi - lo) * c / (n_clips - 1);
}

static void
plan_native (const GstSpdlClipParams * p, guint n, gboolean short_video,
    GstSpdlRng * rng, guint * indices)
{
  guint64 span = (guint64) (p->frames - 1) * p->stride + 1;
  guint c, k;

  for (c = 0; c < p->clips_per_video; c++) {
    guint64 start = 0;
    guint *out = indices + (gsize) c * p->frames;

    if (!short_video) {
      guint64 last = n - span;  /* the last start that fits */
      if (p->sampling == GST_SPDL_CLIP_SAMPLING_RANDOM)
        start = gst_spdl_rng_below (rng, last + 1);
      else                      /* torch.linspace(...).int(): truncated */
        start = (guint64) uniform_start (0, last, c, p->clips_per_video);
    }
    for (k = 0; k < p->frames; k++) {
      guint64 i = start + (guint64) k * p->stride;
      if (i >= n)
        i = p->short_videos == GST_SPDL_SHORT_VIDEOS_WRAP ? i % n : n - 1;
      out[k] = (guint) i;
    }
  }
}

static void
plan_timed (const GstSpdlClipParams * p, const gdouble * pts, guint n,
    gdouble end, gboolean short_video, GstSpdlRng * rng, guint * indices)
{
  gdouble step = p->stride / p->frame_rate;
  gdouble span = (p->frames - 1) * step;
  gdouble first = pts[0], length = end - first;
  guint c, k;

  for (c = 0; c < p->clips_per_video; c++) {
    gdouble start = first;
    guint *out = indices + (gsize) c * p->frames;

    if (!short_video) {
      gdouble last = end - span;        /* the clip's last time is < end */
      if (p->sampling == GST_SPDL_CLIP_SAMPLING_RANDOM)
        start = gst_spdl_rng_uniform (rng, first, last);
      else
        start = uniform_start (first, last, c, p->clips_per_video);
    }
    for (k = 0; k < p->frames; k++) {
      gdouble t = start + k * step;
      /* a clip that fits ends before the end but for the last uniform
       * one, which ends at it (the last frame, not the first: wrapping is
       * for short videos) */
      if (short_video && t >= end &&
          p->short_videos == GST_SPDL_SHORT_VIDEOS_WRAP && length > 0)
        t = first + fmod (t - first, length);
      /* past the end: the last frame (repeat-last) */
      out[k] = gst_spdl_clip_frame_at (pts, n, t);
    }
  }
}

GstSpdlClipPlanResult
gst_spdl_clip_plan (const GstSpdlClipParams * p, const gdouble * pts,
    guint n, gdouble end, guint epoch, guint64 video_index, guint * indices)
{
  GstSpdlRng rng;
  gboolean short_video;

  g_return_val_if_fail (p->frames > 0 && p->stride > 0, 0);
  if (n == 0)
    return GST_SPDL_CLIP_PLAN_NO_FRAMES;
  gst_spdl_rng_init (&rng, p->seed, CLIP_STREAM | epoch, video_index);
  if (p->frame_rate > 0) {
    gdouble span = (p->frames - 1) * (p->stride / p->frame_rate);

    if (!(end > pts[n - 1])) {
      /* unknown: the last frame lasts as long as the one before it */
      end = pts[n - 1] + (n > 1 ? pts[n - 1] - pts[n - 2] :
          1.0 / p->frame_rate);
    }
    short_video = !(pts[0] + span < end);
  } else {
    short_video = (guint64) (p->frames - 1) * p->stride + 1 > n;
  }
  if (short_video && (p->short_videos == GST_SPDL_SHORT_VIDEOS_SKIP ||
          p->short_videos == GST_SPDL_SHORT_VIDEOS_ERROR))
    return GST_SPDL_CLIP_PLAN_SHORT;
  if (p->frame_rate > 0)
    plan_timed (p, pts, n, end, short_video, &rng, indices);
  else
    plan_native (p, n, short_video, &rng, indices);
  return GST_SPDL_CLIP_PLAN_OK;
}
