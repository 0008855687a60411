/* GStreamer SPDL: why a sample was skipped, and how it is reported
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

#include "gstspdlerrors.h"
#include "gstspdlmeta.h"

#include <string.h>

/* *INDENT-OFF* */
G_DEFINE_QUARK (gst-spdl-read-error-quark, gst_spdl_read_error);
G_DEFINE_QUARK (gst-spdl-decode-error-quark, gst_spdl_decode_error);
/* *INDENT-ON* */

static const gchar *const read_reasons[GST_SPDL_READ_N_ERRORS] = {
  "unreadable", "not-a-file", "too-large",
  "http-error", "timeout", "truncated-shard", "corrupt-member",
  "no-image", "unsupported-image", "no-label", "bad-label",
  "missing-field", "bad-field", "field-too-large", "bad-span", "too-long"
};

static const gchar *const decode_reasons[GST_SPDL_DECODE_N_ERRORS] = {
  "empty", "not-jpeg", "truncated", "corrupt", "too-large", "unsupported",
  "unsupported-format", "no-video", "no-audio", "too-short", "timeout",
  "recovered",
  "too-many-decode-frames", "bad-field", "too-long", "past-end",
  "bad-duration",
};

const gchar *
gst_spdl_error_reason (GQuark domain, gint code)
{
  if (domain == GST_SPDL_READ_ERROR && code >= 0 &&
      code < GST_SPDL_READ_N_ERRORS)
    return read_reasons[code];
  if (domain == GST_SPDL_DECODE_ERROR && code >= 0 &&
      code < GST_SPDL_DECODE_N_ERRORS)
    return decode_reasons[code];
  return "other";
}

gboolean
gst_spdl_decode_fail (GError ** error, gint code, const gchar * format, ...)
{
  va_list args;

  va_start (args, format);
  if (error)
    *error = g_error_new_valist (GST_SPDL_DECODE_ERROR, code, format, args);
  va_end (args);
  return FALSE;
}

GstBuffer *
gst_spdl_buffer_try_new (gsize size)
{
  gpointer data = g_try_malloc (MAX (size, 1));

  if (data == NULL)
    return NULL;
  return gst_buffer_new_wrapped_full (0, data, size, 0, size, data, g_free);
}

gchar *
gst_spdl_utf8_prefix (const gchar * str, gsize len, guint max_chars)
{
  gchar *valid = g_utf8_make_valid (str, len);
  gchar *cut;

  if (g_utf8_strlen (valid, -1) <= max_chars)
    return valid;
  /* g_utf8_offset_to_pointer() lands on a character boundary */
  *g_utf8_offset_to_pointer (valid, max_chars) = '\0';
  cut = g_strconcat (valid, "...", NULL);
  g_free (valid);
  return cut;
}

void
gst_spdl_warn_limiter_reset (GstSpdlWarnLimiter * limiter, guint limit)
{
  limiter->limit = limit;
  limiter->epoch = 0;
  limiter->skipped = 0;
}

gboolean
gst_spdl_warn_limiter_count (GstSpdlWarnLimiter * limiter, guint epoch)
{
  if (epoch != limiter->epoch) {
    limiter->epoch = epoch;
    limiter->skipped = 0;
  }
  return ++limiter->skipped <= limiter->limit;
}

GstMessage *
gst_spdl_skipped_message_new (GstElement * element, gint epoch,
    GQuark domain, const guint64 * counts, guint n_counts, guint64 suppressed)
{
  GstStructure *s = gst_structure_new_empty (GST_SPDL_SKIPPED_NAME);
  guint64 total = 0;
  guint i;

  for (i = 0; i < n_counts; i++) {
    gst_structure_set (s, gst_spdl_error_reason (domain, i), G_TYPE_UINT64,
        counts[i], NULL);
    total += counts[i];
  }
  gst_structure_set (s, "total", G_TYPE_UINT64, total, NULL);
  if (epoch >= 0)
    gst_structure_set (s, "epoch", G_TYPE_UINT, (guint) epoch,
        "suppressed", G_TYPE_UINT64, suppressed, NULL);
  return gst_message_new_element (GST_OBJECT (element), s);
}

GstStructure *
gst_spdl_error_counts_new (GQuark domain, guint64 total,
    const guint64 * counts, guint n_counts)
{
  GstStructure *s = gst_structure_new (GST_SPDL_SKIPPED_NAME, "total",
      G_TYPE_UINT64, total, NULL);
  guint i;

  for (i = 0; i < n_counts; i++)
    gst_structure_set (s, gst_spdl_error_reason (domain, i), G_TYPE_UINT64,
        counts[i], NULL);
  return s;
}

void
gst_spdl_error_counts_add_skipped (GstStructure * stats, GQuark domain,
    const guint64 * counts, guint n_counts)
{
  guint i;

  for (i = 0; i < n_counts; i++) {
    gchar *key = g_strconcat ("skipped-", gst_spdl_error_reason (domain, i),
        NULL);

    gst_structure_set (stats, key, G_TYPE_UINT64, counts[i], NULL);
    g_free (key);
  }
}

gchar *
gst_spdl_describe_reasons (GQuark domain, const guint64 * counts,
    guint n_counts)
{
  GString *s = g_string_new (NULL);
  guint i;

  for (i = 0; i < n_counts; i++)
    if (counts[i] > 0)
      g_string_append_printf (s, "%s%s: %" G_GUINT64_FORMAT,
          s->len ? ", " : "", gst_spdl_error_reason (domain, i), counts[i]);
  return g_string_free (s, FALSE);
}

void
gst_spdl_epoch_check_start (GstElement * element, GstSpdlEpochCheck * check,
    GstEvent * event)
{
  const GstStructure *s = gst_event_get_structure (event);
  guint64 offset = 0;
  guint num_shards = 1;

  gst_structure_get_uint64 (s, "offset", &offset);
  gst_structure_get_uint (s, "num-shards", &num_shards);
  GST_OBJECT_LOCK (element);
  /* samples before the resumption point are not ours to count */
  check->resumed = offset > 0;
  check->whole_dataset = num_shards <= 1;
  GST_OBJECT_UNLOCK (element);
}

gboolean
gst_spdl_epoch_check_end (GstElement * element, GstSpdlEpochCheck * check,
    GstEvent * event, guint64 * epoch_errors,
    const guint64 * errors_by_reason, const guint64 * decoded,
    const GstSpdlWarnLimiter * limiter, const gchar * item_name)
{
  guint64 counts[GST_SPDL_DECODE_N_ERRORS];
  guint64 since_start[GST_SPDL_DECODE_N_ERRORS];
  guint64 total = 0, skipped = 0, suppressed, samples, n_decoded;
  gboolean resumed, whole_dataset;
  gchar *reasons;
  guint epoch;
  gint i;

  if (!gst_spdl_epoch_end_parse (gst_event_get_structure (event), &epoch,
          &samples))
    return TRUE;
  GST_OBJECT_LOCK (element);
  for (i = 0; i < GST_SPDL_DECODE_N_ERRORS; i++) {
    total += counts[i] = epoch_errors[i];
    skipped += since_start[i] = errors_by_reason[i];
    epoch_errors[i] = 0;
  }
  resumed = check->resumed;
  whole_dataset = check->whole_dataset;
  check->resumed = FALSE;
  n_decoded = *decoded;
  suppressed = limiter->epoch == epoch && limiter->skipped > limiter->limit ?
      limiter->skipped - limiter->limit : 0;
  GST_OBJECT_UNLOCK (element);

  if (total == 0)
    return TRUE;
  gst_element_post_message (element, gst_spdl_skipped_message_new (element,
          epoch, GST_SPDL_DECODE_ERROR, counts, GST_SPDL_DECODE_N_ERRORS,
          suppressed));
  if (resumed || n_decoded > 0)
    return TRUE;
  if (skipped < GST_SPDL_MIN_SKIPPED_TO_FAIL &&
      !(whole_dataset && total >= samples))
    return TRUE;
  reasons = gst_spdl_describe_reasons (GST_SPDL_DECODE_ERROR, since_start,
      GST_SPDL_DECODE_N_ERRORS);
  GST_ELEMENT_ERROR (element, STREAM, DECODE,
      ("No sample could be decoded: all %" G_GUINT64_FORMAT " up to the end "
          "of epoch %u were skipped (%s)", skipped, epoch, reasons),
      ("no decodable %s since the start, whatever max-errors allows",
          item_name));
  g_free (reasons);
  return FALSE;
}

gint
gst_spdl_decode_error_code (const GError * error)
{
  return error->domain == GST_SPDL_DECODE_ERROR && error->code >= 0 &&
      error->code < GST_SPDL_DECODE_N_ERRORS ? error->code :
      GST_SPDL_DECODE_ERROR_CORRUPT;
}

void
gst_spdl_decode_tally_reset (GstSpdlDecodeTally * tally, guint warning_limit)
{
  GstSpdlEpochCheck check = { FALSE, FALSE };

  memset (tally, 0, sizeof (*tally));
  tally->epoch_check = check;
  gst_spdl_warn_limiter_reset (&tally->warn_limiter, warning_limit);
}

gboolean
gst_spdl_decode_tally_skip (GstSpdlDecodeTally * tally, const GError * error,
    guint epoch, guint warning_limit, gint * code, guint64 * errors)
{
  *code = gst_spdl_decode_error_code (error);
  *errors = ++tally->errors;
  tally->errors_by_reason[*code]++;
  tally->epoch_errors[*code]++;
  tally->warn_limiter.limit = warning_limit;
  return gst_spdl_warn_limiter_count (&tally->warn_limiter, epoch);
}

gboolean
gst_spdl_decode_tally_output_event (GstElement * element,
    GstSpdlDecodeTally * tally, GstEvent * event, const gchar * item_name)
{
  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
    GstStructure *counts;

    GST_OBJECT_LOCK (element);
    counts = gst_spdl_decode_tally_error_counts (tally);
    GST_OBJECT_UNLOCK (element);
    gst_element_post_message (element,
        gst_message_new_element (GST_OBJECT (element), counts));
  }
  if (gst_spdl_is_epoch_start_event (event))
    gst_spdl_epoch_check_start (element, &tally->epoch_check, event);
  return !gst_spdl_is_epoch_end_event (event) ||
      gst_spdl_epoch_check_end (element, &tally->epoch_check, event,
      tally->epoch_errors, tally->errors_by_reason, &tally->decoded,
      &tally->warn_limiter, item_name);
}
