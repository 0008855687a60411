/* GStreamer SPDL: the sample record (named fields beside the media)
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifndef __GST_SPDL_RECORD_H__
#define __GST_SPDL_RECORD_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* A sample is a record: the media item (the buffer's own bytes, then its
 * decoded image, clip or audio) and the fields a user asked for, named as
 * webdataset names them (a member's extension after the key, "jpg;png"
 * for the first of these present), a manifest's column or a sidecar's
 * extension.
 *
 * The description travels in caps: spdlsrc's src caps, and every
 * decoder's src caps after it, carry the string field "fields", the
 * canonical text of the record (gst_spdl_record_to_string: one
 * "NAME:KIND:MISSING" per field, ',' between fields). The values travel
 * on each sample buffer: its GstSpdlSampleMeta holds "record", a
 * GstValueArray with one value per field, in the description's order:
 *   int     G_TYPE_INT64
 *   float   G_TYPE_DOUBLE
 *   string  G_TYPE_STRING (valid UTF-8, never cut)
 *   json    G_TYPE_STRING (the JSON text, valid UTF-8; parsed by the
 *           application)
 *   bytes   G_TYPE_BYTES
 *   npy     G_TYPE_BYTES (the whole .npy file; gstspdlnpy.h parses it)
 *   objects G_TYPE_STRING (one image's COCO annotations, JSON text: an
 *           array of annotations or an object with the member
 *           "annotations") while encoded; once spdldecode has decoded it
 *           through the sample's geometry, a GstStructure "objects"
 *           (docs/record.md: n, boxes, labels, area, iscrowd, masks)
 *   image, label
 *           G_TYPE_BYTES while encoded (spdlsrc), GST_TYPE_SAMPLE once a
 *           decoder has decoded it through the sample's geometry: a
 *           buffer of packed rows and caps video/x-raw with format RGB
 *           (image), GRAY8 or GRAY16_LE (label), width and height.
 * A field missing from a sample under the policy "empty" holds its kind's
 * fill value: int -1, float NaN, string "", json "null", objects "[]"
 * (no object), bytes and npy
 * an empty GBytes, image and label an empty GBytes (a decoder makes it
 * zeros of the sample's size). */

typedef enum
{
  GST_SPDL_FIELD_INT,
  GST_SPDL_FIELD_FLOAT,
  GST_SPDL_FIELD_STRING,
  GST_SPDL_FIELD_JSON,
  GST_SPDL_FIELD_BYTES,
  GST_SPDL_FIELD_NPY,
  GST_SPDL_FIELD_IMAGE,         /* decoded as the media image, RGB */
  GST_SPDL_FIELD_LABEL,         /* a mask or label map: nearest, values kept */
  GST_SPDL_FIELD_OBJECTS,       /* an image's annotations in COCO's layout */
} GstSpdlFieldKind;

/* What happens to a sample that lacks the field, or whose value is bad
 * (not UTF-8, malformed JSON or npy, an image that does not decode or a
 * label image of another size than its sample's). */
typedef enum
{
  GST_SPDL_MISSING_SKIP,        /* skipped by reason, counted, warned */
  GST_SPDL_MISSING_ERROR,       /* the pipeline stops with an error */
  GST_SPDL_MISSING_EMPTY,       /* the kind's fill value (above) */
} GstSpdlMissingPolicy;

typedef struct
{
  gchar *name;                  /* as spelled: "jpg;png", "txt", "seg.png",
                                 * "json#meta.scores.1" */
  gchar **alternatives;         /* @name before any '#', split at ';' */
  gchar **path;                 /* @name after '#' split at '.' (keys and
                                 * array indices into the member's JSON),
                                 * NULL without '#' */
  GstSpdlFieldKind kind;
  GstSpdlMissingPolicy missing;
} GstSpdlField;

typedef struct
{
  guint n_fields;
  GstSpdlField *fields;
} GstSpdlRecord;

/* The fields (webdataset's spelling) a string describes: ',' between
 * fields, each "NAME[;ALT...][#PATH][:KIND][:MISSING]" (KIND and MISSING
 * in either order). "#PATH" takes one value out of the member's JSON:
 * dot-separated keys, a number indexing an array; its KIND is int,
 * float, string (the default) or json. Without a KIND it comes from the first alternative's
 * last extension: cls, cls2, index, inx, id, label, target -> int;
 * txt, text, transcript, caption -> string; json, jsn -> json;
 * npy -> npy; an image extension (jpg, jpeg, png, webp, gif, bmp, tif,
 * tiff, ppm, pgm, pbm, pnm) -> image; anything else -> bytes. A field
 * without MISSING takes @missing. NULL with @error (GST_CORE_ERROR)
 * naming the bad part; an empty or NULL @text is a record of no field. */
GstSpdlRecord *gst_spdl_record_parse (const gchar * text,
    GstSpdlMissingPolicy missing, GError ** error);
void gst_spdl_record_free (GstSpdlRecord * record);
/* The canonical text: "NAME:KIND:MISSING,..." ("" for no field) */
gchar *gst_spdl_record_to_string (const GstSpdlRecord * record);
/* The record that @caps describe (their "fields"), NULL when none. */
GstSpdlRecord *gst_spdl_record_from_caps (const GstCaps * caps);
/* Copies the "fields" of @from (if any) into @to (writable). */
void gst_spdl_record_copy_caps_field (GstCaps * to, const GstCaps * from);
gint gst_spdl_record_find (const GstSpdlRecord * record, const gchar * name);

const gchar *gst_spdl_field_kind_name (GstSpdlFieldKind kind);
gboolean gst_spdl_field_kind_from_name (const gchar * name,
    GstSpdlFieldKind * kind);
const gchar *gst_spdl_missing_policy_name (GstSpdlMissingPolicy missing);
gboolean gst_spdl_missing_policy_from_name (const gchar * name,
    GstSpdlMissingPolicy * missing);
/* The kind a field of this @name has when none is given. */
GstSpdlFieldKind gst_spdl_field_kind_for_name (const gchar * name);
/* Whether @kind is decoded by the image decoder (image, label). */
gboolean gst_spdl_field_kind_is_image (GstSpdlFieldKind kind);
/* Whether only spdldecode can decode @kind: image, label and objects (it
 * needs the image's geometry). */
gboolean gst_spdl_field_kind_needs_image_decoder (GstSpdlFieldKind kind);

/* Sets the fill value of @kind in @value (unset; initialized here). */
void gst_spdl_field_init_empty (GValue * value, GstSpdlFieldKind kind);
/* Sets @value (unset) to the field's value read from the text or bytes
 * @data (@len bytes) of a member, sidecar or manifest column: int and
 * float parsed (surrounding white space allowed, nothing else), string,
 * json and objects checked to be UTF-8 without NUL (json and objects:
 * also well formed, at
 * most 256 levels deep), npy checked to be an array a batch holds
 * (gstspdlnpy.h: little-endian numbers, C order), bytes, npy, image and
 * label kept as a GBytes
 * (@bytes when given: no copy). FALSE with @error (GST_STREAM_ERROR)
 * saying why, in words for a warning ("is not UTF-8 at byte 12"). */
gboolean gst_spdl_field_value_from_data (GValue * value,
    GstSpdlFieldKind kind, const guint8 * data, gsize len, GBytes * bytes,
    GError ** error);

/* Sets @value (unset) to the value at @field's path (it has one) in the
 * JSON text @data (@len bytes, a UTF-8 BOM allowed): int from a JSON
 * integer (or a number with no fraction in int64's range), float from any
 * JSON number, string from a JSON string (unescaped), json the value's
 * JSON text. FALSE with @error (GST_STREAM_ERROR) saying why, in words
 * for a warning (objects as json), and @absent TRUE where the path is
 * absent (a missing key,
 * an index past the end, a null): the field is missing. */
gboolean gst_spdl_field_value_at_path (GValue * value,
    const GstSpdlField * field, const guint8 * data, gsize len,
    gboolean * absent, GError ** error);

/* The record's values on a sample buffer (its sample meta, which must
 * exist): @values, @n_values of them, copied. */
void gst_spdl_buffer_set_record (GstBuffer * buffer, const GValue * values,
    guint n_values);
/* The number of values of the buffer's record, 0 without one. */
guint gst_spdl_buffer_get_record_size (GstBuffer * buffer);
/* The value @i of the buffer's record, owned by its meta; NULL past the
 * end. */
const GValue *gst_spdl_buffer_get_record_value (GstBuffer * buffer, guint i);
/* Replaces the value @i (a decoder's decoded image for its bytes). */
gboolean gst_spdl_buffer_set_record_value (GstBuffer * buffer, guint i,
    const GValue * value);

/* The geometry a decoder applied to a sample's image, on its sample meta
 * (spdldecode sets it): the crop box in the source image's pixels (after
 * its EXIF orientation), whether it was then flipped horizontally, and
 * the source's size. A mask transformed the same way is torchvision's
 * F.resized_crop (mask, y, x, h, w, size, NEAREST), then F.hflip where
 * flipped. */
typedef struct
{
  gdouble x, y, width, height;
  gboolean flipped;
  guint source_width, source_height;
} GstSpdlSampleGeometry;

void gst_spdl_buffer_set_sample_geometry (GstBuffer * buffer,
    const GstSpdlSampleGeometry * geometry);
gboolean gst_spdl_buffer_get_sample_geometry (GstBuffer * buffer,
    GstSpdlSampleGeometry * geometry);

G_END_DECLS

#endif /* __GST_SPDL_RECORD_H__ */
