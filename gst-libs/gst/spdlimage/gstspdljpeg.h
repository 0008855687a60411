/* GStreamer SPDL plugin: JPEG decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_JPEG_H__
#define __GST_SPDL_JPEG_H__

#include <glib.h>

#include "gstspdloutput.h"

G_BEGIN_DECLS

typedef enum
{
  GST_SPDL_RESIZE_STRETCH,
  GST_SPDL_RESIZE_CENTER_CROP,
  GST_SPDL_RESIZE_RANDOM_RESIZED_CROP,
} GstSpdlResizeMode;

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
} GstSpdlGeometry;

gboolean gst_spdl_geometry_compute (GstSpdlGeometry * geom,
    const GstSpdlDecodeParams * params, guint image_width,
    guint image_height, guint epoch, guint64 index);

/* FALSE with a GST_SPDL_DECODE_ERROR_TOO_LARGE error when the output of
 * @geom has more pixels than the params allow (an image of extreme aspect
 * ratio with a size that follows it). */
gboolean gst_spdl_geometry_check_output (const GstSpdlGeometry * geom,
    const GstSpdlDecodeParams * params, GError ** error);

typedef struct _GstSpdlJpegDecoder GstSpdlJpegDecoder;

/* One per thread: owns a libjpeg decompressor and scratch buffers. */
GstSpdlJpegDecoder *gst_spdl_jpeg_decoder_new (void);
void gst_spdl_jpeg_decoder_free (GstSpdlJpegDecoder * dec);

#define GST_SPDL_JPEG_DEFAULT_MAX_MEMORY (128 * 1024 * 1024)
#define GST_SPDL_JPEG_DEFAULT_MAX_SCANS 500

/* Bounds one decode: libjpeg's working memory (progressive images keep
 * every DCT coefficient of the image) and the number of scans (each scan
 * of a progressive image is a pass over all of it). 0 = no limit. Images
 * over a limit fail with GST_SPDL_DECODE_ERROR_TOO_LARGE. */
void gst_spdl_jpeg_decoder_set_limits (GstSpdlJpegDecoder * dec,
    guint64 max_memory, guint max_scans);

/* Parses the headers of @data and checks it can be decoded (size limits,
 * a complete scan). On success the decoder holds the image until
 * gst_spdl_jpeg_decoder_decode_to() or the next open. */
gboolean gst_spdl_jpeg_decoder_open (GstSpdlJpegDecoder * dec,
    const guint8 * data, gsize size, guint64 max_pixels, guint * width,
    guint * height, GError ** error);

/* Decodes the opened image into @out (geom->out_width x geom->out_height,
 * 3 or 1 channels as params->gray): packed rows or RGB planes. */
gboolean gst_spdl_jpeg_decoder_decode_to (GstSpdlJpegDecoder * dec,
    const GstSpdlDecodeParams * params, const GstSpdlGeometry * geom,
    const GstSpdlOutput * out, GError ** error);

/* Statistics of the last decode, for benchmarks. */
typedef struct
{
  guint scale_num;              /* DCT scale num/8 used */
  guint decoded_width, decoded_height;  /* pixels libjpeg produced */
} GstSpdlJpegDecodeInfo;

void gst_spdl_jpeg_decoder_get_info (GstSpdlJpegDecoder * dec,
    GstSpdlJpegDecodeInfo * info);

#define GST_SPDL_DECODE_ERROR (gst_spdl_decode_error_quark ())
GQuark gst_spdl_decode_error_quark (void);

typedef enum
{
  GST_SPDL_DECODE_ERROR_EMPTY,
  GST_SPDL_DECODE_ERROR_NOT_JPEG,
  GST_SPDL_DECODE_ERROR_TRUNCATED,
  GST_SPDL_DECODE_ERROR_CORRUPT,
  GST_SPDL_DECODE_ERROR_TOO_LARGE,
  GST_SPDL_DECODE_ERROR_UNSUPPORTED,
  GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT,     /* a format with no decoder */
  GST_SPDL_DECODE_N_ERRORS,
} GstSpdlDecodeErrorCode;

/* Sets @error (GST_SPDL_DECODE_ERROR, @code) from a format; FALSE. */
gboolean gst_spdl_decode_fail (GError ** error, gint code,
    const gchar * format, ...) G_GNUC_PRINTF (3, 4);

/* Short name of each reason, for counts by reason. */
const gchar *gst_spdl_decode_error_reason (gint code);

G_END_DECLS

#endif /* __GST_SPDL_JPEG_H__ */
