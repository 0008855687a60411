/* GStreamer SPDL: per-element statistics
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_STATS_H__
#define __GST_SPDL_STATS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_SPDL_STATS_BUCKETS 96

/* Counts and a log-scale histogram of per-item processing times (buckets
 * 2^(1/4) apart from 1 us), cheap enough to record every item from any
 * thread. Read through the elements' "stats" property. */
typedef struct
{
  GMutex lock;
  guint64 items_in;
  guint64 items_out;
  guint64 busy_ns;
  guint64 timed;
  guint64 histogram[GST_SPDL_STATS_BUCKETS];
  guint64 cpu_ns;               /* the workers' own CPU time, if recorded */
  guint64 cpu_timed;
  gint64 started_us;            /* monotonic, at reset */
} GstSpdlStats;

void gst_spdl_stats_init (GstSpdlStats * stats);
void gst_spdl_stats_clear (GstSpdlStats * stats);
void gst_spdl_stats_reset (GstSpdlStats * stats);
void gst_spdl_stats_add_in (GstSpdlStats * stats, guint64 n);
void gst_spdl_stats_add_out (GstSpdlStats * stats, guint64 n);
/* one item took @ns of work */
void gst_spdl_stats_record (GstSpdlStats * stats, guint64 ns);
/* the same, and @cpu_ns of its thread's CPU time (the work without the
 * time the thread waited for a core) */
void gst_spdl_stats_record_with_cpu (GstSpdlStats * stats, guint64 ns,
    guint64 cpu_ns);

/* "spdl-stats" with items-in, items-out, busy (ns), mean, p90, p99 (ns per
 * item), elapsed (ns since start), and cpu, cpu-mean (ns, ns per item)
 * where CPU time was recorded; callers add their own fields. */
GstStructure *gst_spdl_stats_to_structure (GstSpdlStats * stats);

static inline guint64
gst_spdl_now_ns (void)
{
  return (guint64) g_get_monotonic_time () * 1000;
}

/* CPU time of the calling thread, ns (0 where the clock is missing) */
guint64 gst_spdl_thread_cpu_ns (void);

G_END_DECLS

#endif /* __GST_SPDL_STATS_H__ */
