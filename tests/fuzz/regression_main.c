/* gst-spdl: replays the fuzzer's saved inputs (tests/fuzz/regressions) and
 * a few edge cases through the fuzz target, in the normal test suite. */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
main (int argc, char **argv)
{
  GDir *dir;
  const gchar *name;
  guint n = 0;

  if (argc < 2) {
    fprintf (stderr, "usage: %s REGRESSIONS-DIR\n", argv[0]);
    return 2;
  }
  dir = g_dir_open (argv[1], 0, NULL);
  while (dir && (name = g_dir_read_name (dir))) {
    gchar *path = g_build_filename (argv[1], name, NULL), *data;
    gsize size;
    if (g_file_get_contents (path, &data, &size, NULL)) {
      LLVMFuzzerTestOneInput ((const uint8_t *) data, size);
      n++;
      g_free (data);
    }
    g_free (path);
  }
  if (dir)
    g_dir_close (dir);
  printf ("%u inputs replayed without a crash\n", n);
  return 0;
}
