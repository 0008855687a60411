/* GStreamer SPDL plugin: antialiased resampling
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Why our own resampler rather than GstVideoConverter or libswscale: users
 * compare pixels with torchvision, whose PIL path resizes with a triangle
 * filter widened by the downscale factor and clipped to the image, in
 * 22-bit fixed point. Reproducing that arithmetic keeps the difference near
 * zero, and computing only the kept outputs of a "resize then crop" lets the
 * decoder skip the pixels a crop throws away. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlresample.h"

#include <math.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define HAVE_SSE41_KERNEL 1
#endif

#define PRECISION_BITS (32 - 8 - 2)
/* the fast (inexact) axes: weights fit 16 bits (1.0 = 2^14) for pmaddwd */
#define FAST_PRECISION_BITS 14

static inline gdouble
triangle (gdouble x)
{
  x = fabs (x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

static inline guint8
clip8 (gint32 acc, guint bits)
{
  acc >>= bits;
  return acc < 0 ? 0 : acc > 255 ? 255 : (guint8) acc;
}

static gboolean
axis_is_identity (const GstSpdlResampleAxis * axis)
{
  const gint32 one = 1 << axis->bits;
  guint i;

  for (i = 0; i < axis->out_size; i++) {
    const gint32 *w = axis->weights + i * axis->ksize;
    gint t;

    if (axis->count[i] == 0 || axis->first[i] != axis->first[0] + (gint) i ||
        w[0] != one)
      return FALSE;
    for (t = 1; t < axis->count[i]; t++)
      if (w[t] != 0)
        return FALSE;
  }
  return axis->out_size > 0;
}

/* Widens every window to the widest one's taps (zero weights), shifting it
 * left at the clip box's end, so the row kernels run a constant number of
 * taps that the compiler unrolls. The sums are unchanged. */
static void
axis_make_uniform (GstSpdlResampleAxis * axis, gint clip_start, guint clip_size)
{
  guint i, k = 0;

  axis->uniform = FALSE;
  for (i = 0; i < axis->out_size; i++)
    k = MAX (k, (guint) axis->count[i]);
  if (clip_size < k || k == 0)
    return;
  for (i = 0; i < axis->out_size; i++) {
    gint32 *w = axis->weights + i * axis->ksize;
    gint shift = axis->first[i] - clip_start + (gint) k - (gint) clip_size;

    if (axis->count[i] == 0)
      return;
    if (shift > 0) {
      memmove (w + shift, w, (k - shift) * sizeof (gint32));
      memset (w, 0, shift * sizeof (gint32));
      axis->first[i] -= shift;
    }
    axis->count[i] = k;
  }
  axis->taps = k;
  axis->uniform = TRUE;
}

static void
axis_mirror (GstSpdlResampleAxis * axis)
{
  guint i, n = axis->out_size;

  for (i = 0; i < n / 2; i++) {
    guint j = n - 1 - i, t;
    gint tmp;

    tmp = axis->first[i];
    axis->first[i] = axis->first[j];
    axis->first[j] = tmp;
    tmp = axis->count[i];
    axis->count[i] = axis->count[j];
    axis->count[j] = tmp;
    for (t = 0; t < axis->ksize; t++) {
      gint32 w = axis->weights[i * axis->ksize + t];
      axis->weights[i * axis->ksize + t] = axis->weights[j * axis->ksize + t];
      axis->weights[j * axis->ksize + t] = w;
    }
  }
}

/* The fast kernel's weights: per output, (taps + 3) / 4 pairs of vectors
 * of 8 int16, [wa wb wa wb wa wb 0 0] for taps (a, b) = (0, 1), (2, 3)
 * of each group of 4, to multiply [Ra Rb Ga Gb Ba Bb 0 0] (pmaddwd). */
static void
axis_make_pairs (GstSpdlResampleAxis * axis)
{
  guint quads = (axis->taps + 3) / 4, i, t, c;

  axis->pairs = g_new0 (gint16, (gsize) axis->out_size * quads * 16);
  for (i = 0; i < axis->out_size; i++) {
    const gint32 *w = axis->weights + i * axis->ksize;
    gint16 *v = axis->pairs + (gsize) i * quads * 16;

    for (t = 0; t < axis->taps; t++)
      for (c = 0; c < 3; c++)
        v[(t / 2) * 8 + 2 * c + t % 2] = (gint16) w[t];
  }
}

void
gst_spdl_resample_axis_init (GstSpdlResampleAxis * axis, gdouble clip_start,
    guint clip_size, gdouble scale, gdouble offset, guint out_size,
    gint64 virtual_size, gboolean mirror)
{
  gst_spdl_resample_axis_init_full (axis, clip_start, clip_size, scale,
      offset, out_size, virtual_size, mirror, FALSE);
}

void
gst_spdl_resample_axis_init_full (GstSpdlResampleAxis * axis,
    gdouble clip_start, guint clip_size, gdouble scale, gdouble offset,
    guint out_size, gint64 virtual_size, gboolean mirror, gboolean fast)
{
  gdouble filterscale = MAX (scale, 1.0);
  gdouble support = filterscale;
  gdouble *k;
  guint i;

  /* @axis is uninitialised or cleared: every field is set here */
  axis->out_size = out_size;
  axis->uniform = FALSE;
  axis->taps = 0;
  axis->acc = NULL;
  axis->acc_size = 0;
  axis->bits = fast ? FAST_PRECISION_BITS : PRECISION_BITS;
  axis->pairs = NULL;
  axis->ksize = (guint) ceil (support) * 2 + 1;
  axis->first = g_new (gint, out_size);
  axis->count = g_new (gint, out_size);
  axis->weights = g_new0 (gint32, (gsize) out_size * axis->ksize);
  k = g_new (gdouble, axis->ksize);

  for (i = 0; i < out_size; i++) {
    /* PIL's precompute_coeffs, in coordinates relative to the clip box */
    gdouble center = (offset + i + 0.5) * scale;
    gdouble ww = 0.0;
    gint xmin, xmax, x;

    if (offset + i < 0 || offset + i >= virtual_size) {
      axis->first[i] = (gint) clip_start;
      axis->count[i] = 0;
      continue;
    }
    xmin = (gint) (center - support + 0.5);
    xmin = MAX (xmin, 0);
    xmax = (gint) (center + support + 0.5);
    xmax = MIN (xmax, (gint) clip_size);
    xmax -= xmin;
    xmax = MIN (xmax, (gint) axis->ksize);
    for (x = 0; x < xmax; x++) {
      k[x] = triangle ((x + xmin - center + 0.5) / filterscale);
      ww += k[x];
    }
    for (x = 0; x < xmax; x++) {
      gdouble w = ww != 0.0 ? k[x] / ww : 0.0;
      axis->weights[i * axis->ksize + x] = (gint32) (w < 0 ?
          -0.5 + w * (1 << axis->bits) : 0.5 + w * (1 << axis->bits));
    }
    axis->first[i] = xmin + (gint) clip_start;
    axis->count[i] = MAX (xmax, 0);
  }
  g_free (k);
  axis->identity = axis_is_identity (axis);
  /* a mirrored identity goes through the tap kernels too */
  if (!axis->identity || mirror)
    axis_make_uniform (axis, (gint) clip_start, clip_size);
  if (mirror) {
    axis_mirror (axis);
    axis->identity = FALSE;
  }
  if (fast && axis->uniform && axis->taps <= 8)
    axis_make_pairs (axis);
}

void
gst_spdl_resample_axis_clear (GstSpdlResampleAxis * axis)
{
  g_clear_pointer (&axis->first, g_free);
  g_clear_pointer (&axis->count, g_free);
  g_clear_pointer (&axis->weights, g_free);
  g_clear_pointer (&axis->acc, g_free);
  g_clear_pointer (&axis->pairs, g_free);
  axis->acc_size = 0;
  axis->out_size = 0;
  axis->uniform = FALSE;
  axis->taps = 0;
}

gboolean
gst_spdl_resample_axis_range (const GstSpdlResampleAxis * axis, gint * start,
    gint * end)
{
  gint lo = G_MAXINT, hi = G_MININT;
  guint i;

  for (i = 0; i < axis->out_size; i++) {
    if (axis->count[i] == 0)
      continue;
    lo = MIN (lo, axis->first[i]);
    hi = MAX (hi, axis->first[i] + axis->count[i]);
  }
  *start = lo;
  *end = hi;
  return lo < hi;
}

/* RGB row with a constant number of taps: unrolled by the compiler */
static inline void
row_rgb_taps (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint8 * out, const gint taps)
{
  const guint bits = axis->bits;
  const gint32 half = 1 << (bits - 1);
  guint i;

  for (i = 0; i < axis->out_size; i++) {
    const gint32 *w = axis->weights + i * axis->ksize;
    const guint8 *p = in + (gsize) (axis->first[i] - in_start) * 3;
    gint32 r = half, g = half, b = half;
    gint t;

    for (t = 0; t < taps; t++) {
      r += p[3 * t] * w[t];
      g += p[3 * t + 1] * w[t];
      b += p[3 * t + 2] * w[t];
    }
    out[3 * i] = clip8 (r, bits);
    out[3 * i + 1] = clip8 (g, bits);
    out[3 * i + 2] = clip8 (b, bits);
  }
}

#ifdef HAVE_SSE41_KERNEL
/* pshufb masks: the first n of 4 taps' bytes as [R.. G.. B..], zeros for
 * the rest, so bytes past a window never reach the sums */
static const gint8 planar_masks[5][16] = {
  {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
  {0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, -1, -1, -1, -1},
  {0, 3, -1, -1, 1, 4, -1, -1, 2, 5, -1, -1, -1, -1, -1, -1},
  {0, 3, 6, -1, 1, 4, 7, -1, 2, 5, 8, -1, -1, -1, -1, -1},
  {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11, -1, -1, -1, -1},
};

/* Sums of up to 4 taps of one RGB output, exact: the window bytes at @p are
 * shuffled into [R0..R3 G0..G3 B0..B3], widened to 32 bits, multiplied by
 * the weights (pmulld) and summed into [r g b 0]. Loads 16 bytes. */
__attribute__((target ("sse4.1")))
static inline __m128i
sum4_rgb (const guint8 * p, __m128i weights, guint n)
{
  const __m128i planar = _mm_loadu_si128 ((const __m128i *) planar_masks[n]);
  __m128i px = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) p),
      planar);
  __m128i r = _mm_mullo_epi32 (_mm_cvtepu8_epi32 (px), weights);
  __m128i g = _mm_mullo_epi32 (_mm_cvtepu8_epi32 (_mm_srli_si128 (px, 4)),
      weights);
  __m128i b = _mm_mullo_epi32 (_mm_cvtepu8_epi32 (_mm_srli_si128 (px, 8)),
      weights);

  return _mm_hadd_epi32 (_mm_hadd_epi32 (r, g),
      _mm_hadd_epi32 (b, _mm_setzero_si128 ()));
}

/* Up to 4 weights as a vector, zeros after @n: never reads past them. */
__attribute__((target ("sse4.1")))
static inline __m128i
load_weights (const gint32 * w, guint n)
{
  if (n >= 4)
    return _mm_loadu_si128 ((const __m128i *) w);
  return _mm_setr_epi32 (w[0], n > 1 ? w[1] : 0, n > 2 ? w[2] : 0, 0);
}

/* The same sums as row_rgb_taps for windows of up to 8 taps, as one or two
 * 4-tap halves. Pixels are read up to 16 bytes past a window's start or
 * middle: callers leave 16 bytes of slack after each row. */
__attribute__((target ("sse4.1")))
static void
row_rgb_sse41 (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint8 * out)
{
  const __m128i half = _mm_set1_epi32 (1 << (PRECISION_BITS - 1));
  guint taps = axis->taps, i;

  for (i = 0; i < axis->out_size; i++) {
    const guint8 *p = in + (gsize) (axis->first[i] - in_start) * 3;
    const gint32 *w = axis->weights + i * axis->ksize;
    __m128i sums = sum4_rgb (p, load_weights (w, taps), MIN (taps, 4));

    if (taps > 4)
      sums = _mm_add_epi32 (sums, sum4_rgb (p + 12, load_weights (w + 4,
                  taps - 4), taps - 4));
    sums = _mm_srai_epi32 (_mm_add_epi32 (sums, half), PRECISION_BITS);
    sums = _mm_packs_epi32 (sums, sums);
    sums = _mm_packus_epi16 (sums, sums);
    {
      guint32 v = (guint32) _mm_cvtsi128_si32 (sums);
      out[3 * i] = v & 0xff;
      out[3 * i + 1] = (v >> 8) & 0xff;
      out[3 * i + 2] = (v >> 16) & 0xff;
    }
  }
}

/* pshufb masks: taps (0, 1) and (2, 3) of a 16-byte load as zero-extended
 * words [Ra Rb Ga Gb Ba Bb 0 0] */
static const gint8 pair_masks[2][16] = {
  {0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1},
  {6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1},
};

/* The fast axes' RGB row: two taps per pmaddwd, straight into [r g b 0]
 * (no horizontal adds), 16-bit weights. Up to 8 taps; the same 16 bytes
 * of slack as row_rgb_sse41. */
__attribute__((target ("sse4.1")))
static void
row_rgb_pairs (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint8 * out)
{
  const __m128i lo = _mm_loadu_si128 ((const __m128i *) pair_masks[0]);
  const __m128i hi = _mm_loadu_si128 ((const __m128i *) pair_masks[1]);
  const __m128i half = _mm_set1_epi32 (1 << (FAST_PRECISION_BITS - 1));
  const guint quads = (axis->taps + 3) / 4;
  const __m128i *w = (const __m128i *) axis->pairs;
  guint i;

  for (i = 0; i < axis->out_size; i++, w += 2 * quads) {
    const guint8 *p = in + (gsize) (axis->first[i] - in_start) * 3;
    __m128i px = _mm_loadu_si128 ((const __m128i *) p);
    __m128i sums = _mm_add_epi32 (_mm_madd_epi16 (_mm_shuffle_epi8 (px, lo),
            _mm_loadu_si128 (w)), _mm_madd_epi16 (_mm_shuffle_epi8 (px, hi),
            _mm_loadu_si128 (w + 1)));
    guint32 v;

    if (quads > 1) {
      px = _mm_loadu_si128 ((const __m128i *) (p + 12));
      sums = _mm_add_epi32 (sums, _mm_madd_epi16 (_mm_shuffle_epi8 (px, lo),
              _mm_loadu_si128 (w + 2)));
      sums = _mm_add_epi32 (sums, _mm_madd_epi16 (_mm_shuffle_epi8 (px, hi),
              _mm_loadu_si128 (w + 3)));
    }
    sums = _mm_srai_epi32 (_mm_add_epi32 (sums, half), FAST_PRECISION_BITS);
    sums = _mm_packs_epi32 (sums, sums);
    sums = _mm_packus_epi16 (sums, sums);
    v = (guint32) _mm_cvtsi128_si32 (sums);
    out[3 * i] = v & 0xff;
    out[3 * i + 1] = (v >> 8) & 0xff;
    out[3 * i + 2] = (v >> 16) & 0xff;
  }
}

static gboolean
have_sse41 (void)
{
  static gint cached = -1;

  if (cached < 0)
    cached = __builtin_cpu_supports ("sse4.1") ? 1 : 0;
  return cached;
}
#endif

static void
row_generic (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint channels, guint8 * out)
{
  const gint32 half = 1 << (axis->bits - 1);
  guint i, c;

  for (i = 0; i < axis->out_size; i++) {
    const gint32 *w = axis->weights + i * axis->ksize;
    const guint8 *p = in + (gsize) (axis->first[i] - in_start) * channels;

    for (c = 0; c < channels; c++) {
      gint32 acc = axis->count[i] ? half : 0;
      gint t;
      for (t = 0; t < axis->count[i]; t++)
        acc += p[t * channels + c] * w[t];
      out[i * channels + c] = clip8 (acc, axis->bits);
    }
  }
}

void
gst_spdl_resample_row (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint channels, guint8 * out)
{
  if (axis->identity) {
    memcpy (out, in + (gsize) (axis->first[0] - in_start) * channels,
        (gsize) axis->out_size * channels);
    return;
  }
  if (channels == 3 && axis->uniform) {
#ifdef HAVE_SSE41_KERNEL
    if (axis->pairs && have_sse41 ()) {
      row_rgb_pairs (axis, in, in_start, out);
      return;
    }
    if (axis->taps <= 8 && have_sse41 ()) {
      row_rgb_sse41 (axis, in, in_start, out);
      return;
    }
#endif
    switch (axis->taps) {
      case 2:
        row_rgb_taps (axis, in, in_start, out, 2);
        return;
      case 3:
        row_rgb_taps (axis, in, in_start, out, 3);
        return;
      case 4:
        row_rgb_taps (axis, in, in_start, out, 4);
        return;
      case 5:
        row_rgb_taps (axis, in, in_start, out, 5);
        return;
      case 6:
        row_rgb_taps (axis, in, in_start, out, 6);
        return;
      case 7:
        row_rgb_taps (axis, in, in_start, out, 7);
        return;
      case 8:
        row_rgb_taps (axis, in, in_start, out, 8);
        return;
      default:
        break;
    }
  }
  row_generic (axis, in, in_start, channels, out);
}

/* acc[x] += row[x] * w over contiguous bytes: vectorizes; built for AVX2
 * too where the compiler can pick at run time. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones ("avx2", "default")))
#endif
static void
accumulate_row (gint32 * restrict acc, const guint8 * restrict row,
    gint32 w, gsize n)
{
  gsize x;

  for (x = 0; x < n; x++)
    acc[x] += row[x] * w;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones ("avx2", "default")))
#endif
static void
store_row (guint8 * restrict out, const gint32 * restrict acc, gsize n,
    guint bits)
{
  gsize x;

  for (x = 0; x < n; x++) {
    gint32 v = acc[x] >> bits;
    out[x] = v < 0 ? 0 : v > 255 ? 255 : (guint8) v;
  }
}

void
gst_spdl_resample_column (const GstSpdlResampleAxis * axis, guint out_row,
    const guint8 * rows, gint rows_start, gsize row_stride, gsize row_bytes,
    guint8 * out)
{
  const gint32 half = 1 << (axis->bits - 1);
  const gint32 *w = axis->weights + out_row * axis->ksize;
  GstSpdlResampleAxis *scratch = (GstSpdlResampleAxis *) axis;
  const guint8 *base;
  gint t, n = axis->count[out_row];
  gsize x;

  if (n == 0) {
    memset (out, 0, row_bytes);
    return;
  }
  base = rows + (gsize) (axis->first[out_row] - rows_start) * row_stride;
  if (axis->identity) {
    memcpy (out, base, row_bytes);
    return;
  }
  /* tap-major: one weight over a whole row at a time */
  if (scratch->acc_size < row_bytes) {
    g_free (scratch->acc);
    scratch->acc = g_new (gint32, row_bytes);
    scratch->acc_size = row_bytes;
  }
  for (x = 0; x < row_bytes; x++)
    scratch->acc[x] = half;
  for (t = 0; t < n; t++)
    if (w[t] != 0)
      accumulate_row (scratch->acc, base + t * row_stride, w[t], row_bytes);
  store_row (out, scratch->acc, row_bytes, axis->bits);
}
