/* GStreamer SPDL plugin: PNG and WebP in spdldecode, hostile files
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Good and hostile PNG and WebP samples in one folder: every good one
 * decodes to the right size, every bad one is skipped with a warning that
 * names it and the reason, and the counts by reason add up. Pixels against
 * PIL are checked per kind in tests/python/test_png_webp.py. */
#include <gst/check/gstcheck.h>
#include <string.h>
#include <zlib.h>
#include <webp/encode.h>

#include "spdltestutil.h"
#include "spdlcheckmain.h"

#define ITEM(run, i) ((SpdlTestItem *) g_ptr_array_index ((run)->items, (i)))

static void
put_be32 (GByteArray * a, guint32 v)
{
  guint8 b[4] = { v >> 24, v >> 16, v >> 8, v };

  g_byte_array_append (a, b, 4);
}

static void
png_chunk (GByteArray * png, const gchar * type, const guint8 * data,
    gsize len)
{
  guint32 crc = crc32 (0, (const Bytef *) type, 4);

  put_be32 (png, len);
  g_byte_array_append (png, (const guint8 *) type, 4);
  if (len)
    g_byte_array_append (png, data, len);
  put_be32 (png, crc32 (crc, data, len));
}

static guint8 *
deflate_bytes (const guint8 * raw, gsize len, gsize * out_len)
{
  uLongf n = compressBound (len);
  guint8 *out = g_malloc (n);

  fail_unless_equals_int (compress2 (out, &n, raw, len, 1), Z_OK);
  *out_len = n;
  return out;
}

/* A PNG of @w x @h: @raw is the filtered scanlines (before deflate),
 * @extra chunks go before IDAT. */
static GByteArray *
make_png (guint w, guint h, guint8 depth, guint8 color, const guint8 * raw,
    gsize raw_len, const gchar * extra_type, const guint8 * extra,
    gsize extra_len)
{
  static const guint8 sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  GByteArray *png = g_byte_array_new ();
  GByteArray *ihdr = g_byte_array_new ();
  guint8 tail[5] = { depth, color, 0, 0, 0 };
  gsize idat_len;
  guint8 *idat = deflate_bytes (raw, raw_len, &idat_len);

  g_byte_array_append (png, sig, 8);
  put_be32 (ihdr, w);
  put_be32 (ihdr, h);
  g_byte_array_append (ihdr, tail, 5);
  png_chunk (png, "IHDR", ihdr->data, ihdr->len);
  if (extra_type)
    png_chunk (png, extra_type, extra, extra_len);
  png_chunk (png, "IDAT", idat, idat_len);
  png_chunk (png, "IEND", NULL, 0);
  g_byte_array_unref (ihdr);
  g_free (idat);
  return png;
}

/* a w x h RGB pattern, as scanlines with filter byte 0 */
static guint8 *
rgb_scanlines (guint w, guint h, gsize * len)
{
  gsize row = 1 + (gsize) w * 3;
  guint8 *raw = g_malloc0 (row * h);
  guint x, y, c;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      for (c = 0; c < 3; c++)
        raw[y * row + 1 + x * 3 + c] = spdl_test_pattern (x, y, c, 0);
  *len = row * h;
  return raw;
}

static guint8 *
rgb_pixels (guint w, guint h)
{
  guint8 *px = g_malloc ((gsize) w * h * 3);
  guint x, y, c;

  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      for (c = 0; c < 3; c++)
        px[(y * w + x) * 3 + c] = spdl_test_pattern (x, y, c, 0);
  return px;
}

static void
write_file (const gchar * root, const gchar * name, const guint8 * data,
    gsize size)
{
  gchar *path = g_build_filename (root, "c0", name, NULL);

  spdl_test_write_file (path, (const gchar *) data, size);
  g_free (path);
}

static void
write_array (const gchar * root, const gchar * name, GByteArray * a)
{
  write_file (root, name, a->data, a->len);
}

/* "RIFF" size "WEBP" "VP8L" size, then a lossless header claiming w x h */
static void
write_vp8l_header (const gchar * root, const gchar * name, guint w, guint h)
{
  guint8 f[30] = { 'R', 'I', 'F', 'F', 22, 0, 0, 0, 'W', 'E', 'B', 'P',
    'V', 'P', '8', 'L', 10, 0, 0, 0, 0x2f
  };
  guint32 bits = (w - 1) | ((h - 1) << 14);     /* alpha 0, version 0 */

  f[21] = bits;
  f[22] = bits >> 8;
  f[23] = bits >> 16;
  f[24] = bits >> 24;
  write_file (root, name, f, sizeof (f));
}

typedef struct
{
  const gchar *name;
  const gchar *reason;          /* NULL: decodes */
  const gchar *says;            /* in the warning */
} Expect;

static const Expect expected[] = {
  {"good.png", NULL, NULL},
  {"ztxt-bomb.png", NULL, NULL},        /* text chunks are skipped unread */
  {"good-lossy.webp", NULL, NULL},
  {"good-lossless.webp", NULL, NULL},
  {"png-named.jpg", NULL, NULL},
  {"cut.png", "truncated", "truncated"},
  {"no-iend.png", "truncated", "IEND"},
  {"cut.webp", "truncated", "truncated"},
  {"cut-header.webp", "truncated", "truncated"},
  {"bad-crc.png", "corrupt", "CRC"},
  {"bad-zlib.png", "corrupt", "corrupt"},
  {"zero-width.png", "corrupt", "size 0x"},
  {"bad-start-code.webp", "corrupt", "bitstream"},
  {"huge.png", "too-large", "max-pixels"},
  {"bomb.png", "too-large", "max-pixels"},
  {"huge.webp", "too-large", "max-pixels"},
  {"a.bmp", "truncated", "BMP header"},
  {"a.tif", "corrupt", "TIFF directory"},
  {"a.ppm", "unsupported-format", "PPM"},
  {"gif-named.png", "truncated", "GIF"},
};

static gchar *
make_hostile_folder (void)
{
  gchar *root = spdl_test_make_tmpdir ();
  gsize raw_len, n, i;
  guint8 *raw = rgb_scanlines (64, 48, &raw_len), *px = rgb_pixels (64, 48);
  guint8 *webp, *zeros, *ztxt, *bomb_raw;
  GByteArray *good = make_png (64, 48, 8, 2, raw, raw_len, NULL, NULL, 0);
  GByteArray *a;
  gsize bomb_row = 1 + 10001 / 8 + 1, ztxt_len, zeros_len = 16 << 20;

  write_array (root, "good.png", good);
  write_array (root, "png-named.jpg", good);
  write_file (root, "cut.png", good->data, good->len / 2);
  write_file (root, "no-iend.png", good->data, good->len - 12);
  a = g_byte_array_sized_new (good->len);
  g_byte_array_append (a, good->data, good->len);
  /* IDAT's data intact, its CRC wrong */
  for (i = 8; i + 8 < a->len; i++)
    if (memcmp (a->data + i, "IDAT", 4) == 0) {
      const guint8 *l = a->data + i - 4;
      guint32 len = ((guint32) l[0] << 24) | (l[1] << 16) | (l[2] << 8) | l[3];
      a->data[i + 4 + len] ^= 0x55;
      break;
    }
  write_array (root, "bad-crc.png", a);
  g_byte_array_unref (a);

  /* deflate data that is not zlib, with a correct CRC */
  {
    GByteArray *bad = g_byte_array_new ();
    guint8 junk[64];
    g_byte_array_append (bad, good->data, 33);  /* signature + IHDR */
    memset (junk, 0xA5, sizeof (junk));
    png_chunk (bad, "IDAT", junk, sizeof (junk));
    png_chunk (bad, "IEND", NULL, 0);
    write_array (root, "bad-zlib.png", bad);
    g_byte_array_unref (bad);
  }
  a = make_png (0, 48, 8, 2, raw, raw_len, NULL, NULL, 0);
  write_array (root, "zero-width.png", a);
  g_byte_array_unref (a);
  a = make_png (100000, 100000, 8, 2, raw, raw_len, NULL, NULL, 0);
  write_array (root, "huge.png", a);
  g_byte_array_unref (a);

  /* a real bomb: 10001 x 10001 1-bit black, a few kB deflated */
  bomb_raw = g_malloc0 (bomb_row * 10001);
  a = make_png (10001, 10001, 1, 0, bomb_raw, bomb_row * 10001, NULL, NULL,
      0);
  fail_unless (a->len < 100000);
  write_array (root, "bomb.png", a);
  g_byte_array_unref (a);
  g_free (bomb_raw);

  /* 16 MiB of text in a zTXt chunk of a few kB */
  zeros = g_malloc0 (zeros_len);
  ztxt = deflate_bytes (zeros, zeros_len, &ztxt_len);
  {
    GByteArray *payload = g_byte_array_new ();
    g_byte_array_append (payload, (const guint8 *) "Comment\0\0", 9);
    g_byte_array_append (payload, ztxt, ztxt_len);
    a = make_png (64, 48, 8, 2, raw, raw_len, "zTXt", payload->data,
        payload->len);
    write_array (root, "ztxt-bomb.png", a);
    g_byte_array_unref (a);
    g_byte_array_unref (payload);
  }
  g_free (zeros);
  g_free (ztxt);

  n = WebPEncodeRGB (px, 64, 48, 64 * 3, 80, &webp);
  fail_unless (n > 0);
  write_file (root, "good-lossy.webp", webp, n);
  write_file (root, "cut.webp", webp, n / 2);
  write_file (root, "cut-header.webp", webp, 20);
  /* the VP8 frame's start code (9d 01 2a) broken */
  for (i = 12; i + 3 < n; i++)
    if (webp[i] == 0x9d && webp[i + 1] == 0x01 && webp[i + 2] == 0x2a) {
      webp[i + 1] = 0x02;
      break;
    }
  write_file (root, "bad-start-code.webp", webp, n);
  WebPFree (webp);
  n = WebPEncodeLosslessRGB (px, 64, 48, 64 * 3, &webp);
  fail_unless (n > 0);
  write_file (root, "good-lossless.webp", webp, n);
  WebPFree (webp);
  write_vp8l_header (root, "huge.webp", 16384, 16384);

  write_file (root, "a.bmp", (const guint8 *) "BM\0\0\0\0\0\0\0\0\0\0\0\0\0",
      16);
  write_file (root, "a.tif", (const guint8 *) "II*\0\0\0\0\0", 8);
  write_file (root, "a.ppm", (const guint8 *) "P6\n2 2\n255\n000000000000",
      23);
  write_file (root, "gif-named.png", (const guint8 *) "GIF89a\1\0\1\0\0\0\0",
      13);

  g_byte_array_unref (good);
  g_free (raw);
  g_free (px);
  return root;
}

GST_START_TEST (test_hostile_png_webp_skipped_by_reason)
{
  gchar *root = make_hostile_folder ();
  gchar *launch = g_strdup_printf ("spdlsrc location=%s ! spdldecode "
      "width=32 height=24 threads=2", root);
  const gchar *reasons[] = { "truncated", "corrupt", "too-large",
    "unsupported-format"
  };
  SpdlTestRun *run = spdl_test_run (launch);
  guint i, r, good = 0, bad = 0;

  fail_unless (run->error == NULL, "%s", run->error);
  for (i = 0; i < G_N_ELEMENTS (expected); i++) {
    if (expected[i].reason == NULL) {
      good++;
      continue;
    }
    bad++;
    fail_unless (spdl_test_run_warned (run, expected[i].name, expected[i].says),
        "no warning naming %s with \"%s\"", expected[i].name,
        expected[i].says);
  }
  fail_unless_equals_int (spdl_test_run_count_samples (run), good);
  for (i = 0; i < run->items->len; i++) {
    SpdlTestItem *item = ITEM (run, i);
    gboolean known = FALSE;
    guint k;

    if (item->buffer == NULL)
      continue;
    for (k = 0; k < G_N_ELEMENTS (expected); k++)
      if (expected[k].reason == NULL &&
          g_str_has_suffix (item->path, expected[k].name))
        known = TRUE;
    fail_unless (known, "%s decoded", item->path);
    fail_unless_equals_int (gst_buffer_get_size (item->buffer), 32 * 3 * 24);
  }
  for (r = 0; r < G_N_ELEMENTS (reasons); r++) {
    guint64 want = 0;
    for (i = 0; i < G_N_ELEMENTS (expected); i++)
      want += g_strcmp0 (expected[i].reason, reasons[r]) == 0;
    fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
            reasons[r]), want);
  }
  fail_unless_equals_uint64 (spdl_test_run_skipped (run, "spdldecode",
          "total"), bad);
  spdl_test_run_free (run);
  g_free (launch);
  spdl_test_remove_tree (root);
  g_free (root);
}

GST_END_TEST;

static Suite *
spdlpngwebp_suite (void)
{
  Suite *s = suite_create ("spdlpngwebp");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_hostile_png_webp_skipped_by_reason);
  return s;
}

SPDL_CHECK_MAIN (spdlpngwebp);
