"""normalize(): spdlbatch's mean/std on a batch the training loop holds.

For augmentation of its own, a loader hands out uint8 batches; the loop
augments them (on the CPU or the GPU) and then normalizes with this, which
gives what ``dtype=..., mean=..., std=...`` would have given on the same
pixels: ``(x / 255 - mean) / std`` per channel, computed as spdlbatch
computes it (``x * (1 / (255 std)) + (-mean / std)`` in float32, then
rounded to the dtype asked for).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Optional, Union

from .recipes import IMAGENET_MEAN, IMAGENET_STD, _dtype, _floats

if TYPE_CHECKING:
    import numpy
    import torch

_LAYOUT_LETTERS = set("NTCHW")

# A float batch is taken as in [0, 1]; above this it is most likely 0..255
# values (``x.float()`` of a uint8 batch), which would give values up to
# about 1100 out: a margin over 1 leaves room for augmentations that
# overshoot a little (added noise, unclamped brightness).
FLOAT_MAX = 1.5


def _channel_dim(layout: str, ndim: int) -> int:
    """The channel dimension of an array of @ndim dimensions in @layout
    ("NCHW", "nhwc", "TCHW", "CTHW", "THWC", "CHW", ...): the batch's
    own dimension may be left out of it (a VideoLoader's "TCHW" batch is
    [B, T, C, H, W])."""
    if not isinstance(layout, str) or not layout or \
            not set(layout.upper()) <= _LAYOUT_LETTERS or \
            layout.upper().count("C") != 1 or \
            len(set(layout.upper())) != len(layout):
        raise ValueError(f"layout must name the dimensions, one 'C' among "
                         f"N, T, H, W ('NCHW', 'NHWC', 'TCHW', ...), not "
                         f"{layout!r}")
    extra = ndim - len(layout)
    if extra not in (0, 1):
        raise ValueError(f"an array of {ndim} dimensions is not in layout "
                         f"{layout!r} (with or without a batch dimension)")
    return extra + layout.upper().index("C")


def normalize(images: Union["torch.Tensor", "numpy.ndarray"], mean: Any = "imagenet",
              std: Any = "imagenet", *, layout: str = "NCHW",
              dtype: Union[str, "torch.dtype", "numpy.dtype", type] = "float32",
              out: Optional[Union["torch.Tensor", "numpy.ndarray"]] = None):
    """``(images / 255 - mean) / std`` per channel, as a new float array.

    ``images``: uint8, a torch tensor on any device (CPU or CUDA: computed
    there, no copy between them) or a numpy array; or float in [0, 1] (what
    augmentations made for float images return): ``(images - mean) / std``.
    A float batch of 0..255 values (``x.float()`` of a uint8 batch) is an
    error: divide it by 255 first, or pass the uint8 batch. That is
    checked on every CPU batch (its largest value above 1.5); on a CUDA
    device only on the first float batch, as a check per batch would wait
    for the GPU each time. A tensor that requires grad gives a result
    that does too (the gradient goes through; ``out`` then takes a copy).
    ``mean``, ``std``: one
    value or one per channel, in units of x / 255, or "imagenet"
    (torchvision's values), both needed as for torchvision's Normalize.
    ``layout``: where the channels are, "NCHW" (default), "NHWC", or a
    VideoLoader's "TCHW", "CTHW", "THWC" (the batch's leading dimension
    may be left out). ``dtype``: "float32" (default), "float16" or
    "bfloat16" (torch only), or the torch/numpy dtype. ``out``: an array of
    that dtype and shape to write into instead.

    The result equals the loader's own normalization of the same pixels
    (``ImageLoader(dtype=..., mean=..., std=...)``): one multiply-add per
    value in float32, rounded once to the dtype. The per-channel constants
    are made once per device and values, so that a CUDA batch is not held
    up by a copy of them from the host at each call.
    """
    if (mean is None) != (std is None):
        raise ValueError("mean and std go together (as torchvision's "
                         "Normalize): give both")
    means = _floats("mean", mean, IMAGENET_MEAN) or (0.0,)
    stds = _floats("std", std, IMAGENET_STD) or (1.0,)
    if 0.0 in stds:
        raise ValueError("std must not be 0")
    name = _dtype(dtype)
    if name == "uint8":
        raise ValueError("dtype must be a float dtype ('float32', 'float16' "
                         "or 'bfloat16')")
    kind = str(getattr(images, "dtype", "")).rsplit(".", 1)[-1]
    if kind not in ("uint8", "float32", "float16", "bfloat16", "float64"):
        raise TypeError(f"images must be uint8 (a loader's dtype='uint8' "
                        f"batch) or float in [0, 1], not "
                        f"{getattr(images, 'dtype', type(images).__name__)}")
    unit = 255.0 if kind == "uint8" else 1.0
    c = _channel_dim(layout, images.ndim)
    channels = images.shape[c]
    for what, values in (("mean", means), ("std", stds)):
        if len(values) not in (1, channels):
            raise ValueError(f"{what} has {len(values)} values for images "
                             f"of {channels} channels (dimension {c} in "
                             f"layout {layout!r})")
    n = max(len(means), len(stds))
    means, stds = means * (n // len(means)), stds * (n // len(stds))
    # in double, so that the float32 constants are spdlbatch's
    scale = tuple(1.0 / (unit * s) for s in stds)
    offset = tuple(-m / s for m, s in zip(means, stds))
    shape = [1] * images.ndim
    shape[c] = -1
    if type(images).__module__.startswith("numpy"):
        return _normalize_numpy(images, scale, offset, shape, name, out)
    return _normalize_torch(images, scale, offset, shape, name, out)


def _check_float_range(largest: float) -> None:
    if largest > FLOAT_MAX:
        raise ValueError(f"float images are taken as in [0, 1], and this "
                         f"batch holds {largest:g}: for 0..255 values "
                         f"(x.float() of a uint8 batch) divide by 255 first, "
                         f"or pass the uint8 batch itself")


# devices whose first float batch was checked (a check per CUDA batch
# would wait for the GPU)
_float_checked = set()


@functools.lru_cache(maxsize=64)
def _constants(device, scale: tuple, offset: tuple):
    """The float32 scale and offset tensors on @device, made once: on a
    CUDA device, torch.tensor() copies from pageable host memory and
    waits for the stream, which per batch would hold up the GPU. Normal
    tensors even when first made under torch.inference_mode (a validation
    pass): a later input that requires grad saves them for backward."""
    import torch

    with torch.inference_mode(False):
        return (torch.tensor(scale, dtype=torch.float32, device=device),
                torch.tensor(offset, dtype=torch.float32, device=device))


def _normalize_torch(images, scale, offset, shape, name, out):
    import torch

    dtype = getattr(torch, name)
    if images.is_floating_point() and images.numel() and (
            images.device.type == "cpu" or
            images.device not in _float_checked):
        _check_float_range(float(images.detach().max()))
        if images.device.type != "cpu":
            _float_checked.add(images.device)
    scale_t, offset_t = _constants(images.device, scale, offset)
    scale_t, offset_t = scale_t.view(shape), offset_t.view(shape)
    if out is not None and (out.dtype != dtype or out.shape != images.shape
                            or out.device != images.device):
        raise ValueError(f"out must be {name} {tuple(images.shape)} on "
                         f"{images.device}, not {out.dtype} "
                         f"{tuple(out.shape)} on {out.device}")
    if images.requires_grad and torch.is_grad_enabled():
        # the same arithmetic without out=, which autograd refuses
        value = torch.mul(images, scale_t)
        if dtype == torch.float32:
            value = value.to(dtype)
        value = value.add_(offset_t).to(dtype)
        return value if out is None else out.copy_(value)
    if dtype == torch.float32:
        result = out if out is not None else torch.empty(
            images.shape, dtype=dtype, device=images.device)
        torch.mul(images, scale_t, out=result)
        return result.add_(offset_t)
    value = torch.mul(images, scale_t).add_(offset_t)
    if out is None:
        return value.to(dtype)
    return out.copy_(value)


def _normalize_numpy(images, scale, offset, shape, name, out):
    import numpy as np

    if name == "bfloat16":
        raise ValueError("numpy has no bfloat16: use a torch tensor "
                         "(torch.from_numpy) or dtype='float16'")
    if images.dtype.kind == "f" and images.size:
        _check_float_range(float(images.max()))
    scale_a = np.asarray(scale, dtype=np.float32).reshape(shape)
    offset_a = np.asarray(offset, dtype=np.float32).reshape(shape)
    if out is not None and (out.dtype != np.dtype(name) or
                            out.shape != images.shape):
        raise ValueError(f"out must be {name} {images.shape}, not "
                         f"{out.dtype} {out.shape}")
    if name == "float32":
        result = np.multiply(images, scale_a, out=out, dtype=np.float32)
        result += offset_a
        return result
    value = np.multiply(images, scale_a, dtype=np.float32)
    value += offset_a
    if out is None:
        return value.astype(name)
    out[...] = value
    return out
