/* GStreamer SPDL: TIFF decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_TIFF_H__
#define __GST_SPDL_TIFF_H__

#include "gstspdlgeometry.h"
#include "gstspdloutput.h"

G_BEGIN_DECLS

typedef struct _GstSpdlTiffDecoder GstSpdlTiffDecoder;

/* As the PNG decoder: one per thread; open() checks the header and the
 * size limit before anything is allocated. */
GstSpdlTiffDecoder *gst_spdl_tiff_decoder_new (void);
void gst_spdl_tiff_decoder_free (GstSpdlTiffDecoder * dec);
/* Rotated and flipped images (the Orientation tag) are decoded whole,
 * and libtiff allocates no more than @max_memory bytes at once: refused
 * past it (0 = no limit) as GST_SPDL_DECODE_ERROR_TOO_LARGE. */
void gst_spdl_tiff_decoder_set_max_memory (GstSpdlTiffDecoder * dec,
    guint64 max_memory);
gboolean gst_spdl_tiff_decoder_open (GstSpdlTiffDecoder * dec,
    const guint8 * data, gsize size, guint64 max_pixels, guint * width,
    guint * height, GError ** error);
gboolean gst_spdl_tiff_decoder_decode (GstSpdlTiffDecoder * dec,
    const GstSpdlDecodeParams * params, const GstSpdlGeometry * geom,
    const GstSpdlOutput * out, GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_TIFF_H__ */
