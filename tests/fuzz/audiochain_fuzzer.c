/* gst-spdl fuzz target: the audio chain (container, decoder, resampler)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The bytes after the first are an audio file, opened and read as
 * spdlaudiodecode does it, with small limits so that no input takes
 * long. The first byte picks what is read:
 *
 *   bits 0-1: output rate (16, 8, 22.05, 44.1 kHz)
 *   bit 2: stereo output, else mono
 *   bits 3-6: where the span starts (k x 1/16 of the file, or of 1 s
 *             when its length is unknown)
 *   bit 7: the whole file (gst_spdl_audio_chain_read_all) instead
 *
 * Checked: a span reads at most what was asked for and writes nothing
 * after it in any channel's row; the whole file comes as its channels'
 * planes, within max-samples. One chain per output format,
 * reused from input to input as a decoding thread reuses it. */
#include <gst/gst.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlaudiochain.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

#define SPAN 4000               /* output samples */
#define GUARD 64
#define MAX_SAMPLES 48000

static const guint rates[] = { 16000, 8000, 22050, 44100 };

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  if (g_getenv ("GST_REGISTRY") == NULL) {
    gchar *path = g_strdup_printf ("%s.registry", (*argv)[0]);
    g_setenv ("GST_REGISTRY", path, TRUE);
    g_free (path);
  }
  gst_init (argc, argv);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static GstSpdlAudioChain *chains[8];
  GstSpdlAudioChain *chain;
  guint config, channels, c;
  GError *error = NULL;
  guint64 got = 0;
  GBytes *bytes;
  gsize stride = SPAN + GUARD, i;
  volatile gfloat sum = 0;

  if (size < 1)
    return 0;
  config = data[0] & 7;
  channels = config & 4 ? 2 : 1;
  if (chains[config] == NULL) {
    GstSpdlAudioLimits limits;

    gst_spdl_audio_limits_init (&limits);
    limits.rate = rates[config & 3];
    limits.channels = channels;
    limits.max_rate = 192000;
    limits.max_channels = 8;
    limits.max_samples = MAX_SAMPLES;
    limits.timeout = 2 * GST_SECOND;
    chains[config] = gst_spdl_audio_chain_new (&limits);
  }
  chain = chains[config];
  bytes = g_bytes_new_static (data + 1, size - 1);
  if (!gst_spdl_audio_chain_open (chain, bytes, &error))
    goto done;
  if (data[0] & 0x80) {
    guint64 n = 0;
    GstBuffer *buf = gst_spdl_audio_chain_read_all (chain, &n, &error);

    if (buf) {
      GstMapInfo map;

      g_assert_cmpuint (n, <=, MAX_SAMPLES);
      g_assert_cmpuint (gst_buffer_get_size (buf), ==,
          n * channels * sizeof (gfloat));
      /* under ASan and valgrind: every sample is there */
      gst_buffer_map (buf, &map, GST_MAP_READ);
      for (i = 0; i < n * channels; i++)
        sum += ((gfloat *) map.data)[i];
      gst_buffer_unmap (buf, &map);
      gst_buffer_unref (buf);
    }
    got = n;
  } else {
    guint64 total = gst_spdl_audio_chain_get_n_samples (chain), start,
        n_read = 0;
    gfloat *out = g_new (gfloat, stride * channels);

    start = (total ? total : rates[config & 3]) * ((data[0] >> 3) & 15) / 16;
    for (i = 0; i < stride * channels; i++)
      out[i] = NAN;
    if (gst_spdl_audio_chain_read (chain, start, SPAN, out, stride, &n_read,
            &error)) {
      g_assert_cmpuint (n_read, <=, SPAN);
      /* NaN marks what was not written (a file's own NaNs may be
       * read) */
      for (c = 0; c < channels; c++)
        for (i = SPAN; i < stride; i++)
          g_assert_true (isnan (out[c * stride + i]));
    }
    got = n_read;
    g_free (out);
  }
done:
  /* SPDL_FUZZ_VERBOSE=1: what became of each input */
  if (g_getenv ("SPDL_FUZZ_VERBOSE"))
    g_printerr ("  %" G_GUINT64_FORMAT " samples read%s%s\n", got,
        error ? ": " : "", error ? error->message : "");
  g_clear_error (&error);
  gst_spdl_audio_chain_close (chain);
  g_bytes_unref (bytes);
  return 0;
}
