"""gst-spdl's Python loader: GStreamer pipelines as PyTorch-style data loaders.

    import spdlgst

    loader = spdlgst.Loader(
        "spdlsrc location=/data/train shuffle=true num-epochs=-1 ! "
        "spdldecode width=224 height=224 mode=random-resized-crop ! "
        "spdlbatch batch-size=256 ! spdlappsink name=sink")
    for epoch in range(90):
        for images, labels in loader:      # one epoch per loop
            ...

Batches arrive as numpy arrays (or torch tensors with ``output="torch"``)
that share memory with the GStreamer buffers: nothing is copied, and each
buffer stays alive while an array made from it does. The heavy stages run as
native threads that never hold the GIL.
"""
import os
import re
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

__all__ = ["Loader", "LoaderError", "Batch"]

_DTYPES = {"uint8": "|u1", "int64": "<i8", "float32": "<f4"}
_CUDA_FEATURE = "memory:SpdlCUDA"


class LoaderError(RuntimeError):
    """A pipeline error: the element's message, with its debug detail."""

    def __init__(self, message, debug=None, source=None):
        super().__init__(message if not source else f"{source}: {message}")
        self.debug = debug
        self.source = source


def _parse_tensors(caps):
    """[(shape outermost-first, typestr), ...] from other/tensors caps."""
    s = caps.get_structure(0)
    dims = s.get_value("dimensions").split(",")
    types = s.get_value("types").split(",")
    out = []
    for d, t in zip(dims, types):
        shape = tuple(int(x) for x in reversed(d.strip().split(":")))
        out.append((shape, _DTYPES[t.strip()]))
    return out


class _MappedTensor:
    """Exposes one mapped GstMemory through the array interface.

    Holds the sample and the mapping; unmaps when the last array made from
    it is gone (numpy keeps this object as the array's base).
    """

    def __init__(self, sample, memory, shape, typestr):
        self._sample = sample
        self._memory = memory
        ok, self._info = memory.map(Gst.MapFlags.READ | Gst.MapFlags.WRITE)
        writable = ok
        if not ok:
            ok, self._info = memory.map(Gst.MapFlags.READ)
            if not ok:
                raise LoaderError("could not map a batch's memory")
        import numpy as np

        address = np.frombuffer(self._info.data, np.uint8).__array_interface__["data"][0]
        self.__array_interface__ = {
            "version": 3,
            "shape": shape,
            "typestr": typestr,
            "data": (address, not writable),
        }

    def __del__(self):
        info, self._info = getattr(self, "_info", None), None
        if info is not None:
            self._memory.unmap(info)
        # drop the memory before the sample: a buffer whose memory is still
        # referenced elsewhere is not taken back by its pool
        self._memory = None
        self._sample = None


class Batch(tuple):
    """(images, labels) plus the batch's metadata."""

    epoch = None
    indices = None
    sample = None


class Loader:
    """Iterates over the batches a pipeline ending in spdlappsink produces.

    Each ``for`` loop over the loader yields one epoch; the pipeline stays up
    between epochs. ``output`` is "numpy" (default) or "torch" (torch is
    imported only then). Under torchrun, RANK and WORLD_SIZE set spdlsrc's
    shard-index and num-shards unless the pipeline sets them.
    """

    def __init__(self, pipeline, *, sink="sink", output="numpy",
                 poll_interval=0.1):
        if output not in ("numpy", "torch"):
            raise ValueError("output must be 'numpy' or 'torch'")
        Gst.init(None)
        self.output = output
        self._poll = int(poll_interval * Gst.SECOND)
        try:
            self.pipeline = Gst.parse_launch(pipeline)
        except gi.repository.GLib.Error as e:
            raise LoaderError(f"could not build the pipeline: {e.message}") from None
        self.sink = self.pipeline.get_by_name(sink) if sink else None
        if self.sink is None:
            self.sink = self._find("spdlappsink")
        if self.sink is None:
            raise LoaderError("the pipeline has no spdlappsink "
                              "(end it with '! spdlappsink name=sink')")
        self._apply_distributed_env(pipeline)
        self._bus = self.pipeline.get_bus()
        self._started = False
        self._eos = False
        self._closed = False
        self._torch = None
        self._wait = 0.0
        self._batches = 0

    # -- set-up -------------------------------------------------------------

    def _find(self, factory):
        it = self.pipeline.iterate_recurse()
        while True:
            ok, element = it.next()
            if ok != Gst.IteratorResult.OK:
                return None
            f = element.get_factory()
            if f is not None and f.get_name() == factory:
                return element

    def _apply_distributed_env(self, launch):
        rank, world = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
        src = self._find("spdlsrc")
        if src is None or rank is None or world is None:
            return
        if not re.search(r"\bshard-index\s*=", launch):
            src.set_property("shard-index", int(rank))
        if not re.search(r"\bnum-shards\s*=", launch):
            src.set_property("num-shards", int(world))

    def start(self):
        """Starts the pipeline (done by the first iteration otherwise)."""
        if self._closed:
            raise LoaderError("the loader is closed")
        if self._started:
            return
        self._started = True
        if self.pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
            self._raise_bus_error()
            raise LoaderError("the pipeline could not start")

    # -- iteration ----------------------------------------------------------

    def __iter__(self):
        self.start()
        while not self._eos:
            started = time.perf_counter()
            sample = self.sink.emit("try-pull-batch", self._poll)
            self._wait += time.perf_counter() - started
            if sample is None:
                self._raise_bus_error()
                if self.sink.get_property("eos"):
                    self._eos = True
                continue
            if sample.get_buffer() is None:
                info = sample.get_info()
                if info is not None and info.get_name() == "spdl-epoch-end":
                    return
                continue
            self._batches += 1
            yield self._convert(sample)

    def _raise_bus_error(self):
        msg = self._bus.pop_filtered(Gst.MessageType.ERROR)
        if msg is not None:
            err, debug = msg.parse_error()
            raise LoaderError(err.message, debug, msg.src.get_name())

    def _convert(self, sample):
        buf = sample.get_buffer()
        caps = sample.get_caps()
        if caps.get_features(0).contains(_CUDA_FEATURE):
            # device memory: spdlgst.cuda makes it ready on torch's stream
            from . import cuda

            arrays = cuda.device_tensors(sample, self._import_torch(), LoaderError)
        else:
            tensors = _parse_tensors(caps)
            if buf.n_memory() != len(tensors):
                raise LoaderError(f"batch has {buf.n_memory()} memories for "
                                  f"{len(tensors)} tensors")
            arrays = [self._array(sample, buf.get_memory(i), shape, typestr)
                      for i, (shape, typestr) in enumerate(tensors)]
        batch = Batch(arrays)
        meta = buf.get_custom_meta("GstSpdlBatchMeta")
        if meta is not None:
            s = meta.get_structure()
            batch.epoch = s.get_value("epoch")
            batch.indices = list(s.get_value("indices"))
        batch.sample = sample
        return batch

    def _import_torch(self):
        if self._torch is None:
            import torch

            self._torch = torch
        return self._torch

    def _array(self, sample, memory, shape, typestr):
        import numpy as np

        arr = np.asarray(_MappedTensor(sample, memory, shape, typestr))
        if self.output == "torch":
            return self._import_torch().from_numpy(arr)
        return arr

    # -- information --------------------------------------------------------

    def __len__(self):
        """Batches per epoch, once the pipeline is listed (after start())."""
        self.start()
        self.pipeline.get_state(10 * Gst.SECOND)
        src, batch = self._find("spdlsrc"), self._find("spdlbatch")
        if src is None or batch is None:
            raise TypeError("length needs spdlsrc and spdlbatch")
        n = src.get_property("num-samples")
        size = batch.get_property("batch-size")
        return n // size if batch.get_property("drop-last") else -(-n // size)

    def skipped(self):
        """Samples skipped so far, by reason: {"unreadable": n, "truncated": n,
        ...} summed over the pipeline's spdl elements (also posted on the bus
        as "spdl-skipped" element messages at EOS)."""
        out = {}
        it = self.pipeline.iterate_recurse()
        while True:
            ok, element = it.next()
            if ok != Gst.IteratorResult.OK:
                break
            factory = element.get_factory()
            name = factory.get_name() if factory else ""
            if name == "spdlsrc":
                out["unreadable"] = out.get("unreadable", 0) + element.get_property("errors")
            elif name == "spdldecode":
                s = element.get_property("error-counts")
                for i in range(s.n_fields()):
                    key = s.nth_field_name(i)
                    if key != "total":
                        out[key] = out.get(key, 0) + s.get_value(key)
        return out

    def stats(self):
        """The elements' statistics and this loader's own wait, as a dict."""
        out = {"loader": {"batches": self._batches,
                          "wait_seconds": round(self._wait, 6)}}
        it = self.pipeline.iterate_recurse()
        while True:
            ok, element = it.next()
            if ok != Gst.IteratorResult.OK:
                break
            if element.find_property("stats") is None:
                continue
            s = element.get_property("stats")
            if s is not None:
                out[element.get_name()] = {s.nth_field_name(i): s.get_value(s.nth_field_name(i))
                                           for i in range(s.n_fields())}
        return out

    # -- teardown -----------------------------------------------------------

    def close(self):
        """Stops the pipeline; its threads are joined before this returns."""
        if not self._closed:
            self._closed = True
            self.pipeline.set_state(Gst.State.NULL)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
