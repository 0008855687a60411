/* gst-spdl fuzz target: spdldecode's decode path
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Feeds arbitrary bytes through the decode path exactly as spdldecode calls
 * it: format sniffing, header check, geometry of the recipe, region
 * decode, resize, for JPEG, PNG, WebP, BMP, GIF and TIFF alike. The
 * first two input bytes pick the recipe so the fuzzer explores all of them:
 *
 *   byte 0: sizes, mode (stretch, center-crop, random-resized-crop), flip,
 *           gray, DCT scaling, region decoding, seed
 *   byte 1: which sides are given (the missing ones follow the aspect
 *           ratio: width only, height only, neither), resize-shorter (on,
 *           off), small sizes or ones like training recipes'
 *
 * Byte 1 = 0 is the recipe byte 0 alone picked before byte 1 existed.
 * The same bytes then go through the same geometry as a label field (a
 * mask: gstspdllabel.h), as spdldecode decodes a record's labels. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlimage.h"
#include "gstspdllabel.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

#define GEOMETRY_NO_WIDTH 0x01
#define GEOMETRY_NO_HEIGHT 0x02
#define GEOMETRY_NO_RESIZE_SHORTER 0x04
#define GEOMETRY_LARGE 0x08     /* sizes of real recipes (224, 256, ...) */

static void
params_from_bytes (GstSpdlDecodeParams * p, guint8 recipe, guint8 geometry)
{
  guint scale = geometry & GEOMETRY_LARGE ? 7 : 1;

  gst_spdl_decode_params_init (p);
  p->max_pixels = 4 * 1000 * 1000;      /* keep the fuzzer fast */
  p->width = (8 + (recipe & 0x1f)) * scale;
  p->height = (8 + ((recipe >> 2) & 0x1f)) * scale;
  p->mode = (recipe >> 5) % 3;
  p->flip = (recipe >> 4) & 1;
  p->gray = (recipe >> 7) & 1;
  p->dct_scaling = (recipe & 1) == 0;
  p->region_decode = (recipe & 2) == 0;
  /* a quarter of the inputs through the fast path (exact=false) */
  p->exact = ((geometry >> 4) & 3) != 3;
  p->seed = recipe;
  if (geometry & GEOMETRY_NO_WIDTH)
    p->width = 0;
  if (geometry & GEOMETRY_NO_HEIGHT)
    p->height = 0;
  if (p->mode == GST_SPDL_RESIZE_CENTER_CROP &&
      !(geometry & GEOMETRY_NO_RESIZE_SHORTER))
    p->resize_shorter = (40 + 4 * (geometry >> 4)) * scale;
}

/* as spdldecode decodes a label field of an image of @w x @h */
static void
decode_label (const guint8 * data, gsize size,
    const GstSpdlDecodeParams * p, const GstSpdlGeometry * g, guint w,
    guint h)
{
  GstSpdlLabelImage label;
  guint8 *out;

  if (!gst_spdl_label_image_decode (&label, data, size, p->max_pixels, NULL))
    return;
  if (label.width == w && label.height == h) {
    out = g_malloc ((gsize) g->out_width * g->out_height *
        label.bytes_per_pixel);
    gst_spdl_label_image_resample (&label, g, out);
    g_free (out);
  }
  gst_spdl_label_image_clear (&label);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static GstSpdlImageDecoder *dec = NULL;
  GstSpdlDecodeParams p;
  GstSpdlGeometry g;
  guint w, h;
  guint8 *out;

  if (size < 2)
    return 0;
  if (dec == NULL)
    dec = gst_spdl_image_decoder_new ();
  params_from_bytes (&p, data[0], data[1]);
  data += 2;
  size -= 2;
  if (!gst_spdl_image_decoder_open (dec, data, size, p.max_pixels, &w, &h,
          NULL))
    return 0;
  if (!gst_spdl_geometry_compute (&g, &p, w, h, 0, size))
    return 0;
  /* as spdldecode bounds and sizes its output frame */
  if (!gst_spdl_geometry_check_output (&g, &p, NULL))
    return 0;
  out = g_malloc ((gsize) g.out_width * g.out_height * 3);
  gst_spdl_image_decoder_decode (dec, &p, &g, out, (gsize) g.out_width *
      (p.gray ? 1 : 3), NULL);
  g_free (out);
  decode_label (data, size, &p, &g, w, h);
  return 0;
}
