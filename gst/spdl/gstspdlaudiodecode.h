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
#include "gstspdlstats.h"

G_BEGIN_DECLS

#define GST_TYPE_SPDL_AUDIO_DECODE (gst_spdl_audio_decode_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlAudioDecode, gst_spdl_audio_decode, GST,
    SPDL_AUDIO_DECODE, GstElement)

/* what each clip becomes: the properties, copied at start */
typedef struct
{
  GstSpdlAudioClipParams clip;
  gdouble duration;             /* seconds, 0 = whole files */
  gdouble max_duration;         /* seconds decoded of one file */
  GstSpdlAudioLimits limits;
} GstSpdlAudioDecodeParams;

struct _GstSpdlAudioDecode
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties, under the object lock */
  guint threads;
  GstSpdlAudioDecodeParams params;
  gint max_errors;
  guint warning_limit;
  guint64 errors;
  guint64 errors_by_reason[GST_SPDL_DECODE_N_ERRORS];
  guint64 epoch_errors[GST_SPDL_DECODE_N_ERRORS];
  GstSpdlWarnLimiter warn_limiter;
  guint64 clips;                /* pushed */
  guint builds;                 /* of chains freed so far */
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
  GstSpdlAudioDecodeParams active;

  /* source task only */
  guint64 caps_shape[2];
  gboolean caps_sent;
  GList *held_events;
};

GST_ELEMENT_REGISTER_DECLARE (spdlaudiodecode);

G_END_DECLS

#endif /* __GST_SPDL_AUDIO_DECODE_H__ */
