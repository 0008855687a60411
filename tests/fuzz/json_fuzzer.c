/* gst-spdl fuzz target: the JSON check of string fields
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Any bytes through gst_spdl_json_validate(), as a json field's member or
 * cell reaches it: never past the input (ASan), never deep recursion; a
 * refusal says why in UTF-8; the verdict does not depend on bytes after
 * the input (a copy without a terminator gives the same). Then a path
 * walked through it (gst_spdl_json_find(), what a "json#PATH" field
 * does): a few fixed paths into the whole input, and the input's first
 * line as a path into the rest; a value found lies inside the input and
 * is itself JSON; a string value unescapes to UTF-8. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "gstspdljson.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static void
walk (const gchar * text, gsize len, gchar ** path, gboolean valid)
{
  const gchar *value;
  gsize value_len;
  gchar *why = NULL, *s;

  if (!gst_spdl_json_find (text, len, (const gchar * const *) path, &value,
          &value_len, &why)) {
    g_assert (why && g_utf8_validate (why, -1, NULL));
    g_free (why);
    return;
  }
  g_assert (valid);
  if (value == NULL)
    return;
  g_assert (value >= text && value + value_len <= text + len);
  g_assert (gst_spdl_json_validate (value, value_len, NULL));
  /* callers check the text is UTF-8 first (gst_spdl_field_value_at_path) */
  if (*value == '"' && g_utf8_validate (text, len, NULL)) {
    s = gst_spdl_json_string_value (value, value_len, &why);
    g_assert (s ? g_utf8_validate (s, -1, NULL) : why != NULL);
    g_free (s);
    g_free (why);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  gchar *why = NULL, *copy = g_malloc (size + 1);
  gboolean valid, again;

  memcpy (copy, data, size);
  copy[size] = '1';             /* a digit after a number must not count */
  valid = gst_spdl_json_validate ((const gchar *) data, size, &why);
  if (!valid && why)
    g_assert (g_utf8_validate (why, -1, NULL));
  g_free (why);
  again = gst_spdl_json_validate (copy, size, NULL);
  g_assert (valid == again);
  for (const gchar ** p = (const gchar *[]) {
  "0", "a", "a.0", "0.0.1", "label", NULL}; *p; p++) {
    gchar **path = g_strsplit (*p, ".", -1);

    walk ((const gchar *) data, size, path, valid);
    g_strfreev (path);
  }
  {
    const guint8 *nl = memchr (data, '\n', size);

    if (nl && nl - data < 256) {
      gchar *line = g_strndup ((const gchar *) data, nl - data);
      gchar **path = g_strsplit (line, ".", 16);
      gsize rest = size - (nl + 1 - data);
      gchar *doc = g_malloc (rest + 1); /* never NULL, even empty */

      memcpy (doc, nl + 1, rest);

      /* only paths the record parser gives: UTF-8 (a property's text),
       * no empty key */
      if (path[0] && g_utf8_validate (line, -1, NULL)
          && !g_strv_contains ((const gchar * const *) path, ""))
        walk (doc, rest, path, gst_spdl_json_validate (doc, rest, NULL));
      g_free (doc);
      g_strfreev (path);
      g_free (line);
    }
  }
  g_free (copy);
  return 0;
}
