/* GStreamer SPDL plugin: unit tests of the streaming tar parser
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
#include <gst/check/gstharness.h>
#include <string.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "spdltestutil.h"
#include "gstspdlmeta.h"
#include "gstspdltar.h"
#include "gstspdlshards.h"
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

GST_START_TEST (test_tar_split_name)
{
  const gchar *cases[][3] = {
    {"a/b/key.jpg", "a/b/key", "jpg"},
    {"dir.v2/key.seg.JPEG", "dir.v2/key", "seg.jpeg"},
    {"key", "key", ""},
    {"x/.hidden.cls", "x/", "hidden.cls"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *key, *ext;
    gst_spdl_tar_split_name (cases[i][0], &key, &ext);
    fail_unless_equals_string (key, cases[i][1]);
    fail_unless_equals_string (ext, cases[i][2]);
    g_free (key);
    g_free (ext);
  }
}

GST_END_TEST;

GST_START_TEST (test_shards_expand)
{
  GError *error = NULL;
  GStrv names = gst_spdl_shards_expand ("/d/t-{000008..000011}.tar", &error);

  g_assert_no_error (error);
  fail_unless_equals_int (g_strv_length (names), 4);
  fail_unless_equals_string (names[0], "/d/t-000008.tar");
  fail_unless_equals_string (names[3], "/d/t-000011.tar");
  g_strfreev (names);

  names = gst_spdl_shards_expand ("s3://b/{0..1}/p-{8..10}.tar", &error);
  g_assert_no_error (error);
  fail_unless_equals_int (g_strv_length (names), 6);
  fail_unless_equals_string (names[2], "s3://b/0/p-10.tar");
  fail_unless_equals_string (names[3], "s3://b/1/p-8.tar");
  g_strfreev (names);

  fail_if (gst_spdl_shards_expand ("/d/{3..1}.tar", &error));
  fail_unless (error && strstr (error->message, "brace range"));
  g_clear_error (&error);
  fail_if (gst_spdl_shards_expand ("/d/{a..b}.tar", &error));
  g_clear_error (&error);
  fail_if (gst_spdl_shards_expand ("/d/{0..99999999999}.tar", &error));
  g_clear_error (&error);
  /* too many names fail before any is made: each range and their product */
  fail_if (gst_spdl_shards_expand ("/d/{0..999999999}.tar", &error));
  fail_unless (error && strstr (error->message, "more than 1000000 shards"));
  g_clear_error (&error);
  fail_if (gst_spdl_shards_expand ("/d/{0..9999}/{0..9999}.tar", &error));
  fail_unless (error && strstr (error->message, "more than 1000000 shards"));
  g_clear_error (&error);
  fail_if (gst_spdl_shards_expand ("/d/{0..1}/{x}.tar", &error));
  fail_unless (error && strstr (error->message, "brace range"));
  g_clear_error (&error);
}

GST_END_TEST;

/* Every rank the same count; together each sample once (drop) or all
 * samples with the fewest repeats (wrap). */
GST_START_TEST (test_shards_plan)
{
  guint64 counts[] = { 7, 0, 10, 3, 10, 1 };
  guint32 order[] = { 4, 1, 0, 5, 3, 2 };
  guint64 total = 31;
  guint world, rank, drop;

  for (drop = 0; drop < 2; drop++) {
    for (world = 1; world <= 9; world++) {
      guint64 per = drop ? total / world : (total + world - 1) / world;
      guint seen[6][10] = { {0,}, };
      guint64 n_seen = 0;
      for (rank = 0; rank < world; rank++) {
        GArray *plan = gst_spdl_shards_plan (counts, 6, order, rank, world,
            drop);
        guint64 n = 0;
        guint i, j;
        for (i = 0; i < plan->len; i += 3) {
          guint64 *t = &g_array_index (plan, guint64, i);
          fail_unless (t[1] + t[2] <= counts[t[0]]);
          for (j = 0; j < t[2]; j++)
            seen[t[0]][t[1] + j]++;
          n += t[2];
        }
        fail_unless_equals_int (n, per);
        n_seen += n;
        g_array_unref (plan);
      }
      {
        guint s, j, max = 0, missing = 0;
        for (s = 0; s < 6; s++)
          for (j = 0; j < counts[s]; j++) {
            max = MAX (max, seen[s][j]);
            missing += seen[s][j] == 0;
          }
        fail_unless (max <= 2);
        fail_unless_equals_int (missing, drop ? total - n_seen : 0);
      }
    }
  }
}

GST_END_TEST;

/* Shard @s of @n_shards: @per samples "kS_J.jpg" (bytes "img S J") with
 * label S * 100 + J. */
static void
write_shard (const gchar * dir, guint s, guint per)
{
  GByteArray *tar = g_byte_array_new ();
  static const guint8 zeros[1024] = { 0, };
  gchar *path = g_strdup_printf ("%s/t-%02u.tar", dir, s);
  guint j;

  for (j = 0; j < per; j++) {
    gchar *key = g_strdup_printf ("k%u_%u", s, j);
    gchar *data = g_strdup_printf ("img %u %u", s, j);
    spdl_test_tar_sample (tar, key, data, s * 100 + j);
    g_free (key);
    g_free (data);
  }
  g_byte_array_append (tar, zeros, sizeof (zeros));
  fail_unless (g_file_set_contents (path, (const gchar *) tar->data, tar->len,
          NULL));
  g_byte_array_unref (tar);
  g_free (path);
}

/* Plays endless epochs of @location and tears down after one sample. */
static void
stop_after_first_sample (const gchar * location)
{
  GstHarness *h = gst_harness_new ("spdlsrc");

  gst_harness_set (h, "spdlsrc", "location", location, "num-epochs", -1,
      NULL);
  gst_harness_play (h);
  gst_buffer_unref (gst_harness_pull (h));
  gst_harness_teardown (h);
}

static void
remove_shards (const gchar * dir, guint n_shards)
{
  guint s;

  for (s = 0; s < n_shards; s++) {
    gchar *path = g_strdup_printf ("%s/t-%02u.tar", dir, s);
    g_unlink (path);
    g_free (path);
  }
}

GST_START_TEST (test_spdlsrc_shards)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *location = g_strdup_printf ("%s/t-{00..03}.tar", dir);
  GstHarness *h = gst_harness_new ("spdlsrc");
  GstSpdlSampleInfo info;
  guint64 num = 0;
  guint s, i;

  for (s = 0; s < 4; s++)
    write_shard (dir, s, 5);
  gst_harness_set (h, "spdlsrc", "location", location, "num-epochs", 2,
      "shuffle", TRUE, "shuffle-buffer", 4, "num-shards", 2, "shard-index", 1,
      NULL);
  gst_harness_play (h);
  for (i = 0; i < 20; i++) {
    GstBuffer *buf = gst_harness_pull (h);
    GstMapInfo map;
    gchar *expected;
    fail_unless (buf != NULL);
    fail_unless (gst_spdl_buffer_get_sample_info (buf, &info));
    fail_unless_equals_int (info.epoch, i / 10);
    fail_unless_equals_int (info.label, (info.index / 5) * 100 +
        info.index % 5);
    expected = g_strdup_printf ("img %u %u", (guint) info.index / 5,
        (guint) info.index % 5);
    fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
    fail_unless_equals_int (map.size, strlen (expected));
    fail_unless (memcmp (map.data, expected, map.size) == 0);
    gst_buffer_unmap (buf, &map);
    g_free (expected);
    gst_buffer_unref (buf);
  }
  g_object_get (h->element, "num-samples", &num, NULL);
  fail_unless_equals_uint64 (num, 10);
  gst_harness_teardown (h);

  /* stopping with samples queued and the reader thread mid-shard */
  stop_after_first_sample (location);
  remove_shards (dir, 4);
  g_rmdir (dir);
  g_free (location);
  g_free (dir);
}

GST_END_TEST;

/* Python's http.server on 127.0.0.1 serving @dir; its port, or 0 */
static guint
start_http_server (const gchar * dir, GPid * pid, gint * out)
{
  const gchar *argv[] = { "/usr/bin/python3", "-u", "-m", "http.server", "0",
    "--bind", "127.0.0.1", "--directory", dir, NULL
  };
  gchar line[256] = { 0, }, *port;
  gssize n;

  fail_unless (g_spawn_async_with_pipes (NULL, (gchar **) argv, NULL,
          G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, pid, NULL, out, NULL,
          NULL));
  /* the pipe stays open while the server runs: it writes to it */
  n = read (*out, line, sizeof (line) - 1);
  port = n > 0 ? strstr (line, " port ") : NULL;
  return port ? (guint) atoi (port + 6) : 0;
}

GST_START_TEST (test_spdlsrc_http_shards)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *location, *index;
  GstHarness *h;
  GstSpdlSampleInfo info;
  GstStructure *counts;
  guint64 n_http_errors = 0;
  guint port, s, got = 0;
  GPid pid;
  gint out = -1;

  for (s = 0; s < 3; s++)
    write_shard (dir, s, 4);
  /* the index names a shard the server does not have */
  index = g_build_filename (dir, "shards.idx", NULL);
  fail_unless (g_file_set_contents (index, "t-00.tar\t4\nt-01.tar\t4\n"
          "t-02.tar\t4\nt-03.tar\t4\n", -1, NULL));
  port = start_http_server (dir, &pid, &out);
  fail_unless (port > 0);
  location = g_strdup_printf ("http://127.0.0.1:%u/t-{00..03}.tar", port);

  h = gst_harness_new ("spdlsrc");
  gst_harness_set (h, "spdlsrc", "location", location, "http-retries", 1,
      "shuffle", TRUE, NULL);
  gst_harness_play (h);
  for (;;) {
    GstBuffer *buf = gst_harness_try_pull (h);
    GstEvent *event;
    if (buf == NULL) {
      event = gst_harness_pull_event (h);
      if (event == NULL || GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
        if (event)
          gst_event_unref (event);
        break;
      }
      gst_event_unref (event);
      continue;
    }
    fail_unless (gst_spdl_buffer_get_sample_info (buf, &info));
    fail_unless_equals_int (info.label, (info.index / 4) * 100 +
        info.index % 4);
    got++;
    gst_buffer_unref (buf);
  }
  fail_unless_equals_int (got, 12);
  g_object_get (h->element, "error-counts", &counts, NULL);
  fail_unless (gst_structure_get_uint64 (counts, "http-error",
          &n_http_errors));
  fail_unless_equals_uint64 (n_http_errors, 1);
  gst_structure_free (counts);
  gst_harness_teardown (h);

  /* stopped with transfers in flight */
  stop_after_first_sample (location);

  kill (pid, SIGTERM);
  g_spawn_close_pid (pid);
  close (out);
  remove_shards (dir, 3);
  g_unlink (index);
  g_rmdir (dir);
  g_free (index);
  g_free (location);
  g_free (dir);
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
  tcase_add_test (tc, test_shards_expand);
  tcase_add_test (tc, test_shards_plan);
  tcase_add_test (tc, test_spdlsrc_shards);
  tcase_add_test (tc, test_spdlsrc_http_shards);
  return s;
}

SPDL_CHECK_MAIN (spdltar);
