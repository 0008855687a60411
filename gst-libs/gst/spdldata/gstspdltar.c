/* GStreamer SPDL: streaming tar parser
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

#include "gstspdltar.h"
#include "gstspdlerrors.h"

#include <string.h>

#define BLOCK 512
/* GNU long names and PAX records are metadata: bounded so a corrupt size
 * field cannot make the parser allocate gigabytes */
#define MAX_META_SIZE (1024 * 1024)

typedef enum
{
  STATE_HEADER,
  STATE_DATA,
  STATE_PADDING,
  STATE_END,
  STATE_FAILED,
} ParserState;

typedef enum
{
  MEMBER_FILE,                  /* a regular file */
  MEMBER_LONG_NAME,             /* GNU 'L': the next member's name */
  MEMBER_PAX,                   /* PAX 'x': records for the next member */
  MEMBER_OTHER,                 /* folders, links, global headers: skipped */
} MemberKind;

struct _GstSpdlTarParser
{
  GstSpdlTarWantFunc want;
  GstSpdlTarMemberFunc member;
  gpointer user_data;

  ParserState state;
  guint8 header[BLOCK];
  gsize header_fill;
  guint zero_blocks;
  guint64 offset;

  MemberKind kind;
  gchar *name;                  /* of the member being read */
  gchar *next_name;             /* from a GNU long name or a PAX path */
  guint64 size;
  guint64 remaining;            /* data bytes left of the member */
  guint padding;                /* bytes left to the block boundary */
  GByteArray *meta;             /* long name or PAX records */
  GstBuffer *buffer;            /* a wanted file's data */
  GstMapInfo map;
  gboolean collecting;
};

G_DEFINE_QUARK (gst-spdl-tar-error-quark, gst_spdl_tar_error);

GstSpdlTarParser *
gst_spdl_tar_parser_new (GstSpdlTarWantFunc want, GstSpdlTarMemberFunc member,
    gpointer user_data)
{
  GstSpdlTarParser *parser = g_new0 (GstSpdlTarParser, 1);

  parser->want = want;
  parser->member = member;
  parser->user_data = user_data;
  parser->meta = g_byte_array_new ();
  return parser;
}

static void
drop_member_data (GstSpdlTarParser * parser)
{
  if (parser->buffer) {
    gst_buffer_unmap (parser->buffer, &parser->map);
    gst_buffer_unref (parser->buffer);
    parser->buffer = NULL;
  }
  parser->collecting = FALSE;
}

void
gst_spdl_tar_parser_free (GstSpdlTarParser * parser)
{
  if (parser == NULL)
    return;
  drop_member_data (parser);
  g_byte_array_unref (parser->meta);
  g_free (parser->name);
  g_free (parser->next_name);
  g_free (parser);
}

guint64
gst_spdl_tar_parser_get_offset (const GstSpdlTarParser * parser)
{
  return parser->offset;
}

gboolean
gst_spdl_tar_parser_at_end (const GstSpdlTarParser * parser)
{
  return parser->state == STATE_END;
}

static gboolean
fail (GstSpdlTarParser * parser, GError ** error, GstSpdlTarError code,
    const gchar * format, ...) G_GNUC_PRINTF (4, 5);

static gboolean
fail (GstSpdlTarParser * parser, GError ** error, GstSpdlTarError code,
    const gchar * format, ...)
{
  va_list args;

  va_start (args, format);
  if (error)
    *error = g_error_new_valist (GST_SPDL_TAR_ERROR, code, format, args);
  va_end (args);
  parser->state = STATE_FAILED;
  drop_member_data (parser);
  return FALSE;
}

/* An octal field (NUL or space terminated), or GNU's base-256 form for
 * sizes of 8 GiB and more (high bit of the first byte set). */
static gboolean
parse_number (const guint8 * field, gsize len, guint64 * value)
{
  guint64 v = 0;
  gsize i = 0;

  if (field[0] & 0x80) {
    if (field[0] != 0x80)
      return FALSE;             /* negative */
    for (i = 1; i < len; i++) {
      if (v >> 56)
        return FALSE;
      v = (v << 8) | field[i];
    }
    *value = v;
    return TRUE;
  }
  while (i < len && field[i] == ' ')
    i++;
  for (; i < len && field[i] >= '0' && field[i] <= '7'; i++) {
    if (v >> 61)
      return FALSE;
    v = (v << 3) | (field[i] - '0');
  }
  for (; i < len; i++)
    if (field[i] != ' ' && field[i] != '\0')
      return FALSE;
  *value = v;
  return TRUE;
}

static gboolean
checksum_ok (const guint8 * header)
{
  guint64 stored;
  guint unsigned_sum = 0;
  gint signed_sum = 0;
  guint i;

  if (!parse_number (header + 148, 8, &stored))
    return FALSE;
  for (i = 0; i < BLOCK; i++) {
    guint8 byte = (i >= 148 && i < 156) ? ' ' : header[i];
    unsigned_sum += byte;
    signed_sum += (gint8) byte;
  }
  /* old tars summed signed chars */
  return stored == unsigned_sum || (gint64) stored == signed_sum;
}

static gchar *
field_string (const guint8 * field, gsize len)
{
  return g_strndup ((const gchar *) field, strnlen ((const gchar *) field,
          len));
}

/* The member's name: a pending long name, else ustar's prefix/name. */
static gchar *
header_name (GstSpdlTarParser * parser)
{
  const guint8 *h = parser->header;
  gchar *name, *prefix;

  if (parser->next_name)
    return g_steal_pointer (&parser->next_name);
  name = field_string (h, 100);
  if (memcmp (h + 257, "ustar", 5) != 0 || h[345] == '\0')
    return name;
  prefix = field_string (h + 345, 155);
  {
    gchar *full = g_strconcat (prefix, "/", name, NULL);
    g_free (prefix);
    g_free (name);
    return full;
  }
}

/* What a body that is no tar archive holds, from its first @len bytes:
 * a server's error page sent with status 200, a compressed shard. */
static gchar *
describe_start (const guint8 * data, gsize len)
{
  GString *shown;
  const gchar *kind = NULL;
  gsize i, n = MIN (len, 32);

  if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b)
    return g_strdup ("a gzip stream (a .tar.gz?): shards are read as "
        "uncompressed tar, their members by byte range; gunzip them");
  if (len >= 3 && data[0] == 'B' && data[1] == 'Z' && data[2] == 'h')
    return g_strdup ("a bzip2 stream: shards are read as uncompressed tar");
  if (len >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f &&
      data[3] == 0xfd)
    return g_strdup ("a zstd stream: shards are read as uncompressed tar");
  if (len >= 6 && memcmp (data, "\xfd" "7zXZ", 6) == 0)
    return g_strdup ("an xz stream: shards are read as uncompressed tar");
  shown = g_string_new (NULL);
  for (i = 0; i < len && g_ascii_isspace (data[i]); i++);
  if (i < len && data[i] == '<')
    kind = g_ascii_strncasecmp ((const gchar *) data + i, "<?xml", MIN (5,
            len - i)) == 0 ? "XML" : "an HTML page";
  else if (i < len && (data[i] == '{' || data[i] == '['))
    kind = "JSON";
  for (i = 0; i < n; i++)
    if (g_ascii_isprint (data[i]))
      g_string_append_c (shown, data[i]);
    else
      g_string_append_printf (shown, "\\x%02x", data[i]);
  {
    gchar *text = g_string_free (shown, FALSE);
    gchar *what = g_strdup_printf ("%s%s\"%s\"%s", kind ? kind : "bytes",
        kind ? ", " : " ", text, len > n ? "..." : "");

    g_free (text);
    return what;
  }
}

/* The first header is no tar header: what came instead. */
static gboolean
fail_not_tar (GstSpdlTarParser * parser, GError ** error, gsize len)
{
  gchar *what = describe_start (parser->header, len);
  gboolean ret = fail (parser, error, GST_SPDL_TAR_ERROR_CORRUPT,
      "not a tar archive: it starts with %s", what);

  g_free (what);
  return ret;
}

static gboolean
start_member (GstSpdlTarParser * parser, GError ** error)
{
  const guint8 *h = parser->header;
  guint64 size;
  guint8 type = h[156];

  if (!checksum_ok (h) && parser->offset == BLOCK)
    return fail_not_tar (parser, error, BLOCK);
  if (!checksum_ok (h))
    return fail (parser, error, GST_SPDL_TAR_ERROR_CORRUPT,
        "tar header at offset %" G_GUINT64_FORMAT " has a bad checksum",
        parser->offset - BLOCK);
  if (!parse_number (h + 124, 12, &size))
    return fail (parser, error, GST_SPDL_TAR_ERROR_CORRUPT,
        "tar header at offset %" G_GUINT64_FORMAT " has a bad size field",
        parser->offset - BLOCK);

  parser->size = parser->remaining = size;
  parser->padding = (BLOCK - size % BLOCK) % BLOCK;
  g_byte_array_set_size (parser->meta, 0);
  switch (type) {
    case '0':
    case '\0':
    case '7':
      parser->kind = MEMBER_FILE;
      g_free (parser->name);
      parser->name = header_name (parser);
      parser->collecting = parser->want (parser->name, size,
          parser->user_data);
      if (parser->collecting) {
        parser->buffer = gst_spdl_buffer_try_new (size);
        if (parser->buffer == NULL ||
            !gst_buffer_map (parser->buffer, &parser->map, GST_MAP_WRITE)) {
          g_clear_pointer (&parser->buffer, gst_buffer_unref);
          parser->collecting = FALSE;
        }
      }
      break;
    case 'L':
    case 'x':
      if (size > MAX_META_SIZE)
        return fail (parser, error, GST_SPDL_TAR_ERROR_CORRUPT,
            "tar %s record at offset %" G_GUINT64_FORMAT " is %"
            G_GUINT64_FORMAT " bytes long", type == 'L' ? "long name" : "PAX",
            parser->offset - BLOCK, size);
      parser->kind = type == 'L' ? MEMBER_LONG_NAME : MEMBER_PAX;
      break;
    default:
      /* a name for a member that is not a file applies to nothing else */
      g_clear_pointer (&parser->next_name, g_free);
      parser->kind = MEMBER_OTHER;
      break;
  }
  parser->state = STATE_DATA;
  return TRUE;
}

/* "LEN key=value\n" records: the path one names the next member. */
static gboolean
parse_pax (GstSpdlTarParser * parser, GError ** error)
{
  const gchar *p = (const gchar *) parser->meta->data;
  const gchar *end = p + parser->meta->len;

  while (p < end && *p != '\0') {
    guint64 len = 0;
    const gchar *q = p, *eq;

    while (q < end && g_ascii_isdigit (*q) && len < (guint64) (end - p))
      len = len * 10 + (*q++ - '0');
    if (q >= end || *q != ' ' || len == 0 || len > (guint64) (end - p) ||
        p[len - 1] != '\n')
      return fail (parser, error, GST_SPDL_TAR_ERROR_CORRUPT,
          "malformed PAX record before offset %" G_GUINT64_FORMAT,
          parser->offset);
    q++;
    eq = memchr (q, '=', p + len - 1 - q);
    if (eq && eq - q == 4 && memcmp (q, "path", 4) == 0) {
      g_free (parser->next_name);
      parser->next_name = g_strndup (eq + 1, p + len - 1 - (eq + 1));
    }
    p += len;
  }
  return TRUE;
}

static gboolean
end_member (GstSpdlTarParser * parser, GError ** error)
{
  GstBuffer *data;

  switch (parser->kind) {
    case MEMBER_FILE:
      data = parser->buffer;
      if (data) {
        gst_buffer_unmap (data, &parser->map);
        parser->buffer = NULL;
      }
      parser->collecting = FALSE;
      if (!parser->member (parser->name, parser->size, data,
              parser->user_data)) {
        parser->state = STATE_END;
        return FALSE;
      }
      break;
    case MEMBER_LONG_NAME:
      g_free (parser->next_name);
      parser->next_name = g_strndup ((const gchar *) parser->meta->data,
          parser->meta->len);
      break;
    case MEMBER_PAX:
      if (!parse_pax (parser, error))
        return FALSE;
      break;
    case MEMBER_OTHER:
      break;
  }
  parser->state = parser->padding ? STATE_PADDING : STATE_HEADER;
  return TRUE;
}

static gboolean
is_zero_block (const guint8 * block)
{
  guint i;

  for (i = 0; i < BLOCK; i++)
    if (block[i])
      return FALSE;
  return TRUE;
}

/* Consumes member data from @data; returns the bytes used. */
static gsize
consume_data (GstSpdlTarParser * parser, const guint8 * data, gsize len)
{
  gsize n = (gsize) MIN ((guint64) len, parser->remaining);

  if (parser->kind == MEMBER_FILE && parser->collecting)
    memcpy (parser->map.data + (parser->size - parser->remaining), data, n);
  else if (parser->kind == MEMBER_LONG_NAME || parser->kind == MEMBER_PAX)
    g_byte_array_append (parser->meta, data, n);
  parser->remaining -= n;
  return n;
}

gboolean
gst_spdl_tar_parser_feed (GstSpdlTarParser * parser, const guint8 * data,
    gsize len, GError ** error)
{
  while (len > 0 || (parser->state == STATE_DATA && parser->remaining == 0)) {
    gsize n = 0;

    switch (parser->state) {
      case STATE_HEADER:
        n = MIN (len, BLOCK - parser->header_fill);
        g_assert (data != NULL);
        memcpy (parser->header + parser->header_fill, data, n);
        parser->header_fill += n;
        parser->offset += n;
        data += n;
        len -= n;
        if (parser->header_fill < BLOCK)
          continue;
        parser->header_fill = 0;
        if (is_zero_block (parser->header)) {
          if (++parser->zero_blocks == 2)
            parser->state = STATE_END;
          continue;
        }
        parser->zero_blocks = 0;
        if (!start_member (parser, error))
          return FALSE;
        continue;
      case STATE_DATA:
        if (parser->remaining > 0) {
          n = consume_data (parser, data, len);
          parser->offset += n;
          data = data ? data + n : NULL;
          len -= n;
        }
        if (parser->remaining == 0 && !end_member (parser, error))
          return FALSE;
        continue;
      case STATE_PADDING:
        n = MIN (len, parser->padding);
        parser->padding -= n;
        parser->offset += n;
        data = data ? data + n : NULL;
        len -= n;
        if (parser->padding == 0)
          parser->state = STATE_HEADER;
        continue;
      case STATE_END:
      case STATE_FAILED:
        return FALSE;
    }
  }
  return parser->state != STATE_END && parser->state != STATE_FAILED;
}

gboolean
gst_spdl_tar_parser_finish (GstSpdlTarParser * parser, GError ** error)
{
  if (parser->state == STATE_END || parser->state == STATE_FAILED)
    return parser->state == STATE_END;
  /* archives cut right after a member (no end blocks) are complete */
  if (parser->state == STATE_HEADER && parser->header_fill == 0)
    return TRUE;
  if (parser->state == STATE_HEADER && parser->offset == parser->header_fill)
    return fail_not_tar (parser, error, parser->header_fill);
  return fail (parser, error, GST_SPDL_TAR_ERROR_TRUNCATED,
      "the archive ends inside %s%s%s at offset %" G_GUINT64_FORMAT,
      parser->state == STATE_HEADER ? "a header" : "member \"",
      parser->state == STATE_HEADER ? "" : parser->name ? parser->name : "",
      parser->state == STATE_HEADER ? "" : "\"", parser->offset);
}

guint64
gst_spdl_tar_parser_skippable (const GstSpdlTarParser * parser)
{
  if (parser->state == STATE_PADDING)
    return parser->padding;
  if (parser->state != STATE_DATA || parser->remaining == 0 ||
      (parser->kind != MEMBER_OTHER && !(parser->kind == MEMBER_FILE &&
              !parser->collecting)))
    return 0;
  return parser->remaining + parser->padding;
}

void
gst_spdl_tar_parser_skip (GstSpdlTarParser * parser, guint64 len)
{
  g_return_if_fail (len <= gst_spdl_tar_parser_skippable (parser));

  /* nothing is copied from skipped bytes: only counted (see consume_data) */
  while (len > 0) {
    gsize n = (gsize) MIN (len, G_MAXSSIZE);
    if (!gst_spdl_tar_parser_feed (parser, NULL, n, NULL))
      return;
    len -= n;
  }
}

/* WebDataset's tar_file_iterator() passes over "__KEY__"-style names (its
 * meta_prefix/meta_suffix test and skip_meta r"__[^/]*__($|/)") */
static gboolean
is_meta_name (const gchar * name)
{
  const gchar *slash = strchr (name, '/');
  gsize first = slash ? (gsize) (slash - name) : strlen (name);

  if (slash == NULL && g_str_has_prefix (name, "__") &&
      g_str_has_suffix (name, "__"))
    return TRUE;
  return first >= 4 && strncmp (name, "__", 2) == 0 &&
      strncmp (name + first - 2, "__", 2) == 0;
}

gboolean
gst_spdl_tar_split_name (const gchar * name, gchar ** key, gchar ** extension)
{
  const gchar *base = strrchr (name, '/');
  const gchar *dot;

  *key = *extension = NULL;
  if (is_meta_name (name))
    return FALSE;
  base = base ? base + 1 : name;
  dot = strchr (base, '.');
  /* as base_plus_ext()'s regular expression: no dot in the base name, no
   * key */
  if (dot == NULL)
    return FALSE;
  if (dot == base) {
    /* ".x.jpg": the key is the folder with its slash ("d/"), when the
     * folder's own name has no dot (and there is a folder) */
    const gchar *folder = base - 1;

    if (base == name)
      return FALSE;
    while (folder > name && folder[-1] != '/')
      folder--;
    if (memchr (folder, '.', base - 1 - folder))
      return FALSE;
  }
  *key = g_strndup (name, dot - name);
  *extension = g_ascii_strdown (dot + 1, -1);
  return TRUE;
}

gboolean
gst_spdl_tar_check_header (const guint8 * header, guint64 size,
    GError ** error)
{
  guint64 stored;
  guint8 type = header[156];

  if (!checksum_ok (header) || !parse_number (header + 124, 12, &stored) ||
      (type != '0' && type != '\0' && type != '7')) {
    g_set_error (error, GST_SPDL_TAR_ERROR, GST_SPDL_TAR_ERROR_CORRUPT,
        "no regular file's tar header before the member's data");
    return FALSE;
  }
  if (stored != size) {
    g_set_error (error, GST_SPDL_TAR_ERROR, GST_SPDL_TAR_ERROR_CORRUPT,
        "the tar header gives %" G_GUINT64_FORMAT " bytes, the index %"
        G_GUINT64_FORMAT, stored, size);
    return FALSE;
  }
  return TRUE;
}
