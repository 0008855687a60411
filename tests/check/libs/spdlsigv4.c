/* gst-spdl: unit tests of the SigV4 signer
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include <gst/check/gstcheck.h>

#include <string.h>

#include "gstspdlsigv4.h"
#include "spdlcheckmain.h"

/* Where the expected values come from:
 *
 * [AWS] The S3 API reference, "Signature Calculations for the
 * Authorization Header: Transferring Payload in a Single Chunk (AWS
 * Signature Version 4)", section "Examples: Signature Calculations": the
 * GET Object, PUT Object, GET Bucket Lifecycle and Get Bucket (List
 * Objects) examples, with their published canonical requests, hashes of
 * them and signatures. botocore 1.44.8's S3SigV4Auth reproduces the three
 * GET signatures (it rewrites the PUT's Date header, so not that one).
 *
 * [botocore] Values that are on no AWS page (a session token, a port, an
 * IPv6 host, a ListObjectsV2 query needing encoding): generated once with
 * botocore 1.44.8's S3SigV4Auth, its clock frozen at 2015-08-30T12:36:00Z
 * (unittest.mock on botocore.auth.get_current_datetime), the canonical
 * request taken from its debug log, and pasted here. */

/* 2013-05-24T00:00:00Z and 2015-08-30T12:36:00Z */
#define AWS_EXAMPLE_TIME G_GINT64_CONSTANT (1369353600)
#define BOTO_TIME G_GINT64_CONSTANT (1440938160)
#define EMPTY GST_SPDL_SIGV4_EMPTY_SHA256
#define AWS_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define BOTO_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define BOTO_TOKEN "FQoGZXIvYXdzEXAMPLE//////////wEaDExampleToken+/=="

static const GstSpdlSigV4Credentials aws_example = {
  "AKIAIOSFODNN7EXAMPLE", AWS_SECRET, NULL, "us-east-1", "s3"
};

static const GstSpdlSigV4Credentials boto = {
  "AKIDEXAMPLE", BOTO_SECRET, NULL, "us-east-1", "s3"
};

static const GstSpdlSigV4Credentials boto_token = {
  "AKIDEXAMPLE", BOTO_SECRET, BOTO_TOKEN, "us-east-1", "s3"
};

static gchar **
sign (const GstSpdlSigV4Credentials * c, const gchar * method,
    const gchar * url, const gchar * const *extra, const gchar * payload,
    gint64 now, GstSpdlSigV4Steps * steps)
{
  GError *error = NULL;
  gchar **headers = gst_spdl_sigv4_sign (c, method, url, extra, payload,
      now, steps, &error);

  fail_unless (headers != NULL, "%s: %s", url,
      error ? error->message : "no error");
  return headers;
}

/* the last line of the string to sign: the canonical request's hash */
static const gchar *
hashed_request (const GstSpdlSigV4Steps * steps)
{
  return strrchr (steps->string_to_sign, '\n') + 1;
}

/* the canonical request of a plain GET, for the tests of its parts */
static gchar *
canonical (const gchar * url)
{
  GstSpdlSigV4Steps steps = { NULL, };
  gchar **headers = sign (&boto, "GET", url, NULL, EMPTY, BOTO_TIME, &steps);
  gchar *cr = g_strdup (steps.canonical_request);

  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);
  return cr;
}

static gchar *
canonical_line (const gchar * url, guint line)
{
  gchar *cr = canonical (url);
  gchar **lines = g_strsplit (cr, "\n", -1);
  gchar *l = g_strdup (lines[line]);

  g_strfreev (lines);
  g_free (cr);
  return l;
}

GST_START_TEST (test_aws_get_object)
{
  /* [AWS] the Range header is signed in that example */
  const gchar *extra[] = { "Range: bytes=0-9", NULL };
  GstSpdlSigV4Steps steps = { NULL, };
  gchar **headers = sign (&aws_example, "GET",
      "https://examplebucket.s3.amazonaws.com/test.txt", extra, EMPTY,
      AWS_EXAMPLE_TIME, &steps);

  fail_unless_equals_string (steps.canonical_request,
      "GET\n"
      "/test.txt\n"
      "\n"
      "host:examplebucket.s3.amazonaws.com\n"
      "range:bytes=0-9\n"
      "x-amz-content-sha256:" EMPTY "\n"
      "x-amz-date:20130524T000000Z\n"
      "\n" "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY);
  fail_unless_equals_string (steps.string_to_sign,
      "AWS4-HMAC-SHA256\n"
      "20130524T000000Z\n"
      "20130524/us-east-1/s3/aws4_request\n"
      "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  fail_unless_equals_string (steps.signature,
      "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");

  fail_unless_equals_int (g_strv_length (headers), 3);
  fail_unless_equals_string (headers[0], "x-amz-date: 20130524T000000Z");
  fail_unless_equals_string (headers[1], "x-amz-content-sha256: " EMPTY);
  fail_unless_equals_string (headers[2],
      "Authorization: AWS4-HMAC-SHA256 "
      "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
      "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
      "Signature="
      "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);
}

GST_END_TEST;

GST_START_TEST (test_aws_put_object)
{
  /* [AWS] a body, and two more signed headers, one sorted before host */
  const gchar *extra[] = { "Date: Fri, 24 May 2013 00:00:00 GMT",
    "x-amz-storage-class: REDUCED_REDUNDANCY", NULL
  };
  const gchar *body_sha256 =
      "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072";
  gchar *computed = g_compute_checksum_for_string (G_CHECKSUM_SHA256,
      "Welcome to Amazon S3.", -1);
  GstSpdlSigV4Steps steps = { NULL, };
  gchar **headers;

  fail_unless_equals_string (computed, body_sha256);
  g_free (computed);
  headers = sign (&aws_example, "PUT",
      "https://examplebucket.s3.amazonaws.com/test%24file.text", extra,
      body_sha256, AWS_EXAMPLE_TIME, &steps);
  fail_unless_equals_string (steps.canonical_request,
      "PUT\n"
      "/test%24file.text\n"
      "\n"
      "date:Fri, 24 May 2013 00:00:00 GMT\n"
      "host:examplebucket.s3.amazonaws.com\n"
      "x-amz-content-sha256:"
      "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n"
      "x-amz-date:20130524T000000Z\n"
      "x-amz-storage-class:REDUCED_REDUNDANCY\n"
      "\n"
      "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
      "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  fail_unless_equals_string (hashed_request (&steps),
      "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d");
  fail_unless_equals_string (steps.signature,
      "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
  fail_unless_equals_string (headers[1],
      "x-amz-content-sha256: "
      "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);
}

GST_END_TEST;

GST_START_TEST (test_aws_get_bucket_lifecycle)
{
  /* [AWS] a query parameter without '=' is signed with an empty value */
  GstSpdlSigV4Steps steps = { NULL, };
  gchar **headers = sign (&aws_example, "GET",
      "https://examplebucket.s3.amazonaws.com/?lifecycle", NULL, EMPTY,
      AWS_EXAMPLE_TIME, &steps);

  fail_unless_equals_string (steps.canonical_request,
      "GET\n"
      "/\n"
      "lifecycle=\n"
      "host:examplebucket.s3.amazonaws.com\n"
      "x-amz-content-sha256:" EMPTY "\n"
      "x-amz-date:20130524T000000Z\n"
      "\n" "host;x-amz-content-sha256;x-amz-date\n" EMPTY);
  fail_unless_equals_string (hashed_request (&steps),
      "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca");
  fail_unless_equals_string (steps.signature,
      "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  fail_unless_equals_string (headers[2],
      "Authorization: AWS4-HMAC-SHA256 "
      "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
      "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
      "Signature="
      "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);
}

GST_END_TEST;

GST_START_TEST (test_aws_list_objects)
{
  /* [AWS] the query sorted, in whichever order it is sent */
  const gchar *urls[] = {
    "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J",
    "https://examplebucket.s3.amazonaws.com/?prefix=J&max-keys=2",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (urls); i++) {
    GstSpdlSigV4Steps steps = { NULL, };
    gchar **headers = sign (&aws_example, "GET", urls[i], NULL, EMPTY,
        AWS_EXAMPLE_TIME, &steps);

    fail_unless (g_str_has_prefix (steps.canonical_request,
            "GET\n/\nmax-keys=2&prefix=J\nhost:"));
    fail_unless_equals_string (hashed_request (&steps),
        "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7");
    fail_unless_equals_string (steps.signature,
        "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    gst_spdl_sigv4_headers_free (headers);
    gst_spdl_sigv4_steps_clear (&steps);
  }
}

GST_END_TEST;

GST_START_TEST (test_botocore_session_token_and_port)
{
  /* [botocore] a MinIO-like endpoint: the port is in the signed Host; the
   * token is sent and signed */
  GstSpdlSigV4Steps steps = { NULL, };
  gchar **headers = sign (&boto_token, "GET",
      "http://127.0.0.1:9000/bucket/dir/a%20b%2Bc.jpg", NULL, EMPTY,
      BOTO_TIME, &steps);

  fail_unless_equals_string (steps.canonical_request,
      "GET\n"
      "/bucket/dir/a%20b%2Bc.jpg\n"
      "\n"
      "host:127.0.0.1:9000\n"
      "x-amz-content-sha256:" EMPTY "\n"
      "x-amz-date:20150830T123600Z\n"
      "x-amz-security-token:" BOTO_TOKEN "\n"
      "\n"
      "host;x-amz-content-sha256;x-amz-date;x-amz-security-token\n" EMPTY);
  fail_unless_equals_int (g_strv_length (headers), 4);
  fail_unless_equals_string (headers[0], "x-amz-date: 20150830T123600Z");
  fail_unless_equals_string (headers[1], "x-amz-content-sha256: " EMPTY);
  fail_unless_equals_string (headers[2],
      "x-amz-security-token: " BOTO_TOKEN);
  fail_unless_equals_string (headers[3],
      "Authorization: AWS4-HMAC-SHA256 "
      "Credential=AKIDEXAMPLE/20150830/us-east-1/s3/aws4_request, "
      "SignedHeaders=host;x-amz-content-sha256;x-amz-date;"
      "x-amz-security-token, Signature="
      "e168cad7ae1351796a5bbd5fdf84bfd692b856ffbc7531315cbcce42a2e83a68");
  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);
}

GST_END_TEST;

GST_START_TEST (test_botocore_list_objects_v2)
{
  /* [botocore] ListObjectsV2 with prefix "a/b c" and continuation token
   * "1+x/y==", unsigned payload: the same signature however the query is
   * escaped and ordered on the wire */
  const GstSpdlSigV4Credentials eu = {
    "AKIDEXAMPLE", BOTO_SECRET, NULL, "eu-west-1", "s3"
  };
  const gchar *urls[] = {
    "https://s3.eu-west-1.amazonaws.com/bucket?list-type=2&prefix=a%2Fb%20c"
        "&continuation-token=1%2Bx%2Fy%3D%3D",
    "https://s3.eu-west-1.amazonaws.com/bucket?continuation-token="
        "1%2bx/y%3d%3D&prefix=a/b%20c&list-type=2",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (urls); i++) {
    GstSpdlSigV4Steps steps = { NULL, };
    gchar **headers = sign (&eu, "GET", urls[i], NULL, NULL, BOTO_TIME,
        &steps);

    fail_unless_equals_string (steps.canonical_request,
        "GET\n"
        "/bucket\n"
        "continuation-token=1%2Bx%2Fy%3D%3D&list-type=2&prefix=a%2Fb%20c\n"
        "host:s3.eu-west-1.amazonaws.com\n"
        "x-amz-content-sha256:UNSIGNED-PAYLOAD\n"
        "x-amz-date:20150830T123600Z\n"
        "\n" "host;x-amz-content-sha256;x-amz-date\n" "UNSIGNED-PAYLOAD");
    fail_unless_equals_string (headers[1],
        "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    fail_unless_equals_string (headers[2],
        "Authorization: AWS4-HMAC-SHA256 "
        "Credential=AKIDEXAMPLE/20150830/eu-west-1/s3/aws4_request, "
        "SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature="
        "22288e02ed19fbf7ffbc71cbbcf0292dcd327f99877b52b880ec890d15151e38");
    gst_spdl_sigv4_headers_free (headers);
    gst_spdl_sigv4_steps_clear (&steps);
  }
}

GST_END_TEST;

GST_START_TEST (test_botocore_ipv6_and_default_port)
{
  GstSpdlSigV4Steps steps = { NULL, };
  gchar **headers;

  /* [botocore] an IPv6 literal keeps its brackets in Host */
  headers = sign (&boto_token, "HEAD", "http://[::1]:9000/bucket/k", NULL,
      EMPTY, BOTO_TIME, &steps);
  fail_unless (g_str_has_prefix (steps.canonical_request,
          "HEAD\n/bucket/k\n\nhost:[::1]:9000\n"));
  fail_unless_equals_string (steps.signature,
      "2acc34e6809d0902e600797d1be79bf81002b083e0229163746e823cd95c5344");
  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);

  /* [botocore] the scheme's port, written out, is not in Host */
  headers = sign (&boto, "GET",
      "https://examplebucket.s3.amazonaws.com:443/test.txt", NULL, EMPTY,
      BOTO_TIME, &steps);
  fail_unless (g_str_has_prefix (steps.canonical_request,
          "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\n"));
  fail_unless_equals_string (steps.signature,
      "bbfdf4d3c3eab24da182f8f790e0c7d8e2a20658191717a6546076effa9f5a5e");
  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);
}

GST_END_TEST;

GST_START_TEST (test_host_and_path)
{
  /* what libcurl 7.88 sends as Host and path for these URLs (checked
   * with curl -v): the host as written, the port unless the scheme's, no
   * user info; an empty path is "/"; the fragment is not sent */
  static const struct
  {
    const gchar *url, *path, *host;
  } cases[] = {
    {"http://h:80/x", "/x", "host:h"},
    {"http://h:443/x", "/x", "host:h:443"},
    {"https://h:80/x", "/x", "host:h:80"},
    {"HTTPS://h:443", "/", "host:h"},
    {"http://user:pw@Mixed.Example:9000", "/", "host:Mixed.Example:9000"},
    {"http://h:09000/a%7eb?", "/a%7eb", "host:h:9000"},
    {"http://h:/x#frag", "/x", "host:h"},
    {"http://h?x", "/", "host:h"},
    {"http://h/a/b/#c?d", "/a/b/", "host:h"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *path = canonical_line (cases[i].url, 1);
    gchar *host = canonical_line (cases[i].url, 3);

    fail_unless_equals_string (path, cases[i].path);
    fail_unless_equals_string (host, cases[i].host);
    g_free (path);
    g_free (host);
  }
}

GST_END_TEST;

GST_START_TEST (test_query_canonical_form)
{
  static const struct
  {
    const gchar *query, *canonical;
  } cases[] = {
    {"b=2&a=&a=1&c", "a=&a=1&b=2&c="},
    /* sorted by the encoded name, then value */
    {"~=1&%7E=0&A=2&a=3", "A=2&a=3&~=0&~=1"},
    /* escapes made uppercase; a '%' that is no escape is literal */
    {"k=%2f%zz%4", "k=%2F%25zz%254"},
    /* '+' is a plus; '=' after the first is part of the value */
    {"k=a+b=c", "k=a%2Bb%3Dc"},
    /* UTF-8 bytes and reserved characters encoded */
    {"p=\xc3\xa9!*'()", "p=%C3%A9%21%2A%27%28%29"},
    {"&&x=1&", "x=1"},
    {"=v", "=v"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *url = g_strconcat ("http://h/?", cases[i].query, NULL);
    gchar *line = canonical_line (url, 2);

    fail_unless_equals_string (line, cases[i].canonical);
    g_free (line);
    g_free (url);
  }
}

GST_END_TEST;

GST_START_TEST (test_extra_headers_trimmed_and_merged)
{
  /* names lowercased, values trimmed with inner blanks made one space, a
   * repeated name signed once with its values joined in order */
  const gchar *extra[] = { "X-Meta:  b   c\t", "x-amz-meta-z:z", "X-META: a",
    NULL
  };
  GstSpdlSigV4Steps steps = { NULL, };
  gchar **headers = sign (&boto, "GET", "http://h/k", extra, EMPTY,
      BOTO_TIME, &steps);

  fail_unless_equals_string (steps.canonical_request,
      "GET\n/k\n\n"
      "host:h\n"
      "x-amz-content-sha256:" EMPTY "\n"
      "x-amz-date:20150830T123600Z\n"
      "x-amz-meta-z:z\n"
      "x-meta:b c,a\n"
      "\n" "host;x-amz-content-sha256;x-amz-date;x-amz-meta-z;x-meta\n"
      EMPTY);
  /* the caller sends those itself */
  fail_unless_equals_int (g_strv_length (headers), 3);
  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);
}

GST_END_TEST;

GST_START_TEST (test_no_secret_in_the_output)
{
  GstSpdlSigV4Steps steps = { NULL, };
  gchar **headers = sign (&boto_token, "GET", "http://h/k", NULL, NULL,
      BOTO_TIME, &steps);
  guint i, tokens = 0;

  for (i = 0; headers[i]; i++) {
    fail_if (strstr (headers[i], BOTO_SECRET) != NULL);
    if (strstr (headers[i], BOTO_TOKEN))
      tokens++;
  }
  /* the token only in its own header */
  fail_unless_equals_int (tokens, 1);
  fail_if (strstr (steps.canonical_request, BOTO_SECRET) != NULL);
  fail_if (strstr (steps.string_to_sign, BOTO_SECRET) != NULL);
  fail_if (strstr (steps.string_to_sign, BOTO_TOKEN) != NULL);
  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);
  fail_unless (steps.canonical_request == NULL);
  gst_spdl_sigv4_headers_free (NULL);
}

GST_END_TEST;

GST_START_TEST (test_refused)
{
  static const struct
  {
    const gchar *url;
    gint code;
  } urls[] = {
    {"s3://bucket/key", G_URI_ERROR_BAD_SCHEME},
    {"localhost:9000/bucket/key", G_URI_ERROR_BAD_SCHEME},
    {"http:///key", G_URI_ERROR_BAD_HOST},
    {"http://user@:9000/key", G_URI_ERROR_BAD_HOST},
    {"http://[::1/key", G_URI_ERROR_BAD_HOST},
    {"http://[::1]x/key", G_URI_ERROR_BAD_HOST},
    {"http://h:65536/key", G_URI_ERROR_BAD_PORT},
    {"http://h:9x/key", G_URI_ERROR_BAD_PORT},
    {"http://::1:9000/key", G_URI_ERROR_BAD_HOST},
    {"http://h/a b", G_URI_ERROR_FAILED},
    {"http://h/a\r\nX-Evil: 1", G_URI_ERROR_FAILED},
  };
  const GstSpdlSigV4Credentials bad_token = {
    "AKIDEXAMPLE", BOTO_SECRET, "tok\r\nX-Evil: 1", "us-east-1", "s3"
  };
  const gchar *own[] = { "Host: other", NULL };
  const gchar *no_colon[] = { "Range bytes=0-9", NULL };
  GError *error = NULL;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (urls); i++) {
    fail_unless (gst_spdl_sigv4_sign (&boto, "GET", urls[i].url, NULL, NULL,
            BOTO_TIME, NULL, &error) == NULL, "%s", urls[i].url);
    fail_unless (g_error_matches (error, G_URI_ERROR, urls[i].code),
        "%s: %s", urls[i].url, error ? error->message : "no error");
    g_clear_error (&error);
  }

  /* a header injection through the token; the message does not show it */
  fail_unless (gst_spdl_sigv4_sign (&bad_token, "GET", "http://h/k", NULL,
          NULL, BOTO_TIME, NULL, &error) == NULL);
  fail_unless (g_error_matches (error, G_URI_ERROR, G_URI_ERROR_FAILED));
  fail_if (strstr (error->message, "tok") != NULL);
  g_clear_error (&error);

  /* the signer's own headers, or no header: a programming error */
  ASSERT_CRITICAL (fail_unless (gst_spdl_sigv4_sign (&boto, "GET",
              "http://h/k", own, NULL, BOTO_TIME, NULL, NULL) == NULL));
  ASSERT_CRITICAL (fail_unless (gst_spdl_sigv4_sign (&boto, "GET",
              "http://h/k", no_colon, NULL, BOTO_TIME, NULL, NULL) == NULL));
}

GST_END_TEST;

static Suite *
spdlsigv4_suite (void)
{
  Suite *s = suite_create ("spdlsigv4");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_aws_get_object);
  tcase_add_test (tc, test_aws_put_object);
  tcase_add_test (tc, test_aws_get_bucket_lifecycle);
  tcase_add_test (tc, test_aws_list_objects);
  tcase_add_test (tc, test_botocore_session_token_and_port);
  tcase_add_test (tc, test_botocore_list_objects_v2);
  tcase_add_test (tc, test_botocore_ipv6_and_default_port);
  tcase_add_test (tc, test_host_and_path);
  tcase_add_test (tc, test_query_canonical_form);
  tcase_add_test (tc, test_extra_headers_trimmed_and_merged);
  tcase_add_test (tc, test_no_secret_in_the_output);
  tcase_add_test (tc, test_refused);
  return s;
}

SPDL_CHECK_MAIN (spdlsigv4);
