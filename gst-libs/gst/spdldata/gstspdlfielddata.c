/* GStreamer SPDL: a sample's fields as its source found them
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

#include "gstspdlfielddata.h"

#include <string.h>

GstSpdlFieldData *
gst_spdl_field_data_new (guint n)
{
  return g_new0 (GstSpdlFieldData, MAX (n, 1));
}

void
gst_spdl_field_data_free (GstSpdlFieldData * fields, guint n)
{
  guint i;

  if (fields == NULL)
    return;
  for (i = 0; i < n; i++) {
    g_clear_pointer (&fields[i].data, g_bytes_unref);
    g_clear_error (&fields[i].error);
  }
  g_free (fields);
}

guint64
gst_spdl_field_data_size (const GstSpdlFieldData * fields, guint n)
{
  guint64 size = 0;
  guint i;

  for (i = 0; fields && i < n; i++)
    if (fields[i].data)
      size += g_bytes_get_size (fields[i].data);
  return size;
}

gint
gst_spdl_field_match (const GstSpdlField * field, const gchar * name,
    gboolean exact)
{
  gint i;

  for (i = 0; field->alternatives[i]; i++) {
    if (exact ? strcmp (field->alternatives[i], name) == 0 :
        g_ascii_strcasecmp (field->alternatives[i], name) == 0)
      return i;
  }
  return -1;
}

typedef struct
{
  GstBuffer *buffer;
  GstMapInfo map;
} MappedBuffer;

static void
mapped_buffer_free (gpointer data)
{
  MappedBuffer *mapped = data;

  gst_buffer_unmap (mapped->buffer, &mapped->map);
  gst_buffer_unref (mapped->buffer);
  g_free (mapped);
}

GBytes *
gst_spdl_bytes_from_buffer (GstBuffer * buffer)
{
  MappedBuffer *mapped = g_new0 (MappedBuffer, 1);

  if (!gst_buffer_map (buffer, &mapped->map, GST_MAP_READ)) {
    g_free (mapped);
    return NULL;
  }
  mapped->buffer = gst_buffer_ref (buffer);
  return g_bytes_new_with_free_func (mapped->map.data, mapped->map.size,
      mapped_buffer_free, mapped);
}
