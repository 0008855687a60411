/* GStreamer SPDL: one image's COCO annotations as detection targets,
 * through the image's geometry as torchvision v2 transforms them
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_OBJECTS_H__
#define __GST_SPDL_OBJECTS_H__

#include <gst/gst.h>

#include "gstspdlgeometry.h"

G_BEGIN_DECLS

/* What happened to annotations, counted by reason. */
typedef enum
{
  /* dropped, warned: not an object, a bbox that is not 4 finite numbers,
   * a category_id that is no integer, a polygon under 3 points, an RLE
   * whose counts do not sum to its size or whose size is not the
   * image's, no segmentation when masks are asked for */
  GST_SPDL_OBJECTS_BAD_ANNOTATION,
  /* kept, warned: a bbox reaching past the image (crops clamp it,
   * sanitizing decides) */
  GST_SPDL_OBJECTS_BOX_OUTSIDE_IMAGE,
  /* kept, warned: a bbox of zero or negative width or height */
  GST_SPDL_OBJECTS_BOX_EMPTY,
  /* removed by SanitizeBoundingBoxes' rule after the geometry: the
   * ordinary fate of boxes a crop leaves out, counted, not warned */
  GST_SPDL_OBJECTS_SANITIZED,
  GST_SPDL_OBJECTS_N_REASONS
} GstSpdlObjectsReason;

const gchar *gst_spdl_objects_reason_name (GstSpdlObjectsReason reason);

/* One image's objects, in the annotations' order. */
typedef struct
{
  guint n;
  gfloat *boxes;                /* 4 n: x1, y1, x2, y2 in pixels */
  gint64 *labels;               /* n: category_id as it is */
  gfloat *area;                 /* n: "area", else the bbox's w * h */
  gint64 *iscrowd;              /* n: "iscrowd", else 0 */
  guint8 *masks;                /* n x height x width once rasterized */
  guint width, height;          /* the canvas: source, then output size */
  /* with masks: every segmentation's RLEs, object i's rle_count[i] from
   * rle_first[i] (several polygons); NULL without */
  GArray *rles;
  guint *rle_first, *rle_count;
  guint source_width, source_height;
  GstSpdlGeometry geom;         /* the masks' way to the canvas */
  gboolean transformed;
  guint counts[GST_SPDL_OBJECTS_N_REASONS];
  GString *warnings;            /* "annotation 7: ...; ...", or NULL */
} GstSpdlObjects;

/* Parses @text (@len bytes of JSON: an array of COCO annotations, or an
 * object whose member "annotations" is one) for an image of @width x
 * @height: boxes from "bbox" [x, y, w, h] to XYXY in float32 as
 * torchvision's wrap_dataset_for_transforms_v2 converts them, and with
 * @masks each "segmentation" read (rasterized by
 * gst_spdl_objects_rasterize() as pycocotools' annToMask does,
 * gstspdlcocomask.h). A bad annotation is dropped, counted and described
 * in @objects->warnings; FALSE with @why (newly allocated) only where the
 * text is no such JSON at all, or without memory for its objects (then
 * @objects holds nothing: it needs no gst_spdl_objects_clear()). */
gboolean gst_spdl_objects_parse (GstSpdlObjects * objects, const gchar * text,
    gsize len, guint width, guint height, gboolean masks, gchar ** why);

/* The geometry @geom (computed for the image the objects were parsed
 * for) applied as torchvision 0.29's v2 functional ops do to
 * BoundingBoxes and Mask: stretch and random-resized-crop are
 * F.resized_crop (crop: offset subtracted, clamped to the crop; resize:
 * scaled by float32 (out / in), not clamped), center-crop is F.resize
 * then F.center_crop (whose box anchor rounds half to even), then
 * F.horizontal_flip (x1' = W - x2) where flipped; masks by nearest as
 * label fields are (gstspdllabel.h), when rasterized. The canvas
 * becomes the output's. */
void gst_spdl_objects_transform (GstSpdlObjects * objects,
    const GstSpdlGeometry * geom);

/* torchvision 0.29's SanitizeBoundingBoxes (min_size, min_area) on the
 * canvas: keeps a box when w >= min_size, h >= min_size, w * h >=
 * min_area (float32), no coordinate negative and none past the canvas;
 * its label, area, iscrowd and mask go with it. Both 0: nothing done. */
void gst_spdl_objects_sanitize (GstSpdlObjects * objects, gdouble min_size,
    gdouble min_area);

/* The masks of the objects kept (after sanitizing: none is made for a
 * box removed), each its segmentation painted at the source size (as
 * annToMask) then through the geometry by nearest: uint8 n x height x
 * width in @objects->masks. FALSE with @why where they would take more
 * than @max_bytes (0: no limit), before anything is allocated, or
 * without memory. Nothing without masks. */
gboolean gst_spdl_objects_rasterize (GstSpdlObjects * objects,
    guint64 max_bytes,
    gchar ** why);

/* The decoded field value: a structure "objects" with n (uint), width,
 * height (uint, the canvas), boxes (GBytes, float32 n x 4), labels
 * (GBytes, int64), area (GBytes, float32), iscrowd (GBytes, int64) and,
 * where parsed with masks, masks (GBytes, uint8 n x height x width). */
GstStructure *gst_spdl_objects_to_structure (const GstSpdlObjects * objects);

void gst_spdl_objects_clear (GstSpdlObjects * objects);

G_END_DECLS

#endif /* __GST_SPDL_OBJECTS_H__ */
