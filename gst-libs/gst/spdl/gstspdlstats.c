/* GStreamer SPDL: per-element statistics
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlstats.h"

#include <time.h>

#include <math.h>
#include <string.h>

#define BUCKETS_PER_OCTAVE 4.0
#define FIRST_BUCKET_NS 1000.0

void
gst_spdl_stats_init (GstSpdlStats * stats)
{
  memset (stats, 0, sizeof (*stats));
  g_mutex_init (&stats->lock);
  stats->started_us = g_get_monotonic_time ();
}

void
gst_spdl_stats_clear (GstSpdlStats * stats)
{
  g_mutex_clear (&stats->lock);
}

void
gst_spdl_stats_reset (GstSpdlStats * stats)
{
  g_mutex_lock (&stats->lock);
  stats->items_in = stats->items_out = stats->busy_ns = stats->timed = 0;
  stats->cpu_ns = stats->cpu_timed = 0;
  memset (stats->histogram, 0, sizeof (stats->histogram));
  stats->started_us = g_get_monotonic_time ();
  g_mutex_unlock (&stats->lock);
}

void
gst_spdl_stats_add_in (GstSpdlStats * stats, guint64 n)
{
  g_mutex_lock (&stats->lock);
  stats->items_in += n;
  g_mutex_unlock (&stats->lock);
}

void
gst_spdl_stats_add_out (GstSpdlStats * stats, guint64 n)
{
  g_mutex_lock (&stats->lock);
  stats->items_out += n;
  g_mutex_unlock (&stats->lock);
}

static guint
bucket_of (guint64 ns)
{
  gdouble b;

  if (ns <= FIRST_BUCKET_NS)
    return 0;
  b = log2 (ns / FIRST_BUCKET_NS) * BUCKETS_PER_OCTAVE + 1;
  return MIN ((guint) b, GST_SPDL_STATS_BUCKETS - 1);
}

/* upper edge of a bucket, in ns */
static guint64
bucket_limit (guint b)
{
  return (guint64) (FIRST_BUCKET_NS * exp2 (b / BUCKETS_PER_OCTAVE));
}

/* called with the lock */
static void
record_locked (GstSpdlStats * stats, guint64 ns)
{
  stats->busy_ns += ns;
  stats->timed++;
  stats->histogram[bucket_of (ns)]++;
}

void
gst_spdl_stats_record (GstSpdlStats * stats, guint64 ns)
{
  g_mutex_lock (&stats->lock);
  record_locked (stats, ns);
  g_mutex_unlock (&stats->lock);
}

void
gst_spdl_stats_record_with_cpu (GstSpdlStats * stats, guint64 ns,
    guint64 cpu_ns)
{
  g_mutex_lock (&stats->lock);
  record_locked (stats, ns);
  stats->cpu_ns += cpu_ns;
  stats->cpu_timed++;
  g_mutex_unlock (&stats->lock);
}

guint64
gst_spdl_thread_cpu_ns (void)
{
  struct timespec ts;

  if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static guint64
percentile (const guint64 * histogram, guint64 total, gdouble q)
{
  guint64 want = (guint64) ceil (total * q), seen = 0;
  guint b;

  for (b = 0; b < GST_SPDL_STATS_BUCKETS; b++) {
    seen += histogram[b];
    if (seen >= want && want > 0)
      return bucket_limit (b);
  }
  return 0;
}

GstStructure *
gst_spdl_stats_to_structure (GstSpdlStats * stats)
{
  GstStructure *s;

  g_mutex_lock (&stats->lock);
  s = gst_structure_new ("spdl-stats",
      "items-in", G_TYPE_UINT64, stats->items_in,
      "items-out", G_TYPE_UINT64, stats->items_out,
      "busy", G_TYPE_UINT64, stats->busy_ns,
      "mean", G_TYPE_UINT64, stats->timed ? stats->busy_ns / stats->timed : 0,
      "p90", G_TYPE_UINT64, percentile (stats->histogram, stats->timed, 0.90),
      "p99", G_TYPE_UINT64, percentile (stats->histogram, stats->timed, 0.99),
      "elapsed", G_TYPE_UINT64,
      (guint64) (g_get_monotonic_time () - stats->started_us) * 1000, NULL);
  if (stats->cpu_timed)
    gst_structure_set (s, "cpu", G_TYPE_UINT64, stats->cpu_ns,
        "cpu-mean", G_TYPE_UINT64, stats->cpu_ns / stats->cpu_timed, NULL);
  g_mutex_unlock (&stats->lock);
  return s;
}
