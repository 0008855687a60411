/* GStreamer SPDL: counter-based random numbers
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

#include "gstspdlrandom.h"

static guint64
splitmix64 (guint64 * x)
{
  guint64 z = (*x += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

void
gst_spdl_rng_init (GstSpdlRng * rng, guint64 seed, guint64 stream,
    guint64 index)
{
  /* hash the key so neighbouring keys give unrelated states */
  guint64 x = seed;
  guint64 k = splitmix64 (&x) ^ stream;

  k = splitmix64 (&k) ^ index;
  rng->s[0] = splitmix64 (&k);
  rng->s[1] = splitmix64 (&k);
  rng->s[2] = splitmix64 (&k);
  rng->s[3] = splitmix64 (&k);
}

static inline guint64
rotl (guint64 x, int k)
{
  return (x << k) | (x >> (64 - k));
}

guint64
gst_spdl_rng_next (GstSpdlRng * rng)
{
  guint64 *s = rng->s;
  guint64 result = rotl (s[1] * 5, 7) * 9;
  guint64 t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl (s[3], 45);
  return result;
}

/* Unbiased integer in [0, bound) (rejection on the 64-bit range). */
guint64
gst_spdl_rng_below (GstSpdlRng * rng, guint64 bound)
{
  guint64 threshold, r;

  if (bound <= 1)
    return 0;
  threshold = (-bound) % bound;
  do {
    r = gst_spdl_rng_next (rng);
  } while (r < threshold);
  return r % bound;
}

gdouble
gst_spdl_rng_uniform (GstSpdlRng * rng, gdouble lo, gdouble hi)
{
  gdouble u = (gst_spdl_rng_next (rng) >> 11) * (1.0 / 9007199254740992.0);

  return lo + (hi - lo) * u;
}
