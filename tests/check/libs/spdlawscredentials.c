/* gst-spdl: unit tests of the AWS credential chain and profile settings
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "spdltestutil.h"
#include "gstspdlawscredentials.h"
#include "gstspdls3.h"
#include "gstspdlsigv4.h"
#include "spdlcheckmain.h"

/* ------------------------------------------------------------------------ */
/* The environment: every variable the chain reads is unset for a test and
 * put back after it (the tests share one process under valgrind)           */

static const gchar *const aws_vars[] = {
  "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
  "AWS_SECURITY_TOKEN", "AWS_CREDENTIAL_EXPIRATION", "AWS_PROFILE",
  "AWS_DEFAULT_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_EC2_METADATA_DISABLED",
  "AWS_EC2_METADATA_SERVICE_ENDPOINT",
  "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "AWS_METADATA_SERVICE_TIMEOUT",
  "AWS_METADATA_SERVICE_NUM_ATTEMPTS", "AWS_EC2_METADATA_V1_DISABLED",
  "AWS_IMDS_USE_IPV6", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
  "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
  "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_REGION",
  "AWS_DEFAULT_REGION", "AWS_CA_BUNDLE",
};

static gchar *saved_vars[G_N_ELEMENTS (aws_vars)];
static gchar *tmpdir;
static gchar *creds_path;
static gchar *config_path;

static void
setup (void)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (aws_vars); i++) {
    saved_vars[i] = g_strdup (g_getenv (aws_vars[i]));
    g_unsetenv (aws_vars[i]);
  }
  tmpdir = spdl_test_make_tmpdir ();
  creds_path = g_build_filename (tmpdir, "credentials", NULL);
  config_path = g_build_filename (tmpdir, "config", NULL);
  /* never the user's files, never the real metadata service */
  g_setenv ("AWS_SHARED_CREDENTIALS_FILE", creds_path, TRUE);
  g_setenv ("AWS_CONFIG_FILE", config_path, TRUE);
  g_setenv ("AWS_EC2_METADATA_DISABLED", "true", TRUE);
}

static void
teardown (void)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (aws_vars); i++) {
    if (saved_vars[i])
      g_setenv (aws_vars[i], saved_vars[i], TRUE);
    else
      g_unsetenv (aws_vars[i]);
    g_clear_pointer (&saved_vars[i], g_free);
  }
  spdl_test_remove_tree (tmpdir);
  g_clear_pointer (&tmpdir, g_free);
  g_clear_pointer (&creds_path, g_free);
  g_clear_pointer (&config_path, g_free);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

static GstSpdlAwsCredentials *
get_credentials (const GstSpdlAwsCredentialsConfig * config, GError ** error)
{
  GstSpdlAwsCredentialsProvider *p =
      gst_spdl_aws_credentials_provider_new (config);
  GstSpdlAwsCredentials *c = gst_spdl_aws_credentials_provider_get (p, error);

  gst_spdl_aws_credentials_provider_free (p);
  return c;
}

/* credentials from the chain, checked and freed */
static void
expect_credentials (const GstSpdlAwsCredentialsConfig * config,
    const gchar * key, const gchar * secret, const gchar * token,
    const gchar * source)
{
  GError *error = NULL;
  GstSpdlAwsCredentials *c = get_credentials (config, &error);

  fail_unless (c != NULL, "no credentials: %s", error ? error->message : "");
  fail_unless_equals_string (c->access_key, key);
  fail_unless_equals_string (c->secret_key, secret);
  fail_unless_equals_string (c->session_token, token);
  fail_unless_equals_string (c->source, source);
  gst_spdl_aws_credentials_free (c);
}

/* an error of @code from the chain: its message, to be freed */
static gchar *
expect_error (const GstSpdlAwsCredentialsConfig * config, gint code)
{
  GError *error = NULL;
  GstSpdlAwsCredentials *c = get_credentials (config, &error);
  gchar *message;

  fail_unless (c == NULL, "credentials from %s", c ? c->source : "");
  fail_unless (error != NULL);
  fail_unless (g_error_matches (error, GST_RESOURCE_ERROR, code),
      "unexpected error %d: %s", error->code, error->message);
  message = g_strdup (error->message);
  g_error_free (error);
  return message;
}

static void
fail_unless_contains (const gchar * haystack, const gchar * needle)
{
  fail_unless (strstr (haystack, needle) != NULL, "\"%s\" not in \"%s\"",
      needle, haystack);
}

static gchar *
profile_source (const gchar * profile, const gchar * path)
{
  return g_strdup_printf ("profile \"%s\" in %s", profile, path);
}

/* ------------------------------------------------------------------------ */
/* A fake metadata service on 127.0.0.1: one connection at a time, answers
 * from a handler, counts requests                                          */

typedef struct _Server Server;
typedef void (*Handler) (Server * s, const gchar * method, const gchar * path,
    const gchar * headers, const gchar * request, guint * status,
    GString * body);

struct _Server
{
  gint fd;
  guint port;
  gchar *url;                   /* http://127.0.0.1:PORT */
  GThread *thread;              /* NULL: never accepts (hangs) */
  gint stop;
  Handler handler;

  GMutex lock;                  /* the handler runs under it */
  guint requests;
  gint expires_in;              /* seconds from now, for Expiration */
  guint status;                 /* container: this status instead of 200 */
  const gchar *raw;             /* container: this body instead */
  gsize raw_len;
  guint token_status;           /* IMDS: the token PUT's status */
  gboolean token_missing;       /* IMDS: a GET without the token */
  gboolean role_gone;           /* IMDS: 404 for the role (taken away) */
  gchar *authorization;         /* container, STS: the header it got */
  GPtrArray *forms;             /* STS: the request bodies it got */
  const gchar *error_code;      /* STS: answers this error (with status) */
  guint delay_ms;               /* answers this late (a slow server) */
  const gchar *delay_path;      /* ... to this path only; NULL: all */
};

static gchar *
header_value (const gchar * headers, const gchar * name)
{
  gchar **lines = g_strsplit (headers, "\r\n", -1);
  gchar *value = NULL;
  gsize len = strlen (name);
  guint i;

  for (i = 0; lines[i] && !value; i++) {
    if (g_ascii_strncasecmp (lines[i], name, len) == 0
        && lines[i][len] == ':')
      value = g_strstrip (g_strdup (lines[i] + len + 1));
  }
  g_strfreev (lines);
  return value;
}

static void
send_all (gint fd, const gchar * data, gsize len)
{
  while (len > 0) {
    gssize n = send (fd, data, len, MSG_NOSIGNAL);

    if (n <= 0)
      return;
    data += n;
    len -= n;
  }
}

static void
server_answer (Server * s, gint conn)
{
  gchar buf[16384], *end, *sp, *path, *response, *length;
  gsize len = 0, request_len = 0;
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  guint status = 404;
  GString *body;

  buf[0] = '\0';
  while ((end = strstr (buf, "\r\n\r\n")) == NULL) {
    struct pollfd pfd = { conn, POLLIN, 0 };
    gssize n;

    if (len == sizeof (buf) - 1 || g_get_monotonic_time () > deadline
        || g_atomic_int_get (&s->stop))
      return;
    if (poll (&pfd, 1, 50) <= 0)
      continue;
    if ((n = read (conn, buf + len, sizeof (buf) - 1 - len)) <= 0)
      return;
    len += n;
    buf[len] = '\0';
  }
  /* the request's body, after the headers */
  length = header_value (buf, "Content-Length");
  if (length)
    request_len = MIN (g_ascii_strtoull (length, NULL, 10),
        sizeof (buf) - 1 - (end + 4 - buf));
  g_free (length);
  while ((gsize) (buf + len - (end + 4)) < request_len) {
    struct pollfd pfd = { conn, POLLIN, 0 };
    gssize n;

    if (g_get_monotonic_time () > deadline || g_atomic_int_get (&s->stop))
      return;
    if (poll (&pfd, 1, 50) <= 0)
      continue;
    if ((n = read (conn, buf + len, sizeof (buf) - 1 - len)) <= 0)
      return;
    len += n;
    buf[len] = '\0';
  }
  end[4 + request_len] = '\0';
  end[2] = '\0';
  /* "METHOD PATH HTTP/1.1\r\nheaders\r\n" */
  if ((sp = strchr (buf, ' ')) == NULL)
    return;
  *sp = '\0';
  path = sp + 1;
  if ((sp = strchr (path, ' ')) == NULL)
    return;
  *sp = '\0';
  body = g_string_new (NULL);
  g_mutex_lock (&s->lock);
  s->requests++;
  s->handler (s, buf, path, sp + 1, end + 4, &status, body);
  if (s->delay_path == NULL || strcmp (path, s->delay_path) == 0)
    deadline = g_get_monotonic_time () + s->delay_ms * 1000;
  else
    deadline = 0;
  g_mutex_unlock (&s->lock);
  while (g_get_monotonic_time () < deadline && !g_atomic_int_get (&s->stop))
    g_usleep (10 * 1000);
  response = g_strdup_printf ("HTTP/1.1 %u Fake\r\nContent-Length: %"
      G_GSIZE_FORMAT "\r\nConnection: close\r\n\r\n", status, body->len);
  send_all (conn, response, strlen (response));
  send_all (conn, body->str, body->len);
  g_free (response);
  g_string_free (body, TRUE);
}

static gpointer
server_thread (gpointer data)
{
  Server *s = data;

  while (!g_atomic_int_get (&s->stop)) {
    struct pollfd pfd = { s->fd, POLLIN, 0 };
    gint conn;

    if (poll (&pfd, 1, 20) <= 0)
      continue;
    if ((conn = accept (s->fd, NULL, NULL)) < 0)
      continue;
    server_answer (s, conn);
    close (conn);
  }
  return NULL;
}

/* @handler NULL: listens, never accepts: requests hang */
static Server *
server_start (Handler handler)
{
  Server *s = g_new0 (Server, 1);
  struct sockaddr_in addr;
  socklen_t addr_len = sizeof (addr);

  s->fd = socket (AF_INET, SOCK_STREAM, 0);
  fail_unless (s->fd >= 0);
  memset (&addr, 0, sizeof (addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (bind (s->fd, (struct sockaddr *) &addr, sizeof (addr)) == 0);
  fail_unless (listen (s->fd, 16) == 0);
  fail_unless (getsockname (s->fd, (struct sockaddr *) &addr,
          &addr_len) == 0);
  s->port = ntohs (addr.sin_port);
  s->url = g_strdup_printf ("http://127.0.0.1:%u", s->port);
  s->expires_in = 3600;
  s->token_status = 200;
  s->handler = handler;
  s->forms = g_ptr_array_new_with_free_func (g_free);
  g_mutex_init (&s->lock);
  if (handler)
    s->thread = g_thread_new ("fake-aws", server_thread, s);
  return s;
}

static guint
server_requests (Server * s)
{
  guint n;

  g_mutex_lock (&s->lock);
  n = s->requests;
  g_mutex_unlock (&s->lock);
  return n;
}

static void
server_stop (Server * s)
{
  g_atomic_int_set (&s->stop, 1);
  if (s->thread)
    g_thread_join (s->thread);
  close (s->fd);
  g_mutex_clear (&s->lock);
  g_free (s->authorization);
  if (s->forms)
    g_ptr_array_unref (s->forms);
  g_free (s->url);
  g_free (s);
}

/* {"AccessKeyId": "PREFIX<n>", ...}: a new key for each request */
static void
credentials_json (Server * s, GString * body, const gchar * prefix)
{
  GDateTime *now = g_date_time_new_now_utc ();
  GDateTime *at = g_date_time_add_seconds (now, s->expires_in);
  gchar *expiration = g_date_time_format (at, "%Y-%m-%dT%H:%M:%SZ");

  g_string_append_printf (body, "{\n  \"Code\" : \"Success\",\n"
      "  \"LastUpdated\" : \"2026-01-01T00:00:00Z\",\n"
      "  \"Type\" : \"AWS-HMAC\",\n  \"AccessKeyId\" : \"%s%u\",\n"
      "  \"SecretAccessKey\" : \"%s-secret\",\n"
      "  \"Token\" : \"%s-token\",\n  \"Expiration\" : \"%s\"\n}\n",
      prefix, s->requests, prefix, prefix, expiration);
  g_free (expiration);
  g_date_time_unref (at);
  g_date_time_unref (now);
}

static void
container_handler (Server * s, const gchar * method, const gchar * path,
    const gchar * headers, const gchar * request, guint * status,
    GString * body)
{
  if (strcmp (method, "GET") != 0 || strcmp (path, "/creds") != 0)
    return;
  g_free (s->authorization);
  s->authorization = header_value (headers, "Authorization");
  *status = s->status ? s->status : 200;
  if (s->raw)
    g_string_append_len (body, s->raw, s->raw_len);
  else
    credentials_json (s, body, "ASIACONTAINER");
}

#define IMDS_TOKEN "imds-session-token"

static void
imds_handler (Server * s, const gchar * method, const gchar * path,
    const gchar * headers, const gchar * request, guint * status,
    GString * body)
{
  gchar *ttl = header_value (headers, "X-aws-ec2-metadata-token-ttl-seconds");
  gchar *token = header_value (headers, "X-aws-ec2-metadata-token");

  if (strcmp (method, "PUT") == 0 && strcmp (path, "/latest/api/token") == 0) {
    *status = g_strcmp0 (ttl, "21600") == 0 ? s->token_status : 400;
    if (*status == 200)
      g_string_append (body, IMDS_TOKEN);
  } else if (strcmp (method, "GET") == 0) {
    if (g_strcmp0 (token, IMDS_TOKEN) != 0)
      s->token_missing = TRUE;
    if (s->token_status == 200 && g_strcmp0 (token, IMDS_TOKEN) != 0) {
      *status = 401;
    } else if (s->role_gone) {
      *status = 404;
    } else if (strcmp (path, "/latest/meta-data/iam/security-credentials/")
        == 0) {
      *status = 200;
      g_string_append (body, "spdl-role\n");
    } else if (strcmp (path,
            "/latest/meta-data/iam/security-credentials/spdl-role") == 0) {
      *status = 200;
      credentials_json (s, body, "ASIAIMDS");
    }
  }
  g_free (ttl);
  g_free (token);
}

/* ------------------------------------------------------------------------ */
/* Explicit settings and the environment                                     */

GST_START_TEST (test_copy_free)
{
  GstSpdlAwsCredentials c = { (gchar *) "AKIA", (gchar *) "secret", NULL,
    42, (gchar *) "somewhere"
  };
  GstSpdlAwsCredentials *copy = gst_spdl_aws_credentials_copy (&c);

  fail_unless_equals_string (copy->access_key, "AKIA");
  fail_unless_equals_string (copy->secret_key, "secret");
  fail_unless (copy->session_token == NULL);
  fail_unless_equals_int64 (copy->expiration, 42);
  fail_unless_equals_string (copy->source, "somewhere");
  gst_spdl_aws_credentials_free (copy);
  gst_spdl_aws_credentials_free (NULL);
  fail_unless (gst_spdl_aws_credentials_copy (NULL) == NULL);
}

GST_END_TEST;

GST_START_TEST (test_config_first)
{
  GstSpdlAwsCredentialsConfig config = { "AKIAPROP", "prop-secret", NULL,
    NULL
  };
  gchar *message;

  g_setenv ("AWS_ACCESS_KEY_ID", "AKIAENV", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "env-secret", TRUE);
  expect_credentials (&config, "AKIAPROP", "prop-secret", NULL,
      "the spdlsrc properties");
  config.session_token = "prop-token";
  expect_credentials (&config, "AKIAPROP", "prop-secret", "prop-token",
      "the spdlsrc properties");
  /* empty strings are "not set" */
  config.access_key = config.secret_key = config.session_token = "";
  expect_credentials (&config, "AKIAENV", "env-secret", NULL,
      "environment (AWS_ACCESS_KEY_ID)");
  /* half a key pair is a mistake, not "none" */
  config.access_key = "AKIAPROP";
  message = expect_error (&config, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "without a secret key");
  g_free (message);
  config.access_key = "AKIA PROP";
  config.secret_key = "prop-secret";
  message = expect_error (&config, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "access key");
  g_free (message);
}

GST_END_TEST;

GST_START_TEST (test_environment)
{
  gchar *message;

  spdl_test_write_file (creds_path,
      "[default]\naws_access_key_id = AKIAFILE\n"
      "aws_secret_access_key = file-secret\n", -1);
  g_setenv ("AWS_ACCESS_KEY_ID", "AKIAENV", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "env-secret", TRUE);
  expect_credentials (NULL, "AKIAENV", "env-secret", NULL,
      "environment (AWS_ACCESS_KEY_ID)");
  g_setenv ("AWS_SESSION_TOKEN", "env-token", TRUE);
  expect_credentials (NULL, "AKIAENV", "env-secret", "env-token",
      "environment (AWS_ACCESS_KEY_ID)");
  /* botocore reads the old name first */
  g_setenv ("AWS_SECURITY_TOKEN", "old-token", TRUE);
  expect_credentials (NULL, "AKIAENV", "env-secret", "old-token",
      "environment (AWS_ACCESS_KEY_ID)");
  g_unsetenv ("AWS_SECURITY_TOKEN");

  /* the key without its secret */
  g_setenv ("AWS_SECRET_ACCESS_KEY", "", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "AWS_SECRET_ACCESS_KEY");
  fail_if (strstr (message, "AKIAENV") != NULL);
  g_free (message);

  /* no key: the file (and not the environment's token) */
  g_unsetenv ("AWS_ACCESS_KEY_ID");
  g_setenv ("AWS_SECRET_ACCESS_KEY", "env-secret", TRUE);
  message = profile_source ("default", creds_path);
  expect_credentials (NULL, "AKIAFILE", "file-secret", NULL, message);
  g_free (message);
}

GST_END_TEST;

GST_START_TEST (test_environment_expiration)
{
  GError *error = NULL;
  GstSpdlAwsCredentials *c;
  gchar *message;

  g_setenv ("AWS_ACCESS_KEY_ID", "AKIAENV", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "env-secret", TRUE);
  g_setenv ("AWS_CREDENTIAL_EXPIRATION", "2100-01-02T03:04:05Z", TRUE);
  c = get_credentials (NULL, &error);
  fail_unless (c != NULL);
  fail_unless_equals_int64 (c->expiration, G_GINT64_CONSTANT (4102542245));
  gst_spdl_aws_credentials_free (c);
  g_setenv ("AWS_CREDENTIAL_EXPIRATION", "next tuesday", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "AWS_CREDENTIAL_EXPIRATION");
  g_free (message);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Profiles in the shared files                                              */

static const gchar credentials_file[] =
    "# the default profile\n"
    "[default]\n"
    "aws_access_key_id=AKIADEFAULT\n"
    "aws_secret_access_key   =   default-secret   \n"
    "\n"
    "; another comment style\n"
    "   # an indented comment\n"
    "[dev]\r\n"
    "AWS_Access_Key_Id : AKIADEV\r\n"
    "aws_secret_access_key = dev/se+cret=\r\n"
    "aws_session_token = dev-token\r\n"
    "\n"
    "[only-region]\n"
    "region = ap-south-1\n"
    "\n"
    "[process]\n"
    "credential_process = /usr/bin/false\n"
    "\n"
    "[half]\n"
    "aws_access_key_id = AKIAHALF\n";

GST_START_TEST (test_credentials_file)
{
  GstSpdlAwsCredentialsConfig config = { NULL, NULL, NULL, "dev" };
  gchar *source, *message;

  spdl_test_write_file (creds_path, credentials_file, -1);
  source = profile_source ("default", creds_path);
  expect_credentials (NULL, "AKIADEFAULT", "default-secret", NULL, source);
  g_free (source);

  /* keys are case-insensitive, ':' delimits too, CRLF line ends */
  source = profile_source ("dev", creds_path);
  g_setenv ("AWS_PROFILE", "dev", TRUE);
  expect_credentials (NULL, "AKIADEV", "dev/se+cret=", "dev-token", source);
  /* botocore reads AWS_DEFAULT_PROFILE before AWS_PROFILE */
  g_setenv ("AWS_PROFILE", "nope", TRUE);
  g_setenv ("AWS_DEFAULT_PROFILE", "dev", TRUE);
  expect_credentials (NULL, "AKIADEV", "dev/se+cret=", "dev-token", source);
  /* the config's profile before both, and before the environment's keys */
  g_setenv ("AWS_DEFAULT_PROFILE", "default", TRUE);
  g_setenv ("AWS_ACCESS_KEY_ID", "AKIAENV", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "env-secret", TRUE);
  expect_credentials (&config, "AKIADEV", "dev/se+cret=", "dev-token",
      source);
  g_free (source);
  /* AWS_PROFILE does not hide the environment's keys */
  expect_credentials (NULL, "AKIAENV", "env-secret", NULL,
      "environment (AWS_ACCESS_KEY_ID)");
  g_unsetenv ("AWS_ACCESS_KEY_ID");
  g_unsetenv ("AWS_SECRET_ACCESS_KEY");

  /* a profile that gets them by credential_process: an error, not the
   * container's or the instance's identity in its place */
  g_setenv ("AWS_DEFAULT_PROFILE", "process", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "by credential_process, which is not "
      "supported");
  g_free (message);

  /* a key without its secret */
  g_setenv ("AWS_DEFAULT_PROFILE", "half", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "aws_secret_access_key");
  fail_unless_contains (message, "\"half\"");
  g_free (message);
}

GST_END_TEST;

GST_START_TEST (test_config_file)
{
  gchar *source;

  spdl_test_write_file (config_path,
      "[default]\n"
      "region = eu-west-1\n"
      "aws_access_key_id = AKIACFGDEFAULT\n"
      "aws_secret_access_key = cfg-default-secret\n"
      "[dev]\n"
      "# not a profile in the config file\n"
      "aws_access_key_id = AKIAWRONG\n"
      "aws_secret_access_key = wrong\n"
      "[profile dev]\n"
      "aws_access_key_id = AKIACFGDEV\n"
      "aws_secret_access_key = cfg-dev-secret\n"
      "aws_security_token = cfg-dev-token\n"
      "[profile \"my team\"]\n"
      "aws_access_key_id = AKIATEAM\n"
      "aws_secret_access_key = team-secret\n"
      "[profile only-region]\n"
      "aws_access_key_id = AKIACFGREGION\n"
      "aws_secret_access_key = cfg-region-secret\n", -1);
  source = profile_source ("default", config_path);
  expect_credentials (NULL, "AKIACFGDEFAULT", "cfg-default-secret", NULL,
      source);
  g_free (source);
  g_setenv ("AWS_PROFILE", "dev", TRUE);
  source = profile_source ("dev", config_path);
  expect_credentials (NULL, "AKIACFGDEV", "cfg-dev-secret", "cfg-dev-token",
      source);
  g_free (source);
  g_setenv ("AWS_PROFILE", "my team", TRUE);
  source = profile_source ("my team", config_path);
  expect_credentials (NULL, "AKIATEAM", "team-secret", NULL, source);
  g_free (source);

  /* the credentials file first */
  spdl_test_write_file (creds_path, credentials_file, -1);
  g_setenv ("AWS_PROFILE", "dev", TRUE);
  source = profile_source ("dev", creds_path);
  expect_credentials (NULL, "AKIADEV", "dev/se+cret=", "dev-token", source);
  g_free (source);
  /* ... unless its section has no keys */
  g_setenv ("AWS_PROFILE", "only-region", TRUE);
  source = profile_source ("only-region", config_path);
  expect_credentials (NULL, "AKIACFGREGION", "cfg-region-secret", NULL,
      source);
  g_free (source);
}

GST_END_TEST;

GST_START_TEST (test_missing_profile)
{
  GstSpdlAwsCredentialsConfig config = { NULL, NULL, NULL, "ghost" };
  gchar *message;

  /* nothing anywhere: every place named */
  message = expect_error (NULL, GST_RESOURCE_ERROR_NOT_FOUND);
  fail_unless_contains (message, "the spdlsrc properties (not set)");
  fail_unless_contains (message, "AWS_ACCESS_KEY_ID not set");
  fail_unless_contains (message, creds_path);
  fail_unless_contains (message, config_path);
  fail_unless_contains (message, "no such file");
  fail_unless_contains (message, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
  fail_unless_contains (message, "AWS_EC2_METADATA_DISABLED");
  g_free (message);

  /* a profile named and not there: botocore's ProfileNotFound */
  spdl_test_write_file (creds_path, credentials_file, -1);
  message = expect_error (&config, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "\"ghost\"");
  fail_unless_contains (message, "the spdlsrc properties");
  fail_unless_contains (message, creds_path);
  fail_unless_contains (message, config_path);
  g_free (message);
  g_setenv ("AWS_PROFILE", "ghost", TRUE);
  /* even with keys in the environment, as botocore */
  g_setenv ("AWS_ACCESS_KEY_ID", "AKIAENV", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "env-secret", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "\"ghost\" (from AWS_PROFILE)");
  g_free (message);
  /* "default" named explicitly must exist too */
  g_setenv ("AWS_PROFILE", "default", TRUE);
  g_setenv ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "\"default\"");
  g_free (message);
  /* only named ones: the default profile may be missing */
  g_unsetenv ("AWS_PROFILE");
  expect_credentials (NULL, "AKIAENV", "env-secret", NULL,
      "environment (AWS_ACCESS_KEY_ID)");
}

GST_END_TEST;

GST_START_TEST (test_profile_settings)
{
  gchar *value;

  spdl_test_write_file (config_path,
      "[default]\n"
      "region = eu-west-1\n"
      "output = json # kept, as configparser keeps it\n"
      "\n"
      "[profile dev]\n"
      "region=us-east-2\n"
      "services = local-s3\n"
      "endpoint_url = http://global.example:8080\n"
      "s3 =\n"
      "  addressing_style = path\n"
      "\n"
      "[profile top]\n"
      "region = us-west-1\n"
      "endpoint_url = http://top.example:9000\n"
      "\n"
      "[profile nowhere]\n"
      "services = missing\n"
      "endpoint_url = http://fallback.example\n"
      "\n"
      "[profile ignoring]\n"
      "endpoint_url = http://top.example:9000\n"
      "ignore_configured_endpoint_urls = true\n"
      "\n"
      "[services local-s3]\n"
      "s3 =\n"
      "  # a comment in the block\n"
      "  endpoint_url = http://127.0.0.1:9000/\n"
      "\n"
      "  signature_version=s3v4\n"
      "dynamodb =\n"
      "  endpoint_url = http://127.0.0.1:8000\n", -1);
  spdl_test_write_file (creds_path,
      "[top]\nregion = ap-south-1\n", -1);

#define EXPECT_SETTING(profile, key, expected) G_STMT_START {            \
  value = gst_spdl_aws_profile_get (profile, key);                        \
  fail_unless_equals_string (value, expected);                            \
  g_free (value);                                                         \
} G_STMT_END

  EXPECT_SETTING (NULL, "region", "eu-west-1");
  EXPECT_SETTING ("default", "region", "eu-west-1");
  EXPECT_SETTING (NULL, "output", "json # kept, as configparser keeps it");
  EXPECT_SETTING (NULL, "endpoint_url", NULL);
  EXPECT_SETTING ("dev", "region", "us-east-2");
  /* the services section's s3 block before the profile's own */
  EXPECT_SETTING ("dev", "endpoint_url", "http://127.0.0.1:9000/");
  /* a block is no plain value */
  EXPECT_SETTING ("dev", "s3", NULL);
  EXPECT_SETTING ("top", "endpoint_url", "http://top.example:9000");
  /* the credentials file's section overrides */
  EXPECT_SETTING ("top", "region", "ap-south-1");
  EXPECT_SETTING ("nowhere", "endpoint_url", "http://fallback.example");
  EXPECT_SETTING ("ignoring", "endpoint_url", NULL);
  EXPECT_SETTING ("ghost", "region", NULL);
  EXPECT_SETTING ("dev", "no_such_key", NULL);

  g_setenv ("AWS_PROFILE", "dev", TRUE);
  EXPECT_SETTING (NULL, "region", "us-east-2");
  EXPECT_SETTING (NULL, "endpoint_url", "http://127.0.0.1:9000/");
  g_setenv ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "TRUE", TRUE);
  EXPECT_SETTING (NULL, "endpoint_url", NULL);
  EXPECT_SETTING ("top", "endpoint_url", NULL);
  /* the environment's "false" beats the profile's "true" */
  g_setenv ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "false", TRUE);
  EXPECT_SETTING ("ignoring", "endpoint_url", "http://top.example:9000");

#undef EXPECT_SETTING
}

GST_END_TEST;

GST_START_TEST (test_odd_files)
{
  static const gchar *const texts[] = {
    "",
    "\n\n\n",
    "no section = here\n[default]\n",
    "[default\naws_access_key_id = AKIA\n",
    "[]\n[default]\njust words\n=\n: \n",
    "[default]\n  s3 =\n    endpoint_url\n    = x\n",
    "[profile 'unbalanced]\n[profile a b c]\n[profile\\]\n",
    "[default]\naws_access_key_id = AKIA\naws_secret_access_key =\n",
    "\xef\xbb\xbf[default]\nregion = bom\n",
    "[default]\nregion = a\n  b\n",
    "[default]\naws_access_key_id = AKIA\n  CONTINUED\n"
        "aws_secret_access_key = s\n",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (texts); i++) {
    GError *error = NULL;
    GstSpdlAwsCredentials *c;
    gchar *value;

    spdl_test_write_file (creds_path, texts[i], -1);
    spdl_test_write_file (config_path, texts[i], -1);
    c = get_credentials (NULL, &error);
    fail_unless (c == NULL, "credentials from text %u", i);
    g_clear_error (&error);
    value = gst_spdl_aws_profile_get (NULL, "region");
    if (i == 8) {
      fail_unless_equals_string (value, "bom");
    } else if (i == 9) {
      fail_unless_equals_string (value, "a\nb");
    }
    g_free (value);
  }
  /* a file too large to be a configuration */
  {
    gchar *big = g_strnfill (2 * 1024 * 1024, '#');
    gchar *message;

    spdl_test_write_file (creds_path, big, -1);
    spdl_test_write_file (config_path, "", -1);
    g_free (big);
    message = expect_error (NULL, GST_RESOURCE_ERROR_NOT_FOUND);
    fail_unless_contains (message, "larger than");
    g_free (message);
  }
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Container credentials                                                     */

GST_START_TEST (test_container)
{
  Server *s = server_start (container_handler);
  gchar *uri = g_strdup_printf ("%s/creds", s->url);
  gchar *token_path = g_build_filename (tmpdir, "token", NULL);
  GError *error = NULL;
  GstSpdlAwsCredentials *c;
  gchar *message;

  g_setenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri, TRUE);
  c = get_credentials (NULL, &error);
  fail_unless (c != NULL, "%s", error ? error->message : "");
  fail_unless_equals_string (c->access_key, "ASIACONTAINER1");
  fail_unless_equals_string (c->secret_key, "ASIACONTAINER-secret");
  fail_unless_equals_string (c->session_token, "ASIACONTAINER-token");
  fail_unless_equals_string (c->source,
      "container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI)");
  fail_unless (c->expiration > g_get_real_time () / G_USEC_PER_SEC + 3500);
  fail_unless (s->authorization == NULL);
  gst_spdl_aws_credentials_free (c);

  /* the token, from the variable, then from the file before it */
  g_setenv ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Basic env-auth", TRUE);
  c = get_credentials (NULL, NULL);
  fail_unless (c != NULL);
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_string (s->authorization, "Basic env-auth");
  spdl_test_write_file (token_path, "file-auth\n", -1);
  g_setenv ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token_path, TRUE);
  c = get_credentials (NULL, NULL);
  fail_unless (c != NULL);
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_string (s->authorization, "file-auth");
  /* no header injection */
  spdl_test_write_file (token_path, "file-auth\r\nX-Evil: 1", -1);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "not a legal header value");
  g_free (message);
  g_setenv ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "/nonexistent", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "/nonexistent");
  g_free (message);
  g_unsetenv ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  g_unsetenv ("AWS_CONTAINER_AUTHORIZATION_TOKEN");

  /* the container service before instance metadata, after the files */
  spdl_test_write_file (creds_path, credentials_file, -1);
  message = profile_source ("default", creds_path);
  expect_credentials (NULL, "AKIADEFAULT", "default-secret", NULL, message);
  g_free (message);
  spdl_test_write_file (creds_path, "", -1);

  /* refused: an error, not "none" (botocore raises) */
  s->status = 403;
  message = expect_error (NULL, GST_RESOURCE_ERROR_READ);
  fail_unless_contains (message, "403");
  fail_unless_contains (message, uri);
  g_free (message);
  s->status = 0;
  fail_unless_equals_int (server_requests (s), 4);

  /* plain http only to loopback and the agents' addresses */
  g_setenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://192.0.2.1/creds",
      TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "is not allowed");
  g_free (message);
  g_setenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "file:///etc/passwd", TRUE);
  g_free (expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS));
  g_setenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "not a url", TRUE);
  g_free (expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS));
  /* the relative URI goes to 169.254.170.2 only: tricks are refused */
  g_setenv ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "@192.0.2.1/creds",
      TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  g_free (message);
  fail_unless_equals_int (server_requests (s), 4);

  g_free (token_path);
  g_free (uri);
  server_stop (s);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Instance metadata                                                         */

GST_START_TEST (test_instance_metadata)
{
  Server *s = server_start (imds_handler);
  GError *error = NULL;
  GstSpdlAwsCredentials *c;
  gchar *message;

  g_unsetenv ("AWS_EC2_METADATA_DISABLED");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", s->url, TRUE);
  /* valgrind is slow */
  g_setenv ("AWS_METADATA_SERVICE_TIMEOUT", "10", TRUE);
  c = get_credentials (NULL, &error);
  fail_unless (c != NULL, "%s", error ? error->message : "");
  fail_unless_equals_string (c->access_key, "ASIAIMDS3");
  fail_unless_equals_string (c->secret_key, "ASIAIMDS-secret");
  fail_unless_equals_string (c->session_token, "ASIAIMDS-token");
  fail_unless_equals_string (c->source, "instance metadata (IMDSv2)");
  fail_unless (c->expiration > 0);
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_int (server_requests (s), 3);
  fail_if (s->token_missing);

  /* the token refused: IMDSv1 */
  s->token_status = 403;
  expect_credentials (NULL, "ASIAIMDS6", "ASIAIMDS-secret", "ASIAIMDS-token",
      "instance metadata (IMDSv1)");
  fail_unless (s->token_missing);
  /* ... unless that is disabled */
  g_setenv ("AWS_EC2_METADATA_V1_DISABLED", "true", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_NOT_FOUND);
  fail_unless_contains (message, "IMDSv1 is disabled");
  g_free (message);
  g_unsetenv ("AWS_EC2_METADATA_V1_DISABLED");

  /* a bad request for a token: none */
  s->token_status = 400;
  message = expect_error (NULL, GST_RESOURCE_ERROR_NOT_FOUND);
  fail_unless_contains (message, "400");
  fail_unless_contains (message, s->url);
  g_free (message);
  s->token_status = 200;

  /* the environment's keys before it */
  g_setenv ("AWS_ACCESS_KEY_ID", "AKIAENV", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "env-secret", TRUE);
  expect_credentials (NULL, "AKIAENV", "env-secret", NULL,
      "environment (AWS_ACCESS_KEY_ID)");
  g_unsetenv ("AWS_ACCESS_KEY_ID");
  g_unsetenv ("AWS_SECRET_ACCESS_KEY");

  /* the endpoint from the profile */
  g_unsetenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  message = g_strdup_printf ("[default]\nec2_metadata_service_endpoint = "
      "%s/\n", s->url);
  spdl_test_write_file (config_path, message, -1);
  g_free (message);
  expect_credentials (NULL, "ASIAIMDS11", "ASIAIMDS-secret",
      "ASIAIMDS-token", "instance metadata (IMDSv2)");

  /* not a URL */
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "gopher://x", TRUE);
  g_free (expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS));
  g_unsetenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "ipv5", TRUE);
  g_free (expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS));

  /* disabled: not asked */
  g_unsetenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", s->url, TRUE);
  g_setenv ("AWS_EC2_METADATA_DISABLED", "TRUE", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_NOT_FOUND);
  fail_unless_contains (message, "AWS_EC2_METADATA_DISABLED is true");
  g_free (message);
  fail_unless_equals_int (server_requests (s), 11);

  server_stop (s);
}

GST_END_TEST;

GST_START_TEST (test_instance_metadata_hangs)
{
  Server *s = server_start (NULL);
  gint64 start;
  gchar *message;

  g_unsetenv ("AWS_EC2_METADATA_DISABLED");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", s->url, TRUE);
  start = g_get_monotonic_time ();
  message = expect_error (NULL, GST_RESOURCE_ERROR_NOT_FOUND);
  /* 1 s for the token, and no second wait for IMDSv1 */
  fail_unless (g_get_monotonic_time () - start < 2 * G_USEC_PER_SEC,
      "%" G_GINT64_FORMAT " us", g_get_monotonic_time () - start);
  fail_unless_contains (message, "instance metadata at");
  fail_unless_contains (message, "imed out");
  g_free (message);
  server_stop (s);

  /* nobody listening: at once */
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1", TRUE);
  start = g_get_monotonic_time ();
  g_free (expect_error (NULL, GST_RESOURCE_ERROR_NOT_FOUND));
  fail_unless (g_get_monotonic_time () - start < G_USEC_PER_SEC);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Expiry and refresh                                                        */

GST_START_TEST (test_refresh)
{
  Server *s = server_start (container_handler);
  gchar *uri = g_strdup_printf ("%s/creds", s->url);
  GstSpdlAwsCredentialsProvider *p;
  GstSpdlAwsCredentials *c;
  GError *error = NULL;

  g_setenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri, TRUE);

  /* far from expiring: fetched once */
  p = gst_spdl_aws_credentials_provider_new (NULL);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIACONTAINER1");
  gst_spdl_aws_credentials_free (c);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIACONTAINER1");
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_int (server_requests (s), 1);
  gst_spdl_aws_credentials_provider_free (p);

  /* 2 minutes left: within the refresh margin from the start; a source
   * that hands out credentials this close to their end is asked again
   * after 30 s, not at every call */
  s->expires_in = 120;
  p = gst_spdl_aws_credentials_provider_new (NULL);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIACONTAINER2");
  gst_spdl_aws_credentials_free (c);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIACONTAINER2");
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_int (server_requests (s), 2);
  gst_spdl_aws_credentials_provider_free (p);

  /* expired already, or within the last minute: an error naming where
   * they came from and when they expire(d), not asked again at once */
  s->expires_in = 30;
  p = gst_spdl_aws_credentials_provider_new (NULL);
  c = gst_spdl_aws_credentials_provider_get (p, &error);
  fail_unless (c == NULL);
  fail_unless (g_error_matches (error, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_READ));
  fail_unless_contains (error->message, "The credentials from container "
      "credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI) expire at ");
  fail_if (strstr (error->message, "ASIACONTAINER") != NULL);
  g_clear_error (&error);
  c = gst_spdl_aws_credentials_provider_get (p, &error);
  fail_unless (c == NULL && error != NULL);
  g_clear_error (&error);
  fail_unless_equals_int (server_requests (s), 3);
  gst_spdl_aws_credentials_provider_free (p);
  s->expires_in = -60;
  p = gst_spdl_aws_credentials_provider_new (NULL);
  c = gst_spdl_aws_credentials_provider_get (p, &error);
  fail_unless (c == NULL);
  fail_unless_contains (error->message, "expired at ");
  g_clear_error (&error);
  gst_spdl_aws_credentials_provider_free (p);

  /* refused at the first lookup: an error */
  s->status = 404;
  p = gst_spdl_aws_credentials_provider_new (NULL);
  c = gst_spdl_aws_credentials_provider_get (p, &error);
  fail_unless (c == NULL);
  fail_unless (g_error_matches (error, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_READ));
  fail_unless_contains (error->message, "404");
  g_clear_error (&error);
  gst_spdl_aws_credentials_provider_free (p);

  g_free (uri);
  server_stop (s);
}

GST_END_TEST;

GST_START_TEST (test_refresh_instance_metadata)
{
  Server *s = server_start (imds_handler);
  GstSpdlAwsCredentialsProvider *p;
  GstSpdlAwsCredentials *c;

  g_unsetenv ("AWS_EC2_METADATA_DISABLED");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", s->url, TRUE);
  g_setenv ("AWS_METADATA_SERVICE_TIMEOUT", "10", TRUE);
  s->expires_in = 120;
  p = gst_spdl_aws_credentials_provider_new (NULL);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIAIMDS3");
  gst_spdl_aws_credentials_free (c);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIAIMDS3");
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_int (server_requests (s), 3);
  gst_spdl_aws_credentials_provider_free (p);

  s->expires_in = 6 * 3600;
  p = gst_spdl_aws_credentials_provider_new (NULL);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  gst_spdl_aws_credentials_free (c);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIAIMDS6");
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_int (server_requests (s), 6);
  gst_spdl_aws_credentials_provider_free (p);
  server_stop (s);
}

GST_END_TEST;

static void
count_lookups (gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

static void
wait_for_lookups (gint * lookups, gint n)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  while (g_atomic_int_get (lookups) < n) {
    fail_unless (g_get_monotonic_time () < deadline, "%d lookups, not %d",
        g_atomic_int_get (lookups), n);
    g_usleep (10 * 1000);
  }
}

/* until @margin seconds before @c expire(d): they enter that window */
static void
wait_for_window (const GstSpdlAwsCredentials * c, gint64 margin)
{
  while (g_get_real_time () / G_USEC_PER_SEC < c->expiration - margin)
    g_usleep (10 * 1000);
}

#define IMDS_CREDENTIALS_PATH \
  "/latest/meta-data/iam/security-credentials/spdl-role"

/* In the refresh margin: a slow metadata server does not hold anybody up;
 * the current credentials are returned at once meanwhile, one refresh
 * runs, its credentials replace them. */
GST_START_TEST (test_refresh_in_background)
{
  Server *s = server_start (imds_handler);
  GstSpdlAwsCredentialsProvider *p;
  GstSpdlAwsCredentials *c, *old;
  gint lookups = 0;
  gint64 start, took;
  guint calls = 0;

  g_unsetenv ("AWS_EC2_METADATA_DISABLED");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", s->url, TRUE);
  g_setenv ("AWS_METADATA_SERVICE_TIMEOUT", "10", TRUE);
  /* two seconds outside the margin */
  s->expires_in = GST_SPDL_AWS_CREDENTIALS_REFRESH_S + 2;
  p = gst_spdl_aws_credentials_provider_new (NULL);
  gst_spdl_aws_credentials_provider_set_notify (p, count_lookups, &lookups);
  old = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (old->access_key, "ASIAIMDS3");
  fail_unless_equals_int (g_atomic_int_get (&lookups), 1);
  wait_for_window (old, GST_SPDL_AWS_CREDENTIALS_REFRESH_S);

  /* the credentials' request answered after 2 s */
  s->delay_path = IMDS_CREDENTIALS_PATH;
  s->delay_ms = 2000;
  s->expires_in = 3600;
  start = g_get_monotonic_time ();
  while (g_atomic_int_get (&lookups) < 2) {
    gint64 call = g_get_monotonic_time ();

    c = gst_spdl_aws_credentials_provider_get (p, NULL);
    took = g_get_monotonic_time () - call;
    /* at once, not after the server's 2 s */
    fail_unless (took < G_USEC_PER_SEC / 2, "%" G_GINT64_FORMAT " us", took);
    if (g_atomic_int_get (&lookups) < 2) {
      fail_unless_equals_string (c->access_key, "ASIAIMDS3");
      fail_unless_equals_int64 (c->expiration, old->expiration);
    }
    gst_spdl_aws_credentials_free (c);
    calls++;
    fail_unless (g_get_monotonic_time () - start < 20 * G_USEC_PER_SEC);
    g_usleep (50 * 1000);
  }
  took = g_get_monotonic_time () - start;
  fail_unless (took >= 19 * G_USEC_PER_SEC / 10, "%" G_GINT64_FORMAT " us",
      took);
  fail_unless (calls >= 10, "%u calls", calls);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIAIMDS6");
  fail_unless (c->expiration > old->expiration + 2000);
  gst_spdl_aws_credentials_free (c);
  /* one refresh for all those calls */
  fail_unless_equals_int (server_requests (s), 6);
  fail_unless_equals_int (g_atomic_int_get (&lookups), 2);
  gst_spdl_aws_credentials_free (old);
  gst_spdl_aws_credentials_provider_free (p);
  server_stop (s);
}

GST_END_TEST;

/* In the refresh margin, a failing refresh keeps the current credentials
 * (until they expire) and is not tried again for 30 s. */
GST_START_TEST (test_refresh_fails_in_background)
{
  Server *s = server_start (container_handler);
  gchar *uri = g_strdup_printf ("%s/creds", s->url);
  GstSpdlAwsCredentialsProvider *p;
  GstSpdlAwsCredentials *c, *old;
  GError *error = NULL;
  gint lookups = 0;
  gint64 start;

  g_setenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri, TRUE);
  s->expires_in = GST_SPDL_AWS_CREDENTIALS_REFRESH_S + 2;
  p = gst_spdl_aws_credentials_provider_new (NULL);
  gst_spdl_aws_credentials_provider_set_notify (p, count_lookups, &lookups);
  old = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (old->access_key, "ASIACONTAINER1");
  wait_for_window (old, GST_SPDL_AWS_CREDENTIALS_REFRESH_S);

  /* three tries a second apart, all refused */
  s->status = 500;
  start = g_get_monotonic_time ();
  c = gst_spdl_aws_credentials_provider_get (p, &error);
  fail_unless (g_get_monotonic_time () - start < G_USEC_PER_SEC / 2);
  fail_unless (c != NULL && error == NULL);
  fail_unless_equals_string (c->access_key, "ASIACONTAINER1");
  gst_spdl_aws_credentials_free (c);
  wait_for_lookups (&lookups, 2);
  fail_unless (g_get_monotonic_time () - start >= 19 * G_USEC_PER_SEC / 10);
  fail_unless_equals_int (server_requests (s), 4);

  /* the old ones, and no new try */
  c = gst_spdl_aws_credentials_provider_get (p, &error);
  fail_unless (c != NULL && error == NULL);
  fail_unless_equals_string (c->access_key, "ASIACONTAINER1");
  fail_unless_equals_int64 (c->expiration, old->expiration);
  gst_spdl_aws_credentials_free (c);
  g_usleep (G_USEC_PER_SEC / 5);
  fail_unless_equals_int (g_atomic_int_get (&lookups), 2);
  fail_unless_equals_int (server_requests (s), 4);
  gst_spdl_aws_credentials_free (old);
  gst_spdl_aws_credentials_provider_free (p);
  g_free (uri);
  server_stop (s);
}

GST_END_TEST;

/* No credentials yet, or expired ones: callers wait for the lookup;
 * try_get() does not, it says PENDING. */
GST_START_TEST (test_refresh_waits_when_expired)
{
  Server *s = server_start (imds_handler);
  GstSpdlAwsCredentialsProvider *p;
  GstSpdlAwsCredentials *c = NULL;
  GError *error = NULL;
  gint lookups = 0;
  gint64 start, took;

  g_unsetenv ("AWS_EC2_METADATA_DISABLED");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", s->url, TRUE);
  g_setenv ("AWS_METADATA_SERVICE_TIMEOUT", "10", TRUE);
  s->delay_path = IMDS_CREDENTIALS_PATH;
  s->delay_ms = 1000;
  /* valid for 3 s: past the margin of the last minute */
  s->expires_in = GST_SPDL_AWS_CREDENTIALS_EXPIRY_S + 3;
  p = gst_spdl_aws_credentials_provider_new (NULL);
  gst_spdl_aws_credentials_provider_set_notify (p, count_lookups, &lookups);

  /* none yet */
  start = g_get_monotonic_time ();
  fail_unless_equals_int (gst_spdl_aws_credentials_provider_try_get (p, &c,
          &error), GST_SPDL_AWS_CREDENTIALS_PENDING);
  fail_unless (c == NULL && error == NULL);
  fail_unless (g_get_monotonic_time () - start < G_USEC_PER_SEC / 2);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless (g_get_monotonic_time () - start >= 9 * G_USEC_PER_SEC / 10);
  fail_unless_equals_string (c->access_key, "ASIAIMDS3");
  fail_unless_equals_int (g_atomic_int_get (&lookups), 1);

  /* expired (the last minute): waits for the slow server */
  wait_for_window (c, GST_SPDL_AWS_CREDENTIALS_EXPIRY_S);
  gst_spdl_aws_credentials_free (c);
  c = NULL;
  s->delay_ms = 2000;
  s->expires_in = 3600;
  start = g_get_monotonic_time ();
  fail_unless_equals_int (gst_spdl_aws_credentials_provider_try_get (p, &c,
          &error), GST_SPDL_AWS_CREDENTIALS_PENDING);
  fail_unless_equals_int (gst_spdl_aws_credentials_provider_try_get (p, &c,
          &error), GST_SPDL_AWS_CREDENTIALS_PENDING);
  fail_unless (c == NULL && error == NULL);
  took = g_get_monotonic_time () - start;
  fail_unless (took < G_USEC_PER_SEC / 2, "%" G_GINT64_FORMAT " us", took);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  took = g_get_monotonic_time () - start;
  fail_unless (took >= 19 * G_USEC_PER_SEC / 10, "%" G_GINT64_FORMAT " us",
      took);
  fail_unless_equals_string (c->access_key, "ASIAIMDS6");
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_int (server_requests (s), 6);
  fail_unless_equals_int (g_atomic_int_get (&lookups), 2);
  gst_spdl_aws_credentials_provider_free (p);
  server_stop (s);
}

GST_END_TEST;

/* S3 with temporary credentials from instance metadata that expire and
 * cannot be refreshed (the role taken away: the service says 404, which
 * before any credentials means "none here"): requests fail naming the
 * source, never go out anonymous. */
GST_START_TEST (test_s3_lost_credentials_are_no_anonymous)
{
  Server *s = server_start (imds_handler);
  GstSpdlS3Config config = { 0, };
  GstSpdlS3 *s3;
  GstSpdlAwsCredentials *c;
  GError *error = NULL;
  gchar **headers = NULL, *url, *source, *joined;
  gint64 deadline;

  g_unsetenv ("AWS_EC2_METADATA_DISABLED");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", s->url, TRUE);
  g_setenv ("AWS_METADATA_SERVICE_TIMEOUT", "10", TRUE);
  /* valid for 2 s past the margin of the last minute */
  s->expires_in = GST_SPDL_AWS_CREDENTIALS_EXPIRY_S + 2;
  config.region = "eu-west-1";
  config.endpoint = "http://127.0.0.1:9";
  s3 = gst_spdl_s3_new (&config);
  url = gst_spdl_s3_resolve (s3, "s3://b/k", NULL);
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (!gst_spdl_s3_credentials_ready (s3)) {
    fail_unless (g_get_monotonic_time () < deadline);
    g_usleep (1000);
  }
  fail_unless (gst_spdl_s3_sign (s3, "GET", url, &headers, &error));
  fail_unless (headers != NULL);
  joined = g_strjoinv ("\n", headers);
  fail_unless_contains (joined, "Credential=ASIAIMDS");
  g_free (joined);
  gst_spdl_sigv4_headers_free (headers);

  /* the role goes; the credentials expire */
  g_mutex_lock (&s->lock);
  s->role_gone = TRUE;
  g_mutex_unlock (&s->lock);
  c = g_new0 (GstSpdlAwsCredentials, 1);
  c->expiration = g_get_real_time () / G_USEC_PER_SEC +
      GST_SPDL_AWS_CREDENTIALS_EXPIRY_S + 2;
  wait_for_window (c, GST_SPDL_AWS_CREDENTIALS_EXPIRY_S);
  g_free (c);
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (!gst_spdl_s3_credentials_ready (s3)) {
    fail_unless (g_get_monotonic_time () < deadline);
    g_usleep (1000);
  }
  headers = NULL;
  fail_if (gst_spdl_s3_sign (s3, "GET", url, &headers, &error));
  fail_unless (headers == NULL);
  fail_unless (error != NULL);
  fail_unless_contains (error->message, "the credentials from instance "
      "metadata (IMDSv2) expired and could not be refreshed: ");
  fail_unless_contains (error->message, "404");
  g_clear_error (&error);
  source = gst_spdl_s3_describe_credentials (s3);
  fail_if (strstr (source, "anonymous") != NULL, "%s", source);
  g_free (source);
  /* and so it stays, asked again or not */
  fail_unless (gst_spdl_s3_credentials_ready (s3));
  fail_if (gst_spdl_s3_sign (s3, "GET", url, &headers, &error));
  fail_unless (headers == NULL && error != NULL);
  g_clear_error (&error);

  g_free (url);
  gst_spdl_s3_free (s3);
  server_stop (s);
}

GST_END_TEST;

/* free() ends a lookup that waits for a server that never answers, at
 * once rather than after the metadata timeout */
GST_START_TEST (test_free_cancels_lookup)
{
  Server *s = server_start (NULL);
  GstSpdlAwsCredentialsProvider *p;
  GstSpdlAwsCredentials *c = NULL;
  gint64 start, took;
  gchar *uri;

  g_unsetenv ("AWS_EC2_METADATA_DISABLED");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", s->url, TRUE);
  g_setenv ("AWS_METADATA_SERVICE_TIMEOUT", "30", TRUE);
  p = gst_spdl_aws_credentials_provider_new (NULL);
  fail_unless_equals_int (gst_spdl_aws_credentials_provider_try_get (p, &c,
          NULL), GST_SPDL_AWS_CREDENTIALS_PENDING);
  g_usleep (G_USEC_PER_SEC / 5);
  start = g_get_monotonic_time ();
  gst_spdl_aws_credentials_provider_free (p);
  took = g_get_monotonic_time () - start;
  fail_unless (took < G_USEC_PER_SEC, "%" G_GINT64_FORMAT " us", took);

  server_stop (s);

  /* the container's tries a second apart, too */
  s = server_start (container_handler);
  s->status = 500;
  uri = g_strdup_printf ("%s/creds", s->url);
  g_setenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri, TRUE);
  p = gst_spdl_aws_credentials_provider_new (NULL);
  fail_unless_equals_int (gst_spdl_aws_credentials_provider_try_get (p, &c,
          NULL), GST_SPDL_AWS_CREDENTIALS_PENDING);
  while (server_requests (s) < 1)
    g_usleep (10 * 1000);
  start = g_get_monotonic_time ();
  gst_spdl_aws_credentials_provider_free (p);
  took = g_get_monotonic_time () - start;
  fail_unless (took < G_USEC_PER_SEC / 2, "%" G_GINT64_FORMAT " us", took);
  fail_unless_equals_int (server_requests (s), 1);
  g_free (uri);
  server_stop (s);
}

GST_END_TEST;

static gpointer
get_in_thread (gpointer data)
{
  return gst_spdl_aws_credentials_provider_get (data, NULL);
}

GST_START_TEST (test_threads)
{
  Server *s = server_start (container_handler);
  gchar *uri = g_strdup_printf ("%s/creds", s->url);
  GstSpdlAwsCredentialsProvider *p;
  GThread *threads[8];
  guint i;

  g_setenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri, TRUE);
  p = gst_spdl_aws_credentials_provider_new (NULL);
  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("get", get_in_thread, p);
  for (i = 0; i < G_N_ELEMENTS (threads); i++) {
    GstSpdlAwsCredentials *c = g_thread_join (threads[i]);

    fail_unless_equals_string (c->access_key, "ASIACONTAINER1");
    gst_spdl_aws_credentials_free (c);
  }
  fail_unless_equals_int (server_requests (s), 1);
  gst_spdl_aws_credentials_provider_free (p);
  g_free (uri);
  server_stop (s);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Hostile answers                                                           */

GST_START_TEST (test_hostile_json)
{
  static const gchar *const bodies[] = {
    "",
    "garbage",
    "[]",
    "\"AccessKeyId\"",
    "{",
    "{\"AccessKeyId\":",
    "{\"AccessKeyId\":\"AKIAX\"",
    "{\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\"",
    "{\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\"}}",
    "{\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\"} x",
    "{\"AccessKeyId\":\"AKIAX\",,\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\" \"SecretAccessKey\":\"TOPSECRET\"}",
    "{AccessKeyId:\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":123,\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":null,\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":[\"AKIAX\"],\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\",\"AccessKeyId\":\"AKIAY\","
        "\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\"}",
    "{\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIA X\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\\n\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\\u0000\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\\ud800\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\\udc00x\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\\u12\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\\x41\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\\\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIA\xc3\xa9\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIA\tX\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\","
        "\"Token\":7}",
    "{\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\","
        "\"Expiration\":\"soon\"}",
    "{\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\","
        "\"Expiration\":\"2026-01-01T00:00:00Z"
        "0000000000000000000000000000000000000000000000000000000000000000\"}",
    "{\"x\":-,\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"x\":tru,\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"x\":{\"a\":},\"AccessKeyId\":\"AKIAX\","
        "\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"x\":[1,],\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\"}",
    "{\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\"\0}",
  };
  Server *s = server_start (container_handler);
  gchar *uri = g_strdup_printf ("%s/creds", s->url);
  GString *deep = g_string_new ("{\"x\":");
  gchar *big = NULL;
  guint i;

  g_setenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri, TRUE);
  for (i = 0; i < G_N_ELEMENTS (bodies) + 2; i++) {
    gchar *message;

    if (i < G_N_ELEMENTS (bodies)) {
      s->raw = bodies[i];
      s->raw_len = strlen (bodies[i]);
      if (i == G_N_ELEMENTS (bodies) - 1)
        s->raw_len = strlen (bodies[i]) + 2;
    } else if (i == G_N_ELEMENTS (bodies)) {
      /* nesting past any sane depth */
      guint d;

      for (d = 0; d < 20000; d++)
        g_string_append_c (deep, '[');
      for (d = 0; d < 20000; d++)
        g_string_append_c (deep, ']');
      g_string_append (deep, ",\"AccessKeyId\":\"AKIAX\","
          "\"SecretAccessKey\":\"TOPSECRET\"}");
      s->raw = deep->str;
      s->raw_len = deep->len;
    } else {
      /* an endless answer */
      big = g_strnfill (1024 * 1024, ' ');
      big[0] = '{';
      s->raw = big;
      s->raw_len = strlen (big);
    }
    message = expect_error (NULL, GST_RESOURCE_ERROR_READ);
    fail_if (strstr (message, "TOPSECRET") != NULL, "%s", message);
    fail_if (strstr (message, "AKIAX") != NULL, "%s", message);
    g_free (message);
  }
  g_free (big);
  g_string_free (deep, TRUE);

  /* valid, with escapes and members to pass over */
  s->raw = "  {\"Extra\" : {\"a\": [1, -2.5e3, true, false, null, \"]}\"]},"
      "\n\"AccessKeyId\":\"AKIA\\u0041\\u0042\",\"SecretAccessKey\":"
      "\"s\\/x+\\\"y\\\\\",\"Token\":\"t\\ud83d\\ude00\\u00e9x\", "
      "\"Expiration\": \"2100-01-02T03:04:05+01:00\"} \r\n";
  s->raw_len = strlen (s->raw);
  {
    GstSpdlAwsCredentials *c = get_credentials (NULL, NULL);
    gchar *message;

    /* a token outside visible ASCII is refused */
    fail_unless (c == NULL);
    s->raw = "{\"AccessKeyId\":\"AKIA\\u0041\\u0042\",\"SecretAccessKey\":"
        "\"s\\/x+\\\"y\\\\\",\"Token\":\"t\\u0074\",\"Extra\":[{},[]],"
        "\"Expiration\":\"2100-01-02T03:04:05+01:00\"}";
    s->raw_len = strlen (s->raw);
    c = get_credentials (NULL, NULL);
    fail_unless (c != NULL);
    fail_unless_equals_string (c->access_key, "AKIAAB");
    fail_unless_equals_string (c->secret_key, "s/x+\"y\\");
    fail_unless_equals_string (c->session_token, "tt");
    fail_unless_equals_int64 (c->expiration, G_GINT64_CONSTANT (4102538645));
    gst_spdl_aws_credentials_free (c);

    /* an IMDS error answer */
    s->raw = "{\"Code\":\"AssumeRoleUnauthorizedAccess\",\"Message\":\"no\","
        "\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"TOPSECRET\"}";
    s->raw_len = strlen (s->raw);
    message = expect_error (NULL, GST_RESOURCE_ERROR_READ);
    fail_unless_contains (message, "AssumeRoleUnauthorizedAccess");
    g_free (message);
  }
  g_free (uri);
  server_stop (s);
}

GST_END_TEST;

/* the instance metadata service's own fields, bad */
static void
hostile_imds_handler (Server * s, const gchar * method, const gchar * path,
    const gchar * headers, const gchar * request, guint * status,
    GString * body)
{
  *status = 200;
  if (strcmp (method, "PUT") == 0)
    g_string_append (body, s->raw && s->raw[0] == 'T' ? s->raw + 1 :
        IMDS_TOKEN);
  else if (g_str_has_suffix (path, "/security-credentials/"))
    g_string_append (body, s->raw && s->raw[0] == 'R' ? s->raw + 1 :
        "spdl-role");
  else
    credentials_json (s, body, "ASIAIMDS");
}

GST_START_TEST (test_hostile_instance_metadata)
{
  static const gchar *const cases[] = {
    "T", "Tbad token", "Tbad\r\nX-Evil: 1",
    "R", "R../../user-data", "Rrole?x=1", "Rrole/../other", "R\xff",
  };
  Server *s = server_start (hostile_imds_handler);
  guint i;

  g_unsetenv ("AWS_EC2_METADATA_DISABLED");
  g_setenv ("AWS_EC2_METADATA_SERVICE_ENDPOINT", s->url, TRUE);
  g_setenv ("AWS_METADATA_SERVICE_TIMEOUT", "10", TRUE);
  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *message;

    s->raw = cases[i];
    message = expect_error (NULL, GST_RESOURCE_ERROR_NOT_FOUND);
    fail_unless_contains (message, "instance metadata at");
    g_free (message);
  }
  /* only the first line of the role list */
  s->raw = "Rspdl-role\nother-role\n";
  {
    GstSpdlAwsCredentials *c = get_credentials (NULL, NULL);

    fail_unless (c != NULL);
    fail_unless_equals_string (c->source, "instance metadata (IMDSv2)");
    gst_spdl_aws_credentials_free (c);
  }
  server_stop (s);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Roles: AssumeRole for role_arn profiles, AssumeRoleWithWebIdentity, on a
 * fake STS (its answers as AWS's; moto checks the signatures in
 * tests/python/test_s3.py)                                                 */

#define ROLE "arn:aws:iam::123456789012:role/reader"
#define ROLE_FORM "arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Freader"

static void
sts_handler (Server * s, const gchar * method, const gchar * path,
    const gchar * headers, const gchar * request, guint * status,
    GString * body)
{
  GDateTime *now, *at;
  gchar *expiration;

  if (strcmp (method, "POST") != 0 || strcmp (path, "/") != 0)
    return;
  g_free (s->authorization);
  s->authorization = header_value (headers, "Authorization");
  g_ptr_array_add (s->forms, g_strdup (request));
  if (s->error_code) {
    *status = s->status;
    g_string_append_printf (body, "<ErrorResponse xmlns=\"https://sts."
        "amazonaws.com/doc/2011-06-15/\">\n  <Error>\n    <Type>Sender</Type>"
        "\n    <Code>%s</Code>\n    <Message>User: arn:aws:iam::123456789012:"
        "user/src is not authorized to perform: sts:AssumeRole</Message>\n"
        "  </Error>\n  <RequestId>1</RequestId>\n</ErrorResponse>\n",
        s->error_code);
    return;
  }
  now = g_date_time_new_now_utc ();
  at = g_date_time_add_seconds (now, s->expires_in);
  expiration = g_date_time_format (at, "%Y-%m-%dT%H:%M:%S.000Z");
  *status = 200;
  g_string_append_printf (body, "<AssumeRoleResponse xmlns=\"https://sts."
      "amazonaws.com/doc/2011-06-15/\">\n  <AssumeRoleResult>\n"
      "    <AssumedRoleUser>\n      <AssumedRoleId>AROA:x</AssumedRoleId>\n"
      "    </AssumedRoleUser>\n    <Credentials>\n"
      "      <AccessKeyId>ASIASTS%u</AccessKeyId>\n"
      "      <SecretAccessKey>sts-secret/%u+</SecretAccessKey>\n"
      "      <SessionToken>sts-token-%u</SessionToken>\n"
      "      <Expiration>%s</Expiration>\n    </Credentials>\n"
      "  </AssumeRoleResult>\n</AssumeRoleResponse>\n", s->requests,
      s->requests, s->requests, expiration);
  g_free (expiration);
  g_date_time_unref (at);
  g_date_time_unref (now);
}

/* the body of the STS request @i (from 0), a copy */
static gchar *
sts_form (Server * s, guint i)
{
  gchar *form;

  g_mutex_lock (&s->lock);
  fail_unless (i < s->forms->len, "%u requests, not %u", s->forms->len,
      i + 1);
  form = g_strdup (g_ptr_array_index (s->forms, i));
  g_mutex_unlock (&s->lock);
  return form;
}

static const gchar roles_config[] =
    "[profile src]\n"
    "aws_access_key_id = AKIASRC\n"
    "aws_secret_access_key = src-secret\n"
    "[profile train]\n"
    "role_arn = " ROLE "\n"
    "source_profile = src\n"
    "external_id = ext 42/&\n"
    "duration_seconds = 900\n"
    "role_session_name = spdl-run\n"
    "region = eu-west-1\n"
    "[profile plain]\n"
    "role_arn = " ROLE "\n"
    "source_profile = src\n"
    "[profile chained]\n"
    "role_arn = arn:aws:iam::123456789012:role/second\n"
    "source_profile = train\n"
    "[profile self]\n"
    "role_arn = " ROLE "\n"
    "source_profile = self\n"
    "aws_access_key_id = AKIASELF\n"
    "aws_secret_access_key = self-secret\n"
    "[profile loop-a]\n"
    "role_arn = " ROLE "\n"
    "source_profile = loop-b\n"
    "[profile loop-b]\n"
    "role_arn = " ROLE "\n"
    "source_profile = loop-a\n"
    "[profile orphan]\n"
    "role_arn = " ROLE "\n"
    "source_profile = ghost\n"
    "[profile mfa]\n"
    "role_arn = " ROLE "\n"
    "source_profile = src\n"
    "mfa_serial = arn:aws:iam::123456789012:mfa/me\n"
    "[profile both]\n"
    "role_arn = " ROLE "\n"
    "source_profile = src\n"
    "credential_source = Environment\n"
    "[profile neither]\n"
    "role_arn = " ROLE "\n"
    "[profile from-env]\n"
    "role_arn = " ROLE "\n"
    "credential_source = Environment\n"
    "[profile from-laptop]\n"
    "role_arn = " ROLE "\n"
    "credential_source = Laptop\n"
    "[profile keyless]\n"
    "region = eu-west-1\n"
    "[profile from-keyless]\n"
    "role_arn = " ROLE "\n"
    "source_profile = keyless\n";

/* the credentials of profile @name (as s3-profile), checked; freed */
static GstSpdlAwsCredentials *
role_credentials (const gchar * name)
{
  GstSpdlAwsCredentialsConfig config = { NULL, NULL, NULL, name };
  GError *error = NULL;
  GstSpdlAwsCredentials *c = get_credentials (&config, &error);

  fail_unless (c != NULL, "no credentials: %s", error ? error->message : "");
  return c;
}

static gchar *
role_error (const gchar * name, gint code)
{
  GstSpdlAwsCredentialsConfig config = { NULL, NULL, NULL, name };

  return expect_error (&config, code);
}

GST_START_TEST (test_assume_role)
{
  Server *s = server_start (sts_handler);
  GstSpdlAwsCredentials *c;
  gchar *form, *message, *source;
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;

  spdl_test_write_file (config_path, roles_config, -1);
  g_setenv ("AWS_ENDPOINT_URL_STS", s->url, TRUE);

  /* the source profile's keys sign AssumeRole in the profile's region,
   * with its session name, external id and duration */
  c = role_credentials ("train");
  fail_unless_equals_string (c->access_key, "ASIASTS1");
  fail_unless_equals_string (c->secret_key, "sts-secret/1+");
  fail_unless_equals_string (c->session_token, "sts-token-1");
  fail_unless (c->expiration >= now + 3590 && c->expiration <= now + 3610);
  source = g_strdup_printf ("profile \"train\" (role " ROLE ", assumed with "
      "the credentials from profile \"src\" in %s)", config_path);
  fail_unless_equals_string (c->source, source);
  g_free (source);
  gst_spdl_aws_credentials_free (c);
  form = sts_form (s, 0);
  fail_unless_equals_string (form, "Action=AssumeRole&Version=2011-06-15"
      "&RoleArn=" ROLE_FORM "&RoleSessionName=spdl-run"
      "&ExternalId=ext%2042%2F%26&DurationSeconds=900");
  g_free (form);
  fail_unless (g_str_has_prefix (s->authorization,
          "AWS4-HMAC-SHA256 Credential=AKIASRC/"), "%s", s->authorization);
  fail_unless_contains (s->authorization, "/eu-west-1/sts/aws4_request");
  fail_unless_contains (s->authorization, "SignedHeaders=content-type;host;");

  /* botocore's session name; no region: us-east-1's signature */
  c = role_credentials ("plain");
  gst_spdl_aws_credentials_free (c);
  form = sts_form (s, 1);
  fail_unless (g_regex_match_simple ("^Action=AssumeRole&Version=2011-06-15"
          "&RoleArn=" ROLE_FORM "&RoleSessionName=botocore-session-[0-9]+$",
          form, 0, 0), "%s", form);
  g_free (form);
  fail_unless_contains (s->authorization, "/us-east-1/sts/aws4_request");

  /* a chain: the first role's credentials assume the second, signed with
   * its session token */
  c = role_credentials ("chained");
  fail_unless_equals_string (c->access_key, "ASIASTS4");
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_int (server_requests (s), 4);
  form = sts_form (s, 3);
  fail_unless_contains (form, "&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012"
      "%3Arole%2Fsecond&");
  g_free (form);
  fail_unless_contains (s->authorization, "Credential=ASIASTS3/");
  fail_unless_contains (s->authorization, "x-amz-security-token");

  /* a profile whose own keys assume its role */
  c = role_credentials ("self");
  gst_spdl_aws_credentials_free (c);
  fail_unless_contains (s->authorization, "Credential=AKIASELF/");

  /* credential_source = Environment: the process's keys, even though the
   * profile is named (which hides them from the chain itself) */
  g_setenv ("AWS_ACCESS_KEY_ID", "AKIAENV", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "env-secret", TRUE);
  c = role_credentials ("from-env");
  gst_spdl_aws_credentials_free (c);
  fail_unless_contains (s->authorization, "Credential=AKIAENV/");
  g_unsetenv ("AWS_ACCESS_KEY_ID");
  g_unsetenv ("AWS_SECRET_ACCESS_KEY");
  fail_unless_equals_int (server_requests (s), 6);
  message = role_error ("from-env", GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "no credentials in its credential_source "
      "Environment");
  g_free (message);

  /* set up wrongly: errors naming the profile, no request made */
  message = role_error ("loop-a", GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "\"loop-a\" -> \"loop-b\" -> \"loop-a\"");
  fail_unless_contains (message, "loop of source_profile");
  g_free (message);
  message = role_error ("orphan", GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "AWS profile \"orphan\" in ");
  fail_unless_contains (message, "source_profile \"ghost\" is neither in");
  g_free (message);
  message = role_error ("mfa", GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "\"mfa\"");
  fail_unless_contains (message, "mfa_serial");
  g_free (message);
  message = role_error ("both", GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "both of source_profile and "
      "credential_source");
  g_free (message);
  message = role_error ("neither", GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "neither of source_profile");
  g_free (message);
  message = role_error ("from-laptop", GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "credential_source \"Laptop\" is none of");
  g_free (message);
  message = role_error ("from-keyless", GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "source_profile \"keyless\" has no "
      "credentials");
  g_free (message);
  fail_unless_equals_int (server_requests (s), 6);

  /* STS refuses: its code, the role's profile and the signer named, no
   * secret */
  s->status = 403;
  s->error_code = "AccessDenied";
  message = role_error ("train", GST_RESOURCE_ERROR_NOT_AUTHORIZED);
  fail_unless_contains (message, "AWS profile \"train\" in ");
  fail_unless_contains (message, "AssumeRole of " ROLE);
  fail_unless_contains (message, "STS error AccessDenied: User: ");
  fail_unless_contains (message, "HTTP status 403");
  fail_unless_contains (message, "profile \"src\"");
  fail_if (strstr (message, "src-secret") != NULL);
  g_free (message);
  /* a server error is tried three times */
  s->status = 503;
  s->error_code = "ServiceUnavailable";
  message = role_error ("train", GST_RESOURCE_ERROR_READ);
  fail_unless_contains (message, "STS error ServiceUnavailable");
  g_free (message);
  fail_unless_equals_int (server_requests (s), 10);
  server_stop (s);
}

GST_END_TEST;

/* A session of 15 minutes (STS's shortest) is in the refresh margin from
 * the start: AssumeRole again in the background, the current ones meanwhile,
 * the new ones after */
GST_START_TEST (test_assume_role_refresh)
{
  Server *s = server_start (sts_handler);
  GstSpdlAwsCredentialsConfig config = { NULL, NULL, NULL, "train" };
  GstSpdlAwsCredentialsProvider *p;
  GstSpdlAwsCredentials *c, *old;
  GError *error = NULL;
  gint lookups = 0;

  spdl_test_write_file (config_path, roles_config, -1);
  g_setenv ("AWS_ENDPOINT_URL_STS", s->url, TRUE);
  s->expires_in = GST_SPDL_AWS_CREDENTIALS_REFRESH_S + 2;
  p = gst_spdl_aws_credentials_provider_new (&config);
  gst_spdl_aws_credentials_provider_set_notify (p, count_lookups, &lookups);
  old = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (old->access_key, "ASIASTS1");
  wait_for_window (old, GST_SPDL_AWS_CREDENTIALS_REFRESH_S);
  s->expires_in = 3600;
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIASTS1");
  gst_spdl_aws_credentials_free (c);
  wait_for_lookups (&lookups, 2);
  c = gst_spdl_aws_credentials_provider_get (p, NULL);
  fail_unless_equals_string (c->access_key, "ASIASTS2");
  fail_unless (c->expiration > old->expiration + 2000);
  gst_spdl_aws_credentials_free (c);
  fail_unless_equals_int (server_requests (s), 2);
  gst_spdl_aws_credentials_free (old);
  gst_spdl_aws_credentials_provider_free (p);

  /* STS hands out a session that ends within the minute: an error */
  s->expires_in = 30;
  p = gst_spdl_aws_credentials_provider_new (&config);
  c = gst_spdl_aws_credentials_provider_get (p, &error);
  fail_unless (c == NULL && error != NULL);
  fail_unless_contains (error->message, "The credentials from profile "
      "\"train\" (role " ROLE);
  fail_unless_contains (error->message, " expire at ");
  g_clear_error (&error);
  gst_spdl_aws_credentials_provider_free (p);
  server_stop (s);
}

GST_END_TEST;

GST_START_TEST (test_web_identity)
{
  Server *s = server_start (sts_handler);
  GstSpdlAwsCredentialsConfig config = { NULL, NULL, NULL, "irsa" };
  gchar *token_path = g_build_filename (tmpdir, "token", NULL);
  gchar *form, *message, *profile;
  GstSpdlAwsCredentials *c;

  spdl_test_write_file (token_path, "eyJhbGciOi.eyJzdWIiOi+/=.c2ln\n", -1);
  profile = g_strdup_printf ("[profile irsa]\nweb_identity_token_file = %s\n"
      "role_arn = " ROLE "\n", token_path);
  spdl_test_write_file (config_path, profile, -1);
  g_free (profile);
  g_setenv ("AWS_ENDPOINT_URL_STS", s->url, TRUE);

  /* EKS's variables: unsigned, the token as the file holds it */
  g_setenv ("AWS_WEB_IDENTITY_TOKEN_FILE", token_path, TRUE);
  g_setenv ("AWS_ROLE_ARN", ROLE, TRUE);
  g_setenv ("AWS_ROLE_SESSION_NAME", "pod-1", TRUE);
  expect_credentials (NULL, "ASIASTS1", "sts-secret/1+", "sts-token-1",
      "AWS_WEB_IDENTITY_TOKEN_FILE (web identity, role " ROLE ")");
  fail_unless (s->authorization == NULL, "%s", s->authorization);
  form = sts_form (s, 0);
  fail_unless_equals_string (form, "Action=AssumeRoleWithWebIdentity"
      "&Version=2011-06-15&RoleArn=" ROLE_FORM "&RoleSessionName=pod-1"
      "&WebIdentityToken=eyJhbGciOi.eyJzdWIiOi%2B%2F%3D.c2ln");
  g_free (form);
  /* the environment's keys come first, as in botocore */
  g_setenv ("AWS_ACCESS_KEY_ID", "AKIAENV", TRUE);
  g_setenv ("AWS_SECRET_ACCESS_KEY", "env-secret", TRUE);
  expect_credentials (NULL, "AKIAENV", "env-secret", NULL,
      "environment (AWS_ACCESS_KEY_ID)");
  g_unsetenv ("AWS_ACCESS_KEY_ID");
  g_unsetenv ("AWS_SECRET_ACCESS_KEY");
  /* no role */
  g_unsetenv ("AWS_ROLE_ARN");
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "AWS_WEB_IDENTITY_TOKEN_FILE: web identity");
  fail_unless_contains (message, "AWS_ROLE_ARN");
  g_free (message);
  /* no token file */
  g_setenv ("AWS_ROLE_ARN", ROLE, TRUE);
  g_setenv ("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token", TRUE);
  message = expect_error (NULL, GST_RESOURCE_ERROR_SETTINGS);
  fail_unless_contains (message, "could not read the web identity token "
      "file /nonexistent/token: no such file");
  g_free (message);
  fail_unless_equals_int (server_requests (s), 1);

  /* a named profile's keys, the variables not read (botocore) */
  c = role_credentials ("irsa");
  fail_unless_equals_string (c->access_key, "ASIASTS2");
  fail_unless (g_str_has_prefix (c->source, "profile \"irsa\" in "));
  gst_spdl_aws_credentials_free (c);
  form = sts_form (s, 1);
  fail_unless (g_regex_match_simple ("&RoleSessionName=botocore-session-"
          "[0-9]+&", form, 0, 0), "%s", form);
  g_free (form);

  /* STS refuses the token */
  s->status = 400;
  s->error_code = "InvalidIdentityToken";
  message = expect_error (&config, GST_RESOURCE_ERROR_READ);
  fail_unless_contains (message, "AssumeRoleWithWebIdentity of " ROLE);
  fail_unless_contains (message, "STS error InvalidIdentityToken");
  fail_if (strstr (message, "eyJ") != NULL);
  g_free (message);
  g_free (token_path);
  server_stop (s);
}

GST_END_TEST;

static Suite *
spdlawscredentials_suite (void)
{
  Suite *s = suite_create ("spdlawscredentials");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_copy_free);
  tcase_add_test (tc, test_config_first);
  tcase_add_test (tc, test_environment);
  tcase_add_test (tc, test_environment_expiration);
  tcase_add_test (tc, test_credentials_file);
  tcase_add_test (tc, test_config_file);
  tcase_add_test (tc, test_missing_profile);
  tcase_add_test (tc, test_profile_settings);
  tcase_add_test (tc, test_odd_files);
  tcase_add_test (tc, test_container);
  tcase_add_test (tc, test_instance_metadata);
  tcase_add_test (tc, test_instance_metadata_hangs);
  tcase_add_test (tc, test_refresh);
  tcase_add_test (tc, test_refresh_instance_metadata);
  tcase_add_test (tc, test_refresh_in_background);
  tcase_add_test (tc, test_refresh_fails_in_background);
  tcase_add_test (tc, test_refresh_waits_when_expired);
  tcase_add_test (tc, test_assume_role);
  tcase_add_test (tc, test_assume_role_refresh);
  tcase_add_test (tc, test_web_identity);
  tcase_add_test (tc, test_s3_lost_credentials_are_no_anonymous);
  tcase_add_test (tc, test_free_cancels_lookup);
  tcase_add_test (tc, test_threads);
  tcase_add_test (tc, test_hostile_json);
  tcase_add_test (tc, test_hostile_instance_metadata);
  return s;
}

SPDL_CHECK_MAIN (spdlawscredentials);
