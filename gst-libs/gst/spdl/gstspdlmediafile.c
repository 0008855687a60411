/* GStreamer SPDL: what the video and audio chains refuse
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlmediafile.h"
#include "gstspdlerrors.h"
#include "gstspdlformat.h"

#include <string.h>

gboolean
gst_spdl_media_file_check (GBytes * data, GError ** error)
{
  gchar *reason;

  if (g_bytes_get_size (data) == 0)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_EMPTY,
        "the file is empty");
  /* before matroskademux sees it */
  if (gst_spdl_ebml_header_refused (g_bytes_get_data (data, NULL),
          g_bytes_get_size (data), &reason)) {
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT,
        "not a Matroska file GStreamer reads: %s", reason);
    g_free (reason);
    return FALSE;
  }
  return TRUE;
}

/* Refused:
 * - gst-libav's demuxers (avdemux_*, rank marginal, for formats without a
 *   GStreamer demuxer): their reads answer 0 bytes, not end of file, at
 *   the end of the data, and some of FFmpeg's demuxers then ask again
 *   forever (avdemux_gif on any file starting with "GIF8", a real GIF
 *   included): a stall until the timeout for every such file. Without
 *   them a GIF is an image (image/gif exposed), skipped at once.
 * - adaptive streaming demuxers (HLS, DASH, Smooth Streaming): a
 *   playlist in a dataset would make the loader fetch its URIs.
 * - decoders of emulated chip music, gmedec (libgme: "Vgm ", NSF,
 *   SPC...) and siddec (libsidplay: C64 "PSID"): libgme 0.6.3 crashed on
 *   VGM files the audio chain's fuzzer mutated, libsidplay 1 while
 *   making its emulator for a PSID file (tests/fuzz/regressions-
 *   audiochain/gme-vgm-*, sid-psid-*), taking the training process with
 *   them; no speech or audio dataset is made of these. */
gboolean
gst_spdl_media_factory_refused (GstElementFactory * factory)
{
  const gchar *klass = gst_element_factory_get_metadata (factory,
      GST_ELEMENT_METADATA_KLASS);

  return g_str_has_prefix (GST_OBJECT_NAME (factory), "avdemux_") ||
      g_strcmp0 (GST_OBJECT_NAME (factory), "gmedec") == 0 ||
      g_strcmp0 (GST_OBJECT_NAME (factory), "siddec") == 0 ||
      (klass && strstr (klass, "Demuxer/Adaptive"));
}

/* decodebin's and parsebin's GstAutoplugSelectResult
 * (gst/playback/gstplay-enum.h, not installed) */
#define AUTOPLUG_SELECT_TRY 0
#define AUTOPLUG_SELECT_SKIP 2

gint
gst_spdl_media_autoplug_select (GstElement * bin, GstPad * pad,
    GstCaps * caps, GstElementFactory * factory, gpointer user_data)
{
  if (gst_spdl_media_factory_refused (factory)) {
    GST_DEBUG_OBJECT (bin, "not plugging %s for %" GST_PTR_FORMAT,
        GST_OBJECT_NAME (factory), caps);
    return AUTOPLUG_SELECT_SKIP;
  }
  return AUTOPLUG_SELECT_TRY;
}

gboolean
gst_spdl_media_fail_from_message (GstMessage * msg, GError ** error,
    const gchar * what)
{
  GError *err = NULL;
  gchar *debug = NULL;
  gint code = GST_SPDL_DECODE_ERROR_CORRUPT;

  gst_message_parse_error (msg, &err, &debug);
  if (err->domain == GST_STREAM_ERROR &&
      (err->code == GST_STREAM_ERROR_TYPE_NOT_FOUND ||
          err->code == GST_STREAM_ERROR_WRONG_TYPE))
    code = GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT;
  else if (err->domain == GST_STREAM_ERROR &&
      (err->code == GST_STREAM_ERROR_CODEC_NOT_FOUND ||
          err->code == GST_STREAM_ERROR_NOT_IMPLEMENTED))
    code = GST_SPDL_DECODE_ERROR_UNSUPPORTED;
  GST_DEBUG ("%s failed: %s (%s)", what, err->message, debug);
  gst_spdl_decode_fail (error, code, "%s: %s", what, err->message);
  g_error_free (err);
  g_free (debug);
  return FALSE;
}

gboolean
gst_spdl_media_replace_source (GstBin * pipe, GstElement ** src,
    GstElement * next, GError ** error)
{
  GstElement *fresh = gst_element_factory_make ("giostreamsrc", NULL);

  if (fresh == NULL)
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "giostreamsrc is missing (GStreamer's base plugins)");
  if (*src) {
    gst_element_set_state (*src, GST_STATE_NULL);
    gst_bin_remove (pipe, *src);
  }
  *src = fresh;
  gst_bin_add (pipe, fresh);
  if (!gst_element_link (fresh, next))
    return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "could not link giostreamsrc to %s", GST_OBJECT_NAME (next));
  return TRUE;
}
