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
#include "gstspdlawscredentials.h"
#include "gstspdlerrors.h"
#include "gstspdlsigv4.h"

#include <stdarg.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (spdl_s3_debug);
#define GST_CAT_DEFAULT spdl_s3_debug

struct _GstSpdlS3
{
  gchar *endpoint;              /* no trailing slash */
  gchar *region;
  gboolean virtual_host;
  GstSpdlAwsCredentialsProvider *provider;

  GMutex lock;
  gboolean wanted;              /* an s3:// URL was resolved */
  /* the provider answered, and there is nothing to refresh: credentials
   * that do not expire, none (anonymous), or a setting's error */
  gboolean settled;
  /* temporary credentials were had: asked again, also once they are lost
   * (the provider answers a failing source at most every 30 s) */
  gboolean temporary;
  gchar *temporary_source;      /* where they came from */
  GstSpdlAwsCredentials *credentials;   /* NULL: anonymous */
  GError *credentials_error;    /* settings that must fail every request */
  gchar *credentials_source;    /* for messages */
};

gboolean
gst_spdl_s3_is_url (const gchar * location)
{
  return location && g_str_has_prefix (location, "s3://");
}

/* @value if set, else the first of the variables set (NULL-terminated) */
static const gchar *
setting (const gchar * value, ...)
{
  const gchar *name, *found = NULL;
  va_list args;

  if (value && *value)
    return value;
  va_start (args, value);
  while (found == NULL && (name = va_arg (args, const gchar *))) {
    const gchar *env = g_getenv (name);
    if (env && *env)
      found = env;
  }
  va_end (args);
  return found;
}

GstSpdlS3 *
gst_spdl_s3_new (const GstSpdlS3Config * c)
{
  GstSpdlS3 *s3 = g_new0 (GstSpdlS3, 1);
  GstSpdlAwsCredentialsConfig credentials = { 0, };
  const gchar *profile = c->profile && *c->profile ? c->profile : NULL;
  const gchar *endpoint = setting (c->endpoint, "AWS_ENDPOINT_URL_S3",
      "AWS_ENDPOINT_URL", NULL);
  const gchar *region = setting (c->region, "AWS_REGION",
      "AWS_DEFAULT_REGION", NULL);
  static gsize debug_once = 0;

  if (g_once_init_enter (&debug_once)) {
    GST_DEBUG_CATEGORY_INIT (spdl_s3_debug, "spdls3", 0, "SPDL S3");
    g_once_init_leave (&debug_once, 1);
  }

  s3->virtual_host = c->virtual_host;
  /* botocore's order: the variables, then the profile in the files */
  s3->region = region ? g_strdup (region) :
      gst_spdl_aws_profile_get (profile, "region");
  if (s3->region == NULL)
    s3->region = g_strdup ("us-east-1");
  s3->endpoint = endpoint ? g_strdup (endpoint) :
      gst_spdl_aws_profile_get (profile, "endpoint_url");
  if (s3->endpoint == NULL)
    s3->endpoint = g_strdup_printf ("https://s3.%s.amazonaws.com",
        s3->region);
  while (g_str_has_suffix (s3->endpoint, "/"))
    s3->endpoint[strlen (s3->endpoint) - 1] = '\0';
  credentials.access_key = c->access_key;
  credentials.secret_key = c->secret_key;
  credentials.session_token = c->session_token;
  credentials.profile = profile;
  s3->provider = gst_spdl_aws_credentials_provider_new (&credentials);
  g_mutex_init (&s3->lock);
  s3->credentials_source = g_strdup ("credentials not looked up yet");
  return s3;
}

void
gst_spdl_s3_free (GstSpdlS3 * s3)
{
  if (s3 == NULL)
    return;
  g_free (s3->endpoint);
  g_free (s3->region);
  gst_spdl_aws_credentials_provider_free (s3->provider);
  gst_spdl_aws_credentials_free (s3->credentials);
  g_clear_error (&s3->credentials_error);
  g_free (s3->credentials_source);
  g_free (s3->temporary_source);
  g_mutex_clear (&s3->lock);
  g_free (s3);
}

const gchar *
gst_spdl_s3_get_region (const GstSpdlS3 * s3)
{
  return s3->region;
}

void
gst_spdl_s3_set_credentials_notify (GstSpdlS3 * s3,
    GstSpdlAwsCredentialsNotify notify, gpointer user_data)
{
  gst_spdl_aws_credentials_provider_set_notify (s3->provider, notify,
      user_data);
}

gboolean
gst_spdl_s3_credentials_ready (GstSpdlS3 * s3)
{
  GError *error = NULL;
  GstSpdlAwsCredentials *credentials = NULL;
  gboolean ask;
  gchar *source;

  g_mutex_lock (&s3->lock);
  ask = s3->wanted && !s3->settled;
  g_mutex_unlock (&s3->lock);
  /* the provider refreshes temporary ones in the background and answers
   * at once: a copy of the current ones, or its last error */
  if (!ask || gst_spdl_aws_credentials_provider_try_get (s3->provider,
          &credentials, &error) == GST_SPDL_AWS_CREDENTIALS_PENDING)
    return !ask;

  g_mutex_lock (&s3->lock);
  if (credentials == NULL && s3->temporary) {
    /* lost, not absent (whatever the source says now, a 404 of a role
     * taken away included): never anonymous requests from here on */
    GError *lost = g_error_new (GST_RESOURCE_ERROR,
        GST_RESOURCE_ERROR_NOT_AUTHORIZED, "the credentials from %s expired "
        "and could not be refreshed: %s", s3->temporary_source,
        error ? error->message : "no answer");

    g_clear_error (&error);
    error = lost;
  }
  g_mutex_unlock (&s3->lock);
  if (credentials)
    source = g_strdup_printf ("credentials from %s", credentials->source);
  else if (g_error_matches (error, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_NOT_FOUND))
    /* as boto3 without credentials: anonymous requests (public buckets) */
    source = g_strdup_printf ("requests unsigned: %s", error->message);
  else
    source = g_strdup_printf ("credentials: %s", error->message);
  g_mutex_lock (&s3->lock);
  if (credentials && credentials->expiration != 0) {
    s3->temporary = TRUE;
    g_free (s3->temporary_source);
    s3->temporary_source = g_strdup (credentials->source);
  }
  s3->settled = !s3->temporary;
  gst_spdl_aws_credentials_free (s3->credentials);
  s3->credentials = credentials;
  g_clear_error (&s3->credentials_error);
  if (credentials == NULL && !g_error_matches (error, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_NOT_FOUND))
    s3->credentials_error = g_steal_pointer (&error);
  /* the same source, often: the message only when it changed */
  if (g_strcmp0 (source, s3->credentials_source) != 0) {
    /* what a private bucket's 403s will come from */
    if (credentials == NULL && s3->credentials_error == NULL)
      GST_INFO ("S3 %s", source);
    g_free (s3->credentials_source);
    s3->credentials_source = g_steal_pointer (&source);
  }
  g_mutex_unlock (&s3->lock);
  g_free (source);
  g_clear_error (&error);
  return TRUE;
}

gboolean
gst_spdl_s3_sign (GstSpdlS3 * s3, const gchar * method, const gchar * url,
    gchar *** headers, GError ** error)
{
  GstSpdlSigV4Credentials key = { 0, };
  gboolean ok = TRUE;

  *headers = NULL;
  g_mutex_lock (&s3->lock);
  if (s3->credentials_error) {
    g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_HTTP_ERROR,
        "no S3 request made: %s", s3->credentials_error->message);
    ok = FALSE;
  } else if (s3->credentials) {
    key.access_key = s3->credentials->access_key;
    key.secret_key = s3->credentials->secret_key;
    key.session_token = s3->credentials->session_token;
    key.region = s3->region;
    key.service = "s3";
    *headers = gst_spdl_sigv4_sign (&key, method, url, NULL,
        GST_SPDL_SIGV4_UNSIGNED_PAYLOAD,
        g_get_real_time () / G_USEC_PER_SEC, NULL, error);
    ok = *headers != NULL;
  }
  g_mutex_unlock (&s3->lock);
  return ok;
}

gchar *
gst_spdl_s3_describe_credentials (GstSpdlS3 * s3)
{
  gchar *source;

  g_mutex_lock (&s3->lock);
  source = g_strdup (s3->credentials_source);
  g_mutex_unlock (&s3->lock);
  return source;
}

gchar *
gst_spdl_s3_resolve (GstSpdlS3 * s3, const gchar * url,
    const gchar * query)
{
  const gchar *bucket = url + strlen ("s3://");
  const gchar *slash = strchr (bucket, '/');
  gchar *bucket_name = slash ? g_strndup (bucket, slash - bucket) :
      g_strdup (bucket);
  gchar *key = g_uri_escape_string (slash ? slash + 1 : "", "/", FALSE);
  gchar *resolved;

  g_mutex_lock (&s3->lock);
  s3->wanted = TRUE;
  g_mutex_unlock (&s3->lock);
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

/* ListObjectsV2's XML, parsed with GMarkup: the text of each element, kept
 * when it is a <Key> of <Contents>, <NextContinuationToken> or
 * <IsTruncated>. */
typedef struct
{
  GPtrArray *keys;
  guint max_keys;
  GString *text;
  gchar *next_token;
  gboolean truncated;
} ListParse;

static void
list_start (GMarkupParseContext * context, const gchar * element,
    const gchar ** names, const gchar ** values, gpointer user_data,
    GError ** error)
{
  ListParse *p = user_data;

  g_string_truncate (p->text, 0);
}

static void
list_text (GMarkupParseContext * context, const gchar * text, gsize len,
    gpointer user_data, GError ** error)
{
  ListParse *p = user_data;

  g_string_append_len (p->text, text, len);
}

static void
list_end (GMarkupParseContext * context, const gchar * element,
    gpointer user_data, GError ** error)
{
  ListParse *p = user_data;
  const gchar *parent;
  GSList *stack = (GSList *) g_markup_parse_context_get_element_stack
      (context);

  parent = stack && stack->next ? stack->next->data : "";
  if (strcmp (element, "Key") == 0 && strcmp (parent, "Contents") == 0) {
    /* bounded: what a listing holds is the server's to choose */
    if (p->text->len > GST_SPDL_S3_MAX_KEY_LENGTH)
      g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_TOO_LARGE,
          "the S3 listing holds a key of %" G_GSIZE_FORMAT " bytes (S3's "
          "are at most %d)", p->text->len, GST_SPDL_S3_MAX_KEY_LENGTH);
    else if (p->keys->len >= p->max_keys)
      g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_TOO_LARGE,
          "the S3 listing holds more than %u keys (the most a dataset may "
          "have)", p->max_keys);
    else
      g_ptr_array_add (p->keys, g_strdup (p->text->str));
  } else if (strcmp (element, "NextContinuationToken") == 0) {
    g_free (p->next_token);
    p->next_token = g_strdup (p->text->str);
  } else if (strcmp (element, "IsTruncated") == 0)
    p->truncated = strcmp (p->text->str, "true") == 0;
  g_string_truncate (p->text, 0);
}

gboolean
gst_spdl_s3_parse_list_page (const gchar * xml, gsize len, GPtrArray * keys,
    guint max_keys, gboolean * truncated, gchar ** next_token,
    GError ** error)
{
  static const GMarkupParser parser = { list_start, list_end, list_text,
    NULL, NULL
  };
  ListParse p = { keys, max_keys, g_string_new (NULL), NULL, FALSE };
  GMarkupParseContext *ctx = g_markup_parse_context_new (&parser, 0, &p,
      NULL);
  gboolean ok;

  /* an empty body's data may be NULL, which GMarkup refuses without an
   * error: the listing then failed without saying why */
  ok = g_markup_parse_context_parse (ctx, xml ? xml : "", len, error) &&
      g_markup_parse_context_end_parse (ctx, error);
  g_markup_parse_context_free (ctx);
  g_string_free (p.text, TRUE);
  *truncated = ok && p.truncated;
  *next_token = NULL;
  if (ok)
    *next_token = p.next_token;
  else
    g_free (p.next_token);
  return ok;
}
