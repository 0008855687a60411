/* GStreamer SPDL: a batch's records, collated into tensors
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_RECORD_BATCH_H__
#define __GST_SPDL_RECORD_BATCH_H__

#include <gst/gst.h>

#include "gstspdlmemorycache.h"
#include "gstspdlrecord.h"
#include "gstspdltensor.h"

G_BEGIN_DECLS

/* The record values of a batch's slots (docs/record.md, "In each batch"),
 * held from the samples' metas until the batch is collated: per field, in
 * record order,
 *   int     int64 [B]                    named NAME
 *   float   float64 [B]                  NAME
 *   string, json, bytes
 *           uint8 [n] NAME/values, int64 [B+1] NAME/offsets
 *   npy     DTYPE [n] NAME/values, int64 [B+1] NAME/offsets (elements),
 *           int64 [B, 8] NAME/shapes (-1 past each array's last dimension)
 *   image   uint8 [B, H, W, 3] ([B, 3, H, W] with nchw)      NAME
 *   label   uint8 or uint16 [B, H, W]    NAME
 *   objects float32 [n, 4] NAME/boxes (XYXY), int64 [B+1] NAME/offsets
 *           (slot i has objects offsets[i] to offsets[i+1]), int64 [n]
 *           NAME/labels, float32 [n] NAME/area, int64 [n] NAME/iscrowd,
 *           with masks uint8 [n, H, W] NAME/masks (H, W: the canvas, set
 *           by gst_spdl_record_batch_set_canvas(); each slot's masks top
 *           left, zeros beyond its own size)
 * A NAME/values tensor's length changes from batch to batch: its caps
 * dimension is 0 and its memory's size gives it. An empty npy (a fill
 * value) is an array of shape (0,); a batch of empty ones only is uint8.
 * The geometry of the slots whose samples carry one goes to the batch
 * meta: "crop" (4 doubles per slot: x, y, width, height; NaN where a slot
 * has none), "flipped" (a boolean per slot), "source-size" (2 unsigned
 * integers per slot: width, height; 0 where none). */
typedef struct _GstSpdlRecordBatch GstSpdlRecordBatch;

/* Slots for @size samples of @record (copied); image fields as
 * [B, 3, H, W] with @nchw. */
GstSpdlRecordBatch *gst_spdl_record_batch_new (const GstSpdlRecord * record,
    guint size, gboolean nchw);
void gst_spdl_record_batch_free (GstSpdlRecordBatch * batch);
const GstSpdlRecord *gst_spdl_record_batch_get_record (GstSpdlRecordBatch *
    batch);

/* Whether objects fields carry instance masks (spdldecode's caps say) */
void gst_spdl_record_batch_set_object_masks (GstSpdlRecordBatch * batch,
    gboolean masks);
/* The batch's image size, the objects' masks' H x W: set before
 * describing or appending a batch. */
void gst_spdl_record_batch_set_canvas (GstSpdlRecordBatch * batch,
    guint width, guint height);

/* Takes @sample's record values and geometry into @slot. FALSE with
 * @error (GST_STREAM_ERROR) naming the sample (and slot 0's, for a
 * mismatch) when a value is not of its field's kind, an image is not
 * decoded, or an npy's dtype or an image's size or format differs from
 * those of the batch's first sample: one batch holds one of each. */
gboolean gst_spdl_record_batch_set_slot (GstSpdlRecordBatch * batch,
    guint slot, GstBuffer * sample, GError ** error);
/* Slot @from of @src into slot @to of @batch (the same record): a copy
 * that pads a short epoch. */
void gst_spdl_record_batch_copy_slot (GstSpdlRecordBatch * batch, guint to,
    GstSpdlRecordBatch * src, guint from);
/* Images of different sizes in one batch (spdlbatch pad-multiple): with
 * @padded, image and label fields may differ in size from slot to slot
 * (not in format), and from gst_spdl_record_batch_set_padded_size () on
 * they are described as @width x @height, each top-left with zeros
 * around it, as the media images. */
void gst_spdl_record_batch_set_padded (GstSpdlRecordBatch * batch,
    gboolean padded);
void gst_spdl_record_batch_set_padded_size (GstSpdlRecordBatch * batch,
    guint width, guint height);
/* Lets go of every slot's values. */
void gst_spdl_record_batch_clear (GstSpdlRecordBatch * batch);

/* How many tensors the fields take */
guint gst_spdl_record_batch_n_tensors (GstSpdlRecordBatch * batch);
/* Appends to @tensors and @names (the tensors' names, owned by @batch)
 * the fields' tensors for the first @n
 * slots; returns how many, at most @max. Image fields of a batch not yet
 * filled have a size of 0. */
guint gst_spdl_record_batch_describe (GstSpdlRecordBatch * batch, guint n,
    GstSpdlTensorInfo * tensors, const gchar ** names, guint max);
/* Appends the fields' tensors of the first @n slots to @buffer, one
 * GstMemory each from @allocator (NULL: the default) through @cache (keys
 * 0, 1, ... in the tensors' order), as described. */
gboolean gst_spdl_record_batch_append (GstSpdlRecordBatch * batch,
    GstBuffer * buffer, guint n, GstSpdlMemoryCache * cache,
    GstAllocator * allocator, const GstAllocationParams * params,
    GError ** error);
/* Sets the geometry fields of the batch meta @s for the first @n slots,
 * when one of them carries a geometry. */
void gst_spdl_record_batch_set_geometry (GstSpdlRecordBatch * batch,
    GstStructure * s, guint n);

G_END_DECLS

#endif /* __GST_SPDL_RECORD_BATCH_H__ */
