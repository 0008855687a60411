/* GStreamer SPDL: tensor caps
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_TENSOR_H__
#define __GST_SPDL_TENSOR_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Batches use NNStreamer's caps convention: other/tensors, format=static,
 * num_tensors, dimensions (innermost first, ':' between dimensions, ','
 * between tensors) and types; one GstMemory per tensor. */
#define GST_SPDL_TENSORS_MEDIA_TYPE "other/tensors"
#define GST_SPDL_TENSOR_MAX_DIMS 8
/* a GstBuffer holds at most 16 memories (gst_buffer_get_max_memory ();
 * more are merged into one): one batch, at most 16 tensors */
#define GST_SPDL_TENSOR_MAX 16

typedef enum
{
  GST_SPDL_DTYPE_UINT8,
  GST_SPDL_DTYPE_INT64,
  GST_SPDL_DTYPE_FLOAT32,
  GST_SPDL_DTYPE_FLOAT16,
  GST_SPDL_DTYPE_BFLOAT16,       /* no NNStreamer name: "bfloat16" */
  GST_SPDL_DTYPE_FLOAT64,        /* clips' presentation times */
  /* the rest of NumPy's numbers, for npy fields (gstspdlnpy.h) */
  GST_SPDL_DTYPE_INT8,
  GST_SPDL_DTYPE_INT16,
  GST_SPDL_DTYPE_INT32,
  GST_SPDL_DTYPE_UINT16,
  GST_SPDL_DTYPE_UINT32,
  GST_SPDL_DTYPE_UINT64,
  GST_SPDL_DTYPE_BOOL,           /* no NNStreamer name: "bool", one byte */
  GST_SPDL_DTYPE_UNKNOWN,
} GstSpdlDType;

typedef struct
{
  guint n_dims;
  guint64 shape[GST_SPDL_TENSOR_MAX_DIMS];      /* outermost first */
  GstSpdlDType dtype;
} GstSpdlTensorInfo;

gsize gst_spdl_dtype_size (GstSpdlDType dtype);
const gchar *gst_spdl_dtype_name (GstSpdlDType dtype);
gsize gst_spdl_tensor_info_size (const GstSpdlTensorInfo * info);

GstCaps *gst_spdl_tensors_caps_new (const GstSpdlTensorInfo * tensors,
    guint n_tensors, const gchar * caps_feature);
/* Parses tensors caps; returns the number of tensors, 0 on failure. An
 * outermost dimension of 0 is a tensor whose length changes from buffer
 * to buffer (a record field's NAME/values): its memory's size gives it. */
guint gst_spdl_tensors_from_caps (const GstCaps * caps,
    GstSpdlTensorInfo * tensors, guint max_tensors);
/* Whether @info's length is its memory's (outermost dimension 0) */
gboolean gst_spdl_tensor_info_is_variable (const GstSpdlTensorInfo * info);
/* "32,224,224,3" */
gchar *gst_spdl_tensor_shape_to_string (const GstSpdlTensorInfo * info);

G_END_DECLS

#endif /* __GST_SPDL_TENSOR_H__ */
