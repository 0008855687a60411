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
    t = torch.from_numpy(np.array(mask))[None]
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


def _pairs(loader):
    out = []
    for images, txt, cls in loader:
        assert len(txt) == len(cls) == images.shape[0]
        out += list(zip(txt, (int(c) for c in cls)))
    return out


def test_resume_gives_the_same_image_caption_pairs(clip_shards):
    """A run resumed mid-epoch from state_dict() gives the same captions
    and labels as an uninterrupted one, each caption with its own sample's
    label (the caption names the sample: "caption é I", cls I % 5)."""
    kwargs = dict(recipe="train", batch_size=3, size=32, epochs=1, seed=11,
                  fields=("jpg", "txt", "cls"), output="numpy")
    with spdlgst.ImageLoader(clip_shards, **kwargs) as loader:
        full = _pairs(loader)
    assert len(full) == 17
    assert [t for t, _ in full] != sorted(t for t, _ in full)  # shuffled
    for txt, cls in full:
        assert int(txt.split()[2]) % 5 == cls
    with spdlgst.ImageLoader(clip_shards, **kwargs) as loader:
        it = iter(loader)
        head = []
        for _ in range(2):
            images, txt, cls = next(it)
            head += list(zip(txt, (int(c) for c in cls)))
        state = loader.state_dict()
    with spdlgst.ImageLoader(clip_shards, **kwargs) as loader:
        loader.load_state_dict(state)
        rest = _pairs(loader)
    assert head + rest == full


def _jpeg(path, rng, w=48, h=40):
    from PIL import Image

    Image.fromarray(rng.integers(0, 256, (h, w, 3), np.uint8)).save(path)


def test_csv_manifest_columns_as_fields(tmp_path):
    """A CSV manifest's columns beside the path: a caption with a quoted
    comma and a newline, a float score; paths relative to the manifest."""
    import csv

    rng = np.random.default_rng(2)
    (tmp_path / "img").mkdir()
    rows = []
    for i in range(7):
        _jpeg(tmp_path / "img" / f"{i}.jpg", rng)
        rows.append({"path": f"img/{i}.jpg",
                     "caption": f"a dog, {i}\nnext line é",
                     "score": i / 4})
    with open(tmp_path / "captions.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["path", "caption", "score"])
        w.writeheader()
        w.writerows(rows)
    got = []
    with spdlgst.ImageLoader(str(tmp_path / "captions.csv"), batch_size=3,
                             epochs=1, fields=("jpg", "caption", "score:float"),
                             output="numpy") as loader:
        for images, caption, score in loader:
            assert score.dtype == np.float64
            got += list(zip(caption, score.tolist()))
    assert got == [(r["caption"], r["score"]) for r in rows]


def test_folder_sidecars(tmp_path):
    """x.jpg with x.txt and x.seg.png beside it: the sidecars are the
    sample's fields, never samples of their own."""
    from PIL import Image

    rng = np.random.default_rng(3)
    want = {}
    for c in ("cat", "dog"):
        (tmp_path / c).mkdir()
        for i in range(3):
            _jpeg(tmp_path / c / f"{c}{i}.jpg", rng)
            (tmp_path / c / f"{c}{i}.txt").write_text(f"{c} number {i}")
            Image.fromarray(np.full((40, 48), i + 1, np.uint8)).save(
                tmp_path / c / f"{c}{i}.seg.png")
            want[f"{c} number {i}"] = (i + 1, 0 if c == "cat" else 1)
    got = {}
    with spdlgst.ImageLoader(str(tmp_path), batch_size=4, epochs=1, size=16,
                             fields=("jpg", "txt", "seg.png:label"),
                             output="numpy") as loader:
        assert len(loader) == 2
        for batch in loader:
            images, txt, seg = batch
            for i, t in enumerate(txt):
                assert np.all(seg[i] == seg[i].flat[0])
                got[t] = (int(seg[i].flat[0]), int(batch.labels[i]))
    assert got == want


V2_REFERENCE = r"""
import sys
import numpy as np
import torch
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode
from torchvision.transforms.v2 import functional as F
d = np.load(sys.argv[1])
out = []
for mask, crop, flipped in zip(d["masks"], d["crops"], d["flipped"]):
    x, y, w, h = (int(round(v)) for v in crop)
    m = F.resized_crop(tv_tensors.Mask(torch.from_numpy(mask)), y, x, h, w,
                       [32, 32], interpolation=InterpolationMode.NEAREST)
    if flipped:
        m = F.horizontal_flip(m)
    out.append(m.numpy())
np.save(sys.argv[2], np.stack(out))
"""


def test_masks_equal_torchvision_v2(clip_shards, tmp_path):
    """The same masks against torchvision 0.29's v2 functional ops on a
    tv_tensors.Mask (PyPI torch 2.x venv), given the batch's geometry."""
    import io
    import tarfile

    from PIL import Image

    py = os.path.join(os.environ.get("SPDL_TORCH2_VENV", ""), "bin", "python")
    if not os.path.exists(py) or subprocess.run(
            [py, "-c", "import torchvision.tv_tensors"],
            capture_output=True).returncode != 0:
        pytest.skip("no PyPI torch 2 venv with torchvision (tools/make-test-venv)")
    masks = {}
    for n in range(3):
        with tarfile.open(clip_shards.replace("{000..002}", f"{n:03d}")) as tar:
            for m in tar.getmembers():
                if m.name.endswith(".seg.png"):
                    masks[m.name.split(".")[0]] = np.asarray(
                        Image.open(io.BytesIO(tar.extractfile(m).read())))
    keys = sorted(masks)
    got, crops, flipped = [], [], []
    with spdlgst.ImageLoader(clip_shards, recipe="train", batch_size=5,
                             size=32, epochs=1, shuffle=False, seed=8,
                             fields=("jpg", "seg.png:label"),
                             output="numpy") as loader:
        for batch in loader:
            got += list(batch[1])
            crops += batch.geometry.crop.tolist()
            flipped += batch.geometry.flipped.tolist()
    # masks differ in size: one npz entry per sample is not needed, the
    # reference crops each from its own array
    src = tmp_path / "in.npz"
    np.savez(src, masks=np.array([masks[k] for k in keys], dtype=object),
             crops=np.array(crops), flipped=np.array(flipped))
    out = tmp_path / "out.npy"
    script = V2_REFERENCE.replace('np.load(sys.argv[1])',
                                  'np.load(sys.argv[1], allow_pickle=True)')
    subprocess.run([py, "-c", script, str(src), str(out)], check=True)
    np.testing.assert_array_equal(np.stack(got), np.load(out))
    assert 0 < sum(flipped) < len(flipped)


def test_video_and_audio_loaders_take_fields(tmp_path):
    """A clip with its caption from a CSV manifest (video-text), an audio
    clip with its transcript and a score from JSON Lines: the tuple in the
    order asked, each value with its own file."""
    import audiogen
    import videogen

    with open(tmp_path / "clips.csv", "w") as f:
        f.write("video,caption\n")
        for i in range(3):
            videogen.make(tmp_path / f"v{i}.mp4", "64x48", 25, 1.0,
                          ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
            f.write(f'v{i}.mp4,"clip {i}, a test"\n')
    got = []
    with spdlgst.VideoLoader(str(tmp_path / "clips.csv"), batch_size=2,
                             frames=4, size=32, resize=40, epochs=1,
                             shuffle=False, fields=("caption", "mp4"),
                             output="numpy") as loader:
        for caption, clips in loader:
            assert clips.shape[1:3] == (4, 3)
            got += caption
    assert got == [f"clip {i}, a test" for i in range(3)]

    with open(tmp_path / "speech.jsonl", "w") as f:
        for i in range(4):
            audiogen.make(str(tmp_path / f"a{i}.wav"), "speech", 16000, 0.5,
                          number=i)
            f.write(json.dumps({"audio_filepath": f"a{i}.wav",
                                "text": f"utterance {i}", "score": i * 0.5})
                    + "\n")
    rows = []
    with spdlgst.AudioLoader(str(tmp_path / "speech.jsonl"), batch_size=3,
                             duration=0.25, epochs=1, shuffle=False,
                             fields=("wav", "text", "score:float"),
                             output="numpy") as loader:
        for audio, text, score in loader:
            assert audio.shape[1:] == (1, 4000)
            rows += list(zip(text, score.tolist()))
    assert rows == [(f"utterance {i}", i * 0.5) for i in range(4)]


def test_missing_and_bad_fields_by_policy(tmp_path, caplog):
    """A sidecar absent, or not UTF-8: skip drops the sample with its
    reason; empty delivers "" (a bad value with a warning naming the file
    and field: data replaced is never silent); error stops the loader."""
    rng = np.random.default_rng(6)
    (tmp_path / "c").mkdir()
    for i in range(5):
        _jpeg(tmp_path / "c" / f"s{i}.jpg", rng)
    (tmp_path / "c" / "s0.txt").write_text("zero")
    (tmp_path / "c" / "s1.txt").write_bytes(b"bad \xff\xfe text")
    (tmp_path / "c" / "s3.txt").write_text("three")
    kw = dict(batch_size=8, epochs=1, size=16, output="numpy")

    with spdlgst.ImageLoader(str(tmp_path), fields=("jpg", "txt"), **kw) as loader:
        texts = [t for _, txt in loader for t in txt]
        skipped = loader.skipped()
    assert texts == ["zero", "three"]
    assert {k: v for k, v in skipped.items() if v} == {"missing-field": 2,
                                                      "bad-field": 1}

    caplog.clear()
    with spdlgst.ImageLoader(str(tmp_path), fields=("jpg", "txt:empty"),
                             **kw) as loader:
        texts = [t for _, txt in loader for t in txt]
    assert texts == ["zero", "", "", "three", ""]
    filled = [r.getMessage() for r in caplog.records
              if "empty value" in r.getMessage()]
    assert len(filled) == 1 and "s1.txt" not in filled[0] and "s1" in filled[0]
    assert "not UTF-8" in filled[0]

    with pytest.raises(spdlgst.LoaderError, match="txt"):
        with spdlgst.ImageLoader(str(tmp_path), fields=("jpg", "txt:error"),
                                 **kw) as loader:
            list(loader)


def test_fields_argument_errors(tmp_path):
    """fields= is checked before any pipeline is built: each error names
    the field and why."""
    for bad, match in [(("jpg:error", "txt"), "media item"),
                       (("jpg", "txt", "txt"), "twice"),
                       (("jpg", "txt:strin"), "no kind"),
                       (("jpg", "a,b"), "one field per item"),
                       (("jpg", ";png"), "empty name"),
                       ((1, 2), "tuple of field names")]:
        with pytest.raises((ValueError, TypeError), match=match):
            spdlgst.ImageLoader.launch_line_for(str(tmp_path), fields=bad)
    line = spdlgst.ImageLoader.launch_line_for(
        str(tmp_path / "x-{0..1}.tar"), fields=("txt ; text", " jpg ; png ", "cls"))
    assert 'fields="txt;text,cls"' in line and 'image-key="jpg;png"' in line


def test_json_paths_equal_python_json(clip_shards):
    """json#PATH fields are json.loads(member)[...] per sample, typed; the
    batch names each by its whole spec; a path some samples lack (fewer
    than 3 tags; a null) is "" under empty and drops them under skip."""
    ref = _reference(clip_shards)
    fields = ("jpg", "json#id:int", "json#score:float", "json#nested.a.0:int",
              "json#tags.2:empty", "json#nested.a.1:json",
              "json#nested.a.1.b:float:empty")
    got = []
    loader = spdlgst.ImageLoader(clip_shards, batch_size=5, epochs=1,
                                 fields=fields, output="numpy")
    with loader:
        for batch in loader:
            _, ids, score, a0, tag2, a1, b = batch
            assert ids.dtype == np.int64 and score.dtype == np.float64
            assert batch["json#id"] is batch.fields["json#id"]
            for i in range(len(ids)):
                got.append((int(ids[i]), float(score[i]), int(a0[i]), tag2[i],
                            a1[i], float(b[i])))
    want = [(r["json"]["id"], r["json"]["score"],
             r["json"]["nested"]["a"][0],
             r["json"]["tags"][2] if len(r["json"]["tags"]) > 2 else "",
             r["json"]["nested"]["a"][1]) for r in ref]
    assert len(got) == len(want) == 17
    assert [g[:5] for g in got] == want
    assert all(np.isnan(g[5]) for g in got)
    assert any(w[3] == "" for w in want) and any(w[3] for w in want)

    with spdlgst.ImageLoader(clip_shards, batch_size=5, epochs=1,
                             fields=("jpg", "json#tags.2"),
                             output="numpy") as loader:
        tags = [t for _, tag in loader for t in tag]
        skipped = loader.skipped()
    assert tags == [r["json"]["tags"][2] for r in ref
                    if len(r["json"]["tags"]) > 2]
    assert skipped.get("missing-field") == 17 - len(tags)

    # a value of another type is bad, named with its path
    with pytest.raises(spdlgst.LoaderError, match=r"json#tags\" at \"tags\" is an array, not an integer"):
        with spdlgst.ImageLoader(clip_shards, batch_size=5, epochs=1,
                                 fields=("jpg", "json#tags:int:error"),
                                 output="numpy") as loader:
            list(loader)
