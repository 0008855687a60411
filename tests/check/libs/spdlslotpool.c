/* GStreamer SPDL plugin: unit tests of the batch slot pool
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
#include <gst/video/video.h>
#include <string.h>

#include "gstspdlslotpool.h"
#include "spdlcheckmain.h"

/* An active pool of batch buffers of @batch RGB images of @w x @h, and an
 * active slot pool over it */
static GstSpdlSlotPool *
make_slot_pool (guint batch, guint w, guint h, GstBufferPool ** images)
{
  GstStructure *config;
  GstSpdlSlotPool *pool;
  GstVideoInfo info;
  gsize image_bytes = w * h * 3;

  *images = gst_buffer_pool_new ();
  config = gst_buffer_pool_get_config (*images);
  gst_buffer_pool_config_set_params (config, NULL, batch * image_bytes, 0, 0);
  fail_unless (gst_buffer_pool_set_config (*images, config));
  fail_unless (gst_buffer_pool_set_active (*images, TRUE));
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, w, h);
  pool = gst_spdl_slot_pool_new (*images, batch, &info, image_bytes);
  fail_unless (gst_buffer_pool_set_active (GST_BUFFER_POOL (pool), TRUE));
  return pool;
}

static void
free_images_pool (GstBufferPool * images)
{
  fail_unless (gst_buffer_pool_set_active (images, FALSE));
  gst_object_unref (images);
}

/* A slot must map for writing while spdlbatch reads its batch (copying it
 * out: an epoch's short batch whose block the next epoch's first samples
 * already use). Mapping the batch memory per slot failed then, and the
 * decoder skipped those samples ("could not map the output memory"). */
GST_START_TEST (test_slot_maps_while_batch_is_read)
{
  const guint w = 8, h = 4;
  GstBufferPool *images;
  GstSpdlSlotPool *pool = make_slot_pool (4, w, h, &images);
  GstSpdlSlotBlock *block;
  GstBuffer *slot0, *slot1, *batch_buffer;
  GstMapInfo reading, writing;
  guint index;
  guint64 seq;
  gsize image_bytes = w * h * 3;

  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (GST_BUFFER_POOL
          (pool), &slot0, NULL), GST_FLOW_OK);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (GST_BUFFER_POOL
          (pool), &slot1, NULL), GST_FLOW_OK);
  fail_unless (gst_spdl_slot_lookup (slot1, &block, &index, &seq));
  fail_unless_equals_int (index, 1);
  batch_buffer = gst_spdl_slot_block_adopt (block);
  fail_unless (batch_buffer != NULL);

  /* spdlbatch copies the batch out while a decoder starts on a slot */
  fail_unless (gst_memory_map (gst_buffer_peek_memory (batch_buffer, 0),
          &reading, GST_MAP_READ));
  fail_unless (gst_buffer_map (slot1, &writing, GST_MAP_WRITE),
      "a slot could not be mapped while its batch was being read");
  memset (writing.data, 0xab, image_bytes);
  gst_buffer_unmap (slot1, &writing);
  fail_unless_equals_int (reading.data[image_bytes], 0xab);
  fail_unless_equals_int (reading.data[2 * image_bytes - 1], 0xab);
  gst_memory_unmap (gst_buffer_peek_memory (batch_buffer, 0), &reading);

  gst_buffer_unref (slot0);
  gst_buffer_unref (slot1);
  fail_unless (gst_spdl_slot_block_seal (block));
  gst_buffer_unref (batch_buffer);
  fail_unless (gst_buffer_pool_set_active (GST_BUFFER_POOL (pool), FALSE));
  gst_object_unref (pool);
  free_images_pool (images);
}

GST_END_TEST;

static gint pools_finalized;

static void
pool_finalized (gpointer data, GObject * where_the_object_was)
{
  pools_finalized++;
}

/* A slot still in flight from a pool that is gone is not the next pool's,
 * even when the new pool lives at the old one's address: spdlbatch would
 * otherwise adopt a batch of the old size. A copy of the slot buffer
 * (make_writable downstream) shares the slot memory but, unlike the
 * pool's own buffer, holds no reference to the pool, so the pool can go.
 * malloc hands the address back at once here; valgrind's and ASan's
 * quarantines never do, and then only the identity rule is checked. */
GST_START_TEST (test_slot_of_a_freed_pool)
{
  GstBufferPool *images;
  GstSpdlSlotPool *old_pool = make_slot_pool (2, 4, 2, &images), *new_pool;
  GstSpdlSlotBlock *block;
  GstBuffer *slot, *copy;
  GstVideoInfo info;
  gpointer old_address;
  guint index, tries = 0;
  guint64 seq;

  g_object_weak_ref (G_OBJECT (old_pool), pool_finalized, NULL);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (GST_BUFFER_POOL
          (old_pool), &slot, NULL), GST_FLOW_OK);
  copy = gst_buffer_copy (slot);
  gst_buffer_unref (slot);
  fail_unless (gst_spdl_slot_lookup (copy, &block, &index, &seq));
  fail_unless (gst_spdl_slot_block_is_from (block, old_pool));

  old_address = old_pool;
  fail_unless (gst_buffer_pool_set_active (GST_BUFFER_POOL (old_pool),
          FALSE));
  gst_object_unref (old_pool);
  fail_unless_equals_int (pools_finalized, 1);
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 4, 2);
  for (;;) {
    new_pool = gst_spdl_slot_pool_new (images, 2, &info, 4 * 2 * 3);
    if ((gpointer) new_pool == old_address || ++tries == 100)
      break;
    gst_object_unref (new_pool);
  }
  if ((gpointer) new_pool != old_address)
    g_print ("test_slot_of_a_freed_pool: the old pool's address did not "
        "come back (an allocator with a quarantine)\n");
  fail_if (gst_spdl_slot_block_is_from (block, new_pool));

  gst_buffer_unref (copy);
  gst_object_unref (new_pool);
  free_images_pool (images);
}

GST_END_TEST;

static Suite *
spdlslotpool_suite (void)
{
  Suite *s = suite_create ("spdlslotpool");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_slot_maps_while_batch_is_read);
  tcase_add_test (tc, test_slot_of_a_freed_pool);
  return s;
}

SPDL_CHECK_MAIN (spdlslotpool);
