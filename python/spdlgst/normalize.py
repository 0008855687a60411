"""normalize(): spdlbatch's mean/std on a batch the training loop holds.

For augmentation of its own, a loader hands out uint8 batches; the loop
augments them (on the CPU or the GPU) and then normalizes with this, which
gives what ``dtype=..., mean=..., std=...`` would have given on the same
pixels: ``(x / 255 - mean) / std`` per channel, computed as spdlbatch
computes it (``x * (1 / (255 std)) + (-mean / std)`` in float32, then
rounded to the dtype asked for).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

from .recipes import IMAGENET_MEAN, IMAGENET_STD, _dtype, _floats

if TYPE_CHECKING:
    import numpy
    import torch

_LAYOUT_LETTERS = set("NTCHW")


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
    augmentations made for float images return): ``(images - mean) / std``. ``mean``, ``std``: one
    value or one per channel, in units of x / 255, or "imagenet"
    (torchvision's values), both needed as for torchvision's Normalize.
    ``layout``: where the channels are, "NCHW" (default), "NHWC", or a
    VideoLoader's "TCHW", "CTHW", "THWC" (the batch's leading dimension
    may be left out). ``dtype``: "float32" (default), "float16" or
    "bfloat16" (torch only), or the torch/numpy dtype. ``out``: an array of
    that dtype and shape to write into instead.

    The result equals the loader's own normalization of the same pixels
    (``ImageLoader(dtype=..., mean=..., std=...)``): one multiply-add per
    value in float32, rounded once to the dtype.
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
    scale = [1.0 / (unit * s) for s in stds]
    offset = [-m / s for m, s in zip(means, stds)]
    shape = [1] * images.ndim
    shape[c] = -1
    if type(images).__module__.startswith("numpy"):
        return _normalize_numpy(images, scale, offset, shape, name, out)
    return _normalize_torch(images, scale, offset, shape, name, out)


def _normalize_torch(images, scale, offset, shape, name, out):
    import torch

    dtype = getattr(torch, name)
    scale_t = torch.tensor(scale, dtype=torch.float32,
                           device=images.device).view(shape)
    offset_t = torch.tensor(offset, dtype=torch.float32,
                            device=images.device).view(shape)
    if out is not None and (out.dtype != dtype or out.shape != images.shape
                            or out.device != images.device):
        raise ValueError(f"out must be {name} {tuple(images.shape)} on "
                         f"{images.device}, not {out.dtype} "
                         f"{tuple(out.shape)} on {out.device}")
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
