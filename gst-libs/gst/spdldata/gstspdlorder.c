/* GStreamer SPDL: the order of an epoch's samples, and each rank's share
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Pure functions of (seed, epoch, rank, world size, counts): what makes
 * an order reproducible and resumable on any number of ranks. spdlsrc's
 * folders and the shards provider use the same rules. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlorder.h"
#include "gstspdlrandom.h"

void
gst_spdl_order_permutation (guint32 * perm, guint n, guint64 seed,
    guint epoch, gint64 stream)
{
  GstSpdlRng rng;
  guint i;

  for (i = 0; i < n; i++)
    perm[i] = i;
  if (stream < 0 || n < 2)
    return;
  /* Fisher-Yates from a generator keyed by (seed, epoch, stream) alone */
  gst_spdl_rng_init (&rng, seed, epoch, (guint64) stream);
  for (i = n - 1; i > 0; i--) {
    guint j = (guint) gst_spdl_rng_below (&rng, (guint64) i + 1);
    guint32 t = perm[i];

    perm[i] = perm[j];
    perm[j] = t;
  }
}

guint64
gst_spdl_order_rank_share (guint64 total, guint world_size,
    gboolean drop_uneven)
{
  world_size = MAX (world_size, 1);
  if (drop_uneven)
    return total / world_size;
  return (total + world_size - 1) / world_size;
}

GArray *
gst_spdl_order_contiguous_plan (const guint64 * counts, guint n_shards,
    const guint32 * order, guint rank, guint world_size, gboolean drop_uneven)
{
  GArray *plan = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint64 total = 0, per, position, left, start = 0;
  guint k = 0, i;

  for (i = 0; i < n_shards; i++)
    total += counts[i];
  world_size = MAX (world_size, 1);
  if (total == 0)
    return plan;
  per = gst_spdl_order_rank_share (total, world_size, drop_uneven);
  position = (guint64) rank *per % total;
  left = per;
  /* the shard (in this epoch's order) holding @position */
  while (start + counts[order[k]] <= position)
    start += counts[order[k++]];
  while (left > 0) {
    guint64 shard = order[k], first = position - start;
    guint64 take = MIN (left, counts[shard] - first);
    guint64 triple[3] = { shard, first, take };

    if (take > 0)
      g_array_append_vals (plan, triple, 3);
    left -= take;
    position += take;
    start += counts[shard];
    if (++k == n_shards) {      /* wrap around to pad the last rank */
      k = 0;
      start = 0;
      position = 0;
    }
  }
  return plan;
}

guint64 *
gst_spdl_order_global (const guint64 * counts, guint n_shards,
    guint64 seed, guint epoch, gboolean shuffle, guint shuffle_buffer)
{
  guint32 *order = g_new (guint32, MAX (n_shards, 1));
  guint64 *offsets = g_new0 (guint64, MAX (n_shards, 1)), total = 0, out = 0;
  guint64 *p, *mix = NULL, mixed = 0;
  guint window = shuffle && shuffle_buffer > 1 ? shuffle_buffer : 0;
  GstSpdlRng rng;
  guint i;

  gst_spdl_order_permutation (order, n_shards, seed, epoch,
      shuffle ? GST_SPDL_ORDER_STREAM_SHARDS : GST_SPDL_ORDER_IDENTITY);
  for (i = 0; i < n_shards; i++) {
    offsets[i] = total;
    total += counts[i];
  }
  p = g_new (guint64, MAX (total, 1));
  if (window) {
    mix = g_new (guint64, window);
    gst_spdl_rng_init (&rng, seed, epoch, GST_SPDL_ORDER_STREAM_MIX);
  }
  /* the shards' samples in shard order, through the shuffle buffer: the
   * same mixing a reader's buffer does, over indices, no data needed */
  for (i = 0; i < n_shards; i++) {
    guint64 k, first = offsets[order[i]];

    for (k = 0; k < counts[order[i]]; k++) {
      guint64 j;

      if (!window) {
        p[out++] = first + k;
        continue;
      }
      if (mixed < window) {
        mix[mixed++] = first + k;
        continue;
      }
      j = gst_spdl_rng_below (&rng, mixed);
      p[out++] = mix[j];
      mix[j] = first + k;
    }
  }
  while (mixed > 0) {
    guint64 j = gst_spdl_rng_below (&rng, mixed);
    p[out++] = mix[j];
    mix[j] = mix[--mixed];
  }
  g_free (mix);
  g_free (offsets);
  g_free (order);
  return p;
}
