/* GStreamer SPDL: member indexes learned from tar shards, and their cache
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

#include "gstspdlshardlearn.h"
#include "gstspdlredact.h"
#include "gstspdlerrors.h"
#include "gstspdltar.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

GST_DEBUG_CATEGORY_STATIC (spdl_shard_learn_debug);
#define GST_CAT_DEFAULT spdl_shard_learn_debug

/* the first line of a learned index: another version is learned again */
#define VERSION_LINE "# gst-spdl learned shard index 2"
#define NOTE_PREFIX "#!note\t"
/* a warning about the shards, given again when the index is cached */
#define WARNING_PREFIX "#!warning\t"
/* the no-label hint names the members it saw as ".EXT members" */
#define UNLABELLED_MEMBERS "%s members"
#define CACHE_SUFFIX ".members"
#define LOCK_SUFFIX ".lock"
/* how often a process waiting for another's learning looks whether its
 * start was cancelled */
#define LOCK_POLL_MS 50
#define READ_CHUNK (1024 * 1024)
/* learning by headers: what a ranged GET asks for from a tar header on,
 * enough for a label member's header and data and the next header
 * (WebDataset's KEY.cls beside KEY.jpg), a few % of an image's bytes */
#define HEADER_WINDOW (4 * 1024)
#define MAX_CACHE_SIZE (1024 * 1024 * 1024)
/* HEAD requests queued at once (the client runs http-requests of them) */
#define HEAD_WINDOW 256

/* One shard: what its key says, then what was learned from it. */
typedef struct
{
  const gchar *location;
  gchar *key_name;              /* in the key and the index: the URL, or
                                 * the absolute path (any spelling of it) */
  guint64 size;
  gchar *validator;             /* NULL: none (remote), no cache */
  gint64 mtime_sec, mtime_nsec; /* local */
  gchar *etag, *last_modified;  /* remote, from the HEAD */
  GError *error;                /* could not be found */
  long status;                  /* of the HEAD */

  GString *members;             /* its member lines */
  guint64 n_members;
  GPtrArray *notes;             /* GstSpdlShardNote */
  GError *failure;              /* could not be read */
  gboolean has_label;           /* a group had a label member */
  gchar *other_label;           /* without label-key: the extension of a
                                 * member that may be what was meant */
  gboolean changed;             /* not what its key says: not cached */
} Shard;

typedef struct
{
  const GstSpdlShardLearnConfig *config;
  Shard *shards;
  GMutex lock;
  GCond cond;
  guint pending;                /* HEAD requests in flight */
  guint next;                   /* the next shard to read */
  gboolean failed;              /* a shard could not be read: stop */
  /* progress: shards read, their samples, when it began and was said */
  guint done;
  guint64 samples;
  gint64 started_us, said_us;
} Learn;

static void
note_free (GstSpdlShardNote * note)
{
  g_free (note->member);
  g_clear_error (&note->error);
  g_free (note);
}

static GstSpdlShardNote *
note_new (guint shard, const gchar * member, GError * error)
{
  GstSpdlShardNote *note = g_new0 (GstSpdlShardNote, 1);

  note->shard = shard;
  note->member = g_strdup (member);
  note->error = error;
  return note;
}

void
gst_spdl_shard_learned_free (GstSpdlShardLearned * learned)
{
  if (learned == NULL)
    return;
  g_free (learned->text);
  g_free (learned->members);
  g_free (learned->counts);
  if (learned->notes)
    g_ptr_array_unref (learned->notes);
  g_free (learned->cache_file);
  if (learned->warnings)
    g_ptr_array_unref (learned->warnings);
  g_free (learned);
}

gchar *
gst_spdl_shard_learn_default_cache_dir (void)
{
  return g_build_filename (g_get_user_cache_dir (), "gst-spdl", "shards",
      NULL);
}

/* ------------------------------------------------------------------------ */
/* Grouping members into samples, as the shards provider's reader does      */

typedef struct
{
  GstSpdlTarParser *parser;
  const GstSpdlShardRules *rules;
  Shard *shard;
  guint index;
  gchar *key;
  gint image_rank;              /* G_MAXINT: none */
  guint64 image_offset, image_size;
  gchar *image_name;
  guint64 data_offset;          /* of the member being read */
  gint label_rank;              /* G_MAXINT: none */
  gint label;
  GError *label_error;
  gboolean label_wanted;        /* the member being read */
  GPtrArray *extensions;        /* the group's, for a no-image reason */
} Learner;

/* The group is complete: a sample if it has an image, in the index if its
 * label is one (or none is needed), else a note; one without an image is
 * a note of no position (GstSpdlShardNote's @member its key). */
static void
learner_flush (Learner * l)
{
  if (l->key && l->image_rank == G_MAXINT) {
    g_ptr_array_add (l->extensions, NULL);
    g_ptr_array_add (l->shard->notes, note_new (l->index, l->key,
            gst_spdl_shard_rules_no_image_error (l->rules, l->key,
                (const gchar * const *) l->extensions->pdata)));
  } else if (l->key) {
    GError *error = g_steal_pointer (&l->label_error);

    if (error == NULL && l->label_rank == G_MAXINT &&
        gst_spdl_shard_rules_label_required (l->rules))
      error = g_error_new (GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_NO_LABEL,
          "group \"%s\" has no label member (label-key)", l->key);
    if (error) {
      g_ptr_array_add (l->shard->notes, note_new (l->index, l->image_name,
              error));
    } else {
      gchar *name = gst_spdl_shard_index_escape (l->image_name);
      g_string_append_printf (l->shard->members, "\t%" G_GUINT64_FORMAT
          "\t%" G_GUINT64_FORMAT "\t%d\t%s\n", l->image_offset,
          l->image_size, l->label, name);
      g_free (name);
      l->shard->n_members++;
    }
  }
  g_clear_pointer (&l->key, g_free);
  g_clear_pointer (&l->image_name, g_free);
  g_clear_error (&l->label_error);
  g_ptr_array_set_size (l->extensions, 0);
  l->image_rank = l->label_rank = G_MAXINT;
  l->label = -1;
}

/* members that hold labels in other sets, where .cls is not there */
static const gchar *const other_label_keys[] = { "json", "txt", "cls2",
  "class", "label", "labels", NULL
};

static gboolean
learner_want (const gchar * name, guint64 size, gpointer user_data)
{
  Learner *l = user_data;
  gchar *key, *extension;
  gint image_rank, label_rank;
  gboolean want = FALSE;

  l->label_wanted = FALSE;
  /* called right after the member's header: its data starts here */
  l->data_offset = gst_spdl_tar_parser_get_offset (l->parser);
  /* WebDataset passes over such a member: the group goes on */
  if (!gst_spdl_tar_split_name (name, &key, &extension))
    return FALSE;
  if (l->key == NULL || strcmp (l->key, key) != 0) {
    learner_flush (l);
    l->key = g_strdup (key);
  }
  if (l->extensions->len < 16 &&
      !g_ptr_array_find_with_equal_func (l->extensions, extension,
          g_str_equal, NULL))
    g_ptr_array_add (l->extensions, g_strdup (extension));
  image_rank = gst_spdl_shard_rules_image_rank (l->rules, extension);
  label_rank = gst_spdl_shard_rules_label_rank (l->rules, extension);
  if (label_rank >= 0)
    l->shard->has_label = TRUE;
  else if (image_rank < 0 && l->shard->other_label == NULL &&
      !gst_spdl_shard_rules_label_required (l->rules) &&
      g_strv_contains (other_label_keys, extension))
    l->shard->other_label = g_strdup (extension);
  if (image_rank >= 0) {
    /* images are passed over: their place is all the index needs */
    if (image_rank < l->image_rank) {
      l->image_rank = image_rank;
      l->image_offset = l->data_offset;
      l->image_size = size;
      g_free (l->image_name);
      l->image_name = g_strdup (name);
    }
  } else if (label_rank >= 0 && label_rank < l->label_rank) {
    l->label_rank = label_rank;
    l->label = -1;
    g_clear_error (&l->label_error);
    want = l->label_wanted = gst_spdl_shard_rules_check_label_size (l->rules,
        name, extension, size, &l->label_error);
  }
  g_free (key);
  g_free (extension);
  return want;
}

static gboolean
learner_member (const gchar * name, guint64 size, GstBuffer * data,
    gpointer user_data)
{
  Learner *l = user_data;
  gchar *key, *extension;
  GstMapInfo map;

  if (l->label_wanted) {
    gst_spdl_tar_split_name (name, &key, &extension);
    if (data == NULL || !gst_buffer_map (data, &map, GST_MAP_READ)) {
      l->label_error = g_error_new (GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_BAD_LABEL, "label member \"%s\" could not be "
          "held in memory", name);
    } else {
      gst_spdl_shard_rules_parse_label (l->rules, name, extension, map.data,
          map.size, &l->label, &l->label_error);
      gst_buffer_unmap (data, &map);
    }
    g_free (key);
    g_free (extension);
  }
  l->label_wanted = FALSE;
  if (data)
    gst_buffer_unref (data);
  return TRUE;
}

/* The stream ended (@tar_error: how, if not well): as the reader, the last
 * group counts unless the stream was cut inside it, and a damaged tar is
 * a note on the shard; any other error is a failure to read it. */
static void
learner_end (Learner * l, GError * error)
{
  /* cut inside the last group: no sample (learner_clear() drops it) */
  if (error == NULL || g_error_matches (error, GST_SPDL_TAR_ERROR,
          GST_SPDL_TAR_ERROR_CORRUPT))
    learner_flush (l);
  if (error && error->domain == GST_SPDL_TAR_ERROR) {
    g_ptr_array_add (l->shard->notes, note_new (l->index, NULL,
            g_error_new (GST_SPDL_READ_ERROR,
                error->code == GST_SPDL_TAR_ERROR_TRUNCATED ?
                GST_SPDL_READ_ERROR_TRUNCATED_SHARD :
                GST_SPDL_READ_ERROR_CORRUPT_MEMBER, "%s", error->message)));
    g_error_free (error);
  } else if (error) {
    l->shard->failure = error;
  }
}

static void
learner_init (Learner * l, const GstSpdlShardRules * rules, Shard * shard,
    guint index)
{
  memset (l, 0, sizeof (*l));
  l->rules = rules;
  l->shard = shard;
  l->index = index;
  l->image_rank = l->label_rank = G_MAXINT;
  l->label = -1;
  l->extensions = g_ptr_array_new_with_free_func (g_free);
  l->parser = gst_spdl_tar_parser_new (learner_want, learner_member, l);
}

static void
learner_clear (Learner * l)
{
  g_clear_pointer (&l->key, g_free);
  g_clear_pointer (&l->image_name, g_free);
  g_clear_error (&l->label_error);
  g_ptr_array_unref (l->extensions);
  gst_spdl_tar_parser_free (l->parser);
}

/* ------------------------------------------------------------------------ */
/* Reading a shard                                                          */

/* What was learned of @shard, dropped: it is read again. */
static void
shard_forget (Shard * shard)
{
  g_string_truncate (shard->members, 0);
  shard->n_members = 0;
  g_ptr_array_set_size (shard->notes, 0);
  shard->has_label = FALSE;
  g_clear_pointer (&shard->other_label, g_free);
  g_clear_error (&shard->failure);
}

/* Reads a tar header's 512 bytes at @offset: how many (0 at the end), -1
 * with @error, or WALK_ABANDONED (nothing learned, the shard to be read
 * another way). */
#define WALK_ABANDONED (-2)
typedef gssize (*HeaderReadFunc) (gpointer data, guint64 offset,
    guint8 * header, GError ** error);

/* A shard of @size bytes by its tar headers (and label members) alone,
 * the data passed over: into @l, ended. FALSE (@l cleared, nothing
 * learned) when @read abandoned it. */
static gboolean
walk_headers (Learner * l, guint64 size, HeaderReadFunc read, gpointer data)
{
  GError *error = NULL;
  guint8 header[512];
  guint64 offset = 0;

  for (;;) {
    guint64 skip = gst_spdl_tar_parser_skippable (l->parser);
    gssize n;

    /* data passed over must be there: a shard cut inside a member's data
     * ends inside it, as when it is streamed */
    if (offset + skip > size)
      skip = size > offset ? size - offset : 0;
    if (skip) {
      gst_spdl_tar_parser_skip (l->parser, skip);
      offset += skip;
      continue;
    }
    n = read (data, offset, header, &error);
    if (n == WALK_ABANDONED) {
      learner_clear (l);
      shard_forget (l->shard);
      return FALSE;
    }
    if (n < 0)
      break;
    if (n == 0) {
      gst_spdl_tar_parser_finish (l->parser, &error);
      break;
    }
    offset += n;
    if (!gst_spdl_tar_parser_feed (l->parser, header, n, &error))
      break;
  }
  learner_end (l, error);
  learner_clear (l);
  return TRUE;
}

static gssize
read_local_header (gpointer data, guint64 offset, guint8 * header,
    GError ** error)
{
  gint fd = GPOINTER_TO_INT (data);
  ssize_t n;

  do
    n = pread (fd, header, 512, offset);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ, "%s",
        g_strerror (errno));
  return n;
}

/* The headers with pread, the data passed over (as the shards provider
 * counted local shards). */
static void
learn_local (Learn * learn, guint i)
{
  Shard *shard = &learn->shards[i];
  Learner l;
  struct stat st;
  int fd = open (shard->location, O_RDONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0) {
    shard->failure = g_error_new (GST_RESOURCE_ERROR,
        GST_RESOURCE_ERROR_OPEN_READ, "%s", g_strerror (errno));
    return;
  }
  learner_init (&l, learn->config->rules, shard, i);
  if (fstat (fd, &st) != 0)
    st.st_size = G_MAXINT64;
  walk_headers (&l, (guint64) st.st_size, read_local_header,
      GINT_TO_POINTER (fd));
  /* rewritten meanwhile: what was learned may be of either version */
  if (fstat (fd, &st) != 0 || (guint64) st.st_size != shard->size ||
      st.st_mtim.tv_sec != shard->mtime_sec ||
      st.st_mtim.tv_nsec != shard->mtime_nsec)
    shard->changed = TRUE;
  close (fd);
}

/* Streamed whole (over HTTP there is no passing over), only the label
 * members kept. */
static void
learn_remote (Learn * learn, guint i)
{
  Shard *shard = &learn->shards[i];
  GstSpdlHttpStream *stream = gst_spdl_http_stream_open (learn->config->http,
      shard->location);
  guint8 *chunk = g_malloc (READ_CHUNK);
  GError *error = NULL;
  gchar *etag = NULL, *last_modified = NULL;
  gint64 size = -1;
  guint64 received = 0;
  gboolean body_ended = FALSE, other_object;
  Learner l;

  learner_init (&l, learn->config->rules, shard, i);
  for (;;) {
    gssize n = gst_spdl_http_stream_read (stream, chunk, READ_CHUNK, &error);

    if (n < 0)
      break;
    if (n == 0) {
      body_ended = gst_spdl_tar_parser_finish (l.parser, &error);
      break;
    }
    received += n;
    /* FALSE without an error at the end-of-archive blocks: done */
    if (!gst_spdl_tar_parser_feed (l.parser, chunk, n, &error))
      break;
  }
  g_free (chunk);
  /* a body that is no tar: what the server said it is */
  if (error && error->domain == GST_SPDL_TAR_ERROR &&
      g_str_has_prefix (error->message, "not a tar archive")) {
    gchar *content = gst_spdl_http_stream_describe_content (stream);
    if (content) {
      gchar *message = g_strdup_printf ("%s (%s)", error->message, content);
      g_free (error->message);
      error->message = message;
      g_free (content);
    }
  }
  learner_end (&l, error);
  learner_clear (&l);
  /* the object read is the one the HEAD described, or no cache */
  if (!gst_spdl_http_stream_get_object (stream, &size, &etag,
          &last_modified) || (size >= 0 && (guint64) size != shard->size) ||
      (etag && shard->etag && strcmp (etag, shard->etag) != 0) ||
      (last_modified && shard->last_modified &&
          strcmp (last_modified, shard->last_modified) != 0))
    shard->changed = TRUE;
  other_object = (etag && shard->etag && strcmp (etag, shard->etag) != 0) ||
      (last_modified && shard->last_modified &&
      strcmp (last_modified, shard->last_modified) != 0);
  /* a tar may end after any member (no end-of-archive blocks): only the
   * HEAD's size tells a body cut there, which would lose the samples
   * after it without a word */
  if (body_ended && !other_object && received < shard->size)
    g_ptr_array_add (shard->notes, note_new (i, NULL,
            g_error_new (GST_SPDL_READ_ERROR,
                GST_SPDL_READ_ERROR_TRUNCATED_SHARD, "truncated shard: its body ended after %"
                G_GUINT64_FORMAT " bytes, between two members, short of the %"
                G_GUINT64_FORMAT " bytes its HEAD announced: the samples "
                "after them are missing", received, shard->size)));
  g_free (etag);
  g_free (last_modified);
  gst_spdl_http_stream_close (stream);
}

/* A window of a remote shard's bytes, fetched by ranged GETs. */
typedef struct
{
  GstBuffer *buffer;
  guint64 start;
  guint64 fetched;              /* bytes asked for so far */
} Window;

/* Up to @n bytes of @shard from @offset into @out, from the window or a
 * ranged GET of HEADER_WINDOW bytes there: how many (0 at its end), -1
 * with @error. */
static gssize
window_read (Learn * learn, Shard * shard, Window * w, guint64 offset,
    guint8 * out, gsize n, GError ** error)
{
  gsize have;

  if (offset >= shard->size)
    return 0;
  if (w->buffer == NULL || offset < w->start ||
      offset + MIN (n, shard->size - offset) > w->start +
      gst_buffer_get_size (w->buffer)) {
    GstBuffer *buffer;

    gst_clear_buffer (&w->buffer);
    buffer = gst_spdl_http_get_range_sync (learn->config->http,
        shard->location, offset, MIN (MAX (HEADER_WINDOW, n),
            shard->size - offset), error);
    if (buffer == NULL)
      return -1;
    w->buffer = buffer;
    w->start = offset;
    w->fetched += gst_buffer_get_size (buffer);
  }
  have = gst_buffer_get_size (w->buffer) - (gsize) (offset - w->start);
  n = MIN (n, have);
  gst_buffer_extract (w->buffer, (gsize) (offset - w->start), out, n);
  return (gssize) n;
}

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean done;
  gboolean same;
  const Shard *shard;
} HeadAgain;

static void
head_again_done (const GstSpdlHttpObjectInfo * info, GError * error,
    gpointer user_data)
{
  HeadAgain *again = user_data;
  const Shard *shard = again->shard;

  g_mutex_lock (&again->lock);
  again->same = error == NULL && info->size >= 0 &&
      (guint64) info->size == shard->size &&
      g_strcmp0 (info->etag, shard->etag) == 0 &&
      g_strcmp0 (info->last_modified, shard->last_modified) == 0;
  again->done = TRUE;
  g_cond_signal (&again->cond);
  g_mutex_unlock (&again->lock);
  g_clear_error (&error);
}

/* Whether a HEAD now describes @shard as the first one did. */
static gboolean
same_object (Learn * learn, const Shard * shard)
{
  HeadAgain again = { 0, };

  again.shard = shard;
  g_mutex_init (&again.lock);
  g_cond_init (&again.cond);
  gst_spdl_http_head (learn->config->http, shard->location, head_again_done,
      &again);
  g_mutex_lock (&again.lock);
  while (!again.done)
    g_cond_wait (&again.cond, &again.lock);
  g_mutex_unlock (&again.lock);
  g_mutex_clear (&again.lock);
  g_cond_clear (&again.cond);
  return again.same;
}

typedef struct
{
  Learn *learn;
  Shard *shard;
  Window window;
} RemoteWalk;

/* A header through the window; abandoned when the server turns out not to
 * answer byte ranges, when the windows would move more than a quarter of
 * what they pass (members of a few KiB: streaming moves less), or on an
 * error other than a timeout or a cancel (a range past the object's end,
 * a 416: shorter than its HEAD said; a stream of it tells what it is). */
static gssize
read_remote_header (gpointer data, guint64 offset, guint8 * header,
    GError ** error)
{
  RemoteWalk *walk = data;
  Learn *learn = walk->learn;
  GstSpdlHttp *http = learn->config->http;
  const gchar *location = walk->shard->location;
  gssize n = window_read (learn, walk->shard, &walk->window, offset, header,
      512, error);
  /* the later shards of that server are streamed too (its ranges are
   * then known not to be answered: learn_remote_shard()) */
  gboolean refused = gst_spdl_http_get_ranges (http, location) ==
      GST_SPDL_HTTP_RANGES_NO;

  if (refused || (walk->window.fetched > 8 * HEADER_WINDOW &&
          walk->window.fetched * 4 > offset) || (n < 0 &&
          !gst_spdl_http_is_cancelled (http) && !g_error_matches (*error,
              GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_TIMEOUT))) {
    gchar *shown = gst_spdl_url_redact (location);
    GST_DEBUG ("%s: %s: streamed", shown, refused ? "no byte ranges" :
        n < 0 ? (*error)->message : "members too small to pass over");
    g_free (shown);
    g_clear_error (error);
    return WALK_ABANDONED;
  }
  return n;
}

/* Its tar headers (and label members) by ranged GETs, the data passed
 * over, as learn_local() reads a local shard: a few % of the bytes
 * streaming moves, a request or two per sample one after another. FALSE
 * (nothing learned: it is streamed then) when read_remote_header()
 * abandoned it. */
static gboolean
learn_remote_headers (Learn * learn, guint i)
{
  Shard *shard = &learn->shards[i];
  RemoteWalk walk = { learn, shard, {NULL, 0, 0} };
  Learner l;
  gboolean walked;

  learner_init (&l, learn->config->rules, shard, i);
  walked = walk_headers (&l, shard->size, read_remote_header, &walk);
  gst_clear_buffer (&walk.window.buffer);
  /* replaced while it was read: what was learned may be of either */
  if (walked && shard->failure == NULL && !same_object (learn, shard))
    shard->changed = TRUE;
  return walked;
}

/* By headers where asked and the server answers byte ranges (a HEAD said
 * so), else streamed. */
static void
learn_remote_shard (Learn * learn, guint i)
{
  Shard *shard = &learn->shards[i];

  if (learn->config->by_headers && shard->size > 0 &&
      gst_spdl_http_get_ranges (learn->config->http, shard->location) ==
      GST_SPDL_HTTP_RANGES_YES && learn_remote_headers (learn, i))
    return;
  learn_remote (learn, i);
}

/* Called with the lock, which it releases: the progress callback every
 * GST_SPDL_SHARD_LEARN_PROGRESS_S (a long index learned says how far it
 * is), and at the end. */
static void
say_progress (Learn * learn, gboolean end)
{
  const GstSpdlShardLearnConfig *config = learn->config;
  gint64 now = g_get_monotonic_time ();
  guint done = learn->done;
  guint64 samples = learn->samples;

  if (!end && now - learn->said_us <
      GST_SPDL_SHARD_LEARN_PROGRESS_S * G_USEC_PER_SEC) {
    g_mutex_unlock (&learn->lock);
    return;
  }
  learn->said_us = now;
  g_mutex_unlock (&learn->lock);
  GST_INFO ("learned %u of %u shards, %" G_GUINT64_FORMAT " samples, in "
      "%.1f s", done, config->n_shards, samples,
      (now - learn->started_us) / 1e6);
  if (config->progress)
    config->progress (done, config->n_shards, samples,
        (now - learn->started_us) / 1e6, config->progress_data);
}

/* Takes the next shard to read until none is left (or one failed). */
static gpointer
learn_thread (gpointer data)
{
  Learn *learn = data;

  for (;;) {
    Shard *shard;
    gchar *shown;
    guint i;

    g_mutex_lock (&learn->lock);
    if (learn->failed || learn->next == learn->config->n_shards) {
      g_mutex_unlock (&learn->lock);
      return NULL;
    }
    i = learn->next++;
    g_mutex_unlock (&learn->lock);
    shard = &learn->shards[i];
    shown = gst_spdl_url_redact (shard->location);
    GST_DEBUG ("learning the members of %s", shown);
    g_free (shown);
    if (learn->config->http)
      learn_remote_shard (learn, i);
    else
      learn_local (learn, i);
    g_mutex_lock (&learn->lock);
    if (shard->failure) {
      /* not read: learning stops, its error says why */
      learn->failed = TRUE;
      g_mutex_unlock (&learn->lock);
      continue;
    }
    learn->done++;
    learn->samples += shard->n_members;
    /* the last shard's line is the end's (learn_shards()) */
    if (learn->done < learn->config->n_shards)
      say_progress (learn, FALSE);
    else
      g_mutex_unlock (&learn->lock);
  }
}

static gboolean
learn_shards (Learn * learn, GError ** error)
{
  const GstSpdlShardLearnConfig *config = learn->config;
  guint n = MAX (MIN (config->parallel, config->n_shards), 1), started, i;
  GThread **threads = g_new0 (GThread *, n);

  learn->started_us = learn->said_us = g_get_monotonic_time ();
  /* threads of their own, joined: nothing of them outlives the learning */
  for (started = 0; started < n; started++)
    if ((threads[started] = g_thread_try_new ("spdllearn", learn_thread,
                learn, started == 0 ? error : NULL)) == NULL)
      break;
  for (i = 0; i < started; i++)
    g_thread_join (threads[i]);
  g_free (threads);
  if (started == 0)
    return FALSE;
  g_mutex_lock (&learn->lock);
  if (!learn->failed)
    say_progress (learn, TRUE);
  else
    g_mutex_unlock (&learn->lock);

  for (i = 0; i < config->n_shards; i++) {
    Shard *shard = &learn->shards[i];
    if (shard->failure) {
      g_set_error (error, GST_RESOURCE_ERROR, shard->failure->domain ==
          GST_RESOURCE_ERROR ? shard->failure->code :
          GST_RESOURCE_ERROR_READ, "Could not read shard \"%s\" to learn its "
          "members (there is no shards.members or shards.idx beside it): "
          "%s", shard->location, shard->failure->message);
      return FALSE;
    }
  }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* What the cache key says: size and validator                              */

static gboolean
describe_local (Shard * shard, GError ** error)
{
  struct stat st;

  if (stat (shard->location, &st) != 0) {
    gchar *display = g_filename_display_name (shard->location);
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
        "Could not open shard \"%s\": %s", display, g_strerror (errno));
    g_free (display);
    return FALSE;
  }
  shard->key_name = g_canonicalize_filename (shard->location, NULL);
  shard->size = st.st_size;
  shard->mtime_sec = st.st_mtim.tv_sec;
  shard->mtime_nsec = st.st_mtim.tv_nsec;
  shard->validator = g_strdup_printf ("mtime %" G_GINT64_FORMAT ".%09"
      G_GINT64_FORMAT, shard->mtime_sec, shard->mtime_nsec);
  return TRUE;
}

static void
head_done (const GstSpdlHttpObjectInfo * info, GError * error,
    gpointer user_data)
{
  Shard *shard = user_data;

  shard->status = info->status;
  shard->error = error;
  /* a server that answers no HEAD: learned, never cached */
  if (error && (info->status == 405 || info->status == 501)) {
    gchar *shown = gst_spdl_url_redact (shard->location);
    GST_INFO ("%s: %s (no HEAD): its learned index is not cached",
        shown, error->message);
    g_free (shown);
    g_clear_error (&shard->error);
  } else if (error == NULL) {
    shard->size = info->size >= 0 ? (guint64) info->size : 0;
    shard->etag = g_strdup (info->etag);
    shard->last_modified = g_strdup (info->last_modified);
    /* without a size or a validator nothing tells a changed shard */
    if (info->size >= 0 && info->etag)
      shard->validator = g_strconcat ("etag ", info->etag, NULL);
    else if (info->size >= 0 && info->last_modified)
      shard->validator = g_strconcat ("last-modified ", info->last_modified,
          NULL);
  }
}

typedef struct
{
  Learn *learn;
  Shard *shard;
} HeadRequest;

static void
head_request_done (const GstSpdlHttpObjectInfo * info, GError * error,
    gpointer user_data)
{
  HeadRequest *request = user_data;
  Learn *learn = request->learn;

  head_done (info, error, request->shard);
  g_mutex_lock (&learn->lock);
  learn->pending--;
  g_cond_broadcast (&learn->cond);
  g_mutex_unlock (&learn->lock);
  g_free (request);
}

/* A HEAD answer has no body: for S3, a GET of the first byte gets the
 * error code and message (NoSuchKey, AccessDenied). */
static gchar *
describe_failure (GstSpdlHttp * http, Shard * shard)
{
  GError *error = NULL;
  GstBuffer *buffer;
  gchar *why;

  if (!g_str_has_prefix (shard->location, "s3://") || shard->status < 400)
    return g_strdup (shard->error->message);
  buffer = gst_spdl_http_get_range_sync (http, shard->location, 0, 1, &error);
  gst_clear_buffer (&buffer);
  why = g_strdup (error ? error->message : shard->error->message);
  g_clear_error (&error);
  return why;
}

/* HEAD requests, a window of them queued at once. */
static gboolean
describe_remote (Learn * learn, GError ** error)
{
  const GstSpdlShardLearnConfig *config = learn->config;
  guint i, next = 0;

  g_mutex_lock (&learn->lock);
  while (next < config->n_shards || learn->pending > 0) {
    while (next < config->n_shards && learn->pending < HEAD_WINDOW) {
      HeadRequest *request = g_new0 (HeadRequest, 1);

      request->learn = learn;
      request->shard = &learn->shards[next++];
      request->shard->key_name = g_strdup (request->shard->location);
      learn->pending++;
      g_mutex_unlock (&learn->lock);
      gst_spdl_http_head (config->http, request->shard->location,
          head_request_done, request);
      g_mutex_lock (&learn->lock);
    }
    if (learn->pending > 0)
      g_cond_wait (&learn->cond, &learn->lock);
  }
  g_mutex_unlock (&learn->lock);
  for (i = 0; i < config->n_shards; i++) {
    Shard *shard = &learn->shards[i];
    gchar *why;

    if (shard->error == NULL)
      continue;
    why = describe_failure (config->http, shard);
    g_set_error (error, GST_RESOURCE_ERROR, shard->status == 401 ||
        shard->status == 403 ? GST_RESOURCE_ERROR_NOT_AUTHORIZED :
        shard->status == 404 ? GST_RESOURCE_ERROR_NOT_FOUND :
        GST_RESOURCE_ERROR_OPEN_READ, "Could not read shard \"%s\" (there "
        "is no shards.members or shards.idx beside it: its members are "
        "learned from it): %s", shard->location, why);
    g_free (why);
    return FALSE;
  }
  return TRUE;
}

/* SHA-256 over the locations in listing order, each one's size and
 * validator; NULL when a shard has no validator, said in @warnings: the
 * index is then learned again on every run, which the user would
 * otherwise see only as slow starts. */
static gchar *
cache_key (Learn * learn, GPtrArray * warnings)
{
  const GstSpdlShardLearnConfig *config = learn->config;
  GChecksum *sum;
  gchar *key;
  guint i, without = 0;
  const Shard *first = NULL;

  for (i = 0; i < config->n_shards; i++)
    if (learn->shards[i].validator == NULL && without++ == 0)
      first = &learn->shards[i];
  if (first) {
    g_ptr_array_add (warnings, g_strdup_printf ("Not keeping the learned "
            "shard index in the cache: %u of %u shards (\"%s\"%s) came "
            "with neither an ETag nor a Last-Modified header, so a "
            "changed shard could not be told from the cached "
            "one: the index is learned again on every run (a server that "
            "sends either, or a shards.members file beside the shards, "
            "avoids it)", without, config->n_shards, first->location,
            without > 1 ? ", ..." : ""));
    return NULL;
  }
  sum = g_checksum_new (G_CHECKSUM_SHA256);

  g_checksum_update (sum, (const guchar *) VERSION_LINE "\n", -1);
  /* other rules pick other members */
  g_checksum_update (sum, (const guchar *)
      gst_spdl_shard_rules_describe (config->rules), -1);
  for (i = 0; i < config->n_shards; i++) {
    Shard *shard = &learn->shards[i];
    gchar *size;

    size = g_strdup_printf ("%" G_GUINT64_FORMAT, shard->size);
    /* NUL separated: no name runs into the next field */
    g_checksum_update (sum, (const guchar *) shard->key_name,
        strlen (shard->key_name) + 1);
    g_checksum_update (sum, (const guchar *) size, strlen (size) + 1);
    g_checksum_update (sum, (const guchar *) shard->validator,
        strlen (shard->validator) + 1);
    g_free (size);
  }
  key = g_strdup (g_checksum_get_string (sum));
  g_checksum_free (sum);
  return key;
}

/* ------------------------------------------------------------------------ */
/* The index as text, and back                                              */

static gchar *
learned_text (Learn * learn)
{
  const GstSpdlShardLearnConfig *config = learn->config;
  GString *text = g_string_new (VERSION_LINE " (the shards.members format, "
      "learned by spdlsrc): tar shard<TAB>samples, then per sample "
      "<TAB>offset<TAB>size<TAB>label<TAB>image member\n");
  guint i, k, unlabelled = 0, first = 0;

  /* the default label-key finding no .cls in a shard that has members
   * such as .json: labels would be -1, silently */
  for (i = 0; i < config->n_shards; i++)
    if (!learn->shards[i].has_label && learn->shards[i].other_label &&
        unlabelled++ == 0)
      first = i;
  if (unlabelled > 0) {
    const gchar *ext = learn->shards[first].other_label;
    gchar *others = unlabelled > 1 ? g_strdup_printf (" (and %u other "
        "shards)", unlabelled - 1) : g_strdup ("");
    gchar *message = g_strdup_printf ("Shard \"%s\"%s has no .cls label "
        "member in any group but has ." UNLABELLED_MEMBERS ": every label is "
        "-1; set label-key=%s%s if they hold the labels",
        learn->shards[first].location, others, ext, ext,
        g_str_has_suffix (ext, "json") ?
        " (and label-field, default \"label\")" : "");
    gchar *escaped = gst_spdl_shard_index_escape (message);

    g_string_append_printf (text, WARNING_PREFIX "%s\n", escaped);
    g_free (escaped);
    g_free (message);
    g_free (others);
  }
  for (i = 0; i < config->n_shards; i++) {
    Shard *shard = &learn->shards[i];
    gchar *name = gst_spdl_shard_index_escape (shard->key_name);

    for (k = 0; k < shard->notes->len; k++) {
      GstSpdlShardNote *note = g_ptr_array_index (shard->notes, k);
      gchar *member = note->member ?
          gst_spdl_shard_index_escape (note->member) : g_strdup ("");
      gchar *message = gst_spdl_shard_index_escape (note->error->message);

      g_string_append_printf (text, NOTE_PREFIX "%u\t%s\t%s\t%s\n", i,
          gst_spdl_read_error_reason (note->error->code), member, message);
      g_free (member);
      g_free (message);
    }
    g_string_append_printf (text, "%s\t%" G_GUINT64_FORMAT "\n%s", name,
        shard->n_members, shard->members->str);
    g_free (name);
  }
  return g_string_free (text, FALSE);
}

static gboolean
learned_syntax_error (const gchar * path, const gchar * what, GError ** error)
{
  gchar *display = g_filename_display_name (path);

  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
      "Learned shard index \"%s\": %s", display, what);
  g_free (display);
  return FALSE;
}

gboolean
gst_spdl_shard_notes_parse (const gchar * text, guint n_shards,
    GHashTable * shard_names, GPtrArray * notes, const gchar * path,
    GError ** error)
{
  const gchar *line;

  for (line = strstr (text, "\n" NOTE_PREFIX); line;
      line = strstr (line, "\n" NOTE_PREFIX)) {
    const gchar *end = strchr (line + 1, '\n');
    gchar *one = g_strndup (line + 1 + strlen (NOTE_PREFIX),
        end ? end - line - 1 - strlen (NOTE_PREFIX) : G_MAXSSIZE);
    gchar **fields = g_strsplit (one, "\t", 4);
    guint64 shard = 0;
    gpointer listed = NULL;
    gint code = -1, c;

    g_free (one);
    line = end ? end : line + 1;
    if (g_strv_length (fields) == 4) {
      g_strchomp (fields[3]);
      for (c = 0; c < GST_SPDL_READ_N_ERRORS; c++)
        if (strcmp (fields[1], gst_spdl_read_error_reason (c)) == 0)
          code = c;
    }
    if (code < 0 || (shard_names == NULL &&
            !g_ascii_string_to_unsigned (fields[0], 10, 0, n_shards - 1,
                &shard, NULL))) {
      g_strfreev (fields);
      if (shard_names == NULL)
        return learned_syntax_error (path, "a malformed note", error);
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
          "Malformed member index %s: a malformed #!note line", path);
      return FALSE;
    }
    /* an index of more shards than the location lists: the others' */
    if (shard_names && !g_hash_table_lookup_extended (shard_names, fields[0],
            NULL, &listed)) {
      g_strfreev (fields);
      continue;
    }
    if (shard_names)
      shard = GPOINTER_TO_UINT (listed);
    {
      gchar *member = fields[2][0] ? g_strcompress (fields[2]) : NULL;
      gchar *message = g_strcompress (fields[3]);

      g_ptr_array_add (notes, note_new ((guint) shard, member,
              g_error_new_literal (GST_SPDL_READ_ERROR, code, message)));
      g_free (member);
      g_free (message);
    }
    g_strfreev (fields);
  }
  return TRUE;
}

GPtrArray *
gst_spdl_shard_notes_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) note_free);
}

gboolean
gst_spdl_shard_note_is_extra (const GstSpdlShardNote * note)
{
  return note->member != NULL;
}

GstSpdlShardLearned *
gst_spdl_shard_learned_parse (gchar * text, const gchar * const *names,
    guint n_shards, const gchar * path, GError ** error)
{
  GstSpdlShardLearned *learned = g_new0 (GstSpdlShardLearned, 1);
  GArray *parsed = g_array_new (FALSE, FALSE, sizeof (GstSpdlShardMember));
  GHashTable *found = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  GHashTable *listed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  gboolean ok = FALSE;
  const gchar *line;
  guint i, k;

  learned->text = text;
  learned->notes = g_ptr_array_new_with_free_func ((GDestroyNotify)
      note_free);
  learned->warnings = g_ptr_array_new_with_free_func (g_free);
  learned->counts = g_new0 (guint64, MAX (n_shards, 1));
  if (!g_str_has_prefix (text, VERSION_LINE " ")) {
    learned_syntax_error (path, "not a learned index of this version", error);
    goto done;
  }
  for (line = strstr (text, "\n" WARNING_PREFIX); line;
      line = strstr (line + 1, "\n" WARNING_PREFIX)) {
    const gchar *start = line + 1 + strlen (WARNING_PREFIX);
    const gchar *end = strchr (start, '\n');
    gchar *one = g_strndup (start, end ? end - start : G_MAXSSIZE);

    g_ptr_array_add (learned->warnings, g_strcompress (g_strchomp (one)));
    g_free (one);
  }
  if (!gst_spdl_shard_notes_parse (text, n_shards, NULL, learned->notes,
          path, error) ||
      !gst_spdl_shard_index_parse_members (text, path, parsed, found, error))
    goto done;
  for (i = 0; i < n_shards; i++) {
    gchar *name = gst_spdl_shard_index_escape (names[i]);
    guint64 *range = g_hash_table_lookup (found, name);

    g_hash_table_add (listed, name);
    if (range == NULL) {
      learned_syntax_error (path, "a shard is missing", error);
      goto done;
    }
    learned->counts[i] = range[2];
    learned->total += range[2];
  }
  /* the same name twice is the same shard; another name is another list */
  if (g_hash_table_size (found) != g_hash_table_size (listed)) {
    learned_syntax_error (path, "it lists other shards", error);
    goto done;
  }
  learned->members = g_new (GstSpdlShardMember, MAX (learned->total, 1));
  for (i = 0, k = 0; i < n_shards; i++) {
    gchar *name = gst_spdl_shard_index_escape (names[i]);
    guint64 *range = g_hash_table_lookup (found, name), j;

    g_free (name);
    for (j = 0; j < range[2]; j++, k++) {
      learned->members[k] = g_array_index (parsed, GstSpdlShardMember,
          range[0] + j);
      learned->members[k].shard = i;
    }
  }
  ok = TRUE;

done:
  g_array_unref (parsed);
  g_hash_table_unref (found);
  g_hash_table_unref (listed);
  if (!ok) {
    gst_spdl_shard_learned_free (learned);
    return NULL;
  }
  return learned;
}

/* ------------------------------------------------------------------------ */
/* The cache                                                                */

/* The cached index, NULL when there is none or it cannot be used (a
 * warning then says why). */
static GstSpdlShardLearned *
read_cache (const gchar * const *names, guint n_shards, const gchar * path,
    GPtrArray * warnings)
{
  GstSpdlShardLearned *learned;
  GError *error = NULL;
  gchar *text = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &text, &len, &error)) {
    /* none yet (or no folder: writing it says why) */
    if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT) &&
        !g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR))
      g_ptr_array_add (warnings, g_strdup_printf ("Could not read the "
              "learned shard index cache: %s; learning it again",
              error->message));
    g_error_free (error);
    return NULL;
  }
  if (len > MAX_CACHE_SIZE || strlen (text) != len) {
    g_free (text);
    g_set_error (&error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
        "Learned shard index \"%s\": not text", path);
    learned = NULL;
  } else {
    learned = gst_spdl_shard_learned_parse (text, names, n_shards, path,
        &error);
  }
  if (learned == NULL) {
    g_ptr_array_add (warnings, g_strdup_printf ("Ignoring the learned shard "
            "index cache: %s; learning it again", error->message));
    g_error_free (error);
    return NULL;
  }
  learned->cached = TRUE;
  return learned;
}

/* Atomically (a temporary file renamed); a failure is a warning. */
static gboolean
write_cache (const gchar * dir, const gchar * path, const gchar * text,
    GPtrArray * warnings)
{
  GError *error = NULL;

  if (g_mkdir_with_parents (dir, 0700) != 0) {
    gchar *display = g_filename_display_name (dir);
    g_ptr_array_add (warnings, g_strdup_printf ("Could not keep the learned "
            "shard index: could not make the folder \"%s\": %s", display,
            g_strerror (errno)));
    g_free (display);
    return FALSE;
  }
  /* 0600 as the folder: shard URLs may carry tokens (presigned URLs) */
  if (!g_file_set_contents_full (path, text, -1,
          G_FILE_SET_CONTENTS_CONSISTENT, 0600, &error)) {
    g_ptr_array_add (warnings, g_strdup_printf ("Could not keep the learned "
            "shard index: %s", error->message));
    g_error_free (error);
    return FALSE;
  }
  return TRUE;
}

/* One process learns, the others wait for its cache file: the ranks a
 * launcher starts together on one machine share the cache folder, and each
 * would otherwise stream every shard to learn the same index. An advisory
 * lock (flock) on the cache file's name + LOCK_SUFFIX, removed by the
 * process that holds it when it lets go (one per list of shards would
 * otherwise pile up in the folder): a process that then gets the lock of
 * a removed file takes it again on the file now there. */
typedef enum
{
  CACHE_LOCKED,                 /* this process learns, holding the lock */
  CACHE_WRITTEN,                /* another process wrote the file */
  CACHE_UNLOCKED,               /* learned without the lock */
  CACHE_CANCELLED,
} CacheLock;

/* Whether the cache file is there and another than the one @before
 * described (when it @existed): written since, by a rename. */
static gboolean
cache_written (const gchar * path, gboolean existed, const GStatBuf * before)
{
  GStatBuf now;

  if (g_stat (path, &now) != 0)
    return FALSE;
  return !existed || now.st_ino != before->st_ino ||
      now.st_dev != before->st_dev || now.st_mtime != before->st_mtime;
}

/* Whether @fd is the file at @lock_path (not one removed since it was
 * opened) */
static gboolean
lock_file_is (const gchar * lock_path, gint fd)
{
  GStatBuf named, opened;

  return g_stat (lock_path, &named) == 0 && fstat (fd, &opened) == 0 &&
      named.st_ino == opened.st_ino && named.st_dev == opened.st_dev;
}

/* Lets go of the lock held on @fd, removing its file first (while held:
 * a process that takes it after sees the file gone and takes the next) */
static void
unlock_cache (const gchar * lock_path, gint fd)
{
  if (lock_file_is (lock_path, fd) && g_unlink (lock_path) != 0)
    GST_INFO ("could not remove %s: %s", lock_path, g_strerror (errno));
  close (fd);
}

/* Takes the lock (*@fd), or waits, every LOCK_POLL_MS looking whether the
 * start was cancelled and whether the file appeared (a process forked by
 * the holder while it learned keeps the lock: the file tells). A holder
 * that lets go without a file failed (or was killed): the waiters then
 * learn each on its own, at once, so that ranks that fail fail together,
 * not one after another. No lock to take (the folder cannot be made, a
 * file system without locks): each process learns on its own. */
static CacheLock
lock_cache (const gchar * dir, const gchar * path, GstSpdlHttp * http,
    gint * fd)
{
  gchar *lock_path;
  CacheLock result = CACHE_UNLOCKED;
  gboolean waited = FALSE;
  GStatBuf before;
  gboolean existed;

  *fd = -1;
  if (g_mkdir_with_parents (dir, 0700) != 0)
    return CACHE_UNLOCKED;
  lock_path = g_strconcat (path, LOCK_SUFFIX, NULL);
  *fd = g_open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (*fd < 0) {
    GST_INFO ("no lock %s (%s): learning without it", lock_path,
        g_strerror (errno));
    g_free (lock_path);
    return CACHE_UNLOCKED;
  }
  /* a file there already could not be read (the caller read it): only
   * another one, renamed into place, is the holder's */
  existed = g_stat (path, &before) == 0;
  for (;;) {
    if (flock (*fd, LOCK_EX | LOCK_NB) == 0) {
      if (!waited && !lock_file_is (lock_path, *fd)) {
        /* its holder removed it as it let go: the lock is another file's */
        close (*fd);
        *fd = g_open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (*fd < 0) {
          GST_INFO ("no lock %s (%s): learning without it", lock_path,
              g_strerror (errno));
          break;
        }
        continue;
      }
      /* a holder let go: with its file, or having failed */
      result = !waited ? CACHE_LOCKED : cache_written (path, existed,
          &before) ? CACHE_WRITTEN : CACHE_UNLOCKED;
      /* held here: no other holder, a killed one's file goes */
      if (result != CACHE_LOCKED) {
        unlock_cache (lock_path, *fd);
        *fd = -1;
      }
      break;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      GST_INFO ("cannot lock %s (%s): learning without it", lock_path,
          g_strerror (errno));
      break;
    }
    if (!waited)
      GST_INFO ("another process learns these shards' index (%s held): "
          "waiting for its cache file", lock_path);
    waited = TRUE;
    if (http && gst_spdl_http_is_cancelled (http)) {
      result = CACHE_CANCELLED;
      break;
    }
    if (cache_written (path, existed, &before)) {
      result = CACHE_WRITTEN;
      break;
    }
    g_usleep (LOCK_POLL_MS * 1000);
  }
  if (result != CACHE_LOCKED && *fd >= 0) {
    close (*fd);
    *fd = -1;
  }
  g_free (lock_path);
  return result;
}

/* ------------------------------------------------------------------------ */

static void
shards_clear (Shard * shards, guint n)
{
  guint i;

  for (i = 0; i < n; i++) {
    g_free (shards[i].key_name);
    g_free (shards[i].validator);
    g_free (shards[i].etag);
    g_free (shards[i].last_modified);
    g_clear_error (&shards[i].error);
    if (shards[i].members)
      g_string_free (shards[i].members, TRUE);
    if (shards[i].notes)
      g_ptr_array_unref (shards[i].notes);
    g_clear_error (&shards[i].failure);
    g_free (shards[i].other_label);
  }
  g_free (shards);
}

GstSpdlShardLearned *
gst_spdl_shard_learn (const GstSpdlShardLearnConfig * config, GError ** error)
{
  Learn learn = { config, NULL, };
  GstSpdlShardLearned *learned = NULL;
  GPtrArray *warnings = g_ptr_array_new_with_free_func (g_free);
  gchar *dir = NULL, *key = NULL, *path = NULL, *text;
  const gchar **names = NULL;
  gboolean keep = TRUE;
  gint lock_fd = -1;
  guint i;

  GST_DEBUG_CATEGORY_INIT (spdl_shard_learn_debug, "spdlshardlearn", 0,
      "SPDL member indexes learned from tar shards");
  g_mutex_init (&learn.lock);
  g_cond_init (&learn.cond);
  learn.shards = g_new0 (Shard, MAX (config->n_shards, 1));
  for (i = 0; i < config->n_shards; i++) {
    learn.shards[i].location = config->names[i];
    learn.shards[i].members = g_string_new (NULL);
    learn.shards[i].notes = g_ptr_array_new_with_free_func ((GDestroyNotify)
        note_free);
  }

  /* what the key says first: a cached index is used without a read */
  if (config->http) {
    if (!describe_remote (&learn, error))
      goto done;
  } else {
    for (i = 0; i < config->n_shards; i++)
      if (!describe_local (&learn.shards[i], error))
        goto done;
  }
  names = g_new (const gchar *, MAX (config->n_shards, 1));
  for (i = 0; i < config->n_shards; i++)
    names[i] = learn.shards[i].key_name;
  if (config->cache_dir == NULL)
    dir = gst_spdl_shard_learn_default_cache_dir ();
  else if (*config->cache_dir)
    dir = g_strdup (config->cache_dir);
  if (dir && (key = cache_key (&learn, warnings))) {
    gchar *name = g_strconcat (key, CACHE_SUFFIX, NULL);
    guint warned = warnings->len;

    path = g_build_filename (dir, name, NULL);
    g_free (name);
    learned = read_cache (names, config->n_shards, path, warnings);
    /* remote shards: learned by one process of those that start together
     * (local ones are learned from their headers, cheaply) */
    if (learned == NULL && config->http) {
      switch (lock_cache (dir, path, config->http, &lock_fd)) {
        case CACHE_CANCELLED:
          g_set_error (error, GST_SPDL_READ_ERROR,
              GST_SPDL_READ_ERROR_HTTP_ERROR, "cancelled while another "
              "process learned the shard index");
          goto done;
        case CACHE_LOCKED:
          /* another process may have written the file and let go since
           * it was read above */
        case CACHE_WRITTEN:{
          /* the first read's warning, if it gave one, is not repeated */
          GPtrArray *again = g_ptr_array_new_with_free_func (g_free);

          learned = read_cache (names, config->n_shards, path,
              warnings->len > warned ? again : warnings);
          g_ptr_array_unref (again);
          break;
        }
        case CACHE_UNLOCKED:
          break;
      }
    }
    if (learned) {
      GST_INFO ("the members of %u shards from the cache %s",
          config->n_shards, path);
      learned->cache_file = g_strdup (path);
      goto done;
    }
  }

  GST_INFO ("learning the members of %u shards (no shards.members nor "
      "shards.idx beside them)", config->n_shards);
  if (!learn_shards (&learn, error))
    goto done;
  for (i = 0; i < config->n_shards; i++) {
    Shard *shard = &learn.shards[i];
    gchar *shown = gst_spdl_url_redact (shard->location);
    if (shard->changed) {
      GST_INFO ("%s changed while it was read: its index is not cached",
          shown);
      keep = FALSE;
    }
    if (shard->notes->len > 0)
      GST_WARNING ("%s: %u samples or parts left out of its index (%s)",
          shown, shard->notes->len,
          ((GstSpdlShardNote *) g_ptr_array_index (shard->notes,
                  0))->error->message);
    g_free (shown);
  }
  text = learned_text (&learn);
  keep = keep && path && write_cache (dir, path, text, warnings);
  learned = gst_spdl_shard_learned_parse (text, names, config->n_shards,
      "(learned)", error);
  if (learned && keep)
    learned->cache_file = g_strdup (path);

done:
  /* after the cache file is written: a waiting process finds it */
  if (lock_fd >= 0) {
    gchar *lock_path = g_strconcat (path, LOCK_SUFFIX, NULL);

    unlock_cache (lock_path, lock_fd);
    g_free (lock_path);
  }
  if (learned) {
    g_ptr_array_extend_and_steal (learned->warnings, warnings);
    warnings = NULL;
  }
  if (warnings)
    g_ptr_array_unref (warnings);
  g_free (names);
  shards_clear (learn.shards, config->n_shards);
  g_mutex_clear (&learn.lock);
  g_cond_clear (&learn.cond);
  g_free (dir);
  g_free (key);
  g_free (path);
  return learned;
}

gchar *
gst_spdl_shard_learned_unlabelled_member (const gchar * warning)
{
  const gchar *start, *end;

  if (!g_str_has_prefix (warning, "Shard \"") ||
      strstr (warning, " has no .cls label member") == NULL ||
      (start = strstr (warning, " but has .")) == NULL)
    return NULL;
  start += strlen (" but has .");
  end = strstr (start, " members: every label is -1");
  return end ? g_strndup (start, end - start) : NULL;
}
