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
 * to the output's channels by audioconvert, resampled by GStreamer's
 * audio resampler (the Kaiser filters of audioresample, at
 * #GstSpdlAudioDecode:quality, with an exact filter phase), on a pool of
 * #GstSpdlAudioDecode:threads native threads, each reusing its pipeline
 * from file to file. Only a clip's span is decoded: the decoder seeks to
 * a little before it (memory stays bounded for long files).
 *
 * Channels: a mono output is the mean of the file's channels; a mono
 * file is copied to every output channel; other counts follow
 * audioconvert's default mixing.
 *
 * Clip starts are drawn uniformly from (seed, epoch, file index), spaced
 * evenly from the first to the last sample, or all at the start
 * (#GstSpdlAudioDecode:sampling). A file shorter than a clip follows
 * #GstSpdlAudioDecode:short-files. #GstSpdlAudioDecode:duration 0 gives
 * whole files, one tensor each (its shape changes from file to file).
 *
 * Output keeps input order. A file that cannot be decoded (empty,
 * truncated, garbage, no audio stream, absurd declared rates or channel
 * counts, longer than #GstSpdlAudioDecode:timeout to decode) is skipped
 * with a warning naming the file and the reason, counted by reason
 * (#GstSpdlAudioDecode:error-counts) and against
 * #GstSpdlAudioDecode:max-errors.
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
  PROP_THREADS,
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
  PROP_MAX_ERRORS,
  PROP_WARNING_LIMIT,
  PROP_ERRORS,
  PROP_ERROR_COUNTS,
  PROP_CLIPS,
  PROP_STATS,
};

#define DEFAULT_THREADS 0
#define DEFAULT_SAMPLE_RATE 16000
#define DEFAULT_CHANNELS 1
#define DEFAULT_DURATION 1.0
#define DEFAULT_QUALITY 4
#define DEFAULT_MAX_DURATION 3600.0
#define DEFAULT_MAX_ERRORS -1
#define DEFAULT_WARNING_LIMIT 20
/* files in flight per thread: order is kept while a long one decodes */
#define JOBS_PER_THREAD 2

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

/* A file or a serialized event, in arrival order. */
typedef struct
{
  GstBuffer *input;
  GstEvent *event;
  GList *outputs;               /* clips, in clip order */
  GError *error;                /* the file skipped */
  gboolean fatal;               /* short-files=error */
  guint64 index;
  guint epoch;
  gboolean done;
} Job;

#define gst_spdl_audio_decode_parent_class parent_class
G_DEFINE_TYPE (GstSpdlAudioDecode, gst_spdl_audio_decode, GST_TYPE_ELEMENT);
GST_ELEMENT_REGISTER_DEFINE (spdlaudiodecode, "spdlaudiodecode",
    GST_RANK_NONE, GST_TYPE_SPDL_AUDIO_DECODE);

static void gst_spdl_audio_decode_finalize (GObject * object);
static void gst_spdl_audio_decode_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_spdl_audio_decode_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static GstStateChangeReturn gst_spdl_audio_decode_change_state (GstElement *
    element, GstStateChange transition);
static GstFlowReturn gst_spdl_audio_decode_chain (GstPad * pad,
    GstObject * parent, GstBuffer * buffer);
static gboolean gst_spdl_audio_decode_sink_event (GstPad * pad,
    GstObject * parent, GstEvent * event);
static gboolean gst_spdl_audio_decode_sink_query (GstPad * pad,
    GstObject * parent, GstQuery * query);
static gboolean gst_spdl_audio_decode_src_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active);
static gboolean gst_spdl_audio_decode_sink_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active);
static void gst_spdl_audio_decode_loop (GstSpdlAudioDecode * self);

#define READY_PARAM (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | \
    GST_PARAM_MUTABLE_READY)

static void
gst_spdl_audio_decode_class_init (GstSpdlAudioDecodeClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->finalize = gst_spdl_audio_decode_finalize;
  gobject_class->set_property = gst_spdl_audio_decode_set_property;
  gobject_class->get_property = gst_spdl_audio_decode_get_property;

  g_object_class_install_property (gobject_class, PROP_THREADS,
      g_param_spec_uint ("threads", "Threads",
          "Decoding threads, each with its own pipeline "
          "(0 = number of online CPUs)", 0, 256, DEFAULT_THREADS,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SAMPLE_RATE,
      g_param_spec_uint ("sample-rate", "Sample rate",
          "Output sample rate (Hz)", 1000, 384000, DEFAULT_SAMPLE_RATE,
          READY_PARAM));
  /**
   * GstSpdlAudioDecode:channels:
   *
   * Output channels. 1: the mean of the file's channels. A mono file
   * gives the same samples in every channel; other channel counts follow
   * audioconvert's default mixing.
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
  g_object_class_install_property (gobject_class, PROP_MAX_ERRORS,
      g_param_spec_int ("max-errors", "Max errors",
          "Skipped files before failing (-1 = no limit)", -1, G_MAXINT,
          DEFAULT_MAX_ERRORS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_WARNING_LIMIT,
      g_param_spec_uint ("warning-limit", "Warning limit",
          "Per-sample warnings posted per epoch (the rest are counted)", 0,
          G_MAXUINT, DEFAULT_WARNING_LIMIT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_ERRORS,
      g_param_spec_uint64 ("errors", "Errors", "Files skipped so far", 0,
          G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlAudioDecode:error-counts:
   *
   * Skipped files by reason: one guint64 field per reason (empty,
   * truncated, corrupt, too-large, unsupported, unsupported-format,
   * no-audio, too-short, timeout, ...) and "total".
   */
  g_object_class_install_property (gobject_class, PROP_ERROR_COUNTS,
      g_param_spec_boxed ("error-counts", "Error counts",
          "Skipped files by reason", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_CLIPS,
      g_param_spec_uint64 ("clips", "Clips", "Clips pushed so far", 0,
          G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlAudioDecode:stats:
   *
   * "spdl-stats": items-in, items-out (files), busy, mean, p90, p99 (ns
   * per file), cpu, cpu-mean, threads, clips, pipeline-builds (the
   * threads' pipelines are reused unless
   * #GstSpdlAudioDecode:reuse-chains is false), and skipped-REASON
   * counts.
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Files, clips, decode times and pipeline builds",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "SPDL parallel audio clip decoder", "Codec/Decoder/Audio",
      "Decodes clips of audio files with GStreamer's demuxers, decoders "
      "and resampler on a pool of threads, as float tensors",
      "gst-spdl authors");
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_change_state);

  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_AUDIO_SAMPLING, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_SHORT_FILES, 0);
  GST_DEBUG_CATEGORY_INIT (spdl_audio_decode_debug, "spdlaudiodecode", 0,
      "SPDL parallel audio clip decoder");
}

static void
gst_spdl_audio_decode_init (GstSpdlAudioDecode * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_sink_event));
  gst_pad_set_query_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_sink_query));
  gst_pad_set_activatemode_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_sink_activate_mode));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_set_activatemode_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_spdl_audio_decode_src_activate_mode));
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->threads = DEFAULT_THREADS;
  gst_spdl_audio_clip_params_init (&self->params.clip);
  gst_spdl_audio_limits_init (&self->params.limits);
  self->params.limits.rate = DEFAULT_SAMPLE_RATE;
  self->params.limits.channels = DEFAULT_CHANNELS;
  self->params.limits.quality = DEFAULT_QUALITY;
  self->params.duration = DEFAULT_DURATION;
  self->params.max_duration = DEFAULT_MAX_DURATION;
  self->max_errors = DEFAULT_MAX_ERRORS;
  self->warning_limit = DEFAULT_WARNING_LIMIT;
  gst_spdl_stats_init (&self->stats);
  g_mutex_init (&self->lock);
  g_cond_init (&self->done_cond);
  g_cond_init (&self->space_cond);
  g_queue_init (&self->jobs);
  g_queue_init (&self->pending);
  g_queue_init (&self->idle_chains);
  self->srcresult = GST_FLOW_FLUSHING;
  self->flushing = TRUE;
}

static void
gst_spdl_audio_decode_finalize (GObject * object)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (object);

  gst_spdl_stats_clear (&self->stats);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->done_cond);
  g_cond_clear (&self->space_cond);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_spdl_audio_decode_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (object);
  GstSpdlAudioDecodeParams *p = &self->params;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_THREADS:
      self->threads = g_value_get_uint (value);
      break;
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
    case PROP_MAX_ERRORS:
      self->max_errors = g_value_get_int (value);
      break;
    case PROP_WARNING_LIMIT:
      self->warning_limit = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static GstStructure *
error_counts_new (GstSpdlAudioDecode * self)
{
  GstStructure *s = gst_structure_new (GST_SPDL_SKIPPED_NAME, "total",
      G_TYPE_UINT64, self->errors, NULL);
  gint i;

  for (i = 0; i < GST_SPDL_DECODE_N_ERRORS; i++)
    gst_structure_set (s, gst_spdl_decode_error_reason (i), G_TYPE_UINT64,
        self->errors_by_reason[i], NULL);
  return s;
}

/* called with the object lock */
static GstStructure *
stats_new (GstSpdlAudioDecode * self)
{
  GstStructure *s = gst_spdl_stats_to_structure (&self->stats);
  guint builds = self->builds;
  GList *l;
  gint i;

  /* the live chains' builds; the chains are only read */
  g_mutex_lock (&self->lock);
  for (l = self->all_chains; l; l = l->next)
    builds += gst_spdl_audio_chain_get_builds (l->data);
  g_mutex_unlock (&self->lock);
  gst_structure_set (s, "threads", G_TYPE_UINT, self->n_workers,
      "clips", G_TYPE_UINT64, self->clips,
      "pipeline-builds", G_TYPE_UINT, builds, NULL);
  for (i = 0; i < GST_SPDL_DECODE_N_ERRORS; i++) {
    gchar *key = g_strdup_printf ("skipped-%s",
        gst_spdl_decode_error_reason (i));
    gst_structure_set (s, key, G_TYPE_UINT64, self->errors_by_reason[i], NULL);
    g_free (key);
  }
  return s;
}

static void
gst_spdl_audio_decode_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (object);
  GstSpdlAudioDecodeParams *p = &self->params;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
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
    case PROP_MAX_ERRORS:
      g_value_set_int (value, self->max_errors);
      break;
    case PROP_WARNING_LIMIT:
      g_value_set_uint (value, self->warning_limit);
      break;
    case PROP_ERRORS:
      g_value_set_uint64 (value, self->errors);
      break;
    case PROP_ERROR_COUNTS:
      g_value_take_boxed (value, error_counts_new (self));
      break;
    case PROP_CLIPS:
      g_value_set_uint64 (value, self->clips);
      break;
    case PROP_STATS:
      g_value_take_boxed (value, stats_new (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ------------------------------------------------------------------------ */
/* Decoding one file (a worker thread)                                      */

static void
job_free (Job * job)
{
  if (job->input)
    gst_buffer_unref (job->input);
  if (job->event)
    gst_event_unref (job->event);
  g_list_free_full (job->outputs, (GDestroyNotify) gst_buffer_unref);
  g_clear_error (&job->error);
  g_free (job);
}

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
add_clip (Job * job, GstBuffer * clip, guint c, gdouble start,
    guint64 length, guint64 n)
{
  gst_spdl_buffer_copy_sample_meta (clip, job->input);
  gst_spdl_buffer_set_audio_clip_info (clip, c, start, length);
  /* the shape travels with the buffer until the caps are made */
  GST_BUFFER_OFFSET (clip) = n;
  job->outputs = g_list_append (job->outputs, clip);
}

static void
decode_file (GstSpdlAudioDecode * self, GstSpdlAudioChain * chain, Job * job)
{
  const GstSpdlAudioDecodeParams *p = &self->active;
  guint rate = p->limits.rate, channels = p->limits.channels;
  GstSpdlAudioClipParams clip_params = p->clip;
  guint n_clips, c;
  GstSpdlAudioClip *clips = NULL;
  GstSpdlAudioClipPlanResult plan;
  GstBuffer *all = NULL;
  GstMapInfo map;
  GBytes *bytes;
  guint64 n_samples;

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
  if (clip_params.clip_samples == 0 || n_samples == 0) {
    /* whole files, or a length the container does not say: all of it */
    all = gst_spdl_audio_chain_read_all (chain, &n_samples, &job->error);
    if (all == NULL)
      goto done;
  }
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
    job->fatal = clip_params.short_files == GST_SPDL_SHORT_FILES_ERROR;
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TOO_SHORT,
        "the file (%.3f s) is shorter than a clip (%.3f s)",
        (gdouble) n_samples / rate, (gdouble) clip_params.clip_samples / rate);
    goto done;
  }
  for (c = 0; c < n_clips; c++) {
    guint64 n = clip_params.clip_samples ? clip_params.clip_samples :
        n_samples, got = 0, want = clips[c].length, length;
    gfloat *data;
    GstBuffer *out = clip_buffer_new (channels, n, &data, &job->error);
    guint ch;

    if (out == NULL)
      goto done;
    if (all) {
      /* copy the span out of the whole file */
      GstMapInfo all_map;
      gst_buffer_map (all, &all_map, GST_MAP_READ);
      got = MIN (want, n_samples - MIN (clips[c].start, n_samples));
      for (ch = 0; ch < channels; ch++)
        memcpy (data + ch * n, (const gfloat *) all_map.data + ch *
            n_samples + clips[c].start, got * sizeof (gfloat));
      gst_buffer_unmap (all, &all_map);
    } else if (!gst_spdl_audio_chain_read (chain, clips[c].start, want, data,
            n, &got, &job->error)) {
      gst_buffer_unref (out);
      goto done;
    }
    if (got == 0) {
      gst_buffer_unref (out);
      gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TRUNCATED,
          "no audio at %.3f s, where the file declares %.3f s",
          (gdouble) clips[c].start / rate, (gdouble) n_samples / rate);
      goto done;
    }
    length = got;
    if (got < n && clip_params.short_files == GST_SPDL_SHORT_FILES_REPEAT
        && want < n) {
      repeat_fill (data, channels, n, got);
      length = n;
    }
    add_clip (job, out, c, (gdouble) clips[c].start / rate, length, n);
  }
  /* a checkpoint after it has consumed the whole file (spdlbatch) */
  if (job->outputs)
    gst_spdl_buffer_mark_last_clip (g_list_last (job->outputs)->data);
done:
  g_free (clips);
  if (all)
    gst_buffer_unref (all);
  if (job->error) {
    g_list_free_full (job->outputs, (GDestroyNotify) gst_buffer_unref);
    job->outputs = NULL;
  }
  gst_spdl_audio_chain_close (chain);
  g_bytes_unref (bytes);
  gst_buffer_unmap (job->input, &map);
}

/* Runs in a pool thread, once per file queued: the oldest pending file
 * with an idle chain. */
static void
worker_func (gpointer item, gpointer data)
{
  GstSpdlAudioDecode *self = data;
  GstSpdlAudioChain *chain;
  Job *job;
  guint64 start, cpu_start;

  g_mutex_lock (&self->lock);
  if (self->flushing || g_queue_is_empty (&self->pending)) {
    g_mutex_unlock (&self->lock);
    return;
  }
  job = g_queue_pop_head (&self->pending);
  chain = g_queue_pop_head (&self->idle_chains);
  self->busy++;
  g_mutex_unlock (&self->lock);

  start = gst_spdl_now_ns ();
  cpu_start = gst_spdl_thread_cpu_ns ();
  decode_file (self, chain, job);
  gst_spdl_stats_record_with_cpu (&self->stats, gst_spdl_now_ns () - start,
      gst_spdl_thread_cpu_ns () - cpu_start);

  g_mutex_lock (&self->lock);
  g_queue_push_head (&self->idle_chains, chain);
  job->done = TRUE;
  self->busy--;
  g_cond_broadcast (&self->done_cond);
  g_mutex_unlock (&self->lock);
}

static gboolean
start_workers (GstSpdlAudioDecode * self)
{
  GError *error = NULL;
  guint i, n;

  GST_OBJECT_LOCK (self);
  self->active = self->params;
  gst_spdl_warn_limiter_reset (&self->warn_limiter, self->warning_limit);
  memset (self->epoch_errors, 0, sizeof (self->epoch_errors));
  memset (self->errors_by_reason, 0, sizeof (self->errors_by_reason));
  self->errors = 0;
  self->clips = 0;
  self->builds = 0;
  n = self->threads ? self->threads : g_get_num_processors ();
  GST_OBJECT_UNLOCK (self);
  gst_spdl_stats_reset (&self->stats);

  self->active.clip.clip_samples = (guint64) llround (self->active.duration *
      self->active.limits.rate);
  if (self->active.duration > 0 && self->active.clip.clip_samples == 0)
    self->active.clip.clip_samples = 1;
  self->active.limits.max_samples = (guint64) (self->active.max_duration *
      self->active.limits.rate);
  self->max_in_flight = n * JOBS_PER_THREAD;
  self->next_index = 0;
  self->n_workers = n;
  g_mutex_lock (&self->lock);
  for (i = 0; i < n; i++) {
    GstSpdlAudioChain *chain =
        gst_spdl_audio_chain_new (&self->active.limits);
    g_queue_push_tail (&self->idle_chains, chain);
    self->all_chains = g_list_prepend (self->all_chains, chain);
  }
  g_mutex_unlock (&self->lock);
  self->workers = g_thread_pool_new (worker_func, self, n, TRUE, &error);
  if (self->workers == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not start %u decoding threads", n), ("%s", error->message));
    g_clear_error (&error);
    return FALSE;
  }
  return TRUE;
}

static void
clear_jobs_locked (GstSpdlAudioDecode * self)
{
  while (self->busy > 0)
    g_cond_wait (&self->done_cond, &self->lock);
  g_queue_clear (&self->pending);
  g_queue_clear_full (&self->jobs, (GDestroyNotify) job_free);
  self->in_flight = 0;
  g_cond_broadcast (&self->space_cond);
}

static void
stop_workers (GstSpdlAudioDecode * self)
{
  GList *l;

  if (self->workers)
    g_thread_pool_free (self->workers, TRUE, TRUE);
  self->workers = NULL;
  g_mutex_lock (&self->lock);
  clear_jobs_locked (self);
  g_queue_clear (&self->idle_chains);
  for (l = self->all_chains; l; l = l->next) {
    self->builds += gst_spdl_audio_chain_get_builds (l->data);
    gst_spdl_audio_chain_free (l->data);
  }
  g_clear_pointer (&self->all_chains, g_list_free);
  g_mutex_unlock (&self->lock);
}

/* ------------------------------------------------------------------------ */
/* Sink side                                                                */

static gboolean
gst_spdl_audio_decode_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION)
    return TRUE;                /* compressed input: nothing to propose */
  return gst_pad_query_default (pad, parent, query);
}

static GstFlowReturn
gst_spdl_audio_decode_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buffer)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (parent);
  Job *job = g_new0 (Job, 1);
  GstSpdlSampleInfo info;
  gboolean has_info;
  GstFlowReturn ret;

  job->input = buffer;
  gst_spdl_stats_add_in (&self->stats, 1);
  has_info = gst_spdl_buffer_get_sample_info (buffer, &info);
  g_mutex_lock (&self->lock);
  if (has_info) {
    job->index = info.index;
    job->epoch = info.epoch;
  } else {
    job->index = self->next_index++;
  }
  while (!self->flushing && self->srcresult == GST_FLOW_OK &&
      self->in_flight >= self->max_in_flight)
    g_cond_wait (&self->space_cond, &self->lock);
  ret = self->srcresult;
  if (ret != GST_FLOW_OK) {
    g_mutex_unlock (&self->lock);
    job_free (job);
    return ret;
  }
  g_queue_push_tail (&self->jobs, job);
  g_queue_push_tail (&self->pending, job);
  self->in_flight++;
  g_mutex_unlock (&self->lock);
  if (!g_thread_pool_push (self->workers, self, NULL)) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
        ("could not queue a file on the decoding threads"));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

static void
queue_event (GstSpdlAudioDecode * self, GstEvent * event)
{
  Job *job = g_new0 (Job, 1);

  job->event = event;
  job->done = TRUE;
  g_mutex_lock (&self->lock);
  if (self->flushing) {
    g_mutex_unlock (&self->lock);
    job_free (job);
    return;
  }
  g_queue_push_tail (&self->jobs, job);
  g_cond_broadcast (&self->done_cond);
  g_mutex_unlock (&self->lock);
}

static gboolean
gst_spdl_audio_decode_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (parent);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      g_mutex_lock (&self->lock);
      self->flushing = TRUE;
      self->srcresult = GST_FLOW_FLUSHING;
      g_cond_broadcast (&self->done_cond);
      g_cond_broadcast (&self->space_cond);
      g_mutex_unlock (&self->lock);
      gst_pad_push_event (self->srcpad, event);
      gst_pad_pause_task (self->srcpad);
      return TRUE;
    case GST_EVENT_FLUSH_STOP:
      g_mutex_lock (&self->lock);
      clear_jobs_locked (self);
      self->flushing = FALSE;
      self->srcresult = GST_FLOW_OK;
      g_mutex_unlock (&self->lock);
      gst_pad_push_event (self->srcpad, event);
      return gst_pad_start_task (self->srcpad,
          (GstTaskFunction) gst_spdl_audio_decode_loop, self, NULL);
    case GST_EVENT_CAPS:
      /* files in; our caps follow from each clip's shape */
      gst_event_unref (event);
      return TRUE;
    default:
      if (GST_EVENT_IS_SERIALIZED (event)) {
        queue_event (self, event);
        return TRUE;
      }
      return gst_pad_event_default (pad, parent, event);
  }
}

/* ------------------------------------------------------------------------ */
/* Source side                                                              */

static void
push_held_events (GstSpdlAudioDecode * self)
{
  GList *l;

  for (l = self->held_events; l; l = l->next)
    gst_pad_push_event (self->srcpad, l->data);
  g_clear_pointer (&self->held_events, g_list_free);
}

/* Caps before the first clip of each shape; sticky events that must
 * follow caps (segment, tags) are held until then. */
static gboolean
ensure_caps (GstSpdlAudioDecode * self, const guint64 shape[2])
{
  GstSpdlTensorInfo info;
  GstCaps *caps;
  gboolean ok;

  if (self->caps_sent && memcmp (shape, self->caps_shape,
          sizeof (self->caps_shape)) == 0)
    return TRUE;
  info.n_dims = 2;
  info.dtype = GST_SPDL_DTYPE_FLOAT32;
  memcpy (info.shape, shape, sizeof (guint64) * 2);
  caps = gst_spdl_tensors_caps_new (&info, 1, NULL);
  gst_caps_set_simple (caps, "rate", G_TYPE_INT,
      (gint) self->active.limits.rate, NULL);
  ok = gst_pad_push_event (self->srcpad, gst_event_new_caps (caps));
  if (!ok) {
    gchar *s = gst_spdl_tensor_shape_to_string (&info);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Downstream does not accept clips of shape [%s]", s),
        ("downstream refused %" GST_PTR_FORMAT, caps));
    g_free (s);
  }
  gst_caps_unref (caps);
  if (!ok)
    return FALSE;
  memcpy (self->caps_shape, shape, sizeof (self->caps_shape));
  self->caps_sent = TRUE;
  push_held_events (self);
  return TRUE;
}

static void
push_event (GstSpdlAudioDecode * self, GstEvent * event)
{
  GstEventType type = GST_EVENT_TYPE (event);

  if (!self->caps_sent && GST_EVENT_IS_STICKY (event) &&
      type != GST_EVENT_STREAM_START && type != GST_EVENT_EOS) {
    self->held_events = g_list_append (self->held_events, event);
    return;
  }
  if (type == GST_EVENT_EOS && !self->caps_sent)
    push_held_events (self);
  gst_pad_push_event (self->srcpad, event);
}

/* Counts a skipped file and warns (the first warning-limit of each epoch
 * on the bus); FALSE once past max-errors or when fatal. */
static gboolean
skip_file (GstSpdlAudioDecode * self, Job * job)
{
  const gchar *path = gst_spdl_buffer_get_path (job->input);
  gint code = job->error->domain == GST_SPDL_DECODE_ERROR &&
      job->error->code < GST_SPDL_DECODE_N_ERRORS ? job->error->code :
      GST_SPDL_DECODE_ERROR_CORRUPT;
  const gchar *reason = gst_spdl_decode_error_reason (code);
  guint64 errors;
  gint max_errors;
  gboolean post;

  if (job->fatal) {
    GST_ELEMENT_ERROR (self, STREAM, DECODE,
        ("Audio file \"%s\": %s (short-files=error)", path,
            job->error->message), ("reason: %s", reason));
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  errors = ++self->errors;
  self->errors_by_reason[code]++;
  self->epoch_errors[code]++;
  max_errors = self->max_errors;
  self->warn_limiter.limit = self->warning_limit;
  post = gst_spdl_warn_limiter_count (&self->warn_limiter, job->epoch);
  GST_OBJECT_UNLOCK (self);

  if (max_errors >= 0 && errors > (guint64) max_errors) {
    GST_ELEMENT_ERROR (self, STREAM, DECODE,
        ("Could not decode audio file \"%s\": %s; %" G_GUINT64_FORMAT
            " skipped, more than max-errors=%d", path, job->error->message,
            errors, max_errors), ("reason: %s", reason));
    return FALSE;
  }
  if (post)
    GST_ELEMENT_WARNING (self, STREAM, DECODE,
        ("Skipping audio file \"%s\": %s", path, job->error->message),
        ("reason: %s; %" G_GUINT64_FORMAT " skipped so far", reason, errors));
  else
    GST_WARNING_OBJECT (self, "Skipping audio file \"%s\": %s (reason %s)",
        path, job->error->message, reason);
  return TRUE;
}

static void
end_epoch (GstSpdlAudioDecode * self, GstEvent * event)
{
  guint64 counts[GST_SPDL_DECODE_N_ERRORS], total = 0, suppressed, samples;
  guint epoch;
  gint i;

  if (!gst_spdl_epoch_end_parse (gst_event_get_structure (event), &epoch,
          &samples))
    return;
  GST_OBJECT_LOCK (self);
  for (i = 0; i < GST_SPDL_DECODE_N_ERRORS; i++)
    total += counts[i] = self->epoch_errors[i];
  memset (self->epoch_errors, 0, sizeof (self->epoch_errors));
  suppressed = self->warn_limiter.epoch == epoch &&
      self->warn_limiter.skipped > self->warn_limiter.limit ?
      self->warn_limiter.skipped - self->warn_limiter.limit : 0;
  GST_OBJECT_UNLOCK (self);
  if (total > 0)
    gst_element_post_message (GST_ELEMENT (self),
        gst_spdl_skipped_message_new (GST_ELEMENT (self), epoch,
            GST_SPDL_DECODE_ERROR, counts, GST_SPDL_DECODE_N_ERRORS,
            suppressed));
}

static GstFlowReturn
push_clips (GstSpdlAudioDecode * self, Job * job)
{
  GstFlowReturn ret = GST_FLOW_OK;

  if (job->error && !skip_file (self, job))
    return GST_FLOW_ERROR;
  while (job->outputs && ret == GST_FLOW_OK) {
    GstBuffer *clip = job->outputs->data;
    guint64 shape[2];

    job->outputs = g_list_delete_link (job->outputs, job->outputs);
    shape[0] = self->active.limits.channels;
    shape[1] = GST_BUFFER_OFFSET (clip);
    GST_BUFFER_OFFSET (clip) = GST_BUFFER_OFFSET_NONE;
    if (!ensure_caps (self, shape)) {
      gst_buffer_unref (clip);
      return GST_FLOW_NOT_NEGOTIATED;
    }
    GST_OBJECT_LOCK (self);
    self->clips++;
    GST_OBJECT_UNLOCK (self);
    ret = gst_pad_push (self->srcpad, clip);
  }
  gst_spdl_stats_add_out (&self->stats, 1);
  return ret;
}

static Job *
take_ready_job (GstSpdlAudioDecode * self)
{
  Job *job = g_queue_peek_head (&self->jobs);

  if (job && job->done)
    return g_queue_pop_head (&self->jobs);
  return NULL;
}

static void
gst_spdl_audio_decode_loop (GstSpdlAudioDecode * self)
{
  GstFlowReturn ret = GST_FLOW_OK;
  Job *job;

  g_mutex_lock (&self->lock);
  while (!self->flushing && (job = take_ready_job (self)) == NULL)
    g_cond_wait (&self->done_cond, &self->lock);
  if (self->flushing) {
    g_mutex_unlock (&self->lock);
    gst_pad_pause_task (self->srcpad);
    return;
  }
  if (job->input) {
    self->in_flight--;
    g_cond_signal (&self->space_cond);
  }
  g_mutex_unlock (&self->lock);

  if (job->event) {
    gboolean is_eos = GST_EVENT_TYPE (job->event) == GST_EVENT_EOS;
    if (is_eos) {
      GstStructure *counts;
      GST_OBJECT_LOCK (self);
      counts = error_counts_new (self);
      GST_OBJECT_UNLOCK (self);
      gst_element_post_message (GST_ELEMENT (self),
          gst_message_new_element (GST_OBJECT (self), counts));
    }
    if (gst_spdl_is_epoch_end_event (job->event))
      end_epoch (self, job->event);
    push_event (self, g_steal_pointer (&job->event));
    if (is_eos)
      ret = GST_FLOW_EOS;
  } else {
    ret = push_clips (self, job);
  }
  job_free (job);

  if (ret != GST_FLOW_OK) {
    g_mutex_lock (&self->lock);
    if (self->srcresult == GST_FLOW_OK)
      self->srcresult = ret;
    g_cond_broadcast (&self->space_cond);
    g_mutex_unlock (&self->lock);
    if (ret != GST_FLOW_EOS && ret != GST_FLOW_FLUSHING &&
        ret != GST_FLOW_ERROR)
      GST_ELEMENT_FLOW_ERROR (self, ret);
    if (ret == GST_FLOW_ERROR || ret == GST_FLOW_NOT_LINKED ||
        ret == GST_FLOW_NOT_NEGOTIATED)
      gst_pad_push_event (self->srcpad, gst_event_new_eos ());
    gst_pad_pause_task (self->srcpad);
  }
}

static gboolean
gst_spdl_audio_decode_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (parent);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    g_mutex_lock (&self->lock);
    self->flushing = FALSE;
    self->srcresult = GST_FLOW_OK;
    g_mutex_unlock (&self->lock);
    return gst_pad_start_task (pad,
        (GstTaskFunction) gst_spdl_audio_decode_loop, self, NULL);
  }
  g_mutex_lock (&self->lock);
  self->flushing = TRUE;
  self->srcresult = GST_FLOW_FLUSHING;
  g_cond_broadcast (&self->done_cond);
  g_cond_broadcast (&self->space_cond);
  g_mutex_unlock (&self->lock);
  return gst_pad_stop_task (pad);
}

static gboolean
gst_spdl_audio_decode_sink_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (parent);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (!active) {
    g_mutex_lock (&self->lock);
    self->flushing = TRUE;
    self->srcresult = GST_FLOW_FLUSHING;
    g_cond_broadcast (&self->space_cond);
    g_cond_broadcast (&self->done_cond);
    g_mutex_unlock (&self->lock);
  }
  return TRUE;
}

static void
reset_output (GstSpdlAudioDecode * self)
{
  g_list_free_full (self->held_events, (GDestroyNotify) gst_event_unref);
  self->held_events = NULL;
  self->caps_sent = FALSE;
}

static GstStateChangeReturn
gst_spdl_audio_decode_change_state (GstElement * element,
    GstStateChange transition)
{
  GstSpdlAudioDecode *self = GST_SPDL_AUDIO_DECODE (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED &&
      !start_workers (self)) {
    stop_workers (self);
    return GST_STATE_CHANGE_FAILURE;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY ||
      (transition == GST_STATE_CHANGE_READY_TO_PAUSED &&
          ret == GST_STATE_CHANGE_FAILURE)) {
    stop_workers (self);
    reset_output (self);
  }
  return ret;
}
