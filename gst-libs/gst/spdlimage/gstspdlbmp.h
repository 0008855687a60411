/* GStreamer SPDL: BMP decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_BMP_H__
#define __GST_SPDL_BMP_H__

#include "gstspdlgeometry.h"
#include "gstspdloutput.h"

G_BEGIN_DECLS

typedef struct _GstSpdlBmpDecoder GstSpdlBmpDecoder;

/* As the PNG decoder: one per thread; open() checks the header and the
 * size limit before anything is allocated. */
GstSpdlBmpDecoder *gst_spdl_bmp_decoder_new (void);
void gst_spdl_bmp_decoder_free (GstSpdlBmpDecoder * dec);
/* RLE-compressed images are decoded whole (one byte a pixel): refused
 * past @max_memory bytes (0 = no limit) as
 * GST_SPDL_DECODE_ERROR_TOO_LARGE. */
void gst_spdl_bmp_decoder_set_max_memory (GstSpdlBmpDecoder * dec,
    guint64 max_memory);
gboolean gst_spdl_bmp_decoder_open (GstSpdlBmpDecoder * dec,
    const guint8 * data, gsize size, guint64 max_pixels, guint * width,
    guint * height, GError ** error);
gboolean gst_spdl_bmp_decoder_decode (GstSpdlBmpDecoder * dec,
    const GstSpdlDecodeParams * params, const GstSpdlGeometry * geom,
    const GstSpdlOutput * out, GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_BMP_H__ */
