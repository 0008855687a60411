/* GStreamer SPDL: BMP decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* By hand, as PIL 9.4's BmpImagePlugin reads BMPs, since spdldecode's
 * pixels are PIL's: the headers it knows (OS/2 1.x, Windows 3 to 5), the
 * depths and bitfield layouts it knows, the palette read from right after
 * the header with indices past it gray (PIL's default palette), the data
 * offset as PIL takes it, and every layout PIL would read wrong or refuses
 * (a gray palette at 4 bits, say) refused as unsupported. Uncompressed rows
 * are read in place, bottom-up or top-down, converted to RGB one at a time
 * and resampled; RLE4/RLE8 data is expanded whole, one byte a pixel, with
 * PIL's decoder's own reading of the commands (its delta reads four bytes
 * and odd RLE4 runs lose a pixel: pixels equal PIL's on every file). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlbmp.h"
#include "gstspdlrowsink.h"
#include "gstspdlerrors.h"

#include <string.h>

#define FILE_HEADER 14
#define BI_RGB 0
#define BI_RLE8 1
#define BI_RLE4 2
#define BI_BITFIELDS 3

struct _GstSpdlBmpDecoder
{
  /* the image opened */
  const guint8 *data;
  gsize size;
  guint width, height;
  gboolean top_down;
  guint bits;
  guint compression;            /* BI_RGB (bitfields too), BI_RLE8, BI_RLE4 */
  guint r, g, b;                /* 24 and 32 bits: bytes of R, G, B */
  gboolean rgb565;              /* 16 bits: 5-6-5, else 5-5-5 */
  guint64 offset, stride;
  guint8 palette[256 * 3];
  gboolean opened;
  /* the decode */
  GstSpdlRowSink sink;
  guint8 *row;                  /* one RGB row */
  gsize row_size;
  guint8 *indices;              /* an RLE image, whole */
  gsize indices_size;
  guint64 max_memory;
};

GstSpdlBmpDecoder *
gst_spdl_bmp_decoder_new (void)
{
  GstSpdlBmpDecoder *dec = g_new0 (GstSpdlBmpDecoder, 1);

  dec->max_memory = GST_SPDL_IMAGE_DEFAULT_MAX_MEMORY;
  return dec;
}

void
gst_spdl_bmp_decoder_set_max_memory (GstSpdlBmpDecoder * dec,
    guint64 max_memory)
{
  dec->max_memory = max_memory;
}

void
gst_spdl_bmp_decoder_free (GstSpdlBmpDecoder * dec)
{
  if (dec == NULL)
    return;
  gst_spdl_row_sink_clear (&dec->sink);
  g_free (dec->row);
  g_free (dec->indices);
  g_free (dec);
}

static guint32
le32 (const guint8 * p)
{
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16) |
      ((guint32) p[3] << 24);
}

static guint
le16 (const guint8 * p)
{
  return p[0] | (p[1] << 8);
}

/* The byte of a little-endian 32-bit pixel that @mask selects. */
static guint
mask_byte (guint32 mask)
{
  return mask == 0xff ? 0 : mask == 0xff00 ? 1 : mask == 0xff0000 ? 2 : 3;
}

/* PIL's table of bitfield layouts; FALSE for any other. */
static gboolean
parse_bitfields (GstSpdlBmpDecoder * dec, const guint32 m[4])
{
  static const guint32 layouts32[][4] = {
    {0xff0000, 0xff00, 0xff, 0},
    {0xff000000, 0xff0000, 0xff00, 0},
    {0xff000000, 0xff0000, 0xff00, 0xff},
    {0xff, 0xff00, 0xff0000, 0xff000000},
    {0xff0000, 0xff00, 0xff, 0xff000000},
  };
  guint i;

  switch (dec->bits) {
    case 32:
      /* all four masks zero: PIL reads BGRA */
      if (m[0] == 0 && m[1] == 0 && m[2] == 0 && m[3] == 0)
        return TRUE;
      for (i = 0; i < G_N_ELEMENTS (layouts32); i++)
        if (memcmp (m, layouts32[i], sizeof (layouts32[i])) == 0) {
          dec->r = mask_byte (m[0]);
          dec->g = mask_byte (m[1]);
          dec->b = mask_byte (m[2]);
          return TRUE;
        }
      return FALSE;
    case 24:
      return m[0] == 0xff0000 && m[1] == 0xff00 && m[2] == 0xff;
    case 16:
      dec->rgb565 = m[0] == 0xf800 && m[1] == 0x7e0 && m[2] == 0x1f;
      return dec->rgb565 || (m[0] == 0x7c00 && m[1] == 0x3e0 && m[2] == 0x1f);
    default:
      return FALSE;
  }
}

/* The palette from right after the header (where PIL reads it, whatever
 * the data offset says), over PIL's default gray ramp. */
static gboolean
read_palette (GstSpdlBmpDecoder * dec, gsize pos, guint colors,
    guint entry_size, GError ** error)
{
  gboolean gray = TRUE;
  guint i;

  if (colors == 0 || colors > 256)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: a BMP palette of %u colours", colors);
  if (dec->size - pos < (gsize) colors * entry_size)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
        "truncated: the data ends in the BMP palette");
  for (i = 0; i < 256; i++)
    memset (dec->palette + 3 * i, i, 3);
  for (i = 0; i < colors; i++) {
    const guint8 *e = dec->data + pos + i * entry_size;
    /* PIL reads a palette of black and white, or of i, i, i at index i,
     * as a 1-bit or 8-bit gray image */
    guint want = colors == 2 ? (i ? 255 : 0) : i;

    dec->palette[3 * i] = e[2];
    dec->palette[3 * i + 1] = e[1];
    dec->palette[3 * i + 2] = e[0];
    if (e[0] != want || e[1] != want || e[2] != want)
      gray = FALSE;
  }
  if (!gray)
    return TRUE;
  /* PIL then unpacks the data as that mode: right only for these */
  if (dec->compression == BI_RGB ? (colors == 2 && dec->bits == 1) ||
      (colors != 2 && dec->bits == 8) : colors != 2)
    return TRUE;
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
      "unsupported: a %u-bit BMP with a gray palette of %u colours (PIL "
      "misreads it)", dec->bits, colors);
}

gboolean
gst_spdl_bmp_decoder_open (GstSpdlBmpDecoder * dec, const guint8 * data,
    gsize size, guint64 max_pixels, guint * width, guint * height,
    GError ** error)
{
  guint32 header, masks[4] = { 0, 0, 0, 0 };
  guint64 offset, colors, pixels, rowbytes;
  gsize pos;

  dec->opened = FALSE;
  dec->data = data;
  dec->size = size;
  if (size < FILE_HEADER + 4)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
        "truncated: %" G_GSIZE_FORMAT " bytes, shorter than a BMP header",
        size);
  offset = le32 (data + 10);
  header = le32 (data + FILE_HEADER);
  if (header == 52 || header == 56)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "unsupported: a BMP with a %u-byte header", header);
  if (header != 12 && header != 40 && header != 64 && header != 108 &&
      header != 124)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: a BMP header of %u bytes", header);
  if (size - FILE_HEADER < header)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
        "truncated: the data ends in the BMP header");
  pos = FILE_HEADER + header;
  dec->top_down = FALSE;
  dec->r = 2;
  dec->g = 1;
  dec->b = 0;
  dec->rgb565 = FALSE;
  if (header == 12) {
    /* OS/2 1.x: 16-bit sizes, bottom-up, no compression */
    dec->width = le16 (data + 18);
    dec->height = le16 (data + 20);
    dec->bits = le16 (data + 24);
    dec->compression = BI_RGB;
    colors = 0;
  } else {
    const guint8 *h = data + FILE_HEADER + 4;

    /* a negative height (PIL looks at its top byte only): top-down */
    dec->top_down = h[7] == 0xff;
    dec->width = le32 (h);
    dec->height = dec->top_down ? (guint) - le32 (h + 4) : le32 (h + 4);
    dec->bits = le16 (h + 10);
    dec->compression = le32 (h + 12);
    colors = le32 (h + 28);
    if (dec->compression == BI_BITFIELDS) {
      guint i, n = header >= 56 ? 4 : 3;
      /* in the header, or (40 bytes) right after it: at byte 54 both */
      if (header < 56) {
        if (size - pos < 12)
          return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
              "truncated: the data ends in the BMP bitfields");
        pos += 12;
      }
      for (i = 0; i < n; i++)
        masks[i] = le32 (data + FILE_HEADER + 40 + 4 * i);
    }
  }
  if (dec->width == 0 || dec->height == 0 || dec->width > 0x7fffffff ||
      dec->height > 0x7fffffff)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: invalid BMP size %ux%u", dec->width, dec->height);
  if (colors == 0 && dec->bits < 32)
    colors = (guint64) 1 << dec->bits;
  /* PIL: a data offset that is the header's end leaves room for a palette
   * of 4-byte entries */
  if (offset == FILE_HEADER + header && dec->bits <= 8)
    offset += 4 * colors;
  if (dec->bits != 1 && dec->bits != 4 && dec->bits != 8 && dec->bits != 16
      && dec->bits != 24 && dec->bits != 32)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "unsupported: a %u-bit BMP", dec->bits);
  switch (dec->compression) {
    case BI_BITFIELDS:
      if (!parse_bitfields (dec, masks))
        return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
            "unsupported: a %u-bit BMP with bitfields %08x %08x %08x",
            dec->bits, masks[0], masks[1], masks[2]);
      dec->compression = BI_RGB;
      break;
    case BI_RGB:
      break;
    case BI_RLE8:
    case BI_RLE4:
      if (dec->bits <= 8)
        break;
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
          "unsupported: a %u-bit RLE BMP", dec->bits);
    default:
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
          "unsupported: BMP compression %u", dec->compression);
  }
  pixels = (guint64) dec->width * dec->height;
  if (max_pixels && pixels > max_pixels)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u is %" G_GUINT64_FORMAT " pixels, more than max-pixels=%"
        G_GUINT64_FORMAT, dec->width, dec->height, pixels, max_pixels);
  if (dec->bits <= 8) {
    guint entry = header == 12 ? 3 : 4;

    if (!read_palette (dec, pos, colors, entry, error))
      return FALSE;
    pos += colors * entry;
  }
  /* PIL reads the pixels from the data offset, or when that is 0 from
   * where the header (and palette) end */
  dec->offset = offset ? offset : pos;
  dec->stride = (((guint64) dec->width * dec->bits + 31) >> 3) & ~3;
  /* the last row needs no padding */
  rowbytes = ((guint64) dec->width * dec->bits + 7) >> 3;
  if (dec->compression == BI_RGB && (dec->offset > size ||
          size - dec->offset < rowbytes ||
          (size - dec->offset - rowbytes) / dec->stride < dec->height - 1))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
        "truncated: %" G_GSIZE_FORMAT " bytes, the BMP's %ux%u pixels need "
        "%" G_GUINT64_FORMAT, size, dec->width, dec->height,
        dec->offset + dec->stride * (dec->height - 1) + rowbytes);
  *width = dec->width;
  *height = dec->height;
  dec->opened = TRUE;
  return TRUE;
}

/* Row @y of the image (top first), uncompressed, to RGB. */
static const guint8 *
convert_row (GstSpdlBmpDecoder * dec, guint y)
{
  guint64 r = dec->top_down ? y : dec->height - 1 - y;
  const guint8 *in = dec->data + dec->offset + r * dec->stride;
  guint8 *out = dec->row;
  guint x, n = dec->width;

  switch (dec->bits) {
    case 1:
    case 4:
    case 8:{
      guint per_byte = 8 / dec->bits, mask = (1 << dec->bits) - 1;

      for (x = 0; x < n; x++, out += 3) {
        guint shift = 8 - dec->bits * (x % per_byte + 1);
        guint i = (in[x / per_byte] >> shift) & mask;

        memcpy (out, dec->palette + 3 * i, 3);
      }
      break;
    }
    case 16:
      /* PIL scales 5 and 6 bits by 255 / 31 and 255 / 63, rounding down */
      for (x = 0; x < n; x++, in += 2, out += 3) {
        guint v = le16 (in);

        if (dec->rgb565) {
          out[0] = (v >> 11) * 255 / 31;
          out[1] = ((v >> 5) & 63) * 255 / 63;
        } else {
          out[0] = ((v >> 10) & 31) * 255 / 31;
          out[1] = ((v >> 5) & 31) * 255 / 31;
        }
        out[2] = (v & 31) * 255 / 31;
      }
      break;
    default:{
      guint step = dec->bits / 8;

      for (x = 0; x < n; x++, in += step, out += 3) {
        out[0] = in[dec->r];
        out[1] = in[dec->g];
        out[2] = in[dec->b];
      }
      break;
    }
  }
  return dec->row;
}

/* PIL's BmpRleDecoder, command for command, into dec->indices (rows in
 * file order). @total pixels; FALSE when the data gives fewer. */
static gboolean
expand_rle (GstSpdlBmpDecoder * dec, GError ** error)
{
  const guint8 *data = dec->data;
  guint64 size = dec->size, pos = dec->offset;
  guint64 w = dec->width, total = w * dec->height, len = 0, x = 0;
  gboolean rle4 = dec->compression == BI_RLE4, ended = FALSE;
  guint8 *out = dec->indices;

#define PUT(v) G_STMT_START { if (len < total) out[len] = (v); len++; } \
    G_STMT_END
  while (len < total) {
    guint n, b, i;

    if (pos + 2 > size)
      break;
    n = data[pos];
    b = data[pos + 1];
    pos += 2;
    if (n) {
      /* a run, cut at the row's end */
      if (x + n > w)
        n = x < w ? w - x : 0;
      for (i = 0; i < n; i++)
        PUT (rle4 ? (i % 2 ? b & 15 : b >> 4) : b);
      x += n;
    } else if (b == 0) {
      /* end of row: the rest of the row is 0 */
      while (len % w)
        PUT (0);
      x = 0;
    } else if (b == 1) {
      ended = TRUE;
      break;
    } else if (b == 2) {
      /* delta: PIL reads two bytes, then two more for right and up */
      guint64 skip;

      if (pos + 2 > size)
        break;
      if (pos + 4 > size)
        return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
            "truncated: the data ends in a BMP RLE delta");
      skip = data[pos + 2] + (guint64) data[pos + 3] * w;
      pos += 4;
      if (len < total)
        memset (out + len, 0, MIN (skip, total - len));
      len += skip;
      x = len % w;
    } else {
      /* b literal pixels; PIL reads b / 2 bytes of RLE4 */
      guint64 want = rle4 ? b / 2 : b, got = MIN (want, size - pos);

      for (i = 0; i < got; i++) {
        guint v = data[pos + i];

        if (rle4) {
          PUT (v >> 4);
          PUT (v & 15);
        } else
          PUT (v);
      }
      pos += got;
      if (got < want)
        break;
      x += b;
      /* word-aligned in the file */
      pos += pos % 2;
    }
  }
#undef PUT
  if (len >= total)
    return TRUE;
  if (ended)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: the BMP's RLE data ends after %" G_GUINT64_FORMAT " of its "
        "%" G_GUINT64_FORMAT " pixels", len, total);
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
      "truncated: the data ends after %" G_GUINT64_FORMAT " of the BMP's %"
      G_GUINT64_FORMAT " pixels", len, total);
}

static gboolean
decode_rle (GstSpdlBmpDecoder * dec, GError ** error)
{
  guint64 need = (guint64) dec->width * dec->height;
  gint y;

  if (dec->max_memory && need > dec->max_memory)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u RLE BMP needs %" G_GUINT64_FORMAT " MiB to decode, more than "
        "max-decode-memory=%" G_GUINT64_FORMAT " MiB", dec->width,
        dec->height, need >> 20, dec->max_memory >> 20);
  if (!gst_spdl_try_ensure_buffer (&dec->indices, &dec->indices_size, need))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u RLE BMP: out of memory", dec->width, dec->height);
  if (!expand_rle (dec, error))
    return FALSE;
  for (y = dec->sink.y0; y < dec->sink.y1; y++) {
    guint64 r = dec->top_down ? (guint) y : dec->height - 1 - y;
    const guint8 *in = dec->indices + r * dec->width;
    guint x;

    for (x = 0; x < dec->width; x++)
      memcpy (dec->row + 3 * x, dec->palette + 3 * in[x], 3);
    gst_spdl_row_sink_push (&dec->sink, y, dec->row, GST_SPDL_PIXELS_RGB);
  }
  return TRUE;
}

gboolean
gst_spdl_bmp_decoder_decode (GstSpdlBmpDecoder * dec,
    const GstSpdlDecodeParams * p, const GstSpdlGeometry * g,
    const GstSpdlOutput * out, GError ** error)
{
  gboolean ok = TRUE;
  gint y;

  g_return_val_if_fail (dec->opened, FALSE);
  dec->opened = FALSE;
  gst_spdl_row_sink_plan (&dec->sink, out, g, dec->width, dec->height,
      p->gray ? 1 : 3, !p->exact);
  if (dec->sink.y1 > 0) {
    /* 16 bytes of slack: the SIMD row kernel loads 16 bytes per window */
    gst_spdl_ensure_buffer (&dec->row, &dec->row_size,
        (gsize) dec->width * 3 + 16);
    if (dec->compression == BI_RGB) {
      for (y = dec->sink.y0; y < dec->sink.y1; y++)
        gst_spdl_row_sink_push (&dec->sink, y, convert_row (dec, y),
            GST_SPDL_PIXELS_RGB);
    } else
      ok = decode_rle (dec, error);
  }
  if (ok)
    gst_spdl_row_sink_finish (&dec->sink, out);
  gst_spdl_release_large_buffer (&dec->indices, &dec->indices_size);
  gst_spdl_release_large_buffer (&dec->row, &dec->row_size);
  return ok;
}
