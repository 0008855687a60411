/* GStreamer SPDL: where a decoder writes its output rows
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

/* The vertical pass of a separable resize as the horizontal pass delivers
 * rows: input row y goes into gst_spdl_row_ring_row (ring, y), rows one
 * after another from @y0; gst_spdl_row_ring_commit (ring, y) then
 * writes every output row whose window is complete. The ring holds only
 * the rows that pending windows still need (a few, not the whole image),
 * so that they are still in cache when read back, and each output row is
 * written once, right after its last input row. Bytes past a packed row's
 * pixels are zeroed. */
typedef struct
{
  const GstSpdlOutput *out;
  const GstSpdlResampleAxis *vaxis;
  gint y0;                      /* first input row */
  gsize row_bytes, row_stride;
  guint capacity;               /* rows held */
  guint next_out;               /* next output row to write */
  gint next_in;                 /* next input row to commit */
  /* reused from image to image */
  guint8 *rows;
  gsize rows_size;
  const guint8 **window;
  guint window_size;
  guint8 *packed;               /* a planar output's packed row */
  gsize packed_size;
} GstSpdlRowRing;

/* For output @out resampled by @vaxis from input rows of @row_bytes bytes
 * (@channels interleaved), from input row @y0 (the axis' range). */
void gst_spdl_row_ring_begin (GstSpdlRowRing * ring, const GstSpdlOutput * out,
    const GstSpdlResampleAxis * vaxis, gint y0, gsize row_bytes,
    guint channels);
static inline guint8 *
gst_spdl_row_ring_row (const GstSpdlRowRing * ring, gint y)
{
  return ring->rows + ((guint) (y - ring->y0) % ring->capacity) *
      ring->row_stride;
}
void gst_spdl_row_ring_commit (GstSpdlRowRing * ring, gint y);
/* TRUE if every output row has been written (all the rows its windows
 * read were committed). */
gboolean gst_spdl_row_ring_finish (GstSpdlRowRing * ring);
void gst_spdl_row_ring_clear (GstSpdlRowRing * ring);

/* @rows black rows of @width pixels (all padding). */
void gst_spdl_output_fill_black (const GstSpdlOutput * out, guint rows,
    guint width, guint channels);

G_END_DECLS

#endif /* __GST_SPDL_OUTPUT_H__ */
