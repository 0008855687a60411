/* GStreamer SPDL: counter-based random numbers
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_RANDOM_H__
#define __GST_SPDL_RANDOM_H__

#include <glib.h>

G_BEGIN_DECLS

/* A small generator (xoshiro256**) whose state is derived from a key only,
 * never from history or timing: the same (seed, epoch, index) always gives
 * the same numbers, whatever the thread that asks. */
typedef struct
{
  guint64 s[4];
} GstSpdlRng;

void gst_spdl_rng_init (GstSpdlRng * rng, guint64 seed, guint64 stream,
    guint64 index);
guint64 gst_spdl_rng_next (GstSpdlRng * rng);
guint64 gst_spdl_rng_below (GstSpdlRng * rng, guint64 bound);
gdouble gst_spdl_rng_uniform (GstSpdlRng * rng, gdouble lo, gdouble hi);

G_END_DECLS

#endif /* __GST_SPDL_RANDOM_H__ */
