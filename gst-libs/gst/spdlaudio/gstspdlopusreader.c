/* GStreamer SPDL: Ogg Opus files demuxed by libopusfile, decoded by FFmpeg
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* An Ogg Opus file read straight from memory by libopusfile (Xiph's Ogg
 * layer: pages, granule positions, pre-skip, end trimming, holes), its
 * packets decoded by FFmpeg's Opus decoder (libavcodec's, which
 * avdec_opus, torchcodec and the ffmpeg tool use) through opusfile's
 * decode callback rather than by libopus: FFmpeg's decoder took 0.4 of
 * libopus's CPU on 27 kb/s speech (docs/performance.md, "Audio
 * decoders"), and it is the decoder the exactness tests compare with.
 * Against oggdemux ! opusdec it seeks to the exact sample (bisecting
 * pages by granule position, then 600 ms of pre-roll with the decoder
 * reset: the same samples on every read of a span, those of a decode
 * from the start) rather than to the start of the page holding it, and
 * decodes in the calling thread.
 *
 * Taken: Ogg whose first stream is Opus, one link (a chained file goes
 * to the pipeline), 1 or 2 channels (opusdec orders more channels
 * differently), a known length. Output: 48 kHz float, the header's output
 * gain applied (as opusdec's apply-gain, its default, and FFmpeg do),
 * stereo without phase inversion (as opusdec); not clipped (opusdec
 * gives S16). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlaudioreader.h"
#include "gstspdlerrors.h"
#include "gstspdlformat.h"

#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
#include <opusfile.h>
#include <string.h>

/* opusfile's largest packet: 120 ms at 48 kHz, per channel */
#define MAX_FRAME_SIZE 5760
#define MAX_CHANNELS 2

typedef struct
{
  GstSpdlAudioReader parent;
  GBytes *data;
  OggOpusFile *of;
  AVCodecContext *codec;        /* FFmpeg's Opus decoder */
  AVPacket *packet;
  AVFrame *frame;
  guint64 pos;                  /* the next frame op_read_float() gives */
  gfloat pcm[MAX_FRAME_SIZE * MAX_CHANNELS];
} GstSpdlOpusReader;

static const gchar *
opus_error_name (int err)
{
  switch (err) {
    case OP_HOLE:
      return "a hole in the data (a missing or corrupt page)";
    case OP_EREAD:
      return "a read error";
    case OP_EFAULT:
      return "an internal error (OP_EFAULT)";
    case OP_EIMPL:
      return "an unsupported feature";
    case OP_EINVAL:
      return "an invalid position";
    case OP_ENOTFORMAT:
      return "no Ogg Opus data";
    case OP_EBADHEADER:
      return "a corrupt header";
    case OP_EVERSION:
      return "an unsupported version";
    case OP_EBADPACKET:
      return "a packet that does not decode";
    case OP_EBADLINK:
      return "a link that cannot be found";
    case OP_ENOSEEK:
      return "a stream that cannot seek";
    case OP_EBADTIMESTAMP:
      return "a bad granule position";
    default:
      return "an unknown error";
  }
}

static gboolean
opus_fail (GError ** error, const gchar * what, int err)
{
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
      "Opus %s: %s (opusfile %d)", what, opus_error_name (err), err);
}

/* opusfile seeks to 80 ms before the frame (RFC 7845's pre-roll) with a
 * fresh decoder, which is not enough: the decoder's state (SILK's and
 * CELT's predicted energies and gains) takes longer to converge on a
 * continuous decode's. With libopus, on 64 speech files (SILK, 27 kb/s)
 * at 20 points each: 80 ms off by up to 0.24, 580 ms by 3e-3, 1080 ms
 * identical. With FFmpeg's decoder, on 8 speech recordings (27 kb/s, 16
 * and 48 kHz) at 12 points each: 80 ms off by up to 0.024, 200 ms by
 * 2.6e-5, 400 ms identical; so 600 ms. A seek lands this much earlier
 * still, and what comes before the frame asked for is dropped. */
#define PREROLL_FRAMES 28800

/* Positions the stream so that the next op_read_float() gives frame
 * @start, the same way whatever was read before: op_pcm_seek() goes on
 * decoding from where the stream is when the frame is less than 90 ms
 * ahead, so it seeks from the start. */
static gboolean
opus_reader_seek (GstSpdlOpusReader * self, guint64 start, GError ** error)
{
  ogg_int64_t at;
  int ret;

  ret = op_raw_seek (self->of, 0);
  if (ret >= 0)
    ret = op_pcm_seek (self->of, (ogg_int64_t) start);
  if (ret < 0)
    return opus_fail (error, "seek", ret);
  at = op_pcm_tell (self->of);
  if (at != (ogg_int64_t) start)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "Opus seek to frame %" G_GUINT64_FORMAT " landed at %"
        G_GINT64_FORMAT, start, (gint64) at);
  /* a fresh decoder, as opusfile resets libopus's on a seek (nothing is
   * decoded until the next op_read_float()) */
  avcodec_flush_buffers (self->codec);
  self->pos = start;
  return TRUE;
}

static gboolean
opus_reader_read (GstSpdlAudioReader * reader, guint64 first,
    GstSpdlAudioFramesFunc func, gpointer user_data, GError ** error)
{
  GstSpdlOpusReader *self = (GstSpdlOpusReader *) reader;
  guint channels = GST_AUDIO_INFO_CHANNELS (&reader->info);
  guint64 preroll;

  if (first >= reader->n_frames)
    return TRUE;
  /* on from where the last read stopped, the decode goes on */
  preroll = reader->exact ? PREROLL_FRAMES : 0;
  if (self->pos != first && !opus_reader_seek (self,
          first > preroll ? first - preroll : 0, error)) {
    /* where the stream is now is unknown */
    self->pos = G_MAXUINT64;
    return FALSE;
  }

  /* each call gives at least one frame, 0 at the end or an error: the
   * loop ends, and never delivers past the length the file declares */
  while (self->pos < reader->n_frames) {
    int n = op_read_float (self->of, self->pcm, G_N_ELEMENTS (self->pcm),
        NULL);
    guint64 run_first = self->pos, skip;

    if (n < 0) {
      self->pos = G_MAXUINT64;
      return opus_fail (error, "decoding", n);
    }
    if (n == 0)
      break;
    self->pos += n;
    if (self->pos <= first)
      continue;                 /* pre-roll */
    if (self->pos > reader->n_frames)
      n -= self->pos - reader->n_frames;
    skip = run_first < first ? first - run_first : 0;
    if (!func (self->pcm + skip * channels, run_first + skip, n - skip,
            user_data))
      break;
  }
  return TRUE;
}

/* Decodes opusfile's packet with FFmpeg's decoder into @pcm (interleaved
 * float, as op_read_float() wants), exactly the packet's @n_samples. */
static int
opus_reader_decode (void *user_data, OpusMSDecoder * decoder, void *pcm,
    const ogg_packet * op, int n_samples, int n_channels, int format, int li)
{
  GstSpdlOpusReader *self = user_data;
  AVFrame *frame = self->frame;
  gfloat *out = pcm;
  int c, i;

  if (format != OP_DEC_FORMAT_FLOAT)
    return OP_EIMPL;
  self->packet->data = op->packet;
  self->packet->size = op->bytes;
  if (avcodec_send_packet (self->codec, self->packet) < 0 ||
      avcodec_receive_frame (self->codec, frame) < 0)
    return OP_EBADPACKET;
  /* one packet in, its samples out: never a frame more or less */
  if (frame->nb_samples != n_samples || frame->format != AV_SAMPLE_FMT_FLTP
      || frame->ch_layout.nb_channels != n_channels) {
    av_frame_unref (frame);
    return OP_EBADPACKET;
  }
  for (c = 0; c < n_channels; c++) {
    const gfloat *plane = (const gfloat *) frame->extended_data[c];

    for (i = 0; i < n_samples; i++)
      out[i * n_channels + c] = plane[i];
  }
  av_frame_unref (frame);
  return 0;
}

/* FFmpeg's Opus decoder for the stream whose ID header (OpusHead, alone
 * on the first page) is at the start of @d: the header is its extradata
 * (channels, pre-skip, output gain, mapping). Phase inversion of
 * intensity-coded stereo bands off, as opusdec (phase-inversion, FALSE by
 * default): on a 48 kb/s stereo file the two differ by 0.35. */
static AVCodecContext *
opus_codec_open (const guint8 * d, gsize size)
{
  const AVCodec *codec = avcodec_find_decoder (AV_CODEC_ID_OPUS);
  AVCodecContext *ctx;
  gsize n_segments = d[26], len = 0, i;

  if (!codec || size < 27 + n_segments)
    return NULL;
  for (i = 0; i < n_segments; i++)
    len += d[27 + i];
  if (len < 19 || size < 27 + n_segments + len)
    return NULL;
  ctx = avcodec_alloc_context3 (codec);
  if (!ctx)
    return NULL;
  ctx->extradata = av_mallocz (len + AV_INPUT_BUFFER_PADDING_SIZE);
  if (!ctx->extradata) {
    avcodec_free_context (&ctx);
    return NULL;
  }
  memcpy (ctx->extradata, d + 27 + n_segments, len);
  ctx->extradata_size = len;
  ctx->request_sample_fmt = AV_SAMPLE_FMT_FLTP;
  /* the header's pre-skip is opusfile's to drop, at any position: the
   * decoder would drop it again from its first packets */
  ctx->flags2 |= AV_CODEC_FLAG2_SKIP_MANUAL;
  /* a frame that does not decode is an error, not silence: FFmpeg's
   * decoder would otherwise log it and give zeros in its place */
  ctx->err_recognition |= AV_EF_EXPLODE;
  if (av_opt_set_int (ctx->priv_data, "apply_phase_inv", 0, 0) < 0 ||
      avcodec_open2 (ctx, codec, NULL) < 0)
    avcodec_free_context (&ctx);
  return ctx;
}

static void
opus_reader_free (GstSpdlAudioReader * reader)
{
  GstSpdlOpusReader *self = (GstSpdlOpusReader *) reader;

  op_free (self->of);
  av_frame_free (&self->frame);
  av_packet_free (&self->packet);
  avcodec_free_context (&self->codec);
  g_bytes_unref (self->data);
  g_free (self);
}

static const GstSpdlAudioReaderFuncs opus_reader_funcs = {
  "opusfile+avcodec",
  opus_reader_read,
  opus_reader_free,
};

/* The rate opusdec outputs (its caps' nearest to the header's input
 * rate; 0 is unspecified: 48 kHz), which a limit on the rate was checked
 * against: a 16 kHz file declares 16000 Hz, though read at 48 kHz */
static guint
opusdec_rate (const OpusHead * head)
{
  static const guint rates[] = { 48000, 24000, 16000, 12000, 8000 };
  guint input = head && head->input_sample_rate ?
      head->input_sample_rate : 48000, best = rates[0], i;

  for (i = 1; i < G_N_ELEMENTS (rates); i++)
    if (ABS ((gint64) input - rates[i]) < ABS ((gint64) input - best))
      best = rates[i];
  return best;
}

GstSpdlAudioReader *
gst_spdl_opus_reader_open (GBytes * data, GError ** error)
{
  GstSpdlOpusReader *self;
  const guint8 *d;
  gsize size;
  OggOpusFile *of;
  AVCodecContext *codec;
  ogg_int64_t total;
  int err = 0, channels;

  d = g_bytes_get_data (data, &size);
  if (!d || !gst_spdl_ogg_first_packet_is (d, size, "OpusHead", 8))
    return NULL;
  of = op_open_memory (d, size, &err);
  if (!of)
    return NULL;
  channels = op_channel_count (of, -1);
  total = op_pcm_total (of, -1);
  if (!op_seekable (of) || op_link_count (of) != 1 || channels < 1 ||
      channels > MAX_CHANNELS || total <= 0) {
    op_free (of);
    return NULL;
  }
  /* a stream FFmpeg's decoder does not take goes to the pipeline */
  codec = opus_codec_open (d, size);
  if (!codec) {
    op_free (of);
    return NULL;
  }

  self = g_new0 (GstSpdlOpusReader, 1);
  self->parent.funcs = &opus_reader_funcs;
  gst_audio_info_set_format (&self->parent.info, GST_AUDIO_FORMAT_F32,
      48000, channels, NULL);
  self->parent.n_frames = total;
  self->parent.declared_rate = opusdec_rate (op_head (of, -1));
  self->data = g_bytes_ref (data);
  self->of = of;
  self->codec = codec;
  self->packet = av_packet_alloc ();
  self->frame = av_frame_alloc ();
  if (!self->packet || !self->frame)
    g_error ("out of memory");
  self->pos = 0;
  op_set_decode_callback (of, opus_reader_decode, self);
  return &self->parent;
}
