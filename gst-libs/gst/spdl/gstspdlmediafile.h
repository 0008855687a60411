/* GStreamer SPDL: what the video and audio chains refuse
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_MEDIA_FILE_H__
#define __GST_SPDL_MEDIA_FILE_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* What the video and audio chains refuse before a file reaches a demuxer:
 * an empty file, a Matroska header gst_spdl_ebml_header_refused() refuses.
 * FALSE with @error (GST_SPDL_DECODE_ERROR) then. */
gboolean gst_spdl_media_file_check (GBytes * data, GError ** error);

/* Elements the chains' parsebin and decodebin may not plug for a dataset
 * file (see gstspdlformat.c), for their autoplug-select signal: TRUE for
 * a factory to skip. */
gboolean gst_spdl_media_factory_refused (GstElementFactory * factory);

/* A handler of parsebin's and decodebin's autoplug-select signal: skips
 * the factories gst_spdl_media_factory_refused() refuses, tries the rest */
gint gst_spdl_media_autoplug_select (GstElement * bin, GstPad * pad,
    GstCaps * caps, GstElementFactory * factory, gpointer user_data);

/* The error message @msg a demuxer or decoder posted as a skip reason
 * (GST_SPDL_DECODE_ERROR: unsupported-format, unsupported or corrupt),
 * "@what: message"; always FALSE. */
gboolean gst_spdl_media_fail_from_message (GstMessage * msg, GError ** error,
    const gchar * what);

/* A new giostreamsrc in @pipe for every file, linked to @next (the
 * parsebin or decodebin kept across files), replacing *@src: a reused
 * one keeps its read cache across streams and answers the next file's
 * first reads with the last file's bytes (see gstspdlvideochain.c). */
gboolean gst_spdl_media_replace_source (GstBin * pipe, GstElement ** src,
    GstElement * next, GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_MEDIA_FILE_H__ */
