/* GStreamer SPDL CUDA plugin: normalizing on the host (the reference)
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

#include "gstspdlcudanormalize.h"

void
spdl_normalize_cpu (const SpdlNormalizeParams * p, const uint8_t * in,
    void *out)
{
  uint64_t o, n = spdl_normalize_n_elements (p);

  for (o = 0; o < n; o++)
    spdl_normalize_element (p, in, out, (uint32_t) o);
}
