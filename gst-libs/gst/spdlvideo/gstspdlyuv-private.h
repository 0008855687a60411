/* GStreamer SPDL: what the YCbCr converter and its x86 kernels share
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_YUV_PRIVATE_H__
#define __GST_SPDL_YUV_PRIVATE_H__

#include "gstspdlyuv.h"

G_BEGIN_DECLS

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HAVE_YUV_X86_KERNELS 1

/* One row's first pixels, 16 at a time: @ys at an even pixel, @cr, @cg,
 * @cb the chroma terms of its pixel pairs. Returns how many pixels were
 * converted (a multiple of 16, at most @n). */
guint gst_spdl_yuv_row_sse41 (const gint32 * ty, const guint8 * ys,
    const gint32 * cr, const gint32 * cg, const gint32 * cb, guint n,
    guint8 * rgb);
guint gst_spdl_yuv_row_avx2 (const gint32 * ty, const guint8 * ys,
    const gint32 * cr, const gint32 * cg, const gint32 * cb, guint n,
    guint8 * rgb);
#endif

G_END_DECLS

#endif /* __GST_SPDL_YUV_PRIVATE_H__ */
