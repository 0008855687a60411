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

/* Each device batch carries a GstCustomMeta of this name, for consumers that
 * hand the memory to a framework: "device-id" (gint); per tensor, as
 * GstValueArray of guint64: "pointers" (device addresses), "ready-events"
 * (cudaEvent_t recorded on the upload stream after the tensor's copy: wait
 * on it, e.g. cudaStreamWaitEvent on the consumer's stream, before reading)
 * and "release-events" (cudaEvent_t the consumer may record on its stream
 * when it is done: the element waits on it before it writes into that
 * memory again); and "stream" (guint64, the upload cudaStream_t). The events
 * are 0 where there are none (emulated device). */
#define GST_SPDL_CUDA_META_NAME "GstSpdlCudaMeta"

#define GST_SPDL_CUDA_HOST_MEMORY_TYPE "SpdlCudaHost"
#define GST_SPDL_CUDA_DEVICE_MEMORY_TYPE "SpdlCudaDevice"

/* Page-locked host memory (cudaHostAlloc, portable), allocated in
 * @device_id's context: copies from it to the device run asynchronously at
 * full bus speed. */
GstAllocator *gst_spdl_cuda_host_allocator_new (gint device_id);

/* Device memory (cudaMalloc) on @device_id, each with a ready and a
 * release event. Mapping it for reading waits for the ready event and
 * copies it to a host staging area (and back when mapped for writing), so
 * generic elements can inspect it; gst_spdl_cuda_memory_get_device_pointer()
 * gives the device address.
 *
 * With @emulated, plain host memory stands in for the device and no CUDA
 * call is made: the element uses it only when the test-only variable
 * GST_SPDL_CUDA_EMULATE is set, so that its pool, flushing, caps and
 * normalization run in tests on machines without a GPU. */
GstAllocator *gst_spdl_cuda_device_allocator_new (gint device_id,
    gboolean emulated);
gboolean gst_is_spdl_cuda_memory (GstMemory * mem);
gpointer gst_spdl_cuda_memory_get_device_pointer (GstMemory * mem);
/* cudaEvent_t, NULL on an emulated device */
gpointer gst_spdl_cuda_memory_get_ready_event (GstMemory * mem);
gpointer gst_spdl_cuda_memory_get_release_event (GstMemory * mem);

void gst_spdl_cuda_meta_register (void);
void gst_spdl_buffer_add_cuda_meta (GstBuffer * buffer, gint device_id,
    gpointer stream);

/* Makes @device current on the calling thread and remembers the device that
 * was: every CUDA call on a thread that is not ours (the application's,
 * a consumer dropping a buffer) restores it, so the element never changes
 * the device a framework such as torch works on. */
typedef struct
{
  gint previous;
  gboolean switched;
} GstSpdlCudaDeviceScope;

gboolean gst_spdl_cuda_device_enter (GstSpdlCudaDeviceScope * scope,
    gint device);
void gst_spdl_cuda_device_leave (GstSpdlCudaDeviceScope * scope);

/* For consumers that reach the plugin through its shared library (Python's
 * ctypes in spdlgst.cuda): queue on @stream a wait for @event, and record
 * @event on @stream, on @device, restoring the caller's current device.
 * Both return a cudaError_t (0 on success). */
gint gst_spdl_cuda_stream_wait_event (gint device, guint64 stream,
    guint64 event);
gint gst_spdl_cuda_event_record (gint device, guint64 event, guint64 stream);

G_END_DECLS

#endif /* __GST_SPDL_CUDA_MEMORY_H__ */
