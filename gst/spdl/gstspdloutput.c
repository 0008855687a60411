/* GStreamer SPDL plugin: where a decoder writes its output rows
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

#include "gstspdloutput.h"
#include "gstspdlnormalize.h"

#include <string.h>

void
gst_spdl_output_init_packed (GstSpdlOutput * out, guint8 * data, gsize stride)
{
  memset (out, 0, sizeof (*out));
  out->data[0] = data;
  out->stride[0] = stride;
  out->n_planes = 1;
  out->zero_padding = TRUE;
}

static void
split_row (const GstSpdlOutput * out, guint r, const guint8 * row,
    guint width)
{
  gst_spdl_deinterleave_rgb_row (row, out->data[0] + r * out->stride[0],
      out->data[1] + r * out->stride[1], out->data[2] + r * out->stride[2],
      width);
}

void
gst_spdl_output_resample_rows (const GstSpdlOutput * out,
    const GstSpdlResampleAxis * vaxis, const guint8 * hrows, gint y0,
    gsize hrow_bytes, guint channels)
{
  guint8 *row = NULL;
  guint r;

  if (out->n_planes == 1) {
    gsize stride = out->stride[0];
    for (r = 0; r < vaxis->out_size; r++) {
      guint8 *dst = out->data[0] + r * stride;
      gst_spdl_resample_column (vaxis, r, hrows, y0, hrow_bytes, hrow_bytes,
          dst);
      /* defined bytes in the rows' padding too */
      if (out->zero_padding && stride > hrow_bytes)
        memset (dst + hrow_bytes, 0, stride - hrow_bytes);
    }
    return;
  }
  g_return_if_fail (channels == 3);
  /* slack for the SIMD kernels */
  row = g_malloc (hrow_bytes + 64);
  for (r = 0; r < vaxis->out_size; r++) {
    gst_spdl_resample_column (vaxis, r, hrows, y0, hrow_bytes, hrow_bytes,
        row);
    split_row (out, r, row, hrow_bytes / 3);
  }
  g_free (row);
}

void
gst_spdl_output_fill_black (const GstSpdlOutput * out, guint rows,
    guint width, guint channels)
{
  guint p, r;

  for (p = 0; p < out->n_planes; p++) {
    gsize bytes = out->n_planes == 1 && out->zero_padding ? out->stride[0] :
        (gsize) width * (out->n_planes == 1 ? channels : 1);
    for (r = 0; r < rows; r++)
      memset (out->data[p] + r * out->stride[p], 0, bytes);
  }
}
