/* GStreamer SPDL: normalized float conversion of image rows
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* (x / 255 - mean) / std is x * (1 / (255 std)) + (-mean / std): the
 * per-value scale and offset of a whole row are precomputed, so each row is
 * one multiply-add per value that the compiler vectorizes (FMA on AVX2
 * machines), narrowed to float16 (F16C) or bfloat16 (integer rounding) in
 * the same loop. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlnormalize.h"
#include <gst/gst.h>

#include <math.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define SPDL_VECTOR_CLONES \
  __attribute__((target_clones ("arch=x86-64-v3", "default")))
#define SPDL_HAVE_X86_PATHS 1
#include <immintrin.h>
/* libgcc reads the CPU's features in a constructor: a test is one load */
#define have_f16c() (__builtin_cpu_supports ("avx2") && \
    __builtin_cpu_supports ("fma") && __builtin_cpu_supports ("f16c"))
#define have_ssse3() __builtin_cpu_supports ("ssse3")
#else
#define SPDL_VECTOR_CLONES
#endif

typedef union
{
  gfloat f;
  guint32 u;
} FloatBits;

/* IEEE binary16, round to nearest even (F. Giesen's float_to_half_rtne) */
guint16
gst_spdl_float_to_half (gfloat f)
{
  FloatBits v = {.f = f };
  guint32 sign = (v.u >> 16) & 0x8000;
  guint32 abs = v.u & 0x7fffffff;

  if (abs >= 0x7f800000)        /* inf, NaN (quiet) */
    return sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0);
  if (abs >= 0x477ff000)        /* rounds to >= 65520: inf */
    return sign | 0x7c00;
  if (abs < 0x38800000) {       /* below 2^-14: a subnormal half */
    /* adding 0.5 leaves the value in units of 2^-24 in the low bits, with
     * the FPU's round to nearest even */
    v.u = abs;
    v.f += 0.5f;
    return sign | (guint16) (v.u - 0x3f000000);
  }
  /* rebias the exponent (127 -> 15) and round the 13 dropped bits */
  abs += 0xc8000fff + ((abs >> 13) & 1);
  return sign | (guint16) (abs >> 13);
}

guint16
gst_spdl_float_to_bfloat16 (gfloat f)
{
  FloatBits v = {.f = f };

  if ((v.u & 0x7fffffff) > 0x7f800000)
    return (v.u >> 16) | 0x40;  /* NaN stays NaN */
  return (guint16) ((v.u + 0x7fff + ((v.u >> 16) & 1)) >> 16);
}

/* ------------------------------------------------------------------------ */
/* Row kernels                                                              */

SPDL_VECTOR_CLONES static void
normalize_f32 (const guint8 * restrict src, const gfloat * restrict scale,
    const gfloat * restrict offset, gfloat * restrict out, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    out[i] = (gfloat) src[i] * scale[i] + offset[i];
}

SPDL_VECTOR_CLONES static void
normalize_bf16 (const guint8 * restrict src, const gfloat * restrict scale,
    const gfloat * restrict offset, guint16 * restrict out, guint n)
{
  guint i;

  /* finite values only (std != 0): no NaN case in the loop */
  for (i = 0; i < n; i++) {
    FloatBits v = {.f = (gfloat) src[i] * scale[i] + offset[i] };
    out[i] = (guint16) ((v.u + 0x7fff + ((v.u >> 16) & 1)) >> 16);
  }
}

static void
normalize_f16_portable (const guint8 * src, const gfloat * scale,
    const gfloat * offset, guint16 * out, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    out[i] = gst_spdl_float_to_half ((gfloat) src[i] * scale[i] + offset[i]);
}

#ifdef SPDL_HAVE_X86_PATHS
/* 8 values per step: widen, FMA, convert with the hardware's RNE */
__attribute__((target ("avx2,fma,f16c")))
static void
normalize_f16_f16c (const guint8 * src, const gfloat * scale,
    const gfloat * offset, guint16 * out, guint n)
{
  guint i;

  for (i = 0; i + 8 <= n; i += 8) {
    __m128i bytes = _mm_loadl_epi64 ((const __m128i *) (src + i));
    __m256 x = _mm256_cvtepi32_ps (_mm256_cvtepu8_epi32 (bytes));
    __m256 y = _mm256_fmadd_ps (x, _mm256_loadu_ps (scale + i),
        _mm256_loadu_ps (offset + i));
    _mm_storeu_si128 ((__m128i *) (out + i),
        _mm256_cvtps_ph (y, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; i++)
    out[i] = gst_spdl_float_to_half (__builtin_fmaf ((gfloat) src[i],
            scale[i], offset[i]));
}
#endif

static void
normalize_f16 (const guint8 * src, const gfloat * scale,
    const gfloat * offset, guint16 * out, guint n)
{
#ifdef SPDL_HAVE_X86_PATHS
  if (have_f16c ()) {
    normalize_f16_f16c (src, scale, offset, out, n);
    return;
  }
#endif
  normalize_f16_portable (src, scale, offset, out, n);
}

/* One row of @n values into @dst, as the normalizer's dtype. */
static void
normalize_values (const GstSpdlNormalizer * norm, const guint8 * src,
    const gfloat * scale, const gfloat * offset, gpointer dst, guint n)
{
  switch (norm->dtype) {
    case GST_SPDL_DTYPE_FLOAT32:
      normalize_f32 (src, scale, offset, dst, n);
      break;
    case GST_SPDL_DTYPE_FLOAT16:
      normalize_f16 (src, scale, offset, dst, n);
      break;
    case GST_SPDL_DTYPE_BFLOAT16:
      normalize_bf16 (src, scale, offset, dst, n);
      break;
    default:
      g_assert_not_reached ();
  }
}

SPDL_VECTOR_CLONES static void
extract_channel (const guint8 * restrict row, guint8 * restrict out,
    guint width, guint channels, guint k)
{
  guint x;

  for (x = 0; x < width; x++)
    out[x] = row[x * channels + k];
}

/* RGB into three planes in one pass */
SPDL_VECTOR_CLONES static void
deinterleave3_portable (const guint8 * restrict row, guint8 * restrict r,
    guint8 * restrict g, guint8 * restrict b, guint width)
{
  guint x;

  for (x = 0; x < width; x++) {
    r[x] = row[3 * x];
    g[x] = row[3 * x + 1];
    b[x] = row[3 * x + 2];
  }
}

#ifdef SPDL_HAVE_X86_PATHS
/* compilers do not vectorize stride-3 byte loads on x86: 16 pixels (48
 * bytes, three loads) per step, each plane gathered by three byte shuffles */
__attribute__((target ("ssse3")))
static void
deinterleave3_ssse3 (const guint8 * row, guint8 * r, guint8 * g, guint8 * b,
    guint width)
{
#define Z -1
  const __m128i ra = _mm_setr_epi8 (0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z, Z, Z,
      Z, Z, Z);
  const __m128i rb = _mm_setr_epi8 (Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14, Z, Z,
      Z, Z, Z);
  const __m128i rc = _mm_setr_epi8 (Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 1, 4, 7,
      10, 13);
  const __m128i ga = _mm_setr_epi8 (1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z, Z, Z,
      Z, Z, Z);
  const __m128i gb = _mm_setr_epi8 (Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15, Z, Z,
      Z, Z, Z);
  const __m128i gc = _mm_setr_epi8 (Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 2, 5, 8,
      11, 14);
  const __m128i ba = _mm_setr_epi8 (2, 5, 8, 11, 14, Z, Z, Z, Z, Z, Z, Z, Z,
      Z, Z, Z);
  const __m128i bb = _mm_setr_epi8 (Z, Z, Z, Z, Z, 1, 4, 7, 10, 13, Z, Z, Z,
      Z, Z, Z);
  const __m128i bc = _mm_setr_epi8 (Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 0, 3, 6, 9,
      12, 15);
#undef Z
  guint x;

  for (x = 0; x + 16 <= width; x += 16) {
    const guint8 *p = row + 3 * x;
    __m128i a = _mm_loadu_si128 ((const __m128i *) p);
    __m128i m = _mm_loadu_si128 ((const __m128i *) (p + 16));
    __m128i c = _mm_loadu_si128 ((const __m128i *) (p + 32));

    _mm_storeu_si128 ((__m128i *) (r + x), _mm_or_si128 (_mm_or_si128
            (_mm_shuffle_epi8 (a, ra), _mm_shuffle_epi8 (m, rb)),
            _mm_shuffle_epi8 (c, rc)));
    _mm_storeu_si128 ((__m128i *) (g + x), _mm_or_si128 (_mm_or_si128
            (_mm_shuffle_epi8 (a, ga), _mm_shuffle_epi8 (m, gb)),
            _mm_shuffle_epi8 (c, gc)));
    _mm_storeu_si128 ((__m128i *) (b + x), _mm_or_si128 (_mm_or_si128
            (_mm_shuffle_epi8 (a, ba), _mm_shuffle_epi8 (m, bb)),
            _mm_shuffle_epi8 (c, bc)));
  }
  deinterleave3_portable (row + 3 * x, r + x, g + x, b + x, width - x);
}
#endif

void
gst_spdl_deinterleave_rgb_row (const guint8 * row, guint8 * r, guint8 * g,
    guint8 * b, guint width)
{
#ifdef SPDL_HAVE_X86_PATHS
  if (have_ssse3 ()) {
    deinterleave3_ssse3 (row, r, g, b, width);
    return;
  }
#endif
  deinterleave3_portable (row, r, g, b, width);
}

void
gst_spdl_normalize_row (GstSpdlNormalizer * norm, const guint8 * src,
    gpointer dst, gsize plane_elems)
{
  gsize elem = gst_spdl_dtype_size (norm->dtype);
  guint k;

  if (!norm->planar || norm->channels == 1) {
    normalize_values (norm, src, norm->scale_row, norm->offset_row, dst,
        norm->width * norm->channels);
    return;
  }
  if (norm->channels == 3)
    gst_spdl_deinterleave_rgb_row (src, norm->plane_row,
        norm->plane_row + norm->width, norm->plane_row + 2 * norm->width,
        norm->width);
  for (k = 0; k < norm->channels; k++) {
    guint8 *plane = norm->plane_row +
        (norm->channels == 3 ? k * norm->width : 0);

    if (norm->channels != 3)
      extract_channel (src, plane, norm->width, norm->channels, k);
    normalize_values (norm, plane,
        norm->scale_row + (gsize) k * norm->width,
        norm->offset_row + (gsize) k * norm->width,
        (guint8 *) dst + (gsize) k * plane_elems * elem, norm->width);
  }
}

/* ------------------------------------------------------------------------ */

static gdouble
channel_value (const gdouble * values, guint n, guint c, gdouble dflt)
{
  if (n == 0)
    return dflt;
  return values[n == 1 ? 0 : c];
}

gboolean
gst_spdl_normalizer_init (GstSpdlNormalizer * norm, GstSpdlDType dtype,
    const gdouble * mean, guint n_mean, const gdouble * std, guint n_std,
    guint width, guint channels, gboolean planar, GError ** error)
{
  guint c;

  memset (norm, 0, sizeof (*norm));
  g_return_val_if_fail (channels >= 1 &&
      channels <= GST_SPDL_NORMALIZE_MAX_CHANNELS, FALSE);
  if ((n_mean > 1 && n_mean != channels) || (n_std > 1 && n_std != channels)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
        "mean has %u and std %u values for images of %u channels: give one "
        "value or one per channel", n_mean, n_std, channels);
    return FALSE;
  }
  norm->dtype = dtype;
  norm->width = width;
  norm->channels = channels;
  norm->planar = planar;
  for (c = 0; c < channels; c++) {
    gdouble m = channel_value (mean, n_mean, c, 0.0);
    gdouble s = channel_value (std, n_std, c, 1.0);

    if (s == 0.0 || !isfinite (s) || !isfinite (m)) {
      g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
          "std must be finite and non-zero, mean finite (channel %u: mean %g,"
          " std %g)", c, m, s);
      return FALSE;
    }
    /* in double, so the float constants are the closest to the exact ones */
    norm->scale[c] = (gfloat) (1.0 / (255.0 * s));
    norm->offset[c] = (gfloat) (-m / s);
  }
  gst_spdl_normalizer_set_width (norm, width);
  return TRUE;
}

void
gst_spdl_normalizer_set_width (GstSpdlNormalizer * norm, guint width)
{
  guint c, x, channels = norm->channels;

  if (norm->scale_row && norm->width == width)
    return;
  gst_spdl_normalizer_clear (norm);
  norm->width = width;
  norm->scale_row = g_new (gfloat, (gsize) width * channels);
  norm->offset_row = g_new (gfloat, (gsize) width * channels);
  norm->plane_row = g_new (guint8, (gsize) width * channels);
  for (c = 0; c < channels; c++) {
    for (x = 0; x < width; x++) {
      gsize i = norm->planar ? (gsize) c * width + x : (gsize) x * channels + c;
      norm->scale_row[i] = norm->scale[c];
      norm->offset_row[i] = norm->offset[c];
    }
  }
}

void
gst_spdl_normalizer_clear (GstSpdlNormalizer * norm)
{
  g_clear_pointer (&norm->scale_row, g_free);
  g_clear_pointer (&norm->offset_row, g_free);
  g_clear_pointer (&norm->plane_row, g_free);
}
