/* GStreamer SPDL: the index files published beside tar shards
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Text in, tables out: no I/O here (the shards provider fetches the files,
 * locally or over HTTP/S3). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlshardindex.h"
#include "gstspdlerrors.h"

#include <gst/gst.h>
#include <string.h>

/* a member's data follows its header block */
#define TAR_BLOCK 512

/* torchvision's image extensions, and GIF: a sample of a format no
 * decoder reads is skipped by spdldecode with a reason (counted), never
 * dropped here unseen */
static const gchar *const image_extensions[] = { "jpg", "jpeg", "png",
  "webp", "bmp", "gif", "tif", "tiff", "ppm", "pgm", NULL
};

gboolean
gst_spdl_shard_index_is_image (const gchar * extension)
{
  return g_strv_contains (image_extensions, extension);
}

gboolean
gst_spdl_shard_index_parse_label (const guint8 * data, gsize size,
    gint * label)
{
  gchar *text;
  gint64 value;
  gboolean ok;

  /* a NUL would end the text early: "7\0junk" is no label */
  if (size > GST_SPDL_SHARD_MAX_LABEL_SIZE || memchr (data, '\0', size))
    return FALSE;
  text = g_strstrip (g_strndup ((const gchar *) data, size));
  /* class indices: -1 means "no label" downstream, so no negatives; digits
   * only (tools/make-shards --index-only reads them the same way) */
  ok = g_ascii_isdigit (text[0]) &&
      g_ascii_string_to_signed (text, 10, 0, G_MAXINT, &value, NULL);
  g_free (text);
  if (ok)
    *label = (gint) value;
  return ok;
}

gchar *
gst_spdl_shard_index_escape (const gchar * name)
{
  GString *out = g_string_sized_new (strlen (name) + 8);
  const gchar *p;

  if (*name == '#')
    g_string_append (out, "\\043");
  for (p = *name == '#' ? name + 1 : name; *p; p++) {
    switch (*p) {
      case '\\':
        g_string_append (out, "\\\\");
        break;
      case '\t':
        g_string_append (out, "\\t");
        break;
      case '\r':
        g_string_append (out, "\\r");
        break;
      case '\n':
        g_string_append (out, "\\n");
        break;
      default:
        g_string_append_c (out, *p);
        break;
    }
  }
  return g_string_free (out, FALSE);
}

GHashTable *
gst_spdl_shard_index_parse_counts (const gchar * text, const gchar * path,
    GError ** error)
{
  GHashTable *index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  gchar **lines = g_strsplit (text, "\n", -1), **line;
  guint line_no = 0;

  for (line = lines; *line; line++) {
    gchar *tab = strchr (*line, '\t');
    guint64 count;

    line_no++;
    g_strchomp (*line);
    if (**line == '\0' || **line == '#')
      continue;
    if (tab == NULL || !g_ascii_string_to_unsigned (tab + 1, 10, 0,
            G_MAXUINT32, &count, NULL)) {
      gchar *display = g_filename_display_name (path);
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
          "Shard index \"%s\", line %u: expected NAME<TAB>SAMPLES", display,
          line_no);
      g_free (display);
      g_hash_table_unref (index);
      index = NULL;
      break;
    }
    g_hash_table_insert (index, g_strndup (*line, tab - *line),
        g_memdup2 (&count, sizeof (count)));
  }
  g_strfreev (lines);
  return index;
}

static gboolean
members_syntax_error (const gchar * path, guint line_no, const gchar * what,
    GError ** error)
{
  gchar *display = g_filename_display_name (path);

  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
      "Shard member index \"%s\", line %u: %s", display, line_no, what);
  g_free (display);
  return FALSE;
}

/* One "<TAB>OFFSET<TAB>SIZE<TAB>LABEL<TAB>MEMBER" line, split in place. */
static gboolean
parse_member_line (gchar * line, GstSpdlShardMember * member)
{
  gchar *fields[4];
  gint64 label;
  guint i;

  for (i = 0; i < 4; i++) {
    fields[i] = line + 1;
    if ((line = strchr (fields[i], '\t')) == NULL && i < 3)
      return FALSE;
    if (line)
      *line = '\0';
  }
  if (!g_ascii_string_to_unsigned (fields[0], 10, TAR_BLOCK, G_MAXINT64,
          &member->offset, NULL) ||
      !g_ascii_string_to_unsigned (fields[1], 10, 0, G_MAXINT64,
          &member->size, NULL) ||
      !g_ascii_string_to_signed (fields[2], 10, -1, G_MAXINT32, &label, NULL)
      || fields[3][0] == '\0')
    return FALSE;
  member->label = (gint32) label;
  /* names with a tab, newline or backslash are escaped as in C */
  if (strchr (fields[3], '\\')) {
    gsize len = strlen (fields[3]), run = 0;
    gchar *plain;

    /* an escape cut short (an odd run of backslashes at the end): refused
     * here, g_strcompress() would warn for each line a server sends so */
    while (run < len && fields[3][len - 1 - run] == '\\')
      run++;
    if (run % 2)
      return FALSE;
    plain = g_strcompress (fields[3]);
    strcpy (fields[3], plain);
    g_free (plain);
  }
  g_strchomp (fields[3]);
  member->name = fields[3];
  return TRUE;
}

gboolean
gst_spdl_shard_index_parse_members (gchar * text, const gchar * path,
    GArray * members, GHashTable * found, GError ** error)
{
  guint64 *current = NULL;
  guint line_no = 0;
  gchar *line = text, *next;

  for (; line && *line; line = next) {
    if ((next = strchr (line, '\n')))
      *next++ = '\0';
    line_no++;
    if (*line == '#' || *line == '\0' || strcmp (line, "\r") == 0)
      continue;
    if (*line == '\t') {
      GstSpdlShardMember member = { 0, };
      if (current == NULL)
        return members_syntax_error (path, line_no, "a member before its "
            "shard's line", error);
      if (!parse_member_line (line, &member))
        return members_syntax_error (path, line_no, "expected <TAB>OFFSET"
            "<TAB>SIZE<TAB>LABEL<TAB>MEMBER", error);
      if (current[1] == current[2])
        return members_syntax_error (path, line_no, "more members than its "
            "shard's line says", error);
      g_array_append_val (members, member);
      current[1]++;
    } else {
      gchar *tab = strchr (line, '\t');
      guint64 count;

      if (current && current[1] != current[2])
        return members_syntax_error (path, line_no, "fewer members than the "
            "shard's line before says", error);
      if (tab == NULL || !g_ascii_string_to_unsigned (g_strchomp (tab + 1),
              10, 0, G_MAXUINT32, &count, NULL))
        return members_syntax_error (path, line_no, "expected NAME<TAB>"
            "SAMPLES", error);
      *tab = '\0';
      /* first member, members seen, members announced */
      current = g_new (guint64, 3);
      current[0] = members->len;
      current[1] = 0;
      current[2] = count;
      g_hash_table_replace (found, g_strdup (line), current);
    }
  }
  if (current && current[1] != current[2])
    return members_syntax_error (path, line_no, "fewer members than the "
        "last shard's line says", error);
  return TRUE;
}

gboolean
gst_spdl_shard_index_check_label_size (const gchar * name, guint64 size,
    GError ** error)
{
  if (size <= GST_SPDL_SHARD_MAX_LABEL_SIZE)
    return TRUE;
  g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_CORRUPT_MEMBER,
      "label member \"%s\" is %" G_GUINT64_FORMAT " bytes long", name, size);
  return FALSE;
}
