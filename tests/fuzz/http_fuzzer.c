/* gst-spdl fuzz target: HTTP response headers
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* A server's response headers, any bytes, cut into lines as libcurl hands
 * them to the HTTP client's header callback (CRLF kept, not
 * NUL-terminated): the values it keeps (ETag, Last-Modified,
 * Content-Range) and Content-Range's reading, which decides whether a
 * resumed shard download continues the same object. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlhttp-private.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static const gchar *const names[] = { "ETag", "Last-Modified",
  "Content-Range"
};

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static gboolean initialized = FALSE;
  const guint8 *p = data, *end = data + size;

  if (!initialized) {
    /* GLib's warnings about an input are bugs too: fatal */
    g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_WARNING |
        G_LOG_LEVEL_CRITICAL);
    initialized = TRUE;
  }
  while (p < end) {
    const guint8 *nl = memchr (p, '\n', end - p);
    gsize len = nl ? (gsize) (nl + 1 - p) : (gsize) (end - p);
    /* an exact-size copy: reads past the line are caught */
    gchar *line = g_memdup2 (p, len);
    guint i;

    for (i = 0; i < G_N_ELEMENTS (names); i++) {
      gchar *value = gst_spdl_http_header_value (line, len, names[i]);
      guint64 first;
      gint64 total;

      if (value == NULL)
        continue;
      g_assert (len > strlen (names[i]) && line[strlen (names[i])] == ':');
      /* trimmed */
      g_assert (*value == '\0' || (!g_ascii_isspace (value[0]) &&
              !g_ascii_isspace (value[strlen (value) - 1])));
      if (gst_spdl_http_parse_content_range (value, &first, &total))
        g_assert (g_str_has_prefix (value, "bytes ") && total >= -1);
      g_free (value);
    }
    g_free (line);
    p += len;
  }
  return 0;
}
