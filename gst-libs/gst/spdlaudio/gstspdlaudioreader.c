/* GStreamer SPDL: audio files decoded by their codec's library
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

#include "gstspdlaudioreader.h"

typedef GstSpdlAudioReader *(*OpenFunc) (GBytes * data, GError ** error);

/* each opener looks at the first bytes and returns NULL at once when the
 * file is not its format */
static const OpenFunc openers[] = {
  gst_spdl_wav_reader_open,
  gst_spdl_flac_reader_open,
  gst_spdl_opus_reader_open,
  gst_spdl_vorbis_reader_open,
  gst_spdl_mp3_reader_open,
};

GstSpdlAudioReader *
gst_spdl_audio_reader_open (GBytes * data, GError ** error)
{
  GError *err = NULL;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (openers); i++) {
    GstSpdlAudioReader *reader = openers[i] (data, &err);
    if (reader) {
      reader->exact = TRUE;
      return reader;
    }
    if (err) {
      g_propagate_error (error, err);
      return NULL;
    }
  }
  return NULL;
}

gboolean
gst_spdl_audio_reader_read (GstSpdlAudioReader * reader, guint64 first,
    GstSpdlAudioFramesFunc func, gpointer user_data, GError ** error)
{
  return reader->funcs->read (reader, first, func, user_data, error);
}

const gchar *
gst_spdl_audio_reader_get_name (GstSpdlAudioReader * reader)
{
  return reader->funcs->name;
}

void
gst_spdl_audio_reader_free (GstSpdlAudioReader * reader)
{
  if (reader) {
    g_free (reader->damage);
    reader->funcs->free (reader);
  }
}
