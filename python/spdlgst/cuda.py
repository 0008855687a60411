"""Device batches (spdlcudaupload) as torch tensors, ready on torch's stream.

spdlcudaupload does not wait for its copies: a batch leaves the element as
soon as its host-to-device copy (and normalization kernel) is queued on the
element's own CUDA stream. Its ``GstSpdlCudaMeta`` carries, per tensor, a
*ready* event recorded on that stream after the copy, and a *release* event.
For each tensor, here:

- torch's current stream (``torch.cuda.current_stream(device)`` when the
  batch is pulled) is made to wait on the ready event
  (``cudaStreamWaitEvent``): work queued on that stream sees the data, and
  neither the loader nor the training loop waits on the host;
- the tensor wraps the device memory without a copy, through
  ``__cuda_array_interface__`` version 3, whose ``stream`` is the upload
  stream (for consumers that honour it; torch does not need it, the wait
  above is done already);
- when the tensor is freed, the release event is recorded on that same
  stream: the element's next copy into that memory waits for it, so kernels
  still reading the batch on torch's stream never see it overwritten.

So: use a batch on the stream that was current when it was pulled (or make
other streams wait for that one, as with any tensor, e.g.
``other.wait_stream(...)``). The CUDA calls go through the plugin's own
library (``gst_spdl_cuda_stream_wait_event``, ``gst_spdl_cuda_event_record``),
so no CUDA Python package is needed; torch provides the stream handle only.
"""
import ctypes

from gi.repository import Gst

from .batch import (_MappedTensor, _variable_shape, parse_tensors,
                    torch_from_numpy)

# NNStreamer type names -> array interface typestr; bfloat16 has none: it
# travels as int16 and is viewed as torch.bfloat16 (host batches show it as
# uint16 to numpy, see spdlgst.batch)
_TYPESTRS = {"uint8": "|u1", "int64": "<i8", "float32": "<f4",
             "float16": "<f2", "bfloat16": "<i2", "float64": "<f8",
             "int8": "|i1", "int16": "<i2", "int32": "<i4", "uint16": "<u2",
             "uint32": "<u4", "uint64": "<u8", "bool": "|b1"}

_lib = None


def _plugin_library():
    global _lib
    if _lib is None:
        plugin = Gst.Registry.get().find_plugin("spdlcuda")
        if plugin is None or not plugin.get_filename():
            raise RuntimeError("the spdlcuda plugin is not found")
        lib = ctypes.CDLL(plugin.get_filename())
        for name in ("gst_spdl_cuda_stream_wait_event",
                     "gst_spdl_cuda_event_record"):
            fn = getattr(lib, name)
            fn.argtypes = (ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64)
            fn.restype = ctypes.c_int
        _lib = lib
    return _lib


class _DeviceMemory:
    """One tensor's device memory, alive as long as the torch tensor."""

    def __init__(self, sample, memory, shape, typestr, pointer, upload_stream,
                 device, consumer_stream, release_event):
        self._sample = sample
        self._memory = memory
        self._device = device
        self._consumer_stream = consumer_stream
        self._release_event = release_event
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": shape,
            "typestr": typestr,
            "data": (pointer, False),
            "strides": None,
            "stream": upload_stream or None,
        }

    def __del__(self):
        # the element's next copy into this memory waits for what the
        # consumer's stream queued until now
        if getattr(self, "_release_event", 0) and _lib is not None:
            _lib.gst_spdl_cuda_event_record(self._device, self._release_event,
                                            self._consumer_stream)
        self._memory = None
        self._sample = None


def device_tensors(sample, torch, error=RuntimeError):
    """The batch's tensors on its CUDA device, ready on torch's current
    stream; raises @error when the batch is not a usable device batch."""
    buf = sample.get_buffer()
    tensors = parse_tensors(sample.get_caps())
    if buf.n_memory() != len(tensors):
        raise error(f"batch has {buf.n_memory()} memories for {len(tensors)} tensors")
    meta = buf.get_custom_meta("GstSpdlCudaMeta")
    if meta is None:
        raise error("a device batch without GstSpdlCudaMeta")
    s = meta.get_structure()
    device = s.get_value("device-id")
    pointers = list(s.get_value("pointers"))
    ready = list(s.get_value("ready-events") or [])
    release = list(s.get_value("release-events") or [])
    upload_stream = s.get_value("stream") or 0
    lib = _plugin_library()
    consumer = torch.cuda.current_stream(device).cuda_stream
    out = []
    for i, (shape, type_name) in enumerate(tensors):
        if type_name not in _TYPESTRS:
            raise error(f"tensor type {type_name} is not supported")
        if not int(pointers[i]):
            # a record field's values, offsets or shapes: host memory
            import numpy as np

            memory = buf.get_memory(i)
            shape = _variable_shape(shape, _TYPESTRS[type_name], memory.size)
            out.append(torch_from_numpy(torch, np.asarray(_MappedTensor(
                sample, memory, shape, _TYPESTRS[type_name]))))
            continue
        if i < len(ready) and ready[i]:
            err = lib.gst_spdl_cuda_stream_wait_event(device, consumer, ready[i])
            if err:
                raise error(f"cudaStreamWaitEvent failed: CUDA error {err}")
        holder = _DeviceMemory(sample, buf.get_memory(i), shape,
                               _TYPESTRS[type_name], int(pointers[i]),
                               upload_stream, device, consumer,
                               release[i] if i < len(release) else 0)
        tensor = torch.as_tensor(holder, device=f"cuda:{device}")
        if type_name == "bfloat16":
            tensor = tensor.view(torch.bfloat16)
        out.append(tensor)
    return out
