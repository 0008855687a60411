/* gst-spdl: unit tests of the shards provider's locations and epoch plans
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include <gst/check/gstcheck.h>
#include <string.h>

#include "gstspdlorder.h"
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
        GArray *plan = gst_spdl_order_contiguous_plan (counts, 6, order, rank, world,
            drop);
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

static Suite *
spdlshards_suite (void)
{
  Suite *s = suite_create ("spdlshards");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_shards_expand);
  tcase_add_test (tc, test_shards_plan);
  return s;
}

SPDL_CHECK_MAIN (spdlshards);
