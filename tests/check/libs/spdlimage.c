/* gst-spdl: unit tests of the image library's geometry and resampler
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
#include <math.h>
#include <string.h>

#include "gstspdlgeometry.h"
#include "gstspdloutput.h"
#include "gstspdlresample.h"
#include "gstspdlresample-private.h"
#include "spdlcheckmain.h"

GST_START_TEST (test_random_resized_crop_bounds)
{
  GstSpdlDecodeParams p;
  GstSpdlGeometry g, again;
  guint i, differ = 0;

  gst_spdl_decode_params_init (&p);
  p.mode = GST_SPDL_RESIZE_RANDOM_RESIZED_CROP;
  p.width = p.height = 224;
  p.seed = 42;
  for (i = 0; i < 2000; i++) {
    gdouble area, ratio;

    fail_unless (gst_spdl_geometry_compute (&g, &p, 500, 375, 3, i));
    fail_unless (g.clip_width >= 1 && g.clip_x + g.clip_width <= 500);
    fail_unless (g.clip_height >= 1 && g.clip_y + g.clip_height <= 375);
    fail_unless_equals_int (g.out_width, 224);
    fail_unless_equals_int (g.out_height, 224);
    area = (gdouble) g.clip_width * g.clip_height / (500.0 * 375.0);
    ratio = (gdouble) g.clip_width / g.clip_height;
    /* bounds of RandomResizedCrop, with slack for rounding to pixels */
    fail_unless (area >= 0.08 * 0.95 && area <= 1.0, "area %f", area);
    fail_unless (ratio >= 0.75 * 0.97 && ratio <= 4.0 / 3.0 * 1.03,
        "ratio %f", ratio);
    fail_unless_equals_float (g.scale_x, g.clip_width / 224.0);
    /* a function of (seed, epoch, index) only */
    gst_spdl_geometry_compute (&again, &p, 500, 375, 3, i);
    fail_unless (memcmp (&g, &again, sizeof (g)) == 0);
    gst_spdl_geometry_compute (&again, &p, 500, 375, 4, i);
    differ += memcmp (&g, &again, sizeof (g)) != 0;
  }
  fail_unless (differ > 1900, "epoch does not change the crops");
}

GST_END_TEST;

GST_START_TEST (test_resample_axis_reuse)
{
  GstSpdlResampleAxis axis = { 0 };
  guint8 in[3 * 40 + 16], out[3 * 40];
  guint i;

  for (i = 0; i < sizeof (in); i++)
    in[i] = (guint8) (i * 7);
  /* a downscale: 4-tap windows */
  gst_spdl_resample_axis_init (&axis, 0, 120, 120.0 / 40, 0, 40, G_MAXINT64,
      FALSE);
  fail_unless (axis.uniform && axis.taps <= axis.ksize);
  gst_spdl_resample_axis_clear (&axis);
  /* then a mirrored identity on the same struct */
  gst_spdl_resample_axis_init (&axis, 0, 40, 1.0, 0, 40, G_MAXINT64, TRUE);
  fail_unless (axis.taps <= axis.ksize, "%u taps, %u weights", axis.taps,
      axis.ksize);
  gst_spdl_resample_row (&axis, in, 0, 3, out);
  for (i = 0; i < 40; i++) {
    fail_unless_equals_int (out[3 * i], in[3 * (39 - i)]);
    fail_unless_equals_int (out[3 * i + 2], in[3 * (39 - i) + 2]);
  }
  gst_spdl_resample_axis_clear (&axis);
}

GST_END_TEST;

/* An axis updated with the arguments it was made from keeps its weights
 * (images of one size share them); any other argument rebuilds it, equal
 * to a freshly made axis. */
GST_START_TEST (test_resample_axis_update)
{
  GstSpdlResampleAxis axis = { 0 }, fresh;
  gint kept;
  guint8 in[3 * 400 + 16], got[3 * 224], want[3 * 224];
  guint i;

  for (i = 0; i < sizeof (in); i++)
    in[i] = (guint8) (i * 13 + i / 7);
  gst_spdl_resample_axis_update (&axis, 10, 350, 1.46, 0.5, 224, 256,
      FALSE, FALSE);
  /* a mark a rebuild would overwrite (malloc may hand back the address) */
  kept = axis.first[0];
  axis.first[0] = -12345;
  gst_spdl_resample_axis_update (&axis, 10, 350, 1.46, 0.5, 224, 256,
      FALSE, FALSE);
  fail_unless_equals_int (axis.first[0], -12345);
  axis.first[0] = kept;
  /* each argument in turn: rebuilt (the mark gone), equal to a fresh axis */
  for (i = 0; i < 9; i++) {
    gdouble start = i == 0 ? 11 : 10, scale = i == 1 ? 1.47 : 1.46;
    gdouble offset = i == 2 ? 0.25 : 0.5;
    guint size = i == 3 ? 349 : 350, out = i == 6 ? 223 : 224;
    gint64 virtual_size = i == 7 ? 200 : 256;
    gboolean mirror = i == 4, fast = i == 5;

    if (i == 8)                 /* the SIMD level: AVX2 weights or none */
      gst_spdl_resample_limit_simd (1);
    axis.first[0] = -12345;
    gst_spdl_resample_axis_update (&axis, start, size, scale, offset, out,
        virtual_size, mirror, fast);
    fail_if (axis.first[0] == -12345, "argument %u: not rebuilt", i);
    gst_spdl_resample_axis_init_full (&fresh, start, size, scale, offset,
        out, virtual_size, mirror, fast);
    fail_unless_equals_int (axis.out_size, out);
    fail_unless ((axis.split == NULL) == (fresh.split == NULL));
    gst_spdl_resample_row (&axis, in, 0, 3, got);
    gst_spdl_resample_row (&fresh, in, 0, 3, want);
    fail_unless (memcmp (got, want, 3 * out) == 0, "argument %u", i);
    gst_spdl_resample_axis_clear (&fresh);
    gst_spdl_resample_limit_simd (2);
    gst_spdl_resample_axis_update (&axis, 10, 350, 1.46, 0.5, 224, 256,
        FALSE, FALSE);
  }
  gst_spdl_resample_axis_clear (&axis);
}

GST_END_TEST;

/* The axis cache: an axis asked for again comes back as it was (no
 * rebuild), whatever was asked for in between, until more distinct axes
 * than the cache holds push out the least recently used one; a rebuilt
 * entry equals a freshly made axis. */
GST_START_TEST (test_resample_axis_cache)
{
  GstSpdlResampleAxisCache cache = { {{0}} };
  const GstSpdlResampleAxis *first, *axis;
  GstSpdlResampleAxis fresh;
  guint8 in[3 * 400 + 16], got[3 * 224], want[3 * 224];
  guint i, n = GST_SPDL_RESAMPLE_CACHED_AXES;

  for (i = 0; i < sizeof (in); i++)
    in[i] = (guint8) (i * 7 + i / 5);
  first = gst_spdl_resample_axis_cache_get (&cache, 10, 350, 1.46, 0.5, 224,
      256, FALSE, FALSE);
  /* a mark a rebuild would overwrite */
  first->first[0] = -12345;
  /* n - 1 other sizes, each asked for twice, then the first again: kept */
  for (i = 1; i < n; i++) {
    axis = gst_spdl_resample_axis_cache_get (&cache, 10, 350 - i, 1.46, 0.5,
        224, 256, FALSE, FALSE);
    fail_unless (axis != first);
    fail_unless (gst_spdl_resample_axis_cache_get (&cache, 10, 350 - i, 1.46,
            0.5, 224, 256, FALSE, FALSE) == axis);
  }
  axis = gst_spdl_resample_axis_cache_get (&cache, 10, 350, 1.46, 0.5, 224,
      256, FALSE, FALSE);
  fail_unless (axis == first && first->first[0] == -12345,
      "a cached axis was rebuilt");
  /* one more distinct axis: the least recently used (350 - 1) goes, the
   * first (just used) stays */
  axis = gst_spdl_resample_axis_cache_get (&cache, 10, 300, 1.3, 0.25, 200,
      230, TRUE, FALSE);
  fail_unless (axis != first && first->first[0] == -12345);
  gst_spdl_resample_axis_init_full (&fresh, 10, 300, 1.3, 0.25, 200, 230,
      TRUE, FALSE);
  gst_spdl_resample_row (axis, in, 0, 3, got);
  gst_spdl_resample_row (&fresh, in, 0, 3, want);
  fail_unless (memcmp (got, want, 3 * 200) == 0);
  gst_spdl_resample_axis_clear (&fresh);
  /* 350 - 1 was evicted: asking for it rebuilds the oldest (350 - 2) */
  axis = gst_spdl_resample_axis_cache_get (&cache, 10, 349, 1.46, 0.5, 224,
      256, FALSE, FALSE);
  fail_unless_equals_int (axis->made_from.clip_size, 349);
  for (i = 0; i < n; i++)
    fail_if (cache.axes[i].made_from.valid &&
        cache.axes[i].made_from.clip_size == 348, "LRU order not kept");
  first->first[0] = 0;
  gst_spdl_resample_axis_cache_clear (&cache);
  for (i = 0; i < n; i++)
    fail_unless (cache.axes[i].first == NULL && cache.last_used[i] == 0);

  /* huge axes (8000 outputs of 16 taps, over 2 MB each, two of them past
   * the bound): the cache keeps to its memory bound, but never drops the
   * two newest */
  for (i = 0; i < 2 * n; i++) {
    const GstSpdlResampleAxis *h, *v;
    guint k, held = 0;

    h = gst_spdl_resample_axis_cache_get (&cache, 0, 60000 + i, 7.5, 0.5,
        8000, 60000, FALSE, FALSE);
    v = gst_spdl_resample_axis_cache_get (&cache, 0, 61000 + i, 7.5, 0.5,
        8000, 61000, FALSE, FALSE);
    fail_unless (h != v && h->first != NULL && v->first != NULL);
    fail_unless_equals_int (h->made_from.clip_size, 60000 + i);
    fail_unless_equals_int (v->made_from.clip_size, 61000 + i);
    for (k = 0; k < n; k++)
      held += cache.axes[k].first != NULL;
    fail_unless (held == 2, "%u huge axes kept", held);
  }
  gst_spdl_resample_axis_cache_clear (&cache);
}

GST_END_TEST;

/* gst_spdl_resample_row() on a copy of the window the axis reads plus the
 * 16 bytes of slack its callers give, at the very end of its allocation,
 * into an output of exactly @n pixels followed by a canary: a read past
 * the slack (under valgrind) or a write past the row (always) fails. */
static void
resample_row_exactly (const GstSpdlResampleAxis * axis, const guint8 * in,
    guint8 * out, guint n)
{
  static const guint8 canary[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5,
    6, 7, 8, 9, 10, 11, 12
  };
  guint8 *window, *exact;
  gint x0, x1;

  fail_unless (gst_spdl_resample_axis_range (axis, &x0, &x1));
  window = g_malloc ((gsize) (x1 - x0) * 3 + 16);
  memcpy (window, in + x0 * 3, (gsize) (x1 - x0) * 3 + 16);
  exact = g_malloc ((gsize) n * 3 + sizeof (canary));
  memcpy (exact + n * 3, canary, sizeof (canary));
  gst_spdl_resample_row (axis, window, x0, 3, exact);
  fail_unless (memcmp (exact + n * 3, canary, sizeof (canary)) == 0,
      "%u taps: written past a row of %u pixels", axis->taps, n);
  memcpy (out, exact, (gsize) n * 3);
  g_free (exact);
  g_free (window);
}

/* Every row kernel (AVX2, SSE4.1, plain C) and both vertical passes (AVX2,
 * tap-major) give PIL's sums: the reference is the arithmetic itself over
 * the axis' weights, for windows of 1 to 8 taps, odd and even widths,
 * mirrored or not. */
GST_START_TEST (test_resample_kernels_agree)
{
  /* 2 to 16 taps: 1 to 4 groups of the AVX2 kernel, beyond it (17) */
  static const gdouble scales[] = { 0.6, 1.3, 1.466, 2.0, 2.7, 3.5, 4.4,
    4.8, 5.3, 7.3, 7.5, 8.2
  };
  static const guint widths[] = { 1, 2, 3, 5, 7, 9, 10, 17, 223, 224 };
  guint8 *in = g_malloc (3 * 2000 + 16), *out = g_malloc (3 * 224);
  guint8 *want = g_malloc (3 * 224);
  guint i, s, w, level, mismatches = 0;

  for (i = 0; i < 3 * 2000 + 16; i++)
    in[i] = (guint8) g_random_int ();
  for (level = 0; level <= 2; level++) {
    gst_spdl_resample_limit_simd (level);
    for (s = 0; s < G_N_ELEMENTS (scales); s++)
      for (w = 0; w < G_N_ELEMENTS (widths); w++)
        for (i = 0; i < 2; i++) {
          GstSpdlResampleAxis axis;
          guint clip = (guint) (widths[w] * scales[s] + 5), x, c;
          gint t;

          gst_spdl_resample_axis_init (&axis, 3, clip, scales[s], 0.25,
              widths[w], G_MAXINT64, i == 1);
          /* windows of 9 to 16 taps go through the AVX2 kernel too */
          if (level == 2 && __builtin_cpu_supports ("avx2") && axis.uniform
              && axis.taps > 8)
            fail_unless ((axis.split != NULL) == (axis.taps <= 16),
                "scale %.1f: %u taps", scales[s], axis.taps);
          resample_row_exactly (&axis, in, out, widths[w]);
          for (x = 0; x < widths[w]; x++)
            for (c = 0; c < 3; c++) {
              const gint32 *wt = axis.weights + x * axis.ksize;
              gint32 acc = axis.count[x] ? 1 << 21 : 0;

              for (t = 0; t < axis.count[x]; t++)
                acc += in[(axis.first[x] + t) * 3 + c] * wt[t];
              want[3 * x + c] = CLAMP (acc >> 22, 0, 255);
            }
          if (memcmp (out, want, 3 * widths[w]) != 0)
            mismatches++;
          gst_spdl_resample_axis_clear (&axis);
        }
    /* the vertical pass: rows of 37 bytes (SIMD and a tail) and 64 */
    for (s = 0; s < G_N_ELEMENTS (scales); s++)
      for (w = 0; w < G_N_ELEMENTS (widths); w++)
        for (i = 0; i < 2; i++) {
          GstSpdlResampleAxis axis;
          guint clip = (guint) (widths[w] * scales[s] + 5), r, x;
          gsize row_bytes = i ? 64 : 37;
          gint t;

          if ((clip + 3) * row_bytes > 3 * 2000)
            continue;
          gst_spdl_resample_axis_init (&axis, 3, clip, scales[s], 0.25,
              widths[w], G_MAXINT64, FALSE);
          for (r = 0; r < widths[w]; r++) {
            const gint32 *wt = axis.weights + r * axis.ksize;

            gst_spdl_resample_column (&axis, r, in, 0, row_bytes, row_bytes,
                out);
            for (x = 0; x < row_bytes; x++) {
              gint32 acc = axis.count[r] ? 1 << 21 : 0;

              for (t = 0; t < axis.count[r]; t++)
                acc += in[(axis.first[r] + t) * row_bytes + x] * wt[t];
              want[x] = CLAMP (acc >> 22, 0, 255);
            }
            if (memcmp (out, want, row_bytes) != 0)
              mismatches++;
          }
          gst_spdl_resample_axis_clear (&axis);
        }
  }
  gst_spdl_resample_limit_simd (2);
  fail_unless_equals_int (mismatches, 0);
  g_free (in);
  g_free (out);
  g_free (want);
}

GST_END_TEST;

/* The vertical pass as rows arrive (GstSpdlRowRing) writes PIL's sums of
 * the rows of each window (computed here tap by tap), into packed and
 * planar outputs, with padding rows at either end, and holds no more rows
 * than a window needs. */
GST_START_TEST (test_row_ring)
{
  /* clip start, clip size (input rows), scale, offset, out rows, virtual */
  const struct
  {
    gdouble start;
    guint size;
    gdouble scale, offset;
    guint out;
    gint64 virt;
  } axes[] = {
    {0, 375, 375.0 / 256, 16, 224, 256},        /* val: resize, crop */
    {40, 610, 610.0 / 224, 0, 224, 224},        /* strong downscale */
    {3, 1900, 1900.0 / 100, 0, 100, 100},       /* 41 taps: past AVX2 */
    {0, 90, 90.0 / 224, 0, 224, 224},   /* upscale */
    {0, 300, 1.25, -7, 224, 210},       /* padding at both ends */
    {5, 224, 1.0, 0, 224, 224}, /* identity */
  };
  const guint width = 37, row_bytes = 3 * width;
  gsize pstride;
  GstSpdlRowRing ring = { 0 };
  guint a;

  for (a = 0; a < G_N_ELEMENTS (axes); a++) {
    GstSpdlResampleAxis v;
    GstSpdlOutput packed, planar;
    guint8 *rows, *want, *got, *planes;
    gint y0, y1, y;
    guint r, x, c;

    gst_spdl_resample_axis_init (&v, axes[a].start, axes[a].size,
        axes[a].scale, axes[a].offset, axes[a].out, axes[a].virt, FALSE);
    fail_unless (gst_spdl_resample_axis_range (&v, &y0, &y1));
    rows = g_malloc ((gsize) (y1 - y0) * row_bytes);
    for (x = 0; x < (y1 - y0) * row_bytes; x++)
      rows[x] = g_random_int_range (0, 256);
    want = g_malloc ((gsize) v.out_size * row_bytes);
    for (r = 0; r < v.out_size; r++)
      for (x = 0; x < row_bytes; x++) {
        gint64 acc = 1 << (v.bits - 1);
        gint t;

        for (t = 0; t < v.count[r]; t++)
          acc += (gint64) rows[(v.first[r] + t - y0) * row_bytes + x] *
              v.weights[r * v.ksize + t];
        acc = v.count[r] ? acc >> v.bits : 0;
        want[r * row_bytes + x] = CLAMP (acc, 0, 255);
      }
    /* padding rows at the ends where the case has them */
    fail_unless (axes[a].offset >= 0 || v.count[0] == 0);
    fail_unless (axes[a].offset + axes[a].out <= axes[a].virt ||
        v.count[v.out_size - 1] == 0);

    /* packed, with 5 bytes of padding per row that must come out zero */
    got = g_malloc ((gsize) v.out_size * (row_bytes + 5));
    memset (got, 0xaa, v.out_size * (row_bytes + 5));
    gst_spdl_output_init_packed (&packed, got, row_bytes + 5);
    gst_spdl_row_ring_begin (&ring, &packed, &v, y0, row_bytes, 3);
    fail_unless (ring.capacity <= v.ksize, "axis %u: %u rows held, "
        "windows of %u", a, ring.capacity, v.ksize);
    for (y = y0; y < y1; y++) {
      /* some output row reads row y1 - 1 */
      fail_if (gst_spdl_row_ring_finish (&ring), "axis %u: done before row "
          "%d", a, y);
      memcpy (gst_spdl_row_ring_row (&ring, y), rows + (y - y0) * row_bytes,
          row_bytes);
      gst_spdl_row_ring_commit (&ring, y);
    }
    fail_unless (gst_spdl_row_ring_finish (&ring));
    for (r = 0; r < v.out_size; r++) {
      fail_unless (memcmp (got + r * (row_bytes + 5), want + r * row_bytes,
              row_bytes) == 0, "axis %u: output row %u differs", a, r);
      for (x = 0; x < 5; x++)
        fail_unless_equals_int (got[r * (row_bytes + 5) + row_bytes + x], 0);
    }

    /* planar: three planes, rows of width bytes and 3 of padding (our own
     * buffer's: zeroed) */
    pstride = width + 3;
    planes = g_malloc ((gsize) 3 * v.out_size * pstride);
    memset (planes, 0xaa, (gsize) 3 * v.out_size * pstride);
    memset (&planar, 0, sizeof (planar));
    planar.n_planes = 3;
    planar.zero_padding = TRUE;
    for (c = 0; c < 3; c++) {
      planar.data[c] = planes + (gsize) c * v.out_size * pstride;
      planar.stride[c] = pstride;
    }
    gst_spdl_row_ring_begin (&ring, &planar, &v, y0, row_bytes, 3);
    for (y = y0; y < y1; y++) {
      memcpy (gst_spdl_row_ring_row (&ring, y), rows + (y - y0) * row_bytes,
          row_bytes);
      gst_spdl_row_ring_commit (&ring, y);
    }
    fail_unless (gst_spdl_row_ring_finish (&ring));
    for (r = 0; r < v.out_size; r++)
      for (c = 0; c < 3; c++) {
        for (x = 0; x < width; x++)
          fail_unless_equals_int (planar.data[c][r * pstride + x],
              want[r * row_bytes + 3 * x + c]);
        for (; x < pstride; x++)
          fail_unless_equals_int (planar.data[c][r * pstride + x], 0);
      }

    g_free (rows);
    g_free (want);
    g_free (got);
    g_free (planes);
    gst_spdl_resample_axis_clear (&v);
  }
  gst_spdl_row_ring_clear (&ring);
}

GST_END_TEST;

/* A row of 600 RGB pixels (and 16 bytes of slack) and 600 rows of
 * @row_bytes: patterns without repeats the resize could hide */
static void
fill_resample_inputs (guint8 * in, guint8 * rows, guint row_bytes)
{
  guint i;

  for (i = 0; i < 3 * 600 + 16; i++)
    in[i] = (guint8) ((i * 7 + (i * i) / 13) & 0xff);
  for (i = 0; i < 600 * row_bytes; i++)
    rows[i] = (guint8) ((i * 11 + (i * i) / 29) & 0xff);
}

/* The fast (exact=false) axes against PIL's arithmetic. Where they are
 * used (no AVX2): 14-bit weights change a result by rounding only, at most
 * one level, in both passes and in every kernel (2 to 8 taps: pmaddwd
 * pairs; more: generic; mirrored). With AVX2 they are the exact axes: the
 * exact AVX2 kernels resample faster than the 14-bit SSE4.1 one
 * (bench/decode-bench: exact=false ran at 0.90x to 0.96x exact's rate on
 * ImageNet-sized JPEGs with it), so PIL's pixels come at no cost. */
GST_START_TEST (test_resample_fast_axis)
{
  const gdouble scales[] = { 0.5, 1.0, 1.3, 1.5, 2.0, 2.6, 3.4, 5.0 };
  const guint out_size = 100, row_bytes = 30;
  guint8 *in = g_malloc (3 * 600 + 16), *rows = g_malloc (600 * row_bytes);
  guint8 exact[3 * 100], fast[3 * 100];
  guint i, k, mirror, level, differ;

  fill_resample_inputs (in, rows, row_bytes);
  for (level = 1; level <= 2; level++) {
    /* level 1: as on a machine without AVX2 */
    gboolean avx2 = FALSE;

#ifdef HAVE_AVX2_KERNEL
    avx2 = level == 2 && gst_spdl_resample_have_avx2 ();
#endif
    if (level == 2 && !avx2)
      break;
    gst_spdl_resample_limit_simd (level);
    differ = 0;
    for (k = 0; k < G_N_ELEMENTS (scales); k++) {
      for (mirror = 0; mirror < 2; mirror++) {
        guint in_size = (guint) (out_size * scales[k]);
        GstSpdlResampleAxis a, b;

        gst_spdl_resample_axis_init (&a, 0, in_size, scales[k], 0, out_size,
            G_MAXINT64, mirror);
        gst_spdl_resample_axis_init_full (&b, 0, in_size, scales[k], 0,
            out_size, G_MAXINT64, mirror, TRUE);
        if (avx2)
          fail_unless (b.pairs == NULL && b.bits == a.bits &&
              (a.split == NULL) == (b.split == NULL), "scale %f: not the "
              "exact kernel with AVX2", scales[k]);
        else if (scales[k] > 1.0 && scales[k] < 3.0)
          fail_unless (b.pairs != NULL, "scale %f: no fast kernel",
              scales[k]);
        gst_spdl_resample_row (&a, in, 0, 3, exact);
        gst_spdl_resample_row (&b, in, 0, 3, fast);
        for (i = 0; i < 3 * out_size; i++) {
          fail_unless (ABS (exact[i] - fast[i]) <= 1, "scale %f mirror %u: "
              "byte %u is %u, PIL's %u", scales[k], mirror, i, fast[i],
              exact[i]);
          differ += exact[i] != fast[i];
        }
        for (i = 0; i < out_size; i++) {
          guint x;
          gst_spdl_resample_column (&a, i, rows, 0, row_bytes, row_bytes,
              exact);
          gst_spdl_resample_column (&b, i, rows, 0, row_bytes, row_bytes,
              fast);
          for (x = 0; x < row_bytes; x++) {
            fail_unless (ABS (exact[x] - fast[x]) <= 1, "scale %f: row %u "
                "byte %u is %u, PIL's %u", scales[k], i, x, fast[x],
                exact[x]);
            differ += exact[x] != fast[x];
          }
        }
        gst_spdl_resample_axis_clear (&a);
        gst_spdl_resample_axis_clear (&b);
      }
    }
    /* without AVX2 the fast weights are really in use; with it, none */
    if (avx2) {
      fail_unless_equals_int (differ, 0);
    } else {
      fail_unless (differ > 0);
    }
  }
  gst_spdl_resample_limit_simd (2);
  g_free (in);
  g_free (rows);
}

GST_END_TEST;

/* Mean absolute difference of two outputs of the same size */
static Suite *
spdlimage_suite (void)
{
  Suite *s = suite_create ("spdlimage");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_random_resized_crop_bounds);
  tcase_add_test (tc, test_resample_axis_reuse);
  tcase_add_test (tc, test_resample_kernels_agree);
  tcase_add_test (tc, test_resample_axis_update);
  tcase_add_test (tc, test_resample_axis_cache);
  tcase_add_test (tc, test_row_ring);
  tcase_add_test (tc, test_resample_fast_axis);
  return s;
}

SPDL_CHECK_MAIN (spdlimage);
