/* GStreamer SPDL plugin: spdldecode's record fields (extra images, labels)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <math.h>
#include <string.h>
#include <png.h>

#include "spdltestutil.h"
#include "gstspdlmeta.h"
#include "gstspdlrecord.h"
#include "spdlcheckmain.h"

#define W 61
#define H 47
#define N_CLASSES 23

static void
write_to_array (png_structp png, png_bytep data, size_t n)
{
  g_byte_array_append (png_get_io_ptr (png), data, n);
}

static void
flush_nothing (png_structp png)
{
}

/* A PNG of @color_type and @depth from @rows (packed, big-endian 16-bit
 * samples as PNG stores them); a palette of N_CLASSES colours. */
static GBytes *
encode_png (const guint8 * pixels, guint width, guint height, gint color_type,
    gint depth)
{
  GByteArray *out = g_byte_array_new ();
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL,
      NULL, NULL);
  png_infop info = png_create_info_struct (png);
  guint channels = color_type == PNG_COLOR_TYPE_RGB ? 3 :
      color_type == PNG_COLOR_TYPE_RGB_ALPHA ? 4 : 1;
  gsize stride = (gsize) width * channels * (depth / 8);
  guint y;

  fail_if (setjmp (png_jmpbuf (png)));
  png_set_write_fn (png, out, write_to_array, flush_nothing);
  png_set_IHDR (png, info, width, height, depth, color_type,
      PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
      PNG_FILTER_TYPE_DEFAULT);
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    png_color palette[N_CLASSES];
    guint i;

    /* colours far from the indices: an RGB decode would show */
    for (i = 0; i < N_CLASSES; i++) {
      palette[i].red = 200 - i * 5;
      palette[i].green = 17 * i;
      palette[i].blue = 255 - i;
    }
    png_set_PLTE (png, info, palette, N_CLASSES);
  }
  png_write_info (png, info);
  for (y = 0; y < height; y++)
    png_write_row (png, (png_bytep) pixels + y * stride);
  png_write_end (png, info);
  png_destroy_write_struct (&png, &info);
  return g_byte_array_free_to_bytes (out);
}

static guint8
class_at (guint x, guint y)
{
  return (x * 7 + y * 3 + (x / 5) * (y / 4)) % N_CLASSES;
}

static guint16
depth_at (guint x, guint y)
{
  return (guint16) (x * 1031 + y * 517 + 300);
}

static GBytes *
make_palette_mask (guint width, guint height)
{
  guint8 *px = g_malloc (width * height);
  GBytes *png;
  guint x, y;

  for (y = 0; y < height; y++)
    for (x = 0; x < width; x++)
      px[y * width + x] = class_at (x, y);
  png = encode_png (px, width, height, PNG_COLOR_TYPE_PALETTE, 8);
  g_free (px);
  return png;
}

static GBytes *
make_depth_map (void)
{
  guint8 *px = g_malloc (W * H * 2);
  GBytes *png;
  guint x, y;

  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++) {
      px[(y * W + x) * 2] = depth_at (x, y) >> 8;
      px[(y * W + x) * 2 + 1] = depth_at (x, y) & 0xff;
    }
  png = encode_png (px, W, H, PNG_COLOR_TYPE_GRAY, 16);
  g_free (px);
  return png;
}

/* The test picture as RGB (@channels 3) or RGBA (4, opaque) PNG. */
static GBytes *
make_picture (guint channels)
{
  guint8 *px = g_malloc (W * H * channels);
  GBytes *png;
  guint x, y, c;

  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      for (c = 0; c < channels; c++)
        px[(y * W + x) * channels + c] = c == 3 ? 255 :
            spdl_test_pattern (x, y, c, 40);
  png = encode_png (px, W, H, channels == 4 ? PNG_COLOR_TYPE_RGB_ALPHA :
      PNG_COLOR_TYPE_RGB, 8);
  g_free (px);
  return png;
}

#define FIELDS "mask.png:label:%s,depth.png:label:%s,extra.png:image:%s"

/* A sample as spdlsrc makes it: the media image, a sample meta, the
 * record's values (encoded images as GBytes). */
static GstBuffer *
make_sample (GBytes * image, guint64 index, GBytes * mask, GBytes * depth,
    GBytes * extra)
{
  GstBuffer *buf = gst_buffer_new_wrapped_bytes (image);
  GValue values[3] = { G_VALUE_INIT, G_VALUE_INIT, G_VALUE_INIT };
  GBytes *items[3] = { mask, depth, extra };
  guint i;

  gst_spdl_buffer_add_sample_meta (buf, index, 1, 0, "/data/img.png");
  for (i = 0; i < 3; i++) {
    g_value_init (&values[i], G_TYPE_BYTES);
    g_value_set_boxed (&values[i], items[i]);
  }
  gst_spdl_buffer_set_record (buf, values, 3);
  for (i = 0; i < 3; i++)
    g_value_unset (&values[i]);
  return buf;
}

static GstHarness *
start (const gchar * props, const gchar * policy, GstBus ** bus)
{
  gchar *desc = g_strdup_printf ("spdldecode threads=2 %s", props);
  GstHarness *h = gst_harness_new_parse (desc);
  gchar *fields = g_strdup_printf (FIELDS, policy, policy, policy);
  GstCaps *caps = gst_caps_new_simple ("image/png", "parsed",
      G_TYPE_BOOLEAN, TRUE, "fields", G_TYPE_STRING, fields, NULL);

  if (bus) {
    *bus = gst_bus_new ();
    gst_element_set_bus (h->element, *bus);
  }
  gst_harness_set_src_caps (h, caps);
  g_free (fields);
  g_free (desc);
  return h;
}

/* The decoded field @i: its pixels, checked to be @format of @w x @h. */
static GstBuffer *
field_pixels (GstBuffer * out, guint i, const gchar * format, gint w, gint h)
{
  const GValue *value = gst_spdl_buffer_get_record_value (out, i);
  GstSample *sample;
  GstStructure *s;
  gint width = 0, height = 0;

  fail_unless (value != NULL);
  fail_unless (G_VALUE_HOLDS (value, GST_TYPE_SAMPLE));
  sample = g_value_get_boxed (value);
  s = gst_caps_get_structure (gst_sample_get_caps (sample), 0);
  fail_unless_equals_string (gst_structure_get_string (s, "format"), format);
  fail_unless (gst_structure_get_int (s, "width", &width));
  fail_unless (gst_structure_get_int (s, "height", &height));
  fail_unless_equals_int (width, w);
  fail_unless_equals_int (height, h);
  return gst_sample_get_buffer (sample);
}

/* torch's legacy nearest on one axis of @in samples resized to @out:
 * min (floorf (i * (float) in / out), in - 1) */
static gint
torch_nearest (gint i, gint in, gint out)
{
  float scale = (float) in / (float) out;

  return MIN ((gint) floorf ((float) i * scale), in - 1);
}

/* The reference mask: the source pixel each output pixel takes, from the
 * geometry the sample reports (crop box, flip) as F.resized_crop (mask,
 * y, x, h, w, size, NEAREST) + F.hflip; a center-crop from its resized
 * size and offset, as Resize (NEAREST) + CenterCrop. */
typedef struct
{
  gint x, y, w, h;              /* the box (random-resized-crop, stretch) */
  gint rw, rh, ox, oy;          /* center-crop: resized size, offsets */
  gboolean center;
} MaskReference;

static gboolean
reference_source (const MaskReference * ref, gboolean flipped, gint ow,
    gint oh, gint i, gint j, gint * sx, gint * sy)
{
  gint x = flipped ? ow - 1 - i : i;

  if (ref->center) {
    gint vx = ref->ox + x, vy = ref->oy + j;

    if (vx < 0 || vy < 0 || vx >= ref->rw || vy >= ref->rh)
      return FALSE;
    *sx = torch_nearest (vx, W, ref->rw);
    *sy = torch_nearest (vy, H, ref->rh);
    return TRUE;
  }
  *sx = ref->x + torch_nearest (x, ref->w, ow);
  *sy = ref->y + torch_nearest (j, ref->h, oh);
  return TRUE;
}

static void
check_labels (GstBuffer * out, const MaskReference * ref, gboolean flipped,
    gint ow, gint oh)
{
  GstBuffer *mask = field_pixels (out, 0, "GRAY8", ow, oh);
  GstBuffer *depth = field_pixels (out, 1, "GRAY16_LE", ow, oh);
  GstMapInfo mm, dm;
  gint i, j, sx, sy;

  fail_unless (gst_buffer_map (mask, &mm, GST_MAP_READ));
  fail_unless (gst_buffer_map (depth, &dm, GST_MAP_READ));
  fail_unless_equals_int (mm.size, ow * oh);
  fail_unless_equals_int (dm.size, ow * oh * 2);
  for (j = 0; j < oh; j++)
    for (i = 0; i < ow; i++) {
      guint8 m = mm.data[j * ow + i];
      guint16 d = GST_READ_UINT16_LE (dm.data + (j * ow + i) * 2);

      if (!reference_source (ref, flipped, ow, oh, i, j, &sx, &sy)) {
        fail_unless_equals_int (m, 0);
        fail_unless_equals_int (d, 0);
        continue;
      }
      if (m != class_at (sx, sy) || d != depth_at (sx, sy))
        fail ("pixel %d,%d: mask %u depth %u, expected %u %u (source %d,%d)",
            i, j, m, d, class_at (sx, sy), depth_at (sx, sy), sx, sy);
    }
  gst_buffer_unmap (mask, &mm);
  gst_buffer_unmap (depth, &dm);
}

/* The extra image is the media image's picture (RGBA): decoded through
 * the same geometry, its pixels are the media image's. */
static void
check_extra (GstBuffer * out, gint ow, gint oh)
{
  GstBuffer *extra = field_pixels (out, 2, "RGB", ow, oh);
  GstMapInfo em, om;
  gsize stride = GST_ROUND_UP_4 (ow * 3);
  gint j;

  fail_unless (gst_buffer_map (extra, &em, GST_MAP_READ));
  fail_unless (gst_buffer_map (out, &om, GST_MAP_READ));
  fail_unless_equals_int (em.size, ow * oh * 3);
  for (j = 0; j < oh; j++)
    fail_unless (memcmp (em.data + j * ow * 3, om.data + j * stride,
            ow * 3) == 0, "row %d of the extra image differs", j);
  gst_buffer_unmap (extra, &em);
  gst_buffer_unmap (out, &om);
}

static void
get_geometry (GstBuffer * out, GstSpdlSampleGeometry * g)
{
  fail_unless (gst_spdl_buffer_get_sample_geometry (out, g));
  fail_unless_equals_int (g->source_width, W);
  fail_unless_equals_int (g->source_height, H);
}

/* @n samples through @props; checks every field against the reference
 * of the geometry each sample reports. Returns how many were flipped. */
static guint
run_mode (const gchar * props, gint ow, gint oh, gboolean center, guint n)
{
  GBytes *picture = make_picture (3), *extra = make_picture (4);
  GBytes *mask = make_palette_mask (W, H), *depth = make_depth_map ();
  GstHarness *h = start (props, "skip", NULL);
  GstCaps *caps;
  guint k, flipped = 0;

  for (k = 0; k < n; k++)
    fail_unless_equals_int (gst_harness_push (h, make_sample (picture, k,
                mask, depth, extra)), GST_FLOW_OK);
  for (k = 0; k < n; k++) {
    GstBuffer *out = gst_harness_pull (h);
    GstSpdlSampleGeometry g;
    MaskReference ref = { 0 };

    fail_unless (out != NULL);
    get_geometry (out, &g);
    if (center) {
      /* torchvision: Resize (shorter = 40), then CenterCrop: offsets
       * round ((resized - crop) / 2), half to even */
      ref.center = TRUE;
      ref.rh = 40;
      ref.rw = (gint) (40.0 * W / H);
      ref.ox = (gint) nearbyint ((ref.rw - ow) / 2.0);
      ref.oy = (gint) nearbyint ((ref.rh - oh) / 2.0);
      /* the box reported is that window, in source pixels */
      fail_unless (fabs (g.x - ref.ox * (gdouble) W / ref.rw) < 1e-9);
      fail_unless (fabs (g.width - ow * (gdouble) W / ref.rw) < 1e-9);
      fail_unless (fabs (g.y - ref.oy * (gdouble) H / ref.rh) < 1e-9);
    } else {
      ref.x = (gint) g.x;
      ref.y = (gint) g.y;
      ref.w = (gint) g.width;
      ref.h = (gint) g.height;
      /* integer boxes inside the image */
      fail_unless (ref.x == g.x && ref.w == g.width && ref.w > 0);
      fail_unless (ref.x + ref.w <= W && ref.y + ref.h <= H);
    }
    flipped += g.flipped;
    check_labels (out, &ref, g.flipped, ow, oh);
    check_extra (out, ow, oh);
    gst_buffer_unref (out);
  }
  caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless_equals_string (gst_structure_get_string
      (gst_caps_get_structure (caps, 0), "fields"),
      "mask.png:label:skip,depth.png:label:skip,extra.png:image:skip");
  gst_caps_unref (caps);
  gst_harness_teardown (h);
  g_bytes_unref (picture);
  g_bytes_unref (extra);
  g_bytes_unref (mask);
  g_bytes_unref (depth);
  return flipped;
}

GST_START_TEST (test_fields_stretch)
{
  /* down on one axis, up on the other */
  run_mode ("width=40 height=70", 40, 70, FALSE, 2);
}

GST_END_TEST;

GST_START_TEST (test_fields_center_crop)
{
  run_mode ("mode=center-crop resize-shorter=40 width=36 height=36", 36, 36,
      TRUE, 2);
  /* a crop wider than the resized image: zeros beside it */
  run_mode ("mode=center-crop resize-shorter=40 width=60 height=44", 60, 44,
      TRUE, 1);
}

GST_END_TEST;

GST_START_TEST (test_fields_random_resized_crop_flip)
{
  guint flipped = run_mode ("mode=random-resized-crop width=32 height=24 "
      "flip=random-horizontal seed=5", 32, 24, FALSE, 12);

  /* both sides of the coin were checked */
  fail_unless (flipped > 0 && flipped < 12, "%u of 12 flipped", flipped);
}

GST_END_TEST;

/* Every sample's meta has the geometry, fields or not. */
GST_START_TEST (test_geometry_without_fields)
{
  GBytes *picture = make_picture (3);
  GstHarness *h = gst_harness_new_parse ("spdldecode width=20 height=10");
  GstBuffer *buf = gst_buffer_new_wrapped_bytes (picture), *out;
  GstSpdlSampleGeometry g;
  GstCaps *caps;

  gst_spdl_buffer_add_sample_meta (buf, 0, 1, 0, "/data/a.png");
  gst_harness_set_src_caps_str (h, "image/png, parsed=true");
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  out = gst_harness_pull (h);
  get_geometry (out, &g);
  fail_unless (g.x == 0 && g.y == 0 && g.width == W && g.height == H);
  fail_unless (!g.flipped);
  fail_unless_equals_int (gst_spdl_buffer_get_record_size (out), 0);
  caps = gst_pad_get_current_caps (h->sinkpad);
  fail_if (gst_structure_has_field (gst_caps_get_structure (caps, 0),
          "fields"));
  gst_caps_unref (caps);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_bytes_unref (picture);
}

GST_END_TEST;

/* The first message of @type on @bus, NULL if none */
static GstMessage *
pop_message (GstBus * bus, GstMessageType type)
{
  return gst_bus_pop_filtered (bus, type);
}

static void
assert_message_names (GstMessage * msg, const gchar * field,
    const gchar * words)
{
  GError *err = NULL;
  gchar *debug = NULL;

  fail_unless (msg != NULL);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, &debug);
  else
    gst_message_parse_warning (msg, &err, &debug);
  fail_unless (strstr (err->message, field) != NULL, "%s", err->message);
  fail_unless (strstr (err->message, words) != NULL, "%s", err->message);
  fail_unless (strstr (err->message, "/data/img.png") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
}

static void
stop (GstHarness * h, GstBus * bus)
{
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

typedef struct
{
  const gchar *what;
  GBytes *mask;
  const gchar *words;
} BadMask;

static guint64
skipped_bad_field (GstHarness * h)
{
  GstElement *dec = gst_harness_find_element (h, "spdldecode");
  GstStructure *counts = NULL;
  guint64 n = 0;

  g_object_get (dec, "error-counts", &counts, NULL);
  gst_object_unref (dec);
  fail_unless (gst_structure_get_uint64 (counts, "bad-field", &n));
  gst_structure_free (counts);
  return n;
}

/* A mask of another size, an RGB PNG, a JPEG or a corrupt PNG as a label:
 * skipped by reason (policy skip), an error (error) or zeros (empty),
 * with a message naming the field, the sample and why. */
GST_START_TEST (test_bad_labels)
{
  GBytes *picture = make_picture (3), *extra = make_picture (4);
  GBytes *mask = make_palette_mask (W, H), *depth = make_depth_map ();
  GBytes *rgb = make_picture (3), *wide = make_palette_mask (W + 1, H);
  GBytes *corrupt = g_bytes_new_from_bytes (mask, 0,
      g_bytes_get_size (mask) - 20);
  SpdlTestJpeg opts;
  gsize jpeg_size;
  guint8 *jpeg_data;
  GBytes *jpeg;
  BadMask bad[4];
  guint b;

  spdl_test_jpeg_init (&opts, W, H);
  jpeg_data = spdl_test_encode_jpeg (&opts, &jpeg_size);
  jpeg = g_bytes_new_take (jpeg_data, jpeg_size);
  bad[0] = (BadMask) {
  "another size", wide, "62x47"};
  bad[1] = (BadMask) {
  "RGB", rgb, "RGB"};
  bad[2] = (BadMask) {
  "JPEG", jpeg, "JPEG"};
  bad[3] = (BadMask) {
  "corrupt", corrupt, "truncated"};

  for (b = 0; b < G_N_ELEMENTS (bad); b++) {
    GstBus *bus;
    GstHarness *h;
    GstBuffer *out;
    GstMapInfo map;
    gsize i;

    /* skip: the bad sample is dropped, the next one goes through */
    h = start ("width=16 height=16", "skip", &bus);
    fail_unless_equals_int (gst_harness_push (h, make_sample (picture, 0,
                bad[b].mask, depth, extra)), GST_FLOW_OK);
    fail_unless_equals_int (gst_harness_push (h, make_sample (picture, 1,
                mask, depth, extra)), GST_FLOW_OK);
    out = gst_harness_pull (h);
    {
      GstSpdlSampleInfo info;
      fail_unless (gst_spdl_buffer_get_sample_info (out, &info));
      fail_unless_equals_int (info.index, 1);
    }
    gst_buffer_unref (out);
    fail_unless_equals_int (skipped_bad_field (h), 1);
    assert_message_names (pop_message (bus, GST_MESSAGE_WARNING),
        "\"mask.png\"", bad[b].words);
    stop (h, bus);

    /* error: the pipeline stops, naming the sample and the field */
    h = start ("width=16 height=16", "error", &bus);
    gst_harness_push (h, make_sample (picture, 0, bad[b].mask, depth,
            extra));
    /* the source task posts it */
    {
      GstMessage *msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
          GST_MESSAGE_ERROR);
      assert_message_names (msg, "\"mask.png\"", bad[b].words);
    }
    stop (h, bus);

    /* empty: zeros, delivered, warned */
    h = start ("width=16 height=16", "empty", &bus);
    fail_unless_equals_int (gst_harness_push (h, make_sample (picture, 0,
                bad[b].mask, depth, extra)), GST_FLOW_OK);
    out = gst_harness_pull (h);
    fail_unless (gst_buffer_map (field_pixels (out, 0, "GRAY8", 16, 16),
            &map, GST_MAP_READ));
    for (i = 0; i < map.size; i++)
      fail_unless_equals_int (map.data[i], 0);
    gst_buffer_unmap (field_pixels (out, 0, "GRAY8", 16, 16), &map);
    /* the other fields decoded */
    field_pixels (out, 1, "GRAY16_LE", 16, 16);
    field_pixels (out, 2, "RGB", 16, 16);
    gst_buffer_unref (out);
    fail_unless_equals_int (skipped_bad_field (h), 0);
    assert_message_names (pop_message (bus, GST_MESSAGE_WARNING),
        "\"mask.png\"", bad[b].words);
    stop (h, bus);
  }
  g_bytes_unref (picture);
  g_bytes_unref (extra);
  g_bytes_unref (mask);
  g_bytes_unref (depth);
  g_bytes_unref (rgb);
  g_bytes_unref (wide);
  g_bytes_unref (corrupt);
  g_bytes_unref (jpeg);
}

GST_END_TEST;

/* An empty value (a field missing upstream under the policy empty) is
 * zeros of the output's size. */
GST_START_TEST (test_missing_is_zeros)
{
  GBytes *picture = make_picture (3), *none = g_bytes_new (NULL, 0);
  GstHarness *h = start ("width=12 height=9", "empty", NULL);
  GstBuffer *out, *pixels;
  GstMapInfo map;
  gsize i;

  fail_unless_equals_int (gst_harness_push (h, make_sample (picture, 0,
              none, none, none)), GST_FLOW_OK);
  out = gst_harness_pull (h);
  pixels = field_pixels (out, 0, "GRAY8", 12, 9);
  fail_unless (gst_buffer_map (pixels, &map, GST_MAP_READ));
  fail_unless_equals_int (map.size, 12 * 9);
  for (i = 0; i < map.size; i++)
    fail_unless_equals_int (map.data[i], 0);
  gst_buffer_unmap (pixels, &map);
  pixels = field_pixels (out, 2, "RGB", 12, 9);
  fail_unless_equals_int (gst_buffer_get_size (pixels), 12 * 9 * 3);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_bytes_unref (picture);
  g_bytes_unref (none);
}

GST_END_TEST;

/* The extra image of one sample through @props, its RGB bytes. */
static GBytes *
extra_through (const gchar * props)
{
  GBytes *picture = make_picture (3), *extra = make_picture (4);
  GBytes *mask = make_palette_mask (W, H), *depth = make_depth_map ();
  GstHarness *h = start (props, "skip", NULL);
  GstBuffer *out;
  GstMapInfo map;
  GBytes *pixels;

  fail_unless_equals_int (gst_harness_push (h, make_sample (picture, 0,
              mask, depth, extra)), GST_FLOW_OK);
  out = gst_harness_pull (h);
  fail_unless (gst_buffer_map (field_pixels (out, 2, "RGB", 20, 14), &map,
          GST_MAP_READ));
  pixels = g_bytes_new (map.data, map.size);
  gst_buffer_unmap (field_pixels (out, 2, "RGB", 20, 14), &map);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  g_bytes_unref (picture);
  g_bytes_unref (extra);
  g_bytes_unref (mask);
  g_bytes_unref (depth);
  return pixels;
}

/* An image field is RGB whatever the media image's format, decoded the
 * same way. */
GST_START_TEST (test_extra_image_rgb_beside_gray)
{
  GBytes *rgb = extra_through ("width=20 height=14");
  GBytes *beside_gray = extra_through ("width=20 height=14 format=GRAY8");

  fail_unless (g_bytes_equal (rgb, beside_gray));
  g_bytes_unref (rgb);
  g_bytes_unref (beside_gray);
}

GST_END_TEST;

static Suite *
spdldecodefields_suite (void)
{
  Suite *s = suite_create ("spdldecodefields");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_fields_stretch);
  tcase_add_test (tc, test_fields_center_crop);
  tcase_add_test (tc, test_fields_random_resized_crop_flip);
  tcase_add_test (tc, test_geometry_without_fields);
  tcase_add_test (tc, test_bad_labels);
  tcase_add_test (tc, test_missing_is_zeros);
  tcase_add_test (tc, test_extra_image_rgb_beside_gray);
  return s;
}

SPDL_CHECK_MAIN (spdldecodefields);
