/* gst-spdl: replays a fuzz target's saved inputs (crashers found, seeds,
 * edge cases: tests/fuzz/regressions* for each target) through it, in the
 * normal test suite. */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);
/* a target's one-time setup (GStreamer's), as libFuzzer calls it */
int LLVMFuzzerInitialize (int *argc, char ***argv) __attribute__ ((weak));

int
main (int argc, char **argv)
{
  GError *error = NULL;
  GDir *dir;
  const gchar *name;
  guint n = 0;

  if (argc < 2) {
    fprintf (stderr, "usage: %s REGRESSIONS-DIR\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize (&argc, &argv);
  /* a folder that is not there would pass for one without a crasher */
  if ((dir = g_dir_open (argv[1], 0, &error)) == NULL) {
    fprintf (stderr, "%s\n", error->message);
    g_error_free (error);
    return 1;
  }
  while ((name = g_dir_read_name (dir))) {
    gchar *path = g_build_filename (argv[1], name, NULL), *data;
    gsize size;
    if (g_file_get_contents (path, &data, &size, NULL)) {
      /* which one, should it crash */
      printf ("%s\n", name);
      fflush (stdout);
      LLVMFuzzerTestOneInput ((const uint8_t *) data, size);
      n++;
      g_free (data);
    }
    g_free (path);
  }
  g_dir_close (dir);
  printf ("%u inputs replayed without a crash\n", n);
  return 0;
}
