/* GStreamer SPDL: which frames make a clip
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_CLIP_H__
#define __GST_SPDL_CLIP_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  GST_SPDL_CLIP_SAMPLING_RANDOM,
  GST_SPDL_CLIP_SAMPLING_UNIFORM,
} GstSpdlClipSampling;

/* What a video shorter than one clip gives. */
typedef enum
{
  GST_SPDL_SHORT_VIDEOS_REPEAT_LAST,    /* the last frame again */
  GST_SPDL_SHORT_VIDEOS_WRAP,   /* from the first frame again */
  GST_SPDL_SHORT_VIDEOS_SKIP,   /* no clip (a skipped sample) */
  GST_SPDL_SHORT_VIDEOS_ERROR,  /* no clip (a fatal error) */
} GstSpdlShortVideos;

typedef struct
{
  guint frames;                 /* frames per clip */
  guint stride;                 /* take every stride-th frame (or time) */
  gdouble frame_rate;           /* > 0: frames at start + k * stride / rate */
  guint clips_per_video;
  GstSpdlClipSampling sampling;
  GstSpdlShortVideos short_videos;
  guint64 seed;
} GstSpdlClipParams;

void gst_spdl_clip_params_init (GstSpdlClipParams * params);

/* The result of gst_spdl_clip_plan(). */
typedef enum
{
  GST_SPDL_CLIP_PLAN_OK,
  GST_SPDL_CLIP_PLAN_NO_FRAMES, /* the video has no frame */
  GST_SPDL_CLIP_PLAN_SHORT,     /* shorter than a clip, skip or error */
} GstSpdlClipPlanResult;

/* Chooses the frames of the clips of one video, from its frames'
 * presentation times @pts (@n_frames, seconds, ascending) and @end, the
 * time its last frame stops being shown (a value not after the last pts
 * means unknown: the last frame lasts as long as the one before it, or
 * 1 / frame_rate for a single frame).
 *
 * Native rate (frame_rate 0): clip c is frames s, s + stride, ...,
 * s + (frames - 1) x stride. Time-based: the frame shown at each time
 * s + k x stride / frame_rate, the last frame whose pts is at or before
 * it, so a clip lasts as long at any frame rate, variable or not.
 * Random sampling draws each start uniformly over the starts whose clip
 * fits, from (seed, epoch, @video_index, clip) alone; uniform sampling
 * spaces the starts evenly from the first to the last that fits
 * (torchcodec's clips_at_regular_indices / _timestamps).
 * A video too short for one clip starts its clips at its first frame:
 * repeat-last repeats the last frame, wrap starts again from the first;
 * skip and error return GST_SPDL_CLIP_PLAN_SHORT.
 *
 * @indices receives clips_per_video x frames indices into @pts, clip by
 * clip. */
GstSpdlClipPlanResult gst_spdl_clip_plan (const GstSpdlClipParams * params,
    const gdouble * pts, guint n_frames, gdouble end, guint epoch,
    guint64 video_index, guint * indices);

/* The frame shown at time @t: the last index whose pts is at or before it
 * (0 before the first). */
guint gst_spdl_clip_frame_at (const gdouble * pts, guint n_frames,
    gdouble t);

G_END_DECLS

#endif /* __GST_SPDL_CLIP_H__ */
