/* GStreamer SPDL: NumPy .npy arrays (an npy field's value)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The format: "\x93NUMPY", a major and a minor version byte, the header's
 * length (2 bytes little-endian in version 1, 4 in versions 2 and 3),
 * then the header, a Python dict literal padded with spaces and ended by
 * '\n': {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
 * The data follow. numpy.lib.format is the reference. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlnpy.h"

#include <string.h>

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6

typedef struct
{
  const gchar *p, *end;
} Cursor;

static void
skip_space (Cursor * c)
{
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n'
          || *c->p == '\r'))
    c->p++;
}

static gboolean
take (Cursor * c, gchar ch)
{
  skip_space (c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return TRUE;
  }
  return FALSE;
}

/* A quoted Python string without escapes: @out points into the header */
static gboolean
take_string (Cursor * c, const gchar ** out, gsize * out_len)
{
  gchar quote;
  const gchar *start;

  skip_space (c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return FALSE;
  quote = *c->p++;
  start = c->p;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\')
      return FALSE;
    c->p++;
  }
  if (c->p >= c->end)
    return FALSE;
  *out = start;
  *out_len = c->p - start;
  c->p++;
  return TRUE;
}

static gboolean
take_word (Cursor * c, const gchar * word)
{
  gsize n = strlen (word);

  skip_space (c);
  if ((gsize) (c->end - c->p) < n || memcmp (c->p, word, n) != 0)
    return FALSE;
  c->p += n;
  return TRUE;
}

static gboolean
fail (GError ** error, const gchar * format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
fail (GError ** error, const gchar * format, ...)
{
  va_list args;
  gchar *message;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
      message);
  g_free (message);
  return FALSE;
}

/* Header text for a message: its first 32 bytes, escaped (the header is
 * any bytes; messages are UTF-8) */
static gchar *
shown (const gchar * s, gsize len)
{
  gchar *part = g_strndup (s, MIN (len, 32));
  gchar *escaped = g_strescape (part, NULL);

  g_free (part);
  return escaped;
}

static gboolean
parse_descr (const gchar * s, gsize len, GstSpdlDType * dtype, GError ** error)
{
  gchar *text;
  gboolean ret;

  gchar order, kind;
  guint size;

  if (len != 3 || s[2] < '1' || s[2] > '8')
    goto unsupported;
  order = s[0];
  kind = s[1];
  size = s[2] - '0';
  if (kind == 'b' && size == 1)
    *dtype = GST_SPDL_DTYPE_BOOL;
  else if (kind == 'i' && size == 1)
    *dtype = GST_SPDL_DTYPE_INT8;
  else if (kind == 'i' && size == 2)
    *dtype = GST_SPDL_DTYPE_INT16;
  else if (kind == 'i' && size == 4)
    *dtype = GST_SPDL_DTYPE_INT32;
  else if (kind == 'i' && size == 8)
    *dtype = GST_SPDL_DTYPE_INT64;
  else if (kind == 'u' && size == 1)
    *dtype = GST_SPDL_DTYPE_UINT8;
  else if (kind == 'u' && size == 2)
    *dtype = GST_SPDL_DTYPE_UINT16;
  else if (kind == 'u' && size == 4)
    *dtype = GST_SPDL_DTYPE_UINT32;
  else if (kind == 'u' && size == 8)
    *dtype = GST_SPDL_DTYPE_UINT64;
  else if (kind == 'f' && size == 2)
    *dtype = GST_SPDL_DTYPE_FLOAT16;
  else if (kind == 'f' && size == 4)
    *dtype = GST_SPDL_DTYPE_FLOAT32;
  else if (kind == 'f' && size == 8)
    *dtype = GST_SPDL_DTYPE_FLOAT64;
  else
    goto unsupported;
  /* one byte has no order; '=' is the writer's, little-endian where
   * numbers are read as they are */
  if (order == '<' || order == '|' || (order == '>' && size == 1) ||
      (order == '=' && G_BYTE_ORDER == G_LITTLE_ENDIAN))
    return TRUE;
  if (order == '>')
    return fail (error, "is big-endian ('>%c%u'): save it little-endian "
        "(array.astype('<%c%u'))", kind, size, kind, size);
  goto unsupported;

unsupported:
  text = shown (s, len);
  ret = fail (error, "has dtype '%s', not a number type a tensor holds "
      "(bool, int8 to int64, uint8 to uint64, float16, float32, float64)",
      text);
  g_free (text);
  return ret;
}

/* "(3, 4)", "(3,)", "()" */
static gboolean
parse_shape (Cursor * c, GstSpdlNpyInfo * info, GError ** error)
{
  if (!take (c, '('))
    return fail (error, "has a header whose shape is not a tuple");
  info->n_dims = 0;
  skip_space (c);
  while (!take (c, ')')) {
    guint64 v = 0;
    const gchar *start;

    skip_space (c);
    start = c->p;
    while (c->p < c->end && g_ascii_isdigit (*c->p)) {
      guint d = *c->p - '0';
      if (v > (G_MAXUINT64 - d) / 10)
        return fail (error, "has a dimension too large");
      v = v * 10 + d;
      c->p++;
    }
    if (c->p == start)
      return fail (error, "has a header whose shape is not a tuple of "
          "integers");
    /* Python 2's numpy wrote longs: (3L, 4L) */
    if (c->p < c->end && *c->p == 'L')
      c->p++;
    if (info->n_dims == GST_SPDL_TENSOR_MAX_DIMS)
      return fail (error, "has more than %d dimensions",
          GST_SPDL_TENSOR_MAX_DIMS);
    info->shape[info->n_dims++] = v;
    if (!take (c, ',')) {
      if (!take (c, ')'))
        return fail (error, "has a header whose shape is not a tuple of "
            "integers");
      break;
    }
  }
  return TRUE;
}

gboolean
gst_spdl_npy_parse (const guint8 * data, gsize len, GstSpdlNpyInfo * info,
    GError ** error)
{
  gboolean have_descr = FALSE, have_order = FALSE, have_shape = FALSE;
  gsize header_len, prefix, item;
  guint major, i;
  Cursor c;

  memset (info, 0, sizeof (*info));
  if (len < MAGIC_LEN + 2 || memcmp (data, MAGIC, MAGIC_LEN) != 0)
    return fail (error, "is not a NumPy .npy file (no \\x93NUMPY magic)");
  major = data[MAGIC_LEN];
  if (major == 1) {
    prefix = MAGIC_LEN + 2 + 2;
    if (len < prefix)
      return fail (error, "is cut short in its header");
    header_len = GST_READ_UINT16_LE (data + MAGIC_LEN + 2);
  } else if (major == 2 || major == 3) {
    prefix = MAGIC_LEN + 2 + 4;
    if (len < prefix)
      return fail (error, "is cut short in its header");
    header_len = GST_READ_UINT32_LE (data + MAGIC_LEN + 2);
  } else {
    return fail (error, "is in .npy format version %u (1 to 3 are read)",
        major);
  }
  if (header_len > len - prefix)
    return fail (error, "is cut short in its header (%" G_GSIZE_FORMAT
        " bytes of %" G_GSIZE_FORMAT ")", len - prefix, header_len);

  c.p = (const gchar *) data + prefix;
  c.end = c.p + header_len;
  if (!take (&c, '{'))
    return fail (error, "has a header that is not a dict");
  while (!take (&c, '}')) {
    const gchar *key, *value;
    gsize key_len, value_len;

    if (!take_string (&c, &key, &key_len) || !take (&c, ':'))
      return fail (error, "has a malformed header");
    if (key_len == 5 && memcmp (key, "descr", 5) == 0) {
      skip_space (&c);
      if (c.p < c.end && *c.p == '[')
        return fail (error, "holds a structured array (fields of several "
            "types): save one array per field");
      if (!take_string (&c, &value, &value_len))
        return fail (error, "has a header whose descr is not a string");
      if (!parse_descr (value, value_len, &info->dtype, error))
        return FALSE;
      have_descr = TRUE;
    } else if (key_len == 13 && memcmp (key, "fortran_order", 13) == 0) {
      if (take_word (&c, "True"))
        return fail (error, "is in Fortran order: save it in C order "
            "(numpy.ascontiguousarray)");
      if (!take_word (&c, "False"))
        return fail (error, "has a header whose fortran_order is not a "
            "boolean");
      have_order = TRUE;
    } else if (key_len == 5 && memcmp (key, "shape", 5) == 0) {
      if (!parse_shape (&c, info, error))
        return FALSE;
      have_shape = TRUE;
    } else {
      gchar *text = shown (key, key_len);
      gboolean ret = fail (error, "has an unknown key '%s' in its header",
          text);

      g_free (text);
      return ret;
    }
    if (!take (&c, ',')) {
      if (!take (&c, '}'))
        return fail (error, "has a malformed header");
      break;
    }
  }
  skip_space (&c);
  if (c.p != c.end)
    return fail (error, "has a malformed header (text after its dict)");
  if (!have_descr || !have_order || !have_shape)
    return fail (error, "has a header without %s", !have_descr ? "descr" :
        !have_order ? "fortran_order" : "shape");

  item = gst_spdl_dtype_size (info->dtype);
  info->n_elements = 1;
  for (i = 0; i < info->n_dims; i++) {
    if (info->shape[i] != 0 && info->n_elements > G_MAXSIZE / item /
        info->shape[i])
      return fail (error, "has a shape too large for memory");
    info->n_elements *= info->shape[i];
  }
  info->data_offset = prefix + header_len;
  info->data_size = info->n_elements * item;
  if (len - info->data_offset != info->data_size)
    return fail (error, "holds %" G_GSIZE_FORMAT " bytes of data, its "
        "header says %" G_GSIZE_FORMAT " (%" G_GUINT64_FORMAT " %s)",
        len - info->data_offset, info->data_size, info->n_elements,
        gst_spdl_dtype_name (info->dtype));
  return TRUE;
}
