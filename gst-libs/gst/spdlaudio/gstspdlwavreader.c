/* GStreamer SPDL: WAV files read without a pipeline
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* RIFF/WAVE with plain PCM: 8-bit unsigned, 16, 24 and 32-bit signed,
 * 32 and 64-bit float (format tags 1 and 3, or WAVE_FORMAT_EXTENSIBLE
 * with those subformats), mono or stereo. The samples are handed out in
 * the file's own format, the one wavparse gives audioconvert, so the
 * conversion to float is audioconvert's to the bit. Everything else
 * (ADPCM, mu-law, RF64, more than two channels, whose order wavparse
 * may change, a container wider than its samples, a malformed header, an
 * empty or unsized data chunk) is left to the pipeline, which decodes or
 * reports it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlaudioreader.h"

#include <string.h>

/* frames copied at a time where the data chunk is not aligned */
#define ALIGNED_FRAMES 4096

#define WAVE_FORMAT_PCM 0x0001
#define WAVE_FORMAT_IEEE_FLOAT 0x0003
#define WAVE_FORMAT_EXTENSIBLE 0xFFFE

typedef struct
{
  GstSpdlAudioReader reader;
  GBytes *bytes;
  const guint8 *data;           /* the data chunk's frames */
  gsize bpf;
  gpointer aligned;             /* ALIGNED_FRAMES frames */
} WavReader;

/* GST_READ_UINT*_LE cast where the CPU allows unaligned loads, which is
 * still undefined behaviour in C: a file's header lies anywhere */
static guint
read_u16 (const guint8 * p)
{
  return p[0] | (p[1] << 8);
}

static guint32
read_u32 (const guint8 * p)
{
  return p[0] | (p[1] << 8) | (p[2] << 16) | ((guint32) p[3] << 24);
}

static gboolean
wav_read (GstSpdlAudioReader * reader, guint64 first,
    GstSpdlAudioFramesFunc func, gpointer user_data, GError ** error)
{
  WavReader *self = (WavReader *) reader;
  gsize align = GST_AUDIO_INFO_WIDTH (&reader->info) / 8;
  guint64 pos;

  if ((align & (align - 1)) != 0)
    align = 1;                  /* packed 24-bit: bytes */
  for (pos = first; pos < reader->n_frames;) {
    const guint8 *frames = self->data + pos * self->bpf;
    gsize n = reader->n_frames - pos;

    if (align > 1 && (guintptr) frames % align != 0) {
      n = MIN (n, ALIGNED_FRAMES);
      if (self->aligned == NULL)
        self->aligned = g_malloc (ALIGNED_FRAMES * self->bpf);
      memcpy (self->aligned, frames, n * self->bpf);
      frames = self->aligned;
    } else {
      /* in place: runs of a bounded size all the same */
      n = MIN (n, 16 * ALIGNED_FRAMES);
    }
    if (!func (frames, pos, n, user_data))
      break;
    pos += n;
  }
  return TRUE;
}

static void
wav_free (GstSpdlAudioReader * reader)
{
  WavReader *self = (WavReader *) reader;

  g_bytes_unref (self->bytes);
  g_free (self->aligned);
  g_free (self);
}

static const GstSpdlAudioReaderFuncs wav_funcs = {
  "wav", wav_read, wav_free,
};

/* KSDATAFORMAT_SUBTYPE_PCM and _IEEE_FLOAT after their first two bytes
 * (the format tag) */
static const guint8 subformat_tail[14] = {
  0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38,
  0x9B, 0x71
};

static GstAudioFormat
wav_format (const guint8 * fmt, guint32 size)
{
  guint tag, bits, channels, block_align;

  if (size < 16)
    return GST_AUDIO_FORMAT_UNKNOWN;
  tag = read_u16 (fmt);
  channels = read_u16 (fmt + 2);
  block_align = read_u16 (fmt + 12);
  bits = read_u16 (fmt + 14);
  if (tag == WAVE_FORMAT_EXTENSIBLE) {
    guint valid_bits;

    /* cbSize, valid bits, channel mask, subformat GUID */
    if (size < 40 || read_u16 (fmt + 16) < 22)
      return GST_AUDIO_FORMAT_UNKNOWN;
    valid_bits = read_u16 (fmt + 18);
    if ((valid_bits != 0 && valid_bits != bits) ||
        memcmp (fmt + 26, subformat_tail, sizeof (subformat_tail)) != 0)
      return GST_AUDIO_FORMAT_UNKNOWN;
    tag = read_u16 (fmt + 24);
  }
  if (channels == 0 || channels > 2 || bits % 8 != 0 ||
      block_align != channels * bits / 8)
    return GST_AUDIO_FORMAT_UNKNOWN;
  if (tag == WAVE_FORMAT_PCM) {
    switch (bits) {
      case 8:
        return GST_AUDIO_FORMAT_U8;
      case 16:
        return GST_AUDIO_FORMAT_S16LE;
      case 24:
        return GST_AUDIO_FORMAT_S24LE;
      case 32:
        return GST_AUDIO_FORMAT_S32LE;
      default:
        break;
    }
  } else if (tag == WAVE_FORMAT_IEEE_FLOAT) {
    if (bits == 32)
      return GST_AUDIO_FORMAT_F32LE;
    if (bits == 64)
      return GST_AUDIO_FORMAT_F64LE;
  }
  return GST_AUDIO_FORMAT_UNKNOWN;
}

GstSpdlAudioReader *
gst_spdl_wav_reader_open (GBytes * bytes, GError ** error)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  const guint8 *fmt = NULL;
  guint32 fmt_size = 0;
  GstAudioFormat format = GST_AUDIO_FORMAT_UNKNOWN;
  guint64 pos = 12;
  WavReader *self;
  guint rate, channels;

  if (size < 12 || memcmp (data, "RIFF", 4) != 0 ||
      memcmp (data + 8, "WAVE", 4) != 0)
    return NULL;
  /* chunks up to the data chunk; the format chunk must come before it */
  while (pos + 8 <= size) {
    const guint8 *chunk = data + pos;
    guint32 chunk_size = read_u32 (chunk + 4);
    guint64 have = size - pos - 8;

    if (memcmp (chunk, "fmt ", 4) == 0) {
      if (fmt != NULL || chunk_size > have)
        return NULL;
      fmt = chunk + 8;
      fmt_size = chunk_size;
    } else if (memcmp (chunk, "data", 4) == 0) {
      guint64 n;

      if (fmt == NULL || chunk_size == 0)
        return NULL;
      format = wav_format (fmt, fmt_size);
      if (format == GST_AUDIO_FORMAT_UNKNOWN)
        return NULL;
      rate = read_u32 (fmt + 4);
      channels = read_u16 (fmt + 2);
      if (rate == 0 || rate > G_MAXINT)
        return NULL;
      /* a truncated chunk, or one of unknown size (0xFFFFFFFF): what is
       * there */
      n = MIN ((guint64) chunk_size, have) / read_u16 (fmt + 12);
      if (n == 0)
        return NULL;
      self = g_new0 (WavReader, 1);
      self->reader.funcs = &wav_funcs;
      gst_audio_info_set_format (&self->reader.info, format, rate, channels,
          NULL);
      self->reader.n_frames = n;
      self->bytes = g_bytes_ref (bytes);
      self->data = chunk + 8;
      self->bpf = GST_AUDIO_INFO_BPF (&self->reader.info);
      return &self->reader;
    }
    /* chunks are padded to an even size */
    pos += 8 + (guint64) chunk_size + (chunk_size & 1);
  }
  return NULL;
}
