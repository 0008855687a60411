/* GStreamer SPDL: GIF decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* giflib reads the records and the LZW data; the first frame is made as
 * PIL 9.4's Image.open(f).convert("RGB") makes it: a canvas of the logical
 * screen, grown to hold the frame, filled with the transparent index of
 * the frame's graphic control extension (else index 0, not the background
 * colour), the frame's pixels on it, and every index through the frame's
 * palette (else the global one) with PIL's default gray past its end.
 * Rows are converted and resampled as they are decoded; an interlaced
 * frame is decoded whole first (one byte a pixel). Every row of the frame
 * is decoded, as PIL does, so a cut-short frame fails whichever rows the
 * crop keeps. A file that ends right after the frame's data (no block
 * terminator or trailer) decodes, as in PIL. Bytes that start no record
 * before the frame (a repeated header) are skipped, as PIL skips them.
 * Where giflib refuses what PIL reads (an empty data block inside the
 * frame, LZW codes of more than 8 bits) the file is refused as corrupt. giflib
 * turns an LZW code that is not in the table yet into made-up pixels
 * where PIL fails: the codes are checked first, by PIL's rules, up to the
 * frame's last pixel. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlgif.h"
#include "gstspdlrowsink.h"
#include "gstspdlerrors.h"

#include <string.h>
#include <gif_lib.h>

struct _GstSpdlGifDecoder
{
  /* the image opened: giflib stays open from open() to decode() */
  const guint8 *data;
  gsize size, pos;
  gboolean past_end;            /* a read went past the data */
  guint8 desc[9];               /* the first frame's descriptor, as read */
  gsize desc_at;                /* where it lies; 0: read as it is */
  GifFileType *gif;
  guint width, height;          /* the canvas */
  guint fx, fy, fw, fh;         /* the first frame on it */
  gboolean interlaced;
  gsize lzw_start;              /* the frame's first data block */
  guint8 background;            /* the index outside the frame */
  guint8 palette[256 * 3];
  gboolean opened;
  /* the decode */
  GstSpdlRowSink sink;
  guint8 *indices;              /* one canvas row */
  gsize indices_size;
  guint8 *row;                  /* one RGB row */
  gsize row_size;
  guint8 *frame;                /* a frame row, or an interlaced frame */
  gsize frame_size;
  guint64 max_memory;
};

GstSpdlGifDecoder *
gst_spdl_gif_decoder_new (void)
{
  GstSpdlGifDecoder *dec = g_new0 (GstSpdlGifDecoder, 1);

  dec->max_memory = GST_SPDL_IMAGE_DEFAULT_MAX_MEMORY;
  return dec;
}

void
gst_spdl_gif_decoder_set_max_memory (GstSpdlGifDecoder * dec,
    guint64 max_memory)
{
  dec->max_memory = max_memory;
}

static void
close_gif (GstSpdlGifDecoder * dec)
{
  if (dec->gif)
    DGifCloseFile (dec->gif, NULL);
  dec->gif = NULL;
}

void
gst_spdl_gif_decoder_free (GstSpdlGifDecoder * dec)
{
  if (dec == NULL)
    return;
  close_gif (dec);
  gst_spdl_row_sink_clear (&dec->sink);
  g_free (dec->indices);
  g_free (dec->row);
  g_free (dec->frame);
  g_free (dec);
}

/* A one-byte read at the end (a block length) reads 0, the end of the
 * blocks: PIL stops at the frame's last pixel and needs nothing after. */
static int
read_data (GifFileType * gif, GifByteType * out, int n)
{
  GstSpdlGifDecoder *dec = gif->UserData;
  gsize have = dec->size - dec->pos;

  if (n <= 0)
    return 0;
  if (have == 0 && n == 1) {
    dec->past_end = TRUE;
    out[0] = 0;
    return 1;
  }
  if ((gsize) n > have) {
    dec->past_end = TRUE;
    n = have;
  }
  memcpy (out, dec->data + dec->pos, n);
  if (dec->desc_at) {
    gsize lo = MAX (dec->pos, dec->desc_at);
    gsize hi = MIN (dec->pos + n, dec->desc_at + sizeof (dec->desc));
    if (lo < hi)
      memcpy (out + (lo - dec->pos), dec->desc + (lo - dec->desc_at),
          hi - lo);
  }
  dec->pos += n;
  return n;
}

/* PIL takes a frame tile whose left and right are 0 (a frame of width 0
 * at the left edge) for the whole image (ImagingDecoder setimage): its
 * data fills the canvas, grown as PIL grows it by the frame's bottom.
 * giflib is given that frame in place of the descriptor at dec->pos. */
static void
read_zero_width_frame_as_pil (GstSpdlGifDecoder * dec)
{
  const guint8 *d = dec->data + dec->pos;
  guint top, height;

  if (dec->size - dec->pos < sizeof (dec->desc) || d[0] || d[1] || d[4] ||
      d[5] || dec->gif->SWidth <= 0)
    return;
  top = d[2] | (d[3] << 8);
  height = MAX ((guint) dec->gif->SHeight, top + (d[6] | (d[7] << 8)));
  if (height > G_MAXUINT16)
    return;                     /* more than a descriptor holds: corrupt */
  memcpy (dec->desc, d, sizeof (dec->desc));
  dec->desc[2] = dec->desc[3] = 0;
  dec->desc[4] = dec->gif->SWidth & 0xff;
  dec->desc[5] = dec->gif->SWidth >> 8;
  dec->desc[6] = height & 0xff;
  dec->desc[7] = height >> 8;
  dec->desc_at = dec->pos;
}

/* giflib's failure, as truncated when the data ran out */
static gboolean
fail_gif (GstSpdlGifDecoder * dec, gint gif_error, const gchar * what,
    GError ** error)
{
  const gchar *why = GifErrorString (gif_error);

  if (dec->past_end)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
        "truncated: the data ends in the GIF's %s", what);
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
      "corrupt: GIF %s: %s", what, why ? why : "error");
}

/* The records up to the first image descriptor, as PIL reads them: the
 * graphic control extensions' transparent index. */
static gboolean
read_to_first_frame (GstSpdlGifDecoder * dec, gint * transparent,
    GError ** error)
{
  GifFileType *gif = dec->gif;

  for (;;) {
    GifRecordType type;
    GifByteType *block;
    gint code;

    /* PIL skips any byte that starts no record (giflib refuses it): a
     * repeated header, bytes between records */
    while (dec->pos < dec->size && dec->data[dec->pos] != ',' &&
        dec->data[dec->pos] != '!' && dec->data[dec->pos] != ';')
      dec->pos++;
    if (DGifGetRecordType (gif, &type) == GIF_ERROR)
      return fail_gif (dec, gif->Error, "records", error);
    if (type == TERMINATE_RECORD_TYPE)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: a GIF without an image");
    if (type == IMAGE_DESC_RECORD_TYPE) {
      read_zero_width_frame_as_pil (dec);
      if (DGifGetImageDesc (gif) == GIF_ERROR)
        return fail_gif (dec, gif->Error, "image descriptor", error);
      return TRUE;
    }
    if (DGifGetExtension (gif, &code, &block) == GIF_ERROR)
      return fail_gif (dec, gif->Error, "extensions", error);
    if (code == GRAPHICS_EXT_FUNC_CODE || code == APPLICATION_EXT_FUNC_CODE) {
      /* PIL reads these blocks unchecked: it fails on short ones */
      gboolean netscape;

      if (block == NULL || (code == GRAPHICS_EXT_FUNC_CODE &&
              (block[0] < 3 || (block[0] < 4 && (block[1] & 1)))))
        return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
            "corrupt: a GIF extension block too short");
      if (code == GRAPHICS_EXT_FUNC_CODE && (block[1] & 1))
        *transparent = block[4];
      netscape = code == APPLICATION_EXT_FUNC_CODE && block[0] >= 11 &&
          memcmp (block + 1, "NETSCAPE2.0", 11) == 0;
      if (DGifGetExtensionNext (gif, &block) == GIF_ERROR)
        return fail_gif (dec, gif->Error, "extensions", error);
      if (block == NULL && netscape)
        return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
            "corrupt: a GIF looping extension without data");
    }
    while (block != NULL)
      if (DGifGetExtensionNext (gif, &block) == GIF_ERROR)
        return fail_gif (dec, gif->Error, "extensions", error);
  }
}

gboolean
gst_spdl_gif_decoder_open (GstSpdlGifDecoder * dec, const guint8 * data,
    gsize size, guint64 max_pixels, guint * width, guint * height,
    GError ** error)
{
  const GifImageDesc *desc;
  const ColorMapObject *map;
  gint transparent = -1, err = 0;
  guint64 pixels;
  guint i;

  dec->opened = FALSE;
  close_gif (dec);
  dec->data = data;
  dec->size = size;
  dec->pos = 0;
  dec->past_end = FALSE;
  dec->desc_at = 0;
  dec->gif = DGifOpen (dec, read_data, &err);
  if (dec->gif == NULL)
    return fail_gif (dec, err, "header", error);
  if (!read_to_first_frame (dec, &transparent, error))
    return FALSE;
  /* giflib read the code size byte, nothing past it */
  dec->lzw_start = dec->pos;
  desc = &dec->gif->Image;
  if (desc->Width <= 0 || desc->Height <= 0)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "corrupt: a GIF frame of %dx%d", desc->Width, desc->Height);
  dec->fx = desc->Left;
  dec->fy = desc->Top;
  dec->fw = desc->Width;
  dec->fh = desc->Height;
  dec->interlaced = desc->Interlace;
  /* PIL grows the image to hold a frame past the screen */
  dec->width = MAX ((guint) dec->gif->SWidth, dec->fx + dec->fw);
  dec->height = MAX ((guint) dec->gif->SHeight, dec->fy + dec->fh);
  pixels = (guint64) dec->width * dec->height;
  if (max_pixels && pixels > max_pixels)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u is %" G_GUINT64_FORMAT " pixels, more than max-pixels=%"
        G_GUINT64_FORMAT, dec->width, dec->height, pixels, max_pixels);
  dec->background = transparent >= 0 ? transparent : 0;
  for (i = 0; i < 256; i++)
    memset (dec->palette + 3 * i, i, 3);
  map = desc->ColorMap ? desc->ColorMap : dec->gif->SColorMap;
  for (i = 0; map && i < (guint) MIN (map->ColorCount, 256); i++) {
    dec->palette[3 * i] = map->Colors[i].Red;
    dec->palette[3 * i + 1] = map->Colors[i].Green;
    dec->palette[3 * i + 2] = map->Colors[i].Blue;
  }
  *width = dec->width;
  *height = dec->height;
  dec->opened = TRUE;
  return TRUE;
}

/* Walks the frame's LZW codes as PIL 9.4's decoder does (ImagingGifDecode),
 * counting pixels, not making them, until the frame is full. PIL fails on
 * a first code after a clear code that is not a pixel value and on a code
 * past the next free one; giflib makes pixels of both. What giflib
 * reports itself (an end code too soon, data cut short, an empty block) is
 * left to it. */
static gboolean
check_lzw (GstSpdlGifDecoder * dec, GError ** error)
{
  const guint8 *data = dec->data;
  gsize pos = dec->lzw_start, block_end = pos, size = dec->size;
  guint64 pixels = 0, total = (guint64) dec->fw * dec->fh;
  guint32 bits = 0;
  guint count = 0, min_size, clear, next = 0, code_size = 0, last = 0;
  gboolean first = TRUE;
  /* each table entry's string length; PIL's table has 4096 entries */
  guint16 *length;
  gboolean ok = TRUE;

  if (pos == 0 || pos > size)
    return TRUE;
  min_size = data[pos - 1];
  if (min_size > 8)
    return TRUE;                /* giflib refuses more than 8 bits */
  clear = 1u << min_size;
  length = g_new (guint16, 4097);
  for (guint c = 0; c < clear && c < 4096; c++)
    length[c] = 1;
  while (pixels < total) {
    guint code;

    if (first) {                /* after a clear code, and at the start */
      next = clear + 2;
      code_size = min_size + 1;
    }
    while (count < code_size) {
      if (pos == block_end) {
        if (pos >= size || pos + 1 + data[pos] > size)
          goto done;            /* cut short: giflib's to report */
        block_end = pos + 1 + data[pos];
        pos++;
        continue;
      }
      bits |= (guint32) data[pos++] << count;
      count += 8;
    }
    code = bits & ((1u << code_size) - 1);
    bits >>= code_size;
    count -= code_size;
    if (code == clear) {
      first = TRUE;
      continue;
    }
    if (code == clear + 1)
      break;                    /* too soon: giflib's to report */
    if (first) {
      if (code > clear) {
        ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
            "corrupt: GIF image data: LZW code %u after a clear code", code);
        break;
      }
      first = FALSE;
      pixels += 1;
      last = code;
      continue;
    }
    if (code > next) {
      ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "corrupt: GIF image data: LZW code %u past the table's %u", code,
          next);
      break;
    }
    pixels += code == next ? length[last] + 1 : length[code];
    if (next < 4096) {
      length[next] = length[last] + 1;
      if (next == (1u << code_size) - 1 && code_size < 12)
        code_size++;
      next++;
    }
    last = code;
  }
done:
  g_free (length);
  return ok;
}

/* Canvas row @y: the frame's row @line (NULL outside it) on the
 * background, through the palette. */
static void
push_row (GstSpdlGifDecoder * dec, gint y, const guint8 * line)
{
  guint x;

  if (!gst_spdl_row_sink_wants (&dec->sink, y))
    return;
  memset (dec->indices, dec->background, dec->width);
  if (line)
    memcpy (dec->indices + dec->fx, line, dec->fw);
  for (x = 0; x < dec->width; x++)
    memcpy (dec->row + 3 * x, dec->palette + 3 * dec->indices[x], 3);
  gst_spdl_row_sink_push (&dec->sink, y, dec->row, GST_SPDL_PIXELS_RGB);
}

static gboolean
decode_interlaced (GstSpdlGifDecoder * dec, GError ** error)
{
  static const guint start[] = { 0, 4, 2, 1 }, step[] = { 8, 8, 4, 2 };
  guint64 need = (guint64) dec->fw * dec->fh;
  guint pass, y;

  if (dec->max_memory && need > dec->max_memory)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u interlaced GIF needs %" G_GUINT64_FORMAT " MiB to decode, "
        "more than max-decode-memory=%" G_GUINT64_FORMAT " MiB", dec->fw,
        dec->fh, need >> 20, dec->max_memory >> 20);
  if (!gst_spdl_try_ensure_buffer (&dec->frame, &dec->frame_size, need))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u interlaced GIF: out of memory", dec->fw, dec->fh);
  for (pass = 0; pass < 4; pass++)
    for (y = start[pass]; y < dec->fh; y += step[pass])
      if (DGifGetLine (dec->gif, dec->frame + (gsize) y * dec->fw,
              dec->fw) == GIF_ERROR)
        return fail_gif (dec, dec->gif->Error, "image data", error);
  for (y = 0; y < dec->height; y++)
    push_row (dec, y, y >= dec->fy && y - dec->fy < dec->fh ?
        dec->frame + (gsize) (y - dec->fy) * dec->fw : NULL);
  return TRUE;
}

static gboolean
decode_rows (GstSpdlGifDecoder * dec, GError ** error)
{
  guint8 *line;
  guint y;

  line = gst_spdl_ensure_buffer (&dec->frame, &dec->frame_size, dec->fw);
  for (y = 0; y < dec->height; y++) {
    gboolean in_frame = y >= dec->fy && y - dec->fy < dec->fh;

    if (in_frame && DGifGetLine (dec->gif, line, dec->fw) == GIF_ERROR)
      return fail_gif (dec, dec->gif->Error, "image data", error);
    push_row (dec, y, in_frame ? line : NULL);
  }
  return TRUE;
}

gboolean
gst_spdl_gif_decoder_decode (GstSpdlGifDecoder * dec,
    const GstSpdlDecodeParams * p, const GstSpdlGeometry * g,
    const GstSpdlOutput * out, GError ** error)
{
  gboolean ok;

  g_return_val_if_fail (dec->opened, FALSE);
  dec->opened = FALSE;
  gst_spdl_row_sink_plan (&dec->sink, out, g, dec->width, dec->height,
      p->gray ? 1 : 3, !p->exact);
  if (!check_lzw (dec, error)) {
    close_gif (dec);
    return FALSE;
  }
  gst_spdl_ensure_buffer (&dec->indices, &dec->indices_size, dec->width);
  /* 16 bytes of slack: the SIMD row kernel loads 16 bytes per window */
  gst_spdl_ensure_buffer (&dec->row, &dec->row_size,
      (gsize) dec->width * 3 + 16);
  ok = dec->interlaced ? decode_interlaced (dec, error) :
      decode_rows (dec, error);
  close_gif (dec);
  if (ok)
    gst_spdl_row_sink_finish (&dec->sink, out);
  gst_spdl_release_large_buffer (&dec->frame, &dec->frame_size);
  gst_spdl_release_large_buffer (&dec->indices, &dec->indices_size);
  gst_spdl_release_large_buffer (&dec->row, &dec->row_size);
  return ok;
}
