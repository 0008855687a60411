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
 * tools/make-shards indexes them. Members are grouped by key
 * (gst_spdl_tar_split_name()); a group is a sample when it has an image
 * member, else it is skipped ("no-image", or "unsupported-image" when its
 * only images are of a format no decoder here reads).
 *
 * The image: with an image-key ("input.jpg;jpg", as WebDataset's
 * to_tuple()) the member whose extension is the first of the list present;
 * by default the first of jpg, jpeg, png, webp, bmp, gif, tif, tiff, ppm,
 * pgm, pbm, pnm that is a member's whole extension, else that ends one
 * ("img.jpg", "input.png"; first in the archive).
 *
 * The label: the member whose extension is the first of the label-key list
 * present ("cls" by default); an extension ending in "json" is a JSON
 * member whose label-field (a dotted path, "label" by default; a number in
 * it indexes an array) holds the label, any other a text member of ASCII
 * digits (white space around them allowed). Labels are integers in
 * [0, G_MAXINT]; one that is not ("bad-label") skips its sample, and so
 * does none when label-key was given ("no-label"); without a label-key a
 * sample without one has label -1. */
#define GST_SPDL_SHARD_MAX_LABEL_SIZE 64
#define GST_SPDL_SHARD_MAX_JSON_LABEL_SIZE (1024 * 1024)

typedef struct _GstSpdlShardRules GstSpdlShardRules;

/* NULLs: the defaults. NULL with @error (GST_RESOURCE_ERROR_SETTINGS) for
 * an empty list or field. */
GstSpdlShardRules *gst_spdl_shard_rules_new (const gchar * image_key,
    const gchar * label_key, const gchar * label_field, GError ** error);
void gst_spdl_shard_rules_free (GstSpdlShardRules * rules);
/* The rules spdlsrc reads with by default (and index files describe). */
const GstSpdlShardRules *gst_spdl_shard_rules_get_default (void);
gboolean gst_spdl_shard_rules_is_default (const GstSpdlShardRules * rules);
/* "image-key=...\tlabel-key=...\tlabel-field=...", for fingerprints and
 * cache keys ("" for the defaults). */
const gchar *gst_spdl_shard_rules_describe (const GstSpdlShardRules * rules);

/* How much a member of @extension is the group's image: -1 not at all,
 * else a rank (lower is better). */
gint gst_spdl_shard_rules_image_rank (const GstSpdlShardRules * rules,
    const gchar * extension);
/* Whether @extension is an image format no decoder here reads (a group
 * with only such images is "unsupported-image"). */
gboolean gst_spdl_shard_rules_is_unsupported_image (const gchar * extension);
/* The same for the label member; -1: not one. */
gint gst_spdl_shard_rules_label_rank (const GstSpdlShardRules * rules,
    const gchar * extension);
/* Whether a group without a label member is skipped ("no-label"). */
gboolean gst_spdl_shard_rules_label_required (const GstSpdlShardRules *
    rules);
/* Whether the label member @name (@extension, @size bytes) may be read;
 * FALSE with @error ("bad-label" naming it) when it is too long. */
gboolean gst_spdl_shard_rules_check_label_size (const GstSpdlShardRules *
    rules, const gchar * name, const gchar * extension, guint64 size,
    GError ** error);
/* The label in the member @name; FALSE with @error ("bad-label" saying
 * why). */
gboolean gst_spdl_shard_rules_parse_label (const GstSpdlShardRules * rules,
    const gchar * name, const gchar * extension, const guint8 * data,
    gsize size, gint * label, GError ** error);
/* A group without an image: @error ("no-image" or "unsupported-image")
 * naming @key and the @extensions it has (NULL-terminated). */
GError *gst_spdl_shard_rules_no_image_error (const GstSpdlShardRules * rules,
    const gchar * key, const gchar * const *extensions);

/* The default image rule (whole extensions only) and the text label
 * (digits), kept for tools that index by them. */
gboolean gst_spdl_shard_index_is_image (const gchar * extension);
/* FALSE for anything but such a label (a NUL, a sign, other text). */
gboolean gst_spdl_shard_index_parse_label (const guint8 * data, gsize size,
    gint * label);
/* The integer at @path (dotted components) in the JSON document @data:
 * FALSE with @error (a message, no domain meaning) when @data is not JSON
 * (or nested deeper than GST_SPDL_JSON_MAX_DEPTH), the path is not
 * there or its value is no integer in [0, G_MAXINT]. */
gboolean gst_spdl_shard_index_parse_json_label (const guint8 * data,
    gsize size, const gchar * const *path, gint * label, GError ** error);

/* @name as a NAME or MEMBER field of "shards.members": backslash, tab, CR
 * and newline escaped as in C (as tools/make-shards escapes them), and a
 * leading '#' as "\043" (not a comment). */
gchar *gst_spdl_shard_index_escape (const gchar * name);

G_END_DECLS

#endif /* __GST_SPDL_SHARD_INDEX_H__ */
