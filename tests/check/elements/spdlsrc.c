/* GStreamer SPDL plugin: spdlsrc unit tests
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <glib/gstdio.h>

#include "spdltestutil.h"
#include "gstspdlmeta.h"
#include "spdlcheckmain.h"

#define ITEM(run, i) ((SpdlTestItem *) g_ptr_array_index ((run)->items, (i)))

/* A folder of tiny fake samples: src only reads bytes, it does not decode. */
static gchar *
make_fake_folder (guint n_classes, guint per_class)
{
  gchar *root = spdl_test_make_tmpdir ();
  guint c, i;

  for (c = 0; c < n_classes; c++) {
    for (i = 0; i < per_class; i++) {
      gchar *path = g_strdup_printf ("%s/c%02u/s%03u.jpg", root, c, i);
      gchar *body = g_strdup_printf ("sample %u/%u", c, i);
      spdl_test_write_file (path, body, -1);
      g_free (body);
      g_free (path);
    }
  }
  return root;
}

/* Dataset indices of the samples of @epoch, in order. */
static GArray *
epoch_indices (SpdlTestRun * run, guint epoch)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint i;

  for (i = 0; i < run->items->len; i++) {
    if (!ITEM (run, i)->is_epoch_end && ITEM (run, i)->epoch == epoch)
      g_array_append_val (out, ITEM (run, i)->index);
  }
  return out;
}

static gboolean
arrays_equal (GArray * a, GArray * b)
{
  return a->len == b->len && memcmp (a->data, b->data,
      a->len * sizeof (guint64)) == 0;
}

static void
assert_each_once (GArray * indices, guint n)
{
  gboolean *seen = g_new0 (gboolean, n);
  guint i;

  fail_unless_equals_int (indices->len, n);
  for (i = 0; i < indices->len; i++) {
    guint64 idx = g_array_index (indices, guint64, i);
    fail_unless (idx < n);
    fail_if (seen[idx], "index %" G_GUINT64_FORMAT " seen twice", idx);
    seen[idx] = TRUE;
  }
  g_free (seen);
}

static SpdlTestRun *
run_src (const gchar * root, const gchar * props)
{
  gchar *launch = g_strdup_printf ("spdlsrc location=%s %s", root, props);
  SpdlTestRun *run = spdl_test_run (launch);

  g_free (launch);
  return run;
}

GST_START_TEST (test_order_labels_and_contents)
{
  gchar *root = make_fake_folder (3, 4);
  SpdlTestRun *run = run_src (root, "");
  guint i;

  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (run->items->len, 13);
  for (i = 0; i < 12; i++) {
    SpdlTestItem *item = ITEM (run, i);
    gchar *expected_path =
        g_strdup_printf ("%s/c%02u/s%03u.jpg", root, i / 4, i % 4);
    gchar *expected_body = g_strdup_printf ("sample %u/%u", i / 4, i % 4);
    GstMapInfo map;

    fail_if (item->is_epoch_end);
    fail_unless_equals_uint64 (item->index, i);
    /* labels are the sorted class folders' indices, as in ImageFolder */
    fail_unless_equals_int (item->label, i / 4);
    fail_unless_equals_int (item->epoch, 0);
    fail_unless_equals_string (item->path, expected_path);
    gst_buffer_map (item->buffer, &map, GST_MAP_READ);
    fail_unless_equals_int (map.size, strlen (expected_body));
    fail_unless (memcmp (map.data, expected_body, map.size) == 0);
    gst_buffer_unmap (item->buffer, &map);
    fail_unless (gst_structure_has_name (gst_caps_get_structure (item->caps,
                0), "image/jpeg"));
    g_free (expected_path);
    g_free (expected_body);
  }
  /* the epoch-end event comes after the epoch's last sample */
  fail_unless (ITEM (run, 12)->is_epoch_end);
  fail_unless_equals_int (ITEM (run, 12)->epoch, 0);
  fail_unless_equals_uint64 (ITEM (run, 12)->index, 12);
  spdl_test_run_free (run);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_imagefolder_like_torchvision)
{
  /* nested folders, mixed-case extensions, other files, files at the top */
  gchar *root = spdl_test_make_tmpdir ();
  const gchar *files[] = {
    "b/x.JPEG", "b/sub/y.jpg", "b/sub-z/w.jpg", "b/sub/inner/v.jpg",
    "a/2.jpg", "a/10.jpg", "a/notes.txt", "top.jpg", "c/nothing.gif",
    "d/e.jpeg",
  };
  /* what torchvision's make_dataset gives: folders sorted by full path
   * ("sub-z" before "sub/inner"), then files sorted by name */
  const gchar *expected[] = {
    "a/10.jpg", "a/2.jpg", "b/x.JPEG", "b/sub/y.jpg", "b/sub-z/w.jpg",
    "b/sub/inner/v.jpg", "d/e.jpeg",
  };
  /* "c" has no image but still takes label 2 */
  const gint labels[] = { 0, 0, 1, 1, 1, 1, 3 };
  SpdlTestRun *run;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (files); i++) {
    gchar *path = g_build_filename (root, files[i], NULL);
    spdl_test_write_file (path, "x", 1);
    g_free (path);
  }
  run = run_src (root, "");
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 7);
  for (i = 0; i < G_N_ELEMENTS (expected); i++) {
    gchar *path = g_build_filename (root, expected[i], NULL);
    fail_unless_equals_string (ITEM (run, i)->path, path);
    fail_unless_equals_int (ITEM (run, i)->label, labels[i]);
    g_free (path);
  }
  spdl_test_run_free (run);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_shuffle_epochs)
{
  gchar *root = make_fake_folder (5, 10);
  SpdlTestRun *a = run_src (root, "shuffle=true seed=7 num-epochs=3 "
      "prefetch-threshold=0");
  SpdlTestRun *b = run_src (root, "shuffle=true seed=7 num-epochs=3");
  SpdlTestRun *c = run_src (root, "shuffle=true seed=8 num-epochs=1");
  GArray *a0 = epoch_indices (a, 0), *a1 = epoch_indices (a, 1);
  GArray *a2 = epoch_indices (a, 2), *b0 = epoch_indices (b, 0);
  GArray *b1 = epoch_indices (b, 1), *c0 = epoch_indices (c, 0);
  GArray *identity = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint64 i;

  for (i = 0; i < 50; i++)
    g_array_append_val (identity, i);
  assert_each_once (a0, 50);
  assert_each_once (a1, 50);
  assert_each_once (a2, 50);
  fail_if (arrays_equal (a0, identity), "shuffle left the order as listed");
  fail_if (arrays_equal (a0, a1), "two epochs in the same order");
  fail_unless (arrays_equal (a0, b0), "same seed, different order");
  fail_unless (arrays_equal (a1, b1), "same seed, different order");
  fail_if (arrays_equal (a0, c0), "different seeds, same order");
  /* three epoch-end markers, each after its epoch's samples */
  fail_unless_equals_int (a->items->len, 153);
  fail_unless (ITEM (a, 50)->is_epoch_end && ITEM (a, 50)->epoch == 0);
  fail_unless (ITEM (a, 101)->is_epoch_end && ITEM (a, 101)->epoch == 1);
  fail_unless (ITEM (a, 152)->is_epoch_end && ITEM (a, 152)->epoch == 2);

  g_array_unref (a0);
  g_array_unref (a1);
  g_array_unref (a2);
  g_array_unref (b0);
  g_array_unref (b1);
  g_array_unref (c0);
  g_array_unref (identity);
  spdl_test_run_free (a);
  spdl_test_run_free (b);
  spdl_test_run_free (c);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* Runs every shard of one shuffled epoch; returns how often each sample
 * came, and checks the shards' sizes. */
static guint *
count_over_shards (const gchar * root, guint n, guint shards,
    const gchar * extra, guint expected_per_shard)
{
  guint *count = g_new0 (guint, n);
  guint s, i;

  for (s = 0; s < shards; s++) {
    gchar *props = g_strdup_printf ("shuffle=true seed=3 num-shards=%u "
        "shard-index=%u %s", shards, s, extra);
    SpdlTestRun *run = run_src (root, props);
    GArray *idx = epoch_indices (run, 0);

    fail_unless (run->error == NULL, "%s", run->error);
    fail_unless_equals_int (idx->len, expected_per_shard);
    for (i = 0; i < idx->len; i++)
      count[g_array_index (idx, guint64, i)]++;
    g_array_unref (idx);
    spdl_test_run_free (run);
    g_free (props);
  }
  return count;
}

/* The epoch's order depends on (seed, epoch) alone; a state saved at W
 * ranks (start-offset = k x W after every rank took k samples) resumes at
 * any W' with each remaining sample taken exactly once. */
GST_START_TEST (test_elastic_resume)
{
  gchar *root = make_fake_folder (1, 23);       /* N = 23 */
  SpdlTestRun *global = run_src (root, "shuffle=true seed=9 num-epochs=2");
  GArray *order0 = epoch_indices (global, 0), *order1 = epoch_indices (global,
      1);
  guint worlds[] = { 1, 2, 3, 5 };
  guint w, r, i;

  fail_unless_equals_int (order0->len, 23);
  /* rank r of 2 took 4 samples each: global positions 0..7 are consumed */
  for (w = 0; w < G_N_ELEMENTS (worlds); w++) {
    guint W = worlds[w], remaining = 23 - 8;
    guint per_rank = (remaining + W - 1) / W;
    guint *taken = g_new0 (guint, 23);

    for (r = 0; r < W; r++) {
      gchar *props = g_strdup_printf ("shuffle=true seed=9 num-epochs=2 "
          "start-offset=8 num-shards=%u shard-index=%u", W, r);
      SpdlTestRun *run = run_src (root, props);
      GArray *e0 = epoch_indices (run, 0), *e1 = epoch_indices (run, 1);

      fail_unless (run->error == NULL, "%s", run->error);
      /* every rank the same count; rank r takes positions 8 + r + jW */
      fail_unless_equals_int (e0->len, per_rank);
      for (i = 0; i < e0->len; i++) {
        guint64 pos = (8 + r + (guint64) i * W) % 23;
        fail_unless_equals_uint64 (g_array_index (e0, guint64, i),
            g_array_index (order0, guint64, pos));
        if (8 + r + i * W < 23)
          taken[g_array_index (e0, guint64, i)]++;
      }
      /* the next epoch is whole again, the same split as without resume */
      fail_unless_equals_int (e1->len, (23 + W - 1) / W);
      for (i = 0; i < e1->len; i++)
        fail_unless_equals_uint64 (g_array_index (e1, guint64, i),
            g_array_index (order1, guint64, (r + (guint64) i * W) % 23));
      g_array_unref (e0);
      g_array_unref (e1);
      spdl_test_run_free (run);
      g_free (props);
    }
    /* each remaining sample exactly once (padding aside), none consumed */
    for (i = 0; i < 23; i++)
      fail_unless_equals_int (taken[g_array_index (order0, guint64, i)],
          i < 8 ? 0 : 1);
    g_free (taken);
  }
  /* the old per-rank start-index is start-offset = start-index x W */
  {
    SpdlTestRun *a = run_src (root, "shuffle=true seed=9 num-shards=2 "
        "shard-index=1 start-index=4");
    SpdlTestRun *b = run_src (root, "shuffle=true seed=9 num-shards=2 "
        "shard-index=1 start-offset=8");
    GArray *ia = epoch_indices (a, 0), *ib = epoch_indices (b, 0);
    fail_unless (arrays_equal (ia, ib));
    g_array_unref (ia);
    g_array_unref (ib);
    spdl_test_run_free (a);
    spdl_test_run_free (b);
  }
  /* resumed exactly at an epoch's end: the next epoch follows */
  {
    SpdlTestRun *run = run_src (root, "shuffle=true seed=9 num-epochs=2 "
        "start-offset=23");
    GArray *e0 = epoch_indices (run, 0), *e1 = epoch_indices (run, 1);
    fail_unless (run->error == NULL, "%s", run->error);
    fail_unless_equals_int (e0->len, 0);
    fail_unless (arrays_equal (e1, order1));
    g_array_unref (e0);
    g_array_unref (e1);
    spdl_test_run_free (run);
  }
  g_array_unref (order0);
  g_array_unref (order1);
  spdl_test_run_free (global);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_shards)
{
  gchar *root = make_fake_folder (2, 5);        /* 10 samples */
  guint *count;
  guint i, total;

  /* even split: disjoint and complete */
  count = count_over_shards (root, 10, 2, "", 5);
  for (i = 0; i < 10; i++)
    fail_unless_equals_int (count[i], 1);
  g_free (count);

  /* 10 over 3: padded to 4 each by wrapping around, all covered */
  count = count_over_shards (root, 10, 3, "", 4);
  for (i = 0, total = 0; i < 10; i++) {
    fail_unless (count[i] >= 1 && count[i] <= 2);
    total += count[i];
  }
  fail_unless_equals_int (total, 12);
  g_free (count);

  /* drop-uneven: 3 each, disjoint */
  count = count_over_shards (root, 10, 3, "drop-uneven=true", 3);
  for (i = 0, total = 0; i < 10; i++) {
    fail_unless (count[i] <= 1);
    total += count[i];
  }
  fail_unless_equals_int (total, 9);
  g_free (count);

  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* @n_shards shards of @per_shard fake samples ("k<S>_<I>.jpg" holding
 * "s<S>i<I>", label I % 3) and the index file @index_name ("shards.members",
 * "shards.idx", NULL: none); returns the location "ROOT/s{0..N}.tar"
 * (quoted). */
static gchar *
make_fake_shards (gchar * root, guint n_shards, guint per_shard,
    const gchar * index_name)
{
  GString *index = g_string_new ("# fake\n");
  gboolean members = g_strcmp0 (index_name, "shards.members") == 0;
  gchar *path, *location;
  guint s, i;

  for (s = 0; s < n_shards; s++) {
    GByteArray *tar = g_byte_array_new ();
    static const guint8 zeros[1024] = { 0, };

    g_string_append_printf (index, "s%u.tar\t%u\n", s, per_shard);
    for (i = 0; i < per_shard; i++) {
      gchar *key = g_strdup_printf ("k%u_%u", s, i);
      gchar *data = g_strdup_printf ("s%ui%u", s, i);
      gsize offset = spdl_test_tar_sample (tar, key, data, i % 3);

      if (members)
        g_string_append_printf (index, "\t%" G_GSIZE_FORMAT "\t%"
            G_GSIZE_FORMAT "\t%u\t%s.jpg\n", offset, strlen (data), i % 3,
            key);
      g_free (key);
      g_free (data);
    }
    g_byte_array_append (tar, zeros, sizeof (zeros));
    path = g_strdup_printf ("%s/s%u.tar", root, s);
    spdl_test_write_file (path, (const gchar *) tar->data, tar->len);
    g_free (path);
    g_byte_array_unref (tar);
  }
  if (index_name) {
    path = g_strdup_printf ("%s/%s", root, index_name);
    spdl_test_write_file (path, index->str, index->len);
    g_free (path);
  }
  g_string_free (index, TRUE);
  location = g_strdup_printf ("\"%s/s{0..%u}.tar\"", root, n_shards - 1);
  return location;
}

/* The samples of epoch 0 of @world ranks interleaved: rank k % W's
 * (k / W)-th for k = 0, 1, ... */
static GArray *
interleaved_ranks (const gchar * location, guint world, const gchar * extra,
    guint per_rank)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint64));
  GArray **ranks = g_new0 (GArray *, world);
  SpdlTestRun **runs = g_new0 (SpdlTestRun *, world);
  guint r, k;

  for (r = 0; r < world; r++) {
    gchar *props = g_strdup_printf ("%s num-shards=%u shard-index=%u", extra,
        world, r);
    runs[r] = run_src (location, props);
    fail_unless (runs[r]->error == NULL, "%s", runs[r]->error);
    ranks[r] = epoch_indices (runs[r], 0);
    fail_unless_equals_int (ranks[r]->len, per_rank);
    g_free (props);
  }
  for (k = 0; k < per_rank * world; k++)
    g_array_append_val (out, g_array_index (ranks[k % world], guint64,
            k / world));
  for (r = 0; r < world; r++) {
    /* labels travel with their samples */
    for (k = 0; k < runs[r]->items->len; k++) {
      SpdlTestItem *item = ITEM (runs[r], k);
      const gchar *key;
      if (item->is_epoch_end)
        continue;
      key = strrchr (item->path, ':');
      fail_unless (key != NULL);
      fail_unless_equals_int (item->label,
          atoi (strchr (key, '_') + 1) % 3);
    }
    g_array_unref (ranks[r]);
    spdl_test_run_free (runs[r]);
  }
  g_free (ranks);
  g_free (runs);
  return out;
}

/* Tar shards with their member index: one global order from (seed, epoch);
 * rank r of W takes positions r, r + W, ...; a state saved at W resumes at
 * any W'. */
GST_START_TEST (test_shards_elastic_order)
{
  gchar *root = spdl_test_make_tmpdir ();
  /* N = 25 */
  gchar *location = make_fake_shards (root, 5, 5, "shards.members");
  const gchar *props = "shuffle=true seed=6 shuffle-buffer=7";
  GArray *single = interleaved_ranks (location, 1, props, 25);
  guint worlds[] = { 2, 3 };
  guint w, i;

  assert_each_once (single, 25);
  for (w = 0; w < G_N_ELEMENTS (worlds); w++) {
    guint W = worlds[w], per = (25 + W - 1) / W;
    GArray *all = interleaved_ranks (location, W, props, per);

    for (i = 0; i < all->len; i++)      /* the tail wraps round */
      fail_unless_equals_uint64 (g_array_index (all, guint64, i),
          g_array_index (single, guint64, i % 25));
    g_array_unref (all);
  }
  /* saved after 2 ranks took 4 each (offset 8), resumed on 3 */
  {
    gchar *resumed = g_strdup_printf ("%s start-offset=8", props);
    GArray *rest = interleaved_ranks (location, 3, resumed, 6);
    for (i = 0; i < rest->len; i++)
      fail_unless_equals_uint64 (g_array_index (rest, guint64, i),
          g_array_index (single, guint64, (8 + i) % 25));
    g_array_unref (rest);
    g_free (resumed);
  }
  /* the order is not the shards' concatenation: the buffer mixed it */
  for (i = 0; i < 25; i++)
    if (g_array_index (single, guint64, i) != i)
      break;
  fail_unless (i < 25);
  g_free (location);

  /* without any index file: the member index learned, the same order */
  spdl_test_remove_tree (root);
  g_free (root);
  root = spdl_test_make_tmpdir ();
  location = make_fake_shards (root, 5, 5, NULL);
  {
    gchar *resumed = g_strdup_printf ("%s start-offset=8", props);
    GArray *rest = interleaved_ranks (location, 3, resumed, 6);
    for (i = 0; i < rest->len; i++)
      fail_unless_equals_uint64 (g_array_index (rest, guint64, i),
          g_array_index (single, guint64, (8 + i) % 25));
    g_array_unref (rest);
    g_free (resumed);
  }
  g_array_unref (single);
  g_free (location);

  /* with shards.idx only: contiguous parts, resumed at the same W only */
  spdl_test_remove_tree (root);
  g_free (root);
  root = spdl_test_make_tmpdir ();
  location = make_fake_shards (root, 5, 5, "shards.idx");
  {
    gchar *launch = g_strdup_printf ("spdlsrc location=%s num-shards=2 "
        "start-offset=3", location);
    SpdlTestRun *run = spdl_test_run (launch);
    fail_unless (run->error != NULL);
    fail_unless (strstr (run->error, "not a multiple of num-shards") != NULL,
        "%s", run->error);
    spdl_test_run_free (run);
    g_free (launch);
  }
  g_free (location);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_resume_start_index)
{
  gchar *root = make_fake_folder (4, 5);
  SpdlTestRun *full = run_src (root, "shuffle=true seed=11 num-epochs=2 "
      "num-shards=2 shard-index=1");
  SpdlTestRun *resumed = run_src (root, "shuffle=true seed=11 num-epochs=2 "
      "num-shards=2 shard-index=1 start-index=4");
  SpdlTestRun *next = run_src (root, "shuffle=true seed=11 num-epochs=1 "
      "num-shards=2 shard-index=1 start-epoch=1 start-index=3");
  guint i;

  /* resumed = the uninterrupted run from its 5th sample on */
  fail_unless_equals_int (full->items->len, 22);
  fail_unless_equals_int (resumed->items->len, 18);
  for (i = 0; i < resumed->items->len; i++) {
    SpdlTestItem *x = ITEM (full, i + 4), *y = ITEM (resumed, i);
    fail_unless_equals_int (x->is_epoch_end, y->is_epoch_end);
    fail_unless_equals_int (x->epoch, y->epoch);
    if (!x->is_epoch_end)
      fail_unless_equals_uint64 (x->index, y->index);
  }
  /* resuming inside epoch 1 */
  fail_unless_equals_int (next->items->len, 8);
  for (i = 0; i < 8; i++) {
    SpdlTestItem *x = ITEM (full, 11 + 3 + i), *y = ITEM (next, i);
    fail_unless_equals_int (x->is_epoch_end, y->is_epoch_end);
    if (!x->is_epoch_end)
      fail_unless_equals_uint64 (x->index, y->index);
  }
  spdl_test_run_free (full);
  spdl_test_run_free (resumed);
  spdl_test_run_free (next);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_manifest)
{
  gchar *root = spdl_test_make_tmpdir ();
  gchar *manifest = g_build_filename (root, "train.tsv", NULL);
  gchar *a = g_build_filename (root, "imgs/a.jpg", NULL);
  gchar *b = g_build_filename (root, "imgs/b.jpg", NULL);
  gchar *launch;
  SpdlTestRun *run;

  spdl_test_write_file (a, "AAA", -1);
  spdl_test_write_file (b, "BB", -1);
  spdl_test_write_file (manifest, "# comment\nimgs/b.jpg\t7\n\n"
      "imgs/a.jpg\t3\r\n", -1);
  launch = g_strdup_printf ("spdlsrc location=%s", manifest);
  run = spdl_test_run (launch);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 2);
  fail_unless_equals_string (ITEM (run, 0)->path, b);
  fail_unless_equals_int (ITEM (run, 0)->label, 7);
  fail_unless_equals_int (gst_buffer_get_size (ITEM (run, 0)->buffer), 2);
  fail_unless_equals_string (ITEM (run, 1)->path, a);
  fail_unless_equals_int (ITEM (run, 1)->label, 3);
  spdl_test_run_free (run);
  g_free (launch);
  g_free (manifest);
  g_free (a);
  g_free (b);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* Windows-edited manifests: a byte-order mark, CRLF line ends and a blank
 * last line list exactly their samples; a path may hold a tab (the label
 * follows the last one). */
GST_START_TEST (test_manifest_bom_crlf_tabs)
{
  gchar *root = spdl_test_make_tmpdir ();
  gchar *manifest = g_build_filename (root, "train.tsv", NULL);
  gchar *a = g_build_filename (root, "a.jpg", NULL);
  gchar *b = g_build_filename (root, "b\tc.jpg", NULL);
  gchar *launch;
  SpdlTestRun *run;

  spdl_test_write_file (a, "AAA", -1);
  spdl_test_write_file (b, "BB", -1);
  spdl_test_write_file (manifest, "\xEF\xBB\xBF" "a.jpg\t1\r\n"
      "b\tc.jpg\t2\r\n\r\n", -1);
  launch = g_strdup_printf ("spdlsrc location=%s", manifest);
  run = spdl_test_run (launch);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 2);
  fail_unless_equals_string (ITEM (run, 0)->path, a);
  fail_unless_equals_int (ITEM (run, 0)->label, 1);
  fail_unless_equals_string (ITEM (run, 1)->path, b);
  fail_unless_equals_int (ITEM (run, 1)->label, 2);
  spdl_test_run_free (run);

  /* a bad line quoted in the error is cut on a character boundary and
   * shown as valid UTF-8, even when the line is not */
  {
    /* 100 euro signs (3 bytes each), a stray byte, no tab */
    GString *text = g_string_new ("a.jpg\t1\n");
    guint k;
    for (k = 0; k < 100; k++)
      g_string_append (text, "\xE2\x82\xAC");
    g_string_append (text, "\xff no tab\n");
    spdl_test_write_file (manifest, text->str, text->len);
    g_string_free (text, TRUE);
  }
  run = spdl_test_run (launch);
  fail_unless (run->error != NULL);
  fail_unless (g_utf8_validate (run->error, -1, NULL), "%s", run->error);
  fail_unless (strstr (run->error, ":2:") != NULL, "%s", run->error);
  fail_unless (strstr (run->error, "...") != NULL, "%s", run->error);
  spdl_test_run_free (run);
  g_free (launch);
  g_free (manifest);
  g_free (a);
  g_free (b);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

static void
assert_error (const gchar * launch, const gchar * needle1,
    const gchar * needle2)
{
  SpdlTestRun *run = spdl_test_run (launch);

  fail_unless (run->error != NULL, "no error for %s", launch);
  fail_unless (strstr (run->error, needle1) != NULL, "'%s' not in '%s'",
      needle1, run->error);
  if (needle2)
    fail_unless (strstr (run->error, needle2) != NULL, "'%s' not in '%s'",
        needle2, run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 0);
  spdl_test_run_free (run);
}

GST_START_TEST (test_user_errors)
{
  gchar *root = spdl_test_make_tmpdir ();
  gchar *empty = g_build_filename (root, "empty", NULL);
  gchar *bad_line = g_build_filename (root, "bad-line.tsv", NULL);
  gchar *bad_label = g_build_filename (root, "bad-label.tsv", NULL);
  gchar *launch;

  g_mkdir_with_parents (empty, 0755);
  launch = g_build_filename (empty, "cls/readme.txt", NULL);
  spdl_test_write_file (launch, "x", 1);
  g_free (launch);
  spdl_test_write_file (bad_line, "a.jpg\t1\nb.jpg\t2\nno-tab-here\n", -1);
  spdl_test_write_file (bad_label, "a.jpg\t1\nb.jpg\tcat\n", -1);

  assert_error ("spdlsrc location=/nonexistent/dataset", "/nonexistent/dataset",
      "does not exist");
  launch = g_strdup_printf ("spdlsrc location=%s", empty);
  assert_error (launch, empty, "empty");
  g_free (launch);
  launch = g_strdup_printf ("spdlsrc location=%s", bad_line);
  assert_error (launch, bad_line, ":3:");
  g_free (launch);
  launch = g_strdup_printf ("spdlsrc location=%s", bad_label);
  assert_error (launch, ":2:", "\"cat\" is not a non-negative integer");
  g_free (launch);
  launch = g_strdup_printf ("spdlsrc location=%s/../bad-line.tsv "
      "num-shards=2 shard-index=2", empty);
  assert_error (launch, "shard-index 2 is out of range", "num-shards (2)");
  g_free (launch);
  /* no location: the error, no GLib critical (which fails the check) */
  assert_error ("spdlsrc", "No dataset location given", NULL);
  /* an image given as the location, not a manifest of binary lines */
  {
    gchar *image = g_build_filename (root, "photo.jpg", NULL);

    spdl_test_write_jpeg (image, 16, 16, 0, 90, FALSE, FALSE);
    launch = g_strdup_printf ("spdlsrc location=%s", image);
    assert_error (launch, "is a JPEG image, not a dataset",
        "a folder of class folders");
    g_free (launch);
    g_free (image);
  }

  g_free (empty);
  g_free (bad_line);
  g_free (bad_label);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

static void
remove_sample_hook (GstElement * pipeline, gpointer user_data)
{
  fail_unless_equals_int (g_unlink (user_data), 0);
}

/* An epoch of which no sample could be read is an error naming the epoch,
 * not an empty epoch, even with max-errors unlimited (a dataset moved
 * away, a stale shard index); one readable sample is enough to go on. */
GST_START_TEST (test_epoch_with_nothing_readable)
{
  gchar *root = make_fake_folder (1, 2);
  gchar *manifest = g_build_filename (root, "list.tsv", NULL);
  gchar *launch = g_strdup_printf ("spdlsrc location=%s num-epochs=2",
      manifest);
  SpdlTestRun *run;

  spdl_test_write_file (manifest, "c00/gone0.jpg\t0\nc00/gone1.jpg\t0\n"
      "c00/gone2.jpg\t1\n", -1);
  run = spdl_test_run (launch);
  fail_unless (run->error != NULL, "no error");
  fail_unless (strstr (run->error, "None of the 3 samples of epoch 0") !=
      NULL, "%s", run->error);
  /* and why, by reason */
  fail_unless (strstr (run->error, "(unreadable: 3)") != NULL, "%s",
      run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 0);
  fail_unless_equals_int (g_list_length (run->warnings), 3);
  spdl_test_run_free (run);

  /* sharded: the rank is named */
  g_free (launch);
  launch = g_strdup_printf ("spdlsrc location=%s num-shards=2 shard-index=1",
      manifest);
  run = spdl_test_run (launch);
  fail_unless (run->error != NULL && strstr (run->error, "epoch 0 could be "
          "read on rank 1 of 2") != NULL, "%s", run->error);
  spdl_test_run_free (run);
  g_free (launch);

  launch = g_strdup_printf ("spdlsrc location=%s num-epochs=2", manifest);
  spdl_test_write_file (manifest, "c00/gone0.jpg\t0\nc00/s001.jpg\t0\n"
      "c00/gone2.jpg\t1\n", -1);
  run = spdl_test_run (launch);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 2);
  spdl_test_run_free (run);
  g_free (launch);

  /* an epoch resumed where only bad samples are left (a checkpoint after
   * the last full batch) is max-errors' business: the next epoch runs */
  launch = g_strdup_printf ("spdlsrc location=%s num-epochs=2 "
      "start-offset=2", manifest);
  run = spdl_test_run (launch);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 1);
  spdl_test_run_free (run);
  g_free (launch);
  g_free (manifest);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_vanished_file_skipped)
{
  gchar *root = make_fake_folder (1, 30);
  gchar *victim = g_strdup_printf ("%s/c00/s020.jpg", root);
  gchar *launch = g_strdup_printf ("spdlsrc location=%s prefetch=2 "
      "prefetch-threshold=0", root);
  SpdlTestRun *run = spdl_test_run_with_hook (launch, remove_sample_hook,
      victim);
  GstElement *src;
  guint i;

  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 29);
  for (i = 0; i < 29; i++)
    fail_unless_equals_uint64 (ITEM (run, i)->index, i < 20 ? i : i + 1);
  fail_unless_equals_int (g_list_length (run->warnings), 1);
  fail_unless (strstr (run->warnings->data, victim) != NULL, "%s",
      (gchar *) run->warnings->data);
  fail_unless (strstr (run->warnings->data, "No such file") != NULL);
  spdl_test_run_free (run);
  g_free (launch);

  /* max-errors=0: the first unreadable sample is fatal */
  spdl_test_write_file (victim, "back", -1);
  launch = g_strdup_printf ("spdlsrc location=%s max-errors=0 prefetch=0",
      root);
  run = spdl_test_run_with_hook (launch, remove_sample_hook, victim);
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, victim) != NULL, "%s", run->error);
  fail_unless (strstr (run->error, "max-errors=0") != NULL, "%s", run->error);
  fail_unless (spdl_test_run_count_samples (run) <= 20);
  for (i = 0; i < run->items->len; i++)
    fail_unless (ITEM (run, i)->index < 20);
  spdl_test_run_free (run);

  /* the count is readable from the element (a manifest naming a file that
   * is not there takes the same path) */
  {
    gchar *manifest = g_build_filename (root, "list.tsv", NULL);
    GstHarness *h;
    guint64 errors = 0;
    gint got = 0;
    GstBuffer *buf;

    spdl_test_write_file (manifest, "c00/s000.jpg\t0\nc00/gone.jpg\t0\n"
        "c00/s001.jpg\t0\nc00/gone2.jpg\t1\nc00/s002.jpg\t1\n", -1);
    src = gst_element_factory_make ("spdlsrc", NULL);
    g_object_set (src, "location", manifest, NULL);
    h = gst_harness_new_with_element (src, NULL, "src");
    gst_harness_play (h);
    while (got < 3 && (buf = gst_harness_pull (h)) != NULL) {
      got++;
      gst_buffer_unref (buf);
    }
    fail_unless_equals_int (got, 3);
    g_object_get (src, "errors", &errors, NULL);
    fail_unless_equals_uint64 (errors, 2);
    gst_harness_teardown (h);
    g_free (manifest);
  }
  gst_object_unref (src);
  g_free (launch);
  g_free (victim);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_harness_meta_and_events)
{
  gchar *root = make_fake_folder (2, 2);
  GstHarness *h = gst_harness_new ("spdlsrc");
  GstBuffer *buf;
  GstEvent *event;
  GstSpdlSampleInfo info;
  guint64 num = 0;
  guint i, epoch_events = 0, start_events = 0;

  gst_harness_set (h, "spdlsrc", "location", root, "num-epochs", 2,
      "shuffle", TRUE, NULL);
  gst_harness_play (h);
  for (i = 0; i < 8; i++) {
    buf = gst_harness_pull (h);
    fail_unless (buf != NULL);
    fail_unless (gst_spdl_buffer_get_sample_info (buf, &info));
    fail_unless_equals_int (info.epoch, i / 4);
    fail_unless_equals_int (info.label, info.index / 2);
    /* its place in the epoch's global order */
    fail_unless (gst_spdl_buffer_get_sample_position (buf, &num));
    fail_unless_equals_uint64 (num, i % 4);
    gst_buffer_unref (buf);
  }
  g_object_get (h->element, "num-samples", &num, NULL);
  fail_unless_equals_uint64 (num, 4);
  event = gst_harness_pull_event (h);
  while (event && GST_EVENT_TYPE (event) != GST_EVENT_EOS) {
    if (gst_spdl_is_epoch_end_event (event))
      epoch_events++;
    if (gst_spdl_is_epoch_start_event (event)) {
      /* this rank's share and the epoch's offset, before its samples */
      const GstStructure *st = gst_event_get_structure (event);
      guint64 samples = 0, offset = 1;
      fail_unless (gst_structure_get (st, "samples", G_TYPE_UINT64, &samples,
              "offset", G_TYPE_UINT64, &offset, NULL));
      fail_unless_equals_uint64 (samples, 4);
      fail_unless_equals_uint64 (offset, 0);
      start_events++;
    }
    gst_event_unref (event);
    event = gst_harness_pull_event (h);
  }
  if (event)
    gst_event_unref (event);
  fail_unless_equals_int (epoch_events, 2);
  fail_unless_equals_int (start_events, 2);
  gst_harness_teardown (h);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

static Suite *
spdlsrc_suite (void)
{
  Suite *s = suite_create ("spdlsrc");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_order_labels_and_contents);
  tcase_add_test (tc, test_imagefolder_like_torchvision);
  tcase_add_test (tc, test_shuffle_epochs);
  tcase_add_test (tc, test_shards);
  tcase_add_test (tc, test_elastic_resume);
  tcase_add_test (tc, test_resume_start_index);
  tcase_add_test (tc, test_shards_elastic_order);
  tcase_add_test (tc, test_manifest);
  tcase_add_test (tc, test_manifest_bom_crlf_tabs);
  tcase_add_test (tc, test_user_errors);
  tcase_add_test (tc, test_vanished_file_skipped);
  tcase_add_test (tc, test_epoch_with_nothing_readable);
  tcase_add_test (tc, test_harness_meta_and_events);
  return s;
}

SPDL_CHECK_MAIN (spdlsrc);
