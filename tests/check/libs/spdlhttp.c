/* gst-spdl: unit tests of the HTTP client's reading of response headers
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

#include "gstspdlhttp-private.h"
#include "spdlcheckmain.h"

GST_START_TEST (test_header_value)
{
  static const gchar line[] = "etag:  \"abc\" \r\n";
  gchar *value;

  /* as libcurl hands it over: CRLF kept, any case, trimmed */
  value = gst_spdl_http_header_value (line, strlen (line), "ETag");
  fail_unless_equals_string (value, "\"abc\"");
  g_free (value);
  fail_unless (gst_spdl_http_header_value (line, strlen (line),
          "Last-Modified") == NULL);
  /* a name alone, or a longer name it starts */
  fail_unless (gst_spdl_http_header_value ("ETag", 4, "ETag") == NULL);
  fail_unless (gst_spdl_http_header_value ("ETags: x", 8, "ETag") == NULL);
  value = gst_spdl_http_header_value ("ETag:", 5, "ETag");
  fail_unless_equals_string (value, "");
  g_free (value);
}

GST_END_TEST;

/* Content-Range decides whether a resumed download is the same object */
GST_START_TEST (test_content_range)
{
  static const struct
  {
    const gchar *value;
    gboolean ok;
    guint64 first;
    gint64 total;
  } cases[] = {
    {"bytes 0-9/10", TRUE, 0, 10},
    {"bytes 512-611/10240", TRUE, 512, 10240},
    {"bytes 5-9/*", TRUE, 5, -1},
    {"bytes 9223372036854775806-9223372036854775806/9223372036854775807",
        TRUE, G_GUINT64_CONSTANT (9223372036854775806), G_MAXINT64},
    /* a length that fits no gint64 once passed for "*" */
    {"bytes 0-1/15532559262904483836", FALSE},
    {"bytes 0-1/99999999999999999999", FALSE},
    {"bytes 0-9/9", FALSE},
    {"bytes 5-4/9", FALSE},
    {"bytes -0-9/10", FALSE},
    {"bytes +0-9/10", FALSE},
    {"bytes  0-9/10", FALSE},
    {"bytes 0-9/ 10", FALSE},
    {"bytes 0-9/10x", FALSE},
    {"bytes 0-9", FALSE},
    {"bytes */10", FALSE},
    {"items 0-9/10", FALSE},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    /* not "first": gstcheck's macros name their own variables so */
    guint64 start = 0;
    gint64 length = 0;
    gboolean ok = gst_spdl_http_parse_content_range (cases[i].value, &start,
        &length);

    fail_unless (ok == cases[i].ok, "%s", cases[i].value);
    if (ok) {
      fail_unless_equals_uint64 (start, cases[i].first);
      fail_unless_equals_int64 (length, cases[i].total);
    }
  }
  fail_if (gst_spdl_http_parse_content_range (NULL, NULL, NULL));
}

GST_END_TEST;

static Suite *
spdlhttp_suite (void)
{
  Suite *s = suite_create ("spdlhttp");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_header_value);
  tcase_add_test (tc, test_content_range);
  return s;
}

SPDL_CHECK_MAIN (spdlhttp);
