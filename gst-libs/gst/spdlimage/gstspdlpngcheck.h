/* GStreamer SPDL: a PNG's chunks and compressed data, checked as PIL does
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_PNG_CHECK_H__
#define __GST_SPDL_PNG_CHECK_H__

#include <glib.h>

G_BEGIN_DECLS

/* TRUE where PIL 9.4's Image.open(f).convert("RGB") reads the PNG @data
 * (IHDR already checked: @width x @height of @bit_depth, @color_type,
 * @interlaced), whatever part of it a decode then uses: the CRC of every
 * chunk before the image data, the whole zlib stream of the IDAT chunks
 * up to where PIL's decoder stops (the image's last filtered byte, and
 * what it inflates with it: the end of the stream and its Adler-32 when
 * they come in the same read), and the chunks after it as PIL walks them
 * (junk there ends the walk; IEND is not needed; a chunk that runs past
 * the end of the file fails). Else FALSE with a GST_SPDL_DECODE_ERROR:
 * truncated (the data ends first), corrupt. Inflates to a scratch buffer
 * of @scratch_size bytes or, where @filtered is not NULL, to it: room for
 * every filtered row (non-interlaced: @height times 1 + the row's bytes),
 * which then holds them; no row is unfiltered. Sets *@plain where libpng
 * would inflate the same rows from the same chunks without an error of its
 * own (a zlib header declaring a 32 KiB window, every IDAT read whole in
 * the file and no longer than the rows): those rows are the image's. */
gboolean gst_spdl_png_check_stream (const guint8 * data, gsize size,
    guint width, guint height, guint bit_depth, guint color_type,
    gboolean interlaced, guint8 * scratch, gsize scratch_size,
    guint8 * filtered, gboolean * plain, GError ** error);

G_END_DECLS

#endif /* __GST_SPDL_PNG_CHECK_H__ */
