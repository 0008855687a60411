/* GStreamer SPDL: COCO instance masks (polygons and RLE) as pycocotools
 * rasterizes them
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_COCO_MASK_H__
#define __GST_SPDL_COCO_MASK_H__

#include <glib.h>

G_BEGIN_DECLS

/* A run-length encoded mask of @height x @width, in COCO's column-major
 * order: runs of 0, 1, 0, ... (the first may be empty). */
typedef struct
{
  guint height, width;
  guint n_counts;
  guint32 *counts;              /* g_free() */
} GstSpdlRle;

/* The longest run list a polygon may make (its outline at 5x, point by
 * point): a hostile polygon is refused rather than allocated. */
#define GST_SPDL_RLE_MAX_POLYGON_POINTS (G_GUINT64_CONSTANT (1) << 24)

/* The polygon @xy (@n_points x, y pairs, image pixels) as pycocotools'
 * frPyObjects (rleFrPoly) rasterizes it into @height x @width. FALSE
 * with @why (newly allocated) for fewer than 3 points, a coordinate
 * that is not finite or beyond +-2^24 (pycocotools' int conversion of it
 * is undefined), or an outline longer than GST_SPDL_RLE_MAX_POLYGON_POINTS. */
gboolean gst_spdl_rle_from_polygon (GstSpdlRle * rle, const gdouble * xy,
    guint n_points, guint height, guint width, gchar ** why);

/* COCO's compressed counts string (@len bytes: 6 bits a character from
 * '0', LEB128-like, each count after the second relative to the one two
 * before), as pycocotools' rleFrString reads it. FALSE with @why for a
 * character outside '0'..'o', a string that ends inside a count, a count
 * out of uint32's range or counts that do not sum to @height x @width. */
gboolean gst_spdl_rle_from_string (GstSpdlRle * rle, const gchar * s,
    gsize len, guint height, guint width, gchar ** why);

/* Uncompressed counts (frPyObjects of a dict with a list of counts):
 * FALSE with @why when they do not sum to @height x @width. */
gboolean gst_spdl_rle_from_counts (GstSpdlRle * rle, const guint32 * counts,
    guint n_counts, guint height, guint width, gchar ** why);

/* ORs @rle into @mask (row-major, @rle's height x width, one byte a
 * pixel): pycocotools' merge then decode, as COCO.annToMask gives it. */
void gst_spdl_rle_paint (const GstSpdlRle * rle, guint8 * mask);

void gst_spdl_rle_clear (GstSpdlRle * rle);

G_END_DECLS

#endif /* __GST_SPDL_COCO_MASK_H__ */
