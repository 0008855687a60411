/* GStreamer SPDL: batches of samples of similar duration (bucketing)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_BUCKETS_H__
#define __GST_SPDL_BUCKETS_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  guint64 seed;
  guint epoch;
  gboolean shuffle;             /* FALSE: listing order, batches in turn */
  guint buckets;                /* duration buckets; 0 or 1: one */
  guint window;                 /* samples per shuffle window; 0: the epoch */
  guint batch_size;             /* most samples per batch; 0: no limit */
  gdouble batch_duration;       /* most seconds per batch; 0: no limit */
} GstSpdlBucketParams;

/* An epoch's batches: the global order of its samples with each batch's
 * samples contiguous, batch b being samples[starts[b] .. starts[b + 1]). */
typedef struct _GstSpdlBatchPlan
{
  guint32 *samples;             /* dataset indices, n_samples of them */
  guint n_samples;
  guint64 *starts;              /* n_batches + 1 offsets into samples */
  guint64 n_batches;
  guint max_batch;              /* the most samples one batch delivers */
} GstSpdlBatchPlan;

/* The @buckets - 1 boundaries (seconds, ascending) that split @durations
 * (@n of them; negative ones, skipped samples, left out) into buckets of
 * equal counts: boundary k is the (k x n / buckets)-th smallest duration. A duration d is in bucket
 * "number of boundaries <= d". NULL (and 0) for fewer than two buckets. */
gdouble *gst_spdl_buckets_boundaries (const gdouble * durations, guint n,
    guint buckets, guint * n_boundaries);
/* Each of the @n samples' bucket (0 .. @buckets - 1) by those boundaries:
 * they depend on the dataset alone, computed once for every epoch. */
guint16 *gst_spdl_buckets_assign (const gdouble * durations, guint n,
    guint buckets);

/* The batches of epoch @params->epoch of @n samples of @durations
 * (seconds; negative: a sample skipped when its turn comes, a bad span or
 * one over max-span, which rides in the batch of the next sample of the
 * order, counted in neither its size nor its seconds, so that no batch
 * is of skipped samples alone) in buckets @buckets
 * (gst_spdl_buckets_assign() with
 * @params->buckets; NULL: one bucket), a function of these alone: the
 * samples permuted from (seed, epoch) (GST_SPDL_ORDER_STREAM_SAMPLES, as
 * spdlsrc's plain shuffle), taken in windows of @params->window; in each
 * window every sample joins its bucket's open batch, which closes when the
 * next sample of that bucket does not fit (batch_size samples, or
 * batch_duration seconds in all: a batch holds at least one sample); the
 * window's closed batches are shuffled (GST_SPDL_ORDER_STREAM_BATCHES) and
 * appended; open batches carry over to the next window, the last window
 * closes them. */
GstSpdlBatchPlan *gst_spdl_batch_plan_new (const gdouble * durations,
    const guint16 * buckets, guint n, const GstSpdlBucketParams * params);
void gst_spdl_batch_plan_free (GstSpdlBatchPlan * plan);

/* The batch that starts at sample offset @offset of the epoch's order
 * (n_batches for the epoch's end); FALSE when @offset is inside a batch
 * or past the end. */
gboolean gst_spdl_batch_plan_find (const GstSpdlBatchPlan * plan,
    guint64 offset, guint64 * batch);

/* Ranks deal whole batches as they deal samples (spdlsrc's rule, at
 * batch granularity): with @first batches consumed, rank r of @world_size
 * takes batches first + r, first + r + W, ..., the share being
 * gst_spdl_order_rank_share (n_batches - first, W, drop_uneven), batches
 * past the end wrapping around to the epoch's first ones. The global
 * batch of rank @rank's @k-th: */
guint64 gst_spdl_batch_plan_rank_batch (const GstSpdlBatchPlan * plan,
    guint64 first, guint rank, guint world_size, guint64 k);
/* The sample offset consumed once every rank took @k + 1 batches (at most
 * the epoch's samples): where a resumed run starts. */
guint64 gst_spdl_batch_plan_resume_offset (const GstSpdlBatchPlan * plan,
    guint64 first, guint world_size, guint64 k);

G_END_DECLS

#endif /* __GST_SPDL_BUCKETS_H__ */
