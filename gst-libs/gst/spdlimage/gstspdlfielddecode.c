/* GStreamer SPDL: a sample record's images and labels, decoded through
 * the geometry of its media image
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* A segmentation sample is an image and its mask: both must go through
 * the same crop, resize and flip, or the mask no longer says which pixel
 * is what. The fields are decoded right after the media image, on the
 * same thread with the same decoder, from the geometry computed for it;
 * one of another size than the image cannot follow that geometry and is
 * bad, never stretched to fit. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlfielddecode.h"
#include "gstspdllabel.h"
#include "gstspdlobjects.h"
#include "gstspdlerrors.h"

#include <string.h>

/* the resampler's row kernels may load a little past a row's end */
#define SLACK 64

/* One axis of the box: the clip (stretch, random-resized-crop) or the
 * output's window on the resized image (center-crop). */
static void
box_axis (guint clip, guint clip_len, gint64 virtual_len, gdouble offset,
    gdouble scale, guint out_len, gdouble * start, gdouble * len)
{
  if (virtual_len == G_MAXINT64) {
    *start = clip;
    *len = clip_len;
  } else {
    *start = clip + offset * scale;
    *len = out_len * scale;
  }
}

void
gst_spdl_geometry_to_sample (const GstSpdlGeometry * geom, guint width,
    guint height, GstSpdlSampleGeometry * sample)
{
  box_axis (geom->clip_x, geom->clip_width, geom->virtual_width,
      geom->offset_x, geom->scale_x, geom->out_width, &sample->x,
      &sample->width);
  box_axis (geom->clip_y, geom->clip_height, geom->virtual_height,
      geom->offset_y, geom->scale_y, geom->out_height, &sample->y,
      &sample->height);
  sample->flipped = geom->flip;
  sample->source_width = width;
  sample->source_height = height;
}

/* @size bytes (and slack), zeroed when asked; NULL without memory */
static GstBuffer *
new_output (gsize size, gboolean zeroed)
{
  guint8 *data = zeroed ? g_try_malloc0 (size + SLACK) :
      g_try_malloc (size + SLACK);

  if (data == NULL)
    return NULL;
  return gst_buffer_new_wrapped_full (0, data, size + SLACK, 0, size, data,
      g_free);
}

static void
set_sample_value (GstBuffer * buffer, guint i, GstBuffer * pixels,
    const gchar * format, const GstSpdlGeometry * geom)
{
  GstCaps *caps = gst_caps_new_simple ("video/x-raw",
      "format", G_TYPE_STRING, format,
      "width", G_TYPE_INT, (gint) geom->out_width,
      "height", G_TYPE_INT, (gint) geom->out_height, NULL);
  GValue value = G_VALUE_INIT;

  g_value_init (&value, GST_TYPE_SAMPLE);
  g_value_take_boxed (&value, gst_sample_new (pixels, caps, NULL, NULL));
  gst_spdl_buffer_set_record_value (buffer, i, &value);
  g_value_unset (&value);
  gst_caps_unref (caps);
  gst_buffer_unref (pixels);
}

static gboolean
check_size (const GstSpdlFieldTarget * t, guint width, guint height,
    GError ** error)
{
  if (width == t->width && height == t->height)
    return TRUE;
  return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_BAD_FIELD,
      "%ux%u, not the size of the sample's image (%ux%u)", width, height,
      t->width, t->height);
}

static GstBuffer *
decode_image (GstSpdlImageDecoder * dec, const GstSpdlFieldTarget * t,
    const guint8 * data, gsize size, GError ** error)
{
  const GstSpdlGeometry *geom = t->geom;
  GstSpdlDecodeParams params = *t->params;
  gsize stride = (gsize) geom->out_width * 3;
  GstSpdlOutput out;
  GstBuffer *pixels;
  GstMapInfo map;
  GError *err = NULL;
  guint width, height;
  gboolean ok;

  if (!gst_spdl_image_decoder_open (dec, data, size, t->max_pixels, &width,
          &height, error) || !check_size (t, width, height, error))
    return NULL;
  pixels = new_output (stride * geom->out_height, FALSE);
  if (pixels == NULL) {
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "out of memory for a %ux%u image", geom->out_width,
        geom->out_height);
    return NULL;
  }
  /* RGB whatever the media image's format: an image field is RGB */
  params.gray = FALSE;
  if (!gst_buffer_map (pixels, &map, GST_MAP_WRITE)) {
    gst_buffer_unref (pixels);
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "could not map the field's memory");
    return NULL;
  }
  gst_spdl_output_init_packed (&out, map.data, stride);
  ok = gst_spdl_image_decoder_decode_to (dec, &params, geom, &out, &err);
  /* padded as the media image is (a label's padding stays 0) */
  if (params.mode == GST_SPDL_RESIZE_LETTERBOX && params.pad_value)
    gst_spdl_geometry_fill_padding (geom, out.data, out.stride, 1, 3,
        params.pad_value);
  gst_buffer_unmap (pixels, &map);
  /* damaged data decoded all the same, as PIL decodes it */
  if (!ok && gst_spdl_error_is_recovered (err)) {
    g_clear_error (&err);
    ok = TRUE;
  }
  if (!ok) {
    g_propagate_error (error, err);
    gst_clear_buffer (&pixels);
  }
  return pixels;
}

static GstBuffer *
decode_label (const GstSpdlFieldTarget * t, const guint8 * data, gsize size,
    const gchar ** format, GError ** error)
{
  const GstSpdlGeometry *geom = t->geom;
  GstSpdlLabelImage label;
  GstBuffer *pixels = NULL;
  GstMapInfo map;

  if (!gst_spdl_label_image_decode (&label, data, size, t->max_pixels, error))
    return NULL;
  if (check_size (t, label.width, label.height, error))
    pixels = new_output ((gsize) geom->out_width * geom->out_height *
        label.bytes_per_pixel, FALSE);
  if (pixels && gst_buffer_map (pixels, &map, GST_MAP_WRITE)) {
    gst_spdl_label_image_resample (&label, geom, map.data);
    gst_buffer_unmap (pixels, &map);
    *format = label.bytes_per_pixel == 2 ? "GRAY16_LE" : "GRAY8";
  } else if (pixels) {
    gst_clear_buffer (&pixels);
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "could not map the field's memory");
  } else if (error && *error == NULL) {
    gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "out of memory for a %ux%u label", geom->out_width,
        geom->out_height);
  }
  gst_spdl_label_image_clear (&label);
  return pixels;
}

/* The field @i is bad for @why: FALSE with @error naming it (and *@bad
 * its index) under the policies skip and error; under empty TRUE, the
 * warning in *@filled (the first only) saying what it becomes. */
static gboolean
bad_field (const GstSpdlField * field, guint i, const gchar * why,
    const gchar * instead, guint * bad, GError ** filled, GError ** error)
{
  if (field->missing != GST_SPDL_MISSING_EMPTY) {
    *bad = i;
    g_set_error (error, GST_SPDL_DECODE_ERROR,
        GST_SPDL_DECODE_ERROR_BAD_FIELD, "field \"%s\" (%s): %s",
        field->name, gst_spdl_field_kind_name (field->kind), why);
    return FALSE;
  }
  if (filled && *filled == NULL)
    g_set_error (filled, GST_SPDL_DECODE_ERROR,
        GST_SPDL_DECODE_ERROR_BAD_FIELD, "field \"%s\" (%s): %s; %s "
        "instead (missing policy empty)", field->name,
        gst_spdl_field_kind_name (field->kind), why, instead);
  return TRUE;
}

gboolean
gst_spdl_record_decode_images (GstBuffer * buffer,
    const GstSpdlRecord * record, GstSpdlImageDecoder * dec,
    const GstSpdlFieldTarget * target, guint * bad, GError ** filled,
    GError ** error)
{
  const GstSpdlGeometry *geom = target->geom;
  guint i, n = record ? record->n_fields : 0;

  n = MIN (n, gst_spdl_buffer_get_record_size (buffer));
  for (i = 0; i < n; i++) {
    const GstSpdlField *field = &record->fields[i];
    gboolean label = field->kind == GST_SPDL_FIELD_LABEL;
    const gchar *format = label ? "GRAY8" : "RGB";
    const GValue *value;
    GstBuffer *pixels;
    GError *err = NULL;
    GBytes *bytes;
    gsize size;
    const guint8 *data;

    if (!gst_spdl_field_kind_is_image (field->kind))
      continue;
    value = gst_spdl_buffer_get_record_value (buffer, i);
    /* decoded already, or not ours to decode */
    if (value == NULL || !G_VALUE_HOLDS (value, G_TYPE_BYTES))
      continue;
    bytes = g_value_get_boxed (value);
    data = bytes ? g_bytes_get_data (bytes, &size) : NULL;
    if (data == NULL || size == 0)
      pixels = NULL;            /* the fill value: zeros */
    else if (label)
      pixels = decode_label (target, data, size, &format, &err);
    else
      pixels = decode_image (dec, target, data, size, &err);
    if (pixels == NULL && err) {
      /* @err may be a codec's: the reason is the field's */
      gboolean fill = bad_field (field, i, err->message, "zeros", bad,
          filled, error);

      g_clear_error (&err);
      if (!fill)
        return FALSE;
      format = label ? "GRAY8" : "RGB";
    }
    if (pixels == NULL) {
      pixels = new_output ((gsize) geom->out_width * geom->out_height *
          (label ? 1 : 3), TRUE);
      if (pixels == NULL) {
        *bad = i;
        return gst_spdl_decode_fail (error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
            "field \"%s\": out of memory for %ux%u zeros", field->name,
            geom->out_width, geom->out_height);
      }
    }
    set_sample_value (buffer, i, pixels, format, geom);
  }
  return TRUE;
}

gboolean
gst_spdl_record_decode_objects (GstBuffer * buffer,
    const GstSpdlRecord * record, const GstSpdlFieldTarget * target,
    const GstSpdlObjectsParams * params, guint64 * counts, GString ** notes,
    guint * bad, GError ** filled, GError ** error)
{
  guint i, r, n = record ? record->n_fields : 0;

  n = MIN (n, gst_spdl_buffer_get_record_size (buffer));
  for (i = 0; i < n; i++) {
    const GstSpdlField *field = &record->fields[i];
    const GValue *value;
    const gchar *text;
    GstSpdlObjects objects;
    GValue decoded = G_VALUE_INIT;
    gchar *why = NULL;

    if (field->kind != GST_SPDL_FIELD_OBJECTS)
      continue;
    value = gst_spdl_buffer_get_record_value (buffer, i);
    /* decoded already, or not ours to decode */
    if (value == NULL || !G_VALUE_HOLDS_STRING (value))
      continue;
    text = g_value_get_string (value);
    if (!gst_spdl_objects_parse (&objects, text ? text : "[]",
            text ? strlen (text) : 2, target->width, target->height,
            params->masks, &why)) {
      gboolean fill = bad_field (field, i, why ? why : "not JSON",
          "no object", bad, filled, error);

      g_free (why);
      if (!fill)
        return FALSE;
      gst_spdl_objects_parse (&objects, "[]", 2, target->width,
          target->height, params->masks, NULL);
    }
    gst_spdl_objects_transform (&objects, target->geom);
    gst_spdl_objects_sanitize (&objects, params->min_size, params->min_area);
    if (!gst_spdl_objects_rasterize (&objects, params->max_masks_size,
            &why)) {
      gboolean fill = bad_field (field, i, why, "no object", bad, filled,
          error);

      g_free (why);
      gst_spdl_objects_clear (&objects);
      if (!fill)
        return FALSE;
      gst_spdl_objects_parse (&objects, "[]", 2, target->width,
          target->height, params->masks, NULL);
      gst_spdl_objects_transform (&objects, target->geom);
    }
    for (r = 0; r < GST_SPDL_OBJECTS_N_REASONS; r++)
      counts[r] += objects.counts[r];
    if (objects.warnings) {
      if (*notes == NULL)
        *notes = g_string_new (NULL);
      else
        g_string_append (*notes, "; ");
      g_string_append_printf (*notes, "field \"%s\": %s", field->name,
          objects.warnings->str);
    }
    g_value_init (&decoded, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&decoded, gst_spdl_objects_to_structure (&objects));
    gst_spdl_buffer_set_record_value (buffer, i, &decoded);
    g_value_unset (&decoded);
    gst_spdl_objects_clear (&objects);
  }
  return TRUE;
}
