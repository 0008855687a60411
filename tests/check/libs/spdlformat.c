/* gst-spdl: unit tests of format sniffing
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

#include "gstspdlformat.h"
#include "spdlcheckmain.h"

GST_START_TEST (test_sniffing_by_first_bytes)
{
  static const struct
  {
    const gchar *bytes;
    gsize len;
    GstSpdlImageFormat format;
  } cases[] = {
    {"\xff\xd8\xff\xe0", 4, GST_SPDL_IMAGE_FORMAT_JPEG},
    {"\x89PNG\r\n\x1a\n", 8, GST_SPDL_IMAGE_FORMAT_PNG},
    {"\x89PNG\r\n\x1a", 7, GST_SPDL_IMAGE_FORMAT_UNKNOWN},
    {"RIFF\0\0\0\0WEBP", 12, GST_SPDL_IMAGE_FORMAT_WEBP},
    {"RIFF\0\0\0\0WAVE", 12, GST_SPDL_IMAGE_FORMAT_UNKNOWN},
    {"GIF87a", 6, GST_SPDL_IMAGE_FORMAT_GIF},
    {"BM\0\0\0\0\0\0\0\0\0\0\0\0", 14, GST_SPDL_IMAGE_FORMAT_BMP},
    {"MM\0*", 4, GST_SPDL_IMAGE_FORMAT_TIFF},
    {"P5\n", 3, GST_SPDL_IMAGE_FORMAT_PNM},
    {"\xff\x4f\xff\x51", 4, GST_SPDL_IMAGE_FORMAT_JPEG2000},
    {"\0\0\0\x0cjP  \r\n\x87\n", 12, GST_SPDL_IMAGE_FORMAT_JPEG2000},
    {"\0\0\1\0\1\0", 6, GST_SPDL_IMAGE_FORMAT_ICO},
    /* TGA: a known image type (2), a size (64x48), a depth (24) */
    {"\0\0\2\0\0\0\0\0\0\0\0\0\x40\0\x30\0\x18\0", 18,
        GST_SPDL_IMAGE_FORMAT_TGA},
    {"\0\0\2\0\0\0\0\0\0\0\0\0\x40\0\x30\0\x07\0", 18,
        GST_SPDL_IMAGE_FORMAT_UNKNOWN},
    {"Photo", 5, GST_SPDL_IMAGE_FORMAT_UNKNOWN},
    {"", 0, GST_SPDL_IMAGE_FORMAT_UNKNOWN},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    fail_unless_equals_int (gst_spdl_image_format_sniff ((const guint8 *)
            cases[i].bytes, cases[i].len), cases[i].format);
}

GST_END_TEST;

/* An EBML header: EBMLReadVersion @read_version, DocType @doctype,
 * DocTypeReadVersion @version */
static GByteArray *
ebml_header (guint read_version, const gchar * doctype, guint version)
{
  GByteArray *a = g_byte_array_new ();
  guint8 head[] = { 0x1a, 0x45, 0xdf, 0xa3, 0x80 };
  guint8 readv[] = { 0x42, 0xf7, 0x81, read_version };
  guint8 dt[] = { 0x42, 0x82, 0x80 | strlen (doctype) };
  guint8 dtv[] = { 0x42, 0x85, 0x81, version };
  guint8 segment[] = { 0x18, 0x53, 0x80, 0x67, 0x01, 0, 0, 0, 0, 0, 0, 0 };

  head[4] |= sizeof (readv) + sizeof (dt) + strlen (doctype) + sizeof (dtv);
  g_byte_array_append (a, head, sizeof (head));
  g_byte_array_append (a, readv, sizeof (readv));
  g_byte_array_append (a, dt, sizeof (dt));
  g_byte_array_append (a, (const guint8 *) doctype, strlen (doctype));
  g_byte_array_append (a, dtv, sizeof (dtv));
  g_byte_array_append (a, segment, sizeof (segment));
  return a;
}

GST_START_TEST (test_ebml_headers_matroskademux_refuses)
{
  static const struct
  {
    guint read_version;
    const gchar *doctype;
    guint version;
    const gchar *reason;        /* NULL: not refused */
  } cases[] = {
    {1, "webm", 2, NULL},
    {1, "matroska", 1, NULL},
    {1, "webm", 40, "DocTypeReadVersion is 40"},
    {1, "matroska", 3, "DocTypeReadVersion is 3"},
    {1, "mkv", 2, "DocType is \"mkv\""},
    /* matroskademux's own error message, no CRITICAL: left to it */
    {2, "webm", 40, NULL},
  };
  guint i;
  gchar *reason;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    GByteArray *a = ebml_header (cases[i].read_version, cases[i].doctype,
        cases[i].version);

    fail_unless_equals_int (gst_spdl_ebml_header_refused (a->data, a->len,
            &reason), cases[i].reason != NULL);
    if (cases[i].reason)
      fail_unless (strstr (reason, cases[i].reason) != NULL, "%u: %s", i,
          reason);
    else
      fail_unless (reason == NULL);
    g_free (reason);
    /* cut inside the header: not read, not refused */
    fail_if (gst_spdl_ebml_header_refused (a->data, 12, &reason));
    g_byte_array_unref (a);
  }
  fail_if (gst_spdl_ebml_header_refused ((const guint8 *) "\x1a\x45\xdf",
          3, &reason));
  fail_if (gst_spdl_ebml_header_refused ((const guint8 *) "GIF89a", 6,
          &reason));
}

GST_END_TEST;

/* @n frames of MPEG audio with header @h (bitrate, rate, layer, version
 * as given; padding on every other frame), each @size or @size + 1 bytes */
static void
append_frames (GByteArray * a, guint32 h, guint size, guint pad_bytes,
    guint n)
{
  guint i;

  for (i = 0; i < n; i++) {
    guint32 hh = h | (i % 2 ? 0x200 : 0);
    guint len = size + (i % 2 ? pad_bytes : 0), k;
    guint8 b[4] = { hh >> 24, hh >> 16, hh >> 8, hh };

    g_byte_array_append (a, b, 4);
    for (k = 4; k < len; k++)
      g_byte_array_append (a, (const guint8 *) "\x55", 1);
  }
}

GST_START_TEST (test_mpeg_audio_samples_counted)
{
  /* MPEG-1 layer III, 128 kbit/s, 44.1 kHz: 417 bytes (+1 padded) */
  const guint32 l3 = 0xfffb9000;
  /* MPEG-2 layer III, 64 kbit/s, 22.05 kHz: 72 x 64000 / 22050 = 208 */
  const guint32 l3m2 = 0xfff38000;
  GByteArray *a = g_byte_array_new ();
  guint rate = 0;
  guint64 n = 0;
  static const guint8 id3v2[10] = { 'I', 'D', '3', 3, 0, 0, 0, 0, 1, 0 };
  guint8 zeros[128] = { 0, };

  append_frames (a, l3, 417, 1, 10);
  fail_unless (gst_spdl_mpeg_audio_count_samples (a->data, a->len, &rate,
          &n));
  fail_unless_equals_int (rate, 44100);
  fail_unless_equals_uint64 (n, 10 * 1152);
  /* the last frame cut short: not counted */
  fail_unless (gst_spdl_mpeg_audio_count_samples (a->data, a->len - 100,
          &rate, &n));
  fail_unless_equals_uint64 (n, 9 * 1152);
  /* an ID3v1 tag after; an ID3v2 tag (128 bytes) before */
  g_byte_array_append (a, (const guint8 *) "TAG", 3);
  g_byte_array_append (a, zeros, 125);
  g_byte_array_prepend (a, zeros, 128);
  g_byte_array_prepend (a, id3v2, 10);
  fail_unless (gst_spdl_mpeg_audio_count_samples (a->data, a->len, &rate,
          &n));
  fail_unless_equals_uint64 (n, 10 * 1152);
  g_byte_array_set_size (a, 0);
  /* bytes that are not a frame after the frames */
  append_frames (a, l3, 417, 1, 4);
  g_byte_array_append (a, (const guint8 *) "garbage!", 8);
  fail_if (gst_spdl_mpeg_audio_count_samples (a->data, a->len, &rate, &n));
  g_byte_array_set_size (a, 0);

  /* a change of rate: not one stream */
  append_frames (a, l3, 417, 1, 4);
  append_frames (a, l3m2, 208, 1, 4);
  fail_if (gst_spdl_mpeg_audio_count_samples (a->data, a->len, &rate, &n));
  g_byte_array_set_size (a, 0);

  /* MPEG-2: 576 samples a frame */
  append_frames (a, l3m2, 208, 1, 6);
  fail_unless (gst_spdl_mpeg_audio_count_samples (a->data, a->len, &rate,
          &n));
  fail_unless_equals_int (rate, 22050);
  fail_unless_equals_uint64 (n, 6 * 576);
  g_byte_array_set_size (a, 0);

  /* a Xing header in the first frame: the parser's length, not ours */
  append_frames (a, l3, 417, 1, 6);
  memcpy (a->data + 36, "Xing", 4);
  fail_if (gst_spdl_mpeg_audio_count_samples (a->data, a->len, &rate, &n));
  g_byte_array_set_size (a, 0);

  /* free format (bitrate index 0), not MPEG at all */
  append_frames (a, 0xfffb0000, 417, 1, 6);
  fail_if (gst_spdl_mpeg_audio_count_samples (a->data, a->len, &rate, &n));
  fail_if (gst_spdl_mpeg_audio_count_samples ((const guint8 *) "RIFF1234",
          8, &rate, &n));
  fail_if (gst_spdl_mpeg_audio_count_samples (a->data, 0, &rate, &n));
  g_byte_array_unref (a);
}

GST_END_TEST;

GST_START_TEST (test_mpeg_audio_damage_found)
{
  const guint32 l3 = 0xfffb9000;
  GByteArray *a = g_byte_array_new ();
  guint rate, channels;
  guint64 n;
  gsize offset = 1, length = 1;
  guint8 junk[300];

  memset (junk, 0x33, sizeof (junk));
  /* frames, bytes that are no frame, frames again: damaged in the middle,
   * the frames before it said */
  append_frames (a, l3, 417, 1, 4);
  g_byte_array_append (a, junk, sizeof (junk));
  append_frames (a, l3, 417, 1, 4);
  fail_if (gst_spdl_mpeg_audio_find_frames (a->data, a->len, &rate,
          &channels, &n, &offset, &length, NULL));
  fail_unless_equals_uint64 (offset, 0);
  fail_unless_equals_uint64 (length, 4 * 417 + 2);
  /* the junk at the end: the frames before it said too */
  g_byte_array_set_size (a, 4 * 417 + 2 + sizeof (junk));
  fail_if (gst_spdl_mpeg_audio_find_frames (a->data, a->len, &rate,
          &channels, &n, &offset, &length, NULL));
  fail_unless_equals_uint64 (length, 4 * 417 + 2);
  g_byte_array_unref (a);
}

GST_END_TEST;

/* an Ogg page: @flags (0x02: BOS), one segment of @len bytes */
static void
append_ogg_page (GByteArray * a, guint8 flags, guint8 len)
{
  guint8 head[28] = { 'O', 'g', 'g', 'S', 0, flags, };
  guint8 body[255] = { 0, };

  head[26] = 1;
  head[27] = len;
  g_byte_array_append (a, head, sizeof (head));
  g_byte_array_append (a, body, len);
}

GST_START_TEST (test_ogg_chained)
{
  GByteArray *a = g_byte_array_new ();

  /* two streams multiplexed: both BOS pages first, then data */
  append_ogg_page (a, 0x02, 19);
  append_ogg_page (a, 0x02, 30);
  append_ogg_page (a, 0x00, 200);
  append_ogg_page (a, 0x04, 10);
  fail_if (gst_spdl_ogg_is_chained (a->data, a->len));
  /* a second link after the first */
  append_ogg_page (a, 0x02, 19);
  append_ogg_page (a, 0x00, 50);
  fail_unless (gst_spdl_ogg_is_chained (a->data, a->len));
  /* cut inside the second link's BOS page header: not seen */
  fail_if (gst_spdl_ogg_is_chained (a->data, a->len - 50 - 28 - 19 - 10));
  /* bytes that stop being pages before it */
  a->data[28 + 19 + 28 + 30] = 'X';
  fail_if (gst_spdl_ogg_is_chained (a->data, a->len));
  fail_if (gst_spdl_ogg_is_chained ((const guint8 *) "OggS", 4));
  g_byte_array_unref (a);
}

GST_END_TEST;

static Suite *
spdlformat_suite (void)
{
  Suite *s = suite_create ("spdlformat");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sniffing_by_first_bytes);
  tcase_add_test (tc, test_ebml_headers_matroskademux_refuses);
  tcase_add_test (tc, test_mpeg_audio_samples_counted);
  tcase_add_test (tc, test_mpeg_audio_damage_found);
  tcase_add_test (tc, test_ogg_chained);
  return s;
}

SPDL_CHECK_MAIN (spdlformat);
