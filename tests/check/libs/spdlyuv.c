/* GStreamer SPDL plugin: unit tests of the YCbCr to RGB conversion
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <string.h>

#include "gstspdlyuv.h"
#include "spdlcheckmain.h"

static const GstVideoFormat formats[] = {
  GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YV12, GST_VIDEO_FORMAT_NV12,
  GST_VIDEO_FORMAT_NV21,
};

static const GstVideoColorMatrix matrices[] = {
  GST_VIDEO_COLOR_MATRIX_BT601, GST_VIDEO_COLOR_MATRIX_BT709,
  GST_VIDEO_COLOR_MATRIX_BT2020, GST_VIDEO_COLOR_MATRIX_UNKNOWN,
};

static const GstVideoColorRange ranges[] = {
  GST_VIDEO_COLOR_RANGE_16_235, GST_VIDEO_COLOR_RANGE_0_255,
};

/* a frame of @format, every plane byte random */
static GstBuffer *
random_frame (GstVideoInfo * info, GstVideoFormat format, guint w, guint h,
    GstVideoColorMatrix matrix, GstVideoColorRange range, GRand * rand)
{
  GstBuffer *buf;
  GstMapInfo map;
  gsize i;

  fail_unless (gst_video_info_set_format (info, format, w, h));
  info->colorimetry.matrix = matrix;
  info->colorimetry.range = range;
  buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info), NULL);
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (i = 0; i < map.size; i++)
    map.data[i] = g_rand_int (rand);
  gst_buffer_unmap (buf, &map);
  return buf;
}

/* The conversion pixel by pixel, as the tables define it: chroma of
 * pixel (x, y) at (x / 2, y / 2). */
static void
reference (const GstSpdlYuvTables * t, const GstVideoFrame * f, guint x0,
    guint x1, guint y0, guint y1, guint8 * rgb, gsize stride)
{
  guint x, y, c;

  for (y = y0; y < y1; y++)
    for (x = x0; x < x1; x++) {
      const guint8 *yp = GST_VIDEO_FRAME_COMP_DATA (f, 0);
      const guint8 *up = GST_VIDEO_FRAME_COMP_DATA (f, 1);
      const guint8 *vp = GST_VIDEO_FRAME_COMP_DATA (f, 2);
      guint yy = yp[y * GST_VIDEO_FRAME_COMP_STRIDE (f, 0) + x];
      guint u = up[(y / 2) * GST_VIDEO_FRAME_COMP_STRIDE (f, 1) +
          (x / 2) * GST_VIDEO_FRAME_COMP_PSTRIDE (f, 1)];
      guint v = vp[(y / 2) * GST_VIDEO_FRAME_COMP_STRIDE (f, 2) +
          (x / 2) * GST_VIDEO_FRAME_COMP_PSTRIDE (f, 2)];
      gint32 s[3];

      s[0] = t->y[yy] + t->rv[v];
      s[1] = t->y[yy] + t->gu[u] + t->gv[v];
      s[2] = t->y[yy] + t->bu[u];
      for (c = 0; c < 3; c++)
        rgb[y * stride + 3 * x + c] = CLAMP (s[c] >> 16, 0, 255);
    }
}

/* Every kernel level gives the reference's bytes in the region and
 * leaves the rest alone: random planes of odd and even sizes, random
 * regions (odd edges included), every format, matrix and range. */
GST_START_TEST (test_kernels_match_reference)
{
  GRand *rand = g_rand_new_with_seed (42);
  guint fi, mi, ri, trial, level, checked = 0;

  for (fi = 0; fi < G_N_ELEMENTS (formats); fi++)
    for (mi = 0; mi < G_N_ELEMENTS (matrices); mi++)
      for (ri = 0; ri < G_N_ELEMENTS (ranges); ri++)
        for (trial = 0; trial < 12; trial++) {
          guint w = trial < 4 ? 1 + trial * 16 + trial % 2 :
              (guint) g_rand_int_range (rand, 1, 140);
          guint h = g_rand_int_range (rand, 1, 12);
          GstVideoInfo info;
          GstBuffer *buf = random_frame (&info, formats[fi], w, h,
              matrices[mi], ranges[ri], rand);
          GstSpdlYuvTables t;
          GstSpdlYuvPlanes planes;
          GstVideoFrame frame;
          gsize stride = GST_ROUND_UP_4 (w * 3), size = stride * h + 64;
          guint8 *expect = g_malloc (size), *got = g_malloc (size);
          gint32 *scratch = g_new (gint32, 3 * (w + 2));
          guint x0 = 0, x1 = w, y0 = 0, y1 = h;

          if (trial % 3) {
            x0 = g_rand_int_range (rand, 0, w);
            x1 = g_rand_int_range (rand, x0 + 1, w + 1);
            y0 = g_rand_int_range (rand, 0, h);
            y1 = g_rand_int_range (rand, y0 + 1, h + 1);
          }
          fail_unless (gst_spdl_yuv_is_supported (formats[fi]));
          gst_spdl_yuv_tables_init (&t, &info);
          fail_unless (gst_video_frame_map (&frame, &info, buf,
                  GST_MAP_READ));
          gst_spdl_yuv_planes_from_frame (&planes, &frame);
          memset (expect, 0xa5, size);
          reference (&t, &frame, x0, x1, y0, y1, expect, stride);
          /* the converter may redo the pixel left of an odd x0 */
          if (x0 % 2)
            reference (&t, &frame, x0 - 1, x0, y0, y1, expect, stride);
          for (level = 0; level <= 2; level++) {
            memset (got, 0xa5, size);
            gst_spdl_yuv_limit_simd (level);
            gst_spdl_yuv_convert (&t, &planes, x0, x1, y0, y1, got, stride,
                scratch);
            if (memcmp (got, expect, size) != 0) {
              gsize i;
              for (i = 0; i < size && got[i] == expect[i]; i++);
              fail ("%s %ux%u [%u,%u)x[%u,%u) matrix %d range %d level %u: "
                  "byte %" G_GSIZE_FORMAT " (row %" G_GSIZE_FORMAT ") is %u, "
                  "not %u", gst_video_format_to_string (formats[fi]), w, h,
                  x0, x1, y0, y1, matrices[mi], ranges[ri], level, i,
                  i / stride, got[i], expect[i]);
            }
            checked++;
          }
          gst_video_frame_unmap (&frame);
          gst_buffer_unref (buf);
          g_free (expect);
          g_free (got);
          g_free (scratch);
        }
  gst_spdl_yuv_limit_simd (2);
  fail_unless_equals_int (checked, 4 * 4 * 2 * 12 * 3);
  g_rand_free (rand);
}

GST_END_TEST;

/* Every luma and chroma value through the 16-pixel kernels: each row a
 * sweep of luma, its chroma a sweep too, so sums past both clamps occur. */
GST_START_TEST (test_kernels_all_values)
{
  guint mi, ri, level;

  for (mi = 0; mi < G_N_ELEMENTS (matrices); mi++)
    for (ri = 0; ri < G_N_ELEMENTS (ranges); ri++) {
      const guint w = 256, h = 512;
      GstVideoInfo info;
      GstBuffer *buf;
      GstVideoFrame frame;
      GstSpdlYuvTables t;
      GstSpdlYuvPlanes planes;
      gsize stride = w * 3, size = stride * h + 64;
      guint8 *expect = g_malloc0 (size), *got = g_malloc0 (size);
      gint32 *scratch = g_new (gint32, 3 * (w + 2));
      guint x, y;

      fail_unless (gst_video_info_set_format (&info, GST_VIDEO_FORMAT_I420,
              w, h));
      info.colorimetry.matrix = matrices[mi];
      info.colorimetry.range = ranges[ri];
      buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
      fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
      for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
          ((guint8 *) GST_VIDEO_FRAME_COMP_DATA (&frame, 0))[y *
              GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0) + x] = x;
      for (y = 0; y < h / 2; y++)
        for (x = 0; x < w / 2; x++) {
          ((guint8 *) GST_VIDEO_FRAME_COMP_DATA (&frame, 1))[y *
              GST_VIDEO_FRAME_COMP_STRIDE (&frame, 1) + x] = y;
          ((guint8 *) GST_VIDEO_FRAME_COMP_DATA (&frame, 2))[y *
              GST_VIDEO_FRAME_COMP_STRIDE (&frame, 2) + x] = x * 2 + y;
        }
      gst_spdl_yuv_tables_init (&t, &info);
      gst_spdl_yuv_planes_from_frame (&planes, &frame);
      reference (&t, &frame, 0, w, 0, h, expect, stride);
      for (level = 0; level <= 2; level++) {
        gst_spdl_yuv_limit_simd (level);
        gst_spdl_yuv_convert (&t, &planes, 0, w, 0, h, got, stride, scratch);
        fail_unless (memcmp (got, expect, size) == 0, "level %u", level);
      }
      gst_spdl_yuv_limit_simd (2);
      gst_video_frame_unmap (&frame);
      gst_buffer_unref (buf);
      g_free (expect);
      g_free (got);
      g_free (scratch);
    }
}

GST_END_TEST;

/* Black and white and the primaries land where they must: limited
 * range BT.601 white (235, 128, 128) is 255s, black (16) 0s. */
GST_START_TEST (test_levels)
{
  GstVideoInfo info;
  GstSpdlYuvTables t;
  GstSpdlYuvPlanes planes = { 0, };
  guint8 luma[2] = { 235, 16 }, u = 128, v = 128, rgb[6 + 64];
  gint32 scratch[3 * 4];

  fail_unless (gst_video_info_set_format (&info, GST_VIDEO_FORMAT_I420, 2,
          2));
  info.colorimetry.matrix = GST_VIDEO_COLOR_MATRIX_BT601;
  info.colorimetry.range = GST_VIDEO_COLOR_RANGE_16_235;
  gst_spdl_yuv_tables_init (&t, &info);
  planes.y = luma;
  planes.u = &u;
  planes.v = &v;
  planes.u_pstride = planes.v_pstride = 1;
  gst_spdl_yuv_convert (&t, &planes, 0, 2, 0, 1, rgb, 6, scratch);
  fail_unless_equals_int (rgb[0], 255);
  fail_unless_equals_int (rgb[1], 255);
  fail_unless_equals_int (rgb[2], 255);
  fail_unless_equals_int (rgb[3], 0);
  fail_unless_equals_int (rgb[4], 0);
  fail_unless_equals_int (rgb[5], 0);
}

GST_END_TEST;

static Suite *
spdlyuv_suite (void)
{
  Suite *s = suite_create ("spdlyuv");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_kernels_match_reference);
  tcase_add_test (tc, test_kernels_all_values);
  tcase_add_test (tc, test_levels);
  return s;
}

SPDL_CHECK_MAIN (spdlyuv);
