/* GStreamer SPDL plugin: pipeline statistics tracer
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/**
 * SECTION:tracer-spdlstats
 * @title: spdlstats
 *
 * Shows which stage of a pipeline is the bottleneck, for any pipeline
 * (stock elements included): every interval it reports each element's
 * throughput (buffers pushed per second) and each queue's occupancy (the
 * share of the interval it spent empty and full; spdldecode's samples in
 * flight count as a queue). A stage downstream of an always-full queue is
 * the bottleneck; one downstream of an always-empty queue is starved.
 *
 * |[
 * GST_TRACERS="spdlstats(interval=1000)" gst-launch-1.0 spdlsrc \
 *     location=/data/val ! spdldecode width=224 height=224 ! queue ! \
 *     spdlbatch ! fakesink
 * ]|
 *
 * Parameters: interval (ms, default 1000), print (default true: a line on
 * stderr per interval). The same figures are logged as structured records
 * "spdlstats-element" and "spdlstats-queue" on the GST_TRACER debug
 * category (GST_DEBUG=GST_TRACER:7) for scripts.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlstatstracer.h"

#include <string.h>

GST_DEBUG_CATEGORY_STATIC (spdl_stats_tracer_debug);
#define GST_CAT_DEFAULT spdl_stats_tracer_debug

#define DEFAULT_INTERVAL_MS 1000
#define SAMPLE_PERIOD_MS 10

typedef struct
{
  gchar *name;
  gchar *factory;
  guint64 buffers;              /* pushed, since the start */
  guint64 reported;             /* buffers at the last report */
  gboolean is_queue;
  guint samples, empty, full;   /* occupancy samples this interval */
} ElementCounters;

static GstTracerRecord *element_record, *queue_record;

#define gst_spdl_stats_tracer_parent_class parent_class
G_DEFINE_TYPE (GstSpdlStatsTracer, gst_spdl_stats_tracer, GST_TYPE_TRACER);

static void
counters_free (ElementCounters * c)
{
  g_free (c->name);
  g_free (c->factory);
  g_free (c);
}

static void
element_gone (gpointer data, GObject * where_the_object_was)
{
  GstSpdlStatsTracer *self = data;

  g_mutex_lock (&self->lock);
  g_hash_table_remove (self->elements, where_the_object_was);
  g_mutex_unlock (&self->lock);
}

/* Called with the lock. */
static ElementCounters *
counters_for (GstSpdlStatsTracer * self, GstElement * element)
{
  ElementCounters *c = g_hash_table_lookup (self->elements, element);
  GstElementFactory *factory;

  if (c != NULL || GST_IS_BIN (element))
    return c;
  c = g_new0 (ElementCounters, 1);
  factory = gst_element_get_factory (element);
  c->factory = g_strdup (factory ?
      gst_plugin_feature_get_name (GST_PLUGIN_FEATURE (factory)) : "");
  c->is_queue = g_str_equal (c->factory, "queue") ||
      g_str_equal (c->factory, "spdldecode");
  g_hash_table_insert (self->elements, element, c);
  g_object_weak_ref (G_OBJECT (element), element_gone, self);
  return c;
}

static void
count_push (GstSpdlStatsTracer * self, GstPad * pad, guint n)
{
  GstObject *parent = GST_OBJECT_PARENT (pad);
  ElementCounters *c;

  if (!GST_IS_ELEMENT (parent))
    return;
  g_mutex_lock (&self->lock);
  c = counters_for (self, GST_ELEMENT (parent));
  if (c)
    c->buffers += n;
  g_mutex_unlock (&self->lock);
}

static void
do_push_buffer_pre (GstSpdlStatsTracer * self, GstClockTime ts, GstPad * pad,
    GstBuffer * buffer)
{
  count_push (self, pad, 1);
}

static void
do_push_list_pre (GstSpdlStatsTracer * self, GstClockTime ts, GstPad * pad,
    GstBufferList * list)
{
  count_push (self, pad, gst_buffer_list_length (list));
}

static void
do_element_new (GstSpdlStatsTracer * self, GstClockTime ts,
    GstElement * element)
{
  g_mutex_lock (&self->lock);
  counters_for (self, element);
  g_mutex_unlock (&self->lock);
}

/* Where a queue-like element stands now: empty, full or in between. */
static void
sample_occupancy (GstElement * element, ElementCounters * c)
{
  guint level = 0, max = 0;

  if (g_str_equal (c->factory, "queue")) {
    g_object_get (element, "current-level-buffers", &level,
        "max-size-buffers", &max, NULL);
    if (max == 0) {
      guint64 t = 0, tmax = 0;
      g_object_get (element, "current-level-time", &t, "max-size-time", &tmax,
          NULL);
      level = t > 0;
      max = tmax ? (guint) (tmax <= t ? level : G_MAXUINT) : G_MAXUINT;
    }
  } else {
    GstStructure *s = NULL;
    g_object_get (element, "stats", &s, NULL);
    if (s) {
      gst_structure_get_uint (s, "in-flight", &level);
      gst_structure_get_uint (s, "max-in-flight", &max);
      gst_structure_free (s);
    }
  }
  c->samples++;
  c->empty += level == 0;
  c->full += max > 0 && level >= max;
}

static void
report (GstSpdlStatsTracer * self, gdouble seconds)
{
  GString *line = g_string_new ("spdlstats:");
  GHashTableIter iter;
  gpointer key, value;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->elements);
  while (g_hash_table_iter_next (&iter, &key, &value)) {
    ElementCounters *c = value;
    guint64 n = c->buffers - c->reported;
    gdouble rate = n / seconds;

    c->reported = c->buffers;
    gst_tracer_record_log (element_record, c->name, c->factory, n, rate);
    g_string_append_printf (line, " %s %.1f/s", c->name, rate);
    if (c->is_queue && c->samples > 0) {
      gdouble empty = (gdouble) c->empty / c->samples;
      gdouble full = (gdouble) c->full / c->samples;
      gst_tracer_record_log (queue_record, c->name, empty, full);
      g_string_append_printf (line, " (empty %.0f%% full %.0f%%)",
          empty * 100, full * 100);
      c->samples = c->empty = c->full = 0;
    }
    g_string_append_c (line, ';');
  }
  g_mutex_unlock (&self->lock);
  if (self->print)
    g_printerr ("%s\n", line->str);
  g_string_free (line, TRUE);
}

/* Names can change until an element is added to a bin: take them late. */
static void
refresh_names (GstSpdlStatsTracer * self)
{
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, self->elements);
  while (g_hash_table_iter_next (&iter, &key, &value)) {
    ElementCounters *c = value;
    g_free (c->name);
    c->name = gst_object_get_name (GST_OBJECT (key));
  }
}

static gpointer
sampler_func (gpointer data)
{
  GstSpdlStatsTracer *self = data;
  gint64 next_report = g_get_monotonic_time () + self->interval_ms * 1000;
  gint64 last_report = g_get_monotonic_time ();

  g_mutex_lock (&self->lock);
  while (!self->stopping) {
    GHashTableIter iter;
    gpointer key, value;
    gint64 now;

    g_cond_wait_until (&self->cond, &self->lock, g_get_monotonic_time () +
        SAMPLE_PERIOD_MS * 1000);
    if (self->stopping)
      break;
    refresh_names (self);
    g_hash_table_iter_init (&iter, self->elements);
    while (g_hash_table_iter_next (&iter, &key, &value)) {
      ElementCounters *c = value;
      GstElement *element = gst_object_ref (key);
      if (c->is_queue) {
        /* reading properties takes the element's lock: not ours */
        g_mutex_unlock (&self->lock);
        sample_occupancy (element, c);
        g_mutex_lock (&self->lock);
      }
      gst_object_unref (element);
      if (self->stopping)
        break;
      /* the table may have changed while unlocked */
      g_hash_table_iter_init (&iter, self->elements);
      while (g_hash_table_iter_next (&iter, &key, &value) && value != c);
    }
    now = g_get_monotonic_time ();
    if (now >= next_report) {
      g_mutex_unlock (&self->lock);
      report (self, (now - last_report) / 1e6);
      g_mutex_lock (&self->lock);
      last_report = now;
      next_report = now + self->interval_ms * 1000;
    }
  }
  g_mutex_unlock (&self->lock);
  return NULL;
}

static void
parse_params (GstSpdlStatsTracer * self)
{
  gchar *params = NULL, *text;
  GstStructure *s;

  g_object_get (self, "params", &params, NULL);
  if (params == NULL)
    return;
  text = g_strdup_printf ("spdlstats,%s", params);
  s = gst_structure_from_string (text, NULL);
  if (s) {
    gint interval;
    gboolean print;
    if (gst_structure_get_int (s, "interval", &interval) && interval > 0)
      self->interval_ms = interval;
    if (gst_structure_get_boolean (s, "print", &print))
      self->print = print;
    gst_structure_free (s);
  } else {
    GST_WARNING_OBJECT (self, "could not parse parameters \"%s\"", params);
  }
  g_free (text);
  g_free (params);
}

static void
gst_spdl_stats_tracer_constructed (GObject * object)
{
  GstSpdlStatsTracer *self = GST_SPDL_STATS_TRACER (object);

  G_OBJECT_CLASS (parent_class)->constructed (object);
  parse_params (self);
  self->thread = g_thread_new ("spdlstats", sampler_func, self);
}

static void
gst_spdl_stats_tracer_finalize (GObject * object)
{
  GstSpdlStatsTracer *self = GST_SPDL_STATS_TRACER (object);
  GHashTableIter iter;
  gpointer key;

  g_mutex_lock (&self->lock);
  self->stopping = TRUE;
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);
  g_thread_join (self->thread);
  g_hash_table_iter_init (&iter, self->elements);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_object_weak_unref (G_OBJECT (key), element_gone, self);
  g_hash_table_unref (self->elements);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static GstStructure *
field (GType type, const gchar * description, GstTracerValueScope scope)
{
  return gst_structure_new ("value", "type", G_TYPE_GTYPE, type,
      "description", G_TYPE_STRING, description,
      "related-to", GST_TYPE_TRACER_VALUE_SCOPE, scope, NULL);
}

static void
gst_spdl_stats_tracer_class_init (GstSpdlStatsTracerClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);

  gobject_class->constructed = gst_spdl_stats_tracer_constructed;
  gobject_class->finalize = gst_spdl_stats_tracer_finalize;

  element_record = gst_tracer_record_new ("spdlstats-element.class",
      "element", GST_TYPE_STRUCTURE, field (G_TYPE_STRING, "element name",
          GST_TRACER_VALUE_SCOPE_ELEMENT),
      "factory", GST_TYPE_STRUCTURE, field (G_TYPE_STRING, "element factory",
          GST_TRACER_VALUE_SCOPE_ELEMENT),
      "buffers", GST_TYPE_STRUCTURE, field (G_TYPE_UINT64,
          "buffers pushed in the interval", GST_TRACER_VALUE_SCOPE_ELEMENT),
      "rate", GST_TYPE_STRUCTURE, field (G_TYPE_DOUBLE,
          "buffers pushed per second", GST_TRACER_VALUE_SCOPE_ELEMENT), NULL);
  queue_record = gst_tracer_record_new ("spdlstats-queue.class",
      "element", GST_TYPE_STRUCTURE, field (G_TYPE_STRING, "element name",
          GST_TRACER_VALUE_SCOPE_ELEMENT),
      "empty", GST_TYPE_STRUCTURE, field (G_TYPE_DOUBLE,
          "share of the interval the queue was empty",
          GST_TRACER_VALUE_SCOPE_ELEMENT),
      "full", GST_TYPE_STRUCTURE, field (G_TYPE_DOUBLE,
          "share of the interval the queue was full",
          GST_TRACER_VALUE_SCOPE_ELEMENT), NULL);
  GST_OBJECT_FLAG_SET (element_record, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  GST_OBJECT_FLAG_SET (queue_record, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  GST_DEBUG_CATEGORY_INIT (spdl_stats_tracer_debug, "spdlstats", 0,
      "SPDL statistics tracer");
}

static void
gst_spdl_stats_tracer_init (GstSpdlStatsTracer * self)
{
  GstTracer *tracer = GST_TRACER (self);

  self->interval_ms = DEFAULT_INTERVAL_MS;
  self->print = TRUE;
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->elements = g_hash_table_new_full (NULL, NULL, NULL,
      (GDestroyNotify) counters_free);
  gst_tracing_register_hook (tracer, "element-new",
      G_CALLBACK (do_element_new));
  gst_tracing_register_hook (tracer, "pad-push-pre",
      G_CALLBACK (do_push_buffer_pre));
  gst_tracing_register_hook (tracer, "pad-push-list-pre",
      G_CALLBACK (do_push_list_pre));
}
