/* GStreamer SPDL: antialiased resampling
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_RESAMPLE_H__
#define __GST_SPDL_RESAMPLE_H__

#include <glib.h>

G_BEGIN_DECLS

/* One axis of a separable resize with a triangle (bilinear) filter whose
 * support widens with the downscale factor, the arithmetic PIL's
 * Image.resize(BILINEAR) uses (22-bit fixed-point weights), so that results
 * match torchvision's PIL path. Only the outputs that are kept (a crop of a
 * virtual resize) are computed. */
typedef struct
{
  guint out_size;
  guint ksize;                  /* taps per output, upper bound */
  gint *first;                  /* first input pixel of each output */
  gint *count;                  /* taps of each output (0 = padding: black) */
  gint32 *weights;              /* out_size * ksize */
  gboolean identity;            /* output i is input first[0] + i */
  gboolean uniform;             /* every output has exactly taps taps */
  guint taps;
  gint16 *split;                /* RGB kernel's weights as 16-bit halves */
  gint32 *acc;                  /* scratch of the vertical pass */
  gsize acc_size;
  guint bits;                   /* fixed-point precision of the weights */
  gint16 *pairs;                /* weights of the fast RGB kernel, or NULL */
  /* what gst_spdl_resample_axis_update() built it from */
  struct
  {
    gboolean valid;
    gdouble clip_start, scale, offset;
    guint clip_size, out_size, simd;
    gint64 virtual_size;
    gboolean mirror, fast;
  } made_from;
} GstSpdlResampleAxis;

/* Input pixels are clip_start .. clip_start + clip_size - 1 (the filter never
 * reads outside). Output i samples around
 *   clip_start + (offset + i + 0.5) * scale,
 * i.e. pixel offset + i of the image resized by 1/scale. Outputs whose
 * offset + i falls outside [0, virtual_size) are padding (torchvision's
 * CenterCrop pads with zeros). @mirror reverses the outputs. @axis is
 * uninitialised or cleared with gst_spdl_resample_axis_clear(). */
void gst_spdl_resample_axis_init (GstSpdlResampleAxis * axis,
    gdouble clip_start, guint clip_size, gdouble scale, gdouble offset,
    guint out_size, gint64 virtual_size, gboolean mirror);
/* The same with @fast: 14-bit weights (PIL's are 22-bit) and a kernel that
 * takes two taps per instruction; results differ from PIL's by rounding
 * (rarely a level), for the decoder's exact=false. */
void gst_spdl_resample_axis_init_full (GstSpdlResampleAxis * axis,
    gdouble clip_start, guint clip_size, gdouble scale, gdouble offset,
    guint out_size, gint64 virtual_size, gboolean mirror, gboolean fast);
void gst_spdl_resample_axis_clear (GstSpdlResampleAxis * axis);
/* gst_spdl_resample_axis_init_full() unless @axis (zeroed, cleared or
 * updated) was made from the same arguments already: images of the same
 * size and recipe share their weights. */
void gst_spdl_resample_axis_update (GstSpdlResampleAxis * axis,
    gdouble clip_start, guint clip_size, gdouble scale, gdouble offset,
    guint out_size, gint64 virtual_size, gboolean mirror, gboolean fast);
/* The axes of the last few image sizes, each kept with its weights: the
 * sizes of a dataset repeat (ImageNet's 500x375, 500x333, ...) but rarely
 * back to back. Zeroed before use, cleared after. */
#define GST_SPDL_RESAMPLE_CACHED_AXES 8
/* beyond this, only the two newest axes stay (outputs of thousands of
 * pixels make axes of megabytes) */
#define GST_SPDL_RESAMPLE_CACHE_MAX_BYTES (4 * 1024 * 1024)
typedef struct
{
  GstSpdlResampleAxis axes[GST_SPDL_RESAMPLE_CACHED_AXES];
  guint64 last_used[GST_SPDL_RESAMPLE_CACHED_AXES];   /* 0: never */
  guint64 clock;
} GstSpdlResampleAxisCache;

/* An axis made from these arguments (gst_spdl_resample_axis_init_full()):
 * a cached one, or the least recently used one rebuilt. Valid until
 * GST_SPDL_RESAMPLE_CACHED_AXES other axes are asked for. */
const GstSpdlResampleAxis *gst_spdl_resample_axis_cache_get
    (GstSpdlResampleAxisCache * cache, gdouble clip_start, guint clip_size,
    gdouble scale, gdouble offset, guint out_size, gint64 virtual_size,
    gboolean mirror, gboolean fast);
void gst_spdl_resample_axis_cache_clear (GstSpdlResampleAxisCache * cache);

/* For tests and benchmarks: use SIMD kernels up to @level (2 AVX2, 1
 * SSE4.1, 0 none) for axes initialised from now on. */
void gst_spdl_resample_limit_simd (guint level);

/* Range of input pixels the axis reads: [*start, *end). FALSE if none. */
gboolean gst_spdl_resample_axis_range (const GstSpdlResampleAxis * axis,
    gint * start, gint * end);

/* Resamples one row of @channels interleaved channels; @in points at input
 * pixel @in_start. */
void gst_spdl_resample_row (const GstSpdlResampleAxis * axis,
    const guint8 * in, gint in_start, guint channels, guint8 * out);

/* Computes output row @out_row from rows of the horizontally resampled
 * image; @rows points at input row @rows_start, @row_stride bytes apart. */
void gst_spdl_resample_column (const GstSpdlResampleAxis * axis,
    guint out_row, const guint8 * rows, gint rows_start, gsize row_stride,
    gsize row_bytes, guint8 * out);
/* The same, from the rows of the output row's window: @rows[t] is the
 * horizontally resampled input row axis->first[@out_row] + t. */
void gst_spdl_resample_column_rows (const GstSpdlResampleAxis * axis,
    guint out_row, const guint8 * const *rows, gsize row_bytes, guint8 * out);

G_END_DECLS

#endif /* __GST_SPDL_RESAMPLE_H__ */
