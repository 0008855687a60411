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
} GstSpdlDataset;

/* Lists @location: a folder in ImageFolder layout or a manifest file.
 * On failure returns NULL and sets @error (GST_RESOURCE_ERROR domain) with
 * a message that names the path and, for manifests, the line. */
GstSpdlDataset *gst_spdl_dataset_load (const gchar * location,
    const gchar * extensions, GError ** error);
/* An ImageFolder listed elsewhere (an S3 prefix): @keys sorted, relative
 * to @root, "CLASS/.../NAME"; keys outside a class folder are ignored. */
GstSpdlDataset *gst_spdl_dataset_new_from_keys (const gchar * root,
    GPtrArray * keys, const gchar * extensions, GError ** error);
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
 * "N:SHA256" of the samples' relative paths and labels in listing order
 * (the root is left out: a moved dataset is the same). */
gchar *gst_spdl_dataset_fingerprint (const GstSpdlDataset * dataset);

G_END_DECLS

#endif /* __GST_SPDL_DATASET_H__ */
