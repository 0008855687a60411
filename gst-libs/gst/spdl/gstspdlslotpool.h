/* GStreamer SPDL: buffers that are slots of a batch being filled
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_SLOT_POOL_H__
#define __GST_SPDL_SLOT_POOL_H__

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_SPDL_SLOT_POOL (gst_spdl_slot_pool_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlSlotPool, gst_spdl_slot_pool, GST,
    SPDL_SLOT_POOL, GstBufferPool)

/* A batch buffer (images memory first) whose image memory is handed out
 * slot by slot. Refcounted: freed, and the batch released, once no slot
 * and no holder remains. */
typedef struct _GstSpdlSlotBlock GstSpdlSlotBlock;

/* @batch_pool gives the blocks: buffers of @batch_size images of
 * @image_bytes bytes (sample-major), the images in their first memory.
 * @info describes one slot: RGB or GRAY8 (packed rows) or RGBP (planes,
 * an NCHW sample). */
GstSpdlSlotPool *gst_spdl_slot_pool_new (GstBufferPool * batch_pool,
    guint batch_size, const GstVideoInfo * info, gsize image_bytes);

/* The next batch starts at the slot acquired as number @seq: blocks start
 * there and every batch_size slots after it (skipped samples and short
 * batches moved the boundary). */
void gst_spdl_slot_pool_set_batch_start (GstSpdlSlotPool * pool,
    guint64 seq);

/* TRUE if @buffer is a slot: its block (borrowed while @buffer lives), its
 * index in the block and its acquisition number in its pool. */
gboolean gst_spdl_slot_lookup (GstBuffer * buffer, GstSpdlSlotBlock ** block,
    guint * index, guint64 * seq);

/* Whether @block was made by @pool (a live pool) */
gboolean gst_spdl_slot_block_is_from (GstSpdlSlotBlock * block,
    GstSpdlSlotPool * pool);
GstSpdlSlotBlock *gst_spdl_slot_block_ref (GstSpdlSlotBlock * block);
void gst_spdl_slot_block_unref (GstSpdlSlotBlock * block);
/* The block's batch (a new reference), once: NULL if taken before. */
GstBuffer *gst_spdl_slot_block_adopt (GstSpdlSlotBlock * block);
/* Hands out no more slots. TRUE if no slot is alive any more: then the
 * batch holds the last pixels written and the block lets it go. */
gboolean gst_spdl_slot_block_seal (GstSpdlSlotBlock * block);

G_END_DECLS

#endif /* __GST_SPDL_SLOT_POOL_H__ */
