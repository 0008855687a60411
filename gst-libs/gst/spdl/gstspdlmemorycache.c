/* GStreamer SPDL: memories reused from batch to batch
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

#include "gstspdlmemorycache.h"

struct _GstSpdlMemoryCache
{
  guint depth;
  GPtrArray *keys;              /* GPtrArray of GstMemory, per key */
};

GstSpdlMemoryCache *
gst_spdl_memory_cache_new (guint depth)
{
  GstSpdlMemoryCache *cache = g_new0 (GstSpdlMemoryCache, 1);

  cache->depth = depth;
  cache->keys = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_ptr_array_unref);
  return cache;
}

void
gst_spdl_memory_cache_free (GstSpdlMemoryCache * cache)
{
  if (cache == NULL)
    return;
  g_ptr_array_unref (cache->keys);
  g_free (cache);
}

/* Only the cache holds it: its batch came back */
static gboolean
is_free (GstMemory * mem)
{
  return GST_MINI_OBJECT_REFCOUNT_VALUE (mem) == 1;
}

static GstMemory *
alloc (gsize size, GstAllocator * allocator,
    const GstAllocationParams * params)
{
  /* some allocators (pinned CUDA memory) refuse 0 bytes */
  return gst_allocator_alloc (allocator, MAX (size, 1),
      (GstAllocationParams *) params);
}

GstMemory *
gst_spdl_memory_cache_get (GstSpdlMemoryCache * cache, guint key, gsize size,
    GstAllocator * allocator, const GstAllocationParams * params)
{
  GPtrArray *kept;
  GstMemory *mem = NULL;
  gsize offset, maxsize;
  guint i;

  if (allocator == NULL)
    allocator = gst_allocator_find (NULL);
  else
    gst_object_ref (allocator);
  while (cache->keys->len <= key)
    g_ptr_array_add (cache->keys, g_ptr_array_new_with_free_func
        ((GDestroyNotify) gst_memory_unref));
  kept = g_ptr_array_index (cache->keys, key);
  for (i = 0; i < kept->len; i++) {
    GstMemory *m = g_ptr_array_index (kept, i);

    if (!is_free (m))
      continue;
    gst_memory_get_sizes (m, &offset, &maxsize);
    if (m->allocator == allocator && maxsize - offset >= size) {
      mem = gst_memory_ref (m);
      gst_memory_resize (mem, 0, size);
      break;
    }
    /* too small, or another allocator's: a new one takes its place */
    g_ptr_array_remove_index_fast (kept, i--);
  }
  if (mem == NULL) {
    /* a variable tensor's next batch may be a little longer */
    mem = alloc (size + size / 4, allocator, params);
    if (mem)
      gst_memory_resize (mem, 0, size);
    if (mem && kept->len < cache->depth)
      g_ptr_array_add (kept, gst_memory_ref (mem));
  }
  gst_object_unref (allocator);
  return mem;
}
