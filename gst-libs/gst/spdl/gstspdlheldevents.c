/* GStreamer SPDL: serialized events held until a decoder's first caps
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

#include "gstspdlheldevents.h"

static void
push_held (GstSpdlHeldEvents * held)
{
  GList *l;

  for (l = held->events; l; l = l->next)
    gst_pad_push_event (held->srcpad, l->data);
  g_clear_pointer (&held->events, g_list_free);
}

gboolean
gst_spdl_held_events_push (GstSpdlHeldEvents * held, GstEvent * event)
{
  GstEventType type = GST_EVENT_TYPE (event);

  if (!held->caps_sent && GST_EVENT_IS_STICKY (event) &&
      type != GST_EVENT_STREAM_START && type != GST_EVENT_EOS) {
    held->events = g_list_append (held->events, event);
    return TRUE;
  }
  if (type == GST_EVENT_EOS && !held->caps_sent)
    push_held (held);
  return gst_pad_push_event (held->srcpad, event);
}

void
gst_spdl_held_events_caps_sent (GstSpdlHeldEvents * held)
{
  held->caps_sent = TRUE;
  push_held (held);
}

void
gst_spdl_held_events_keep_sticky (GstSpdlHeldEvents * held, GstEvent * event)
{
  GstEventType type;

  if (event == NULL || !GST_EVENT_IS_STICKY (event))
    return;
  type = GST_EVENT_TYPE (event);
  if (type == GST_EVENT_SEGMENT || type == GST_EVENT_EOS)
    return;
  if (held->caps_sent)
    gst_pad_store_sticky_event (held->srcpad, event);
  else
    held->events = g_list_append (held->events, gst_event_ref (event));
}

void
gst_spdl_held_events_reset (GstSpdlHeldEvents * held)
{
  g_list_free_full (held->events, (GDestroyNotify) gst_event_unref);
  held->events = NULL;
  held->caps_sent = FALSE;
}
