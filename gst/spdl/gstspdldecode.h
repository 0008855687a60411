/* GStreamer SPDL plugin: parallel image decoder
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_DECODE_H__
#define __GST_SPDL_DECODE_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "gstspdlfielddecode.h"
#include "gstspdlimage.h"
#include "gstspdlobjects.h"
#include "gstspdlparalleldecoder.h"

G_BEGIN_DECLS

#define GST_TYPE_SPDL_DECODE (gst_spdl_decode_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlDecode, gst_spdl_decode, GST, SPDL_DECODE,
    GstSpdlParallelDecoder)

#define GST_TYPE_SPDL_RESIZE_MODE (gst_spdl_resize_mode_get_type ())
GType gst_spdl_resize_mode_get_type (void);
typedef enum
{
  GST_SPDL_DECODE_FORMAT_RGB,
  GST_SPDL_DECODE_FORMAT_GRAY8,
} GstSpdlDecodeFormat;

#define GST_TYPE_SPDL_DECODE_FORMAT (gst_spdl_decode_format_get_type ())
GType gst_spdl_decode_format_get_type (void);
#define GST_TYPE_SPDL_FLIP_MODE (gst_spdl_flip_mode_get_type ())
GType gst_spdl_flip_mode_get_type (void);

struct _GstSpdlDecode
{
  GstSpdlParallelDecoder parent;

  /* properties, under the object lock */
  GstSpdlDecodeFormat format;
  GstSpdlDecodeParams params;
  guint64 max_decode_memory;
  guint max_scans;
  GstSpdlObjectsParams objects;
  /* annotations by reason (gstspdlobjects.h), under the object lock */
  guint64 object_counts[GST_SPDL_OBJECTS_N_REASONS];

  GstSpdlDecodeParams active;   /* params of this run (copied at start) */
  guint64 active_max_decode_memory;
  guint active_max_scans;
  GstSpdlObjectsParams active_objects;
  gboolean gray;
  /* negotiation, under lock */
  GMutex lock;
  GstVideoFormat out_format;    /* RGB, RGBP or GRAY8, from downstream */
  gboolean need_format;         /* ask downstream's caps again */
  GstBufferPool *out_pool;      /* downstream's, with GstVideoMeta */
  GstVideoFormat out_pool_format;       /* of its buffers */
  /* the records sink caps described (GstSpdlDecodeFields), newest first,
   * kept until stop as jobs in flight point to theirs; stream thread */
  GList *fields_seen;
  gpointer fields;              /* the current one, NULL: no field */

  /* source side, source task only */
  GstBufferPool *pool;           /* fixed-size packed outputs */
  GstBufferPool *planar_pool;    /* fixed-size RGBP outputs */
  guint caps_width, caps_height;
  GstVideoFormat caps_format;
  gchar *caps_fields;           /* the "fields" of the caps sent */
};

GST_ELEMENT_REGISTER_DECLARE (spdldecode);

G_END_DECLS

#endif /* __GST_SPDL_DECODE_H__ */
