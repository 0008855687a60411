/* GStreamer SPDL: which samples of an audio file make a clip
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

#include "gstspdlaudioclip.h"
#include "gstspdlrandom.h"

#include <gst/gst.h>
#include <string.h>

/* keyed stream of audio clip starts, apart from the shuffle's and the
 * video clips' */
#define AUDIO_CLIP_STREAM G_GUINT64_CONSTANT (0x4155444900000000)

void
gst_spdl_audio_clip_params_init (GstSpdlAudioClipParams * params)
{
  memset (params, 0, sizeof (*params));
  params->clip_samples = 16000;
  params->clips_per_file = 1;
  params->sampling = GST_SPDL_AUDIO_SAMPLING_RANDOM;
  params->short_files = GST_SPDL_SHORT_FILES_PAD;
}

guint
gst_spdl_audio_clip_count (const GstSpdlAudioClipParams * params)
{
  return params->clip_samples == 0 ? 1 : MAX (params->clips_per_file, 1);
}

guint64
gst_spdl_audio_samples_from_ns (guint64 ns, guint rate)
{
  return gst_util_uint64_scale_int_round (ns, rate, 1000000000);
}

GstSpdlAudioClipPlanResult
gst_spdl_audio_clip_plan (const GstSpdlAudioClipParams * p,
    guint64 n_samples, guint epoch, guint64 file_index,
    GstSpdlAudioClip * clips)
{
  guint n_clips = gst_spdl_audio_clip_count (p), c;
  guint64 last;
  GstSpdlRng rng;

  if (n_samples == 0)
    return GST_SPDL_AUDIO_CLIP_PLAN_EMPTY;
  if (p->clip_samples == 0) {
    clips[0].start = 0;
    clips[0].length = n_samples;
    return GST_SPDL_AUDIO_CLIP_PLAN_OK;
  }
  if (n_samples < p->clip_samples) {
    if (p->short_files == GST_SPDL_SHORT_FILES_SKIP ||
        p->short_files == GST_SPDL_SHORT_FILES_ERROR)
      return GST_SPDL_AUDIO_CLIP_PLAN_SHORT;
    for (c = 0; c < n_clips; c++) {
      clips[c].start = 0;
      clips[c].length = n_samples;
    }
    return GST_SPDL_AUDIO_CLIP_PLAN_OK;
  }
  last = n_samples - p->clip_samples;   /* the last start that fits */
  gst_spdl_rng_init (&rng, p->seed, AUDIO_CLIP_STREAM | epoch, file_index);
  for (c = 0; c < n_clips; c++) {
    guint64 start = 0;

    switch (p->sampling) {
      case GST_SPDL_AUDIO_SAMPLING_RANDOM:
        start = gst_spdl_rng_below (&rng, last + 1);
        break;
      case GST_SPDL_AUDIO_SAMPLING_UNIFORM:
        /* c x last fits: fewer than 2^16 clips of under 2^48 samples */
        start = n_clips > 1 ? gst_util_uint64_scale_int (last, c,
            n_clips - 1) : 0;
        break;
      case GST_SPDL_AUDIO_SAMPLING_START:
      default:
        start = 0;
        break;
    }
    clips[c].start = start;
    clips[c].length = p->clip_samples;
  }
  return GST_SPDL_AUDIO_CLIP_PLAN_OK;
}
