/* gst-spdl test helpers
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include "spdltestutil.h"
#include "gstspdlmeta.h"

#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>

gchar *
spdl_test_make_tmpdir (void)
{
  gchar *dir = g_dir_make_tmp ("spdl-test-XXXXXX", NULL);

  fail_unless (dir != NULL);
  return dir;
}

/* SPDL_TEST_KEEP_TREES=DIR moves the trees into DIR instead: the Python
 * tests read the hostile images these tests make with PIL
 * (test_damaged_images.py) */
void
spdl_test_remove_tree (const gchar * path)
{
  const gchar *keep = g_getenv ("SPDL_TEST_KEEP_TREES");
  gchar *argv[] = { (gchar *) "rm", (gchar *) "-rf", (gchar *) path, NULL };

  if (keep && *keep) {
    argv[0] = (gchar *) "mv";
    argv[1] = (gchar *) path;
    argv[2] = (gchar *) keep;
  }

  g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
      NULL, NULL);
}

void
spdl_test_write_file (const gchar * path, const gchar * contents, gssize len)
{
  gchar *dir = g_path_get_dirname (path);

  g_mkdir_with_parents (dir, 0755);
  g_free (dir);
  fail_unless (g_file_set_contents (path, contents, len, NULL));
}

guint8
spdl_test_pattern (guint x, guint y, guint c, guint tint)
{
  /* smooth gradients so JPEG keeps them: easy to compare after decoding */
  switch (c) {
    case 0:
      return (guint8) ((x * 255 / 64 + tint) & 0xff);
    case 1:
      return (guint8) ((y * 255 / 64 + tint * 3) & 0xff);
    default:
      return (guint8) (((x + y) * 2 + tint * 7) & 0xff);
  }
}

/* a photo's soft shading: one gradient per channel over the whole image */
static guint
smooth_pattern (const SpdlTestJpeg * o, guint x, guint y, guint c)
{
  guint w = MAX (o->width, 2) - 1, h = MAX (o->height, 2) - 1;

  switch (c) {
    case 0:
      return 40 + (x * 170 / w + o->tint) % 176;
    case 1:
      return 40 + (y * 170 / h + o->tint * 3) % 176;
    default:
      return 40 + ((x + y) * 170 / (w + h) + o->tint * 7) % 176;
  }
}

/* @v plus a hash of (x, y, c) in [-noise, noise], clamped: a photo's grain */
static guint8
grain (guint v, guint x, guint y, guint c, guint noise)
{
  guint32 h = (x * 73856093u) ^ (y * 19349663u) ^ (c * 83492791u);
  gint g;

  if (noise == 0)
    return (guint8) v;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  g = (gint) v + (gint) (h % (2 * noise + 1)) - (gint) noise;
  return (guint8) CLAMP (g, 0, 255);
}

void
spdl_test_jpeg_init (SpdlTestJpeg * o, guint width, guint height)
{
  memset (o, 0, sizeof (*o));
  o->width = width;
  o->height = height;
  o->quality = 90;
  o->h_samp = o->v_samp = 2;
}

guint8 *
spdl_test_encode_jpeg (const SpdlTestJpeg * o, gsize * size)
{
  struct jpeg_compress_struct cinfo;
  struct jpeg_error_mgr jerr;
  guint channels = o->gray ? 1 : o->cmyk ? 4 : 3;
  guint8 *row = g_malloc (o->width * channels);
  unsigned char *mem = NULL;
  unsigned long mem_size = 0;
  guint8 *result;

  cinfo.err = jpeg_std_error (&jerr);
  jpeg_create_compress (&cinfo);
  jpeg_mem_dest (&cinfo, &mem, &mem_size);
  cinfo.image_width = o->width;
  cinfo.image_height = o->height;
  cinfo.input_components = channels;
  cinfo.in_color_space = o->gray ? JCS_GRAYSCALE : o->cmyk ? JCS_CMYK :
      JCS_RGB;
  jpeg_set_defaults (&cinfo);
  if (o->cmyk)
    jpeg_set_colorspace (&cinfo, JCS_YCCK);
  jpeg_set_quality (&cinfo, o->quality, TRUE);
  if (!o->gray) {
    cinfo.comp_info[0].h_samp_factor = o->h_samp;
    cinfo.comp_info[0].v_samp_factor = o->v_samp;
  }
  if (o->progressive)
    jpeg_simple_progression (&cinfo);
  cinfo.arith_code = o->arithmetic;
  cinfo.restart_interval = o->restart_interval;
  jpeg_start_compress (&cinfo, TRUE);
  while (cinfo.next_scanline < o->height) {
    guint x, c, y = cinfo.next_scanline;
    JSAMPROW rows[1] = { row };
    for (x = 0; x < o->width; x++)
      for (c = 0; c < channels; c++)
        row[x * channels + c] = grain ((o->smooth ? smooth_pattern (o, x, y,
                    c % 3) : spdl_test_pattern (x, y, c % 3, o->tint)) /
            (c == 3 ? 2 : 1), x, y, c, o->noise);
    jpeg_write_scanlines (&cinfo, rows, 1);
  }
  jpeg_finish_compress (&cinfo);
  jpeg_destroy_compress (&cinfo);
  g_free (row);
  result = g_memdup2 (mem, mem_size);
  *size = mem_size;
  free (mem);
  return result;
}

guint8 *
spdl_test_decode_reference (const guint8 * data, gsize size, guint * width,
    guint * height)
{
  struct jpeg_decompress_struct cinfo;
  struct jpeg_error_mgr jerr;
  guint8 *pixels;

  cinfo.err = jpeg_std_error (&jerr);
  jpeg_create_decompress (&cinfo);
  jpeg_mem_src (&cinfo, data, size);
  jpeg_read_header (&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  cinfo.dct_method = JDCT_ISLOW;
  jpeg_start_decompress (&cinfo);
  *width = cinfo.output_width;
  *height = cinfo.output_height;
  pixels = g_malloc ((gsize) *width * *height * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = pixels + (gsize) cinfo.output_scanline * *width * 3;
    jpeg_read_scanlines (&cinfo, &row, 1);
  }
  jpeg_finish_decompress (&cinfo);
  jpeg_destroy_decompress (&cinfo);
  return pixels;
}

void
spdl_test_write_jpeg (const gchar * path, guint width, guint height,
    guint tint, gint quality, gboolean gray, gboolean progressive)
{
  SpdlTestJpeg o;
  guint8 *data;
  gsize size;

  spdl_test_jpeg_init (&o, width, height);
  o.tint = tint;
  o.quality = quality;
  o.gray = gray;
  o.progressive = progressive;
  data = spdl_test_encode_jpeg (&o, &size);
  spdl_test_write_file (path, (const gchar *) data, size);
  g_free (data);
}

gchar *
spdl_test_make_image_folder (guint n_classes, guint per_class, guint width,
    guint height)
{
  gchar *root = spdl_test_make_tmpdir ();
  guint c, i;

  for (c = 0; c < n_classes; c++) {
    for (i = 0; i < per_class; i++) {
      gchar *path = g_strdup_printf ("%s/class%02u/img%03u.jpg", root, c, i);
      spdl_test_write_jpeg (path, width, height, c * 16 + i, 90, FALSE, FALSE);
      g_free (path);
    }
  }
  return root;
}

static void
item_free (SpdlTestItem * item)
{
  g_free (item->path);
  if (item->buffer)
    gst_buffer_unref (item->buffer);
  if (item->caps)
    gst_caps_unref (item->caps);
  g_free (item);
}

static void
add_event_item (SpdlTestRun * run, GstEvent * event)
{
  guint epoch;
  guint64 samples;

  if (gst_spdl_is_epoch_end_event (event) &&
      gst_spdl_epoch_end_parse (gst_event_get_structure (event), &epoch,
          &samples)) {
    SpdlTestItem *item = g_new0 (SpdlTestItem, 1);
    item->is_epoch_end = TRUE;
    item->epoch = epoch;
    item->index = samples;
    g_ptr_array_add (run->items, item);
  }
}

static void
add_sample_item (SpdlTestRun * run, GstSample * sample)
{
  SpdlTestItem *item = g_new0 (SpdlTestItem, 1);
  GstBuffer *buffer = gst_sample_get_buffer (sample);
  GstSpdlSampleInfo info;

  item->buffer = gst_buffer_ref (buffer);
  item->caps = gst_caps_ref (gst_sample_get_caps (sample));
  if (gst_spdl_buffer_get_sample_info (buffer, &info)) {
    item->index = info.index;
    item->label = info.label;
    item->epoch = info.epoch;
    item->path = g_strdup (info.path);
  }
  g_ptr_array_add (run->items, item);
}

/* Handles one bus message; TRUE when the run is over. */
static gboolean
handle_message (SpdlTestRun * run, GstMessage * msg)
{
  GError *err = NULL;
  gchar *debug = NULL;

  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_WARNING:
      gst_message_parse_warning (msg, &err, &debug);
      run->warnings = g_list_append (run->warnings, g_strdup (err->message));
      break;
    case GST_MESSAGE_ERROR:
      gst_message_parse_error (msg, &err, &debug);
      if (run->error == NULL) {
        run->error = g_strdup (err->message);
        run->error_debug = g_strdup (debug);
      }
      g_free (debug);
      g_error_free (err);
      return TRUE;
    case GST_MESSAGE_EOS:
      return TRUE;
    case GST_MESSAGE_ELEMENT:
      if (gst_message_has_name (msg, GST_SPDL_SKIPPED_NAME)) {
        GstStructure *s = gst_structure_copy (gst_message_get_structure (msg));
        gst_structure_set (s, "element", G_TYPE_STRING,
            GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), NULL);
        run->skipped = g_list_append (run->skipped, s);
      }
      break;
    default:
      break;
  }
  g_free (debug);
  g_clear_error (&err);
  return FALSE;
}

SpdlTestRun *
spdl_test_run (const gchar * launch)
{
  return spdl_test_run_with_hook (launch, NULL, NULL);
}

SpdlTestRun *
spdl_test_run_with_hook (const gchar * launch, SpdlTestHook paused_hook,
    gpointer user_data)
{
  gchar *full = g_strdup_printf ("%s ! appsink name=sink sync=false", launch);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (full, &error);
  GstElement *sink;
  GstBus *bus;
  SpdlTestRun *run = g_new0 (SpdlTestRun, 1);
  gint64 deadline = g_get_monotonic_time () + 60 * G_TIME_SPAN_SECOND;
  gboolean done = FALSE;

  fail_unless (pipeline != NULL, "could not parse %s: %s", full,
      error ? error->message : "?");
  g_free (full);
  run->items = g_ptr_array_new_with_free_func ((GDestroyNotify) item_free);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  bus = gst_element_get_bus (pipeline);
  if (paused_hook) {
    gst_element_set_state (pipeline, GST_STATE_PAUSED);
    gst_element_get_state (pipeline, NULL, NULL, 10 * GST_SECOND);
    paused_hook (pipeline, user_data);
  }
  gst_element_set_state (pipeline, GST_STATE_PLAYING);

  while (!done) {
    GstMiniObject *obj;
    GstMessage *msg;

    fail_unless (g_get_monotonic_time () < deadline, "pipeline timed out");
    while ((msg = gst_bus_pop (bus)) != NULL) {
      done |= handle_message (run, msg);
      gst_message_unref (msg);
    }
    if (done)
      break;
    obj = gst_app_sink_try_pull_object (GST_APP_SINK (sink),
        20 * GST_MSECOND);
    if (obj == NULL)
      continue;
    if (GST_IS_SAMPLE (obj)) {
      add_sample_item (run, GST_SAMPLE (obj));
    } else if (GST_IS_EVENT (obj)) {
      add_event_item (run, GST_EVENT (obj));
    }
    gst_mini_object_unref (obj);
  }
  /* drain what the sink still holds (EOS arrives after the last item) */
  if (run->error == NULL) {
    GstMiniObject *obj;
    while ((obj = gst_app_sink_try_pull_object (GST_APP_SINK (sink), 0))) {
      if (GST_IS_SAMPLE (obj))
        add_sample_item (run, GST_SAMPLE (obj));
      else if (GST_IS_EVENT (obj))
        add_event_item (run, GST_EVENT (obj));
      gst_mini_object_unref (obj);
    }
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return run;
}

guint
spdl_test_run_count_samples (SpdlTestRun * run)
{
  guint i, n = 0;

  for (i = 0; i < run->items->len; i++)
    n += !((SpdlTestItem *) g_ptr_array_index (run->items, i))->is_epoch_end;
  return n;
}

guint64
spdl_test_run_skipped (SpdlTestRun * run, const gchar * element,
    const gchar * reason)
{
  GList *l;
  guint64 n = G_MAXUINT64;

  for (l = run->skipped; l; l = l->next) {
    const gchar *name = gst_structure_get_string (l->data, "element");
    /* the run's totals, not an epoch's */
    if (g_str_has_prefix (name, element) &&
        !gst_structure_has_field (l->data, "epoch"))
      fail_unless (gst_structure_get_uint64 (l->data, reason, &n),
          "no %s count from %s", reason, name);
  }
  fail_if (n == G_MAXUINT64, "%s posted no spdl-skipped", element);
  return n;
}

gboolean
spdl_test_run_warned (SpdlTestRun * run, const gchar * file, const gchar * why)
{
  GList *l;

  for (l = run->warnings; l; l = l->next)
    if (strstr (l->data, file) && strstr (l->data, why))
      return TRUE;
  return FALSE;
}

const GstStructure *
spdl_test_run_epoch_skipped (SpdlTestRun * run, const gchar * element,
    guint epoch)
{
  GList *l;

  for (l = run->skipped; l; l = l->next) {
    const gchar *name = gst_structure_get_string (l->data, "element");
    guint e;
    if (g_str_has_prefix (name, element) &&
        gst_structure_get_uint (l->data, "epoch", &e) && e == epoch)
      return l->data;
  }
  return NULL;
}

void
spdl_test_run_free (SpdlTestRun * run)
{
  g_ptr_array_unref (run->items);
  g_list_free_full (run->warnings, g_free);
  g_free (run->error);
  g_free (run->error_debug);
  g_list_free_full (run->skipped, (GDestroyNotify) gst_structure_free);
  g_free (run);
}

/* ------------------------------------------------------------------------ */
/* Tar archives                                                             */

static void
put_octal (guint8 * field, gsize len, guint64 value)
{
  g_snprintf ((gchar *) field, len, "%0*" G_GINT64_MODIFIER "o",
      (int) len - 1, value);
}

void
spdl_test_tar_header (GByteArray * tar, const gchar * name, gchar type,
    guint64 size, const gchar * prefix)
{
  guint8 h[512] = { 0, };
  guint sum = 0, i;

  strncpy ((gchar *) h, name, 100);
  put_octal (h + 100, 8, 0644);
  put_octal (h + 108, 8, 0);
  put_octal (h + 116, 8, 0);
  put_octal (h + 124, 12, size);
  put_octal (h + 136, 12, 0);
  h[156] = type;
  memcpy (h + 257, "ustar", 6);
  memcpy (h + 263, "00", 2);
  if (prefix)
    strncpy ((gchar *) h + 345, prefix, 155);
  memset (h + 148, ' ', 8);
  for (i = 0; i < 512; i++)
    sum += h[i];
  g_snprintf ((gchar *) h + 148, 8, "%06o", sum);
  g_byte_array_append (tar, h, 512);
}

void
spdl_test_tar_data (GByteArray * tar, const guint8 * data, gsize len)
{
  static const guint8 zeros[512] = { 0, };

  g_byte_array_append (tar, data, len);
  g_byte_array_append (tar, zeros, (512 - len % 512) % 512);
}

void
spdl_test_tar_file (GByteArray * tar, const gchar * name, const gchar * data)
{
  spdl_test_tar_header (tar, name, '0', strlen (data), NULL);
  spdl_test_tar_data (tar, (const guint8 *) data, strlen (data));
}

gsize
spdl_test_tar_sample (GByteArray * tar, const gchar * key, const gchar * data,
    gint label)
{
  gchar *image = g_strdup_printf ("%s.jpg", key);
  gchar *cls = g_strdup_printf ("%s.cls", key);
  gchar *text = g_strdup_printf ("%d", label);
  gsize data_offset = tar->len + 512;

  spdl_test_tar_file (tar, image, data);
  spdl_test_tar_file (tar, cls, text);
  g_free (image);
  g_free (cls);
  g_free (text);
  return data_offset;
}
