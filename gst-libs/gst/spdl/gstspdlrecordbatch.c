/* GStreamer SPDL: a batch's records, collated into tensors
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

#include "gstspdlrecordbatch.h"
#include "gstspdlmeta.h"
#include "gstspdlnpy.h"

#include <gst/video/video.h>
#include <math.h>
#include <string.h>

/* What one slot's value of one field is, read when it arrived */
typedef struct
{
  /* npy: the array; empty (a fill value) when !npy_valid */
  gboolean npy_valid;
  GstSpdlNpyInfo npy;
  /* image, label: the decoded picture */
  GstVideoFormat format;
  guint width, height;
  /* objects: how many, and their canvas */
  guint n_objects;
} Cell;

typedef struct
{
  gchar *values, *offsets, *shapes;     /* tensor names */
  gchar *boxes, *labels, *area, *iscrowd, *masks;       /* objects' */
} FieldNames;

/* the most tensors one field takes: objects' boxes, offsets, labels,
 * area, iscrowd and masks */
#define FIELD_MAX_TENSORS 6

struct _GstSpdlRecordBatch
{
  GstSpdlRecord *record;
  guint size, n_fields;
  gboolean nchw;
  GValue *values;               /* size x n_fields */
  Cell *cells;                  /* likewise */
  gchar **paths;                /* per slot: the sample's, for errors */
  GstSpdlSampleGeometry *geometry;
  gboolean *has_geometry;
  FieldNames *names;
  gboolean padded;              /* pictures of any size, padded */
  guint pad_width, pad_height;  /* padded: the batch's */
  gboolean object_masks;
  guint canvas_width, canvas_height;
};

#define AT(b, slot, f) ((gsize) (slot) * (b)->n_fields + (f))

static GstSpdlRecord *
record_copy (const GstSpdlRecord * record)
{
  gchar *text = gst_spdl_record_to_string (record);
  GstSpdlRecord *copy = gst_spdl_record_parse (text, GST_SPDL_MISSING_SKIP,
      NULL);

  g_free (text);
  return copy;
}

GstSpdlRecordBatch *
gst_spdl_record_batch_new (const GstSpdlRecord * record, guint size,
    gboolean nchw)
{
  GstSpdlRecordBatch *b = g_new0 (GstSpdlRecordBatch, 1);
  guint f;

  b->record = record_copy (record);
  b->n_fields = b->record->n_fields;
  b->size = size;
  b->nchw = nchw;
  b->values = g_new0 (GValue, (gsize) size * b->n_fields);
  b->cells = g_new0 (Cell, (gsize) size * b->n_fields);
  b->paths = g_new0 (gchar *, size);
  b->geometry = g_new0 (GstSpdlSampleGeometry, size);
  b->has_geometry = g_new0 (gboolean, size);
  b->names = g_new0 (FieldNames, b->n_fields);
  for (f = 0; f < b->n_fields; f++) {
    const gchar *name = b->record->fields[f].name;

    b->names[f].values = g_strconcat (name, "/values", NULL);
    b->names[f].offsets = g_strconcat (name, "/offsets", NULL);
    b->names[f].shapes = g_strconcat (name, "/shapes", NULL);
    b->names[f].boxes = g_strconcat (name, "/boxes", NULL);
    b->names[f].labels = g_strconcat (name, "/labels", NULL);
    b->names[f].area = g_strconcat (name, "/area", NULL);
    b->names[f].iscrowd = g_strconcat (name, "/iscrowd", NULL);
    b->names[f].masks = g_strconcat (name, "/masks", NULL);
  }
  return b;
}

void
gst_spdl_record_batch_clear (GstSpdlRecordBatch * b)
{
  gsize i;

  for (i = 0; i < (gsize) b->size * b->n_fields; i++)
    if (G_IS_VALUE (&b->values[i]))
      g_value_unset (&b->values[i]);
  memset (b->cells, 0, sizeof (Cell) * b->size * b->n_fields);
  for (i = 0; i < b->size; i++) {
    g_clear_pointer (&b->paths[i], g_free);
    b->has_geometry[i] = FALSE;
  }
}

void
gst_spdl_record_batch_free (GstSpdlRecordBatch * b)
{
  guint f;

  if (b == NULL)
    return;
  gst_spdl_record_batch_clear (b);
  for (f = 0; f < b->n_fields; f++) {
    g_free (b->names[f].values);
    g_free (b->names[f].offsets);
    g_free (b->names[f].shapes);
    g_free (b->names[f].boxes);
    g_free (b->names[f].labels);
    g_free (b->names[f].area);
    g_free (b->names[f].iscrowd);
    g_free (b->names[f].masks);
  }
  g_free (b->names);
  g_free (b->values);
  g_free (b->cells);
  g_free (b->paths);
  g_free (b->geometry);
  g_free (b->has_geometry);
  gst_spdl_record_free (b->record);
  g_free (b);
}

const GstSpdlRecord *
gst_spdl_record_batch_get_record (GstSpdlRecordBatch * b)
{
  return b->record;
}

void
gst_spdl_record_batch_set_object_masks (GstSpdlRecordBatch * b,
    gboolean masks)
{
  b->object_masks = masks;
}

void
gst_spdl_record_batch_set_canvas (GstSpdlRecordBatch * b, guint width,
    guint height)
{
  b->canvas_width = width;
  b->canvas_height = height;
}

/* A decoded objects value (gstspdlobjects.h's structure): its count and
 * canvas, its arrays of the sizes they must have */
static gboolean
read_objects (GstSpdlRecordBatch * b, guint f, const GValue * v, Cell * cell,
    const gchar * path, GError ** error)
{
  const GstSpdlField *field = &b->record->fields[f];
  const GstStructure *s;
  const gchar *names[] = { "boxes", "labels", "area", "iscrowd", "masks" };
  gsize item[] = { 16, 8, 4, 8, 0 };
  guint n, i;

  if (G_VALUE_HOLDS_STRING (v)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
        "The objects field '%s' of %s is not decoded: put spdldecode before "
        "spdlbatch", field->name, path);
    return FALSE;
  }
  if (!G_VALUE_HOLDS (v, GST_TYPE_STRUCTURE) ||
      (s = gst_value_get_structure (v)) == NULL ||
      !gst_structure_get_uint (s, "n", &n) ||
      !gst_structure_get_uint (s, "width", &cell->width) ||
      !gst_structure_get_uint (s, "height", &cell->height))
    goto bad;
  item[4] = (gsize) cell->width * cell->height;
  for (i = 0; i < G_N_ELEMENTS (names); i++) {
    const GValue *a = gst_structure_get_value (s, names[i]);
    GBytes *bytes;

    if (i == 4 && !b->object_masks)
      break;
    if (a == NULL && i == 4) {
      g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
          "The objects field '%s' of %s has no masks (spdldecode "
          "instance-masks=true)", field->name, path);
      return FALSE;
    }
    if (a == NULL || !G_VALUE_HOLDS (a, G_TYPE_BYTES) ||
        (bytes = g_value_get_boxed (a)) == NULL ||
        g_bytes_get_size (bytes) != item[i] * n)
      goto bad;
  }
  cell->n_objects = n;
  return TRUE;

bad:
  g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
      "The objects field '%s' of %s is not a decoded objects structure",
      field->name, path);
  return FALSE;
}

static const gchar *
slot_path (GstSpdlRecordBatch * b, guint slot)
{
  return b->paths[slot] ? b->paths[slot] : "(a sample without a path)";
}

/* The picture of an image or label field: packed rows of the caps' format */
static gboolean
read_picture (GstSpdlRecordBatch * b, guint f, const GValue * v, Cell * cell,
    const gchar * path, GError ** error)
{
  const GstSpdlField *field = &b->record->fields[f];
  GstSample *sample;
  GstVideoInfo info;
  GstCaps *caps;
  GstBuffer *buffer;
  gboolean label = field->kind == GST_SPDL_FIELD_LABEL;
  gsize bytes;

  if (G_VALUE_HOLDS (v, G_TYPE_BYTES)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
        "The %s field '%s' of %s is not decoded: put spdldecode before "
        "spdlbatch", gst_spdl_field_kind_name (field->kind), field->name,
        path);
    return FALSE;
  }
  if (!G_VALUE_HOLDS (v, GST_TYPE_SAMPLE) ||
      (sample = g_value_get_boxed (v)) == NULL ||
      (caps = gst_sample_get_caps (sample)) == NULL ||
      (buffer = gst_sample_get_buffer (sample)) == NULL ||
      !gst_video_info_from_caps (&info, caps))
    goto bad;
  cell->format = GST_VIDEO_INFO_FORMAT (&info);
  cell->width = GST_VIDEO_INFO_WIDTH (&info);
  cell->height = GST_VIDEO_INFO_HEIGHT (&info);
  if (label ? (cell->format != GST_VIDEO_FORMAT_GRAY8 &&
          cell->format != GST_VIDEO_FORMAT_GRAY16_LE) :
      cell->format != GST_VIDEO_FORMAT_RGB)
    goto bad;
  bytes = (gsize) cell->width * cell->height *
      GST_VIDEO_INFO_COMP_PSTRIDE (&info, 0);
  if (gst_buffer_get_size (buffer) != bytes) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
        "The %s field '%s' of %s holds %" G_GSIZE_FORMAT " bytes, not "
        "%ux%u %s packed rows", gst_spdl_field_kind_name (field->kind),
        field->name, path, gst_buffer_get_size (buffer), cell->width,
        cell->height, gst_video_format_to_string (cell->format));
    return FALSE;
  }
  return TRUE;

bad:
  g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
      "The %s field '%s' of %s is not a decoded picture (video/x-raw %s)",
      gst_spdl_field_kind_name (field->kind), field->name, path,
      label ? "GRAY8 or GRAY16_LE" : "RGB");
  return FALSE;
}

static GType
value_type (GstSpdlFieldKind kind)
{
  switch (kind) {
    case GST_SPDL_FIELD_INT:
      return G_TYPE_INT64;
    case GST_SPDL_FIELD_FLOAT:
      return G_TYPE_DOUBLE;
    case GST_SPDL_FIELD_STRING:
    case GST_SPDL_FIELD_JSON:
      return G_TYPE_STRING;
    case GST_SPDL_FIELD_BYTES:
    case GST_SPDL_FIELD_NPY:
      return G_TYPE_BYTES;
    case GST_SPDL_FIELD_IMAGE:
    case GST_SPDL_FIELD_LABEL:
      return GST_TYPE_SAMPLE;
    case GST_SPDL_FIELD_OBJECTS:
      return GST_TYPE_STRUCTURE;
  }
  g_assert_not_reached ();
  return G_TYPE_INVALID;
}

/* The slot whose npy fixes the field's dtype in this batch: the first
 * non-empty one before @slot, or -1 */
static gint
npy_reference (GstSpdlRecordBatch * b, guint f, guint slot)
{
  guint s;

  for (s = 0; s < slot; s++)
    if (b->cells[AT (b, s, f)].npy_valid)
      return s;
  return -1;
}

static gboolean
check_against_batch (GstSpdlRecordBatch * b, guint f, guint slot,
    GError ** error)
{
  const GstSpdlField *field = &b->record->fields[f];
  const Cell *cell = &b->cells[AT (b, slot, f)], *first;
  gint ref;

  if (field->kind == GST_SPDL_FIELD_NPY) {
    if (!cell->npy_valid || (ref = npy_reference (b, f, slot)) < 0)
      return TRUE;
    first = &b->cells[AT (b, ref, f)];
    if (first->npy.dtype == cell->npy.dtype)
      return TRUE;
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
        "The npy field '%s' holds %s in %s and %s in %s: one batch holds "
        "one dtype", field->name, gst_spdl_dtype_name (first->npy.dtype),
        slot_path (b, ref), gst_spdl_dtype_name (cell->npy.dtype),
        slot_path (b, slot));
    return FALSE;
  }
  if (!gst_spdl_field_kind_is_image (field->kind) || slot == 0)
    return TRUE;
  first = &b->cells[AT (b, 0, f)];
  if ((b->padded || (first->width == cell->width &&
              first->height == cell->height)) &&
      first->format == cell->format)
    return TRUE;
  g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
      "The %s field '%s' is %ux%u %s in %s and %ux%u %s in %s: one batch "
      "holds one size (give the decoder a size)",
      gst_spdl_field_kind_name (field->kind), field->name, first->width,
      first->height, gst_video_format_to_string (first->format),
      slot_path (b, 0), cell->width, cell->height,
      gst_video_format_to_string (cell->format), slot_path (b, slot));
  return FALSE;
}

gboolean
gst_spdl_record_batch_set_slot (GstSpdlRecordBatch * b, guint slot,
    GstBuffer * sample, GError ** error)
{
  guint f, n = gst_spdl_buffer_get_record_size (sample);
  const gchar *path = gst_spdl_buffer_get_path (sample);

  g_return_val_if_fail (slot < b->size, FALSE);
  for (f = 0; f < b->n_fields; f++)
    if (G_IS_VALUE (&b->values[AT (b, slot, f)]))
      g_value_unset (&b->values[AT (b, slot, f)]);
  g_free (b->paths[slot]);
  b->paths[slot] = g_strdup (path);
  path = slot_path (b, slot);
  if (n != b->n_fields) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
        "%s carries %u field values, its caps' record has %u fields", path,
        n, b->n_fields);
    return FALSE;
  }
  for (f = 0; f < b->n_fields; f++) {
    const GstSpdlField *field = &b->record->fields[f];
    const GValue *v = gst_spdl_buffer_get_record_value (sample, f);
    Cell *cell = &b->cells[AT (b, slot, f)];
    GType want = value_type (field->kind);

    memset (cell, 0, sizeof (*cell));
    if (gst_spdl_field_kind_is_image (field->kind)) {
      if (!read_picture (b, f, v, cell, path, error))
        return FALSE;
    } else if (field->kind == GST_SPDL_FIELD_OBJECTS) {
      if (!read_objects (b, f, v, cell, path, error))
        return FALSE;
    } else if (!G_VALUE_HOLDS (v, want)) {
      g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
          "The %s field '%s' of %s holds a %s, not a %s",
          gst_spdl_field_kind_name (field->kind), field->name, path,
          G_VALUE_TYPE_NAME (v), g_type_name (want));
      return FALSE;
    } else if (field->kind == GST_SPDL_FIELD_NPY) {
      GBytes *bytes = g_value_get_boxed (v);
      gsize len = 0;
      const guint8 *data = bytes ? g_bytes_get_data (bytes, &len) : NULL;
      GError *why = NULL;

      if (len > 0 && !gst_spdl_npy_parse (data, len, &cell->npy, &why)) {
        g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
            "The npy field '%s' of %s %s", field->name, path, why->message);
        g_error_free (why);
        return FALSE;
      }
      cell->npy_valid = len > 0;
    }
    g_value_init (&b->values[AT (b, slot, f)], G_VALUE_TYPE (v));
    g_value_copy (v, &b->values[AT (b, slot, f)]);
    if (!check_against_batch (b, f, slot, error))
      return FALSE;
  }
  b->has_geometry[slot] = gst_spdl_buffer_get_sample_geometry (sample,
      &b->geometry[slot]);
  return TRUE;
}

void
gst_spdl_record_batch_copy_slot (GstSpdlRecordBatch * b, guint to,
    GstSpdlRecordBatch * src, guint from)
{
  guint f;

  g_return_if_fail (to < b->size && from < src->size &&
      src->n_fields == b->n_fields);
  for (f = 0; f < b->n_fields; f++) {
    GValue *dst = &b->values[AT (b, to, f)];
    const GValue *v = &src->values[AT (src, from, f)];

    if (G_IS_VALUE (dst))
      g_value_unset (dst);
    if (G_IS_VALUE (v)) {
      g_value_init (dst, G_VALUE_TYPE (v));
      g_value_copy (v, dst);
    }
    b->cells[AT (b, to, f)] = src->cells[AT (src, from, f)];
  }
  if (b->paths[to] != src->paths[from]) {
    g_free (b->paths[to]);
    b->paths[to] = g_strdup (src->paths[from]);
  }
  b->geometry[to] = src->geometry[from];
  b->has_geometry[to] = src->has_geometry[from];
}

/* ------------------------------------------------------------------------ */

static GstSpdlDType
npy_dtype (GstSpdlRecordBatch * b, guint f, guint n)
{
  gint ref = npy_reference (b, f, n);

  return ref < 0 ? GST_SPDL_DTYPE_UINT8 : b->cells[AT (b, ref, f)].npy.dtype;
}

static void
tensor_1d (GstSpdlTensorInfo * t, GstSpdlDType dtype, guint64 n)
{
  memset (t, 0, sizeof (*t));
  t->n_dims = 1;
  t->dtype = dtype;
  t->shape[0] = n;
}

/* The objects of the first @n slots */
static guint64
count_objects (GstSpdlRecordBatch * b, guint f, guint n)
{
  guint64 total = 0;
  guint s;

  for (s = 0; s < n; s++)
    total += b->cells[AT (b, s, f)].n_objects;
  return total;
}

/* The field's tensors: 1 to FIELD_MAX_TENSORS of them. The lengths that
 * change from batch to batch (values, objects) are 0 here. */
static guint
describe_field (GstSpdlRecordBatch * b, guint f, guint n,
    GstSpdlTensorInfo * t, const gchar ** names)
{
  const GstSpdlField *field = &b->record->fields[f];
  const Cell *first = &b->cells[AT (b, 0, f)];
  guint w = n > 0 ? first->width : 0, h = n > 0 ? first->height : 0;

  if (b->padded && n > 0) {
    w = b->pad_width;
    h = b->pad_height;
  }

  switch (field->kind) {
    case GST_SPDL_FIELD_INT:
    case GST_SPDL_FIELD_FLOAT:
      tensor_1d (t, field->kind == GST_SPDL_FIELD_INT ?
          GST_SPDL_DTYPE_INT64 : GST_SPDL_DTYPE_FLOAT64, n);
      names[0] = field->name;
      return 1;
    case GST_SPDL_FIELD_STRING:
    case GST_SPDL_FIELD_JSON:
    case GST_SPDL_FIELD_BYTES:
    case GST_SPDL_FIELD_NPY:
      tensor_1d (&t[0], field->kind == GST_SPDL_FIELD_NPY ?
          npy_dtype (b, f, n) : GST_SPDL_DTYPE_UINT8, 0);
      tensor_1d (&t[1], GST_SPDL_DTYPE_INT64, (guint64) n + 1);
      names[0] = b->names[f].values;
      names[1] = b->names[f].offsets;
      if (field->kind != GST_SPDL_FIELD_NPY)
        return 2;
      tensor_1d (&t[2], GST_SPDL_DTYPE_INT64, n);
      t[2].n_dims = 2;
      t[2].shape[1] = GST_SPDL_TENSOR_MAX_DIMS;
      names[2] = b->names[f].shapes;
      return 3;
    case GST_SPDL_FIELD_IMAGE:
      tensor_1d (t, GST_SPDL_DTYPE_UINT8, n);
      t->n_dims = 4;
      t->shape[1] = b->nchw ? 3 : h;
      t->shape[2] = b->nchw ? h : w;
      t->shape[3] = b->nchw ? w : 3;
      names[0] = field->name;
      return 1;
    case GST_SPDL_FIELD_LABEL:
      tensor_1d (t, n > 0 && first->format == GST_VIDEO_FORMAT_GRAY16_LE ?
          GST_SPDL_DTYPE_UINT16 : GST_SPDL_DTYPE_UINT8, n);
      t->n_dims = 3;
      t->shape[1] = h;
      t->shape[2] = w;
      names[0] = field->name;
      return 1;
    case GST_SPDL_FIELD_OBJECTS:
      tensor_1d (&t[0], GST_SPDL_DTYPE_FLOAT32, 0);
      t[0].n_dims = 2;
      t[0].shape[1] = 4;
      tensor_1d (&t[1], GST_SPDL_DTYPE_INT64, (guint64) n + 1);
      tensor_1d (&t[2], GST_SPDL_DTYPE_INT64, 0);
      tensor_1d (&t[3], GST_SPDL_DTYPE_FLOAT32, 0);
      tensor_1d (&t[4], GST_SPDL_DTYPE_INT64, 0);
      names[0] = b->names[f].boxes;
      names[1] = b->names[f].offsets;
      names[2] = b->names[f].labels;
      names[3] = b->names[f].area;
      names[4] = b->names[f].iscrowd;
      if (!b->object_masks)
        return 5;
      tensor_1d (&t[5], GST_SPDL_DTYPE_UINT8, 0);
      t[5].n_dims = 3;
      t[5].shape[1] = b->canvas_height;
      t[5].shape[2] = b->canvas_width;
      names[5] = b->names[f].masks;
      return 6;
  }
  g_assert_not_reached ();
  return 0;
}

guint
gst_spdl_record_batch_n_tensors (GstSpdlRecordBatch * b)
{
  GstSpdlTensorInfo t[FIELD_MAX_TENSORS];
  const gchar *names[FIELD_MAX_TENSORS];
  guint f, n = 0;

  for (f = 0; f < b->n_fields; f++)
    n += describe_field (b, f, 0, t, names);
  return n;
}

guint
gst_spdl_record_batch_describe (GstSpdlRecordBatch * b, guint n,
    GstSpdlTensorInfo * tensors, const gchar ** names, guint max)
{
  GstSpdlTensorInfo t[FIELD_MAX_TENSORS];
  const gchar *nm[FIELD_MAX_TENSORS];
  guint f, k, total = 0;

  for (f = 0; f < b->n_fields; f++) {
    guint m = describe_field (b, f, n, t, nm);

    for (k = 0; k < m && total < max; k++, total++) {
      tensors[total] = t[k];
      names[total] = nm[k];
    }
  }
  return total;
}

/* The bytes of a string, json or bytes value */
static const guint8 *
value_bytes (const GValue * v, gsize * len)
{
  if (G_VALUE_HOLDS_STRING (v)) {
    const gchar *s = g_value_get_string (v);
    *len = s ? strlen (s) : 0;
    return (const guint8 *) s;
  }
  if (g_value_get_boxed (v) == NULL) {
    *len = 0;
    return NULL;
  }
  return g_bytes_get_data (g_value_get_boxed (v), len);
}

/* The slots' arrays or bytes one after the other, and where each starts */
static void
fill_ragged (GstSpdlRecordBatch * b, guint f, guint n, guint8 * values,
    gint64 * offsets, gint64 * shapes)
{
  gboolean npy = b->record->fields[f].kind == GST_SPDL_FIELD_NPY;
  gsize at = 0, item = 1;
  guint s, d;

  if (npy)
    item = gst_spdl_dtype_size (npy_dtype (b, f, n));
  for (s = 0; s < n; s++) {
    const GValue *v = &b->values[AT (b, s, f)];
    const Cell *cell = &b->cells[AT (b, s, f)];
    const guint8 *data;
    gsize len;

    offsets[s] = at / item;
    data = value_bytes (v, &len);
    if (npy) {
      gint64 *shape = shapes + (gsize) s * GST_SPDL_TENSOR_MAX_DIMS;

      for (d = 0; d < GST_SPDL_TENSOR_MAX_DIMS; d++)
        shape[d] = -1;
      if (!cell->npy_valid) {
        shape[0] = 0;           /* a fill value: shape (0,) */
        continue;
      }
      for (d = 0; d < cell->npy.n_dims; d++)
        shape[d] = cell->npy.shape[d];
      data += cell->npy.data_offset;
      len = cell->npy.data_size;
    }
    if (len)
      memcpy (values + at, data, len);
    at += len;
  }
  offsets[n] = at / item;
}

static gsize
ragged_bytes (GstSpdlRecordBatch * b, guint f, guint n)
{
  gsize total = 0, len;
  guint s;

  for (s = 0; s < n; s++) {
    const Cell *cell = &b->cells[AT (b, s, f)];

    if (b->record->fields[f].kind == GST_SPDL_FIELD_NPY)
      total += cell->npy_valid ? cell->npy.data_size : 0;
    else {
      value_bytes (&b->values[AT (b, s, f)], &len);
      total += len;
    }
  }
  return total;
}

/* One slot's picture: rows as they are (NHWC, labels), or RGB to planes;
 * padded: top-left in the batch's size, zeros around */
static void
fill_picture (GstSpdlRecordBatch * b, guint f, guint slot, guint8 * dst,
    gsize slot_bytes)
{
  GstSample *sample = g_value_get_boxed (&b->values[AT (b, slot, f)]);
  const Cell *cell = &b->cells[AT (b, slot, f)];
  guint w = cell->width, h = cell->height, W = b->padded ? b->pad_width : w;
  guint H = b->padded ? b->pad_height : h, x, y;
  gsize plane = (gsize) W * H, px, row;
  GstMapInfo map;

  if (b->padded && (w > W || h > H)) {  /* not the media image's size */
    memset (dst, 0, slot_bytes);
    return;
  }
  if (!gst_buffer_map (gst_sample_get_buffer (sample), &map, GST_MAP_READ)) {
    memset (dst, 0, slot_bytes);
    return;
  }
  if (w != W || h != H)
    memset (dst, 0, slot_bytes);
  px = (gsize) map.size / MAX ((gsize) w * h, 1);
  row = (gsize) w * px;
  if (b->record->fields[f].kind == GST_SPDL_FIELD_IMAGE && b->nchw) {
    for (y = 0; y < h; y++) {
      const guint8 *in = map.data + y * row;
      guint8 *out = dst + (gsize) y * W;

      for (x = 0; x < w; x++) {
        out[x] = in[3 * x];
        out[plane + x] = in[3 * x + 1];
        out[2 * plane + x] = in[3 * x + 2];
      }
    }
  } else if (w == W) {
    memcpy (dst, map.data, MIN (map.size, slot_bytes));
  } else {
    for (y = 0; y < h; y++)
      memcpy (dst + (gsize) y * W * px, map.data + y * row, row);
  }
  gst_buffer_unmap (gst_sample_get_buffer (sample), &map);
}

static void
fill_fixed (GstSpdlRecordBatch * b, guint f, guint n, guint8 * out,
    gsize slot_bytes)
{
  GstSpdlFieldKind kind = b->record->fields[f].kind;
  guint s;

  for (s = 0; s < n; s++) {
    const GValue *v = &b->values[AT (b, s, f)];

    if (kind == GST_SPDL_FIELD_INT)
      ((gint64 *) out)[s] = g_value_get_int64 (v);
    else if (kind == GST_SPDL_FIELD_FLOAT)
      ((gdouble *) out)[s] = g_value_get_double (v);
    else
      fill_picture (b, f, s, out + (gsize) s * slot_bytes, slot_bytes);
  }
}

/* One slot's objects into the flat tensors at object @at; its masks top
 * left in the batch's canvas, zeros beyond its own */
static void
fill_objects_slot (GstSpdlRecordBatch * b, guint f, guint slot, guint64 at,
    GstMapInfo * map)
{
  const GstStructure *s = gst_value_get_structure (&b->values[AT (b, slot,
              f)]);
  const Cell *cell = &b->cells[AT (b, slot, f)];
  const gchar *names[] = { "boxes", NULL, "labels", "area", "iscrowd" };
  const gsize item[] = { 16, 0, 8, 4, 8 };
  guint k, i, y;

  if (cell->n_objects == 0)
    return;
  for (k = 0; k < G_N_ELEMENTS (names); k++) {
    GBytes *bytes;

    if (names[k] == NULL)
      continue;
    bytes = g_value_get_boxed (gst_structure_get_value (s, names[k]));
    memcpy (map[k].data + at * item[k], g_bytes_get_data (bytes, NULL),
        item[k] * cell->n_objects);
  }
  if (b->object_masks) {
    gsize cw = b->canvas_width, ch = b->canvas_height;
    gsize plane = cw * ch;
    guint w = MIN (cell->width, cw), h = MIN (cell->height, ch);
    const guint8 *src = g_bytes_get_data (g_value_get_boxed
        (gst_structure_get_value (s, "masks")), NULL);
    guint8 *dst = map[5].data + at * plane;

    memset (dst, 0, plane * cell->n_objects);
    for (i = 0; i < cell->n_objects; i++)
      for (y = 0; y < h; y++)
        memcpy (dst + i * plane + y * cw, src + ((gsize) i * cell->height
                + y) * cell->width, w);
  }
}

static void
fill_objects (GstSpdlRecordBatch * b, guint f, guint n, GstMapInfo * map)
{
  gint64 *offsets = (gint64 *) map[1].data;
  guint64 at = 0;
  guint s;

  for (s = 0; s < n; s++) {
    offsets[s] = at;
    fill_objects_slot (b, f, s, at, map);
    at += b->cells[AT (b, s, f)].n_objects;
  }
  offsets[n] = at;
}

static GstMemory *
alloc_tensor (GstSpdlMemoryCache * cache, guint key,
    GstAllocator * allocator, const GstAllocationParams * params,
    gsize size, GstMapInfo * map)
{
  GstMemory *mem = gst_spdl_memory_cache_get (cache, key, size, allocator,
      params);

  if (mem == NULL)
    return NULL;
  if (!gst_memory_map (mem, map, GST_MAP_WRITE)) {
    gst_memory_unref (mem);
    return NULL;
  }
  return mem;
}

gboolean
gst_spdl_record_batch_append (GstSpdlRecordBatch * b, GstBuffer * buffer,
    guint n, GstSpdlMemoryCache * cache, GstAllocator * allocator,
    const GstAllocationParams * params, GError ** error)
{
  guint f, key = 0;

  /* past its 16th, a buffer merges its memories: no tensor apart */
  if (gst_buffer_n_memory (buffer) + gst_spdl_record_batch_n_tensors (b) >
      gst_buffer_get_max_memory ()) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION,
        "The fields need %u tensors beside %u: a batch holds at most %u",
        gst_spdl_record_batch_n_tensors (b), gst_buffer_n_memory (buffer),
        gst_buffer_get_max_memory ());
    return FALSE;
  }
  for (f = 0; f < b->n_fields; f++) {
    GstSpdlTensorInfo t[FIELD_MAX_TENSORS];
    const gchar *names[FIELD_MAX_TENSORS];
    guint m = describe_field (b, f, n, t, names), k;
    GstMemory *mem[FIELD_MAX_TENSORS] = { NULL, };
    GstMapInfo map[FIELD_MAX_TENSORS];
    gsize size[FIELD_MAX_TENSORS];
    gboolean objects = b->record->fields[f].kind == GST_SPDL_FIELD_OBJECTS;

    if (objects) {
      guint64 total = count_objects (b, f, n);

      for (k = 0; k < m; k++)
        if (k != 1)
          t[k].shape[0] = total;
    } else if (t[0].shape[0] == 0 && m > 1)
      t[0].shape[0] = ragged_bytes (b, f, n) / gst_spdl_dtype_size
          (t[0].dtype);
    for (k = 0; k < m; k++) {
      size[k] = gst_spdl_tensor_info_size (&t[k]);
      mem[k] = alloc_tensor (cache, key + k, allocator, params, size[k],
          &map[k]);
      if (mem[k] == NULL) {
        while (k-- > 0) {
          gst_memory_unmap (mem[k], &map[k]);
          gst_memory_unref (mem[k]);
        }
        g_set_error (error, GST_RESOURCE_ERROR,
            GST_RESOURCE_ERROR_NO_SPACE_LEFT, "Could not allocate %"
            G_GSIZE_FORMAT " bytes for the field '%s' of a batch",
            gst_spdl_tensor_info_size (&t[0]), b->record->fields[f].name);
        return FALSE;
      }
    }
    if (objects)
      fill_objects (b, f, n, map);
    else if (m == 1)
      fill_fixed (b, f, n, map[0].data, n ? size[0] / n : 0);
    else
      fill_ragged (b, f, n, map[0].data, (gint64 *) map[1].data,
          m == 3 ? (gint64 *) map[2].data : NULL);
    for (k = 0; k < m; k++) {
      gst_memory_unmap (mem[k], &map[k]);
      gst_buffer_append_memory (buffer, mem[k]);
    }
    key += m;
  }
  return TRUE;
}

void
gst_spdl_record_batch_set_padded (GstSpdlRecordBatch * b, gboolean padded)
{
  b->padded = padded;
}

void
gst_spdl_record_batch_set_padded_size (GstSpdlRecordBatch * b, guint width,
    guint height)
{
  b->pad_width = width;
  b->pad_height = height;
}

void
gst_spdl_record_batch_set_geometry (GstSpdlRecordBatch * b, GstStructure * s,
    guint n)
{
  GValue crop = G_VALUE_INIT, flipped = G_VALUE_INIT, size = G_VALUE_INIT;
  guint i, k;

  for (i = 0; i < n && !b->has_geometry[i]; i++);
  if (i == n)
    return;
  g_value_init (&crop, GST_TYPE_ARRAY);
  g_value_init (&flipped, GST_TYPE_ARRAY);
  g_value_init (&size, GST_TYPE_ARRAY);
  for (i = 0; i < n; i++) {
    const GstSpdlSampleGeometry *g = &b->geometry[i];
    gboolean has = b->has_geometry[i];
    gdouble box[4] = { g->x, g->y, g->width, g->height };
    guint wh[2] = { g->source_width, g->source_height };
    GValue v = G_VALUE_INIT;

    g_value_init (&v, G_TYPE_DOUBLE);
    for (k = 0; k < 4; k++) {
      g_value_set_double (&v, has ? box[k] : NAN);
      gst_value_array_append_value (&crop, &v);
    }
    g_value_unset (&v);
    g_value_init (&v, G_TYPE_BOOLEAN);
    g_value_set_boolean (&v, has && g->flipped);
    gst_value_array_append_value (&flipped, &v);
    g_value_unset (&v);
    g_value_init (&v, G_TYPE_UINT);
    for (k = 0; k < 2; k++) {
      g_value_set_uint (&v, has ? wh[k] : 0);
      gst_value_array_append_value (&size, &v);
    }
    g_value_unset (&v);
  }
  gst_structure_take_value (s, "crop", &crop);
  gst_structure_take_value (s, "flipped", &flipped);
  gst_structure_take_value (s, "source-size", &size);
}
