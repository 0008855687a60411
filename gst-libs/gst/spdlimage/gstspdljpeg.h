/* GStreamer SPDL: JPEG decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_JPEG_H__
#define __GST_SPDL_JPEG_H__

#include <glib.h>

#include "gstspdlgeometry.h"
#include "gstspdloutput.h"

G_BEGIN_DECLS

typedef struct _GstSpdlJpegDecoder GstSpdlJpegDecoder;

/* One per thread: owns a libjpeg decompressor and scratch buffers. */
GstSpdlJpegDecoder *gst_spdl_jpeg_decoder_new (void);
void gst_spdl_jpeg_decoder_free (GstSpdlJpegDecoder * dec);

/* Bounds one decode: libjpeg's working memory (progressive images keep
 * every DCT coefficient of the image) and the number of scans (each scan
 * of a progressive image is a pass over all of it). 0 = no limit. Images
 * over a limit fail with GST_SPDL_DECODE_ERROR_TOO_LARGE. */
void gst_spdl_jpeg_decoder_set_limits (GstSpdlJpegDecoder * dec,
    guint64 max_memory, guint max_scans);

/* Parses the headers of @data and checks it can be decoded (size limits,
 * a complete scan). On success the decoder holds the image until
 * gst_spdl_jpeg_decoder_decode_to() or the next open. */
gboolean gst_spdl_jpeg_decoder_open (GstSpdlJpegDecoder * dec,
    const guint8 * data, gsize size, guint64 max_pixels, guint * width,
    guint * height, GError ** error);

/* Decodes the opened image into @out (geom->out_width x geom->out_height,
 * 3 or 1 channels as params->gray): packed rows or RGB planes. */
gboolean gst_spdl_jpeg_decoder_decode_to (GstSpdlJpegDecoder * dec,
    const GstSpdlDecodeParams * params, const GstSpdlGeometry * geom,
    const GstSpdlOutput * out, GError ** error);

/* Statistics of the last decode, for benchmarks. */
typedef struct
{
  guint scale_num;              /* DCT scale num/8 used */
  guint decoded_width, decoded_height;  /* pixels libjpeg produced */
} GstSpdlJpegDecodeInfo;

void gst_spdl_jpeg_decoder_get_info (GstSpdlJpegDecoder * dec,
    GstSpdlJpegDecodeInfo * info);

G_END_DECLS

#endif /* __GST_SPDL_JPEG_H__ */
