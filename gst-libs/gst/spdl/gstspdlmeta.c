/* GStreamer SPDL: sample metadata and epoch events
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

#include "gstspdlmeta.h"

#include <string.h>

static GQuark quark_index, quark_label, quark_epoch, quark_path;
static GQuark quark_position, quark_padded;

void
gst_spdl_custom_meta_register (const gchar * name)
{
  static const gchar *tags[] = { NULL };
  static GMutex lock;

  /* NULL transform: GStreamer copies the structure on buffer copies */
  g_mutex_lock (&lock);
  if (gst_meta_get_info (name) == NULL)
    gst_meta_register_custom (name, tags, NULL, NULL, NULL);
  g_mutex_unlock (&lock);
}

void
gst_spdl_structure_set_uint64_array (GstStructure * s, const gchar * field,
    const guint64 * values, guint n_values)
{
  GValue array = G_VALUE_INIT, item = G_VALUE_INIT;
  guint i;

  g_value_init (&array, GST_TYPE_ARRAY);
  g_value_init (&item, G_TYPE_UINT64);
  for (i = 0; i < n_values; i++) {
    g_value_set_uint64 (&item, values[i]);
    gst_value_array_append_value (&array, &item);
  }
  gst_structure_take_value (s, field, &array);
  g_value_unset (&item);
}

void
gst_spdl_meta_register (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once)) {
    quark_index = g_quark_from_static_string ("index");
    quark_label = g_quark_from_static_string ("label");
    quark_epoch = g_quark_from_static_string ("epoch");
    quark_path = g_quark_from_static_string ("path");
    quark_position = g_quark_from_static_string ("position");
    quark_padded = g_quark_from_static_string ("padded");
    gst_spdl_custom_meta_register (GST_SPDL_SAMPLE_META_NAME);
    gst_spdl_custom_meta_register (GST_SPDL_BATCH_META_NAME);
    g_once_init_leave (&once, 1);
  }
}

void
gst_spdl_buffer_add_sample_meta (GstBuffer * buffer, guint64 index,
    gint label, guint epoch, const gchar * path)
{
  GstCustomMeta *meta;
  GstStructure *s;

  gst_spdl_meta_register ();
  meta = gst_buffer_add_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  s = gst_custom_meta_get_structure (meta);
  gst_structure_id_set (s, quark_index, G_TYPE_UINT64, index,
      quark_label, G_TYPE_INT, label, quark_epoch, G_TYPE_UINT, epoch, NULL);
  if (g_utf8_validate (path, -1, NULL)) {
    gst_structure_id_set (s, quark_path, G_TYPE_STRING, path, NULL);
  } else {
    /* structure strings are UTF-8: show the name, keep its bytes */
    gchar *display = g_filename_display_name (path);
    GBytes *bytes = g_bytes_new (path, strlen (path));
    gst_structure_id_set (s, quark_path, G_TYPE_STRING, display, NULL);
    gst_structure_set (s, "path-bytes", G_TYPE_BYTES, bytes, NULL);
    g_bytes_unref (bytes);
    g_free (display);
  }
}

gboolean
gst_spdl_buffer_get_sample_info (GstBuffer * buffer, GstSpdlSampleInfo * info)
{
  GstCustomMeta *meta;
  const GstStructure *s;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta == NULL)
    return FALSE;
  s = gst_custom_meta_get_structure (meta);
  if (!gst_structure_id_get (s, quark_index, G_TYPE_UINT64, &info->index,
          quark_label, G_TYPE_INT, &info->label,
          quark_epoch, G_TYPE_UINT, &info->epoch, NULL))
    return FALSE;
  info->path = gst_structure_get_string (s, "path");
  return TRUE;
}

void
gst_spdl_buffer_set_sample_position (GstBuffer * buffer, guint64 position)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta)
    gst_structure_id_set (gst_custom_meta_get_structure (meta),
        quark_position, G_TYPE_UINT64, position, NULL);
}

gboolean
gst_spdl_buffer_get_sample_position (GstBuffer * buffer, guint64 * position)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  return meta && gst_structure_id_get (gst_custom_meta_get_structure (meta),
      quark_position, G_TYPE_UINT64, position, NULL);
}

void
gst_spdl_buffer_set_batch (GstBuffer * buffer, guint64 batch,
    guint resume_epoch, guint64 resume_offset)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta)
    gst_structure_set (gst_custom_meta_get_structure (meta),
        "batch", G_TYPE_UINT64, batch, "resume-epoch", G_TYPE_UINT,
        resume_epoch, "resume-offset", G_TYPE_UINT64, resume_offset, NULL);
}

gboolean
gst_spdl_buffer_get_batch (GstBuffer * buffer, guint64 * batch,
    guint * resume_epoch, guint64 * resume_offset)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  return meta && gst_structure_get (gst_custom_meta_get_structure (meta),
      "batch", G_TYPE_UINT64, batch, "resume-epoch", G_TYPE_UINT,
      resume_epoch, "resume-offset", G_TYPE_UINT64, resume_offset, NULL);
}

void
gst_spdl_buffer_set_batch_end (GstBuffer * buffer)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta)
    gst_structure_set (gst_custom_meta_get_structure (meta), "batch-end",
        G_TYPE_BOOLEAN, TRUE, NULL);
}

gboolean
gst_spdl_buffer_is_batch_end (GstBuffer * buffer)
{
  GstCustomMeta *meta;
  gboolean end = FALSE;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta)
    gst_structure_get_boolean (gst_custom_meta_get_structure (meta),
        "batch-end", &end);
  return end;
}

const gchar *
gst_spdl_buffer_get_path (GstBuffer * buffer)
{
  GstSpdlSampleInfo info;

  if (buffer && gst_spdl_buffer_get_sample_info (buffer, &info) && info.path)
    return info.path;
  return "(unknown sample)";
}

void
gst_spdl_buffer_set_clip_info (GstBuffer * buffer, guint clip,
    const gdouble * pts, guint n_frames)
{
  GstCustomMeta *meta;
  GstStructure *s;
  GValue array = G_VALUE_INIT, item = G_VALUE_INIT;
  guint i;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta == NULL)
    meta = gst_buffer_add_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  s = gst_custom_meta_get_structure (meta);
  g_value_init (&array, GST_TYPE_ARRAY);
  g_value_init (&item, G_TYPE_DOUBLE);
  for (i = 0; i < n_frames; i++) {
    g_value_set_double (&item, pts[i]);
    gst_value_array_append_value (&array, &item);
  }
  g_value_unset (&item);
  gst_structure_set (s, "clip", G_TYPE_UINT, clip, NULL);
  gst_structure_take_value (s, "pts", &array);
}

gdouble *
gst_spdl_buffer_dup_clip_pts (GstBuffer * buffer, guint * n_frames)
{
  GstCustomMeta *meta;
  const GValue *array;
  gdouble *out;
  guint i, n;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta == NULL)
    return NULL;
  array = gst_structure_get_value (gst_custom_meta_get_structure (meta),
      "pts");
  if (array == NULL || !GST_VALUE_HOLDS_ARRAY (array))
    return NULL;
  n = gst_value_array_get_size (array);
  out = g_new (gdouble, MAX (n, 1));
  for (i = 0; i < n; i++) {
    const GValue *v = gst_value_array_get_value (array, i);
    out[i] = G_VALUE_HOLDS_DOUBLE (v) ? g_value_get_double (v) : 0.0;
  }
  *n_frames = n;
  return out;
}

void
gst_spdl_buffer_mark_last_clip (GstBuffer * buffer)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta == NULL)
    meta = gst_buffer_add_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  gst_structure_set (gst_custom_meta_get_structure (meta), "last-clip",
      G_TYPE_BOOLEAN, TRUE, NULL);
}

gboolean
gst_spdl_buffer_is_last_clip (GstBuffer * buffer)
{
  GstCustomMeta *meta;
  gboolean last = FALSE;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta == NULL)
    return FALSE;
  gst_structure_get_boolean (gst_custom_meta_get_structure (meta),
      "last-clip", &last);
  return last;
}

void
gst_spdl_buffer_set_clip_has_audio (GstBuffer * buffer, gboolean has_audio)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta == NULL)
    meta = gst_buffer_add_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  gst_structure_set (gst_custom_meta_get_structure (meta), "has-audio",
      G_TYPE_BOOLEAN, has_audio, NULL);
}

gboolean
gst_spdl_buffer_get_clip_has_audio (GstBuffer * buffer)
{
  GstCustomMeta *meta;
  gboolean has_audio = FALSE;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta == NULL)
    return FALSE;
  gst_structure_get_boolean (gst_custom_meta_get_structure (meta),
      "has-audio", &has_audio);
  return has_audio;
}

gboolean
gst_spdl_buffer_get_clip_number (GstBuffer * buffer, guint * clip)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  return meta != NULL && gst_structure_get_uint
      (gst_custom_meta_get_structure (meta), "clip", clip);
}

static gboolean
copy_field (GQuark field_id, const GValue * value, gpointer dest)
{
  gst_structure_id_set_value ((GstStructure *) dest, field_id, value);
  return TRUE;
}

gboolean
gst_spdl_buffer_copy_sample_meta (GstBuffer * dest, GstBuffer * src)
{
  GstCustomMeta *from, *to;

  gst_spdl_meta_register ();
  from = gst_buffer_get_custom_meta (src, GST_SPDL_SAMPLE_META_NAME);
  if (from == NULL)
    return FALSE;
  to = gst_buffer_add_custom_meta (dest, GST_SPDL_SAMPLE_META_NAME);
  /* the custom meta owns its structure: fill it in place */
  gst_structure_foreach (gst_custom_meta_get_structure (from), copy_field,
      gst_custom_meta_get_structure (to));
  return TRUE;
}

void
gst_spdl_buffer_add_batch_meta (GstBuffer * buffer, guint epoch,
    const guint64 * indices, guint n_indices)
{
  GstCustomMeta *meta;
  GstStructure *s;

  gst_spdl_meta_register ();
  meta = gst_buffer_add_custom_meta (buffer, GST_SPDL_BATCH_META_NAME);
  s = gst_custom_meta_get_structure (meta);
  gst_structure_id_set (s, quark_epoch, G_TYPE_UINT, epoch, NULL);
  gst_spdl_structure_set_uint64_array (s, "indices", indices, n_indices);
}

void
gst_spdl_buffer_set_batch_progress (GstBuffer * buffer, guint64 position,
    guint padded)
{
  GstCustomMeta *meta;
  GstStructure *s;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_BATCH_META_NAME);
  if (meta == NULL)
    return;
  s = gst_custom_meta_get_structure (meta);
  gst_structure_id_set (s, quark_padded, G_TYPE_UINT, padded, NULL);
  if (position != G_MAXUINT64)
    gst_structure_id_set (s, quark_position, G_TYPE_UINT64, position, NULL);
}

void
gst_spdl_buffer_set_batch_resume (GstBuffer * buffer, guint epoch,
    guint64 offset)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_BATCH_META_NAME);
  if (meta)
    gst_structure_set (gst_custom_meta_get_structure (meta), "resume-epoch",
        G_TYPE_UINT, epoch, "resume-offset", G_TYPE_UINT64, offset, NULL);
}

gboolean
gst_spdl_buffer_get_batch_resume (GstBuffer * buffer, guint * epoch,
    guint64 * offset)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_BATCH_META_NAME);
  return meta && gst_structure_get (gst_custom_meta_get_structure (meta),
      "resume-epoch", G_TYPE_UINT, epoch, "resume-offset", G_TYPE_UINT64,
      offset, NULL);
}

void
gst_spdl_buffer_set_audio_clip_info (GstBuffer * buffer, guint clip,
    gdouble start, guint64 length)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta == NULL)
    meta = gst_buffer_add_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  gst_structure_set (gst_custom_meta_get_structure (meta), "clip",
      G_TYPE_UINT, clip, "start", G_TYPE_DOUBLE, start, "length",
      G_TYPE_UINT64, length, NULL);
}

gboolean
gst_spdl_buffer_get_audio_clip_info (GstBuffer * buffer, guint * clip,
    gdouble * start, guint64 * length)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  return meta && gst_structure_get (gst_custom_meta_get_structure (meta),
      "clip", G_TYPE_UINT, clip, "start", G_TYPE_DOUBLE, start, "length",
      G_TYPE_UINT64, length, NULL);
}

/* The sample meta's structure, the meta added first with @add; NULL
 * without one. */
static GstStructure *
sample_structure (GstBuffer * buffer, gboolean add)
{
  GstCustomMeta *meta;

  gst_spdl_meta_register ();
  meta = gst_buffer_get_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  if (meta == NULL && add)
    meta = gst_buffer_add_custom_meta (buffer, GST_SPDL_SAMPLE_META_NAME);
  return meta ? gst_custom_meta_get_structure (meta) : NULL;
}

void
gst_spdl_buffer_set_span (GstBuffer * buffer, gdouble start,
    gdouble duration)
{
  gst_structure_set (sample_structure (buffer, TRUE), "span-start",
      G_TYPE_DOUBLE, start, "span-duration", G_TYPE_DOUBLE, duration, NULL);
}

gboolean
gst_spdl_buffer_get_span (GstBuffer * buffer, gdouble * start,
    gdouble * duration)
{
  GstStructure *s = sample_structure (buffer, FALSE);

  return s && gst_structure_get (s, "span-start", G_TYPE_DOUBLE, start,
      "span-duration", G_TYPE_DOUBLE, duration, NULL);
}

void
gst_spdl_buffer_set_manifest_row (GstBuffer * buffer, const gchar * row)
{
  gst_structure_set (sample_structure (buffer, TRUE), "row", G_TYPE_STRING,
      row, NULL);
}

const gchar *
gst_spdl_buffer_get_manifest_row (GstBuffer * buffer)
{
  GstStructure *s = sample_structure (buffer, FALSE);

  return s ? gst_structure_get_string (s, "row") : NULL;
}

guint64 *
gst_spdl_structure_dup_uint64_array (const GstStructure * s,
    const gchar * field, guint * n_values)
{
  const GValue *array = gst_structure_get_value (s, field);
  guint64 *out;
  guint i, n;

  if (array == NULL || !GST_VALUE_HOLDS_ARRAY (array))
    return NULL;
  n = gst_value_array_get_size (array);
  out = g_new (guint64, MAX (n, 1));
  for (i = 0; i < n; i++)
    out[i] = g_value_get_uint64 (gst_value_array_get_value (array, i));
  if (n_values)
    *n_values = n;
  return out;
}

GstEvent *
gst_spdl_epoch_end_event_new (guint epoch, guint64 samples)
{
  GstStructure *s = gst_structure_new (GST_SPDL_EPOCH_END_NAME,
      "epoch", G_TYPE_UINT, epoch, "samples", G_TYPE_UINT64, samples, NULL);

  return gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM, s);
}

GstEvent *
gst_spdl_epoch_start_event_new (guint epoch, guint64 samples, guint64 offset,
    guint num_shards, guint shard_index)
{
  GstStructure *s = gst_structure_new (GST_SPDL_EPOCH_START_NAME,
      "epoch", G_TYPE_UINT, epoch, "samples", G_TYPE_UINT64, samples,
      "offset", G_TYPE_UINT64, offset, "num-shards", G_TYPE_UINT, num_shards,
      "shard-index", G_TYPE_UINT, shard_index, NULL);

  return gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM, s);
}

gboolean
gst_spdl_is_epoch_start_event (GstEvent * event)
{
  return GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM &&
      gst_event_has_name (event, GST_SPDL_EPOCH_START_NAME);
}

gboolean
gst_spdl_is_epoch_end_event (GstEvent * event)
{
  return GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM &&
      gst_event_has_name (event, GST_SPDL_EPOCH_END_NAME);
}

gboolean
gst_spdl_epoch_end_parse (const GstStructure * s, guint * epoch,
    guint64 * samples)
{
  if (s == NULL || !gst_structure_has_name (s, GST_SPDL_EPOCH_END_NAME))
    return FALSE;
  return gst_structure_get (s, "epoch", G_TYPE_UINT, epoch,
      "samples", G_TYPE_UINT64, samples, NULL);
}
