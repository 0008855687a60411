/* GStreamer SPDL: JSON checks for sample fields
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_JSON_H__
#define __GST_SPDL_JSON_H__

#include <glib.h>

G_BEGIN_DECLS

/* How deep arrays and objects may nest: Python's json.loads raises
 * RecursionError not far above this. */
#define GST_SPDL_JSON_MAX_DEPTH 512

/* Whether the @len bytes at @text are one JSON value as Python's
 * json.loads() takes it (RFC 8259, plus NaN, Infinity and -Infinity;
 * white space around it), nested at most GST_SPDL_JSON_MAX_DEPTH deep.
 * Never reads past @len, never recurses. FALSE with @why (newly
 * allocated, may be NULL) saying what and at which byte. */
gboolean gst_spdl_json_validate (const gchar * text, gsize len,
    gchar ** why);

/* In the JSON text @text (@len bytes, which gst_spdl_json_validate()
 * takes), the value at @path: object keys, or decimal indices into
 * arrays. TRUE with [@value, @value + @value_len) the value's text, or
 * @value NULL where the path is absent (a missing key, an index past the
 * end, a JSON null on the way or at the end). FALSE with @why (newly
 * allocated) where the text is not JSON or the path goes into a value that
 * is no object or array. The last of a repeated key counts, as in
 * Python's json module. Never reads past @len, never recurses. */
gboolean gst_spdl_json_find (const gchar * text, gsize len,
    const gchar * const *path, const gchar ** value, gsize * value_len,
    gchar ** why);

/* The JSON string token [@token, @token + @len) (quotes included; valid
 * JSON) unescaped to UTF-8: NULL with @why where it holds \u0000 or a
 * lone surrogate (neither is in a UTF-8 string without NUL). */
gchar *gst_spdl_json_string_value (const gchar * token, gsize len,
    gchar ** why);

/* In valid JSON text: the end of the value starting at @p (containers
 * by a count of open brackets, no recursion), never past @end. */
const gchar *gst_spdl_json_value_end (const gchar * p, const gchar * end);
/* In valid JSON text: appends the string token at @p (its opening quote)
 * unescaped to @out, a \u0000 as a NUL byte and a lone surrogate as its
 * 3 bytes (not UTF-8, as Python's str cannot encode it); returns what
 * follows its closing quote. */
const gchar *gst_spdl_json_append_string (const gchar * p, GString * out);

/* The members of an object or the items of an array, one at a time, in
 * text gst_spdl_json_validate() took: no copy, no recursion. */
typedef struct
{
  const gchar *p, *end;
  gboolean object;
} GstSpdlJsonIter;

/* Starts at @value (its first byte; @end the text's end): FALSE, and an
 * iterator that gives nothing, where it is no object or array. */
gboolean gst_spdl_json_iter_init (GstSpdlJsonIter * iter,
    const gchar * value, const gchar * end);
/* The next member or item: [@value, @value_end) its text, @key its key's
 * string token (quotes included, @key_len bytes; NULL in an array). FALSE
 * after the last. */
gboolean gst_spdl_json_iter_next (GstSpdlJsonIter * iter,
    const gchar ** key, gsize * key_len, const gchar ** value,
    const gchar ** value_end);
/* Whether the string token [@token, @token + @len) unescapes to @name */
gboolean gst_spdl_json_key_equals (const gchar * token, gsize len,
    const gchar * name);
/* The JSON number token [@p, @p + @len) as an int64: integers, and
 * numbers without a fraction in range (json.loads' 3.0, 1e3); FALSE for
 * anything else (other tokens too). */
gboolean gst_spdl_json_number_to_int (const gchar * p, gsize len,
    gint64 * out);

/* "a string", "an object" ... for the value whose text starts with @c */
const gchar *gst_spdl_json_type_name (gchar c);

G_END_DECLS

#endif /* __GST_SPDL_JSON_H__ */
