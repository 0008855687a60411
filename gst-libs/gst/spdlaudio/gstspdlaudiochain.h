/* GStreamer SPDL: spans of an audio file, decoded by GStreamer
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_AUDIO_CHAIN_H__
#define __GST_SPDL_AUDIO_CHAIN_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* One decoding thread's pipeline, reused from file to file: the file in
 * memory (a seekable giostreamsrc, so demuxers run in pull mode and seek)
 * ! decodebin ! audioconvert (float, the output's channels) ! appsink,
 * then the Kaiser filters of GStreamer's audio resampler (GstAudioResampler,
 * what audioresample runs) by GstSpdlResampler to the output rate. Only
 * the span asked for is decoded: a seek (FLUSH | ACCURATE) to a little
 * before it, samples counted from their
 * timestamps, read and resampled in appsink's streaming thread (no hop
 * per buffer), which stops the stream (EOS) once the span is covered.
 * A file a GstSpdlAudioReader takes (WAV, FLAC, Ogg Opus, Ogg Vorbis,
 * MP3) is read without the pipeline, which for
 * short clips costs more than the decoding: from the span's first input
 * frame, converted by audioconvert's library (GstAudioConverter, the same
 * mix matrix) and resampled the same way (WAV, FLAC and Ogg Vorbis: the
 * pipeline's clips bit for bit).
 * Not thread-safe: one thread uses it. */
typedef struct _GstSpdlAudioChain GstSpdlAudioChain;

typedef struct
{
  guint rate;                   /* output rate */
  guint channels;               /* output channels */
  gint quality;                 /* the resampler's, 0..10 */
  guint max_rate;               /* a stream declaring more is skipped */
  guint max_channels;           /* likewise */
  guint64 max_samples;          /* of one read, at the output rate */
  GstClockTime timeout;         /* of one open or read */
  gboolean reuse;               /* FALSE: a new pipeline for every file */
  gboolean exact;               /* FALSE: readers' codec pre-roll only
                                 * (see GstSpdlAudioReader) */
  gboolean media_timeline;      /* TRUE: samples counted in the container's
                                 * timeline (a video's audio, beside its
                                 * frames); FALSE: from the first decoded
                                 * sample, as FFmpeg's decode counts */
} GstSpdlAudioLimits;

void gst_spdl_audio_limits_init (GstSpdlAudioLimits * limits);

GstSpdlAudioChain *gst_spdl_audio_chain_new (const GstSpdlAudioLimits *
    limits);
void gst_spdl_audio_chain_free (GstSpdlAudioChain * chain);

/* Opens the file in @data (kept alive by the chain until close): the
 * pipeline prerolls and the stream's rate, channels and duration are
 * read. Errors are GST_SPDL_DECODE_ERROR. */
gboolean gst_spdl_audio_chain_open (GstSpdlAudioChain * chain,
    GBytes * data, GError ** error);
void gst_spdl_audio_chain_close (GstSpdlAudioChain * chain);

/* The open file's length in samples at the output rate (the duration its
 * container declares, from the first decoded sample unless
 * media_timeline), 0 when unknown; and its own rate and channels. */
guint64 gst_spdl_audio_chain_get_n_samples (GstSpdlAudioChain * chain);
void gst_spdl_audio_chain_get_format (GstSpdlAudioChain * chain,
    guint * rate, guint * channels);
/* What damage the open file has that its reader decodes as FFmpeg does
 * (GstSpdlAudioReader's damage), NULL if none */
const gchar *gst_spdl_audio_chain_get_damage (GstSpdlAudioChain * chain);

/* Decodes samples @start .. @start + @length (output rate; sample 0 is
 * the first decoded one, or the container's time 0 with media_timeline)
 * into @out, channel c at @out + c x @stride (planar). @n_read: the
 * samples had from @start on (fewer at the end of the stream); the rest
 * of @out is left as it was. FALSE on a decoder error or timeout. */
gboolean gst_spdl_audio_chain_read (GstSpdlAudioChain * chain,
    guint64 start, guint64 length, gfloat * out, gsize stride,
    guint64 * n_read, GError ** error);

/* Decodes the whole file (at most max_samples) into a new buffer of
 * floats, planar [channels, @n_samples]. */
GstBuffer *gst_spdl_audio_chain_read_all (GstSpdlAudioChain * chain,
    guint64 * n_samples, GError ** error);

/* Pipelines built since the chain was made: what reuse saves. */
guint gst_spdl_audio_chain_get_builds (GstSpdlAudioChain * chain);

G_END_DECLS

#endif /* __GST_SPDL_AUDIO_CHAIN_H__ */
