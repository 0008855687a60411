/* GStreamer SPDL: the format a file's first bytes name
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_FORMAT_H__
#define __GST_SPDL_FORMAT_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  GST_SPDL_IMAGE_FORMAT_UNKNOWN,
  GST_SPDL_IMAGE_FORMAT_JPEG,
  GST_SPDL_IMAGE_FORMAT_PNG,
  GST_SPDL_IMAGE_FORMAT_WEBP,
  GST_SPDL_IMAGE_FORMAT_GIF,
  GST_SPDL_IMAGE_FORMAT_BMP,
  GST_SPDL_IMAGE_FORMAT_TIFF,
  /* recognized, not decoded: skipped as unsupported-format */
  GST_SPDL_IMAGE_FORMAT_PNM,
  GST_SPDL_IMAGE_FORMAT_JPEG2000,
  GST_SPDL_IMAGE_FORMAT_ICO,
  GST_SPDL_IMAGE_FORMAT_TGA,    /* no signature: PIL's header checks */
} GstSpdlImageFormat;

/* From the first bytes, never the file's name. */
GstSpdlImageFormat gst_spdl_image_format_sniff (const guint8 * data,
    gsize size);
const gchar *gst_spdl_image_format_name (GstSpdlImageFormat format);

/* The samples per channel of an MPEG audio file (MP3, MP2) of constant
 * format without a Xing, Info or VBRI header, counted from its frame
 * headers, not decoded: an ID3v2 tag first, whole frames to the end (a
 * last frame cut short not counted), then at most an ID3v1 or APE tag.
 * FALSE for anything else (free-format bitrates, a change of rate,
 * layer or version, bytes that are not a frame). */
gboolean gst_spdl_mpeg_audio_count_samples (const guint8 * data, gsize size,
    guint * rate, guint64 * n_samples);

/* The size in bytes of the MPEG audio frame whose 4-byte header is at @p
 * and its samples per channel; 0 if @p is not a frame header. */
guint gst_spdl_mpeg_audio_frame_size (const guint8 * p, guint * samples);

/* What a layer 3 file's first frame says about the others when it is a
 * Xing, Info or VBRI frame (no audio), read as FFmpeg's mp3 demuxer reads
 * it: the frame count after it (0: not said) and, from a LAME tag (its
 * version "LAME", "Lavf" or "Lavc"), the encoder's delay and padding. */
typedef struct
{
  gboolean present;
  guint64 frames;
  guint64 bytes;                /* Xing's byte count, 0 if not given */
  gboolean lame;
  guint delay, padding;
} GstSpdlMpegAudioTag;

/* As gst_spdl_mpeg_audio_count_samples(), and where those frames lie: the
 * @length bytes from @offset, tags and a last frame cut short left out;
 * @channels from the first frame's mode. FALSE where the bytes after the
 * frames are not a tag or a last frame cut short; @offset and @length
 * then say the frames before them. With @tag, a file whose first
 * frame is a Xing, Info or VBRI frame is taken too: @tag says what it
 * says, and the frames (@n_samples, @offset) are those after it; a frame
 * that only looks like one (the name elsewhere, no count) is not. */
gboolean gst_spdl_mpeg_audio_find_frames (const guint8 * data, gsize size,
    guint * rate, guint * channels, guint64 * n_samples, gsize * offset,
    gsize * length, GstSpdlMpegAudioTag * tag);

/* Whether @data starts with an EBML header (Matroska, WebM) that
 * GStreamer's matroskademux (1.22) refuses by posting its error through
 * an object that is not an element: a CRITICAL, and no error message (so
 * an abort where criticals are fatal). Refused: a DocType other than
 * "matroska" or "webm", a DocTypeReadVersion above 2. @reason (free with
 * g_free) says which. */
gboolean gst_spdl_ebml_header_refused (const guint8 * data, gsize size,
    gchar ** reason);

/* Whether @data is a chained Ogg file: a stream begins (a BOS page) after
 * a page that did not begin one, i.e. a second link follows the first.
 * Walks the page headers only; FALSE where the bytes stop being pages. */
gboolean gst_spdl_ogg_is_chained (const guint8 * data, gsize size);

/* Whether @data begins with an Ogg page whose first packet starts with
 * the @len bytes of @magic (a codec's identification header: "OpusHead",
 * "\x01vorbis"). */
gboolean gst_spdl_ogg_first_packet_is (const guint8 * data, gsize size,
    const gchar * magic, gsize len);

G_END_DECLS

#endif /* __GST_SPDL_FORMAT_H__ */
