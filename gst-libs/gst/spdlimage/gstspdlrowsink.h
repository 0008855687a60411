/* GStreamer SPDL: whole decoded rows into a resized output
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_ROW_SINK_H__
#define __GST_SPDL_ROW_SINK_H__

#include <glib.h>

#include "gstspdlgeometry.h"
#include "gstspdloutput.h"
#include "gstspdlresample.h"

G_BEGIN_DECLS

/* Decoded rows of a whole-pixel decoder (PNG, WebP, BMP, GIF, TIFF) into
 * the output: each row the filter reads is converted to the output's
 * channels and resampled horizontally as it arrives, then vertically as
 * soon as an output row's rows are in (rows arrive in order). */
typedef struct
{
  GstSpdlResampleAxisCache axes;
  const GstSpdlResampleAxis *haxis, *vaxis;     /* of this image, in axes */
  gint x0, x1, y0, y1;          /* what the filter reads; y1 = 0: none */
  guint width, channels;        /* image width, output channels */
  gsize hrow_bytes;
  GstSpdlRowRing ring;          /* horizontally resampled rows */
  guint8 *conv;                 /* one converted row */
  gsize conv_size;
} GstSpdlRowSink;

typedef enum
{
  GST_SPDL_PIXELS_GRAY,         /* 1 byte */
  GST_SPDL_PIXELS_GRAY_ALPHA,
  GST_SPDL_PIXELS_RGB,
  GST_SPDL_PIXELS_RGBA,
  GST_SPDL_PIXELS_GRAY16,       /* big-endian; PIL's "I": clipped to 255 */
  GST_SPDL_PIXELS_GRAY_ALPHA16, /* big-endian; PIL keeps the high byte */
  GST_SPDL_PIXELS_RGB16,
  GST_SPDL_PIXELS_RGBA16,
} GstSpdlPixels;

/* @fast: the fast resampler (params->exact FALSE) */
void gst_spdl_row_sink_plan (GstSpdlRowSink * sink, const GstSpdlOutput * out,
    const GstSpdlGeometry * geom, guint width, guint height, guint channels,
    gboolean fast);
/* The pixels [@x0, @x1) x [@y0, @y1) of the image the output of @geom
 * reads (what the sink will read of the rows it wants); FALSE: none. */
gboolean gst_spdl_row_sink_window (GstSpdlRowSink * sink,
    const GstSpdlGeometry * geom, gboolean fast, gint * x0, gint * x1,
    gint * y0, gint * y1);
/* Rows y0 .. y1 - 1 are needed: TRUE if row @y is one. */
static inline gboolean
gst_spdl_row_sink_wants (const GstSpdlRowSink * sink, gint y)
{
  return y >= sink->y0 && y < sink->y1;
}
/* @row: the image's whole row @y, with 16 readable bytes after its end. */
void gst_spdl_row_sink_push (GstSpdlRowSink * sink, gint y,
    const guint8 * row, GstSpdlPixels pixels);
void gst_spdl_row_sink_finish (GstSpdlRowSink * sink,
    const GstSpdlOutput * out);
void gst_spdl_row_sink_clear (GstSpdlRowSink * sink);

/* zeroed (the SIMD kernels read slack bytes), grown as needed */
guint8 *gst_spdl_ensure_buffer (guint8 ** buf, gsize * size, gsize need);
/* Same for a whole image, whose size comes from the file: NULL (and no
 * buffer) when the memory cannot be had, instead of GLib's abort. */
guint8 *gst_spdl_try_ensure_buffer (guint8 ** buf, gsize * size, gsize need);
/* Frees a whole-image buffer larger than a typical image after a decode,
 * so a thread does not keep its largest image's memory for good. */
void gst_spdl_release_large_buffer (guint8 ** buf, gsize * size);

G_END_DECLS

#endif /* __GST_SPDL_ROW_SINK_H__ */
