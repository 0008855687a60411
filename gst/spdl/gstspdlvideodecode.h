/* GStreamer SPDL plugin: parallel video clip decoder
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_VIDEO_DECODE_H__
#define __GST_SPDL_VIDEO_DECODE_H__

#include <gst/gst.h>

#include "gstspdlclip.h"
#include "gstspdlerrors.h"
#include "gstspdlgeometry.h"
#include "gstspdlstats.h"
#include "gstspdlvideochain.h"

G_BEGIN_DECLS

#define GST_TYPE_SPDL_VIDEO_DECODE (gst_spdl_video_decode_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlVideoDecode, gst_spdl_video_decode, GST,
    SPDL_VIDEO_DECODE, GstElement)

typedef enum
{
  GST_SPDL_CLIP_LAYOUT_TCHW,
  GST_SPDL_CLIP_LAYOUT_CTHW,
  GST_SPDL_CLIP_LAYOUT_THWC,
} GstSpdlClipLayout;

typedef enum
{
  GST_SPDL_CLIP_CROP_CENTER,
  GST_SPDL_CLIP_CROP_RANDOM,
} GstSpdlClipCrop;

/* what each clip becomes: the properties, copied at start */
typedef struct
{
  GstSpdlClipParams clip;
  guint size;                   /* square crop side, 0 = no crop */
  guint resize;                 /* shorter side, 0 = no resize */
  GstSpdlClipCrop crop;
  gboolean flip;                /* random horizontal */
  GstSpdlClipLayout layout;
  guint64 max_output_pixels;    /* of one clip (frames x pixels) */
  GstSpdlVideoLimits limits;
} GstSpdlVideoDecodeParams;

struct _GstSpdlVideoDecode
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties, under the object lock */
  guint threads;
  GstSpdlVideoDecodeParams params;
  gint max_errors;
  guint warning_limit;
  guint64 errors;
  guint64 errors_by_reason[GST_SPDL_DECODE_N_ERRORS];
  guint64 epoch_errors[GST_SPDL_DECODE_N_ERRORS];
  gboolean epoch_resumed;
  GstSpdlWarnLimiter warn_limiter;
  guint64 clips;                /* pushed */
  guint64 videos;               /* decoded, at least one clip */
  guint demux_builds, decoder_builds;   /* of chains freed so far */
  GstSpdlStats stats;

  /* streaming state, under lock */
  GMutex lock;
  GCond done_cond;
  GCond space_cond;
  GQueue jobs;
  GQueue pending;
  GQueue idle_chains;
  GList *all_chains;
  guint in_flight;
  guint max_in_flight;
  guint busy;
  gboolean flushing;
  GstFlowReturn srcresult;
  guint64 next_index;
  GThreadPool *workers;
  guint n_workers;
  GstSpdlVideoDecodeParams active;

  /* source task only */
  guint64 caps_shape[4];
  gboolean caps_sent;
  GList *held_events;
};

GST_ELEMENT_REGISTER_DECLARE (spdlvideodecode);

G_END_DECLS

#endif /* __GST_SPDL_VIDEO_DECODE_H__ */
