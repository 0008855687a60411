/* GStreamer SPDL: buffers that are slots of a batch being filled
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* spdlbatch proposes this pool in the ALLOCATION query. Each buffer it
 * hands out is one image of a batch buffer spdlbatch will push: a
 * GstMemory of our own type (not gst_memory_share(): shared system memory
 * is read-only) that maps the batch's images memory at the slot's offset,
 * with a GstVideoMeta. The batch is sample-major in both layouts (NCHW is
 * one C x H x W image after another), so a slot is one contiguous range:
 * packed rows for RGB/GRAY8, or three planes (RGBP, offsets c x H x W,
 * stride W) for NCHW.
 *
 * Slots are handed out in acquisition order, batch_size per block. When
 * samples are skipped or an epoch ends short, spdlbatch copies the
 * misplaced samples and tells the pool where the next batch starts
 * (gst_spdl_slot_pool_set_batch_start()); the pool then cuts its current
 * block there. A block is sealed by spdlbatch when its batch is done: if a
 * slot of it is still alive (decoding when a flush or an epoch's end came)
 * spdlbatch pushes a copy, so nothing writes into a batch downstream
 * holds. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlslotpool.h"

GST_DEBUG_CATEGORY_STATIC (spdl_slot_pool_debug);
#define GST_CAT_DEFAULT spdl_slot_pool_debug

struct _GstSpdlSlotBlock
{
  gint refcount;
  guint64 pool_serial;          /* which pool made it (see below) */
  GMutex lock;
  GstBuffer *batch;             /* until sealed with no slot alive */
  GstMapInfo images;            /* batch's images memory, mapped with it */
  guint live;                   /* slots alive, under lock */
  gboolean sealed;              /* under lock */
  gint adopted;                 /* atomic */
};

struct _GstSpdlSlotPool
{
  GstBufferPool parent;

  GstBufferPool *batch_pool;
  guint batch_size;
  GstVideoInfo info;
  gsize image_bytes;

  /* unique per pool of the process: a freed pool's address may be reused
   * by the next one while slots of the old one are still in flight */
  guint64 serial;

  GMutex lock;
  GstSpdlSlotBlock *block;      /* handing out slots of this one */
  guint next_index;
  guint64 next_seq;
  guint64 batch_start;          /* a block starts here and every B after */
};

G_DEFINE_TYPE (GstSpdlSlotPool, gst_spdl_slot_pool, GST_TYPE_BUFFER_POOL);

/* ------------------------------------------------------------------------ */
/* Blocks                                                                   */

/* A block maps its batch's images memory once, read-write, for as long as
 * it holds the batch. Slots map into that mapping: a slot's map must never
 * fail because spdlbatch is reading the same memory (copying a batch out)
 * at that moment, which mapping the memory per slot would (a read mapping
 * refuses a write one). */
static void
block_release_batch (GstSpdlSlotBlock * block, GstBuffer * batch)
{
  gst_memory_unmap (block->images.memory, &block->images);
  gst_buffer_unref (batch);
}

GstSpdlSlotBlock *
gst_spdl_slot_block_ref (GstSpdlSlotBlock * block)
{
  g_atomic_int_inc (&block->refcount);
  return block;
}

void
gst_spdl_slot_block_unref (GstSpdlSlotBlock * block)
{
  if (!g_atomic_int_dec_and_test (&block->refcount))
    return;
  if (block->batch)
    block_release_batch (block, block->batch);
  g_mutex_clear (&block->lock);
  g_free (block);
}

gboolean
gst_spdl_slot_block_is_from (GstSpdlSlotBlock * block, GstSpdlSlotPool * pool)
{
  return block->pool_serial == pool->serial;
}

GstBuffer *
gst_spdl_slot_block_adopt (GstSpdlSlotBlock * block)
{
  if (!g_atomic_int_compare_and_exchange (&block->adopted, FALSE, TRUE))
    return NULL;
  return gst_buffer_ref (block->batch);
}

gboolean
gst_spdl_slot_block_seal (GstSpdlSlotBlock * block)
{
  GstBuffer *batch = NULL;
  gboolean idle;

  g_mutex_lock (&block->lock);
  block->sealed = TRUE;
  idle = block->live == 0;
  if (idle)
    batch = g_steal_pointer (&block->batch);
  g_mutex_unlock (&block->lock);
  if (batch)
    block_release_batch (block, batch);
  return idle;
}

/* A new slot of @block, unless sealed. */
static gboolean
block_take_slot (GstSpdlSlotBlock * block)
{
  gboolean ok;

  g_mutex_lock (&block->lock);
  ok = !block->sealed;
  if (ok)
    block->live++;
  g_mutex_unlock (&block->lock);
  if (ok)
    gst_spdl_slot_block_ref (block);
  return ok;
}

static void
block_release_slot (GstSpdlSlotBlock * block)
{
  g_mutex_lock (&block->lock);
  block->live--;
  g_mutex_unlock (&block->lock);
  gst_spdl_slot_block_unref (block);
}

/* ------------------------------------------------------------------------ */
/* Slot memory: maps the block's images memory                              */

#define SLOT_MEMORY_TYPE "SpdlSlotMemory"

typedef struct
{
  GstMemory mem;
  GstSpdlSlotBlock *block;
  guint index;
  guint64 seq;
  gsize offset;                 /* in the block's images memory */
} GstSpdlSlotMemory;

#define GST_TYPE_SPDL_SLOT_ALLOCATOR (gst_spdl_slot_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlSlotAllocator, gst_spdl_slot_allocator, GST,
    SPDL_SLOT_ALLOCATOR, GstAllocator)

struct _GstSpdlSlotAllocator
{
  GstAllocator parent;
};

G_DEFINE_TYPE (GstSpdlSlotAllocator, gst_spdl_slot_allocator,
    GST_TYPE_ALLOCATOR);

static GstAllocator *slot_allocator;

static GstMemory *
slot_alloc (GstAllocator * allocator, gsize size, GstAllocationParams * params)
{
  /* slots come from a pool's block, never from size alone */
  return NULL;
}

static void
slot_free (GstAllocator * allocator, GstMemory * mem)
{
  GstSpdlSlotMemory *slot = (GstSpdlSlotMemory *) mem;

  block_release_slot (slot->block);
  g_free (slot);
}

static gpointer
slot_map_full (GstMemory * mem, GstMapInfo * info, gsize maxsize)
{
  GstSpdlSlotMemory *slot = (GstSpdlSlotMemory *) mem;

  /* a live slot keeps its block's batch, and so its mapping */
  return slot->block->images.data + slot->offset;
}

static void
slot_unmap_full (GstMemory * mem, GstMapInfo * info)
{
}

static GstMemory *
slot_share (GstMemory * mem, gssize offset, gssize size)
{
  return NULL;
}

static void
gst_spdl_slot_allocator_class_init (GstSpdlSlotAllocatorClass * klass)
{
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS (klass);

  allocator_class->alloc = slot_alloc;
  allocator_class->free = slot_free;
}

static void
gst_spdl_slot_allocator_init (GstSpdlSlotAllocator * self)
{
  GstAllocator *allocator = GST_ALLOCATOR (self);

  allocator->mem_type = SLOT_MEMORY_TYPE;
  allocator->mem_map_full = slot_map_full;
  allocator->mem_unmap_full = slot_unmap_full;
  allocator->mem_share = slot_share;
  GST_OBJECT_FLAG_SET (allocator, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

static GstMemory *
slot_memory_new (GstSpdlSlotBlock * block, guint index, guint64 seq,
    gsize image_bytes)
{
  GstSpdlSlotMemory *slot = g_new0 (GstSpdlSlotMemory, 1);

  gst_memory_init (GST_MEMORY_CAST (slot), 0, slot_allocator, NULL,
      image_bytes, 0, 0, image_bytes);
  slot->block = block;
  slot->index = index;
  slot->seq = seq;
  slot->offset = (gsize) index * image_bytes;
  return GST_MEMORY_CAST (slot);
}

gboolean
gst_spdl_slot_lookup (GstBuffer * buffer, GstSpdlSlotBlock ** block,
    guint * index, guint64 * seq)
{
  GstMemory *mem;
  GstSpdlSlotMemory *slot;

  if (slot_allocator == NULL || gst_buffer_n_memory (buffer) != 1)
    return FALSE;
  mem = gst_buffer_peek_memory (buffer, 0);
  if (mem->allocator != slot_allocator || mem->offset != 0 ||
      mem->size != mem->maxsize)
    return FALSE;
  slot = (GstSpdlSlotMemory *) mem;
  *block = slot->block;
  *index = slot->index;
  *seq = slot->seq;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* The pool                                                                 */

GstSpdlSlotPool *
gst_spdl_slot_pool_new (GstBufferPool * batch_pool, guint batch_size,
    const GstVideoInfo * info, gsize image_bytes)
{
  GstSpdlSlotPool *pool = g_object_new (GST_TYPE_SPDL_SLOT_POOL, NULL);
  GstStructure *config;
  GstCaps *caps;

  gst_object_ref_sink (pool);
  pool->batch_pool = gst_object_ref (batch_pool);
  pool->batch_size = batch_size;
  pool->info = *info;
  pool->image_bytes = image_bytes;
  caps = gst_video_info_to_caps (info);
  config = gst_buffer_pool_get_config (GST_BUFFER_POOL (pool));
  gst_buffer_pool_config_set_params (config, caps, image_bytes, 0, 0);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_set_config (GST_BUFFER_POOL (pool), config);
  gst_caps_unref (caps);
  return pool;
}

void
gst_spdl_slot_pool_set_batch_start (GstSpdlSlotPool * pool, guint64 seq)
{
  g_mutex_lock (&pool->lock);
  pool->batch_start = seq;
  g_mutex_unlock (&pool->lock);
}

static const gchar **
gst_spdl_slot_pool_get_options (GstBufferPool * pool)
{
  static const gchar *options[] = { GST_BUFFER_POOL_OPTION_VIDEO_META, NULL };
  return options;
}

/* Only the slot size we make; the rest of the config is the caller's. */
static gboolean
gst_spdl_slot_pool_set_config (GstBufferPool * bpool, GstStructure * config)
{
  GstSpdlSlotPool *self = GST_SPDL_SLOT_POOL (bpool);
  GstCaps *caps;
  GstVideoInfo info;
  guint size, min, max;

  if (!gst_buffer_pool_config_get_params (config, &caps, &size, &min, &max) ||
      caps == NULL || !gst_video_info_from_caps (&info, caps) ||
      GST_VIDEO_INFO_FORMAT (&info) != GST_VIDEO_INFO_FORMAT (&self->info) ||
      GST_VIDEO_INFO_WIDTH (&info) != GST_VIDEO_INFO_WIDTH (&self->info) ||
      GST_VIDEO_INFO_HEIGHT (&info) != GST_VIDEO_INFO_HEIGHT (&self->info)) {
    GST_WARNING_OBJECT (self, "refused config %" GST_PTR_FORMAT, config);
    return FALSE;
  }
  /* nothing is preallocated: slots are made on demand */
  gst_buffer_pool_config_set_params (config, caps, self->image_bytes, 0, 0);
  return GST_BUFFER_POOL_CLASS (gst_spdl_slot_pool_parent_class)->set_config
      (bpool, config);
}

static gboolean
gst_spdl_slot_pool_start (GstBufferPool * bpool)
{
  return TRUE;
}

static gboolean
gst_spdl_slot_pool_stop (GstBufferPool * bpool)
{
  GstSpdlSlotPool *self = GST_SPDL_SLOT_POOL (bpool);
  GstSpdlSlotBlock *block;

  g_mutex_lock (&self->lock);
  block = g_steal_pointer (&self->block);
  g_mutex_unlock (&self->lock);
  if (block)
    gst_spdl_slot_block_unref (block);
  return TRUE;
}

static GstSpdlSlotBlock *
block_new (GstSpdlSlotPool * self)
{
  GstSpdlSlotBlock *block;
  GstBuffer *batch;

  if (gst_buffer_pool_acquire_buffer (self->batch_pool, &batch, NULL) !=
      GST_FLOW_OK)
    return NULL;
  block = g_new0 (GstSpdlSlotBlock, 1);
  /* the batch memory is written by several decoders at once and read by
   * spdlbatch: all through this one read-write mapping */
  if (!gst_memory_map (gst_buffer_peek_memory (batch, 0), &block->images,
          GST_MAP_READWRITE)) {
    GST_ERROR_OBJECT (self, "could not map a batch's images memory");
    g_free (block);
    gst_buffer_unref (batch);
    return NULL;
  }
  block->refcount = 1;
  block->pool_serial = self->serial;
  block->batch = batch;
  g_mutex_init (&block->lock);
  return block;
}

/* Does slot @seq start a new block? Called with the lock. */
static gboolean
starts_block (GstSpdlSlotPool * self, guint64 seq)
{
  if (self->block == NULL || self->next_index >= self->batch_size)
    return TRUE;
  return self->next_index > 0 && seq >= self->batch_start &&
      (seq - self->batch_start) % self->batch_size == 0;
}

static void
add_video_meta (GstSpdlSlotPool * self, GstBuffer * buffer)
{
  const GstVideoInfo *info = &self->info;
  gsize offsets[GST_VIDEO_MAX_PLANES] = { 0 };
  gint strides[GST_VIDEO_MAX_PLANES] = { 0 };
  guint p, n = GST_VIDEO_INFO_N_PLANES (info);
  guint w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);

  /* tightly packed as the tensor wants, whatever GstVideoInfo rounds */
  for (p = 0; p < n; p++) {
    strides[p] = n == 1 ? w * GST_VIDEO_INFO_N_COMPONENTS (info) : w;
    offsets[p] = (gsize) p * w * h;
  }
  gst_buffer_add_video_meta_full (buffer, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_INFO_FORMAT (info), w, h, n, offsets, strides);
}

static GstFlowReturn
gst_spdl_slot_pool_acquire (GstBufferPool * bpool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * params)
{
  GstSpdlSlotPool *self = GST_SPDL_SLOT_POOL (bpool);
  GstSpdlSlotBlock *block = NULL;
  guint index;
  guint64 seq;

  if (GST_BUFFER_POOL_IS_FLUSHING (bpool))
    return GST_FLOW_FLUSHING;
  g_mutex_lock (&self->lock);
  seq = self->next_seq;
  if (self->block && !starts_block (self, seq) &&
      block_take_slot (self->block))
    block = self->block;
  if (block == NULL) {
    GstSpdlSlotBlock *fresh = block_new (self);
    if (fresh == NULL) {
      g_mutex_unlock (&self->lock);
      return GST_FLOW_FLUSHING;
    }
    if (self->block)
      gst_spdl_slot_block_unref (self->block);
    self->block = block = fresh;
    self->next_index = 0;
    block_take_slot (block);
  }
  index = self->next_index++;
  self->next_seq++;
  g_mutex_unlock (&self->lock);

  *buffer = gst_buffer_new ();
  gst_buffer_append_memory (*buffer, slot_memory_new (block, index, seq,
          self->image_bytes));
  add_video_meta (self, *buffer);
  return GST_FLOW_OK;
}

/* Slot buffers are not reused: their memory goes back to its block. */
static void
gst_spdl_slot_pool_release (GstBufferPool * bpool, GstBuffer * buffer)
{
  gst_buffer_unref (buffer);
}

static void
gst_spdl_slot_pool_finalize (GObject * object)
{
  GstSpdlSlotPool *self = GST_SPDL_SLOT_POOL (object);

  if (self->block)
    gst_spdl_slot_block_unref (self->block);
  gst_object_unref (self->batch_pool);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (gst_spdl_slot_pool_parent_class)->finalize (object);
}

static void
gst_spdl_slot_pool_class_init (GstSpdlSlotPoolClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstBufferPoolClass *pool_class = GST_BUFFER_POOL_CLASS (klass);

  gobject_class->finalize = gst_spdl_slot_pool_finalize;
  pool_class->get_options = gst_spdl_slot_pool_get_options;
  pool_class->set_config = gst_spdl_slot_pool_set_config;
  pool_class->start = gst_spdl_slot_pool_start;
  pool_class->stop = gst_spdl_slot_pool_stop;
  pool_class->acquire_buffer = gst_spdl_slot_pool_acquire;
  pool_class->release_buffer = gst_spdl_slot_pool_release;

  GST_DEBUG_CATEGORY_INIT (spdl_slot_pool_debug, "spdlslotpool", 0,
      "SPDL batch slot pool");
  slot_allocator = g_object_new (GST_TYPE_SPDL_SLOT_ALLOCATOR, NULL);
  gst_object_ref_sink (slot_allocator);
  GST_OBJECT_FLAG_SET (slot_allocator, GST_OBJECT_FLAG_MAY_BE_LEAKED);
}

static void
gst_spdl_slot_pool_init (GstSpdlSlotPool * self)
{
  static guint64 next_serial;
  static GMutex serial_lock;

  g_mutex_lock (&serial_lock);
  self->serial = ++next_serial;
  g_mutex_unlock (&serial_lock);
  g_mutex_init (&self->lock);
}
