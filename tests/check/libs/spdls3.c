/* gst-spdl: unit tests of S3 addressing, settings, error bodies, listings
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

#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>
#include <string.h>

#include "gstspdlerrors.h"
#include "gstspdlawserror.h"
#include "gstspdls3.h"
#include "gstspdlsigv4.h"
#include "spdlcheckmain.h"

static const gchar *const variables[] = {
  "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_REGION",
  "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE",
  "AWS_DEFAULT_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
  "AWS_EC2_METADATA_DISABLED", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
  "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
};

static gchar *saved[G_N_ELEMENTS (variables)];
static gchar *dir;

/* Nothing of the machine's AWS set-up: files in a folder of the test's,
 * metadata off. */
static void
setup (void)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (variables); i++) {
    saved[i] = g_strdup (g_getenv (variables[i]));
    g_unsetenv (variables[i]);
  }
  dir = g_dir_make_tmp ("spdls3-XXXXXX", NULL);
  fail_unless (dir != NULL);
  g_setenv ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", TRUE);
  g_setenv ("AWS_CONFIG_FILE", "/nonexistent/config", TRUE);
  g_setenv ("AWS_EC2_METADATA_DISABLED", "true", TRUE);
}

static void
teardown (void)
{
  guint i;
  gchar *config = g_build_filename (dir, "config", NULL);

  g_unlink (config);
  g_free (config);
  g_rmdir (dir);
  g_clear_pointer (&dir, g_free);
  for (i = 0; i < G_N_ELEMENTS (variables); i++) {
    if (saved[i])
      g_setenv (variables[i], saved[i], TRUE);
    else
      g_unsetenv (variables[i]);
    g_clear_pointer (&saved[i], g_free);
  }
}

static gchar *
resolve (const GstSpdlS3Config * config, const gchar * url,
    const gchar * query)
{
  GstSpdlS3 *s3 = gst_spdl_s3_new (config);
  gchar *resolved = gst_spdl_s3_resolve (s3, url, query);

  gst_spdl_s3_free (s3);
  return resolved;
}

GST_START_TEST (test_resolve_addressing)
{
  GstSpdlS3Config config = { 0, };
  gchar *url;

  config.endpoint = "http://127.0.0.1:9000/";
  url = resolve (&config, "s3://data/ds/c0/a b+c.jpg", NULL);
  fail_unless_equals_string (url,
      "http://127.0.0.1:9000/data/ds/c0/a%20b%2Bc.jpg");
  g_free (url);
  url = resolve (&config, "s3://data/", "list-type=2&prefix=ds%2F");
  fail_unless_equals_string (url,
      "http://127.0.0.1:9000/data/?list-type=2&prefix=ds%2F");
  g_free (url);
  config.virtual_host = TRUE;
  config.endpoint = "http://localhost:9000";
  url = resolve (&config, "s3://data/ds/x.jpg", NULL);
  fail_unless_equals_string (url, "http://data.localhost:9000/ds/x.jpg");
  g_free (url);
}

GST_END_TEST;

GST_START_TEST (test_endpoint_and_region_order)
{
  GstSpdlS3Config config = { 0, };
  gchar *config_file = g_build_filename (dir, "config", NULL);
  GstSpdlS3 *s3;
  gchar *url;

  /* nothing set: AWS's endpoint of us-east-1 */
  s3 = gst_spdl_s3_new (&config);
  fail_unless_equals_string (gst_spdl_s3_get_region (s3), "us-east-1");
  url = gst_spdl_s3_resolve (s3, "s3://b/k", NULL);
  fail_unless_equals_string (url, "https://s3.us-east-1.amazonaws.com/b/k");
  g_free (url);
  gst_spdl_s3_free (s3);

  /* the profile's, under the variables', under the config's */
  fail_unless (g_file_set_contents (config_file, "[default]\n"
          "region = ap-south-1\nendpoint_url = http://127.0.0.1:1/\n", -1,
          NULL));
  g_setenv ("AWS_CONFIG_FILE", config_file, TRUE);
  s3 = gst_spdl_s3_new (&config);
  fail_unless_equals_string (gst_spdl_s3_get_region (s3), "ap-south-1");
  url = gst_spdl_s3_resolve (s3, "s3://b/k", NULL);
  fail_unless_equals_string (url, "http://127.0.0.1:1/b/k");
  g_free (url);
  gst_spdl_s3_free (s3);

  g_setenv ("AWS_DEFAULT_REGION", "eu-north-1", TRUE);
  g_setenv ("AWS_ENDPOINT_URL", "http://127.0.0.1:2", TRUE);
  g_setenv ("AWS_REGION", "", TRUE);    /* empty: not set */
  s3 = gst_spdl_s3_new (&config);
  fail_unless_equals_string (gst_spdl_s3_get_region (s3), "eu-north-1");
  url = gst_spdl_s3_resolve (s3, "s3://b/k", NULL);
  fail_unless_equals_string (url, "http://127.0.0.1:2/b/k");
  g_free (url);
  gst_spdl_s3_free (s3);

  g_setenv ("AWS_REGION", "eu-west-3", TRUE);
  g_setenv ("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:3", TRUE);
  s3 = gst_spdl_s3_new (&config);
  fail_unless_equals_string (gst_spdl_s3_get_region (s3), "eu-west-3");
  url = gst_spdl_s3_resolve (s3, "s3://b/k", NULL);
  fail_unless_equals_string (url, "http://127.0.0.1:3/b/k");
  g_free (url);
  gst_spdl_s3_free (s3);

  config.region = "sa-east-1";
  config.endpoint = "http://127.0.0.1:4";
  s3 = gst_spdl_s3_new (&config);
  fail_unless_equals_string (gst_spdl_s3_get_region (s3), "sa-east-1");
  url = gst_spdl_s3_resolve (s3, "s3://b/k", NULL);
  fail_unless_equals_string (url, "http://127.0.0.1:4/b/k");
  g_free (url);
  gst_spdl_s3_free (s3);
  g_free (config_file);
}

GST_END_TEST;

/* the credentials looked up (on the provider's thread): ready */
static void
wait_credentials (GstSpdlS3 * s3)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (!gst_spdl_s3_credentials_ready (s3)) {
    fail_unless (g_get_monotonic_time () < deadline);
    g_usleep (1000);
  }
}

/* Signed with the credentials the chain finds, once they were looked up;
 * anonymous without any. */
GST_START_TEST (test_sign_with_the_chain)
{
  GstSpdlS3Config config = { 0, };
  GstSpdlS3 *s3;
  gchar **headers = NULL, *url, *source;
  GError *error = NULL;
  guint n;

  config.region = "eu-west-1";
  config.endpoint = "http://127.0.0.1:9000";
  s3 = gst_spdl_s3_new (&config);
  /* nothing resolved yet: no lookup due */
  fail_unless (gst_spdl_s3_credentials_ready (s3));
  source = gst_spdl_s3_describe_credentials (s3);
  fail_unless_equals_string (source, "credentials not looked up yet");
  g_free (source);
  url = gst_spdl_s3_resolve (s3, "s3://b/k", NULL);
  /* the first ask starts the lookup, on the provider's thread */
  fail_if (gst_spdl_s3_credentials_ready (s3));
  wait_credentials (s3);
  fail_unless (gst_spdl_s3_sign (s3, "GET", url, &headers, &error));
  fail_unless (headers == NULL);        /* anonymous */
  source = gst_spdl_s3_describe_credentials (s3);
  fail_unless (g_str_has_prefix (source, "requests unsigned: No AWS "
          "credentials found. Looked at: "), "%s", source);
  g_free (source);
  gst_spdl_s3_free (s3);

  g_setenv ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "secret-VALUE", TRUE);
  s3 = gst_spdl_s3_new (&config);
  g_free (gst_spdl_s3_resolve (s3, "s3://b/k", NULL));
  wait_credentials (s3);
  fail_unless (gst_spdl_s3_sign (s3, "GET", url, &headers, &error));
  fail_unless (headers != NULL);
  for (n = 0; headers[n]; n++)
    fail_if (strstr (headers[n], "secret-VALUE") != NULL);
  fail_unless_equals_int (n, 3);        /* date, payload, authorization */
  fail_unless (g_str_has_prefix (headers[1],
          "x-amz-content-sha256: UNSIGNED-PAYLOAD"), "%s", headers[1]);
  fail_unless (strstr (headers[2], "Credential=AKIDEXAMPLE/") != NULL);
  fail_unless (strstr (headers[2], "/eu-west-1/s3/aws4_request") != NULL);
  gst_spdl_sigv4_headers_free (headers);
  source = gst_spdl_s3_describe_credentials (s3);
  fail_unless (strstr (source, "AWS_ACCESS_KEY_ID") != NULL, "%s", source);
  g_free (source);
  gst_spdl_s3_free (s3);

  /* a named profile that does not exist: every request fails, saying so */
  config.profile = "prod";
  s3 = gst_spdl_s3_new (&config);
  g_free (gst_spdl_s3_resolve (s3, "s3://b/k", NULL));
  wait_credentials (s3);
  fail_if (gst_spdl_s3_sign (s3, "GET", url, &headers, &error));
  fail_unless (error != NULL && strstr (error->message, "prod") != NULL);
  g_clear_error (&error);
  gst_spdl_s3_free (s3);
  g_free (url);
}

GST_END_TEST;

GST_START_TEST (test_parse_error_body)
{
  static const gchar body[] =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied"
      "</Code><Message>Access &amp; &lt;more&gt; denied</Message>"
      "<RequestId>4442587FB7D0A2F9</RequestId></Error>";
  gchar *code, *message, *big, *as;
  gsize n;

  fail_unless (gst_spdl_aws_parse_error (body, strlen (body), &code,
          &message));
  fail_unless_equals_string (code, "AccessDenied");
  fail_unless_equals_string (message, "Access & <more> denied");
  g_free (code);
  g_free (message);
  /* cut before the message's end: the code alone */
  n = strstr (body, "denied</Message>") - body;
  fail_unless (gst_spdl_aws_parse_error (body, n, &code, &message));
  fail_unless_equals_string (code, "AccessDenied");
  fail_unless (message == NULL);
  g_free (code);
  /* not S3's: an HTML page, nothing, an empty code */
  fail_if (gst_spdl_aws_parse_error ("<html>503</html>", 16, &code,
          &message));
  fail_unless (code == NULL && message == NULL);
  fail_if (gst_spdl_aws_parse_error (NULL, 0, &code, &message));
  fail_if (gst_spdl_aws_parse_error ("<Code></Code>", 13, &code, &message));
  /* a hostile code: bounded, valid UTF-8 */
  as = g_strnfill (5000, 'A');
  big = g_strdup_printf ("<Code>%s\xff\xfe</Code>", as);
  g_free (as);
  fail_unless (gst_spdl_aws_parse_error (big, strlen (big), &code, &message));
  fail_unless (strlen (code) <= 1024);
  fail_unless (g_utf8_validate (code, -1, NULL));
  g_free (code);
  g_free (message);
  g_free (big);
}

GST_END_TEST;

GST_START_TEST (test_parse_list_page)
{
  static const gchar page[] =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult>"
      "<Name>b</Name><IsTruncated>true</IsTruncated>"
      "<Contents><Key>d/&amp;1.jpg</Key><Size>3</Size></Contents>"
      "<Contents><Key>d/2.jpg</Key></Contents>"
      "<CommonPrefixes><Key>not-a-key</Key></CommonPrefixes>"
      "<Contents><Key>d/3.jpg</Key></Contents>"
      "<NextContinuationToken>tok/+=</NextContinuationToken>"
      "</ListBucketResult>";
  static const gchar last[] = "<L><IsTruncated>false</IsTruncated></L>";
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  GError *error = NULL;
  gboolean truncated = FALSE;
  gchar *token = NULL, *long_key, *big;

  fail_unless (gst_spdl_s3_parse_list_page (page, strlen (page), keys,
          GST_SPDL_S3_MAX_LIST_KEYS, &truncated, &token, &error));
  fail_unless (truncated);
  fail_unless_equals_string (token, "tok/+=");
  fail_unless_equals_int (keys->len, 3);
  fail_unless_equals_string (g_ptr_array_index (keys, 0), "d/&1.jpg");
  fail_unless_equals_string (g_ptr_array_index (keys, 2), "d/3.jpg");
  g_free (token);
  /* the last page: no token */
  fail_unless (gst_spdl_s3_parse_list_page (last, strlen (last), keys, 3,
          &truncated, &token, &error));
  fail_if (truncated);
  fail_unless (token == NULL);

  /* no more keys than the bound (a small one here): a clear error */
  g_ptr_array_set_size (keys, 0);
  fail_if (gst_spdl_s3_parse_list_page (page, strlen (page), keys, 2,
          &truncated, &token, &error));
  fail_unless (g_error_matches (error, GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_TOO_LARGE));
  fail_unless (strstr (error->message, "more than 2 keys") != NULL);
  fail_if (truncated);
  fail_unless (token == NULL);
  g_clear_error (&error);

  /* a key longer than S3's longest */
  long_key = g_strnfill (GST_SPDL_S3_MAX_KEY_LENGTH + 1, 'k');
  big = g_strdup_printf ("<L><Contents><Key>%s</Key></Contents></L>",
      long_key);
  g_ptr_array_set_size (keys, 0);
  fail_if (gst_spdl_s3_parse_list_page (big, strlen (big), keys,
          GST_SPDL_S3_MAX_LIST_KEYS, &truncated, &token, &error));
  fail_unless (g_error_matches (error, GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_TOO_LARGE));
  g_clear_error (&error);
  /* S3's longest is fine */
  long_key[GST_SPDL_S3_MAX_KEY_LENGTH] = '\0';
  g_free (big);
  big = g_strdup_printf ("<L><Contents><Key>%s</Key></Contents></L>",
      long_key);
  fail_unless (gst_spdl_s3_parse_list_page (big, strlen (big), keys,
          GST_SPDL_S3_MAX_LIST_KEYS, &truncated, &token, &error));
  fail_unless_equals_int (keys->len, 1);

  /* not XML: cut inside an element */
  fail_if (gst_spdl_s3_parse_list_page (page, 60, keys,
          GST_SPDL_S3_MAX_LIST_KEYS, &truncated, &token, &error));
  fail_unless (error && error->domain == G_MARKUP_ERROR);
  fail_unless (token == NULL);
  g_clear_error (&error);
  g_free (big);
  g_free (long_key);
  g_ptr_array_unref (keys);
}

GST_END_TEST;

static Suite *
spdls3_suite (void)
{
  Suite *s = suite_create ("spdls3");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_resolve_addressing);
  tcase_add_test (tc, test_endpoint_and_region_order);
  tcase_add_test (tc, test_sign_with_the_chain);
  tcase_add_test (tc, test_parse_error_body);
  tcase_add_test (tc, test_parse_list_page);
  return s;
}

SPDL_CHECK_MAIN (spdls3);
