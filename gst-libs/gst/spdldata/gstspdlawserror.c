/* GStreamer SPDL: the XML error body every AWS service answers with
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

#include "gstspdlawserror.h"

#include <string.h>

/* longest code or message kept: AWS's are short; a hostile body is not */
#define MAX_ERROR_FIELD 512

/* The text between <@tag> and </@tag> in @body, XML entities decoded;
 * NULL when absent. */
static gchar *
xml_element (const gchar * body, gsize len, const gchar * tag)
{
  gchar *open = g_strdup_printf ("<%s>", tag);
  gchar *close = g_strdup_printf ("</%s>", tag);
  const gchar *start = g_strstr_len (body, len, open), *end;
  GString *out = NULL;

  if (start) {
    start += strlen (open);
    end = g_strstr_len (start, len - (start - body), close);
    if (end)
      out = g_string_new (NULL);
    while (out && start < end && out->len < MAX_ERROR_FIELD) {
      static const struct
      {
        const gchar *entity;
        gchar c;
      } entities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'},
        {"&apos;", '\''},
      };
      guint i;

      for (i = 0; i < G_N_ELEMENTS (entities); i++) {
        gsize n = strlen (entities[i].entity);
        if ((gsize) (end - start) >= n &&
            strncmp (start, entities[i].entity, n) == 0) {
          g_string_append_c (out, entities[i].c);
          start += n;
          break;
        }
      }
      if (i == G_N_ELEMENTS (entities))
        g_string_append_c (out, *start++);
    }
  }
  g_free (open);
  g_free (close);
  if (out == NULL)
    return NULL;
  {
    gchar *valid = g_utf8_make_valid (out->str, out->len);
    g_string_free (out, TRUE);
    return g_strstrip (valid);
  }
}

gboolean
gst_spdl_aws_parse_error (const gchar * body, gsize len, gchar ** code,
    gchar ** message)
{
  *code = body ? xml_element (body, len, "Code") : NULL;
  *message = NULL;
  if (*code == NULL || **code == '\0') {
    g_clear_pointer (code, g_free);
    return FALSE;
  }
  *message = xml_element (body, len, "Message");
  return TRUE;
}
