/* GStreamer SPDL: tensor caps
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

#include "gstspdltensor.h"

#include <string.h>

static const struct
{
  const gchar *name;
  gsize size;
} dtypes[] = {
  {"uint8", 1}, {"int64", 8}, {"float32", 4}, {"float16", 2}, {"bfloat16", 2},
  {"float64", 8}, {"int8", 1}, {"int16", 2}, {"int32", 4}, {"uint16", 2},
  {"uint32", 4}, {"uint64", 8}, {"bool", 1},
};

G_STATIC_ASSERT (G_N_ELEMENTS (dtypes) == GST_SPDL_DTYPE_UNKNOWN);

gsize
gst_spdl_dtype_size (GstSpdlDType dtype)
{
  return dtype < GST_SPDL_DTYPE_UNKNOWN ? dtypes[dtype].size : 0;
}

const gchar *
gst_spdl_dtype_name (GstSpdlDType dtype)
{
  return dtype < GST_SPDL_DTYPE_UNKNOWN ? dtypes[dtype].name : "unknown";
}

static GstSpdlDType
dtype_from_name (const gchar * name)
{
  gint i;

  for (i = 0; i < GST_SPDL_DTYPE_UNKNOWN; i++)
    if (g_strcmp0 (name, dtypes[i].name) == 0)
      return i;
  return GST_SPDL_DTYPE_UNKNOWN;
}

gsize
gst_spdl_tensor_info_size (const GstSpdlTensorInfo * info)
{
  gsize size = gst_spdl_dtype_size (info->dtype);
  guint i;

  for (i = 0; i < info->n_dims; i++)
    size *= info->shape[i];
  return size;
}

GstCaps *
gst_spdl_tensors_caps_new (const GstSpdlTensorInfo * tensors, guint n,
    const gchar * caps_feature)
{
  GString *dims = g_string_new (NULL), *types = g_string_new (NULL);
  GstCaps *caps;
  guint t;
  gint d;

  for (t = 0; t < n; t++) {
    if (t > 0) {
      g_string_append_c (dims, ',');
      g_string_append_c (types, ',');
    }
    /* NNStreamer lists dimensions innermost first */
    for (d = tensors[t].n_dims - 1; d >= 0; d--)
      g_string_append_printf (dims, "%" G_GUINT64_FORMAT "%s",
          tensors[t].shape[d], d > 0 ? ":" : "");
    g_string_append (types, gst_spdl_dtype_name (tensors[t].dtype));
  }
  caps = gst_caps_new_simple (GST_SPDL_TENSORS_MEDIA_TYPE,
      "format", G_TYPE_STRING, "static",
      "num_tensors", G_TYPE_INT, n,
      "dimensions", G_TYPE_STRING, dims->str,
      "types", G_TYPE_STRING, types->str,
      "framerate", GST_TYPE_FRACTION, 0, 1, NULL);
  if (caps_feature)
    gst_caps_set_features (caps, 0,
        gst_caps_features_new (caps_feature, NULL));
  g_string_free (dims, TRUE);
  g_string_free (types, TRUE);
  return caps;
}

static gboolean
parse_dims (const gchar * text, GstSpdlTensorInfo * info)
{
  gchar **parts = g_strsplit (text, ":", -1);
  guint n = g_strv_length (parts), i;
  gboolean ok = n > 0 && n <= GST_SPDL_TENSOR_MAX_DIMS;

  for (i = 0; ok && i < n; i++) {
    gchar *end;
    info->shape[n - 1 - i] = g_ascii_strtoull (parts[i], &end, 10);
    ok = end != parts[i] && *end == '\0';
  }
  info->n_dims = n;
  g_strfreev (parts);
  return ok;
}

guint
gst_spdl_tensors_from_caps (const GstCaps * caps, GstSpdlTensorInfo * tensors,
    guint max)
{
  const GstStructure *s;
  const gchar *dims, *types;
  gchar **dim_list = NULL, **type_list = NULL;
  guint n = 0, i;
  gint num = 0;

  if (caps == NULL || gst_caps_get_size (caps) < 1)
    return 0;
  s = gst_caps_get_structure (caps, 0);
  dims = gst_structure_get_string (s, "dimensions");
  types = gst_structure_get_string (s, "types");
  if (!gst_structure_has_name (s, GST_SPDL_TENSORS_MEDIA_TYPE) || !dims ||
      !types || !gst_structure_get_int (s, "num_tensors", &num) || num <= 0)
    return 0;
  dim_list = g_strsplit (dims, ",", -1);
  type_list = g_strsplit (types, ",", -1);
  if (g_strv_length (dim_list) != (guint) num ||
      g_strv_length (type_list) != (guint) num || (guint) num > max)
    goto done;
  for (i = 0; i < (guint) num; i++) {
    if (!parse_dims (g_strstrip (dim_list[i]), &tensors[i]))
      goto done;
    tensors[i].dtype = dtype_from_name (g_strstrip (type_list[i]));
    if (tensors[i].dtype == GST_SPDL_DTYPE_UNKNOWN)
      goto done;
  }
  n = num;
done:
  g_strfreev (dim_list);
  g_strfreev (type_list);
  return n;
}

gboolean
gst_spdl_tensor_info_is_variable (const GstSpdlTensorInfo * info)
{
  return info->n_dims > 0 && info->shape[0] == 0;
}

gchar *
gst_spdl_tensor_shape_to_string (const GstSpdlTensorInfo * info)
{
  GString *s = g_string_new (NULL);
  guint i;

  for (i = 0; i < info->n_dims; i++)
    g_string_append_printf (s, "%s%" G_GUINT64_FORMAT, i ? "," : "",
        info->shape[i]);
  return g_string_free (s, FALSE);
}
