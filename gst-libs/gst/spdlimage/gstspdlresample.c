/* GStreamer SPDL: antialiased resampling
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
#include "gstspdlresample-private.h"

#include <math.h>
#include <string.h>

/* highest kernel level in use: 2 AVX2, 1 SSE4.1, 0 plain C */
static guint simd_limit = 2;

void
gst_spdl_resample_limit_simd (guint level)
{
  simd_limit = level;
}

static inline gdouble
triangle (gdouble x)
{
  x = fabs (x);
  return x < 1.0 ? 1.0 - x : 0.0;
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

#ifdef HAVE_AVX2_KERNEL
  /* the exact AVX2 kernels resample faster than the fast SSE4.1 one (which
   * takes at most 8 taps): where they run, exact=false is exact here */
  if (fast && simd_limit >= 2 && gst_spdl_resample_have_avx2 ())
    fast = FALSE;
#endif
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
  if (!fast && axis->uniform && axis->taps <= AVX2_MAX_TAPS &&
      simd_limit >= 2 && gst_spdl_resample_have_avx2 ())
    gst_spdl_resample_split_weights_avx2 (axis);
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
      gst_spdl_resample_row_rgb_avx2 (axis, in, in_start, out);
      return;
    }
#endif
#ifdef HAVE_SSE41_KERNEL
    if (axis->pairs && simd_limit >= 1 && gst_spdl_resample_have_sse41 ()) {
      gst_spdl_resample_row_rgb_pairs_sse41 (axis, in, in_start, out);
      return;
    }
    if (axis->taps <= 8 && simd_limit >= 1 && gst_spdl_resample_have_sse41 ()) {
      gst_spdl_resample_row_rgb_sse41 (axis, in, in_start, out);
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
  if (n <= AVX2_MAX_TAPS && simd_limit >= 2 && gst_spdl_resample_have_avx2 ()) {
    gst_spdl_resample_column_avx2 (rows, w, n, row_bytes, axis->bits, out);
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
