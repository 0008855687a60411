/* GStreamer SPDL plugin
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_ELEMENTS_H__
#define __GST_SPDL_ELEMENTS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

GST_ELEMENT_REGISTER_DECLARE (spdlsrc);
GST_ELEMENT_REGISTER_DECLARE (spdldecode);
GST_ELEMENT_REGISTER_DECLARE (spdlvideodecode);
GST_ELEMENT_REGISTER_DECLARE (spdlbatch);
GST_ELEMENT_REGISTER_DECLARE (spdlappsink);
GST_ELEMENT_REGISTER_DECLARE (spdlaudiodecode);

G_END_DECLS

#endif /* __GST_SPDL_ELEMENTS_H__ */
