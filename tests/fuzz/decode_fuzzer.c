/* gst-spdl fuzz target: spdldecode's decode path
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Feeds arbitrary bytes through the decode path exactly as spdldecode calls
 * it: format sniffing, header check, geometry of the recipe, region decode,
 * resize, for JPEG, PNG and WebP alike. The first input byte picks the
 * recipe so the fuzzer explores all of them. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlimage.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static GstSpdlImageDecoder *dec = NULL;
  GstSpdlDecodeParams p;
  GstSpdlGeometry g;
  guint8 recipe = size ? data[0] : 0;
  guint w, h;
  guint8 *out;

  if (dec == NULL)
    dec = gst_spdl_image_decoder_new ();
  gst_spdl_decode_params_init (&p);
  p.max_pixels = 4 * 1000 * 1000;       /* keep the fuzzer fast */
  p.width = 8 + (recipe & 0x1f);
  p.height = 8 + ((recipe >> 2) & 0x1f);
  p.mode = (recipe >> 5) % 3;
  p.flip = (recipe >> 4) & 1;
  p.gray = (recipe >> 7) & 1;
  p.dct_scaling = (recipe & 1) == 0;
  p.region_decode = (recipe & 2) == 0;
  p.resize_shorter = p.mode == GST_SPDL_RESIZE_CENTER_CROP ? 40 : 0;
  p.seed = recipe;
  if (size > 0) {
    data++;
    size--;
  }
  if (!gst_spdl_image_decoder_open (dec, data, size, p.max_pixels, &w, &h,
          NULL))
    return 0;
  if (!gst_spdl_geometry_compute (&g, &p, w, h, 0, size))
    return 0;
  out = g_malloc ((gsize) g.out_width * g.out_height * 3);
  gst_spdl_image_decoder_decode (dec, &p, &g, out, (gsize) g.out_width *
      (p.gray ? 1 : 3), NULL);
  g_free (out);
  return 0;
}
