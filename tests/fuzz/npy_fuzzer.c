/* gst-spdl fuzz target: NumPy .npy headers
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* An npy field's value (a shard's member, a sidecar: any bytes) through
 * gst_spdl_npy_parse(). Checked: an accepted file's data lie exactly in
 * it, as many elements of its dtype as its shape says; the data are read
 * to the last byte (ASan finds a read past the input). */
#include <gst/gst.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlnpy.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GError *error = NULL;
  GstSpdlNpyInfo info;
  guint64 n = 1, sum = 0;
  gsize i;

  if (!gst_spdl_npy_parse (data, size, &info, &error)) {
    g_assert (error != NULL && error->domain == GST_STREAM_ERROR);
    g_assert (g_utf8_validate (error->message, -1, NULL));
    g_error_free (error);
    return 0;
  }
  g_assert (error == NULL);
  g_assert (info.dtype < GST_SPDL_DTYPE_UNKNOWN);
  g_assert (info.n_dims <= GST_SPDL_TENSOR_MAX_DIMS);
  for (i = 0; i < info.n_dims; i++)
    n *= info.shape[i];
  g_assert (n == info.n_elements);
  g_assert (info.data_size == n * gst_spdl_dtype_size (info.dtype));
  g_assert (info.data_offset <= size);
  g_assert (info.data_offset + info.data_size == size);
  for (i = 0; i < info.data_size; i++)
    sum += data[info.data_offset + i];
  (void) sum;
  return 0;
}
