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
#include "gstspdlsigv4.h"

#include <string.h>

struct _GstSpdlS3
{
  gchar *endpoint;              /* no trailing slash */
  gchar *region;
  gchar *access_key;            /* NULL: anonymous requests */
  gchar *secret_key;
  gchar *session_token;
  gchar *credentials_source;    /* for messages */
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
  if (key && *key && secret && *secret) {
    s3->access_key = g_strdup (key);
    s3->secret_key = g_strdup (secret);
    s3->credentials_source = g_strdup_printf ("credentials from %s",
        c->access_key && *c->access_key ? "the s3-access-key property" :
        "the environment (AWS_ACCESS_KEY_ID)");
  } else {
    s3->credentials_source = g_strdup ("no credentials: anonymous requests");
  }
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
  g_free (s3->access_key);
  clear_secret (&s3->secret_key);
  clear_secret (&s3->session_token);
  g_free (s3->credentials_source);
  g_free (s3);
}

const gchar *
gst_spdl_s3_get_region (const GstSpdlS3 * s3)
{
  return s3->region;
}

gboolean
gst_spdl_s3_sign (GstSpdlS3 * s3, const gchar * method, const gchar * url,
    gchar *** headers, GError ** error)
{
  GstSpdlSigV4Credentials credentials = { 0, };

  *headers = NULL;
  if (s3->access_key == NULL)
    return TRUE;
  credentials.access_key = s3->access_key;
  credentials.secret_key = s3->secret_key;
  credentials.session_token = s3->session_token;
  credentials.region = s3->region;
  credentials.service = "s3";
  *headers = gst_spdl_sigv4_sign (&credentials, method, url, NULL,
      GST_SPDL_SIGV4_UNSIGNED_PAYLOAD, g_get_real_time () / G_USEC_PER_SEC,
      NULL, error);
  return *headers != NULL;
}

const gchar *
gst_spdl_s3_describe_credentials (const GstSpdlS3 * s3)
{
  return s3->credentials_source;
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

/* longest code or message kept: S3's are short; a hostile body is not */
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
gst_spdl_s3_parse_error (const gchar * body, gsize len, gchar ** code,
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
