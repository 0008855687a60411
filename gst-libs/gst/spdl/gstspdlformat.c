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

/* An EBML variable-size integer at @d[*pos]: an ID with its marker bit
 * (at most 4 bytes) or a size without it (at most 8; all ones: unknown,
 * G_MAXUINT64) */
static gboolean
read_vint (const guint8 * d, gsize n, gsize * pos, gboolean keep_marker,
    guint64 * value)
{
  guint len = 1, i;
  guint64 v, ones;

  if (*pos >= n || d[*pos] == 0)
    return FALSE;
  while (!(d[*pos] & (0x80 >> (len - 1))))
    len++;
  if ((keep_marker && len > 4) || *pos + len > n)
    return FALSE;
  v = keep_marker ? d[*pos] : d[*pos] & (0xff >> len);
  ones = 0xff >> len;
  for (i = 1; i < len; i++) {
    v = (v << 8) | d[*pos + i];
    ones = (ones << 8) | 0xff;
  }
  *pos += len;
  *value = (!keep_marker && v == ones) ? G_MAXUINT64 : v;
  return TRUE;
}

#define EBML_ID_HEADER 0x1A45DFA3
#define EBML_ID_DOCTYPE 0x4282
#define EBML_ID_DOCTYPEREADVERSION 0x4285
#define EBML_ID_EBMLREADVERSION 0x42F7
#define EBML_ID_EBMLMAXIDLENGTH 0x42F2
#define EBML_ID_EBMLMAXSIZELENGTH 0x42F3

/* matroska-read-common.c, gst_matroska_read_common_parse_header: what it
 * accepts, and its own errors (a bad EBMLReadVersion, a child that
 * cannot be read), which come as error messages, are left to it */
gboolean
gst_spdl_ebml_header_refused (const guint8 * data, gsize size,
    gchar ** reason)
{
  gsize pos = 0, end;
  guint64 id, len, version = 1;
  gchar *doctype = NULL;
  gboolean refused = FALSE;

  *reason = NULL;
  if (!read_vint (data, size, &pos, TRUE, &id) || id != EBML_ID_HEADER ||
      !read_vint (data, size, &pos, FALSE, &len) || len > size - pos)
    return FALSE;
  end = pos + len;
  while (pos < end) {
    if (!read_vint (data, end, &pos, TRUE, &id) ||
        !read_vint (data, end, &pos, FALSE, &len) || len > end - pos)
      goto done;
    if (id == EBML_ID_DOCTYPE) {
      gsize i;

      for (i = 0; i < len && data[pos + i]; i++)
        if (data[pos + i] & 0x80)
          goto done;            /* not ASCII: its own error */
      g_free (doctype);
      doctype = g_strndup ((const gchar *) data + pos, i);
    } else if (id == EBML_ID_DOCTYPEREADVERSION ||
        id == EBML_ID_EBMLREADVERSION || id == EBML_ID_EBMLMAXIDLENGTH ||
        id == EBML_ID_EBMLMAXSIZELENGTH) {
      guint64 num = 0;
      gsize i;

      if (len > 8)
        goto done;
      for (i = 0; i < len; i++)
        num = (num << 8) | data[pos + i];
      if (id == EBML_ID_DOCTYPEREADVERSION)
        version = num;
      else if ((id == EBML_ID_EBMLREADVERSION && num != 1) ||
          (id == EBML_ID_EBMLMAXIDLENGTH && num > 4) ||
          (id == EBML_ID_EBMLMAXSIZELENGTH && num > 8))
        goto done;
    }
    pos += len;
  }
  if (doctype && strcmp (doctype, "matroska") != 0 &&
      strcmp (doctype, "webm") != 0) {
    *reason = g_strdup_printf ("its EBML DocType is \"%s\", not matroska "
        "or webm", doctype);
    refused = TRUE;
  } else if ((guint) version > 2) {
    *reason = g_strdup_printf ("its Matroska DocTypeReadVersion is %u "
        "(GStreamer reads up to 2)", (guint) version);
    refused = TRUE;
  }
done:
  g_free (doctype);
  return refused;
}
