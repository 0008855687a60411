/* GStreamer SPDL plugin: small helpers shared by the elements
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_UTIL_H__
#define __GST_SPDL_UTIL_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* A buffer of @size bytes, or NULL when the memory cannot be had: for
 * sizes that come from files, where GLib's aborting allocator must not be
 * used. */
GstBuffer *gst_spdl_buffer_try_new (gsize size);

/* At most @max_chars characters of the UTF-8 string @str, cut on a
 * character boundary, with "..." appended when cut. Invalid UTF-8 is
 * shown as g_utf8_make_valid() does. */
gchar *gst_spdl_utf8_prefix (const gchar * str, gsize len, guint max_chars);

/* Per-sample warnings on the bus are limited to the first @limit skipped
 * samples of each epoch (the rest go to the debug log); a summary at the
 * end of the epoch keeps the counts. */
typedef struct
{
  guint limit;
  guint epoch;
  guint64 skipped;              /* in @epoch */
} GstSpdlWarnLimiter;

void gst_spdl_warn_limiter_reset (GstSpdlWarnLimiter * limiter, guint limit);
/* Counts a skipped sample of @epoch; TRUE if it may be posted. */
gboolean gst_spdl_warn_limiter_count (GstSpdlWarnLimiter * limiter,
    guint epoch);

/* The "spdl-skipped" element message of one epoch: "epoch", "total",
 * "suppressed" (warnings not posted) and one field per reason, from
 * @counts (@n_reasons entries named by @reasons). */
GstMessage *gst_spdl_skipped_message_new (GstElement * element, gint epoch,
    const guint64 * counts, const gchar * const *reasons, guint n_reasons,
    guint64 suppressed);

G_END_DECLS

#endif /* __GST_SPDL_UTIL_H__ */
