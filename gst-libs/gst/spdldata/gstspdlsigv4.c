/* GStreamer SPDL: AWS Signature Version 4 request signing
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

#include "gstspdlsigv4.h"

#include <string.h>

/* Our own signer: libcurl 7.88's CURLOPT_AWS_SIGV4 neither sends nor signs
 * x-amz-content-sha256, which S3 requires on every SigV4 request. Nothing
 * here logs: the secret, the derived keys and the token never reach a
 * debug line. */

#define SHA256_LEN 32

typedef struct
{
  gchar *name;                  /* lowercase */
  gchar *value;                 /* trimmed, inner blanks collapsed */
} Header;

typedef struct
{
  gchar *name;                  /* both URI-encoded */
  gchar *value;
} Param;

/* Volatile writes: a memset just before a free or a return is a dead
 * store the compiler may drop. */
static void
wipe (gpointer mem, gsize len)
{
  volatile guint8 *p = mem;

  while (len--)
    *p++ = 0;
}

static void
wipe_string (gchar * s)
{
  if (s) {
    wipe (s, strlen (s));
    g_free (s);
  }
}

static gboolean
is_unreserved (guchar c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_' || c == '.' || c == '~';
}

/* @s percent-decoded, then encoded as SigV4 wants it: what the server
 * rebuilds from the parameters it parsed, whichever way they were
 * escaped on the wire. A '%' not followed by two hex digits is literal. */
static gchar *
recode (const gchar * s, gsize len)
{
  GString *out = g_string_sized_new (len * 3 + 1);
  gsize i;

  for (i = 0; i < len; i++) {
    guchar c = s[i];

    if (c == '%' && i + 2 < len && g_ascii_isxdigit (s[i + 1]) &&
        g_ascii_isxdigit (s[i + 2])) {
      c = (g_ascii_xdigit_value (s[i + 1]) << 4) |
          g_ascii_xdigit_value (s[i + 2]);
      i += 2;
    }
    if (is_unreserved (c))
      g_string_append_c (out, c);
    else
      g_string_append_printf (out, "%%%02X", c);
  }
  return g_string_free (out, FALSE);
}

static gint
compare_params (gconstpointer a, gconstpointer b)
{
  const Param *pa = a, *pb = b;
  gint c = strcmp (pa->name, pb->name);

  return c != 0 ? c : strcmp (pa->value, pb->value);
}

static gchar *
canonical_query (const gchar * query, gsize len)
{
  GArray *params = g_array_new (FALSE, FALSE, sizeof (Param));
  GString *out = g_string_new (NULL);
  const gchar *end = query + len;
  const gchar *p = query;
  guint i;

  while (p < end) {
    const gchar *amp = memchr (p, '&', end - p);
    const gchar *stop = amp ? amp : end;
    const gchar *eq = memchr (p, '=', stop - p);
    Param param;

    /* "a=1&&b=2": an empty piece is no parameter */
    if (stop > p) {
      param.name = recode (p, (eq ? eq : stop) - p);
      param.value = eq ? recode (eq + 1, stop - eq - 1) : g_strdup ("");
      g_array_append_val (params, param);
    }
    p = stop + 1;
  }
  g_array_sort (params, compare_params);
  for (i = 0; i < params->len; i++) {
    Param *param = &g_array_index (params, Param, i);

    g_string_append_printf (out, "%s%s=%s", i ? "&" : "", param->name,
        param->value);
    g_free (param->name);
    g_free (param->value);
  }
  g_array_free (params, TRUE);
  return g_string_free (out, FALSE);
}

/* The parts of @url SigV4 signs: the Host header libcurl derives from it,
 * the path as sent and the canonical query. */
static gboolean
parse_url (const gchar * url, gchar ** host_header, gchar ** path,
    gchar ** query, GError ** error)
{
  const gchar *authority, *end, *host, *host_end, *port = NULL, *p;
  guint port_num = 0;
  gboolean https;
  gsize path_len;

  for (p = url; *p; p++) {
    if ((guchar) * p <= ' ' || *p == 0x7f) {
      g_set_error (error, G_URI_ERROR, G_URI_ERROR_FAILED,
          "a space or control character in URL %s", url);
      return FALSE;
    }
  }
  if (g_ascii_strncasecmp (url, "https://", 8) == 0) {
    https = TRUE;
    authority = url + 8;
  } else if (g_ascii_strncasecmp (url, "http://", 7) == 0) {
    https = FALSE;
    authority = url + 7;
  } else {
    g_set_error (error, G_URI_ERROR, G_URI_ERROR_BAD_SCHEME,
        "not an http(s) URL: %s", url);
    return FALSE;
  }
  end = authority + strcspn (authority, "/?#");
  /* user:password@ is not sent in Host */
  host = authority;
  for (p = authority; p < end; p++)
    if (*p == '@')
      host = p + 1;
  if (*host == '[') {
    /* an IPv6 literal keeps its brackets in Host */
    host_end = memchr (host, ']', end - host);
    if (host_end == NULL || (host_end + 1 < end && host_end[1] != ':')) {
      g_set_error (error, G_URI_ERROR, G_URI_ERROR_BAD_HOST,
          "bad IPv6 host in URL %s", url);
      return FALSE;
    }
    host_end++;
    if (host_end < end)
      port = host_end + 1;
  } else {
    host_end = memchr (host, ':', end - host);
    if (host_end)
      port = host_end + 1;
    else
      host_end = end;
  }
  if (host_end == host) {
    g_set_error (error, G_URI_ERROR, G_URI_ERROR_BAD_HOST,
        "no host in URL %s", url);
    return FALSE;
  }
  for (p = port; p && p < end; p++) {
    if (!g_ascii_isdigit (*p) || (port_num = port_num * 10 +
            g_ascii_digit_value (*p)) > 65535) {
      g_set_error (error, G_URI_ERROR, G_URI_ERROR_BAD_PORT,
          "bad port in URL %s", url);
      return FALSE;
    }
  }
  /* as libcurl: no port when it is the scheme's, even if written */
  if (port && port < end && port_num != (https ? 443 : 80))
    *host_header = g_strdup_printf ("%.*s:%u", (gint) (host_end - host),
        host, port_num);
  else
    *host_header = g_strndup (host, host_end - host);

  path_len = strcspn (end, "?#");
  *path = path_len ? g_strndup (end, path_len) : g_strdup ("/");
  if (end[path_len] == '?') {
    const gchar *q = end + path_len + 1;

    *query = canonical_query (q, strcspn (q, "#"));
  } else {
    *query = g_strdup ("");
  }
  return TRUE;
}

static gboolean
has_line_break (const gchar * s)
{
  return s && strpbrk (s, "\r\n") != NULL;
}

/* Trimall: no blanks around, runs of blanks inside made one space */
static gchar *
trim_all (const gchar * value)
{
  /* never longer than @value: no reallocation leaves a copy of a token */
  GString *out = g_string_sized_new (strlen (value) + 1);
  gboolean blank = FALSE;

  for (; *value; value++) {
    if (*value == ' ' || *value == '\t') {
      blank = out->len > 0;
    } else {
      if (blank)
        g_string_append_c (out, ' ');
      blank = FALSE;
      g_string_append_c (out, *value);
    }
  }
  return g_string_free (out, FALSE);
}

static void
add_header (GArray * headers, const gchar * name, const gchar * value)
{
  Header h;

  h.name = g_ascii_strdown (name, -1);
  h.value = trim_all (value);
  g_array_append_val (headers, h);
}

static gboolean
is_signers_header (const gchar * name)
{
  static const gchar *const own[] = { "host", "x-amz-date",
    "x-amz-content-sha256", "x-amz-security-token", "authorization"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (own); i++)
    if (g_ascii_strcasecmp (name, own[i]) == 0)
      return TRUE;
  return FALSE;
}

/* "Name: value" -> @headers; FALSE when it is no such line */
static gboolean
add_extra_header (GArray * headers, const gchar * line)
{
  const gchar *colon = strchr (line, ':');
  gchar *name;
  gboolean ok;
  const gchar *p;

  if (colon == NULL || colon == line || has_line_break (line))
    return FALSE;
  for (p = line; p < colon; p++)
    if ((guchar) * p <= ' ' || *p == 0x7f)
      return FALSE;
  name = g_strndup (line, colon - line);
  ok = !is_signers_header (name);
  if (ok)
    add_header (headers, name, colon + 1);
  g_free (name);
  return ok;
}

static gint
compare_headers (gconstpointer a, gconstpointer b)
{
  return strcmp (((const Header *) a)->name, ((const Header *) b)->name);
}

static void
hmac_sha256 (const guint8 * key, gsize key_len, const gchar * data,
    guint8 digest[SHA256_LEN])
{
  GHmac *hmac = g_hmac_new (G_CHECKSUM_SHA256, key, key_len);
  gsize len = SHA256_LEN;

  g_hmac_update (hmac, (const guchar *) data, -1);
  g_hmac_get_digest (hmac, digest, &len);
  /* GLib frees, without wiping, the hash states it keeps */
  g_hmac_unref (hmac);
}

/* HMAC chain from "AWS4" + secret over date, region, service and
 * "aws4_request"; the keys are wiped once used. */
static gchar *
compute_signature (const GstSpdlSigV4Credentials * c, const gchar * date,
    const gchar * string_to_sign)
{
  gchar *secret = g_strconcat ("AWS4", c->secret_key, NULL);
  guint8 k1[SHA256_LEN], k2[SHA256_LEN];
  gchar *signature;

  hmac_sha256 ((const guint8 *) secret, strlen (secret), date, k1);
  wipe_string (secret);
  hmac_sha256 (k1, SHA256_LEN, c->region, k2);
  hmac_sha256 (k2, SHA256_LEN, c->service, k1);
  hmac_sha256 (k1, SHA256_LEN, "aws4_request", k2);
  signature = g_compute_hmac_for_string (G_CHECKSUM_SHA256, k2, SHA256_LEN,
      string_to_sign, -1);
  wipe (k1, SHA256_LEN);
  wipe (k2, SHA256_LEN);
  return signature;
}

gchar **
gst_spdl_sigv4_sign (const GstSpdlSigV4Credentials * c,
    const gchar * method, const gchar * url,
    const gchar * const *extra_headers, const gchar * payload_sha256,
    gint64 now, GstSpdlSigV4Steps * steps, GError ** error)
{
  gchar *host = NULL, *path = NULL, *query = NULL;
  gchar *amz_date, *date, *scope, *cr_hash, *sts, *signature;
  GArray *headers;
  GString *cr, *signed_headers;
  GDateTime *time;
  GPtrArray *lines;
  gsize cr_size;
  guint i;

  g_return_val_if_fail (c != NULL && c->access_key && c->secret_key &&
      c->region && c->service, NULL);
  g_return_val_if_fail (method != NULL && url != NULL, NULL);
  /* 1970 to 9999: x-amz-date has four digits of year */
  g_return_val_if_fail (now >= 0 && now < G_GINT64_CONSTANT (253402300800),
      NULL);

  if (payload_sha256 == NULL)
    payload_sha256 = GST_SPDL_SIGV4_UNSIGNED_PAYLOAD;
  if (has_line_break (method) || has_line_break (c->access_key) ||
      has_line_break (c->region) || has_line_break (c->service) ||
      has_line_break (c->session_token) || has_line_break (payload_sha256)) {
    /* which one is not said: it may be the token */
    g_set_error (error, G_URI_ERROR, G_URI_ERROR_FAILED,
        "a line break in a value to sign for %s", url);
    return NULL;
  }
  if (!parse_url (url, &host, &path, &query, error))
    return NULL;

  time = g_date_time_new_from_unix_utc (now);
  amz_date = g_date_time_format (time, "%Y%m%dT%H%M%SZ");
  date = g_strndup (amz_date, 8);
  g_date_time_unref (time);

  headers = g_array_new (FALSE, FALSE, sizeof (Header));
  add_header (headers, "host", host);
  add_header (headers, "x-amz-content-sha256", payload_sha256);
  add_header (headers, "x-amz-date", amz_date);
  if (c->session_token)
    add_header (headers, "x-amz-security-token", c->session_token);
  for (i = 0; extra_headers && extra_headers[i]; i++) {
    if (!add_extra_header (headers, extra_headers[i])) {
      /* not printed: it could be a token */
      g_critical ("gst_spdl_sigv4_sign: extra header %u is malformed or "
          "one the signer writes itself", i);
      signature = NULL;
      lines = NULL;
      goto done;
    }
  }
  /* stable: the values of a repeated name stay in order */
  g_array_sort (headers, compare_headers);

  /* sized to hold it all and built without printf's temporary strings:
   * either would leave copies of the token in freed memory */
  cr_size = strlen (method) + strlen (path) + strlen (query) +
      strlen (payload_sha256) + 16;
  for (i = 0; i < headers->len; i++) {
    Header *h = &g_array_index (headers, Header, i);

    cr_size += 2 * strlen (h->name) + strlen (h->value) + 3;
  }
  cr = g_string_sized_new (cr_size);
  signed_headers = g_string_new (NULL);
  g_string_append (cr, method);
  g_string_append_c (cr, '\n');
  g_string_append (cr, path);
  g_string_append_c (cr, '\n');
  g_string_append (cr, query);
  for (i = 0; i < headers->len; i++) {
    Header *h = &g_array_index (headers, Header, i);

    if (i > 0 && strcmp (h->name, g_array_index (headers, Header,
                i - 1).name) == 0) {
      /* a repeated header: its values joined by commas */
      g_string_append_c (cr, ',');
      g_string_append (cr, h->value);
      continue;
    }
    g_string_append_c (cr, '\n');
    g_string_append (cr, h->name);
    g_string_append_c (cr, ':');
    g_string_append (cr, h->value);
    if (signed_headers->len)
      g_string_append_c (signed_headers, ';');
    g_string_append (signed_headers, h->name);
  }
  g_string_append (cr, "\n\n");
  g_string_append (cr, signed_headers->str);
  g_string_append_c (cr, '\n');
  g_string_append (cr, payload_sha256);

  scope = g_strdup_printf ("%s/%s/%s/aws4_request", date, c->region,
      c->service);
  cr_hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, cr->str,
      cr->len);
  sts = g_strdup_printf ("AWS4-HMAC-SHA256\n%s\n%s\n%s", amz_date, scope,
      cr_hash);
  signature = compute_signature (c, date, sts);

  lines = g_ptr_array_new ();
  g_ptr_array_add (lines, g_strdup_printf ("x-amz-date: %s", amz_date));
  g_ptr_array_add (lines, g_strdup_printf ("x-amz-content-sha256: %s",
          payload_sha256));
  if (c->session_token)
    g_ptr_array_add (lines, g_strconcat ("x-amz-security-token: ",
            c->session_token, NULL));
  g_ptr_array_add (lines, g_strdup_printf ("Authorization: AWS4-HMAC-SHA256 "
          "Credential=%s/%s, SignedHeaders=%s, Signature=%s", c->access_key,
          scope, signed_headers->str, signature));
  g_ptr_array_add (lines, NULL);

  if (steps) {
    steps->canonical_request = g_strdup (cr->str);
    steps->string_to_sign = sts;
    steps->signature = g_strdup (signature);
  } else {
    g_free (sts);
  }
  wipe (cr->str, cr->allocated_len);
  g_string_free (cr, TRUE);
  g_string_free (signed_headers, TRUE);
  g_free (scope);
  g_free (cr_hash);

done:
  for (i = 0; i < headers->len; i++) {
    Header *h = &g_array_index (headers, Header, i);

    g_free (h->name);
    wipe_string (h->value);
  }
  g_array_free (headers, TRUE);
  g_free (signature);
  g_free (amz_date);
  g_free (date);
  g_free (host);
  g_free (path);
  g_free (query);
  return lines ? (gchar **) g_ptr_array_free (lines, FALSE) : NULL;
}

void
gst_spdl_sigv4_headers_free (gchar ** headers)
{
  guint i;

  for (i = 0; headers && headers[i]; i++)
    wipe_string (headers[i]);
  g_free (headers);
}

void
gst_spdl_sigv4_steps_clear (GstSpdlSigV4Steps * steps)
{
  g_clear_pointer (&steps->canonical_request, wipe_string);
  g_clear_pointer (&steps->string_to_sign, g_free);
  g_clear_pointer (&steps->signature, g_free);
}
