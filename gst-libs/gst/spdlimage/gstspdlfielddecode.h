/* GStreamer SPDL: a sample record's images and labels, decoded through
 * the geometry of its media image
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_FIELD_DECODE_H__
#define __GST_SPDL_FIELD_DECODE_H__

#include <gst/gst.h>

#include "gstspdlimage.h"
#include "gstspdlrecord.h"

G_BEGIN_DECLS

/* The geometry @geom applied to an image of @width x @height, as the
 * sample meta tells it (gst_spdl_buffer_set_sample_geometry): the crop
 * box in the image's pixels (a centre crop larger than the resized image
 * reaches past its edges), whether flipped, the image's size. */
void gst_spdl_geometry_to_sample (const GstSpdlGeometry * geom, guint width,
    guint height, GstSpdlSampleGeometry * sample);

/* What the media image of a sample was: its size (after its orientation)
 * and the geometry it went through. */
typedef struct
{
  const GstSpdlDecodeParams *params;
  const GstSpdlGeometry *geom;
  guint width, height;
  guint64 max_pixels;
} GstSpdlFieldTarget;

/* Replaces each encoded (GBytes) image or label value of @buffer's
 * record (described by @record) by its decoded GstSample: packed rows,
 * caps video/x-raw RGB for an image (decoded as the media image, by
 * @dec), GRAY8 or GRAY16_LE for a label (gstspdllabel.h), both through
 * @target's geometry; an empty GBytes (the policy empty upstream) is
 * zeros of the output's size. A value that does not decode, or is not
 * the media image's size, is bad: under the policy empty it becomes
 * zeros, with *@filled (when NULL) saying why; under skip or error,
 * FALSE with @error (GST_SPDL_DECODE_ERROR_BAD_FIELD) naming the field and
 * the reason, *@bad its index. @dec is opened again: the media image must
 * be decoded before. */
gboolean gst_spdl_record_decode_images (GstBuffer * buffer,
    const GstSpdlRecord * record, GstSpdlImageDecoder * dec,
    const GstSpdlFieldTarget * target, guint * bad, GError ** filled,
    GError ** error);

/* How objects fields are decoded: spdldecode's properties */
typedef struct
{
  gboolean masks;               /* instance masks */
  gdouble min_size, min_area;   /* SanitizeBoundingBoxes'; 0, 0: off */
  guint64 max_masks_size;       /* a sample's masks' bytes; 0: no limit */
} GstSpdlObjectsParams;

/* Replaces each encoded (JSON text) objects value of @buffer's record by
 * its decoded structure (gstspdlobjects.h) through @target's geometry,
 * sanitized as @params say; the annotations' counts by reason are added
 * to @counts (GST_SPDL_OBJECTS_N_REASONS of them) and their warnings
 * appended to *@notes (created when NULL). A value that is no JSON array
 * of annotations (nor an object holding one) is bad, as in
 * gst_spdl_record_decode_images(): under the policy empty it is no
 * object, with *@filled saying why. */
gboolean gst_spdl_record_decode_objects (GstBuffer * buffer,
    const GstSpdlRecord * record, const GstSpdlFieldTarget * target,
    const GstSpdlObjectsParams * params, guint64 * counts, GString ** notes,
    guint * bad, GError ** filled, GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_FIELD_DECODE_H__ */
