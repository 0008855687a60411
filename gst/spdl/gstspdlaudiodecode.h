/* GStreamer SPDL plugin: parallel audio clip decoder
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_AUDIO_DECODE_H__
#define __GST_SPDL_AUDIO_DECODE_H__

#include <gst/gst.h>

#include "gstspdlaudiochain.h"
#include "gstspdlaudioclip.h"
#include "gstspdlerrors.h"
#include "gstspdlparalleldecoder.h"

G_BEGIN_DECLS

#define GST_TYPE_SPDL_AUDIO_DECODE (gst_spdl_audio_decode_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlAudioDecode, gst_spdl_audio_decode, GST,
    SPDL_AUDIO_DECODE, GstSpdlParallelDecoder)

/* what each clip becomes: the properties, copied at start */
typedef struct
{
  GstSpdlAudioClipParams clip;
  gdouble duration;             /* seconds, 0 = whole files */
  gdouble max_duration;         /* seconds decoded of one file */
  gdouble max_span;             /* seconds of a sample's span, 0 = any */
  GstSpdlAudioLimits limits;
} GstSpdlAudioDecodeParams;

struct _GstSpdlAudioDecode
{
  GstSpdlParallelDecoder parent;

  /* properties, under the object lock */
  GstSpdlAudioDecodeParams params;
  guint builds;                 /* of chains freed so far */

  /* from start to stop */
  GstSpdlAudioDecodeParams active;

  /* source task only */
  guint64 caps_shape[2];
};

GST_ELEMENT_REGISTER_DECLARE (spdlaudiodecode);

G_END_DECLS

#endif /* __GST_SPDL_AUDIO_DECODE_H__ */
