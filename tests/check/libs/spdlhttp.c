/* gst-spdl: unit tests of the HTTP client: its reading of response
 * headers, S3 credentials looked up without holding up other transfers
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
#include <gio/gio.h>
#include <string.h>

#include "gstspdlhttp.h"
#include "gstspdlhttp-private.h"
#include "gstspdlredact.h"
#include "spdlcheckmain.h"

GST_START_TEST (test_header_value)
{
  static const gchar line[] = "etag:  \"abc\" \r\n";
  gchar *value;

  /* as libcurl hands it over: CRLF kept, any case, trimmed */
  value = gst_spdl_http_header_value (line, strlen (line), "ETag");
  fail_unless_equals_string (value, "\"abc\"");
  g_free (value);
  fail_unless (gst_spdl_http_header_value (line, strlen (line),
          "Last-Modified") == NULL);
  /* a name alone, or a longer name it starts */
  fail_unless (gst_spdl_http_header_value ("ETag", 4, "ETag") == NULL);
  fail_unless (gst_spdl_http_header_value ("ETags: x", 8, "ETag") == NULL);
  value = gst_spdl_http_header_value ("ETag:", 5, "ETag");
  fail_unless_equals_string (value, "");
  g_free (value);
}

GST_END_TEST;

/* Content-Range decides whether a resumed download is the same object */
GST_START_TEST (test_content_range)
{
  static const struct
  {
    const gchar *value;
    gboolean ok;
    guint64 first;
    gint64 total;
  } cases[] = {
    {"bytes 0-9/10", TRUE, 0, 10},
    {"bytes 512-611/10240", TRUE, 512, 10240},
    {"bytes 5-9/*", TRUE, 5, -1},
    {"bytes 9223372036854775806-9223372036854775806/9223372036854775807",
        TRUE, G_GUINT64_CONSTANT (9223372036854775806), G_MAXINT64},
    /* a length that fits no gint64 once passed for "*" */
    {"bytes 0-1/15532559262904483836", FALSE},
    {"bytes 0-1/99999999999999999999", FALSE},
    {"bytes 0-9/9", FALSE},
    {"bytes 5-4/9", FALSE},
    {"bytes -0-9/10", FALSE},
    {"bytes +0-9/10", FALSE},
    {"bytes  0-9/10", FALSE},
    {"bytes 0-9/ 10", FALSE},
    {"bytes 0-9/10x", FALSE},
    {"bytes 0-9", FALSE},
    {"bytes */10", FALSE},
    {"items 0-9/10", FALSE},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    /* not "first": gstcheck's macros name their own variables so */
    guint64 start = 0;
    gint64 length = 0;
    gboolean ok = gst_spdl_http_parse_content_range (cases[i].value, &start,
        &length);

    fail_unless (ok == cases[i].ok, "%s", cases[i].value);
    if (ok) {
      fail_unless_equals_uint64 (start, cases[i].first);
      fail_unless_equals_int64 (length, cases[i].total);
    }
  }
  fail_if (gst_spdl_http_parse_content_range (NULL, NULL, NULL));
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* S3 credentials looked up on the provider's thread                         */

typedef struct
{
  GSocket *socket;
  GThread *thread;
  gint stop;
} Hello;

/* answers every request on @socket with "hello" until stopped */
static gpointer
hello_thread (gpointer data)
{
  Hello *h = data;
  static const gchar response[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
      "Connection: close\r\n\r\nhello";

  while (!g_atomic_int_get (&h->stop)) {
    GSocket *conn;
    GString *request;
    gchar buf[1024];
    gssize n;

    if (!g_socket_condition_timed_wait (h->socket, G_IO_IN, 20 * 1000, NULL,
            NULL) || (conn = g_socket_accept (h->socket, NULL, NULL)) == NULL)
      continue;
    request = g_string_new (NULL);
    while (strstr (request->str, "\r\n\r\n") == NULL &&
        (n = g_socket_receive (conn, buf, sizeof (buf), NULL, NULL)) > 0)
      g_string_append_len (request, buf, n);
    g_socket_send (conn, response, strlen (response), NULL, NULL);
    g_socket_close (conn, NULL);
    g_object_unref (conn);
    g_string_free (request, TRUE);
  }
  return NULL;
}

/* a socket on 127.0.0.1 listening (and never accepting, unless it is
 * given to a service): its http:// URL */
static GSocket *
listen_loopback (gchar ** url)
{
  GInetAddress *loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  GSocketAddress *addr = g_inet_socket_address_new (loopback, 0), *bound;
  GSocket *socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
      G_SOCKET_PROTOCOL_TCP, NULL);

  fail_unless (socket != NULL);
  fail_unless (g_socket_bind (socket, addr, TRUE, NULL));
  fail_unless (g_socket_listen (socket, NULL));
  bound = g_socket_get_local_address (socket, NULL);
  *url = g_strdup_printf ("http://127.0.0.1:%u",
      g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)));
  g_object_unref (bound);
  g_object_unref (addr);
  g_object_unref (loopback);
  return socket;
}

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean done;
  GstBuffer *buffer;
  GError *error;
  gint64 at;
} Result;

static void
got (GstBuffer * buffer, GError * error, gpointer user_data)
{
  Result *r = user_data;

  g_mutex_lock (&r->lock);
  r->done = TRUE;
  r->buffer = buffer;
  r->error = error;
  r->at = g_get_monotonic_time ();
  g_cond_broadcast (&r->cond);
  g_mutex_unlock (&r->lock);
}

static const gchar *const aws_vars[] = {
  "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
  "AWS_SECURITY_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
  "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_EC2_METADATA_DISABLED",
  "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_METADATA_SERVICE_TIMEOUT",
  "AWS_METADATA_SERVICE_NUM_ATTEMPTS", "AWS_ENDPOINT_URL",
  "AWS_ENDPOINT_URL_S3",
};

/* While the instance metadata server keeps an S3 request's credentials
 * waiting, other transfers of the client go on; the S3 request starts
 * once the lookup ended (here anonymous: the server never answered). */
GST_START_TEST (test_s3_credentials_hold_up_no_other_transfer)
{
  gchar *saved[G_N_ELEMENTS (aws_vars)];
  Hello hello = { NULL, NULL, 0 };
  GSocket *silent;
  gchar *hello_url, *silent_url, *plain;
  GstSpdlHttpConfig config = { 0, };
  GstSpdlHttp *http;
  Result s3 = { 0, };
  GBytes *bytes;
  GError *error = NULL;
  long status = 0;
  gint64 start, took;
  GstMapInfo map;
  guint i;

  hello.socket = listen_loopback (&hello_url);
  hello.thread = g_thread_new ("hello", hello_thread, &hello);
  silent = listen_loopback (&silent_url);
  for (i = 0; i < G_N_ELEMENTS (aws_vars); i++) {
    saved[i] = g_strdup (g_getenv (aws_vars[i]));
    g_unsetenv (aws_vars[i]);
  }
  g_setenv ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", TRUE);
  g_setenv ("AWS_CONFIG_FILE", "/nonexistent/config", TRUE);
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", silent_url, TRUE);
  g_setenv ("AWS_METADATA_SERVICE_TIMEOUT", "2", TRUE);

  config.max_requests = 4;
  config.timeout_ms = 10000;
  config.max_bytes_in_flight = 1 << 20;
  config.s3.endpoint = hello_url;
  config.s3.region = "us-east-1";
  http = gst_spdl_http_new (&config, &error);
  fail_unless (http != NULL, "%s", error ? error->message : "");
  g_mutex_init (&s3.lock);
  g_cond_init (&s3.cond);
  start = g_get_monotonic_time ();
  gst_spdl_http_get (http, "s3://bucket/key", 1024, got, &s3);
  plain = g_strconcat (hello_url, "/plain", NULL);
  bytes = gst_spdl_http_get_sync (http, plain, 1024, &status, &error);
  took = g_get_monotonic_time () - start;
  fail_unless (bytes != NULL, "%s", error ? error->message : "");
  fail_unless_equals_int (status, 200);
  fail_unless_equals_int (g_bytes_get_size (bytes), 5);
  fail_unless (memcmp (g_bytes_get_data (bytes, NULL), "hello", 5) == 0);
  g_bytes_unref (bytes);
  /* not after the metadata server's 2 s */
  fail_unless (took < G_USEC_PER_SEC, "%" G_GINT64_FORMAT " us", took);
  g_mutex_lock (&s3.lock);
  fail_if (s3.done);
  while (!s3.done)
    g_cond_wait (&s3.cond, &s3.lock);
  g_mutex_unlock (&s3.lock);
  fail_unless (s3.error == NULL, "%s", s3.error ? s3.error->message : "");
  fail_unless (gst_buffer_map (s3.buffer, &map, GST_MAP_READ));
  fail_unless (map.size == 5 && memcmp (map.data, "hello", 5) == 0);
  gst_buffer_unmap (s3.buffer, &map);
  gst_buffer_unref (s3.buffer);
  took = s3.at - start;
  fail_unless (took >= 19 * G_USEC_PER_SEC / 10, "%" G_GINT64_FORMAT " us",
      took);
  gst_spdl_http_free (http);

  /* freed while the lookup waits: at once, no callback */
  s3.done = FALSE;
  http = gst_spdl_http_new (&config, NULL);
  gst_spdl_http_get (http, "s3://bucket/key", 1024, got, &s3);
  g_usleep (G_USEC_PER_SEC / 5);
  start = g_get_monotonic_time ();
  gst_spdl_http_free (http);
  took = g_get_monotonic_time () - start;
  fail_unless (took < G_USEC_PER_SEC, "%" G_GINT64_FORMAT " us", took);
  fail_if (s3.done);

  for (i = 0; i < G_N_ELEMENTS (aws_vars); i++) {
    if (saved[i])
      g_setenv (aws_vars[i], saved[i], TRUE);
    else
      g_unsetenv (aws_vars[i]);
    g_free (saved[i]);
  }
  g_mutex_clear (&s3.lock);
  g_cond_clear (&s3.cond);
  g_free (plain);
  g_atomic_int_set (&hello.stop, 1);
  g_thread_join (hello.thread);
  g_socket_close (hello.socket, NULL);
  g_object_unref (hello.socket);
  g_socket_close (silent, NULL);
  g_object_unref (silent);
  g_free (hello_url);
  g_free (silent_url);
}

GST_END_TEST;

/* what messages and logs show of a URL: its path and its harmless
 * parameters, never a signature, a token or a password */
GST_START_TEST (test_url_redact)
{
  static const struct
  {
    const gchar *text, *shown;
  } cases[] = {
    {"https://b.s3.amazonaws.com/train-000000.tar?X-Amz-Algorithm=AWS4-HMAC-"
          "SHA256&X-Amz-Credential=AKIA%2F20261206&X-Amz-Signature=5ec2e7",
        "https://b.s3.amazonaws.com/train-000000.tar?X-Amz-Algorithm=AWS4-HMAC-"
          "SHA256&X-Amz-Credential=***&X-Amz-Signature=***"},
    /* any case; up to the fragment */
    {"http://h/a.tar?x-amz-security-token=T0k&sig=S1g#frag",
        "http://h/a.tar?x-amz-security-token=***&sig=***#frag"},
    /* a SAS token; a parameter whose name only starts like one kept */
    {"https://acct.blob.core.windows.net/c/a.tar?sv=2022&sigma=1&Sig=abc%3D",
        "https://acct.blob.core.windows.net/c/a.tar?sv=2022&sigma=1&Sig=***"},
    {"http://user:pa55@127.0.0.1:80/s/a.tar", "http://user:***@127.0.0.1:80/s/a.tar"},
    /* in a message, quoted */
    {"Could not read shard \"http://h/a.tar?token=XyZ\": HTTP status 404",
        "Could not read shard \"http://h/a.tar?token=***\": HTTP status 404"},
    {"/data/shards/train-{0..3}.tar", "/data/shards/train-{0..3}.tar"},
    {"s3://bucket/a&b.tar", "s3://bucket/a&b.tar"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *shown = gst_spdl_url_redact (cases[i].text);
    fail_unless_equals_string (shown, cases[i].shown);
    g_free (shown);
  }
  fail_unless (gst_spdl_url_redact (NULL) == NULL);
}

GST_END_TEST;

static Suite *
spdlhttp_suite (void)
{
  Suite *s = suite_create ("spdlhttp");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_header_value);
  tcase_add_test (tc, test_content_range);
  tcase_add_test (tc, test_s3_credentials_hold_up_no_other_transfer);
  tcase_add_test (tc, test_url_redact);
  return s;
}

SPDL_CHECK_MAIN (spdlhttp);
