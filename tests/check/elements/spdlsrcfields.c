/* gst-spdl: spdlsrc's sample records (fields beside the media)
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
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "spdltestutil.h"
#include "gstspdlmeta.h"
#include "gstspdlrecord.h"
#include "spdlcheckmain.h"

/* What a run delivered: per sample "PATH|MEDIA|V0|V1...", its caps'
 * "fields", the error (NULL without one) and the skips by reason. */
typedef struct
{
  GPtrArray *samples;
  gchar *caps_fields;
  gchar *span_policy;
  gchar *fingerprint;
  gchar *error;
  GstStructure *counts;
} Run;

static void
append_value (GString * out, const GValue * v)
{
  g_string_append_c (out, '|');
  if (G_VALUE_HOLDS_INT64 (v)) {
    g_string_append_printf (out, "%" G_GINT64_FORMAT, g_value_get_int64 (v));
  } else if (G_VALUE_HOLDS_DOUBLE (v)) {
    g_string_append_printf (out, "%g", g_value_get_double (v));
  } else if (G_VALUE_HOLDS_STRING (v)) {
    g_string_append (out, g_value_get_string (v));
  } else {
    gsize len;
    const gchar *data = g_bytes_get_data (g_value_get_boxed (v), &len);
    g_string_append (out, "b:");
    g_string_append_len (out, data, len);
  }
}

static void
on_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, Run * run)
{
  GString *out = g_string_new (gst_spdl_buffer_get_path (buf));
  GstMapInfo map;
  guint i, n = gst_spdl_buffer_get_record_size (buf);

  /* the path's base name only: the folders are temporary */
  if (strrchr (out->str, '/'))
    g_string_erase (out, 0, strrchr (out->str, '/') + 1 - out->str);
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  g_string_append_c (out, '|');
  g_string_append_len (out, (const gchar *) map.data, map.size);
  gst_buffer_unmap (buf, &map);
  for (i = 0; i < n; i++)
    append_value (out, gst_spdl_buffer_get_record_value (buf, i));
  {
    gdouble start, duration;
    const gchar *row = gst_spdl_buffer_get_manifest_row (buf);

    /* a manifest row's span, and its line */
    if (gst_spdl_buffer_get_span (buf, &start, &duration))
      g_string_append_printf (out, "|@%g+%g:%s", start, duration,
          row && strrchr (row, ':') ? strrchr (row, ':') + 1 : "?");
  }
  g_ptr_array_add (run->samples, g_string_free (out, FALSE));
  if (run->caps_fields == NULL) {
    GstCaps *caps = gst_pad_get_current_caps (pad);
    const gchar *f = caps ?
        gst_structure_get_string (gst_caps_get_structure (caps, 0),
        "fields") : NULL;
    const gchar *policy = caps ?
        gst_structure_get_string (gst_caps_get_structure (caps, 0),
        "span-policy") : NULL;
    run->caps_fields = g_strdup (f ? f : "");
    run->span_policy = g_strdup (policy);
    if (caps)
      gst_caps_unref (caps);
  }
}

/* Plays spdlsrc with the properties "NAME", value, ... to its end. */
static Run *
run_src (const gchar * location, const gchar * first, ...)
{
  GstElement *pipe = gst_pipeline_new (NULL);
  GstElement *src = gst_element_factory_make ("spdlsrc", NULL);
  GstElement *sink = gst_element_factory_make ("fakesink", NULL);
  Run *run = g_new0 (Run, 1);
  GstMessage *msg;
  GstBus *bus;
  va_list args;

  run->samples = g_ptr_array_new_with_free_func (g_free);
  g_object_set (src, "location", location, NULL);
  va_start (args, first);
  if (first)
    g_object_set_valist (G_OBJECT (src), first, args);
  va_end (args);
  g_object_set (sink, "signal-handoffs", TRUE, "sync", FALSE, NULL);
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), run);
  gst_bin_add_many (GST_BIN (pipe), src, sink, NULL);
  fail_unless (gst_element_link (src, sink));
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipe);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *error = NULL;
    gst_message_parse_error (msg, &error, NULL);
    run->error = g_strdup (error->message);
    g_error_free (error);
  }
  gst_message_unref (msg);
  g_object_get (src, "error-counts", &run->counts, "dataset-fingerprint",
      &run->fingerprint, NULL);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  return run;
}

static void
run_free (Run * run)
{
  g_ptr_array_unref (run->samples);
  g_free (run->caps_fields);
  g_free (run->span_policy);
  g_free (run->fingerprint);
  g_free (run->error);
  if (run->counts)
    gst_structure_free (run->counts);
  g_free (run);
}

static guint64
skipped (Run * run, const gchar * reason)
{
  guint64 n = 0;

  gst_structure_get_uint64 (run->counts, reason, &n);
  return n;
}

/* Asserts the run's samples are exactly @expected (NULL-terminated),
 * in any order (shuffles, elastic order). */
static void
assert_samples (Run * run, const gchar * const *expected)
{
  guint i;

  fail_unless (run->error == NULL, "error: %s", run->error);
  fail_unless_equals_int (run->samples->len, g_strv_length ((gchar **)
          expected));
  for (i = 0; expected[i]; i++) {
    guint j;
    gboolean found = FALSE;
    for (j = 0; j < run->samples->len && !found; j++)
      found = strcmp (g_ptr_array_index (run->samples, j), expected[i]) == 0;
    fail_unless (found, "no sample \"%s\" (first: \"%s\")", expected[i],
        run->samples->len ? (gchar *) g_ptr_array_index (run->samples, 0) :
        "");
  }
}

/* ------------------------------------------------------------------------ */
/* Tar shards                                                               */

static void
tar_member (GByteArray * tar, const gchar * key, const gchar * ext,
    const gchar * data, gssize len)
{
  gchar *name = g_strdup_printf ("%s.%s", key, ext);

  if (len < 0)
    len = strlen (data);
  spdl_test_tar_header (tar, name, '0', len, NULL);
  spdl_test_tar_data (tar, (const guint8 *) data, len);
  g_free (name);
}

/* numpy.save (np.array ([7])): its header padded to 128 bytes, then 7 */
#define NPY_PAD "                                                            "
static const gchar npy[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<i8', "
    "'fortran_order': False, 'shape': (1,), }" NPY_PAD "\n"
    "\x07\x00\x00\x00\x00\x00\x00\x00";
G_STATIC_ASSERT (sizeof (npy) - 1 == 136);

/* Five samples k000..k004: jpg "img kN", cls N, txt "caption kN é"
 * (absent in k002), json {"i": N}, npy. @bad: k003's txt is not UTF-8,
 * k004's json nested 600 deep and k001's txt 3000 bytes. */
static gchar *
write_shard (const gchar * dir, gboolean bad)
{
  static const guint8 zeros[1024] = { 0, };
  GByteArray *tar = g_byte_array_new ();
  gchar *path = g_build_filename (dir, "s-000.tar", NULL);
  guint i;

  for (i = 0; i < 5; i++) {
    gchar *key = g_strdup_printf ("k%03u", i);
    gchar *img = g_strdup_printf ("img %s", key);
    gchar *cls = g_strdup_printf ("%u", i);
    gchar *txt = g_strdup_printf ("caption %s \xc3\xa9", key);
    gchar *json = g_strdup_printf ("{\"i\": %u}", i);

    tar_member (tar, key, "cls", cls, -1);
    tar_member (tar, key, "jpg", img, -1);
    if (bad && i == 4) {
      GString *deep = g_string_new (NULL);
      guint d;
      for (d = 0; d < 600; d++)
        g_string_append_c (deep, '[');
      for (d = 0; d < 600; d++)
        g_string_append_c (deep, ']');
      tar_member (tar, key, "json", deep->str, -1);
      g_string_free (deep, TRUE);
    } else {
      tar_member (tar, key, "json", json, -1);
    }
    tar_member (tar, key, "npy", npy, sizeof (npy) - 1);
    if (bad && i == 3)
      tar_member (tar, key, "txt", "caption \xff\xfe", -1);
    else if (bad && i == 1) {
      gchar *long_txt = g_strnfill (3000, 'x');
      tar_member (tar, key, "txt", long_txt, -1);
      g_free (long_txt);
    } else if (i != 2)
      tar_member (tar, key, "txt", txt, -1);
    g_free (key);
    g_free (img);
    g_free (cls);
    g_free (txt);
    g_free (json);
  }
  g_byte_array_append (tar, zeros, sizeof (zeros));
  fail_unless (g_file_set_contents (path, (const gchar *) tar->data, tar->len,
          NULL));
  g_byte_array_unref (tar);
  return path;
}

static const gchar *const shard_expected[] = {
  "s-000.tar:k000.jpg|img k000|caption k000 \xc3\xa9|{\"i\": 0}|0",
  "s-000.tar:k001.jpg|img k001|caption k001 \xc3\xa9|{\"i\": 1}|1",
  "s-000.tar:k003.jpg|img k003|caption k003 \xc3\xa9|{\"i\": 3}|3",
  "s-000.tar:k004.jpg|img k004|caption k004 \xc3\xa9|{\"i\": 4}|4",
  NULL
};

GST_START_TEST (test_shard_fields_both_orders)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *cache = g_build_filename (dir, "cache", NULL);
  gchar *shard = write_shard (dir, FALSE);
  guint order;

  for (order = 0; order < 2; order++) {
    Run *run = run_src (shard, "fields", "txt,json,cls", "elastic",
        order == 0, "shard-cache", cache, "shuffle", TRUE, NULL);

    /* k002 has no txt: skipped, counted */
    assert_samples (run, shard_expected);
    fail_unless_equals_string (run->caps_fields,
        "txt:string:skip,json:json:skip,cls:int:skip");
    fail_unless_equals_int (skipped (run, "missing-field"), 1);
    run_free (run);

    /* empty: k002 with an empty caption; npy as bytes */
    run = run_src (shard, "fields", "txt:empty,npy", "elastic", order == 0,
        "shard-cache", cache, NULL);
    fail_unless (run->error == NULL);
    fail_unless_equals_int (run->samples->len, 5);
    fail_unless_equals_string (g_ptr_array_index (run->samples, 2),
        "s-000.tar:k002.jpg|img k002||b:\x93NUMPY\x01");
    run_free (run);

    /* error: named */
    run = run_src (shard, "fields", "txt", "missing-field", 1, "elastic",
        order == 0, "shard-cache", cache, NULL);
    fail_unless (run->error != NULL);
    fail_unless (strstr (run->error, "k002") && strstr (run->error, "txt"),
        "%s", run->error);
    run_free (run);
  }
  spdl_test_remove_tree (dir);
  g_free (shard);
  g_free (cache);
  g_free (dir);
}

GST_END_TEST;

GST_START_TEST (test_shard_fields_bad)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *cache = g_build_filename (dir, "cache", NULL);
  gchar *shard = write_shard (dir, TRUE);
  guint order;

  for (order = 0; order < 2; order++) {
    Run *run = run_src (shard, "fields", "txt;cls:string,json", "elastic",
        order == 0, "shard-cache", cache, "max-field-size",
        (guint64) 2000, NULL);

    /* k001 too large, k003 not UTF-8, k004 too deep; k002 takes cls */
    fail_unless (run->error == NULL, "%s", run->error);
    fail_unless_equals_int (run->samples->len, 2);
    fail_unless_equals_string (g_ptr_array_index (run->samples, 0),
        "s-000.tar:k000.jpg|img k000|caption k000 \xc3\xa9|{\"i\": 0}");
    fail_unless_equals_string (g_ptr_array_index (run->samples, 1),
        "s-000.tar:k002.jpg|img k002|2|{\"i\": 2}");
    fail_unless_equals_int (skipped (run, "field-too-large"), 1);
    fail_unless_equals_int (skipped (run, "bad-field"), 2);
    run_free (run);
  }
  spdl_test_remove_tree (dir);
  g_free (shard);
  g_free (cache);
  g_free (dir);
}

GST_END_TEST;

/* Twenty samples in two shards, each with a caption naming its key. */
static gchar *
write_shards_20 (const gchar * dir)
{
  static const guint8 zeros[1024] = { 0, };
  guint s, i;

  for (s = 0; s < 2; s++) {
    GByteArray *tar = g_byte_array_new ();
    gchar *path = g_strdup_printf ("%s/r-%u.tar", dir, s);

    for (i = 0; i < 10; i++) {
      gchar *key = g_strdup_printf ("r%u_%02u", s, i);
      gchar *img = g_strdup_printf ("img %s", key);
      gchar *txt = g_strdup_printf ("caption of %s", key);

      tar_member (tar, key, "jpg", img, -1);
      tar_member (tar, key, "txt", txt, -1);
      g_free (key);
      g_free (img);
      g_free (txt);
    }
    g_byte_array_append (tar, zeros, sizeof (zeros));
    fail_unless (g_file_set_contents (path, (const gchar *) tar->data,
            tar->len, NULL));
    g_byte_array_unref (tar);
    g_free (path);
  }
  return g_strdup_printf ("%s/r-{0..1}.tar", dir);
}

/* A resumed run gets the same image-caption pairs, in the same order, as
 * the rest of an uninterrupted one: the fields change neither the order
 * nor the positions. */
GST_START_TEST (test_shard_fields_resume)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *cache = g_build_filename (dir, "cache", NULL);
  gchar *location = write_shards_20 (dir);
  Run *whole, *plain, *resumed;
  guint i;

  whole = run_src (location, "fields", "txt", "shuffle", TRUE, "seed",
      (guint64) 5, "shard-cache", cache, NULL);
  plain = run_src (location, "shuffle", TRUE, "seed", (guint64) 5,
      "shard-cache", cache, NULL);
  resumed = run_src (location, "fields", "txt", "shuffle", TRUE, "seed",
      (guint64) 5, "shard-cache", cache, "start-offset", (guint64) 7, NULL);
  fail_unless (whole->error == NULL && resumed->error == NULL);
  fail_unless_equals_int (whole->samples->len, 20);
  fail_unless_equals_int (plain->samples->len, 20);
  fail_unless_equals_int (resumed->samples->len, 13);
  for (i = 0; i < 20; i++) {
    const gchar *sample = g_ptr_array_index (whole->samples, i);
    const gchar *key = strstr (sample, ":r") + 1;
    gchar *caption = g_strdup_printf ("|caption of %.5s", key);

    /* the caption is its own image's */
    fail_unless (g_str_has_suffix (sample, caption), "%s", sample);
    /* the order is the one without fields */
    fail_unless (g_str_has_prefix (sample,
            g_ptr_array_index (plain->samples, i)));
    if (i >= 7)
      fail_unless_equals_string (g_ptr_array_index (resumed->samples, i - 7),
          sample);
    g_free (caption);
  }
  run_free (whole);
  run_free (plain);
  run_free (resumed);
  spdl_test_remove_tree (dir);
  g_free (location);
  g_free (cache);
  g_free (dir);
}

GST_END_TEST;

/* Remote shards: streamed (elastic=false), and in the elastic order (a
 * learned index) each sample's group read by range, from a server that
 * answers ranges whole too. */
GST_START_TEST (test_shard_fields_http)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *local = write_shards_20 (dir);
  const gchar *argv[] = { "/usr/bin/python3", "-u", "-m", "http.server", "0",
    "--bind", "127.0.0.1", "--directory", dir, NULL
  };
  gchar line[256] = { 0, }, *port, *url;
  GPid pid;
  gchar *cache = g_build_filename (dir, "cache", NULL);
  gint out;
  gssize n;
  Run *run;
  guint i, order;

  fail_unless (g_spawn_async_with_pipes (NULL, (gchar **) argv, NULL,
          G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &pid, NULL, &out, NULL,
          NULL));
  n = read (out, line, sizeof (line) - 1);
  port = n > 0 ? strstr (line, " port ") : NULL;
  fail_unless (port != NULL);
  url = g_strdup_printf ("http://127.0.0.1:%d/r-{0..1}.tar", atoi (port + 6));

  for (order = 0; order < 3; order++) {
    /* streamed; elastic on one rank; elastic, rank 1 of 2 */
    run = run_src (url, "fields", "txt", "elastic", order > 0,
        "shard-cache", cache, "shuffle", TRUE, "num-shards", order == 2 ?
        2 : 1, "shard-index", order == 2 ? 1 : 0, NULL);
    fail_unless (run->error == NULL, "%s", run->error);
    fail_unless_equals_int (run->samples->len, order == 2 ? 10 : 20);
    for (i = 0; i < run->samples->len; i++) {
      const gchar *sample = g_ptr_array_index (run->samples, i);
      const gchar *key = strstr (sample, ".tar:r") + 5;
      gchar *caption = g_strdup_printf ("|caption of %.5s", key);
      fail_unless (g_str_has_suffix (sample, caption), "%s", sample);
      g_free (caption);
    }
    run_free (run);
  }

  kill (pid, SIGTERM);
  g_spawn_close_pid (pid);
  close (out);
  spdl_test_remove_tree (dir);
  g_free (url);
  g_free (cache);
  g_free (local);
  g_free (dir);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Manifests with a header, folders                                         */

static gchar *
write_images (const gchar * dir, const gchar * sub)
{
  gchar *folder = g_build_filename (dir, sub, NULL);
  guint i;

  g_mkdir_with_parents (folder, 0755);
  for (i = 0; i < 3; i++) {
    gchar *name = g_strdup_printf ("%s/x%u.jpg", folder, i);
    gchar *data = g_strdup_printf ("img x%u", i);
    spdl_test_write_file (name, data, -1);
    g_free (name);
    g_free (data);
  }
  return folder;
}

static const gchar *const table_expected[] = {
  "x0.jpg|img x0|a, \"quoted\"\nline|0.5",
  "x1.jpg|img x1|plain|2",
  NULL
};

GST_START_TEST (test_manifest_tables)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *folder = write_images (dir, "img");
  gchar *csv = g_build_filename (dir, "m.csv", NULL);
  gchar *tsv = g_build_filename (dir, "m.tsv", NULL);
  gchar *jsonl = g_build_filename (dir, "m.jsonl", NULL);
  Run *run;

  spdl_test_write_file (csv, "label,caption,image,score\r\n"
      "3,\"a, \"\"quoted\"\"\nline\",img/x0.jpg,0.5\r\n"
      "4,plain,img/x1.jpg,2\r\n" "5,,img/x2.jpg,1\r\n", -1);
  /* x2's caption is empty: skipped */
  run = run_src (csv, "fields", "caption,score:float", NULL);
  assert_samples (run, table_expected);
  fail_unless_equals_int (skipped (run, "missing-field"), 1);
  run_free (run);

  spdl_test_write_file (tsv, "path\tcaption\tscore\n"
      "img/x0.jpg\ta, \"quoted\"\\nline\t0.5\n"
      "img/x1.jpg\tplain\t2\n", -1);
  run = run_src (tsv, "fields", "caption,score:float", NULL);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_string (g_ptr_array_index (run->samples, 0),
      "x0.jpg|img x0|a, \"quoted\"\\nline|0.5");
  run_free (run);

  spdl_test_write_file (jsonl,
      "{\"file\": \"img/x0.jpg\", \"caption\": \"a, \\\"quoted\\\"\\nline\", "
      "\"score\": 0.5, \"meta\": {\"a\": [1, 2]}}\n"
      "\n{\"file\": \"img/x1.jpg\", \"caption\": \"plain\", \"score\": 2, "
      "\"meta\": null}\n"
      "{\"file\": \"img/x2.jpg\", \"caption\": \"nul \\u0000\", "
      "\"score\": 1e999999}\n", -1);
  run = run_src (jsonl, "fields", "caption,score:float", NULL);
  /* x2: a NUL in its caption, a score out of float64's range */
  assert_samples (run, table_expected);
  fail_unless_equals_int (skipped (run, "bad-field"), 1);
  run_free (run);
  run = run_src (jsonl, "fields", "meta:json:empty", NULL);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_string (g_ptr_array_index (run->samples, 0),
      "x0.jpg|img x0|{\"a\": [1, 2]}");
  fail_unless_equals_string (g_ptr_array_index (run->samples, 1),
      "x1.jpg|img x1|null");
  run_free (run);
  /* a string as a json field: its JSON text, as json.dumps gives it back */
  run = run_src (jsonl, "fields", "caption:json", NULL);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_string (g_ptr_array_index (run->samples, 0),
      "x0.jpg|img x0|\"a, \\\"quoted\\\"\\nline\"");
  run_free (run);

  /* no path column: named */
  spdl_test_write_file (csv, "name,caption\nimg/x0.jpg,a\n", -1);
  run = run_src (csv, "fields", "caption", NULL);
  fail_unless (run->error && strstr (run->error, "name, caption"), "%s",
      run->error);
  run_free (run);
  /* path-column names it; a label that is no integer: its line */
  spdl_test_write_file (csv, "name,caption,label\nimg/x0.jpg,a,1\n"
      "img/x1.jpg,b,one\n", -1);
  run = run_src (csv, "fields", "caption", "path-column", "name", NULL);
  fail_unless (run->error && strstr (run->error, "m.csv:3:") &&
      strstr (run->error, "\"one\""), "%s", run->error);
  run_free (run);
  run = run_src (csv, "fields", "caption", "path-column", "file", NULL);
  fail_unless (run->error && strstr (run->error, "path-column"), "%s",
      run->error);
  run_free (run);
  /* a headerless manifest takes no field */
  spdl_test_write_file (tsv, "img/x0.jpg\t0\n", -1);
  run = run_src (tsv, "fields", "caption", NULL);
  fail_unless (run->error && strstr (run->error, "header"), "%s",
      run->error);
  run_free (run);
  run = run_src (tsv, NULL);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_string (g_ptr_array_index (run->samples, 0),
      "x0.jpg|img x0");
  run_free (run);
  /* line numbers */
  spdl_test_write_file (jsonl, "{\"path\": \"img/x0.jpg\"}\n{\"path\": \n",
      -1);
  run = run_src (jsonl, "fields", "caption:empty", NULL);
  fail_unless (run->error && strstr (run->error, "m.jsonl:2:"), "%s",
      run->error);
  run_free (run);

  spdl_test_remove_tree (dir);
  g_free (folder);
  g_free (csv);
  g_free (tsv);
  g_free (jsonl);
  g_free (dir);
}

GST_END_TEST;

GST_START_TEST (test_folder_sidecars)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *folder = write_images (dir, "cat");
  gchar *path;
  Run *run;
  static const gchar *const expected[] = {
    "x0.jpg|img x0|cap 0|b:mask 0",
    "x1.jpg|img x1|cap 1|b:",
    NULL
  };

  path = g_build_filename (folder, "x0.txt", NULL);
  spdl_test_write_file (path, "cap 0", -1);
  g_free (path);
  path = g_build_filename (folder, "x1.txt", NULL);
  spdl_test_write_file (path, "cap 1", -1);
  g_free (path);
  /* a sidecar with an image extension: no sample */
  path = g_build_filename (folder, "x0.seg.jpg", NULL);
  spdl_test_write_file (path, "mask 0", -1);
  g_free (path);

  run = run_src (dir, "fields", "txt,seg.jpg:bytes:empty", NULL);
  /* x2 has no txt: skipped */
  assert_samples (run, expected);
  fail_unless_equals_int (skipped (run, "missing-field"), 1);
  run_free (run);

  /* without fields, x0.seg.jpg is a sample as before */
  run = run_src (dir, NULL);
  fail_unless_equals_int (run->samples->len, 4);
  fail_unless_equals_string (run->caps_fields, "");
  run_free (run);

  spdl_test_remove_tree (dir);
  g_free (folder);
  g_free (dir);
}

GST_END_TEST;

/* NeMo's manifests (named .json) and CSV with start/end: a sample per row,
 * its span on the meta; NeMo's transcript sources; bad spans skipped as
 * bad-span (their file not read) or an error with missing-field=error. */
static const gchar *const nemo_expected[] = {
  "x0.jpg|img x0|caf\xc3\xa9, \"q\"|@0+1.5:1",
  "x0.jpg|img x0|from a file|@2.25+0.5:2",
  "x1.jpg|img x1|normalized|@1+2:3",
  "x1.jpg|img x1||@0+1:4",
  NULL
};

GST_START_TEST (test_manifest_spans)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *folder = write_images (dir, "img");
  gchar *nemo = g_build_filename (dir, "train.json", NULL);
  gchar *text = g_build_filename (dir, "t.txt", NULL);
  gchar *csv = g_build_filename (dir, "clips.csv", NULL);
  Run *run;
  guint64 n = 0;

  spdl_test_write_file (text, "from a file\n", -1);
  spdl_test_write_file (nemo,
      "{\"audio_filepath\": \"img/x0.jpg\", \"duration\": 1.5, "
      "\"text\": \"caf\\u00e9, \\\"q\\\"\", \"normalized_text\": \"n\"}\n"
      "{\"audio_filepath\": \"img/x0.jpg\", \"offset\": 2.25, "
      "\"duration\": 0.5, \"text_filepath\": \"t.txt\"}\n"
      "{\"audio_filepath\": \"img/x1.jpg\", \"offset\": 1, "
      "\"duration\": 2, \"normalized_text\": \"normalized\"}\n"
      "{\"audio_filepath\": \"img/x1.jpg\", \"duration\": 1, "
      "\"text\": \"\"}\n"
      "{\"audio_filepath\": \"img/x2.jpg\", \"offset\": -1, "
      "\"duration\": 1, \"text\": \"a\"}\n"
      "{\"audio_filepath\": \"img/x2.jpg\", \"text\": \"a\"}\n"
      "{\"audio_filepath\": \"img/x2.jpg\", \"duration\": \"long\", "
      "\"text\": \"a\"}\n"
      "{\"audio_filepath\": \"img/gone.jpg\", \"duration\": 1, "
      "\"text\": \"a\"}\n", -1);
  run = run_src (nemo, "fields", "text", NULL);
  assert_samples (run, nemo_expected);
  fail_unless_equals_string (run->span_policy, "skip");
  fail_unless_equals_int (skipped (run, "bad-span"), 3);
  fail_unless_equals_int (skipped (run, "unreadable"), 1);
  gst_structure_get_uint64 (run->counts, "total", &n);
  fail_unless_equals_int (n, 4);
  run_free (run);

  /* missing-field=error: the first bad row stops, named */
  run = run_src (nemo, "fields", "text", "missing-field", 1, NULL);
  fail_unless (run->error && strstr (run->error, "train.json:5") &&
      strstr (run->error, "negative offset") &&
      strstr (run->error, "x2.jpg"), "%s", run->error);
  fail_unless_equals_int (run->samples->len, 4);
  run_free (run);

  /* CSV: start and end; an ISO 8601 duration (WebVid's, the file's
   * length) is none; no span column: whole files */
  spdl_test_write_file (csv, "path,start,end,name\n"
      "img/x0.jpg,0.5,2,\"a, b\"\nimg/x1.jpg,,PT00H00M03S,c\n"
      "img/x2.jpg,3,1,d\n", -1);
  run = run_src (csv, "fields", "name:string", NULL);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (run->samples->len, 2);
  fail_unless_equals_string (g_ptr_array_index (run->samples, 0),
      "x0.jpg|img x0|a, b|@0.5+1.5:2");
  fail_unless_equals_string (g_ptr_array_index (run->samples, 1),
      "x1.jpg|img x1|c|@0+-1:3");
  fail_unless_equals_int (skipped (run, "bad-span"), 1);
  /* the same files at other offsets are another dataset to resume */
  {
    gchar *before = g_strdup (run->fingerprint);

    run_free (run);
    spdl_test_write_file (csv, "path,start,end,name\n"
        "img/x0.jpg,0.25,2,\"a, b\"\nimg/x1.jpg,,PT00H00M03S,c\n"
        "img/x2.jpg,3,1,d\n", -1);
    run = run_src (csv, "fields", "name:string", NULL);
    fail_unless (before && run->fingerprint &&
        strcmp (before, run->fingerprint) != 0, "%s", before);
    g_free (before);
  }
  run_free (run);
  spdl_test_write_file (csv, "path,name\nimg/x0.jpg,a\n", -1);
  run = run_src (csv, "fields", "name:string", NULL);
  fail_unless_equals_string (g_ptr_array_index (run->samples, 0),
      "x0.jpg|img x0|a");
  fail_unless (run->span_policy == NULL);
  run_free (run);

  spdl_test_remove_tree (dir);
  g_free (folder);
  g_free (nemo);
  g_free (text);
  g_free (csv);
  g_free (dir);
}

GST_END_TEST;

static Suite *
spdlsrcfields_suite (void)
{
  Suite *s = suite_create ("spdlsrcfields");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_shard_fields_both_orders);
  tcase_add_test (tc, test_shard_fields_bad);
  tcase_add_test (tc, test_shard_fields_resume);
  tcase_add_test (tc, test_shard_fields_http);
  tcase_add_test (tc, test_manifest_tables);
  tcase_add_test (tc, test_manifest_spans);
  tcase_add_test (tc, test_folder_sidecars);
  return s;
}

SPDL_CHECK_MAIN (spdlsrcfields);
