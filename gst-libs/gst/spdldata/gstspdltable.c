/* GStreamer SPDL: manifests with a header (CSV, TSV, JSON Lines)
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

#include "gstspdltable.h"
#include "gstspdljson.h"
#include "gstspdlerrors.h"

#include <gst/gst.h>
#include <string.h>

gboolean
gst_spdl_table_format_from_name (const gchar * name,
    GstSpdlTableFormat * format)
{
  const gchar *dot = name ? strrchr (name, '.') : NULL;

  if (dot == NULL)
    return FALSE;
  if (g_ascii_strcasecmp (dot, ".csv") == 0)
    *format = GST_SPDL_TABLE_CSV;
  else if (g_ascii_strcasecmp (dot, ".tsv") == 0)
    *format = GST_SPDL_TABLE_TSV;
  else if (g_ascii_strcasecmp (dot, ".jsonl") == 0 ||
      g_ascii_strcasecmp (dot, ".ndjson") == 0)
    *format = GST_SPDL_TABLE_JSONL;
  else
    return FALSE;
  return TRUE;
}

typedef struct
{
  GstSpdlTableFormat format;
  const gchar *name;
  GstSpdlTableHeaderFunc header;
  GstSpdlTableRowFunc row;
  gpointer user_data;
  gchar **wanted;               /* NULL until the header came */
  guint n_wanted;
  gint *column_of;              /* CSV, TSV: a wanted one's column, or -1 */
  GString *text;                /* the row's cells, one after the other */
  GArray *bounds;               /* gsize: cell i is text[bounds[i]..[i+1]) */
  GArray *spans;                /* JSON Lines: gsize[4] per wanted column,
                                 * its value's bytes in @text (G_MAXSIZE:
                                 * none or null), then its JSON text's in
                                 * the line */
  GstSpdlTableCell *cells;      /* n_wanted */
} Table;

static gboolean
table_fail (GError ** error, const Table * t, guint64 line,
    const gchar * what)
{
  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
      "%s:%" G_GUINT64_FORMAT ": %s", t->name, line, what);
  return FALSE;
}

/* The collected cells are the header: the wanted columns asked. */
static gboolean
table_take_header (Table * t, const gchar * const *names, guint n,
    guint64 line, GError ** error)
{
  guint i, j;

  t->wanted = t->header (names, n, line, t->user_data, error);
  if (t->wanted == NULL)
    return FALSE;
  t->n_wanted = g_strv_length (t->wanted);
  t->cells = g_new0 (GstSpdlTableCell, MAX (t->n_wanted, 1));
  t->column_of = g_new (gint, MAX (t->n_wanted, 1));
  for (i = 0; i < t->n_wanted; i++) {
    t->column_of[i] = -1;
    for (j = 0; t->format != GST_SPDL_TABLE_JSONL && j < n; j++)
      if (strcmp (names[j], t->wanted[i]) == 0) {
        t->column_of[i] = j;
        break;
      }
  }
  return TRUE;
}

/* CSV, TSV: the collected cells are the header, or a row. */
static gboolean
table_cells_done (Table * t, guint64 line, GError ** error)
{
  guint n = t->bounds->len - 1, i;
  const gsize *b = (const gsize *) t->bounds->data;
  gboolean ok;

  if (t->wanted == NULL) {
    gchar **names = g_new0 (gchar *, n + 1);

    for (i = 0; i < n; i++)
      names[i] = g_strndup (t->text->str + b[i], b[i + 1] - b[i]);
    ok = table_take_header (t, (const gchar * const *) names, n, line, error);
    g_strfreev (names);
    return ok;
  }
  for (i = 0; i < t->n_wanted; i++) {
    gint c = t->column_of[i];

    t->cells[i].data = c >= 0 && (guint) c < n ? t->text->str + b[c] : NULL;
    t->cells[i].len = c >= 0 && (guint) c < n ? b[c + 1] - b[c] : 0;
  }
  return t->row (t->cells, line, t->user_data, error);
}

static void
table_start_cells (Table * t)
{
  gsize zero = 0;

  g_string_truncate (t->text, 0);
  g_array_set_size (t->bounds, 0);
  g_array_append_val (t->bounds, zero);
}

static void
table_end_cell (Table * t)
{
  gsize end = t->text->len;

  g_array_append_val (t->bounds, end);
}

static gboolean
csv_end_row (Table * t, guint64 line, GError ** error)
{
  table_end_cell (t);
  return table_cells_done (t, line, error);
}

/* Python's csv reader (excel dialect, strict off): a quote opens a quoted
 * cell only at its start; after the closing quote, characters up to the
 * delimiter are kept. */
static gboolean
parse_csv (Table * t, const gchar * p, const gchar * end, GError ** error)
{
  enum
  { START_CELL, IN_CELL, IN_QUOTED, QUOTE_IN_QUOTED } state = START_CELL;
  guint64 line = 1, row_line = 1;
  gboolean row_has_content = FALSE;

  table_start_cells (t);
  for (;;) {
    gboolean at_end = p >= end;
    gchar c = at_end ? '\n' : *p;
    gboolean newline = c == '\n' || c == '\r';

    if (at_end && state == START_CELL && !row_has_content)
      return TRUE;
    if (at_end && state == IN_QUOTED)
      return table_fail (error, t, row_line, "the file ends inside a quoted "
          "cell");
    if (!at_end && c == '\r' && p + 1 < end && p[1] == '\n' &&
        state != IN_QUOTED) {
      p++;                      /* \r\n ends a row once */
      continue;
    }
    switch (state) {
      case START_CELL:
      case IN_CELL:
        if (c == '"' && state == START_CELL) {
          state = IN_QUOTED;
          row_has_content = TRUE;
        } else if (c == ',') {
          table_end_cell (t);
          state = START_CELL;
          row_has_content = TRUE;
        } else if (newline) {
          /* an empty line is no row */
          if (row_has_content && !csv_end_row (t, row_line, error))
            return FALSE;
          table_start_cells (t);
          row_has_content = FALSE;
          state = START_CELL;
        } else {
          g_string_append_c (t->text, c);
          state = IN_CELL;
          row_has_content = TRUE;
        }
        break;
      case IN_QUOTED:
        if (c == '"')
          state = QUOTE_IN_QUOTED;
        else
          g_string_append_c (t->text, c);
        break;
      case QUOTE_IN_QUOTED:
        if (c == '"') {
          g_string_append_c (t->text, c);
          state = IN_QUOTED;
        } else if (c == ',') {
          table_end_cell (t);
          state = START_CELL;
        } else if (newline) {
          if (!csv_end_row (t, row_line, error))
            return FALSE;
          table_start_cells (t);
          row_has_content = FALSE;
          state = START_CELL;
        } else {
          g_string_append_c (t->text, c);
          state = IN_CELL;
        }
        break;
    }
    if (at_end)
      return TRUE;
    if (c == '\n' || c == '\r')
      line++;
    if (state == START_CELL && !row_has_content)
      row_line = line;
    p++;
  }
}

static const gchar *
skip_space (const gchar * p, const gchar * end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* The line at @p (without its \n or \r\n); @next: after it. */
static const gchar *
next_line (const gchar * p, const gchar * end, gsize * len,
    const gchar ** next)
{
  const gchar *nl = memchr (p, '\n', end - p);
  const gchar *stop = nl ? nl : end;

  *next = nl ? nl + 1 : end;
  if (stop > p && stop[-1] == '\r')
    stop--;
  *len = stop - p;
  return p;
}

typedef gboolean (*LineFunc) (Table * t, const gchar * s, gsize len,
    guint64 line, GError ** error);

/* TSV, JSON Lines: @func on each line that is not blank. */
static gboolean
for_each_line (Table * t, const gchar * p, const gchar * end, LineFunc func,
    GError ** error)
{
  guint64 line = 0;

  while (p < end) {
    const gchar *next, *s;
    gsize len;

    s = next_line (p, end, &len, &next);
    p = next;
    line++;
    if (skip_space (s, s + len) < s + len && !func (t, s, len, line, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
tsv_line (Table * t, const gchar * s, gsize len, guint64 line,
    GError ** error)
{
  table_start_cells (t);
  while (TRUE) {
    const gchar *tab = memchr (s, '\t', len);
    gsize cell = tab ? (gsize) (tab - s) : len;

    g_string_append_len (t->text, s, cell);
    table_end_cell (t);
    if (tab == NULL)
      break;
    len -= cell + 1;
    s = tab + 1;
  }
  return table_cells_done (t, line, error);
}

/* JSON Lines: a validated object's keys and values (the scanner trusts
 * gst_spdl_json_validate()'s verdict) */

static gboolean
parse_jsonl_object (Table * t, const gchar * s, gsize len, guint64 line,
    GError ** error)
{
  const gchar *end = s + len, *p;
  GPtrArray *keys = NULL;
  GString *key = g_string_new (NULL);
  gchar *why = NULL;
  gboolean ok = TRUE;
  guint i;

  if (!gst_spdl_json_validate (s, len, &why)) {
    gchar *what = g_strdup_printf ("not a JSON object: %s",
        why ? why : "malformed");
    table_fail (error, t, line, what);
    g_free (what);
    g_free (why);
    g_string_free (key, TRUE);
    return FALSE;
  }
  p = skip_space (s, end);
  if (*p != '{') {
    g_string_free (key, TRUE);
    return table_fail (error, t, line, "not a JSON object (one per line)");
  }
  if (t->wanted == NULL)
    keys = g_ptr_array_new_with_free_func (g_free);
  g_string_truncate (t->text, 0);
  g_array_set_size (t->spans, 0);
  for (i = 0; t->wanted && i < t->n_wanted; i++) {
    gsize none[4] = { G_MAXSIZE, 0, 0, 0 };
    g_array_append_vals (t->spans, none, 4);
  }
  p = skip_space (p + 1, end);
  while (*p == '"') {
    const gchar *value;
    gboolean found = FALSE;

    g_string_truncate (key, 0);
    p = skip_space (gst_spdl_json_append_string (p, key), end);
    p = skip_space (p + 1, end);        /* the colon */
    value = p;
    p = gst_spdl_json_value_end (p, end);
    if (keys)
      g_ptr_array_add (keys, g_strdup (key->str));
    for (i = 0; t->wanted && i < t->n_wanted && !found; i++)
      found = strcmp (t->wanted[i], key->str) == 0;
    if (found) {
      /* the last of a key given twice: its value is kept after the
       * others, the cells pointing at it */
      gsize start = t->text->len;
      gboolean present = !(p - value == 4 && memcmp (value, "null", 4) == 0);

      if (*value == '"')
        gst_spdl_json_append_string (value, t->text);
      else
        g_string_append_len (t->text, value, p - value);
      for (i = 0; i < t->n_wanted; i++) {
        if (strcmp (t->wanted[i], key->str) != 0)
          continue;
        g_array_index (t->spans, gsize, 4 * i) = present ? start : G_MAXSIZE;
        g_array_index (t->spans, gsize, 4 * i + 1) = t->text->len;
        g_array_index (t->spans, gsize, 4 * i + 2) = value - s;
        g_array_index (t->spans, gsize, 4 * i + 3) = p - value;
      }
    }
    p = skip_space (p, end);
    if (*p == ',')
      p = skip_space (p + 1, end);
  }
  if (keys) {
    g_ptr_array_add (keys, NULL);
    ok = table_take_header (t, (const gchar * const *) keys->pdata,
        keys->len - 1, line, error);
    g_ptr_array_unref (keys);
    if (ok)
      ok = parse_jsonl_object (t, s, len, line, error);
    g_string_free (key, TRUE);
    return ok;
  }
  g_string_free (key, TRUE);
  return ok;
}

static gboolean
jsonl_line (Table * t, const gchar * s, gsize len, guint64 line,
    GError ** error)
{
  guint i;

  if (!parse_jsonl_object (t, s, len, line, error))
    return FALSE;
  for (i = 0; i < t->n_wanted; i++) {
    const gsize *span = &g_array_index (t->spans, gsize, 4 * i);

    t->cells[i].data = span[0] != G_MAXSIZE ? t->text->str + span[0] : NULL;
    t->cells[i].len = span[0] != G_MAXSIZE ? span[1] - span[0] : 0;
    /* null too: a json field's value is its JSON text, "null" included */
    t->cells[i].json = span[3] > 0 ? s + span[2] : NULL;
    t->cells[i].json_len = span[3];
  }
  return t->row (t->cells, line, t->user_data, error);
}

gboolean
gst_spdl_table_parse (GstSpdlTableFormat format, const gchar * data,
    gsize len, const gchar * name, GstSpdlTableHeaderFunc header,
    GstSpdlTableRowFunc row, gpointer user_data, GError ** error)
{
  Table t = { format, name, header, row, user_data, };
  const gchar *end = data + len;
  gboolean ok;

  if (len >= 3 && memcmp (data, "\xEF\xBB\xBF", 3) == 0)
    data += 3;
  t.text = g_string_new (NULL);
  t.bounds = g_array_new (FALSE, FALSE, sizeof (gsize));
  t.spans = g_array_new (FALSE, FALSE, sizeof (gsize));
  switch (format) {
    case GST_SPDL_TABLE_CSV:
      ok = parse_csv (&t, data, end, error);
      break;
    case GST_SPDL_TABLE_TSV:
      ok = for_each_line (&t, data, end, tsv_line, error);
      break;
    default:
      ok = for_each_line (&t, data, end, jsonl_line, error);
      break;
  }
  g_string_free (t.text, TRUE);
  g_array_unref (t.bounds);
  g_array_unref (t.spans);
  g_strfreev (t.wanted);
  g_free (t.column_of);
  g_free (t.cells);
  return ok;
}
