/* GStreamer SPDL: credentials masked in the text gst-spdl shows
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Training jobs keep their logs (and gst-launch's errors) in experiment
 * trackers, so no URL gst-spdl shows may carry a secret: a presigned S3
 * URL's signature and session token, a SAS token, a userinfo password.
 * The requests themselves use the URL as given. The same rules as
 * python/spdlgst/_secrets.py, which masks what spdlgst shows: the two
 * must agree (tests/python/test_remote.py::
 * test_presigned_url_secret_never_printed_by_spdlsrc checks that they do). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlredact.h"

#include <string.h>

/* Query parameters that carry a signature or a token, matched without
 * regard to case: _secrets.py's _QUERY names the same. */
static const gchar *const secret_query_parameters[] = {
  "x-amz-signature", "x-amz-security-token", "x-amz-credential",
  "signature", "sig", "x-goog-signature", "token", "access_token",
};

/* (scheme://user:)(password)@ */
#define USERINFO_PATTERN \
  "(\\b[a-z][a-z0-9+.-]*://[^/@\\s:\"']*:)[^/@\\s\"']+(?=@)"

static gpointer
make_regexes (gpointer unused)
{
  GRegex **regexes = g_new0 (GRegex *, 2);
  GString *query = g_string_new ("([?&](?:");
  guint i;

  for (i = 0; i < G_N_ELEMENTS (secret_query_parameters); i++)
    g_string_append_printf (query, "%s%s", i ? "|" : "",
        secret_query_parameters[i]);
  /* the value: up to the next parameter, the fragment, a blank or a quote */
  g_string_append (query, ")=)[^&#\\s\"']+");
  /* no G_REGEX_OPTIMIZE: PCRE2's JIT code reads as uninitialised to
   * valgrind, and a URL or message is short */
  regexes[0] = g_regex_new (query->str, G_REGEX_CASELESS,
      0, NULL);
  regexes[1] = g_regex_new (USERINFO_PATTERN, 0, 0, NULL);
  g_assert (regexes[0] != NULL && regexes[1] != NULL);
  g_string_free (query, TRUE);
  return regexes;
}

/**
 * gst_spdl_url_redact:
 * @text: (nullable): a URL, or a message that names URLs
 *
 * Returns: (transfer full) (nullable): a copy of @text with the values of
 * the query parameters that carry a signature or a token
 * (X-Amz-Signature, X-Amz-Security-Token, X-Amz-Credential, Signature,
 * sig, token ...) and a userinfo password replaced by
 * %GST_SPDL_REDACT_MASK; the path and the other parameters kept, so that
 * the text still names the object.
 */
gchar *
gst_spdl_url_redact (const gchar * text)
{
  static GOnce once = G_ONCE_INIT;
  GRegex **regexes;
  gchar *queried, *redacted;

  if (text == NULL)
    return NULL;
  /* most text names no credential: no regex run, no copy made twice */
  if (strchr (text, '?') == NULL && strchr (text, '&') == NULL &&
      strchr (text, '@') == NULL)
    return g_strdup (text);
  regexes = g_once (&once, make_regexes, NULL);
  queried = g_regex_replace (regexes[0], text, -1, 0,
      "\\1" GST_SPDL_REDACT_MASK, 0, NULL);
  if (queried == NULL)
    return g_strdup (text);
  redacted = g_regex_replace (regexes[1], queried, -1, 0,
      "\\1" GST_SPDL_REDACT_MASK, 0, NULL);
  if (redacted == NULL)
    return queried;
  g_free (queried);
  return redacted;
}
