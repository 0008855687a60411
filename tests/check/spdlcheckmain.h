/* gst-spdl test helpers: the check suites' main()
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __SPDL_CHECK_MAIN_H__
#define __SPDL_CHECK_MAIN_H__

#include <gst/check/gstcheck.h>
#include <stdio.h>
#include <unistd.h>

/* With CK_FORK=no (the valgrind setup) a failed check returns before its
 * teardown: its elements keep running, and once the remaining tests ran,
 * gst_deinit() at exit would wait for their tasks until the test's
 * timeout. The failures are reported by then, so the process ends without
 * the exit handlers. */
static inline int
spdl_check_finish (int failures)
{
  if (failures != 0 && g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0) {
    fflush (NULL);
    _exit (1);
  }
  return failures;
}

/* GST_CHECK_MAIN, ending at once after a failure without fork */
#define SPDL_CHECK_MAIN(name)                                   \
int main (int argc, char **argv)                                \
{                                                               \
  Suite *s;                                                     \
  gst_check_init (&argc, &argv);                                \
  s = name ## _suite ();                                        \
  return spdl_check_finish (gst_check_run_suite (s, # name,     \
          __FILE__));                                           \
}

#endif /* __SPDL_CHECK_MAIN_H__ */
