/* GStreamer SPDL: the audio chain's resampler
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Why not GstAudioResampler itself: on 48 kHz audio resampled to 16 kHz
 * its inner product (SSE, 192 taps at quality 4) was 26 to 29 % of the
 * audio chain's CPU; the same taps by AVX2 with FMA cost a third
 * (docs/performance.md, "The resampler"). The filters are its own: the
 * parameters come from gst_audio_resampler_options_set_quality(), and
 * the taps, their order and the bookkeeping (history, phase, the frame
 * counts) follow audio-resampler.c's full filter mode, so results equal
 * its within float rounding (libs_spdlresampler compares the two). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#include <gst/audio/audio.h>

#include "gstspdlresampler.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_DISPATCH 1
#include <immintrin.h>
#endif

/* taps rows are aligned for vector loads */
#define TAPS_ALIGN 32

typedef gfloat (*InnerProductFunc) (const gfloat * a, const gfloat * b,
    gint len);
/* four outputs of one filter, their inputs @inc apart */
typedef void (*InnerProduct4Func) (const gfloat * a, gint inc,
    const gfloat * b, gint len, gfloat * out, gint ostride);

struct _GstSpdlResampler
{
  GstAudioResampler *table;     /* many phases: GstAudioResampler's table */

  guint channels;
  gint in_rate, out_rate;       /* over their gcd */
  gint samp_inc, samp_frac;
  gint n_taps;                  /* a multiple of 8 */
  gdouble cutoff, beta;

  gpointer taps_mem;
  gfloat *taps;                 /* out_rate rows of n_taps */
  gboolean *have_phase;
  gdouble *tmp_taps;

  gfloat *samples;              /* channels blocks of samples_len */
  gsize samples_len;
  gsize samples_avail;
  gint samp_index, samp_phase;
  gsize skip;

  InnerProductFunc inner_product;
  InnerProduct4Func inner_product4;     /* or NULL */
};

static guint simd_limit = 2;

void
gst_spdl_resampler_limit_simd (guint level)
{
  simd_limit = level;
}

/* every CPU's (the x86 one where tests limit the kernels to none) */
static gfloat
inner_product_c (const gfloat * a, const gfloat * b, gint len)
{
  gfloat s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  gint i;

  for (i = 0; i < len; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  return (s0 + s1) + (s2 + s3);
}

#ifdef HAVE_X86_DISPATCH
__attribute__((target ("avx2,fma")))
static inline gfloat
hsum_avx (__m256 s)
{
  __m128 h = _mm_add_ps (_mm256_castps256_ps128 (s),
      _mm256_extractf128_ps (s, 1));

  h = _mm_add_ps (h, _mm_movehl_ps (h, h));
  h = _mm_add_ss (h, _mm_shuffle_ps (h, h, 1));
  return _mm_cvtss_f32 (h);
}

/* @len a multiple of 8, @b aligned: four chains of FMA hide its latency */
__attribute__((target ("avx2,fma")))
static gfloat
inner_product_avx2 (const gfloat * a, const gfloat * b, gint len)
{
  __m256 s0 = _mm256_setzero_ps (), s1 = s0, s2 = s0, s3 = s0;
  gint i = 0;

  for (; i + 32 <= len; i += 32) {
    s0 = _mm256_fmadd_ps (_mm256_loadu_ps (a + i), _mm256_load_ps (b + i), s0);
    s1 = _mm256_fmadd_ps (_mm256_loadu_ps (a + i + 8),
        _mm256_load_ps (b + i + 8), s1);
    s2 = _mm256_fmadd_ps (_mm256_loadu_ps (a + i + 16),
        _mm256_load_ps (b + i + 16), s2);
    s3 = _mm256_fmadd_ps (_mm256_loadu_ps (a + i + 24),
        _mm256_load_ps (b + i + 24), s3);
  }
  for (; i < len; i += 8)
    s0 = _mm256_fmadd_ps (_mm256_loadu_ps (a + i), _mm256_load_ps (b + i), s0);
  return hsum_avx (_mm256_add_ps (_mm256_add_ps (s0, s1),
          _mm256_add_ps (s2, s3)));
}

/* Where every output has the same filter (the rates a whole multiple of
 * each other: 48 to 16 kHz), each load of the taps serves four outputs:
 * 1.4x the single product's rate */
__attribute__((target ("avx2,fma")))
static void
inner_product4_avx2 (const gfloat * a, gint inc, const gfloat * b, gint len,
    gfloat * out, gint ostride)
{
  __m256 s0 = _mm256_setzero_ps (), s1 = s0, s2 = s0, s3 = s0;
  gint i;

  for (i = 0; i < len; i += 8) {
    __m256 t = _mm256_load_ps (b + i);
    s0 = _mm256_fmadd_ps (_mm256_loadu_ps (a + i), t, s0);
    s1 = _mm256_fmadd_ps (_mm256_loadu_ps (a + inc + i), t, s1);
    s2 = _mm256_fmadd_ps (_mm256_loadu_ps (a + 2 * inc + i), t, s2);
    s3 = _mm256_fmadd_ps (_mm256_loadu_ps (a + 3 * inc + i), t, s3);
  }
  out[0] = hsum_avx (s0);
  out[ostride] = hsum_avx (s1);
  out[2 * ostride] = hsum_avx (s2);
  out[3 * ostride] = hsum_avx (s3);
}

/* SSE is in every x86-64 */
static gfloat
inner_product_sse (const gfloat * a, const gfloat * b, gint len)
{
  __m128 s0 = _mm_setzero_ps (), s1 = s0;
  gint i;

  for (i = 0; i < len; i += 8) {
    s0 = _mm_add_ps (s0, _mm_mul_ps (_mm_loadu_ps (a + i),
            _mm_load_ps (b + i)));
    s1 = _mm_add_ps (s1, _mm_mul_ps (_mm_loadu_ps (a + i + 4),
            _mm_load_ps (b + i + 4)));
  }
  s0 = _mm_add_ps (s0, s1);
  s0 = _mm_add_ps (s0, _mm_movehl_ps (s0, s0));
  s0 = _mm_add_ss (s0, _mm_shuffle_ps (s0, s0, 1));
  return _mm_cvtss_f32 (s0);
}
#endif

static void
choose_inner_product (GstSpdlResampler * r)
{
#ifdef HAVE_X86_DISPATCH
  __builtin_cpu_init ();
  if (simd_limit >= 2 && __builtin_cpu_supports ("avx2")
      && __builtin_cpu_supports ("fma")) {
    r->inner_product = inner_product_avx2;
    r->inner_product4 = inner_product4_avx2;
    return;
  }
  if (simd_limit >= 1) {
    r->inner_product = inner_product_sse;
    return;
  }
#endif
  r->inner_product = inner_product_c;
}

/* The modified Bessel function I0 by its power series: the Kaiser betas
 * here are at most 12.3, where it converges in under 40 terms */
static gdouble
bessel_i0 (gdouble x)
{
  gdouble sum = 1.0, term = 1.0, q = x * x / 4.0;
  gint k;

  for (k = 1; k < 500; k++) {
    term *= q / ((gdouble) k * k);
    sum += term;
    if (term < sum * 1e-17)
      break;
  }
  return sum;
}

/* audio-resampler.c's get_kaiser_tap () */
static gdouble
kaiser_tap (gdouble x, gint n_taps, gdouble cutoff, gdouble beta)
{
  gdouble y = G_PI * x, s, w;

  s = (y == 0.0 ? cutoff : sin (y * cutoff) / y);
  w = 2.0 * x / n_taps;
  return s * bessel_i0 (beta * sqrt (MAX (1 - w * w, 0)));
}

/* The filter of @phase (of out_rate), normalized to a sum of 1 */
static const gfloat *
get_phase_taps (GstSpdlResampler * r, gint phase)
{
  gfloat *taps = r->taps + (gsize) phase * r->n_taps;

  if (G_UNLIKELY (!r->have_phase[phase])) {
    gdouble x = 1.0 - r->n_taps / 2 - (gdouble) phase / r->out_rate;
    gdouble weight = 0.0;
    gint i;

    for (i = 0; i < r->n_taps; i++)
      weight += r->tmp_taps[i] = kaiser_tap (x + i, r->n_taps, r->cutoff,
          r->beta);
    for (i = 0; i < r->n_taps; i++)
      taps[i] = r->tmp_taps[i] / weight;
    r->have_phase[phase] = TRUE;
  }
  return taps;
}

static gdouble
get_option (GstStructure * options, const gchar * name, gdouble def)
{
  gdouble v;

  return gst_structure_get_double (options, name, &v) ? v : def;
}

GstStructure *
gst_spdl_resampler_exact_options (gint quality, guint in_rate,
    guint out_rate)
{
  GstStructure *options = gst_structure_new_empty ("GstAudioResampler.options");

  gst_audio_resampler_options_set_quality (GST_AUDIO_RESAMPLER_METHOD_KAISER,
      quality, in_rate, out_rate, options);
  gst_structure_set (options, GST_AUDIO_RESAMPLER_OPT_FILTER_MODE,
      GST_TYPE_AUDIO_RESAMPLER_FILTER_MODE, GST_AUDIO_RESAMPLER_FILTER_MODE_FULL,
      GST_AUDIO_RESAMPLER_OPT_FILTER_INTERPOLATION,
      GST_TYPE_AUDIO_RESAMPLER_FILTER_INTERPOLATION,
      GST_AUDIO_RESAMPLER_FILTER_INTERPOLATION_NONE, NULL);
  return options;
}

GstSpdlResampler *
gst_spdl_resampler_new (gint quality, guint channels, guint in_rate,
    guint out_rate, gsize max_filter_bytes, gint oversample)
{
  GstSpdlResampler *r;
  GstStructure *options;
  gdouble A, tr_bw;
  gint gcd, n;
  guint64 n_taps;

  g_return_val_if_fail (channels > 0 && in_rate > 0 && out_rate > 0, NULL);
  g_return_val_if_fail (quality >= 0 && quality <= 10, NULL);

  r = g_new0 (GstSpdlResampler, 1);
  r->channels = channels;
  options = gst_spdl_resampler_exact_options (quality, in_rate, out_rate);

  gcd = gst_util_greatest_common_divisor (in_rate, out_rate);
  r->in_rate = in_rate / gcd;
  r->out_rate = out_rate / gcd;
  r->samp_inc = r->in_rate / r->out_rate;
  r->samp_frac = r->in_rate % r->out_rate;

  /* calculate_kaiser_params () and resampler_calculate_taps () */
  A = get_option (options, GST_AUDIO_RESAMPLER_OPT_STOP_ATTENUATION, 85.0);
  tr_bw = get_option (options, GST_AUDIO_RESAMPLER_OPT_TRANSITION_BANDWIDTH,
      0.087);
  r->cutoff = get_option (options, GST_AUDIO_RESAMPLER_OPT_CUTOFF, 0.94);
  if (A > 50)
    r->beta = 0.1102 * (A - 8.7);
  else if (A >= 21)
    r->beta = 0.5842 * pow (A - 21, 0.4) + 0.07886 * (A - 21);
  else
    r->beta = 0.0;
  n = (A - 8.0) / (2.285 * 2 * G_PI * tr_bw);
  n_taps = n + 1;
  if (r->out_rate < r->in_rate) {
    r->cutoff = r->cutoff * r->out_rate / r->in_rate;
    n_taps = gst_util_uint64_scale_int (n_taps, r->in_rate, r->out_rate);
  }
  n_taps = GST_ROUND_UP_8 (n_taps);

  if (n_taps * r->out_rate * sizeof (gfloat) > max_filter_bytes) {
    /* a table of @oversample phases, linear between them (cubic, the
     * default, is off by a fraction of a phase) */
    gst_structure_remove_field (options, GST_AUDIO_RESAMPLER_OPT_FILTER_MODE);
    gst_structure_set (options, GST_AUDIO_RESAMPLER_OPT_FILTER_OVERSAMPLE,
        G_TYPE_INT, oversample,
        GST_AUDIO_RESAMPLER_OPT_FILTER_INTERPOLATION,
        GST_TYPE_AUDIO_RESAMPLER_FILTER_INTERPOLATION,
        GST_AUDIO_RESAMPLER_FILTER_INTERPOLATION_LINEAR, NULL);
    r->table = gst_audio_resampler_new (GST_AUDIO_RESAMPLER_METHOD_KAISER,
        GST_AUDIO_RESAMPLER_FLAG_NONE, GST_AUDIO_FORMAT_F32, channels,
        in_rate, out_rate, options);
    gst_structure_free (options);
    if (r->table == NULL) {
      g_free (r);
      return NULL;
    }
    return r;
  }
  gst_structure_free (options);

  r->n_taps = n_taps;
  r->taps_mem = g_malloc (n_taps * r->out_rate * sizeof (gfloat) +
      TAPS_ALIGN);
  r->taps = (gfloat *) GSIZE_TO_POINTER (GST_ROUND_UP_32 (GPOINTER_TO_SIZE
          (r->taps_mem)));
  r->have_phase = g_new0 (gboolean, r->out_rate);
  r->tmp_taps = g_new (gdouble, n_taps);
  choose_inner_product (r);
  gst_spdl_resampler_reset (r);
  return r;
}

void
gst_spdl_resampler_free (GstSpdlResampler * r)
{
  if (r == NULL)
    return;
  if (r->table)
    gst_audio_resampler_free (r->table);
  g_free (r->taps_mem);
  g_free (r->have_phase);
  g_free (r->tmp_taps);
  g_free (r->samples);
  g_free (r);
}

gboolean
gst_spdl_resampler_is_exact (GstSpdlResampler * r)
{
  return r->table == NULL;
}

/* Room for @need samples per channel, the history kept */
static void
ensure_samples (GstSpdlResampler * r, gsize need)
{
  gfloat *samples;
  gsize len;
  guint c;

  if (need <= r->samples_len)
    return;
  len = MAX (need, r->samples_len * 3 / 2);
  samples = g_new0 (gfloat, len * r->channels);
  if (r->samples) {
    for (c = 0; c < r->channels; c++)
      memcpy (samples + c * len, r->samples + c * r->samples_len,
          r->samples_avail * sizeof (gfloat));
  }
  g_free (r->samples);
  r->samples = samples;
  r->samples_len = len;
}

/* Empties the history as a new resampler's (half a filter of zeros);
 * the phase stays where it was, as with gst_audio_resampler_reset () */
void
gst_spdl_resampler_reset (GstSpdlResampler * r)
{
  guint c;

  if (r->table) {
    gst_audio_resampler_reset (r->table);
    return;
  }
  ensure_samples (r, r->n_taps);
  for (c = 0; c < r->channels; c++)
    memset (r->samples + c * r->samples_len, 0,
        (r->n_taps / 2) * sizeof (gfloat));
  r->samp_index = 0;
  r->samples_avail = r->n_taps / 2 - 1;
  r->skip = 0;
}

gsize
gst_spdl_resampler_get_max_latency (GstSpdlResampler * r)
{
  if (r->table)
    return gst_audio_resampler_get_max_latency (r->table);
  return r->n_taps / 2;
}

gsize
gst_spdl_resampler_get_out_frames (GstSpdlResampler * r, gsize in_frames)
{
  gsize need, avail, out;

  if (r->table)
    return gst_audio_resampler_get_out_frames (r->table, in_frames);
  need = r->n_taps + r->samp_index + r->skip;
  avail = r->samples_avail + in_frames;
  if (avail < need)
    return 0;
  out = (avail - need) * r->out_rate;
  if (out < (gsize) r->samp_phase)
    return 0;
  return ((out - r->samp_phase) / r->in_rate) + 1;
}

gsize
gst_spdl_resampler_get_in_frames (GstSpdlResampler * r, gsize out_frames)
{
  gsize in_frames;

  if (r->table)
    return gst_audio_resampler_get_in_frames (r->table, out_frames);
  in_frames = (r->samp_phase + out_frames * r->samp_frac) / r->out_rate;
  return in_frames + out_frames * r->samp_inc;
}

void
gst_spdl_resampler_resample (GstSpdlResampler * r, const gfloat * in,
    gsize in_frames, gfloat * out, gsize out_frames)
{
  gsize avail, consumed = 0, di, i;
  gint samp_index = 0, samp_phase = 0;
  guint c, channels = r->channels;

  if (r->table) {
    gpointer ip[1] = { (gpointer) in }, op[1] = {
    out};
    gst_audio_resampler_resample (r->table, in ? ip : NULL, in_frames, op,
        out_frames);
    return;
  }
  if (G_UNLIKELY (r->skip >= in_frames)) {
    r->skip -= in_frames;
    return;
  }
  r->samp_index += r->skip;
  r->skip = 0;

  avail = r->samples_avail;
  ensure_samples (r, avail + in_frames);
  for (c = 0; c < channels; c++) {
    gfloat *s = r->samples + c * r->samples_len + avail;
    if (in == NULL)
      memset (s, 0, in_frames * sizeof (gfloat));
    else if (channels == 1)
      memcpy (s, in, in_frames * sizeof (gfloat));
    else
      for (i = 0; i < in_frames; i++)
        s[i] = in[i * channels + c];
  }
  r->samples_avail = avail += in_frames;

  if (avail < (gsize) r->n_taps + r->samp_index || out_frames == 0)
    return;

  for (c = 0; c < channels; c++) {
    gfloat *ip = r->samples + c * r->samples_len;
    gfloat *op = out + c;

    samp_index = r->samp_index;
    samp_phase = r->samp_phase;
    di = 0;
    if (r->out_rate == 1 && r->inner_product4) {
      const gfloat *taps = get_phase_taps (r, 0);

      for (; di + 4 <= out_frames; di += 4) {
        r->inner_product4 (ip + samp_index, r->samp_inc, taps, r->n_taps, op,
            channels);
        op += 4 * channels;
        samp_index += 4 * r->samp_inc;
      }
    }
    for (; di < out_frames; di++) {
      const gfloat *taps = get_phase_taps (r, samp_phase);

      *op = r->inner_product (ip + samp_index, taps, r->n_taps);
      op += channels;
      samp_index += r->samp_inc;
      samp_phase += r->samp_frac;
      if (samp_phase >= r->out_rate) {
        samp_phase -= r->out_rate;
        samp_index += 1;
      }
    }
    if (avail > (gsize) samp_index)
      memmove (ip, ip + samp_index, (avail - samp_index) * sizeof (gfloat));
  }
  consumed = samp_index - r->samp_index;
  r->samp_index = 0;
  r->samp_phase = samp_phase;

  if (consumed > 0) {
    if (avail > consumed) {
      r->samples_avail = avail - consumed;
    } else {
      r->samples_avail = 0;
      r->skip = consumed - avail;
    }
  }
}
