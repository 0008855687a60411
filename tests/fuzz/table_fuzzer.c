/* gst-spdl fuzz target: manifests with a header (CSV, TSV, JSON Lines)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The first byte picks the format (CSV, TSV, JSON Lines), the rest is
 * the manifest, read by gst_spdl_dataset_parse_table() with fields of
 * every kind; a listing that succeeds is walked as spdlsrc walks it, each
 * field checked against its kind. */
#include <gst/gst.h>
#include <stdint.h>
#include <string.h>

#include "gstspdldataset.h"
#include "gstspdlrecord.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static gboolean initialized = FALSE;
  static GstSpdlRecord *record;
  GstSpdlDatasetOptions options = { NULL, };
  GError *error = NULL;
  GstSpdlDataset *ds;
  guint i, f;

  if (!initialized) {
    g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_WARNING |
        G_LOG_LEVEL_CRITICAL);
    record = gst_spdl_record_parse ("caption;text,score:float,id:int,"
        "meta:json,raw:bytes", GST_SPDL_MISSING_SKIP, NULL);
    g_assert (record != NULL);
    initialized = TRUE;
  }
  if (size < 1)
    return 0;
  options.record = record;
  ds = gst_spdl_dataset_parse_table ("/data", (const gchar *) data + 1,
      size - 1, data[0] % 3, "fuzz.csv", &options, &error);
  if (ds == NULL) {
    g_assert (error != NULL && error->domain == GST_RESOURCE_ERROR);
    g_assert (g_utf8_validate (error->message, -1, NULL));
    g_error_free (error);
    return 0;
  }
  g_assert (error == NULL && ds->n_samples > 0);
  g_assert (ds->n_fields == record->n_fields);
  for (i = 0; i < ds->n_samples; i++) {
    gchar *full = gst_spdl_dataset_get_full_path (ds, i);

    g_assert (ds->labels[i] >= -1 && ds->labels[i] < (gint) ds->n_classes);
    g_assert (ds->offsets[i] < ds->arena_len);
    g_assert (*full != '\0');
    g_free (full);
    for (f = 0; f < ds->n_fields; f++) {
      GValue value = G_VALUE_INIT;
      const guint8 *bytes;
      gsize len;

      if (!gst_spdl_dataset_get_field (ds, i, f, &bytes, &len))
        continue;
      g_assert (len > 0 && bytes + len <= (const guint8 *) ds->field_arena +
          ds->field_arena_len);
      if (gst_spdl_field_value_from_data (&value, record->fields[f].kind,
              bytes, len, NULL, &error)) {
        g_value_unset (&value);
      } else {
        g_assert (g_utf8_validate (error->message, -1, NULL));
        g_clear_error (&error);
      }
    }
  }
  gst_spdl_dataset_free (ds);
  return 0;
}
