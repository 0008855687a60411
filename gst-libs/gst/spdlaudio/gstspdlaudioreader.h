/* GStreamer SPDL: audio files decoded by their codec's library
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_AUDIO_READER_H__
#define __GST_SPDL_AUDIO_READER_H__

#include <gst/gst.h>
#include <gst/audio/audio.h>

G_BEGIN_DECLS

/* A file in memory decoded by the library GStreamer's own decoder for its
 * format wraps (libFLAC for flacdec, libopusfile's Ogg layer for
 * opusdec's, its packets decoded by FFmpeg's Opus decoder, libvorbis through libvorbisfile for vorbisdec, libmpg123 for
 * mpg123audiodec, plain PCM for wavparse), called
 * directly, with no pipeline: for short clips a pipeline's per-file cost
 * (state changes, typefind, plugging, streaming threads waking each
 * other) was most of a clip's CPU (FLAC: 1.05 ms a 1 s clip with the
 * pipeline, 0.13 ms read). For MP3, decodebin here plugs gst-libav's
 * avdec_mp3 (FFmpeg, 16-bit out) rather than mpg123audiodec; the MP3
 * reader's float samples are within 3.5e-5 of it and within 1.4e-6 of
 * FFmpeg's float decode. Ogg Vorbis: vorbisdec's samples exactly (both
 * libvorbis' float decode).
 * GstSpdlAudioChain uses a reader where one takes the file and falls back
 * to its pipeline (decodebin) for everything else. Not thread-safe: one
 * thread uses it. */
typedef struct _GstSpdlAudioReader GstSpdlAudioReader;

/* Called with consecutive runs of decoded frames, interleaved, in the
 * reader's #GstAudioInfo (aligned for its sample size), @first being the
 * run's first frame; the memory is the reader's until the call returns.
 * Return FALSE to stop reading. */
typedef gboolean (*GstSpdlAudioFramesFunc) (gconstpointer frames,
    guint64 first, gsize n_frames, gpointer user_data);

typedef struct
{
  const gchar *name;
  /* Calls @func from frame @first on (the first run starts exactly
   * there) until it returns FALSE or the stream ends. FALSE and @error
   * (GST_SPDL_DECODE_ERROR) when the file cannot be decoded there. */
  gboolean (*read) (GstSpdlAudioReader * reader, guint64 first,
      GstSpdlAudioFramesFunc func, gpointer user_data, GError ** error);
  void (*free) (GstSpdlAudioReader * reader);
} GstSpdlAudioReaderFuncs;

struct _GstSpdlAudioReader
{
  const GstSpdlAudioReaderFuncs *funcs;
  GstAudioInfo info;            /* of the frames read: interleaved, the
                                 * file's rate and channels */
  guint64 n_frames;             /* the stream's length, exactly */
  guint declared_rate;          /* checked against the limits, where not
                                 * info's (0): the rate GStreamer's
                                 * decoder would output */
  gboolean exact;               /* TRUE (as opened): a read from any frame
                                 * equals the decode from the file's start
                                 * (within 1e-4). FALSE: a lossy reader may
                                 * start from its codec's own minimum
                                 * pre-roll instead (Opus: 80 ms, as FFmpeg
                                 * seeks; up to 0.24 off on low-bitrate
                                 * speech, half the decoding) */
  gchar *damage;                /* damaged data the reader decodes as
                                 * FFmpeg decodes it (an MP3's junk or
                                 * ID3v2 tag between frames): what and
                                 * where, for the caller's warning
                                 * (reason recovered); NULL if none */
};

/* A reader for the file in @data (referenced while the reader lives), or
 * NULL when no reader takes it: not its format, or a variant a reader
 * does not handle in full (then the pipeline decodes it and reports
 * what is wrong with it). A reader never rejects a file for its declared
 * rate or channel count: the caller checks those. NULL and @error
 * (GST_SPDL_DECODE_ERROR_CORRUPT) when the reader's format is damaged in
 * a way the pipeline would decode silently wrong and the reader cannot
 * decode as FFmpeg does (an MP3 whose frames stop and start again, a
 * FLAC without a length damaged); damage it decodes as FFmpeg does is in
 * the reader's damage. */
GstSpdlAudioReader *gst_spdl_audio_reader_open (GBytes * data,
    GError ** error);

gboolean gst_spdl_audio_reader_read (GstSpdlAudioReader * reader,
    guint64 first, GstSpdlAudioFramesFunc func, gpointer user_data,
    GError ** error);
const gchar *gst_spdl_audio_reader_get_name (GstSpdlAudioReader * reader);
void gst_spdl_audio_reader_free (GstSpdlAudioReader * reader);

/* Each format's: NULL as gst_spdl_audio_reader_open() */
GstSpdlAudioReader *gst_spdl_wav_reader_open (GBytes * data,
    GError ** error);
GstSpdlAudioReader *gst_spdl_flac_reader_open (GBytes * data,
    GError ** error);
GstSpdlAudioReader *gst_spdl_opus_reader_open (GBytes * data,
    GError ** error);
GstSpdlAudioReader *gst_spdl_vorbis_reader_open (GBytes * data,
    GError ** error);
GstSpdlAudioReader *gst_spdl_mp3_reader_open (GBytes * data,
    GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_AUDIO_READER_H__ */
