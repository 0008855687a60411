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

#include "spdltestutil.h"
#include "gstspdlmeta.h"
#include "gstspdltensor.h"
#include "gstspdlnormalize.h"

#include <math.h>

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

/* An RGB W x H image whose bytes encode (sample, y, x, channel). */
static GstBuffer *
make_image (guint sample, gint label, guint epoch)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_ROUND_UP_4 (W * 3) * H,
      NULL);
  GstMapInfo map;
  guint x, y, c;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      for (c = 0; c < 3; c++)
        map.data[y * GST_ROUND_UP_4 (W * 3) + x * 3 + c] =
            sample * 32 + y * 12 + x * 3 + c;
  gst_buffer_unmap (buf, &map);
  gst_spdl_buffer_add_sample_meta (buf, 100 + sample, label, epoch, "x.jpg");
  return buf;
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

GST_START_TEST (test_allocation_from_downstream)
{
  GstHarness *h = batch_harness ("batch-size=2");
  GstAllocator *shm = g_object_new (test_allocator_get_type (), NULL);
  GstAllocationParams params;
  GHashTable *seen = g_hash_table_new (NULL, NULL);
  guint i;

  gst_object_ref_sink (shm);
  gst_allocation_params_init (&params);
  gst_harness_set_propose_allocator (h, gst_object_ref (shm), &params);
  /* caps again so that the ALLOCATION query sees the proposal */
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=4,height=2,"
      "framerate=0/1");
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
  guint32 bits;

  /* a bit pattern every 4099 (prime: all low-bit patterns come up), both
   * signs, from zero through subnormals and normals past half's overflow */
  for (bits = 0; bits < 0x7f800000u; bits += 4099) {
    _Float16 ref;
    guint16 ref_bits;
    v.u = bits;
    ref = (_Float16) v.f;
    memcpy (&ref_bits, &ref, 2);
    /* one check per value would be a syscall each (check's mark points) */
    if (gst_spdl_float_to_half (v.f) != ref_bits ||
        gst_spdl_float_to_half (-v.f) != (ref_bits | 0x8000))
      fail ("float bits 0x%08x: half 0x%04x, want 0x%04x", bits,
          gst_spdl_float_to_half (v.f), ref_bits);
  }
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

static Suite *
spdlbatch_suite (void)
{
  Suite *s = suite_create ("spdlbatch");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_nhwc_slots_labels_partial);
  tcase_add_test (tc, test_nchw_layout);
  tcase_add_test (tc, test_drop_last_and_epochs);
  tcase_add_test (tc, test_allocation_from_downstream);
  tcase_add_test (tc, test_appsink_batches_and_epochs);
  tcase_add_test (tc, test_normalized_dtypes);
  tcase_add_test (tc, test_normalize_row_matches_scalar);
  tcase_add_test (tc, test_deinterleave_rgb_row);
  tcase_add_test (tc, test_half_conversions_round_to_nearest_even);
  tcase_add_test (tc, test_mean_needs_float_dtype);
  return s;
}

GST_CHECK_MAIN (spdlbatch);
