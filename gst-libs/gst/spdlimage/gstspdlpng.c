/* GStreamer SPDL: PNG decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Whether PIL reads the file is decided on its whole data before anything
 * is decoded (gstspdlpngcheck.h), which inflates the whole zlib stream.
 * The 8-bit non-interlaced layouts (gray, gray + alpha, RGB, RGBA,
 * palette: nearly every PNG) keep those filtered rows when they are at
 * most MAX_KEPT_ROWS_SIZE and libpng would read the same ones: decode()
 * unfilters the rows the crop needs from them, so the stream is inflated
 * once. The others libpng decodes row by row, inflating it again. Either
 * way each row the crop needs is converted as PIL's convert("RGB") would
 * (palette expanded, alpha and tRNS dropped, 16-bit samples by their high
 * byte, 16-bit gray clipped as PIL's "I" mode is) and resampled as it
 * arrives, and decoding stops after the last row the crop reads.
 * Interlaced images need all passes: they are decoded whole. The size limit
 * is checked on IHDR; text and ICC chunks are skipped unread, so a
 * compressed-text bomb costs nothing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlpng.h"
#include "gstspdlpngcheck.h"
#include "gstspdlrowsink.h"
#include "gstspdlerrors.h"

#include <string.h>
#include <png.h>
#include <zlib.h>

#define SIGNATURE_SIZE 8
/* signature, then IHDR: length, type, 13 bytes, CRC */
#define MIN_PNG_SIZE (SIGNATURE_SIZE + 25)
/* what gst_spdl_png_check_stream() inflates into at a time */
#define CHECK_SCRATCH_SIZE (64 * 1024)
/* the most filtered rows kept from the check for decode() (a 3000 x 2000
 * RGBA image); larger ones are inflated again by libpng */
#define MAX_KEPT_ROWS_SIZE (32 << 20)
/* the chunks libpng would decompress or parse for nothing we use */
static const png_byte ignored_chunks[] = "iCCP\0iTXt\0tEXt\0zTXt\0sPLT\0eXIf";

struct _GstSpdlPngDecoder
{
  /* the image opened */
  const guint8 *data;
  gsize size, pos;
  guint width, height;
  gboolean opened;
  /* the decode in progress */
  png_structp png;
  png_infop info;
  GstSpdlPngFailure failure;
  GstSpdlRowSink sink;
  guint8 *rows;                 /* one row, or the whole interlaced image */
  gsize rows_size;
  png_bytep *row_pointers;
  GstSpdlPixels pixels;         /* of the rows libpng gives */
  /* the check's filtered rows, unfiltered here in place of libpng's
   * second inflate (see keeps_rows()); NULL: libpng reads them */
  guint8 *filtered;
  gsize filtered_size;
  gboolean use_filtered;
  guint channels;               /* of a kept row's pixel */
  gint reading_row;             /* non-interlaced: the row being read */
  /* rows through libpng's transformations, and all of the image's */
  guint64 rows_transformed, rows_expected;
  guint64 max_memory;           /* for a whole interlaced image; 0: none */
};

GstSpdlPngDecoder *
gst_spdl_png_decoder_new (void)
{
  GstSpdlPngDecoder *dec = g_new0 (GstSpdlPngDecoder, 1);

  dec->max_memory = GST_SPDL_IMAGE_DEFAULT_MAX_MEMORY;
  return dec;
}

void
gst_spdl_png_decoder_set_max_memory (GstSpdlPngDecoder * dec,
    guint64 max_memory)
{
  dec->max_memory = max_memory;
}

/* Under libpng's setjmp: a too-large image ends the decode. */
static void
refuse_too_large (GstSpdlPngDecoder * dec, const gchar * why, guint64 need)
{
  dec->failure.code = GST_SPDL_DECODE_ERROR_TOO_LARGE;
  g_snprintf (dec->failure.message, sizeof (dec->failure.message), "%ux%u interlaced PNG "
      "needs %" G_GUINT64_FORMAT " MiB to decode, %s", dec->width,
      dec->height, need >> 20, why);
  png_error (dec->png, "too large");
}

void
gst_spdl_png_decoder_free (GstSpdlPngDecoder * dec)
{
  if (dec == NULL)
    return;
  gst_spdl_row_sink_clear (&dec->sink);
  g_free (dec->rows);
  g_free (dec->filtered);
  g_free (dec);
}

static guint32
read_be32 (const guint8 * p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) |
      ((guint32) p[2] << 8) | p[3];
}

/* The number of bytes of the filtered rows worth keeping from the check
 * for decode(), 0 for none: 8-bit, non-interlaced gray, gray + alpha, RGB,
 * RGBA and palette images (the rows we unfilter and expand as libpng does
 * with our transforms), small enough. Sets *@channels to the bytes of a
 * pixel (a palette index: 1). */
static gsize
kept_rows_size (GstSpdlPngDecoder * dec, guint depth, guint color_type,
    gboolean interlaced, guint * channels)
{
  static const guint channels_of[7] = { 1, 0, 3, 1, 2, 0, 4 };
  guint64 need;

  if (depth != 8 || interlaced || color_type > 6 ||
      channels_of[color_type] == 0)
    return 0;
  *channels = channels_of[color_type];
  need = ((guint64) dec->width * *channels + 1) * dec->height;
  if (need > MAX_KEPT_ROWS_SIZE || (dec->max_memory && need >
          dec->max_memory))
    return 0;
  return need;
}

gboolean
gst_spdl_png_decoder_open (GstSpdlPngDecoder * dec, const guint8 * data,
    gsize size, guint64 max_pixels, guint * width, guint * height,
    GError ** error)
{
  guint64 pixels;
  gsize kept;
  gboolean plain;

  dec->opened = FALSE;
  dec->use_filtered = FALSE;
  if (size < MIN_PNG_SIZE)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
        "truncated: %" G_GSIZE_FORMAT " bytes, shorter than a PNG header",
        size);
  if (read_be32 (data + 8) != 13 || memcmp (data + 12, "IHDR", 4) != 0)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: the PNG does not start with an IHDR chunk");
  /* a damaged header is corrupt, not too large (PIL checks it first) */
  if (crc32 (0, data + 12, 17) != read_be32 (data + 29))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: broken PNG file (bad checksum in its IHDR chunk)");
  dec->width = read_be32 (data + 16);
  dec->height = read_be32 (data + 20);
  if (dec->width == 0 || dec->height == 0 || dec->width > 0x7fffffff ||
      dec->height > 0x7fffffff)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: invalid PNG size %ux%u", dec->width, dec->height);
  pixels = (guint64) dec->width * dec->height;
  if (max_pixels && pixels > max_pixels)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u is %" G_GUINT64_FORMAT " pixels, more than max-pixels=%"
        G_GUINT64_FORMAT, dec->width, dec->height, pixels, max_pixels);
  /* decides as PIL does, whatever part of the image the crop reads; the
   * rows it inflates are kept where decode() can unfilter them (16 bytes
   * of slack: the SIMD row kernel loads 16 bytes per window) */
  kept = kept_rows_size (dec, data[24], data[25], data[28] != 0,
      &dec->channels);
  if (kept && !gst_spdl_try_ensure_buffer (&dec->filtered,
          &dec->filtered_size, kept + 16))
    kept = 0;
  gst_spdl_ensure_buffer (&dec->rows, &dec->rows_size, CHECK_SCRATCH_SIZE);
  if (!gst_spdl_png_check_stream (data, size, dec->width, dec->height,
          data[24], data[25], data[28] != 0, dec->rows, CHECK_SCRATCH_SIZE,
          kept ? dec->filtered : NULL, &plain, error)) {
    gst_spdl_release_large_buffer (&dec->filtered, &dec->filtered_size);
    return FALSE;
  }
  dec->use_filtered = kept && plain;
  dec->data = data;
  dec->size = size;
  *width = dec->width;
  *height = dec->height;
  dec->opened = TRUE;
  return TRUE;
}

static void
on_png_error (png_structp png, png_const_charp message)
{
  GstSpdlPngFailure *failure = png_get_error_ptr (png);

  if (failure->code < 0) {
    failure->code = GST_SPDL_DECODE_ERROR_CORRUPT;
    g_snprintf (failure->message, sizeof (failure->message), "corrupt: %s",
        message);
  }
  png_longjmp (png, 1);
}

static void
on_png_warning (png_structp png, png_const_charp message)
{
  /* recoverable (a bad ancillary chunk, say): PIL decodes these too */
}

png_structp
gst_spdl_png_read_struct_new (GstSpdlPngFailure * failure)
{
  failure->code = -1;
  failure->message[0] = '\0';
  return png_create_read_struct (PNG_LIBPNG_VER_STRING, failure,
      on_png_error, on_png_warning);
}

/* Past the end of the data, zeros: libpng may read the end of the zlib
 * stream and the next chunk after the image's last row, which PIL does
 * not read (rows_complete() keeps those rows); before it, the decode fails
 * as truncated at the first error the zeros cause. */
static void
read_data (png_structp png, png_bytep out, size_t n)
{
  GstSpdlPngDecoder *dec = png_get_io_ptr (png);
  gsize have = MIN (n, dec->size - dec->pos);

  memcpy (out, dec->data + dec->pos, have);
  dec->pos += have;
  if (have == n)
    return;
  memset (out + have, 0, n - have);
  if (dec->failure.code < 0) {
    dec->failure.code = GST_SPDL_DECODE_ERROR_TRUNCATED;
    g_strlcpy (dec->failure.message, "truncated: the image data ends early",
        sizeof (dec->failure.message));
  }
}

static GstSpdlPixels
pixels_of (guint channels, guint depth)
{
  static const GstSpdlPixels by_channels[2][4] = {
    {GST_SPDL_PIXELS_GRAY, GST_SPDL_PIXELS_GRAY_ALPHA, GST_SPDL_PIXELS_RGB,
        GST_SPDL_PIXELS_RGBA},
    {GST_SPDL_PIXELS_GRAY16, GST_SPDL_PIXELS_GRAY_ALPHA16,
        GST_SPDL_PIXELS_RGB16, GST_SPDL_PIXELS_RGBA16},
  };

  return by_channels[depth == 16][CLAMP (channels, 1, 4) - 1];
}

/* libpng's user transform, run on each row once it is unfiltered: the
 * last one's pixels are ours even if libpng fails after it. */
static void
count_row (png_structp png, png_row_infop row_info, png_bytep data)
{
  GstSpdlPngDecoder *dec = png_get_io_ptr (png);

  dec->rows_transformed++;
}

/* Rows libpng gives for the whole image (Adam7: each pass's rows). */
static guint64
rows_of_image (GstSpdlPngDecoder * dec, gint passes)
{
  guint64 rows = 0;
  gint pass;

  if (passes == 1)
    return dec->height;
  for (pass = 0; pass < 7; pass++)
    if (PNG_PASS_COLS (dec->width, pass) > 0)
      rows += PNG_PASS_ROWS (dec->height, pass);
  return rows;
}

/* PNG's filters undone in place on @row (@n bytes), @prev the row above
 * already undone (NULL for the first), @bpp bytes per pixel. */
static void
unfilter_row (guint filter, guint8 * row, const guint8 * prev, gsize n,
    guint bpp)
{
  gsize i;

  switch (filter) {
    case 1:                    /* Sub */
      for (i = bpp; i < n; i++)
        row[i] += row[i - bpp];
      break;
    case 2:                    /* Up */
      if (prev)
        for (i = 0; i < n; i++)
          row[i] += prev[i];
      break;
    case 3:                    /* Average */
      for (i = 0; i < n; i++) {
        guint left = i >= bpp ? row[i - bpp] : 0;
        guint up = prev ? prev[i] : 0;
        row[i] += (left + up) >> 1;
      }
      break;
    case 4:                    /* Paeth */
      if (prev == NULL) {
        /* above and upper left are 0: the left one is the predictor */
        for (i = bpp; i < n; i++)
          row[i] += row[i - bpp];
        break;
      }
      for (i = 0; i < bpp && i < n; i++)
        row[i] += prev[i];
      for (i = bpp; i < n; i++) {
        gint a = row[i - bpp], b = prev[i], c = prev[i - bpp];
        gint pa = ABS (b - c), pb = ABS (a - c), pc = ABS (a + b - 2 * c);
        gint pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
        row[i] += pred;
      }
      break;
    default:                   /* None (the check refused the others) */
      break;
  }
}

/* The rows the crop needs, from the check's inflated data: unfiltered
 * here, palette indexes expanded as png_set_palette_to_rgb() does (an
 * index past the palette is black; the alpha of tRNS is dropped later
 * anyway). */
static void
push_kept_rows (GstSpdlPngDecoder * dec, gboolean palette)
{
  guint8 colors[256 * 3];
  gsize n = (gsize) dec->width * dec->channels;
  guint8 *prev = NULL;
  GstSpdlPixels pixels = pixels_of (palette ? 3 : dec->channels, 8);
  gint y;

  if (palette) {
    png_colorp plte = NULL;
    gint num = 0, i;

    memset (colors, 0, sizeof (colors));
    png_get_PLTE (dec->png, dec->info, &plte, &num);
    for (i = 0; plte && i < MIN (num, 256); i++) {
      colors[3 * i] = plte[i].red;
      colors[3 * i + 1] = plte[i].green;
      colors[3 * i + 2] = plte[i].blue;
    }
    gst_spdl_ensure_buffer (&dec->rows, &dec->rows_size, 3 * n + 16);
  }
  for (y = 0; y < dec->sink.y1; y++) {
    guint8 *row = dec->filtered + (gsize) y * (n + 1);

    unfilter_row (row[0], row + 1, prev, n, dec->channels);
    prev = row + 1;
    if (palette) {
      gsize x;
      for (x = 0; x < n; x++)
        memcpy (dec->rows + 3 * x, colors + 3 * row[1 + x], 3);
      gst_spdl_row_sink_push (&dec->sink, y, dec->rows, pixels);
    } else {
      gst_spdl_row_sink_push (&dec->sink, y, row + 1, pixels);
    }
  }
}

/* Runs under libpng's setjmp: everything it allocates hangs off @dec. */
static void
decode_rows (GstSpdlPngDecoder * dec, const GstSpdlDecodeParams * p,
    const GstSpdlGeometry * g, const GstSpdlOutput * out)
{
  png_structp png = dec->png;
  png_infop info = dec->info;
  gint color_type, depth, passes;
  gsize rowbytes;
  GstSpdlPixels pixels;
  gint y;

  png_set_read_fn (png, dec, read_data);
  /* chunk CRCs were checked as PIL checks them, before the image data
   * only (gst_spdl_png_check_stream) */
  png_set_crc_action (png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
  /* and the Adler-32 where PIL's decoder reads it */
  png_set_option (png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
  png_set_keep_unknown_chunks (png, PNG_HANDLE_CHUNK_NEVER, ignored_chunks,
      sizeof (ignored_chunks) / 5);
  png_read_info (png, info);
  color_type = png_get_color_type (png, info);
  depth = png_get_bit_depth (png, info);
  /* tRNS becomes alpha for palettes only: dropped below either way, and
   * 16-bit gray with tRNS must stay PIL's clipped "I" */
  if (color_type == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb (png);
  if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8 (png);
  passes = png_set_interlace_handling (png);
  png_set_read_user_transform_fn (png, count_row);
  png_read_update_info (png, info);
  rowbytes = png_get_rowbytes (png, info);
  pixels = dec->pixels = pixels_of (png_get_channels (png, info),
      png_get_bit_depth (png, info));
  dec->rows_expected = rows_of_image (dec, passes);

  gst_spdl_row_sink_plan (&dec->sink, out, g, dec->width, dec->height,
      p->gray ? 1 : 3, !p->exact);
  if (dec->sink.y1 == 0)
    return;
  if (dec->use_filtered) {
    /* libpng has read the chunks before the image data all the same: its
     * errors there are the image's, and the palette is the one it read */
    push_kept_rows (dec, color_type == PNG_COLOR_TYPE_PALETTE);
    return;
  }
  if (passes > 1) {
    /* Adam7 passes cover the whole image: it is decoded whole */
    guint64 need = (guint64) rowbytes * dec->height + 16;
    if (dec->max_memory && need > dec->max_memory)
      refuse_too_large (dec, "more than max-decode-memory", need);
    if (!gst_spdl_try_ensure_buffer (&dec->rows, &dec->rows_size, need) ||
        !(dec->row_pointers = g_try_new (png_bytep, dec->height)))
      refuse_too_large (dec, "out of memory", need);
    for (y = 0; y < (gint) dec->height; y++)
      dec->row_pointers[y] = dec->rows + (gsize) y * rowbytes;
    png_read_image (png, dec->row_pointers);
    for (y = dec->sink.y0; y < dec->sink.y1; y++)
      gst_spdl_row_sink_push (&dec->sink, y, dec->row_pointers[y], pixels);
    return;
  }
  /* 16 bytes of slack: the SIMD row kernel loads 16 bytes per window */
  gst_spdl_ensure_buffer (&dec->rows, &dec->rows_size, rowbytes + 16);
  for (y = 0; y < dec->sink.y1; y++) {
    dec->reading_row = y;
    png_read_row (png, dec->rows, NULL);
    gst_spdl_row_sink_push (&dec->sink, y, dec->rows, pixels);
  }
}

/* After libpng failed: TRUE if it was past the image's last row (the end
 * of the zlib stream, a chunk after it), which PIL never reads (the check
 * of open() found the data PIL reads sound): the rows not pushed yet are
 * pushed. */
static gboolean
rows_complete (GstSpdlPngDecoder * dec)
{
  gint y;

  if (dec->rows_expected == 0 || dec->rows_transformed != dec->rows_expected)
    return FALSE;
  if (dec->row_pointers) {
    for (y = dec->sink.y0; y < dec->sink.y1; y++)
      gst_spdl_row_sink_push (&dec->sink, y, dec->row_pointers[y],
          dec->pixels);
  } else if (dec->reading_row < dec->sink.y1) {
    gst_spdl_row_sink_push (&dec->sink, dec->reading_row, dec->rows,
        dec->pixels);
  }
  return TRUE;
}

/* The setjmp frame: nothing here changes after it is set. */
static gboolean
run_decode (GstSpdlPngDecoder * dec, const GstSpdlDecodeParams * p,
    const GstSpdlGeometry * g, const GstSpdlOutput * out)
{
  if (setjmp (png_jmpbuf (dec->png)) != 0)
    return rows_complete (dec);
  decode_rows (dec, p, g, out);
  return TRUE;
}

gboolean
gst_spdl_png_decoder_decode (GstSpdlPngDecoder * dec,
    const GstSpdlDecodeParams * p, const GstSpdlGeometry * g,
    const GstSpdlOutput * out, GError ** error)
{
  gboolean ok;

  g_return_val_if_fail (dec->opened, FALSE);
  dec->opened = FALSE;
  dec->pos = 0;
  dec->rows_transformed = dec->rows_expected = 0;
  dec->png = gst_spdl_png_read_struct_new (&dec->failure);
  if (dec->png)
    dec->info = png_create_info_struct (dec->png);
  if (dec->png == NULL || dec->info == NULL) {
    png_destroy_read_struct (&dec->png, NULL, NULL);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "could not create a PNG decoder");
  }
  ok = run_decode (dec, p, g, out);
  if (!ok)
    gst_spdl_decode_fail (error, dec->failure.code, "%s", dec->failure.message);
  png_destroy_read_struct (&dec->png, &dec->info, NULL);
  g_clear_pointer (&dec->row_pointers, g_free);
  gst_spdl_release_large_buffer (&dec->rows, &dec->rows_size);
  gst_spdl_release_large_buffer (&dec->filtered, &dec->filtered_size);
  if (ok)
    gst_spdl_row_sink_finish (&dec->sink, out);
  return ok;
}
