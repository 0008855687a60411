/* GStreamer SPDL: the format a file's first bytes name
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Told by the signature alone, never the file's name. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlformat.h"

#include <string.h>

GstSpdlImageFormat
gst_spdl_image_format_sniff (const guint8 * data, gsize size)
{
  static const guint8 png[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

  if (size >= 2 && data[0] == 0xFF && data[1] == 0xD8)
    return GST_SPDL_IMAGE_FORMAT_JPEG;
  if (size >= 8 && memcmp (data, png, 8) == 0)
    return GST_SPDL_IMAGE_FORMAT_PNG;
  if (size >= 12 && memcmp (data, "RIFF", 4) == 0 &&
      memcmp (data + 8, "WEBP", 4) == 0)
    return GST_SPDL_IMAGE_FORMAT_WEBP;
  if (size >= 6 && (memcmp (data, "GIF87a", 6) == 0 ||
          memcmp (data, "GIF89a", 6) == 0))
    return GST_SPDL_IMAGE_FORMAT_GIF;
  if (size >= 14 && data[0] == 'B' && data[1] == 'M')
    return GST_SPDL_IMAGE_FORMAT_BMP;
  if (size >= 4 && (memcmp (data, "II*\0", 4) == 0 ||
          memcmp (data, "MM\0*", 4) == 0))
    return GST_SPDL_IMAGE_FORMAT_TIFF;
  if (size >= 3 && data[0] == 'P' && data[1] >= '1' && data[1] <= '7' &&
      g_ascii_isspace (data[2]))
    return GST_SPDL_IMAGE_FORMAT_PNM;
  return GST_SPDL_IMAGE_FORMAT_UNKNOWN;
}

const gchar *
gst_spdl_image_format_name (GstSpdlImageFormat format)
{
  static const gchar *names[] = {
    "unknown", "JPEG", "PNG", "WebP", "GIF", "BMP", "TIFF", "PPM/PGM/PBM",
  };

  if ((guint) format >= G_N_ELEMENTS (names))
    return "unknown";
  return names[format];
}
