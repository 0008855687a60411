/* gst-spdl benchmarks: shared helpers
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __SPDL_BENCH_UTIL_H__
#define __SPDL_BENCH_UTIL_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Plays @pipeline to EOS and returns the seconds it took, from PLAYING
 * (after prerolling when @preroll_first: start-up not counted). Stops the
 * pipeline; -1 on error. */
gdouble spdl_bench_play (GstElement * pipeline, gboolean preroll_first);
/* Same, calling @settle (when not NULL) before the clock starts and after
 * EOS before it stops: work the pipeline queued elsewhere (a GPU) counts. */
gdouble spdl_bench_play_settled (GstElement * pipeline,
    gboolean preroll_first, void (*settle) (void));

G_END_DECLS

#endif
