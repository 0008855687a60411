/* GStreamer SPDL: COCO instance masks (polygons and RLE) as pycocotools
 * rasterizes them
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Detection models are trained and evaluated against pycocotools' masks:
 * a pixel more or less on an outline changes the IoU a mask AP counts.
 * So a polygon is rasterized by pycocotools' own rule (its outline traced
 * at 5x, the crossings of each pixel column kept, runs between them), in
 * the same integer and double arithmetic, and RLE strings are read as its
 * rleFrString reads them; what pycocotools reads out of bounds or leaves
 * undefined (a string ending inside a count, coordinates past int's range)
 * is refused instead. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlcocomask.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* pycocotools rasterizes at 5x */
#define UPSAMPLE 5

/* coordinates beyond this would overflow pycocotools' int at 5x */
#define MAX_COORDINATE 16777216.0

void
gst_spdl_rle_clear (GstSpdlRle * rle)
{
  g_clear_pointer (&rle->counts, g_free);
  rle->n_counts = 0;
}

static gint
compare_uint32 (gconstpointer a, gconstpointer b)
{
  guint32 c = *(const guint32 *) a, d = *(const guint32 *) b;

  return c > d ? 1 : c < d ? -1 : 0;
}

gboolean
gst_spdl_rle_from_polygon (GstSpdlRle * rle, const gdouble * xy,
    guint n_points, guint height, guint width, gchar ** why)
{
  gint *px, *py, *u, *v;
  guint32 *starts, *runs;
  guint64 n_outline = 0;
  guint j, m, k, n_starts;

  memset (rle, 0, sizeof (*rle));
  if (n_points < 3) {
    *why = g_strdup_printf ("a polygon of %u point%s (3 at least)", n_points,
        n_points == 1 ? "" : "s");
    return FALSE;
  }
  for (j = 0; j < 2 * n_points; j++)
    if (!isfinite (xy[j]) || fabs (xy[j]) > MAX_COORDINATE) {
      *why = g_strdup_printf ("a polygon coordinate %g out of range", xy[j]);
      return FALSE;
    }
  /* the outline's points at 5x, closed */
  px = g_new (gint, n_points + 1);
  py = g_new (gint, n_points + 1);
  for (j = 0; j < n_points; j++) {
    px[j] = (gint) (UPSAMPLE * xy[2 * j] + .5);
    py[j] = (gint) (UPSAMPLE * xy[2 * j + 1] + .5);
  }
  px[n_points] = px[0];
  py[n_points] = py[0];
  for (j = 0; j < n_points; j++)
    n_outline += MAX (ABS (px[j] - px[j + 1]), ABS (py[j] - py[j + 1])) + 1;
  if (n_outline > GST_SPDL_RLE_MAX_POLYGON_POINTS) {
    g_free (px);
    g_free (py);
    *why = g_strdup_printf ("a polygon whose outline has %" G_GUINT64_FORMAT
        " points at 5x (more than %" G_GUINT64_FORMAT ")", n_outline,
        GST_SPDL_RLE_MAX_POLYGON_POINTS);
    return FALSE;
  }
  /* every point along each edge, stepping along its longer axis, always
   * from the edge's start to its end */
  u = g_new (gint, n_outline);
  v = g_new (gint, n_outline);
  m = 0;
  for (j = 0; j < n_points; j++) {
    gint xs = px[j], xe = px[j + 1], ys = py[j], ye = py[j + 1];
    gint dx = ABS (xe - xs), dy = ABS (ys - ye), d, t;
    gboolean swap = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
    gdouble s;

    if (swap) {
      t = xs;
      xs = xe;
      xe = t;
      t = ys;
      ys = ye;
      ye = t;
    }
    if (dx >= dy) {
      /* a repeated point (dx = dy = 0): its one point, whose y is never
       * read (its neighbours share its x) */
      s = dx ? (gdouble) (ye - ys) / dx : 0.0;
      for (d = 0; d <= dx; d++) {
        t = swap ? dx - d : d;
        u[m] = t + xs;
        v[m] = (gint) (ys + s * t + .5);
        m++;
      }
    } else {
      s = (gdouble) (xe - xs) / dy;
      for (d = 0; d <= dy; d++) {
        t = swap ? dy - d : d;
        v[m] = t + ys;
        u[m] = (gint) (xs + s * t + .5);
        m++;
      }
    }
  }
  g_free (px);
  g_free (py);
  /* where the outline crosses a pixel column's centre, back at 1x: the
   * first row inside */
  starts = g_new (guint32, m + 1);
  n_starts = 0;
  for (j = 1; j < m; j++) {
    gdouble xd, yd;

    if (u[j] == u[j - 1])
      continue;
    xd = (gdouble) (u[j] < u[j - 1] ? u[j] : u[j] - 1);
    xd = (xd + .5) / UPSAMPLE - .5;
    if (floor (xd) != xd || xd < 0 || xd > (gdouble) width - 1)
      continue;
    yd = (gdouble) (v[j] < v[j - 1] ? v[j] : v[j - 1]);
    yd = (yd + .5) / UPSAMPLE - .5;
    if (yd < 0)
      yd = 0;
    else if (yd > height)
      yd = height;
    yd = ceil (yd);
    starts[n_starts++] = (guint32) ((gint) xd * (gint) height + (gint) yd);
  }
  g_free (u);
  g_free (v);
  /* the crossings in column-major order are the runs' edges; two at one
   * place cancel */
  starts[n_starts++] = height * width;
  qsort (starts, n_starts, sizeof (guint32), compare_uint32);
  {
    guint32 previous = 0;

    for (j = 0; j < n_starts; j++) {
      guint32 at = starts[j];

      starts[j] -= previous;
      previous = at;
    }
  }
  runs = g_new (guint32, n_starts);
  k = 0;
  j = 0;
  runs[k++] = starts[j++];
  while (j < n_starts) {
    if (starts[j] > 0) {
      runs[k++] = starts[j++];
    } else {
      j++;
      if (j < n_starts)
        runs[k - 1] += starts[j++];
    }
  }
  g_free (starts);
  rle->height = height;
  rle->width = width;
  rle->n_counts = k;
  rle->counts = runs;
  return TRUE;
}

static gboolean
check_sum (const GstSpdlRle * rle, gchar ** why)
{
  guint64 sum = 0, pixels = (guint64) rle->height * rle->width;
  guint j;

  for (j = 0; j < rle->n_counts; j++)
    sum += rle->counts[j];
  if (sum == pixels)
    return TRUE;
  *why = g_strdup_printf ("RLE counts sum to %" G_GUINT64_FORMAT ", not %ux%u"
      " = %" G_GUINT64_FORMAT, sum, rle->height, rle->width, pixels);
  return FALSE;
}

gboolean
gst_spdl_rle_from_string (GstSpdlRle * rle, const gchar * s, gsize len,
    guint height, guint width, gchar ** why)
{
  gsize p = 0;
  guint m = 0;

  memset (rle, 0, sizeof (*rle));
  rle->height = height;
  rle->width = width;
  rle->counts = g_new (guint32, len + 1);
  while (p < len) {
    gint64 x = 0;
    guint k = 0;
    gboolean more = TRUE;

    while (more) {
      gint c;

      if (p >= len) {
        *why = g_strdup ("an RLE string ending inside a count");
        goto failed;
      }
      if (s[p] < 48 || s[p] > 111) {
        *why = g_strdup_printf ("an RLE string with the character 0x%02x at "
            "%" G_GSIZE_FORMAT " (COCO's are '0' to 'o')", (guint8) s[p], p);
        goto failed;
      }
      /* 5 bits a character, 6 characters at most: 30 bits and the sign */
      if (k == 6) {
        *why = g_strdup_printf ("an RLE count longer than 6 characters at %"
            G_GSIZE_FORMAT, p);
        goto failed;
      }
      c = s[p] - 48;
      x |= (gint64) (c & 0x1f) << (5 * k);
      more = (c & 0x20) != 0;
      p++;
      k++;
      if (!more && (c & 0x10))
        x |= -((gint64) 1 << (5 * k));
    }
    if (m > 2)
      x += rle->counts[m - 2];
    if (x < 0 || x > G_MAXUINT32) {
      *why = g_strdup_printf ("an RLE count of %" G_GINT64_FORMAT " (run %u)",
          x, m);
      goto failed;
    }
    rle->counts[m++] = (guint32) x;
  }
  rle->n_counts = m;
  if (check_sum (rle, why))
    return TRUE;
failed:
  gst_spdl_rle_clear (rle);
  return FALSE;
}

gboolean
gst_spdl_rle_from_counts (GstSpdlRle * rle, const guint32 * counts,
    guint n_counts, guint height, guint width, gchar ** why)
{
  rle->height = height;
  rle->width = width;
  rle->n_counts = n_counts;
  rle->counts = g_memdup2 (counts, sizeof (guint32) * n_counts);
  if (check_sum (rle, why))
    return TRUE;
  gst_spdl_rle_clear (rle);
  return FALSE;
}

void
gst_spdl_rle_paint (const GstSpdlRle * rle, guint8 * mask)
{
  guint64 p = 0, end;
  guint h = rle->height, w = rle->width, j;

  for (j = 0; j < rle->n_counts; j++, p = end) {
    guint64 q;

    end = p + rle->counts[j];
    if (j % 2 == 0)
      continue;
    /* a run of ones down columns: row = p % h, column = p / h */
    for (q = p; q < end && q < (guint64) h * w; q++)
      mask[(q % h) * w + q / h] = 1;
  }
}
