/* gst-spdl example: reading a batch's fields in C, without Python
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __SPDL_EXAMPLE_PRINT_BATCH_H__
#define __SPDL_EXAMPLE_PRINT_BATCH_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* One line per sample of the batch @sample (an appsink's, after
 * spdlbatch): its dataset index and label, then each field of the record
 * (docs/record.md) as text: numbers, strings and JSON as they are, bytes
 * by length, npy arrays by shape, images and label maps by size. NULL
 * with @error when the batch is not one of spdlbatch's. Reads only the
 * caps (names, fields, dimensions, types), the buffer's memories and the
 * batch meta: what any GStreamer application can. */
gchar *spdl_example_describe_batch (GstSample * sample, GError ** error);

G_END_DECLS

#endif /* __SPDL_EXAMPLE_PRINT_BATCH_H__ */
