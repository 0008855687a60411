/* gst-spdl: unit tests of format sniffing
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>

#include <string.h>

#include "gstspdlformat.h"
#include "spdlcheckmain.h"

GST_START_TEST (test_sniffing_by_first_bytes)
{
  static const struct
  {
    const gchar *bytes;
    gsize len;
    GstSpdlImageFormat format;
  } cases[] = {
    {"\xff\xd8\xff\xe0", 4, GST_SPDL_IMAGE_FORMAT_JPEG},
    {"\x89PNG\r\n\x1a\n", 8, GST_SPDL_IMAGE_FORMAT_PNG},
    {"\x89PNG\r\n\x1a", 7, GST_SPDL_IMAGE_FORMAT_UNKNOWN},
    {"RIFF\0\0\0\0WEBP", 12, GST_SPDL_IMAGE_FORMAT_WEBP},
    {"RIFF\0\0\0\0WAVE", 12, GST_SPDL_IMAGE_FORMAT_UNKNOWN},
    {"GIF87a", 6, GST_SPDL_IMAGE_FORMAT_GIF},
    {"BM\0\0\0\0\0\0\0\0\0\0\0\0", 14, GST_SPDL_IMAGE_FORMAT_BMP},
    {"MM\0*", 4, GST_SPDL_IMAGE_FORMAT_TIFF},
    {"P5\n", 3, GST_SPDL_IMAGE_FORMAT_PNM},
    {"Photo", 5, GST_SPDL_IMAGE_FORMAT_UNKNOWN},
    {"", 0, GST_SPDL_IMAGE_FORMAT_UNKNOWN},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    fail_unless_equals_int (gst_spdl_image_format_sniff ((const guint8 *)
            cases[i].bytes, cases[i].len), cases[i].format);
}

GST_END_TEST;

/* An EBML header: EBMLReadVersion @read_version, DocType @doctype,
 * DocTypeReadVersion @version */
static GByteArray *
ebml_header (guint read_version, const gchar * doctype, guint version)
{
  GByteArray *a = g_byte_array_new ();
  guint8 head[] = { 0x1a, 0x45, 0xdf, 0xa3, 0x80 };
  guint8 readv[] = { 0x42, 0xf7, 0x81, read_version };
  guint8 dt[] = { 0x42, 0x82, 0x80 | strlen (doctype) };
  guint8 dtv[] = { 0x42, 0x85, 0x81, version };
  guint8 segment[] = { 0x18, 0x53, 0x80, 0x67, 0x01, 0, 0, 0, 0, 0, 0, 0 };

  head[4] |= sizeof (readv) + sizeof (dt) + strlen (doctype) + sizeof (dtv);
  g_byte_array_append (a, head, sizeof (head));
  g_byte_array_append (a, readv, sizeof (readv));
  g_byte_array_append (a, dt, sizeof (dt));
  g_byte_array_append (a, (const guint8 *) doctype, strlen (doctype));
  g_byte_array_append (a, dtv, sizeof (dtv));
  g_byte_array_append (a, segment, sizeof (segment));
  return a;
}

GST_START_TEST (test_ebml_headers_matroskademux_refuses)
{
  static const struct
  {
    guint read_version;
    const gchar *doctype;
    guint version;
    const gchar *reason;        /* NULL: not refused */
  } cases[] = {
    {1, "webm", 2, NULL},
    {1, "matroska", 1, NULL},
    {1, "webm", 40, "DocTypeReadVersion is 40"},
    {1, "matroska", 3, "DocTypeReadVersion is 3"},
    {1, "mkv", 2, "DocType is \"mkv\""},
    /* matroskademux's own error message, no CRITICAL: left to it */
    {2, "webm", 40, NULL},
  };
  guint i;
  gchar *reason;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    GByteArray *a = ebml_header (cases[i].read_version, cases[i].doctype,
        cases[i].version);

    fail_unless_equals_int (gst_spdl_ebml_header_refused (a->data, a->len,
            &reason), cases[i].reason != NULL);
    if (cases[i].reason)
      fail_unless (strstr (reason, cases[i].reason) != NULL, "%u: %s", i,
          reason);
    else
      fail_unless (reason == NULL);
    g_free (reason);
    /* cut inside the header: not read, not refused */
    fail_if (gst_spdl_ebml_header_refused (a->data, 12, &reason));
    g_byte_array_unref (a);
  }
  fail_if (gst_spdl_ebml_header_refused ((const guint8 *) "\x1a\x45\xdf",
          3, &reason));
  fail_if (gst_spdl_ebml_header_refused ((const guint8 *) "GIF89a", 6,
          &reason));
}

GST_END_TEST;

static Suite *
spdlformat_suite (void)
{
  Suite *s = suite_create ("spdlformat");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sniffing_by_first_bytes);
  tcase_add_test (tc, test_ebml_headers_matroskademux_refuses);
  return s;
}

SPDL_CHECK_MAIN (spdlformat);
