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
#include "gstspdljson.h"

#include <gst/gst.h>
#include <string.h>

/* a member's data follows its header block */
#define TAR_BLOCK 512

/* torchvision's image extensions, GIF, and WebDataset's PBM and PNM: a
 * sample of a format no decoder reads is skipped by spdldecode with a
 * reason (counted), never dropped here unseen */
static const gchar *const image_extensions[] = { "jpg", "jpeg", "png",
  "webp", "bmp", "gif", "tif", "tiff", "ppm", "pgm", "pbm", "pnm", NULL
};

/* images by their name that no decoder here reads */
static const gchar *const unsupported_images[] = { "avif", "heic", "heif",
  "jxl", "jp2", "j2k", "jpx", "svg", "ico", "exr", "tga", "psd", "dng",
  NULL
};

/* ranks of an image that only ends an extension ("img.jpg"): after every
 * whole one */
#define LAST_PART_RANK 1000

struct _GstSpdlShardRules
{
  gchar **image_keys;           /* NULL: image_extensions, whole or last */
  gchar **label_keys;
  gchar **label_field;          /* dotted path */
  gboolean label_required;
  gchar *description;
};

static const gchar *const default_label_keys[] = { "cls", NULL };
static const gchar *const default_label_field[] = { "label", NULL };

static const GstSpdlShardRules default_rules = {
  NULL, (gchar **) default_label_keys, (gchar **) default_label_field,
  FALSE, (gchar *) ""
};

/* "a;b" into its non-empty parts, lower-cased (@lower) */
static gchar **
split_list (const gchar * value, const gchar * separator, gboolean lower)
{
  gchar **parts = g_strsplit (value, separator, -1);
  GPtrArray *out = g_ptr_array_new ();
  guint i;

  for (i = 0; parts[i]; i++) {
    gchar *part = g_strstrip (parts[i]);
    if (*part)
      g_ptr_array_add (out, lower ? g_ascii_strdown (part, -1) :
          g_strdup (part));
  }
  g_strfreev (parts);
  if (out->len == 0) {
    g_ptr_array_unref (out);
    return NULL;
  }
  g_ptr_array_add (out, NULL);
  return (gchar **) g_ptr_array_free (out, FALSE);
}

GstSpdlShardRules *
gst_spdl_shard_rules_new (const gchar * image_key, const gchar * label_key,
    const gchar * label_field, GError ** error)
{
  GstSpdlShardRules *rules = g_new0 (GstSpdlShardRules, 1);
  GString *description = g_string_new (NULL);

  if (image_key && (rules->image_keys = split_list (image_key, ";",
              TRUE)) == NULL)
    goto empty;
  rules->label_keys = split_list (label_key ? label_key : "cls", ";", TRUE);
  if (rules->label_keys == NULL)
    goto empty;
  rules->label_required = label_key != NULL;
  if ((rules->label_field = split_list (label_field ? label_field : "label",
              ".", FALSE)) == NULL)
    goto empty;
  if (image_key) {
    gchar *joined = g_strjoinv (";", rules->image_keys);
    g_string_append_printf (description, "image-key=%s\t", joined);
    g_free (joined);
  }
  if (label_key) {
    gchar *joined = g_strjoinv (";", rules->label_keys);
    g_string_append_printf (description, "label-key=%s\t", joined);
    g_free (joined);
  }
  if (label_field) {
    gchar *joined = g_strjoinv (".", rules->label_field);
    g_string_append_printf (description, "label-field=%s\t", joined);
    g_free (joined);
  }
  rules->description = g_string_free (description, FALSE);
  return rules;

empty:
  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
      "image-key, label-key and label-field need a name (\"%s\", \"%s\", "
      "\"%s\")", GST_STR_NULL (image_key), GST_STR_NULL (label_key),
      GST_STR_NULL (label_field));
  g_string_free (description, TRUE);
  gst_spdl_shard_rules_free (rules);
  return NULL;
}

void
gst_spdl_shard_rules_free (GstSpdlShardRules * rules)
{
  if (rules == NULL || rules == &default_rules)
    return;
  g_strfreev (rules->image_keys);
  g_strfreev (rules->label_keys);
  g_strfreev (rules->label_field);
  g_free (rules->description);
  g_free (rules);
}

const GstSpdlShardRules *
gst_spdl_shard_rules_get_default (void)
{
  return &default_rules;
}

gboolean
gst_spdl_shard_rules_is_default (const GstSpdlShardRules * rules)
{
  return rules == NULL || rules->description[0] == '\0';
}

const gchar *
gst_spdl_shard_rules_describe (const GstSpdlShardRules * rules)
{
  return rules ? rules->description : "";
}

static gint
index_in (const gchar * const *list, const gchar * value)
{
  gint i;

  for (i = 0; list[i]; i++)
    if (strcmp (list[i], value) == 0)
      return i;
  return -1;
}

static const gchar *
last_part (const gchar * extension)
{
  const gchar *dot = strrchr (extension, '.');

  return dot ? dot + 1 : extension;
}

gint
gst_spdl_shard_rules_image_rank (const GstSpdlShardRules * rules,
    const gchar * extension)
{
  gint rank;

  if (rules == NULL)
    rules = &default_rules;
  if (rules->image_keys)
    return index_in ((const gchar * const *) rules->image_keys, extension);
  if ((rank = index_in (image_extensions, extension)) >= 0)
    return rank;
  if (strchr (extension, '.') &&
      (rank = index_in (image_extensions, last_part (extension))) >= 0)
    return LAST_PART_RANK + rank;
  return -1;
}

gboolean
gst_spdl_shard_rules_is_unsupported_image (const gchar * extension)
{
  return index_in (unsupported_images, last_part (extension)) >= 0;
}

gint
gst_spdl_shard_rules_label_rank (const GstSpdlShardRules * rules,
    const gchar * extension)
{
  gint rank;

  if (rules == NULL)
    rules = &default_rules;
  if ((rank = index_in ((const gchar * const *) rules->label_keys,
              extension)) >= 0 || rules->label_required)
    return rank;
  /* by default as the image: "a.b.jpg" and "a.b.cls" are key "a" with
   * "b.jpg" and "b.cls", the label of the image the last part found */
  if (strchr (extension, '.') && (rank = index_in ((const gchar * const *)
              rules->label_keys, last_part (extension))) >= 0)
    return LAST_PART_RANK + rank;
  return -1;
}

gboolean
gst_spdl_shard_rules_label_required (const GstSpdlShardRules * rules)
{
  return rules && rules->label_required;
}

static gboolean
is_json (const gchar * extension)
{
  return g_str_has_suffix (extension, "json");
}

gboolean
gst_spdl_shard_rules_check_label_size (const GstSpdlShardRules * rules,
    const gchar * name, const gchar * extension, guint64 size,
    GError ** error)
{
  guint64 max = is_json (extension) ? GST_SPDL_SHARD_MAX_JSON_LABEL_SIZE :
      GST_SPDL_SHARD_MAX_LABEL_SIZE;

  if (size <= max)
    return TRUE;
  g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_BAD_LABEL,
      "label member \"%s\" is %" G_GUINT64_FORMAT " bytes long (at most %"
      G_GUINT64_FORMAT ")", name, size, max);
  return FALSE;
}

gboolean
gst_spdl_shard_rules_parse_label (const GstSpdlShardRules * rules,
    const gchar * name, const gchar * extension, const guint8 * data,
    gsize size, gint * label, GError ** error)
{
  GError *why = NULL;
  gchar *field;

  if (rules == NULL)
    rules = &default_rules;
  if (!is_json (extension)) {
    if (gst_spdl_shard_index_parse_label (data, size, label))
      return TRUE;
    g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_BAD_LABEL,
        "label member \"%s\" is not a non-negative integer", name);
    return FALSE;
  }
  if (gst_spdl_shard_index_parse_json_label (data, size,
          (const gchar * const *) rules->label_field, label, &why))
    return TRUE;
  field = g_strjoinv (".", rules->label_field);
  g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_BAD_LABEL,
      "label member \"%s\", field \"%s\": %s", name, field, why->message);
  g_free (field);
  g_error_free (why);
  return FALSE;
}

GError *
gst_spdl_shard_rules_no_image_error (const GstSpdlShardRules * rules,
    const gchar * key, const gchar * const *extensions)
{
  GString *have = g_string_new (NULL);
  gboolean unsupported = FALSE;
  gchar *wanted;
  GError *error;
  guint i;

  if (rules == NULL)
    rules = &default_rules;
  for (i = 0; extensions[i]; i++) {
    unsupported |= gst_spdl_shard_rules_is_unsupported_image (extensions[i]);
    g_string_append_printf (have, "%s%s", i ? ", " : "", extensions[i]);
  }
  wanted = rules->image_keys ? g_strjoinv (";", rules->image_keys) : NULL;
  error = g_error_new (GST_SPDL_READ_ERROR, unsupported ?
      GST_SPDL_READ_ERROR_UNSUPPORTED_IMAGE : GST_SPDL_READ_ERROR_NO_IMAGE,
      "group \"%s\" has no image member (%s%s%sits members: %s)%s", key,
      wanted ? "image-key \"" : "", wanted ? wanted : "", wanted ? "\"; " :
      "", have->len ? have->str : "none",
      unsupported ? ": an image format no decoder here reads" : "");
  g_free (wanted);
  g_string_free (have, TRUE);
  return error;
}

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

/* ------------------------------------------------------------------------ */
/* One integer out of a JSON document                                       */

gboolean
gst_spdl_shard_index_parse_json_label (const guint8 * data, gsize size,
    const gchar * const *path, gint * label, GError ** error)
{
  const gchar *value;
  gsize len;
  gchar *why = NULL, *text;
  gint64 number = -1;
  gboolean ok;

  /* the document checked whole (a value found in broken JSON is none),
   * then walked: gstspdljson.h, as json#PATH fields are */
  if (!gst_spdl_json_find ((const gchar *) data, size, path, &value, &len,
          &why)) {
    g_set_error (error, GST_SPDL_READ_ERROR, GST_SPDL_READ_ERROR_BAD_LABEL,
        "%s", why);
    g_free (why);
    return FALSE;
  }
  if (value == NULL) {
    g_set_error_literal (error, GST_SPDL_READ_ERROR,
        GST_SPDL_READ_ERROR_BAD_LABEL, "no such field");
    return FALSE;
  }
  /* integers only (3.0 is Python's float), class indices: no negatives */
  text = g_strndup (value, len);
  ok = g_ascii_isdigit (*text) &&
      g_ascii_string_to_signed (text, 10, 0, G_MAXINT, &number, NULL);
  g_free (text);
  if (!ok) {
    g_set_error_literal (error, GST_SPDL_READ_ERROR,
        GST_SPDL_READ_ERROR_BAD_LABEL, "not an integer in [0, 2147483647]");
    return FALSE;
  }
  *label = (gint) number;
  return TRUE;
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
