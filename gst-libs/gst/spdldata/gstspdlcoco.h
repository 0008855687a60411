/* GStreamer SPDL: COCO instances files (images and their annotations)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_COCO_H__
#define __GST_SPDL_COCO_H__

#include <gst/gst.h>

#include "gstspdldataset.h"

G_BEGIN_DECLS

/* What reading an instances file passed over or kept with a warning,
 * counted by reason. */
typedef enum
{
  /* an annotation whose image_id names no image: not delivered */
  GST_SPDL_COCO_UNKNOWN_IMAGE,
  /* an image id listed again: the first kept */
  GST_SPDL_COCO_DUPLICATE_IMAGE,
  /* a category_id absent from "categories": kept with its raw id, as
   * torchvision keeps it */
  GST_SPDL_COCO_UNKNOWN_CATEGORY,
  /* an annotation that is no object, or without an integer image_id: not
   * delivered */
  GST_SPDL_COCO_BAD_ANNOTATION,
  /* an image that is no object, or without an integer id or a file_name
   * string: not listed */
  GST_SPDL_COCO_BAD_IMAGE,
  GST_SPDL_COCO_N_REASONS,
} GstSpdlCocoReason;

/* The most warnings kept per reason; the rest are counted only. */
#define GST_SPDL_COCO_WARNINGS_PER_REASON 10

/* An instances file read: its images sorted by id (torchvision
 * CocoDetection's order), each with its annotations in file order. The
 * annotations stay in the file's text (@text, held: a mapped file costs
 * no memory of its own), addressed by offset: 16 bytes per annotation,
 * plus the images' ids and file names. */
typedef struct
{
  GBytes *text;
  guint n_images;
  gint64 *image_ids;
  guint64 *name_offsets;        /* into @names, NUL-terminated */
  gchar *names;
  /* image i's annotations: spans [first[i], first[i + 1]) of @spans, each
   * (offset into @text, length) */
  guint64 *first;
  guint64 *spans;
  guint64 n_annotations;
  guint64 counts[GST_SPDL_COCO_N_REASONS];
  /* what was passed over, naming the file, the image or annotation id and
   * the reason (at most GST_SPDL_COCO_WARNINGS_PER_REASON per reason) */
  GPtrArray *warnings;
} GstSpdlCoco;

/* Reads the instances file @text (the whole file; @name stands for it in
 * messages): a JSON object with "images" (objects with "id" and
 * "file_name"), "annotations" (objects with "image_id"; optional) and
 * "categories" (objects with "id"; optional: without it no category is
 * unknown). @drop_empty: images with no annotation are not listed. NULL
 * with @error (GST_RESOURCE_ERROR) naming the file and where, for text
 * that is not JSON or not of this layout, or with no image left. One
 * pass to check the JSON, one to walk it: never a tree of it. */
GstSpdlCoco *gst_spdl_coco_parse (GBytes * text, const gchar * name,
    gboolean drop_empty, GError ** error);
void gst_spdl_coco_free (GstSpdlCoco * coco);

static inline const gchar *
gst_spdl_coco_get_file_name (const GstSpdlCoco * coco, guint image)
{
  return coco->names + coco->name_offsets[image];
}

/* Image @image's annotations as one compact JSON array (white space
 * outside strings left out), in file order: "[]" for none. */
gchar *gst_spdl_coco_get_objects (const GstSpdlCoco * coco, guint image,
    gsize * len);

/* The name a reason is counted under: "unknown-image" ... */
const gchar *gst_spdl_coco_reason_name (GstSpdlCocoReason reason);

/* The images as a listed dataset: their file names relative to @root (a
 * folder or a URL prefix: percent-encoded under http(s)://), in the
 * coco's order, with no label. */
GstSpdlDataset *gst_spdl_coco_to_dataset (const GstSpdlCoco * coco,
    const gchar * root);

G_END_DECLS

#endif /* __GST_SPDL_COCO_H__ */
