/* GStreamer SPDL: TIFF decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* libtiff reads the first directory and decodes scanlines (uncompressed,
 * LZW, Deflate, PackBits, CCITT), straight from the data in memory; each
 * row is converted as PIL 9.4 unpacks and converts it (its OPEN_INFO
 * table: MinIsWhite inverted, 2- and 4-bit gray scaled, 16-bit gray
 * clipped as "I;16", 16-bit colour by its high byte, associated alpha
 * divided out, palettes by the high byte of the colormap, CMYK as PIL's
 * cmyk2rgb) and resampled, so only one row exists at a time and decoding
 * stops after the last row the crop reads; every strip is checked to lie
 * in the data first, so a cut-short file fails whichever rows the crop
 * keeps. PIL applies the Orientation tag: a flipped or rotated image is
 * decoded whole, then read out as PIL's transpose() would.
 * Refused as unsupported: tiles, separate planes, FillOrder 2, JPEG and
 * other compressions, float and signed samples, and the layouts PIL does
 * not read or reads otherwise (YCbCr, LAB, 12-bit, premultiplied 16-bit
 * colour, palette with alpha). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdltiff.h"
#include "gstspdlrowsink.h"
#include "gstspdlerrors.h"

#include <string.h>
#include <tiffio.h>

typedef enum
{
  KIND_GRAY,                    /* 1, 2, 4, 8 bits; LA: the first sample */
  KIND_GRAY16,                  /* PIL's "I;16": clipped to 255 */
  KIND_RGB,                     /* 8 bits, 3 to 6 samples */
  KIND_RGB_PREMULTIPLIED,       /* 8 bits, associated alpha */
  KIND_RGB16,                   /* by the high byte */
  KIND_PALETTE,                 /* 1, 2, 4, 8 bits */
  KIND_CMYK,                    /* 8 bits */
} Kind;

struct _GstSpdlTiffDecoder
{
  /* the image opened: libtiff stays open from open() to decode() */
  const guint8 *data;
  gsize size;
  toff_t pos;
  TIFF *tif;
  gchar message[200];           /* libtiff's first error */
  guint width, height;          /* as stored */
  guint out_width, out_height;  /* after the Orientation tag */
  guint orientation;            /* 2-8: PIL transposes; else 1 */
  Kind kind;
  guint bits, spp;
  gboolean invert;              /* MinIsWhite */
  guint8 palette[256 * 3];
  gboolean opened;
  /* the decode */
  GstSpdlRowSink sink;
  guint8 *scan;                 /* one scanline */
  gsize scan_size;
  guint8 *row;                  /* one converted row */
  gsize row_size;
  guint8 *image;                /* a transposed image, whole */
  gsize image_size;
  guint64 max_memory;
};

GstSpdlTiffDecoder *
gst_spdl_tiff_decoder_new (void)
{
  GstSpdlTiffDecoder *dec = g_new0 (GstSpdlTiffDecoder, 1);

  dec->max_memory = GST_SPDL_IMAGE_DEFAULT_MAX_MEMORY;
  return dec;
}

void
gst_spdl_tiff_decoder_set_max_memory (GstSpdlTiffDecoder * dec,
    guint64 max_memory)
{
  dec->max_memory = max_memory;
}

static void
close_tiff (GstSpdlTiffDecoder * dec)
{
  if (dec->tif)
    TIFFClose (dec->tif);
  dec->tif = NULL;
}

void
gst_spdl_tiff_decoder_free (GstSpdlTiffDecoder * dec)
{
  if (dec == NULL)
    return;
  close_tiff (dec);
  gst_spdl_row_sink_clear (&dec->sink);
  g_free (dec->scan);
  g_free (dec->row);
  g_free (dec->image);
  g_free (dec);
}

/* libtiff's I/O on the data in memory */
static tsize_t
read_proc (thandle_t h, tdata_t buf, tsize_t n)
{
  GstSpdlTiffDecoder *dec = h;
  gsize left = dec->pos < dec->size ? dec->size - dec->pos : 0;

  n = MIN ((gsize) n, left);
  memcpy (buf, dec->data + dec->pos, n);
  dec->pos += n;
  return n;
}

static tsize_t
write_proc (thandle_t h, tdata_t buf, tsize_t n)
{
  return -1;
}

static toff_t
seek_proc (thandle_t h, toff_t off, int whence)
{
  GstSpdlTiffDecoder *dec = h;

  if (whence == SEEK_CUR)
    off += dec->pos;
  else if (whence == SEEK_END)
    off += dec->size;
  dec->pos = off;
  return off;
}

static int
close_proc (thandle_t h)
{
  return 0;
}

static toff_t
size_proc (thandle_t h)
{
  return ((GstSpdlTiffDecoder *) h)->size;
}

/* Strips are read in place, never copied. */
static int
map_proc (thandle_t h, tdata_t * base, toff_t * size)
{
  GstSpdlTiffDecoder *dec = h;

  *base = (tdata_t) dec->data;
  *size = dec->size;
  return 1;
}

static void
unmap_proc (thandle_t h, tdata_t base, toff_t size)
{
}

/* libtiff's first error names what failed; warnings are dropped */
static int
on_error (TIFF * tif, void *user_data, const char *module, const char *fmt,
    va_list ap)
{
  GstSpdlTiffDecoder *dec = user_data;

  if (dec->message[0] == '\0')
    g_vsnprintf (dec->message, sizeof (dec->message), fmt, ap);
  return 1;
}

static int
on_warning (TIFF * tif, void *user_data, const char *module, const char *fmt,
    va_list ap)
{
  return 1;
}

static gboolean
fail_libtiff (GstSpdlTiffDecoder * dec, const gchar * what, GError ** error)
{
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
      "corrupt: TIFF %s: %s", what, dec->message[0] ? dec->message :
      "libtiff error");
}

static gboolean
refuse (GError ** error, const gchar * what)
{
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
      "unsupported: a TIFF %s", what);
}

static gboolean
extra_is (guint16 n, const guint16 * extra, guint16 first, guint16 n_want)
{
  guint i;

  if (n != n_want)
    return FALSE;
  for (i = 0; i < n; i++)
    if (extra[i] != (i == 0 ? first : EXTRASAMPLE_UNSPECIFIED))
      return FALSE;
  return TRUE;
}

/* The layouts of PIL's OPEN_INFO this decoder reads (FillOrder 1, unsigned
 * samples), as a kind; FALSE for the others. */
static gboolean
choose_kind (GstSpdlTiffDecoder * dec, guint photometric, guint16 n_extra,
    const guint16 * extra, GError ** error)
{
  guint spp = dec->spp, bits = dec->bits;

  dec->invert = photometric == PHOTOMETRIC_MINISWHITE;
  switch (photometric) {
    case PHOTOMETRIC_MINISWHITE:
    case PHOTOMETRIC_MINISBLACK:
      if (spp == 1 && n_extra == 0 && (bits == 1 || bits == 2 || bits == 4 ||
              bits == 8)) {
        dec->kind = KIND_GRAY;
        return TRUE;
      }
      /* PIL's "I;16" does not invert; big-endian MinIsWhite it lacks */
      if (spp == 1 && n_extra == 0 && bits == 16 &&
          (photometric == PHOTOMETRIC_MINISBLACK ||
              !TIFFIsBigEndian (dec->tif))) {
        dec->kind = KIND_GRAY16;
        dec->invert = FALSE;
        return TRUE;
      }
      if (photometric == PHOTOMETRIC_MINISBLACK && spp == 2 && bits == 8 &&
          extra_is (n_extra, extra, EXTRASAMPLE_UNASSALPHA, 1)) {
        dec->kind = KIND_GRAY;
        return TRUE;
      }
      break;
    case PHOTOMETRIC_RGB:
      if (bits == 8 && spp == 3 && n_extra == 0) {
        dec->kind = KIND_RGB;
        return TRUE;
      }
      if (bits == 8 && spp >= 4 && spp <= 6) {
        if ((spp == 4 && n_extra == 0) ||
            extra_is (n_extra, extra, EXTRASAMPLE_UNSPECIFIED, spp - 3) ||
            extra_is (n_extra, extra, EXTRASAMPLE_UNASSALPHA, spp - 3)) {
          dec->kind = KIND_RGB;
          return TRUE;
        }
        if (extra_is (n_extra, extra, EXTRASAMPLE_ASSOCALPHA, spp - 3)) {
          dec->kind = KIND_RGB_PREMULTIPLIED;
          return TRUE;
        }
      }
      if (bits == 16 && ((spp == 3 && n_extra == 0) || (spp == 4 &&
                  (n_extra == 0 ||
                      extra_is (n_extra, extra, EXTRASAMPLE_UNSPECIFIED, 1) ||
                      extra_is (n_extra, extra, EXTRASAMPLE_UNASSALPHA,
                          1))))) {
        dec->kind = KIND_RGB16;
        return TRUE;
      }
      break;
    case PHOTOMETRIC_PALETTE:
      if (spp == 1 && n_extra == 0 && (bits == 1 || bits == 2 || bits == 4 ||
              bits == 8)) {
        dec->kind = KIND_PALETTE;
        return TRUE;
      }
      break;
    case PHOTOMETRIC_SEPARATED:
      if (bits == 8 && ((spp == 4 && n_extra == 0) ||
              extra_is (n_extra, extra, EXTRASAMPLE_UNSPECIFIED, spp - 4))) {
        dec->kind = KIND_CMYK;
        return TRUE;
      }
      break;
    default:
      break;
  }
  {
    gchar *what = g_strdup_printf ("of photometric %u with %u samples of %u "
        "bits (%u extra)", photometric, spp, bits, n_extra);
    gboolean ret = refuse (error, what);

    g_free (what);
    return ret;
  }
}

static gboolean
read_palette (GstSpdlTiffDecoder * dec, GError ** error)
{
  guint16 *r, *g, *b;
  guint i, n = 1 << dec->bits;

  if (!TIFFGetField (dec->tif, TIFFTAG_COLORMAP, &r, &g, &b))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: a palette TIFF without a colormap");
  /* PIL: the high byte of each 16-bit entry */
  for (i = 0; i < n; i++) {
    dec->palette[3 * i] = r[i] >> 8;
    dec->palette[3 * i + 1] = g[i] >> 8;
    dec->palette[3 * i + 2] = b[i] >> 8;
  }
  return TRUE;
}

/* Every strip lies in the data (as PNG's chunks are checked). */
static gboolean
check_strips (GstSpdlTiffDecoder * dec, GError ** error)
{
  guint32 i, n = TIFFNumberOfStrips (dec->tif);

  for (i = 0; i < n; i++) {
    guint64 off = TIFFGetStrileOffset (dec->tif, i);
    guint64 count = TIFFGetStrileByteCount (dec->tif, i);

    if (off > dec->size || count > dec->size - off)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "truncated: %" G_GSIZE_FORMAT " bytes, the TIFF's strip %u "
          "ends at byte %" G_GUINT64_FORMAT, dec->size, i, off + count);
  }
  return TRUE;
}

static gboolean
open_tiff (GstSpdlTiffDecoder * dec, GError ** error)
{
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();

  TIFFOpenOptionsSetErrorHandlerExtR (opts, on_error, dec);
  TIFFOpenOptionsSetWarningHandlerExtR (opts, on_warning, dec);
  /* a hostile directory cannot make libtiff allocate more than this */
  TIFFOpenOptionsSetMaxSingleMemAlloc (opts, dec->max_memory);
  dec->tif = TIFFClientOpenExt ("image.tif", "r", dec, read_proc,
      write_proc, seek_proc, close_proc, size_proc, map_proc, unmap_proc,
      opts);
  TIFFOpenOptionsFree (opts);
  if (dec->tif)
    return TRUE;
  if (dec->size < 8)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
        "truncated: %" G_GSIZE_FORMAT " bytes, shorter than a TIFF header",
        dec->size);
  return fail_libtiff (dec, "directory", error);
}

gboolean
gst_spdl_tiff_decoder_open (GstSpdlTiffDecoder * dec, const guint8 * data,
    gsize size, guint64 max_pixels, guint * width, guint * height,
    GError ** error)
{
  guint32 w = 0, h = 0;
  guint16 bits, spp, compression, planar, fill, format, photometric;
  guint16 orientation, n_extra, *extra;
  guint64 pixels;

  dec->opened = FALSE;
  close_tiff (dec);
  dec->data = data;
  dec->size = size;
  dec->pos = 0;
  dec->message[0] = '\0';
  if (!open_tiff (dec, error))
    return FALSE;
  TIFFGetField (dec->tif, TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField (dec->tif, TIFFTAG_IMAGELENGTH, &h);
  if (w == 0 || h == 0 || w > 0x7fffffff || h > 0x7fffffff)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: invalid TIFF size %ux%u", w, h);
  dec->width = w;
  dec->height = h;
  pixels = (guint64) w *h;
  if (max_pixels && pixels > max_pixels)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u is %" G_GUINT64_FORMAT " pixels, more than max-pixels=%"
        G_GUINT64_FORMAT, w, h, pixels, max_pixels);
  TIFFGetFieldDefaulted (dec->tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted (dec->tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted (dec->tif, TIFFTAG_COMPRESSION, &compression);
  TIFFGetFieldDefaulted (dec->tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted (dec->tif, TIFFTAG_FILLORDER, &fill);
  TIFFGetFieldDefaulted (dec->tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted (dec->tif, TIFFTAG_EXTRASAMPLES, &n_extra, &extra);
  TIFFGetFieldDefaulted (dec->tif, TIFFTAG_ORIENTATION, &orientation);
  if (!TIFFGetField (dec->tif, TIFFTAG_PHOTOMETRIC, &photometric))
    photometric = PHOTOMETRIC_MINISWHITE;       /* PIL's default */
  dec->bits = bits;
  dec->spp = spp;
  if (TIFFIsTiled (dec->tif))
    return refuse (error, "in tiles");
  if (planar != PLANARCONFIG_CONTIG && spp > 1)
    return refuse (error, "in separate planes");
  if (fill != FILLORDER_MSB2LSB)
    return refuse (error, "with FillOrder 2");
  if (format != SAMPLEFORMAT_UINT)
    return refuse (error, "of signed or floating-point samples");
  switch (compression) {
    case COMPRESSION_NONE:
    case COMPRESSION_CCITTRLE:
    case COMPRESSION_CCITTFAX3:
    case COMPRESSION_CCITTFAX4:
    case COMPRESSION_LZW:
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
    case COMPRESSION_PACKBITS:
      if (TIFFIsCODECConfigured (compression))
        break;
      /* fall through */
    default:{
      gchar *what = g_strdup_printf ("of compression %u", compression);
      gboolean ret = refuse (error, what);

      g_free (what);
      return ret;
    }
  }
  if (!choose_kind (dec, photometric, n_extra, extra, error))
    return FALSE;
  if (dec->kind == KIND_PALETTE && !read_palette (dec, error))
    return FALSE;
  if (!check_strips (dec, error))
    return FALSE;
  dec->orientation = orientation >= 2 && orientation <= 8 ? orientation : 1;
  dec->out_width = dec->orientation >= 5 ? h : w;
  dec->out_height = dec->orientation >= 5 ? w : h;
  *width = dec->out_width;
  *height = dec->out_height;
  dec->opened = TRUE;
  return TRUE;
}

static inline guint
sample_at (const guint8 * in, guint bits, guint x)
{
  guint per_byte = 8 / bits;

  return (in[x / per_byte] >> (8 - bits * (x % per_byte + 1))) &
      ((1 << bits) - 1);
}

/* PIL's MULDIV255 and cmyk2rgb */
static inline guint8
cmyk_channel (guint c, guint nk)
{
  guint t = c * nk + 128;
  gint v = (gint) nk - (gint) (((t >> 8) + t) >> 8);

  return CLAMP (v, 0, 255);
}

/* A scanline to GRAY (gray kinds) or RGB, as PIL unpacks and converts. */
static GstSpdlPixels
convert_row (GstSpdlTiffDecoder * dec, const guint8 * in, guint8 * out)
{
  static const guint8 scale[9] = { 0, 255, 0x55, 0, 0x11, 0, 0, 0, 1 };
  guint x, n = dec->width, spp = dec->spp;

  switch (dec->kind) {
    case KIND_GRAY:
      for (x = 0; x < n; x++) {
        guint v = dec->bits == 8 ? in[x * spp] :
            sample_at (in, dec->bits, x) * scale[dec->bits];

        out[x] = dec->invert ? 255 - v : v;
      }
      return GST_SPDL_PIXELS_GRAY;
    case KIND_GRAY16:
      for (x = 0; x < n; x++) {
        guint16 v;

        memcpy (&v, in + 2 * x, 2);
        out[x] = v > 255 ? 255 : v;
      }
      return GST_SPDL_PIXELS_GRAY;
    case KIND_RGB:
      for (x = 0; x < n; x++, in += spp, out += 3)
        memcpy (out, in, 3);
      return GST_SPDL_PIXELS_RGB;
    case KIND_RGB_PREMULTIPLIED:
      for (x = 0; x < n; x++, in += spp, out += 3) {
        guint a = in[3], c;

        for (c = 0; c < 3; c++)
          out[c] = a == 0 ? 0 : a == 255 ? in[c] : MIN (in[c] * 255 / a, 255);
      }
      return GST_SPDL_PIXELS_RGB;
    case KIND_RGB16:
      for (x = 0; x < n; x++, in += 2 * spp, out += 3) {
        guint c;

        for (c = 0; c < 3; c++) {
          guint16 v;

          memcpy (&v, in + 2 * c, 2);
          out[c] = v >> 8;
        }
      }
      return GST_SPDL_PIXELS_RGB;
    case KIND_PALETTE:
      for (x = 0; x < n; x++, out += 3)
        memcpy (out, dec->palette + 3 * (dec->bits == 8 ? in[x] :
                sample_at (in, dec->bits, x)), 3);
      return GST_SPDL_PIXELS_RGB;
    case KIND_CMYK:
    default:
      for (x = 0; x < n; x++, in += spp, out += 3) {
        guint nk = 255 - in[3];

        out[0] = cmyk_channel (in[0], nk);
        out[1] = cmyk_channel (in[1], nk);
        out[2] = cmyk_channel (in[2], nk);
      }
      return GST_SPDL_PIXELS_RGB;
  }
}

static gboolean
read_row (GstSpdlTiffDecoder * dec, guint y, GstSpdlPixels * pixels,
    GError ** error)
{
  if (TIFFReadScanline (dec->tif, dec->scan, y, 0) < 0)
    return fail_libtiff (dec, "image data", error);
  *pixels = convert_row (dec, dec->scan, dec->row);
  return TRUE;
}

/* Where PIL's transpose() puts stored pixel (x, y). */
static void
transpose_to (guint orientation, guint w, guint h, guint x, guint y,
    guint * ox, guint * oy)
{
  switch (orientation) {
    case 2:                    /* FLIP_LEFT_RIGHT */
      *ox = w - 1 - x;
      *oy = y;
      break;
    case 3:                    /* ROTATE_180 */
      *ox = w - 1 - x;
      *oy = h - 1 - y;
      break;
    case 4:                    /* FLIP_TOP_BOTTOM */
      *ox = x;
      *oy = h - 1 - y;
      break;
    case 5:                    /* TRANSPOSE */
      *ox = y;
      *oy = x;
      break;
    case 6:                    /* ROTATE_270 */
      *ox = h - 1 - y;
      *oy = x;
      break;
    case 7:                    /* TRANSVERSE */
      *ox = h - 1 - y;
      *oy = w - 1 - x;
      break;
    default:                   /* 8: ROTATE_90 */
      *ox = y;
      *oy = w - 1 - x;
      break;
  }
}

static gboolean
decode_transposed (GstSpdlTiffDecoder * dec, GError ** error)
{
  GstSpdlPixels pixels = GST_SPDL_PIXELS_RGB;
  guint ch = dec->kind == KIND_GRAY || dec->kind == KIND_GRAY16 ? 1 : 3;
  gsize stride = (gsize) dec->out_width * ch;
  guint64 need = (guint64) dec->out_height * stride + 16;
  guint x, y, ox, oy;

  if (dec->max_memory && need > dec->max_memory)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u TIFF with orientation %u needs %" G_GUINT64_FORMAT " MiB to "
        "decode, more than max-decode-memory=%" G_GUINT64_FORMAT " MiB",
        dec->width, dec->height, dec->orientation, need >> 20,
        dec->max_memory >> 20);
  if (!gst_spdl_try_ensure_buffer (&dec->image, &dec->image_size, need))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u TIFF: out of memory", dec->width, dec->height);
  for (y = 0; y < dec->height; y++) {
    if (!read_row (dec, y, &pixels, error))
      return FALSE;
    for (x = 0; x < dec->width; x++) {
      transpose_to (dec->orientation, dec->width, dec->height, x, y, &ox,
          &oy);
      memcpy (dec->image + oy * stride + ox * ch, dec->row + x * ch, ch);
    }
  }
  for (y = dec->sink.y0; y < (guint) dec->sink.y1; y++)
    gst_spdl_row_sink_push (&dec->sink, y, dec->image + y * stride, pixels);
  return TRUE;
}

static gboolean
decode_rows (GstSpdlTiffDecoder * dec, GError ** error)
{
  GstSpdlPixels pixels;
  guint ch = dec->kind == KIND_GRAY || dec->kind == KIND_GRAY16 ? 1 : 3;
  guint8 *flipped = dec->row + (gsize) dec->width * 3 + 16;
  gint y;
  guint x;

  /* every row is decoded, whatever the crop: PIL decodes the whole image,
   * so that damage above or below the rows the crop reads is decided as
   * PIL decides it (a Deflate strip damaged below a center crop was
   * delivered where PIL fails); those rows are not converted */
  for (y = 0; y < (gint) dec->height; y++) {
    const guint8 *row = dec->row;

    if (y < dec->sink.y0 || y >= dec->sink.y1) {
      if (TIFFReadScanline (dec->tif, dec->scan, y, 0) < 0)
        return fail_libtiff (dec, "image data", error);
      continue;
    }
    if (!read_row (dec, y, &pixels, error))
      return FALSE;
    if (dec->orientation == 2) {
      for (x = 0; x < dec->width; x++)
        memcpy (flipped + (dec->width - 1 - x) * ch, row + x * ch, ch);
      row = flipped;
    }
    gst_spdl_row_sink_push (&dec->sink, y, row, pixels);
  }
  return TRUE;
}

gboolean
gst_spdl_tiff_decoder_decode (GstSpdlTiffDecoder * dec,
    const GstSpdlDecodeParams * p, const GstSpdlGeometry * g,
    const GstSpdlOutput * out, GError ** error)
{
  gboolean ok = TRUE;
  tmsize_t scan = TIFFScanlineSize (dec->tif);

  g_return_val_if_fail (dec->opened, FALSE);
  dec->opened = FALSE;
  gst_spdl_row_sink_plan (&dec->sink, out, g, dec->out_width,
      dec->out_height, p->gray ? 1 : 3, !p->exact);
  if (scan <= 0 || (guint64) scan < ((guint64) dec->width * dec->spp *
          dec->bits + 7) / 8) {
    ok = fail_libtiff (dec, "scanline size", error);
  } else if (dec->sink.y1 > 0) {
    gst_spdl_ensure_buffer (&dec->scan, &dec->scan_size, scan + 16);
    /* a converted row and, for orientation 2, its mirror: 16 bytes of
     * slack each for the SIMD row kernel */
    gst_spdl_ensure_buffer (&dec->row, &dec->row_size,
        ((gsize) dec->width * 3 + 16) * 2);
    ok = dec->orientation <= 2 ? decode_rows (dec, error) :
        decode_transposed (dec, error);
  }
  close_tiff (dec);
  if (ok)
    gst_spdl_row_sink_finish (&dec->sink, out);
  gst_spdl_release_large_buffer (&dec->image, &dec->image_size);
  gst_spdl_release_large_buffer (&dec->scan, &dec->scan_size);
  gst_spdl_release_large_buffer (&dec->row, &dec->row_size);
  return ok;
}
