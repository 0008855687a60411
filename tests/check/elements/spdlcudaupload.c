/* GStreamer SPDL CUDA plugin: spdlcudaupload tests
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Built twice: as the "spdlcudaupload" test (registration, and the error on
 * a machine without a device) and, with SPDL_GPU_TESTS, as the "gpu" suite,
 * which exits 77 (meson: SKIP) with "no CUDA device" where there is none. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsrc.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "spdltestutil.h"
#include "gstspdltensor.h"

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

#define BATCH_CAPS "other/tensors,format=static,num_tensors=2," \
    "dimensions=\"3:16:8:4,4\",types=\"uint8,int64\",framerate=0/1"

#ifndef SPDL_GPU_TESTS

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
  run = spdl_test_run ("appsrc caps=" "\"" BATCH_CAPS "\" ! spdlcudaupload");
  fail_unless (run->error != NULL);
  fail_unless (strstr (run->error, "No CUDA device") != NULL, "%s",
      run->error);
  fail_unless (strstr (run->error, why) != NULL, "'%s' lacks '%s'",
      run->error, why);
  spdl_test_run_free (run);
  g_free (why);
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
  return s;
}

GST_CHECK_MAIN (spdlcudaupload);

#else /* SPDL_GPU_TESTS */

static GstBuffer *
host_batch (guint seed, gsize *image_bytes)
{
  GstBuffer *buf = gst_buffer_new ();
  GstMemory *img = gst_allocator_alloc (NULL, 4 * 8 * 16 * 3, NULL);
  GstMemory *lab = gst_allocator_alloc (NULL, 4 * 8, NULL);
  GstMapInfo map;
  gsize i;

  gst_memory_map (img, &map, GST_MAP_WRITE);
  for (i = 0; i < map.size; i++)
    map.data[i] = (guint8) (i * 7 + seed);
  gst_memory_unmap (img, &map);
  gst_memory_map (lab, &map, GST_MAP_WRITE);
  for (i = 0; i < 4; i++)
    ((gint64 *) map.data)[i] = seed * 10 + i;
  gst_memory_unmap (lab, &map);
  gst_buffer_append_memory (buf, img);
  gst_buffer_append_memory (buf, lab);
  *image_bytes = 4 * 8 * 16 * 3;
  return buf;
}

GST_START_TEST (test_device_bytes_equal_host)
{
  GstHarness *h = gst_harness_new ("spdlcudaupload");
  guint i;

  gst_harness_set_src_caps_str (h, BATCH_CAPS);
  for (i = 0; i < 8; i++) {
    gsize image_bytes;
    GstBuffer *in = host_batch (i, &image_bytes), *out;
    GstCustomMeta *meta;
    const GValue *ptrs;
    guint t;

    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    fail_unless_equals_int (gst_buffer_n_memory (out), 2);
    meta = gst_buffer_get_custom_meta (out, "GstSpdlCudaMeta");
    fail_unless (meta != NULL);
    ptrs = gst_structure_get_value (gst_custom_meta_get_structure (meta),
        "pointers");
    for (t = 0; t < 2; t++) {
      GstMemory *src = gst_buffer_peek_memory (in, t);
      GstMemory *dev = gst_buffer_peek_memory (out, t);
      guint8 *back = g_malloc (src->size);
      GstMapInfo map;
      guint64 ptr = g_value_get_uint64 (gst_value_array_get_value (ptrs, t));
      struct cudaPointerAttributes attr;

      /* the pointer handed on is device memory holding the host bytes */
      fail_unless (cudaPointerGetAttributes (&attr,
              (void *) (guintptr) ptr) == cudaSuccess);
      fail_unless (attr.type == cudaMemoryTypeDevice);
      fail_unless (cudaMemcpy (back, (void *) (guintptr) ptr, src->size,
              cudaMemcpyDeviceToHost) == cudaSuccess);
      gst_memory_map (src, &map, GST_MAP_READ);
      fail_unless (memcmp (back, map.data, map.size) == 0);
      gst_memory_unmap (src, &map);
      /* mapping the device memory downloads the same bytes */
      gst_memory_map (dev, &map, GST_MAP_READ);
      fail_unless (memcmp (back, map.data, map.size) == 0);
      gst_memory_unmap (dev, &map);
      g_free (back);
    }
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

  /* the batches spdlbatch writes are page-locked: check on the device side
   * that the upload found the memory type it proposed */
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
    gsize image_bytes;
    GstBuffer *out;

    gst_harness_push (h, host_batch (i, &image_bytes));
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
