/* GStreamer SPDL CUDA plugin: pinned host and device memory
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_CUDA_MEMORY_H__
#define __GST_SPDL_CUDA_MEMORY_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Batches in device memory carry this caps feature (GStreamer 1.22's
 * memory:CUDAMemory holds pitched video frames only, not tensors). */
#define GST_CAPS_FEATURE_MEMORY_SPDL_CUDA "memory:SpdlCUDA"

/* Each device batch carries a GstCustomMeta of this name: "device-id" (gint)
 * and "pointers" (GstValueArray of guint64 device addresses, one per
 * tensor), for consumers that hand the memory to a framework. */
#define GST_SPDL_CUDA_META_NAME "GstSpdlCudaMeta"

#define GST_SPDL_CUDA_HOST_MEMORY_TYPE "SpdlCudaHost"
#define GST_SPDL_CUDA_DEVICE_MEMORY_TYPE "SpdlCudaDevice"

/* Page-locked host memory (cudaHostAlloc): copies from it to the device
 * run asynchronously at full bus speed. */
GstAllocator *gst_spdl_cuda_host_allocator_new (void);

/* Device memory (cudaMalloc) on @device_id. Mapping it for reading copies
 * it to a host staging area (and back when mapped for writing), so generic
 * elements can inspect it; gst_spdl_cuda_memory_get_device_pointer() gives
 * the device address. */
GstAllocator *gst_spdl_cuda_device_allocator_new (gint device_id);
gboolean gst_is_spdl_cuda_memory (GstMemory * mem);
gpointer gst_spdl_cuda_memory_get_device_pointer (GstMemory * mem);

void gst_spdl_cuda_meta_register (void);
void gst_spdl_buffer_add_cuda_meta (GstBuffer * buffer, gint device_id);

G_END_DECLS

#endif /* __GST_SPDL_CUDA_MEMORY_H__ */
