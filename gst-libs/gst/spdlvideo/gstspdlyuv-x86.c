/* GStreamer SPDL: the YCbCr converter's SSE4.1 and AVX2 kernels
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The same integer sums as the loop in gstspdlyuv.c, 16 pixels at a
 * time: luma looked up in the same table, chroma terms added, >> 16, and
 * the clamp to [0, 255] done by the saturating packs (a sum <= 0 gives
 * 0, one >= 255 << 16 gives 255, the others their top bits, as
 * clamp_fixed()). The lookups are plain loads: vpgatherdd was 15%
 * slower on the AMD EPYC this was measured on (microcoded there, and
 * slowed by the GDS mitigation on Intel). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlyuv-private.h"

#ifdef HAVE_YUV_X86_KERNELS
#include <immintrin.h>

/* pshufb masks: output block o (16 bytes of R G B R G B ...) from the
 * R, G or B bytes of 16 pixels */
#define Z -1
static const gint8 rgb_masks[3][3][16] = {
  {{0, Z, Z, 1, Z, Z, 2, Z, Z, 3, Z, Z, 4, Z, Z, 5},
      {Z, 0, Z, Z, 1, Z, Z, 2, Z, Z, 3, Z, Z, 4, Z, Z},
      {Z, Z, 0, Z, Z, 1, Z, Z, 2, Z, Z, 3, Z, Z, 4, Z}},
  {{Z, Z, 6, Z, Z, 7, Z, Z, 8, Z, Z, 9, Z, Z, 10, Z},
      {5, Z, Z, 6, Z, Z, 7, Z, Z, 8, Z, Z, 9, Z, Z, 10},
      {Z, 5, Z, Z, 6, Z, Z, 7, Z, Z, 8, Z, Z, 9, Z, Z}},
  {{Z, 11, Z, Z, 12, Z, Z, 13, Z, Z, 14, Z, Z, 15, Z, Z},
      {Z, Z, 11, Z, Z, 12, Z, Z, 13, Z, Z, 14, Z, Z, 15, Z},
      {10, Z, Z, 11, Z, Z, 12, Z, Z, 13, Z, Z, 14, Z, Z, 15}},
};
#undef Z

__attribute__((target ("sse4.1"), always_inline))
static inline void
store_rgb (__m128i r, __m128i g, __m128i b, guint8 * out)
{
  guint o;

  for (o = 0; o < 3; o++) {
    const __m128i *m = (const __m128i *) rgb_masks[o];
    __m128i v = _mm_or_si128 (_mm_or_si128 (_mm_shuffle_epi8 (r,
                _mm_loadu_si128 (m)), _mm_shuffle_epi8 (g,
                _mm_loadu_si128 (m + 1))), _mm_shuffle_epi8 (b,
            _mm_loadu_si128 (m + 2)));

    _mm_storeu_si128 ((__m128i *) (out + 16 * o), v);
  }
}

/* 16 pixels of one channel: luma terms @l, chroma terms from @c (8, one
 * per pixel pair) */
__attribute__((target ("sse4.1"), always_inline))
static inline __m128i
channel_sse41 (const __m128i l[4], const gint32 * c)
{
  __m128i c0 = _mm_loadu_si128 ((const __m128i *) c);
  __m128i c1 = _mm_loadu_si128 ((const __m128i *) (c + 4));
  __m128i s0 = _mm_srai_epi32 (_mm_add_epi32 (l[0],
          _mm_unpacklo_epi32 (c0, c0)), 16);
  __m128i s1 = _mm_srai_epi32 (_mm_add_epi32 (l[1],
          _mm_unpackhi_epi32 (c0, c0)), 16);
  __m128i s2 = _mm_srai_epi32 (_mm_add_epi32 (l[2],
          _mm_unpacklo_epi32 (c1, c1)), 16);
  __m128i s3 = _mm_srai_epi32 (_mm_add_epi32 (l[3],
          _mm_unpackhi_epi32 (c1, c1)), 16);

  return _mm_packus_epi16 (_mm_packs_epi32 (s0, s1),
      _mm_packs_epi32 (s2, s3));
}

__attribute__((target ("sse4.1")))
guint
gst_spdl_yuv_row_sse41 (const gint32 * ty, const guint8 * ys,
    const gint32 * cr, const gint32 * cg, const gint32 * cb, guint n,
    guint8 * rgb)
{
  guint i, q;

  for (i = 0; i + 16 <= n; i += 16) {
    __m128i l[4];

    for (q = 0; q < 4; q++) {
      const guint8 *s = ys + i + 4 * q;
      l[q] = _mm_setr_epi32 (ty[s[0]], ty[s[1]], ty[s[2]], ty[s[3]]);
    }
    store_rgb (channel_sse41 (l, cr + i / 2), channel_sse41 (l, cg + i / 2),
        channel_sse41 (l, cb + i / 2), rgb + 3 * i);
  }
  return i;
}

__attribute__((target ("avx2"), always_inline))
static inline __m128i
channel_avx2 (__m256i l0, __m256i l1, const gint32 * c)
{
  const __m256i first = _mm256_setr_epi32 (0, 0, 1, 1, 2, 2, 3, 3);
  const __m256i second = _mm256_setr_epi32 (4, 4, 5, 5, 6, 6, 7, 7);
  __m256i cv = _mm256_loadu_si256 ((const __m256i *) c);
  __m256i s0 = _mm256_srai_epi32 (_mm256_add_epi32 (l0,
          _mm256_permutevar8x32_epi32 (cv, first)), 16);
  __m256i s1 = _mm256_srai_epi32 (_mm256_add_epi32 (l1,
          _mm256_permutevar8x32_epi32 (cv, second)), 16);
  /* packs works per 128-bit lane: quadwords s0 0-3, s1 0-3, s0 4-7,
   * s1 4-7, put back in order */
  __m256i p = _mm256_permute4x64_epi64 (_mm256_packs_epi32 (s0, s1), 0xd8);

  return _mm_packus_epi16 (_mm256_castsi256_si128 (p),
      _mm256_extracti128_si256 (p, 1));
}

__attribute__((target ("avx2")))
guint
gst_spdl_yuv_row_avx2 (const gint32 * ty, const guint8 * ys,
    const gint32 * cr, const gint32 * cg, const gint32 * cb, guint n,
    guint8 * rgb)
{
  guint i;

  for (i = 0; i + 16 <= n; i += 16) {
    const guint8 *s = ys + i;
    __m256i l0 = _mm256_setr_epi32 (ty[s[0]], ty[s[1]], ty[s[2]], ty[s[3]],
        ty[s[4]], ty[s[5]], ty[s[6]], ty[s[7]]);
    __m256i l1 = _mm256_setr_epi32 (ty[s[8]], ty[s[9]], ty[s[10]],
        ty[s[11]], ty[s[12]], ty[s[13]], ty[s[14]], ty[s[15]]);

    store_rgb (channel_avx2 (l0, l1, cr + i / 2), channel_avx2 (l0, l1,
            cg + i / 2), channel_avx2 (l0, l1, cb + i / 2), rgb + 3 * i);
  }
  return i;
}
#endif
