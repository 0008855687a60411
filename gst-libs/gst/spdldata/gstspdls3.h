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

#include "gstspdlawscredentials.h"

G_BEGIN_DECLS

/* What the user set; NULL or empty: not set. Unset, the endpoint is
 * AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url (see
 * gst_spdl_aws_profile_get()), else AWS's for the region; the region
 * AWS_REGION, AWS_DEFAULT_REGION, the profile's region, else us-east-1;
 * the credentials come from botocore's chain (gstspdlawscredentials.h). */
typedef struct
{
  const gchar *endpoint;        /* e.g. http://127.0.0.1:9000 */
  const gchar *region;
  const gchar *access_key;
  const gchar *secret_key;
  const gchar *session_token;
  const gchar *profile;         /* as boto3.Session(profile_name=) */
  gboolean virtual_host;        /* bucket.host/key instead of host/bucket/key */
} GstSpdlS3Config;

/* The settings in force (the config's strings are copied, not kept) and
 * the current credentials. Thread-safe. */
typedef struct _GstSpdlS3 GstSpdlS3;

gboolean gst_spdl_s3_is_url (const gchar * location);

GstSpdlS3 *gst_spdl_s3_new (const GstSpdlS3Config * config);
void gst_spdl_s3_free (GstSpdlS3 * s3);

/* s3://bucket/key (and a query string, without "?", or NULL) -> the
 * endpoint's http(s) URL of it, path-style or virtual-hosted; the key's
 * path segments are percent-encoded (SigV4 signs the encoded path). */
gchar *gst_spdl_s3_resolve (GstSpdlS3 * s3, const gchar * url,
    const gchar * query);

const gchar *gst_spdl_s3_get_region (const GstSpdlS3 * s3);
/* The header lines that sign a @method request of @url (resolved, as it
 * is sent) with SigV4 and an unsigned payload, now: @headers NULL-terminated
 * (gst_spdl_sigv4_headers_free()), or NULL without credentials (an
 * anonymous request). FALSE with @error (GST_SPDL_READ_ERROR) when the URL
 * cannot be signed or the credentials are set up wrongly (a named profile
 * that does not exist...). */
gboolean gst_spdl_s3_sign (GstSpdlS3 * s3, const gchar * method,
    const gchar * url, gchar *** headers, GError ** error);
/* Whether requests can be signed now, without waiting: the credentials
 * are looked up once an s3:// URL was resolved (files, perhaps HTTP
 * requests to the container or instance metadata: up to seconds), on the
 * provider's thread; temporary ones again before they expire, while the
 * current ones still sign. FALSE while there are none, or none valid,
 * and a lookup is under way: ask again once the notify set with
 * gst_spdl_s3_set_credentials_notify() was called. Never blocks; the HTTP
 * client calls it on its I/O thread before it signs, and holds back only
 * its S3 requests meanwhile. */
gboolean gst_spdl_s3_credentials_ready (GstSpdlS3 * s3);
/* Called (on another thread, holding a lock: only wake someone up) when a
 * lookup ended. Set it before the first request. */
void gst_spdl_s3_set_credentials_notify (GstSpdlS3 * s3,
    GstSpdlAwsCredentialsNotify notify, gpointer user_data);

/* Where the credentials came from, for messages ("credentials from
 * environment (AWS_ACCESS_KEY_ID)"), or that there are none and where the
 * chain looked ("requests unsigned: No AWS credentials found. Looked at:
 * ..."), never a secret; g_free() it. */
gchar *gst_spdl_s3_describe_credentials (GstSpdlS3 * s3);

/* A listing holds at most this many keys: a server, broken or hostile,
 * cannot make the loader hold keys without end (50 million: ImageNet-21k
 * is 14 million images); and a key is at most S3's 1024 bytes. */
#define GST_SPDL_S3_MAX_LIST_KEYS (50 * 1000 * 1000)
#define GST_SPDL_S3_MAX_KEY_LENGTH 1024

/* One page of a ListObjectsV2 response (@len bytes of XML, not
 * NUL-terminated; NULL when @len is 0): appends the <Key> of each
 * <Contents> to @keys (which frees its elements with g_free()), sets
 * @truncated from <IsTruncated> and @next_token to <NextContinuationToken>
 * (NULL when absent; g_free() it). FALSE with @error when it is no
 * well-formed XML (G_MARKUP_ERROR), when @keys would hold more than
 * @max_keys (GST_SPDL_S3_MAX_LIST_KEYS for a listing) or a key is longer
 * than GST_SPDL_S3_MAX_KEY_LENGTH (GST_SPDL_READ_ERROR_TOO_LARGE): @keys
 * may have grown then, @truncated is FALSE, @next_token NULL. */
gboolean gst_spdl_s3_parse_list_page (const gchar * xml, gsize len,
    GPtrArray * keys, guint max_keys, gboolean * truncated,
    gchar ** next_token, GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_S3_H__ */
