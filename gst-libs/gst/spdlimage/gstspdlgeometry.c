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
  params->pad_value = 114;
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

/* torchvision's Resize (size, max_size) (_compute_resized_output_size):
 * the shorter side to @size, the longer one following with int (), then
 * both scaled down again with int () when the longer passes @max_size;
 * without a size, the longer side to @max_size (Resize (None, max_size)).
 * The products are exact integers, so the doubles' quotients are
 * Python's. */
static void
shorter_side (GstSpdlGeometry * g, const GstSpdlDecodeParams * p, guint iw,
    guint ih, GstSpdlRng * rng)
{
  guint64 size = p->n_sizes ? p->sizes[gst_spdl_rng_below (rng,
          p->n_sizes)] : p->resize_shorter;
  guint64 shorter = MIN (iw, ih), longer = MAX (iw, ih);
  guint64 new_short = size, new_long;

  if (size == 0 && p->max_size) {
    /* Resize (None, max_size): the longer side to max_size */
    new_short = (guint64) ((gdouble) (p->max_size * shorter) / longer);
    new_long = p->max_size;
  } else if (size == 0) {       /* nothing asked: keep the image */
    new_short = shorter;
    new_long = longer;
  } else {
    new_long = (guint64) ((gdouble) (new_short * longer) / shorter);
  }
  if (size && p->max_size && new_long > p->max_size) {
    new_short = (guint64) ((gdouble) (p->max_size * new_short) / new_long);
    new_long = p->max_size;
  }
  new_short = MAX (new_short, 1);
  new_long = MAX (new_long, 1);
  g->out_width = iw <= ih ? new_short : new_long;
  g->out_height = iw <= ih ? new_long : new_short;
  g->scale_x = (gdouble) iw / g->out_width;
  g->scale_y = (gdouble) ih / g->out_height;
}

/* Python's round () of a double: half to even, as nearbyint () in the
 * default rounding mode */
static guint
round_double (gdouble x)
{
  return (guint) MAX (nearbyint (x), 1.0);
}

/* ultralytics' LetterBox (center, scaleup): r = min (W / w, H / h), the
 * image resized to round (w * r) x round (h * r), padded to W x H with
 * (W - new) // 2 before it (int (round (dw / 2 - 0.1))), the rest after. */
static void
letterbox (GstSpdlGeometry * g, const GstSpdlDecodeParams * p, guint iw,
    guint ih)
{
  gdouble r = MIN ((gdouble) p->width / iw, (gdouble) p->height / ih);
  guint rw = MIN (round_double (iw * r), p->width);
  guint rh = MIN (round_double (ih * r), p->height);

  g->out_width = p->width;
  g->out_height = p->height;
  g->letterbox = TRUE;
  center_crop_axis (iw, rw, g->out_width, &g->scale_x, &g->offset_x,
      &g->virtual_width);
  center_crop_axis (ih, rh, g->out_height, &g->scale_y, &g->offset_y,
      &g->virtual_height);
}

gchar *
gst_spdl_decode_params_check (const GstSpdlDecodeParams * p)
{
  guint i;

  if (p->mode == GST_SPDL_RESIZE_LETTERBOX && (p->width == 0 ||
          p->height == 0))
    return g_strdup ("mode=letterbox needs width and height");
  if (p->mode != GST_SPDL_RESIZE_SHORTER)
    return NULL;
  if (p->width || p->height)
    return g_strdup_printf ("mode=shorter keeps the aspect ratio: width "
        "and height must be 0 (they are %u and %u); the size is "
        "resize-shorter, sizes and max-size", p->width, p->height);
  if (p->max_size == 0)
    return NULL;
  if (p->n_sizes == 0 && p->max_size <= p->resize_shorter)
    return g_strdup_printf ("max-size=%u must be larger than "
        "resize-shorter=%u", p->max_size, p->resize_shorter);
  for (i = 0; i < p->n_sizes; i++)
    if (p->max_size <= p->sizes[i])
      return g_strdup_printf ("max-size=%u must be larger than each of "
          "sizes (%u)", p->max_size, p->sizes[i]);
  return NULL;
}

/* One axis of the output: [*start, *end) is the resized image, the rest
 * padding (the whole axis without a virtual size). */
static void
image_span (guint out, gdouble offset, gint64 virtual_size, gboolean flip,
    guint * start, guint * end)
{
  gint64 s, e;

  if (virtual_size == G_MAXINT64) {
    *start = 0;
    *end = out;
    return;
  }
  s = CLAMP ((gint64) - offset, 0, out);
  e = CLAMP ((gint64) - offset + virtual_size, s, out);
  if (flip) {
    gint64 t = out - e;
    e = out - s;
    s = t;
  }
  *start = s;
  *end = e;
}

void
gst_spdl_geometry_fill_padding (const GstSpdlGeometry * g,
    guint8 * const *planes, const gsize * strides, guint n_planes,
    guint bytes_per_pixel, guint8 value)
{
  guint x0, x1, y0, y1, y, i;
  gsize row = (gsize) g->out_width * bytes_per_pixel;

  image_span (g->out_width, g->offset_x, g->virtual_width, g->flip, &x0, &x1);
  image_span (g->out_height, g->offset_y, g->virtual_height, FALSE, &y0, &y1);
  for (i = 0; i < n_planes; i++) {
    for (y = 0; y < g->out_height; y++) {
      guint8 *line = planes[i] + (gsize) y * strides[i];

      if (y < y0 || y >= y1 || x0 == x1) {
        memset (line, value, row);
        continue;
      }
      memset (line, value, (gsize) x0 * bytes_per_pixel);
      memset (line + (gsize) x1 * bytes_per_pixel, value,
          (gsize) (g->out_width - x1) * bytes_per_pixel);
    }
  }
}

guint64
gst_spdl_decode_params_output_limit (const GstSpdlDecodeParams * p)
{
  guint64 side = MAX (MAX (p->width, p->height), p->resize_shorter);
  guint i;

  side = MAX (side, p->max_size);
  for (i = 0; i < p->n_sizes; i++)
    side = MAX (side, p->sizes[i]);

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
    case GST_SPDL_RESIZE_SHORTER:
      shorter_side (g, p, iw, ih, &rng);
      break;
    case GST_SPDL_RESIZE_LETTERBOX:
      letterbox (g, p, iw, ih);
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
