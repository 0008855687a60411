/* GStreamer SPDL: what each image becomes, and where its output comes from
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_GEOMETRY_H__
#define __GST_SPDL_GEOMETRY_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  GST_SPDL_RESIZE_STRETCH,
  GST_SPDL_RESIZE_CENTER_CROP,
  GST_SPDL_RESIZE_RANDOM_RESIZED_CROP,
  GST_SPDL_RESIZE_SHORTER,
  GST_SPDL_RESIZE_LETTERBOX,
} GstSpdlResizeMode;

/* the most shorter-side sizes one may draw from (DETR's list has 11) */
#define GST_SPDL_MAX_SIZES 64

typedef enum
{
  GST_SPDL_FLIP_NONE,
  GST_SPDL_FLIP_RANDOM_HORIZONTAL,
} GstSpdlFlipMode;

/* What to make of each image: the element's properties. */
typedef struct
{
  guint width;                  /* 0 = the image's (or the crop's) own */
  guint height;
  GstSpdlResizeMode mode;
  guint resize_shorter;         /* center-crop; 0 = max (width, height) */
  guint max_size;               /* shorter: longest side at most, 0 = none */
  guint sizes[GST_SPDL_MAX_SIZES];      /* shorter: one drawn per image */
  guint n_sizes;                /* 0: resize_shorter */
  gboolean sizes_invalid;       /* too many, or one out of range: refused */
  guint8 pad_value;             /* letterbox: the padding's value */
  gdouble scale_min, scale_max; /* random-resized-crop */
  gdouble ratio_min, ratio_max;
  GstSpdlFlipMode flip;
  guint64 seed;
  gboolean gray;                /* GRAY8 instead of RGB */
  guint64 max_pixels;
  gboolean dct_scaling;         /* let libjpeg downscale in the DCT domain */
  gboolean region_decode;       /* decode only the rows/columns needed */
  guint64 max_output_pixels;    /* 0 = automatic, see output_limit() */
  gboolean exact;               /* FALSE: faster, pixels near PIL's */
} GstSpdlDecodeParams;

void gst_spdl_decode_params_init (GstSpdlDecodeParams * params);

/* NULL, or why the sizes asked for do not fit the mode (torchvision's
 * own refusal among them: max-size must exceed every shorter-side size);
 * g_free () it. */
gchar *gst_spdl_decode_params_check (const GstSpdlDecodeParams * params);

/* The most pixels one output may have: max_output_pixels, or when that is
 * 0, 64 x the square of the largest size asked for (aspect ratios up to
 * 1:64 pass) or, when no size is asked, max_pixels. */
guint64 gst_spdl_decode_params_output_limit (const GstSpdlDecodeParams *
    params);

/* Where the output comes from, in the image's pixel coordinates. */
typedef struct
{
  guint out_width, out_height;
  /* the clip box the filter may read (PIL resizes a crop, clipped to it) */
  guint clip_x, clip_y, clip_width, clip_height;
  /* output pixel i samples around clip + (offset + i + 0.5) * scale */
  gdouble scale_x, scale_y, offset_x, offset_y;
  /* size of the virtual resized image (outputs outside it are padding) */
  gint64 virtual_width, virtual_height;
  gboolean flip;
  /* letterbox: padding is placed as the image's (boxes follow it), not
   * where torchvision's center_crop anchors boxes */
  gboolean letterbox;
} GstSpdlGeometry;

/* Writes @value into every output pixel outside the resized image (the
 * letterbox's border, a centre crop's padding): @n_planes planes of
 * @bytes_per_pixel bytes per pixel (one value for every channel). */
void gst_spdl_geometry_fill_padding (const GstSpdlGeometry * geom,
    guint8 * const *planes, const gsize * strides, guint n_planes,
    guint bytes_per_pixel, guint8 value);

gboolean gst_spdl_geometry_compute (GstSpdlGeometry * geom,
    const GstSpdlDecodeParams * params, guint image_width,
    guint image_height, guint epoch, guint64 index);

/* FALSE with a GST_SPDL_DECODE_ERROR_TOO_LARGE error when the output of
 * @geom has more pixels than the params allow (an image of extreme aspect
 * ratio with a size that follows it). */
gboolean gst_spdl_geometry_check_output (const GstSpdlGeometry * geom,
    const GstSpdlDecodeParams * params, GError ** error);

/* Limits of one decode, whatever the codec: pixels (PIL's decompression
 * bomb limit, Image.MAX_IMAGE_PIXELS: every photo a phone or camera makes
 * is under it), working memory (a progressive JPEG keeps every DCT
 * coefficient, up to 8 bytes per pixel for CMYK; an interlaced PNG or a
 * WebP the whole image, up to 8 for 16-bit RGBA: the default takes any
 * image up to the pixel limit) and the scans of a progressive JPEG. */
#define GST_SPDL_IMAGE_DEFAULT_MAX_PIXELS G_GUINT64_CONSTANT (178956970)
#define GST_SPDL_IMAGE_DEFAULT_MAX_MEMORY \
  (8 * GST_SPDL_IMAGE_DEFAULT_MAX_PIXELS)
#define GST_SPDL_IMAGE_DEFAULT_MAX_SCANS 500

G_END_DECLS

#endif /* __GST_SPDL_GEOMETRY_H__ */
