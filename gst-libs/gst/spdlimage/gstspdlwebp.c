/* GStreamer SPDL: WebP decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* libwebp decodes lossy, lossless and alpha images to RGB in one call (into
 * a buffer bounded by max-pixels, checked on the header first); the rows
 * are then resampled as the JPEG path's are. An animation gives its first
 * frame, composed on its canvas by libwebpdemux's animation decoder, as
 * PIL (which decodes every WebP that way) does; alpha is dropped, not
 * composited, as PIL's convert("RGB") does. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlwebp.h"
#include "gstspdlrowsink.h"
#include "gstspdlerrors.h"

#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>

struct _GstSpdlWebpDecoder
{
  const guint8 *data;
  gsize size;
  guint width, height;
  gboolean animated;
  gboolean opened;
  GstSpdlRowSink sink;
  guint8 *pixels;               /* the decoded image, RGB */
  gsize pixels_size;
  guint64 max_memory;           /* for the whole image; 0: none */
};

GstSpdlWebpDecoder *
gst_spdl_webp_decoder_new (void)
{
  GstSpdlWebpDecoder *dec = g_new0 (GstSpdlWebpDecoder, 1);

  dec->max_memory = GST_SPDL_IMAGE_DEFAULT_MAX_MEMORY;
  return dec;
}

void
gst_spdl_webp_decoder_set_max_memory (GstSpdlWebpDecoder * dec,
    guint64 max_memory)
{
  dec->max_memory = max_memory;
}

/* WebP decodes whole images: @need bytes of them */
static gboolean
check_memory (GstSpdlWebpDecoder * dec, guint64 need, GError ** error)
{
  if (!dec->max_memory || need <= dec->max_memory)
    return TRUE;
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
      "%ux%u WebP needs %" G_GUINT64_FORMAT " MiB to decode, more than "
      "max-decode-memory=%" G_GUINT64_FORMAT " MiB", dec->width, dec->height,
      need >> 20, dec->max_memory >> 20);
}

void
gst_spdl_webp_decoder_free (GstSpdlWebpDecoder * dec)
{
  if (dec == NULL)
    return;
  gst_spdl_row_sink_clear (&dec->sink);
  g_free (dec->pixels);
  g_free (dec);
}

static gboolean
fail_status (GError ** error, VP8StatusCode status, const gchar * what)
{
  static const gchar *names[] = {
    "ok", "out of memory", "invalid parameter", "bitstream error",
    "unsupported feature", "suspended", "user abort", "not enough data",
  };
  const gchar *name = (guint) status < G_N_ELEMENTS (names) ?
      names[status] : "unknown error";

  switch (status) {
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "truncated: WebP %s: %s", what, name);
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
          "unsupported: WebP %s: %s", what, name);
    default:
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: WebP %s: %s", what, name);
  }
}

gboolean
gst_spdl_webp_decoder_open (GstSpdlWebpDecoder * dec, const guint8 * data,
    gsize size, guint64 max_pixels, guint * width, guint * height,
    GError ** error)
{
  WebPBitstreamFeatures features;
  VP8StatusCode status;
  guint64 riff_size, pixels;

  dec->opened = FALSE;
  /* the RIFF header says how long the file is */
  riff_size = ((guint64) data[4] | ((guint64) data[5] << 8) |
      ((guint64) data[6] << 16) | ((guint64) data[7] << 24)) + 8;
  if (size < riff_size)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
        "truncated: %" G_GSIZE_FORMAT " of the %" G_GUINT64_FORMAT
        " bytes the RIFF header announces", size, riff_size);
  status = WebPGetFeatures (data, size, &features);
  if (status != VP8_STATUS_OK)
    return fail_status (error, status, "header");
  pixels = (guint64) features.width * features.height;
  if (max_pixels && pixels > max_pixels)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%dx%d is %" G_GUINT64_FORMAT " pixels, more than max-pixels=%"
        G_GUINT64_FORMAT, features.width, features.height, pixels,
        max_pixels);
  dec->data = data;
  dec->size = size;
  dec->width = features.width;
  dec->height = features.height;
  dec->animated = features.has_animation;
  *width = dec->width;
  *height = dec->height;
  dec->opened = TRUE;
  return TRUE;
}

static gboolean
decode_still (GstSpdlWebpDecoder * dec, GError ** error)
{
  WebPDecoderConfig config;
  gsize stride = (gsize) dec->width * 3;
  VP8StatusCode status;
  gint y;

  if (!WebPInitDecoderConfig (&config))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "libwebp version mismatch");
  /* 16 bytes of slack: the SIMD row kernel loads 16 bytes per window */
  if (!check_memory (dec, (guint64) stride * dec->height + 16, error))
    return FALSE;
  if (!gst_spdl_try_ensure_buffer (&dec->pixels, &dec->pixels_size,
          stride * dec->height + 16))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u WebP: out of memory", dec->width, dec->height);
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = dec->pixels;
  config.output.u.RGBA.stride = stride;
  config.output.u.RGBA.size = stride * dec->height;
  status = WebPDecode (dec->data, dec->size, &config);
  WebPFreeDecBuffer (&config.output);
  if (status != VP8_STATUS_OK)
    return fail_status (error, status, "image data");
  for (y = dec->sink.y0; y < dec->sink.y1; y++)
    gst_spdl_row_sink_push (&dec->sink, y, dec->pixels + y * stride,
        GST_SPDL_PIXELS_RGB);
  return TRUE;
}

static gboolean
decode_first_frame (GstSpdlWebpDecoder * dec, GError ** error)
{
  WebPAnimDecoderOptions options;
  WebPData webp = {.bytes = dec->data,.size = dec->size };
  WebPAnimDecoder *anim;
  WebPAnimInfo info;
  guint8 *canvas;
  gint timestamp, y;
  gboolean ok = TRUE;

  /* libwebpdemux keeps an RGBA canvas and the previous one */
  if (!check_memory (dec, (guint64) dec->width * dec->height * 4 * 2, error))
    return FALSE;
  if (!WebPAnimDecoderOptionsInit (&options))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "libwebpdemux version mismatch");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  anim = WebPAnimDecoderNew (&webp, &options);
  if (anim == NULL)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: an invalid animated WebP");
  if (!WebPAnimDecoderGetInfo (anim, &info) ||
      info.canvas_width != dec->width || info.canvas_height != dec->height)
    ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: the animation's canvas is not the header's %ux%u",
        dec->width, dec->height);
  else if (!WebPAnimDecoderGetNext (anim, &canvas, &timestamp))
    ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: the animation's first frame does not decode");
  else {
    for (y = dec->sink.y0; y < dec->sink.y1; y++)
      gst_spdl_row_sink_push (&dec->sink, y,
          canvas + (gsize) y * dec->width * 4, GST_SPDL_PIXELS_RGBA);
  }
  WebPAnimDecoderDelete (anim);
  return ok;
}

gboolean
gst_spdl_webp_decoder_decode (GstSpdlWebpDecoder * dec,
    const GstSpdlDecodeParams * p, const GstSpdlGeometry * g,
    const GstSpdlOutput * out, GError ** error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (dec->opened, FALSE);
  dec->opened = FALSE;
  gst_spdl_row_sink_plan (&dec->sink, out, g, dec->width, dec->height,
      p->gray ? 1 : 3, !p->exact);
  if (dec->sink.y1 > 0)
    ok = dec->animated ? decode_first_frame (dec, error) :
        decode_still (dec, error);
  if (ok)
    gst_spdl_row_sink_finish (&dec->sink, out);
  gst_spdl_release_large_buffer (&dec->pixels, &dec->pixels_size);
  return ok;
}
