/* GStreamer SPDL: memories reused from batch to batch
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_MEMORY_CACHE_H__
#define __GST_SPDL_MEMORY_CACHE_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* The memories of a batch's tensors that change size from batch to batch
 * (a record's fields: no GstBufferPool of fixed buffers fits them),
 * kept for the next batches: a memory that no buffer holds any more (its
 * batch came back) serves again, resized, when it is large enough. Each
 * key (a tensor's place in the batch) keeps at most @depth memories;
 * past that, and while all of its memories are still held downstream, a
 * new memory is allocated and not kept. Downstream's allocator (pinned
 * CUDA host memory, say) allocates slowly: this keeps it out of the
 * steady state. One thread asks; any thread may let go of the memories. */
typedef struct _GstSpdlMemoryCache GstSpdlMemoryCache;

GstSpdlMemoryCache *gst_spdl_memory_cache_new (guint depth);
void gst_spdl_memory_cache_free (GstSpdlMemoryCache * cache);
/* A memory of @size bytes from @allocator (NULL: the default) for @key:
 * a kept one that is free and large enough, else a new one. */
GstMemory *gst_spdl_memory_cache_get (GstSpdlMemoryCache * cache, guint key,
    gsize size, GstAllocator * allocator, const GstAllocationParams * params);

G_END_DECLS

#endif /* __GST_SPDL_MEMORY_CACHE_H__ */
