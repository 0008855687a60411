/* gst-spdl: spdlsrc reading WebDataset tar shards, local and over HTTP
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
#include "spdlcheckmain.h"

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
spdlsrcshards_suite (void)
{
  Suite *s = suite_create ("spdlsrcshards");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_spdlsrc_shards);
  tcase_add_test (tc, test_spdlsrc_http_shards);
  return s;
}

SPDL_CHECK_MAIN (spdlsrcshards);
