/* GStreamer SPDL plugin: unit tests of the .npy header parser
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

#include "gstspdlnpy.h"
#include "gstspdlrecord.h"
#include "spdlcheckmain.h"

/* An .npy file as numpy.save writes it: version @major, the header
 * padded to 64 bytes and ended by '\n', then @data_len bytes of data. */
static GByteArray *
npy_file (guint major, const gchar * header, const guint8 * data,
    gsize data_len)
{
  GByteArray *out = g_byte_array_new ();
  gsize prefix = major == 1 ? 10 : 12, len = strlen (header) + 1;
  guint8 le[4];

  len += (64 - (prefix + len) % 64) % 64;
  g_byte_array_append (out, (const guint8 *) "\x93NUMPY", 6);
  g_byte_array_append (out, (const guint8[]) {
      major, 0}, 2);
  GST_WRITE_UINT32_LE (le, len);
  g_byte_array_append (out, le, major == 1 ? 2 : 4);
  g_byte_array_append (out, (const guint8 *) header, strlen (header));
  while (out->len < prefix + len - 1)
    g_byte_array_append (out, (const guint8 *) " ", 1);
  g_byte_array_append (out, (const guint8 *) "\n", 1);
  if (data_len)
    g_byte_array_append (out, data, data_len);
  return out;
}

GST_START_TEST (test_numpy_save_headers)
{
  static const struct
  {
    guint major;
    const gchar *header;
    GstSpdlDType dtype;
    guint n_dims;
    guint64 shape[3];
  } good[] = {
    {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
        GST_SPDL_DTYPE_FLOAT32, 2, {2, 3}},
    {1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
        GST_SPDL_DTYPE_INT64, 0, {0}},
    {1, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }",
        GST_SPDL_DTYPE_UINT8, 1, {5}},
    {1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
        GST_SPDL_DTYPE_BOOL, 1, {3}},
    {2, "{'descr': '<u2', 'fortran_order': False, 'shape': (1, 2, 2), }",
        GST_SPDL_DTYPE_UINT16, 3, {1, 2, 2}},
    {3, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }",
        GST_SPDL_DTYPE_FLOAT64, 1, {4}},
    /* keys in another order, double quotes, no trailing comma, py2 longs */
    {1, "{\"shape\": (2L, 2L), \"fortran_order\": False, \"descr\": \"<i4\"}",
        GST_SPDL_DTYPE_INT32, 2, {2, 2}},
    {1, "{'descr': '|i1', 'fortran_order': False, 'shape': (0, 7), }",
        GST_SPDL_DTYPE_INT8, 2, {0, 7}},
    {1, "{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }",
        GST_SPDL_DTYPE_INT16, 1, {1}},
    {1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }",
        GST_SPDL_DTYPE_UINT32, 1, {1}},
    {1, "{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }",
        GST_SPDL_DTYPE_UINT64, 1, {1}},
    {1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }",
        GST_SPDL_DTYPE_FLOAT16, 1, {1}},
  };
  guint8 data[64];
  guint i, k;

  for (i = 0; i < sizeof (data); i++)
    data[i] = i;
  for (i = 0; i < G_N_ELEMENTS (good); i++) {
    GstSpdlNpyInfo info;
    GError *error = NULL;
    guint64 n = 1;
    gsize bytes;
    GByteArray *f;

    for (k = 0; k < good[i].n_dims; k++)
      n *= good[i].shape[k];
    bytes = n * gst_spdl_dtype_size (good[i].dtype);
    f = npy_file (good[i].major, good[i].header, data, bytes);
    fail_unless (gst_spdl_npy_parse (f->data, f->len, &info, &error),
        "%s: %s", good[i].header, error ? error->message : "");
    fail_unless_equals_int (info.dtype, good[i].dtype);
    fail_unless_equals_int (info.n_dims, good[i].n_dims);
    for (k = 0; k < good[i].n_dims; k++)
      fail_unless_equals_uint64 (info.shape[k], good[i].shape[k]);
    fail_unless_equals_uint64 (info.n_elements, n);
    fail_unless_equals_uint64 (info.data_size, bytes);
    fail_unless_equals_uint64 (info.data_offset, f->len - bytes);
    fail_unless_equals_int (info.data_offset % 64, 0);
    /* one byte short, one too many: the data must fill the file */
    fail_if (gst_spdl_npy_parse (f->data, f->len - 1, &info, NULL) &&
        bytes > 0);
    g_byte_array_append (f, data, 1);
    fail_if (gst_spdl_npy_parse (f->data, f->len, &info, NULL));
    g_byte_array_unref (f);
  }
}

GST_END_TEST;

GST_START_TEST (test_refused_with_a_reason)
{
  static const struct
  {
    const gchar *header;
    const gchar *reason;
  } bad[] = {
    {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
        "Fortran order"},
    {"{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
        "big-endian"},
    {"{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }",
        "not a number type"},
    {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
        "not a number type"},
    {"{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }",
        "structured"},
    {"{'descr': '<f4', 'shape': (2,), }", "without fortran_order"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
        "unknown key"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
        "not a tuple of integers"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}",
        "more than 8"},
    {"{'descr': '<f8', 'fortran_order': False, "
          "'shape': (4294967296, 4294967296, 16), }", "too large"},
    {"['descr', '<f4']", "not a dict"},
  };
  guint8 data[64] = { 0, };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    GstSpdlNpyInfo info;
    GError *error = NULL;
    GByteArray *f = npy_file (1, bad[i].header, data, 8);

    fail_if (gst_spdl_npy_parse (f->data, f->len, &info, &error),
        "%s parsed", bad[i].header);
    fail_unless (error && error->domain == GST_STREAM_ERROR);
    fail_unless (strstr (error->message, bad[i].reason) != NULL,
        "%s: %s", bad[i].header, error->message);
    g_error_free (error);
    g_byte_array_unref (f);
  }
}

GST_END_TEST;

/* Every prefix of a good file: refused, no read past its end (valgrind
 * and ASan runs see one) */
GST_START_TEST (test_cut_anywhere)
{
  guint8 data[24] = { 1, 2, 3, };
  GByteArray *f = npy_file (2,
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", data, 24);
  GstSpdlNpyInfo info;
  GError *error = NULL;
  gsize n;

  for (n = 0; n < f->len; n++) {
    guint8 *copy = g_memdup2 (f->data, n);

    fail_if (gst_spdl_npy_parse (copy, n, &info, &error));
    fail_unless (error != NULL);
    g_clear_error (&error);
    g_free (copy);
  }
  fail_unless (gst_spdl_npy_parse (f->data, f->len, &info, NULL));
  /* version 4 does not exist */
  f->data[6] = 4;
  fail_if (gst_spdl_npy_parse (f->data, f->len, &info, &error));
  fail_unless (strstr (error->message, "version 4") != NULL);
  g_clear_error (&error);
  g_byte_array_unref (f);
}

GST_END_TEST;

/* An npy field's value is checked where it is read (spdlsrc): a file a
 * batch cannot hold is a bad value under the field's policy */
GST_START_TEST (test_field_value_checked)
{
  guint8 data[8] = { 7, };
  GByteArray *good = npy_file (1,
      "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", data, 8);
  GByteArray *fortran = npy_file (1,
      "{'descr': '<i8', 'fortran_order': True, 'shape': (1,), }", data, 8);
  GValue v = G_VALUE_INIT;
  GError *error = NULL;

  fail_unless (gst_spdl_field_value_from_data (&v, GST_SPDL_FIELD_NPY,
          good->data, good->len, NULL, &error));
  fail_unless (G_VALUE_HOLDS (&v, G_TYPE_BYTES));
  fail_unless_equals_int (g_bytes_get_size (g_value_get_boxed (&v)),
      good->len);
  g_value_unset (&v);
  fail_if (gst_spdl_field_value_from_data (&v, GST_SPDL_FIELD_NPY,
          fortran->data, fortran->len, NULL, &error));
  fail_unless (strstr (error->message, "Fortran order"), "%s",
      error->message);
  g_clear_error (&error);
  fail_if (gst_spdl_field_value_from_data (&v, GST_SPDL_FIELD_NPY,
          (const guint8 *) "1,2,3", 5, NULL, &error));
  fail_unless (strstr (error->message, "not a NumPy"), "%s", error->message);
  g_clear_error (&error);
  g_byte_array_unref (good);
  g_byte_array_unref (fortran);
}

GST_END_TEST;

static Suite *
spdlnpy_suite (void)
{
  Suite *s = suite_create ("spdlnpy");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_numpy_save_headers);
  tcase_add_test (tc, test_refused_with_a_reason);
  tcase_add_test (tc, test_cut_anywhere);
  tcase_add_test (tc, test_field_value_checked);
  return s;
}

SPDL_CHECK_MAIN (spdlnpy);
