/* GStreamer SPDL: batches of samples of similar duration (bucketing)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Lhotse's DynamicBucketingSampler and NeMo's bucketing keep padding small
 * by batching utterances of similar length, drawn from a shuffle window,
 * and batches by total seconds rather than by count. Here the same as a
 * pure function of (durations, seed, epoch, settings): no state carried
 * between epochs, so an epoch's batches are known before it starts and a
 * resumed run finds its place from a sample offset. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlbuckets.h"
#include "gstspdlorder.h"
#include "gstspdlrandom.h"

#include <stdlib.h>
#include <string.h>

/* a relative slack on total seconds: sums of decimal durations (0.1 +
 * 0.2) must not push a batch that fits exactly over its limit */
#define DURATION_SLACK 1e-9

static int
compare_doubles (const void *a, const void *b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

gdouble *
gst_spdl_buckets_boundaries (const gdouble * durations, guint n,
    guint buckets, guint * n_boundaries)
{
  gdouble *sorted, *bounds;
  guint k, i;

  *n_boundaries = 0;
  if (buckets < 2 || n == 0)
    return NULL;
  /* the samples skipped at their turn (negative) split nothing */
  sorted = g_new (gdouble, n);
  for (k = 0, i = 0; i < n; i++)
    if (durations[i] >= 0)
      sorted[k++] = durations[i];
  if (k == 0) {
    g_free (sorted);
    return NULL;
  }
  n = k;
  qsort (sorted, n, sizeof (gdouble), compare_doubles);
  bounds = g_new (gdouble, buckets - 1);
  for (k = 1; k < buckets; k++)
    bounds[k - 1] = sorted[(guint64) k * n / buckets];
  g_free (sorted);
  *n_boundaries = buckets - 1;
  return bounds;
}

/* number of boundaries <= d (binary search: they are ascending) */
static guint
bucket_of (const gdouble * bounds, guint n_bounds, gdouble d)
{
  guint lo = 0, hi = n_bounds;

  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;

    if (bounds[mid] <= d)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

guint16 *
gst_spdl_buckets_assign (const gdouble * durations, guint n, guint buckets)
{
  guint n_bounds, i;
  gdouble *bounds = gst_spdl_buckets_boundaries (durations, n,
      MIN (buckets, G_MAXUINT16), &n_bounds);
  guint16 *of = g_new (guint16, MAX (n, 1));

  for (i = 0; i < n; i++)
    of[i] = (guint16) bucket_of (bounds, n_bounds, durations[i]);
  g_free (bounds);
  return of;
}

/* The batches a window closed, their samples in one pool. */
typedef struct
{
  GArray *pool;                 /* guint32 dataset indices */
  /* guint64 triples: start in pool, length, samples counted (delivered) */
  GArray *closed;
} WindowBatches;

typedef struct
{
  GArray *samples;              /* guint32: the bucket's open batch */
  guint counted;                /* of them, those not skipped */
  gdouble seconds;
} OpenBatch;

static void
close_batch (OpenBatch * open, WindowBatches * window)
{
  guint64 triple[3] = { window->pool->len, open->samples->len,
    open->counted
  };

  if (open->samples->len == 0)
    return;
  g_array_append_vals (window->pool, open->samples->data,
      open->samples->len);
  g_array_append_vals (window->closed, triple, 3);
  g_array_set_size (open->samples, 0);
  open->counted = 0;
  open->seconds = 0;
}

/* The window's batches, shuffled, onto the plan. */
static void
emit_window (GstSpdlBatchPlan * plan, GArray * starts, WindowBatches * window,
    GstSpdlRng * rng, gboolean shuffle)
{
  guint64 *triples = (guint64 *) window->closed->data;
  guint n = window->closed->len / 3, i, k;
  guint32 *pool = (guint32 *) window->pool->data;

  if (shuffle) {
    for (i = n; i > 1; i--) {
      guint j = (guint) gst_spdl_rng_below (rng, i);

      for (k = 0; k < 3; k++) {
        guint64 t = triples[3 * (i - 1) + k];

        triples[3 * (i - 1) + k] = triples[3 * j + k];
        triples[3 * j + k] = t;
      }
    }
  }
  for (i = 0; i < n; i++) {
    guint64 start = triples[3 * i], length = triples[3 * i + 1], end;

    memcpy (plan->samples + plan->n_samples, pool + start,
        length * sizeof (guint32));
    plan->n_samples += length;
    plan->max_batch = MAX (plan->max_batch, (guint) triples[3 * i + 2]);
    end = plan->n_samples;
    g_array_append_val (starts, end);
  }
  g_array_set_size (window->pool, 0);
  g_array_set_size (window->closed, 0);
}

GstSpdlBatchPlan *
gst_spdl_batch_plan_new (const gdouble * durations, const guint16 * buckets,
    guint n, const GstSpdlBucketParams * params)
{
  GstSpdlBatchPlan *plan = g_new0 (GstSpdlBatchPlan, 1);
  guint n_buckets = buckets ? CLAMP (params->buckets, 1, G_MAXUINT16) : 1;
  guint window, i, b;
  gdouble limit = params->batch_duration * (1 + DURATION_SLACK);
  guint32 *perm = g_new (guint32, MAX (n, 1));
  GArray *starts = g_array_new (FALSE, FALSE, sizeof (guint64));
  WindowBatches closed;
  GArray *pending;              /* guint32: skipped samples yet to place */
  OpenBatch *open;
  guint64 zero = 0;
  GstSpdlRng rng;

  window = params->window > 0 ? params->window : MAX (n, 1);
  gst_spdl_order_permutation (perm, n, params->seed, params->epoch,
      params->shuffle ? GST_SPDL_ORDER_STREAM_SAMPLES :
      GST_SPDL_ORDER_IDENTITY);
  gst_spdl_rng_init (&rng, params->seed, params->epoch,
      GST_SPDL_ORDER_STREAM_BATCHES);
  plan->samples = g_new (guint32, MAX (n, 1));
  g_array_append_val (starts, zero);
  pending = g_array_new (FALSE, FALSE, sizeof (guint32));
  closed.pool = g_array_new (FALSE, FALSE, sizeof (guint32));
  closed.closed = g_array_new (FALSE, FALSE, sizeof (guint64));
  open = g_new0 (OpenBatch, n_buckets);
  for (b = 0; b < n_buckets; b++)
    open[b].samples = g_array_new (FALSE, FALSE, sizeof (guint32));

  for (i = 0; i < n; i++) {
    guint32 s = perm[i];
    gdouble d = durations[s];
    OpenBatch *o = &open[buckets ? buckets[s] : 0];

    if (d < 0) {
      /* skipped at its turn: it rides in the next sample's batch */
      g_array_append_val (pending, s);
    } else {
      /* the next sample that does not fit closes its bucket's batch */
      if (o->counted > 0 &&
          ((params->batch_size > 0 && o->counted >= params->batch_size)
              || (params->batch_duration > 0 && o->seconds + d > limit)))
        close_batch (o, &closed);
      g_array_append_vals (o->samples, pending->data, pending->len);
      g_array_set_size (pending, 0);
      g_array_append_val (o->samples, s);
      o->counted++;
      o->seconds += d;
      if (params->batch_size > 0 && o->counted >= params->batch_size)
        close_batch (o, &closed);
    }
    if ((i + 1) % window == 0 || i + 1 == n) {
      if (i + 1 == n)           /* the epoch's last batches */
        for (b = 0; b < n_buckets; b++)
          close_batch (&open[b], &closed);
      emit_window (plan, starts, &closed, &rng, params->shuffle);
    }
  }
  /* skipped samples after the last one delivered: in the last batch (all
   * of them one batch when none is delivered) */
  if (pending->len > 0) {
    guint64 end;

    memcpy (plan->samples + plan->n_samples, pending->data,
        pending->len * sizeof (guint32));
    plan->n_samples += pending->len;
    end = plan->n_samples;
    if (starts->len > 1)
      g_array_index (starts, guint64, starts->len - 1) = end;
    else
      g_array_append_val (starts, end);
  }
  g_array_free (pending, TRUE);

  plan->n_batches = starts->len - 1;
  plan->starts = (guint64 *) g_array_free (starts, FALSE);
  for (b = 0; b < n_buckets; b++)
    g_array_free (open[b].samples, TRUE);
  g_free (open);
  g_array_free (closed.pool, TRUE);
  g_array_free (closed.closed, TRUE);
  g_free (perm);
  return plan;
}

void
gst_spdl_batch_plan_free (GstSpdlBatchPlan * plan)
{
  if (plan == NULL)
    return;
  g_free (plan->samples);
  g_free (plan->starts);
  g_free (plan);
}

gboolean
gst_spdl_batch_plan_find (const GstSpdlBatchPlan * plan, guint64 offset,
    guint64 * batch)
{
  guint64 lo = 0, hi = plan->n_batches;

  /* the first start >= offset */
  while (lo < hi) {
    guint64 mid = lo + (hi - lo) / 2;

    if (plan->starts[mid] < offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (plan->starts[lo] != offset)
    return FALSE;
  *batch = lo;
  return TRUE;
}

guint64
gst_spdl_batch_plan_rank_batch (const GstSpdlBatchPlan * plan,
    guint64 first, guint rank, guint world_size, guint64 k)
{
  guint64 b = first + rank + k * MAX (world_size, 1);

  return plan->n_batches > 0 ? b % plan->n_batches : 0;
}

guint64
gst_spdl_batch_plan_resume_offset (const GstSpdlBatchPlan * plan,
    guint64 first, guint world_size, guint64 k)
{
  guint64 b = first + (k + 1) * MAX (world_size, 1);

  return plan->starts[MIN (b, plan->n_batches)];
}
