/* gst-spdl fuzz target: the JSON check of string fields
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/* Any bytes through gst_spdl_json_validate(), as a json field's member or
 * cell reaches it: never past the input (ASan), never deep recursion; a
 * refusal says why in UTF-8; the verdict does not depend on bytes after
 * the input (a copy without a terminator gives the same). */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "gstspdljson.h"

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  gchar *why = NULL, *copy = g_malloc (size + 1);
  gboolean valid, again;

  memcpy (copy, data, size);
  copy[size] = '1';             /* a digit after a number must not count */
  valid = gst_spdl_json_validate ((const gchar *) data, size, &why);
  if (!valid && why)
    g_assert (g_utf8_validate (why, -1, NULL));
  g_free (why);
  again = gst_spdl_json_validate (copy, size, NULL);
  g_assert (valid == again);
  g_free (copy);
  return 0;
}
