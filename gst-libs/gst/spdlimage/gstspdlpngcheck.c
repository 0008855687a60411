/* GStreamer SPDL: a PNG's chunks and compressed data, checked as PIL does
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Region decoding stops after the crop's last row, before the rest of the
 * compressed data, its Adler-32 and the chunks after it are read: a bit
 * flipped there would be delivered silently where PIL fails ("broken data
 * stream"). This pass decides as PIL 9.4's PngImagePlugin and ZipDecode
 * decide, on every image whatever the crop: the chunks before IDAT with
 * their CRCs (Image.open), the IDAT data fed to zlib in PIL's reads (64
 * KiB, never across a chunk; IDAT CRCs are not read), stopping where PIL's
 * decoder has its last row, then the chunks after it as load_end() walks
 * them (no CRC, junk or a missing IEND end the walk, a chunk longer than
 * the data fails). The text and ICC chunks on either side are read as
 * PIL's handlers read them: one that inflates past 1 MiB, text past 64 MiB
 * in all, or an unknown compression method fails the file as it fails
 * PIL. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlpngcheck.h"
#include "gstspdlerrors.h"

#include <string.h>
#include <zlib.h>

#define SIGNATURE_SIZE 8
/* ImageFile.decodermaxblock: what PIL reads and feeds the decoder at once */
#define PIL_READ_SIZE 65536
/* PngImagePlugin's MAX_TEXT_CHUNK (ImageFile.SAFEBLOCK) and MAX_TEXT_MEMORY */
#define PIL_MAX_TEXT_CHUNK (1 << 20)
#define PIL_MAX_TEXT_MEMORY (64 * (guint64) PIL_MAX_TEXT_CHUNK)

static guint32
read_be32 (const guint8 * p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) |
      ((guint32) p[2] << 8) | p[3];
}

/* PIL's is_cid: four of [A-Za-z0-9_] */
static gboolean
is_chunk_type (const guint8 * p, gsize avail)
{
  gsize i;

  if (avail < 4)
    return FALSE;
  for (i = 0; i < 4; i++)
    if (!g_ascii_isalnum (p[i]) && p[i] != '_')
      return FALSE;
  return TRUE;
}

/* The filtered rows of the image, in order (Adam7's passes one after the
 * other): each a filter byte and the packed samples. */
typedef struct
{
  guint width, height, bits;    /* bits per pixel */
  gboolean interlaced;
  guint pass;
  guint64 rows_left, row_size, offset;  /* in the current row */
  guint64 total;                /* bytes of all rows */
} RowWalk;

static const guint adam7_x0[7] = { 0, 4, 0, 2, 0, 1, 0 };
static const guint adam7_dx[7] = { 8, 8, 4, 4, 2, 2, 1 };
static const guint adam7_y0[7] = { 0, 0, 4, 0, 2, 0, 1 };
static const guint adam7_dy[7] = { 8, 8, 8, 4, 4, 2, 2 };

/* Sets *@rows and *@row_size of @pass (0 rows for an empty pass). */
static void
pass_layout (const RowWalk * w, guint pass, guint64 * rows,
    guint64 * row_size)
{
  guint64 cols = w->width, n = w->height;

  if (w->interlaced) {
    cols = w->width > adam7_x0[pass] ? (w->width - adam7_x0[pass] +
        adam7_dx[pass] - 1) / adam7_dx[pass] : 0;
    n = w->height > adam7_y0[pass] ? (w->height - adam7_y0[pass] +
        adam7_dy[pass] - 1) / adam7_dy[pass] : 0;
  }
  *rows = cols ? n : 0;
  *row_size = 1 + (cols * w->bits + 7) / 8;
}

/* Moves to the first row of the next non-empty pass from @pass. */
static void
next_pass (RowWalk * w, guint pass)
{
  guint last = w->interlaced ? 7 : 1;

  for (w->pass = pass; w->pass < last; w->pass++) {
    pass_layout (w, w->pass, &w->rows_left, &w->row_size);
    if (w->rows_left)
      return;
  }
}

/* FALSE for a colour type and depth PIL does not read. */
static gboolean
row_walk_init (RowWalk * w, guint width, guint height, guint depth,
    guint color_type, gboolean interlaced)
{
  static const guint channels[7] = { 1, 0, 3, 1, 2, 0, 4 };
  guint pass;

  if (color_type > 6 || channels[color_type] == 0 || (depth != 1 &&
          depth != 2 && depth != 4 && depth != 8 && depth != 16))
    return FALSE;
  memset (w, 0, sizeof (*w));
  w->width = width;
  w->height = height;
  w->bits = channels[color_type] * depth;
  w->interlaced = interlaced;
  for (pass = 0; pass < (interlaced ? 7u : 1u); pass++) {
    guint64 rows, row_size;
    pass_layout (w, pass, &rows, &row_size);
    w->total += rows * row_size;
  }
  next_pass (w, 0);
  return TRUE;
}

/* Walks @n more filtered bytes; FALSE at a filter type past 4 (PIL:
 * "unrecognized data stream contents"). */
static gboolean
row_walk_check (RowWalk * w, const guint8 * bytes, gsize n)
{
  while (n > 0 && w->rows_left > 0) {
    gsize step;

    if (w->offset == 0 && bytes[0] > 4)
      return FALSE;
    step = MIN (n, w->row_size - w->offset);
    bytes += step;
    n -= step;
    w->offset += step;
    if (w->offset == w->row_size) {
      w->offset = 0;
      if (--w->rows_left == 0)
        next_pass (w, w->pass + 1);
    }
  }
  return TRUE;
}

typedef enum
{
  INFLATED,
  INFLATE_BROKEN,               /* zlib.error: PIL's handlers go on */
  INFLATE_TOO_LARGE,            /* ValueError: PIL fails */
} InflateResult;

/* @n bytes of zlib data inflated as PIL's _safe_zlib_decompress does
 * (decompress(s, MAX_TEXT_CHUNK), too large if input is left over), the
 * output counted into *@out_len and dropped. */
static InflateResult
inflate_as_pil (const guint8 * in, gsize n, gsize * out_len)
{
  z_stream z;
  guint8 buf[16384];
  gsize total = 0;
  int ret = Z_OK;

  *out_len = 0;
  memset (&z, 0, sizeof (z));
  if (inflateInit (&z) != Z_OK)
    return INFLATE_BROKEN;
  z.next_in = (Bytef *) in;
  z.avail_in = n;
  while (ret == Z_OK && total < PIL_MAX_TEXT_CHUNK) {
    uInt room = MIN (sizeof (buf), PIL_MAX_TEXT_CHUNK - total);

    z.next_out = buf;
    z.avail_out = room;
    ret = inflate (&z, Z_NO_FLUSH);
    total += room - z.avail_out;
    if (ret == Z_BUF_ERROR && z.avail_in == 0)
      ret = Z_OK;               /* all the input used, the stream unended */
    if (z.avail_in == 0)
      break;
  }
  inflateEnd (&z);
  if (ret != Z_OK && ret != Z_STREAM_END)
    return INFLATE_BROKEN;
  *out_len = total;
  return ret == Z_OK && z.avail_in > 0 ? INFLATE_TOO_LARGE : INFLATED;
}

static gboolean
text_too_large (const guint8 * type, GError ** error)
{
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
      "too large: a %.4s chunk inflates to more than 1 MiB (PIL: "
      "Decompressed Data Too Large)", (const gchar *) type);
}

/* A tEXt, zTXt, iTXt or iCCP chunk's @n bytes at @p as PngImagePlugin's
 * handler reads them: FALSE where it raises. Adds the chunk's text to
 * *@text_memory (its bytes: PIL counts characters, the same for Latin-1
 * and ASCII). */
static gboolean
check_text_chunk (const guint8 * type, const guint8 * p, guint32 n,
    guint64 * text_memory, GError ** error)
{
  const guint8 *nul = memchr (p, 0, n);
  gsize key = nul ? (gsize) (nul - p) : n, rest = nul ? n - key - 1 : 0;
  gsize text = 0;

  if (memcmp (type, "tEXt", 4) == 0) {
    text = key ? rest : 0;
  } else if (memcmp (type, "zTXt", 4) == 0) {
    if (rest && nul[1] != 0)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: unknown compression method %u in a zTXt chunk", nul[1]);
    if (rest && inflate_as_pil (nul + 2, rest - 1, &text) ==
        INFLATE_TOO_LARGE)
      return text_too_large (type, error);
    text = key ? text : 0;
  } else if (memcmp (type, "iCCP", 4) == 0) {
    /* PIL reads the method at the name's NUL (always 0); with no NUL, at
     * the last byte, which is then no 0 */
    if (!nul)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: an iCCP chunk without a profile name");
    if (rest > 1 && inflate_as_pil (nul + 2, rest - 1, &text) ==
        INFLATE_TOO_LARGE)
      return text_too_large (type, error);
    text = 0;                   /* a profile, not text */
  } else if (memcmp (type, "iTXt", 4) == 0 && rest >= 2) {
    /* flags, method, language\0, translated keyword\0, text */
    const guint8 *lang = nul + 3, *end = p + n;
    const guint8 *tk = memchr (lang, 0, end - lang);
    const guint8 *v = tk ? memchr (tk + 1, 0, end - tk - 1) : NULL;

    if (v) {
      v++;
      text = end - v;
      if (nul[1] != 0 && nul[2] != 0)
        text = 0;               /* compressed by an unknown method: unread */
      else if (nul[1] != 0) {
        InflateResult r = inflate_as_pil (v, end - v, &text);
        if (r == INFLATE_TOO_LARGE)
          return text_too_large (type, error);
        if (r == INFLATE_BROKEN)
          text = 0;
      }
    }
  }
  *text_memory += text;
  if (*text_memory > PIL_MAX_TEXT_MEMORY)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "too large: text chunks of more than 64 MiB in all (PIL: Too much "
        "memory used in text chunks)");
  return TRUE;
}

/* The chunks before the first IDAT, as Image.open reads them: each whole,
 * with its CRC. Sets *@idat to the first IDAT's header and *@animated if
 * an acTL says more than one frame. */
static gboolean
check_header_chunks (const guint8 * data, gsize size, gsize * idat,
    gboolean * animated, guint64 * text_memory, GError ** error)
{
  gsize pos = SIGNATURE_SIZE;

  *animated = FALSE;
  for (;;) {
    guint32 length, crc;

    if (size - pos < 8)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "truncated: the data ends before the image data (at byte %"
          G_GSIZE_FORMAT ")", size);
    if (!is_chunk_type (data + pos + 4, 4))
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: broken PNG file (not a chunk at byte %" G_GSIZE_FORMAT
          ")", pos);
    if (memcmp (data + pos + 4, "IDAT", 4) == 0) {
      *idat = pos;
      return TRUE;
    }
    if (memcmp (data + pos + 4, "IEND", 4) == 0)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: the PNG has no image data (IEND before any IDAT)");
    length = read_be32 (data + pos);
    if (size - pos - 8 < 4 || size - pos - 12 < length)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "truncated: the data ends inside a %.4s chunk (at byte %"
          G_GSIZE_FORMAT ")", (const gchar *) data + pos + 4, size);
    crc = crc32 (0, data + pos + 4, length + 4);
    if (crc != read_be32 (data + pos + 8 + length))
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: broken PNG file (bad checksum in its %.4s chunk)",
          (const gchar *) data + pos + 4);
    if (memcmp (data + pos + 4, "acTL", 4) == 0 && length >= 4)
      *animated = read_be32 (data + pos + 8) > 1;
    if (!check_text_chunk (data + pos + 4, data + pos + 8, length,
            text_memory, error))
      return FALSE;
    pos += 12 + (gsize) length;
  }
}

/* The IDAT data inflated as PIL's decoder does, into @scratch a piece at a
 * time or, where @filtered is not NULL, into it whole (the same inflate
 * calls either way); sets *@end to where PIL's reads stopped and *@plain
 * as gst_spdl_png_check_stream() says. */
static gboolean
check_image_data (const guint8 * data, gsize size, gsize idat,
    RowWalk * rows, guint8 * scratch, gsize scratch_size, guint8 * filtered,
    gsize * end, gboolean * plain, GError ** error)
{
  z_stream z;
  gsize pos = idat;
  guint64 remaining = rows->total;
  gboolean bad_filter = FALSE;
  gboolean ok = TRUE;
  gint ret = Z_OK;

  /* libpng inflates with the window the zlib header declares, PIL with
   * 32 KiB: they agree where the header declares 32 KiB */
  *plain = size - idat >= 9 && read_be32 (data + idat) > 0 &&
      data[idat + 8] >> 4 == 7;
  memset (&z, 0, sizeof (z));
  if (inflateInit (&z) != Z_OK)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "out of memory for zlib");
  while (remaining > 0) {
    gsize chunk_end, length;
    gboolean cut;

    /* the next chunk: PIL reads the CRC before it, then its header */
    if (size - pos < 8) {
      ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "truncated: the data ends inside the image data (at byte %"
          G_GSIZE_FORMAT ")", size);
      break;
    }
    if (!is_chunk_type (data + pos + 4, 4)) {
      ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: broken PNG file (not a chunk at byte %" G_GSIZE_FORMAT
          ", inside the image data)", pos);
      break;
    }
    if (memcmp (data + pos + 4, "IDAT", 4) != 0) {
      ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "truncated: the image data ends early (a %.4s chunk where the "
          "image needs more IDAT data)", (const gchar *) data + pos + 4);
      break;
    }
    length = read_be32 (data + pos);
    pos += 8;
    /* a chunk longer than the data: PIL reads what there is */
    cut = length > size - pos;
    /* libpng refuses an IDAT longer than the image's bytes (and more) */
    *plain &= !cut && length <= rows->total;
    chunk_end = pos + MIN (length, size - pos);
    while (pos < chunk_end && remaining > 0) {
      z.next_in = (Bytef *) data + pos;
      z.avail_in = MIN (chunk_end - pos, PIL_READ_SIZE);
      pos += z.avail_in;
      while (remaining > 0) {
        uInt room = (uInt) MIN (remaining, scratch_size);
        guint8 *out = filtered ? filtered + (rows->total - remaining) :
            scratch;
        z.next_out = out;
        z.avail_out = room;
        ret = inflate (&z, Z_NO_FLUSH);
        remaining -= room - z.avail_out;
        bad_filter |= !row_walk_check (rows, out, room - z.avail_out);
        if (ret == Z_STREAM_END || ret == Z_BUF_ERROR ||
            (ret == Z_OK && z.avail_out > 0))
          break;
        if (ret != Z_OK)
          break;
      }
      if (ret != Z_OK && ret != Z_BUF_ERROR)
        break;
    }
    if (bad_filter) {
      ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: a row with an unknown filter type");
      break;
    }
    if (remaining > 0 && ret == Z_STREAM_END) {
      ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: the compressed image data ends %" G_GUINT64_FORMAT
          " bytes before the image", remaining);
      break;
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR && ret != Z_STREAM_END) {
      ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: broken data stream (zlib: %s)", z.msg ? z.msg :
          "error");
      break;
    }
    if (remaining > 0 && cut) {
      ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "truncated: the data ends inside the image data (at byte %"
          G_GSIZE_FORMAT ")", size);
      break;
    }
    if (remaining > 0)
      pos = MIN (chunk_end + 4, size);  /* the CRC, unread */
  }
  inflateEnd (&z);
  *end = pos;
  return ok;
}

/* The chunks after the image data, as PIL's load_end() walks them. */
static gboolean
check_trailing_chunks (const guint8 * data, gsize size, gsize pos,
    gboolean animated, guint64 * text_memory, GError ** error)
{
  for (;;) {
    guint32 length;
    gsize avail;

    pos = MIN (pos + 4, size);  /* the CRC before, unread */
    avail = size - pos;
    /* a header cut short, or not a chunk: the walk ends */
    if (avail < 4 || !is_chunk_type (data + pos + 4, MIN (avail - 4, 4)))
      return TRUE;
    if (avail < 8)
      return TRUE;
    if (memcmp (data + pos + 4, "IEND", 4) == 0 ||
        (animated && memcmp (data + pos + 4, "fcTL", 4) == 0))
      return TRUE;
    length = read_be32 (data + pos);
    pos += 8;
    if (size - pos < length)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "truncated: a %.4s chunk after the image data runs past the end "
          "of the file (PIL: Truncated File Read)",
          (const gchar *) data + pos - 4);
    if (!check_text_chunk (data + pos - 4, data + pos, length, text_memory,
            error))
      return FALSE;
    pos += length;
  }
}

gboolean
gst_spdl_png_check_stream (const guint8 * data, gsize size, guint width,
    guint height, guint bit_depth, guint color_type, gboolean interlaced,
    guint8 * scratch, gsize scratch_size, guint8 * filtered,
    gboolean * plain, GError ** error)
{
  RowWalk rows;
  gsize idat = 0, end = 0;
  gboolean animated;
  guint64 text_memory = 0;

  *plain = FALSE;
  if (!row_walk_init (&rows, width, height, bit_depth, color_type,
          interlaced))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: a PNG of colour type %u at %u bits", color_type,
        bit_depth);
  return check_header_chunks (data, size, &idat, &animated, &text_memory,
      error) && check_image_data (data, size, idat, &rows, scratch,
      scratch_size, filtered, &end, plain, error) &&
      check_trailing_chunks (data, size, end, animated, &text_memory, error);
}
