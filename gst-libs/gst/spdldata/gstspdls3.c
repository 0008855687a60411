/* GStreamer SPDL: S3 addressing: endpoint, region, credentials
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

#include "gstspdls3.h"

#include <string.h>

struct _GstSpdlS3
{
  gchar *endpoint;              /* no trailing slash */
  gchar *region;
  gchar *key_pair;              /* "KEY:SECRET", NULL: anonymous */
  gchar *session_token;
  gboolean virtual_host;
};

gboolean
gst_spdl_s3_is_url (const gchar * location)
{
  return location && g_str_has_prefix (location, "s3://");
}

static const gchar *
env_or (const gchar * value, const gchar * name, const gchar * name2)
{
  if (value && *value)
    return value;
  if (g_getenv (name) && *g_getenv (name))
    return g_getenv (name);
  return name2 ? g_getenv (name2) : NULL;
}

GstSpdlS3 *
gst_spdl_s3_new (const GstSpdlS3Config * c)
{
  GstSpdlS3 *s3 = g_new0 (GstSpdlS3, 1);
  const gchar *endpoint = env_or (c->endpoint, "AWS_ENDPOINT_URL_S3",
      "AWS_ENDPOINT_URL");
  const gchar *region = env_or (c->region, "AWS_REGION",
      "AWS_DEFAULT_REGION");
  const gchar *key = env_or (c->access_key, "AWS_ACCESS_KEY_ID", NULL);
  const gchar *secret = env_or (c->secret_key, "AWS_SECRET_ACCESS_KEY",
      NULL);
  const gchar *token = env_or (c->session_token, "AWS_SESSION_TOKEN", NULL);

  s3->virtual_host = c->virtual_host;
  s3->region = g_strdup (region ? region : "us-east-1");
  if (endpoint)
    s3->endpoint = g_strdup (endpoint);
  else
    s3->endpoint = g_strdup_printf ("https://s3.%s.amazonaws.com",
        s3->region);
  while (g_str_has_suffix (s3->endpoint, "/"))
    s3->endpoint[strlen (s3->endpoint) - 1] = '\0';
  if (key && secret)
    s3->key_pair = g_strdup_printf ("%s:%s", key, secret);
  if (token && *token)
    s3->session_token = g_strdup (token);
  return s3;
}

/* a secret: not left in freed memory */
static void
clear_secret (gchar ** secret)
{
  if (*secret) {
    memset (*secret, 0, strlen (*secret));
    g_clear_pointer (secret, g_free);
  }
}

void
gst_spdl_s3_free (GstSpdlS3 * s3)
{
  if (s3 == NULL)
    return;
  g_free (s3->endpoint);
  g_free (s3->region);
  clear_secret (&s3->key_pair);
  clear_secret (&s3->session_token);
  g_free (s3);
}

const gchar *
gst_spdl_s3_get_region (const GstSpdlS3 * s3)
{
  return s3->region;
}

const gchar *
gst_spdl_s3_get_key_pair (const GstSpdlS3 * s3)
{
  return s3->key_pair;
}

const gchar *
gst_spdl_s3_get_session_token (const GstSpdlS3 * s3)
{
  return s3->session_token;
}

gchar *
gst_spdl_s3_resolve (const GstSpdlS3 * s3, const gchar * url,
    const gchar * query)
{
  const gchar *bucket = url + strlen ("s3://");
  const gchar *slash = strchr (bucket, '/');
  gchar *bucket_name = slash ? g_strndup (bucket, slash - bucket) :
      g_strdup (bucket);
  gchar *key = g_uri_escape_string (slash ? slash + 1 : "", "/", FALSE);
  gchar *resolved;

  if (s3->virtual_host) {
    const gchar *host = strstr (s3->endpoint, "://");
    gchar *scheme = g_strndup (s3->endpoint, host - s3->endpoint);
    resolved = g_strdup_printf ("%s://%s.%s/%s%s%s", scheme, bucket_name,
        host + 3, key, query ? "?" : "", query ? query : "");
    g_free (scheme);
  } else {
    resolved = g_strdup_printf ("%s/%s/%s%s%s", s3->endpoint,
        bucket_name, key, query ? "?" : "", query ? query : "");
  }
  g_free (bucket_name);
  g_free (key);
  return resolved;
}
