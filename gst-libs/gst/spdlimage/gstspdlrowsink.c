/* GStreamer SPDL: whole decoded rows into a resized output
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* For the codecs that hand out whole rows (PNG, WebP, BMP, GIF, TIFF):
 * each row is converted to the output's channels as PIL's convert() does
 * and resampled horizontally as it arrives, then vertically as soon as an
 * output row's rows are in, so memory is bounded by the output's width. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlrowsink.h"

guint8 *
gst_spdl_ensure_buffer (guint8 ** buf, gsize * size, gsize need)
{
  if (*size < need) {
    g_free (*buf);
    *buf = g_malloc0 (need);
    *size = need;
  }
  return *buf;
}

guint8 *
gst_spdl_try_ensure_buffer (guint8 ** buf, gsize * size, gsize need)
{
  if (*size < need) {
    g_free (*buf);
    *buf = g_try_malloc0 (need);
    *size = *buf ? need : 0;
  }
  return *buf;
}

/* 16 MiB: a 2000 x 2000 RGBA image */
#define LARGE_BUFFER (16 * 1024 * 1024)

void
gst_spdl_release_large_buffer (guint8 ** buf, gsize * size)
{
  if (*size > LARGE_BUFFER) {
    g_clear_pointer (buf, g_free);
    *size = 0;
  }
}

static gboolean
plan_axes (GstSpdlRowSink * sink, const GstSpdlGeometry * g, gboolean fast)
{
  sink->haxis = gst_spdl_resample_axis_cache_get (&sink->axes, g->clip_x,
      MAX (g->clip_width, 1), g->scale_x, g->offset_x, g->out_width,
      g->virtual_width, g->flip, fast);
  sink->vaxis = gst_spdl_resample_axis_cache_get (&sink->axes, g->clip_y,
      MAX (g->clip_height, 1), g->scale_y, g->offset_y, g->out_height,
      g->virtual_height, FALSE, fast);
  if (!gst_spdl_resample_axis_range (sink->haxis, &sink->x0, &sink->x1) ||
      !gst_spdl_resample_axis_range (sink->vaxis, &sink->y0, &sink->y1)) {
    /* all padding: a black output, no row needed */
    sink->y0 = sink->y1 = 0;
    return FALSE;
  }
  return TRUE;
}

gboolean
gst_spdl_row_sink_window (GstSpdlRowSink * sink, const GstSpdlGeometry * g,
    gboolean fast, gint * x0, gint * x1, gint * y0, gint * y1)
{
  if (!plan_axes (sink, g, fast))
    return FALSE;
  *x0 = sink->x0;
  *x1 = sink->x1;
  *y0 = sink->y0;
  *y1 = sink->y1;
  return TRUE;
}

void
gst_spdl_row_sink_plan (GstSpdlRowSink * sink, const GstSpdlOutput * out,
    const GstSpdlGeometry * g, guint width, guint height, guint channels,
    gboolean fast)
{
  gboolean any = plan_axes (sink, g, fast);

  sink->width = width;
  sink->channels = channels;
  sink->hrow_bytes = (gsize) sink->haxis->out_size * channels;
  if (!any)
    return;
  gst_spdl_row_ring_begin (&sink->ring, out, sink->vaxis, sink->y0,
      sink->hrow_bytes, channels);
  gst_spdl_ensure_buffer (&sink->conv, &sink->conv_size,
      (gsize) width * channels + 16);
}

/* bytes per pixel, offsets of R, G, B, and whether a gray sample is 16-bit
 * big-endian that PIL's "I" -> RGB conversion clips to 255 */
static const struct
{
  guint8 step, r, g, b;
  gboolean gray, clip16;
} pixel_layouts[] = {
  [GST_SPDL_PIXELS_GRAY] = {1, 0, 0, 0, TRUE, FALSE},
  [GST_SPDL_PIXELS_GRAY_ALPHA] = {2, 0, 0, 0, TRUE, FALSE},
  [GST_SPDL_PIXELS_RGB] = {3, 0, 1, 2, FALSE, FALSE},
  [GST_SPDL_PIXELS_RGBA] = {4, 0, 1, 2, FALSE, FALSE},
  [GST_SPDL_PIXELS_GRAY16] = {2, 0, 0, 0, TRUE, TRUE},
  [GST_SPDL_PIXELS_GRAY_ALPHA16] = {4, 0, 0, 0, TRUE, FALSE},
  [GST_SPDL_PIXELS_RGB16] = {6, 0, 2, 4, FALSE, FALSE},
  [GST_SPDL_PIXELS_RGBA16] = {8, 0, 2, 4, FALSE, FALSE},
};

/* PIL's convert("RGB") or convert("L"): alpha dropped (not composited),
 * 16-bit samples by their high byte, except 16-bit gray ("I"), clipped */
static void
convert_row (const guint8 * in, GstSpdlPixels pixels, guint n, guint channels,
    guint8 * out)
{
  guint step = pixel_layouts[pixels].step;
  guint ro = pixel_layouts[pixels].r, go = pixel_layouts[pixels].g;
  guint bo = pixel_layouts[pixels].b;
  gboolean gray = pixel_layouts[pixels].gray;
  gboolean clip16 = pixel_layouts[pixels].clip16;
  guint i;

  for (i = 0; i < n; i++, in += step) {
    guint r, g, b;

    if (clip16)
      r = g = b = in[0] ? 255 : in[1];
    else {
      r = in[ro];
      g = in[go];
      b = in[bo];
    }
    if (channels == 3) {
      out[3 * i] = r;
      out[3 * i + 1] = g;
      out[3 * i + 2] = b;
    } else {
      out[i] = gray ? r : (guint8) ((r * 19595 + g * 38470 + b * 7471 +
              0x8000) >> 16);
    }
  }
}

void
gst_spdl_row_sink_push (GstSpdlRowSink * sink, gint y, const guint8 * row,
    GstSpdlPixels pixels)
{
  if (!gst_spdl_row_sink_wants (sink, y))
    return;
  if (!((pixels == GST_SPDL_PIXELS_RGB && sink->channels == 3) ||
          (pixels == GST_SPDL_PIXELS_GRAY && sink->channels == 1))) {
    convert_row (row, pixels, sink->width, sink->channels, sink->conv);
    row = sink->conv;
  }
  gst_spdl_resample_row (sink->haxis, row, 0, sink->channels,
      gst_spdl_row_ring_row (&sink->ring, y));
  gst_spdl_row_ring_commit (&sink->ring, y);
}

void
gst_spdl_row_sink_finish (GstSpdlRowSink * sink, const GstSpdlOutput * out)
{
  if (sink->y1 == 0)
    gst_spdl_output_fill_black (out, sink->vaxis->out_size,
        sink->haxis->out_size, sink->channels);
  else
    /* the decoders push every row of [y0, y1) */
    g_warn_if_fail (gst_spdl_row_ring_finish (&sink->ring));
}

void
gst_spdl_row_sink_clear (GstSpdlRowSink * sink)
{
  gst_spdl_resample_axis_cache_clear (&sink->axes);
  gst_spdl_row_ring_clear (&sink->ring);
  g_clear_pointer (&sink->conv, g_free);
  sink->conv_size = 0;
}
