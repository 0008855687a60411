/* GStreamer SPDL: JPEG decode with fused resize and crop
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The decode path the element, the benchmarks and the fuzzer share:
 * headers are checked before any pixel buffer is allocated, libjpeg-turbo
 * decodes only the rows and columns the crop needs (and, with exact=false,
 * downscales in the DCT domain when the target is much smaller), each
 * decoded row is resampled horizontally as it arrives and each output row
 * vertically as soon as its rows are in, so memory is bounded by the
 * output's width. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdljpeg.h"
#include "gstspdlerrors.h"
#include "gstspdlresample.h"

#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

/* rows handed to jpeg_read_scanlines per call */
#define ROW_BATCH 16

typedef struct
{
  struct jpeg_error_mgr pub;
  jmp_buf jump;
  gint code;
  gchar message[JMSG_LENGTH_MAX];
  gchar first_warning[JMSG_LENGTH_MAX]; /* of the image under way */
  gboolean rows_done;           /* every row read: jpeg_finish_decompress */
  gboolean eof_after_rows;
  gboolean whole;               /* the data ends in an end-of-image marker */
} SpdlJpegError;

typedef struct
{
  struct jpeg_progress_mgr pub;
  SpdlJpegError *err;
  guint max_scans;
} SpdlJpegProgress;

struct _GstSpdlJpegDecoder
{
  struct jpeg_decompress_struct cinfo;
  SpdlJpegError err;
  SpdlJpegProgress progress;
  guint64 max_memory;
  gboolean opened;
  GstSpdlResampleAxisCache axes;
  const GstSpdlResampleAxis *haxis, *vaxis;     /* of this image, in axes */
  guint8 *rows;                 /* ROW_BATCH decoded rows */
  gsize rows_size;
  GstSpdlRowRing ring;          /* horizontally resampled rows */
  guint8 *rgb;                  /* one converted row (CMYK input) */
  gsize rgb_size;
  GstSpdlJpegDecodeInfo info;
};

static void
spdl_error_exit (j_common_ptr cinfo)
{
  SpdlJpegError *err = (SpdlJpegError *) cinfo->err;

  err->pub.format_message (cinfo, err->message);
  err->code = GST_SPDL_DECODE_ERROR_CORRUPT;
  /* past max_memory_to_use (there is no backing store) */
  if (err->pub.msg_code == JERR_NO_BACKING_STORE) {
    g_snprintf (err->message, sizeof (err->message),
        "needs more than max-decode-memory to decode");
    err->code = GST_SPDL_DECODE_ERROR_TOO_LARGE;
  }
  longjmp (err->jump, 1);
}

static void
spdl_emit_message (j_common_ptr cinfo, int level)
{
  SpdlJpegError *err = (SpdlJpegError *) cinfo->err;

  if (level >= 0)
    return;
  /* the data ends after every row is out, in the markers after the scan
   * (a flipped bit made one whose length runs past the end): PIL's decoder
   * is done at its last row and ignores a jpeg_finish_decompress that runs
   * out of data, so the image is delivered, as recovered (the source
   * inserts an EOI at each of these: warned once) */
  if (err->pub.msg_code == JWRN_JPEG_EOF && err->rows_done) {
    if (!err->eof_after_rows && err->pub.num_warnings++ == 0)
      g_snprintf (err->first_warning, sizeof (err->first_warning),
          "a marker after the image data runs past the end of the file");
    err->eof_after_rows = TRUE;
    return;
  }
  /* the data ends before the image: PIL fails ("image file is truncated").
   * A file that ends in its end-of-image marker is whole: a length a
   * damaged byte made ran past that marker, so it is corrupt, not cut */
  if (err->pub.msg_code == JWRN_JPEG_EOF) {
    gchar detail[JMSG_LENGTH_MAX];
    err->pub.format_message (cinfo, detail);
    if (err->whole) {
      g_snprintf (err->message, sizeof (err->message), "corrupt: the data "
          "runs past the end-of-image marker of a whole file (%s)", detail);
      err->code = GST_SPDL_DECODE_ERROR_CORRUPT;
    } else {
      g_snprintf (err->message, sizeof (err->message), "truncated (%s)",
          detail);
      err->code = GST_SPDL_DECODE_ERROR_TRUNCATED;
    }
    longjmp (err->jump, 1);
  }
  /* corrupt data in a whole file ("premature end of data segment", a bad
   * Huffman code): libjpeg goes on, and so does PIL, silently; the image
   * is delivered as recovered */
  if (err->pub.num_warnings++ == 0)
    err->pub.format_message (cinfo, err->first_warning);
}

/* Called between scans and during long passes: a progressive image with
 * a huge number of scans costs a pass over the whole image each. */
static void
spdl_progress_monitor (j_common_ptr cinfo)
{
  SpdlJpegProgress *progress = (SpdlJpegProgress *) cinfo->progress;
  j_decompress_ptr dinfo = (j_decompress_ptr) cinfo;

  if (progress->max_scans && dinfo->input_scan_number > 0 &&
      (guint) dinfo->input_scan_number > progress->max_scans) {
    g_snprintf (progress->err->message, sizeof (progress->err->message),
        "more than max-scans=%u scans", progress->max_scans);
    progress->err->code = GST_SPDL_DECODE_ERROR_TOO_LARGE;
    longjmp (progress->err->jump, 1);
  }
}

static void
spdl_output_message (j_common_ptr cinfo)
{
  /* libjpeg would print to stderr: errors are reported by the caller */
}

GstSpdlJpegDecoder *
gst_spdl_jpeg_decoder_new (void)
{
  GstSpdlJpegDecoder *dec = g_new0 (GstSpdlJpegDecoder, 1);

  dec->cinfo.err = jpeg_std_error (&dec->err.pub);
  dec->err.pub.error_exit = spdl_error_exit;
  dec->err.pub.emit_message = spdl_emit_message;
  dec->err.pub.output_message = spdl_output_message;
  jpeg_create_decompress (&dec->cinfo);
  dec->progress.pub.progress_monitor = spdl_progress_monitor;
  dec->progress.err = &dec->err;
  dec->cinfo.progress = &dec->progress.pub;
  gst_spdl_jpeg_decoder_set_limits (dec, GST_SPDL_IMAGE_DEFAULT_MAX_MEMORY,
      GST_SPDL_IMAGE_DEFAULT_MAX_SCANS);
  return dec;
}

void
gst_spdl_jpeg_decoder_set_limits (GstSpdlJpegDecoder * dec,
    guint64 max_memory, guint max_scans)
{
  dec->max_memory = max_memory;
  dec->progress.max_scans = max_scans;
  /* libjpeg-turbo's memory manager refuses (no backing store) past this */
  dec->cinfo.mem->max_memory_to_use = (long) MIN (max_memory, G_MAXLONG);
}

/* Bytes of the whole-image coefficient buffer a progressive (or
 * multi-scan) image needs: 64 coefficients of 2 bytes per block. */
static guint64
coefficient_memory (struct jpeg_decompress_struct *cinfo)
{
  guint64 bytes = 0;
  gint c;

  if (!cinfo->progressive_mode && cinfo->comps_in_scan >= cinfo->num_components)
    return 0;
  for (c = 0; c < cinfo->num_components; c++) {
    jpeg_component_info *comp = &cinfo->comp_info[c];
    guint64 rows = comp->height_in_blocks + comp->v_samp_factor;
    bytes += (guint64) comp->width_in_blocks * rows * 64 * sizeof (JCOEF);
  }
  return bytes;
}

void
gst_spdl_jpeg_decoder_free (GstSpdlJpegDecoder * dec)
{
  if (dec == NULL)
    return;
  jpeg_destroy_decompress (&dec->cinfo);
  gst_spdl_resample_axis_cache_clear (&dec->axes);
  g_free (dec->rows);
  gst_spdl_row_ring_clear (&dec->ring);
  g_free (dec->rgb);
  g_free (dec);
}

static guint8 *
ensure_size (guint8 ** buf, gsize * size, gsize need)
{
  if (*size < need) {
    g_free (*buf);
    /* zeroed: the SIMD kernel reads (and discards) slack bytes */
    *buf = g_malloc0 (need);
    *size = need;
  }
  return *buf;
}

/* An entropy-coded segment never holds FF D9 (FF is stuffed), so a file
 * whose scan data has no end-of-image marker was cut short. */
static gboolean
has_end_marker (const guint8 * data, gsize size, gsize scan_start)
{
  gsize i;

  for (i = size; i >= scan_start + 2; i--) {
    if (data[i - 2] == 0xFF && data[i - 1] == 0xD9)
      return TRUE;
  }
  return FALSE;
}

static gboolean
check_signature (const guint8 * data, gsize size, GError ** error)
{
  if (size == 0)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_EMPTY,
        "empty file (0 bytes)");
  if (size < 3 || data[0] != 0xFF || data[1] != 0xD8)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_NOT_JPEG,
        "not a JPEG file (no start-of-image marker)");
  return TRUE;
}

gboolean
gst_spdl_jpeg_decoder_open (GstSpdlJpegDecoder * dec, const guint8 * data,
    gsize size, guint64 max_pixels, guint * width, guint * height,
    GError ** error)
{
  struct jpeg_decompress_struct *cinfo = &dec->cinfo;
  guint64 pixels;
  gsize scan_start;

  if (dec->opened)
    jpeg_abort_decompress (cinfo);
  dec->opened = FALSE;
  if (!check_signature (data, size, error))
    return FALSE;

  if (setjmp (dec->err.jump)) {
    jpeg_abort_decompress (cinfo);
    return gst_spdl_decode_fail (error, dec->err.code, "%s", dec->err.message);
  }
  dec->err.pub.num_warnings = 0;
  /* a new image: the last one's rows say nothing of this one's header */
  dec->err.rows_done = FALSE;
  dec->err.eof_after_rows = FALSE;
  /* before the scan's start is known: whole if the file's last bytes are
   * the marker (no junk after it) */
  dec->err.whole = size >= 4 && data[size - 2] == 0xFF &&
      data[size - 1] == 0xD9;
  jpeg_mem_src (cinfo, data, size);
  jpeg_read_header (cinfo, TRUE);

  pixels = (guint64) cinfo->image_width * cinfo->image_height;
  if (max_pixels && pixels > max_pixels) {
    jpeg_abort_decompress (cinfo);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u is %" G_GUINT64_FORMAT " pixels, more than max-pixels=%"
        G_GUINT64_FORMAT, cinfo->image_width, cinfo->image_height, pixels,
        max_pixels);
  }
  if (dec->max_memory && coefficient_memory (cinfo) > dec->max_memory) {
    guint64 need = coefficient_memory (cinfo);
    jpeg_abort_decompress (cinfo);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%ux%u %s needs %" G_GUINT64_FORMAT " MiB to decode, more than "
        "max-decode-memory=%" G_GUINT64_FORMAT " MiB", cinfo->image_width,
        cinfo->image_height, cinfo->progressive_mode ? "progressive JPEG" :
        "multi-scan JPEG", need >> 20, dec->max_memory >> 20);
  }
  scan_start = size - cinfo->src->bytes_in_buffer;
  if (!has_end_marker (data, size, scan_start)) {
    jpeg_abort_decompress (cinfo);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TRUNCATED,
        "truncated: the image data has no end-of-image marker");
  }
  dec->err.whole = TRUE;
  *width = cinfo->image_width;
  *height = cinfo->image_height;
  dec->opened = TRUE;
  return TRUE;
}

/* exact=false: once the image is at least 2x the target, the smallest of
 * the SIMD-accelerated reductions (1/2, 1/4, 1/8) that keeps at least one
 * decoded pixel per output pixel. 3/8 and the other M/8 take a scalar IDCT:
 * no faster than 4/8, and further from PIL's pixels. */
static guint
choose_scale_num_inexact (const GstSpdlGeometry * g)
{
  gdouble spacing = MIN (g->scale_x, g->scale_y);
  guint num = 8;

  if (spacing < 2.0)
    return 8;
  while (num > 1 && spacing * (num / 2) / 8.0 >= 1.0)
    num /= 2;
  return num;
}

static J_COLOR_SPACE
choose_color_space (struct jpeg_decompress_struct *cinfo, gboolean gray)
{
  if (cinfo->jpeg_color_space == JCS_CMYK ||
      cinfo->jpeg_color_space == JCS_YCCK)
    return JCS_CMYK;
  return gray ? JCS_GRAYSCALE : JCS_EXT_RGB;
}

/* Sets up both axes in decoded-pixel coordinates (after DCT scaling). */
static void
plan_axes (GstSpdlJpegDecoder * dec, const GstSpdlGeometry * g, gdouble f,
    guint dw, guint dh, gboolean fast)
{
  gdouble x0 = g->clip_x * f, y0 = g->clip_y * f;
  guint cx = (guint) floor (x0), cy = (guint) floor (y0);
  guint cw = MIN ((guint) ceil ((g->clip_x + g->clip_width) * f), dw) - cx;
  guint ch = MIN ((guint) ceil ((g->clip_y + g->clip_height) * f), dh) - cy;
  gdouble sx = g->scale_x * f, sy = g->scale_y * f;

  /* a clip box that starts inside a decoded pixel shifts the centres */
  dec->haxis = gst_spdl_resample_axis_cache_get (&dec->axes, cx,
      MAX (cw, 1), sx, g->offset_x + (x0 - cx) / sx, g->out_width,
      g->virtual_width, g->flip, fast);
  dec->vaxis = gst_spdl_resample_axis_cache_get (&dec->axes, cy,
      MAX (ch, 1), sy, g->offset_y + (y0 - cy) / sy, g->out_height,
      g->virtual_height, FALSE, fast);
}

/* PIL's CMYK -> RGB (Adobe-inverted data, as PIL assumes) */
static void
cmyk_to_rgb (const guint8 * in, guint8 * out, guint n)
{
  guint i;

  for (i = 0; i < n; i++, in += 4, out += 3) {
    guint nk = in[3], c;
    for (c = 0; c < 3; c++) {
      guint v = (255 - in[c]) * nk + 128;
      gint r = (gint) nk - (gint) (((v >> 8) + v) >> 8);
      out[c] = (guint8) CLAMP (r, 0, 255);
    }
  }
}

static void
rgb_to_gray (guint8 * buf, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    buf[i] = (guint8) ((buf[3 * i] * 19595 + buf[3 * i + 1] * 38470 +
            buf[3 * i + 2] * 7471 + 0x8000) >> 16);
}

/* Brings one decoded row to the output's channels and resamples it. */
static void
process_row (GstSpdlJpegDecoder * dec, const guint8 * row, guint row_width,
    gint x_start, guint channels, guint8 * hrow)
{
  if (dec->cinfo.out_color_space == JCS_CMYK) {
    guint8 *rgb = ensure_size (&dec->rgb, &dec->rgb_size,
        (gsize) row_width * 3 + 16);
    cmyk_to_rgb (row, rgb, row_width);
    if (channels == 1)
      rgb_to_gray (rgb, row_width);
    row = rgb;
  }
  gst_spdl_resample_row (dec->haxis, row, x_start, channels, hrow);
}

/* Narrows libjpeg's output to the columns and rows the filter reads, with
 * a margin so that chroma upsampling at the region's edges sees the same
 * neighbours as a full decode: 2 columns either side, and at least one
 * whole iMCU row decoded (and dropped) above the first row needed, because
 * libjpeg-turbo 2.1 fills the context rows of its fancy upsampler only for
 * rows it decodes: right after jpeg_skip_scanlines() they are uninitialised
 * memory. */
static void
start_region (struct jpeg_decompress_struct *cinfo, gint x0, gint x1, gint y0,
    JDIMENSION * xoff)
{
  gint imcu_rows = cinfo->max_v_samp_factor * cinfo->min_DCT_scaled_size;
  JDIMENSION width;

  x0 = MAX (x0 - 2, 0);
  x1 = MIN (x1 + 2, (gint) cinfo->output_width);
  width = x1 - x0;
  *xoff = 0;
  if (width < cinfo->output_width) {
    *xoff = x0;
    jpeg_crop_scanline (cinfo, xoff, &width);
  }
  if (y0 >= 2 * imcu_rows)
    jpeg_skip_scanlines (cinfo, (y0 / imcu_rows - 1) * imcu_rows);
}

/* Reads the rest of the data after the region's last row, as a whole
 * decode does, so that the image is delivered or refused as PIL decides:
 * corrupt data or a broken marker below the crop is found. A single-scan
 * image's rows are skipped (entropy decoding only) but its last, which
 * jpeg_skip_scanlines() would not read; a multi-scan image's data was all
 * read by jpeg_start_decompress(). */
static void
read_to_end (struct jpeg_decompress_struct *cinfo, JSAMPROW * rowptr)
{
  JDIMENSION left = cinfo->output_height - cinfo->output_scanline;

  if (left == 0)
    return;
  if (jpeg_has_multiple_scans (cinfo)) {
    jpeg_skip_scanlines (cinfo, left);
    return;
  }
  if (left > 1)
    jpeg_skip_scanlines (cinfo, left - 1);
  while (cinfo->output_scanline < cinfo->output_height)
    jpeg_read_scanlines (cinfo, rowptr, 1);
}

static gboolean
decode_rows (GstSpdlJpegDecoder * dec, const GstSpdlDecodeParams * p,
    guint channels, const GstSpdlOutput * out)
{
  struct jpeg_decompress_struct *cinfo = &dec->cinfo;
  gint x0, x1, y0, y1, read_to;
  JDIMENSION xoff = 0;
  gsize in_row, hrow_bytes = (gsize) dec->haxis->out_size * channels;
  JSAMPROW rowptr[ROW_BATCH];
  guint r;

  /* rows and columns the filter reads */
  if (!gst_spdl_resample_axis_range (dec->haxis, &x0, &x1) ||
      !gst_spdl_resample_axis_range (dec->vaxis, &y0, &y1)) {
    /* all padding: a black output */
    gst_spdl_output_fill_black (out, dec->vaxis->out_size, dec->haxis->out_size,
        channels);
    jpeg_abort_decompress (cinfo);
    return TRUE;
  }
  jpeg_start_decompress (cinfo);
  if (p->region_decode)
    start_region (cinfo, x0, x1, y0, &xoff);
  read_to = p->region_decode ? y1 : (gint) cinfo->output_height;

  /* 16 bytes of slack: the SIMD row kernel loads 16 bytes per window */
  in_row = (gsize) cinfo->output_width * cinfo->output_components;
  ensure_size (&dec->rows, &dec->rows_size, in_row * ROW_BATCH + 16);
  for (r = 0; r < ROW_BATCH; r++)
    rowptr[r] = dec->rows + r * in_row;
  gst_spdl_row_ring_begin (&dec->ring, out, dec->vaxis, y0, hrow_bytes,
      channels);

  dec->info.decoded_width = cinfo->output_width;
  dec->info.decoded_height = read_to - cinfo->output_scanline;
  while ((gint) cinfo->output_scanline < read_to) {
    guint first = cinfo->output_scanline;
    guint want = MIN (ROW_BATCH, (guint) read_to - first);
    guint got = jpeg_read_scanlines (cinfo, rowptr, want);

    for (r = 0; r < got; r++) {
      gint y = first + r;
      if (y >= y0 && y < y1) {
        process_row (dec, rowptr[r], cinfo->output_width, xoff, channels,
            gst_spdl_row_ring_row (&dec->ring, y));
        gst_spdl_row_ring_commit (&dec->ring, y);
      }
    }
  }
  read_to_end (cinfo, rowptr);
  dec->err.rows_done = TRUE;
  jpeg_finish_decompress (cinfo);
  /* every row of [y0, y1) was read */
  g_warn_if_fail (gst_spdl_row_ring_finish (&dec->ring));
  return TRUE;
}

/* FALSE with GST_SPDL_DECODE_ERROR_RECOVERED once libjpeg warned about the
 * image's data (every pixel is written all the same). */
static gboolean
check_warnings (GstSpdlJpegDecoder * dec, GError ** error)
{
  if (dec->err.pub.num_warnings == 0)
    return TRUE;
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_RECOVERED,
      "corrupt JPEG data, decoded as PIL decodes it (%s; %ld warning%s)",
      dec->err.first_warning, dec->err.pub.num_warnings,
      dec->err.pub.num_warnings == 1 ? "" : "s");
}

gboolean
gst_spdl_jpeg_decoder_decode_to (GstSpdlJpegDecoder * dec,
    const GstSpdlDecodeParams * p, const GstSpdlGeometry * g,
    const GstSpdlOutput * out, GError ** error)
{
  struct jpeg_decompress_struct *cinfo = &dec->cinfo;
  guint channels = p->gray ? 1 : 3;
  guint num;

  g_return_val_if_fail (dec->opened, FALSE);
  dec->opened = FALSE;
  dec->err.rows_done = FALSE;
  dec->err.eof_after_rows = FALSE;
  if (setjmp (dec->err.jump)) {
    jpeg_abort_decompress (cinfo);
    return gst_spdl_decode_fail (error, dec->err.code, "%s", dec->err.message);
  }
  cinfo->out_color_space = choose_color_space (cinfo, p->gray);
  cinfo->dct_method = JDCT_ISLOW;
  cinfo->do_fancy_upsampling = TRUE;
  /* exact: every pixel decoded, as PIL does (reducing the few images 4x
   * the target or larger saves no CPU and costs them up to 7 levels) */
  if (!p->dct_scaling || p->exact)
    num = 8;
  else
    num = choose_scale_num_inexact (g);
  cinfo->scale_num = num;
  cinfo->scale_denom = 8;
  jpeg_calc_output_dimensions (cinfo);
  dec->info.scale_num = num;

  plan_axes (dec, g, num / 8.0, cinfo->output_width, cinfo->output_height,
      !p->exact);
  return decode_rows (dec, p, channels, out) && check_warnings (dec, error);
}

void
gst_spdl_jpeg_decoder_get_info (GstSpdlJpegDecoder * dec,
    GstSpdlJpegDecodeInfo * info)
{
  *info = dec->info;
}
