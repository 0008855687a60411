/* GStreamer SPDL plugin: parallel video clip decoder
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/**
 * SECTION:element-spdlvideodecode
 * @title: spdlvideodecode
 *
 * Decodes video samples (one whole file per input buffer, as spdlsrc
 * reads them) into clips: #GstSpdlVideoDecode:clips-per-video tensors per
 * video, each uint8 `[T, 3, H, W]` (#GstSpdlVideoDecode:layout tchw; cthw
 * gives `[3, T, H, W]`, thwc `[T, H, W, 3]`) in NNStreamer's
 * `other/tensors` caps, with the sample's metadata (index, label, epoch,
 * path) plus "clip" and "pts", the presentation time in seconds of each
 * frame (what FFmpeg reports as pts_time).
 *
 * Demuxing and decoding are GStreamer's own (parsebin: qtdemux,
 * matroskademux, avidemux and the parsers; the highest-ranked decoder
 * for the stream: avdec_h264, avdec_h265, vp8dec, vp9dec, ...), on a pool
 * of #GstSpdlVideoDecode:threads native threads, each reusing its
 * demuxer and decoder from video to video. A video is demuxed once: its
 * frames' times are known before a clip is chosen, so a clip is exact in
 * time, variable frame rate or not. Each clip decodes only from the
 * keyframe before its first frame up to its last frame (clips of one
 * video share the packets they have in common); only the frames a clip
 * takes are converted to RGB, then resized and cropped with spdldecode's
 * resampler (PIL's antialiased bilinear), the crop position and flip
 * drawn once per clip.
 *
 * Clip sampling: #GstSpdlVideoDecode:frames frames, every
 * #GstSpdlVideoDecode:stride-th decoded frame, or with
 * #GstSpdlVideoDecode:frame-rate F the frame shown at start + k x stride
 * / F; starts drawn uniformly from (seed, epoch, video index, clip) or
 * spaced evenly (#GstSpdlVideoDecode:sampling). A video shorter than a
 * clip follows #GstSpdlVideoDecode:short-videos.
 *
 * A sample with a span (a manifest row's start and end, see spdlsrc; a
 * WebVid-style CSV with a path, start, end and caption columns) gives
 * clips of the frames shown from start to end only, counted from the
 * video's first frame (to its end without an end): clips are drawn and
 * spaced inside the span as they are inside a whole video. A span that
 * starts past the last frame is skipped as "past-end", one that ends
 * more than a frame past the video's end as "bad-duration", the warning
 * naming the manifest row (spdlsrc's missing-field=error: an error).
 *
 * Output keeps input order. A video that cannot be demuxed or decoded
 * (empty, truncated, garbage, no video stream, too large, a decoder
 * error, longer than #GstSpdlVideoDecode:timeout) is skipped with a
 * warning naming the file and the reason, counted by reason
 * (#GstSpdlVideoDecode:error-counts) and against
 * #GstSpdlVideoDecode:max-errors; a clip one of whose frames could not be
 * decoded is dropped likewise, the video's other clips kept. Whatever
 * max-errors allows, it is an error when an epoch ends and no video has
 * been decoded since the start, with the whole epoch skipped on one rank
 * or at least 16 videos skipped (a folder of files no decoder takes would
 * otherwise give empty epochs for ever).
 *
 * With #GstSpdlVideoDecode:audio, each clip has a second tensor: its
 * audio, float32 `[C, N]` (#GstSpdlVideoDecode:channels,
 * #GstSpdlVideoDecode:sample-rate), decoded from the same file in memory
 * by spdlaudiodecode's chain (GStreamer's demuxer and decoder, down-mix,
 * GstAudioResampler's Kaiser filters). The clip's span starts at its first frame's pts
 * and lasts frames x stride / frame-rate seconds (with frame-rate 0:
 * frames x stride x the video's mean frame duration, its duration over
 * its frames), N = round (span x sample-rate); sample i is the file's
 * audio at start + i / sample-rate. Past the audio's end, and for a
 * video with no audio stream (or one that cannot be decoded), the tensor
 * is zeros and the sample meta's "has-audio" is false.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 spdlsrc location=/data/k400/train \
 *     extensions=mp4,mkv,webm,mov,avi shuffle=true ! \
 *     spdlvideodecode frames=16 stride=2 resize=128 size=112 crop=random ! \
 *     spdlbatch batch-size=8 ! fakesink
 * ]| The R(2+1)D / R3D-18 training recipe: 16 frames, every other one,
 * resized to 128 on the shorter side, a random 112x112 crop.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlvideodecode.h"
#include "gstspdlmeta.h"
#include "gstspdloutput.h"
#include "gstspdlrandom.h"
#include "gstspdlrowsink.h"
#include "gstspdltensor.h"

#include <math.h>
#include <string.h>

enum
{
  PROP_0,
  PROP_FRAMES,
  PROP_STRIDE,
  PROP_FRAME_RATE,
  PROP_CLIPS_PER_VIDEO,
  PROP_SAMPLING,
  PROP_SHORT_VIDEOS,
  PROP_SIZE,
  PROP_RESIZE,
  PROP_CROP,
  PROP_FLIP,
  PROP_AUTOROTATE,
  PROP_LAYOUT,
  PROP_SEED,
  PROP_MAX_PIXELS,
  PROP_MAX_OUTPUT_PIXELS,
  PROP_MAX_DECODE_FRAMES,
  PROP_TIMEOUT,
  PROP_REUSE_CHAINS,
  PROP_AUDIO,
  PROP_SAMPLE_RATE,
  PROP_CHANNELS,
  PROP_N,
};

#define DEFAULT_MAX_OUTPUT_PIXELS 0
/* keyed stream of the crops and flips, apart from the clip starts' */
#define CROP_STREAM G_GUINT64_CONSTANT (0x43524f5000000000)

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    /* spdlsrc's samples are told by content, whatever their caps say */
    GST_STATIC_CAPS ("image/jpeg, parsed = (boolean) true; "
        "video/quicktime; video/x-matroska; video/webm; video/x-msvideo"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("other/tensors, format=(string)static, "
        "num_tensors=(int)[ 1, 2 ], framerate=(fraction)0/1"));

GST_DEBUG_CATEGORY_STATIC (spdl_video_decode_debug);
#define GST_CAT_DEFAULT spdl_video_decode_debug

#define GST_TYPE_SPDL_CLIP_SAMPLING (gst_spdl_clip_sampling_get_type ())
static GType
gst_spdl_clip_sampling_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_CLIP_SAMPLING_RANDOM, "Starts drawn uniformly", "random"},
    {GST_SPDL_CLIP_SAMPLING_UNIFORM, "Starts evenly spaced", "uniform"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlClipSampling", values));
  return type;
}

#define GST_TYPE_SPDL_SHORT_VIDEOS (gst_spdl_short_videos_get_type ())
static GType
gst_spdl_short_videos_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_SHORT_VIDEOS_REPEAT_LAST, "Repeat the last frame",
        "repeat-last"},
    {GST_SPDL_SHORT_VIDEOS_WRAP, "Start again from the first frame", "wrap"},
    {GST_SPDL_SHORT_VIDEOS_SKIP, "Skip the video (counted as too-short)",
        "skip"},
    {GST_SPDL_SHORT_VIDEOS_ERROR, "Fail", "error"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlShortVideos", values));
  return type;
}

#define GST_TYPE_SPDL_CLIP_LAYOUT (gst_spdl_clip_layout_get_type ())
static GType
gst_spdl_clip_layout_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_CLIP_LAYOUT_TCHW, "Frames x channels x height x width",
        "tchw"},
    {GST_SPDL_CLIP_LAYOUT_CTHW,
        "Channels x frames x height x width (torchvision's video models)",
        "cthw"},
    {GST_SPDL_CLIP_LAYOUT_THWC, "Frames x height x width x channels",
        "thwc"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlClipLayout", values));
  return type;
}

#define GST_TYPE_SPDL_CLIP_CROP (gst_spdl_clip_crop_get_type ())
static GType
gst_spdl_clip_crop_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_CLIP_CROP_CENTER, "The centre (CenterCrop)", "center"},
    {GST_SPDL_CLIP_CROP_RANDOM, "Anywhere, once per clip (RandomCrop)",
        "random"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlClipCrop", values));
  return type;
}

#define gst_spdl_video_decode_parent_class parent_class
G_DEFINE_TYPE (GstSpdlVideoDecode, gst_spdl_video_decode,
    GST_TYPE_SPDL_PARALLEL_DECODER);
GST_ELEMENT_REGISTER_DEFINE (spdlvideodecode, "spdlvideodecode",
    GST_RANK_NONE, GST_TYPE_SPDL_VIDEO_DECODE);

static void gst_spdl_video_decode_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_spdl_video_decode_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static gboolean gst_spdl_video_decode_start (GstSpdlParallelDecoder * base);
static gpointer gst_spdl_video_decode_create_state (GstSpdlParallelDecoder *
    base);
static void gst_spdl_video_decode_free_state (GstSpdlParallelDecoder * base,
    gpointer state);
static void gst_spdl_video_decode_decode (GstSpdlParallelDecoder * base,
    gpointer state, GstSpdlParallelDecoderJob * job);
static gboolean gst_spdl_video_decode_prepare_output (GstSpdlParallelDecoder *
    base, GstBuffer * clip);
static void gst_spdl_video_decode_add_stats (GstSpdlParallelDecoder * base,
    GstStructure * s, GList * chains);

#define READY_PARAM (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | \
    GST_PARAM_MUTABLE_READY)

static void
gst_spdl_video_decode_class_init (GstSpdlVideoDecodeClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstSpdlParallelDecoderClass *decoder_class =
      GST_SPDL_PARALLEL_DECODER_CLASS (klass);
  static const GstSpdlParallelDecoderBlurbs blurbs = {
    .threads = "Decoding threads, each with its own demuxer and decoder "
        "(0 = number of online CPUs)",
    .max_errors = "Skipped videos and clips before failing (-1 = no limit)",
    .errors = "Videos and clips skipped so far",
    .error_counts = "Skipped videos and clips by reason",
    .stats = "Videos, clips, decode times and chain builds",
  };
  gobject_class->set_property = gst_spdl_video_decode_set_property;
  gobject_class->get_property = gst_spdl_video_decode_get_property;

  g_object_class_install_property (gobject_class, PROP_FRAMES,
      g_param_spec_uint ("frames", "Frames", "Frames per clip", 1, 1024, 16,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_STRIDE,
      g_param_spec_uint ("stride", "Stride",
          "Take every stride-th frame (with frame-rate: every stride-th "
          "time step)", 1, 1024, 1, READY_PARAM));
  /**
   * GstSpdlVideoDecode:frame-rate:
   *
   * 0: clips of consecutive decoded frames (every stride-th). F > 0: frame
   * k of a clip is the one shown at start + k x stride / F (the last
   * frame whose pts is at or before that time), so clips last the same at
   * any frame rate and variable-frame-rate videos give evenly timed
   * clips.
   */
  g_object_class_install_property (gobject_class, PROP_FRAME_RATE,
      g_param_spec_double ("frame-rate", "Frame rate",
          "Sample frames at this rate, by time (0 = the video's own frames)",
          0.0, 1000.0, 0.0, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_CLIPS_PER_VIDEO,
      g_param_spec_uint ("clips-per-video", "Clips per video",
          "Clips from each video", 1, 1024, 1, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SAMPLING,
      g_param_spec_enum ("sampling", "Sampling", "Where clips start",
          GST_TYPE_SPDL_CLIP_SAMPLING, GST_SPDL_CLIP_SAMPLING_RANDOM,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SHORT_VIDEOS,
      g_param_spec_enum ("short-videos", "Short videos",
          "What a video shorter than a clip gives",
          GST_TYPE_SPDL_SHORT_VIDEOS, GST_SPDL_SHORT_VIDEOS_REPEAT_LAST,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SIZE,
      g_param_spec_uint ("size", "Size",
          "Square crop side (0 = no crop)", 0, 65535, 0, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_RESIZE,
      g_param_spec_uint ("resize", "Resize",
          "Resize the shorter side to this first (0 = size, or no resize "
          "without size)", 0, 65535, 0, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_CROP,
      g_param_spec_enum ("crop", "Crop", "Where the crop is",
          GST_TYPE_SPDL_CLIP_CROP, GST_SPDL_CLIP_CROP_CENTER, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_FLIP,
      g_param_spec_boolean ("flip", "Flip",
          "Flip each clip horizontally with p=0.5", FALSE, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_AUTOROTATE,
      g_param_spec_boolean ("autorotate", "Autorotate",
          "Frames as players and FFmpeg show them: the container's rotation "
          "(an MP4 display matrix, as phones record portrait video) applied "
          "before resize and crop (false: as stored)", TRUE, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_LAYOUT,
      g_param_spec_enum ("layout", "Layout", "Clip tensor layout",
          GST_TYPE_SPDL_CLIP_LAYOUT, GST_SPDL_CLIP_LAYOUT_TCHW, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SEED,
      g_param_spec_uint64 ("seed", "Seed",
          "Seed of the clip starts, crops and flips, which depend only on "
          "(seed, epoch, video index, clip)", 0, G_MAXUINT64, 0,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_MAX_PIXELS,
      g_param_spec_uint64 ("max-pixels", "Max pixels",
          "Skip videos whose frames declare more pixels (0 = no limit)", 0,
          G_MAXUINT64, 64 * 1024 * 1024, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_MAX_OUTPUT_PIXELS,
      g_param_spec_uint64 ("max-output-pixels", "Max output pixels",
          "Skip videos whose clips would have more pixels, all frames "
          "together (0 = frames x 64 x the square of the size asked for, "
          "or frames x max-pixels)", 0, G_MAXUINT64,
          DEFAULT_MAX_OUTPUT_PIXELS, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_MAX_DECODE_FRAMES,
      g_param_spec_uint ("max-decode-frames", "Max decode frames",
          "Skip a clip that needs more frames decoded from its keyframes, "
          "counted as too-many-decode-frames (long GOPs; 0 = no limit)", 0,
          G_MAXUINT, 2000,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_TIMEOUT,
      g_param_spec_uint64 ("timeout", "Timeout",
          "Skip a video whose demuxing or decoding takes longer (ns)",
          GST_MSECOND, G_MAXUINT64, 30 * GST_SECOND, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_REUSE_CHAINS,
      g_param_spec_boolean ("reuse-chains", "Reuse chains",
          "Reuse each thread's demuxer and decoder from video to video "
          "(false: new ones per video, for measuring)", TRUE, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_AUDIO,
      g_param_spec_boolean ("audio", "Audio",
          "Each clip also gives its span of the video's audio, float32 "
          "[channels, N] (zeros when the video has none)", FALSE,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SAMPLE_RATE,
      g_param_spec_uint ("sample-rate", "Sample rate",
          "Rate of the clips' audio (Hz)", 1, 768000, 16000, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_CHANNELS,
      g_param_spec_uint ("channels", "Channels",
          "Channels of the clips' audio (fewer than the file's: "
          "audioconvert's default mix, as spdlaudiodecode's)", 1, 64,
          1, READY_PARAM));
  /**
   * GstSpdlVideoDecode:error-counts:
   *
   * Skipped videos and clips by reason: one guint64 field per reason
   * (empty, corrupt, too-large, unsupported, unsupported-format,
   * no-video, too-short, timeout, ...) and "total".
   */
  /**
   * GstSpdlVideoDecode:stats:
   *
   * "spdl-stats": items-in, items-out (videos), busy, mean, p90, p99 (ns
   * per video), cpu, cpu-mean, threads, clips, demuxer-builds and
   * decoder-builds (pipelines built: the threads' chains are reused
   * unless #GstSpdlVideoDecode:reuse-chains is false), frames-decoded
   * (frames the decoders gave, those before a clip included: unreferenced
   * frames no clip shows are skipped where the decoder can) and
   * skipped-REASON counts.
   */
  gst_spdl_parallel_decoder_class_install_properties (gobject_class, PROP_N,
      &blurbs);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "SPDL parallel video clip decoder", "Codec/Decoder/Video",
      "Decodes clips of videos with GStreamer's demuxers and decoders on a "
      "pool of threads, sampled by frame or by time, resized and cropped",
      "gst-spdl authors");
  decoder_class->item_name = "video";
  decoder_class->start = GST_DEBUG_FUNCPTR (gst_spdl_video_decode_start);
  decoder_class->create_state =
      GST_DEBUG_FUNCPTR (gst_spdl_video_decode_create_state);
  decoder_class->free_state =
      GST_DEBUG_FUNCPTR (gst_spdl_video_decode_free_state);
  decoder_class->decode = GST_DEBUG_FUNCPTR (gst_spdl_video_decode_decode);
  decoder_class->prepare_output =
      GST_DEBUG_FUNCPTR (gst_spdl_video_decode_prepare_output);
  decoder_class->add_stats = GST_DEBUG_FUNCPTR (gst_spdl_video_decode_add_stats);

  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_CLIP_SAMPLING, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_SHORT_VIDEOS, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_CLIP_LAYOUT, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_CLIP_CROP, 0);
  GST_DEBUG_CATEGORY_INIT (spdl_video_decode_debug, "spdlvideodecode", 0,
      "SPDL parallel video clip decoder");
}

static void
gst_spdl_video_decode_init (GstSpdlVideoDecode * self)
{
  gst_spdl_clip_params_init (&self->params.clip);
  gst_spdl_video_limits_init (&self->params.limits);
  gst_spdl_audio_limits_init (&self->params.audio_limits);
  self->params.crop = GST_SPDL_CLIP_CROP_CENTER;
  self->params.layout = GST_SPDL_CLIP_LAYOUT_TCHW;
}

static void
gst_spdl_video_decode_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstSpdlVideoDecode *self = GST_SPDL_VIDEO_DECODE (object);
  GstSpdlVideoDecodeParams *p = &self->params;

  if (gst_spdl_parallel_decoder_set_property (object, prop_id, value, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FRAMES:
      p->clip.frames = g_value_get_uint (value);
      break;
    case PROP_STRIDE:
      p->clip.stride = g_value_get_uint (value);
      break;
    case PROP_FRAME_RATE:
      p->clip.frame_rate = g_value_get_double (value);
      break;
    case PROP_CLIPS_PER_VIDEO:
      p->clip.clips_per_video = g_value_get_uint (value);
      break;
    case PROP_SAMPLING:
      p->clip.sampling = g_value_get_enum (value);
      break;
    case PROP_SHORT_VIDEOS:
      p->clip.short_videos = g_value_get_enum (value);
      break;
    case PROP_SIZE:
      p->size = g_value_get_uint (value);
      break;
    case PROP_RESIZE:
      p->resize = g_value_get_uint (value);
      break;
    case PROP_CROP:
      p->crop = g_value_get_enum (value);
      break;
    case PROP_FLIP:
      p->flip = g_value_get_boolean (value);
      break;
    case PROP_LAYOUT:
      p->layout = g_value_get_enum (value);
      break;
    case PROP_SEED:
      p->clip.seed = g_value_get_uint64 (value);
      break;
    case PROP_MAX_PIXELS:
      p->limits.max_pixels = g_value_get_uint64 (value);
      break;
    case PROP_MAX_OUTPUT_PIXELS:
      p->max_output_pixels = g_value_get_uint64 (value);
      break;
    case PROP_MAX_DECODE_FRAMES:
      p->limits.max_decode_frames = g_value_get_uint (value);
      break;
    case PROP_TIMEOUT:
      p->limits.timeout = g_value_get_uint64 (value);
      break;
    case PROP_REUSE_CHAINS:
      p->limits.reuse = g_value_get_boolean (value);
      break;
    case PROP_AUTOROTATE:
      p->limits.autorotate = g_value_get_boolean (value);
      break;
    case PROP_AUDIO:
      p->audio = g_value_get_boolean (value);
      break;
    case PROP_SAMPLE_RATE:
      p->audio_limits.rate = g_value_get_uint (value);
      break;
    case PROP_CHANNELS:
      p->audio_limits.channels = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* One decoding thread's chains: the audio one only with audio=true */
typedef struct
{
  GstSpdlVideoChain *video;
  GstSpdlAudioChain *audio;
} WorkerState;

/* called with the object lock and the stream lock: the live chains' builds
 * (only read) and those of the chains freed */
static void
gst_spdl_video_decode_add_stats (GstSpdlParallelDecoder * base,
    GstStructure * s, GList * chains)
{
  GstSpdlVideoDecode *self = GST_SPDL_VIDEO_DECODE (base);
  guint demuxers = self->demux_builds, decoders = self->decoder_builds;
  guint64 frames = self->frames_decoded;
  GList *l;

  for (l = chains; l; l = l->next) {
    guint d, c;
    gst_spdl_video_chain_get_builds (((WorkerState *) l->data)->video, &d,
        &c);
    demuxers += d;
    decoders += c;
    frames += gst_spdl_video_chain_get_frames_decoded (((WorkerState *)
            l->data)->video);
  }
  gst_structure_set (s, "demuxer-builds", G_TYPE_UINT, demuxers,
      "decoder-builds", G_TYPE_UINT, decoders, "frames-decoded",
      G_TYPE_UINT64, frames, NULL);
}

static void
gst_spdl_video_decode_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstSpdlVideoDecode *self = GST_SPDL_VIDEO_DECODE (object);
  GstSpdlVideoDecodeParams *p = &self->params;

  if (gst_spdl_parallel_decoder_get_property (object, prop_id, value, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FRAMES:
      g_value_set_uint (value, p->clip.frames);
      break;
    case PROP_STRIDE:
      g_value_set_uint (value, p->clip.stride);
      break;
    case PROP_FRAME_RATE:
      g_value_set_double (value, p->clip.frame_rate);
      break;
    case PROP_CLIPS_PER_VIDEO:
      g_value_set_uint (value, p->clip.clips_per_video);
      break;
    case PROP_SAMPLING:
      g_value_set_enum (value, p->clip.sampling);
      break;
    case PROP_SHORT_VIDEOS:
      g_value_set_enum (value, p->clip.short_videos);
      break;
    case PROP_SIZE:
      g_value_set_uint (value, p->size);
      break;
    case PROP_RESIZE:
      g_value_set_uint (value, p->resize);
      break;
    case PROP_CROP:
      g_value_set_enum (value, p->crop);
      break;
    case PROP_FLIP:
      g_value_set_boolean (value, p->flip);
      break;
    case PROP_LAYOUT:
      g_value_set_enum (value, p->layout);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, p->clip.seed);
      break;
    case PROP_MAX_PIXELS:
      g_value_set_uint64 (value, p->limits.max_pixels);
      break;
    case PROP_MAX_OUTPUT_PIXELS:
      g_value_set_uint64 (value, p->max_output_pixels);
      break;
    case PROP_MAX_DECODE_FRAMES:
      g_value_set_uint (value, p->limits.max_decode_frames);
      break;
    case PROP_TIMEOUT:
      g_value_set_uint64 (value, p->limits.timeout);
      break;
    case PROP_REUSE_CHAINS:
      g_value_set_boolean (value, p->limits.reuse);
      break;
    case PROP_AUTOROTATE:
      g_value_set_boolean (value, p->limits.autorotate);
      break;
    case PROP_AUDIO:
      g_value_set_boolean (value, p->audio);
      break;
    case PROP_SAMPLE_RATE:
      g_value_set_uint (value, p->audio_limits.rate);
      break;
    case PROP_CHANNELS:
      g_value_set_uint (value, p->audio_limits.channels);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ------------------------------------------------------------------------ */
/* Decoding one video (a worker thread)                                     */

/* The tensor shape of a clip of @frames frames of @w x @h, outermost
 * first. */
static void
clip_shape (GstSpdlClipLayout layout, guint frames, guint w, guint h,
    guint64 shape[4])
{
  switch (layout) {
    case GST_SPDL_CLIP_LAYOUT_CTHW:
      shape[0] = 3, shape[1] = frames, shape[2] = h, shape[3] = w;
      break;
    case GST_SPDL_CLIP_LAYOUT_THWC:
      shape[0] = frames, shape[1] = h, shape[2] = w, shape[3] = 3;
      break;
    case GST_SPDL_CLIP_LAYOUT_TCHW:
    default:
      shape[0] = frames, shape[1] = 3, shape[2] = h, shape[3] = w;
      break;
  }
}

/* Where frame @k of a clip goes in its tensor at @base. */
static void
clip_frame_output (const GstSpdlVideoDecodeParams * p, guint8 * base,
    guint k, guint w, guint h, GstSpdlOutput * out)
{
  gsize plane = (gsize) w * h;
  guint c;

  memset (out, 0, sizeof (*out));
  out->zero_padding = TRUE;
  if (p->layout == GST_SPDL_CLIP_LAYOUT_THWC) {
    gst_spdl_output_init_packed (out, base + k * plane * 3, (gsize) w * 3);
    return;
  }
  out->n_planes = 3;
  for (c = 0; c < 3; c++) {
    out->data[c] = base + (p->layout == GST_SPDL_CLIP_LAYOUT_CTHW ?
        ((gsize) c * p->clip.frames + k) * plane : ((gsize) k * 3 + c) *
        plane);
    out->stride[c] = w;
  }
}

/* The geometry of clip @clip: torchvision's Resize(resize) then a
 * CenterCrop or a RandomCrop(size), and a flip, drawn once per clip. */
static void
clip_geometry (const GstSpdlVideoDecodeParams * p, guint w, guint h,
    guint epoch, guint64 index, guint clip, GstSpdlGeometry * g)
{
  GstSpdlDecodeParams dp;
  GstSpdlRng rng;

  gst_spdl_decode_params_init (&dp);
  dp.max_pixels = 0;
  if (p->size == 0 && p->resize == 0) {
    dp.mode = GST_SPDL_RESIZE_STRETCH;  /* the frame as it is */
  } else {
    dp.mode = GST_SPDL_RESIZE_CENTER_CROP;
    dp.width = dp.height = p->size;
    dp.resize_shorter = p->resize ? p->resize : p->size;
  }
  gst_spdl_geometry_compute (g, &dp, w, h, epoch, index);
  gst_spdl_rng_init (&rng, p->clip.seed, CROP_STREAM | epoch,
      index * 1024 + clip);
  if (p->crop == GST_SPDL_CLIP_CROP_RANDOM && p->size > 0) {
    if (g->virtual_width >= p->size)
      g->offset_x = gst_spdl_rng_below (&rng, g->virtual_width - p->size + 1);
    if (g->virtual_height >= p->size)
      g->offset_y = gst_spdl_rng_below (&rng,
          g->virtual_height - p->size + 1);
  }
  g->flip = p->flip && gst_spdl_rng_uniform (&rng, 0.0, 1.0) < 0.5;
}

typedef struct
{
  const GstSpdlVideoDecodeParams *p;
  const guint *indices;         /* clips x frames */
  guint8 **data;                /* each clip's tensor */
  GstSpdlGeometry *geom;        /* each clip's */
  GstSpdlVideoRegion *window;   /* of the frame, each clip's reads */
  GstSpdlRowSink sink;
  guint8 *delivered;            /* per frame of the video */
} ClipWriter;

/* What of frame @frame the clips that take it read: only that is
 * converted to RGB. */
static void
frame_region (guint frame, guint width, guint height,
    GstSpdlVideoRegion * region, gpointer user_data)
{
  ClipWriter *w = user_data;
  const GstSpdlVideoDecodeParams *p = w->p;
  GstSpdlVideoRegion u = { G_MAXUINT, 0, G_MAXUINT, 0 };
  guint c, k;

  for (c = 0; c < p->clip.clips_per_video; c++)
    for (k = 0; k < p->clip.frames; k++) {
      const GstSpdlVideoRegion *r = &w->window[c];

      if (w->indices[c * p->clip.frames + k] != frame || r->x0 >= r->x1)
        continue;
      u.x0 = MIN (u.x0, r->x0);
      u.x1 = MAX (u.x1, r->x1);
      u.y0 = MIN (u.y0, r->y0);
      u.y1 = MAX (u.y1, r->y1);
      break;
    }
  if (u.x0 >= u.x1)
    u.x0 = u.x1 = u.y0 = u.y1 = 0;      /* only padding */
  *region = u;
}

/* A decoded frame: into every clip position that takes it. */
static void
write_frame (guint frame, const guint8 * rgb, gsize stride, guint width,
    guint height, gpointer user_data)
{
  ClipWriter *w = user_data;
  const GstSpdlVideoDecodeParams *p = w->p;
  guint c, k, y;

  w->delivered[frame] = 1;
  for (c = 0; c < p->clip.clips_per_video; c++)
    for (k = 0; k < p->clip.frames; k++) {
      const GstSpdlGeometry *g = &w->geom[c];
      GstSpdlOutput out;

      if (w->indices[c * p->clip.frames + k] != frame)
        continue;
      clip_frame_output (p, w->data[c], k, g->out_width, g->out_height,
          &out);
      gst_spdl_row_sink_plan (&w->sink, &out, g, width, height, 3, FALSE);
      for (y = 0; y < height; y++)
        if (gst_spdl_row_sink_wants (&w->sink, y))
          gst_spdl_row_sink_push (&w->sink, y, rgb + y * stride,
              GST_SPDL_PIXELS_RGB);
      gst_spdl_row_sink_finish (&w->sink, &out);
    }
}

static guint64
output_limit (const GstSpdlVideoDecodeParams * p)
{
  guint64 side = MAX (p->size, p->resize);

  if (p->max_output_pixels)
    return p->max_output_pixels;
  if (side == 0)
    return p->limits.max_pixels ? p->limits.max_pixels * p->clip.frames :
        G_MAXUINT64;
  return 64 * side * side * p->clip.frames;
}

/* A clip's audio span in seconds: frames x stride time steps, a step
 * 1 / frame-rate, or the video's mean frame duration. */
static gdouble
clip_span (const GstSpdlVideoDecodeParams * p, const gdouble * pts,
    guint n_frames, gdouble end)
{
  gdouble step;

  if (p->clip.frame_rate > 0)
    step = 1.0 / p->clip.frame_rate;
  else if (end > pts[0])
    step = (end - pts[0]) / n_frames;
  else if (n_frames > 1)
    step = (pts[n_frames - 1] - pts[0]) / (n_frames - 1);
  else
    step = 0;
  return (gdouble) p->clip.frames * p->clip.stride * step;
}

/* The video's audio stream: FALSE (the clips get silence) when it has
 * none, or one that cannot be decoded (said in a warning). */
static gboolean
open_audio (GstSpdlVideoDecode * self, GstSpdlAudioChain * audio,
    GBytes * bytes, GstSpdlParallelDecoderJob * job)
{
  GError *error = NULL;

  if (gst_spdl_audio_chain_open (audio, bytes, &error))
    return TRUE;
  if (!g_error_matches (error, GST_SPDL_DECODE_ERROR,
          GST_SPDL_DECODE_ERROR_NO_AUDIO))
    GST_WARNING_OBJECT (self, "%s: its audio gives silence: %s",
        gst_spdl_buffer_get_path (job->input), error->message);
  g_error_free (error);
  return FALSE;
}

/* The clip's audio, [channels, @n] float32 from @start seconds, as the
 * buffer's second memory (zeros without audio or past its end). */
static gboolean
add_clip_audio (GstSpdlVideoDecode * self, GstSpdlAudioChain * audio,
    GstBuffer * clip, gboolean has_audio, gdouble start, guint64 n,
    GstSpdlParallelDecoderJob * job)
{
  const GstSpdlVideoDecodeParams *p = &self->active;
  guint channels = p->audio_limits.channels;
  GstBuffer *samples = gst_spdl_buffer_try_new (n * channels *
      sizeof (gfloat));
  GstMapInfo map;
  guint64 first = start > 0 ? (guint64) llround (start *
      p->audio_limits.rate) : 0, n_read = 0;
  gboolean ok = TRUE;

  if (samples == NULL)
    return gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "out of memory for %" G_GUINT64_FORMAT " audio samples", n);
  gst_buffer_map (samples, &map, GST_MAP_WRITE);
  memset (map.data, 0, map.size);
  if (has_audio)
    ok = gst_spdl_audio_chain_read (audio, first, n, (gfloat *) map.data, n,
        &n_read, &job->error);
  gst_buffer_unmap (samples, &map);
  if (ok)
    gst_buffer_append_memory (clip, gst_buffer_get_memory (samples, 0));
  gst_buffer_unref (samples);
  return ok;
}

/* The frames a sample's span (a manifest row's start and end, in seconds
 * from the video's first frame) holds: @n_span frames from @first, and
 * the time the last one stops being shown, @span_end (the video's @end
 * without a span). A span that starts past the last frame, or ends more
 * than a frame (and 1 ms) past the video's end, fails the job. */
static gboolean
span_frames (GstSpdlParallelDecoder * base, GstSpdlParallelDecoderJob * job,
    const gdouble * pts, guint n_frames, gdouble end, guint * first,
    guint * n_span, gdouble * span_end)
{
  gdouble start_s, duration_s, t0, t1, video_end, frame;
  guint i;
  gchar *what;

  *first = 0;
  *n_span = n_frames;
  *span_end = end;
  if (!gst_spdl_buffer_get_span (job->input, &start_s, &duration_s))
    return TRUE;
  frame = n_frames > 1 ? (pts[n_frames - 1] - pts[0]) / (n_frames - 1) :
      0.04;
  video_end = end > pts[n_frames - 1] ? end : pts[n_frames - 1] + frame;
  /* times from the first frame, as the manifest counts them; 1 us for
   * the pts' rounding */
  t0 = pts[0] + start_s - 1e-6;
  for (i = 0; i < n_frames && pts[i] < t0; i++);
  if (i == n_frames) {
    what = g_strdup_printf ("the span starts at %.3f s, past the video's "
        "last frame (%.3f s)", start_s, pts[n_frames - 1] - pts[0]);
    gst_spdl_parallel_decoder_fail_span (base, job,
        GST_SPDL_DECODE_ERROR_PAST_END, what);
    g_free (what);
    return FALSE;
  }
  *first = i;
  if (duration_s < 0) {
    *n_span = n_frames - i;
    return TRUE;
  }
  t1 = pts[0] + start_s + duration_s;
  if (t1 > video_end + MAX (frame, 0.001)) {
    what = g_strdup_printf ("the span %.3f s + %.3f s runs past the "
        "video's end (%.3f s): its duration disagrees with the video",
        start_s, duration_s, video_end - pts[0]);
    gst_spdl_parallel_decoder_fail_span (base, job,
        GST_SPDL_DECODE_ERROR_BAD_DURATION, what);
    g_free (what);
    return FALSE;
  }
  for (; i < n_frames && pts[i] < t1 - 1e-6; i++);
  *n_span = MAX (i - *first, 1);
  *span_end = MIN (t1, video_end);
  return TRUE;
}

static void
gst_spdl_video_decode_decode (GstSpdlParallelDecoder * base, gpointer state,
    GstSpdlParallelDecoderJob * job)
{
  GstSpdlVideoDecode *self = GST_SPDL_VIDEO_DECODE (base);
  WorkerState *ws = state;
  GstSpdlVideoChain *chain = ws->video;
  const GstSpdlVideoDecodeParams *p = &self->active;
  guint clips = p->clip.clips_per_video, frames = p->clip.frames;
  ClipWriter w = { 0, };
  GstMapInfo map;
  GBytes *bytes;
  const gdouble *pts;
  guint n_frames, width, height, c, k, kept = 0, dropped = 0;
  GstSpdlClipPlanResult plan;
  guint *indices = NULL, *wanted = NULL;
  guint n_wanted = 0, too_many = 0, max_cost = 0, no_start = 0;
  gdouble no_start_at = 0;
  gboolean *left_out = NULL;
  GstBuffer **outs = NULL;
  guint8 **data = NULL;
  gdouble dropped_at = 0, span = 0, span_end = 0;
  guint64 audio_n = 0;
  gboolean has_audio = FALSE;
  guint first = 0, n_span = 0;

  if (!gst_buffer_map (job->input, &map, GST_MAP_READ)) {
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "could not map the input memory");
    return;
  }
  /* the chain reads the mapped file; it is unmapped after the decode */
  bytes = g_bytes_new_static (map.data, map.size);
  if (!gst_spdl_video_chain_open (chain, bytes, &job->error))
    goto done;
  pts = gst_spdl_video_chain_get_pts (chain, &n_frames);
  gst_spdl_video_chain_get_size (chain, &width, &height);
  if (n_frames > 0 && !span_frames (base, job, pts, n_frames,
          gst_spdl_video_chain_get_end (chain), &first, &n_span, &span_end))
    goto done;
  indices = g_new (guint, (gsize) clips * frames);
  plan = gst_spdl_clip_plan (&p->clip, pts + first, n_span, span_end,
      job->epoch, job->index, indices);
  for (k = 0; k < clips * frames; k++)
    indices[k] += first;
  if (plan == GST_SPDL_CLIP_PLAN_NO_FRAMES) {
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_NO_VIDEO,
        "the video has no frame");
    goto done;
  }
  if (plan == GST_SPDL_CLIP_PLAN_SHORT) {
    if (p->clip.short_videos == GST_SPDL_SHORT_VIDEOS_ERROR)
      job->fatal = "short-videos=error";
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TOO_SHORT,
        "the %s (%u frames, %.3f s) is shorter than a clip",
        n_span < n_frames ? "span" : "video", n_span,
        n_span ? pts[first + n_span - 1] - pts[first] : 0.0);
    goto done;
  }
  if (width == 0 || height == 0) {
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "the video stream declares no frame size");
    goto done;
  }
  w.p = p;
  w.indices = indices;
  w.geom = g_new0 (GstSpdlGeometry, clips);
  w.window = g_new0 (GstSpdlVideoRegion, clips);
  w.data = data = g_new0 (guint8 *, clips);
  w.delivered = g_new0 (guint8, n_frames);
  outs = g_new0 (GstBuffer *, clips);
  for (c = 0; c < clips; c++) {
    GstSpdlGeometry *g = &w.geom[c];
    guint64 pixels;
    GstMapInfo out_map;
    GstSpdlVideoRegion *r = &w.window[c];
    gint x0, x1, y0, y1;

    clip_geometry (p, width, height, job->epoch, job->index, c, g);
    /* what write_frame()'s sink will read: the geometry's alone */
    if (gst_spdl_row_sink_window (&w.sink, g, FALSE, &x0, &x1, &y0, &y1)) {
      r->x0 = MAX (x0, 0);
      r->x1 = MAX (x1, 0);
      r->y0 = MAX (y0, 0);
      r->y1 = MAX (y1, 0);
    }
    pixels = (guint64) g->out_width * g->out_height * frames;
    if (pixels > output_limit (p)) {
      gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
          "its clips would be %u frames of %ux%u, more than "
          "max-output-pixels=%" G_GUINT64_FORMAT " pixels", frames,
          g->out_width, g->out_height, output_limit (p));
      goto done;
    }
    outs[c] = gst_spdl_buffer_try_new (pixels * 3);
    if (outs[c] == NULL) {
      gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
          "out of memory for a clip of %u frames of %ux%u", frames,
          g->out_width, g->out_height);
      goto done;
    }
    /* the buffer's memory stays where it is until pushed */
    gst_buffer_map (outs[c], &out_map, GST_MAP_WRITE);
    data[c] = out_map.data;
    gst_buffer_unmap (outs[c], &out_map);
  }
  /* max-decode-frames bounds each clip's work, from its keyframes (not
   * all clips of a video together: 64 clips of a 10-minute video with
   * 10 s GOPs were over 2000 together, each about 250); a clip over it
   * is left out */
  wanted = g_new (guint, (gsize) clips * frames);
  left_out = g_new0 (gboolean, clips);
  for (c = 0; c < clips; c++) {
    guint cost = gst_spdl_video_chain_count_decode (chain,
        indices + (gsize) c * frames, frames);

    if (cost == G_MAXUINT) {
      /* an open GOP's frames before its first recovery point, with no
       * keyframe before it (see the chain's mark_recovery_points) */
      left_out[c] = TRUE;
      if (no_start++ == 0)
        no_start_at = pts[indices[c * frames]];
      continue;
    }
    if (p->limits.max_decode_frames && cost > p->limits.max_decode_frames) {
      left_out[c] = TRUE;
      too_many++;
      max_cost = MAX (max_cost, cost);
      continue;
    }
    memcpy (wanted + n_wanted, indices + (gsize) c * frames,
        frames * sizeof (guint));
    n_wanted += frames;
  }
  if (n_wanted > 0 && !gst_spdl_video_chain_decode (chain, wanted, n_wanted,
          frame_region, write_frame, &w, &job->error))
    goto done;
  if (p->audio) {
    span = clip_span (p, pts, n_frames, gst_spdl_video_chain_get_end (chain));
    audio_n = MAX ((guint64) llround (span * p->audio_limits.rate), 1);
    has_audio = open_audio (self, ws->audio, bytes, job);
  }
  for (c = 0; c < clips; c++) {
    gdouble *clip_pts = g_new (gdouble, frames);
    gboolean complete = TRUE;
    guint64 shape[4];

    for (k = 0; k < frames; k++) {
      guint f = indices[c * frames + k];
      clip_pts[k] = pts[f];
      if (!w.delivered[f] && complete && !left_out[c]) {
        complete = FALSE;
        dropped_at = pts[f];
      }
    }
    if (left_out[c] || !complete) {
      if (!left_out[c])
        dropped++;
      g_free (clip_pts);
      gst_clear_buffer (&outs[c]);
      continue;
    }
    clip_shape (p->layout, frames, w.geom[c].out_width,
        w.geom[c].out_height, shape);
    /* the audio chain is in the demuxer's timeline */
    if (p->audio && !add_clip_audio (self, ws->audio, outs[c], has_audio,
            clip_pts[0] - gst_spdl_video_chain_get_time_offset (chain),
            audio_n, job)) {
      g_free (clip_pts);
      goto done;
    }
    gst_spdl_buffer_copy_sample_meta (outs[c], job->input);
    gst_spdl_buffer_set_clip_info (outs[c], c, clip_pts, frames);
    if (p->audio)
      gst_spdl_buffer_set_clip_has_audio (outs[c], has_audio);
    /* the shape travels with the buffer until the caps are made */
    GST_BUFFER_OFFSET (outs[c]) = w.geom[c].out_width;
    GST_BUFFER_OFFSET_END (outs[c]) = w.geom[c].out_height;
    job->outputs = g_list_append (job->outputs, g_steal_pointer (&outs[c]));
    g_free (clip_pts);
    kept++;
  }
  if (job->outputs)
    gst_spdl_buffer_mark_last_clip (g_list_last (job->outputs)->data);
  if (dropped || no_start || too_many) {
    /* every reason named, with its count: the video counts under the
     * first of them (a cut of an open GOP with a low max-decode-frames
     * named the clips before its first usable keyframe only, the others
     * were left out unnamed) */
    GString *why = g_string_new (NULL);
    gint code = dropped ? GST_SPDL_DECODE_ERROR_CORRUPT : no_start ?
        GST_SPDL_DECODE_ERROR_UNSUPPORTED :
        GST_SPDL_DECODE_ERROR_TOO_MANY_DECODE_FRAMES;

    if (dropped)
      g_string_append_printf (why, "; %u: the frame at %.3f s could not be "
          "decoded", dropped, dropped_at);
    if (no_start)
      g_string_append_printf (why, "; %u: the clip at %.3f s is before the "
          "first keyframe decoding can start at (the video starts at an "
          "open GOP's recovery point, whose frames gst-libav cannot decode "
          "exactly)", no_start, no_start_at);
    if (too_many)
      g_string_append_printf (why, "; %u: one needs %u frames decoded from "
          "its keyframes, more than max-decode-frames=%u", too_many,
          max_cost, p->limits.max_decode_frames);
    gst_spdl_decode_fail (&job->error, code, "%u of its %u clips dropped%s",
        dropped + no_start + too_many, clips, why->str);
    g_string_free (why, TRUE);
  }
done:
  if (outs)
    for (c = 0; c < clips; c++)
      gst_clear_buffer (&outs[c]);
  g_free (outs);
  g_free (data);
  g_free (w.geom);
  g_free (w.window);
  g_free (w.delivered);
  gst_spdl_row_sink_clear (&w.sink);
  g_free (indices);
  g_free (wanted);
  g_free (left_out);
  gst_spdl_video_chain_close (chain);
  if (ws->audio)
    gst_spdl_audio_chain_close (ws->audio);
  g_bytes_unref (bytes);
  gst_buffer_unmap (job->input, &map);
  (void) kept;
}

/* READY->PAUSED: the properties, copied */
static gboolean
gst_spdl_video_decode_start (GstSpdlParallelDecoder * base)
{
  GstSpdlVideoDecode *self = GST_SPDL_VIDEO_DECODE (base);

  GST_OBJECT_LOCK (self);
  self->active = self->params;
  self->demux_builds = self->decoder_builds = 0;
  self->frames_decoded = 0;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gpointer
gst_spdl_video_decode_create_state (GstSpdlParallelDecoder * base)
{
  const GstSpdlVideoDecodeParams *p = &GST_SPDL_VIDEO_DECODE (base)->active;
  WorkerState *ws = g_new0 (WorkerState, 1);

  ws->video = gst_spdl_video_chain_new (&p->limits);
  if (p->audio) {
    GstSpdlAudioLimits limits = p->audio_limits;

    limits.timeout = p->limits.timeout;
    limits.reuse = p->limits.reuse;
    /* the audio beside the frames: in the video's timeline */
    limits.media_timeline = TRUE;
    ws->audio = gst_spdl_audio_chain_new (&limits);
  }
  return ws;
}

static void
gst_spdl_video_decode_free_state (GstSpdlParallelDecoder * base,
    gpointer state)
{
  GstSpdlVideoDecode *self = GST_SPDL_VIDEO_DECODE (base);
  guint d, c;

  WorkerState *ws = state;

  gst_spdl_video_chain_get_builds (ws->video, &d, &c);
  self->demux_builds += d;
  self->decoder_builds += c;
  self->frames_decoded += gst_spdl_video_chain_get_frames_decoded (ws->video);
  gst_spdl_video_chain_free (ws->video);
  gst_spdl_audio_chain_free (ws->audio);
  g_free (ws);
}

/* ------------------------------------------------------------------------ */
/* Source side                                                              */

static const gchar *
clip_layout_nick (GstSpdlClipLayout layout)
{
  GEnumClass *klass = g_type_class_ref (GST_TYPE_SPDL_CLIP_LAYOUT);
  GEnumValue *value = g_enum_get_value (klass, layout);
  const gchar *nick = value ? value->value_nick : "tchw";

  g_type_class_unref (klass);
  return nick;
}

/* Caps before the first clip of each shape (the shape travels in the
 * buffer's offsets until then). */
static gboolean
gst_spdl_video_decode_prepare_output (GstSpdlParallelDecoder * base,
    GstBuffer * clip)
{
  GstSpdlVideoDecode *self = GST_SPDL_VIDEO_DECODE (base);
  GstSpdlTensorInfo info[2];
  guint64 shape[4], audio_n = 0;
  guint channels = self->active.audio_limits.channels;
  GstCaps *caps;
  gboolean ok;

  clip_shape (self->active.layout, self->active.clip.frames,
      GST_BUFFER_OFFSET (clip), GST_BUFFER_OFFSET_END (clip), shape);
  GST_BUFFER_OFFSET (clip) = GST_BUFFER_OFFSET_NONE;
  GST_BUFFER_OFFSET_END (clip) = GST_BUFFER_OFFSET_NONE;
  if (self->active.audio && gst_buffer_n_memory (clip) == 2)
    audio_n = gst_memory_get_sizes (gst_buffer_peek_memory (clip, 1), NULL,
        NULL) / (sizeof (gfloat) * channels);
  if (gst_spdl_parallel_decoder_has_output_caps (base) &&
      memcmp (shape, self->caps_shape, sizeof (self->caps_shape)) == 0 &&
      audio_n == self->caps_audio_n)
    return TRUE;
  info[0].n_dims = 4;
  info[0].dtype = GST_SPDL_DTYPE_UINT8;
  memcpy (info[0].shape, shape, sizeof (guint64) * 4);
  info[1].n_dims = 2;
  info[1].dtype = GST_SPDL_DTYPE_FLOAT32;
  info[1].shape[0] = channels;
  info[1].shape[1] = audio_n;
  caps = gst_spdl_tensors_caps_new (info, self->active.audio ? 2 : 1, NULL);
  /* which dimension is time: spdlbatch's pts tensor needs it */
  gst_caps_set_simple (caps, "layout", G_TYPE_STRING,
      clip_layout_nick (self->active.layout), NULL);
  ok = gst_spdl_parallel_decoder_set_tensor_caps (base, caps, &info[0]);
  gst_caps_unref (caps);
  if (ok) {
    memcpy (self->caps_shape, shape, sizeof (self->caps_shape));
    self->caps_audio_n = audio_n;
  }
  return ok;
}
