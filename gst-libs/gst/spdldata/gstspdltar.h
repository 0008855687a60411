/* GStreamer SPDL: streaming tar parser
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_TAR_H__
#define __GST_SPDL_TAR_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Parses a tar stream (ustar, GNU 'L' long names, PAX 'x' path records)
 * fed in chunks of any size: only the members the caller wants are
 * collected, one at a time, so a shard is never held whole in memory. */
typedef struct _GstSpdlTarParser GstSpdlTarParser;

/* Whether to collect the regular file @name of @size bytes. */
typedef gboolean (*GstSpdlTarWantFunc) (const gchar * name, guint64 size,
    gpointer user_data);
/* A complete member: @data is NULL when it was not wanted (only its name
 * and size are known) and is owned by the callee otherwise. FALSE stops
 * the parser (gst_spdl_tar_parser_feed() then returns FALSE, no error). */
typedef gboolean (*GstSpdlTarMemberFunc) (const gchar * name, guint64 size,
    GstBuffer * data, gpointer user_data);

#define GST_SPDL_TAR_ERROR (gst_spdl_tar_error_quark ())
typedef enum
{
  GST_SPDL_TAR_ERROR_CORRUPT,   /* a header fails its checksum or fields */
  GST_SPDL_TAR_ERROR_TRUNCATED, /* the stream ended inside a member */
} GstSpdlTarError;

GQuark gst_spdl_tar_error_quark (void);

/* @want decides (sizes over a limit are the caller's to refuse); a
 * wanted member whose memory cannot be had arrives with @data NULL. */
GstSpdlTarParser *gst_spdl_tar_parser_new (GstSpdlTarWantFunc want,
    GstSpdlTarMemberFunc member, gpointer user_data);
void gst_spdl_tar_parser_free (GstSpdlTarParser * parser);

/* Feeds the next @len bytes. FALSE with @error set on a corrupt stream
 * (parsing cannot go on), FALSE without an error when a callback stopped
 * it or the end-of-archive blocks were seen. */
gboolean gst_spdl_tar_parser_feed (GstSpdlTarParser * parser,
    const guint8 * data, gsize len, GError ** error);
/* The stream ended: FALSE with @error when it ended inside a member. */
gboolean gst_spdl_tar_parser_finish (GstSpdlTarParser * parser,
    GError ** error);
/* Bytes the caller may pass over without reading them (data of members
 * not collected, padding), and passing over @len <= that many. */
guint64 gst_spdl_tar_parser_skippable (const GstSpdlTarParser * parser);
void gst_spdl_tar_parser_skip (GstSpdlTarParser * parser, guint64 len);
/* Bytes consumed so far (offset in the archive). */
guint64 gst_spdl_tar_parser_get_offset (const GstSpdlTarParser * parser);
gboolean gst_spdl_tar_parser_at_end (const GstSpdlTarParser * parser);

/* WebDataset 1.0's grouping (base_plus_ext(), group_by_keys()): the
 * member's sample key (the path up to the first dot of its base name) and
 * its extension (after that dot, lower-cased). FALSE (both NULL) for a
 * name WebDataset passes over without ending the current group: no dot in
 * the base name, or a "__KEY__"-style name (its skip_meta). */
gboolean gst_spdl_tar_split_name (const gchar * name, gchar ** key,
    gchar ** extension);

/* Whether the 512-byte @header is a regular file's of @size bytes (an
 * index's member checked against the archive); GST_SPDL_TAR_ERROR_CORRUPT
 * when not. */
gboolean gst_spdl_tar_check_header (const guint8 * header, guint64 size,
    GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_TAR_H__ */
