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
 * (`other/tensors(memory:SpdlCUDA)`), with the CUDA runtime API.
 *
 * The element answers the ALLOCATION query with page-locked host memory
 * (cudaHostAlloc), so spdlbatch collates images straight into it; each
 * tensor is copied with cudaMemcpyAsync on the element's own non-blocking
 * stream into device memory from a bounded pool of
 * #GstSpdlCudaUpload:device-buffers batches (no cudaMalloc per batch in
 * steady state; the last, smaller batch of an epoch gets its own).
 *
 * A batch is pushed only once its copy has finished: the element
 * synchronizes its stream before pushing, so a consumer can use the device
 * memory on any stream without waiting for anything. Each device batch
 * carries a #GstCustomMeta "GstSpdlCudaMeta" with "device-id" and the device
 * "pointers" of its tensors; mapping the memory copies it back to the host.
 *
 * On a machine without a CUDA device or driver the element still registers;
 * going to PAUSED fails with an error that names the CUDA error.
 *
 * |[
 * gst-launch-1.0 spdlsrc location=/data/train ! spdldecode width=224 \
 *     height=224 mode=random-resized-crop ! spdlbatch batch-size=256 \
 *     layout=nchw ! spdlcudaupload cuda-device-id=0 ! fakesink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlcudaupload.h"
#include "gstspdlcudamemory.h"

#include <cuda_runtime_api.h>

enum
{
  PROP_0,
  PROP_DEVICE_ID,
  PROP_DEVICE_BUFFERS,
  PROP_STATS,
};

#define DEFAULT_DEVICE_ID 0
#define DEFAULT_DEVICE_BUFFERS 4

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

/* A pool of device batches: one device memory per tensor. */
#define GST_TYPE_SPDL_CUDA_POOL (gst_spdl_cuda_pool_get_type ())
G_DECLARE_FINAL_TYPE (GstSpdlCudaPool, gst_spdl_cuda_pool, GST,
    SPDL_CUDA_POOL, GstBufferPool)

struct _GstSpdlCudaPool
{
  GstBufferPool parent;
  GstAllocator *allocator;
  gsize sizes[GST_SPDL_TENSOR_MAX];
  guint n;
};

G_DEFINE_TYPE (GstSpdlCudaPool, gst_spdl_cuda_pool, GST_TYPE_BUFFER_POOL);

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

static void
gst_spdl_cuda_pool_finalize (GObject * object)
{
  gst_clear_object (&GST_SPDL_CUDA_POOL (object)->allocator);
  G_OBJECT_CLASS (gst_spdl_cuda_pool_parent_class)->finalize (object);
}

static void
gst_spdl_cuda_pool_class_init (GstSpdlCudaPoolClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gst_spdl_cuda_pool_finalize;
  GST_BUFFER_POOL_CLASS (klass)->alloc_buffer = gst_spdl_cuda_pool_alloc;
}

static void
gst_spdl_cuda_pool_init (GstSpdlCudaPool * self)
{
}

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
static gboolean gst_spdl_cuda_upload_start (GstBaseTransform * trans);
static gboolean gst_spdl_cuda_upload_stop (GstBaseTransform * trans);
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
   * batches are alive downstream at once (the consumer included).
   */
  g_object_class_install_property (gobject_class, PROP_DEVICE_BUFFERS,
      g_param_spec_uint ("device-buffers", "Device buffers",
          "Device batches kept in flight and reused", 2, 64,
          DEFAULT_DEVICE_BUFFERS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Batches, bytes and upload times (spdl-stats fields and bytes)",
          GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "SPDL CUDA upload", "Filter/Converter/Tensor/Hardware",
      "Uploads tensor batches to CUDA device memory through pinned memory",
      "gst-spdl authors");

  trans_class->start = GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_stop);
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_transform_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_set_caps);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_propose_allocation);
  trans_class->prepare_output_buffer =
      GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_prepare_output_buffer);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_spdl_cuda_upload_transform);
  trans_class->passthrough_on_same_caps = FALSE;

  GST_DEBUG_CATEGORY_INIT (spdl_cuda_upload_debug, "spdlcudaupload", 0,
      "SPDL CUDA upload");
}

static void
gst_spdl_cuda_upload_init (GstSpdlCudaUpload * self)
{
  self->device_id = DEFAULT_DEVICE_ID;
  self->device_buffers = DEFAULT_DEVICE_BUFFERS;
  gst_spdl_stats_init (&self->stats);
}

static void
gst_spdl_cuda_upload_finalize (GObject * object)
{
  gst_spdl_stats_clear (&GST_SPDL_CUDA_UPLOAD (object)->stats);
  G_OBJECT_CLASS (parent_class)->finalize (object);
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

static gboolean
gst_spdl_cuda_upload_start (GstBaseTransform * trans)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  cudaStream_t stream = NULL;
  cudaError_t err;
  gint count = 0;

  GST_OBJECT_LOCK (self);
  self->active_device = self->device_id;
  self->uploaded_bytes = 0;
  GST_OBJECT_UNLOCK (self);
  gst_spdl_stats_reset (&self->stats);

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
  err = cudaSetDevice (self->active_device);
  if (err == cudaSuccess)
    err = cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking);
  if (err != cudaSuccess) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not use CUDA device %d: %s", self->active_device,
            cudaGetErrorString (err)), (NULL));
    return FALSE;
  }
  self->stream = stream;
  self->host_allocator = gst_spdl_cuda_host_allocator_new ();
  self->device_allocator =
      gst_spdl_cuda_device_allocator_new (self->active_device);
  GST_INFO_OBJECT (self, "uploading to CUDA device %d of %d",
      self->active_device, count);
  return TRUE;
}

static void
release_pool (GstSpdlCudaUpload * self)
{
  if (self->pool) {
    gst_buffer_pool_set_active (self->pool, FALSE);
    gst_clear_object (&self->pool);
  }
}

static gboolean
gst_spdl_cuda_upload_stop (GstBaseTransform * trans)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);

  release_pool (self);
  if (self->stream) {
    cudaStreamDestroy ((cudaStream_t) self->stream);
    self->stream = NULL;
  }
  gst_clear_object (&self->host_allocator);
  gst_clear_object (&self->device_allocator);
  return TRUE;
}

static GstCaps *
gst_spdl_cuda_upload_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  GstCaps *out = gst_caps_copy (caps);
  gint device_id;
  guint i;

  GST_OBJECT_LOCK (self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK (self);
  for (i = 0; i < gst_caps_get_size (out); i++) {
    GstStructure *s = gst_caps_get_structure (out, i);
    if (direction == GST_PAD_SINK) {
      gst_caps_set_features (out, i,
          gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_SPDL_CUDA, NULL));
      gst_structure_set (s, "cuda-device-id", G_TYPE_INT, device_id, NULL);
    } else {
      gst_caps_set_features (out, i,
          gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY, NULL));
      gst_structure_remove_field (s, "cuda-device-id");
    }
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, out,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (out);
    out = tmp;
  }
  return out;
}

static gboolean
gst_spdl_cuda_upload_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  GstSpdlCudaPool *pool;
  GstStructure *config;
  gsize total = 0;
  guint i, n;

  n = gst_spdl_tensors_from_caps (incaps, self->tensors, GST_SPDL_TENSOR_MAX);
  if (n == 0) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Unsupported tensor caps"),
        ("%" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  /* the pool is sized for the first (full) batch: a smaller last batch of
   * an epoch gets its own device memory */
  if (self->pool && n == self->n_tensors)
    return TRUE;
  self->n_tensors = n;
  release_pool (self);
  pool = g_object_new (GST_TYPE_SPDL_CUDA_POOL, NULL);
  gst_object_ref_sink (pool);
  pool->allocator = gst_object_ref (self->device_allocator);
  pool->n = n;
  for (i = 0; i < n; i++) {
    pool->sizes[i] = gst_spdl_tensor_info_size (&self->tensors[i]);
    total += pool->sizes[i];
  }
  config = gst_buffer_pool_get_config (GST_BUFFER_POOL (pool));
  gst_buffer_pool_config_set_params (config, outcaps, total,
      self->device_buffers, self->device_buffers);
  if (!gst_buffer_pool_set_config (GST_BUFFER_POOL (pool), config) ||
      !gst_buffer_pool_set_active (GST_BUFFER_POOL (pool), TRUE)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not allocate %u device batches of %" G_GSIZE_FORMAT
            " bytes on CUDA device %d", self->device_buffers, total,
            self->active_device), (NULL));
    gst_object_unref (pool);
    return FALSE;
  }
  self->pool = GST_BUFFER_POOL (pool);
  return TRUE;
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

static gboolean
same_sizes (GstSpdlCudaUpload * self, GstBuffer * input)
{
  GstSpdlCudaPool *pool = GST_SPDL_CUDA_POOL (self->pool);
  guint i;

  if (gst_buffer_n_memory (input) != pool->n)
    return FALSE;
  for (i = 0; i < pool->n; i++)
    if (gst_buffer_peek_memory (input, i)->size != pool->sizes[i])
      return FALSE;
  return TRUE;
}

static GstFlowReturn
gst_spdl_cuda_upload_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * input, GstBuffer ** outbuf)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  gsize sizes[GST_SPDL_TENSOR_MAX];
  guint i, n = gst_buffer_n_memory (input);

  if (self->pool == NULL)
    return GST_FLOW_NOT_NEGOTIATED;
  if (same_sizes (self, input)) {
    GstFlowReturn ret = gst_buffer_pool_acquire_buffer (self->pool, outbuf,
        NULL);
    if (ret != GST_FLOW_OK)
      return ret;
  } else {
    if (n > GST_SPDL_TENSOR_MAX)
      return GST_FLOW_NOT_NEGOTIATED;
    for (i = 0; i < n; i++)
      sizes[i] = gst_buffer_peek_memory (input, i)->size;
    *outbuf = device_batch_new (self->device_allocator, sizes, n);
    if (*outbuf == NULL) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Could not allocate a device batch on CUDA device %d",
              self->active_device), (NULL));
      return GST_FLOW_ERROR;
    }
  }
  /* metadata (batch indices, epoch) follows the batch */
  GST_BASE_TRANSFORM_CLASS (parent_class)->copy_metadata (trans, input,
      *outbuf);
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_spdl_cuda_upload_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  GstSpdlCudaUpload *self = GST_SPDL_CUDA_UPLOAD (trans);
  cudaStream_t stream = (cudaStream_t) self->stream;
  GstMapInfo maps[GST_SPDL_TENSOR_MAX];
  cudaError_t err = cudaSuccess;
  guint i, n = gst_buffer_n_memory (inbuf), mapped = 0;
  gsize bytes = 0;

  guint64 start = gst_spdl_now_ns ();

  gst_spdl_stats_add_in (&self->stats, 1);
  cudaSetDevice (self->active_device);
  for (i = 0; i < n && err == cudaSuccess; i++) {
    GstMemory *dst = gst_buffer_peek_memory (outbuf, i);
    if (!gst_memory_map (gst_buffer_peek_memory (inbuf, i), &maps[i],
            GST_MAP_READ))
      break;
    mapped++;
    err = cudaMemcpyAsync (gst_spdl_cuda_memory_get_device_pointer (dst),
        maps[i].data, maps[i].size, cudaMemcpyHostToDevice, stream);
    bytes += maps[i].size;
  }
  /* the consumer may use the batch on any stream: the copy is complete
   * before the buffer leaves this element */
  if (err == cudaSuccess)
    err = cudaStreamSynchronize (stream);
  for (i = 0; i < mapped; i++)
    gst_memory_unmap (gst_buffer_peek_memory (inbuf, i), &maps[i]);
  if (err != cudaSuccess || mapped != n) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not copy a batch to CUDA device %d: %s", self->active_device,
            err != cudaSuccess ? cudaGetErrorString (err) :
            "could not map the input"), (NULL));
    return GST_FLOW_ERROR;
  }
  gst_spdl_buffer_add_cuda_meta (outbuf, self->active_device);
  GST_OBJECT_LOCK (self);
  self->uploaded_bytes += bytes;
  GST_OBJECT_UNLOCK (self);
  gst_spdl_stats_record (&self->stats, gst_spdl_now_ns () - start);
  gst_spdl_stats_add_out (&self->stats, 1);
  return GST_FLOW_OK;
}
