/* GStreamer SPDL: JSON checks for sample fields
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

#include "gstspdljson.h"

#include <math.h>
#include <string.h>

typedef struct
{
  const gchar *p, *end, *start;
  gchar **why;
} Scanner;

static gboolean
fail (Scanner * s, const gchar * what)
{
  if (s->why)
    *s->why = g_strdup_printf ("%s at byte %" G_GSIZE_FORMAT, what,
        (gsize) (s->p - s->start));
  return FALSE;
}

static void
skip_space (Scanner * s)
{
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n'
          || *s->p == '\r'))
    s->p++;
}

static gboolean
literal (Scanner * s, const gchar * word)
{
  gsize n = strlen (word);

  if ((gsize) (s->end - s->p) < n || memcmp (s->p, word, n) != 0)
    return FALSE;
  s->p += n;
  return TRUE;
}

static gboolean
scan_string (Scanner * s)
{
  s->p++;                       /* the opening quote */
  while (s->p < s->end) {
    guchar c = *s->p;

    if (c == '"') {
      s->p++;
      return TRUE;
    }
    if (c < 0x20)
      return fail (s, "a control character in a string");
    if (c == '\\') {
      s->p++;
      if (s->p >= s->end)
        break;
      if (*s->p == 'u') {
        gint i;

        for (i = 1; i <= 4; i++)
          if (s->p + i >= s->end || !g_ascii_isxdigit (s->p[i]))
            return fail (s, "a bad \\u escape");
        s->p += 5;
        continue;
      }
      if (!strchr ("\"\\/bfnrt", *s->p) || *s->p == '\0')
        return fail (s, "a bad escape");
    }
    s->p++;
  }
  return fail (s, "an unterminated string");
}

static gboolean
scan_number (Scanner * s)
{
  const gchar *digits;

  if (*s->p == '-') {
    s->p++;
    if (literal (s, "Infinity"))
      return TRUE;
  }
  if (s->p >= s->end || !g_ascii_isdigit (*s->p))
    return fail (s, "a bad number");
  if (*s->p == '0')
    s->p++;
  else
    while (s->p < s->end && g_ascii_isdigit (*s->p))
      s->p++;
  if (s->p < s->end && *s->p == '.') {
    digits = ++s->p;
    while (s->p < s->end && g_ascii_isdigit (*s->p))
      s->p++;
    if (s->p == digits)
      return fail (s, "a number without digits after its point");
  }
  if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
    s->p++;
    if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
      s->p++;
    digits = s->p;
    while (s->p < s->end && g_ascii_isdigit (*s->p))
      s->p++;
    if (s->p == digits)
      return fail (s, "a number without exponent digits");
  }
  return TRUE;
}

/* An object's key and its ':' */
static gboolean
scan_key (Scanner * s)
{
  if (s->p >= s->end || *s->p != '"')
    return fail (s, "an object key that is no string");
  if (!scan_string (s))
    return FALSE;
  skip_space (s);
  if (s->p >= s->end || *s->p != ':')
    return fail (s, "no ':' after an object key");
  s->p++;
  skip_space (s);
  return TRUE;
}

gboolean
gst_spdl_json_validate (const gchar * text, gsize len, gchar ** why)
{
  /* one char per open container: '[' or '{' (no recursion) */
  gchar stack[GST_SPDL_JSON_MAX_DEPTH];
  guint depth = 0;
  Scanner s = { text, text + len, text, why };

  if (why)
    *why = NULL;
  skip_space (&s);
  for (;;) {
    /* a value */
    if (s.p >= s.end)
      return fail (&s, "the text ends where a value should be");
    switch (*s.p) {
      case '[':
      case '{':
        if (depth == GST_SPDL_JSON_MAX_DEPTH)
          return fail (&s, "nesting deeper than 512 levels");
        stack[depth++] = *s.p++;
        skip_space (&s);
        if (s.p < s.end && *s.p == (stack[depth - 1] == '[' ? ']' : '}')) {
          s.p++;
          depth--;
          break;
        }
        if (stack[depth - 1] == '{' && !scan_key (&s))
          return FALSE;
        continue;
      case '"':
        if (!scan_string (&s))
          return FALSE;
        break;
      case 't':
        if (!literal (&s, "true"))
          return fail (&s, "an unknown word");
        break;
      case 'f':
        if (!literal (&s, "false"))
          return fail (&s, "an unknown word");
        break;
      case 'n':
        if (!literal (&s, "null"))
          return fail (&s, "an unknown word");
        break;
      case 'N':
        if (!literal (&s, "NaN"))
          return fail (&s, "an unknown word");
        break;
      case 'I':
        if (!literal (&s, "Infinity"))
          return fail (&s, "an unknown word");
        break;
      default:
        if (!scan_number (&s))
          return FALSE;
        break;
    }
    /* after a value: close containers, or the next item */
    for (;;) {
      skip_space (&s);
      if (depth == 0) {
        if (s.p != s.end)
          return fail (&s, "more text after the value");
        return TRUE;
      }
      if (s.p >= s.end)
        return fail (&s, "the text ends inside an array or object");
      if (*s.p == (stack[depth - 1] == '[' ? ']' : '}')) {
        s.p++;
        depth--;
        continue;
      }
      if (*s.p != ',')
        return fail (&s, "no ',' between items");
      s.p++;
      skip_space (&s);
      if (stack[depth - 1] == '{' && !scan_key (&s))
        return FALSE;
      break;
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Walking a path in text the validator took                               */

static gboolean
is_space (gchar c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const gchar *
skip_spaces (const gchar * p, const gchar * end)
{
  while (p < end && is_space (*p))
    p++;
  return p;
}

/* The end of the string token starting (at its quote) at @p */
static const gchar *
string_end (const gchar * p, const gchar * end)
{
  for (p++; p < end && *p != '"'; p++)
    if (*p == '\\')
      p++;
  return p < end ? p + 1 : end;
}

const gchar *
gst_spdl_json_value_end (const gchar * p, const gchar * end)
{
  guint depth = 0;

  while (p < end) {
    switch (*p) {
      case '"':
        p = string_end (p, end);
        if (depth == 0)
          return p;
        continue;
      case '[':
      case '{':
        depth++;
        break;
      case ']':
      case '}':
        if (depth == 0)
          return p;
        if (--depth == 0)
          return p + 1;
        break;
      case ',':
        if (depth == 0)
          return p;
        break;
      default:
        if (depth == 0 && is_space (*p))
          return p;
        break;
    }
    p++;
  }
  return p;
}

gboolean
gst_spdl_json_key_equals (const gchar * token, gsize len, const gchar * name)
{
  gchar *key;
  gboolean equal;

  /* most keys have no escape: compared as written */
  if (memchr (token, '\\', len) == NULL)
    return len - 2 == strlen (name) && memcmp (token + 1, name, len - 2) == 0;
  key = gst_spdl_json_string_value (token, len, NULL);
  equal = key && strcmp (key, name) == 0;
  g_free (key);
  return equal;
}

gboolean
gst_spdl_json_iter_init (GstSpdlJsonIter * iter, const gchar * value,
    const gchar * end)
{
  iter->object = value < end && *value == '{';
  iter->end = end;
  if (value >= end || (*value != '{' && *value != '[')) {
    iter->p = end;
    return FALSE;
  }
  iter->p = skip_spaces (value + 1, end);
  return TRUE;
}

gboolean
gst_spdl_json_iter_next (GstSpdlJsonIter * iter, const gchar ** key,
    gsize * key_len, const gchar ** value, const gchar ** value_end)
{
  const gchar *p = iter->p, *end = iter->end;

  if (p >= end || *p == '}' || *p == ']')
    return FALSE;
  if (iter->object) {
    const gchar *key_end = string_end (p, end);

    *key = p;
    *key_len = key_end - p;
    p = skip_spaces (key_end, end);
    p = skip_spaces (p + 1, end);       /* the ':' */
  } else {
    *key = NULL;
    *key_len = 0;
  }
  *value = p;
  *value_end = gst_spdl_json_value_end (p, end);
  p = skip_spaces (*value_end, end);
  if (p < end && *p == ',')
    p = skip_spaces (p + 1, end);
  iter->p = p;
  return TRUE;
}

gboolean
gst_spdl_json_number_to_int (const gchar * p, gsize len, gint64 * out)
{
  gchar buf[64];
  gdouble d;

  if (len == 0 || len >= sizeof (buf) || (*p != '-' && !g_ascii_isdigit (*p)))
    return FALSE;
  memcpy (buf, p, len);
  buf[len] = '\0';
  if (strpbrk (buf, ".eE") == NULL)
    return g_ascii_string_to_signed (buf, 10, G_MININT64, G_MAXINT64, out,
        NULL);
  d = g_ascii_strtod (buf, NULL);
  /* 2^63 is the first double past int64's range */
  if (!isfinite (d) || d != floor (d) || d < -9223372036854775808.0
      || d >= 9223372036854775808.0)
    return FALSE;
  *out = (gint64) d;
  return TRUE;
}

const gchar *
gst_spdl_json_type_name (gchar c)
{
  switch (c) {
    case '{':
      return "an object";
    case '[':
      return "an array";
    case 'n':
      return "null";
    case '"':
      return "a string";
    case 't':
    case 'f':
      return "a boolean";
    default:
      return "a number";
  }
}

gboolean
gst_spdl_json_find (const gchar * text, gsize len,
    const gchar * const *path, const gchar ** value, gsize * value_len,
    gchar ** why)
{
  const gchar *end = text + len, *p, *found = NULL, *found_end = NULL;
  const gchar *key, *v, *v_end;
  gsize key_len;
  GstSpdlJsonIter iter;
  guint i;

  *value = NULL;
  *value_len = 0;
  if (!gst_spdl_json_validate (text, len, why)) {
    if (why) {
      gchar *what = *why;

      *why = g_strconcat ("not JSON: ", what, NULL);
      g_free (what);
    }
    return FALSE;
  }
  p = skip_spaces (text, end);
  for (i = 0; path[i]; i++) {
    guint64 wanted = 0, index = 0;
    gboolean object = *p == '{';

    if (*p == 'n')
      return TRUE;              /* null: absent */
    if (*p != '{' && *p != '[') {
      if (why)
        *why = g_strdup_printf ("\"%s\" goes into %s, not an object or "
            "array", path[i], gst_spdl_json_type_name (*p));
      return FALSE;
    }
    if (!object && path[i][strspn (path[i], "0123456789")] != '\0') {
      if (why)
        *why = g_strdup_printf ("\"%s\" is no index into an array", path[i]);
      return FALSE;
    }
    /* an index past G_MAXUINT64 is past the end */
    if (!object && !g_ascii_string_to_unsigned (path[i], 10, 0, G_MAXUINT64,
            &wanted, NULL))
      wanted = G_MAXUINT64;
    found = NULL;
    gst_spdl_json_iter_init (&iter, p, end);
    while (gst_spdl_json_iter_next (&iter, &key, &key_len, &v, &v_end)) {
      gboolean match = object ? gst_spdl_json_key_equals (key, key_len,
          path[i]) : index++ == wanted;

      if (match) {
        found = v;
        found_end = v_end;
        if (!object)
          break;
      }
    }
    if (found == NULL)
      return TRUE;
    p = found;
  }
  if (*p == 'n')
    return TRUE;
  *value = p;
  *value_len = (path[0] ? found_end : gst_spdl_json_value_end (p, end)) - p;
  return TRUE;
}

static guint32
hex4 (const gchar * p)
{
  guint32 v = 0;
  gint i;

  for (i = 0; i < 4; i++)
    v = v * 16 + g_ascii_xdigit_value (p[i]);
  return v;
}

static void
append_utf8 (GString * out, guint32 c)
{
  gchar buf[6];

  /* lone surrogates kept as their 3 bytes: not UTF-8, as Python's str
   * cannot encode them either */
  if (c >= 0xD800 && c <= 0xDFFF) {
    buf[0] = (gchar) (0xE0 | (c >> 12));
    buf[1] = (gchar) (0x80 | ((c >> 6) & 0x3F));
    buf[2] = (gchar) (0x80 | (c & 0x3F));
    g_string_append_len (out, buf, 3);
    return;
  }
  g_string_append_len (out, buf, g_unichar_to_utf8 (c, buf));
}

const gchar *
gst_spdl_json_append_string (const gchar * p, GString * out)
{
  p++;
  while (*p != '"') {
    if (*p != '\\') {
      g_string_append_c (out, *p++);
      continue;
    }
    p++;
    switch (*p) {
      case 'b':
        g_string_append_c (out, '\b');
        break;
      case 'f':
        g_string_append_c (out, '\f');
        break;
      case 'n':
        g_string_append_c (out, '\n');
        break;
      case 'r':
        g_string_append_c (out, '\r');
        break;
      case 't':
        g_string_append_c (out, '\t');
        break;
      case 'u':{
        guint32 c = hex4 (p + 1);

        p += 4;
        if (c >= 0xD800 && c < 0xDC00 && p[1] == '\\' && p[2] == 'u') {
          guint32 low = hex4 (p + 3);

          if (low >= 0xDC00 && low <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
            p += 6;
          }
        }
        append_utf8 (out, c);
        break;
      }
      default:                 /* " \ / */
        g_string_append_c (out, *p);
        break;
    }
    p++;
  }
  return p + 1;
}

gchar *
gst_spdl_json_string_value (const gchar * token, gsize len, gchar ** why)
{
  GString *out = g_string_sized_new (len);

  gst_spdl_json_append_string (token, out);
  if (memchr (out->str, '\0', out->len)) {
    if (why)
      *why = g_strdup ("a string holds \\u0000 (strings hold no NUL)");
  } else if (!g_utf8_validate_len (out->str, out->len, NULL)) {
    if (why)
      *why = g_strdup ("a string holds a lone surrogate (\\ud800 to "
          "\\udfff), which is not UTF-8");
  } else {
    return g_string_free (out, FALSE);
  }
  g_string_free (out, TRUE);
  return NULL;
}
