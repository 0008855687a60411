/* GStreamer SPDL: sample metadata and epoch events
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_META_H__
#define __GST_SPDL_META_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Every sample buffer carries a GstCustomMeta of this name; its structure
 * has the fields "index" (guint64, the sample's index in the dataset listing),
 * "label" (gint), "epoch" (guint) and "path" (string, UTF-8: a file name
 * that is not valid UTF-8 is shown as g_filename_display_name() does, and
 * its bytes are in "path-bytes", a GBytes). Python reads it with
 * buffer.get_custom_meta("GstSpdlSampleMeta").get_structure(). */
#define GST_SPDL_SAMPLE_META_NAME "GstSpdlSampleMeta"

/* Each batch buffer carries a GstCustomMeta of this name; its structure has
 * "epoch" (guint) and "indices" (GstValueArray of guint64, dataset indices
 * of the batch's samples, in slot order); a batch of video clips also has
 * "clips" (GstValueArray of guint64: each slot's clip number in its
 * video). */
#define GST_SPDL_BATCH_META_NAME "GstSpdlBatchMeta"

/* Custom serialized downstream event (and element message on the bus) that
 * marks the end of an epoch: structure fields "epoch" (guint) and "samples"
 * (guint64, samples of this shard in that epoch). */
#define GST_SPDL_EPOCH_END_NAME "spdl-epoch-end"

/* Custom serialized downstream event before each epoch's first sample:
 * "epoch" (guint), "samples" (guint64, this rank's samples in the epoch),
 * "offset" (guint64, global samples of the epoch consumed before it
 * started: non-zero when resumed), "num-shards" and "shard-index"
 * (guint); spdlsrc's batched order (buckets) adds "batches" (guint64, this
 * rank's batches in the epoch) and "max-batch" (guint, the most samples
 * one batch of the epoch holds). */
#define GST_SPDL_EPOCH_START_NAME "spdl-epoch-start"

/* Element message each spdl element posts when EOS passes: "total"
 * (guint64) samples it skipped, and one guint64 field per reason. */
#define GST_SPDL_SKIPPED_NAME "spdl-skipped"

typedef struct
{
  guint64 index;
  gint label;
  guint epoch;
  const gchar *path;            /* owned by the buffer's meta */
} GstSpdlSampleInfo;

void gst_spdl_meta_register (void);
/* Registers a GstCustomMeta @name once per process (plugins and
 * applications linking these helpers may all ask). */
void gst_spdl_custom_meta_register (const gchar * name);
/* Sets @field of @s to a GstValueArray of guint64. */
void gst_spdl_structure_set_uint64_array (GstStructure * s,
    const gchar * field, const guint64 * values, guint n_values);

void gst_spdl_buffer_add_sample_meta (GstBuffer * buffer, guint64 index,
    gint label, guint epoch, const gchar * path);
gboolean gst_spdl_buffer_get_sample_info (GstBuffer * buffer,
    GstSpdlSampleInfo * info);
/* "position": the sample's place in its epoch's global order (spdlsrc) */
void gst_spdl_buffer_set_sample_position (GstBuffer * buffer,
    guint64 position);
gboolean gst_spdl_buffer_get_sample_position (GstBuffer * buffer,
    guint64 * position);
/* A sample of spdlsrc's batched order (buckets, batch-duration): "batch"
 * (guint64, its batch's number among this rank's batches of the epoch) and
 * "resume-epoch" (guint), "resume-offset" (guint64): the start-epoch and
 * start-offset of a run that continues after that batch. */
void gst_spdl_buffer_set_batch (GstBuffer * buffer, guint64 batch,
    guint resume_epoch, guint64 resume_offset);
gboolean gst_spdl_buffer_get_batch (GstBuffer * buffer, guint64 * batch,
    guint * resume_epoch, guint64 * resume_offset);
/* "batch-end": the last sample of its batch (spdlbatch pushes the batch
 * after it) */
void gst_spdl_buffer_set_batch_end (GstBuffer * buffer);
gboolean gst_spdl_buffer_is_batch_end (GstBuffer * buffer);
gboolean gst_spdl_buffer_copy_sample_meta (GstBuffer * dest, GstBuffer * src);
const gchar *gst_spdl_buffer_get_path (GstBuffer * buffer);
/* A clip's sample meta (spdlvideodecode): "clip" (guint, the clip's
 * number in its video) and "pts" (GstValueArray of gdouble, the
 * presentation time in seconds of each of its frames). */
void gst_spdl_buffer_set_clip_info (GstBuffer * buffer, guint clip,
    const gdouble * pts, guint n_frames);
/* A newly allocated copy of the clip's pts (@n_frames of them), or NULL
 * when the buffer is no clip. */
gdouble *gst_spdl_buffer_dup_clip_pts (GstBuffer * buffer, guint * n_frames);
gboolean gst_spdl_buffer_get_clip_number (GstBuffer * buffer, guint * clip);
/* "last-clip": the last clip its video gives (a checkpoint after it has
 * consumed the whole video) */
void gst_spdl_buffer_mark_last_clip (GstBuffer * buffer);
gboolean gst_spdl_buffer_is_last_clip (GstBuffer * buffer);
/* "has-audio": a clip with audio (spdlvideodecode audio=true) whose video
 * has an audio stream that decoded; FALSE: its audio tensor is silence */
void gst_spdl_buffer_set_clip_has_audio (GstBuffer * buffer,
    gboolean has_audio);
gboolean gst_spdl_buffer_get_clip_has_audio (GstBuffer * buffer);

void gst_spdl_buffer_add_batch_meta (GstBuffer * buffer, guint epoch,
    const guint64 * indices, guint n_indices);
/* Sets the batch meta's "position" (largest sample position in the batch,
 * for resuming; not set when G_MAXUINT64) and "padded" (slots holding
 * copies: the epoch was short of samples). */
void gst_spdl_buffer_set_batch_progress (GstBuffer * buffer,
    guint64 position, guint padded);
/* The batch meta's "resume-epoch" and "resume-offset": where a run resumed
 * after this batch starts, from its samples' (spdlsrc's batched order). */
void gst_spdl_buffer_set_batch_resume (GstBuffer * buffer, guint epoch,
    guint64 offset);
gboolean gst_spdl_buffer_get_batch_resume (GstBuffer * buffer,
    guint * epoch, guint64 * offset);
/* An audio clip's sample meta (spdlaudiodecode): "clip" (guint, the
 * clip's number in its file), "start" (gdouble, its start in seconds in
 * the file) and "length" (guint64, samples from the file before any
 * padding). */
void gst_spdl_buffer_set_audio_clip_info (GstBuffer * buffer, guint clip,
    gdouble start, guint64 length);
gboolean gst_spdl_buffer_get_audio_clip_info (GstBuffer * buffer,
    guint * clip, gdouble * start, guint64 * length);
/* A manifest row's span of its file (spdlsrc): "span-start" (gdouble,
 * seconds from the file's first decoded sample) and "span-duration"
 * (gdouble seconds; < 0: to the file's end). The decoders take only this
 * span of the file. */
void gst_spdl_buffer_set_span (GstBuffer * buffer, gdouble start,
    gdouble duration);
gboolean gst_spdl_buffer_get_span (GstBuffer * buffer, gdouble * start,
    gdouble * duration);
/* "row": where the sample's entry is, "MANIFEST:LINE", for messages about
 * its span */
void gst_spdl_buffer_set_manifest_row (GstBuffer * buffer,
    const gchar * row);
const gchar *gst_spdl_buffer_get_manifest_row (GstBuffer * buffer);
/* A newly allocated copy of a GstValueArray of guint64, or NULL */
guint64 *gst_spdl_structure_dup_uint64_array (const GstStructure * s,
    const gchar * field, guint * n_values);

GstEvent *gst_spdl_epoch_end_event_new (guint epoch, guint64 samples);
GstEvent *gst_spdl_epoch_start_event_new (guint epoch, guint64 samples,
    guint64 offset, guint num_shards, guint shard_index);
gboolean gst_spdl_is_epoch_start_event (GstEvent * event);
gboolean gst_spdl_is_epoch_end_event (GstEvent * event);
gboolean gst_spdl_epoch_end_parse (const GstStructure * s, guint * epoch,
    guint64 * samples);

G_END_DECLS

#endif /* __GST_SPDL_META_H__ */
