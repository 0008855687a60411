/* GStreamer SPDL plugin: dataset source
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_SRC_H__
#define __GST_SPDL_SRC_H__

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>
#include "gstspdlrecord.h"

#include "gstspdlcoco.h"
#include "gstspdldataset.h"
#include "gstspdlhttp.h"
#include "gstspdlstats.h"
#include "gstspdlbuckets.h"
#include "gstspdlerrors.h"

G_BEGIN_DECLS

#define GST_TYPE_SPDL_SRC (gst_spdl_src_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlSrc, gst_spdl_src, GST, SPDL_SRC, GstPushSrc)

/* values: GstSpdlShardsRemoteReads (gstspdlshards.h) */
#define GST_TYPE_SPDL_REMOTE_READS (gst_spdl_remote_reads_get_type ())
GType gst_spdl_remote_reads_get_type (void);
#define GST_TYPE_SPDL_SHARD_LEARN (gst_spdl_shard_learn_get_type ())
GType gst_spdl_shard_learn_get_type (void);

/* How remote shards without index files are learned (shard-learn). */
typedef enum
{
  GST_SPDL_SHARD_LEARN_STREAM,
  GST_SPDL_SHARD_LEARN_HEADERS,
} GstSpdlShardLearnMode;

typedef struct _GstSpdlReadSlot GstSpdlReadSlot;

struct _GstSpdlSrc
{
  GstPushSrc parent;

  /* properties, under the object lock */
  gchar *location;
  gchar *extensions;
  gboolean shuffle;
  guint64 seed;
  gint num_epochs;
  guint start_epoch;
  guint shard_index;
  guint num_shards;
  gboolean drop_uneven;
  guint64 start_index;
  guint64 start_offset;
  gboolean elastic;
  gint remote_reads;            /* GstSpdlShardsRemoteReads */
  gint shard_learn;             /* GstSpdlShardLearnMode */
  guint64 shuffle_buffer_bytes;
  guint prefetch;
  guint64 prefetch_threshold;   /* us; reads slower on average go ahead */
  guint64 max_file_size;
  gint max_errors;
  guint warning_limit;
  guint64 errors;               /* read-only, counted while running */
  guint64 errors_by_reason[GST_SPDL_READ_N_ERRORS];
  guint64 epoch_errors[GST_SPDL_READ_N_ERRORS];    /* current epoch */
  GstSpdlWarnLimiter warn_limiter;
  GstSpdlStats stats;

  /* streaming state, set up in start() */
  guint64 active_max_file_size;
  guint64 first_offset;         /* global samples of start-epoch consumed */
  gchar *config_strings[11];    /* tar shards: what their config points to */
  GstSpdlDataset *dataset;
  gchar *dataset_fingerprint;   /* of the last listing, object lock */
  guint64 samples_per_epoch;    /* this shard's share of one epoch */
  guint32 *permutation;         /* current epoch's order, NULL = identity */
  guint permutation_epoch;
  guint next_epoch;             /* cursor: next sample to schedule */
  guint64 next_position;
  guint current_epoch;          /* epoch of the last sample pushed */
  guint64 pushed_in_epoch;
  gboolean epoch_resumed;       /* the current epoch began mid-way */
  gboolean started_epoch;
  /* batches by duration (gstspdlbuckets.h): properties under the object
   * lock, then the epoch's plan and this rank's cursor in it */
  guint buckets;
  guint bucket_window;
  gdouble batch_duration;
  guint batch_size;
  gdouble max_span;
  gdouble active_max_span;      /* as start() found it */
  gboolean batched;             /* the order is whole batches (start()) */
  GstSpdlBucketParams bucket_params;    /* as start() found them */
  gdouble *durations;           /* each sample's seconds, from the listing */
  guint16 *sample_buckets;      /* each sample's bucket */
  GstSpdlBatchPlan *batch_plan;
  guint batch_plan_epoch;
  guint64 plan_rank_batches;    /* this rank's share of the plan's epoch */
  guint64 plan_rank_samples;
  guint64 first_batch;          /* batches of start-epoch consumed */
  guint64 batches_per_epoch;    /* this rank's, in the first epoch */
  guint64 next_batch;           /* cursor: this rank's batch ... */
  guint64 next_in_batch;        /* ... and the sample in it */

  /* read-ahead: slots in order; the head is the next one to push */
  GThreadPool *readers;
  GQueue slots;
  GMutex read_lock;
  GCond read_cond;
  gboolean flushing;
  gdouble read_us;              /* running mean of read times, read_lock */

  /* tar shards: samples come from this provider instead (gstspdlshards.h) */
  guint shuffle_buffer;
  struct _GstSpdlShards *shards;
  gint shard_order;             /* of the last shards opened: 1 elastic,
                                 * 0 contiguous, -1 none (under the lock) */
  const gchar *shard_index_source;      /* ... their index's source */
  gchar *shard_cache;           /* property: NULL default, "" none */
  gchar *image_key;             /* tar shards' rules: NULL the defaults */
  gchar *label_key;
  gchar *label_field;
  /* the sample record (gstspdlrecord.h): properties, then what start()
   * parsed of them */
  gchar *fields;
  gint missing_field;           /* GstSpdlMissingPolicy */
  guint64 max_field_size;
  gchar *path_column;
  GstSpdlRecord *record;        /* NULL: no field */
  GstSpdlMissingPolicy record_policy;   /* missing-field, at start: also
                                         * a span manifest's bad entries' */
  guint64 active_max_field_size;
  gboolean read_sidecars;       /* a folder's fields: read beside each */
  /* a COCO instances file (gstspdlcoco.h): properties, then what start()
   * read; its counts by reason under the object lock */
  gchar *annotations;
  gint empty_images;            /* GstSpdlEmptyImages */
  GstSpdlCoco *coco;
  guint64 annotation_counts[GST_SPDL_COCO_N_REASONS];
  guint64 annotated_images, annotations_delivered;
  /* remote data (gstspdlhttp.h): properties under the object lock */
  guint http_requests;
  guint http_connect_timeout;
  guint http_timeout;
  guint http_retries;
  guint http_low_speed_limit;
  guint http_low_speed_time;
  /* stops a start's listing, index reads and learning (the "cancel"
   * action signal); reset when the element stops */
  struct _GstSpdlHttpCanceller *canceller;
  guint64 max_bytes_in_flight;
  gchar *s3_endpoint;
  gchar *s3_region;
  gchar *s3_profile;
  gchar *s3_access_key;
  gchar *s3_secret_key;
  gchar *s3_session_token;
  gboolean s3_virtual_host;
  gchar *ca_file;
  /* single objects of a remote dataset; set and cleared under the object
   * lock (the stats read it) */
  struct _GstSpdlHttp *http;
  GstSpdlHttpStats http_stats;  /* the last known, object lock */
  gboolean have_http_stats;
};

GST_ELEMENT_REGISTER_DECLARE (spdlsrc);

G_END_DECLS

#endif /* __GST_SPDL_SRC_H__ */
