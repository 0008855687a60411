/* GStreamer SPDL: the XML error body every AWS service answers with
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_AWS_ERROR_H__
#define __GST_SPDL_AWS_ERROR_H__

#include <glib.h>

G_BEGIN_DECLS

/* The <Code> and <Message> of an AWS error response's XML body (S3's
 * <Error>, STS's <ErrorResponse>; at most @len bytes, not NUL-terminated),
 * entities decoded; FALSE when the body holds no <Code>. Each is cut to a
 * sane length and made valid UTF-8. */
gboolean gst_spdl_aws_parse_error (const gchar * body, gsize len,
    gchar ** code, gchar ** message);

G_END_DECLS

#endif /* __GST_SPDL_AWS_ERROR_H__ */
