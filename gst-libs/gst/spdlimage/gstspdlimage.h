/* GStreamer SPDL: the image decoder that dispatches on the format
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_IMAGE_H__
#define __GST_SPDL_IMAGE_H__

#include <glib.h>

#include "gstspdlformat.h"
#include "gstspdlgeometry.h"
#include "gstspdloutput.h"

G_BEGIN_DECLS

typedef struct _GstSpdlImageDecoder GstSpdlImageDecoder;

/* One per thread: a decoder of each format (JPEG, PNG, WebP, BMP, GIF,
 * TIFF) and their scratch buffers, for any format the data's signature
 * names. open() parses the
 * headers and checks the limits before any pixel buffer is allocated;
 * decode() then decodes the opened image with @geom's resize and crop. */
GstSpdlImageDecoder *gst_spdl_image_decoder_new (void);
void gst_spdl_image_decoder_free (GstSpdlImageDecoder * dec);
gboolean gst_spdl_image_decoder_open (GstSpdlImageDecoder * dec,
    const guint8 * data, gsize size, guint64 max_pixels, guint * width,
    guint * height, GError ** error);
gboolean gst_spdl_image_decoder_decode (GstSpdlImageDecoder * dec,
    const GstSpdlDecodeParams * params, const GstSpdlGeometry * geom,
    guint8 * out, gsize stride, GError ** error);
/* Same into packed rows or RGB planes. */
gboolean gst_spdl_image_decoder_decode_to (GstSpdlImageDecoder * dec,
    const GstSpdlDecodeParams * params, const GstSpdlGeometry * geom,
    const GstSpdlOutput * out, GError ** error);
/* Limits of one decode (GST_SPDL_IMAGE_DEFAULT_MAX_MEMORY, _MAX_SCANS):
 * working memory and a progressive JPEG's scans; 0 = no limit. Images over
 * a limit fail with GST_SPDL_DECODE_ERROR_TOO_LARGE. */
void gst_spdl_image_decoder_set_limits (GstSpdlImageDecoder * dec,
    guint64 max_memory, guint max_scans);
/* The format of the image last opened. */
GstSpdlImageFormat gst_spdl_image_decoder_get_format (GstSpdlImageDecoder *
    dec);

G_END_DECLS

#endif /* __GST_SPDL_IMAGE_H__ */
