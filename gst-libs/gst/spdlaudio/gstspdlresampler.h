/* GStreamer SPDL: the audio chain's resampler
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_RESAMPLER_H__
#define __GST_SPDL_RESAMPLER_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* GstAudioResampler's Kaiser filters (the same design, taps and
 * arithmetic as its full filter mode: one exact filter per phase, made
 * when first used), run by an inner product for the machine's vector
 * unit (AVX2 with FMA where the CPU has it; GStreamer 1.22's stops at
 * SSE 4.1). Interleaved float frames in and out. Where the rates have
 * more phases than @max_filter_bytes of exact filters hold, it is
 * GstAudioResampler itself, with a table of @oversample phases
 * interpolated linearly. Same calls and results as GstAudioResampler
 * for rates that differ: the frame counts of get_out_frames(),
 * get_in_frames() and get_max_latency() are its, reset() keeps the
 * phase. Equal rates are filtered here, not copied n_taps / 2 - 1 frames
 * late as GStreamer does (the chain does not resample them). Not
 * thread-safe. */
typedef struct _GstSpdlResampler GstSpdlResampler;

/* GstAudioResampler's options for the filters this resampler computes:
 * Kaiser at @quality, one exact filter per phase (filter-mode full, no
 * interpolation). A GstAudioResampler made with them gives this
 * resampler's samples: the reference of its tests and bench. */
GstStructure *gst_spdl_resampler_exact_options (gint quality,
    guint in_rate, guint out_rate);
GstSpdlResampler *gst_spdl_resampler_new (gint quality, guint channels,
    guint in_rate, guint out_rate, gsize max_filter_bytes, gint oversample);
void gst_spdl_resampler_free (GstSpdlResampler * resampler);
void gst_spdl_resampler_reset (GstSpdlResampler * resampler);
gsize gst_spdl_resampler_get_out_frames (GstSpdlResampler * resampler,
    gsize in_frames);
gsize gst_spdl_resampler_get_in_frames (GstSpdlResampler * resampler,
    gsize out_frames);
gsize gst_spdl_resampler_get_max_latency (GstSpdlResampler * resampler);
/* @in NULL: @in_frames of silence. @out_frames at most
 * get_out_frames (@in_frames), as with GstAudioResampler. */
void gst_spdl_resampler_resample (GstSpdlResampler * resampler,
    const gfloat * in, gsize in_frames, gfloat * out, gsize out_frames);
/* TRUE where the exact filters run (FALSE: GstAudioResampler's table) */
gboolean gst_spdl_resampler_is_exact (GstSpdlResampler * resampler);
/* For tests and benchmarks: inner products up to @level (2 AVX2 with FMA,
 * 1 SSE, 0 plain C) for resamplers made from now on. */
void gst_spdl_resampler_limit_simd (guint level);

G_END_DECLS

#endif /* __GST_SPDL_RESAMPLER_H__ */
