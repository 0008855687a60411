/* gst-spdl fuzz target: COCO instances files
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The first byte says whether images without annotations are dropped, the
 * rest is an annotations file read by gst_spdl_coco_parse() from a copy
 * of exactly its bytes (ASan sees a read past them). A refusal names the
 * file in UTF-8; a file read gives images sorted by strictly increasing
 * id, annotations that lie inside the input, each image's objects a JSON
 * array the validator takes, counts at least the warnings kept, and a
 * dataset of as many samples. */
#include <gst/gst.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlcoco.h"
#include "gstspdljson.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GError *error = NULL;
  GstSpdlCoco *coco;
  GstSpdlDataset *ds;
  GBytes *bytes;
  guint64 warned = 0, total = 0;
  guint i, r;

  if (size < 1)
    return 0;
  bytes = g_bytes_new (data + 1, size - 1);
  coco = gst_spdl_coco_parse (bytes, "fuzz.json", data[0] & 1, &error);
  g_bytes_unref (bytes);
  if (coco == NULL) {
    g_assert (error != NULL && error->domain == GST_RESOURCE_ERROR);
    g_assert (g_utf8_validate (error->message, -1, NULL));
    g_assert (strstr (error->message, "fuzz.json") != NULL);
    g_error_free (error);
    return 0;
  }
  g_assert (coco->n_images > 0);
  for (r = 0; r < GST_SPDL_COCO_N_REASONS; r++) {
    warned += MIN (coco->counts[r], GST_SPDL_COCO_WARNINGS_PER_REASON);
    total += coco->counts[r];
  }
  g_assert_cmpuint (coco->warnings->len, ==, warned);
  for (i = 0; i < coco->warnings->len; i++)
    g_assert (g_utf8_validate (g_ptr_array_index (coco->warnings, i), -1,
            NULL));
  g_assert (coco->first[0] == 0);
  g_assert (coco->first[coco->n_images] == coco->n_annotations);
  for (i = 0; i < coco->n_images; i++) {
    gsize len;
    gchar *objects, *why = NULL;

    g_assert (i == 0 || coco->image_ids[i - 1] < coco->image_ids[i]);
    g_assert (*gst_spdl_coco_get_file_name (coco, i) != '\0');
    g_assert (coco->first[i] <= coco->first[i + 1]);
    g_assert (!(data[0] & 1) || coco->first[i] < coco->first[i + 1]);
    objects = gst_spdl_coco_get_objects (coco, i, &len);
    g_assert (len == strlen (objects));
    if (!gst_spdl_json_validate (objects, len, &why))
      g_error ("image %u's objects are not JSON (%s): %s", i, why, objects);
    g_free (objects);
  }
  for (i = 0; i < 2 * coco->n_annotations; i += 2)
    g_assert (coco->spans[i] + coco->spans[i + 1] <= size - 1);
  ds = gst_spdl_coco_to_dataset (coco, "/images");
  g_assert (ds->n_samples == coco->n_images);
  gst_spdl_dataset_free (ds);
  gst_spdl_coco_free (coco);
  (void) total;
  return 0;
}
