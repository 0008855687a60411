/* GStreamer SPDL: HTTP(S) and S3 reads on one I/O thread
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_HTTP_H__
#define __GST_SPDL_HTTP_H__

#include <gst/gst.h>

#include "gstspdls3.h"

G_BEGIN_DECLS

/* A libcurl multi handle driven by one thread: many transfers at once,
 * kept-alive connections (HTTP/2 where offered), retries with exponential
 * backoff and jitter on connection errors, timeouts, 429 and 5xx. Whole
 * objects arrive through a callback; streams (tar shards) are read in
 * order while they download, a bounded amount buffered ahead. s3:// URLs
 * are signed with SigV4 (libcurl's CURLOPT_AWS_SIGV4). */
typedef struct _GstSpdlHttp GstSpdlHttp;
typedef struct _GstSpdlHttpStream GstSpdlHttpStream;

/* A stop request for the clients made for one task (an element's start:
 * listing, index, learning): cancelling it cancels each client made with
 * it (gst_spdl_http_cancel()), those made later too, until it is reset. */
typedef struct _GstSpdlHttpCanceller GstSpdlHttpCanceller;

typedef struct
{
  guint max_requests;           /* transfers running at once */
  guint connect_timeout_ms;     /* to connect (TCP and TLS); 0: timeout_ms */
  guint timeout_ms;             /* longest wait for a byte (the first one
                                 * too: a server that never answers) */
  guint retries;                /* after the first attempt; a request the
                                 * server never answered, at most once */
  /* an attempt whose body comes slower than low_speed_limit bytes/s over
   * low_speed_time s fails (as curl's CURLOPT_LOW_SPEED_*); 0: no bound */
  guint low_speed_limit;
  guint low_speed_time;
  guint64 max_bytes_in_flight;  /* received, not yet consumed */
  /* NULL: CURL_CA_BUNDLE, SSL_CERT_FILE, the system's */
  const gchar *ca_file;
  GstSpdlS3Config s3;           /* for s3:// URLs */
  GstSpdlHttpCanceller *canceller;      /* NULL: none; outlives the client */
} GstSpdlHttpConfig;

/* Whether a server answers byte ranges, from its responses so far. */
typedef enum
{
  GST_SPDL_HTTP_RANGES_UNKNOWN,         /* no response from it yet */
  GST_SPDL_HTTP_RANGES_YES,             /* Accept-Ranges: bytes, or a 206 */
  GST_SPDL_HTTP_RANGES_UNADVERTISED,    /* answers without Accept-Ranges */
  GST_SPDL_HTTP_RANGES_NO,              /* a ranged GET answered whole, or
                                         * Accept-Ranges: none */
} GstSpdlHttpRanges;

typedef struct
{
  guint64 peak_bytes_in_flight; /* most received and not handed over */
  guint64 responses;            /* successful transfers */
  guint64 responses_http2;      /* ... of them over HTTP/2 */
  guint64 changed;              /* objects that changed during a read */
  guint64 range_ignored;        /* byte-range GETs answered with the whole
                                 * object (a server without Range support) */
} GstSpdlHttpStats;

/* Whole object: @buffer or @error (GST_SPDL_READ_ERROR domain), both
 * owned by the callee; called on the I/O thread. */
typedef void (*GstSpdlHttpDoneFunc) (GstBuffer * buffer, GError * error,
    gpointer user_data);

/* An object as a response describes it: what a cache of something learned
 * from the object is keyed by. */
typedef struct
{
  long status;                  /* HTTP status, 0: no response */
  gint64 size;                  /* Content-Length, -1: unknown */
  const gchar *etag;            /* as sent (weak ones too), NULL: none */
  const gchar *last_modified;   /* NULL: none */
} GstSpdlHttpObjectInfo;

/* A HEAD request's answer: @info always (valid during the call), @error
 * (callee-owned) when it failed; called on the I/O thread. */
typedef void (*GstSpdlHttpHeadFunc) (const GstSpdlHttpObjectInfo * info,
    GError * error, gpointer user_data);

gboolean gst_spdl_http_is_url (const gchar * location);

GstSpdlHttpCanceller *gst_spdl_http_canceller_new (void);
void gst_spdl_http_canceller_cancel (GstSpdlHttpCanceller * canceller);
gboolean gst_spdl_http_canceller_is_cancelled (GstSpdlHttpCanceller *
    canceller);
void gst_spdl_http_canceller_reset (GstSpdlHttpCanceller * canceller);
/* No client made with it may be left. */
void gst_spdl_http_canceller_free (GstSpdlHttpCanceller * canceller);

GstSpdlHttp *gst_spdl_http_new (const GstSpdlHttpConfig * config,
    GError ** error);
/* Ends every transfer (in flight, waiting for a retry, submitted later)
 * with a "cancelled" error, promptly: readers and waiters wake up. Used
 * before the threads that read are joined, and to stop a start. */
void gst_spdl_http_cancel (GstSpdlHttp * http);
/* Whether gst_spdl_http_cancel() was called (or its canceller's). */
gboolean gst_spdl_http_is_cancelled (GstSpdlHttp * http);
/* Cancels what is in flight (no callback runs after it) and frees. */
void gst_spdl_http_free (GstSpdlHttp * http);

void gst_spdl_http_get (GstSpdlHttp * http, const gchar * url,
    guint64 max_size, GstSpdlHttpDoneFunc done, gpointer user_data);
/* Bytes [@first, @first + @size) of an object (a Range request; from a
 * server that ignores Range, cut out of the whole), as gst_spdl_http_get();
 * fewer bytes when the object ends early, a truncated-shard error when it
 * ends before @first. */
void gst_spdl_http_get_range (GstSpdlHttp * http, const gchar * url,
    guint64 first, guint64 size, GstSpdlHttpDoneFunc done,
    gpointer user_data);
/* Waits for gst_spdl_http_get_range()'s bytes: NULL with @error. */
GstBuffer *gst_spdl_http_get_range_sync (GstSpdlHttp * http,
    const gchar * url, guint64 first, guint64 size, GError ** error);
/* Waits for a whole object (for listings and indexes); @status (may be
 * NULL) gets the last response's HTTP status, 0 when none came (a
 * connection error): 404 tells a missing object from a refusal. */
GBytes *gst_spdl_http_get_sync (GstSpdlHttp * http, const gchar * url,
    guint64 max_size, long *status, GError ** error);

/* A HEAD request (signed as one for s3://), retried as GETs are. Its
 * answer has no body: an error names the status only (S3's error code
 * comes with a GET). */
void gst_spdl_http_head (GstSpdlHttp * http, const gchar * url,
    GstSpdlHttpHeadFunc done, gpointer user_data);

GstSpdlHttpStream *gst_spdl_http_stream_open (GstSpdlHttp * http,
    const gchar * url);
/* > 0 bytes, 0 at the end, -1 with @error (a skip reason) */
gssize gst_spdl_http_stream_read (GstSpdlHttpStream * stream, guint8 * data,
    gsize len, GError ** error);
/* The object a stream reads, as its first response described it (ETag:
 * strong ones only; size: of a 200's body, else -1), once bytes of it
 * were read; the strings are the caller's. FALSE before any byte came. */
/* "Content-Type: text/html, Content-Encoding: gzip" as the first response
 * said (what a body that is no tar came as); NULL: neither was said. */
gchar *gst_spdl_http_stream_describe_content (GstSpdlHttpStream * stream);
gboolean gst_spdl_http_stream_get_object (GstSpdlHttpStream * stream,
    gint64 * size, gchar ** etag, gchar ** last_modified);
void gst_spdl_http_stream_close (GstSpdlHttpStream * stream);

void gst_spdl_http_get_stats (GstSpdlHttp * http, GstSpdlHttpStats * stats);

/* What the responses of @url's server (scheme, host and port) said of
 * byte ranges so far. */
GstSpdlHttpRanges gst_spdl_http_get_ranges (GstSpdlHttp * http,
    const gchar * url);

/* The keys under an s3:// prefix (ListObjectsV2, all pages), sorted. */
GPtrArray *gst_spdl_http_s3_list (GstSpdlHttp * http, const gchar * url,
    GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_HTTP_H__ */
