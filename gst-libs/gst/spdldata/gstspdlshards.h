/* GStreamer SPDL: WebDataset tar shards as a sample provider
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_SHARDS_H__
#define __GST_SPDL_SHARDS_H__

#include <gst/gst.h>

#include "gstspdlhttp.h"
#include "gstspdlshardlearn.h"
#include "gstspdlfielddata.h"

G_BEGIN_DECLS

/* Reads WebDataset tar shards on a thread of its own and hands out samples
 * in the order of a (seed, epoch): spdlsrc's provider for shard locations.
 *
 * The shards listed by the location's brace range get global sample
 * indices in listing order (shard offset + position in the shard). Each
 * epoch concatenates the shards in an order shuffled from (seed, epoch)
 * into one stream of N samples.
 *
 * The elastic order (with the member index "shards.members" that
 * tools/make-shards writes: every sample's image member as a byte range,
 * and its label; or, for shards without index files, the same learned
 * from them, gstspdlshardlearn.h): the stream goes through a shuffle
 * buffer seeded from (seed, epoch), computed over indices alone, giving
 * the epoch's global order p(0..N-1), whatever the number of ranks; rank r
 * of W reads the members at positions O + r, O + r + W, ... (spdlsrc's
 * rule for folders) by byte ranges (pread, or ranged GETs, http-requests
 * of them at once). Remote shards read by one rank alone (world size 1,
 * or remote_reads "stream", or a server without byte ranges) are each
 * streamed once instead, in the shard order the global order came from,
 * members read ahead of their turn held until then.
 *
 * The contiguous split (only "shards.idx", or elastic off): rank r of W
 * takes stream positions
 * [r * n, r * n + n) with n = floor(N / W) (drop-uneven) or ceil(N / W)
 * (the last rank wraps around to the start), so every rank yields the same
 * number of samples and at most two ranks share a shard. A shuffle buffer
 * then mixes each rank's samples, from (seed, epoch, rank), the first
 * leaving once 100 are in (WebDataset's shuffle(initial=100)). Counts per shard
 * come from the index "shards.idx" next to the shards (written by
 * tools/make-shards), else from a learned index (the samples a stream of
 * each shard yields). */
typedef struct _GstSpdlShards GstSpdlShards;

/* How remote members are read in the elastic order. */
typedef enum
{
  /* ranged GETs, unless this rank reads every sample (world size 1) */
  GST_SPDL_SHARDS_REMOTE_AUTO,
  /* a ranged GET per member (or a few close together) */
  GST_SPDL_SHARDS_REMOTE_RANGES,
  /* each shard holding a member of this rank streamed once an epoch */
  GST_SPDL_SHARDS_REMOTE_STREAM,
} GstSpdlShardsRemoteReads;

typedef struct
{
  const gchar *location;        /* brace pattern: dir/train-{000..009}.tar */
  guint64 seed;
  gboolean shuffle;
  guint shuffle_buffer;         /* samples mixed per rank; 0 or 1: none */
  guint64 shuffle_buffer_bytes; /* images' bytes held at most (0: no
                                 * bound): the contiguous split's buffer,
                                 * members streamed ahead of their turn */
  guint rank;
  guint world_size;
  gboolean drop_uneven;
  guint start_epoch;
  gint num_epochs;              /* -1: forever */
  guint64 start_offset;         /* global positions of the first epoch
                                 * consumed (a multiple of world_size
                                 * without the elastic order) */
  gboolean elastic;             /* the elastic order where indexed */
  GstSpdlShardsRemoteReads remote_reads;
  gboolean learn_by_headers;    /* remote shards without index files
                                 * (gstspdlshardlearn.h: by_headers) */
  guint64 max_member_size;      /* 0: no limit */
  guint queue_size;             /* samples ready ahead of the consumer */
  const gchar *cache_dir;       /* learned member indexes: NULL, the
                                 * default (gstspdlshardlearn.h); "": none */
  /* while a member index is learned (gstspdlshardlearn.h) */
  GstSpdlShardLearnProgressFunc learn_progress;
  gpointer learn_progress_data;
  GstSpdlHttpConfig http;       /* for http(s):// and s3:// shards */
  /* which member is the image and which the label (gstspdlshardindex.h);
   * NULL: the defaults. Index files beside the shards describe the
   * defaults: with any of these set the member index is learned. */
  const gchar *image_key;
  const gchar *label_key;
  const gchar *label_field;
  /* the sample record's fields (gstspdlrecord.h), NULL: none. Each is the
   * group's member whose extension (after the key) is the first of the
   * field's alternatives present; one over @max_field_size (0: no limit)
   * is not read (its error "field-too-large"). The elastic order reads
   * each sample's group around its image member (between the previous
   * and the next indexed member; remotely one range per sample, or per
   * run of consecutive ones, never a streamed shard). */
  const GstSpdlRecord *record;
  guint64 max_field_size;
} GstSpdlShardsConfig;

/* One sample, or a skipped one (@error set, code a GstSpdlReadErrorCode in
 * the domain GST_SPDL_READ_ERROR). */
typedef struct
{
  GstBuffer *buffer;
  GError *error;
  gchar *path;                  /* "shard.tar:key.jpg" (or the shard) */
  guint64 index;
  guint64 position;             /* in the epoch's global order */
  gint label;                   /* -1 without a label member */
  guint epoch;
  gboolean extra;               /* a group that is no sample (@error says
                                 * why): none of the epoch's positions */
  GstSpdlFieldData *fields;     /* config.record's, NULL without one */
  guint n_fields;
} GstSpdlShardSample;

typedef enum
{
  GST_SPDL_SHARDS_SAMPLE,
  GST_SPDL_SHARDS_EOS,
  GST_SPDL_SHARDS_FLUSHING,
} GstSpdlShardsResult;

/* Whether @location names shards (a brace range or a .tar file; .tar.gz
 * and .tgz ones too, refused as compressed when read). */
gboolean gst_spdl_shards_is_location (const gchar * location);

/* Whether the first @len bytes of @name end as a shard's name: ".tar", or
 * ".tar.gz"/".tgz" (compressed: refused when read). */
gboolean gst_spdl_shards_has_suffix (const gchar * name, gsize len);

/* Expands "{000..009}" ranges (zero padding kept, one range or several);
 * NULL with @error when a range is malformed or too large. */
GStrv gst_spdl_shards_expand (const gchar * pattern, GError ** error);

/* Lists the shards and their sample counts; @error (GST_RESOURCE_ERROR)
 * names the shard or index at fault. */
GstSpdlShards *gst_spdl_shards_open (const GstSpdlShardsConfig * config,
    GError ** error);
guint64 gst_spdl_shards_get_total (GstSpdlShards * shards);
/* What the epochs' order is computed over, for checkpoints: "N:SHA256" of
 * the shards' names and sample counts, in the elastic order every
 * sample's member name in index order (index files or learned alike), and
 * image-key, label-key and label-field where set. */
gchar *gst_spdl_shards_get_fingerprint (GstSpdlShards * shards);
guint gst_spdl_shards_get_n_shards (GstSpdlShards * shards);
/* This rank's samples per epoch. */
guint64 gst_spdl_shards_get_per_rank (GstSpdlShards * shards);
/* Whether the elastic order is used (see above). */
gboolean gst_spdl_shards_is_elastic (GstSpdlShards * shards);
/* Where the counts or members came from: "shards.members", "shards.idx",
 * "learned" (from the shards) or "cached" (learned before). */
const gchar *gst_spdl_shards_get_index_source (GstSpdlShards * shards);
/* Groups of the shards that are no sample, as known before reading them
 * (the notes of a learned index or of shards.members): "no-image: 3, bad-label: 1" and the first
 * one's message in @example; NULL when none is known. @by_keys: whether
 * a group was dropped for what the keys (image-key, label-key,
 * label-field) pick, rather than for a damaged or foreign body. */
gchar *gst_spdl_shards_describe_dropped (GstSpdlShards * shards,
    gchar ** example, gboolean * by_keys);
/* Warnings for the element (a learned index's cache that could not be
 * read or written), once; NULL when none. */
gchar **gst_spdl_shards_take_warnings (GstSpdlShards * shards);
/* This rank's samples in @epoch, and in @offset how many of the epoch's
 * global positions were consumed before (a resumed first epoch). */
guint64 gst_spdl_shards_epoch_share (GstSpdlShards * shards, guint epoch,
    guint64 * offset);
/* Starts the reader thread. */
gboolean gst_spdl_shards_start (GstSpdlShards * shards, GError ** error);
/* Waits for the next sample; the caller frees it. */
GstSpdlShardsResult gst_spdl_shards_next (GstSpdlShards * shards,
    GstSpdlShardSample ** sample);
void gst_spdl_shards_set_flushing (GstSpdlShards * shards, gboolean flushing);
/* Remote shards: their transfers' statistics (FALSE for local shards). */
gboolean gst_spdl_shards_get_http_stats (GstSpdlShards * shards,
    GstSpdlHttpStats * stats);
/* Stops the reader thread (promptly, also mid-shard) and frees. */
void gst_spdl_shards_free (GstSpdlShards * shards);

void gst_spdl_shard_sample_free (GstSpdlShardSample * sample);

G_END_DECLS

#endif /* __GST_SPDL_SHARDS_H__ */
