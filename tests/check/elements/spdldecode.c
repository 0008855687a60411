/* GStreamer SPDL plugin: spdldecode unit tests
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <math.h>

#include "spdltestutil.h"
#include "gstspdlmeta.h"
#include "spdlcheckmain.h"

#define ITEM(run, i) ((SpdlTestItem *) g_ptr_array_index ((run)->items, (i)))

/* Pushes JPEG samples through "spdldecode @props"; returns the outputs. */
static GPtrArray *
decode_samples (const gchar * props, const guint8 * data, gsize size,
    guint n, GstCaps ** caps)
{
  gchar *desc = g_strdup_printf ("spdldecode %s", props);
  GstHarness *h = gst_harness_new_parse (desc);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  guint i;

  gst_harness_set_src_caps_str (h, "image/jpeg, parsed=true");
  for (i = 0; i < n; i++)
    fail_unless_equals_int (gst_harness_push (h,
            gst_buffer_new_memdup (data, size)), GST_FLOW_OK);
  for (i = 0; i < n; i++) {
    GstBuffer *buf = gst_harness_pull (h);
    fail_unless (buf != NULL);
    g_ptr_array_add (out, buf);
  }
  if (caps)
    *caps = gst_pad_get_current_caps (h->sinkpad);
  gst_harness_teardown (h);
  g_free (desc);
  return out;
}

static GstBuffer *
decode_one (const gchar * props, const guint8 * data, gsize size,
    GstCaps ** caps)
{
  GPtrArray *all = decode_samples (props, data, size, 1, caps);
  GstBuffer *buf = gst_buffer_ref (g_ptr_array_index (all, 0));

  g_ptr_array_unref (all);
  return buf;
}

static void
assert_caps_size (GstCaps * caps, gint width, gint height, const gchar * fmt)
{
  GstVideoInfo info;

  fail_unless (gst_video_info_from_caps (&info, caps));
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&info), width);
  fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&info), height);
  fail_unless_equals_string (gst_video_format_to_string
      (GST_VIDEO_INFO_FORMAT (&info)), fmt);
}

/* Mean and max absolute difference between an RGB output and a window of
 * the reference image at (x0, y0). */
static gdouble
window_diff (GstBuffer * out, guint w, guint h, const guint8 * ref,
    guint ref_w, guint x0, guint y0, guint * max_diff)
{
  GstMapInfo map;
  gsize stride = GST_ROUND_UP_4 (w * 3);
  guint64 total = 0;
  guint x, y, c;

  *max_diff = 0;
  gst_buffer_map (out, &map, GST_MAP_READ);
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      for (c = 0; c < 3; c++) {
        gint d = abs ((gint) map.data[y * stride + x * 3 + c] -
            (gint) ref[((y0 + y) * ref_w + x0 + x) * 3 + c]);
        total += d;
        *max_diff = MAX (*max_diff, (guint) d);
      }
  gst_buffer_unmap (out, &map);
  return (gdouble) total / (w * h * 3);
}

GST_START_TEST (test_full_size_matches_libjpeg)
{
  SpdlTestJpeg o;
  guint8 *jpeg, *ref;
  gsize size;
  guint rw, rh, max_diff;
  GstCaps *caps;
  GstBuffer *out;

  spdl_test_jpeg_init (&o, 100, 75);
  jpeg = spdl_test_encode_jpeg (&o, &size);
  ref = spdl_test_decode_reference (jpeg, size, &rw, &rh);
  out = decode_one ("", jpeg, size, &caps);
  assert_caps_size (caps, 100, 75, "RGB");
  fail_unless_equals_float (window_diff (out, 100, 75, ref, rw, 0, 0,
          &max_diff), 0.0);
  gst_caps_unref (caps);
  gst_buffer_unref (out);
  g_free (ref);
  g_free (jpeg);
}

GST_END_TEST;

GST_START_TEST (test_center_crop_window)
{
  SpdlTestJpeg o;
  guint8 *jpeg, *ref;
  gsize size;
  guint rw, rh, max_diff;
  GstCaps *caps;
  GstBuffer *out;
  gdouble at, off_by_one;

  /* resize-shorter equal to the height: no resize, a pure centre crop at
   * x = round((201 - 50) / 2) = 76 (round half to even), y = 25 */
  spdl_test_jpeg_init (&o, 201, 100);
  o.h_samp = o.v_samp = 1;
  o.quality = 98;
  jpeg = spdl_test_encode_jpeg (&o, &size);
  ref = spdl_test_decode_reference (jpeg, size, &rw, &rh);
  out = decode_one ("width=50 height=50 mode=center-crop resize-shorter=100",
      jpeg, size, &caps);
  assert_caps_size (caps, 50, 50, "RGB");
  at = window_diff (out, 50, 50, ref, rw, 76, 25, &max_diff);
  fail_unless (at < 0.05 && max_diff <= 2, "crop differs: %f (max %u)", at,
      max_diff);
  off_by_one = window_diff (out, 50, 50, ref, rw, 75, 25, &max_diff);
  fail_unless (off_by_one > 1.0, "crop window not where expected");
  gst_caps_unref (caps);
  gst_buffer_unref (out);

  /* a crop larger than the resized image is padded with black */
  out = decode_one ("width=120 height=50 mode=center-crop resize-shorter=50",
      jpeg, size, &caps);
  {
    GstMapInfo map;
    gst_buffer_map (out, &map, GST_MAP_READ);
    /* resized to 100x50: 10 black columns each side */
    fail_unless_equals_int (map.data[0], 0);
    fail_unless_equals_int (map.data[9 * 3 + 1], 0);
    fail_unless_equals_int (map.data[119 * 3 + 2], 0);
    fail_unless (map.data[60 * 3 + 1] + map.data[60 * 3 + 2] > 0);
    gst_buffer_unmap (out, &map);
  }
  gst_caps_unref (caps);
  gst_buffer_unref (out);
  g_free (ref);
  g_free (jpeg);
}

GST_END_TEST;

static gboolean
is_mirror (GstBuffer * a, GstBuffer * b, guint w, guint h)
{
  GstMapInfo ma, mb;
  gsize stride = GST_ROUND_UP_4 (w * 3);
  gboolean same = TRUE;
  guint x, y, c;

  gst_buffer_map (a, &ma, GST_MAP_READ);
  gst_buffer_map (b, &mb, GST_MAP_READ);
  for (y = 0; y < h && same; y++)
    for (x = 0; x < w && same; x++)
      for (c = 0; c < 3; c++)
        same &= ma.data[y * stride + x * 3 + c] ==
            mb.data[y * stride + (w - 1 - x) * 3 + c];
  gst_buffer_unmap (a, &ma);
  gst_buffer_unmap (b, &mb);
  return same;
}

GST_START_TEST (test_random_flip)
{
  SpdlTestJpeg o;
  guint8 *jpeg;
  gsize size;
  GstBuffer *plain;
  GPtrArray *flipped;
  guint i, n_flipped = 0;

  spdl_test_jpeg_init (&o, 90, 60);
  jpeg = spdl_test_encode_jpeg (&o, &size);
  plain = decode_one ("width=45 height=30", jpeg, size, NULL);
  flipped = decode_samples ("width=45 height=30 flip=random-horizontal "
      "seed=5", jpeg, size, 32, NULL);
  for (i = 0; i < flipped->len; i++) {
    GstBuffer *b = g_ptr_array_index (flipped, i);
    if (is_mirror (plain, b, 45, 30)) {
      n_flipped++;
    } else {
      GstMapInfo map;
      gst_buffer_map (b, &map, GST_MAP_READ);
      fail_unless (gst_buffer_memcmp (plain, 0, map.data, map.size) == 0,
          "sample %u is neither the image nor its mirror", i);
      gst_buffer_unmap (b, &map);
    }
  }
  /* p = 0.5 over 32 samples */
  fail_unless (n_flipped >= 6 && n_flipped <= 26, "%u flipped", n_flipped);
  g_ptr_array_unref (flipped);
  gst_buffer_unref (plain);
  g_free (jpeg);
}

GST_END_TEST;

static SpdlTestRun *
run_folder (const gchar * root, const gchar * src_props,
    const gchar * dec_props)
{
  gchar *launch = g_strdup_printf ("spdlsrc location=%s %s ! spdldecode %s",
      root, src_props, dec_props);
  SpdlTestRun *run = spdl_test_run (launch);

  g_free (launch);
  return run;
}

GST_START_TEST (test_threads_deterministic)
{
  gchar *root = spdl_test_make_image_folder (3, 8, 120, 90);
  const gchar *recipe = "width=32 height=32 mode=random-resized-crop "
      "flip=random-horizontal seed=9";
  gchar *one = g_strdup_printf ("threads=1 %s", recipe);
  gchar *four = g_strdup_printf ("threads=4 %s", recipe);
  SpdlTestRun *a = run_folder (root, "shuffle=true num-epochs=2", one);
  SpdlTestRun *b = run_folder (root, "shuffle=true num-epochs=2", four);
  SpdlTestRun *src = run_folder (root, "shuffle=true num-epochs=2",
      "threads=1");
  guint i;

  fail_unless (a->error == NULL && b->error == NULL);
  fail_unless_equals_int (a->items->len, 50);
  fail_unless_equals_int (b->items->len, 50);
  for (i = 0; i < a->items->len; i++) {
    SpdlTestItem *x = ITEM (a, i), *y = ITEM (b, i), *z = ITEM (src, i);
    fail_unless_equals_int (x->is_epoch_end, y->is_epoch_end);
    fail_unless_equals_int (x->is_epoch_end, z->is_epoch_end);
    if (x->is_epoch_end)
      continue;
    /* input order kept, pixels the same whatever the thread count */
    fail_unless_equals_uint64 (x->index, z->index);
    fail_unless_equals_uint64 (x->index, y->index);
    fail_unless_equals_int (x->label, y->label);
    fail_unless (gst_buffer_get_size (x->buffer) == 32 * 32 * 3);
    {
      GstMapInfo map;
      gst_buffer_map (x->buffer, &map, GST_MAP_READ);
      fail_unless (gst_buffer_memcmp (y->buffer, 0, map.data, map.size) == 0,
          "sample %u differs between threads=1 and threads=4", i);
      gst_buffer_unmap (x->buffer, &map);
    }
  }
  spdl_test_run_free (a);
  spdl_test_run_free (b);
  spdl_test_run_free (src);
  g_free (one);
  g_free (four);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_unordered_keeps_epochs)
{
  gchar *root = spdl_test_make_image_folder (2, 10, 64, 48);
  SpdlTestRun *run = run_folder (root, "num-epochs=2",
      "threads=3 ordered=false width=16 height=16");
  guint i, epoch = 0, seen = 0;
  guint64 mask = 0;

  fail_unless (run->error == NULL);
  fail_unless_equals_int (run->items->len, 42);
  for (i = 0; i < run->items->len; i++) {
    SpdlTestItem *item = ITEM (run, i);
    if (item->is_epoch_end) {
      /* all of the epoch's samples came before its end marker */
      fail_unless_equals_int (item->epoch, epoch);
      fail_unless_equals_int (seen, 20);
      fail_unless_equals_uint64 (mask, (1 << 20) - 1);
      epoch++;
      seen = 0;
      mask = 0;
      continue;
    }
    fail_unless_equals_int (item->epoch, epoch);
    mask |= G_GUINT64_CONSTANT (1) << item->index;
    seen++;
  }
  fail_unless_equals_int (epoch, 2);
  spdl_test_run_free (run);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_jpeg_kinds)
{
  struct
  {
    const gchar *name;
    gboolean gray, cmyk, progressive, arithmetic;
    guint restart, h, v;
  } kinds[] = {
    {"4:2:0", FALSE, FALSE, FALSE, FALSE, 0, 2, 2},
    {"4:4:4", FALSE, FALSE, FALSE, FALSE, 0, 1, 1},
    {"4:2:2", FALSE, FALSE, FALSE, FALSE, 0, 2, 1},
    {"4:4:0", FALSE, FALSE, FALSE, FALSE, 0, 1, 2},
    {"progressive", FALSE, FALSE, TRUE, FALSE, 0, 2, 2},
    {"arithmetic", FALSE, FALSE, FALSE, TRUE, 0, 2, 2},
    {"restart markers", FALSE, FALSE, FALSE, FALSE, 2, 2, 2},
    {"grayscale", TRUE, FALSE, FALSE, FALSE, 0, 1, 1},
  };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (kinds); k++) {
    SpdlTestJpeg o;
    guint8 *jpeg, *ref;
    gsize size;
    guint rw, rh, max_diff;
    GstBuffer *out;
    GstCaps *caps;
    gdouble diff;

    spdl_test_jpeg_init (&o, 67, 45);
    o.gray = kinds[k].gray;
    o.progressive = kinds[k].progressive;
    o.arithmetic = kinds[k].arithmetic;
    o.restart_interval = kinds[k].restart;
    o.h_samp = kinds[k].h;
    o.v_samp = kinds[k].v;
    jpeg = spdl_test_encode_jpeg (&o, &size);
    ref = spdl_test_decode_reference (jpeg, size, &rw, &rh);
    /* an odd crop window exercises region decoding on every layout */
    out = decode_one ("width=31 height=21 mode=center-crop resize-shorter=45",
        jpeg, size, &caps);
    assert_caps_size (caps, 31, 21, "RGB");
    diff = window_diff (out, 31, 21, ref, rw, 18, 12, &max_diff);
    fail_unless (diff < 0.1 && max_diff <= 4, "%s: differs by %f (max %u)",
        kinds[k].name, diff, max_diff);
    gst_caps_unref (caps);
    gst_buffer_unref (out);
    g_free (ref);
    g_free (jpeg);
  }
}

GST_END_TEST;

GST_START_TEST (test_cmyk_and_gray_output)
{
  SpdlTestJpeg o;
  guint8 *jpeg;
  gsize size;
  GstBuffer *out;
  GstCaps *caps;
  GstMapInfo map;
  guint i, nonzero = 0;

  spdl_test_jpeg_init (&o, 40, 30);
  o.cmyk = TRUE;
  jpeg = spdl_test_encode_jpeg (&o, &size);
  out = decode_one ("width=20 height=15", jpeg, size, &caps);
  assert_caps_size (caps, 20, 15, "RGB");
  gst_buffer_map (out, &map, GST_MAP_READ);
  for (i = 0; i < map.size; i++)
    nonzero += map.data[i] != 0;
  fail_unless (nonzero > map.size / 2);
  gst_buffer_unmap (out, &map);
  gst_caps_unref (caps);
  gst_buffer_unref (out);
  g_free (jpeg);

  /* GRAY8: one byte per pixel, rows padded to 4 as GstVideoInfo says */
  spdl_test_jpeg_init (&o, 40, 30);
  jpeg = spdl_test_encode_jpeg (&o, &size);
  out = decode_one ("width=22 height=15 format=GRAY8", jpeg, size, &caps);
  assert_caps_size (caps, 22, 15, "GRAY8");
  fail_unless_equals_int (gst_buffer_get_size (out), 24 * 15);
  gst_caps_unref (caps);
  gst_buffer_unref (out);
  g_free (jpeg);
}

GST_END_TEST;

static void
write_bytes (const gchar * root, const gchar * rel, const guint8 * data,
    gsize size)
{
  gchar *path = g_build_filename (root, rel, NULL);

  spdl_test_write_file (path, (const gchar *) data, size);
  g_free (path);
}

/* A small JPEG whose frame header claims 60000x60000 pixels. */
static guint8 *
make_bomb (gsize * size)
{
  SpdlTestJpeg o;
  guint8 *jpeg;
  gsize i;

  spdl_test_jpeg_init (&o, 16, 16);
  jpeg = spdl_test_encode_jpeg (&o, size);
  for (i = 0; i + 8 < *size; i++) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {
      jpeg[i + 5] = 60000 >> 8;
      jpeg[i + 6] = 60000 & 0xff;
      jpeg[i + 7] = 60000 >> 8;
      jpeg[i + 8] = 60000 & 0xff;
      break;
    }
  }
  return jpeg;
}

/* No sample decoded since the start, at an epoch's end, with at least 16
 * skipped or, on one rank, the whole epoch skipped, is an error (unbounded
 * epochs would spin forever); a decodable sample, fewer skipped on
 * several ranks (a rank's small share all bad by chance), or the skipped
 * rest of a resumed epoch are not. */
GST_START_TEST (test_epoch_all_skipped_is_error)
{
  gchar *root = spdl_test_make_tmpdir ();
  gchar *good_root = spdl_test_make_image_folder (1, 1, 40, 30);
  guint8 noise[500];
  SpdlTestRun *run;
  guint i;

  for (i = 0; i < sizeof (noise); i++)
    noise[i] = (guint8) (i * 7 + 3);
  write_bytes (root, "class00/b-noise.jpg", noise, sizeof (noise));
  write_bytes (root, "class00/c-empty.jpg", NULL, 0);
  write_bytes (root, "class01/d-png.jpg",
      (const guint8 *) "\x89PNG\r\n\x1a\n0000", 12);

  /* unbounded epochs on one rank, none decodable: an error at the end of
   * the first epoch, whatever max-errors allows */
  run = run_folder (root, "num-epochs=-1", "width=16 height=16 "
      "max-errors=-1");
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "No sample could be decoded: all 3 up "
          "to the end of epoch 0 were skipped") != NULL, "%s", run->error);
  fail_unless (strstr (run->error, "empty: 1") != NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 0);
  spdl_test_run_free (run);

  /* on 2 ranks (shares of 2, one padded), none decodable: an error once
   * 16 were skipped (2 an epoch: after epoch 7) */
  run = run_folder (root, "num-epochs=-1 num-shards=2 shard-index=0",
      "width=16 height=16");
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "No sample could be decoded: all 16 up "
          "to the end of epoch 7 were skipped") != NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 0);
  spdl_test_run_free (run);

  /* on 2 ranks, fewer than 16 skipped: the epochs end empty, no error */
  run = run_folder (root, "num-epochs=5 num-shards=2 shard-index=1",
      "width=16 height=16");
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 0);
  spdl_test_run_free (run);

  /* one decodable sample (listed first) in each epoch: no error; resumed
   * after it, the rest of that epoch is all skipped: no error either */
  {
    gchar *src = g_build_filename (good_root, "class00", "img000.jpg", NULL);
    gchar *dst = g_build_filename (root, "class00", "a-good.jpg", NULL);
    gchar *data;
    gsize len;

    fail_unless (g_file_get_contents (src, &data, &len, NULL));
    fail_unless (g_file_set_contents (dst, data, len, NULL));
    g_free (data);
    g_free (src);
    g_free (dst);
  }
  run = run_folder (root, "num-epochs=8", "width=16 height=16");
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 8);
  spdl_test_run_free (run);
  run = run_folder (root, "num-epochs=2 start-offset=1", "width=16 height=16");
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 1);
  spdl_test_run_free (run);

  /* 4 ranks, one sample each an epoch, shuffled: a rank that draws only
   * bad samples for a while goes on */
  for (i = 0; i < 4; i++) {
    gchar *props = g_strdup_printf ("num-shards=4 shard-index=%u "
        "shuffle=true num-epochs=12", i);

    run = run_folder (root, props, "width=16 height=16");
    fail_unless (run->error == NULL, "rank %u: %s", i, run->error);
    spdl_test_run_free (run);
    g_free (props);
  }

  spdl_test_remove_tree (good_root);
  g_free (good_root);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_bad_samples_skipped)
{
  gchar *root = spdl_test_make_image_folder (1, 3, 64, 48);
  guint8 noise[3000], *good, *bomb;
  gsize good_size, bomb_size;
  SpdlTestRun *run;
  GstStructure *counts;
  guint64 n;
  SpdlTestJpeg o;
  guint i;

  for (i = 0; i < sizeof (noise); i++)
    noise[i] = (guint8) g_random_int ();
  spdl_test_jpeg_init (&o, 64, 48);
  good = spdl_test_encode_jpeg (&o, &good_size);
  bomb = make_bomb (&bomb_size);
  write_bytes (root, "class00/bad-empty.jpg", NULL, 0);
  write_bytes (root, "class00/bad-noise.jpg", noise, sizeof (noise));
  write_bytes (root, "class00/bad-png.jpg",
      (const guint8 *) "\x89PNG\r\n\x1a\n0000", 12);
  write_bytes (root, "class00/bad-cut-header.jpg", good, 20);
  write_bytes (root, "class00/bad-cut-half.jpg", good, good_size / 2);
  write_bytes (root, "class00/bad-bomb.jpg", bomb, bomb_size);

  run = run_folder (root, "", "width=32 height=32");
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 3);
  for (i = 0; i < 3; i++)
    fail_unless (strstr (ITEM (run, i)->path, "img00") != NULL);
  fail_unless (spdl_test_run_warned (run, "bad-empty.jpg", "empty"));
  fail_unless (spdl_test_run_warned (run, "bad-noise.jpg", "not a JPEG"));
  fail_unless (spdl_test_run_warned (run, "bad-png.jpg", "PNG"));
  fail_unless (spdl_test_run_warned (run, "bad-cut-half.jpg", "truncated"));
  fail_unless (spdl_test_run_warned (run, "bad-cut-header.jpg",
          "bad-cut-header"));
  fail_unless (spdl_test_run_warned (run, "bad-bomb.jpg", "max-pixels"));
  fail_unless_equals_int (g_list_length (run->warnings), 6);
  spdl_test_run_free (run);

  /* counts by reason, readable from the element */
  {
    gchar *launch = g_strdup_printf ("spdlsrc location=%s ! spdldecode "
        "name=dec width=8 height=8 ! fakesink", root);
    GstElement *pipeline = gst_parse_launch (launch, NULL);
    GstElement *dec = gst_bin_get_by_name (GST_BIN (pipeline), "dec");
    GstBus *bus = gst_element_get_bus (pipeline);
    GstMessage *msg;

    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
    gst_message_unref (msg);
    g_object_get (dec, "errors", &n, "error-counts", &counts, NULL);
    fail_unless_equals_uint64 (n, 6);
    gst_structure_get_uint64 (counts, "empty", &n);
    fail_unless_equals_uint64 (n, 1);
    /* bad-png.jpg is a PNG (by its bytes) cut inside its header */
    gst_structure_get_uint64 (counts, "not-jpeg", &n);
    fail_unless_equals_uint64 (n, 1);
    gst_structure_get_uint64 (counts, "truncated", &n);
    fail_unless_equals_uint64 (n, 3);
    gst_structure_get_uint64 (counts, "too-large", &n);
    fail_unless_equals_uint64 (n, 1);
    gst_structure_free (counts);
    g_object_get (dec, "decoded", &n, NULL);
    fail_unless_equals_uint64 (n, 3);
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (bus);
    gst_object_unref (dec);
    gst_object_unref (pipeline);
    g_free (launch);
  }

  /* past max-errors: a clean error naming the file */
  run = run_folder (root, "", "width=32 height=32 max-errors=1");
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "max-errors=1") != NULL, "%s", run->error);
  fail_unless (strstr (run->error, "bad-") != NULL, "%s", run->error);
  spdl_test_run_free (run);

  g_free (good);
  g_free (bomb);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_stop_at_any_moment)
{
  gchar *root = spdl_test_make_image_folder (2, 20, 160, 120);
  gchar *launch = g_strdup_printf ("spdlsrc location=%s num-epochs=-1 ! "
      "spdldecode threads=3 width=64 height=64 ! fakesink sync=true", root);
  guint i;

  for (i = 0; i < 25; i++) {
    GstElement *pipeline = gst_parse_launch (launch, NULL);
    gint64 start;

    gst_element_set_state (pipeline, i % 2 ? GST_STATE_PLAYING :
        GST_STATE_PAUSED);
    g_usleep (g_random_int_range (0, 30000));
    start = g_get_monotonic_time ();
    fail_unless (gst_element_set_state (pipeline, GST_STATE_NULL) ==
        GST_STATE_CHANGE_SUCCESS);
    fail_unless (g_get_monotonic_time () - start < 5 * G_TIME_SPAN_SECOND);
    gst_object_unref (pipeline);
  }
  g_free (launch);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* Found by the fuzzer: an axis struct reused for a mirrored identity (a
 * flip without resize) kept the tap count of the previous image and read
 * past its weights. */
static gdouble
buffer_mad (GstBuffer * a, GstBuffer * b)
{
  GstMapInfo ma, mb;
  guint64 total = 0;
  gsize i;

  gst_buffer_map (a, &ma, GST_MAP_READ);
  gst_buffer_map (b, &mb, GST_MAP_READ);
  fail_unless_equals_uint64 (ma.size, mb.size);
  for (i = 0; i < ma.size; i++)
    total += ABS ((gint) ma.data[i] - (gint) mb.data[i]);
  gst_buffer_unmap (a, &ma);
  gst_buffer_unmap (b, &mb);
  return (gdouble) total / ma.size;
}

/* exact=false on photo-like 1024x768 JPEGs (smooth gradients, grain of
 * +-8 levels, quality 90, 4:2:0). Same samples, order, labels, sizes and
 * crops as exact=true; every image within 2 levels on average (measured
 * 0.3 to 0.5 where DCT scaling runs, 1.5 on images with a 255-level edge
 * every 64 pixels; a wrong crop or flip differs by tens of levels), and
 * not the same pixels (the fast path ran). */
GST_START_TEST (test_inexact_recipes)
{
  const gchar *recipes[] = {
    "width=224 height=224 mode=center-crop resize-shorter=256",
    "width=224 height=224 mode=random-resized-crop flip=random-horizontal "
        "seed=3",
    "width=200 height=150",     /* a plain resize, DCT scaling at 1/4 */
  };
  gchar *root = spdl_test_make_tmpdir ();
  GstElement *dec = gst_element_factory_make ("spdldecode", NULL);
  gboolean exact = FALSE;
  guint i, r;

  g_object_get (dec, "exact", &exact, NULL);
  fail_unless (exact, "exact is TRUE by default");
  gst_object_unref (dec);
  for (i = 0; i < 4; i++) {
    SpdlTestJpeg o;
    guint8 *jpeg;
    gsize size;
    gchar *rel = g_strdup_printf ("class%u/img%u.jpg", i % 2, i);

    spdl_test_jpeg_init (&o, 1024, 768);
    o.tint = i * 40;
    o.noise = 8;
    o.smooth = TRUE;
    jpeg = spdl_test_encode_jpeg (&o, &size);
    write_bytes (root, rel, jpeg, size);
    g_free (jpeg);
    g_free (rel);
  }
  for (r = 0; r < G_N_ELEMENTS (recipes); r++) {
    gchar *fast = g_strdup_printf ("%s exact=false", recipes[r]);
    SpdlTestRun *a = run_folder (root, "", recipes[r]);
    SpdlTestRun *b = run_folder (root, "", fast);
    guint n = 0, identical = 0;

    fail_unless (a->error == NULL && b->error == NULL);
    fail_unless_equals_int (spdl_test_run_count_samples (b), 4);
    fail_unless_equals_int (a->items->len, b->items->len);
    for (i = 0; i < a->items->len; i++) {
      SpdlTestItem *x = ITEM (a, i), *y = ITEM (b, i);
      gdouble mad;

      fail_unless_equals_int (x->is_epoch_end, y->is_epoch_end);
      if (x->is_epoch_end)
        continue;
      fail_unless_equals_uint64 (x->index, y->index);
      fail_unless_equals_int (x->label, y->label);
      fail_unless_equals_string (x->path, y->path);
      fail_unless (gst_caps_is_equal (x->caps, y->caps));
      mad = buffer_mad (x->buffer, y->buffer);
      GST_INFO ("%s: %s differs by %.3f levels", fast, y->path, mad);
      fail_unless (mad < 2.0, "%s: %s differs by %.3f levels", fast,
          y->path, mad);
      identical += mad == 0.0;
      n++;
    }
    fail_unless (identical < n, "%s: exact=false gave PIL's pixels", fast);
    spdl_test_run_free (a);
    spdl_test_run_free (b);
    g_free (fast);
  }
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

static void
write_encoded (const gchar * root, const gchar * rel, guint w, guint h,
    gboolean progressive)
{
  SpdlTestJpeg o;
  guint8 *jpeg;
  gsize size;

  spdl_test_jpeg_init (&o, w, h);
  o.progressive = progressive;
  jpeg = spdl_test_encode_jpeg (&o, &size);
  write_bytes (root, rel, jpeg, size);
  g_free (jpeg);
}

/* A valid 1x65500 JPEG (17 KB): with a size that follows the aspect
 * ratio, its output would be 224 x 14672000 (9.8 GB). It is skipped as
 * too-large; its neighbours decode. */
GST_START_TEST (test_extreme_aspect_too_large)
{
  /* recipe, samples out of 4, too-large: the needle is 1x65500, the plank
   * 65500x1; a size that follows the aspect ratio explodes on one */
  const struct
  {
    const gchar *recipe;
    guint samples, too_large;
  } cases[] = {
    {"width=224", 3, 1},        /* needle: 224 x 14672000 */
    {"height=224", 3, 1},       /* plank: 14672000 x 224 */
    {"mode=center-crop resize-shorter=256 width=224", 3, 1},
    {"mode=center-crop resize-shorter=256", 2, 2},
    /* no automatic bound: still no crash, the frame cannot exist */
    {"width=224 max-output-pixels=18446744073709551615", 3, 1},
    /* the same bounds with the fast path */
    {"width=224 exact=false", 3, 1},
    {"mode=center-crop resize-shorter=256 exact=false", 2, 2},
  };
  gchar *root = spdl_test_make_image_folder (1, 2, 64, 48);
  guint i;

  write_encoded (root, "class00/needle.jpg", 1, 65500, FALSE);
  write_encoded (root, "class00/plank.jpg", 65500, 1, FALSE);
  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    SpdlTestRun *run = run_folder (root, "", cases[i].recipe);

    fail_unless (run->error == NULL, "%s: %s", cases[i].recipe, run->error);
    fail_unless_equals_int (spdl_test_run_count_samples (run),
        cases[i].samples);
    fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
            "too-large"), cases[i].too_large);
    fail_unless (spdl_test_run_warned (run, ".jpg", "max-output-pixels") ||
        spdl_test_run_warned (run, ".jpg", "no video frame"), "%s",
        cases[i].recipe);
    spdl_test_run_free (run);
  }
  /* the bound is the user's to set: 224 x 168 is 37632 pixels */
  {
    SpdlTestRun *run = run_folder (root, "",
        "width=224 max-output-pixels=37631");
    fail_unless (spdl_test_run_warned (run, "img000.jpg",
            "max-output-pixels=37631"));
    fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
            "too-large"), 3);
    spdl_test_run_free (run);
  }
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* Progressive JPEGs keep all coefficients: bounded by max-decode-memory,
 * checked from the header; scans are bounded by max-scans. */
GST_START_TEST (test_decode_memory_and_scans)
{
  gchar *root = spdl_test_make_tmpdir ();
  SpdlTestRun *run;
  guint i;

  /* 1024x1024 4:2:0: 3 MiB of coefficients; a baseline image needs rows */
  write_encoded (root, "c/baseline.jpg", 1024, 1024, FALSE);
  write_encoded (root, "c/progressive.jpg", 1024, 1024, TRUE);
  for (i = 0; i < 2; i++) {
    /* exact=false decodes at 1/8 here: the bound is the file's all the same */
    run = run_folder (root, "", i ? "width=32 height=32 exact=false "
        "max-decode-memory=2000000" : "width=32 height=32 "
        "max-decode-memory=2000000");
    fail_unless (run->error == NULL, "%s", run->error);
    fail_unless_equals_int (spdl_test_run_count_samples (run), 1);
    fail_unless (strstr (ITEM (run, 0)->path, "baseline") != NULL);
    fail_unless (spdl_test_run_warned (run, "progressive.jpg",
            "max-decode-memory"));
    fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
            "too-large"), 1);
    spdl_test_run_free (run);
  }

  /* the encoder's progression has 10 scans */
  run = run_folder (root, "", "width=32 height=32 max-scans=5");
  fail_unless_equals_int (spdl_test_run_count_samples (run), 1);
  fail_unless (spdl_test_run_warned (run, "progressive.jpg", "max-scans=5"));
  spdl_test_run_free (run);
  run = run_folder (root, "", "width=32 height=32 max-scans=10");
  fail_unless_equals_int (spdl_test_run_count_samples (run), 2);
  spdl_test_run_free (run);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* Each buffer must be a whole image: unparsed image/jpeg (filesrc's 4 KB
 * chunks) does not negotiate. */
GST_START_TEST (test_requires_parsed_input)
{
  GstElement *dec = gst_element_factory_make ("spdldecode", NULL);
  GstPad *sink = gst_element_get_static_pad (dec, "sink");
  GstCaps *unparsed = gst_caps_from_string ("image/jpeg");
  GstCaps *parsed = gst_caps_from_string ("image/jpeg, parsed=true");
  GstElement *pipeline;
  GError *error = NULL;

  fail_if (gst_pad_query_accept_caps (sink, unparsed));
  fail_unless (gst_pad_query_accept_caps (sink, parsed));
  gst_caps_unref (unparsed);
  gst_caps_unref (parsed);
  gst_object_unref (sink);
  gst_object_unref (dec);

  pipeline = gst_parse_launch ("filesrc location=/dev/null ! "
      "spdldecode ! fakesink", &error);
  /* parse links lazily; either way, no data flows */
  if (pipeline) {
    GstBus *bus = gst_element_get_bus (pipeline);
    GstMessage *msg;
    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    fail_unless (msg != NULL);
    gst_message_unref (msg);
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (bus);
    gst_object_unref (pipeline);
  }
  g_clear_error (&error);
}

GST_END_TEST;

/* Downstream refusing our caps: a clear error, not a silent stall. */
GST_START_TEST (test_refused_caps_error)
{
  gchar *root = spdl_test_make_image_folder (1, 1, 64, 48);
  SpdlTestRun *run;

  write_encoded (root, "class00/small.jpg", 40, 30, FALSE);
  /* links (sizes vary), then the second image's caps are refused */
  run = run_folder (root, "", "! capsfilter caps=video/x-raw,width=64");
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "40x30") != NULL, "%s", run->error);
  /* the first image may or may not be pulled before the error arrives */
  fail_unless (spdl_test_run_count_samples (run) <= 1);
  spdl_test_run_free (run);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Negotiation, allocation, DRAIN                                           */

static guint8 *
test_jpeg (guint width, guint height, gsize * size)
{
  SpdlTestJpeg opts;

  spdl_test_jpeg_init (&opts, width, height);
  opts.tint = 5;
  return spdl_test_encode_jpeg (&opts, size);
}

/* The pixel (x, y, c) of a decoded frame, whatever its layout. */
static guint8
frame_pixel (GstVideoFrame * frame, guint x, guint y, guint c)
{
  if (GST_VIDEO_FRAME_N_PLANES (frame) == 3)
    return ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (frame, c))[y *
        GST_VIDEO_FRAME_PLANE_STRIDE (frame, c) + x];
  return ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (frame, 0))[y *
      GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0) + x * 3 + c];
}

static void
assert_same_pixels (GstBuffer * a, GstCaps * caps_a, GstBuffer * b,
    GstCaps * caps_b)
{
  GstVideoInfo ia, ib;
  GstVideoFrame fa, fb;
  guint x, y, c;

  fail_unless (gst_video_info_from_caps (&ia, caps_a));
  fail_unless (gst_video_info_from_caps (&ib, caps_b));
  fail_unless (gst_video_frame_map (&fa, &ia, a, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fb, &ib, b, GST_MAP_READ));
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&ia),
      GST_VIDEO_INFO_WIDTH (&ib));
  fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&ia),
      GST_VIDEO_INFO_HEIGHT (&ib));
  for (y = 0; y < (guint) GST_VIDEO_INFO_HEIGHT (&ia); y++)
    for (x = 0; x < (guint) GST_VIDEO_INFO_WIDTH (&ia); x++)
      for (c = 0; c < 3; c++)
        fail_unless_equals_int (frame_pixel (&fa, x, y, c),
            frame_pixel (&fb, x, y, c));
  gst_video_frame_unmap (&fb);
  gst_video_frame_unmap (&fa);
}

/* Downstream that prefers planar RGB gets it, with the same pixels as
 * packed: the planar write path of the last resampling stage. */
GST_START_TEST (test_planar_output_matches_packed)
{
  const gchar *sizes[] = { "width=10 height=7", "width=33 height=20 "
        "mode=center-crop", "" };
  gsize size;
  guint8 *jpeg = test_jpeg (45, 31, &size);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (sizes); i++) {
    gchar *planar = g_strdup_printf ("%s ! capsfilter "
        "caps=video/x-raw,format=RGBP", sizes[i]);
    gchar *packed = g_strdup_printf ("%s ! capsfilter "
        "caps=video/x-raw,format=RGB", sizes[i]);
    GstCaps *caps_p, *caps_r;
    GstBuffer *p = decode_one (planar, jpeg, size, &caps_p);
    GstBuffer *r = decode_one (packed, jpeg, size, &caps_r);
    GstVideoInfo info;

    fail_unless (gst_video_info_from_caps (&info, caps_p));
    fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&info),
        GST_VIDEO_FORMAT_RGBP);
    assert_same_pixels (p, caps_p, r, caps_r);
    gst_buffer_unref (p);
    gst_buffer_unref (r);
    gst_caps_unref (caps_p);
    gst_caps_unref (caps_r);
    g_free (planar);
    g_free (packed);
  }
  g_free (jpeg);
}

GST_END_TEST;

/* Without a downstream pool, fixed-size outputs come from spdldecode's own
 * pools, packed and planar alike; they hold only the buffers in use (none
 * made ahead), reused once released */
GST_START_TEST (test_own_pool_reuses_outputs)
{
  const gchar *formats[] = { "RGB", "RGBP" };
  gsize size;
  guint8 *jpeg = test_jpeg (45, 31, &size);
  guint f, i;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    gchar *desc = g_strdup_printf ("spdldecode width=21 height=13 threads=2 "
        "! capsfilter caps=video/x-raw,format=%s", formats[f]);
    GstHarness *h = gst_harness_new_parse (desc);
    GstCaps *ref_caps;
    GstBuffer *ref = decode_one (strstr (desc, "width"), jpeg, size,
        &ref_caps);
    GstBufferPool *pool = NULL;
    GHashTable *seen = g_hash_table_new (NULL, NULL);

    gst_harness_set_src_caps_str (h, "image/jpeg, parsed=true");
    for (i = 0; i < 12; i++) {
      GstBuffer *out;
      GstCaps *caps;

      fail_unless_equals_int (gst_harness_push (h,
              gst_buffer_new_memdup (jpeg, size)), GST_FLOW_OK);
      out = gst_harness_pull (h);
      fail_unless (out->pool != NULL);
      if (pool == NULL)
        pool = gst_object_ref (out->pool);
      fail_unless (out->pool == pool);
      g_hash_table_add (seen, out);
      caps = gst_pad_get_current_caps (h->sinkpad);
      assert_same_pixels (out, caps, ref, ref_caps);
      gst_caps_unref (caps);
      gst_buffer_unref (out);
    }
    /* one sample at a time: the released output comes back, no other is
     * made */
    fail_unless (g_hash_table_size (seen) <= 2);
    g_hash_table_unref (seen);
    gst_harness_teardown (h);
    gst_object_unref (pool);
    gst_buffer_unref (ref);
    gst_caps_unref (ref_caps);
    g_free (desc);
  }
  g_free (jpeg);
}

GST_END_TEST;

/* Downstream's pool (a GstVideoBufferPool with padded, aligned planes)
 * answers the ALLOCATION query: spdldecode decodes into its buffers,
 * honouring their GstVideoMeta. */
static GstPadProbeReturn
propose_padded_pool (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstQuery *query = GST_PAD_PROBE_INFO_QUERY (info);
  GstBufferPool **pool = data;
  GstStructure *config;
  GstVideoAlignment align;
  GstVideoInfo vinfo;
  GstCaps *caps;

  if (GST_QUERY_TYPE (query) != GST_QUERY_ALLOCATION)
    return GST_PAD_PROBE_OK;
  gst_query_parse_allocation (query, &caps, NULL);
  fail_unless (gst_video_info_from_caps (&vinfo, caps));
  if (*pool == NULL) {
    *pool = gst_video_buffer_pool_new ();
    config = gst_buffer_pool_get_config (*pool);
    gst_buffer_pool_config_set_params (config, caps, vinfo.size, 0, 0);
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
    gst_video_alignment_reset (&align);
    align.padding_left = 5;
    align.padding_right = 11;
    align.padding_top = 3;
    gst_buffer_pool_config_set_video_alignment (config, &align);
    fail_unless (gst_buffer_pool_set_config (*pool, config));
    fail_unless (gst_buffer_pool_set_active (*pool, TRUE));
  }
  gst_query_add_allocation_pool (query, *pool, vinfo.size, 0, 0);
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  return GST_PAD_PROBE_HANDLED;
}

/* more than spdldecode keeps in flight with threads=2 */
#define N_POOL_SAMPLES (2 * 8 + 8)

GST_START_TEST (test_decodes_into_downstream_pool)
{
  const gchar *formats[] = { "RGB", "RGBP" };
  gsize size;
  guint8 *jpeg = test_jpeg (45, 31, &size);
  guint f, i;

  for (f = 0; f < G_N_ELEMENTS (formats); f++) {
    gchar *desc = g_strdup_printf ("spdldecode width=21 height=13 threads=2 "
        "! capsfilter caps=video/x-raw,format=%s", formats[f]);
    GstHarness *h = gst_harness_new_parse (desc);
    GstBufferPool *pool = NULL;
    GstCaps *caps, *ref_caps;
    GstBuffer *ref = decode_one (strstr (desc, "width"), jpeg, size,
        &ref_caps);

    gst_pad_add_probe (h->sinkpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
        propose_padded_pool, &pool, NULL);
    gst_harness_set_src_caps_str (h, "image/jpeg, parsed=true");
    /* the first samples may be decoded before the pool is known: all that
     * fit in flight (8 per thread), so one more than those comes after */
    for (i = 0; i < N_POOL_SAMPLES; i++)
      fail_unless_equals_int (gst_harness_push (h,
              gst_buffer_new_memdup (jpeg, size)), GST_FLOW_OK);
    for (i = 0; i < N_POOL_SAMPLES; i++) {
      GstBuffer *out = gst_harness_pull (h);

      caps = gst_pad_get_current_caps (h->sinkpad);
      if (i == N_POOL_SAMPLES - 1) {
        /* by now from the pool, with its padding */
        fail_unless (out->pool == pool);
        fail_unless (gst_buffer_get_video_meta (out) != NULL);
        fail_unless (gst_buffer_get_video_meta (out)->offset[0] > 0);
      }
      assert_same_pixels (out, caps, ref, ref_caps);
      gst_caps_unref (caps);
      gst_buffer_unref (out);
    }
    gst_harness_teardown (h);
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
    gst_buffer_unref (ref);
    gst_caps_unref (ref_caps);
    g_free (desc);
  }
  g_free (jpeg);
}

GST_END_TEST;

/* max-in-flight bounds the samples taken from upstream: with downstream
 * stalled, upstream's pushes block once that many wait (plus the one the
 * source task is pushing). */
typedef struct
{
  GstHarness *h;
  guint8 *jpeg;
  gsize size;
  gint pushed;
} InFlightPusher;

static gpointer
push_twelve (gpointer data)
{
  InFlightPusher *p = data;
  guint i;

  for (i = 0; i < 12; i++) {
    fail_unless_equals_int (gst_harness_push (p->h,
            gst_buffer_new_memdup (p->jpeg, p->size)), GST_FLOW_OK);
    g_atomic_int_inc (&p->pushed);
  }
  return NULL;
}

static GstPadProbeReturn
stall_buffers (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  return GST_PAD_PROBE_OK;      /* a blocking probe: holds the buffer */
}

GST_START_TEST (test_max_in_flight)
{
  InFlightPusher p = { NULL };
  GstElement *dec;
  GstStructure *stats;
  GThread *pusher;
  gulong probe;
  guint max = 0, held;

  p.h = gst_harness_new_parse ("spdldecode width=16 height=12 threads=2 "
      "max-in-flight=3");
  p.jpeg = test_jpeg (40, 30, &p.size);
  gst_harness_set_src_caps_str (p.h, "image/jpeg, parsed=true");
  probe = gst_pad_add_probe (p.h->sinkpad, GST_PAD_PROBE_TYPE_BLOCK |
      GST_PAD_PROBE_TYPE_BUFFER, stall_buffers, NULL, NULL);
  pusher = g_thread_new ("pusher", push_twelve, &p);
  /* 3 in flight and 1 held by the stalled push: then upstream waits */
  while (g_atomic_int_get (&p.pushed) < 4)
    g_usleep (1000);
  g_usleep (200 * 1000);
  held = g_atomic_int_get (&p.pushed);
  fail_unless_equals_int (held, 4);
  dec = gst_harness_find_element (p.h, "spdldecode");
  g_object_get (dec, "stats", &stats, NULL);
  gst_object_unref (dec);
  fail_unless (gst_structure_get_uint (stats, "max-in-flight", &max));
  fail_unless_equals_int (max, 3);
  gst_structure_free (stats);
  gst_pad_remove_probe (p.h->sinkpad, probe);
  g_thread_join (pusher);
  fail_unless_equals_int (g_atomic_int_get (&p.pushed), 12);
  gst_harness_teardown (p.h);
  g_free (p.jpeg);
}

GST_END_TEST;

/* A sticky event still queued when a flush comes goes out after it, with
 * the next image, as queue keeps it. */
GST_START_TEST (test_flush_keeps_sticky_events)
{
  GstHarness *h = gst_harness_new_parse ("spdldecode width=16 height=12 "
      "threads=2");
  GstSegment segment;
  GstEvent *sticky;
  gulong probe;
  gsize size;
  guint8 *jpeg = test_jpeg (40, 30, &size);

  gst_harness_set_src_caps_str (h, "image/jpeg, parsed=true");
  gst_harness_push (h, gst_buffer_new_memdup (jpeg, size));
  gst_buffer_unref (gst_harness_pull (h));
  /* the next image stalls downstream: the event waits behind it */
  probe = gst_pad_add_probe (h->sinkpad, GST_PAD_PROBE_TYPE_BLOCK |
      GST_PAD_PROBE_TYPE_BUFFER, stall_buffers, NULL, NULL);
  gst_harness_push (h, gst_buffer_new_memdup (jpeg, size));
  gst_harness_push_event (h,
      gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM_STICKY,
          gst_structure_new_empty ("test-sticky")));
  g_usleep (100 * 1000);
  fail_unless (gst_pad_get_sticky_event (h->sinkpad,
          GST_EVENT_CUSTOM_DOWNSTREAM_STICKY, 0) == NULL);
  gst_harness_push_event (h, gst_event_new_flush_start ());
  gst_pad_remove_probe (h->sinkpad, probe);
  gst_harness_push_event (h, gst_event_new_flush_stop (TRUE));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_harness_push_event (h, gst_event_new_segment (&segment));
  gst_harness_push (h, gst_buffer_new_memdup (jpeg, size));
  gst_buffer_unref (gst_harness_pull (h));
  sticky = gst_pad_get_sticky_event (h->sinkpad,
      GST_EVENT_CUSTOM_DOWNSTREAM_STICKY, 0);
  fail_unless (sticky != NULL);
  fail_unless (gst_event_has_name (sticky, "test-sticky"));
  gst_event_unref (sticky);
  gst_harness_teardown (h);
  g_free (jpeg);
}

GST_END_TEST;

/* A DRAIN query returns once every sample sent before it is out. */
GST_START_TEST (test_drain_query)
{
  GstHarness *h = gst_harness_new_parse ("spdldecode width=64 height=48 "
      "threads=2");
  gsize size;
  guint8 *jpeg = test_jpeg (300, 200, &size);
  GstQuery *drain;
  guint i;

  gst_harness_set_src_caps_str (h, "image/jpeg, parsed=true");
  for (i = 0; i < 6; i++)
    fail_unless_equals_int (gst_harness_push (h,
            gst_buffer_new_memdup (jpeg, size)), GST_FLOW_OK);
  drain = gst_query_new_drain ();
  fail_unless (gst_pad_peer_query (h->srcpad, drain));
  fail_unless_equals_int (gst_harness_buffers_received (h), 6);
  gst_query_unref (drain);
  /* and an ALLOCATION query for the compressed input proposes nothing */
  {
    GstCaps *caps = gst_caps_from_string ("image/jpeg, parsed=true");
    GstQuery *alloc = gst_query_new_allocation (caps, TRUE);

    fail_unless (gst_pad_peer_query (h->srcpad, alloc));
    fail_unless_equals_int (gst_query_get_n_allocation_pools (alloc), 0);
    gst_query_unref (alloc);
    gst_caps_unref (caps);
  }
  gst_harness_teardown (h);
  g_free (jpeg);
}

GST_END_TEST;

static Suite *
spdldecode_suite (void)
{
  Suite *s = suite_create ("spdldecode");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_full_size_matches_libjpeg);
  tcase_add_test (tc, test_center_crop_window);
  tcase_add_test (tc, test_random_flip);
  tcase_add_test (tc, test_inexact_recipes);
  tcase_add_test (tc, test_epoch_all_skipped_is_error);
  tcase_add_test (tc, test_threads_deterministic);
  tcase_add_test (tc, test_unordered_keeps_epochs);
  tcase_add_test (tc, test_jpeg_kinds);
  tcase_add_test (tc, test_cmyk_and_gray_output);
  tcase_add_test (tc, test_bad_samples_skipped);
  tcase_add_test (tc, test_stop_at_any_moment);
  tcase_add_test (tc, test_extreme_aspect_too_large);
  tcase_add_test (tc, test_decode_memory_and_scans);
  tcase_add_test (tc, test_requires_parsed_input);
  tcase_add_test (tc, test_refused_caps_error);
  tcase_add_test (tc, test_planar_output_matches_packed);
  tcase_add_test (tc, test_own_pool_reuses_outputs);
  tcase_add_test (tc, test_decodes_into_downstream_pool);
  tcase_add_test (tc, test_flush_keeps_sticky_events);
  tcase_add_test (tc, test_drain_query);
  tcase_add_test (tc, test_max_in_flight);
  return s;
}

SPDL_CHECK_MAIN (spdldecode);
