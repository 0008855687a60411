/* GStreamer SPDL: a sample's fields as its source found them
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_FIELD_DATA_H__
#define __GST_SPDL_FIELD_DATA_H__

#include <gst/gst.h>

#include "gstspdlrecord.h"

G_BEGIN_DECLS

/* One field of a sample's record (gstspdlrecord.h) before spdlsrc checks
 * it against its kind: the bytes of the shard member, manifest column or
 * sidecar file that holds it, or why it has none. */
typedef struct
{
  GBytes *data;                 /* NULL: absent (or @error) */
  GError *error;                /* present but not read: GST_SPDL_READ_ERROR
                                 * (field-too-large, unreadable) */
} GstSpdlFieldData;

/* @n fields, all absent. */
GstSpdlFieldData *gst_spdl_field_data_new (guint n);
void gst_spdl_field_data_free (GstSpdlFieldData * fields, guint n);
/* The bytes they hold (for memory bounds). */
guint64 gst_spdl_field_data_size (const GstSpdlFieldData * fields, guint n);

/* Which alternative of @field @name is (a member's extension or a
 * sidecar's, compared ignoring ASCII case; a manifest's column exactly
 * with @exact): its index, lower is preferred; -1 when none. */
gint gst_spdl_field_match (const GstSpdlField * field, const gchar * name,
    gboolean exact);

/* @buffer's bytes as a GBytes that keeps it mapped (no copy); takes a
 * reference of its own. NULL when it cannot be mapped. */
GBytes *gst_spdl_bytes_from_buffer (GstBuffer * buffer);

G_END_DECLS

#endif /* __GST_SPDL_FIELD_DATA_H__ */
