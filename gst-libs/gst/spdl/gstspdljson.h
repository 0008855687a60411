/* GStreamer SPDL: JSON checks for sample fields
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_JSON_H__
#define __GST_SPDL_JSON_H__

#include <glib.h>

G_BEGIN_DECLS

/* How deep arrays and objects may nest: Python's json.loads raises
 * RecursionError not far above this. */
#define GST_SPDL_JSON_MAX_DEPTH 512

/* Whether the @len bytes at @text are one JSON value as Python's
 * json.loads() takes it (RFC 8259, plus NaN, Infinity and -Infinity;
 * white space around it), nested at most GST_SPDL_JSON_MAX_DEPTH deep.
 * Never reads past @len, never recurses. FALSE with @why (newly
 * allocated, may be NULL) saying what and at which byte. */
gboolean gst_spdl_json_validate (const gchar * text, gsize len,
    gchar ** why);

G_END_DECLS

#endif /* __GST_SPDL_JSON_H__ */
