/* GStreamer SPDL plugin: PNG, WebP, BMP, GIF and TIFF in spdldecode,
 * hostile files
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Good and hostile PNG, WebP, BMP, GIF and TIFF samples in one folder:
 * every good one (1x1 and extreme aspect ratios among them) decodes to the
 * right size, every bad one is skipped with a warning that names it and
 * the reason, and the counts by reason add up. Pixels against PIL are
 * checked per kind in tests/python/test_png_webp.py and
 * test_more_formats.py. */
#include <gst/check/gstcheck.h>
#include <string.h>
#include <zlib.h>
#include <webp/encode.h>
#include <gif_lib.h>
#include <tiffio.h>

#include "spdltestutil.h"
#include "spdlcheckmain.h"

#define ITEM(run, i) ((SpdlTestItem *) g_ptr_array_index ((run)->items, (i)))

static void
put_be32 (GByteArray * a, guint32 v)
{
  guint8 b[4] = { v >> 24, v >> 16, v >> 8, v };

  g_byte_array_append (a, b, 4);
}

static void
png_chunk (GByteArray * png, const gchar * type, const guint8 * data,
    gsize len)
{
  guint32 crc = crc32 (0, (const Bytef *) type, 4);

  put_be32 (png, len);
  g_byte_array_append (png, (const guint8 *) type, 4);
  if (len)
    g_byte_array_append (png, data, len);
  put_be32 (png, crc32 (crc, data, len));
}

static guint8 *
deflate_bytes (const guint8 * raw, gsize len, gsize * out_len)
{
  uLongf n = compressBound (len);
  guint8 *out = g_malloc (n);

  fail_unless_equals_int (compress2 (out, &n, raw, len, 1), Z_OK);
  *out_len = n;
  return out;
}

/* A PNG of @w x @h: @raw is the filtered scanlines (before deflate),
 * @extra chunks go before IDAT. */
static GByteArray *
make_png (guint w, guint h, guint8 depth, guint8 color, const guint8 * raw,
    gsize raw_len, const gchar * extra_type, const guint8 * extra,
    gsize extra_len)
{
  static const guint8 sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  GByteArray *png = g_byte_array_new ();
  GByteArray *ihdr = g_byte_array_new ();
  guint8 tail[5] = { depth, color, 0, 0, 0 };
  gsize idat_len;
  guint8 *idat = deflate_bytes (raw, raw_len, &idat_len);

  g_byte_array_append (png, sig, 8);
  put_be32 (ihdr, w);
  put_be32 (ihdr, h);
  g_byte_array_append (ihdr, tail, 5);
  png_chunk (png, "IHDR", ihdr->data, ihdr->len);
  if (extra_type)
    png_chunk (png, extra_type, extra, extra_len);
  png_chunk (png, "IDAT", idat, idat_len);
  png_chunk (png, "IEND", NULL, 0);
  g_byte_array_unref (ihdr);
  g_free (idat);
  return png;
}

/* a w x h RGB pattern, as scanlines with filter byte 0 */
static guint8 *
rgb_scanlines (guint w, guint h, gsize * len)
{
  gsize row = 1 + (gsize) w * 3;
  guint8 *raw = g_malloc0 (row * h);
  guint x, y, c;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      for (c = 0; c < 3; c++)
        raw[y * row + 1 + x * 3 + c] = spdl_test_pattern (x, y, c, 0);
  *len = row * h;
  return raw;
}

static guint8 *
rgb_pixels (guint w, guint h)
{
  guint8 *px = g_malloc ((gsize) w * h * 3);
  guint x, y, c;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      for (c = 0; c < 3; c++)
        px[(y * w + x) * 3 + c] = spdl_test_pattern (x, y, c, 0);
  return px;
}

static void
write_file (const gchar * root, const gchar * name, const guint8 * data,
    gsize size)
{
  gchar *path = g_build_filename (root, "c0", name, NULL);

  spdl_test_write_file (path, (const gchar *) data, size);
  g_free (path);
}

static void
write_array (const gchar * root, const gchar * name, GByteArray * a)
{
  write_file (root, name, a->data, a->len);
}

/* "RIFF" size "WEBP" "VP8L" size, then a lossless header claiming w x h */
static void
write_vp8l_header (const gchar * root, const gchar * name, guint w, guint h)
{
  guint8 f[30] = { 'R', 'I', 'F', 'F', 22, 0, 0, 0, 'W', 'E', 'B', 'P',
    'V', 'P', '8', 'L', 10, 0, 0, 0, 0x2f
  };
  guint32 bits = (w - 1) | ((h - 1) << 14);     /* alpha 0, version 0 */

  f[21] = bits;
  f[22] = bits >> 8;
  f[23] = bits >> 16;
  f[24] = bits >> 24;
  write_file (root, name, f, sizeof (f));
}

static void
put_le16 (GByteArray * a, guint v)
{
  guint8 b[2] = { v, v >> 8 };

  g_byte_array_append (a, b, 2);
}

static void
put_le32 (GByteArray * a, guint32 v)
{
  guint8 b[4] = { v, v >> 8, v >> 16, v >> 24 };

  g_byte_array_append (a, b, 4);
}

/* A BMP of @w x @h (@h < 0: top-down), BITMAPINFOHEADER, @bits 24 (the
 * test pattern) or 8 (a gray palette; @rle: RLE8 runs of each row's
 * pattern), @data_cut bytes of the data dropped at the end. */
static GByteArray *
make_bmp (guint w, gint h, guint bits, guint compression, gsize data_cut)
{
  GByteArray *bmp = g_byte_array_new (), *px = g_byte_array_new ();
  guint rows = ABS (h), x, y, i, pal = bits == 8 ? 256 : 0;
  gsize stride = ((gsize) w * bits + 31) / 32 * 4;
  guint8 zero[4] = { 0 };

  for (y = 0; y < rows; y++) {
    if (compression == 1) {
      for (x = 0; x < w; x += 100) {
        guint8 run[2] = { MIN (100, w - x), spdl_test_pattern (x, y, 0, 0) };
        g_byte_array_append (px, run, 2);
      }
      g_byte_array_append (px, zero, 2);        /* end of row */
      continue;
    }
    for (x = 0; x < w; x++)
      for (i = 0; i < bits / 8; i++) {
        guint8 v = spdl_test_pattern (x, y, 2 - i, 0);
        g_byte_array_append (px, &v, 1);
      }
    g_byte_array_append (px, zero, stride - (gsize) w * bits / 8);
  }
  if (compression == 1) {
    px->data[px->len - 1] = 1;  /* end of bitmap */
  }
  g_byte_array_append (bmp, (const guint8 *) "BM", 2);
  put_le32 (bmp, 14 + 40 + pal * 4 + px->len);
  put_le32 (bmp, 0);
  put_le32 (bmp, 14 + 40 + pal * 4);
  put_le32 (bmp, 40);
  put_le32 (bmp, w);
  put_le32 (bmp, (guint32) h);
  put_le16 (bmp, 1);
  put_le16 (bmp, bits);
  put_le32 (bmp, compression);
  put_le32 (bmp, px->len);
  put_le32 (bmp, 2835);
  put_le32 (bmp, 2835);
  put_le32 (bmp, 0);
  put_le32 (bmp, 0);
  for (i = 0; i < pal; i++) {
    guint8 e[4] = { i, i, i, 0 };
    g_byte_array_append (bmp, e, 4);
  }
  g_byte_array_append (bmp, px->data, px->len - MIN (data_cut, px->len));
  g_byte_array_unref (px);
  return bmp;
}

static int
gif_write (GifFileType * gif, const GifByteType * data, int n)
{
  g_byte_array_append (gif->UserData, data, n);
  return n;
}

/* A GIF of @w x @h with giflib, a 256-gray palette */
static GByteArray *
make_gif (guint w, guint h, gboolean interlace)
{
  GByteArray *out = g_byte_array_new ();
  ColorMapObject *map = GifMakeMapObject (256, NULL);
  GifPixelType *line = g_malloc (w);
  static const guint start[] = { 0, 4, 2, 1 }, step[] = { 8, 8, 4, 2 };
  guint i, pass, x, y;
  int err;
  GifFileType *gif = EGifOpen (out, gif_write, &err);

  fail_unless (gif != NULL);
  for (i = 0; i < 256; i++)
    map->Colors[i].Red = map->Colors[i].Green = map->Colors[i].Blue = i;
  fail_unless (EGifPutScreenDesc (gif, w, h, 8, 0, map) == GIF_OK);
  fail_unless (EGifPutImageDesc (gif, 0, 0, w, h, interlace, NULL) ==
      GIF_OK);
  for (pass = 0; pass < (interlace ? 4 : 1); pass++)
    for (y = interlace ? start[pass] : 0; y < h; y += interlace ?
        step[pass] : 1) {
      for (x = 0; x < w; x++)
        line[x] = spdl_test_pattern (x, y, 0, 0);
      fail_unless (EGifPutLine (gif, line, w) == GIF_OK);
    }
  fail_unless (EGifCloseFile (gif, &err) == GIF_OK);
  GifFreeMapObject (map);
  g_free (line);
  return out;
}

/* A TIFF of @w x @h RGB with libtiff (@compression, @tiled in 16x16
 * tiles), written to @name; its bytes returned. */
static GByteArray *
make_tiff (const gchar * root, const gchar * name, guint w, guint h,
    guint compression, gboolean tiled)
{
  gchar *path = g_build_filename (root, "c0", name, NULL);
  TIFF *tif = TIFFOpen (path, "w");
  guint8 *row = g_malloc ((gsize) w * 3 * 16);
  guint x, y, c;
  gchar *contents;
  gsize len;
  GByteArray *out;

  fail_unless (tif != NULL);
  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, w);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, h);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 3);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
  TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField (tif, TIFFTAG_COMPRESSION, compression);
  if (tiled) {
    TIFFSetField (tif, TIFFTAG_TILEWIDTH, 16);
    TIFFSetField (tif, TIFFTAG_TILELENGTH, 16);
    memset (row, 0x80, (gsize) 16 * 16 * 3);
    for (y = 0; y < h; y += 16)
      for (x = 0; x < w; x += 16)
        fail_unless (TIFFWriteTile (tif, row, x, y, 0, 0) > 0);
  } else {
    for (y = 0; y < h; y++) {
      for (x = 0; x < w; x++)
        for (c = 0; c < 3; c++)
          row[x * 3 + c] = spdl_test_pattern (x, y, c, 0);
      fail_unless (TIFFWriteScanline (tif, row, y, 0) == 1);
    }
  }
  TIFFClose (tif);
  fail_unless (g_file_get_contents (path, &contents, &len, NULL));
  out = g_byte_array_new_take ((guint8 *) contents, len);
  g_free (path);
  g_free (row);
  return out;
}

typedef struct
{
  const gchar *name;
  const gchar *reason;          /* NULL: decodes */
  const gchar *says;            /* in the warning */
} Expect;

static const Expect expected[] = {
  {"good.png", NULL, NULL},
  /* a zTXt inflating past 1 MiB: PIL fails ("Decompressed Data Too Large") */
  {"ztxt-bomb.png", "too-large", "Decompressed Data Too Large"},
  {"good-lossy.webp", NULL, NULL},
  {"good-lossless.webp", NULL, NULL},
  {"png-named.jpg", NULL, NULL},
  {"cut.png", "truncated", "truncated"},
  {"no-iend.png", NULL, NULL},  /* PIL reads it: no IEND needed */
  {"cut.webp", "truncated", "truncated"},
  {"cut-header.webp", "truncated", "truncated"},
  {"bad-crc.png", NULL, NULL},  /* PIL reads IDAT without its CRC */
  {"bad-zlib.png", "corrupt", "corrupt"},
  {"zero-width.png", "corrupt", "size 0x"},
  {"bad-start-code.webp", "corrupt", "bitstream"},
  {"huge.png", "too-large", "max-pixels"},
  {"bomb.png", "too-large", "max-pixels"},
  {"huge.webp", "too-large", "max-pixels"},
  {"a.bmp", "truncated", "BMP header"},
  {"a.tif", "corrupt", "TIFF directory"},
  {"a.ppm", "unsupported-format", "PPM"},
  {"gif-named.png", "truncated", "GIF"},
  /* BMP */
  {"good.bmp", NULL, NULL},
  {"good-top-down.bmp", NULL, NULL},
  {"good-rle8.bmp", NULL, NULL},
  {"one-pixel.bmp", NULL, NULL},
  {"aspect-3000x1.bmp", NULL, NULL},
  {"aspect-1x3000-rle8.bmp", NULL, NULL},
  {"cut.bmp", "truncated", "truncated"},
  {"cut-rle8.bmp", "truncated", "truncated"},
  {"early-end-rle8.bmp", "corrupt", "RLE"},
  {"bad-header-size.bmp", "corrupt", "header"},
  {"zero-width.bmp", "corrupt", "size 0x"},
  {"huge.bmp", "too-large", "max-pixels"},
  {"2-bit.bmp", "unsupported", "2-bit"},
  {"jpeg-in.bmp", "unsupported", "compression"},
  /* GIF */
  {"good.gif", NULL, NULL},
  {"good-interlaced.gif", NULL, NULL},
  {"one-pixel.gif", NULL, NULL},
  {"aspect-2000x1.gif", NULL, NULL},
  {"aspect-1x2000-interlaced.gif", NULL, NULL},
  {"cut.gif", "truncated", "truncated"},
  {"cut-header.gif", "truncated", "truncated"},
  {"no-image.gif", "corrupt", "without an image"},
  /* width 0 at the left edge: the whole screen to PIL */
  {"zero-frame.gif", NULL, NULL},
  {"junk-record.gif", "corrupt", "without an image"}, /* its separator gone */
  {"bad-lzw.gif", "corrupt", "LZW code 511 past the table"},
  {"bad-lzw-after-clear.gif", "corrupt", "LZW code 510 after a clear"},
  {"huge.gif", "too-large", "max-pixels"},
  /* TIFF */
  {"good.tif", NULL, NULL},
  {"good-lzw.tif", NULL, NULL},
  {"one-pixel.tif", NULL, NULL},
  {"aspect-3000x1.tif", NULL, NULL},
  {"aspect-1x3000-lzw.tif", NULL, NULL},
  {"cut.tif", "truncated", "strip"},
  {"cut-lzw.tif", "truncated", "strip"},
  {"cut-header.tif", "truncated", "TIFF header"},
  {"bad-lzw.tif", "corrupt", "TIFF image data"},
  {"bad-directory.tif", "corrupt", "TIFF directory"},
  {"huge.tif", "too-large", "max-pixels"},
  {"tiled.tif", NULL, NULL},
  {"jpeg2000.tif", "unsupported", "compression 34712"},
};

static guint32
le32_at (const guint8 * p)
{
  return p[0] | (p[1] << 8) | (p[2] << 16) | ((guint32) p[3] << 24);
}

/* The first value of @tag in a little-endian TIFF's first directory set
 * to @value (a SHORT or LONG tag). */
static void
tiff_patch (GByteArray * a, guint tag, guint32 value)
{
  guint32 dir = le32_at (a->data + 4);
  guint n = a->data[dir] | (a->data[dir + 1] << 8), i;

  for (i = 0; i < n; i++) {
    guint8 *e = a->data + dir + 2 + 12 * i;
    guint type = e[2] | (e[3] << 8), size = type == TIFF_SHORT ? 2 : 4;
    guint8 *v;

    if ((guint) (e[0] | (e[1] << 8)) != tag)
      continue;
    v = le32_at (e + 4) * size <= 4 ? e + 8 : a->data + le32_at (e + 8);
    v[0] = value;
    v[1] = value >> 8;
    if (size == 4) {
      v[2] = value >> 16;
      v[3] = value >> 24;
    }
    return;
  }
  fail ("no tag %u in the TIFF", tag);
}

/* a byte array's file, less @cut bytes at its end */
static void
write_cut (const gchar * root, const gchar * name, GByteArray * a, gsize cut)
{
  write_file (root, name, a->data, a->len - MIN (cut, a->len));
}

static void
make_more_formats (const gchar * root)
{
  GByteArray *a, *b;
  gsize i;

  a = make_bmp (64, 48, 24, 0, 0);
  write_array (root, "good.bmp", a);
  write_cut (root, "cut.bmp", a, a->len / 2);
  a->data[14] = 41;             /* no header has 41 bytes */
  write_array (root, "bad-header-size.bmp", a);
  a->data[14] = 40;
  a->data[28] = 2;              /* 2 bits a pixel: PIL has no mode */
  write_array (root, "2-bit.bmp", a);
  a->data[28] = 24;
  a->data[30] = 4;              /* BI_JPEG */
  write_array (root, "jpeg-in.bmp", a);
  g_byte_array_unref (a);
  write_array (root, "good-top-down.bmp", a = make_bmp (64, -48, 24, 0, 0));
  g_byte_array_unref (a);
  write_array (root, "one-pixel.bmp", a = make_bmp (1, 1, 24, 0, 0));
  g_byte_array_unref (a);
  write_array (root, "aspect-3000x1.bmp", a = make_bmp (3000, 1, 24, 0, 0));
  g_byte_array_unref (a);
  write_array (root, "zero-width.bmp", a = make_bmp (0, 48, 24, 0, 0));
  g_byte_array_unref (a);
  a = make_bmp (64, 48, 8, 1, 0);
  write_array (root, "good-rle8.bmp", a);
  write_cut (root, "cut-rle8.bmp", a, 50);
  g_byte_array_unref (a);
  write_array (root, "aspect-1x3000-rle8.bmp", a = make_bmp (1, 3000, 8, 1,
          0));
  g_byte_array_unref (a);
  /* the end of bitmap after the first row */
  a = make_bmp (64, 48, 8, 1, 0);
  a->data[14 + 40 + 1024 + 2] = 0;
  a->data[14 + 40 + 1024 + 3] = 1;
  write_array (root, "early-end-rle8.bmp", a);
  g_byte_array_unref (a);
  /* 100000 x 100000 in the header, a few bytes of data */
  a = make_bmp (4, 4, 24, 0, 0);
  a->data[18] = 0xa0;
  a->data[19] = 0x86;
  a->data[20] = 0x01;
  a->data[22] = 0xa0;
  a->data[23] = 0x86;
  a->data[24] = 0x01;
  write_array (root, "huge.bmp", a);
  g_byte_array_unref (a);

  a = make_gif (64, 48, FALSE);
  b = make_gif (64, 48, FALSE);
  write_array (root, "good.gif", a);
  write_cut (root, "cut.gif", a, 100);
  write_cut (root, "cut-header.gif", a, a->len - 10);
  /* LZW data (the 8-bit code size at 791, the first block's length at
   * 792) where giflib makes pixels and PIL fails: 9-bit codes 511 past
   * the table; the first code after giflib's clear code 510, no pixel */
  memset (a->data + 800, 0xff, 8);
  write_array (root, "bad-lzw.gif", a);
  memcpy (a->data + 800, b->data + 800, 8);
  a->data[794] = (a->data[794] & 1) | 0xfc;
  a->data[795] |= 3;
  write_array (root, "bad-lzw-after-clear.gif", a);
  memcpy (a->data + 794, b->data + 794, 2);
  /* the trailer right after the screen and its palette */
  a->data[13 + 768] = ';';
  write_cut (root, "no-image.gif", a, a->len - (13 + 768 + 1));
  /* a byte that starts no record before the image */
  a->data[13 + 768] = 'x';
  write_array (root, "junk-record.gif", a);
  a->data[13 + 768] = ',';
  for (i = 13 + 768; i < a->len && a->data[i] != ','; i++);
  a->data[i + 5] = a->data[i + 6] = 0;  /* the frame's width */
  write_array (root, "zero-frame.gif", a);
  a->data[i + 5] = 64;
  a->data[6] = a->data[7] = a->data[8] = a->data[9] = 0xff;     /* screen */
  write_array (root, "huge.gif", a);
  g_byte_array_unref (a);
  g_byte_array_unref (b);
  write_array (root, "good-interlaced.gif", a = make_gif (64, 48, TRUE));
  g_byte_array_unref (a);
  write_array (root, "one-pixel.gif", a = make_gif (1, 1, FALSE));
  g_byte_array_unref (a);
  write_array (root, "aspect-2000x1.gif", a = make_gif (2000, 1, FALSE));
  g_byte_array_unref (a);
  write_array (root, "aspect-1x2000-interlaced.gif", a = make_gif (1, 2000,
          TRUE));
  g_byte_array_unref (a);

  /* TIFFs are written by libtiff to their own names, then varied: libtiff
   * writes the strips, then the directory */
  a = make_tiff (root, "good.tif", 64, 48, COMPRESSION_NONE, FALSE);
  write_cut (root, "cut-header.tif", a, a->len - 6);
  /* the strip starts 10 bytes before the end */
  tiff_patch (a, TIFFTAG_STRIPOFFSETS, a->len - 10);
  write_array (root, "cut.tif", a);
  memset (a->data + 4, 0xee, 4);        /* the directory offset */
  write_array (root, "bad-directory.tif", a);
  g_byte_array_unref (a);
  a = make_tiff (root, "good-lzw.tif", 64, 48, COMPRESSION_LZW, FALSE);
  /* the LZW data overwritten with codes past the table */
  memset (a->data + 8, 0xff, 64);
  write_array (root, "bad-lzw.tif", a);
  tiff_patch (a, TIFFTAG_STRIPOFFSETS, a->len - 10);
  write_array (root, "cut-lzw.tif", a);
  g_byte_array_unref (a);
  g_byte_array_unref (make_tiff (root, "one-pixel.tif", 1, 1,
          COMPRESSION_NONE, FALSE));
  g_byte_array_unref (make_tiff (root, "aspect-3000x1.tif", 3000, 1,
          COMPRESSION_NONE, FALSE));
  g_byte_array_unref (make_tiff (root, "aspect-1x3000-lzw.tif", 1, 3000,
          COMPRESSION_LZW, FALSE));
  g_byte_array_unref (make_tiff (root, "tiled.tif", 64, 48,
          COMPRESSION_NONE, TRUE));
  /* a compression neither PIL nor libtiff decodes */
  a = make_tiff (root, "jpeg2000.tif", 64, 48, COMPRESSION_NONE, FALSE);
  tiff_patch (a, TIFFTAG_COMPRESSION, 34712);
  write_array (root, "jpeg2000.tif", a);
  g_byte_array_unref (a);
  a = make_tiff (root, "huge.tif", 4, 4, COMPRESSION_NONE, FALSE);
  tiff_patch (a, TIFFTAG_IMAGEWIDTH, 65535);
  tiff_patch (a, TIFFTAG_IMAGELENGTH, 65535);
  write_array (root, "huge.tif", a);
  g_byte_array_unref (a);
}

static gchar *
make_hostile_folder (void)
{
  gchar *root = spdl_test_make_tmpdir ();
  gsize raw_len, n, i;
  guint8 *raw = rgb_scanlines (64, 48, &raw_len), *px = rgb_pixels (64, 48);
  guint8 *webp, *zeros, *ztxt, *bomb_raw;
  GByteArray *good = make_png (64, 48, 8, 2, raw, raw_len, NULL, NULL, 0);
  GByteArray *a;
  gsize bomb_row = 1 + 13400 / 8 + 1, ztxt_len, zeros_len = 16 << 20;

  write_array (root, "good.png", good);
  write_array (root, "png-named.jpg", good);
  write_file (root, "cut.png", good->data, good->len / 2);
  write_file (root, "no-iend.png", good->data, good->len - 12);
  a = g_byte_array_sized_new (good->len);
  g_byte_array_append (a, good->data, good->len);
  /* IDAT's data intact, its CRC wrong */
  for (i = 8; i + 8 < a->len; i++)
    if (memcmp (a->data + i, "IDAT", 4) == 0) {
      const guint8 *l = a->data + i - 4;
      guint32 len = ((guint32) l[0] << 24) | (l[1] << 16) | (l[2] << 8) | l[3];
      a->data[i + 4 + len] ^= 0x55;
      break;
    }
  write_array (root, "bad-crc.png", a);
  g_byte_array_unref (a);

  /* deflate data that is not zlib, with a correct CRC */
  {
    GByteArray *bad = g_byte_array_new ();
    guint8 junk[64];
    g_byte_array_append (bad, good->data, 33);  /* signature + IHDR */
    memset (junk, 0xA5, sizeof (junk));
    png_chunk (bad, "IDAT", junk, sizeof (junk));
    png_chunk (bad, "IEND", NULL, 0);
    write_array (root, "bad-zlib.png", bad);
    g_byte_array_unref (bad);
  }
  a = make_png (0, 48, 8, 2, raw, raw_len, NULL, NULL, 0);
  write_array (root, "zero-width.png", a);
  g_byte_array_unref (a);
  a = make_png (100000, 100000, 8, 2, raw, raw_len, NULL, NULL, 0);
  write_array (root, "huge.png", a);
  g_byte_array_unref (a);

  /* a real bomb: 13400 x 13400 1-bit black (over PIL's limit, the
   * default max-pixels), a few kB deflated */
  bomb_raw = g_malloc0 (bomb_row * 13400);
  a = make_png (13400, 13400, 1, 0, bomb_raw, bomb_row * 13400, NULL, NULL,
      0);
  fail_unless (a->len < 100000);
  write_array (root, "bomb.png", a);
  g_byte_array_unref (a);
  g_free (bomb_raw);

  /* 16 MiB of text in a zTXt chunk of a few kB */
  zeros = g_malloc0 (zeros_len);
  ztxt = deflate_bytes (zeros, zeros_len, &ztxt_len);
  {
    GByteArray *payload = g_byte_array_new ();
    g_byte_array_append (payload, (const guint8 *) "Comment\0\0", 9);
    g_byte_array_append (payload, ztxt, ztxt_len);
    a = make_png (64, 48, 8, 2, raw, raw_len, "zTXt", payload->data,
        payload->len);
    write_array (root, "ztxt-bomb.png", a);
    g_byte_array_unref (a);
    g_byte_array_unref (payload);
  }
  g_free (zeros);
  g_free (ztxt);

  n = WebPEncodeRGB (px, 64, 48, 64 * 3, 80, &webp);
  fail_unless (n > 0);
  write_file (root, "good-lossy.webp", webp, n);
  write_file (root, "cut.webp", webp, n / 2);
  write_file (root, "cut-header.webp", webp, 20);
  /* the VP8 frame's start code (9d 01 2a) broken */
  for (i = 12; i + 3 < n; i++)
    if (webp[i] == 0x9d && webp[i + 1] == 0x01 && webp[i + 2] == 0x2a) {
      webp[i + 1] = 0x02;
      break;
    }
  write_file (root, "bad-start-code.webp", webp, n);
  WebPFree (webp);
  n = WebPEncodeLosslessRGB (px, 64, 48, 64 * 3, &webp);
  fail_unless (n > 0);
  write_file (root, "good-lossless.webp", webp, n);
  WebPFree (webp);
  write_vp8l_header (root, "huge.webp", 16384, 16384);

  make_more_formats (root);
  write_file (root, "a.bmp", (const guint8 *) "BM\0\0\0\0\0\0\0\0\0\0\0\0\0",
      16);
  write_file (root, "a.tif", (const guint8 *) "II*\0\0\0\0\0", 8);
  write_file (root, "a.ppm", (const guint8 *) "P6\n2 2\n255\n000000000000",
      23);
  write_file (root, "gif-named.png", (const guint8 *) "GIF89a\1\0\1\0\0\0\0",
      13);

  g_byte_array_unref (good);
  g_free (raw);
  g_free (px);
  return root;
}

GST_START_TEST (test_hostile_images_skipped_by_reason)
{
  gchar *root = make_hostile_folder ();
  /* GIF is not among the extensions torchvision (and spdlsrc) lists */
  gchar *launch = g_strdup_printf ("spdlsrc location=%s "
      "extensions=jpg,png,webp,bmp,gif,tif,ppm ! spdldecode width=32 "
      "height=24 threads=2 warning-limit=100", root);
  const gchar *reasons[] = { "truncated", "corrupt", "too-large",
    "unsupported", "unsupported-format"
  };
  SpdlTestRun *run = spdl_test_run (launch);
  guint i, r, good = 0, bad = 0;

  fail_unless (run->error == NULL, "%s", run->error);
  for (i = 0; i < G_N_ELEMENTS (expected); i++) {
    if (expected[i].reason == NULL) {
      good++;
      continue;
    }
    bad++;
    fail_unless (spdl_test_run_warned (run, expected[i].name, expected[i].says),
        "no warning naming %s with \"%s\"", expected[i].name,
        expected[i].says);
  }
  fail_unless_equals_int (spdl_test_run_count_samples (run), good);
  for (i = 0; i < run->items->len; i++) {
    SpdlTestItem *item = ITEM (run, i);
    gboolean known = FALSE;
    guint k;

    if (item->buffer == NULL)
      continue;
    for (k = 0; k < G_N_ELEMENTS (expected); k++)
      if (expected[k].reason == NULL &&
          g_str_has_suffix (item->path, expected[k].name))
        known = TRUE;
    fail_unless (known, "%s decoded", item->path);
    fail_unless_equals_int (gst_buffer_get_size (item->buffer), 32 * 3 * 24);
  }
  for (r = 0; r < G_N_ELEMENTS (reasons); r++) {
    guint64 want = 0;
    for (i = 0; i < G_N_ELEMENTS (expected); i++)
      want += g_strcmp0 (expected[i].reason, reasons[r]) == 0;
    fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
            reasons[r]), want);
  }
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
          "total"), bad);
  spdl_test_run_free (run);
  g_free (launch);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

static Suite *
spdlimageformats_suite (void)
{
  Suite *s = suite_create ("spdlimageformats");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_hostile_images_skipped_by_reason);
  return s;
}

SPDL_CHECK_MAIN (spdlimageformats);
