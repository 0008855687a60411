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
 * throughput (buffers pushed per second; for a sink, buffers received per
 * second) and each queue's occupancy (the share of the interval it spent
 * empty and full; spdldecode's samples in flight count as a queue). A stage
 * downstream of an always-full queue is the bottleneck; one downstream of an
 * always-empty queue is starved. Elements are listed in pipeline order,
 * upstream first.
 *
 * |[
 * GST_TRACERS="spdlstats(interval=1000)" gst-launch-1.0 spdlsrc \
 *     location=/data/val ! spdldecode width=224 height=224 ! queue ! \
 *     spdlbatch ! fakesink
 * ]|
 *
 * When a pipeline ends (at EOS, or when it is stopped: PAUSED to READY) it
 * prints one final summary of the whole run, so a pipeline shorter than the
 * interval reports too:
 *
 * |[
 * spdlstats: final after 2.41 s: src 1000 buffers 414.9/s; dec 1000 buffers
 *     414.9/s (empty 0% full 98%); queue0 1000 buffers 414.9/s (empty 96%
 *     full 0%); spdlbatch0 16 buffers 6.6/s; fakesink0 16 received 6.6/s;
 * ]|
 *
 * Parameters: interval (ms, default 1000), print (default true: a line on
 * stderr per interval and the final summary). The same figures are logged as
 * structured records "spdlstats-element", "spdlstats-queue" (per interval)
 * and "spdlstats-total" (the final summary) on the GST_TRACER debug category
 * (GST_DEBUG=GST_TRACER:7) for scripts.
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
  gchar *factory;
  gboolean is_queue;
  gboolean is_sink;             /* its throughput is what it receives */
  guint64 pushed, received;     /* buffers since the start */
  guint64 reported_pushed, reported_received;   /* at the last report */
  guint64 run_pushed, run_received;     /* when its pipeline last started */
  guint samples, empty, full;   /* occupancy samples this interval */
  guint run_samples, run_empty, run_full;       /* ... this run */
} ElementCounters;

/* An element to report on, with the name it has now. */
typedef struct
{
  GstElement *element;
  gchar *name;
} ReportEntry;

/* Kept on each top-level pipeline (qdata), under the tracer's lock. */
typedef struct
{
  gint64 start_us;
  gboolean summarized;
} PipelineRun;

static GstTracerRecord *element_record, *queue_record, *total_record;
static GQuark pipeline_run_quark;

#define gst_spdl_stats_tracer_parent_class parent_class
G_DEFINE_TYPE (GstSpdlStatsTracer, gst_spdl_stats_tracer, GST_TYPE_TRACER);

static void
counters_free (ElementCounters * c)
{
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
  c->is_sink = GST_OBJECT_FLAG_IS_SET (element, GST_ELEMENT_FLAG_SINK);
  g_hash_table_insert (self->elements, element, c);
  g_object_weak_ref (G_OBJECT (element), element_gone, self);
  return c;
}

/* Counts @n buffers pushed by @pad's element and received by its peer's
 * (a sink pushes nothing: what it receives is its throughput). Through a
 * ghost pad the receiver is found when the inner proxy pad pushes on. */
static void
count_push (GstSpdlStatsTracer * self, GstPad * pad, guint n)
{
  GstElement *sender = gst_pad_get_parent_element (pad);
  GstPad *peer = gst_pad_get_peer (pad);
  GstElement *receiver = peer ? gst_pad_get_parent_element (peer) : NULL;
  ElementCounters *c;

  g_mutex_lock (&self->lock);
  if (sender && (c = counters_for (self, sender)))
    c->pushed += n;
  if (receiver && (c = counters_for (self, receiver)))
    c->received += n;
  g_mutex_unlock (&self->lock);
  /* the last reference may finalize an element: element_gone locks */
  gst_clear_object (&sender);
  gst_clear_object (&receiver);
  gst_clear_object (&peer);
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

/* ------------------------------------------------------------------------ */
/* Pipeline order                                                           */

static void
report_entries_free (GArray * entries)
{
  guint i;

  for (i = 0; i < entries->len; i++) {
    ReportEntry *e = &g_array_index (entries, ReportEntry, i);
    gst_object_unref (e->element);
    g_free (e->name);
  }
  g_array_unref (entries);
}

static void
append_entry (GArray * entries, GstElement * element)
{
  ReportEntry e = { gst_object_ref (element),
    gst_object_get_name (GST_OBJECT (element))
  };

  g_array_append_val (entries, e);
}

/* Appends @bin's elements to @entries upstream first, the elements of a
 * child bin in the child's place. Takes the bins' locks: call without ours. */
static void
append_in_pipeline_order (GstBin * bin, GArray * entries)
{
  GstIterator *it = gst_bin_iterate_sorted (bin);
  GPtrArray *sinks_first = g_ptr_array_new_with_free_func (gst_object_unref);
  GValue item = G_VALUE_INIT;
  gboolean done = FALSE;
  guint i;

  while (!done) {
    switch (gst_iterator_next (it, &item)) {
      case GST_ITERATOR_OK:
        g_ptr_array_add (sinks_first, g_value_dup_object (&item));
        g_value_reset (&item);
        break;
      case GST_ITERATOR_RESYNC:
        g_ptr_array_set_size (sinks_first, 0);
        gst_iterator_resync (it);
        break;
      default:
        done = TRUE;
        break;
    }
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  for (i = sinks_first->len; i-- > 0;) {
    GstElement *element = g_ptr_array_index (sinks_first, i);
    if (GST_IS_BIN (element))
      append_in_pipeline_order (GST_BIN (element), entries);
    else
      append_entry (entries, element);
  }
  g_ptr_array_unref (sinks_first);
}

static GArray *
report_entries_new (void)
{
  return g_array_new (FALSE, FALSE, sizeof (ReportEntry));
}

static GstObject *
top_level (GstObject * object)
{
  GstObject *top = gst_object_ref (object), *parent;

  while ((parent = gst_object_get_parent (top)) != NULL) {
    gst_object_unref (top);
    top = parent;
  }
  return top;
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (GST_OBJECT_NAME (*(GstObject **) a),
      GST_OBJECT_NAME (*(GstObject **) b));
}

/* Every element we count, pipeline by pipeline, upstream first; elements in
 * no bin last. Call without the lock. */
static GArray *
all_elements_in_pipeline_order (GstSpdlStatsTracer * self)
{
  GPtrArray *known = g_ptr_array_new_with_free_func (gst_object_unref);
  GPtrArray *tops = g_ptr_array_new_with_free_func (gst_object_unref);
  GArray *entries = report_entries_new ();
  GHashTableIter iter;
  gpointer key;
  guint i;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->elements);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (known, gst_object_ref (key));
  g_mutex_unlock (&self->lock);

  for (i = 0; i < known->len; i++) {
    GstObject *top = top_level (g_ptr_array_index (known, i));
    if (GST_IS_BIN (top) && !g_ptr_array_find (tops, top, NULL))
      g_ptr_array_add (tops, top);
    else
      gst_object_unref (top);
  }
  g_ptr_array_sort (tops, compare_names);
  for (i = 0; i < tops->len; i++)
    append_in_pipeline_order (g_ptr_array_index (tops, i), entries);
  for (i = 0; i < known->len; i++) {
    GstObject *element = g_ptr_array_index (known, i);
    if (GST_OBJECT_PARENT (element) == NULL)
      append_entry (entries, GST_ELEMENT (element));
  }
  g_ptr_array_unref (tops);
  g_ptr_array_unref (known);
  return entries;
}

/* ------------------------------------------------------------------------ */
/* Periodic reports                                                         */

/* Where a queue-like element stands now: its level and its maximum. */
static void
sample_occupancy (GstElement * element, gboolean is_queue_factory,
    guint * level, guint * max)
{
  *level = *max = 0;
  if (is_queue_factory) {
    g_object_get (element, "current-level-buffers", level,
        "max-size-buffers", max, NULL);
    if (*max == 0) {
      guint64 t = 0, tmax = 0;
      g_object_get (element, "current-level-time", &t, "max-size-time", &tmax,
          NULL);
      *level = t > 0;
      *max = tmax ? (guint) (tmax <= t ? *level : G_MAXUINT) : G_MAXUINT;
    }
  } else {
    GstStructure *s = NULL;
    g_object_get (element, "stats", &s, NULL);
    if (s) {
      gst_structure_get_uint (s, "in-flight", level);
      gst_structure_get_uint (s, "max-in-flight", max);
      gst_structure_free (s);
    }
  }
}

typedef struct
{
  GstElement *element;
  gboolean is_queue_factory;
  guint level, max;
} OccupancySample;

/* Samples every queue-like element once. Called with the lock; drops it
 * while reading properties (that takes the elements' locks, not ours). */
static void
sample_queues (GstSpdlStatsTracer * self)
{
  GArray *queues = g_array_new (FALSE, TRUE, sizeof (OccupancySample));
  GHashTableIter iter;
  gpointer key, value;
  guint i;

  g_hash_table_iter_init (&iter, self->elements);
  while (g_hash_table_iter_next (&iter, &key, &value)) {
    ElementCounters *c = value;
    OccupancySample s = { gst_object_ref (key),
      g_str_equal (c->factory, "queue"), 0, 0
    };
    if (c->is_queue)
      g_array_append_val (queues, s);
    else
      gst_object_unref (key);
  }
  g_mutex_unlock (&self->lock);
  for (i = 0; i < queues->len; i++) {
    OccupancySample *s = &g_array_index (queues, OccupancySample, i);
    sample_occupancy (s->element, s->is_queue_factory, &s->level, &s->max);
  }
  g_mutex_lock (&self->lock);
  for (i = 0; i < queues->len; i++) {
    OccupancySample *s = &g_array_index (queues, OccupancySample, i);
    ElementCounters *c = g_hash_table_lookup (self->elements, s->element);
    gboolean empty = s->level == 0, full = s->max > 0 && s->level >= s->max;
    if (c) {
      c->samples++;
      c->empty += empty;
      c->full += full;
      c->run_samples++;
      c->run_empty += empty;
      c->run_full += full;
    }
  }
  g_mutex_unlock (&self->lock);
  for (i = 0; i < queues->len; i++)
    gst_object_unref (g_array_index (queues, OccupancySample, i).element);
  g_array_unref (queues);
  g_mutex_lock (&self->lock);
}

static void
append_occupancy (GString * line, guint samples, guint empty, guint full)
{
  g_string_append_printf (line, " (empty %.0f%% full %.0f%%)",
      100.0 * empty / samples, 100.0 * full / samples);
}

static void
report (GstSpdlStatsTracer * self, gdouble seconds)
{
  GArray *entries = all_elements_in_pipeline_order (self);
  GString *line = g_string_new ("spdlstats:");
  gboolean any = FALSE;
  guint i;

  g_mutex_lock (&self->lock);
  for (i = 0; i < entries->len; i++) {
    ReportEntry *e = &g_array_index (entries, ReportEntry, i);
    ElementCounters *c = g_hash_table_lookup (self->elements, e->element);
    guint64 pushed, received;
    gdouble rate;

    if (c == NULL)
      continue;
    any = TRUE;
    pushed = c->pushed - c->reported_pushed;
    received = c->received - c->reported_received;
    rate = (c->is_sink ? received : pushed) / seconds;
    c->reported_pushed = c->pushed;
    c->reported_received = c->received;
    gst_tracer_record_log (element_record, e->name, c->factory, pushed, rate,
        received);
    g_string_append_printf (line, " %s %.1f/s%s", e->name, rate,
        c->is_sink ? " received" : "");
    if (c->is_queue && c->samples > 0) {
      gst_tracer_record_log (queue_record, e->name,
          (gdouble) c->empty / c->samples, (gdouble) c->full / c->samples);
      append_occupancy (line, c->samples, c->empty, c->full);
      c->samples = c->empty = c->full = 0;
    }
    g_string_append_c (line, ';');
  }
  g_mutex_unlock (&self->lock);
  report_entries_free (entries);
  /* a tick before any buffer flowed (a loaded machine, a slow start) has
   * nothing to say: no bare "spdlstats:" line */
  if (self->print && any)
    g_printerr ("%s\n", line->str);
  g_string_free (line, TRUE);
}

static gpointer
sampler_func (gpointer data)
{
  GstSpdlStatsTracer *self = data;
  gint64 next_report = g_get_monotonic_time () + self->interval_ms * 1000;
  gint64 last_report = g_get_monotonic_time ();

  g_mutex_lock (&self->lock);
  while (!self->stopping) {
    gint64 now;

    g_cond_wait_until (&self->cond, &self->lock, g_get_monotonic_time () +
        SAMPLE_PERIOD_MS * 1000);
    if (self->stopping)
      break;
    sample_queues (self);
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

/* ------------------------------------------------------------------------ */
/* A pipeline's run: from READY to PAUSED until EOS or back to READY        */

static gboolean
is_top_level_pipeline (GstElement * element)
{
  return GST_IS_PIPELINE (element) && GST_OBJECT_PARENT (element) == NULL;
}

static GArray *
pipeline_elements_in_order (GstElement * pipeline)
{
  GArray *entries = report_entries_new ();

  append_in_pipeline_order (GST_BIN (pipeline), entries);
  return entries;
}

static void
start_run (GstSpdlStatsTracer * self, GstElement * pipeline)
{
  GArray *entries = pipeline_elements_in_order (pipeline);
  PipelineRun *run;
  guint i;

  g_mutex_lock (&self->lock);
  run = g_object_get_qdata (G_OBJECT (pipeline), pipeline_run_quark);
  if (run == NULL) {
    run = g_new0 (PipelineRun, 1);
    g_object_set_qdata_full (G_OBJECT (pipeline), pipeline_run_quark, run,
        g_free);
  }
  run->start_us = g_get_monotonic_time ();
  run->summarized = FALSE;
  for (i = 0; i < entries->len; i++) {
    ElementCounters *c = counters_for (self,
        g_array_index (entries, ReportEntry, i).element);
    if (c == NULL)
      continue;
    c->run_pushed = c->pushed;
    c->run_received = c->received;
    c->run_samples = c->run_empty = c->run_full = 0;
  }
  g_mutex_unlock (&self->lock);
  report_entries_free (entries);
}

/* The final summary of @pipeline's run, once per run. */
static void
summarize_run (GstSpdlStatsTracer * self, GstElement * pipeline)
{
  GString *line;
  GArray *entries;
  PipelineRun *run;
  gdouble seconds;
  guint i;

  g_mutex_lock (&self->lock);
  run = g_object_get_qdata (G_OBJECT (pipeline), pipeline_run_quark);
  if (run == NULL || run->summarized) {
    g_mutex_unlock (&self->lock);
    return;
  }
  run->summarized = TRUE;
  seconds = MAX (g_get_monotonic_time () - run->start_us, 1) / 1e6;
  g_mutex_unlock (&self->lock);

  entries = pipeline_elements_in_order (pipeline);
  line = g_string_new (NULL);
  g_string_printf (line, "spdlstats: final after %.2f s:", seconds);
  g_mutex_lock (&self->lock);
  for (i = 0; i < entries->len; i++) {
    ReportEntry *e = &g_array_index (entries, ReportEntry, i);
    ElementCounters *c = g_hash_table_lookup (self->elements, e->element);
    guint64 pushed, received;
    gdouble rate;

    if (c == NULL)
      continue;
    pushed = c->pushed - c->run_pushed;
    received = c->received - c->run_received;
    rate = (c->is_sink ? received : pushed) / seconds;
    gst_tracer_record_log (total_record, e->name, c->factory, pushed, rate,
        received, seconds);
    g_string_append_printf (line, " %s %" G_GUINT64_FORMAT " %s %.1f/s",
        e->name, c->is_sink ? received : pushed,
        c->is_sink ? "received" : "buffers", rate);
    if (c->is_queue && c->run_samples > 0)
      append_occupancy (line, c->run_samples, c->run_empty, c->run_full);
    g_string_append_c (line, ';');
  }
  g_mutex_unlock (&self->lock);
  report_entries_free (entries);
  if (self->print)
    g_printerr ("%s\n", line->str);
  g_string_free (line, TRUE);
}

static void
do_change_state_pre (GstSpdlStatsTracer * self, GstClockTime ts,
    GstElement * element, GstStateChange transition)
{
  /* before any child starts: sources push as soon as they are PAUSED */
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED &&
      is_top_level_pipeline (element))
    start_run (self, element);
}

static void
do_change_state_post (GstSpdlStatsTracer * self, GstClockTime ts,
    GstElement * element, GstStateChange transition,
    GstStateChangeReturn result)
{
  /* every child is READY: no data flows any more */
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY &&
      is_top_level_pipeline (element))
    summarize_run (self, element);
}

static void
do_post_message_pre (GstSpdlStatsTracer * self, GstClockTime ts,
    GstElement * element, GstMessage * message)
{
  if (GST_MESSAGE_TYPE (message) == GST_MESSAGE_EOS &&
      GST_MESSAGE_SRC (message) == GST_OBJECT (element) &&
      is_top_level_pipeline (element))
    summarize_run (self, element);
}

/* ------------------------------------------------------------------------ */

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
field (GType type, const gchar * description)
{
  return gst_structure_new ("value", "type", G_TYPE_GTYPE, type,
      "description", G_TYPE_STRING, description,
      "related-to", GST_TYPE_TRACER_VALUE_SCOPE,
      GST_TRACER_VALUE_SCOPE_ELEMENT, NULL);
}

static void
gst_spdl_stats_tracer_class_init (GstSpdlStatsTracerClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);

  gobject_class->constructed = gst_spdl_stats_tracer_constructed;
  gobject_class->finalize = gst_spdl_stats_tracer_finalize;

  element_record = gst_tracer_record_new ("spdlstats-element.class",
      "element", GST_TYPE_STRUCTURE, field (G_TYPE_STRING, "element name"),
      "factory", GST_TYPE_STRUCTURE, field (G_TYPE_STRING, "element factory"),
      "buffers", GST_TYPE_STRUCTURE, field (G_TYPE_UINT64,
          "buffers pushed in the interval"),
      "rate", GST_TYPE_STRUCTURE, field (G_TYPE_DOUBLE,
          "buffers pushed per second (received per second, for a sink)"),
      "received", GST_TYPE_STRUCTURE, field (G_TYPE_UINT64,
          "buffers received in the interval"), NULL);
  queue_record = gst_tracer_record_new ("spdlstats-queue.class",
      "element", GST_TYPE_STRUCTURE, field (G_TYPE_STRING, "element name"),
      "empty", GST_TYPE_STRUCTURE, field (G_TYPE_DOUBLE,
          "share of the interval the queue was empty"),
      "full", GST_TYPE_STRUCTURE, field (G_TYPE_DOUBLE,
          "share of the interval the queue was full"), NULL);
  total_record = gst_tracer_record_new ("spdlstats-total.class",
      "element", GST_TYPE_STRUCTURE, field (G_TYPE_STRING, "element name"),
      "factory", GST_TYPE_STRUCTURE, field (G_TYPE_STRING, "element factory"),
      "buffers", GST_TYPE_STRUCTURE, field (G_TYPE_UINT64,
          "buffers pushed in the pipeline's run"),
      "rate", GST_TYPE_STRUCTURE, field (G_TYPE_DOUBLE,
          "buffers pushed per second (received per second, for a sink)"),
      "received", GST_TYPE_STRUCTURE, field (G_TYPE_UINT64,
          "buffers received in the pipeline's run"),
      "seconds", GST_TYPE_STRUCTURE, field (G_TYPE_DOUBLE,
          "length of the run: from READY to PAUSED until EOS or the stop"),
      NULL);
  GST_OBJECT_FLAG_SET (element_record, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  GST_OBJECT_FLAG_SET (queue_record, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  GST_OBJECT_FLAG_SET (total_record, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  pipeline_run_quark = g_quark_from_static_string ("spdlstats-pipeline-run");
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
  gst_tracing_register_hook (tracer, "element-change-state-pre",
      G_CALLBACK (do_change_state_pre));
  gst_tracing_register_hook (tracer, "element-change-state-post",
      G_CALLBACK (do_change_state_post));
  gst_tracing_register_hook (tracer, "element-post-message-pre",
      G_CALLBACK (do_post_message_pre));
}
