/* GStreamer SPDL: FLAC files decoded by libFLAC without a pipeline
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* libFLAC's stream decoder (what flacdec runs) over the file in memory.
 * Samples are handed out as S32, shifted to full scale: the float
 * audioconvert makes of flacdec's S8/S16/S24_32/S32 output is the same
 * (x / 2^(bps - 1)), to the bit. Taken: a native FLAC stream ("fLaC" at
 * the start) of 1 to 8 channels (at the positions FLAC's format gives
 * them, in GStreamer's order already, as FFmpeg decodes them; flacdec
 * 1.22 labels them so too, but moves 6.1's and 7.1's back channels
 * before FC and LFE), of any sample size (4 to 32 bits; flacdec decodes
 * 8, 12, 16, 20, 24 and 32 only); one whose
 * STREAMINFO says no length (written to a pipe) is decoded once at open
 * to count it. Anything else goes to the pipeline. A frame libFLAC
 * reports as damaged (lost sync, bad header, CRC mismatch, unparseable)
 * fails the read, named by the sample where it starts: the stream would
 * have a hole there. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlaudioreader.h"
#include "gstspdlerrors.h"

#include <FLAC/stream_decoder.h>
#include <string.h>

#define MAX_CHANNELS 8

/* FLAC's channel assignments (the format's specification), as flacdec
 * labels them */
#define P(pos) GST_AUDIO_CHANNEL_POSITION_ ## pos
static const GstAudioChannelPosition channel_positions[MAX_CHANNELS][8] = {
  {P (MONO)},
  {P (FRONT_LEFT), P (FRONT_RIGHT)},
  {P (FRONT_LEFT), P (FRONT_RIGHT), P (FRONT_CENTER)},
  {P (FRONT_LEFT), P (FRONT_RIGHT), P (REAR_LEFT), P (REAR_RIGHT)},
  {P (FRONT_LEFT), P (FRONT_RIGHT), P (FRONT_CENTER), P (REAR_LEFT),
      P (REAR_RIGHT)},
  {P (FRONT_LEFT), P (FRONT_RIGHT), P (FRONT_CENTER), P (LFE1),
      P (REAR_LEFT), P (REAR_RIGHT)},
  {P (FRONT_LEFT), P (FRONT_RIGHT), P (FRONT_CENTER), P (LFE1),
      P (REAR_CENTER), P (SIDE_LEFT), P (SIDE_RIGHT)},
  {P (FRONT_LEFT), P (FRONT_RIGHT), P (FRONT_CENTER), P (LFE1),
      P (REAR_LEFT), P (REAR_RIGHT), P (SIDE_LEFT), P (SIDE_RIGHT)},
};
#undef P

typedef struct
{
  GstSpdlAudioReader reader;
  GBytes *bytes;
  const guint8 *data;
  gsize size, pos;
  FLAC__StreamDecoder *decoder;
  guint channels, bps;
  gboolean have_info;

  /* where the decoder's next frame starts, G_MAXUINT64 unknown */
  guint64 next;
  gint32 *frames;               /* one frame, interleaved */
  gsize frames_size;

  /* the read in progress */
  GstSpdlAudioFramesFunc func;
  gpointer user_data;
  gboolean stop;
  const gchar *damage;          /* what libFLAC reported */
  guint64 damage_at;            /* the sample where it was found */
} FlacReader;

static FLAC__StreamDecoderReadStatus
on_read (const FLAC__StreamDecoder * decoder, FLAC__byte buffer[],
    size_t *bytes, void *user_data)
{
  FlacReader *self = user_data;
  gsize n = MIN (*bytes, self->size - self->pos);

  *bytes = n;
  if (n == 0)
    return FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM;
  memcpy (buffer, self->data + self->pos, n);
  self->pos += n;
  return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE;
}

static FLAC__StreamDecoderSeekStatus
on_seek (const FLAC__StreamDecoder * decoder, FLAC__uint64 offset,
    void *user_data)
{
  FlacReader *self = user_data;

  if (offset > self->size)
    return FLAC__STREAM_DECODER_SEEK_STATUS_ERROR;
  self->pos = offset;
  return FLAC__STREAM_DECODER_SEEK_STATUS_OK;
}

static FLAC__StreamDecoderTellStatus
on_tell (const FLAC__StreamDecoder * decoder, FLAC__uint64 * offset,
    void *user_data)
{
  *offset = ((FlacReader *) user_data)->pos;
  return FLAC__STREAM_DECODER_TELL_STATUS_OK;
}

static FLAC__StreamDecoderLengthStatus
on_length (const FLAC__StreamDecoder * decoder, FLAC__uint64 * length,
    void *user_data)
{
  *length = ((FlacReader *) user_data)->size;
  return FLAC__STREAM_DECODER_LENGTH_STATUS_OK;
}

static FLAC__bool
on_eof (const FLAC__StreamDecoder * decoder, void *user_data)
{
  FlacReader *self = user_data;

  return self->pos >= self->size;
}

/* A frame (from inside a seek: the target frame, trimmed to start at the
 * target sample) */
static FLAC__StreamDecoderWriteStatus
on_write (const FLAC__StreamDecoder * decoder, const FLAC__Frame * frame,
    const FLAC__int32 * const buffer[], void *user_data)
{
  FlacReader *self = user_data;
  guint channels = self->channels, c, shift;
  guint n = frame->header.blocksize, i;
  guint64 first;
  gint32 *out;

  if (frame->header.channels != channels ||
      frame->header.bits_per_sample != self->bps ||
      (frame->header.sample_rate != 0 &&
          frame->header.sample_rate != (guint) self->reader.info.rate)) {
    /* flacdec would renegotiate mid-stream: not a stream for a reader */
    self->damage = "the stream changes its format";
    return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
  }
  if (frame->header.number_type == FLAC__FRAME_NUMBER_TYPE_SAMPLE_NUMBER)
    first = frame->header.number.sample_number;
  else if (self->next != G_MAXUINT64)
    first = self->next;
  else {
    self->damage = "a frame of unknown position";
    return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
  }
  if (self->next != G_MAXUINT64 && first != self->next) {
    self->damage = "frames are missing";
    return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
  }
  self->next = first + n;
  /* a frame libFLAC reported damaged (decoded as silence) fails the read */
  if (self->func == NULL || self->stop || self->damage || n == 0)
    return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
  if ((gsize) n * channels > self->frames_size) {
    g_free (self->frames);
    self->frames_size = (gsize) n * channels;
    self->frames = g_new (gint32, self->frames_size);
  }
  /* to full scale: what flacdec's output becomes in audioconvert */
  shift = 32 - self->bps;
  out = self->frames;
  for (c = 0; c < channels; c++) {
    const FLAC__int32 *in = buffer[c];
    for (i = 0; i < n; i++)
      out[i * channels + c] = (gint32) ((guint32) in[i] << shift);
  }
  if (!self->func (self->frames, first, n, self->user_data))
    self->stop = TRUE;
  return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

static void
on_metadata (const FLAC__StreamDecoder * decoder,
    const FLAC__StreamMetadata * metadata, void *user_data)
{
  FlacReader *self = user_data;
  const FLAC__StreamMetadata_StreamInfo *si;

  if (metadata->type != FLAC__METADATA_TYPE_STREAMINFO)
    return;
  si = &metadata->data.stream_info;
  self->channels = si->channels;
  self->bps = si->bits_per_sample;
  /* 0: not said (counted at open) */
  if (si->total_samples > 0)
    self->reader.n_frames = si->total_samples;
  if (si->sample_rate > 0 && si->channels > 0 &&
      si->channels <= MAX_CHANNELS)
    gst_audio_info_set_format (&self->reader.info, GST_AUDIO_FORMAT_S32,
        si->sample_rate, si->channels, channel_positions[si->channels - 1]);
  self->have_info = TRUE;
}

static void
on_error (const FLAC__StreamDecoder * decoder,
    FLAC__StreamDecoderErrorStatus status, void *user_data)
{
  FlacReader *self = user_data;

  if (self->damage == NULL) {
    self->damage = FLAC__StreamDecoderErrorStatusString[status];
    /* the frames before the damage were decoded */
    if (self->next != G_MAXUINT64)
      self->damage_at = self->next;
  }
}

static gboolean
flac_read (GstSpdlAudioReader * reader, guint64 first,
    GstSpdlAudioFramesFunc func, gpointer user_data, GError ** error)
{
  FlacReader *self = (FlacReader *) reader;
  gboolean ok = TRUE;

  if (first >= reader->n_frames)
    return TRUE;
  self->func = func;
  self->user_data = user_data;
  self->stop = FALSE;
  self->damage = NULL;
  self->damage_at = first;
  if (first != self->next) {
    /* a seek delivers the frame it lands in, from @first on */
    self->next = G_MAXUINT64;
    if (!FLAC__stream_decoder_seek_absolute (self->decoder, first)) {
      if (self->damage == NULL)
        self->damage = "the seek failed";
      ok = FALSE;
    } else if (self->damage == NULL && self->next == G_MAXUINT64) {
      self->damage = "the seek landed on no frame";
      ok = FALSE;
    }
  }
  while (ok && !self->stop && self->damage == NULL) {
    FLAC__StreamDecoderState state;
    guint64 before = self->next;
    gsize pos = self->pos;

    if (!FLAC__stream_decoder_process_single (self->decoder) &&
        self->damage == NULL)
      self->damage = FLAC__StreamDecoderStateString
          [FLAC__stream_decoder_get_state (self->decoder)];
    state = FLAC__stream_decoder_get_state (self->decoder);
    if (state == FLAC__STREAM_DECODER_END_OF_STREAM)
      break;
    if (state >= FLAC__STREAM_DECODER_OGG_ERROR && self->damage == NULL)
      self->damage = FLAC__StreamDecoderStateString[state];
    /* never spin on input that yields nothing */
    if (self->damage == NULL && self->next == before && self->pos == pos)
      self->damage = "the decoder made no progress";
  }
  self->func = NULL;
  self->user_data = NULL;
  if (self->damage) {
    /* the decoder's position is unknown now: the next read seeks (the
     * seek needs a decoder left in an error state flushed) */
    self->next = G_MAXUINT64;
    if (FLAC__stream_decoder_get_state (self->decoder) >
        FLAC__STREAM_DECODER_END_OF_STREAM)
      FLAC__stream_decoder_flush (self->decoder);
    /* the file ends inside a frame (truncated): that is its end, as for
     * flacdec, and the caller sees fewer frames than declared */
    if (self->pos < self->size)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "FLAC stream damaged near sample %" G_GUINT64_FORMAT ": %s",
          self->damage_at, self->damage);
  }
  return TRUE;
}

static void
flac_free (GstSpdlAudioReader * reader)
{
  FlacReader *self = (FlacReader *) reader;

  if (self->decoder)
    FLAC__stream_decoder_delete (self->decoder);
  g_bytes_unref (self->bytes);
  g_free (self->frames);
  g_free (self);
}

/* A stream whose STREAMINFO does not say its length (total_samples 0: as
 * written to a pipe, ffmpeg's -f flac -) is decoded once to count its
 * samples, which finds any damage too (the file is refused then, as a
 * read across it would fail); the decoder is then back at the start.
 * FALSE and @error for damage; FALSE alone where libFLAC fails else. */
static gboolean
count_samples (FlacReader * self, GError ** error)
{
  FLAC__bool done;

  self->damage_at = 0;
  done = FLAC__stream_decoder_process_until_end_of_stream (self->decoder);
  if (self->damage == NULL && (!done ||
          FLAC__stream_decoder_get_state (self->decoder) !=
          FLAC__STREAM_DECODER_END_OF_STREAM))
    self->damage = FLAC__StreamDecoderStateString
        [FLAC__stream_decoder_get_state (self->decoder)];
  /* a file ending inside a frame ends there, as in a read */
  if (self->damage && self->pos < self->size)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "FLAC stream damaged near sample %" G_GUINT64_FORMAT ": %s",
        self->damage_at, self->damage);
  if (self->next == G_MAXUINT64)
    return FALSE;
  self->reader.n_frames = self->next;
  self->damage = NULL;
  if (!FLAC__stream_decoder_reset (self->decoder) ||
      !FLAC__stream_decoder_process_until_end_of_metadata (self->decoder) ||
      self->damage != NULL)
    return FALSE;
  self->next = 0;
  return TRUE;
}

static const GstSpdlAudioReaderFuncs flac_funcs = {
  "flac", flac_read, flac_free,
};

GstSpdlAudioReader *
gst_spdl_flac_reader_open (GBytes * bytes, GError ** error)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  FlacReader *self;

  if (size < 4 || memcmp (data, "fLaC", 4) != 0)
    return NULL;
  self = g_new0 (FlacReader, 1);
  self->reader.funcs = &flac_funcs;
  self->bytes = g_bytes_ref (bytes);
  self->data = data;
  self->size = size;
  self->next = 0;
  self->decoder = FLAC__stream_decoder_new ();
  if (self->decoder == NULL)
    goto decline;
  FLAC__stream_decoder_set_md5_checking (self->decoder, FALSE);
  if (FLAC__stream_decoder_init_stream (self->decoder, on_read, on_seek,
          on_tell, on_length, on_eof, on_write, on_metadata, on_error,
          self) != FLAC__STREAM_DECODER_INIT_STATUS_OK)
    goto decline;
  if (!FLAC__stream_decoder_process_until_end_of_metadata (self->decoder) ||
      self->damage != NULL || !self->have_info)
    goto decline;
  if (self->reader.info.rate == 0 || self->channels == 0 ||
      self->channels > MAX_CHANNELS)
    goto decline;
  /* every size FLAC has: flacdec (1.22) refuses those outside 8, 12,
   * 16, 20, 24 and 32 bits ("No valid frames decoded"), FFmpeg decodes
   * them */
  if (self->bps < 4 || self->bps > 32)
    goto decline;
  if (self->reader.n_frames == 0 && !count_samples (self, error))
    goto decline;
  if (self->reader.n_frames == 0)
    goto decline;
  return &self->reader;

decline:
  flac_free (&self->reader);
  return NULL;
}
