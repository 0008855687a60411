/* GStreamer SPDL CUDA plugin
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

#include "gstspdlcudaupload.h"
#include "gstspdlcudamemory.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  /* registers without touching the driver: a machine without a GPU still
   * lists the element, and fails clearly when it is used */
  gst_spdl_cuda_meta_register ();
  return GST_ELEMENT_REGISTER (spdlcudaupload, plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, spdlcuda,
    "gst-spdl: tensor batches to CUDA device memory",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
