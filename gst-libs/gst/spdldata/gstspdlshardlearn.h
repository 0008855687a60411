/* GStreamer SPDL: member indexes learned from tar shards, and their cache
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_SHARD_LEARN_H__
#define __GST_SPDL_SHARD_LEARN_H__

#include <gst/gst.h>

#include "gstspdlhttp.h"
#include "gstspdlshardindex.h"

G_BEGIN_DECLS

/* Tar shards published without index files (most WebDataset sets): the
 * member index tools/make-shards would write ("shards.members") learned
 * by reading each shard once, several at a time: locally its tar headers
 * with pread (the data passed over), remotely the shard streamed with only
 * its label members kept. Members are grouped as the shards provider
 * groups them; a group whose label is no label is no sample, left out (as
 * make-shards --index-only and a stream of the shard leave it out: it
 * holds no position), and so is what follows a corrupt header or a
 * truncation, each with a note saying why. Without label-key, shards
 * with no .cls member but members such as .json get one warning (kept in
 * the cache, given again) suggesting label-key.
 *
 * The index is kept in a cache folder as a file in the shards.members
 * format named by a SHA-256 over the rules (image-key, label-key,
 * label-field) and the shards' locations in listing order
 * and each one's size and validator (local: its modification time; remote:
 * its ETag, else its Last-Modified, from a HEAD request), so a restarted
 * job reads no shard again; a changed shard has another key. */

/* Something left out of the index, reported as a skipped sample. */
typedef struct
{
  guint shard;                  /* in the listing */
  gchar *member;                /* a sample's image member; NULL: the
                                 * rest of the shard */
  GError *error;                /* GST_SPDL_READ_ERROR: why */
} GstSpdlShardNote;

/* Whether @note is a group that is no sample (no image, its @member the
 * group's key; a label that is no label, or none, its @member the image):
 * it holds no position of a stream, unlike the rest of a damaged shard. */
gboolean gst_spdl_shard_note_is_extra (const GstSpdlShardNote * note);

/* The "#!note<TAB>SHARD<TAB>REASON<TAB>MEMBER<TAB>MESSAGE" lines of @text
 * (MEMBER empty: the rest of the shard; MEMBER and MESSAGE escaped as
 * gst_spdl_shard_index_escape() does), read before the text is split in
 * place, appended to @notes (gst_spdl_shard_notes_new()). SHARD: with
 * @shard_names NULL its place in the listing (below @n_shards; a learned
 * index), else a key of @shard_names, which maps it to that place
 * (GUINT_TO_POINTER), a note of a shard not in it passed over
 * ("shards.members": shards by name). FALSE with @error naming @path for
 * a malformed note. */
gboolean gst_spdl_shard_notes_parse (const gchar * text, guint n_shards,
    GHashTable * shard_names, GPtrArray * notes, const gchar * path,
    GError ** error);
GPtrArray *gst_spdl_shard_notes_new (void);

typedef struct
{
  gchar *text;                  /* the index (the names point into it) */
  GstSpdlShardMember *members;  /* every sample, in listing order */
  guint64 *counts;              /* samples per shard (a stream of it
                                 * yields as many) */
  guint64 total;
  GPtrArray *notes;             /* of GstSpdlShardNote */
  gboolean cached;              /* read from the cache: no shard read */
  gchar *cache_file;            /* where it is kept, NULL: not kept */
  GPtrArray *warnings;          /* strings: a cache not read or written */
} GstSpdlShardLearned;

/* Learning under way: @done of @n_shards shards read, @samples found in
 * them, @elapsed_s since it began; called from a learning thread. */
typedef void (*GstSpdlShardLearnProgressFunc) (guint done, guint n_shards,
    guint64 samples, gdouble elapsed_s, gpointer user_data);

typedef struct
{
  const gchar *const *names;    /* shard locations, in listing order */
  guint n_shards;
  GstSpdlHttp *http;            /* remote shards; NULL: local ones */
  guint parallel;               /* shards read at once */
  /* remote shards from a server that answers byte ranges: their tar
   * headers read by ranged GETs (a few % of the bytes, a request or two
   * per sample), not each shard streamed */
  gboolean by_headers;
  const gchar *cache_dir;       /* NULL: the default; "": no cache */
  const GstSpdlShardRules *rules;       /* NULL: the defaults */
  /* NULL: none; else every GST_SPDL_SHARD_LEARN_PROGRESS_S while shards
   * are read, and once when they all are */
  GstSpdlShardLearnProgressFunc progress;
  gpointer progress_data;
} GstSpdlShardLearnConfig;

#define GST_SPDL_SHARD_LEARN_PROGRESS_S 5

/* The index, from the cache or the shards. NULL with @error
 * (GST_RESOURCE_ERROR naming the shard) when a shard cannot be found or
 * read (a damaged one is not an error: its notes say what was left out). */
GstSpdlShardLearned *gst_spdl_shard_learn (const GstSpdlShardLearnConfig *
    config, GError ** error);
void gst_spdl_shard_learned_free (GstSpdlShardLearned * learned);

/* The extension a learned index's warning names when it is the hint that
 * the default label-key found no .cls member but found members such as
 * .json (every label -1): "json"; NULL for any other warning. A source
 * whose fields read those members leaves the hint out. */
gchar *gst_spdl_shard_learned_unlabelled_member (const gchar * warning);

/* $XDG_CACHE_HOME/gst-spdl/shards (g_get_user_cache_dir()). */
gchar *gst_spdl_shard_learn_default_cache_dir (void);

/* A learned index's text (as the cache holds it) for @names (as the index
 * names the shards: URLs, absolute paths): NULL with @error (naming @path
 * and what is wrong) when it does not parse or does not list exactly these
 * shards. Takes @text. */
GstSpdlShardLearned *gst_spdl_shard_learned_parse (gchar * text,
    const gchar * const *names, guint n_shards, const gchar * path,
    GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_SHARD_LEARN_H__ */
