/* GStreamer SPDL plugin: batch collation
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_BATCH_H__
#define __GST_SPDL_BATCH_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "gstspdltensor.h"
#include "gstspdlnormalize.h"
#include "gstspdlstats.h"
#include "gstspdlrecordbatch.h"
#include "gstspdlslotpool.h"

G_BEGIN_DECLS

#define GST_TYPE_SPDL_BATCH (gst_spdl_batch_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlBatch, gst_spdl_batch, GST, SPDL_BATCH,
    GstElement)

typedef enum
{
  GST_SPDL_LAYOUT_NHWC,
  GST_SPDL_LAYOUT_NCHW,
} GstSpdlLayout;

#define GST_TYPE_SPDL_LAYOUT (gst_spdl_layout_get_type ())
GType gst_spdl_layout_get_type (void);

/* the images tensor's element type: a subset of GstSpdlDType */
#define GST_TYPE_SPDL_BATCH_DTYPE (gst_spdl_batch_dtype_get_type ())
GType gst_spdl_batch_dtype_get_type (void);

struct _GstSpdlBatch
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties, under the object lock */
  guint batch_size;
  gboolean drop_last;
  gboolean pad_short_epochs;
  guint pad_multiple;
  GstSpdlLayout layout;
  GstSpdlDType dtype;
  GArray *mean, *std;           /* gdouble */
  guint64 batches;
  guint64 dropped;
  GstSpdlStats stats;

  /* streaming thread */
  GstVideoInfo vinfo;
  gboolean have_info;
  gboolean clips;               /* video clips (spdlvideodecode), not images */
  GstSpdlTensorInfo clip;       /* one clip's tensor */
  guint clip_frames;            /* its frames: the pts tensor's width */
  GstMapInfo pts;               /* clips: the pts tensor being filled */
  guint64 *clip_numbers;        /* clips: each slot's clip in its video */
  gboolean clip_audio;          /* clips with audio (spdlvideodecode audio) */
  GstSpdlTensorInfo clip_audio_info;    /* its [C, N] */
  GstMapInfo av_audio, av_flags;        /* clip_audio: tensors 3 and 4 */
  gboolean audio;               /* audio clips (spdlaudiodecode) */
  guint audio_channels;         /* audio: C of every clip of the batch */
  guint64 audio_n;              /* audio: N of the tensor being described */
  guint64 audio_capacity;       /* audio: N the pool's batches hold */
  GstBuffer **held;             /* audio: the batch's clips until it ends */
  GstBuffer **held_prev;        /* audio: the last full batch's (padding) */
  guint64 *prev_indices;
  guint held_prev_n;
  guint64 caps_audio_n;         /* audio: N of the last caps pushed */
  gboolean padded;              /* images of any size, held and padded */
  guint active_pad_multiple;    /* padded: H and W a multiple of it */
  GstVideoInfo *held_info;      /* padded: each held image's */
  GstVideoInfo *held_prev_info;
  guint pad_width, pad_height;  /* padded: of the batch being described */
  guint pad_capacity_width, pad_capacity_height;        /* the pool's */
  guint caps_pad_width, caps_pad_height;        /* of the last caps */
  guint size;                   /* batch-size of this run */
  GstSpdlLayout active_layout;
  GstSpdlDType active_dtype;
  GstSpdlNormalizer norm;       /* dtype != uint8 */
  gboolean active_drop_last;
  gboolean active_pad;
  guint64 epoch_expected;       /* spdlsrc's share, G_MAXUINT64 = unknown */
  guint64 epoch_last_position;  /* of the rank's last sample of the epoch */
  guint64 epoch_delivered;      /* slots filled this epoch, padding too */
  GstBuffer *last_batch;        /* last full batch of the epoch (padding) */
  guint64 batch_position;       /* max sample position in the batch */
  guint batch_padded;           /* padded slots in the batch */
  /* spdlsrc's batches (buckets, batch-duration): the batch being filled
   * (its number among the rank's, where a run resumed after it starts);
   * an epoch whose start event gives them cuts at them, drops nothing */
  gboolean src_batches;
  gboolean refused;             /* batch-size too small for them */
  guint64 src_batches_expected; /* this rank's, G_MAXUINT64 = no padding */
  guint64 src_batches_pushed;
  GstBuffer *src_last_batch;    /* the source of copies when short */
  gboolean have_src_batch;
  guint64 src_batch;
  guint resume_epoch;
  guint64 resume_offset;
  gsize image_bytes;
  GstBufferPool *pool;
  GstBuffer *current;
  GstMapInfo images;
  GstMapInfo labels;
  guint filled;
  guint epoch;
  guint64 *indices;
  guint64 next_index;
  guint caps_batch;             /* batch dimension of the last caps pushed */
  GstSpdlSlotPool *slot_pool;   /* proposed upstream (zero-copy) */
  GstSpdlSlotBlock *block;      /* the block whose batch is current */
  guint64 last_seq;             /* slot number of the last sample, or -1 */
  guint64 copied;               /* samples copied (object lock) */
  guint64 in_place;             /* samples decoded into their slot */
  /* the samples' fields (the caps' "fields"), NULL without: the batch's
   * slots, and the last full batch's (padding) */
  GstSpdlRecordBatch *records;
  GstSpdlRecordBatch *prev_records;
  GstSpdlMemoryCache *field_memories;   /* the fields' tensors, reused */
};

GST_ELEMENT_REGISTER_DECLARE (spdlbatch);

G_END_DECLS

#endif /* __GST_SPDL_BATCH_H__ */
