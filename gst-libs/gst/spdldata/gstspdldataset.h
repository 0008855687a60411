/* GStreamer SPDL: dataset listing
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_DATASET_H__
#define __GST_SPDL_DATASET_H__

#include <gst/gst.h>

#include "gstspdlrecord.h"

G_BEGIN_DECLS

/* A listed dataset, kept compact for millions of samples: every relative
 * path lives in one string arena, addressed by offset. */
typedef struct
{
  gchar *root;                  /* folder the paths are relative to */
  gchar *arena;
  gsize arena_len;
  gsize arena_size;
  guint64 *offsets;
  gint32 *labels;
  guint n_samples;
  guint n_allocated;
  guint n_classes;
  /* class folders' names, sorted (label = index), NULL-terminated; NULL
   * for manifests, whose labels come without names */
  gchar **class_names;
  GPtrArray *warnings;          /* what listing passed over, and why */
  /* a manifest with a header: the record's fields per sample, from its
   * columns (gst_spdl_dataset_get_field()); 0 otherwise */
  guint n_fields;
  guint64 *field_offsets;       /* [sample * n_fields + field] into
                                 * @field_arena; G_MAXUINT64: absent */
  gchar *field_arena;           /* per value: its length (guint32, native
                                 * order, unaligned) then its bytes */
  gsize field_arena_len;
  gsize field_arena_size;
  /* a manifest whose rows are spans of their files (span columns, see
   * below; NeMo manifests): per sample, in seconds; NULL otherwise (whole
   * files) */
  gdouble *span_starts;
  gdouble *span_durations;      /* < 0: to the file's end (unknown) */
  guint8 *span_bad;             /* GstSpdlSpanProblem, 0: a good span */
  guint64 *lines;               /* each sample's line in the manifest */
  gchar *manifest_name;         /* the manifest, for messages */
} GstSpdlDataset;

/* Why a manifest row's span cannot be read (the sample is skipped as
 * bad-span, or stops the pipeline, by spdlsrc's missing-field policy). */
typedef enum
{
  GST_SPDL_SPAN_OK,
  GST_SPDL_SPAN_NEGATIVE_OFFSET,
  GST_SPDL_SPAN_END_BEFORE_START,
  GST_SPDL_SPAN_NOT_A_NUMBER,
  GST_SPDL_SPAN_NO_DURATION,    /* NeMo requires one */
} GstSpdlSpanProblem;

/* How a dataset is listed beyond its location. */
typedef struct
{
  const gchar *extensions;      /* of the images listed from folders */
  /* the sample record's fields (NULL: none): a manifest's columns, or in
   * a folder the sidecars beside each image ("x.txt" for field "txt" of
   * "x.jpg"), which are then no samples themselves */
  const GstSpdlRecord *record;
  /* a manifest with a header (CSV, TSV, JSON Lines by extension): the
   * column of the paths, or a template of column names in braces
   * ("{page_dir}/{videoid}.mp4"); NULL: the first of path, image,
   * filepath, file_name, filename, file, audio_filepath, audio_filename,
   * video present */
  const gchar *path_column;
} GstSpdlDatasetOptions;

/* The columns a manifest with a header takes as its rows' spans, in
 * seconds: the first of offset, start (default 0) and end, else duration
 * (default: to the file's end; an ISO 8601 duration, WebVid's file
 * length, is none). A NeMo manifest (JSON Lines with audio_filepath or
 * audio_filename, whatever the file's extension, and a duration in its
 * first row) requires a duration in every row. A field named "text" is
 * NeMo's transcript: the text column, else the contents of the file in
 * text_filepath (relative to the manifest's folder, read with the sample:
 * gst_spdl_dataset_field_is_file()), else normalized_text. */

/* Lists @location: a folder in ImageFolder layout or a manifest file.
 * On failure returns NULL and sets @error (GST_RESOURCE_ERROR domain) with
 * a message that names the path and, for manifests, the line. */
GstSpdlDataset *gst_spdl_dataset_load (const gchar * location,
    const gchar * extensions, GError ** error);
/* The same with @options (NULL: the defaults). A file named .csv, .jsonl
 * or .ndjson, or a .tsv whose first line names the path column (else it
 * is a "path<TAB>label" manifest), is a manifest with a header
 * (gstspdltable.h): the
 * path column, the label from a "label" column (an integer; -1 where the
 * column is absent or the cell empty) and the record's fields from the
 * columns they name (a column absent from a row, or empty: the field is
 * absent); relative paths against the manifest's folder. */
GstSpdlDataset *gst_spdl_dataset_load_with_options (const gchar * location,
    const GstSpdlDatasetOptions * options, GError ** error);
/* A manifest with a header, @len bytes of @format (a GstSpdlTableFormat),
 * read as gst_spdl_dataset_load_with_options() reads such a file. */
GstSpdlDataset *gst_spdl_dataset_parse_table (const gchar * root,
    const gchar * data, gsize len, gint format, const gchar * name,
    const GstSpdlDatasetOptions * options, GError ** error);
/* Field @field of sample @index from a manifest's columns: FALSE when
 * absent. @data stays valid while @dataset lives. */
gboolean gst_spdl_dataset_get_field (const GstSpdlDataset * dataset,
    guint index, guint field, const guint8 ** data, gsize * len);
/* Whether field @field of sample @index holds the path of a file whose
 * contents are the field's value (NeMo's text_filepath), relative to the
 * manifest's folder. */
gboolean gst_spdl_dataset_field_is_file (const GstSpdlDataset * dataset,
    guint index, guint field);
/* Sample @index's span: TRUE with @start and @duration (seconds; < 0: to
 * the end) when the manifest gives spans; FALSE for whole files. */
gboolean gst_spdl_dataset_get_span (const GstSpdlDataset * dataset,
    guint index, gdouble * start, gdouble * duration);
/* Sample @index's duration in seconds as its manifest says (its span's),
 * for orders by duration; < 0 when unknown (whole files, a span to the
 * file's end, a bad span). */
gdouble gst_spdl_dataset_get_duration (const GstSpdlDataset * dataset,
    guint index);
/* Words for a span problem: "has a negative offset" */
const gchar *gst_spdl_span_problem_describe (GstSpdlSpanProblem problem);

/* An ImageFolder listed elsewhere (an S3 prefix): @keys sorted, relative
 * to @root, "CLASS/.../NAME"; keys outside a class folder are ignored. */
GstSpdlDataset *gst_spdl_dataset_new_from_keys (const gchar * root,
    GPtrArray * keys, const gchar * extensions, GError ** error);
/* @n samples at @paths (relative to @root, a folder or a URL prefix),
 * in that order, with no label: a listing made elsewhere (an annotations
 * file's images). */
GstSpdlDataset *gst_spdl_dataset_new_from_paths (const gchar * root,
    const gchar * const *paths, guint n);
/* A manifest's @len bytes (not NUL-terminated), read as
 * gst_spdl_dataset_load() reads a manifest file holding them; paths are
 * relative to @root, @name stands for the file in messages. */
GstSpdlDataset *gst_spdl_dataset_parse_manifest (const gchar * root,
    const gchar * data, gsize len, const gchar * name, GError ** error);
void gst_spdl_dataset_free (GstSpdlDataset * dataset);

static inline const gchar *
gst_spdl_dataset_get_path (const GstSpdlDataset * dataset, guint index)
{
  return dataset->arena + dataset->offsets[index];
}

gchar *gst_spdl_dataset_get_full_path (const GstSpdlDataset * dataset,
    guint index);

/* What an epoch's order is computed over, for checkpoints to check:
 * "N:SHA256" of the samples' relative paths and labels in listing order,
 * and a manifest's spans (the root is left out: a moved dataset is the
 * same). */
gchar *gst_spdl_dataset_fingerprint (const GstSpdlDataset * dataset);

G_END_DECLS

#endif /* __GST_SPDL_DATASET_H__ */
