/* GStreamer SPDL: the sample record (named fields beside the media)
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

#include "gstspdlrecord.h"
#include "gstspdlnpy.h"
#include "gstspdljson.h"
#include "gstspdlmeta.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gchar *kind_names[] = {
  "int", "float", "string", "json", "bytes", "npy", "image", "label",
  "objects",
};

static const gchar *missing_names[] = { "skip", "error", "empty" };

const gchar *
gst_spdl_field_kind_name (GstSpdlFieldKind kind)
{
  return kind < G_N_ELEMENTS (kind_names) ? kind_names[kind] : "unknown";
}

gboolean
gst_spdl_field_kind_from_name (const gchar * name, GstSpdlFieldKind * kind)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (kind_names); i++)
    if (g_strcmp0 (name, kind_names[i]) == 0) {
      *kind = i;
      return TRUE;
    }
  return FALSE;
}

const gchar *
gst_spdl_missing_policy_name (GstSpdlMissingPolicy missing)
{
  return missing < G_N_ELEMENTS (missing_names) ?
      missing_names[missing] : "unknown";
}

gboolean
gst_spdl_missing_policy_from_name (const gchar * name,
    GstSpdlMissingPolicy * missing)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (missing_names); i++)
    if (g_strcmp0 (name, missing_names[i]) == 0) {
      *missing = i;
      return TRUE;
    }
  return FALSE;
}

gboolean
gst_spdl_field_kind_is_image (GstSpdlFieldKind kind)
{
  return kind == GST_SPDL_FIELD_IMAGE || kind == GST_SPDL_FIELD_LABEL;
}

gboolean
gst_spdl_field_kind_needs_image_decoder (GstSpdlFieldKind kind)
{
  return gst_spdl_field_kind_is_image (kind) || kind == GST_SPDL_FIELD_OBJECTS;
}

GstSpdlFieldKind
gst_spdl_field_kind_for_name (const gchar * name)
{
  static const gchar *ints[] = { "cls", "cls2", "index", "inx", "id",
    "label", "target", NULL
  };
  static const gchar *strings[] = { "txt", "text", "transcript", "caption",
    NULL
  };
  static const gchar *jsons[] = { "json", "jsn", NULL };
  static const gchar *images[] = { "jpg", "jpeg", "png", "webp", "gif",
    "bmp", "tif", "tiff", "ppm", "pgm", "pbm", "pnm", NULL
  };
  const gchar *end = strchr (name, ';');
  gchar *first = g_strndup (name, end ? end - name : (gssize) strlen (name));
  const gchar *ext = strrchr (first, '.');
  gchar *lower;
  GstSpdlFieldKind kind = GST_SPDL_FIELD_BYTES;

  /* the first alternative's: "txt;json" is a caption, "json;txt" JSON */
  lower = g_ascii_strdown (ext ? ext + 1 : first, -1);
  g_free (first);
  if (g_strv_contains (ints, lower))
    kind = GST_SPDL_FIELD_INT;
  else if (g_strv_contains (strings, lower))
    kind = GST_SPDL_FIELD_STRING;
  else if (g_strv_contains (jsons, lower))
    kind = GST_SPDL_FIELD_JSON;
  else if (strcmp (lower, "npy") == 0)
    kind = GST_SPDL_FIELD_NPY;
  else if (g_strv_contains (images, lower))
    kind = GST_SPDL_FIELD_IMAGE;
  g_free (lower);
  return kind;
}

static gboolean
parse_field (GstSpdlField * field, const gchar * text,
    GstSpdlMissingPolicy missing, GError ** error)
{
  gchar **parts = g_strsplit (text, ":", -1);
  gboolean have_kind = FALSE, have_missing = FALSE, ok = FALSE;
  guint i, n = g_strv_length (parts);
  gchar *hash;

  field->missing = missing;
  if (n == 0 || parts[0][0] == '\0') {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
        "Field \"%s\" has no name", text);
    goto done;
  }
  for (i = 1; i < n; i++) {
    if (!have_kind && gst_spdl_field_kind_from_name (parts[i], &field->kind))
      have_kind = TRUE;
    else if (!have_missing
        && gst_spdl_missing_policy_from_name (parts[i], &field->missing))
      have_missing = TRUE;
    else {
      g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
          "Field \"%s\": \"%s\" is no kind (int, float, string, json, bytes, "
          "npy, image, label, objects) nor missing policy (skip, error, empty), or "
          "is given twice", text, parts[i]);
      goto done;
    }
  }
  hash = strchr (parts[0], '#');
  if (hash) {
    *hash = '\0';
    field->path = g_strsplit (hash + 1, ".", -1);
    for (i = 0; field->path[0] == NULL || field->path[i]; i++)
      if (field->path[i] == NULL || g_strstrip (field->path[i])[0] == '\0') {
        g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
            "Field \"%s\": its path \"%s\" has an empty key", text,
            hash + 1);
        goto done;
      }
  }
  field->alternatives = g_strsplit (parts[0], ";", -1);
  for (i = 0; field->alternatives[i]; i++)
    g_strstrip (field->alternatives[i]);
  if (field->alternatives[0] == NULL) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
        "Field \"%s\" has no name before its path", text);
    goto done;
  }
  field->name = g_strjoinv (";", field->alternatives);
  if (field->path) {
    gchar *keys = g_strjoinv (".", field->path), *name;

    name = g_strconcat (field->name, "#", keys, NULL);
    g_free (keys);
    g_free (field->name);
    field->name = name;
  }
  for (i = 0; field->alternatives[i]; i++)
    if (field->alternatives[i][0] == '\0') {
      g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
          "Field \"%s\" has an empty alternative", text);
      goto done;
    }
  if (!have_kind)
    field->kind = field->path ? GST_SPDL_FIELD_STRING :
        gst_spdl_field_kind_for_name (field->name);
  if (field->path && field->kind != GST_SPDL_FIELD_INT
      && field->kind != GST_SPDL_FIELD_FLOAT
      && field->kind != GST_SPDL_FIELD_STRING
      && field->kind != GST_SPDL_FIELD_JSON
      && field->kind != GST_SPDL_FIELD_OBJECTS) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
        "Field \"%s\": a path into JSON gives an int, float, string, "
        "json or objects, not %s", text, gst_spdl_field_kind_name (field->kind));
    goto done;
  }
  ok = TRUE;
done:
  g_strfreev (parts);
  return ok;
}

GstSpdlRecord *
gst_spdl_record_parse (const gchar * text, GstSpdlMissingPolicy missing,
    GError ** error)
{
  GstSpdlRecord *record = g_new0 (GstSpdlRecord, 1);
  gchar **specs;
  guint i, n;

  if (text == NULL || *text == '\0')
    return record;
  specs = g_strsplit (text, ",", -1);
  n = g_strv_length (specs);
  record->fields = g_new0 (GstSpdlField, n);
  for (i = 0; i < n; i++) {
    gchar *spec = g_strstrip (specs[i]);

    if (!parse_field (&record->fields[i], spec, missing, error)) {
      record->n_fields = i + 1;
      gst_spdl_record_free (record);
      g_strfreev (specs);
      return NULL;
    }
    if (gst_spdl_record_find (record, record->fields[i].name) >= 0) {
      g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
          "Field \"%s\" is asked for twice", record->fields[i].name);
      record->n_fields = i + 1;
      gst_spdl_record_free (record);
      g_strfreev (specs);
      return NULL;
    }
    record->n_fields = i + 1;
  }
  g_strfreev (specs);
  return record;
}

void
gst_spdl_record_free (GstSpdlRecord * record)
{
  guint i;

  if (record == NULL)
    return;
  for (i = 0; i < record->n_fields; i++) {
    g_free (record->fields[i].name);
    g_strfreev (record->fields[i].alternatives);
    g_strfreev (record->fields[i].path);
  }
  g_free (record->fields);
  g_free (record);
}

gint
gst_spdl_record_find (const GstSpdlRecord * record, const gchar * name)
{
  guint i;

  for (i = 0; i < record->n_fields; i++)
    if (record->fields[i].name && strcmp (record->fields[i].name, name) == 0)
      return i;
  return -1;
}

gchar *
gst_spdl_record_to_string (const GstSpdlRecord * record)
{
  GString *s = g_string_new (NULL);
  guint i;

  for (i = 0; record && i < record->n_fields; i++)
    g_string_append_printf (s, "%s%s:%s:%s", i ? "," : "",
        record->fields[i].name,
        gst_spdl_field_kind_name (record->fields[i].kind),
        gst_spdl_missing_policy_name (record->fields[i].missing));
  return g_string_free (s, FALSE);
}

GstSpdlRecord *
gst_spdl_record_from_caps (const GstCaps * caps)
{
  const gchar *text;

  if (caps == NULL || gst_caps_get_size (caps) == 0)
    return NULL;
  text = gst_structure_get_string (gst_caps_get_structure (caps, 0),
      "fields");
  if (text == NULL || *text == '\0')
    return NULL;
  return gst_spdl_record_parse (text, GST_SPDL_MISSING_SKIP, NULL);
}

void
gst_spdl_record_copy_caps_field (GstCaps * to, const GstCaps * from)
{
  const gchar *text;
  guint i;

  if (from == NULL || gst_caps_get_size (from) == 0)
    return;
  text = gst_structure_get_string (gst_caps_get_structure (from, 0),
      "fields");
  if (text == NULL)
    return;
  for (i = 0; i < gst_caps_get_size (to); i++)
    gst_structure_set (gst_caps_get_structure (to, i), "fields",
        G_TYPE_STRING, text, NULL);
}

void
gst_spdl_field_init_empty (GValue * value, GstSpdlFieldKind kind)
{
  switch (kind) {
    case GST_SPDL_FIELD_INT:
      g_value_init (value, G_TYPE_INT64);
      g_value_set_int64 (value, -1);
      break;
    case GST_SPDL_FIELD_FLOAT:
      g_value_init (value, G_TYPE_DOUBLE);
      g_value_set_double (value, NAN);
      break;
    case GST_SPDL_FIELD_STRING:
      g_value_init (value, G_TYPE_STRING);
      g_value_set_static_string (value, "");
      break;
    case GST_SPDL_FIELD_JSON:
      g_value_init (value, G_TYPE_STRING);
      g_value_set_static_string (value, "null");
      break;
    case GST_SPDL_FIELD_OBJECTS:
      g_value_init (value, G_TYPE_STRING);
      g_value_set_static_string (value, "[]");
      break;
    default:
      g_value_init (value, G_TYPE_BYTES);
      g_value_take_boxed (value, g_bytes_new_static ("", 0));
      break;
  }
}

/* Whether @data (@len bytes) is a number strtoll/strtod reads whole,
 * white space around it allowed. */
static gboolean
parse_number (const guint8 * data, gsize len, gboolean integer,
    gint64 * i, gdouble * d)
{
  gchar buf[64], *end;
  gsize start = 0;

  while (len > 0 && g_ascii_isspace (data[len - 1]))
    len--;
  while (start < len && g_ascii_isspace (data[start]))
    start++;
  if (len - start == 0 || len - start >= sizeof (buf))
    return FALSE;
  memcpy (buf, data + start, len - start);
  buf[len - start] = '\0';
  if (memchr (buf, '\0', len - start))
    return FALSE;
  errno = 0;
  if (integer)
    *i = g_ascii_strtoll (buf, &end, 10);
  else
    *d = g_ascii_strtod (buf, &end);
  return errno == 0 && end != buf && *end == '\0';
}

/* Valid UTF-8 without NUL; else where it fails, in @error. */
static gboolean
check_text (const guint8 * data, gsize len, GError ** error)
{
  const gchar *end;
  const guint8 *nul = memchr (data, '\0', len);

  /* g_utf8_validate_len() stops at a NUL too: say which it is */
  if (!g_utf8_validate_len ((const gchar *) data, nul ? (gsize) (nul - data) : len,
          &end)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "is not UTF-8 at byte %" G_GSIZE_FORMAT,
        (gsize) (end - (const gchar *) data));
    return FALSE;
  }
  if (nul) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "holds a NUL byte at byte %" G_GSIZE_FORMAT " (strings hold none)",
        (gsize) (nul - data));
    return FALSE;
  }
  return TRUE;
}

gboolean
gst_spdl_field_value_from_data (GValue * value, GstSpdlFieldKind kind,
    const guint8 * data, gsize len, GBytes * bytes, GError ** error)
{
  gint64 i;
  gdouble d;
  gchar *why = NULL;

  switch (kind) {
    case GST_SPDL_FIELD_INT:
      if (!parse_number (data, len, TRUE, &i, NULL)) {
        g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
            "is not an integer in int64's range");
        return FALSE;
      }
      g_value_init (value, G_TYPE_INT64);
      g_value_set_int64 (value, i);
      return TRUE;
    case GST_SPDL_FIELD_FLOAT:
      if (!parse_number (data, len, FALSE, NULL, &d)) {
        g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
            "is not a number in float64's range");
        return FALSE;
      }
      g_value_init (value, G_TYPE_DOUBLE);
      g_value_set_double (value, d);
      return TRUE;
    case GST_SPDL_FIELD_STRING:
    case GST_SPDL_FIELD_JSON:
    case GST_SPDL_FIELD_OBJECTS:
      /* json.loads() of a member's bytes (webdataset) reads a UTF-8 BOM,
       * of a str it refuses one: JSON text goes without it */
      if (kind != GST_SPDL_FIELD_STRING && len >= 3
          && memcmp (data, "\xEF\xBB\xBF", 3) == 0) {
        data += 3;
        len -= 3;
        bytes = NULL;
      }
      if (!check_text (data, len, error))
        return FALSE;
      if (kind != GST_SPDL_FIELD_STRING
          && !gst_spdl_json_validate ((const gchar *) data, len, &why)) {
        g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
            "is not JSON: %s", why);
        g_free (why);
        return FALSE;
      }
      g_value_init (value, G_TYPE_STRING);
      g_value_take_string (value, g_strndup ((const gchar *) data, len));
      return TRUE;
    case GST_SPDL_FIELD_NPY:{
      GstSpdlNpyInfo info;
      GError *npy_error = NULL;

      /* what a batch cannot hold is a bad value here, under the field's
       * policy, not an error in spdlbatch */
      if (!gst_spdl_npy_parse (data, len, &info, &npy_error)) {
        g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
            "%s", npy_error->message);
        g_error_free (npy_error);
        return FALSE;
      }
    }
      /* FALLTHROUGH */
    default:
      g_value_init (value, G_TYPE_BYTES);
      g_value_take_boxed (value, bytes ? g_bytes_ref (bytes) :
          g_bytes_new (data, len));
      return TRUE;
  }
}

gboolean
gst_spdl_field_value_at_path (GValue * value, const GstSpdlField * field,
    const guint8 * data, gsize len, gboolean * absent, GError ** error)
{
  const gchar *text = (const gchar *) data, *v;
  gchar *why = NULL, *path = g_strjoinv (".", field->path), *s;
  gsize n;
  gint64 i;
  gboolean number;

  *absent = FALSE;
  if (len >= 3 && memcmp (text, "\xEF\xBB\xBF", 3) == 0) {
    text += 3;
    len -= 3;
  }
  if (!check_text ((const guint8 *) text, len, error))
    goto failed;
  if (!gst_spdl_json_find (text, len, (const gchar * const *) field->path,
          &v, &n, &why)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "at \"%s\": %s", path, why);
    goto failed;
  }
  if (v == NULL) {
    *absent = TRUE;
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "has no value at \"%s\"", path);
    goto failed;
  }
  number = *v == '-' || *v == 'N' || *v == 'I' || g_ascii_isdigit (*v);
  switch (field->kind) {
    case GST_SPDL_FIELD_INT:
      if (!number || !gst_spdl_json_number_to_int (v, n, &i)) {
        g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
            "at \"%s\" is %s, not an integer in int64's range", path,
            number ? "a number with a fraction or too large" :
            gst_spdl_json_type_name (*v));
        goto failed;
      }
      g_value_init (value, G_TYPE_INT64);
      g_value_set_int64 (value, i);
      break;
    case GST_SPDL_FIELD_FLOAT:{
      gchar buf[G_ASCII_DTOSTR_BUF_SIZE * 4];

      if (!number || n >= sizeof (buf)) {
        g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
            "at \"%s\" is %s, not a number", path,
            gst_spdl_json_type_name (*v));
        goto failed;
      }
      memcpy (buf, v, n);
      buf[n] = '\0';
      /* out of range: inf or 0 as json.loads gives */
      g_value_init (value, G_TYPE_DOUBLE);
      g_value_set_double (value, g_ascii_strtod (buf, NULL));
      break;
    }
    case GST_SPDL_FIELD_STRING:
      if (*v != '"') {
        g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
            "at \"%s\" is %s, not a string", path,
            gst_spdl_json_type_name (*v));
        goto failed;
      }
      s = gst_spdl_json_string_value (v, n, &why);
      if (s == NULL) {
        g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
            "at \"%s\": %s", path, why);
        goto failed;
      }
      g_value_init (value, G_TYPE_STRING);
      g_value_take_string (value, s);
      break;
    default:
      g_value_init (value, G_TYPE_STRING);
      g_value_take_string (value, g_strndup (v, n));
      break;
  }
  g_free (path);
  return TRUE;

failed:
  g_free (why);
  g_free (path);
  return FALSE;
}

static GstStructure *
sample_meta_structure (GstBuffer * buffer)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  return meta ? gst_custom_meta_get_structure (meta) : NULL;
}

/* The record's values live in a structure nested in the sample meta, one
 * field "vI" per value (a GstValueArray must hold one type) */
static GQuark
value_quark (guint i)
{
  gchar name[16];

  g_snprintf (name, sizeof (name), "v%u", i);
  return g_quark_from_string (name);
}

static GstStructure *
record_structure (GstBuffer * buffer)
{
  GstStructure *s = sample_meta_structure (buffer);
  const GValue *record = s ? gst_structure_get_value (s, "record") : NULL;

  return record ? (GstStructure *) gst_value_get_structure (record) : NULL;
}

void
gst_spdl_buffer_set_record (GstBuffer * buffer, const GValue * values,
    guint n_values)
{
  GstStructure *s = sample_meta_structure (buffer);
  GstStructure *record = gst_structure_new_empty ("record");
  GValue value = G_VALUE_INIT;
  guint i;

  g_return_if_fail (s != NULL);
  for (i = 0; i < n_values; i++)
    gst_structure_id_set_value (record, value_quark (i), &values[i]);
  g_value_init (&value, GST_TYPE_STRUCTURE);
  g_value_take_boxed (&value, record);
  gst_structure_take_value (s, "record", &value);
}

guint
gst_spdl_buffer_get_record_size (GstBuffer * buffer)
{
  GstStructure *record = record_structure (buffer);

  return record ? gst_structure_n_fields (record) : 0;
}

const GValue *
gst_spdl_buffer_get_record_value (GstBuffer * buffer, guint i)
{
  GstStructure *record = record_structure (buffer);

  if (record == NULL || i >= (guint) gst_structure_n_fields (record))
    return NULL;
  return gst_structure_id_get_value (record, value_quark (i));
}

gboolean
gst_spdl_buffer_set_record_value (GstBuffer * buffer, guint i,
    const GValue * value)
{
  GstStructure *record = record_structure (buffer);

  if (record == NULL || i >= (guint) gst_structure_n_fields (record))
    return FALSE;
  /* the meta's own structure: changed in place */
  gst_structure_id_set_value (record, value_quark (i), value);
  return TRUE;
}

void
gst_spdl_buffer_set_sample_geometry (GstBuffer * buffer,
    const GstSpdlSampleGeometry * g)
{
  GstStructure *s = sample_meta_structure (buffer);
  GValue array = G_VALUE_INIT, item = G_VALUE_INIT;
  gdouble box[4] = { g->x, g->y, g->width, g->height };
  guint i;

  g_return_if_fail (s != NULL);
  g_value_init (&array, GST_TYPE_ARRAY);
  g_value_init (&item, G_TYPE_DOUBLE);
  for (i = 0; i < 4; i++) {
    g_value_set_double (&item, box[i]);
    gst_value_array_append_value (&array, &item);
  }
  g_value_unset (&item);
  gst_structure_take_value (s, "crop", &array);
  gst_structure_set (s, "flipped", G_TYPE_BOOLEAN, g->flipped,
      "source-width", G_TYPE_UINT, g->source_width,
      "source-height", G_TYPE_UINT, g->source_height, NULL);
}

gboolean
gst_spdl_buffer_get_sample_geometry (GstBuffer * buffer,
    GstSpdlSampleGeometry * g)
{
  GstStructure *s = sample_meta_structure (buffer);
  const GValue *array = s ? gst_structure_get_value (s, "crop") : NULL;

  if (array == NULL || gst_value_array_get_size (array) != 4)
    return FALSE;
  g->x = g_value_get_double (gst_value_array_get_value (array, 0));
  g->y = g_value_get_double (gst_value_array_get_value (array, 1));
  g->width = g_value_get_double (gst_value_array_get_value (array, 2));
  g->height = g_value_get_double (gst_value_array_get_value (array, 3));
  g->flipped = FALSE;
  gst_structure_get_boolean (s, "flipped", &g->flipped);
  g->source_width = g->source_height = 0;
  gst_structure_get_uint (s, "source-width", &g->source_width);
  gst_structure_get_uint (s, "source-height", &g->source_height);
  return TRUE;
}
