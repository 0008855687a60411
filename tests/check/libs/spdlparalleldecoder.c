/* GStreamer SPDL: unit tests of the parallel decoder base class
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

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <string.h>

#include "gstspdlmeta.h"
#include "gstspdlparalleldecoder.h"
#include "spdlcheckmain.h"

/* A decoder whose inputs say what to do: byte 0 a delay in ms, byte 1 a
 * mode, byte 2 the outputs to make. Output k of input i holds {i, k}. */
enum
{
  MODE_OK,
  MODE_SKIP,                    /* too-short */
  MODE_FATAL,                   /* too-short, with a setting that fails */
  MODE_PARTIAL,                 /* outputs kept, some dropped (corrupt) */
  MODE_RECOVERED,               /* outputs from damaged data */
};

typedef struct
{
  GstSpdlParallelDecoder parent;
  guint caps_pushed;
} TestDecoder;

typedef struct
{
  GstSpdlParallelDecoderClass parent_class;
} TestDecoderClass;

static gint states_alive;
static gint decodes_running;

GType test_decoder_get_type (void);
G_DEFINE_TYPE (TestDecoder, test_decoder, GST_TYPE_SPDL_PARALLEL_DECODER);

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS ("test/x"));

static gpointer
test_create_state (GstSpdlParallelDecoder * self)
{
  g_atomic_int_inc (&states_alive);
  return g_new0 (guint, 1);
}

static void
test_free_state (GstSpdlParallelDecoder * self, gpointer state)
{
  g_atomic_int_add (&states_alive, -1);
  g_free (state);
}

static void
test_decode (GstSpdlParallelDecoder * self, gpointer state,
    GstSpdlParallelDecoderJob * job)
{
  guint8 cmd[3];
  guint k;

  fail_unless (state != NULL);
  (*(guint *) state)++;
  g_atomic_int_inc (&decodes_running);
  fail_unless_equals_int (gst_buffer_extract (job->input, 0, cmd, 3), 3);
  g_usleep (cmd[0] * 1000);
  if (cmd[1] == MODE_SKIP || cmd[1] == MODE_FATAL) {
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TOO_SHORT,
        "the sample is short");
    if (cmd[1] == MODE_FATAL)
      job->fatal = "short=error";
  } else {
    for (k = 0; k < cmd[2]; k++) {
      guint8 out[2] = { job->index, k };
      job->outputs = g_list_append (job->outputs,
          gst_buffer_new_memdup (out, 2));
    }
    if (cmd[1] == MODE_PARTIAL)
      gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_CORRUPT,
          "an output dropped");
  }
  g_atomic_int_add (&decodes_running, -1);
}

static gboolean
test_prepare_output (GstSpdlParallelDecoder * self, GstBuffer * output)
{
  TestDecoder *t = (TestDecoder *) self;
  GstCaps *caps;
  gboolean ok;

  if (gst_spdl_parallel_decoder_has_output_caps (self))
    return TRUE;
  caps = gst_caps_new_empty_simple ("test/x");
  ok = gst_spdl_parallel_decoder_set_output_caps (self, caps);
  gst_caps_unref (caps);
  t->caps_pushed++;
  return ok;
}

static void
test_add_stats (GstSpdlParallelDecoder * self, GstStructure * s,
    GList * states)
{
  guint decoded = 0;

  for (; states; states = states->next)
    decoded += *(guint *) states->data;
  gst_structure_set (s, "decoded", G_TYPE_UINT, decoded, NULL);
}

static void
test_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  if (!gst_spdl_parallel_decoder_set_property (object, prop_id, value, pspec))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
test_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  if (!gst_spdl_parallel_decoder_get_property (object, prop_id, value, pspec))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

/* the pads and metadata every test decoder has */
static void
test_class_add_pads (GstElementClass * element_class, const gchar * longname)
{
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, longname,
      "Codec/Decoder", "Tests the parallel decoder base", "gst-spdl authors");
}

static void
test_decoder_class_init (TestDecoderClass * klass)
{
  static const GstSpdlParallelDecoderBlurbs blurbs = {
    "Test threads", "Test max errors", "Test errors", "Test error counts",
    "Test stats"
  };
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstSpdlParallelDecoderClass *decoder_class =
      GST_SPDL_PARALLEL_DECODER_CLASS (klass);

  gobject_class->set_property = test_set_property;
  gobject_class->get_property = test_get_property;
  gst_spdl_parallel_decoder_class_install_properties (gobject_class, 1,
      &blurbs);
  test_class_add_pads (element_class, "Test decoder");
  decoder_class->item_name = "test sample";
  decoder_class->create_state = test_create_state;
  decoder_class->free_state = test_free_state;
  decoder_class->decode = test_decode;
  decoder_class->prepare_output = test_prepare_output;
  decoder_class->add_stats = test_add_stats;
}

static void
test_decoder_init (TestDecoder * self)
{
}

/* A subclass with job fields of its own and the options spdldecode has:
 * each job takes a sequence number on the stream thread (prepare_job),
 * its outputs are {index, seq}, and the output hook checks it sees that
 * job. */
typedef struct
{
  GstSpdlParallelDecoderJob parent;
  guint seq;
} HookJob;

typedef struct
{
  GstSpdlParallelDecoder parent;
  guint next_seq;               /* stream thread */
  guint pushed;                 /* source task */
} HookDecoder;

typedef struct
{
  GstSpdlParallelDecoderClass parent_class;
} HookDecoderClass;

static gint hook_jobs_alive;

GType hook_decoder_get_type (void);
G_DEFINE_TYPE (HookDecoder, hook_decoder, GST_TYPE_SPDL_PARALLEL_DECODER);

static void
hook_prepare_job (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderJob * job)
{
  ((HookJob *) job)->seq = ++((HookDecoder *) self)->next_seq;
  g_atomic_int_inc (&hook_jobs_alive);
}

static void
hook_clear_job (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderJob * job)
{
  fail_unless (((HookJob *) job)->seq > 0);
  g_atomic_int_add (&hook_jobs_alive, -1);
}

static void
hook_decode (GstSpdlParallelDecoder * self, gpointer state,
    GstSpdlParallelDecoderJob * job)
{
  guint8 cmd[3];
  guint8 out[2];

  fail_unless_equals_int (gst_buffer_extract (job->input, 0, cmd, 3), 3);
  g_usleep (cmd[0] * 1000);
  if (cmd[1] == MODE_SKIP) {
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_TOO_SHORT,
        "the sample is short");
    return;
  }
  out[0] = job->index;
  out[1] = ((HookJob *) job)->seq;
  job->outputs = g_list_append (NULL, gst_buffer_new_memdup (out, 2));
  if (cmd[1] == MODE_RECOVERED)
    gst_spdl_decode_fail (&job->error, GST_SPDL_DECODE_ERROR_RECOVERED,
        "a damaged scan");
}

static GstFlowReturn
hook_push_output (GstSpdlParallelDecoder * self,
    GstSpdlParallelDecoderJob * job, GstBuffer * output)
{
  guint8 out[2];

  gst_buffer_extract (output, 0, out, 2);
  fail_unless_equals_int (out[1], ((HookJob *) job)->seq);
  if (!gst_spdl_parallel_decoder_has_output_caps (self)) {
    GstCaps *caps = gst_caps_new_empty_simple ("test/x");

    fail_unless (gst_spdl_parallel_decoder_set_output_caps (self, caps));
    gst_caps_unref (caps);
  }
  ((HookDecoder *) self)->pushed++;
  return gst_pad_push (gst_spdl_parallel_decoder_get_srcpad (self), output);
}

static void
hook_decoder_class_init (HookDecoderClass * klass)
{
  static const struct
  {
    guint id;
    const gchar *blurb;
  } props[] = {
    {GST_SPDL_PARALLEL_DECODER_PROP_THREADS, "Hook threads"},
    {GST_SPDL_PARALLEL_DECODER_PROP_MAX_ERRORS, "Hook max errors"},
    {GST_SPDL_PARALLEL_DECODER_PROP_WARNING_LIMIT, "Hook warning limit"},
    {GST_SPDL_PARALLEL_DECODER_PROP_ERRORS, "Hook errors"},
    {GST_SPDL_PARALLEL_DECODER_PROP_ERROR_COUNTS, "Hook error counts"},
    {GST_SPDL_PARALLEL_DECODER_PROP_STATS, "Hook stats"},
    {GST_SPDL_PARALLEL_DECODER_PROP_DECODED, "Hook decoded"},
    {GST_SPDL_PARALLEL_DECODER_PROP_RECOVERED, "Hook recovered"},
    {GST_SPDL_PARALLEL_DECODER_PROP_SKIP_RECOVERED, "Hook skip recovered"},
    {GST_SPDL_PARALLEL_DECODER_PROP_MAX_IN_FLIGHT, "Hook max in flight"},
    {GST_SPDL_PARALLEL_DECODER_PROP_ORDERED, "Hook ordered"},
  };
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstSpdlParallelDecoderClass *decoder_class =
      GST_SPDL_PARALLEL_DECODER_CLASS (klass);
  guint i;

  gobject_class->set_property = test_set_property;
  gobject_class->get_property = test_get_property;
  for (i = 0; i < G_N_ELEMENTS (props); i++)
    gst_spdl_parallel_decoder_class_install_property (gobject_class, 1,
        props[i].id, props[i].blurb);
  test_class_add_pads (element_class, "Hook decoder");
  decoder_class->item_name = "hook sample";
  decoder_class->jobs_per_thread = 3;
  decoder_class->job_size = sizeof (HookJob);
  decoder_class->skipped_words = "bad hook samples";
  decoder_class->recovered_how = "the hook decodes it";
  decoder_class->drains = TRUE;
  decoder_class->items_out_decoded = TRUE;
  decoder_class->prepare_job = hook_prepare_job;
  decoder_class->clear_job = hook_clear_job;
  decoder_class->decode = hook_decode;
  decoder_class->push_output = hook_push_output;
}

static void
hook_decoder_init (HookDecoder * self)
{
}

/* What left the source pad, in order: "i.k" for buffers, event names */
typedef struct
{
  GMutex lock;
  GString *seen;
} Trace;

static GstPadProbeReturn
trace_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Trace *trace = user_data;

  g_mutex_lock (&trace->lock);
  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER) {
    guint8 out[2];
    gst_buffer_extract (GST_PAD_PROBE_INFO_BUFFER (info), 0, out, 2);
    g_string_append_printf (trace->seen, "%u.%u ", out[0], out[1]);
  } else if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_EVENT_BOTH) {
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);
    const GstStructure *s = gst_event_get_structure (event);
    g_string_append_printf (trace->seen, "%s ",
        GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM && s ?
        gst_structure_get_name (s) : GST_EVENT_TYPE_NAME (event));
  }
  g_mutex_unlock (&trace->lock);
  return GST_PAD_PROBE_OK;
}

typedef struct
{
  GstHarness *h;
  GstElement *element;
  GstBus *bus;
  Trace trace;
} Fixture;

/* takes @element */
static void
fixture_init_element (Fixture * f, GstElement * element)
{
  GstPad *srcpad;

  memset (f, 0, sizeof (*f));
  g_mutex_init (&f->trace.lock);
  f->trace.seen = g_string_new (NULL);
  f->element = element;
  f->bus = gst_bus_new ();
  gst_element_set_bus (f->element, f->bus);
  srcpad = gst_spdl_parallel_decoder_get_srcpad (GST_SPDL_PARALLEL_DECODER
      (f->element));
  gst_pad_add_probe (srcpad, GST_PAD_PROBE_TYPE_DATA_DOWNSTREAM |
      GST_PAD_PROBE_TYPE_EVENT_FLUSH, trace_probe,
      &f->trace, NULL);
  f->h = gst_harness_new_with_element (f->element, "sink", "src");
  gst_harness_set_src_caps_str (f->h, "application/x-test");
}

static void
fixture_init (Fixture * f, guint threads, gint max_errors)
{
  fixture_init_element (f, g_object_new (test_decoder_get_type (),
          "threads", threads, "max-errors", max_errors, NULL));
}

static void
fixture_clear (Fixture * f)
{
  gst_harness_teardown (f->h);
  gst_bus_set_flushing (f->bus, TRUE);
  gst_object_unref (f->bus);
  gst_object_unref (f->element);
  g_string_free (f->trace.seen, TRUE);
  g_mutex_clear (&f->trace.lock);
  fail_unless_equals_int (g_atomic_int_get (&states_alive), 0);
}

static gchar *
trace_take (Fixture * f)
{
  gchar *s;

  g_mutex_lock (&f->trace.lock);
  s = g_strdup (f->trace.seen->str);
  g_string_truncate (f->trace.seen, 0);
  g_mutex_unlock (&f->trace.lock);
  return g_strchomp (s);
}

static void
push_input (Fixture * f, guint64 index, guint delay_ms, guint mode,
    guint outputs)
{
  guint8 cmd[3] = { delay_ms, mode, outputs };
  GstBuffer *buf = gst_buffer_new_memdup (cmd, 3);
  gchar *path = g_strdup_printf ("/data/s%" G_GUINT64_FORMAT, index);

  gst_spdl_buffer_add_sample_meta (buf, index, 0, 0, path);
  g_free (path);
  fail_unless_equals_int (gst_harness_push (f->h, buf), GST_FLOW_OK);
}

/* pulls events until EOS */
static void
wait_eos (Fixture * f)
{
  GstEvent *event;

  while ((event = gst_harness_pull_event (f->h)) != NULL) {
    gboolean eos = GST_EVENT_TYPE (event) == GST_EVENT_EOS;
    gst_event_unref (event);
    if (eos)
      return;
  }
  fail ("no EOS");
}

static GstMessage *
pop_message (Fixture * f, GstMessageType type)
{
  return gst_bus_pop_filtered (f->bus, type);
}

GST_START_TEST (test_order_kept_when_jobs_finish_out_of_order)
{
  Fixture f;
  GstStructure *stats;
  guint64 clips, items_out;
  guint decoded, threads;
  gchar *seen;

  fixture_init (&f, 4, -1);
  /* the first inputs take longest: they finish last */
  push_input (&f, 0, 80, MODE_OK, 2);
  push_input (&f, 1, 60, MODE_OK, 1);
  push_input (&f, 2, 40, MODE_OK, 3);
  push_input (&f, 3, 20, MODE_OK, 0);
  push_input (&f, 4, 0, MODE_OK, 1);
  gst_harness_push_event (f.h, gst_event_new_eos ());
  wait_eos (&f);
  seen = trace_take (&f);
  fail_unless_equals_string (seen, "stream-start caps segment "
      "0.0 0.1 1.0 2.0 2.1 2.2 4.0 eos");
  g_free (seen);
  fail_unless_equals_int (((TestDecoder *) f.element)->caps_pushed, 1);

  g_object_get (f.element, "clips", &clips, "stats", &stats, NULL);
  fail_unless_equals_uint64 (clips, 7);
  fail_unless (gst_structure_get_uint (stats, "decoded", &decoded));
  fail_unless_equals_int (decoded, 5);
  fail_unless (gst_structure_get_uint (stats, "threads", &threads));
  fail_unless_equals_int (threads, 4);
  fail_unless (gst_structure_get_uint64 (stats, "items-out", &items_out));
  fail_unless_equals_uint64 (items_out, 5);
  gst_structure_free (stats);
  fixture_clear (&f);
}

GST_END_TEST;

GST_START_TEST (test_events_held_behind_jobs)
{
  Fixture f;
  gchar *seen;

  fixture_init (&f, 2, -1);
  /* an input with no outputs first: the segment waits for caps */
  push_input (&f, 0, 50, MODE_OK, 0);
  gst_harness_push_event (f.h, gst_spdl_epoch_end_event_new (0, 1));
  push_input (&f, 1, 30, MODE_OK, 1);
  gst_harness_push_event (f.h,
      gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
          gst_structure_new_empty ("test-marker")));
  push_input (&f, 2, 0, MODE_OK, 1);
  gst_harness_push_event (f.h, gst_event_new_eos ());
  wait_eos (&f);
  seen = trace_take (&f);
  fail_unless_equals_string (seen, "stream-start spdl-epoch-end caps "
      "segment 1.0 test-marker 2.0 eos");
  g_free (seen);
  fixture_clear (&f);
}

GST_END_TEST;

GST_START_TEST (test_skips_counted_and_max_errors_fatal)
{
  Fixture f;
  GstMessage *msg;
  GstStructure *counts;
  GError *err = NULL;
  gchar *debug = NULL, *seen;
  guint64 errors, n;

  fixture_init (&f, 2, 2);
  push_input (&f, 0, 0, MODE_OK, 1);
  push_input (&f, 1, 20, MODE_SKIP, 1);
  push_input (&f, 2, 0, MODE_PARTIAL, 2);
  gst_harness_push_event (f.h, gst_spdl_epoch_end_event_new (0, 3));
  push_input (&f, 3, 0, MODE_OK, 1);
  gst_harness_push_event (f.h, gst_event_new_eos ());
  wait_eos (&f);
  seen = trace_take (&f);
  /* the skipped input has no outputs; the partial one keeps its two */
  fail_unless_equals_string (seen, "stream-start caps segment 0.0 2.0 2.1 "
      "spdl-epoch-end 3.0 eos");
  g_free (seen);

  g_object_get (f.element, "errors", &errors, "error-counts", &counts, NULL);
  fail_unless_equals_uint64 (errors, 2);
  fail_unless (gst_structure_get_uint64 (counts, "too-short", &n));
  fail_unless_equals_uint64 (n, 1);
  fail_unless (gst_structure_get_uint64 (counts, "corrupt", &n));
  fail_unless_equals_uint64 (n, 1);
  gst_structure_free (counts);

  msg = pop_message (&f, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, &debug);
  fail_unless_equals_string (err->message,
      "Skipping test sample \"/data/s1\": the sample is short");
  fail_unless (strstr (debug, "reason: too-short") != NULL);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  /* the epoch's skips, then the totals at EOS */
  msg = pop_message (&f, GST_MESSAGE_ELEMENT);
  fail_unless (msg != NULL);
  fail_unless (gst_structure_get_uint64 (gst_message_get_structure (msg),
          "too-short", &n));
  fail_unless_equals_uint64 (n, 1);
  gst_message_unref (msg);
  fail_if (pop_message (&f, GST_MESSAGE_ERROR) != NULL);
  fixture_clear (&f);

  /* a third skip is past max-errors=2: an error, then EOS */
  fixture_init (&f, 2, 2);
  push_input (&f, 0, 0, MODE_SKIP, 0);
  push_input (&f, 1, 0, MODE_SKIP, 0);
  push_input (&f, 2, 0, MODE_OK, 1);
  push_input (&f, 3, 0, MODE_SKIP, 0);
  wait_eos (&f);
  msg = pop_message (&f, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, &debug);
  fail_unless_equals_string (err->message, "Could not decode test sample "
      "\"/data/s3\": the sample is short; 3 skipped, more than max-errors=2");
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  seen = trace_take (&f);
  fail_unless_equals_string (seen, "stream-start caps segment 2.0 eos");
  g_free (seen);
  /* upstream hears of it */
  fail_unless_equals_int (gst_harness_push (f.h,
          gst_buffer_new_memdup ("\0\0\1", 3)), GST_FLOW_ERROR);
  fixture_clear (&f);

  /* a fatal skip fails at once, whatever max-errors says */
  fixture_init (&f, 1, -1);
  push_input (&f, 0, 0, MODE_FATAL, 0);
  wait_eos (&f);
  msg = pop_message (&f, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless_equals_string (err->message,
      "Test sample \"/data/s0\": the sample is short (short=error)");
  g_clear_error (&err);
  gst_message_unref (msg);
  fixture_clear (&f);
}

GST_END_TEST;

GST_START_TEST (test_flush_while_decoding)
{
  Fixture f;
  GstSegment segment;
  GstBuffer *buf;
  guint8 out[2];
  gchar *seen, *after;
  guint i;

  fixture_init (&f, 2, -1);
  /* stream-start out first: a flush drops the events still queued */
  push_input (&f, 0, 0, MODE_OK, 1);
  gst_buffer_unref (gst_harness_pull (f.h));
  for (i = 1; i < 5; i++)
    push_input (&f, i, 100, MODE_OK, 1);
  gst_harness_push_event (f.h, gst_event_new_flush_start ());
  gst_harness_push_event (f.h, gst_event_new_flush_stop (TRUE));
  /* the flush waited for the running decodes and dropped their outputs */
  fail_unless_equals_int (g_atomic_int_get (&decodes_running), 0);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_harness_push_event (f.h, gst_event_new_segment (&segment));
  push_input (&f, 7, 0, MODE_OK, 1);
  buf = gst_harness_pull (f.h);
  fail_unless (buf != NULL);
  fail_unless_equals_int (gst_buffer_extract (buf, 0, out, 2), 2);
  /* any buffer pulled before was pushed before the flush */
  while (out[0] != 7 && buf) {
    gst_buffer_unref (buf);
    buf = gst_harness_pull (f.h);
    fail_unless (buf != NULL);
    gst_buffer_extract (buf, 0, out, 2);
  }
  gst_buffer_unref (buf);
  seen = trace_take (&f);
  /* nothing from before the flush after it */
  after = strstr (seen, "flush-start flush-stop ");
  fail_unless (after != NULL, "%s", seen);
  fail_unless (strchr (after, '.') == strstr (after, "7.0") + 1, "%s",
      seen);
  fail_unless (g_str_has_prefix (seen, "stream-start caps segment 0.0 "),
      "%s", seen);
  fail_unless (g_str_has_suffix (seen, "segment 7.0"), "%s", seen);
  g_free (seen);

  fixture_clear (&f);
}

GST_END_TEST;

GST_START_TEST (test_flush_keeps_sticky_events)
{
  Fixture f;
  GstSegment segment;
  GstBuffer *buf;
  gchar *seen, *after, *sticky;

  fixture_init (&f, 2, -1);
  push_input (&f, 0, 0, MODE_OK, 1);
  gst_buffer_unref (gst_harness_pull (f.h));
  /* a sticky event queued behind a running decode when the flush comes */
  push_input (&f, 1, 250, MODE_OK, 1);
  gst_harness_push_event (f.h,
      gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM_STICKY,
          gst_structure_new_empty ("test-sticky")));
  gst_harness_push_event (f.h, gst_event_new_flush_start ());
  gst_harness_push_event (f.h, gst_event_new_flush_stop (TRUE));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_harness_push_event (f.h, gst_event_new_segment (&segment));
  push_input (&f, 7, 0, MODE_OK, 1);
  buf = gst_harness_pull (f.h);
  fail_unless (buf != NULL);
  gst_buffer_unref (buf);
  seen = trace_take (&f);
  after = strstr (seen, "flush-stop ");
  fail_unless (after != NULL, "%s", seen);
  /* it went out once, after the flush, before the next output (the trace
   * names a sticky custom event by its type) */
  sticky = strstr (after, "custom-downstream-sticky");
  fail_unless (sticky != NULL && sticky < strstr (after, "7.0"), "%s", seen);
  fail_unless (strstr (seen, "custom-downstream-sticky") == sticky, "%s",
      seen);
  fail_unless (strstr (seen, "1.0") == NULL, "%s", seen);
  g_free (seen);
  fixture_clear (&f);
}

GST_END_TEST;

GST_START_TEST (test_stop_while_decoding)
{
  Fixture f;
  guint i;

  /* stop with decodes running: no hang, nothing left behind */
  fixture_init (&f, 2, -1);
  for (i = 0; i < 4; i++)
    push_input (&f, i, 100, MODE_OK, 1);
  fail_unless_equals_int (gst_element_set_state (f.element, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (g_atomic_int_get (&decodes_running), 0);
  fixture_clear (&f);
}

GST_END_TEST;

GST_START_TEST (test_subclass_job_fields_and_output_hook)
{
  Fixture f;
  GstStructure *stats;
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL, *seen;
  guint64 decoded, items_out;
  guint max_in_flight;

  fixture_init_element (&f, g_object_new (hook_decoder_get_type (),
          "threads", 2, NULL));
  /* no clips: the class did not install it */
  fail_if (g_object_class_find_property (G_OBJECT_GET_CLASS (f.element),
          "clips"));
  push_input (&f, 0, 40, MODE_OK, 1);
  push_input (&f, 1, 0, MODE_SKIP, 0);
  push_input (&f, 2, 0, MODE_RECOVERED, 1);
  gst_harness_push_event (f.h, gst_event_new_eos ());
  wait_eos (&f);
  seen = trace_take (&f);
  /* each output carries its job's sequence number, taken in the chain */
  fail_unless_equals_string (seen, "stream-start caps segment 0.1 2.3 eos");
  g_free (seen);
  fail_unless_equals_int (((HookDecoder *) f.element)->pushed, 2);

  g_object_get (f.element, "decoded", &decoded, "stats", &stats, NULL);
  fail_unless_equals_uint64 (decoded, 2);
  /* items-out counts the inputs decoded; the class's 3 per thread */
  fail_unless (gst_structure_get_uint64 (stats, "items-out", &items_out));
  fail_unless_equals_uint64 (items_out, 2);
  fail_unless (gst_structure_get_uint (stats, "max-in-flight",
          &max_in_flight));
  fail_unless_equals_int (max_in_flight, 6);
  fail_unless (gst_structure_has_field (stats, "utilisation"));
  fail_if (gst_structure_has_field (stats, "clips"));
  gst_structure_free (stats);

  /* the class's words */
  msg = pop_message (&f, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, &debug);
  fail_unless_equals_string (err->message,
      "Skipping hook sample \"/data/s1\": the sample is short");
  fail_unless (strstr (debug, "1 bad hook samples so far") != NULL, "%s",
      debug);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  msg = pop_message (&f, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, &debug);
  fail_unless_equals_string (err->message,
      "Hook sample \"/data/s2\" decoded from damaged data: a damaged scan");
  fail_unless (strstr (debug, "delivered as the hook decodes it") != NULL,
      "%s", debug);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  fixture_clear (&f);
  fail_unless_equals_int (g_atomic_int_get (&hook_jobs_alive), 0);
}

GST_END_TEST;

GST_START_TEST (test_subclass_options)
{
  Fixture f;
  GstStructure *stats, *counts;
  GstQuery *query;
  guint64 recovered, n;
  guint max_in_flight;
  gchar *seen;

  /* ordered=false: completion order */
  fixture_init_element (&f, g_object_new (hook_decoder_get_type (),
          "threads", 2, "ordered", FALSE, NULL));
  push_input (&f, 0, 150, MODE_OK, 1);
  push_input (&f, 1, 0, MODE_OK, 1);
  gst_harness_push_event (f.h, gst_event_new_eos ());
  wait_eos (&f);
  seen = trace_take (&f);
  fail_unless_equals_string (seen, "stream-start caps segment 1.2 0.1 eos");
  g_free (seen);
  fixture_clear (&f);

  /* max-in-flight overrides the class's count; skip-recovered skips */
  fixture_init_element (&f, g_object_new (hook_decoder_get_type (),
          "threads", 2, "max-in-flight", 1, "skip-recovered", TRUE, NULL));
  push_input (&f, 0, 0, MODE_RECOVERED, 1);
  push_input (&f, 1, 0, MODE_OK, 1);
  gst_harness_push_event (f.h, gst_event_new_eos ());
  wait_eos (&f);
  seen = trace_take (&f);
  fail_unless_equals_string (seen, "stream-start caps segment 1.2 eos");
  g_free (seen);
  g_object_get (f.element, "recovered", &recovered, "error-counts", &counts,
      "stats", &stats, NULL);
  fail_unless_equals_uint64 (recovered, 0);
  fail_unless (gst_structure_get_uint64 (counts, "recovered", &n));
  fail_unless_equals_uint64 (n, 1);
  fail_unless (gst_structure_get_uint (stats, "max-in-flight",
          &max_in_flight));
  fail_unless_equals_int (max_in_flight, 1);
  gst_structure_free (counts);
  gst_structure_free (stats);
  fixture_clear (&f);

  /* a DRAIN returns once every input before it went downstream */
  fixture_init_element (&f, g_object_new (hook_decoder_get_type (),
          "threads", 2, NULL));
  push_input (&f, 0, 150, MODE_OK, 1);
  query = gst_query_new_drain ();
  gst_pad_peer_query (f.h->srcpad, query);
  gst_query_unref (query);
  seen = trace_take (&f);
  fail_unless (strstr (seen, "0.1") != NULL, "%s", seen);
  g_free (seen);
  fixture_clear (&f);
  fail_unless_equals_int (g_atomic_int_get (&hook_jobs_alive), 0);
}

GST_END_TEST;

static Suite *
spdlparalleldecoder_suite (void)
{
  Suite *s = suite_create ("spdlparalleldecoder");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_order_kept_when_jobs_finish_out_of_order);
  tcase_add_test (tc, test_events_held_behind_jobs);
  tcase_add_test (tc, test_skips_counted_and_max_errors_fatal);
  tcase_add_test (tc, test_flush_while_decoding);
  tcase_add_test (tc, test_flush_keeps_sticky_events);
  tcase_add_test (tc, test_stop_while_decoding);
  tcase_add_test (tc, test_subclass_job_fields_and_output_hook);
  tcase_add_test (tc, test_subclass_options);
  return s;
}

SPDL_CHECK_MAIN (spdlparalleldecoder);
