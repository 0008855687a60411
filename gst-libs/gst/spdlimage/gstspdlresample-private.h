/* GStreamer SPDL: what the resampler and its x86 kernels share
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_RESAMPLE_PRIVATE_H__
#define __GST_SPDL_RESAMPLE_PRIVATE_H__

#include "gstspdlresample.h"

G_BEGIN_DECLS

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define HAVE_SSE41_KERNEL 1
#define HAVE_AVX2_KERNEL 1
#endif

#define PRECISION_BITS (32 - 8 - 2)
/* weights split as hi * 2^SPLIT_BITS + lo, both within 16 bits */
#define SPLIT_BITS 11
/* the exact AVX2 kernels take windows of up to 16 taps (the row kernel as
 * 4 groups of 4) */
#define AVX2_MAX_TAPS 16
/* the fast (inexact) axes: weights fit 16 bits (1.0 = 2^14) for pmaddwd */
#define FAST_PRECISION_BITS 14

static inline guint8
clip8 (gint32 acc, guint bits)
{
  acc >>= bits;
  return acc < 0 ? 0 : acc > 255 ? 255 : (guint8) acc;
}

#ifdef HAVE_SSE41_KERNEL
gboolean gst_spdl_resample_have_sse41 (void);
/* exact axes, up to 8 taps */
void gst_spdl_resample_row_rgb_sse41 (const GstSpdlResampleAxis * axis,
    const guint8 * in, gint in_start, guint8 * out);
/* the fast axes (axis->pairs), up to 8 taps */
void gst_spdl_resample_row_rgb_pairs_sse41 (const GstSpdlResampleAxis * axis,
    const guint8 * in, gint in_start, guint8 * out);
#endif

#ifdef HAVE_AVX2_KERNEL
/* Whether the CPU has AVX2 (gst_spdl_resample_limit_simd() is the
 * caller's to check). */
gboolean gst_spdl_resample_have_avx2 (void);
/* axis->split from axis->weights, for the row kernel below */
void gst_spdl_resample_split_weights_avx2 (GstSpdlResampleAxis * axis);
void gst_spdl_resample_row_rgb_avx2 (const GstSpdlResampleAxis * axis,
    const guint8 * in, gint in_start, guint8 * out);
/* one output row of the vertical pass, n <= AVX2_MAX_TAPS rows */
void gst_spdl_resample_column_avx2 (const guint8 * const *rows,
    const gint32 * w, gint n, gsize row_bytes, guint bits, guint8 * out);
#endif

G_END_DECLS

#endif /* __GST_SPDL_RESAMPLE_PRIVATE_H__ */
