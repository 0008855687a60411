/* GStreamer SPDL plugin: parallel audio clip decoder
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/**
 * SECTION:element-spdlaudiodecode
 * @title: spdlaudiodecode
 *
 * Decodes audio samples (one whole file per input buffer, as spdlsrc
 * reads them) into clips: #GstSpdlAudioDecode:clips-per-file tensors per
 * file, each float32 `[C, N]` (C = #GstSpdlAudioDecode:channels, N =
 * #GstSpdlAudioDecode:duration x #GstSpdlAudioDecode:sample-rate) in
 * NNStreamer's `other/tensors` caps, values in [-1, 1], with the sample's
 * metadata (index, label, epoch, path) plus "clip", "start" (the clip's
 * start in seconds in its file) and "length" (samples from the file; the
 * rest is padding).
 *
 * Demuxing and decoding are GStreamer's own (decodebin: wavparse,
 * flacparse, qtdemux, oggdemux and the decoders), converted to float and
 * to the output's channels by audioconvert; WAV (PCM and float), FLAC,
 * Ogg Opus, Ogg Vorbis and MP3 are read without a
 * pipeline, whose per-file cost is most of a short clip's CPU: the
 * samples in place, libFLAC, libopusfile with FFmpeg's Opus decoder
 * (each span decoded from 600 ms before it, so it equals the file decoded
 * from its start),
 * libvorbisfile (mono and stereo) and libmpg123 (a LAME tag's encoder
 * delay and padding trimmed, as FFmpeg trims them), then audioconvert's
 * library. Resampled with the Kaiser filters of GStreamer's audio
 * resampler (audioresample's, at #GstSpdlAudioDecode:quality, with an
 * exact filter phase; their inner product by AVX2 where the CPU has it:
 * a quarter of GStreamer 1.22's SSE cost from 48 kHz to 16 kHz, about
 * half from 44.1 kHz), on a pool of
 * #GstSpdlAudioDecode:threads native threads, each reusing its pipeline
 * from file to file. Only a clip's span is decoded: the decoder seeks to
 * a little before it (memory stays bounded for long files).
 *
 * Channels: fewer than the file's are GStreamer's default mix
 * (audioconvert's matrix, by the file's channel positions), for every
 * channel count: every channel is kept, scaled so that no sum can clip.
 * Stereo to mono is the mean of the two. 5.1 to stereo keeps the centre
 * (dialogue) and the surrounds: left = 0.31 FL + 0.22 FC + 0.31 LFE +
 * 0.16 SL (right likewise); 5.1 to mono = 0.21 (FL + FR + LFE) + 0.15 FC
 * + 0.11 (SL + SR). FFmpeg's `-ac` differs: it leaves the LFE out and
 * does not scale (5.1 to stereo: left = FL + 0.71 FC + 0.71 SL; stereo
 * to mono in float: 0.71 (L + R)). Channels without positions mix to
 * mono as their mean. A mono file is copied to every output channel;
 * more output channels than the file's: channel k of the file in
 * channel k, the others silent.
 *
 * Damage is never decoded silently. Every FLAC (1 to 8 channels, 4 to 32
 * bits, with or without a length in its STREAMINFO: one written to a
 * pipe is counted by a decode at open) is read by libFLAC: a frame its
 * CRC rejects skips the file as corrupt, the warning naming the sample
 * where the damage is (flacdec would decode around it unnoticed, and
 * refuses sizes outside 8, 12, 16, 20, 24 and 32 bits). An MP3 whose
 * frames stop at bytes that are no frame and start again is read as
 * FFmpeg reads it: its parser puts the bytes before the next header in
 * one packet with that frame, and its decoder drops the packet (and the
 * frame) unless those bytes are zeros. Where libmpg123 then gives
 * FFmpeg's samples, the file is delivered so, with a warning naming the
 * file and the bytes (an ID3v2 tag there is named a join: files
 * concatenated), counted by #GstSpdlAudioDecode:recovered; the first
 * file's LAME tag trims as FFmpeg trims it (its padding too when the
 * file is at most 1/16 larger than the tag says). Where it cannot, the
 * file is skipped as corrupt, the bytes named: a header of another kind
 * after the damage, a layer 3 frame after a dropped one that takes main
 * data from the bit reservoir (FFmpeg decodes it from stale bytes), or
 * damage inside the frames a LAME tag counts.
 *
 * Clip starts are drawn uniformly from (seed, epoch, file index), spaced
 * evenly from the first to the last sample, or all at the start
 * (#GstSpdlAudioDecode:sampling). They count from the file's first
 * decoded sample, as FFmpeg's decode does, also in a file whose first
 * timestamp is not 0 (an audio-only MPEG-TS; an MP4, Matroska or WebM
 * file written with a start offset). A file shorter than a clip follows
 * #GstSpdlAudioDecode:short-files. #GstSpdlAudioDecode:duration 0 gives
 * whole files, one tensor each (its shape changes from file to file).
 *
 * A sample with a span (a manifest row's offset and duration, see
 * spdlsrc) is that span of its file, as if the file were cut there: its
 * samples are FFmpeg's decode of the file (at the output rate) from
 * round (offset x rate) to round ((offset + duration) x rate), one more
 * or less at an edge when resampled. #GstSpdlAudioDecode:duration 0
 * gives each whole span, one tensor per row; clips (duration > 0) are
 * drawn inside the span. Only the span is decoded. A span that starts at
 * or past the file's end is skipped as "past-end", one that ends more
 * than 25 ms past it (its duration disagrees with the file) as
 * "bad-duration" (within 25 ms, Lhotse's tolerance: to the file's end),
 * one longer than #GstSpdlAudioDecode:max-span as "too-long"; the
 * warnings name the manifest row. With spdlsrc's missing-field=error, past-end and
 * bad-duration stop the pipeline.
 *
 * Output keeps input order. A file that cannot be decoded (empty,
 * truncated, garbage, no audio stream, absurd declared rates or channel
 * counts, longer than #GstSpdlAudioDecode:timeout to decode) is skipped
 * with a warning naming the file and the reason, counted by reason
 * (#GstSpdlAudioDecode:error-counts) and against
 * #GstSpdlAudioDecode:max-errors. Whatever max-errors allows, it is an
 * error when an epoch ends and no file has been decoded since the start,
 * with the whole epoch skipped on one rank or at least 16 files skipped
 * (a folder of files no decoder takes would otherwise give empty epochs
 * for ever).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 spdlsrc location=/data/speech/train \
 *     extensions=wav,flac,mp3,ogg,opus,m4a shuffle=true ! \
 *     spdlaudiodecode sample-rate=16000 channels=1 duration=1.0 ! \
 *     fakesink
 * ]| One-second mono clips at 16 kHz, one random clip per file.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlaudiodecode.h"
#include "gstspdlmeta.h"
#include "gstspdltensor.h"

#include <math.h>
#include <string.h>

enum
{
  PROP_0,
  PROP_SAMPLE_RATE,
  PROP_CHANNELS,
  PROP_DURATION,
  PROP_CLIPS_PER_FILE,
  PROP_SAMPLING,
  PROP_SHORT_FILES,
  PROP_SEED,
  PROP_QUALITY,
  PROP_MAX_DURATION,
  PROP_MAX_RATE,
  PROP_MAX_CHANNELS,
  PROP_TIMEOUT,
  PROP_REUSE_CHAINS,
  PROP_EXACT,
  PROP_MAX_SPAN,
  PROP_RECOVERED,
  PROP_N,
};

#define DEFAULT_SAMPLE_RATE 16000
#define DEFAULT_CHANNELS 1
#define DEFAULT_DURATION 1.0
#define DEFAULT_QUALITY 4
#define DEFAULT_MAX_DURATION 3600.0
/* how far a span may end past its file's end and still be the file to its
 * end: Lhotse's LHOTSE_AUDIO_DURATION_MISMATCH_TOLERANCE (manifests'
 * durations rounded to 2 decimals, an MP3's length with its padding) */
#define SPAN_END_TOLERANCE_S 0.025

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    /* spdlsrc's samples are told by content, whatever their caps say */
    GST_STATIC_CAPS ("image/jpeg, parsed = (boolean) true; audio/x-wav; "
        "audio/x-flac; audio/mpeg; audio/ogg; application/ogg; "
        "audio/x-opus; audio/x-m4a; video/quicktime"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("other/tensors, format=(string)static, "
        "num_tensors=(int)1, framerate=(fraction)0/1"));

GST_DEBUG_CATEGORY_STATIC (spdl_audio_decode_debug);
#define GST_CAT_DEFAULT spdl_audio_decode_debug

#define GST_TYPE_SPDL_AUDIO_SAMPLING (gst_spdl_audio_sampling_get_type ())
static GType
gst_spdl_audio_sampling_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_AUDIO_SAMPLING_RANDOM, "Starts drawn uniformly", "random"},
    {GST_SPDL_AUDIO_SAMPLING_UNIFORM, "Starts evenly spaced", "uniform"},
    {GST_SPDL_AUDIO_SAMPLING_START, "Every clip at the start", "start"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlAudioSampling", values));
  return type;
}

#define GST_TYPE_SPDL_SHORT_FILES (gst_spdl_short_files_get_type ())
static GType
gst_spdl_short_files_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_SHORT_FILES_PAD, "The file, then zeros (length tells)", "pad"},
    {GST_SPDL_SHORT_FILES_REPEAT, "The file again and again", "repeat"},
    {GST_SPDL_SHORT_FILES_SKIP, "Skip the file (counted as too-short)",
        "skip"},
    {GST_SPDL_SHORT_FILES_ERROR, "Fail", "error"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlShortFiles", values));
  return type;
}

#define gst_spdl_audio_decode_parent_class parent_class
G_DEFINE_TYPE (GstSpdlAudioDecode, gst_spdl_audio_decode,
    GST_TYPE_SPDL_PARALLEL_DECODER);
GST_ELEMENT_REGISTER_DEFINE (spdlaudiodecode, "spdlaudiodecode",
    GST_RANK_NONE, GST_TYPE_SPDL_AUDIO_DECODE);

static void gst_spdl_audio_decode_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_spdl_audio_decode_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static gboolean gst_spdl_audio_decode_start (GstSpdlParallelDecoder * base);
static gpointer gst_spdl_audio_decode_create_state (GstSpdlParallelDecoder *
    base);
static void gst_spdl_audio_decode_free_state (GstSpdlParallelDecoder * base,
    gpointer state);
static void gst_spdl_audio_decode_decode (GstSpdlParallelDecoder * base,
    gpointer state, GstSpdlParallelDecoderJob * job);
static gboolean gst_spdl_audio_decode_prepare_output (GstSpdlParallelDecoder *
    base, GstBuffer * clip);
static void gst_spdl_audio_decode_add_stats (GstSpdlParallelDecoder * base,
    GstStructure * s, GList * chains);

#define READY_PARAM (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | \
    GST_PARAM_MUTABLE_READY)

static void
gst_spdl_audio_decode_class_init (GstSpdlAudioDecodeClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstSpdlParallelDecoderClass *decoder_class =
      GST_SPDL_PARALLEL_DECODER_CLASS (klass);
  static const GstSpdlParallelDecoderBlurbs blurbs = {
    .threads = "Decoding threads, each with its own pipeline "
        "(0 = number of online CPUs)",
    .max_errors = "Skipped files before failing (-1 = no limit)",
    .errors = "Files skipped so far",
    .error_counts = "Skipped files by reason",
    .stats = "Files, clips, decode times and pipeline builds",
  };

  gobject_class->set_property = gst_spdl_audio_decode_set_property;
  gobject_class->get_property = gst_spdl_audio_decode_get_property;

  g_object_class_install_property (gobject_class, PROP_SAMPLE_RATE,
      g_param_spec_uint ("sample-rate", "Sample rate",
          "Output sample rate (Hz)", 1000, 384000, DEFAULT_SAMPLE_RATE,
          READY_PARAM));
  /**
   * GstSpdlAudioDecode:channels:
   *
   * Output channels. Fewer than the file's: audioconvert's default mix
   * (stereo to mono: the mean; see Channels above). A mono file gives the
   * same samples in every channel.
   */
  g_object_class_install_property (gobject_class, PROP_CHANNELS,
      g_param_spec_uint ("channels", "Channels", "Output channels", 1, 64,
          DEFAULT_CHANNELS, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_DURATION,
      g_param_spec_double ("duration", "Duration",
          "Clip duration in seconds (0 = whole files)", 0.0, 86400.0,
          DEFAULT_DURATION, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_CLIPS_PER_FILE,
      g_param_spec_uint ("clips-per-file", "Clips per file",
          "Clips from each file (whole files: one)", 1, 1024, 1,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SAMPLING,
      g_param_spec_enum ("sampling", "Sampling", "Where clips start",
          GST_TYPE_SPDL_AUDIO_SAMPLING, GST_SPDL_AUDIO_SAMPLING_RANDOM,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SHORT_FILES,
      g_param_spec_enum ("short-files", "Short files",
          "What a file shorter than a clip gives", GST_TYPE_SPDL_SHORT_FILES,
          GST_SPDL_SHORT_FILES_PAD, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SEED,
      g_param_spec_uint64 ("seed", "Seed",
          "Seed of the clip starts, which depend only on (seed, epoch, "
          "file index)", 0, G_MAXUINT64, 0, READY_PARAM));
  /**
   * GstSpdlAudioDecode:quality:
   *
   * The resampler's quality, as audioresample's (its Kaiser filters). At
   * 4 resampled audio is at least 80 dB from an exact windowed-sinc
   * resampler (scipy's resample_poly, long Kaiser filter) on sweeps up to
   * 6 kHz at 16 kHz; 10 reaches 90 dB.
   */
  g_object_class_install_property (gobject_class, PROP_QUALITY,
      g_param_spec_int ("quality", "Quality",
          "Resampling quality, 0 (fastest) to 10 (best)", 0, 10,
          DEFAULT_QUALITY, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_MAX_DURATION,
      g_param_spec_double ("max-duration", "Max duration",
          "Skip whole files longer than this (seconds; decoded spans are "
          "bounded by it too)", 1.0, 1e7, DEFAULT_MAX_DURATION,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_MAX_RATE,
      g_param_spec_uint ("max-rate", "Max rate",
          "Skip files whose stream declares a higher sample rate (Hz)", 1000,
          G_MAXINT, 768000, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_MAX_CHANNELS,
      g_param_spec_uint ("max-channels", "Max channels",
          "Skip files whose stream declares more channels", 1, 4096, 64,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_TIMEOUT,
      g_param_spec_uint64 ("timeout", "Timeout",
          "Skip a file whose opening or decoding takes longer (ns)",
          GST_MSECOND, G_MAXUINT64, 30 * GST_SECOND, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_REUSE_CHAINS,
      g_param_spec_boolean ("reuse-chains", "Reuse chains",
          "Reuse each thread's pipeline from file to file (false: a new one "
          "per file, for measuring)", TRUE, READY_PARAM));
  /**
   * GstSpdlAudioDecode:exact:
   *
   * Whether a clip of a lossy file equals the same samples of the file
   * decoded from its start (within 1e-4). An Ogg Opus clip is then
   * decoded from 600 ms before it: the decoder's state takes that long to
   * settle on low-bitrate speech. false: from Opus's own 80 ms pre-roll,
   * as FFmpeg and libsndfile seek, at less CPU per 1 s clip; such clips
   * are up to 0.03 off on low-bitrate speech, the same from run to run.
   * Other formats are the same either way.
   */
  g_object_class_install_property (gobject_class, PROP_EXACT,
      g_param_spec_boolean ("exact", "Exact",
          "Lossy clips equal the file decoded from its start (false: Opus "
          "from its codec's 80 ms pre-roll, faster, up to 0.03 off)", TRUE,
          READY_PARAM));
  /**
   * GstSpdlAudioDecode:max-span:
   *
   * Samples whose span (a manifest row's offset and duration; a whole
   * file without one) is longer than this many seconds are skipped with
   * the reason "too-long", counted, before their file is decoded where
   * the manifest gives the duration (NeMo's max_duration). 0: no limit.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SPAN,
      g_param_spec_double ("max-span", "Max span",
          "Skip samples whose span (or whole file) is longer than this "
          "(seconds, 0 = no limit)", 0.0, 1e7, 0.0, READY_PARAM));
  /**
   * GstSpdlAudioDecode:recovered:
   *
   * Files decoded from damaged data as FFmpeg decodes them, delivered
   * with a warning naming the file and the damage (reason recovered):
   * an MP3 with an ID3v2 tag between frames (files joined), zero bytes
   * between frames, or junk FFmpeg's parser drops with the frame after
   * it. Damage whose decode would differ from FFmpeg's is skipped as
   * corrupt instead.
   */
  g_object_class_install_property (gobject_class, PROP_RECOVERED,
      g_param_spec_uint64 ("recovered", "Recovered",
          "Files decoded from damaged data as FFmpeg decodes them, each "
          "warned about", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlAudioDecode:error-counts:
   *
   * Skipped files by reason: one guint64 field per reason (empty,
   * truncated, corrupt, too-large, unsupported, unsupported-format,
   * no-audio, too-short, timeout, ...) and "total".
   */
  /**
   * GstSpdlAudioDecode:stats:
   *
   * "spdl-stats": items-in, items-out (files), busy, mean, p90, p99 (ns
   * per file), cpu, cpu-mean, threads, clips, recovered (see
   * #GstSpdlAudioDecode:recovered), pipeline-builds (the
   * threads' pipelines are reused unless
   * #GstSpdlAudioDecode:reuse-chains is false), and skipped-REASON
   * counts.
   */
  gst_spdl_parallel_decoder_class_install_properties (gobject_class, PROP_N,
      &blurbs);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "SPDL parallel audio clip decoder", "Codec/Decoder/Audio",
      "Decodes clips of audio files with GStreamer's demuxers, decoders "
      "and resampler on a pool of threads, as float tensors",
      "gst-spdl authors");
  decoder_class->item_name = "audio file";
  /* an Opus clip costs 50 times a FLAC one (7 against 0.13 ms): with 2
   * in flight per thread the other threads wait on it (1245 to 1758
   * clips/s on 2 cores); the files beyond 2 per thread within 64 MB (a
   * speech file is 0.1 to 1 MB; a 10-minute WAV, 115 MB, is not held 16
   * times over) */
  decoder_class->jobs_per_thread = 16;
  decoder_class->max_bytes_in_flight = 64 << 20;
  decoder_class->start = GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_start);
  decoder_class->create_state =
      GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_create_state);
  decoder_class->free_state =
      GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_free_state);
  decoder_class->decode = GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_decode);
  decoder_class->prepare_output =
      GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_prepare_output);
  decoder_class->add_stats = GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_add_stats);

  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_AUDIO_SAMPLING, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_SHORT_FILES, 0);
  GST_DEBUG_CATEGORY_INIT (spdl_audio_decode_debug, "spdlaudiodecode", 0,
      "SPDL parallel audio clip decoder");
}

static void
gst_spdl_audio_decode_init (GstSpdlAudioDecode * self)
{
  gst_spdl_audio_clip_params_init (&self->params.clip);
  gst_spdl_audio_limits_init (&self->params.limits);
  self->params.limits.rate = DEFAULT_SAMPLE_RATE;
  self->params.limits.channels = DEFAULT_CHANNELS;
  self->params.limits.quality = DEFAULT_QUALITY;
  self->params.duration = DEFAULT_DURATION;
  self->params.max_duration = DEFAULT_MAX_DURATION;
}

static void
gst_spdl_audio_decode_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (object);
  GstSpdlAudioDecodeParams *p = &self->params;

  if (gst_spdl_parallel_decoder_set_property (object, prop_id, value, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SAMPLE_RATE:
      p->limits.rate = g_value_get_uint (value);
      break;
    case PROP_CHANNELS:
      p->limits.channels = g_value_get_uint (value);
      break;
    case PROP_DURATION:
      p->duration = g_value_get_double (value);
      break;
    case PROP_CLIPS_PER_FILE:
      p->clip.clips_per_file = g_value_get_uint (value);
      break;
    case PROP_SAMPLING:
      p->clip.sampling = g_value_get_enum (value);
      break;
    case PROP_SHORT_FILES:
      p->clip.short_files = g_value_get_enum (value);
      break;
    case PROP_SEED:
      p->clip.seed = g_value_get_uint64 (value);
      break;
    case PROP_QUALITY:
      p->limits.quality = g_value_get_int (value);
      break;
    case PROP_MAX_DURATION:
      p->max_duration = g_value_get_double (value);
      break;
    case PROP_MAX_RATE:
      p->limits.max_rate = g_value_get_uint (value);
      break;
    case PROP_MAX_CHANNELS:
      p->limits.max_channels = g_value_get_uint (value);
      break;
    case PROP_TIMEOUT:
      p->limits.timeout = g_value_get_uint64 (value);
      break;
    case PROP_REUSE_CHAINS:
      p->limits.reuse = g_value_get_boolean (value);
      break;
    case PROP_EXACT:
      p->limits.exact = g_value_get_boolean (value);
      break;
    case PROP_MAX_SPAN:
      p->max_span = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* called with the object lock and the stream lock: the live chains' builds
 * (only read) and those of the chains freed */
static void
gst_spdl_audio_decode_add_stats (GstSpdlParallelDecoder * base,
    GstStructure * s, GList * chains)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (base);
  guint builds = self->builds;
  GList *l;

  for (l = chains; l; l = l->next)
    builds += gst_spdl_audio_chain_get_builds (l->data);
  gst_structure_set (s, "pipeline-builds", G_TYPE_UINT, builds, NULL);
}

static void
gst_spdl_audio_decode_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (object);
  GstSpdlAudioDecodeParams *p = &self->params;

  if (gst_spdl_parallel_decoder_get_property (object, prop_id, value, pspec))
    return;
  if (prop_id == PROP_RECOVERED) {
    g_value_set_uint64 (value, gst_spdl_parallel_decoder_get_recovered
        (GST_SPDL_PARALLEL_DECODER (self)));
    return;
  }
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SAMPLE_RATE:
      g_value_set_uint (value, p->limits.rate);
      break;
    case PROP_CHANNELS:
      g_value_set_uint (value, p->limits.channels);
      break;
    case PROP_DURATION:
      g_value_set_double (value, p->duration);
      break;
    case PROP_CLIPS_PER_FILE:
      g_value_set_uint (value, p->clip.clips_per_file);
      break;
    case PROP_SAMPLING:
      g_value_set_enum (value, p->clip.sampling);
      break;
    case PROP_SHORT_FILES:
      g_value_set_enum (value, p->clip.short_files);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, p->clip.seed);
      break;
    case PROP_QUALITY:
      g_value_set_int (value, p->limits.quality);
      break;
    case PROP_MAX_DURATION:
      g_value_set_double (value, p->max_duration);
      break;
    case PROP_MAX_RATE:
      g_value_set_uint (value, p->limits.max_rate);
      break;
    case PROP_MAX_CHANNELS:
      g_value_set_uint (value, p->limits.max_channels);
      break;
    case PROP_TIMEOUT:
      g_value_set_uint64 (value, p->limits.timeout);
      break;
    case PROP_REUSE_CHAINS:
      g_value_set_boolean (value, p->limits.reuse);
      break;
    case PROP_EXACT:
      g_value_set_boolean (value, p->limits.exact);
      break;
    case PROP_MAX_SPAN:
      g_value_set_double (value, p->max_span);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ------------------------------------------------------------------------ */
/* Decoding one file (a worker thread)                                      */

/* Fills the clip after its @had samples by repeating them. */
static void
repeat_fill (gfloat * data, guint channels, guint64 n, guint64 had)
{
  guint c;
  guint64 i;

  for (c = 0; c < channels; c++)
    for (i = had; i < n; i++)
      data[c * n + i] = data[c * n + i % had];
}

/* A clip tensor: zeros, [channels, n] */
static GstBuffer *
clip_buffer_new (guint channels, guint64 n, gfloat ** data, GError ** error)
{
  GstBuffer *buffer = gst_spdl_buffer_try_new (MAX (n, 1) * channels *
      sizeof (gfloat));
  GstMapInfo map;

  if (buffer == NULL) {
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "out of memory for a clip of %" G_GUINT64_FORMAT " samples", n);
    return NULL;
  }
  /* the buffer's memory stays where it is until pushed */
  gst_buffer_map (buffer, &map, GST_MAP_WRITE);
  memset (map.data, 0, map.size);
  *data = (gfloat *) map.data;
  gst_buffer_unmap (buffer, &map);
  return buffer;
}

static void
add_clip (GstSpdlParallelDecoderJob * job, GstBuffer * clip, guint c, gdouble start,
    guint64 length, guint64 n)
{
  gst_spdl_buffer_copy_sample_meta (clip, job->input);
  gst_spdl_buffer_set_audio_clip_info (clip, c, start, length);
  /* the shape travels with the buffer until the caps are made */
  GST_BUFFER_OFFSET (clip) = n;
  job->outputs = g_list_append (job->outputs, clip);
}

/* A sample's span of its file at the output rate (whole files: all of
 * it). */
typedef struct
{
  gboolean given;               /* the sample has a manifest span */
  gdouble start_s, duration_s;  /* as given; duration_s < 0: to the end */
  guint64 first;                /* its first sample */
  guint64 length;               /* its samples; 0 while unknown */
} Span;

/* Fails the job: the span runs past the file's end, at @end_s seconds.
 * FALSE. */
static gboolean
span_runs_past (GstSpdlParallelDecoder * base,
    GstSpdlParallelDecoderJob * job, const Span * span, gdouble end_s)
{
  gchar *what = g_strdup_printf ("the span %.3f s + %.3f s runs past the "
      "file's end (%.3f s): its duration disagrees with the file",
      span->start_s, span->duration_s, end_s);

  gst_spdl_parallel_decoder_fail_span (base, job,
      GST_SPDL_DECODE_ERROR_BAD_DURATION, what);
  g_free (what);
  return FALSE;
}

/* The span's bounds in a file of @n_samples (0: not known yet), checked
 * against it within SPAN_END_TOLERANCE_S (a manifest's rounded duration):
 * FALSE with the job failed when it starts at or past the file's end, runs
 * past it, or is longer than max-span. */
static gboolean
span_fit (GstSpdlAudioDecode * self, GstSpdlParallelDecoderJob * job,
    Span * span, guint64 n_samples)
{
  GstSpdlParallelDecoder *base = GST_SPDL_PARALLEL_DECODER (self);
  const GstSpdlAudioDecodeParams *p = &self->active;
  guint rate = p->limits.rate;
  guint64 tolerance = MAX (llround (SPAN_END_TOLERANCE_S * rate), 1);
  guint64 last = 0;
  gchar *what;
  gboolean ok = TRUE;

  if (span->given && span->duration_s >= 0)
    last = span->first + MAX (llround ((span->start_s + span->duration_s) *
            rate) - (gint64) span->first, 1);
  else if (n_samples > 0)
    last = n_samples;
  if (n_samples > 0 && span->first >= n_samples) {
    what = g_strdup_printf ("the span starts at %.3f s, at or past the "
        "file's end (%.3f s)", span->start_s, (gdouble) n_samples / rate);
    ok = gst_spdl_parallel_decoder_fail_span (base, job,
        GST_SPDL_DECODE_ERROR_PAST_END, what);
  } else if (n_samples > 0 && last > n_samples + tolerance) {
    what = NULL;
    ok = span_runs_past (base, job, span, (gdouble) n_samples / rate);
  } else {
    span->length = last > 0 ? MIN (last, n_samples > 0 ? n_samples : last) -
        span->first : 0;
    what = NULL;
    /* a whole span decoded is bounded by max-duration, before its
     * tensor is allocated (clips are, each) */
    if (p->clip.clip_samples == 0 && span->length > p->limits.max_samples) {
      what = g_strdup_printf ("the span (%.3f s) is longer than "
          "max-duration=%g s", (gdouble) span->length / rate,
          p->max_duration);
      ok = gst_spdl_parallel_decoder_fail_span (base, job,
          GST_SPDL_DECODE_ERROR_TOO_LARGE, what);
    } else if (p->max_span > 0 && span->length > 0 &&
        (gdouble) span->length / rate > p->max_span + 0.5 / rate) {
      what = g_strdup_printf ("%s (%.3f s) is longer than max-span=%.3f s",
          span->given ? "the span" : "the file",
          (gdouble) span->length / rate, p->max_span);
      ok = gst_spdl_parallel_decoder_fail_span (base, job,
          GST_SPDL_DECODE_ERROR_TOO_LONG, what);
    }
  }
  g_free (what);
  return ok;
}

/* A clip of @n samples of which only @got came: the tensor cut to @got
 * (channel after channel, planar). */
static void
clip_buffer_cut (GstBuffer * buffer, guint channels, guint64 n, guint64 got)
{
  GstMapInfo map;
  guint ch;

  gst_buffer_map (buffer, &map, GST_MAP_WRITE);
  for (ch = 1; ch < channels; ch++)
    memmove ((gfloat *) map.data + ch * got, (gfloat *) map.data + ch * n,
        got * sizeof (gfloat));
  gst_buffer_unmap (buffer, &map);
  gst_buffer_set_size (buffer, MAX (got, 1) * channels * sizeof (gfloat));
}

static void
gst_spdl_audio_decode_decode (GstSpdlParallelDecoder * base, gpointer state,
    GstSpdlParallelDecoderJob * job)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (base);
  GstSpdlAudioChain *chain = state;
  const GstSpdlAudioDecodeParams *p = &self->active;
  guint rate = p->limits.rate, channels = p->limits.channels;
  GstSpdlAudioClipParams clip_params = p->clip;
  guint n_clips, c;
  GstSpdlAudioClip *clips = NULL;
  GstSpdlAudioClipPlanResult plan;
  GstBuffer *all = NULL;
  GstMapInfo map;
  GBytes *bytes;
  guint64 n_samples, n_all = 0;
  Span span = { FALSE, 0, -1, 0, 0 };

  span.given = gst_spdl_buffer_get_span (job->input, &span.start_s,
      &span.duration_s);
  if (span.given) {
    span.first = (guint64) llround (span.start_s * rate);
    /* a span too long is not even opened */
    if (span.duration_s > 0 && !span_fit (self, job, &span, 0))
      return;
  }
  if (!gst_buffer_map (job->input, &map, GST_MAP_READ)) {
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "could not map the input memory");
    return;
  }
  /* the chain reads the mapped file; it is unmapped after the decode */
  bytes = g_bytes_new_static (map.data, map.size);
  if (!gst_spdl_audio_chain_open (chain, bytes, &job->error))
    goto done;
  n_samples = gst_spdl_audio_chain_get_n_samples (chain);
  if ((clip_params.clip_samples == 0 && !span.given) || n_samples == 0) {
    /* whole files, or a length the container does not say: all of it */
    all = gst_spdl_audio_chain_read_all (chain, &n_all, &job->error);
    if (all == NULL)
      goto done;
    n_samples = n_all;
  }
  if (n_samples > 0 && !span_fit (self, job, &span, n_samples))
    goto done;
  /* from here on, the span is the file the clips are taken from */
  n_samples = span.length;
  n_clips = gst_spdl_audio_clip_count (&clip_params);
  clips = g_new0 (GstSpdlAudioClip, n_clips);
  plan = gst_spdl_audio_clip_plan (&clip_params, n_samples, job->epoch,
      job->index, clips);
  if (plan == GST_SPDL_AUDIO_CLIP_PLAN_EMPTY) {
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_EMPTY,
        "the file has no audio sample");
    goto done;
  }
  if (plan == GST_SPDL_AUDIO_CLIP_PLAN_SHORT) {
    if (clip_params.short_files == GST_SPDL_SHORT_FILES_ERROR)
      job->fatal = "short-files=error";
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TOO_SHORT,
        "the %s (%.3f s) is shorter than a clip (%.3f s)",
        span.given ? "span" : "file", (gdouble) n_samples / rate,
        (gdouble) clip_params.clip_samples / rate);
    goto done;
  }
  for (c = 0; c < n_clips; c++) {
    guint64 n = clip_params.clip_samples ? clip_params.clip_samples :
        n_samples, got = 0, want = clips[c].length, length;
    guint64 from = span.first + clips[c].start;
    gfloat *data;
    GstBuffer *out = clip_buffer_new (channels, n, &data, &job->error);
    guint ch;

    if (out == NULL)
      goto done;
    if (all) {
      /* copy the span out of the whole file */
      GstMapInfo all_map;
      gst_buffer_map (all, &all_map, GST_MAP_READ);
      got = MIN (want, n_all - MIN (from, n_all));
      for (ch = 0; ch < channels; ch++)
        memcpy (data + ch * n, (const gfloat *) all_map.data + ch *
            n_all + from, got * sizeof (gfloat));
      gst_buffer_unmap (all, &all_map);
    } else if (!gst_spdl_audio_chain_read (chain, from, want, data,
            n, &got, &job->error)) {
      gst_buffer_unref (out);
      goto done;
    }
    if (got == 0) {
      gst_buffer_unref (out);
      gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "no audio at %.3f s, where the file declares %.3f s",
          (gdouble) from / rate, (gdouble) (span.first + n_samples) / rate);
      goto done;
    }
    length = got;
    if (got < n && clip_params.short_files == GST_SPDL_SHORT_FILES_REPEAT
        && want < n) {
      repeat_fill (data, channels, n, got);
      length = n;
    }
    if (clip_params.clip_samples == 0 && got < n) {
      /* the declared length was more than the decode gives */
      if (span.given && span.duration_s >= 0 &&
          n - got > MAX (llround (SPAN_END_TOLERANCE_S * rate), 1)) {
        gst_buffer_unref (out);
        span_runs_past (base, job, &span, (gdouble) (from + got) / rate);
        goto done;
      }
      clip_buffer_cut (out, channels, n, got);
      n = got;
    }
    add_clip (job, out, c, (gdouble) from / rate, length, n);
  }
  /* a checkpoint after it has consumed the whole file (spdlbatch) */
  if (job->outputs)
    gst_spdl_buffer_mark_last_clip (g_list_last (job->outputs)->data);
  /* delivered with a warning, counted as recovered */
  if (job->outputs && gst_spdl_audio_chain_get_damage (chain))
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_RECOVERED,
        "%s", gst_spdl_audio_chain_get_damage (chain));
done:
  g_free (clips);
  if (all)
    gst_buffer_unref (all);
  if (job->error && !gst_spdl_error_is_recovered (job->error)) {
    g_list_free_full (job->outputs, (GDestroyNotify) gst_buffer_unref);
    job->outputs = NULL;
  }
  gst_spdl_audio_chain_close (chain);
  g_bytes_unref (bytes);
  gst_buffer_unmap (job->input, &map);
}

/* READY->PAUSED: the properties, copied, and the clip and file lengths in
 * samples */
static gboolean
gst_spdl_audio_decode_start (GstSpdlParallelDecoder * base)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (base);
  GstSpdlAudioDecodeParams *p = &self->active;

  GST_OBJECT_LOCK (self);
  *p = self->params;
  self->builds = 0;
  GST_OBJECT_UNLOCK (self);
  p->clip.clip_samples = (guint64) llround (p->duration * p->limits.rate);
  if (p->duration > 0 && p->clip.clip_samples == 0)
    p->clip.clip_samples = 1;
  p->limits.max_samples = (guint64) (p->max_duration * p->limits.rate);
  return TRUE;
}

static gpointer
gst_spdl_audio_decode_create_state (GstSpdlParallelDecoder * base)
{
  return gst_spdl_audio_chain_new (&GST_SPDL_AUDIO_DECODE (base)->
      active.limits);
}

static void
gst_spdl_audio_decode_free_state (GstSpdlParallelDecoder * base,
    gpointer state)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (base);

  self->builds += gst_spdl_audio_chain_get_builds (state);
  gst_spdl_audio_chain_free (state);
}

/* ------------------------------------------------------------------------ */
/* Source side                                                              */

/* Caps before the first clip of each shape (the clip's length travels in
 * the buffer's offset until then). */
static gboolean
gst_spdl_audio_decode_prepare_output (GstSpdlParallelDecoder * base,
    GstBuffer * clip)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (base);
  GstSpdlTensorInfo info;
  guint64 shape[2];
  GstCaps *caps;
  gboolean ok;

  shape[0] = self->active.limits.channels;
  shape[1] = GST_BUFFER_OFFSET (clip);
  GST_BUFFER_OFFSET (clip) = GST_BUFFER_OFFSET_NONE;
  if (gst_spdl_parallel_decoder_has_output_caps (base) &&
      memcmp (shape, self->caps_shape, sizeof (self->caps_shape)) == 0)
    return TRUE;
  info.n_dims = 2;
  info.dtype = GST_SPDL_DTYPE_FLOAT32;
  memcpy (info.shape, shape, sizeof (guint64) * 2);
  caps = gst_spdl_tensors_caps_new (&info, 1, NULL);
  gst_caps_set_simple (caps, "rate", G_TYPE_INT,
      (gint) self->active.limits.rate, NULL);
  ok = gst_spdl_parallel_decoder_set_tensor_caps (base, caps, &info);
  gst_caps_unref (caps);
  if (ok)
    memcpy (self->caps_shape, shape, sizeof (self->caps_shape));
  return ok;
}
