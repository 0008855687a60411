/* GStreamer SPDL CUDA plugin: pinned host and device memory
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlcudamemory.h"
#include "gstspdlmeta.h"
#include "gstspdltensor.h"

#include <cuda_runtime_api.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (spdl_cuda_memory_debug);
#define GST_CAT_DEFAULT spdl_cuda_memory_debug

typedef struct
{
  GstMemory mem;
  gpointer ptr;                 /* host: the pinned block; device: cudaMalloc */
  /* device memory only */
  gint device_id;
  gboolean emulated;            /* host memory standing in (tests) */
  cudaEvent_t ready;            /* recorded after each write to the device */
  cudaEvent_t release;          /* recorded by the consumer when done */
  GMutex lock;                  /* the staging area and its maps */
  gpointer staging;             /* device memory mapped on the host */
  guint n_maps;
  gboolean write_mapped;
} GstSpdlCudaMemory;

gboolean
gst_spdl_cuda_device_enter (GstSpdlCudaDeviceScope * scope, gint device)
{
  gint current = -1;

  scope->switched = FALSE;
  if (cudaGetDevice (&current) == cudaSuccess && current == device)
    return TRUE;
  if (cudaSetDevice (device) != cudaSuccess)
    return FALSE;
  scope->previous = current;
  scope->switched = current >= 0;
  return TRUE;
}

void
gst_spdl_cuda_device_leave (GstSpdlCudaDeviceScope * scope)
{
  if (scope->switched)
    cudaSetDevice (scope->previous);
  scope->switched = FALSE;
}

gint
gst_spdl_cuda_stream_wait_event (gint device, guint64 stream, guint64 event)
{
  GstSpdlCudaDeviceScope scope;
  cudaError_t err;

  if (!gst_spdl_cuda_device_enter (&scope, device))
    return cudaErrorInvalidDevice;
  err = cudaStreamWaitEvent ((cudaStream_t) (guintptr) stream,
      (cudaEvent_t) (guintptr) event, 0);
  gst_spdl_cuda_device_leave (&scope);
  return err;
}

gint
gst_spdl_cuda_event_record (gint device, guint64 event, guint64 stream)
{
  GstSpdlCudaDeviceScope scope;
  cudaError_t err;

  if (!gst_spdl_cuda_device_enter (&scope, device))
    return cudaErrorInvalidDevice;
  err = cudaEventRecord ((cudaEvent_t) (guintptr) event,
      (cudaStream_t) (guintptr) stream);
  gst_spdl_cuda_device_leave (&scope);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Pinned host memory                                                       */

typedef struct
{
  GstAllocator parent;
  gint device_id;
} GstSpdlCudaHostAllocator;
typedef GstAllocatorClass GstSpdlCudaHostAllocatorClass;
static GType gst_spdl_cuda_host_allocator_get_type (void);
G_DEFINE_TYPE (GstSpdlCudaHostAllocator, gst_spdl_cuda_host_allocator,
    GST_TYPE_ALLOCATOR);

static GstMemory *
host_alloc (GstAllocator * allocator, gsize size, GstAllocationParams * params)
{
  GstSpdlCudaHostAllocator *self = (GstSpdlCudaHostAllocator *) allocator;
  GstSpdlCudaDeviceScope scope;
  GstSpdlCudaMemory *mem;
  gsize align = params ? params->align : 0;
  gsize maxsize = size + align;
  gpointer ptr = NULL;
  cudaError_t err = cudaErrorInvalidDevice;
  gsize offset;

  /* upstream's thread: allocate in the upload device's context (not in
   * device 0's, which every process of a multi-GPU job would then create) */
  if (gst_spdl_cuda_device_enter (&scope, self->device_id)) {
    err = cudaHostAlloc (&ptr, maxsize, cudaHostAllocPortable);
    gst_spdl_cuda_device_leave (&scope);
  }
  if (err != cudaSuccess) {
    GST_ERROR ("cudaHostAlloc of %" G_GSIZE_FORMAT " bytes: %s", maxsize,
        cudaGetErrorString (err));
    return NULL;
  }
  offset = ((guintptr) ptr & align) ? align + 1 - ((guintptr) ptr & align) : 0;
  mem = g_new0 (GstSpdlCudaMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (mem), params ? params->flags : 0,
      allocator, NULL, maxsize, align, offset, size);
  mem->ptr = ptr;
  mem->device_id = self->device_id;
  return GST_MEMORY_CAST (mem);
}

static void
host_free (GstAllocator * allocator, GstMemory * memory)
{
  GstSpdlCudaMemory *mem = (GstSpdlCudaMemory *) memory;
  GstSpdlCudaDeviceScope scope;

  if (gst_spdl_cuda_device_enter (&scope, mem->device_id)) {
    cudaFreeHost (mem->ptr);
    gst_spdl_cuda_device_leave (&scope);
  }
  g_free (mem);
}

static gpointer
host_map (GstMemory * memory, gsize maxsize, GstMapFlags flags)
{
  return ((GstSpdlCudaMemory *) memory)->ptr;
}

static void
host_unmap (GstMemory * memory)
{
}

static GstMemory *
host_share (GstMemory * memory, gssize offset, gssize size)
{
  GstSpdlCudaMemory *mem = (GstSpdlCudaMemory *) memory, *sub;
  GstMemory *parent = memory->parent ? memory->parent : memory;

  if (size == -1)
    size = memory->size - offset;
  sub = g_new0 (GstSpdlCudaMemory, 1);
  gst_memory_init (GST_MEMORY_CAST (sub),
      GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
      memory->allocator, parent, memory->maxsize, memory->align,
      memory->offset + offset, size);
  sub->ptr = mem->ptr;
  sub->device_id = mem->device_id;
  return GST_MEMORY_CAST (sub);
}

static void
host_sub_free (GstSpdlCudaMemory * mem)
{
  g_free (mem);
}

static void
host_free_any (GstAllocator * allocator, GstMemory * memory)
{
  /* shared sub-memories do not own the pinned block */
  if (memory->parent)
    host_sub_free ((GstSpdlCudaMemory *) memory);
  else
    host_free (allocator, memory);
}

static void
gst_spdl_cuda_host_allocator_class_init (GstSpdlCudaHostAllocatorClass * klass)
{
  klass->alloc = host_alloc;
  klass->free = host_free_any;
  GST_DEBUG_CATEGORY_INIT (spdl_cuda_memory_debug, "spdlcudamemory", 0,
      "SPDL CUDA memory");
}

static void
gst_spdl_cuda_host_allocator_init (GstSpdlCudaHostAllocator * self)
{
  GstAllocator *a = GST_ALLOCATOR_CAST (self);

  a->mem_type = GST_SPDL_CUDA_HOST_MEMORY_TYPE;
  a->mem_map = host_map;
  a->mem_unmap = host_unmap;
  a->mem_share = host_share;
}

GstAllocator *
gst_spdl_cuda_host_allocator_new (gint device_id)
{
  GstSpdlCudaHostAllocator *a =
      g_object_new (gst_spdl_cuda_host_allocator_get_type (), NULL);

  a->device_id = device_id;
  gst_object_ref_sink (a);
  return GST_ALLOCATOR_CAST (a);
}

/* ------------------------------------------------------------------------ */
/* Device memory                                                            */

typedef struct
{
  GstAllocator parent;
  gint device_id;
  gboolean emulated;
} GstSpdlCudaDeviceAllocator;
typedef GstAllocatorClass GstSpdlCudaDeviceAllocatorClass;
static GType gst_spdl_cuda_device_allocator_get_type (void);
G_DEFINE_TYPE (GstSpdlCudaDeviceAllocator, gst_spdl_cuda_device_allocator,
    GST_TYPE_ALLOCATOR);

static gboolean
device_block_new (GstSpdlCudaMemory * mem, gsize size)
{
  GstSpdlCudaDeviceScope scope;
  cudaError_t err;

  if (mem->emulated) {
    mem->ptr = g_try_malloc0 (MAX (size, 1));
    return mem->ptr != NULL;
  }
  if (!gst_spdl_cuda_device_enter (&scope, mem->device_id)) {
    GST_ERROR ("cannot use CUDA device %d", mem->device_id);
    return FALSE;
  }
  err = cudaMalloc (&mem->ptr, MAX (size, 1));
  if (err == cudaSuccess)
    err = cudaEventCreateWithFlags (&mem->ready, cudaEventDisableTiming);
  if (err == cudaSuccess)
    err = cudaEventCreateWithFlags (&mem->release, cudaEventDisableTiming);
  gst_spdl_cuda_device_leave (&scope);
  if (err != cudaSuccess)
    GST_ERROR ("cudaMalloc of %" G_GSIZE_FORMAT " bytes on device %d: %s",
        size, mem->device_id, cudaGetErrorString (err));
  return err == cudaSuccess;
}

static void
device_block_free (GstSpdlCudaMemory * mem)
{
  GstSpdlCudaDeviceScope scope;

  if (mem->emulated) {
    g_free (mem->ptr);
    return;
  }
  /* the thread that drops the last reference may be the application's */
  if (!gst_spdl_cuda_device_enter (&scope, mem->device_id))
    return;
  if (mem->ptr)
    cudaFree (mem->ptr);
  if (mem->ready)
    cudaEventDestroy (mem->ready);
  if (mem->release)
    cudaEventDestroy (mem->release);
  gst_spdl_cuda_device_leave (&scope);
}

static GstMemory *
device_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  GstSpdlCudaDeviceAllocator *self = (GstSpdlCudaDeviceAllocator *) allocator;
  GstSpdlCudaMemory *mem = g_new0 (GstSpdlCudaMemory, 1);

  mem->device_id = self->device_id;
  mem->emulated = self->emulated;
  g_mutex_init (&mem->lock);
  /* no sub-memories of device memory: buffer copies copy */
  gst_memory_init (GST_MEMORY_CAST (mem), GST_MEMORY_FLAG_NO_SHARE,
      allocator, NULL, size, 0, 0, size);
  if (!device_block_new (mem, size)) {
    device_block_free (mem);
    g_mutex_clear (&mem->lock);
    g_free (mem);
    return NULL;
  }
  return GST_MEMORY_CAST (mem);
}

static void
device_free (GstAllocator * allocator, GstMemory * memory)
{
  GstSpdlCudaMemory *mem = (GstSpdlCudaMemory *) memory;

  device_block_free (mem);
  g_mutex_clear (&mem->lock);
  g_free (mem->staging);
  g_free (mem);
}

/* Waits for the last write to the device, then copies to the staging area */
static gboolean
device_download (GstSpdlCudaMemory * mem)
{
  GstSpdlCudaDeviceScope scope;
  cudaError_t err;

  if (!gst_spdl_cuda_device_enter (&scope, mem->device_id))
    return FALSE;
  err = cudaEventSynchronize (mem->ready);
  if (err == cudaSuccess)
    err = cudaMemcpy (mem->staging, mem->ptr, mem->mem.maxsize,
        cudaMemcpyDeviceToHost);
  gst_spdl_cuda_device_leave (&scope);
  if (err != cudaSuccess)
    GST_ERROR ("device to host copy: %s", cudaGetErrorString (err));
  return err == cudaSuccess;
}

static void
device_upload (GstSpdlCudaMemory * mem)
{
  GstSpdlCudaDeviceScope scope;
  cudaError_t err;

  if (!gst_spdl_cuda_device_enter (&scope, mem->device_id))
    return;
  err = cudaMemcpy (mem->ptr, mem->staging, mem->mem.maxsize,
      cudaMemcpyHostToDevice);
  /* readers wait on the ready event: it follows this copy */
  if (err == cudaSuccess)
    err = cudaEventRecord (mem->ready, 0);
  gst_spdl_cuda_device_leave (&scope);
  if (err != cudaSuccess)
    GST_ERROR ("host to device copy: %s", cudaGetErrorString (err));
}

static gpointer
device_map (GstMemory * memory, gsize maxsize, GstMapFlags flags)
{
  GstSpdlCudaMemory *mem = (GstSpdlCudaMemory *) memory;
  gpointer data = NULL;

  if (mem->emulated)
    return mem->ptr;
  /* maps for reading may come from several threads at once: one staging
   * area, filled by the first of them */
  g_mutex_lock (&mem->lock);
  if (mem->staging == NULL)
    mem->staging = g_try_malloc (memory->maxsize);
  if (mem->staging == NULL)
    goto done;
  if (mem->n_maps == 0 && (flags & GST_MAP_READ) && !device_download (mem))
    goto done;
  mem->n_maps++;
  if (flags & GST_MAP_WRITE)
    mem->write_mapped = TRUE;
  data = mem->staging;
done:
  g_mutex_unlock (&mem->lock);
  return data;
}

static void
device_unmap (GstMemory * memory)
{
  GstSpdlCudaMemory *mem = (GstSpdlCudaMemory *) memory;

  if (mem->emulated)
    return;
  g_mutex_lock (&mem->lock);
  if (--mem->n_maps == 0 && mem->write_mapped) {
    device_upload (mem);
    mem->write_mapped = FALSE;
  }
  g_mutex_unlock (&mem->lock);
}

static void
gst_spdl_cuda_device_allocator_class_init (GstSpdlCudaDeviceAllocatorClass *
    klass)
{
  klass->alloc = device_alloc;
  klass->free = device_free;
}

static void
gst_spdl_cuda_device_allocator_init (GstSpdlCudaDeviceAllocator * self)
{
  GstAllocator *a = GST_ALLOCATOR_CAST (self);

  a->mem_type = GST_SPDL_CUDA_DEVICE_MEMORY_TYPE;
  a->mem_map = device_map;
  a->mem_unmap = device_unmap;
  GST_OBJECT_FLAG_SET (a, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

GstAllocator *
gst_spdl_cuda_device_allocator_new (gint device_id, gboolean emulated)
{
  GstSpdlCudaDeviceAllocator *a =
      g_object_new (gst_spdl_cuda_device_allocator_get_type (), NULL);

  a->device_id = device_id;
  a->emulated = emulated;
  gst_object_ref_sink (a);
  return GST_ALLOCATOR_CAST (a);
}

gboolean
gst_is_spdl_cuda_memory (GstMemory * mem)
{
  return mem && gst_memory_is_type (mem, GST_SPDL_CUDA_DEVICE_MEMORY_TYPE);
}

gpointer
gst_spdl_cuda_memory_get_device_pointer (GstMemory * mem)
{
  g_return_val_if_fail (gst_is_spdl_cuda_memory (mem), NULL);
  return ((GstSpdlCudaMemory *) mem)->ptr;
}

gpointer
gst_spdl_cuda_memory_get_ready_event (GstMemory * mem)
{
  g_return_val_if_fail (gst_is_spdl_cuda_memory (mem), NULL);
  return ((GstSpdlCudaMemory *) mem)->ready;
}

gpointer
gst_spdl_cuda_memory_get_release_event (GstMemory * mem)
{
  g_return_val_if_fail (gst_is_spdl_cuda_memory (mem), NULL);
  return ((GstSpdlCudaMemory *) mem)->release;
}

void
gst_spdl_cuda_meta_register (void)
{
  gst_spdl_custom_meta_register (GST_SPDL_CUDA_META_NAME);
}

void
gst_spdl_buffer_add_cuda_meta (GstBuffer * buffer, gint device_id,
    gpointer stream)
{
  guint i, n = MIN (gst_buffer_n_memory (buffer), GST_SPDL_TENSOR_MAX);
  guint64 pointers[GST_SPDL_TENSOR_MAX], ready[GST_SPDL_TENSOR_MAX];
  guint64 release[GST_SPDL_TENSOR_MAX];
  GstCustomMeta *meta;
  GstStructure *s;

  gst_spdl_cuda_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_CUDA_META_NAME);
  if (meta == NULL)
    meta = gst_buffer_add_custom_meta (buffer, GST_SPDL_CUDA_META_NAME);
  s = gst_custom_meta_get_structure (meta);
  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);

    /* a tensor left in host memory (a record field's values): 0 */
    if (!gst_is_spdl_cuda_memory (mem)) {
      pointers[i] = ready[i] = release[i] = 0;
      continue;
    }
    pointers[i] = (guintptr) gst_spdl_cuda_memory_get_device_pointer (mem);
    ready[i] = (guintptr) gst_spdl_cuda_memory_get_ready_event (mem);
    release[i] = (guintptr) gst_spdl_cuda_memory_get_release_event (mem);
  }
  gst_structure_set (s, "device-id", G_TYPE_INT, device_id,
      "stream", G_TYPE_UINT64, (guint64) (guintptr) stream, NULL);
  gst_spdl_structure_set_uint64_array (s, "pointers", pointers, n);
  gst_spdl_structure_set_uint64_array (s, "ready-events", ready, n);
  gst_spdl_structure_set_uint64_array (s, "release-events", release, n);
}
