/* gst-spdl: the full CPU pipeline over a dirty dataset
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spdltestutil.h"
#include "gstspdlmeta.h"
#include "gstspdlrecord.h"
#include "spdlcheckmain.h"

#define ITEM(run, i) ((SpdlTestItem *) g_ptr_array_index ((run)->items, (i)))

typedef struct
{
  const gchar *name;
  const gchar *why;             /* NULL: must decode */
} Entry;

/* good samples of every kind, bad ones of every kind */
static const Entry class0[] = {
  {"baseline.jpg", NULL}, {"progressive.jpg", NULL}, {"gray.jpg", NULL},
  {"cmyk.jpg", NULL}, {"arith.jpg", NULL}, {"restart.jpg", NULL},
  {"one-pixel.jpg", NULL}, {"tiny.jpg", NULL},
  {"zero.jpg", "empty"}, {"cut-header.jpg", "truncated"},
  {"cut-middle.jpg", "truncated"}, {"cut-end.jpg", "truncated"},
  {"noise.jpg", "not a JPEG"}, {"png.jpg", "PNG"},
  {"bomb.jpg", "max-pixels"},
};

static const Entry class1[] = {
  {"good-a.jpg", NULL}, {"good-b.jpg", NULL}, {"vanishes.jpg",
      "No such file"},
  {"x.jpg/inner.jpg", NULL},    /* a folder named x.jpg is walked, as in
                                 * torchvision; its image is a sample */
};

static guint8 *
encode (guint w, guint h, void (*tweak) (SpdlTestJpeg *), gsize * size)
{
  SpdlTestJpeg o;

  spdl_test_jpeg_init (&o, w, h);
  if (tweak)
    tweak (&o);
  return spdl_test_encode_jpeg (&o, size);
}

static void
progressive (SpdlTestJpeg * o)
{
  o->progressive = TRUE;
}

static void
gray (SpdlTestJpeg * o)
{
  o->gray = TRUE;
}

static void
cmyk (SpdlTestJpeg * o)
{
  o->cmyk = TRUE;
}

static void
arith (SpdlTestJpeg * o)
{
  o->arithmetic = TRUE;
}

static void
restart (SpdlTestJpeg * o)
{
  o->restart_interval = 1;
}

static void
write_at (const gchar * root, const gchar * rel, const guint8 * data,
    gsize size)
{
  gchar *path = g_build_filename (root, rel, NULL);

  spdl_test_write_file (path, (const gchar *) data, size);
  g_free (path);
}

static gchar *
make_dirty_dataset (void)
{
  gchar *root = spdl_test_make_tmpdir ();
  guint8 *good, *tmp, noise[4096];
  gsize size, tsize;
  gchar *loop_link, *loop_target;
  guint i;

  for (i = 0; i < sizeof (noise); i++)
    noise[i] = (guint8) (i * 2654435761u >> 13);
  good = encode (96, 64, NULL, &size);
  write_at (root, "c0/baseline.jpg", good, size);
  write_at (root, "c0/zero.jpg", good, 0);
  write_at (root, "c0/cut-header.jpg", good, 40);
  write_at (root, "c0/cut-middle.jpg", good, size / 2);
  write_at (root, "c0/cut-end.jpg", good, size - 3);
  write_at (root, "c0/noise.jpg", noise, sizeof (noise));
  write_at (root, "c0/png.jpg",
      (const guint8 *) "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  write_at (root, "c1/good-a.jpg", good, size);
  write_at (root, "c1/vanishes.jpg", good, size);
  write_at (root, "c1/x.jpg/inner.jpg", good, size);
  g_free (good);
#define KIND(rel, w, h, fn) \
  tmp = encode (w, h, fn, &tsize); \
  write_at (root, rel, tmp, tsize); \
  g_free (tmp)
  KIND ("c0/progressive.jpg", 80, 60, progressive);
  KIND ("c0/gray.jpg", 80, 60, gray);
  KIND ("c0/cmyk.jpg", 80, 60, cmyk);
  KIND ("c0/arith.jpg", 80, 60, arith);
  KIND ("c0/restart.jpg", 80, 60, restart);
  KIND ("c0/one-pixel.jpg", 1, 1, NULL);
  KIND ("c0/tiny.jpg", 3, 2, NULL);
  KIND ("c1/good-b.jpg", 50, 70, NULL);
#undef KIND
  /* a header claiming 60000 x 60000 */
  tmp = encode (16, 16, NULL, &tsize);
  for (i = 0; i + 8 < tsize; i++)
    if (tmp[i] == 0xFF && tmp[i + 1] == 0xC0) {
      tmp[i + 5] = tmp[i + 7] = 60000 >> 8;
      tmp[i + 6] = tmp[i + 8] = 60000 & 0xff;
      break;
    }
  write_at (root, "c0/bomb.jpg", tmp, tsize);
  g_free (tmp);
  /* a symlink loop: c1/loop -> c1 */
  loop_link = g_build_filename (root, "c1", "loop", NULL);
  loop_target = g_build_filename (root, "c1", NULL);
  fail_unless (symlink (loop_target, loop_link) == 0);
  g_free (loop_link);
  g_free (loop_target);
  return root;
}

static void
vanish_hook (GstElement * pipeline, gpointer root)
{
  gchar *path = g_build_filename (root, "c1", "vanishes.jpg", NULL);

  fail_unless_equals_int (g_unlink (path), 0);
  g_free (path);
}

/* The dataset's listing: index -> relative path. */
static GPtrArray *
listing (const gchar * root)
{
  gchar *launch = g_strdup_printf ("spdlsrc location=%s", root);
  SpdlTestRun *run = spdl_test_run (launch);
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  guint i;

  fail_unless (run->error == NULL);
  for (i = 0; i < run->items->len; i++)
    if (!ITEM (run, i)->is_epoch_end)
      g_ptr_array_add (paths, g_strdup (ITEM (run, i)->path +
              strlen (root) + 1));
  spdl_test_run_free (run);
  g_free (launch);
  return paths;
}

static gboolean
is_good (const gchar * rel)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (class0); i++)
    if (g_str_has_suffix (rel, class0[i].name) && g_str_has_prefix (rel, "c0"))
      return class0[i].why == NULL;
  for (i = 0; i < G_N_ELEMENTS (class1); i++)
    if (g_str_has_suffix (rel, class1[i].name) && g_str_has_prefix (rel, "c1"))
      return class1[i].why == NULL;
  return FALSE;
}

GST_START_TEST (test_dirty_dataset)
{
  gchar *root = make_dirty_dataset ();
  GPtrArray *paths = listing (root);
  /* little read-ahead, so that vanishes.jpg is still unread when the
   * pipeline prerolls and the hook deletes it */
  gchar *launch = g_strdup_printf ("spdlsrc location=%s prefetch=0 ! "
      "spdldecode threads=1 width=16 height=16 mode=center-crop ! "
      "spdlbatch batch-size=4 ", root);
  SpdlTestRun *run;
  guint *delivered = g_new0 (guint, paths->len);
  guint i, good = 0, batch_samples = 0;

  /* the loop was listed once, and said so */
  fail_unless_equals_int (paths->len, G_N_ELEMENTS (class0) +
      G_N_ELEMENTS (class1));
  run = spdl_test_run_with_hook (launch, vanish_hook, root);
  fail_unless (run->error == NULL, "%s", run->error);

  /* every good sample exactly once, with its class's label */
  for (i = 0; i < run->items->len; i++) {
    SpdlTestItem *item = ITEM (run, i);
    GstCustomMeta *meta;
    const GValue *indices;
    GstMapInfo labels;
    guint k, n;

    if (item->is_epoch_end)
      continue;
    meta = gst_buffer_get_custom_meta (item->buffer, GST_SPDL_BATCH_META_NAME);
    indices = gst_structure_get_value (gst_custom_meta_get_structure (meta),
        "indices");
    n = gst_value_array_get_size (indices);
    gst_memory_map (gst_buffer_peek_memory (item->buffer, 1), &labels,
        GST_MAP_READ);
    for (k = 0; k < n; k++) {
      guint64 idx = g_value_get_uint64 (gst_value_array_get_value (indices,
              k));
      const gchar *rel = g_ptr_array_index (paths, idx);
      fail_unless (is_good (rel), "%s was delivered", rel);
      fail_unless_equals_int (((gint64 *) labels.data)[k], rel[1] - '0');
      delivered[idx]++;
    }
    gst_memory_unmap (gst_buffer_peek_memory (item->buffer, 1), &labels);
    batch_samples += n;
  }
  for (i = 0; i < paths->len; i++) {
    const gchar *rel = g_ptr_array_index (paths, i);
    if (is_good (rel)) {
      good++;
      fail_unless_equals_int (delivered[i], 1);
    }
  }
  fail_unless_equals_int (batch_samples, good);

  /* each bad sample: a warning naming it and the reason */
  for (i = 0; i < G_N_ELEMENTS (class0); i++)
    if (class0[i].why)
      fail_unless (spdl_test_run_warned (run, class0[i].name, class0[i].why),
          "no warning for %s (%s)", class0[i].name, class0[i].why);
  fail_unless (spdl_test_run_warned (run, "vanishes.jpg", "No such file"));
  fail_unless (spdl_test_run_warned (run, "loop", "symlink loop"));

  /* counts by reason at EOS */
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdlsrc",
          "unreadable"), 1);
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
          "total"), 7);
  /* png.jpg: a PNG (by its bytes) cut inside its header */
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
          "truncated"), 4);
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
          "not-jpeg"), 1);
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
          "too-large"), 1);
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
          "empty"), 1);
  spdl_test_run_free (run);
  g_free (launch);

  /* past max-errors the pipeline stops with an error, and does not hang */
  launch = g_strdup_printf ("spdlsrc location=%s ! spdldecode width=16 "
      "height=16 max-errors=2 ! spdlbatch batch-size=4 ", root);
  run = spdl_test_run (launch);
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "max-errors=2") != NULL, "%s", run->error);
  spdl_test_run_free (run);

  g_free (launch);
  g_free (delivered);
  g_ptr_array_unref (paths);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_unreadable_permission)
{
  gchar *root, *path, *launch;
  SpdlTestRun *run;

  if (geteuid () == 0) {
    g_print ("test_unreadable_permission: running as root, which reads "
        "any file: nothing to test\n");
    return;
  }
  root = spdl_test_make_image_folder (1, 3, 32, 32);
  path = g_build_filename (root, "class00", "img001.jpg", NULL);
  fail_unless (g_chmod (path, 0) == 0);
  launch = g_strdup_printf ("spdlsrc location=%s ! spdldecode width=8 "
      "height=8", root);
  run = spdl_test_run (launch);
  fail_unless (run->error == NULL);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 2);
  fail_unless (spdl_test_run_warned (run, "img001.jpg", "Permission denied"));
  spdl_test_run_free (run);
  g_free (launch);
  g_free (path);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* Names that are samples like any other: spaces, a tab, a newline, bytes
 * that are not UTF-8 (Latin-1 "caf\xe9"). */
static const gchar *const odd_names[] = {
  "name with spaces.jpg", "tab\there.jpg", "new\nline.jpg",
  "caf\xe9.jpg",
};

static gchar *
make_hostile_tree (void)
{
  gchar *root = spdl_test_make_tmpdir ();
  gchar *dir = g_build_filename (root, "c0", NULL);
  gchar *path;
  guint8 *good;
  gsize size;
  guint i;
  int fd;

  good = encode (24, 20, NULL, &size);
  write_at (dir, "good.jpg", good, size);
  for (i = 0; i < G_N_ELEMENTS (odd_names); i++)
    write_at (dir, odd_names[i], good, size);
  /* a corrupt file whose name is not UTF-8: its warning must name it */
  write_at (dir, "bad\xff\xfe.jpg", (const guint8 *) "not a jpeg", 10);
  g_free (good);

  /* opening a FIFO blocks until a writer comes: never open one */
  path = g_build_filename (dir, "fifo.jpg", NULL);
  fail_unless (mkfifo (path, 0644) == 0);
  g_free (path);
  /* endless bytes */
  path = g_build_filename (dir, "zero.jpg", NULL);
  fail_unless (symlink ("/dev/zero", path) == 0);
  g_free (path);
  /* 64 GiB, no blocks on disk: never allocate its size */
  path = g_build_filename (dir, "sparse.jpg", NULL);
  fd = open (path, O_CREAT | O_WRONLY, 0644);
  fail_unless (fd >= 0);
  fail_unless (ftruncate (fd, (off_t) 64 << 30) == 0);
  close (fd);
  g_free (path);
  g_free (dir);
  return root;
}

static gboolean
all_valid_utf8 (GList * strings)
{
  for (; strings; strings = strings->next)
    if (!g_utf8_validate (strings->data, -1, NULL))
      return FALSE;
  return TRUE;
}

GST_START_TEST (test_hostile_file_types)
{
  gchar *root = make_hostile_tree ();
  gchar *launch = g_strdup_printf ("spdlsrc location=\"%s\" prefetch=2 "
      "prefetch-threshold=0 ! spdldecode threads=2 width=16 height=16 ",
      root);
  /* watched by spdl_test_run's deadline and check's test timeout */
  SpdlTestRun *run = spdl_test_run (launch);
  const gchar *expected_paths[G_N_ELEMENTS (odd_names) + 1];
  gboolean found_latin1 = FALSE;
  guint i, k, n = 0;

  fail_unless (run->error == NULL, "%s", run->error);
  /* good.jpg and the odd names, each exactly once */
  expected_paths[0] = "good.jpg";
  for (i = 0; i < G_N_ELEMENTS (odd_names); i++)
    expected_paths[i + 1] = odd_names[i];
  for (i = 0; i < run->items->len; i++) {
    SpdlTestItem *item = ITEM (run, i);
    GstCustomMeta *meta;
    const GstStructure *st;
    if (item->is_epoch_end)
      continue;
    n++;
    fail_unless (g_utf8_validate (item->path, -1, NULL), "%s", item->path);
    meta = gst_buffer_get_custom_meta (item->buffer,
        GST_SPDL_SAMPLE_META_NAME);
    st = gst_custom_meta_get_structure (meta);
    if (gst_structure_has_field (st, "path-bytes")) {
      /* the real bytes travel beside the display name */
      GBytes *bytes = NULL;
      gsize len;
      const gchar *data;
      gchar *want = g_build_filename (root, "c0", "caf\xe9.jpg", NULL);
      fail_unless (gst_structure_get (st, "path-bytes", G_TYPE_BYTES, &bytes,
              NULL));
      data = g_bytes_get_data (bytes, &len);
      fail_unless_equals_int (len, strlen (want));
      fail_unless (memcmp (data, want, len) == 0);
      fail_unless (strstr (item->path, "caf") != NULL);
      found_latin1 = TRUE;
      g_bytes_unref (bytes);
      g_free (want);
      continue;
    }
    for (k = 0; k < G_N_ELEMENTS (expected_paths); k++)
      if (expected_paths[k] && g_str_has_suffix (item->path,
              expected_paths[k])) {
        expected_paths[k] = NULL;
        break;
      }
    fail_unless (k < G_N_ELEMENTS (expected_paths), "unexpected %s",
        item->path);
  }
  fail_unless (found_latin1);
  fail_unless_equals_int (n, 1 + G_N_ELEMENTS (odd_names));

  /* the others skipped, named, with the reason */
  fail_unless (spdl_test_run_warned (run, "fifo.jpg", "FIFO"));
  fail_unless (spdl_test_run_warned (run, "zero.jpg", "device"));
  fail_unless (spdl_test_run_warned (run, "sparse.jpg", "max-file-size"));
  fail_unless (spdl_test_run_warned (run, "bad", "not a JPEG"));
  fail_if (spdl_test_run_warned (run, "unknown sample", ""));
  fail_unless (all_valid_utf8 (run->warnings));
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdlsrc",
          "not-a-file"), 2);
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdlsrc",
          "too-large"), 1);
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdlsrc",
          "total"), 3);
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
          "not-jpeg"), 1);
  spdl_test_run_free (run);
  g_free (launch);

  /* max-file-size is the user's: a small limit skips ordinary files, here
   * all of them, which ends in an error naming the epoch, not in an empty
   * epoch */
  launch = g_strdup_printf ("spdlsrc location=\"%s\" max-file-size=5 ",
      root);
  run = spdl_test_run (launch);
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "None of the 9 samples of epoch 0") !=
      NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 0 + 0);
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdlsrc",
          "too-large"), 1 + 1 + G_N_ELEMENTS (odd_names) + 1);
  spdl_test_run_free (run);
  g_free (launch);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* Sidecars (spdlsrc's fields) as hostile as the images: each bad one
 * skips its sample, named, by reason; none blocks or crashes. */
GST_START_TEST (test_hostile_sidecars)
{
  gchar *root = spdl_test_make_tmpdir ();
  static const gchar *const names[] = { "a", "b", "c", "d", "e", "f", "g",
    "h"
  };
  gchar *launch, *fifo, *deep, *big;
  SpdlTestRun *run;
  guint8 *good;
  gsize size;
  guint i, n = 0;

  good = encode (32, 24, NULL, &size);
  for (i = 0; i < G_N_ELEMENTS (names); i++) {
    gchar *rel = g_strdup_printf ("c0/%s.jpg", names[i]);
    gchar *txt = g_strdup_printf ("c0/%s.txt", names[i]);
    gchar *id = g_strdup_printf ("c0/%s.id", names[i]);
    gchar *json = g_strdup_printf ("c0/%s.json", names[i]);
    gchar *caption = g_strdup_printf ("caption %s", names[i]);

    write_at (root, rel, good, size);
    if (i != 1 && i != 2 && i != 5 && i != 6)
      write_at (root, txt, (const guint8 *) caption, strlen (caption));
    write_at (root, id, (const guint8 *) (i == 4 ?
            "99999999999999999999999" : " 7\n"), i == 4 ? 23 : 3);
    g_free (rel);
    g_free (txt);
    write_at (root, json, (const guint8 *) "{}", 2);
    g_free (id);
    g_free (json);
    g_free (caption);
  }
  g_free (good);
  /* a: duplicate JSON keys (json.loads keeps the last): a sample */
  write_at (root, "c0/a.json", (const guint8 *) "{\"k\": 1, \"k\": 2}", 16);
  write_at (root, "c0/b.txt", (const guint8 *) "caption \xff\xfe", 10);
  write_at (root, "c0/c.txt", (const guint8 *) "nul\0byte", 8);
  deep = g_strnfill (4000, '[');
  memset (deep + 2000, ']', 2000);
  write_at (root, "c0/d.json", (const guint8 *) deep, 4000);
  g_free (deep);
  fifo = g_build_filename (root, "c0", "f.txt", NULL);
  fail_unless (mkfifo (fifo, 0600) == 0);
  g_free (fifo);
  big = g_strnfill (5000, 'x');
  write_at (root, "c0/g.txt", (const guint8 *) big, 5000);
  g_free (big);
  /* a mask beside h.jpg: its sidecar, no sample */
  write_at (root, "c0/h.seg.jpg", (const guint8 *) "mask", 4);

  launch = g_strdup_printf ("spdlsrc location=\"%s\" prefetch=2 "
      "prefetch-threshold=0 max-field-size=4096 "
      "fields=txt,json,id:int,seg.jpg:bytes:empty", root);
  run = spdl_test_run (launch);
  fail_unless (run->error == NULL, "%s", run->error);
  for (i = 0; i < run->items->len; i++) {
    SpdlTestItem *item = ITEM (run, i);
    const GValue *v;

    if (item->is_epoch_end)
      continue;
    n++;
    fail_unless (g_str_has_suffix (item->path, "/a.jpg") ||
        g_str_has_suffix (item->path, "/h.jpg"), "%s", item->path);
    fail_unless_equals_int (gst_spdl_buffer_get_record_size (item->buffer),
        4);
    v = gst_spdl_buffer_get_record_value (item->buffer, 2);
    fail_unless_equals_int (g_value_get_int64 (v), 7);
    v = gst_spdl_buffer_get_record_value (item->buffer, 1);
    fail_unless_equals_string (g_value_get_string (v),
        g_str_has_suffix (item->path, "/a.jpg") ? "{\"k\": 1, \"k\": 2}" :
        "{}");
    v = gst_spdl_buffer_get_record_value (item->buffer, 3);
    fail_unless_equals_int (g_bytes_get_size (g_value_get_boxed (v)),
        g_str_has_suffix (item->path, "/h.jpg") ? 4 : 0);
  }
  fail_unless_equals_int (n, 2);
  fail_unless (spdl_test_run_warned (run, "b.jpg", "UTF-8"));
  fail_unless (spdl_test_run_warned (run, "c.jpg", "at byte 3"));
  fail_unless (spdl_test_run_warned (run, "d.jpg", "JSON"));
  fail_unless (spdl_test_run_warned (run, "e.jpg", "int64"));
  fail_unless (spdl_test_run_warned (run, "f.jpg", "FIFO"));
  fail_unless (spdl_test_run_warned (run, "g.jpg", "max-field-size"));
  fail_unless (all_valid_utf8 (run->warnings));
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdlsrc",
          "bad-field"), 5);
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdlsrc",
          "field-too-large"), 1);
  spdl_test_run_free (run);
  g_free (launch);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* Warnings on the bus are bounded per epoch; the summary keeps counts. */
GST_START_TEST (test_warning_limit_per_epoch)
{
  gchar *root = spdl_test_make_image_folder (1, 2, 16, 16);
  gchar *launch;
  SpdlTestRun *run;
  const GstStructure *summary;
  guint64 total = 0, suppressed = 0, corrupt = 0;
  guint i;

  for (i = 0; i < 5; i++) {
    gchar *path = g_strdup_printf ("%s/class00/bad%u.jpg", root, i);
    spdl_test_write_file (path, "\xff\xd8garbage", -1);
    g_free (path);
  }
  launch = g_strdup_printf ("spdlsrc location=%s num-epochs=2 ! spdldecode "
      "width=8 height=8 warning-limit=2 ", root);
  run = spdl_test_run (launch);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 2 * 2);
  /* 2 warnings per epoch, not 5 */
  fail_unless_equals_int (g_list_length (run->warnings), 2 * 2);
  for (i = 0; i < 2; i++) {
    summary = spdl_test_run_epoch_skipped (run, "spdldecode", i);
    fail_unless (summary != NULL, "no summary for epoch %u", i);
    fail_unless (gst_structure_get_uint64 (summary, "total", &total));
    fail_unless (gst_structure_get_uint64 (summary, "suppressed",
            &suppressed));
    fail_unless_equals_uint64 (total, 5);
    fail_unless_equals_uint64 (suppressed, 3);
  }
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
          "total"), 10);
  fail_unless (gst_structure_get_uint64 (summary, "truncated", &corrupt) ||
      gst_structure_get_uint64 (summary, "corrupt", &corrupt));
  spdl_test_run_free (run);
  g_free (launch);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

static Suite *
hostile_suite (void)
{
  Suite *s = suite_create ("hostile");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_dirty_dataset);
  tcase_add_test (tc, test_unreadable_permission);
  tcase_add_test (tc, test_hostile_file_types);
  tcase_add_test (tc, test_warning_limit_per_epoch);
  tcase_add_test (tc, test_hostile_sidecars);
  return s;
}

SPDL_CHECK_MAIN (hostile);
