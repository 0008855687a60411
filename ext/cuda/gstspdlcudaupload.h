/* GStreamer SPDL CUDA plugin: batch upload
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_CUDA_UPLOAD_H__
#define __GST_SPDL_CUDA_UPLOAD_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

#include "gstspdltensor.h"
#include "gstspdlstats.h"
#include "gstspdlcudanormalize.h"

G_BEGIN_DECLS

#define GST_TYPE_SPDL_CUDA_UPLOAD (gst_spdl_cuda_upload_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlCudaUpload, gst_spdl_cuda_upload, GST,
    SPDL_CUDA_UPLOAD, GstBaseTransform)

typedef enum
{
  GST_SPDL_CUDA_UPLOAD_LAYOUT_AS_INPUT,
  GST_SPDL_CUDA_UPLOAD_LAYOUT_NCHW,
  GST_SPDL_CUDA_UPLOAD_LAYOUT_NHWC,
} GstSpdlCudaUploadLayout;

/* mean and std: 1 value, or one per channel */
#define GST_SPDL_CUDA_UPLOAD_MAX_CHANNELS 3

typedef struct
{
  gdouble values[GST_SPDL_CUDA_UPLOAD_MAX_CHANNELS];
  guint n;                      /* as set: may exceed the values kept */
} GstSpdlCudaUploadChannels;

struct _GstSpdlCudaUpload
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  gint device_id;
  guint device_buffers;
  SpdlNormDType dtype;
  GstSpdlCudaUploadLayout layout;
  GstSpdlCudaUploadChannels mean, std;
  gboolean host_sync;
  guint stall_timeout;          /* ms, 0: never warn */

  /* under the object lock: set from the application's and the streaming
   * thread */
  GstBufferPool *pool;
  gboolean flushing;

  /* streaming */
  gint active_device;
  gboolean emulated;            /* test-only: host memory as the device */
  gboolean active_host_sync;
  guint active_buffers;
  gpointer stream;              /* cudaStream_t */
  GstAllocator *host_allocator;
  GstAllocator *device_allocator;
  GstSpdlTensorInfo tensors[GST_SPDL_TENSOR_MAX];
  guint n_tensors;
  /* tensors that stay host memory: a record field's values, offsets and
   * shapes (spdlbatch names them NAME/values, NAME/offsets, NAME/shapes) */
  gboolean host[GST_SPDL_TENSOR_MAX];
  gboolean convert;             /* tensor 0 changes type or layout */
  SpdlNormalizeParams norm;
  gpointer staging;             /* device copy of the uint8 images */
  gsize staging_size;
  GQueue inflight;              /* inputs whose copies may still run */
  GQueue spare_events;
  guint64 uploaded_bytes;
  GstSpdlStats stats;
};

GST_ELEMENT_REGISTER_DECLARE (spdlcudaupload);

G_END_DECLS

#endif /* __GST_SPDL_CUDA_UPLOAD_H__ */
