/* GStreamer SPDL: serialized events held until a decoder's first caps
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_HELD_EVENTS_H__
#define __GST_SPDL_HELD_EVENTS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* A decoder's caps follow from its first output, after the input's
 * segment and tags arrived: the sticky events that must follow caps are
 * held until then (stream-start and EOS are not). Used from the source
 * pad's task only, or while it is paused (a flush), so without a lock. */
typedef struct
{
  GstPad *srcpad;
  GList *events;
  gboolean caps_sent;           /* caps pushed since start */
} GstSpdlHeldEvents;

/* Pushes @event (taken) on the source pad, or holds it until the caps;
 * EOS releases the held ones first. What gst_pad_push_event() returns,
 * TRUE when held. */
gboolean gst_spdl_held_events_push (GstSpdlHeldEvents * held,
    GstEvent * event);
/* The caps were pushed: the held events follow them. */
void gst_spdl_held_events_caps_sent (GstSpdlHeldEvents * held);
/* As queue does on a flush: a sticky @event still queued (not taken; but
 * segment and EOS) is not lost, it goes out before the next output. */
void gst_spdl_held_events_keep_sticky (GstSpdlHeldEvents * held,
    GstEvent * event);
/* Stop: the held events dropped, no caps sent. */
void gst_spdl_held_events_reset (GstSpdlHeldEvents * held);

G_END_DECLS

#endif /* __GST_SPDL_HELD_EVENTS_H__ */
