/* gst-spdl fuzz target: the streaming tar parser
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Feeds a tar stream, as a shard arrives from a server or a damaged file,
 * through gst_spdl_tar_parser_*() in chunks of fuzzer-chosen sizes,
 * passing over what may be skipped as the shards provider does. The first
 * two input bytes choose how:
 *
 *   byte 0: bits 0-3 the chunk size (CHUNKS), bits 4-5 skipping (none,
 *           all that may be skipped, half of it, every other time),
 *           bit 6 chunk sizes vary (next size from the chunk's first byte)
 *   byte 1: bit 0 every member wanted (else only .jpg/.cls ones), bits 1-3
 *           stop after that many members (0: never), bit 4 keep the
 *           collected members to the end (else each is freed at once)
 *
 * Checked on the way: a member the parser takes for a regular file has a
 * header gst_spdl_tar_check_header() accepts; a wanted one arrives whole;
 * TRUE from feed means every byte was consumed. */
#include <gst/gst.h>
#include <stdint.h>
#include <string.h>

#include "gstspdltar.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

#define BLOCK 512
/* a wanted member is collected up to this size (the provider's
 * max-file-size); larger ones are passed over */
#define MAX_WANTED (1024 * 1024)

static const gsize chunks[16] = { 1, 2, 3, 7, 100, 511, 512, 513, 1000,
  1024, 1536, 4096, 10000, 65536, 1, G_MAXSIZE
};

typedef struct
{
  GstSpdlTarParser *parser;
  const guint8 *tar;            /* the stream, from its first byte */
  gsize tar_len;
  gboolean want_all;
  guint stop_after;             /* members; 0: never */
  guint members;
  GPtrArray *kept;              /* collected GstBuffers */
} Fuzz;

static void
split (const gchar * name)
{
  gchar *key, *extension;

  if (gst_spdl_tar_split_name (name, &key, &extension))
    g_assert (g_str_has_prefix (name, key));
  else
    g_assert (key == NULL && extension == NULL);
  g_free (key);
  g_free (extension);
}

static gboolean
want_cb (const gchar * name, guint64 size, gpointer user_data)
{
  Fuzz *f = user_data;
  guint64 offset = gst_spdl_tar_parser_get_offset (f->parser);
  GError *error = NULL;

  /* the header block just read: the index's check must agree with it */
  g_assert (offset >= BLOCK && offset <= f->tar_len);
  if (!gst_spdl_tar_check_header (f->tar + offset - BLOCK, size, &error))
    g_error ("a header the parser took for a file fails the check: %s",
        error->message);
  split (name);
  if (size > MAX_WANTED)
    return FALSE;
  return f->want_all || g_str_has_suffix (name, ".jpg") ||
      g_str_has_suffix (name, ".cls");
}

static gboolean
member_cb (const gchar * name, guint64 size, GstBuffer * data,
    gpointer user_data)
{
  Fuzz *f = user_data;

  split (name);
  if (data) {
    g_assert (gst_buffer_get_size (data) == size);
    if (f->kept)
      g_ptr_array_add (f->kept, data);
    else
      gst_buffer_unref (data);
  }
  return f->stop_after == 0 || ++f->members < f->stop_after;
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  static gboolean initialized = FALSE;
  Fuzz f = { NULL, };
  GError *error = NULL;
  gsize pos = 0, chunk, i;
  guint skip_mode, round = 0;
  gboolean varying, running = TRUE;

  if (size < 2)
    return 0;
  if (!initialized) {
    /* GstBuffers need the core's types */
    gst_init (NULL, NULL);
    /* GLib's warnings about an input are bugs too: fatal */
    g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_WARNING |
        G_LOG_LEVEL_CRITICAL);
    initialized = TRUE;
  }
  chunk = chunks[data[0] & 0x0f];
  skip_mode = (data[0] >> 4) & 3;
  varying = (data[0] >> 6) & 1;
  f.want_all = data[1] & 1;
  f.stop_after = (data[1] >> 1) & 7;
  if (data[1] & 0x10)
    f.kept = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  f.tar = data + 2;
  f.tar_len = size - 2;

  /* every block, as an index's member would be checked against it */
  for (i = 0; i + BLOCK <= f.tar_len; i += BLOCK) {
    gst_spdl_tar_check_header (f.tar + i, 0, &error);
    g_clear_error (&error);
  }

  f.parser = gst_spdl_tar_parser_new (want_cb, member_cb, &f);
  while (running && pos < f.tar_len) {
    guint64 skippable = gst_spdl_tar_parser_skippable (f.parser);
    gsize n;

    round++;
    if (skippable && (skip_mode == 1 || skip_mode == 2 ||
            (skip_mode == 3 && round % 2))) {
      n = (gsize) MIN (skippable, (guint64) (f.tar_len - pos));
      if (skip_mode == 2)
        n = MAX (n / 2, 1);
      gst_spdl_tar_parser_skip (f.parser, n);
      pos += n;
      /* skipping ends a member (callbacks): the parser may stop there */
      running = !gst_spdl_tar_parser_at_end (f.parser);
      continue;
    }
    n = MIN (chunk, f.tar_len - pos);
    if (varying)
      chunk = chunks[f.tar[pos] & 0x0f];
    running = gst_spdl_tar_parser_feed (f.parser, f.tar + pos, n, &error);
    if (running)
      g_assert (gst_spdl_tar_parser_get_offset (f.parser) == pos + n);
    else
      g_assert (gst_spdl_tar_parser_get_offset (f.parser) <= pos + n);
    pos += n;
  }
  if (error == NULL)
    gst_spdl_tar_parser_finish (f.parser, &error);
  g_clear_error (&error);
  gst_spdl_tar_parser_free (f.parser);
  if (f.kept)
    g_ptr_array_unref (f.kept);
  return 0;
}
