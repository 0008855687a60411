/* GStreamer SPDL plugin: pipeline statistics tracer
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_STATS_TRACER_H__
#define __GST_SPDL_STATS_TRACER_H__

#include <gst/gst.h>
#include <gst/gsttracer.h>

G_BEGIN_DECLS

#define GST_TYPE_SPDL_STATS_TRACER (gst_spdl_stats_tracer_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlStatsTracer, gst_spdl_stats_tracer, GST,
    SPDL_STATS_TRACER, GstTracer)

struct _GstSpdlStatsTracer
{
  GstTracer parent;

  guint interval_ms;
  gboolean print;

  GMutex lock;
  GCond cond;
  GHashTable *elements;         /* GstElement* -> ElementCounters */
  GThread *thread;
  gboolean stopping;
};

G_END_DECLS

#endif /* __GST_SPDL_STATS_TRACER_H__ */
