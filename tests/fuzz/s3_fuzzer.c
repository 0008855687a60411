/* gst-spdl fuzz target: S3's XML answers
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* What an S3 endpoint answers, any bytes: an error body (kept up to 8 KiB
 * by the HTTP client, not NUL-terminated) through
 * gst_spdl_aws_parse_error(), and a ListObjectsV2 page through
 * gst_spdl_s3_parse_list_page() as gst_spdl_http_s3_list() calls it, its
 * bounds checked. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlawserror.h"
#include "gstspdls3.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

/* as gstspdlhttp.c keeps of an error body */
#define MAX_ERROR_BODY (8 * 1024)

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static gboolean initialized = FALSE;
  /* an exact-size copy: reads past the end are caught (NULL when empty,
   * as an empty body's GBytes data) */
  gchar *body = g_memdup2 (data, size);
  gchar *code = NULL, *message = NULL, *next_token = (gchar *) "unset";
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  gboolean truncated = TRUE;
  GError *error = NULL;
  guint max_keys, i;

  if (!initialized) {
    /* GLib's warnings about an input are bugs too (a server could have
     * the loader log one for each line it sends): fatal */
    g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_WARNING |
        G_LOG_LEVEL_CRITICAL);
    initialized = TRUE;
  }
  if (gst_spdl_aws_parse_error (body, MIN (size, MAX_ERROR_BODY), &code,
          &message)) {
    /* what ends up in an error message: short, valid UTF-8 */
    g_assert (code && *code && g_utf8_validate (code, -1, NULL));
    g_assert (strlen (code) <= 4 * 512);
    g_assert (message == NULL || (g_utf8_validate (message, -1, NULL) &&
            strlen (message) <= 4 * 512));
  } else {
    g_assert (code == NULL && message == NULL);
  }
  g_free (code);
  g_free (message);

  /* a listing's bound, and one small enough to be reached */
  max_keys = size % 2 ? GST_SPDL_S3_MAX_LIST_KEYS : 16;
  if (gst_spdl_s3_parse_list_page (body, size, keys, max_keys, &truncated,
          &next_token, &error)) {
    g_assert (error == NULL && keys->len <= max_keys);
    for (i = 0; i < keys->len; i++)
      g_assert (strlen (g_ptr_array_index (keys, i)) <=
          GST_SPDL_S3_MAX_KEY_LENGTH);
  } else {
    g_assert (error != NULL && !truncated && next_token == NULL);
    g_clear_error (&error);
  }
  g_free (next_token);
  g_ptr_array_unref (keys);
  g_free (body);
  return 0;
}
