/* GStreamer SPDL: the index files published beside tar shards
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_SHARD_INDEX_H__
#define __GST_SPDL_SHARD_INDEX_H__

#include <glib.h>

G_BEGIN_DECLS

/* "shards.idx" (tools/make-shards writes it): one "NAME<TAB>SAMPLES" line
 * per shard; lines starting with # are comments. A table of NAME to a
 * guint64 count, or NULL with @error (GST_RESOURCE_ERROR naming @path and
 * the line). */
GHashTable *gst_spdl_shard_index_parse_counts (const gchar * text,
    const gchar * path, GError ** error);

/* An image member listed by "shards.members": read by a byte range. */
typedef struct
{
  guint64 offset;               /* of its data in the shard */
  guint64 size;
  const gchar *name;            /* points into the index's text */
  guint32 shard;
  gint32 label;
} GstSpdlShardMember;

/* "shards.members": a "NAME<TAB>SAMPLES" line per shard, then one
 * "<TAB>OFFSET<TAB>SIZE<TAB>LABEL<TAB>MEMBER" line per sample. Splits
 * @text in place (kept: the names point into it) into @members
 * (GstSpdlShardMember); @found maps a shard's base name to a guint64[3]:
 * its first member, members seen and members announced. FALSE with @error
 * naming @path and the line. */
gboolean gst_spdl_shard_index_parse_members (gchar * text, const gchar * path,
    GArray * members, GHashTable * found, GError ** error);

/* WebDataset's rules, as the shards provider reads shards and
 * tools/make-shards indexes them: a member whose extension (lower case, as
 * gst_spdl_tar_split_name() gives it) is one of these is a sample's image;
 * a ".cls" member of at most GST_SPDL_SHARD_MAX_LABEL_SIZE bytes holding
 * ASCII digits (white space around them allowed) up to G_MAXINT is its
 * label. */
#define GST_SPDL_SHARD_MAX_LABEL_SIZE 64

/* Whether the label member @name of @size bytes may be read; FALSE with
 * @error (a corrupt-member skip reason naming it) when it is too long. */
gboolean gst_spdl_shard_index_check_label_size (const gchar * name,
    guint64 size, GError ** error);
gboolean gst_spdl_shard_index_is_image (const gchar * extension);
/* FALSE for anything but such a label (a NUL, a sign, other text). */
gboolean gst_spdl_shard_index_parse_label (const guint8 * data, gsize size,
    gint * label);

/* @name as a NAME or MEMBER field of "shards.members": backslash, tab, CR
 * and newline escaped as in C (as tools/make-shards escapes them), and a
 * leading '#' as "\043" (not a comment). */
gchar *gst_spdl_shard_index_escape (const gchar * name);

G_END_DECLS

#endif /* __GST_SPDL_SHARD_INDEX_H__ */
