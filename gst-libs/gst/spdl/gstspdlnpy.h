/* GStreamer SPDL: NumPy .npy arrays (an npy field's value)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_NPY_H__
#define __GST_SPDL_NPY_H__

#include <gst/gst.h>

#include "gstspdltensor.h"

G_BEGIN_DECLS

/* What an .npy file holds, as numpy.save writes it (format versions 1.0,
 * 2.0 and 3.0): its numbers' type, its shape (C order) and where its data
 * are in the file. */
typedef struct
{
  GstSpdlDType dtype;
  guint n_dims;                 /* 0: a scalar (one element) */
  guint64 shape[GST_SPDL_TENSOR_MAX_DIMS];
  guint64 n_elements;
  gsize data_offset;            /* the header's length */
  gsize data_size;              /* n_elements x the dtype's size */
} GstSpdlNpyInfo;

/* Reads the header of the .npy file @data (@len bytes) into @info. Only
 * what a tensor can hold as it is: little-endian or byte-order-free
 * numbers (descr "<i8", "|u1", "<f4", "|b1", ...), C order, at most
 * GST_SPDL_TENSOR_MAX_DIMS dimensions, and data exactly filling the rest
 * of the file. FALSE with @error (GST_STREAM_ERROR) saying why in words
 * ("is in Fortran order"); reads nothing past @len. */
gboolean gst_spdl_npy_parse (const guint8 * data, gsize len,
    GstSpdlNpyInfo * info, GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_NPY_H__ */
