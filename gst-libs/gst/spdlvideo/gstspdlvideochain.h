/* GStreamer SPDL: a video's frames, demuxed and decoded by GStreamer
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_VIDEO_CHAIN_H__
#define __GST_SPDL_VIDEO_CHAIN_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* One decoding thread's demuxer and decoder, reused from video to video.
 * A video held in memory is demuxed once (parsebin: qtdemux,
 * matroskademux, ... and the stream's parser), its video packets kept;
 * the frames' presentation times are then known before any is decoded,
 * so clips are chosen by time. Decoding feeds the decoder (the
 * highest-ranked GStreamer decoder for the stream's caps) the packets
 * from the keyframe before each wanted frame up to it, and converts to
 * RGB only the frames asked for. Not thread-safe: one thread uses it. */
typedef struct _GstSpdlVideoChain GstSpdlVideoChain;

typedef struct
{
  guint64 max_pixels;           /* of a frame, as the stream declares it */
  guint max_frames;             /* packets of one video */
  guint max_decode_frames;      /* packets decoded for one frame from its
                                 * keyframe (G_MAXUINT: no limit); see
                                 * count_decode for a clip's */
  GstClockTime timeout;         /* of one demux or decode call */
  gboolean reuse;               /* FALSE: new pipelines for every video */
  gboolean autorotate;          /* frames as shown: the container's
                                 * orientation (display matrix) applied */
} GstSpdlVideoLimits;

void gst_spdl_video_limits_init (GstSpdlVideoLimits * limits);

GstSpdlVideoChain *gst_spdl_video_chain_new (const GstSpdlVideoLimits *
    limits);
void gst_spdl_video_chain_free (GstSpdlVideoChain * chain);

/* Demuxes the video in @data (kept alive by the chain until the next
 * open or close). Errors are GST_SPDL_DECODE_ERROR. */
gboolean gst_spdl_video_chain_open (GstSpdlVideoChain * chain,
    GBytes * data, GError ** error);
/* Drops the video's packets. */
void gst_spdl_video_chain_close (GstSpdlVideoChain * chain);

/* The open video's frames' presentation times, in seconds, ascending
 * (stream time, as FFmpeg reports pts_time). */
const gdouble *gst_spdl_video_chain_get_pts (GstSpdlVideoChain * chain,
    guint * n_frames);
/* When its last frame ends (0 if unknown) */
gdouble gst_spdl_video_chain_get_end (GstSpdlVideoChain * chain);
/* What the presentation times add to the demuxer's timeline, in seconds:
 * an MPEG-TS program's first PCR (see index_frames), else 0. Another
 * chain on the same file (the audio chain) is in the demuxer's. */
gdouble gst_spdl_video_chain_get_time_offset (GstSpdlVideoChain * chain);
/* The frames' size as they are delivered: as shown, width and height
 * swapped for a video shown turned by 90 degrees (autorotate) */
void gst_spdl_video_chain_get_size (GstSpdlVideoChain * chain,
    guint * width, guint * height);

/* A decoded frame in packed RGB, @stride bytes a row, with 16 readable
 * bytes after its last row; only its region (see below) is this frame's,
 * the other bytes are stale. */
typedef void (*GstSpdlVideoFrameFunc) (guint frame, const guint8 * rgb,
    gsize stride, guint width, guint height, gpointer user_data);

/* Pixels [x0, x1) x [y0, y1) of a frame */
typedef struct
{
  guint x0, x1, y0, y1;
} GstSpdlVideoRegion;

/* Which pixels of frame @frame (@width x @height) the frame function
 * will read: @region starts as the whole frame; an empty one: none. */
typedef void (*GstSpdlVideoRegionFunc) (guint frame, guint width,
    guint height, GstSpdlVideoRegion * region, gpointer user_data);

/* Decodes the frames @wanted (@n_wanted indices into the pts list, any
 * order, repeats allowed) and calls @func once for each distinct frame
 * as it is decoded, converted to RGB in the region @region_func says
 * (NULL: the whole frame). Frames the decoder could not give are left
 * out: the caller compares with what it asked for. FALSE on a decoder
 * error or timeout. */
gboolean gst_spdl_video_chain_decode (GstSpdlVideoChain * chain,
    const guint * wanted, guint n_wanted, GstSpdlVideoRegionFunc region_func,
    GstSpdlVideoFrameFunc func, gpointer user_data, GError ** error);

/* How many packets decoding the frames @frames (@n indices into the pts
 * list: one clip's) takes, from their keyframes, those they share
 * counted once; G_MAXUINT when one of them cannot be decoded exactly (an
 * open GOP's frames before its first recovery point, with no keyframe
 * before). What max-decode-frames bounds, clip by clip. */
guint gst_spdl_video_chain_count_decode (GstSpdlVideoChain * chain,
    const guint * frames, guint n);

/* Pipelines built since the chain was made (demuxer, decoder): for
 * measuring what reuse saves. */
void gst_spdl_video_chain_get_builds (GstSpdlVideoChain * chain,
    guint * demuxers, guint * decoders);
/* Frames its decoders gave since the chain was made, those dropped as
 * before a clip included: what skipping unreferenced frames saves. */
guint64 gst_spdl_video_chain_get_frames_decoded (GstSpdlVideoChain * chain);

G_END_DECLS

#endif /* __GST_SPDL_VIDEO_CHAIN_H__ */
