/* GStreamer SPDL: where a decoder writes its output rows
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

/* Input rows the ring must hold: from each output row's first to the last
 * row read by it or any row before it (output rows are written in order) */
static guint
ring_capacity (const GstSpdlResampleAxis * vaxis)
{
  gint last = G_MININT, span = 1;
  guint r;

  for (r = 0; r < vaxis->out_size; r++) {
    if (vaxis->count[r] == 0)
      continue;
    last = MAX (last, vaxis->first[r] + vaxis->count[r] - 1);
    span = MAX (span, last - vaxis->first[r] + 1);
  }
  return span;
}

void
gst_spdl_row_ring_begin (GstSpdlRowRing * ring, const GstSpdlOutput * out,
    const GstSpdlResampleAxis * vaxis, gint y0, gsize row_bytes,
    guint channels)
{
  g_return_if_fail (out->n_planes == 1 || channels == 3);
  ring->out = out;
  ring->vaxis = vaxis;
  ring->y0 = y0;
  ring->row_bytes = row_bytes;
  /* rows on their own cache lines */
  ring->row_stride = (row_bytes + 63) & ~(gsize) 63;
  ring->capacity = ring_capacity (vaxis);
  ring->next_out = 0;
  ring->next_in = y0;
  if (ring->rows_size < ring->capacity * ring->row_stride) {
    g_aligned_free (ring->rows);
    ring->rows_size = ring->capacity * ring->row_stride;
    ring->rows = g_aligned_alloc (ring->rows_size, 1, 64);
  }
  if (ring->window_size < vaxis->ksize) {
    g_free (ring->window);
    ring->window_size = vaxis->ksize;
    ring->window = g_new (const guint8 *, ring->window_size);
  }
  /* the column kernel writes and the split reads exactly row_bytes */
  if (out->n_planes > 1 && ring->packed_size < row_bytes) {
    g_free (ring->packed);
    ring->packed_size = row_bytes;
    ring->packed = g_malloc (ring->packed_size);
  }
}

static void
write_row (GstSpdlRowRing * ring, guint r)
{
  const GstSpdlOutput *out = ring->out;
  const GstSpdlResampleAxis *vaxis = ring->vaxis;
  gint t;

  for (t = 0; t < vaxis->count[r]; t++)
    ring->window[t] = gst_spdl_row_ring_row (ring, vaxis->first[r] + t);
  if (out->n_planes == 1) {
    guint8 *dst = out->data[0] + r * out->stride[0];

    gst_spdl_resample_column_rows (vaxis, r, ring->window, ring->row_bytes,
        dst);
    /* defined bytes in the rows' padding too */
    if (out->zero_padding && out->stride[0] > ring->row_bytes)
      memset (dst + ring->row_bytes, 0, out->stride[0] - ring->row_bytes);
  } else {
    guint p, width = ring->row_bytes / 3;

    gst_spdl_resample_column_rows (vaxis, r, ring->window, ring->row_bytes,
        ring->packed);
    split_row (out, r, ring->packed, width);
    for (p = 0; out->zero_padding && p < 3; p++)
      if (out->stride[p] > width)
        memset (out->data[p] + r * out->stride[p] + width, 0,
            out->stride[p] - width);
  }
}

void
gst_spdl_row_ring_commit (GstSpdlRowRing * ring, gint y)
{
  const GstSpdlResampleAxis *vaxis = ring->vaxis;

  /* rows come one after another: a gap would read a stale row */
  g_return_if_fail (y == ring->next_in);
  ring->next_in++;
  /* the output rows whose windows end at or before row @y */
  while (ring->next_out < vaxis->out_size) {
    guint r = ring->next_out;

    if (vaxis->count[r] > 0 && vaxis->first[r] + vaxis->count[r] - 1 > y)
      break;
    write_row (ring, r);
    ring->next_out++;
  }
}

gboolean
gst_spdl_row_ring_finish (GstSpdlRowRing * ring)
{
  return ring->next_out == ring->vaxis->out_size;
}

void
gst_spdl_row_ring_clear (GstSpdlRowRing * ring)
{
  g_clear_pointer (&ring->rows, g_aligned_free);
  g_clear_pointer (&ring->window, g_free);
  g_clear_pointer (&ring->packed, g_free);
  ring->rows_size = ring->packed_size = 0;
  ring->window_size = 0;
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
