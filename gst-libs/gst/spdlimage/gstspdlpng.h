/* GStreamer SPDL: PNG decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_PNG_H__
#define __GST_SPDL_PNG_H__

#include <png.h>

#include "gstspdlgeometry.h"
#include "gstspdloutput.h"

G_BEGIN_DECLS

typedef struct _GstSpdlPngDecoder GstSpdlPngDecoder;

/* As the JPEG decoder: one per thread; open() checks the header, the size
 * limit and that the chunks are whole before anything is allocated. */
GstSpdlPngDecoder *gst_spdl_png_decoder_new (void);
void gst_spdl_png_decoder_free (GstSpdlPngDecoder * dec);
/* Interlaced images are decoded whole: refused past @max_memory bytes
 * (0 = no limit) as GST_SPDL_DECODE_ERROR_TOO_LARGE. */
void gst_spdl_png_decoder_set_max_memory (GstSpdlPngDecoder * dec,
    guint64 max_memory);
gboolean gst_spdl_png_decoder_open (GstSpdlPngDecoder * dec,
    const guint8 * data, gsize size, guint64 max_pixels, guint * width,
    guint * height, GError ** error);
gboolean gst_spdl_png_decoder_decode (GstSpdlPngDecoder * dec,
    const GstSpdlDecodeParams * params, const GstSpdlGeometry * geom,
    const GstSpdlOutput * out, GError ** error);

/* The first failure of a libpng decode: its GstSpdlDecodeErrorCode (-1:
 * none yet) and message, for the caller's setjmp to report. */
typedef struct
{
  gint code;
  gchar message[200];
} GstSpdlPngFailure;

/* A libpng read struct whose errors (libpng's own: corrupt, unless
 * @failure holds one already) go into @failure before the longjmp, and
 * whose warnings (a bad ancillary chunk) are ignored, as PIL ignores
 * them. NULL without memory. */
png_structp gst_spdl_png_read_struct_new (GstSpdlPngFailure * failure);

G_END_DECLS

#endif /* __GST_SPDL_PNG_H__ */
