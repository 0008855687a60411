/* GStreamer SPDL plugin: where a decoder writes its output rows
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_OUTPUT_H__
#define __GST_SPDL_OUTPUT_H__

#include <glib.h>

#include "gstspdlresample.h"

G_BEGIN_DECLS

/* A decoder's output: packed rows (one plane: RGB or GRAY8), or three
 * planes R, G, B (RGBP; an NCHW batch slot), each row @stride bytes
 * apart. Planar rows are split from the packed row the last resampling
 * stage computes, while it is in L1: pixels are written once. */
typedef struct
{
  guint8 *data[3];
  gsize stride[3];
  guint n_planes;               /* 1 or 3 */
  /* zero the bytes between a packed row's end and the next row (our own
   * buffers); a foreign buffer's padding may be another row's margin */
  gboolean zero_padding;
} GstSpdlOutput;

void gst_spdl_output_init_packed (GstSpdlOutput * out, guint8 * data,
    gsize stride);

/* Output rows 0 .. vaxis->out_size - 1 of a separable resize whose
 * horizontal pass left rows @hrows (input row @y0 first, @hrow_bytes
 * each, @channels interleaved channels). Bytes past a packed row's
 * pixels are zeroed. */
void gst_spdl_output_resample_rows (const GstSpdlOutput * out,
    const GstSpdlResampleAxis * vaxis, const guint8 * hrows, gint y0,
    gsize hrow_bytes, guint channels);

/* @rows black rows of @width pixels (all padding). */
void gst_spdl_output_fill_black (const GstSpdlOutput * out, guint rows,
    guint width, guint channels);

G_END_DECLS

#endif /* __GST_SPDL_OUTPUT_H__ */
