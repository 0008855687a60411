/* GStreamer SPDL: 8-bit 4:2:0 YCbCr to packed RGB, exact and rounded
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* What H.264, VP9 and AV1 decoders give, converted as FFmpeg's unscaled
 * rgb24 conversion does (each chroma sample for its 2x2 pixels), exact
 * and rounded: GstVideoConverter's 8-bit I420 -> RGB path is on average
 * 1.5 levels under the exact values (its fixed point keeps 6 to 8 bits).
 * A pixel is table lookups and sums of integers, so the SSE4.1 and AVX2
 * kernels (gstspdlyuv-x86.c) give the same bytes as the loop here. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlyuv-private.h"

#include <math.h>

/* highest kernel level in use: 2 AVX2, 1 SSE4.1, 0 plain C */
static guint simd_limit = 2;

void
gst_spdl_yuv_limit_simd (guint level)
{
  simd_limit = level;
}

gboolean
gst_spdl_yuv_is_supported (GstVideoFormat format)
{
  return format == GST_VIDEO_FORMAT_I420 || format == GST_VIDEO_FORMAT_YV12 ||
      format == GST_VIDEO_FORMAT_NV12 || format == GST_VIDEO_FORMAT_NV21;
}

void
gst_spdl_yuv_tables_init (GstSpdlYuvTables * t, const GstVideoInfo * in)
{
  const GstVideoColorimetry *cinfo = &GST_VIDEO_INFO_COLORIMETRY (in);
  gint offset[GST_VIDEO_MAX_COMPONENTS], scale[GST_VIDEO_MAX_COMPONENTS];
  gdouble kr, kb, kg;
  guint i;

  /* unknown: BT.601, FFmpeg's default for an untagged stream (the
   * video chain gives the stream's own, see set_stream_colorimetry) */
  if (!gst_video_color_matrix_get_Kr_Kb (cinfo->matrix, &kr, &kb))
    gst_video_color_matrix_get_Kr_Kb (GST_VIDEO_COLOR_MATRIX_BT601, &kr,
        &kb);
  kg = 1.0 - kr - kb;
  gst_video_color_range_offsets (cinfo->range, in->finfo, offset, scale);
  for (i = 0; i < 256; i++) {
    gdouble y = 255.0 * ((gint) i - offset[0]) / scale[0];
    gdouble c = 255.0 * ((gint) i - offset[1]) / scale[1];

    t->y[i] = (gint32) floor (y * 65536.0 + 0.5) + 32768;
    t->rv[i] = (gint32) floor (c * 2.0 * (1.0 - kr) * 65536.0 + 0.5);
    t->bu[i] = (gint32) floor (c * 2.0 * (1.0 - kb) * 65536.0 + 0.5);
    t->gu[i] = (gint32) floor (-c * 2.0 * kb * (1.0 - kb) / kg * 65536.0 +
        0.5);
    t->gv[i] = (gint32) floor (-c * 2.0 * kr * (1.0 - kr) / kg * 65536.0 +
        0.5);
  }
}

void
gst_spdl_yuv_planes_from_frame (GstSpdlYuvPlanes * p,
    const GstVideoFrame * frame)
{
  p->y = GST_VIDEO_FRAME_COMP_DATA (frame, 0);
  p->u = GST_VIDEO_FRAME_COMP_DATA (frame, 1);
  p->v = GST_VIDEO_FRAME_COMP_DATA (frame, 2);
  p->y_stride = GST_VIDEO_FRAME_COMP_STRIDE (frame, 0);
  p->u_stride = GST_VIDEO_FRAME_COMP_STRIDE (frame, 1);
  p->v_stride = GST_VIDEO_FRAME_COMP_STRIDE (frame, 2);
  p->u_pstride = GST_VIDEO_FRAME_COMP_PSTRIDE (frame, 1);
  p->v_pstride = GST_VIDEO_FRAME_COMP_PSTRIDE (frame, 2);
}

static inline guint8
clamp_fixed (gint32 v)
{
  return v <= 0 ? 0 : v >= (255 << 16) ? 255 : (guint8) (v >> 16);
}

void
gst_spdl_yuv_convert (const GstSpdlYuvTables * t, const GstSpdlYuvPlanes * p,
    guint x0, guint x1, guint y0, guint y1, guint8 * rgb, gsize stride,
    gint32 * scratch)
{
  /* from an even pixel: a chroma sample's pixel pair is never split */
  guint xs = x0 & ~1u, cx0 = x0 >> 1, nc, x, y, j;
  gint32 *cr = scratch, *cg, *cb;

  if (x0 >= x1 || y0 >= y1)
    return;
  nc = ((x1 - 1) >> 1) - cx0 + 1;
  cg = cr + nc;
  cb = cg + nc;
  for (y = y0; y < y1; y++) {
    const guint8 *ys = p->y + (gssize) y * p->y_stride;
    guint8 *d = rgb + (gsize) y * stride;
    guint done = 0;

    if (y == y0 || (y & 1) == 0) {
      /* the chroma terms of this chroma row, for its two rows */
      const guint8 *us = p->u + (gssize) (y >> 1) * p->u_stride +
          (gssize) cx0 * p->u_pstride;
      const guint8 *vs = p->v + (gssize) (y >> 1) * p->v_stride +
          (gssize) cx0 * p->v_pstride;

      for (j = 0; j < nc; j++) {
        guint cu = us[j * p->u_pstride], cv = vs[j * p->v_pstride];

        cr[j] = t->rv[cv];
        cg[j] = t->gu[cu] + t->gv[cv];
        cb[j] = t->bu[cu];
      }
    }
#ifdef HAVE_YUV_X86_KERNELS
    if (simd_limit >= 2 && __builtin_cpu_supports ("avx2"))
      done = gst_spdl_yuv_row_avx2 (t->y, ys + xs, cr, cg, cb, x1 - xs,
          d + 3 * xs);
    else if (simd_limit >= 1 && __builtin_cpu_supports ("sse4.1"))
      done = gst_spdl_yuv_row_sse41 (t->y, ys + xs, cr, cg, cb, x1 - xs,
          d + 3 * xs);
#endif
    for (x = xs + done; x < x1; x++) {
      gint32 luma = t->y[ys[x]];

      j = (x >> 1) - cx0;
      d[3 * x] = clamp_fixed (luma + cr[j]);
      d[3 * x + 1] = clamp_fixed (luma + cg[j]);
      d[3 * x + 2] = clamp_fixed (luma + cb[j]);
    }
  }
}
