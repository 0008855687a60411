/* GStreamer SPDL plugin: unit tests of COCO masks and detection targets
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The expected masks and boxes are pycocotools 2.0.11's and torchvision
 * 0.29's (tests/python/test_objects.py compares whole datasets). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <math.h>
#include <string.h>

#include "gstspdlcocomask.h"
#include "gstspdlgeometry.h"
#include "gstspdlobjects.h"
#include "spdlcheckmain.h"

/* pycocotools.mask.decode (frPyObjects ([[1.2, 0.7, 4.6, 1.1, 3.9, 4.4,
 * 0.6, 3.3]], 5, 6)[0]) */
static const guint8 polygon_mask[5][6] = {
  {0, 0, 0, 0, 0, 0},
  {0, 1, 1, 1, 1, 0},
  {0, 1, 1, 1, 0, 0},
  {0, 1, 1, 1, 0, 0},
  {0, 0, 0, 0, 0, 0},
};

/* pycocotools.mask.encode of this gives the counts "3420OM010O10O010O0" */
static const guint8 string_mask[5][6] = {
  {0, 1, 1, 0, 0, 0},
  {0, 1, 1, 1, 0, 0},
  {0, 0, 1, 1, 1, 1},
  {1, 0, 0, 0, 0, 0},
  {1, 1, 1, 1, 1, 1},
};

GST_START_TEST (test_polygon_as_pycocotools)
{
  const gdouble xy[] = { 1.2, 0.7, 4.6, 1.1, 3.9, 4.4, 0.6, 3.3 };
  guint8 mask[5 * 6] = { 0 };
  GstSpdlRle rle;
  gchar *why = NULL;

  fail_unless (gst_spdl_rle_from_polygon (&rle, xy, 4, 5, 6, &why), "%s",
      why);
  gst_spdl_rle_paint (&rle, mask);
  gst_spdl_rle_clear (&rle);
  fail_unless (memcmp (mask, polygon_mask, sizeof (mask)) == 0);

  /* fewer than 3 points, not finite, absurdly far: refused */
  fail_if (gst_spdl_rle_from_polygon (&rle, xy, 2, 5, 6, &why));
  fail_unless (strstr (why, "2 points") != NULL, "%s", why);
  g_free (why);
  {
    gdouble bad[] = { 1, 1, NAN, 2, 3, 3 };
    gdouble far[] = { 0, 0, 1e12, 0, 0, 5 };

    fail_if (gst_spdl_rle_from_polygon (&rle, bad, 3, 5, 6, &why));
    g_clear_pointer (&why, g_free);
    fail_if (gst_spdl_rle_from_polygon (&rle, far, 3, 5, 6, &why));
    g_clear_pointer (&why, g_free);
  }
}

GST_END_TEST;

GST_START_TEST (test_rle_string_as_pycocotools)
{
  const gchar *s = "3420OM010O10O010O0";
  guint8 mask[5 * 6] = { 0 };
  const guint32 bad_sum[] = { 5, 6, 7 };
  GstSpdlRle rle;
  gchar *why = NULL;

  fail_unless (gst_spdl_rle_from_string (&rle, s, strlen (s), 5, 6, &why),
      "%s", why);
  gst_spdl_rle_paint (&rle, mask);
  gst_spdl_rle_clear (&rle);
  fail_unless (memcmp (mask, string_mask, sizeof (mask)) == 0);

  /* counts that do not sum to H x W, characters outside COCO's, a string
   * ending inside a count */
  fail_if (gst_spdl_rle_from_string (&rle, s, strlen (s), 5, 7, &why));
  fail_unless (strstr (why, "sum to 30, not 5x7") != NULL, "%s", why);
  g_clear_pointer (&why, g_free);
  fail_if (gst_spdl_rle_from_string (&rle, "3\x7f", 2, 5, 6, &why));
  g_clear_pointer (&why, g_free);
  fail_if (gst_spdl_rle_from_string (&rle, "3420OM010O10O010Oo", 18, 5, 6,
          &why));
  fail_unless (strstr (why, "ending inside") != NULL, "%s", why);
  g_clear_pointer (&why, g_free);
  fail_if (gst_spdl_rle_from_counts (&rle, bad_sum, 3, 5, 6, &why));
  g_clear_pointer (&why, g_free);
}

GST_END_TEST;

static const gchar *two_boxes =
    "[{\"id\": 1, \"category_id\": 3, \"bbox\": [10.3, 20.1, 50.7, 30.2]},"
    " {\"id\": 2, \"category_id\": 9, \"iscrowd\": 1, \"area\": 12.5,"
    "  \"bbox\": [-5, 70, 20, 20]}]";

static void
check_box (const GstSpdlObjects * o, guint i, const gfloat * want)
{
  guint k;

  for (k = 0; k < 4; k++)
    fail_unless (o->boxes[4 * i + k] == want[k], "box %u[%u]: %a, not %a", i,
        k, o->boxes[4 * i + k], want[k]);
}

GST_START_TEST (test_boxes_through_geometry_as_torchvision)
{
  /* F.resized_crop (boxes, 0, 0, 80, 100, [48, 64]) */
  const gfloat stretch[2][4] = {
    {0x1.a5e354p+2, 0x1.81eb86p+3, 0x1.3851ecp+5, 0x1.e2e14ap+4},
    {0, 0x1.5p+5, 0x1.333332p+3, 0x1.8p+5},
  };
  /* F.center_crop (F.resize (boxes, [40]), [56, 56]): anchors -3, -8 */
  const gfloat center[2][4] = {
    {0x1.04ccccp+3, 0x1.20ccccp+4, 0x1.0cp+5, 0x1.093334p+5},
    {0x1p-1, 0x1.58p+5, 0x1.5p+3, 0x1.a8p+5},
  };
  GstSpdlDecodeParams params;
  GstSpdlGeometry geom;
  GstSpdlObjects o;
  gchar *why = NULL;

  gst_spdl_decode_params_init (&params);
  params.width = 64;
  params.height = 48;
  fail_unless (gst_spdl_geometry_compute (&geom, &params, 100, 80, 0, 0));
  fail_unless (gst_spdl_objects_parse (&o, two_boxes, strlen (two_boxes),
          100, 80, FALSE, &why), "%s", why);
  fail_unless_equals_int (o.n, 2);
  /* the second reaches past the image's left edge: warned, kept */
  fail_unless_equals_int (o.counts[GST_SPDL_OBJECTS_BOX_OUTSIDE_IMAGE], 1);
  fail_unless (strstr (o.warnings->str, "annotation 2: a box reaching past "
          "the image") != NULL, "%s", o.warnings->str);
  fail_unless_equals_int (o.labels[1], 9);
  fail_unless_equals_int (o.iscrowd[1], 1);
  fail_unless (o.area[1] == 12.5f);
  /* no area: the bbox's, as float32 w * h */
  fail_unless (o.area[0] == 50.7f * 30.2f);
  gst_spdl_objects_transform (&o, &geom);
  check_box (&o, 0, stretch[0]);
  check_box (&o, 1, stretch[1]);
  fail_unless_equals_int (o.width, 64);
  fail_unless_equals_int (o.height, 48);
  gst_spdl_objects_clear (&o);

  params.mode = GST_SPDL_RESIZE_CENTER_CROP;
  params.resize_shorter = 40;
  params.width = params.height = 56;
  fail_unless (gst_spdl_geometry_compute (&geom, &params, 100, 80, 0, 0));
  fail_unless (gst_spdl_objects_parse (&o, two_boxes, strlen (two_boxes),
          100, 80, FALSE, &why), "%s", why);
  gst_spdl_objects_transform (&o, &geom);
  check_box (&o, 0, center[0]);
  check_box (&o, 1, center[1]);
  gst_spdl_objects_clear (&o);
}

GST_END_TEST;

GST_START_TEST (test_letterbox_boxes_follow_the_image)
{
  /* 100x77 into 64x64: resized to 64x49, 15 rows of padding, 7 above
   * (ultralytics' round (7.5 - 0.1)), where torchvision's center_crop
   * anchor would be round (-7.5) = -8 */
  static const gchar *box = "[{\"category_id\": 1, "
      "\"bbox\": [10, 20, 50, 30]}]";
  GstSpdlDecodeParams params;
  GstSpdlGeometry geom;
  GstSpdlObjects o;
  gchar *why = NULL;
  gfloat ry = (gfloat) (49.0 / 77), want[4];

  gst_spdl_decode_params_init (&params);
  params.mode = GST_SPDL_RESIZE_LETTERBOX;
  params.width = params.height = 64;
  fail_unless (gst_spdl_geometry_compute (&geom, &params, 100, 77, 0, 0));
  fail_unless_equals_int ((gint) geom.offset_y, -7);
  fail_unless (gst_spdl_objects_parse (&o, box, strlen (box), 100, 77, FALSE,
          &why), "%s", why);
  gst_spdl_objects_transform (&o, &geom);
  want[0] = 10 * 0.64f;
  want[1] = 20 * ry + 7;
  want[2] = 60 * 0.64f;
  want[3] = 50 * ry + 7;
  check_box (&o, 0, want);
  gst_spdl_objects_clear (&o);
}

GST_END_TEST;

/* The whole image at its size, flipped */
static void
flip_geometry (GstSpdlGeometry * geom, guint width, guint height)
{
  memset (geom, 0, sizeof (*geom));
  geom->out_width = geom->clip_width = width;
  geom->out_height = geom->clip_height = height;
  geom->virtual_width = geom->virtual_height = G_MAXINT64;
  geom->flip = TRUE;
}

GST_START_TEST (test_flip_and_sanitize)
{
  const gchar *text = "{\"annotations\": ["
      "{\"category_id\": 1, \"bbox\": [0, 0, 10, 10]},"
      "{\"category_id\": 2, \"bbox\": [10, 0, 10, 10]},"
      "{\"category_id\": 3, \"bbox\": [3, 3, 0.9, 5]},"
      "{\"category_id\": 4, \"bbox\": [3, 3, 1, 0.99]},"
      "{\"category_id\": 5, \"bbox\": [3, 3, -2, 4]}]}";
  const gfloat first[4] = { 10, 0, 20, 10 }, second[4] = { 0, 0, 10, 10 };
  GstSpdlGeometry geom;
  GstSpdlObjects o;
  gchar *why = NULL;

  flip_geometry (&geom, 20, 20);
  fail_unless (gst_spdl_objects_parse (&o, text, strlen (text), 20, 20, FALSE,
          &why), "%s", why);
  fail_unless_equals_int (o.n, 5);
  fail_unless_equals_int (o.counts[GST_SPDL_OBJECTS_BOX_EMPTY], 1);
  gst_spdl_objects_transform (&o, &geom);
  /* x1' = -(x2 - W): torch's -0.0 where x2 = W */
  check_box (&o, 0, first);
  check_box (&o, 1, second);
  fail_unless (signbit (o.boxes[4]));
  /* narrower than 1, lower than 1 with an area under 1, empty */
  gst_spdl_objects_sanitize (&o, 1.0, 1.0);
  fail_unless_equals_int (o.n, 2);
  fail_unless_equals_int (o.labels[0], 1);
  fail_unless_equals_int (o.labels[1], 2);
  fail_unless_equals_int (o.counts[GST_SPDL_OBJECTS_SANITIZED], 3);
  gst_spdl_objects_clear (&o);

  /* both 0: nothing removed, even the empty box */
  fail_unless (gst_spdl_objects_parse (&o, text, strlen (text), 20, 20, FALSE,
          &why), "%s", why);
  gst_spdl_objects_sanitize (&o, 0, 0);
  fail_unless_equals_int (o.n, 5);
  gst_spdl_objects_clear (&o);
}

GST_END_TEST;

GST_START_TEST (test_bad_annotations_counted)
{
  const gchar *text = "[{\"id\": 1, \"category_id\": 1, \"bbox\": [0,0,4,4],"
      " \"segmentation\": [[0,0,4,0,4,4]]},"
      "{\"id\": 2, \"category_id\": 1, \"bbox\": [0,0,4]},"
      "{\"id\": 3, \"category_id\": 1.5, \"bbox\": [0,0,4,4]},"
      "{\"id\": 4, \"category_id\": 1, \"bbox\": [0,0,4,4],"
      " \"segmentation\": {\"size\": [6, 5], \"counts\": [30]}},"
      "{\"id\": 5, \"category_id\": 1, \"bbox\": [0,0,4,4]},"
      "{\"id\": 6, \"category_id\": 1, \"bbox\": [0,0,4,Infinity],"
      " \"segmentation\": [[0,0,4,0,4,4]]},"
      "{\"id\": 7, \"category_id\": 1, \"bbox\": [0,0,4,4],"
      " \"segmentation\": []},"
      "7]";
  GstSpdlObjects o;
  gchar *why = NULL;

  fail_unless (gst_spdl_objects_parse (&o, text, strlen (text), 6, 5, TRUE,
          &why), "%s", why);
  fail_unless_equals_int (o.n, 1);
  fail_unless_equals_int (o.counts[GST_SPDL_OBJECTS_BAD_ANNOTATION], 7);
  fail_unless (strstr (o.warnings->str, "annotation 4: an RLE of size 6x5 "
          "(height x width) on a 5x6 image") != NULL, "%s", o.warnings->str);
  fail_unless (strstr (o.warnings->str, "annotation 5: no \"segmentation\"")
      != NULL, "%s", o.warnings->str);
  gst_spdl_objects_clear (&o);

  /* what is no list of annotations at all is the field's fault */
  fail_if (gst_spdl_objects_parse (&o, "{\"annotations\": {}}", 19, 6, 5,
          FALSE, &why));
  fail_unless (strstr (why, "not an array") != NULL, "%s", why);
  g_clear_pointer (&why, g_free);
  /* an object without "annotations" (another member: a classification
   * json, a misnamed key) is no image without objects */
  fail_if (gst_spdl_objects_parse (&o, "{\"label\": 3}", 12, 6, 5, FALSE,
          &why));
  fail_unless (strstr (why, "without \"annotations\"") != NULL, "%s", why);
  g_clear_pointer (&why, g_free);
  /* "annotations": null is none, said so */
  fail_unless (gst_spdl_objects_parse (&o, "{\"annotations\": null}", 21, 6,
          5, FALSE, &why));
  fail_unless_equals_int (o.n, 0);
  gst_spdl_objects_clear (&o);
  fail_if (gst_spdl_objects_parse (&o, "[{\"bbox\": [1,", 13, 6, 5, FALSE,
          &why));
  g_clear_pointer (&why, g_free);
  /* a key holding \u0000 is another key, as in Python */
  {
    const gchar *nul = "[{\"category_id\": 1, \"bbox\\u0000\": [0,0,1,1]}]";

    fail_unless (gst_spdl_objects_parse (&o, nul, strlen (nul), 6, 5, FALSE,
            &why));
    fail_unless_equals_int (o.n, 0);
    fail_unless_equals_int (o.counts[GST_SPDL_OBJECTS_BAD_ANNOTATION], 1);
    gst_spdl_objects_clear (&o);
  }
  /* a thousand bad ones: all counted, the warning stays short */
  {
    GString *many = g_string_new ("[");
    guint i;

    for (i = 0; i < 1000; i++)
      g_string_append (many, i ? ", 5" : "5");
    g_string_append_c (many, ']');
    fail_unless (gst_spdl_objects_parse (&o, many->str, many->len, 6, 5,
            FALSE, &why));
    fail_unless_equals_int (o.counts[GST_SPDL_OBJECTS_BAD_ANNOTATION], 1000);
    fail_unless (o.warnings->len < 2200);
    fail_unless (g_str_has_suffix (o.warnings->str, "; ..."));
    gst_spdl_objects_clear (&o);
    g_string_free (many, TRUE);
  }
  /* an object of other members is no image without objects */
  fail_if (gst_spdl_objects_parse (&o, "{\"images\": []}", 14, 6, 5,
          TRUE, &why));
  g_clear_pointer (&why, g_free);
}

GST_END_TEST;

GST_START_TEST (test_masks_follow_their_boxes)
{
  /* the polygon of test_polygon_as_pycocotools, a sliver sanitizing
   * drops, and the RLE of test_rle_string_as_pycocotools */
  const gchar *text = "["
      "{\"category_id\": 1, \"bbox\": [0.6, 0.7, 4, 3.7],"
      " \"segmentation\": [[1.2, 0.7, 4.6, 1.1, 3.9, 4.4, 0.6, 3.3]]},"
      "{\"category_id\": 2, \"bbox\": [1, 1, 0.5, 3],"
      " \"segmentation\": [[1, 1, 1.5, 1, 1.5, 4]]},"
      "{\"category_id\": 3, \"iscrowd\": 1, \"bbox\": [0, 0, 6, 5],"
      " \"segmentation\": {\"size\": [5, 6], \"counts\": "
      "\"3420OM010O10O010O0\"}}]";
  GstSpdlGeometry geom;
  GstSpdlObjects o;
  gchar *why = NULL;
  guint x, y;

  flip_geometry (&geom, 6, 5);
  fail_unless (gst_spdl_objects_parse (&o, text, strlen (text), 6, 5, TRUE,
          &why), "%s", why);
  fail_unless_equals_int (o.n, 3);
  gst_spdl_objects_transform (&o, &geom);
  gst_spdl_objects_sanitize (&o, 1.0, 1.0);
  /* 2 masks of 6x5 are 60 bytes: one less is refused, nothing made */
  fail_if (gst_spdl_objects_rasterize (&o, 59, &why));
  fail_unless (strstr (why, "max-masks-size=59") != NULL, "%s", why);
  fail_unless (o.masks == NULL);
  g_clear_pointer (&why, g_free);
  fail_unless (gst_spdl_objects_rasterize (&o, 60, &why), "%s", why);
  fail_unless_equals_int (o.n, 2);
  fail_unless_equals_int (o.labels[1], 3);
  for (y = 0; y < 5; y++)
    for (x = 0; x < 6; x++) {
      fail_unless_equals_int (o.masks[y * 6 + x], polygon_mask[y][5 - x]);
      fail_unless_equals_int (o.masks[30 + y * 6 + x], string_mask[y][5 - x]);
    }
  gst_spdl_objects_clear (&o);
}

GST_END_TEST;

static Suite *
spdlobjects_suite (void)
{
  Suite *s = suite_create ("spdlobjects");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_polygon_as_pycocotools);
  tcase_add_test (tc, test_rle_string_as_pycocotools);
  tcase_add_test (tc, test_boxes_through_geometry_as_torchvision);
  tcase_add_test (tc, test_letterbox_boxes_follow_the_image);
  tcase_add_test (tc, test_flip_and_sanitize);
  tcase_add_test (tc, test_bad_annotations_counted);
  tcase_add_test (tc, test_masks_follow_their_boxes);
  return s;
}

SPDL_CHECK_MAIN (spdlobjects);
