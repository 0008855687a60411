/* gst-spdl fuzz target: the SigV4 signer
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* gst_spdl_sigv4_sign() on a URL (a key from a listing or a manifest, an
 * endpoint from a profile), a method, credentials (from a metadata
 * service's answer) and extra header lines, all from the input:
 *
 *   byte 0: bit 0 a session token, bit 1 a signed payload hash (else
 *           UNSIGNED-PAYLOAD), bit 2 the intermediate steps asked for
 *   bytes 1-4: the time, unix seconds (little-endian)
 *   then NUL-separated fields: URL, method, access key, secret key, token,
 *   region, then extra header lines (at most 8)
 *
 * A bad URL or value must be refused with an error, never crash; a
 * malformed extra header is a caller's bug (a g_critical()). What is
 * signed must never hold a line break (header injection). */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlsigv4.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

#define MAX_EXTRA 8

static gboolean criticals;

static void
log_handler (const gchar * domain, GLogLevelFlags level,
    const gchar * message, gpointer user_data)
{
  if (level & G_LOG_LEVEL_CRITICAL)
    criticals = TRUE;
  else if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_WARNING))
    g_error ("%s", message);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static gboolean initialized = FALSE;
  /* the fields, NUL-terminated: the text copied with one NUL more */
  gchar *text, *fields[6 + MAX_EXTRA + 1] = { NULL, }, *p, *end;
  const gchar *empty = "";
  GstSpdlSigV4Credentials c;
  GstSpdlSigV4Steps steps = { NULL, };
  GError *error = NULL;
  gchar **headers;
  guint flags, n = 0, i;
  gint64 now;

  if (size < 5)
    return 0;
  if (!initialized) {
    g_log_set_default_handler (log_handler, NULL);
    initialized = TRUE;
  }
  flags = data[0];
  now = (gint64) data[1] | (gint64) data[2] << 8 | (gint64) data[3] << 16 |
      (gint64) data[4] << 24;
  text = g_malloc (size - 5 + 1);
  memcpy (text, data + 5, size - 5);
  text[size - 5] = '\0';
  end = text + (size - 5);
  for (p = text; p <= end && n < G_N_ELEMENTS (fields) - 1; n++) {
    fields[n] = p;
    p += strlen (p) + 1;
  }
  c.access_key = n > 2 ? fields[2] : empty;
  c.secret_key = n > 3 ? fields[3] : empty;
  c.session_token = (flags & 1) ? (n > 4 ? fields[4] : empty) : NULL;
  c.region = n > 5 ? fields[5] : "us-east-1";
  c.service = "s3";

  criticals = FALSE;
  headers = gst_spdl_sigv4_sign (&c, n > 1 ? fields[1] : "GET",
      n > 0 ? fields[0] : empty, n > 6 ? (const gchar * const *) fields + 6 :
      NULL, (flags & 2) ? GST_SPDL_SIGV4_EMPTY_SHA256 : NULL, now,
      (flags & 4) ? &steps : NULL, &error);
  if (headers == NULL) {
    /* refused: said why, or a malformed extra header was passed */
    g_assert (error != NULL || criticals);
    g_clear_error (&error);
  } else {
    g_assert (error == NULL && !criticals);
    for (i = 0; headers[i]; i++)
      g_assert (strpbrk (headers[i], "\r\n") == NULL);
    /* x-amz-date, x-amz-content-sha256, [token], Authorization */
    g_assert (i == (c.session_token ? 4u : 3u));
    g_assert (g_str_has_prefix (headers[i - 1], "Authorization: "));
    if (flags & 4)
      g_assert (steps.signature && strlen (steps.signature) == 64);
  }
  gst_spdl_sigv4_headers_free (headers);
  gst_spdl_sigv4_steps_clear (&steps);
  g_free (text);
  return 0;
}
