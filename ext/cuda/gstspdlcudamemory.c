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

#include <cuda_runtime_api.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (spdl_cuda_memory_debug);
#define GST_CAT_DEFAULT spdl_cuda_memory_debug

typedef struct
{
  GstMemory mem;
  gpointer ptr;                 /* host: the pinned block; device: cudaMalloc */
  gint device_id;
  gpointer staging;             /* device memory mapped on the host */
  GstMapFlags map_flags;
} GstSpdlCudaMemory;

/* ------------------------------------------------------------------------ */
/* Pinned host memory                                                       */

typedef struct
{
  GstAllocator parent;
} GstSpdlCudaHostAllocator;
typedef GstAllocatorClass GstSpdlCudaHostAllocatorClass;
static GType gst_spdl_cuda_host_allocator_get_type (void);
G_DEFINE_TYPE (GstSpdlCudaHostAllocator, gst_spdl_cuda_host_allocator,
    GST_TYPE_ALLOCATOR);

static GstMemory *
host_alloc (GstAllocator * allocator, gsize size, GstAllocationParams * params)
{
  GstSpdlCudaMemory *mem;
  gsize align = params ? params->align : 0;
  gsize maxsize = size + align;
  gpointer ptr = NULL;
  cudaError_t err = cudaHostAlloc (&ptr, maxsize, cudaHostAllocDefault);
  gsize offset;

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
  return GST_MEMORY_CAST (mem);
}

static void
host_free (GstAllocator * allocator, GstMemory * memory)
{
  GstSpdlCudaMemory *mem = (GstSpdlCudaMemory *) memory;

  cudaFreeHost (mem->ptr);
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
gst_spdl_cuda_host_allocator_new (void)
{
  GstAllocator *a = g_object_new (gst_spdl_cuda_host_allocator_get_type (),
      NULL);

  gst_object_ref_sink (a);
  return a;
}

/* ------------------------------------------------------------------------ */
/* Device memory                                                            */

typedef struct
{
  GstAllocator parent;
  gint device_id;
} GstSpdlCudaDeviceAllocator;
typedef GstAllocatorClass GstSpdlCudaDeviceAllocatorClass;
static GType gst_spdl_cuda_device_allocator_get_type (void);
G_DEFINE_TYPE (GstSpdlCudaDeviceAllocator, gst_spdl_cuda_device_allocator,
    GST_TYPE_ALLOCATOR);

static GstMemory *
device_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  GstSpdlCudaDeviceAllocator *self = (GstSpdlCudaDeviceAllocator *) allocator;
  GstSpdlCudaMemory *mem;
  gpointer ptr = NULL;
  cudaError_t err;

  err = cudaSetDevice (self->device_id);
  if (err == cudaSuccess)
    err = cudaMalloc (&ptr, MAX (size, 1));
  if (err != cudaSuccess) {
    GST_ERROR ("cudaMalloc of %" G_GSIZE_FORMAT " bytes on device %d: %s",
        size, self->device_id, cudaGetErrorString (err));
    return NULL;
  }
  mem = g_new0 (GstSpdlCudaMemory, 1);
  /* no sub-memories of device memory: buffer copies copy */
  gst_memory_init (GST_MEMORY_CAST (mem), GST_MEMORY_FLAG_NO_SHARE,
      allocator, NULL, size, 0, 0, size);
  mem->ptr = ptr;
  mem->device_id = self->device_id;
  return GST_MEMORY_CAST (mem);
}

static void
device_free (GstAllocator * allocator, GstMemory * memory)
{
  GstSpdlCudaMemory *mem = (GstSpdlCudaMemory *) memory;

  cudaSetDevice (mem->device_id);
  cudaFree (mem->ptr);
  g_free (mem->staging);
  g_free (mem);
}

static gpointer
device_map (GstMemory * memory, gsize maxsize, GstMapFlags flags)
{
  GstSpdlCudaMemory *mem = (GstSpdlCudaMemory *) memory;
  cudaError_t err = cudaSuccess;

  if (mem->staging == NULL)
    mem->staging = g_malloc (memory->maxsize);
  cudaSetDevice (mem->device_id);
  if (flags & GST_MAP_READ)
    err = cudaMemcpy (mem->staging, mem->ptr, memory->maxsize,
        cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) {
    GST_ERROR ("device to host copy: %s", cudaGetErrorString (err));
    return NULL;
  }
  mem->map_flags = flags;
  return mem->staging;
}

static void
device_unmap (GstMemory * memory)
{
  GstSpdlCudaMemory *mem = (GstSpdlCudaMemory *) memory;

  if (mem->map_flags & GST_MAP_WRITE) {
    cudaSetDevice (mem->device_id);
    cudaMemcpy (mem->ptr, mem->staging, memory->maxsize,
        cudaMemcpyHostToDevice);
  }
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
gst_spdl_cuda_device_allocator_new (gint device_id)
{
  GstSpdlCudaDeviceAllocator *a =
      g_object_new (gst_spdl_cuda_device_allocator_get_type (), NULL);

  a->device_id = device_id;
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

void
gst_spdl_cuda_meta_register (void)
{
  gst_spdl_custom_meta_register (GST_SPDL_CUDA_META_NAME);
}

void
gst_spdl_buffer_add_cuda_meta (GstBuffer * buffer, gint device_id)
{
  guint i, n = MIN (gst_buffer_n_memory (buffer), 16);
  guint64 pointers[16];
  GstCustomMeta *meta;
  GstStructure *s;

  gst_spdl_cuda_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_CUDA_META_NAME);
  if (meta == NULL)
    meta = gst_buffer_add_custom_meta (buffer, GST_SPDL_CUDA_META_NAME);
  s = gst_custom_meta_get_structure (meta);
  for (i = 0; i < n; i++)
    pointers[i] = (guint64) (guintptr)
        gst_spdl_cuda_memory_get_device_pointer (gst_buffer_peek_memory
        (buffer, i));
  gst_structure_set (s, "device-id", G_TYPE_INT, device_id, NULL);
  gst_spdl_structure_set_uint64_array (s, "pointers", pointers, n);
}
