/* GStreamer SPDL: HTTP(S) and S3 reads on one I/O thread
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

#include "gstspdlhttp.h"
#include "gstspdlhttp-private.h"
#include "gstspdlawserror.h"
#include "gstspdlerrors.h"
#include "gstspdlredact.h"
#include "gstspdlsigv4.h"

#include <curl/curl.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (spdl_http_debug);
#define GST_CAT_DEFAULT spdl_http_debug

#define BACKOFF_BASE_US (100 * 1000)
#define BACKOFF_MAX_US (10 * 1000 * 1000)
#define MIN_STREAM_BUFFER (256 * 1024)
/* A stream's reader is woken when this much of what it asks for has
 * arrived (or the stream paused, or ended), not at each of curl's chunks:
 * a wake-up per 16 KiB was a tenth of a loader's CPU on a fast link. */
#define STREAM_WAKE_BYTES (256 * 1024)
/* curl's receive buffer for streams (16 KiB by default): fewer, larger
 * chunks, each one allocation and one callback */
#define STREAM_RECEIVE_BUFFER (256 * 1024)
#define MIN_RESUME_ROOM (64 * 1024)
#define POLL_MS 100
/* of an S3 error response, kept to name the error */
#define MAX_ERROR_BODY (8 * 1024)
/* the most a byte-range GET reserves before its bytes arrive */
#define MAX_RANGE_RESERVE (16 * 1024 * 1024)
/* a ListObjectsV2 page: S3's hold 1000 keys, about 0.5 MiB, or 1.5 MiB
 * with keys of S3's longest */
#define MAX_LIST_PAGE_SIZE (16 * 1024 * 1024)
/* truncated pages in a row that list nothing: a server that would keep a
 * listing going without end (as one that answers with the continuation
 * token it was asked for) */
#define MAX_EMPTY_LIST_PAGES 1000
/* attempts of a request its server never answered (no status line before
 * http-timeout): a server that accepts and stays silent twice is down, and
 * more attempts would only hold its error back */
#define MAX_SILENT_ATTEMPTS 2

typedef struct _Transfer Transfer;

struct _GstSpdlHttp
{
  GstSpdlHttpConfig config;
  GstSpdlS3 *s3;
  gchar *ca_file;

  CURLM *multi;
  GThread *thread;
  GMutex lock;
  GCond cond;                   /* any transfer's state changed */
  gboolean stopping;            /* free(): the thread ends */
  gboolean cancelled;           /* readers get an error, no more retries */
  GQueue waiting;               /* not started, or waiting for a retry */
  GList *running;
  GQueue paused;                /* running, paused by the byte bound */
  GQueue to_resume;             /* paused ones with room again */
  guint n_streams;              /* open streams share the byte bound */
  /* bytes received and not yet handed over (stream chunks not read yet,
   * whole objects being received: their Content-Length once it is known),
   * bounded by max-bytes-in-flight */
  guint64 in_flight;
  GQueue charged;               /* objects holding part of it, oldest first */
  GstSpdlHttpStats stats;
  /* origin ("http://host:port") -> GstSpdlHttpRanges */
  GHashTable *ranges;
  GstSpdlHttpCanceller *canceller;
};

struct _GstSpdlHttpCanceller
{
  GMutex lock;
  gboolean cancelled;
  GList *clients;
};

struct _Transfer
{
  GstSpdlHttp *http;
  gint refs;                    /* the I/O thread's and a stream reader's */
  gchar *url;                   /* what is fetched (s3:// resolved) */
  gchar *display;               /* as the user wrote it, its credentials
                                 * masked: for messages and logs */
  gboolean s3;
  gboolean streaming;
  CURL *easy;
  struct curl_slist *headers;
  gchar errbuf[CURL_ERROR_SIZE];
  guint attempt;                /* failures in a row without progress */
  guint silent;                 /* attempts the server never answered */
  gboolean responded;           /* this attempt got a status line */
  guint64 accepted_at_failure;
  gint64 retry_at;              /* monotonic us */
  gboolean started_body;        /* this attempt's first body byte seen */
  guint64 resume_from;          /* this attempt asked for bytes from here */
  guint64 skip;                 /* a 200 to a range request: bytes to drop */
  /* this attempt's response headers (the last response's, redirects) */
  gchar *resp_etag, *resp_last_modified, *resp_content_range;
  gchar *resp_accept_ranges, *resp_content_type, *resp_content_encoding;
  /* the body's, as first received (under the lock): what a body that is
   * not what was expected says it is */
  gchar *content_type, *content_encoding;
  /* streams: the object as first received, to resume only the same one */
  gchar *etag;                  /* strong ETag, else NULL */
  gchar *last_modified;
  gint64 total;                 /* Content-Length of the whole, -1: unknown */
  GError *fatal;                /* not retried: changed during read */
  GString *error_body;          /* S3: the start of an error response */
  long status;                  /* of the last response, 0: none yet */

  /* under http->lock */
  GQueue chunks;                /* GBytes, streams */
  gsize chunk_offset;
  guint64 buffered;
  guint64 accepted;             /* body bytes taken over all attempts */
  guint64 charge;               /* this transfer's part of http->in_flight */
  gint paused;                  /* set under the lock with g_atomic_int_set:
                                 * xferinfo_cb reads it without the lock */
  gboolean reading;             /* streams: the reader has started on it */
  gboolean reader_waiting;      /* ... and waits for bytes */
  guint64 reader_want;          /* ... until this many are buffered */
  gboolean finished;
  gboolean closed;              /* the reader is gone */
  GError *error;

  /* whole objects */
  GByteArray *body;
  guint64 max_size;
  GstSpdlHttpDoneFunc done;
  gpointer user_data;

  /* byte range GETs: bytes [range_first, range_first + range_size) */
  guint64 range_first;
  guint64 range_size;

  /* HEAD requests: the answer goes to head_done instead */
  gboolean head;
  GstSpdlHttpHeadFunc head_done;
  /* the HEAD was refused (presigned GET URLs, some CDNs): asked again as
   * a GET of its first byte, whose Content-Range gives the size */
  gboolean head_by_get;

  /* the low-speed bound (I/O thread): the window's start and its bytes */
  gint64 window_start;
  curl_off_t window_bytes;
  curl_off_t too_slow;          /* > 0: the bytes of the window that failed
                                 * it (the attempt was aborted) */
};

struct _GstSpdlHttpStream
{
  Transfer *transfer;
};

gboolean
gst_spdl_http_is_url (const gchar * location)
{
  return location && (g_str_has_prefix (location, "http://") ||
      g_str_has_prefix (location, "https://") || gst_spdl_s3_is_url (location));
}

/* The CA file set, else from the environment: libcurl reads none, the
 * curl tool and OpenSSL do. */
static gchar *
ca_file_from (const gchar * ca_file)
{
  static const gchar *const variables[] = { "CURL_CA_BUNDLE", "SSL_CERT_FILE" };
  guint i;

  if (ca_file && *ca_file)
    return g_strdup (ca_file);
  for (i = 0; i < G_N_ELEMENTS (variables); i++) {
    const gchar *value = g_getenv (variables[i]);
    if (value && *value)
      return g_strdup (value);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Transfers                                                                */

static Transfer *
transfer_new (GstSpdlHttp * http, const gchar * url, const gchar * query)
{
  Transfer *t = g_new0 (Transfer, 1);

  t->http = http;
  t->refs = 1;
  t->display = gst_spdl_url_redact (url);
  t->s3 = gst_spdl_s3_is_url (url);
  t->url = t->s3 ? gst_spdl_s3_resolve (http->s3, url, query) :
      g_strdup (url);
  t->total = -1;
  g_queue_init (&t->chunks);
  return t;
}

static void
transfer_unref (Transfer * t)
{
  if (!g_atomic_int_dec_and_test (&t->refs))
    return;
  if (t->easy)
    curl_easy_cleanup (t->easy);
  curl_slist_free_all (t->headers);
  g_queue_clear_full (&t->chunks, (GDestroyNotify) g_bytes_unref);
  if (t->body)
    g_byte_array_unref (t->body);
  if (t->error_body)
    g_string_free (t->error_body, TRUE);
  g_clear_error (&t->error);
  g_clear_error (&t->fatal);
  g_free (t->resp_etag);
  g_free (t->resp_last_modified);
  g_free (t->resp_content_range);
  g_free (t->resp_accept_ranges);
  g_free (t->resp_content_type);
  g_free (t->resp_content_encoding);
  g_free (t->content_type);
  g_free (t->content_encoding);
  g_free (t->etag);
  g_free (t->last_modified);
  g_free (t->url);
  g_free (t->display);
  g_free (t);
}

/* ------------------------------------------------------------------------ */
/* The bound on bytes in flight                                             */

/* Bytes a stream may hold ahead of its reader. */
static guint64
stream_cap (GstSpdlHttp * http)
{
  return MAX (http->config.max_bytes_in_flight / MAX (http->n_streams, 1),
      MIN_STREAM_BUFFER);
}

/* What @t may fill: streams downloading ahead leave a quarter of the bound
 * to the one being read, so they cannot starve it. */
static guint64
limit_for (GstSpdlHttp * http, Transfer * t)
{
  guint64 bound = http->config.max_bytes_in_flight;

  return t->streaming && !t->reading ? bound - bound / 4 : bound;
}

/* Called with the lock. */
static void
set_charge (GstSpdlHttp * http, Transfer * t, guint64 charge)
{
  http->in_flight = http->in_flight - t->charge + charge;
  t->charge = charge;
  http->stats.peak_bytes_in_flight = MAX (http->stats.peak_bytes_in_flight,
      http->in_flight);
}

/* Called with the lock: whether @t may take @len more bytes now. Objects
 * are charged their whole Content-Length on their first bytes (so those
 * that fit never exceed the bound), the oldest charged one always proceeds
 * (one larger than the bound too: no deadlock); streams take chunks while
 * they fit, and the one the reader waits on takes one chunk regardless. */
static gboolean
may_take (GstSpdlHttp * http, Transfer * t, gsize len)
{
  guint64 charge;

  if (t->streaming) {
    if (t->reader_waiting && t->buffered == 0)
      return TRUE;
    return t->buffered < stream_cap (http) &&
        http->in_flight + len <= limit_for (http, t);
  }
  charge = MAX ((guint64) MAX (t->total, 0), t->body->len + len);
  if (charge <= t->charge)
    return TRUE;
  if (t->charge == 0 && g_queue_is_empty (&http->charged))
    return TRUE;
  if (t->charge > 0 && g_queue_peek_head (&http->charged) == t)
    return TRUE;
  return http->in_flight + (charge - t->charge) <= limit_for (http, t);
}

/* Called with the lock: an object takes @len more bytes. */
static void
charge_object (GstSpdlHttp * http, Transfer * t, gsize len)
{
  guint64 charge = MAX ((guint64) MAX (t->total, 0), t->body->len + len);

  if (t->charge == 0)
    g_queue_push_tail (&http->charged, t);
  if (charge > t->charge)
    set_charge (http, t, charge);
}

/* Called with the lock: whether paused @t would find room now (some
 * slack, so that a freed chunk does not wake all of them each time). */
static gboolean
has_room (GstSpdlHttp * http, Transfer * t)
{
  guint64 limit = limit_for (http, t);
  guint64 slack = MAX (http->config.max_bytes_in_flight / 8,
      MIN_RESUME_ROOM);

  if (t->streaming && t->reader_waiting && t->buffered == 0)
    return TRUE;
  if (!t->streaming && t->charge > 0 &&
      g_queue_peek_head (&http->charged) == t)
    return TRUE;
  if (t->streaming && t->buffered >= stream_cap (http) / 2)
    return FALSE;
  return http->in_flight + slack <= limit;
}

/* Called with the lock: the I/O thread resumes them on its next round.
 * Returns whether it has to be woken. */
static gboolean
resume_with_room (GstSpdlHttp * http)
{
  GList *l = http->paused.head;
  gboolean any = FALSE;

  while (l) {
    Transfer *t = l->data;
    GList *next = l->next;

    if (has_room (http, t)) {
      g_atomic_int_set (&t->paused, FALSE);
      g_queue_delete_link (&http->paused, l);
      g_queue_push_tail (&http->to_resume, t);
      any = TRUE;
    }
    l = next;
  }
  return any;
}

/* Called with the lock: @t gives back its part of the bound. */
static void
release_charge (GstSpdlHttp * http, Transfer * t)
{
  if (!t->streaming && t->charge > 0)
    g_queue_remove (&http->charged, t);
  set_charge (http, t, 0);
  resume_with_room (http);
}

/* ------------------------------------------------------------------------ */
/* Responses                                                                */

gchar *
gst_spdl_http_header_value (const gchar * line, gsize len,
    const gchar * name)
{
  gsize n = strlen (name);

  if (len <= n || line[n] != ':' || g_ascii_strncasecmp (line, name, n) != 0)
    return NULL;
  return g_strstrip (g_strndup (line + n + 1, len - n - 1));
}

static size_t
header_cb (char *data, size_t size, size_t nmemb, void *user_data)
{
  Transfer *t = user_data;
  gsize len = size * nmemb;
  gchar *value;

  if (len > 5 && memcmp (data, "HTTP/", 5) == 0) {
    /* a new response (after a redirect or a 100): its own headers */
    t->responded = TRUE;
    g_clear_pointer (&t->resp_etag, g_free);
    g_clear_pointer (&t->resp_last_modified, g_free);
    g_clear_pointer (&t->resp_content_range, g_free);
    g_clear_pointer (&t->resp_accept_ranges, g_free);
    g_clear_pointer (&t->resp_content_type, g_free);
    g_clear_pointer (&t->resp_content_encoding, g_free);
  } else if ((value = gst_spdl_http_header_value (data, len,
              "Content-Type"))) {
    g_free (t->resp_content_type);
    t->resp_content_type = value;
  } else if ((value = gst_spdl_http_header_value (data, len,
              "Content-Encoding"))) {
    g_free (t->resp_content_encoding);
    t->resp_content_encoding = value;
  } else if ((value = gst_spdl_http_header_value (data, len,
              "Accept-Ranges"))) {
    g_free (t->resp_accept_ranges);
    t->resp_accept_ranges = value;
  } else if ((value = gst_spdl_http_header_value (data, len, "ETag"))) {
    g_free (t->resp_etag);
    t->resp_etag = value;
  } else if ((value = gst_spdl_http_header_value (data, len,
              "Last-Modified"))) {
    g_free (t->resp_last_modified);
    t->resp_last_modified = value;
  } else if ((value = gst_spdl_http_header_value (data, len,
              "Content-Range"))) {
    g_free (t->resp_content_range);
    t->resp_content_range = value;
  }
  return len;
}

/* Decimal digits only, up to G_MAXINT64 (g_ascii_strtoull() takes a
 * sign and blanks too, and wraps past 2^64): the end, or NULL. */
static const gchar *
parse_position (const gchar * s, guint64 * value)
{
  guint64 v = 0;

  if (!g_ascii_isdigit (*s))
    return NULL;
  for (; g_ascii_isdigit (*s); s++) {
    gint digit = g_ascii_digit_value (*s);

    if (v > (guint64) (G_MAXINT64 - digit) / 10)
      return NULL;
    v = v * 10 + digit;
  }
  *value = v;
  return s;
}

gboolean
gst_spdl_http_parse_content_range (const gchar * value, guint64 * first,
    gint64 * total)
{
  guint64 last, length;

  if (value == NULL || !g_str_has_prefix (value, "bytes "))
    return FALSE;
  value = parse_position (value + 6, first);
  if (value == NULL || *value != '-')
    return FALSE;
  value = parse_position (value + 1, &last);
  if (value == NULL || *value != '/' || last < *first)
    return FALSE;
  if (strcmp (value + 1, "*") == 0) {
    *total = -1;
    return TRUE;
  }
  /* a complete length not past the range's last byte, or past G_MAXINT64
   * (once taken for "*": a changed size went unseen), is not valid */
  value = parse_position (value + 1, &length);
  if (value == NULL || *value != '\0' || length <= last)
    return FALSE;
  *total = (gint64) length;
  return TRUE;
}

/* Whether this attempt's response continues the object as first received;
 * the first response records its validators. */
static const gchar *
check_same_object (Transfer * t, long status)
{
  curl_off_t length = -1;
  guint64 first;
  gint64 total;

  curl_easy_getinfo (t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  if (t->resume_from == 0) {
    g_clear_pointer (&t->etag, g_free);
    g_clear_pointer (&t->last_modified, g_free);
    /* If-Range compares strongly: a weak ETag cannot validate */
    if (t->resp_etag && !g_str_has_prefix (t->resp_etag, "W/"))
      t->etag = g_strdup (t->resp_etag);
    t->last_modified = g_strdup (t->resp_last_modified);
    t->total = status == 200 ? (gint64) length : -1;
    return NULL;
  }
  if (status == 206) {
    if (t->etag && t->resp_etag && strcmp (t->etag, t->resp_etag) != 0)
      return "its ETag changed";
    if (!gst_spdl_http_parse_content_range (t->resp_content_range, &first,
            &total))
      return "a 206 response without a valid Content-Range";
    if (first != t->resume_from)
      return "the Content-Range starts elsewhere";
    if (total >= 0 && t->total >= 0 && total != t->total)
      return "its size changed";
    return NULL;
  }
  /* a 200: the server ignored the range (the same object), or If-Range
   * found it changed */
  if (t->etag && g_strcmp0 (t->etag, t->resp_etag) != 0)
    return "its ETag changed";
  if (!t->etag && t->last_modified &&
      g_strcmp0 (t->last_modified, t->resp_last_modified) != 0)
    return "its Last-Modified changed";
  if (t->total >= 0 && length >= 0 && length != t->total)
    return "its size changed";
  return NULL;
}

/* A whole object's first bytes: its size is known. */
static void
object_started (Transfer * t)
{
  curl_off_t length = -1;

  curl_easy_getinfo (t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  t->total = length;
  /* a range from a server that sends the whole object: only it is kept */
  if (t->range_size && (length < 0 || (guint64) length > t->range_size))
    t->total = (gint64) t->range_size;
}

/* "http://host:port" of @url, the server whose answers are noted. */
static gchar *
origin_of (const gchar * url)
{
  const gchar *host = strstr (url, "://"), *end;

  if (host == NULL)
    return g_strdup (url);
  end = strchr (host + 3, '/');
  return end ? g_strndup (url, end - url) : g_strdup (url);
}

/* Called with the lock: what a successful response (@status) says of its
 * server's byte ranges. A ranged GET answered whole settles it. */
static void
note_ranges (GstSpdlHttp * http, Transfer * t, long status)
{
  gchar *origin = origin_of (t->url);
  GstSpdlHttpRanges old = GPOINTER_TO_INT (g_hash_table_lookup (http->ranges,
          origin)), now = old;

  if (t->range_size && status == 200)
    now = GST_SPDL_HTTP_RANGES_NO;
  else if (old == GST_SPDL_HTTP_RANGES_NO)
    now = old;
  else if (status == 206 || (t->resp_accept_ranges &&
          g_ascii_strcasecmp (t->resp_accept_ranges, "bytes") == 0))
    now = GST_SPDL_HTTP_RANGES_YES;
  else if (t->resp_accept_ranges &&
      g_ascii_strcasecmp (t->resp_accept_ranges, "none") == 0)
    now = GST_SPDL_HTTP_RANGES_NO;
  else if (old == GST_SPDL_HTTP_RANGES_UNKNOWN)
    now = GST_SPDL_HTTP_RANGES_UNADVERTISED;
  if (now != old) {
    gchar *shown = gst_spdl_url_redact (origin);
    GST_INFO ("%s: byte ranges %s", shown, now == GST_SPDL_HTTP_RANGES_YES ?
        "answered" : now == GST_SPDL_HTTP_RANGES_NO ? "not answered" :
        "not advertised");
    g_free (shown);
    g_hash_table_replace (http->ranges, origin, GINT_TO_POINTER (now));
  } else {
    g_free (origin);
  }
}

GstSpdlHttpRanges
gst_spdl_http_get_ranges (GstSpdlHttp * http, const gchar * url)
{
  gchar *resolved = gst_spdl_s3_is_url (url) ?
      gst_spdl_s3_resolve (http->s3, url, NULL) : g_strdup (url);
  gchar *origin = origin_of (resolved);
  GstSpdlHttpRanges ranges;

  g_mutex_lock (&http->lock);
  ranges = GPOINTER_TO_INT (g_hash_table_lookup (http->ranges, origin));
  g_mutex_unlock (&http->lock);
  g_free (origin);
  g_free (resolved);
  return ranges;
}

static size_t
write_cb (char *data, size_t size, size_t nmemb, void *user_data)
{
  Transfer *t = user_data;
  GstSpdlHttp *http = t->http;
  gsize len = size * nmemb, skipped = 0;
  long status = 0;

  curl_easy_getinfo (t->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300) {
    /* an error page: S3's names the error, others the status says all */
    if (t->s3) {
      if (t->error_body == NULL)
        t->error_body = g_string_new (NULL);
      if (t->error_body->len < MAX_ERROR_BODY)
        g_string_append_len (t->error_body, data,
            MIN (len, MAX_ERROR_BODY - t->error_body->len));
    }
    return len;
  }
  if (t->head) {
    /* a GET for a refused HEAD: its headers said all; a 200 (the range
     * ignored) would bring the whole object, so it ends here */
    if (!t->started_body) {
      t->started_body = TRUE;
      g_mutex_lock (&http->lock);
      note_ranges (http, t, status);
      g_mutex_unlock (&http->lock);
    }
    return status == 206 ? len : 0;
  }
  if (!t->started_body) {
    t->started_body = TRUE;
    g_mutex_lock (&http->lock);
    note_ranges (http, t, status);
    if (t->content_type == NULL && t->content_encoding == NULL) {
      t->content_type = g_strdup (t->resp_content_type);
      t->content_encoding = g_strdup (t->resp_content_encoding);
    }
    g_mutex_unlock (&http->lock);
    if (t->streaming) {
      const gchar *changed = check_same_object (t, status);
      if (changed) {
        /* never splice two versions: the stream ends here */
        t->fatal = g_error_new (GST_SPDL_READ_ERROR,
            GST_SPDL_READ_ERROR_HTTP_ERROR, "changed during read: %s (%s)",
            changed, t->display);
        return 0;
      }
      /* the server ignored the Range header: drop what was had */
      if (t->resume_from > 0 && status == 200)
        t->skip = t->resume_from;
    } else {
      object_started (t);
      /* the server ignored the Range header: skip to the range */
      if (t->range_size && status == 200)
        t->skip = t->range_first;
    }
  }
  if (t->skip) {
    skipped = (gsize) MIN ((guint64) len, t->skip);
    t->skip -= skipped;
    if (skipped == len)
      return len;
  }

  g_mutex_lock (&http->lock);
  if (t->closed || http->cancelled) {
    g_mutex_unlock (&http->lock);
    return 0;                   /* ends the transfer */
  }
  /* max-file-size, and a GByteArray's most (G_MAXUINT bytes: more
   * aborts) when there is none: the server says how long a body is */
  if (!t->streaming && ((t->max_size && t->body->len + (len - skipped) >
              t->max_size) || (guint64) t->body->len + (len - skipped) >
          G_MAXUINT)) {
    g_mutex_unlock (&http->lock);
    return 0;
  }
  if (!may_take (http, t, len - skipped)) {
    g_atomic_int_set (&t->paused, TRUE);
    /* waiting on the reader is not slow: the low-speed window starts
     * again when it goes on (xferinfo_cb) */
    t->window_start = 0;
    g_queue_push_tail (&http->paused, t);
    /* a reader waiting for more takes what there is */
    if (t->reader_waiting)
      g_cond_broadcast (&http->cond);
    g_mutex_unlock (&http->lock);
    /* curl hands the same bytes again once resumed */
    t->skip += skipped;
    return CURL_WRITEFUNC_PAUSE;
  }
  if (t->streaming) {
    g_queue_push_tail (&t->chunks, g_bytes_new (data + skipped,
            len - skipped));
    t->buffered += len - skipped;
    set_charge (http, t, t->buffered);
    if (t->reader_waiting && t->buffered >= t->reader_want)
      g_cond_broadcast (&http->cond);
  } else {
    if (t->range_size && t->body->len + (len - skipped) > t->range_size) {
      /* a server that ignores Range sends on: keep the range, stop */
      gsize keep = (gsize) (t->range_size - t->body->len);

      charge_object (http, t, keep);
      g_byte_array_append (t->body, (const guint8 *) data + skipped, keep);
      g_mutex_unlock (&http->lock);
      return 0;
    }
    charge_object (http, t, len - skipped);
    g_byte_array_append (t->body, (const guint8 *) data + skipped,
        len - skipped);
  }
  t->accepted += len - skipped;
  g_mutex_unlock (&http->lock);
  return len;
}

/* The low-speed bound, from the first body byte on: an attempt whose
 * body averages under low_speed_limit bytes/s over a window of
 * low_speed_time s is aborted; a window in which the transfer was paused
 * (its reader behind) starts again. */
static int
xferinfo_cb (void *user_data, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
  Transfer *t = user_data;
  GstSpdlHttp *http = t->http;
  gint64 now = g_get_monotonic_time ();
  guint64 time_us = (guint64) http->config.low_speed_time * G_USEC_PER_SEC;
  gboolean paused;

  if (!t->started_body)
    return 0;
  /* not the lock: curl calls this on the I/O thread also from
   * curl_multi_remove_handle(), which drop_running() calls holding it */
  paused = g_atomic_int_get (&t->paused);
  if (paused || t->window_start == 0 || dlnow < t->window_bytes) {
    t->window_start = now;
    t->window_bytes = dlnow;
  } else if ((guint64) (now - t->window_start) >= time_us) {
    if ((guint64) (dlnow - t->window_bytes) <
        (guint64) http->config.low_speed_limit * http->config.low_speed_time) {
      t->too_slow = MAX (dlnow - t->window_bytes, 1);
      return 1;
    }
    t->window_start = now;
    t->window_bytes = dlnow;
  }
  return 0;
}

/* FALSE with @error when the request cannot be made */
static gboolean
setup_easy (GstSpdlHttp * http, Transfer * t, GError ** error)
{
  guint timeout_s = MAX ((http->config.timeout_ms + 999) / 1000, 1);
  guint connect_ms = http->config.connect_timeout_ms ?
      http->config.connect_timeout_ms : http->config.timeout_ms;

  if (t->easy == NULL && (t->easy = curl_easy_init ()) == NULL) {
    g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_HTTP_ERROR,
        "could not make a request (%s)", t->display);
    return FALSE;
  }
  curl_easy_reset (t->easy);
  curl_slist_free_all (t->headers);
  t->headers = NULL;
  curl_easy_setopt (t->easy, CURLOPT_URL, t->url);
  curl_easy_setopt (t->easy, CURLOPT_PRIVATE, t);
  curl_easy_setopt (t->easy, CURLOPT_WRITEFUNCTION, write_cb);
  curl_easy_setopt (t->easy, CURLOPT_WRITEDATA, t);
  curl_easy_setopt (t->easy, CURLOPT_HEADERFUNCTION, header_cb);
  curl_easy_setopt (t->easy, CURLOPT_HEADERDATA, t);
  if (http->ca_file)
    curl_easy_setopt (t->easy, CURLOPT_CAINFO, http->ca_file);
  curl_easy_setopt (t->easy, CURLOPT_ERRORBUFFER, t->errbuf);
  curl_easy_setopt (t->easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (t->easy, CURLOPT_FOLLOWLOCATION, 1L);
  /* a hostile server's redirect leads to http(s) only, not ftp or file */
  curl_easy_setopt (t->easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt (t->easy, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt (t->easy, CURLOPT_HTTP_VERSION,
      (long) CURL_HTTP_VERSION_2TLS);
  /* over TLS, wait to learn whether the connection multiplexes (HTTP/2)
   * rather than open another; plain HTTP/1.1 would serialize on one */
  if (g_str_has_prefix (t->url, "https://"))
    curl_easy_setopt (t->easy, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt (t->easy, CURLOPT_CONNECTTIMEOUT_MS, (long) connect_ms);
  /* a request that receives nothing for the timeout fails; a long shard
   * that keeps arriving does not */
  curl_easy_setopt (t->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt (t->easy, CURLOPT_LOW_SPEED_TIME, (long) timeout_s);
  curl_easy_setopt (t->easy, CURLOPT_USERAGENT, "gst-spdl/" VERSION);
  t->window_start = 0;
  t->too_slow = 0;
  if (http->config.low_speed_limit && http->config.low_speed_time) {
    curl_easy_setopt (t->easy, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
    curl_easy_setopt (t->easy, CURLOPT_XFERINFODATA, t);
    curl_easy_setopt (t->easy, CURLOPT_NOPROGRESS, 0L);
  }
  if (t->max_size)
    curl_easy_setopt (t->easy, CURLOPT_MAXFILESIZE_LARGE,
        (curl_off_t) t->max_size);
  if (t->head_by_get)
    curl_easy_setopt (t->easy, CURLOPT_RANGE, "0-0");
  else if (t->head)
    curl_easy_setopt (t->easy, CURLOPT_NOBODY, 1L);
  if (t->streaming)
    curl_easy_setopt (t->easy, CURLOPT_BUFFERSIZE,
        (long) STREAM_RECEIVE_BUFFER);
  t->resume_from = t->streaming ? t->accepted : 0;
  if (t->resume_from > 0) {
    gchar *range = g_strdup_printf ("%" G_GUINT64_FORMAT "-", t->resume_from);
    curl_easy_setopt (t->easy, CURLOPT_RANGE, range);
    g_free (range);
    /* the rest only if it is still the object begun: else a 200 */
    if (t->etag || t->last_modified) {
      gchar *if_range = g_strdup_printf ("If-Range: %s", t->etag ?
          t->etag : t->last_modified);
      t->headers = curl_slist_append (t->headers, if_range);
      g_free (if_range);
    }
  }
  if (t->range_size) {
    gchar *range = g_strdup_printf ("%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT,
        t->range_first, t->range_first + t->range_size - 1);
    curl_easy_setopt (t->easy, CURLOPT_RANGE, range);
    g_free (range);
  }
  if (t->s3) {
    gchar **signed_headers, **line;

    /* signed as sent: curl must not normalize /./ or /../ in a key */
    curl_easy_setopt (t->easy, CURLOPT_PATH_AS_IS, 1L);
    /* S3 answers a wrong region or endpoint with a redirect whose
     * signature would not hold: its error body says where instead */
    curl_easy_setopt (t->easy, CURLOPT_FOLLOWLOCATION, 0L);
    /* signed at each attempt: the signature holds for minutes only */
    if (!gst_spdl_s3_sign (http->s3, t->head && !t->head_by_get ? "HEAD" :
            "GET", t->url,
            &signed_headers, error))
      return FALSE;
    for (line = signed_headers; line && *line; line++)
      t->headers = curl_slist_append (t->headers, *line);
    gst_spdl_sigv4_headers_free (signed_headers);
  }
  curl_easy_setopt (t->easy, CURLOPT_HTTPHEADER, t->headers);
  t->started_body = FALSE;
  t->skip = 0;
  g_clear_pointer (&t->resp_etag, g_free);
  g_clear_pointer (&t->resp_last_modified, g_free);
  g_clear_pointer (&t->resp_content_range, g_free);
  g_clear_pointer (&t->resp_accept_ranges, g_free);
  t->responded = FALSE;
  t->errbuf[0] = '\0';
  if (t->error_body)
    g_string_truncate (t->error_body, 0);
  return TRUE;
}

/* Called with the lock: the transfer is over, one way or the other. */
static void
finish (GstSpdlHttp * http, Transfer * t, GError * error)
{
  t->finished = TRUE;
  t->error = error;
  if (t->head) {
    GstSpdlHttpObjectInfo info = { t->status, t->total, t->resp_etag,
      t->resp_last_modified
    };

    t->error = NULL;
    g_mutex_unlock (&http->lock);
    t->head_done (&info, error, t->user_data);
    g_mutex_lock (&http->lock);
  } else if (!t->streaming) {
    GstBuffer *buffer = NULL;
    release_charge (http, t);
    if (error == NULL) {
      gsize len = t->body->len;
      /* an empty body has no data to wrap (gst_memory_new_wrapped()
       * refuses NULL): an empty object, or a listing page */
      if (len == 0) {
        buffer = gst_buffer_new ();
        g_byte_array_unref (t->body);
      } else {
        buffer = gst_buffer_new_wrapped (g_byte_array_free (t->body, FALSE),
            len);
      }
      t->body = NULL;
    }
    t->error = NULL;
    g_mutex_unlock (&http->lock);
    t->done (buffer, error, t->user_data);
    g_mutex_lock (&http->lock);
  }
  g_cond_broadcast (&http->cond);
}

static gboolean
is_retryable (CURLcode result, long status)
{
  switch (result) {
    case CURLE_OK:
      return status == 429 || status >= 500;
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_COULDNT_RESOLVE_HOST:
      return TRUE;
    default:
      return FALSE;
  }
}

/* "HTTP status 403", and for S3 what its error body names (a HEAD's has
 * none), with where the credentials came from or where the chain looked
 * for none (never the secret). */
static gchar *
describe_status (GstSpdlHttp * http, Transfer * t, long status)
{
  gchar *code = NULL, *message = NULL, *source, *why;

  if (!t->s3)
    return g_strdup_printf ("HTTP status %ld", status);
  source = gst_spdl_s3_describe_credentials (http->s3);
  if (t->error_body == NULL ||
      !gst_spdl_aws_parse_error (t->error_body->str, t->error_body->len,
          &code, &message))
    why = g_strdup_printf ("HTTP status %ld; %s", status, source);
  else
    why = g_strdup_printf ("S3 error %s: %s (HTTP status %ld; %s)", code,
        message && *message ? message : "no message", status, source);
  g_free (source);
  g_free (code);
  g_free (message);
  return why;
}

/* A timed-out attempt in the properties' words; counts the attempts the
 * server never answered. */
static gchar *
describe_timeout (GstSpdlHttp * http, Transfer * t)
{
  curl_off_t connected_us = 0;
  guint connect_ms = http->config.connect_timeout_ms ?
      http->config.connect_timeout_ms : http->config.timeout_ms;

  curl_easy_getinfo (t->easy, CURLINFO_CONNECT_TIME_T, &connected_us);
  if (connected_us == 0) {
    t->silent++;
    return g_strdup_printf ("could not connect within %g s "
        "(http-connect-timeout)", connect_ms / 1000.0);
  }
  if (!t->responded) {
    t->silent++;
    return g_strdup_printf ("no response within %g s (http-timeout)",
        MAX ((http->config.timeout_ms + 999) / 1000, 1) * 1.0);
  }
  return g_strdup_printf ("no byte for %g s (http-timeout)",
      MAX ((http->config.timeout_ms + 999) / 1000, 1) * 1.0);
}

/* @why, with the URL a redirect led to where that is the one that failed
 * (a 302 to https whose certificate fails is not the http URL's fault);
 * its query left out, which may hold a signature. Takes @why. */
static gchar *
name_redirect (Transfer * t, gchar * why)
{
  const char *effective = NULL;
  gchar *shown, *named;

  curl_easy_getinfo (t->easy, CURLINFO_EFFECTIVE_URL, &effective);
  if (effective == NULL || strcmp (effective, t->url) == 0)
    return why;
  shown = g_strndup (effective, strcspn (effective, "?#"));
  named = g_strdup_printf ("%s, at %s%s (where it was redirected)", why, shown,
      strlen (shown) < strlen (effective) ? "?..." : "");
  g_free (shown);
  g_free (why);
  return named;
}

/* Called with the lock, the easy handle out of the multi handle. */
static void
transfer_ended (GstSpdlHttp * http, Transfer * t, CURLcode result)
{
  long status = 0;
  gchar *why;
  GError *error;

  curl_easy_getinfo (t->easy, CURLINFO_RESPONSE_CODE, &status);
  t->status = status;
  /* libcurl checks max-file-size against any response's Content-Length: an
   * error page over it is the error its status says (a 503 is retried, a
   * 403 is no "larger than max-file-size") */
  if (result == CURLE_FILESIZE_EXCEEDED && status >= 300)
    result = CURLE_OK;
  /* under the low-speed bound: a timeout, retried as one */
  if (result == CURLE_ABORTED_BY_CALLBACK && t->too_slow)
    result = CURLE_OPERATION_TIMEDOUT;
  if (t->head && !t->head_by_get && result == CURLE_OK && (status == 403 ||
          status == 405 || status == 501) && !t->closed && !http->cancelled) {
    GST_INFO ("%s: HEAD refused (HTTP status %ld): asking a GET of its "
        "first byte", t->display, status);
    t->head_by_get = TRUE;
    t->retry_at = 0;
    g_queue_push_tail (&http->waiting, t);
    return;
  }
  if ((result == CURLE_OK && status >= 200 && status < 300) ||
      (result == CURLE_WRITE_ERROR && t->range_size &&
          t->body->len == t->range_size) ||
      (result == CURLE_WRITE_ERROR && t->head_by_get && status == 200)) {
    long version = 0;
    curl_easy_getinfo (t->easy, CURLINFO_HTTP_VERSION, &version);
    GST_DEBUG ("%s: HTTP status %ld over HTTP/%s", t->display, status,
        version == CURL_HTTP_VERSION_2_0 ? "2" : version ==
        CURL_HTTP_VERSION_3 ? "3" : "1.x");
    http->stats.responses++;
    if (version == CURL_HTTP_VERSION_2_0)
      http->stats.responses_http2++;
    note_ranges (http, t, status);
    /* every ranged read then downloads the object from its start */
    if (t->range_size && status == 200) {
      if (http->stats.range_ignored++ == 0)
        GST_WARNING ("%s: the server ignores byte ranges: each member read "
            "downloads the shard from its start", t->display);
    }
    if (t->head) {
      curl_off_t length = -1;
      guint64 first;
      gint64 total;

      curl_easy_getinfo (t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
          &length);
      t->total = length;
      /* a GET of the first byte: the whole's size is Content-Range's */
      if (t->head_by_get && status == 206)
        t->total = gst_spdl_http_parse_content_range (t->resp_content_range,
            &first, &total) && first == 0 ? total : -1;
      t->status = 200;
    }
    finish (http, t, NULL);
    return;
  }
  if (t->closed)
    return;
  if (t->fatal) {
    GST_WARNING ("%s", t->fatal->message);
    http->stats.changed++;
    error = t->fatal;
    t->fatal = NULL;
    finish (http, t, error);
    return;
  }
  if (result == CURLE_OK)
    why = describe_status (http, t, status);
  else if (result == CURLE_FILESIZE_EXCEEDED || (result == CURLE_WRITE_ERROR
          && !t->streaming && t->max_size))
    why = g_strdup_printf ("larger than max-file-size=%" G_GUINT64_FORMAT,
        t->max_size);
  else if (result == CURLE_WRITE_ERROR && !t->streaming && !http->cancelled)
    why = g_strdup_printf ("larger than %u bytes, the most an object read "
        "whole may be", G_MAXUINT);
  else if (result == CURLE_OPERATION_TIMEDOUT && t->too_slow)
    why = g_strdup_printf ("slower than %u bytes/s (http-low-speed-limit): "
        "%" G_GINT64_FORMAT " bytes in %u s (http-low-speed-time)",
        http->config.low_speed_limit, (gint64) t->too_slow,
        http->config.low_speed_time);
  else if (result == CURLE_OPERATION_TIMEDOUT)
    why = describe_timeout (http, t);
  else if (result == CURLE_PEER_FAILED_VERIFICATION)
    why = g_strdup_printf ("untrusted certificate: %s (a private CA goes in "
        "ca-file)", t->errbuf[0] ? t->errbuf : curl_easy_strerror (result));
  else
    why = g_strdup (t->errbuf[0] ? t->errbuf : curl_easy_strerror (result));
  why = name_redirect (t, why);

  /* a long shard cut off several times, each time after more bytes, has
   * not failed in a row */
  if (t->streaming && t->accepted > t->accepted_at_failure && !t->too_slow)
    t->attempt = t->silent = 0;
  t->accepted_at_failure = t->accepted;
  if (is_retryable (result, status) && t->attempt < http->config.retries &&
      t->silent < MAX_SILENT_ATTEMPTS && !http->cancelled) {
    /* exponential backoff with jitter: base * 2^attempt * [0.5, 1.5) */
    gint64 delay = MIN ((gint64) BACKOFF_BASE_US << MIN (t->attempt, 16),
        BACKOFF_MAX_US);
    delay = (gint64) (delay * g_random_double_range (0.5, 1.5));
    t->attempt++;
    GST_INFO ("retrying %s in %" G_GINT64_FORMAT " ms (attempt %u): %s",
        t->display, delay / 1000, t->attempt, why);
    t->retry_at = g_get_monotonic_time () + delay;
    if (!t->streaming) {
      release_charge (http, t);
      g_byte_array_set_size (t->body, 0);
    }
    g_queue_push_tail (&http->waiting, t);
    g_free (why);
    return;
  }
  error = g_error_new (GST_SPDL_READ_ERROR, result ==
      CURLE_OPERATION_TIMEDOUT ? GST_SPDL_READ_ERROR_TIMEOUT :
      (t->range_size && status == 416) ? GST_SPDL_READ_ERROR_TRUNCATED_SHARD :
      (result == CURLE_FILESIZE_EXCEEDED || (result == CURLE_WRITE_ERROR &&
              !t->streaming)) ? GST_SPDL_READ_ERROR_TOO_LARGE :
      GST_SPDL_READ_ERROR_HTTP_ERROR, "%s%s (%s)", why, t->attempt ?
      ", retries exhausted" : "", t->display);
  g_free (why);
  finish (http, t, error);
}

/* ------------------------------------------------------------------------ */
/* The I/O thread                                                           */

/* Called with the lock: starts waiting transfers while there is room. */
static void
start_waiting (GstSpdlHttp * http, gint64 now, gint64 * next_retry)
{
  GList *l = http->waiting.head;
  gint s3_ready = -1;           /* not asked yet */

  while (l && g_list_length (http->running) < http->config.max_requests) {
    Transfer *t = l->data;
    GList *next = l->next;

    if (t->closed) {
      g_queue_delete_link (&http->waiting, l);
      transfer_unref (t);
    } else if (t->retry_at > now) {
      *next_retry = MIN (*next_retry, t->retry_at);
    } else if (t->s3 && !(s3_ready < 0 ? (s3_ready =
                gst_spdl_s3_credentials_ready (http->s3)) : s3_ready)) {
      /* held back while the credentials are looked up (the provider's
       * thread; it wakes this one up), the other transfers go on */
    } else if (!t->streaming && http->in_flight >= limit_for (http, t) &&
        http->running) {
      break;                    /* in order: the oldest request starts first */
    } else {
      GError *error = NULL;

      g_queue_delete_link (&http->waiting, l);
      if (!setup_easy (http, t, &error)) {
        finish (http, t, error);
        transfer_unref (t);
      } else {
        curl_multi_add_handle (http->multi, t->easy);
        http->running = g_list_prepend (http->running, t);
      }
    }
    l = next;
  }
}

static void
drop_running (GstSpdlHttp * http, Transfer * t)
{
  curl_multi_remove_handle (http->multi, t->easy);
  http->running = g_list_remove (http->running, t);
  if (t->paused)
    g_queue_remove (&http->paused, t);
  g_atomic_int_set (&t->paused, FALSE);
  g_queue_remove (&http->to_resume, t);
}

/* Called with the lock, once cancelled: every transfer ends now, those
 * waiting for a retry or submitted later too, with an error. */
static void
end_cancelled (GstSpdlHttp * http)
{
  Transfer *t;

  while (http->running || !g_queue_is_empty (&http->waiting)) {
    if (http->running) {
      t = http->running->data;
      drop_running (http, t);
    } else {
      t = g_queue_pop_head (&http->waiting);
    }
    if (!t->closed && !t->finished)
      finish (http, t, g_error_new (GST_SPDL_READ_ERROR,
              GST_SPDL_READ_ERROR_HTTP_ERROR, "cancelled (%s)", t->display));
    transfer_unref (t);
  }
}

static gpointer
io_thread (gpointer data)
{
  GstSpdlHttp *http = data;

  g_mutex_lock (&http->lock);
  while (!http->stopping) {
    gint64 now = g_get_monotonic_time (), next_retry = G_MAXINT64;
    GList *resume = NULL, *l;
    CURLMsg *msg;
    int running, left, timeout_ms = POLL_MS;

    /* streams their readers closed */
    for (l = http->running; l;) {
      Transfer *t = l->data;
      l = l->next;
      if (t->closed) {
        drop_running (http, t);
        transfer_unref (t);
      }
    }
    if (http->cancelled)
      end_cancelled (http);
    start_waiting (http, now, &next_retry);
    while (!g_queue_is_empty (&http->to_resume)) {
      Transfer *t = g_queue_pop_head (&http->to_resume);
      if (g_list_find (http->running, t))
        resume = g_list_prepend (resume, t);
    }
    g_mutex_unlock (&http->lock);

    /* curl may call write_cb from here: without the lock */
    for (l = resume; l; l = l->next)
      curl_easy_pause (((Transfer *) l->data)->easy, CURLPAUSE_CONT);
    g_list_free (resume);
    curl_multi_perform (http->multi, &running);

    g_mutex_lock (&http->lock);
    while ((msg = curl_multi_info_read (http->multi, &left))) {
      Transfer *t = NULL;
      if (msg->msg != CURLMSG_DONE)
        continue;
      curl_easy_getinfo (msg->easy_handle, CURLINFO_PRIVATE, (char **) &t);
      drop_running (http, t);
      transfer_ended (http, t, msg->data.result);
      if (t->finished || t->closed)
        transfer_unref (t);
    }
    if (next_retry != G_MAXINT64)
      timeout_ms = CLAMP ((next_retry - now) / 1000, 1, POLL_MS);
    if (!g_queue_is_empty (&http->to_resume))
      timeout_ms = 0;
    g_mutex_unlock (&http->lock);
    curl_multi_poll (http->multi, NULL, 0, timeout_ms, NULL);
    g_mutex_lock (&http->lock);
  }
  /* cancelled: nothing more is called back */
  while (http->running) {
    Transfer *t = http->running->data;
    drop_running (http, t);
    transfer_unref (t);
  }
  g_queue_clear_full (&http->waiting, (GDestroyNotify) transfer_unref);
  g_mutex_unlock (&http->lock);
  return NULL;
}

/* a credentials lookup ended: S3 requests held back for it may start */
static void
credentials_looked_up (gpointer data)
{
  curl_multi_wakeup (data);
}

static gpointer
global_init (gpointer data)
{
  GST_DEBUG_CATEGORY_INIT (spdl_http_debug, "spdlhttp", 0,
      "SPDL HTTP and S3 reads");
  return GINT_TO_POINTER (curl_global_init (CURL_GLOBAL_DEFAULT) == CURLE_OK);
}

GstSpdlHttp *
gst_spdl_http_new (const GstSpdlHttpConfig * config, GError ** error)
{
  static GOnce once = G_ONCE_INIT;
  GstSpdlHttp *http;

  if (!GPOINTER_TO_INT (g_once (&once, global_init, NULL))) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
        "Could not initialize libcurl");
    return NULL;
  }
  http = g_new0 (GstSpdlHttp, 1);
  http->config = *config;
  memset (&http->config.s3, 0, sizeof (http->config.s3));
  http->config.max_requests = MAX (config->max_requests, 1);
  /* the config's strings are read here, not kept */
  http->s3 = gst_spdl_s3_new (&config->s3);
  http->ca_file = ca_file_from (config->ca_file);
  http->config.ca_file = NULL;
  g_mutex_init (&http->lock);
  g_cond_init (&http->cond);
  g_queue_init (&http->waiting);
  g_queue_init (&http->to_resume);
  g_queue_init (&http->paused);
  g_queue_init (&http->charged);
  http->ranges = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  http->multi = curl_multi_init ();
  if (http->multi == NULL) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
        "Could not make a libcurl multi handle");
    gst_spdl_http_free (http);
    return NULL;
  }
  curl_multi_setopt (http->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
      (long) http->config.max_requests);
  curl_multi_setopt (http->multi, CURLMOPT_PIPELINING,
      (long) CURLPIPE_MULTIPLEX);
  gst_spdl_s3_set_credentials_notify (http->s3, credentials_looked_up,
      http->multi);
  http->thread = g_thread_try_new ("spdlhttp", io_thread, http, error);
  if (http->thread == NULL) {
    gst_spdl_http_free (http);
    return NULL;
  }
  if (config->canceller) {
    GstSpdlHttpCanceller *canceller = config->canceller;

    http->canceller = canceller;
    http->config.canceller = NULL;
    g_mutex_lock (&canceller->lock);
    canceller->clients = g_list_prepend (canceller->clients, http);
    if (canceller->cancelled)
      gst_spdl_http_cancel (http);
    g_mutex_unlock (&canceller->lock);
  }
  return http;
}

GstSpdlHttpCanceller *
gst_spdl_http_canceller_new (void)
{
  GstSpdlHttpCanceller *canceller = g_new0 (GstSpdlHttpCanceller, 1);

  g_mutex_init (&canceller->lock);
  return canceller;
}

void
gst_spdl_http_canceller_cancel (GstSpdlHttpCanceller * canceller)
{
  GList *l;

  g_mutex_lock (&canceller->lock);
  canceller->cancelled = TRUE;
  for (l = canceller->clients; l; l = l->next)
    gst_spdl_http_cancel (l->data);
  g_mutex_unlock (&canceller->lock);
}

gboolean
gst_spdl_http_canceller_is_cancelled (GstSpdlHttpCanceller * canceller)
{
  gboolean cancelled;

  g_mutex_lock (&canceller->lock);
  cancelled = canceller->cancelled;
  g_mutex_unlock (&canceller->lock);
  return cancelled;
}

void
gst_spdl_http_canceller_reset (GstSpdlHttpCanceller * canceller)
{
  g_mutex_lock (&canceller->lock);
  canceller->cancelled = FALSE;
  g_mutex_unlock (&canceller->lock);
}

void
gst_spdl_http_canceller_free (GstSpdlHttpCanceller * canceller)
{
  if (canceller == NULL)
    return;
  g_warn_if_fail (canceller->clients == NULL);
  g_list_free (canceller->clients);
  g_mutex_clear (&canceller->lock);
  g_free (canceller);
}

void
gst_spdl_http_cancel (GstSpdlHttp * http)
{
  g_mutex_lock (&http->lock);
  http->cancelled = TRUE;
  g_cond_broadcast (&http->cond);
  g_mutex_unlock (&http->lock);
  if (http->multi)
    curl_multi_wakeup (http->multi);
}

gboolean
gst_spdl_http_is_cancelled (GstSpdlHttp * http)
{
  gboolean cancelled;

  g_mutex_lock (&http->lock);
  cancelled = http->cancelled;
  g_mutex_unlock (&http->lock);
  return cancelled;
}

void
gst_spdl_http_free (GstSpdlHttp * http)
{
  if (http == NULL)
    return;
  if (http->canceller) {
    g_mutex_lock (&http->canceller->lock);
    http->canceller->clients = g_list_remove (http->canceller->clients, http);
    g_mutex_unlock (&http->canceller->lock);
  }
  if (http->thread) {
    g_mutex_lock (&http->lock);
    http->stopping = TRUE;
    http->cancelled = TRUE;
    g_cond_broadcast (&http->cond);
    g_mutex_unlock (&http->lock);
    curl_multi_wakeup (http->multi);
    g_thread_join (http->thread);
  }
  /* its lookup ends first: it wakes up the multi handle */
  gst_spdl_s3_free (http->s3);
  http->s3 = NULL;
  if (http->multi)
    curl_multi_cleanup (http->multi);
  g_queue_clear (&http->to_resume);
  g_queue_clear (&http->paused);
  g_queue_clear (&http->charged);
  if (http->ranges)
    g_hash_table_unref (http->ranges);
  g_free (http->ca_file);
  g_mutex_clear (&http->lock);
  g_cond_clear (&http->cond);
  g_free (http);
}

static void
submit (GstSpdlHttp * http, Transfer * t)
{
  g_mutex_lock (&http->lock);
  g_queue_push_tail (&http->waiting, t);
  g_mutex_unlock (&http->lock);
  curl_multi_wakeup (http->multi);
}

void
gst_spdl_http_get (GstSpdlHttp * http, const gchar * url, guint64 max_size,
    GstSpdlHttpDoneFunc done, gpointer user_data)
{
  Transfer *t = transfer_new (http, url, NULL);

  t->body = g_byte_array_new ();
  t->max_size = max_size;
  t->done = done;
  t->user_data = user_data;
  submit (http, t);
}

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean done;
  GstBuffer *buffer;
  GError *error;
} SyncGet;

static void
sync_done (GstBuffer * buffer, GError * error, gpointer user_data)
{
  SyncGet *get = user_data;

  g_mutex_lock (&get->lock);
  get->buffer = buffer;
  get->error = error;
  get->done = TRUE;
  g_cond_signal (&get->cond);
  g_mutex_unlock (&get->lock);
}

/* Waits for sync_done() on @get (initialized), and clears it. */
static void
sync_wait (SyncGet * get)
{
  g_mutex_lock (&get->lock);
  while (!get->done)
    g_cond_wait (&get->cond, &get->lock);
  g_mutex_unlock (&get->lock);
  g_mutex_clear (&get->lock);
  g_cond_clear (&get->cond);
}

static GBytes *
get_sync (GstSpdlHttp * http, Transfer * t, long *status, GError ** error)
{
  SyncGet get = { 0, };
  GBytes *bytes = NULL;

  g_mutex_init (&get.lock);
  g_cond_init (&get.cond);
  t->body = g_byte_array_new ();
  t->done = sync_done;
  t->user_data = &get;
  t->refs++;                    /* ours: its status is read when done */
  submit (http, t);
  sync_wait (&get);
  if (status) {
    g_mutex_lock (&http->lock);
    *status = t->status;
    g_mutex_unlock (&http->lock);
  }
  transfer_unref (t);
  if (get.buffer) {
    GstMapInfo map;
    if (gst_buffer_map (get.buffer, &map, GST_MAP_READ)) {
      bytes = g_bytes_new (map.data, map.size);
      gst_buffer_unmap (get.buffer, &map);
    }
    gst_buffer_unref (get.buffer);
  } else {
    g_propagate_error (error, get.error);
  }
  return bytes;
}

GBytes *
gst_spdl_http_get_sync (GstSpdlHttp * http, const gchar * url,
    guint64 max_size, long *status, GError ** error)
{
  Transfer *t = transfer_new (http, url, NULL);

  t->max_size = max_size;
  return get_sync (http, t, status, error);
}

void
gst_spdl_http_head (GstSpdlHttp * http, const gchar * url,
    GstSpdlHttpHeadFunc done, gpointer user_data)
{
  Transfer *t = transfer_new (http, url, NULL);

  t->head = TRUE;
  t->body = g_byte_array_new ();        /* stays empty */
  t->head_done = done;
  t->user_data = user_data;
  submit (http, t);
}

/* ------------------------------------------------------------------------ */
/* Streams                                                                  */

GstSpdlHttpStream *
gst_spdl_http_stream_open (GstSpdlHttp * http, const gchar * url)
{
  GstSpdlHttpStream *stream = g_new0 (GstSpdlHttpStream, 1);
  Transfer *t = transfer_new (http, url, NULL);

  t->streaming = TRUE;
  t->refs = 2;                  /* the reader's and the I/O thread's */
  stream->transfer = t;
  g_mutex_lock (&http->lock);
  http->n_streams++;
  g_mutex_unlock (&http->lock);
  submit (http, t);
  return stream;
}

/* Called with the lock: whether a stream's reader that wants @want bytes
 * reads now: they are there, the stream ended or was cancelled, or it was
 * paused by the bound with bytes buffered (what there is is read). */
static gboolean
stream_readable (GstSpdlHttp * http, Transfer * t, guint64 want)
{
  return t->buffered >= want || t->finished || http->cancelled ||
      (t->paused && t->buffered > 0);
}

gssize
gst_spdl_http_stream_read (GstSpdlHttpStream * stream, guint8 * data,
    gsize len, GError ** error)
{
  Transfer *t = stream->transfer;
  GstSpdlHttp *http = t->http;
  gssize got = 0;
  gboolean wake = FALSE;
  gsize want;

  g_mutex_lock (&http->lock);
  t->reading = TRUE;
  want = MIN (len, STREAM_WAKE_BYTES);
  if (!stream_readable (http, t, want)) {
    /* what it waits for passes the bound by one chunk: no deadlock */
    t->reader_waiting = TRUE;
    t->reader_want = want;
    wake = resume_with_room (http);
    if (wake) {
      g_mutex_unlock (&http->lock);
      curl_multi_wakeup (http->multi);
      g_mutex_lock (&http->lock);
    }
    while (!stream_readable (http, t, want))
      g_cond_wait (&http->cond, &http->lock);
    t->reader_waiting = FALSE;
  }
  while (got < (gssize) len && !g_queue_is_empty (&t->chunks)) {
    GBytes *chunk = g_queue_peek_head (&t->chunks);
    gsize size, n;
    const guint8 *bytes = g_bytes_get_data (chunk, &size);

    n = MIN (len - got, size - t->chunk_offset);
    memcpy (data + got, bytes + t->chunk_offset, n);
    got += n;
    t->chunk_offset += n;
    if (t->chunk_offset == size) {
      g_bytes_unref (g_queue_pop_head (&t->chunks));
      t->chunk_offset = 0;
    }
  }
  t->buffered -= got;
  set_charge (http, t, t->buffered);
  wake = got > 0 && resume_with_room (http);
  if (got == 0 && t->error) {
    g_propagate_error (error, g_error_copy (t->error));
    got = -1;
  } else if (got == 0 && http->cancelled && !t->finished) {
    g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_HTTP_ERROR,
        "cancelled (%s)", t->display);
    got = -1;
  }
  g_mutex_unlock (&http->lock);
  if (wake)
    curl_multi_wakeup (http->multi);
  return got;
}

gboolean
gst_spdl_http_stream_get_object (GstSpdlHttpStream * stream, gint64 * size,
    gchar ** etag, gchar ** last_modified)
{
  Transfer *t = stream->transfer;
  gboolean ok;

  /* set by the I/O thread at the first body byte, before it is taken */
  g_mutex_lock (&t->http->lock);
  ok = t->accepted > 0;
  *size = t->total;
  *etag = g_strdup (t->etag);
  *last_modified = g_strdup (t->last_modified);
  g_mutex_unlock (&t->http->lock);
  return ok;
}

gchar *
gst_spdl_http_stream_describe_content (GstSpdlHttpStream * stream)
{
  Transfer *t = stream->transfer;
  GString *described = g_string_new (NULL);

  g_mutex_lock (&t->http->lock);
  if (t->content_type)
    g_string_append_printf (described, "Content-Type: %s", t->content_type);
  if (t->content_encoding)
    g_string_append_printf (described, "%sContent-Encoding: %s",
        described->len ? ", " : "", t->content_encoding);
  g_mutex_unlock (&t->http->lock);
  return g_string_free (described, described->len == 0);
}

void
gst_spdl_http_stream_close (GstSpdlHttpStream * stream)
{
  Transfer *t;
  GstSpdlHttp *http;

  if (stream == NULL)
    return;
  t = stream->transfer;
  http = t->http;
  g_mutex_lock (&http->lock);
  t->closed = TRUE;
  http->n_streams--;
  release_charge (http, t);
  g_mutex_unlock (&http->lock);
  curl_multi_wakeup (http->multi);
  transfer_unref (t);
  g_free (stream);
}

void
gst_spdl_http_get_stats (GstSpdlHttp * http, GstSpdlHttpStats * stats)
{
  g_mutex_lock (&http->lock);
  *stats = http->stats;
  g_mutex_unlock (&http->lock);
}

/* ------------------------------------------------------------------------ */
/* S3 listing                                                               */

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

GPtrArray *
gst_spdl_http_s3_list (GstSpdlHttp * http, const gchar * url, GError ** error)
{
  const gchar *bucket = url + strlen ("s3://");
  const gchar *slash = strchr (bucket, '/');
  gchar *bucket_url = g_strdup_printf ("s3://%.*s/", (int) (slash ?
          slash - bucket : (gssize) strlen (bucket)), bucket);
  gchar *prefix = g_uri_escape_string (slash ? slash + 1 : "", NULL, FALSE);
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  gchar *next_token = NULL;
  gboolean truncated = FALSE, ok = TRUE;
  guint empty_pages = 0;

  do {
    gchar *token = next_token ? g_uri_escape_string (next_token, NULL,
        FALSE) : NULL;
    /* parameters in SigV4's canonical (sorted) order */
    gchar *query = token ? g_strdup_printf ("continuation-token=%s&"
        "list-type=2&prefix=%s", token, prefix) :
        g_strdup_printf ("list-type=2&prefix=%s", prefix);
    Transfer *t = transfer_new (http, bucket_url, query);
    GError *page_error = NULL;
    gchar *sent_token;
    GBytes *page;
    gsize size;
    const gchar *xml;
    guint before = keys->len;

    g_free (token);
    g_free (query);
    /* what the server sends is bounded: each page, the keys in all */
    t->max_size = MAX_LIST_PAGE_SIZE;
    page = get_sync (http, t, NULL, &page_error);
    if (page == NULL) {
      if (g_error_matches (page_error, GST_SPDL_READ_ERROR,
              GST_SPDL_READ_ERROR_TOO_LARGE))
        g_set_error (error, GST_SPDL_READ_ERROR,
            GST_SPDL_READ_ERROR_TOO_LARGE, "an S3 listing page larger than "
            "%d bytes (%s)", MAX_LIST_PAGE_SIZE, bucket_url);
      else
        g_propagate_error (error, g_steal_pointer (&page_error));
      g_clear_error (&page_error);
      ok = FALSE;
      break;
    }
    sent_token = g_steal_pointer (&next_token);
    xml = g_bytes_get_data (page, &size);
    ok = gst_spdl_s3_parse_list_page (xml, size, keys,
        GST_SPDL_S3_MAX_LIST_KEYS, &truncated, &next_token, error);
    g_bytes_unref (page);
    empty_pages = keys->len == before ? empty_pages + 1 : 0;
    if (ok && truncated && next_token && (empty_pages > MAX_EMPTY_LIST_PAGES
            || g_strcmp0 (next_token, sent_token) == 0)) {
      /* the same page again and again, or pages of nothing without end */
      g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_HTTP_ERROR,
          "the S3 listing of %s does not progress (%s)", bucket_url,
          empty_pages > MAX_EMPTY_LIST_PAGES ? "pages without a key" :
          "the continuation token it was asked for, again");
      ok = FALSE;
    }
    g_free (sent_token);
  } while (ok && truncated && next_token);

  g_free (bucket_url);
  g_free (prefix);
  g_free (next_token);
  if (!ok) {
    g_ptr_array_unref (keys);
    return NULL;
  }
  g_ptr_array_sort (keys, compare_strings);
  return keys;
}

void
gst_spdl_http_get_range (GstSpdlHttp * http, const gchar * url,
    guint64 first, guint64 size, GstSpdlHttpDoneFunc done,
    gpointer user_data)
{
  Transfer *t;

  g_return_if_fail (size > 0);
  t = transfer_new (http, url, NULL);
  /* @size is an index's word (a server's): reserved up front only up to
   * MAX_RANGE_RESERVE, the rest as bytes arrive (g_malloc() of gigabytes
   * would abort on a damaged or hostile index) */
  t->body = g_byte_array_sized_new ((guint) MIN (size, MAX_RANGE_RESERVE));
  t->range_first = first;
  t->range_size = size;
  t->done = done;
  t->user_data = user_data;
  submit (http, t);
}

GstBuffer *
gst_spdl_http_get_range_sync (GstSpdlHttp * http, const gchar * url,
    guint64 first, guint64 size, GError ** error)
{
  SyncGet get = { 0, };

  g_mutex_init (&get.lock);
  g_cond_init (&get.cond);
  gst_spdl_http_get_range (http, url, first, size, sync_done, &get);
  sync_wait (&get);
  if (get.buffer == NULL)
    g_propagate_error (error, get.error);
  return get.buffer;
}
