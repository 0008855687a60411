/* GStreamer SPDL plugin: unit tests of the COCO instances file reader
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

#include "gstspdlcoco.h"
#include "spdlcheckmain.h"

static GstSpdlCoco *
parse (const gchar * text, gboolean drop_empty, GError ** error)
{
  GBytes *bytes = g_bytes_new (text, strlen (text));
  GstSpdlCoco *coco = gst_spdl_coco_parse (bytes, "instances.json",
      drop_empty, error);

  g_bytes_unref (bytes);
  return coco;
}

static void
assert_objects (const GstSpdlCoco * coco, guint image, const gchar * want)
{
  gsize len;
  gchar *objects = gst_spdl_coco_get_objects (coco, image, &len);

  fail_unless_equals_string (objects, want);
  fail_unless_equals_int (len, strlen (want));
  g_free (objects);
}

/* The reasons' counts, in GstSpdlCocoReason order */
static void
assert_counts (const GstSpdlCoco * coco, guint64 unknown_image,
    guint64 duplicate_image, guint64 unknown_category, guint64 bad_annotation,
    guint64 bad_image)
{
  fail_unless_equals_uint64 (coco->counts[GST_SPDL_COCO_UNKNOWN_IMAGE],
      unknown_image);
  fail_unless_equals_uint64 (coco->counts[GST_SPDL_COCO_DUPLICATE_IMAGE],
      duplicate_image);
  fail_unless_equals_uint64 (coco->counts[GST_SPDL_COCO_UNKNOWN_CATEGORY],
      unknown_category);
  fail_unless_equals_uint64 (coco->counts[GST_SPDL_COCO_BAD_ANNOTATION],
      bad_annotation);
  fail_unless_equals_uint64 (coco->counts[GST_SPDL_COCO_BAD_IMAGE],
      bad_image);
}

/* Whether a warning holds every one of the NULL-terminated strings */
static gboolean
has_warning (const GstSpdlCoco * coco, ...)
{
  guint i;

  for (i = 0; i < coco->warnings->len; i++) {
    const gchar *w = g_ptr_array_index (coco->warnings, i), *s;
    gboolean all = TRUE;
    va_list args;

    va_start (args, coco);
    while ((s = va_arg (args, const gchar *)))
      all = all && strstr (w, s) != NULL;
    va_end (args);
    if (all)
      return TRUE;
  }
  return FALSE;
}

GST_START_TEST (test_images_by_id_annotations_in_file_order)
{
  /* images out of id order, annotations of several images interleaved */
  const gchar *text = "{\"info\": {\"year\": 2017},"
      "\"images\": [{\"id\": 30, \"file_name\": \"c.jpg\", \"width\": 4,"
      " \"height\": 3}, {\"id\": 7, \"file_name\": \"sub/a.jpg\"},"
      " {\"id\": 12, \"file_name\": \"b\\u00e9.jpg\"}],"
      "\"annotations\": [{\"id\": 1, \"image_id\": 30, \"bbox\": [1, 2, 3, 4],"
      " \"category_id\": 2}, {\"id\": 2, \"image_id\": 7, \"bbox\": [0.5,"
      " 0, 1, 1], \"category_id\": 1, \"segmentation\": [[0, 0, 1, 0, 1,"
      " 1]], \"iscrowd\": 0, \"area\": 0.5}, {\"id\": 3, \"image_id\": 30,"
      " \"bbox\": [0, 0, 1, 1], \"category_id\": 1, \"segmentation\":"
      " {\"counts\": [0, 12], \"size\": [3, 4]}, \"iscrowd\": 1}],"
      "\"categories\": [{\"id\": 1, \"name\": \"cat\"}, {\"id\": 2,"
      " \"name\": \"a dog\"}]}";
  GError *error = NULL;
  GstSpdlCoco *coco = parse (text, FALSE, &error);
  GstSpdlDataset *ds;

  fail_unless (coco != NULL, "%s", error ? error->message : "");
  fail_unless_equals_int (coco->n_images, 3);
  fail_unless_equals_int64 (coco->image_ids[0], 7);
  fail_unless_equals_int64 (coco->image_ids[1], 12);
  fail_unless_equals_int64 (coco->image_ids[2], 30);
  fail_unless_equals_string (gst_spdl_coco_get_file_name (coco, 0),
      "sub/a.jpg");
  fail_unless_equals_string (gst_spdl_coco_get_file_name (coco, 1),
      "b\xc3\xa9.jpg");
  fail_unless_equals_string (gst_spdl_coco_get_file_name (coco, 2), "c.jpg");
  fail_unless_equals_uint64 (coco->n_annotations, 3);
  /* compact: no white space outside strings ("a dog" is a category) */
  assert_objects (coco, 0, "[{\"id\":2,\"image_id\":7,\"bbox\":[0.5,0,1,1],"
      "\"category_id\":1,\"segmentation\":[[0,0,1,0,1,1]],\"iscrowd\":0,"
      "\"area\":0.5}]");
  assert_objects (coco, 1, "[]");
  assert_objects (coco, 2, "[{\"id\":1,\"image_id\":30,\"bbox\":[1,2,3,4],"
      "\"category_id\":2},{\"id\":3,\"image_id\":30,\"bbox\":[0,0,1,1],"
      "\"category_id\":1,\"segmentation\":{\"counts\":[0,12],\"size\":[3,4]},"
      "\"iscrowd\":1}]");
  assert_counts (coco, 0, 0, 0, 0, 0);
  fail_unless_equals_int (coco->warnings->len, 0);

  ds = gst_spdl_coco_to_dataset (coco, "/data/images");
  fail_unless_equals_int (ds->n_samples, 3);
  fail_unless_equals_string (gst_spdl_dataset_get_path (ds, 0), "sub/a.jpg");
  fail_unless_equals_int (ds->labels[0], -1);
  {
    gchar *full = gst_spdl_dataset_get_full_path (ds, 2);
    fail_unless_equals_string (full, "/data/images/c.jpg");
    g_free (full);
  }
  gst_spdl_dataset_free (ds);
  gst_spdl_coco_free (coco);
}

GST_END_TEST;

GST_START_TEST (test_strings_and_white_space_kept_inside_strings)
{
  /* pretty-printed as json.dump(indent=2) writes it; a string with spaces,
   * escaped quotes and a backslash stays as written */
  const gchar *text = "{\n  \"images\": [\n    {\n      \"id\": 1,\n"
      "      \"file_name\": \"x y.jpg\"\n    }\n  ],\n  \"annotations\": [\n"
      "    {\n      \"image_id\": 1,\n      \"note\": \"a \\\"b\\\" \\\\ c\","
      "\n      \"bbox\": [\n        1,\n        2\n      ]\n    }\n  ]\n}\n";
  GstSpdlCoco *coco = parse (text, FALSE, NULL);

  fail_unless (coco != NULL);
  fail_unless_equals_string (gst_spdl_coco_get_file_name (coco, 0),
      "x y.jpg");
  assert_objects (coco, 0, "[{\"image_id\":1,\"note\":\"a \\\"b\\\" \\\\ c\","
      "\"bbox\":[1,2]}]");
  gst_spdl_coco_free (coco);
}

GST_END_TEST;

GST_START_TEST (test_every_reason_counted_and_warned)
{
  const gchar *text = "{\"images\": ["
      "{\"id\": 5, \"file_name\": \"first.jpg\"},"
      "{\"id\": 2, \"file_name\": \"two.jpg\"},"
      "{\"id\": 5, \"file_name\": \"again.jpg\"},"  /* duplicate */
      "{\"id\": \"9\", \"file_name\": \"strid.jpg\"},"      /* bad image */
      "{\"id\": 10},"           /* bad image */
      "17],"                    /* bad image */
      "\"annotations\": ["
      "{\"id\": 100, \"image_id\": 5, \"category_id\": 1},"
      "{\"id\": 101, \"image_id\": 404, \"category_id\": 1},"       /* unknown image */
      "{\"id\": 102, \"image_id\": 2, \"category_id\": 99},"        /* unknown category */
      "{\"id\": 103, \"image_id\": 2},"   /* no category_id: unknown, kept */
      "[1, 2],"                 /* bad annotation */
      "{\"id\": 105, \"image_id\": \"2\"},"  /* bad annotation */
      "{\"id\": 106, \"image_id\": 2.5},"    /* bad annotation */
      "{\"id\": 107, \"image_id\": 5.0, \"category_id\": 1},"
      "{\"id\": 108}"           /* bad annotation */
      "], \"categories\": [{\"id\": 1}, {\"name\": \"no id\"}]}";
  GstSpdlCoco *coco = parse (text, FALSE, NULL);

  fail_unless (coco != NULL);
  fail_unless_equals_int (coco->n_images, 2);
  fail_unless_equals_int64 (coco->image_ids[0], 2);
  fail_unless_equals_int64 (coco->image_ids[1], 5);
  /* the first of a repeated id kept */
  fail_unless_equals_string (gst_spdl_coco_get_file_name (coco, 1),
      "first.jpg");
  /* unknown categories kept with their raw id, as torchvision keeps them;
   * 5.0 is image 5 as Python's dict finds it */
  assert_objects (coco, 0, "[{\"id\":102,\"image_id\":2,\"category_id\":99},"
      "{\"id\":103,\"image_id\":2}]");
  assert_objects (coco, 1, "[{\"id\":100,\"image_id\":5,\"category_id\":1},"
      "{\"id\":107,\"image_id\":5.0,\"category_id\":1}]");
  assert_counts (coco, 1, 1, 2, 4, 3);
  fail_unless (has_warning (coco, "instances.json", "annotation id 101",
          "image id 404", "unknown-image", NULL));
  fail_unless (has_warning (coco, "instances.json", "image id 5",
          "again.jpg", "first.jpg", "duplicate-image", NULL));
  fail_unless (has_warning (coco, "annotation id 102", "category_id 99",
          "unknown-category", NULL));
  fail_unless (has_warning (coco, "annotation id 103", "absent",
          "unknown-category", NULL));
  fail_unless (has_warning (coco, "annotation 4 ", "an array",
          "bad-annotation", NULL));
  fail_unless (has_warning (coco, "annotation id 105", "image_id",
          "bad-annotation", NULL));
  fail_unless (has_warning (coco, "annotation id 108", "bad-annotation",
          NULL));
  fail_unless (has_warning (coco, "image 3 ", "\"id\"", "bad-image", NULL));
  fail_unless (has_warning (coco, "image id 10", "file_name", "bad-image",
          NULL));
  fail_unless (has_warning (coco, "image 5 ", "a number", "bad-image", NULL));
  fail_unless_equals_int (coco->warnings->len, 11);
  gst_spdl_coco_free (coco);
}

GST_END_TEST;

GST_START_TEST (test_empty_images_dropped_when_asked)
{
  const gchar *text = "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\"},"
      "{\"id\": 2, \"file_name\": \"b.jpg\"}, {\"id\": 3, \"file_name\":"
      " \"c.jpg\"}], \"annotations\": [{\"image_id\": 3}, {\"image_id\": 1},"
      " {\"image_id\": 3}, {\"image_id\": 77}]}";
  GstSpdlCoco *coco = parse (text, TRUE, NULL);
  GError *error = NULL;

  fail_unless (coco != NULL);
  fail_unless_equals_int (coco->n_images, 2);
  fail_unless_equals_int64 (coco->image_ids[0], 1);
  fail_unless_equals_int64 (coco->image_ids[1], 3);
  assert_objects (coco, 0, "[{\"image_id\":1}]");
  assert_objects (coco, 1, "[{\"image_id\":3},{\"image_id\":3}]");
  /* no categories: none is unknown */
  assert_counts (coco, 1, 0, 0, 0, 0);
  gst_spdl_coco_free (coco);

  coco = parse (text, FALSE, NULL);
  fail_unless_equals_int (coco->n_images, 3);
  assert_objects (coco, 1, "[]");
  gst_spdl_coco_free (coco);

  /* no annotation at all: every image empty, or none left */
  coco = parse ("{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\"}]}",
      FALSE, NULL);
  fail_unless_equals_int (coco->n_images, 1);
  assert_objects (coco, 0, "[]");
  gst_spdl_coco_free (coco);
  fail_if (parse ("{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\"}],"
          "\"annotations\": []}", TRUE, &error));
  fail_unless (strstr (error->message, "instances.json") &&
      strstr (error->message, "no image has an annotation"), "%s",
      error->message);
  g_clear_error (&error);
}

GST_END_TEST;

GST_START_TEST (test_broken_and_truncated_refused_with_where)
{
  const gchar *good = "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\"}],"
      " \"annotations\": [{\"image_id\": 1, \"bbox\": [1, 2, 3, 4]}]}";
  static const struct
  {
    const gchar *text, *says;
  } bad[] = {
    {"", "not JSON"},
    {"{\"images\": [}", "not JSON"},
    {"{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\"}],}", "no string at byte 45"},
    {"[1, 2]", "an array, not an object"},
    {"{\"annotations\": []}", "no \"images\" array"},
    {"{\"images\": {}}", "\"images\" is an object"},
    {"{\"images\": [], \"annotations\": 3}", "\"annotations\" is a number"},
    {"{\"images\": [], \"categories\": \"x\"}", "\"categories\" is a string"},
    {"{\"images\": []}", "no image listed"},
    {"{\"images\": [{\"id\": 1}]}", "no image listed"},
  };
  GError *error = NULL;
  gsize i, len = strlen (good);

  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    fail_if (parse (bad[i].text, FALSE, &error), "%s", bad[i].text);
    fail_unless (error->domain == GST_RESOURCE_ERROR);
    fail_unless (strstr (error->message, "\"instances.json\"") &&
        strstr (error->message, bad[i].says), "%s: %s", bad[i].text,
        error->message);
    g_clear_error (&error);
  }
  /* cut anywhere: refused, saying where (the whole text is not copied) */
  for (i = 0; i < len; i++) {
    GBytes *cut = g_bytes_new (good, i);

    fail_if (gst_spdl_coco_parse (cut, "cut.json", FALSE, &error), "%"
        G_GSIZE_FORMAT, i);
    fail_unless (strstr (error->message, "cut.json") &&
        strstr (error->message, "byte"), "%s", error->message);
    g_clear_error (&error);
    g_bytes_unref (cut);
  }
}

GST_END_TEST;

GST_START_TEST (test_huge_counts_and_warnings_capped)
{
  /* 200000 images, 1000000 annotations of which 100000 name no image:
   * every one counted, 10 warnings kept */
  GString *text = g_string_new ("{\"images\": [");
  GstSpdlCoco *coco;
  GBytes *bytes;
  guint i, n_images = 200000;

  for (i = 0; i < n_images; i++)
    g_string_append_printf (text, "%s{\"id\":%u,\"file_name\":\"%u.jpg\"}",
        i ? "," : "", n_images - i, n_images - i);
  g_string_append (text, "],\"annotations\":[");
  for (i = 0; i < 5 * n_images; i++)
    g_string_append_printf (text, "%s{\"id\":%u,\"image_id\":%u}", i ? "," :
        "", i, i % 10 == 9 ? n_images + i : i % n_images + 1);
  g_string_append (text, "]}");
  bytes = g_bytes_new_take (text->str, text->len);
  g_string_free (text, FALSE);
  coco = gst_spdl_coco_parse (bytes, "big.json", FALSE, NULL);
  g_bytes_unref (bytes);
  fail_unless (coco != NULL);
  fail_unless_equals_int (coco->n_images, n_images);
  fail_unless_equals_int64 (coco->image_ids[0], 1);
  fail_unless_equals_int64 (coco->image_ids[n_images - 1], n_images);
  fail_unless_equals_uint64 (coco->n_annotations, 900000);
  assert_counts (coco, 100000, 0, 0, 0, 0);
  fail_unless_equals_int (coco->warnings->len,
      GST_SPDL_COCO_WARNINGS_PER_REASON);
  /* image 1's annotations: 0, 200000 (not 400000 + 9 ...) in file order */
  assert_objects (coco, 0, "[{\"id\":0,\"image_id\":1},"
      "{\"id\":200000,\"image_id\":1},{\"id\":400000,\"image_id\":1},"
      "{\"id\":600000,\"image_id\":1},{\"id\":800000,\"image_id\":1}]");
  fail_unless_equals_string (gst_spdl_coco_get_file_name (coco, 9), "10.jpg");
  gst_spdl_coco_free (coco);
}

GST_END_TEST;

GST_START_TEST (test_repeated_top_level_key_last_counts)
{
  /* as Python's json module reads it */
  GstSpdlCoco *coco = parse ("{\"images\": [{\"id\": 1, \"file_name\":"
      " \"old.jpg\"}], \"images\": [{\"id\": 2, \"file_name\": \"new.jpg\"}]}",
      FALSE, NULL);

  fail_unless (coco != NULL);
  fail_unless_equals_int (coco->n_images, 1);
  fail_unless_equals_string (gst_spdl_coco_get_file_name (coco, 0),
      "new.jpg");
  gst_spdl_coco_free (coco);
}

GST_END_TEST;

static Suite *
spdlcoco_suite (void)
{
  Suite *s = suite_create ("spdlcoco");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_images_by_id_annotations_in_file_order);
  tcase_add_test (tc, test_strings_and_white_space_kept_inside_strings);
  tcase_add_test (tc, test_every_reason_counted_and_warned);
  tcase_add_test (tc, test_empty_images_dropped_when_asked);
  tcase_add_test (tc, test_broken_and_truncated_refused_with_where);
  tcase_add_test (tc, test_huge_counts_and_warnings_capped);
  tcase_add_test (tc, test_repeated_top_level_key_last_counts);
  return s;
}

SPDL_CHECK_MAIN (spdlcoco);
