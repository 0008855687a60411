/* GStreamer SPDL: base class of the parallel sample decoders
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

#include "gstspdlparalleldecoder.h"
#include "gstspdlheldevents.h"
#include "gstspdlworkqueue.h"
#include "gstspdlmeta.h"
#include "gstspdlrecord.h"

#define DEFAULT_THREADS 0
#define DEFAULT_MAX_ERRORS -1
#define DEFAULT_WARNING_LIMIT 20
/* inputs in flight per thread, unless the class says: order is kept
 * while a long one decodes */
#define DEFAULT_JOBS_PER_THREAD 2

GST_DEBUG_CATEGORY_STATIC (spdl_parallel_decoder_debug);
#define GST_CAT_DEFAULT spdl_parallel_decoder_debug

/* A job or a serialized event, in arrival order; the job is the class's
 * job_size. */
typedef struct
{
  GstSpdlWorkItem head;
  GstSpdlParallelDecoder *owner;        /* not a reference: its clear_job */
  GstSpdlParallelDecoderJob job;
} Item;

#define DEFAULT_ORDERED TRUE
#define DEFAULT_SKIP_RECOVERED FALSE

typedef struct
{
  GstPad *sinkpad;
  GstPad *srcpad;

  /* properties, under the object lock */
  guint threads;
  gint max_errors;
  guint warning_limit;
  gboolean skip_recovered;
  guint max_in_flight;          /* 0: the class's count per thread */
  gboolean ordered;
  GstSpdlDecodeTally tally;
  guint64 outputs;              /* pushed */
  GstSpdlStats stats;

  GstSpdlWorkQueue queue;
  guint64 next_index;           /* stream thread */
  gint spans_fatal;             /* atomic: the input caps' span-policy */
  guint n_workers;

  /* source task only */
  GstSpdlHeldEvents held;
} GstSpdlParallelDecoderPrivate;

static GstElementClass *parent_class = NULL;
static gint private_offset = 0;

static void gst_spdl_parallel_decoder_class_init (GstSpdlParallelDecoderClass
    * klass);
static void gst_spdl_parallel_decoder_init (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderClass * klass);

static void
class_init_func (gpointer g_class, gpointer data)
{
  gst_spdl_parallel_decoder_class_init (g_class);
}

static void
instance_init_func (GTypeInstance * instance, gpointer g_class)
{
  gst_spdl_parallel_decoder_init ((GstSpdlParallelDecoder *) instance,
      g_class);
}

/* By hand, as GstVideoDecoder's: the instance init needs the subclass's
 * class (its pad templates), which G_DEFINE_TYPE does not pass. */
GType
gst_spdl_parallel_decoder_get_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type)) {
    static const GTypeInfo info = {
      sizeof (GstSpdlParallelDecoderClass),
      NULL,
      NULL,
      class_init_func,
      NULL,
      NULL,
      sizeof (GstSpdlParallelDecoder),
      0,
      instance_init_func,
    };
    GType t = g_type_register_static (GST_TYPE_ELEMENT,
        "GstSpdlParallelDecoder", &info, G_TYPE_FLAG_ABSTRACT);

    private_offset = g_type_add_instance_private (t,
        sizeof (GstSpdlParallelDecoderPrivate));
    g_once_init_leave (&type, t);
  }
  return type;
}

static inline GstSpdlParallelDecoderPrivate *
gst_spdl_parallel_decoder_get_instance_private (GstSpdlParallelDecoder * self)
{
  return G_STRUCT_MEMBER_P (self, private_offset);
}

#define PRIV(self) ((GstSpdlParallelDecoderPrivate *) \
    gst_spdl_parallel_decoder_get_instance_private (self))
#define CLASS(self) GST_SPDL_PARALLEL_DECODER_GET_CLASS (self)

static void gst_spdl_parallel_decoder_finalize (GObject * object);
static GstStateChangeReturn gst_spdl_parallel_decoder_change_state (GstElement
    * element, GstStateChange transition);
static GstFlowReturn gst_spdl_parallel_decoder_chain (GstPad * pad,
    GstObject * parent, GstBuffer * buffer);
static gboolean gst_spdl_parallel_decoder_sink_event (GstPad * pad,
    GstObject * parent, GstEvent * event);
static gboolean gst_spdl_parallel_decoder_sink_query (GstPad * pad,
    GstObject * parent, GstQuery * query);
static gboolean gst_spdl_parallel_decoder_src_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active);
static gboolean gst_spdl_parallel_decoder_sink_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active);
static void gst_spdl_parallel_decoder_loop (GstSpdlParallelDecoder * self);
static gboolean gst_spdl_parallel_decoder_src_query (GstPad * pad,
    GstObject * parent, GstQuery * query);
static void item_free (gpointer item);
static gboolean check_fields (GstSpdlParallelDecoder * self, GstCaps * caps);
static GstFlowReturn default_push_output (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderJob * job, GstBuffer * output);

static void
gst_spdl_parallel_decoder_class_init (GstSpdlParallelDecoderClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  parent_class = g_type_class_peek_parent (klass);
  if (private_offset != 0)
    g_type_class_adjust_private_offset (klass, &private_offset);
  GST_DEBUG_CATEGORY_INIT (spdl_parallel_decoder_debug,
      "spdlparalleldecoder", 0, "SPDL parallel decoder base class");

  gobject_class->finalize = gst_spdl_parallel_decoder_finalize;
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_spdl_parallel_decoder_change_state);
  klass->item_name = "sample";
  klass->skipped_words = "skipped";
  klass->recovered_how = "FFmpeg decodes it";
  klass->set_sink_caps = check_fields;
  klass->push_output = default_push_output;
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_PARALLEL_DECODER, 0);
}

static void
gst_spdl_parallel_decoder_init (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderClass * klass)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstPadTemplate *templ;

  templ = gst_element_class_get_pad_template (element_class, "sink");
  g_return_if_fail (templ != NULL);
  priv->sinkpad = gst_pad_new_from_template (templ, "sink");
  gst_pad_set_chain_function (priv->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_parallel_decoder_chain));
  gst_pad_set_event_function (priv->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_parallel_decoder_sink_event));
  gst_pad_set_query_function (priv->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_parallel_decoder_sink_query));
  gst_pad_set_activatemode_function (priv->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_parallel_decoder_sink_activate_mode));
  gst_element_add_pad (GST_ELEMENT (self), priv->sinkpad);

  templ = gst_element_class_get_pad_template (element_class, "src");
  g_return_if_fail (templ != NULL);
  priv->srcpad = gst_pad_new_from_template (templ, "src");
  gst_pad_set_activatemode_function (priv->srcpad,
      GST_DEBUG_FUNCPTR (gst_spdl_parallel_decoder_src_activate_mode));
  gst_pad_set_query_function (priv->srcpad,
      GST_DEBUG_FUNCPTR (gst_spdl_parallel_decoder_src_query));
  gst_pad_use_fixed_caps (priv->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), priv->srcpad);
  priv->held.srcpad = priv->srcpad;

  priv->threads = DEFAULT_THREADS;
  priv->max_errors = DEFAULT_MAX_ERRORS;
  priv->warning_limit = DEFAULT_WARNING_LIMIT;
  priv->skip_recovered = DEFAULT_SKIP_RECOVERED;
  priv->ordered = DEFAULT_ORDERED;
  gst_spdl_stats_init (&priv->stats);
  gst_spdl_work_queue_init (&priv->queue, item_free);
}

static void
gst_spdl_parallel_decoder_finalize (GObject * object)
{
  GstSpdlParallelDecoderPrivate *priv =
      PRIV (GST_SPDL_PARALLEL_DECODER (object));

  gst_spdl_stats_clear (&priv->stats);
  gst_spdl_work_queue_clear (&priv->queue);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ------------------------------------------------------------------------ */
/* Properties                                                               */

/**
 * gst_spdl_parallel_decoder_class_install_properties:
 * @klass: the subclass's class
 * @first_prop_id: the first id after the subclass's own
 * @blurbs: the descriptions, in the subclass's words
 *
 * Installs threads, max-errors, warning-limit, errors, error-counts and
 * stats on @klass (so they read as the element's own), and clips,
 * decoded, recovered, skip-recovered, max-in-flight and ordered where
 * @blurbs describes them, at ids
 * @first_prop_id + GST_SPDL_PARALLEL_DECODER_PROP_*.
 */
/**
 * gst_spdl_parallel_decoder_class_install_property:
 * @klass: the subclass's class
 * @first_prop_id: the first id after the subclass's own
 * @id: which, a GST_SPDL_PARALLEL_DECODER_PROP_*
 * @blurb: its description, in the subclass's words
 *
 * Installs one of the shared properties on @klass (so it reads as the
 * element's own) at id @first_prop_id + @id.
 */
void
gst_spdl_parallel_decoder_class_install_property (GObjectClass * klass,
    guint first_prop_id, guint id, const gchar * blurb)
{
  GstSpdlParallelDecoderClass *decoder_class =
      GST_SPDL_PARALLEL_DECODER_CLASS (klass);
  const GParamFlags readable = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  const GParamFlags playing = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_PLAYING;
  const GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;
  GParamSpec *pspec;

  switch (id) {
    case GST_SPDL_PARALLEL_DECODER_PROP_THREADS:
      pspec = g_param_spec_uint ("threads", "Threads", blurb, 0, 256,
          DEFAULT_THREADS, ready);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_MAX_ERRORS:
      pspec = g_param_spec_int ("max-errors", "Max errors", blurb, -1,
          G_MAXINT, DEFAULT_MAX_ERRORS, playing);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_WARNING_LIMIT:
      pspec = g_param_spec_uint ("warning-limit", "Warning limit", blurb, 0,
          G_MAXUINT, DEFAULT_WARNING_LIMIT, playing);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_ERRORS:
      pspec = g_param_spec_uint64 ("errors", "Errors", blurb, 0,
          G_MAXUINT64, 0, readable);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_ERROR_COUNTS:
      pspec = g_param_spec_boxed ("error-counts", "Error counts", blurb,
          GST_TYPE_STRUCTURE, readable);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_CLIPS:
      pspec = g_param_spec_uint64 ("clips", "Clips", blurb, 0, G_MAXUINT64,
          0, readable);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_STATS:
      pspec = g_param_spec_boxed ("stats", "Statistics", blurb,
          GST_TYPE_STRUCTURE, readable);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_DECODED:
      pspec = g_param_spec_uint64 ("decoded", "Decoded", blurb, 0,
          G_MAXUINT64, 0, readable);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_RECOVERED:
      pspec = g_param_spec_uint64 ("recovered", "Recovered", blurb, 0,
          G_MAXUINT64, 0, readable);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_SKIP_RECOVERED:
      pspec = g_param_spec_boolean ("skip-recovered", "Skip recovered",
          blurb, DEFAULT_SKIP_RECOVERED, playing);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_MAX_IN_FLIGHT:
      pspec = g_param_spec_uint ("max-in-flight", "Max in flight", blurb, 0,
          65536, 0, ready);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_ORDERED:
      pspec = g_param_spec_boolean ("ordered", "Ordered", blurb,
          DEFAULT_ORDERED, ready);
      break;
    default:
      g_return_if_reached ();
  }
  decoder_class->first_prop_id = first_prop_id;
  decoder_class->shared_props |= 1u << id;
  g_object_class_install_property (klass, first_prop_id + id, pspec);
}

/**
 * gst_spdl_parallel_decoder_class_install_properties:
 * @klass: the subclass's class
 * @first_prop_id: the first id after the subclass's own
 * @blurbs: the descriptions, in the subclass's words
 *
 * Installs threads, max-errors, warning-limit, errors, error-counts, clips
 * and stats on @klass (so they read as the element's own), at ids
 * @first_prop_id + GST_SPDL_PARALLEL_DECODER_PROP_*.
 */
void
gst_spdl_parallel_decoder_class_install_properties (GObjectClass * klass,
    guint first_prop_id, const GstSpdlParallelDecoderBlurbs * blurbs)
{
  const struct
  {
    guint id;
    const gchar *blurb;
  } props[] = {
    {GST_SPDL_PARALLEL_DECODER_PROP_THREADS, blurbs->threads},
    {GST_SPDL_PARALLEL_DECODER_PROP_MAX_ERRORS, blurbs->max_errors},
    {GST_SPDL_PARALLEL_DECODER_PROP_WARNING_LIMIT,
        "Per-sample warnings posted per epoch (the rest are counted)"},
    {GST_SPDL_PARALLEL_DECODER_PROP_ERRORS, blurbs->errors},
    {GST_SPDL_PARALLEL_DECODER_PROP_ERROR_COUNTS, blurbs->error_counts},
    {GST_SPDL_PARALLEL_DECODER_PROP_CLIPS, "Clips pushed so far"},
    {GST_SPDL_PARALLEL_DECODER_PROP_STATS, blurbs->stats},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (props); i++)
    gst_spdl_parallel_decoder_class_install_property (klass, first_prop_id,
        props[i].id, props[i].blurb);
}

/* @prop_id as one of the shared properties, or -1 */
static gint
shared_prop (GParamSpec * pspec, guint prop_id)
{
  GstSpdlParallelDecoderClass *klass = g_type_class_peek (pspec->owner_type);
  guint first;

  if (klass == NULL || !g_type_is_a (pspec->owner_type,
          GST_TYPE_SPDL_PARALLEL_DECODER))
    return -1;
  first = klass->first_prop_id;
  if (first == 0 || prop_id < first ||
      prop_id >= first + GST_SPDL_PARALLEL_DECODER_N_PROPS)
    return -1;
  return prop_id - first;
}

/**
 * gst_spdl_parallel_decoder_set_property:
 *
 * Sets one of the shared properties; FALSE if @prop_id is not one.
 * Called from the subclass's set_property (without the object lock).
 */
gboolean
gst_spdl_parallel_decoder_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstSpdlParallelDecoderPrivate *priv =
      PRIV (GST_SPDL_PARALLEL_DECODER (object));

  switch (shared_prop (pspec, prop_id)) {
    case GST_SPDL_PARALLEL_DECODER_PROP_THREADS:
      GST_OBJECT_LOCK (object);
      priv->threads = g_value_get_uint (value);
      GST_OBJECT_UNLOCK (object);
      return TRUE;
    case GST_SPDL_PARALLEL_DECODER_PROP_MAX_ERRORS:
      GST_OBJECT_LOCK (object);
      priv->max_errors = g_value_get_int (value);
      GST_OBJECT_UNLOCK (object);
      return TRUE;
    case GST_SPDL_PARALLEL_DECODER_PROP_WARNING_LIMIT:
      GST_OBJECT_LOCK (object);
      priv->warning_limit = g_value_get_uint (value);
      GST_OBJECT_UNLOCK (object);
      return TRUE;
    case GST_SPDL_PARALLEL_DECODER_PROP_SKIP_RECOVERED:
      GST_OBJECT_LOCK (object);
      priv->skip_recovered = g_value_get_boolean (value);
      GST_OBJECT_UNLOCK (object);
      return TRUE;
    case GST_SPDL_PARALLEL_DECODER_PROP_MAX_IN_FLIGHT:
      GST_OBJECT_LOCK (object);
      priv->max_in_flight = g_value_get_uint (value);
      GST_OBJECT_UNLOCK (object);
      return TRUE;
    case GST_SPDL_PARALLEL_DECODER_PROP_ORDERED:
      GST_OBJECT_LOCK (object);
      priv->ordered = g_value_get_boolean (value);
      GST_OBJECT_UNLOCK (object);
      return TRUE;
    default:
      return FALSE;
  }
}

/* called with the object lock */
static GstStructure *
stats_new (GstSpdlParallelDecoder * self)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  GstSpdlParallelDecoderClass *klass = CLASS (self);
  GstStructure *s = gst_spdl_stats_to_structure (&priv->stats);
  guint threads = priv->n_workers;

  gst_structure_set (s, "threads", G_TYPE_UINT, threads, NULL);
  if (klass->shared_props & 1u << GST_SPDL_PARALLEL_DECODER_PROP_CLIPS)
    gst_structure_set (s, "clips", G_TYPE_UINT64, priv->outputs, NULL);
  if (klass->shared_props & 1u << GST_SPDL_PARALLEL_DECODER_PROP_MAX_IN_FLIGHT) {
    guint64 busy = 0, elapsed = 0;

    gst_structure_get_uint64 (s, "busy", &busy);
    gst_structure_get_uint64 (s, "elapsed", &elapsed);
    g_mutex_lock (&priv->queue.lock);
    gst_structure_set (s, "utilisation", G_TYPE_DOUBLE, threads && elapsed ?
        MIN (1.0, (gdouble) busy / ((gdouble) threads * elapsed)) : 0.0,
        "in-flight", G_TYPE_UINT, priv->queue.in_flight,
        "max-in-flight", G_TYPE_UINT, priv->queue.max_in_flight, NULL);
    g_mutex_unlock (&priv->queue.lock);
  }
  gst_structure_set (s, "recovered", G_TYPE_UINT64, priv->tally.recovered,
      NULL);
  if (klass->add_stats) {
    /* the live states are only read */
    g_mutex_lock (&priv->queue.lock);
    CLASS (self)->add_stats (self, s, priv->queue.states);
    g_mutex_unlock (&priv->queue.lock);
  }
  gst_spdl_decode_tally_add_skipped (&priv->tally, s);
  return s;
}

/**
 * gst_spdl_parallel_decoder_get_property:
 *
 * Reads one of the shared properties; FALSE if @prop_id is not one.
 * Called from the subclass's get_property (without the object lock).
 */
gboolean
gst_spdl_parallel_decoder_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstSpdlParallelDecoder *self = GST_SPDL_PARALLEL_DECODER (object);
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  gint id = shared_prop (pspec, prop_id);

  if (id < 0)
    return FALSE;
  GST_OBJECT_LOCK (self);
  switch (id) {
    case GST_SPDL_PARALLEL_DECODER_PROP_THREADS:
      g_value_set_uint (value, priv->threads);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_MAX_ERRORS:
      g_value_set_int (value, priv->max_errors);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_WARNING_LIMIT:
      g_value_set_uint (value, priv->warning_limit);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_ERRORS:
      g_value_set_uint64 (value, priv->tally.errors);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_ERROR_COUNTS:
      g_value_take_boxed (value,
          gst_spdl_decode_tally_error_counts (&priv->tally));
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_CLIPS:
      g_value_set_uint64 (value, priv->outputs);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_DECODED:
      g_value_set_uint64 (value, priv->tally.decoded);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_RECOVERED:
      g_value_set_uint64 (value, priv->tally.recovered);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_SKIP_RECOVERED:
      g_value_set_boolean (value, priv->skip_recovered);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_MAX_IN_FLIGHT:
      g_value_set_uint (value, priv->max_in_flight);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_ORDERED:
      g_value_set_boolean (value, priv->ordered);
      break;
    case GST_SPDL_PARALLEL_DECODER_PROP_STATS:
      g_value_take_boxed (value, stats_new (self));
      break;
    default:
      g_assert_not_reached ();
  }
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

guint64
gst_spdl_parallel_decoder_get_recovered (GstSpdlParallelDecoder * self)
{
  guint64 recovered;

  GST_OBJECT_LOCK (self);
  recovered = PRIV (self)->tally.recovered;
  GST_OBJECT_UNLOCK (self);
  return recovered;
}

gboolean
gst_spdl_parallel_decoder_spans_fatal (GstSpdlParallelDecoder * self)
{
  return g_atomic_int_get (&PRIV (self)->spans_fatal);
}

gboolean
gst_spdl_parallel_decoder_fail_span (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderJob * job, gint code, const gchar * what)
{
  const gchar *row = gst_spdl_buffer_get_manifest_row (job->input);

  if (code != GST_SPDL_DECODE_ERROR_TOO_LONG &&
      code != GST_SPDL_DECODE_ERROR_TOO_LARGE &&
      gst_spdl_parallel_decoder_spans_fatal (self))
    job->fatal = "missing-field=error on spdlsrc";
  return gst_spdl_decode_fail (&job->error, code, "%s%s%s%s", what,
      row ? " (manifest row " : "", row ? row : "", row ? ")" : "");
}

GstPad *
gst_spdl_parallel_decoder_get_srcpad (GstSpdlParallelDecoder * self)
{
  return PRIV (self)->srcpad;
}

gboolean
gst_spdl_parallel_decoder_is_ordered (GstSpdlParallelDecoder * self)
{
  gboolean ordered;

  GST_OBJECT_LOCK (self);
  ordered = PRIV (self)->ordered;
  GST_OBJECT_UNLOCK (self);
  return ordered;
}

gboolean
gst_spdl_parallel_decoder_count_warning (GstSpdlParallelDecoder * self,
    guint epoch)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  gboolean post;

  GST_OBJECT_LOCK (self);
  priv->tally.warn_limiter.limit = priv->warning_limit;
  post = gst_spdl_warn_limiter_count (&priv->tally.warn_limiter, epoch);
  GST_OBJECT_UNLOCK (self);
  return post;
}

/* ------------------------------------------------------------------------ */
/* Decoding one input (a worker thread)                                     */

static void
item_free (gpointer data)
{
  Item *item = data;

  if (item->owner && CLASS (item->owner)->clear_job)
    CLASS (item->owner)->clear_job (item->owner, &item->job);
  if (item->job.input)
    gst_buffer_unref (item->job.input);
  if (item->head.event)
    gst_event_unref (item->head.event);
  g_list_free_full (item->job.outputs, (GDestroyNotify) gst_buffer_unref);
  g_clear_error (&item->job.error);
  g_free (item);
}

/* Runs in a pool thread: the subclass decodes the job. */
static void
decode_item (gpointer user_data, gpointer state, GstSpdlWorkItem * item)
{
  GstSpdlParallelDecoder *self = user_data;

  CLASS (self)->decode (self, state, &((Item *) item)->job);
}

static gboolean
start_workers (GstSpdlParallelDecoder * self)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  GstSpdlParallelDecoderClass *klass = CLASS (self);
  GError *error = NULL;
  GList *states = NULL;
  guint i, n;

  guint max_in_flight;

  GST_OBJECT_LOCK (self);
  gst_spdl_decode_tally_reset (&priv->tally, priv->warning_limit);
  priv->outputs = 0;
  n = priv->threads ? priv->threads : g_get_num_processors ();
  max_in_flight = priv->max_in_flight;
  GST_OBJECT_UNLOCK (self);
  gst_spdl_stats_reset (&priv->stats);
  if (klass->start && !klass->start (self))
    return FALSE;

  if (max_in_flight) {
    /* the user's bound, whatever the inputs' size */
    priv->queue.max_in_flight = priv->queue.base_in_flight = max_in_flight;
  } else {
    /* beyond the default per thread, only while the inputs held stay
     * within the class's bytes (without a byte bound: all of them) */
    priv->queue.max_in_flight = n * (klass->jobs_per_thread ?
        klass->jobs_per_thread : DEFAULT_JOBS_PER_THREAD);
    priv->queue.base_in_flight = klass->max_bytes_in_flight ?
        n * DEFAULT_JOBS_PER_THREAD : priv->queue.max_in_flight;
  }
  priv->queue.max_bytes_in_flight = klass->max_bytes_in_flight;
  /* a task stopped while outputting left it set: a DRAIN would wait */
  g_mutex_lock (&priv->queue.lock);
  priv->queue.outputting = FALSE;
  g_mutex_unlock (&priv->queue.lock);
  priv->next_index = 0;
  priv->n_workers = n;
  for (i = 0; i < n; i++)
    states = g_list_prepend (states, klass->create_state ?
        klass->create_state (self) : NULL);
  if (!gst_spdl_work_queue_start (&priv->queue, states, decode_item, self,
          &priv->stats, &error)) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not start %u decoding threads", n), ("%s", error->message));
    g_clear_error (&error);
    return FALSE;
  }
  GST_INFO_OBJECT (self, "%u decoding threads, %u %ss in flight", n,
      priv->queue.max_in_flight, klass->item_name);
  return TRUE;
}


static void
free_state (gpointer state, gpointer user_data)
{
  GstSpdlParallelDecoder *self = user_data;

  if (CLASS (self)->free_state)
    CLASS (self)->free_state (self, state);
}

static void
stop_workers (GstSpdlParallelDecoder * self)
{
  gst_spdl_work_queue_stop (&PRIV (self)->queue, free_state, self);
  if (CLASS (self)->stop)
    CLASS (self)->stop (self);
}

/* ------------------------------------------------------------------------ */
/* Sink side                                                                */

static gboolean
gst_spdl_parallel_decoder_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstSpdlParallelDecoder *self = GST_SPDL_PARALLEL_DECODER (parent);
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_DRAIN:
      if (!CLASS (self)->drains)
        break;
      /* serialized: all decoded and pushed, then downstream drains */
      if (!gst_spdl_work_queue_drain (&priv->queue))
        return FALSE;
      return gst_pad_peer_query (priv->srcpad, query);
    case GST_QUERY_ALLOCATION:
      return TRUE;              /* compressed input: nothing to propose */
    default:
      break;
  }
  return gst_pad_query_default (pad, parent, query);
}

static GstFlowReturn
gst_spdl_parallel_decoder_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buffer)
{
  GstSpdlParallelDecoder *self = GST_SPDL_PARALLEL_DECODER (parent);
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  GstSpdlParallelDecoderClass *klass = CLASS (self);
  Item *item = g_malloc0 (G_STRUCT_OFFSET (Item, job) +
      MAX (klass->job_size, sizeof (GstSpdlParallelDecoderJob)));
  GstSpdlSampleInfo info;
  gboolean has_info;
  GstFlowReturn ret;

  item->owner = self;
  item->job.input = buffer;
  gst_spdl_stats_add_in (&priv->stats, 1);
  has_info = gst_spdl_buffer_get_sample_info (buffer, &info);
  if (has_info) {
    item->job.index = info.index;
    item->job.epoch = info.epoch;
  } else {
    item->job.index = priv->next_index++;
  }
  item->head.input_size = gst_buffer_get_size (buffer);
  if (klass->prepare_job)
    klass->prepare_job (self, &item->job);
  ret = gst_spdl_work_queue_push_input (&priv->queue, &item->head);
  if (ret == GST_FLOW_CUSTOM_ERROR) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
        ("could not queue a %s on the decoding threads",
            CLASS (self)->item_name));
    return GST_FLOW_ERROR;
  }
  return ret;
}

static void
queue_event (GstSpdlParallelDecoderPrivate * priv, GstEvent * event)
{
  Item *item = g_new0 (Item, 1);

  item->head.event = event;
  gst_spdl_work_queue_push_event (&priv->queue, &item->head);
}

/* A record whose images or labels would go undecoded beside clips or
 * audio fails negotiation now rather than reaching a batch as bytes. */
static gboolean
check_fields (GstSpdlParallelDecoder * self, GstCaps * caps)
{
  GstSpdlRecord *record = gst_spdl_record_from_caps (caps);
  guint i;

  for (i = 0; record && i < record->n_fields; i++) {
    GstSpdlField *field = &record->fields[i];

    if (!gst_spdl_field_kind_needs_image_decoder (field->kind))
      continue;
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Field \"%s\" is %s %s: image fields need spdldecode", field->name,
            field->kind == GST_SPDL_FIELD_IMAGE ? "an" : "a",
            gst_spdl_field_kind_name (field->kind)),
        ("%s decodes no image field; fields=\"%s\"",
            GST_ELEMENT_NAME (self), gst_structure_get_string
            (gst_caps_get_structure (caps, 0), "fields")));
    gst_spdl_record_free (record);
    return FALSE;
  }
  gst_spdl_record_free (record);
  return TRUE;
}

static gboolean
gst_spdl_parallel_decoder_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstSpdlParallelDecoder *self = GST_SPDL_PARALLEL_DECODER (parent);
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      gst_spdl_work_queue_set_flushing (&priv->queue);
      if (CLASS (self)->set_flushing)
        CLASS (self)->set_flushing (self, TRUE);
      gst_pad_push_event (priv->srcpad, event);
      gst_pad_pause_task (priv->srcpad);
      return TRUE;
    case GST_EVENT_FLUSH_STOP:
      gst_spdl_work_queue_flush_stop (&priv->queue, &priv->held);
      if (CLASS (self)->set_flushing)
        CLASS (self)->set_flushing (self, FALSE);
      gst_pad_push_event (priv->srcpad, event);
      return gst_pad_start_task (priv->srcpad,
          (GstTaskFunction) gst_spdl_parallel_decoder_loop, self, NULL);
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      gboolean ok;

      /* files in; our caps follow from each output, with the record the
       * input caps describe (set_output_caps) */
      gst_event_parse_caps (event, &caps);
      g_atomic_int_set (&priv->spans_fatal, g_strcmp0 (gst_structure_get_string
              (gst_caps_get_structure (caps, 0), "span-policy"), "error") == 0);
      ok = CLASS (self)->set_sink_caps ?
          CLASS (self)->set_sink_caps (self, caps) : TRUE;
      gst_event_unref (event);
      return ok;
    }
    default:
      if (GST_EVENT_IS_SERIALIZED (event)) {
        queue_event (priv, event);
        return TRUE;
      }
      return gst_pad_event_default (pad, parent, event);
  }
}

/* ------------------------------------------------------------------------ */
/* Source side                                                              */

/**
 * gst_spdl_parallel_decoder_set_output_caps:
 *
 * Pushes @caps (not taken), then the sticky events that must follow caps
 * (segment, tags), held until the first caps. FALSE if downstream refused.
 */
gboolean
gst_spdl_parallel_decoder_set_output_caps (GstSpdlParallelDecoder * self,
    GstCaps * caps)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  GstCaps *input = gst_pad_get_current_caps (priv->sinkpad);
  gboolean ok;

  /* the record the input caps describe goes on, as the samples' values */
  caps = gst_caps_copy (caps);
  gst_spdl_record_copy_caps_field (caps, input);
  gst_clear_caps (&input);
  /* a sticky caps event is stored even when downstream refuses it (the
   * refusal would come as not-negotiated on the first push): ask first */
  ok = gst_pad_peer_query_accept_caps (priv->srcpad, caps) &&
      gst_pad_push_event (priv->srcpad, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  if (!ok)
    return FALSE;
  gst_spdl_held_events_caps_sent (&priv->held);
  return TRUE;
}

void
gst_spdl_parallel_decoder_caps_sent (GstSpdlParallelDecoder * self)
{
  gst_spdl_held_events_caps_sent (&PRIV (self)->held);
}

void
gst_spdl_parallel_decoder_forget_caps (GstSpdlParallelDecoder * self)
{
  PRIV (self)->held.caps_sent = FALSE;
}

gboolean
gst_spdl_parallel_decoder_set_tensor_caps (GstSpdlParallelDecoder * self,
    GstCaps * caps, const GstSpdlTensorInfo * first)
{
  gchar *shape;

  if (gst_spdl_parallel_decoder_set_output_caps (self, caps))
    return TRUE;
  shape = gst_spdl_tensor_shape_to_string (first);
  GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
      ("Downstream does not accept clips of shape [%s]", shape),
      ("downstream refused %" GST_PTR_FORMAT, caps));
  g_free (shape);
  return FALSE;
}

gboolean
gst_spdl_parallel_decoder_has_output_caps (GstSpdlParallelDecoder * self)
{
  return PRIV (self)->held.caps_sent;
}

/* Counts a skipped input or outputs and warns (the first warning-limit of
 * each epoch on the bus); FALSE once past max-errors or when fatal. */
static gboolean
skip_input (GstSpdlParallelDecoder * self, GstSpdlParallelDecoderJob * job)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  const gchar *item_name = CLASS (self)->item_name;
  const gchar *path = gst_spdl_buffer_get_path (job->input);
  const gchar *reason;
  guint64 errors;
  gint code, max_errors;
  gboolean post;

  if (job->fatal && CLASS (self)->post_fatal) {
    CLASS (self)->post_fatal (self, job);
    return FALSE;
  }
  if (job->fatal) {
    GST_ELEMENT_ERROR (self, STREAM, DECODE,
        ("%c%s \"%s\": %s (%s)", g_ascii_toupper (item_name[0]),
            item_name + 1, path, job->error->message, job->fatal),
        ("reason: %s", gst_spdl_decode_error_reason
            (gst_spdl_decode_error_code (job->error))));
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  post = gst_spdl_decode_tally_skip (&priv->tally, job->error, job->epoch,
      priv->warning_limit, &code, &errors);
  max_errors = priv->max_errors;
  GST_OBJECT_UNLOCK (self);
  reason = gst_spdl_decode_error_reason (code);

  if (max_errors >= 0 && errors > (guint64) max_errors) {
    GST_ELEMENT_ERROR (self, STREAM, DECODE,
        ("Could not decode %s \"%s\": %s; %" G_GUINT64_FORMAT
            " %s, more than max-errors=%d", item_name, path,
            job->error->message, errors, CLASS (self)->skipped_words,
            max_errors), ("reason: %s", reason));
    return FALSE;
  }
  if (post)
    GST_ELEMENT_WARNING (self, STREAM, DECODE,
        ("Skipping %s \"%s\": %s", item_name, path, job->error->message),
        ("reason: %s; %" G_GUINT64_FORMAT " %s so far", reason, errors,
            CLASS (self)->skipped_words));
  else
    GST_WARNING_OBJECT (self, "Skipping %s \"%s\": %s (reason %s)",
        item_name, path, job->error->message, reason);
  return TRUE;
}

/* Counts an input decoded from damaged data as the reference decoder
 * decodes it (GST_SPDL_DECODE_ERROR_RECOVERED with outputs) and warns,
 * with the skipped inputs' warnings (the first warning-limit of each
 * epoch on the bus); its outputs are pushed. */
static void
deliver_recovered (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderJob * job)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  const gchar *item_name = CLASS (self)->item_name;
  const gchar *path = gst_spdl_buffer_get_path (job->input);
  guint64 recovered;
  gboolean post;

  GST_OBJECT_LOCK (self);
  recovered = ++priv->tally.recovered;
  priv->tally.warn_limiter.limit = priv->warning_limit;
  post = gst_spdl_warn_limiter_count (&priv->tally.warn_limiter, job->epoch);
  GST_OBJECT_UNLOCK (self);

  if (post)
    GST_ELEMENT_WARNING (self, STREAM, DECODE,
        ("%c%s \"%s\" decoded from damaged data: %s",
            g_ascii_toupper (item_name[0]), item_name + 1, path,
            job->error->message),
        ("reason: %s; delivered as %s; %" G_GUINT64_FORMAT
            " recovered so far", gst_spdl_decode_error_reason
            (GST_SPDL_DECODE_ERROR_RECOVERED), CLASS (self)->recovered_how,
            recovered));
  else
    GST_WARNING_OBJECT (self, "%s \"%s\" decoded from damaged data: %s",
        item_name, path, job->error->message);
  g_clear_error (&job->error);
}

static GstFlowReturn
default_push_output (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderJob * job, GstBuffer * output)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);

  if (CLASS (self)->prepare_output &&
      !CLASS (self)->prepare_output (self, output)) {
    gst_buffer_unref (output);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GST_OBJECT_LOCK (self);
  priv->outputs++;
  GST_OBJECT_UNLOCK (self);
  return gst_pad_push (priv->srcpad, output);
}

static GstFlowReturn
push_outputs (GstSpdlParallelDecoder * self, GstSpdlParallelDecoderJob * job)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  GstSpdlParallelDecoderClass *klass = CLASS (self);
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean decoded, skip_recovered;

  if (job->outputs && job->error && gst_spdl_error_is_recovered (job->error)) {
    GST_OBJECT_LOCK (self);
    skip_recovered = priv->skip_recovered;
    GST_OBJECT_UNLOCK (self);
    /* skipped then, by the reason recovered */
    if (skip_recovered)
      g_list_free_full (g_steal_pointer (&job->outputs),
          (GDestroyNotify) gst_buffer_unref);
    else
      deliver_recovered (self, job);
  }
  if (job->error && !skip_input (self, job))
    return GST_FLOW_ERROR;
  /* a video some of whose clips were dropped (an error) still decoded */
  decoded = job->error == NULL || job->outputs;
  if (decoded) {
    GST_OBJECT_LOCK (self);
    priv->tally.decoded++;
    GST_OBJECT_UNLOCK (self);
  }
  /* items-out: the inputs decoded, or every input once output */
  if (decoded && klass->items_out_decoded)
    gst_spdl_stats_add_out (&priv->stats, 1);
  while (job->outputs && ret == GST_FLOW_OK) {
    GstBuffer *output = job->outputs->data;

    job->outputs = g_list_delete_link (job->outputs, job->outputs);
    ret = klass->push_output (self, job, output);
  }
  if (!klass->items_out_decoded)
    gst_spdl_stats_add_out (&priv->stats, 1);
  return ret;
}


static void
gst_spdl_parallel_decoder_loop (GstSpdlParallelDecoder * self)
{
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean ordered;
  Item *item;

  GST_OBJECT_LOCK (self);
  ordered = priv->ordered;
  GST_OBJECT_UNLOCK (self);
  /* the head (ordered), or the first decoded input before any event */
  item = (Item *) gst_spdl_work_queue_take (&priv->queue, ordered);
  if (item == NULL) {
    gst_pad_pause_task (priv->srcpad);
    return;
  }

  if (item->head.event) {
    gboolean is_eos = GST_EVENT_TYPE (item->head.event) == GST_EVENT_EOS;

    if (!gst_spdl_decode_tally_output_event (GST_ELEMENT (self),
            &priv->tally, item->head.event, CLASS (self)->item_name))
      ret = GST_FLOW_ERROR;
    else
      gst_spdl_held_events_push (&priv->held,
          g_steal_pointer (&item->head.event));
    if (is_eos)
      ret = GST_FLOW_EOS;
  } else {
    ret = push_outputs (self, &item->job);
  }
  item_free (item);

  if (ret != GST_FLOW_OK)
    gst_spdl_work_queue_stop_output (&priv->queue, GST_ELEMENT (self),
        priv->srcpad, ret);
}

static gboolean
gst_spdl_parallel_decoder_src_activate_mode (GstPad * pad, GstObject * parent,
    GstPadMode mode, gboolean active)
{
  GstSpdlParallelDecoder *self = GST_SPDL_PARALLEL_DECODER (parent);
  GstSpdlParallelDecoderPrivate *priv = PRIV (self);

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (active) {
    gst_spdl_work_queue_set_flowing (&priv->queue);
    return gst_pad_start_task (pad,
        (GstTaskFunction) gst_spdl_parallel_decoder_loop, self, NULL);
  }
  gst_spdl_work_queue_set_flushing (&priv->queue);
  if (CLASS (self)->set_flushing)
    CLASS (self)->set_flushing (self, TRUE);
  return gst_pad_stop_task (pad);
}

static gboolean
gst_spdl_parallel_decoder_src_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstSpdlParallelDecoder *self = GST_SPDL_PARALLEL_DECODER (parent);

  if (CLASS (self)->src_query)
    return CLASS (self)->src_query (self, query);
  return gst_pad_query_default (pad, parent, query);
}

static gboolean
gst_spdl_parallel_decoder_sink_activate_mode (GstPad * pad,
    GstObject * parent, GstPadMode mode, gboolean active)
{
  GstSpdlParallelDecoderPrivate *priv =
      PRIV (GST_SPDL_PARALLEL_DECODER (parent));

  if (mode != GST_PAD_MODE_PUSH)
    return FALSE;
  if (!active)
    gst_spdl_work_queue_set_flushing (&priv->queue);
  return TRUE;
}

static GstStateChangeReturn
gst_spdl_parallel_decoder_change_state (GstElement * element,
    GstStateChange transition)
{
  GstSpdlParallelDecoder *self = GST_SPDL_PARALLEL_DECODER (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED &&
      !start_workers (self)) {
    stop_workers (self);
    return GST_STATE_CHANGE_FAILURE;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY ||
      (transition == GST_STATE_CHANGE_READY_TO_PAUSED &&
          ret == GST_STATE_CHANGE_FAILURE)) {
    stop_workers (self);
    gst_spdl_held_events_reset (&PRIV (self)->held);
  }
  return ret;
}
