/* GStreamer SPDL: credentials masked in the text gst-spdl shows
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_REDACT_H__
#define __GST_SPDL_REDACT_H__

#include <glib.h>

G_BEGIN_DECLS

/* the mask that replaces a secret */
#define GST_SPDL_REDACT_MASK "***"

gchar * gst_spdl_url_redact (const gchar * text);

G_END_DECLS

#endif /* __GST_SPDL_REDACT_H__ */
