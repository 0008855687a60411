/* GStreamer SPDL: 8-bit 4:2:0 YCbCr to packed RGB, exact and rounded
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_YUV_H__
#define __GST_SPDL_YUV_H__

#include <gst/video/video.h>

G_BEGIN_DECLS

/* Per code value, 16 fraction bits; the luma term carries the rounding. */
typedef struct
{
  gint32 y[256], rv[256], gu[256], gv[256], bu[256];
} GstSpdlYuvTables;

/* A frame's planes: chroma subsampled 2x2, @u_pstride bytes from one
 * chroma sample to the next (1 planar, 2 semi-planar). */
typedef struct
{
  const guint8 *y, *u, *v;
  gint y_stride, u_stride, v_stride;
  gint u_pstride, v_pstride;
} GstSpdlYuvPlanes;

/* Whether @format is one gst_spdl_yuv_convert() takes (I420, YV12, NV12,
 * NV21). */
gboolean gst_spdl_yuv_is_supported (GstVideoFormat format);

/* The tables for @info's matrix and range (an unknown matrix: BT.601). */
void gst_spdl_yuv_tables_init (GstSpdlYuvTables * tables,
    const GstVideoInfo * info);

/* @frame's planes */
void gst_spdl_yuv_planes_from_frame (GstSpdlYuvPlanes * planes,
    const GstVideoFrame * frame);

/* Pixels [@x0, @x1) x [@y0, @y1) to RGB at the same places in @rgb
 * (@stride bytes a row); each chroma sample is taken for its 2x2 pixels
 * (FFmpeg's unscaled rgb24 conversion). @scratch: 3 * (@x1 - @x0 + 2)
 * gint32. The rest of @rgb is left as it is. */
void gst_spdl_yuv_convert (const GstSpdlYuvTables * tables,
    const GstSpdlYuvPlanes * planes, guint x0, guint x1, guint y0, guint y1,
    guint8 * rgb, gsize stride, gint32 * scratch);

/* Highest kernel level used: 2 AVX2, 1 SSE4.1, 0 plain C (tests compare
 * them; the result is the same bit for bit). */
void gst_spdl_yuv_limit_simd (guint level);

G_END_DECLS

#endif /* __GST_SPDL_YUV_H__ */
