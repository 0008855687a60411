"""Batches: the tensors of a GstSample, sharing its memory, with its metadata.

spdlbatch's other/tensors caps describe the tensors (NNStreamer's
dimensions, innermost first, and type names); each tensor is one memory of
the buffer, and GstSpdlBatchMeta carries the epoch and the samples'
indices. Host memories become numpy arrays (or torch tensors made from
them) that keep the memory mapped while they live; device memories are
:mod:`spdlgst.cuda`'s.
"""
from __future__ import annotations

from typing import Any, List, Optional

from gi.repository import Gst

from ._process import exiting, track_holder
from .errors import LoaderError

# numpy has no bfloat16: numpy output shows its bits as uint16 (a view:
# ``torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)`` reads it);
# torch output is torch.bfloat16
_BFLOAT16 = "<u2"
# type name -> array interface typestr of a host tensor
_TYPESTRS = {"uint8": "|u1", "int64": "<i8", "float32": "<f4", "float16": "<f2",
             "bfloat16": _BFLOAT16, "float64": "<f8"}


def parse_tensors(caps: Gst.Caps):
    """[(shape outermost-first, type name), ...] from other/tensors caps."""
    s = caps.get_structure(0)
    dims = s.get_value("dimensions").split(",")
    types = s.get_value("types").split(",")
    return [(tuple(int(x) for x in reversed(d.strip().split(":"))), t.strip())
            for d, t in zip(dims, types)]


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
    tensors = [(shape, _TYPESTRS[t])
               for shape, t in parse_tensors(sample.get_caps())]
    if buf.n_memory() != len(tensors):
        raise LoaderError(f"batch has {buf.n_memory()} memories for "
                          f"{len(tensors)} tensors")
    out = []
    for i, (shape, typestr) in enumerate(tensors):
        mapped = _MappedTensor(sample, buf.get_memory(i), shape, typestr)
        arr = np.asarray(mapped)
        if torch is not None:
            if typestr == _BFLOAT16:
                arr = torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
            else:
                arr = torch.from_numpy(arr)
        out.append(arr)
    return out


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
    """

    epoch: Optional[int]
    indices: Optional[List[int]]

    def __new__(cls, tensors, epoch: Optional[int] = None,
                indices: Optional[List[int]] = None,
                holder: Optional[_Holder] = None) -> "Batch":
        self = super().__new__(cls, tensors)
        self.epoch = epoch
        self.indices = indices
        self._holder = holder
        return self

    @property
    def images(self) -> Any:
        """The images tensor (N, C, H, W with layout=nchw)."""
        return self[0]

    @property
    def labels(self) -> Any:
        """The labels tensor (int64, N), or None for a single-tensor batch."""
        return self[1] if len(self) > 1 else None

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
    """

    pts: Any
    audio: Any = None
    has_audio: Any = None
    clip_numbers: Optional[List[int]]
    paths: Optional[List[str]]

    @property
    def clips(self) -> Any:
        """The clips tensor."""
        return self[0]

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
    for tar shards).
    """

    start: Any
    lengths: Any
    clip_numbers: Optional[List[int]]
    paths: Optional[List[str]]

    @property
    def audio(self) -> Any:
        """The audio tensor."""
        return self[0]

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
    if len(tensors) != 2 + len(names):
        kinds = ", ".join(("clips", "labels") + tuple(names))
        raise LoaderError(f"a batch of clips has {2 + len(names)} tensors "
                          f"({kinds}), not {len(tensors)}")
    batch = cls(tensors[:2], epoch, indices, _Holder(sample))
    for name, tensor in zip(names, tensors[2:]):
        setattr(batch, name, tensor)
    batch.clip_numbers = numbers
    batch.paths = paths_of(indices) if paths_of and indices is not None else None
    return batch


def clip_batch(sample: Gst.Sample, tensors: List[Any],
               paths_of=None) -> ClipBatch:
    """The ClipBatch of @sample's three tensors (clips, labels, pts), or
    five with audio (audio, has_audio: uint8 made bool); @paths_of maps
    the dataset indices to paths."""
    if len(tensors) == 5:
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
    return Batch(tensors, epoch, indices, _Holder(sample))
