"""Batches: the tensors of a GstSample, sharing its memory, with its metadata.

spdlbatch's other/tensors caps describe the tensors (NNStreamer's
dimensions, innermost first, and type names); each tensor is one memory of
the buffer, and GstSpdlBatchMeta carries the epoch and the samples'
indices. Host memories become numpy arrays (or torch tensors made from
them) that keep the memory mapped while they live; device memories are
:mod:`spdlgst.cuda`'s.

When the samples carry fields (docs/record.md), the caps name each tensor
(``names``) and hold the record (``fields``): the tensors after the media's
become :attr:`Batch.fields`, the batch meta's ``crop``, ``flipped`` and
``source-size`` :attr:`Batch.geometry`.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from gi.repository import Gst

from ._process import exiting, track_holder
from .errors import LoaderError

# numpy has no bfloat16: numpy output shows its bits as uint16 (a view:
# ``torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)`` reads it);
# torch output is torch.bfloat16
_BFLOAT16 = "<u2"
# type name -> array interface typestr of a host tensor
_TYPESTRS = {"uint8": "|u1", "int64": "<i8", "float32": "<f4", "float16": "<f2",
             "bfloat16": _BFLOAT16, "float64": "<f8", "int8": "|i1",
             "int16": "<i2", "int32": "<i4", "uint16": "<u2", "uint32": "<u4",
             "uint64": "<u8", "bool": "|b1"}
# the tensors of a field of each kind, after its name (docs/record.md)
_FIELD_TENSORS = {"int": ("",), "float": ("",), "image": ("",), "label": ("",),
                  "string": ("/values", "/offsets"),
                  "json": ("/values", "/offsets"),
                  "bytes": ("/values", "/offsets"),
                  "npy": ("/values", "/offsets", "/shapes"),
                  "objects": ("/boxes", "/offsets", "/labels", "/area",
                              "/iscrowd")}
# an objects field's tensor with instance-masks, after its others
_OBJECT_MASKS = "/masks"


def parse_tensors(caps: Gst.Caps):
    """[(shape outermost-first, type name), ...] from other/tensors caps."""
    s = caps.get_structure(0)
    dims = s.get_value("dimensions").split(",")
    types = s.get_value("types").split(",")
    return [(tuple(int(x) for x in reversed(d.strip().split(":"))), t.strip())
            for d, t in zip(dims, types)]


def tensor_names(caps: Gst.Caps) -> Optional[List[str]]:
    """The tensors' names (the caps' ``names``), None when unnamed."""
    s = caps.get_structure(0)
    if not s.has_field("names"):
        return None
    return s.get_value("names").split(",")


def record_fields(caps: Gst.Caps) -> List[Tuple[str, str]]:
    """[(field name, kind), ...] of the caps' record (``fields``, one
    ``NAME:KIND:MISSING`` per field); [] without one."""
    s = caps.get_structure(0)
    if not s.has_field("fields"):
        return []
    out = []
    for part in s.get_value("fields").split(","):
        if part:
            name, kind, _missing = part.rsplit(":", 2)
            out.append((name, kind))
    return out


def _variable_shape(shape, typestr, nbytes):
    """A tensor whose outermost dimension is 0 in the caps (a field's
    values): as long as its memory."""
    if not shape or shape[0] != 0:
        return shape
    inner = 1
    for d in shape[1:]:
        inner *= d
    item = int(typestr[2:]) * inner
    return (nbytes // item if item else 0,) + tuple(shape[1:])


def torch_from_numpy(torch, arr):
    """@arr as a torch tensor, without a copy where torch has its dtype.
    torch before 2.3 has no uint16, uint32 or uint64: those are widened
    (a copy) to int32, int64 and int64 (uint64 values past 2**63 wrap)."""
    import numpy as np

    if arr.dtype in (np.uint16, np.uint32, np.uint64) and \
            not hasattr(torch, "uint16"):
        arr = arr.astype(np.int32 if arr.dtype == np.uint16 else np.int64)
    return torch.from_numpy(arr)


class _Holder:
    """Keeps a batch's GstSample (and one of its memories) alive."""

    def __init__(self, sample: Gst.Sample, memory: Optional[Gst.Memory] = None):
        self._sample = sample
        self._memory = memory
        track_holder(self)

    @property
    def sample(self) -> Optional[Gst.Sample]:
        return self._sample

    def release(self) -> None:
        # the memory before the sample: a buffer whose memory is still
        # referenced elsewhere is not taken back by its pool
        self._memory = None
        self._sample = None

    def __del__(self) -> None:
        if not exiting():
            self.release()


class _MappedTensor(_Holder):
    """Exposes one mapped GstMemory through the array interface.

    numpy keeps this object as the array's base: the memory is unmapped
    when the last array made from it is gone.
    """

    def __init__(self, sample, memory, shape, typestr):
        self._info = None
        ok, info = memory.map(Gst.MapFlags.READ | Gst.MapFlags.WRITE)
        writable = ok
        if not ok:
            ok, info = memory.map(Gst.MapFlags.READ)
            if not ok:
                raise LoaderError("could not map a batch's memory")
        super().__init__(sample, memory)
        self._info = info
        import numpy as np

        address = np.frombuffer(info.data, np.uint8).__array_interface__["data"][0]
        self.__array_interface__ = {
            "version": 3,
            "shape": shape,
            "typestr": typestr,
            "data": (address, not writable),
        }

    def release(self) -> None:
        info, self._info = self._info, None
        if info is not None:
            self._memory.unmap(info)
        super().release()


def host_tensors(sample: Gst.Sample, torch=None) -> List[Any]:
    """The batch's tensors in host memory, without a copy: numpy arrays, or
    tensors of @torch (the module) when given."""
    import numpy as np

    buf = sample.get_buffer()
    try:
        tensors = [(shape, _TYPESTRS[t], t)
                   for shape, t in parse_tensors(sample.get_caps())]
    except KeyError as e:
        raise LoaderError(f"tensor type {e.args[0]} is not supported") from None
    if buf.n_memory() != len(tensors):
        raise LoaderError(f"batch has {buf.n_memory()} memories for "
                          f"{len(tensors)} tensors")
    out = []
    for i, (shape, typestr, name) in enumerate(tensors):
        memory = buf.get_memory(i)
        shape = _variable_shape(shape, typestr, memory.size)
        mapped = _MappedTensor(sample, memory, shape, typestr)
        arr = np.asarray(mapped)
        if torch is not None:
            if name == "bfloat16":
                arr = torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
            else:
                arr = torch_from_numpy(torch, arr)
        out.append(arr)
    return out


class Geometry(NamedTuple):
    """What each sample's image went through (spdldecode): ``crop`` float64
    ``[B, 4]`` (x, y, width, height of the crop box in the source image's
    pixels, after its EXIF orientation; NaN for a sample without one),
    ``flipped`` bool ``[B]`` (then flipped horizontally), ``source_size``
    int64 ``[B, 2]`` (the source's width and height). A mask transformed
    the same way is torchvision's ``F.resized_crop(mask, y, x, h, w, size,
    NEAREST)``, then ``F.hflip`` where flipped."""
    crop: Any
    flipped: Any
    source_size: Any


def _geometry(s, n, torch):
    import numpy as np

    if s is None or not s.has_field("crop"):
        return None
    crop = np.array(list(s.get_value("crop")), np.float64).reshape(n, 4)
    flipped = np.array(list(s.get_value("flipped")), bool)
    size = np.array(list(s.get_value("source-size")), np.int64).reshape(n, 2)
    if torch is not None:
        crop, flipped, size = (torch.from_numpy(a) for a in (crop, flipped, size))
    return Geometry(crop, flipped, size)


def _host(t):
    """A field's host tensor as numpy (the values and offsets stay host
    memory, whatever the output)"""
    if hasattr(t, "numpy"):
        return t.cpu().numpy() if t.device.type != "cpu" else t.numpy()
    return t


def _field_tensor_count(name, kind, names):
    """How many tensors field @name of @kind has in a batch whose tensors
    are @names (None: unnamed)."""
    n = len(_FIELD_TENSORS[kind])
    if kind == "objects" and names is not None and \
            name + _OBJECT_MASKS in names:
        n += 1
    return n


class Objects(NamedTuple):
    """An objects field of a batch, flat (docs/record.md): ``boxes`` float32
    ``[n, 4]`` (x1, y1, x2, y2 in the output image's pixels), ``offsets``
    int64 ``[B + 1]`` (sample i has objects ``offsets[i]`` to
    ``offsets[i + 1]``), ``labels`` int64 ``[n]`` (COCO's category_id),
    ``area`` float32 ``[n]``, ``iscrowd`` int64 ``[n]``, ``masks`` uint8
    ``[n, H, W]`` (H, W the batch's images'; None without instance
    masks)."""
    boxes: Any
    offsets: Any
    labels: Any
    area: Any
    iscrowd: Any
    masks: Any = None


def _field_value(kind, tensors):
    """A field's value for the whole batch from its tensors."""
    if kind == "objects":
        return Objects(*tensors)
    if len(tensors) == 1:
        return tensors[0]
    values, offsets = tensors[0], [int(o) for o in _host(tensors[1])]
    n = len(offsets) - 1
    if kind != "npy":
        data = _host(values).tobytes()
        items = [data[offsets[i]:offsets[i + 1]] for i in range(n)]
        if kind == "bytes":
            return items
        if kind == "json":
            # one parse for the batch (each value was checked upstream);
            # else each on its own, which names the bad one
            try:
                return json.loads(b"[" + b",".join(items) + b"]")
            except ValueError:
                return [json.loads(item) for item in items]
        return [b.decode("utf-8") for b in items]
    shapes = []
    for row in _host(tensors[2]).tolist():
        shape = []
        for d in row:
            if d < 0:
                break
            shape.append(int(d))
        shapes.append(tuple(shape))
    if n > 0 and all(sh == shapes[0] for sh in shapes):
        return values.reshape((n,) + shapes[0])
    return [values[offsets[i]:offsets[i + 1]].reshape(shapes[i])
            for i in range(n)]


def split_record(sample: Gst.Sample, tensors: List[Any]):
    """(the media's tensors, {field name: value}, Geometry or None) of a
    batch: fields as :attr:`Batch.fields` documents them. Without a
    record: (tensors, {}, None)."""
    caps = sample.get_caps()
    fields = record_fields(caps)
    if not fields:
        return tensors, {}, None
    names = tensor_names(caps)
    n_field_tensors = sum(_field_tensor_count(n, k, names) for n, k in fields)
    n_media = len(tensors) - n_field_tensors
    if n_media < 1 or (names is not None and len(names) != len(tensors)):
        raise LoaderError(f"a batch of {len(tensors)} tensors cannot hold "
                          f"its fields {[n for n, _ in fields]}")
    out, at = {}, n_media
    for name, kind in fields:
        k = _field_tensor_count(name, kind, names)
        out[name] = _field_value(kind, tensors[at:at + k])
        at += k
    torch = None
    if type(tensors[0]).__module__.startswith("torch"):
        import torch
    meta = sample.get_buffer().get_custom_meta("GstSpdlBatchMeta")
    n = len(tensors[1]) if len(tensors) > 1 else 0
    geometry = _geometry(meta.get_structure() if meta is not None else None,
                         n, torch)
    return tensors[:n_media], out, geometry


def _describe(tensor: Any) -> str:
    """'torch.uint8[4, 3, 224, 224] cuda:0' / 'numpy int64[4]'."""
    if tensor is None:
        return "None"
    shape = ", ".join(str(d) for d in tensor.shape)
    dtype = str(tensor.dtype)
    if dtype.startswith("torch."):
        device = f" {tensor.device}" if tensor.device.type != "cpu" else ""
        return f"{dtype}[{shape}]{device}"
    return f"numpy {dtype}[{shape}]"


class Batch(tuple):
    """One batch: a tuple ``(images, labels)`` with the batch's metadata.

    ``images, labels = batch`` unpacks it; the same are ``batch.images`` and
    ``batch.labels``. ``batch.epoch`` is the epoch it belongs to,
    ``batch.indices`` the dataset index of each sample (in the order of the
    rows), ``batch.sample`` the GstSample the tensors point into.

    With fields (``fields=``; docs/record.md), ``batch.fields`` maps each
    field's name to its value for the whole batch and ``batch["txt"]``
    is the same as ``batch.fields["txt"]``: int and float fields are int64
    and float64 tensors ``[B]``; string fields a ``list[str]``; json
    fields a list of Python objects (``json.loads``); bytes fields a
    ``list[bytes]``; npy fields one tensor ``[B, ...]`` when every array of
    the batch has the same shape, else a list of tensors (views of one
    buffer); image fields uint8 ``[B, H, W, 3]`` (``[B, 3, H, W]`` with
    layout=nchw); label fields ``[B, H, W]`` uint8, or for 16-bit maps
    numpy uint16, torch uint16 (torch 2.3 and later) or int32 (a copy,
    older torch; npy arrays of uint16, uint32 and uint64 likewise become
    int32, int64 and int64 there); objects fields (COCO annotations) an
    :class:`Objects` of flat tensors (boxes, offsets, labels, area,
    iscrowd, masks). ``batch.geometry`` (a :class:`Geometry`) holds each
    sample's crop box, flip and source size when a decoder set them. The
    tuple itself stays the media's tensors.

    Images of different sizes (spdlbatch ``pad-multiple``) are padded with
    zeros to the batch's ``H x W``, each top-left: ``batch.image_sizes`` is
    int64 ``[B, 2]`` (each image's height and width before padding) and
    ``batch.padding_mask`` uint8 ``[B, H, W]`` (1 where padding); both are
    None otherwise. ``images[i, :h, :w]`` (``[i, :, :h, :w]`` for nchw) is
    image i.
    """

    epoch: Optional[int]
    indices: Optional[List[int]]
    fields: Dict[str, Any] = {}
    geometry: Optional[Geometry] = None
    image_sizes: Any = None
    padding_mask: Any = None

    def __new__(cls, tensors, epoch: Optional[int] = None,
                indices: Optional[List[int]] = None,
                holder: Optional[_Holder] = None) -> "Batch":
        self = super().__new__(cls, tensors)
        self.epoch = epoch
        self.indices = indices
        self._holder = holder
        return self

    def __getitem__(self, key):
        if isinstance(key, str):
            try:
                return self.fields[key]
            except KeyError:
                raise KeyError(f"the batch has no field {key!r} (its "
                               f"fields: {sorted(self.fields)})") from None
        return super().__getitem__(key)

    @property
    def images(self) -> Any:
        """The images tensor (N, C, H, W with layout=nchw)."""
        return self._media[0]

    @property
    def labels(self) -> Any:
        """The labels tensor (int64, N), or None for a single-tensor batch."""
        return self._media[1] if len(self._media) > 1 else None

    @property
    def _media(self) -> tuple:
        """The media's tensors (images, labels, ...), wherever ``fields=``
        put them in the tuple."""
        return self.__dict__.get("_media_tensors", self)

    @property
    def sample(self) -> Optional[Gst.Sample]:
        """The GstSample (buffer, caps, metas) behind the tensors."""
        return self._holder.sample if self._holder is not None else None

    def __repr__(self) -> str:
        parts = [f"images={_describe(self.images)}",
                 f"labels={_describe(self.labels)}", f"epoch={self.epoch}"]
        if self.indices is not None:
            shown = ", ".join(str(i) for i in self.indices[:6])
            more = f", ... {len(self.indices)} in all" if len(self.indices) > 6 else ""
            parts.append(f"indices=[{shown}{more}]")
        if self.image_sizes is not None:
            parts.append(f"image_sizes={_describe(self.image_sizes)}")
        if self.fields:
            parts.append(f"fields={sorted(self.fields)}")
        return f"Batch({', '.join(parts)})"

    def __reduce__(self):
        # pickles as a plain tuple of tensors (the GstSample cannot travel)
        return (tuple, (tuple(self),))


class ClipBatch(Batch):
    """A batch of video clips: ``clips, labels = batch`` as for images.

    ``batch.clips`` is uint8 ``[B, T, 3, H, W]`` (``[B, 3, T, H, W]`` for
    layout CTHW, ``[B, T, H, W, 3]`` for THWC), ``batch.labels`` int64
    ``[B]``, ``batch.pts`` float64 ``[B, T]`` (each frame's presentation
    time in seconds), ``batch.clip_numbers`` each clip's number in its
    video, ``batch.paths`` each clip's file (None for tar shards). With
    audio (``VideoLoader(audio=True)``), ``batch.audio`` is float32
    ``[B, C, N]``, each clip's span of its video's audio, and
    ``batch.has_audio`` bool ``[B]``: False where the video has no audio
    stream (its audio is zeros); both are None without audio.
    ``batch.captions`` is the ``list[str]`` of the manifest's captions
    with ``VideoLoader(captions=COLUMN)``, else None.
    """

    pts: Any
    audio: Any = None
    has_audio: Any = None
    captions: Optional[List[str]] = None
    clip_numbers: Optional[List[int]]
    paths: Optional[List[str]]

    @property
    def clips(self) -> Any:
        """The clips tensor."""
        return self._media[0]

    def __repr__(self) -> str:
        return (f"ClipBatch(clips={_describe(self.clips)}, "
                f"labels={_describe(self.labels)}, pts={_describe(self.pts)}, "
                f"epoch={self.epoch}, indices={self.indices}, "
                f"clip_numbers={self.clip_numbers})")


class AudioBatch(Batch):
    """A batch of audio clips: ``audio, labels = batch``.

    ``batch.audio`` is float32 ``[B, C, N]`` (values in [-1, 1]; whole
    files are padded with zeros to the longest of the batch),
    ``batch.labels`` int64 ``[B]``, ``batch.start`` float64 ``[B]`` (each
    clip's start in seconds in its file), ``batch.lengths`` int64 ``[B]``
    (samples from the file before any padding), ``batch.clip_numbers``
    each clip's number in its file, ``batch.paths`` each clip's file (None
    for tar shards). From a manifest of utterances (``duration=None``),
    ``batch.text`` is the ``list[str]`` of their transcripts (the same as
    ``batch["text"]``; None where the samples carry no text).
    """

    start: Any
    lengths: Any
    clip_numbers: Optional[List[int]]
    paths: Optional[List[str]]

    @property
    def audio(self) -> Any:
        """The audio tensor."""
        return self._media[0]

    @property
    def text(self) -> Optional[List[str]]:
        """The transcripts (the record's ``text`` field), or None."""
        return self.fields.get("text")

    def __repr__(self) -> str:
        return (f"AudioBatch(audio={_describe(self.audio)}, "
                f"labels={_describe(self.labels)}, "
                f"lengths={_describe(self.lengths)}, epoch={self.epoch}, "
                f"indices={self.indices}, clip_numbers={self.clip_numbers})")


def _clips_of(cls, sample: Gst.Sample, tensors: List[Any], names,
              paths_of):
    """A @cls batch of @sample's tensors: the first two as the tuple, the
    rest as attributes @names; the meta's epoch, indices and clips."""
    epoch = indices = numbers = None
    meta = sample.get_buffer().get_custom_meta("GstSpdlBatchMeta")
    if meta is not None:
        s = meta.get_structure()
        epoch = s.get_value("epoch")
        indices = list(s.get_value("indices"))
        if s.has_field("clips"):
            numbers = list(s.get_value("clips"))
    tensors, fields, geometry = split_record(sample, tensors)
    if len(tensors) != 2 + len(names):
        kinds = ", ".join(("clips", "labels") + tuple(names))
        raise LoaderError(f"a batch of clips has {2 + len(names)} tensors "
                          f"({kinds}), not {len(tensors)}")
    batch = cls(tensors[:2], epoch, indices, _Holder(sample))
    for name, tensor in zip(names, tensors[2:]):
        setattr(batch, name, tensor)
    batch.clip_numbers = numbers
    batch.paths = paths_of(indices) if paths_of and indices is not None else None
    batch.fields, batch.geometry = fields, geometry
    return batch


def clip_batch(sample: Gst.Sample, tensors: List[Any],
               paths_of=None) -> ClipBatch:
    """The ClipBatch of @sample's three tensors (clips, labels, pts), or
    five with audio (audio, has_audio: uint8 made bool), then any fields';
    @paths_of maps the dataset indices to paths."""
    n_fields = sum(len(_FIELD_TENSORS[k])
                   for _, k in record_fields(sample.get_caps()))
    if len(tensors) - n_fields == 5:
        batch = _clips_of(ClipBatch, sample, tensors,
                          ("pts", "audio", "has_audio"), paths_of)
        batch.has_audio = batch.has_audio != 0
        return batch
    return _clips_of(ClipBatch, sample, tensors, ("pts",), paths_of)


def audio_batch(sample: Gst.Sample, tensors: List[Any],
                paths_of=None) -> AudioBatch:
    """The AudioBatch of @sample's four tensors (audio, labels, start,
    lengths); @paths_of maps the dataset indices to paths."""
    return _clips_of(AudioBatch, sample, tensors, ("start", "lengths"),
                     paths_of)


def sample_batch(sample: Gst.Sample, tensors: List[Any]) -> Batch:
    """The Batch of @sample's @tensors, with the epoch and indices of its
    GstSpdlBatchMeta; it keeps @sample alive."""
    epoch = indices = None
    meta = sample.get_buffer().get_custom_meta("GstSpdlBatchMeta")
    if meta is not None:
        s = meta.get_structure()
        epoch = s.get_value("epoch")
        indices = list(s.get_value("indices"))
    tensors, fields, geometry = split_record(sample, tensors)
    names = tensor_names(sample.get_caps())
    padded = names is not None and names[2:4] == ["image-sizes",
                                                  "padding-mask"]
    batch = Batch(tensors[:2] if padded else tensors, epoch, indices,
                  _Holder(sample))
    batch.fields, batch.geometry = fields, geometry
    if padded:
        batch.image_sizes, batch.padding_mask = tensors[2], tensors[3]
    return batch


def in_field_order(batch: Batch, names: List[str], media: int) -> Batch:
    """@batch as the tuple ``fields=`` asked for (webdataset's
    ``to_tuple``): field @media is the media's tensor (images, clips or
    audio), each other field its value in ``batch.fields``. Attributes
    (labels, fields, geometry, epoch, indices, ...) stay as they were."""
    items = [batch._media[0] if i == media else batch.fields[name]
             for i, name in enumerate(names)]
    ordered = type(batch).__new__(type(batch), items, batch.epoch,
                                  batch.indices, batch._holder)
    ordered.__dict__.update(batch.__dict__)
    ordered._media_tensors = tuple(batch)
    return ordered


class PaddedObjects(NamedTuple):
    """A batch's objects padded to the most of any of its images, for code
    that wants one tensor: ``boxes`` float32 ``[B, maxN, 4]`` (zeros past
    each image's count), ``labels`` int64 ``[B, maxN]`` (-1 past it),
    ``area`` float32 ``[B, maxN]``, ``iscrowd`` int64 ``[B, maxN]``,
    ``counts`` int64 ``[B]`` (each image's N)."""
    boxes: Any
    labels: Any
    area: Any
    iscrowd: Any
    counts: Any


def _zeros_like(t, shape, fill=0):
    if hasattr(t, "new_full"):
        return t.new_full(shape, fill)
    import numpy as np

    return np.full(shape, fill, t.dtype)


class DetectionBatch(Batch):
    """A batch of a detection dataset: ``images, targets = batch``, as
    torchvision's detection references and models take them.

    ``batch.images`` is the image tensor ``[B, 3, H, W]`` (``[B, H, W, 3]``
    with layout="nhwc"); with ``recipe="detection"`` images of different
    sizes are padded with zeros at their right and bottom to the batch's
    largest, rounded up to a multiple of 32: ``batch.image_sizes`` int64
    ``[B, 2]`` holds each image's height and width before padding,
    ``batch.padding_mask`` uint8 ``[B, H, W]`` is 1 on padding (DETR's
    mask) and ``batch.image_list`` the images without their padding (views).
    Both are None when every image has the batch's size.

    ``targets`` is a list of one dict per image: ``boxes`` float32
    ``[N, 4]`` (x1, y1, x2, y2 in the output image's pixels: COCO's x, y,
    w, h through the image's resize, crop and flip), ``labels`` int64
    ``[N]`` (COCO's ``category_id`` as the file has it), ``image_id``
    int64 (a 0-d tensor), ``area`` float32 ``[N]`` (COCO's, as the file has
    it), ``iscrowd`` int64 ``[N]`` and, with ``masks=True``, ``masks``
    uint8 ``[N, h, w]`` at the image's own size. They are views of the
    batch's flat tensors (no copy): ``batch.objects`` (an :class:`Objects`:
    ``boxes [sum N, 4]`` and the others with ``offsets``), what C readers
    of the batch get. ``batch.boxes`` and ``batch.labels`` are the lists of
    each image's boxes and labels, ``batch.padded()`` a padded form
    (:class:`PaddedObjects`, a copy), ``batch.image_ids`` int64 ``[B]``,
    ``batch.geometry`` each image's crop box, flip and source size.
    """

    objects: Objects
    image_ids: Any = None

    @property
    def targets(self) -> List[Dict[str, Any]]:
        """One dict per image (views of :attr:`objects`)."""
        return self._media[1]

    @property
    def labels(self) -> List[Any]:
        """Each image's labels (int64 ``[N]`` views)."""
        return [t["labels"] for t in self.targets]

    @property
    def boxes(self) -> List[Any]:
        """Each image's boxes (float32 ``[N, 4]`` views)."""
        return [t["boxes"] for t in self.targets]

    @property
    def image_list(self) -> List[Any]:
        """Each image without the batch's padding (views)."""
        images = self.images
        if self.image_sizes is None:
            return list(images)
        nhwc = images.shape[-1] == 3 and images.shape[1] != 3
        out = []
        for img, (h, w) in zip(images, self.image_sizes.tolist()):
            out.append(img[:h, :w] if nhwc else img[:, :h, :w])
        return out

    def padded(self) -> PaddedObjects:
        """The objects as ``[B, maxN, ...]`` tensors with each image's
        count (a copy)."""
        o = self.objects
        offsets = [int(v) for v in o.offsets.tolist()]
        counts = [b - a for a, b in zip(offsets, offsets[1:])]
        n, most = len(counts), max(counts, default=0)
        boxes = _zeros_like(o.boxes, (n, most, 4))
        labels = _zeros_like(o.labels, (n, most), -1)
        area = _zeros_like(o.area, (n, most))
        iscrowd = _zeros_like(o.iscrowd, (n, most))
        for i, (a, b) in enumerate(zip(offsets, offsets[1:])):
            boxes[i, :b - a] = o.boxes[a:b]
            labels[i, :b - a] = o.labels[a:b]
            area[i, :b - a] = o.area[a:b]
            iscrowd[i, :b - a] = o.iscrowd[a:b]
        count = _zeros_like(o.offsets, (n,))
        for i, c in enumerate(counts):
            count[i] = c
        return PaddedObjects(boxes, labels, area, iscrowd, count)

    def __repr__(self) -> str:
        n = int(self.objects.offsets[-1]) if len(self.objects.offsets) else 0
        return (f"DetectionBatch(images={_describe(self.images)}, "
                f"{len(self.targets)} targets, {n} objects, "
                f"epoch={self.epoch}, indices={self.indices})")

    def __reduce__(self):
        # pickles as (images, targets), the targets' views copied
        return (tuple, ((self.images, self.targets),))


def _image_id_field(fields: Dict[str, Any]) -> Optional[str]:
    """The field holding the images' ids: ``image_id`` (spdlsrc's COCO
    listing) or a JSON path ending in it (``json#image_id``)."""
    for name in fields:
        if name == "image_id" or name.endswith("#image_id"):
            return name
    return None


def detection_batch(batch: Batch, objects_field: str) -> DetectionBatch:
    """The DetectionBatch of @batch (sample_batch's, with the objects field
    @objects_field among its fields)."""
    objects = batch.fields.get(objects_field)
    if not isinstance(objects, Objects):
        raise LoaderError(f"the batch has no objects field {objects_field!r} "
                          f"(its fields: {sorted(batch.fields)})")
    images = batch.images
    sizes, padding = batch.image_sizes, batch.padding_mask
    id_field = _image_id_field(batch.fields)
    ids = batch.fields.get(id_field) if id_field else None
    offsets = [int(v) for v in objects.offsets.tolist()]
    nhwc = images.shape[-1] == 3 and images.shape[1] != 3
    full_h, full_w = (images.shape[1:3] if nhwc else images.shape[2:4]) \
        if images.ndim == 4 else (0, 0)
    hw = sizes.tolist() if sizes is not None else \
        [(full_h, full_w)] * (len(offsets) - 1)
    targets = []
    for i, (a, b) in enumerate(zip(offsets, offsets[1:])):
        t = {"boxes": objects.boxes[a:b], "labels": objects.labels[a:b]}
        if ids is not None:
            t["image_id"] = ids[i:i + 1].reshape(())
        t["area"] = objects.area[a:b]
        t["iscrowd"] = objects.iscrowd[a:b]
        if objects.masks is not None:
            h, w = hw[i]
            t["masks"] = objects.masks[a:b, :h, :w]
        targets.append(t)
    out = DetectionBatch((images, targets), batch.epoch, batch.indices,
                         batch._holder)
    out.fields, out.geometry = batch.fields, batch.geometry
    out.objects, out.image_ids = objects, ids
    out.image_sizes, out.padding_mask = sizes, padding
    return out
