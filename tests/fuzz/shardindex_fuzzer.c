/* gst-spdl fuzz target: the shard index files
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* "shards.idx" and "shards.members" come from the server beside the
 * shards: the input, as text (the provider NUL-terminates what it
 * fetched), through both parsers. What a successful parse gives is
 * checked against what the files promise. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "gstspdlshardindex.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static gboolean initialized = FALSE;
  /* as fetch_index(): the text up to a NUL, if any */
  gchar *text = g_strndup ((const gchar *) data, size);
  gsize text_len = strlen (text);
  GArray *members = g_array_new (FALSE, FALSE, sizeof (GstSpdlShardMember));
  GHashTable *found = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  GHashTable *counts;
  GHashTableIter iter;
  gpointer value;
  GError *error = NULL;
  guint i;

  if (!initialized) {
    /* GLib's warnings about an input are bugs too (a server could have
     * the loader log one for each line it sends): fatal */
    g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_WARNING |
        G_LOG_LEVEL_CRITICAL);
    initialized = TRUE;
  }
  counts = gst_spdl_shard_index_parse_counts (text, "fuzz/shards.idx",
      &error);
  g_assert ((counts == NULL) == (error != NULL));
  if (counts) {
    g_hash_table_iter_init (&iter, counts);
    while (g_hash_table_iter_next (&iter, NULL, &value))
      g_assert (*(guint64 *) value <= G_MAXUINT32);
    g_hash_table_unref (counts);
  }
  g_clear_error (&error);

  /* the same text again: this one is split in place */
  if (gst_spdl_shard_index_parse_members (text, "fuzz/shards.members",
          members, found, &error)) {
    g_assert (error == NULL);
    for (i = 0; i < members->len; i++) {
      GstSpdlShardMember *m = &g_array_index (members, GstSpdlShardMember, i);

      /* names point into the text (empty ones too: "\\000", blanks) */
      g_assert (m->name >= text && m->name < text + text_len);
      g_assert (m->offset >= 512 && m->offset <= G_MAXINT64);
      g_assert (m->size <= G_MAXINT64);
      g_assert (m->label >= -1);
    }
    g_hash_table_iter_init (&iter, found);
    while (g_hash_table_iter_next (&iter, NULL, &value)) {
      guint64 *range = value;
      /* first member, seen, announced: all there */
      g_assert (range[1] == range[2]);
      g_assert (range[0] + range[1] <= members->len);
    }
  } else {
    g_assert (error != NULL);
    g_clear_error (&error);
  }
  g_hash_table_unref (found);
  g_array_unref (members);
  g_free (text);
  return 0;
}
