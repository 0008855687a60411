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

#include "gstspdlaudiochain.h"
#include "gstspdlclip.h"
#include "gstspdlerrors.h"
#include "gstspdlgeometry.h"
#include "gstspdlparalleldecoder.h"
#include "gstspdlvideochain.h"

G_BEGIN_DECLS

#define GST_TYPE_SPDL_VIDEO_DECODE (gst_spdl_video_decode_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlVideoDecode, gst_spdl_video_decode, GST,
    SPDL_VIDEO_DECODE, GstSpdlParallelDecoder)

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
  gboolean audio;               /* a second tensor: each clip's audio */
  GstSpdlAudioLimits audio_limits;      /* rate, channels */
} GstSpdlVideoDecodeParams;

struct _GstSpdlVideoDecode
{
  GstSpdlParallelDecoder parent;

  /* properties, under the object lock */
  GstSpdlVideoDecodeParams params;
  guint demux_builds, decoder_builds;   /* of chains freed so far */
  guint64 frames_decoded;              /* same */

  /* from start to stop */
  GstSpdlVideoDecodeParams active;

  /* source task only */
  guint64 caps_shape[4];
  guint64 caps_audio_n;
};

GST_ELEMENT_REGISTER_DECLARE (spdlvideodecode);

G_END_DECLS

#endif /* __GST_SPDL_VIDEO_DECODE_H__ */
