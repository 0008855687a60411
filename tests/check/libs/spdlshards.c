/* gst-spdl: unit tests of shard locations, index files and epoch plans
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

#include "gstspdlorder.h"
#include "gstspdlerrors.h"
#include "gstspdlshardindex.h"
#include "gstspdlshardlearn.h"
#include "gstspdlshards.h"
#include "spdlcheckmain.h"

GST_START_TEST (test_shards_expand)
{
  GError *error = NULL;
  GStrv names = gst_spdl_shards_expand ("/d/t-{000008..000011}.tar", &error);

  g_assert_no_error (error);
  fail_unless_equals_int (g_strv_length (names), 4);
  fail_unless_equals_string (names[0], "/d/t-000008.tar");
  fail_unless_equals_string (names[3], "/d/t-000011.tar");
  g_strfreev (names);

  names = gst_spdl_shards_expand ("s3://b/{0..1}/p-{8..10}.tar", &error);
  g_assert_no_error (error);
  fail_unless_equals_int (g_strv_length (names), 6);
  fail_unless_equals_string (names[2], "s3://b/0/p-10.tar");
  fail_unless_equals_string (names[3], "s3://b/1/p-8.tar");
  g_strfreev (names);

  fail_if (gst_spdl_shards_expand ("/d/{3..1}.tar", &error));
  fail_unless (error && strstr (error->message, "brace range"));
  g_clear_error (&error);
  fail_if (gst_spdl_shards_expand ("/d/{a..b}.tar", &error));
  g_clear_error (&error);
  fail_if (gst_spdl_shards_expand ("/d/{0..99999999999}.tar", &error));
  g_clear_error (&error);
  /* too many names fail before any is made: each range and their product */
  fail_if (gst_spdl_shards_expand ("/d/{0..999999999}.tar", &error));
  fail_unless (error && strstr (error->message, "more than 1000000 shards"));
  g_clear_error (&error);
  fail_if (gst_spdl_shards_expand ("/d/{0..9999}/{0..9999}.tar", &error));
  fail_unless (error && strstr (error->message, "more than 1000000 shards"));
  g_clear_error (&error);
  fail_if (gst_spdl_shards_expand ("/d/{0..1}/{x}.tar", &error));
  fail_unless (error && strstr (error->message, "brace range"));
  g_clear_error (&error);
}

GST_END_TEST;

/* Every rank the same count; together each sample once (drop) or all
 * samples with the fewest repeats (wrap). */
GST_START_TEST (test_shards_plan)
{
  guint64 counts[] = { 7, 0, 10, 3, 10, 1 };
  guint32 order[] = { 4, 1, 0, 5, 3, 2 };
  guint64 total = 31;
  guint world, rank, drop;

  for (drop = 0; drop < 2; drop++) {
    for (world = 1; world <= 9; world++) {
      guint64 per = drop ? total / world : (total + world - 1) / world;
      guint seen[6][10] = { {0,}, };
      guint64 n_seen = 0;
      for (rank = 0; rank < world; rank++) {
        GArray *plan = gst_spdl_order_contiguous_plan (counts, 6, order,
            rank, world, drop);
        guint64 n = 0;
        guint i, j;
        for (i = 0; i < plan->len; i += 3) {
          guint64 *t = &g_array_index (plan, guint64, i);
          fail_unless (t[1] + t[2] <= counts[t[0]]);
          for (j = 0; j < t[2]; j++)
            seen[t[0]][t[1] + j]++;
          n += t[2];
        }
        fail_unless_equals_int (n, per);
        n_seen += n;
        g_array_unref (plan);
      }
      {
        guint s, j, max = 0, missing = 0;
        for (s = 0; s < 6; s++)
          for (j = 0; j < counts[s]; j++) {
            max = MAX (max, seen[s][j]);
            missing += seen[s][j] == 0;
          }
        fail_unless (max <= 2);
        fail_unless_equals_int (missing, drop ? total - n_seen : 0);
      }
    }
  }
}

GST_END_TEST;

/* shards.idx: names to counts; comments and blank lines passed over; a
 * bad line is an error naming the file and the line */
GST_START_TEST (test_shard_index_counts)
{
  GHashTable *index;
  GError *error = NULL;
  guint64 *count;

  index = gst_spdl_shard_index_parse_counts ("# made by make-shards\n"
      "t-00.tar\t4\n\nt-01.tar\t3\r\n", "dir/shards.idx", &error);
  fail_unless (index != NULL);
  fail_unless_equals_int (g_hash_table_size (index), 2);
  count = g_hash_table_lookup (index, "t-00.tar");
  fail_unless (count != NULL);
  fail_unless_equals_uint64 (*count, 4);
  count = g_hash_table_lookup (index, "t-01.tar");
  fail_unless (count != NULL);
  fail_unless_equals_uint64 (*count, 3);
  g_hash_table_unref (index);

  index = gst_spdl_shard_index_parse_counts ("t-00.tar\t4\nt-01.tar 3\n",
      "dir/shards.idx", &error);
  fail_unless (index == NULL);
  fail_unless (error != NULL);
  fail_unless (strstr (error->message, "dir/shards.idx") != NULL);
  fail_unless (strstr (error->message, "line 2") != NULL, "%s",
      error->message);
  g_clear_error (&error);
}

GST_END_TEST;

/* shards.members: each shard's line, then its members' byte ranges and
 * labels; counts that disagree with the shard's line are errors */
GST_START_TEST (test_shard_index_members)
{
  static const gchar good[] = "t-00.tar\t2\n"
      "\t512\t100\t3\tk0.jpg\n"
      "\t1536\t7\t-1\tsub/k\\t1.jpg\n"
      "# comment\n" "t-01.tar\t1\n" "\t512\t9\t0\tk2\\\\.png\n";
  static const struct
  {
    const gchar *text;
    const gchar *why;
  } bad[] = {
    {"\t512\t100\t3\tk0.jpg\n", "before its shard"},
    {"t-00.tar\t1\n\t512\t100\tx\tk0.jpg\n", "expected <TAB>OFFSET"},
    {"t-00.tar\t1\n\t100\t100\t1\tk0.jpg\n", "expected <TAB>OFFSET"},
    {"t-00.tar\t1\n\t512\t1\t1\ta\n\t1024\t1\t1\tb\n", "more members"},
    {"t-00.tar\t2\n\t512\t1\t1\ta\nt-01.tar\t0\n", "fewer members"},
    {"t-00.tar\t2\n\t512\t1\t1\ta\n", "fewer members"},
    {"t-00.tar\n", "expected NAME<TAB>SAMPLES"},
    /* an escape cut short (g_strcompress() would warn) */
    {"t-00.tar\t1\n\t512\t1\t1\tk\\\\\\\n", "expected <TAB>OFFSET"},
  };
  gchar *text = g_strdup (good);
  GArray *members = g_array_new (FALSE, FALSE, sizeof (GstSpdlShardMember));
  GHashTable *found = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  GError *error = NULL;
  GstSpdlShardMember *m;
  guint64 *range;
  guint i;

  fail_unless (gst_spdl_shard_index_parse_members (text, "shards.members",
          members, found, &error));
  fail_unless_equals_int (members->len, 3);
  m = &g_array_index (members, GstSpdlShardMember, 0);
  fail_unless_equals_uint64 (m->offset, 512);
  fail_unless_equals_uint64 (m->size, 100);
  fail_unless_equals_int (m->label, 3);
  fail_unless_equals_string (m->name, "k0.jpg");
  m = &g_array_index (members, GstSpdlShardMember, 1);
  fail_unless_equals_int (m->label, -1);
  fail_unless_equals_string (m->name, "sub/k\t1.jpg");
  /* an escaped backslash */
  m = &g_array_index (members, GstSpdlShardMember, 2);
  fail_unless_equals_string (m->name, "k2\\.png");
  range = g_hash_table_lookup (found, "t-01.tar");
  fail_unless (range != NULL);
  fail_unless_equals_uint64 (range[0], 2);
  fail_unless_equals_uint64 (range[2], 1);
  g_hash_table_remove_all (found);
  g_array_set_size (members, 0);
  g_free (text);

  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    text = g_strdup (bad[i].text);
    fail_if (gst_spdl_shard_index_parse_members (text, "shards.members",
            members, found, &error), "case %u parsed", i);
    fail_unless (error != NULL);
    fail_unless (strstr (error->message, bad[i].why) != NULL,
        "case %u: %s", i, error->message);
    fail_unless (strstr (error->message, "shards.members") != NULL);
    g_clear_error (&error);
    g_hash_table_remove_all (found);
    g_array_set_size (members, 0);
    g_free (text);
  }
  g_hash_table_unref (found);
  g_array_unref (members);
}

GST_END_TEST;

/* WebDataset's rules the reader and the learned index share, and the
 * escaping of names in shards.members */
GST_START_TEST (test_shard_index_rules)
{
  static const struct
  {
    const gchar *text;
    gint label;                 /* -1: no label */
  } labels[] = {
    {"7", 7}, {" 12\n", 12}, {"2147483647", G_MAXINT}, {"-3", -1},
    {"+2", -1}, {"2.5", -1}, {"", -1}, {"2147483648", -1}, {"cat", -1},
  };
  static const gchar *const names[] = { "a/b.jpg", "t\tab\\x\r\n.jpg",
    "#hash.jpg", "mid#dle"
  };
  gchar long_label[GST_SPDL_SHARD_MAX_LABEL_SIZE + 1];
  gint label;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (labels); i++) {
    label = -1;
    fail_unless_equals_int (gst_spdl_shard_index_parse_label ((const guint8 *)
            labels[i].text, strlen (labels[i].text), &label),
        labels[i].label >= 0);
    fail_unless_equals_int (label, labels[i].label);
  }
  fail_if (gst_spdl_shard_index_parse_label ((const guint8 *) "7\0junk", 6,
          &label));
  memset (long_label, '1', sizeof (long_label));
  fail_if (gst_spdl_shard_index_parse_label ((const guint8 *) long_label,
          sizeof (long_label), &label));
  fail_unless (gst_spdl_shard_index_is_image ("jpeg"));
  fail_unless (gst_spdl_shard_index_is_image ("webp"));
  fail_if (gst_spdl_shard_index_is_image ("cls"));
  fail_if (gst_spdl_shard_index_is_image ("jpg.gz"));

  for (i = 0; i < G_N_ELEMENTS (names); i++) {
    gchar *escaped = gst_spdl_shard_index_escape (names[i]);
    gchar *back = g_strcompress (escaped);

    fail_if (strpbrk (escaped, "\t\r\n") != NULL);
    fail_if (escaped[0] == '#');
    fail_unless_equals_string (back, names[i]);
    g_free (back);
    g_free (escaped);
  }
}

GST_END_TEST;

/* The label in a JSON member: an integer at the dotted path, whatever
 * the rest of the document holds; hostile documents (huge, deep, broken,
 * NaN, 2^40, floats, strings) are no label, with a reason, never a crash
 * or a deep recursion. */
GST_START_TEST (test_shard_json_label)
{
  static const gchar *const label_path[] = { "label", NULL };
  static const gchar *const nested_path[] = { "annotations", "class", NULL };
  static const gchar *const array_path[] = { "labels", "1", NULL };
  static const struct
  {
    const gchar *json;
    const gchar *const *path;
    gint label;                 /* -1: none */
  } cases[] = {
    {"{\"label\": 3}", label_path, 3},
    {" {\"caption\": \"a \\\"label\\\": 9\", \"label\":7 } \n", label_path, 7},
    {"{\"label\": 1, \"label\": 2}", label_path, 2},  /* Python keeps the last */
    /* json.loads takes NaN and escaped keys (gstspdljson.h walks them) */
    {"{\"x\": [NaN, -Infinity], \"lab\\u0065l\": 4}", label_path, 4},
    {"{\"x\": [1, {\"label\": 5}], \"label\": 0}", label_path, 0},
    {"{\"annotations\": {\"class\": 12, \"box\": [1.5, 2e3]}}", nested_path,
        12},
    {"{\"labels\": [4, 8, 15]}", array_path, 8},
    {"{\"label\": 2147483647}", label_path, G_MAXINT},
    {"{\"label\": 2147483648}", label_path, -1},
    {"{\"label\": 1099511627776}", label_path, -1},    /* 2^40 */
    {"{\"label\": -1}", label_path, -1},
    {"{\"label\": 3.0}", label_path, -1},
    {"{\"label\": 3e0}", label_path, -1},
    {"{\"label\": \"3\"}", label_path, -1},
    {"{\"label\": NaN}", label_path, -1},
    {"{\"label\": Infinity}", label_path, -1},
    {"{\"label\": true}", label_path, -1},
    {"{\"label\": null}", label_path, -1},
    {"{\"label\": [3]}", label_path, -1},
    {"{\"label\": 03}", label_path, -1},
    {"{\"other\": 3}", label_path, -1},
    {"[3]", label_path, -1},
    {"3", label_path, -1},
    {"", label_path, -1},
    {"{\"label\": 3", label_path, -1},
    {"{\"label\": 3}}", label_path, -1},
    {"{\"label\": 3} x", label_path, -1},
    {"{\"label\": 3, }", label_path, -1},
    {"{\"label\" 3}", label_path, -1},
    {"{\"a\": \"unterminated}", label_path, -1},
    {"{\"annotations\": 5}", nested_path, -1},
    {"{\"labels\": [4]}", array_path, -1},
  };
  GError *error = NULL;
  GString *deep = g_string_new (NULL), *wide = g_string_new ("{\"label\": 6");
  gint label;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gboolean ok;

    label = -1;
    ok = gst_spdl_shard_index_parse_json_label ((const guint8 *)
        cases[i].json, strlen (cases[i].json), cases[i].path, &label, &error);
    fail_unless_equals_int (ok, cases[i].label >= 0);
    fail_unless_equals_int (label, cases[i].label);
    if (!ok) {
      fail_unless (g_error_matches (error, GST_SPDL_READ_ERROR,
              GST_SPDL_READ_ERROR_BAD_LABEL), "%s", cases[i].json);
      g_clear_error (&error);
    }
  }
  /* a NUL inside is not JSON */
  fail_if (gst_spdl_shard_index_parse_json_label ((const guint8 *)
          "{\"label\": 1}\0", 13, label_path, &label, &error));
  g_clear_error (&error);

  /* nested a million deep: refused without recursion */
  g_string_append (deep, "{\"label\": 1, \"x\": ");
  for (i = 0; i < 1000 * 1000; i++)
    g_string_append_c (deep, '[');
  for (i = 0; i < 1000 * 1000; i++)
    g_string_append_c (deep, ']');
  g_string_append_c (deep, '}');
  fail_if (gst_spdl_shard_index_parse_json_label ((const guint8 *) deep->str,
          deep->len, label_path, &label, &error));
  fail_unless (strstr (error->message, "deep") != NULL, "%s", error->message);
  g_clear_error (&error);
  /* nested within the limit is fine */
  g_string_assign (deep, "{\"label\": 1, \"x\": ");
  for (i = 0; i < 60; i++)
    g_string_append (deep, "{\"y\":[");
  for (i = 0; i < 60; i++)
    g_string_append (deep, "]}");
  g_string_append_c (deep, '}');
  fail_unless (gst_spdl_shard_index_parse_json_label ((const guint8 *)
          deep->str, deep->len, label_path, &label, &error));
  fail_unless_equals_int (label, 1);
  /* a large document, the label at its end */
  for (i = 0; i < 20000; i++)
    g_string_append_printf (wide, ", \"k%u\": [\"v\", %u.5, null]", i, i);
  g_string_append (wide, ", \"label\": 9}");
  fail_unless (gst_spdl_shard_index_parse_json_label ((const guint8 *)
          wide->str, wide->len, label_path, &label, &error));
  fail_unless_equals_int (label, 9);
  g_string_free (deep, TRUE);
  g_string_free (wide, TRUE);
}

GST_END_TEST;

/* image-key, label-key and label-field: ranks, JSON members, the sizes
 * read, the reasons given. */
GST_START_TEST (test_shard_rules)
{
  const GstSpdlShardRules *def = gst_spdl_shard_rules_get_default ();
  GstSpdlShardRules *rules;
  GError *error = NULL;
  const gchar *const exts[] = { "txt", "heic", NULL };
  gint label = -1;

  /* defaults: whole extensions in list order, then ones ending in them */
  fail_unless (gst_spdl_shard_rules_is_default (def));
  fail_unless (gst_spdl_shard_rules_image_rank (def, "jpg") <
      gst_spdl_shard_rules_image_rank (def, "png"));
  fail_unless (gst_spdl_shard_rules_image_rank (def, "png") <
      gst_spdl_shard_rules_image_rank (def, "input.jpg"));
  fail_unless (gst_spdl_shard_rules_image_rank (def, "img.jpg") >= 0);
  fail_unless_equals_int (gst_spdl_shard_rules_image_rank (def, "jpg.gz"),
      -1);
  fail_unless_equals_int (gst_spdl_shard_rules_image_rank (def, "cls"), -1);
  fail_unless_equals_int (gst_spdl_shard_rules_label_rank (def, "cls"), 0);
  fail_unless_equals_int (gst_spdl_shard_rules_label_rank (def, "json"), -1);
  fail_if (gst_spdl_shard_rules_label_required (def));

  rules = gst_spdl_shard_rules_new ("Input.JPG; jpg", "cls;json",
      "annotations.class", &error);
  fail_unless (rules != NULL);
  fail_if (gst_spdl_shard_rules_is_default (rules));
  fail_unless (strstr (gst_spdl_shard_rules_describe (rules),
          "image-key=input.jpg;jpg") != NULL);
  fail_unless_equals_int (gst_spdl_shard_rules_image_rank (rules,
          "input.jpg"), 0);
  fail_unless_equals_int (gst_spdl_shard_rules_image_rank (rules, "jpg"), 1);
  fail_unless_equals_int (gst_spdl_shard_rules_image_rank (rules, "png"),
      -1);
  fail_unless_equals_int (gst_spdl_shard_rules_label_rank (rules, "json"),
      1);
  fail_unless (gst_spdl_shard_rules_label_required (rules));
  fail_unless (gst_spdl_shard_rules_check_label_size (rules, "k.json",
          "json", 100000, NULL));
  fail_if (gst_spdl_shard_rules_check_label_size (rules, "k.cls", "cls", 65,
          &error));
  fail_unless (g_error_matches (error, GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_BAD_LABEL));
  g_clear_error (&error);
  fail_unless (gst_spdl_shard_rules_parse_label (rules, "k.json", "json",
          (const guint8 *) "{\"annotations\": {\"class\": 4}}", 29, &label,
          &error));
  fail_unless_equals_int (label, 4);
  fail_if (gst_spdl_shard_rules_parse_label (rules, "k.json", "json",
          (const guint8 *) "{\"label\": 4}", 12, &label, &error));
  fail_unless (strstr (error->message, "k.json") != NULL);
  fail_unless (strstr (error->message, "annotations.class") != NULL);
  g_clear_error (&error);
  error = gst_spdl_shard_rules_no_image_error (rules, "k", exts);
  fail_unless (g_error_matches (error, GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_UNSUPPORTED_IMAGE));
  fail_unless (strstr (error->message, "input.jpg;jpg") != NULL);
  g_clear_error (&error);
  gst_spdl_shard_rules_free (rules);

  fail_if (gst_spdl_shard_rules_new (";", NULL, NULL, &error));
  g_clear_error (&error);
  fail_if (gst_spdl_shard_rules_new (NULL, NULL, "", &error));
  g_clear_error (&error);
}

GST_END_TEST;

#define LEARNED_HEAD "# gst-spdl learned shard index 2 (test)\n"

/* A learned index as the cache holds it: listed by the shards' locations
 * (escaped), notes of what was left out; one that lists other shards or
 * does not parse is refused. */
GST_START_TEST (test_learned_index_parse)
{
  static const gchar *const names[] = { "/d/a.tar", "#b\t.tar" };
  static const gchar *const other[] = { "/d/a.tar", "/d/c.tar" };
  static const gchar good[] = LEARNED_HEAD
      "#!note\t1\tcorrupt-member\tk\\tx.jpg\tlabel member \"k.cls\" is not\n"
      "#!note\t1\ttruncated-shard\t\tthe archive ends\n"
      "/d/a.tar\t2\n\t512\t10\t3\tk0.jpg\n\t1536\t4\t-1\tk1.jpg\n"
      "\\043b\\t.tar\t1\n\t512\t9\t0\tk2.png\n";
  static const struct
  {
    const gchar *text;
    const gchar *const *names;
    guint n;
    const gchar *why;
  } bad[] = {
    {"/d/a.tar\t0\n", names, 1, "not a learned index"},
    {LEARNED_HEAD "/d/a.tar\t0\n", other, 2, "a shard is missing"},
    {LEARNED_HEAD "/d/a.tar\t0\n/d/c.tar\t0\n", names, 1, "other shards"},
    {LEARNED_HEAD "#!note\t2\tcorrupt-member\t\tx\n/d/a.tar\t0\n", names,
        1, "malformed note"},
    {LEARNED_HEAD "#!note\t0\tnope\t\tx\n/d/a.tar\t0\n", names, 1,
        "malformed note"},
    {LEARNED_HEAD "/d/a.tar\t2\n\t512\t10\t3\tk0.jpg\n", names, 1,
        "fewer members"},
  };
  GstSpdlShardLearned *learned;
  GstSpdlShardNote *note;
  GError *error = NULL;
  guint i;

  learned = gst_spdl_shard_learned_parse (g_strdup (good), names, 2,
      "cache/x.members", &error);
  fail_unless (learned != NULL, "%s", error ? error->message : "");
  fail_unless_equals_uint64 (learned->total, 3);
  fail_unless_equals_uint64 (learned->counts[0], 2);
  fail_unless_equals_uint64 (learned->counts[1], 1);
  /* a group left out is no sample; the rest of a damaged shard neither */
  fail_unless (gst_spdl_shard_note_is_extra (g_ptr_array_index
          (learned->notes, 0)));
  fail_if (gst_spdl_shard_note_is_extra (g_ptr_array_index
          (learned->notes, 1)));
  fail_unless_equals_int (learned->members[2].shard, 1);
  fail_unless_equals_uint64 (learned->members[2].offset, 512);
  fail_unless_equals_string (learned->members[2].name, "k2.png");
  fail_unless_equals_int (learned->notes->len, 2);
  note = g_ptr_array_index (learned->notes, 0);
  fail_unless_equals_int (note->shard, 1);
  fail_unless_equals_string (note->member, "k\tx.jpg");
  fail_unless (g_error_matches (note->error, GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_CORRUPT_MEMBER));
  fail_unless_equals_string (note->error->message,
      "label member \"k.cls\" is not");
  note = g_ptr_array_index (learned->notes, 1);
  fail_unless (note->member == NULL);
  fail_unless (g_error_matches (note->error, GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_TRUNCATED_SHARD));
  gst_spdl_shard_learned_free (learned);

  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    learned = gst_spdl_shard_learned_parse (g_strdup (bad[i].text),
        bad[i].names, bad[i].n, "cache/x.members", &error);
    fail_unless (learned == NULL, "case %u parsed", i);
    fail_unless (strstr (error->message, bad[i].why) != NULL, "case %u: %s",
        i, error->message);
    fail_unless (strstr (error->message, "cache/x.members") != NULL);
    g_clear_error (&error);
  }
}

GST_END_TEST;

static Suite *
spdlshards_suite (void)
{
  Suite *s = suite_create ("spdlshards");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_shards_expand);
  tcase_add_test (tc, test_shards_plan);
  tcase_add_test (tc, test_shard_index_counts);
  tcase_add_test (tc, test_shard_index_members);
  tcase_add_test (tc, test_shard_json_label);
  tcase_add_test (tc, test_shard_rules);
  tcase_add_test (tc, test_shard_index_rules);
  tcase_add_test (tc, test_learned_index_parse);
  return s;
}

SPDL_CHECK_MAIN (spdlshards);
