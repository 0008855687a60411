/* GStreamer SPDL plugin: application sink for batches
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_APP_SINK_H__
#define __GST_SPDL_APP_SINK_H__

#include <gst/gst.h>
#include <gst/app/gstappsink.h>

#include "gstspdlstats.h"

G_BEGIN_DECLS

#define GST_TYPE_SPDL_APP_SINK (gst_spdl_app_sink_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlAppSink, gst_spdl_app_sink, GST, SPDL_APP_SINK,
    GstAppSink)

/* spdlsrc's "spdl-epoch-start" of the epoch being pulled */
typedef struct
{
  gboolean valid;
  guint epoch;
  guint64 samples, offset;
  guint num_shards, shard_index;
} GstSpdlEpochPlan;

struct _GstSpdlAppSink
{
  GstAppSink parent;

  /* stats, under the object lock */
  guint64 batches;
  guint64 epochs;
  guint64 wait_total;           /* ns the consumer waited for batches */
  guint64 wait_max;
  guint64 wait_last;
  GstCaps *last_caps;           /* caps of the last batch pulled */
  GstSpdlStats waits;           /* per batch: how long the consumer waited */
  guint64 pending_wait;         /* waits of pulls that timed out, so far */

  /* resume-state, under the object lock; plan: pulling thread only */
  gboolean have_resume;
  guint resume_epoch;
  guint64 resume_offset;
  GstSpdlEpochPlan plan;

  /* epoch ends in appsink's queue, under epoch_lock: for a consumer of
   * pull-batch, the streaming thread waits while it holds
   * GST_SPDL_APP_SINK_MAX_EPOCHS */
  GMutex epoch_lock;
  guint epochs_queued;
  gboolean batch_consumer;      /* pull-batch used: it pulls epoch ends */
};

/* epoch ends the pipeline may have queued ahead of the application */
#define GST_SPDL_APP_SINK_MAX_EPOCHS 4

GST_ELEMENT_REGISTER_DECLARE (spdlappsink);

G_END_DECLS

#endif /* __GST_SPDL_APP_SINK_H__ */
