/* GStreamer SPDL: what each image becomes, and where its output comes from
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The geometry of torchvision's transforms (Resize, CenterCrop,
 * RandomResizedCrop, RandomHorizontalFlip) as PIL computes it, shared by
 * every codec: it depends on the image's size and, for the random ones, on
 * (seed, epoch, index) alone, so a sample's crop never depends on which
 * thread decodes it or when. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlgeometry.h"
#include "gstspdlerrors.h"
#include "gstspdlrandom.h"

#include <math.h>
#include <string.h>

/* keyed stream of the decoder's random choices, apart from the shuffle's */
#define RANDOM_STREAM G_GUINT64_CONSTANT (0x5350444c00000000)

void
gst_spdl_decode_params_init (GstSpdlDecodeParams * params)
{
  memset (params, 0, sizeof (*params));
  params->mode = GST_SPDL_RESIZE_STRETCH;
  params->scale_min = 0.08;
  params->scale_max = 1.0;
  params->ratio_min = 3.0 / 4.0;
  params->ratio_max = 4.0 / 3.0;
  params->max_pixels = 100 * 1000 * 1000;
  params->dct_scaling = TRUE;
  params->region_decode = TRUE;
  params->exact = TRUE;
}

/* ------------------------------------------------------------------------ */
/* Geometry                                                                 */

/* Python's round() of half-integers: to even */
static gint64
round_half_even (gint64 twice)
{
  gint64 q = twice / 2;

  if (twice % 2 == 0)
    return q;
  return (q % 2 == 0) ? q : q + 1;
}

static void
full_image (GstSpdlGeometry * g, guint iw, guint ih)
{
  g->clip_x = g->clip_y = 0;
  g->clip_width = iw;
  g->clip_height = ih;
  g->offset_x = g->offset_y = 0;
  g->virtual_width = g->virtual_height = G_MAXINT64;
}

static void
fill_missing_size (guint * w, guint * h, guint sw, guint sh)
{
  if (*w == 0 && *h == 0) {
    *w = sw;
    *h = sh;
  } else if (*w == 0) {
    *w = MAX (1, (guint) floor ((gdouble) sw * *h / sh + 0.5));
  } else if (*h == 0) {
    *h = MAX (1, (guint) floor ((gdouble) sh * *w / sw + 0.5));
  }
}

/* torchvision's Resize(S) then CenterCrop(W, H): one axis. */
static void
center_crop_axis (guint image, guint resized, guint crop, gdouble * scale,
    gdouble * offset, gint64 * virtual_size)
{
  *scale = (gdouble) image / resized;
  *virtual_size = resized;
  if (crop <= resized)
    *offset = (gdouble) round_half_even ((gint64) resized - crop);
  else                          /* padded with zeros on both sides */
    *offset = -(gdouble) ((crop - resized) / 2);
}

static void
center_crop (GstSpdlGeometry * g, const GstSpdlDecodeParams * p, guint iw,
    guint ih)
{
  guint shorter = p->resize_shorter ? p->resize_shorter :
      MAX (p->width, p->height);
  guint rw, rh;

  if (shorter == 0) {           /* nothing asked: keep the image */
    g->out_width = iw;
    g->out_height = ih;
    g->scale_x = g->scale_y = 1.0;
    return;
  }
  /* torchvision: new_long = int(size * long / short) */
  if (iw <= ih) {
    rw = shorter;
    rh = (guint) ((gdouble) ((guint64) shorter * ih) / iw);
  } else {
    rh = shorter;
    rw = (guint) ((gdouble) ((guint64) shorter * iw) / ih);
  }
  rw = MAX (rw, 1);
  rh = MAX (rh, 1);
  g->out_width = p->width ? p->width : rw;
  g->out_height = p->height ? p->height : rh;
  center_crop_axis (iw, rw, g->out_width, &g->scale_x, &g->offset_x,
      &g->virtual_width);
  center_crop_axis (ih, rh, g->out_height, &g->scale_y, &g->offset_y,
      &g->virtual_height);
}

/* torchvision's RandomResizedCrop.get_params, drawing from @rng. */
static void
random_resized_crop (GstSpdlGeometry * g, const GstSpdlDecodeParams * p,
    guint iw, guint ih, GstSpdlRng * rng)
{
  gdouble area = (gdouble) iw * ih;
  gdouble log_lo = log (p->ratio_min), log_hi = log (p->ratio_max);
  gint64 w = 0, h = 0, x = 0, y = 0;
  gint attempt;
  gboolean found = FALSE;

  for (attempt = 0; attempt < 10 && !found; attempt++) {
    gdouble target = area * gst_spdl_rng_uniform (rng, p->scale_min,
        p->scale_max);
    gdouble aspect = exp (gst_spdl_rng_uniform (rng, log_lo, log_hi));

    w = (gint64) nearbyint (sqrt (target * aspect));
    h = (gint64) nearbyint (sqrt (target / aspect));
    if (w > 0 && w <= iw && h > 0 && h <= ih) {
      y = gst_spdl_rng_below (rng, ih - h + 1);
      x = gst_spdl_rng_below (rng, iw - w + 1);
      found = TRUE;
    }
  }
  if (!found) {                 /* fallback: central crop, ratio clamped */
    gdouble in_ratio = (gdouble) iw / ih;
    if (in_ratio < p->ratio_min) {
      w = iw;
      h = (gint64) nearbyint (w / p->ratio_min);
    } else if (in_ratio > p->ratio_max) {
      h = ih;
      w = (gint64) nearbyint (h * p->ratio_max);
    } else {
      w = iw;
      h = ih;
    }
    w = CLAMP (w, 1, iw);
    h = CLAMP (h, 1, ih);
    y = (ih - h) / 2;
    x = (iw - w) / 2;
  }
  g->clip_x = x;
  g->clip_y = y;
  g->clip_width = w;
  g->clip_height = h;
  g->out_width = p->width;
  g->out_height = p->height;
  fill_missing_size (&g->out_width, &g->out_height, w, h);
  g->scale_x = (gdouble) w / g->out_width;
  g->scale_y = (gdouble) h / g->out_height;
}

guint64
gst_spdl_decode_params_output_limit (const GstSpdlDecodeParams * p)
{
  guint64 side = MAX (MAX (p->width, p->height), p->resize_shorter);

  if (p->max_output_pixels)
    return p->max_output_pixels;
  if (side == 0)
    return p->max_pixels ? p->max_pixels : G_MAXUINT64;
  return 64 * side * side;
}

gboolean
gst_spdl_geometry_check_output (const GstSpdlGeometry * g,
    const GstSpdlDecodeParams * p, GError ** error)
{
  guint64 pixels = (guint64) g->out_width * g->out_height;
  guint64 limit = gst_spdl_decode_params_output_limit (p);

  if (pixels <= limit)
    return TRUE;
  g_set_error (error, GST_SPDL_DECODE_ERROR, GST_SPDL_DECODE_ERROR_TOO_LARGE,
      "the output would be %ux%u, %" G_GUINT64_FORMAT " pixels, more than "
      "max-output-pixels=%" G_GUINT64_FORMAT "%s", g->out_width,
      g->out_height, pixels, limit, p->max_output_pixels ? "" :
      " (automatic: 64 x the square of the size asked for)");
  return FALSE;
}

gboolean
gst_spdl_geometry_compute (GstSpdlGeometry * g,
    const GstSpdlDecodeParams * p, guint iw, guint ih, guint epoch,
    guint64 index)
{
  GstSpdlRng rng;

  memset (g, 0, sizeof (*g));
  if (iw == 0 || ih == 0)
    return FALSE;
  gst_spdl_rng_init (&rng, p->seed, RANDOM_STREAM | epoch, index);
  full_image (g, iw, ih);
  switch (p->mode) {
    case GST_SPDL_RESIZE_CENTER_CROP:
      center_crop (g, p, iw, ih);
      break;
    case GST_SPDL_RESIZE_RANDOM_RESIZED_CROP:
      random_resized_crop (g, p, iw, ih, &rng);
      break;
    case GST_SPDL_RESIZE_STRETCH:
    default:
      g->out_width = p->width;
      g->out_height = p->height;
      fill_missing_size (&g->out_width, &g->out_height, iw, ih);
      g->scale_x = (gdouble) iw / g->out_width;
      g->scale_y = (gdouble) ih / g->out_height;
      break;
  }
  g->flip = p->flip == GST_SPDL_FLIP_RANDOM_HORIZONTAL &&
      gst_spdl_rng_uniform (&rng, 0.0, 1.0) < 0.5;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* libjpeg glue                                                             */
