/* GStreamer SPDL: the image decoder that dispatches on the format
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The only file that names every codec. The format is told by the data's
 * signature alone (gstspdlformat.h), so that a PNG named .jpg decodes and a
 * text file named .png is named for what it is. JPEG, PNG, WebP, BMP, GIF
 * and TIFF are decoded; PPM/PGM/PBM, which torchvision lists too, and
 * JPEG 2000, ICO and TGA, which PIL reads, are skipped by reason
 * (unsupported-format), named in the message. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlimage.h"
#include "gstspdlerrors.h"
#include "gstspdlbmp.h"
#include "gstspdlgif.h"
#include "gstspdljpeg.h"
#include "gstspdlpng.h"
#include "gstspdltiff.h"
#include "gstspdlwebp.h"

#define DECODED_FORMATS "JPEG, PNG, WebP, BMP, GIF and TIFF"

struct _GstSpdlImageDecoder
{
  GstSpdlImageFormat format;    /* of the image opened */
  GstSpdlJpegDecoder *jpeg;
  GstSpdlPngDecoder *png;
  GstSpdlWebpDecoder *webp;
  GstSpdlBmpDecoder *bmp;
  GstSpdlGifDecoder *gif;
  GstSpdlTiffDecoder *tiff;
};

void
gst_spdl_image_decoder_set_limits (GstSpdlImageDecoder * dec,
    guint64 max_memory, guint max_scans)
{
  gst_spdl_jpeg_decoder_set_limits (dec->jpeg, max_memory, max_scans);
  gst_spdl_png_decoder_set_max_memory (dec->png, max_memory);
  gst_spdl_webp_decoder_set_max_memory (dec->webp, max_memory);
  gst_spdl_bmp_decoder_set_max_memory (dec->bmp, max_memory);
  gst_spdl_gif_decoder_set_max_memory (dec->gif, max_memory);
  gst_spdl_tiff_decoder_set_max_memory (dec->tiff, max_memory);
}

GstSpdlImageDecoder *
gst_spdl_image_decoder_new (void)
{
  GstSpdlImageDecoder *dec = g_new0 (GstSpdlImageDecoder, 1);

  dec->jpeg = gst_spdl_jpeg_decoder_new ();
  dec->png = gst_spdl_png_decoder_new ();
  dec->webp = gst_spdl_webp_decoder_new ();
  dec->bmp = gst_spdl_bmp_decoder_new ();
  dec->gif = gst_spdl_gif_decoder_new ();
  dec->tiff = gst_spdl_tiff_decoder_new ();
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
  gst_spdl_bmp_decoder_free (dec->bmp);
  gst_spdl_gif_decoder_free (dec->gif);
  gst_spdl_tiff_decoder_free (dec->tiff);
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
    case GST_SPDL_IMAGE_FORMAT_BMP:
      return gst_spdl_bmp_decoder_open (dec->bmp, data, size, max_pixels,
          width, height, error);
    case GST_SPDL_IMAGE_FORMAT_GIF:
      return gst_spdl_gif_decoder_open (dec->gif, data, size, max_pixels,
          width, height, error);
    case GST_SPDL_IMAGE_FORMAT_TIFF:
      return gst_spdl_tiff_decoder_open (dec->tiff, data, size, max_pixels,
          width, height, error);
    case GST_SPDL_IMAGE_FORMAT_PNM:
    case GST_SPDL_IMAGE_FORMAT_JPEG2000:
    case GST_SPDL_IMAGE_FORMAT_ICO:
    case GST_SPDL_IMAGE_FORMAT_TGA:
      g_set_error (error, GST_SPDL_DECODE_ERROR,
          GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT,
          "a %s image: no decoder for this format (" DECODED_FORMATS
          " are decoded)", gst_spdl_image_format_name (dec->format));
      return FALSE;
    case GST_SPDL_IMAGE_FORMAT_UNKNOWN:
      if (size > 0) {
        g_set_error (error, GST_SPDL_DECODE_ERROR,
            GST_SPDL_DECODE_ERROR_NOT_JPEG, "not a JPEG file, nor any "
            "format decoded here (" DECODED_FORMATS "): no known signature");
        return FALSE;
      }
      /* the JPEG decoder says the file is empty */
      G_GNUC_FALLTHROUGH;
    default:
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
    case GST_SPDL_IMAGE_FORMAT_BMP:
      return gst_spdl_bmp_decoder_decode (dec->bmp, params, geom, out, error);
    case GST_SPDL_IMAGE_FORMAT_GIF:
      return gst_spdl_gif_decoder_decode (dec->gif, params, geom, out, error);
    case GST_SPDL_IMAGE_FORMAT_TIFF:
      return gst_spdl_tiff_decoder_decode (dec->tiff, params, geom, out,
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
