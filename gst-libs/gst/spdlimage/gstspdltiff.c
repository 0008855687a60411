/* GStreamer SPDL: TIFF decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* libtiff reads the first directory and decodes the image as PIL 9.4's
 * libtiff decoder does, straight from the data in memory: a band of rows at
 * a time (a strip, or a row of tiles), each strip or tile decoded whole
 * (uncompressed, LZW, Deflate, PackBits, CCITT, JPEG, LZMA, ZSTD, WebP;
 * any FillOrder PIL reads),
 * separate planes interleaved, YCbCr by libtiff's RGBA interface (JPEG's
 * by libjpeg, as JPEGCOLORMODE_RGB). Each row is converted as PIL unpacks
 * and converts it (its OPEN_INFO table: MinIsWhite inverted, 2- and 4-bit
 * gray scaled, 16-bit gray clipped as "I;16", 16-bit colour by its high
 * byte, associated alpha divided out, palettes by the high byte of the
 * colormap, CMYK as PIL's cmyk2rgb) and resampled, so only one band
 * exists at a time. A compressed image is decoded to its end whatever the
 * crop, as PIL does: a damaged strip the crop does not show (a Deflate
 * checksum, a code past the table) fails the file where it fails PIL.
 * Data libtiff decodes with a complaint (a CCITT bad code word, a PackBits
 * run past its row) is delivered as PIL delivers it, as recovered.
 * Every strip is checked to lie in the data first, so a cut-short file
 * fails whichever rows the crop keeps. PIL applies the Orientation tag: a
 * flipped or rotated image is decoded whole, then read out as PIL's
 * transpose() would. Refused as unsupported: other compressions, float
 * and signed samples, and the layouts PIL does not read or reads otherwise
 * (LAB, 12-bit, premultiplied 16-bit colour, palette with alpha). */
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
  gchar bad_tag[200];           /* a tag PIL needs that libtiff ignored */
  gboolean decoding;            /* the image data, past the directory */
  gchar damage[200];            /* libtiff's first complaint decoding it */
  guint width, height;          /* as stored */
  guint out_width, out_height;  /* after the Orientation tag */
  guint orientation;            /* 2-8: PIL transposes; else 1 */
  Kind kind;
  guint bits, spp;
  gboolean invert;              /* MinIsWhite */
  gboolean compressed;          /* decoded to the end whatever the crop */
  gboolean tiled;
  guint planes;                 /* spp in separate planes, else 1 */
  guint32 band_rows;            /* rows per strip, or the tile length */
  guint32 tile_width;
  gboolean by_row;              /* strips over max-decode-memory: a row a read */
  gboolean rgba;                /* YCbCr: libtiff's RGBA interface */
  TIFFRGBAImage rgba_image;
  gboolean rgba_begun;
  guint8 palette[256 * 3];
  gboolean opened;
  /* the decode */
  GstSpdlRowSink sink;
  guint8 *band;                 /* a band of rows, samples interleaved */
  gsize band_size;
  gsize band_pitch;             /* bytes from one row of the band to the next */
  guint8 *piece;                /* a tile, or a plane's strip */
  gsize piece_size;
  guint64 piece_bytes;          /* what libtiff decodes into it */
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
  if (dec->rgba_begun)
    TIFFRGBAImageEnd (&dec->rgba_image);
  dec->rgba_begun = FALSE;
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
  g_free (dec->band);
  g_free (dec->piece);
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

/* "module: message", libtiff's first complaint about the image data */
static void
note_damage (GstSpdlTiffDecoder * dec, const char *module, const char *fmt,
    va_list ap)
{
  gsize n = g_snprintf (dec->damage, sizeof (dec->damage), "%s: ",
      module ? module : "libtiff");

  if (n < sizeof (dec->damage))
    g_vsnprintf (dec->damage + n, sizeof (dec->damage) - n, fmt, ap);
}

/* libtiff's first error names what failed */
static int
on_error (TIFF * tif, void *user_data, const char *module, const char *fmt,
    va_list ap)
{
  GstSpdlTiffDecoder *dec = user_data;
  va_list copy;

  va_copy (copy, ap);
  if (dec->decoding && dec->damage[0] == '\0')
    note_damage (dec, module, fmt, copy);
  va_end (copy);
  if (dec->message[0] == '\0')
    g_vsnprintf (dec->message, sizeof (dec->message), fmt, ap);
  return 1;
}

/* The tags PIL's TIFF plugin reads to lay the image out: where libtiff
 * ignores one (a wrong type or count, values past the end), PIL reads it
 * all the same and fails, or finds it missing and fails. */
static const gchar *const layout_tags[] = {
  "\"ImageWidth\"", "\"ImageLength\"", "\"BitsPerSample\"",
  "\"Compression\"", "\"PhotometricInterpretation\"", "\"FillOrder\"",
  "\"StripOffsets\"", "\"SamplesPerPixel\"", "\"RowsPerStrip\"",
  "\"StripByteCounts\"", "\"PlanarConfiguration\"", "\"ColorMap\"",
  "\"TileWidth\"", "\"TileLength\"", "\"TileOffsets\"",
  "\"TileByteCounts\"", "\"ExtraSamples\"", "\"SampleFormat\"",
};

/* In the directory, warnings are dropped but for a layout tag libtiff
 * ignored; in the image data, each says the data is damaged (a codec's
 * "Discarding N bytes", "Premature EOL"): decoded all the same, as PIL
 * decodes it, so recovered. */
static int
on_warning (TIFF * tif, void *user_data, const char *module, const char *fmt,
    va_list ap)
{
  GstSpdlTiffDecoder *dec = user_data;
  gchar text[200];
  guint i;

  if (dec->decoding) {
    if (dec->damage[0] == '\0')
      note_damage (dec, module, fmt, ap);
    return 1;
  }
  if (dec->bad_tag[0] != '\0')
    return 1;
  g_vsnprintf (text, sizeof (text), fmt, ap);
  if (strstr (text, "tag ignored") == NULL)
    return 1;
  for (i = 0; i < G_N_ELEMENTS (layout_tags); i++)
    if (strstr (text, layout_tags[i]))
      g_strlcpy (dec->bad_tag, text, sizeof (dec->bad_tag));
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

/* PIL's choice: JPEG's YCbCr in one plane is converted by libjpeg, any
 * other YCbCr (subsampled, in planes) by libtiff's RGBA interface. */
static gboolean
choose_ycbcr (GstSpdlTiffDecoder * dec, guint compression, guint planar,
    GError ** error)
{
  char message[1024] = "";

  /* PIL reads uncompressed YCbCr as RGBX, and fails */
  if (compression == COMPRESSION_NONE)
    return refuse (error, "of uncompressed YCbCr");
  if (compression == COMPRESSION_JPEG && planar == PLANARCONFIG_CONTIG) {
    if (dec->bits != 8 || dec->spp != 3)
      return refuse (error, "YCbCr JPEG of other than 3 samples of 8 bits");
    if (!TIFFSetField (dec->tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
      return fail_libtiff (dec, "JPEG colour mode", error);
    dec->kind = KIND_RGB;
    return TRUE;
  }
  if (!TIFFRGBAImageOK (dec->tif, message) ||
      !TIFFRGBAImageBegin (&dec->rgba_image, dec->tif, 1, message))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: TIFF YCbCr: %s", message[0] ? message : dec->message);
  dec->rgba_begun = TRUE;
  /* PIL's, but for stopping at a strip that fails to decode (PIL goes on,
   * and delivers what its buffer held in the strip's rows) */
  dec->rgba_image.req_orientation = ORIENTATION_TOPLEFT;
  dec->rgba_image.col_offset = 0;
  dec->rgba = TRUE;
  dec->kind = KIND_RGB;
  dec->spp = 4;
  dec->bits = 8;
  dec->planes = 1;
  return TRUE;
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

/* TRUE if @need bytes to decode the image @what ("with orientation 6")
 * are within max-decode-memory. */
static gboolean
within_memory (GstSpdlTiffDecoder * dec, guint64 need, const gchar * what,
    GError ** error)
{
  if (!dec->max_memory || need <= dec->max_memory)
    return TRUE;
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
      "%ux%u TIFF %s needs %" G_GUINT64_FORMAT " MiB to decode, more than "
      "max-decode-memory=%" G_GUINT64_FORMAT " MiB", dec->width,
      dec->height, what, need >> 20, dec->max_memory >> 20);
}

/* The band of rows decoded at once, its pitch, and the tile or plane
 * buffer, from libtiff's sizes (checked as PIL checks them: a strip or
 * tile libtiff decodes larger than the rows it holds is corrupt). */
static gboolean
choose_bands (GstSpdlTiffDecoder * dec, GError ** error)
{
  guint32 rows = 0, tile_length = 0;
  guint64 width = dec->width, row_bytes, piece = 0, pitch, need;
  guint sample_bits = dec->bits * (dec->spp / dec->planes);
  gchar what[64];

  if (dec->tiled) {
    TIFFGetField (dec->tif, TIFFTAG_TILEWIDTH, &dec->tile_width);
    TIFFGetField (dec->tif, TIFFTAG_TILELENGTH, &tile_length);
    if (dec->tile_width == 0 || tile_length == 0)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: TIFF tiles of %ux%u", dec->tile_width, tile_length);
    /* tiles are copied into the band by whole bytes (the TIFF spec's
     * widths, multiples of 16, always are) */
    if ((guint64) dec->tile_width * dec->spp * dec->bits % 8 != 0)
      return refuse (error, "in tiles of a width not a whole number of bytes");
    rows = tile_length;
    width = (width + dec->tile_width - 1) / dec->tile_width * dec->tile_width;
  } else {
    TIFFGetFieldDefaulted (dec->tif, TIFFTAG_ROWSPERSTRIP, &rows);
  }
  dec->band_rows = rows == 0 || rows > dec->height ? dec->height : rows;
  /* a row of the band, all samples interleaved */
  pitch = (width * dec->spp * dec->bits + 7) / 8;
  if (dec->rgba) {
    pitch = (guint64) dec->width * 4;
  } else if (dec->tiled) {
    row_bytes = TIFFTileRowSize64 (dec->tif);
    piece = TIFFTileSize64 (dec->tif);
    if (row_bytes < ((guint64) dec->tile_width * sample_bits + 7) / 8 ||
        piece > row_bytes * tile_length)
      return fail_libtiff (dec, "tile size", error);
  } else {
    row_bytes = TIFFScanlineSize64 (dec->tif);
    if (row_bytes < (width * sample_bits + 7) / 8 ||
        TIFFStripSize64 (dec->tif) > row_bytes * dec->band_rows)
      return fail_libtiff (dec, "strip size", error);
    if (dec->planes > 1)
      piece = TIFFStripSize64 (dec->tif);
    else
      pitch = row_bytes;        /* strips are decoded into the band */
  }
  need = pitch * dec->band_rows + piece + 32;
  /* strips too large to hold (a scanner's image in one compressed strip)
   * are read a row at a time, to the end all the same */
  dec->by_row = !dec->tiled && dec->planes == 1 && !dec->rgba &&
      dec->max_memory && need > dec->max_memory;
  if (dec->by_row) {
    dec->band_rows = 1;
    need = pitch + 32;
  }
  g_snprintf (what, sizeof (what), "in bands of %u rows", dec->band_rows);
  if (!within_memory (dec, need, what, error))
    return FALSE;
  dec->band_pitch = pitch;
  dec->piece_bytes = piece;
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
  dec->bad_tag[0] = '\0';
  dec->decoding = FALSE;
  dec->damage[0] = '\0';
  if (!open_tiff (dec, error))
    return FALSE;
  if (dec->bad_tag[0] != '\0')
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: TIFF directory: %s", dec->bad_tag);
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
  dec->tiled = TIFFIsTiled (dec->tif);
  dec->planes = planar == PLANARCONFIG_SEPARATE ? spp : 1;
  dec->compressed = compression != COMPRESSION_NONE;
  dec->rgba = FALSE;
  if (format != SAMPLEFORMAT_UINT)
    return refuse (error, "of signed or floating-point samples");
  /* planes are interleaved by whole samples */
  if (dec->planes > 1 && bits != 8 && bits != 16)
    return refuse (error, "in separate planes of samples under 8 bits");
  switch (compression) {
    case COMPRESSION_NONE:
    case COMPRESSION_CCITTRLE:
    case COMPRESSION_CCITTFAX3:
    case COMPRESSION_CCITTFAX4:
    case COMPRESSION_LZW:
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
    case COMPRESSION_PACKBITS:
    case COMPRESSION_JPEG:
    case COMPRESSION_LZMA:
    case COMPRESSION_ZSTD:
    case COMPRESSION_WEBP:
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
  if (photometric == PHOTOMETRIC_YCBCR) {
    if (!choose_ycbcr (dec, compression, planar, error))
      return FALSE;
  } else if (!choose_kind (dec, photometric, n_extra, extra, error))
    return FALSE;
  /* PIL's OPEN_INFO has FillOrder 2 for gray, little-endian 16-bit gray,
   * palette and 8-bit RGB only (libtiff reverses the bits) */
  if (fill != FILLORDER_MSB2LSB && !(spp == 1 && (dec->kind == KIND_GRAY ||
              dec->kind == KIND_PALETTE || (dec->kind == KIND_GRAY16 &&
                  !TIFFIsBigEndian (dec->tif)))) && !(dec->kind == KIND_RGB
          && photometric == PHOTOMETRIC_RGB && spp == 3 && n_extra == 0))
    return refuse (error, "with FillOrder 2 in a layout other than gray, "
        "palette or 8-bit RGB");
  if (dec->kind == KIND_PALETTE && !read_palette (dec, error))
    return FALSE;
  if (!check_strips (dec, error) || !choose_bands (dec, error))
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

/* Samples of plane @plane, @n rows of @bytes_per_row from @in, into the
 * band's rows from column @x on, between the samples of the other planes. */
static void
interleave (GstSpdlTiffDecoder * dec, const guint8 * in, gsize bytes_per_row,
    guint n, guint x, guint plane)
{
  guint bytes = dec->bits / 8, step = bytes * dec->spp, r, i;
  guint count = MIN (bytes_per_row / bytes, dec->band_pitch / step - x);

  for (r = 0; r < n; r++, in += bytes_per_row) {
    guint8 *out = dec->band + r * dec->band_pitch + x * step + plane * bytes;

    for (i = 0; i < count; i++, out += step)
      memcpy (out, in + i * bytes, bytes);
  }
}

/* @n rows from @y0 on (a strip's, or a row of tiles') into the band, each
 * strip or tile decoded whole as PIL decodes them: TIFFReadEncodedStrip or
 * TIFFReadEncodedTile, plane by plane, stopping at the first that fails. */
static gboolean
read_band (GstSpdlTiffDecoder * dec, guint32 y0, guint n, GError ** error)
{
  guint plane, x;

  /* rows a codec leaves out (a CCITT strip ended early) are black, not
   * the previous band's */
  memset (dec->band, 0, dec->band_pitch * n);
  if (dec->rgba) {
    dec->rgba_image.row_offset = y0;
    if (!TIFFRGBAImageGet (&dec->rgba_image, (guint32 *) dec->band,
            dec->width, n))
      return fail_libtiff (dec, "image data", error);
#if G_BYTE_ORDER == G_BIG_ENDIAN
    TIFFSwabArrayOfLong ((guint32 *) dec->band, (tmsize_t) dec->width * n);
#endif
    return TRUE;
  }
  if (dec->by_row) {
    if (TIFFReadScanline (dec->tif, dec->band, y0, 0) < 0)
      return fail_libtiff (dec, "image data", error);
    return TRUE;
  }
  if (!dec->tiled && dec->planes == 1) {
    if (TIFFReadEncodedStrip (dec->tif, TIFFComputeStrip (dec->tif, y0, 0),
            dec->band, (tmsize_t) dec->band_pitch * dec->band_rows) < 0)
      return fail_libtiff (dec, "image data", error);
    return TRUE;
  }
  for (plane = 0; plane < dec->planes; plane++) {
    if (!dec->tiled) {
      if (TIFFReadEncodedStrip (dec->tif, TIFFComputeStrip (dec->tif, y0,
                  plane), dec->piece, dec->piece_bytes) < 0)
        return fail_libtiff (dec, "image data", error);
      interleave (dec, dec->piece, TIFFScanlineSize (dec->tif), n, 0, plane);
      continue;
    }
    for (x = 0; x < dec->width; x += dec->tile_width) {
      tmsize_t tile_row = TIFFTileRowSize (dec->tif);

      if (TIFFReadEncodedTile (dec->tif, TIFFComputeTile (dec->tif, x, y0, 0,
                  plane), dec->piece, dec->piece_bytes) < 0)
        return fail_libtiff (dec, "image data", error);
      if (dec->planes > 1) {
        interleave (dec, dec->piece, tile_row, n, x, plane);
      } else {
        /* whole bytes: tile widths are multiples of 16 */
        gsize at = (gsize) x * dec->spp * dec->bits / 8, r;

        for (r = 0; r < n; r++)
          memcpy (dec->band + r * dec->band_pitch + at,
              dec->piece + r * tile_row, MIN ((gsize) tile_row,
                  dec->band_pitch - at));
      }
    }
  }
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

static guint
channels (GstSpdlTiffDecoder * dec)
{
  return dec->kind == KIND_GRAY || dec->kind == KIND_GRAY16 ? 1 : 3;
}

static gboolean
make_image (GstSpdlTiffDecoder * dec, GError ** error)
{
  guint64 need = (guint64) dec->out_height * dec->out_width * channels (dec)
      + 16;
  gchar what[64];

  g_snprintf (what, sizeof (what), "with orientation %u", dec->orientation);
  if (!within_memory (dec, need, what, error))
    return FALSE;
  if (!gst_spdl_try_ensure_buffer (&dec->image, &dec->image_size, need))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u TIFF: out of memory", dec->width, dec->height);
  return TRUE;
}

/* A converted row @y: to the sink, or (rotated) into the whole image */
static void
put_row (GstSpdlTiffDecoder * dec, guint y, GstSpdlPixels pixels)
{
  guint ch = channels (dec), x, ox, oy;
  guint8 *flipped = dec->row + (gsize) dec->width * 3 + 16;

  if (dec->orientation > 2) {
    gsize stride = (gsize) dec->out_width * ch;

    for (x = 0; x < dec->width; x++) {
      transpose_to (dec->orientation, dec->width, dec->height, x, y, &ox,
          &oy);
      memcpy (dec->image + oy * stride + ox * ch, dec->row + x * ch, ch);
    }
  } else if (dec->orientation == 2) {
    for (x = 0; x < dec->width; x++)
      memcpy (flipped + (dec->width - 1 - x) * ch, dec->row + x * ch, ch);
    gst_spdl_row_sink_push (&dec->sink, y, flipped, pixels);
  } else {
    gst_spdl_row_sink_push (&dec->sink, y, dec->row, pixels);
  }
}

/* Band by band: the rows the crop reads (all of them, rotated) converted;
 * a compressed band outside them decoded all the same, to fail where PIL
 * fails. */
static gboolean
decode_bands (GstSpdlTiffDecoder * dec, GError ** error)
{
  GstSpdlPixels pixels = GST_SPDL_PIXELS_RGB;
  gboolean rotated = dec->orientation > 2;
  guint32 want0 = rotated ? 0 : dec->sink.y0;
  guint32 want1 = rotated ? dec->height : (guint32) dec->sink.y1;
  guint32 y0, y;

  for (y0 = 0; y0 < dec->height; y0 += dec->band_rows) {
    guint n = MIN (dec->band_rows, dec->height - y0);

    if (!dec->compressed && (y0 + n <= want0 || y0 >= want1))
      continue;
    if (!read_band (dec, y0, n, error))
      return FALSE;
    for (y = MAX (y0, want0); y < MIN (y0 + n, want1); y++) {
      pixels = convert_row (dec, dec->band + (y - y0) * dec->band_pitch,
          dec->row);
      put_row (dec, y, pixels);
    }
  }
  if (rotated) {
    gsize stride = (gsize) dec->out_width * channels (dec);

    for (y = dec->sink.y0; y < (guint32) dec->sink.y1; y++)
      gst_spdl_row_sink_push (&dec->sink, y, dec->image + y * stride, pixels);
  }
  return TRUE;
}

gboolean
gst_spdl_tiff_decoder_decode (GstSpdlTiffDecoder * dec,
    const GstSpdlDecodeParams * p, const GstSpdlGeometry * g,
    const GstSpdlOutput * out, GError ** error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (dec->opened, FALSE);
  dec->opened = FALSE;
  gst_spdl_row_sink_plan (&dec->sink, out, g, dec->out_width,
      dec->out_height, p->gray ? 1 : 3, !p->exact);
  if (dec->sink.y1 > 0) {
    /* sizes checked against max-decode-memory by choose_bands(); 16 bytes
     * of slack for the SIMD row kernel */
    gst_spdl_ensure_buffer (&dec->band, &dec->band_size,
        dec->band_pitch * dec->band_rows + 16);
    if (dec->piece_bytes)
      gst_spdl_ensure_buffer (&dec->piece, &dec->piece_size,
          dec->piece_bytes + 16);
    /* a converted row and, for orientation 2, its mirror */
    gst_spdl_ensure_buffer (&dec->row, &dec->row_size,
        ((gsize) dec->width * 3 + 16) * 2);
    dec->decoding = TRUE;
    ok = (dec->orientation <= 2 || make_image (dec, error)) &&
        decode_bands (dec, error);
    dec->decoding = FALSE;
  }
  close_tiff (dec);
  if (ok)
    gst_spdl_row_sink_finish (&dec->sink, out);
  /* every pixel written, from data libtiff complained about */
  if (ok && dec->damage[0] != '\0')
    ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_RECOVERED,
        "recovered: TIFF image data: %s", dec->damage);
  gst_spdl_release_large_buffer (&dec->image, &dec->image_size);
  gst_spdl_release_large_buffer (&dec->band, &dec->band_size);
  gst_spdl_release_large_buffer (&dec->piece, &dec->piece_size);
  gst_spdl_release_large_buffer (&dec->row, &dec->row_size);
  return ok;
}
