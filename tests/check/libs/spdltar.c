/* gst-spdl: unit tests of the streaming tar parser
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

#include "spdltestutil.h"
#include "gstspdltar.h"
#include "spdlcheckmain.h"

/* ------------------------------------------------------------------------ */
/* Writing archives                                                         */

static gchar *long_name;

/* Every kind of header the parser reads, and some it passes over. */
static GByteArray *
make_archive (void)
{
  GByteArray *tar = g_byte_array_new ();
  static const guint8 zeros[1024] = { 0, };
  gchar *pax;
  guint8 big[1500];
  guint i;

  for (i = 0; i < sizeof (big); i++)
    big[i] = i * 7;
  spdl_test_tar_file (tar, "a/one.jpg", "JPEG-ONE");
  spdl_test_tar_file (tar, "a/one.cls", "3");
  spdl_test_tar_header (tar, "a", '5', 0, NULL);  /* a folder */
  /* GNU long name */
  long_name = g_strnfill (230, 'n');
  spdl_test_tar_header (tar, "././@LongLink", 'L', strlen (long_name) + 1,
      NULL);
  spdl_test_tar_data (tar, (const guint8 *) long_name, strlen (long_name) + 1);
  spdl_test_tar_header (tar, "truncated-name", '0', sizeof (big), NULL);
  spdl_test_tar_data (tar, big, sizeof (big));
  /* PAX path (with a record that is not a path before it) */
  pax = g_strdup ("20 mtime=1700000000\n27 path=pax/long-path.jpeg\n");
  spdl_test_tar_header (tar, "PaxHeader/x", 'x', strlen (pax), NULL);
  spdl_test_tar_data (tar, (const guint8 *) pax, strlen (pax));
  g_free (pax);
  spdl_test_tar_file (tar, "ignored-name", "PAXDATA");
  /* ustar prefix */
  spdl_test_tar_header (tar, "name.cls", '0', 2, "pre/fix");
  spdl_test_tar_data (tar, (const guint8 *) "12", 2);
  spdl_test_tar_file (tar, "empty.jpg", "");
  g_byte_array_append (tar, zeros, sizeof (zeros));
  return tar;
}

typedef struct
{
  GString *log;
  gboolean want_all;
  guint stop_after;
  guint members;
} Collector;

static gboolean
want_cb (const gchar * name, guint64 size, gpointer user_data)
{
  Collector *c = user_data;
  return c->want_all || !g_str_has_suffix (name, ".jpg");
}

static gboolean
member_cb (const gchar * name, guint64 size, GstBuffer * data,
    gpointer user_data)
{
  Collector *c = user_data;

  g_string_append_printf (c->log, "%s %" G_GUINT64_FORMAT " ", name, size);
  if (data) {
    GstMapInfo map;
    gchar *sum;
    fail_unless (gst_buffer_map (data, &map, GST_MAP_READ));
    fail_unless_equals_int (map.size, size);
    sum = g_compute_checksum_for_data (G_CHECKSUM_MD5, map.data, map.size);
    g_string_append_printf (c->log, "%.8s\n", sum);
    g_free (sum);
    gst_buffer_unmap (data, &map);
    gst_buffer_unref (data);
  } else {
    g_string_append (c->log, "-\n");
  }
  return ++c->members != c->stop_after;
}

/* Parses @tar in chunks from @sizes (cycled; 0 = the rest at once). */
static gchar *
parse_in_chunks (GByteArray * tar, const guint * sizes, guint n_sizes,
    gboolean want_all, GError ** error)
{
  Collector c = { g_string_new (NULL), want_all, 0, 0 };
  GstSpdlTarParser *parser = gst_spdl_tar_parser_new (want_cb, member_cb, &c);
  gsize pos = 0;
  guint k = 0;
  gboolean ok = TRUE;

  while (pos < tar->len && ok) {
    gsize n = sizes[k++ % n_sizes];
    n = n ? MIN (n, tar->len - pos) : tar->len - pos;
    ok = gst_spdl_tar_parser_feed (parser, tar->data + pos, n, error);
    pos += n;
  }
  if (ok || (error && *error == NULL))
    gst_spdl_tar_parser_finish (parser, error);
  gst_spdl_tar_parser_free (parser);
  return g_string_free (c.log, FALSE);
}

GST_START_TEST (test_tar_any_chunking)
{
  GByteArray *tar = make_archive ();
  GError *error = NULL;
  gchar *whole = parse_in_chunks (tar, (guint[]) { 0 }, 1, TRUE, &error);
  gchar *expected;
  guint size;
  GRand *rand = g_rand_new_with_seed (42);

  gchar *sum1 = g_compute_checksum_for_string (G_CHECKSUM_MD5, "JPEG-ONE", -1);
  gchar *sum2 = g_compute_checksum_for_string (G_CHECKSUM_MD5, "3", -1);

  expected = g_strdup_printf ("a/one.jpg 8 %.8s\na/one.cls 1 %.8s\n"
      "%s 1500 ", sum1, sum2, long_name);
  g_free (sum1);
  g_free (sum2);
  g_assert_no_error (error);
  fail_unless (g_str_has_prefix (whole, expected), "got:\n%s", whole);
  fail_unless (strstr (whole, "\npax/long-path.jpeg 7 ") != NULL, "%s", whole);
  fail_unless (strstr (whole, "\npre/fix/name.cls 2 ") != NULL, "%s", whole);
  fail_unless (g_str_has_suffix (whole, "\nempty.jpg 0 d41d8cd9\n"), "%s",
      whole);
  fail_if (strstr (whole, "ignored-name") || strstr (whole, "LongLink"));

  /* every fixed chunk size from 1 byte to past a block, then random ones */
  for (size = 1; size <= 1100; size += (size < 40 ? 1 : 37)) {
    gchar *got = parse_in_chunks (tar, &size, 1, TRUE, &error);
    g_assert_no_error (error);
    fail_unless_equals_string (got, whole);
    g_free (got);
  }
  for (size = 0; size < 50; size++) {
    guint sizes[64], i;
    gchar *got;
    for (i = 0; i < G_N_ELEMENTS (sizes); i++)
      sizes[i] = g_rand_int_range (rand, 1, 2000);
    got = parse_in_chunks (tar, sizes, G_N_ELEMENTS (sizes), TRUE, &error);
    g_assert_no_error (error);
    fail_unless_equals_string (got, whole);
    g_free (got);
  }
  g_rand_free (rand);
  g_free (expected);
  g_free (whole);
  g_free (long_name);
  g_byte_array_unref (tar);
}

GST_END_TEST;

GST_START_TEST (test_tar_unwanted_and_skipped)
{
  GByteArray *tar = make_archive ();
  Collector c = { g_string_new (NULL), FALSE, 0, 0 };
  GstSpdlTarParser *parser = gst_spdl_tar_parser_new (want_cb, member_cb, &c);
  GError *error = NULL;
  guint64 offset = 0;

  /* feeding headers only, passing over what is not wanted (as a reader
   * that seeks does) gives the same members */
  while (!gst_spdl_tar_parser_at_end (parser)) {
    guint64 skip = gst_spdl_tar_parser_skippable (parser);
    if (skip) {
      gst_spdl_tar_parser_skip (parser, skip);
      offset += skip;
      continue;
    }
    fail_unless (offset < tar->len);
    gst_spdl_tar_parser_feed (parser, tar->data + offset, 512, &error);
    g_assert_no_error (error);
    offset += 512;
  }
  fail_unless (strstr (c.log->str, "a/one.jpg 8 -\n") != NULL, "%s",
      c.log->str);
  fail_unless (strstr (c.log->str, "a/one.cls 1 eccbc87e\n") != NULL);
  fail_unless_equals_int (c.members, 6);
  fail_unless_equals_int (offset, tar->len);
  fail_unless_equals_int (gst_spdl_tar_parser_get_offset (parser), tar->len);
  gst_spdl_tar_parser_free (parser);
  g_string_free (c.log, TRUE);
  g_free (long_name);
  g_byte_array_unref (tar);
}

GST_END_TEST;

GST_START_TEST (test_tar_corrupt_and_truncated)
{
  GByteArray *tar = make_archive ();
  GError *error = NULL;
  guint one = 1000;
  gchar *got;

  /* truncated inside the long-named member's data */
  g_byte_array_set_size (tar, 512 * 8 + 100);
  got = parse_in_chunks (tar, &one, 1, TRUE, &error);
  fail_unless (g_error_matches (error, GST_SPDL_TAR_ERROR,
          GST_SPDL_TAR_ERROR_TRUNCATED));
  fail_unless (strstr (error->message, long_name) != NULL, "%s",
      error->message);
  fail_unless (g_str_has_prefix (got, "a/one.jpg"));
  g_clear_error (&error);
  g_free (got);
  g_free (long_name);
  g_byte_array_unref (tar);

  /* a flipped bit in the second header: the first member, then an error */
  tar = make_archive ();
  tar->data[1024 + 3] ^= 0x10;
  got = parse_in_chunks (tar, &one, 1, TRUE, &error);
  fail_unless (g_error_matches (error, GST_SPDL_TAR_ERROR,
          GST_SPDL_TAR_ERROR_CORRUPT));
  fail_unless (strstr (error->message, "checksum") != NULL);
  fail_unless (strstr (got, "a/one.jpg 8 ") == got && !strstr (got, "cls"));
  g_clear_error (&error);
  g_free (got);
  g_free (long_name);

  /* garbage (not a tar at all) */
  memset (tar->data, 'x', 2048);
  got = parse_in_chunks (tar, &one, 1, TRUE, &error);
  fail_unless (g_error_matches (error, GST_SPDL_TAR_ERROR,
          GST_SPDL_TAR_ERROR_CORRUPT));
  fail_unless_equals_string (got, "");
  g_clear_error (&error);
  g_free (got);
  g_byte_array_unref (tar);
}

GST_END_TEST;

/* WebDataset 1.0.2's base_plus_ext() and tar_file_iterator()'s skip_meta:
 * key and extension, or none (NULL: the member is passed over). The
 * Python test test_wds_conventions checks the same names against
 * webdataset itself. */
GST_START_TEST (test_tar_split_name)
{
  const gchar *cases[][3] = {
    {"a/b/key.jpg", "a/b/key", "jpg"},
    {"dir.v2/key.seg.JPEG", "dir.v2/key", "seg.jpeg"},
    {"a/b.input.jpg", "a/b", "input.jpg"},
    {"a.b.c.jpg", "a", "b.c.jpg"},
    {"key", NULL, NULL},
    {"dir.v2/key", NULL, NULL},
    {"x/.hidden.cls", "x/", "hidden.cls"},
    {"a/b/.x.jpg", "a/b/", "x.jpg"},
    {"a.b/.x.jpg", NULL, NULL},
    {".x.jpg", NULL, NULL},
    {"/.x.jpg", "/", "x.jpg"},
    {"__key__", NULL, NULL},
    {"__", NULL, NULL},
    {"___", NULL, NULL},
    {"__meta__/x.jpg", NULL, NULL},
    {"__meta__.json", "__meta__", "json"},
    {"__a__b/x.jpg", "__a__b/x", "jpg"},
    {"d/__key__", NULL, NULL},
    {"d/__key__.txt", "d/__key__", "txt"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *key, *ext;
    gboolean ok = gst_spdl_tar_split_name (cases[i][0], &key, &ext);

    fail_unless_equals_int (ok, cases[i][1] != NULL);
    fail_unless_equals_string (key, cases[i][1]);
    fail_unless_equals_string (ext, cases[i][2]);
    g_free (key);
    g_free (ext);
  }
}

GST_END_TEST;

static Suite *
spdltar_suite (void)
{
  Suite *s = suite_create ("spdltar");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_tar_any_chunking);
  tcase_add_test (tc, test_tar_unwanted_and_skipped);
  tcase_add_test (tc, test_tar_corrupt_and_truncated);
  tcase_add_test (tc, test_tar_split_name);
  return s;
}

SPDL_CHECK_MAIN (spdltar);
