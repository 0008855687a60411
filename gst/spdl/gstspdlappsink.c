/* GStreamer SPDL plugin: application sink for batches
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/**
 * SECTION:element-spdlappsink
 * @title: spdlappsink
 *
 * A #GstAppSink for training loops: everything appsink offers still works,
 * with the defaults a loader needs (sync=false, a bounded prefetch of
 * max-buffers=4 batches, never drop, no last-sample kept), plus:
 *
 * - the "try-pull-batch" and "pull-batch" action signals, which return a
 *   #GstSample per batch and, at the end of each epoch, a #GstSample without
 *   buffer whose info structure is the "spdl-epoch-end" structure (typed
 *   for language bindings, unlike appsink's try-pull-object);
 * - #GstSpdlAppSink:tensors, a description of the current batch's tensors
 *   (name, dtype, shape outermost first, device);
 * - #GstSpdlAppSink:stats: batches delivered and how long the consumer
 *   waited for them (zero wait: the loader keeps up with training). Pulls
 *   through the action signals are counted.
 * - #GstSpdlAppSink:resume-state: where to restart so that the batches
 *   after the last one pulled come next (checkpointing), for any number of
 *   ranks:
 *
 * |[<!-- language="C" -->
 * // after each training step, with the model's checkpoint:
 * GstStructure *state;
 * guint epoch;
 * guint64 offset;
 * g_object_get (sink, "resume-state", &state, NULL);
 * gst_structure_get (state, "epoch", G_TYPE_UINT, &epoch,
 *     "offset", G_TYPE_UINT64, &offset, NULL);
 * gst_structure_free (state);
 * // after the restart, before PAUSED (any num-shards):
 * g_object_set (src, "start-epoch", epoch, "start-offset", offset, NULL);
 * ]|
 *
 * Batches must be pulled with the "pull-batch"/"try-pull-batch" signals
 * (they see the epochs' events) from an ordered spdldecode (the default).
 * With them, the pipeline runs at most 4 epochs ahead of the application
 * even when its epochs hold no batch (drop-last with fewer samples than a
 * batch): the streaming thread waits at the end of a fifth until one of
 * the queued epoch ends is pulled. That starts with the first pull-batch
 * (one with a timeout of 0 before PLAYING returns %NULL at once and makes
 * it hold from the first epoch); appsink's own pulls drop epoch ends
 * unseen, and GStreamer 1.22's do not wake up for them: without pull-batch
 * nothing waits.
 *
 * |[
 * gst-launch-1.0 spdlsrc location=/data/val ! spdldecode width=224 \
 *     height=224 mode=center-crop resize-shorter=256 ! spdlbatch ! \
 *     spdlappsink name=sink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlappsink.h"
#include "gstspdlmeta.h"
#include "gstspdltensor.h"

enum
{
  PROP_0,
  PROP_TENSORS,
  PROP_STATS,
  PROP_RESUME_STATE,
};

enum
{
  SIGNAL_TRY_PULL_BATCH,
  SIGNAL_PULL_BATCH,
  LAST_SIGNAL
};

#define DEFAULT_MAX_BUFFERS 4
/* longest wait of a pull-batch between looks at appsink's queue */
#define PULL_SLICE_US (20 * G_TIME_SPAN_MILLISECOND)
#define CUDA_CAPS_FEATURE "memory:SpdlCUDA"

static guint signals[LAST_SIGNAL];

GST_DEBUG_CATEGORY_STATIC (spdl_app_sink_debug);
#define GST_CAT_DEFAULT spdl_app_sink_debug

#define gst_spdl_app_sink_parent_class parent_class
G_DEFINE_TYPE (GstSpdlAppSink, gst_spdl_app_sink, GST_TYPE_APP_SINK);
GST_ELEMENT_REGISTER_DEFINE (spdlappsink, "spdlappsink", GST_RANK_NONE,
    GST_TYPE_SPDL_APP_SINK);

static void gst_spdl_app_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static GstSample *gst_spdl_app_sink_try_pull_batch (GstSpdlAppSink * self,
    GstClockTime timeout);
static GstSample *gst_spdl_app_sink_pull_batch (GstSpdlAppSink * self);
static GstSample *gst_spdl_app_sink_try_pull_sample (GstAppSink * appsink,
    GstClockTime timeout);
static GstSample *gst_spdl_app_sink_pull_sample (GstAppSink * appsink);
static gboolean gst_spdl_app_sink_start (GstBaseSink * sink);
static gboolean gst_spdl_app_sink_stop (GstBaseSink * sink);
static gboolean gst_spdl_app_sink_event (GstBaseSink * sink,
    GstEvent * event);
static GstFlowReturn gst_spdl_app_sink_render (GstBaseSink * sink,
    GstBuffer * buffer);
static void gst_spdl_app_sink_finalize (GObject * object);

static void
gst_spdl_app_sink_class_init (GstSpdlAppSinkClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSinkClass *basesink_class = GST_BASE_SINK_CLASS (klass);
  GstAppSinkClass *appsink_class = GST_APP_SINK_CLASS (klass);

  gobject_class->get_property = gst_spdl_app_sink_get_property;
  gobject_class->finalize = gst_spdl_app_sink_finalize;

  /**
   * GstSpdlAppSink:tensors:
   *
   * The current batch's tensors: a structure "spdl-tensors" with
   * num-tensors, and for each tensor i the string fields name-i, dtype-i,
   * shape-i ("32,224,224,3", outermost first) and device-i ("cpu" or
   * "cuda:N"). NULL before the first caps. Names are the caps' "names"
   * when spdlbatch gives them (samples with fields), else "images",
   * "labels" and "tensor"; a field's values tensor has a shape of 0 here
   * (its memory's size gives its length), and after spdlcudaupload a
   * field's values, offsets and shapes are still on the "cpu".
   */
  g_object_class_install_property (gobject_class, PROP_TENSORS,
      g_param_spec_boxed ("tensors", "Tensors",
          "Description of the current batch's tensors", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlAppSink:stats:
   *
   * "batches" and "epochs" delivered, and the consumer's waits in
   * nanoseconds: "wait-total", "wait-max", "wait-last"; and the fields
   * every spdl element has (items-in = batches received, items-out =
   * batches delivered; busy, mean, p90, p99 = the consumer's waits per
   * batch).
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Batches delivered and consumer wait times", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * GstSpdlAppSink:resume-state:
   *
   * "spdl-resume-state": "epoch" (guint) and "offset" (guint64), what
   * spdlsrc's start-epoch and start-offset must be for a new pipeline to
   * continue just after the last batch pulled (the same samples, order and
   * random crops follow, at any num-shards). Computed from spdlsrc's
   * epoch-start events and the batches' sample positions. NULL before
   * spdlsrc's first epoch reached the sink.
   */
  g_object_class_install_property (gobject_class, PROP_RESUME_STATE,
      g_param_spec_boxed ("resume-state", "Resume state",
          "spdlsrc start-epoch and start-offset that continue after the "
          "last batch pulled", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * GstSpdlAppSink::try-pull-batch:
   * @sink: the sink
   * @timeout: the longest wait, in nanoseconds
   *
   * Returns the next batch, a buffer-less sample whose info is the
   * "spdl-epoch-end" structure at the end of an epoch, or %NULL on timeout
   * or EOS.
   */
  signals[SIGNAL_TRY_PULL_BATCH] = g_signal_new ("try-pull-batch",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION, 0,
      NULL, NULL, NULL, GST_TYPE_SAMPLE, 1, GST_TYPE_CLOCK_TIME);
  /**
   * GstSpdlAppSink::pull-batch:
   * @sink: the sink
   *
   * try-pull-batch without a timeout: %NULL only at EOS or when stopped.
   */
  signals[SIGNAL_PULL_BATCH] = g_signal_new ("pull-batch",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION, 0,
      NULL, NULL, NULL, GST_TYPE_SAMPLE, 0, G_TYPE_NONE);
  g_signal_override_class_handler ("try-pull-batch", GST_TYPE_SPDL_APP_SINK,
      G_CALLBACK (gst_spdl_app_sink_try_pull_batch));
  g_signal_override_class_handler ("pull-batch", GST_TYPE_SPDL_APP_SINK,
      G_CALLBACK (gst_spdl_app_sink_pull_batch));

  appsink_class->try_pull_sample = gst_spdl_app_sink_try_pull_sample;
  appsink_class->pull_sample = gst_spdl_app_sink_pull_sample;
  basesink_class->start = GST_DEBUG_FUNCPTR (gst_spdl_app_sink_start);
  basesink_class->stop = GST_DEBUG_FUNCPTR (gst_spdl_app_sink_stop);
  basesink_class->event = GST_DEBUG_FUNCPTR (gst_spdl_app_sink_event);
  basesink_class->render = GST_DEBUG_FUNCPTR (gst_spdl_app_sink_render);

  gst_element_class_set_static_metadata (element_class,
      "SPDL application sink", "Generic/Sink",
      "Hands tensor batches to applications, with loader statistics",
      "gst-spdl authors");
  GST_DEBUG_CATEGORY_INIT (spdl_app_sink_debug, "spdlappsink", 0,
      "SPDL application sink");
}

static void
gst_spdl_app_sink_init (GstSpdlAppSink * self)
{
  /* a training loop pulls as fast as it can: no clock, bounded prefetch,
   * never drop a batch, do not keep the last one alive */
  g_object_set (self, "sync", FALSE, "max-buffers", DEFAULT_MAX_BUFFERS,
      "drop", FALSE, "enable-last-sample", FALSE, NULL);
  gst_spdl_stats_init (&self->waits);
  g_mutex_init (&self->epoch_lock);
}

static void
gst_spdl_app_sink_finalize (GObject * object)
{
  GstSpdlAppSink *self = GST_SPDL_APP_SINK (object);

  gst_clear_caps (&self->last_caps);
  gst_spdl_stats_clear (&self->waits);
  g_mutex_clear (&self->epoch_lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static GstStructure *
describe_tensors (GstSpdlAppSink * self)
{
  static const gchar *names[] = { "images", "labels" };
  GstSpdlTensorInfo t[GST_SPDL_TENSOR_MAX];
  GstStructure *s;
  GstCaps *caps;
  const gchar *caps_names;
  gchar *device, **named;
  guint n, i;

  /* the batch last pulled, else what the pad negotiated last */
  GST_OBJECT_LOCK (self);
  caps = self->last_caps ? gst_caps_ref (self->last_caps) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (caps == NULL)
    caps = gst_pad_get_current_caps (GST_BASE_SINK_PAD (self));
  n = gst_spdl_tensors_from_caps (caps, t, GST_SPDL_TENSOR_MAX);
  if (n == 0) {
    gst_clear_caps (&caps);
    return NULL;
  }
  if (gst_caps_features_contains (gst_caps_get_features (caps, 0),
          CUDA_CAPS_FEATURE)) {
    gint id = 0;
    gst_structure_get_int (gst_caps_get_structure (caps, 0), "cuda-device-id",
        &id);
    device = g_strdup_printf ("cuda:%d", id);
  } else {
    device = g_strdup ("cpu");
  }
  /* spdlbatch names its tensors in the caps when samples carry fields */
  caps_names = gst_structure_get_string (gst_caps_get_structure (caps, 0),
      "names");
  named = caps_names ? g_strsplit (caps_names, ",", -1) : NULL;
  if (named && g_strv_length (named) != n)
    g_clear_pointer (&named, g_strfreev);
  s = gst_structure_new ("spdl-tensors", "num-tensors", G_TYPE_INT, n, NULL);
  for (i = 0; i < n; i++) {
    gchar *shape = gst_spdl_tensor_shape_to_string (&t[i]);
    gchar *key;

    key = g_strdup_printf ("name-%u", i);
    gst_structure_set (s, key, G_TYPE_STRING, named ? named[i] : i < 2 ?
        names[i] : "tensor", NULL);
    g_free (key);
    key = g_strdup_printf ("dtype-%u", i);
    gst_structure_set (s, key, G_TYPE_STRING, gst_spdl_dtype_name (t[i].dtype),
        NULL);
    g_free (key);
    key = g_strdup_printf ("shape-%u", i);
    gst_structure_set (s, key, G_TYPE_STRING, shape, NULL);
    g_free (key);
    key = g_strdup_printf ("device-%u", i);
    gst_structure_set (s, key, G_TYPE_STRING, named &&
        (g_str_has_suffix (named[i], "/values") ||
            g_str_has_suffix (named[i], "/offsets") ||
            g_str_has_suffix (named[i], "/shapes")) ? "cpu" : device, NULL);
    g_free (key);
    g_free (shape);
  }
  g_free (device);
  g_strfreev (named);
  gst_caps_unref (caps);
  return s;
}

static void
gst_spdl_app_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstSpdlAppSink *self = GST_SPDL_APP_SINK (object);

  switch (prop_id) {
    case PROP_TENSORS:
      g_value_take_boxed (value, describe_tensors (self));
      break;
    case PROP_STATS:{
      GstStructure *st = gst_spdl_stats_to_structure (&self->waits);
      GST_OBJECT_LOCK (self);
      gst_structure_set (st, "batches", G_TYPE_UINT64, self->batches,
          "epochs", G_TYPE_UINT64, self->epochs,
          "wait-total", G_TYPE_UINT64, self->wait_total,
          "wait-max", G_TYPE_UINT64, self->wait_max,
          "wait-last", G_TYPE_UINT64, self->wait_last, NULL);
      GST_OBJECT_UNLOCK (self);
      g_value_take_boxed (value, st);
      break;
    }
    case PROP_RESUME_STATE:
      GST_OBJECT_LOCK (self);
      if (self->have_resume)
        g_value_take_boxed (value, gst_structure_new ("spdl-resume-state",
                "epoch", G_TYPE_UINT, self->resume_epoch,
                "offset", G_TYPE_UINT64, self->resume_offset, NULL));
      else
        g_value_set_boxed (value, NULL);
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

/* ------------------------------------------------------------------------ */
/* Where a resumed run starts: after the last batch pulled                  */

static void
set_resume (GstSpdlAppSink * self, guint epoch, guint64 offset)
{
  GST_OBJECT_LOCK (self);
  self->resume_epoch = epoch;
  self->resume_offset = offset;
  self->have_resume = TRUE;
  GST_OBJECT_UNLOCK (self);
}

/* spdlsrc's plan for the epoch: its share, offset and this rank */
static void
track_epoch_start (GstSpdlAppSink * self, const GstStructure * s)
{
  GstSpdlEpochPlan *plan = &self->plan;

  plan->valid = gst_structure_get (s, "epoch", G_TYPE_UINT, &plan->epoch,
      "samples", G_TYPE_UINT64, &plan->samples,
      "offset", G_TYPE_UINT64, &plan->offset,
      "num-shards", G_TYPE_UINT, &plan->num_shards,
      "shard-index", G_TYPE_UINT, &plan->shard_index, NULL) &&
      plan->num_shards > 0;
  if (plan->valid)
    set_resume (self, plan->epoch, plan->offset);
}

/* After a batch whose last sample is this rank's k-th of the epoch, the
 * first offset + (k + 1) x num-shards samples of it are consumed. */
static void
track_batch (GstSpdlAppSink * self, GstSample * sample)
{
  GstSpdlEpochPlan *plan = &self->plan;
  GstBuffer *buffer = gst_sample_get_buffer (sample);
  GstCustomMeta *meta = buffer ? gst_buffer_get_custom_meta (buffer,
      GST_SPDL_BATCH_META_NAME) : NULL;
  guint64 position, k;
  guint epoch;

  /* spdlsrc's batched order (buckets): the batch says where */
  if (plan->valid && buffer &&
      gst_spdl_buffer_get_batch_resume (buffer, &epoch, &position)) {
    set_resume (self, epoch, position);
    return;
  }
  if (!plan->valid || meta == NULL ||
      !gst_structure_get (gst_custom_meta_get_structure (meta),
          "epoch", G_TYPE_UINT, &epoch, "position", G_TYPE_UINT64, &position,
          NULL) || epoch != plan->epoch ||
      position < plan->offset + plan->shard_index)
    return;
  k = (position - plan->offset - plan->shard_index) / plan->num_shards;
  if (k + 1 >= plan->samples)
    set_resume (self, epoch + 1, 0);
  else
    set_resume (self, epoch, plan->offset + (k + 1) * plan->num_shards);
}

static gboolean
gst_spdl_app_sink_start (GstBaseSink * sink)
{
  GstSpdlAppSink *self = GST_SPDL_APP_SINK (sink);

  GST_OBJECT_LOCK (self);
  self->batches = self->epochs = 0;
  self->wait_total = self->wait_max = self->wait_last = 0;
  gst_clear_caps (&self->last_caps);
  self->pending_wait = 0;
  self->have_resume = FALSE;
  self->plan.valid = FALSE;
  GST_OBJECT_UNLOCK (self);
  gst_spdl_stats_reset (&self->waits);
  return GST_BASE_SINK_CLASS (parent_class)->start (sink);
}

/* A run is over: the next one waits for a pull-batch consumer again (one
 * that pulls before PLAYING is seen before the start) */
static gboolean
gst_spdl_app_sink_stop (GstBaseSink * sink)
{
  GstSpdlAppSink *self = GST_SPDL_APP_SINK (sink);

  g_mutex_lock (&self->epoch_lock);
  self->batch_consumer = FALSE;
  g_mutex_unlock (&self->epoch_lock);
  return GST_BASE_SINK_CLASS (parent_class)->stop (sink);
}

/* An epoch end left appsink's queue: pulled, dropped unseen by
 * pull-sample, or flushed. Holds a ref of the sink from queueing. */
static void
epoch_end_released (gpointer data, GstMiniObject * where_the_event_was)
{
  GstSpdlAppSink *self = data;

  g_mutex_lock (&self->epoch_lock);
  if (self->epochs_queued > 0)
    self->epochs_queued--;
  g_mutex_unlock (&self->epoch_lock);
  gst_object_unref (self);
}

/* Streaming thread (PREROLL_LOCK held), before @event (an epoch end) is
 * queued: for a pull-batch consumer, waits while the queue holds the most
 * allowed; counts it until it is released. The wait is on basesink's
 * preroll condition, in slices, so that the PREROLL_LOCK is free for state
 * changes (pausing, playing) and flushes meanwhile; nothing signals it when
 * room is made (a signal there would end a wait for PLAYING). FALSE when
 * flushing or stopping. */
static gboolean
queue_epoch_end (GstSpdlAppSink * self, GstEvent * event)
{
  GstBaseSink *sink = GST_BASE_SINK (self);

  for (;;) {
    gboolean room;

    if (sink->flushing)
      return FALSE;
    g_mutex_lock (&self->epoch_lock);
    room = !self->batch_consumer ||
        self->epochs_queued < GST_SPDL_APP_SINK_MAX_EPOCHS;
    if (room)
      self->epochs_queued++;
    g_mutex_unlock (&self->epoch_lock);
    if (room)
      break;
    GST_BASE_SINK_PREROLL_WAIT_UNTIL (sink, g_get_monotonic_time () +
        PULL_SLICE_US);
  }
  gst_mini_object_weak_ref (GST_MINI_OBJECT (event), epoch_end_released,
      gst_object_ref (self));
  return TRUE;
}

static gboolean
gst_spdl_app_sink_event (GstBaseSink * sink, GstEvent * event)
{
  GstSpdlAppSink *self = GST_SPDL_APP_SINK (sink);

  if (gst_spdl_is_epoch_end_event (event) && !queue_epoch_end (self, event)) {
    gst_event_unref (event);
    return FALSE;
  }
  return GST_BASE_SINK_CLASS (parent_class)->event (sink, event);
}

static GstFlowReturn
gst_spdl_app_sink_render (GstBaseSink * sink, GstBuffer * buffer)
{
  GstSpdlAppSink *self = GST_SPDL_APP_SINK (sink);

  gst_spdl_stats_add_in (&self->waits, 1);
  return GST_BASE_SINK_CLASS (parent_class)->render (sink, buffer);
}

static void
account (GstSpdlAppSink * self, gint64 start_us, GstSample * batch,
    gboolean epoch)
{
  guint64 waited = (g_get_monotonic_time () - start_us) * GST_USECOND;

  GST_OBJECT_LOCK (self);
  if (batch)
    gst_caps_replace (&self->last_caps, gst_sample_get_caps (batch));
  self->wait_total += waited;
  self->wait_last = waited;
  self->wait_max = MAX (self->wait_max, waited);
  self->batches += batch != NULL;
  self->epochs += epoch;
  GST_OBJECT_UNLOCK (self);
  /* a consumer polling with timeouts waited for the batch all along */
  if (batch) {
    GST_OBJECT_LOCK (self);
    waited += self->pending_wait;
    self->pending_wait = 0;
    GST_OBJECT_UNLOCK (self);
    gst_spdl_stats_add_out (&self->waits, 1);
    gst_spdl_stats_record (&self->waits, waited);
  } else if (!epoch) {
    GST_OBJECT_LOCK (self);
    self->pending_wait += waited;
    GST_OBJECT_UNLOCK (self);
  }
}

/* appsink's next object within @deadline (monotonic us, G_MAXINT64: none),
 * waiting in slices: GStreamer 1.22's appsink does not wake a waiting pull
 * for a queued event, and an epoch end may be all that comes. NULL at the
 * deadline, EOS or when stopping or flushing. */
static GstMiniObject *
pull_object_until (GstSpdlAppSink * self, gint64 deadline)
{
  for (;;) {
    gint64 now = g_get_monotonic_time ();
    gint64 slice = MIN (deadline - now, PULL_SLICE_US);
    GstMiniObject *obj;

    obj = gst_app_sink_try_pull_object (GST_APP_SINK (self),
        MAX (slice, 0) * GST_USECOND);
    if (obj != NULL || slice <= 0)
      return obj;
    /* back before the slice ended: EOS, stopping or flushing */
    if (g_get_monotonic_time () - now < slice)
      return NULL;
  }
}

static GstSample *
gst_spdl_app_sink_try_pull_batch (GstSpdlAppSink * self, GstClockTime timeout)
{
  gint64 start = g_get_monotonic_time ();
  gint64 deadline = GST_CLOCK_TIME_IS_VALID (timeout) ?
      start + (gint64) (timeout / GST_USECOND) : G_MAXINT64;

  /* this consumer pulls every epoch end: the pipeline may wait for it */
  g_mutex_lock (&self->epoch_lock);
  self->batch_consumer = TRUE;
  g_mutex_unlock (&self->epoch_lock);
  for (;;) {
    GstMiniObject *obj = pull_object_until (self, deadline);

    if (obj == NULL) {
      account (self, start, NULL, FALSE);
      return NULL;
    }
    if (GST_IS_SAMPLE (obj)) {
      account (self, start, GST_SAMPLE (obj), FALSE);
      track_batch (self, GST_SAMPLE (obj));
      return GST_SAMPLE (obj);
    }
    if (GST_IS_EVENT (obj) && gst_spdl_is_epoch_start_event (GST_EVENT (obj)))
      track_epoch_start (self, gst_event_get_structure (GST_EVENT (obj)));
    if (GST_IS_EVENT (obj) && gst_spdl_is_epoch_end_event (GST_EVENT (obj))) {
      GstStructure *info =
          gst_structure_copy (gst_event_get_structure (GST_EVENT (obj)));
      guint epoch;
      gst_mini_object_unref (obj);
      account (self, start, NULL, TRUE);
      if (gst_structure_get_uint (info, "epoch", &epoch))
        set_resume (self, epoch + 1, 0);
      return gst_sample_new (NULL, NULL, NULL, info);
    }
    /* other serialized events mean nothing to a training loop */
    gst_mini_object_unref (obj);
  }
}

static GstSample *
gst_spdl_app_sink_pull_batch (GstSpdlAppSink * self)
{
  return gst_spdl_app_sink_try_pull_batch (self, GST_CLOCK_TIME_NONE);
}

/* appsink's own pull signals are counted too */
static GstSample *
gst_spdl_app_sink_try_pull_sample (GstAppSink * appsink, GstClockTime timeout)
{
  gint64 start = g_get_monotonic_time ();
  GstSample *sample = gst_app_sink_try_pull_sample (appsink, timeout);

  account (GST_SPDL_APP_SINK (appsink), start, sample, FALSE);
  return sample;
}

static GstSample *
gst_spdl_app_sink_pull_sample (GstAppSink * appsink)
{
  return gst_spdl_app_sink_try_pull_sample (appsink, GST_CLOCK_TIME_NONE);
}
