/* gst-spdl test helpers: the audio readers' tests (WAV, FLAC, MP3, Ogg
 * Vorbis, Ogg Opus)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __SPDL_AUDIO_READER_TEST_H__
#define __SPDL_AUDIO_READER_TEST_H__

#include <gst/gst.h>
#include <gst/audio/audio.h>

#include "gstspdlaudioreader.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------------------ */
/* Pipelines                                                                */

/* Everything @launch's appsink (named "sink") gives, concatenated, after
 * which it must have reached EOS with no error on the bus. Its source,
 * where it has one named "src": an appsrc pushes @input as one buffer
 * (timestamped 0: encoders and muxers time their output from their
 * input's; caps @src_caps, if any), then EOS; any other (giostreamsrc)
 * reads @input from memory in pull mode, as the audio chain's pipeline
 * does. Without one, @launch makes its own input.
 * Optional: @first_pts, the first buffer's timestamp (GST_CLOCK_TIME_NONE
 * when none came); @duration, the pipeline's at the end; @info: the
 * output must be raw audio, each buffer starting where the ones before it
 * end (from 0), and @info is its format. */
GBytes *spdl_audio_test_run_pipeline (const gchar * launch,
    GstCaps * src_caps, gconstpointer input, gsize size,
    GstClockTime * first_pts, GstClockTime * duration, GstAudioInfo * info);

/* @frames of a chirp per channel (different in each) with a little
 * deterministic noise, F32 interleaved at @rate: every band busy, so a
 * decoder's state (the lapping of blocks) matters. g_free() it. */
gfloat *spdl_audio_test_chirp (guint rate, guint64 frames, guint channels);

/* spdl_audio_test_chirp() through audioconvert and @encoder (with its
 * muxer, "vorbisenc ! oggmux"); 3 channels are positioned FL, FR, FC
 * (vorbisenc takes no unpositioned channels). */
GBytes *spdl_audio_test_encode (const gchar * encoder, guint rate,
    guint64 frames, guint channels);

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */

/* Checks that @reader (not NULL) is @name's, giving @format interleaved
 * at @rate and @channels. */
void spdl_audio_test_check_reader (GstSpdlAudioReader * reader,
    const gchar * name, GstAudioFormat format, guint rate, guint channels);

/* The runs one read handed out */
typedef struct
{
  GByteArray *frames;           /* every run, whole, concatenated */
  gsize bpf;
  guint64 next;                 /* after the last run (where a read on from
                                 * it starts) */
  guint runs;
  /* private */
  guint64 limit;
  gsize align;
  gboolean misaligned, empty;
  guint64 gap_want, gap_got;
  gboolean gap;
} SpdlAudioTestRuns;

/* Reads from @first until @limit frames are had (0: to the end), the
 * runs into @runs (filled also when the read fails; free them with
 * spdl_audio_test_runs_clear()). Checks that each run starts where the
 * one before it ended (the first at @first), is not empty and is aligned
 * for its samples. Returns the read's result. */
gboolean spdl_audio_test_read (GstSpdlAudioReader * reader, guint64 first,
    guint64 limit, SpdlAudioTestRuns * runs, GError ** error);
guint64 spdl_audio_test_runs_n_frames (const SpdlAudioTestRuns * runs);
void spdl_audio_test_runs_clear (SpdlAudioTestRuns * runs);

/* A float reader's frames @first .. @first + @want (fewer at the end),
 * interleaved; *@got: how many. Fails the test if the read fails.
 * g_free() it. */
gfloat *spdl_audio_test_read_span (GstSpdlAudioReader * reader,
    guint64 first, guint64 want, guint64 * got);

/* The largest difference between @a and @b's @n samples */
gdouble spdl_audio_test_max_diff (const gfloat * a, const gfloat * b,
    gsize n);

/* A file cut short (@file cut at 1/8 .. 7/8, of @frames of @channels):
 * each part is declined, or read from 0 and from its middle up to where
 * it ends or failing as corrupt; never more than it declares. Returns how
 * many parts were taken. */
guint spdl_audio_test_check_truncated (GBytes * file, guint64 frames,
    guint channels);

/* An Ogg file of @frames of one channel whose page in the middle lost its
 * capture pattern: taken with its whole length, a read through it fails
 * as corrupt (the library's "hole") rather than giving fewer frames. */
void spdl_audio_test_check_ogg_hole (GBytes * file, guint64 frames);

G_END_DECLS

#endif /* __SPDL_AUDIO_READER_TEST_H__ */
