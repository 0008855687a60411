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

static Suite *
spdlformat_suite (void)
{
  Suite *s = suite_create ("spdlformat");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sniffing_by_first_bytes);
  return s;
}

SPDL_CHECK_MAIN (spdlformat);
