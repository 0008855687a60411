# gst-spdl Python tests: run by `meson test` with the plugin path pointing at
# the build tree (see tests/meson.build).
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import gi  # noqa: E402

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)


@pytest.fixture(autouse=True)
def _standard_descriptors_stay_open():
    """The elements run in the user's process: none may close its stdin,
    stdout or stderr (a closed stdin is taken by the next file opened, and
    a child such as ffmpeg reads its keyboard commands from that file)."""
    yield
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    assert closed == [], f"file descriptors {closed} were closed by this test"


def smooth_image(rng, width, height):
    """A photo-like RGB image: smooth colour fields plus fine grain."""
    from PIL import Image

    small = rng.integers(0, 256, (max(2, height // 16), max(2, width // 16), 3),
                         dtype=np.uint8)
    img = Image.fromarray(small).resize((width, height), Image.BICUBIC)
    arr = np.asarray(img).astype(np.int16)
    arr += rng.integers(-12, 13, arr.shape, dtype=np.int16)
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))


# (width, height, PIL mode, save options) of the samples a real dataset holds
JPEG_KINDS = [
    (500, 375, "RGB", dict(quality=90, subsampling=2)),           # 4:2:0
    (375, 500, "RGB", dict(quality=95, subsampling=0)),           # 4:4:4
    (500, 333, "RGB", dict(quality=85, subsampling=1)),           # 4:2:2
    (640, 480, "RGB", dict(quality=90, progressive=True)),
    (1200, 900, "RGB", dict(quality=92)),
    (2000, 1500, "RGB", dict(quality=92)),  # large: 8x the 256 resize
    (160, 120, "RGB", dict(quality=90)),    # smaller than the crop: upscale
    (333, 333, "L", dict(quality=90)),      # grayscale
    (400, 300, "CMYK", dict(quality=90)),   # Adobe CMYK
    (500, 400, "RGB", dict(quality=75, optimize=True)),
]


@pytest.fixture
def kinds_dataset(tmp_path):
    """An ImageFolder with every kind of JPEG, two classes."""
    rng = np.random.default_rng(1)
    for i, (w, h, mode, opts) in enumerate(JPEG_KINDS * 2):
        img = smooth_image(rng, w, h).convert(mode)
        folder = tmp_path / f"class{i % 2}"
        folder.mkdir(exist_ok=True)
        img.save(folder / f"img{i:03d}.jpg", **opts)
    return tmp_path
