/* GStreamer SPDL: dataset listing
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

#include "gstspdldataset.h"
#include "gstspdlformat.h"
#include "gstspdlerrors.h"
#include "gstspdltable.h"
#include "gstspdljson.h"
#include "gstspdlshards.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Samples are counted in guint and their arrays grow by doubling: bounded
 * where neither can wrap (a manifest of billions of lines would otherwise
 * make the arrays shrink under the samples written to them). */
#define MAX_SAMPLES ((guint) G_MAXINT32)

static gboolean
too_many_samples (const gchar * location, GError ** error)
{
  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
      "Dataset \"%s\" holds more than %u samples, the most gst-spdl lists",
      location, MAX_SAMPLES);
  return FALSE;
}

/* FALSE when the dataset is full (MAX_SAMPLES) */
static gboolean
dataset_append (GstSpdlDataset * ds, const gchar * dir, gsize dir_len,
    const gchar * name, gsize name_len, gint32 label)
{
  gsize need = dir_len + (dir_len ? 1 : 0) + name_len + 1;
  gchar *p;

  if (ds->n_samples == MAX_SAMPLES)
    return FALSE;

  if (ds->arena_len + need > ds->arena_size) {
    ds->arena_size = MAX (ds->arena_size * 2, ds->arena_len + need + 4096);
    ds->arena = g_realloc (ds->arena, ds->arena_size);
  }
  if (ds->n_samples == ds->n_allocated) {
    ds->n_allocated = MIN (MAX (1024, (guint64) ds->n_allocated * 2),
        MAX_SAMPLES);
    ds->offsets = g_renew (guint64, ds->offsets, ds->n_allocated);
    ds->labels = g_renew (gint32, ds->labels, ds->n_allocated);
  }
  p = ds->arena + ds->arena_len;
  if (dir_len) {
    memcpy (p, dir, dir_len);
    p[dir_len] = '/';
    p += dir_len + 1;
  }
  memcpy (p, name, name_len);
  p[name_len] = '\0';
  ds->offsets[ds->n_samples] = ds->arena_len;
  ds->labels[ds->n_samples] = label;
  ds->n_samples++;
  ds->arena_len += need;
  return TRUE;
}

/* Trims the arrays to their final size: listing grows them by doubling. */
static void
dataset_shrink (GstSpdlDataset * ds)
{
  ds->arena = g_realloc (ds->arena, MAX (ds->arena_len, 1));
  ds->arena_size = ds->arena_len;
  ds->offsets = g_renew (guint64, ds->offsets, MAX (ds->n_samples, 1));
  ds->labels = g_renew (gint32, ds->labels, MAX (ds->n_samples, 1));
  ds->n_allocated = ds->n_samples;
  if (ds->n_fields > 0) {
    ds->field_offsets = g_renew (guint64, ds->field_offsets,
        MAX ((gsize) ds->n_samples * ds->n_fields, 1));
    ds->field_arena = g_realloc (ds->field_arena,
        MAX (ds->field_arena_len, 1));
    ds->field_arena_size = ds->field_arena_len;
  }
  if (ds->span_starts) {
    gsize n = MAX (ds->n_samples, 1);

    ds->span_starts = g_renew (gdouble, ds->span_starts, n);
    ds->span_durations = g_renew (gdouble, ds->span_durations, n);
    ds->span_bad = g_renew (guint8, ds->span_bad, n);
    ds->lines = g_renew (guint64, ds->lines, n);
  }
}

/* ------------------------------------------------------------------------ */
/* ImageFolder                                                              */

static gboolean
has_extension (const gchar * name, gchar ** extensions)
{
  const gchar *dot = strrchr (name, '.');
  gchar **ext;

  if (dot == NULL)
    return FALSE;
  for (ext = extensions; *ext; ext++) {
    if (g_ascii_strcasecmp (dot + 1, *ext) == 0)
      return TRUE;
  }
  return FALSE;
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

typedef struct
{
  GstSpdlDataset *ds;
  const gchar *root;
  gchar **extensions;
  const GstSpdlRecord *record;  /* sidecars' names */
  GPtrArray *dirs;              /* relative folder paths, any order */
  GHashTable *visiting;         /* "dev:ino" of the folders on the walk */
} FolderWalk;

static gboolean
is_directory (const gchar * full, gboolean * is_dir)
{
  struct stat st;

  /* follows symlinks, as torchvision's os.walk(followlinks=True) does */
  if (stat (full, &st) != 0) {
    *is_dir = FALSE;
    return FALSE;
  }
  *is_dir = S_ISDIR (st.st_mode);
  return TRUE;
}

static void
add_folder_warning (GstSpdlDataset * ds, const gchar * folder,
    const gchar * reason)
{
  gchar *name = g_filename_display_name (folder);

  g_ptr_array_add (ds->warnings, g_strdup_printf ("Skipping folder \"%s\": "
          "%s", name, reason));
  g_free (name);
}

/* Collects @rel and every folder below it. A folder already on the current
 * walk (a symlink loop) is not entered again. */
static void
collect_folders (FolderWalk * walk, const gchar * rel)
{
  gchar *full = g_build_filename (walk->root, rel, NULL);
  struct stat st;
  gchar *key;
  DIR *dir;
  struct dirent *ent;

  if (stat (full, &st) != 0 || (dir = opendir (full)) == NULL) {
    add_folder_warning (walk->ds, full, g_strerror (errno));
    g_free (full);
    return;
  }
  key = g_strdup_printf ("%lu:%lu", (gulong) st.st_dev, (gulong) st.st_ino);
  if (g_hash_table_contains (walk->visiting, key)) {
    add_folder_warning (walk->ds, full,
        "a symlink loop (it leads back to a folder above it)");
    closedir (dir);
    g_free (key);
    g_free (full);
    return;
  }
  g_hash_table_add (walk->visiting, key);
  g_ptr_array_add (walk->dirs, g_strdup (rel));
  while ((ent = readdir (dir)) != NULL) {
    gboolean is_dir = FALSE;
    gchar *child;

    if (ent->d_name[0] == '.' && (ent->d_name[1] == '\0' ||
            (ent->d_name[1] == '.' && ent->d_name[2] == '\0')))
      continue;
    if (ent->d_type == DT_DIR) {
      is_dir = TRUE;
    } else if (ent->d_type == DT_LNK || ent->d_type == DT_UNKNOWN) {
      gchar *child_full = g_build_filename (full, ent->d_name, NULL);
      is_directory (child_full, &is_dir);
      g_free (child_full);
    }
    if (!is_dir)
      continue;
    child = g_strconcat (rel, "/", ent->d_name, NULL);
    collect_folders (walk, child);
    g_free (child);
  }
  closedir (dir);
  g_hash_table_remove (walk->visiting, key);    /* frees key */
  g_free (full);
}

/* Whether @name is "STEM.ALT" for an alternative ALT of a field, or
 * "STEM.X.EXT" (webdataset's key: the name up to its first dot), for a
 * STEM in @stems other than its own: "x.seg.png" beside "x.jpg" is never a
 * sample of its own, whether a field names it or not. */
static gboolean
is_sidecar (const gchar * name, GHashTable * stems,
    const GstSpdlRecord * record)
{
  gsize len = strlen (name);
  const gchar *own_dot = strrchr (name, '.');
  const gchar *dot;
  guint f, a;

  for (dot = strchr (name, '.'); dot && dot != own_dot;
      dot = strchr (dot + 1, '.')) {
    gchar *stem = g_strndup (name, dot - name);
    gboolean found = g_hash_table_contains (stems, stem);

    g_free (stem);
    if (found)
      return TRUE;
  }

  for (f = 0; f < record->n_fields; f++) {
    for (a = 0; record->fields[f].alternatives[a]; a++) {
      const gchar *alt = record->fields[f].alternatives[a];
      gsize alt_len = strlen (alt);
      gchar *stem;
      gboolean found;

      if (len <= alt_len + 1 || name[len - alt_len - 1] != '.' ||
          g_ascii_strcasecmp (name + len - alt_len, alt) != 0 ||
          name + len - alt_len - 1 == own_dot)
        continue;
      stem = g_strndup (name, len - alt_len - 1);
      found = g_hash_table_contains (stems, stem);
      g_free (stem);
      if (found)
        return TRUE;
    }
  }
  return FALSE;
}

/* Leaves out of @names (a folder's images) the sidecars of the others
 * ("x.seg.png" beside "x.jpg" for a field "seg.png"). */
static void
remove_sidecars (GPtrArray * names, const GstSpdlRecord * record)
{
  GHashTable *stems = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  guint i;

  for (i = 0; i < names->len; i++) {
    const gchar *name = g_ptr_array_index (names, i);
    const gchar *dot = strrchr (name, '.');
    g_hash_table_add (stems, g_strndup (name, dot ? dot - name :
            (gssize) strlen (name)));
  }
  for (i = names->len; i-- > 0;)
    if (is_sidecar (g_ptr_array_index (names, i), stems, record))
      g_ptr_array_remove_index (names, i);
  g_hash_table_unref (stems);
}

/* Appends the matching files of one folder, sorted by name; FALSE when
 * they do not fit (MAX_SAMPLES). */
static gboolean
list_folder_files (GstSpdlDataset * ds, FolderWalk * walk, const gchar * rel,
    gint32 label)
{
  gchar *full = g_build_filename (walk->root, rel, NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  DIR *dir = opendir (full);
  struct dirent *ent;
  gsize rel_len = strlen (rel);
  gboolean ok = TRUE;
  guint i;

  while (dir && (ent = readdir (dir)) != NULL) {
    gboolean is_dir = FALSE;

    if (ent->d_type == DT_DIR || !has_extension (ent->d_name, walk->extensions))
      continue;
    if (ent->d_type == DT_LNK || ent->d_type == DT_UNKNOWN) {
      gchar *child_full = g_build_filename (full, ent->d_name, NULL);
      is_directory (child_full, &is_dir);
      g_free (child_full);
      if (is_dir)
        continue;
    }
    g_ptr_array_add (names, g_strdup (ent->d_name));
  }
  if (dir)
    closedir (dir);
  g_ptr_array_sort (names, compare_strings);
  if (walk->record && walk->record->n_fields > 0)
    remove_sidecars (names, walk->record);
  for (i = 0; ok && i < names->len; i++) {
    const gchar *name = g_ptr_array_index (names, i);
    ok = dataset_append (ds, rel, rel_len, name, strlen (name), label);
  }
  g_ptr_array_unref (names);
  g_free (full);
  return ok;
}

static GPtrArray *
list_class_folders (const gchar * root, GError ** error)
{
  GPtrArray *classes = g_ptr_array_new_with_free_func (g_free);
  DIR *dir = opendir (root);
  struct dirent *ent;

  if (dir == NULL) {
    gint err = errno;
    gchar *name = g_filename_display_name (root);
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
        "Could not open dataset folder \"%s\": %s", name, g_strerror (err));
    g_free (name);
    g_ptr_array_unref (classes);
    return NULL;
  }
  while ((ent = readdir (dir)) != NULL) {
    gboolean is_dir = FALSE;
    gchar *full;

    /* hidden folders are classes too (.ipynb_checkpoints): torchvision's
     * find_classes() counts every folder, and labels must match it */
    if (ent->d_name[0] == '.' && (ent->d_name[1] == '\0' ||
            (ent->d_name[1] == '.' && ent->d_name[2] == '\0')))
      continue;
    full = g_build_filename (root, ent->d_name, NULL);
    is_directory (full, &is_dir);
    g_free (full);
    if (is_dir)
      g_ptr_array_add (classes, g_strdup (ent->d_name));
  }
  closedir (dir);
  g_ptr_array_sort (classes, compare_strings);
  return classes;
}

/* A class folder without a sample keeps its label, as torchvision's
 * find_classes() gives it (its ImageFolder refuses such a tree). */
static void
add_empty_class_warning (GstSpdlDataset * ds, const gchar * folder,
    guint label)
{
  gchar *name = g_filename_display_name (folder);

  g_ptr_array_add (ds->warnings, g_strdup_printf ("Class folder \"%s\" "
          "holds no image: it still takes label %u, as torchvision's "
          "ImageFolder counts it (and then refuses the tree)", name, label));
  g_free (name);
}

/* Same samples, labels and order as torchvision.datasets.ImageFolder:
 * classes are the sorted top folders; within a class, folders sorted by
 * path (os.walk sorted), files sorted by name. */
static gboolean
load_image_folder (GstSpdlDataset * ds, const gchar * root,
    gchar ** extensions, const GstSpdlRecord * record, GError ** error)
{
  GPtrArray *classes = list_class_folders (root, error);
  gboolean ok = TRUE;
  guint c, d;

  if (classes == NULL)
    return FALSE;
  /* a class folder that cannot be read would be a class without samples:
   * its label missing from training, silently (torchvision's ImageFolder
   * refuses such a tree) */
  for (c = 0; c < classes->len; c++) {
    gchar *full = g_build_filename (root, g_ptr_array_index (classes, c),
        NULL);
    DIR *dir = opendir (full);

    if (dir == NULL) {
      gint err = errno;
      gchar *name = g_filename_display_name (full);

      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
          "Class folder \"%s\" cannot be read: %s", name, g_strerror (err));
      g_free (name);
      g_free (full);
      g_ptr_array_unref (classes);
      return FALSE;
    }
    closedir (dir);
    g_free (full);
  }
  ds->n_classes = classes->len;
  for (c = 0; ok && c < classes->len; c++) {
    FolderWalk walk = { ds, root, extensions, record,
      g_ptr_array_new_with_free_func (g_free),
      g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL)
    };

    guint64 before = ds->n_samples;

    collect_folders (&walk, g_ptr_array_index (classes, c));
    g_ptr_array_sort (walk.dirs, compare_strings);
    for (d = 0; ok && d < walk.dirs->len; d++)
      ok = list_folder_files (ds, &walk, g_ptr_array_index (walk.dirs, d),
          c);
    g_ptr_array_unref (walk.dirs);
    g_hash_table_unref (walk.visiting);
    if (ds->n_samples == before)
      add_empty_class_warning (ds, g_ptr_array_index (classes, c), c);
  }
  g_ptr_array_add (classes, NULL);
  ds->class_names = (gchar **) g_ptr_array_free (classes, FALSE);
  if (!ok) {
    gchar *display = g_filename_display_name (root);
    too_many_samples (display, error);
    g_free (display);
  }
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Manifest: one "relative/path<TAB>label" per line                         */

/* A manifest line quoted in an error: valid UTF-8, cut on a character
 * boundary. */
static gchar *
quote_line (const gchar * line, gsize len)
{
  return gst_spdl_utf8_prefix (line, len, 80);
}

static gboolean
parse_manifest_line (GstSpdlDataset * ds, gchar * line, gssize len,
    const gchar * location, guint64 line_no, GError ** error)
{
  gchar *tab, *end, *quoted;
  gint64 label;

  /* a UTF-8 byte-order mark before the first line (Windows editors) */
  if (line_no == 1 && len >= 3 && memcmp (line, "\xEF\xBB\xBF", 3) == 0) {
    line += 3;
    len -= 3;
  }
  while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
    line[--len] = '\0';
  if (len == 0 || line[0] == '#')
    return TRUE;
  /* the label follows the last tab: a path may hold tabs itself */
  tab = g_strrstr_len (line, len, "\t");
  if (tab == NULL || tab == line) {
    quoted = quote_line (line, len);
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
        "%s:%" G_GUINT64_FORMAT ": expected \"relative/path<TAB>label\", "
        "got \"%s\"", location, line_no, quoted);
    g_free (quoted);
    return FALSE;
  }
  errno = 0;
  label = g_ascii_strtoll (tab + 1, &end, 10);
  if (end == tab + 1 || *end != '\0' || errno != 0 || label < 0 ||
      label > G_MAXINT32) {
    quoted = gst_spdl_utf8_prefix (tab + 1, -1, 40);
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
        "%s:%" G_GUINT64_FORMAT ": label \"%s\" is not a non-negative "
        "integer", location, line_no, quoted);
    g_free (quoted);
    return FALSE;
  }
  if (!dataset_append (ds, NULL, 0, line, tab - line, (gint32) label))
    return too_many_samples (location, error);
  ds->n_classes = MAX (ds->n_classes, (guint) label + 1);
  return TRUE;
}

/* An image given as the location (a common slip): the format whose
 * signature @file starts with, else NULL. Only signatures no manifest line
 * starts with (BMP's "BM" and PNM's "P6 " could). */
static const gchar *
image_instead_of_manifest (FILE * file)
{
  guint8 head[16];
  gsize n = fread (head, 1, sizeof (head), file);
  GstSpdlImageFormat format = gst_spdl_image_format_sniff (head, n);

  rewind (file);
  switch (format) {
    case GST_SPDL_IMAGE_FORMAT_JPEG:
    case GST_SPDL_IMAGE_FORMAT_PNG:
    case GST_SPDL_IMAGE_FORMAT_WEBP:
    case GST_SPDL_IMAGE_FORMAT_GIF:
    case GST_SPDL_IMAGE_FORMAT_TIFF:
      return gst_spdl_image_format_name (format);
    default:
      return NULL;
  }
}

/* The lines of @file (a manifest file, or bytes through fmemopen()). */
static gboolean
read_manifest (GstSpdlDataset * ds, FILE * file, const gchar * display,
    GError ** error)
{
  gchar *line = NULL;
  gsize cap = 0;
  gssize len;
  guint64 line_no = 0;
  gboolean ok = TRUE;
  const gchar *image;

  if ((image = image_instead_of_manifest (file))) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "\"%s\" is a %s image, not a dataset: location takes a folder of "
        "class folders or a manifest of \"relative/path<TAB>label\" lines",
        display, image);
    return FALSE;
  }
  while (ok && (len = getline (&line, &cap, file)) >= 0)
    ok = parse_manifest_line (ds, line, len, display, ++line_no, error);
  if (ok && ferror (file)) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
        "Could not read manifest \"%s\": %s", display, g_strerror (errno));
    ok = FALSE;
  }
  free (line);
  return ok;
}

static gboolean
load_manifest (GstSpdlDataset * ds, const gchar * location, GError ** error)
{
  FILE *file = fopen (location, "re");
  gchar *display = g_filename_display_name (location);
  gboolean ok;

  if (file == NULL) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
        "Could not open manifest \"%s\": %s", display, g_strerror (errno));
    g_free (display);
    return FALSE;
  }
  ok = read_manifest (ds, file, display, error);
  fclose (file);
  g_free (display);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Manifests with a header: CSV, TSV, JSON Lines (gstspdltable.h)           */

static const gchar *const path_columns[] = { "path", "image", "filepath",
  "file_name", "filename", "file", "audio_filepath", "audio_filename",
  "video", NULL
};

/* the span columns, wanted after the fields' */
enum
{
  SPAN_OFFSET,
  SPAN_START,
  SPAN_DURATION,
  SPAN_END,
  N_SPAN_COLUMNS,
};
static const gchar *const span_columns[N_SPAN_COLUMNS] = { "offset", "start",
  "duration", "end"
};

/* NeMo's transcript: a field named "text" takes the first of these */
static const gchar *const text_columns[] = { "text", "text_filepath",
  "normalized_text", NULL
};

#define TEXT_FILE_COLUMN 1      /* text_filepath: a file to read */
/* a field value's length in the arena: its top bit marks a file path */
#define FIELD_IS_FILE 0x80000000u

typedef struct
{
  GstSpdlDataset *ds;
  const GstSpdlDatasetOptions *options;
  GstSpdlTableFormat format;
  const gchar *name;
  gchar *path_column;
  guint *field_column;          /* per field: its first wanted column */
  guint *field_n_columns;
  gboolean *field_is_text;      /* NeMo's transcript columns */
  guint span_column;            /* the wanted column of "offset" */
  gboolean nemo;
  gboolean spans;
  /* JSON Lines: keys differ from row to row, the first row's are no
   * header; spans are read from every row, and kept when any has one */
  gboolean audio_rows;          /* paths under NeMo's keys */
  gboolean any_span, any_duration;
  /* a path formed from columns ("{page_dir}/{videoid}.mp4"): text and
   * column names in turn, the columns wanted from @template_column on */
  gchar **template;
  guint template_column;
  /* NeMo's other path key, taken row by row as NeMo does (0: none) */
  guint other_path_column;
  GString *path;
  gsize field_capacity;         /* samples @ds->field_offsets holds */
  gsize span_capacity;          /* ... and the span arrays */
} TableLoad;

static gboolean
is_text_field (const GstSpdlField * field)
{
  return field->path == NULL && field->alternatives[0] &&
      field->alternatives[1] == NULL &&
      strcmp (field->alternatives[0], "text") == 0;
}

/* "{page_dir}/{videoid}.mp4" as { "", "page_dir", "/", "videoid", ".mp4" }
 * (text, then a column, in turn); NULL when a brace is not closed or
 * names nothing. */
static gchar **
parse_path_template (const gchar * text)
{
  GPtrArray *parts = g_ptr_array_new_with_free_func (g_free);
  const gchar *p = text;

  for (;;) {
    const gchar *open = strchr (p, '{'), *close;

    g_ptr_array_add (parts, g_strndup (p, open ? (gsize) (open - p) :
            strlen (p)));
    if (open == NULL)
      break;
    close = strchr (open, '}');
    if (close == NULL || close == open + 1) {
      g_ptr_array_unref (parts);
      return NULL;
    }
    g_ptr_array_add (parts, g_strndup (open + 1, close - open - 1));
    p = close + 1;
  }
  g_ptr_array_add (parts, NULL);
  g_ptr_array_set_free_func (parts, NULL);
  return (gchar **) g_ptr_array_free (parts, FALSE);
}

/* The row's path from the template into load->path. */
static gboolean
template_path (TableLoad * load, const GstSpdlTableCell * cells,
    guint64 line, GError ** error)
{
  guint i, k;

  g_string_truncate (load->path, 0);
  for (i = 0, k = 0; load->template[i]; i++) {
    const GstSpdlTableCell *cell;

    if (i % 2 == 0) {
      g_string_append (load->path, load->template[i]);
      continue;
    }
    cell = &cells[load->template_column + k++];
    if (cell->data == NULL || cell->len == 0) {
      gchar *what = g_strdup_printf ("no path (column \"%s\" of "
          "path-column \"%s\")", load->template[i], load->path_column);
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
          "%s:%" G_GUINT64_FORMAT ": %s", load->name, line, what);
      g_free (what);
      return FALSE;
    }
    g_string_append_len (load->path, cell->data, cell->len);
  }
  return TRUE;
}

static gchar **
table_header (const gchar * const *columns, guint n, guint64 line,
    gpointer user_data, GError ** error)
{
  TableLoad *load = user_data;
  const GstSpdlRecord *record = load->options->record;
  GPtrArray *wanted = g_ptr_array_new ();
  const gchar *path = load->options->path_column;
  guint i, f;

  if (path == NULL) {
    for (i = 0; path == NULL && path_columns[i]; i++)
      if (g_strv_contains (columns, path_columns[i]))
        path = path_columns[i];
  }
  if (path && strchr (path, '{')) {
    const gchar *missing = NULL;

    load->template = parse_path_template (path);
    for (i = 1; load->template && load->template[i - 1] &&
        load->template[i] && missing == NULL; i += 2)
      if (!g_strv_contains (columns, load->template[i]))
        missing = load->template[i];
    if (load->template == NULL || missing) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "%s:%" G_GUINT64_FORMAT ": path-column \"%s\" %s%s%s", load->name,
          line, path, missing ? "names no column \"" :
          "is no template of {column} names", missing ? missing : "",
          missing ? "\"" : "");
      g_ptr_array_unref (wanted);
      return NULL;
    }
  } else if (path == NULL || (load->options->path_column &&
          !g_strv_contains (columns, path))) {
    gchar *names = g_strjoinv (", ", (gchar **) columns);
    gchar *shown = gst_spdl_utf8_prefix (names, -1, 200);

    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "%s:%" G_GUINT64_FORMAT ": %s (its columns: %s)", load->name, line,
        path ? "no such path column (path-column)" : "no path column: "
        "name one with path-column, or call it path, image, filepath, "
        "file_name, filename, file, audio_filepath, audio_filename or video",
        shown);
    g_free (shown);
    g_free (names);
    g_ptr_array_unref (wanted);
    return NULL;
  }
  load->path_column = g_strdup (path);
  /* NeMo's: its rows need a duration (a JSON Lines list of audio files
   * without durations in its first row is one of whole files) */
  load->audio_rows = load->format == GST_SPDL_TABLE_JSONL &&
      (strcmp (path, "audio_filepath") == 0 ||
      strcmp (path, "audio_filename") == 0);
  load->nemo = load->audio_rows && g_strv_contains (columns, "duration");
  load->spans = load->nemo || load->format == GST_SPDL_TABLE_JSONL;
  for (i = 0; i < N_SPAN_COLUMNS; i++)
    load->spans |= g_strv_contains (columns, span_columns[i]);
  g_ptr_array_add (wanted, g_strdup (path));
  g_ptr_array_add (wanted, g_strdup ("label"));
  f = record ? record->n_fields : 0;
  load->field_column = g_new0 (guint, MAX (f, 1));
  load->field_n_columns = g_new0 (guint, MAX (f, 1));
  load->field_is_text = g_new0 (gboolean, MAX (f, 1));
  for (f = 0; record && f < record->n_fields; f++) {
    const GstSpdlField *field = &record->fields[f];

    load->field_column[f] = wanted->len;
    load->field_is_text[f] = is_text_field (field);
    if (load->field_is_text[f]) {
      for (i = 0; text_columns[i]; i++)
        g_ptr_array_add (wanted, g_strdup (text_columns[i]));
    } else {
      for (i = 0; field->alternatives[i]; i++)
        g_ptr_array_add (wanted, g_strdup (field->alternatives[i]));
    }
    load->field_n_columns[f] = wanted->len - load->field_column[f];
  }
  load->span_column = wanted->len;
  for (i = 0; i < N_SPAN_COLUMNS; i++)
    g_ptr_array_add (wanted, g_strdup (span_columns[i]));
  load->template_column = wanted->len;
  for (i = 1; load->template && load->template[i - 1] && load->template[i];
      i += 2)
    g_ptr_array_add (wanted, g_strdup (load->template[i]));
  if (load->format == GST_SPDL_TABLE_JSONL &&
      load->options->path_column == NULL &&
      (strcmp (path, "audio_filepath") == 0 ||
          strcmp (path, "audio_filename") == 0)) {
    load->other_path_column = wanted->len;
    g_ptr_array_add (wanted, g_strdup (strcmp (path, "audio_filepath") ?
            "audio_filepath" : "audio_filename"));
  }
  g_ptr_array_add (wanted, NULL);
  return (gchar **) g_ptr_array_free (wanted, FALSE);
}

static gboolean
table_fail (GError ** error, TableLoad * load, guint64 line,
    const gchar * what, const GstSpdlTableCell * cell)
{
  gchar *shown = cell ? gst_spdl_utf8_prefix (cell->data, cell->len, 40) :
      NULL;

  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
      "%s:%" G_GUINT64_FORMAT ": %s%s%s%s", load->name, line, what,
      shown ? " \"" : "", shown ? shown : "", shown ? "\"" : "");
  g_free (shown);
  return FALSE;
}

/* A field's value into the arena: its length (its top bit @flags) then its
 * bytes. */
static guint64
field_arena_append (GstSpdlDataset * ds, const gchar * data, gsize len,
    guint32 flags)
{
  guint32 len32 = (guint32) len | flags;
  guint64 offset = ds->field_arena_len;

  if (ds->field_arena_len + 4 + len > ds->field_arena_size) {
    ds->field_arena_size = MAX (ds->field_arena_size * 2,
        ds->field_arena_len + 4 + len + 4096);
    ds->field_arena = g_realloc (ds->field_arena, ds->field_arena_size);
  }
  memcpy (ds->field_arena + ds->field_arena_len, &len32, 4);
  memcpy (ds->field_arena + ds->field_arena_len + 4, data, len);
  ds->field_arena_len += 4 + len;
  return offset;
}

/* Seconds in a cell: a decimal number. */
static gboolean
parse_seconds (const GstSpdlTableCell * cell, gdouble * seconds)
{
  gchar *text = g_strstrip (g_strndup (cell->data, cell->len)), *end;
  gboolean ok;

  *seconds = g_ascii_strtod (text, &end);
  ok = end != text && *end == '\0' && isfinite (*seconds);
  g_free (text);
  return ok;
}

/* A cell of a span column that holds a value: an ISO 8601 duration
 * ("PT00H00M11S", WebVid's duration column) is the file's length rounded
 * to seconds, no span. */
static const GstSpdlTableCell *
span_cell (const GstSpdlTableCell * cell)
{
  if (cell->data == NULL || cell->len == 0 ||
      (cell->len > 2 && cell->data[0] == 'P' && cell->data[1] == 'T'))
    return NULL;
  return cell;
}

/* The row's span (sample n - 1) from the span columns. */
static void
table_span (TableLoad * load, const GstSpdlTableCell * cells, guint64 line)
{
  GstSpdlDataset *ds = load->ds;
  const GstSpdlTableCell *c = cells + load->span_column;
  const GstSpdlTableCell *offset = NULL, *duration = NULL, *end = NULL;
  GstSpdlSpanProblem problem = GST_SPDL_SPAN_OK;
  gdouble start = 0, length = -1, stop;
  guint i = ds->n_samples - 1;

  if (load->span_capacity < ds->n_allocated) {
    load->span_capacity = ds->n_allocated;
    ds->span_starts = g_renew (gdouble, ds->span_starts, load->span_capacity);
    ds->span_durations = g_renew (gdouble, ds->span_durations,
        load->span_capacity);
    ds->span_bad = g_renew (guint8, ds->span_bad, load->span_capacity);
    ds->lines = g_renew (guint64, ds->lines, load->span_capacity);
  }
  offset = span_cell (&c[SPAN_OFFSET]);
  if (offset == NULL)
    offset = span_cell (&c[SPAN_START]);
  /* an end is a span's; a duration beside it may be the file's length */
  end = span_cell (&c[SPAN_END]);
  if (end == NULL)
    duration = span_cell (&c[SPAN_DURATION]);

  if (offset && !parse_seconds (offset, &start))
    problem = GST_SPDL_SPAN_NOT_A_NUMBER;
  else if (start < 0)
    problem = GST_SPDL_SPAN_NEGATIVE_OFFSET;
  else if (duration && !parse_seconds (duration, &length))
    problem = GST_SPDL_SPAN_NOT_A_NUMBER;
  else if (duration && length <= 0)
    problem = GST_SPDL_SPAN_END_BEFORE_START;
  else if (end && !parse_seconds (end, &stop))
    problem = GST_SPDL_SPAN_NOT_A_NUMBER;
  else if (end && stop <= start)
    problem = GST_SPDL_SPAN_END_BEFORE_START;
  else if (end)
    length = stop - start;
  else if (duration == NULL && load->nemo)
    problem = GST_SPDL_SPAN_NO_DURATION;
  load->any_span |= offset || duration || end;
  load->any_duration |= duration || end;
  ds->span_starts[i] = problem ? 0 : start;
  ds->span_durations[i] = problem ? -1 : length;
  ds->span_bad[i] = problem;
  ds->lines[i] = line;
}

/* JSON Lines whose first row has no duration: without a span in any row,
 * a list of whole files (no spans at all); a NeMo manifest whose other
 * rows have durations requires one in every row, as NeMo does. */
static void
table_spans_settle (TableLoad * load)
{
  GstSpdlDataset *ds = load->ds;
  guint i;

  if (!load->any_span && load->format == GST_SPDL_TABLE_JSONL) {
    g_clear_pointer (&ds->span_starts, g_free);
    g_clear_pointer (&ds->span_durations, g_free);
    g_clear_pointer (&ds->span_bad, g_free);
    g_clear_pointer (&ds->lines, g_free);
    load->spans = FALSE;
    return;
  }
  if (!load->audio_rows || !load->any_duration)
    return;
  for (i = 0; i < ds->n_samples; i++)
    if (ds->span_bad[i] == GST_SPDL_SPAN_OK && ds->span_durations[i] < 0) {
      ds->span_starts[i] = 0;
      ds->span_bad[i] = GST_SPDL_SPAN_NO_DURATION;
    }
}

static gboolean
table_row (const GstSpdlTableCell * cells, guint64 line, gpointer user_data,
    GError ** error)
{
  TableLoad *load = user_data;
  GstSpdlDataset *ds = load->ds;
  const GstSpdlRecord *record = load->options->record;
  gint64 label = -1;
  guint f, a;
  const gchar *path = cells[0].data;
  gsize path_len = cells[0].len;

  if (load->template && !template_path (load, cells, line, error))
    return FALSE;
  if (load->template) {
    path = load->path->str;
    path_len = load->path->len;
  }
  if ((path == NULL || path_len == 0) && load->other_path_column) {
    path = cells[load->other_path_column].data;
    path_len = cells[load->other_path_column].len;
  }
  if (path == NULL || path_len == 0) {
    gchar *what = g_strdup_printf ("no path (column \"%s\")",
        load->path_column);
    table_fail (error, load, line, what, NULL);
    g_free (what);
    return FALSE;
  }
  if (memchr (path, '\0', path_len))
    return table_fail (error, load, line, "a path holds a NUL byte", NULL);
  if (cells[1].data && cells[1].len > 0) {
    gchar *text = g_strndup (cells[1].data, cells[1].len), *end;

    errno = 0;
    label = g_ascii_strtoll (g_strstrip (text), &end, 10);
    if (end == text || *end != '\0' || errno != 0 || label < -1 ||
        label > G_MAXINT32) {
      g_free (text);
      return table_fail (error, load, line, "label is not an integer "
          "(-1 or more)", &cells[1]);
    }
    g_free (text);
  }
  if (!dataset_append (ds, NULL, 0, path, path_len, (gint32) label))
    return too_many_samples (load->name, error);
  if (label >= 0)
    ds->n_classes = MAX (ds->n_classes, (guint) label + 1);
  if (load->spans)
    table_span (load, cells, line);
  if (ds->n_fields == 0)
    return TRUE;
  if (load->field_capacity < ds->n_allocated) {
    load->field_capacity = ds->n_allocated;
    ds->field_offsets = g_renew (guint64, ds->field_offsets,
        load->field_capacity * ds->n_fields);
  }
  for (f = 0; f < record->n_fields; f++) {
    guint64 offset = G_MAXUINT64;

    /* the first alternative present and not empty */
    for (a = 0; a < load->field_n_columns[f] && offset == G_MAXUINT64; a++) {
      const GstSpdlTableCell *cell = &cells[load->field_column[f] + a];
      /* a json field of JSON Lines, or a path into one: the value's JSON
       * text, strings too */
      gboolean json = (record->fields[f].kind == GST_SPDL_FIELD_JSON ||
          record->fields[f].path) && cell->json;
      const gchar *data = json ? cell->json : cell->data;
      gsize len = json ? cell->json_len : cell->len;
      gboolean file = load->field_is_text[f] && a == TEXT_FILE_COLUMN;
      /* NeMo's "text": "" is a transcript (silence), as NeMo reads it */
      gboolean empty_is_value = load->field_is_text[f] && !file &&
          cell->json && cell->json[0] == '"';

      if (data && (len > 0 || empty_is_value)) {
        if (len >= FIELD_IS_FILE)
          return table_fail (error, load, line, "a cell of 2 GiB or more",
              NULL);
        if (file && memchr (data, '\0', len))
          return table_fail (error, load, line, "a path holds a NUL byte",
              NULL);
        offset = field_arena_append (ds, data, len, file ? FIELD_IS_FILE : 0);
      }
    }
    ds->field_offsets[(gsize) (ds->n_samples - 1) * ds->n_fields + f] =
        offset;
  }
  return TRUE;
}

static gboolean
read_table (GstSpdlDataset * ds, const gchar * data, gsize len,
    GstSpdlTableFormat format, const gchar * name,
    const GstSpdlDatasetOptions * options, GError ** error)
{
  TableLoad load = { ds, options, format, name, };
  gboolean ok;

  load.path = g_string_new (NULL);
  ds->n_fields = options->record ? options->record->n_fields : 0;
  ok = gst_spdl_table_parse (format, data, len, name, table_header,
      table_row, &load, error);
  if (ok && load.spans && !load.nemo)
    table_spans_settle (&load);
  if (load.spans)
    ds->manifest_name = g_strdup (name);
  g_free (load.path_column);
  g_free (load.field_column);
  g_free (load.field_n_columns);
  g_free (load.field_is_text);
  g_strfreev (load.template);
  g_string_free (load.path, TRUE);
  return ok;
}

static gboolean
load_table (GstSpdlDataset * ds, const gchar * location,
    GstSpdlTableFormat format, const GstSpdlDatasetOptions * options,
    GError ** error)
{
  gchar *display = g_filename_display_name (location);
  GError *map_error = NULL;
  GMappedFile *file = g_mapped_file_new (location, FALSE, &map_error);
  gboolean ok;

  if (file == NULL) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
        "Could not open manifest \"%s\": %s", display, map_error->message);
    g_error_free (map_error);
    g_free (display);
    return FALSE;
  }
  ok = read_table (ds, g_mapped_file_get_contents (file),
      g_mapped_file_get_length (file), format, display, options, error);
  g_mapped_file_unref (file);
  g_free (display);
  return ok;
}

/* The first line of file @location, without its line break and a UTF-8
 * byte-order mark before it; NULL when there is none. */
static gchar *
first_line (const gchar * location)
{
  FILE *file = fopen (location, "re");
  gchar *line = NULL, *out;
  gsize cap = 0;
  gssize len;

  if (file == NULL)
    return NULL;
  len = getline (&line, &cap, file);
  fclose (file);
  if (len <= 0) {
    free (line);
    return NULL;
  }
  while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
    line[--len] = '\0';
  out = g_strdup (g_str_has_prefix (line, "\xEF\xBB\xBF") ? line + 3 : line);
  free (line);
  return out;
}

/* A .tsv is a table when its first line names the path column (a
 * candidate, or @path_column); else a "path<TAB>label" manifest. */
static gboolean
tsv_has_header (const gchar * location, const gchar * path_column)
{
  gchar *line, **cells, **cell;
  gboolean header = FALSE;
  guint i;

  /* a path formed from columns: a table */
  if (path_column && strchr (path_column, '{'))
    return TRUE;
  line = first_line (location);
  if (line == NULL)
    return FALSE;
  cells = g_strsplit (line, "\t", -1);
  for (cell = cells; *cell && !header; cell++) {
    if (path_column)
      header = strcmp (*cell, path_column) == 0;
    for (i = 0; !path_column && path_columns[i] && !header; i++)
      header = strcmp (*cell, path_columns[i]) == 0;
  }
  g_strfreev (cells);
  g_free (line);
  return header;
}

/* A NeMo manifest, whatever its name (NeMo's are .json): JSON Lines whose
 * first line is an object with audio_filepath or audio_filename. */
static gboolean
is_nemo_manifest (const gchar * location)
{
  static const gchar *const keys[] = { "audio_filepath", "audio_filename" };
  gchar *line = first_line (location);
  const gchar *p = line ? line : "";
  gsize len;
  gboolean nemo = FALSE;
  guint i;

  while (g_ascii_isspace (*p))
    p++;
  len = strlen (p);
  if (len > 0 && *p == '{' && gst_spdl_json_validate (p, len, NULL)) {
    for (i = 0; i < G_N_ELEMENTS (keys) && !nemo; i++) {
      const gchar *path[] = { keys[i], NULL }, *value = NULL;
      gsize value_len;

      nemo = gst_spdl_json_find (p, len, path, &value, &value_len, NULL) &&
          value != NULL;
    }
  }
  g_free (line);
  return nemo;
}

/* Field @field of sample @index: its value's place in the arena and its
 * length word (FIELD_IS_FILE and the length); FALSE when absent. */
static gboolean
field_at (const GstSpdlDataset * dataset, guint index, guint field,
    guint64 * offset, guint32 * len32)
{
  if (field >= dataset->n_fields || index >= dataset->n_samples)
    return FALSE;
  *offset = dataset->field_offsets[(gsize) index * dataset->n_fields + field];
  if (*offset == G_MAXUINT64)
    return FALSE;
  memcpy (len32, dataset->field_arena + *offset, 4);
  return TRUE;
}

gboolean
gst_spdl_dataset_get_field (const GstSpdlDataset * dataset, guint index,
    guint field, const guint8 ** data, gsize * len)
{
  guint64 offset;
  guint32 len32;

  if (!field_at (dataset, index, field, &offset, &len32))
    return FALSE;
  *data = (const guint8 *) dataset->field_arena + offset + 4;
  *len = len32 & ~FIELD_IS_FILE;
  return TRUE;
}

gboolean
gst_spdl_dataset_field_is_file (const GstSpdlDataset * dataset, guint index,
    guint field)
{
  guint64 offset;
  guint32 len32;

  return field_at (dataset, index, field, &offset, &len32) &&
      (len32 & FIELD_IS_FILE) != 0;
}

gboolean
gst_spdl_dataset_get_span (const GstSpdlDataset * dataset, guint index,
    gdouble * start, gdouble * duration)
{
  if (dataset->span_starts == NULL || index >= dataset->n_samples)
    return FALSE;
  *start = dataset->span_starts[index];
  *duration = dataset->span_durations[index];
  return TRUE;
}

gdouble
gst_spdl_dataset_get_duration (const GstSpdlDataset * dataset, guint index)
{
  if (dataset->span_starts == NULL || index >= dataset->n_samples ||
      dataset->span_bad[index])
    return -1;
  return dataset->span_durations[index];
}

const gchar *
gst_spdl_span_problem_describe (GstSpdlSpanProblem problem)
{
  switch (problem) {
    case GST_SPDL_SPAN_NEGATIVE_OFFSET:
      return "has a negative offset";
    case GST_SPDL_SPAN_END_BEFORE_START:
      return "has no positive duration (its end is not after its start)";
    case GST_SPDL_SPAN_NOT_A_NUMBER:
      return "has an offset, start, duration or end that is no number of "
          "seconds";
    case GST_SPDL_SPAN_NO_DURATION:
      return "has no duration (NeMo manifests require one)";
    default:
      return "is a good span";
  }
}

/* ------------------------------------------------------------------------ */

/* WebDataset's brace pattern naming @names (sorted, at least one), when
 * they are PREFIX + a run of equal-width numbers + SUFFIX with no gap;
 * NULL otherwise. */
static gchar *
brace_pattern (GPtrArray * names)
{
  const gchar *first = g_ptr_array_index (names, 0);
  const gchar *last = g_ptr_array_index (names, names->len - 1);
  gsize len = strlen (first), pre = 0, suf = 0, width;
  guint64 a, b;
  gchar *prefix, *suffix, *pattern = NULL;
  guint i;

  if (strlen (last) != len)
    return NULL;
  while (pre < len && first[pre] == last[pre] && !g_ascii_isdigit (first[pre]))
    pre++;
  while (suf < len - pre && first[len - 1 - suf] == last[len - 1 - suf] &&
      !g_ascii_isdigit (first[len - 1 - suf]))
    suf++;
  width = len - pre - suf;
  for (i = 0; i < width; i++)
    if (!g_ascii_isdigit (first[pre + i]) || !g_ascii_isdigit (last[pre + i]))
      return NULL;
  if (width == 0 || width > 18)
    return NULL;
  a = g_ascii_strtoull (first + pre, NULL, 10);
  b = g_ascii_strtoull (last + pre, NULL, 10);
  if (b < a || b - a + 1 != names->len)
    return NULL;
  prefix = g_strndup (first, pre);
  suffix = g_strdup (first + len - suf);
  /* every name in the run, none missing (sorted: equal width sorts as
   * numbers) */
  for (i = 0; i < names->len; i++) {
    gchar *want = g_strdup_printf ("%s%0*" G_GUINT64_FORMAT "%s", prefix,
        (int) width, a + i, suffix);
    gboolean same = strcmp (want, g_ptr_array_index (names, i)) == 0;
    g_free (want);
    if (!same)
      break;
  }
  if (i == names->len)
    pattern = g_strdup_printf ("%s{%.*s..%.*s}%s", prefix, (int) width,
        first + pre, (int) width, last + pre, suffix);
  g_free (prefix);
  g_free (suffix);
  return pattern;
}

/* An ImageFolder with no sample: when @shards (the tar files beside the
 * class folders, sorted) are there, what was meant was most likely to
 * read them as shards, which takes their pattern. */
static void
set_empty_error (GError ** error, const gchar * root, const gchar * display,
    const gchar * extensions, GPtrArray * shards)
{
  gchar *pattern, *how, *tarred;
  gboolean compressed = FALSE;
  guint i;

  if (shards == NULL || shards->len == 0) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "Dataset \"%s\" is empty: no class folder holds a file with "
        "extension %s", display, extensions ? extensions : "jpg,jpeg");
    return;
  }
  pattern = brace_pattern (shards);
  /* .tar.gz or .tgz: read only once gunzipped, under a .tar name */
  for (i = 0; i < shards->len; i++)
    compressed |= !g_str_has_suffix (g_ptr_array_index (shards, i), ".tar");
  if (pattern && compressed) {
    gsize len = strlen (pattern);

    pattern[len - (g_str_has_suffix (pattern, ".tgz") ? 4 : 7)] = '\0';
    tarred = g_strconcat (pattern, ".tar", NULL);
    g_free (pattern);
    pattern = tarred;
  }
  how = pattern ? g_strdup_printf ("location=\"%s%s%s\"", root,
      g_str_has_suffix (root, "/") ? "" : "/", pattern) :
      g_strdup ("a brace pattern, e.g. location=\"DIR/train-{000000..000099}"
      ".tar\", names them");
  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
      "Dataset \"%s\" is no ImageFolder (no class folder holds a file with "
      "extension %s) but holds %u %star shards (%s%s%s): %s%s", display,
      extensions ? extensions : "jpg,jpeg", shards->len,
      compressed ? "compressed " : "",
      (const gchar *) g_ptr_array_index (shards, 0),
      shards->len > 1 ? " ... " : "", shards->len > 1 ?
      (const gchar *) g_ptr_array_index (shards, shards->len - 1) : "",
      compressed ? "shards are read as uncompressed tar, their members by "
      "byte range; gunzip them (as .tar files) and read them as shards, " :
      "to read them as shards, ", how);
  g_free (pattern);
  g_free (how);
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The shards (.tar, .tar.gz, .tgz) directly in folder @root, sorted. */
static GPtrArray *
list_tar_files (const gchar * root)
{
  GDir *dir = g_dir_open (root, 0, NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const gchar *name;

  while (dir && (name = g_dir_read_name (dir)))
    if (gst_spdl_shards_has_suffix (name, strlen (name)))
      g_ptr_array_add (names, g_strdup (name));
  if (dir)
    g_dir_close (dir);
  g_ptr_array_sort (names, compare_names);
  return names;
}

GstSpdlDataset *
gst_spdl_dataset_load (const gchar * location, const gchar * extensions,
    GError ** error)
{
  GstSpdlDatasetOptions options = { extensions, };

  return gst_spdl_dataset_load_with_options (location, &options, error);
}

GstSpdlDataset *
gst_spdl_dataset_load_with_options (const gchar * location,
    const GstSpdlDatasetOptions * options, GError ** error)
{
  static const GstSpdlDatasetOptions defaults = { NULL, };
  const gchar *extensions;
  GstSpdlTableFormat format;
  GstSpdlDataset *ds;
  struct stat st;
  gchar *display;
  gboolean ok;

  if (options == NULL)
    options = &defaults;
  extensions = options->extensions;

  if (location == NULL || *location == '\0') {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "No dataset location given (set the \"location\" property)");
    return NULL;
  }
  display = g_filename_display_name (location);
  if (stat (location, &st) != 0) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "Dataset location \"%s\" does not exist: %s", display,
        g_strerror (errno));
    g_free (display);
    return NULL;
  }
  /* a FIFO or device would block or never end */
  if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode)) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
        "Dataset location \"%s\" is neither a folder nor a manifest file",
        display);
    g_free (display);
    return NULL;
  }

  ds = g_new0 (GstSpdlDataset, 1);
  ds->warnings = g_ptr_array_new_with_free_func (g_free);
  if (S_ISDIR (st.st_mode)) {
    gchar **exts = g_strsplit (extensions ? extensions : "jpg,jpeg", ",", -1);
    ds->root = g_strdup (location);
    ok = load_image_folder (ds, location, exts, options->record, error);
    g_strfreev (exts);
  } else if (gst_spdl_table_format_from_name (location, &format) &&
      (format != GST_SPDL_TABLE_TSV || tsv_has_header (location,
              options->path_column))) {
    ds->root = g_path_get_dirname (location);
    ok = load_table (ds, location, format, options, error);
  } else if (is_nemo_manifest (location)) {
    ds->root = g_path_get_dirname (location);
    ok = load_table (ds, location, GST_SPDL_TABLE_JSONL, options, error);
  } else {
    ds->root = g_path_get_dirname (location);
    ok = load_manifest (ds, location, error);
  }
  if (ok && ds->n_samples == 0) {
    if (S_ISDIR (st.st_mode)) {
      GPtrArray *shards = list_tar_files (location);
      set_empty_error (error, location, display, extensions, shards);
      g_ptr_array_unref (shards);
    } else
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
          "Dataset manifest \"%s\" lists no sample", display);
    ok = FALSE;
  }
  g_free (display);
  if (!ok) {
    gst_spdl_dataset_free (ds);
    return NULL;
  }
  dataset_shrink (ds);
  return ds;
}

/* A manifest read from memory (@ok: without an error): @ds, or NULL and
 * freed when it failed or lists no sample. */
static GstSpdlDataset *
manifest_finish (GstSpdlDataset * ds, gboolean ok, const gchar * name,
    GError ** error)
{
  if (ok && ds->n_samples == 0) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "Dataset manifest \"%s\" lists no sample", name);
    ok = FALSE;
  }
  if (!ok) {
    gst_spdl_dataset_free (ds);
    return NULL;
  }
  dataset_shrink (ds);
  return ds;
}

GstSpdlDataset *
gst_spdl_dataset_parse_manifest (const gchar * root, const gchar * data,
    gsize len, const gchar * name, GError ** error)
{
  GstSpdlDataset *ds = g_new0 (GstSpdlDataset, 1);
  gboolean ok = TRUE;

  ds->warnings = g_ptr_array_new_with_free_func (g_free);
  ds->root = g_strdup (root);
  /* the very code that reads a manifest file; no fmemopen() of 0 bytes
   * (older C libraries refuse it): they list no sample anyway */
  if (len > 0) {
    FILE *file = fmemopen ((gpointer) data, len, "r");

    if (file == NULL) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
          "Could not read manifest \"%s\": %s", name, g_strerror (errno));
      ok = FALSE;
    } else {
      ok = read_manifest (ds, file, name, error);
      fclose (file);
    }
  }
  return manifest_finish (ds, ok, name, error);
}

GstSpdlDataset *
gst_spdl_dataset_parse_table (const gchar * root, const gchar * data,
    gsize len, gint format, const gchar * name,
    const GstSpdlDatasetOptions * options, GError ** error)
{
  static const GstSpdlDatasetOptions defaults = { NULL, };
  GstSpdlDataset *ds = g_new0 (GstSpdlDataset, 1);
  gboolean ok;

  ds->warnings = g_ptr_array_new_with_free_func (g_free);
  ds->root = g_strdup (root);
  ok = read_table (ds, data, len, (GstSpdlTableFormat) format, name,
      options ? options : &defaults, error);
  return manifest_finish (ds, ok, name, error);
}

void
gst_spdl_dataset_free (GstSpdlDataset * ds)
{
  if (ds == NULL)
    return;
  g_free (ds->root);
  g_free (ds->arena);
  g_free (ds->offsets);
  g_free (ds->labels);
  g_free (ds->field_offsets);
  g_free (ds->field_arena);
  g_free (ds->span_starts);
  g_free (ds->span_durations);
  g_free (ds->span_bad);
  g_free (ds->lines);
  g_free (ds->manifest_name);
  g_strfreev (ds->class_names);
  if (ds->warnings)
    g_ptr_array_unref (ds->warnings);
  g_free (ds);
}

gchar *
gst_spdl_dataset_get_full_path (const GstSpdlDataset * ds, guint index)
{
  const gchar *path = gst_spdl_dataset_get_path (ds, index);

  /* URLs (manifest lines may be http(s):// or s3://) stand as they are */
  if (g_path_is_absolute (path) || strstr (path, "://"))
    return g_strdup (path);
  return g_build_filename (ds->root, path, NULL);
}

GstSpdlDataset *
gst_spdl_dataset_new_from_paths (const gchar * root,
    const gchar * const *paths, guint n)
{
  GstSpdlDataset *ds = g_new0 (GstSpdlDataset, 1);
  guint i;

  ds->warnings = g_ptr_array_new_with_free_func (g_free);
  ds->root = g_strdup (root);
  for (i = 0; i < n && i < MAX_SAMPLES; i++)
    dataset_append (ds, NULL, 0, paths[i], strlen (paths[i]), -1);
  dataset_shrink (ds);
  return ds;
}

GstSpdlDataset *
gst_spdl_dataset_new_from_keys (const gchar * root, GPtrArray * keys,
    const gchar * extensions, GError ** error)
{
  GstSpdlDataset *ds = g_new0 (GstSpdlDataset, 1);
  gchar **exts = g_strsplit (extensions ? extensions : "jpg,jpeg", ",", -1);
  const gchar *class_name = NULL;
  gsize class_len = 0;
  GPtrArray *names = g_ptr_array_new ();
  guint i;

  ds->warnings = g_ptr_array_new_with_free_func (g_free);
  ds->root = g_strdup (root);
  /* sorted keys: the classes come in sorted order, as ImageFolder's */
  for (i = 0; i < keys->len; i++) {
    const gchar *key = g_ptr_array_index (keys, i);
    const gchar *slash = strchr (key, '/');

    if (slash == NULL || slash == key || !has_extension (key, exts))
      continue;                 /* files beside the class folders */
    if (class_name == NULL || (gsize) (slash - key) != class_len ||
        strncmp (key, class_name, class_len) != 0) {
      class_name = key;
      class_len = slash - key;
      ds->n_classes++;
      g_ptr_array_add (names, g_strndup (key, class_len));
    }
    if (!dataset_append (ds, NULL, 0, key, strlen (key), ds->n_classes - 1)) {
      g_strfreev (exts);
      too_many_samples (root, error);
      gst_spdl_dataset_free (ds);
      return NULL;
    }
  }
  g_ptr_array_add (names, NULL);
  ds->class_names = (gchar **) g_ptr_array_free (names, FALSE);
  g_strfreev (exts);
  if (ds->n_samples == 0) {
    GPtrArray *shards = g_ptr_array_new ();
    /* sorted keys: the tar files directly under the prefix, in order */
    for (i = 0; i < keys->len; i++) {
      const gchar *key = g_ptr_array_index (keys, i);
      if (strchr (key, '/') == NULL &&
          gst_spdl_shards_has_suffix (key, strlen (key)))
        g_ptr_array_add (shards, (gpointer) key);
    }
    set_empty_error (error, root, root, extensions, shards);
    g_ptr_array_unref (shards);
    gst_spdl_dataset_free (ds);
    return NULL;
  }
  dataset_shrink (ds);
  return ds;
}

gchar *
gst_spdl_dataset_fingerprint (const GstSpdlDataset * dataset)
{
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  gchar *fingerprint;
  guint i;

  for (i = 0; i < dataset->n_samples; i++) {
    const gchar *path = gst_spdl_dataset_get_path (dataset, i);
    gchar label[16];

    g_checksum_update (sum, (const guchar *) path, strlen (path) + 1);
    g_snprintf (label, sizeof (label), "%d\n", dataset->labels[i]);
    g_checksum_update (sum, (const guchar *) label, strlen (label));
    /* a manifest's spans: rows of one file are told apart by them */
    if (dataset->span_starts) {
      gchar span[2 * G_ASCII_DTOSTR_BUF_SIZE + 8];
      gchar *p = span;

      g_ascii_dtostr (p, G_ASCII_DTOSTR_BUF_SIZE, dataset->span_starts[i]);
      p += strlen (p);
      *p++ = '+';
      g_ascii_dtostr (p, G_ASCII_DTOSTR_BUF_SIZE,
          dataset->span_durations[i]);
      p += strlen (p);
      *p++ = dataset->span_bad[i] ? '!' : '\n';
      g_checksum_update (sum, (const guchar *) span, p - span);
    }
  }
  fingerprint = g_strdup_printf ("%u:%s", dataset->n_samples,
      g_checksum_get_string (sum));
  g_checksum_free (sum);
  return fingerprint;
}
