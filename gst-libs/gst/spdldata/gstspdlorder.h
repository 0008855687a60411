/* GStreamer SPDL: the order of an epoch's samples, and each rank's share
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_ORDER_H__
#define __GST_SPDL_ORDER_H__

#include <glib.h>

G_BEGIN_DECLS

/* Streams of random numbers of one (seed, epoch), apart from each other
 * (and from spdldecode's crops). A rank's shuffle buffer over its
 * contiguous part uses GST_SPDL_ORDER_STREAM_MIX + rank. */
#define GST_SPDL_ORDER_IDENTITY (-1)
#define GST_SPDL_ORDER_STREAM_SAMPLES 0
#define GST_SPDL_ORDER_STREAM_SHARDS 1
#define GST_SPDL_ORDER_STREAM_MIX 2
/* the shuffle of an epoch's batches (gstspdlbuckets.h): past every rank's
 * MIX + rank */
#define GST_SPDL_ORDER_STREAM_BATCHES (G_GINT64_CONSTANT (1) << 48)

/* @perm[0..n-1]: a permutation of 0..n-1 that depends on (seed, epoch,
 * stream) alone; the identity for GST_SPDL_ORDER_IDENTITY. */
void gst_spdl_order_permutation (guint32 * perm, guint n, guint64 seed,
    guint epoch, gint64 stream);

/* One rank's share of @total positions on @world_size ranks: floor
 * (drop-uneven) or ceil (the last ranks wrap around to the start, as
 * DistributedSampler pads), so every rank yields the same count. Rank r
 * takes positions O + r, O + r + W, ... of the epoch's global order. */
guint64 gst_spdl_order_rank_share (guint64 total, guint world_size,
    gboolean drop_uneven);

/* The contiguous split of shards: the segments of the shard stream (shards
 * in @order, each @counts[shard] samples) rank @rank reads in an epoch, an
 * array of guint64 triples (shard, first, count). */
GArray *gst_spdl_order_contiguous_plan (const guint64 * counts,
    guint n_shards, const guint32 * order, guint rank, guint world_size,
    gboolean drop_uneven);

/* The elastic order of shards: an epoch's N global sample indices,
 * p(0..N-1) (g_free() it), the shards in an order from (seed, epoch)
 * through a shuffle buffer of @shuffle_buffer indices. */
guint64 *gst_spdl_order_global (const guint64 * counts, guint n_shards,
    guint64 seed, guint epoch, gboolean shuffle, guint shuffle_buffer);

G_END_DECLS

#endif /* __GST_SPDL_ORDER_H__ */
