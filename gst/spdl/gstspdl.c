/* GStreamer SPDL plugin
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

#include "gstspdlelements.h"
#include "gstspdlmeta.h"
#include "gstspdlstatstracer.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  gst_spdl_meta_register ();
  ret |= GST_ELEMENT_REGISTER (spdlsrc, plugin);
  ret |= GST_ELEMENT_REGISTER (spdldecode, plugin);
  ret |= GST_ELEMENT_REGISTER (spdlvideodecode, plugin);
  ret |= GST_ELEMENT_REGISTER (spdlbatch, plugin);
  ret |= GST_ELEMENT_REGISTER (spdlappsink, plugin);
  ret |= GST_ELEMENT_REGISTER (spdlaudiodecode, plugin);
  ret |= gst_tracer_register (plugin, "spdlstats", GST_TYPE_SPDL_STATS_TRACER);
  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, spdl,
    "Scalable and performant data loading for machine learning",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
