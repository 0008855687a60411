/* GStreamer SPDL: label images (masks, label maps), values kept
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_LABEL_H__
#define __GST_SPDL_LABEL_H__

#include <glib.h>

#include "gstspdlgeometry.h"

G_BEGIN_DECLS

/* A label image decoded to its values, never to colours, as
 * numpy.asarray (PIL.Image.open (f)) has them: a palette PNG's indices, a
 * gray PNG's values (8-bit; 1-bit as 0 and 1; 2 and 4-bit scaled to 8 as
 * PIL's "L" reads them) or a 16-bit gray PNG's values (host order). Any
 * other layout (RGB, RGBA, gray + alpha) or format is refused: its values
 * are colours, not labels. */
typedef struct
{
  guint width, height;
  guint bytes_per_pixel;        /* 1 or 2 */
  guint8 *pixels;               /* packed rows, g_free() */
} GstSpdlLabelImage;

/* FALSE with @error (GST_SPDL_DECODE_ERROR) saying why. The size is
 * checked against @max_pixels (0: none) before anything is allocated. */
gboolean gst_spdl_label_image_decode (GstSpdlLabelImage * label,
    const guint8 * data, gsize size, guint64 max_pixels, GError ** error);
void gst_spdl_label_image_clear (GstSpdlLabelImage * label);

/* @label through @geom (computed for an image of @label's size) into
 * @out, packed rows of geom->out_width values of @label's depth, by
 * torch's legacy "nearest" as torchvision's F.resized_crop (mask, top,
 * left, h, w, size, NEAREST) (or Resize + CenterCrop) computes it, then
 * flipped where @geom says: per axis, source = min (floorf (dst * scale),
 * in - 1) with scale = (float) in / out in single precision; outputs
 * outside the resized image (a centre crop larger than it) are 0. Values
 * are copied, never mixed. */
void gst_spdl_label_image_resample (const GstSpdlLabelImage * label,
    const GstSpdlGeometry * geom, guint8 * out);

G_END_DECLS

#endif /* __GST_SPDL_LABEL_H__ */
