/* GStreamer SPDL: the format a file's first bytes name
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_FORMAT_H__
#define __GST_SPDL_FORMAT_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  GST_SPDL_IMAGE_FORMAT_UNKNOWN,
  GST_SPDL_IMAGE_FORMAT_JPEG,
  GST_SPDL_IMAGE_FORMAT_PNG,
  GST_SPDL_IMAGE_FORMAT_WEBP,
  GST_SPDL_IMAGE_FORMAT_GIF,
  GST_SPDL_IMAGE_FORMAT_BMP,
  GST_SPDL_IMAGE_FORMAT_TIFF,
  /* recognized, not decoded: skipped as unsupported-format */
  GST_SPDL_IMAGE_FORMAT_PNM,
} GstSpdlImageFormat;

/* From the first bytes, never the file's name. */
GstSpdlImageFormat gst_spdl_image_format_sniff (const guint8 * data,
    gsize size);
const gchar *gst_spdl_image_format_name (GstSpdlImageFormat format);

G_END_DECLS

#endif /* __GST_SPDL_FORMAT_H__ */
