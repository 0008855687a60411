/* GStreamer SPDL: label images (masks, label maps), values kept
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* A segmentation mask goes through the geometry of its image as
 * torchvision transforms a mask tensor: nearest neighbour, so that every
 * output value is one of the input's (a class index is never blended
 * with its neighbour into another class). Masks are small next to their
 * images and compress well: the whole image is decoded with libpng, then
 * sampled. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdllabel.h"
#include "gstspdlerrors.h"
#include "gstspdlformat.h"
#include "gstspdlpng.h"

#include <math.h>
#include <string.h>

#define PNG_SIGNATURE_SIZE 8

typedef struct
{
  const guint8 *data;
  gsize size, pos;
  GstSpdlPngFailure failure;
  png_bytep *rows;              /* in memory, whatever longjmp does */
} LabelReader;

static void
read_data (png_structp png, png_bytep out, size_t n)
{
  LabelReader *reader = png_get_io_ptr (png);

  if (n > reader->size - reader->pos) {
    reader->failure.code = GST_SPDL_DECODE_ERROR_TRUNCATED;
    g_strlcpy (reader->failure.message, "truncated: the PNG data ends early",
        sizeof (reader->failure.message));
    png_error (png, "truncated");
  }
  memcpy (out, reader->data + reader->pos, n);
  reader->pos += n;
}

static const gchar *
color_type_name (gint color_type)
{
  switch (color_type) {
    case PNG_COLOR_TYPE_RGB:
      return "RGB";
    case PNG_COLOR_TYPE_RGB_ALPHA:
      return "RGBA";
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      return "gray + alpha";
    default:
      return "unknown";
  }
}

/* Under setjmp: everything it allocates is in @label or freed by the
 * caller's png_destroy_read_struct. */
static gboolean
read_png (png_structp png, png_infop info, LabelReader * reader,
    GstSpdlLabelImage * label, guint64 max_pixels)
{
  png_uint_32 width, height, y;
  gint depth, color_type;
  gsize stride;

  png_set_sig_bytes (png, 0);
  /* text and colour profiles say nothing about the values */
  png_set_keep_unknown_chunks (png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
  png_read_info (png, info);
  png_get_IHDR (png, info, &width, &height, &depth, &color_type, NULL, NULL,
      NULL);
  if (max_pixels && (guint64) width * height > max_pixels) {
    reader->failure.code = GST_SPDL_DECODE_ERROR_TOO_LARGE;
    g_snprintf (reader->failure.message, sizeof (reader->failure.message),
        "%ux%u is %" G_GUINT64_FORMAT " pixels, more than max-pixels=%"
        G_GUINT64_FORMAT, width, height, (guint64) width * height,
        max_pixels);
    return FALSE;
  }
  switch (color_type) {
    case PNG_COLOR_TYPE_PALETTE:
      /* indices, one byte each: never the palette's colours */
      png_set_packing (png);
      label->bytes_per_pixel = 1;
      break;
    case PNG_COLOR_TYPE_GRAY:
      /* as numpy.asarray (Image.open (f)): 1-bit is PIL's "1", 0 and 1;
       * 2 and 4-bit PIL's "L", scaled to 8 bits */
      if (depth == 1)
        png_set_packing (png);
      else if (depth < 8)
        png_set_expand_gray_1_2_4_to_8 (png);
      if (depth == 16 && G_BYTE_ORDER == G_LITTLE_ENDIAN)
        png_set_swap (png);
      label->bytes_per_pixel = depth == 16 ? 2 : 1;
      break;
    default:
      reader->failure.code = GST_SPDL_DECODE_ERROR_UNSUPPORTED;
      g_snprintf (reader->failure.message, sizeof (reader->failure.message),
          "a label must be a palette or gray PNG, this one is %s: its values "
          "are colours, not labels", color_type_name (color_type));
      return FALSE;
  }
  png_set_interlace_handling (png);
  png_read_update_info (png, info);
  stride = (gsize) width * label->bytes_per_pixel;
  if (png_get_rowbytes (png, info) != stride) {
    reader->failure.code = GST_SPDL_DECODE_ERROR_UNSUPPORTED;
    g_strlcpy (reader->failure.message, "unsupported PNG layout for a label",
        sizeof (reader->failure.message));
    return FALSE;
  }
  label->pixels = g_try_malloc (MAX (stride * height, 1));
  reader->rows = g_try_new (png_bytep, height);
  if (label->pixels == NULL || reader->rows == NULL) {
    reader->failure.code = GST_SPDL_DECODE_ERROR_TOO_LARGE;
    g_snprintf (reader->failure.message, sizeof (reader->failure.message),
        "out of memory for a %ux%u label", width, height);
    return FALSE;
  }
  for (y = 0; y < height; y++)
    reader->rows[y] = label->pixels + y * stride;
  png_read_image (png, reader->rows);
  label->width = width;
  label->height = height;
  return TRUE;
}

gboolean
gst_spdl_label_image_decode (GstSpdlLabelImage * label, const guint8 * data,
    gsize size, guint64 max_pixels, GError ** error)
{
  LabelReader reader = { data, size, 0 };
  png_structp png;
  png_infop info;
  GstSpdlImageFormat format;
  volatile gboolean ok = FALSE;

  memset (label, 0, sizeof (*label));
  if (size == 0)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_EMPTY,
        "empty label image");
  format = gst_spdl_image_format_sniff (data, size);
  if (size < PNG_SIGNATURE_SIZE || png_sig_cmp (data, 0,
          PNG_SIGNATURE_SIZE) != 0)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "a label must be a PNG (palette or gray), this one is %s",
        format == GST_SPDL_IMAGE_FORMAT_UNKNOWN ? "no image format known" :
        gst_spdl_image_format_name (format));
  png = gst_spdl_png_read_struct_new (&reader.failure);
  info = png ? png_create_info_struct (png) : NULL;
  if (info == NULL) {
    png_destroy_read_struct (&png, NULL, NULL);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "out of memory for a PNG decoder");
  }
  png_set_read_fn (png, &reader, read_data);
  if (setjmp (png_jmpbuf (png)) == 0)
    ok = read_png (png, info, &reader, label, max_pixels);
  png_destroy_read_struct (&png, &info, NULL);
  g_free (reader.rows);
  if (ok)
    return TRUE;
  gst_spdl_label_image_clear (label);
  return gst_spdl_decode_fail (error, reader.failure.code < 0 ?
      GST_SPDL_DECODE_ERROR_CORRUPT : reader.failure.code, "%s",
      reader.failure.message[0] ? reader.failure.message :
      "corrupt label image");
}

void
gst_spdl_label_image_clear (GstSpdlLabelImage * label)
{
  g_clear_pointer (&label->pixels, g_free);
  label->width = label->height = 0;
}

/* One axis: the source index of each output, -1 for padding. torch's
 * nearest_neighbor_compute_source_index on the resized (virtual) axis,
 * in single precision as torch computes it, shifted into the clip. */
static void
nearest_axis (gint64 * index, guint n, guint clip_start, guint clip_len,
    gint64 virtual_len, gdouble offset)
{
  gint64 first = (gint64) offset;
  float scale = (float) clip_len / (float) virtual_len;
  guint i;

  for (i = 0; i < n; i++) {
    gint64 v = first + i;
    gint64 src;

    if (v < 0 || v >= virtual_len) {
      index[i] = -1;
      continue;
    }
    src = (gint64) floorf ((float) v * scale);
    index[i] = clip_start + MIN (src, (gint64) clip_len - 1);
  }
}

void
gst_spdl_label_image_resample (const GstSpdlLabelImage * label,
    const GstSpdlGeometry * geom, guint8 * out)
{
  guint bpp = label->bytes_per_pixel;
  guint ow = geom->out_width, oh = geom->out_height;
  /* stretch and random-resized-crop resize the clip to the output;
   * center-crop crops the output from the resized image */
  gint64 vw = geom->virtual_width != G_MAXINT64 ? geom->virtual_width : ow;
  gint64 vh = geom->virtual_height != G_MAXINT64 ? geom->virtual_height : oh;
  gint64 *xs = g_new (gint64, ow), *ys = g_new (gint64, oh);
  gsize in_stride = (gsize) label->width * bpp, out_stride = (gsize) ow * bpp;
  guint x, y;

  nearest_axis (xs, ow, geom->clip_x, geom->clip_width, vw, geom->offset_x);
  nearest_axis (ys, oh, geom->clip_y, geom->clip_height, vh, geom->offset_y);
  if (geom->flip) {
    for (x = 0; x < ow / 2; x++) {
      gint64 t = xs[x];
      xs[x] = xs[ow - 1 - x];
      xs[ow - 1 - x] = t;
    }
  }
  for (y = 0; y < oh; y++) {
    guint8 *dst = out + y * out_stride;
    const guint8 *src;

    if (ys[y] < 0) {
      memset (dst, 0, out_stride);
      continue;
    }
    /* a row that repeats the one above (upscaling): copied whole */
    if (y > 0 && ys[y] == ys[y - 1]) {
      memcpy (dst, dst - out_stride, out_stride);
      continue;
    }
    src = label->pixels + ys[y] * in_stride;
    if (bpp == 1) {
      for (x = 0; x < ow; x++)
        dst[x] = xs[x] < 0 ? 0 : src[xs[x]];
    } else {
      const guint16 *src16 = (const guint16 *) src;
      guint16 *dst16 = (guint16 *) dst;

      for (x = 0; x < ow; x++)
        dst16[x] = xs[x] < 0 ? 0 : src16[xs[x]];
    }
  }
  g_free (xs);
  g_free (ys);
}
