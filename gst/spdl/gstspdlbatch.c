/* GStreamer SPDL plugin: batch collation
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/**
 * SECTION:element-spdlbatch
 * @title: spdlbatch
 *
 * Collates fixed-size images and their labels into one tensor batch in
 * NNStreamer's `other/tensors` caps convention: tensor 0 holds the images
 * (uint8, N x H x W x C by default, or N x C x H x W with
 * #GstSpdlBatch:layout=nchw), tensor 1 the labels (int64, N), each in its own
 * #GstMemory. A #GstCustomMeta named "GstSpdlBatchMeta" lists the dataset
 * indices of the batch's samples.
 *
 * With #GstSpdlBatch:dtype float32, float16 or bfloat16 the images are
 * normalized in the same copy, as torchvision's
 * `Normalize(mean, std)(ToTensor()(img))`: each value is
 * `(x / 255 - mean[c]) / std[c]` (#GstSpdlBatch:mean, #GstSpdlBatch:std; by
 * default 0 and 1, i.e. x / 255). The caps' types name the element type
 * (NNStreamer's float32 and float16; `bfloat16`, which NNStreamer lacks).
 *
 * A batch never mixes epochs: the last batch of an epoch is smaller (and its
 * caps say so) unless #GstSpdlBatch:drop-last is set, and the epoch-end
 * event passes downstream after it.
 *
 * When spdlsrc composes the batches (its buckets or batch-duration: batches
 * of utterances of similar duration), spdlbatch cuts a batch after the
 * sample spdlsrc marks as its last ("batch-end"; of a file's clips, the
 * last clip), or before a sample of another of spdlsrc's batches (the
 * marked one was skipped), so a batch never mixes buckets; batch-size is
 * then the most a batch holds, and an epoch whose batches hold more
 * (spdlsrc's epoch-start "max-batch") is an error at its start naming
 * both sizes: splitting them would change the epoch's batch count that
 * spdlsrc's num-batches announced. drop-last drops none of them (they
 * are whole as spdlsrc cut them; its drop-uneven is the rank rule). On
 * several ranks, pad-short-epochs counts batches: a rank left short by a
 * batch whose every sample was skipped pushes copies of its last batch
 * (all slots "padded") until it has the epoch-start event's "batches".
 * The batch meta adds "resume-epoch" and "resume-offset" (spdlsrc's
 * start-epoch and start-offset after this batch; (next epoch, 0) on the
 * padded copies).
 *
 * Batch memory comes from the allocator that downstream proposes in the
 * ALLOCATION query (pinned host memory from spdlcudaupload, say), through a
 * pool, so steady state allocates nothing per batch.
 *
 * With dtype uint8, spdlbatch answers upstream's ALLOCATION query with a
 * pool whose buffers are the slots of the batch it will fill (with a
 * #GstVideoMeta; RGBP planes for layout=nchw, whose sink caps prefer RGBP):
 * spdldecode decodes into them and spdlbatch copies nothing for a sample
 * that arrives in its slot. Samples that do not (skipped samples before
 * them, an epoch's end, another upstream) are copied, and the pool moves
 * its next batch boundary so later batches line up again. Float dtypes
 * normalize in the copy, as before: a uint8 slot cannot hold the floats.
 * The stats' "copied" and "in-place" count both kinds.
 *
 * Video clips from spdlvideodecode (one uint8 tensor each) are batched in
 * the clip's own layout with the batch dimension outside: `[B, T, 3, H, W]`
 * for its layout tchw, `[B, 3, T, H, W]` for cthw, `[B, T, H, W, 3]` for
 * thwc (#GstSpdlBatch:layout and the float dtypes apply to images only);
 * tensor 2 holds each frame's presentation time in seconds (float64,
 * `[B, T]`) and the batch meta's "clips" each slot's clip number in its
 * video. Clips of different shapes in one batch are an error naming both.
 * Clips with audio (spdlvideodecode audio=true: a second tensor, float32
 * `[C, N]`) add tensor 3, the audio (float32 `[B, C, N]`), and tensor 4,
 * uint8 `[B]`: 1 where the clip's video has audio, 0 where its audio is
 * silence.
 * |[
 * gst-launch-1.0 spdlsrc location=/data/k400/train \
 *     extensions=mp4,mkv,webm,mov,avi ! spdlvideodecode frames=16 \
 *     stride=2 resize=128 size=112 ! spdlbatch batch-size=8 ! fakesink
 * ]|
 *
 * Audio clips from spdlaudiodecode (float32 `[C, N]` each) are batched as
 * float32 `[B, C, N]`, with tensor 2 each clip's start in its file in
 * seconds (float64, `[B]`) and tensor 3 its length in samples from the
 * file (int64, `[B]`; the rest of its row is zeros). Clips of different
 * lengths (whole files or a manifest's spans: spdlaudiodecode duration=0)
 * are padded with zeros to the longest of their batch, tensor 3 holding
 * each one's own length (a span's samples); clips of different channel
 * counts in one batch are an error naming both.
 * |[
 * gst-launch-1.0 spdlsrc location=/data/speech/train \
 *     extensions=wav,flac,mp3,ogg,opus,m4a ! spdlaudiodecode \
 *     sample-rate=16000 duration=1.0 ! spdlbatch batch-size=32 ! fakesink
 * ]|
 *
 * ## Images of different sizes
 *
 * With #GstSpdlBatch:pad-multiple N (spdldecode mode=shorter, say), the
 * images of one batch may differ in size: each goes top-left into the
 * batch's `H x W`, its largest height and width rounded up to a multiple
 * of N, with zeros around it (the zero of the dtype, after any
 * normalization: torchvision's GeneralizedRCNNTransform.batch_images with
 * size_divisible=N). Tensor 2 is `image-sizes`, int64 `[B, 2]` (each
 * image's height and width before padding), tensor 3 `padding-mask`,
 * uint8 `[B, H, W]` (1 where padding, as DETR's mask); image and label
 * fields are padded the same way. H and W change from batch to batch:
 * each batch whose size differs from the last's is preceded by new caps
 * (as a smaller last batch is), so an appsink or NNStreamer reader reads
 * every batch's shape from its sample's caps; the caps name the tensors
 * ("names"). Images are copied into the batch (decoders cannot write
 * into slots whose size is known only when the batch ends).
 * |[
 * gst-launch-1.0 spdlsrc location=/data/coco/train2017 ! spdldecode \
 *     mode=shorter resize-shorter=800 max-size=1333 ! spdlbatch \
 *     batch-size=8 pad-multiple=32 ! fakesink
 * ]|
 *
 * ## Fields
 *
 * Samples that carry fields beside their media (spdlsrc's fields; a
 * record described by the sink caps' "fields", docs/record.md) add, after
 * the media's tensors and per field in record order: int64 `[B]` (int),
 * float64 `[B]` (float), `NAME/values` uint8 `[n]` and `NAME/offsets`
 * int64 `[B+1]` (string, json, bytes: sample i is
 * `values[offsets[i]:offsets[i+1]]`), `NAME/values` in the arrays' dtype,
 * `NAME/offsets` (in elements) and `NAME/shapes` int64 `[B, 8]` (npy),
 * uint8 `[B, H, W, 3]` (image; `[B, 3, H, W]` with layout=nchw) and uint8
 * or uint16 `[B, H, W]` (label), and for objects (spdldecode's detection
 * targets) `NAME/boxes` float32 `[n, 4]` (XYXY pixels), `NAME/offsets`
 * int64 `[B+1]` (image i has objects `offsets[i]` to `offsets[i+1]`),
 * `NAME/labels` int64 `[n]`, `NAME/area` float32 `[n]`, `NAME/iscrowd`
 * int64 `[n]` and, when spdldecode's caps say instance-masks,
 * `NAME/masks` uint8 `[n, H, W]` at the images tensor's H and W (each
 * sample's masks top left, zeros beyond its own size). The caps name
 * every tensor ("names") and keep the record's "fields"; a `NAME/values`
 * or objects tensor has 0 as its outermost dimension there, its memory's
 * size gives its length. The
 * batch meta adds each slot's "crop", "flipped" and "source-size" when the
 * decoder set them. Images, video clips and audio batches take fields the
 * same way; padded slots copy them. A batch holds at most 16 tensors; npy
 * arrays of different dtypes, or images or label maps of different sizes,
 * in one batch are an error naming both samples.
 * |[
 * gst-launch-1.0 spdlsrc location=/data/captions/train-{000000..000009}.tar \
 *     fields=txt,json ! spdldecode width=224 height=224 ! \
 *     spdlbatch batch-size=64 ! fakesink
 * ]|
 *
 * Images can come from spdldecode or from any decoder chain:
 * |[
 * gst-launch-1.0 spdlsrc location=/data/train ! spdldecode width=224 \
 *     height=224 mode=random-resized-crop ! spdlbatch batch-size=256 ! \
 *     fakesink
 * ]|
 * |[
 * gst-launch-1.0 spdlsrc location=/data/train ! spdldecode width=224 \
 *     height=224 ! spdlbatch batch-size=256 layout=nchw dtype=bfloat16 \
 *     mean="<0.485,0.456,0.406>" std="<0.229,0.224,0.225>" ! fakesink
 * ]|
 * |[
 * gst-launch-1.0 multifilesrc location=img%05d.png ! decodebin ! \
 *     videoconvert ! videoscale ! video/x-raw,format=RGB,width=64,height=64 ! \
 *     spdlbatch batch-size=8 ! fakesink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlbatch.h"
#include "gstspdlmeta.h"
#include "gstspdlrecord.h"

#include <math.h>
#include <string.h>

enum
{
  PROP_0,
  PROP_BATCH_SIZE,
  PROP_DROP_LAST,
  PROP_PAD_SHORT_EPOCHS,
  PROP_PAD_MULTIPLE,
  PROP_LAYOUT,
  PROP_DTYPE,
  PROP_MEAN,
  PROP_STD,
  PROP_BATCHES,
  PROP_DROPPED,
  PROP_STATS,
};

#define DEFAULT_BATCH_SIZE 32
#define DEFAULT_DROP_LAST FALSE
#define DEFAULT_PAD_SHORT_EPOCHS TRUE
#define DEFAULT_LAYOUT GST_SPDL_LAYOUT_NHWC
#define DEFAULT_DTYPE GST_SPDL_DTYPE_UINT8
#define IMAGES 0
#define LABELS 1
#define PTS 2                   /* video clips only */
#define START 2                 /* audio clips only */
#define LENGTHS 3               /* audio clips only */
#define AUDIO 3                 /* video clips with audio only */
#define HAS_AUDIO 4             /* likewise */
#define IMAGE_SIZES 2           /* padded images only */
#define PADDING_MASK 3          /* likewise */
#define MAX_TENSORS 5
/* a field's tensors kept for reuse: spdlcudaupload's device-buffers (4)
 * held downstream, the application's, and the one being filled */
#define FIELD_MEMORIES 8

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE ("{ RGB, RGBP, GRAY8 }") "; "
        "other/tensors, format=(string)static, num_tensors=(int)[ 1, 2 ]"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("other/tensors, format=(string)static, "
        "num_tensors=(int)[ 2, 16 ], framerate=(fraction)0/1"));

GST_DEBUG_CATEGORY_STATIC (spdl_batch_debug);
#define GST_CAT_DEFAULT spdl_batch_debug

GType
gst_spdl_layout_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_LAYOUT_NHWC, "Batch x height x width x channels", "nhwc"},
    {GST_SPDL_LAYOUT_NCHW, "Batch x channels x height x width (PyTorch)",
        "nchw"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstSpdlLayout",
            values));
  return type;
}

GType
gst_spdl_batch_dtype_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_DTYPE_UINT8, "Pixels as they are (0-255)", "uint8"},
    {GST_SPDL_DTYPE_FLOAT32, "Normalized 32-bit floats", "float32"},
    {GST_SPDL_DTYPE_FLOAT16, "Normalized IEEE half floats", "float16"},
    {GST_SPDL_DTYPE_BFLOAT16, "Normalized bfloat16 (rounded to nearest even)",
        "bfloat16"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstSpdlBatchDType",
            values));
  return type;
}

/* ------------------------------------------------------------------------ */
/* A pool of batch buffers: one memory per tensor, from the allocator that
 * downstream proposed. */

#define GST_TYPE_SPDL_BATCH_POOL (gst_spdl_batch_pool_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlBatchPool, gst_spdl_batch_pool, GST,
    SPDL_BATCH_POOL, GstBufferPool)

struct _GstSpdlBatchPool
{
  GstBufferPool parent;
  GstAllocator *allocator;
  GstAllocationParams params;
  guint n_tensors;
  gsize sizes[MAX_TENSORS];
};

G_DEFINE_TYPE (GstSpdlBatchPool, gst_spdl_batch_pool, GST_TYPE_BUFFER_POOL);

/* set on a batch whose only change of memories is the record fields'
 * tensors appended after the pool's */
static GQuark fields_appended_quark;

static GstBuffer *
batch_buffer_new (GstAllocator * allocator, GstAllocationParams * params,
    const gsize * sizes, guint n_tensors)
{
  GstBuffer *buffer = gst_buffer_new ();
  guint i;

  for (i = 0; i < n_tensors; i++) {
    GstMemory *mem = gst_allocator_alloc (allocator, sizes[i], params);
    if (mem == NULL) {
      gst_buffer_unref (buffer);
      return NULL;
    }
    gst_buffer_append_memory (buffer, mem);
  }
  return buffer;
}

static GstFlowReturn
gst_spdl_batch_pool_alloc (GstBufferPool * pool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * params)
{
  GstSpdlBatchPool *self = GST_SPDL_BATCH_POOL (pool);

  *buffer = batch_buffer_new (self->allocator, &self->params, self->sizes,
      self->n_tensors);
  return *buffer ? GST_FLOW_OK : GST_FLOW_ERROR;
}

/* A batch cut short at an epoch's end gets its full size back, so the pool
 * keeps it instead of allocating a new one. */
static void
gst_spdl_batch_pool_reset (GstBufferPool * pool, GstBuffer * buffer)
{
  GstSpdlBatchPool *self = GST_SPDL_BATCH_POOL (pool);
  guint i;

  gboolean fields = gst_mini_object_steal_qdata (GST_MINI_OBJECT (buffer),
      fields_appended_quark) != NULL;

  /* the fields' tensors are the batch's own: the pool's tensors stay */
  if (fields && gst_buffer_n_memory (buffer) > self->n_tensors)
    gst_buffer_remove_memory_range (buffer, self->n_tensors, -1);
  for (i = 0; i < self->n_tensors && i < gst_buffer_n_memory (buffer); i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    if (mem->size != self->sizes[i] && gst_memory_is_writable (mem))
      gst_memory_resize (mem, 0, self->sizes[i]);
  }
  GST_BUFFER_POOL_CLASS (gst_spdl_batch_pool_parent_class)->reset_buffer
      (pool, buffer);
  if (fields)
    GST_BUFFER_FLAG_UNSET (buffer, GST_BUFFER_FLAG_TAG_MEMORY);
}

static void
gst_spdl_batch_pool_finalize (GObject * object)
{
  GstSpdlBatchPool *self = GST_SPDL_BATCH_POOL (object);

  gst_clear_object (&self->allocator);
  G_OBJECT_CLASS (gst_spdl_batch_pool_parent_class)->finalize (object);
}

static void
gst_spdl_batch_pool_class_init (GstSpdlBatchPoolClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gst_spdl_batch_pool_finalize;
  GST_BUFFER_POOL_CLASS (klass)->alloc_buffer = gst_spdl_batch_pool_alloc;
  GST_BUFFER_POOL_CLASS (klass)->reset_buffer = gst_spdl_batch_pool_reset;
  fields_appended_quark =
      g_quark_from_static_string ("gst-spdl-batch-fields-appended");
}

static void
gst_spdl_batch_pool_init (GstSpdlBatchPool * self)
{
}

/* ------------------------------------------------------------------------ */

#define gst_spdl_batch_parent_class parent_class
G_DEFINE_TYPE (GstSpdlBatch, gst_spdl_batch, GST_TYPE_ELEMENT);
GST_ELEMENT_REGISTER_DEFINE (spdlbatch, "spdlbatch", GST_RANK_NONE,
    GST_TYPE_SPDL_BATCH);

static void gst_spdl_batch_finalize (GObject * object);
static void gst_spdl_batch_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_spdl_batch_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static GstStateChangeReturn gst_spdl_batch_change_state (GstElement * element,
    GstStateChange transition);
static GstFlowReturn gst_spdl_batch_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buffer);
static gboolean gst_spdl_batch_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event);
static gboolean gst_spdl_batch_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query);

static void
gst_spdl_batch_class_init (GstSpdlBatchClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->finalize = gst_spdl_batch_finalize;
  gobject_class->set_property = gst_spdl_batch_set_property;
  gobject_class->get_property = gst_spdl_batch_get_property;

  g_object_class_install_property (gobject_class, PROP_BATCH_SIZE,
      g_param_spec_uint ("batch-size", "Batch size", "Samples per batch", 1,
          G_MAXINT, DEFAULT_BATCH_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlBatch:drop-last:
   *
   * Drop the last, smaller batch of each epoch, as PyTorch's DataLoader does
   * with drop_last=True.
   */
  g_object_class_install_property (gobject_class, PROP_DROP_LAST,
      g_param_spec_boolean ("drop-last", "Drop last",
          "Drop the last incomplete batch of each epoch", DEFAULT_DROP_LAST,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlBatch:pad-short-epochs:
   *
   * With more than one rank (spdlsrc's num-shards), every rank yields the
   * same batches per epoch (distributed training hangs otherwise):
   * ceil(M / batch-size) batches, or floor with
   * #GstSpdlBatch:drop-last, where M is the rank's share of the epoch that
   * spdlsrc announces (its "spdl-epoch-start" event; spdlsrc pads the
   * shares to be equal). When skipped samples (unreadable, undecodable)
   * leave the epoch short, the missing slots are filled with copies of the
   * epoch's last samples, and the batch's metadata counts them in
   * "padded"; an epoch in which every sample of the rank was skipped has
   * nothing to copy and is an error (the other ranks would wait). Without
   * spdlsrc upstream, nothing is padded.
   */
  g_object_class_install_property (gobject_class, PROP_PAD_SHORT_EPOCHS,
      g_param_spec_boolean ("pad-short-epochs", "Pad short epochs",
          "Fill the slots of skipped samples with copies so every rank "
          "yields the same batches", DEFAULT_PAD_SHORT_EPOCHS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlBatch:pad-multiple:
   *
   * 0: one image size per batch (a sample of another size is an error).
   * N: images of any size in one batch (spdldecode mode=shorter), each
   * top-left in a `H x W` that is the batch's largest height and width
   * rounded up to a multiple of N, zeros around it (after the
   * normalization: the zero of the dtype, as torchvision's
   * GeneralizedRCNNTransform pads with size_divisible=32), with two more
   * tensors after `labels`: `image-sizes` int64 `[B, 2]` (each image's
   * height and width) and `padding-mask` uint8 `[B, H, W]` (1 where
   * padding, DETR's mask). The caps give each batch's H and W: they are
   * pushed again when a batch's size differs from the last's, and name
   * the tensors ("names").
   */
  g_object_class_install_property (gobject_class, PROP_PAD_MULTIPLE,
      g_param_spec_uint ("pad-multiple", "Pad multiple",
          "Images of any size in a batch, padded to its largest height and "
          "width rounded up to a multiple of this (0 = one size per batch)",
          0, 4096, 0, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_LAYOUT,
      g_param_spec_enum ("layout", "Layout", "Layout of the images tensor",
          GST_TYPE_SPDL_LAYOUT, DEFAULT_LAYOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlBatch:dtype:
   *
   * Element type of the images tensor. The float types hold
   * (x / 255 - mean) / std, computed in the batch copy.
   */
  g_object_class_install_property (gobject_class, PROP_DTYPE,
      g_param_spec_enum ("dtype", "Data type",
          "Element type of the images tensor (float types are normalized)",
          GST_TYPE_SPDL_BATCH_DTYPE, DEFAULT_DTYPE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlBatch:mean:
   *
   * Per-channel mean subtracted from x / 255 with a float
   * #GstSpdlBatch:dtype: empty (0), one value for all channels, or one per
   * channel, e.g. `mean="<0.485,0.456,0.406>"`.
   */
  g_object_class_install_property (gobject_class, PROP_MEAN,
      gst_param_spec_array ("mean", "Mean",
          "Per-channel mean of x / 255 (float dtypes)",
          g_param_spec_double ("value", "Value", "One channel's mean",
              -G_MAXDOUBLE, G_MAXDOUBLE, 0.0,
              G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlBatch:std:
   *
   * Per-channel standard deviation dividing x / 255 - mean with a float
   * #GstSpdlBatch:dtype: empty (1), one value, or one per channel, e.g.
   * `std="<0.229,0.224,0.225>"`. Zero is refused when the stream starts.
   */
  g_object_class_install_property (gobject_class, PROP_STD,
      gst_param_spec_array ("std", "Standard deviation",
          "Per-channel standard deviation of x / 255 (float dtypes)",
          g_param_spec_double ("value", "Value",
              "One channel's standard deviation", -G_MAXDOUBLE, G_MAXDOUBLE,
              1.0, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_BATCHES,
      g_param_spec_uint64 ("batches", "Batches", "Batches pushed so far", 0,
          G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_DROPPED,
      g_param_spec_uint64 ("dropped", "Dropped",
          "Samples dropped by drop-last so far", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * GstSpdlBatch:stats:
   *
   * "spdl-stats": items-in (images), items-out (batches), busy (ns
   * copying), mean, p90, p99 (ns per image), elapsed,
   * skipped-drop-last (images dropped by drop-last), copied (images
   * copied into the batch) and in-place (images an upstream decoder wrote
   * straight into their slot of the batch, see the SECTION).
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Images in, batches out and copy times", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "SPDL batch collation", "Filter/Converter/Tensor",
      "Collates images and labels into tensor batches", "gst-spdl authors");
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_spdl_batch_change_state);

  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_LAYOUT, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_BATCH_DTYPE, 0);
  GST_DEBUG_CATEGORY_INIT (spdl_batch_debug, "spdlbatch", 0,
      "SPDL batch collation");
}

static void
gst_spdl_batch_init (GstSpdlBatch * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_batch_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_batch_sink_event));
  gst_pad_set_query_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_spdl_batch_sink_query));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  self->batch_size = DEFAULT_BATCH_SIZE;
  self->drop_last = DEFAULT_DROP_LAST;
  self->pad_short_epochs = DEFAULT_PAD_SHORT_EPOCHS;
  self->layout = DEFAULT_LAYOUT;
  self->dtype = DEFAULT_DTYPE;
  self->mean = g_array_new (FALSE, FALSE, sizeof (gdouble));
  self->std = g_array_new (FALSE, FALSE, sizeof (gdouble));
  gst_spdl_stats_init (&self->stats);
}

static void
gst_spdl_batch_finalize (GObject * object)
{
  GstSpdlBatch *self = GST_SPDL_BATCH (object);

  g_free (self->indices);
  g_free (self->clip_numbers);
  g_free (self->held);
  g_free (self->held_prev);
  g_free (self->prev_indices);
  g_free (self->held_info);
  g_free (self->held_prev_info);
  g_array_unref (self->mean);
  g_array_unref (self->std);
  gst_spdl_normalizer_clear (&self->norm);
  gst_spdl_stats_clear (&self->stats);
  gst_spdl_record_batch_free (self->records);
  gst_spdl_record_batch_free (self->prev_records);
  gst_spdl_memory_cache_free (self->field_memories);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* GstValueArray of numbers -> doubles */
static void
doubles_from_value_array (GArray * out, const GValue * value)
{
  guint i, n = gst_value_array_get_size (value);

  g_array_set_size (out, 0);
  for (i = 0; i < n; i++) {
    GValue d = G_VALUE_INIT;
    gdouble v = 0.0;

    g_value_init (&d, G_TYPE_DOUBLE);
    if (g_value_transform (gst_value_array_get_value (value, i), &d))
      v = g_value_get_double (&d);
    g_array_append_val (out, v);
    g_value_unset (&d);
  }
}

static void
doubles_to_value_array (GValue * value, const GArray * in)
{
  guint i;

  for (i = 0; i < in->len; i++) {
    GValue d = G_VALUE_INIT;

    g_value_init (&d, G_TYPE_DOUBLE);
    g_value_set_double (&d, g_array_index (in, gdouble, i));
    gst_value_array_append_and_take_value (value, &d);
  }
}

static void
gst_spdl_batch_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstSpdlBatch *self = GST_SPDL_BATCH (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_BATCH_SIZE:
      self->batch_size = g_value_get_uint (value);
      break;
    case PROP_DROP_LAST:
      self->drop_last = g_value_get_boolean (value);
      break;
    case PROP_PAD_SHORT_EPOCHS:
      self->pad_short_epochs = g_value_get_boolean (value);
      break;
    case PROP_PAD_MULTIPLE:
      self->pad_multiple = g_value_get_uint (value);
      break;
    case PROP_LAYOUT:
      self->layout = g_value_get_enum (value);
      break;
    case PROP_DTYPE:
      self->dtype = g_value_get_enum (value);
      break;
    case PROP_MEAN:
      doubles_from_value_array (self->mean, value);
      break;
    case PROP_STD:
      doubles_from_value_array (self->std, value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_spdl_batch_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstSpdlBatch *self = GST_SPDL_BATCH (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_BATCH_SIZE:
      g_value_set_uint (value, self->batch_size);
      break;
    case PROP_DROP_LAST:
      g_value_set_boolean (value, self->drop_last);
      break;
    case PROP_PAD_SHORT_EPOCHS:
      g_value_set_boolean (value, self->pad_short_epochs);
      break;
    case PROP_PAD_MULTIPLE:
      g_value_set_uint (value, self->pad_multiple);
      break;
    case PROP_LAYOUT:
      g_value_set_enum (value, self->layout);
      break;
    case PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    case PROP_MEAN:
      doubles_to_value_array (value, self->mean);
      break;
    case PROP_STD:
      doubles_to_value_array (value, self->std);
      break;
    case PROP_BATCHES:
      g_value_set_uint64 (value, self->batches);
      break;
    case PROP_DROPPED:
      g_value_set_uint64 (value, self->dropped);
      break;
    case PROP_STATS:{
      GstStructure *st = gst_spdl_stats_to_structure (&self->stats);
      gst_structure_set (st, "skipped-drop-last", G_TYPE_UINT64, self->dropped,
          "copied", G_TYPE_UINT64, self->copied, "in-place", G_TYPE_UINT64,
          self->in_place, NULL);
      g_value_take_boxed (value, st);
      break;
    }
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ------------------------------------------------------------------------ */

static gboolean set_audio_caps (GstSpdlBatch * self, GstCaps * caps,
    const GstSpdlTensorInfo * clip);
static GstFlowReturn hold_sample (GstSpdlBatch * self, GstBuffer * buffer,
    const GstSpdlSampleInfo * info);
static GstFlowReturn finish_held_batch (GstSpdlBatch * self);
static GstFlowReturn pad_held_epoch (GstSpdlBatch * self, guint64 target);

/* The batch's tensors (2; 3 for video clips, 4 for audio) for @n samples */
static guint
describe_batch (GstSpdlBatch * self, guint n, GstSpdlTensorInfo * t)
{
  guint w, h, c;

  t[LABELS].n_dims = 1;
  t[LABELS].dtype = GST_SPDL_DTYPE_INT64;
  t[LABELS].shape[0] = n;
  if (self->audio) {
    t[IMAGES].n_dims = 3;
    t[IMAGES].dtype = GST_SPDL_DTYPE_FLOAT32;
    t[IMAGES].shape[0] = n;
    t[IMAGES].shape[1] = self->audio_channels;
    t[IMAGES].shape[2] = self->audio_n;
    t[START].n_dims = 1;
    t[START].dtype = GST_SPDL_DTYPE_FLOAT64;
    t[START].shape[0] = n;
    t[LENGTHS].n_dims = 1;
    t[LENGTHS].dtype = GST_SPDL_DTYPE_INT64;
    t[LENGTHS].shape[0] = n;
    return 4;
  }
  if (self->clips) {
    /* the clip's own layout, one more dimension outside */
    t[IMAGES] = self->clip;
    t[IMAGES].n_dims = self->clip.n_dims + 1;
    memcpy (&t[IMAGES].shape[1], self->clip.shape,
        sizeof (guint64) * self->clip.n_dims);
    t[IMAGES].shape[0] = n;
    t[PTS].n_dims = 2;
    t[PTS].dtype = GST_SPDL_DTYPE_FLOAT64;
    t[PTS].shape[0] = n;
    t[PTS].shape[1] = self->clip_frames;
    if (!self->clip_audio)
      return 3;
    t[AUDIO].n_dims = 3;
    t[AUDIO].dtype = GST_SPDL_DTYPE_FLOAT32;
    t[AUDIO].shape[0] = n;
    t[AUDIO].shape[1] = self->clip_audio_info.shape[0];
    t[AUDIO].shape[2] = self->clip_audio_info.shape[1];
    t[HAS_AUDIO].n_dims = 1;
    t[HAS_AUDIO].dtype = GST_SPDL_DTYPE_UINT8;
    t[HAS_AUDIO].shape[0] = n;
    return 5;
  }
  w = self->padded ? self->pad_width :
      (guint) GST_VIDEO_INFO_WIDTH (&self->vinfo);
  h = self->padded ? self->pad_height :
      (guint) GST_VIDEO_INFO_HEIGHT (&self->vinfo);
  c = GST_VIDEO_INFO_N_COMPONENTS (&self->vinfo);
  t[IMAGES].n_dims = 4;
  t[IMAGES].dtype = self->active_dtype;
  t[IMAGES].shape[0] = n;
  if (self->active_layout == GST_SPDL_LAYOUT_NCHW) {
    t[IMAGES].shape[1] = c;
    t[IMAGES].shape[2] = h;
    t[IMAGES].shape[3] = w;
  } else {
    t[IMAGES].shape[1] = h;
    t[IMAGES].shape[2] = w;
    t[IMAGES].shape[3] = c;
  }
  if (!self->padded)
    return 2;
  t[IMAGE_SIZES].n_dims = 2;
  t[IMAGE_SIZES].dtype = GST_SPDL_DTYPE_INT64;
  t[IMAGE_SIZES].shape[0] = n;
  t[IMAGE_SIZES].shape[1] = 2;
  t[PADDING_MASK].n_dims = 3;
  t[PADDING_MASK].dtype = GST_SPDL_DTYPE_UINT8;
  t[PADDING_MASK].shape[0] = n;
  t[PADDING_MASK].shape[1] = h;
  t[PADDING_MASK].shape[2] = w;
  return 4;
}

/* The media tensors' names in the caps (with a record) */
static const gchar *const image_names[] = { "images", "labels",
  "image-sizes", "padding-mask"
};
static const gchar *const clip_names[] = { "clips", "labels", "pts", "audio",
  "has-audio"
};
static const gchar *const audio_names[] = { "audio", "labels", "start",
  "lengths"
};

/* The objects' masks are at the batch image tensor's height and width */
static void
set_fields_canvas (GstSpdlBatch * self, guint n)
{
  GstSpdlTensorInfo t[GST_SPDL_TENSOR_MAX];
  gboolean nchw;

  if (self->records == NULL)
    return;
  describe_batch (self, n, t);
  nchw = !self->audio && !self->clips &&
      self->active_layout == GST_SPDL_LAYOUT_NCHW;
  if (self->audio || self->clips)
    gst_spdl_record_batch_set_canvas (self->records, 0, 0);
  else
    gst_spdl_record_batch_set_canvas (self->records,
        t[IMAGES].shape[nchw ? 3 : 2], t[IMAGES].shape[nchw ? 2 : 1]);
}

/* Caps for a batch of @n: the media's tensors, then with a record its
 * fields' (names and the record's text with them); pushed when they
 * differ from the last. */
static gboolean
push_caps (GstSpdlBatch * self, guint n)
{
  GstSpdlTensorInfo t[GST_SPDL_TENSOR_MAX];
  const gchar *names[GST_SPDL_TENSOR_MAX];
  GstCaps *caps, *current;
  gboolean ok = TRUE;
  guint n_tensors, i;

  set_fields_canvas (self, n);
  n_tensors = describe_batch (self, n, t);

  if (self->records && n_tensors + gst_spdl_record_batch_n_tensors
      (self->records) > GST_SPDL_TENSOR_MAX) {
    gchar *fields = gst_spdl_record_to_string
        (gst_spdl_record_batch_get_record (self->records));

    /* a GstBuffer merges memories past its 16th: no tensor apart */
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("The samples' fields need %u tensors beside the media's %u: a "
            "batch holds at most %d (strings, JSON and bytes take 2 each, "
            "npy 3, objects 5, or 6 with masks, the others 1): ask for "
            "fewer fields",
            gst_spdl_record_batch_n_tensors (self->records), n_tensors,
            GST_SPDL_TENSOR_MAX), ("fields \"%s\"", fields));
    g_free (fields);
    return FALSE;
  }
  if (self->records) {
    GString *text = g_string_new (NULL);
    gchar *fields = gst_spdl_record_to_string (gst_spdl_record_batch_get_record
        (self->records));
    const gchar *const *media = self->audio ? audio_names : self->clips ?
        clip_names : image_names;

    for (i = 0; i < n_tensors; i++)
      names[i] = media[i];
    n_tensors += gst_spdl_record_batch_describe (self->records, n,
        t + n_tensors, names + n_tensors, GST_SPDL_TENSOR_MAX - n_tensors);
    for (i = 0; i < n_tensors; i++)
      g_string_append_printf (text, "%s%s", i ? "," : "", names[i]);
    caps = gst_spdl_tensors_caps_new (t, n_tensors, NULL);
    gst_caps_set_simple (caps, "names", G_TYPE_STRING, text->str, "fields",
        G_TYPE_STRING, fields, NULL);
    g_string_free (text, TRUE);
    g_free (fields);
  } else {
    caps = gst_spdl_tensors_caps_new (t, n_tensors, NULL);
    /* which tensor is which is not the usual two's */
    if (self->padded)
      gst_caps_set_simple (caps, "names", G_TYPE_STRING,
          "images,labels,image-sizes,padding-mask", NULL);
  }
  current = gst_pad_get_current_caps (self->srcpad);
  if (current == NULL || !gst_caps_is_strictly_equal (current, caps))
    ok = gst_pad_push_event (self->srcpad, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  if (current)
    gst_caps_unref (current);
  self->caps_batch = n;
  self->caps_pad_width = self->pad_width;
  self->caps_pad_height = self->pad_height;
  return ok;
}

/* The record that @caps describe: the slots of its fields. A record that
 * changes between batches is taken; in the middle of one, an error. */
static gboolean
set_record (GstSpdlBatch * self, GstCaps * caps)
{
  GstSpdlRecord *record = gst_spdl_record_from_caps (caps);
  gchar *text = record ? gst_spdl_record_to_string (record) : NULL;
  gchar *old = self->records ? gst_spdl_record_to_string
      (gst_spdl_record_batch_get_record (self->records)) : NULL;
  gboolean same = g_strcmp0 (text, old) == 0, nchw, masks = FALSE;
  guint size;

  /* spdldecode says whether its objects carry masks */
  if (caps && gst_caps_get_size (caps) > 0)
    gst_structure_get_boolean (gst_caps_get_structure (caps, 0),
        "instance-masks", &masks);

  if (!same && self->filled > 0)
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The samples' fields changed in the middle of a batch, from \"%s\" "
            "to \"%s\"", old ? old : "", text ? text : ""),
        ("new caps %" GST_PTR_FORMAT, caps));
  g_free (text);
  g_free (old);
  if (same || self->filled > 0) {
    if (record)
      gst_spdl_record_free (record);
    if (same && self->records) {
      gst_spdl_record_batch_set_object_masks (self->records, masks);
      gst_spdl_record_batch_set_object_masks (self->prev_records, masks);
    }
    return same;
  }
  g_clear_pointer (&self->records, gst_spdl_record_batch_free);
  g_clear_pointer (&self->prev_records, gst_spdl_record_batch_free);
  if (record == NULL || record->n_fields == 0) {
    if (record)
      gst_spdl_record_free (record);
    return TRUE;
  }
  GST_OBJECT_LOCK (self);
  size = self->batch_size;
  nchw = self->layout == GST_SPDL_LAYOUT_NCHW;
  GST_OBJECT_UNLOCK (self);
  self->records = gst_spdl_record_batch_new (record, size, nchw);
  self->prev_records = gst_spdl_record_batch_new (record, size, nchw);
  gst_spdl_record_batch_set_object_masks (self->records, masks);
  gst_spdl_record_batch_set_object_masks (self->prev_records, masks);
  /* as many batches as may be downstream at once, and one being filled */
  gst_spdl_memory_cache_free (self->field_memories);
  self->field_memories = gst_spdl_memory_cache_new (FIELD_MEMORIES);
  gst_spdl_record_free (record);
  return TRUE;
}

/* The sample's field values into its slot of the batch */
static gboolean
take_record (GstSpdlBatch * self, GstBuffer * buffer)
{
  GError *error = NULL;

  if (self->records)
    gst_spdl_record_batch_set_padded (self->records, self->padded);
  if (self->records == NULL || gst_spdl_record_batch_set_slot (self->records,
          self->filled, buffer, &error))
    return TRUE;
  GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("%s", error->message), (NULL));
  g_error_free (error);
  return FALSE;
}

/* The fields' tensors after the media's in @batch of @n samples */
static gboolean
append_fields (GstSpdlBatch * self, GstBuffer * batch, guint n)
{
  GstSpdlBatchPool *pool = GST_SPDL_BATCH_POOL (self->pool);
  GError *error = NULL;

  if (self->records == NULL)
    return TRUE;
  if (!GST_BUFFER_FLAG_IS_SET (batch, GST_BUFFER_FLAG_TAG_MEMORY))
    gst_mini_object_set_qdata (GST_MINI_OBJECT (batch),
        fields_appended_quark, GINT_TO_POINTER (1), NULL);
  set_fields_canvas (self, n);
  if (gst_spdl_record_batch_append (self->records, batch, n,
          self->field_memories, pool->allocator, &pool->params, &error))
    return TRUE;
  GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("%s", error->message),
      (NULL));
  g_error_free (error);
  return FALSE;
}

/* After a batch went out: its fields' geometry in its meta, and its slots
 * kept as the source of padding copies (@keep) or let go */
static void
finish_fields (GstSpdlBatch * self, GstBuffer * batch, guint n, gboolean keep)
{
  GstSpdlRecordBatch *prev;

  if (self->records == NULL)
    return;
  gst_spdl_record_batch_set_geometry (self->records,
      gst_custom_meta_get_structure (gst_buffer_get_custom_meta (batch,
              GST_SPDL_BATCH_META_NAME)), n);
  if (keep) {
    prev = self->prev_records;
    self->prev_records = self->records;
    self->records = prev;
  }
  gst_spdl_record_batch_clear (self->records);
}

static void
release_pool (GstSpdlBatch * self)
{
  /* slots of the old batches are copied; upstream asks again */
  if (self->slot_pool) {
    gst_buffer_pool_set_active (GST_BUFFER_POOL (self->slot_pool), FALSE);
    gst_clear_object (&self->slot_pool);
    gst_pad_push_event (self->sinkpad, gst_event_new_reconfigure ());
  }
  if (self->pool) {
    gst_buffer_pool_set_active (self->pool, FALSE);
    gst_clear_object (&self->pool);
  }
}

/* Batch memory from the allocator downstream proposes, through our pool. */
static gboolean
setup_pool (GstSpdlBatch * self)
{
  GstSpdlTensorInfo t[MAX_TENSORS];
  GstSpdlBatchPool *pool;
  GstQuery *query;
  GstCaps *caps;
  GstStructure *config;
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  guint n_tensors, i;
  gsize total = 0;

  release_pool (self);
  n_tensors = describe_batch (self, self->size, t);
  caps = gst_spdl_tensors_caps_new (t, n_tensors, NULL);
  query = gst_query_new_allocation (caps, TRUE);
  gst_allocation_params_init (&params);
  if (gst_pad_peer_query (self->srcpad, query) &&
      gst_query_get_n_allocation_params (query) > 0)
    gst_query_parse_nth_allocation_param (query, 0, &allocator, &params);
  gst_query_unref (query);
  /* 64-byte aligned rows of the batch for SIMD consumers */
  params.align = MAX (params.align, 63);
  GST_INFO_OBJECT (self, "batch memory from %" GST_PTR_FORMAT,
      allocator ? (GstObject *) allocator : NULL);

  pool = g_object_new (GST_TYPE_SPDL_BATCH_POOL, NULL);
  gst_object_ref_sink (pool);
  pool->allocator = allocator ? allocator : gst_allocator_find (NULL);
  pool->params = params;
  pool->n_tensors = n_tensors;
  for (i = 0; i < n_tensors; i++) {
    pool->sizes[i] = gst_spdl_tensor_info_size (&t[i]);
    total += pool->sizes[i];
  }
  config = gst_buffer_pool_get_config (GST_BUFFER_POOL (pool));
  gst_buffer_pool_config_set_params (config, caps, total, 2, 0);
  gst_caps_unref (caps);
  if (!gst_buffer_pool_set_config (GST_BUFFER_POOL (pool), config) ||
      !gst_buffer_pool_set_active (GST_BUFFER_POOL (pool), TRUE)) {
    gst_object_unref (pool);
    return FALSE;
  }
  self->pool = GST_BUFFER_POOL (pool);
  return TRUE;
}

/* Only what shapes the tensor matters: pixel-aspect-ratio, colorimetry
 * or framerate may change between images (videoscale on mixed sizes). */
static gboolean
same_tensor_shape (const GstVideoInfo * a, const GstVideoInfo * b)
{
  return GST_VIDEO_INFO_FORMAT (a) == GST_VIDEO_INFO_FORMAT (b) &&
      GST_VIDEO_INFO_WIDTH (a) == GST_VIDEO_INFO_WIDTH (b) &&
      GST_VIDEO_INFO_HEIGHT (a) == GST_VIDEO_INFO_HEIGHT (b);
}

/* A batch's memory must fit the pool's guint size and be allocatable. */
static gboolean
check_batch_bytes (GstSpdlBatch * self, guint width, guint height,
    guint channels, guint n)
{
  guint64 image = (guint64) width * height * channels *
      gst_spdl_dtype_size (self->active_dtype);
  /* padded: the mask's byte per pixel and the size's two int64 */
  guint64 extra = self->padded ? (guint64) width * height + 16 : 0;
  guint64 bytes = (image + extra + sizeof (gint64)) * n;

  if (bytes <= G_MAXUINT)
    return TRUE;
  GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
      ("A batch of %u %ux%u images would take %" G_GUINT64_FORMAT " bytes, "
          "more than 4 GiB: use a smaller batch-size", n, width, height,
          bytes), (NULL));
  return FALSE;
}

/* The normalizer of this run, from the properties copied at caps time. */
static gboolean
setup_normalizer (GstSpdlBatch * self, const GstVideoInfo * info,
    GArray * mean, GArray * std)
{
  GError *error = NULL;

  gst_spdl_normalizer_clear (&self->norm);
  if (self->active_dtype == GST_SPDL_DTYPE_UINT8) {
    if (mean->len == 0 && std->len == 0)
      return TRUE;
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("mean and std need a float dtype (float32, float16 or bfloat16)"),
        ("dtype is uint8; mean has %u values, std %u", mean->len, std->len));
    return FALSE;
  }
  if (!gst_spdl_normalizer_init (&self->norm, self->active_dtype,
          (gdouble *) mean->data, mean->len, (gdouble *) std->data, std->len,
          GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_N_COMPONENTS (info),
          self->active_layout == GST_SPDL_LAYOUT_NCHW, &error)) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Invalid mean or std: %s", error->message), (NULL));
    g_error_free (error);
    return FALSE;
  }
  return TRUE;
}

/* RGBP images are NCHW samples as they are: what a uint8 NCHW batch
 * prefers (the properties, as the caps query may come before caps). */
static gboolean
planar_wanted (GstSpdlBatch * self)
{
  gboolean planar;

  GST_OBJECT_LOCK (self);
  planar = self->layout == GST_SPDL_LAYOUT_NCHW &&
      self->dtype == GST_SPDL_DTYPE_UINT8;
  GST_OBJECT_UNLOCK (self);
  return planar;
}

/* Bytes of one slot of tensor @i */
static gsize
slot_bytes (GstSpdlBatch * self, guint i)
{
  if (self->audio)
    return i == IMAGES ? (gsize) self->audio_channels * self->audio_n *
        sizeof (gfloat) : sizeof (gint64);
  if (self->padded && i == IMAGES)
    return (gsize) self->pad_width * self->pad_height *
        GST_VIDEO_INFO_N_COMPONENTS (&self->vinfo) *
        gst_spdl_dtype_size (self->active_dtype);
  if (self->padded)
    return i == LABELS ? sizeof (gint64) : i == IMAGE_SIZES ?
        2 * sizeof (gint64) : (gsize) self->pad_width * self->pad_height;
  if (i == IMAGES)
    return self->image_bytes;
  if (i == LABELS)
    return sizeof (gint64);
  if (i == AUDIO)
    return gst_spdl_tensor_info_size (&self->clip_audio_info);
  if (i == HAS_AUDIO)
    return 1;
  return self->clip_frames * sizeof (gdouble);
}

static guint
n_tensors (GstSpdlBatch * self)
{
  return self->audio || self->padded ? 4 : self->clips ?
      (self->clip_audio ? 5 : 3) : 2;
}

static void release_held (GstBuffer ** held, guint * n);

static gboolean
alloc_slot_arrays (GstSpdlBatch * self, guint size)
{
  release_held (self->held_prev, &self->held_prev_n);
  g_free (self->indices);
  g_free (self->clip_numbers);
  g_free (self->held);
  g_free (self->held_prev);
  g_free (self->prev_indices);
  g_free (self->held_info);
  g_free (self->held_prev_info);
  self->held_info = g_try_new0 (GstVideoInfo, size);
  self->held_prev_info = g_try_new0 (GstVideoInfo, size);
  self->indices = g_try_new (guint64, size);
  self->clip_numbers = g_try_new0 (guint64, size);
  self->held = g_try_new0 (GstBuffer *, size);
  self->held_prev = g_try_new0 (GstBuffer *, size);
  self->prev_indices = g_try_new0 (guint64, size);
  if (self->indices && self->clip_numbers && self->held && self->held_prev &&
      self->prev_indices && self->held_info && self->held_prev_info)
    return TRUE;
  GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
      ("Out of memory for a batch of %u samples", size), (NULL));
  return FALSE;
}

/* Video clips (spdlvideodecode): one uint8 tensor each, batched in the
 * clip's own layout with one more dimension outside; their pts go to a
 * third tensor. */
static gboolean
set_clip_caps (GstSpdlBatch * self, GstCaps * caps)
{
  GstSpdlTensorInfo t[2], clip;
  const gchar *layout;
  guint size, frames, n;
  guint64 bytes;
  GstSpdlDType dtype;
  gboolean normalize, with_audio;

  n = gst_spdl_tensors_from_caps (caps, t, 2);
  clip = t[0];
  with_audio = n == 2;
  if (n == 0 || clip.n_dims != 4 || clip.dtype != GST_SPDL_DTYPE_UINT8 ||
      (with_audio && (t[1].n_dims != 2 || t[1].dtype !=
              GST_SPDL_DTYPE_FLOAT32 || t[1].shape[0] == 0
              || t[1].shape[1] == 0))) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("spdlbatch takes images or video clips (one uint8 tensor of 4 "
            "dimensions each, and maybe their audio, float32 [C, N])"),
        ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  layout = gst_structure_get_string (gst_caps_get_structure (caps, 0),
      "layout");
  frames = g_strcmp0 (layout, "cthw") == 0 ? clip.shape[1] : clip.shape[0];
  if (self->have_info && self->clips && self->pool &&
      memcmp (clip.shape, self->clip.shape, sizeof (clip.shape)) == 0 &&
      with_audio == self->clip_audio && (!with_audio ||
          memcmp (t[1].shape, self->clip_audio_info.shape,
              sizeof (t[1].shape)) == 0))
    return TRUE;
  if (self->filled > 0 && self->audio) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Audio and video clips in one batch"), ("new caps %" GST_PTR_FORMAT,
            caps));
    return FALSE;
  }
  if (self->filled > 0 && self->clips && (with_audio != self->clip_audio ||
          (with_audio && memcmp (t[1].shape, self->clip_audio_info.shape,
                  sizeof (t[1].shape)) != 0))) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Clips of different audio shapes in one batch (give "
            "spdlvideodecode a frame-rate: the audio span is frames x "
            "stride / frame-rate)"), ("new caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  if (self->filled > 0 && memcmp (clip.shape, self->clip.shape,
          sizeof (clip.shape)) != 0) {
    gchar *from = self->clips ? gst_spdl_tensor_shape_to_string (&self->clip)
        : g_strdup_printf ("an image of %dx%d",
        GST_VIDEO_INFO_WIDTH (&self->vinfo),
        GST_VIDEO_INFO_HEIGHT (&self->vinfo));
    gchar *to = gst_spdl_tensor_shape_to_string (&clip);

    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Clips of different shapes in one batch: [%s] and [%s] (give "
            "spdlvideodecode a size, or a batch-size of 1)", from, to),
        ("new caps %" GST_PTR_FORMAT, caps));
    g_free (from);
    g_free (to);
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  size = self->batch_size;
  self->active_layout = self->layout;
  self->active_drop_last = self->drop_last;
  self->active_pad = self->pad_short_epochs;
  dtype = self->dtype;
  normalize = self->mean->len > 0 || self->std->len > 0;
  GST_OBJECT_UNLOCK (self);
  if (dtype != GST_SPDL_DTYPE_UINT8 || normalize) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Video clips are batched as uint8: dtype %s, mean and std apply to "
            "images only", gst_spdl_dtype_name (dtype)), (NULL));
    return FALSE;
  }
  bytes = (gst_spdl_tensor_info_size (&clip) + sizeof (gint64) +
      (guint64) frames * sizeof (gdouble) + (with_audio ?
          gst_spdl_tensor_info_size (&t[1]) + 1 : 0)) * size;
  if (bytes > G_MAXUINT) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("A batch of %u clips would take %" G_GUINT64_FORMAT " bytes, "
            "more than 4 GiB: use a smaller batch-size", size, bytes), (NULL));
    return FALSE;
  }
  if (!alloc_slot_arrays (self, size))
    return FALSE;
  gst_spdl_normalizer_clear (&self->norm);
  self->active_dtype = GST_SPDL_DTYPE_UINT8;
  self->size = size;
  self->audio = FALSE;
  self->padded = FALSE;
  self->clips = TRUE;
  self->clip = clip;
  self->clip_frames = frames;
  self->clip_audio = with_audio;
  if (with_audio)
    self->clip_audio_info = t[1];
  self->have_info = TRUE;
  self->image_bytes = gst_spdl_tensor_info_size (&clip);
  if (!push_caps (self, self->size))
    return FALSE;
  gst_pad_check_reconfigure (self->srcpad);
  return setup_pool (self);
}

/* @v rounded up to a multiple of @m (0: @v) */
static guint
round_up (guint v, guint m)
{
  return m ? (v + m - 1) / m * m : v;
}

static gboolean
set_sink_caps (GstSpdlBatch * self, GstCaps * caps)
{
  GstVideoInfo info;
  guint size;
  GArray *mean, *std;
  gboolean ok;

  if (!set_record (self, caps))
    return FALSE;
  if (gst_structure_has_name (gst_caps_get_structure (caps, 0),
          GST_SPDL_TENSORS_MEDIA_TYPE)) {
    GstSpdlTensorInfo t;

    if (gst_spdl_tensors_from_caps (caps, &t, 1) == 1 && t.n_dims == 2 &&
        t.dtype == GST_SPDL_DTYPE_FLOAT32)
      return set_audio_caps (self, caps, &t);
    return set_clip_caps (self, caps);
  }
  if (!gst_video_info_from_caps (&info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("not raw video: %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  if (GST_VIDEO_INFO_FORMAT (&info) == GST_VIDEO_FORMAT_RGBP &&
      !planar_wanted (self)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Planar RGB images need layout=nchw and dtype=uint8"),
        ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  if (self->have_info && !self->clips && self->pool &&
      same_tensor_shape (&self->vinfo, &info)) {
    self->vinfo = info;
    return TRUE;
  }
  /* padded: each image is held with its own size */
  if (self->have_info && self->padded && self->pool &&
      GST_VIDEO_INFO_FORMAT (&self->vinfo) == GST_VIDEO_INFO_FORMAT (&info)) {
    self->vinfo = info;
    return TRUE;
  }
  if (self->filled > 0 && (self->clips || self->audio)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Images and %s clips in one batch", self->audio ? "audio" : "video"),
        ("new caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  if (self->filled > 0) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Image size changed in the middle of a batch, from %dx%d %s to "
            "%dx%d %s", GST_VIDEO_INFO_WIDTH (&self->vinfo),
            GST_VIDEO_INFO_HEIGHT (&self->vinfo),
            GST_VIDEO_INFO_NAME (&self->vinfo), GST_VIDEO_INFO_WIDTH (&info),
            GST_VIDEO_INFO_HEIGHT (&info), GST_VIDEO_INFO_NAME (&info)),
        ("new caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  size = self->batch_size;
  self->active_layout = self->layout;
  self->active_drop_last = self->drop_last;
  self->active_pad = self->pad_short_epochs;
  self->active_dtype = self->dtype;
  self->active_pad_multiple = self->pad_multiple;
  mean = g_array_copy (self->mean);
  std = g_array_copy (self->std);
  GST_OBJECT_UNLOCK (self);
  self->padded = self->active_pad_multiple > 0;
  self->pad_capacity_width = self->pad_width =
      round_up (GST_VIDEO_INFO_WIDTH (&info), self->active_pad_multiple);
  self->pad_capacity_height = self->pad_height =
      round_up (GST_VIDEO_INFO_HEIGHT (&info), self->active_pad_multiple);
  ok = setup_normalizer (self, &info, mean, std);
  g_array_unref (mean);
  g_array_unref (std);
  if (!ok || !check_batch_bytes (self, self->padded ? self->pad_width :
          (guint) GST_VIDEO_INFO_WIDTH (&info), self->padded ?
          self->pad_height : (guint) GST_VIDEO_INFO_HEIGHT (&info),
          GST_VIDEO_INFO_N_COMPONENTS (&info), size) ||
      !alloc_slot_arrays (self, size))
    return FALSE;
  self->clips = FALSE;
  self->clip_audio = FALSE;
  self->audio = FALSE;
  self->size = size;
  self->vinfo = info;
  self->have_info = TRUE;
  self->image_bytes = (gsize) GST_VIDEO_INFO_WIDTH (&info) *
      GST_VIDEO_INFO_HEIGHT (&info) * GST_VIDEO_INFO_N_COMPONENTS (&info) *
      gst_spdl_dtype_size (self->active_dtype);
  if (!push_caps (self, self->size))
    return FALSE;
  gst_pad_check_reconfigure (self->srcpad);
  return setup_pool (self);
}

static GstFlowReturn map_current (GstSpdlBatch * self);

static GstFlowReturn
start_batch (GstSpdlBatch * self)
{
  GstFlowReturn ret;

  /* downstream asked: a new ALLOCATION query, maybe another allocator */
  if (gst_pad_check_reconfigure (self->srcpad) && !setup_pool (self)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not set up the batch memory pool"), (NULL));
    return GST_FLOW_ERROR;
  }
  ret = gst_buffer_pool_acquire_buffer (self->pool, &self->current, NULL);
  if (ret != GST_FLOW_OK)
    return ret;
  return map_current (self);
}

/* Read-write: decoders may be writing other slots of an adopted batch. */
static GstFlowReturn
map_current (GstSpdlBatch * self)
{
  if (!gst_memory_map (gst_buffer_peek_memory (self->current, IMAGES),
          &self->images, GST_MAP_READWRITE))
    goto map_failed;
  if (!gst_memory_map (gst_buffer_peek_memory (self->current, LABELS),
          &self->labels, GST_MAP_READWRITE)) {
    gst_memory_unmap (gst_buffer_peek_memory (self->current, IMAGES),
        &self->images);
    goto map_failed;
  }
  if (self->clips && !gst_memory_map (gst_buffer_peek_memory (self->current,
              PTS), &self->pts, GST_MAP_READWRITE)) {
    gst_memory_unmap (gst_buffer_peek_memory (self->current, LABELS),
        &self->labels);
    gst_memory_unmap (gst_buffer_peek_memory (self->current, IMAGES),
        &self->images);
    goto map_failed;
  }
  if (self->clip_audio) {
    gboolean audio = gst_memory_map (gst_buffer_peek_memory (self->current,
            AUDIO), &self->av_audio, GST_MAP_READWRITE);

    if (!audio || !gst_memory_map (gst_buffer_peek_memory (self->current,
                HAS_AUDIO), &self->av_flags, GST_MAP_READWRITE)) {
      if (audio)
        gst_memory_unmap (gst_buffer_peek_memory (self->current, AUDIO),
            &self->av_audio);
      gst_memory_unmap (gst_buffer_peek_memory (self->current, PTS),
          &self->pts);
      gst_memory_unmap (gst_buffer_peek_memory (self->current, LABELS),
          &self->labels);
      gst_memory_unmap (gst_buffer_peek_memory (self->current, IMAGES),
          &self->images);
      goto map_failed;
    }
  }
  self->filled = 0;
  return GST_FLOW_OK;

map_failed:
  gst_clear_buffer (&self->current);
  GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
      ("Could not map the batch memory for writing"), (NULL));
  return GST_FLOW_ERROR;
}

/* The batch of @block becomes the one being filled: its slot 0 arrived.
 * GST_FLOW_OK with no current batch when the block cannot be adopted (the
 * copy path takes over); an error when its memory cannot be mapped. */
static GstFlowReturn
adopt_block (GstSpdlBatch * self, GstSpdlSlotBlock * block)
{
  GstFlowReturn ret;

  self->current = gst_spdl_slot_block_adopt (block);
  if (self->current == NULL)
    return GST_FLOW_OK;
  ret = map_current (self);
  if (ret == GST_FLOW_OK)
    self->block = gst_spdl_slot_block_ref (block);
  return ret;
}

/* Done with the block of the current batch. FALSE if a slot of it is
 * still being decoded: then the batch must not go downstream. */
static gboolean
release_block (GstSpdlBatch * self)
{
  gboolean idle;

  if (self->block == NULL)
    return TRUE;
  idle = gst_spdl_slot_block_seal (self->block);
  gst_spdl_slot_block_unref (self->block);
  self->block = NULL;
  return idle;
}

/* A copy of the first @n samples of @batch in a batch of our pool. */
static GstBuffer *
copy_batch (GstSpdlBatch * self, GstBuffer * batch, guint n)
{
  GstBuffer *copy = NULL;
  GstMapInfo src, dst;
  guint i;

  if (gst_buffer_pool_acquire_buffer (self->pool, &copy, NULL) != GST_FLOW_OK)
    return NULL;
  for (i = 0; i < n_tensors (self); i++) {
    gsize bytes = n * slot_bytes (self, i);
    if (!gst_memory_map (gst_buffer_peek_memory (batch, i), &src, GST_MAP_READ))
      goto failed;
    if (!gst_memory_map (gst_buffer_peek_memory (copy, i), &dst,
            GST_MAP_WRITE)) {
      gst_memory_unmap (gst_buffer_peek_memory (batch, i), &src);
      goto failed;
    }
    memcpy (dst.data, src.data, bytes);
    gst_memory_unmap (gst_buffer_peek_memory (copy, i), &dst);
    gst_memory_unmap (gst_buffer_peek_memory (batch, i), &src);
  }
  return copy;

failed:
  gst_buffer_unref (copy);
  return NULL;
}

static void
unmap_current (GstSpdlBatch * self)
{
  gst_memory_unmap (gst_buffer_peek_memory (self->current, IMAGES),
      &self->images);
  gst_memory_unmap (gst_buffer_peek_memory (self->current, LABELS),
      &self->labels);
  if (self->clips)
    gst_memory_unmap (gst_buffer_peek_memory (self->current, PTS),
        &self->pts);
  if (self->clip_audio) {
    gst_memory_unmap (gst_buffer_peek_memory (self->current, AUDIO),
        &self->av_audio);
    gst_memory_unmap (gst_buffer_peek_memory (self->current, HAS_AUDIO),
        &self->av_flags);
  }
}

/* The next batch's progress starts afresh: a dropped partial batch's last
 * position (the epoch's end) must not be the next epoch's first batch's,
 * which a checkpoint there would take for the end of that epoch */
static void
reset_batch_progress (GstSpdlBatch * self)
{
  self->batch_position = G_MAXUINT64;
  self->batch_padded = 0;
  self->have_src_batch = FALSE;
}

/* spdlsrc's batched order: where a run resumed after this batch starts */
static void
set_batch_resume (GstSpdlBatch * self, GstBuffer * batch)
{
  if (self->have_src_batch)
    gst_spdl_buffer_set_batch_resume (batch, self->resume_epoch,
        self->resume_offset);
}

/* spdlsrc's batches on several ranks: the last one pushed, the source of
 * the copies that stand for batches whose every sample was skipped */
static void
keep_src_batch (GstSpdlBatch * self, GstBuffer * batch)
{
  if (self->src_batches_expected == G_MAXUINT64)
    return;
  self->src_batches_pushed++;
  gst_buffer_replace (&self->src_last_batch, batch);
}

/* pad-short-epochs with nothing to pad with: every sample of the rank's
 * epoch was skipped. Its batches would be fewer than the other ranks',
 * which would wait for it forever (DDP): an error. */
static GstFlowReturn
nothing_to_pad (GstSpdlBatch * self, guint64 missing, const gchar * what)
{
  GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Epoch %u has no sample to pad "
          "its %" G_GUINT64_FORMAT " missing %s with: every sample of this "
          "rank was skipped, and the other ranks would wait for its "
          "batches", self->epoch, missing, what), ("pad-short-epochs"));
  return GST_FLOW_ERROR;
}

/* pad-short-epochs for spdlsrc's batches: a batch whose every sample was
 * skipped is gone, and a rank short of batches would leave the others
 * waiting for it (DDP): copies of its last batch, all slots "padded",
 * standing for the rank's last batches (a checkpoint after them resumes
 * at the next epoch). */
static GstFlowReturn
pad_src_batches (GstSpdlBatch * self)
{
  GstFlowReturn ret = GST_FLOW_OK;

  if (self->src_batches_expected == G_MAXUINT64 ||
      self->src_batches_pushed >= self->src_batches_expected)
    return GST_FLOW_OK;
  if (self->src_last_batch == NULL)
    return nothing_to_pad (self, self->src_batches_expected -
        self->src_batches_pushed, "batches");
  GST_INFO_OBJECT (self, "epoch %u short by %" G_GUINT64_FORMAT " batches: "
      "padding", self->epoch, self->src_batches_expected -
      self->src_batches_pushed);
  while (ret == GST_FLOW_OK &&
      self->src_batches_pushed < self->src_batches_expected) {
    GstBuffer *copy = gst_buffer_copy (self->src_last_batch);
    GstStructure *meta = gst_custom_meta_get_structure
        (gst_buffer_get_custom_meta (copy, GST_SPDL_BATCH_META_NAME));
    guint n = 0;

    g_free (gst_spdl_structure_dup_uint64_array (meta, "indices", &n));
    gst_structure_set (meta, "padded", G_TYPE_UINT, n, NULL);
    gst_spdl_buffer_set_batch_resume (copy, self->epoch + 1, 0);
    self->src_batches_pushed++;
    GST_OBJECT_LOCK (self);
    self->batches++;
    GST_OBJECT_UNLOCK (self);
    gst_spdl_stats_add_out (&self->stats, 1);
    ret = gst_pad_push (self->srcpad, copy);
  }
  return ret;
}

/* A partial batch is dropped (drop-last) at an epoch's end, never one of
 * spdlsrc's batches: they are whole as they are. */
static gboolean
drops_partial (GstSpdlBatch * self, guint n)
{
  return n < self->size && self->active_drop_last && !self->src_batches;
}

static void
discard_current (GstSpdlBatch * self)
{
  if (self->records)
    gst_spdl_record_batch_clear (self->records);
  if (self->audio || self->padded) {
    release_held (self->held, &self->filled);
    return;
  }
  if (self->current == NULL)
    return;
  unmap_current (self);
  release_block (self);
  gst_clear_buffer (&self->current);
  self->filled = 0;
}

/* Pushes the batch being filled; a partial one only at an epoch's end. */
static GstFlowReturn
finish_batch (GstSpdlBatch * self)
{
  GstBuffer *batch;
  guint n = self->filled, i;
  gboolean keep;

  if (self->audio || self->padded)
    return finish_held_batch (self);
  if (self->current == NULL || n == 0)
    return GST_FLOW_OK;
  unmap_current (self);
  batch = g_steal_pointer (&self->current);
  self->filled = 0;
  /* the next batch starts after this one's last slot */
  if (self->slot_pool && self->last_seq != G_MAXUINT64)
    gst_spdl_slot_pool_set_batch_start (self->slot_pool, self->last_seq + 1);
  if (!release_block (self)) {
    GstBuffer *copy = copy_batch (self, batch, n);

    GST_DEBUG_OBJECT (self, "a slot of the batch is still being written: "
        "pushing a copy");
    gst_buffer_unref (batch);
    if (copy == NULL) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Could not copy a batch"), (NULL));
      return GST_FLOW_ERROR;
    }
    batch = copy;
  }
  if (n < self->size) {
    if (drops_partial (self, n)) {
      GST_OBJECT_LOCK (self);
      self->dropped += n;
      GST_OBJECT_UNLOCK (self);
      gst_buffer_unref (batch);
      reset_batch_progress (self);
      if (self->records)
        gst_spdl_record_batch_clear (self->records);
      return GST_FLOW_OK;
    }
    /* samples are slot-major in both layouts: the batch is a prefix; the
     * pool restores the full size when the buffer comes back */
    for (i = 0; i < n_tensors (self); i++)
      gst_memory_resize (gst_buffer_peek_memory (batch, i), 0,
          n * slot_bytes (self, i));
  }
  if (!append_fields (self, batch, n)) {
    gst_buffer_unref (batch);
    return GST_FLOW_ERROR;
  }
  if ((n != self->caps_batch || self->records) && !push_caps (self, n)) {
    gst_buffer_unref (batch);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Downstream does not accept a batch of %u", n), (NULL));
    return GST_FLOW_ERROR;
  }
  gst_spdl_buffer_add_batch_meta (batch, self->epoch, self->indices, n);
  if (self->clips)
    gst_spdl_structure_set_uint64_array (gst_custom_meta_get_structure
        (gst_buffer_get_custom_meta (batch, GST_SPDL_BATCH_META_NAME)),
        "clips", self->clip_numbers, n);
  gst_spdl_buffer_set_batch_progress (batch, self->batch_position,
      self->batch_padded);
  set_batch_resume (self, batch);
  reset_batch_progress (self);
  /* the source of copies when an epoch ends short at a batch boundary */
  keep = self->active_pad && self->epoch_expected != G_MAXUINT64 &&
      n == self->size;
  finish_fields (self, batch, n, keep);
  if (keep)
    gst_buffer_replace (&self->last_batch, batch);
  keep_src_batch (self, batch);
  GST_OBJECT_LOCK (self);
  self->batches++;
  GST_OBJECT_UNLOCK (self);
  gst_spdl_stats_add_out (&self->stats, 1);
  return gst_pad_push (self->srcpad, batch);
}

/* @frame into a slot of @out_w x @out_h pixels, top-left (padded images:
 * the rest of the slot is not written here) */
static void
copy_image (GstSpdlBatch * self, const GstVideoFrame * frame, guint8 * dst,
    guint out_w, guint out_h)
{
  guint w = GST_VIDEO_FRAME_WIDTH (frame), h = GST_VIDEO_FRAME_HEIGHT (frame);
  guint c = GST_VIDEO_FRAME_N_COMPONENTS (frame);
  const guint8 *src = GST_VIDEO_FRAME_PLANE_DATA (frame, 0);
  gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0);
  gsize plane = (gsize) out_w * out_h;
  guint x, y, k;

  if (GST_VIDEO_FRAME_N_PLANES (frame) == 3) {
    /* RGBP, accepted for uint8 NCHW only: plane by plane */
    for (k = 0; k < 3; k++) {
      src = GST_VIDEO_FRAME_PLANE_DATA (frame, k);
      stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, k);
      for (y = 0; y < h; y++)
        memcpy (dst + k * plane + (gsize) y * out_w,
            src + (gsize) y * stride, w);
    }
    return;
  }
  if (self->active_dtype != GST_SPDL_DTYPE_UINT8) {
    gsize elem = gst_spdl_dtype_size (self->active_dtype);
    gsize row_elems = self->active_layout == GST_SPDL_LAYOUT_NCHW ?
        out_w : (gsize) out_w * c;
    for (y = 0; y < h; y++)
      gst_spdl_normalize_row (&self->norm, src + (gsize) y * stride,
          dst + (gsize) y * row_elems * elem, plane);
    return;
  }
  if (self->active_layout == GST_SPDL_LAYOUT_NHWC) {
    for (y = 0; y < h; y++)
      memcpy (dst + (gsize) y * out_w * c, src + (gsize) y * stride,
          (gsize) w * c);
    return;
  }
  if (c == 3) {
    for (y = 0; y < h; y++) {
      guint8 *r = dst + (gsize) y * out_w;

      gst_spdl_deinterleave_rgb_row (src + (gsize) y * stride, r, r + plane,
          r + 2 * plane, w);
    }
    return;
  }
  for (k = 0; k < c; k++) {
    for (y = 0; y < h; y++) {
      const guint8 *row = src + (gsize) y * stride + k;
      guint8 *out = dst + k * plane + (gsize) y * out_w;
      for (x = 0; x < w; x++)
        out[x] = row[x * c];
    }
  }
}

/* A clip's audio (its second memory) and has-audio flag into the next
 * free slot. */
static gboolean
copy_clip_audio (GstSpdlBatch * self, GstBuffer * buffer)
{
  GstMemory *mem = gst_buffer_peek_memory (buffer, 1);
  gsize bytes = slot_bytes (self, AUDIO);
  GstMapInfo map;

  if (!gst_memory_map (mem, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Could not map a clip's audio"),
        ("clip of %s", gst_spdl_buffer_get_path (buffer)));
    return FALSE;
  }
  if (map.size != bytes) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The audio of a clip of %s is %" G_GSIZE_FORMAT " bytes, its caps "
            "say %" G_GSIZE_FORMAT, gst_spdl_buffer_get_path (buffer),
            map.size, bytes), (NULL));
    gst_memory_unmap (mem, &map);
    return FALSE;
  }
  memcpy (self->av_audio.data + (gsize) self->filled * bytes, map.data,
      bytes);
  gst_memory_unmap (mem, &map);
  self->av_flags.data[self->filled] =
      gst_spdl_buffer_get_clip_has_audio (buffer) ? 1 : 0;
  return TRUE;
}

/* A clip into the next free slot, its pts and clip number with it. */
static GstFlowReturn
copy_clip (GstSpdlBatch * self, GstBuffer * buffer)
{
  GstMapInfo map;
  gdouble *pts, *dst = (gdouble *) self->pts.data + (gsize) self->filled *
      self->clip_frames;
  guint n = 0, k, clip = 0;
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);

  if (gst_buffer_n_memory (buffer) != (self->clip_audio ? 2u : 1u)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("A clip of %s has %u tensors, "
            "its caps say %u", gst_spdl_buffer_get_path (buffer),
            gst_buffer_n_memory (buffer), self->clip_audio ? 2 : 1), (NULL));
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }
  if (self->clip_audio && !copy_clip_audio (self, buffer)) {
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }
  if (!gst_memory_map (mem, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Could not map a clip"),
        ("clip of %s", gst_spdl_buffer_get_path (buffer)));
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }
  if (map.size != self->image_bytes) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("A clip of %s is %" G_GSIZE_FORMAT " bytes, its caps say %"
            G_GSIZE_FORMAT, gst_spdl_buffer_get_path (buffer), map.size,
            self->image_bytes), (NULL));
    gst_memory_unmap (mem, &map);
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }
  memcpy (self->images.data + (gsize) self->filled * self->image_bytes,
      map.data, map.size);
  gst_memory_unmap (mem, &map);
  /* a clip from elsewhere, without times: NaN */
  pts = gst_spdl_buffer_dup_clip_pts (buffer, &n);
  for (k = 0; k < self->clip_frames; k++)
    dst[k] = pts && k < n ? pts[k] : NAN;
  g_free (pts);
  gst_spdl_buffer_get_clip_number (buffer, &clip);
  self->clip_numbers[self->filled] = clip;
  GST_OBJECT_LOCK (self);
  self->copied++;
  GST_OBJECT_UNLOCK (self);
  return GST_FLOW_OK;
}

/* The copy path: into the next free slot of the current batch. */
static GstFlowReturn
copy_sample (GstSpdlBatch * self, GstBuffer * buffer)
{
  GstVideoFrame frame;
  guint64 start;

  if (self->clips)
    return copy_clip (self, buffer);
  if (!gst_video_frame_map (&frame, &self->vinfo, buffer, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Could not map an image"),
        ("image of %s", gst_spdl_buffer_get_path (buffer)));
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }
  start = gst_spdl_now_ns ();
  copy_image (self, &frame, self->images.data +
      (gsize) self->filled * self->image_bytes, GST_VIDEO_FRAME_WIDTH (&frame),
      GST_VIDEO_FRAME_HEIGHT (&frame));
  gst_spdl_stats_record (&self->stats, gst_spdl_now_ns () - start);
  gst_video_frame_unmap (&frame);
  GST_OBJECT_LOCK (self);
  self->copied++;
  GST_OBJECT_UNLOCK (self);
  return GST_FLOW_OK;
}

/* spdlsrc's batches: a sample of another batch than the one being filled
 * ends it (its marked last sample was skipped on the way), so two of them
 * never merge. */
static gboolean
joins_src_batch (GstSpdlBatch * self, GstBuffer * buffer)
{
  guint64 batch, offset;
  guint epoch;

  return self->filled > 0 && self->have_src_batch &&
      gst_spdl_buffer_get_batch (buffer, &batch, &epoch, &offset) &&
      batch != self->src_batch;
}

static void
take_src_batch (GstSpdlBatch * self, GstBuffer * buffer)
{
  if (gst_spdl_buffer_get_batch (buffer, &self->src_batch,
          &self->resume_epoch, &self->resume_offset))
    self->have_src_batch = TRUE;
}

/* The marked last sample of one of spdlsrc's batches (of a file's clips,
 * the last one) */
static gboolean
ends_src_batch (GstSpdlBatch * self, GstBuffer * buffer)
{
  return gst_spdl_buffer_is_batch_end (buffer) &&
      ((!self->clips && !self->audio) ||
      gst_spdl_buffer_is_last_clip (buffer));
}

static GstFlowReturn
gst_spdl_batch_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  GstSpdlBatch *self = GST_SPDL_BATCH (parent);
  GstSpdlSampleInfo info;
  GstFlowReturn ret = GST_FLOW_OK;
  GstSpdlSlotBlock *block = NULL;
  guint index = 0;
  guint64 seq = 0;
  gboolean has_slot, ends;

  if (!self->have_info || self->pool == NULL) {
    gst_buffer_unref (buffer);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (self->refused) {          /* posted at the epoch's start */
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }
  if (!gst_spdl_buffer_get_sample_info (buffer, &info)) {
    /* images from a plain decoder chain: no label */
    info.index = self->next_index;
    info.label = -1;
    info.epoch = self->epoch;
  }
  self->next_index = info.index + 1;
  if (self->filled > 0 && info.epoch != self->epoch)
    ret = finish_batch (self);
  self->epoch = info.epoch;
  if (ret == GST_FLOW_OK && joins_src_batch (self, buffer))
    ret = finish_batch (self);
  if (ret == GST_FLOW_OK)
    take_src_batch (self, buffer);
  if (ret == GST_FLOW_OK && !take_record (self, buffer))
    ret = GST_FLOW_ERROR;
  if (self->audio || self->padded) {
    if (ret != GST_FLOW_OK) {
      gst_buffer_unref (buffer);
      return ret;
    }
    return hold_sample (self, buffer, &info);
  }
  has_slot = self->slot_pool && gst_spdl_slot_lookup (buffer, &block, &index,
      &seq) && gst_spdl_slot_block_is_from (block, self->slot_pool);
  if (ret == GST_FLOW_OK && self->current == NULL && has_slot && index == 0)
    ret = adopt_block (self, block);
  if (ret == GST_FLOW_OK && self->current == NULL)
    ret = start_batch (self);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref (buffer);
    return ret;
  }

  if (has_slot && self->block == block && index == self->filled) {
    /* decoded where it belongs: nothing to copy */
    GST_OBJECT_LOCK (self);
    self->in_place++;
    GST_OBJECT_UNLOCK (self);
  } else {
    ret = copy_sample (self, buffer);
    if (ret != GST_FLOW_OK)
      return ret;
    /* line the slots up with the batches again, from the next batch */
    if (has_slot)
      gst_spdl_slot_pool_set_batch_start (self->slot_pool,
          seq + (self->size - self->filled));
  }
  if (has_slot)
    self->last_seq = seq;
  gst_spdl_stats_add_in (&self->stats, 1);
  ((gint64 *) self->labels.data)[self->filled] = info.label;
  self->indices[self->filled] = info.index;
  self->filled++;
  self->epoch_delivered++;
  {
    guint64 position;
    /* a video's clips may end in the next batch: consumed after its last */
    if ((!self->clips || gst_spdl_buffer_is_last_clip (buffer)) &&
        gst_spdl_buffer_get_sample_position (buffer, &position) &&
        (self->batch_position == G_MAXUINT64 ||
            position > self->batch_position))
      self->batch_position = position;
  }
  ends = ends_src_batch (self, buffer);
  gst_buffer_unref (buffer);

  if (self->filled == self->size || ends)
    ret = finish_batch (self);
  return ret;
}

/* Copies slot @from of @images/@labels (a batch's mapped memories) into
 * the next free slot of the batch being filled. */
static void
copy_slot (GstSpdlBatch * self, const guint8 * images, const gint64 * labels,
    const guint8 * pts, const guint8 * audio, const guint8 * flags,
    const guint64 * indices, const guint64 * clips,
    GstSpdlRecordBatch * records, guint from)
{
  if (self->records)
    gst_spdl_record_batch_copy_slot (self->records, self->filled, records,
        from);
  memcpy (self->images.data + (gsize) self->filled * self->image_bytes,
      images + (gsize) from * self->image_bytes, self->image_bytes);
  if (self->clips) {
    gsize bytes = slot_bytes (self, PTS);

    memcpy (self->pts.data + (gsize) self->filled * bytes,
        pts + (gsize) from * bytes, bytes);
    self->clip_numbers[self->filled] = clips ? clips[from] : 0;
  }
  if (self->clip_audio) {
    gsize bytes = slot_bytes (self, AUDIO);

    memcpy (self->av_audio.data + (gsize) self->filled * bytes,
        audio + (gsize) from * bytes, bytes);
    self->av_flags.data[self->filled] = flags[from];
  }
  ((gint64 *) self->labels.data)[self->filled] = labels[from];
  self->indices[self->filled] = indices[from];
  self->filled++;
  self->batch_padded++;
  self->epoch_delivered++;
}

/* Padding writes the slots after the real samples. In an adopted block
 * those slots may already be the next epoch's first samples (spdldecode
 * takes slots before the epoch's end reaches us), so the batch moves to a
 * buffer of our pool first and the block is let go. */
static GstFlowReturn
detach_block (GstSpdlBatch * self)
{
  GstBuffer *copy;
  GstFlowReturn ret;
  guint n = self->filled;

  if (self->block == NULL || self->current == NULL)
    return GST_FLOW_OK;
  unmap_current (self);
  copy = copy_batch (self, self->current, n);
  release_block (self);
  gst_clear_buffer (&self->current);
  if (copy == NULL) {
    self->filled = 0;
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not copy a batch"), (NULL));
    return GST_FLOW_ERROR;
  }
  self->current = copy;
  ret = map_current (self);
  self->filled = ret == GST_FLOW_OK ? n : 0;
  /* the next batch starts after the last slot this one took */
  if (self->slot_pool && self->last_seq != G_MAXUINT64)
    gst_spdl_slot_pool_set_batch_start (self->slot_pool, self->last_seq + 1);
  return ret;
}

/* One padded slot: a copy of the current batch's real samples, or of the
 * last full batch of the epoch when the current one is empty. */
static gboolean
pad_one_slot (GstSpdlBatch * self, guint real)
{
  GstMapInfo images, labels, pts = { 0, }, audio = { 0, }, flags = { 0, };
  gboolean audio_mapped = FALSE, flags_mapped = FALSE;
  GstCustomMeta *meta;
  guint64 *indices, *clips = NULL;
  guint from;
  gboolean ok;

  if (real > 0) {
    copy_slot (self, self->images.data, (const gint64 *) self->labels.data,
        self->pts.data, self->av_audio.data, self->av_flags.data,
        self->indices, self->clip_numbers, self->records,
        (self->filled - real) % real);
    return TRUE;
  }
  if (self->last_batch == NULL)
    return FALSE;
  meta = gst_buffer_get_custom_meta (self->last_batch,
      GST_SPDL_BATCH_META_NAME);
  if (meta == NULL || !gst_memory_map (gst_buffer_peek_memory
          (self->last_batch, IMAGES), &images, GST_MAP_READ))
    return FALSE;
  if (!gst_memory_map (gst_buffer_peek_memory (self->last_batch, LABELS),
          &labels, GST_MAP_READ)) {
    gst_memory_unmap (gst_buffer_peek_memory (self->last_batch, IMAGES),
        &images);
    return FALSE;
  }
  from = self->filled % self->size;
  indices = gst_spdl_structure_dup_uint64_array (gst_custom_meta_get_structure
      (meta), "indices", NULL);
  ok = indices != NULL;
  if (ok && self->clips) {
    clips = gst_spdl_structure_dup_uint64_array (gst_custom_meta_get_structure
        (meta), "clips", NULL);
    ok = gst_memory_map (gst_buffer_peek_memory (self->last_batch, PTS), &pts,
        GST_MAP_READ);
  }
  if (ok && self->clip_audio) {
    ok = audio_mapped = gst_memory_map (gst_buffer_peek_memory
        (self->last_batch, AUDIO), &audio, GST_MAP_READ);
    ok = ok && (flags_mapped = gst_memory_map (gst_buffer_peek_memory
            (self->last_batch, HAS_AUDIO), &flags, GST_MAP_READ));
  }
  if (ok)
    copy_slot (self, images.data, (const gint64 *) labels.data, pts.data,
        audio.data, flags.data, indices, clips, self->prev_records, from);
  if (audio_mapped)
    gst_memory_unmap (gst_buffer_peek_memory (self->last_batch, AUDIO),
        &audio);
  if (flags_mapped)
    gst_memory_unmap (gst_buffer_peek_memory (self->last_batch, HAS_AUDIO),
        &flags);
  if (pts.data)
    gst_memory_unmap (gst_buffer_peek_memory (self->last_batch, PTS), &pts);
  g_free (indices);
  g_free (clips);
  gst_memory_unmap (gst_buffer_peek_memory (self->last_batch, LABELS),
      &labels);
  gst_memory_unmap (gst_buffer_peek_memory (self->last_batch, IMAGES),
      &images);
  return ok;
}

/* At an epoch's end: fills the slots of skipped samples so the epoch has
 * the batches spdlsrc announced (pad-short-epochs). */
static GstFlowReturn
pad_epoch (GstSpdlBatch * self)
{
  GstFlowReturn ret = GST_FLOW_OK;
  guint64 target;
  guint real = self->filled;

  if (self->epoch_expected == G_MAXUINT64)
    return GST_FLOW_OK;
  if (!self->have_info) {
    gboolean pad, drop_last;
    guint size;

    /* no sample ever came: no caps set the active settings */
    GST_OBJECT_LOCK (self);
    pad = self->pad_short_epochs;
    drop_last = self->drop_last;
    size = self->batch_size;
    GST_OBJECT_UNLOCK (self);
    target = drop_last ? self->epoch_expected / size * size :
        self->epoch_expected;
    return pad && target > 0 ? nothing_to_pad (self, target, "samples") :
        GST_FLOW_OK;
  }
  if (!self->active_pad)
    return GST_FLOW_OK;
  target = self->active_drop_last ?
      self->epoch_expected / self->size * self->size : self->epoch_expected;
  if (self->epoch_delivered >= target)
    return GST_FLOW_OK;
  GST_INFO_OBJECT (self, "epoch %u short by %" G_GUINT64_FORMAT
      " samples: padding", self->epoch, target - self->epoch_delivered);
  /* the padded batches stand for the rank's last samples: a checkpoint
   * taken after them resumes at the next epoch (spdlappsink) */
  self->batch_position = self->epoch_last_position;
  if (self->audio || self->padded)
    return pad_held_epoch (self, target);
  ret = detach_block (self);
  while (ret == GST_FLOW_OK && self->epoch_delivered < target) {
    if (self->current == NULL) {
      ret = start_batch (self);
      real = 0;
      if (ret != GST_FLOW_OK)
        break;
    }
    if (!pad_one_slot (self, real)) {
      ret = nothing_to_pad (self, target - self->epoch_delivered,
          "samples");
      break;
    }
    if (self->filled == self->size) {
      ret = finish_batch (self);
      self->batch_position = self->epoch_last_position;
    }
  }
  return ret;
}

static void
end_epoch_accounting (GstSpdlBatch * self)
{
  self->epoch_expected = G_MAXUINT64;
  self->epoch_delivered = 0;
  gst_clear_buffer (&self->last_batch);
  self->src_batches_expected = G_MAXUINT64;
  self->src_batches_pushed = 0;
  gst_clear_buffer (&self->src_last_batch);
  release_held (self->held_prev, &self->held_prev_n);
  if (self->prev_records)
    gst_spdl_record_batch_clear (self->prev_records);
}

/* spdlsrc's share of the epoch for this rank: what to pad up to. One
 * rank waits for no other: nothing to pad then. spdlsrc's own batches
 * ("batches", buckets or batch-duration) must fit batch-size, which is
 * then only the most a batch holds: FALSE (an error posted) when not. */
static gboolean
track_epoch_start (GstSpdlBatch * self, const GstStructure * st)
{
  guint64 samples, offset = 0;
  guint shards = 1, index = 0, max_batch = 0, size, epoch = 0;
  gboolean pad;

  end_epoch_accounting (self);
  self->src_batches = gst_structure_has_field (st, "batches");
  if (self->src_batches) {
    GST_OBJECT_LOCK (self);
    size = self->batch_size;
    pad = self->pad_short_epochs;
    GST_OBJECT_UNLOCK (self);
    gst_structure_get_uint (st, "max-batch", &max_batch);
    gst_structure_get_uint (st, "epoch", &epoch);
    self->refused = max_batch > size;
    if (self->refused) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("batch-size=%u is smaller "
              "than spdlsrc's batches (up to %u samples in epoch %u): give "
              "spdlsrc batch-size=%u to cap them, or spdlbatch a batch-size "
              "of %u or more", size, max_batch, epoch, size, max_batch),
          ("spdlsrc cuts the batches (buckets, batch-duration); spdlbatch "
              "splitting one would change the epoch's batch count"));
      return FALSE;
    }
    /* pad-short-epochs counts batches here: they are of many sizes */
    if (gst_structure_get_uint (st, "num-shards", &shards) && shards > 1 &&
        pad)
      gst_structure_get_uint64 (st, "batches", &self->src_batches_expected);
    return TRUE;
  }
  if (!gst_structure_get_uint64 (st, "samples", &samples) ||
      !gst_structure_get_uint (st, "num-shards", &shards) || shards < 2 ||
      samples == 0)
    return TRUE;
  gst_structure_get_uint64 (st, "offset", &offset);
  gst_structure_get_uint (st, "shard-index", &index);
  self->epoch_expected = samples;
  self->epoch_last_position = offset + index + (samples - 1) * shards;
  return TRUE;
}

/* At an epoch's end or EOS: pushes the partial batch. A failed push
 * (flushing, not linked, downstream error) is reported like in chain(): a
 * fatal one posts an error; the event is then not forwarded. */
static gboolean
finish_pending_batch (GstSpdlBatch * self)
{
  GstFlowReturn ret = pad_epoch (self);

  if (ret == GST_FLOW_OK)
    ret = finish_batch (self);
  if (ret == GST_FLOW_OK)
    ret = pad_src_batches (self);
  end_epoch_accounting (self);

  if (ret == GST_FLOW_OK)
    return TRUE;
  GST_DEBUG_OBJECT (self, "last batch: %s", gst_flow_get_name (ret));
  /* GST_FLOW_ERROR: whoever returned it posted the error */
  if (ret == GST_FLOW_NOT_LINKED || (ret < GST_FLOW_EOS &&
          ret != GST_FLOW_ERROR))
    GST_ELEMENT_FLOW_ERROR (self, ret);
  return ret == GST_FLOW_EOS;
}

/* The template's formats, in the order this configuration prefers. */
static GstCaps *
sink_caps (GstSpdlBatch * self, GstCaps * filter)
{
  GstCaps *caps = gst_pad_get_pad_template_caps (self->sinkpad);
  GstCaps *result;
  GValue formats = G_VALUE_INIT;
  const gchar *names[3];
  guint i, n = 0;

  caps = gst_caps_make_writable (caps);
  if (planar_wanted (self))
    names[n++] = "RGBP";
  names[n++] = "RGB";
  names[n++] = "GRAY8";
  gst_value_list_init (&formats, n);
  for (i = 0; i < n; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_STRING);
    g_value_set_string (&v, names[i]);
    gst_value_list_append_and_take_value (&formats, &v);
  }
  for (i = 0; i < gst_caps_get_size (caps); i++)
    if (gst_structure_has_name (gst_caps_get_structure (caps, i),
            "video/x-raw"))
      gst_structure_set_value (gst_caps_get_structure (caps, i), "format",
          &formats);
  g_value_unset (&formats);
  if (filter == NULL)
    return caps;
  result = gst_caps_intersect_full (filter, caps, GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref (caps);
  return result;
}

/* Offers the slots of the batches to come when the images fit them as
 * they are: uint8, and planar RGB exactly for NCHW. */
static gboolean
propose_allocation (GstSpdlBatch * self, GstQuery * query)
{
  GstCaps *caps;
  GstVideoInfo info;
  gboolean planar;

  gst_query_parse_allocation (query, &caps, NULL);
  if (caps == NULL || !gst_video_info_from_caps (&info, caps) ||
      !self->have_info || self->clips || self->padded || self->pool == NULL ||
      self->active_dtype != GST_SPDL_DTYPE_UINT8 ||
      !same_tensor_shape (&info, &self->vinfo))
    return TRUE;
  planar = GST_VIDEO_INFO_FORMAT (&info) == GST_VIDEO_FORMAT_RGBP;
  if (GST_VIDEO_INFO_N_COMPONENTS (&info) == 3 &&
      planar != (self->active_layout == GST_SPDL_LAYOUT_NCHW))
    return TRUE;
  if (self->slot_pool == NULL) {
    self->slot_pool = gst_spdl_slot_pool_new (self->pool, self->size, &info,
        self->image_bytes);
    GST_INFO_OBJECT (self, "proposing slots of %u-image batches",
        self->size);
  }
  gst_query_add_allocation_pool (query, GST_BUFFER_POOL (self->slot_pool),
      self->image_bytes, 0, 0);
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  return TRUE;
}

static gboolean
gst_spdl_batch_sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstSpdlBatch *self = GST_SPDL_BATCH (parent);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:{
      GstCaps *filter, *caps;

      gst_query_parse_caps (query, &filter);
      caps = sink_caps (self, filter);
      gst_query_set_caps_result (query, caps);
      gst_caps_unref (caps);
      return TRUE;
    }
    case GST_QUERY_ALLOCATION:
      /* serialized: on the streaming thread, after the caps */
      return propose_allocation (self, query);
    default:
      return gst_pad_query_default (pad, parent, query);
  }
}

static gboolean
gst_spdl_batch_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstSpdlBatch *self = GST_SPDL_BATCH (parent);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      gboolean ok;

      gst_event_parse_caps (event, &caps);
      ok = set_sink_caps (self, caps);
      gst_event_unref (event);
      return ok;
    }
    case GST_EVENT_EOS:
      /* the stream's end also ends the epoch */
      if (!finish_pending_batch (self)) {
        gst_event_unref (event);
        return FALSE;
      }
      break;
    case GST_EVENT_FLUSH_STOP:
      discard_current (self);
      end_epoch_accounting (self);
      break;
    case GST_EVENT_CUSTOM_DOWNSTREAM:
      if (gst_spdl_is_epoch_start_event (event) &&
          !track_epoch_start (self, gst_event_get_structure (event))) {
        gst_event_unref (event);
        return FALSE;
      }
      if (gst_spdl_is_epoch_end_event (event) &&
          !finish_pending_batch (self)) {
        gst_event_unref (event);
        return FALSE;
      }
      break;
    default:
      break;
  }
  return gst_pad_event_default (pad, parent, event);
}

static GstStateChangeReturn
gst_spdl_batch_change_state (GstElement * element, GstStateChange transition)
{
  GstSpdlBatch *self = GST_SPDL_BATCH (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    GST_OBJECT_LOCK (self);
    self->batches = 0;
    self->dropped = 0;
    GST_OBJECT_UNLOCK (self);
    gst_spdl_stats_reset (&self->stats);
    self->next_index = 0;
    self->epoch = 0;
    self->caps_batch = 0;
    self->last_seq = G_MAXUINT64;
    GST_OBJECT_LOCK (self);
    self->copied = self->in_place = 0;
    GST_OBJECT_UNLOCK (self);
    reset_batch_progress (self);
    end_epoch_accounting (self);
    self->src_batches = FALSE;
    self->refused = FALSE;
  }
  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    discard_current (self);
    gst_clear_buffer (&self->last_batch);
    gst_clear_buffer (&self->src_last_batch);
    release_held (self->held_prev, &self->held_prev_n);
    release_pool (self);
    self->have_info = FALSE;
    g_clear_pointer (&self->records, gst_spdl_record_batch_free);
    g_clear_pointer (&self->prev_records, gst_spdl_record_batch_free);
    g_clear_pointer (&self->field_memories, gst_spdl_memory_cache_free);
  }
  return ret;
}

/* ------------------------------------------------------------------------ */
/* Audio clips: held until their batch ends, whose N is its longest clip's */

static void
release_held (GstBuffer ** held, guint * n)
{
  guint i;

  for (i = 0; i < *n; i++)
    gst_clear_buffer (&held[i]);
  *n = 0;
}

/* A batch's memory must fit the pool's guint size. */
static gboolean
check_audio_bytes (GstSpdlBatch * self, guint64 n)
{
  guint64 slot = 3 * sizeof (gint64);

  if (n <= (G_MAXUINT / self->size - slot) / sizeof (gfloat) /
      self->audio_channels)
    return TRUE;
  GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
      ("A batch of %u audio clips of %" G_GUINT64_FORMAT " samples and %u "
          "channels would take more than 4 GiB: use a smaller batch-size or "
          "a duration", self->size, n, self->audio_channels), (NULL));
  return FALSE;
}

static gboolean
set_audio_caps (GstSpdlBatch * self, GstCaps * caps,
    const GstSpdlTensorInfo * clip)
{
  guint channels = clip->shape[0], size;
  GstSpdlDType dtype;
  gboolean normalize;

  if (self->filled > 0 && !self->audio) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("%s and audio clips in one batch", self->clips ? "Video clips" :
            "Images"), ("new caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  if (self->filled > 0 && channels != self->audio_channels) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Audio clips of %u and of %u channels in one batch (give "
            "spdlaudiodecode a channels, or a batch-size of 1)",
            self->audio_channels, channels), ("new caps %" GST_PTR_FORMAT,
            caps));
    return FALSE;
  }
  if (channels == 0 || clip->shape[1] == 0) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Audio clips of shape [%u, %" G_GUINT64_FORMAT "] hold no sample",
            channels, clip->shape[1]), ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  /* the length may change from clip to clip: the batch pads */
  if (self->have_info && self->audio && self->pool &&
      channels == self->audio_channels)
    return TRUE;
  GST_OBJECT_LOCK (self);
  size = self->batch_size;
  self->active_layout = self->layout;
  self->active_drop_last = self->drop_last;
  self->active_pad = self->pad_short_epochs;
  dtype = self->dtype;
  normalize = self->mean->len > 0 || self->std->len > 0;
  GST_OBJECT_UNLOCK (self);
  if ((dtype != GST_SPDL_DTYPE_UINT8 && dtype != GST_SPDL_DTYPE_FLOAT32) ||
      normalize) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Audio clips are batched as float32: dtype %s, mean and std apply "
            "to images only", gst_spdl_dtype_name (dtype)), (NULL));
    return FALSE;
  }
  if (!alloc_slot_arrays (self, size))
    return FALSE;
  gst_spdl_normalizer_clear (&self->norm);
  self->active_dtype = GST_SPDL_DTYPE_FLOAT32;
  self->size = size;
  self->clips = FALSE;
  self->clip_audio = FALSE;
  self->padded = FALSE;
  self->audio = TRUE;
  self->audio_channels = channels;
  self->audio_capacity = self->audio_n = clip->shape[1];
  self->have_info = TRUE;
  if (!check_audio_bytes (self, self->audio_n))
    return FALSE;
  if (!push_caps (self, self->size))
    return FALSE;
  self->caps_audio_n = self->audio_n;
  gst_pad_check_reconfigure (self->srcpad);
  return setup_pool (self);
}

/* An audio clip or a padded batch's image, held until its batch ends */
static GstFlowReturn
hold_sample (GstSpdlBatch * self, GstBuffer * buffer,
    const GstSpdlSampleInfo * info)
{
  gsize bytes = gst_buffer_get_size (buffer);
  gsize row = (gsize) self->audio_channels * sizeof (gfloat);
  guint64 position;

  if (self->audio && (bytes == 0 || bytes % row != 0)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("An audio clip of %s is %" G_GSIZE_FORMAT " bytes, not %u-channel "
            "float32 samples", gst_spdl_buffer_get_path (buffer), bytes,
            self->audio_channels), (NULL));
    gst_buffer_unref (buffer);
    return GST_FLOW_ERROR;
  }
  self->held[self->filled] = buffer;
  self->held_info[self->filled] = self->vinfo;
  self->indices[self->filled] = info->index;
  self->filled++;
  self->epoch_delivered++;
  gst_spdl_stats_add_in (&self->stats, 1);
  /* a file's clips may end in the next batch: consumed after its last */
  if ((self->padded || gst_spdl_buffer_is_last_clip (buffer)) &&
      gst_spdl_buffer_get_sample_position (buffer, &position) &&
      (self->batch_position == G_MAXUINT64 ||
          position > self->batch_position))
    self->batch_position = position;
  if (self->filled == self->size || ends_src_batch (self, buffer))
    return finish_held_batch (self);
  return GST_FLOW_OK;
}

static void
unmap_tensors (GstBuffer * batch, GstMapInfo * maps, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    gst_memory_unmap (gst_buffer_peek_memory (batch, i), &maps[i]);
}

/* One clip into slot @i of the mapped batch: its rows, then zeros. */
static gboolean
copy_audio_clip (GstSpdlBatch * self, GstBuffer * clip, GstMapInfo * out,
    guint i)
{
  guint channels = self->audio_channels, c, number = 0;
  guint64 longest = self->audio_n, length, n;
  gfloat *dst = (gfloat *) out[IMAGES].data + (gsize) i * channels * longest;
  gdouble start = NAN;
  GstSpdlSampleInfo info;
  GstMapInfo in;

  if (!gst_buffer_map (clip, &in, GST_MAP_READ))
    return FALSE;
  n = in.size / ((gsize) channels * sizeof (gfloat));
  for (c = 0; c < channels; c++) {
    memcpy (dst + c * longest, (const gfloat *) in.data + c * n,
        n * sizeof (gfloat));
    memset (dst + c * longest + n, 0, (longest - n) * sizeof (gfloat));
  }
  gst_buffer_unmap (clip, &in);
  /* a clip from elsewhere: all its samples, no start */
  if (!gst_spdl_buffer_get_audio_clip_info (clip, &number, &start, &length))
    length = n;
  ((gint64 *) out[LABELS].data)[i] =
      gst_spdl_buffer_get_sample_info (clip, &info) ? info.label : -1;
  ((gdouble *) out[START].data)[i] = start;
  ((gint64 *) out[LENGTHS].data)[i] = MIN (length, n);
  self->clip_numbers[i] = number;
  return TRUE;
}

/* Zeros around a w x h image top-left in each of @planes planes of the
 * slot's pad_width x pad_height, @px bytes per pixel of a plane */
static void
zero_around (GstSpdlBatch * self, guint8 * dst, guint w, guint h,
    guint planes, gsize px)
{
  guint W = self->pad_width, H = self->pad_height, p, y;

  for (p = 0; p < planes; p++) {
    guint8 *plane = dst + (gsize) p * W * H * px;

    for (y = 0; y < h && w < W; y++)
      memset (plane + ((gsize) y * W + w) * px, 0, (gsize) (W - w) * px);
    memset (plane + (gsize) h * W * px, 0, (gsize) (H - h) * W * px);
  }
}

/* A held image into slot @i of the mapped padded batch: its pixels
 * top-left (normalized as any), zeros around, its size and its mask. */
static gboolean
copy_padded_image (GstSpdlBatch * self, GstBuffer * image,
    GstVideoInfo * info, GstMapInfo * out, guint i)
{
  guint w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  guint c = GST_VIDEO_INFO_N_COMPONENTS (info), W = self->pad_width, y;
  gsize elem = gst_spdl_dtype_size (self->active_dtype);
  guint8 *dst = out[IMAGES].data + i * slot_bytes (self, IMAGES);
  guint8 *mask = out[PADDING_MASK].data + i * slot_bytes (self, PADDING_MASK);
  gint64 *size = (gint64 *) out[IMAGE_SIZES].data + 2 * i;
  gboolean nchw = self->active_layout == GST_SPDL_LAYOUT_NCHW;
  GstSpdlSampleInfo sample;
  GstVideoFrame frame;

  if (!gst_video_frame_map (&frame, info, image, GST_MAP_READ))
    return FALSE;
  if (self->active_dtype != GST_SPDL_DTYPE_UINT8)
    gst_spdl_normalizer_set_width (&self->norm, w);
  copy_image (self, &frame, dst, W, self->pad_height);
  gst_video_frame_unmap (&frame);
  zero_around (self, dst, w, h, nchw ? c : 1, nchw ? elem : elem * c);
  memset (mask, 1, slot_bytes (self, PADDING_MASK));
  for (y = 0; y < h; y++)
    memset (mask + (gsize) y * W, 0, w);
  size[0] = h;
  size[1] = w;
  ((gint64 *) out[LABELS].data)[i] =
      gst_spdl_buffer_get_sample_info (image, &sample) ? sample.label : -1;
  return TRUE;
}

/* The padded size of the held images: their largest height and width
 * rounded up; FALSE (posted) when a batch of it cannot be allocated */
static gboolean
plan_padded_batch (GstSpdlBatch * self, guint * width, guint * height)
{
  guint i, w = 0, h = 0;

  for (i = 0; i < self->filled; i++) {
    w = MAX (w, (guint) GST_VIDEO_INFO_WIDTH (&self->held_info[i]));
    h = MAX (h, (guint) GST_VIDEO_INFO_HEIGHT (&self->held_info[i]));
  }
  *width = round_up (w, self->active_pad_multiple);
  *height = round_up (h, self->active_pad_multiple);
  return check_batch_bytes (self, MAX (*width, self->pad_capacity_width),
      MAX (*height, self->pad_capacity_height),
      GST_VIDEO_INFO_N_COMPONENTS (&self->vinfo), self->size);
}

/* Pushes the held clips as one batch as long as its longest clip, or the
 * held images as one padded to their largest size. */
static GstFlowReturn
finish_held_batch (GstSpdlBatch * self)
{
  guint n = self->filled, i, mapped = 0, width = 0, height = 0;
  gsize row = (gsize) self->audio_channels * sizeof (gfloat);
  guint64 longest = 0;
  GstMapInfo out[MAX_TENSORS];
  GstBuffer *batch = NULL;
  GstFlowReturn ret;
  gboolean keep, grow, changed;

  if (n == 0)
    return GST_FLOW_OK;
  if (drops_partial (self, n)) {
    GST_OBJECT_LOCK (self);
    self->dropped += n;
    GST_OBJECT_UNLOCK (self);
    release_held (self->held, &self->filled);
    reset_batch_progress (self);
    if (self->records)
      gst_spdl_record_batch_clear (self->records);
    return GST_FLOW_OK;
  }
  if (self->padded) {
    if (!plan_padded_batch (self, &width, &height)) {
      release_held (self->held, &self->filled);
      return GST_FLOW_ERROR;
    }
    grow = width > self->pad_capacity_width ||
        height > self->pad_capacity_height;
  } else {
    for (i = 0; i < n; i++)
      longest = MAX (longest, gst_buffer_get_size (self->held[i]) / row);
    grow = longest > self->audio_capacity;
    if (grow && !check_audio_bytes (self, longest)) {
      release_held (self->held, &self->filled);
      return GST_FLOW_ERROR;
    }
  }
  /* larger than the pool's (whole files, larger images), or downstream
   * asked */
  if (grow || gst_pad_check_reconfigure (self->srcpad)) {
    self->audio_capacity = self->audio_n = MAX (longest,
        self->audio_capacity);
    self->pad_capacity_width = self->pad_width = MAX (width,
        self->pad_capacity_width);
    self->pad_capacity_height = self->pad_height = MAX (height,
        self->pad_capacity_height);
    if (!setup_pool (self)) {
      release_held (self->held, &self->filled);
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Could not set up the batch memory pool"), (NULL));
      return GST_FLOW_ERROR;
    }
  }
  ret = gst_buffer_pool_acquire_buffer (self->pool, &batch, NULL);
  if (ret != GST_FLOW_OK) {
    release_held (self->held, &self->filled);
    return ret;
  }
  self->audio_n = longest;
  self->pad_width = width;
  self->pad_height = height;
  if (self->records) {
    /* slots copied from the last batch (padding) come without take_record */
    gst_spdl_record_batch_set_padded (self->records, self->padded);
    gst_spdl_record_batch_set_padded_size (self->records, width, height);
  }
  for (mapped = 0; mapped < n_tensors (self); mapped++)
    if (!gst_memory_map (gst_buffer_peek_memory (batch, mapped),
            &out[mapped], GST_MAP_WRITE))
      goto failed;
  for (i = 0; i < n; i++) {
    guint64 start = gst_spdl_now_ns ();

    if (self->padded ? !copy_padded_image (self, self->held[i],
            &self->held_info[i], out, i) : !copy_audio_clip (self,
            self->held[i], out, i))
      goto failed;
    gst_spdl_stats_record (&self->stats, gst_spdl_now_ns () - start);
  }
  unmap_tensors (batch, out, mapped);
  /* the batch is a prefix of the pool's; its reset restores the size */
  for (i = 0; i < n_tensors (self); i++)
    gst_memory_resize (gst_buffer_peek_memory (batch, i), 0,
        n * slot_bytes (self, i));
  if (!append_fields (self, batch, n)) {
    gst_buffer_unref (batch);
    release_held (self->held, &self->filled);
    return GST_FLOW_ERROR;
  }
  changed = self->padded ? width != self->caps_pad_width ||
      height != self->caps_pad_height : longest != self->caps_audio_n;
  if ((n != self->caps_batch || changed || self->records) &&
      !push_caps (self, n)) {
    gst_buffer_unref (batch);
    release_held (self->held, &self->filled);
    if (self->padded)
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
          ("Downstream does not accept a batch of %u images of %ux%u", n,
              width, height), (NULL));
    else
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
          ("Downstream does not accept a batch of %u clips of %"
              G_GUINT64_FORMAT " samples", n, longest), (NULL));
    return GST_FLOW_ERROR;
  }
  self->caps_audio_n = longest;
  gst_spdl_buffer_add_batch_meta (batch, self->epoch, self->indices, n);
  if (self->audio)
    gst_spdl_structure_set_uint64_array (gst_custom_meta_get_structure
        (gst_buffer_get_custom_meta (batch, GST_SPDL_BATCH_META_NAME)),
        "clips", self->clip_numbers, n);
  gst_spdl_buffer_set_batch_progress (batch, self->batch_position,
      self->batch_padded);
  set_batch_resume (self, batch);
  reset_batch_progress (self);
  keep = self->active_pad && self->epoch_expected != G_MAXUINT64 &&
      n == self->size;
  finish_fields (self, batch, n, keep);
  if (keep) {
    /* the source of copies when an epoch ends short at a batch boundary */
    GstBuffer **held = self->held_prev;
    guint64 *indices = self->prev_indices;
    GstVideoInfo *infos = self->held_prev_info;

    release_held (self->held_prev, &self->held_prev_n);
    self->held_prev = self->held;
    self->prev_indices = self->indices;
    self->held_prev_info = self->held_info;
    self->held_prev_n = n;
    self->held = held;
    self->indices = indices;
    self->held_info = infos;
    self->filled = 0;
  } else {
    release_held (self->held, &self->filled);
  }
  keep_src_batch (self, batch);
  GST_OBJECT_LOCK (self);
  self->batches++;
  self->copied += n;
  GST_OBJECT_UNLOCK (self);
  gst_spdl_stats_add_out (&self->stats, 1);
  return gst_pad_push (self->srcpad, batch);

failed:
  unmap_tensors (batch, out, mapped);
  gst_buffer_unref (batch);
  release_held (self->held, &self->filled);
  GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
      ("Could not map a batch or one of its %s", self->audio ? "clips" :
          "images"), (NULL));
  return GST_FLOW_ERROR;
}

/* pad-short-epochs for held samples (audio, padded images): copies of the
 * batch's own, or of the last full batch's when it has none. */
static GstFlowReturn
pad_held_epoch (GstSpdlBatch * self, guint64 target)
{
  GstFlowReturn ret = GST_FLOW_OK;
  guint real = self->filled;

  while (ret == GST_FLOW_OK && self->epoch_delivered < target) {
    GstBuffer *from;
    GstVideoInfo *info;
    GstSpdlRecordBatch *records;
    guint64 index;
    guint k;

    if (real > 0) {
      k = (self->filled - real) % real;
      from = self->held[k];
      info = &self->held_info[k];
      index = self->indices[k];
      records = self->records;
    } else if (self->held_prev_n > 0) {
      k = self->filled % self->held_prev_n;
      from = self->held_prev[k];
      info = &self->held_prev_info[k];
      index = self->prev_indices[k];
      records = self->prev_records;
    } else {
      ret = nothing_to_pad (self, target - self->epoch_delivered,
          "samples");
      break;
    }
    if (self->records)
      gst_spdl_record_batch_copy_slot (self->records, self->filled, records,
          k);
    self->held[self->filled] = gst_buffer_ref (from);
    self->held_info[self->filled] = *info;
    self->indices[self->filled] = index;
    self->filled++;
    self->batch_padded++;
    self->epoch_delivered++;
    if (self->filled == self->size) {
      ret = finish_held_batch (self);
      self->batch_position = self->epoch_last_position;
      real = 0;
    }
  }
  return ret;
}
