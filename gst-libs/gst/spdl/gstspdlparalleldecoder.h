/* GStreamer SPDL: base class of the parallel sample decoders
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_PARALLEL_DECODER_H__
#define __GST_SPDL_PARALLEL_DECODER_H__

#include <gst/gst.h>

#include "gstspdlerrors.h"
#include "gstspdlstats.h"
#include "gstspdltensor.h"

G_BEGIN_DECLS

/* GstSpdlParallelDecoder: what spdldecode, spdlvideodecode and
 * spdlaudiodecode share, as GstVideoDecoder is for GStreamer's decoders.
 * One input buffer (a whole file) is one job; jobs run on a GThreadPool of
 * "threads" workers, each decode using one of as many per-thread states (a
 * decoder, created at READY->PAUSED and reused from job to job); the
 * source pad's task pushes each job's outputs in input order (or, with
 * ordered=false, in completion order), with the serialized
 * events that arrived between the inputs held behind them (sticky events
 * also held until the first caps). A job's GError skips it (or some of
 * its outputs): counted by reason (gstspdlerrors.h) against max-errors,
 * warned about up to warning-limit per epoch, summed in an spdl-skipped
 * message at each epoch end and an error-counts message at EOS; one of
 * GST_SPDL_DECODE_ERROR_RECOVERED with outputs delivers them, warned
 * about and counted apart (damaged data decoded as FFmpeg decodes it).
 *
 * The subclass adds the pad templates "sink" and "src", calls
 * gst_spdl_parallel_decoder_class_install_properties() from its class_init
 * (the shared properties, with its own descriptions) and forwards the ids
 * it does not know to gst_spdl_parallel_decoder_set_property() and
 * _get_property(); it implements decode (on a worker thread) and
 * prepare_output (on the source task: caps).
 *
 * The queue of inputs and events, the threads, flushing and draining are
 * GstSpdlWorkQueue's; the skip counts are a GstSpdlDecodeTally, the events
 * held until the first caps a GstSpdlHeldEvents. spdldecode (images) is a
 * subclass too, through the hooks below: its own job fields (prepare_job:
 * format, batch slot, record), sink caps, flushing and output hooks, and
 * the properties it installs one by one (decoded, recovered,
 * skip-recovered, max-in-flight, ordered rather than clips). */

#define GST_TYPE_SPDL_PARALLEL_DECODER (gst_spdl_parallel_decoder_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstSpdlParallelDecoder, gst_spdl_parallel_decoder,
    GST, SPDL_PARALLEL_DECODER, GstElement)

/* One input and what its decode made. A subclass with fields of its own
 * (set by prepare_job) starts its job struct with this one and gives its
 * size as the class's job_size. */
typedef struct
{
  GstBuffer *input;             /* the sample, read-only */
  guint64 index;                /* from its sample meta, or its arrival */
  guint epoch;
  GList *outputs;               /* buffers to push, in order */
  GError *error;                /* the input or some outputs skipped */
  const gchar *fatal;           /* a skip that fails: the setting why */
} GstSpdlParallelDecoderJob;

/* The shared properties' descriptions, the subclass's words. */
typedef struct
{
  const gchar *threads;
  const gchar *max_errors;
  const gchar *errors;
  const gchar *error_counts;
  const gchar *stats;
} GstSpdlParallelDecoderBlurbs;

struct _GstSpdlParallelDecoderClass
{
  GstElementClass parent_class;

  /* what one input is called in messages: "video", "audio file" */
  const gchar *item_name;
  guint first_prop_id;
  /* inputs queued or decoding per thread (0: 2). Output keeps input order,
   * so a thread that finished its inputs waits while the others decode
   * a long one: more in flight when inputs' costs differ widely. Those
   * beyond 2 per thread are taken only while the inputs in flight hold
   * at most max_bytes_in_flight bytes */
  guint jobs_per_thread;
  gsize max_bytes_in_flight;
  /* the subclass's job struct (0: GstSpdlParallelDecoderJob) */
  gsize job_size;
  /* the messages' words: skipped inputs ("skipped") in the max-errors
   * error and the warnings; how a recovered input was decoded ("FFmpeg
   * decodes it") */
  const gchar *skipped_words;
  const gchar *recovered_how;
  /* a DRAIN query waits until every input before it went downstream
   * (FALSE: forwarded at once) */
  gboolean drains;
  /* stats' items-out counts the inputs decoded (FALSE: every input) */
  gboolean items_out_decoded;
  /* the installed shared properties, 1 << GST_SPDL_PARALLEL_DECODER_PROP_* */
  guint shared_props;

  /* READY->PAUSED, before the states: snapshot the properties */
  gboolean (*start) (GstSpdlParallelDecoder * self);
  /* one per thread at start, freed at stop (with the stream lock) */
  gpointer (*create_state) (GstSpdlParallelDecoder * self);
  void (*free_state) (GstSpdlParallelDecoder * self, gpointer state);
  /* PAUSED->READY (or a failed start), after the threads stopped */
  void (*stop) (GstSpdlParallelDecoder * self);
  /* the input caps (not taken); FALSE (with an error posted) refuses
   * them. The default refuses records with image fields */
  gboolean (*set_sink_caps) (GstSpdlParallelDecoder * self, GstCaps * caps);
  /* the stream thread, before the job is queued (input, index and epoch
   * set): the subclass's own job fields */
  void (*prepare_job) (GstSpdlParallelDecoder * self,
      GstSpdlParallelDecoderJob * job);
  /* the subclass's own job fields, when the job is freed */
  void (*clear_job) (GstSpdlParallelDecoder * self,
      GstSpdlParallelDecoderJob * job);
  /* flushing starts (FLUSH_START, deactivation) or stops (FLUSH_STOP):
   * what a chain may wait on besides the queue */
  void (*set_flushing) (GstSpdlParallelDecoder * self, gboolean flushing);
  /* a worker thread: fill job->outputs, or job->error */
  void (*decode) (GstSpdlParallelDecoder * self, gpointer state,
      GstSpdlParallelDecoderJob * job);
  /* the source task, before each output is pushed: caps; FALSE (with an
   * error posted) fails not-negotiated */
  gboolean (*prepare_output) (GstSpdlParallelDecoder * self,
      GstBuffer * output);
  /* the source task: pushes @output (taken) of @job; the default calls
   * prepare_output, then pushes */
  GstFlowReturn (*push_output) (GstSpdlParallelDecoder * self,
      GstSpdlParallelDecoderJob * job, GstBuffer * output);
  /* the source task: posts the error of a job whose skip fails
   * (job->fatal set); the default names the input and job->fatal */
  void (*post_fatal) (GstSpdlParallelDecoder * self,
      GstSpdlParallelDecoderJob * job);
  /* the source pad's queries (the default handler where not given) */
  gboolean (*src_query) (GstSpdlParallelDecoder * self, GstQuery * query);
  /* the object lock and stream lock held: the subclass's stats fields,
   * @states its live states */
  void (*add_stats) (GstSpdlParallelDecoder * self, GstStructure * s,
      GList * states);

  gpointer _gst_reserved[GST_PADDING];
};

/* the shared properties, after the subclass's own ids */
enum
{
  GST_SPDL_PARALLEL_DECODER_PROP_THREADS,
  GST_SPDL_PARALLEL_DECODER_PROP_MAX_ERRORS,
  GST_SPDL_PARALLEL_DECODER_PROP_WARNING_LIMIT,
  GST_SPDL_PARALLEL_DECODER_PROP_ERRORS,
  GST_SPDL_PARALLEL_DECODER_PROP_ERROR_COUNTS,
  GST_SPDL_PARALLEL_DECODER_PROP_CLIPS,
  GST_SPDL_PARALLEL_DECODER_PROP_STATS,
  GST_SPDL_PARALLEL_DECODER_PROP_DECODED,
  GST_SPDL_PARALLEL_DECODER_PROP_RECOVERED,
  GST_SPDL_PARALLEL_DECODER_PROP_SKIP_RECOVERED,
  GST_SPDL_PARALLEL_DECODER_PROP_MAX_IN_FLIGHT,
  GST_SPDL_PARALLEL_DECODER_PROP_ORDERED,
  GST_SPDL_PARALLEL_DECODER_N_PROPS,
};

void gst_spdl_parallel_decoder_class_install_properties (GObjectClass * klass,
    guint first_prop_id, const GstSpdlParallelDecoderBlurbs * blurbs);
/* one shared property (GST_SPDL_PARALLEL_DECODER_PROP_*) at
 * @first_prop_id + @id, described by @blurb: for a subclass choosing
 * which it has */
void gst_spdl_parallel_decoder_class_install_property (GObjectClass * klass,
    guint first_prop_id, guint id, const gchar * blurb);
gboolean gst_spdl_parallel_decoder_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
gboolean gst_spdl_parallel_decoder_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);

/* Inputs decoded from damaged data as the reference decoder decodes it
 * (a job's GST_SPDL_DECODE_ERROR_RECOVERED with outputs: pushed, warned
 * about, counted here, not skipped) since start */
guint64 gst_spdl_parallel_decoder_get_recovered (GstSpdlParallelDecoder *
    self);

/* Whether a manifest row's span that does not fit its file stops the
 * pipeline (the input caps' "span-policy" is "error": spdlsrc's
 * missing-field=error) rather than skipping the sample. Any thread. */
gboolean gst_spdl_parallel_decoder_spans_fatal (GstSpdlParallelDecoder *
    self);

/* A worker thread: fails @job for its span (a manifest row's, see
 * gst_spdl_buffer_get_span()) by @code with @what, the manifest row
 * named; fatal where spans_fatal(), except for too-long and too-large
 * (the decoder's limits, not the manifest's fault). FALSE. */
gboolean gst_spdl_parallel_decoder_fail_span (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderJob * job, gint code, const gchar * what);

GstPad *gst_spdl_parallel_decoder_get_srcpad (GstSpdlParallelDecoder * self);
/* the source task: pushes @caps and the sticky events held for them */
gboolean gst_spdl_parallel_decoder_set_output_caps (GstSpdlParallelDecoder *
    self, GstCaps * caps);
/* the source task: set_output_caps(), and when downstream refuses, a
 * NEGOTIATION error naming the shape of @first (the clip tensor) */
gboolean gst_spdl_parallel_decoder_set_tensor_caps (GstSpdlParallelDecoder *
    self, GstCaps * caps, const GstSpdlTensorInfo * first);
/* the source task, after pushing caps of its own: the sticky events held
 * for them follow */
void gst_spdl_parallel_decoder_caps_sent (GstSpdlParallelDecoder * self);
/* the source task: caps to be pushed again before the next output */
void gst_spdl_parallel_decoder_forget_caps (GstSpdlParallelDecoder * self);
/* whether outputs keep input order (the ordered property) */
gboolean gst_spdl_parallel_decoder_is_ordered (GstSpdlParallelDecoder * self);
/* a warning about @epoch's input counted against warning-limit: TRUE if
 * it goes on the bus, FALSE if only to the log */
gboolean gst_spdl_parallel_decoder_count_warning (GstSpdlParallelDecoder *
    self, guint epoch);
/* the source task: whether caps were pushed since start */
gboolean gst_spdl_parallel_decoder_has_output_caps (GstSpdlParallelDecoder *
    self);

G_END_DECLS

#endif /* __GST_SPDL_PARALLEL_DECODER_H__ */
