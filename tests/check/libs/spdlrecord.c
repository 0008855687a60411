/* GStreamer SPDL plugin: unit tests of the sample record and JSON checks
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

#include "gstspdljson.h"
#include "gstspdlmeta.h"
#include "gstspdlrecord.h"
#include "spdlcheckmain.h"

GST_START_TEST (test_parse_webdataset_spelling)
{
  GError *error = NULL;
  GstSpdlRecord *r = gst_spdl_record_parse ("jpg;png, txt,json,cls,"
      "seg.png:label:empty,score:float,emb.npy,x.bin:error",
      GST_SPDL_MISSING_SKIP, &error);
  gchar *text;

  fail_unless (r != NULL, "%s", error ? error->message : "");
  fail_unless_equals_int (r->n_fields, 8);
  fail_unless_equals_string (r->fields[0].name, "jpg;png");
  fail_unless_equals_string (r->fields[0].alternatives[1], "png");
  fail_unless_equals_int (r->fields[0].kind, GST_SPDL_FIELD_IMAGE);
  fail_unless_equals_int (r->fields[1].kind, GST_SPDL_FIELD_STRING);
  fail_unless_equals_int (r->fields[2].kind, GST_SPDL_FIELD_JSON);
  fail_unless_equals_int (r->fields[3].kind, GST_SPDL_FIELD_INT);
  fail_unless_equals_int (r->fields[4].kind, GST_SPDL_FIELD_LABEL);
  fail_unless_equals_int (r->fields[4].missing, GST_SPDL_MISSING_EMPTY);
  fail_unless_equals_int (r->fields[5].kind, GST_SPDL_FIELD_FLOAT);
  fail_unless_equals_int (r->fields[6].kind, GST_SPDL_FIELD_NPY);
  fail_unless_equals_int (r->fields[7].kind, GST_SPDL_FIELD_BYTES);
  fail_unless_equals_int (r->fields[7].missing, GST_SPDL_MISSING_ERROR);
  text = gst_spdl_record_to_string (r);
  fail_unless_equals_string (text, "jpg;png:image:skip,txt:string:skip,"
      "json:json:skip,cls:int:skip,seg.png:label:empty,score:float:skip,"
      "emb.npy:npy:skip,x.bin:bytes:error");
  gst_spdl_record_free (r);
  /* the canonical text reads back the same */
  r = gst_spdl_record_parse (text, GST_SPDL_MISSING_ERROR, NULL);
  fail_unless_equals_int (r->fields[4].missing, GST_SPDL_MISSING_EMPTY);
  fail_unless_equals_int (r->fields[0].missing, GST_SPDL_MISSING_SKIP);
  g_free (text);
  gst_spdl_record_free (r);

  for (const gchar ** bad = (const gchar *[]) {
  "txt,,json", "txt:strin", "txt:int:float", "txt,txt", ";png", ":int",
          NULL}; *bad; bad++) {
    r = gst_spdl_record_parse (*bad, GST_SPDL_MISSING_SKIP, &error);
    fail_unless (r == NULL, "%s parsed", *bad);
    fail_unless (error != NULL);
    g_clear_error (&error);
  }
  r = gst_spdl_record_parse ("", GST_SPDL_MISSING_SKIP, NULL);
  fail_unless_equals_int (r->n_fields, 0);
  gst_spdl_record_free (r);
}

GST_END_TEST;

static gboolean
value_ok (GstSpdlFieldKind kind, const gchar * data, gsize len, GValue * v)
{
  GError *error = NULL;
  gboolean ok = gst_spdl_field_value_from_data (v, kind,
      (const guint8 *) data, len, NULL, &error);

  if (!ok) {
    fail_unless (error != NULL && error->message[0] != '\0');
    g_error_free (error);
  }
  return ok;
}

GST_START_TEST (test_values_from_text)
{
  GValue v = G_VALUE_INIT;

  fail_unless (value_ok (GST_SPDL_FIELD_INT, " 42\n", 4, &v));
  fail_unless_equals_int64 (g_value_get_int64 (&v), 42);
  g_value_unset (&v);
  fail_unless (value_ok (GST_SPDL_FIELD_INT, "-9223372036854775808", 20, &v));
  fail_unless (g_value_get_int64 (&v) == G_MININT64);
  g_value_unset (&v);
  fail_if (value_ok (GST_SPDL_FIELD_INT, "9223372036854775808", 19, &v));
  fail_if (value_ok (GST_SPDL_FIELD_INT, "4 2", 3, &v));
  fail_if (value_ok (GST_SPDL_FIELD_INT, "4\0002", 3, &v));
  fail_if (value_ok (GST_SPDL_FIELD_INT, "", 0, &v));
  fail_if (value_ok (GST_SPDL_FIELD_INT, "1.5", 3, &v));
  fail_unless (value_ok (GST_SPDL_FIELD_FLOAT, "0.25", 4, &v));
  fail_unless (g_value_get_double (&v) == 0.25);
  g_value_unset (&v);
  fail_if (value_ok (GST_SPDL_FIELD_FLOAT, "1e999", 5, &v));
  /* a caption is kept whole: no cut, no strip */
  fail_unless (value_ok (GST_SPDL_FIELD_STRING, " a cat\n", 7, &v));
  fail_unless_equals_string (g_value_get_string (&v), " a cat\n");
  g_value_unset (&v);
  fail_unless (value_ok (GST_SPDL_FIELD_STRING, "\xc3\xa9t\xc3\xa9", 5, &v));
  g_value_unset (&v);
  fail_if (value_ok (GST_SPDL_FIELD_STRING, "\xff\xfe", 2, &v));
  fail_if (value_ok (GST_SPDL_FIELD_STRING, "a\0b", 3, &v));
  fail_unless (value_ok (GST_SPDL_FIELD_JSON, "{\"a\": [1, 2.5e3]}", 17,
          &v));
  g_value_unset (&v);
  fail_if (value_ok (GST_SPDL_FIELD_JSON, "{\"a\": [1, 2.5e3]", 16, &v));
  fail_unless (value_ok (GST_SPDL_FIELD_BYTES, "\0\1\2", 3, &v));
  fail_unless_equals_int (g_bytes_get_size (g_value_get_boxed (&v)), 3);
  g_value_unset (&v);

  gst_spdl_field_init_empty (&v, GST_SPDL_FIELD_FLOAT);
  fail_unless (isnan (g_value_get_double (&v)));
  g_value_unset (&v);
  gst_spdl_field_init_empty (&v, GST_SPDL_FIELD_INT);
  fail_unless_equals_int64 (g_value_get_int64 (&v), -1);
  g_value_unset (&v);
}

GST_END_TEST;

static gboolean
json_ok (const gchar * text)
{
  gchar *why = NULL;
  gboolean ok = gst_spdl_json_validate (text, strlen (text), &why);

  fail_unless (ok == (why == NULL));
  g_free (why);
  return ok;
}

GST_START_TEST (test_json_as_python_takes_it)
{
  gchar *deep, *why = NULL;
  guint i;

  for (const gchar ** good = (const gchar *[]) {
  "0", " -1.5e-3 ", "\"\\u00e9\\n\"", "[]", "{}", "[1,[2,{\"a\":null}]]",
          "{\"a\":1,\"a\":2}", "NaN", "-Infinity", "true", "[ false , null ]",
          "12345678901234567890123456789", NULL}; *good; good++)
    fail_unless (json_ok (*good), "%s refused", *good);
  for (const gchar ** bad = (const gchar *[]) {
  "", "[", "]", "{\"a\"}", "{a:1}", "[1,]", "01", "1.", "-", "\"\\x\"",
          "\"a\nb\"", "[1 2]", "tru", "nan", "{\"a\":1,}", "1 2", "\"abc",
          "\"\\u12\"", NULL}; *bad; bad++)
    fail_if (json_ok (*bad), "%s taken", *bad);

  /* deep nesting is refused by a rule, not by a crash */
  deep = g_malloc (100001);
  for (i = 0; i < 100000; i++)
    deep[i] = '[';
  deep[i] = '\0';
  fail_if (gst_spdl_json_validate (deep, strlen (deep), &why));
  fail_unless (strstr (why, "deeper") != NULL, "%s", why);
  g_free (why);
  g_free (deep);
  /* never past len */
  fail_unless (gst_spdl_json_validate ("[1]]", 3, NULL));
  fail_if (gst_spdl_json_validate ("\"ab\"", 3, NULL));
}

GST_END_TEST;

/* The value at @spec's path in @json: TRUE with @v set; FALSE with
 * @absent saying whether it is missing (else bad, with a message) */
static gboolean
path_value (const gchar * spec, const gchar * json, gsize len, GValue * v,
    gboolean * absent)
{
  GError *error = NULL;
  GstSpdlRecord *r = gst_spdl_record_parse (spec, GST_SPDL_MISSING_SKIP,
      &error);
  gboolean ok;

  fail_unless (r != NULL, "%s", error ? error->message : "");
  fail_unless (r->fields[0].path != NULL);
  ok = gst_spdl_field_value_at_path (v, &r->fields[0], (const guint8 *) json,
      len, absent, &error);
  if (!ok) {
    gchar *path = g_strjoinv (".", r->fields[0].path);

    fail_unless (error != NULL && error->message[0] != '\0');
    fail_unless (g_utf8_validate (error->message, -1, NULL));
    /* the message names the path */
    fail_unless (strstr (error->message, path), "%s", error->message);
    g_free (path);
    g_error_free (error);
  }
  gst_spdl_record_free (r);
  return ok;
}

#define DOC "\xEF\xBB\xBF{\"label\": 3, \"caption\": \"a \\\"dog\\\"\\u00e9\\ud83d\\ude00\", " \
  "\"meta\": {\"scores\": [0.5, 0.9 , -2E1], \"n\": null, \"deep\": [[1, " \
  "{\"x\": \"}]\"}]], \"k\\u0065y\": 7, \"dup\": 1, \"dup\": 2}, \"big\": " \
  "9223372036854775807, \"f\": 3.0, \"frac\": 3.5, \"huge\": 1e19, " \
  "\"nul\": \"a\\u0000b\", \"lone\": \"\\ud800x\", \"t\": true, " \
  "\"0\": \"zero\"}"

GST_START_TEST (test_json_path_values)
{
  GValue v = G_VALUE_INIT;
  gboolean absent;
  GstSpdlRecord *r;
  gchar *text;
  GError *error = NULL;

  /* parsing: the name keeps the path, the kind defaults to string */
  r = gst_spdl_record_parse ("jpg, json#label:int, json # caption, "
      "json;jsn#meta.scores.1:float:empty", GST_SPDL_MISSING_SKIP, &error);
  fail_unless (r != NULL, "%s", error ? error->message : "");
  fail_unless_equals_string (r->fields[1].name, "json#label");
  fail_unless_equals_string (r->fields[1].alternatives[0], "json");
  fail_unless (r->fields[1].alternatives[1] == NULL);
  fail_unless_equals_string (r->fields[1].path[0], "label");
  fail_unless_equals_int (r->fields[2].kind, GST_SPDL_FIELD_STRING);
  fail_unless_equals_string (r->fields[3].alternatives[1], "jsn");
  fail_unless_equals_string (r->fields[3].path[2], "1");
  fail_unless (r->fields[0].path == NULL);
  text = gst_spdl_record_to_string (r);
  fail_unless_equals_string (text, "jpg:image:skip,json#label:int:skip,"
      "json#caption:string:skip,json;jsn#meta.scores.1:float:empty");
  gst_spdl_record_free (r);
  r = gst_spdl_record_parse (text, GST_SPDL_MISSING_SKIP, NULL);
  fail_unless_equals_string (r->fields[3].path[1], "scores");
  gst_spdl_record_free (r);
  g_free (text);
  /* two paths into one member are two fields */
  r = gst_spdl_record_parse ("json#a,json#b,json", GST_SPDL_MISSING_SKIP,
      NULL);
  fail_unless_equals_int (r->n_fields, 3);
  gst_spdl_record_free (r);
  for (const gchar ** bad = (const gchar *[]) {
  "json#", "json#a..b", "json#a.", "json#a:npy", "json#a:image",
          "json#a:bytes", "json#a,json#a", "#a", NULL}; *bad; bad++) {
    r = gst_spdl_record_parse (*bad, GST_SPDL_MISSING_SKIP, &error);
    fail_unless (r == NULL, "%s parsed", *bad);
    g_clear_error (&error);
  }

  /* values, as json.loads (DOC)[...] gives them */
  fail_unless (path_value ("json#label:int", DOC, strlen (DOC), &v, &absent));
  fail_unless_equals_int64 (g_value_get_int64 (&v), 3);
  g_value_unset (&v);
  fail_unless (path_value ("json#caption", DOC, strlen (DOC), &v, &absent));
  fail_unless_equals_string (g_value_get_string (&v),
      "a \"dog\"\xc3\xa9\xf0\x9f\x98\x80");
  g_value_unset (&v);
  fail_unless (path_value ("json#meta.scores.1:float", DOC, strlen (DOC), &v,
          &absent));
  fail_unless (g_value_get_double (&v) == 0.9);
  g_value_unset (&v);
  fail_unless (path_value ("json#meta.scores.2:float", DOC, strlen (DOC), &v,
          &absent));
  fail_unless (g_value_get_double (&v) == -20.0);
  g_value_unset (&v);
  fail_unless (path_value ("json#meta.scores:json", DOC, strlen (DOC), &v,
          &absent));
  fail_unless_equals_string (g_value_get_string (&v), "[0.5, 0.9 , -2E1]");
  g_value_unset (&v);
  fail_unless (path_value ("json#meta.deep.0.1.x", DOC, strlen (DOC), &v,
          &absent));
  fail_unless_equals_string (g_value_get_string (&v), "}]");
  g_value_unset (&v);
  fail_unless (path_value ("json#meta.deep.0.1:json", DOC, strlen (DOC), &v,
          &absent));
  fail_unless_equals_string (g_value_get_string (&v), "{\"x\": \"}]\"}");
  g_value_unset (&v);
  fail_unless (path_value ("json#meta.key:int", DOC, strlen (DOC), &v,
          &absent));
  fail_unless_equals_int64 (g_value_get_int64 (&v), 7);
  g_value_unset (&v);
  fail_unless (path_value ("json#meta.dup:int", DOC, strlen (DOC), &v,
          &absent));
  fail_unless_equals_int64 (g_value_get_int64 (&v), 2);
  g_value_unset (&v);
  fail_unless (path_value ("json#big:int", DOC, strlen (DOC), &v, &absent));
  fail_unless (g_value_get_int64 (&v) == G_MAXINT64);
  g_value_unset (&v);
  fail_unless (path_value ("json#f:int", DOC, strlen (DOC), &v, &absent));
  fail_unless_equals_int64 (g_value_get_int64 (&v), 3);
  g_value_unset (&v);
  fail_unless (path_value ("json#label:float", DOC, strlen (DOC), &v,
          &absent));
  fail_unless (g_value_get_double (&v) == 3.0);
  g_value_unset (&v);
  fail_unless (path_value ("json#0", DOC, strlen (DOC), &v, &absent));
  fail_unless_equals_string (g_value_get_string (&v), "zero");
  g_value_unset (&v);
  fail_unless (path_value ("json#t:json", DOC, strlen (DOC), &v, &absent));
  fail_unless_equals_string (g_value_get_string (&v), "true");
  g_value_unset (&v);
  fail_unless (path_value ("json#x:json", "{}", 2, &v, &absent) == FALSE
      && absent);
  fail_unless (path_value ("json#0:float", " [NaN] ", 7, &v, &absent));
  fail_unless (isnan (g_value_get_double (&v)));
  g_value_unset (&v);

  /* absent: missing key, index past the end, null */
  for (const gchar ** spec = (const gchar *[]) {
  "json#nope", "json#meta.scores.3:float", "json#meta.n:int", "json#meta.n.x",
          "json#meta.nope.x", "json#meta.scores.99999999999999999999999",
          NULL}; *spec; spec++) {
    fail_if (path_value (*spec, DOC, strlen (DOC), &v, &absent), "%s", *spec);
    fail_unless (absent, "%s", *spec);
  }
  /* bad: wrong type, fraction, range, NUL, lone surrogate, not JSON */
  for (const gchar ** spec = (const gchar *[]) {
  "json#caption:int", "json#label", "json#frac:int", "json#huge:int",
          "json#caption:float", "json#t:int", "json#meta:string",
          "json#nul", "json#lone", "json#label.x", "json#meta.scores.x",
          "json#meta.scores.-1", NULL}; *spec; spec++) {
    fail_if (path_value (*spec, DOC, strlen (DOC), &v, &absent), "%s", *spec);
    fail_if (absent, "%s", *spec);
  }
  fail_if (path_value ("json#a", "{\"a\": 1", 7, &v, &absent) || absent);
  fail_if (path_value ("json#a", "{\"a\": \"\xff\"}", 10, &v, &absent)
      || absent);
  /* never past len: the text cut inside the value */
  fail_if (path_value ("json#a", "{\"a\": \"xyz\"}", 9, &v, &absent)
      || absent);
}

GST_END_TEST;

GST_START_TEST (test_json_path_deep_and_huge)
{
  GValue v = G_VALUE_INIT;
  gboolean absent;
  GString *s = g_string_new (NULL), *spec;
  guint i;

  /* 512 levels is the validator's bound; deeper is bad, not a crash */
  for (i = 0; i < 511; i++)
    g_string_append (s, "[");
  g_string_append (s, "\"in\"");
  for (i = 0; i < 511; i++)
    g_string_append (s, "]");
  spec = g_string_new ("json#0");
  for (i = 1; i < 511; i++)
    g_string_append (spec, ".0");
  fail_unless (path_value (spec->str, s->str, s->len, &v, &absent));
  fail_unless_equals_string (g_value_get_string (&v), "in");
  g_value_unset (&v);
  /* one level deeper than the document: into a string */
  g_string_append (spec, ".0");
  fail_if (path_value (spec->str, s->str, s->len, &v, &absent) || absent);
  g_string_free (spec, TRUE);
  g_string_truncate (s, 0);
  for (i = 0; i < 100000; i++)
    g_string_append (s, "[");
  fail_if (path_value ("json#0", s->str, s->len, &v, &absent) || absent);
  /* a large array: the last element found */
  g_string_assign (s, "{\"a\": [");
  for (i = 0; i < 200000; i++)
    g_string_append_printf (s, "%u,", i);
  g_string_append (s, "-1]}");
  fail_unless (path_value ("json#a.200000:int", s->str, s->len, &v,
          &absent));
  fail_unless_equals_int64 (g_value_get_int64 (&v), -1);
  g_value_unset (&v);
  fail_unless (path_value ("json#a.1234:int", s->str, s->len, &v, &absent));
  fail_unless_equals_int64 (g_value_get_int64 (&v), 1234);
  g_value_unset (&v);
  g_string_free (s, TRUE);
}

GST_END_TEST;

GST_START_TEST (test_record_on_buffer)
{
  GstBuffer *buf = gst_buffer_new (), *copy;
  GValue values[2] = { G_VALUE_INIT, G_VALUE_INIT }, v = G_VALUE_INIT;
  GstSpdlSampleGeometry g = { 10.5, 20, 100, 50.25, TRUE, 640, 480 }, got;

  gst_spdl_buffer_add_sample_meta (buf, 7, 3, 0, "a/b.jpg");
  fail_unless_equals_int (gst_spdl_buffer_get_record_size (buf), 0);
  g_value_init (&values[0], G_TYPE_STRING);
  g_value_set_string (&values[0], "a cat");
  g_value_init (&values[1], G_TYPE_BYTES);
  g_value_take_boxed (&values[1], g_bytes_new ("png", 3));
  gst_spdl_buffer_set_record (buf, values, 2);
  gst_spdl_buffer_set_sample_geometry (buf, &g);

  copy = gst_buffer_new ();
  fail_unless (gst_spdl_buffer_copy_sample_meta (copy, buf));
  fail_unless_equals_int (gst_spdl_buffer_get_record_size (copy), 2);
  fail_unless_equals_string (g_value_get_string
      (gst_spdl_buffer_get_record_value (copy, 0)), "a cat");
  g_value_init (&v, G_TYPE_INT64);
  g_value_set_int64 (&v, 5);
  fail_unless (gst_spdl_buffer_set_record_value (copy, 1, &v));
  fail_if (gst_spdl_buffer_set_record_value (copy, 2, &v));
  fail_unless_equals_int64 (g_value_get_int64
      (gst_spdl_buffer_get_record_value (copy, 1)), 5);
  /* the source keeps its own value */
  fail_unless (G_VALUE_HOLDS (gst_spdl_buffer_get_record_value (buf, 1),
          G_TYPE_BYTES));
  fail_unless (gst_spdl_buffer_get_record_value (copy, 2) == NULL);
  fail_unless (gst_spdl_buffer_get_sample_geometry (copy, &got));
  fail_unless (got.x == 10.5 && got.y == 20 && got.width == 100
      && got.height == 50.25 && got.flipped && got.source_width == 640
      && got.source_height == 480);

  g_value_unset (&v);
  g_value_unset (&values[0]);
  g_value_unset (&values[1]);
  gst_buffer_unref (copy);
  gst_buffer_unref (buf);
}

GST_END_TEST;

GST_START_TEST (test_record_in_caps)
{
  GstCaps *from = gst_caps_from_string ("image/jpeg, parsed=(boolean)true, "
      "fields=(string)\"txt:string:skip,seg.png:label:empty\"");
  GstCaps *to = gst_caps_new_empty_simple ("video/x-raw");
  GstSpdlRecord *r;

  gst_spdl_record_copy_caps_field (to, from);
  r = gst_spdl_record_from_caps (to);
  fail_unless (r != NULL);
  fail_unless_equals_int (r->n_fields, 2);
  fail_unless_equals_int (gst_spdl_record_find (r, "seg.png"), 1);
  fail_unless_equals_int (r->fields[1].kind, GST_SPDL_FIELD_LABEL);
  gst_spdl_record_free (r);
  gst_caps_unref (from);
  gst_caps_unref (to);
}

GST_END_TEST;

static Suite *
spdlrecord_suite (void)
{
  Suite *s = suite_create ("spdlrecord");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_parse_webdataset_spelling);
  tcase_add_test (tc, test_values_from_text);
  tcase_add_test (tc, test_json_as_python_takes_it);
  tcase_add_test (tc, test_json_path_values);
  tcase_add_test (tc, test_json_path_deep_and_huge);
  tcase_add_test (tc, test_record_on_buffer);
  tcase_add_test (tc, test_record_in_caps);
  return s;
}

SPDL_CHECK_MAIN (spdlrecord);
