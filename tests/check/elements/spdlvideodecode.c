/* GStreamer SPDL plugin: spdlvideodecode unit tests
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
#include <string.h>

#include "spdltestutil.h"
#include "gstspdlmeta.h"
#include "gstspdlrecord.h"
#include "spdlcheckmain.h"

#define ITEM(run, i) ((SpdlTestItem *) g_ptr_array_index ((run)->items, (i)))

/* the test videos: 64x48 at 25 fps */
#define WIDTH 64
#define HEIGHT 48
#define FRAME_S 0.04

/* Runs @launch (ending in a filesink) to EOS. */
static void
run_to_eos (const gchar * launch)
{
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (launch, &error);
  GstBus *bus;
  GstMessage *msg;

  fail_unless (pipeline != NULL, "%s: %s", launch,
      error ? error->message : "?");
  bus = gst_element_get_bus (pipeline);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "%s timed out", launch);
  fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS, "%s failed",
      launch);
  gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

/* @frames frames of videotestsrc as H.264 (a keyframe every @gop frames,
 * B-frames) in MP4, written to @path. */
static void
make_video (const gchar * path, guint frames, guint gop)
{
  gchar *launch = g_strdup_printf ("videotestsrc num-buffers=%u "
      "pattern=ball ! video/x-raw,format=I420,width=%d,height=%d,"
      "framerate=25/1 ! x264enc key-int-max=%u bframes=2 "
      "speed-preset=ultrafast ! mp4mux ! filesink location=\"%s\"",
      frames, WIDTH, HEIGHT, gop, path);

  run_to_eos (launch);
  g_free (launch);
}

static GBytes *
make_video_bytes (guint frames, guint gop)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *path = g_build_filename (dir, "v.mp4", NULL);
  gchar *data;
  gsize size;

  make_video (path, frames, gop);
  fail_unless (g_file_get_contents (path, &data, &size, NULL));
  spdl_test_remove_tree (dir);
  g_free (path);
  g_free (dir);
  return g_bytes_new_take (data, size);
}

/* a buffer holding (a reference to) @bytes */
static GstBuffer *
video_sample (GBytes * bytes, guint64 index, gint label, const gchar * path)
{
  GstBuffer *buf = gst_buffer_new_wrapped_bytes (bytes);

  gst_spdl_buffer_add_sample_meta (buf, index, label, 0, path);
  return buf;
}

/* A clip's "dimensions" in its caps, innermost first */
static gchar *
caps_dimensions (GstHarness * h)
{
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  gchar *dims;

  fail_unless (caps != NULL);
  dims = g_strdup (gst_structure_get_string (gst_caps_get_structure (caps,
              0), "dimensions"));
  gst_caps_unref (caps);
  return dims;
}

GST_START_TEST (test_clips_frames_and_pts)
{
  /* 40 frames, keyframes every 12: 3 clips of 8 frames, every other one,
   * spaced evenly over the 25 possible starts: 0, 12 and 25 (the last clip
   * ends at the last
   * frame) */
  GBytes *bytes = make_video_bytes (40, 12);
  GstHarness *h = gst_harness_new_parse ("spdlvideodecode frames=8 stride=2 "
      "clips-per-video=3 sampling=uniform size=0 resize=0 threads=2 "
      "layout=cthw");
  const guint starts[] = { 0, 12, 25 };
  guint c, k;
  gchar *dims;

  gst_harness_set_src_caps_str (h, "video/quicktime");
  fail_unless_equals_int (gst_harness_push (h, video_sample (bytes, 7, 2,
              "/videos/b/v.mp4")), GST_FLOW_OK);
  for (c = 0; c < 3; c++) {
    GstBuffer *clip = gst_harness_pull (h);
    GstSpdlSampleInfo info;
    guint n = 0, number = 99;
    gdouble *pts;

    fail_unless (clip != NULL);
    fail_unless_equals_int (gst_buffer_get_size (clip),
        3 * 8 * WIDTH * HEIGHT);
    fail_unless (gst_spdl_buffer_get_sample_info (clip, &info));
    fail_unless_equals_int (info.index, 7);
    fail_unless_equals_int (info.label, 2);
    fail_unless_equals_string (info.path, "/videos/b/v.mp4");
    fail_unless (gst_spdl_buffer_get_clip_number (clip, &number));
    fail_unless_equals_int (number, c);
    pts = gst_spdl_buffer_dup_clip_pts (clip, &n);
    fail_unless_equals_int (n, 8);
    for (k = 0; k < n; k++)
      fail_unless (fabs (pts[k] - (starts[c] + 2 * k) * FRAME_S) < 1e-6,
          "clip %u frame %u at %f", c, k, pts[k]);
    g_free (pts);
    gst_buffer_unref (clip);
  }
  /* [3, T, H, W], innermost first */
  dims = caps_dimensions (h);
  fail_unless_equals_string (dims, "64:48:8:3");
  g_free (dims);
  gst_harness_teardown (h);
  g_bytes_unref (bytes);
}

GST_END_TEST;

GST_START_TEST (test_layouts_and_resize)
{
  const gchar *layouts[] = { "tchw", "thwc" };
  const gchar *shapes[] = { "32:32:3:4", "3:32:32:4" };
  GBytes *bytes = make_video_bytes (10, 10);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (layouts); i++) {
    gchar *desc = g_strdup_printf ("spdlvideodecode frames=4 size=32 "
        "resize=40 crop=center threads=1 layout=%s", layouts[i]);
    GstHarness *h = gst_harness_new_parse (desc);
    GstBuffer *clip;
    gchar *dims;

    gst_harness_set_src_caps_str (h, "video/quicktime");
    fail_unless_equals_int (gst_harness_push (h, video_sample (bytes, 0, 0,
                "v.mp4")), GST_FLOW_OK);
    clip = gst_harness_pull (h);
    fail_unless (clip != NULL);
    fail_unless_equals_int (gst_buffer_get_size (clip), 4 * 32 * 32 * 3);
    dims = caps_dimensions (h);
    fail_unless_equals_string (dims, shapes[i]);
    g_free (dims);
    gst_buffer_unref (clip);
    gst_harness_teardown (h);
    g_free (desc);
  }
  g_bytes_unref (bytes);
}

GST_END_TEST;

/* A WebM header of a DocTypeReadVersion matroskademux refuses (with a
 * CRITICAL of its own, fatal in a GstCheck test) */
static const guint8 webm_v40[] = {
  0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81,
  0x01, 0x42, 0xf2, 0x81, 0x04, 0x42, 0xf3, 0x81, 0x08, 0x42, 0x82, 0x84,
  'w', 'e', 'b', 'm', 0x42, 0x87, 0x81, 0x04, 0x42, 0x85, 0x81, 0x28,
  0x18, 0x53, 0x80, 0x67, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x13,
};

/* A folder with good.mp4 (20 frames) and bad files named .mp4: empty,
 * random bytes, an audio-only MP4, a truncated MP4, a WebM header
 * matroskademux refuses */
static gchar *
make_bad_folder (void)
{
  gchar *dir = spdl_test_make_tmpdir ();
  gchar *sub = g_build_filename (dir, "x", NULL);
  gchar *path, *data;
  gsize size;
  guint8 noise[4096];
  guint i;
  GRand *rand = g_rand_new_with_seed (5);

  g_mkdir (sub, 0755);
  path = g_build_filename (sub, "good.mp4", NULL);
  make_video (path, 20, 10);
  fail_unless (g_file_get_contents (path, &data, &size, NULL));
  g_free (path);
  path = g_build_filename (sub, "truncated.mp4", NULL);
  spdl_test_write_file (path, data, size / 3);
  g_free (path);
  g_free (data);
  path = g_build_filename (sub, "empty.mp4", NULL);
  spdl_test_write_file (path, "", 0);
  g_free (path);
  for (i = 0; i < sizeof (noise); i++)
    noise[i] = g_rand_int_range (rand, 0, 256);
  path = g_build_filename (sub, "garbage.mp4", NULL);
  spdl_test_write_file (path, (const gchar *) noise, sizeof (noise));
  g_free (path);
  /* zeros after it: typefind wants more than the header */
  memset (noise, 0, sizeof (noise));
  memcpy (noise, webm_v40, sizeof (webm_v40));
  path = g_build_filename (sub, "newer.mp4", NULL);
  spdl_test_write_file (path, (const gchar *) noise, sizeof (noise));
  g_free (path);
  path = g_build_filename (sub, "audio.mp4", NULL);
  {
    gchar *launch = g_strdup_printf ("audiotestsrc num-buffers=20 ! "
        "audioconvert ! avenc_aac ! mp4mux ! filesink location=\"%s\"", path);
    run_to_eos (launch);
    g_free (launch);
  }
  g_free (path);
  g_rand_free (rand);
  g_free (sub);
  return dir;
}

GST_START_TEST (test_bad_files_skipped_by_reason)
{
  gchar *dir = make_bad_folder ();
  gchar *launch = g_strdup_printf ("spdlsrc location=%s extensions=mp4 ! "
      "spdlvideodecode name=dec frames=4 threads=2 warning-limit=100", dir);
  SpdlTestRun *run = spdl_test_run (launch);
  guint i, good = 0;

  fail_unless (run->error == NULL, "%s", run->error);
  for (i = 0; i < run->items->len; i++) {
    SpdlTestItem *it = ITEM (run, i);
    if (!it->is_epoch_end) {
      fail_unless (g_str_has_suffix (it->path, "good.mp4"), "%s", it->path);
      good++;
    }
  }
  fail_unless_equals_int (good, 1);
  fail_unless (spdl_test_run_warned (run, "empty.mp4", "empty"));
  fail_unless (spdl_test_run_warned (run, "garbage.mp4", ""));
  fail_unless (spdl_test_run_warned (run, "audio.mp4", "no video"));
  fail_unless (spdl_test_run_warned (run, "truncated.mp4", ""));
  fail_unless (spdl_test_run_warned (run, "newer.mp4",
          "DocTypeReadVersion is 40"));
  /* newer.mp4, and garbage.mp4 (no type found) */
  fail_unless_equals_int (spdl_test_run_skipped (run, "dec",
          "unsupported-format"), 2);
  fail_unless_equals_int (spdl_test_run_skipped (run, "dec", "empty"), 1);
  fail_unless_equals_int (spdl_test_run_skipped (run, "dec", "no-video"), 1);
  fail_unless_equals_int (spdl_test_run_skipped (run, "dec", "timeout"), 0);
  fail_unless_equals_int (spdl_test_run_skipped (run, "dec", "total"), 5);
  spdl_test_run_free (run);
  g_free (launch);

  /* the second bad file is one too many */
  launch = g_strdup_printf ("spdlsrc location=%s extensions=mp4 ! "
      "spdlvideodecode name=dec frames=4 threads=1 max-errors=1", dir);
  run = spdl_test_run (launch);
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "max-errors=1") != NULL, "%s", run->error);
  spdl_test_run_free (run);
  g_free (launch);
  spdl_test_remove_tree (dir);
  g_free (dir);
}

GST_END_TEST;

/* The record's description goes from the sink caps to the clips' caps,
 * its values with each clip's sample meta. */
GST_START_TEST (test_fields_pass_through)
{
  GBytes *bytes = make_video_bytes (10, 10);
  GstHarness *h = gst_harness_new_parse ("spdlvideodecode frames=4 size=32 "
      "resize=40 crop=center threads=1");
  GstBuffer *buf = video_sample (bytes, 3, 1, "v.mp4"), *clip;
  GValue value = G_VALUE_INIT;
  const GValue *got;
  GstCaps *caps;

  g_value_init (&value, G_TYPE_STRING);
  g_value_set_string (&value, "a dog on a beach");
  gst_spdl_buffer_set_record (buf, &value, 1);
  g_value_unset (&value);
  gst_harness_set_src_caps_str (h,
      "video/quicktime, fields=(string)\"txt:string:skip\"");
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  clip = gst_harness_pull (h);
  fail_unless (clip != NULL);
  got = gst_spdl_buffer_get_record_value (clip, 0);
  fail_unless (got != NULL && G_VALUE_HOLDS_STRING (got));
  fail_unless_equals_string (g_value_get_string (got), "a dog on a beach");
  caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless_equals_string (gst_structure_get_string
      (gst_caps_get_structure (caps, 0), "fields"), "txt:string:skip");
  gst_caps_unref (caps);
  gst_buffer_unref (clip);
  gst_harness_teardown (h);
  g_bytes_unref (bytes);
}

GST_END_TEST;

/* Image and label fields need spdldecode: the video and audio decoders
 * refuse such a record when the caps come, with an error saying so. */
GST_START_TEST (test_image_fields_refused)
{
  const gchar *elements[] = { "spdlvideodecode", "spdlaudiodecode" };
  const gchar *media[] = { "video/quicktime", "audio/x-wav" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (elements); i++) {
    GstHarness *h = gst_harness_new (elements[i]);
    GstBus *bus = gst_bus_new ();
    gchar *caps = g_strdup_printf ("%s, fields=(string)"
        "\"txt:string:skip,seg.png:label:skip\"", media[i]);
    GstMessage *msg;
    GstSegment segment;
    GstCaps *input;
    GError *err = NULL;
    gchar *debug = NULL;

    gst_element_set_bus (h->element, bus);
    gst_harness_play (h);
    fail_unless (gst_harness_push_event (h,
            gst_event_new_stream_start ("s")));
    /* a sticky event is stored upstream whatever the answer */
    input = gst_caps_from_string (caps);
    gst_harness_push_event (h, gst_event_new_caps (input));
    gst_caps_unref (input);
    gst_segment_init (&segment, GST_FORMAT_BYTES);
    gst_harness_push_event (h, gst_event_new_segment (&segment));
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    fail_unless (msg != NULL);
    gst_message_parse_error (msg, &err, &debug);
    fail_unless (g_error_matches (err, GST_CORE_ERROR,
            GST_CORE_ERROR_NEGOTIATION));
    fail_unless (strstr (err->message, "image fields need spdldecode"),
        "%s", err->message);
    fail_unless (strstr (err->message, "\"seg.png\""), "%s", err->message);
    g_clear_error (&err);
    g_free (debug);
    gst_message_unref (msg);
    /* the refused caps stay pending: the sample is not negotiated */
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_new_allocate
            (NULL, 16, NULL)), GST_FLOW_NOT_NEGOTIATED);
    gst_element_set_bus (h->element, NULL);
    gst_object_unref (bus);
    gst_harness_teardown (h);
    g_free (caps);
  }
}

GST_END_TEST;

static Suite *
spdlvideodecode_suite (void)
{
  Suite *s = suite_create ("spdlvideodecode");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_clips_frames_and_pts);
  tcase_add_test (tc, test_layouts_and_resize);
  tcase_add_test (tc, test_bad_files_skipped_by_reason);
  tcase_add_test (tc, test_fields_pass_through);
  tcase_add_test (tc, test_image_fields_refused);
  return s;
}

SPDL_CHECK_MAIN (spdlvideodecode);
