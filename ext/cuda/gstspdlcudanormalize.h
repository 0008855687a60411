/* GStreamer SPDL CUDA plugin: normalizing uint8 images into float tensors
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* The per-element math is compiled twice, by nvcc into the CUDA kernel and
 * by the C compiler into spdl_normalize_cpu(), the reference the tests
 * compare the device against: one definition, so both round alike. Plain C
 * and stdint only (nvcc includes it without GLib). */
#ifndef __GST_SPDL_CUDA_NORMALIZE_H__
#define __GST_SPDL_CUDA_NORMALIZE_H__

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define SPDL_HD __host__ __device__ __forceinline__
#else
#define SPDL_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum
{
  SPDL_NORM_UINT8,
  SPDL_NORM_FLOAT32,
  SPDL_NORM_FLOAT16,
  SPDL_NORM_BFLOAT16,
} SpdlNormDType;

/* One batch of N images with C channels of H x W, in and out. */
typedef struct
{
  uint32_t n, c, h, w;
  int in_channels_last;         /* input NHWC (else NCHW) */
  int out_channels_last;        /* output NHWC (else NCHW) */
  SpdlNormDType dtype;
  float mean[4];                /* per channel */
  float std[4];
} SpdlNormalizeParams;

SPDL_HD uint32_t
spdl_float_bits (float f)
{
  uint32_t u;
  memcpy (&u, &f, sizeof u);
  return u;
}

/* IEEE binary16, round to nearest even (subnormals, overflow to infinity,
 * NaN kept a quiet NaN), as numpy's astype(float16) and torch's .half() */
SPDL_HD uint16_t
spdl_float_to_half (float f)
{
  uint32_t x = spdl_float_bits (f);
  uint32_t sign = (x >> 16) & 0x8000u, e, h, rem;

  x &= 0x7fffffffu;
  if (x >= 0x7f800000u)
    return (uint16_t) (sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u)         /* 65520 and up round past 65504 */
    return (uint16_t) (sign | 0x7c00u);
  e = x >> 23;
  if (e < 113) {                /* below 2^-14: a subnormal half, or zero */
    uint32_t m = (x & 0x7fffffu) | 0x800000u, shift, half, q;
    if (e < 102)                /* below 2^-25: rounds to zero */
      return (uint16_t) sign;
    shift = 126 - e;
    q = m >> shift;
    rem = m & ((1u << shift) - 1);
    half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      q++;
    return (uint16_t) (sign | q);
  }
  h = ((e - 112) << 10) | ((x >> 13) & 0x3ffu);
  rem = x & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
    h++;
  return (uint16_t) (sign | h);
}

/* bfloat16: the upper half of the float, round to nearest even, as torch's
 * .bfloat16() */
SPDL_HD uint16_t
spdl_float_to_bfloat16 (float f)
{
  uint32_t x = spdl_float_bits (f);

  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t) ((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1);
  return (uint16_t) (x >> 16);
}

/* torchvision's Normalize(ToTensor()): float32 x / 255, then
 * (x - mean) / std, each step rounded in float32 */
SPDL_HD float
spdl_normalize_value (uint8_t v, float mean, float std)
{
  float x = (float) v / 255.0f;
  return (x - mean) / std;
}

/* Output element @o of the batch: reads its input pixel, writes @o. */
SPDL_HD void
spdl_normalize_element (const SpdlNormalizeParams * p, const uint8_t * in,
    void *out, uint32_t o)
{
  uint32_t n, c, y, x, t, i;
  uint8_t v;
  float f;

  if (p->out_channels_last) {
    c = o % p->c;
    t = o / p->c;
    x = t % p->w;
    t /= p->w;
    y = t % p->h;
    n = t / p->h;
  } else {
    x = o % p->w;
    t = o / p->w;
    y = t % p->h;
    t /= p->h;
    c = t % p->c;
    n = t / p->c;
  }
  if (p->in_channels_last)
    i = ((n * p->h + y) * p->w + x) * p->c + c;
  else
    i = ((n * p->c + c) * p->h + y) * p->w + x;
  v = in[i];
  if (p->dtype == SPDL_NORM_UINT8) {
    ((uint8_t *) out)[o] = v;
    return;
  }
  f = spdl_normalize_value (v, p->mean[c], p->std[c]);
  if (p->dtype == SPDL_NORM_FLOAT32)
    ((float *) out)[o] = f;
  else if (p->dtype == SPDL_NORM_FLOAT16)
    ((uint16_t *) out)[o] = spdl_float_to_half (f);
  else
    ((uint16_t *) out)[o] = spdl_float_to_bfloat16 (f);
}

SPDL_HD uint64_t
spdl_normalize_n_elements (const SpdlNormalizeParams * p)
{
  return (uint64_t) p->n * p->c * p->h * p->w;
}

/* The whole batch on the host (the reference; and the device stand-in of
 * the tests that run without a GPU). */
void spdl_normalize_cpu (const SpdlNormalizeParams * p, const uint8_t * in,
    void *out);

/* The whole batch on the device, queued on @stream (a cudaStream_t);
 * returns a cudaError_t. The batch must have fewer than 2^32 elements. */
int spdl_normalize_cuda (const SpdlNormalizeParams * p, const void *in,
    void *out, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* __GST_SPDL_CUDA_NORMALIZE_H__ */
