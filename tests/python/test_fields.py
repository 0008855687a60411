# gst-spdl: samples with fields beside the image (docs/record.md), through
# the Python loaders, against webdataset 1.0.2's decoded values and
# torchvision's nearest resized crop.
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from gi.repository import Gst  # noqa: F401 (spdlgst's Gst, initialized)

import spdlgst

VENV = os.environ.get("SPDL_TEST_VENV", "")
VENV_PY = os.path.join(VENV, "bin", "python")

WRITER = r"""
import io, json, sys
import numpy as np
import webdataset as wds
from PIL import Image

out, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(5)
with wds.ShardWriter(out + "/clip-%03d.tar", maxcount=7) as sink:
    for i in range(n):
        w, h = int(rng.integers(40, 90)), int(rng.integers(40, 90))
        img = Image.fromarray(rng.integers(0, 256, (h, w, 3), np.uint8))
        b = io.BytesIO(); img.save(b, "JPEG", quality=90)
        mask = Image.fromarray((np.arange(w * h).reshape(h, w) % 7).astype(np.uint8), "P")
        mask.putpalette([v for c in range(256) for v in (c, 255 - c, c // 2)])
        m = io.BytesIO(); mask.save(m, "PNG")
        words = ["w%d" % rng.integers(0, 1000) for _ in range(rng.integers(0, 30))]
        s = {"__key__": "k%04d" % i, "jpg": b.getvalue(),
             "txt": "caption é %d " % i + " ".join(words),
             "json": {"id": i, "tags": words[:3], "score": i / 7,
                      "nested": {"a": [1, {"b": None}]}},
             "cls": i % 5,
             "npy": rng.standard_normal((2, 3)).astype(np.float32),
             "seg.png": m.getvalue()}
        sink.write(s)
"""

READER = r"""
import json, sys
import numpy as np
import webdataset as wds
ds = (wds.WebDataset(sys.argv[1], shardshuffle=False, empty_check=False)
      .decode("rgb8").to_tuple("__key__", "txt", "json", "cls", "npy"))
for key, txt, js, cls, arr in ds:
    print(json.dumps({"key": key, "txt": txt, "json": js, "cls": cls,
                      "npy": arr.tolist(), "dtype": str(arr.dtype)}))
"""


def _venv():
    if not os.path.exists(VENV_PY):
        pytest.skip("no test venv with webdataset (tools/make-test-venv)")
    return VENV_PY


@pytest.fixture(scope="module")
def clip_shards(tmp_path_factory):
    out = tmp_path_factory.mktemp("clip")
    subprocess.run([_venv(), "-c", WRITER, str(out), "17"], check=True)
    return str(out / "clip-{000..002}.tar")


def _reference(pattern):
    done = subprocess.run([_venv(), "-c", READER, pattern], check=True,
                          capture_output=True, text=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_fields_equal_webdataset(clip_shards):
    """Captions, JSON, ints and npy arrays equal webdataset's .decode("rgb8")
    / to_tuple values, sample for sample, in order."""
    ref = _reference(clip_shards)
    assert len(ref) == 17
    got = []
    loader = spdlgst.ImageLoader(clip_shards, batch_size=5, epochs=1,
                                 fields=("jpg", "txt", "json", "cls", "npy"),
                                 output="numpy")
    with loader:
        for images, txt, js, cls, arr in loader:
            assert images.shape[0] == len(txt) == len(js) == len(cls)
            assert isinstance(txt, list) and all(isinstance(t, str) for t in txt)
            assert cls.dtype == np.int64
            for i in range(len(txt)):
                got.append({"txt": txt[i], "json": js[i], "cls": int(cls[i]),
                            "npy": np.asarray(arr[i]).tolist(),
                            "dtype": str(np.asarray(arr[i]).dtype)})
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g["txt"] == r["txt"]
        assert g["json"] == r["json"]
        assert g["cls"] == r["cls"]
        assert g["npy"] == r["npy"] and g["dtype"] == r["dtype"]


def test_batch_by_name_and_default_tuple(clip_shards):
    """batch["txt"] and batch.fields name the fields; without fields= a
    batch stays (images, labels)."""
    loader = spdlgst.ImageLoader(clip_shards, batch_size=4, epochs=1,
                                 fields=("jpg", "txt", "cls"), output="torch")
    with loader:
        batch = next(iter(loader))
        assert batch["txt"] == batch[1] == batch.fields["txt"]
        assert batch["cls"].tolist() == [0, 1, 2, 3]
        assert tuple(batch[0].shape) == (4, 3, 224, 224)
    loader = spdlgst.ImageLoader(clip_shards, batch_size=4, epochs=1,
                                 output="torch")
    with loader:
        batch = next(iter(loader))
        assert len(batch) == 2
        images, labels = batch
        assert labels.tolist() == [0, 1, 2, 3]


def _nearest_crop(mask, geometry, size):
    """torchvision's F.resized_crop(mask, top, left, h, w, size, NEAREST),
    then F.hflip where flipped."""
    import torch
    import torchvision.transforms.functional as F
    from torchvision.transforms import InterpolationMode

    x, y, w, h = geometry["crop"]
    t = torch.from_numpy(np.ascontiguousarray(mask))[None]
    out = F.resized_crop(t, int(round(y)), int(round(x)), int(round(h)),
                         int(round(w)), list(size),
                         interpolation=InterpolationMode.NEAREST)
    if geometry["flipped"]:
        out = F.hflip(out)
    return out[0].numpy()


def test_masks_equal_torchvision_resized_crop(clip_shards):
    """A label field goes through each sample's random resized crop and
    flip, nearest, palette indices kept: equal to torchvision's
    F.resized_crop(NEAREST) given the batch's own geometry."""
    import io
    import tarfile

    from PIL import Image

    masks = {}
    for n in range(3):
        path = clip_shards.replace("{000..002}", f"{n:03d}")
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                if m.name.endswith(".seg.png"):
                    masks[m.name.split(".")[0]] = np.asarray(
                        Image.open(io.BytesIO(tar.extractfile(m).read())))
    keys = sorted(masks)
    loader = spdlgst.ImageLoader(clip_shards, recipe="train", batch_size=4,
                                 size=32, epochs=1, shuffle=False, seed=3,
                                 fields=("jpg", "seg.png:label"),
                                 output="numpy")
    seen = flipped = 0
    with loader:
        for batch in loader:
            images, seg = batch
            assert seg.dtype == np.uint8 and seg.shape == (len(images), 32, 32)
            geo = batch.geometry
            for i in range(len(images)):
                g = {"crop": [float(v) for v in geo.crop[i]],
                     "flipped": bool(geo.flipped[i])}
                ref = _nearest_crop(masks[keys[seen]], g, (32, 32))
                np.testing.assert_array_equal(seg[i], ref)
                seen += 1
                flipped += g["flipped"]
    assert seen == 17
    assert 0 < flipped < 17
