/* GStreamer SPDL: the resampler's SSE4.1 and AVX2 kernels
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Same sums as the plain C loops in gstspdlresample.c, bit for bit: the
 * callers there choose a kernel by what the CPU has and the axis allows. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlresample-private.h"

#ifdef HAVE_SSE41_KERNEL

#ifdef HAVE_AVX2_KERNEL
gboolean
gst_spdl_resample_have_avx2 (void)
{
  static gint cached = -1;

  if (cached < 0)
    cached = __builtin_cpu_supports ("avx2") ? 1 : 0;
  return cached;
}

/* The AVX2 kernel multiplies 16-bit pixels by 16-bit weights (pmaddwd), so
 * each 22-bit weight is kept as two halves; the sums stay exact:
 * sum(p * w) = (sum(p * hi) << SPLIT_BITS) + sum(p * lo). Outputs go in
 * pairs, one per 128-bit lane (an odd last output is paired with itself);
 * per pair and group of 4 taps, 4 vectors of 16 int16 whose lanes are
 * [hi0 hi1 hi0 hi1 hi0 hi1 0 0], [hi2 hi3 ...], [lo0 lo1 ...], [lo2 lo3 ...],
 * matching pixels laid out as [R0 R1 G0 G1 B0 B1 0 0] and
 * [R2 R3 G2 G3 B2 B3 0 0]. */
void
gst_spdl_resample_split_weights_avx2 (GstSpdlResampleAxis * axis)
{
  guint groups = (axis->taps + 3) / 4, pairs = (axis->out_size + 1) / 2;
  guint k, lane, g, half, pair, c;

  axis->split = g_aligned_alloc0 ((gsize) pairs * groups * 64,
      sizeof (gint16), 32);
  for (k = 0; k < pairs; k++)
    for (lane = 0; lane < 2; lane++) {
      guint i = MIN (2 * k + lane, axis->out_size - 1);
      const gint32 *w = axis->weights + i * axis->ksize;

      for (g = 0; g < groups; g++) {
        gint16 *dst = axis->split + ((gsize) k * groups + g) * 64 + lane * 8;

        for (half = 0; half < 2; half++)        /* taps 4g+0,1 then 4g+2,3 */
          for (pair = 0; pair < 2; pair++) {
            guint t = 4 * g + 2 * half + pair;
            gint32 wt = t < axis->taps ? w[t] : 0;
            gint16 hi = (gint16) (wt >> SPLIT_BITS);
            gint16 lo = (gint16) (wt & ((1 << SPLIT_BITS) - 1));

            for (c = 0; c < 3; c++) {
              dst[half * 16 + 2 * c + pair] = hi;
              dst[(2 + half) * 16 + 2 * c + pair] = lo;
            }
          }
      }
    }
}
#endif

/* pshufb masks: the first n of 4 taps' bytes as [R.. G.. B..], zeros for
 * the rest, so bytes past a window never reach the sums */
static const gint8 planar_masks[5][16] = {
  {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
  {0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, -1, -1, -1, -1},
  {0, 3, -1, -1, 1, 4, -1, -1, 2, 5, -1, -1, -1, -1, -1, -1},
  {0, 3, 6, -1, 1, 4, 7, -1, 2, 5, 8, -1, -1, -1, -1, -1},
  {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11, -1, -1, -1, -1},
};

/* Sums of up to 4 taps of one RGB output, exact: the window bytes at @p are
 * shuffled into [R0..R3 G0..G3 B0..B3], widened to 32 bits, multiplied by
 * the weights (pmulld) and summed into [r g b 0]. Loads 16 bytes. */
__attribute__((target ("sse4.1")))
static inline __m128i
sum4_rgb (const guint8 * p, __m128i weights, guint n)
{
  const __m128i planar = _mm_loadu_si128 ((const __m128i *) planar_masks[n]);
  __m128i px = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) p),
      planar);
  __m128i r = _mm_mullo_epi32 (_mm_cvtepu8_epi32 (px), weights);
  __m128i g = _mm_mullo_epi32 (_mm_cvtepu8_epi32 (_mm_srli_si128 (px, 4)),
      weights);
  __m128i b = _mm_mullo_epi32 (_mm_cvtepu8_epi32 (_mm_srli_si128 (px, 8)),
      weights);

  return _mm_hadd_epi32 (_mm_hadd_epi32 (r, g),
      _mm_hadd_epi32 (b, _mm_setzero_si128 ()));
}

/* Up to 4 weights as a vector, zeros after @n: never reads past them. */
__attribute__((target ("sse4.1")))
static inline __m128i
load_weights (const gint32 * w, guint n)
{
  if (n >= 4)
    return _mm_loadu_si128 ((const __m128i *) w);
  return _mm_setr_epi32 (w[0], n > 1 ? w[1] : 0, n > 2 ? w[2] : 0, 0);
}

/* The same sums as row_rgb_taps for windows of up to 8 taps, as one or two
 * 4-tap halves. Pixels are read up to 16 bytes past a window's start or
 * middle: callers leave 16 bytes of slack after each row. */
__attribute__((target ("sse4.1")))
void
gst_spdl_resample_row_rgb_sse41 (const GstSpdlResampleAxis * axis,
    const guint8 * in, gint in_start, guint8 * out)
{
  const __m128i half = _mm_set1_epi32 (1 << (PRECISION_BITS - 1));
  guint taps = axis->taps, i;

  for (i = 0; i < axis->out_size; i++) {
    const guint8 *p = in + (gsize) (axis->first[i] - in_start) * 3;
    const gint32 *w = axis->weights + i * axis->ksize;
    __m128i sums = sum4_rgb (p, load_weights (w, taps), MIN (taps, 4));

    if (taps > 4)
      sums = _mm_add_epi32 (sums, sum4_rgb (p + 12, load_weights (w + 4,
                  taps - 4), taps - 4));
    sums = _mm_srai_epi32 (_mm_add_epi32 (sums, half), PRECISION_BITS);
    sums = _mm_packs_epi32 (sums, sums);
    sums = _mm_packus_epi16 (sums, sums);
    {
      guint32 v = (guint32) _mm_cvtsi128_si32 (sums);
      out[3 * i] = v & 0xff;
      out[3 * i + 1] = (v >> 8) & 0xff;
      out[3 * i + 2] = (v >> 16) & 0xff;
    }
  }
}

/* pshufb masks: taps (0, 1) and (2, 3) of a 16-byte load as zero-extended
 * words [Ra Rb Ga Gb Ba Bb 0 0] (the fast SSE4.1 kernel and, one per
 * 128-bit lane, the exact AVX2 one) */
static const gint8 pair_masks[2][16] = {
  {0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1},
  {6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1},
};

/* The same for a last group of n < 4 taps: the bytes of taps n..3 become
 * zeros, not pixels past the window (slack bytes never written, which
 * memcheck would follow through a multiplication by a zero weight) */
static const gint8 pair_masks_short[4][2][16] = {
  {{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
      {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
  {{0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, -1, -1, -1, -1},
      {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
  {{0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1},
      {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
  {{0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1},
      {6, -1, -1, -1, 7, -1, -1, -1, 8, -1, -1, -1, -1, -1, -1, -1}},
};

/* The masks of a group holding @n taps (4 or fewer) */
static inline const gint8 *
group_mask (guint n, guint which)
{
  return n >= 4 ? pair_masks[which] : pair_masks_short[n][which];
}

#ifdef HAVE_AVX2_KERNEL
/* The masks of the exact AVX2 kernel for one group of taps, in both lanes */
typedef struct
{
  __m256i m01, m23;
} GroupMasks;

__attribute__((target ("avx2"), always_inline))
static inline GroupMasks
group_masks (guint n)
{
  GroupMasks m;

  m.m01 = _mm256_broadcastsi128_si256 (_mm_loadu_si128
      ((const __m128i *) group_mask (n, 0)));
  m.m23 = _mm256_broadcastsi128_si256 (_mm_loadu_si128
      ((const __m128i *) group_mask (n, 1)));
  return m;
}

/* [r g b 0] sums of a group of up to 4 taps for two outputs (one per
 * lane), pixels at @p0/@p1, the pair's weights of the group at @wv (see
 * axis_split_weights); taps 2 and 3 only where the group has them */
__attribute__((target ("avx2"), always_inline))
static inline __m256i
group_sums (const guint8 * p0, const guint8 * p1, const __m256i * wv,
    GroupMasks m, gboolean four)
{
  __m256i px = _mm256_inserti128_si256 (_mm256_castsi128_si256
      (_mm_loadu_si128 ((const __m128i *) p0)),
      _mm_loadu_si128 ((const __m128i *) p1), 1);
  __m256i a = _mm256_shuffle_epi8 (px, m.m01);
  __m256i hi = _mm256_madd_epi16 (a, _mm256_load_si256 (wv));
  __m256i lo = _mm256_madd_epi16 (a, _mm256_load_si256 (wv + 2));

  if (four) {
    __m256i b = _mm256_shuffle_epi8 (px, m.m23);
    hi = _mm256_add_epi32 (hi, _mm256_madd_epi16 (b,
            _mm256_load_si256 (wv + 1)));
    lo = _mm256_add_epi32 (lo, _mm256_madd_epi16 (b,
            _mm256_load_si256 (wv + 3)));
  }
  return _mm256_add_epi32 (_mm256_slli_epi32 (hi, SPLIT_BITS), lo);
}

/* [r g b 0] sums of two outputs (low lane: pixels at @p0, high lane: @p1)
 * whose weights are at @w, rounded and shifted down to 8-bit range (not
 * yet clipped). @groups and @four are constants where this is inlined. */
__attribute__((target ("avx2"), always_inline))
static inline __m256i
pair_sums (const guint8 * p0, const guint8 * p1, const __m256i * w,
    guint groups, GroupMasks full, GroupMasks last, gboolean four)
{
  const __m256i half = _mm256_set1_epi32 (1 << (PRECISION_BITS - 1));
  __m256i sums;
  guint g;

  /* whole groups of 4 taps with @full's masks, then the last with @last's */
  sums = group_sums (p0 + 12 * (groups - 1), p1 + 12 * (groups - 1),
      w + 4 * (groups - 1), last, four);
  for (g = 0; g + 1 < groups; g++)
    sums = _mm256_add_epi32 (sums, group_sums (p0 + 12 * g, p1 + 12 * g,
            w + 4 * g, full, TRUE));
  return _mm256_srai_epi32 (_mm256_add_epi32 (sums, half), PRECISION_BITS);
}

/* pair_sums() of outputs @k and @j, whose windows start at input pixels
 * @first[k] and @first[j] and weights at @w, in a row that starts at input
 * pixel @in_start */
__attribute__((target ("avx2"), always_inline))
static inline __m256i
pair_at (const gint * first, const guint8 * in, gint in_start, guint k,
    guint j, const __m256i * w, guint groups, GroupMasks full,
    GroupMasks last, gboolean four)
{
  return pair_sums (in + (gsize) (first[k] - in_start) * 3,
      in + (gsize) (first[j] - in_start) * 3, w, groups, full, last, four);
}

/* The same sums as row_rgb_taps: eight outputs per step, then pairs,
 * clipped and stored. Reads 16 bytes from the start of each group of 4
 * taps of a window (callers leave 16 bytes of slack after each row);
 * writes nothing past the row. Inlined per tap count class so that the
 * masks stay in registers. */
__attribute__((target ("avx2"), always_inline))
static inline void
row_rgb_avx2_impl (const GstSpdlResampleAxis * axis, const guint8 * in,
    gint in_start, guint8 * out, guint groups, gboolean four)
{
  /* dwords [i i+2 i+4 i+6 | i+1 i+3 i+5 i+7] -> in order */
  const __m256i order = _mm256_setr_epi32 (0, 4, 1, 5, 2, 6, 3, 7);
  /* [r g b 0] x 4 -> 12 bytes, in each lane */
  const __m256i rgb = _mm256_setr_epi8 (0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13,
      14, -1, -1, -1, -1, 0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1,
      -1);
  const GroupMasks m0 = group_masks (4);
  const GroupMasks m1 = group_masks (axis->taps - 4 * (groups - 1));
  /* locals: the stores to @out may alias the axis, which would otherwise
   * be read again for every output */
  const gint *first = axis->first;
  const __m256i *w = (const __m256i *) axis->split;
  const gsize pair_step = groups * 4;   /* vectors of weights per pair */
  guint i = 0, n = axis->out_size;

  /* eight outputs a step: more independent sums in flight, one pack. Each
   * lane's 16-byte store ends with 4 zero bytes, rewritten by the next
   * outputs: at least 2 must follow (the pair loop does the rest) */
  for (; i + 10 <= n; i += 8, w += 4 * pair_step) {
    __m256i a = pair_at (first, in, in_start, i, i + 1, w, groups, m0, m1,
        four);
    __m256i b = pair_at (first, in, in_start, i + 2, i + 3, w + pair_step,
        groups, m0, m1, four);
    __m256i c = pair_at (first, in, in_start, i + 4, i + 5,
        w + 2 * pair_step, groups, m0, m1, four);
    __m256i d = pair_at (first, in, in_start, i + 6, i + 7,
        w + 3 * pair_step, groups, m0, m1, four);
    __m256i packed = _mm256_packus_epi16 (_mm256_packs_epi32 (a, b),
        _mm256_packs_epi32 (c, d));

    packed = _mm256_shuffle_epi8 (_mm256_permutevar8x32_epi32 (packed, order),
        rgb);
    _mm_storeu_si128 ((__m128i *) (out + 3 * i),
        _mm256_castsi256_si128 (packed));
    _mm_storeu_si128 ((__m128i *) (out + 3 * i + 12),
        _mm256_extracti128_si256 (packed, 1));
  }
  for (; i < n; i += 2, w += pair_step) {
    /* an odd last output is computed twice, once per lane */
    __m256i a = pair_at (first, in, in_start, i, MIN (i + 1, n - 1), w,
        groups, m0, m1, four);
    __m128i bytes = _mm_packs_epi32 (_mm256_castsi256_si128 (a),
        _mm256_extracti128_si256 (a, 1));
    guint32 v[2];
    guint o;

    bytes = _mm_packus_epi16 (bytes, bytes);
    v[0] = (guint32) _mm_cvtsi128_si32 (bytes);
    v[1] = (guint32) _mm_extract_epi32 (bytes, 1);
    for (o = 0; o < 2 && i + o < n; o++) {
      out[3 * (i + o)] = v[o] & 0xff;
      out[3 * (i + o) + 1] = (v[o] >> 8) & 0xff;
      out[3 * (i + o) + 2] = (v[o] >> 16) & 0xff;
    }
  }
}

__attribute__((target ("avx2")))
void
gst_spdl_resample_row_rgb_avx2 (const GstSpdlResampleAxis * axis,
    const guint8 * in, gint in_start, guint8 * out)
{
  /* taps of the last group: 1-2 take one pixel shuffle, 3-4 two */
  guint last = axis->taps - 4 * ((axis->taps - 1) / 4);

  /* constants in each call, so that no branch is left in the loop; past
   * 8 taps (strong downscales, rare) the group count stays a variable */
  if (axis->taps <= 4 && last > 2)
    row_rgb_avx2_impl (axis, in, in_start, out, 1, TRUE);
  else if (axis->taps <= 4)
    row_rgb_avx2_impl (axis, in, in_start, out, 1, FALSE);
  else if (axis->taps <= 8 && last > 2)
    row_rgb_avx2_impl (axis, in, in_start, out, 2, TRUE);
  else if (axis->taps <= 8)
    row_rgb_avx2_impl (axis, in, in_start, out, 2, FALSE);
  else
    row_rgb_avx2_impl (axis, in, in_start, out, (axis->taps + 3) / 4,
        last > 2);
}
#endif

/* The fast axes' RGB row: two taps per pmaddwd, straight into [r g b 0]
 * (no horizontal adds), 16-bit weights. Up to 8 taps; the same 16 bytes
 * of slack as row_rgb_sse41. */
__attribute__((target ("sse4.1")))
void
gst_spdl_resample_row_rgb_pairs_sse41 (const GstSpdlResampleAxis * axis,
    const guint8 * in, gint in_start, guint8 * out)
{
  const guint quads = (axis->taps + 3) / 4;
  /* the first quad's masks, and the second's (its taps: taps - 4) */
  const __m128i lo = _mm_loadu_si128 ((const __m128i *) group_mask
      (axis->taps, 0));
  const __m128i hi = _mm_loadu_si128 ((const __m128i *) group_mask
      (axis->taps, 1));
  const __m128i lo2 = _mm_loadu_si128 ((const __m128i *) group_mask
      (axis->taps > 4 ? axis->taps - 4 : 4, 0));
  const __m128i hi2 = _mm_loadu_si128 ((const __m128i *) group_mask
      (axis->taps > 4 ? axis->taps - 4 : 4, 1));
  const __m128i half = _mm_set1_epi32 (1 << (FAST_PRECISION_BITS - 1));
  const __m128i *w = (const __m128i *) axis->pairs;
  guint i;

  for (i = 0; i < axis->out_size; i++, w += 2 * quads) {
    const guint8 *p = in + (gsize) (axis->first[i] - in_start) * 3;
    __m128i px = _mm_loadu_si128 ((const __m128i *) p);
    __m128i sums = _mm_add_epi32 (_mm_madd_epi16 (_mm_shuffle_epi8 (px, lo),
            _mm_loadu_si128 (w)), _mm_madd_epi16 (_mm_shuffle_epi8 (px, hi),
            _mm_loadu_si128 (w + 1)));
    guint32 v;

    if (quads > 1) {
      px = _mm_loadu_si128 ((const __m128i *) (p + 12));
      sums = _mm_add_epi32 (sums, _mm_madd_epi16 (_mm_shuffle_epi8 (px, lo2),
              _mm_loadu_si128 (w + 2)));
      sums = _mm_add_epi32 (sums, _mm_madd_epi16 (_mm_shuffle_epi8 (px, hi2),
              _mm_loadu_si128 (w + 3)));
    }
    sums = _mm_srai_epi32 (_mm_add_epi32 (sums, half), FAST_PRECISION_BITS);
    sums = _mm_packs_epi32 (sums, sums);
    sums = _mm_packus_epi16 (sums, sums);
    v = (guint32) _mm_cvtsi128_si32 (sums);
    out[3 * i] = v & 0xff;
    out[3 * i + 1] = (v >> 8) & 0xff;
    out[3 * i + 2] = (v >> 16) & 0xff;
  }
}

gboolean
gst_spdl_resample_have_sse41 (void)
{
  static gint cached = -1;

  if (cached < 0)
    cached = __builtin_cpu_supports ("sse4.1") ? 1 : 0;
  return cached;
}

#ifdef HAVE_AVX2_KERNEL
/* One output row of the vertical pass, 16 bytes at a time with the sums in
 * registers (the tap-major path below goes through memory per tap): each
 * byte times its tap's 22-bit weight as 32-bit products, exact. The
 * normalised weights keep every sum within 255 * 2^22. @rows[t] is the
 * window's row t. */
__attribute__((target ("avx2")))
void
gst_spdl_resample_column_avx2 (const guint8 * const *rows, const gint32 * w,
    gint n, gsize row_bytes, guint bits, guint8 * out)
{
  const __m256i half = _mm256_set1_epi32 (1 << (bits - 1));
  const __m128i shift = _mm_cvtsi32_si128 ((gint) bits);
  __m256i wv[AVX2_MAX_TAPS];
  gsize x = 0;
  gint t;

  for (t = 0; t < n; t++)
    wv[t] = _mm256_set1_epi32 (w[t]);
  for (; x + 16 <= row_bytes; x += 16) {
    __m256i lo = half, hi = half, packed;
    __m128i bytes;

    for (t = 0; t < n; t++) {
      __m128i px = _mm_loadu_si128 ((const __m128i *) (rows[t] + x));
      lo = _mm256_add_epi32 (lo, _mm256_mullo_epi32 (_mm256_cvtepu8_epi32
              (px), wv[t]));
      hi = _mm256_add_epi32 (hi, _mm256_mullo_epi32 (_mm256_cvtepu8_epi32
              (_mm_srli_si128 (px, 8)), wv[t]));
    }
    lo = _mm256_sra_epi32 (lo, shift);
    hi = _mm256_sra_epi32 (hi, shift);
    /* [lo0-3 hi0-3 | lo4-7 hi4-7] -> lanes in order, then bytes */
    packed = _mm256_permute4x64_epi64 (_mm256_packs_epi32 (lo, hi), 0xd8);
    bytes = _mm_packus_epi16 (_mm256_castsi256_si128 (packed),
        _mm256_extracti128_si256 (packed, 1));
    _mm_storeu_si128 ((__m128i *) (out + x), bytes);
  }
  for (; x < row_bytes; x++) {
    gint32 acc = 1 << (bits - 1);
    for (t = 0; t < n; t++)
      acc += rows[t][x] * w[t];
    out[x] = clip8 (acc, bits);
  }
}
#endif

#endif /* HAVE_SSE41_KERNEL */
