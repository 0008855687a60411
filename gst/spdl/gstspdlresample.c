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

#define PRECISION_BITS (32 - 8 - 2)

static inline gdouble
triangle (gdouble x)
{
  x = fabs (x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

static inline guint8
clip8 (gint32 acc)
{
  acc >>= PRECISION_BITS;
  return acc < 0 ? 0 : acc > 255 ? 255 : (guint8) acc;
}

static gboolean
axis_is_identity (const GstSpdlResampleAxis * axis)
{
  const gint32 one = 1 << PRECISION_BITS;
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

void
gst_spdl_resample_axis_init (GstSpdlResampleAxis * axis, gdouble clip_start,
    guint clip_size, gdouble scale, gdouble offset, guint out_size,
    gint64 virtual_size, gboolean mirror)
{
  gdouble filterscale = MAX (scale, 1.0);
  gdouble support = filterscale;
  gdouble *k;
  guint i;

  axis->out_size = out_size;
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
          -0.5 + w * (1 << PRECISION_BITS) : 0.5 + w * (1 << PRECISION_BITS));
    }
    axis->first[i] = xmin + (gint) clip_start;
    axis->count[i] = MAX (xmax, 0);
  }
  g_free (k);
  if (mirror)
    axis_mirror (axis);
  axis->identity = axis_is_identity (axis);
}

void
gst_spdl_resample_axis_clear (GstSpdlResampleAxis * axis)
{
  g_clear_pointer (&axis->first, g_free);
  g_clear_pointer (&axis->count, g_free);
  g_clear_pointer (&axis->weights, g_free);
  axis->out_size = 0;
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

void
gst_spdl_resample_row (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint channels, guint8 * out)
{
  const gint32 half = 1 << (PRECISION_BITS - 1);
  guint i;

  if (axis->identity) {
    memcpy (out, in + (gsize) (axis->first[0] - in_start) * channels,
        (gsize) axis->out_size * channels);
    return;
  }
  if (channels == 3) {
    for (i = 0; i < axis->out_size; i++) {
      const gint32 *w = axis->weights + i * axis->ksize;
      const guint8 *p = in + (gsize) (axis->first[i] - in_start) * 3;
      gint32 r = half, g = half, b = half;
      gint t, n = axis->count[i];

      for (t = 0; t < n; t++, p += 3) {
        r += p[0] * w[t];
        g += p[1] * w[t];
        b += p[2] * w[t];
      }
      if (n == 0)
        r = g = b = 0;
      out[3 * i] = clip8 (r);
      out[3 * i + 1] = clip8 (g);
      out[3 * i + 2] = clip8 (b);
    }
  } else {
    for (i = 0; i < axis->out_size; i++) {
      const gint32 *w = axis->weights + i * axis->ksize;
      const guint8 *p = in + (gsize) (axis->first[i] - in_start) * channels;
      guint c;

      for (c = 0; c < channels; c++) {
        gint32 acc = axis->count[i] ? half : 0;
        gint t;
        for (t = 0; t < axis->count[i]; t++)
          acc += p[t * channels + c] * w[t];
        out[i * channels + c] = clip8 (acc);
      }
    }
  }
}

void
gst_spdl_resample_column (const GstSpdlResampleAxis * axis, guint out_row,
    const guint8 * rows, gint rows_start, gsize row_stride, gsize row_bytes,
    guint8 * out)
{
  const gint32 half = 1 << (PRECISION_BITS - 1);
  const gint32 *w = axis->weights + out_row * axis->ksize;
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
  /* row-wise accumulation: the inner loop runs over contiguous bytes with
   * one weight, which the compiler vectorizes */
  for (x = 0; x < row_bytes; x++) {
    gint32 acc = half;
    for (t = 0; t < n; t++)
      acc += base[t * row_stride + x] * w[t];
    out[x] = clip8 (acc);
  }
}
