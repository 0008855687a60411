/* GStreamer SPDL: manifests with a header (CSV, TSV, JSON Lines)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_TABLE_H__
#define __GST_SPDL_TABLE_H__

#include <glib.h>

G_BEGIN_DECLS

/* A table of named columns, a row per sample:
 * - CSV: RFC 4180 as Python's csv module reads it (',' between cells,
 *   '"' quotes a cell, "" a quote in it, line breaks inside quotes kept;
 *   rows end at \n, \r\n or \r), the first row names the columns;
 * - TSV: a header line, then one line per row, cells between tabs, no
 *   quoting;
 * - JSON Lines: one JSON object per line, its keys naming columns (the
 *   last of a key given twice, as json.loads keeps it); a string value is
 *   its text, null is absent, any other value its JSON text.
 * Empty lines are no rows; a UTF-8 byte-order mark before the first is
 * passed over. */
typedef enum
{
  GST_SPDL_TABLE_CSV,
  GST_SPDL_TABLE_TSV,
  GST_SPDL_TABLE_JSONL,
} GstSpdlTableFormat;

/* The format of a file by its name's extension (.csv, .tsv, .jsonl,
 * .ndjson; any case); FALSE for any other. */
gboolean gst_spdl_table_format_from_name (const gchar * name,
    GstSpdlTableFormat * format);

/* One cell of a row: @data NULL when the row has no such column or its
 * value is null; valid during the row callback only. JSON Lines also give
 * the value's JSON text (a string with its quotes and escapes; "null" for
 * null) in @json, NULL without the key and elsewhere. */
typedef struct
{
  const gchar *data;
  gsize len;
  const gchar *json;
  gsize json_len;
} GstSpdlTableCell;

/* The columns the table names (the header; for JSON Lines the keys of
 * its first object), @n of them: returns the names of the columns to hand
 * to each row, NULL-terminated (g_strfreev'd by the parser), or NULL with
 * @error to stop. */
typedef gchar **(*GstSpdlTableHeaderFunc) (const gchar * const *columns,
    guint n, guint64 line, gpointer user_data, GError ** error);
/* A row (starting at @line): a cell per wanted column. FALSE with @error
 * stops. */
typedef gboolean (*GstSpdlTableRowFunc) (const GstSpdlTableCell * cells,
    guint64 line, gpointer user_data, GError ** error);

/* Parses the @len bytes at @data; @name stands for the file in errors
 * (GST_RESOURCE_ERROR_READ, "NAME:LINE: ..."). */
gboolean gst_spdl_table_parse (GstSpdlTableFormat format, const gchar * data,
    gsize len, const gchar * name, GstSpdlTableHeaderFunc header,
    GstSpdlTableRowFunc row, gpointer user_data, GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_TABLE_H__ */
