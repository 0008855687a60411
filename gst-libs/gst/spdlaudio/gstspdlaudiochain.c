/* GStreamer SPDL: spans of an audio file, decoded by GStreamer
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The pipeline ends at the stream's own rate: resampling is done here
 * with GstAudioResampler's Kaiser filters (GstSpdlResampler: its taps,
 * by a faster inner product), because the audioresample element offers
 * only its quality presets, whose filter tables are sampled at 8 to 16
 * phases per input sample: the phase of each output sample is then off
 * by up to 1/16 of an input sample, an error of 33 dB against an exact
 * windowed-sinc resampler (scipy's resample_poly) at any quality. Where
 * the rates have few phases (out rate / gcd: 160 from 44.1 kHz to
 * 16 kHz, 1 from 48 kHz) each phase's filter is computed exactly, when
 * first used; else GstAudioResampler runs a table of 1024 phases
 * (filter-oversample), interpolated linearly between phases (cubic, the
 * default, stays at 58.6 dB on a 6 kHz tone at any quality). The same
 * Kaiser filters reach 88 to 101 dB at quality 4 and 94 to 116 dB at 10
 * (sweeps from 8, 11.025, 22.05, 44.1 and 48 kHz resampled to 16 kHz;
 * both ways agree to 0.1 dB). The interpolated table of 1024 phases costs
 * about a million taps (a sine and a Bessel function each) per resampler,
 * 13 to 20 ms of CPU paid for every span; the exact filters of 44.1 to
 * 16 kHz, 30 thousand. A span that ends at the stream's end is drained
 * with silence: it equals the file followed by zeros.
 *
 * A span starts the resampler on the grid where an input sample and an
 * output sample coincide (every rate / gcd input samples), early enough
 * that the filter has the real signal under it when the first wanted
 * sample comes out: a span equals the same samples of the whole file
 * resampled. Decoding likewise starts 0.1 s early (a lossy decoder's
 * warm-up after a seek); a reader starts at that grid point exactly (its
 * read from any frame equals its read from the start: WAV, FLAC and
 * Vorbis by their seeks, Opus and MP3 decoding from earlier). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlaudiochain.h"
#include "gstspdlaudioreader.h"
#include "gstspdlerrors.h"
#include "gstspdlformat.h"
#include "gstspdlmediafile.h"
#include "gstspdlresampler.h"

#include <gio/gio.h>
#include <gst/app/gstappsink.h>
#include <gst/audio/audio.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (spdl_audio_chain_debug);
#define GST_CAT_DEFAULT spdl_audio_chain_debug

#define DEFAULT_RATE 16000
#define DEFAULT_CHANNELS 1
#define DEFAULT_QUALITY 4
#define DEFAULT_MAX_RATE 768000
#define DEFAULT_MAX_CHANNELS 64
#define DEFAULT_TIMEOUT (30 * GST_SECOND)
/* how long one wait for decoded audio lasts before checking the bus and
 * the deadline */
#define POLL_INTERVAL (20 * GST_MSECOND)
/* a decoder's input timestamp this close to where its output reached is
 * ignored: its output stays contiguous (see on_element_added) */
#define DECODER_TOLERANCE (40 * GST_MSECOND)
/* phases of the resampler's filter table (see above) */
#define FILTER_OVERSAMPLE 1024
/* the largest table of exact filters, one per phase (see above) */
#define MAX_FULL_FILTER_BYTES (4 << 20)
/* decoded buffers queued in the appsink: memory stays bounded */
#define MAX_QUEUED_BUFFERS 4
#define WAKE_MESSAGE "spdl-audio-chain-wake"
/* a reader's frames converted to float at a time */
#define CONVERT_FRAMES 4096

struct _GstSpdlAudioChain
{
  GstSpdlAudioLimits limits;

  GstElement *pipe, *src, *decodebin, *convert, *appsink;
  GstBus *bus;
  GMutex pads_lock;             /* pad-added runs in a streaming thread */
  gboolean audio_linked, no_more_pads;
  GstPad *audio_pad;            /* decodebin's pad linked to audioconvert */
  gint linked_rate;             /* its declared rate */
  GError *rejected;             /* the stream's declared format */
  gchar *unknown_type;          /* typefind's caps decodebin could not plug */
  GList *fakesinks;

  /* the open file */
  GBytes *data;
  guint in_rate, in_channels;   /* as decoded (after audioconvert: ours) */
  guint declared_channels;
  guint64 n_in, n_out;          /* declared length, 0 unknown */
  gboolean at_start;            /* prerolled, not seeked */
  gboolean chained;             /* a chained Ogg: read from its start only */
  gboolean raw_stamps;          /* no audio decoder: the container's
                                 * timestamps as they are (read_sample) */
  /* the prerolled segment's time - start: see stream_time() */
  gint64 preroll_time_offset;
  gboolean has_preroll_segment;
  /* the first decoded sample's place in the stream's time, in input
   * samples: sample 0 of every span (0 with media_timeline) */
  guint64 origin;
  GstSpdlAudioReader *reader;   /* the file read without the pipeline */

  /* a reader's frames to float and the output's channels: audioconvert's
   * library with its mix matrix */
  GstAudioConverter *converter;
  GstAudioInfo converter_info;  /* of its input */
  gfloat *converted;             /* CONVERT_FRAMES */

  GstSpdlResampler *resampler;
  guint resampler_rate;
  gboolean resampler_on_grid;   /* its phase is 0: reset() makes it new */
  gfloat *scratch;
  gsize scratch_frames;
  gfloat *aligned;              /* decoded audio that was not aligned */
  gsize aligned_size;

  /* the span being read, shared with appsink's streaming thread */
  GMutex read_lock;
  GCond read_cond;
  struct _Reading *reading;     /* filled by on_new_sample */
  struct _Reading *pending;     /* read from the seek's flush-stop on */
  gboolean ended;               /* EOS reached appsink with no span armed */
  /* the first decoded sample, looked for by find_first_sample: appsink's
   * thread holds it (probing) until the first span is armed */
  gboolean probing;
  GstSample *first_sample;

  guint builds;
};

void
gst_spdl_audio_limits_init (GstSpdlAudioLimits * limits)
{
  memset (limits, 0, sizeof (*limits));
  limits->rate = DEFAULT_RATE;
  limits->channels = DEFAULT_CHANNELS;
  limits->quality = DEFAULT_QUALITY;
  limits->max_rate = DEFAULT_MAX_RATE;
  limits->max_channels = DEFAULT_MAX_CHANNELS;
  limits->max_samples = (guint64) DEFAULT_RATE * 3600;
  limits->timeout = DEFAULT_TIMEOUT;
  limits->reuse = TRUE;
  limits->exact = TRUE;
}

GstSpdlAudioChain *
gst_spdl_audio_chain_new (const GstSpdlAudioLimits * limits)
{
  static gsize debug_initialized = 0;
  GstSpdlAudioChain *chain = g_new0 (GstSpdlAudioChain, 1);

  /* chains are made on several decoding threads at once: a once-flag of
   * its own, left only when the category is set */
  if (g_once_init_enter (&debug_initialized)) {
    GST_DEBUG_CATEGORY_INIT (spdl_audio_chain_debug, "spdlaudiochain", 0,
        "SPDL audio decode chain");
    g_once_init_leave (&debug_initialized, 1);
  }
  if (limits)
    chain->limits = *limits;
  else
    gst_spdl_audio_limits_init (&chain->limits);
  chain->limits.rate = MAX (chain->limits.rate, 1);
  chain->limits.channels = MAX (chain->limits.channels, 1);
  g_mutex_init (&chain->pads_lock);
  g_mutex_init (&chain->read_lock);
  g_cond_init (&chain->read_cond);
  return chain;
}

guint
gst_spdl_audio_chain_get_builds (GstSpdlAudioChain * chain)
{
  return chain->builds;
}

/* ------------------------------------------------------------------------ */
/* The pipeline                                                             */

/* GStreamer's default mix (audioconvert's, GstAudioChannelMixer) of the
 * file's positioned channels into fewer default-positioned ones: its
 * weights, read off by mixing one unit impulse per input channel.
 * FALSE where it has none (unpositioned channels, more than 8 out). */
static gboolean
default_mix_weights (const GstAudioChannelPosition * in_pos,
    guint in_channels, guint out_channels, gfloat * weights)
{
  GstAudioChannelPosition out_pos[64];
  GstAudioChannelMixer *mixer;
  gfloat *impulses, *mixed;
  gpointer in[1], out[1];
  guint i, j;

  if (in_pos == NULL || in_pos[0] == GST_AUDIO_CHANNEL_POSITION_NONE ||
      in_pos[0] == GST_AUDIO_CHANNEL_POSITION_MONO || out_channels > 8 ||
      !gst_audio_channel_positions_from_mask (out_channels,
          gst_audio_channel_get_fallback_mask (out_channels), out_pos))
    return FALSE;
  mixer = gst_audio_channel_mixer_new (GST_AUDIO_CHANNEL_MIXER_FLAGS_NONE,
      GST_AUDIO_FORMAT_F32, in_channels, (GstAudioChannelPosition *) in_pos,
      out_channels, out_pos);
  if (mixer == NULL)
    return FALSE;
  impulses = g_new0 (gfloat, (gsize) in_channels * in_channels);
  mixed = g_new0 (gfloat, (gsize) in_channels * out_channels);
  for (j = 0; j < in_channels; j++)
    impulses[j * in_channels + j] = 1.0f;
  in[0] = impulses;
  out[0] = mixed;
  gst_audio_channel_mixer_samples (mixer, in, out, in_channels);
  for (i = 0; i < out_channels; i++)
    for (j = 0; j < in_channels; j++)
      weights[i * in_channels + j] = mixed[j * out_channels + i];
  g_free (impulses);
  g_free (mixed);
  gst_audio_channel_mixer_free (mixer);
  return TRUE;
}

/* The file's channels to the output's: where there are fewer out,
 * GStreamer's default mix (audioconvert's: every channel kept, LFE
 * included, scaled so that no sum clips; 2 to 1 is the mean, 5.1 to 2
 * keeps the centre and surrounds, see docs/plugins/spdlaudiodecode.md);
 * unpositioned channels to mono: the mean; mono is copied to every output
 * channel; otherwise channel k of the file goes to output channel k (those
 * the file lacks are silent). Always an explicit matrix: a reused
 * audioconvert keeps the last one set. The same matrix converts a
 * reader's frames (ensure_converter). */
static void
init_mix_matrix (GValue * matrix, const GstAudioChannelPosition * in_pos,
    guint in_channels, guint out_channels)
{
  GValue row = G_VALUE_INIT, v = G_VALUE_INIT;
  gfloat *weights = g_new (gfloat, (gsize) in_channels * out_channels);
  guint i, j;

  if (out_channels >= in_channels || !default_mix_weights (in_pos,
          in_channels, out_channels, weights)) {
    for (i = 0; i < out_channels; i++)
      for (j = 0; j < in_channels; j++) {
        gfloat w;
        if (out_channels == 1)
          w = 1.0f / in_channels;
        else if (in_channels == 1)
          w = 1.0f;
        else
          w = i == j ? 1.0f : 0.0f;
        weights[i * in_channels + j] = w;
      }
  }
  g_value_init (matrix, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_FLOAT);
  for (i = 0; i < out_channels; i++) {
    g_value_init (&row, GST_TYPE_ARRAY);
    for (j = 0; j < in_channels; j++) {
      g_value_set_float (&v, weights[i * in_channels + j]);
      gst_value_array_append_value (&row, &v);
    }
    gst_value_array_append_and_take_value (matrix, &row);
  }
  g_value_unset (&v);
  g_free (weights);
}

static void
set_mix_matrix (GstElement * convert, const GstAudioChannelPosition * in_pos,
    guint in_channels, guint out_channels)
{
  GValue matrix = G_VALUE_INIT;

  init_mix_matrix (&matrix, in_pos, in_channels, out_channels);
  g_object_set_property (G_OBJECT (convert), "mix-matrix", &matrix);
  g_value_unset (&matrix);
}

static void
wake (GstSpdlAudioChain * chain)
{
  gst_bus_post (chain->bus, gst_message_new_application (NULL,
          gst_structure_new_empty (WAKE_MESSAGE)));
}

/* A stream declaring more than the limits is skipped before decoding */
static gboolean
check_declared (GstSpdlAudioChain * chain, gint rate, gint channels,
    GError ** error)
{
  if (rate <= 0 || channels <= 0 || (guint) rate > chain->limits.max_rate
      || (guint) channels > chain->limits.max_channels)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "the stream declares %d Hz and %d channels (at most %u Hz and %u "
        "channels)", rate, channels, chain->limits.max_rate,
        chain->limits.max_channels);
  return TRUE;
}

static void
on_pad_added (GstElement * decodebin, GstPad * pad, GstSpdlAudioChain * chain)
{
  GstCaps *caps = gst_pad_get_current_caps (pad);
  const GstStructure *s;
  GstElement *sink = NULL;
  GstPad *sinkpad;
  GstPadLinkReturn ret;
  gint rate = 0, channels = 0;
  GstAudioInfo info;

  if (caps == NULL)
    caps = gst_pad_query_caps (pad, NULL);
  s = gst_caps_get_size (caps) ? gst_caps_get_structure (caps, 0) : NULL;
  g_mutex_lock (&chain->pads_lock);
  if (s && gst_structure_has_name (s, "audio/x-raw") &&
      chain->audio_pad == NULL && chain->rejected == NULL) {
    gst_structure_get_int (s, "rate", &rate);
    gst_structure_get_int (s, "channels", &channels);
    if (chain->audio_linked) {
      /* the next stream of a chained file (Ogg), after decodebin removed
       * the one that ended: its samples continue the same audio, whose
       * rate the chain has planned with */
      if (rate != chain->linked_rate || (guint) channels !=
          chain->declared_channels)
        gst_spdl_decode_fail (&chain->rejected,
            GST_SPDL_DECODE_ERROR_UNSUPPORTED, "a chained stream changes "
            "the format from %d Hz, %u channels to %d Hz, %d channels",
            chain->linked_rate, chain->declared_channels, rate, channels);
      else
        sink = gst_object_ref (chain->convert);
    } else if (check_declared (chain, rate, channels, &chain->rejected)) {
      chain->audio_linked = TRUE;
      chain->linked_rate = rate;
      chain->declared_channels = channels;
      set_mix_matrix (chain->convert, gst_audio_info_from_caps (&info, caps)
          && (gint) GST_AUDIO_INFO_CHANNELS (&info) == channels ?
          info.position : NULL, channels, chain->limits.channels);
      sink = gst_object_ref (chain->convert);
    }
    if (sink)
      chain->audio_pad = gst_object_ref (pad);
  }
  if (sink == NULL) {
    /* video, subtitles, a second audio stream: drained, not decoded */
    sink = gst_element_factory_make ("fakesink", NULL);
    if (sink) {
      gst_object_ref_sink (sink);
      g_object_set (sink, "sync", FALSE, "async", FALSE, NULL);
      chain->fakesinks = g_list_prepend (chain->fakesinks,
          gst_object_ref (sink));
      gst_bin_add (GST_BIN (chain->pipe), sink);
      gst_element_sync_state_with_parent (sink);
    }
  }
  g_mutex_unlock (&chain->pads_lock);
  gst_caps_unref (caps);
  if (sink) {
    GstPad *stale;

    sinkpad = gst_element_get_static_pad (sink, "sink");
    /* the previous file's decodebin pad, if decodebin has not removed it
     * yet: linked, the new one could not be */
    stale = gst_pad_get_peer (sinkpad);
    if (stale) {
      gst_pad_unlink (stale, sinkpad);
      gst_object_unref (stale);
    }
    ret = gst_pad_link (pad, sinkpad);
    if (ret != GST_PAD_LINK_OK)
      GST_WARNING ("could not link %" GST_PTR_FORMAT ": %s", pad,
          gst_pad_link_get_name (ret));
    gst_object_unref (sinkpad);
    gst_object_unref (sink);
  }
  if (chain->rejected) {
    wake (chain);
    /* a span being read stops waiting (run_pipeline) */
    g_mutex_lock (&chain->read_lock);
    g_cond_signal (&chain->read_cond);
    g_mutex_unlock (&chain->read_lock);
  }
}

static void
on_pad_removed (GstElement * decodebin, GstPad * pad,
    GstSpdlAudioChain * chain)
{
  g_mutex_lock (&chain->pads_lock);
  GST_DEBUG ("pad removed %" GST_PTR_FORMAT " (audio: %d)", pad,
      pad == chain->audio_pad);
  if (pad == chain->audio_pad)
    gst_clear_object (&chain->audio_pad);
  g_mutex_unlock (&chain->pads_lock);
}

static void
on_no_more_pads (GstElement * decodebin, GstSpdlAudioChain * chain)
{
  g_mutex_lock (&chain->pads_lock);
  chain->no_more_pads = TRUE;
  g_mutex_unlock (&chain->pads_lock);
  wake (chain);
}

/* What typefind found, when decodebin has no element for it (or only
 * refused ones, see gst_spdl_media_autoplug_select): the file is not
 * audio. Caps below a demuxer (a video stream) are a file without audio
 * instead. */
static void
on_unknown_type (GstElement * decodebin, GstPad * pad, GstCaps * caps,
    GstSpdlAudioChain * chain)
{
  GstElement *parent = gst_pad_get_parent_element (pad);
  GstElementFactory *factory = parent ? gst_element_get_factory (parent) :
      NULL;

  g_mutex_lock (&chain->pads_lock);
  if (chain->unknown_type == NULL && gst_caps_get_size (caps) > 0 &&
      factory && g_strcmp0 (GST_OBJECT_NAME (factory), "typefind") == 0)
    chain->unknown_type = g_strdup (gst_structure_get_name
        (gst_caps_get_structure (caps, 0)));
  g_mutex_unlock (&chain->pads_lock);
  gst_clear_object (&parent);
}

/* A decoder gives its output its input's timestamps, which are the
 * container's, rounded: Matroska's to 1 ms, where a Vorbis packet of
 * 1024 samples at 44.1 kHz lasts 23.22 ms and is stamped 23 or 24 ms
 * after the one before. Placed by those (read_sample), every buffer was
 * shifted by up to half a millisecond against the one before: gaps of
 * silence and skipped samples every 23 ms, 10 dB from FFmpeg's decode at
 * 1 kHz. With a tolerance, the decoder counts its output from the first
 * timestamp after a seek and follows a timestamp only further off (as
 * audiobasesink's alignment threshold, 40 ms); exact containers (MP4,
 * Ogg, WAV) give the same times either way. */
static void
on_element_added (GstBin * decodebin, GstBin * bin, GstElement * element,
    gpointer user_data)
{
  if (GST_IS_AUDIO_DECODER (element))
    gst_audio_decoder_set_tolerance (GST_AUDIO_DECODER (element),
        DECODER_TOLERANCE);
}

static void
free_pipeline (GstSpdlAudioChain * chain)
{
  if (chain->pipe == NULL)
    return;
  gst_element_set_state (chain->pipe, GST_STATE_NULL);
  g_list_free_full (chain->fakesinks, gst_object_unref);
  chain->fakesinks = NULL;
  gst_clear_object (&chain->bus);
  gst_clear_object (&chain->pipe);
  chain->src = chain->decodebin = chain->convert = chain->appsink = NULL;
  gst_clear_object (&chain->audio_pad);
  chain->audio_linked = chain->no_more_pads = FALSE;
  g_clear_error (&chain->rejected);
  g_clear_pointer (&chain->unknown_type, g_free);
}

static GstFlowReturn on_new_sample (GstAppSink * appsink,
    gpointer user_data);
static void on_eos (GstAppSink * appsink, gpointer user_data);
static GstPadProbeReturn on_flush_stop (GstPad * pad, GstPadProbeInfo * info,
    gpointer user_data);
static GstBusSyncReply on_bus_sync (GstBus * bus, GstMessage * msg,
    gpointer user_data);

static gboolean
build_pipeline (GstSpdlAudioChain * chain, GError ** error)
{
  GstAppSinkCallbacks callbacks = { 0, };
  GstElement *capsfilter;
  GstCaps *caps;
  GstPad *pad;

  callbacks.eos = on_eos;
  callbacks.new_sample = on_new_sample;

  chain->pipe = gst_pipeline_new (NULL);
  chain->decodebin = gst_element_factory_make ("decodebin", NULL);
  chain->convert = gst_element_factory_make ("audioconvert", NULL);
  capsfilter = gst_element_factory_make ("capsfilter", NULL);
  chain->appsink = gst_element_factory_make ("appsink", NULL);
  if (!chain->decodebin || !chain->convert || !capsfilter || !chain->appsink) {
    gst_clear_object (&chain->decodebin);
    gst_clear_object (&chain->convert);
    gst_clear_object (&capsfilter);
    gst_clear_object (&chain->appsink);
    gst_clear_object (&chain->pipe);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "decodebin, audioconvert or appsink is missing (GStreamer's base "
        "plugins)");
  }
  /* decode audio only: other streams stop at their parsers */
  caps = gst_caps_new_empty_simple ("audio/x-raw");
  g_object_set (chain->decodebin, "caps", caps, NULL);
  gst_caps_unref (caps);
  caps = gst_caps_new_simple ("audio/x-raw", "format", G_TYPE_STRING,
      GST_AUDIO_NE (F32), "layout", G_TYPE_STRING, "interleaved",
      "channels", G_TYPE_INT, chain->limits.channels, NULL);
  g_object_set (capsfilter, "caps", caps, NULL);
  gst_caps_unref (caps);
  g_object_set (chain->appsink, "sync", FALSE, "enable-last-sample", FALSE,
      "max-buffers", MAX_QUEUED_BUFFERS, "drop", FALSE, "wait-on-eos", FALSE,
      NULL);
  gst_bin_add_many (GST_BIN (chain->pipe), chain->decodebin, chain->convert,
      capsfilter, chain->appsink, NULL);
  if (!gst_element_link_many (chain->convert, capsfilter, chain->appsink,
          NULL)) {
    free_pipeline (chain);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "could not link audioconvert to appsink");
  }
  gst_app_sink_set_callbacks (GST_APP_SINK (chain->appsink), &callbacks,
      chain, NULL);
  pad = gst_element_get_static_pad (chain->appsink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_FLUSH, on_flush_stop,
      chain, NULL);
  gst_object_unref (pad);
  g_signal_connect (chain->decodebin, "pad-added", G_CALLBACK (on_pad_added),
      chain);
  g_signal_connect (chain->decodebin, "pad-removed",
      G_CALLBACK (on_pad_removed), chain);
  g_signal_connect (chain->decodebin, "no-more-pads",
      G_CALLBACK (on_no_more_pads), chain);
  g_signal_connect (chain->decodebin, "deep-element-added",
      G_CALLBACK (on_element_added), NULL);
  g_signal_connect (chain->decodebin, "autoplug-select",
      G_CALLBACK (gst_spdl_media_autoplug_select), NULL);
  g_signal_connect (chain->decodebin, "unknown-type",
      G_CALLBACK (on_unknown_type), chain);
  chain->bus = gst_element_get_bus (chain->pipe);
  gst_bus_set_sync_handler (chain->bus, on_bus_sync, chain, NULL);
  chain->builds++;
  return TRUE;
}

/* A new source for every file: giostreamsrc keeps its read cache across
 * streams (see gstspdlvideochain.c); the decodebin after it is kept. */
static gboolean
replace_source (GstSpdlAudioChain * chain, GBytes * data, GError ** error)
{
  GInputStream *stream;

  if (!gst_spdl_media_replace_source (GST_BIN (chain->pipe), &chain->src,
          chain->decodebin, error))
    return FALSE;
  stream = g_memory_input_stream_new_from_bytes (data);
  g_object_set (chain->src, "stream", stream, NULL);
  g_object_unref (stream);
  return TRUE;
}

/* Back to NULL with no dynamic sink left: ready for the next file. */
static void
reset_pipeline (GstSpdlAudioChain * chain)
{
  GList *l;

  gst_element_set_state (chain->pipe, GST_STATE_NULL);
  for (l = chain->fakesinks; l; l = l->next) {
    gst_element_set_state (l->data, GST_STATE_NULL);
    gst_bin_remove (GST_BIN (chain->pipe), l->data);
  }
  g_list_free_full (chain->fakesinks, gst_object_unref);
  chain->fakesinks = NULL;
  chain->audio_linked = chain->no_more_pads = FALSE;
  gst_clear_object (&chain->audio_pad);
  g_clear_error (&chain->rejected);
  g_clear_pointer (&chain->unknown_type, g_free);
  /* messages of the previous file */
  gst_bus_set_flushing (chain->bus, TRUE);
  gst_bus_set_flushing (chain->bus, FALSE);
}

void
gst_spdl_audio_chain_close (GstSpdlAudioChain * chain)
{
  /* appsink's thread, if it holds a first sample, lets it go */
  g_mutex_lock (&chain->read_lock);
  chain->probing = FALSE;
  g_clear_pointer (&chain->first_sample, gst_sample_unref);
  g_cond_broadcast (&chain->read_cond);
  g_mutex_unlock (&chain->read_lock);
  /* after a reader's file the pipeline is as the last file left it */
  if (chain->pipe && chain->reader == NULL) {
    if (chain->limits.reuse)
      reset_pipeline (chain);
    else
      free_pipeline (chain);
  }
  g_clear_pointer (&chain->reader, gst_spdl_audio_reader_free);
  g_clear_pointer (&chain->data, g_bytes_unref);
  chain->in_rate = chain->in_channels = chain->declared_channels = 0;
  chain->n_in = chain->n_out = 0;
  chain->at_start = FALSE;
  chain->ended = FALSE;
  chain->chained = FALSE;
  chain->has_preroll_segment = FALSE;
  chain->raw_stamps = FALSE;
  chain->origin = 0;
}

void
gst_spdl_audio_chain_free (GstSpdlAudioChain * chain)
{
  if (chain == NULL)
    return;
  gst_spdl_audio_chain_close (chain);
  free_pipeline (chain);
  gst_spdl_resampler_free (chain->resampler);
  if (chain->converter)
    gst_audio_converter_free (chain->converter);
  g_free (chain->converted);
  g_free (chain->scratch);
  g_free (chain->aligned);
  g_mutex_clear (&chain->pads_lock);
  g_mutex_clear (&chain->read_lock);
  g_cond_clear (&chain->read_cond);
  g_free (chain);
}


/* An error posted, a rejected stream or no audio stream at all. */
static gboolean
check_failed (GstSpdlAudioChain * chain, GstMessage * msg, GError ** error)
{
  gboolean no_audio;

  if (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gboolean missing;

    gchar *type;

    gst_message_parse_error (msg, &err, NULL);
    missing = g_error_matches (err, GST_CORE_ERROR,
        GST_CORE_ERROR_MISSING_PLUGIN);
    g_error_free (err);
    g_mutex_lock (&chain->pads_lock);
    no_audio = !chain->audio_linked && chain->rejected == NULL;
    type = g_strdup (chain->unknown_type);
    g_mutex_unlock (&chain->pads_lock);
    /* nothing for the file itself (a GIF: its only demuxer is refused) */
    if (missing && type) {
      gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT,
          "the file is %s, not an audio file", type);
      g_free (type);
      return TRUE;
    }
    g_free (type);
    /* decodebin stops at raw audio: a file of other streams only ends
     * in "missing plug-in" */
    if (missing && no_audio)
      return !gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_NO_AUDIO,
          "the file has no audio stream that can be decoded");
    /* a rejected stream makes the demuxer fail "not-linked": say why */
    if (chain->rejected == NULL)
      return !gst_spdl_media_fail_from_message (msg, error, "decoding");
  }
  g_mutex_lock (&chain->pads_lock);
  if (chain->rejected) {
    g_propagate_error (error, g_error_copy (chain->rejected));
    g_mutex_unlock (&chain->pads_lock);
    return TRUE;
  }
  no_audio = chain->no_more_pads && !chain->audio_linked;
  g_mutex_unlock (&chain->pads_lock);
  if (no_audio)
    return !gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_NO_AUDIO,
        "the file has no audio stream");
  return FALSE;
}

/* A file a reader took: no pipeline is built or touched for it */
static gboolean
open_reader (GstSpdlAudioChain * chain, GBytes * data, GError ** error)
{
  GstSpdlAudioReader *reader = chain->reader;
  guint rate = GST_AUDIO_INFO_RATE (&reader->info);
  guint channels = GST_AUDIO_INFO_CHANNELS (&reader->info);

  if (!check_declared (chain, reader->declared_rate ? reader->declared_rate :
          rate, channels, error)) {
    g_clear_pointer (&chain->reader, gst_spdl_audio_reader_free);
    return FALSE;
  }
  chain->data = g_bytes_ref (data);
  chain->in_rate = rate;
  chain->in_channels = chain->limits.channels;
  chain->declared_channels = channels;
  chain->n_in = reader->n_frames;
  chain->n_out = gst_util_uint64_scale_ceil (chain->n_in, chain->limits.rate,
      rate);
  GST_DEBUG ("%s reader: %u Hz, %u channels, %" G_GUINT64_FORMAT
      " samples", gst_spdl_audio_reader_get_name (reader), rate, channels,
      chain->n_in);
  return TRUE;
}

static guint64 stream_time (GstSpdlAudioChain * chain,
    const GstSegment * segment, GstClockTime pts);

/* The unseeked segment's time - start, for stream_time(), from @sample;
 * the stream time of its buffer's first sample, G_MAXUINT64 without a
 * buffer (0 before 0). */
static guint64
keep_first_segment (GstSpdlAudioChain * chain, GstSample * sample)
{
  const GstSegment *segment = sample ? gst_sample_get_segment (sample) : NULL;
  GstBuffer *buffer = sample ? gst_sample_get_buffer (sample) : NULL;
  guint64 first;

  chain->has_preroll_segment = segment && segment->format == GST_FORMAT_TIME
      && GST_CLOCK_TIME_IS_VALID (segment->time);
  if (chain->has_preroll_segment)
    chain->preroll_time_offset = (gint64) segment->time -
        (gint64) segment->start;
  if (buffer == NULL)
    return G_MAXUINT64;
  if (!GST_BUFFER_PTS_IS_VALID (buffer))
    return 0;
  first = stream_time (chain, segment, GST_BUFFER_PTS (buffer));
  return first == G_MAXUINT64 ? 0 : first;
}

/* While the pipeline plays (read_lock not held): TRUE with @error when
 * it failed (an error message; a later stream refused, on_pad_added:
 * nothing more comes) or ran past @deadline (@timeout_what and the
 * timeout). */
static gboolean
playing_failed (GstSpdlAudioChain * chain, GstClockTime deadline,
    const gchar * timeout_what, GError ** error)
{
  GstMessage *msg = gst_bus_pop_filtered (chain->bus, GST_MESSAGE_ERROR);

  if (msg) {
    gst_spdl_media_fail_from_message (msg, error, "decoding");
    gst_message_unref (msg);
    return TRUE;
  }
  if (check_failed (chain, NULL, error))
    return TRUE;
  if (gst_util_get_timestamp () > deadline) {
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TIMEOUT,
        "%s %" GST_TIME_FORMAT, timeout_what,
        GST_TIME_ARGS (chain->limits.timeout));
    return TRUE;
  }
  return FALSE;
}

/* A file that prerolled on a gap (an MP4's empty edit, its start offset)
 * has no sample yet: the stream plays until its first buffer, which
 * appsink's thread holds (on_new_sample) until the first span is armed:
 * a span from the start is then read without a seek, from a decoder that
 * has never been flushed (AAC's first frames after a flush differ from
 * FFmpeg's decode, and at the start no earlier audio hides them). */
static guint64
find_first_sample (GstSpdlAudioChain * chain, GstClockTime deadline,
    GError ** error)
{
  GstSample *sample = NULL;
  gboolean ended = FALSE;
  guint64 first;

  g_mutex_lock (&chain->read_lock);
  chain->probing = TRUE;
  g_mutex_unlock (&chain->read_lock);
  if (gst_element_set_state (chain->pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "the pipeline could not play");
    ended = TRUE;
  }
  g_mutex_lock (&chain->read_lock);
  while (!ended && chain->first_sample == NULL && !chain->ended) {
    g_cond_wait_until (&chain->read_cond, &chain->read_lock,
        g_get_monotonic_time () + POLL_INTERVAL / GST_USECOND);
    if (chain->first_sample || chain->ended)
      break;
    g_mutex_unlock (&chain->read_lock);
    ended = playing_failed (chain, deadline, "no audio decoded within",
        error);
    g_mutex_lock (&chain->read_lock);
  }
  sample = chain->first_sample;
  chain->first_sample = NULL;
  if (ended || sample == NULL) {
    /* nothing held */
    chain->probing = FALSE;
    g_cond_broadcast (&chain->read_cond);
  }
  g_mutex_unlock (&chain->read_lock);
  if (ended) {
    if (sample)
      gst_sample_unref (sample);
    return G_MAXUINT64;
  }
  /* no buffer before the end: a stream of no sample, from 0 */
  first = sample ? keep_first_segment (chain, sample) : 0;
  if (sample)
    gst_sample_unref (sample);
  return first == G_MAXUINT64 ? 0 : first;
}

/* gst_iterator_find_custom()'s: 0 for a demuxer */
static gint
is_demuxer (gconstpointer item, gconstpointer unused)
{
  GstElementFactory *f =
      gst_element_get_factory (g_value_get_object ((const GValue *) item));
  const gchar *klass = f ? gst_element_factory_get_metadata (f,
      GST_ELEMENT_METADATA_KLASS) : NULL;

  return klass && strstr (klass, "Demux") ? 0 : 1;
}

/* The demuxer decodebin plugged, its factory's name (a new string; NULL:
 * none, a parser or a decoder took the file) */
static gchar *
find_demuxer (GstSpdlAudioChain * chain)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (chain->decodebin));
  GValue item = G_VALUE_INIT;
  gchar *name = NULL;

  if (gst_iterator_find_custom (it, is_demuxer, &item, NULL)) {
    name = g_strdup (GST_OBJECT_NAME (gst_element_get_factory
            (g_value_get_object (&item))));
    g_value_unset (&item);
  }
  gst_iterator_free (it);
  return name;
}

/* The stream's length from its first decoded sample (at stream time
 * @first), from the duration its demuxer answers, which the demuxers
 * count each their own way when a file does not start at 0: tsdemux a
 * length (from the first PCR), matroskademux the end's timestamp (its
 * segment's start is stream time 0), qtdemux and the others the end's
 * stream time (an MP4's edit list included). -1 when it says none. */
static gint64
length_from_first (GstSpdlAudioChain * chain, gint64 duration,
    GstClockTime first)
{
  gchar *demuxer;
  gint64 end = duration;

  if (chain->limits.media_timeline)
    return duration;
  demuxer = find_demuxer (chain);
  if (g_strcmp0 (demuxer, "tsdemux") == 0)
    end = duration + (gint64) first;
  else if (g_strcmp0 (demuxer, "matroskademux") == 0 &&
      chain->has_preroll_segment)
    end = duration + chain->preroll_time_offset;
  GST_DEBUG ("%s: first sample at %" GST_TIME_FORMAT ", duration %"
      GST_TIME_FORMAT ", end %" GST_STIME_FORMAT, GST_STR_NULL (demuxer),
      GST_TIME_ARGS (first), GST_TIME_ARGS (duration), GST_STIME_ARGS (end));
  g_free (demuxer);
  return end > (gint64) first ? end - (gint64) first : -1;
}

static gint
is_audio_decoder (gconstpointer item, gconstpointer user_data)
{
  return GST_IS_AUDIO_DECODER (g_value_get_object (item)) ? 0 : 1;
}

/* Whether decodebin plugged an audio decoder (FALSE: the demuxer's
 * buffers are the samples, PCM) */
static gboolean
has_audio_decoder (GstSpdlAudioChain * chain)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (chain->pipe));
  GValue found = G_VALUE_INIT;
  gboolean any = gst_iterator_find_custom (it, is_audio_decoder, &found,
      NULL);

  if (any)
    g_value_unset (&found);
  gst_iterator_free (it);
  return any;
}

gboolean
gst_spdl_audio_chain_open (GstSpdlAudioChain * chain, GBytes * data,
    GError ** error)
{
  GstClockTime deadline;
  GstCaps *caps;
  GstAudioInfo info;
  gint64 duration = -1;
  guint64 counted = 0;
  guint frames_rate = 0;
  GstSample *preroll;
  guint64 first;
  GstPad *pad;
  GError *damage = NULL;

  gst_spdl_audio_chain_close (chain);
  if (!gst_spdl_media_file_check (data, error))
    return FALSE;
  chain->reader = gst_spdl_audio_reader_open (data, &damage);
  if (damage) {
    g_propagate_error (error, damage);
    return FALSE;
  }
  if (chain->reader) {
    chain->reader->exact = chain->limits.exact;
    return open_reader (chain, data, error);
  }
  if (chain->pipe == NULL && !build_pipeline (chain, error))
    return FALSE;
  chain->data = g_bytes_ref (data);
  if (!replace_source (chain, data, error))
    return FALSE;
  if (gst_element_set_state (chain->pipe, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE) {
    GstMessage *msg = gst_bus_pop_filtered (chain->bus, GST_MESSAGE_ERROR);
    gboolean failed = check_failed (chain, msg, error);
    if (msg)
      gst_message_unref (msg);
    if (!failed)
      gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "the pipeline could not start");
    return FALSE;
  }
  deadline = gst_util_get_timestamp () + chain->limits.timeout;
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (chain->bus, POLL_INTERVAL,
        GST_MESSAGE_ERROR | GST_MESSAGE_ASYNC_DONE | GST_MESSAGE_APPLICATION);
    gboolean done = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ASYNC_DONE;

    if (!done && check_failed (chain, msg, error)) {
      if (msg)
        gst_message_unref (msg);
      return FALSE;
    }
    if (msg)
      gst_message_unref (msg);
    if (done)
      break;
    if (gst_util_get_timestamp () > deadline)
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TIMEOUT,
          "no audio decoded within %" GST_TIME_FORMAT,
          GST_TIME_ARGS (chain->limits.timeout));
  }
  pad = gst_element_get_static_pad (chain->appsink, "sink");
  caps = gst_pad_get_current_caps (pad);
  gst_object_unref (pad);
  if (caps == NULL) {
    /* prerolled on EOS: a stream of no sample */
    chain->at_start = TRUE;
    return TRUE;
  }
  if (!gst_audio_info_from_caps (&info, caps) || info.rate <= 0) {
    gst_caps_unref (caps);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "the decoded audio has no usable format");
  }
  gst_caps_unref (caps);
  chain->in_rate = info.rate;
  chain->in_channels = info.channels;
  chain->raw_stamps = !has_audio_decoder (chain);
  preroll = gst_app_sink_try_pull_preroll (GST_APP_SINK (chain->appsink), 0);
  first = keep_first_segment (chain, preroll);
  if (preroll)
    gst_sample_unref (preroll);
  /* paused until a span is read (decode_span plays it) */
  chain->at_start = TRUE;
  if (first == G_MAXUINT64 && !chain->limits.media_timeline) {
    first = find_first_sample (chain, deadline, error);
    if (first == G_MAXUINT64)
      return FALSE;
  } else if (first == G_MAXUINT64) {
    first = 0;
  }
  if (!chain->limits.media_timeline)
    chain->origin = gst_util_uint64_scale_int_round (first, info.rate,
        GST_SECOND);
  chain->chained = gst_spdl_ogg_is_chained (g_bytes_get_data (data, NULL),
      g_bytes_get_size (data));
  if (chain->chained) {
    /* a seek into another link makes decodebin 1.22 switch groups while
     * paused, and the next group's pad never comes (its decoder's output
     * is refused, flushing): the file is decoded once from its start,
     * whole, as one of unknown length, decodebin going from link to link
     * as it plays (on_pad_added) */
    GST_DEBUG ("a chained Ogg file");
  } else if (gst_element_query_duration (chain->pipe, GST_FORMAT_TIME,
          &duration) && duration >= 0 &&
      (duration = length_from_first (chain, duration, first)) >= 0) {
    chain->n_in = gst_util_uint64_scale_int_round (duration, info.rate,
        GST_SECOND);
  } else if (gst_spdl_mpeg_audio_count_samples (g_bytes_get_data (data, NULL),
          g_bytes_get_size (data), &frames_rate, &counted) &&
      frames_rate == (guint) info.rate) {
    /* an MP3 without a Xing header: mpegaudioparse knows no length
     * before the end, and the file would be decoded whole to plan its
     * clips; its frames give the decoder's count exactly */
    chain->n_in = counted;
  }
  if (chain->n_in)
    chain->n_out = gst_util_uint64_scale_ceil (chain->n_in,
        chain->limits.rate, info.rate);
  GST_DEBUG ("%u Hz, %u channels (declared %u), %" G_GUINT64_FORMAT
      " samples from %" G_GUINT64_FORMAT, info.rate, info.channels,
      chain->declared_channels, chain->n_in, chain->origin);
  return TRUE;
}

guint64
gst_spdl_audio_chain_get_n_samples (GstSpdlAudioChain * chain)
{
  return chain->n_out;
}

void
gst_spdl_audio_chain_get_format (GstSpdlAudioChain * chain, guint * rate,
    guint * channels)
{
  if (rate)
    *rate = chain->in_rate;
  if (channels)
    *channels = chain->declared_channels;
}

const gchar *
gst_spdl_audio_chain_get_damage (GstSpdlAudioChain * chain)
{
  return chain->reader ? chain->reader->damage : NULL;
}

/* ------------------------------------------------------------------------ */
/* Reading a span                                                           */

/* Where output samples go: [start, end) of the output, planar into out,
 * or appended (interleaved) to a growing array for whole files. */
typedef struct
{
  guint64 start, end;
  gfloat *out;
  gsize stride;
  GArray *all;                  /* whole file: interleaved */
  guint64 produced;             /* output samples had, from the span's base */
  gboolean overflow;
} Span;

/* A span being read: filled by the streaming thread (on_new_sample)
 * under the read lock while the reading thread waits */
typedef struct _Reading
{
  GstSpdlAudioChain *chain;
  Span *span;
  gboolean direct;              /* no resampling */
  guint64 a, b;                 /* in and out rates over their gcd */
  guint64 next_in, out_pos, last_in;
  guint64 pulled_buffers, pulled_samples;
  guint64 last_end;             /* where the last buffer ended */
  gboolean have_last;
  gboolean done, eos;
  GError *error;
} Reading;

static void
span_write (GstSpdlAudioChain * chain, Span * span, const gfloat * frames,
    guint64 first, gsize n)
{
  guint channels = chain->limits.channels, c;
  guint64 lo = MAX (first, span->start), hi = MIN (first + n, span->end), i;

  if (first + n > span->produced)
    span->produced = first + n;
  if (lo >= hi)
    return;
  if (span->all) {
    gsize have = span->all->len / channels;
    if (hi > chain->limits.max_samples) {
      span->overflow = TRUE;
      hi = MAX (lo, chain->limits.max_samples);
    }
    /* contiguous from 0: a gap is silence, as in a span's buffer (the
     * rest of the file was dropped), bounded by max_samples as hi is */
    if (lo < have || hi <= lo)
      return;
    if (lo > have) {
      gsize old_len = span->all->len;
      g_array_set_size (span->all, lo * channels);
      memset (&g_array_index (span->all, gfloat, old_len), 0,
          (lo * channels - old_len) * sizeof (gfloat));
    }
    g_array_append_vals (span->all, frames + (lo - first) * channels,
        (hi - lo) * channels);
    return;
  }
  for (i = lo; i < hi; i++) {
    const gfloat *f = frames + (i - first) * channels;
    for (c = 0; c < channels; c++)
      span->out[c * span->stride + (i - span->start)] = f[c];
  }
}

static gboolean
ensure_resampler (GstSpdlAudioChain * chain)
{
  /* gst_spdl_resampler_reset() empties the history but keeps the phase
   * the last span ended on; a resampler brought back to phase 0 after its
   * span (realign_resampler) is, once reset, the same as a new one, and
   * keeps the filters it computed (most of a new one's cost) */
  if (chain->resampler && chain->resampler_rate == chain->in_rate &&
      chain->resampler_on_grid) {
    gst_spdl_resampler_reset (chain->resampler);
    chain->resampler_on_grid = FALSE;
    return TRUE;
  }
  gst_spdl_resampler_free (chain->resampler);
  chain->resampler_on_grid = FALSE;
  chain->resampler = gst_spdl_resampler_new (chain->limits.quality,
      chain->limits.channels, chain->in_rate, chain->limits.rate,
      MAX_FULL_FILTER_BYTES, FILTER_OVERSAMPLE);
  chain->resampler_rate = chain->in_rate;
  return chain->resampler != NULL;
}

/* Resamples @n input frames (NULL: zeros), output frames from @out_pos */
static void
resample (GstSpdlAudioChain * chain, Span * span, const gfloat * in, gsize n,
    guint64 * out_pos)
{
  gsize out_frames = gst_spdl_resampler_get_out_frames (chain->resampler,
      n);
  gsize need = MAX (out_frames, n) * chain->limits.channels;

  if (need > chain->scratch_frames) {
    g_free (chain->scratch);
    chain->scratch = g_new (gfloat, need);
    chain->scratch_frames = need;
  }
  gst_spdl_resampler_resample (chain->resampler, in, n, chain->scratch,
      out_frames);
  span_write (chain, span, chain->scratch, *out_pos, out_frames);
  *out_pos += out_frames;
}

/* After a span: @produced output frames since the span's start on the
 * grid (phase 0). The phase after k outputs is k x in / out modulo out
 * (the rates over their gcd), 0 again when k is a multiple of out:
 * zeros are resampled until it is (at most out - 1 more frames, 159 from
 * 44.1 kHz to 16 kHz), and the output dropped. */
static void
realign_resampler (GstSpdlAudioChain * chain, guint64 produced)
{
  guint64 out = chain->limits.rate /
      gst_util_greatest_common_divisor (chain->in_rate, chain->limits.rate);
  gsize extra = (gsize) ((out - produced % out) % out), n_in, need;

  if (extra > 0) {
    n_in = gst_spdl_resampler_get_in_frames (chain->resampler, extra);
    while (gst_spdl_resampler_get_out_frames (chain->resampler, n_in) <
        extra)
      n_in++;
    need = MAX (extra, n_in) * chain->limits.channels;
    if (need > chain->scratch_frames) {
      g_free (chain->scratch);
      chain->scratch = g_new (gfloat, need);
      chain->scratch_frames = need;
    }
    gst_spdl_resampler_resample (chain->resampler, NULL, n_in,
        chain->scratch, extra);
  }
  chain->resampler_on_grid = TRUE;
}

/* @n float frames (the output's channels) that start at input frame
 * @first, into the span: what lies before where the reading reached is
 * skipped, a gap is silence; then copied or resampled. For the
 * pipeline's buffers and a reader's frames alike. */
static void
place_frames (GstSpdlAudioChain * chain, Reading * r, const gfloat * samples,
    guint64 first, guint64 n)
{
  Span *span = r->span;
  guint channels = chain->limits.channels;
  guint64 skip = 0;

  if (first + n <= r->next_in) {
    skip = n;                   /* before the span */
  } else if (first < r->next_in) {
    skip = r->next_in - first;
  } else if (first > r->next_in) {
    /* a gap in the stream (or a seek that landed late): silence */
    guint64 gap = first - r->next_in;
    GST_DEBUG ("gap of %" G_GUINT64_FORMAT " samples at %" G_GUINT64_FORMAT,
        gap, r->next_in);
    if (r->direct) {
      r->out_pos = first;
    } else {
      while (gap > 0) {
        gsize k = MIN (gap, 4096);
        resample (chain, span, NULL, k, &r->out_pos);
        gap -= k;
      }
    }
    r->next_in = first;
  }
  if (skip < n) {
    const gfloat *frames = samples + skip * channels;
    if (r->direct) {
      span_write (chain, span, frames, r->next_in, n - skip);
      r->out_pos = r->next_in + n - skip;
    } else {
      resample (chain, span, frames, n - skip, &r->out_pos);
    }
    r->next_in += n - skip;
    r->last_in = r->next_in;
  }
}

/* A decoded buffer's time in the file. tsdemux 1.22 answers a seek to
 * before a stream's first timestamp (a span at a TS file's start) with a
 * segment that starts at that timestamp but keeps the position asked for
 * as its time: its buffers would read as that much earlier (0.1 s in a
 * file FFmpeg wrote, the audio 0.1 s late). A segment whose time falls
 * short of its start by other than the prerolled one's is read as that
 * one was. G_MAXUINT64 when it has none. */
static guint64
stream_time (GstSpdlAudioChain * chain, const GstSegment * segment,
    GstClockTime pts)
{
  gint64 st;

  if (segment == NULL)
    return pts;
  if (segment->format != GST_FORMAT_TIME || !chain->has_preroll_segment ||
      segment->time >= segment->start || (gint64) segment->time -
      (gint64) segment->start == chain->preroll_time_offset)
    return gst_segment_to_stream_time (segment, GST_FORMAT_TIME, pts);
  st = (gint64) pts + chain->preroll_time_offset;
  return st >= 0 ? (guint64) st : G_MAXUINT64;
}

/* Called with the read lock held: one decoded buffer into the span. */
static void
read_sample (GstSpdlAudioChain * chain, Reading * r, GstSample * sample)
{
  guint channels = chain->limits.channels;
  GstBuffer *buffer = gst_sample_get_buffer (sample);
  const GstSegment *segment = gst_sample_get_segment (sample);
  guint64 in_rate = chain->in_rate, first = r->next_in, n;
  guint64 before = 0;           /* samples before the origin */
  gboolean stamped = FALSE;
  const gfloat *samples;
  GstMapInfo map;

  if (GST_BUFFER_PTS_IS_VALID (buffer)) {
    guint64 st = stream_time (chain, segment, GST_BUFFER_PTS (buffer));
    if (st != G_MAXUINT64) {
      stamped = TRUE;
      first = gst_util_uint64_scale_int_round (st, in_rate, GST_SECOND);
      if (first < chain->origin)
        before = chain->origin - first;
      first = first > chain->origin ? first - chain->origin : 0;
    }
  }
  /* Raw audio (no decoder in the pipeline) reaches here with its
   * container's timestamps, with no decoder's tolerance
   * (on_element_added) between: PCM in Matroska is
   * stamped to the millisecond, a block of 3040 samples at 48 kHz
   * (63.33 ms) 64 ms after the one before. A buffer within a millisecond
   * of where the last one ended follows it. */
  if (chain->raw_stamps && stamped && r->have_last && before == 0 &&
      first != r->last_end &&
      (first > r->last_end ? first - r->last_end : r->last_end - first) <=
      gst_util_uint64_scale_int_ceil (GST_MSECOND, in_rate, GST_SECOND))
    first = r->last_end;
  if (!gst_buffer_map (buffer, &map, GST_MAP_READ)) {
    gst_spdl_decode_fail (&r->error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "could not map decoded audio");
    return;
  }
  n = map.size / (sizeof (gfloat) * channels);
  GST_LOG ("buffer %" GST_TIME_FORMAT ": %" G_GUINT64_FORMAT " samples at %"
      G_GUINT64_FORMAT, GST_TIME_ARGS (GST_BUFFER_PTS (buffer)), n, first);
  r->pulled_buffers++;
  r->pulled_samples += n;
  if (before < n) {
    r->last_end = first + n - before;
    r->have_last = TRUE;
  }
  samples = (const gfloat *) map.data;
  /* a buffer passed through from the demuxer lies where its file had
   * it (a WAV's data chunk at an odd offset): floats are read from an
   * aligned copy */
  if ((guintptr) map.data % G_ALIGNOF (gfloat) != 0) {
    if (map.size > chain->aligned_size) {
      g_free (chain->aligned);
      chain->aligned = g_malloc (map.size);
      chain->aligned_size = map.size;
    }
    memcpy (chain->aligned, map.data, map.size);
    samples = chain->aligned;
  }
  if (before < n)
    place_frames (chain, r, samples + before * channels, first, n - before);
  gst_buffer_unmap (buffer, &map);
}

/* appsink's streaming thread: the span is read where the audio is
 * decoded, and decoding stops (EOS upstream) once the span is covered;
 * the reading thread only waits for the end */
static GstFlowReturn
on_new_sample (GstAppSink * appsink, gpointer user_data)
{
  GstSpdlAudioChain *chain = user_data;
  GstSample *sample = gst_app_sink_try_pull_sample (appsink, 0);
  GstFlowReturn ret = GST_FLOW_OK;
  Reading *r;

  if (sample == NULL)
    return GST_FLOW_OK;
  g_mutex_lock (&chain->read_lock);
  r = chain->reading;
  if (chain->probing) {
    /* find_first_sample's: held until a span is armed or the file closed */
    chain->first_sample = gst_sample_ref (sample);
    g_cond_broadcast (&chain->read_cond);
    while (chain->probing)
      g_cond_wait (&chain->read_cond, &chain->read_lock);
    r = chain->reading;
  }
  if (r == NULL || r->done) {
    /* decoded before a seek's flush, or after the span: not wanted */
    ret = GST_FLOW_EOS;
  } else {
    read_sample (chain, r, sample);
    if (r->error || r->span->produced >= r->span->end || r->span->overflow) {
      r->done = TRUE;
      ret = GST_FLOW_EOS;
      g_cond_signal (&chain->read_cond);
    }
  }
  g_mutex_unlock (&chain->read_lock);
  gst_sample_unref (sample);
  return ret;
}

static void
on_eos (GstAppSink * appsink, gpointer user_data)
{
  GstSpdlAudioChain *chain = user_data;

  g_mutex_lock (&chain->read_lock);
  if (chain->reading) {
    chain->reading->eos = TRUE;
    g_cond_signal (&chain->read_cond);
  } else {
    /* while prerolling: a stream that ends before its first sample (caps,
     * then EOS) prerolls on the EOS, which appsink reports once; the
     * first span, read without a seek, ends here */
    chain->ended = TRUE;
    g_cond_signal (&chain->read_cond);
  }
  g_mutex_unlock (&chain->read_lock);
}

/* A seek's flush-stop: what follows is decoded after the seek */
static GstPadProbeReturn
on_flush_stop (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstSpdlAudioChain *chain = user_data;

  if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) ==
      GST_EVENT_FLUSH_STOP) {
    g_mutex_lock (&chain->read_lock);
    chain->ended = FALSE;
    if (chain->pending) {
      chain->reading = chain->pending;
      chain->pending = NULL;
    }
    g_mutex_unlock (&chain->read_lock);
  }
  return GST_PAD_PROBE_OK;
}

/* An error posted: the reading thread stops waiting */
static GstBusSyncReply
on_bus_sync (GstBus * bus, GstMessage * msg, gpointer user_data)
{
  GstSpdlAudioChain *chain = user_data;

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    g_mutex_lock (&chain->read_lock);
    g_cond_signal (&chain->read_cond);
    g_mutex_unlock (&chain->read_lock);
  }
  return GST_BUS_PASS;
}

/* ------------------------------------------------------------------------ */
/* A file a reader took                                                     */

static gboolean
ensure_converter (GstSpdlAudioChain * chain, GError ** error)
{
  const GstAudioInfo *in = &chain->reader->info;
  GstAudioInfo out;
  GstStructure *config;
  GValue matrix = G_VALUE_INIT;

  if (chain->converter && gst_audio_info_is_equal (&chain->converter_info,
          in))
    return TRUE;
  if (chain->converter)
    gst_audio_converter_free (chain->converter);
  gst_audio_info_set_format (&out, GST_AUDIO_FORMAT_F32, in->rate,
      chain->limits.channels, NULL);
  init_mix_matrix (&matrix, GST_AUDIO_INFO_IS_UNPOSITIONED (in) ? NULL :
      in->position, in->channels, chain->limits.channels);
  config = gst_structure_new_empty ("GstAudioConverterConfig");
  gst_structure_take_value (config, GST_AUDIO_CONVERTER_OPT_MIX_MATRIX,
      &matrix);
  chain->converter = gst_audio_converter_new (GST_AUDIO_CONVERTER_FLAG_NONE,
      (GstAudioInfo *) in, &out, config);
  if (chain->converter == NULL)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "no conversion from %s, %u channels to float",
        GST_AUDIO_INFO_NAME (in), in->channels);
  chain->converter_info = *in;
  if (chain->converted == NULL)
    chain->converted = g_new (gfloat, (gsize) CONVERT_FRAMES *
        chain->limits.channels);
  return TRUE;
}

/* A reader's run: to float and into the span, CONVERT_FRAMES at a time */
static gboolean
on_reader_frames (gconstpointer frames, guint64 first, gsize n,
    gpointer user_data)
{
  Reading *r = user_data;
  GstSpdlAudioChain *chain = r->chain;
  gsize bpf = GST_AUDIO_INFO_BPF (&chain->reader->info);
  const guint8 *in = frames;

  r->pulled_buffers++;
  r->pulled_samples += n;
  while (n > 0) {
    gsize k = MIN (n, CONVERT_FRAMES);
    gpointer ip[1] = { (gpointer) in }, op[1] = { chain->converted };

    if (!gst_audio_converter_samples (chain->converter,
            GST_AUDIO_CONVERTER_FLAG_NONE, ip, k, op, k)) {
      gst_spdl_decode_fail (&r->error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "could not convert the decoded audio");
      return FALSE;
    }
    place_frames (chain, r, chain->converted, first, k);
    if (r->span->produced >= r->span->end || r->span->overflow) {
      r->done = TRUE;
      return FALSE;
    }
    in += k * bpf;
    first += k;
    n -= k;
  }
  return TRUE;
}

/* No decoder warm-up (a reader's read is exact from any frame): read from
 * where the span's input starts */
static gboolean
read_span (GstSpdlAudioChain * chain, Reading * r, GError ** error)
{
  if (!ensure_converter (chain, error))
    return FALSE;
  if (!gst_spdl_audio_reader_read (chain->reader, r->next_in,
          on_reader_frames, r, error)) {
    g_clear_error (&r->error);
    return FALSE;
  }
  if (r->error) {
    g_propagate_error (error, r->error);
    return FALSE;
  }
  r->eos = !r->done;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Either way                                                               */

/* A span from the file's start after other spans: the file opened again,
 * so that the span is read from its start as the first span is. A seek
 * to the start lands on the first frame with none before it for the
 * decoder to overlap with (AAC's first 1024 samples; an MP4 whose edit
 * list trims its start, where the whole decode has the frame before). */
static gboolean
reopen_at_start (GstSpdlAudioChain * chain, GError ** error)
{
  GBytes *data = g_bytes_ref (chain->data);
  guint64 n_out = chain->n_out;
  gboolean reuse = chain->limits.reuse, ok;

  /* the same file's pipeline, reset rather than built again, whatever
   * reuse says (it is about files) */
  chain->limits.reuse = TRUE;
  ok = gst_spdl_audio_chain_open (chain, data, error);
  chain->limits.reuse = reuse;
  g_bytes_unref (data);
  if (ok && chain->n_out != n_out)
    GST_WARNING ("%" G_GUINT64_FORMAT " samples opened again, %"
        G_GUINT64_FORMAT " before", chain->n_out, n_out);
  return ok;
}

/* The pipeline: a seek to a little before the span, then the span read
 * in appsink's streaming thread while this one waits */
static gboolean
run_pipeline (GstSpdlAudioChain * chain, Reading * r, GError ** error)
{
  guint64 in_rate = chain->in_rate, base_in = r->next_in, seek_in;
  GstClockTime deadline;
  gboolean seek, ok = TRUE;

  seek_in = base_in > in_rate / 10 ? base_in - in_rate / 10 : 0;
  if (seek_in == 0 && !chain->at_start && !reopen_at_start (chain, error))
    return FALSE;
  deadline = gst_util_get_timestamp () + chain->limits.timeout;
  seek = !(chain->at_start && seek_in == 0);
  chain->at_start = FALSE;
  if (seek && chain->chained)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "a chained Ogg file is decoded from its start only, not from %.3f s",
        (gdouble) seek_in / in_rate);

  /* armed before the seek: buffers still on their way from before it are
   * refused, those after its flush read */
  g_mutex_lock (&chain->read_lock);
  if (seek)
    chain->pending = r;
  else
    chain->reading = r;
  if (!seek && chain->ended)
    r->eos = TRUE;
  /* the first sample held (find_first_sample): read, or dropped before
   * the seek's flush */
  chain->probing = FALSE;
  g_cond_broadcast (&chain->read_cond);
  g_mutex_unlock (&chain->read_lock);
  if (seek && !gst_element_seek (chain->pipe, 1.0, GST_FORMAT_TIME,
          GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE, GST_SEEK_TYPE_SET,
          gst_util_uint64_scale_int (seek_in + chain->origin, GST_SECOND,
              in_rate),
          GST_SEEK_TYPE_NONE, GST_CLOCK_TIME_NONE)) {
    ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "the file cannot be seeked");
  } else if (GST_STATE_TARGET (chain->pipe) != GST_STATE_PLAYING &&
      gst_element_set_state (chain->pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "the pipeline could not play");
  }

  g_mutex_lock (&chain->read_lock);
  while (ok && !r->done && !r->eos) {
    g_cond_wait_until (&chain->read_cond, &chain->read_lock,
        g_get_monotonic_time () + POLL_INTERVAL / GST_USECOND);
    if (r->done || r->eos)
      break;
    g_mutex_unlock (&chain->read_lock);
    ok = !playing_failed (chain, deadline, "decoding took longer than",
        error);
    g_mutex_lock (&chain->read_lock);
  }
  chain->reading = chain->pending = NULL;
  g_mutex_unlock (&chain->read_lock);
  if (!ok) {
    g_clear_error (&r->error);
    return FALSE;
  }
  if (r->error) {
    g_propagate_error (error, r->error);
    return FALSE;
  }
  return TRUE;
}

static gboolean
decode_span (GstSpdlAudioChain * chain, Span * span, GError ** error)
{
  guint64 rate = chain->limits.rate, in_rate = chain->in_rate;
  Reading r = { 0, };
  guint64 base_in, base_out, margin = 0;

  r.chain = chain;
  r.span = span;
  r.direct = in_rate == rate;
  r.a = r.b = 1;
  if (!r.direct) {
    guint64 g, first;

    g = gst_util_greatest_common_divisor (in_rate, rate);
    r.a = in_rate / g;
    r.b = rate / g;
    if (!ensure_resampler (chain))
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
          "no resampler from %u Hz to %u Hz", chain->in_rate,
          chain->limits.rate);
    /* the filter's reach, in output samples, twice over */
    margin = gst_util_uint64_scale_ceil (2 *
        gst_spdl_resampler_get_max_latency (chain->resampler) + 16, rate,
        in_rate);
    first = span->start > margin ? span->start - margin : 0;
    base_out = first / r.b * r.b;
    base_in = base_out / r.b * r.a;
  } else {
    base_in = base_out = span->start;
  }
  r.next_in = base_in;
  r.out_pos = base_out;
  if (chain->reader ? !read_span (chain, &r, error) :
      !run_pipeline (chain, &r, error))
    return FALSE;             /* the resampler stays off the grid: new */
  GST_DEBUG ("span %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT ": %"
      G_GUINT64_FORMAT " samples decoded in %" G_GUINT64_FORMAT " runs",
      span->start, span->end - span->start, r.pulled_samples,
      r.pulled_buffers);
  if (r.eos && !r.done && !r.direct) {
    /* the filter's tail, then only samples before the stream's end */
    guint64 end_out = gst_util_uint64_scale_ceil (r.last_in, r.b, r.a);
    gsize lat = gst_spdl_resampler_get_max_latency (chain->resampler);
    resample (chain, span, NULL, lat + 1, &r.out_pos);
    span->produced = MIN (span->produced, MAX (end_out, span->start));
  }
  if (!r.direct)
    realign_resampler (chain, r.out_pos - base_out);
  return TRUE;
}

gboolean
gst_spdl_audio_chain_read (GstSpdlAudioChain * chain, guint64 start,
    guint64 length, gfloat * out, gsize stride, guint64 * n_read,
    GError ** error)
{
  Span span = { 0, };

  *n_read = 0;
  if (chain->in_rate == 0 || length == 0)
    return TRUE;
  if (length > chain->limits.max_samples)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "a span of %" G_GUINT64_FORMAT " samples, more than %"
        G_GUINT64_FORMAT, length, chain->limits.max_samples);
  span.start = start;
  span.end = start + length;
  span.out = out;
  span.stride = stride;
  span.produced = 0;
  if (!decode_span (chain, &span, error))
    return FALSE;
  *n_read = span.produced > start ? MIN (span.produced, span.end) - start : 0;
  return TRUE;
}

GstBuffer *
gst_spdl_audio_chain_read_all (GstSpdlAudioChain * chain,
    guint64 * n_samples, GError ** error)
{
  guint channels = chain->limits.channels, c;
  Span span = { 0, };
  GstBuffer *buffer;
  GstMapInfo map;
  guint64 n, i;
  gfloat *dst;

  *n_samples = 0;
  span.start = 0;
  span.end = chain->limits.max_samples + 1;
  if (chain->n_out > chain->limits.max_samples)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "%" G_GUINT64_FORMAT " samples, more than %" G_GUINT64_FORMAT,
        chain->n_out, chain->limits.max_samples), NULL;
  if (chain->in_rate != 0) {
    span.all = g_array_sized_new (FALSE, FALSE, sizeof (gfloat),
        (guint) MIN (chain->n_out * channels + channels, 1 << 24));
    if (!decode_span (chain, &span, error)) {
      g_array_free (span.all, TRUE);
      return NULL;
    }
    if (span.overflow) {
      g_array_free (span.all, TRUE);
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
          "longer than %" G_GUINT64_FORMAT " samples",
          chain->limits.max_samples), NULL;
    }
  }
  n = span.all ? MIN (span.all->len / channels, span.produced) : 0;
  buffer = gst_spdl_buffer_try_new (MAX (n, 1) * channels * sizeof (gfloat));
  if (buffer == NULL) {
    if (span.all)
      g_array_free (span.all, TRUE);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "out of memory for %" G_GUINT64_FORMAT " samples", n), NULL;
  }
  gst_buffer_map (buffer, &map, GST_MAP_WRITE);
  dst = (gfloat *) map.data;
  for (c = 0; c < channels; c++)
    for (i = 0; i < n; i++)
      dst[c * n + i] = g_array_index (span.all, gfloat, i * channels + c);
  gst_buffer_unmap (buffer, &map);
  if (n == 0)
    gst_buffer_resize (buffer, 0, 0);
  if (span.all)
    g_array_free (span.all, TRUE);
  *n_samples = n;
  return buffer;
}
