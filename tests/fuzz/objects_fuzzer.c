/* gst-spdl fuzz target: one image's COCO annotations (an objects field)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Any bytes as an objects field's JSON (a shard member, a sidecar, an
 * annotations file's image), for an image whose size, the geometry and
 * the masks switch come from the first 4 bytes: parsed with polygons and
 * RLE rasterized, transformed, sanitized. Never past the input (ASan),
 * never a crash or an abort on hostile boxes, polygons or RLE; a refusal
 * says why in UTF-8; what comes out holds together: n objects with boxes
 * inside the output after sanitizing, masks of 0 and 1 only. */
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlgeometry.h"
#include "gstspdlobjects.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GstSpdlDecodeParams params;
  GstSpdlGeometry geom;
  GstSpdlObjects objects;
  GstStructure *s;
  gchar *why = NULL;
  guint width, height, i;
  gboolean masks;

  if (size < 4)
    return 0;
  width = 1 + data[0] % 64;
  height = 1 + data[1] % 64;
  masks = data[2] & 1;
  gst_spdl_decode_params_init (&params);
  params.mode = (data[2] >> 1) % 3;
  params.flip = (data[2] >> 3) & 1;
  params.width = data[3] % 48;
  params.height = (data[3] >> 2) % 48;
  params.resize_shorter = data[3] % 5 == 0 ? 0 : 1 + data[3] % 40;
  if (!gst_spdl_objects_parse (&objects, (const gchar *) data + 4, size - 4,
          width, height, masks, &why)) {
    g_assert (why && g_utf8_validate (why, -1, NULL));
    g_free (why);
    return 0;
  }
  g_assert (objects.warnings == NULL ||
      g_utf8_validate (objects.warnings->str, -1, NULL));
  if (gst_spdl_geometry_compute (&geom, &params, width, height, 0, 0) &&
      (guint64) geom.out_width * geom.out_height <= 64 * 64 * 64) {
    gst_spdl_objects_transform (&objects, &geom);
    gst_spdl_objects_sanitize (&objects, 1.0, 1.0);
    for (i = 0; i < 4 * objects.n; i++) {
      g_assert (isfinite (objects.boxes[i]) && objects.boxes[i] >= 0);
      g_assert (objects.boxes[i] <= MAX (objects.width, objects.height));
    }
  }
  if (!gst_spdl_objects_rasterize (&objects, 0, &why)) {
    g_free (why);
    gst_spdl_objects_clear (&objects);
    return 0;
  }
  if (objects.masks)
    for (i = 0; i < objects.n * objects.width * objects.height; i++)
      g_assert (objects.masks[i] <= 1);
  s = gst_spdl_objects_to_structure (&objects);
  gst_structure_free (s);
  gst_spdl_objects_clear (&objects);
  return 0;
}
