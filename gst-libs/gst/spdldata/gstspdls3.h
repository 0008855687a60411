/* GStreamer SPDL: S3 addressing: endpoint, region, credentials
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_S3_H__
#define __GST_SPDL_S3_H__

#include <glib.h>

G_BEGIN_DECLS

/* What the user set; NULL or empty: from the AWS_* environment variables
 * (AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_REGION or
 * AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN). */
typedef struct
{
  const gchar *endpoint;        /* e.g. http://127.0.0.1:9000 */
  const gchar *region;
  const gchar *access_key;
  const gchar *secret_key;
  const gchar *session_token;
  gboolean virtual_host;        /* bucket.host/key instead of host/bucket/key */
} GstSpdlS3Config;

/* The settings in force: the config's strings are copied, not kept; the
 * secret is cleared from memory when freed. */
typedef struct _GstSpdlS3 GstSpdlS3;

gboolean gst_spdl_s3_is_url (const gchar * location);

GstSpdlS3 *gst_spdl_s3_new (const GstSpdlS3Config * config);
void gst_spdl_s3_free (GstSpdlS3 * s3);

/* s3://bucket/key (and a query string, without "?", or NULL) -> the
 * endpoint's http(s) URL of it, path-style or virtual-hosted; the key's
 * path segments are percent-encoded (SigV4 signs the encoded path). */
gchar *gst_spdl_s3_resolve (const GstSpdlS3 * s3, const gchar * url,
    const gchar * query);

const gchar *gst_spdl_s3_get_region (const GstSpdlS3 * s3);
/* The header lines that sign a @method request of @url (resolved, as it
 * is sent) with SigV4 and an unsigned payload, now: @headers NULL-terminated
 * (gst_spdl_sigv4_headers_free()), or NULL without credentials (an
 * anonymous request). FALSE with @error when the URL cannot be signed. */
gboolean gst_spdl_s3_sign (GstSpdlS3 * s3, const gchar * method,
    const gchar * url, gchar *** headers, GError ** error);
/* Where the credentials came from, for messages ("credentials from the
 * environment (AWS_ACCESS_KEY_ID)"): never a secret. */
const gchar *gst_spdl_s3_describe_credentials (const GstSpdlS3 * s3);

/* The <Code> and <Message> of an S3 error response's XML body (at most
 * @len bytes, not NUL-terminated), entities decoded; FALSE when the body
 * holds no <Code>. Each is cut to a sane length and made valid UTF-8. */
gboolean gst_spdl_s3_parse_error (const gchar * body, gsize len,
    gchar ** code, gchar ** message);

G_END_DECLS

#endif /* __GST_SPDL_S3_H__ */
