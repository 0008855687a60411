/* gst-spdl: unit tests of the audio readers (WAV, FLAC) without a pipeline
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

#include <gst/check/gstcheck.h>
#include <FLAC/stream_encoder.h>
#include <string.h>

#include "gstspdlaudioreader.h"
#include "gstspdlerrors.h"
#include "spdlaudioreadertest.h"
#include "spdlcheckmain.h"

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */

static GstSpdlAudioReader *
open_bytes (const guint8 * data, gsize size)
{
  GBytes *bytes = g_bytes_new (data, size);
  GstSpdlAudioReader *reader = gst_spdl_audio_reader_open (bytes, NULL);

  g_bytes_unref (bytes);
  return reader;
}

/* ------------------------------------------------------------------------ */
/* WAV                                                                      */

typedef struct
{
  guint16 tag;                  /* 0xFFFE: extensible of @sub_tag */
  guint16 sub_tag;
  guint16 channels;
  guint32 rate;
  guint16 bits;
  guint16 block_align;          /* 0: channels x bits / 8 */
  guint32 list_size;            /* a LIST chunk of this size first, 0: none */
  guint32 data_size;            /* declared; 0: the payload's size */
  gsize payload;                /* bytes after the data chunk's header */
} WavSpec;

static void
put16 (GByteArray * a, guint16 v)
{
  guint8 b[2];

  GST_WRITE_UINT16_LE (b, v);
  g_byte_array_append (a, b, 2);
}

static void
put32 (GByteArray * a, guint32 v)
{
  guint8 b[4];

  GST_WRITE_UINT32_LE (b, v);
  g_byte_array_append (a, b, 4);
}

/* A WAV in memory; *@data_offset: where its frames start. Payload bytes
 * are a pattern (i * 37 + 11) */
static GByteArray *
make_wav (const WavSpec * spec, gsize * data_offset)
{
  static const guint8 guid_tail[14] = { 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
    0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71
  };
  GByteArray *a = g_byte_array_new ();
  guint16 block_align = spec->block_align ? spec->block_align :
      spec->channels * spec->bits / 8;
  gsize i;

  g_byte_array_append (a, (const guint8 *) "RIFF", 4);
  put32 (a, 0);                 /* the RIFF size: not read */
  g_byte_array_append (a, (const guint8 *) "WAVE", 4);
  if (spec->list_size) {
    g_byte_array_append (a, (const guint8 *) "LIST", 4);
    put32 (a, spec->list_size);
    for (i = 0; i < spec->list_size + (spec->list_size & 1); i++)
      g_byte_array_append (a, (const guint8 *) "d", 1);
  }
  g_byte_array_append (a, (const guint8 *) "fmt ", 4);
  put32 (a, spec->tag == 0xFFFE ? 40 : 16);
  put16 (a, spec->tag);
  put16 (a, spec->channels);
  put32 (a, spec->rate);
  put32 (a, spec->rate * block_align);
  put16 (a, block_align);
  put16 (a, spec->bits);
  if (spec->tag == 0xFFFE) {
    put16 (a, 22);
    put16 (a, spec->bits);
    put32 (a, spec->channels == 2 ? 3 : 4);
    put16 (a, spec->sub_tag);
    g_byte_array_append (a, guid_tail, sizeof (guid_tail));
  }
  g_byte_array_append (a, (const guint8 *) "data", 4);
  put32 (a, spec->data_size ? spec->data_size : spec->payload);
  *data_offset = a->len;
  for (i = 0; i < spec->payload; i++) {
    guint8 b = (guint8) (i * 37 + 11);
    g_byte_array_append (a, &b, 1);
  }
  return a;
}

static GstSpdlAudioReader *
open_wav (const WavSpec * spec, GByteArray ** wav, gsize * data_offset)
{
  *wav = make_wav (spec, data_offset);
  return open_bytes ((*wav)->data, (*wav)->len);
}

GST_START_TEST (test_wav_formats)
{
  struct
  {
    guint16 tag, sub_tag, bits;
    GstAudioFormat format;
  } cases[] = {
    {1, 0, 8, GST_AUDIO_FORMAT_U8},
    {1, 0, 16, GST_AUDIO_FORMAT_S16LE},
    {1, 0, 24, GST_AUDIO_FORMAT_S24LE},
    {1, 0, 32, GST_AUDIO_FORMAT_S32LE},
    {3, 0, 32, GST_AUDIO_FORMAT_F32LE},
    {3, 0, 64, GST_AUDIO_FORMAT_F64LE},
    {0xFFFE, 1, 16, GST_AUDIO_FORMAT_S16LE},
    {0xFFFE, 1, 24, GST_AUDIO_FORMAT_S24LE},
    {0xFFFE, 3, 32, GST_AUDIO_FORMAT_F32LE},
  };
  guint i, channels;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    for (channels = 1; channels <= 2; channels++) {
      WavSpec spec = { cases[i].tag, cases[i].sub_tag, channels, 22050,
        cases[i].bits, 0, 0, 0, 0
      };
      gsize bpf = channels * cases[i].bits / 8, off;
      GByteArray *wav;
      GstSpdlAudioReader *reader;
      SpdlAudioTestRuns got;

      spec.payload = 10000 * bpf;
      reader = open_wav (&spec, &wav, &off);
      fail_unless (reader != NULL, "case %u declined", i);
      spdl_audio_test_check_reader (reader, "wav", cases[i].format, 22050,
          channels);
      fail_unless_equals_uint64 (reader->n_frames, 10000);
      fail_unless (spdl_audio_test_read (reader, 0, 0, &got, NULL));
      fail_unless_equals_int (got.frames->len, spec.payload);
      fail_unless (memcmp (got.frames->data, wav->data + off,
              spec.payload) == 0);
      spdl_audio_test_runs_clear (&got);
      /* from an arbitrary frame, stopped on the way */
      fail_unless (spdl_audio_test_read (reader, 4321, 100, &got, NULL));
      fail_unless (got.frames->len >= 100 * bpf);
      fail_unless (memcmp (got.frames->data, wav->data + off + 4321 * bpf,
              got.frames->len) == 0);
      spdl_audio_test_runs_clear (&got);
      /* past the end: nothing */
      fail_unless (spdl_audio_test_read (reader, 10000, 0, &got, NULL));
      fail_unless_equals_int (got.runs, 0);
      spdl_audio_test_runs_clear (&got);
      gst_spdl_audio_reader_free (reader);
      g_byte_array_unref (wav);
    }
  }
}

GST_END_TEST;

/* After a LIST chunk of odd size (padded), the frames lie where their
 * samples are not aligned: they are handed out aligned, and the same */
GST_START_TEST (test_wav_odd_offset_truncated_and_unsized)
{
  WavSpec spec = { 3, 0, 2, 16000, 64, 0, 7, 0, 0 };
  gsize off;
  GByteArray *wav;
  GstSpdlAudioReader *reader;
  SpdlAudioTestRuns got;

  spec.payload = 9999 * 16 + 5;     /* a partial frame at the end */
  reader = open_wav (&spec, &wav, &off);
  fail_unless (reader != NULL);
  fail_unless (off % 2 == 0 && off % 8 != 0);
  fail_unless_equals_uint64 (reader->n_frames, 9999);
  fail_unless (spdl_audio_test_read (reader, 17, 0, &got, NULL));
  fail_unless_equals_int (got.frames->len, (9999 - 17) * 16);
  fail_unless (memcmp (got.frames->data, wav->data + off + 17 * 16,
          got.frames->len) == 0);
  fail_unless (got.runs > 1);   /* copied in bounded pieces */
  spdl_audio_test_runs_clear (&got);
  gst_spdl_audio_reader_free (reader);
  g_byte_array_unref (wav);

  /* 32-bit frames at an address of 2 mod 4 (a LIST of 1 byte, padded)
   * in a data chunk that declares more than the file has: what is there */
  {
    WavSpec s32 = { 1, 0, 1, 8000, 32, 0, 1, 1000000, 6001 };
    reader = open_wav (&s32, &wav, &off);
    fail_unless (reader != NULL);
    fail_unless (off % 4 == 2);
    fail_unless_equals_uint64 (reader->n_frames, 1500);
    fail_unless (spdl_audio_test_read (reader, 1, 0, &got, NULL));
    fail_unless_equals_int (got.frames->len, 1499 * 4);
    fail_unless (memcmp (got.frames->data, wav->data + off + 4,
            got.frames->len) == 0);
    spdl_audio_test_runs_clear (&got);
    gst_spdl_audio_reader_free (reader);
    g_byte_array_unref (wav);
  }
  /* of unknown size (0xFFFFFFFF, as streaming writers leave it) */
  {
    WavSpec s16 = { 1, 0, 2, 8000, 16, 0, 0, 0xFFFFFFFF, 4000 };
    reader = open_wav (&s16, &wav, &off);
    fail_unless (reader != NULL);
    fail_unless_equals_uint64 (reader->n_frames, 1000);
    gst_spdl_audio_reader_free (reader);
    g_byte_array_unref (wav);
  }
}

GST_END_TEST;

/* Left to the pipeline: NULL */
GST_START_TEST (test_wav_declined)
{
  const WavSpec cases[] = {
    {2, 0, 1, 8000, 4, 256, 0, 0, 1024},        /* MS ADPCM */
    {7, 0, 1, 8000, 8, 0, 0, 0, 1024},  /* mu-law */
    {6, 0, 1, 8000, 8, 0, 0, 0, 1024},  /* A-law */
    {1, 0, 0, 8000, 16, 2, 0, 0, 1024}, /* no channels */
    {1, 0, 1, 0, 16, 0, 0, 0, 1024},    /* no rate */
    {1, 0, 1, 8000, 16, 4, 0, 0, 1024}, /* block align off */
    {1, 0, 1, 8000, 12, 0, 0, 0, 1024}, /* bits */
    {3, 0, 1, 8000, 16, 0, 0, 0, 1024}, /* 16-bit float */
    {1, 0, 3, 8000, 16, 0, 0, 0, 1200}, /* 3 channels */
    {0xFFFE, 2, 1, 8000, 16, 0, 0, 0, 1024},    /* extensible ADPCM */
    {1, 0, 1, 8000, 16, 0, 0, 0, 1},    /* no whole frame */
    {1, 0, 1, 8000, 16, 0, 0, 0, 0},    /* an empty data chunk */
  };
  GByteArray *wav;
  gsize off;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    GstSpdlAudioReader *reader = open_wav (&cases[i], &wav, &off);
    fail_unless (reader == NULL, "case %u taken", i);
    g_byte_array_unref (wav);
  }
  /* RF64, RIFX, garbage, a header cut short */
  {
    const WavSpec ok = { 1, 0, 1, 8000, 16, 0, 0, 0, 100 };
    GstSpdlAudioReader *reader;
    gsize cut;

    wav = make_wav (&ok, &off);
    reader = open_bytes (wav->data, wav->len);
    fail_unless (reader != NULL);
    gst_spdl_audio_reader_free (reader);
    for (cut = 0; cut < off; cut++)
      fail_unless (open_bytes (wav->data, cut) == NULL, "cut at %u",
          (guint) cut);
    memcpy (wav->data, "RF64", 4);
    fail_unless (open_bytes (wav->data, wav->len) == NULL);
    memcpy (wav->data, "RIFX", 4);
    fail_unless (open_bytes (wav->data, wav->len) == NULL);
    memset (wav->data, 0x5A, wav->len);
    fail_unless (open_bytes (wav->data, wav->len) == NULL);
    g_byte_array_unref (wav);
  }
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* FLAC, encoded here by libFLAC                                            */

static FLAC__StreamEncoderWriteStatus
encoder_write (const FLAC__StreamEncoder * encoder, const FLAC__byte buffer[],
    size_t bytes, uint32_t samples, uint32_t current_frame, void *user_data)
{
  g_byte_array_append (user_data, buffer, bytes);
  return FLAC__STREAM_ENCODER_WRITE_STATUS_OK;
}

/* The signal: a deterministic pattern of full @bps range */
static gint32
sample_at (guint64 i, guint c, guint bps)
{
  guint32 h = (guint32) (i * 2654435761u + c * 40503u);
  gint32 max = (gint32) ((1u << (bps - 1)) - 1);

  /* a slow ramp plus noise: compressible, every bit used */
  return (gint32) ((h >> 7) % (guint32) (max / 2)) - max / 4 +
      (gint32) (i % 97);
}

/* A FLAC of @n frames; @total: what its STREAMINFO declares (the encoder
 * writes the estimate, there being no seek callback) */
static GByteArray *
make_flac (guint channels, guint rate, guint bps, guint64 n, guint64 total)
{
  FLAC__StreamEncoder *enc = FLAC__stream_encoder_new ();
  GByteArray *out = g_byte_array_new ();
  FLAC__int32 *buf = g_new (FLAC__int32, 1000 * channels);
  guint64 i = 0;
  guint c;

  FLAC__stream_encoder_set_channels (enc, channels);
  FLAC__stream_encoder_set_sample_rate (enc, rate);
  FLAC__stream_encoder_set_bits_per_sample (enc, bps);
  FLAC__stream_encoder_set_blocksize (enc, 1152);
  /* 18 bits are outside the subset */
  FLAC__stream_encoder_set_streamable_subset (enc, FALSE);
  FLAC__stream_encoder_set_total_samples_estimate (enc, total);
  fail_unless_equals_int (FLAC__stream_encoder_init_stream (enc,
          encoder_write, NULL, NULL, NULL, out),
      FLAC__STREAM_ENCODER_INIT_STATUS_OK);
  while (i < n) {
    guint k = (guint) MIN (1000, n - i), j;
    for (j = 0; j < k; j++)
      for (c = 0; c < channels; c++)
        buf[j * channels + c] = sample_at (i + j, c, bps);
    fail_unless (FLAC__stream_encoder_process_interleaved (enc, buf, k));
    i += k;
  }
  fail_unless (FLAC__stream_encoder_finish (enc));
  FLAC__stream_encoder_delete (enc);
  g_free (buf);
  return out;
}

static void
check_flac_frames (SpdlAudioTestRuns * got, guint64 first, guint channels,
    guint bps)
{
  const gint32 *s = (const gint32 *) got->frames->data;
  guint64 n = got->frames->len / (4 * channels), i;
  guint c;

  for (i = 0; i < n; i++)
    for (c = 0; c < channels; c++) {
      gint32 want = (gint32) ((guint32) sample_at (first + i, c, bps) <<
          (32 - bps));
      if (s[i * channels + c] != want)
        fail ("frame %" G_GUINT64_FORMAT " channel %u: %d, not %d",
            first + i, c, s[i * channels + c], want);
    }
}

GST_START_TEST (test_flac_samples_and_seeks)
{
  /* flacdec's sizes, and sizes outside FLAC's subset it refuses */
  const guint bpss[] = { 8, 12, 16, 20, 24, 32, 18, 23, 31 };
  guint b, channels;

  for (b = 0; b < G_N_ELEMENTS (bpss); b++) {
    for (channels = 1; channels <= 2; channels++) {
      guint bps = bpss[b];
      GByteArray *flac = make_flac (channels, 44100, bps, 20000, 20000);
      GstSpdlAudioReader *reader = open_bytes (flac->data, flac->len);
      const guint64 firsts[] = { 0, 1151, 1152, 7777, 19999, 3, 0 };
      guint f;
      SpdlAudioTestRuns got;

      fail_unless (reader != NULL, "%u bits declined", bps);
      spdl_audio_test_check_reader (reader, "flac", GST_AUDIO_FORMAT_S32,
          44100, channels);
      fail_unless_equals_uint64 (reader->n_frames, 20000);
      fail_unless (spdl_audio_test_read (reader, 0, 0, &got, NULL));
      fail_unless_equals_int (got.frames->len, 20000 * 4 * channels);
      check_flac_frames (&got, 0, channels, bps);
      spdl_audio_test_runs_clear (&got);
      /* seeks (to frame boundaries and inside frames, backwards too),
       * stopped early, and read on from where a read stopped */
      for (f = 0; f < G_N_ELEMENTS (firsts); f++) {
        fail_unless (spdl_audio_test_read (reader, firsts[f], 2000, &got,
                NULL));
        fail_unless (got.frames->len >= MIN (2000, 20000 - firsts[f]) * 4 *
            channels);
        check_flac_frames (&got, firsts[f], channels, bps);
        spdl_audio_test_runs_clear (&got);
        fail_unless (spdl_audio_test_read (reader, got.next, 100, &got, NULL));
        spdl_audio_test_runs_clear (&got);
      }
      fail_unless (spdl_audio_test_read (reader, 20000, 0, &got, NULL));
      fail_unless_equals_int (got.runs, 0);
      spdl_audio_test_runs_clear (&got);
      gst_spdl_audio_reader_free (reader);
      g_byte_array_unref (flac);
    }
  }
}

GST_END_TEST;

GST_START_TEST (test_flac_damaged)
{
  GByteArray *flac = make_flac (2, 16000, 16, 50000, 50000);
  GstSpdlAudioReader *reader;
  GError *error = NULL;
  SpdlAudioTestRuns got;
  gsize i;

  /* bytes flipped in the middle: the read through them fails as corrupt,
   * after frames that were whole; a read after the damage is fine */
  for (i = flac->len / 2; i < flac->len / 2 + 16; i++)
    flac->data[i] ^= 0xA5;
  reader = open_bytes (flac->data, flac->len);
  fail_unless (reader != NULL);
  fail_if (spdl_audio_test_read (reader, 0, 0, &got, &error));
  fail_unless (g_error_matches (error, GST_SPDL_DECODE_ERROR,
          GST_SPDL_DECODE_ERROR_CORRUPT));
  /* named by where the frames stopped, not where the read began */
  fail_unless (g_str_has_prefix (error->message,
          "FLAC stream damaged near sample "));
  fail_unless_equals_uint64 (g_ascii_strtoull (error->message +
          strlen ("FLAC stream damaged near sample "), NULL, 10),
      got.frames->len / 8);
  g_clear_error (&error);
  fail_unless (got.frames->len > 0 && got.frames->len < 50000 * 8);
  check_flac_frames (&got, 0, 2, 16);
  spdl_audio_test_runs_clear (&got);
  fail_unless (spdl_audio_test_read (reader, 48000, 0, &got, NULL));
  fail_unless_equals_int (got.frames->len, 2000 * 8);
  check_flac_frames (&got, 48000, 2, 16);
  spdl_audio_test_runs_clear (&got);
  gst_spdl_audio_reader_free (reader);
  g_byte_array_unref (flac);

  /* cut short: its frames up to the cut, no error, fewer than declared */
  flac = make_flac (1, 16000, 16, 50000, 50000);
  reader = open_bytes (flac->data, flac->len * 6 / 10);
  fail_unless (reader != NULL);
  fail_unless_equals_uint64 (reader->n_frames, 50000);
  fail_unless (spdl_audio_test_read (reader, 0, 0, &got, NULL));
  fail_unless (got.frames->len > 20000 * 4 && got.frames->len < 40000 * 4);
  check_flac_frames (&got, 0, 1, 16);
  spdl_audio_test_runs_clear (&got);
  /* a seek past the cut: nothing, no error */
  fail_unless (spdl_audio_test_read (reader, 45000, 0, &got, NULL));
  fail_unless_equals_int (got.frames->len, 0);
  spdl_audio_test_runs_clear (&got);
  gst_spdl_audio_reader_free (reader);

  /* every cut of the header, and garbage after "fLaC": declined or read
   * without a crash */
  for (i = 0; i < 200; i++) {
    reader = open_bytes (flac->data, i);
    if (reader) {
      spdl_audio_test_read (reader, 0, 0, &got, &error);
      g_clear_error (&error);
      spdl_audio_test_runs_clear (&got);
      gst_spdl_audio_reader_free (reader);
    }
  }
  memset (flac->data + 4, 0xFF, 100);
  fail_unless (open_bytes (flac->data, flac->len) == NULL);
  g_byte_array_unref (flac);
}

GST_END_TEST;

GST_START_TEST (test_flac_declined)
{
  /* an ID3v2 tag first; 3 channels are taken, at FLAC's positions (flacdec's), and a stream with no length
   * in STREAMINFO, counted at open */
  GByteArray *flac = make_flac (1, 16000, 16, 5000, 0);
  GByteArray *tagged;
  GstSpdlAudioReader *reader;
  SpdlAudioTestRuns got;
  const guint64 firsts[] = { 3000, 0 };
  guint i;

  reader = open_bytes (flac->data, flac->len);
  fail_unless (reader != NULL);
  fail_unless_equals_int (reader->n_frames, 5000);
  for (i = 0; i < G_N_ELEMENTS (firsts); i++) {
    fail_unless (spdl_audio_test_read (reader, firsts[i], 0, &got, NULL));
    fail_unless_equals_int (got.frames->len, (5000 - firsts[i]) * 4);
    check_flac_frames (&got, firsts[i], 1, 16);
    spdl_audio_test_runs_clear (&got);
  }
  gst_spdl_audio_reader_free (reader);
  g_byte_array_unref (flac);
  flac = make_flac (3, 16000, 16, 5000, 5000);
  reader = open_bytes (flac->data, flac->len);
  fail_unless (reader != NULL);
  fail_unless_equals_int (GST_AUDIO_INFO_CHANNELS (&reader->info), 3);
  fail_unless_equals_int (reader->info.position[2],
      GST_AUDIO_CHANNEL_POSITION_FRONT_CENTER);
  gst_spdl_audio_reader_free (reader);
  g_byte_array_unref (flac);
  flac = make_flac (1, 16000, 16, 5000, 5000);
  tagged = g_byte_array_new ();
  g_byte_array_append (tagged, (const guint8 *) "ID3\3\0\0\0\0\0\0", 10);
  g_byte_array_append (tagged, flac->data, flac->len);
  fail_unless (open_bytes (tagged->data, tagged->len) == NULL);
  g_byte_array_unref (tagged);
  g_byte_array_unref (flac);
}

GST_END_TEST;

static Suite *
spdlaudioreader_suite (void)
{
  Suite *s = suite_create ("spdlaudioreader");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_wav_formats);
  tcase_add_test (tc, test_wav_odd_offset_truncated_and_unsized);
  tcase_add_test (tc, test_wav_declined);
  tcase_add_test (tc, test_flac_samples_and_seeks);
  tcase_add_test (tc, test_flac_damaged);
  tcase_add_test (tc, test_flac_declined);
  return s;
}

SPDL_CHECK_MAIN (spdlaudioreader);
