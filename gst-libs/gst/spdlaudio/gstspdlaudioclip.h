/* GStreamer SPDL: which samples of an audio file make a clip
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_AUDIO_CLIP_H__
#define __GST_SPDL_AUDIO_CLIP_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  GST_SPDL_AUDIO_SAMPLING_RANDOM,       /* drawn from (seed, epoch, file) */
  GST_SPDL_AUDIO_SAMPLING_UNIFORM,      /* evenly spaced, first to last */
  GST_SPDL_AUDIO_SAMPLING_START,        /* every clip at the first sample */
} GstSpdlAudioSampling;

/* What a file shorter than one clip gives. */
typedef enum
{
  GST_SPDL_SHORT_FILES_PAD,     /* the file, then zeros */
  GST_SPDL_SHORT_FILES_REPEAT,  /* the file again and again */
  GST_SPDL_SHORT_FILES_SKIP,    /* no clip (a skipped sample) */
  GST_SPDL_SHORT_FILES_ERROR,   /* no clip (a fatal error) */
} GstSpdlShortFiles;

typedef struct
{
  guint64 clip_samples;         /* at the output rate; 0 = the whole file */
  guint clips_per_file;
  GstSpdlAudioSampling sampling;
  GstSpdlShortFiles short_files;
  guint64 seed;
} GstSpdlAudioClipParams;

void gst_spdl_audio_clip_params_init (GstSpdlAudioClipParams * params);

/* One clip: @length samples of the file from @start (sample numbers at
 * the output rate). @length is below clip_samples only for a short file
 * (pad: zeros follow; repeat: the span is repeated to fill the clip). */
typedef struct
{
  guint64 start;
  guint64 length;
} GstSpdlAudioClip;

typedef enum
{
  GST_SPDL_AUDIO_CLIP_PLAN_OK,
  GST_SPDL_AUDIO_CLIP_PLAN_EMPTY,       /* the file has no sample */
  GST_SPDL_AUDIO_CLIP_PLAN_SHORT,       /* shorter than a clip, skip/error */
} GstSpdlAudioClipPlanResult;

/* The number of clips a file gives: 1 for whole files (clip_samples 0),
 * clips_per_file otherwise. */
guint gst_spdl_audio_clip_count (const GstSpdlAudioClipParams * params);

/* Chooses the clips of a file of @n_samples samples (at the output rate),
 * the file's number @file_index in the dataset listing, in @epoch.
 * Random sampling draws each start uniformly from 0 .. n_samples -
 * clip_samples, from (seed, epoch, @file_index) alone, clip after clip;
 * uniform sampling spaces the starts evenly from the first to the last
 * that fits, truncated (torch.linspace(...).long(); one clip starts at 0);
 * start sampling starts every clip at 0. A file shorter than a clip
 * starts its clips at 0 with the file's length (pad, repeat), or gives
 * GST_SPDL_AUDIO_CLIP_PLAN_SHORT (skip, error). Whole files: one clip,
 * 0 .. n_samples. @clips receives gst_spdl_audio_clip_count() clips. */
GstSpdlAudioClipPlanResult gst_spdl_audio_clip_plan (const
    GstSpdlAudioClipParams * params, guint64 n_samples, guint epoch,
    guint64 file_index, GstSpdlAudioClip * clips);

/* Samples at @rate of @ns nanoseconds, rounded to the nearest. */
guint64 gst_spdl_audio_samples_from_ns (guint64 ns, guint rate);

G_END_DECLS

#endif /* __GST_SPDL_AUDIO_CLIP_H__ */
