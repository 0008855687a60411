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

G_BEGIN_DECLS

#define GST_TYPE_SPDL_CUDA_UPLOAD (gst_spdl_cuda_upload_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlCudaUpload, gst_spdl_cuda_upload, GST,
    SPDL_CUDA_UPLOAD, GstBaseTransform)

struct _GstSpdlCudaUpload
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  gint device_id;
  guint device_buffers;

  /* streaming */
  gint active_device;
  gpointer stream;              /* cudaStream_t */
  GstAllocator *host_allocator;
  GstAllocator *device_allocator;
  GstBufferPool *pool;
  GstSpdlTensorInfo tensors[GST_SPDL_TENSOR_MAX];
  guint n_tensors;
  guint64 uploaded_bytes;
  GstSpdlStats stats;
};

GST_ELEMENT_REGISTER_DECLARE (spdlcudaupload);

G_END_DECLS

#endif /* __GST_SPDL_CUDA_UPLOAD_H__ */
