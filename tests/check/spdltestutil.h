/* gst-spdl test helpers
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __SPDL_TEST_UTIL_H__
#define __SPDL_TEST_UTIL_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* What a sink saw, in order: a sample or an epoch-end marker. */
typedef struct
{
  gboolean is_epoch_end;
  guint64 index;
  gint label;
  guint epoch;
  gchar *path;
  GstBuffer *buffer;            /* samples only */
  GstCaps *caps;
} SpdlTestItem;

typedef struct
{
  GPtrArray *items;             /* SpdlTestItem */
  GList *warnings;              /* gchar *, element warning messages */
  gchar *error;                 /* first error message, or NULL */
  gchar *error_debug;
  GList *skipped;               /* GstStructure "spdl-skipped", "element" set */
} SpdlTestRun;

gchar *spdl_test_make_tmpdir (void);
void spdl_test_remove_tree (const gchar * path);
void spdl_test_write_file (const gchar * path, const gchar * contents,
    gssize len);

/* Tar archives: a ustar header (@prefix may be NULL), data padded to 512
 * bytes, or both for a regular file holding the string @data. */
void spdl_test_tar_header (GByteArray * tar, const gchar * name, gchar type,
    guint64 size, const gchar * prefix);
void spdl_test_tar_data (GByteArray * tar, const guint8 * data, gsize len);
void spdl_test_tar_file (GByteArray * tar, const gchar * name,
    const gchar * data);
/* A WebDataset sample: KEY.jpg holding @data, KEY.cls holding @label;
 * returns the offset of the image's data in @tar. */
gsize spdl_test_tar_sample (GByteArray * tar, const gchar * key,
    const gchar * data, gint label);

/* Encodes a w x h JPEG whose pixels are a function of (x, y, tint). */
void spdl_test_write_jpeg (const gchar * path, guint width, guint height,
    guint tint, gint quality, gboolean gray, gboolean progressive);

typedef struct
{
  guint width, height, tint;
  gint quality;
  gboolean gray, cmyk, progressive, arithmetic;
  guint restart_interval;       /* MCUs, 0 = none */
  guint h_samp, v_samp;         /* luma sampling factors: 2,2 = 4:2:0 */
  guint noise;                  /* +- this much deterministic grain, 0 = none */
  gboolean smooth;              /* gradients over the whole image, no edges */
} SpdlTestJpeg;

void spdl_test_jpeg_init (SpdlTestJpeg * opts, guint width, guint height);
/* Encodes to memory; g_free() the result. */
guint8 *spdl_test_encode_jpeg (const SpdlTestJpeg * opts, gsize * size);
/* Decodes a whole JPEG with plain libjpeg (RGB), the reference. */
guint8 *spdl_test_decode_reference (const guint8 * data, gsize size,
    guint * width, guint * height);
guint8 spdl_test_pattern (guint x, guint y, guint c, guint tint);
/* n_classes folders "class%02u", each with per_class JPEGs */
gchar *spdl_test_make_image_folder (guint n_classes, guint per_class,
    guint width, guint height);

/* Runs "@launch ! appsink name=sink" to EOS (or error), bounded by 60 s. */
SpdlTestRun *spdl_test_run (const gchar * launch);
typedef void (*SpdlTestHook) (GstElement * pipeline, gpointer user_data);
/* Same, calling @paused_hook once the pipeline is PAUSED */
SpdlTestRun *spdl_test_run_with_hook (const gchar * launch,
    SpdlTestHook paused_hook, gpointer user_data);
/* Whether a warning names @file and says @why */
gboolean spdl_test_run_warned (SpdlTestRun * run, const gchar * file,
    const gchar * why);
/* The "spdl-skipped" message @element posted after @epoch, or NULL */
const GstStructure *spdl_test_run_epoch_skipped (SpdlTestRun * run,
    const gchar * element, guint epoch);
void spdl_test_run_free (SpdlTestRun * run);
guint spdl_test_run_count_samples (SpdlTestRun * run);
/* A count of the "spdl-skipped" message that @element posted at EOS */
guint64 spdl_test_run_skipped (SpdlTestRun * run, const gchar * element,
    const gchar * reason);

G_END_DECLS

#endif
