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
#define HAVE_AVX2_KERNEL 1
#endif

#define PRECISION_BITS (32 - 8 - 2)
/* weights split as hi * 2^SPLIT_BITS + lo, both within 16 bits */
#define SPLIT_BITS 11
/* the exact AVX2 kernels take windows of up to 16 taps (the row kernel as
 * 4 groups of 4) */
#define AVX2_MAX_TAPS 16

/* highest kernel level in use: 2 AVX2, 1 SSE4.1, 0 plain C */
static guint simd_limit = 2;

void
gst_spdl_resample_limit_simd (guint level)
{
  simd_limit = level;
}

#ifdef HAVE_AVX2_KERNEL
static gboolean
have_avx2 (void)
{
  static gint cached = -1;

  if (cached < 0)
    cached = __builtin_cpu_supports ("avx2") ? 1 : 0;
  return cached && simd_limit >= 2;
}

/* The AVX2 kernel multiplies 16-bit pixels by 16-bit weights (pmaddwd), so
 * each 22-bit weight is kept as two halves; the sums stay exact:
 * sum(p * w) = (sum(p * hi) << SPLIT_BITS) + sum(p * lo). Outputs go in
 * pairs, one per 128-bit lane (an odd last output is paired with itself);
 * per pair and group of 4 taps, 4 vectors of 16 int16 whose lanes are
 * [hi0 hi1 hi0 hi1 hi0 hi1 0 0], [hi2 hi3 ...], [lo0 lo1 ...], [lo2 lo3 ...],
 * matching pixels laid out as [R0 R1 G0 G1 B0 B1 0 0] and
 * [R2 R3 G2 G3 B2 B3 0 0]. */
static void
axis_split_weights (GstSpdlResampleAxis * axis)
{
  guint groups = (axis->taps + 3) / 4, pairs = (axis->out_size + 1) / 2;
  guint k, lane, g, half, pair, c;

  axis->split = g_aligned_alloc0 ((gsize) pairs * groups * 64,
      sizeof (gint16), 32);
  for (k = 0; k < pairs; k++)
    for (lane = 0; lane < 2; lane++) {
      guint i = MIN (2 * k + lane, axis->out_size - 1);
      const gint32 *w = axis->weights + i * axis->ksize;

      for (g = 0; g < groups; g++) {
        gint16 *dst = axis->split + ((gsize) k * groups + g) * 64 + lane * 8;

        for (half = 0; half < 2; half++)        /* taps 4g+0,1 then 4g+2,3 */
          for (pair = 0; pair < 2; pair++) {
            guint t = 4 * g + 2 * half + pair;
            gint32 wt = t < axis->taps ? w[t] : 0;
            gint16 hi = (gint16) (wt >> SPLIT_BITS);
            gint16 lo = (gint16) (wt & ((1 << SPLIT_BITS) - 1));

            for (c = 0; c < 3; c++) {
              dst[half * 16 + 2 * c + pair] = hi;
              dst[(2 + half) * 16 + 2 * c + pair] = lo;
            }
          }
      }
    }
}
#endif
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
  axis->split = NULL;
  axis->acc = NULL;
  axis->acc_size = 0;
  axis->bits = fast ? FAST_PRECISION_BITS : PRECISION_BITS;
  axis->pairs = NULL;
  axis->made_from.valid = FALSE;
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
#ifdef HAVE_AVX2_KERNEL
  if (!fast && axis->uniform && axis->taps <= AVX2_MAX_TAPS && have_avx2 ())
    axis_split_weights (axis);
#endif
  if (fast && axis->uniform && axis->taps <= 8)
    axis_make_pairs (axis);
}

void
gst_spdl_resample_axis_clear (GstSpdlResampleAxis * axis)
{
  g_clear_pointer (&axis->first, g_free);
  g_clear_pointer (&axis->count, g_free);
  g_clear_pointer (&axis->weights, g_free);
  g_clear_pointer (&axis->split, g_aligned_free);
  g_clear_pointer (&axis->acc, g_free);
  g_clear_pointer (&axis->pairs, g_free);
  axis->acc_size = 0;
  axis->out_size = 0;
  axis->uniform = FALSE;
  axis->taps = 0;
  axis->made_from.valid = FALSE;
}

static gboolean
axis_made_from (const GstSpdlResampleAxis * axis, gdouble clip_start,
    guint clip_size, gdouble scale, gdouble offset, guint out_size,
    gint64 virtual_size, gboolean mirror, gboolean fast)
{
  return axis->made_from.valid && axis->made_from.clip_start == clip_start &&
      axis->made_from.clip_size == clip_size &&
      axis->made_from.scale == scale && axis->made_from.offset == offset &&
      axis->made_from.out_size == out_size &&
      axis->made_from.virtual_size == virtual_size &&
      axis->made_from.mirror == !!mirror && axis->made_from.fast == !!fast &&
      axis->made_from.simd == simd_limit;
}

void
gst_spdl_resample_axis_update (GstSpdlResampleAxis * axis,
    gdouble clip_start, guint clip_size, gdouble scale, gdouble offset,
    guint out_size, gint64 virtual_size, gboolean mirror, gboolean fast)
{
  if (axis_made_from (axis, clip_start, clip_size, scale, offset, out_size,
          virtual_size, mirror, fast))
    return;
  gst_spdl_resample_axis_clear (axis);
  gst_spdl_resample_axis_init_full (axis, clip_start, clip_size, scale,
      offset, out_size, virtual_size, mirror, fast);
  axis->made_from.clip_start = clip_start;
  axis->made_from.clip_size = clip_size;
  axis->made_from.scale = scale;
  axis->made_from.offset = offset;
  axis->made_from.out_size = out_size;
  axis->made_from.virtual_size = virtual_size;
  axis->made_from.mirror = !!mirror;
  axis->made_from.fast = !!fast;
  axis->made_from.simd = simd_limit;
  axis->made_from.valid = TRUE;
}

/* Memory an axis holds: its weights in every form, and its scratch */
static gsize
axis_bytes (const GstSpdlResampleAxis * axis)
{
  gsize n = axis->out_size, groups = (axis->taps + 3) / 4;
  gsize bytes = n * (2 * sizeof (gint) + axis->ksize * sizeof (gint32));

  if (axis->split)
    bytes += (n + 1) / 2 * groups * 64 * sizeof (gint16);
  if (axis->pairs)
    bytes += n * groups * 16 * sizeof (gint16);
  return bytes + axis->acc_size * sizeof (gint32);
}

/* Keeps the cache under GST_SPDL_RESAMPLE_CACHE_MAX_BYTES (huge outputs
 * make huge axes) by clearing the least recently used axes, never the two
 * newest: an image's horizontal and vertical axes. */
static void
axis_cache_trim (GstSpdlResampleAxisCache * cache)
{
  gsize total = 0;
  guint i;

  for (i = 0; i < GST_SPDL_RESAMPLE_CACHED_AXES; i++)
    total += axis_bytes (&cache->axes[i]);
  while (total > GST_SPDL_RESAMPLE_CACHE_MAX_BYTES) {
    guint oldest = GST_SPDL_RESAMPLE_CACHED_AXES;

    for (i = 0; i < GST_SPDL_RESAMPLE_CACHED_AXES; i++)
      if (cache->last_used[i] != 0 && cache->last_used[i] + 2 <= cache->clock
          && (oldest == GST_SPDL_RESAMPLE_CACHED_AXES ||
              cache->last_used[i] < cache->last_used[oldest]))
        oldest = i;
    if (oldest == GST_SPDL_RESAMPLE_CACHED_AXES)
      return;
    total -= axis_bytes (&cache->axes[oldest]);
    gst_spdl_resample_axis_clear (&cache->axes[oldest]);
    cache->last_used[oldest] = 0;
  }
}

const GstSpdlResampleAxis *
gst_spdl_resample_axis_cache_get (GstSpdlResampleAxisCache * cache,
    gdouble clip_start, guint clip_size, gdouble scale, gdouble offset,
    guint out_size, gint64 virtual_size, gboolean mirror, gboolean fast)
{
  guint i, oldest = 0;

  for (i = 0; i < GST_SPDL_RESAMPLE_CACHED_AXES; i++) {
    if (cache->last_used[i] != 0 && axis_made_from (&cache->axes[i],
            clip_start, clip_size, scale, offset, out_size, virtual_size,
            mirror, fast))
      break;
    if (cache->last_used[i] < cache->last_used[oldest])
      oldest = i;
  }
  if (i == GST_SPDL_RESAMPLE_CACHED_AXES) {
    i = oldest;
    gst_spdl_resample_axis_update (&cache->axes[i], clip_start, clip_size,
        scale, offset, out_size, virtual_size, mirror, fast);
    cache->last_used[i] = ++cache->clock;
    axis_cache_trim (cache);
  } else {
    cache->last_used[i] = ++cache->clock;
  }
  return &cache->axes[i];
}

void
gst_spdl_resample_axis_cache_clear (GstSpdlResampleAxisCache * cache)
{
  guint i;

  for (i = 0; i < GST_SPDL_RESAMPLE_CACHED_AXES; i++) {
    gst_spdl_resample_axis_clear (&cache->axes[i]);
    cache->last_used[i] = 0;
  }
  cache->clock = 0;
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
 * words [Ra Rb Ga Gb Ba Bb 0 0] (the fast SSE4.1 kernel and, one per
 * 128-bit lane, the exact AVX2 one) */
static const gint8 pair_masks[2][16] = {
  {0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1},
  {6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1},
};

/* The same for a last group of n < 4 taps: the bytes of taps n..3 become
 * zeros, not pixels past the window (slack bytes never written, which
 * memcheck would follow through a multiplication by a zero weight) */
static const gint8 pair_masks_short[4][2][16] = {
  {{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
      {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
  {{0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, -1, -1, -1, -1},
      {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
  {{0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1},
      {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
  {{0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1},
      {6, -1, -1, -1, 7, -1, -1, -1, 8, -1, -1, -1, -1, -1, -1, -1}},
};

/* The masks of a group holding @n taps (4 or fewer) */
static inline const gint8 *
group_mask (guint n, guint which)
{
  return n >= 4 ? pair_masks[which] : pair_masks_short[n][which];
}

#ifdef HAVE_AVX2_KERNEL
/* The masks of the exact AVX2 kernel for one group of taps, in both lanes */
typedef struct
{
  __m256i m01, m23;
} GroupMasks;

__attribute__((target ("avx2"), always_inline))
static inline GroupMasks
group_masks (guint n)
{
  GroupMasks m;

  m.m01 = _mm256_broadcastsi128_si256 (_mm_loadu_si128
      ((const __m128i *) group_mask (n, 0)));
  m.m23 = _mm256_broadcastsi128_si256 (_mm_loadu_si128
      ((const __m128i *) group_mask (n, 1)));
  return m;
}

/* [r g b 0] sums of a group of up to 4 taps for two outputs (one per
 * lane), pixels at @p0/@p1, the pair's weights of the group at @wv (see
 * axis_split_weights); taps 2 and 3 only where the group has them */
__attribute__((target ("avx2"), always_inline))
static inline __m256i
group_sums (const guint8 * p0, const guint8 * p1, const __m256i * wv,
    GroupMasks m, gboolean four)
{
  __m256i px = _mm256_inserti128_si256 (_mm256_castsi128_si256
      (_mm_loadu_si128 ((const __m128i *) p0)),
      _mm_loadu_si128 ((const __m128i *) p1), 1);
  __m256i a = _mm256_shuffle_epi8 (px, m.m01);
  __m256i hi = _mm256_madd_epi16 (a, _mm256_load_si256 (wv));
  __m256i lo = _mm256_madd_epi16 (a, _mm256_load_si256 (wv + 2));

  if (four) {
    __m256i b = _mm256_shuffle_epi8 (px, m.m23);
    hi = _mm256_add_epi32 (hi, _mm256_madd_epi16 (b,
            _mm256_load_si256 (wv + 1)));
    lo = _mm256_add_epi32 (lo, _mm256_madd_epi16 (b,
            _mm256_load_si256 (wv + 3)));
  }
  return _mm256_add_epi32 (_mm256_slli_epi32 (hi, SPLIT_BITS), lo);
}

/* [r g b 0] sums of two outputs (low lane: pixels at @p0, high lane: @p1)
 * whose weights are at @w, rounded and shifted down to 8-bit range (not
 * yet clipped). @groups and @four are constants where this is inlined. */
__attribute__((target ("avx2"), always_inline))
static inline __m256i
pair_sums (const guint8 * p0, const guint8 * p1, const __m256i * w,
    guint groups, GroupMasks full, GroupMasks last, gboolean four)
{
  const __m256i half = _mm256_set1_epi32 (1 << (PRECISION_BITS - 1));
  __m256i sums;
  guint g;

  /* whole groups of 4 taps with @full's masks, then the last with @last's */
  sums = group_sums (p0 + 12 * (groups - 1), p1 + 12 * (groups - 1),
      w + 4 * (groups - 1), last, four);
  for (g = 0; g + 1 < groups; g++)
    sums = _mm256_add_epi32 (sums, group_sums (p0 + 12 * g, p1 + 12 * g,
            w + 4 * g, full, TRUE));
  return _mm256_srai_epi32 (_mm256_add_epi32 (sums, half), PRECISION_BITS);
}

/* pair_sums() of outputs @k and @j, whose windows start at input pixels
 * @first[k] and @first[j] and weights at @w, in a row that starts at input
 * pixel @in_start */
__attribute__((target ("avx2"), always_inline))
static inline __m256i
pair_at (const gint * first, const guint8 * in, gint in_start, guint k,
    guint j, const __m256i * w, guint groups, GroupMasks full,
    GroupMasks last, gboolean four)
{
  return pair_sums (in + (gsize) (first[k] - in_start) * 3,
      in + (gsize) (first[j] - in_start) * 3, w, groups, full, last, four);
}

/* The same sums as row_rgb_taps: eight outputs per step, then pairs,
 * clipped and stored. Reads 16 bytes from the start of each group of 4
 * taps of a window (callers leave 16 bytes of slack after each row);
 * writes nothing past the row. Inlined per tap count class so that the
 * masks stay in registers. */
__attribute__((target ("avx2"), always_inline))
static inline void
row_rgb_avx2_impl (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint8 * out, guint groups, gboolean four)
{
  /* dwords [i i+2 i+4 i+6 | i+1 i+3 i+5 i+7] -> in order */
  const __m256i order = _mm256_setr_epi32 (0, 4, 1, 5, 2, 6, 3, 7);
  /* [r g b 0] x 4 -> 12 bytes, in each lane */
  const __m256i rgb = _mm256_setr_epi8 (0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13,
      14, -1, -1, -1, -1, 0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1,
      -1);
  const GroupMasks m0 = group_masks (4);
  const GroupMasks m1 = group_masks (axis->taps - 4 * (groups - 1));
  /* locals: the stores to @out may alias the axis, which would otherwise
   * be read again for every output */
  const gint *first = axis->first;
  const __m256i *w = (const __m256i *) axis->split;
  const gsize pair_step = groups * 4;   /* vectors of weights per pair */
  guint i = 0, n = axis->out_size;

  /* eight outputs a step: more independent sums in flight, one pack. Each
   * lane's 16-byte store ends with 4 zero bytes, rewritten by the next
   * outputs: at least 2 must follow (the pair loop does the rest) */
  for (; i + 10 <= n; i += 8, w += 4 * pair_step) {
    __m256i a = pair_at (first, in, in_start, i, i + 1, w, groups, m0, m1,
        four);
    __m256i b = pair_at (first, in, in_start, i + 2, i + 3, w + pair_step,
        groups, m0, m1, four);
    __m256i c = pair_at (first, in, in_start, i + 4, i + 5,
        w + 2 * pair_step, groups, m0, m1, four);
    __m256i d = pair_at (first, in, in_start, i + 6, i + 7,
        w + 3 * pair_step, groups, m0, m1, four);
    __m256i packed = _mm256_packus_epi16 (_mm256_packs_epi32 (a, b),
        _mm256_packs_epi32 (c, d));

    packed = _mm256_shuffle_epi8 (_mm256_permutevar8x32_epi32 (packed, order),
        rgb);
    _mm_storeu_si128 ((__m128i *) (out + 3 * i),
        _mm256_castsi256_si128 (packed));
    _mm_storeu_si128 ((__m128i *) (out + 3 * i + 12),
        _mm256_extracti128_si256 (packed, 1));
  }
  for (; i < n; i += 2, w += pair_step) {
    /* an odd last output is computed twice, once per lane */
    __m256i a = pair_at (first, in, in_start, i, MIN (i + 1, n - 1), w,
        groups, m0, m1, four);
    __m128i bytes = _mm_packs_epi32 (_mm256_castsi256_si128 (a),
        _mm256_extracti128_si256 (a, 1));
    guint32 v[2];
    guint o;

    bytes = _mm_packus_epi16 (bytes, bytes);
    v[0] = (guint32) _mm_cvtsi128_si32 (bytes);
    v[1] = (guint32) _mm_extract_epi32 (bytes, 1);
    for (o = 0; o < 2 && i + o < n; o++) {
      out[3 * (i + o)] = v[o] & 0xff;
      out[3 * (i + o) + 1] = (v[o] >> 8) & 0xff;
      out[3 * (i + o) + 2] = (v[o] >> 16) & 0xff;
    }
  }
}

__attribute__((target ("avx2")))
static void
row_rgb_avx2 (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint8 * out)
{
  /* taps of the last group: 1-2 take one pixel shuffle, 3-4 two */
  guint last = axis->taps - 4 * ((axis->taps - 1) / 4);

  /* constants in each call, so that no branch is left in the loop; past
   * 8 taps (strong downscales, rare) the group count stays a variable */
  if (axis->taps <= 4 && last > 2)
    row_rgb_avx2_impl (axis, in, in_start, out, 1, TRUE);
  else if (axis->taps <= 4)
    row_rgb_avx2_impl (axis, in, in_start, out, 1, FALSE);
  else if (axis->taps <= 8 && last > 2)
    row_rgb_avx2_impl (axis, in, in_start, out, 2, TRUE);
  else if (axis->taps <= 8)
    row_rgb_avx2_impl (axis, in, in_start, out, 2, FALSE);
  else
    row_rgb_avx2_impl (axis, in, in_start, out, (axis->taps + 3) / 4,
        last > 2);
}
#endif

/* The fast axes' RGB row: two taps per pmaddwd, straight into [r g b 0]
 * (no horizontal adds), 16-bit weights. Up to 8 taps; the same 16 bytes
 * of slack as row_rgb_sse41. */
__attribute__((target ("sse4.1")))
static void
row_rgb_pairs (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint8 * out)
{
  const guint quads = (axis->taps + 3) / 4;
  /* the first quad's masks, and the second's (its taps: taps - 4) */
  const __m128i lo = _mm_loadu_si128 ((const __m128i *) group_mask
      (axis->taps, 0));
  const __m128i hi = _mm_loadu_si128 ((const __m128i *) group_mask
      (axis->taps, 1));
  const __m128i lo2 = _mm_loadu_si128 ((const __m128i *) group_mask
      (axis->taps > 4 ? axis->taps - 4 : 4, 0));
  const __m128i hi2 = _mm_loadu_si128 ((const __m128i *) group_mask
      (axis->taps > 4 ? axis->taps - 4 : 4, 1));
  const __m128i half = _mm_set1_epi32 (1 << (FAST_PRECISION_BITS - 1));
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
      sums = _mm_add_epi32 (sums, _mm_madd_epi16 (_mm_shuffle_epi8 (px, lo2),
              _mm_loadu_si128 (w + 2)));
      sums = _mm_add_epi32 (sums, _mm_madd_epi16 (_mm_shuffle_epi8 (px, hi2),
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
#ifdef HAVE_AVX2_KERNEL
    if (axis->split && simd_limit >= 2) {
      row_rgb_avx2 (axis, in, in_start, out);
      return;
    }
#endif
#ifdef HAVE_SSE41_KERNEL
    if (axis->pairs && simd_limit >= 1 && have_sse41 ()) {
      row_rgb_pairs (axis, in, in_start, out);
      return;
    }
    if (axis->taps <= 8 && simd_limit >= 1 && have_sse41 ()) {
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

#ifdef HAVE_AVX2_KERNEL
/* One output row of the vertical pass, 16 bytes at a time with the sums in
 * registers (the tap-major path below goes through memory per tap): each
 * byte times its tap's 22-bit weight as 32-bit products, exact. The
 * normalised weights keep every sum within 255 * 2^22. @rows[t] is the
 * window's row t. */
__attribute__((target ("avx2")))
static void
column_avx2 (const guint8 * const *rows, const gint32 * w, gint n,
    gsize row_bytes, guint bits, guint8 * out)
{
  const __m256i half = _mm256_set1_epi32 (1 << (bits - 1));
  const __m128i shift = _mm_cvtsi32_si128 ((gint) bits);
  __m256i wv[AVX2_MAX_TAPS];
  gsize x = 0;
  gint t;

  for (t = 0; t < n; t++)
    wv[t] = _mm256_set1_epi32 (w[t]);
  for (; x + 16 <= row_bytes; x += 16) {
    __m256i lo = half, hi = half, packed;
    __m128i bytes;

    for (t = 0; t < n; t++) {
      __m128i px = _mm_loadu_si128 ((const __m128i *) (rows[t] + x));
      lo = _mm256_add_epi32 (lo, _mm256_mullo_epi32 (_mm256_cvtepu8_epi32
              (px), wv[t]));
      hi = _mm256_add_epi32 (hi, _mm256_mullo_epi32 (_mm256_cvtepu8_epi32
              (_mm_srli_si128 (px, 8)), wv[t]));
    }
    lo = _mm256_sra_epi32 (lo, shift);
    hi = _mm256_sra_epi32 (hi, shift);
    /* [lo0-3 hi0-3 | lo4-7 hi4-7] -> lanes in order, then bytes */
    packed = _mm256_permute4x64_epi64 (_mm256_packs_epi32 (lo, hi), 0xd8);
    bytes = _mm_packus_epi16 (_mm256_castsi256_si128 (packed),
        _mm256_extracti128_si256 (packed, 1));
    _mm_storeu_si128 ((__m128i *) (out + x), bytes);
  }
  for (; x < row_bytes; x++) {
    gint32 acc = 1 << (bits - 1);
    for (t = 0; t < n; t++)
      acc += rows[t][x] * w[t];
    out[x] = clip8 (acc, bits);
  }
}
#endif

void
gst_spdl_resample_column_rows (const GstSpdlResampleAxis * axis,
    guint out_row, const guint8 * const *rows, gsize row_bytes, guint8 * out)
{
  const gint32 half = 1 << (axis->bits - 1);
  const gint32 *w = axis->weights + out_row * axis->ksize;
  GstSpdlResampleAxis *scratch = (GstSpdlResampleAxis *) axis;
  gint t, n = axis->count[out_row];
  gsize x;

  if (n == 0) {
    memset (out, 0, row_bytes);
    return;
  }
  if (axis->identity) {
    memcpy (out, rows[0], row_bytes);
    return;
  }
#ifdef HAVE_AVX2_KERNEL
  if (n <= AVX2_MAX_TAPS && have_avx2 ()) {
    column_avx2 (rows, w, n, row_bytes, axis->bits, out);
    return;
  }
#endif
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
      accumulate_row (scratch->acc, rows[t], w[t], row_bytes);
  store_row (out, scratch->acc, row_bytes, axis->bits);
}

/* windows of up to this many rows need no allocation */
#define COLUMN_STACK_ROWS 64

void
gst_spdl_resample_column (const GstSpdlResampleAxis * axis, guint out_row,
    const guint8 * rows, gint rows_start, gsize row_stride, gsize row_bytes,
    guint8 * out)
{
  const guint8 *stack[COLUMN_STACK_ROWS] = { NULL };
  const guint8 **window = stack;
  gint t, n = axis->count[out_row];

  if (n > COLUMN_STACK_ROWS)
    window = g_new (const guint8 *, n);
  for (t = 0; t < n; t++)
    window[t] = rows + (gsize) (axis->first[out_row] + t - rows_start) *
        row_stride;
  gst_spdl_resample_column_rows (axis, out_row, window, row_bytes, out);
  if (window != stack)
    g_free (window);
}
