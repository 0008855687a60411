/* GStreamer SPDL: AWS Signature Version 4 request signing
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_SIGV4_H__
#define __GST_SPDL_SIGV4_H__

#include <glib.h>

G_BEGIN_DECLS

/* x-amz-content-sha256 values: a body not hashed, and the hash of none */
#define GST_SPDL_SIGV4_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"
#define GST_SPDL_SIGV4_EMPTY_SHA256 \
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* Who signs, and for which scope; the strings are borrowed. */
typedef struct
{
  const gchar *access_key;
  const gchar *secret_key;
  const gchar *session_token;   /* NULL: none */
  const gchar *region;          /* e.g. "us-east-1" */
  const gchar *service;         /* "s3" */
} GstSpdlSigV4Credentials;

/* The intermediate values of one signature, to compare with AWS's
 * examples and to debug a server's SignatureDoesNotMatch (S3 answers with
 * its own canonical request). The canonical request holds the session
 * token: gst_spdl_sigv4_steps_clear() wipes it. */
typedef struct
{
  gchar *canonical_request;
  gchar *string_to_sign;
  gchar *signature;             /* lowercase hex */
} GstSpdlSigV4Steps;

/* Signs one request, without I/O.
 *
 * @url: the http(s) URL as it will be sent. Its path is signed as is (S3
 * does not normalize or encode it again: pass it encoded, each segment
 * percent-encoded and '/' kept, and send it verbatim, e.g. with
 * CURLOPT_PATH_AS_IS); an empty path is "/". Its query is canonicalized:
 * each name and value is percent-decoded, encoded again per RFC 3986
 * (A-Za-z0-9-_.~ kept, the rest %XX) and the pairs are sorted by name,
 * then value; a name without '=' has an empty value. A '+' is a plus, not
 * a space: encode spaces as %20. The Host header signed is the URL's host
 * as written, with ":port" unless the port is the scheme's default: what
 * libcurl sends.
 * @method: "GET", "HEAD", ... as sent.
 * @extra_headers: NULL, or a NULL-terminated array of "Name: value" lines
 * the request carries and that are to be signed too (not Host, X-Amz-Date,
 * X-Amz-Content-SHA256, X-Amz-Security-Token nor Authorization, which are
 * the signer's own).
 * @payload_sha256: the lowercase hex SHA-256 of the body, or NULL for
 * GST_SPDL_SIGV4_UNSIGNED_PAYLOAD.
 * @now: the request time, unix seconds.
 * @steps: (optional) filled with the intermediate values.
 *
 * Returns: a NULL-terminated array of header lines to add to the request,
 * in this order: "x-amz-date: ...", "x-amz-content-sha256: ...",
 * "x-amz-security-token: ..." when there is a token, and
 * "Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=...,
 * Signature=...". Free with gst_spdl_sigv4_headers_free(). NULL with
 * @error set (G_URI_ERROR) when @url is no http(s) URL or a value would
 * break a header line (CR or LF). */
gchar **gst_spdl_sigv4_sign (const GstSpdlSigV4Credentials * credentials,
    const gchar * method, const gchar * url,
    const gchar * const *extra_headers, const gchar * payload_sha256,
    gint64 now, GstSpdlSigV4Steps * steps, GError ** error);

/* Frees gst_spdl_sigv4_sign()'s headers, the token's wiped first. */
void gst_spdl_sigv4_headers_free (gchar ** headers);

/* Wipes and frees the steps' strings; the struct itself is the caller's. */
void gst_spdl_sigv4_steps_clear (GstSpdlSigV4Steps * steps);

G_END_DECLS

#endif /* __GST_SPDL_SIGV4_H__ */
