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
