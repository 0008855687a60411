/* GStreamer SPDL: the HTTP client's reading of response headers
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* What a server's headers go through, apart from the I/O: for the HTTP
 * client and its fuzz target (tests/fuzz/http_fuzzer.c). */
#ifndef __GST_SPDL_HTTP_PRIVATE_H__
#define __GST_SPDL_HTTP_PRIVATE_H__

#include <glib.h>

G_BEGIN_DECLS

/* The value of header @name, trimmed, if @line is one (@len bytes as
 * libcurl hands a header line over: not NUL-terminated, CRLF kept), else
 * NULL; g_free() it. */
gchar *gst_spdl_http_header_value (const gchar * line, gsize len,
    const gchar * name);

/* A Content-Range value, "bytes FIRST-LAST/TOTAL" (TOTAL "*": -1). */
gboolean gst_spdl_http_parse_content_range (const gchar * value,
    guint64 * first, gint64 * total);

G_END_DECLS

#endif /* __GST_SPDL_HTTP_PRIVATE_H__ */
