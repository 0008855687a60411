/* GStreamer SPDL plugin: spdlbatch and spdlappsink unit tests
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include "spdltestutil.h"
#include "gstspdlmeta.h"
#include "gstspdltensor.h"
#include "gstspdlnormalize.h"
#include "gstspdlrecord.h"
#include "printbatch.h"

#include <math.h>
#include "spdlcheckmain.h"

/* A downstream allocator the test can recognize and count. */
typedef struct
{
  GstAllocator parent;
  gint allocations;
} TestAllocator;
typedef GstAllocatorClass TestAllocatorClass;
static GType test_allocator_get_type (void);
G_DEFINE_TYPE (TestAllocator, test_allocator, GST_TYPE_ALLOCATOR);

typedef struct
{
  GstMemory mem;
  guint8 *data;
} TestMemory;

static GstMemory *
test_alloc (GstAllocator * allocator, gsize size, GstAllocationParams * p)
{
  TestMemory *m = g_new0 (TestMemory, 1);

  gst_memory_init (GST_MEMORY_CAST (m), 0, allocator, NULL, size, 0, 0, size);
  m->data = g_malloc (size);
  g_atomic_int_inc (&((TestAllocator *) allocator)->allocations);
  return GST_MEMORY_CAST (m);
}

static void
test_free (GstAllocator * allocator, GstMemory * mem)
{
  g_free (((TestMemory *) mem)->data);
  g_free (mem);
}

static gpointer
test_map (GstMemory * mem, gsize maxsize, GstMapFlags flags)
{
  return ((TestMemory *) mem)->data;
}

static void
test_unmap (GstMemory * mem)
{
}

static void
test_allocator_class_init (TestAllocatorClass * klass)
{
  klass->alloc = test_alloc;
  klass->free = test_free;
}

static void
test_allocator_init (TestAllocator * self)
{
  GstAllocator *a = GST_ALLOCATOR_CAST (self);

  a->mem_type = "TestMemory";
  a->mem_map = test_map;
  a->mem_unmap = test_unmap;
}

#define W 4
#define H 2

/* An RGB @w x @h image (rows 4-byte aligned, as video/x-raw) whose bytes
 * are @pixel (sample, y, x, channel) */
static GstBuffer *
make_rgb (guint sample, guint w, guint h, gint label, guint epoch,
    const gchar * path, guint8 (*pixel) (guint, guint, guint, guint))
{
  gsize stride = GST_ROUND_UP_4 (w * 3);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, stride * h, NULL);
  GstMapInfo map;
  guint x, y, c;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      for (c = 0; c < 3; c++)
        map.data[y * stride + x * 3 + c] = pixel (sample, y, x, c);
  gst_buffer_unmap (buf, &map);
  gst_spdl_buffer_add_sample_meta (buf, 100 + sample, label, epoch, path);
  return buf;
}

static guint8
small_pixel (guint sample, guint y, guint x, guint c)
{
  return sample * 32 + y * 12 + x * 3 + c;
}

/* An RGB W x H image whose bytes encode (sample, y, x, channel). */
static GstBuffer *
make_image_at (guint sample, gint label, guint epoch, const gchar * path)
{
  return make_rgb (sample, W, H, label, epoch, path, small_pixel);
}

static GstBuffer *
make_image (guint sample, gint label, guint epoch)
{
  return make_image_at (sample, label, epoch, "x.jpg");
}

static GstHarness *
batch_harness (const gchar * props)
{
  gchar *desc = g_strdup_printf ("spdlbatch %s", props);
  GstHarness *h = gst_harness_new_parse (desc);

  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=4,height=2,"
      "framerate=0/1");
  g_free (desc);
  return h;
}

static guint
batch_samples (GstHarness * h, GstSpdlTensorInfo * t)
{
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  guint n = gst_spdl_tensors_from_caps (caps, t, 2);

  fail_unless_equals_int (n, 2);
  gst_caps_unref (caps);
  return t[1].shape[0];
}

static void
check_batch (GstHarness * h, GstBuffer * batch, guint first_sample, guint n,
    gboolean nchw)
{
  GstSpdlTensorInfo t[2];
  GstMapInfo img, lab;
  GstCustomMeta *meta;
  const GValue *indices;
  guint s, x, y, c;

  /* h = NULL when later caps already replaced this batch's on the pad */
  if (h) {
    fail_unless_equals_int (batch_samples (h, t), n);
    fail_unless_equals_int (t[0].shape[0], n);
    fail_unless_equals_int (t[0].shape[nchw ? 1 : 3], 3);
    fail_unless_equals_int (t[0].shape[nchw ? 2 : 1], H);
  }
  fail_unless_equals_int (gst_buffer_n_memory (batch), 2);
  gst_memory_map (gst_buffer_peek_memory (batch, 0), &img, GST_MAP_READ);
  gst_memory_map (gst_buffer_peek_memory (batch, 1), &lab, GST_MAP_READ);
  fail_unless_equals_int (img.size, n * W * H * 3);
  fail_unless_equals_int (lab.size, n * 8);
  for (s = 0; s < n; s++) {
    fail_unless_equals_int (((gint64 *) lab.data)[s], (first_sample + s) * 10);
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++)
        for (c = 0; c < 3; c++) {
          gsize at = nchw ? ((s * 3 + c) * H + y) * W + x :
              ((s * H + y) * W + x) * 3 + c;
          fail_unless_equals_int (img.data[at],
              (first_sample + s) * 32 + y * 12 + x * 3 + c);
        }
  }
  gst_memory_unmap (gst_buffer_peek_memory (batch, 0), &img);
  gst_memory_unmap (gst_buffer_peek_memory (batch, 1), &lab);
  meta = gst_buffer_get_custom_meta (batch, GST_SPDL_BATCH_META_NAME);
  fail_unless (meta != NULL);
  indices = gst_structure_get_value (gst_custom_meta_get_structure (meta),
      "indices");
  fail_unless_equals_int (gst_value_array_get_size (indices), n);
  for (s = 0; s < n; s++)
    fail_unless_equals_uint64 (g_value_get_uint64 (gst_value_array_get_value
            (indices, s)), 100 + first_sample + s);
}

static void
push_samples (GstHarness * h, guint first_sample, guint n, guint epoch)
{
  guint i;

  for (i = first_sample; i < first_sample + n; i++)
    fail_unless_equals_int (gst_harness_push (h, make_image (i, i * 10,
                epoch)), GST_FLOW_OK);
}

/* Caps that keep the tensor's shape (pixel-aspect-ratio, colorimetry)
 * may change inside a batch, as videoscale does on mixed sizes; a new size
 * inside a batch is a clear error. */
GST_START_TEST (test_caps_change_same_shape)
{
  GstHarness *h = batch_harness ("batch-size=4");
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GstBuffer *b;

  gst_element_set_bus (h->element, bus);
  push_samples (h, 0, 2, 0);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=4,height=2,"
      "framerate=0/1,pixel-aspect-ratio=3/2,colorimetry=bt709");
  push_samples (h, 2, 2, 0);
  b = gst_harness_pull (h);
  check_batch (h, b, 0, 4, FALSE);
  gst_buffer_unref (b);
  fail_if (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR));

  push_samples (h, 4, 1, 0);
  /* the harness' caps push fails: the element refuses them */
  {
    GstCaps *wider = gst_caps_from_string
        ("video/x-raw,format=RGB,width=8,height=2,framerate=0/1");
    gst_pad_push_event (h->srcpad, gst_event_new_caps (wider));
    gst_caps_unref (wider);
  }
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  {
    GError *err = NULL;
    gst_message_parse_error (msg, &err, NULL);
    fail_unless (strstr (err->message, "from 4x2 RGB to 8x2 RGB") != NULL,
        "%s", err->message);
    g_error_free (err);
  }
  gst_message_unref (msg);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A batch-size whose batch would not fit 4 GiB: an element error. */
GST_START_TEST (test_huge_batch_refused)
{
  gchar *launch = g_strdup ("videotestsrc num-buffers=2 ! "
      "video/x-raw,format=RGB,width=1024,height=1024 ! "
      "spdlbatch batch-size=2000000000");
  SpdlTestRun *run = spdl_test_run (launch);

  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "4 GiB") != NULL, "%s", run->error);
  fail_unless (strstr (run->error, "batch-size") != NULL, "%s", run->error);
  spdl_test_run_free (run);
  g_free (launch);
}

GST_END_TEST;

/* Skipped samples must not make ranks yield different batches (DDP
 * hangs): the slots are padded with copies, counted in "padded". */
static void
check_equal_batches (const gchar * root, guint rank, guint batch_size,
    gboolean drop_last, const guint * sizes, guint n_batches,
    guint expected_padded)
{
  gchar *launch = g_strdup_printf ("spdlsrc location=%s num-shards=2 "
      "shard-index=%u ! spdldecode width=8 height=8 ! spdlbatch "
      "batch-size=%u drop-last=%d", root, rank, batch_size, drop_last);
  SpdlTestRun *run = spdl_test_run (launch);
  guint i, batches = 0, padded_total = 0;

  fail_unless (run->error == NULL, "%s", run->error);
  for (i = 0; i < run->items->len; i++) {
    SpdlTestItem *item = g_ptr_array_index (run->items, i);
    GstCustomMeta *meta;
    guint padded = 0;

    if (item->is_epoch_end)
      continue;
    fail_unless (batches < n_batches);
    fail_unless_equals_int (gst_buffer_get_size (item->buffer),
        sizes[batches] * (8 * 8 * 3 + 8));
    meta = gst_buffer_get_custom_meta (item->buffer, GST_SPDL_BATCH_META_NAME);
    fail_unless (gst_structure_get_uint (gst_custom_meta_get_structure (meta),
            "padded", &padded));
    padded_total += padded;
    batches++;
  }
  fail_unless_equals_int (batches, n_batches);
  fail_unless_equals_int (padded_total, expected_padded);
  spdl_test_run_free (run);
  g_free (launch);
}

GST_START_TEST (test_equal_batches_per_rank)
{
  /* 10 images and 3 corrupt files: N = 13, each rank takes 7; rank 0
   * takes bad0 and bad2, rank 1 bad1 and, wrapping around, bad0 */
  gchar *root = spdl_test_make_image_folder (1, 10, 16, 16);
  const guint sizes[] = { 3, 3, 1 }, sizes_of_2[] = { 2, 2, 2, 1 };
  guint i;

  for (i = 0; i < 3; i++) {
    gchar *path = g_strdup_printf ("%s/class00/bad%u.jpg", root, i);
    spdl_test_write_file (path, "\xff\xd8 not really", -1);
    g_free (path);
  }
  check_equal_batches (root, 0, 3, FALSE, sizes, 3, 2);
  check_equal_batches (root, 1, 3, FALSE, sizes, 3, 2);
  /* 5 real samples in batches of 2: the third batch is completed from
   * itself, the fourth from the last full batch */
  check_equal_batches (root, 0, 2, FALSE, sizes_of_2, 4, 2);
  /* drop-last: floor (7 / 3) = 2 full batches on every rank; 5 real
   * samples each, so one padded slot */
  check_equal_batches (root, 0, 3, TRUE, sizes, 2, 1);
  check_equal_batches (root, 1, 3, TRUE, sizes, 2, 1);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

/* Batches (their indices) of a pipeline, pulled through pull-batch; stops
 * after @stop_after batches (0 = all), returning spdlappsink's
 * resume-state then. */
static GPtrArray *
pull_batches (const gchar * root, const gchar * src_props, guint stop_after,
    GstStructure ** resume)
{
  gchar *launch = g_strdup_printf ("spdlsrc name=src location=%s shuffle=true "
      "seed=5 num-epochs=2 %s ! spdldecode width=8 height=8 "
      "mode=random-resized-crop ! spdlbatch batch-size=3 ! "
      "spdlappsink name=sink", root, src_props);
  GstElement *pipeline = gst_parse_launch (launch, NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GPtrArray *batches = g_ptr_array_new_with_free_func (g_free);
  GstSample *sample;

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  for (;;) {
    GstBuffer *buf;
    GstCustomMeta *meta;
    GString *desc;
    guint64 *indices;
    guint n, i, epoch;

    g_signal_emit_by_name (sink, "try-pull-batch", 10 * GST_SECOND, &sample);
    if (sample == NULL)
      break;
    buf = gst_sample_get_buffer (sample);
    if (buf == NULL) {
      gst_sample_unref (sample);
      continue;
    }
    meta = gst_buffer_get_custom_meta (buf, GST_SPDL_BATCH_META_NAME);
    gst_structure_get_uint (gst_custom_meta_get_structure (meta), "epoch",
        &epoch);
    indices = gst_spdl_structure_dup_uint64_array
        (gst_custom_meta_get_structure (meta), "indices", &n);
    /* epoch, indices and a checksum of the pixels (the random crops) */
    desc = g_string_new (NULL);
    g_string_append_printf (desc, "e%u:", epoch);
    for (i = 0; i < n; i++)
      g_string_append_printf (desc, "%" G_GUINT64_FORMAT ",", indices[i]);
    {
      GstMapInfo map;
      guint64 sum = 0;
      gsize k;
      gst_memory_map (gst_buffer_peek_memory (buf, 0), &map, GST_MAP_READ);
      for (k = 0; k < map.size; k++)
        sum = sum * 31 + map.data[k];
      gst_memory_unmap (gst_buffer_peek_memory (buf, 0), &map);
      g_string_append_printf (desc, "#%" G_GUINT64_FORMAT, sum);
    }
    g_free (indices);
    g_ptr_array_add (batches, g_string_free (desc, FALSE));
    gst_sample_unref (sample);
    if (stop_after && batches->len == stop_after)
      break;
  }
  if (resume)
    g_object_get (sink, "resume-state", resume, NULL);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (launch);
  return batches;
}

/* spdlappsink's resume-state continues exactly after the last batch
 * pulled: same samples, order and random crops, into the next epoch. */
GST_START_TEST (test_resume_state)
{
  gchar *root = spdl_test_make_image_folder (1, 23, 16, 16);
  const guint stops[] = { 1, 2, 4, 5 };  /* 4: exactly an epoch's end */
  GPtrArray *full = pull_batches (root, "num-shards=2 shard-index=1", 0,
      NULL);
  guint s, i;

  /* 12 samples per epoch for rank 1 of 2: 4 batches of 3, 2 epochs */
  fail_unless_equals_int (full->len, 8);
  for (s = 0; s < G_N_ELEMENTS (stops); s++) {
    GstStructure *state = NULL;
    GPtrArray *head = pull_batches (root, "num-shards=2 shard-index=1",
        stops[s], &state), *tail;
    guint epoch = 99;
    guint64 offset = 99;
    gchar *props;

    fail_unless (state != NULL);
    fail_unless (gst_structure_get (state, "epoch", G_TYPE_UINT, &epoch,
            "offset", G_TYPE_UINT64, &offset, NULL));
    /* 4 batches an epoch; each of the 2 ranks took 3 per batch */
    fail_unless_equals_int (epoch, stops[s] / 4);
    fail_unless_equals_uint64 (offset, (stops[s] % 4) * 3 * 2);
    props = g_strdup_printf ("num-shards=2 shard-index=1 start-epoch=%u "
        "start-offset=%" G_GUINT64_FORMAT " num-epochs=%u", epoch, offset,
        2 - epoch);
    tail = pull_batches (root, props, 0, NULL);
    fail_unless_equals_int (head->len + tail->len, full->len);
    for (i = 0; i < full->len; i++)
      fail_unless_equals_string (g_ptr_array_index (full, i),
          i < head->len ? g_ptr_array_index (head, i) :
          g_ptr_array_index (tail, i - head->len));
    g_ptr_array_unref (head);
    g_ptr_array_unref (tail);
    gst_structure_free (state);
    g_free (props);
  }
  g_ptr_array_unref (full);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_nhwc_slots_labels_partial)
{
  GstHarness *h = batch_harness ("batch-size=3");
  GstBuffer *b;

  push_samples (h, 0, 7, 0);
  fail_unless_equals_int (gst_harness_buffers_received (h), 2);
  b = gst_harness_pull (h);
  check_batch (h, b, 0, 3, FALSE);
  gst_buffer_unref (b);
  b = gst_harness_pull (h);
  check_batch (h, b, 3, 3, FALSE);
  gst_buffer_unref (b);
  /* the epoch's end flushes the partial batch, with caps for its size */
  gst_harness_push_event (h, gst_spdl_epoch_end_event_new (0, 7));
  b = gst_harness_pull (h);
  check_batch (h, b, 6, 1, FALSE);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_nchw_layout)
{
  GstHarness *h = batch_harness ("batch-size=2 layout=nchw");
  GstBuffer *b;

  push_samples (h, 0, 4, 0);
  b = gst_harness_pull (h);
  check_batch (h, b, 0, 2, TRUE);
  gst_buffer_unref (b);
  b = gst_harness_pull (h);
  check_batch (h, b, 2, 2, TRUE);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_drop_last_and_epochs)
{
  GstHarness *h = batch_harness ("batch-size=3 drop-last=true");
  GstBuffer *b;
  guint64 dropped;

  push_samples (h, 0, 4, 0);
  /* a new epoch starts: the partial batch of epoch 0 is dropped, never
   * mixed with epoch 1 */
  push_samples (h, 4, 5, 1);
  gst_harness_push_event (h, gst_event_new_eos ());
  fail_unless_equals_int (gst_harness_buffers_received (h), 2);
  b = gst_harness_pull (h);
  check_batch (h, b, 0, 3, FALSE);
  gst_buffer_unref (b);
  b = gst_harness_pull (h);
  check_batch (h, b, 4, 3, FALSE);
  gst_buffer_unref (b);
  {
    GstElement *batch = gst_harness_find_element (h, "spdlbatch");
    g_object_get (batch, "dropped", &dropped, NULL);
    gst_object_unref (batch);
  }
  fail_unless_equals_uint64 (dropped, 3);
  gst_harness_teardown (h);

  /* without drop-last: epoch 0 ends with a batch of 1 */
  h = batch_harness ("batch-size=3");
  push_samples (h, 0, 4, 0);
  push_samples (h, 4, 3, 1);
  fail_unless_equals_int (gst_harness_buffers_received (h), 3);
  b = gst_harness_pull (h);
  check_batch (NULL, b, 0, 3, FALSE);
  gst_buffer_unref (b);
  b = gst_harness_pull (h);
  check_batch (NULL, b, 3, 1, FALSE);
  gst_buffer_unref (b);
  b = gst_harness_pull (h);
  check_batch (h, b, 4, 3, FALSE);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* spdlsrc's own batches (buckets): image @sample of batch @batch, marked
 * as its last or not, resuming at (0, 100 + @batch) after it */
static GstBuffer *
make_batched_image (guint sample, guint64 batch, gboolean end)
{
  GstBuffer *buf = make_image (sample, sample * 10, 0);

  gst_spdl_buffer_set_batch (buf, batch, 0, 100 + batch);
  if (end)
    gst_spdl_buffer_set_batch_end (buf);
  return buf;
}

static gboolean
push_src_epoch_start (GstHarness * h, guint max_batch)
{
  GstEvent *event = gst_spdl_epoch_start_event_new (0, 8, 0, 1, 0);

  gst_structure_set (gst_event_writable_structure (event), "batches",
      G_TYPE_UINT64, (guint64) 4, "max-batch", G_TYPE_UINT, max_batch, NULL);
  return gst_harness_push_event (h, event);
}

/* spdlsrc's batches are cut where it marks them, whatever batch-size
 * (the most a batch holds) and drop-last say; a batch whose marked last
 * sample never came ends at the next batch's first, never merged. */
GST_START_TEST (test_cuts_at_src_batches)
{
  GstHarness *h = batch_harness ("batch-size=4 drop-last=true");
  /* batches 0..3 of 2, 3, 1 and 2 samples; sample 4 (batch 1's last) was
   * skipped upstream */
  const guint batch_of[] = { 0, 0, 1, 1, 1, 2, 3, 3 };
  const gboolean end[] = { 0, 1, 0, 0, 1, 1, 0, 1 };
  const guint first[] = { 0, 2, 5, 6 }, sizes[] = { 2, 2, 1, 2 };
  guint i, epoch;
  guint64 offset;

  fail_unless (push_src_epoch_start (h, 3));
  for (i = 0; i < G_N_ELEMENTS (batch_of); i++) {
    if (i != 4)
      fail_unless_equals_int (gst_harness_push (h, make_batched_image (i,
                  batch_of[i], end[i])), GST_FLOW_OK);
    /* a marked sample ends its batch at once; the skipped one's batch
     * ends at the next batch's first sample */
    if (i == 1 || i == 5 || i == 7)
      fail_unless_equals_int (gst_harness_buffers_received (h),
          i == 1 ? 1 : i == 5 ? 3 : 4);
  }
  gst_harness_push_event (h, gst_event_new_eos ());
  fail_unless_equals_int (gst_harness_buffers_received (h), 4);
  for (i = 0; i < 4; i++) {
    GstBuffer *b = gst_harness_pull (h);

    check_batch (NULL, b, first[i], sizes[i], FALSE);
    fail_unless (gst_spdl_buffer_get_batch_resume (b, &epoch, &offset));
    fail_unless_equals_int (epoch, 0);
    fail_unless_equals_uint64 (offset, 100 + i);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* batch-size smaller than spdlsrc's batches: an error at the epoch's
 * start, nothing batched */
GST_START_TEST (test_src_batches_larger_than_batch_size)
{
  GstHarness *h = batch_harness ("batch-size=2");
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *error = NULL;

  gst_element_set_bus (h->element, bus);
  fail_if (push_src_epoch_start (h, 3));
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &error, NULL);
  fail_unless (strstr (error->message, "batch-size=2 is smaller than "
          "spdlsrc's batches (up to 3 samples") != NULL, error->message);
  g_error_free (error);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_harness_push (h, make_batched_image (0, 0,
              FALSE)), GST_FLOW_ERROR);
  fail_unless_equals_int (gst_harness_buffers_received (h), 0);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A TestAllocator that the harness proposes downstream of spdlbatch */
static GstAllocator *
propose_test_allocator (GstHarness * h)
{
  GstAllocator *shm = g_object_new (test_allocator_get_type (), NULL);
  GstAllocationParams params;

  gst_object_ref_sink (shm);
  gst_allocation_params_init (&params);
  gst_harness_set_propose_allocator (h, gst_object_ref (shm), &params);
  /* a reconfigure makes spdlbatch query allocation again */
  fail_unless (gst_harness_push_upstream_event (h,
          gst_event_new_reconfigure ()));
  return shm;
}

GST_START_TEST (test_allocation_from_downstream)
{
  GstHarness *h = batch_harness ("batch-size=2");
  GstAllocator *shm = propose_test_allocator (h);
  GHashTable *seen = g_hash_table_new (NULL, NULL);
  guint i;

  for (i = 0; i < 20; i++) {
    GstBuffer *b;
    push_samples (h, 2 * i, 2, 0);
    b = gst_harness_pull (h);
    fail_unless (gst_buffer_peek_memory (b, 0)->allocator == shm);
    fail_unless (gst_buffer_peek_memory (b, 1)->allocator == shm);
    g_hash_table_add (seen, gst_buffer_peek_memory (b, 0));
    gst_buffer_unref (b);
  }
  /* an epoch's short last batch goes back to the pool too */
  push_samples (h, 100, 1, 0);
  gst_harness_push_event (h, gst_spdl_epoch_end_event_new (0, 41));
  {
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_int (gst_buffer_get_size (b), 4 * 2 * 3 + 8);
    g_hash_table_add (seen, gst_buffer_peek_memory (b, 0));
    gst_buffer_unref (b);
  }
  for (i = 0; i < 5; i++) {
    GstBuffer *b;
    push_samples (h, 200 + 2 * i, 2, 1);
    b = gst_harness_pull (h);
    fail_unless_equals_int (gst_buffer_get_size (b), 2 * (4 * 2 * 3 + 8));
    g_hash_table_add (seen, gst_buffer_peek_memory (b, 0));
    gst_buffer_unref (b);
  }
  /* buffers come back to the pool: no allocation per batch */
  fail_unless (g_hash_table_size (seen) <= 2, "%u distinct batch memories",
      g_hash_table_size (seen));
  fail_unless (((TestAllocator *) shm)->allocations <= 4);
  g_hash_table_unref (seen);
  gst_object_unref (shm);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_appsink_batches_and_epochs)
{
  gchar *root = spdl_test_make_image_folder (2, 5, 40, 30);
  gchar *launch = g_strdup_printf ("spdlsrc location=%s num-epochs=2 ! "
      "spdldecode width=8 height=6 ! spdlbatch batch-size=4 ! "
      "spdlappsink name=sink", root);
  GstElement *pipeline = gst_parse_launch (launch, NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstStructure *tensors = NULL, *stats = NULL;
  guint sizes[8], n = 0, epochs = 0;
  gboolean sync = TRUE;
  guint max_buffers = 0;
  guint64 batches = 0;
  GstSample *sample;

  g_object_get (sink, "sync", &sync, "max-buffers", &max_buffers, NULL);
  fail_if (sync);
  fail_unless_equals_int (max_buffers, 4);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  while (TRUE) {
    g_signal_emit_by_name (sink, "try-pull-batch", 10 * GST_SECOND, &sample);
    if (sample == NULL)
      break;
    if (gst_sample_get_buffer (sample) == NULL) {
      guint epoch;
      guint64 samples;
      fail_unless (gst_spdl_epoch_end_parse (gst_sample_get_info (sample),
              &epoch, &samples));
      fail_unless_equals_int (epoch, epochs);
      fail_unless_equals_uint64 (samples, 10);
      epochs++;
    } else {
      GstSpdlTensorInfo t[2];
      fail_unless_equals_int (gst_spdl_tensors_from_caps (gst_sample_get_caps
              (sample), t, 2), 2);
      fail_unless (n < 8);
      sizes[n++] = t[0].shape[0];
      if (n == 1)
        g_object_get (sink, "tensors", &tensors, NULL);
    }
    gst_sample_unref (sample);
  }
  /* 10 samples per epoch in batches of 4: 4, 4, 2 twice */
  fail_unless_equals_int (n, 6);
  fail_unless_equals_int (epochs, 2);
  fail_unless_equals_int (sizes[2], 2);
  fail_unless_equals_int (sizes[5], 2);
  fail_unless (tensors != NULL);
  fail_unless_equals_string (gst_structure_get_string (tensors, "shape-0"),
      "4,6,8,3");
  fail_unless_equals_string (gst_structure_get_string (tensors, "dtype-1"),
      "int64");
  fail_unless_equals_string (gst_structure_get_string (tensors, "device-0"),
      "cpu");
  g_object_get (sink, "stats", &stats, NULL);
  gst_structure_get_uint64 (stats, "batches", &batches);
  fail_unless_equals_uint64 (batches, 6);
  gst_structure_free (stats);
  gst_structure_free (tensors);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (launch);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

static const gdouble norm_mean[3] = { 0.5, 0.25, 0.0 };
static const gdouble norm_std[3] = { 0.5, 0.25, 2.0 };

/* the value a float batch holds at @at, as a double */
static gdouble
batch_value (const guint8 * data, GstSpdlDType dtype, gsize at)
{
  switch (dtype) {
    case GST_SPDL_DTYPE_FLOAT32:
      return ((const gfloat *) data)[at];
    case GST_SPDL_DTYPE_FLOAT16:
      return (gdouble) ((const _Float16 *) data)[at];
    case GST_SPDL_DTYPE_BFLOAT16:{
      union
      {
        guint32 u;
        gfloat f;
      } v = {.u = (guint32) ((const guint16 *) data)[at] << 16 };
      return v.f;
    }
    default:
      g_assert_not_reached ();
  }
}

static void
check_normalized (GstSpdlDType dtype, gboolean nchw)
{
  static const gchar *names[] = {[GST_SPDL_DTYPE_FLOAT32] = "float32",
    [GST_SPDL_DTYPE_FLOAT16] = "float16",[GST_SPDL_DTYPE_BFLOAT16] =
        "bfloat16"
  };
  /* relative precision of each type (half an ulp is the rounding) */
  gdouble eps = dtype == GST_SPDL_DTYPE_FLOAT32 ? 1e-6 :
      dtype == GST_SPDL_DTYPE_FLOAT16 ? 1.0 / 2048 : 1.0 / 256;
  gchar *props = g_strdup_printf ("batch-size=2 layout=%s dtype=%s "
      "mean=\"<0.5,0.25,0>\" std=\"<0.5,0.25,2>\"", nchw ? "nchw" : "nhwc",
      names[dtype]);
  GstHarness *h = batch_harness (props);
  GstSpdlTensorInfo t[2];
  GstCaps *caps;
  const gchar *types;
  GstBuffer *b;
  GstMapInfo img;
  guint s, x, y, c;

  push_samples (h, 0, 2, 0);
  b = gst_harness_pull (h);
  caps = gst_pad_get_current_caps (h->sinkpad);
  types = gst_structure_get_string (gst_caps_get_structure (caps, 0), "types");
  fail_unless (g_str_has_prefix (types, names[dtype]), "types %s", types);
  fail_unless_equals_int (gst_spdl_tensors_from_caps (caps, t, 2), 2);
  fail_unless_equals_int (t[0].dtype, dtype);
  gst_caps_unref (caps);

  gst_memory_map (gst_buffer_peek_memory (b, 0), &img, GST_MAP_READ);
  fail_unless_equals_int (img.size, 2 * W * H * 3 * gst_spdl_dtype_size
      (dtype));
  for (s = 0; s < 2; s++)
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++)
        for (c = 0; c < 3; c++) {
          gsize at = nchw ? ((s * 3 + c) * H + y) * W + x :
              ((s * H + y) * W + x) * 3 + c;
          guint v = s * 32 + y * 12 + x * 3 + c;
          gdouble want = (v / 255.0 - norm_mean[c]) / norm_std[c];
          gdouble got = batch_value (img.data, dtype, at);
          fail_unless (fabs (got - want) <= eps * MAX (fabs (want), 1e-3),
              "%s %s sample %u (%u,%u,%u): %g, want %g", names[dtype],
              nchw ? "nchw" : "nhwc", s, y, x, c, got, want);
        }
  gst_memory_unmap (gst_buffer_peek_memory (b, 0), &img);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
  g_free (props);
}

GST_START_TEST (test_normalized_dtypes)
{
  GstSpdlDType d;

  for (d = GST_SPDL_DTYPE_FLOAT32; d <= GST_SPDL_DTYPE_BFLOAT16; d++) {
    check_normalized (d, FALSE);
    check_normalized (d, TRUE);
  }
}

GST_END_TEST;

/* a row long enough for the vector loop and its tail, all 256 values */
GST_START_TEST (test_normalize_row_matches_scalar)
{
  GstSpdlNormalizer norm;
  guint8 row[259 * 3];
  guint16 out[259 * 3];
  guint i;

  for (i = 0; i < G_N_ELEMENTS (row); i++)
    row[i] = (i * 7) & 0xff;
  fail_unless (gst_spdl_normalizer_init (&norm, GST_SPDL_DTYPE_FLOAT16,
          norm_mean, 3, norm_std, 3, 259, 3, FALSE, NULL));
  gst_spdl_normalize_row (&norm, row, out, 0);
  for (i = 0; i < G_N_ELEMENTS (row); i++) {
    gfloat f = fmaf (row[i], norm.scale[i % 3], norm.offset[i % 3]);
    gfloat g = (gfloat) row[i] * norm.scale[i % 3] + norm.offset[i % 3];
    /* FMA or not (the machine decides): either rounding */
    fail_unless (out[i] == gst_spdl_float_to_half (f) ||
        out[i] == gst_spdl_float_to_half (g), "value %u", i);
  }
  gst_spdl_normalizer_clear (&norm);

  /* a zero std, or a mean per channel for a different channel count */
  fail_if (gst_spdl_normalizer_init (&norm, GST_SPDL_DTYPE_FLOAT32,
          norm_mean, 1, (const gdouble[]) { 0.0 }, 1, 4, 3, FALSE, NULL));
  gst_spdl_normalizer_clear (&norm);
  fail_if (gst_spdl_normalizer_init (&norm, GST_SPDL_DTYPE_FLOAT32,
          norm_mean, 2, norm_std, 1, 4, 3, FALSE, NULL));
  gst_spdl_normalizer_clear (&norm);
}

GST_END_TEST;

/* the SIMD deinterleave, every width around its 16-pixel steps */
GST_START_TEST (test_deinterleave_rgb_row)
{
  guint8 row[3 * 70], planes[3][70];
  guint w, x, c;

  for (x = 0; x < sizeof (row); x++)
    row[x] = (x * 37 + 11) & 0xff;
  for (w = 1; w <= 70; w++) {
    memset (planes, 0xEE, sizeof (planes));
    gst_spdl_deinterleave_rgb_row (row, planes[0], planes[1], planes[2], w);
    for (c = 0; c < 3; c++) {
      for (x = 0; x < w; x++)
        fail_unless_equals_int (planes[c][x], row[3 * x + c]);
      if (w < 70)
        fail_unless_equals_int (planes[c][w], 0xEE);
    }
  }
}

GST_END_TEST;

/* RNE conversions against the compiler's _Float16 and hand-made ties */
GST_START_TEST (test_half_conversions_round_to_nearest_even)
{
  union
  {
    guint32 u;
    gfloat f;
  } v;
  guint32 bits, wrong = 0, first_wrong = 0;

  /* a bit pattern every 4099 (prime: all low-bit patterns come up), both
   * signs, from zero through subnormals and normals past half's overflow;
   * counted in plain C: a check assertion per value costs a message each */
  for (bits = 0; bits < 0x7f800000u; bits += 4099) {
    _Float16 ref;
    guint16 ref_bits;
    v.u = bits;
    ref = (_Float16) v.f;
    memcpy (&ref_bits, &ref, 2);
    if (gst_spdl_float_to_half (v.f) != ref_bits ||
        gst_spdl_float_to_half (-v.f) != (ref_bits | 0x8000)) {
      if (wrong++ == 0)
        first_wrong = bits;
    }
  }
  fail_unless (wrong == 0, "%u floats converted wrongly, the first 0x%08x",
      wrong, first_wrong);
  fail_unless_equals_int (gst_spdl_float_to_bfloat16 (1.0f), 0x3f80);
  v.u = 0x3f808000;             /* 1 + 2^-8: a tie, to even (down) */
  fail_unless_equals_int (gst_spdl_float_to_bfloat16 (v.f), 0x3f80);
  v.u = 0x3f818000;             /* 1 + 3 * 2^-8: a tie, to even (up) */
  fail_unless_equals_int (gst_spdl_float_to_bfloat16 (v.f), 0x3f82);
  v.u = 0x3f808001;             /* just above the tie: up */
  fail_unless_equals_int (gst_spdl_float_to_bfloat16 (v.f), 0x3f81);
  fail_unless_equals_int (gst_spdl_float_to_bfloat16 (-2.0f), 0xc000);
}

GST_END_TEST;

GST_START_TEST (test_mean_needs_float_dtype)
{
  GstHarness *h = batch_harness ("batch-size=2 mean=\"<0.5>\"");
  GstBuffer *b = make_image (0, 0, 0);

  /* the caps were refused: nothing is batched */
  fail_unless (gst_harness_push (h, b) != GST_FLOW_OK);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* spdldecode ! spdlbatch: decoded straight into the batch's slots, or
 * copied (identity drop-allocation=true hides spdlbatch's pool) */

#define SLOT_BATCH 4

static GstBuffer *
slot_sample (guint64 index, guint epoch, gboolean corrupt)
{
  SpdlTestJpeg opts;
  guint8 *data;
  gsize size;
  GstBuffer *buf;

  spdl_test_jpeg_init (&opts, 40 + index % 3 * 8, 30);
  opts.tint = index * 7;
  data = spdl_test_encode_jpeg (&opts, &size);
  /* a JPEG cut after its headers: fails while decoding, its slot taken */
  if (corrupt)
    size = 700;
  buf = gst_buffer_new_wrapped (data, size);
  gst_spdl_buffer_add_sample_meta (buf, index, index * 3 % 11, epoch,
      corrupt ? "bad.jpg" : "good.jpg");
  return buf;
}

/* Samples of the epoch from @script's position: for the epoch-start event. */
static guint64
epoch_samples (const gchar * script)
{
  guint64 n = 0;

  for (; *script && *script != 'e'; script++)
    n += *script == 'j' || *script == 'x';
  return n;
}

static void
pull_batch (GstHarness * h, GPtrArray * batches)
{
  GstBuffer *b = gst_harness_pull (h);

  fail_unless (b != NULL);
  g_ptr_array_add (batches, b);
}

/* Runs @script through spdldecode ! spdlbatch: j a sample, x a corrupt one,
 * p an epoch start of two ranks (padding), e an epoch's end, w waits for
 * a batch, f flushes. Returns the batches; @stats: spdlbatch's. */
static GPtrArray *
run_slots (const gchar * props, gboolean copy_path, const gchar * script,
    GstStructure ** stats)
{
  /* three threads finish samples out of order; a window of 6 (not 24)
   * leaves samples after it in scripts of a few dozen, whatever the
   * machine's speed, for the in-place path to show */
  gchar *desc = g_strdup_printf ("spdldecode width=16 height=12 threads=3 "
      "max-in-flight=6 max-errors=-1 ! %s spdlbatch name=b batch-size=%d %s",
      copy_path ? "identity drop-allocation=true !" : "", SLOT_BATCH, props);
  GstHarness *h = gst_harness_new_parse (desc);
  GstElement *batch = gst_bin_get_by_name (GST_BIN (h->element), "b");
  GPtrArray *batches = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  guint64 index = 0, in_epoch = 0;
  guint epoch = 0;
  const gchar *c;
  GstSegment segment;
  GstBuffer *b;

  gst_harness_set_src_caps_str (h, "image/jpeg, parsed=true");
  for (c = script; *c; c++) {
    switch (*c) {
      case 'j':
      case 'x':
        fail_unless_equals_int (gst_harness_push (h, slot_sample (index++,
                    epoch, *c == 'x')), GST_FLOW_OK);
        in_epoch++;
        break;
      case 'p':
        fail_unless (gst_harness_push_event (h,
                gst_spdl_epoch_start_event_new (epoch, epoch_samples (c),
                    0, 2, 0)));
        break;
      case 'e':
        fail_unless (gst_harness_push_event (h,
                gst_spdl_epoch_end_event_new (epoch++, in_epoch)));
        in_epoch = 0;
        break;
      case 'w':
        pull_batch (h, batches);
        break;
      case 'f':
        fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
        fail_unless (gst_harness_push_event (h,
                gst_event_new_flush_stop (TRUE)));
        gst_segment_init (&segment, GST_FORMAT_TIME);
        fail_unless (gst_harness_push_event (h,
                gst_event_new_segment (&segment)));
        break;
      default:
        g_assert_not_reached ();
    }
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while (gst_harness_pull_until_eos (h, &b) && b)
    g_ptr_array_add (batches, b);
  g_object_get (batch, "stats", stats, NULL);
  gst_object_unref (batch);
  gst_harness_teardown (h);
  g_free (desc);
  return batches;
}

static void
assert_same_memory (GstBuffer * a, GstBuffer * b, guint i)
{
  GstMapInfo ma, mb;

  fail_unless (gst_memory_map (gst_buffer_peek_memory (a, i), &ma,
          GST_MAP_READ));
  fail_unless (gst_memory_map (gst_buffer_peek_memory (b, i), &mb,
          GST_MAP_READ));
  fail_unless_equals_int (ma.size, mb.size);
  fail_unless (memcmp (ma.data, mb.data, ma.size) == 0,
      "memory %u of the batches differs", i);
  gst_memory_unmap (gst_buffer_peek_memory (b, i), &mb);
  gst_memory_unmap (gst_buffer_peek_memory (a, i), &ma);
}

/* Both paths give the same batches (pixels, labels, indices, order, sizes)
 * and the indices are @expected, in batches of @sizes (0-terminated). */
static void
check_slot_runs (const gchar * props, const gchar * script,
    const guint64 * expected, const guint * sizes, gboolean zero_copy)
{
  GstStructure *slot_stats, *copy_stats;
  GPtrArray *slots = run_slots (props, FALSE, script, &slot_stats);
  GPtrArray *copies = run_slots (props, TRUE, script, &copy_stats);
  guint64 in_place = 0, copied = 0, items = 0;
  guint i, k, at = 0;

  fail_unless_equals_int (slots->len, copies->len);
  for (i = 0; i < slots->len; i++) {
    GstBuffer *a = g_ptr_array_index (slots, i);
    GstBuffer *b = g_ptr_array_index (copies, i);
    GstCustomMeta *meta = gst_buffer_get_custom_meta (a,
        GST_SPDL_BATCH_META_NAME);
    const GValue *indices;

    fail_unless (sizes[i] != 0, "batch %u is one too many", i);
    assert_same_memory (a, b, 0);
    assert_same_memory (a, b, 1);
    fail_unless (meta != NULL);
    indices = gst_structure_get_value (gst_custom_meta_get_structure (meta),
        "indices");
    fail_unless_equals_int (gst_value_array_get_size (indices), sizes[i]);
    for (k = 0; k < sizes[i]; k++)
      fail_unless_equals_uint64 (g_value_get_uint64
          (gst_value_array_get_value (indices, k)), expected[at++]);
    meta = gst_buffer_get_custom_meta (b, GST_SPDL_BATCH_META_NAME);
    fail_unless (gst_structure_is_equal (gst_custom_meta_get_structure
            (meta), gst_custom_meta_get_structure (gst_buffer_get_custom_meta
                (a, GST_SPDL_BATCH_META_NAME))));
  }
  fail_unless_equals_int (sizes[i], 0);

  gst_structure_get_uint64 (slot_stats, "in-place", &in_place);
  gst_structure_get_uint64 (slot_stats, "copied", &copied);
  gst_structure_get_uint64 (slot_stats, "items-in", &items);
  fail_unless_equals_uint64 (in_place + copied, items);
  if (zero_copy)
    fail_unless (in_place > 0, "%s: nothing decoded in place (%"
        G_GUINT64_FORMAT " copied)", props, copied);
  else
    fail_unless_equals_uint64 (in_place, 0);
  gst_structure_get_uint64 (copy_stats, "in-place", &in_place);
  fail_unless_equals_uint64 (in_place, 0);
  gst_structure_free (slot_stats);
  gst_structure_free (copy_stats);
  g_ptr_array_unref (slots);
  g_ptr_array_unref (copies);
}

static const gchar *slot_props[] = {
  "layout=nhwc", "layout=nchw", "layout=nhwc dtype=float32",
  "layout=nchw dtype=float32 mean=<0.5> std=<0.25>",
};

/* A corrupt sample inside a batch, a short last batch, a second epoch. */
GST_START_TEST (test_slots_skips_and_epochs)
{
  /* epoch 0: 34 samples, 32 decodable; epoch 1: 9 */
  const gchar *script = "jjjjjxjjjjjjjjjjjjjjjjjxjjjjjjjjjjejjjjjjjjj";
  const guint sizes[] = { 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1, 0 };
  guint64 expected[64];
  guint i, n = 0, index = 0;

  for (i = 0; script[i]; i++) {
    if (script[i] == 'j')
      expected[n++] = index;
    index += script[i] != 'e';
  }
  check_slot_runs (slot_props[__i__], script, expected, sizes, __i__ < 2);
}

GST_END_TEST;

/* Two ranks: the skipped sample's slot is padded with a copy. */
GST_START_TEST (test_slots_padding)
{
  /* 40 samples announced, 39 decoded: the last batch gets a copy of its
   * own first sample */
  const gchar *script = "pjjjjjjjjxjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjje";
  const guint sizes[] = { 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0 };
  guint64 expected[40];
  guint i;

  for (i = 0; i < 39; i++)
    expected[i] = i < 8 ? i : i + 1;
  expected[39] = 37;
  check_slot_runs (slot_props[__i__], script, expected, sizes, __i__ < 2);
}

GST_END_TEST;

/* Two ranks, four epochs, a skipped sample in two: the padding is written
 * into the last batch while spdldecode already decodes the next epoch's
 * first samples into the slots after it. Both paths still agree. */
GST_START_TEST (test_slots_padding_then_next_epoch)
{
  const gchar *script = "pjxjjjjjjjje" "pjjjjjjjje" "pjjjjxjjjjje" "pjjjjjjjje";
  const guint sizes[] = { 4, 4, 2, 4, 4, 4, 4, 2, 4, 4, 0 };
  const guint64 expected[] = { 0, 2, 3, 4, 5, 6, 7, 8, 9, 9,
    10, 11, 12, 13, 14, 15, 16, 17,
    18, 19, 20, 21, 23, 24, 25, 26, 27, 27,
    28, 29, 30, 31, 32, 33, 34, 35
  };

  check_slot_runs (slot_props[__i__], script, expected, sizes, __i__ < 2);
}

GST_END_TEST;

/* A flush in the middle of an epoch drops the partial batch; later
 * batches line up with the slots again. */
GST_START_TEST (test_slots_flush)
{
  const gchar *script = "jjjjjjwfjjjjjjjjjxjjjjjjjjjjjjjjjjjjjje";
  const guint sizes[] = { 4, 4, 4, 4, 4, 4, 4, 4, 1, 0 };
  guint64 expected[33];
  guint i, n = 0;

  for (i = 0; i < 36; i++)
    if (i < 4 || (i >= 6 && i != 15))
      expected[n++] = i;
  fail_unless_equals_int (n, 33);
  check_slot_runs (slot_props[__i__], script, expected, sizes, __i__ < 2);
}

GST_END_TEST;

/* Aligned samples are decoded where they belong. Copied are only the
 * samples queued before spdldecode learnt about the slots (its 6 in
 * flight) and those until the slots line up again, which
 * takes longer when decoding is slow (sanitizers, a loaded machine): at
 * most a quarter of 320 samples, the rest decoded in place. */
#define ALIGNED_SAMPLES 320

GST_START_TEST (test_slots_no_copy_when_aligned)
{
  GstStructure *stats;
  gchar *script = g_strnfill (ALIGNED_SAMPLES, 'j');
  GPtrArray *batches = run_slots (__i__ ? "layout=nchw" : "", FALSE, script,
      &stats);
  guint64 in_place = 0, copied = 0;

  fail_unless_equals_int (batches->len, ALIGNED_SAMPLES / SLOT_BATCH);
  gst_structure_get_uint64 (stats, "in-place", &in_place);
  gst_structure_get_uint64 (stats, "copied", &copied);
  fail_unless (copied <= ALIGNED_SAMPLES / 4, "%" G_GUINT64_FORMAT " copied",
      copied);
  fail_unless_equals_uint64 (in_place + copied, ALIGNED_SAMPLES);
  g_free (script);
  gst_structure_free (stats);
  g_ptr_array_unref (batches);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Records: fields beside the images (docs/record.md) */

#define RECORD_FIELDS "cls:int:skip,txt:string:skip,meta.json:json:empty," \
  "emb.npy:npy:empty,score:float:skip,seg.png:label:skip,aux.jpg:image:skip"
static const gchar *record_names = "images,labels,cls,txt/values,"
    "txt/offsets,meta.json/values,meta.json/offsets,emb.npy/values,"
    "emb.npy/offsets,emb.npy/shapes,score,seg.png,aux.jpg";
enum
{ R_CLS = 2, R_TXT, R_TXT_OFF, R_JSON, R_JSON_OFF, R_NPY, R_NPY_OFF,
  R_NPY_SHAPES, R_SCORE, R_SEG, R_AUX, R_N
};

/* An .npy file of @n float32 or int64 values, shape (@rows, @n / @rows) */
static GBytes *
npy_bytes (gboolean int64, guint rows, guint n, gint64 first)
{
  gchar *header = g_strdup_printf ("{'descr': '%s', 'fortran_order': False, "
      "'shape': (%u, %u), }", int64 ? "<i8" : "<f4", rows, n / rows);
  gsize len = strlen (header) + 1, item = int64 ? 8 : 4, i;
  GByteArray *out = g_byte_array_new ();
  guint8 prefix[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0 };

  len += (64 - (10 + len) % 64) % 64;
  GST_WRITE_UINT16_LE (prefix + 8, len);
  g_byte_array_append (out, prefix, 10);
  g_byte_array_append (out, (const guint8 *) header, strlen (header));
  while (out->len < 10 + len - 1)
    g_byte_array_append (out, (const guint8 *) " ", 1);
  g_byte_array_append (out, (const guint8 *) "\n", 1);
  for (i = 0; i < n; i++) {
    gint64 v = first + i;
    gfloat f = v;
    g_byte_array_append (out, int64 ? (guint8 *) & v : (guint8 *) & f, item);
  }
  g_free (header);
  return g_byte_array_free_to_bytes (out);
}

/* A decoded picture: W x H of @format, byte p = @first + p */
static GstSample *
picture (const gchar * format, guint bpp, guint first)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, W * H * bpp, NULL);
  GstCaps *caps = gst_caps_new_simple ("video/x-raw", "format",
      G_TYPE_STRING, format, "width", G_TYPE_INT, W, "height", G_TYPE_INT,
      H, NULL);
  GstMapInfo map;
  GstSample *sample;
  guint p;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (p = 0; p < map.size; p++)
    map.data[p] = first + p;
  gst_buffer_unmap (buf, &map);
  sample = gst_sample_new (buf, caps, NULL, NULL);
  gst_buffer_unref (buf);
  gst_caps_unref (caps);
  return sample;
}

static const gchar *
caption (guint i)
{
  static const gchar *captions[] = { "a cat", "", "na\xc3\xafve \xe2\x98\x83",
    "a dog on a mat", "x"
  };
  return captions[i % G_N_ELEMENTS (captions)];
}

/* Sample @i with its fields as spdlsrc and spdldecode leave them: an
 * npy of (i % 2 + 1) x 2 values (sample 3's missing: the empty fill), a
 * label map and an image, and the geometry of its crop */
static GstBuffer *
record_sample (guint i, guint epoch, gboolean npy_int64, guint seg_width)
{
  gchar *path = g_strdup_printf ("s%u.jpg", i), *json;
  GstBuffer *buf = make_image_at (i, i * 10, epoch, path);
  GValue v[7] = { G_VALUE_INIT, G_VALUE_INIT, G_VALUE_INIT, G_VALUE_INIT,
    G_VALUE_INIT, G_VALUE_INIT, G_VALUE_INIT
  };
  GstSpdlSampleGeometry g = { i, 2 * i, 10, 5, i % 2, 40, 30 };
  GstSample *seg, *aux;
  guint k;

  g_value_init (&v[0], G_TYPE_INT64);
  g_value_set_int64 (&v[0], 1000 + i);
  g_value_init (&v[1], G_TYPE_STRING);
  g_value_set_string (&v[1], caption (i));
  json = g_strdup_printf ("{\"i\": %u}", i);
  g_value_init (&v[2], G_TYPE_STRING);
  g_value_take_string (&v[2], json);
  g_value_init (&v[3], G_TYPE_BYTES);
  g_value_take_boxed (&v[3], i == 3 ? g_bytes_new (NULL, 0) :
      npy_bytes (npy_int64, i % 2 + 1, (i % 2 + 1) * 2, 10 * i));
  g_value_init (&v[4], G_TYPE_DOUBLE);
  g_value_set_double (&v[4], i + 0.5);
  if (seg_width == W) {
    seg = picture ("GRAY8", 1, 8 * i);
  } else {
    GstBuffer *b = gst_buffer_new_allocate (NULL, seg_width * H, NULL);
    GstCaps *caps = gst_caps_new_simple ("video/x-raw", "format",
        G_TYPE_STRING, "GRAY8", "width", G_TYPE_INT, seg_width, "height",
        G_TYPE_INT, H, NULL);
    seg = gst_sample_new (b, caps, NULL, NULL);
    gst_buffer_unref (b);
    gst_caps_unref (caps);
  }
  aux = picture ("RGB", 3, 100 + i);
  g_value_init (&v[5], GST_TYPE_SAMPLE);
  g_value_take_boxed (&v[5], seg);
  g_value_init (&v[6], GST_TYPE_SAMPLE);
  g_value_take_boxed (&v[6], aux);
  gst_spdl_buffer_set_record (buf, v, 7);
  gst_spdl_buffer_set_sample_geometry (buf, &g);
  for (k = 0; k < 7; k++)
    g_value_unset (&v[k]);
  g_free (path);
  return buf;
}

static GstHarness *
record_harness (const gchar * props)
{
  gchar *desc = g_strdup_printf ("spdlbatch %s", props);
  GstHarness *h = gst_harness_new_parse (desc);

  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=4,height=2,"
      "framerate=0/1,fields=(string)\"" RECORD_FIELDS "\"");
  g_free (desc);
  return h;
}

static void
map_tensor (GstBuffer * batch, guint i, GstMapInfo * map)
{
  fail_unless (gst_memory_map (gst_buffer_peek_memory (batch, i), map,
          GST_MAP_READ));
}

static void
unmap_tensor (GstBuffer * batch, guint i, GstMapInfo * map)
{
  gst_memory_unmap (gst_buffer_peek_memory (batch, i), map);
}

static gdouble
array_double (const GValue * array, guint i)
{
  return g_value_get_double (gst_value_array_get_value (array, i));
}

/* The batch's fields are those of @samples (sample numbers), in order */
static void
check_record_batch (GstHarness * h, GstBuffer * batch, const guint * samples,
    guint n, gboolean nchw)
{
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  GstStructure *st = gst_caps_get_structure (caps, 0), *meta;
  GstSpdlTensorInfo t[GST_SPDL_TENSOR_MAX];
  GstMapInfo m, o, sh;
  const GValue *crop, *flipped, *size;
  gsize at;
  guint s, k, p;

  fail_unless_equals_int (gst_spdl_tensors_from_caps (caps, t,
          GST_SPDL_TENSOR_MAX), R_N);
  fail_unless_equals_string (gst_structure_get_string (st, "names"),
      record_names);
  fail_unless_equals_string (gst_structure_get_string (st, "fields"),
      RECORD_FIELDS);
  fail_unless_equals_int (gst_buffer_n_memory (batch), R_N);
  /* fixed tensors: [B]; ragged values: 0 in the caps */
  fail_unless_equals_int (t[R_CLS].dtype, GST_SPDL_DTYPE_INT64);
  fail_unless_equals_int (t[R_CLS].shape[0], n);
  fail_unless_equals_int (t[R_SCORE].dtype, GST_SPDL_DTYPE_FLOAT64);
  fail_unless_equals_int (t[R_TXT].shape[0], 0);
  fail_unless_equals_int (t[R_TXT].dtype, GST_SPDL_DTYPE_UINT8);
  fail_unless_equals_int (t[R_TXT_OFF].shape[0], n + 1);
  fail_unless_equals_int (t[R_NPY].shape[0], 0);
  fail_unless_equals_int (t[R_NPY].dtype, GST_SPDL_DTYPE_FLOAT32);
  fail_unless_equals_int (t[R_NPY_SHAPES].n_dims, 2);
  fail_unless_equals_int (t[R_NPY_SHAPES].shape[1], 8);
  fail_unless_equals_int (t[R_SEG].n_dims, 3);
  fail_unless_equals_int (t[R_SEG].shape[1], H);
  fail_unless_equals_int (t[R_SEG].shape[2], W);
  fail_unless_equals_int (t[R_AUX].shape[nchw ? 1 : 3], 3);
  fail_unless_equals_int (t[R_AUX].shape[nchw ? 3 : 2], W);
  gst_caps_unref (caps);

  map_tensor (batch, R_CLS, &m);
  fail_unless_equals_int (m.size, n * 8);
  for (s = 0; s < n; s++)
    fail_unless_equals_int (((gint64 *) m.data)[s], 1000 + samples[s]);
  unmap_tensor (batch, R_CLS, &m);
  map_tensor (batch, R_SCORE, &m);
  for (s = 0; s < n; s++)
    fail_unless_equals_float (((gdouble *) m.data)[s], samples[s] + 0.5);
  unmap_tensor (batch, R_SCORE, &m);

  /* strings: values[offsets[i]:offsets[i+1]], never cut or padded */
  map_tensor (batch, R_TXT, &m);
  map_tensor (batch, R_TXT_OFF, &o);
  fail_unless_equals_int (o.size, (n + 1) * 8);
  fail_unless_equals_int (((gint64 *) o.data)[0], 0);
  fail_unless_equals_int (((gint64 *) o.data)[n], m.size);
  for (s = 0; s < n; s++) {
    gint64 a = ((gint64 *) o.data)[s], b = ((gint64 *) o.data)[s + 1];
    gchar *text = g_strndup ((const gchar *) m.data + a, b - a);
    fail_unless_equals_string (text, caption (samples[s]));
    g_free (text);
  }
  unmap_tensor (batch, R_TXT, &m);
  unmap_tensor (batch, R_TXT_OFF, &o);
  map_tensor (batch, R_JSON, &m);
  map_tensor (batch, R_JSON_OFF, &o);
  for (s = 0; s < n; s++) {
    gint64 a = ((gint64 *) o.data)[s], b = ((gint64 *) o.data)[s + 1];
    gchar *text = g_strndup ((const gchar *) m.data + a, b - a);
    gchar *want = g_strdup_printf ("{\"i\": %u}", samples[s]);
    fail_unless_equals_string (text, want);
    g_free (text);
    g_free (want);
  }
  unmap_tensor (batch, R_JSON, &m);
  unmap_tensor (batch, R_JSON_OFF, &o);

  /* npy: the arrays' values one after the other, offsets in elements,
   * shapes padded with -1; sample 3's missing one is of shape (0,) */
  map_tensor (batch, R_NPY, &m);
  map_tensor (batch, R_NPY_OFF, &o);
  map_tensor (batch, R_NPY_SHAPES, &sh);
  fail_unless_equals_int (sh.size, n * 8 * 8);
  at = 0;
  for (s = 0; s < n; s++) {
    guint i = samples[s], rows = i == 3 ? 0 : i % 2 + 1;
    const gint64 *shape = (const gint64 *) sh.data + s * 8;

    fail_unless_equals_int (((gint64 *) o.data)[s], at);
    fail_unless_equals_int (shape[0], rows);
    fail_unless_equals_int (shape[1], rows ? 2 : -1);
    for (k = 2; k < 8; k++)
      fail_unless_equals_int (shape[k], -1);
    for (k = 0; k < rows * 2; k++)
      fail_unless_equals_float (((gfloat *) m.data)[at + k], 10 * i + k);
    at += rows * 2;
  }
  fail_unless_equals_int (((gint64 *) o.data)[n], at);
  fail_unless_equals_int (m.size, at * 4);
  unmap_tensor (batch, R_NPY, &m);
  unmap_tensor (batch, R_NPY_OFF, &o);
  unmap_tensor (batch, R_NPY_SHAPES, &sh);

  /* the label map as it is, the image in the batch's layout */
  map_tensor (batch, R_SEG, &m);
  fail_unless_equals_int (m.size, n * W * H);
  for (s = 0; s < n; s++)
    for (p = 0; p < W * H; p++)
      fail_unless_equals_int (m.data[s * W * H + p], 8 * samples[s] + p);
  unmap_tensor (batch, R_SEG, &m);
  map_tensor (batch, R_AUX, &m);
  fail_unless_equals_int (m.size, n * W * H * 3);
  for (s = 0; s < n; s++)
    for (p = 0; p < W * H; p++)
      for (k = 0; k < 3; k++)
        fail_unless_equals_int (m.data[nchw ? (s * 3 + k) * W * H + p :
                (s * W * H + p) * 3 + k], (100 + samples[s] + p * 3 + k)
            & 0xff);
  unmap_tensor (batch, R_AUX, &m);

  /* each slot's geometry */
  meta = gst_custom_meta_get_structure (gst_buffer_get_custom_meta (batch,
          GST_SPDL_BATCH_META_NAME));
  crop = gst_structure_get_value (meta, "crop");
  flipped = gst_structure_get_value (meta, "flipped");
  size = gst_structure_get_value (meta, "source-size");
  fail_unless (crop && flipped && size);
  fail_unless_equals_int (gst_value_array_get_size (crop), 4 * n);
  fail_unless_equals_int (gst_value_array_get_size (flipped), n);
  fail_unless_equals_int (gst_value_array_get_size (size), 2 * n);
  for (s = 0; s < n; s++) {
    fail_unless_equals_float (array_double (crop, 4 * s), samples[s]);
    fail_unless_equals_float (array_double (crop, 4 * s + 1), 2 * samples[s]);
    fail_unless_equals_float (array_double (crop, 4 * s + 2), 10);
    fail_unless_equals_float (array_double (crop, 4 * s + 3), 5);
    fail_unless_equals_int (g_value_get_boolean (gst_value_array_get_value
            (flipped, s)), samples[s] % 2);
    fail_unless_equals_int (g_value_get_uint (gst_value_array_get_value
            (size, 2 * s)), 40);
    fail_unless_equals_int (g_value_get_uint (gst_value_array_get_value
            (size, 2 * s + 1)), 30);
  }
}

/* Every kind of field in the batch, a short last batch among them */
GST_START_TEST (test_record_fields)
{
  gboolean nchw = __i__ == 1;
  GstHarness *h = record_harness (nchw ? "batch-size=3 layout=nchw" :
      "batch-size=3");
  const guint first[] = { 0, 1, 2 }, last[] = { 3, 4 };
  GstBuffer *b, *media;
  guint i;

  for (i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, record_sample (i, 0, FALSE,
                W)), GST_FLOW_OK);
  b = gst_harness_pull (h);
  check_record_batch (h, b, first, 3, nchw);
  /* the images and labels as without fields */
  media = gst_buffer_new ();
  gst_buffer_copy_into (media, b, GST_BUFFER_COPY_METADATA, 0, -1);
  for (i = 0; i < 2; i++)
    gst_buffer_append_memory (media, gst_memory_ref (gst_buffer_peek_memory
            (b, i)));
  check_batch (NULL, media, 0, 3, nchw);
  gst_buffer_unref (media);
  /* what the example application prints of it */
  {
    GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
    GstSample *sample = gst_sample_new (b, caps, NULL, NULL);
    gchar *text = spdl_example_describe_batch (sample, NULL);
    const gchar *image = nchw ? "uint8[3x2x4]" : "uint8[2x4x3]";
    gchar *expected = g_strdup_printf ("sample 100 label 0: cls=1000 "
        "txt=\"a cat\" meta.json=\"{\"i\": 0}\" emb.npy=float32(1,2) "
        "score=0.5 seg.png=uint8[2x4] aux.jpg=%s\n"
        "sample 101 label 10: cls=1001 txt=\"\" meta.json=\"{\"i\": 1}\" "
        "emb.npy=float32(2,2) score=1.5 seg.png=uint8[2x4] aux.jpg=%s\n"
        "sample 102 label 20: cls=1002 txt=\"na\xc3\xafve \xe2\x98\x83\" "
        "meta.json=\"{\"i\": 2}\" emb.npy=float32(1,2) score=2.5 "
        "seg.png=uint8[2x4] aux.jpg=%s\n", image, image, image);

    fail_unless_equals_string (text, expected);
    g_free (text);
    g_free (expected);
    gst_sample_unref (sample);
    gst_caps_unref (caps);
  }
  gst_buffer_unref (b);
  for (i = 3; i < 5; i++)
    fail_unless_equals_int (gst_harness_push (h, record_sample (i, 0, FALSE,
                W)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  b = gst_harness_pull (h);
  check_record_batch (h, b, last, 2, nchw);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Two ranks: the slots of skipped samples are copies, fields and all,
 * from the batch's own samples or from the last full batch's */
GST_START_TEST (test_record_fields_padded)
{
  GstHarness *h = record_harness ("batch-size=2");
  const guint expected[][2] = { {0, 1}, {2, 3}, {2, 3}, {0, 1}, {2, 2} };
  guint i, k, epoch;

  /* epoch 0: 6 announced, 4 arrive; epoch 1: 4 announced, 3 arrive */
  for (epoch = 0; epoch < 2; epoch++) {
    guint announced = epoch ? 4 : 6, arrive = epoch ? 3 : 4;

    fail_unless (gst_harness_push_event (h,
            gst_spdl_epoch_start_event_new (epoch, announced, 0, 2, 0)));
    for (i = 0; i < arrive; i++)
      fail_unless_equals_int (gst_harness_push (h, record_sample (i, epoch,
                  FALSE, W)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h,
            gst_spdl_epoch_end_event_new (epoch, arrive)));
  }
  for (k = 0; k < G_N_ELEMENTS (expected); k++) {
    GstBuffer *b = gst_harness_pull (h);

    fail_unless (b != NULL);
    check_record_batch (h, b, expected[k], 2, FALSE);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* pad-multiple with fields and a short epoch: the label field of a batch
 * made only of copies (of the last full batch) is padded as its images,
 * top-left with zeros */
GST_START_TEST (test_record_fields_pad_multiple_short_epoch)
{
  GstHarness *h = record_harness ("batch-size=2 pad-multiple=4");
  GstBuffer *b[2];
  GstMapInfo seg;
  guint k, s, y, x;

  fail_unless (gst_harness_push_event (h,
          gst_spdl_epoch_start_event_new (0, 4, 0, 2, 0)));
  for (s = 0; s < 2; s++)
    fail_unless_equals_int (gst_harness_push (h, record_sample (s, 0, FALSE,
                W)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_spdl_epoch_end_event_new (0,
              2)));
  for (k = 0; k < 2; k++) {
    b[k] = gst_harness_pull (h);
    fail_unless (b[k] != NULL);
    /* images, labels, image-sizes, padding-mask, then the fields: seg.png
     * is the 10th tensor of the record */
    fail_unless_equals_int (gst_buffer_n_memory (b[k]), 15);
    map_tensor (b[k], 13, &seg);
    fail_unless_equals_int (seg.size, 2 * 4 * 4);
    for (s = 0; s < 2; s++)
      for (y = 0; y < 4; y++)
        for (x = 0; x < 4; x++)
          fail_unless_equals_int (seg.data[(s * 4 + y) * 4 + x],
              y < H ? 8 * s + y * W + x : 0);
    gst_memory_unmap (gst_buffer_peek_memory (b[k], 13), &seg);
  }
  gst_buffer_unref (b[0]);
  gst_buffer_unref (b[1]);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The message of the error on @bus, which must be there */
static gchar *
bus_error (GstBus * bus)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  GError *err = NULL;
  gchar *message;

  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  message = g_strdup (err->message);
  g_error_free (err);
  gst_message_unref (msg);
  return message;
}

static gchar *
record_error (gboolean npy_int64, guint seg_width)
{
  GstHarness *h = record_harness ("batch-size=4");
  GstBus *bus = gst_bus_new ();
  gchar *message;

  gst_element_set_bus (h->element, bus);
  fail_unless_equals_int (gst_harness_push (h, record_sample (0, 0, FALSE,
              W)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_push (h, record_sample (1, 0,
              npy_int64, seg_width)), GST_FLOW_ERROR);
  message = bus_error (bus);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  return message;
}

/* npy dtypes or label sizes that differ within a batch: an error naming
 * both samples */
GST_START_TEST (test_record_mismatch_names_both)
{
  gchar *message = record_error (TRUE, W);

  fail_unless (strstr (message, "float32 in s0.jpg and int64 in s1.jpg"),
      "%s", message);
  fail_unless (strstr (message, "emb.npy"), "%s", message);
  g_free (message);
  message = record_error (FALSE, 2 * W);
  fail_unless (strstr (message, "4x2 GRAY8 in s0.jpg and 8x2 GRAY8 in "
          "s1.jpg"), "%s", message);
  g_free (message);
}

GST_END_TEST;

/* Audio and video clips carry fields too: the same tensors after theirs */
GST_START_TEST (test_record_fields_clips)
{
  gboolean video = __i__ == 1;
  GstHarness *h = gst_harness_new_parse ("spdlbatch batch-size=2");
  const gchar *captions[] = { "one", "", "three" };
  GstCaps *caps;
  GstSpdlTensorInfo t[GST_SPDL_TENSOR_MAX];
  guint i, k, fields_at = video ? 3 : 4;
  /* float32 [1, 4] audio; uint8 [T=2, 3, 2, 2] clips */
  gsize bytes = video ? 24 : 4 * sizeof (gfloat);

  gst_harness_set_src_caps_str (h, video ? "other/tensors,format=static,"
      "num_tensors=1,dimensions=(string)2:2:3:2,types=uint8,layout=tchw,"
      "framerate=0/1,fields=(string)\"txt:string:skip,cls:int:skip\"" :
      "other/tensors,format=static,"
      "num_tensors=1,dimensions=(string)4:1,types=float32,framerate=0/1,"
      "fields=(string)\"txt:string:skip,cls:int:skip\"");
  for (i = 0; i < 3; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, bytes, NULL);
    GValue v[2] = { G_VALUE_INIT, G_VALUE_INIT };

    gst_buffer_memset (buf, 0, 0, bytes);
    gst_spdl_buffer_add_sample_meta (buf, i, i, 0, "a.wav");
    g_value_init (&v[0], G_TYPE_STRING);
    g_value_set_string (&v[0], captions[i]);
    g_value_init (&v[1], G_TYPE_INT64);
    g_value_set_int64 (&v[1], 7 * i);
    gst_spdl_buffer_set_record (buf, v, 2);
    g_value_unset (&v[0]);
    g_value_unset (&v[1]);
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (k = 0; k < 2; k++) {
    GstBuffer *b = gst_harness_pull (h);
    guint n = k == 0 ? 2 : 1, s;
    GstMapInfo m, o;

    caps = gst_pad_get_current_caps (h->sinkpad);
    fail_unless_equals_int (gst_spdl_tensors_from_caps (caps, t,
            GST_SPDL_TENSOR_MAX), fields_at + 3);
    fail_unless_equals_string (gst_structure_get_string
        (gst_caps_get_structure (caps, 0), "names"), video ?
        "clips,labels,pts,txt/values,txt/offsets,cls" :
        "audio,labels,start,lengths,txt/values,txt/offsets,cls");
    gst_caps_unref (caps);
    fail_unless_equals_int (gst_buffer_n_memory (b), fields_at + 3);
    map_tensor (b, fields_at, &m);
    map_tensor (b, fields_at + 1, &o);
    for (s = 0; s < n; s++) {
      gint64 a = ((gint64 *) o.data)[s], e = ((gint64 *) o.data)[s + 1];
      gchar *text = g_strndup ((const gchar *) m.data + a, e - a);
      fail_unless_equals_string (text, captions[2 * k + s]);
      g_free (text);
    }
    unmap_tensor (b, fields_at, &m);
    unmap_tensor (b, fields_at + 1, &o);
    map_tensor (b, fields_at + 2, &m);
    for (s = 0; s < n; s++)
      fail_unless_equals_int (((gint64 *) m.data)[s], 7 * (2 * k + s));
    unmap_tensor (b, fields_at + 2, &m);
    /* no geometry on these samples */
    fail_if (gst_structure_has_field (gst_custom_meta_get_structure
            (gst_buffer_get_custom_meta (b, GST_SPDL_BATCH_META_NAME)),
            "crop"));
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* More fields than a GstBuffer holds memories: refused with the count,
 * never merged into one memory */
/* spdlbatch @desc given images 4x2 with @fields: the error that holds
 * @expected, or none when @expected is NULL */
static void
check_tensor_count (const gchar * desc, const gchar * fields,
    const gchar * expected)
{
  GstHarness *h = gst_harness_new_parse (desc);
  GstBus *bus = gst_bus_new ();
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGB,width=4,height=2,"
      "framerate=0/1,fields=(string)\"%s\"", fields);

  gst_element_set_bus (h->element, bus);
  gst_harness_set_src_caps_str (h, caps);
  if (expected) {
    gchar *message = bus_error (bus);

    fail_unless (strstr (message, expected), "%s", message);
    g_free (message);
  } else {
    fail_if (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR));
  }
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  g_free (caps);
}

GST_START_TEST (test_record_too_many_tensors)
{
  check_tensor_count ("spdlbatch batch-size=2",
      "a.npy,b.npy,c.npy,d.npy,e.npy", "need 15 tensors beside the media's "
      "2: a batch holds at most 16");
}

GST_END_TEST;

/* Padded images take 4 tensors: 13 of fields fit without padding, not
 * with it */
GST_START_TEST (test_pad_multiple_counts_its_tensors)
{
  const gchar *fields = "a.npy,b.npy,c.npy,d.npy,cls";

  check_tensor_count ("spdlbatch batch-size=2", fields, NULL);
  check_tensor_count ("spdlbatch batch-size=2 pad-multiple=8", fields,
      "need 13 tensors beside the media's 4: a batch holds at most 16");
}

GST_END_TEST;

/* The fields' tensors come from downstream's allocator and are reused
 * once their batch comes back: a pinned allocator is not asked per batch;
 * the pool takes its batches back whole */
GST_START_TEST (test_record_fields_memory_reused)
{
  GstHarness *h = record_harness ("batch-size=2");
  GstAllocator *shm = propose_test_allocator (h);
  const guint samples[] = { 0, 1 };
  guint i, t, after_first = 0;

  for (i = 0; i < 20; i++) {
    GstBuffer *b;

    fail_unless_equals_int (gst_harness_push (h, record_sample (0, 0, FALSE,
                W)), GST_FLOW_OK);
    fail_unless_equals_int (gst_harness_push (h, record_sample (1, 0, FALSE,
                W)), GST_FLOW_OK);
    b = gst_harness_pull (h);
    check_record_batch (h, b, samples, 2, FALSE);
    for (t = 0; t < gst_buffer_n_memory (b); t++)
      fail_unless (gst_buffer_peek_memory (b, t)->allocator == shm);
    gst_buffer_unref (b);
    if (i == 0)
      after_first = ((TestAllocator *) shm)->allocations;
  }
  /* 19 more batches allocated nothing */
  fail_unless_equals_int (((TestAllocator *) shm)->allocations, after_first);
  gst_object_unref (shm);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* spdlappsink names the tensors as the caps do, and the fields' values
 * tensors by the memory they have */
GST_START_TEST (test_record_fields_appsink_names)
{
  GstElement *pipeline = gst_parse_launch ("appsrc name=src format=time ! "
      "spdlbatch batch-size=2 ! spdlappsink name=sink", NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=RGB,width=4,"
      "height=2,framerate=0/1,fields=(string)\"" RECORD_FIELDS "\"");
  GstStructure *tensors = NULL;
  GstSample *sample = NULL;
  gchar **names = g_strsplit (record_names, ",", -1);
  guint i;

  g_object_set (src, "caps", caps, NULL);
  gst_caps_unref (caps);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  for (i = 0; i < 2; i++)
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
            record_sample (i, 0, FALSE, W)), GST_FLOW_OK);
  g_signal_emit_by_name (sink, "pull-batch", &sample);
  fail_unless (sample != NULL);
  g_object_get (sink, "tensors", &tensors, NULL);
  fail_unless (tensors != NULL);
  for (i = 0; names[i]; i++) {
    gchar *key = g_strdup_printf ("name-%u", i);

    fail_unless_equals_string (gst_structure_get_string (tensors, key),
        names[i]);
    g_free (key);
  }
  fail_unless_equals_string (gst_structure_get_string (tensors, "shape-3"),
      "0");
  fail_unless_equals_string (gst_structure_get_string (tensors, "shape-2"),
      "2");
  gst_structure_free (tensors);
  gst_sample_unref (sample);
  g_strfreev (names);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* -- pad-multiple: images of different sizes in one batch -------------- */

/* never 0: padding is */
static guint8
sized_pixel (guint sample, guint y, guint x, guint c)
{
  return 1 + (sample * 50 + y * 7 + x * 3 + c) % 250;
}

static GstBuffer *
make_sized_image (guint sample, guint w, guint h, guint epoch)
{
  return make_rgb (sample, w, h, sample * 10, epoch, "x.jpg", sized_pixel);
}

static void
push_sized (GstHarness * h, guint sample, guint w, guint h_, guint epoch)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGB,width=%u,height=%u,"
      "framerate=0/1", w, h_);

  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);
  fail_unless_equals_int (gst_harness_push (h, make_sized_image (sample, w,
              h_, epoch)), GST_FLOW_OK);
}

/* @batch: samples @from.. of sizes @ws x @hs, padded to @pw x @ph; the
 * caps of the harness' sink pad describe it */
static void
check_padded_batch (GstHarness * h, GstBuffer * batch, guint from, guint n,
    const guint * ws, const guint * hs, guint pw, guint ph, gboolean nchw)
{
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  GstSpdlTensorInfo t[4];
  GstMapInfo img, lab, sizes, mask;
  const gchar *names;
  guint s, x, y, c;

  fail_unless_equals_int (gst_spdl_tensors_from_caps (caps, t, 4), 4);
  names = gst_structure_get_string (gst_caps_get_structure (caps, 0),
      "names");
  fail_unless_equals_string (names, "images,labels,image-sizes,padding-mask");
  fail_unless_equals_int (t[0].shape[0], n);
  fail_unless_equals_int (t[0].shape[nchw ? 2 : 1], ph);
  fail_unless_equals_int (t[0].shape[nchw ? 3 : 2], pw);
  fail_unless_equals_int (t[2].dtype, GST_SPDL_DTYPE_INT64);
  fail_unless_equals_int (t[2].shape[1], 2);
  fail_unless_equals_int (t[3].dtype, GST_SPDL_DTYPE_UINT8);
  fail_unless_equals_int (t[3].shape[1], ph);
  fail_unless_equals_int (t[3].shape[2], pw);
  gst_caps_unref (caps);
  fail_unless_equals_int (gst_buffer_n_memory (batch), 4);
  gst_memory_map (gst_buffer_peek_memory (batch, 0), &img, GST_MAP_READ);
  gst_memory_map (gst_buffer_peek_memory (batch, 1), &lab, GST_MAP_READ);
  gst_memory_map (gst_buffer_peek_memory (batch, 2), &sizes, GST_MAP_READ);
  gst_memory_map (gst_buffer_peek_memory (batch, 3), &mask, GST_MAP_READ);
  fail_unless_equals_int (img.size, n * pw * ph * 3);
  fail_unless_equals_int (sizes.size, n * 16);
  fail_unless_equals_int (mask.size, n * pw * ph);
  for (s = 0; s < n; s++) {
    guint w = ws[s], hh = hs[s];

    fail_unless_equals_int (((gint64 *) lab.data)[s], (from + s) * 10);
    fail_unless_equals_int (((gint64 *) sizes.data)[2 * s], hh);
    fail_unless_equals_int (((gint64 *) sizes.data)[2 * s + 1], w);
    for (y = 0; y < ph; y++)
      for (x = 0; x < pw; x++) {
        gboolean in = x < w && y < hh;

        fail_unless_equals_int (mask.data[(s * ph + y) * pw + x], !in);
        for (c = 0; c < 3; c++) {
          gsize at = nchw ? ((s * 3 + c) * ph + y) * pw + x :
              ((s * ph + y) * pw + x) * 3 + c;
          fail_unless_equals_int (img.data[at], in ? sized_pixel (from + s,
                  y, x, c) : 0);
        }
      }
  }
  gst_memory_unmap (gst_buffer_peek_memory (batch, 0), &img);
  gst_memory_unmap (gst_buffer_peek_memory (batch, 1), &lab);
  gst_memory_unmap (gst_buffer_peek_memory (batch, 2), &sizes);
  gst_memory_unmap (gst_buffer_peek_memory (batch, 3), &mask);
}

/* Images of three sizes in one batch, then a batch of a larger padded
 * size (the pool grows), then a smaller one; both layouts */
GST_START_TEST (test_pad_multiple_mixed_sizes)
{
  gboolean nchw = __i__ == 1;
  GstHarness *h = batch_harness (nchw ? "batch-size=3 pad-multiple=4 "
      "layout=nchw" : "batch-size=3 pad-multiple=4");
  const guint w0[] = { 5, 3, 8 }, h0[] = { 2, 6, 3 };
  const guint w1[] = { 13, 1, 2 }, h1[] = { 1, 9, 2 };
  const guint w2[] = { 2, 3 }, h2[] = { 2, 1 };
  GstBuffer *b;
  guint i;

  for (i = 0; i < 3; i++)
    push_sized (h, i, w0[i], h0[i], 0);
  b = gst_harness_pull (h);
  check_padded_batch (h, b, 0, 3, w0, h0, 8, 8, nchw);
  gst_buffer_unref (b);
  for (i = 0; i < 3; i++)
    push_sized (h, 3 + i, w1[i], h1[i], 0);
  b = gst_harness_pull (h);
  check_padded_batch (h, b, 3, 3, w1, h1, 16, 12, nchw);
  gst_buffer_unref (b);
  for (i = 0; i < 2; i++)
    push_sized (h, 6 + i, w2[i], h2[i], 0);
  gst_harness_push_event (h, gst_spdl_epoch_end_event_new (0, 8));
  b = gst_harness_pull (h);
  check_padded_batch (h, b, 6, 2, w2, h2, 4, 4, nchw);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Two ranks: an epoch short of one sample pads its last batch with a copy
 * of the batch's first image, its own size kept */
GST_START_TEST (test_pad_multiple_short_epoch)
{
  GstHarness *h = batch_harness ("batch-size=2 pad-multiple=4");
  const guint ws[] = { 5, 3 }, hs[] = { 2, 6 };
  GstBuffer *b;
  GstCustomMeta *meta;
  guint padded = 0;

  gst_harness_push_event (h, gst_spdl_epoch_start_event_new (0, 4, 0, 2, 0));
  push_sized (h, 0, 5, 2, 0);
  push_sized (h, 1, 3, 6, 0);
  b = gst_harness_pull (h);
  check_padded_batch (h, b, 0, 2, ws, hs, 8, 8, FALSE);
  gst_buffer_unref (b);
  push_sized (h, 2, 7, 1, 0);
  gst_harness_push_event (h, gst_spdl_epoch_end_event_new (0, 3));
  b = gst_harness_pull (h);
  /* sample 2 twice, each with its label and size; 7x1 padded to 8x4 */
  {
    GstMapInfo lab, sizes, mask;
    guint s;

    gst_memory_map (gst_buffer_peek_memory (b, 1), &lab, GST_MAP_READ);
    gst_memory_map (gst_buffer_peek_memory (b, 2), &sizes, GST_MAP_READ);
    gst_memory_map (gst_buffer_peek_memory (b, 3), &mask, GST_MAP_READ);
    fail_unless_equals_int (mask.size, 2 * 8 * 4);
    for (s = 0; s < 2; s++) {
      fail_unless_equals_int (((gint64 *) lab.data)[s], 20);
      fail_unless_equals_int (((gint64 *) sizes.data)[2 * s], 1);
      fail_unless_equals_int (((gint64 *) sizes.data)[2 * s + 1], 7);
      fail_unless_equals_int (mask.data[s * 32 + 6], 0);
      fail_unless_equals_int (mask.data[s * 32 + 7], 1);
      fail_unless_equals_int (mask.data[s * 32 + 8], 1);
    }
    gst_memory_unmap (gst_buffer_peek_memory (b, 1), &lab);
    gst_memory_unmap (gst_buffer_peek_memory (b, 2), &sizes);
    gst_memory_unmap (gst_buffer_peek_memory (b, 3), &mask);
  }
  meta = gst_buffer_get_custom_meta (b, GST_SPDL_BATCH_META_NAME);
  fail_unless (meta != NULL);
  fail_unless (gst_structure_get_uint (gst_custom_meta_get_structure (meta),
          "padded", &padded));
  fail_unless_equals_int (padded, 1);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
spdlbatch_suite (void)
{
  Suite *s = suite_create ("spdlbatch");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_nhwc_slots_labels_partial);
  tcase_add_test (tc, test_resume_state);
  tcase_add_test (tc, test_equal_batches_per_rank);
  tcase_add_test (tc, test_caps_change_same_shape);
  tcase_add_test (tc, test_huge_batch_refused);
  tcase_add_test (tc, test_nchw_layout);
  tcase_add_test (tc, test_drop_last_and_epochs);
  tcase_add_test (tc, test_cuts_at_src_batches);
  tcase_add_test (tc, test_src_batches_larger_than_batch_size);
  tcase_add_test (tc, test_allocation_from_downstream);
  tcase_add_test (tc, test_appsink_batches_and_epochs);
  tcase_add_test (tc, test_normalized_dtypes);
  tcase_add_test (tc, test_normalize_row_matches_scalar);
  tcase_add_test (tc, test_deinterleave_rgb_row);
  tcase_add_test (tc, test_half_conversions_round_to_nearest_even);
  tcase_add_test (tc, test_mean_needs_float_dtype);
  tcase_add_loop_test (tc, test_slots_skips_and_epochs, 0,
      G_N_ELEMENTS (slot_props));
  tcase_add_loop_test (tc, test_slots_padding, 0, G_N_ELEMENTS (slot_props));
  tcase_add_loop_test (tc, test_slots_padding_then_next_epoch, 0,
      G_N_ELEMENTS (slot_props));
  tcase_add_loop_test (tc, test_slots_flush, 0, G_N_ELEMENTS (slot_props));
  tcase_add_loop_test (tc, test_slots_no_copy_when_aligned, 0, 2);
  tcase_add_loop_test (tc, test_record_fields, 0, 2);
  tcase_add_test (tc, test_record_fields_padded);
  tcase_add_test (tc, test_record_mismatch_names_both);
  tcase_add_loop_test (tc, test_record_fields_clips, 0, 2);
  tcase_add_test (tc, test_record_too_many_tensors);
  tcase_add_test (tc, test_record_fields_memory_reused);
  tcase_add_test (tc, test_record_fields_appsink_names);
  tcase_add_loop_test (tc, test_pad_multiple_mixed_sizes, 0, 2);
  tcase_add_test (tc, test_pad_multiple_short_epoch);
  tcase_add_test (tc, test_pad_multiple_counts_its_tensors);
  tcase_add_test (tc, test_record_fields_pad_multiple_short_epoch);
  return s;
}

SPDL_CHECK_MAIN (spdlbatch);
