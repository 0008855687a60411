/* GStreamer SPDL plugin: dataset source
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
/**
 * SECTION:element-spdlsrc
 * @title: spdlsrc
 *
 * Lists a training dataset and emits one buffer per sample: the file's bytes
 * with a #GstCustomMeta named "GstSpdlSampleMeta" holding the sample's
 * dataset index, label, epoch and path.
 *
 * #GstSpdlSrc:location is a folder in ImageFolder layout (one sub-folder per
 * class, labels are the sorted class folders' indices, exactly as
 * torchvision's ImageFolder assigns them: hidden folders such as
 * .ipynb_checkpoints are classes too, and a class folder without an image
 * keeps its label, with a warning naming it) or a manifest file with one
 * `relative/path<TAB>label` per line.
 *
 * With #GstSpdlSrc:shuffle, each epoch is a permutation that depends only on
 * #GstSpdlSrc:seed and the epoch number, never on the number of ranks.
 * #GstSpdlSrc:shard-index and #GstSpdlSrc:num-shards split every epoch
 * between distributed ranks the way PyTorch's DistributedSampler does:
 *
 * - the epoch's global order is p(0), ..., p(N-1) (N samples, p the
 *   epoch's permutation, identity without shuffle);
 * - with O samples of it already consumed (#GstSpdlSrc:start-offset, 0
 *   except in a resumed first epoch), rank r of W takes the samples at
 *   global positions O + r, O + r + W, O + r + 2W, ...: M = ceil((N - O) / W)
 *   of them, positions past N wrapping around to the epoch's start
 *   (padding, as DistributedSampler pads), or M = floor((N - O) / W) with
 *   #GstSpdlSrc:drop-uneven. Every rank has the same M.
 *
 * After every rank took k samples, the first O + k x W positions are
 * consumed, whatever W is: a job saved at W ranks resumes at any W' with
 * start-offset = O + k x W, and the remaining samples are each taken
 * exactly once across the new ranks.
 *
 * Each epoch starts with a serialized custom downstream event
 * "spdl-epoch-start" (fields "epoch", "samples" = M, "offset" = O,
 * "num-shards", "shard-index") and ends with "spdl-epoch-end" (fields
 * "epoch" and "samples" pushed), also posted on the bus as an element
 * message. Each sample's metadata holds its global "position".
 *
 * File reads run #GstSpdlSrc:prefetch ahead on worker threads, in order, so
 * slow storage does not stall the pipeline; while reads are fast (page-cached
 * local files, see #GstSpdlSrc:prefetch-threshold) they run in the streaming
 * thread, with no hand-off. Only regular files are samples: unreadable or
 * vanished files, anything that is not a regular file (a FIFO, a device, a
 * symlink to one) and files larger than #GstSpdlSrc:max-file-size are
 * skipped with a warning naming the file and the reason, counted by reason
 * (#GstSpdlSrc:error-counts) and against #GstSpdlSrc:max-errors. An
 * epoch (this rank's share of it) of which no sample could be read at all
 * is an error, whatever max-errors allows (a dataset moved away, a stale
 * shard index); the rest of an epoch resumed mid-way is not. File
 * names are opened as the bytes they are; messages and the sample
 * metadata show them as UTF-8 (g_filename_display_name()).
 *
 * A location naming WebDataset tar shards ("/data/train-{000000..000099}.tar",
 * brace ranges zero-padded as WebDataset writes them, at most a million names,
 * or one ".tar" file; ".tar.gz" and ".tgz" ones are refused as compressed;
 * a local file or folder that exists is taken as named,
 * braces and all, not as a pattern) reads samples from the shards as they
 * stream in: the members of a shard are grouped by key as webdataset 1.0
 * groups them (the member path up to the first dot of its base name), the
 * image is the member #GstSpdlSrc:image-key names (by default the one
 * ending in jpg, jpeg, png, webp, bmp, gif, tif, tiff, ppm, pgm, pbm or
 * pnm; for video or audio datasets image-key names the video or audio
 * member's extensions), the label the integer in the member
 * #GstSpdlSrc:label-key names (by default the ASCII digits of ".cls", -1
 * without one; JSON members by
 * #GstSpdlSrc:label-field); other members are ignored and a shard is never
 * held whole in memory. A group that is no sample is skipped with a
 * warning naming it and counted: "no-image", "unsupported-image",
 * "bad-label", "no-label". The sample
 * index is the shard's offset in the listing plus the sample's position in it,
 * the path "SHARD:MEMBER".
 *
 * Shards written by tools/make-shards come with "shards.members", every
 * sample's image member as a byte range with its label. With it (and
 * #GstSpdlSrc:elastic, the default) an epoch's global order is computed
 * from the index alone: the shards in an order shuffled from
 * (#GstSpdlSrc:seed, epoch), their samples mixed by a shuffle buffer of
 * #GstSpdlSrc:shuffle-buffer sample numbers seeded from (seed, epoch). It
 * depends on seed and epoch only, and ranks split it by the rule above
 * (rank r of W at positions O + r, O + r + W, ...), so tar shards resume
 * at any number of ranks like folders. Each rank reads only its samples,
 * by byte range (pread; over HTTP and S3 ranged GETs,
 * #GstSpdlSrc:http-requests at once, one for members lying close together
 * in a shard, one each otherwise), checking each member's tar header
 * against the index; a member past the shard's end is skipped as
 * "truncated-shard", a header that does not match as "corrupt-member",
 * each at its position, so ranks stay aligned.
 *
 * Shards published without index files (neither "shards.members" nor
 * "shards.idx" beside them, as most WebDataset sets are; locally no such
 * file, remotely a 404 or S3's NoSuchKey, any other failure being an
 * error) get their member index learned: each shard read once before the
 * first epoch (locally its tar headers, remotely streamed whole with only
 * its labels kept, several at once), and the elastic order used as with
 * "shards.members", so they resume at any number of ranks too. The index
 * is kept in #GstSpdlSrc:shard-cache, keyed by the shards' locations,
 * sizes and modification times or ETags, so a restarted job reads no shard
 * to start. A sample whose label is no label is left out of a learned
 * index, as is what follows a corrupt header or the cut of a truncated
 * shard; each is skipped (as "corrupt-member" or "truncated-shard", with a
 * warning naming the shard) once an epoch over the ranks, as streaming the
 * shard would skip it. A shard that cannot be found or read while learning
 * is an error.
 *
 * With "shards.idx" and no "shards.members" (or with elastic=false) each
 * rank streams an equal contiguous part of the epoch's shard-ordered stream
 * of N samples, floor(N / ranks) (#GstSpdlSrc:drop-uneven) or
 * ceil(N / ranks) samples (the last rank wraps around), mixed by a shuffle
 * buffer of its own from (seed, epoch, rank): an order that depends on the
 * number of ranks, so such a state resumes only at the same number
 * (start-offset must be a multiple of num-shards). The counts per shard
 * come from "shards.idx" (one "NAME<TAB>SAMPLES" line per shard), else from
 * a learned index. Unreadable shards and corrupt or truncated tar streams
 * are skipped with the reasons "unreadable", "corrupt-member" and
 * "truncated-shard".
 *
 * A location may also be a manifest with a header: a .csv (read as
 * Python's csv module reads it), .tsv (tab-separated, no quoting; one
 * whose first line names no path column is a "path<TAB>label" manifest)
 * or .jsonl/.ndjson file (one JSON object per line), the paths in
 * #GstSpdlSrc:path-column, the label in a "label" column (-1 without
 * one), paths relative to the manifest's folder.
 *
 * A manifest's rows may be spans of their files (speech segments, video
 * clips with captions): columns "offset" or "start" (seconds, default 0)
 * and "end", else "duration" (seconds; without either, to the file's
 * end; an ISO 8601 duration, WebVid's file length, is no span).
 * NeMo's JSON Lines manifests are read as NeMo reads them, whatever their
 * extension (NeMo names them .json: a file whose first line is a JSON
 * object with "audio_filepath" or "audio_filename"): that column is the
 * path, "offset" and "duration" the span (required in every row when
 * any row has one; with none, whole files; each row's span is its own,
 * whatever keys the first row has), and a field named
 * "text" is the transcript: the "text" key, else the contents of the file
 * "text_filepath" names (relative to the manifest; its line breaks
 * dropped, as NeMo drops them), else "normalized_text", byte for byte.
 * Each row is one sample, rows of one file too; its span goes on the
 * sample meta ("span-start",
 * "span-duration", -1 = to the end: gst_spdl_buffer_get_span()) with
 * "row", the manifest and line, and spdlaudiodecode or spdlvideodecode
 * takes only that span of the file. A row whose span cannot be (a
 * negative offset, an end not after its start, no number, a NeMo row
 * without duration) is skipped by the reason "bad-span", its file not
 * read; one longer than #GstSpdlSrc:max-span as "too-long", unread too;
 * a missing file as "unreadable"; each warned naming the manifest row. With #GstSpdlSrc:missing-field=error such an entry stops the
 * pipeline instead, and so does a span the decoders find past its
 * file's end (the src caps carry "span-policy").
 *
 * With #GstSpdlSrc:fields each sample is a record (docs/record.md): the
 * fields named there come beside the media on every sample buffer (its
 * sample meta's "record", one value per field in order) and the src caps
 * carry their description ("fields"). They are the members of the
 * sample's group in tar shards (by extension after the key, "seg.png" for
 * "KEY.seg.png"), a manifest's columns, or a folder's sidecars beside
 * each image ("x.txt" beside "x.jpg"; a sidecar with an image extension,
 * "x.seg.png", is no sample then). A field absent or bad goes by its
 * policy (#GstSpdlSrc:missing-field): the sample skipped with a warning
 * naming the sample, the field and why ("missing-field", "bad-field",
 * "field-too-large"), an error, or the kind's fill value. The order,
 * checkpoints and the number of samples do not depend on the fields.
 *
 * With #GstSpdlSrc:annotations, a COCO instances file (local, http(s)://
 * or s3://), the samples are its images sorted by image id (torchvision
 * CocoDetection's order), read from #GstSpdlSrc:location (their folder or
 * URL prefix) joined with each "file_name"; each sample's record starts
 * with "objects" (the image's annotations, a compact JSON array in file
 * order) and "image_id", before #GstSpdlSrc:fields. Images without an
 * annotation are kept or dropped (#GstSpdlSrc:empty-images); hostile
 * content is counted by reason (#GstSpdlSrc:annotation-counts) and
 * warned about (docs/record.md).
 * ## Batches by duration
 *
 * Speech batches padded to their longest utterance waste least when their
 * utterances are of similar length. With #GstSpdlSrc:buckets (or
 * #GstSpdlSrc:batch-duration) spdlsrc composes the batches itself, from
 * each sample's duration in the manifest (its span; a sample whose
 * duration is unknown is an error at start), as Lhotse's
 * DynamicBucketingSampler and NeMo's bucketing do:
 *
 * - the bucket boundaries are the durations' quantiles: boundary k of B
 *   is the (k x N / B)-th shortest duration, so buckets hold as many
 *   samples each;
 * - the epoch's samples, permuted from (seed, epoch) as without buckets,
 *   are taken #GstSpdlSrc:bucket-window at a time; each joins its
 *   bucket's open batch, which closes when the next sample of its bucket
 *   does not fit (#GstSpdlSrc:batch-size samples, or
 *   #GstSpdlSrc:batch-duration seconds in all; an utterance longer than
 *   that is a batch of its own); a window's closed batches are shuffled
 *   from (seed, epoch) and emitted, its open ones carried to the next
 *   window, the epoch's last ones closed at its end;
 * - ranks take whole batches by the rule above at batch granularity: rank
 *   r of W takes the epoch's batches r, r + W, ..., every rank as many
 *   (the last ranks wrap around to the first batches, or with
 *   #GstSpdlSrc:drop-uneven the last < W batches are left out);
 * - each sample's meta says its batch ("batch", its number among the
 *   rank's, and "resume-epoch"/"resume-offset", where a run resumed after
 *   that batch starts: the offset of the batches every rank has then
 *   taken) and the batch's last sample is marked "batch-end": spdlbatch
 *   cuts there, and at a sample of another batch when the marked one was
 *   skipped, so a skipped sample makes its batch smaller and never merges
 *   two; spdlappsink's resume-state follows the batches;
 * - #GstSpdlSrc:start-offset must be a batch boundary of the start
 *   epoch's order (a resume-state is one; any other is refused), and the
 *   remaining batches are then exactly those an uninterrupted run would
 *   have given, on any number of ranks;
 * - the epoch-start event adds "batches" (this rank's) and "max-batch"
 *   (the most samples a batch of the epoch holds: spdlbatch's batch-size
 *   must be at least that); #GstSpdlSrc:num-batches is the first epoch's
 *   count, for a loader's len(). With batch-duration an epoch's count may
 *   differ from the next's by a few batches.
 *
 * |[
 * gst-launch-1.0 spdlsrc location=/data/asr/train_manifest.json \
 *     shuffle=true seed=1 buckets=30 batch-duration=600 batch-size=128 ! \
 *     spdlaudiodecode sample-rate=16000 duration=0 ! \
 *     spdlbatch batch-size=128 ! fakesink
 * ]|
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 spdlsrc location=/data/imagenet/train shuffle=true seed=42 ! \
 *     spdldecode width=224 height=224 mode=random-resized-crop ! fakesink
 * ]|
 * |[
 * gst-launch-1.0 spdlsrc location=/data/coco/train2017 \
 *     annotations=/data/coco/annotations/instances_train2017.json \
 *     shuffle=true ! spdldecode width=640 height=640 ! fakesink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlsrc.h"
#include "gstspdlmeta.h"
#include "gstspdlorder.h"
#include "gstspdlbuckets.h"
#include "gstspdlshards.h"
#include "gstspdlhttp.h"
#include "gstspdlerrors.h"
#include "gstspdlredact.h"
#include "gstspdlfielddata.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum
{
  PROP_0,
  PROP_LOCATION,
  PROP_EXTENSIONS,
  PROP_SHUFFLE,
  PROP_SEED,
  PROP_NUM_EPOCHS,
  PROP_START_EPOCH,
  PROP_SHARD_INDEX,
  PROP_NUM_SHARDS,
  PROP_DROP_UNEVEN,
  PROP_START_INDEX,
  PROP_START_OFFSET,
  PROP_PREFETCH,
  PROP_PREFETCH_THRESHOLD,
  PROP_MAX_FILE_SIZE,
  PROP_MAX_ERRORS,
  PROP_WARNING_LIMIT,
  PROP_ERRORS,
  PROP_ERROR_COUNTS,
  PROP_NUM_SAMPLES,
  PROP_DATASET_FINGERPRINT,
  PROP_CLASSES,
  PROP_NUM_CLASSES,
  PROP_STATS,
  PROP_SHUFFLE_BUFFER,
  PROP_SHUFFLE_BUFFER_BYTES,
  PROP_ELASTIC,
  PROP_REMOTE_READS,
  PROP_SHARD_LEARN,
  PROP_SHARD_CACHE,
  PROP_IMAGE_KEY,
  PROP_LABEL_KEY,
  PROP_LABEL_FIELD,
  PROP_FIELDS,
  PROP_MISSING_FIELD,
  PROP_MAX_FIELD_SIZE,
  PROP_PATH_COLUMN,
  PROP_ANNOTATIONS,
  PROP_EMPTY_IMAGES,
  PROP_ANNOTATION_COUNTS,
  PROP_HTTP_REQUESTS,
  PROP_HTTP_CONNECT_TIMEOUT,
  PROP_HTTP_TIMEOUT,
  PROP_HTTP_RETRIES,
  PROP_HTTP_LOW_SPEED_LIMIT,
  PROP_HTTP_LOW_SPEED_TIME,
  PROP_MAX_BYTES_IN_FLIGHT,
  PROP_S3_ENDPOINT,
  PROP_S3_REGION,
  PROP_S3_PROFILE,
  PROP_S3_ACCESS_KEY,
  PROP_S3_SECRET_KEY,
  PROP_S3_SESSION_TOKEN,
  PROP_S3_VIRTUAL_HOST,
  PROP_CA_FILE,
  PROP_BUCKETS,
  PROP_BUCKET_WINDOW,
  PROP_BATCH_DURATION,
  PROP_MAX_SPAN,
  PROP_BATCH_SIZE,
  PROP_NUM_BATCHES,
};

#define DEFAULT_LOCATION NULL
#define DEFAULT_EXTENSIONS "jpg,jpeg,png,ppm,bmp,pgm,tif,tiff,webp"
#define DEFAULT_SHUFFLE FALSE
#define DEFAULT_SEED 0
#define DEFAULT_NUM_EPOCHS 1
#define DEFAULT_START_EPOCH 0
#define DEFAULT_SHARD_INDEX 0
#define DEFAULT_NUM_SHARDS 1
#define DEFAULT_DROP_UNEVEN FALSE
#define DEFAULT_START_INDEX 0
#define DEFAULT_START_OFFSET 0
#define DEFAULT_PREFETCH 4
#define DEFAULT_PREFETCH_THRESHOLD 200
#define DEFAULT_MAX_FILE_SIZE (256 * 1024 * 1024)
#define DEFAULT_MAX_ERRORS -1
#define DEFAULT_WARNING_LIMIT 20
#define MAX_PREFETCH 256
#define DEFAULT_SHUFFLE_BUFFER 1000
#define DEFAULT_SHUFFLE_BUFFER_BYTES (256 * 1024 * 1024)
#define DEFAULT_ELASTIC TRUE
#define DEFAULT_REMOTE_READS GST_SPDL_SHARDS_REMOTE_AUTO
#define DEFAULT_SHARD_LEARN GST_SPDL_SHARD_LEARN_STREAM
#define DEFAULT_HTTP_REQUESTS 64
#define DEFAULT_HTTP_CONNECT_TIMEOUT 10000
#define DEFAULT_HTTP_TIMEOUT 15000
/* a body under 1 KiB/s for 60 s: a trickle, not a busy link's share */
#define DEFAULT_HTTP_LOW_SPEED_LIMIT 1024
#define DEFAULT_HTTP_LOW_SPEED_TIME 60
#define DEFAULT_HTTP_RETRIES 5
#define DEFAULT_MAX_BYTES_IN_FLIGHT (256 * 1024 * 1024)
#define DEFAULT_S3_VIRTUAL_HOST FALSE
#define DEFAULT_MISSING_FIELD GST_SPDL_MISSING_SKIP
#define DEFAULT_EMPTY_IMAGES GST_SPDL_EMPTY_IMAGES_KEEP
#define DEFAULT_MAX_FIELD_SIZE (64 * 1024 * 1024)
#define DEFAULT_BUCKETS 0
#define DEFAULT_BUCKET_WINDOW 10000
#define DEFAULT_BATCH_DURATION 0.0
#define DEFAULT_MAX_SPAN 0.0
#define DEFAULT_BATCH_SIZE 0

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("image/jpeg, parsed = (boolean) true"));

GST_DEBUG_CATEGORY_STATIC (spdl_src_debug);
#define GST_CAT_DEFAULT spdl_src_debug

/* GST_ELEMENT_ERROR, _WARNING and _INFO with the credentials of the URLs
 * they name masked in both texts (a presigned shard URL's signature):
 * gst-launch-1.0, the bus and GST_DEBUG logs show them */
#define SPDL_SRC_MESSAGE(el, type, domain, code, text, debug)             \
  post_redacted (el, type, GST_##domain##_ERROR, GST_##domain##_ERROR_##code, \
      _gst_element_error_printf text, _gst_element_error_printf debug,     \
      __FILE__, GST_FUNCTION, __LINE__)
#define SPDL_SRC_ERROR(el, domain, code, text, debug)                     \
  SPDL_SRC_MESSAGE (el, GST_MESSAGE_ERROR, domain, code, text, debug)
#define SPDL_SRC_WARNING(el, domain, code, text, debug)                   \
  SPDL_SRC_MESSAGE (el, GST_MESSAGE_WARNING, domain, code, text, debug)
#define SPDL_SRC_INFO(el, domain, code, text, debug)                      \
  SPDL_SRC_MESSAGE (el, GST_MESSAGE_INFO, domain, code, text, debug)

/* Takes @text and @debug. */
static void
post_redacted (GstSpdlSrc * src, GstMessageType type, GQuark domain,
    gint code, gchar * text, gchar * debug, const gchar * file,
    const gchar * function, gint line)
{
  gchar *shown_text = gst_spdl_url_redact (text);
  gchar *shown_debug = gst_spdl_url_redact (debug);

  g_free (text);
  g_free (debug);
  gst_element_message_full (GST_ELEMENT (src), type, domain, code,
      shown_text, shown_debug, file, function, line);
}

/* One sample on its way: scheduled in order, read by a worker (or inline
 * with prefetch=0), pushed when it reaches the head of the queue. */
struct _GstSpdlReadSlot
{
  guint index;
  gint label;
  guint epoch;
  guint64 position;             /* in the epoch's global order */
  gchar *path;
  GstSpdlStats *stats;
  GstSpdlSrc *src;
  gboolean submitted;
  gboolean done;
  GstBuffer *buffer;
  GError *error;                /* code: a GstSpdlReadErrorCode */
  GstSpdlFieldData *fields;     /* folders: the sidecars read */
  /* the batched order: this rank's batch, where a run resumed after it
   * starts, and the epoch's share (for its start event) */
  gboolean batched;
  gboolean batch_end;
  guint64 batch;
  guint resume_epoch;
  guint64 resume_offset;
  guint64 epoch_samples;
  guint64 epoch_batches;
  guint max_batch;
  gchar *row;                   /* a span manifest's "NAME:LINE" */
};

GType
gst_spdl_remote_reads_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_SHARDS_REMOTE_AUTO,
        "Stream each shard with one rank (num-shards=1), else ranged reads",
        "auto"},
    {GST_SPDL_SHARDS_REMOTE_RANGES, "A ranged GET per member", "ranges"},
    {GST_SPDL_SHARDS_REMOTE_STREAM,
        "Stream each shard holding a member of this rank once an epoch",
        "stream"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlRemoteReads", values));
  return type;
}

GType
gst_spdl_shard_learn_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_SHARD_LEARN_STREAM, "Each shard streamed whole", "stream"},
    {GST_SPDL_SHARD_LEARN_HEADERS,
        "The tar headers read by ranged GETs, the data passed over",
        "headers"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlShardLearn", values));
  return type;
}

#define GST_TYPE_SPDL_MISSING_FIELD (gst_spdl_missing_field_get_type ())
static GType
gst_spdl_missing_field_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_MISSING_SKIP, "The sample is skipped (counted, warned)",
        "skip"},
    {GST_SPDL_MISSING_ERROR, "The pipeline stops with an error", "error"},
    {GST_SPDL_MISSING_EMPTY, "The kind's fill value", "empty"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlMissingField", values));
  return type;
}

typedef enum
{
  GST_SPDL_EMPTY_IMAGES_KEEP,
  GST_SPDL_EMPTY_IMAGES_DROP,
} GstSpdlEmptyImages;

#define GST_TYPE_SPDL_EMPTY_IMAGES (gst_spdl_empty_images_get_type ())
static GType
gst_spdl_empty_images_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_SPDL_EMPTY_IMAGES_KEEP, "Samples with no object (as torchvision's "
          "CocoDetection)", "keep"},
    {GST_SPDL_EMPTY_IMAGES_DROP, "Not listed", "drop"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstSpdlEmptyImages", values));
  return type;
}

/* The record's first fields with annotations: the image's objects and
 * image_id */
#define COCO_FIELDS "objects:objects,image_id:int"
#define N_COCO_FIELDS 2

#define gst_spdl_src_parent_class parent_class
G_DEFINE_TYPE (GstSpdlSrc, gst_spdl_src, GST_TYPE_PUSH_SRC);
GST_ELEMENT_REGISTER_DEFINE (spdlsrc, "spdlsrc", GST_RANK_NONE,
    GST_TYPE_SPDL_SRC);

static void gst_spdl_src_finalize (GObject * object);
static void gst_spdl_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_spdl_src_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static gboolean gst_spdl_src_start (GstBaseSrc * bsrc);
static gboolean gst_spdl_src_stop (GstBaseSrc * bsrc);
static void gst_spdl_src_cancel (GstSpdlSrc * src);
static GstStructure *gst_spdl_src_get_sample (GstSpdlSrc * src,
    guint64 index);
static gboolean gst_spdl_src_unlock (GstBaseSrc * bsrc);
static gboolean gst_spdl_src_negotiate (GstBaseSrc * bsrc);
static gboolean gst_spdl_src_unlock_stop (GstBaseSrc * bsrc);
static GstFlowReturn gst_spdl_src_create (GstPushSrc * psrc,
    GstBuffer ** outbuf);
static void read_slot_func (gpointer data, gpointer user_data);
static gboolean submit_remote_read (GstSpdlSrc * src, GstSpdlReadSlot * slot);
static void add_http_stats (GstSpdlSrc * src, GstStructure * st);
static void free_config_strings (GstSpdlSrc * src);

#define READY_PARAM (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | \
    GST_PARAM_MUTABLE_READY)

static void
gst_spdl_src_class_init (GstSpdlSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pushsrc_class = GST_PUSH_SRC_CLASS (klass);

  gobject_class->finalize = gst_spdl_src_finalize;
  gobject_class->set_property = gst_spdl_src_set_property;
  gobject_class->get_property = gst_spdl_src_get_property;

  /**
   * GstSpdlSrc:location:
   *
   * An ImageFolder tree (one sub-folder per class) or a manifest file
   * (`relative/path<TAB>label` per line, paths relative to its folder).
   */
  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location",
          "Dataset folder (ImageFolder layout) or manifest file",
          DEFAULT_LOCATION, READY_PARAM));
  /**
   * GstSpdlSrc:extensions:
   *
   * Comma-separated file extensions (case-insensitive) listed from a folder.
   */
  g_object_class_install_property (gobject_class, PROP_EXTENSIONS,
      g_param_spec_string ("extensions", "Extensions",
          "Comma-separated file extensions to list from a folder "
          "(case-insensitive)", DEFAULT_EXTENSIONS, READY_PARAM));
  /**
   * GstSpdlSrc:shuffle:
   *
   * Emit each epoch in a permutation that depends only on (seed, epoch).
   */
  g_object_class_install_property (gobject_class, PROP_SHUFFLE,
      g_param_spec_boolean ("shuffle", "Shuffle",
          "Shuffle each epoch (the order depends only on seed and epoch)",
          DEFAULT_SHUFFLE, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SEED,
      g_param_spec_uint64 ("seed", "Seed", "Seed of the per-epoch shuffle",
          0, G_MAXUINT64, DEFAULT_SEED, READY_PARAM));
  /**
   * GstSpdlSrc:num-epochs:
   *
   * How many epochs to run, starting at #GstSpdlSrc:start-epoch, before
   * EOS; -1 runs forever.
   */
  g_object_class_install_property (gobject_class, PROP_NUM_EPOCHS,
      g_param_spec_int ("num-epochs", "Number of epochs",
          "Epochs to run before EOS (-1 = forever)", -1, G_MAXINT,
          DEFAULT_NUM_EPOCHS, READY_PARAM));
  /**
   * GstSpdlSrc:start-epoch:
   *
   * Number of the first epoch (its shuffle and the sample metadata use it):
   * set it with #GstSpdlSrc:start-index to resume from a checkpoint.
   */
  g_object_class_install_property (gobject_class, PROP_START_EPOCH,
      g_param_spec_uint ("start-epoch", "Start epoch",
          "Number of the first epoch (to resume from a checkpoint)", 0,
          G_MAXINT, DEFAULT_START_EPOCH, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_SHARD_INDEX,
      g_param_spec_uint ("shard-index", "Shard index",
          "This rank's shard, in [0, num-shards)", 0, G_MAXINT,
          DEFAULT_SHARD_INDEX, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_NUM_SHARDS,
      g_param_spec_uint ("num-shards", "Number of shards",
          "Number of shards (distributed ranks) each epoch is split into",
          1, G_MAXINT, DEFAULT_NUM_SHARDS, READY_PARAM));
  /**
   * GstSpdlSrc:drop-uneven:
   *
   * When the dataset does not split evenly, drop the tail so every shard
   * gets floor(N / num-shards) samples, instead of padding every shard to
   * ceil(N / num-shards) by wrapping around (DistributedSampler's default).
   */
  g_object_class_install_property (gobject_class, PROP_DROP_UNEVEN,
      g_param_spec_boolean ("drop-uneven", "Drop uneven",
          "Drop the tail instead of padding shards to equal size",
          DEFAULT_DROP_UNEVEN, READY_PARAM));
  /**
   * GstSpdlSrc:start-index:
   *
   * Skip the first K samples of this shard's first epoch, to resume
   * mid-epoch: the samples that follow are exactly those an uninterrupted
   * run sees.
   */
  g_object_class_install_property (gobject_class, PROP_START_INDEX,
      g_param_spec_uint64 ("start-index", "Start index",
          "Samples of the first epoch to skip (resume mid-epoch)", 0,
          G_MAXUINT64, DEFAULT_START_INDEX, READY_PARAM));
  /**
   * GstSpdlSrc:start-offset:
   *
   * Samples of the first epoch's global order that all ranks together
   * already consumed: resumes mid-epoch at any number of ranks (see the
   * rule above). After every one of W ranks took k samples of an epoch
   * that started at offset O, resume with start-offset = O + k x W.
   * Adds to #GstSpdlSrc:start-index x num-shards.
   */
  g_object_class_install_property (gobject_class, PROP_START_OFFSET,
      g_param_spec_uint64 ("start-offset", "Start offset",
          "Global samples of the first epoch already consumed by all ranks "
          "(resume at any world size)", 0, G_MAXUINT64, DEFAULT_START_OFFSET,
          READY_PARAM));
  /**
   * GstSpdlSrc:prefetch:
   *
   * File reads that run ahead on worker threads, in order. 0 reads in the
   * streaming thread.
   */
  g_object_class_install_property (gobject_class, PROP_PREFETCH,
      g_param_spec_uint ("prefetch", "Prefetch",
          "File reads running ahead concurrently (0 = read in the streaming "
          "thread)", 0, MAX_PREFETCH, DEFAULT_PREFETCH, READY_PARAM));
  /**
   * GstSpdlSrc:prefetch-threshold:
   *
   * Reads go to the read-ahead threads only while they take longer than
   * this on average (microseconds): page-cached local files are read in
   * the streaming thread, with no hand-off, and slow storage (network file
   * systems, object-store mounts) is read ahead. 0: always read ahead.
   */
  g_object_class_install_property (gobject_class, PROP_PREFETCH_THRESHOLD,
      g_param_spec_uint64 ("prefetch-threshold", "Prefetch threshold",
          "Read ahead only while reads take longer than this on average "
          "(us, 0 = always)", 0, G_MAXUINT64, DEFAULT_PREFETCH_THRESHOLD,
          READY_PARAM));
  /**
   * GstSpdlSrc:max-file-size:
   *
   * Files larger than this (bytes) are skipped with the reason
   * "too-large" before any memory is allocated for them; 0 = no limit.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_FILE_SIZE,
      g_param_spec_uint64 ("max-file-size", "Max file size",
          "Skip files larger than this many bytes (0 = no limit)", 0,
          G_MAXUINT64, DEFAULT_MAX_FILE_SIZE, READY_PARAM));
  /**
   * GstSpdlSrc:max-errors:
   *
   * Unreadable samples tolerated (each skipped with a warning) before the
   * element fails: -1 = no limit, 0 = fail at the first. A whole epoch in
   * which every sample was skipped fails in any case.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_ERRORS,
      g_param_spec_int ("max-errors", "Max errors",
          "Unreadable samples to skip before failing (-1 = no limit)", -1,
          G_MAXINT, DEFAULT_MAX_ERRORS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  /**
   * GstSpdlSrc:warning-limit:
   *
   * Skipped samples of each epoch that get a warning message on the bus;
   * later ones are only counted and logged (debug category spdlsrc), and
   * an "spdl-skipped" element message with the epoch's counts by reason
   * follows each epoch that skipped any.
   */
  g_object_class_install_property (gobject_class, PROP_WARNING_LIMIT,
      g_param_spec_uint ("warning-limit", "Warning limit",
          "Per-sample warnings posted per epoch (the rest are counted)", 0,
          G_MAXUINT, DEFAULT_WARNING_LIMIT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_ERRORS,
      g_param_spec_uint64 ("errors", "Errors",
          "Samples skipped so far because they could not be read", 0,
          G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlSrc:error-counts:
   *
   * Skipped samples by reason: a structure with "total" and one guint64
   * field per reason (unreadable, not-a-file, too-large, and for remote
   * and sharded data http-error, timeout, truncated-shard, corrupt-member;
   * fields' missing-field, bad-field, field-too-large; a manifest row's
   * bad-span).
   */
  g_object_class_install_property (gobject_class, PROP_ERROR_COUNTS,
      g_param_spec_boxed ("error-counts", "Error counts",
          "Skipped samples by reason", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlSrc:num-samples:
   *
   * Samples this shard emits per epoch, known once the element is PAUSED.
   */
  g_object_class_install_property (gobject_class, PROP_NUM_SAMPLES,
      g_param_spec_uint64 ("num-samples", "Number of samples",
          "Samples per epoch for this shard (0 until listed)", 0,
          G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlSrc:buckets:
   *
   * Batches of samples of similar duration (Lhotse's
   * DynamicBucketingSampler, NeMo's bucketing): the samples' durations
   * (from the manifest's spans) split into this many buckets at their
   * quantiles; within each #GstSpdlSrc:bucket-window the samples of one
   * bucket are cut into batches of #GstSpdlSrc:batch-size samples or
   * #GstSpdlSrc:batch-duration seconds, and the window's batches
   * shuffled (see "Batches by duration" above). Tar shards and folders
   * give no durations: an error. 0: off.
   */
  g_object_class_install_property (gobject_class, PROP_BUCKETS,
      g_param_spec_uint ("buckets", "Buckets",
          "Duration buckets: batches of samples of similar duration "
          "(0 = off)", 0, G_MAXUINT16, DEFAULT_BUCKETS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlSrc:bucket-window:
   *
   * Samples of the epoch's shuffled order grouped into buckets and
   * batches at a time (Lhotse's buffer_size); a bucket's unfinished batch
   * carries over to the next window. 0: the whole epoch.
   */
  g_object_class_install_property (gobject_class, PROP_BUCKET_WINDOW,
      g_param_spec_uint ("bucket-window", "Bucket window",
          "Samples per shuffle window of the bucketed order (0 = the whole "
          "epoch)", 0, G_MAXUINT, DEFAULT_BUCKET_WINDOW,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlSrc:batch-duration:
   *
   * The most seconds of audio one batch holds, in all (Lhotse's
   * max_duration): each batch takes as many samples of its bucket as fit,
   * at least one. Needs every sample's duration (a manifest's spans).
   * 0: batches by count (#GstSpdlSrc:batch-size).
   */
  g_object_class_install_property (gobject_class, PROP_BATCH_DURATION,
      g_param_spec_double ("batch-duration", "Batch duration",
          "Most seconds per batch, in all (0 = batches by count)", 0,
          G_MAXDOUBLE, DEFAULT_BATCH_DURATION,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlSrc:max-span:
   *
   * A manifest row whose span is longer than this many seconds is skipped
   * without being read, warned about and counted as "too-long" (or stops
   * the pipeline under max-errors), and takes no place in the batches of
   * #GstSpdlSrc:buckets and #GstSpdlSrc:batch-duration (as Lhotse and
   * NeMo filter by duration before bucketing); spdlaudiodecode's max-span
   * skips whole files too long. 0: no limit.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SPAN,
      g_param_spec_double ("max-span", "Max span",
          "Skip manifest rows whose span is longer, in seconds (0 = no "
          "limit)", 0, G_MAXDOUBLE, DEFAULT_MAX_SPAN,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlSrc:batch-size:
   *
   * With #GstSpdlSrc:buckets or #GstSpdlSrc:batch-duration: the most
   * samples one batch holds (Lhotse's max_cuts; required for batches by
   * count). spdlbatch's batch-size must be at least this. 0: no limit.
   */
  g_object_class_install_property (gobject_class, PROP_BATCH_SIZE,
      g_param_spec_uint ("batch-size", "Batch size",
          "Bucketed batches: most samples per batch (0 = no limit)", 0,
          G_MAXINT, DEFAULT_BATCH_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlSrc:num-batches:
   *
   * With #GstSpdlSrc:buckets or #GstSpdlSrc:batch-duration: the batches
   * this shard emits in its first epoch (a loader's len()), known once
   * the element is PAUSED; batches by seconds may number a few more or
   * fewer in later epochs (each epoch-start event says how many). 0
   * otherwise.
   */
  g_object_class_install_property (gobject_class, PROP_NUM_BATCHES,
      g_param_spec_uint64 ("num-batches", "Number of batches",
          "Bucketed batches this shard emits in its first epoch (0 until "
          "listed or without buckets)", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_NUM_CLASSES,
      g_param_spec_uint ("num-classes", "Number of classes",
          "Classes in the dataset (0 until listed)", 0, G_MAXUINT, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlSrc:dataset-fingerprint:
   *
   * What the epochs' order is computed over, for checkpoints: "N:SHA256",
   * the number of samples and a hash: for folders and manifests of their
   * relative paths and labels in listing order; for tar shards of the
   * shards' names and sample counts and, in the elastic order, every
   * member's name in index order. NULL until listed. A state resumed on a
   * dataset with samples added, removed or renamed would repeat some and
   * never show others: spdlgst checks this before resuming.
   */
  g_object_class_install_property (gobject_class, PROP_DATASET_FINGERPRINT,
      g_param_spec_string ("dataset-fingerprint", "Dataset fingerprint",
          "Samples and a hash of their paths and labels (NULL until listed)",
          NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlSrc:classes:
   *
   * An ImageFolder's class names, sorted: label i is classes[i], as
   * torchvision's ImageFolder.classes. NULL until listed (while the element
   * runs), and for manifests and tar shards, whose labels have no names.
   */
  g_object_class_install_property (gobject_class, PROP_CLASSES,
      g_param_spec_boxed ("classes", "Classes",
          "Class names of an ImageFolder, label = index (NULL until listed)",
          G_TYPE_STRV, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstSpdlSrc::get-sample:
   * @src: the spdlsrc
   * @index: a dataset index (a sample's "index" meta, a batch's indices)
   *
   * Folders and manifests, while the element runs: a "sample" structure
   * with the sample's "path" (the full path or URL) and "label", as
   * torchvision's ImageFolder.samples[index], and "path-bytes" (GBytes)
   * when the path is not UTF-8 ("path" shows it as
   * g_filename_display_name() does); NULL out of range, before listing
   * and for tar shards.
   *
   * Returns: (transfer full) (nullable): the sample
   */
  g_signal_new_class_handler ("get-sample", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_spdl_src_get_sample), NULL, NULL, NULL,
      GST_TYPE_STRUCTURE, 1, G_TYPE_UINT64);

  /**
   * GstSpdlSrc::cancel:
   * @src: the spdlsrc
   *
   * Stops what a start does that may take long (listing an s3:// prefix,
   * reading or learning a shard index) and the remote reads under way:
   * the state change fails promptly with the error "cancelled". Meant for
   * an application's interrupt (Ctrl-C), from another thread than the one
   * changing the state; it holds until the element stops (a start it came
   * before fails).
   */
  g_signal_new_class_handler ("cancel", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_spdl_src_cancel), NULL, NULL, NULL, G_TYPE_NONE, 0);

  /**
   * GstSpdlSrc:shuffle-buffer:
   *
   * Tar shards with #GstSpdlSrc:shuffle: samples mixed in a buffer of this
   * many (WebDataset's shuffle(n)), on top of the shuffled shard order. In
   * the elastic order (#GstSpdlSrc:elastic) the buffer mixes the epoch's
   * global stream and holds sample numbers only (8 bytes each); in the
   * contiguous split it mixes each rank's part and holds the encoded
   * images: about this many times the mean image size, and samples start
   * leaving it once 100 are in (WebDataset's shuffle(n, initial=100)), one
   * for every second read while it grows to this many. 0 or 1: the shard
   * order only.
   */
  g_object_class_install_property (gobject_class, PROP_SHUFFLE_BUFFER,
      g_param_spec_uint ("shuffle-buffer", "Shuffle buffer",
          "Tar shards: samples mixed when shuffling (0 = shard order only)",
          0, G_MAXINT, DEFAULT_SHUFFLE_BUFFER, READY_PARAM));

  /**
   * GstSpdlSrc:shuffle-buffer-bytes:
   *
   * Tar shards streamed in contiguous parts (#GstSpdlSrc:elastic off, or no
   * member index): the encoded images the shuffle buffer holds at most, in
   * bytes; at the bound, random samples leave it to make room (always at
   * least one sample is held). The order stays a function of seed, epoch,
   * rank and the data. 0: no bound. The elastic order holds no images,
   * but for remote shards streamed (#GstSpdlSrc:remote-reads): there it
   * bounds the members read ahead of their turn.
   */
  g_object_class_install_property (gobject_class, PROP_SHUFFLE_BUFFER_BYTES,
      g_param_spec_uint64 ("shuffle-buffer-bytes", "Shuffle buffer bytes",
          "Tar shards streamed in contiguous parts: bytes of images the "
          "shuffle buffer holds at most (0 = no bound)", 0, G_MAXUINT64,
          DEFAULT_SHUFFLE_BUFFER_BYTES, READY_PARAM));

  /**
   * GstSpdlSrc:elastic:
   *
   * Tar shards with a member index ("shards.members", written by
   * tools/make-shards, or learned from shards without index files, see
   * #GstSpdlSrc:shard-cache): an epoch's global order from (seed, epoch)
   * alone, split between ranks as folders are, each sample read by its byte
   * range (resume at any number of ranks); from a server without byte
   * ranges, each shard streamed once an epoch instead and its members cut
   * out of it, in the same order (one warning names the server; see
   * docs/remote.md). FALSE, or shards with only
   * "shards.idx": each rank streams a contiguous part of the shards (resume
   * at the same number of ranks only).
   */
  g_object_class_install_property (gobject_class, PROP_ELASTIC,
      g_param_spec_boolean ("elastic", "Elastic",
          "Tar shards: a global order split by position, members read by "
          "byte range (a member index: shards.members, or learned without "
          "index files), instead of contiguous parts read in sequence",
          DEFAULT_ELASTIC, READY_PARAM));

  /**
   * GstSpdlSrc:remote-reads:
   *
   * Remote tar shards in the elastic order (#GstSpdlSrc:elastic): how this
   * rank reads its members. "ranges": a ranged GET each (members close
   * together share one), http-requests of them at once: the bytes of this
   * rank's members only, but a request per sample, which object stores
   * (and S3-compatible servers) charge for and spend time on. "stream":
   * each shard holding a member of this rank is streamed once an epoch, in
   * the shard order the epoch's global order comes from, and the members
   * cut out of it in the same order as ranged reads give; members read
   * ahead of their turn are held until then: at most about
   * #GstSpdlSrc:shuffle-buffer samples (1/num-shards of them this rank's),
   * within #GstSpdlSrc:shuffle-buffer-bytes (a member that would pass the
   * bound is read by a ranged GET at its turn instead; from a server
   * without byte ranges it is held all the same). With several ranks each
   * rank downloads every shard: num-shards times the data. "auto": stream
   * with one rank (num-shards=1), which reads every member of every shard
   * anyway, so the same bytes come in a request per shard instead of one
   * per sample; ranged reads with more. A server without byte ranges is
   * always streamed (see #GstSpdlSrc:elastic). Local shards: no effect.
   */
  g_object_class_install_property (gobject_class, PROP_REMOTE_READS,
      g_param_spec_enum ("remote-reads", "Remote reads",
          "Remote tar shards in the elastic order: ranged reads per member "
          "or each shard streamed once an epoch (auto: stream with one "
          "rank)", GST_TYPE_SPDL_REMOTE_READS, DEFAULT_REMOTE_READS,
          READY_PARAM));

  /**
   * GstSpdlSrc:shard-learn:
   *
   * Remote tar shards without index files (#GstSpdlSrc:shard-cache): how
   * their member index is learned on a first run. "stream": each shard
   * streamed whole, up to 8 at once (only the labels kept), so that a
   * first run moves the shards' bytes twice (learning, then the epoch)
   * but learns at the link's speed. "headers": the tar headers (and label
   * members) read by ranged GETs of 4 KiB, the data passed over, up to
   * http-requests shards (at most 64) at once: a few % of the bytes, but a
   * request per sample one after another within a shard (a shard of 1000
   * samples at 20 ms a request: 20 s), for slow or metered links and
   * shards of a few hundred samples. A server that does not answer byte
   * ranges is streamed. Local shards: no effect (their headers are read).
   */
  g_object_class_install_property (gobject_class, PROP_SHARD_LEARN,
      g_param_spec_enum ("shard-learn", "Shard learning",
          "Remote tar shards without index files: their member index "
          "learned by streaming each shard, or from their tar headers by "
          "ranged GETs (a few % of the bytes, a request per sample)",
          GST_TYPE_SPDL_SHARD_LEARN, DEFAULT_SHARD_LEARN, READY_PARAM));

  /**
   * GstSpdlSrc:shard-cache:
   *
   * Tar shards without index files (neither "shards.members" nor
   * "shards.idx" beside them; a local file that is not there, a 404 or
   * S3's NoSuchKey): their member index is learned by reading each shard
   * once (its tar headers; a remote shard is streamed whole, its labels
   * kept) and kept in this folder, one file per list of shards in the
   * shards.members format, named by a SHA-256 over the shards' locations
   * in listing order, sizes and validators (local: modification time;
   * remote: ETag, else Last-Modified, from a HEAD request each), so that a
   * restarted job reads no shard to start and a changed shard is learned
   * again. A file that does not parse or does not list the shards is
   * learned again with a warning; one that cannot be written is a
   * warning. NULL: $XDG_CACHE_HOME/gst-spdl/shards
   * (g_get_user_cache_dir()); "": learned each time, never kept. Remote
   * shards sending neither ETag nor Last-Modified are never kept. The
   * processes that start together on one machine with the same folder
   * (the ranks of one job) learn remote shards once: one streams them,
   * the others wait for its file (an advisory lock beside it, "NAME.lock",
   * released however its holder ends and removed as it lets go; without
   * the file, they learn each on its own). In a shell, write shard-cache='""': a shell drops the
   * quotes of shard-cache="", and a value that reads like another property
   * ("http-timeout=2000", the next argument) is refused.
   */
  g_object_class_install_property (gobject_class, PROP_SHARD_CACHE,
      g_param_spec_string ("shard-cache", "Shard index cache",
          "Tar shards without index files: folder of the member indexes "
          "learned from them (NULL: $XDG_CACHE_HOME/gst-spdl/shards, "
          "\"\": not kept)", NULL, READY_PARAM));

  /**
   * GstSpdlSrc:image-key:
   *
   * Tar shards: which member of a sample (a WebDataset group) is its
   * image, as WebDataset's to_tuple() names it: a ";"-separated list of
   * extensions ("input.jpg;jpg"), the first one a group has is the image.
   * NULL: the first of jpg, jpeg, png, webp, bmp, gif, tif, tiff, ppm,
   * pgm, pbm, pnm that is a member's whole extension, else that ends one
   * ("img.jpg"). A group without an image member is skipped ("no-image",
   * or "unsupported-image" when it has an image spdldecode cannot read,
   * such as AVIF or HEIC), each named in a warning. Set, the shards'
   * index files (which describe the defaults) are not used: the member
   * index is learned (#GstSpdlSrc:shard-cache). For spdlvideodecode and
   * spdlaudiodecode the "image" is the video or audio member: name its
   * extensions ("mp4;webm", "flac;wav"; spdlgst's VideoLoader and
   * AudioLoader set their extensions).
   */
  g_object_class_install_property (gobject_class, PROP_IMAGE_KEY,
      g_param_spec_string ("image-key", "Image key",
          "Tar shards: the image (or video, audio) member's extensions, "
          "first present wins "
          "(\"input.jpg;jpg\"; NULL: jpg, jpeg, png, webp, bmp, gif, tif, "
          "tiff, ppm, pgm, pbm, pnm, whole or ending the extension)", NULL,
          READY_PARAM));

  /**
   * GstSpdlSrc:label-key:
   *
   * Tar shards: the label member's extensions, first present wins
   * ("cls", "json", "cls;json"). A member whose extension ends in "json"
   * holds the label in the JSON field #GstSpdlSrc:label-field; any other
   * holds it as ASCII digits (WebDataset's ".cls"). Labels are integers
   * from 0 to 2147483647; a sample whose label member holds anything else
   * is skipped ("bad-label"), and so is one without a label member when
   * label-key is set ("no-label"). NULL: "cls", a sample without one
   * having label -1. Set, the shards' index files are not used (see
   * #GstSpdlSrc:image-key).
   */
  g_object_class_install_property (gobject_class, PROP_LABEL_KEY,
      g_param_spec_string ("label-key", "Label key",
          "Tar shards: the label member's extensions, first present wins; "
          "one ending in json is a JSON member (NULL: cls, label -1 "
          "without one)", NULL, READY_PARAM));

  /**
   * GstSpdlSrc:label-field:
   *
   * Tar shards: where a JSON label member (#GstSpdlSrc:label-key) holds
   * the label, a dotted path of object members ("label",
   * "annotations.class"; a number indexes an array: "labels.0"). The
   * value must be a JSON integer from 0 to 2147483647 (not 3.0, not
   * "3"); JSON members are read up to 1 MiB, nested up to 512 levels.
   * NULL: "label".
   */
  g_object_class_install_property (gobject_class, PROP_LABEL_FIELD,
      g_param_spec_string ("label-field", "Label field",
          "Tar shards: the JSON label member's field holding the label, a "
          "dotted path (NULL: label)", NULL, READY_PARAM));

  /**
   * GstSpdlSrc:fields:
   *
   * The sample record's fields beside the media item (docs/record.md),
   * webdataset's to_tuple spelling: "NAME[;ALT...][#PATH][:KIND][:MISSING]",
   * ',' between fields ("txt,json,seg.png:label"); "json#meta.scores.1:float"
   * is one value inside the JSON NAME holds (keys and array indices; int,
   * float, string or json; an absent path is missing, another type bad).
   * NAME is, in tar shards, a
   * member's extension after the sample's key (the first of the
   * alternatives present); in a manifest with a header (.csv, .tsv,
   * .jsonl), a column; in a folder, a sidecar beside each image with its
   * stem ("x.txt" for "x.jpg"; such files are then no samples). The media
   * item is not one of them (#GstSpdlSrc:image-key picks it in shards).
   * Each sample buffer's meta holds the values, one per field in order
   * (gst_spdl_buffer_get_record_value()), and the src caps the string
   * "fields" describing them. A field absent or bad (not UTF-8, a NUL,
   * malformed JSON, not a number) or larger than
   * #GstSpdlSrc:max-field-size is handled by its MISSING policy (skip:
   * "missing-field", "bad-field", "field-too-large"). In the elastic
   * order each sample's group of members is read with its image (remote
   * shards: by byte range, also on one rank, which would otherwise stream
   * each shard). S3 folders take no field. NULL: no field.
   */
  g_object_class_install_property (gobject_class, PROP_FIELDS,
      g_param_spec_string ("fields", "Fields",
          "The sample record's fields beside the media: member extensions, "
          "manifest columns or sidecar extensions, NAME[;ALT][#PATH][:KIND]"
          "[:MISSING] separated by ','", NULL, READY_PARAM));
  /**
   * GstSpdlSrc:missing-field:
   *
   * What a sample gets whose field (#GstSpdlSrc:fields) is absent or bad,
   * for the fields that name no policy of their own.
   */
  g_object_class_install_property (gobject_class, PROP_MISSING_FIELD,
      g_param_spec_enum ("missing-field", "Missing field",
          "Policy of fields absent or bad in a sample, where the field names "
          "none", GST_TYPE_SPDL_MISSING_FIELD, DEFAULT_MISSING_FIELD,
          READY_PARAM));
  /**
   * GstSpdlSrc:max-field-size:
   *
   * A field's member, sidecar or cell larger than this many bytes is not
   * read: the field's policy decides ("field-too-large").
   */
  g_object_class_install_property (gobject_class, PROP_MAX_FIELD_SIZE,
      g_param_spec_uint64 ("max-field-size", "Max field size",
          "Largest field value read, in bytes", 1, G_MAXUINT64,
          DEFAULT_MAX_FIELD_SIZE, READY_PARAM));
  /**
   * GstSpdlSrc:path-column:
   *
   * Manifests with a header (CSV, TSV, JSON Lines): the column holding
   * each sample's path. NULL: the first of path, image, filepath,
   * file_name, filename, file, audio_filepath, audio_filename, video
   * present. A template of column names in braces forms the path from
   * several: "{page_dir}/{videoid}.mp4" for WebVid's CSV.
   */
  g_object_class_install_property (gobject_class, PROP_PATH_COLUMN,
      g_param_spec_string ("path-column", "Path column",
          "Manifests with a header: the column of the paths (NULL: path, "
          "image, filepath, file_name, filename, file, audio_filepath, "
          "audio_filename or video), or a template of {column} names",
          NULL, READY_PARAM));
  /**
   * GstSpdlSrc:annotations:
   *
   * A COCO instances file ("instances_train2017.json": a local path, an
   * http(s):// or s3:// URL, read with the remote-data settings below):
   * the samples are its images, sorted by image id as torchvision's
   * CocoDetection orders them, each read from #GstSpdlSrc:location (their
   * folder, or a URL prefix) joined with its "file_name". Each sample's
   * record starts with the fields "objects" (kind objects: the image's
   * annotations in file order, a compact JSON array of COCO annotation
   * objects as the file writes them, "[]" for none) and "image_id" (int),
   * then #GstSpdlSrc:fields (sidecars beside each image; local folders
   * only). The file is read once at start without a tree of it: mapped
   * locally (its annotations stay in the mapping, 16 bytes each in
   * memory), remotely downloaded whole into memory (at most 4 GiB).
   * Broken or truncated JSON is an error naming the file and the byte.
   * Annotations naming no image ("unknown-image") and that are no object
   * or lack an integer image_id ("bad-annotation") are not delivered;
   * an image id listed again ("duplicate-image") keeps the first; an
   * image without an integer id or a file_name ("bad-image") is not
   * listed; a category_id not among "categories" ("unknown-category")
   * is kept as it is, as torchvision keeps it. Each is counted by reason
   * (#GstSpdlSrc:annotation-counts) and warned about, naming the file
   * and the image or annotation id (the first 10 per reason). Boxes and
   * masks themselves are checked when decoded. An image file missing is
   * skipped as any unreadable sample is. NULL: none.
   */
  g_object_class_install_property (gobject_class, PROP_ANNOTATIONS,
      g_param_spec_string ("annotations", "Annotations",
          "COCO instances file (path or URL) whose images, under location, "
          "are the samples, with their objects (NULL: none)", NULL,
          READY_PARAM));
  /**
   * GstSpdlSrc:empty-images:
   *
   * With #GstSpdlSrc:annotations: whether images with no annotation are
   * samples (with "objects" "[]"), or are left out when listing, so that
   * #GstSpdlSrc:num-samples counts only the others.
   */
  g_object_class_install_property (gobject_class, PROP_EMPTY_IMAGES,
      g_param_spec_enum ("empty-images", "Empty images",
          "Annotations: images with no annotation kept or dropped",
          GST_TYPE_SPDL_EMPTY_IMAGES, DEFAULT_EMPTY_IMAGES, READY_PARAM));
  /**
   * GstSpdlSrc:annotation-counts:
   *
   * With #GstSpdlSrc:annotations, once listed: "images" (listed),
   * "annotations" (delivered) and what was passed over or kept with a
   * warning, by reason: "unknown-image", "duplicate-image",
   * "unknown-category", "bad-annotation", "bad-image" (guint64 each).
   */
  g_object_class_install_property (gobject_class, PROP_ANNOTATION_COUNTS,
      g_param_spec_boxed ("annotation-counts", "Annotation counts",
          "Annotations: images and annotations listed, and those passed "
          "over by reason", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * GstSpdlSrc:http-requests:
   *
   * Remote data: HTTP requests in flight at once, on one I/O thread (libcurl's
   * multi interface): sized for object storage, where each request waits
   * for its first byte. Single objects, and the members of tar shards in
   * the elastic order (a ranged request each), are requested this far
   * ahead of the streaming thread; shards streamed whole
   * (#GstSpdlSrc:elastic off) download up to min(this, 8) ahead.
   */
  g_object_class_install_property (gobject_class, PROP_HTTP_REQUESTS,
      g_param_spec_uint ("http-requests", "HTTP requests",
          "Remote data: concurrent HTTP requests", 1, 1024,
          DEFAULT_HTTP_REQUESTS, READY_PARAM));
  /**
   * GstSpdlSrc:http-connect-timeout:
   *
   * Remote data: milliseconds a request may take to connect (TCP and TLS)
   * before the attempt fails ("could not connect within N s").
   */
  g_object_class_install_property (gobject_class, PROP_HTTP_CONNECT_TIMEOUT,
      g_param_spec_uint ("http-connect-timeout", "HTTP connect timeout",
          "Remote data: connect timeout per request attempt (ms)", 1,
          G_MAXINT, DEFAULT_HTTP_CONNECT_TIMEOUT, READY_PARAM));
  /**
   * GstSpdlSrc:http-timeout:
   *
   * Remote data: milliseconds a connected request may go without receiving
   * a byte, its response's first one included, before the attempt fails
   * (and is retried). A server that accepts connections and never
   * answers fails a request after two attempts ("no response within N s"),
   * whatever #GstSpdlSrc:http-retries says: by default in about 30 s.
   */
  g_object_class_install_property (gobject_class, PROP_HTTP_TIMEOUT,
      g_param_spec_uint ("http-timeout", "HTTP timeout",
          "Remote data: stall timeout per request attempt: no byte for this "
          "long (ms)", 1, G_MAXINT, DEFAULT_HTTP_TIMEOUT, READY_PARAM));
  /**
   * GstSpdlSrc:http-retries:
   *
   * Remote data: retries of a request that failed to connect, timed out,
   * was cut off or got status 429 or 5xx, after exponential backoff with
   * jitter (100 ms doubling, up to 10 s); a shard cut off mid-way resumes
   * where it was (a Range request). Other statuses (403, 404) are not
   * retried. A request that still fails skips its sample (or shard) with
   * the reason "http-error" or "timeout".
   */
  g_object_class_install_property (gobject_class, PROP_HTTP_RETRIES,
      g_param_spec_uint ("http-retries", "HTTP retries",
          "Remote data: retries of a failed request", 0, 100,
          DEFAULT_HTTP_RETRIES, READY_PARAM));
  /**
   * GstSpdlSrc:http-low-speed-limit:
   *
   * Remote data: bytes per second a response's body must average over
   * #GstSpdlSrc:http-low-speed-time seconds (as curl's
   * CURLOPT_LOW_SPEED_LIMIT): an attempt slower than that fails as a
   * timeout ("slower than N bytes/s"), is retried (#GstSpdlSrc:http-retries,
   * the bytes had kept), then its sample or shard is skipped with the
   * reason "timeout". #GstSpdlSrc:http-timeout only catches a server that
   * sends nothing; this one a server that trickles (a byte every 100 ms
   * would take hours over a shard). Time a download waits on its reader
   * (#GstSpdlSrc:max-bytes-in-flight) does not count. 0: no bound.
   */
  g_object_class_install_property (gobject_class, PROP_HTTP_LOW_SPEED_LIMIT,
      g_param_spec_uint ("http-low-speed-limit", "HTTP low speed limit",
          "Remote data: slowest average body speed over http-low-speed-time "
          "before an attempt fails (bytes/s, 0: no bound)", 0, G_MAXINT,
          DEFAULT_HTTP_LOW_SPEED_LIMIT, READY_PARAM));
  /**
   * GstSpdlSrc:http-low-speed-time:
   *
   * Remote data: seconds over which #GstSpdlSrc:http-low-speed-limit is
   * averaged (as curl's CURLOPT_LOW_SPEED_TIME).
   */
  g_object_class_install_property (gobject_class, PROP_HTTP_LOW_SPEED_TIME,
      g_param_spec_uint ("http-low-speed-time", "HTTP low speed time",
          "Remote data: seconds http-low-speed-limit is averaged over", 1,
          G_MAXINT / 1000, DEFAULT_HTTP_LOW_SPEED_TIME, READY_PARAM));
  /**
   * GstSpdlSrc:max-bytes-in-flight:
   *
   * Remote data: bytes received but not yet consumed. Shards downloading
   * ahead share it (each pauses when its share is full); single objects
   * are not requested past it.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_BYTES_IN_FLIGHT,
      g_param_spec_uint64 ("max-bytes-in-flight", "Max bytes in flight",
          "Remote data: received bytes not yet consumed", 1024 * 1024,
          G_MAXUINT64, DEFAULT_MAX_BYTES_IN_FLIGHT, READY_PARAM));
  /**
   * GstSpdlSrc:s3-endpoint:
   *
   * s3:// locations: the endpoint URL (e.g. "http://127.0.0.1:9000"); NULL:
   * AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url (its
   * services section's s3 block, as botocore reads it), else AWS's
   * regional endpoint.
   */
  g_object_class_install_property (gobject_class, PROP_S3_ENDPOINT,
      g_param_spec_string ("s3-endpoint", "S3 endpoint",
          "S3 endpoint URL (NULL: AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, "
          "the profile's endpoint_url)", NULL, READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_S3_REGION,
      g_param_spec_string ("s3-region", "S3 region",
          "S3 region signed for (NULL: AWS_REGION / AWS_DEFAULT_REGION, "
          "the profile's region, else us-east-1)", NULL, READY_PARAM));
  /**
   * GstSpdlSrc:s3-profile:
   *
   * The profile of the shared credentials and config files
   * (~/.aws/credentials, ~/.aws/config) to use, as boto3's
   * Session(profile_name=): it must exist, and the AWS_ACCESS_KEY_ID
   * environment variables are then not read. NULL: AWS_DEFAULT_PROFILE,
   * AWS_PROFILE, else "default".
   *
   * Without #GstSpdlSrc:s3-access-key, credentials come from botocore's
   * chain: the AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
   * AWS_SESSION_TOKEN variables, the role the profile assumes with STS
   * (role_arn with source_profile or credential_source), web identity
   * (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, or the profile's
   * web_identity_token_file: EKS's IRSA), the profile's keys in the shared
   * credentials file (AWS_SHARED_CREDENTIALS_FILE) and config file
   * (AWS_CONFIG_FILE), container credentials
   * (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI), then EC2
   * instance metadata (IMDSv2; endpoint AWS_EC2_METADATA_SERVICE_ENDPOINT,
   * off with AWS_EC2_METADATA_DISABLED=true). Temporary credentials are
   * fetched again before they expire. With none anywhere, requests go
   * unsigned (public buckets), and S3's errors say so and where the chain
   * looked. Errors name where the credentials came from, never a secret.
   */
  g_object_class_install_property (gobject_class, PROP_S3_PROFILE,
      g_param_spec_string ("s3-profile", "S3 profile",
          "Profile of ~/.aws/credentials and ~/.aws/config (NULL: "
          "AWS_DEFAULT_PROFILE / AWS_PROFILE, else default)", NULL,
          READY_PARAM));
  g_object_class_install_property (gobject_class, PROP_S3_ACCESS_KEY,
      g_param_spec_string ("s3-access-key", "S3 access key",
          "S3 access key ID (NULL: from the AWS credential chain, see "
          "s3-profile)", NULL, READY_PARAM));
  /**
   * GstSpdlSrc:s3-secret-key:
   *
   * Secrets are write-only and never printed by spdlsrc, not even in its
   * debug logs; GStreamer's parser logs launch lines as they are written,
   * so they are better set with g_object_set() than in a launch line.
   */
  g_object_class_install_property (gobject_class, PROP_S3_SECRET_KEY,
      g_param_spec_string ("s3-secret-key", "S3 secret key",
          "S3 secret access key, write-only (with s3-access-key)",
          NULL, G_PARAM_WRITABLE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_S3_SESSION_TOKEN,
      g_param_spec_string ("s3-session-token", "S3 session token",
          "S3 session token, write-only (with s3-access-key)", NULL,
          G_PARAM_WRITABLE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  /**
   * GstSpdlSrc:s3-virtual-host:
   *
   * Address buckets as "BUCKET.HOST/KEY" (virtual-host style, AWS's) instead
   * of "HOST/BUCKET/KEY" (path style, most S3-compatible servers').
   */
  g_object_class_install_property (gobject_class, PROP_S3_VIRTUAL_HOST,
      g_param_spec_boolean ("s3-virtual-host", "S3 virtual host",
          "Virtual-host style S3 addressing instead of path style",
          DEFAULT_S3_VIRTUAL_HOST, READY_PARAM));
  /**
   * GstSpdlSrc:ca-file:
   *
   * https:// (and https S3 endpoints): a PEM file of the certificate
   * authorities to trust, e.g. a private CA's. NULL: the CURL_CA_BUNDLE or
   * SSL_CERT_FILE environment variable, else the system's. Certificates are
   * always verified: an untrusted one fails the request with a message
   * naming the URL.
   */
  g_object_class_install_property (gobject_class, PROP_CA_FILE,
      g_param_spec_string ("ca-file", "CA file",
          "PEM file of trusted certificate authorities for https (NULL: "
          "CURL_CA_BUNDLE / SSL_CERT_FILE, else the system's)", NULL,
          READY_PARAM));

  /**
   * GstSpdlSrc:stats:
   *
   * "spdl-stats": items-in (reads started), items-out (samples pushed),
   * busy (ns spent reading), mean, p90, p99 (ns per read), elapsed, and
   * skipped-REASON counts. Tar shards add shard-order ("elastic", or
   * "contiguous" when there is only shards.idx or elastic is off: the
   * order a checkpoint depends on) and shard-index-source, where the
   * counts or members came from ("shards.members", "shards.idx",
   * "learned" from the shards, or "cached": learned before, see
   * #GstSpdlSrc:shard-cache). Remote data adds
   * http-peak-bytes-in-flight (the most bytes received and not yet handed
   * over, at most max-bytes-in-flight plus one write (16 KiB, 256 KiB
   * for a shard's stream), unless an
   * object or a coalesced ranged read of members is larger, or comes
   * without a Content-Length), http-responses, http-responses-http2,
   * http-changed (objects that changed while being read) and
   * http-range-ignored (ranged reads of elastic shards answered with the
   * whole shard: a server without Range support, slow).
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Reads, samples pushed and read times", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "SPDL dataset source", "Source/File",
      "Lists, shuffles, shards and reads a training dataset",
      "gst-spdl authors");

  basesrc_class->start = GST_DEBUG_FUNCPTR (gst_spdl_src_start);
  basesrc_class->stop = GST_DEBUG_FUNCPTR (gst_spdl_src_stop);
  basesrc_class->unlock = GST_DEBUG_FUNCPTR (gst_spdl_src_unlock);
  basesrc_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_spdl_src_unlock_stop);
  basesrc_class->negotiate = GST_DEBUG_FUNCPTR (gst_spdl_src_negotiate);
  pushsrc_class->create = GST_DEBUG_FUNCPTR (gst_spdl_src_create);

  GST_DEBUG_CATEGORY_INIT (spdl_src_debug, "spdlsrc", 0, "SPDL dataset source");
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_REMOTE_READS, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_SPDL_SHARD_LEARN, 0);
}

static void
gst_spdl_src_init (GstSpdlSrc * src)
{
  src->location = NULL;
  src->extensions = g_strdup (DEFAULT_EXTENSIONS);
  src->shuffle = DEFAULT_SHUFFLE;
  src->seed = DEFAULT_SEED;
  src->num_epochs = DEFAULT_NUM_EPOCHS;
  src->start_epoch = DEFAULT_START_EPOCH;
  src->shard_index = DEFAULT_SHARD_INDEX;
  src->num_shards = DEFAULT_NUM_SHARDS;
  src->drop_uneven = DEFAULT_DROP_UNEVEN;
  src->start_index = DEFAULT_START_INDEX;
  src->start_offset = DEFAULT_START_OFFSET;
  src->prefetch = DEFAULT_PREFETCH;
  src->prefetch_threshold = DEFAULT_PREFETCH_THRESHOLD;
  src->max_file_size = DEFAULT_MAX_FILE_SIZE;
  src->max_errors = DEFAULT_MAX_ERRORS;
  src->warning_limit = DEFAULT_WARNING_LIMIT;
  src->shuffle_buffer = DEFAULT_SHUFFLE_BUFFER;
  src->elastic = DEFAULT_ELASTIC;
  src->remote_reads = DEFAULT_REMOTE_READS;
  src->shard_learn = DEFAULT_SHARD_LEARN;
  src->shard_order = -1;
  src->shuffle_buffer_bytes = DEFAULT_SHUFFLE_BUFFER_BYTES;
  src->http_requests = DEFAULT_HTTP_REQUESTS;
  src->http_connect_timeout = DEFAULT_HTTP_CONNECT_TIMEOUT;
  src->http_timeout = DEFAULT_HTTP_TIMEOUT;
  src->canceller = gst_spdl_http_canceller_new ();
  src->http_retries = DEFAULT_HTTP_RETRIES;
  src->http_low_speed_limit = DEFAULT_HTTP_LOW_SPEED_LIMIT;
  src->http_low_speed_time = DEFAULT_HTTP_LOW_SPEED_TIME;
  src->max_bytes_in_flight = DEFAULT_MAX_BYTES_IN_FLIGHT;
  src->s3_virtual_host = DEFAULT_S3_VIRTUAL_HOST;
  src->missing_field = DEFAULT_MISSING_FIELD;
  src->empty_images = DEFAULT_EMPTY_IMAGES;
  src->max_field_size = DEFAULT_MAX_FIELD_SIZE;
  src->buckets = DEFAULT_BUCKETS;
  src->bucket_window = DEFAULT_BUCKET_WINDOW;
  src->batch_duration = DEFAULT_BATCH_DURATION;
  src->max_span = DEFAULT_MAX_SPAN;
  src->batch_size = DEFAULT_BATCH_SIZE;
  g_queue_init (&src->slots);
  gst_spdl_stats_init (&src->stats);
  g_mutex_init (&src->read_lock);
  g_cond_init (&src->read_cond);
  gst_base_src_set_format (GST_BASE_SRC (src), GST_FORMAT_TIME);
  gst_base_src_set_live (GST_BASE_SRC (src), FALSE);
}

static void
gst_spdl_src_finalize (GObject * object)
{
  GstSpdlSrc *src = GST_SPDL_SRC (object);

  g_free (src->location);
  g_free (src->extensions);
  g_free (src->s3_endpoint);
  g_free (src->s3_region);
  g_free (src->s3_profile);
  g_free (src->dataset_fingerprint);
  g_free (src->s3_access_key);
  g_free (src->s3_secret_key);
  g_free (src->s3_session_token);
  g_free (src->ca_file);
  g_free (src->shard_cache);
  g_free (src->image_key);
  g_free (src->label_key);
  g_free (src->label_field);
  g_free (src->fields);
  g_free (src->path_column);
  g_free (src->annotations);
  g_clear_pointer (&src->record, gst_spdl_record_free);
  /* a failed start leaves them (stop() is not called) */
  g_clear_pointer (&src->batch_plan, gst_spdl_batch_plan_free);
  g_clear_pointer (&src->durations, g_free);
  g_clear_pointer (&src->sample_buckets, g_free);
  free_config_strings (src);
  gst_spdl_http_canceller_free (src->canceller);
  g_mutex_clear (&src->read_lock);
  g_cond_clear (&src->read_cond);
  gst_spdl_stats_clear (&src->stats);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_spdl_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstSpdlSrc *src = GST_SPDL_SRC (object);

  GST_OBJECT_LOCK (src);
  switch (prop_id) {
    case PROP_LOCATION:
      g_free (src->location);
      src->location = g_value_dup_string (value);
      break;
    case PROP_EXTENSIONS:
      g_free (src->extensions);
      src->extensions = g_value_dup_string (value);
      break;
    case PROP_SHUFFLE:
      src->shuffle = g_value_get_boolean (value);
      break;
    case PROP_SEED:
      src->seed = g_value_get_uint64 (value);
      break;
    case PROP_NUM_EPOCHS:
      src->num_epochs = g_value_get_int (value);
      break;
    case PROP_START_EPOCH:
      src->start_epoch = g_value_get_uint (value);
      break;
    case PROP_SHARD_INDEX:
      src->shard_index = g_value_get_uint (value);
      break;
    case PROP_NUM_SHARDS:
      src->num_shards = g_value_get_uint (value);
      break;
    case PROP_DROP_UNEVEN:
      src->drop_uneven = g_value_get_boolean (value);
      break;
    case PROP_START_INDEX:
      src->start_index = g_value_get_uint64 (value);
      break;
    case PROP_START_OFFSET:
      src->start_offset = g_value_get_uint64 (value);
      break;
    case PROP_BUCKETS:
      src->buckets = g_value_get_uint (value);
      break;
    case PROP_BUCKET_WINDOW:
      src->bucket_window = g_value_get_uint (value);
      break;
    case PROP_BATCH_DURATION:
      src->batch_duration = g_value_get_double (value);
      break;
    case PROP_MAX_SPAN:
      src->max_span = g_value_get_double (value);
      break;
    case PROP_BATCH_SIZE:
      src->batch_size = g_value_get_uint (value);
      break;
    case PROP_PREFETCH:
      src->prefetch = g_value_get_uint (value);
      break;
    case PROP_PREFETCH_THRESHOLD:
      src->prefetch_threshold = g_value_get_uint64 (value);
      break;
    case PROP_MAX_FILE_SIZE:
      src->max_file_size = g_value_get_uint64 (value);
      break;
    case PROP_MAX_ERRORS:
      src->max_errors = g_value_get_int (value);
      break;
    case PROP_WARNING_LIMIT:
      src->warning_limit = g_value_get_uint (value);
      break;
    case PROP_SHUFFLE_BUFFER:
      src->shuffle_buffer = g_value_get_uint (value);
      break;
    case PROP_SHUFFLE_BUFFER_BYTES:
      src->shuffle_buffer_bytes = g_value_get_uint64 (value);
      break;
    case PROP_ELASTIC:
      src->elastic = g_value_get_boolean (value);
      break;
    case PROP_SHARD_LEARN:
      src->shard_learn = g_value_get_enum (value);
      break;
    case PROP_REMOTE_READS:
      src->remote_reads = g_value_get_enum (value);
      break;
    case PROP_HTTP_REQUESTS:
      src->http_requests = g_value_get_uint (value);
      break;
    case PROP_HTTP_TIMEOUT:
      src->http_timeout = g_value_get_uint (value);
      break;
    case PROP_HTTP_CONNECT_TIMEOUT:
      src->http_connect_timeout = g_value_get_uint (value);
      break;
    case PROP_HTTP_RETRIES:
      src->http_retries = g_value_get_uint (value);
      break;
    case PROP_HTTP_LOW_SPEED_LIMIT:
      src->http_low_speed_limit = g_value_get_uint (value);
      break;
    case PROP_HTTP_LOW_SPEED_TIME:
      src->http_low_speed_time = g_value_get_uint (value);
      break;
    case PROP_MAX_BYTES_IN_FLIGHT:
      src->max_bytes_in_flight = g_value_get_uint64 (value);
      break;
    case PROP_S3_ENDPOINT:
      g_free (src->s3_endpoint);
      src->s3_endpoint = g_value_dup_string (value);
      break;
    case PROP_S3_REGION:
      g_free (src->s3_region);
      src->s3_region = g_value_dup_string (value);
      break;
    case PROP_S3_PROFILE:
      g_free (src->s3_profile);
      src->s3_profile = g_value_dup_string (value);
      break;
    case PROP_S3_ACCESS_KEY:
      g_free (src->s3_access_key);
      src->s3_access_key = g_value_dup_string (value);
      break;
    case PROP_S3_SECRET_KEY:
      g_free (src->s3_secret_key);
      src->s3_secret_key = g_value_dup_string (value);
      break;
    case PROP_S3_SESSION_TOKEN:
      g_free (src->s3_session_token);
      src->s3_session_token = g_value_dup_string (value);
      break;
    case PROP_S3_VIRTUAL_HOST:
      src->s3_virtual_host = g_value_get_boolean (value);
      break;
    case PROP_SHARD_CACHE:
      g_free (src->shard_cache);
      src->shard_cache = g_value_dup_string (value);
      break;
    case PROP_CA_FILE:
      g_free (src->ca_file);
      src->ca_file = g_value_dup_string (value);
      break;
    case PROP_IMAGE_KEY:
      g_free (src->image_key);
      src->image_key = g_value_dup_string (value);
      break;
    case PROP_LABEL_KEY:
      g_free (src->label_key);
      src->label_key = g_value_dup_string (value);
      break;
    case PROP_LABEL_FIELD:
      g_free (src->label_field);
      src->label_field = g_value_dup_string (value);
      break;
    case PROP_FIELDS:
      g_free (src->fields);
      src->fields = g_value_dup_string (value);
      break;
    case PROP_MISSING_FIELD:
      src->missing_field = g_value_get_enum (value);
      break;
    case PROP_MAX_FIELD_SIZE:
      src->max_field_size = g_value_get_uint64 (value);
      break;
    case PROP_PATH_COLUMN:
      g_free (src->path_column);
      src->path_column = g_value_dup_string (value);
      break;
    case PROP_ANNOTATIONS:
      g_free (src->annotations);
      src->annotations = g_value_dup_string (value);
      break;
    case PROP_EMPTY_IMAGES:
      src->empty_images = g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (src);
}

static void
gst_spdl_src_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstSpdlSrc *src = GST_SPDL_SRC (object);

  GST_OBJECT_LOCK (src);
  switch (prop_id) {
    case PROP_LOCATION:
      g_value_set_string (value, src->location);
      break;
    case PROP_EXTENSIONS:
      g_value_set_string (value, src->extensions);
      break;
    case PROP_SHUFFLE:
      g_value_set_boolean (value, src->shuffle);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, src->seed);
      break;
    case PROP_NUM_EPOCHS:
      g_value_set_int (value, src->num_epochs);
      break;
    case PROP_START_EPOCH:
      g_value_set_uint (value, src->start_epoch);
      break;
    case PROP_SHARD_INDEX:
      g_value_set_uint (value, src->shard_index);
      break;
    case PROP_NUM_SHARDS:
      g_value_set_uint (value, src->num_shards);
      break;
    case PROP_DROP_UNEVEN:
      g_value_set_boolean (value, src->drop_uneven);
      break;
    case PROP_START_INDEX:
      g_value_set_uint64 (value, src->start_index);
      break;
    case PROP_START_OFFSET:
      g_value_set_uint64 (value, src->start_offset);
      break;
    case PROP_BUCKETS:
      g_value_set_uint (value, src->buckets);
      break;
    case PROP_BUCKET_WINDOW:
      g_value_set_uint (value, src->bucket_window);
      break;
    case PROP_BATCH_DURATION:
      g_value_set_double (value, src->batch_duration);
      break;
    case PROP_MAX_SPAN:
      g_value_set_double (value, src->max_span);
      break;
    case PROP_BATCH_SIZE:
      g_value_set_uint (value, src->batch_size);
      break;
    case PROP_NUM_BATCHES:
      g_value_set_uint64 (value, src->batches_per_epoch);
      break;
    case PROP_PREFETCH:
      g_value_set_uint (value, src->prefetch);
      break;
    case PROP_PREFETCH_THRESHOLD:
      g_value_set_uint64 (value, src->prefetch_threshold);
      break;
    case PROP_MAX_FILE_SIZE:
      g_value_set_uint64 (value, src->max_file_size);
      break;
    case PROP_MAX_ERRORS:
      g_value_set_int (value, src->max_errors);
      break;
    case PROP_WARNING_LIMIT:
      g_value_set_uint (value, src->warning_limit);
      break;
    case PROP_SHUFFLE_BUFFER:
      g_value_set_uint (value, src->shuffle_buffer);
      break;
    case PROP_SHUFFLE_BUFFER_BYTES:
      g_value_set_uint64 (value, src->shuffle_buffer_bytes);
      break;
    case PROP_ELASTIC:
      g_value_set_boolean (value, src->elastic);
      break;
    case PROP_SHARD_LEARN:
      g_value_set_enum (value, src->shard_learn);
      break;
    case PROP_REMOTE_READS:
      g_value_set_enum (value, src->remote_reads);
      break;
    case PROP_HTTP_REQUESTS:
      g_value_set_uint (value, src->http_requests);
      break;
    case PROP_HTTP_TIMEOUT:
      g_value_set_uint (value, src->http_timeout);
      break;
    case PROP_HTTP_CONNECT_TIMEOUT:
      g_value_set_uint (value, src->http_connect_timeout);
      break;
    case PROP_HTTP_RETRIES:
      g_value_set_uint (value, src->http_retries);
      break;
    case PROP_HTTP_LOW_SPEED_LIMIT:
      g_value_set_uint (value, src->http_low_speed_limit);
      break;
    case PROP_HTTP_LOW_SPEED_TIME:
      g_value_set_uint (value, src->http_low_speed_time);
      break;
    case PROP_MAX_BYTES_IN_FLIGHT:
      g_value_set_uint64 (value, src->max_bytes_in_flight);
      break;
    case PROP_S3_ENDPOINT:
      g_value_set_string (value, src->s3_endpoint);
      break;
    case PROP_S3_REGION:
      g_value_set_string (value, src->s3_region);
      break;
    case PROP_S3_PROFILE:
      g_value_set_string (value, src->s3_profile);
      break;
    case PROP_S3_ACCESS_KEY:
      g_value_set_string (value, src->s3_access_key);
      break;
    case PROP_S3_VIRTUAL_HOST:
      g_value_set_boolean (value, src->s3_virtual_host);
      break;
    case PROP_SHARD_CACHE:
      g_value_set_string (value, src->shard_cache);
      break;
    case PROP_CA_FILE:
      g_value_set_string (value, src->ca_file);
      break;
    case PROP_IMAGE_KEY:
      g_value_set_string (value, src->image_key);
      break;
    case PROP_LABEL_KEY:
      g_value_set_string (value, src->label_key);
      break;
    case PROP_LABEL_FIELD:
      g_value_set_string (value, src->label_field);
      break;
    case PROP_FIELDS:
      g_value_set_string (value, src->fields);
      break;
    case PROP_MISSING_FIELD:
      g_value_set_enum (value, src->missing_field);
      break;
    case PROP_MAX_FIELD_SIZE:
      g_value_set_uint64 (value, src->max_field_size);
      break;
    case PROP_PATH_COLUMN:
      g_value_set_string (value, src->path_column);
      break;
    case PROP_ANNOTATIONS:
      g_value_set_string (value, src->annotations);
      break;
    case PROP_EMPTY_IMAGES:
      g_value_set_enum (value, src->empty_images);
      break;
    case PROP_ANNOTATION_COUNTS:{
      GstStructure *st = gst_structure_new ("annotation-counts",
          "images", G_TYPE_UINT64, src->annotated_images,
          "annotations", G_TYPE_UINT64, src->annotations_delivered, NULL);
      guint i;

      for (i = 0; i < GST_SPDL_COCO_N_REASONS; i++)
        gst_structure_set (st, gst_spdl_coco_reason_name (i), G_TYPE_UINT64,
            src->annotation_counts[i], NULL);
      g_value_take_boxed (value, st);
      break;
    }
    case PROP_ERRORS:
      g_value_set_uint64 (value, src->errors);
      break;
    case PROP_ERROR_COUNTS:
      g_value_take_boxed (value, gst_spdl_error_counts_new
          (GST_SPDL_READ_ERROR, src->errors, src->errors_by_reason,
              GST_SPDL_READ_N_ERRORS));
      break;
    case PROP_NUM_SAMPLES:
      g_value_set_uint64 (value, src->samples_per_epoch);
      break;
    case PROP_NUM_CLASSES:
      g_value_set_uint (value, src->dataset ? src->dataset->n_classes : 0);
      break;
    case PROP_DATASET_FINGERPRINT:
      g_value_set_string (value, src->dataset_fingerprint);
      break;
    case PROP_CLASSES:
      g_value_set_boxed (value, src->dataset ? src->dataset->class_names :
          NULL);
      break;
    case PROP_STATS:{
      GstStructure *st = gst_spdl_stats_to_structure (&src->stats);

      gst_spdl_error_counts_add_skipped (st, GST_SPDL_READ_ERROR,
          src->errors_by_reason, GST_SPDL_READ_N_ERRORS);
      add_http_stats (src, st);
      if (src->shard_order >= 0)
        gst_structure_set (st, "shard-order", G_TYPE_STRING,
            src->shard_order ? "elastic" : "contiguous",
            "shard-index-source", G_TYPE_STRING, src->shard_index_source,
            NULL);
      g_value_take_boxed (value, st);
      break;
    }
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (src);
}

/* ------------------------------------------------------------------------ */
/* Remote data statistics                                                   */

/* Called with the object lock: the live transfers' statistics, kept when
 * they end. */
static void
update_http_stats (GstSpdlSrc * src)
{
  if (src->http)
    gst_spdl_http_get_stats (src->http, &src->http_stats);
  else if (src->shards && gst_spdl_shards_get_http_stats (src->shards,
          &src->http_stats))
    ;
  else
    return;
  src->have_http_stats = TRUE;
}

/* Called with the object lock. */
static void
add_http_stats (GstSpdlSrc * src, GstStructure * st)
{
  update_http_stats (src);
  if (!src->have_http_stats)
    return;
  gst_structure_set (st,
      "http-peak-bytes-in-flight", G_TYPE_UINT64,
      src->http_stats.peak_bytes_in_flight,
      "http-responses", G_TYPE_UINT64, src->http_stats.responses,
      "http-responses-http2", G_TYPE_UINT64, src->http_stats.responses_http2,
      "http-changed", G_TYPE_UINT64, src->http_stats.changed,
      "http-range-ignored", G_TYPE_UINT64, src->http_stats.range_ignored,
      NULL);
}

static void
gst_spdl_src_cancel (GstSpdlSrc * src)
{
  GST_INFO_OBJECT (src, "cancelled");
  gst_spdl_http_canceller_cancel (src->canceller);
}

static GstStructure *
gst_spdl_src_get_sample (GstSpdlSrc * src, guint64 index)
{
  GstStructure *sample = NULL;

  GST_OBJECT_LOCK (src);
  if (src->dataset && index < src->dataset->n_samples) {
    gchar *path = gst_spdl_dataset_get_full_path (src->dataset, index);
    gchar *shown = g_filename_display_name (path);

    sample = gst_structure_new ("sample", "path", G_TYPE_STRING, shown,
        "label", G_TYPE_INT, src->dataset->labels[index], NULL);
    /* structure strings are UTF-8: the name that opens the file, as the
     * sample meta keeps it */
    if (!g_utf8_validate (path, -1, NULL)) {
      GBytes *bytes = g_bytes_new (path, strlen (path));
      gst_structure_set (sample, "path-bytes", G_TYPE_BYTES, bytes, NULL);
      g_bytes_unref (bytes);
    }
    g_free (shown);
    g_free (path);
  }
  GST_OBJECT_UNLOCK (src);
  return sample;
}

/* ------------------------------------------------------------------------ */
/* Order of the samples                                                     */

static void
ensure_permutation (GstSpdlSrc * src, guint epoch)
{
  guint n = src->dataset->n_samples;

  if (!src->shuffle || (src->permutation && src->permutation_epoch == epoch))
    return;
  if (src->permutation == NULL)
    src->permutation = g_new (guint32, MAX (n, 1));
  gst_spdl_order_permutation (src->permutation, n, src->seed, epoch,
      GST_SPDL_ORDER_STREAM_SAMPLES);
  src->permutation_epoch = epoch;
}

/* This rank's share of @remaining samples (see the rule in the docs). */
static guint64
rank_share (GstSpdlSrc * src, guint64 remaining)
{
  return gst_spdl_order_rank_share (remaining, src->num_shards,
      src->drop_uneven);
}

/* Global samples of @epoch consumed before this run started. */
static guint64
epoch_offset (GstSpdlSrc * src, guint epoch)
{
  return epoch == src->start_epoch ? src->first_offset : 0;
}

/* Batches of @epoch consumed before this run started (batched order). */
static guint64
epoch_first_batch (GstSpdlSrc * src, guint epoch)
{
  return epoch == src->start_epoch ? src->first_batch : 0;
}

/* This rank's share of @plan with @first batches consumed: its batches
 * and their samples. */
static void
rank_batches (GstSpdlSrc * src, const GstSpdlBatchPlan * plan,
    guint64 first, guint64 * batches, guint64 * samples)
{
  guint64 k, b;

  *batches = rank_share (src, plan->n_batches - first);
  *samples = 0;
  for (k = 0; k < *batches; k++) {
    b = gst_spdl_batch_plan_rank_batch (plan, first, src->shard_index,
        src->num_shards, k);
    *samples += plan->starts[b + 1] - plan->starts[b];
  }
}

/* The batched order's plan of @epoch, computed once per epoch (in the
 * order the cursor meets them). */
static const GstSpdlBatchPlan *
ensure_batch_plan (GstSpdlSrc * src, guint epoch)
{
  if (src->batch_plan && src->batch_plan_epoch == epoch)
    return src->batch_plan;
  gst_spdl_batch_plan_free (src->batch_plan);
  src->bucket_params.epoch = epoch;
  src->batch_plan = gst_spdl_batch_plan_new (src->durations,
      src->sample_buckets, src->dataset->n_samples, &src->bucket_params);
  src->batch_plan_epoch = epoch;
  rank_batches (src, src->batch_plan, epoch_first_batch (src, epoch),
      &src->plan_rank_batches, &src->plan_rank_samples);
  return src->batch_plan;
}

static guint64
epoch_samples (GstSpdlSrc * src, guint epoch)
{
  if (src->batched) {
    ensure_batch_plan (src, epoch);
    return src->plan_rank_samples;
  }
  return rank_share (src, src->dataset->n_samples - epoch_offset (src, epoch));
}

/* Global position of this rank's k-th sample of @epoch. */
static guint64
global_position (GstSpdlSrc * src, guint epoch, guint64 k)
{
  return epoch_offset (src, epoch) + src->shard_index + k * src->num_shards;
}

/* Positions past the epoch's end wrap around to its start (padding). */
static guint
dataset_index_at (GstSpdlSrc * src, guint epoch, guint64 position)
{
  guint64 wrapped = position % src->dataset->n_samples;

  ensure_permutation (src, epoch);
  return src->permutation ? src->permutation[wrapped] : (guint) wrapped;
}

static gboolean
cursor_exhausted (GstSpdlSrc * src)
{
  for (;;) {
    if (src->num_epochs >= 0 &&
        src->next_epoch >= src->start_epoch + (guint) src->num_epochs)
      return TRUE;
    /* a resumed first epoch may have nothing left */
    if (src->next_position < epoch_samples (src, src->next_epoch))
      return FALSE;
    src->next_epoch++;
    src->next_position = 0;
    src->next_batch = 0;
    src->next_in_batch = 0;
  }
}

/* The batched order's next sample for @slot: rank r's k-th batch is the
 * epoch's batch first + r + k x W (past the end: wrapped, padding), its
 * samples in turn; after it a run resumes at the offset of the batches
 * every rank has then taken. */
static void
take_batched (GstSpdlSrc * src, GstSpdlReadSlot * slot)
{
  guint epoch = src->next_epoch;
  const GstSpdlBatchPlan *plan = ensure_batch_plan (src, epoch);
  guint64 first = epoch_first_batch (src, epoch);
  guint64 unwrapped = first + src->shard_index +
      src->next_batch * src->num_shards;
  guint64 b = unwrapped % plan->n_batches;
  guint64 at = plan->starts[b] + src->next_in_batch;

  slot->position = unwrapped / plan->n_batches * plan->n_samples + at;
  slot->index = plan->samples[at];
  slot->batched = TRUE;
  slot->batch = src->next_batch;
  slot->batch_end = at + 1 == plan->starts[b + 1];
  slot->epoch_samples = src->plan_rank_samples;
  slot->epoch_batches = src->plan_rank_batches;
  slot->max_batch = plan->max_batch;
  if (src->next_batch + 1 >= src->plan_rank_batches) {
    slot->resume_epoch = epoch + 1;
    slot->resume_offset = 0;
  } else {
    slot->resume_epoch = epoch;
    slot->resume_offset = gst_spdl_batch_plan_resume_offset (plan, first,
        src->num_shards, src->next_batch);
  }
  if (slot->batch_end) {
    src->next_batch++;
    src->next_in_batch = 0;
  } else {
    src->next_in_batch++;
  }
}

/* Whether sample @index of @ds has a manifest span longer than max-span. */
static gboolean
span_too_long (GstSpdlSrc * src, const GstSpdlDataset * ds, guint index)
{
  return src->active_max_span > 0 && ds && ds->span_durations &&
      index < ds->n_samples && ds->span_bad[index] == GST_SPDL_SPAN_OK &&
      ds->span_durations[index] > src->active_max_span;
}

/* Called with read_lock: queues reads up to the prefetch depth. */
static void
schedule_reads (GstSpdlSrc * src)
{
  guint depth = MAX (src->prefetch, 1);

  if (src->http)
    depth = MAX (depth, src->http_requests);

  while (g_queue_get_length (&src->slots) < depth && !cursor_exhausted (src)) {
    GstSpdlReadSlot *slot = g_new0 (GstSpdlReadSlot, 1);

    if (src->batched) {
      take_batched (src, slot);
    } else {
      slot->position = global_position (src, src->next_epoch,
          src->next_position);
      slot->index = dataset_index_at (src, src->next_epoch, slot->position);
    }
    slot->label = src->dataset->labels[slot->index];
    slot->epoch = src->next_epoch;
    slot->path = gst_spdl_dataset_get_full_path (src->dataset, slot->index);
    slot->stats = &src->stats;
    slot->src = src;
    gst_spdl_stats_add_in (&src->stats, 1);
    src->next_position++;
    g_queue_push_tail (&src->slots, slot);
    if (src->dataset->lines) {
      GstSpdlSpanProblem problem = src->dataset->span_bad[slot->index];

      slot->row = g_strdup_printf ("%s:%" G_GUINT64_FORMAT,
          src->dataset->manifest_name, src->dataset->lines[slot->index]);
      /* a span that cannot be, or is too long, is not read */
      if (problem != GST_SPDL_SPAN_OK) {
        slot->error = g_error_new (GST_SPDL_READ_ERROR,
            GST_SPDL_READ_ERROR_BAD_SPAN, "its row %s",
            gst_spdl_span_problem_describe (problem));
        slot->submitted = slot->done = TRUE;
        continue;
      }
      if (span_too_long (src, src->dataset, slot->index)) {
        slot->error = g_error_new (GST_SPDL_READ_ERROR,
            GST_SPDL_READ_ERROR_TOO_LONG, "its row's span (%.3f s) is "
            "longer than max-span=%g s",
            src->dataset->span_durations[slot->index], src->active_max_span);
        slot->submitted = slot->done = TRUE;
        continue;
      }
    }
    if (submit_remote_read (src, slot))
      continue;
    if (src->readers && (src->prefetch_threshold == 0 ||
            src->read_us > src->prefetch_threshold)) {
      slot->submitted = TRUE;
      g_thread_pool_push (src->readers, slot, NULL);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */

static gboolean
skip_error (GError ** error, GstSpdlReadErrorCode reason, const gchar * format,
    ...) G_GNUC_PRINTF (3, 4);

static gboolean
skip_error (GError ** error, GstSpdlReadErrorCode reason, const gchar * format,
    ...)
{
  va_list args;

  va_start (args, format);
  *error = g_error_new_valist (GST_SPDL_READ_ERROR, reason, format, args);
  va_end (args);
  return FALSE;
}

/* Only regular files of at most @max_size bytes are samples. */
static gboolean
check_file (const struct stat *st, guint64 max_size, GError ** error)
{
  if (!S_ISREG (st->st_mode))
    return skip_error (error, GST_SPDL_READ_ERROR_NOT_A_FILE,
        "not a regular file (%s)", S_ISFIFO (st->st_mode) ? "a FIFO" :
        S_ISCHR (st->st_mode) || S_ISBLK (st->st_mode) ? "a device" :
        S_ISSOCK (st->st_mode) ? "a socket" : S_ISDIR (st->st_mode) ?
        "a folder" : "not a file");
  if (max_size && (guint64) st->st_size > max_size)
    return skip_error (error, GST_SPDL_READ_ERROR_TOO_LARGE,
        "%" G_GUINT64_FORMAT " bytes, more than max-file-size=%"
        G_GUINT64_FORMAT, (guint64) st->st_size, max_size);
  return TRUE;
}

static gboolean
read_all (int fd, guint8 * data, gsize size, gsize * got, GError ** error)
{
  *got = 0;
  while (*got < size) {
    ssize_t n = read (fd, data + *got, size - *got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return skip_error (error, GST_SPDL_READ_ERROR_UNREADABLE, "%s",
          g_strerror (errno));
    if (n == 0)
      break;
    *got += n;
  }
  return TRUE;
}

/* The file's type and size are checked before it is opened (opening a
 * FIFO blocks), and again on the open descriptor (it may have been
 * replaced meanwhile); O_NONBLOCK keeps a FIFO swapped in from blocking. */
static GstBuffer *
read_file (const gchar * path, guint64 max_size, GError ** error)
{
  struct stat st;
  GstBuffer *buffer;
  GstMapInfo map;
  gsize got = 0;
  gboolean ok;
  int fd;

  if (stat (path, &st) != 0) {
    skip_error (error, GST_SPDL_READ_ERROR_UNREADABLE, "%s",
        g_strerror (errno));
    return NULL;
  }
  if (!check_file (&st, max_size, error))
    return NULL;
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 || fstat (fd, &st) != 0) {
    skip_error (error, GST_SPDL_READ_ERROR_UNREADABLE, "%s",
        g_strerror (errno));
    if (fd >= 0)
      close (fd);
    return NULL;
  }
  if (!check_file (&st, max_size, error)) {
    close (fd);
    return NULL;
  }
  buffer = gst_spdl_buffer_try_new (st.st_size);
  if (buffer == NULL) {
    skip_error (error, GST_SPDL_READ_ERROR_TOO_LARGE, "out of memory for %"
        G_GUINT64_FORMAT " bytes", (guint64) st.st_size);
    close (fd);
    return NULL;
  }
  if (!gst_buffer_map (buffer, &map, GST_MAP_WRITE)) {
    skip_error (error, GST_SPDL_READ_ERROR_UNREADABLE, "could not map memory");
    gst_buffer_unref (buffer);
    close (fd);
    return NULL;
  }
  ok = read_all (fd, map.data, map.size, &got, error);
  gst_buffer_unmap (buffer, &map);
  close (fd);
  if (!ok) {
    gst_buffer_unref (buffer);
    return NULL;
  }
  /* the file shrank between fstat and read */
  if (got < (gsize) st.st_size)
    gst_buffer_set_size (buffer, got);
  return buffer;
}

/* The field's value: the contents of file @path (a sidecar, a transcript
 * file), or why it cannot be read, the file's own reason kept as the
 * field's. */
static void
read_field_file (GstSpdlSrc * src, const gchar * path,
    GstSpdlFieldData * field)
{
  GError *error = NULL;
  GstBuffer *buffer = read_file (path, src->active_max_field_size, &error);
  gchar *name;

  if (buffer) {
    field->data = gst_spdl_bytes_from_buffer (buffer);
    gst_buffer_unref (buffer);
    return;
  }
  name = g_filename_display_name (path);
  field->error = g_error_new (GST_SPDL_READ_ERROR,
      error->code == GST_SPDL_READ_ERROR_TOO_LARGE ?
      GST_SPDL_READ_ERROR_FIELD_TOO_LARGE :
      GST_SPDL_READ_ERROR_BAD_FIELD, "cannot be read from \"%s\": %s",
      name, error->message);
  g_free (name);
  g_error_free (error);
}

/* A folder's sample: the sidecar of each field beside its image ("x.txt"
 * for "x.jpg"), the first alternative that exists. */
static GstSpdlFieldData *
read_sidecars (GstSpdlSrc * src, const gchar * path)
{
  const GstSpdlRecord *record = src->record;
  GstSpdlFieldData *fields = gst_spdl_field_data_new (record->n_fields);
  const gchar *dot = strrchr (path, '.');
  const gchar *slash = strrchr (path, '/');
  gsize stem = dot && (!slash || dot > slash) ? (gsize) (dot - path) :
      strlen (path);
  guint f, a;

  /* an annotations file gives the first fields */
  for (f = src->coco ? N_COCO_FIELDS : 0; f < record->n_fields; f++) {
    for (a = 0; record->fields[f].alternatives[a]; a++) {
      gchar *sidecar = g_strdup_printf ("%.*s.%s", (int) stem, path,
          record->fields[f].alternatives[a]);
      struct stat st;
      gboolean have_stat = stat (sidecar, &st) == 0;

      if (!have_stat && (errno == ENOENT || errno == ENOTDIR)) {
        g_free (sidecar);
        continue;
      }
      /* other failures: read_file() says why */
      if (have_stat && S_ISREG (st.st_mode) &&
          (guint64) st.st_size > src->active_max_field_size) {
        gchar *name = g_filename_display_name (sidecar);
        fields[f].error = g_error_new (GST_SPDL_READ_ERROR,
            GST_SPDL_READ_ERROR_FIELD_TOO_LARGE, "holds %" G_GUINT64_FORMAT
            " bytes (\"%s\"), more than max-field-size=%" G_GUINT64_FORMAT,
            (guint64) st.st_size, name, src->active_max_field_size);
        g_free (name);
        g_free (sidecar);
        break;
      }
      read_field_file (src, sidecar, &fields[f]);
      g_free (sidecar);
      break;
    }
  }
  return fields;
}

/* A transcript file's text without its line breaks, as NeMo's manifest
 * reader takes it (open (...).read ().replace ('\n', ''), '\r\n' and
 * '\r' being '\n' in Python's text mode). */
static GBytes *
transcript_without_line_breaks (GBytes * bytes)
{
  gsize len, i, n = 0;
  const gchar *data = g_bytes_get_data (bytes, &len);
  gchar *text;

  if (memchr (data, '\n', len) == NULL && memchr (data, '\r', len) == NULL)
    return bytes;
  text = g_malloc (len);
  for (i = 0; i < len; i++)
    if (data[i] != '\n' && data[i] != '\r')
      text[n++] = data[i];
  g_bytes_unref (bytes);
  return g_bytes_new_take (text, n);
}

/* A manifest's columns as the fields of sample @index; a column naming a
 * file (NeMo's text_filepath) is the file's contents without their line
 * breaks, read here. */
static GstSpdlFieldData *
manifest_fields (GstSpdlSrc * src, guint index)
{
  GstSpdlDataset *ds = src->dataset;
  GstSpdlFieldData *fields = gst_spdl_field_data_new (ds->n_fields);
  guint f;

  for (f = 0; f < ds->n_fields; f++) {
    const guint8 *data;
    gsize len;
    gchar *rel, *path;

    if (!gst_spdl_dataset_get_field (ds, index, f, &data, &len))
      continue;
    if (!gst_spdl_dataset_field_is_file (ds, index, f)) {
      fields[f].data = g_bytes_new_static (data, len);
      continue;
    }
    rel = g_strndup ((const gchar *) data, len);
    path = g_path_is_absolute (rel) ? g_strdup (rel) :
        g_build_filename (ds->root, rel, NULL);
    read_field_file (src, path, &fields[f]);
    if (fields[f].data)
      fields[f].data = transcript_without_line_breaks (fields[f].data);
    g_free (path);
    g_free (rel);
  }
  return fields;
}

static void
read_slot (GstSpdlReadSlot * slot)
{
  guint64 start = gst_spdl_now_ns (), took;

  slot->buffer = read_file (slot->path, slot->src->active_max_file_size,
      &slot->error);
  if (slot->buffer && slot->src->read_sidecars)
    slot->fields = read_sidecars (slot->src, slot->path);
  else if (slot->buffer && slot->src->record && !slot->src->coco)
    slot->fields = manifest_fields (slot->src, slot->index);
  took = gst_spdl_now_ns () - start;
  gst_spdl_stats_record (slot->stats, took);
  /* a running mean over about 16 reads decides where the next ones run */
  g_mutex_lock (&slot->src->read_lock);
  slot->src->read_us += (took / 1000.0 - slot->src->read_us) / 16.0;
  g_mutex_unlock (&slot->src->read_lock);
}

static void
read_slot_func (gpointer data, gpointer user_data)
{
  GstSpdlReadSlot *slot = data;
  GstSpdlSrc *src = user_data;

  read_slot (slot);
  g_mutex_lock (&src->read_lock);
  slot->done = TRUE;
  g_cond_broadcast (&src->read_cond);
  g_mutex_unlock (&src->read_lock);
}

static void
read_slot_free (GstSpdlReadSlot * slot)
{
  if (slot->buffer)
    gst_buffer_unref (slot->buffer);
  g_clear_error (&slot->error);
  if (slot->fields)
    gst_spdl_field_data_free (slot->fields, slot->src->record->n_fields);
  g_free (slot->path);
  g_free (slot->row);
  g_free (slot);
}

/* ------------------------------------------------------------------------ */
/* State                                                                    */

/* ------------------------------------------------------------------------ */
/* Tar shards: gstspdlshards.c reads them, these are the hooks              */

/* called with the object lock: the strings are the element's */
static void
http_config_init (GstSpdlSrc * src, GstSpdlHttpConfig * config)
{
  config->max_requests = src->http_requests;
  config->connect_timeout_ms = src->http_connect_timeout;
  config->timeout_ms = src->http_timeout;
  config->canceller = src->canceller;
  config->retries = src->http_retries;
  config->low_speed_limit = src->http_low_speed_limit;
  config->low_speed_time = src->http_low_speed_time;
  config->max_bytes_in_flight = src->max_bytes_in_flight;
  config->s3.endpoint = src->s3_endpoint;
  config->s3.region = src->s3_region;
  config->s3.profile = src->s3_profile;
  config->s3.access_key = src->s3_access_key;
  config->s3.secret_key = src->s3_secret_key;
  config->s3.session_token = src->s3_session_token;
  config->s3.virtual_host = src->s3_virtual_host;
  config->ca_file = src->ca_file;
}

static void
http_slot_done (GstBuffer * buffer, GError * error, gpointer user_data)
{
  GstSpdlReadSlot *slot = user_data;
  GstSpdlSrc *src = slot->src;

  g_mutex_lock (&src->read_lock);
  slot->buffer = buffer;
  slot->error = error;
  slot->done = TRUE;
  g_cond_broadcast (&src->read_cond);
  g_mutex_unlock (&src->read_lock);
}

/* Called with read_lock: a URL sample goes to the I/O thread. */
static gboolean
submit_remote_read (GstSpdlSrc * src, GstSpdlReadSlot * slot)
{
  if (src->http == NULL || strstr (slot->path, "://") == NULL)
    return FALSE;
  slot->submitted = TRUE;
  gst_spdl_http_get (src->http, slot->path, src->active_max_file_size,
      http_slot_done, slot);
  return TRUE;
}

static void
free_config_strings (GstSpdlSrc * src)
{
  guint i;

  /* any of them may be NULL: not a NULL-terminated vector */
  for (i = 0; i < G_N_ELEMENTS (src->config_strings); i++)
    g_clear_pointer (&src->config_strings[i], g_free);
}

/* Called with the object lock: @config points to copies of the element's
 * strings (kept until the next start or stop), so that it can be used
 * without the lock (file and network reads). */
static void
copy_http_config_strings (GstSpdlSrc * src, GstSpdlHttpConfig * config)
{
  free_config_strings (src);
  config->s3.endpoint = src->config_strings[0] =
      g_strdup (config->s3.endpoint);
  config->s3.region = src->config_strings[1] = g_strdup (config->s3.region);
  config->s3.access_key = src->config_strings[2] =
      g_strdup (config->s3.access_key);
  config->s3.secret_key = src->config_strings[3] =
      g_strdup (config->s3.secret_key);
  config->s3.session_token = src->config_strings[4] =
      g_strdup (config->s3.session_token);
  config->s3.profile = src->config_strings[6] =
      g_strdup (config->s3.profile);
  config->ca_file = src->config_strings[5] = g_strdup (config->ca_file);
}

/* The I/O thread of remote reads: FALSE with @error when the settings
 * (credentials, CA file) cannot be used. */
static gboolean
start_http (GstSpdlSrc * src, GError ** error)
{
  GstSpdlHttpConfig config;
  GstSpdlHttp *http;

  if (src->http)
    return TRUE;
  GST_OBJECT_LOCK (src);
  http_config_init (src, &config);
  copy_http_config_strings (src, &config);
  GST_OBJECT_UNLOCK (src);
  /* reads the AWS config files: not under the object lock */
  http = gst_spdl_http_new (&config, error);
  GST_OBJECT_LOCK (src);
  src->http = http;
  GST_OBJECT_UNLOCK (src);
  return http != NULL;
}

/* A remote dataset (an s3:// prefix, or a manifest with URLs) gets an I/O
 * thread; s3:// prefixes are listed (ImageFolder under the prefix). */
static GstSpdlDataset *
load_remote_dataset (GstSpdlSrc * src, const gchar * location,
    const gchar * extensions, GstSpdlDataset * dataset, GError ** error)
{
  GPtrArray *keys;
  gchar *root, *prefix_url;
  gsize prefix_len;
  guint i;

  if (dataset) {
    for (i = 0; i < dataset->n_samples; i++)
      if (strstr (gst_spdl_dataset_get_path (dataset, i), "://"))
        break;
    if (i == dataset->n_samples)
      return dataset;           /* all local */
  }
  if (!start_http (src, error) || dataset)
    return dataset;
  /* s3://bucket/prefix/: the keys under the prefix, made relative */
  root = g_strdup (location);
  while (g_str_has_suffix (root, "/"))
    root[strlen (root) - 1] = '\0';
  prefix_url = g_strconcat (root, "/", NULL);
  keys = gst_spdl_http_s3_list (src->http, prefix_url, error);
  prefix_len = strchr (prefix_url + strlen ("s3://"), '/') ?
      strlen (strchr (prefix_url + strlen ("s3://"), '/') + 1) : 0;
  g_free (prefix_url);
  if (keys == NULL) {
    g_free (root);
    return NULL;
  }
  for (i = 0; i < keys->len; i++) {
    gchar *key = g_ptr_array_index (keys, i);
    if (strlen (key) >= prefix_len)
      memmove (key, key + prefix_len, strlen (key) - prefix_len + 1);
  }
  dataset = gst_spdl_dataset_new_from_keys (root, keys, extensions, error);
  g_ptr_array_unref (keys);
  g_free (root);
  return dataset;
}

/* In a shell, shard-cache="" loses its quotes: gst-launch-1.0 then reads
 * the next argument as the folder ("shard-cache= http-timeout=2000"),
 * which drops that property and writes a folder named after it. */
static gboolean
shard_cache_is_shell_mistake (GstSpdlSrc * src, const gchar * cache_dir)
{
  const gchar *eq = cache_dir ? strchr (cache_dir, '=') : NULL;
  gchar *name;
  gboolean mistake;

  if (eq == NULL || strchr (cache_dir, '/') != NULL)
    return FALSE;
  name = g_strndup (cache_dir, eq - cache_dir);
  mistake = g_object_class_find_property (G_OBJECT_GET_CLASS (src),
      name) != NULL;
  if (mistake)
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS,
        ("shard-cache is \"%s\", which reads like the property %s: in a "
            "shell, write shard-cache='\"\"' to keep no cache", cache_dir,
            name), ("a shell removed the quotes of shard-cache=\"\", so "
            "gst-launch-1.0 took the next argument as the folder"));
  g_free (name);
  return mistake;
}

/* A learning thread: how far learning a long index is, for the user
 * waiting on the start (INFO messages, which spdlgst's loaders log). */
static void
learn_progress (guint done, guint n_shards, guint64 samples, gdouble elapsed_s,
    gpointer user_data)
{
  GstSpdlSrc *src = user_data;

  SPDL_SRC_INFO (src, RESOURCE, READ, ("Learning the shards' member "
          "index (no shards.members nor shards.idx): %u of %u shards read, %"
          G_GUINT64_FORMAT " samples, in %.0f s", done, n_shards, samples,
          elapsed_s), (NULL));
}

static gboolean
start_shards (GstSpdlSrc * src, const gchar * location, guint64 start_offset)
{
  GstSpdlShardsConfig config = { 0, };
  GstSpdlShards *shards;
  GError *error = NULL;
  gchar *fingerprint;

  GST_OBJECT_LOCK (src);
  config.location = location;
  config.seed = src->seed;
  config.shuffle = src->shuffle;
  config.shuffle_buffer = src->shuffle_buffer;
  config.shuffle_buffer_bytes = src->shuffle_buffer_bytes;
  config.rank = src->shard_index;
  config.world_size = src->num_shards;
  config.drop_uneven = src->drop_uneven;
  config.start_epoch = src->start_epoch;
  config.num_epochs = src->num_epochs;
  config.start_offset = start_offset;
  config.elastic = src->elastic;
  config.remote_reads = src->remote_reads;
  config.learn_by_headers = src->shard_learn == GST_SPDL_SHARD_LEARN_HEADERS;
  config.max_member_size = src->max_file_size;
  config.queue_size = MAX (src->prefetch, 4) * 4;
  http_config_init (src, &config.http);
  /* opening reads the index or every tar header, maybe over the network:
   * not under the object lock, with copies of the element's strings */
  copy_http_config_strings (src, &config.http);
  config.cache_dir = src->config_strings[7] = g_strdup (src->shard_cache);
  config.learn_progress = learn_progress;
  config.learn_progress_data = src;
  config.image_key = src->config_strings[8] = g_strdup (src->image_key);
  config.label_key = src->config_strings[9] = g_strdup (src->label_key);
  config.label_field = src->config_strings[10] =
      g_strdup (src->label_field);
  config.record = src->record;
  config.max_field_size = src->active_max_field_size;
  GST_OBJECT_UNLOCK (src);
  if (shard_cache_is_shell_mistake (src, config.cache_dir))
    return FALSE;
  shards = gst_spdl_shards_open (&config, &error);

  if (shards && gst_spdl_shards_get_per_rank (shards) == 0) {
    gchar *example = NULL;
    gboolean by_keys;
    gchar *dropped = gst_spdl_shards_describe_dropped (shards, &example,
        &by_keys);

    /* why, when groups were found that are no samples */
    g_set_error (&error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "Shards \"%s\" hold %" G_GUINT64_FORMAT " samples, too few for %u "
        "ranks%s%s%s%s%s", location, gst_spdl_shards_get_total (shards),
        src->num_shards, !dropped ? "" : by_keys ?
        "; groups that are no sample: " : "; left out: ",
        dropped ? dropped : "", dropped ? " (" : "", dropped ? example : "",
        !dropped ? "" : by_keys ? "; see image-key, label-key, "
        "label-field)" : ")");
    g_free (dropped);
    g_free (example);
    g_clear_pointer (&shards, gst_spdl_shards_free);
  }
  if (shards && !gst_spdl_shards_start (shards, &error))
    g_clear_pointer (&shards, gst_spdl_shards_free);
  if (shards) {
    /* a learned index's cache that could not be used: worth knowing */
    gchar **warnings = gst_spdl_shards_take_warnings (shards), **w;
    for (w = warnings; w && *w; w++)
      SPDL_SRC_WARNING (src, RESOURCE, FAILED, ("%s", *w),
          ("shard-cache"));
    g_strfreev (warnings);
  }
  if (shards == NULL) {
    post_redacted (src, GST_MESSAGE_ERROR,
        GST_RESOURCE_ERROR, error->domain == GST_RESOURCE_ERROR ?
        error->code : GST_RESOURCE_ERROR_FAILED, g_strdup (error->message),
        g_strdup_printf ("location=%s", location), __FILE__, GST_FUNCTION,
        __LINE__);
    g_error_free (error);
    return FALSE;
  }
  /* ranks that meant to be elastic and are not: resuming at another
   * world size will fail later, say it now */
  if (config.elastic && !gst_spdl_shards_is_elastic (shards) &&
      src->num_shards > 1)
    SPDL_SRC_WARNING (src, RESOURCE, NOT_FOUND,
        ("Tar shards \"%s\" have shards.idx and no readable shards.members: "
            "each rank streams a contiguous part, and a checkpoint resumes "
            "only on %u ranks (tools/make-shards --index-only DIR writes the "
            "index)",
            location, src->num_shards), ("elastic=true without an index"));
  GST_INFO_OBJECT (src, "%u shards, %" G_GUINT64_FORMAT " samples, %"
      G_GUINT64_FORMAT " per epoch for rank %u/%u, %s order",
      gst_spdl_shards_get_n_shards (shards),
      gst_spdl_shards_get_total (shards),
      gst_spdl_shards_get_per_rank (shards), src->shard_index,
      src->num_shards, gst_spdl_shards_is_elastic (shards) ? "elastic" :
      "contiguous");

  fingerprint = gst_spdl_shards_get_fingerprint (shards);
  GST_OBJECT_LOCK (src);
  src->shards = shards;
  g_free (src->dataset_fingerprint);
  src->dataset_fingerprint = fingerprint;
  src->shard_order = gst_spdl_shards_is_elastic (shards) ? 1 : 0;
  src->shard_index_source = gst_spdl_shards_get_index_source (shards);
  src->samples_per_epoch = gst_spdl_shards_get_per_rank (shards);
  GST_OBJECT_UNLOCK (src);
  src->current_epoch = src->start_epoch;
  src->pushed_in_epoch = 0;
  src->started_epoch = FALSE;
  return TRUE;
}

/* A COCO instances file (#GstSpdlSrc:annotations): its images are the
 * samples, under @location; src->coco keeps their annotations. */
static GstSpdlDataset *
load_coco (GstSpdlSrc * src, const gchar * location,
    const gchar * annotations, GError ** error)
{
  GstSpdlDataset *dataset;
  GstSpdlCoco *coco;
  GError *read_error = NULL;
  GBytes *text;
  gchar *name;
  guint i;

  if (gst_spdl_http_is_url (annotations) || gst_spdl_http_is_url (location))
    if (!start_http (src, error))
      return NULL;
  if (gst_spdl_http_is_url (annotations)) {
    name = gst_spdl_url_redact (annotations);
    /* held whole: the annotations stay in it (at most 4 GiB) */
    text = gst_spdl_http_get_sync (src->http, annotations, 0, NULL,
        &read_error);
  } else {
    GMappedFile *file;

    name = g_filename_display_name (annotations);
    /* mapped: the annotations stay in the page cache, never copied */
    file = g_mapped_file_new (annotations, FALSE, &read_error);
    text = file ? g_mapped_file_get_bytes (file) : NULL;
    if (file)
      g_mapped_file_unref (file);
  }
  if (text == NULL) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
        "Could not read COCO annotations \"%s\": %s", name,
        read_error->message);
    g_error_free (read_error);
    g_free (name);
    return NULL;
  }
  coco = gst_spdl_coco_parse (text, name,
      src->empty_images == GST_SPDL_EMPTY_IMAGES_DROP, error);
  g_bytes_unref (text);
  g_free (name);
  if (coco == NULL)
    return NULL;
  dataset = gst_spdl_coco_to_dataset (coco, location);
  /* posted with the listing's warnings */
  for (i = 0; i < coco->warnings->len; i++)
    g_ptr_array_add (dataset->warnings,
        g_strdup (g_ptr_array_index (coco->warnings, i)));
  GST_OBJECT_LOCK (src);
  src->coco = coco;
  memcpy (src->annotation_counts, coco->counts, sizeof (coco->counts));
  src->annotated_images = coco->n_images;
  src->annotations_delivered = coco->n_annotations;
  GST_OBJECT_UNLOCK (src);
  return dataset;
}

static gboolean start_listing (GstSpdlSrc * src);


/* The batched order: each sample's duration, the first epoch's batches,
 * where a resumed one starts and this rank's share. */
static gboolean
setup_batches (GstSpdlSrc * src, GstSpdlDataset * dataset, guint64 offset,
    guint64 * samples)
{
  guint64 batches;
  guint i;

  g_clear_pointer (&src->durations, g_free);
  g_clear_pointer (&src->sample_buckets, g_free);
  src->durations = g_new (gdouble, MAX (dataset->n_samples, 1));
  for (i = 0; i < dataset->n_samples; i++) {
    gdouble d = gst_spdl_dataset_get_duration (dataset, i);

    /* a bad span, or one over max-span, is skipped (or stops the run)
     * when its turn comes, by its policy, as without buckets: it rides in
     * a batch of others (gst_spdl_batch_plan_new()) */
    if ((dataset->span_bad && dataset->span_bad[i] != GST_SPDL_SPAN_OK) ||
        span_too_long (src, dataset, i)) {
      src->durations[i] = -1;
      continue;
    }
    if (!(d >= 0) || !isfinite (d)) {
      gchar *path = gst_spdl_dataset_get_full_path (dataset, i);
      gchar *shown = g_filename_display_name (path);

      SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("Sample \"%s\" has no known "
              "duration: buckets and batch-duration need each sample's "
              "duration from the manifest (a duration or end column)",
              shown), ("sample %u of the listing; buckets=%u "
              "batch-duration=%g", i, src->bucket_params.buckets,
              src->bucket_params.batch_duration));
      g_free (shown);
      g_free (path);
      return FALSE;
    }
    src->durations[i] = d;
  }
  g_free (src->sample_buckets);
  src->sample_buckets = gst_spdl_buckets_assign (src->durations,
      dataset->n_samples, src->bucket_params.buckets);
  gst_spdl_batch_plan_free (src->batch_plan);
  src->bucket_params.epoch = src->start_epoch;
  src->batch_plan = gst_spdl_batch_plan_new (src->durations,
      src->sample_buckets, dataset->n_samples, &src->bucket_params);
  src->batch_plan_epoch = src->start_epoch;
  if (!gst_spdl_batch_plan_find (src->batch_plan, offset, &src->first_batch)) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("start-offset %"
            G_GUINT64_FORMAT " is inside a batch of epoch %u: a bucketed "
            "order resumes at a batch boundary (spdlappsink's resume-state "
            "gives one)", offset, src->start_epoch), (NULL));
    return FALSE;
  }
  rank_batches (src, src->batch_plan, src->first_batch,
      &src->plan_rank_batches, &src->plan_rank_samples);
  /* num-samples and num-batches: a whole epoch's share */
  rank_batches (src, src->batch_plan, 0, &batches, samples);
  if (batches == 0) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("Epoch %u has %"
            G_GUINT64_FORMAT " batches, too few for %u shards with "
            "drop-uneven", src->start_epoch, src->batch_plan->n_batches,
            src->num_shards), (NULL));
    return FALSE;
  }
  GST_INFO_OBJECT (src, "%" G_GUINT64_FORMAT " batches in epoch %u (at most "
      "%u samples each), %" G_GUINT64_FORMAT " for shard %u/%u",
      src->batch_plan->n_batches, src->start_epoch,
      src->batch_plan->max_batch, batches, src->shard_index,
      src->num_shards);
  GST_OBJECT_LOCK (src);
  src->batches_per_epoch = batches;
  GST_OBJECT_UNLOCK (src);
  return TRUE;
}

static gboolean
gst_spdl_src_start (GstBaseSrc * bsrc)
{
  GstSpdlSrc *src = GST_SPDL_SRC (bsrc);
  gboolean ok;

  if (gst_spdl_http_canceller_is_cancelled (src->canceller)) {
    SPDL_SRC_ERROR (src, RESOURCE, FAILED, ("cancelled"),
        ("the cancel signal came before the start"));
    ok = FALSE;
  } else {
    ok = start_listing (src);
  }
  /* a cancel that failed this start is spent (stop() is not called) */
  if (!ok)
    gst_spdl_http_canceller_reset (src->canceller);
  return ok;
}

static gboolean
start_listing (GstSpdlSrc * src)
{
  GstSpdlDataset *dataset;
  gchar *location, *extensions, *fingerprint;
  guint64 per_shard, start_index, start_offset;
  GError *error = NULL;
  gchar *display, *path_column;
  GstSpdlHttp *http;
  GstSpdlDatasetOptions options = { NULL, };
  gchar *annotations;

  GST_OBJECT_LOCK (src);
  location = g_strdup (src->location);
  annotations = g_strdup (src->annotations);
  extensions = g_strdup (src->extensions);
  start_index = src->start_index;
  start_offset = src->start_offset;
  src->active_max_file_size = src->max_file_size;
  src->active_max_field_size = src->max_field_size;
  path_column = g_strdup (src->path_column);
  src->batched = src->buckets > 0 || src->batch_duration > 0;
  src->bucket_params.seed = src->seed;
  src->bucket_params.shuffle = src->shuffle;
  src->bucket_params.buckets = src->buckets;
  src->bucket_params.window = src->bucket_window;
  src->bucket_params.batch_size = src->batch_size;
  src->bucket_params.batch_duration = src->batch_duration;
  src->active_max_span = src->max_span;
  src->batches_per_epoch = 0;
  g_clear_pointer (&src->record, gst_spdl_record_free);
  if (annotations) {
    /* the image's objects and id, then the user's fields */
    gchar *fields = src->fields && *src->fields ?
        g_strconcat (COCO_FIELDS ",", src->fields, NULL) :
        g_strdup (COCO_FIELDS);

    src->record = gst_spdl_record_parse (fields, src->missing_field, &error);
    g_free (fields);
  } else if (src->fields && *src->fields) {
    src->record = gst_spdl_record_parse (src->fields, src->missing_field,
        &error);
  }
  memset (src->annotation_counts, 0, sizeof (src->annotation_counts));
  src->annotated_images = src->annotations_delivered = 0;
  src->record_policy = src->missing_field;
  src->errors = 0;
  g_clear_pointer (&src->dataset_fingerprint, g_free);
  memset (src->errors_by_reason, 0, sizeof (src->errors_by_reason));
  gst_spdl_warn_limiter_reset (&src->warn_limiter, src->warning_limit);
  memset (src->epoch_errors, 0, sizeof (src->epoch_errors));
  GST_OBJECT_UNLOCK (src);
  gst_spdl_stats_reset (&src->stats);
  GST_OBJECT_LOCK (src);
  memset (&src->http_stats, 0, sizeof (src->http_stats));
  src->have_http_stats = FALSE;
  src->shard_order = -1;        /* set again if this run opens shards */
  src->read_sidecars = FALSE;
  GST_OBJECT_UNLOCK (src);
  if (error) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("fields: %s", error->message),
        ("fields=%s", src->fields));
    g_clear_error (&error);
    goto failed;
  }

  if (src->shard_index >= src->num_shards) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS,
        ("shard-index %u is out of range: it must be below num-shards (%u)",
            src->shard_index, src->num_shards), (NULL));
    goto failed;
  }

  if (src->batched && src->bucket_params.batch_duration <= 0 &&
      src->bucket_params.batch_size == 0) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("buckets=%u needs the size "
            "of a batch: batch-size (samples) or batch-duration (seconds)",
            src->bucket_params.buckets), (NULL));
    goto failed;
  }
  if (src->batched && gst_spdl_shards_is_location (location)) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("buckets and batch-duration "
            "need each sample's duration: a manifest with spans (a duration "
            "or end column), not tar shards"), ("location=%s", location));
    goto failed;
  }
  if (annotations && (location == NULL || *location == '\0')) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("annotations need a location: "
            "the folder of the images (or their URL prefix)"),
        ("annotations=%s", annotations));
    goto failed;
  }
  if (annotations && src->record->n_fields > N_COCO_FIELDS &&
      gst_spdl_http_is_url (location)) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("fields beside annotations "
            "are sidecars of the images, read from local folders only"),
        ("location=%s fields=%s", location, src->fields));
    goto failed;
  }

  if (annotations) {
    dataset = load_coco (src, location, annotations, &error);
  } else if (gst_spdl_shards_is_location (location)) {
    gboolean ok = start_shards (src, location,
        start_offset + start_index * src->num_shards);
    g_free (annotations);
    g_free (location);
    g_free (extensions);
    g_free (path_column);
    return ok;
  } else if (location && g_str_has_prefix (location, "s3://")) {
    if (src->record) {
      SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("fields are not read from "
              "S3 folders (sidecars): use tar shards or a manifest with a "
              "header"), ("location=%s", location));
      goto failed;
    }
    dataset = load_remote_dataset (src, location, extensions, NULL, &error);
  } else {
    options.extensions = extensions;
    options.record = src->record;
    options.path_column = path_column;
    if ((dataset = gst_spdl_dataset_load_with_options (location, &options,
                &error)))
      dataset = load_remote_dataset (src, location, extensions, dataset,
          &error);
  }
  if (dataset == NULL) {
    display = location ? g_filename_display_name (location) : NULL;
    post_redacted (src, GST_MESSAGE_ERROR,
        GST_RESOURCE_ERROR, error->code, g_strdup (error->message),
        g_strdup_printf ("location=%s", display), __FILE__, GST_FUNCTION,
        __LINE__);
    g_free (display);
    g_error_free (error);
    goto failed;
  }

  if (src->record && src->coco == NULL && dataset->class_names == NULL &&
      dataset->n_fields != src->record->n_fields) {
    display = g_filename_display_name (location);
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS, ("Manifest \"%s\" has no "
            "header naming columns: fields come from a .csv, .tsv or .jsonl "
            "manifest", display), ("fields=%s", src->fields));
    g_free (display);
    gst_spdl_dataset_free (dataset);
    goto failed;
  }
  /* a folder: the fields are sidecars beside each image */
  src->read_sidecars = src->record && (dataset->class_names != NULL ||
      (src->coco && src->record->n_fields > N_COCO_FIELDS));
  if (src->drop_uneven)
    per_shard = dataset->n_samples / src->num_shards;
  else
    per_shard = (dataset->n_samples + src->num_shards - 1) / src->num_shards;
  display = g_filename_display_name (location);
  if (per_shard == 0) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS,
        ("Dataset \"%s\" has %u samples, too few for %u shards with "
            "drop-uneven", display, dataset->n_samples, src->num_shards),
        (NULL));
    g_free (display);
    gst_spdl_dataset_free (dataset);
    goto failed;
  }
  {
    guint i;
    for (i = 0; i < dataset->warnings->len; i++)
      SPDL_SRC_WARNING (src, RESOURCE, READ, ("%s", (gchar *)
              g_ptr_array_index (dataset->warnings, i)), ("while listing %s",
              display));
  }
  g_free (display);
  display = gst_spdl_url_redact (location);
  GST_INFO_OBJECT (src, "listed %u samples in %u classes from %s, %"
      G_GUINT64_FORMAT " per epoch for shard %u/%u", dataset->n_samples,
      dataset->n_classes, display, per_shard, src->shard_index,
      src->num_shards);
  g_free (display);

  start_offset += start_index * src->num_shards;
  if (start_offset > dataset->n_samples) {
    SPDL_SRC_ERROR (src, RESOURCE, SETTINGS,
        ("start-offset %" G_GUINT64_FORMAT " (with start-index x num-shards) "
            "is past the end of an epoch of %u samples", start_offset,
            dataset->n_samples), (NULL));
    gst_spdl_dataset_free (dataset);
    goto failed;
  }
  if (src->batched && !setup_batches (src, dataset, start_offset,
          &per_shard)) {
    gst_spdl_dataset_free (dataset);
    goto failed;
  }

  fingerprint = gst_spdl_dataset_fingerprint (dataset);
  GST_OBJECT_LOCK (src);
  src->dataset = dataset;
  src->samples_per_epoch = per_shard;
  g_free (src->dataset_fingerprint);
  src->dataset_fingerprint = fingerprint;
  GST_OBJECT_UNLOCK (src);
  src->first_offset = start_offset;

  src->next_epoch = src->start_epoch;
  src->next_position = 0;
  src->next_batch = 0;
  src->next_in_batch = 0;
  src->current_epoch = src->start_epoch;
  src->pushed_in_epoch = 0;
  src->started_epoch = FALSE;
  src->flushing = FALSE;
  src->read_us = 0;
  if (src->prefetch > 0)
    src->readers = g_thread_pool_new (read_slot_func, src, src->prefetch,
        FALSE, NULL);
  g_free (location);
  g_free (extensions);
  g_free (path_column);
  g_free (annotations);
  return TRUE;

failed:
  g_free (location);
  g_free (extensions);
  g_free (path_column);
  g_free (annotations);
  /* stop() is not called after a failed start: the remote listing's client
   * (its I/O thread, registered with the canceller) ends here */
  GST_OBJECT_LOCK (src);
  g_clear_pointer (&src->coco, gst_spdl_coco_free);
  update_http_stats (src);
  http = src->http;
  src->http = NULL;
  GST_OBJECT_UNLOCK (src);
  gst_spdl_http_free (http);
  return FALSE;
}

static gboolean
gst_spdl_src_stop (GstBaseSrc * bsrc)
{
  GstSpdlSrc *src = GST_SPDL_SRC (bsrc);
  GstSpdlHttp *http;
  GstSpdlShards *shards;

  /* the remote reads' statistics outlive them */
  GST_OBJECT_LOCK (src);
  update_http_stats (src);
  http = src->http;
  shards = src->shards;
  src->http = NULL;
  src->shards = NULL;
  GST_OBJECT_UNLOCK (src);
  /* remote reads end first: they write into the slots */
  gst_spdl_http_free (http);
  if (src->readers) {
    /* drop queued reads, wait for the running ones */
    g_thread_pool_free (src->readers, TRUE, TRUE);
    src->readers = NULL;
  }
  g_queue_clear_full (&src->slots, (GDestroyNotify) read_slot_free);
  g_clear_pointer (&src->permutation, g_free);
  g_clear_pointer (&src->batch_plan, gst_spdl_batch_plan_free);
  g_clear_pointer (&src->durations, g_free);
  g_clear_pointer (&src->sample_buckets, g_free);
  if (shards)
    gst_spdl_shards_free (shards);
  free_config_strings (src);
  GST_OBJECT_LOCK (src);
  g_clear_pointer (&src->dataset, gst_spdl_dataset_free);
  g_clear_pointer (&src->coco, gst_spdl_coco_free);
  g_clear_pointer (&src->record, gst_spdl_record_free);
  src->samples_per_epoch = 0;
  src->batches_per_epoch = 0;
  GST_OBJECT_UNLOCK (src);
  gst_spdl_http_canceller_reset (src->canceller);
  return TRUE;
}

/* With fields, the caps describe them (docs/record.md). */
static gboolean
gst_spdl_src_negotiate (GstBaseSrc * bsrc)
{
  GstSpdlSrc *src = GST_SPDL_SRC (bsrc);
  GstCaps *caps;
  gchar *text;
  gboolean ok;

  if (src->record == NULL && (src->dataset == NULL ||
          src->dataset->span_starts == NULL))
    return GST_BASE_SRC_CLASS (parent_class)->negotiate (bsrc);
  caps = gst_pad_get_pad_template_caps (GST_BASE_SRC_PAD (bsrc));
  caps = gst_caps_make_writable (caps);
  if (src->record) {
    text = gst_spdl_record_to_string (src->record);
    gst_caps_set_simple (caps, "fields", G_TYPE_STRING, text, NULL);
    g_free (text);
  }
  /* what a decoder does with a span that does not fit its file */
  if (src->dataset && src->dataset->span_starts)
    gst_caps_set_simple (caps, "span-policy", G_TYPE_STRING,
        src->record_policy == GST_SPDL_MISSING_ERROR ? "error" : "skip",
        NULL);
  ok = gst_base_src_set_caps (bsrc, caps);
  gst_caps_unref (caps);
  return ok;
}

static gboolean
gst_spdl_src_unlock (GstBaseSrc * bsrc)
{
  GstSpdlSrc *src = GST_SPDL_SRC (bsrc);

  g_mutex_lock (&src->read_lock);
  src->flushing = TRUE;
  g_cond_broadcast (&src->read_cond);
  g_mutex_unlock (&src->read_lock);
  if (src->shards)
    gst_spdl_shards_set_flushing (src->shards, TRUE);
  return TRUE;
}

static gboolean
gst_spdl_src_unlock_stop (GstBaseSrc * bsrc)
{
  GstSpdlSrc *src = GST_SPDL_SRC (bsrc);

  g_mutex_lock (&src->read_lock);
  src->flushing = FALSE;
  g_mutex_unlock (&src->read_lock);
  if (src->shards)
    gst_spdl_shards_set_flushing (src->shards, FALSE);
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Streaming                                                                */

/* After an epoch that skipped samples: its counts by reason, posted and in
 * @counts (GST_SPDL_READ_N_ERRORS of them). Returns how many were
 * skipped. */
static guint64
post_epoch_skipped (GstSpdlSrc * src, guint epoch, guint64 * counts)
{
  guint64 total = 0, suppressed;
  guint i;

  GST_OBJECT_LOCK (src);
  for (i = 0; i < GST_SPDL_READ_N_ERRORS; i++)
    total += counts[i] = src->epoch_errors[i];
  memset (src->epoch_errors, 0, sizeof (src->epoch_errors));
  suppressed = src->warn_limiter.skipped > src->warn_limiter.limit ?
      src->warn_limiter.skipped - src->warn_limiter.limit : 0;
  GST_OBJECT_UNLOCK (src);
  if (total == 0)
    return 0;
  gst_element_post_message (GST_ELEMENT (src),
      gst_spdl_skipped_message_new (GST_ELEMENT (src), epoch,
          GST_SPDL_READ_ERROR, counts, GST_SPDL_READ_N_ERRORS, suppressed));
  return total;
}

/* At EOS, or at the error of an epoch with nothing readable: how many
 * samples were skipped over the run, by reason. */
static void
post_skipped (GstSpdlSrc * src)
{
  guint64 counts[GST_SPDL_READ_N_ERRORS];

  GST_OBJECT_LOCK (src);
  memcpy (counts, src->errors_by_reason, sizeof (counts));
  GST_OBJECT_UNLOCK (src);
  gst_element_post_message (GST_ELEMENT (src),
      gst_spdl_skipped_message_new (GST_ELEMENT (src), -1,
          GST_SPDL_READ_ERROR, counts, GST_SPDL_READ_N_ERRORS, 0));
}

/* Ends the current epoch downstream. FALSE (an error posted) when every
 * sample of a whole epoch (this rank's share of it) was skipped: a
 * dataset, or a stale shard index, of which nothing can be read is not an
 * empty epoch to train on, whatever max-errors allows. The rest of an
 * epoch resumed mid-way may be a few samples that all happen to be bad:
 * that is left to max-errors. */
static gboolean
announce_epoch_end (GstSpdlSrc * src)
{
  GstEvent *event;
  guint64 skipped, counts[GST_SPDL_READ_N_ERRORS];

  if (!src->started_epoch)
    return TRUE;
  GST_DEBUG_OBJECT (src, "end of epoch %u (%" G_GUINT64_FORMAT " samples)",
      src->current_epoch, src->pushed_in_epoch);
  skipped = post_epoch_skipped (src, src->current_epoch, counts);
  src->started_epoch = FALSE;
  if (src->pushed_in_epoch == 0 && skipped > 0 && !src->epoch_resumed) {
    gchar *rank = src->num_shards > 1 ? g_strdup_printf (" on rank %u of %u",
        src->shard_index, src->num_shards) : g_strdup ("");
    gchar *reasons = gst_spdl_describe_reasons (GST_SPDL_READ_ERROR, counts,
        GST_SPDL_READ_N_ERRORS);

    post_skipped (src);
    SPDL_SRC_ERROR (src, RESOURCE, READ,
        ("None of the %" G_GUINT64_FORMAT " samples of epoch %u could be "
            "read%s (%s)", skipped, src->current_epoch, rank, reasons),
        ("every sample was skipped: the warnings name the first files and "
            "why"));
    g_free (reasons);
    g_free (rank);
    return FALSE;
  }
  event = gst_spdl_epoch_end_event_new (src->current_epoch,
      src->pushed_in_epoch);
  gst_element_post_message (GST_ELEMENT (src),
      gst_message_new_element (GST_OBJECT (src),
          gst_structure_copy (gst_event_get_structure (event))));
  gst_pad_push_event (GST_BASE_SRC_PAD (src), event);
  src->pushed_in_epoch = 0;
  return TRUE;
}

/* Before @slot, the first sample of its epoch. The batched order adds
 * "batches" (this rank's) and "max-batch" (the most samples one batch of
 * the epoch holds). */
static void
announce_epoch_start (GstSpdlSrc * src, GstSpdlReadSlot * slot)
{
  guint epoch = slot->epoch;
  GstEvent *event;

  src->epoch_resumed = epoch_offset (src, epoch) > 0;
  event = gst_spdl_epoch_start_event_new (epoch, slot->batched ?
      slot->epoch_samples : epoch_samples (src, epoch),
      epoch_offset (src, epoch), src->num_shards, src->shard_index);
  if (slot->batched)
    gst_structure_set (gst_event_writable_structure (event),
        "batches", G_TYPE_UINT64, slot->epoch_batches,
        "max-batch", G_TYPE_UINT, slot->max_batch, NULL);
  gst_pad_push_event (GST_BASE_SRC_PAD (src), event);
}

/* Warns about a sample that cannot be read (the first warning-limit of
 * each epoch on the bus); FALSE once past max-errors. */
static gboolean
skip_sample (GstSpdlSrc * src, GstSpdlReadSlot * slot)
{
  guint reason = slot->error->domain == GST_SPDL_READ_ERROR &&
      slot->error->code < GST_SPDL_READ_N_ERRORS ?
      (guint) slot->error->code : GST_SPDL_READ_ERROR_UNREADABLE;
  gchar *display = g_filename_display_name (slot->path);
  gchar *name = gst_spdl_url_redact (display);
  gchar *why = gst_spdl_url_redact (slot->error->message);
  guint64 errors;
  gint max_errors;
  gboolean post, go_on = TRUE;

  if (slot->row) {
    gchar *with_row = g_strdup_printf ("%s (manifest row %s)", why,
        slot->row);
    g_free (why);
    why = with_row;
  }
  /* a span manifest's entries go by the missing-field policy: error stops
   * at the first bad one */
  if (slot->row && src->record_policy == GST_SPDL_MISSING_ERROR &&
      reason != GST_SPDL_READ_ERROR_MISSING_FIELD &&
      reason != GST_SPDL_READ_ERROR_BAD_FIELD &&
      reason != GST_SPDL_READ_ERROR_FIELD_TOO_LARGE) {
    SPDL_SRC_ERROR (src, RESOURCE, READ, ("Sample \"%s\": %s", name, why),
        ("reason: %s; missing-field is error",
            gst_spdl_read_error_reason (reason)));
    g_free (display);
    g_free (why);
    g_free (name);
    return FALSE;
  }

  GST_OBJECT_LOCK (src);
  errors = ++src->errors;
  src->errors_by_reason[reason]++;
  src->epoch_errors[reason]++;
  max_errors = src->max_errors;
  src->warn_limiter.limit = src->warning_limit;
  post = gst_spdl_warn_limiter_count (&src->warn_limiter, slot->epoch);
  GST_OBJECT_UNLOCK (src);

  if (max_errors >= 0 && errors > (guint64) max_errors) {
    SPDL_SRC_ERROR (src, RESOURCE, READ,
        ("Could not read sample \"%s\": %s; %" G_GUINT64_FORMAT
            " samples skipped, more than max-errors=%d", name,
            why, errors, max_errors),
        ("reason: %s", gst_spdl_read_error_reason (reason)));
    go_on = FALSE;
  } else if (post) {
    SPDL_SRC_WARNING (src, RESOURCE, READ,
        ("Skipping sample \"%s\": %s", name, why),
        ("reason: %s; %" G_GUINT64_FORMAT " samples skipped so far",
            gst_spdl_read_error_reason (reason), errors));
  } else {
    GST_WARNING_OBJECT (src, "Skipping sample \"%s\": %s (reason %s)", name,
        why, gst_spdl_read_error_reason (reason));
  }
  g_free (display);
  g_free (why);
  g_free (name);
  return go_on;
}

/* A bad field value replaced by its kind's fill value (policy empty):
 * warned about like a skip (the first warning-limit of each epoch), not
 * counted as one: the sample is delivered. */
static void
warn_filled (GstSpdlSrc * src, const gchar * path, const gchar * field,
    const GError * why)
{
  gchar *display = g_filename_display_name (path);
  gchar *name = gst_spdl_url_redact (display);
  gboolean post;

  GST_OBJECT_LOCK (src);
  src->warn_limiter.limit = src->warning_limit;
  post = gst_spdl_warn_limiter_count (&src->warn_limiter, src->current_epoch);
  GST_OBJECT_UNLOCK (src);
  if (post)
    SPDL_SRC_WARNING (src, STREAM, DECODE,
        ("Sample \"%s\": field \"%s\" %s: delivered with its empty value",
            name, field, why->message),
        ("reason: %s; the field's policy is empty",
            gst_spdl_read_error_reason (why->code)));
  g_free (name);
  g_free (display);
}

typedef enum
{
  RECORD_OK,
  RECORD_SKIP,                  /* @skip says why */
  RECORD_ERROR,                 /* posted */
} RecordResult;

/* The record's values on @buffer from @fields (@n_fields of them, NULL:
 * all absent), each checked against its kind; a field absent or bad goes
 * by its policy. */
static RecordResult
attach_record (GstSpdlSrc * src, GstBuffer * buffer,
    const GstSpdlFieldData * fields, guint n_fields, const gchar * path,
    GError ** skip)
{
  const GstSpdlRecord *record = src->record;
  GValue *values = g_new0 (GValue, record->n_fields);
  RecordResult result = RECORD_OK;
  guint f;

  for (f = 0; f < record->n_fields && result == RECORD_OK; f++) {
    const GstSpdlField *field = &record->fields[f];
    const GstSpdlFieldData *d = fields && f < n_fields ? &fields[f] : NULL;
    GError *why = NULL, *bad = NULL;

    if (d && d->error) {
      why = g_error_copy (d->error);
    } else if (d == NULL || d->data == NULL) {
      why = g_error_new (GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_MISSING_FIELD, "is absent");
    } else if (g_bytes_get_size (d->data) > src->active_max_field_size) {
      why = g_error_new (GST_SPDL_READ_ERROR,
          GST_SPDL_READ_ERROR_FIELD_TOO_LARGE, "holds %" G_GSIZE_FORMAT
          " bytes, more than max-field-size=%" G_GUINT64_FORMAT,
          g_bytes_get_size (d->data), src->active_max_field_size);
    } else {
      gsize len;
      const guint8 *data = g_bytes_get_data (d->data, &len);

      gboolean absent = FALSE, ok;

      /* a path reads the member's JSON once per field that names it */
      ok = field->path ?
          gst_spdl_field_value_at_path (&values[f], field, data, len, &absent,
          &bad) : gst_spdl_field_value_from_data (&values[f], field->kind,
          data, len, d->data, &bad);
      if (!ok && absent) {
        why = g_error_new (GST_SPDL_READ_ERROR,
            GST_SPDL_READ_ERROR_MISSING_FIELD, "%s", bad->message);
        g_error_free (bad);
      } else if (!ok) {
        why = g_error_new (GST_SPDL_READ_ERROR,
            GST_SPDL_READ_ERROR_BAD_FIELD, "%s", bad->message);
        g_error_free (bad);
      }
    }
    if (why == NULL)
      continue;
    switch (field->missing) {
      case GST_SPDL_MISSING_EMPTY:
        /* the user's choice: the fill value; an absent field in the log
         * only, a bad value replaced is warned about (data altered) */
        GST_DEBUG_OBJECT (src, "sample \"%s\": field \"%s\" %s: empty",
            path, field->name, why->message);
        if (why->code != GST_SPDL_READ_ERROR_MISSING_FIELD)
          warn_filled (src, path, field->name, why);
        gst_spdl_field_init_empty (&values[f], field->kind);
        break;
      case GST_SPDL_MISSING_ERROR:{
        gchar *display = g_filename_display_name (path);

        SPDL_SRC_ERROR (src, STREAM, FAILED, ("Sample \"%s\": field \"%s\" "
                "%s", display, field->name, why->message),
            ("reason: %s; the field's policy is error",
                gst_spdl_read_error_reason (why->code)));
        g_free (display);
        result = RECORD_ERROR;
        break;
      }
      default:
        g_set_error (skip, GST_SPDL_READ_ERROR, why->code, "field \"%s\" %s",
            field->name, why->message);
        result = RECORD_SKIP;
        break;
    }
    g_error_free (why);
  }
  if (result == RECORD_OK)
    gst_spdl_buffer_set_record (buffer, values, record->n_fields);
  for (f = 0; f < record->n_fields; f++)
    if (G_IS_VALUE (&values[f]))
      g_value_unset (&values[f]);
  g_free (values);
  return result;
}

/* An annotations file's sample @index: its objects and image_id into
 * @fields (the sidecars read beside its image; NULL: none). */
static GstSpdlFieldData *
coco_fields (GstSpdlSrc * src, guint index, GstSpdlFieldData * fields)
{
  gchar *objects, *id;
  gsize len;

  if (fields == NULL)
    fields = gst_spdl_field_data_new (src->record->n_fields);
  objects = gst_spdl_coco_get_objects (src->coco, index, &len);
  fields[0].data = g_bytes_new_take (objects, len);
  id = g_strdup_printf ("%" G_GINT64_FORMAT, src->coco->image_ids[index]);
  fields[1].data = g_bytes_new_take (id, strlen (id));
  return fields;
}

/* Waits for the head slot's read; NULL at the end or when flushing. */
static GstSpdlReadSlot *
next_slot (GstSpdlSrc * src, GstFlowReturn * ret)
{
  GstSpdlReadSlot *slot;

  g_mutex_lock (&src->read_lock);
  schedule_reads (src);
  slot = g_queue_peek_head (&src->slots);
  while (slot && slot->submitted && !slot->done && !src->flushing)
    g_cond_wait (&src->read_cond, &src->read_lock);
  if (src->flushing) {
    g_mutex_unlock (&src->read_lock);
    *ret = GST_FLOW_FLUSHING;
    return NULL;
  }
  if (slot)
    g_queue_pop_head (&src->slots);
  schedule_reads (src);
  g_mutex_unlock (&src->read_lock);

  *ret = slot ? GST_FLOW_OK : GST_FLOW_EOS;
  if (slot && !slot->submitted)
    read_slot (slot);
  return slot;
}

/* Tar shards: the provider's samples, counted and announced as files */
static GstFlowReturn
create_from_shards (GstSpdlSrc * src, GstBuffer ** outbuf)
{
  GstSpdlShardSample *sample;

  for (;;) {
    switch (gst_spdl_shards_next (src->shards, &sample)) {
      case GST_SPDL_SHARDS_FLUSHING:
        return GST_FLOW_FLUSHING;
      case GST_SPDL_SHARDS_EOS:
        if (!announce_epoch_end (src))
          return GST_FLOW_ERROR;
        post_skipped (src);
        return GST_FLOW_EOS;
      case GST_SPDL_SHARDS_SAMPLE:
        break;
    }
    if (src->started_epoch && sample->epoch != src->current_epoch &&
        !announce_epoch_end (src)) {
      gst_spdl_shard_sample_free (sample);
      return GST_FLOW_ERROR;
    }
    if (!src->started_epoch) {
      guint64 offset, samples = gst_spdl_shards_epoch_share (src->shards,
          sample->epoch, &offset);

      src->epoch_resumed = offset > 0;
      gst_pad_push_event (GST_BASE_SRC_PAD (src),
          gst_spdl_epoch_start_event_new (sample->epoch, samples, offset,
              src->num_shards, src->shard_index));
    }
    src->current_epoch = sample->epoch;
    src->started_epoch = TRUE;
    gst_spdl_stats_add_in (&src->stats, 1);
    if (sample->error) {
      /* the same accounting as a file that cannot be read */
      GstSpdlReadSlot slot = { 0, };
      gboolean go_on;

      slot.index = (guint) sample->index;
      slot.epoch = sample->epoch;
      slot.path = sample->path;
      slot.error = sample->error;
      go_on = skip_sample (src, &slot);
      gst_spdl_shard_sample_free (sample);
      if (!go_on)
        return GST_FLOW_ERROR;
      continue;
    }
    *outbuf = g_steal_pointer (&sample->buffer);
    GST_BUFFER_OFFSET (*outbuf) = src->pushed_in_epoch;
    GST_BUFFER_OFFSET_END (*outbuf) = src->pushed_in_epoch + 1;
    gst_spdl_buffer_add_sample_meta (*outbuf, sample->index, sample->label,
        sample->epoch, sample->path);
    gst_spdl_buffer_set_sample_position (*outbuf, sample->position);
    if (src->record) {
      GError *skip = NULL;
      RecordResult result = attach_record (src, *outbuf, sample->fields,
          sample->n_fields, sample->path, &skip);

      if (result != RECORD_OK) {
        gst_clear_buffer (outbuf);
        if (result == RECORD_SKIP) {
          GstSpdlReadSlot slot = { 0, };
          gboolean go_on;

          slot.index = (guint) sample->index;
          slot.epoch = sample->epoch;
          slot.path = sample->path;
          slot.error = skip;
          go_on = skip_sample (src, &slot);
          g_error_free (skip);
          gst_spdl_shard_sample_free (sample);
          if (!go_on)
            return GST_FLOW_ERROR;
          continue;
        }
        gst_spdl_shard_sample_free (sample);
        return GST_FLOW_ERROR;
      }
    }
    src->pushed_in_epoch++;
    gst_spdl_stats_add_out (&src->stats, 1);
    gst_spdl_shard_sample_free (sample);
    return GST_FLOW_OK;
  }
}

static GstFlowReturn
gst_spdl_src_create (GstPushSrc * psrc, GstBuffer ** outbuf)
{
  GstSpdlSrc *src = GST_SPDL_SRC (psrc);
  GstSpdlReadSlot *slot;
  GstFlowReturn ret;

  if (src->shards)
    return create_from_shards (src, outbuf);
  while ((slot = next_slot (src, &ret)) != NULL) {
    if (src->started_epoch && slot->epoch != src->current_epoch &&
        !announce_epoch_end (src)) {
      read_slot_free (slot);
      return GST_FLOW_ERROR;
    }
    if (!src->started_epoch)
      announce_epoch_start (src, slot);
    src->current_epoch = slot->epoch;
    src->started_epoch = TRUE;

    if (slot->error) {
      gboolean go_on = skip_sample (src, slot);
      read_slot_free (slot);
      if (!go_on)
        return GST_FLOW_ERROR;
      continue;
    }

    *outbuf = g_steal_pointer (&slot->buffer);
    GST_BUFFER_OFFSET (*outbuf) = src->pushed_in_epoch;
    GST_BUFFER_OFFSET_END (*outbuf) = src->pushed_in_epoch + 1;
    gst_spdl_buffer_add_sample_meta (*outbuf, slot->index, slot->label,
        slot->epoch, slot->path);
    gst_spdl_buffer_set_sample_position (*outbuf, slot->position);
    if (slot->batched) {
      gst_spdl_buffer_set_batch (*outbuf, slot->batch, slot->resume_epoch,
          slot->resume_offset);
      if (slot->batch_end)
        gst_spdl_buffer_set_batch_end (*outbuf);
    }
    if (slot->row) {
      gdouble start, duration;

      gst_spdl_dataset_get_span (src->dataset, slot->index, &start,
          &duration);
      gst_spdl_buffer_set_span (*outbuf, start, duration);
      gst_spdl_buffer_set_manifest_row (*outbuf, slot->row);
    }
    if (src->record) {
      GstSpdlFieldData *fields = src->coco ? coco_fields (src, slot->index,
          g_steal_pointer (&slot->fields)) : slot->fields ? slot->fields :
          manifest_fields (src, slot->index);
      RecordResult result = attach_record (src, *outbuf, fields,
          src->record->n_fields, slot->path, &slot->error);

      if (fields != slot->fields)
        gst_spdl_field_data_free (fields, src->record->n_fields);
      if (result != RECORD_OK) {
        gboolean go_on = result == RECORD_SKIP && skip_sample (src, slot);

        gst_clear_buffer (outbuf);
        read_slot_free (slot);
        if (!go_on)
          return GST_FLOW_ERROR;
        continue;
      }
    }
    src->pushed_in_epoch++;
    gst_spdl_stats_add_out (&src->stats, 1);
    read_slot_free (slot);
    return GST_FLOW_OK;
  }
  if (ret == GST_FLOW_EOS) {
    if (!announce_epoch_end (src))
      return GST_FLOW_ERROR;
    post_skipped (src);
  }
  return ret;
}
