/* GStreamer SPDL plugin: image formats and the decoder that dispatches on them
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The format is told by the data's signature alone, so that a PNG named
 * .jpg decodes and a text file named .png is named for what it is. Formats
 * torchvision lists that no decoder here reads are skipped by reason
 * (unsupported-format), named in the message. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlimage.h"
#include "gstspdlpng.h"
#include "gstspdlwebp.h"

#include <string.h>

GstSpdlImageFormat
gst_spdl_image_format_sniff (const guint8 * data, gsize size)
{
  static const guint8 png[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

  if (size >= 2 && data[0] == 0xFF && data[1] == 0xD8)
    return GST_SPDL_IMAGE_FORMAT_JPEG;
  if (size >= 8 && memcmp (data, png, 8) == 0)
    return GST_SPDL_IMAGE_FORMAT_PNG;
  if (size >= 12 && memcmp (data, "RIFF", 4) == 0 &&
      memcmp (data + 8, "WEBP", 4) == 0)
    return GST_SPDL_IMAGE_FORMAT_WEBP;
  if (size >= 6 && (memcmp (data, "GIF87a", 6) == 0 ||
          memcmp (data, "GIF89a", 6) == 0))
    return GST_SPDL_IMAGE_FORMAT_GIF;
  if (size >= 14 && data[0] == 'B' && data[1] == 'M')
    return GST_SPDL_IMAGE_FORMAT_BMP;
  if (size >= 4 && (memcmp (data, "II*\0", 4) == 0 ||
          memcmp (data, "MM\0*", 4) == 0))
    return GST_SPDL_IMAGE_FORMAT_TIFF;
  if (size >= 3 && data[0] == 'P' && data[1] >= '1' && data[1] <= '7' &&
      g_ascii_isspace (data[2]))
    return GST_SPDL_IMAGE_FORMAT_PNM;
  return GST_SPDL_IMAGE_FORMAT_UNKNOWN;
}

const gchar *
gst_spdl_image_format_name (GstSpdlImageFormat format)
{
  static const gchar *names[] = {
    "unknown", "JPEG", "PNG", "WebP", "GIF", "BMP", "TIFF", "PPM/PGM/PBM",
  };

  if ((guint) format >= G_N_ELEMENTS (names))
    return "unknown";
  return names[format];
}

/* ------------------------------------------------------------------------ */

struct _GstSpdlImageDecoder
{
  GstSpdlImageFormat format;    /* of the image opened */
  GstSpdlJpegDecoder *jpeg;
  GstSpdlPngDecoder *png;
  GstSpdlWebpDecoder *webp;
};

void
gst_spdl_image_decoder_set_limits (GstSpdlImageDecoder * dec,
    guint64 max_memory, guint max_scans)
{
  gst_spdl_jpeg_decoder_set_limits (dec->jpeg, max_memory, max_scans);
  gst_spdl_png_decoder_set_max_memory (dec->png, max_memory);
  gst_spdl_webp_decoder_set_max_memory (dec->webp, max_memory);
}

GstSpdlImageDecoder *
gst_spdl_image_decoder_new (void)
{
  GstSpdlImageDecoder *dec = g_new0 (GstSpdlImageDecoder, 1);

  dec->jpeg = gst_spdl_jpeg_decoder_new ();
  dec->png = gst_spdl_png_decoder_new ();
  dec->webp = gst_spdl_webp_decoder_new ();
  return dec;
}

void
gst_spdl_image_decoder_free (GstSpdlImageDecoder * dec)
{
  if (dec == NULL)
    return;
  gst_spdl_jpeg_decoder_free (dec->jpeg);
  gst_spdl_png_decoder_free (dec->png);
  gst_spdl_webp_decoder_free (dec->webp);
  g_free (dec);
}

gboolean
gst_spdl_image_decoder_open (GstSpdlImageDecoder * dec, const guint8 * data,
    gsize size, guint64 max_pixels, guint * width, guint * height,
    GError ** error)
{
  dec->format = gst_spdl_image_format_sniff (data, size);
  switch (dec->format) {
    case GST_SPDL_IMAGE_FORMAT_PNG:
      return gst_spdl_png_decoder_open (dec->png, data, size, max_pixels,
          width, height, error);
    case GST_SPDL_IMAGE_FORMAT_WEBP:
      return gst_spdl_webp_decoder_open (dec->webp, data, size, max_pixels,
          width, height, error);
    case GST_SPDL_IMAGE_FORMAT_GIF:
    case GST_SPDL_IMAGE_FORMAT_BMP:
    case GST_SPDL_IMAGE_FORMAT_TIFF:
    case GST_SPDL_IMAGE_FORMAT_PNM:
      g_set_error (error, GST_SPDL_DECODE_ERROR,
          GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT,
          "a %s image: no decoder for this format (JPEG, PNG and WebP are "
          "decoded)", gst_spdl_image_format_name (dec->format));
      return FALSE;
    default:
      /* JPEG, and data of no known format: the JPEG decoder says why */
      return gst_spdl_jpeg_decoder_open (dec->jpeg, data, size, max_pixels,
          width, height, error);
  }
}

gboolean
gst_spdl_image_decoder_decode (GstSpdlImageDecoder * dec,
    const GstSpdlDecodeParams * params, const GstSpdlGeometry * geom,
    guint8 * out, gsize stride, GError ** error)
{
  GstSpdlOutput packed;

  gst_spdl_output_init_packed (&packed, out, stride);
  return gst_spdl_image_decoder_decode_to (dec, params, geom, &packed, error);
}

gboolean
gst_spdl_image_decoder_decode_to (GstSpdlImageDecoder * dec,
    const GstSpdlDecodeParams * params, const GstSpdlGeometry * geom,
    const GstSpdlOutput * out, GError ** error)
{
  switch (dec->format) {
    case GST_SPDL_IMAGE_FORMAT_PNG:
      return gst_spdl_png_decoder_decode (dec->png, params, geom, out, error);
    case GST_SPDL_IMAGE_FORMAT_WEBP:
      return gst_spdl_webp_decoder_decode (dec->webp, params, geom, out,
          error);
    default:
      return gst_spdl_jpeg_decoder_decode_to (dec->jpeg, params, geom, out,
          error);
  }
}

GstSpdlImageFormat
gst_spdl_image_decoder_get_format (GstSpdlImageDecoder * dec)
{
  return dec->format;
}

/* ------------------------------------------------------------------------ */
/* Rows to the resampler                                                    */

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

void
gst_spdl_row_sink_plan (GstSpdlRowSink * sink, const GstSpdlOutput * out,
    const GstSpdlGeometry * g, guint width, guint height, guint channels,
    gboolean fast)
{
  sink->haxis = gst_spdl_resample_axis_cache_get (&sink->axes, g->clip_x,
      MAX (g->clip_width, 1), g->scale_x, g->offset_x, g->out_width,
      g->virtual_width, g->flip, fast);
  sink->vaxis = gst_spdl_resample_axis_cache_get (&sink->axes, g->clip_y,
      MAX (g->clip_height, 1), g->scale_y, g->offset_y, g->out_height,
      g->virtual_height, FALSE, fast);
  sink->width = width;
  sink->channels = channels;
  sink->hrow_bytes = (gsize) sink->haxis->out_size * channels;
  if (!gst_spdl_resample_axis_range (sink->haxis, &sink->x0, &sink->x1) ||
      !gst_spdl_resample_axis_range (sink->vaxis, &sink->y0, &sink->y1)) {
    /* all padding: a black output, no row needed */
    sink->y0 = sink->y1 = 0;
    return;
  }
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
