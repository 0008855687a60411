/* GStreamer SPDL: a video's frames, demuxed and decoded by GStreamer
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Two stages, each a GStreamer pipeline kept from video to video:
 *
 * - demux: giostreamsrc (the video in memory, seekable, so demuxers run
 *   in pull mode and find a moov atom at the end) ! parsebin ! appsink.
 *   Every video packet is kept (the compressed video, about the size of
 *   the file already in memory), with its timestamps and keyframe flag:
 *   the frames' times are known before choosing a clip, which is what
 *   makes time-based and variable-frame-rate sampling exact.
 * - decode: the decoder alone in a pipeline, fed from a pad of ours and
 *   delivering to a pad of ours, in the calling thread (as GstHarness
 *   drives an element): no queue, no thread hand-off. A clip feeds the
 *   packets from the keyframe before each wanted frame up to it (ranges
 *   merged, so clips of one video that overlap or are close share one
 *   pass), then drains with EOS and flushes for the next call. Seeking
 *   a demuxer is not needed: the packets are ours. Unreferenced frames
 *   not asked for are skipped where the decoder can (update_skipping).
 *
 * Only frames asked for are converted to RGB, and of those only the
 * pixels the caller reads (gstspdlyuv.c, GstVideoConverter for formats
 * it does not take); the others are dropped as they come out. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlvideochain.h"
#include "gstspdlerrors.h"
#include "gstspdlmediafile.h"
#include "gstspdlyuv.h"

#include <gio/gio.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (spdl_video_chain_debug);
#define GST_CAT_DEFAULT spdl_video_chain_debug

#define DEFAULT_MAX_PIXELS (64 * 1024 * 1024)
#define DEFAULT_MAX_FRAMES 1000000
#define DEFAULT_MAX_DECODE_FRAMES 2000
#define DEFAULT_TIMEOUT (30 * GST_SECOND)
/* how long one wait for a demuxed packet lasts before checking the bus
 * and the deadline */
#define POLL_INTERVAL (20 * GST_MSECOND)

typedef struct
{
  GstBuffer *buffer;
  gboolean key;
  gboolean recovery;            /* a key that is no decoding start: H.264
                                 * non-IDR I (see mark_recovery_points) */
  gint frame;                   /* index in the frame list, -1: not shown */
} Packet;

struct _GstSpdlVideoChain
{
  GstSpdlVideoLimits limits;

  /* demuxer */
  GstElement *demux_pipe, *src, *parsebin, *appsink;
  GMutex pads_lock;             /* pad-added runs in a streaming thread */
  gboolean video_linked, no_more_pads;
  GstVideoOrientationMethod tag_orientation;    /* the video's tags' */
  gboolean other_eos;           /* a stream that is not the video ended */
  GList *fakesinks;             /* what parsebin's other streams go to */
  GstMessage *demux_error;      /* the first error inside parsebin */
  gchar *unknown_type;          /* the first caps parsebin could not plug */

  /* the open video */
  GBytes *data;
  GArray *packets;              /* Packet, in decode order */
  GstCaps *caps;
  gdouble *pts;                 /* stream time, ascending */
  GstClockTime *raw_pts;        /* buffer timestamps, same order */
  guint *frame_packet;
  guint n_frames;
  gdouble end;
  gdouble time_offset;          /* added to the demuxer's times, seconds */
  guint width, height;          /* as shown (orientation applied) */
  GstVideoOrientationMethod orientation;        /* applied to frames */

  /* decoder */
  GstElement *dec_pipe, *decoder;
  GstPad *srcpad, *sinkpad;
  GstVideoInfo dec_info;
  gboolean have_dec_info;
  GError *frame_error;          /* why sink_chain refused a frame */
  GstVideoInfo conv_info;      /* what the scratch below is for */
  gboolean have_conv, direct;
  GstSpdlYuvTables tables;      /* direct */
  gint32 *yuv_scratch;
  GstVideoConverter *conv;      /* otherwise */
  GstVideoInfo conv_out_info;
  guint8 *rgb;
  guint8 *oriented;             /* rgb turned as shown (orientation) */
  gsize oriented_size;
  guint16 *wide;
  gsize rgb_size, rgb_stride;
  guint stream_counter;

  /* the decode call in progress */
  guint8 *want;                 /* per frame: 1 wanted, 2 delivered */
  guint remaining;
  GstClockTime last_out_pts;    /* of the decoder's previous output */
  guint repeats;                /* outputs before this one at that time */
  GstSpdlVideoRegionFunc region_func;
  GstSpdlVideoFrameFunc func;
  gpointer user_data;

  /* unreferenced frames not shown skipped (see update_skipping) */
  gboolean skip_nonref;
  GstClockTime qos_earliest;    /* the decoder's, from our last QoS event */

  guint demux_builds, decoder_builds;
  guint64 frames_decoded;
};

void
gst_spdl_video_limits_init (GstSpdlVideoLimits * limits)
{
  limits->max_pixels = DEFAULT_MAX_PIXELS;
  limits->max_frames = DEFAULT_MAX_FRAMES;
  limits->max_decode_frames = DEFAULT_MAX_DECODE_FRAMES;
  limits->timeout = DEFAULT_TIMEOUT;
  limits->reuse = TRUE;
  limits->autorotate = TRUE;
}

GstSpdlVideoChain *
gst_spdl_video_chain_new (const GstSpdlVideoLimits * limits)
{
  static gsize debug_initialized = 0;
  GstSpdlVideoChain *chain = g_new0 (GstSpdlVideoChain, 1);

  /* chains are made on several decoding threads at once: a once-flag of
   * its own, left only when the category is set */
  if (g_once_init_enter (&debug_initialized)) {
    GST_DEBUG_CATEGORY_INIT (spdl_video_chain_debug, "spdlvideochain", 0,
        "SPDL video demux and decode chain");
    g_once_init_leave (&debug_initialized, 1);
  }
  if (limits)
    chain->limits = *limits;
  else
    gst_spdl_video_limits_init (&chain->limits);
  g_mutex_init (&chain->pads_lock);
  chain->packets = g_array_new (FALSE, TRUE, sizeof (Packet));
  chain->qos_earliest = GST_CLOCK_TIME_NONE;
  return chain;
}

void
gst_spdl_video_chain_get_builds (GstSpdlVideoChain * chain, guint * demuxers,
    guint * decoders)
{
  *demuxers = chain->demux_builds;
  *decoders = chain->decoder_builds;
}

guint64
gst_spdl_video_chain_get_frames_decoded (GstSpdlVideoChain * chain)
{
  /* read by the stats from another thread than the chain's */
  return __atomic_load_n (&chain->frames_decoded, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------ */
/* Demuxing                                                                 */

/* An audio-only file: its streams end, the unlinked appsink never sees
 * EOS and parsebin need not say no-more-pads; without this the demuxing
 * would wait for the timeout. */
static GstPadProbeReturn
on_other_event (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstSpdlVideoChain *chain = user_data;

  if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_EOS) {
    g_mutex_lock (&chain->pads_lock);
    chain->other_eos = TRUE;
    g_mutex_unlock (&chain->pads_lock);
  }
  return GST_PAD_PROBE_OK;
}

/* Whether @bin has an element of the factory @name, or with @klass in
 * its factory's class when @name is NULL. */
static gboolean
bin_has_element (GstElement * bin, const gchar * name, const gchar * klass)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (bin));
  GValue item = G_VALUE_INIT;
  gboolean found = FALSE;

  while (!found && gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GstElementFactory *f = gst_element_get_factory (g_value_get_object
        (&item));
    const gchar *k = f ? gst_element_factory_get_metadata (f,
        GST_ELEMENT_METADATA_KLASS) : NULL;

    if (name)
      found = f && g_strcmp0 (GST_OBJECT_NAME (f), name) == 0;
    else
      found = k && strstr (k, klass) != NULL;
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  return found;
}

/* A video stream: video/..., or image/jpeg or image/png out of a
 * demuxer (MJPEG in AVI or MOV); a lone JPEG file is an image. */
static gboolean
is_video_stream (GstElement * parsebin, const GstStructure * s)
{
  const gchar *name = gst_structure_get_name (s);

  if (g_str_has_prefix (name, "video/"))
    return TRUE;
  return (g_str_equal (name, "image/jpeg") || g_str_equal (name, "image/png"))
      && bin_has_element (parsebin, NULL, "Demux");
}

/* The video stream's orientation tag (qtdemux: the track's display
 * matrix, "rotate-90", ...; matroskademux: ProjectionPoseRoll) */
static GstPadProbeReturn
on_video_event (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstSpdlVideoChain *chain = user_data;
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);
  GstVideoOrientationMethod method;
  GstTagList *tags;

  if (GST_EVENT_TYPE (event) != GST_EVENT_TAG)
    return GST_PAD_PROBE_OK;
  gst_event_parse_tag (event, &tags);
  if (gst_video_orientation_from_tag (tags, &method)) {
    g_mutex_lock (&chain->pads_lock);
    chain->tag_orientation = method;
    g_mutex_unlock (&chain->pads_lock);
  }
  return GST_PAD_PROBE_OK;
}

static void
on_pad_added (GstElement * parsebin, GstPad * pad, GstSpdlVideoChain * chain)
{
  GstCaps *caps = gst_pad_get_current_caps (pad);
  const GstStructure *s;
  GstElement *sink = NULL;
  GstPad *sinkpad;

  if (caps == NULL)
    caps = gst_pad_query_caps (pad, NULL);
  s = gst_caps_get_size (caps) ? gst_caps_get_structure (caps, 0) : NULL;
  g_mutex_lock (&chain->pads_lock);
  if (s && !chain->video_linked && is_video_stream (parsebin, s)) {
    chain->video_linked = TRUE;
    sink = gst_object_ref (chain->appsink);
  } else {
    /* audio, subtitles, a second video: drained, not decoded */
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
        on_other_event, chain, NULL);
    sink = gst_element_factory_make ("fakesink", NULL);
    if (sink) {
      gst_object_ref_sink (sink);
      g_object_set (sink, "sync", FALSE, "async", FALSE, NULL);
      chain->fakesinks = g_list_prepend (chain->fakesinks,
          gst_object_ref (sink));
      gst_bin_add (GST_BIN (chain->demux_pipe), sink);
      gst_element_sync_state_with_parent (sink);
    }
  }
  g_mutex_unlock (&chain->pads_lock);
  gst_caps_unref (caps);
  if (sink == NULL)
    return;
  sinkpad = gst_element_get_static_pad (sink, "sink");
  if (gst_pad_link (pad, sinkpad) != GST_PAD_LINK_OK)
    GST_WARNING ("could not link %" GST_PTR_FORMAT, pad);
  gst_object_unref (sinkpad);
  gst_object_unref (sink);
}

/* No element for @caps (or only refused ones, see
 * gst_spdl_media_autoplug_select): parsebin then fails with a
 * missing-plugin error; the caps say why. */
static void
on_unknown_type (GstElement * parsebin, GstPad * pad, GstCaps * caps,
    GstSpdlVideoChain * chain)
{
  g_mutex_lock (&chain->pads_lock);
  if (chain->unknown_type == NULL && gst_caps_get_size (caps) > 0)
    chain->unknown_type = g_strdup (gst_structure_get_name
        (gst_caps_get_structure (caps, 0)));
  g_mutex_unlock (&chain->pads_lock);
}

static void
on_no_more_pads (GstElement * parsebin, GstSpdlVideoChain * chain)
{
  g_mutex_lock (&chain->pads_lock);
  chain->no_more_pads = TRUE;
  g_mutex_unlock (&chain->pads_lock);
}

/* parsebin drops an error its element posts while it brings that
 * element to PAUSED (its error filter, meant for elements it tries and
 * may reject): qtdemux in pull mode finds a truncated file's missing
 * streams in that window, posts "no playable streams" and stops, and
 * nothing else happens until the timeout. A parsebin of this subclass
 * also keeps the first error it is handed, filtered or not. */
static GstBinClass *parse_bin_parent_class;
static GQuark spdl_chain_quark;

static void
spdl_parse_bin_handle_message (GstBin * bin, GstMessage * msg)
{
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GstSpdlVideoChain *chain = g_object_get_qdata (G_OBJECT (bin),
        spdl_chain_quark);

    if (chain) {
      g_mutex_lock (&chain->pads_lock);
      if (chain->demux_error == NULL)
        chain->demux_error = gst_message_ref (msg);
      g_mutex_unlock (&chain->pads_lock);
    }
  }
  parse_bin_parent_class->handle_message (bin, msg);
}

static void
spdl_parse_bin_class_init (gpointer klass, gpointer data)
{
  parse_bin_parent_class = g_type_class_peek_parent (klass);
  GST_BIN_CLASS (klass)->handle_message = spdl_parse_bin_handle_message;
}

static GType
spdl_parse_bin_get_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type)) {
    GstElementFactory *factory = gst_element_factory_find ("parsebin");
    GstPluginFeature *loaded = factory ?
        gst_plugin_feature_load (GST_PLUGIN_FEATURE (factory)) : NULL;
    GType t = G_TYPE_INVALID;

    if (loaded) {
      GType parent = gst_element_factory_get_element_type
          (GST_ELEMENT_FACTORY (loaded));
      GTypeQuery query;

      g_type_query (parent, &query);
      if (query.type) {
        GTypeInfo info = { 0, };

        info.class_size = query.class_size;
        info.class_init = spdl_parse_bin_class_init;
        info.instance_size = query.instance_size;
        spdl_chain_quark = g_quark_from_static_string ("spdl-video-chain");
        t = g_type_register_static (parent, "GstSpdlParseBin", &info, 0);
      }
      gst_object_unref (loaded);
    }
    gst_clear_object (&factory);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* The error kept by our parsebin, when its element is still in the bin
 * (an element parsebin tried and rejected is removed; its errors are
 * not the file's). */
static GstMessage *
take_demux_error (GstSpdlVideoChain * chain)
{
  GstMessage *msg;
  GstObject *parent = NULL;

  g_mutex_lock (&chain->pads_lock);
  msg = chain->demux_error;
  if (msg && GST_MESSAGE_SRC (msg))
    parent = gst_object_get_parent (GST_MESSAGE_SRC (msg));
  chain->demux_error = NULL;
  if (parent == NULL)
    gst_clear_message (&msg);
  g_mutex_unlock (&chain->pads_lock);
  gst_clear_object (&parent);
  return msg;
}

static void
free_demuxer (GstSpdlVideoChain * chain)
{
  if (chain->demux_pipe == NULL)
    return;
  gst_element_set_state (chain->demux_pipe, GST_STATE_NULL);
  g_list_free_full (chain->fakesinks, gst_object_unref);
  chain->fakesinks = NULL;
  gst_clear_object (&chain->demux_pipe);
  chain->src = chain->parsebin = chain->appsink = NULL;
  gst_clear_message (&chain->demux_error);
  g_clear_pointer (&chain->unknown_type, g_free);
}

static gboolean
build_demuxer (GstSpdlVideoChain * chain, GError ** error)
{
  GType parse_bin_type = spdl_parse_bin_get_type ();
  GstPad *appsink_pad;

  chain->demux_pipe = gst_pipeline_new (NULL);
  chain->parsebin = parse_bin_type ? g_object_new (parse_bin_type, NULL) :
      NULL;
  if (chain->parsebin)
    g_object_set_qdata (G_OBJECT (chain->parsebin), spdl_chain_quark, chain);
  chain->appsink = gst_element_factory_make ("appsink", NULL);
  if (!chain->parsebin || !chain->appsink) {
    gst_clear_object (&chain->parsebin);
    gst_clear_object (&chain->appsink);
    gst_clear_object (&chain->demux_pipe);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "parsebin or appsink is missing (GStreamer's base plugins)");
  }
  /* every packet, as fast as the demuxer gives them */
  g_object_set (chain->appsink, "sync", FALSE, "enable-last-sample", FALSE,
      "wait-on-eos", FALSE, NULL);
  gst_bin_add_many (GST_BIN (chain->demux_pipe), chain->parsebin,
      chain->appsink, NULL);
  g_signal_connect (chain->parsebin, "pad-added", G_CALLBACK (on_pad_added),
      chain);
  g_signal_connect (chain->parsebin, "no-more-pads",
      G_CALLBACK (on_no_more_pads), chain);
  g_signal_connect (chain->parsebin, "autoplug-select",
      G_CALLBACK (gst_spdl_media_autoplug_select), NULL);
  g_signal_connect (chain->parsebin, "unknown-type",
      G_CALLBACK (on_unknown_type), chain);
  appsink_pad = gst_element_get_static_pad (chain->appsink, "sink");
  gst_pad_add_probe (appsink_pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
      on_video_event, chain, NULL);
  gst_object_unref (appsink_pad);
  chain->demux_builds++;
  return TRUE;
}

/* A new source for the next video. giostreamsrc keeps the last block it
 * read (its read cache, with the offsets it came from) across a stop and
 * a new stream: a reused one answers the next video's first reads at
 * those offsets with the previous video's bytes (its header, its index),
 * so a video was demuxed with parts of the one before it (another
 * video's timestamps, frames from another video's bytes). The element is
 * cheap; the parsebin after it is reused. */
static gboolean
replace_source (GstSpdlVideoChain * chain, GError ** error)
{
  return gst_spdl_media_replace_source (GST_BIN (chain->demux_pipe),
      &chain->src, chain->parsebin, error);
}

/* Back to NULL with no dynamic sink left: ready for the next video. */
static void
reset_demuxer (GstSpdlVideoChain * chain)
{
  GList *l;

  gst_element_set_state (chain->demux_pipe, GST_STATE_NULL);
  for (l = chain->fakesinks; l; l = l->next) {
    gst_element_set_state (l->data, GST_STATE_NULL);
    gst_bin_remove (GST_BIN (chain->demux_pipe), l->data);
  }
  g_list_free_full (chain->fakesinks, gst_object_unref);
  chain->fakesinks = NULL;
  chain->video_linked = chain->no_more_pads = chain->other_eos = FALSE;
  g_mutex_lock (&chain->pads_lock);
  gst_clear_message (&chain->demux_error);
  g_clear_pointer (&chain->unknown_type, g_free);
  chain->tag_orientation = GST_VIDEO_ORIENTATION_IDENTITY;
  g_mutex_unlock (&chain->pads_lock);
}

void
gst_spdl_video_chain_close (GstSpdlVideoChain * chain)
{
  guint i;

  for (i = 0; i < chain->packets->len; i++)
    gst_buffer_unref (g_array_index (chain->packets, Packet, i).buffer);
  g_array_set_size (chain->packets, 0);
  gst_clear_caps (&chain->caps);
  g_clear_pointer (&chain->data, g_bytes_unref);
  g_clear_pointer (&chain->pts, g_free);
  g_clear_pointer (&chain->raw_pts, g_free);
  g_clear_pointer (&chain->frame_packet, g_free);
  g_clear_pointer (&chain->want, g_free);
  chain->n_frames = 0;
  chain->end = 0;
  chain->time_offset = 0;
  chain->width = chain->height = 0;
  chain->orientation = GST_VIDEO_ORIENTATION_IDENTITY;
}


/* A demuxing error as a skip reason: parsebin's "missing a plug-in"
 * names the stream it had nothing for (a GIF, whose only demuxer is
 * refused, or a container GStreamer does not demux). */
static gboolean
fail_demux (GstSpdlVideoChain * chain, GstMessage * msg, GError ** error)
{
  GError *err = NULL;
  gchar *type;

  gst_message_parse_error (msg, &err, NULL);
  g_mutex_lock (&chain->pads_lock);
  type = g_strdup (chain->unknown_type);
  g_mutex_unlock (&chain->pads_lock);
  if (g_error_matches (err, GST_CORE_ERROR, GST_CORE_ERROR_MISSING_PLUGIN) &&
      type) {
    if (bin_has_element (chain->parsebin, NULL, "Demux"))
      gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
          "no GStreamer element for its %s stream", type);
    else if (g_str_has_prefix (type, "image/"))
      gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT,
          "the file is %s, not a video container", type);
    else
      gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT,
          "no GStreamer demuxer for %s", type);
  } else {
    gst_spdl_media_fail_from_message (msg, error, "could not demux");
  }
  g_error_free (err);
  g_free (type);
  return FALSE;
}

static int
compare_frames (gconstpointer a, gconstpointer b, gpointer packets)
{
  const Packet *pa = &g_array_index ((GArray *) packets, Packet,
      *(const guint *) a);
  const Packet *pb = &g_array_index ((GArray *) packets, Packet,
      *(const guint *) b);
  GstClockTime ta = GST_BUFFER_PTS (pa->buffer);
  GstClockTime tb = GST_BUFFER_PTS (pb->buffer);

  if (ta != tb)
    return ta < tb ? -1 : 1;
  return *(const guint *) a < *(const guint *) b ? -1 : 1;
}

/* Reads an unsigned Exp-Golomb number at bit @pos of @d (@n bytes,
 * emulation prevention ignored: the first fields of a slice header). */
static guint
read_ue (const guint8 * d, gsize n, gsize * pos)
{
  guint zeros = 0, v = 0, i;

  while (*pos < n * 8 && !((d[*pos / 8] >> (7 - *pos % 8)) & 1)) {
    zeros++;
    (*pos)++;
  }
  (*pos)++;
  for (i = 0; i < zeros && *pos < n * 8 && i < 31; i++, (*pos)++)
    v = (v << 1) | ((d[*pos / 8] >> (7 - *pos % 8)) & 1);
  return (1u << MIN (zeros, 31)) - 1 + v;
}

/* Whether an H.264 NAL unit is a B slice. */
static gboolean
h264_nal_is_b (const guint8 * nal, gsize n)
{
  gsize pos = 0;
  guint type;

  if (n < 2 || ((nal[0] & 0x1f) != 1 && (nal[0] & 0x1f) != 5))
    return FALSE;
  read_ue (nal + 1, n - 1, &pos);       /* first_mb_in_slice */
  type = read_ue (nal + 1, n - 1, &pos);
  return type % 5 == 1;
}

/* Whether an H.264 NAL unit is an IDR slice. */
static gboolean
h264_nal_is_idr (const guint8 * nal, gsize n)
{
  return n >= 1 && (nal[0] & 0x1f) == 5;
}

/* Whether a NAL unit of the H.264 access unit @buf passes @test:
 * @nal_length bytes of size before each (avc), or start codes (0). */
static gboolean
h264_packet_has_nal (gint nal_length, GstBuffer * buf,
    gboolean (*test) (const guint8 * nal, gsize n))
{
  GstMapInfo map;
  gboolean found = FALSE;
  gsize i;

  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return FALSE;
  if (nal_length > 0) {
    for (i = 0; i + nal_length <= map.size && !found;) {
      gsize len = 0;
      gint k;

      for (k = 0; k < nal_length; k++)
        len = (len << 8) | map.data[i + k];
      i += nal_length;
      if (len > map.size - i)
        break;
      found = test (map.data + i, len);
      i += len;
    }
  } else {
    for (i = 0; i + 3 < map.size && !found; i++)
      if (map.data[i] == 0 && map.data[i + 1] == 0 && map.data[i + 2] == 1)
        found = test (map.data + i + 3, map.size - i - 3);
  }
  gst_buffer_unmap (buf, &map);
  return found;
}

/* Whether @buf holds a B-frame (MPEG-4 part 2 B-VOP, H.264 B slice):
 * a frame shown before one decoded earlier. */
static gboolean
packet_is_b_frame (const GstStructure * s, gint nal_length, GstBuffer * buf)
{
  GstMapInfo map;
  gboolean b = FALSE;
  gsize i;

  if (!gst_structure_has_name (s, "video/mpeg"))
    return h264_packet_has_nal (nal_length, buf, h264_nal_is_b);
  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return FALSE;
  for (i = 0; i + 4 < map.size && !b; i++)
    if (map.data[i] == 0 && map.data[i + 1] == 0 && map.data[i + 2] == 1 &&
        map.data[i + 3] == 0xb6)
      b = (map.data[i + 4] >> 6) == 2;
  gst_buffer_unmap (buf, &map);
  return b;
}

/* The size of an H.264 stream's NAL length fields (avc), 0 for start
 * codes (byte-stream), -1 when not known. */
static gint
h264_nal_length (const GstStructure * s)
{
  const GValue *v = gst_structure_get_value (s, "codec_data");
  GstMapInfo map;
  gint nal_length = -1;

  if (g_strcmp0 (gst_structure_get_string (s, "stream-format"),
          "byte-stream") == 0)
    return 0;
  if (v == NULL || !GST_VALUE_HOLDS_BUFFER (v) ||
      !gst_buffer_map (gst_value_get_buffer (v), &map, GST_MAP_READ))
    return -1;
  if (map.size > 4)
    nal_length = (map.data[4] & 3) + 1;
  gst_buffer_unmap (gst_value_get_buffer (v), &map);
  return nal_length;
}

/* H.264 keyframes that are not IDR pictures: an open GOP's I-frames
 * (recovery points). gst-libav 1.22 cannot start decoding at one: FFmpeg
 * fills the frame_num gap before it with up to num_ref_frames pictures,
 * each asking get_buffer for the same packet's frame, which gst-libav
 * refuses after the first; the I-frame's slices then fail ("Invalid
 * input packet") and the frames after it are concealed garbage until
 * the next keyframe. Decoding started one keyframe earlier (whatever it
 * decodes to) reaches the recovery point with frame_num continuous: the
 * I-frame and every frame shown after it are exact (a recovery point
 * with recovery_frame_cnt 0, as x264 writes them). mark_packets starts
 * there. */
static void
mark_recovery_points (GstSpdlVideoChain * chain)
{
  const GstStructure *s = gst_caps_get_structure (chain->caps, 0);
  gint nal_length;
  guint i;

  if (!gst_structure_has_name (s, "video/x-h264"))
    return;
  nal_length = h264_nal_length (s);
  if (nal_length < 0)
    return;
  for (i = 0; i < chain->packets->len; i++) {
    Packet *p = &g_array_index (chain->packets, Packet, i);

    p->recovery = p->key && !h264_packet_has_nal (nal_length, p->buffer,
        h264_nal_is_idr);
  }
}

/* AVI gives a frame's decode time, and its presentation time only for
 * keyframes (equal there). Without B-frames the two are the same (what
 * FFmpeg takes as the pts); with them the order shown is not known
 * before decoding. Returns FALSE (and sets @error) for the latter. */
static gboolean
derive_pts_from_dts (GstSpdlVideoChain * chain, GError ** error)
{
  const GstStructure *s = gst_caps_get_structure (chain->caps, 0);
  gboolean missing = FALSE;
  gint nal_length = 0;
  guint i;

  for (i = 0; i < chain->packets->len; i++) {
    GstBuffer *b = g_array_index (chain->packets, Packet, i).buffer;

    if (GST_BUFFER_PTS_IS_VALID (b) && GST_BUFFER_DTS_IS_VALID (b) &&
        GST_BUFFER_PTS (b) != GST_BUFFER_DTS (b))
      return TRUE;              /* the container has presentation times */
    if (!GST_BUFFER_PTS_IS_VALID (b) && GST_BUFFER_DTS_IS_VALID (b))
      missing = TRUE;
  }
  if (!missing)
    return TRUE;
  if (gst_structure_has_name (s, "video/x-h264")) {
    nal_length = h264_nal_length (s);
    if (nal_length < 0)
      return TRUE;
  } else if (!gst_structure_has_name (s, "video/mpeg")) {
    return TRUE;
  }
  for (i = 0; i < chain->packets->len; i++)
    if (packet_is_b_frame (s, nal_length,
            g_array_index (chain->packets, Packet, i).buffer))
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
          "B-frames in a container without presentation times (AVI): "
          "the order they are shown in is not known");
  for (i = 0; i < chain->packets->len; i++) {
    Packet *p = &g_array_index (chain->packets, Packet, i);

    if (!GST_BUFFER_PTS_IS_VALID (p->buffer) &&
        GST_BUFFER_DTS_IS_VALID (p->buffer)) {
      p->buffer = gst_buffer_make_writable (p->buffer);
      GST_BUFFER_PTS (p->buffer) = GST_BUFFER_DTS (p->buffer);
    }
  }
  return TRUE;
}

/* MPEG-TS: tsdemux's times are a program's PTS less the first PCR of
 * that program (mpegtspacketizer: "PTS - first group PCR + group PCR
 * offset"); FFmpeg, PyAV and torchcodec give the PTS themselves, so a file
 * FFmpeg wrote (PCR from 0.7 s, first PTS 1.4 s) read 0.7 s early. The
 * first PCR of the program tsdemux plays by default (the first in the
 * PAT), in nanoseconds, or GST_CLOCK_TIME_NONE. */
#define TS_PACKET 188

/* Where the first of four TS packets @stride bytes apart starts, or -1 */
static gssize
ts_find_start (const guint8 * d, gsize n, gsize stride)
{
  gsize i;

  for (i = 0; i < stride && i + 3 * stride + TS_PACKET <= n; i++)
    if (d[i] == 0x47 && d[i + stride] == 0x47 && d[i + 2 * stride] == 0x47 &&
        d[i + 3 * stride] == 0x47)
      return i;
  return -1;
}

/* The payload of the TS packet @p (its adaptation field skipped) and its
 * size, or NULL */
static const guint8 *
ts_payload (const guint8 * p, gsize * size)
{
  gsize off = 4;

  if (!(p[3] & 0x10))
    return NULL;
  if (p[3] & 0x20)
    off += 1 + p[4];
  if (off >= TS_PACKET)
    return NULL;
  *size = TS_PACKET - off;
  return p + off;
}

/* The section that starts in the payload of @p (a PSI packet that starts
 * one) if its table is @table_id, and its length up to the CRC */
static const guint8 *
ts_section (const guint8 * p, guint table_id, gsize * len)
{
  gsize size, ptr, sec_len;
  const guint8 *pl;

  if (!(p[1] & 0x40) || (pl = ts_payload (p, &size)) == NULL)
    return NULL;
  ptr = pl[0];
  if (1 + ptr + 3 > size || pl[1 + ptr] != table_id)
    return NULL;
  pl += 1 + ptr;
  size -= 1 + ptr;
  sec_len = ((pl[1] & 0x0f) << 8) | pl[2];
  if (sec_len < 9 || 3 + sec_len > size)
    return NULL;
  *len = 3 + sec_len - 4;
  return pl;
}

static GstClockTime
ts_first_pcr (const guint8 * d, gsize n)
{
  static const gsize strides[] = { 188, 192, 204, 208 };
  gssize start = -1;
  gsize stride = 0, i, len;
  guint step, pmt_pid = G_MAXUINT, pcr_pid = G_MAXUINT;

  for (i = 0; i < G_N_ELEMENTS (strides) && start < 0; i++) {
    stride = strides[i];
    start = ts_find_start (d, n, stride);
  }
  if (start < 0)
    return GST_CLOCK_TIME_NONE;
  /* the PAT's first program, its PMT's PCR PID, that PID's first PCR */
  for (step = 0; step < 3; step++) {
    for (i = start; i + TS_PACKET <= n; i += stride) {
      const guint8 *p = d + i, *sec;
      guint pid = ((p[1] & 0x1f) << 8) | p[2];
      gsize k;

      if (p[0] != 0x47)
        continue;
      if (step == 0 && pid == 0 && (sec = ts_section (p, 0x00, &len))) {
        for (k = 8; k + 4 <= len && pmt_pid == G_MAXUINT; k += 4)
          if (((sec[k] << 8) | sec[k + 1]) != 0)
            pmt_pid = ((sec[k + 2] & 0x1f) << 8) | sec[k + 3];
      } else if (step == 1 && pid == pmt_pid &&
          (sec = ts_section (p, 0x02, &len)) && len >= 12) {
        pcr_pid = ((sec[8] & 0x1f) << 8) | sec[9];
      } else if (step == 2 && pid == pcr_pid && (p[3] & 0x20) && p[4] >= 7 &&
          (p[5] & 0x10)) {
        guint64 base = ((guint64) p[6] << 25) | (p[7] << 17) | (p[8] << 9) |
            (p[9] << 1) | (p[10] >> 7);
        guint64 pcr = base * 300 + (((p[10] & 1) << 8) | p[11]);

        return gst_util_uint64_scale (pcr, 1000, 27);
      }
      if ((step == 0 && pmt_pid != G_MAXUINT) ||
          (step == 1 && pcr_pid != G_MAXUINT))
        break;
    }
    if ((step == 0 && pmt_pid == G_MAXUINT) ||
        (step == 1 && pcr_pid == G_MAXUINT))
      return GST_CLOCK_TIME_NONE;
  }
  return GST_CLOCK_TIME_NONE;
}

/* The frame list from the packets: those the segment shows (an edit
 * list's pre-roll frames are decoded, not shown), by presentation time. */
static gboolean
index_frames (GstSpdlVideoChain * chain, const GstSegment * segment,
    GstClockTime offset, GError ** error)
{
  guint n = chain->packets->len, i, n_frames = 0;
  guint *order = g_new (guint, MAX (n, 1));
  GstClockTime last_end = GST_CLOCK_TIME_NONE, prev_pts = GST_CLOCK_TIME_NONE;
  const gchar *format = gst_structure_get_string (gst_caps_get_structure
      (chain->caps, 0), "stream-format");
  gboolean packetized = g_strcmp0 (format, "byte-stream") != 0;

  for (i = 0; i < n; i++) {
    Packet *p = &g_array_index (chain->packets, Packet, i);
    GstClockTime pts = GST_BUFFER_PTS (p->buffer);
    guint64 clipped;

    p->frame = -1;
    if (!GST_CLOCK_TIME_IS_VALID (pts) &&
        GST_BUFFER_FLAG_IS_SET (p->buffer, GST_BUFFER_FLAG_HEADER)) {
      /* a codec header in the stream (Theora's three, also in the caps'
       * streamheader): not a frame */
      p->key = FALSE;
      continue;
    }
    if (!GST_CLOCK_TIME_IS_VALID (pts) && packetized &&
        GST_CLOCK_TIME_IS_VALID (prev_pts)) {
      /* GstBaseParse takes an input timestamp equal to the previous
       * buffer's for the same one carried over and leaves the frame
       * without one; a container packet (one frame each) has its own,
       * which was that one: two frames at one time, as in a VFR file
       * whose timestamps were rounded onto a coarse time base. */
      p->buffer = gst_buffer_make_writable (p->buffer);
      GST_BUFFER_PTS (p->buffer) = pts = prev_pts;
    }
    prev_pts = pts;
    if (!GST_CLOCK_TIME_IS_VALID (pts)) {
      g_free (order);
      return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
          "video packet %u has no presentation time", i);
    }
    if (segment && !gst_segment_clip (segment, GST_FORMAT_TIME, pts,
            pts + 1, &clipped, NULL))
      continue;
    order[n_frames++] = i;
  }
  g_qsort_with_data (order, n_frames, sizeof (guint), compare_frames,
      chain->packets);
  chain->n_frames = n_frames;
  chain->pts = g_new (gdouble, MAX (n_frames, 1));
  chain->raw_pts = g_new (GstClockTime, MAX (n_frames, 1));
  chain->frame_packet = order;
  chain->want = g_new0 (guint8, MAX (n_frames, 1));
  for (i = 0; i < n_frames; i++) {
    Packet *p = &g_array_index (chain->packets, Packet, order[i]);
    GstClockTime pts = GST_BUFFER_PTS (p->buffer);
    guint64 st = segment ? gst_segment_to_stream_time (segment,
        GST_FORMAT_TIME, pts) : pts;

    p->frame = i;
    chain->raw_pts[i] = pts;
    chain->pts[i] = (gdouble) ((st == G_MAXUINT64 ? pts : st) + offset) /
        GST_SECOND;
    if (GST_BUFFER_DURATION_IS_VALID (p->buffer))
      last_end = pts + GST_BUFFER_DURATION (p->buffer);
    else
      last_end = GST_CLOCK_TIME_NONE;
  }
  if (n_frames > 0 && GST_CLOCK_TIME_IS_VALID (last_end)) {
    guint64 st = segment ? gst_segment_to_stream_time (segment,
        GST_FORMAT_TIME, last_end) : last_end;
    if (st != G_MAXUINT64)
      chain->end = (gdouble) (st + offset) / GST_SECOND;
  }
  if (segment && segment->time == 0 && n_frames > 0 && chain->pts[0] > 0) {
    /* FFmpeg's mov demuxer: an edit that starts between two frames
     * (ffmpeg -ss 1.3 -c copy: at 1.30 s of frames 40 ms apart) shows
     * its first frame at 0, every time shifted by as much
     * (mov_fix_index, min_corrected_pts). The audio chain stays in the
     * demuxer's timeline: time_offset says by how much. */
    gdouble shift = chain->pts[0];

    for (i = 0; i < n_frames; i++)
      chain->pts[i] -= shift;
    if (chain->end > 0)
      chain->end -= shift;
    chain->time_offset -= shift;
  }
  return TRUE;
}

/* Whether frames turned by @method are shown with width and height
 * swapped */
static gboolean
orientation_swaps (GstVideoOrientationMethod method)
{
  return method == GST_VIDEO_ORIENTATION_90R ||
      method == GST_VIDEO_ORIENTATION_90L ||
      method == GST_VIDEO_ORIENTATION_UL_LR ||
      method == GST_VIDEO_ORIENTATION_UR_LL;
}

static gboolean
check_caps (GstSpdlVideoChain * chain, GError ** error)
{
  const GstStructure *s = gst_caps_get_structure (chain->caps, 0);
  gint w = 0, h = 0;

  gst_structure_get_int (s, "width", &w);
  gst_structure_get_int (s, "height", &h);
  if (w < 0 || h < 0 || (chain->limits.max_pixels &&
          (guint64) w * h > chain->limits.max_pixels))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "the video is %dx%d, more than max-pixels=%" G_GUINT64_FORMAT, w, h,
        chain->limits.max_pixels);
  if (orientation_swaps (chain->orientation)) {
    chain->width = h;
    chain->height = w;
  } else {
    chain->width = w;
    chain->height = h;
  }
  return TRUE;
}

/* One demuxing of @data into chain->packets and chain->caps; @segment
 * (@have_segment) the video stream's first segment. */
static gboolean
demux_packets (GstSpdlVideoChain * chain, GBytes * data, GstSegment * segment,
    gboolean * have_segment, GError ** error)
{
  GInputStream *stream;
  GstBus *bus;
  gboolean ok = FALSE, eos = FALSE;
  gint64 deadline;
  GstStateChangeReturn ret;

  reset_demuxer (chain);
  if (!replace_source (chain, error))
    return FALSE;
  stream = g_memory_input_stream_new_from_bytes (data);
  g_object_set (chain->src, "stream", stream, NULL);
  g_object_unref (stream);

  *have_segment = FALSE;
  bus = gst_element_get_bus (chain->demux_pipe);
  deadline = g_get_monotonic_time () + chain->limits.timeout / GST_USECOND;
  ret = gst_element_set_state (chain->demux_pipe, GST_STATE_PLAYING);
  if (ret == GST_STATE_CHANGE_FAILURE) {
    GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    if (msg) {
      fail_demux (chain, msg, error);
      gst_message_unref (msg);
    } else {
      gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "could not start demuxing");
    }
    goto done;
  }
  while (TRUE) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK
        (chain->appsink), POLL_INTERVAL);
    GstMessage *msg;
    gboolean no_video;

    if (sample) {
      Packet p = { 0, };
      GstBuffer *buf = gst_sample_get_buffer (sample);

      if (chain->caps == NULL) {
        chain->caps = gst_caps_ref (gst_sample_get_caps (sample));
        if (gst_sample_get_segment (sample)) {
          gst_segment_copy_into (gst_sample_get_segment (sample), segment);
          *have_segment = segment->format == GST_FORMAT_TIME;
        }
      }
      p.buffer = gst_buffer_ref (buf);
      p.key = !GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
      g_array_append_val (chain->packets, p);
      gst_sample_unref (sample);
      if (chain->packets->len > chain->limits.max_frames) {
        gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
            "the video has more than max-frames=%u frames",
            chain->limits.max_frames);
        goto done;
      }
      continue;
    }
    if (gst_app_sink_is_eos (GST_APP_SINK (chain->appsink))) {
      eos = TRUE;
      break;
    }
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (msg == NULL && !gst_app_sink_is_eos (GST_APP_SINK (chain->appsink)))
      msg = take_demux_error (chain);
    if (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      fail_demux (chain, msg, error);
      gst_message_unref (msg);
      goto done;
    }
    g_mutex_lock (&chain->pads_lock);
    no_video = (chain->no_more_pads || chain->other_eos) &&
        !chain->video_linked;
    g_mutex_unlock (&chain->pads_lock);
    /* parsebin exposed every stream and none is video; or the pipeline
     * ended with none (no-more-pads is not always emitted) */
    if (no_video || (msg && !chain->video_linked)) {
      gst_clear_message (&msg);
      /* a stream with no container around it (a JPEG image, an MP3) */
      if (!bin_has_element (chain->parsebin, NULL, "Demux"))
        gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT,
            "the file is not a video container");
      else
        gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_NO_VIDEO,
            "the file has no video stream");
      goto done;
    }
    gst_clear_message (&msg);
    if (g_get_monotonic_time () > deadline) {
      gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TIMEOUT,
          "demuxing took more than %" G_GUINT64_FORMAT " s",
          chain->limits.timeout / GST_SECOND);
      goto done;
    }
  }
  if (eos && chain->packets->len == 0) {
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_NO_VIDEO,
        "the video stream has no frame");
    goto done;
  }
  ok = TRUE;
done:
  gst_object_unref (bus);
  return ok;
}

/* The size and header size of the ISO BMFF box at @d (@n bytes left),
 * FALSE when it does not fit. */
static gboolean
mp4_box (const guint8 * d, gsize n, guint64 * size, guint * header)
{
  guint32 size32;
  guint64 size64;

  /* memcpy: a box starts anywhere, and GST_READ_UINT32_BE loads a whole
   * word on x86 (misaligned, UndefinedBehaviorSanitizer) */
  if (n < 8)
    return FALSE;
  memcpy (&size32, d, 4);
  *size = GUINT32_FROM_BE (size32);
  *header = 8;
  if (*size == 1) {
    if (n < 16)
      return FALSE;
    memcpy (&size64, d + 8, 8);
    *size = GUINT64_FROM_BE (size64);
    *header = 16;
  } else if (*size == 0) {
    *size = n;
  }
  return *size >= *header && *size <= n;
}

/* How many tracks of the MP4 / MOV @d have an edit list box
 * (moov/trak/edts); with @hide, renamed "free" (same size: every offset
 * stays valid; @d is written only then). */
static guint
mp4_edit_lists (guint8 * d, gsize n, gboolean hide)
{
  guint64 size, tsize, esize;
  guint header, theader, eheader, hidden = 0;
  gsize i, t, e;

  for (i = 0; mp4_box (d + i, n - i, &size, &header); i += size) {
    if (memcmp (d + i + 4, "moov", 4) != 0)
      continue;
    for (t = i + header; t < i + size &&
        mp4_box (d + t, i + size - t, &tsize, &theader); t += tsize) {
      if (memcmp (d + t + 4, "trak", 4) != 0)
        continue;
      for (e = t + theader; e < t + tsize &&
          mp4_box (d + e, t + tsize - e, &esize, &eheader); e += esize)
        if (memcmp (d + e + 4, "edts", 4) == 0) {
          if (hide)
            memcpy (d + e + 4, "free", 4);
          hidden++;
        }
    }
  }
  return hidden;
}

/* qtdemux (1.22) starts an edit whose media time is past a keyframe at
 * the first sample of the edit, not at the keyframe before it: a
 * stream-copy cut (ffmpeg -ss 1.3 -c copy) gave no packet before 1.3 s,
 * so the frames up to the next keyframe were decoded from a delta frame
 * (dropped as corrupt, or garbage). FFmpeg keeps the packets from the
 * keyframe, decodes them and shows only the frames in the edit. Here the
 * file is demuxed again with its edit lists hidden, and its packets are
 * taken, then those of the edited demuxing past its last one (the same
 * media times: without an edit list qtdemux ends the track at the
 * movie's duration, so the end comes from the first demuxing). Not only
 * the packets before the edited demuxing's first: after that first one
 * qtdemux also leaves out the packets shown before the edit, B-frames
 * that later frames refer to (a cut at 0.5 s of B-pyramid H.264 was
 * 2-4 off FFmpeg up to its next keyframe). index_frames applies the edit
 * list (the first demuxing's segment). */
static gboolean
add_packets_before_edit (GstSpdlVideoChain * chain, GBytes * data,
    GError ** error)
{
  gsize n;
  guint8 *copy = g_bytes_unref_to_data (g_bytes_ref (data), &n);
  GArray *edited;
  GBytes *hidden;
  GstCaps *caps;
  GstSegment unused;
  GArray *merged;
  gboolean have_unused, ok;
  guint i, j, before = 0;

  if (mp4_edit_lists (copy, n, TRUE) == 0) {
    g_free (copy);
    return TRUE;
  }
  hidden = g_bytes_new_take (copy, n);
  edited = chain->packets;
  caps = g_steal_pointer (&chain->caps);
  chain->packets = g_array_new (FALSE, TRUE, sizeof (Packet));
  reset_demuxer (chain);
  ok = demux_packets (chain, hidden, &unused, &have_unused, error);
  g_object_set (chain->src, "stream", NULL, NULL);
  g_bytes_unref (hidden);
  /* both in decode order: their union by DTS (each leaves out packets
   * the other has), the unedited packet where both have one */
  merged = g_array_sized_new (FALSE, TRUE, sizeof (Packet),
      edited->len + (ok ? chain->packets->len : 0));
  i = j = 0;
  while (ok && i < chain->packets->len && j < edited->len) {
    Packet *u = &g_array_index (chain->packets, Packet, i);
    Packet *e = &g_array_index (edited, Packet, j);
    GstClockTime ud = GST_BUFFER_DTS (u->buffer);
    GstClockTime ed = GST_BUFFER_DTS (e->buffer);

    if (!GST_CLOCK_TIME_IS_VALID (ud) || !GST_CLOCK_TIME_IS_VALID (ed))
      break;
    if (ud <= ed) {
      g_array_append_vals (merged, u, 1);
      before += ud < ed;
      i++;
      if (ud == ed) {
        gst_buffer_unref (e->buffer);
        j++;
      }
    } else {
      g_array_append_vals (merged, e, 1);
      j++;
    }
  }
  for (; i < chain->packets->len; i++)
    gst_buffer_unref (g_array_index (chain->packets, Packet, i).buffer);
  g_array_append_vals (merged, (Packet *) edited->data + j, edited->len - j);
  g_array_free (chain->packets, TRUE);
  chain->packets = merged;
  g_array_free (edited, TRUE);
  gst_clear_caps (&chain->caps);
  chain->caps = caps;
  GST_DEBUG ("%u packets only the demuxing without edit lists has, %u in "
      "all", before, chain->packets->len);
  return ok;
}

gboolean
gst_spdl_video_chain_open (GstSpdlVideoChain * chain, GBytes * data,
    GError ** error)
{
  GstSegment segment;
  gboolean have_segment = FALSE, ok = FALSE;
  GstClockTime offset = 0;

  gst_spdl_video_chain_close (chain);
  if (!gst_spdl_media_file_check (data, error))
    return FALSE;
  if (chain->demux_pipe && !chain->limits.reuse)
    free_demuxer (chain);
  if (chain->demux_pipe == NULL && !build_demuxer (chain, error))
    return FALSE;
  chain->data = g_bytes_ref (data);
  if (!demux_packets (chain, data, &segment, &have_segment, error))
    goto done;
  /* shown as players and FFmpeg show it: its display matrix applied */
  g_mutex_lock (&chain->pads_lock);
  if (chain->limits.autorotate)
    chain->orientation = chain->tag_orientation;
  g_mutex_unlock (&chain->pads_lock);
  /* FFmpeg's pts_time: the container's timestamps, with an MP4 / MOV
   * edit list applied. qtdemux's segment is its edit list; other
   * demuxers' segments hide a late start (matroskademux), which FFmpeg
   * reports. */
  if (have_segment && !bin_has_element (chain->parsebin, "qtdemux", NULL))
    have_segment = FALSE;
  /* without an edit list FFmpeg shows every frame at its own time (a
   * first frame at 0.08 s stays there); qtdemux's segment then ends at
   * the movie's duration, which cut the last B-frames' times off */
  if (have_segment && mp4_edit_lists ((guint8 *) g_bytes_get_data (data,
              NULL), g_bytes_get_size (data), FALSE) == 0)
    have_segment = FALSE;
  if (have_segment && !g_array_index (chain->packets, Packet, 0).key &&
      !add_packets_before_edit (chain, data, error))
    goto done;
  if (bin_has_element (chain->parsebin, "tsdemux", NULL)) {
    offset = ts_first_pcr (g_bytes_get_data (data, NULL),
        g_bytes_get_size (data));
    if (!GST_CLOCK_TIME_IS_VALID (offset))
      offset = 0;
  }
  chain->time_offset = (gdouble) offset / GST_SECOND;
  /* (index_frames may change time_offset) */
  ok = check_caps (chain, error) && derive_pts_from_dts (chain, error) &&
      index_frames (chain, have_segment ? &segment : NULL, offset, error);
  if (ok)
    mark_recovery_points (chain);
  if (ok && chain->n_frames == 0)
    ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_NO_VIDEO,
        "the video stream shows no frame");
done:
  /* nothing of the demuxer outlives the call: the packets are ours */
  reset_demuxer (chain);
  g_object_set (chain->src, "stream", NULL, NULL);
  if (!ok)
    gst_spdl_video_chain_close (chain);
  return ok;
}

const gdouble *
gst_spdl_video_chain_get_pts (GstSpdlVideoChain * chain, guint * n_frames)
{
  *n_frames = chain->n_frames;
  return chain->pts;
}

gdouble
gst_spdl_video_chain_get_end (GstSpdlVideoChain * chain)
{
  return chain->end;
}

gdouble
gst_spdl_video_chain_get_time_offset (GstSpdlVideoChain * chain)
{
  return chain->time_offset;
}

void
gst_spdl_video_chain_get_size (GstSpdlVideoChain * chain, guint * width,
    guint * height)
{
  *width = chain->width;
  *height = chain->height;
}

/* ------------------------------------------------------------------------ */
/* Decoding                                                                 */

/* The frame whose timestamp is @pts, or -1 */
static gint
frame_of (GstSpdlVideoChain * chain, GstClockTime pts)
{
  guint lo = 0, hi = chain->n_frames;

  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (chain->raw_pts[mid] < pts)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < chain->n_frames && chain->raw_pts[lo] == pts)
    return lo;
  return -1;
}

/* 8-bit 4:2:0 (what H.264, VP9 and AV1 decoders give): gstspdlyuv.c,
 * exact and rounded, only the region the caller reads. */
static void
convert_direct (GstSpdlVideoChain * chain, const GstVideoFrame * in,
    const GstSpdlVideoRegion * r)
{
  GstSpdlYuvPlanes planes;

  gst_spdl_yuv_planes_from_frame (&planes, in);
  gst_spdl_yuv_convert (&chain->tables, &planes, r->x0, r->x1, r->y0, r->y1,
      chain->rgb, chain->rgb_stride, chain->yuv_scratch);
}

/* Any other format: GstVideoConverter to 16-bit ARGB (whole frames),
 * rounded to 8 in the region, which is exact to about half a level. */
static void
convert_wide (GstSpdlVideoChain * chain, const GstVideoFrame * in,
    const GstSpdlVideoRegion * r)
{
  GstVideoFrame out;
  guint x, y, w = GST_VIDEO_FRAME_WIDTH (in);

  /* our scratch as a GstVideoFrame for the converter */
  memset (&out, 0, sizeof (out));
  out.info = chain->conv_out_info;
  out.data[0] = chain->wide;
  gst_video_converter_frame (chain->conv, in, &out);
  for (y = r->y0; y < r->y1; y++) {
    const guint16 *s = chain->wide + (gsize) y * w * 4;
    guint8 *d = chain->rgb + (gsize) y * chain->rgb_stride;

    for (x = r->x0; x < r->x1; x++) {
      d[3 * x] = (s[4 * x + 1] * 255u + 32767) / 65535;
      d[3 * x + 1] = (s[4 * x + 2] * 255u + 32767) / 65535;
      d[3 * x + 2] = (s[4 * x + 3] * 255u + 32767) / 65535;
    }
  }
}

static gboolean
ensure_converter (GstSpdlVideoChain * chain, const GstVideoInfo * in)
{
  GstVideoInfo out;
  guint w = GST_VIDEO_INFO_WIDTH (in), h = GST_VIDEO_INFO_HEIGHT (in);

  if (chain->have_conv && gst_video_info_is_equal (&chain->conv_info, in))
    return TRUE;
  chain->have_conv = FALSE;
  g_clear_pointer (&chain->conv, gst_video_converter_free);
  g_clear_pointer (&chain->wide, g_free);
  g_clear_pointer (&chain->rgb, g_free);
  g_clear_pointer (&chain->yuv_scratch, g_free);
  chain->direct = gst_spdl_yuv_is_supported (GST_VIDEO_INFO_FORMAT (in)) &&
      !GST_VIDEO_INFO_IS_INTERLACED (in);
  if (chain->direct) {
    gst_spdl_yuv_tables_init (&chain->tables, in);
    chain->yuv_scratch = g_try_new (gint32, 3 * ((gsize) w + 2));
    if (chain->yuv_scratch == NULL)
      return FALSE;
  } else {
    gst_video_info_set_format (&out, GST_VIDEO_FORMAT_ARGB64, w, h);
    /* the converter converts formats only, not rates or fields */
    GST_VIDEO_INFO_FPS_N (&out) = GST_VIDEO_INFO_FPS_N (in);
    GST_VIDEO_INFO_FPS_D (&out) = GST_VIDEO_INFO_FPS_D (in);
    GST_VIDEO_INFO_PAR_N (&out) = GST_VIDEO_INFO_PAR_N (in);
    GST_VIDEO_INFO_PAR_D (&out) = GST_VIDEO_INFO_PAR_D (in);
    GST_VIDEO_INFO_INTERLACE_MODE (&out) = GST_VIDEO_INFO_INTERLACE_MODE (in);
    /* one thread: the element runs one chain per core already; chroma
     * samples replicated as in the direct path */
    chain->conv = gst_video_converter_new ((GstVideoInfo *) in, &out,
        gst_structure_new ("options",
            GST_VIDEO_CONVERTER_OPT_DITHER_METHOD,
            GST_TYPE_VIDEO_DITHER_METHOD, GST_VIDEO_DITHER_NONE,
            GST_VIDEO_CONVERTER_OPT_CHROMA_MODE, GST_TYPE_VIDEO_CHROMA_MODE,
            GST_VIDEO_CHROMA_MODE_NONE,
            GST_VIDEO_CONVERTER_OPT_THREADS, G_TYPE_UINT, 1, NULL));
    if (chain->conv == NULL)
      return FALSE;
    chain->conv_out_info = out;
    chain->wide = g_try_malloc ((gsize) w * 8 * h);
    if (chain->wide == NULL)
      return FALSE;
  }
  chain->rgb_stride = GST_ROUND_UP_4 (w * 3);
  /* the resampler reads up to 16 bytes past a row's end */
  chain->rgb_size = chain->rgb_stride * h + 64;
  chain->rgb = g_try_malloc0 (chain->rgb_size);
  if (chain->rgb == NULL)
    return FALSE;
  chain->conv_info = *in;
  chain->have_conv = TRUE;
  return TRUE;
}

/* The pixels of a frame (@w x @h as stored) that the pixels @shown of
 * it turned by @method come from */
static void
stored_region (GstVideoOrientationMethod method, guint w, guint h,
    const GstSpdlVideoRegion * shown, GstSpdlVideoRegion * r)
{
  guint x0 = shown->x0, x1 = shown->x1, y0 = shown->y0, y1 = shown->y1;

  switch (method) {
    case GST_VIDEO_ORIENTATION_90R:
      *r = (GstSpdlVideoRegion) { y0, y1, h - x1, h - x0 };
      break;
    case GST_VIDEO_ORIENTATION_180:
      *r = (GstSpdlVideoRegion) { w - x1, w - x0, h - y1, h - y0 };
      break;
    case GST_VIDEO_ORIENTATION_90L:
      *r = (GstSpdlVideoRegion) { w - y1, w - y0, x0, x1 };
      break;
    case GST_VIDEO_ORIENTATION_HORIZ:
      *r = (GstSpdlVideoRegion) { w - x1, w - x0, y0, y1 };
      break;
    case GST_VIDEO_ORIENTATION_VERT:
      *r = (GstSpdlVideoRegion) { x0, x1, h - y1, h - y0 };
      break;
    case GST_VIDEO_ORIENTATION_UL_LR:
      *r = (GstSpdlVideoRegion) { y0, y1, x0, x1 };
      break;
    case GST_VIDEO_ORIENTATION_UR_LL:
      *r = (GstSpdlVideoRegion) { w - y1, w - y0, h - x1, h - x0 };
      break;
    default:
      *r = *shown;
      break;
  }
}

/* chain->rgb (@w x @h as stored) turned by the orientation into
 * chain->oriented (@stride bytes a row, @shown_h rows, 16 readable bytes
 * after the last), the pixels @shown of it */
static gboolean
orient (GstSpdlVideoChain * chain, guint w, guint h, gsize stride,
    guint shown_h, const GstSpdlVideoRegion * shown)
{
  gssize s = chain->rgb_stride, dx, dy, start;
  gsize size = stride * shown_h + 64;
  guint x, y;

  /* where pixel (0, 0) as shown comes from, and the steps in the stored
   * frame for one pixel right and one row down as shown */
  switch (chain->orientation) {
    case GST_VIDEO_ORIENTATION_90R:
      start = (gssize) (h - 1) * s, dx = -s, dy = 3;
      break;
    case GST_VIDEO_ORIENTATION_180:
      start = (gssize) (h - 1) * s + (w - 1) * 3, dx = -3, dy = -s;
      break;
    case GST_VIDEO_ORIENTATION_90L:
      start = (gssize) (w - 1) * 3, dx = s, dy = -3;
      break;
    case GST_VIDEO_ORIENTATION_HORIZ:
      start = (gssize) (w - 1) * 3, dx = -3, dy = s;
      break;
    case GST_VIDEO_ORIENTATION_VERT:
      start = (gssize) (h - 1) * s, dx = 3, dy = -s;
      break;
    case GST_VIDEO_ORIENTATION_UL_LR:
      start = 0, dx = s, dy = 3;
      break;
    case GST_VIDEO_ORIENTATION_UR_LL:
      start = (gssize) (h - 1) * s + (w - 1) * 3, dx = -s, dy = -3;
      break;
    default:
      start = 0, dx = 3, dy = s;
      break;
  }
  if (chain->oriented_size < size) {
    g_free (chain->oriented);
    chain->oriented = g_try_malloc0 (size);
    chain->oriented_size = chain->oriented ? size : 0;
    if (chain->oriented == NULL)
      return FALSE;
  }
  for (y = shown->y0; y < shown->y1; y++) {
    const guint8 *src = chain->rgb + start + (gssize) y * dy +
        (gssize) shown->x0 * dx;
    guint8 *d = chain->oriented + (gsize) y * stride + 3 * shown->x0;

    for (x = shown->x0; x < shown->x1; x++, src += dx, d += 3) {
      d[0] = src[0];
      d[1] = src[1];
      d[2] = src[2];
    }
  }
  return TRUE;
}

static GstFlowReturn
sink_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  GstSpdlVideoChain *chain = GST_PAD_ELEMENT_PRIVATE (pad);
  GstClockTime pts = GST_BUFFER_PTS (buffer);
  gint f = frame_of (chain, pts);
  GstVideoFrame in;
  GstSpdlVideoRegion region, shown;
  guint w, h, shown_w, shown_h, stored_w, stored_h;

  __atomic_fetch_add (&chain->frames_decoded, 1, __ATOMIC_RELAXED);
  /* frames that share a timestamp come out one after the other, in the
   * order they are shown (FFmpeg's order too): the n-th is frame f + n */
  if (f >= 0 && pts == chain->last_out_pts) {
    chain->repeats++;
    if (f + chain->repeats < chain->n_frames &&
        chain->raw_pts[f + chain->repeats] == pts)
      f += chain->repeats;
    else
      f = -1;
  } else {
    chain->repeats = 0;
  }
  chain->last_out_pts = pts;
  if (f < 0 || chain->want == NULL || chain->want[f] != 1 ||
      !chain->have_dec_info) {
    gst_buffer_unref (buffer);
    return GST_FLOW_OK;
  }
  w = GST_VIDEO_INFO_WIDTH (&chain->dec_info);
  h = GST_VIDEO_INFO_HEIGHT (&chain->dec_info);
  /* the clips are planned and their tensors sized on the container's
   * size: a frame of another (a keyframe of a new size, a container that
   * states a wrong one) was delivered as zeros, silently */
  stored_w = orientation_swaps (chain->orientation) ? chain->height :
      chain->width;
  stored_h = orientation_swaps (chain->orientation) ? chain->width :
      chain->height;
  if (stored_w && (w != stored_w || h != stored_h)) {
    if (chain->frame_error == NULL)
      gst_spdl_decode_fail (&chain->frame_error,
          GST_SPDL_DECODE_ERROR_UNSUPPORTED, "its frame at %.3f s is %ux%u, "
          "the container states %ux%u", chain->pts[f], w, h,
          stored_w, stored_h);
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }
  if (!ensure_converter (chain, &chain->dec_info) ||
      !gst_video_frame_map (&in, &chain->dec_info, buffer, GST_MAP_READ)) {
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }
  /* the caller's region is of the frame as shown */
  shown_w = orientation_swaps (chain->orientation) ? h : w;
  shown_h = orientation_swaps (chain->orientation) ? w : h;
  shown.x0 = shown.y0 = 0;
  shown.x1 = shown_w;
  shown.y1 = shown_h;
  if (chain->region_func) {
    chain->region_func (f, shown_w, shown_h, &shown, chain->user_data);
    shown.x1 = MIN (shown.x1, shown_w);
    shown.y1 = MIN (shown.y1, shown_h);
  }
  region = shown;
  if (chain->orientation != GST_VIDEO_ORIENTATION_IDENTITY)
    stored_region (chain->orientation, w, h, &shown, &region);
  if (region.x0 < region.x1 && region.y0 < region.y1) {
    if (chain->direct)
      convert_direct (chain, &in, &region);
    else
      convert_wide (chain, &in, &region);
  }
  gst_video_frame_unmap (&in);
  gst_buffer_unref (buffer);
  chain->want[f] = 2;
  chain->remaining--;
  if (chain->orientation != GST_VIDEO_ORIENTATION_IDENTITY) {
    gsize stride = GST_ROUND_UP_4 (shown_w * 3);

    if (!orient (chain, w, h, stride, shown_h, &shown))
      return GST_FLOW_ERROR;
    chain->func (f, chain->oriented, stride, shown_w, shown_h,
        chain->user_data);
  } else {
    chain->func (f, chain->rgb, chain->rgb_stride, w, h, chain->user_data);
  }
  return GST_FLOW_OK;
}

/* The colorimetry the stream states, as FFmpeg reads it, in place of
 * what gst_video_info_from_caps makes of the decoder's caps: it fills
 * in GStreamer's defaults by frame size (BT.709 from 1280x720 up), and
 * drops a partly known colorimetry whole ("1:0:0:0", a full-range H.264
 * stream with no matrix in its VUI: converted as limited BT.601). The
 * decoders' caps state what the bitstream says (the VUI's
 * video_full_range_flag and matrix_coefficients, through h264parse and
 * FFmpeg's context; a JPEG decoder's full range); what it leaves unknown
 * is FFmpeg's (swscale's) default: the BT.601 matrix, limited range. */
static void
set_stream_colorimetry (GstVideoInfo * info, const GstCaps * caps)
{
  GstVideoColorimetry *c = &GST_VIDEO_INFO_COLORIMETRY (info);
  const gchar *stated = gst_structure_get_string (gst_caps_get_structure
      (caps, 0), "colorimetry");
  GstVideoColorimetry from_stream = { 0, };

  if (!GST_VIDEO_INFO_IS_YUV (info))
    return;
  if (stated == NULL ||
      !gst_video_colorimetry_from_string (&from_stream, stated))
    memset (&from_stream, 0, sizeof (from_stream));
  c->range = from_stream.range != GST_VIDEO_COLOR_RANGE_UNKNOWN ?
      from_stream.range : GST_VIDEO_COLOR_RANGE_16_235;
  c->matrix = from_stream.matrix != GST_VIDEO_COLOR_MATRIX_UNKNOWN &&
      from_stream.matrix != GST_VIDEO_COLOR_MATRIX_RGB ?
      from_stream.matrix : GST_VIDEO_COLOR_MATRIX_BT601;
  /* no effect on RGB values (no gamma or primaries conversion), but the
   * converter must know them */
  c->transfer = from_stream.transfer != GST_VIDEO_TRANSFER_UNKNOWN ?
      from_stream.transfer : GST_VIDEO_TRANSFER_BT601;
  c->primaries = from_stream.primaries != GST_VIDEO_COLOR_PRIMARIES_UNKNOWN ?
      from_stream.primaries : GST_VIDEO_COLOR_PRIMARIES_SMPTE170M;
}

static gboolean
sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstSpdlVideoChain *chain = GST_PAD_ELEMENT_PRIVATE (pad);

  if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps (event, &caps);
    GST_DEBUG ("decoder output %" GST_PTR_FORMAT, caps);
    chain->have_dec_info = gst_video_info_from_caps (&chain->dec_info, caps);
    if (chain->have_dec_info)
      set_stream_colorimetry (&chain->dec_info, caps);
  } else if (GST_EVENT_TYPE (event) == GST_EVENT_SEGMENT) {
    /* GstVideoDecoder forgets the QoS earliest time as it sends a
     * segment (with its first output after a flush) */
    chain->qos_earliest = GST_CLOCK_TIME_NONE;
  }
  gst_event_unref (event);
  return TRUE;
}

static gboolean
sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS) {
    /* the decoder's own format: converted only if the frame is kept */
    GstCaps *caps = gst_caps_new_empty_simple ("video/x-raw"), *filter;

    gst_query_parse_caps (query, &filter);
    if (filter) {
      GstCaps *tmp = gst_caps_intersect (filter, caps);
      gst_caps_unref (caps);
      caps = tmp;
    }
    gst_query_set_caps_result (query, caps);
    gst_caps_unref (caps);
    return TRUE;
  }
  if (GST_QUERY_TYPE (query) == GST_QUERY_ACCEPT_CAPS) {
    gst_query_set_accept_caps_result (query, TRUE);
    return TRUE;
  }
  return FALSE;
}

static void
free_decoder (GstSpdlVideoChain * chain)
{
  if (chain->dec_pipe) {
    gst_element_set_state (chain->dec_pipe, GST_STATE_NULL);
    gst_clear_object (&chain->dec_pipe);
  }
  chain->decoder = NULL;
  if (chain->srcpad) {
    gst_pad_set_active (chain->srcpad, FALSE);
    gst_clear_object (&chain->srcpad);
  }
  if (chain->sinkpad) {
    gst_pad_set_active (chain->sinkpad, FALSE);
    gst_clear_object (&chain->sinkpad);
  }
  chain->have_dec_info = FALSE;
  g_clear_error (&chain->frame_error);
  chain->qos_earliest = GST_CLOCK_TIME_NONE;
}

static void
set_uint_if_exists (GstElement * element, const gchar * name, guint value)
{
  GParamSpec *spec = g_object_class_find_property (G_OBJECT_GET_CLASS
      (element), name);

  if (spec && G_PARAM_SPEC_VALUE_TYPE (spec) == G_TYPE_INT)
    g_object_set (element, name, (gint) value, NULL);
  else if (spec && G_PARAM_SPEC_VALUE_TYPE (spec) == G_TYPE_UINT)
    g_object_set (element, name, value, NULL);
}

/* Decoders whose sink template takes all of @caps first, then those
 * that take some of them, each by rank: vp8alphadecodebin ranks above
 * vp8dec and lists video/x-vp8, but only with codec-alpha=true. */
static gint
compare_decoders (gconstpointer a, gconstpointer b, gpointer caps)
{
  gboolean all_a = gst_element_factory_can_sink_all_caps ((gpointer) a, caps);
  gboolean all_b = gst_element_factory_can_sink_all_caps ((gpointer) b, caps);

  if (all_a != all_b)
    return all_a ? -1 : 1;
  return gst_plugin_feature_rank_compare_func (a, b);
}

/* Whether gst-libav's decoder of @caps can only give frames of a format
 * GStreamer has: H.264 and HEVC whose parser states 8, 10 or 12 bits
 * (4:2:0, 4:2:2, 4:4:4; monochrome at 8). gst-libav's direct rendering
 * (gst_ffmpegviddec_ensure_internal_pool, 1.22) makes its buffer pool
 * from any format FFmpeg's decoder picks, unchecked: one GStreamer lacks
 * (FFV1 at 9 or 14 bits, a damaged MJPEG frame read as 16 bits) is a
 * NULL format info dereferenced, the process killed by SIGSEGV. Without
 * direct rendering the decoder refuses such a format (not-negotiated),
 * at the cost of a copy per frame (avdec_h264 on 720p: about 5% more
 * CPU, which is why H.264 and HEVC of known formats keep it). */
static gboolean
decoder_formats_known (const GstCaps * caps)
{
  const GstStructure *s = gst_caps_get_structure (caps, 0);
  const gchar *chroma = gst_structure_get_string (s, "chroma-format");
  guint luma = 0, chroma_depth = 0;

  if (!gst_structure_has_name (s, "video/x-h264") &&
      !gst_structure_has_name (s, "video/x-h265"))
    return FALSE;
  if (chroma == NULL ||
      !gst_structure_get_uint (s, "bit-depth-luma", &luma) ||
      !gst_structure_get_uint (s, "bit-depth-chroma", &chroma_depth) ||
      luma != chroma_depth)
    return FALSE;
  if (g_str_equal (chroma, "4:0:0"))
    return luma == 8;
  return (luma == 8 || luma == 10 || luma == 12) &&
      (g_str_equal (chroma, "4:2:0") || g_str_equal (chroma, "4:2:2") ||
      g_str_equal (chroma, "4:4:4"));
}

/* The first decoder for @caps that accepts them, between our two pads. */
static gboolean
build_decoder (GstSpdlVideoChain * chain, GstCaps * caps, GError ** error)
{
  GList *factories, *usable, *l;
  GstPad *dec_sink, *dec_src;

  factories = gst_element_factory_list_get_elements
      (GST_ELEMENT_FACTORY_TYPE_DECODER | GST_ELEMENT_FACTORY_TYPE_MEDIA_VIDEO,
      GST_RANK_MARGINAL);
  usable = gst_element_factory_list_filter (factories, caps, GST_PAD_SINK,
      FALSE);
  usable = g_list_sort_with_data (usable, compare_decoders, caps);
  for (l = usable; l && !chain->decoder; l = l->next) {
    chain->decoder = gst_element_factory_create (l->data, NULL);
    if (chain->decoder == NULL)
      continue;
    gst_object_ref_sink (chain->decoder);
    dec_sink = gst_element_get_static_pad (chain->decoder, "sink");
    if (dec_sink == NULL || !gst_pad_query_accept_caps (dec_sink, caps)) {
      GST_DEBUG ("%s does not accept %" GST_PTR_FORMAT,
          GST_OBJECT_NAME (l->data), caps);
      gst_clear_object (&chain->decoder);
    }
    gst_clear_object (&dec_sink);
  }
  gst_plugin_feature_list_free (usable);
  gst_plugin_feature_list_free (factories);
  if (chain->decoder == NULL) {
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "no GStreamer decoder for %s",
        gst_structure_get_name (gst_caps_get_structure (caps, 0)));
  }
  /* one thread each: the element runs a chain per core */
  set_uint_if_exists (chain->decoder, "max-threads", 1);
  set_uint_if_exists (chain->decoder, "threads", 1);
  /* a damaged frame is missing, not concealed: its clip is dropped */
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (chain->decoder),
          "output-corrupt"))
    g_object_set (chain->decoder, "output-corrupt", FALSE, NULL);
  chain->dec_pipe = gst_pipeline_new (NULL);
  gst_bin_add (GST_BIN (chain->dec_pipe), chain->decoder);
  gst_object_unref (chain->decoder);   /* the pipeline's now */
  chain->srcpad = gst_pad_new ("src", GST_PAD_SRC);
  chain->sinkpad = gst_pad_new ("sink", GST_PAD_SINK);
  GST_PAD_ELEMENT_PRIVATE (chain->sinkpad) = chain;
  gst_pad_set_chain_function (chain->sinkpad, sink_chain);
  gst_pad_set_event_function (chain->sinkpad, sink_event);
  gst_pad_set_query_function (chain->sinkpad, sink_query);
  gst_pad_set_active (chain->srcpad, TRUE);
  gst_pad_set_active (chain->sinkpad, TRUE);
  dec_sink = gst_element_get_static_pad (chain->decoder, "sink");
  dec_src = gst_element_get_static_pad (chain->decoder, "src");
  gst_pad_link (chain->srcpad, dec_sink);
  gst_pad_link (dec_src, chain->sinkpad);
  gst_object_unref (dec_sink);
  gst_object_unref (dec_src);
  chain->decoder_builds++;
  if (gst_element_set_state (chain->dec_pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    free_decoder (chain);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "the decoder could not start");
  }
  return TRUE;
}

/* A decoder that takes @caps, fresh for a new stream. */
static gboolean
ensure_decoder (GstSpdlVideoChain * chain, GstCaps * caps, GError ** error)
{
  gchar *stream_id;
  GstSegment segment;

  if (chain->decoder && (!chain->limits.reuse ||
          !gst_pad_peer_query_accept_caps (chain->srcpad, caps)))
    free_decoder (chain);
  if (chain->decoder == NULL && !build_decoder (chain, caps, error))
    return FALSE;
  /* per stream: a reused decoder may have had a stream it could render
   * into its own buffers */
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (chain->decoder),
          "direct-rendering"))
    g_object_set (chain->decoder, "direct-rendering",
        decoder_formats_known (caps), NULL);
  stream_id = g_strdup_printf ("spdlvideo/%u", chain->stream_counter++);
  gst_pad_push_event (chain->srcpad, gst_event_new_stream_start (stream_id));
  g_free (stream_id);
  if (!gst_pad_push_event (chain->srcpad, gst_event_new_caps (caps))) {
    free_decoder (chain);
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "the decoder refused the stream");
  }
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_pad_push_event (chain->srcpad, gst_event_new_segment (&segment));
  return TRUE;
}

/* The packet decoding starts at for a frame whose packets end at @p and
 * whose timestamp is @pts: the keyframe before it in decode order that
 * is not shown after it (a leading picture of an open GOP, shown before
 * its keyframe, goes to the keyframe before), or one keyframe before that
 * when it is a recovery point (see mark_recovery_points). -1 when the
 * frame cannot be decoded exactly: a recovery point with no keyframe
 * before it (a cut of an open-GOP stream starts there). */
static gint
start_packet (GstSpdlVideoChain * chain, guint p, GstClockTime pts)
{
  guint k = p;
  Packet *pk;

  while (k > 0) {
    pk = &g_array_index (chain->packets, Packet, k);
    if (pk->key && GST_BUFFER_PTS (pk->buffer) <= pts)
      break;
    k--;
  }
  pk = &g_array_index (chain->packets, Packet, k);
  if (!pk->recovery)
    return k;
  while (k > 0) {
    k--;
    if (g_array_index (chain->packets, Packet, k).key)
      return k;
  }
  return -1;
}

/* The last packet in decode order that frame @f needs: its own, or that
 * of a frame sharing its timestamp (such frames are told apart by their
 * output order: all of them are decoded) */
static guint
last_packet (GstSpdlVideoChain * chain, guint f)
{
  guint p = chain->frame_packet[f], g;
  GstClockTime pts = chain->raw_pts[f];

  for (g = f; g > 0 && chain->raw_pts[g - 1] == pts; g--);
  for (; g < chain->n_frames && chain->raw_pts[g] == pts; g++)
    p = MAX (p, chain->frame_packet[g]);
  return p;
}

/* Marks in @feed the packets that make frame @f: from its start_packet
 * up to its own packet, its own and those of the frames sharing its time
 * 2, the others 1. Returns how many were newly marked, or -1 (nothing
 * marked) when the frame cannot be decoded exactly. */
static gint
mark_packets (GstSpdlVideoChain * chain, guint f, guint8 * feed)
{
  guint p = last_packet (chain, f), marked = 0, g;
  GstClockTime pts = chain->raw_pts[f];
  gint k = start_packet (chain, p, pts);

  if (k < 0)
    return -1;
  for (; k <= (gint) p; k++)
    if (!feed[k]) {
      feed[k] = 1;
      marked++;
    }
  for (g = f; g > 0 && chain->raw_pts[g - 1] == pts; g--);
  for (; g < chain->n_frames && chain->raw_pts[g] == pts; g++)
    feed[chain->frame_packet[g]] = 2;
  return marked;
}

/* The packets decoded to make frame @f alone: G_MAXUINT when it cannot
 * be decoded exactly */
static guint
frame_decode_cost (GstSpdlVideoChain * chain, guint f)
{
  guint p = last_packet (chain, f);
  gint k = start_packet (chain, p, chain->raw_pts[f]);

  return k < 0 ? G_MAXUINT : p - k + 1;
}

guint
gst_spdl_video_chain_count_decode (GstSpdlVideoChain * chain,
    const guint * frames, guint n)
{
  guint8 *feed = g_new0 (guint8, MAX (chain->packets->len, 1));
  guint i, total = 0;

  for (i = 0; i < n; i++) {
    gint marked;

    g_return_val_if_fail (frames[i] < chain->n_frames, G_MAXUINT);
    marked = mark_packets (chain, frames[i], feed);
    if (marked < 0) {
      total = G_MAXUINT;
      break;
    }
    total += marked;
  }
  g_free (feed);
  return total;
}

/* Non-reference frames no clip shows need not be decoded: most B-frames
 * before a clip's first frame, between clips sharing a pass and between
 * a clip's frames with stride > 1. gst-libav's decoders decode a packet
 * with FFmpeg's skip_frame = AVDISCARD_NONREF when the frame sent before
 * it was late by QoS (the check runs after that frame's packet went to
 * FFmpeg): its running time (here its pts) at or before the earliest time
 * of the last QoS event. With the decoder's qos property off, GstVideoDecoder
 * still takes the earliest time but drops no output as late. Only codecs
 * whose non-reference frames no frame refers to: H.264 (nal_ref_idc 0),
 * MPEG-1, -2 and -4 part 2 (B-frames); not HEVC, whose sub-layer
 * non-reference pictures higher sub-layers may refer to. Other decoders
 * are sent no QoS event. */
static gboolean
decoder_skips_nonref (GstSpdlVideoChain * chain)
{
  GstElementFactory *factory = gst_element_get_factory (chain->decoder);
  const GstStructure *s = gst_caps_get_structure (chain->caps, 0);

  return factory && g_str_has_prefix (GST_OBJECT_NAME (factory), "avdec_") &&
      g_object_class_find_property (G_OBJECT_GET_CLASS (chain->decoder),
      "qos") && (gst_structure_has_name (s, "video/x-h264") ||
      gst_structure_has_name (s, "video/mpeg"));
}

static void
set_qos_earliest (GstSpdlVideoChain * chain, GstClockTime earliest)
{
  if (earliest == chain->qos_earliest)
    return;
  chain->qos_earliest = earliest;
  /* diff 0: the earliest time is the timestamp (none: no QoS) */
  gst_pad_push_event (chain->sinkpad,
      gst_event_new_qos (GST_QOS_TYPE_UNDERFLOW, 1.0, 0, earliest));
}

/* Before packet @i goes to the decoder: FFmpeg may skip the next packet
 * fed if it is unreferenced when no frame it makes is wanted (feed 1) and
 * it is not a keyframe; then every frame is late (packet @i's included),
 * otherwise none. */
static void
update_skipping (GstSpdlVideoChain * chain, const guint8 * feed, guint i)
{
  guint n_packets = chain->packets->len, j;

  for (j = i + 1; j < n_packets && !feed[j]; j++);
  if (j < n_packets && feed[j] == 1 &&
      !g_array_index (chain->packets, Packet, j).key)
    set_qos_earliest (chain, G_MAXINT64);
  else
    set_qos_earliest (chain, GST_CLOCK_TIME_NONE);
}

static gboolean
decoder_failed (GstSpdlVideoChain * chain, GstFlowReturn ret, GError ** error)
{
  GstBus *bus = gst_element_get_bus (chain->dec_pipe);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);

  gst_object_unref (bus);
  if (chain->frame_error) {
    g_propagate_error (error, chain->frame_error);
    chain->frame_error = NULL;
  } else if (msg) {
    gst_spdl_media_fail_from_message (msg, error, "could not decode");
    gst_message_unref (msg);
  } else if (ret == GST_FLOW_NOT_NEGOTIATED) {
    /* our pad takes any raw video: the decoder's frames are of a pixel
     * format GStreamer has none of (see decoder_formats_known) */
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "the decoder gives frames of a pixel format GStreamer does not "
        "have (not-negotiated)");
  } else {
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_CORRUPT,
        "the decoder failed (%s)", gst_flow_get_name (ret));
  }
  /* an element in error is not trusted again */
  free_decoder (chain);
  return FALSE;
}

gboolean
gst_spdl_video_chain_decode (GstSpdlVideoChain * chain, const guint * wanted,
    guint n_wanted, GstSpdlVideoRegionFunc region_func,
    GstSpdlVideoFrameFunc func, gpointer user_data, GError ** error)
{
  guint n_packets = chain->packets->len, i, to_feed = 0;
  guint8 *feed;
  gint64 deadline;
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean ok = TRUE, discont = TRUE;
  GstBus *bus;

  if (chain->n_frames == 0)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_NO_VIDEO,
        "no video is open");
  memset (chain->want, 0, chain->n_frames);
  chain->remaining = 0;
  chain->last_out_pts = GST_CLOCK_TIME_NONE;
  chain->repeats = 0;
  feed = g_new0 (guint8, n_packets);
  for (i = 0; i < n_wanted; i++) {
    gint marked;

    g_return_val_if_fail (wanted[i] < chain->n_frames, FALSE);
    if (chain->want[wanted[i]])
      continue;
    /* left out (the caller finds them missing): frames with no exact
     * start, and those further from it than max-decode-frames (the
     * caller checks its clips with count_decode first) */
    if (chain->limits.max_decode_frames &&
        frame_decode_cost (chain, wanted[i]) >
        chain->limits.max_decode_frames) {
      GST_DEBUG ("frame %u: no exact decoding start within "
          "max-decode-frames", wanted[i]);
      continue;
    }
    marked = mark_packets (chain, wanted[i], feed);
    if (marked < 0)
      continue;
    chain->want[wanted[i]] = 1;
    chain->remaining++;
    to_feed += marked;
  }
  GST_DEBUG ("%u frames wanted, %u packets to decode", chain->remaining,
      to_feed);
  if (!ensure_decoder (chain, chain->caps, error)) {
    g_free (feed);
    return FALSE;
  }
  bus = gst_element_get_bus (chain->dec_pipe);
  gst_bus_set_flushing (bus, TRUE);     /* drop earlier videos' messages */
  gst_bus_set_flushing (bus, FALSE);
  gst_object_unref (bus);
  chain->region_func = region_func;
  chain->skip_nonref = decoder_skips_nonref (chain);
  /* no FFmpeg skip mode left from the last call; no output dropped;
   * strict compliance (gst-libav's own choice outside live pipelines):
   * without the SPS's bitstream restriction FFmpeg then takes the
   * reorder depth from the level, not from the frames it has seen, which
   * the skipped ones would leave without B-frames */
  if (chain->skip_nonref)
    g_object_set (chain->decoder, "skip-frame", 0, "qos", FALSE,
        "std-compliance", 1 /* strict */ , NULL);
  chain->func = func;
  chain->user_data = user_data;
  deadline = g_get_monotonic_time () + chain->limits.timeout / GST_USECOND;
  for (i = 0; i < n_packets && chain->remaining > 0; i++) {
    GstBuffer *buf;

    if (!feed[i]) {
      discont = TRUE;
      continue;
    }
    buf = gst_buffer_ref (g_array_index (chain->packets, Packet, i).buffer);
    if (discont) {
      /* a jump to a keyframe: the decoder starts afresh there */
      buf = gst_buffer_make_writable (buf);
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
      discont = FALSE;
    }
    if (chain->skip_nonref)
      update_skipping (chain, feed, i);
    ret = gst_pad_push (chain->srcpad, buf);
    if (ret != GST_FLOW_OK) {
      ok = decoder_failed (chain, ret, error);
      break;
    }
    if (g_get_monotonic_time () > deadline) {
      ok = gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TIMEOUT,
          "decoding took more than %" G_GUINT64_FORMAT " s",
          chain->limits.timeout / GST_SECOND);
      free_decoder (chain);
      break;
    }
  }
  g_free (feed);
  if (ok && chain->remaining > 0)       /* frames still in the decoder */
    gst_pad_push_event (chain->srcpad, gst_event_new_eos ());
  if (chain->decoder) {
    /* ready for the next call: nothing left inside, EOS cleared, no QoS */
    gst_pad_push_event (chain->srcpad, gst_event_new_flush_start ());
    gst_pad_push_event (chain->srcpad, gst_event_new_flush_stop (TRUE));
    set_qos_earliest (chain, GST_CLOCK_TIME_NONE);
    if (!chain->limits.reuse)
      free_decoder (chain);
  }
  chain->region_func = NULL;
  chain->func = NULL;
  chain->user_data = NULL;
  return ok;
}

void
gst_spdl_video_chain_free (GstSpdlVideoChain * chain)
{
  if (chain == NULL)
    return;
  gst_spdl_video_chain_close (chain);
  free_demuxer (chain);
  free_decoder (chain);
  g_clear_pointer (&chain->conv, gst_video_converter_free);
  g_free (chain->rgb);
  g_free (chain->oriented);
  g_free (chain->wide);
  g_free (chain->yuv_scratch);
  g_array_free (chain->packets, TRUE);
  g_mutex_clear (&chain->pads_lock);
  g_free (chain);
}
