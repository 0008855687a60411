/* GStreamer SPDL: one image's COCO annotations as detection targets,
 * through the image's geometry as torchvision v2 transforms them
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* A detection target must land where torchvision's would: a box a pixel
 * off, or one kept that SanitizeBoundingBoxes drops, is a different
 * training set. So each step is torchvision 0.29's own arithmetic on
 * float32 tensors (its ratios are float32 tensors, its crop offsets
 * float32), in its order, and masks take the label fields' nearest
 * rule. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlobjects.h"
#include "gstspdlcocomask.h"
#include "gstspdllabel.h"
#include "gstspdljson.h"

#include <math.h>
#include <string.h>

/* the longest text of one sample's annotations' warnings */
#define MAX_WARNINGS_LEN 2048

static const gchar *reason_names[] = {
  "bad-annotation", "box-outside-image", "box-empty", "sanitized",
};

const gchar *
gst_spdl_objects_reason_name (GstSpdlObjectsReason reason)
{
  return reason < G_N_ELEMENTS (reason_names) ? reason_names[reason] :
      "unknown";
}

void
gst_spdl_objects_clear (GstSpdlObjects * o)
{
  g_clear_pointer (&o->boxes, g_free);
  g_clear_pointer (&o->labels, g_free);
  g_clear_pointer (&o->area, g_free);
  g_clear_pointer (&o->iscrowd, g_free);
  g_clear_pointer (&o->masks, g_free);
  g_clear_pointer (&o->rle_first, g_free);
  g_clear_pointer (&o->rle_count, g_free);
  if (o->rles)
    g_array_free (o->rles, TRUE);
  if (o->warnings)
    g_string_free (o->warnings, TRUE);
  memset (o, 0, sizeof (*o));
}

/* ---- JSON, already validated: walked by gstspdljson.h's iterator ---- */

static gboolean
number_value (const gchar * v, const gchar * v_end, gdouble * out)
{
  gchar buf[G_ASCII_DTOSTR_BUF_SIZE * 4];
  gsize n = v_end - v;

  if (!(*v == '-' || *v == 'N' || *v == 'I' || g_ascii_isdigit (*v))
      || n >= sizeof (buf))
    return FALSE;
  memcpy (buf, v, n);
  buf[n] = '\0';
  *out = g_ascii_strtod (buf, NULL);
  return TRUE;
}

static gboolean
int_value (const gchar * v, const gchar * v_end, gint64 * out)
{
  return (*v == '-' || g_ascii_isdigit (*v)) &&
      gst_spdl_json_number_to_int (v, v_end - v, out);
}

/* The numbers of the array [@v, @v_end) into @out (cleared first);
 * FALSE when it is no array or holds anything else. */
static gboolean
number_array (const gchar * v, const gchar * v_end, GArray * out)
{
  GstSpdlJsonIter it;
  const gchar *k, *e, *e_end;
  gsize k_len;
  gdouble d;

  g_array_set_size (out, 0);
  if (*v != '[' || !gst_spdl_json_iter_init (&it, v, v_end))
    return FALSE;
  while (gst_spdl_json_iter_next (&it, &k, &k_len, &e, &e_end)) {
    if (!number_value (e, e_end, &d))
      return FALSE;
    g_array_append_val (out, d);
  }
  return TRUE;
}

/* ---- one annotation ---- */

/* The members of an annotation read, each a value's [start, end) */
typedef enum
{
  MEMBER_BBOX,
  MEMBER_CATEGORY,
  MEMBER_ISCROWD,
  MEMBER_AREA,
  MEMBER_ID,
  MEMBER_SEGMENTATION,
  N_MEMBERS
} Member;

static const gchar *member_keys[N_MEMBERS] = {
  "bbox", "category_id", "iscrowd", "area", "id", "segmentation",
};

typedef struct
{
  const gchar *start[N_MEMBERS], *end[N_MEMBERS];
} Members;

static void
find_members (const gchar * v, const gchar * v_end, Members * m)
{
  GstSpdlJsonIter it;
  const gchar *key, *e, *e_end;
  gsize key_len;
  guint k;

  memset (m, 0, sizeof (*m));
  gst_spdl_json_iter_init (&it, v, v_end);
  /* the last of a repeated key counts, as json.loads has it */
  while (gst_spdl_json_iter_next (&it, &key, &key_len, &e, &e_end))
    for (k = 0; k < N_MEMBERS; k++)
      if (gst_spdl_json_key_equals (key, key_len, member_keys[k])) {
        m->start[k] = e;
        m->end[k] = e_end;
      }
}

/* An RLE segmentation {"counts": "..." | [...], "size": [h, w]} appended
 * to @rles. */
static gboolean
read_rle (const gchar * v, const gchar * v_end, guint width, guint height,
    GArray * rles, GArray * numbers, gchar ** why)
{
  GstSpdlJsonIter it;
  const gchar *key, *e, *e_end, *counts = NULL, *counts_end = NULL;
  gsize key_len;
  GstSpdlRle rle;
  gboolean ok = FALSE, have_size = FALSE;
  gdouble h = 0, w = 0;
  guint i;

  gst_spdl_json_iter_init (&it, v, v_end);
  while (gst_spdl_json_iter_next (&it, &key, &key_len, &e, &e_end)) {
    if (gst_spdl_json_key_equals (key, key_len, "counts")) {
      counts = e;
      counts_end = e_end;
    } else if (gst_spdl_json_key_equals (key, key_len, "size")) {
      have_size = number_array (e, e_end, numbers) && numbers->len == 2;
      if (have_size) {
        h = g_array_index (numbers, gdouble, 0);
        w = g_array_index (numbers, gdouble, 1);
      }
    }
  }
  if (counts == NULL || !have_size) {
    *why = g_strdup ("an RLE segmentation without \"counts\" or a \"size\" "
        "of 2 numbers");
    return FALSE;
  }
  /* annToMask decodes at the RLE's own size: another than the image's
   * is no mask of it */
  if (h != height || w != width) {
    *why = g_strdup_printf ("an RLE of size %gx%g (height x width) on a "
        "%ux%u image", h, w, height, width);
    return FALSE;
  }
  if (*counts == '"') {
    gchar *s = gst_spdl_json_string_value (counts, counts_end - counts, why);

    if (s == NULL)
      return FALSE;
    ok = gst_spdl_rle_from_string (&rle, s, strlen (s), height, width, why);
    g_free (s);
  } else if (number_array (counts, counts_end, numbers)) {
    guint32 *c = g_new (guint32, numbers->len + 1);

    ok = TRUE;
    for (i = 0; i < numbers->len && ok; i++) {
      gdouble d = g_array_index (numbers, gdouble, i);

      ok = d >= 0 && d <= G_MAXUINT32 && d == floor (d);
      c[i] = ok ? (guint32) d : 0;
    }
    if (!ok)
      *why = g_strdup ("RLE counts that are not all integers >= 0");
    else
      ok = gst_spdl_rle_from_counts (&rle, c, numbers->len, height, width,
          why);
    g_free (c);
  } else {
    *why = g_strdup ("RLE counts that are neither a string nor numbers");
  }
  if (ok)
    g_array_append_val (rles, rle);
  return ok;
}

/* Polygons [[x, y, ...], ...], each appended to @rles (painted together
 * they are pycocotools' merge). */
static gboolean
read_polygons (const gchar * v, const gchar * v_end, guint width,
    guint height, GArray * rles, GArray * numbers, gchar ** why)
{
  GstSpdlJsonIter it;
  const gchar *k, *e, *e_end;
  gsize k_len;
  guint n = 0;

  gst_spdl_json_iter_init (&it, v, v_end);
  while (gst_spdl_json_iter_next (&it, &k, &k_len, &e, &e_end)) {
    GstSpdlRle rle;

    if (!number_array (e, e_end, numbers)) {
      *why = g_strdup ("a polygon that is not a list of numbers");
      return FALSE;
    }
    if (numbers->len % 2) {
      *why = g_strdup_printf ("a polygon of %u numbers (x, y pairs)",
          numbers->len);
      return FALSE;
    }
    if (!gst_spdl_rle_from_polygon (&rle, (const gdouble *) numbers->data,
            numbers->len / 2, height, width, why))
      return FALSE;
    g_array_append_val (rles, rle);
    n++;
  }
  if (n == 0) {
    *why = g_strdup ("an empty list of polygons");
    return FALSE;
  }
  return TRUE;
}

static void
warn (GstSpdlObjects * o, GstSpdlObjectsReason reason, gint64 id,
    guint index, const gchar * what)
{
  o->counts[reason]++;
  if (o->warnings == NULL)
    o->warnings = g_string_new (NULL);
  else if (o->warnings->len >= MAX_WARNINGS_LEN) {
    /* a warning stays readable: the counts have the rest */
    if (!g_str_has_suffix (o->warnings->str, "; ..."))
      g_string_append (o->warnings, "; ...");
    return;
  } else
    g_string_append (o->warnings, "; ");
  if (id >= 0)
    g_string_append_printf (o->warnings, "annotation %" G_GINT64_FORMAT,
        id);
  else
    g_string_append_printf (o->warnings, "annotation #%u (no id)", index);
  g_string_append_printf (o->warnings, ": %s (%s)", what,
      gst_spdl_objects_reason_name (reason));
}

/* Appends the annotation [@v, @v_end) to @o, or counts why not. */
static void
add_annotation (GstSpdlObjects * o, const gchar * v, const gchar * v_end,
    guint index, gboolean masks, GArray * numbers)
{
  Members m;
  gint64 id = -1, label, crowd = 0;
  gdouble b[4], area;
  gfloat x1, y1, x2, y2;
  gchar *why = NULL;
  guint i, n = o->n;

  if (*v != '{') {
    warn (o, GST_SPDL_OBJECTS_BAD_ANNOTATION, -1, index, "not an object");
    return;
  }
  find_members (v, v_end, &m);
  if (m.start[MEMBER_ID] && !int_value (m.start[MEMBER_ID],
          m.end[MEMBER_ID], &id))
    id = -1;
  if (m.start[MEMBER_BBOX] == NULL || !number_array (m.start[MEMBER_BBOX],
          m.end[MEMBER_BBOX], numbers)
      || numbers->len != 4) {
    warn (o, GST_SPDL_OBJECTS_BAD_ANNOTATION, id, index,
        "no \"bbox\" of 4 numbers");
    return;
  }
  for (i = 0; i < 4; i++)
    b[i] = g_array_index (numbers, gdouble, i);
  for (i = 0; i < 4; i++)
    if (!isfinite (b[i])) {
      warn (o, GST_SPDL_OBJECTS_BAD_ANNOTATION, id, index,
          "a \"bbox\" that is not finite");
      return;
    }
  if (m.start[MEMBER_CATEGORY] == NULL ||
      !int_value (m.start[MEMBER_CATEGORY], m.end[MEMBER_CATEGORY], &label)) {
    warn (o, GST_SPDL_OBJECTS_BAD_ANNOTATION, id, index,
        "no integer \"category_id\"");
    return;
  }
  if (m.start[MEMBER_ISCROWD] && !int_value (m.start[MEMBER_ISCROWD],
          m.end[MEMBER_ISCROWD], &crowd)) {
    warn (o, GST_SPDL_OBJECTS_BAD_ANNOTATION, id, index,
        "an \"iscrowd\" that is no integer");
    return;
  }
  /* torchvision: float32 tensors, x2 = x + w in float32 */
  x1 = (gfloat) b[0];
  y1 = (gfloat) b[1];
  x2 = x1 + (gfloat) b[2];
  y2 = y1 + (gfloat) b[3];
  area = (gdouble) ((gfloat) b[2] * (gfloat) b[3]);
  if (m.start[MEMBER_AREA] && (!number_value (m.start[MEMBER_AREA],
              m.end[MEMBER_AREA], &area)
          || !isfinite (area))) {
    warn (o, GST_SPDL_OBJECTS_BAD_ANNOTATION, id, index,
        "an \"area\" that is no finite number");
    return;
  }
  if (masks) {
    const gchar *seg = m.start[MEMBER_SEGMENTATION];
    const gchar *seg_end = m.end[MEMBER_SEGMENTATION];
    guint before = o->rles->len;
    gboolean ok = FALSE;

    if (seg == NULL)
      why = g_strdup ("no \"segmentation\" (masks are asked for)");
    else if (*seg == '{')
      ok = read_rle (seg, seg_end, o->width, o->height, o->rles, numbers,
          &why);
    else if (*seg == '[')
      ok = read_polygons (seg, seg_end, o->width, o->height, o->rles,
          numbers, &why);
    else
      why = g_strdup ("a \"segmentation\" that is neither polygons nor RLE");
    if (!ok) {
      /* the polygons read before the bad one go with it */
      g_array_set_size (o->rles, before);
      warn (o, GST_SPDL_OBJECTS_BAD_ANNOTATION, id, index, why);
      g_free (why);
      return;
    }
    o->rle_first[n] = before;
    o->rle_count[n] = o->rles->len - before;
  }
  if (!(b[2] > 0 && b[3] > 0))
    warn (o, GST_SPDL_OBJECTS_BOX_EMPTY, id, index, "a box of zero or "
        "negative size");
  else if (x1 < 0 || y1 < 0 || x2 > o->width || y2 > o->height)
    warn (o, GST_SPDL_OBJECTS_BOX_OUTSIDE_IMAGE, id, index,
        "a box reaching past the image");
  o->boxes[4 * n] = x1;
  o->boxes[4 * n + 1] = y1;
  o->boxes[4 * n + 2] = x2;
  o->boxes[4 * n + 3] = y2;
  o->labels[n] = label;
  o->area[n] = (gfloat) area;
  o->iscrowd[n] = crowd;
  o->n = n + 1;
}

gboolean
gst_spdl_objects_parse (GstSpdlObjects * o, const gchar * text, gsize len,
    guint width, guint height, gboolean masks, gchar ** why)
{
  const gchar *end = text + len, *p, *v = NULL, *v_end = NULL;
  const gchar *k, *e, *e_end;
  GstSpdlJsonIter it;
  GArray *numbers;
  guint index = 0, count = 0;
  gsize k_len;

  memset (o, 0, sizeof (*o));
  o->width = o->source_width = width;
  o->height = o->source_height = height;
  if (masks) {
    o->rles = g_array_new (FALSE, FALSE, sizeof (GstSpdlRle));
    g_array_set_clear_func (o->rles, (GDestroyNotify) gst_spdl_rle_clear);
  }
  if (len >= 3 && memcmp (text, "\xEF\xBB\xBF", 3) == 0)
    text += 3;
  if (!gst_spdl_json_validate (text, end - text, why))
    goto failed;
  for (p = text; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'; p++);
  if (*p == '{') {
    /* a WebDataset member as users write it: {"annotations": [...]} */
    gst_spdl_json_iter_init (&it, p, end);
    while (gst_spdl_json_iter_next (&it, &k, &k_len, &e, &e_end))
      if (gst_spdl_json_key_equals (k, k_len, "annotations")) {
        v = e;
        v_end = e_end;
      }
    /* without the key the member is something else (a classification
     * json, a misspelt key): every image would silently have no object */
    if (v == NULL) {
      *why = g_strdup ("an object without \"annotations\" (one image's "
          "annotations are a list, or {\"annotations\": [...]})");
      goto failed;
    }
    if (*v == 'n')
      return TRUE;              /* "annotations": null: none */
  } else {
    v = p;
    v_end = gst_spdl_json_value_end (p, end);
  }
  if (*v != '[') {
    *why = g_strdup_printf ("the annotations are %s, not an array",
        gst_spdl_json_type_name (*v));
    goto failed;
  }
  /* room for every annotation, made once */
  gst_spdl_json_iter_init (&it, v, v_end);
  while (gst_spdl_json_iter_next (&it, &k, &k_len, &e, &e_end))
    count++;
  if (count == 0)
    return TRUE;
  o->boxes = g_try_new (gfloat, 4 * (gsize) count);
  o->labels = g_try_new (gint64, count);
  o->area = g_try_new (gfloat, count);
  o->iscrowd = g_try_new (gint64, count);
  if (masks) {
    o->rle_first = g_try_new (guint, count);
    o->rle_count = g_try_new (guint, count);
  }
  if (!o->boxes || !o->labels || !o->area || !o->iscrowd ||
      (masks && (!o->rle_first || !o->rle_count))) {
    *why = g_strdup_printf ("out of memory for %u objects", count);
    gst_spdl_objects_clear (o);
    return FALSE;
  }
  numbers = g_array_new (FALSE, FALSE, sizeof (gdouble));
  gst_spdl_json_iter_init (&it, v, v_end);
  while (gst_spdl_json_iter_next (&it, &k, &k_len, &e, &e_end))
    add_annotation (o, e, e_end, index++, masks, numbers);
  g_array_free (numbers, TRUE);
  return TRUE;

failed:
  /* nothing of it left for the caller, who parses again into @o */
  gst_spdl_objects_clear (o);
  return FALSE;
}

/* ---- geometry ---- */

/* F.crop on BoundingBoxes: subtract the offset (float32), clamp to the
 * crop's canvas */
static void
crop_boxes (GstSpdlObjects * o, gint64 left, gint64 top, guint width,
    guint height)
{
  gfloat l = (gfloat) left, t = (gfloat) top;
  guint i;

  for (i = 0; i < o->n; i++) {
    gfloat *b = o->boxes + 4 * i;

    b[0] = CLAMP (b[0] - l, 0.0f, (gfloat) width);
    b[1] = CLAMP (b[1] - t, 0.0f, (gfloat) height);
    b[2] = CLAMP (b[2] - l, 0.0f, (gfloat) width);
    b[3] = CLAMP (b[3] - t, 0.0f, (gfloat) height);
  }
}

/* F.resize on BoundingBoxes: float32 ratios out / in, no clamp; nothing
 * done when the size does not change */
static void
resize_boxes (GstSpdlObjects * o, guint in_width, guint in_height,
    guint out_width, guint out_height)
{
  gfloat rx = (gfloat) ((gdouble) out_width / in_width);
  gfloat ry = (gfloat) ((gdouble) out_height / in_height);
  guint i;

  if (in_width == out_width && in_height == out_height)
    return;
  for (i = 0; i < o->n; i++) {
    gfloat *b = o->boxes + 4 * i;

    b[0] *= rx;
    b[1] *= ry;
    b[2] *= rx;
    b[3] *= ry;
  }
}

/* torchvision's _center_crop_compute_crop_anchor: int (round ((in -
 * out) / 2.0)), half to even, negative where the crop is larger */
static gint64
center_anchor (gint64 in, gint64 out)
{
  return (gint64) nearbyint ((gdouble) (in - out) / 2.0);
}

void
gst_spdl_objects_transform (GstSpdlObjects * o, const GstSpdlGeometry * geom)
{
  guint ow = geom->out_width, oh = geom->out_height, i;

  if (geom->virtual_width == G_MAXINT64 || geom->virtual_height == G_MAXINT64) {
    /* F.resized_crop (top, left, height, width, size) */
    crop_boxes (o, geom->clip_x, geom->clip_y, geom->clip_width,
        geom->clip_height);
    resize_boxes (o, geom->clip_width, geom->clip_height, ow, oh);
  } else if (geom->letterbox) {
    /* resized, then F.pad: shifted by the padding before the image (where
     * the image's pixels are, ultralytics' LetterBox, which can be half a
     * pixel off torchvision's center_crop anchor) and clamped to the
     * canvas, as F.pad clamps and ultralytics clips: a box on the image's
     * edge scaled a float32 ulp past it is no box outside the canvas for
     * the sanitizing to drop */
    guint rw = (guint) geom->virtual_width, rh = (guint) geom->virtual_height;

    resize_boxes (o, o->width, o->height, rw, rh);
    crop_boxes (o, geom->offset_x, geom->offset_y, ow, oh);
  } else {
    /* F.resize (shorter side), then F.center_crop (out) */
    guint rw = (guint) geom->virtual_width, rh = (guint) geom->virtual_height;

    resize_boxes (o, o->width, o->height, rw, rh);
    crop_boxes (o, center_anchor (rw, ow), center_anchor (rh, oh), ow, oh);
  }
  if (geom->flip) {
    gfloat w = (gfloat) ow;

    for (i = 0; i < o->n; i++) {
      gfloat *b = o->boxes + 4 * i, x1 = b[0];

      /* as torch computes it, -(x - W): W - W is -0.0 there */
      b[0] = -(b[2] - w);
      b[2] = -(x1 - w);
    }
  }
  o->geom = *geom;
  o->transformed = TRUE;
  o->width = ow;
  o->height = oh;
}

gboolean
gst_spdl_objects_rasterize (GstSpdlObjects * o, guint64 max_bytes,
    gchar ** why)
{
  gsize in_plane = (gsize) o->source_width * o->source_height;
  gsize out_plane = (gsize) o->width * o->height;
  guint8 *source;
  guint i, k;

  if (o->rles == NULL)
    return TRUE;
  g_clear_pointer (&o->masks, g_free);
  if (o->n == 0)
    return TRUE;
  /* a few bytes of polygons each ask for a plane: a shard's JSON member
   * must not decide how much memory a sample takes */
  if (max_bytes && (guint64) out_plane * o->n > max_bytes) {
    *why = g_strdup_printf ("%u masks of %ux%u would take %" G_GUINT64_FORMAT
        " bytes, more than max-masks-size=%" G_GUINT64_FORMAT, o->n,
        o->width, o->height, (guint64) out_plane * o->n, max_bytes);
    return FALSE;
  }
  /* one source plane at a time: only the output's masks are kept */
  source = g_try_malloc (in_plane);
  o->masks = g_try_malloc (out_plane * o->n);
  if (source == NULL || o->masks == NULL) {
    g_free (source);
    g_clear_pointer (&o->masks, g_free);
    *why = g_strdup_printf ("out of memory for %u masks of %ux%u", o->n,
        o->width, o->height);
    return FALSE;
  }
  for (i = 0; i < o->n; i++) {
    GstSpdlLabelImage label = { o->source_width, o->source_height, 1,
      source
    };
    guint8 *out = o->masks + out_plane * i;

    memset (source, 0, in_plane);
    for (k = 0; k < o->rle_count[i]; k++)
      gst_spdl_rle_paint (&g_array_index (o->rles, GstSpdlRle,
              o->rle_first[i] + k), source);
    if (o->transformed)
      gst_spdl_label_image_resample (&label, &o->geom, out);
    else
      memcpy (out, source, in_plane);
  }
  g_free (source);
  return TRUE;
}

void
gst_spdl_objects_sanitize (GstSpdlObjects * o, gdouble min_size,
    gdouble min_area)
{
  gfloat size = (gfloat) min_size, area = (gfloat) min_area;
  gfloat w = (gfloat) o->width, h = (gfloat) o->height;
  guint i, kept = 0;

  if (min_size == 0 && min_area == 0)
    return;
  for (i = 0; i < o->n; i++) {
    const gfloat *b = o->boxes + 4 * i;
    gfloat bw = b[2] - b[0], bh = b[3] - b[1];
    /* NaN fails every comparison: removed, as torchvision removes it */
    gboolean valid = bw >= size && bh >= size && b[0] >= 0 && b[1] >= 0
        && b[2] >= 0 && b[3] >= 0 && bw * bh >= area && b[0] <= w
        && b[2] <= w && b[1] <= h && b[3] <= h;

    if (!valid) {
      o->counts[GST_SPDL_OBJECTS_SANITIZED]++;
      continue;
    }
    if (kept != i) {
      memcpy (o->boxes + 4 * kept, b, 4 * sizeof (gfloat));
      o->labels[kept] = o->labels[i];
      o->area[kept] = o->area[i];
      o->iscrowd[kept] = o->iscrowd[i];
      if (o->rles) {
        o->rle_first[kept] = o->rle_first[i];
        o->rle_count[kept] = o->rle_count[i];
      }
    }
    kept++;
  }
  o->n = kept;
}

static void
set_bytes (GstStructure * s, const gchar * name, gconstpointer data,
    gsize size)
{
  GBytes *bytes = g_bytes_new (size ? data : NULL, size);

  gst_structure_set (s, name, G_TYPE_BYTES, bytes, NULL);
  g_bytes_unref (bytes);
}

GstStructure *
gst_spdl_objects_to_structure (const GstSpdlObjects * o)
{
  GstStructure *s = gst_structure_new ("objects", "n", G_TYPE_UINT, o->n,
      "width", G_TYPE_UINT, o->width, "height", G_TYPE_UINT, o->height,
      NULL);

  set_bytes (s, "boxes", o->boxes, 4 * sizeof (gfloat) * o->n);
  set_bytes (s, "labels", o->labels, sizeof (gint64) * o->n);
  set_bytes (s, "area", o->area, sizeof (gfloat) * o->n);
  set_bytes (s, "iscrowd", o->iscrowd, sizeof (gint64) * o->n);
  if (o->rles)
    set_bytes (s, "masks", o->masks, o->masks ?
        (gsize) o->width * o->height * o->n : 0);
  return s;
}
