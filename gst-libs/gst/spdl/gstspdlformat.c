/* GStreamer SPDL: the format a file's first bytes name
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Told by the signature alone, never the file's name. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlformat.h"

#include <gst/gst.h>

#include <string.h>

/* TGA has no signature: the header fields PIL's TgaImagePlugin checks
 * (colour map type, a known image type, a size, a depth). */
static gboolean
is_tga (const guint8 * data, gsize size)
{
  guint width, height;

  if (size < 18 || data[1] > 1)
    return FALSE;
  if (data[2] != 1 && data[2] != 2 && data[2] != 3 && data[2] != 9 &&
      data[2] != 10 && data[2] != 11)
    return FALSE;
  width = data[12] | (data[13] << 8);
  height = data[14] | (data[15] << 8);
  return width > 0 && height > 0 && (data[16] == 1 || data[16] == 8 ||
      data[16] == 15 || data[16] == 16 || data[16] == 24 || data[16] == 32);
}

GstSpdlImageFormat
gst_spdl_image_format_sniff (const guint8 * data, gsize size)
{
  static const guint8 png[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  static const guint8 jp2[12] = { 0, 0, 0, 0x0c, 'j', 'P', ' ', ' ', '\r',
    '\n', 0x87, '\n'
  };

  if (size >= 2 && data[0] == 0xFF && data[1] == 0xD8)
    return GST_SPDL_IMAGE_FORMAT_JPEG;
  if (size >= 8 && memcmp (data, png, 8) == 0)
    return GST_SPDL_IMAGE_FORMAT_PNG;
  if (size >= 12 && memcmp (data, "RIFF", 4) == 0 &&
      memcmp (data + 8, "WEBP", 4) == 0)
    return GST_SPDL_IMAGE_FORMAT_WEBP;
  if (size >= 6 && (memcmp (data, "GIF87a", 6) == 0 ||
          memcmp (data, "GIF89a", 6) == 0))
    return GST_SPDL_IMAGE_FORMAT_GIF;
  if (size >= 14 && data[0] == 'B' && data[1] == 'M')
    return GST_SPDL_IMAGE_FORMAT_BMP;
  if (size >= 4 && (memcmp (data, "II*\0", 4) == 0 ||
          memcmp (data, "MM\0*", 4) == 0))
    return GST_SPDL_IMAGE_FORMAT_TIFF;
  if (size >= 3 && data[0] == 'P' && data[1] >= '1' && data[1] <= '7' &&
      g_ascii_isspace (data[2]))
    return GST_SPDL_IMAGE_FORMAT_PNM;
  /* a JP2 file or a bare codestream, as PIL's Jpeg2KImagePlugin tells */
  if ((size >= 4 && memcmp (data, "\xff\x4f\xff\x51", 4) == 0) ||
      (size >= 12 && memcmp (data, jp2, 12) == 0))
    return GST_SPDL_IMAGE_FORMAT_JPEG2000;
  if (size >= 6 && memcmp (data, "\0\0\1\0", 4) == 0)
    return GST_SPDL_IMAGE_FORMAT_ICO;
  if (is_tga (data, size))
    return GST_SPDL_IMAGE_FORMAT_TGA;
  return GST_SPDL_IMAGE_FORMAT_UNKNOWN;
}

const gchar *
gst_spdl_image_format_name (GstSpdlImageFormat format)
{
  static const gchar *names[] = {
    "unknown", "JPEG", "PNG", "WebP", "GIF", "BMP", "TIFF", "PPM/PGM/PBM",
    "JPEG 2000", "ICO", "TGA",
  };

  if ((guint) format >= G_N_ELEMENTS (names))
    return "unknown";
  return names[format];
}

/* An EBML variable-size integer at @d[*pos]: an ID with its marker bit
 * (at most 4 bytes) or a size without it (at most 8; all ones: unknown,
 * G_MAXUINT64) */
static gboolean
read_vint (const guint8 * d, gsize n, gsize * pos, gboolean keep_marker,
    guint64 * value)
{
  guint len = 1, i;
  guint64 v, ones;

  if (*pos >= n || d[*pos] == 0)
    return FALSE;
  while (!(d[*pos] & (0x80 >> (len - 1))))
    len++;
  if ((keep_marker && len > 4) || *pos + len > n)
    return FALSE;
  v = keep_marker ? d[*pos] : d[*pos] & (0xff >> len);
  ones = 0xff >> len;
  for (i = 1; i < len; i++) {
    v = (v << 8) | d[*pos + i];
    ones = (ones << 8) | 0xff;
  }
  *pos += len;
  *value = (!keep_marker && v == ones) ? G_MAXUINT64 : v;
  return TRUE;
}

#define EBML_ID_HEADER 0x1A45DFA3
#define EBML_ID_DOCTYPE 0x4282
#define EBML_ID_DOCTYPEREADVERSION 0x4285
#define EBML_ID_EBMLREADVERSION 0x42F7
#define EBML_ID_EBMLMAXIDLENGTH 0x42F2
#define EBML_ID_EBMLMAXSIZELENGTH 0x42F3

/* matroska-read-common.c, gst_matroska_read_common_parse_header: what it
 * accepts, and its own errors (a bad EBMLReadVersion, a child that
 * cannot be read), which come as error messages, are left to it */
gboolean
gst_spdl_ebml_header_refused (const guint8 * data, gsize size,
    gchar ** reason)
{
  gsize pos = 0, end;
  guint64 id, len, version = 1;
  gchar *doctype = NULL;
  gboolean refused = FALSE;

  *reason = NULL;
  if (!read_vint (data, size, &pos, TRUE, &id) || id != EBML_ID_HEADER ||
      !read_vint (data, size, &pos, FALSE, &len) || len > size - pos)
    return FALSE;
  end = pos + len;
  while (pos < end) {
    if (!read_vint (data, end, &pos, TRUE, &id) ||
        !read_vint (data, end, &pos, FALSE, &len) || len > end - pos)
      goto done;
    if (id == EBML_ID_DOCTYPE) {
      gsize i;

      for (i = 0; i < len && data[pos + i]; i++)
        if (data[pos + i] & 0x80)
          goto done;            /* not ASCII: its own error */
      g_free (doctype);
      doctype = g_strndup ((const gchar *) data + pos, i);
    } else if (id == EBML_ID_DOCTYPEREADVERSION ||
        id == EBML_ID_EBMLREADVERSION || id == EBML_ID_EBMLMAXIDLENGTH ||
        id == EBML_ID_EBMLMAXSIZELENGTH) {
      guint64 num = 0;
      gsize i;

      if (len > 8)
        goto done;
      for (i = 0; i < len; i++)
        num = (num << 8) | data[pos + i];
      if (id == EBML_ID_DOCTYPEREADVERSION)
        version = num;
      else if ((id == EBML_ID_EBMLREADVERSION && num != 1) ||
          (id == EBML_ID_EBMLMAXIDLENGTH && num > 4) ||
          (id == EBML_ID_EBMLMAXSIZELENGTH && num > 8))
        goto done;
    }
    pos += len;
  }
  if (doctype && strcmp (doctype, "matroska") != 0 &&
      strcmp (doctype, "webm") != 0) {
    *reason = g_strdup_printf ("its EBML DocType is \"%s\", not matroska "
        "or webm", doctype);
    refused = TRUE;
  } else if ((guint) version > 2) {
    *reason = g_strdup_printf ("its Matroska DocTypeReadVersion is %u "
        "(GStreamer reads up to 2)", (guint) version);
    refused = TRUE;
  }
done:
  g_free (doctype);
  return refused;
}

/* ------------------------------------------------------------------------ */
/* MPEG audio frames                                                        */

/* kbit/s by [MPEG-1?][layer - 1][index]; 0: free format or invalid */
static const guint16 mpeg_audio_bitrates[2][3][16] = {
  {                             /* MPEG-2 and 2.5 */
        {0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, 0},
        {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
        {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
      },
  {                             /* MPEG-1 */
        {0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448,
            0},
        {0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 0},
        {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},
      },
};

static const guint mpeg_audio_rates[3] = { 44100, 48000, 32000 };

/* The frame at @p: its size, samples and the header bits that must not
 * change from frame to frame (version, layer, rate); 0 if not a frame */
static guint
mpeg_audio_frame (const guint8 * p, guint * samples, guint32 * fixed,
    guint * rate)
{
  guint32 h = ((guint32) p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
  guint version = (h >> 19) & 3, layer = 4 - ((h >> 17) & 3);
  guint br_index = (h >> 12) & 15, sr_index = (h >> 10) & 3;
  guint pad = (h >> 9) & 1, mpeg1 = version == 3, kbps, sr;

  if ((h >> 21) != 0x7ff || version == 1 || layer == 4 || sr_index == 3)
    return 0;
  kbps = mpeg_audio_bitrates[mpeg1][layer - 1][br_index];
  if (kbps == 0)
    return 0;
  /* MPEG-2 halves the rates, MPEG-2.5 quarters them */
  sr = mpeg_audio_rates[sr_index] >> (mpeg1 ? 0 : version == 2 ? 1 : 2);
  *rate = sr;
  *fixed = h & 0xfffe0c00;
  if (layer == 1) {
    *samples = 384;
    return (12 * kbps * 1000 / sr + pad) * 4;
  }
  *samples = layer == 3 && !mpeg1 ? 576 : 1152;
  return (layer == 3 && !mpeg1 ? 72 : 144) * kbps * 1000 / sr + pad;
}

guint
gst_spdl_mpeg_audio_frame_size (const guint8 * p, guint * samples)
{
  guint32 fixed;
  guint rate;

  return mpeg_audio_frame (p, samples, &fixed, &rate);
}

gboolean
gst_spdl_mpeg_audio_count_samples (const guint8 * data, gsize size,
    guint * rate, guint64 * n_samples)
{
  guint channels;
  gsize offset, length;

  return gst_spdl_mpeg_audio_find_frames (data, size, rate, &channels,
      n_samples, &offset, &length, NULL);
}

/* Byte by byte: GST_READ_UINT32_BE loads a whole word on x86, misaligned
 * inside a frame (UndefinedBehaviorSanitizer) */
static guint32
read_be32 (const guint8 * p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) |
      ((guint32) p[2] << 8) | p[3];
}

/* Whether the @len bytes at @p (a layer 3 frame) are a Xing, Info or VBRI
 * frame as FFmpeg's mp3 demuxer (libavformat/mp3dec.c) takes one: the name
 * right after the side info (VBRI: 32 bytes after the header), a frame
 * count or byte count (VBRI: version 1), a LAME tag's delay and padding
 * when its version names LAME or libavcodec. Nothing read past @len. */
static gboolean
mpeg_audio_tag (const guint8 * p, gsize len, GstSpdlMpegAudioTag * tag)
{
  gboolean mpeg1 = ((p[1] >> 3) & 3) == 3, mono = (p[3] >> 6) == 3;
  gsize at = 4 + (mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17));
  guint32 flags;

  memset (tag, 0, sizeof (*tag));
  if (len >= 36 + 18 && memcmp (p + 36, "VBRI", 4) == 0) {
    if (p[40] != 0 || p[41] != 1)
      return FALSE;
    tag->frames = read_be32 (p + 50);
    tag->present = TRUE;
    return TRUE;
  }
  if (at + 8 > len || (memcmp (p + at, "Xing", 4) != 0 &&
          memcmp (p + at, "Info", 4) != 0))
    return FALSE;
  flags = read_be32 (p + at + 4);
  at += 8;
  if ((flags & 3) == 0)
    return FALSE;               /* FFmpeg decodes this frame as audio */
  if (flags & 1) {
    if (at + 4 > len)
      return FALSE;
    tag->frames = read_be32 (p + at);
    at += 4;
  }
  if ((flags & 2) && at + 4 <= len)
    tag->bytes = read_be32 (p + at);
  at += ((flags & 2) ? 4 : 0) + ((flags & 4) ? 100 : 0) +
      ((flags & 8) ? 4 : 0);
  tag->present = TRUE;
  /* the LAME tag: a 9-byte version, 12 bytes, then 12 bits of delay and
   * 12 of padding */
  if (at + 24 <= len && (memcmp (p + at, "LAME", 4) == 0 ||
          memcmp (p + at, "Lavf", 4) == 0 ||
          memcmp (p + at, "Lavc", 4) == 0)) {
    guint32 v = GST_READ_UINT24_BE (p + at + 21);

    tag->lame = TRUE;
    tag->delay = v >> 12;
    tag->padding = v & 0xfff;
  }
  return TRUE;
}

gboolean
gst_spdl_mpeg_audio_find_frames (const guint8 * data, gsize size,
    guint * rate, guint * channels, guint64 * n_samples, gsize * offset,
    gsize * length, GstSpdlMpegAudioTag * tag)
{
  gsize pos = 0, first;
  guint32 fixed = 0, f;
  guint64 n = 0;
  guint samples, sr, len, i;
  gboolean end = FALSE, head = TRUE;

  /* ID3v2: "ID3", version, flags, a 28-bit size, a footer if flagged */
  if (size >= 10 && memcmp (data, "ID3", 3) == 0) {
    pos = 10 + (((data[6] & 0x7f) << 21) | ((data[7] & 0x7f) << 14) |
        ((data[8] & 0x7f) << 7) | (data[9] & 0x7f));
    if (data[5] & 0x10)
      pos += 10;
  }
  if (tag)
    memset (tag, 0, sizeof (*tag));
  first = pos;
  while (pos + 4 <= size) {
    len = mpeg_audio_frame (data + pos, &samples, &f, &sr);
    if (len == 0 || (!head && f != fixed))
      break;
    if (head) {
      head = FALSE;
      fixed = f;
      *rate = sr;
      /* mode: 3 is a single channel */
      *channels = ((data[pos + 3] >> 6) & 3) == 3 ? 1 : 2;
      /* a Xing, Info or VBRI header: the decoder gives no samples for
       * this frame and may trim others; taken where the caller reads
       * it as FFmpeg does, and not counted */
      for (i = 4; i + 4 <= MIN (len, 64) && pos + i + 4 <= size; i++)
        if (memcmp (data + pos + i, "Xing", 4) == 0 ||
            memcmp (data + pos + i, "Info", 4) == 0 ||
            memcmp (data + pos + i, "VBRI", 4) == 0)
          break;
      if (i + 4 <= MIN (len, 64) && pos + i + 4 <= size) {
        if (tag == NULL || pos + len > size || samples == 384 ||
            ((data[pos + 1] >> 1) & 3) != 1 ||
            !mpeg_audio_tag (data + pos, len, tag))
          return FALSE;
        pos += len;
        first = pos;            /* the frames after it */
        continue;
      }
    }
    if (pos + len > size) {
      end = TRUE;               /* the last frame cut short: not decoded */
      break;
    }
    n += samples;
    pos += len;
  }
  /* a frame header's first bytes, an ID3v1 or an APE tag may follow */
  if (pos + 4 > size || (size - pos >= 3 && memcmp (data + pos, "TAG",
              3) == 0) || (size - pos >= 8 && memcmp (data + pos,
              "APETAGEX", 8) == 0))
    end = TRUE;
  *offset = first;
  *length = pos - first;
  if (n == 0 || !end)
    return FALSE;
  *n_samples = n;
  return TRUE;
}

gboolean
gst_spdl_ogg_is_chained (const guint8 * data, gsize size)
{
  gsize pos = 0;
  gboolean in_link = FALSE;

  /* a page: "OggS", version 0, flags (0x02: BOS), granule, serial,
   * sequence, CRC, segment count, lacing values, then the segments */
  while (pos + 27 <= size && memcmp (data + pos, "OggS", 4) == 0 &&
      data[pos + 4] == 0) {
    guint nsegs = data[pos + 26], i;
    gsize len = 27 + nsegs;

    if (pos + len > size)
      break;
    for (i = 0; i < nsegs; i++)
      len += data[pos + 27 + i];
    if (data[pos + 5] & 0x02) {
      if (in_link)
        return TRUE;
    } else {
      in_link = TRUE;
    }
    pos += len;
  }
  return FALSE;
}

gboolean
gst_spdl_ogg_first_packet_is (const guint8 * data, gsize size,
    const gchar * magic, gsize len)
{
  gsize body;

  /* the page header is 27 bytes and its segment table, the packet after */
  if (size < 27 || memcmp (data, "OggS", 4) != 0)
    return FALSE;
  body = 27 + (gsize) data[26];
  return size >= body + len && memcmp (data + body, magic, len) == 0;
}
