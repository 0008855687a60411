/* GStreamer SPDL: COCO instances files (images and their annotations)
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

#include "gstspdlcoco.h"
#include "gstspdljson.h"

#include <stdlib.h>
#include <string.h>

static const gchar *const reason_names[GST_SPDL_COCO_N_REASONS] = {
  "unknown-image", "duplicate-image", "unknown-category", "bad-annotation",
  "bad-image",
};

const gchar *
gst_spdl_coco_reason_name (GstSpdlCocoReason reason)
{
  return reason < GST_SPDL_COCO_N_REASONS ? reason_names[reason] : "other";
}

/* An image while the file is walked: its id, where it came in the file
 * (the first of a repeated id is kept) and its name's offset. */
typedef struct
{
  gint64 id;
  guint64 order;
  guint64 name;
} Image;

/* An annotation delivered: its image (an index into the sorted images)
 * and its text in the file. */
typedef struct
{
  guint64 image;
  guint64 offset;
  guint64 len;
} Annotation;

typedef struct
{
  GstSpdlCoco *coco;
  const gchar *name;
  const gchar *text;
} Reader;

/* Up to 40 bytes of a value's text, for a message naming an item */
static gchar *
describe_value (const gchar * v, const gchar * v_end)
{
  gsize len = v_end - v;
  gchar *text = g_strndup (v, MIN (len, 40)), *s;

  for (s = text; *s; s++)
    if ((guchar) * s < 0x20 || (guchar) * s >= 0x7f)
      *s = '?';
  if (len > 40) {
    gchar *longer = g_strconcat (text, "...", NULL);
    g_free (text);
    return longer;
  }
  return text;
}

static void
count (Reader * r, GstSpdlCocoReason reason, const gchar * format, ...)
    G_GNUC_PRINTF (3, 4);

static void
count (Reader * r, GstSpdlCocoReason reason, const gchar * format, ...)
{
  va_list args;
  gchar *what;

  if (r->coco->counts[reason]++ >= GST_SPDL_COCO_WARNINGS_PER_REASON)
    return;
  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);
  g_ptr_array_add (r->coco->warnings, g_strdup_printf ("Annotations \"%s\": "
          "%s (reason %s)", r->name, what, reason_names[reason]));
  g_free (what);
}

static gboolean
fail (GError ** error, const gchar * name, const gchar * format, ...)
    G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError ** error, const gchar * name, const gchar * format, ...)
{
  va_list args;
  gchar *what;

  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
      "Could not read COCO annotations \"%s\": %s", name, what);
  g_free (what);
  return FALSE;
}

/* The members @keys (NULL-terminated) of the object at @object, in one
 * pass: @values[i] the text of the last one named @keys[i] (as Python's
 * json module takes a repeated key), NULL when absent. */
static void
members (const gchar * object, const gchar * end, const gchar * const *keys,
    const gchar ** values, const gchar ** value_ends)
{
  GstSpdlJsonIter iter;
  const gchar *k, *v, *v_end;
  gsize k_len;
  guint i;

  for (i = 0; keys[i]; i++)
    values[i] = value_ends[i] = NULL;
  gst_spdl_json_iter_init (&iter, object, end);
  while (gst_spdl_json_iter_next (&iter, &k, &k_len, &v, &v_end))
    for (i = 0; keys[i]; i++)
      if (gst_spdl_json_key_equals (k, k_len, keys[i])) {
        values[i] = v;
        value_ends[i] = v_end;
        break;
      }
}

static gboolean
member (const gchar * object, const gchar * end, const gchar * key,
    const gchar ** value, const gchar ** value_end)
{
  const gchar *const keys[] = { key, NULL };

  members (object, end, keys, value, value_end);
  return *value != NULL;
}

static gboolean
int_member (const gchar * object, const gchar * end, const gchar * key,
    gint64 * out)
{
  const gchar *v, *v_end;

  return member (object, end, key, &v, &v_end) &&
      gst_spdl_json_number_to_int (v, v_end - v, out);
}

static gint
compare_images (gconstpointer a, gconstpointer b)
{
  const Image *x = a, *y = b;

  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

static gint
compare_ids (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

static gboolean
read_images (Reader * r, const gchar * images, const gchar * end,
    GArray * list, GString * names)
{
  static const gchar *const keys[] = { "id", "file_name", NULL };
  GstSpdlJsonIter iter;
  const gchar *k, *v, *v_end, *f, *f_end, *found[2], *found_end[2];
  gsize k_len;
  guint64 order = 0;

  gst_spdl_json_iter_init (&iter, images, end);
  while (gst_spdl_json_iter_next (&iter, &k, &k_len, &v, &v_end)) {
    Image image = { 0, order++, names->len };
    gchar *file_name, *what;

    if (*v != '{') {
      what = describe_value (v, v_end);
      count (r, GST_SPDL_COCO_BAD_IMAGE, "image %" G_GUINT64_FORMAT " (%s) "
          "is %s, not an object", image.order, what,
          gst_spdl_json_type_name (*v));
      g_free (what);
      continue;
    }
    members (v, end, keys, found, found_end);
    if (found[0] == NULL || !gst_spdl_json_number_to_int (found[0],
            found_end[0] - found[0], &image.id)) {
      count (r, GST_SPDL_COCO_BAD_IMAGE, "image %" G_GUINT64_FORMAT " has "
          "no integer \"id\"", image.order);
      continue;
    }
    f = found[1];
    f_end = found_end[1];
    if (f == NULL || *f != '"') {
      count (r, GST_SPDL_COCO_BAD_IMAGE, "image id %" G_GINT64_FORMAT
          " has no \"file_name\" string", image.id);
      continue;
    }
    file_name = gst_spdl_json_string_value (f, f_end - f, NULL);
    if (file_name == NULL || *file_name == '\0') {
      count (r, GST_SPDL_COCO_BAD_IMAGE, "image id %" G_GINT64_FORMAT
          ": its \"file_name\" is empty, or holds \\u0000 or a lone "
          "surrogate", image.id);
      g_free (file_name);
      continue;
    }
    g_string_append_len (names, file_name, strlen (file_name) + 1);
    g_free (file_name);
    g_array_append_val (list, image);
  }
  return TRUE;
}

/* The categories' ids, sorted */
static GArray *
read_categories (const gchar * categories, const gchar * end)
{
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  GstSpdlJsonIter iter;
  const gchar *k, *v, *v_end;
  gsize k_len;
  gint64 id;

  gst_spdl_json_iter_init (&iter, categories, end);
  while (gst_spdl_json_iter_next (&iter, &k, &k_len, &v, &v_end))
    if (*v == '{' && int_member (v, end, "id", &id))
      g_array_append_val (ids, id);
  g_array_sort (ids, compare_ids);
  return ids;
}

static gboolean
has_id (GArray * ids, gint64 id)
{
  return ids->len > 0 && bsearch (&id, ids->data, ids->len, sizeof (gint64),
      compare_ids) != NULL;
}

/* "annotation id 7" or "annotation 12 (in file order, from 0)" for
 * messages */
static gchar *
name_annotation (const gchar * id, const gchar * id_end, guint64 order)
{
  gchar *text, *named;

  if (id == NULL)
    return g_strdup_printf ("annotation %" G_GUINT64_FORMAT " (in file "
        "order, from 0)", order);
  text = describe_value (id, id_end);
  named = g_strdup_printf ("annotation id %s", text);
  g_free (text);
  return named;
}

enum
{ ANN_IMAGE_ID, ANN_CATEGORY_ID, ANN_ID, N_ANN_KEYS };

static void
read_annotations (Reader * r, const gchar * annotations, const gchar * end,
    const Image * images, guint n_images, GArray * categories, GArray * out)
{
  static const gchar *const keys[] = { "image_id", "category_id", "id",
    NULL
  };
  GstSpdlJsonIter iter;
  const gchar *k, *v, *v_end, *found[N_ANN_KEYS], *found_end[N_ANN_KEYS];
  gsize k_len;
  guint64 order = 0;

  gst_spdl_json_iter_init (&iter, annotations, end);
  while (gst_spdl_json_iter_next (&iter, &k, &k_len, &v, &v_end)) {
    Annotation a = { 0, v - r->text, v_end - v };
    /* Image's first member is its id: compare_ids finds it */
    Image key = { 0, };
    const Image *image = NULL;
    gint64 category;
    gchar *named;

    order++;
    if (*v != '{') {
      named = name_annotation (NULL, NULL, order - 1);
      count (r, GST_SPDL_COCO_BAD_ANNOTATION, "%s is %s, not an object",
          named, gst_spdl_json_type_name (*v));
      g_free (named);
      continue;
    }
    members (v, end, keys, found, found_end);
    if (found[ANN_IMAGE_ID] == NULL ||
        !gst_spdl_json_number_to_int (found[ANN_IMAGE_ID],
            found_end[ANN_IMAGE_ID] - found[ANN_IMAGE_ID], &key.id)) {
      named = name_annotation (found[ANN_ID], found_end[ANN_ID], order - 1);
      count (r, GST_SPDL_COCO_BAD_ANNOTATION, "%s has no integer "
          "\"image_id\"", named);
      g_free (named);
      continue;
    }
    if (n_images > 0)
      image = bsearch (&key, images, n_images, sizeof (Image), compare_ids);
    if (image == NULL) {
      named = name_annotation (found[ANN_ID], found_end[ANN_ID], order - 1);
      count (r, GST_SPDL_COCO_UNKNOWN_IMAGE, "%s names image id %"
          G_GINT64_FORMAT ", which is not among the images", named, key.id);
      g_free (named);
      continue;
    }
    if (categories && (found[ANN_CATEGORY_ID] == NULL ||
            !gst_spdl_json_number_to_int (found[ANN_CATEGORY_ID],
                found_end[ANN_CATEGORY_ID] - found[ANN_CATEGORY_ID],
                &category) || !has_id (categories, category))) {
      gchar *what = found[ANN_CATEGORY_ID] ?
          describe_value (found[ANN_CATEGORY_ID], found_end[ANN_CATEGORY_ID])
          : g_strdup ("absent");

      named = name_annotation (found[ANN_ID], found_end[ANN_ID], order - 1);
      count (r, GST_SPDL_COCO_UNKNOWN_CATEGORY, "%s (image id %"
          G_GINT64_FORMAT "): category_id %s is not among the categories "
          "(kept as it is)", named, key.id, what);
      g_free (what);
      g_free (named);
    }
    a.image = image - images;
    g_array_append_val (out, a);
  }
}

GstSpdlCoco *
gst_spdl_coco_parse (GBytes * bytes, const gchar * name, gboolean drop_empty,
    GError ** error)
{
  gsize len;
  /* an empty GBytes may have no data pointer */
  const gchar *text = g_bytes_get_size (bytes) > 0 ?
      g_bytes_get_data (bytes, &len) : (len = 0, ""), *end = text + len;
  const gchar *p, *k, *v, *v_end;
  const gchar *images = NULL, *annotations = NULL, *categories = NULL;
  gsize k_len;
  gchar *why = NULL;
  GstSpdlJsonIter iter;
  GArray *list, *anns, *category_ids = NULL;
  GString *names;
  GstSpdlCoco *coco;
  Reader r;
  Image *im;
  Annotation *an;
  guint64 *counts, *next;
  guint i, n, kept;
  guint64 j;

  if (!gst_spdl_json_validate (text, len, &why)) {
    fail (error, name, "not JSON: %s", why);
    g_free (why);
    return NULL;
  }
  p = text;
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  if (*p != '{') {
    fail (error, name, "the file holds %s, not an object with \"images\" "
        "and \"annotations\"", gst_spdl_json_type_name (*p));
    return NULL;
  }
  gst_spdl_json_iter_init (&iter, p, end);
  while (gst_spdl_json_iter_next (&iter, &k, &k_len, &v, &v_end)) {
    if (gst_spdl_json_key_equals (k, k_len, "images"))
      images = v;
    else if (gst_spdl_json_key_equals (k, k_len, "annotations"))
      annotations = v;
    else if (gst_spdl_json_key_equals (k, k_len, "categories"))
      categories = v;
  }
  if (images == NULL || *images != '[') {
    fail (error, name, images ? "\"images\" is %s, not an array" :
        "no \"images\" array%s", images ? gst_spdl_json_type_name (*images) :
        " (is it an instances file?)");
    return NULL;
  }
  if (annotations && *annotations != '[' && *annotations != 'n') {
    fail (error, name, "\"annotations\" is %s, not an array",
        gst_spdl_json_type_name (*annotations));
    return NULL;
  }
  if (categories && *categories != '[' && *categories != 'n') {
    fail (error, name, "\"categories\" is %s, not an array",
        gst_spdl_json_type_name (*categories));
    return NULL;
  }

  coco = g_new0 (GstSpdlCoco, 1);
  coco->text = g_bytes_ref (bytes);
  coco->warnings = g_ptr_array_new_with_free_func (g_free);
  r.coco = coco;
  r.name = name;
  r.text = text;

  /* the images, sorted by id, the first of each id kept */
  list = g_array_new (FALSE, FALSE, sizeof (Image));
  names = g_string_new (NULL);
  read_images (&r, images, end, list, names);
  g_array_sort (list, compare_images);
  im = (Image *) list->data;
  for (i = 0, n = 0; i < list->len; i++) {
    if (n > 0 && im[n - 1].id == im[i].id) {
      count (&r, GST_SPDL_COCO_DUPLICATE_IMAGE, "image id %" G_GINT64_FORMAT
          " is listed again (\"%s\"): the first (\"%s\") kept", im[i].id,
          names->str + im[i].name, names->str + im[n - 1].name);
      continue;
    }
    im[n++] = im[i];
  }

  /* the annotations, grouped by image in file order (a counting sort) */
  if (categories && *categories == '[')
    category_ids = read_categories (categories, end);
  anns = g_array_new (FALSE, FALSE, sizeof (Annotation));
  if (annotations && *annotations == '[')
    read_annotations (&r, annotations, end, im, n, category_ids, anns);
  if (category_ids)
    g_array_unref (category_ids);
  an = (Annotation *) anns->data;
  counts = g_new0 (guint64, (gsize) n + 1);
  for (j = 0; j < anns->len; j++)
    counts[an[j].image]++;

  /* the images listed (with their annotations, or all of them) */
  coco->image_ids = g_new (gint64, MAX (n, 1));
  coco->name_offsets = g_new (guint64, MAX (n, 1));
  coco->first = g_new (guint64, (gsize) n + 1);
  next = g_new (guint64, MAX (n, 1));
  for (i = 0, kept = 0, j = 0; i < n; i++) {
    if (drop_empty && counts[i] == 0) {
      next[i] = G_MAXUINT64;
      continue;
    }
    coco->image_ids[kept] = im[i].id;
    coco->name_offsets[kept] = im[i].name;
    coco->first[kept] = j;
    next[i] = j;
    j += counts[i];
    kept++;
  }
  coco->first[kept] = j;
  coco->n_images = kept;
  coco->n_annotations = j;
  coco->spans = g_new (guint64, MAX (2 * j, 1));
  for (j = 0; j < anns->len; j++) {
    guint64 at = next[an[j].image]++;

    coco->spans[2 * at] = an[j].offset;
    coco->spans[2 * at + 1] = an[j].len;
  }
  g_free (next);
  g_free (counts);
  g_array_unref (anns);
  g_array_unref (list);
  coco->names = g_string_free (names, FALSE);

  if (coco->n_images == 0) {
    fail (error, name, n == 0 ? "no image listed" : "no image has an "
        "annotation (empty-images=drop)");
    gst_spdl_coco_free (coco);
    return NULL;
  }
  return coco;
}

void
gst_spdl_coco_free (GstSpdlCoco * coco)
{
  if (coco == NULL)
    return;
  g_bytes_unref (coco->text);
  g_free (coco->image_ids);
  g_free (coco->name_offsets);
  g_free (coco->names);
  g_free (coco->first);
  g_free (coco->spans);
  g_ptr_array_unref (coco->warnings);
  g_free (coco);
}

/* Appends the JSON value [@p, @end) without white space outside strings */
static void
append_compact (GString * out, const gchar * p, const gchar * end)
{
  while (p < end) {
    const gchar *start = p;

    if (*p == '"') {
      for (p++; p < end && *p != '"'; p++)
        if (*p == '\\')
          p++;
      p = MIN (p + 1, end);
      g_string_append_len (out, start, p - start);
      continue;
    }
    while (p < end && *p != '"' && *p != ' ' && *p != '\t' && *p != '\n'
        && *p != '\r')
      p++;
    g_string_append_len (out, start, p - start);
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      p++;
  }
}

gchar *
gst_spdl_coco_get_objects (const GstSpdlCoco * coco, guint image,
    gsize * len)
{
  const gchar *text = g_bytes_get_data (coco->text, NULL);
  guint64 j, first = coco->first[image], last = coco->first[image + 1];
  gsize size = 2;
  GString *out;

  for (j = first; j < last; j++)
    size += coco->spans[2 * j + 1] + 1;
  out = g_string_sized_new (size);
  g_string_append_c (out, '[');
  for (j = first; j < last; j++) {
    if (j > first)
      g_string_append_c (out, ',');
    append_compact (out, text + coco->spans[2 * j],
        text + coco->spans[2 * j] + coco->spans[2 * j + 1]);
  }
  g_string_append_c (out, ']');
  if (len)
    *len = out->len;
  return g_string_free (out, FALSE);
}

GstSpdlDataset *
gst_spdl_coco_to_dataset (const GstSpdlCoco * coco, const gchar * root)
{
  const gchar **paths = g_new (const gchar *, MAX (coco->n_images, 1));
  /* file_name is a file's name: under an HTTP prefix a URL path, "IMG
   * 0001.jpg" as "IMG%200001.jpg" (s3:// keys are escaped when signed) */
  gboolean http = g_str_has_prefix (root, "http://") ||
      g_str_has_prefix (root, "https://");
  GPtrArray *escaped = g_ptr_array_new_with_free_func (g_free);
  GstSpdlDataset *ds;
  guint i;

  for (i = 0; i < coco->n_images; i++) {
    paths[i] = gst_spdl_coco_get_file_name (coco, i);
    if (http) {
      gchar *url_path = g_uri_escape_string (paths[i], "/", FALSE);

      g_ptr_array_add (escaped, url_path);
      paths[i] = url_path;
    }
  }
  ds = gst_spdl_dataset_new_from_paths (root, paths, coco->n_images);
  g_ptr_array_unref (escaped);
  g_free (paths);
  return ds;
}
