/* gst-spdl fuzz target: dataset manifests
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* A manifest ("relative/path<TAB>label" lines, URLs among the paths,
 * comments, a byte-order mark, CRLF, any bytes) through the code that
 * reads manifest files, gst_spdl_dataset_parse_manifest(). A listing
 * that succeeds is walked as spdlsrc walks it. */
#include <gst/gst.h>
#include <stdint.h>
#include <string.h>

#include "gstspdldataset.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static gboolean initialized = FALSE;
  GError *error = NULL;
  GstSpdlDataset *ds;
  guint i;

  if (!initialized) {
    /* GLib's warnings about an input are bugs too (a server could have
     * the loader log one for each line it sends): fatal */
    g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_WARNING |
        G_LOG_LEVEL_CRITICAL);
    initialized = TRUE;
  }
  ds = gst_spdl_dataset_parse_manifest ("/data", (const gchar *) data, size,
      "fuzz.tsv", &error);
  if (ds == NULL) {
    g_assert (error != NULL && error->domain == GST_RESOURCE_ERROR);
    g_assert (g_utf8_validate (error->message, -1, NULL));
    g_error_free (error);
    return 0;
  }
  g_assert (error == NULL && ds->n_samples > 0);
  for (i = 0; i < ds->n_samples; i++) {
    gchar *full = gst_spdl_dataset_get_full_path (ds, i);

    g_assert (ds->labels[i] >= 0 && (guint) ds->labels[i] < ds->n_classes);
    g_assert (ds->offsets[i] < ds->arena_len);
    g_assert (*full != '\0');
    g_free (full);
  }
  gst_spdl_dataset_free (ds);
  return 0;
}
