/* GStreamer SPDL CUDA plugin: normalizing on the device
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* One thread per output element (grid-stride): the math is
 * gstspdlcudanormalize.h's, shared with the host reference. Memory-bound: the
 * uint8 input is read once and each output written once. */
#include <cuda_runtime.h>

#include "gstspdlcudanormalize.h"

__global__ void
spdl_normalize_kernel (SpdlNormalizeParams p, const uint8_t * in, void *out,
    uint32_t n)
{
  uint32_t o = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t stride = gridDim.x * blockDim.x;

  for (; o < n; o += stride)
    spdl_normalize_element (&p, in, out, o);
}

extern "C" int
spdl_normalize_cuda (const SpdlNormalizeParams * p, const void *in, void *out,
    void *stream)
{
  uint64_t n = spdl_normalize_n_elements (p);
  unsigned int threads = 256, blocks;

  if (n == 0)
    return cudaSuccess;
  if (n > 0xffffffffull)
    return cudaErrorInvalidValue;
  blocks = (unsigned int) ((n + threads - 1) / threads);
  if (blocks > 65535u * 8u)
    blocks = 65535u * 8u;
  spdl_normalize_kernel <<< blocks, threads, 0, (cudaStream_t) stream >>>
      (*p, (const uint8_t *) in, out, (uint32_t) n);
  return cudaGetLastError ();
}
