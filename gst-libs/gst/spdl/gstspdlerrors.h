/* GStreamer SPDL: why a sample was skipped, and how it is reported
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The vocabulary every element and library reports bad input in: a sample
 * that cannot be read (GST_SPDL_READ_ERROR) or decoded
 * (GST_SPDL_DECODE_ERROR) is skipped with a GError of one of these codes,
 * counted by its reason name (the "skipped-REASON" statistics and the
 * "spdl-skipped" message), and warned about at most a few times an epoch. */
#ifndef __GST_SPDL_ERRORS_H__
#define __GST_SPDL_ERRORS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Reading a sample: spdlsrc and the data providers. */
#define GST_SPDL_READ_ERROR (gst_spdl_read_error_quark ())
GQuark gst_spdl_read_error_quark (void);

typedef enum
{
  GST_SPDL_READ_ERROR_UNREADABLE,
  GST_SPDL_READ_ERROR_NOT_A_FILE,
  GST_SPDL_READ_ERROR_TOO_LARGE,
  /* remote and sharded data */
  GST_SPDL_READ_ERROR_HTTP_ERROR,
  GST_SPDL_READ_ERROR_TIMEOUT,
  GST_SPDL_READ_ERROR_TRUNCATED_SHARD,
  GST_SPDL_READ_ERROR_CORRUPT_MEMBER,
  /* a WebDataset group that is no sample (gstspdlshardindex.h) */
  GST_SPDL_READ_ERROR_NO_IMAGE,
  GST_SPDL_READ_ERROR_UNSUPPORTED_IMAGE,
  GST_SPDL_READ_ERROR_NO_LABEL,
  GST_SPDL_READ_ERROR_BAD_LABEL,
  /* a field of the sample record (gstspdlrecord.h) under the policy
   * "skip": absent, not of its kind (not UTF-8, malformed JSON, not a
   * number), or larger than max-field-size */
  GST_SPDL_READ_ERROR_MISSING_FIELD,
  GST_SPDL_READ_ERROR_BAD_FIELD,
  GST_SPDL_READ_ERROR_FIELD_TOO_LARGE,
  /* a manifest row's span that cannot be (a negative offset, an end
   * before its start, no number, a NeMo row without its duration) */
  GST_SPDL_READ_ERROR_BAD_SPAN,
  /* a manifest row's span longer than spdlsrc's max-span */
  GST_SPDL_READ_ERROR_TOO_LONG,
  GST_SPDL_READ_N_ERRORS,
} GstSpdlReadErrorCode;

/* Decoding a sample: spdldecode, spdlvideodecode, spdlaudiodecode and the
 * codecs. */
#define GST_SPDL_DECODE_ERROR (gst_spdl_decode_error_quark ())
GQuark gst_spdl_decode_error_quark (void);

typedef enum
{
  GST_SPDL_DECODE_ERROR_EMPTY,
  GST_SPDL_DECODE_ERROR_NOT_JPEG,
  GST_SPDL_DECODE_ERROR_TRUNCATED,
  GST_SPDL_DECODE_ERROR_CORRUPT,
  GST_SPDL_DECODE_ERROR_TOO_LARGE,
  GST_SPDL_DECODE_ERROR_UNSUPPORTED,
  GST_SPDL_DECODE_ERROR_UNSUPPORTED_FORMAT,     /* a format with no decoder */
  /* videos and audio */
  GST_SPDL_DECODE_ERROR_NO_VIDEO,       /* no video stream, or no frame */
  GST_SPDL_DECODE_ERROR_NO_AUDIO,       /* no audio stream */
  GST_SPDL_DECODE_ERROR_TOO_SHORT,      /* shorter than a clip (skip) */
  GST_SPDL_DECODE_ERROR_TIMEOUT,        /* demuxing or decoding too long */
  /* Damaged data decoded all the same, as PIL decodes it (a JPEG scan with
   * corrupt bytes): not a failure of the output. An image decoder that
   * returns FALSE with this code has written every output pixel; the
   * caller delivers them with a warning, or skips the sample by this
   * reason (spdldecode's skip-recovered). */
  GST_SPDL_DECODE_ERROR_RECOVERED,
  /* a clip needs more frames decoded from its keyframes than
   * max-decode-frames (a long GOP) */
  GST_SPDL_DECODE_ERROR_TOO_MANY_DECODE_FRAMES,
  /* a field of the sample's record (an extra image or label) that does
   * not decode, or not to the media image's size */
  GST_SPDL_DECODE_ERROR_BAD_FIELD,
  /* a manifest row's span (gst_spdl_buffer_get_span()): longer than
   * max-span; starting at or past its file's end; running past its end
   * (the duration disagrees with the file) */
  GST_SPDL_DECODE_ERROR_TOO_LONG,
  GST_SPDL_DECODE_ERROR_PAST_END,
  GST_SPDL_DECODE_ERROR_BAD_DURATION,
  GST_SPDL_DECODE_N_ERRORS,
} GstSpdlDecodeErrorCode;

/* Sets @error (GST_SPDL_DECODE_ERROR, @code) from a format; FALSE. */
gboolean gst_spdl_decode_fail (GError ** error, gint code,
    const gchar * format, ...) G_GNUC_PRINTF (3, 4);

/* TRUE if @error says the output was decoded from damaged data
 * (GST_SPDL_DECODE_ERROR_RECOVERED): every pixel is written. */
#define gst_spdl_error_is_recovered(error) \
  g_error_matches ((error), GST_SPDL_DECODE_ERROR, \
      GST_SPDL_DECODE_ERROR_RECOVERED)

/* The short name a reason is counted under ("too-large"), for a code of
 * GST_SPDL_READ_ERROR or GST_SPDL_DECODE_ERROR; "other" for any other. */
const gchar *gst_spdl_error_reason (GQuark domain, gint code);
#define gst_spdl_read_error_reason(code) \
  gst_spdl_error_reason (GST_SPDL_READ_ERROR, (code))
#define gst_spdl_decode_error_reason(code) \
  gst_spdl_error_reason (GST_SPDL_DECODE_ERROR, (code))


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

/* "too-large: 2, corrupt: 1": the reasons of @domain with a count, for
 * messages; g_free() it. */
gchar *gst_spdl_describe_reasons (GQuark domain, const guint64 * counts,
    guint n_counts);

/* The "spdl-skipped" element message of one epoch: "epoch", "total",
 * "suppressed" (warnings not posted) and one field per reason of @domain
 * (GST_SPDL_READ_ERROR or GST_SPDL_DECODE_ERROR), from @counts (@n_counts
 * entries, by code). @epoch -1: a run's totals, without "epoch". */
GstMessage *gst_spdl_skipped_message_new (GstElement * element, gint epoch,
    GQuark domain, const guint64 * counts, guint n_counts,
    guint64 suppressed);

/* An element's error-counts: "total" and one field per reason of
 * @domain, from @counts (@n_counts entries, by code); named
 * "spdl-skipped". */
GstStructure *gst_spdl_error_counts_new (GQuark domain, guint64 total,
    const guint64 * counts, guint n_counts);
/* The same counts as "skipped-REASON" fields of an element's stats. */
void gst_spdl_error_counts_add_skipped (GstStructure * stats, GQuark domain,
    const guint64 * counts, guint n_counts);

/* A decoder's view of the epoch under way, for the reports at its end. */
typedef struct
{
  gboolean resumed;             /* it started mid-way */
  gboolean whole_dataset;       /* this rank reads every sample */
} GstSpdlEpochCheck;

/* Samples skipped since the start, with none decoded, before a decoder on
 * several ranks concludes that none can be (a rank's share of a few
 * samples can be all bad by chance). */
#define GST_SPDL_MIN_SKIPPED_TO_FAIL 16

/* At an epoch start event (spdlsrc's): what @check keeps. Takes
 * @element's object lock, which guards @check. */
void gst_spdl_epoch_check_start (GstElement * element,
    GstSpdlEpochCheck * check, GstEvent * event);

/* At an epoch end event: posts the epoch's "spdl-skipped" summary (from
 * @epoch_errors, by GST_SPDL_DECODE_ERROR code, then zeroed; @limiter's
 * suppressed warnings) if it skipped any, and FALSE with an error posted
 * when nothing can be decoded: at the end of an epoch that did not start
 * mid-way, nothing decoded since the start (*@decoded, @errors_by_reason)
 * and either every sample of the epoch skipped on one rank or at least
 * GST_SPDL_MIN_SKIPPED_TO_FAIL skipped (an endless run would otherwise go
 * round its epochs without a sample). Takes @element's object lock, which
 * guards the counts. @item_name: what a sample is ("video"). */
gboolean gst_spdl_epoch_check_end (GstElement * element,
    GstSpdlEpochCheck * check, GstEvent * event, guint64 * epoch_errors,
    const guint64 * errors_by_reason, const guint64 * decoded,
    const GstSpdlWarnLimiter * limiter, const gchar * item_name);

/* @error's GST_SPDL_DECODE_ERROR code; any other error is corrupt. */
gint gst_spdl_decode_error_code (const GError * error);

/* What a decoder skipped and delivered since its start, by reason and in
 * the epoch under way; under the decoder's object lock. */
typedef struct
{
  guint64 errors;               /* skipped */
  guint64 errors_by_reason[GST_SPDL_DECODE_N_ERRORS];
  guint64 epoch_errors[GST_SPDL_DECODE_N_ERRORS];
  GstSpdlWarnLimiter warn_limiter;
  GstSpdlEpochCheck epoch_check;
  guint64 decoded;              /* samples that gave outputs */
  guint64 recovered;            /* of those, decoded from damaged data */
} GstSpdlDecodeTally;

/* At start: every count zero, @warning_limit warnings per epoch. */
void gst_spdl_decode_tally_reset (GstSpdlDecodeTally * tally,
    guint warning_limit);
/* Counts one sample skipped for @error (gst_spdl_decode_error_code()) in
 * @epoch: its reason's code and the skips so far in
 * @code and @errors; TRUE if its warning may be posted. With the object
 * lock. */
gboolean gst_spdl_decode_tally_skip (GstSpdlDecodeTally * tally,
    const GError * error, guint epoch, guint warning_limit, gint * code,
    guint64 * errors);
/* The "spdl-skipped" structure of the run's skips ("total" and one field
 * per reason): the error-counts property and the EOS message. With the
 * object lock. */
#define gst_spdl_decode_tally_error_counts(tally) \
    gst_spdl_error_counts_new (GST_SPDL_DECODE_ERROR, (tally)->errors, \
        (tally)->errors_by_reason, GST_SPDL_DECODE_N_ERRORS)
/* "skipped-REASON" fields on a stats structure. With the object lock. */
#define gst_spdl_decode_tally_add_skipped(tally, stats) \
    gst_spdl_error_counts_add_skipped ((stats), GST_SPDL_DECODE_ERROR, \
        (tally)->errors_by_reason, GST_SPDL_DECODE_N_ERRORS)
/* A serialized event leaving @element: before EOS the error-counts
 * message, at an epoch's start and end the checks above. FALSE when the
 * epoch end fails (an error posted); the event is not pushed. Takes the
 * object lock. */
gboolean gst_spdl_decode_tally_output_event (GstElement * element,
    GstSpdlDecodeTally * tally, GstEvent * event, const gchar * item_name);

G_END_DECLS

#endif /* __GST_SPDL_ERRORS_H__ */
