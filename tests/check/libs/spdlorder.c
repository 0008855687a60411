/* gst-spdl: unit tests of the epoch order
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The orders are a contract with saved checkpoints: a state saved by one
 * build resumes with another only if (seed, epoch) give the same order.
 * The expected vectors were taken from the code as it has been since
 * checkpoints exist; a change here silently breaks every saved resume. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>

#include "gstspdlorder.h"
#include "spdlcheckmain.h"

static void
assert_permutation (guint n, guint64 seed, guint epoch, gint64 stream,
    const guint32 * expected)
{
  guint32 perm[16];
  guint i;

  gst_spdl_order_permutation (perm, n, seed, epoch, stream);
  for (i = 0; i < n; i++)
    fail_unless_equals_int (perm[i], expected[i]);
}

GST_START_TEST (test_permutation_pinned)
{
  static const guint32 s0_e0[] = { 5, 4, 7, 1, 2, 0, 6, 9, 8, 3 };
  static const guint32 s0_e1[] = { 8, 1, 9, 2, 5, 7, 6, 0, 3, 4 };
  static const guint32 s42_e0[] = { 9, 3, 4, 2, 6, 0, 8, 1, 5, 7 };
  static const guint32 shards[] = { 0, 9, 1, 7, 3, 4, 2, 6, 5, 8 };
  static const guint32 mix[] = { 9, 2, 5, 0, 1, 4, 3, 7, 8, 6 };
  static const guint32 identity[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  static const guint32 one[] = { 0 };

  /* folders' samples: stream 0 of (seed, epoch) */
  assert_permutation (10, 0, 0, GST_SPDL_ORDER_STREAM_SAMPLES, s0_e0);
  assert_permutation (10, 0, 1, GST_SPDL_ORDER_STREAM_SAMPLES, s0_e1);
  assert_permutation (10, 42, 0, GST_SPDL_ORDER_STREAM_SAMPLES, s42_e0);
  /* the shards' order and the shuffle buffer are streams of their own */
  assert_permutation (10, 0, 0, GST_SPDL_ORDER_STREAM_SHARDS, shards);
  assert_permutation (10, 0, 0, GST_SPDL_ORDER_STREAM_MIX, mix);
  assert_permutation (10, 0, 0, GST_SPDL_ORDER_IDENTITY, identity);
  assert_permutation (1, 7, 3, GST_SPDL_ORDER_STREAM_SAMPLES, one);
  assert_permutation (0, 7, 3, GST_SPDL_ORDER_STREAM_SAMPLES, NULL);
}

GST_END_TEST;

GST_START_TEST (test_global_order_pinned)
{
  /* four shards, one of them empty: 10 samples */
  static const guint64 counts[4] = { 3, 0, 5, 2 };
  static const guint64 shuffled[] = { 8, 9, 3, 4, 5, 6, 7, 0, 1, 2 };
  static const guint64 mixed[] = { 8, 3, 4, 6, 5, 0, 9, 1, 2, 7 };
  guint64 *order;
  guint i;

  order = gst_spdl_order_global (counts, 4, 5, 2, TRUE, 0);
  for (i = 0; i < 10; i++)
    fail_unless_equals_uint64 (order[i], shuffled[i]);
  g_free (order);
  order = gst_spdl_order_global (counts, 4, 5, 2, TRUE, 4);
  for (i = 0; i < 10; i++)
    fail_unless_equals_uint64 (order[i], mixed[i]);
  g_free (order);
  /* without shuffle: listing order, the buffer unused */
  order = gst_spdl_order_global (counts, 4, 5, 2, FALSE, 4);
  for (i = 0; i < 10; i++)
    fail_unless_equals_uint64 (order[i], i);
  g_free (order);
  order = gst_spdl_order_global (NULL, 0, 5, 2, TRUE, 4);
  g_free (order);
}

GST_END_TEST;

GST_START_TEST (test_rank_share)
{
  /* ceil pads the last ranks (DistributedSampler), floor drops the rest */
  fail_unless_equals_uint64 (gst_spdl_order_rank_share (10, 3, FALSE), 4);
  fail_unless_equals_uint64 (gst_spdl_order_rank_share (10, 3, TRUE), 3);
  fail_unless_equals_uint64 (gst_spdl_order_rank_share (10, 0, FALSE), 10);
  fail_unless_equals_uint64 (gst_spdl_order_rank_share (0, 4, FALSE), 0);
  fail_unless_equals_uint64 (gst_spdl_order_rank_share (3, 4, TRUE), 0);
  fail_unless_equals_uint64 (gst_spdl_order_rank_share (3, 4, FALSE), 1);
}

GST_END_TEST;

static Suite *
spdlorder_suite (void)
{
  Suite *s = suite_create ("spdlorder");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_permutation_pinned);
  tcase_add_test (tc, test_global_order_pinned);
  tcase_add_test (tc, test_rank_share);
  return s;
}

SPDL_CHECK_MAIN (spdlorder);
