/* GStreamer SPDL CUDA plugin: spdlcudaupload tests
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Built twice: as the "spdlcudaupload" test (registration, the error on a
 * machine without a device, and, with host memory standing in for the
 * device (GST_SPDL_CUDA_EMULATE), the pool, flushing, caps and
 * normalization) and, with SPDL_GPU_TESTS, as the "gpu" suite, which exits
 * 77 (meson: SKIP) with "no CUDA device" where there is none. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>

#include "spdltestutil.h"
#include "gstspdltensor.h"
#include "gstspdlcudanormalize.h"
#include "spdlcheckmain.h"

static gboolean
have_cuda_device (gchar ** why)
{
  gint count = 0;
  cudaError_t err = cudaGetDeviceCount (&count);

  if (why)
    *why = g_strdup (err != cudaSuccess ? cudaGetErrorString (err) :
        "the driver reports no device");
  return err == cudaSuccess && count > 0;
}

/* 4 images of 8 x 16 x 3 (NHWC) and 4 labels */
#define BATCH_CAPS "other/tensors,format=static,num_tensors=2," \
    "dimensions=\"3:16:8:4,4\",types=\"uint8,int64\",framerate=0/1"
#define SHORT_BATCH_CAPS "other/tensors,format=static,num_tensors=2," \
    "dimensions=\"3:16:8:3,3\",types=\"uint8,int64\",framerate=0/1"
#define IMAGE_BYTES (8 * 16 * 3)

static GstBuffer *
host_batch_of (guint seed, guint images)
{
  GstBuffer *buf = gst_buffer_new ();
  GstMemory *img = gst_allocator_alloc (NULL, images * IMAGE_BYTES, NULL);
  GstMemory *lab = gst_allocator_alloc (NULL, images * 8, NULL);
  GstMapInfo map;
  gsize i;

  gst_memory_map (img, &map, GST_MAP_WRITE);
  for (i = 0; i < map.size; i++)
    map.data[i] = (guint8) (i * 7 + seed);
  gst_memory_unmap (img, &map);
  gst_memory_map (lab, &map, GST_MAP_WRITE);
  for (i = 0; i < images; i++)
    ((gint64 *) map.data)[i] = seed * 10 + i;
  gst_memory_unmap (lab, &map);
  gst_buffer_append_memory (buf, img);
  gst_buffer_append_memory (buf, lab);
  return buf;
}

static GstBuffer *
host_batch (guint seed)
{
  return host_batch_of (seed, 4);
}

/* The device address the batch's GstSpdlCudaMeta gives for tensor @i */
static guint64
meta_pointer (GstBuffer * buf, guint i)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buf, "GstSpdlCudaMeta");
  const GValue *ptrs;

  fail_unless (meta != NULL);
  ptrs = gst_structure_get_value (gst_custom_meta_get_structure (meta),
      "pointers");
  return g_value_get_uint64 (gst_value_array_get_value (ptrs, i));
}

static gboolean
memory_equals (GstMemory * mem, const guint8 * data, gsize size)
{
  GstMapInfo map;
  gboolean same;

  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  same = map.size == size && memcmp (map.data, data, size) == 0;
  gst_memory_unmap (mem, &map);
  return same;
}

/* The batch's bytes come out of the element unchanged (uint8) */
static void
check_copies (GstHarness * h, GstBuffer * in, GstBuffer * out)
{
  guint t;

  fail_unless_equals_int (gst_buffer_n_memory (out), 2);
  fail_unless (gst_buffer_get_custom_meta (out, "GstSpdlCudaMeta") != NULL);
  for (t = 0; t < 2; t++) {
    GstMapInfo map;
    GstMemory *src = gst_buffer_peek_memory (in, t);

    gst_memory_map (src, &map, GST_MAP_READ);
    fail_unless (memory_equals (gst_buffer_peek_memory (out, t), map.data,
            map.size), "tensor %u differs", t);
    gst_memory_unmap (src, &map);
  }
}

/* Pushes @in (owned) and checks that its bytes come out unchanged */
static void
push_and_check (GstHarness * h, GstBuffer * in)
{
  GstBuffer *out;

  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  check_copies (h, in, out);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
}

/* -- pool and shutdown: emulated here, on the device in the gpu suite ---- */

typedef struct
{
  GstElement *pipeline;
  gboolean returned;
  GMutex lock;
  GCond cond;
} StopJob;

static gpointer
stop_pipeline (gpointer data)
{
  StopJob *job = data;

  gst_element_set_state (job->pipeline, GST_STATE_NULL);
  g_mutex_lock (&job->lock);
  job->returned = TRUE;
  g_cond_signal (&job->cond);
  g_mutex_unlock (&job->lock);
  return NULL;
}

/* set_state(NULL) must return within @seconds */
static gboolean
stops_within (GstElement * pipeline, gint seconds)
{
  StopJob job = { pipeline, FALSE };
  gint64 deadline = g_get_monotonic_time () + seconds * G_TIME_SPAN_SECOND;
  GThread *thread;
  gboolean returned;

  g_mutex_init (&job.lock);
  g_cond_init (&job.cond);
  thread = g_thread_new ("stop", stop_pipeline, &job);
  g_mutex_lock (&job.lock);
  while (!job.returned && g_cond_wait_until (&job.cond, &job.lock, deadline));
  returned = job.returned;
  g_mutex_unlock (&job.lock);
  if (!returned)
    return FALSE;               /* leaks the thread: the test fails anyway */
  g_thread_join (thread);
  g_mutex_clear (&job.lock);
  g_cond_clear (&job.cond);
  return TRUE;
}

static gchar *
wait_for_warning (GstBus * bus, gint seconds)
{
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, seconds * GST_SECOND,
      GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);
  GError *err = NULL;
  gchar *text;

  if (msg == NULL)
    return NULL;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, NULL);
  else
    gst_message_parse_warning (msg, &err, NULL);
  text = g_strdup_printf ("%s%s", GST_MESSAGE_TYPE (msg) ==
      GST_MESSAGE_ERROR ? "ERROR: " : "", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  return text;
}

/* The application holds every device batch: the pipeline waits, the user
 * is told which property to look at, and stopping returns at once. */
static void
check_stop_while_consumer_holds_every_batch (guint batch_size)
{
  gchar *caps = g_strdup_printf ("other/tensors,format=static,num_tensors=1,"
      "dimensions=3:224:224:%u,types=uint8,framerate=0/1", batch_size);
  gchar *launch = g_strdup_printf ("appsrc name=src caps=\"%s\" "
      "max-bytes=0 ! spdlcudaupload device-buffers=2 stall-timeout=300 ! "
      "appsink name=sink sync=false max-buffers=1", caps);
  GstElement *pipeline = gst_parse_launch (launch, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstBus *bus = gst_element_get_bus (pipeline);
  GstSample *held[2];
  gsize size = (gsize) batch_size * 3 * 224 * 224;
  gchar *warning;
  guint i;

  fail_unless (pipeline != NULL);
  for (i = 0; i < 6; i++) {
    GstBuffer *b = gst_buffer_new_allocate (NULL, size, NULL);
    gst_buffer_memset (b, 0, i, size);
    gst_app_src_push_buffer (GST_APP_SRC (src), b);
  }
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  for (i = 0; i < 2; i++) {
    held[i] = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        10 * GST_SECOND);
    fail_unless (held[i] != NULL);
  }
  /* the third batch waits for a device batch: the application holds both */
  warning = wait_for_warning (bus, 10);
  fail_unless (warning != NULL, "no warning while every batch is held");
  fail_unless (strstr (warning, "device-buffers") != NULL, "%s", warning);
  fail_unless (strstr (warning, "All 2 device batches") != NULL, "%s",
      warning);
  g_free (warning);
  fail_unless (stops_within (pipeline, 10),
      "set_state(NULL) blocked while the application held every batch");
  for (i = 0; i < 2; i++)
    gst_sample_unref (held[i]);
  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (launch);
  g_free (caps);
}

typedef struct
{
  GstHarness *h;
  GstFlowReturn ret;
} PushJob;

static gpointer
push_batch (gpointer data)
{
  PushJob *job = data;

  job->ret = gst_harness_push (job->h, host_batch (9));
  return NULL;
}

/* A flush wakes a streaming thread waiting for a device batch */
static void
check_flush_wakes_a_waiting_upload (void)
{
  GstHarness *h = gst_harness_new_parse ("spdlcudaupload device-buffers=2 "
      "stall-timeout=0");
  GstBuffer *held[2];
  PushJob job = { h, GST_FLOW_OK };
  GThread *thread;
  guint i;

  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  for (i = 0; i < 2; i++) {
    fail_unless_equals_int (gst_harness_push (h, host_batch (i)),
        GST_FLOW_OK);
    held[i] = gst_harness_pull (h);
  }
  thread = g_thread_new ("push", push_batch, &job);
  g_usleep (200 * G_TIME_SPAN_MILLISECOND);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  g_thread_join (thread);
  fail_unless_equals_int (job.ret, GST_FLOW_FLUSHING);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  /* a batch back in the pool serves the next push */
  gst_buffer_unref (held[0]);
  push_and_check (h, host_batch (11));
  gst_buffer_unref (held[1]);
  gst_harness_teardown (h);
}

/* The last, short batch of an epoch is served from the pool: its memories
 * are the front of pool memories, nothing is allocated for it */
static void
check_short_batch_from_pool (void)
{
  GstHarness *h = gst_harness_new ("spdlcudaupload");
  GstBuffer *in, *out;
  guint64 pool_ptrs[4];
  guint i, found = 0;

  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  /* hold all 4 (device-buffers' default): the pool's pointers */
  {
    GstBuffer *outs[4];
    for (i = 0; i < 4; i++) {
      fail_unless_equals_int (gst_harness_push (h, host_batch (i)),
          GST_FLOW_OK);
      outs[i] = gst_harness_pull (h);
      pool_ptrs[i] = meta_pointer (outs[i], 0);
    }
    for (i = 0; i < 4; i++)
      gst_buffer_unref (outs[i]);
  }
  gst_harness_set_src_caps_str (h, SHORT_BATCH_CAPS);
  in = host_batch_of (5, 3);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  check_copies (h, in, out);
  fail_unless_equals_int (gst_buffer_peek_memory (out, 0)->size,
      3 * IMAGE_BYTES);
  for (i = 0; i < 4; i++)
    found += meta_pointer (out, 0) == pool_ptrs[i];
  fail_unless_equals_int (found, 1);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  /* and full size again for the next epoch */
  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  push_and_check (h, host_batch (6));
  gst_harness_teardown (h);
}

/* -- normalization -------------------------------------------------------- */

static const gdouble mean3[] = { 0.485, 0.456, 0.406 };
static const gdouble std3[] = { 0.229, 0.224, 0.225 };

#define NORM_PROPS "mean=\"<0.485,0.456,0.406>\" std=\"<0.229,0.224,0.225>\""

/* Round to nearest even bfloat16, by comparing the two neighbours in
 * double (independent of the bit trick the element uses) */
static guint16
reference_bfloat16 (gfloat f)
{
  guint32 bits, lo_bits;
  gint e;
  gfloat lo;
  gdouble dlo, dhi, ulp;

  memcpy (&bits, &f, 4);
  if (isnan (f))
    return (bits >> 16) | 0x40;
  /* magnitudes: the truncated value and the next one up (2^128 past the
   * largest: infinity) */
  lo_bits = bits & 0x7fff0000u;
  memcpy (&lo, &lo_bits, 4);
  e = (bits >> 23) & 0xff;
  ulp = ldexp (1.0, (e ? e : 1) - 127 - 7);
  dlo = fabs ((gdouble) f) - lo;
  dhi = lo + ulp - fabs ((gdouble) f);
  if (dlo < dhi || (dlo == dhi && !((bits >> 16) & 1)))
    return bits >> 16;
  return (bits >> 16) + 1;
}

static guint16
reference_half (gfloat f)
{
  _Float16 h = (_Float16) f;
  guint16 bits;

  memcpy (&bits, &h, 2);
  return bits;
}

/* Output element (n, c, y, x) of a normalized NHWC input batch */
static void
check_normalized (GstMemory * out, GstBuffer * in, const gchar * dtype,
    gboolean nchw, guint n_images)
{
  GstMapInfo src, dst;
  guint n, c, y, x, checked = 0;

  fail_unless (gst_memory_map (gst_buffer_peek_memory (in, 0), &src,
          GST_MAP_READ));
  fail_unless (gst_memory_map (out, &dst, GST_MAP_READ));
  for (n = 0; n < n_images; n++)
    for (c = 0; c < 3; c++)
      for (y = 0; y < 8; y++)
        for (x = 0; x < 16; x++) {
          guint8 v = src.data[((n * 8 + y) * 16 + x) * 3 + c];
          gsize o = nchw ? ((n * 3 + c) * 8 + y) * 16 + x :
              ((n * 8 + y) * 16 + x) * 3 + c;
          gdouble exact = ((gdouble) v / 255.0 - mean3[c]) / std3[c];
          gfloat f32 = ((gfloat) v / 255.0f - (gfloat) mean3[c]) /
              (gfloat) std3[c];

          if (g_str_equal (dtype, "float32")) {
            gfloat got = ((gfloat *) dst.data)[o];
            /* relative to the terms: x / 255 - mean cancels */
            gdouble scale = (v / 255.0 + mean3[c]) / std3[c];
            fail_unless (fabs (got - exact) <= 1e-6 * scale,
                "(%u,%u,%u,%u): %.9g, not %.9g", n, c, y, x, got, exact);
            fail_unless (got == f32, "(%u,%u,%u,%u): %.9g, not float32's "
                "%.9g", n, c, y, x, got, f32);
          } else if (g_str_equal (dtype, "float16")) {
            fail_unless_equals_int (((guint16 *) dst.data)[o],
                reference_half (f32));
          } else {
            fail_unless_equals_int (((guint16 *) dst.data)[o],
                reference_bfloat16 (f32));
          }
          checked++;
        }
  fail_unless_equals_int (dst.size, checked * (g_str_equal (dtype,
              "float32") ? 4 : 2));
  gst_memory_unmap (out, &dst);
  gst_memory_unmap (gst_buffer_peek_memory (in, 0), &src);
}

static void
check_normalize (const gchar * dtype, gboolean nchw)
{
  gchar *launch = g_strdup_printf ("spdlcudaupload dtype=%s layout=%s "
      NORM_PROPS, dtype, nchw ? "nchw" : "nhwc");
  GstHarness *h = gst_harness_new_parse (launch);
  GstBuffer *in = host_batch (3), *out;
  GstCaps *caps;
  GstStructure *s;
  gchar *types = g_strdup_printf ("%s,int64", dtype);
  guint64 labels[4];
  GstMapInfo map;

  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  caps = gst_pad_get_current_caps (h->sinkpad);
  s = gst_caps_get_structure (caps, 0);
  fail_unless_equals_string (gst_structure_get_string (s, "types"), types);
  fail_unless_equals_string (gst_structure_get_string (s, "dimensions"),
      nchw ? "16:8:3:4,4" : "3:16:8:4,4");
  check_normalized (gst_buffer_peek_memory (out, 0), in, dtype, nchw, 4);
  /* the labels pass unchanged */
  gst_buffer_extract (in, IMAGE_BYTES * 4, labels, sizeof labels);
  fail_unless (gst_memory_map (gst_buffer_peek_memory (out, 1), &map,
          GST_MAP_READ));
  fail_unless (memcmp (map.data, labels, sizeof labels) == 0);
  gst_memory_unmap (gst_buffer_peek_memory (out, 1), &map);
  /* a short batch: the front of a pool batch, same values */
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_set_src_caps_str (h, SHORT_BATCH_CAPS);
  in = host_batch_of (4, 3);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  check_normalized (gst_buffer_peek_memory (out, 0), in, dtype, nchw, 3);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
  g_free (types);
  g_free (launch);
}

#ifndef SPDL_GPU_TESTS

/* The half conversion agrees with the compiler's (round to nearest even)
 * on a spread of all float bit patterns, and bfloat16 with the reference */
static void
check_conversions (void)
{
  guint64 bits;
  guint n = 0;

  for (bits = 0; bits <= G_MAXUINT32; bits += 65521) {
    guint32 b = (guint32) bits;
    gfloat f;
    guint16 h, ref;

    memcpy (&f, &b, 4);
    h = spdl_float_to_half (f);
    ref = reference_half (f);
    if (isnan (f))
      fail_unless ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0);
    else
      fail_unless (h == ref, "half(%a) = %04x, not %04x", f, h, ref);
    if (!isnan (f))
      fail_unless_equals_int (spdl_float_to_bfloat16 (f),
          reference_bfloat16 (f));
    n++;
  }
  /* the edges: ties, the largest half, subnormals */
  {
    static const gfloat edges[] = { 65504.0f, 65519.99f, 65520.0f,
      5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f, 6.1035156e-5f,
      6.1035152e-5f, 1.0009765625f, 1.00048828125f, 1.00146484375f, -0.0f
    };
    guint i;
    for (i = 0; i < G_N_ELEMENTS (edges); i++)
      fail_unless_equals_int (spdl_float_to_half (edges[i]),
          reference_half (edges[i]));
  }
  fail_unless (n > 65000);
}

static void
check_bad_settings (const gchar * props, const gchar * caps_str,
    const gchar * expected)
{
  gchar *launch = g_strdup_printf ("appsrc caps=\"%s\" ! spdlcudaupload %s",
      caps_str, props);
  SpdlTestRun *run = spdl_test_run (launch);

  fail_unless (run->error != NULL, "%s: no error", props);
  fail_unless (strstr (run->error, expected) != NULL, "'%s' lacks '%s'",
      run->error, expected);
  spdl_test_run_free (run);
  g_free (launch);
}

static gchar *
harness_caps_error (const gchar * launch, const gchar * caps)
{
  GstHarness *h = gst_harness_new_parse (launch);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;
  gchar *text;

  gst_element_set_bus (h->element, bus);
  gst_harness_set_src_caps_str (h, caps);
  fail_if (gst_harness_push (h, host_batch (0)) == GST_FLOW_OK);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  text = g_strdup (err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  return text;
}

GST_START_TEST (test_registered)
{
  GstElementFactory *f = gst_element_factory_find ("spdlcudaupload");
  const GList *l;
  gboolean cuda_src = FALSE;

  fail_unless (f != NULL);
  for (l = gst_element_factory_get_static_pad_templates (f); l; l = l->next) {
    GstStaticPadTemplate *t = l->data;
    GstCaps *caps = gst_static_caps_get (&t->static_caps);
    if (t->direction == GST_PAD_SRC)
      cuda_src = gst_caps_features_contains (gst_caps_get_features (caps, 0),
          "memory:SpdlCUDA");
    gst_caps_unref (caps);
  }
  fail_unless (cuda_src);
  gst_object_unref (f);
}

GST_END_TEST;

GST_START_TEST (test_no_device_is_a_clear_error)
{
  gchar *why = NULL;
  SpdlTestRun *run;

  if (have_cuda_device (&why)) {
    g_print ("test_no_device_is_a_clear_error: a CUDA device is present, "
        "nothing to test\n");
    g_free (why);
    return;
  }
  g_unsetenv ("GST_SPDL_CUDA_EMULATE");
  run = spdl_test_run ("appsrc caps=" "\"" BATCH_CAPS "\" ! spdlcudaupload");
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "No CUDA device") != NULL, "%s",
      run->error);
  fail_unless (strstr (run->error, why) != NULL, "'%s' lacks '%s'",
      run->error, why);
  spdl_test_run_free (run);
  /* normalizing, too, fails cleanly */
  run = spdl_test_run ("appsrc caps=" "\"" BATCH_CAPS "\" ! spdlcudaupload "
      "dtype=float16 layout=nchw");
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "No CUDA device") != NULL, "%s",
      run->error);
  spdl_test_run_free (run);
  g_free (why);
}

GST_END_TEST;

/* From here on, host memory stands in for the device */
static void
emulate (void)
{
  g_setenv ("GST_SPDL_CUDA_EMULATE", "1", TRUE);
}

GST_START_TEST (test_emulated_copies)
{
  GstHarness *h;
  guint i;

  emulate ();
  h = gst_harness_new ("spdlcudaupload");
  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  for (i = 0; i < 10; i++)
    push_and_check (h, host_batch (i));
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_stop_while_consumer_holds_every_batch)
{
  emulate ();
  check_stop_while_consumer_holds_every_batch (2);
}

GST_END_TEST;

GST_START_TEST (test_flush_wakes_a_waiting_upload)
{
  emulate ();
  check_flush_wakes_a_waiting_upload ();
}

GST_END_TEST;

GST_START_TEST (test_short_batch_from_pool)
{
  emulate ();
  check_short_batch_from_pool ();
}

GST_END_TEST;

GST_START_TEST (test_normalize)
{
  static const gchar *dtypes[] = { "float32", "float16", "bfloat16" };
  guint i;

  emulate ();
  for (i = 0; i < G_N_ELEMENTS (dtypes); i++) {
    check_normalize (dtypes[i], TRUE);
    check_normalize (dtypes[i], FALSE);
  }
}

GST_END_TEST;

GST_START_TEST (test_layout_only)
{
  GstHarness *h;
  GstBuffer *in = host_batch (2), *out;
  GstMapInfo src, dst;
  guint n, c, y, x;

  emulate ();
  h = gst_harness_new_parse ("spdlcudaupload layout=nchw");
  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  gst_memory_map (gst_buffer_peek_memory (in, 0), &src, GST_MAP_READ);
  gst_memory_map (gst_buffer_peek_memory (out, 0), &dst, GST_MAP_READ);
  fail_unless_equals_int (dst.size, src.size);
  for (n = 0; n < 4; n++)
    for (c = 0; c < 3; c++)
      for (y = 0; y < 8; y++)
        for (x = 0; x < 16; x++)
          fail_unless_equals_int (dst.data[((n * 3 + c) * 8 + y) * 16 + x],
              src.data[((n * 8 + y) * 16 + x) * 3 + c]);
  gst_memory_unmap (gst_buffer_peek_memory (out, 0), &dst);
  gst_memory_unmap (gst_buffer_peek_memory (in, 0), &src);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_conversions)
{
  check_conversions ();
}

GST_END_TEST;

GST_START_TEST (test_bad_settings)
{
  gchar *msg;

  emulate ();
  check_bad_settings ("dtype=float32 mean=\"<0.5,0.5>\"", BATCH_CAPS,
      "mean has 2 values");
  check_bad_settings ("dtype=float32 std=\"<0.5,0,0.5>\"", BATCH_CAPS,
      "std value 0");
  check_bad_settings ("mean=\"<0.5>\"", BATCH_CAPS,
      "mean and std need a float dtype");
  msg = harness_caps_error ("spdlcudaupload dtype=float32 "
      "mean=\"<0.5,0.5,0.5>\"", "other/tensors,format=static,num_tensors=2,"
      "dimensions=\"1:16:8:4,4\",types=\"uint8,int64\",framerate=0/1");
  fail_unless (strstr (msg, "3 and 0 values for images of 1 channels"), "%s",
      msg);
  g_free (msg);
  msg = harness_caps_error ("spdlcudaupload dtype=float32",
      "other/tensors,format=static,num_tensors=2,"
      "dimensions=\"16:8:4,4\",types=\"uint8,int64\",framerate=0/1");
  fail_unless (strstr (msg, "not a batch of uint8 images"), "%s", msg);
  g_free (msg);
}

GST_END_TEST;

/* A batch with record fields: images, labels, a caption's values and
 * offsets, a label map; spdlbatch's names in the caps */
#define RECORD_CAPS "other/tensors,format=static,num_tensors=5," \
    "dimensions=\"3:16:8:2,2,0,3,16:8:2\"," \
    "types=\"uint8,int64,uint8,int64,uint8\",framerate=0/1," \
    "names=\"images,labels,txt/values,txt/offsets,seg.png\"," \
    "fields=\"txt:string:skip,seg.png:label:skip\""

static GstMemory *
wrap (gconstpointer data, gsize size)
{
  gpointer copy = g_memdup2 (data, size);

  return gst_memory_new_wrapped (0, copy, size, 0, size, copy, g_free);
}

static GstBuffer *
record_batch (guint seed)
{
  GstBuffer *buf = host_batch_of (seed, 2);
  gchar *text = g_strdup_printf ("a cat %u%s", seed,
      seed % 2 ? " on a long mat" : "");
  gint64 offsets[3] = { 0, 5, strlen (text) };
  guint8 seg[2 * 16 * 8];
  guint i;

  for (i = 0; i < sizeof (seg); i++)
    seg[i] = i + seed;
  gst_buffer_append_memory (buf, gst_memory_new_wrapped (0, text,
          strlen (text), 0, strlen (text), text, g_free));
  gst_buffer_append_memory (buf, wrap (offsets, sizeof (offsets)));
  gst_buffer_append_memory (buf, wrap (seg, sizeof (seg)));
  return buf;
}

/* The fields' numbers go to the device; their strings stay the input's
 * host memory, with 0 for their pointers; the pool's batches come back
 * whole round after round */
GST_START_TEST (test_record_fields_stay_host)
{
  GstHarness *h;
  guint round, t;

  emulate ();
  h = gst_harness_new_parse ("spdlcudaupload device-buffers=2");
  gst_harness_set_src_caps_str (h, RECORD_CAPS);
  for (round = 0; round < 6; round++) {
    GstBuffer *in = record_batch (round), *out;
    const GValue *pointers;

    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    fail_unless_equals_int (gst_buffer_n_memory (out), 5);
    pointers = gst_structure_get_value (gst_custom_meta_get_structure
        (gst_buffer_get_custom_meta (out, "GstSpdlCudaMeta")), "pointers");
    fail_unless_equals_int (gst_value_array_get_size (pointers), 5);
    for (t = 0; t < 5; t++) {
      GstMemory *src = gst_buffer_peek_memory (in, t);
      GstMemory *dst = gst_buffer_peek_memory (out, t);
      gboolean host = t == 2 || t == 3;
      GstMapInfo map;

      fail_unless_equals_int (host, dst == src);
      fail_unless_equals_int (host, g_value_get_uint64
          (gst_value_array_get_value (pointers, t)) == 0);
      gst_memory_map (src, &map, GST_MAP_READ);
      fail_unless (memory_equals (dst, map.data, map.size),
          "round %u: tensor %u differs", round, t);
      gst_memory_unmap (src, &map);
    }
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
spdlcudaupload_suite (void)
{
  Suite *s = suite_create ("spdlcudaupload");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_registered);
  tcase_add_test (tc, test_no_device_is_a_clear_error);
  tcase_add_test (tc, test_emulated_copies);
  tcase_add_test (tc, test_stop_while_consumer_holds_every_batch);
  tcase_add_test (tc, test_flush_wakes_a_waiting_upload);
  tcase_add_test (tc, test_short_batch_from_pool);
  tcase_add_test (tc, test_normalize);
  tcase_add_test (tc, test_layout_only);
  tcase_add_test (tc, test_conversions);
  tcase_add_test (tc, test_bad_settings);
  tcase_add_test (tc, test_record_fields_stay_host);
  return s;
}

SPDL_CHECK_MAIN (spdlcudaupload);

#else /* SPDL_GPU_TESTS */

GST_START_TEST (test_device_bytes_equal_host)
{
  GstHarness *h = gst_harness_new ("spdlcudaupload");
  guint i;

  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  for (i = 0; i < 8; i++) {
    GstBuffer *in = host_batch (i), *out;
    GstCustomMeta *meta;
    const GValue *ready;
    guint t;

    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    fail_unless_equals_int (gst_buffer_n_memory (out), 2);
    meta = gst_buffer_get_custom_meta (out, "GstSpdlCudaMeta");
    fail_unless (meta != NULL);
    ready = gst_structure_get_value (gst_custom_meta_get_structure (meta),
        "ready-events");
    for (t = 0; t < 2; t++) {
      GstMemory *src = gst_buffer_peek_memory (in, t);
      guint8 *back = g_malloc (src->size);
      GstMapInfo map;
      guint64 ptr = meta_pointer (out, t);
      guint64 event =
          g_value_get_uint64 (gst_value_array_get_value (ready, t));
      struct cudaPointerAttributes attr;

      /* the pointer handed on is device memory holding the host bytes
       * once its ready event has completed */
      fail_unless (event != 0);
      fail_unless (cudaEventSynchronize ((cudaEvent_t) (guintptr) event) ==
          cudaSuccess);
      fail_unless (cudaPointerGetAttributes (&attr,
              (void *) (guintptr) ptr) == cudaSuccess);
      fail_unless (attr.type == cudaMemoryTypeDevice);
      fail_unless (cudaMemcpy (back, (void *) (guintptr) ptr, src->size,
              cudaMemcpyDeviceToHost) == cudaSuccess);
      gst_memory_map (src, &map, GST_MAP_READ);
      fail_unless (memcmp (back, map.data, map.size) == 0);
      gst_memory_unmap (src, &map);
      g_free (back);
    }
    /* mapping the device memory downloads the same bytes */
    check_copies (h, in, out);
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_pinned_memory_proposed_upstream)
{
  gchar *root = spdl_test_make_image_folder (1, 8, 40, 30);
  gchar *launch = g_strdup_printf ("spdlsrc location=%s ! spdldecode "
      "width=16 height=8 ! spdlbatch batch-size=4 ! identity name=probe ! "
      "spdlcudaupload", root);
  SpdlTestRun *run;

  run = spdl_test_run (launch);
  fail_unless (run->error == NULL, "%s", run->error);
  fail_unless_equals_int (spdl_test_run_count_samples (run), 2);
  spdl_test_run_free (run);
  {
    GstHarness *h = gst_harness_new_parse ("spdlbatch batch-size=4 ! "
        "spdlcudaupload");
    GstBuffer *img;
    GstElement *batch = gst_harness_find_element (h, "spdlbatch");
    GstPad *pad = gst_element_get_static_pad (batch, "src");
    GstQuery *q;
    GstAllocator *alloc = NULL;
    GstCaps *caps = gst_caps_from_string (BATCH_CAPS);

    gst_harness_set_src_caps_str (h, "video/x-raw,format=RGB,width=16,"
        "height=8,framerate=0/1");
    img = gst_buffer_new_allocate (NULL, 16 * 8 * 3, NULL);
    gst_harness_push (h, img);
    q = gst_query_new_allocation (caps, TRUE);
    fail_unless (gst_pad_peer_query (pad, q));
    fail_unless (gst_query_get_n_allocation_params (q) > 0);
    gst_query_parse_nth_allocation_param (q, 0, &alloc, NULL);
    fail_unless_equals_string (alloc->mem_type, "SpdlCudaHost");
    gst_object_unref (alloc);
    gst_query_unref (q);
    gst_caps_unref (caps);
    gst_object_unref (pad);
    gst_object_unref (batch);
    gst_harness_teardown (h);
  }
  g_free (launch);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

GST_START_TEST (test_device_memory_flat)
{
  GstHarness *h = gst_harness_new ("spdlcudaupload");
  size_t free_before = 0, free_after = 0, total = 0;
  guint i;

  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  for (i = 0; i < 1000; i++) {
    GstBuffer *out;

    /* every 10th batch is an epoch's short last one */
    gst_harness_set_src_caps_str (h, i % 10 == 9 ? SHORT_BATCH_CAPS :
        BATCH_CAPS);
    gst_harness_push (h, host_batch_of (i, i % 10 == 9 ? 3 : 4));
    out = gst_harness_pull (h);
    gst_buffer_unref (out);
    if (i == 20)
      cudaMemGetInfo (&free_before, &total);
  }
  cudaMemGetInfo (&free_after, &total);
  g_print ("device memory free after 20 batches: %zu, after 1000: %zu\n",
      free_before, free_after);
  /* 980 more batches allocated nothing on the device */
  fail_unless (free_after + (1 << 20) >= free_before);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_stop_while_consumer_holds_every_batch)
{
  guint i;

  /* the stress: real device batches of 64 images, over and over */
  for (i = 0; i < 5; i++)
    check_stop_while_consumer_holds_every_batch (64);
}

GST_END_TEST;

GST_START_TEST (test_flush_wakes_a_waiting_upload)
{
  check_flush_wakes_a_waiting_upload ();
}

GST_END_TEST;

GST_START_TEST (test_short_batch_from_pool)
{
  check_short_batch_from_pool ();
}

GST_END_TEST;

GST_START_TEST (test_normalize)
{
  static const gchar *dtypes[] = { "float32", "float16", "bfloat16" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (dtypes); i++) {
    check_normalize (dtypes[i], TRUE);
    check_normalize (dtypes[i], FALSE);
  }
}

GST_END_TEST;

/* The kernel's output equals the host reference bit for bit, on a batch
 * large enough for every block of the grid */
GST_START_TEST (test_device_normalize_equals_cpu)
{
  static const gchar *dtypes[] = { "uint8", "float32", "float16", "bfloat16" };
  static const SpdlNormDType kinds[] = { SPDL_NORM_UINT8, SPDL_NORM_FLOAT32,
    SPDL_NORM_FLOAT16, SPDL_NORM_BFLOAT16
  };
  static const gsize sizes[] = { 1, 4, 2, 2 };
  const guint n = 16, c = 3, hgt = 224, w = 224;
  gsize pixels = (gsize) n * c * hgt * w;
  GRand *rand = g_rand_new_with_seed (5);
  guint8 *images = g_malloc (pixels);
  gsize i;
  guint d, nchw;

  for (i = 0; i < pixels; i++)
    images[i] = g_rand_int (rand);
  for (d = 0; d < G_N_ELEMENTS (dtypes); d++)
    for (nchw = 0; nchw < 2; nchw++) {
      gchar *launch = g_strdup_printf ("spdlcudaupload dtype=%s layout=%s %s",
          dtypes[d], nchw ? "nchw" : "nhwc", d ? NORM_PROPS : "");
      GstHarness *h = gst_harness_new_parse (launch);
      SpdlNormalizeParams p = { n, c, hgt, w, TRUE, !nchw, kinds[d],
        {0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}
      };
      gpointer expected = g_malloc (pixels * sizes[d]);
      GstBuffer *in = gst_buffer_new_wrapped (g_memdup2 (images, pixels),
          pixels), *out;

      gst_buffer_append_memory (in, gst_allocator_alloc (NULL, n * 8, NULL));
      gst_harness_set_src_caps_str (h, "other/tensors,format=static,"
          "num_tensors=2,dimensions=\"3:224:224:16,16\","
          "types=\"uint8,int64\",framerate=0/1");
      fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
      out = gst_harness_pull (h);
      spdl_normalize_cpu (&p, images, expected);
      fail_unless (memory_equals (gst_buffer_peek_memory (out, 0), expected,
              pixels * sizes[d]), "%s differs from the host reference",
          launch);
      gst_buffer_unref (out);
      gst_harness_teardown (h);
      g_free (expected);
      g_free (launch);
    }
  g_free (images);
  g_rand_free (rand);
}

GST_END_TEST;

typedef struct
{
  GstMemory *mem;
  const guint8 *expected;
  gsize size;
  gboolean same;
} MapJob;

static gpointer
map_and_compare (gpointer data)
{
  MapJob *job = data;

  job->same = memory_equals (job->mem, job->expected, job->size);
  return NULL;
}

/* Several threads map the same device memory for reading at once */
GST_START_TEST (test_concurrent_read_maps)
{
  GstHarness *h = gst_harness_new ("spdlcudaupload");
  GstBuffer *in = host_batch (1), *out;
  GstMapInfo src;
  MapJob jobs[8];
  GThread *threads[8];
  guint round, i;

  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  for (round = 0; round < 20; round++) {
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    gst_memory_map (gst_buffer_peek_memory (in, 0), &src, GST_MAP_READ);
    for (i = 0; i < 8; i++) {
      jobs[i] = (MapJob) {
      gst_buffer_peek_memory (out, 0), src.data, src.size, FALSE};
      threads[i] = g_thread_new ("map", map_and_compare, &jobs[i]);
    }
    for (i = 0; i < 8; i++) {
      g_thread_join (threads[i]);
      fail_unless (jobs[i].same);
    }
    gst_memory_unmap (gst_buffer_peek_memory (in, 0), &src);
    gst_buffer_unref (out);
  }
  gst_buffer_unref (in);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The element never changes the calling thread's current device */
GST_START_TEST (test_current_device_kept)
{
  gint count = 0, device = -1;
  gint mine;
  GstHarness *h;
  GstBuffer *out;
  gchar *launch;

  fail_unless (cudaGetDeviceCount (&count) == cudaSuccess);
  mine = count - 1;
  fail_unless (cudaSetDevice (mine) == cudaSuccess);
  /* upload to device 0 while this thread works on the last device */
  launch = g_strdup_printf ("spdlcudaupload cuda-device-id=0");
  h = gst_harness_new_parse (launch);
  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  gst_harness_push (h, host_batch (0));
  out = gst_harness_pull (h);
  check_copies (h, out, out);
  fail_unless (cudaGetDevice (&device) == cudaSuccess);
  fail_unless_equals_int (device, mine);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  fail_unless (cudaGetDevice (&device) == cudaSuccess);
  fail_unless_equals_int (device, mine);
  g_free (launch);
  if (count < 2)
    g_print ("test_current_device_kept: one device, checked device 0 only\n");
}

GST_END_TEST;

static Suite *
gpu_suite (void)
{
  Suite *s = suite_create ("spdlcudaupload-gpu");
  TCase *tc = tcase_create ("gpu");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_device_bytes_equal_host);
  tcase_add_test (tc, test_pinned_memory_proposed_upstream);
  tcase_add_test (tc, test_device_memory_flat);
  tcase_add_test (tc, test_stop_while_consumer_holds_every_batch);
  tcase_add_test (tc, test_flush_wakes_a_waiting_upload);
  tcase_add_test (tc, test_short_batch_from_pool);
  tcase_add_test (tc, test_normalize);
  tcase_add_test (tc, test_device_normalize_equals_cpu);
  tcase_add_test (tc, test_concurrent_read_maps);
  tcase_add_test (tc, test_current_device_kept);
  return s;
}

int
main (int argc, char **argv)
{
  gchar *why = NULL;
  Suite *s;

  if (!have_cuda_device (&why)) {
    printf ("SKIP: no CUDA device (%s)\n", why);
    g_free (why);
    return 77;
  }
  g_free (why);
  gst_check_init (&argc, &argv);
  s = gpu_suite ();
  return gst_check_run_suite (s, "spdlcudaupload-gpu", __FILE__);
}

#endif
