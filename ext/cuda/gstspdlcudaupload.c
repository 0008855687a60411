/* GStreamer SPDL CUDA plugin: batch upload
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/**
 * SECTION:element-spdlcudaupload
 * @title: spdlcudaupload
 *
 * Copies tensor batches (`other/tensors`) to CUDA device memory
 * (`other/tensors(memory:SpdlCUDA)`), with the CUDA runtime API, and can
 * turn the uint8 images (tensor 0) into normalized float tensors on the
 * device, so that the host-to-device copy stays uint8 (4x fewer bytes than
 * float32).
 *
 * The element answers the ALLOCATION query with page-locked host memory
 * (cudaHostAlloc), so spdlbatch collates images straight into it; each
 * tensor is copied with cudaMemcpyAsync on the element's own non-blocking
 * stream into device memory from a bounded pool of
 * #GstSpdlCudaUpload:device-buffers batches: nothing is allocated per batch
 * (the last, smaller batch of an epoch uses a pool batch too).
 *
 * ## Normalizing
 *
 * With #GstSpdlCudaUpload:dtype float32, float16 or bfloat16, a CUDA kernel
 * computes `(x / 255 - mean) / std` per channel in float32 (torchvision's
 * `Normalize(mean, std)(ToTensor()(image))`, rounded to the output type to
 * nearest even) from #GstSpdlCudaUpload:mean and #GstSpdlCudaUpload:std
 * (one value, or one per channel; by default 0 and 1: `x / 255`), and
 * writes #GstSpdlCudaUpload:layout (NCHW for PyTorch). The input layout is
 * read from the caps: the images are NHWC when their last dimension is 1, 3
 * or 4 channels, else NCHW. The output caps name the type as NNStreamer
 * does (`float32`, `float16`; `bfloat16`).
 *
 * ## When the data is ready
 *
 * The element does not wait for its copies: a batch leaves as soon as its
 * copy is queued. Each device memory has a ready event, recorded on the
 * upload stream after the tensor's copy (and kernel), and a release event;
 * the #GstCustomMeta "GstSpdlCudaMeta" carries "device-id", the "stream",
 * and per tensor the device "pointers", "ready-events" and
 * "release-events". A consumer waits on the ready event on its own stream
 * (cudaStreamWaitEvent: no host synchronization) and may record the release
 * event on that stream when it drops the batch: the element then makes its
 * next copy into that memory wait for it, so a consumer's kernels still
 * reading the batch never see it overwritten. spdlgst's Python loader does
 * both for torch's current stream. Mapping the memory on the host waits for
 * the ready event. #GstSpdlCudaUpload:host-sync=true waits for each copy
 * before pushing instead, for consumers that use the pointers without the
 * events.
 *
 * ## Device batches
 *
 * At most #GstSpdlCudaUpload:device-buffers batches exist: when the
 * application holds on to all of them (keeps the tensors of old batches),
 * the pipeline waits for one to come back, and after
 * #GstSpdlCudaUpload:stall-timeout the element posts a warning that says
 * so. Stopping the pipeline (or a flush) never waits for them.
 *
 * ## Record fields
 *
 * Batches of samples with fields (spdlbatch, docs/record.md) keep the
 * fixed numeric tensors of their fields (int, float, image, label) on the
 * device like the images; the tensors named NAME/values, NAME/offsets and
 * NAME/shapes (strings, JSON, bytes and npy arrays, read on the host by
 * the application) stay the host memory spdlbatch wrote: their
 * "pointers", "ready-events" and "release-events" in "GstSpdlCudaMeta" are
 * 0.
 *
 * On a machine without a CUDA device or driver the element still registers;
 * going to PAUSED fails with an error that names the CUDA error.
 *
 * |[
 * gst-launch-1.0 spdlsrc location=/data/train ! spdldecode width=224 \
 *     height=224 mode=random-resized-crop ! spdlbatch batch-size=256 ! \
 *     spdlcudaupload cuda-device-id=0 dtype=float16 layout=nchw \
 *     mean="<0.485,0.456,0.406>" std="<0.229,0.224,0.225>" ! fakesink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlcudaupload.h"
#include "gstspdlcudamemory.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <string.h>

enum
{
  PROP_0,
  PROP_DEVICE_ID,
  PROP_DEVICE_BUFFERS,
  PROP_DTYPE,
  PROP_MEAN,
  PROP_STD,
  PROP_LAYOUT,
  PROP_HOST_SYNC,
  PROP_STALL_TIMEOUT,
  PROP_STATS,
};

#define DEFAULT_DEVICE_ID 0
#define DEFAULT_DEVICE_BUFFERS 4
#define DEFAULT_DTYPE SPDL_NORM_UINT8
#define DEFAULT_LAYOUT GST_SPDL_CUDA_UPLOAD_LAYOUT_AS_INPUT
#define DEFAULT_HOST_SYNC FALSE
#define DEFAULT_STALL_TIMEOUT 10000

/* test-only: host memory stands in for the device (gstspdlcudamemory.h) */
#define EMULATE_ENV "GST_SPDL_CUDA_EMULATE"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("other/tensors, format=(string)static"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("other/tensors(" GST_CAPS_FEATURE_MEMORY_SPDL_CUDA "), "
        "format=(string)static"));

GST_DEBUG_CATEGORY_STATIC (spdl_cuda_upload_debug);
#define GST_CAT_DEFAULT spdl_cuda_upload_debug

#define GST_TYPE_SPDL_CUDA_UPLOAD_DTYPE (gst_spdl_cuda_upload_dtype_get_type ())
static GType
gst_spdl_cuda_upload_dtype_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {SPDL_NORM_UINT8, "uint8, copied as it is", "uint8"},
    {SPDL_NORM_FLOAT32, "float32, normalized", "float32"},
    {SPDL_NORM_FLOAT16, "float16, normalized", "float16"},
    {SPDL_NORM_BFLOAT16, "bfloat16, normalized", "bfloat16"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlCudaUploadDType", values));
  return type;
}

#define GST_TYPE_SPDL_CUDA_UPLOAD_LAYOUT \
  (gst_spdl_cuda_upload_layout_get_type ())
static GType
gst_spdl_cuda_upload_layout_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_CUDA_UPLOAD_LAYOUT_AS_INPUT, "The input's layout", "as-input"},
    {GST_SPDL_CUDA_UPLOAD_LAYOUT_NCHW,
        "Batch x channels x height x width (PyTorch)", "nchw"},
    {GST_SPDL_CUDA_UPLOAD_LAYOUT_NHWC, "Batch x height x width x channels",
        "nhwc"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlCudaUploadLayout", values));
  return type;
}

static const gchar *const dtype_names[] = {
  "uint8", "float32", "float16", "bfloat16"
};

static const gsize dtype_sizes[] = { 1, 4, 2, 2 };

/* ------------------------------------------------------------------------ */
/* A pool of device batches: one device memory per tensor. Acquiring never
 * blocks inside the pool: the element waits on the pool's release count
 * instead, so it can tell the user when nothing comes back, and a flush
 * wakes it. */
#define GST_TYPE_SPDL_CUDA_POOL (gst_spdl_cuda_pool_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlCudaPool, gst_spdl_cuda_pool, GST,
    SPDL_CUDA_POOL, GstBufferPool)

struct _GstSpdlCudaPool
{
  GstBufferPool parent;
  GstAllocator *allocator;
  gsize sizes[GST_SPDL_TENSOR_MAX];
  guint n;
  /* the batch's tensors that are the input's host memory, inserted among
   * the pool's n device tensors and taken out on release */
  gboolean host[GST_SPDL_TENSOR_MAX];
  guint n_all;

  GMutex lock;
  GCond cond;
  guint64 released;             /* buffers given back, ever */
  gboolean flushing;
};

G_DEFINE_TYPE (GstSpdlCudaPool, gst_spdl_cuda_pool, GST_TYPE_BUFFER_POOL);

typedef enum
{
  POOL_WAIT_RELEASED,
  POOL_WAIT_FLUSHING,
  POOL_WAIT_TIMEOUT,
} PoolWait;

static GstBuffer *
device_batch_new (GstAllocator * allocator, const gsize * sizes, guint n)
{
  GstBuffer *buffer = gst_buffer_new ();
  guint i;

  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_allocator_alloc (allocator, sizes[i], NULL);
    if (mem == NULL) {
      gst_buffer_unref (buffer);
      return NULL;
    }
    gst_buffer_append_memory (buffer, mem);
  }
  return buffer;
}

static GstFlowReturn
gst_spdl_cuda_pool_alloc (GstBufferPool * pool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * params)
{
  GstSpdlCudaPool *self = GST_SPDL_CUDA_POOL (pool);

  *buffer = device_batch_new (self->allocator, self->sizes, self->n);
  return *buffer ? GST_FLOW_OK : GST_FLOW_ERROR;
}

/* A short batch used part of each memory: give them their full size back */
static void
gst_spdl_cuda_pool_reset (GstBufferPool * pool, GstBuffer * buffer)
{
  GstSpdlCudaPool *self = GST_SPDL_CUDA_POOL (pool);
  gboolean had_host = self->n_all != self->n &&
      gst_buffer_n_memory (buffer) == self->n_all;
  gint i;

  if (had_host)
    for (i = self->n_all - 1; i >= 0; i--)
      if (self->host[i])
        gst_buffer_remove_memory (buffer, i);
  for (i = 0; i < (gint) self->n && i < (gint) gst_buffer_n_memory (buffer);
      i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    if (mem->size != self->sizes[i])
      gst_memory_resize (mem, 0, self->sizes[i]);
  }
  GST_BUFFER_POOL_CLASS (gst_spdl_cuda_pool_parent_class)->reset_buffer
      (pool, buffer);
  /* its device memories are the pool's again */
  if (had_host)
    GST_BUFFER_FLAG_UNSET (buffer, GST_BUFFER_FLAG_TAG_MEMORY);
}

static void
gst_spdl_cuda_pool_release (GstBufferPool * pool, GstBuffer * buffer)
{
  GstSpdlCudaPool *self = GST_SPDL_CUDA_POOL (pool);

  GST_BUFFER_POOL_CLASS (gst_spdl_cuda_pool_parent_class)->release_buffer
      (pool, buffer);
  g_mutex_lock (&self->lock);
  self->released++;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

static void
gst_spdl_cuda_pool_set_waits_flushing (GstSpdlCudaPool * self,
    gboolean flushing)
{
  g_mutex_lock (&self->lock);
  self->flushing = flushing;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

static void
gst_spdl_cuda_pool_flush_start (GstBufferPool * pool)
{
  gst_spdl_cuda_pool_set_waits_flushing (GST_SPDL_CUDA_POOL (pool), TRUE);
}

static void
gst_spdl_cuda_pool_flush_stop (GstBufferPool * pool)
{
  gst_spdl_cuda_pool_set_waits_flushing (GST_SPDL_CUDA_POOL (pool), FALSE);
}

static guint64
gst_spdl_cuda_pool_released (GstSpdlCudaPool * self)
{
  guint64 released;

  g_mutex_lock (&self->lock);
  released = self->released;
  g_mutex_unlock (&self->lock);
  return released;
}

/* Waits until a buffer comes back after @released (a count read before the
 * acquire that found none), a flush, or @deadline (monotonic µs, -1: none) */
static PoolWait
gst_spdl_cuda_pool_wait (GstSpdlCudaPool * self, guint64 released,
    gint64 deadline)
{
  PoolWait ret = POOL_WAIT_RELEASED;

  g_mutex_lock (&self->lock);
  while (self->released == released && !self->flushing) {
    if (deadline < 0) {
      g_cond_wait (&self->cond, &self->lock);
    } else if (!g_cond_wait_until (&self->cond, &self->lock, deadline)) {
      ret = POOL_WAIT_TIMEOUT;
      break;
    }
  }
  if (self->flushing)
    ret = POOL_WAIT_FLUSHING;
  g_mutex_unlock (&self->lock);
  return ret;
}

static void
gst_spdl_cuda_pool_finalize (GObject * object)
{
  GstSpdlCudaPool *self = GST_SPDL_CUDA_POOL (object);

  gst_clear_object (&self->allocator);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  G_OBJECT_CLASS (gst_spdl_cuda_pool_parent_class)->finalize (object);
}

static void
gst_spdl_cuda_pool_class_init (GstSpdlCudaPoolClass * klass)
{
  GstBufferPoolClass *pool_class = GST_BUFFER_POOL_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = gst_spdl_cuda_pool_finalize;
  pool_class->alloc_buffer = gst_spdl_cuda_pool_alloc;
  pool_class->reset_buffer = gst_spdl_cuda_pool_reset;
  pool_class->release_buffer = gst_spdl_cuda_pool_release;
  pool_class->flush_start = gst_spdl_cuda_pool_flush_start;
  pool_class->flush_stop = gst_spdl_cuda_pool_flush_stop;
}

static void
gst_spdl_cuda_pool_init (GstSpdlCudaPool * self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
}

/* ------------------------------------------------------------------------ */

#define gst_spdl_cuda_upload_parent_class parent_class
G_DEFINE_TYPE (GstSpdlCudaUpload, gst_spdl_cuda_upload,
    GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (spdlcudaupload, "spdlcudaupload", GST_RANK_NONE,
    GST_TYPE_SPDL_CUDA_UPLOAD);

static void gst_spdl_cuda_upload_finalize (GObject * object);
static void gst_spdl_cuda_upload_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_spdl_cuda_upload_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static GstStateChangeReturn gst_spdl_cuda_upload_change_state (GstElement *
    element, GstStateChange transition);
static gboolean gst_spdl_cuda_upload_start (GstBaseTransform * trans);
static gboolean gst_spdl_cuda_upload_stop (GstBaseTransform * trans);
static gboolean gst_spdl_cuda_upload_sink_event (GstBaseTransform * trans,
    GstEvent * event);
static GstCaps *gst_spdl_cuda_upload_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter);
static gboolean gst_spdl_cuda_upload_set_caps (GstBaseTransform * trans,
    GstCaps * incaps, GstCaps * outcaps);
static gboolean gst_spdl_cuda_upload_propose_allocation (GstBaseTransform *
    trans, GstQuery * decide_query, GstQuery * query);
static GstFlowReturn gst_spdl_cuda_upload_prepare_output_buffer
    (GstBaseTransform * trans, GstBuffer * input, GstBuffer ** outbuf);
static GstFlowReturn gst_spdl_cuda_upload_transform (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer * outbuf);

static GParamSpec *
channel_values_spec (const gchar * name, const gchar * nick,
    const gchar * blurb)
{
  return gst_param_spec_array (name, nick, blurb,
      g_param_spec_double ("value", "Value", "One channel's value",
          -G_MAXDOUBLE, G_MAXDOUBLE, 0,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS),
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
}

static void
gst_spdl_cuda_upload_class_init (GstSpdlCudaUploadClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_spdl_cuda_upload_set_property;
  gobject_class->get_property = gst_spdl_cuda_upload_get_property;
  gobject_class->finalize = gst_spdl_cuda_upload_finalize;

  g_object_class_install_property (gobject_class, PROP_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device to upload to", 0, G_MAXINT, DEFAULT_DEVICE_ID,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlCudaUpload:device-buffers:
   *
   * Device batches allocated up front and reused: at most this many full
   * batches are alive downstream at once (the consumer included). A
   * training loop that keeps references to this many batches stalls the
   * pipeline (see #GstSpdlCudaUpload:stall-timeout).
   */
  g_object_class_install_property (gobject_class, PROP_DEVICE_BUFFERS,
      g_param_spec_uint ("device-buffers", "Device buffers",
          "Device batches kept in flight and reused", 2, 64,
          DEFAULT_DEVICE_BUFFERS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlCudaUpload:dtype:
   *
   * Type of the images tensor on the device: uint8 copies the bytes;
   * float32, float16 and bfloat16 normalize them on the device with
   * #GstSpdlCudaUpload:mean and #GstSpdlCudaUpload:std.
   */
  g_object_class_install_property (gobject_class, PROP_DTYPE,
      g_param_spec_enum ("dtype", "Data type",
          "Type of the images tensor on the device",
          GST_TYPE_SPDL_CUDA_UPLOAD_DTYPE, DEFAULT_DTYPE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlCudaUpload:mean:
   *
   * Subtracted from x / 255: one value for all channels or one per channel,
   * e.g. mean="<0.485,0.456,0.406>" (ImageNet's). Empty: 0. Needs a float
   * #GstSpdlCudaUpload:dtype.
   */
  g_object_class_install_property (gobject_class, PROP_MEAN,
      channel_values_spec ("mean", "Mean",
          "Per-channel mean subtracted from x/255 (1 or 3 values)"));
  /**
   * GstSpdlCudaUpload:std:
   *
   * Divides x / 255 - mean: one value for all channels or one per channel,
   * e.g. std="<0.229,0.224,0.225>". Empty: 1. Needs a float
   * #GstSpdlCudaUpload:dtype.
   */
  g_object_class_install_property (gobject_class, PROP_STD,
      channel_values_spec ("std", "Standard deviation",
          "Per-channel standard deviation dividing x/255-mean "
          "(1 or 3 values)"));
  g_object_class_install_property (gobject_class, PROP_LAYOUT,
      g_param_spec_enum ("layout", "Layout",
          "Layout of the images tensor on the device",
          GST_TYPE_SPDL_CUDA_UPLOAD_LAYOUT, DEFAULT_LAYOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlCudaUpload:host-sync:
   *
   * Wait on the host for each batch's copy before pushing it, for consumers
   * that use the device pointers without waiting on the batch's ready
   * events. Off, the copy of a batch overlaps with everything else.
   */
  g_object_class_install_property (gobject_class, PROP_HOST_SYNC,
      g_param_spec_boolean ("host-sync", "Host sync",
          "Wait for each copy on the host before pushing the batch",
          DEFAULT_HOST_SYNC,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlCudaUpload:stall-timeout:
   *
   * When the element has waited this long for a device batch to come back
   * (all #GstSpdlCudaUpload:device-buffers are held downstream, usually by
   * the application), it posts a warning; it keeps waiting. 0: never warn.
   */
  g_object_class_install_property (gobject_class, PROP_STALL_TIMEOUT,
      g_param_spec_uint ("stall-timeout", "Stall timeout",
          "Warn after waiting this long (ms) for a device batch to come "
          "back (0: never)", 0, G_MAXUINT, DEFAULT_STALL_TIMEOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Batches, bytes and upload times (spdl-stats fields and bytes)",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "SPDL CUDA upload", "Filter/Converter/Tensor/Hardware",
      "Uploads tensor batches to CUDA device memory through pinned memory, "
      "normalizing images on the device",
      "gst-spdl authors");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_change_state);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_sink_event);
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_transform_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_set_caps);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_propose_allocation);
  trans_class->prepare_output_buffer =
      GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_prepare_output_buffer);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_transform);
  trans_class->passthrough_on_same_caps = FALSE;

  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_CUDA_UPLOAD_DTYPE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_CUDA_UPLOAD_LAYOUT, 0);
  GST_DEBUG_CATEGORY_INIT (spdl_cuda_upload_debug, "spdlcudaupload", 0,
      "SPDL CUDA upload");
}

static void
gst_spdl_cuda_upload_init (GstSpdlCudaUpload * self)
{
  self->device_id = DEFAULT_DEVICE_ID;
  self->device_buffers = DEFAULT_DEVICE_BUFFERS;
  self->dtype = DEFAULT_DTYPE;
  self->layout = DEFAULT_LAYOUT;
  self->host_sync = DEFAULT_HOST_SYNC;
  self->stall_timeout = DEFAULT_STALL_TIMEOUT;
  g_queue_init (&self->inflight);
  g_queue_init (&self->spare_events);
  gst_spdl_stats_init (&self->stats);
}

static void
gst_spdl_cuda_upload_finalize (GObject * object)
{
  gst_spdl_stats_clear (&GST_SPDL_CUDA_UPLOAD (object)->stats);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
channels_from_value (GstSpdlCudaUploadChannels * ch, const GValue * value)
{
  guint i;

  ch->n = gst_value_array_get_size (value);
  for (i = 0; i < MIN (ch->n, GST_SPDL_CUDA_UPLOAD_MAX_CHANNELS); i++)
    ch->values[i] = g_value_get_double (gst_value_array_get_value (value, i));
}

static void
channels_to_value (const GstSpdlCudaUploadChannels * ch, GValue * value)
{
  GValue item = G_VALUE_INIT;
  guint i;

  g_value_init (&item, G_TYPE_DOUBLE);
  for (i = 0; i < MIN (ch->n, GST_SPDL_CUDA_UPLOAD_MAX_CHANNELS); i++) {
    g_value_set_double (&item, ch->values[i]);
    gst_value_array_append_value (value, &item);
  }
  g_value_unset (&item);
}

static void
gst_spdl_cuda_upload_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      self->device_id = g_value_get_int (value);
      break;
    case PROP_DEVICE_BUFFERS:
      self->device_buffers = g_value_get_uint (value);
      break;
    case PROP_DTYPE:
      self->dtype = g_value_get_enum (value);
      break;
    case PROP_MEAN:
      channels_from_value (&self->mean, value);
      break;
    case PROP_STD:
      channels_from_value (&self->std, value);
      break;
    case PROP_LAYOUT:
      self->layout = g_value_get_enum (value);
      break;
    case PROP_HOST_SYNC:
      self->host_sync = g_value_get_boolean (value);
      break;
    case PROP_STALL_TIMEOUT:
      self->stall_timeout = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_spdl_cuda_upload_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      g_value_set_int (value, self->device_id);
      break;
    case PROP_DEVICE_BUFFERS:
      g_value_set_uint (value, self->device_buffers);
      break;
    case PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    case PROP_MEAN:
      channels_to_value (&self->mean, value);
      break;
    case PROP_STD:
      channels_to_value (&self->std, value);
      break;
    case PROP_LAYOUT:
      g_value_set_enum (value, self->layout);
      break;
    case PROP_HOST_SYNC:
      g_value_set_boolean (value, self->host_sync);
      break;
    case PROP_STALL_TIMEOUT:
      g_value_set_uint (value, self->stall_timeout);
      break;
    case PROP_STATS:{
      GstStructure *st = gst_spdl_stats_to_structure (&self->stats);
      gst_structure_set (st, "bytes", G_TYPE_UINT64, self->uploaded_bytes,
          NULL);
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
/* Settings */

/* Fills the normalization's per-channel values; FALSE with @why set when
 * the properties do not make sense. */
static gboolean
channels_valid (const GstSpdlCudaUploadChannels * ch, const gchar * name,
    gboolean is_std, gchar ** why)
{
  guint i;

  if (ch->n != 0 && ch->n != 1 && ch->n != 3) {
    *why = g_strdup_printf ("%s has %u values: give 1, or 3 (one per "
        "channel)", name, ch->n);
    return FALSE;
  }
  for (i = 0; i < ch->n; i++) {
    if (!isfinite (ch->values[i]) || (is_std && ch->values[i] == 0)) {
      *why = g_strdup_printf ("%s value %g is not usable", name,
          ch->values[i]);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
settings_valid (GstSpdlCudaUpload * self, gchar ** why)
{
  gboolean ok;

  GST_OBJECT_LOCK (self);
  ok = channels_valid (&self->mean, "mean", FALSE, why) &&
      channels_valid (&self->std, "std", TRUE, why);
  if (ok && self->dtype == SPDL_NORM_UINT8 && (self->mean.n || self->std.n)) {
    *why = g_strdup ("mean and std need a float dtype (float32, float16 or "
        "bfloat16)");
    ok = FALSE;
  }
  GST_OBJECT_UNLOCK (self);
  return ok;
}

static gboolean
converts (GstSpdlCudaUpload * self)
{
  gboolean convert;

  GST_OBJECT_LOCK (self);
  convert = self->dtype != SPDL_NORM_UINT8 ||
      self->layout != GST_SPDL_CUDA_UPLOAD_LAYOUT_AS_INPUT;
  GST_OBJECT_UNLOCK (self);
  return convert;
}

/* The images tensor (4-D uint8) and whether its channels come last */
static gboolean
images_channels_last (const GstSpdlTensorInfo * t, gboolean * channels_last)
{
  if (t->n_dims != 4 || t->dtype != GST_SPDL_DTYPE_UINT8)
    return FALSE;
  if (t->shape[3] >= 1 && t->shape[3] <= 4)
    *channels_last = TRUE;
  else if (t->shape[1] >= 1 && t->shape[1] <= 4)
    *channels_last = FALSE;
  else
    return FALSE;
  return TRUE;
}

static gboolean
out_channels_last (GstSpdlCudaUpload * self, gboolean in_channels_last)
{
  GstSpdlCudaUploadLayout layout;

  GST_OBJECT_LOCK (self);
  layout = self->layout;
  GST_OBJECT_UNLOCK (self);
  if (layout == GST_SPDL_CUDA_UPLOAD_LAYOUT_AS_INPUT)
    return in_channels_last;
  return layout == GST_SPDL_CUDA_UPLOAD_LAYOUT_NHWC;
}

/* ------------------------------------------------------------------------ */
/* Start and stop */

static gboolean
open_device (GstSpdlCudaUpload * self)
{
  GstSpdlCudaDeviceScope scope;
  cudaStream_t stream = NULL;
  cudaError_t err;
  gint count = 0;

  err = cudaGetDeviceCount (&count);
  if (err != cudaSuccess || count == 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No CUDA device available: %s", err != cudaSuccess ?
            cudaGetErrorString (err) : "the driver reports no device"),
        ("cudaGetDeviceCount: %s (%d), %d devices", cudaGetErrorName (err),
            err, count));
    return FALSE;
  }
  if (self->active_device >= count) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No CUDA device %d: this machine has %d", self->active_device,
            count), (NULL));
    return FALSE;
  }
  /* start() runs on the application's thread: leave its device alone */
  err = cudaErrorInvalidDevice;
  if (gst_spdl_cuda_device_enter (&scope, self->active_device)) {
    err = cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking);
    gst_spdl_cuda_device_leave (&scope);
  }
  if (err != cudaSuccess) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not use CUDA device %d: %s", self->active_device,
            cudaGetErrorString (err)), (NULL));
    return FALSE;
  }
  self->stream = stream;
  self->host_allocator = gst_spdl_cuda_host_allocator_new (self->active_device);
  GST_INFO_OBJECT (self, "uploading to CUDA device %d of %d",
      self->active_device, count);
  return TRUE;
}

static gboolean
gst_spdl_cuda_upload_start (GstBaseTransform * trans)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  gchar *why = NULL;

  if (!settings_valid (self, &why)) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("%s", why), (NULL));
    g_free (why);
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  self->active_device = self->device_id;
  self->active_buffers = self->device_buffers;
  self->active_host_sync = self->host_sync;
  self->uploaded_bytes = 0;
  self->flushing = FALSE;
  GST_OBJECT_UNLOCK (self);
  gst_spdl_stats_reset (&self->stats);
  self->emulated = g_getenv (EMULATE_ENV) != NULL;
  if (self->emulated)
    GST_WARNING_OBJECT (self, "%s is set: host memory stands in for the "
        "device (tests only)", EMULATE_ENV);
  else if (!open_device (self))
    return FALSE;
  self->device_allocator =
      gst_spdl_cuda_device_allocator_new (self->active_device, self->emulated);
  return TRUE;
}

static void
release_pool (GstSpdlCudaUpload * self)
{
  GstBufferPool *pool;

  GST_OBJECT_LOCK (self);
  pool = self->pool;
  self->pool = NULL;
  GST_OBJECT_UNLOCK (self);
  if (pool) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
}

typedef struct
{
  GstBuffer *input;
  cudaEvent_t copied;
} InflightInput;

/* Inputs held while their copies run: a copy takes far less than making a
 * batch, so the oldest is nearly always done already; the bound keeps an
 * upstream pool of few buffers (spdlbatch's grows) from running dry. */
#define MAX_INFLIGHT_INPUTS 2

/* Gives back the inputs whose copies are done (all with @wait_all) */
static void
release_inputs (GstSpdlCudaUpload * self, gboolean wait_all)
{
  InflightInput *in;

  while ((in = g_queue_peek_head (&self->inflight))) {
    if (wait_all || g_queue_get_length (&self->inflight) >
        MAX_INFLIGHT_INPUTS)
      cudaEventSynchronize (in->copied);
    else if (cudaEventQuery (in->copied) == cudaErrorNotReady)
      break;
    g_queue_pop_head (&self->inflight);
    gst_buffer_unref (in->input);
    g_queue_push_tail (&self->spare_events, in->copied);
    g_free (in);
  }
}

static void
close_device (GstSpdlCudaUpload * self)
{
  GstSpdlCudaDeviceScope scope;
  gpointer event;

  if (!gst_spdl_cuda_device_enter (&scope, self->active_device))
    return;
  cudaStreamSynchronize ((cudaStream_t) self->stream);
  release_inputs (self, TRUE);
  while ((event = g_queue_pop_head (&self->spare_events)))
    cudaEventDestroy ((cudaEvent_t) event);
  if (self->staging)
    cudaFree (self->staging);
  self->staging = NULL;
  self->staging_size = 0;
  cudaStreamDestroy ((cudaStream_t) self->stream);
  self->stream = NULL;
  gst_spdl_cuda_device_leave (&scope);
}

static gboolean
gst_spdl_cuda_upload_stop (GstBaseTransform * trans)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);

  /* the copies finish before the pool frees the memory they write */
  if (self->stream)
    close_device (self);
  release_pool (self);
  gst_clear_object (&self->host_allocator);
  gst_clear_object (&self->device_allocator);
  return TRUE;
}

/* Wakes (and keeps from blocking) a streaming thread that waits for a
 * device batch: on the way to READY and during flushes. */
static void
set_flushing (GstSpdlCudaUpload * self, gboolean flushing)
{
  GstBufferPool *pool;

  GST_OBJECT_LOCK (self);
  self->flushing = flushing;
  pool = self->pool ? gst_object_ref (self->pool) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (pool == NULL)
    return;
  if (gst_buffer_pool_is_active (pool))
    gst_buffer_pool_set_flushing (pool, flushing);
  gst_object_unref (pool);
}

static GstStateChangeReturn
gst_spdl_cuda_upload_change_state (GstElement * element,
    GstStateChange transition)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (element);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    set_flushing (self, TRUE);
  else if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    set_flushing (self, FALSE);
  return GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
}

static gboolean
gst_spdl_cuda_upload_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);

  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_START)
    set_flushing (self, TRUE);
  else if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    set_flushing (self, FALSE);
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* ------------------------------------------------------------------------ */
/* Caps */

/* tensor 0's entry of a ','-separated caps field replaced by @first */
static gchar *
replace_first_entry (const gchar * list, const gchar * first)
{
  const gchar *rest = strchr (list, ',');

  return g_strconcat (first, rest ? rest : "", NULL);
}

static gchar *
images_dims_string (const GstSpdlTensorInfo * t, gboolean in_last,
    gboolean out_last)
{
  guint64 n = t->shape[0];
  guint64 c = in_last ? t->shape[3] : t->shape[1];
  guint64 h = in_last ? t->shape[1] : t->shape[2];
  guint64 w = in_last ? t->shape[2] : t->shape[3];

  /* innermost first, as NNStreamer writes them */
  if (out_last)
    return g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ":%"
        G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, c, w, h, n);
  return g_strdup_printf ("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ":%"
      G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, w, h, c, n);
}

/* Rewrites the images tensor of a fixed input structure into what the
 * element outputs */
static void
convert_structure (GstSpdlCudaUpload * self, GstStructure * s)
{
  GstSpdlTensorInfo t[GST_SPDL_TENSOR_MAX];
  GstCaps *one = gst_caps_new_full (gst_structure_copy (s), NULL);
  guint n = gst_spdl_tensors_from_caps (one, t, GST_SPDL_TENSOR_MAX);
  gboolean in_last = FALSE, out_last;
  gchar *dims, *types;
  SpdlNormDType dtype;

  gst_caps_unref (one);
  if (n == 0) {
    /* not fixed yet (a caps query): say nothing about the tensors */
    gst_structure_remove_fields (s, "dimensions", "types", NULL);
    return;
  }
  /* set_caps says what is wrong with them */
  if (!images_channels_last (&t[0], &in_last))
    return;
  out_last = out_channels_last (self, in_last);
  GST_OBJECT_LOCK (self);
  dtype = self->dtype;
  GST_OBJECT_UNLOCK (self);
  {
    gchar *img_dims = images_dims_string (&t[0], in_last, out_last);
    dims = replace_first_entry (gst_structure_get_string (s, "dimensions"),
        img_dims);
    types = replace_first_entry (gst_structure_get_string (s, "types"),
        dtype_names[dtype]);
    g_free (img_dims);
  }
  gst_structure_set (s, "dimensions", G_TYPE_STRING, dims, "types",
      G_TYPE_STRING, types, NULL);
  g_free (dims);
  g_free (types);
}

static GstCaps *
gst_spdl_cuda_upload_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  GstCaps *out = gst_caps_new_empty ();
  gboolean convert = converts (self);
  gint device_id;
  guint i;

  GST_OBJECT_LOCK (self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK (self);
  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *f;

    if (direction == GST_PAD_SINK) {
      if (convert)
        convert_structure (self, s);
      f = gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_SPDL_CUDA, NULL);
      gst_structure_set (s, "cuda-device-id", G_TYPE_INT, device_id, NULL);
    } else {
      /* any images the element can turn into these */
      if (convert)
        gst_structure_remove_fields (s, "dimensions", "types", NULL);
      f = gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY, NULL);
      gst_structure_remove_field (s, "cuda-device-id");
    }
    gst_caps_append_structure_full (out, s, f);
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, out,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (out);
    out = tmp;
  }
  GST_DEBUG_OBJECT (self, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "sink" : "src", caps, out);
  return out;
}

/* The normalization of the images tensor for these caps */
static gboolean
setup_conversion (GstSpdlCudaUpload * self, gchar ** why)
{
  const GstSpdlTensorInfo *t = &self->tensors[0];
  SpdlNormalizeParams *p = &self->norm;
  gboolean in_last;
  guint c, i;

  self->convert = converts (self);
  if (!self->convert)
    return TRUE;
  if (!images_channels_last (t, &in_last)) {
    *why = g_strdup ("tensor 0 is not a batch of uint8 images (N x H x W x C "
        "or N x C x H x W, 1 to 4 channels)");
    return FALSE;
  }
  memset (p, 0, sizeof *p);
  p->in_channels_last = in_last;
  p->out_channels_last = out_channels_last (self, in_last);
  p->n = t->shape[0];
  p->c = c = in_last ? t->shape[3] : t->shape[1];
  p->h = in_last ? t->shape[1] : t->shape[2];
  p->w = in_last ? t->shape[2] : t->shape[3];
  GST_OBJECT_LOCK (self);
  p->dtype = self->dtype;
  if ((self->mean.n > 1 && self->mean.n != c) ||
      (self->std.n > 1 && self->std.n != c)) {
    *why = g_strdup_printf ("mean and std have %u and %u values for images "
        "of %u channels", self->mean.n, self->std.n, c);
    GST_OBJECT_UNLOCK (self);
    return FALSE;
  }
  for (i = 0; i < c; i++) {
    p->mean[i] = self->mean.n == 0 ? 0.0f :
        (gfloat) self->mean.values[self->mean.n > 1 ? i : 0];
    p->std[i] = self->std.n == 0 ? 1.0f :
        (gfloat) self->std.values[self->std.n > 1 ? i : 0];
  }
  GST_OBJECT_UNLOCK (self);
  if (spdl_normalize_n_elements (p) > G_MAXUINT32) {
    *why = g_strdup ("the images tensor has 2^32 elements or more");
    return FALSE;
  }
  return TRUE;
}

static gsize
output_size (GstSpdlCudaUpload * self, guint tensor, gsize input_size)
{
  return (tensor == 0 && self->convert) ?
      input_size * dtype_sizes[self->norm.dtype] : input_size;
}

/* @sizes: of the device tensors, in order */
static gboolean
pool_fits (GstSpdlCudaPool * pool, const gsize * sizes, guint n,
    const gboolean * host, guint n_all)
{
  guint i;

  if (pool->n != n || pool->n_all != n_all ||
      memcmp (pool->host, host, sizeof (gboolean) * n_all) != 0)
    return FALSE;
  for (i = 0; i < n; i++)
    if (sizes[i] > pool->sizes[i])
      return FALSE;
  return TRUE;
}

/* A record field's tensor read on the host: NAME/values, NAME/offsets,
 * NAME/shapes in the caps' names */
static void
find_host_tensors (GstSpdlCudaUpload * self, const GstCaps * caps)
{
  const gchar *names = gst_structure_get_string (gst_caps_get_structure (caps,
          0), "names");
  gchar **list = names ? g_strsplit (names, ",", -1) : NULL;
  guint i;

  for (i = 0; i < GST_SPDL_TENSOR_MAX; i++)
    self->host[i] = FALSE;
  for (i = 0; list && list[i] && i < self->n_tensors; i++)
    self->host[i] = g_str_has_suffix (list[i], "/values") ||
        g_str_has_suffix (list[i], "/offsets") ||
        g_str_has_suffix (list[i], "/shapes") ||
        gst_spdl_tensor_info_is_variable (&self->tensors[i]);
  g_strfreev (list);
}

static gboolean
setup_pool (GstSpdlCudaUpload * self, GstCaps * outcaps)
{
  GstSpdlCudaPool *pool;
  GstStructure *config;
  gsize sizes[GST_SPDL_TENSOR_MAX], total = 0;
  gboolean flushing;
  guint i, n = 0;

  for (i = 0; i < self->n_tensors; i++) {
    if (self->host[i])
      continue;
    sizes[n] = output_size (self, i,
        gst_spdl_tensor_info_size (&self->tensors[i]));
    total += sizes[n++];
  }
  /* a smaller batch (an epoch's last) uses part of the batches we have */
  GST_OBJECT_LOCK (self);
  pool = self->pool ? GST_SPDL_CUDA_POOL (self->pool) : NULL;
  if (pool && pool_fits (pool, sizes, n, self->host, self->n_tensors)) {
    GST_OBJECT_UNLOCK (self);
    return TRUE;
  }
  GST_OBJECT_UNLOCK (self);
  release_pool (self);

  pool = g_object_new (GST_TYPE_SPDL_CUDA_POOL, NULL);
  gst_object_ref_sink (pool);
  pool->allocator = gst_object_ref (self->device_allocator);
  pool->n = n;
  memcpy (pool->sizes, sizes, sizeof (sizes[0]) * n);
  pool->n_all = self->n_tensors;
  memcpy (pool->host, self->host, sizeof (gboolean) * self->n_tensors);
  config = gst_buffer_pool_get_config (GST_BUFFER_POOL (pool));
  gst_buffer_pool_config_set_params (config, outcaps, total,
      self->active_buffers, self->active_buffers);
  if (!gst_buffer_pool_set_config (GST_BUFFER_POOL (pool), config) ||
      !gst_buffer_pool_set_active (GST_BUFFER_POOL (pool), TRUE)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not allocate %u device batches of %" G_GSIZE_FORMAT
            " bytes on CUDA device %d", self->active_buffers, total,
            self->active_device), (NULL));
    gst_object_unref (pool);
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  self->pool = GST_BUFFER_POOL (pool);
  flushing = self->flushing;
  GST_OBJECT_UNLOCK (self);
  if (flushing)
    gst_buffer_pool_set_flushing (GST_BUFFER_POOL (pool), TRUE);
  return TRUE;
}

static gboolean
gst_spdl_cuda_upload_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  gchar *why = NULL;
  guint n;

  n = gst_spdl_tensors_from_caps (incaps, self->tensors, GST_SPDL_TENSOR_MAX);
  if (n == 0) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Unsupported tensor caps"),
        ("%" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  self->n_tensors = n;
  find_host_tensors (self, incaps);
  if (!setup_conversion (self, &why)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Cannot normalize: %s", why),
        ("%" GST_PTR_FORMAT, incaps));
    g_free (why);
    return FALSE;
  }
  return setup_pool (self, outcaps);
}

static gboolean
gst_spdl_cuda_upload_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  GstAllocationParams params;

  if (self->host_allocator == NULL)
    return FALSE;
  /* upstream writes batches straight into page-locked memory */
  gst_allocation_params_init (&params);
  params.align = 63;
  gst_query_add_allocation_param (query, self->host_allocator, &params);
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Streaming */

static void
warn_stalled (GstSpdlCudaUpload * self, guint timeout_ms)
{
  GST_ELEMENT_WARNING (self, RESOURCE, BUSY,
      ("All %u device batches are held downstream and none came back for "
          "%u ms: the application keeps the batches it pulled (or consumes "
          "slower than that). Release old batches, or raise device-buffers",
          self->active_buffers, timeout_ms),
      ("waiting for a free device batch (device-buffers=%u, "
          "stall-timeout=%u)", self->active_buffers, timeout_ms));
}

/* A device batch from the pool: waits for one to come back, warns once
 * after stall-timeout, returns FLUSHING as soon as the element flushes. */
static GstFlowReturn
acquire_device_batch (GstSpdlCudaUpload * self, GstBufferPool * pool,
    GstBuffer ** outbuf)
{
  GstSpdlCudaPool *cpool = GST_SPDL_CUDA_POOL (pool);
  GstBufferPoolAcquireParams params = {
    .flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT
  };
  gint64 since = 0;
  gboolean warned = FALSE;

  for (;;) {
    guint64 released = gst_spdl_cuda_pool_released (cpool);
    GstFlowReturn ret = gst_buffer_pool_acquire_buffer (pool, outbuf, &params);
    gint64 deadline = -1;
    guint timeout_ms;

    if (ret != GST_FLOW_EOS) {
      if (warned)
        GST_INFO_OBJECT (self, "a device batch came back after %"
            G_GINT64_FORMAT " ms", (g_get_monotonic_time () - since) / 1000);
      return ret;
    }
    if (since == 0)
      since = g_get_monotonic_time ();
    GST_OBJECT_LOCK (self);
    timeout_ms = self->stall_timeout;
    GST_OBJECT_UNLOCK (self);
    if (timeout_ms > 0 && !warned)
      deadline = since + (gint64) timeout_ms *1000;
    switch (gst_spdl_cuda_pool_wait (cpool, released, deadline)) {
      case POOL_WAIT_FLUSHING:
        return GST_FLOW_FLUSHING;
      case POOL_WAIT_TIMEOUT:
        warn_stalled (self, timeout_ms);
        warned = TRUE;
        break;
      case POOL_WAIT_RELEASED:
        break;
    }
  }
}

static GstFlowReturn
gst_spdl_cuda_upload_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * input, GstBuffer ** outbuf)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  gsize sizes[GST_SPDL_TENSOR_MAX];
  GstBufferPool *pool;
  GstFlowReturn ret;
  guint i, n = gst_buffer_n_memory (input), n_device = 0;

  GST_OBJECT_LOCK (self);
  pool = self->pool ? gst_object_ref (self->pool) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (pool == NULL)
    return GST_FLOW_NOT_NEGOTIATED;
  for (i = 0; i < n && i < GST_SPDL_TENSOR_MAX; i++)
    if (!self->host[i])
      sizes[n_device++] = output_size (self, i,
          gst_buffer_peek_memory (input, i)->size);
  if (n != self->n_tensors ||
      !pool_fits (GST_SPDL_CUDA_POOL (pool), sizes, n_device, self->host, n)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("A batch does not match its caps"),
        ("%u memories, larger than the caps say", n));
    gst_object_unref (pool);
    return GST_FLOW_ERROR;
  }
  ret = acquire_device_batch (self, pool, outbuf);
  gst_object_unref (pool);
  if (ret != GST_FLOW_OK)
    return ret;
  /* a short batch uses the front of each memory */
  for (i = 0; i < n_device; i++) {
    GstMemory *mem = gst_buffer_peek_memory (*outbuf, i);
    if (mem->size != sizes[i])
      gst_memory_resize (mem, 0, sizes[i]);
  }
  /* the host tensors in their places: the input's memories, no copy */
  for (i = 0; i < n; i++)
    if (self->host[i])
      gst_buffer_insert_memory (*outbuf, i,
          gst_memory_ref (gst_buffer_peek_memory (input, i)));
  /* metadata (batch indices, epoch) follows the batch */
  GST_BASE_TRANSFORM_CLASS (parent_class)->copy_metadata (trans, input,
      *outbuf);
  return GST_FLOW_OK;
}

/* The images of this batch: the caps' shape with the batch's own count */
static gboolean
batch_params (GstSpdlCudaUpload * self, gsize input_size,
    SpdlNormalizeParams * p)
{
  guint64 image = (guint64) self->norm.c * self->norm.h * self->norm.w;

  *p = self->norm;
  if (image == 0 || input_size % image != 0)
    return FALSE;
  p->n = input_size / image;
  return TRUE;
}

static gboolean
ensure_staging (GstSpdlCudaUpload * self, gsize size)
{
  if (self->staging_size >= size)
    return TRUE;
  /* earlier kernels may still read the old one */
  cudaStreamSynchronize ((cudaStream_t) self->stream);
  if (self->staging)
    cudaFree (self->staging);
  self->staging = NULL;
  self->staging_size = 0;
  if (cudaMalloc (&self->staging, size) != cudaSuccess) {
    self->staging = NULL;
    return FALSE;
  }
  self->staging_size = size;
  return TRUE;
}

/* Queues one tensor's copy (and conversion) into @dst on the stream */
static cudaError_t
upload_tensor (GstSpdlCudaUpload * self, guint i, GstMapInfo * in,
    GstMemory * dst)
{
  cudaStream_t stream = (cudaStream_t) self->stream;
  gpointer dev = gst_spdl_cuda_memory_get_device_pointer (dst);
  SpdlNormalizeParams p;
  cudaError_t err;

  /* the consumer may still read this memory on its stream */
  err = cudaStreamWaitEvent (stream,
      (cudaEvent_t) gst_spdl_cuda_memory_get_release_event (dst), 0);
  if (err != cudaSuccess)
    return err;
  if (i == 0 && self->convert) {
    if (!batch_params (self, in->size, &p))
      return cudaErrorInvalidValue;
    if (!ensure_staging (self, in->size))
      return cudaErrorMemoryAllocation;
    err = cudaMemcpyAsync (self->staging, in->data, in->size,
        cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess)
      err = spdl_normalize_cuda (&p, self->staging, dev, stream);
  } else {
    err = cudaMemcpyAsync (dev, in->data, in->size, cudaMemcpyHostToDevice,
        stream);
  }
  if (err == cudaSuccess)
    err = cudaEventRecord ((cudaEvent_t)
        gst_spdl_cuda_memory_get_ready_event (dst), stream);
  return err;
}

/* The copies read the input until they are done: keep it until then */
static cudaError_t
hold_input (GstSpdlCudaUpload * self, GstBuffer * inbuf)
{
  cudaStream_t stream = (cudaStream_t) self->stream;
  InflightInput *in;
  cudaEvent_t event = g_queue_pop_head (&self->spare_events);
  cudaError_t err = cudaSuccess;

  if (self->active_host_sync)
    return cudaStreamSynchronize (stream);
  if (event == NULL)
    err = cudaEventCreateWithFlags (&event, cudaEventDisableTiming);
  if (err == cudaSuccess)
    err = cudaEventRecord (event, stream);
  if (err != cudaSuccess) {
    if (event)
      cudaEventDestroy (event);
    return err;
  }
  in = g_new (InflightInput, 1);
  in->input = gst_buffer_ref (inbuf);
  in->copied = event;
  g_queue_push_tail (&self->inflight, in);
  /* bounded: the oldest waits when too many are in flight */
  release_inputs (self, FALSE);
  return cudaSuccess;
}

static gboolean
upload_emulated_tensor (GstSpdlCudaUpload * self, guint i, GstMapInfo * in,
    GstMemory * dst)
{
  gpointer dev = gst_spdl_cuda_memory_get_device_pointer (dst);
  SpdlNormalizeParams p;

  if (i == 0 && self->convert) {
    if (!batch_params (self, in->size, &p))
      return FALSE;
    spdl_normalize_cpu (&p, in->data, dev);
  } else {
    memcpy (dev, in->data, in->size);
  }
  return TRUE;
}

static GstFlowReturn
gst_spdl_cuda_upload_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  GstSpdlCudaDeviceScope scope;
  cudaError_t err = cudaSuccess;
  guint i, n = gst_buffer_n_memory (inbuf);
  gboolean mapped = TRUE;
  gsize bytes = 0;
  guint64 start = gst_spdl_now_ns ();

  gst_spdl_stats_add_in (&self->stats, 1);
  if (!self->emulated) {
    if (!gst_spdl_cuda_device_enter (&scope, self->active_device))
      err = cudaErrorInvalidDevice;
    else
      release_inputs (self, FALSE);
  }
  for (i = 0; i < n && err == cudaSuccess && mapped; i++) {
    GstMemory *dst = gst_buffer_peek_memory (outbuf, i);
    GstMapInfo map;

    if (self->host[i])
      continue;

    mapped = gst_memory_map (gst_buffer_peek_memory (inbuf, i), &map,
        GST_MAP_READ);
    if (!mapped)
      break;
    if (self->emulated)
      err = upload_emulated_tensor (self, i, &map, dst) ? cudaSuccess :
          cudaErrorInvalidValue;
    else
      err = upload_tensor (self, i, &map, dst);
    bytes += map.size;
    /* pinned memory stays valid unmapped; pageable memory was copied to
     * the driver's staging before cudaMemcpyAsync returned */
    gst_memory_unmap (gst_buffer_peek_memory (inbuf, i), &map);
  }
  if (!self->emulated) {
    if (err == cudaSuccess && mapped)
      err = hold_input (self, inbuf);
    gst_spdl_cuda_device_leave (&scope);
  }
  if (err != cudaSuccess || !mapped) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not copy a batch to CUDA device %d: %s", self->active_device,
            !mapped ? "could not map the input" : cudaGetErrorString (err)),
        (NULL));
    return GST_FLOW_ERROR;
  }
  gst_spdl_buffer_add_cuda_meta (outbuf, self->active_device, self->stream);
  GST_OBJECT_LOCK (self);
  self->uploaded_bytes += bytes;
  GST_OBJECT_UNLOCK (self);
  gst_spdl_stats_record (&self->stats, gst_spdl_now_ns () - start);
  gst_spdl_stats_add_out (&self->stats, 1);
  return GST_FLOW_OK;
}
