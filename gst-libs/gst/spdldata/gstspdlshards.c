/* GStreamer SPDL: WebDataset tar shards as a sample provider
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

#include "gstspdlshards.h"
#include "gstspdlredact.h"
#include "gstspdlhttp.h"
#include "gstspdlerrors.h"
#include "gstspdltar.h"
#include "gstspdlorder.h"
#include "gstspdlshardindex.h"
#include "gstspdlshardlearn.h"
#include "gstspdlrandom.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

GST_DEBUG_CATEGORY_STATIC (spdl_shards_debug);
#define GST_CAT_DEFAULT spdl_shards_debug

#define INDEX_NAME "shards.idx"
#define MEMBERS_NAME "shards.members"
#define MAX_MEMBERS_INDEX_SIZE (1024 * 1024 * 1024)
#define TAR_BLOCK 512
#define LOCAL_FDS 8             /* local shards kept open by ranged reads */
/* ranged reads of members close together: at most this many samples,
 * gaps (other members) up to COALESCE_GAP, COALESCE_MAX bytes in all;
 * samples of others (another rank's) read over only while they add at
 * most 1 / COALESCE_OTHERS_SHARE to the bytes a request keeps: on W ranks
 * every rank would otherwise move nearly every byte of the shards */
#define MAX_COALESCED 64
#define COALESCE_GAP (64 * 1024)
#define COALESCE_OTHERS_SHARE 4
#define COALESCE_MAX (16 * 1024 * 1024)
#define READ_CHUNK (1024 * 1024)
/* a group's headers and field members read around its image */
#define SCAN_CHUNK (64 * 1024)
/* the last group of a shard read by range: at most this far past its
 * image (the shard's size is not known) */
#define MAX_TAIL_SPAN (256 * 1024 * 1024)
/* Streaming's warm-up (read_positions_streamed()): a ranged GET's latency
 * is worth about this many bytes of a stream; */
#define WARMUP_AHEAD (1024 * 1024)
/* the members it fetches (moved twice) stay within 1/WARMUP_SHARE of the
 * epoch's bytes; */
#define WARMUP_SHARE 25
/* it ends when the streams ran ahead of this many turns in a row. */
#define WARMUP_SETTLED 8
/* the contiguous split's shuffle buffer: samples in it before the first
 * leaves (WebDataset's shuffle(initial=100)) */
#define MIX_INITIAL 100
#define MAX_SHARDS (1000 * 1000)
/* shards read at once while learning their members: local ones (pread of
 * headers) and remote ones (streams, at most http-requests) */
#define LEARN_LOCAL 4
#define LEARN_REMOTE 8
/* shards whose headers are read at once (a ranged GET each in flight; a
 * thread each, so bounded whatever http-requests says) */
#define LEARN_HEADERS 64

/* ------------------------------------------------------------------------ */
/* Byte streams: a shard's bytes, in order                                  */

typedef struct _ByteStream ByteStream;
struct _ByteStream
{
  /* > 0 bytes read, 0 at the end, -1 with @error (a skip reason) */
  gssize (*read) (ByteStream * stream, guint8 * data, gsize len,
      GError ** error);
  void (*close) (ByteStream * stream);
};

typedef struct
{
  ByteStream base;
  int fd;
} FileStream;

static gssize
file_stream_read (ByteStream * stream, guint8 * data, gsize len,
    GError ** error)
{
  FileStream *fs = (FileStream *) stream;
  ssize_t n;

  do
    n = read (fs->fd, data, len);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_UNREADABLE,
        "%s", g_strerror (errno));
  return n;
}

static void
file_stream_close (ByteStream * stream)
{
  FileStream *fs = (FileStream *) stream;

  close (fs->fd);
  g_free (fs);
}

static ByteStream *
file_stream_open (const gchar * path, GError ** error)
{
  FileStream *fs;
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0) {
    g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_UNREADABLE,
        "%s", g_strerror (errno));
    return NULL;
  }
  fs = g_new0 (FileStream, 1);
  fs->base.read = file_stream_read;
  fs->base.close = file_stream_close;
  fs->fd = fd;
  return &fs->base;
}

typedef struct
{
  ByteStream base;
  GstSpdlHttpStream *stream;
} HttpStream;

static gssize
http_stream_read (ByteStream * stream, guint8 * data, gsize len,
    GError ** error)
{
  return gst_spdl_http_stream_read (((HttpStream *) stream)->stream, data,
      len, error);
}

static void
http_stream_close (ByteStream * stream)
{
  gst_spdl_http_stream_close (((HttpStream *) stream)->stream);
  g_free (stream);
}

/* Starts the download: bytes arrive while earlier shards are read. */
static ByteStream *
http_stream_open (GstSpdlHttp * http, const gchar * url)
{
  HttpStream *hs = g_new0 (HttpStream, 1);

  hs->base.read = http_stream_read;
  hs->base.close = http_stream_close;
  hs->stream = gst_spdl_http_stream_open (http, url);
  return &hs->base;
}

/* ------------------------------------------------------------------------ */
/* Locations                                                                */

/* A local file or folder that exists is taken as named, braces and all
 * (a file "a-{0..1}.tar" is one shard, a folder "set-{0..1}" an
 * ImageFolder); URLs and names of nothing are patterns. */
static gboolean
is_existing_local (const gchar * location)
{
  return !gst_spdl_http_is_url (location) &&
      g_file_test (location, G_FILE_TEST_EXISTS);
}

/* ".tar.gz"/".tgz", as WebDataset writes compressed shards, are shards
 * too: the tar reader refuses them as a gzip stream naming them (taken for
 * a list file, their error showed gzip bytes as a bad line) */
gboolean
gst_spdl_shards_has_suffix (const gchar * location, gsize len)
{
  static const gchar *const suffixes[] = { ".tar", ".tar.gz", ".tgz" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (suffixes); i++) {
    gsize n = strlen (suffixes[i]);

    if (len >= n && strncmp (location + len - n, suffixes[i], n) == 0)
      return TRUE;
  }
  return FALSE;
}

gboolean
gst_spdl_shards_is_location (const gchar * location)
{
  const gchar *open_brace;

  if (location == NULL)
    return FALSE;
  if (is_existing_local (location))
    return g_file_test (location, G_FILE_TEST_IS_REGULAR) &&
        gst_spdl_shards_has_suffix (location, strlen (location));
  open_brace = strchr (location, '{');
  if (open_brace && strstr (open_brace, "..") && strchr (open_brace, '}'))
    return TRUE;
  /* a presigned or tokened URL: the path's end, before its query */
  return gst_spdl_shards_has_suffix (location, gst_spdl_http_is_url (location) ?
      strcspn (location, "?#") : strlen (location));
}

static gboolean
parse_bound (const gchar * s, gsize len, guint64 * value)
{
  gsize i;

  if (len == 0 || len > 18)
    return FALSE;
  *value = 0;
  for (i = 0; i < len; i++) {
    if (!g_ascii_isdigit (s[i]))
      return FALSE;
    *value = *value * 10 + (s[i] - '0');
  }
  return TRUE;
}

/* "{FIRST..LAST}" at @open_brace: its bounds, the zero-padded width
 * (0: none) and the brace that closes it. */
static gboolean
parse_range (const gchar * pattern, const gchar * open_brace, guint64 * lo,
    guint64 * hi, guint * width, const gchar ** close_brace, GError ** error)
{
  const gchar *dots;

  *close_brace = strchr (open_brace, '}');
  dots = *close_brace ? g_strstr_len (open_brace, *close_brace - open_brace,
      "..") : NULL;
  if (dots == NULL || !parse_bound (open_brace + 1, dots - open_brace - 1,
          lo) || !parse_bound (dots + 2, *close_brace - dots - 2, hi)
      || *hi < *lo) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "Malformed brace range in \"%s\": expected {FIRST..LAST} with "
        "FIRST <= LAST, decimal", pattern);
    return FALSE;
  }
  /* zero padded as WebDataset writes them: {000000..000009} */
  *width = open_brace[1] == '0' && dots - open_brace - 1 > 1 ?
      dots - open_brace - 1 : 0;
  return TRUE;
}

/* Checks every range and that they name at most MAX_SHARDS, before any
 * name is made. */
static gboolean
check_ranges (const gchar * pattern, GError ** error)
{
  const gchar *open_brace = pattern, *close_brace;
  guint64 lo, hi, count = 1;
  guint width;

  while ((open_brace = strchr (open_brace, '{'))) {
    if (!parse_range (pattern, open_brace, &lo, &hi, &width, &close_brace,
            error))
      return FALSE;
    if (hi - lo >= MAX_SHARDS || count * (hi - lo + 1) > MAX_SHARDS) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "\"%s\" names more than %d shards", pattern, MAX_SHARDS);
      return FALSE;
    }
    count *= hi - lo + 1;
    open_brace = close_brace + 1;
  }
  return TRUE;
}

static void
expand_into (const gchar * pattern, GPtrArray * out)
{
  const gchar *open_brace = strchr (pattern, '{'), *close_brace;
  guint64 lo, hi, i;
  guint width;
  gchar *head;

  if (open_brace == NULL || !parse_range (pattern, open_brace, &lo, &hi,
          &width, &close_brace, NULL)) {
    g_ptr_array_add (out, g_strdup (pattern));
    return;
  }
  head = g_strndup (pattern, open_brace - pattern);
  for (i = lo; i <= hi; i++) {
    gchar *one = g_strdup_printf ("%s%0*" G_GUINT64_FORMAT "%s", head, width,
        i, close_brace + 1);
    expand_into (one, out);
    g_free (one);
  }
  g_free (head);
}

GStrv
gst_spdl_shards_expand (const gchar * pattern, GError ** error)
{
  GPtrArray *out;

  if (is_existing_local (pattern)) {
    gchar *names[] = { (gchar *) pattern, NULL };
    return g_strdupv (names);
  }
  if (!check_ranges (pattern, error))
    return NULL;
  out = g_ptr_array_new ();
  expand_into (pattern, out);
  g_ptr_array_add (out, NULL);
  return (GStrv) g_ptr_array_free (out, FALSE);
}

/* ------------------------------------------------------------------------ */
/* Grouping members into samples                                            */

/* One shard segment being read: members grouped by key, each group with
 * an image member is a sample position; positions [first, end) are
 * emitted, and the groups that are no sample among them (and after the
 * last, by the segment that ends the shard). */
typedef struct
{
  GstSpdlShards *shards;
  const GstSpdlShardRules *rules;
  const gchar *shard;
  guint64 base_index;           /* global index of the shard's first sample */
  guint64 first, end;
  gboolean tail;                /* @end is the shard's end: read it all */
  gboolean repeated;            /* positions another rank reads too (the
                                 * last rank wrapped round): its groups
                                 * that are no sample are not reported */
  guint64 completed;            /* positions seen so far */
  gboolean done;                /* reached @end */

  gchar *key;
  gint image_rank;              /* G_MAXINT: no image (yet) */
  GstBuffer *image;
  gchar *image_name;
  GError *image_error;
  gint label_rank;              /* G_MAXINT: no label member (yet) */
  gint label;
  GError *label_error;
  GPtrArray *extensions;        /* the group's, for a no-image reason */
  enum
  { WANT_NONE, WANT_IMAGE, WANT_LABEL } wanted;  /* the member being read */
  /* the record's fields (config.record): the members found so far, the
   * rank of the alternative each is (G_MAXINT: none yet) */
  GstSpdlFieldData *fields;
  gint *field_ranks;
  gboolean wanted_field;        /* the member being read is a field's */
} Segment;

typedef void (*EmitFunc) (GstSpdlShards * shards, GstSpdlShardSample * s);

/* A ranged read of remote members, in flight or done: this rank's samples
 * k .. k + n - 1, when they lie close together in one shard (an unshuffled
 * epoch on one rank reads a shard in a few requests), else one. */
typedef struct
{
  GstSpdlShards *shards;
  guint64 first_k;              /* this rank's k of the first sample */
  guint n;
  guint64 globals[MAX_COALESCED];       /* global sample indices */
  guint64 start;                /* byte range in the shard */
  guint64 kept;                 /* bytes of its samples' members */
  guint64 others;               /* bytes of other samples read over */
  gboolean done;                /* under the shards' lock */
  GstBuffer *buffer;
  GError *error;
} RangeRead;

struct _GstSpdlShards
{
  GstSpdlShardsConfig config;
  gchar *location;
  GStrv names;                  /* shard locations */
  guint n_shards;
  guint64 *counts;              /* samples per shard */
  guint64 *offsets;             /* global index of each shard's first */
  guint64 total;
  guint64 per_rank;
  guint64 start_index;          /* contiguous split: this rank's first */

  /* elastic order: every sample's member, from shards.members */
  gboolean elastic;
  GstSpdlShardMember *members;
  gchar *members_text;
  const gchar *index_source;    /* where the counts or members came from */
  /* a learned index: what it left out, reported each epoch */
  GPtrArray *notes;
  GPtrArray *warnings;          /* strings, for the element */

  GstSpdlHttp *http;            /* remote shards */
  GstSpdlShardRules *rules;     /* which members are image and label */

  GThread *thread;
  GMutex lock;
  GCond cond;
  GQueue queue;                 /* of GstSpdlShardSample, ready */
  gboolean stopping;
  gboolean flushing;
  gboolean finished;            /* the thread pushed its last sample */

  /* the reader thread's */
  GPtrArray *mix;               /* shuffle buffer */
  guint64 mix_bytes;            /* of the images in it */
  guint64 mix_grown;            /* samples in since it held MIX_INITIAL */
  GstSpdlRng mix_rng;
  guint64 to_skip;              /* start-index samples not yet dropped */
  guint64 next_k;               /* this rank's items delivered this epoch */
  guint epoch;                  /* being read */
  int fds[LOCAL_FDS];           /* local shards open for ranged reads */
  guint fd_shards[LOCAL_FDS];
  guint next_fd;
  RangeRead **ring;             /* remote ranged reads, in order */
  guint ring_size;
  RangeRead *deferred_read;     /* a streamed member's, at its turn */
  /* remote elastic order from a server without byte ranges: members cut
   * out of shards streamed whole (read_positions_streamed()) */
  gboolean stream_members;
  /* the same by choice (remote_reads): a rank that reads every member of
   * the shards moves the same bytes in a request per shard */
  gboolean stream_whole;
};

static void flush_group (Segment * seg);

static guint
record_size (GstSpdlShards * shards)
{
  return shards && shards->config.record ? shards->config.record->n_fields : 0;
}

static void
segment_clear_fields (Segment * seg)
{
  guint i, n = record_size (seg->shards);

  if (seg->field_ranks == NULL)
    return;
  gst_spdl_field_data_free (seg->fields, n);
  seg->fields = gst_spdl_field_data_new (n);
  for (i = 0; i < n; i++)
    seg->field_ranks[i] = G_MAXINT;
  seg->wanted_field = FALSE;
}

/* Whether the member @extension (@size bytes) of the current group is one
 * of the record's fields, better than what it holds: then its place is
 * taken (the data comes to field_member()), or refused when too large. */
static gboolean
want_field_member (GstSpdlShards * shards, GstSpdlFieldData * fields,
    gint * ranks, const gchar * extension, guint64 size)
{
  const GstSpdlRecord *record = shards->config.record;
  guint64 max_size = shards->config.max_field_size;
  gboolean want = FALSE;
  guint i;

  for (i = 0; i < record_size (shards); i++) {
    gint rank = gst_spdl_field_match (&record->fields[i], extension, FALSE);

    if (rank < 0 || rank >= ranks[i])
      continue;
    ranks[i] = rank;
    g_clear_pointer (&fields[i].data, g_bytes_unref);
    g_clear_error (&fields[i].error);
    if (max_size && size > max_size)
      fields[i].error = g_error_new (GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_FIELD_TOO_LARGE, "holds %" G_GUINT64_FORMAT
          " bytes (member .%s), more than max-field-size=%" G_GUINT64_FORMAT,
          size, extension, max_size);
    else
      want = TRUE;
  }
  return want;
}

/* The bytes of a member want_field_member() wanted (@data NULL: they
 * could not be held): every field whose chosen alternative it is. */
static void
field_member (GstSpdlShards * shards, GstSpdlFieldData * fields,
    const gint * ranks, const gchar * extension, GstBuffer * data)
{
  const GstSpdlRecord *record = shards->config.record;
  GBytes *bytes = data ? gst_spdl_bytes_from_buffer (data) : NULL;
  guint i;

  for (i = 0; i < record_size (shards); i++) {
    gint rank = gst_spdl_field_match (&record->fields[i], extension, FALSE);

    if (rank < 0 || rank != ranks[i] || fields[i].data || fields[i].error)
      continue;
    if (bytes)
      fields[i].data = g_bytes_ref (bytes);
    else
      fields[i].error = g_error_new (GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_FIELD_TOO_LARGE, "could not be held in memory "
          "(member .%s)", extension);
  }
  if (bytes)
    g_bytes_unref (bytes);
}

static void
segment_clear_group (Segment * seg)
{
  g_clear_pointer (&seg->key, g_free);
  g_clear_pointer (&seg->image, gst_buffer_unref);
  g_clear_pointer (&seg->image_name, g_free);
  g_clear_error (&seg->image_error);
  g_clear_error (&seg->label_error);
  if (seg->extensions)
    g_ptr_array_set_size (seg->extensions, 0);
  seg->image_rank = seg->label_rank = G_MAXINT;
  seg->label = -1;
  seg->wanted = WANT_NONE;
  segment_clear_fields (seg);
}

static void
segment_init (Segment * seg, const GstSpdlShardRules * rules)
{
  memset (seg, 0, sizeof (*seg));
  seg->rules = rules;
  seg->extensions = g_ptr_array_new_with_free_func (g_free);
  segment_clear_group (seg);
}

/* After segment_init(): the shards' record's fields are read too. */
static void
segment_set_shards (Segment * seg, GstSpdlShards * shards)
{
  seg->shards = shards;
  if (record_size (shards) > 0) {
    seg->field_ranks = g_new (gint, record_size (shards));
    segment_clear_fields (seg);
  }
}

static void
segment_clear (Segment * seg)
{
  segment_clear_group (seg);
  gst_spdl_field_data_free (seg->fields, record_size (seg->shards));
  g_free (seg->field_ranks);
  g_ptr_array_unref (seg->extensions);
}

/* A member of @key arrives: a new key completes the current group. */
static void
segment_enter_key (Segment * seg, const gchar * key)
{
  if (seg->key && strcmp (seg->key, key) == 0)
    return;
  flush_group (seg);
  segment_clear_group (seg);
  seg->key = g_strdup (key);
}

static gboolean
segment_in_range (Segment * seg)
{
  return seg->completed >= seg->first && seg->completed < seg->end;
}

static gboolean
segment_want (const gchar * name, guint64 size, gpointer user_data)
{
  Segment *seg = user_data;
  guint64 max_size = seg->shards ? seg->shards->config.max_member_size : 0;
  gchar *key, *extension;
  gint image_rank, label_rank;
  gboolean want = FALSE;

  seg->wanted = WANT_NONE;
  /* WebDataset passes over such a member: the group goes on */
  if (!gst_spdl_tar_split_name (name, &key, &extension))
    return FALSE;
  segment_enter_key (seg, key);
  if (seg->extensions->len < 16 &&
      !g_ptr_array_find_with_equal_func (seg->extensions, extension,
          g_str_equal, NULL))
    g_ptr_array_add (seg->extensions, g_strdup (extension));
  image_rank = gst_spdl_shard_rules_image_rank (seg->rules, extension);
  label_rank = gst_spdl_shard_rules_label_rank (seg->rules, extension);
  if (seg->completed >= seg->end && !seg->tail) {
    seg->done = TRUE;
  } else if (image_rank >= 0) {
    /* the first of the image list present: a better one replaces it */
    if (image_rank < seg->image_rank) {
      seg->image_rank = image_rank;
      g_clear_pointer (&seg->image, gst_buffer_unref);
      g_clear_error (&seg->image_error);
      g_free (seg->image_name);
      seg->image_name = g_strdup (name);
      if (!segment_in_range (seg))
        want = FALSE;
      else if (max_size && size > max_size)
        seg->image_error = g_error_new (GST_SPDL_READ_ERROR,
            GST_SPDL_READ_ERROR_TOO_LARGE, "%" G_GUINT64_FORMAT " bytes, "
            "more than max-file-size=%" G_GUINT64_FORMAT, size, max_size);
      else
        want = TRUE;
      if (want)
        seg->wanted = WANT_IMAGE;
    } else {
      gchar *shown = gst_spdl_url_redact (seg->shard);
      GST_DEBUG ("%s: \"%s\" is not the group's image", shown, name);
      g_free (shown);
    }
  }
  if (seg->field_ranks && segment_in_range (seg) &&
      want_field_member (seg->shards, seg->fields, seg->field_ranks,
          extension, size)) {
    seg->wanted_field = TRUE;
    want = TRUE;
  }
  if (seg->done || image_rank >= 0) {
    /* neither a label */
  } else if (label_rank >= 0 && label_rank < seg->label_rank) {
    seg->label_rank = label_rank;
    seg->label = -1;
    g_clear_error (&seg->label_error);
    /* also before the segment's first position: a group whose label is
     * no label holds no position, so counting them needs it */
    if (gst_spdl_shard_rules_check_label_size (seg->rules, name, extension,
            size, &seg->label_error)) {
      want = TRUE;
      seg->wanted = WANT_LABEL;
    }
  }
  g_free (key);
  g_free (extension);
  return want;
}

static gboolean
segment_member (const gchar * name, guint64 size, GstBuffer * data,
    gpointer user_data)
{
  Segment *seg = user_data;
  gchar *key, *extension;
  GstMapInfo map;

  if (seg->wanted == WANT_IMAGE && data) {
    seg->image = gst_buffer_ref (data);
  } else if (seg->wanted == WANT_LABEL) {
    gst_spdl_tar_split_name (name, &key, &extension);
    if (data == NULL || !gst_buffer_map (data, &map, GST_MAP_READ)) {
      seg->label_error = g_error_new (GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_BAD_LABEL, "label member \"%s\" could not be "
          "held in memory", name);
    } else {
      gst_spdl_shard_rules_parse_label (seg->rules, name, extension,
          map.data, map.size, &seg->label, &seg->label_error);
      gst_buffer_unmap (data, &map);
    }
    g_free (key);
    g_free (extension);
  }
  if (seg->wanted_field) {
    gst_spdl_tar_split_name (name, &key, &extension);
    field_member (seg->shards, seg->fields, seg->field_ranks, extension,
        data);
    g_free (key);
    g_free (extension);
  }
  seg->wanted = WANT_NONE;
  seg->wanted_field = FALSE;
  if (data)
    gst_buffer_unref (data);
  return !seg->done;
}

static void emit_sample (GstSpdlShards * shards, GstSpdlShardSample * sample);

/* Why the current group is no sample (no image, a label that is no label
 * or none where one is required), NULL: it is one. */
static GError *
segment_group_error (Segment * seg)
{
  if (seg->image_rank == G_MAXINT) {
    GError *error;

    g_ptr_array_add (seg->extensions, NULL);
    error = gst_spdl_shard_rules_no_image_error (seg->rules, seg->key,
        (const gchar * const *) seg->extensions->pdata);
    g_ptr_array_remove_index (seg->extensions, seg->extensions->len - 1);
    return error;
  }
  if (seg->label_error)
    return g_steal_pointer (&seg->label_error);
  if (seg->label_rank == G_MAXINT &&
      gst_spdl_shard_rules_label_required (seg->rules))
    return g_error_new (GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_NO_LABEL,
        "group \"%s\" has no label member (label-key)", seg->key);
  return NULL;
}

/* The current group is complete: a sample (a position) if it has an image
 * and its label is one (or none is needed), as the index files and a
 * learned index count them; else a skip of no position, emitted by the
 * segment of the position that follows it (or that ends the shard). */
static void
flush_group (Segment * seg)
{
  GstSpdlShardSample *sample;
  GError *error;
  guint64 position;

  if (seg->key == NULL)
    return;
  if ((error = segment_group_error (seg)) != NULL) {
    position = seg->completed;
    if (seg->shards == NULL || seg->repeated || !(segment_in_range (seg) ||
            (seg->tail && position == seg->end))) {
      g_error_free (error);
      return;
    }
    sample = g_new0 (GstSpdlShardSample, 1);
    sample->index = seg->base_index + MIN (position, seg->end - 1);
    sample->label = -1;
    sample->extra = TRUE;
    sample->path = seg->image_rank == G_MAXINT ?
        g_strdup_printf ("%s:%s", seg->shard, seg->key) :
        g_strdup_printf ("%s:%s", seg->shard, seg->image_name);
    sample->error = error;
    emit_sample (seg->shards, sample);
    return;
  }
  position = seg->completed++;
  if (position < seg->first || position >= seg->end || seg->shards == NULL)
    return;
  sample = g_new0 (GstSpdlShardSample, 1);
  sample->index = seg->base_index + position;
  sample->label = seg->label;
  sample->path = g_strdup_printf ("%s:%s", seg->shard, seg->image_name);
  if (seg->image_error)
    sample->error = g_steal_pointer (&seg->image_error);
  else if (seg->image == NULL)
    sample->error = g_error_new (GST_SPDL_READ_ERROR,
        GST_SPDL_READ_ERROR_TOO_LARGE, "out of memory for the image member");
  else
    sample->buffer = g_steal_pointer (&seg->image);
  if (sample->error)
    sample->label = -1;
  else if (seg->field_ranks) {
    sample->n_fields = record_size (seg->shards);
    sample->fields = g_steal_pointer (&seg->fields);
    seg->fields = gst_spdl_field_data_new (sample->n_fields);
  }
  emit_sample (seg->shards, sample);
}

/* ------------------------------------------------------------------------ */
/* Counting without an index: the tar headers, data passed over            */

static gboolean
count_local_shard (const gchar * path, guint64 * count, GError ** error)
{
  Segment seg;
  GstSpdlTarParser *parser;
  GError *tar_error = NULL;
  guint8 header[512];
  guint64 offset = 0;
  gboolean ok = TRUE;
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0) {
    gchar *display = g_filename_display_name (path);
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
        "Could not open shard \"%s\": %s", display, g_strerror (errno));
    g_free (display);
    return FALSE;
  }
  /* shards.idx: the default rules */
  segment_init (&seg, gst_spdl_shard_rules_get_default ());
  seg.end = G_MAXUINT64;
  seg.first = G_MAXUINT64;
  parser = gst_spdl_tar_parser_new (segment_want, segment_member, &seg);
  for (;;) {
    guint64 skip = gst_spdl_tar_parser_skippable (parser);
    ssize_t n;

    if (skip) {
      gst_spdl_tar_parser_skip (parser, skip);
      offset += skip;
      continue;
    }
    n = pread (fd, header, sizeof (header), offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      g_set_error (&tar_error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
          "%s", g_strerror (errno));
      break;
    }
    if (n == 0) {
      gst_spdl_tar_parser_finish (parser, &tar_error);
      break;
    }
    offset += n;
    if (!gst_spdl_tar_parser_feed (parser, header, n, &tar_error))
      break;
  }
  if (tar_error) {
    gchar *display = g_filename_display_name (path);
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
        "Could not list shard \"%s\": %s", display, tar_error->message);
    g_free (display);
    g_error_free (tar_error);
    ok = FALSE;
  }
  flush_group (&seg);
  segment_clear (&seg);
  *count = seg.completed;
  gst_spdl_tar_parser_free (parser);
  close (fd);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Listing                                                                  */

/* An index file beside the shards: its text, or NULL with *@absent when
 * there is none (no local file, a 404 but for a missing bucket), or NULL
 * with @error when it cannot be read (a refusal, a server error). */
typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean done;
  gboolean ok;
} HeadWait;

static void
head_done (const GstSpdlHttpObjectInfo * info, GError * error,
    gpointer user_data)
{
  HeadWait *wait = user_data;

  g_mutex_lock (&wait->lock);
  wait->ok = error == NULL;
  wait->done = TRUE;
  g_cond_signal (&wait->cond);
  g_mutex_unlock (&wait->lock);
  g_clear_error (&error);
}

/* Whether @url answers a HEAD. */
static gboolean
object_readable (GstSpdlHttp * http, const gchar * url)
{
  HeadWait wait = { 0, };

  g_mutex_init (&wait.lock);
  g_cond_init (&wait.cond);
  gst_spdl_http_head (http, url, head_done, &wait);
  g_mutex_lock (&wait.lock);
  while (!wait.done)
    g_cond_wait (&wait.cond, &wait.lock);
  g_mutex_unlock (&wait.lock);
  g_mutex_clear (&wait.lock);
  g_cond_clear (&wait.cond);
  return wait.ok;
}

static gchar *
fetch_index (GstSpdlShards * shards, const gchar * path, guint64 max_size,
    gboolean * absent, GError ** error)
{
  gchar *contents = NULL;
  GBytes *bytes;
  GError *fetch_error = NULL;
  long status = 0;

  *absent = FALSE;
  if (shards->http == NULL) {
    if (g_file_get_contents (path, &contents, NULL, &fetch_error))
      return contents;
    /* one that is there but cannot be read is not taken for none: ranks
     * that can read it would use another order */
    if (g_error_matches (fetch_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
      *absent = TRUE;
    else
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
          "Could not read the shard index: %s", fetch_error->message);
    g_error_free (fetch_error);
    return NULL;
  }
  bytes = gst_spdl_http_get_sync (shards->http, path, max_size, &status,
      &fetch_error);
  /* S3 answers a missing bucket with 404 too (describe_status()'s words) */
  if (bytes == NULL && status == 404 &&
      !g_str_has_prefix (fetch_error->message, "S3 error NoSuchBucket")) {
    gchar *shown = gst_spdl_url_redact (path);
    GST_INFO ("no %s: %s", shown, fetch_error->message);
    g_free (shown);
    g_error_free (fetch_error);
    *absent = TRUE;
    return NULL;
  }
  /* S3 answers a missing key with 403 to a caller without s3:ListBucket
   * (a read-only training role, a public bucket, also over https://), and
   * signed or tokened URLs (a CloudFront policy, a SAS token) name the
   * shards only: the index is absent if the shards themselves can be read */
  if (bytes == NULL && (status == 401 || status == 403) &&
      (!gst_spdl_s3_is_url (path) ||
          g_str_has_prefix (fetch_error->message, "S3 error AccessDenied")) &&
      object_readable (shards->http, shards->names[0])) {
    gchar *shown_index = gst_spdl_url_redact (path);
    gchar *shown_shard = gst_spdl_url_redact (shards->names[0]);
    GST_INFO ("%s refused, %s readable: taken as absent (no s3:ListBucket)",
        shown_index, shown_shard);
    g_free (shown_index);
    g_free (shown_shard);
    g_error_free (fetch_error);
    *absent = TRUE;
    return NULL;
  }
  if (bytes == NULL) {
    /* a refusal or a server error is not a missing index */
    g_set_error (error, GST_RESOURCE_ERROR, status == 401 || status == 403 ?
        GST_RESOURCE_ERROR_NOT_AUTHORIZED : GST_RESOURCE_ERROR_OPEN_READ,
        "Could not read the shards' folder: %s", fetch_error->message);
    g_error_free (fetch_error);
    return NULL;
  }
  contents = g_strndup (g_bytes_get_data (bytes, NULL),
      g_bytes_get_size (bytes));
  g_bytes_unref (bytes);
  return contents;
}

/* "shards.idx": one "NAME<TAB>SAMPLES" line per shard (NAME as in the
 * folder); lines starting with # are comments. NULL without @error when
 * there is none. */
static GHashTable *
load_index (GstSpdlShards * shards, const gchar * folder, GError ** error)
{
  gchar *path = g_strconcat (folder, "/", INDEX_NAME, NULL);
  gchar *contents = NULL;
  GHashTable *index;
  gboolean absent;

  if ((contents = fetch_index (shards, path, 64 * 1024 * 1024, &absent,
              error)) == NULL) {
    g_free (path);
    return NULL;
  }
  index = gst_spdl_shard_index_parse_counts (contents, path, error);
  g_free (contents);
  g_free (path);
  return index;
}

/* The folder of the shards (where the index files are). */
static gchar *
shards_folder (GstSpdlShards * shards)
{
  const gchar *slash = strrchr (shards->names[0], '/');

  return slash ? g_strndup (shards->names[0], slash - shards->names[0]) :
      g_strdup (".");
}

/* The elastic order needs every sample's byte range: from shards.members
 * (tools/make-shards writes it). FALSE without @error when there is none
 * or it lacks a listed shard (the contiguous split is used then), with
 * @error when it cannot be read. */
static gboolean
load_members (GstSpdlShards * shards, GError ** error)
{
  gchar *folder = shards_folder (shards);
  gchar *path = g_strconcat (folder, "/", MEMBERS_NAME, NULL);
  GError *fetch_error = NULL;
  gboolean absent;
  gchar *text = fetch_index (shards, path, MAX_MEMBERS_INDEX_SIZE, &absent,
      &fetch_error);
  GArray *parsed = g_array_new (FALSE, FALSE, sizeof (GstSpdlShardMember));
  GHashTable *found = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  GHashTable *listed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  GPtrArray *notes = NULL;
  gboolean ok = FALSE;
  guint i;

  if (text == NULL && fetch_error) {
    /* one that cannot be read (a refusal, a server that fails or never
     * answers) is not taken for none: ranks that can read it would use
     * another order, and shards.idx would only wait for the same server */
    g_propagate_error (error, fetch_error);
    goto done;
  }
  if (text == NULL) {
    gchar *shown = gst_spdl_url_redact (path);
    GST_INFO ("no member index %s", shown);
    g_free (shown);
    goto done;
  }
  /* the groups make-shards --index-only found no sample, skipped as a
   * learned index's notes are */
  notes = gst_spdl_shard_notes_new ();
  for (i = 0; i < shards->n_shards; i++)
    g_hash_table_insert (listed, g_path_get_basename (shards->names[i]),
        GUINT_TO_POINTER (i));
  if (!gst_spdl_shard_notes_parse (text, shards->n_shards, listed, notes,
          path, error) ||
      !gst_spdl_shard_index_parse_members (text, path, parsed, found,
          error))
    goto done;
  for (i = 0; i < shards->n_shards; i++) {
    gchar *base = g_path_get_basename (shards->names[i]);
    guint64 *range = g_hash_table_lookup (found, base);

    g_free (base);
    if (range == NULL) {
      gchar *shown_shard = gst_spdl_url_redact (shards->names[i]);
      gchar *shown_index = gst_spdl_url_redact (path);
      GST_INFO ("shard %s is not in %s: tar shards split contiguously",
          shown_shard, shown_index);
      g_free (shown_shard);
      g_free (shown_index);
      shards->total = 0;
      goto done;
    }
    shards->counts[i] = range[2];
    shards->offsets[i] = shards->total;
    shards->total += range[2];
  }
  shards->members = g_new (GstSpdlShardMember, MAX (shards->total, 1));
  for (i = 0; i < shards->n_shards; i++) {
    gchar *base = g_path_get_basename (shards->names[i]);
    guint64 *range = g_hash_table_lookup (found, base), k;

    g_free (base);
    for (k = 0; k < range[2]; k++) {
      shards->members[shards->offsets[i] + k] = g_array_index (parsed,
          GstSpdlShardMember, range[0] + k);
      shards->members[shards->offsets[i] + k].shard = i;
    }
  }
  shards->members_text = g_steal_pointer (&text);
  shards->index_source = MEMBERS_NAME;
  if (notes->len > 0)
    shards->notes = g_steal_pointer (&notes);
  ok = TRUE;

done:
  if (notes)
    g_ptr_array_unref (notes);
  g_hash_table_unref (listed);
  g_free (text);
  g_array_unref (parsed);
  g_hash_table_unref (found);
  g_free (path);
  g_free (folder);
  return ok;
}


/* The learned index's hint that labels are -1 because the shards hold
 * .json (.txt ...) members and no .cls is noise when the record's fields
 * read those members: they are captions or targets, not labels. */
static void
drop_claimed_label_hints (GstSpdlShards * shards)
{
  const GstSpdlRecord *record = shards->config.record;
  guint i, f;

  if (record == NULL || shards->warnings == NULL)
    return;
  for (i = shards->warnings->len; i-- > 0;) {
    gchar *ext = gst_spdl_shard_learned_unlabelled_member
        (g_ptr_array_index (shards->warnings, i));
    gboolean claimed = FALSE;

    for (f = 0; ext && f < record->n_fields && !claimed; f++)
      claimed = gst_spdl_field_match (&record->fields[f], ext, FALSE) >= 0;
    if (claimed)
      g_ptr_array_remove_index (shards->warnings, i);
    g_free (ext);
  }
}

/* Neither index file: the member index learned from the shards (or their
 * cache), used as shards.members would be; the contiguous split takes
 * its counts of the samples a stream of each shard yields. */
static gboolean
learn_index (GstSpdlShards * shards, GError ** error)
{
  GstSpdlShardLearnConfig config = { 0, };
  GstSpdlShardLearned *learned;
  guint i;

  config.names = (const gchar * const *) shards->names;
  config.n_shards = shards->n_shards;
  config.http = shards->http;
  config.parallel = shards->http ? MIN (MAX (shards->config.http.max_requests,
          1), shards->config.learn_by_headers ? LEARN_HEADERS :
      LEARN_REMOTE) : LEARN_LOCAL;
  config.by_headers = shards->config.learn_by_headers;
  config.cache_dir = shards->config.cache_dir;
  config.rules = shards->rules;
  config.progress = shards->config.learn_progress;
  config.progress_data = shards->config.learn_progress_data;
  if ((learned = gst_spdl_shard_learn (&config, error)) == NULL)
    return FALSE;
  shards->total = 0;
  for (i = 0; i < shards->n_shards; i++) {
    shards->counts[i] = learned->counts[i];
    shards->offsets[i] = shards->total;
    shards->total += shards->counts[i];
  }
  if (shards->config.elastic) {
    shards->elastic = TRUE;
    shards->members = g_steal_pointer (&learned->members);
    shards->members_text = g_steal_pointer (&learned->text);
  }
  /* reported each epoch in the elastic order (the contiguous split's
   * streams meet them), and in an error when no sample is left */
  shards->notes = g_steal_pointer (&learned->notes);
  shards->index_source = learned->cached ? "cached" : "learned";
  shards->warnings = g_steal_pointer (&learned->warnings);
  drop_claimed_label_hints (shards);
  GST_INFO ("members of %u shards %s%s%s", shards->n_shards,
      learned->cached ? "from the cache" : "learned",
      learned->cache_file ? ", kept in " : "", learned->cache_file ?
      learned->cache_file : "");
  gst_spdl_shard_learned_free (learned);
  return TRUE;
}

static gboolean
count_shards (GstSpdlShards * shards, GError ** error)
{
  gchar *folder;
  GError *index_error = NULL;
  GHashTable *index;
  guint i;

  /* shards.idx counts by the default rules */
  if (!gst_spdl_shard_rules_is_default (shards->rules))
    return learn_index (shards, error);
  folder = shards_folder (shards);
  index = load_index (shards, folder, &index_error);

  if (index_error) {
    g_free (folder);
    g_propagate_error (error, index_error);
    return FALSE;
  }
  if (index == NULL) {
    g_free (folder);
    return learn_index (shards, error);
  }
  shards->index_source = INDEX_NAME;
  for (i = 0; i < shards->n_shards; i++) {
    gchar *base = g_path_get_basename (shards->names[i]);
    guint64 *indexed = g_hash_table_lookup (index, base);

    g_free (base);
    if (indexed)
      shards->counts[i] = *indexed;
    else if (shards->http) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
          "Shard \"%s\" is not in the index %s/" INDEX_NAME,
          shards->names[i], folder);
      break;
    } else if (!count_local_shard (shards->names[i], &shards->counts[i], error))
      break;
    shards->offsets[i] = shards->total;
    shards->total += shards->counts[i];
  }
  g_hash_table_unref (index);
  g_free (folder);
  return i == shards->n_shards;
}

GstSpdlShards *
gst_spdl_shards_open (const GstSpdlShardsConfig * config, GError ** error)
{
  GstSpdlShards *shards;
  guint64 world = MAX (config->world_size, 1);
  guint i;

  GST_DEBUG_CATEGORY_INIT (spdl_shards_debug, "spdlshards", 0,
      "SPDL tar shards");

  shards = g_new0 (GstSpdlShards, 1);
  /* before any failure: freeing closes them (0 is the process's stdin) */
  for (i = 0; i < LOCAL_FDS; i++)
    shards->fds[i] = -1;
  shards->config = *config;
  shards->location = g_strdup (config->location);
  shards->config.location = shards->location;
  g_mutex_init (&shards->lock);
  g_cond_init (&shards->cond);
  g_queue_init (&shards->queue);
  shards->names = gst_spdl_shards_expand (config->location, error);
  if (shards->names == NULL)
    goto failed;
  shards->n_shards = g_strv_length (shards->names);
  if (gst_spdl_http_is_url (shards->names[0])) {
    GstSpdlHttpConfig http_config = config->http;
    /* shards read ahead share the bound on bytes in flight */
    shards->http = gst_spdl_http_new (&http_config, error);
    if (shards->http == NULL)
      goto failed;
  }
  shards->counts = g_new0 (guint64, shards->n_shards);
  shards->offsets = g_new0 (guint64, shards->n_shards);
  if ((shards->rules = gst_spdl_shard_rules_new (config->image_key,
              config->label_key, config->label_field, error)) == NULL)
    goto failed;
  shards->config.image_key = shards->config.label_key =
      shards->config.label_field = NULL;
  /* shards.members lists the members the default rules pick */
  if (config->elastic && gst_spdl_shard_rules_is_default (shards->rules)) {
    GError *members_error = NULL;
    shards->elastic = load_members (shards, &members_error);
    if (members_error) {
      g_propagate_error (error, members_error);
      goto failed;
    }
  }
  if (!shards->elastic && !count_shards (shards, error))
    goto failed;
  shards->per_rank = gst_spdl_order_rank_share (shards->total, world,
      config->drop_uneven);
  if (shards->elastic && config->start_offset > shards->total) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "start-offset %" G_GUINT64_FORMAT " is past the end of an epoch of %"
        G_GUINT64_FORMAT " samples", config->start_offset, shards->total);
    goto failed;
  }
  if (!shards->elastic && config->start_offset % world != 0) {
    /* each rank reads a contiguous part of the shard stream */
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "Tar shards split in contiguous parts per rank (%s) resume only "
        "at the number of ranks they were saved at: start-offset %"
        G_GUINT64_FORMAT " is not a multiple of num-shards (%"
        G_GUINT64_FORMAT "); shards written by tools/make-shards resume at "
        "any number", config->elastic ? "no " MEMBERS_NAME " next to them" :
        "elastic=false",
        config->start_offset, world);
    goto failed;
  }
  shards->start_index = MIN (config->start_offset / world, shards->per_rank);
  GST_INFO ("%u shards, %" G_GUINT64_FORMAT " samples, %" G_GUINT64_FORMAT
      " per rank, %s order", shards->n_shards, shards->total,
      shards->per_rank, shards->elastic ? "elastic" : "contiguous");
  return shards;

failed:
  gst_spdl_shards_free (shards);
  return NULL;
}

guint64
gst_spdl_shards_get_total (GstSpdlShards * shards)
{
  return shards->total;
}

gchar *
gst_spdl_shards_get_fingerprint (GstSpdlShards * shards)
{
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  gchar *fingerprint, *line;
  guint i;
  guint64 k;

  for (i = 0; i < shards->n_shards; i++) {
    /* the base name: the same shards at another address are the same */
    gchar *base = g_path_get_basename (shards->names[i]);

    line = g_strdup_printf ("%s\t%" G_GUINT64_FORMAT "\n", base,
        shards->counts[i]);
    g_checksum_update (sum, (const guchar *) line, strlen (line));
    g_free (line);
    g_free (base);
  }
  /* the same members under other rules can be other samples */
  if (!gst_spdl_shard_rules_is_default (shards->rules))
    g_checksum_update (sum, (const guchar *)
        gst_spdl_shard_rules_describe (shards->rules), -1);
  if (shards->elastic)
    for (k = 0; k < shards->total; k++)
      g_checksum_update (sum, (const guchar *) shards->members[k].name,
          strlen (shards->members[k].name) + 1);
  fingerprint = g_strdup_printf ("%" G_GUINT64_FORMAT ":%s", shards->total,
      g_checksum_get_string (sum));
  g_checksum_free (sum);
  return fingerprint;
}

guint
gst_spdl_shards_get_n_shards (GstSpdlShards * shards)
{
  return shards->n_shards;
}

guint64
gst_spdl_shards_get_per_rank (GstSpdlShards * shards)
{
  return shards->per_rank;
}

gboolean
gst_spdl_shards_is_elastic (GstSpdlShards * shards)
{
  return shards->elastic;
}

const gchar *
gst_spdl_shards_get_index_source (GstSpdlShards * shards)
{
  return shards->index_source;
}

gchar *
gst_spdl_shards_describe_dropped (GstSpdlShards * shards, gchar ** example,
    gboolean * by_keys)
{
  guint64 counts[GST_SPDL_READ_N_ERRORS] = { 0, };
  GstSpdlShardNote *first = NULL;
  guint j;

  *by_keys = FALSE;
  for (j = 0; shards->notes && j < shards->notes->len; j++) {
    GstSpdlShardNote *note = g_ptr_array_index (shards->notes, j);
    if (note->error->domain == GST_SPDL_READ_ERROR &&
        note->error->code < GST_SPDL_READ_N_ERRORS)
      counts[note->error->code]++;
    if (gst_spdl_shard_note_is_extra (note))
      *by_keys = TRUE;
    if (first == NULL)
      first = note;
  }
  if (first == NULL)
    return NULL;
  if (example)
    *example = g_strdup_printf ("%s: %s", shards->names[first->shard],
        first->error->message);
  return gst_spdl_describe_reasons (GST_SPDL_READ_ERROR, counts,
      GST_SPDL_READ_N_ERRORS);
}

gchar **
gst_spdl_shards_take_warnings (GstSpdlShards * shards)
{
  GPtrArray *warnings = g_steal_pointer (&shards->warnings);

  if (warnings == NULL || warnings->len == 0) {
    if (warnings)
      g_ptr_array_unref (warnings);
    return NULL;
  }
  g_ptr_array_set_free_func (warnings, NULL);
  g_ptr_array_add (warnings, NULL);
  return (gchar **) g_ptr_array_free (warnings, FALSE);
}

guint64
gst_spdl_shards_epoch_share (GstSpdlShards * shards, guint epoch,
    guint64 * offset)
{
  guint64 world = MAX (shards->config.world_size, 1), first;
  gboolean resumed = epoch == shards->config.start_epoch;

  if (!shards->elastic) {
    first = resumed ? shards->start_index : 0;
    *offset = first * world;
    return shards->per_rank - first;
  }
  /* as for folders: positions O + r, O + r + W, ... */
  *offset = resumed ? shards->config.start_offset : 0;
  return gst_spdl_order_rank_share (shards->total - *offset, world,
      shards->config.drop_uneven);
}

/* ------------------------------------------------------------------------ */
/* Order                                                                    */

static guint32 *
shard_order (GstSpdlShards * shards, guint epoch)
{
  guint32 *order = g_new (guint32, MAX (shards->n_shards, 1));

  gst_spdl_order_permutation (order, shards->n_shards, shards->config.seed,
      epoch, shards->config.shuffle ? GST_SPDL_ORDER_STREAM_SHARDS :
      GST_SPDL_ORDER_IDENTITY);
  return order;
}

/* ------------------------------------------------------------------------ */
/* The reader thread                                                        */

void
gst_spdl_shard_sample_free (GstSpdlShardSample * sample)
{
  if (sample == NULL)
    return;
  if (sample->buffer)
    gst_buffer_unref (sample->buffer);
  g_clear_error (&sample->error);
  gst_spdl_field_data_free (sample->fields, sample->n_fields);
  g_free (sample->path);
  g_free (sample);
}

static gboolean
is_stopping (GstSpdlShards * shards)
{
  gboolean stopping;

  g_mutex_lock (&shards->lock);
  stopping = shards->stopping;
  g_mutex_unlock (&shards->lock);
  return stopping;
}

/* Hands a sample to the consumer, waiting while the queue is full. */
static void
deliver (GstSpdlShards * shards, GstSpdlShardSample * sample)
{
  if (shards->to_skip > 0) {
    /* resuming: items of the first epoch already handed out are dropped,
     * skips among them too (spdlsrc counts both in a sample's position);
     * groups that are no sample hold no position */
    if (!sample->extra)
      shards->to_skip--;
    gst_spdl_shard_sample_free (sample);
    return;
  }
  /* the contiguous split numbers positions as the elastic order does:
   * rank r's k-th at r + k x ranks */
  if (!shards->elastic && !sample->extra)
    sample->position = shards->config.rank + shards->next_k++ *
        MAX (shards->config.world_size, 1);
  g_mutex_lock (&shards->lock);
  while (g_queue_get_length (&shards->queue) >= shards->config.queue_size &&
      !shards->stopping)
    g_cond_wait (&shards->cond, &shards->lock);
  if (shards->stopping) {
    g_mutex_unlock (&shards->lock);
    gst_spdl_shard_sample_free (sample);
    return;
  }
  g_queue_push_tail (&shards->queue, sample);
  g_cond_broadcast (&shards->cond);
  g_mutex_unlock (&shards->lock);
}

static guint current_epoch_of (GstSpdlShards * shards);

/* Whether @size more bytes fit the buffer's byte bound. */
static gboolean
mix_has_room (GstSpdlShards * shards, guint64 size)
{
  guint64 bound = shards->config.shuffle_buffer_bytes;

  return bound == 0 || shards->mix_bytes + size <= bound;
}

/* The bytes a sample holds: its image and its fields. */
static guint64
sample_size (GstSpdlShardSample * sample)
{
  return gst_buffer_get_size (sample->buffer) +
      gst_spdl_field_data_size (sample->fields, sample->n_fields);
}

static void
mix_taken (GstSpdlShards * shards, GstSpdlShardSample * sample)
{
  shards->mix_bytes -= sample_size (sample);
}

/* A random sample of the buffer leaves it. */
static void
deliver_mixed (GstSpdlShards * shards)
{
  guint64 j = gst_spdl_rng_below (&shards->mix_rng, shards->mix->len);
  GstSpdlShardSample *sample = g_ptr_array_steal_index_fast (shards->mix, j);

  mix_taken (shards, sample);
  deliver (shards, sample);
}

/* Samples go through the shuffle buffer; skips straight on. As
 * WebDataset's shuffle(bufsize, initial): the first sample leaves once
 * MIX_INITIAL are in (not a whole buffer's worth: the first batch does not
 * wait for it), and while the buffer grows to shuffle-buffer one random
 * sample leaves for every second one that comes in; full, one leaves for
 * each. */
static void
emit_sample (GstSpdlShards * shards, GstSpdlShardSample * sample)
{
  guint64 j;

  sample->epoch = current_epoch_of (shards);
  if (sample->error || shards->mix == NULL) {
    deliver (shards, sample);
    return;
  }
  /* at the byte bound, random samples leave to make room */
  while (shards->mix->len > 0 && shards->mix->len <
      shards->config.shuffle_buffer && !mix_has_room (shards,
          sample_size (sample)))
    deliver_mixed (shards);
  shards->mix_bytes += sample_size (sample);
  if (shards->mix->len < shards->config.shuffle_buffer) {
    g_ptr_array_add (shards->mix, sample);
    if (shards->mix->len >= MIN (MIX_INITIAL, shards->config.shuffle_buffer)
        && shards->mix_grown++ % 2 == 0)
      deliver_mixed (shards);
    return;
  }
  j = gst_spdl_rng_below (&shards->mix_rng, shards->mix->len);
  mix_taken (shards, g_ptr_array_index (shards->mix, j));
  deliver (shards, g_ptr_array_index (shards->mix, j));
  g_ptr_array_index (shards->mix, j) = sample;
  /* a larger image replaced a smaller one */
  while (shards->mix->len > 1 && !mix_has_room (shards, 0))
    deliver_mixed (shards);
}

static void
drain_mix (GstSpdlShards * shards)
{
  while (shards->mix && shards->mix->len > 0)
    deliver_mixed (shards);
}

static guint
current_epoch_of (GstSpdlShards * shards)
{
  return shards->epoch;
}

static void
skip_shard (GstSpdlShards * shards, const gchar * shard, GError * error)
{
  GstSpdlShardSample *sample = g_new0 (GstSpdlShardSample, 1);

  sample->path = g_strdup (shard);
  sample->label = -1;
  sample->error = error;
  emit_sample (shards, sample);
}

static ByteStream *
open_stream (GstSpdlShards * shards, guint i, GError ** error)
{
  if (shards->http)
    return http_stream_open (shards->http, shards->names[i]);
  return file_stream_open (shards->names[i], error);
}

/* Reads positions [first, first + count) of shard @i from @stream. */
static void
read_segment (GstSpdlShards * shards, guint i, guint64 first, guint64 count,
    gboolean repeated, ByteStream * stream, GError * open_error)
{
  const gchar *name = shards->names[i];
  Segment seg;
  GstSpdlTarParser *parser;
  GError *error = NULL;
  guint8 *chunk;

  if (stream == NULL) {
    skip_shard (shards, name, open_error);
    return;
  }
  segment_init (&seg, shards->rules);
  segment_set_shards (&seg, shards);
  seg.shard = name;
  seg.base_index = shards->offsets[i];
  seg.first = first;
  seg.end = first + count;
  seg.tail = seg.end >= shards->counts[i];
  seg.repeated = repeated;
  parser = gst_spdl_tar_parser_new (segment_want, segment_member, &seg);
  chunk = g_malloc (READ_CHUNK);
  while (!seg.done && !is_stopping (shards)) {
    gssize n = stream->read (stream, chunk, READ_CHUNK, &error);

    if (n < 0)
      break;
    if (n == 0) {
      gst_spdl_tar_parser_finish (parser, &error);
      break;
    }
    if (!gst_spdl_tar_parser_feed (parser, chunk, n, &error))
      break;
  }
  g_free (chunk);
  /* the end of the archive (or of the segment) completes the last group;
   * so does a corrupt header after it (its members were read whole) */
  if ((error == NULL || g_error_matches (error, GST_SPDL_TAR_ERROR,
              GST_SPDL_TAR_ERROR_CORRUPT)) && !is_stopping (shards))
    flush_group (&seg);
  if (error && error->domain == GST_SPDL_TAR_ERROR) {
    GError *reason = g_error_new (GST_SPDL_READ_ERROR,
        error->code == GST_SPDL_TAR_ERROR_TRUNCATED ?
        GST_SPDL_READ_ERROR_TRUNCATED_SHARD :
        GST_SPDL_READ_ERROR_CORRUPT_MEMBER,
        "%s", error->message);
    g_error_free (error);
    error = reason;
  }
  if (error == NULL && !seg.done && seg.completed < seg.end &&
      !is_stopping (shards))
    error = g_error_new (GST_SPDL_READ_ERROR,
        GST_SPDL_READ_ERROR_TRUNCATED_SHARD, "the shard has %" G_GUINT64_FORMAT
        " samples, its index says %" G_GUINT64_FORMAT, seg.completed,
        shards->counts[i]);
  if (error)
    skip_shard (shards, name, error);
  segment_clear (&seg);
  gst_spdl_tar_parser_free (parser);
}

/* Reads the segments of @plan in order. */
static void
read_plan (GstSpdlShards * shards, GArray * plan)
{
  guint s, n_segments = plan->len / 3, ahead = shards->http ?
      MAX (shards->config.http.max_requests, 1) : 1, opened = 0;
  ByteStream **streams = g_new0 (ByteStream *, n_segments);
  GError **errors = g_new0 (GError *, n_segments);
  /* the stream position of a segment's first sample, not wrapped round:
   * from the epoch's end on the last rank pads its share with positions
   * rank 0 reads, whose groups that are no sample rank 0 reports */
  guint64 position = (guint64) shards->config.rank * shards->per_rank;

  /* remote shards download ahead (while earlier ones are read), up to
   * http-requests at once, sharing the bound on bytes in flight */
  ahead = MIN (ahead, 8);
  for (s = 0; s < n_segments && !is_stopping (shards); s++) {
    guint64 *triple = &g_array_index (plan, guint64, s * 3);
    for (; opened < n_segments && opened < s + ahead; opened++)
      streams[opened] = open_stream (shards,
          (guint) g_array_index (plan, guint64, opened * 3), &errors[opened]);
    read_segment (shards, (guint) triple[0], triple[1], triple[2],
        position >= shards->total, streams[s], errors[s]);
    position += triple[2];
    errors[s] = NULL;
    if (streams[s])
      streams[s]->close (streams[s]);
    streams[s] = NULL;
  }
  for (s = 0; s < n_segments; s++) {
    if (streams[s])
      streams[s]->close (streams[s]);
    g_clear_error (&errors[s]);
  }
  g_free (streams);
  g_free (errors);
}

/* ------------------------------------------------------------------------ */
/* The elastic order: each sample read by its byte range                    */

static GstSpdlShardSample *
member_sample (GstSpdlShards * shards, guint64 global, guint64 position)
{
  const GstSpdlShardMember *m = &shards->members[global];
  GstSpdlShardSample *sample = g_new0 (GstSpdlShardSample, 1);

  sample->index = global;
  sample->position = position;
  sample->label = m->label;
  sample->epoch = shards->epoch;
  sample->path = g_strdup_printf ("%s:%s", shards->names[m->shard], m->name);
  return sample;
}

/* Refuses members over max-file-size before reading them. */
static gboolean
member_too_large (GstSpdlShards * shards, GstSpdlShardSample * sample)
{
  const GstSpdlShardMember *m = &shards->members[sample->index];
  guint64 max_size = shards->config.max_member_size;

  if (max_size == 0 || m->size <= max_size)
    return FALSE;
  sample->error = g_error_new (GST_SPDL_READ_ERROR,
      GST_SPDL_READ_ERROR_TOO_LARGE, "%" G_GUINT64_FORMAT " bytes, more than "
      "max-file-size=%" G_GUINT64_FORMAT, m->size, max_size);
  return TRUE;
}

/* @data holds the member's tar header and then its bytes (@len of them):
 * checked against the index, the image taken (@data's owner is the
 * sample's buffer). */
static void
member_finish (GstSpdlShards * shards, GstSpdlShardSample * sample,
    GstBuffer * data)
{
  const GstSpdlShardMember *m = &shards->members[sample->index];
  GError *error = NULL;
  GstMapInfo map;
  gsize len = gst_buffer_get_size (data);

  if (len < TAR_BLOCK + m->size) {
    gchar *where = len ? g_strdup_printf ("at byte %" G_GUINT64_FORMAT
        ", inside", m->offset - TAR_BLOCK + len) : g_strdup ("before");

    sample->error = g_error_new (GST_SPDL_READ_ERROR,
        GST_SPDL_READ_ERROR_TRUNCATED_SHARD, "the shard ends %s the member "
        "(bytes %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT " by the index)",
        where, m->offset, m->offset + m->size);
    g_free (where);
    gst_buffer_unref (data);
    return;
  }
  if (!gst_buffer_map (data, &map, GST_MAP_READ)) {
    sample->error = g_error_new (GST_SPDL_READ_ERROR,
        GST_SPDL_READ_ERROR_UNREADABLE, "could not map the member's bytes");
    gst_buffer_unref (data);
    return;
  }
  gst_spdl_tar_check_header (map.data, m->size, &error);
  gst_buffer_unmap (data, &map);
  if (error) {
    sample->error = g_error_new (GST_SPDL_READ_ERROR,
        GST_SPDL_READ_ERROR_CORRUPT_MEMBER, "%s (the index does not match "
        "the shard)", error->message);
    g_error_free (error);
    gst_buffer_unref (data);
    return;
  }
  gst_buffer_resize (data, TAR_BLOCK, m->size);
  sample->buffer = data;
}

/* A descriptor of a local shard, from a few kept open. */
static int
local_fd (GstSpdlShards * shards, guint shard, GError ** error)
{
  guint i, slot;
  int fd;

  for (i = 0; i < LOCAL_FDS; i++)
    if (shards->fds[i] >= 0 && shards->fd_shards[i] == shard)
      return shards->fds[i];
  fd = open (shards->names[shard], O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_UNREADABLE,
        "%s", g_strerror (errno));
    return -1;
  }
  slot = shards->next_fd++ % LOCAL_FDS;
  if (shards->fds[slot] >= 0)
    close (shards->fds[slot]);
  shards->fds[slot] = fd;
  shards->fd_shards[slot] = shard;
  return fd;
}

static void
close_local_fds (GstSpdlShards * shards)
{
  guint i;

  for (i = 0; i < LOCAL_FDS; i++) {
    if (shards->fds[i] >= 0)
      close (shards->fds[i]);
    shards->fds[i] = -1;
  }
}

/* The member's header and bytes with pread: short at the shard's end. */
static void
read_member_local (GstSpdlShards * shards, GstSpdlShardSample * sample)
{
  const GstSpdlShardMember *m = &shards->members[sample->index];
  guint64 want = TAR_BLOCK + m->size, got = 0;
  int fd = local_fd (shards, m->shard, &sample->error);
  guint8 *data;

  if (fd < 0)
    return;
  if ((data = g_try_malloc (want)) == NULL) {
    sample->error = g_error_new (GST_SPDL_READ_ERROR,
        GST_SPDL_READ_ERROR_TOO_LARGE, "out of memory for %" G_GUINT64_FORMAT
        " bytes", m->size);
    return;
  }
  while (got < want) {
    ssize_t n = pread (fd, data + got, want - got,
        (off_t) (m->offset - TAR_BLOCK + got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      sample->error = g_error_new (GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_UNREADABLE, "%s", g_strerror (errno));
      g_free (data);
      return;
    }
    if (n == 0)
      break;
    got += n;
  }
  member_finish (shards, sample, gst_buffer_new_wrapped (data, got));
}

/* Reading a sample's group around its image member (the fields'
 * members: a group's members lie together in its shard) */
typedef struct
{
  GstSpdlShards *shards;
  const gchar *key;
  gboolean seen;                /* a member of @key came */
  gboolean ended;               /* then one of another key */
  GstSpdlFieldData *fields;
  gint *ranks;
} GroupScan;

static gboolean
group_scan_want (const gchar * name, guint64 size, gpointer user_data)
{
  GroupScan *scan = user_data;
  gchar *key, *extension;
  gboolean want = FALSE;

  if (!gst_spdl_tar_split_name (name, &key, &extension))
    return FALSE;
  if (strcmp (key, scan->key) == 0) {
    scan->seen = TRUE;
    want = want_field_member (scan->shards, scan->fields, scan->ranks,
        extension, size);
  } else if (scan->seen) {
    scan->ended = TRUE;
  }
  g_free (key);
  g_free (extension);
  return want;
}

static gboolean
group_scan_member (const gchar * name, guint64 size, GstBuffer * data,
    gpointer user_data)
{
  GroupScan *scan = user_data;
  gchar *key, *extension;

  /* @data NULL: not wanted (no field's, or refused), or a wanted one
   * that could not be held, which field_member() tells apart */
  if (!scan->ended && gst_spdl_tar_split_name (name, &key, &extension)) {
    if (strcmp (key, scan->key) == 0)
      field_member (scan->shards, scan->fields, scan->ranks, extension,
          data);
    g_free (key);
    g_free (extension);
  }
  if (data)
    gst_buffer_unref (data);
  return !scan->ended;
}

/* Where the members of sample @global's group lie (a group's members are
 * adjacent, as webdataset groups them): after the shard's previous
 * indexed member, before the next one's header; the members between two
 * indexed images belong to either, or to groups that are no sample. The
 * last sample of a shard: up to the end, or for a ranged read at most
 * its fields' worth past its image (@bounded). */
static void
group_span (GstSpdlShards * shards, guint64 global, gboolean bounded,
    guint64 * start, guint64 * end)
{
  const GstSpdlShardMember *m = &shards->members[global];

  *start = 0;
  if (global > shards->offsets[m->shard]) {
    const GstSpdlShardMember *prev = m - 1;
    *start = prev->offset + ((prev->size + TAR_BLOCK - 1) / TAR_BLOCK) *
        TAR_BLOCK;
  }
  /* a damaged index: the image's header is the least */
  *start = MIN (*start, m->offset - TAR_BLOCK);
  if (global + 1 < shards->offsets[m->shard] + shards->counts[m->shard])
    *end = MAX ((m + 1)->offset - TAR_BLOCK, m->offset + m->size);
  else if (bounded)
    *end = m->offset + m->size + MIN (record_size (shards) *
        (shards->config.max_field_size + 4 * TAR_BLOCK),
        (guint64) MAX_TAIL_SPAN);
  else
    *end = G_MAXUINT64;
}

/* The fields of @sample (read by its image member's range): the tar
 * headers of its group's span parsed until the group of the image's key
 * ends, only its fields' data read; from @fd, or from @data (@len bytes
 * of the shard from @data_start). */
static void
read_fields (GstSpdlShards * shards, GstSpdlShardSample * sample, int fd,
    const guint8 * data, guint64 data_start, gsize len)
{
  const GstSpdlShardMember *m = &shards->members[sample->index];
  guint n = record_size (shards);
  guint64 pos, limit;
  GroupScan scan = { shards, NULL, FALSE, FALSE, NULL, NULL };
  GstSpdlTarParser *parser;
  gchar *key = NULL, *extension = NULL;
  GError *error = NULL;
  guint8 *chunk = NULL;
  guint i;

  sample->fields = gst_spdl_field_data_new (n);
  sample->n_fields = n;
  if (!gst_spdl_tar_split_name (m->name, &key, &extension))
    return;                     /* all absent */
  group_span (shards, sample->index, FALSE, &pos, &limit);
  if (data) {
    pos = MAX (pos, data_start);
    limit = MIN (limit, data_start + len);
  } else {
    chunk = g_malloc (SCAN_CHUNK);
  }
  scan.key = key;
  scan.fields = sample->fields;
  scan.ranks = g_new (gint, n);
  for (i = 0; i < n; i++)
    scan.ranks[i] = G_MAXINT;
  parser = gst_spdl_tar_parser_new (group_scan_want, group_scan_member,
      &scan);
  while (pos < limit && !scan.ended) {
    guint64 skip = gst_spdl_tar_parser_skippable (parser);
    gsize want;
    gssize got;

    if (skip > 0) {
      skip = MIN (skip, limit - pos);
      gst_spdl_tar_parser_skip (parser, skip);
      pos += skip;
      continue;
    }
    want = (gsize) MIN ((guint64) SCAN_CHUNK, limit - pos);
    if (data) {
      got = want;
      if (!gst_spdl_tar_parser_feed (parser, data + (pos - data_start), got,
              &error))
        break;
      pos += got;
      continue;
    }
    got = pread (fd, chunk, want, (off_t) pos);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    pos += got;
    if (!gst_spdl_tar_parser_feed (parser, chunk, got, &error))
      break;
  }
  /* a corrupt header after the image: the group's members before it
   * count, the rest are absent (its own stream reports the damage) */
  g_clear_error (&error);
  g_free (chunk);
  gst_spdl_tar_parser_free (parser);
  g_free (scan.ranks);
  g_free (key);
  g_free (extension);
}

static void
read_positions_local (GstSpdlShards * shards, const guint64 * order,
    guint64 first, guint64 count)
{
  guint64 world = MAX (shards->config.world_size, 1), k;

  for (k = 0; k < count && !is_stopping (shards); k++) {
    guint64 position = first + k * world;
    GstSpdlShardSample *sample = member_sample (shards,
        order[position % shards->total], position);

    if (!member_too_large (shards, sample))
      read_member_local (shards, sample);
    if (sample->error == NULL && record_size (shards) > 0)
      read_fields (shards, sample, local_fd (shards,
              shards->members[sample->index].shard, NULL), NULL, 0, 0);
    deliver (shards, sample);
  }
  close_local_fds (shards);
}

static void
range_read_done (GstBuffer * buffer, GError * error, gpointer user_data)
{
  RangeRead *read = user_data;
  GstSpdlShards *shards = read->shards;

  g_mutex_lock (&shards->lock);
  read->buffer = buffer;
  read->error = error;
  read->done = TRUE;
  g_cond_broadcast (&shards->cond);
  g_mutex_unlock (&shards->lock);
}

static void
range_read_free (RangeRead * read)
{
  if (read->buffer)
    gst_buffer_unref (read->buffer);
  g_clear_error (&read->error);
  g_free (read);
}

static gboolean
member_fits (GstSpdlShards * shards, const GstSpdlShardMember * m)
{
  guint64 max_size = shards->config.max_member_size;

  return max_size == 0 || m->size <= max_size;
}

/* Whether sample @global can join @read's request: later in the same
 * shard, close, and what lies between (the previous sample's other
 * members, or other samples within their share) worth reading over. */
static gboolean
can_coalesce (GstSpdlShards * shards, RangeRead * read, guint64 end,
    guint64 global)
{
  const GstSpdlShardMember *first = &shards->members[read->globals[0]];
  const GstSpdlShardMember *next = &shards->members[global];
  guint64 gap;

  if (!(read->n < MAX_COALESCED && member_fits (shards, next) &&
          next->shard == first->shard && next->offset - TAR_BLOCK >= end &&
          next->offset - TAR_BLOCK - end <= COALESCE_GAP &&
          next->offset + next->size - read->start <= COALESCE_MAX))
    return FALSE;
  /* members are in listing order: the one after the last taken is next
   * to it, nothing of another sample between */
  if (global == read->globals[read->n - 1] + 1)
    return TRUE;
  gap = next->offset - TAR_BLOCK - end;
  return (read->others + gap) * COALESCE_OTHERS_SHARE <=
      read->kept + TAR_BLOCK + next->size;
}

/* Requests this rank's samples from @k on (positions @first + k x world):
 * as many as lie close together in one shard. */
static RangeRead *
range_read_start (GstSpdlShards * shards, const guint64 * order,
    guint64 first, guint64 k, guint64 count)
{
  guint64 world = MAX (shards->config.world_size, 1), end;
  RangeRead *read = g_new0 (RangeRead, 1);
  const GstSpdlShardMember *m;

  read->shards = shards;
  read->first_k = k;
  read->globals[read->n++] = order[(first + k * world) % shards->total];
  m = &shards->members[read->globals[0]];
  if (!member_fits (shards, m)) {
    read->done = TRUE;          /* member_too_large() says why */
    return read;
  }
  read->start = m->offset - TAR_BLOCK;
  end = m->offset + m->size;
  if (record_size (shards) > 0)
    group_span (shards, read->globals[0], TRUE, &read->start, &end);
  read->kept = TAR_BLOCK + m->size;
  while (k + read->n < count) {
    guint64 global = order[(first + (k + read->n) * world) % shards->total];
    const GstSpdlShardMember *next = &shards->members[global];

    if (record_size (shards) > 0) {
      guint64 next_start, next_end;

      /* the groups' spans overlap: the next one in the shard only */
      group_span (shards, global, TRUE, &next_start, &next_end);
      if (global != read->globals[read->n - 1] + 1 ||
          next->shard != m->shard || read->n >= MAX_COALESCED ||
          !member_fits (shards, next) ||
          next_end - read->start > COALESCE_MAX)
        break;
      read->kept += next_end - end;
      read->globals[read->n++] = global;
      end = next_end;
      continue;
    }
    if (!can_coalesce (shards, read, end, global))
      break;
    if (global != read->globals[read->n - 1] + 1)
      read->others += next->offset - TAR_BLOCK - end;
    read->kept += TAR_BLOCK + next->size;
    read->globals[read->n++] = global;
    end = next->offset + next->size;
  }
  gst_spdl_http_get_range (shards->http, shards->names[m->shard],
      read->start, end - read->start, range_read_done, read);
  return read;
}

/* The @i-th sample of a finished read: its member cut out of the bytes. */
static GstSpdlShardSample *
range_read_sample (GstSpdlShards * shards, RangeRead * read, guint i,
    guint64 first)
{
  guint64 world = MAX (shards->config.world_size, 1);
  GstSpdlShardSample *sample = member_sample (shards, read->globals[i],
      first + (read->first_k + i) * world);
  const GstSpdlShardMember *m = &shards->members[read->globals[i]];
  guint64 from = m->offset - TAR_BLOCK - read->start, have;

  if (member_too_large (shards, sample))
    return sample;
  if (read->error) {
    sample->error = g_error_copy (read->error);
    return sample;
  }
  have = gst_buffer_get_size (read->buffer);
  have = have > from ? MIN (have - from, TAR_BLOCK + m->size) : 0;
  /* shares the memory; a short one is a truncated shard */
  member_finish (shards, sample, have ? gst_buffer_copy_region (read->buffer,
          GST_BUFFER_COPY_MEMORY, from, have) : gst_buffer_new ());
  if (sample->error == NULL && record_size (shards) > 0) {
    GstMapInfo map;

    if (gst_buffer_map (read->buffer, &map, GST_MAP_READ)) {
      read_fields (shards, sample, -1, map.data, read->start, map.size);
      gst_buffer_unmap (read->buffer, &map);
    }
  }
  return sample;
}

/* ------------------------------------------------------------------------ */
/* The elastic order from a server without byte ranges                      */

/* One of this rank's members this epoch: its k (position first + k x
 * world) and where it lies in the stream of shards. */
typedef struct
{
  guint64 global;
  guint64 k;
  guint64 offset;
  guint32 shard_rank;           /* the shard's place in the epoch's order */
} Wanted;

static gint
compare_wanted (gconstpointer a, gconstpointer b)
{
  const Wanted *x = a, *y = b;

  if (x->shard_rank != y->shard_rank)
    return x->shard_rank < y->shard_rank ? -1 : 1;
  if (x->offset != y->offset)
    return x->offset < y->offset ? -1 : 1;
  return x->k < y->k ? -1 : x->k > y->k;
}

/* Reads @len bytes of @stream into @data (NULL: drops them): fewer at its
 * end, -1 with @error. */
static gssize
stream_read_full (GstSpdlShards * shards, ByteStream * stream, guint8 * data,
    guint64 len, guint8 * scratch, GError ** error)
{
  guint64 got = 0;

  while (got < len && !is_stopping (shards)) {
    gsize want = (gsize) MIN (len - got, READ_CHUNK);
    gssize n = stream->read (stream, data ? data + got : scratch, want,
        error);

    if (n < 0)
      return -1;
    if (n == 0)
      break;
    got += n;
  }
  return (gssize) got;
}

/* A member streamed past (see read_positions_streamed()), at its turn: by
 * a ranged GET into *@sample (replaced). FALSE when stopping (the read
 * stays in deferred_read until gst_spdl_shards_free()). */
static gboolean
read_deferred (GstSpdlShards * shards, const guint64 * order, guint64 first,
    guint64 k, GstSpdlShardSample ** sample)
{
  RangeRead *read = range_read_start (shards, order, first, k, k + 1);

  shards->deferred_read = read;
  g_mutex_lock (&shards->lock);
  while (!read->done && !shards->stopping)
    g_cond_wait (&shards->cond, &shards->lock);
  if (shards->stopping) {
    g_mutex_unlock (&shards->lock);
    return FALSE;
  }
  g_mutex_unlock (&shards->lock);
  shards->deferred_read = NULL;
  gst_spdl_shard_sample_free (*sample);
  *sample = range_read_sample (shards, read, 0, first);
  range_read_free (read);
  /* answered whole: the bound on bytes held cannot be kept cheaply */
  if (gst_spdl_http_get_ranges (shards->http,
          shards->names[0]) == GST_SPDL_HTTP_RANGES_NO)
    shards->stream_members = TRUE;
  return TRUE;
}

/* A turn's member is passed over in the stream: read by range at its
 * turn (past shuffle-buffer-bytes), or fetched by range ahead of it
 * (the warm-up). */
#define TURN_DEFERRED 1
#define TURN_FETCHED 2

/* The state of read_positions_streamed(): this rank's turns k0 .. count-1
 * (k: position first + k x world), their members in stream order. */
typedef struct
{
  GstSpdlShards *shards;
  const guint64 *order;
  guint64 first, k0, count, n;
  Wanted *wanted;               /* in stream order */
  guint64 *where;               /* turn k's place in @wanted */
  guint64 *before;              /* member bytes streamed before each */
  GstSpdlShardSample **ready;   /* read ahead of their turn */
  guint8 *turns;                /* TURN_ flags */
  guint64 *plan;                /* first wanted of a shard */
  guint n_plan, p, opened, ahead;
  ByteStream **streams;
  guint64 next, pos, held, bound;
  GError *dead;                 /* the current shard's stream failed */
  guint8 *scratch;
  /* the member read last, for the same again (the last ranks wrap) */
  GstBuffer *prev_buffer;
  GError *prev_error;
  gboolean prev_deferred, prev_valid;
  /* the warm-up: members far ahead in the streams fetched by range */
  gboolean warming;
  guint64 warm_left;            /* bytes it may still fetch */
  guint64 fetch_k;              /* the next turn it looks at */
  guint settled;                /* turns in a row streamed ahead */
  guint ring_head, ring_queued;
} Streamer;

/* At the first wanted member of the next shard: its stream becomes the
 * current one; streams open ahead of it download meanwhile. */
static void
streamer_enter_shard (Streamer * st)
{
  if (st->p >= st->n_plan || st->next != st->plan[st->p])
    return;
  if (st->p > 0 && st->streams[st->p - 1]) {
    st->streams[st->p - 1]->close (st->streams[st->p - 1]);
    st->streams[st->p - 1] = NULL;
  }
  for (; st->opened < st->n_plan && st->opened < st->p + st->ahead;
      st->opened++)
    st->streams[st->opened] = open_stream (st->shards,
        st->shards->members[st->wanted[st->plan[st->opened]].global].shard,
        NULL);
  g_clear_error (&st->dead);
  st->pos = 0;
  st->p++;
}

/* A member of the current shard's stream (or the next one's): read and
 * held until its turn, passed over (to be read at its turn by range), or
 * skipped as fetched by range already. @k is the turn being waited for. */
static void
streamer_step (Streamer * st, guint64 k)
{
  GstSpdlShards *shards = st->shards;
  guint64 world = MAX (shards->config.world_size, 1);
  const Wanted *w = &st->wanted[st->next];
  const GstSpdlShardMember *m = &shards->members[w->global];
  GstSpdlShardSample *sample;

  streamer_enter_shard (st);
  if (st->turns[w->k - st->k0] & TURN_FETCHED) {
    /* streamed past; the same member again is read anew */
    st->prev_valid = FALSE;
    st->next++;
    return;
  }
  sample = member_sample (shards, w->global, st->first + w->k * world);
  if (st->prev_valid && st->wanted[st->next - 1].global == w->global) {
    if (st->prev_buffer)
      sample->buffer = gst_buffer_copy (st->prev_buffer);
    if (st->prev_error)
      sample->error = g_error_copy (st->prev_error);
    if (st->prev_deferred)
      st->turns[w->k - st->k0] |= TURN_DEFERRED;
  } else if (st->dead) {
    sample->error = g_error_copy (st->dead);
  } else if (member_too_large (shards, sample)) {
    /* it says why */
  } else if (w->k != k && st->bound && !shards->stream_members &&
      st->held + m->size > st->bound) {
    st->turns[w->k - st->k0] |= TURN_DEFERRED;
  } else {
    guint64 start = m->offset - TAR_BLOCK, want = TAR_BLOCK + m->size;
    ByteStream *stream = st->streams[st->p - 1];
    guint8 *data = NULL;
    gssize got = 0;

    if (start > st->pos)
      got = stream_read_full (shards, stream, NULL, start - st->pos,
          st->scratch, &st->dead);
    if (got >= 0)
      st->pos += got;
    if (got >= 0 && st->pos == start && (data = g_try_malloc (want)) == NULL) {
      sample->error = g_error_new (GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_TOO_LARGE, "out of memory for %"
          G_GUINT64_FORMAT " bytes", m->size);
    } else if (got >= 0 && st->pos == start) {
      got = stream_read_full (shards, stream, data, want, st->scratch,
          &st->dead);
      if (got >= 0) {
        st->pos += got;
        member_finish (shards, sample, gst_buffer_new_wrapped (data, got));
      } else {
        g_free (data);
      }
    } else if (got >= 0 && st->pos > start) {
      sample->error = g_error_new (GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_CORRUPT_MEMBER, "the index's members "
          "overlap (bytes %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT ")",
          m->offset, m->offset + m->size);
    } else if (got >= 0) {
      /* the shard ended before the member */
      member_finish (shards, sample, gst_buffer_new ());
    }
    if (st->dead && sample->error == NULL)
      sample->error = g_error_copy (st->dead);
  }
  /* a copy (the same memory): a sample's own buffer stays writable */
  gst_clear_buffer (&st->prev_buffer);
  if (sample->buffer)
    st->prev_buffer = gst_buffer_copy (sample->buffer);
  g_clear_error (&st->prev_error);
  if (sample->error)
    st->prev_error = g_error_copy (sample->error);
  st->prev_deferred = (st->turns[w->k - st->k0] & TURN_DEFERRED) != 0;
  st->prev_valid = TRUE;
  if (sample->buffer)
    st->held += gst_buffer_get_size (sample->buffer);
  st->ready[w->k - st->k0] = sample;
  st->next++;
}

/* Whether a step holds the next member within the bound (or passes it
 * over as fetched): what the reader may do while it waits for a fetch. */
static gboolean
streamer_step_is_free (Streamer * st)
{
  const Wanted *w;

  if (st->next >= st->n)
    return FALSE;
  w = &st->wanted[st->next];
  return (st->turns[w->k - st->k0] & TURN_FETCHED) || st->bound == 0 ||
      st->shards->stream_members ||
      st->held + st->shards->members[w->global].size <= st->bound;
}

/* A server not heard from yet (the index came from the cache): the first
 * bytes of the first stream say whether it answers ranges, which the
 * warm-up waits for (one that does not would send whole shards), not for
 * the stream to reach the member. */
static void
streamer_probe (Streamer * st)
{
  GstSpdlShards *shards = st->shards;
  guint64 start;
  gssize got;

  if (!st->warming || shards->stream_members || st->next >= st->n ||
      gst_spdl_http_get_ranges (shards->http, shards->names[0]) !=
      GST_SPDL_HTTP_RANGES_UNKNOWN)
    return;
  streamer_enter_shard (st);
  start = shards->members[st->wanted[st->next].global].offset - TAR_BLOCK;
  if (st->dead || start <= st->pos)
    return;
  got = stream_read_full (shards, st->streams[st->p - 1], NULL,
      MIN (start - st->pos, TAR_BLOCK), st->scratch, &st->dead);
  if (got >= 0)
    st->pos += got;
}

/* Starts ranged GETs (up to http-requests in flight, in turn order) for
 * the turns from @k on whose members lie more than WARMUP_AHEAD bytes
 * ahead in the streams, within the warm-up's bytes. */
static void
streamer_fetch (Streamer * st, guint64 k)
{
  GstSpdlShards *shards = st->shards;
  guint size = shards->ring_size;
  guint64 j, end = MIN (st->count, k + size);

  if (!st->warming || shards->stream_members)
    return;
  /* not before a response said the server answers ranges (one that does
   * not would send whole shards) */
  if (gst_spdl_http_get_ranges (shards->http, shards->names[0]) !=
      GST_SPDL_HTTP_RANGES_YES)
    return;
  for (j = MAX (st->fetch_k, k); j < end && st->ring_queued < size; j++) {
    guint64 i = st->where[j - st->k0], bytes;
    const GstSpdlShardMember *m = &shards->members[st->wanted[i].global];
    RangeRead *read;

    st->fetch_k = j + 1;
    if (st->ready[j - st->k0] || st->turns[j - st->k0] || i < st->next ||
        !member_fits (shards, m) ||
        st->before[i] - st->before[st->next] <= WARMUP_AHEAD)
      continue;
    bytes = TAR_BLOCK + m->size;
    if (bytes > st->warm_left) {
      GST_DEBUG ("warm-up ends at turn %" G_GUINT64_FORMAT ": its bytes "
          "spent", j);
      st->warming = FALSE;
      return;
    }
    st->warm_left -= bytes;
    read = range_read_start (shards, st->order, st->first, j, j + 1);
    shards->ring[(st->ring_head + st->ring_queued++) % size] = read;
    st->turns[j - st->k0] |= TURN_FETCHED;
  }
}

/* Turn @k's member fetched by range: the stream read on meanwhile, as far
 * as the bound allows. FALSE when stopping (the read stays in the ring
 * until gst_spdl_shards_free()). */
static gboolean
streamer_take_fetched (Streamer * st, guint64 k, GstSpdlShardSample ** sample)
{
  GstSpdlShards *shards = st->shards;
  RangeRead *read = shards->ring[st->ring_head];

  g_assert (read != NULL && read->first_k == k);
  g_mutex_lock (&shards->lock);
  while (!read->done && !shards->stopping) {
    if (streamer_step_is_free (st)) {
      g_mutex_unlock (&shards->lock);
      streamer_step (st, k);
      g_mutex_lock (&shards->lock);
    } else {
      g_cond_wait (&shards->cond, &shards->lock);
    }
  }
  if (shards->stopping) {
    g_mutex_unlock (&shards->lock);
    return FALSE;
  }
  g_mutex_unlock (&shards->lock);
  shards->ring[st->ring_head] = NULL;
  st->ring_head = (st->ring_head + 1) % shards->ring_size;
  st->ring_queued--;
  *sample = range_read_sample (shards, read, 0, st->first);
  range_read_free (read);
  if (gst_spdl_http_get_ranges (shards->http,
          shards->names[0]) == GST_SPDL_HTTP_RANGES_NO) {
    shards->stream_members = TRUE;
    st->warming = FALSE;
  }
  return TRUE;
}

/* The order does not change: the epoch's shards are streamed in the order
 * the global order came from (their samples through a shuffle buffer), so
 * a member is read at most a shuffle buffer's worth of samples ahead of
 * its turn (on W ranks about 1/W of that are this rank's) and held until
 * then; each shard is read once, up to this rank's last member in it, and
 * shards without one are not read. The members held ahead stay within
 * shuffle-buffer-bytes: one that would pass it is streamed past and read
 * by a ranged GET at its turn (a server without byte ranges: held all the
 * same, a ranged GET there would download the shard up to it); the member
 * whose turn it is is always read, whatever its size.
 *
 * The first turns' members lie up to a shuffle buffer ahead in the
 * streams: until the streams run ahead of the turns (WARMUP_SETTLED turns
 * in a row found read), the members more than WARMUP_AHEAD bytes ahead
 * are fetched by ranged GETs, as read_positions_remote() does, and passed
 * over in the streams; those bytes are moved twice, so the warm-up stops
 * after 1 / WARMUP_SHARE of the epoch's. */
static void
read_positions_streamed (GstSpdlShards * shards, const guint64 * order,
    guint64 first, guint64 k0, guint64 count)
{
  guint64 world = MAX (shards->config.world_size, 1), n = count - k0, k, i;
  guint32 *shard_seq = shard_order (shards, shards->epoch);
  guint32 *rank_of = g_new (guint32, MAX (shards->n_shards, 1));
  Streamer st = { 0 };
  guint s;

  st.shards = shards;
  st.order = order;
  st.first = first;
  st.k0 = k0;
  st.count = count;
  st.n = n;
  st.bound = shards->config.shuffle_buffer_bytes;
  st.turns = g_new0 (guint8, MAX (n, 1));
  st.wanted = g_new (Wanted, MAX (n, 1));
  st.where = g_new (guint64, MAX (n, 1));
  st.before = g_new (guint64, n + 1);
  st.ready = g_new0 (GstSpdlShardSample *, MAX (n, 1));
  st.plan = g_new (guint64, MAX (n, 1));
  st.ahead = MIN (MAX (shards->config.http.max_requests, 1), 8);
  st.scratch = g_malloc (READ_CHUNK);
  st.warming = !shards->stream_members;

  for (s = 0; s < shards->n_shards; s++)
    rank_of[shard_seq[s]] = s;
  for (k = k0; k < count; k++) {
    Wanted *w = &st.wanted[k - k0];

    w->global = order[(first + k * world) % shards->total];
    w->k = k;
    w->offset = shards->members[w->global].offset;
    w->shard_rank = rank_of[shards->members[w->global].shard];
  }
  qsort (st.wanted, n, sizeof (Wanted), compare_wanted);
  st.before[0] = 0;
  for (i = 0; i < n; i++) {
    const GstSpdlShardMember *m = &shards->members[st.wanted[i].global];

    if (i == 0 || st.wanted[i].shard_rank != st.wanted[i - 1].shard_rank)
      st.plan[st.n_plan++] = i;
    st.where[st.wanted[i].k - k0] = i;
    st.before[i + 1] = st.before[i] + (i > 0 &&
        st.wanted[i - 1].global == st.wanted[i].global ? 0 :
        TAR_BLOCK + m->size);
  }
  st.warm_left = st.before[n] / WARMUP_SHARE;
  st.streams = g_new0 (ByteStream *, MAX (st.n_plan, 1));

  for (k = k0; k < count && !is_stopping (shards); k++) {
    GstSpdlShardSample *sample = NULL;

    streamer_probe (&st);
    streamer_fetch (&st, k);
    if (st.turns[k - k0] & TURN_FETCHED) {
      st.settled = 0;
      if (!streamer_take_fetched (&st, k, &sample))
        break;                  /* stopping */
      deliver (shards, sample);
      continue;
    }
    /* read on in the stream until the member of position k is there */
    if (st.ready[k - k0] == NULL)
      st.settled = 0;
    else if (st.warming && ++st.settled >= WARMUP_SETTLED) {
      GST_DEBUG ("warm-up ends at turn %" G_GUINT64_FORMAT ": the streams "
          "run ahead", k);
      st.warming = FALSE;
    }
    while (st.ready[k - k0] == NULL && st.next < n && !is_stopping (shards))
      streamer_step (&st, k);
    if (st.ready[k - k0] == NULL)
      break;                    /* stopping */
    if (st.ready[k - k0]->buffer)
      st.held -= gst_buffer_get_size (st.ready[k - k0]->buffer);
    if ((st.turns[k - k0] & TURN_DEFERRED) && !read_deferred (shards, order,
            first, k, &st.ready[k - k0]))
      break;                    /* stopping */
    deliver (shards, g_steal_pointer (&st.ready[k - k0]));
  }

  for (i = 0; i < n; i++)
    gst_spdl_shard_sample_free (st.ready[i]);
  for (s = 0; s < st.n_plan; s++)
    if (st.streams[s])
      st.streams[s]->close (st.streams[s]);
  g_clear_error (&st.dead);
  g_clear_error (&st.prev_error);
  gst_clear_buffer (&st.prev_buffer);
  g_free (st.streams);
  g_free (st.scratch);
  g_free (st.plan);
  g_free (st.ready);
  g_free (st.before);
  g_free (st.where);
  g_free (st.turns);
  g_free (st.wanted);
  g_free (rank_of);
  g_free (shard_seq);
}

/* Remote members: up to http-requests ranged GETs at once, handed out in
 * order. Reads still in flight when stopping stay in the ring (their
 * callbacks may yet run) until gst_spdl_shards_free(). A server found to
 * answer them whole has the rest of the epoch streamed. */
static void
read_positions_remote (GstSpdlShards * shards, const guint64 * order,
    guint64 first, guint64 count)
{
  guint64 next_k = 0;
  guint window = shards->ring_size, head = 0, queued = 0, i;

  if (shards->stream_members || shards->stream_whole) {
    read_positions_streamed (shards, order, first, 0, count);
    return;
  }
  while (queued > 0 || (next_k < count && !shards->stream_members)) {
    RangeRead *read;

    if (!shards->stream_members && record_size (shards) == 0 &&
        gst_spdl_http_get_ranges (shards->http,
            shards->names[0]) == GST_SPDL_HTTP_RANGES_NO) {
      /* what is in flight is cut out of the whole (each stops at its
       * range's end), then the rest streamed */
      gchar *shown = gst_spdl_url_redact (shards->names[0]);
      GST_WARNING ("%s: a byte-range GET was answered whole: the rest is "
          "read by streaming each shard once", shown);
      g_free (shown);
      shards->stream_members = TRUE;
    }
    for (; next_k < count && queued < window && !shards->stream_members;
        queued++) {
      read = range_read_start (shards, order, first, next_k, count);
      shards->ring[(head + queued) % window] = read;
      next_k += read->n;
    }
    read = shards->ring[head];
    g_mutex_lock (&shards->lock);
    while (!read->done && !shards->stopping)
      g_cond_wait (&shards->cond, &shards->lock);
    if (shards->stopping) {
      g_mutex_unlock (&shards->lock);
      return;
    }
    g_mutex_unlock (&shards->lock);
    shards->ring[head] = NULL;
    head = (head + 1) % window;
    queued--;
    for (i = 0; i < read->n; i++)
      deliver (shards, range_read_sample (shards, read, i, first));
    range_read_free (read);
  }
  if (shards->stream_members && next_k < count && !is_stopping (shards))
    read_positions_streamed (shards, order, first, next_k, count);
}

/* What a learned index or shards.members left out (groups that are no
 * sample, the rest of a damaged shard) is skipped as the streaming reader
 * skips it, once an epoch over the ranks (note j on rank j mod W), at the
 * epoch's start: not in a resumed one, whose start was read before. */
static void
deliver_notes (GstSpdlShards * shards, guint epoch)
{
  guint world = MAX (shards->config.world_size, 1), j;

  for (j = 0; shards->notes && j < shards->notes->len &&
      !is_stopping (shards); j++) {
    GstSpdlShardNote *note = g_ptr_array_index (shards->notes, j);
    GstSpdlShardSample *sample;

    if (j % world != shards->config.rank)
      continue;
    sample = g_new0 (GstSpdlShardSample, 1);
    sample->index = shards->offsets[note->shard];
    sample->label = -1;
    sample->epoch = epoch;
    sample->path = note->member ? g_strdup_printf ("%s:%s",
        shards->names[note->shard], note->member) :
        g_strdup (shards->names[note->shard]);
    sample->error = g_error_copy (note->error);
    sample->extra = gst_spdl_shard_note_is_extra (note);
    deliver (shards, sample);
  }
}

static void
read_epoch_elastic (GstSpdlShards * shards, guint epoch)
{
  guint64 *order = gst_spdl_order_global (shards->counts,
      shards->n_shards, shards->config.seed, epoch, shards->config.shuffle,
      shards->config.shuffle_buffer);
  guint64 offset, count = gst_spdl_shards_epoch_share (shards, epoch,
      &offset);

  shards->epoch = epoch;
  if (offset == 0)
    deliver_notes (shards, epoch);
  if (shards->http)
    read_positions_remote (shards, order, offset + shards->config.rank,
        count);
  else
    read_positions_local (shards, order, offset + shards->config.rank,
        count);
  g_free (order);
}

/* ------------------------------------------------------------------------ */
/* The contiguous split: each rank streams its part of the shards           */

static void
read_epoch (GstSpdlShards * shards, guint epoch)
{
  guint32 *order = shard_order (shards, epoch);
  GArray *plan = gst_spdl_order_contiguous_plan (shards->counts,
      shards->n_shards, order, shards->config.rank, shards->config.world_size,
      shards->config.drop_uneven);

  shards->epoch = epoch;
  shards->next_k = epoch == shards->config.start_epoch ? shards->start_index
      : 0;
  if (shards->config.shuffle && shards->config.shuffle_buffer > 1) {
    shards->mix = g_ptr_array_new_with_free_func ((GDestroyNotify)
        gst_spdl_shard_sample_free);
    gst_spdl_rng_init (&shards->mix_rng, shards->config.seed, epoch,
        GST_SPDL_ORDER_STREAM_MIX + shards->config.rank);
    shards->mix_bytes = 0;
    shards->mix_grown = 0;
  }
  read_plan (shards, plan);
  drain_mix (shards);
  g_clear_pointer (&shards->mix, g_ptr_array_unref);
  g_array_unref (plan);
  g_free (order);
}

static gpointer
reader_thread (gpointer data)
{
  GstSpdlShards *shards = data;
  const GstSpdlShardsConfig *config = &shards->config;
  guint epoch;

  shards->to_skip = shards->elastic ? 0 : shards->start_index;
  for (epoch = config->start_epoch; (config->num_epochs < 0 ||
          epoch < config->start_epoch + (guint) config->num_epochs) &&
      !is_stopping (shards); epoch++) {
    if (shards->elastic)
      read_epoch_elastic (shards, epoch);
    else
      read_epoch (shards, epoch);
  }

  g_mutex_lock (&shards->lock);
  shards->finished = TRUE;
  g_cond_broadcast (&shards->cond);
  g_mutex_unlock (&shards->lock);
  return NULL;
}

gboolean
gst_spdl_shards_start (GstSpdlShards * shards, GError ** error)
{
  shards->config.queue_size = MAX (shards->config.queue_size, 1);
  if (shards->elastic && shards->http) {
    GstSpdlHttpRanges ranges = gst_spdl_http_get_ranges (shards->http,
        shards->names[0]);

    shards->ring_size = MAX (shards->config.http.max_requests, 1);
    shards->ring = g_new0 (RangeRead *, shards->ring_size);
    shards->stream_whole =
        shards->config.remote_reads == GST_SPDL_SHARDS_REMOTE_STREAM ||
        (shards->config.remote_reads == GST_SPDL_SHARDS_REMOTE_AUTO &&
        shards->config.world_size <= 1);
    /* the index's or the learning's responses said (unknown: ranges are
     * tried, and one answered whole switches over); a rank streaming by
     * choice loses nothing to it */
    if (ranges == GST_SPDL_HTTP_RANGES_NO ||
        ranges == GST_SPDL_HTTP_RANGES_UNADVERTISED)
      shards->stream_members = TRUE;
    /* fields: every sample's group by range (read_fields()), also from a
     * server that answers whole (each range cut out of the whole) */
    if (record_size (shards) > 0) {
      if (shards->stream_members) {
        if (shards->warnings == NULL)
          shards->warnings = g_ptr_array_new_with_free_func (g_free);
        g_ptr_array_add (shards->warnings, g_strdup ("fields of remote "
                "shards are read by byte range, and the server may not "
                "answer byte ranges: each read may fetch a whole shard "
                "(elastic=false streams each shard once)"));
      }
      shards->stream_whole = shards->stream_members = FALSE;
    }
    if (shards->stream_members && !shards->stream_whole) {
      const gchar *host = strstr (shards->names[0], "://");
      const gchar *end = host ? strchr (host + 3, '/') : NULL;
      gchar *origin = end ? g_strndup (shards->names[0],
          end - shards->names[0]) : g_strdup (shards->names[0]);

      if (shards->warnings == NULL)
        shards->warnings = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (shards->warnings, g_strdup_printf ("%s does not "
              "answer byte ranges (%s): each shard is read whole, once an "
              "epoch, the members of this rank cut out of it in the same "
              "order", origin, ranges == GST_SPDL_HTTP_RANGES_NO ?
              "a ranged request was answered whole" :
              "no Accept-Ranges: bytes"));
      g_free (origin);
    }
  }
  shards->thread = g_thread_try_new ("spdlshards", reader_thread, shards,
      error);
  return shards->thread != NULL;
}

GstSpdlShardsResult
gst_spdl_shards_next (GstSpdlShards * shards, GstSpdlShardSample ** sample)
{
  GstSpdlShardsResult result;

  g_mutex_lock (&shards->lock);
  while (g_queue_is_empty (&shards->queue) && !shards->finished &&
      !shards->flushing)
    g_cond_wait (&shards->cond, &shards->lock);
  if (shards->flushing) {
    result = GST_SPDL_SHARDS_FLUSHING;
  } else if ((*sample = g_queue_pop_head (&shards->queue)) != NULL) {
    result = GST_SPDL_SHARDS_SAMPLE;
    g_cond_broadcast (&shards->cond);
  } else {
    result = GST_SPDL_SHARDS_EOS;
  }
  g_mutex_unlock (&shards->lock);
  return result;
}

void
gst_spdl_shards_set_flushing (GstSpdlShards * shards, gboolean flushing)
{
  g_mutex_lock (&shards->lock);
  shards->flushing = flushing;
  g_cond_broadcast (&shards->cond);
  g_mutex_unlock (&shards->lock);
}

gboolean
gst_spdl_shards_get_http_stats (GstSpdlShards * shards,
    GstSpdlHttpStats * stats)
{
  if (shards->http == NULL)
    return FALSE;
  gst_spdl_http_get_stats (shards->http, stats);
  return TRUE;
}

void
gst_spdl_shards_free (GstSpdlShards * shards)
{
  guint i;

  if (shards == NULL)
    return;
  if (shards->thread) {
    g_mutex_lock (&shards->lock);
    shards->stopping = TRUE;
    g_cond_broadcast (&shards->cond);
    g_mutex_unlock (&shards->lock);
    /* a reader waiting for bytes wakes up with an error */
    if (shards->http)
      gst_spdl_http_cancel (shards->http);
    g_thread_join (shards->thread);
  }
  /* no callback runs after it: ranged reads left in flight can go */
  gst_spdl_http_free (shards->http);
  for (i = 0; i < shards->ring_size; i++)
    if (shards->ring[i])
      range_read_free (shards->ring[i]);
  g_free (shards->ring);
  if (shards->deferred_read)
    range_read_free (shards->deferred_read);
  close_local_fds (shards);
  g_free (shards->members);
  g_free (shards->members_text);
  if (shards->notes)
    g_ptr_array_unref (shards->notes);
  gst_spdl_shard_rules_free (shards->rules);
  if (shards->warnings)
    g_ptr_array_unref (shards->warnings);
  g_queue_clear_full (&shards->queue, (GDestroyNotify)
      gst_spdl_shard_sample_free);
  g_clear_pointer (&shards->mix, g_ptr_array_unref);
  g_strfreev (shards->names);
  g_free (shards->counts);
  g_free (shards->offsets);
  g_free (shards->location);
  g_mutex_clear (&shards->lock);
  g_cond_clear (&shards->cond);
  g_free (shards);
}
