/* gst-spdl fuzz target: the video chain (container and decoder)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The bytes after the first are a video, demuxed and decoded as
 * spdlvideodecode does it: gst_spdl_video_chain_open(), one clip of 4
 * frames planned on its frame times, gst_spdl_video_chain_decode(), with
 * small limits so that no input takes long. The first byte picks the
 * clip:
 *
 *   bits 0-1: stride - 1      bit 2: time-based (8 fps), else native
 *   bits 3-4: short-videos mode   bit 5: uniform sampling
 *   bits 6-7: seed
 *
 * Each frame is converted in a region that depends on its index (odd
 * edges included). Checked: the frame times ascend; every frame
 * delivered was asked for, once, and its rows (and the 16 bytes after
 * the last) can be read, converted or not. One
 * chain, reused from input to input as a decoding thread reuses it. */
#include <gst/gst.h>
#include <stdint.h>
#include <stdlib.h>

#include "gstspdlclip.h"
#include "gstspdlvideochain.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

#define FRAMES 4

typedef struct
{
  guint8 *want;                 /* per frame: 1 asked for, 2 delivered */
  guint n_frames;
  guint delivered;
  guint sum;
} Delivery;

/* The system's demuxers and decoders, a registry of the target's own */
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

static void
on_frame (guint frame, const guint8 * rgb, gsize stride, guint width,
    guint height, gpointer user_data)
{
  Delivery *d = user_data;
  gsize i, n = stride * (height ? height - 1 : 0) + (gsize) width * 3 + 16;

  g_assert_cmpuint (frame, <, d->n_frames);
  g_assert_cmpuint (d->want[frame], ==, 1);
  d->want[frame] = 2;
  g_assert_cmpuint (stride, >=, (gsize) width * 3);
  /* under ASan and valgrind: every byte promised is there */
  for (i = 0; i < n; i++)
    d->sum += rgb[i];
}

static void
frame_region (guint frame, guint width, guint height,
    GstSpdlVideoRegion * region, gpointer user_data)
{
  region->x0 = frame % 3;
  region->x1 = width - frame % 2;
  region->y0 = frame % 5;
  region->y1 = height - frame % 7;
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static GstSpdlVideoChain *chain = NULL;
  GstSpdlClipParams p;
  Delivery d = { 0, };
  GError *error = NULL;
  GBytes *bytes;
  const gdouble *pts;
  guint n = 0, i, width = 0, height = 0, indices[FRAMES];

  if (size < 1)
    return 0;
  if (chain == NULL) {
    GstSpdlVideoLimits limits;

    gst_spdl_video_limits_init (&limits);
    limits.max_pixels = 256 * 256;
    limits.max_frames = 256;
    limits.max_decode_frames = 64;
    limits.timeout = 2 * GST_SECOND;
    chain = gst_spdl_video_chain_new (&limits);
  }
  gst_spdl_clip_params_init (&p);
  p.frames = FRAMES;
  p.stride = (data[0] & 3) + 1;
  p.frame_rate = data[0] & 4 ? 8 : 0;
  p.short_videos = (data[0] >> 3) & 3;
  p.sampling = data[0] & 0x20 ? GST_SPDL_CLIP_SAMPLING_UNIFORM :
      GST_SPDL_CLIP_SAMPLING_RANDOM;
  p.seed = data[0] >> 6;
  bytes = g_bytes_new_static (data + 1, size - 1);
  if (!gst_spdl_video_chain_open (chain, bytes, &error))
    goto done;
  pts = gst_spdl_video_chain_get_pts (chain, &n);
  g_assert_cmpuint (n, >, 0);
  for (i = 1; i < n; i++)
    g_assert_cmpfloat (pts[i], >=, pts[i - 1]);
  gst_spdl_video_chain_get_size (chain, &width, &height);
  g_assert_cmpuint ((guint64) width * height, <=, 256 * 256);
  if (gst_spdl_clip_plan (&p, pts, n, gst_spdl_video_chain_get_end (chain),
          0, 0, indices) != GST_SPDL_CLIP_PLAN_OK)
    goto done;
  d.n_frames = n;
  d.want = g_new0 (guint8, n);
  for (i = 0; i < FRAMES; i++) {
    g_assert_cmpuint (indices[i], <, n);
    d.want[indices[i]] = 1;
  }
  gst_spdl_video_chain_decode (chain, indices, FRAMES, frame_region, on_frame,
      &d, &error);
  for (i = 0; i < FRAMES; i++)
    d.delivered += d.want[indices[i]] == 2;
  g_free (d.want);
done:
  /* SPDL_FUZZ_VERBOSE=1: what became of each input */
  if (g_getenv ("SPDL_FUZZ_VERBOSE"))
    g_printerr ("  %u frames, %ux%u, %u of %u clip frames decoded%s%s\n", n,
        width, height, d.delivered, FRAMES, error ? ": " : "",
        error ? error->message : "");
  g_clear_error (&error);
  gst_spdl_video_chain_close (chain);
  g_bytes_unref (bytes);
  return 0;
}
