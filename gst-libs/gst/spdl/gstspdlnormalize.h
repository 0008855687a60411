/* GStreamer SPDL: normalized float conversion of image rows
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_NORMALIZE_H__
#define __GST_SPDL_NORMALIZE_H__

#include <glib.h>

#include "gstspdltensor.h"

G_BEGIN_DECLS

#define GST_SPDL_NORMALIZE_MAX_CHANNELS 4

/* Turns uint8 pixels into (x / 255 - mean[c]) / std[c], as torchvision's
 * Normalize(mean, std)(ToTensor()(img)), folded into one multiply-add per
 * value: x * scale[c] + offset[c]. Rows are @width pixels of @channels. */
typedef struct
{
  GstSpdlDType dtype;           /* float32, float16 or bfloat16 */
  guint width, channels;
  gboolean planar;              /* rows go to one plane per channel */
  gfloat scale[GST_SPDL_NORMALIZE_MAX_CHANNELS];
  gfloat offset[GST_SPDL_NORMALIZE_MAX_CHANNELS];
  /* scale/offset of each value of a row: interleaved (width * channels), or
   * planar (channels runs of width) */
  gfloat *scale_row, *offset_row;
  guint8 *plane_row;            /* a row's channels, deinterleaved */
} GstSpdlNormalizer;

/* @mean and @std hold 0 (0 and 1), 1 (all channels) or @channels values;
 * FALSE with @error set otherwise, or for a zero std. */
gboolean gst_spdl_normalizer_init (GstSpdlNormalizer * norm,
    GstSpdlDType dtype, const gdouble * mean, guint n_mean,
    const gdouble * std, guint n_std, guint width, guint channels,
    gboolean planar, GError ** error);
void gst_spdl_normalizer_clear (GstSpdlNormalizer * norm);

/* Rows of @width pixels from now on (images of different sizes in one
 * batch); nothing to do when the width stays. */
void gst_spdl_normalizer_set_width (GstSpdlNormalizer * norm, guint width);

/* Converts one interleaved row. Planar: value (x, c) goes to
 * @dst + (c * plane_elems + x) elements; interleaved: @dst holds
 * width * channels elements. */
void gst_spdl_normalize_row (GstSpdlNormalizer * norm, const guint8 * src,
    gpointer dst, gsize plane_elems);

/* One RGB row into three planes (SSSE3 where the machine has it). */
void gst_spdl_deinterleave_rgb_row (const guint8 * row, guint8 * r,
    guint8 * g, guint8 * b, guint width);

/* Round-to-nearest-even conversions, exposed for tests. */
guint16 gst_spdl_float_to_half (gfloat f);
guint16 gst_spdl_float_to_bfloat16 (gfloat f);

G_END_DECLS

#endif /* __GST_SPDL_NORMALIZE_H__ */
