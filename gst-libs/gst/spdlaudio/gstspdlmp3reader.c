/* GStreamer SPDL: MP3 (MPEG audio) files decoded by libmpg123
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* libmpg123 configured as gst-plugins-good's mpg123audiodec configures it
 * (no gapless trimming, no resampling, quiet), reading the file from
 * memory, 32-bit float out. (GStreamer 1.22 ranks mpg123audiodec and
 * gst-libav's avdec_mp3 both marginal, and decodebin plugs avdec_mp3,
 * FFmpeg's fixed-point decoder, 16-bit out: the pipeline's samples are
 * within 3.5e-5 of these, FFmpeg's float decoder's closer.)
 *
 * Only files whose frames gst_spdl_mpeg_audio_find_frames() understands
 * in full are taken (an ID3v2 tag, frames of one version, layer and
 * rate, at most an ID3v1 or APE tag after them), and libmpg123 is handed
 * exactly those frames. A first frame that is a Xing, Info or VBRI frame
 * (as FFmpeg reads one) is not audio and not handed on; the samples are
 * then FFmpeg's (and PyAV's): a LAME tag's encoder delay plus the
 * decoder's 529 trimmed at the start, its padding less 529 after the
 * counted frames at the end (within 5e-7 of FFmpeg's float decode, the
 * same count). The pipeline (mpegaudioparse, avdec_mp3, GStreamer 1.22)
 * trims nothing: such a file's clips start 1105 samples later in the
 * pipeline's decode than here. A tag counting fewer frames than there
 * are is declined (the pipeline decodes it); one counting more (a file
 * cut short) reads the frames there, untrimmed at the end. A file whose
 * frames stop at bytes that are no frame and start again after them
 * (damage, or files joined) is read as FFmpeg reads it (read_damaged):
 * libmpg123 gets the frames FFmpeg decodes, copied, and the reader's
 * damage says where the bytes are; where that cannot give FFmpeg's
 * samples the file is refused as corrupt (the pipeline would skip the
 * damage silently, with the tag untrimmed).
 *
 * A read from sample k decodes from a few frames before the one holding
 * k (first_frame_for) with a fresh stream, and its samples are those of a
 * decode from the start, bit for bit. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlaudioreader.h"
#include "gstspdlerrors.h"
#include "gstspdlformat.h"

#include <mpg123.h>
#include <stdio.h>
#include <string.h>

/* calls to libmpg123 in a row that give no samples before a read fails:
 * every frame decodes to samples, so only a broken stream gets here */
#define MAX_CALLS_WITHOUT_SAMPLES 64

typedef struct
{
  GstSpdlAudioReader parent;

  GBytes *data;
  const guint8 *frames;         /* the counted frames, nothing else */
  gsize size;
  guint frame_samples;          /* per channel, the same in every frame */
  guint layer;
  gboolean mpeg1;
  GArray *offsets;              /* of the frames, as far as found */
  GByteArray *stream;           /* the frames FFmpeg decodes, damage out */
  /* the file's samples are the decode's [skip, end) less [cut, cut_end)
   * (the padding of the first of files joined): its sample k is the
   * decode's skip + k, and cut_end - cut later from cut on */
  guint64 skip, end, cut, cut_end;

  mpg123_handle *handle;
  guint64 opened_at;            /* the frame libmpg123's stream starts at */
  gboolean fresh;               /* opened, nothing decoded yet */
  gsize pos;                    /* libmpg123's position in its stream */
} GstSpdlMp3Reader;

static mpg123_ssize_t
memory_read (void *user_data, void *buf, size_t count)
{
  GstSpdlMp3Reader *self = user_data;
  gsize start = g_array_index (self->offsets, gsize, self->opened_at);
  gsize n = MIN (count, self->size - start - self->pos);

  memcpy (buf, self->frames + start + self->pos, n);
  self->pos += n;
  return n;
}

static off_t
memory_lseek (void *user_data, off_t offset, int whence)
{
  GstSpdlMp3Reader *self = user_data;
  gsize size = self->size - g_array_index (self->offsets, gsize,
      self->opened_at);
  gint64 to;

  switch (whence) {
    case SEEK_SET:
      to = offset;
      break;
    case SEEK_CUR:
      to = (gint64) self->pos + offset;
      break;
    case SEEK_END:
      to = (gint64) size + offset;
      break;
    default:
      return -1;
  }
  if (to < 0 || (guint64) to > size)
    return -1;
  self->pos = to;
  return to;
}

/* The byte offset of frame @k (at most the frame count: the end): the
 * headers are walked once, as far as reads need */
static gsize
frame_offset (GstSpdlMp3Reader * self, guint64 k)
{
  while (self->offsets->len <= k) {
    gsize last = g_array_index (self->offsets, gsize, self->offsets->len - 1);
    guint samples;
    gsize next = last + gst_spdl_mpeg_audio_frame_size (self->frames + last,
        &samples);
    g_array_append_val (self->offsets, next);
  }
  return g_array_index (self->offsets, gsize, k);
}

/* Layer 3: the bytes of main data frame @k carries (after its header,
 * CRC and side info) */
static gsize
frame_main_data (GstSpdlMp3Reader * self, guint64 k)
{
  gsize at = frame_offset (self, k), size = frame_offset (self, k + 1) - at;
  const guint8 *p = self->frames + at;
  gboolean mpeg1 = ((p[1] >> 3) & 3) == 3, mono = (p[3] >> 6) == 3;
  guint head = (p[1] & 1) ? 4 : 6;      /* protection bit clear: a CRC */
  guint side = mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17);

  return size > head + side ? size - head - side : 0;
}

/* The first frame to decode for frame @k on to come out as in a decode
 * from the start. Frame @k's samples depend on the frame before only:
 * its second half (the IMDCT's overlap) and its last 512 samples (the
 * synthesis filter bank); a layer 3 frame's main data begins up to 511
 * bytes (MPEG-2: 255) before its own, in the frames before it (the bit
 * reservoir). So from frame @k - 1 on every frame must find all of its
 * main data: that many bytes of main data before frame @k - 1, and one
 * frame more, as libmpg123 keeps nothing of a first frame it cannot
 * decode (its main data begins before the stream). A layer 1 frame has
 * only 384 samples: two frames before (no reservoir in layers 1 and 2).
 * Then back to a multiple of 8 frames: the synthesis filter bank's ring
 * buffer turns every 16 slots of 32 samples (8 frames are a whole number
 * of turns in every layer), and libmpg123's sums differ in their last bit
 * at another phase (3e-8). */
static guint64
first_frame_for (GstSpdlMp3Reader * self, guint64 k)
{
  guint max_back = self->mpeg1 ? 511 : 255;
  gsize have = 0;
  guint64 s;

  if (k <= 2)
    return 0;
  s = k - 2;
  if (self->layer != 3)
    return s / 8 * 8;
  s = k - 1;
  while (s > 0 && have < max_back) {
    s--;
    have += frame_main_data (self, s);
  }
  s = s > 0 ? s - 1 : 0;
  return s / 8 * 8;
}

/* libmpg123 reading the frames from frame @k on, as a stream of its own:
 * nothing of the frames before is known to it */
static gboolean
open_at (GstSpdlMp3Reader * self, guint64 k)
{
  frame_offset (self, k);
  if (self->fresh && self->opened_at == k)
    return TRUE;
  mpg123_close (self->handle);
  self->opened_at = k;
  self->pos = 0;
  self->fresh = mpg123_open_handle (self->handle, self) == MPG123_OK;
  return self->fresh;
}

/* Decodes from first_frame_for() the frame holding the file's sample
 * @first: the output before it is dropped. Frame j of the stream
 * (libmpg123's count from where it was opened) holds the decode's samples
 * from (opened_at + j) * frame_samples: every frame decodes to
 * frame_samples (libmpg123 trims nothing). */
static gboolean
mp3_read (GstSpdlAudioReader * reader, guint64 first,
    GstSpdlAudioFramesFunc func, gpointer user_data, GError ** error)
{
  GstSpdlMp3Reader *self = (GstSpdlMp3Reader *) reader;
  guint bpf = GST_AUDIO_INFO_BPF (&reader->info);
  guint64 from = first + self->skip, frame;
  guint idle = 0;

  if (from >= self->cut)
    from += self->cut_end - self->cut;
  frame = from / self->frame_samples;

  if (first >= reader->n_frames)
    return TRUE;
  if (!open_at (self, first_frame_for (self, frame)))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "MP3: cannot start decoding at frame %" G_GUINT64_FORMAT ": %s",
        self->opened_at, mpg123_strerror (self->handle));
  self->fresh = FALSE;
  for (;;) {
    unsigned char *audio = NULL;
    size_t bytes = 0;
    off_t num = 0;
    guint64 at, skip, n;
    int ret = mpg123_decode_frame (self->handle, &num, &audio, &bytes);

    if (ret == MPG123_DONE)
      return TRUE;
    if (ret != MPG123_OK && ret != MPG123_NEW_FORMAT)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "MP3: decoding frame %" G_GUINT64_FORMAT " failed: %s",
          self->opened_at + MAX (num, 0), ret == MPG123_ERR ?
          mpg123_strerror (self->handle) : mpg123_plain_strerror (ret));
    n = audio ? bytes / bpf : 0;
    if (n == 0) {
      if (++idle > MAX_CALLS_WITHOUT_SAMPLES)
        return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
            "MP3: nothing decoded after frame %" G_GUINT64_FORMAT,
            self->opened_at + MAX (num, 0));
      continue;
    }
    idle = 0;
    if (num < 0 || n != self->frame_samples)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "MP3: frame %" G_GUINT64_FORMAT " decoded to %" G_GUINT64_FORMAT
          " samples, not %u", self->opened_at + MAX (num, 0), n,
          self->frame_samples);
    at = (self->opened_at + num) * self->frame_samples;
    if (at >= self->end)
      return TRUE;
    n = MIN (n, self->end - at);
    if (at + n <= from)
      continue;
    skip = from > at ? from - at : 0;
    /* the part before the cut, then the part after it */
    while (skip < n) {
      guint64 d = at + skip, stop = n, pos = d - self->skip;

      if (d < self->cut)
        stop = MIN (n, self->cut - at);
      else if (d < self->cut_end) {
        skip = MIN (n, self->cut_end - at);
        continue;
      } else
        pos -= self->cut_end - self->cut;
      if (!func (audio + skip * bpf, pos, stop - skip, user_data))
        return TRUE;
      skip = stop;
    }
  }
}

static void
mp3_free (GstSpdlAudioReader * reader)
{
  GstSpdlMp3Reader *self = (GstSpdlMp3Reader *) reader;

  if (self->handle) {
    mpg123_close (self->handle);
    mpg123_delete (self->handle);
  }
  g_array_free (self->offsets, TRUE);
  if (self->stream)
    g_byte_array_unref (self->stream);
  g_bytes_unref (self->data);
  g_free (self);
}

/* The header bits that must not change from frame to frame (version,
 * layer, rate: as gst_spdl_mpeg_audio_find_frames() compares them) */
static guint32
header_fixed (const guint8 * p)
{
  return (((guint32) p[0] << 24) | ((guint32) p[1] << 16) |
      ((guint32) p[2] << 8)) & 0xfffe0c00;
}

/* The size of the frame at @pos if it is one like the others (@fixed),
 * whole; else 0 */
static guint
frame_like (const guint8 * data, gsize size, gsize pos, guint32 fixed)
{
  guint samples, len;

  if (pos + 4 > size)
    return 0;
  len = gst_spdl_mpeg_audio_frame_size (data + pos, &samples);
  if (len == 0 || header_fixed (data + pos) != fixed || pos + len > size)
    return 0;
  return len;
}

/* Whether the frames end at @pos as gst_spdl_mpeg_audio_find_frames()
 * lets them: the file's end, an ID3v1 or APE tag, a last frame cut short */
static gboolean
frames_end (const guint8 * data, gsize size, gsize pos, guint32 fixed)
{
  guint samples, len;

  if (pos + 4 > size || (size - pos >= 3 && memcmp (data + pos, "TAG",
              3) == 0) || (size - pos >= 8 && memcmp (data + pos,
              "APETAGEX", 8) == 0))
    return TRUE;
  len = gst_spdl_mpeg_audio_frame_size (data + pos, &samples);
  return len != 0 && header_fixed (data + pos) == fixed && pos + len > size;
}

/* Layer 3: how many bytes before its own the main data of the frame at
 * @p begins (the bit reservoir) */
static guint
main_data_begin (const guint8 * p)
{
  guint at = (p[1] & 1) ? 4 : 6;        /* protection bit clear: a CRC */

  if (((p[1] >> 3) & 3) == 3)
    return (p[at] << 1) | (p[at + 1] >> 7);
  return p[at];
}

/* Frames that stop at @pos before the file's end, read as FFmpeg reads
 * them (libavcodec's mpegaudio parser and decoder): the parser takes the
 * next header anywhere after, with the bytes before it in one packet;
 * the decoder skips zero bytes at a packet's start and drops a packet
 * that then starts with no header ("Header missing"), and the frame in
 * it, its state untouched. So FFmpeg decodes the frames with the damage
 * and the frame after it left out; after zero bytes only, that frame
 * kept. @stream gets the frames from @pos on that FFmpeg decodes;
 * @damage says where the first damage starts. Refused (FALSE, @error)
 * where libmpg123 cannot decode the same from them: the header after the
 * damage is none of this stream's frames (a sync word by chance, another
 * rate), or the frame after a dropped one takes main data from the
 * dropped frame's bytes (FFmpeg then decodes it from stale bytes).
 * FALSE alone where no frame follows (junk at the end: not read here). */
static gboolean
read_damaged (const guint8 * data, gsize size, gsize pos, guint32 fixed,
    guint layer, GByteArray * stream, gsize * damage, gsize * resume,
    GError ** error)
{
  *damage = *resume = G_MAXSIZE;
  for (;;) {
    guint len = frame_like (data, size, pos, fixed), samples;
    gsize q, i;

    if (len) {
      g_byte_array_append (stream, data + pos, len);
      pos += len;
      continue;
    }
    if (frames_end (data, size, pos, fixed))
      return TRUE;
    if (*damage == G_MAXSIZE)
      *damage = pos;
    /* the parser's next packet: the bytes up to the next header, and the
     * frame that header says */
    for (q = pos; q + 4 <= size; q++)
      if ((len = gst_spdl_mpeg_audio_frame_size (data + q, &samples)) != 0)
        break;
    if (q + 4 > size)
      return FALSE;
    if (*resume == G_MAXSIZE)
      *resume = q;
    for (i = pos; i < q && data[i] == 0; i++);
    if (i == q) {
      /* decoded: it must be one of this stream's frames */
      if (frame_like (data, size, q, fixed) == 0)
        return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
            "MP3: damaged: bytes %" G_GSIZE_FORMAT " on (of %"
            G_GSIZE_FORMAT ") are no MPEG audio frame, and FFmpeg decodes "
            "bytes %" G_GSIZE_FORMAT " as a frame of another kind", *damage,
            size, q);
      pos = q;
      continue;
    }
    /* dropped, with the frame in it; the decoder's state is kept, so the
     * next frame decoded takes main data from the frame before the
     * damage where the file had it in the dropped bytes: FFmpeg's and
     * libmpg123's handling of such stale bytes differ */
    pos = q + len;
    while (pos + 4 <= size && frame_like (data, size, pos, fixed) == 0 &&
        data[pos] == 0)
      pos++;
    if (layer == 3 && frame_like (data, size, pos, fixed) &&
        main_data_begin (data + pos) != 0)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "MP3: damaged: bytes %" G_GSIZE_FORMAT " to %" G_GSIZE_FORMAT
          " (of %" G_GSIZE_FORMAT ") are no MPEG audio frame; FFmpeg drops "
          "the frame after them and decodes the next from other bytes "
          "than the file has for it", *damage, q, size);
  }
}

static const GstSpdlAudioReaderFuncs mp3_funcs = {
  "mp3",
  mp3_read,
  mp3_free,
};

GstSpdlAudioReader *
gst_spdl_mp3_reader_open (GBytes * data, GError ** error)
{
  static gsize initialized = 0;
  static gboolean usable = FALSE;
  GstSpdlMp3Reader *self;
  GstSpdlMpegAudioTag tag;
  const guint8 *bytes;
  gsize size, offset = 0, length = 0, damage = 0, resume = 0, before, pos;
  guint rate, channels, frame_samples, samples, n_before;
  guint64 n_samples, skip = 0, end, cut = 0, cut_end = 0;
  GByteArray *stream = NULL;
  gboolean joined = FALSE;
  long got_rate = 0;
  int got_channels = 0, got_encoding = 0, err = MPG123_OK;

  /* a no-op since libmpg123 1.27, needed before */
  if (g_once_init_enter (&initialized)) {
    usable = mpg123_init () == MPG123_OK;
    g_once_init_leave (&initialized, 1);
  }
  bytes = g_bytes_get_data (data, &size);
  if (!usable || bytes == NULL)
    return NULL;
  if (!gst_spdl_mpeg_audio_find_frames (bytes, size, &rate, &channels,
          &n_samples, &offset, &length, &tag)) {
    /* frames, bytes that are not, frames again: damage, or files joined
     * (an ID3v2 tag in the middle), decoded as FFmpeg decodes them */
    if (length == 0)
      return NULL;
    gst_spdl_mpeg_audio_frame_size (bytes + offset, &frame_samples);
    before = length;
    stream = g_byte_array_sized_new (size);
    g_byte_array_append (stream, bytes + offset, length);
    if (!read_damaged (bytes, size, offset + length, header_fixed (bytes +
                offset), 4 - ((bytes[offset + 1] >> 1) & 3), stream,
            &damage, &resume, error)) {
      g_byte_array_unref (stream);
      return NULL;
    }
    /* frames of one size in samples: count them */
    for (n_samples = 0, pos = 0; pos < stream->len; n_samples +=
        frame_samples)
      pos += gst_spdl_mpeg_audio_frame_size (stream->data + pos, &samples);
    for (n_before = 0, pos = 0; pos < before; n_before++)
      pos += gst_spdl_mpeg_audio_frame_size (stream->data + pos, &samples);
    joined = size - damage >= 10 && memcmp (bytes + damage, "ID3", 3) == 0;
    /* FFmpeg's mp3 demuxer: a file over 1/16 larger than the Xing tag's
     * byte count is files joined, and the tag's frame count is not used
     * (no trimming at the end) */
    if (tag.bytes && size > tag.bytes && size - tag.bytes > tag.bytes >> 4)
      tag.frames = 0;
    /* a LAME tag's end trimming is by its frame count: with damage
     * before that count, FFmpeg trims at a place that is no longer the
     * encoder's end */
    if (tag.lame && tag.frames && tag.frames != n_before) {
      g_byte_array_unref (stream);
      gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "MP3: damaged: bytes %" G_GSIZE_FORMAT " on (of %" G_GSIZE_FORMAT
          ") are no MPEG audio frame, inside the frames its LAME tag "
          "counts", damage, size);
      return NULL;
    }
  }
  end = n_samples;
  if (tag.present) {
    /* FFmpeg's trimming (libavformat's mp3 demuxer): the encoder's delay
     * and the decoder's (529) at the start; at the end the padding, less
     * the decoder's delay, after the frames the tag counts. A count
     * larger than the frames here (a file cut short) trims nothing
     * there; a smaller one (frames added after, files joined) does not
     * describe the file: the pipeline decodes it. */
    gst_spdl_mpeg_audio_frame_size (bytes + offset, &frame_samples);
    if (!stream && tag.frames && tag.frames < n_samples / frame_samples)
      return NULL;
    if (tag.lame) {
      skip = tag.delay + 529;
      if (tag.frames && !stream)
        end = MIN (end, (guint64) MAX ((gint64) tag.frames * frame_samples -
                (gint64) tag.padding + 529, 0));
      else if (tag.frames && tag.padding > 529) {
        /* files joined: FFmpeg trims the first one's padding, and the
         * frames after it are decoded whole */
        cut_end = (guint64) tag.frames * frame_samples;
        cut = cut_end - tag.padding + 529;
      }
    }
    if (end <= skip + (cut_end - MIN (cut, cut_end))) {
      if (stream)
        g_byte_array_unref (stream);
      return NULL;
    }
  }

  self = g_new0 (GstSpdlMp3Reader, 1);
  self->parent.funcs = &mp3_funcs;
  self->skip = skip;
  self->end = end;
  self->cut = cut < cut_end ? cut : G_MAXUINT64;
  self->cut_end = cut < cut_end ? cut_end : G_MAXUINT64;
  self->parent.n_frames = end - skip - (cut < cut_end ? cut_end - cut : 0);
  gst_audio_info_set_format (&self->parent.info, GST_AUDIO_FORMAT_F32,
      rate, channels, NULL);
  self->data = g_bytes_ref (data);
  self->frames = bytes + offset;
  self->size = length;
  if (stream) {
    self->stream = stream;
    self->frames = stream->data;
    self->size = stream->len;
    self->parent.damage = g_strdup_printf ("MP3: bytes %" G_GSIZE_FORMAT
        " to %" G_GSIZE_FORMAT " (of %" G_GSIZE_FORMAT ") are %s", damage,
        resume, size, joined ? "an ID3v2 tag: files joined" :
        "no MPEG audio frame");
  }
  gst_spdl_mpeg_audio_frame_size (self->frames, &self->frame_samples);
  self->layer = 4 - ((self->frames[1] >> 1) & 3);
  self->mpeg1 = ((self->frames[1] >> 3) & 3) == 3;
  self->offsets = g_array_new (FALSE, TRUE, sizeof (gsize));
  g_array_set_size (self->offsets, 1);
  self->handle = mpg123_new (NULL, &err);
  if (self->handle == NULL)
    goto fail;
  /* as mpg123audiodec: no gapless trimming (there is no LAME tag to
   * trim by anyway), no resampling, nothing printed */
  if (mpg123_param (self->handle, MPG123_FLAGS, MPG123_QUIET, 0) !=
      MPG123_OK ||
      mpg123_format_none (self->handle) != MPG123_OK ||
      mpg123_format (self->handle, rate,
          channels == 1 ? MPG123_MONO : MPG123_STEREO,
          MPG123_ENC_FLOAT_32) != MPG123_OK ||
      mpg123_replace_reader_handle (self->handle, memory_read, memory_lseek,
          NULL) != MPG123_OK ||
      !open_at (self, 0) || mpg123_getformat (self->handle, &got_rate,
          &got_channels, &got_encoding) != MPG123_OK)
    goto fail;
  /* the frames were read as libmpg123 reads them */
  if (got_rate != (long) rate || got_channels != (int) channels ||
      got_encoding != MPG123_ENC_FLOAT_32)
    goto fail;
  return &self->parent;

fail:
  /* libmpg123 does not take this file: the pipeline decodes it and says
   * what is wrong with it */
  g_free (self->parent.damage);
  mp3_free (&self->parent);
  return NULL;
}
