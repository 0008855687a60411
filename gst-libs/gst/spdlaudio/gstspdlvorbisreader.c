/* GStreamer SPDL: Ogg Vorbis files decoded by libvorbisfile
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* An Ogg Vorbis file read by libvorbisfile (Xiph's Ogg layer over
 * libvorbis, the decoder vorbisdec wraps, both in float) straight from
 * memory. Against oggdemux ! vorbisdec it seeks to the exact sample and
 * decodes in the calling thread. Vorbis keeps no state from packet to
 * packet but the overlap with the previous block, which ov_pcm_seek()
 * decodes again: a read from any frame gives the samples of a decode
 * from the start, bit for bit, so no pre-roll is needed (unlike Opus).
 *
 * Taken: Ogg whose first stream is Vorbis, one link (a chained file goes
 * to the pipeline), 1 or 2 channels (vorbisdec orders more channels
 * differently), a known length. Output: float at the file's rate, not
 * clipped (as vorbisdec). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlaudioreader.h"
#include "gstspdlerrors.h"
#include "gstspdlformat.h"

/* vorbisfile.h's static OV_CALLBACKS_* (stdio), unused here */
#define OV_EXCLUDE_STATIC_CALLBACKS
#include <vorbis/vorbisfile.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* frames asked of one ov_read_float(): libvorbis gives at most what one
 * packet completes (half a long block, 4096 frames at most) */
#define READ_FRAMES 4096
#define MAX_CHANNELS 2

typedef struct
{
  GstSpdlAudioReader parent;
  GBytes *data;
  const guint8 *bytes;
  gsize size;
  gsize offset;                 /* the callbacks' read position */
  OggVorbis_File vf;
  gboolean vf_open;
  guint64 pos;                  /* the next frame ov_read_float() gives */
  gfloat pcm[READ_FRAMES * MAX_CHANNELS];
} GstSpdlVorbisReader;

/* ov_callbacks over the bytes in memory, as stdio's */
static size_t
mem_read (void *ptr, size_t size, size_t nmemb, void *datasource)
{
  GstSpdlVorbisReader *self = datasource;
  gsize left = self->size - self->offset, n;

  if (size == 0 || nmemb == 0)
    return 0;
  n = MIN (nmemb, left / size);
  memcpy (ptr, self->bytes + self->offset, n * size);
  self->offset += n * size;
  return n;
}

static int
mem_seek (void *datasource, ogg_int64_t offset, int whence)
{
  GstSpdlVorbisReader *self = datasource;
  gint64 at;

  switch (whence) {
    case SEEK_SET:
      at = offset;
      break;
    case SEEK_CUR:
      at = (gint64) self->offset + offset;
      break;
    case SEEK_END:
      at = (gint64) self->size + offset;
      break;
    default:
      errno = EINVAL;
      return -1;
  }
  if (at < 0 || (guint64) at > self->size) {
    errno = EINVAL;
    return -1;
  }
  self->offset = at;
  return 0;
}

static long
mem_tell (void *datasource)
{
  GstSpdlVorbisReader *self = datasource;

  return self->offset;
}

static const gchar *
vorbis_error_name (int err)
{
  switch (err) {
    case OV_HOLE:
      return "a hole in the data (a missing or corrupt page)";
    case OV_EREAD:
      return "a read error";
    case OV_EFAULT:
      return "an internal error (OV_EFAULT)";
    case OV_EIMPL:
      return "an unsupported feature";
    case OV_EINVAL:
      return "an invalid position";
    case OV_ENOTVORBIS:
      return "no Vorbis data";
    case OV_EBADHEADER:
      return "a corrupt header";
    case OV_EVERSION:
      return "an unsupported version";
    case OV_ENOTAUDIO:
      return "not audio";
    case OV_EBADPACKET:
      return "a packet that does not decode";
    case OV_EBADLINK:
      return "a link that cannot be found";
    case OV_ENOSEEK:
      return "a stream that cannot seek";
    default:
      return "an unknown error";
  }
}

static gboolean
vorbis_fail (GError ** error, const gchar * what, long err)
{
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
      "Vorbis %s: %s (vorbisfile %ld)", what, vorbis_error_name (err), err);
}

static gboolean
vorbis_reader_seek (GstSpdlVorbisReader * self, guint64 first,
    GError ** error)
{
  ogg_int64_t at;
  int ret;

  ret = ov_pcm_seek (&self->vf, (ogg_int64_t) first);
  if (ret < 0)
    return vorbis_fail (error, "seek", ret);
  at = ov_pcm_tell (&self->vf);
  if (at != (ogg_int64_t) first)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "Vorbis seek to frame %" G_GUINT64_FORMAT " landed at %"
        G_GINT64_FORMAT, first, (gint64) at);
  self->pos = first;
  return TRUE;
}

static gboolean
vorbis_reader_read (GstSpdlAudioReader * reader, guint64 first,
    GstSpdlAudioFramesFunc func, gpointer user_data, GError ** error)
{
  GstSpdlVorbisReader *self = (GstSpdlVorbisReader *) reader;
  guint channels = GST_AUDIO_INFO_CHANNELS (&reader->info);

  if (first >= reader->n_frames)
    return TRUE;
  /* on from where the last read stopped, the decode goes on */
  if (self->pos != first && !vorbis_reader_seek (self, first, error)) {
    /* where the stream is now is unknown */
    self->pos = G_MAXUINT64;
    return FALSE;
  }

  /* each call gives frames, 0 at the end or an error (a hole included,
   * which ov_read_float() would otherwise step over): every turn of the
   * loop moves on or ends it */
  while (self->pos < reader->n_frames) {
    float **planes;
    int link = 0;
    long n = ov_read_float (&self->vf, &planes, READ_FRAMES, &link);
    guint64 run_first = self->pos;
    long i;
    guint c;

    if (n < 0) {
      self->pos = G_MAXUINT64;
      return vorbis_fail (error, "decoding", n);
    }
    if (n == 0)
      break;                    /* the end */
    if (link != 0) {
      /* opened as one link: cannot happen, but never mix streams */
      self->pos = G_MAXUINT64;
      return vorbis_fail (error, "decoding", OV_EBADLINK);
    }
    if (n > READ_FRAMES) {
      self->pos = G_MAXUINT64;
      return vorbis_fail (error, "decoding", OV_EFAULT);
    }
    self->pos += n;
    /* never past the length the file declares */
    if (self->pos > reader->n_frames)
      n -= self->pos - reader->n_frames;
    for (i = 0; i < n; i++)
      for (c = 0; c < channels; c++)
        self->pcm[i * channels + c] = planes[c][i];
    if (!func (self->pcm, run_first, n, user_data))
      break;
  }
  return TRUE;
}

static void
vorbis_reader_free (GstSpdlAudioReader * reader)
{
  GstSpdlVorbisReader *self = (GstSpdlVorbisReader *) reader;

  if (self->vf_open)
    ov_clear (&self->vf);
  g_bytes_unref (self->data);
  g_free (self);
}

static const GstSpdlAudioReaderFuncs vorbis_reader_funcs = {
  "vorbisfile",
  vorbis_reader_read,
  vorbis_reader_free,
};

GstSpdlAudioReader *
gst_spdl_vorbis_reader_open (GBytes * data, GError ** error)
{
  static const ov_callbacks callbacks = {
    mem_read, mem_seek, NULL, mem_tell
  };
  GstSpdlVorbisReader *self;
  const guint8 *d;
  gsize size;
  vorbis_info *vi;
  ogg_int64_t total;

  d = g_bytes_get_data (data, &size);
  if (!d || !gst_spdl_ogg_first_packet_is (d, size, "\x01vorbis", 7))
    return NULL;

  self = g_new0 (GstSpdlVorbisReader, 1);
  self->parent.funcs = &vorbis_reader_funcs;
  self->data = g_bytes_ref (data);
  self->bytes = d;
  self->size = size;
  if (ov_open_callbacks (self, &self->vf, NULL, 0, callbacks) < 0)
    goto decline;
  self->vf_open = TRUE;
  if (!ov_seekable (&self->vf) || ov_streams (&self->vf) != 1)
    goto decline;
  vi = ov_info (&self->vf, 0);
  total = ov_pcm_total (&self->vf, -1);
  if (vi == NULL || vi->channels < 1 || vi->channels > MAX_CHANNELS ||
      vi->rate <= 0 || vi->rate > G_MAXINT || total <= 0)
    goto decline;

  gst_audio_info_set_format (&self->parent.info, GST_AUDIO_FORMAT_F32,
      vi->rate, vi->channels, NULL);
  self->parent.n_frames = total;
  /* a stream whose first granule is not 0 starts wherever vorbisfile
   * counts from: the first read seeks */
  self->pos = ov_pcm_tell (&self->vf) == 0 ? 0 : G_MAXUINT64;
  return &self->parent;

decline:
  /* ov_open_callbacks() cleans up after itself when it fails */
  vorbis_reader_free (&self->parent);
  return NULL;
}
