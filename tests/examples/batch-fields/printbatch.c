/* gst-spdl example: reading a batch's fields in C, without Python
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* A batch is one buffer with one GstMemory per tensor, in the order of
 * the caps' "names"; "fields" says each field's kind (NAME:KIND:MISSING,
 * ',' between fields). Per kind (docs/record.md):
 *   int, float      NAME          int64 / float64 [B]
 *   string, json, bytes
 *                   NAME/values   uint8 [n]: the samples' bytes in a row
 *                   NAME/offsets  int64 [B+1]: sample i is
 *                                 values[offsets[i]:offsets[i+1]]
 *   npy             NAME/values   the arrays' dtype [n]
 *                   NAME/offsets  int64 [B+1], in elements
 *                   NAME/shapes   int64 [B, 8], -1 past the last dimension
 *   image, label    NAME          uint8 [B,H,W,3] / uint8|uint16 [B,H,W]
 *   objects         NAME/boxes    float32 [n, 4] (x1, y1, x2, y2 pixels)
 *                   NAME/offsets  int64 [B+1]: sample i has objects
 *                                 offsets[i] to offsets[i+1]
 *                   NAME/labels, NAME/area, NAME/iscrowd  [n] each
 *                   NAME/masks    uint8 [n, H, W] (with instance-masks)
 * A NAME/values tensor's length is its memory's size (0 in the caps). */
#include "printbatch.h"

#include <string.h>

typedef struct
{
  GstBuffer *buffer;
  gchar **names;                /* the caps' "names" */
  gchar **types;                /* the caps' "types" */
  gchar **dims;                 /* the caps' "dimensions", innermost first */
  guint n_tensors, batch;
} Batch;

static gint
find_tensor (const Batch * b, const gchar * name)
{
  guint i;

  for (i = 0; i < b->n_tensors && b->names[i]; i++)
    if (g_strcmp0 (b->names[i], name) == 0)
      return i;
  return -1;
}

/* The tensor @name (its field's name and @suffix), mapped; NULL if none */
static const guint8 *
map_tensor (Batch * b, const gchar * field, const gchar * suffix,
    GstMapInfo * map, gint * index)
{
  gchar *name = g_strconcat (field, suffix, NULL);
  gint i = find_tensor (b, name);

  g_free (name);
  *index = i;
  if (i < 0 || !gst_memory_map (gst_buffer_peek_memory (b->buffer, i), map,
          GST_MAP_READ))
    return NULL;
  return map->data;
}

static void
unmap_tensor (Batch * b, gint index, GstMapInfo * map)
{
  gst_memory_unmap (gst_buffer_peek_memory (b->buffer, index), map);
}

/* "3x2" from "4:3:2:8" (innermost first, batch last) */
static gchar *
item_shape (const gchar * dims)
{
  gchar **d = g_strsplit (dims, ":", -1);
  GString *s = g_string_new (NULL);
  gint n = g_strv_length (d), i;

  for (i = n - 2; i >= 0; i--)
    g_string_append_printf (s, "%s%s", s->len ? "x" : "", d[i]);
  g_strfreev (d);
  return g_string_free (s, FALSE);
}

static void
describe_field (Batch * b, const gchar * name, const gchar * kind, guint slot,
    GString * out)
{
  GstMapInfo map, off, shp;
  gint i, k, s;

  g_string_append_printf (out, " %s=", name);
  if (!strcmp (kind, "int") || !strcmp (kind, "float")) {
    if (!map_tensor (b, name, "", &map, &i))
      goto missing;
    if (!strcmp (kind, "int"))
      g_string_append_printf (out, "%" G_GINT64_FORMAT,
          ((const gint64 *) map.data)[slot]);
    else
      g_string_append_printf (out, "%g", ((const gdouble *) map.data)[slot]);
    unmap_tensor (b, i, &map);
  } else if (!strcmp (kind, "objects")) {
    const gint64 *o, *labels;
    const gfloat *boxes;
    gint64 j;

    if (!map_tensor (b, name, "/offsets", &off, &k))
      goto missing;
    if (!map_tensor (b, name, "/labels", &map, &i)) {
      unmap_tensor (b, k, &off);
      goto missing;
    }
    if (!map_tensor (b, name, "/boxes", &shp, &s)) {
      unmap_tensor (b, i, &map);
      unmap_tensor (b, k, &off);
      goto missing;
    }
    o = (const gint64 *) off.data;
    labels = (const gint64 *) map.data;
    boxes = (const gfloat *) shp.data;
    g_string_append_c (out, '[');
    for (j = o[slot]; j < o[slot + 1]; j++)
      g_string_append_printf (out, "%s%" G_GINT64_FORMAT " (%g %g %g %g)",
          j > o[slot] ? ", " : "", labels[j], boxes[4 * j], boxes[4 * j + 1],
          boxes[4 * j + 2], boxes[4 * j + 3]);
    g_string_append_c (out, ']');
    unmap_tensor (b, s, &shp);
    unmap_tensor (b, i, &map);
    unmap_tensor (b, k, &off);
  } else if (!strcmp (kind, "image") || !strcmp (kind, "label")) {
    gchar *shape;

    if ((i = find_tensor (b, name)) < 0)
      goto missing;
    shape = item_shape (b->dims[i]);
    g_string_append_printf (out, "%s[%s]", b->types[i], shape);
    g_free (shape);
  } else {
    const gint64 *o;

    if (!map_tensor (b, name, "/values", &map, &i))
      goto missing;
    if (!map_tensor (b, name, "/offsets", &off, &k)) {
      unmap_tensor (b, i, &map);
      goto missing;
    }
    o = (const gint64 *) off.data;
    if (!strcmp (kind, "string") || !strcmp (kind, "json")) {
      g_string_append_c (out, '"');
      g_string_append_len (out, (const gchar *) map.data + o[slot],
          o[slot + 1] - o[slot]);
      g_string_append_c (out, '"');
    } else if (!strcmp (kind, "bytes")) {
      g_string_append_printf (out, "%" G_GINT64_FORMAT " bytes",
          o[slot + 1] - o[slot]);
    } else if (map_tensor (b, name, "/shapes", &shp, &s)) {
      const gint64 *shape = (const gint64 *) shp.data + 8 * slot;
      gint d;

      g_string_append_printf (out, "%s(", b->types[i]);
      for (d = 0; d < 8 && shape[d] >= 0; d++)
        g_string_append_printf (out, "%s%" G_GINT64_FORMAT, d ? "," : "",
            shape[d]);
      g_string_append_c (out, ')');
      unmap_tensor (b, s, &shp);
    }
    unmap_tensor (b, k, &off);
    unmap_tensor (b, i, &map);
  }
  return;

missing:
  g_string_append (out, "?");
}

gchar *
spdl_example_describe_batch (GstSample * sample, GError ** error)
{
  GstCaps *caps = gst_sample_get_caps (sample);
  const GstStructure *st = caps ? gst_caps_get_structure (caps, 0) : NULL;
  const gchar *names, *fields, *dims, *types;
  gchar **record = NULL;
  GstCustomMeta *meta;
  const GValue *indices = NULL;
  GstMapInfo labels;
  GString *out;
  Batch b = { 0, };
  guint slot, f;

  b.buffer = gst_sample_get_buffer (sample);
  names = st ? gst_structure_get_string (st, "names") : NULL;
  fields = st ? gst_structure_get_string (st, "fields") : NULL;
  dims = st ? gst_structure_get_string (st, "dimensions") : NULL;
  types = st ? gst_structure_get_string (st, "types") : NULL;
  if (b.buffer == NULL || dims == NULL || types == NULL) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
        "not a batch of tensors (other/tensors caps)");
    return NULL;
  }
  /* without fields, spdlbatch names no tensor: images and labels */
  b.names = g_strsplit (names ? names : "images,labels", ",", -1);
  b.dims = g_strsplit (dims, ",", -1);
  b.types = g_strsplit (types, ",", -1);
  b.n_tensors = g_strv_length (b.dims);
  if (names == NULL)
    fields = NULL;
  record = g_strsplit (fields ? fields : "", ",", -1);
  out = g_string_new (NULL);
  /* the labels: int64 [B], the second tensor */
  if (gst_buffer_n_memory (b.buffer) != b.n_tensors || b.n_tensors < 2 ||
      (names && g_strv_length (b.names) != b.n_tensors) ||
      !gst_memory_map (gst_buffer_peek_memory (b.buffer, 1), &labels,
          GST_MAP_READ)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
        "a batch of %u memories for %u tensors",
        gst_buffer_n_memory (b.buffer), b.n_tensors);
    g_string_free (out, TRUE);
    out = NULL;
    goto done;
  }
  b.batch = labels.size / sizeof (gint64);
  meta = gst_buffer_get_custom_meta (b.buffer, "GstSpdlBatchMeta");
  if (meta)
    indices = gst_structure_get_value (gst_custom_meta_get_structure (meta),
        "indices");
  for (slot = 0; slot < b.batch; slot++) {
    g_string_append_printf (out, "sample %" G_GUINT64_FORMAT " label %"
        G_GINT64_FORMAT ":", indices ? g_value_get_uint64
        (gst_value_array_get_value (indices, slot)) : (guint64) slot,
        ((const gint64 *) labels.data)[slot]);
    for (f = 0; record[f]; f++) {
      /* NAME:KIND:MISSING */
      gchar **parts = g_strsplit (record[f], ":", -1);

      if (g_strv_length (parts) == 3)
        describe_field (&b, parts[0], parts[1], slot, out);
      g_strfreev (parts);
    }
    g_string_append_c (out, '\n');
  }
  gst_memory_unmap (gst_buffer_peek_memory (b.buffer, 1), &labels);

done:
  g_strfreev (record);
  g_strfreev (b.names);
  g_strfreev (b.dims);
  g_strfreev (b.types);
  return out ? g_string_free (out, FALSE) : NULL;
}
