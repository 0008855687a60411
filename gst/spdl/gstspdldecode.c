/* GStreamer SPDL plugin: parallel image decoder
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/**
 * SECTION:element-spdldecode
 * @title: spdldecode
 *
 * Decodes image samples (JPEG, PNG, WebP, BMP, GIF, TIFF) on a pool of
 * native threads (#GstSpdlDecode:threads, each with its own decoders),
 * with the resize and crop of a training or validation recipe fused into
 * the decode: for JPEG, libjpeg-turbo decodes only the rows and columns
 * the crop keeps, and the resize is the antialiased bilinear of PIL, so
 * results are torchvision's, bit for bit.
 * With #GstSpdlDecode:exact false, JPEGs at least 2x the target decode
 * faster (DCT-domain scaling; smaller ones no faster) and pixels differ
 * slightly from PIL's; crops, sizes and order stay the same.
 *
 * PNG (libpng), WebP (libwebp; an animation's first frame), BMP (every
 * depth and RLE), GIF (giflib; the first frame) and TIFF (libtiff) samples
 * decode too, with the same fused resize and crop on the same threads: the
 * format is told by the data's first bytes, never the file's name, and
 * pixels are PIL 9.4's Image.open(f).convert("RGB"), bit for bit (alpha
 * dropped, 16-bit samples by their high byte, palettes, a GIF's
 * transparent background, a TIFF's Orientation tag). Layouts PIL does not
 * read, or that are not decoded here (TIFFs of floating-point samples, for
 * one), are skipped with the reason unsupported; PPM/PGM, JPEG 2000, ICO
 * and TGA samples (PIL reads the last three) with the reason
 * unsupported-format, the message naming the format and those decoded.
 *
 * Output keeps input order unless #GstSpdlDecode:ordered is false. The
 * samples in flight are bounded, so memory stays flat. Random choices
 * (random-resized-crop, flip) depend only on (seed, epoch, sample index),
 * never on thread count or timing.
 *
 * A corrupt, truncated or undecodable sample, one larger than
 * #GstSpdlDecode:max-pixels, one whose output would be larger than
 * #GstSpdlDecode:max-output-pixels (an extreme aspect ratio with a size
 * that follows it), or one whose decode needs more than
 * #GstSpdlDecode:max-decode-memory or #GstSpdlDecode:max-scans, is dropped
 * with a warning naming the file and the reason, counted by reason
 * (#GstSpdlDecode:error-counts) and against #GstSpdlDecode:max-errors.
 * Whatever max-errors allows, it is an error when an epoch ends and no
 * sample has been decoded since the start while at least 16 were skipped
 * (a dataset of files this element cannot decode would otherwise go round
 * its epochs without ever producing a sample; the 16 keep a rank whose
 * share of a few samples was all bad by chance going), or, on one rank,
 * when every sample of the epoch was skipped: a small dataset fails at the
 * end of its first epoch, not after some empty ones. The end of an epoch
 * resumed mid-way is not such a check.
 *
 * Output caps follow downstream: RGB (packed) or RGBP (planar, what
 * spdlbatch layout=nchw prefers), or GRAY8 with #GstSpdlDecode:format.
 * When every output has the same size (width and height set) and
 * downstream's ALLOCATION answer offers a pool whose buffers carry a
 * #GstVideoMeta, samples are decoded straight into its buffers (honouring
 * their strides and plane offsets), taken in input order: with spdlbatch
 * these are the slots of the batch, so pixels are written once. A DRAIN
 * query returns once every sample before it went downstream.
 *
 * Each input buffer must hold one whole image (caps `parsed=true`, as
 * spdlsrc and jpegparse produce): `filesrc` alone delivers arbitrary
 * chunks and does not link.
 *
 * Each output's sample meta tells the geometry its image went through
 * (docs/record.md): the crop box in the source image's pixels, whether it
 * was flipped, the source's size. When the sink caps carry a record
 * (`fields`, from spdlsrc), the src caps carry it on, and its image and
 * label fields are decoded on the same thread right after the media image,
 * through exactly its geometry: an image field as the media image (RGB),
 * a label field (a segmentation mask or label map: a palette PNG's
 * indices, a gray PNG's values, 16-bit ones as GRAY16_LE) by nearest
 * neighbour as torchvision's F.resized_crop (mask, top, left, h, w, size,
 * NEAREST) then F.hflip compute it, values never mixed or turned into
 * colours. A field that does not decode, that is not the media image's
 * size, or a label that is no palette or gray PNG is bad: under the
 * field's policy skip the sample is skipped by the reason bad-field (the
 * warning naming the field and why), under error the pipeline stops,
 * under empty the field becomes zeros with a warning; an empty value
 * (missing upstream under empty) is zeros of the output's size.
 *
 * Detection recipes keep the aspect ratio. #GstSpdlDecode:mode=shorter
 * is torchvision's `Resize (size, max_size)`: the shorter side to
 * #GstSpdlDecode:resize-shorter, or to one of #GstSpdlDecode:sizes drawn
 * per image from (seed, epoch, index) (DETR's multi-scale), the longer at
 * most #GstSpdlDecode:max-size; each output has its own size (the caps
 * change with it; spdlbatch pad-multiple batches them).
 * #GstSpdlDecode:mode=letterbox is ultralytics' LetterBox into width x
 * height: resized by r = min (width / w, height / h) to round (w r) x
 * round (h r), centred, padded with #GstSpdlDecode:pad-value (YOLO's 114).
 * Both resize as PIL does, pixel for pixel. The sample's geometry tells
 * how boxes follow: a point (x, y) of the source image is at
 * ((x - crop.x) * out_width / crop.width, (y - crop.y) * out_height /
 * crop.height) in the output, then x' = out_width - x where flipped; a
 * letterbox's crop box starts before the image (negative x or y) by its
 * padding.
 *
 * An objects field (one image's COCO annotations, a JSON array or an
 * object with the member `annotations`: `fields="json:objects"` for a
 * shard's json member or a folder's sidecar) is decoded after them into
 * detection targets (docs/record.md): boxes float32 XYXY (COCO's XYWH
 * converted as torchvision's wrap_dataset_for_transforms_v2 does), the
 * raw category_id, area, iscrowd and with #GstSpdlDecode:instance-masks
 * each object's mask, rasterized from its polygons or RLE exactly as
 * pycocotools' annToMask does. All go through the image's geometry as
 * torchvision 0.29's v2 ops transform BoundingBoxes and Mask
 * (F.resized_crop, or F.resize + F.center_crop, then F.horizontal_flip),
 * then SanitizeBoundingBoxes (#GstSpdlDecode:box-min-size,
 * #GstSpdlDecode:box-min-area) removes boxes with their labels and masks.
 * An annotation without a bbox of 4 finite numbers or an integer
 * category_id, or with a polygon under 3 points or an RLE whose counts do
 * not sum to its size, is dropped with a warning naming the sample and
 * the annotation; boxes outside the image or empty are warned about and
 * left to the geometry and sanitizing; #GstSpdlDecode:object-counts
 * counts them by reason.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 spdlsrc location=/data/val ! \
 *     spdldecode width=224 height=224 mode=center-crop resize-shorter=256 ! \
 *     fakesink
 * ]| torchvision's Resize(256) + CenterCrop(224).
 * |[
 * gst-launch-1.0 spdlsrc location=/data/train shuffle=true ! \
 *     spdldecode width=224 height=224 mode=random-resized-crop \
 *     flip=random-horizontal ! fakesink
 * ]| RandomResizedCrop(224) + RandomHorizontalFlip().
 * |[
 * gst-launch-1.0 spdlsrc location=/data/coco/train2017 shuffle=true ! \
 *     spdldecode mode=shorter \
 *     sizes="<480,512,544,576,608,640,672,704,736,768,800>" \
 *     max-size=1333 flip=random-horizontal ! \
 *     spdlbatch batch-size=2 pad-multiple=32 ! fakesink
 * ]| DETR's RandomHorizontalFlip + RandomResize (sizes, max_size=1333),
 * batched as its NestedTensor: padded to a multiple of 32 with a mask.
 * |[
 * gst-launch-1.0 spdlsrc location=/data/coco/val2017 ! \
 *     spdldecode mode=letterbox width=640 height=640 ! \
 *     spdlbatch batch-size=16 ! fakesink
 * ]| YOLO's LetterBox (640, 640), padded with 114.
 * |[
 * gst-launch-1.0 spdlsrc location=/data/coco-shards/train-{0000..0099}.tar \
 *     fields="json:objects" ! spdldecode width=640 height=640 \
 *     mode=random-resized-crop flip=random-horizontal instance-masks=true ! \
 *     spdlbatch batch-size=16 ! fakesink
 * ]| Detection targets beside each image: boxes, labels and masks.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdldecode.h"
#include "gstspdlfielddecode.h"
#include "gstspdlmeta.h"
#include "gstspdlrecord.h"

#include <string.h>

enum
{
  PROP_0,
  PROP_FORMAT,
  PROP_WIDTH,
  PROP_HEIGHT,
  PROP_MODE,
  PROP_RESIZE_SHORTER,
  PROP_MAX_SIZE,
  PROP_SIZES,
  PROP_PAD_VALUE,
  PROP_SCALE_MIN,
  PROP_SCALE_MAX,
  PROP_RATIO_MIN,
  PROP_RATIO_MAX,
  PROP_FLIP,
  PROP_SEED,
  PROP_MAX_PIXELS,
  PROP_MAX_OUTPUT_PIXELS,
  PROP_MAX_DECODE_MEMORY,
  PROP_MAX_SCANS,
  PROP_DCT_SCALING,
  PROP_REGION_DECODE,
  PROP_EXACT,
  PROP_INSTANCE_MASKS,
  PROP_BOX_MIN_SIZE,
  PROP_BOX_MIN_AREA,
  PROP_MAX_MASKS_SIZE,
  PROP_OBJECT_COUNTS,
  /* then the base's, GST_SPDL_PARALLEL_DECODER_PROP_* */
  PROP_N,
};

#define DEFAULT_FORMAT GST_SPDL_DECODE_FORMAT_RGB
#define DEFAULT_MODE GST_SPDL_RESIZE_STRETCH
#define DEFAULT_FLIP GST_SPDL_FLIP_NONE
#define DEFAULT_MAX_PIXELS GST_SPDL_IMAGE_DEFAULT_MAX_PIXELS
#define DEFAULT_MAX_OUTPUT_PIXELS 0
#define DEFAULT_MAX_DECODE_MEMORY GST_SPDL_IMAGE_DEFAULT_MAX_MEMORY
#define DEFAULT_MAX_SCANS GST_SPDL_IMAGE_DEFAULT_MAX_SCANS
#define DEFAULT_EXACT TRUE
#define DEFAULT_INSTANCE_MASKS FALSE
#define DEFAULT_BOX_MIN_SIZE 1.0
#define DEFAULT_BOX_MIN_AREA 1.0
#define DEFAULT_MAX_MASKS_SIZE (G_GUINT64_CONSTANT (1) << 30)
/* samples in flight per worker by default: results leave in order, so the
 * other threads keep decoding while a slow image holds the head (fewer
 * leave them idle; more gain nothing: docs/performance.md) */
#define JOBS_PER_THREAD 8

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("image/jpeg, parsed = (boolean) true; "
        "image/png, parsed = (boolean) true; "
        "image/webp, parsed = (boolean) true"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE ("{ RGB, RGBP, GRAY8 }")));

GST_DEBUG_CATEGORY_STATIC (spdl_decode_debug);
#define GST_CAT_DEFAULT spdl_decode_debug

GType
gst_spdl_resize_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_RESIZE_STRETCH, "Resize to width x height", "stretch"},
    {GST_SPDL_RESIZE_CENTER_CROP,
        "Resize the shorter side to resize-shorter, crop the centre",
        "center-crop"},
    {GST_SPDL_RESIZE_RANDOM_RESIZED_CROP,
        "torchvision's RandomResizedCrop", "random-resized-crop"},
    {GST_SPDL_RESIZE_SHORTER,
          "Resize the shorter side to resize-shorter (or one of sizes), "
          "the longer at most max-size (torchvision's Resize (size, "
          "max_size)): the size follows the image", "shorter"},
    {GST_SPDL_RESIZE_LETTERBOX,
          "Keep the aspect ratio into width x height, centred, padded with "
          "pad-value (ultralytics' LetterBox)", "letterbox"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlResizeMode", values));
  return type;
}

GType
gst_spdl_decode_format_get_type (void)
{
  static GType type = 0;
  /* nicks as in the caps, so format=GRAY8 reads like video/x-raw */
  static const GEnumValue values[] = {
    {GST_SPDL_DECODE_FORMAT_RGB, "Packed RGB", "RGB"},
    {GST_SPDL_DECODE_FORMAT_GRAY8, "8-bit gray", "GRAY8"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstSpdlDecodeFormat",
            values));
  return type;
}

GType
gst_spdl_flip_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_FLIP_NONE, "No flip", "none"},
    {GST_SPDL_FLIP_RANDOM_HORIZONTAL, "Flip horizontally with p=0.5",
        "random-horizontal"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstSpdlFlipMode",
            values));
  return type;
}

/* The record described by the sink caps' "fields". */
typedef struct
{
  GstSpdlRecord *record;
  gchar *text;                  /* as the caps spell it */
} GstSpdlDecodeFields;

/* A sample: the base's job (its one output in outputs once decoded) and
 * what the stream thread chose for it. */
typedef struct
{
  GstSpdlParallelDecoderJob parent;
  GstBuffer *output;            /* being decoded: a batch slot or ours */
  const GstSpdlDecodeFields *fields;    /* of the sample, NULL: none */
  GError *filled;               /* a bad field made zeros (policy empty) */
  GString *objects_notes;       /* annotations dropped or odd, warned */
  guint64 object_counts[GST_SPDL_OBJECTS_N_REASONS];
  guint width, height;          /* of the output */
  GstVideoFormat format;        /* of the output */
} GstSpdlDecodeJob;

/* a field whose missing policy is error (the job's fatal) */
#define FATAL_FIELD "the field's missing policy is error"

#define gst_spdl_decode_parent_class parent_class
G_DEFINE_TYPE (GstSpdlDecode, gst_spdl_decode,
    GST_TYPE_SPDL_PARALLEL_DECODER);
GST_ELEMENT_REGISTER_DEFINE (spdldecode, "spdldecode", GST_RANK_NONE,
    GST_TYPE_SPDL_DECODE);

static void gst_spdl_decode_finalize (GObject * object);
static void gst_spdl_decode_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_spdl_decode_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static gboolean gst_spdl_decode_start (GstSpdlParallelDecoder * base);
static gpointer gst_spdl_decode_create_state (GstSpdlParallelDecoder * base);
static void gst_spdl_decode_free_state (GstSpdlParallelDecoder * base,
    gpointer state);
static void gst_spdl_decode_stop (GstSpdlParallelDecoder * base);
static gboolean gst_spdl_decode_set_sink_caps (GstSpdlParallelDecoder * base,
    GstCaps * caps);
static void gst_spdl_decode_prepare_job (GstSpdlParallelDecoder * base,
    GstSpdlParallelDecoderJob * job);
static void gst_spdl_decode_clear_job (GstSpdlParallelDecoder * base,
    GstSpdlParallelDecoderJob * job);
static void gst_spdl_decode_set_flushing (GstSpdlParallelDecoder * base,
    gboolean flushing);
static void gst_spdl_decode_decode (GstSpdlParallelDecoder * base,
    gpointer state, GstSpdlParallelDecoderJob * job);
static GstFlowReturn gst_spdl_decode_push_output (GstSpdlParallelDecoder *
    base, GstSpdlParallelDecoderJob * job, GstBuffer * output);
static void gst_spdl_decode_post_fatal (GstSpdlParallelDecoder * base,
    GstSpdlParallelDecoderJob * job);
static gboolean gst_spdl_decode_src_query (GstSpdlParallelDecoder * base,
    GstQuery * query);

#define READY_PARAM (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | \
    GST_PARAM_MUTABLE_READY)

static void
gst_spdl_decode_class_init (GstSpdlDecodeClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstSpdlParallelDecoderClass *decoder_class =
      GST_SPDL_PARALLEL_DECODER_CLASS (klass);

  gobject_class->finalize = gst_spdl_decode_finalize;
  gobject_class->set_property = gst_spdl_decode_set_property;
  gobject_class->get_property = gst_spdl_decode_get_property;

  /**
   * GstSpdlDecode:threads:
   *
   * Decoding threads, each with its own decompressor; 0 = one per online
   * CPU.
   */
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_THREADS,
      "Decoding threads (0 = number of online CPUs)");
  /**
   * GstSpdlDecode:max-in-flight:
   *
   * Samples taken from upstream and not yet pushed downstream, each with
   * its input and output buffers: upstream blocks beyond that. 0 means 8
   * per decoding thread. Lower it to bound memory when outputs are large
   * (native-size decodes) and the consumer is slow; below the threads,
   * some threads have nothing to decode.
   */
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_MAX_IN_FLIGHT,
      "Samples decoding or waiting to be pushed, at most "
      "(0 = 8 per decoding thread)");
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_ORDERED,
      "Output samples in input order (false: in completion order)");
  g_object_class_install_property (gobject_class, PROP_FORMAT,
      g_param_spec_enum ("format", "Format", "Output format",
          GST_TYPE_SPDL_DECODE_FORMAT, DEFAULT_FORMAT, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_WIDTH,
      g_param_spec_uint ("width", "Width",
          "Output width (0 = the image's or the crop's own)", 0, 65535, 0,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_HEIGHT,
      g_param_spec_uint ("height", "Height",
          "Output height (0 = the image's or the crop's own)", 0, 65535, 0,
          READY_PARAM));
  /**
   * GstSpdlDecode:mode:
   *
   * How the image becomes width x height: stretched, resized so its
   * shorter side is #GstSpdlDecode:resize-shorter and centre-cropped
   * (torchvision's Resize + CenterCrop), or torchvision's
   * RandomResizedCrop.
   *
   * shorter (detection): torchvision's `Resize (size, max_size)`, the
   * shorter side to #GstSpdlDecode:resize-shorter (or one of
   * #GstSpdlDecode:sizes, drawn per image), the longer at most
   * #GstSpdlDecode:max-size, rounding as torchvision 0.29's
   * `_compute_resized_output_size`; width and height stay 0, each output
   * has its own size (spdlbatch pad-multiple batches them).
   *
   * letterbox (YOLO): ultralytics' LetterBox into width x height: the
   * image resized by r = min (width / w, height / h) to round (w r) x
   * round (h r), centred with (width - new) / 2 columns (rounded down)
   * on the left and the rest on the right, as many rows likewise above
   * and below, filled with #GstSpdlDecode:pad-value. Pixels in the image
   * are PIL's resize of the whole image to the new size; the sample's
   * crop box reaches past the image (negative x or y) by the padding.
   */
  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode", "Resize and crop mode",
          GST_TYPE_SPDL_RESIZE_MODE, DEFAULT_MODE, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_RESIZE_SHORTER,
      g_param_spec_uint ("resize-shorter", "Resize shorter side",
          "center-crop, shorter: shorter side after resize (center-crop: 0 "
          "= the crop size; shorter: 0 = the image's own, or with max-size "
          "the longer side to max-size)", 0,
          65535, 0, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_MAX_SIZE,
      g_param_spec_uint ("max-size", "Max size",
          "shorter: the longer side at most this (0 = no limit; must be "
          "larger than every shorter-side size)", 0, 65535, 0, READY_PARAM));
  /**
   * GstSpdlDecode:sizes:
   *
   * mode=shorter: shorter-side sizes, one drawn per image from (seed,
   * epoch, index) as every random choice here (DETR's multi-scale
   * training, `sizes="<480,512,544,576,608,640,672,704,736,768,800>"`);
   * empty: #GstSpdlDecode:resize-shorter.
   */
  g_object_class_install_property (gobject_class, PROP_SIZES,
      gst_param_spec_array ("sizes", "Sizes",
          "shorter: shorter-side sizes, one drawn per image (empty = "
          "resize-shorter)", g_param_spec_int ("size", "Size",
              "A shorter-side size", 1, 65535, 1, READY_PARAM), READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_PAD_VALUE,
      g_param_spec_uint ("pad-value", "Pad value",
          "letterbox: value of every channel of the padding (114: YOLO's)",
          0, 255, 114, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SCALE_MIN,
      g_param_spec_double ("scale-min", "Scale min",
          "random-resized-crop: smallest crop area, as a share of the image",
          0.0, 1.0, 0.08, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SCALE_MAX,
      g_param_spec_double ("scale-max", "Scale max",
          "random-resized-crop: largest crop area, as a share of the image",
          0.0, 1.0, 1.0, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_RATIO_MIN,
      g_param_spec_double ("ratio-min", "Ratio min",
          "random-resized-crop: smallest aspect ratio (width/height)",
          0.01, 100.0, 3.0 / 4.0, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_RATIO_MAX,
      g_param_spec_double ("ratio-max", "Ratio max",
          "random-resized-crop: largest aspect ratio (width/height)",
          0.01, 100.0, 4.0 / 3.0, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_FLIP,
      g_param_spec_enum ("flip", "Flip", "Random flip",
          GST_TYPE_SPDL_FLIP_MODE, DEFAULT_FLIP, READY_PARAM));
  /**
   * GstSpdlDecode:seed:
   *
   * Seed of the random choices, which depend only on (seed, epoch, sample
   * index).
   */
  g_object_class_install_property (gobject_class, PROP_SEED,
      g_param_spec_uint64 ("seed", "Seed", "Seed of the random choices", 0,
          G_MAXUINT64, 0, READY_PARAM));
  /**
   * GstSpdlDecode:max-pixels:
   *
   * Samples whose header claims more pixels are refused before any pixel
   * memory is allocated (decompression bombs). The default is PIL's
   * decompression bomb limit (Image.MAX_IMAGE_PIXELS, 178956970: a
   * 200-megapixel phone photo is over it; PIL warns there and fails past
   * twice that), above every photo a phone or camera makes.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_PIXELS,
      g_param_spec_uint64 ("max-pixels", "Max pixels",
          "Refuse images with more pixels than this (0 = no limit)", 0,
          G_MAXUINT64, DEFAULT_MAX_PIXELS, READY_PARAM));
  /**
   * GstSpdlDecode:max-output-pixels:
   *
   * Samples whose output would have more pixels are skipped with the
   * reason "too-large" before the output is allocated. Only outputs whose
   * size follows the image can grow past the size asked for (width or
   * height 0, or center-crop with one side missing): a 1x65500 image
   * with width=224 would be 224x14672000. 0 = automatic: 64 x the square
   * of the largest of width, height and resize-shorter (aspect ratios up
   * to 1:64 pass), or max-pixels when no size is set.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_OUTPUT_PIXELS,
      g_param_spec_uint64 ("max-output-pixels", "Max output pixels",
          "Skip samples whose output would have more pixels than this "
          "(0 = automatic, from the size asked for)", 0, G_MAXUINT64,
          DEFAULT_MAX_OUTPUT_PIXELS, READY_PARAM));
  /**
   * GstSpdlDecode:max-decode-memory:
   *
   * Working memory for one decode, in bytes. Progressive JPEGs keep every
   * DCT coefficient of the image (about 3 bytes per pixel for 4:2:0
   * colour, 6 for 4:4:4, 8 for CMYK), checked from the header before
   * decoding; interlaced PNGs and WebPs are decoded whole (3 to 8 bytes
   * per pixel). Other images are decoded row by row. The default, 8 bytes
   * per pixel of max-pixels' default, takes any image up to that size.
   * With one decode per thread, the decoder's memory stays below threads x
   * this (images that large are rare: lower it to bound memory more
   * tightly). 0 = no limit.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_DECODE_MEMORY,
      g_param_spec_uint64 ("max-decode-memory", "Max decode memory",
          "Skip samples needing more decoder memory than this many bytes "
          "(0 = no limit)", 0, G_MAXUINT64, DEFAULT_MAX_DECODE_MEMORY,
          READY_PARAM));
  /**
   * GstSpdlDecode:max-scans:
   *
   * Progressive JPEGs with more scans are skipped (each scan is a pass
   * over the image: a crafted file with thousands costs minutes of CPU).
   * Real encoders write about 10. 0 = no limit.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SCANS,
      g_param_spec_uint ("max-scans", "Max scans",
          "Skip progressive JPEGs with more scans than this (0 = no limit)",
          0, G_MAXUINT, DEFAULT_MAX_SCANS, READY_PARAM));
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_MAX_ERRORS,
      "Undecodable samples to skip before failing (-1 = no limit)");
  /**
   * GstSpdlDecode:warning-limit:
   *
   * Skipped samples of each epoch that get a warning message on the bus;
   * later ones are only counted and logged (debug category spdldecode). An
   * "spdl-skipped" element message with the epoch's counts by reason is
   * posted when the epoch's end passes, if any sample was skipped.
   */
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_WARNING_LIMIT,
      "Per-sample warnings posted per epoch (the rest are counted)");
  /**
   * GstSpdlDecode:skip-recovered:
   *
   * Images with damaged data that decode all the same, as PIL decodes them
   * (a JPEG whose scan has a few corrupt bytes but which is whole), are
   * delivered with a warning naming the file and counted
   * (#GstSpdlDecode:recovered): their damaged part holds what the decoder
   * made of it, the pixels PIL gives. TRUE: skip them instead, with the
   * reason recovered.
   */
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_SKIP_RECOVERED,
      "Skip images decoded from damaged data rather than deliver them "
      "with a warning");
  g_object_class_install_property (gobject_class, PROP_DCT_SCALING,
      g_param_spec_boolean ("dct-scaling", "DCT scaling",
          "With exact=false, downscale JPEGs in the DCT domain once at least "
          "2x the target",
          TRUE, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_REGION_DECODE,
      g_param_spec_boolean ("region-decode", "Region decode",
          "Decode only the rows and columns the crop needs", TRUE,
          READY_PARAM));
  /**
   * GstSpdlDecode:exact:
   *
   * TRUE: the pixels are PIL's (torchvision's) decode and resize, bit for
   * bit: JPEGs are decoded at full resolution (#GstSpdlDecode:dct-scaling
   * does not apply; region decoding skips only what the crop never reads).
   * FALSE: faster on large JPEGs, for users who accept pixels that differ
   * slightly from PIL's: whenever the image is at least 2x the target (and
   * #GstSpdlDecode:dct-scaling is on), JPEGs are downscaled in the DCT
   * domain (1/2, 1/4 or 1/8) to the smallest size still at least the
   * target's; on CPUs without AVX2 the resize also runs with 16-bit
   * weights (with AVX2, PIL's exact resize is the faster one). Images
   * under 2x the target (ImageNet's 500x375 at 224) decode no faster. The
   * geometry (which region, the output size, flips), the limits and the
   * order are the same either way; only pixel values differ, by a tenth of
   * a level on average on ImageNet-like photos, under a level on large
   * ones.
   */
  g_object_class_install_property (gobject_class, PROP_EXACT,
      g_param_spec_boolean ("exact", "Exact",
          "Match PIL's resize (FALSE: large JPEGs faster, pixels differ "
          "slightly)",
          DEFAULT_EXACT, READY_PARAM));
  /**
   * GstSpdlDecode:instance-masks:
   *
   * Objects fields (COCO annotations, docs/record.md) carry each object's
   * instance mask, rasterized from its polygons or RLE as pycocotools'
   * annToMask does, through the image's geometry by nearest neighbour.
   */
  g_object_class_install_property (gobject_class, PROP_INSTANCE_MASKS,
      g_param_spec_boolean ("instance-masks", "Instance masks",
          "Objects fields carry instance masks (uint8 [n, H, W])",
          DEFAULT_INSTANCE_MASKS, READY_PARAM));
  /**
   * GstSpdlDecode:box-min-size:
   *
   * torchvision's SanitizeBoundingBoxes (min_size): after the geometry, a
   * box narrower or lower than this is removed with its label, area,
   * iscrowd and mask, as is one with a coordinate outside the output. 0
   * turns the size check off; with #GstSpdlDecode:box-min-area 0 too
   * nothing is removed.
   */
  g_object_class_install_property (gobject_class, PROP_BOX_MIN_SIZE,
      g_param_spec_double ("box-min-size", "Box min size",
          "Objects' boxes smaller than this (pixels, after the geometry) "
          "are removed, as SanitizeBoundingBoxes (min_size); 0 = no check",
          0, G_MAXDOUBLE, DEFAULT_BOX_MIN_SIZE, READY_PARAM));
  /**
   * GstSpdlDecode:box-min-area:
   *
   * torchvision's SanitizeBoundingBoxes (min_area); 0 turns the check
   * off (both 0: no sanitizing).
   */
  g_object_class_install_property (gobject_class, PROP_BOX_MIN_AREA,
      g_param_spec_double ("box-min-area", "Box min area",
          "Objects' boxes of a smaller area are removed, as "
          "SanitizeBoundingBoxes (min_area); 0 = no check",
          0, G_MAXDOUBLE, DEFAULT_BOX_MIN_AREA, READY_PARAM));
  /**
   * GstSpdlDecode:max-masks-size:
   *
   * With #GstSpdlDecode:instance-masks: a sample whose masks (one byte a
   * pixel of the output, each object) would take more bytes is a bad
   * field (its policy decides, as for JSON that is no annotations),
   * refused before they are made: a few bytes of polygons each ask for
   * a plane (1 GiB: 1000 objects at 1333x800). 0 = no limit.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_MASKS_SIZE,
      g_param_spec_uint64 ("max-masks-size", "Max masks size",
          "Instance masks: a sample's masks larger than this many bytes "
          "are a bad field (0 = no limit)", 0, G_MAXUINT64,
          DEFAULT_MAX_MASKS_SIZE, READY_PARAM));
  /**
   * GstSpdlDecode:object-counts:
   *
   * Annotations of objects fields by reason: bad-annotation (dropped and
   * warned: no bbox of 4 finite numbers, no integer category_id, a
   * polygon under 3 points, an RLE whose counts do not sum to its size),
   * box-outside-image and box-empty (kept and warned: the geometry and
   * sanitizing decide), sanitized (removed by the sanitizing).
   */
  g_object_class_install_property (gobject_class, PROP_OBJECT_COUNTS,
      g_param_spec_boxed ("object-counts", "Object counts",
          "Annotations of objects fields by reason", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_ERRORS,
      "Samples skipped so far because they could not be decoded");
  /**
   * GstSpdlDecode:error-counts:
   *
   * Skipped samples by reason: a structure with one guint64 field per
   * reason (empty, not-jpeg, truncated, corrupt, too-large, unsupported,
   * unsupported-format, recovered with #GstSpdlDecode:skip-recovered, and
   * the video and audio reasons, always 0 here).
   */
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_ERROR_COUNTS,
      "Skipped samples by reason");
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_DECODED, "Samples decoded so far");
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_RECOVERED,
      "Samples delivered so far that were decoded from damaged data "
      "(each warned about; see skip-recovered)");

  /**
   * GstSpdlDecode:stats:
   *
   * "spdl-stats": items-in, items-out, busy (ns of decoding, all threads),
   * mean, p90, p99 (ns per decode), elapsed, threads, utilisation (busy
   * over threads x elapsed, in [0, 1]), cpu and cpu-mean (the decoding
   * threads' own CPU time, ns, and per decode: mean minus cpu-mean is time
   * the threads waited for a core), in-flight, max-in-flight, recovered
   * (samples delivered from damaged data) and skipped-REASON counts.
   */
  gst_spdl_parallel_decoder_class_install_property (gobject_class, PROP_N,
      GST_SPDL_PARALLEL_DECODER_PROP_STATS,
      "Samples, decode times and worker pool utilisation");

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "SPDL parallel image decoder", "Codec/Decoder/Image",
      "Decodes JPEG, PNG, WebP, BMP, GIF and TIFF on a pool of threads with "
      "fused resize and crop",
      "gst-spdl authors");
  decoder_class->item_name = "sample";
  decoder_class->jobs_per_thread = JOBS_PER_THREAD;
  decoder_class->job_size = sizeof (GstSpdlDecodeJob);
  decoder_class->skipped_words = "undecodable samples";
  decoder_class->recovered_how =
      "PIL decodes it (skip-recovered=true skips such samples)";
  decoder_class->drains = TRUE;
  decoder_class->items_out_decoded = TRUE;
  decoder_class->start = GST_DEBUG_FUNCPTR (gst_spdl_decode_start);
  decoder_class->create_state =
      GST_DEBUG_FUNCPTR (gst_spdl_decode_create_state);
  decoder_class->free_state = GST_DEBUG_FUNCPTR (gst_spdl_decode_free_state);
  decoder_class->stop = GST_DEBUG_FUNCPTR (gst_spdl_decode_stop);
  decoder_class->set_sink_caps =
      GST_DEBUG_FUNCPTR (gst_spdl_decode_set_sink_caps);
  decoder_class->prepare_job = GST_DEBUG_FUNCPTR (gst_spdl_decode_prepare_job);
  decoder_class->clear_job = GST_DEBUG_FUNCPTR (gst_spdl_decode_clear_job);
  decoder_class->set_flushing =
      GST_DEBUG_FUNCPTR (gst_spdl_decode_set_flushing);
  decoder_class->decode = GST_DEBUG_FUNCPTR (gst_spdl_decode_decode);
  decoder_class->push_output = GST_DEBUG_FUNCPTR (gst_spdl_decode_push_output);
  decoder_class->post_fatal = GST_DEBUG_FUNCPTR (gst_spdl_decode_post_fatal);
  decoder_class->src_query = GST_DEBUG_FUNCPTR (gst_spdl_decode_src_query);

  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_RESIZE_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_FLIP_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_DECODE_FORMAT, 0);
  GST_DEBUG_CATEGORY_INIT (spdl_decode_debug, "spdldecode", 0,
      "SPDL parallel image decoder");
}

static void
gst_spdl_decode_init (GstSpdlDecode * self)
{
  self->format = DEFAULT_FORMAT;
  gst_spdl_decode_params_init (&self->params);
  self->params.max_pixels = DEFAULT_MAX_PIXELS;
  self->params.max_output_pixels = DEFAULT_MAX_OUTPUT_PIXELS;
  self->max_decode_memory = DEFAULT_MAX_DECODE_MEMORY;
  self->max_scans = DEFAULT_MAX_SCANS;
  self->objects.masks = DEFAULT_INSTANCE_MASKS;
  self->objects.min_size = DEFAULT_BOX_MIN_SIZE;
  self->objects.min_area = DEFAULT_BOX_MIN_AREA;
  self->objects.max_masks_size = DEFAULT_MAX_MASKS_SIZE;
  g_mutex_init (&self->lock);
}

static void
gst_spdl_decode_finalize (GObject * object)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (object);

  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* Any integers (Python's ints arrive as gint): more than
 * GST_SPDL_MAX_SIZES, or one out of range, are refused at start. */
static void
sizes_from_value_array (GstSpdlDecodeParams * p, const GValue * value)
{
  guint i, n = gst_value_array_get_size (value);

  p->n_sizes = 0;
  p->sizes_invalid = n > GST_SPDL_MAX_SIZES;
  for (i = 0; i < n && i < GST_SPDL_MAX_SIZES; i++) {
    GValue size = G_VALUE_INIT;
    gint64 v = 0;

    g_value_init (&size, G_TYPE_INT64);
    if (g_value_transform (gst_value_array_get_value (value, i), &size))
      v = g_value_get_int64 (&size);
    g_value_unset (&size);
    if (v < 1 || v > 65535)
      p->sizes_invalid = TRUE;
    else
      p->sizes[p->n_sizes++] = v;
  }
}

static void
sizes_to_value_array (GValue * value, const GstSpdlDecodeParams * p)
{
  GValue size = G_VALUE_INIT;
  guint i;

  /* gint: what Python's ints and gst-launch's <480,512> are */
  g_value_init (&size, G_TYPE_INT);
  for (i = 0; i < p->n_sizes; i++) {
    g_value_set_int (&size, p->sizes[i]);
    gst_value_array_append_value (value, &size);
  }
  g_value_unset (&size);
}

static void
gst_spdl_decode_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (object);
  GstSpdlDecodeParams *p = &self->params;

  if (gst_spdl_parallel_decoder_set_property (object, prop_id, value, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FORMAT:
      self->format = g_value_get_enum (value);
      break;
    case PROP_WIDTH:
      p->width = g_value_get_uint (value);
      break;
    case PROP_HEIGHT:
      p->height = g_value_get_uint (value);
      break;
    case PROP_MODE:
      p->mode = g_value_get_enum (value);
      break;
    case PROP_RESIZE_SHORTER:
      p->resize_shorter = g_value_get_uint (value);
      break;
    case PROP_MAX_SIZE:
      p->max_size = g_value_get_uint (value);
      break;
    case PROP_SIZES:
      sizes_from_value_array (p, value);
      break;
    case PROP_PAD_VALUE:
      p->pad_value = g_value_get_uint (value);
      break;
    case PROP_SCALE_MIN:
      p->scale_min = g_value_get_double (value);
      break;
    case PROP_SCALE_MAX:
      p->scale_max = g_value_get_double (value);
      break;
    case PROP_RATIO_MIN:
      p->ratio_min = g_value_get_double (value);
      break;
    case PROP_RATIO_MAX:
      p->ratio_max = g_value_get_double (value);
      break;
    case PROP_FLIP:
      p->flip = g_value_get_enum (value);
      break;
    case PROP_SEED:
      p->seed = g_value_get_uint64 (value);
      break;
    case PROP_MAX_PIXELS:
      p->max_pixels = g_value_get_uint64 (value);
      break;
    case PROP_MAX_OUTPUT_PIXELS:
      p->max_output_pixels = g_value_get_uint64 (value);
      break;
    case PROP_MAX_DECODE_MEMORY:
      self->max_decode_memory = g_value_get_uint64 (value);
      break;
    case PROP_MAX_SCANS:
      self->max_scans = g_value_get_uint (value);
      break;
    case PROP_DCT_SCALING:
      p->dct_scaling = g_value_get_boolean (value);
      break;
    case PROP_REGION_DECODE:
      p->region_decode = g_value_get_boolean (value);
      break;
    case PROP_EXACT:
      p->exact = g_value_get_boolean (value);
      break;
    case PROP_INSTANCE_MASKS:
      self->objects.masks = g_value_get_boolean (value);
      break;
    case PROP_BOX_MIN_SIZE:
      self->objects.min_size = g_value_get_double (value);
      break;
    case PROP_BOX_MIN_AREA:
      self->objects.min_area = g_value_get_double (value);
      break;
    case PROP_MAX_MASKS_SIZE:
      self->objects.max_masks_size = g_value_get_uint64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_spdl_decode_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (object);
  GstSpdlDecodeParams *p = &self->params;

  if (gst_spdl_parallel_decoder_get_property (object, prop_id, value, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FORMAT:
      g_value_set_enum (value, self->format);
      break;
    case PROP_WIDTH:
      g_value_set_uint (value, p->width);
      break;
    case PROP_HEIGHT:
      g_value_set_uint (value, p->height);
      break;
    case PROP_MODE:
      g_value_set_enum (value, p->mode);
      break;
    case PROP_RESIZE_SHORTER:
      g_value_set_uint (value, p->resize_shorter);
      break;
    case PROP_MAX_SIZE:
      g_value_set_uint (value, p->max_size);
      break;
    case PROP_SIZES:
      sizes_to_value_array (value, p);
      break;
    case PROP_PAD_VALUE:
      g_value_set_uint (value, p->pad_value);
      break;
    case PROP_SCALE_MIN:
      g_value_set_double (value, p->scale_min);
      break;
    case PROP_SCALE_MAX:
      g_value_set_double (value, p->scale_max);
      break;
    case PROP_RATIO_MIN:
      g_value_set_double (value, p->ratio_min);
      break;
    case PROP_RATIO_MAX:
      g_value_set_double (value, p->ratio_max);
      break;
    case PROP_FLIP:
      g_value_set_enum (value, p->flip);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, p->seed);
      break;
    case PROP_MAX_PIXELS:
      g_value_set_uint64 (value, p->max_pixels);
      break;
    case PROP_MAX_OUTPUT_PIXELS:
      g_value_set_uint64 (value, p->max_output_pixels);
      break;
    case PROP_MAX_DECODE_MEMORY:
      g_value_set_uint64 (value, self->max_decode_memory);
      break;
    case PROP_MAX_SCANS:
      g_value_set_uint (value, self->max_scans);
      break;
    case PROP_DCT_SCALING:
      g_value_set_boolean (value, p->dct_scaling);
      break;
    case PROP_REGION_DECODE:
      g_value_set_boolean (value, p->region_decode);
      break;
    case PROP_EXACT:
      g_value_set_boolean (value, p->exact);
      break;
    case PROP_INSTANCE_MASKS:
      g_value_set_boolean (value, self->objects.masks);
      break;
    case PROP_BOX_MIN_SIZE:
      g_value_set_double (value, self->objects.min_size);
      break;
    case PROP_BOX_MIN_AREA:
      g_value_set_double (value, self->objects.min_area);
      break;
    case PROP_MAX_MASKS_SIZE:
      g_value_set_uint64 (value, self->objects.max_masks_size);
      break;
    case PROP_OBJECT_COUNTS:{
      GstStructure *counts = gst_structure_new_empty ("object-counts");
      guint r;

      for (r = 0; r < GST_SPDL_OBJECTS_N_REASONS; r++)
        gst_structure_set (counts, gst_spdl_objects_reason_name (r),
            G_TYPE_UINT64, self->object_counts[r], NULL);
      g_value_take_boxed (value, counts);
      break;
    }
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                     */

static void
fields_free (GstSpdlDecodeFields * fields)
{
  gst_spdl_record_free (fields->record);
  g_free (fields->text);
  g_free (fields);
}

static void
gst_spdl_decode_clear_job (GstSpdlParallelDecoder * base,
    GstSpdlParallelDecoderJob * job)
{
  GstSpdlDecodeJob *decode_job = (GstSpdlDecodeJob *) job;

  gst_clear_buffer (&decode_job->output);
  g_clear_error (&decode_job->filled);
  if (decode_job->objects_notes)
    g_string_free (decode_job->objects_notes, TRUE);
  decode_job->objects_notes = NULL;
  memset (decode_job->object_counts, 0, sizeof (decode_job->object_counts));
}

static gboolean
fixed_size (const GstSpdlDecodeParams * p)
{
  /* center-crop with only resize-shorter keeps the aspect: varies */
  return p->width != 0 && p->height != 0 && p->mode != GST_SPDL_RESIZE_SHORTER;
}

static GstBuffer *
allocate_output (GstSpdlDecode * self, const GstVideoInfo * info)
{
  GstBufferPool *pool = GST_VIDEO_INFO_FORMAT (info) == GST_VIDEO_FORMAT_RGBP ?
      self->planar_pool : self->pool;
  GstBuffer *out = NULL;

  /* the pools hold the fixed output size only */
  if (pool && (guint) GST_VIDEO_INFO_WIDTH (info) == self->active.width &&
      (guint) GST_VIDEO_INFO_HEIGHT (info) == self->active.height &&
      gst_buffer_pool_acquire_buffer (pool, &out, NULL) == GST_FLOW_OK)
    return out;
  /* the size follows the image: never GLib's aborting allocator */
  return gst_spdl_buffer_try_new (GST_VIDEO_INFO_SIZE (info));
}

static gboolean
decode_failed (GError ** error, gint code, const gchar * message,
    const GstSpdlGeometry * geom)
{
  g_set_error (error, GST_SPDL_DECODE_ERROR, code, "%s for a %ux%u output",
      message, geom->out_width, geom->out_height);
  return FALSE;
}

/* Decodes the opened image into a new output buffer. */
static gboolean
decode_output (GstSpdlDecode * self, GstSpdlImageDecoder * dec,
    GstSpdlDecodeJob * job, const GstSpdlGeometry * geom)
{
  const GstSpdlDecodeParams *p = &self->active;
  GstVideoInfo info;
  GstVideoFrame frame;
  GstSpdlOutput out = { {NULL}, {0}, 0, FALSE };
  GstVideoMeta *meta;
  guint i;
  gboolean ok;

  if (!gst_spdl_geometry_check_output (geom, p, &job->parent.error))
    return FALSE;
  /* fails past 2^31 bytes, whatever max-output-pixels says */
  if (!gst_video_info_set_format (&info, job->format, geom->out_width,
          geom->out_height))
    return decode_failed (&job->parent.error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "no video frame can be described", geom);
  job->width = geom->out_width;
  job->height = geom->out_height;
  /* a downstream buffer acquired in order (a batch slot) if it fits */
  meta = job->output ? gst_buffer_get_video_meta (job->output) : NULL;
  if (job->output && (meta == NULL || meta->width != job->width ||
          meta->height != job->height))
    gst_clear_buffer (&job->output);
  if (job->output == NULL) {
    job->output = allocate_output (self, &info);
    out.zero_padding = TRUE;
  }
  if (job->output == NULL)
    return decode_failed (&job->parent.error, GST_SPDL_DECODE_ERROR_TOO_LARGE,
        "out of memory", geom);
  /* honours the buffer's GstVideoMeta (strides, plane offsets) */
  if (!gst_video_frame_map (&frame, &info, job->output, GST_MAP_WRITE)) {
    gst_clear_buffer (&job->output);
    return decode_failed (&job->parent.error, GST_SPDL_DECODE_ERROR_UNSUPPORTED,
        "could not map the output memory", geom);
  }
  out.n_planes = GST_VIDEO_FRAME_N_PLANES (&frame);
  for (i = 0; i < out.n_planes; i++) {
    out.data[i] = GST_VIDEO_FRAME_PLANE_DATA (&frame, i);
    out.stride[i] = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, i);
  }
  ok = gst_spdl_image_decoder_decode_to (dec, p, geom, &out, &job->parent.error);
  /* the resampler leaves zeros where no image is */
  if (ok && p->mode == GST_SPDL_RESIZE_LETTERBOX && p->pad_value)
    gst_spdl_geometry_fill_padding (geom, out.data, out.stride, out.n_planes,
        out.n_planes == 1 ? GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, 0) : 1,
        p->pad_value);
  gst_video_frame_unmap (&frame);
  /* recovered: every pixel is written, delivered or skipped when pushed */
  if (!ok && gst_spdl_error_is_recovered (job->parent.error))
    return TRUE;
  if (!ok)
    gst_clear_buffer (&job->output);
  return ok;
}

/* After the media image, on its thread: the geometry it went through on
 * the sample meta, and the record's images and labels through it. */
static void
decode_fields (GstSpdlDecode * self, GstSpdlImageDecoder * dec,
    GstSpdlDecodeJob * job, const GstSpdlGeometry * geom, guint width,
    guint height)
{
  GstSpdlSampleGeometry sample;
  GstSpdlFieldTarget target = { &self->active, geom, width, height,
    self->active.max_pixels
  };
  GError *error = NULL;
  guint bad = 0;

  gst_spdl_geometry_to_sample (geom, width, height, &sample);
  gst_spdl_buffer_set_sample_geometry (job->output, &sample);
  if (job->fields == NULL)
    return;
  if (gst_spdl_record_decode_images (job->output, job->fields->record, dec,
          &target, &bad, &job->filled, &error) &&
      gst_spdl_record_decode_objects (job->output, job->fields->record,
          &target, &self->active_objects, job->object_counts,
          &job->objects_notes, &bad, &job->filled, &error))
    return;
  /* the field's error, rather than a recovered media image's */
  g_clear_error (&job->parent.error);
  job->parent.error = error;
  if (job->fields->record->fields[bad].missing == GST_SPDL_MISSING_ERROR)
    job->parent.fatal = FATAL_FIELD;
  gst_clear_buffer (&job->output);
}

/* Runs in a worker: decodes one sample into a new output buffer. */
static void
decode_job (GstSpdlDecode * self, GstSpdlImageDecoder * dec,
    GstSpdlDecodeJob * job)
{
  const GstSpdlDecodeParams *p = &self->active;
  GstSpdlGeometry geom;
  GstMapInfo in;
  guint iw, ih;
  gboolean ok;

  if (!gst_buffer_map (job->parent.input, &in, GST_MAP_READ)) {
    job->parent.error = g_error_new (GST_SPDL_DECODE_ERROR,
        GST_SPDL_DECODE_ERROR_UNSUPPORTED, "could not map the input memory");
    return;
  }
  ok = gst_spdl_image_decoder_open (dec, in.data, in.size, p->max_pixels,
      &iw, &ih, &job->parent.error) &&
      gst_spdl_geometry_compute (&geom, p, iw, ih, job->parent.epoch, job->parent.index) &&
      decode_output (self, dec, job, &geom);
  gst_buffer_unmap (job->parent.input, &in);
  if (!ok && job->parent.error == NULL)
    job->parent.error = g_error_new (GST_SPDL_DECODE_ERROR,
        GST_SPDL_DECODE_ERROR_CORRUPT, "the image has no pixels");
  if (!ok)
    return;
  gst_buffer_copy_into (job->output, job->parent.input, GST_BUFFER_COPY_FLAGS |
      GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
  if (gst_spdl_buffer_copy_sample_meta (job->output, job->parent.input))
    decode_fields (self, dec, job, &geom, iw, ih);
  if (job->output)
    job->parent.outputs = g_list_append (NULL, g_steal_pointer (&job->output));
}

/* Runs in a pool thread: decodes one sample with the thread's decoder. */
static void
gst_spdl_decode_decode (GstSpdlParallelDecoder * base, gpointer state,
    GstSpdlParallelDecoderJob * job)
{
  decode_job (GST_SPDL_DECODE (base), state, (GstSpdlDecodeJob *) job);
}

static GstCaps *output_caps (GstVideoFormat format, guint width,
    guint height);

/* A pool of @format outputs of the fixed size, or NULL. Its buffers are
 * made as samples need them (none while downstream provides buffers) and
 * kept for reuse. */
static GstBufferPool *
make_pool (GstSpdlDecode * self, GstVideoFormat format)
{
  GstBufferPool *pool = gst_buffer_pool_new ();
  GstCaps *caps = output_caps (format, self->active.width,
      self->active.height);
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstVideoInfo info;

  if (!gst_video_info_from_caps (&info, caps)) {
    gst_structure_free (config);
    gst_caps_unref (caps);
    gst_object_unref (pool);
    return NULL;
  }
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&info),
      0, 0);
  gst_caps_unref (caps);
  if (!gst_buffer_pool_set_config (pool, config) ||
      !gst_buffer_pool_set_active (pool, TRUE))
    gst_clear_object (&pool);
  return pool;
}

/* Fixed-size outputs come from pools, made before the workers start so
 * they only ever read them: packed (RGB or GRAY8) and planar RGB, the
 * format downstream picks. */
static void
setup_pool (GstSpdlDecode * self)
{
  if (!fixed_size (&self->active))
    return;
  self->pool = make_pool (self, self->gray ? GST_VIDEO_FORMAT_GRAY8 :
      GST_VIDEO_FORMAT_RGB);
  if (!self->gray)
    self->planar_pool = make_pool (self, GST_VIDEO_FORMAT_RGBP);
}

static void reset_negotiation (GstSpdlDecode * self);

/* The properties of this run, before the threads start. */
static gboolean
gst_spdl_decode_start (GstSpdlParallelDecoder * base)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (base);
  gchar *wrong;

  GST_OBJECT_LOCK (self);
  self->active = self->params;
  self->gray = self->format == GST_SPDL_DECODE_FORMAT_GRAY8;
  self->active.gray = self->gray;
  self->active_max_decode_memory = self->max_decode_memory;
  self->active_max_scans = self->max_scans;
  self->active_objects = self->objects;
  memset (self->object_counts, 0, sizeof (self->object_counts));
  GST_OBJECT_UNLOCK (self);
  wrong = self->active.sizes_invalid ? g_strdup_printf ("sizes takes at "
      "most %d sizes, integers from 1 to 65535", GST_SPDL_MAX_SIZES) :
      gst_spdl_decode_params_check (&self->active);
  if (wrong) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("%s", wrong), (NULL));
    g_free (wrong);
    return FALSE;
  }
  setup_pool (self);
  reset_negotiation (self);
  return TRUE;
}

/* a decoder per thread: libjpeg's state and scratch rows are reused */
static gpointer
gst_spdl_decode_create_state (GstSpdlParallelDecoder * base)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (base);
  GstSpdlImageDecoder *dec = gst_spdl_image_decoder_new ();

  gst_spdl_image_decoder_set_limits (dec, self->active_max_decode_memory,
      self->active_max_scans);
  return dec;
}

static void
gst_spdl_decode_free_state (GstSpdlParallelDecoder * base, gpointer state)
{
  gst_spdl_image_decoder_free (state);
}

static void reset_output (GstSpdlDecode * self);

static void
gst_spdl_decode_stop (GstSpdlParallelDecoder * base)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (base);

  /* no job points to them any more */
  g_list_free_full (self->fields_seen, (GDestroyNotify) fields_free);
  self->fields_seen = NULL;
  self->fields = NULL;
  reset_output (self);
}

/* ------------------------------------------------------------------------ */
/* Sink side                                                                */

/* Packed or planar RGB, as downstream prefers (asked again after a
 * RECONFIGURE); GRAY8 is GRAY8. */
static GstVideoFormat
query_format (GstSpdlDecode * self)
{
  GstCaps *peer, *ours, *caps;
  GstVideoFormat format = GST_VIDEO_FORMAT_RGB;

  if (self->gray)
    return GST_VIDEO_FORMAT_GRAY8;
  peer = gst_pad_peer_query_caps (gst_spdl_parallel_decoder_get_srcpad
      (GST_SPDL_PARALLEL_DECODER (self)), NULL);
  ours = gst_caps_from_string ("video/x-raw, format=(string){ RGB, RGBP }");
  /* downstream's order first */
  caps = gst_caps_intersect_full (peer, ours, GST_CAPS_INTERSECT_FIRST);
  if (!gst_caps_is_empty (caps)) {
    const gchar *name;
    caps = gst_caps_fixate (caps);
    name = gst_structure_get_string (gst_caps_get_structure (caps, 0),
        "format");
    if (name)
      format = gst_video_format_from_string (name);
  }
  gst_caps_unref (caps);
  gst_caps_unref (ours);
  gst_caps_unref (peer);
  GST_DEBUG_OBJECT (self, "output format %s",
      gst_video_format_to_string (format));
  return format;
}

static GstVideoFormat
chain_format (GstSpdlDecode * self)
{
  GstVideoFormat format;
  gboolean ask;

  g_mutex_lock (&self->lock);
  ask = self->need_format;
  self->need_format = FALSE;
  format = self->out_format;
  g_mutex_unlock (&self->lock);
  if (!ask)
    return format;
  format = query_format (self);
  g_mutex_lock (&self->lock);
  self->out_format = format;
  g_mutex_unlock (&self->lock);
  return format;
}

/* A buffer of downstream's pool for the next sample, when its buffers have
 * the size and format every output has. */
static GstBuffer *
acquire_slot (GstSpdlDecode * self, GstVideoFormat format)
{
  GstBufferPool *pool = NULL;
  GstBuffer *buffer = NULL;

  g_mutex_lock (&self->lock);
  if (self->out_pool && self->out_pool_format == format)
    pool = gst_object_ref (self->out_pool);
  g_mutex_unlock (&self->lock);
  if (pool == NULL)
    return NULL;
  /* refused (flushing, a pool downstream let go): our own buffer then */
  if (gst_buffer_pool_acquire_buffer (pool, &buffer, NULL) != GST_FLOW_OK)
    buffer = NULL;
  gst_object_unref (pool);
  return buffer;
}

/* a chain waiting for a downstream buffer returns */
static void
gst_spdl_decode_set_flushing (GstSpdlParallelDecoder * base,
    gboolean flushing)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (base);
  GstBufferPool *pool = NULL;

  g_mutex_lock (&self->lock);
  if (self->out_pool)
    pool = gst_object_ref (self->out_pool);
  g_mutex_unlock (&self->lock);
  if (pool) {
    gst_buffer_pool_set_flushing (pool, flushing);
    gst_object_unref (pool);
  }
}


/* The stream thread, before the sample is queued. */
static void
gst_spdl_decode_prepare_job (GstSpdlParallelDecoder * base,
    GstSpdlParallelDecoderJob * job)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (base);
  GstSpdlDecodeJob *decode_job = (GstSpdlDecodeJob *) job;

  decode_job->fields = self->fields;
  decode_job->format = chain_format (self);
  /* output slots are taken in input order: sample k of a batch fills
   * slot k, whichever worker decodes it */
  decode_job->output = acquire_slot (self, decode_job->format);
}

/* The record of the samples that follow, from the caps' "fields"; the
 * stream thread's, as the samples it tags. */
static gboolean
gst_spdl_decode_set_sink_caps (GstSpdlParallelDecoder * base, GstCaps * caps)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (base);
  const gchar *text = gst_structure_get_string (gst_caps_get_structure (caps,
          0), "fields");
  GstSpdlDecodeFields *fields;
  GError *error = NULL;
  GstSpdlRecord *record;

  if (text == NULL || *text == '\0') {
    self->fields = NULL;
    return TRUE;
  }
  fields = self->fields;
  if (fields && strcmp (fields->text, text) == 0)
    return TRUE;
  record = gst_spdl_record_parse (text, GST_SPDL_MISSING_SKIP, &error);
  if (record == NULL) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Invalid fields in the input caps: %s", error->message),
        ("fields=\"%s\"", text));
    g_clear_error (&error);
    return FALSE;
  }
  fields = g_new0 (GstSpdlDecodeFields, 1);
  fields->record = record;
  fields->text = g_strdup (text);
  self->fields_seen = g_list_prepend (self->fields_seen, fields);
  self->fields = fields;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Source side                                                              */

static GstCaps *
output_caps (GstVideoFormat format, guint width, guint height)
{
  GstVideoInfo info;

  gst_video_info_set_format (&info, format, width, height);
  /* still images */
  GST_VIDEO_INFO_FPS_N (&info) = 0;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  return gst_video_info_to_caps (&info);
}

/* Uses downstream's @pool for outputs of @format (or none). */
static void
set_out_pool (GstSpdlDecode * self, GstBufferPool * pool,
    GstVideoFormat format)
{
  GstBufferPool *old;

  g_mutex_lock (&self->lock);
  old = self->out_pool;
  self->out_pool = pool;
  self->out_pool_format = format;
  g_mutex_unlock (&self->lock);
  if (old && old != pool)
    gst_buffer_pool_set_active (old, FALSE);
  if (old)
    gst_object_unref (old);
}

static gboolean
configure_pool (GstBufferPool * pool, GstCaps * caps, guint size, guint min,
    guint max)
{
  GstStructure *config;

  /* ours already, from the previous query */
  if (gst_buffer_pool_is_active (pool))
    return TRUE;
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, size, min, max);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config)) {
    /* the pool's counter-proposal, if it still fits */
    config = gst_buffer_pool_get_config (pool);
    if (!gst_buffer_pool_config_validate_params (config, caps, size, min,
            max) || !gst_buffer_pool_set_config (pool, config))
      return FALSE;
  }
  return gst_buffer_pool_set_active (pool, TRUE);
}

/* Downstream's pool when it offers one whose buffers carry a GstVideoMeta
 * (spdlbatch's batch slots), every output has the caps' size and outputs
 * keep input order;
 * otherwise our own buffers, as a video decoder's decide_allocation. */
static void
decide_allocation (GstSpdlDecode * self, GstCaps * caps)
{
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool = NULL;
  GstVideoInfo info;
  guint size, min, max;
  GstPad *srcpad =
      gst_spdl_parallel_decoder_get_srcpad (GST_SPDL_PARALLEL_DECODER (self));

  /* unordered outputs would land in the wrong slots */
  if (gst_spdl_parallel_decoder_is_ordered (GST_SPDL_PARALLEL_DECODER (self))
      && fixed_size (&self->active) &&
      gst_video_info_from_caps (&info, caps) &&
      gst_pad_peer_query (srcpad, query) &&
      gst_query_get_n_allocation_pools (query) > 0 &&
      gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL)) {
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
    if (pool && !configure_pool (pool, caps, MAX (size, info.size), min,
            max)) {
      GST_INFO_OBJECT (self, "downstream's pool refused our config");
      gst_clear_object (&pool);
    }
  }
  gst_query_unref (query);
  GST_INFO_OBJECT (self, "decoding into %" GST_PTR_FORMAT,
      pool ? (GstObject *) pool : NULL);
  set_out_pool (self, pool, pool ? GST_VIDEO_INFO_FORMAT (&info) :
      GST_VIDEO_FORMAT_UNKNOWN);
}

static gboolean
gst_spdl_decode_src_query (GstSpdlParallelDecoder * base, GstQuery * query)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (base);
  GstPad *pad = gst_spdl_parallel_decoder_get_srcpad (base);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS) {
    GstCaps *filter, *caps = gst_pad_get_current_caps (pad);
    GstSpdlDecodeParams p;
    gboolean gray;

    if (caps == NULL) {
      GST_OBJECT_LOCK (self);
      p = self->params;
      gray = self->format == GST_SPDL_DECODE_FORMAT_GRAY8;
      GST_OBJECT_UNLOCK (self);
      caps = gst_caps_from_string (gray ? "video/x-raw, format=GRAY8" :
          "video/x-raw, format=(string){ RGB, RGBP }");
      if (fixed_size (&p))
        gst_caps_set_simple (caps, "width", G_TYPE_INT, p.width,
            "height", G_TYPE_INT, p.height, NULL);
    }
    gst_query_parse_caps (query, &filter);
    if (filter) {
      GstCaps *tmp = gst_caps_intersect_full (filter, caps,
          GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref (caps);
      caps = tmp;
    }
    gst_query_set_caps_result (query, caps);
    gst_caps_unref (caps);
    return TRUE;
  }
  return gst_pad_query_default (pad, GST_OBJECT (self), query);
}

/* Our caps go out before the first sample of each size; sticky events
 * that must follow caps (segment, tags) are held until then. */
static void
post_not_accepted (GstSpdlDecode * self, GstVideoFormat format, guint width,
    guint height)
{
  GstCaps *caps = output_caps (format, width, height);

  GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
      ("Downstream does not accept %ux%u %s images", width, height,
          gst_video_format_to_string (format)),
      ("downstream refused %" GST_PTR_FORMAT, caps));
  gst_caps_unref (caps);
}

static gboolean
ensure_caps (GstSpdlDecode * self, GstVideoFormat format, guint width,
    guint height, const gchar * fields)
{
  GstSpdlParallelDecoder *base = GST_SPDL_PARALLEL_DECODER (self);
  GstPad *srcpad = gst_spdl_parallel_decoder_get_srcpad (base);
  gboolean caps_sent = gst_spdl_parallel_decoder_has_output_caps (base);
  GstCaps *caps;
  gboolean ok;

  /* downstream asked: its caps again (chain) and its pool again (here) */
  if (gst_pad_check_reconfigure (srcpad)) {
    g_mutex_lock (&self->lock);
    self->need_format = TRUE;
    g_mutex_unlock (&self->lock);
    if (caps_sent && (caps = gst_pad_get_current_caps (srcpad))) {
      decide_allocation (self, caps);
      gst_caps_unref (caps);
    }
  }
  if (caps_sent && width == self->caps_width &&
      height == self->caps_height && format == self->caps_format &&
      g_strcmp0 (fields, self->caps_fields) == 0)
    return TRUE;
  caps = output_caps (format, width, height);
  /* the record's description, from the sink caps to ours; spdlbatch
   * takes the objects' masks from it */
  if (fields)
    gst_caps_set_simple (caps, "fields", G_TYPE_STRING, fields, NULL);
  if (fields && strstr (fields, ":objects:"))
    gst_caps_set_simple (caps, "instance-masks", G_TYPE_BOOLEAN,
        self->active_objects.masks, NULL);
  ok = gst_pad_push_event (srcpad, gst_event_new_caps (caps));
  if (ok)
    decide_allocation (self, caps);
  gst_caps_unref (caps);
  if (!ok)
    return FALSE;
  /* source task only: no lock */
  self->caps_width = width;
  self->caps_height = height;
  self->caps_format = format;
  g_free (self->caps_fields);
  self->caps_fields = g_strdup (fields);
  gst_spdl_parallel_decoder_caps_sent (base);
  return TRUE;
}


/* A bad field made zeros (its policy is empty): warned as skips are,
 * the sample delivered. */
static void
warn_filled (GstSpdlDecode * self, GstSpdlDecodeJob * job)
{
  const gchar *path = gst_spdl_buffer_get_path (job->parent.input);

  if (gst_spdl_parallel_decoder_count_warning (GST_SPDL_PARALLEL_DECODER
          (self), job->parent.epoch))
    GST_ELEMENT_WARNING (self, STREAM, DECODE,
        ("Sample \"%s\": %s", path, job->filled->message),
        ("reason: %s",
            gst_spdl_decode_error_reason (GST_SPDL_DECODE_ERROR_BAD_FIELD)));
  else
    GST_WARNING_OBJECT (self, "Sample \"%s\": %s", path,
        job->filled->message);
}

/* The annotations of the sample's objects fields: counted, and warned
 * about where one was dropped or odd (the sample is delivered). */
static void
count_objects (GstSpdlDecode * self, GstSpdlDecodeJob * job)
{
  const gchar *path = gst_spdl_buffer_get_path (job->parent.input);
  guint r;

  GST_OBJECT_LOCK (self);
  for (r = 0; r < GST_SPDL_OBJECTS_N_REASONS; r++)
    self->object_counts[r] += job->object_counts[r];
  GST_OBJECT_UNLOCK (self);
  if (job->objects_notes == NULL)
    return;
  if (gst_spdl_parallel_decoder_count_warning (GST_SPDL_PARALLEL_DECODER
          (self), job->parent.epoch))
    GST_ELEMENT_WARNING (self, STREAM, DECODE,
        ("Sample \"%s\": %s", path, job->objects_notes->str),
        ("annotations dropped or kept as they are; object-counts has them "
            "by reason"));
  else
    GST_WARNING_OBJECT (self, "Sample \"%s\": %s", path,
        job->objects_notes->str);
}

static void
gst_spdl_decode_post_fatal (GstSpdlParallelDecoder * base,
    GstSpdlParallelDecoderJob * job)
{
  GST_ELEMENT_ERROR (base, STREAM, DECODE,
      ("Bad sample \"%s\": %s", gst_spdl_buffer_get_path (job->input),
          job->error->message),
      ("reason: %s; %s", gst_spdl_decode_error_reason
          (GST_SPDL_DECODE_ERROR_BAD_FIELD), job->fatal));
}

/* The source task: the sample's caps (with the record it was decoded
 * under) and allocation, then the sample. */
static GstFlowReturn
gst_spdl_decode_push_output (GstSpdlParallelDecoder * base,
    GstSpdlParallelDecoderJob * job, GstBuffer * output)
{
  GstSpdlDecode *self = GST_SPDL_DECODE (base);
  GstSpdlDecodeJob *decode_job = (GstSpdlDecodeJob *) job;
  GstFlowReturn ret = GST_FLOW_NOT_NEGOTIATED;

  if (decode_job->filled)
    warn_filled (self, decode_job);
  count_objects (self, decode_job);
  if (ensure_caps (self, decode_job->format, decode_job->width,
          decode_job->height, decode_job->fields ?
          decode_job->fields->text : NULL))
    ret = gst_pad_push (gst_spdl_parallel_decoder_get_srcpad (base), output);
  else
    gst_buffer_unref (output);
  /* a refused sticky caps event shows at the next push */
  if (ret == GST_FLOW_NOT_NEGOTIATED) {
    post_not_accepted (self, decode_job->format, decode_job->width,
        decode_job->height);
    gst_spdl_parallel_decoder_forget_caps (base);
    ret = GST_FLOW_ERROR;
  }
  return ret;
}

static void
reset_negotiation (GstSpdlDecode * self)
{
  g_mutex_lock (&self->lock);
  self->need_format = TRUE;
  self->out_format = self->gray ? GST_VIDEO_FORMAT_GRAY8 :
      GST_VIDEO_FORMAT_RGB;
  g_mutex_unlock (&self->lock);
}

static void
reset_output (GstSpdlDecode * self)
{
  set_out_pool (self, NULL, GST_VIDEO_FORMAT_UNKNOWN);
  if (self->pool) {
    gst_buffer_pool_set_active (self->pool, FALSE);
    gst_clear_object (&self->pool);
  }
  if (self->planar_pool) {
    gst_buffer_pool_set_active (self->planar_pool, FALSE);
    gst_clear_object (&self->planar_pool);
  }
  self->caps_width = self->caps_height = 0;
  g_clear_pointer (&self->caps_fields, g_free);
}
