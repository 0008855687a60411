/* gst-spdl: unit tests of batches by duration (bucketing)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* What training with buckets relies on: every sample once an epoch, a
 * batch never mixes buckets nor passes its seconds, the same batches from
 * the same (seed, epoch), every rank as many batches, and a run resumed at
 * any batch boundary given exactly the rest. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>

#include "gstspdlbuckets.h"
#include "gstspdlorder.h"
#include "gstspdlrandom.h"
#include "spdlcheckmain.h"

/* utterances of 0.5 to 20 s, as speech sets have them */
static gdouble *
make_durations (guint n, guint64 seed)
{
  gdouble *d = g_new (gdouble, n);
  GstSpdlRng rng;
  guint i;

  gst_spdl_rng_init (&rng, seed, 99, 0);
  for (i = 0; i < n; i++)
    d[i] = gst_spdl_rng_uniform (&rng, 0.5, 20.0);
  return d;
}

static GstSpdlBucketParams
params_of (guint64 seed, guint epoch, guint buckets, guint window,
    guint batch_size, gdouble batch_duration)
{
  GstSpdlBucketParams p = { seed, epoch, TRUE, buckets, window, batch_size,
    batch_duration
  };
  return p;
}

/* the plan as spdlsrc makes it: buckets assigned once */
static GstSpdlBatchPlan *
plan_new (const gdouble * d, guint n, const GstSpdlBucketParams * p)
{
  guint16 *buckets = gst_spdl_buckets_assign (d, n, p->buckets);
  GstSpdlBatchPlan *plan = gst_spdl_batch_plan_new (d, buckets, n, p);

  g_free (buckets);
  return plan;
}

static void
assert_every_sample_once (const GstSpdlBatchPlan * plan, guint n)
{
  guint8 *seen = g_new0 (guint8, n);
  guint64 b;
  guint i;

  fail_unless_equals_int (plan->n_samples, n);
  fail_unless_equals_uint64 (plan->starts[0], 0);
  fail_unless_equals_uint64 (plan->starts[plan->n_batches], n);
  for (b = 0; b < plan->n_batches; b++) {
    fail_unless (plan->starts[b + 1] > plan->starts[b], "batch %"
        G_GUINT64_FORMAT " is empty", b);
    fail_unless (plan->starts[b + 1] - plan->starts[b] <= plan->max_batch);
  }
  for (i = 0; i < n; i++) {
    fail_unless (plan->samples[i] < n);
    fail_if (seen[plan->samples[i]], "sample %u twice", plan->samples[i]);
    seen[plan->samples[i]] = 1;
  }
  g_free (seen);
}

GST_START_TEST (test_boundaries_are_quantiles)
{
  const gdouble d[] = { 8, 1, 7, 2, 6, 3, 5, 4 };
  guint n;
  gdouble *b = gst_spdl_buckets_boundaries (d, 8, 4, &n);

  fail_unless_equals_int (n, 3);
  fail_unless_equals_float (b[0], 3);
  fail_unless_equals_float (b[1], 5);
  fail_unless_equals_float (b[2], 7);
  g_free (b);
  fail_unless (gst_spdl_buckets_boundaries (d, 8, 1, &n) == NULL);
  fail_unless_equals_int (n, 0);
  fail_unless (gst_spdl_buckets_boundaries (d, 0, 4, &n) == NULL);
}

GST_END_TEST;

GST_START_TEST (test_every_sample_once_per_epoch)
{
  const guint n = 997;
  gdouble *d = make_durations (n, 1);
  guint buckets[] = { 0, 1, 3, 30 }, windows[] = { 0, 1, 50, 10000 };
  guint i, j, epoch;

  for (i = 0; i < G_N_ELEMENTS (buckets); i++)
    for (j = 0; j < G_N_ELEMENTS (windows); j++)
      for (epoch = 0; epoch < 2; epoch++) {
        GstSpdlBucketParams p = params_of (5, epoch, buckets[i], windows[j],
            0, 60.0);
        GstSpdlBatchPlan *plan = plan_new (d, n, &p);

        assert_every_sample_once (plan, n);
        gst_spdl_batch_plan_free (plan);
        p = params_of (5, epoch, buckets[i], windows[j], 7, 0);
        plan = plan_new (d, n, &p);
        assert_every_sample_once (plan, n);
        fail_unless (plan->max_batch <= 7);
        gst_spdl_batch_plan_free (plan);
      }
  g_free (d);
}

GST_END_TEST;

GST_START_TEST (test_batch_within_one_bucket)
{
  const guint n = 2000;
  gdouble *d = make_durations (n, 2);
  GstSpdlBucketParams p = params_of (3, 0, 8, 500, 16, 90.0);
  GstSpdlBatchPlan *plan = plan_new (d, n, &p);
  guint n_bounds;
  gdouble *bounds = gst_spdl_buckets_boundaries (d, n, 8, &n_bounds);
  guint64 b, i;

  assert_every_sample_once (plan, n);
  for (b = 0; b < plan->n_batches; b++) {
    gdouble first = d[plan->samples[plan->starts[b]]];
    guint k, bucket = 0;

    for (k = 0; k < n_bounds; k++)
      bucket += bounds[k] <= first;
    for (i = plan->starts[b]; i < plan->starts[b + 1]; i++) {
      gdouble x = d[plan->samples[i]];

      fail_unless ((bucket == 0 || x >= bounds[bucket - 1]) &&
          (bucket == n_bounds || x < bounds[bucket]),
          "batch %" G_GUINT64_FORMAT " mixes buckets: %f and %f", b, first,
          x);
    }
  }
  g_free (bounds);
  gst_spdl_batch_plan_free (plan);
  g_free (d);
}

GST_END_TEST;

static gdouble
batch_seconds (const GstSpdlBatchPlan * plan, const gdouble * d, guint64 b)
{
  gdouble total = 0;
  guint64 i;

  for (i = plan->starts[b]; i < plan->starts[b + 1]; i++)
    total += d[plan->samples[i]];
  return total;
}

GST_START_TEST (test_batch_duration_is_respected)
{
  const guint n = 1500;
  gdouble *d = make_durations (n, 3);
  guint buckets[] = { 0, 4, 20 };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (buckets); i++) {
    GstSpdlBucketParams p = params_of (9, 1, buckets[i], 300, 0, 45.0);
    GstSpdlBatchPlan *plan = plan_new (d, n, &p);
    guint64 b;

    assert_every_sample_once (plan, n);
    for (b = 0; b < plan->n_batches; b++) {
      guint64 size = plan->starts[b + 1] - plan->starts[b];

      fail_unless (size == 1 || batch_seconds (plan, d, b) <= 45.0,
          "batch %" G_GUINT64_FORMAT " holds %f s", b,
          batch_seconds (plan, d, b));
    }
    gst_spdl_batch_plan_free (plan);
  }
  g_free (d);
}

GST_END_TEST;

/* One bucket, one window, no shuffle: the listing cut greedily, each batch
 * as many samples as fit (Lhotse's max_duration), an overlong one alone. */
GST_START_TEST (test_batch_holds_as_many_as_fit)
{
  const gdouble d[] = { 3, 4, 2, 9, 12, 1, 1, 1, 5, 1.9, 0.1, 0.2, 9.7 };
  const guint64 starts[] = { 0, 3, 4, 5, 11, 13 };
  GstSpdlBucketParams p = { 0, 0, FALSE, 0, 0, 0, 10.0 };
  GstSpdlBatchPlan *plan = plan_new (d, G_N_ELEMENTS (d), &p);
  guint i;

  fail_unless_equals_uint64 (plan->n_batches, G_N_ELEMENTS (starts) - 1);
  for (i = 0; i < G_N_ELEMENTS (starts); i++)
    fail_unless_equals_uint64 (plan->starts[i], starts[i]);
  for (i = 0; i < G_N_ELEMENTS (d); i++)
    fail_unless_equals_int (plan->samples[i], i);
  fail_unless_equals_int (plan->max_batch, 6);
  gst_spdl_batch_plan_free (plan);

  /* a count limit as well (Lhotse's max_cuts) */
  p.batch_size = 2;
  plan = plan_new (d, G_N_ELEMENTS (d), &p);
  fail_unless_equals_uint64 (plan->starts[1], 2);
  fail_unless_equals_uint64 (plan->starts[2], 3);
  fail_unless_equals_int (plan->max_batch, 2);
  gst_spdl_batch_plan_free (plan);
}

GST_END_TEST;

static gboolean
plans_equal (const GstSpdlBatchPlan * a, const GstSpdlBatchPlan * b)
{
  return a->n_batches == b->n_batches && a->n_samples == b->n_samples &&
      memcmp (a->starts, b->starts, (a->n_batches + 1) * sizeof (guint64))
      == 0 && memcmp (a->samples, b->samples,
      a->n_samples * sizeof (guint32)) == 0;
}

GST_START_TEST (test_same_seed_and_epoch_same_batches)
{
  const guint n = 800;
  gdouble *d = make_durations (n, 4);
  GstSpdlBucketParams p = params_of (42, 3, 10, 200, 0, 120.0);
  GstSpdlBatchPlan *a = plan_new (d, n, &p);
  GstSpdlBatchPlan *b = plan_new (d, n, &p), *c;

  fail_unless (plans_equal (a, b));
  p.epoch = 4;
  c = plan_new (d, n, &p);
  fail_if (plans_equal (a, c), "another epoch, the same batches");
  gst_spdl_batch_plan_free (c);
  p.epoch = 3;
  p.seed = 43;
  c = plan_new (d, n, &p);
  fail_if (plans_equal (a, c), "another seed, the same batches");
  gst_spdl_batch_plan_free (c);
  gst_spdl_batch_plan_free (b);
  gst_spdl_batch_plan_free (a);
  g_free (d);
}

GST_END_TEST;

/* Pinned: a checkpoint saved by one build resumes with another only if
 * (seed, epoch) give the same batches. */
GST_START_TEST (test_batches_pinned)
{
  const gdouble d[] = { 1, 9, 2, 8, 3, 7, 4, 6, 5, 5, 2.5, 7.5 };
  static const guint32 samples[] = { 5, 1, 6, 8, 2, 0, 4, 10, 7, 9, 11, 3 };
  static const guint64 starts[] = { 0, 1, 2, 4, 8, 10, 11, 12 };
  GstSpdlBucketParams p = { 7, 2, TRUE, 3, 6, 0, 12.0 };
  GstSpdlBatchPlan *plan = plan_new (d, G_N_ELEMENTS (d), &p);
  guint i;

  fail_unless_equals_uint64 (plan->n_batches, G_N_ELEMENTS (starts) - 1);
  for (i = 0; i < G_N_ELEMENTS (starts); i++)
    fail_unless_equals_uint64 (plan->starts[i], starts[i]);
  for (i = 0; i < G_N_ELEMENTS (samples); i++)
    fail_unless_equals_int (plan->samples[i], samples[i]);
  gst_spdl_batch_plan_free (plan);
}

GST_END_TEST;

/* Every rank the same number of whole batches; together they take each
 * batch once (drop-uneven: all but the last < W), the padding ones again. */
GST_START_TEST (test_ranks_get_whole_batches_equally)
{
  const guint n = 613;
  gdouble *d = make_durations (n, 5);
  GstSpdlBucketParams p = params_of (1, 0, 5, 100, 0, 50.0);
  GstSpdlBatchPlan *plan = plan_new (d, n, &p);
  guint world;
  gint drop;

  for (world = 1; world <= 7; world++)
    for (drop = 0; drop < 2; drop++) {
      guint64 share = gst_spdl_order_rank_share (plan->n_batches, world,
          drop), k;
      guint *taken = g_new0 (guint, plan->n_batches);
      guint rank;
      guint64 b, once = 0;

      for (rank = 0; rank < world; rank++)
        for (k = 0; k < share; k++)
          taken[gst_spdl_batch_plan_rank_batch (plan, 0, rank, world, k)]++;
      for (b = 0; b < plan->n_batches; b++) {
        once += taken[b] >= 1;
        fail_unless (taken[b] <= 2);
      }
      fail_unless_equals_uint64 (once, drop ?
          plan->n_batches / world * world : plan->n_batches);
      fail_unless_equals_uint64 (share * world, drop ?
          plan->n_batches / world * world :
          (plan->n_batches + world - 1) / world * world);
      g_free (taken);
    }
  gst_spdl_batch_plan_free (plan);
  g_free (d);
}

GST_END_TEST;

/* A run stopped after every one of W ranks took k batches resumes at the
 * offset of the first W x k batches, on any number of ranks W', and the
 * new ranks take exactly the batches the old run had not. */
GST_START_TEST (test_resume_from_every_offset)
{
  const guint n = 300;
  gdouble *d = make_durations (n, 6);
  GstSpdlBucketParams p = params_of (11, 2, 4, 64, 0, 40.0);
  GstSpdlBatchPlan *plan = plan_new (d, n, &p);
  guint64 offset, b, found;
  guint world, world2;

  /* every sample offset: a batch boundary names its batch, any other is
   * refused */
  for (offset = 0, b = 0; offset <= n; offset++) {
    gboolean boundary = plan->starts[b] == offset;

    fail_unless_equals_int (gst_spdl_batch_plan_find (plan, offset, &found),
        boundary);
    if (boundary) {
      fail_unless_equals_uint64 (found, b);
      b++;
    }
  }
  fail_unless_equals_uint64 (b, plan->n_batches + 1);
  fail_if (gst_spdl_batch_plan_find (plan, n + 1, &found));

  for (world = 1; world <= 4; world++)
    for (world2 = 1; world2 <= 3; world2++) {
      guint64 share = gst_spdl_order_rank_share (plan->n_batches, world,
          TRUE), k;

      for (k = 0; k < share; k++) {
        guint64 resume = gst_spdl_batch_plan_resume_offset (plan, 0, world,
            k), resumed, share2, j;
        guint8 *taken = g_new0 (guint8, plan->n_batches);
        guint rank;

        /* the first (k + 1) x W batches, whatever rank took them */
        for (rank = 0; rank < world; rank++)
          for (j = 0; j <= k; j++)
            taken[gst_spdl_batch_plan_rank_batch (plan, 0, rank, world,
                    j)] = 1;
        fail_unless (gst_spdl_batch_plan_find (plan, resume, &resumed));
        fail_unless_equals_uint64 (resumed, (k + 1) * world);
        share2 = gst_spdl_order_rank_share (plan->n_batches - resumed, world2,
            TRUE);
        for (rank = 0; rank < world2; rank++)
          for (j = 0; j < share2; j++) {
            b = gst_spdl_batch_plan_rank_batch (plan, resumed, rank, world2, j);
            fail_if (taken[b], "batch %" G_GUINT64_FORMAT " twice", b);
            taken[b] = 1;
          }
        for (b = 0; b < resumed + share2 * world2; b++)
          fail_unless (taken[b], "batch %" G_GUINT64_FORMAT " lost", b);
        g_free (taken);
      }
    }
  gst_spdl_batch_plan_free (plan);
  g_free (d);
}

GST_END_TEST;

/* What buckets are for: batches of 1 to 20 s utterances padded to their
 * longest are nearly half zeros at random, a few percent with buckets. */
static gdouble
padding_fraction (const gdouble * d, guint n, guint buckets)
{
  GstSpdlBucketParams p = params_of (1, 0, buckets, 1000, 32, 0);
  GstSpdlBatchPlan *plan = plan_new (d, n, &p);
  gdouble total = 0, padding = 0;
  guint64 b, i;

  for (b = 0; b < plan->n_batches; b++) {
    gdouble longest = 0, seconds = 0;
    guint64 count = plan->starts[b + 1] - plan->starts[b];

    for (i = plan->starts[b]; i < plan->starts[b + 1]; i++) {
      seconds += d[plan->samples[i]];
      longest = MAX (longest, d[plan->samples[i]]);
    }
    total += longest * count;
    padding += longest * count - seconds;
  }
  gst_spdl_batch_plan_free (plan);
  return padding / total;
}

GST_START_TEST (test_buckets_keep_padding_small)
{
  const guint n = 5000;
  gdouble *d = make_durations (n, 7);

  fail_unless (padding_fraction (d, n, 0) > 0.35);
  fail_unless (padding_fraction (d, n, 30) < 0.08, "%f",
      padding_fraction (d, n, 30));
  g_free (d);
}

GST_END_TEST;

GST_START_TEST (test_empty_epoch)
{
  GstSpdlBucketParams p = params_of (1, 0, 4, 10, 0, 10.0);
  GstSpdlBatchPlan *plan = plan_new (NULL, 0, &p);
  guint64 b;

  fail_unless_equals_uint64 (plan->n_batches, 0);
  fail_unless (gst_spdl_batch_plan_find (plan, 0, &b));
  fail_unless_equals_uint64 (b, 0);
  gst_spdl_batch_plan_free (plan);
}

GST_END_TEST;

/* Samples skipped at their turn (negative durations: bad spans, over
 * max-span) ride in the batch of the next sample: every batch delivers
 * one at least, its count and seconds are of the delivered ones alone,
 * and they set no bucket boundary; only skipped ones: one batch. */
GST_START_TEST (test_skipped_samples_ride_along)
{
  const guint n = 600;
  gdouble *d = make_durations (n, 8);
  guint8 *seen = g_new0 (guint8, n);
  GstSpdlBucketParams p = params_of (3, 0, 3, 50, 5, 30.0);
  GstSpdlBatchPlan *plan;
  const gdouble bad[] = { -1, 1, -1, 3, 2, 4, -1 };
  gdouble *bounds;
  guint i, nb;
  guint64 b;

  /* a third skipped, the longest of them far over the others */
  for (i = 0; i < n; i += 3)
    d[i] = -1;
  plan = plan_new (d, n, &p);
  fail_unless_equals_int (plan->n_samples, n);
  fail_unless_equals_uint64 (plan->starts[plan->n_batches], n);
  fail_unless (plan->max_batch <= 5);
  for (b = 0; b < plan->n_batches; b++) {
    guint delivered = 0;
    gdouble seconds = 0;
    guint64 k;

    for (k = plan->starts[b]; k < plan->starts[b + 1]; k++) {
      guint s = plan->samples[k];

      fail_if (seen[s], "sample %u twice", s);
      seen[s] = 1;
      if (d[s] >= 0) {
        delivered++;
        seconds += d[s];
      }
    }
    fail_unless (delivered >= 1, "batch %" G_GUINT64_FORMAT " delivers "
        "nothing", b);
    fail_unless (delivered <= 5);
    fail_unless (delivered == 1 || seconds <= 30.0 + 1e-6);
  }
  gst_spdl_batch_plan_free (plan);

  bounds = gst_spdl_buckets_boundaries (bad, G_N_ELEMENTS (bad), 2, &nb);
  fail_unless_equals_int (nb, 1);
  fail_unless_equals_float (bounds[0], 3);
  g_free (bounds);
  for (i = 0; i < n; i++)
    d[i] = -1;
  plan = plan_new (d, n, &p);
  fail_unless_equals_uint64 (plan->n_batches, 1);
  fail_unless_equals_int (plan->n_samples, n);
  gst_spdl_batch_plan_free (plan);
  g_free (seen);
  g_free (d);
}

GST_END_TEST;

static Suite *
spdlbuckets_suite (void)
{
  Suite *s = suite_create ("spdlbuckets");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_boundaries_are_quantiles);
  tcase_add_test (tc, test_every_sample_once_per_epoch);
  tcase_add_test (tc, test_batch_within_one_bucket);
  tcase_add_test (tc, test_batch_duration_is_respected);
  tcase_add_test (tc, test_batch_holds_as_many_as_fit);
  tcase_add_test (tc, test_same_seed_and_epoch_same_batches);
  tcase_add_test (tc, test_batches_pinned);
  tcase_add_test (tc, test_ranks_get_whole_batches_equally);
  tcase_add_test (tc, test_resume_from_every_offset);
  tcase_add_test (tc, test_buckets_keep_padding_small);
  tcase_add_test (tc, test_empty_epoch);
  tcase_add_test (tc, test_skipped_samples_ride_along);
  return s;
}

SPDL_CHECK_MAIN (spdlbuckets);
