"""Batches of samples with fields (docs/record.md) as Python sees them:
strings, JSON, bytes, npy arrays (stacked or ragged), numbers, label maps
and each sample's geometry, in numpy and torch, under Debian's python3
(torch 1.13, numpy 1.x) and the PyPI venvs (torch 2.x, numpy 2.x).

The samples are made here as spdlsrc and spdldecode leave them: an appsrc
pushes images whose sample meta holds the record's values and geometry
(set through the plugin's own helpers, as a C element does), with the
record's description in the caps; spdlbatch collates them."""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import ctypes, io, json, sys
import gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst, GLib, GObject
Gst.init(None)
import numpy as np
from spdlgst import batch as B

FIELDS = ("cls:int:skip,txt:string:skip,meta.json:json:empty,"
          "bin:bytes:skip,emb.npy:npy:empty,pose.npy:npy:skip,"
          "seg.png:label:skip")
N = 5
CAPTIONS = ["a cat", "", "na\u00efve \u2603", "a dog on a mat", "x"]

lib = ctypes.CDLL(Gst.Registry.get().find_plugin("spdl").get_filename())
lib.gst_spdl_buffer_add_sample_meta.argtypes = (
    ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint,
    ctypes.c_char_p)
lib.gst_spdl_buffer_set_record.argtypes = (ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_uint)
lib.gst_spdl_buffer_set_sample_geometry.argtypes = (ctypes.c_void_p,
                                                    ctypes.c_void_p)
gobject = ctypes.CDLL("libgobject-2.0.so.0")
gobject.g_value_init.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
gobject.g_value_init.restype = ctypes.c_void_p
gobject.g_value_copy.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
gobject.g_value_unset.argtypes = (ctypes.c_void_p,)
GVALUE = 24


class Geometry(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double),
                ("width", ctypes.c_double), ("height", ctypes.c_double),
                ("flipped", ctypes.c_int), ("source_width", ctypes.c_uint),
                ("source_height", ctypes.c_uint)]


def npy(arr):
    out = io.BytesIO()
    np.save(out, arr)
    return out.getvalue()


def label_map(i):
    data = (1000 * i + np.arange(8, dtype="<u2")).tobytes()
    caps = Gst.Caps.from_string("video/x-raw,format=GRAY16_LE,width=4,height=2")
    return Gst.Sample.new(Gst.Buffer.new_wrapped(data), caps, None, None)


def values(i):
    return [GObject.Value(GObject.TYPE_INT64, 1000 + i),
            GObject.Value(GObject.TYPE_STRING, CAPTIONS[i]),
            GObject.Value(GObject.TYPE_STRING, json.dumps({"i": i, "k": [i]})),
            GObject.Value(GLib.Bytes.__gtype__, GLib.Bytes.new(bytes([i, 0, 255]))),
            GObject.Value(GLib.Bytes.__gtype__, GLib.Bytes.new(
                b"" if i == 3 else
                npy(np.arange((i % 2 + 1) * 2, dtype="<f4").reshape(-1, 2) + 10 * i))),
            GObject.Value(GLib.Bytes.__gtype__, GLib.Bytes.new(
                npy(np.array([i, i + 0.25, i + 0.5], "<f8")))),
            GObject.Value(Gst.Sample.__gtype__, label_map(i))]


def sample(i):
    buf = Gst.Buffer.new_wrapped(bytes([i]) * 24)
    ptr = hash(buf)
    lib.gst_spdl_buffer_add_sample_meta(ptr, 100 + i, i, 0, b"s%d.jpg" % i)
    vals = values(i)
    array = ctypes.create_string_buffer(GVALUE * len(vals))
    base = ctypes.addressof(array)
    for k, v in enumerate(vals):
        # a GValue's first member is its GType
        g_type = ctypes.c_size_t.from_address(hash(v)).value
        gobject.g_value_init(base + GVALUE * k, g_type)
        gobject.g_value_copy(hash(v), base + GVALUE * k)
    lib.gst_spdl_buffer_set_record(ptr, base, len(vals))
    for k in range(len(vals)):
        gobject.g_value_unset(base + GVALUE * k)
    g = Geometry(i, 2 * i, 10, 5, i % 2, 40, 30)
    lib.gst_spdl_buffer_set_sample_geometry(ptr, ctypes.byref(g))
    return buf


pipe = Gst.parse_launch("appsrc name=src ! spdlbatch batch-size=3 ! "
                        "appsink name=sink sync=false max-buffers=0")
src = pipe.get_by_name("src")
src.set_property("caps", Gst.Caps.from_string(
    "video/x-raw,format=RGB,width=4,height=2,framerate=0/1,"
    f'fields=(string)"{FIELDS}"'))
pipe.set_state(Gst.State.PLAYING)
for i in range(N):
    assert src.emit("push-buffer", sample(i)) == Gst.FlowReturn.OK
src.emit("end-of-stream")
samples = []
sink = pipe.get_by_name("sink")
while True:
    s = sink.emit("pull-sample")
    if s is None:
        break
    samples.append(s)
msg = pipe.get_bus().pop_filtered(Gst.MessageType.ERROR)
assert msg is None, msg.parse_error()


def plain(v):
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, (bytes, str, int, float, dict)) or v is None:
        return list(v) if isinstance(v, bytes) else v
    return {"dtype": str(v.dtype), "shape": list(v.shape),
            "values": v.tolist()}


torch = None
if sys.argv[1] == "torch":
    import torch
out = []
for s in samples:
    batch = B.sample_batch(s, B.host_tensors(s, torch))
    images, labels = batch
    out.append({"tuple": len(batch), "images": list(images.shape),
                "labels": labels.tolist(),
                "fields": {k: plain(v) for k, v in batch.fields.items()},
                "txt": batch["txt"],
                "geometry": {k: plain(v) for k, v in
                             batch.geometry._asdict().items()},
                "ragged": type(batch["emb.npy"]).__name__})
print(json.dumps({"torch": torch.__version__ if torch else None,
                  "batches": out}))
pipe.set_state(Gst.State.NULL)
"""


def run(python, output):
    res = subprocess.run([python, "-c", SCRIPT, output], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.splitlines()[-1])


def interpreters():
    out = [("debian", sys.executable)]
    for name, var in (("torch2", "SPDL_TORCH2_VENV"),
                      ("numpy2", "SPDL_NUMPY2_VENV")):
        python = os.path.join(os.environ.get(var, ""), "bin", "python")
        if os.environ.get(var) and os.path.exists(python):
            out.append((name, python))
    return out


def check(got, output, torch_version):
    assert len(got["batches"]) == 2
    for batch, samples in zip(got["batches"], ([0, 1, 2], [3, 4])):
        n = len(samples)
        # the tuple stays the images and labels
        assert batch["tuple"] == 2
        assert batch["images"] == [n, 2, 4, 3]
        assert batch["labels"] == samples
        f = batch["fields"]
        assert f["cls"]["values"] == [1000 + i for i in samples]
        assert f["cls"]["dtype"].endswith("int64")
        captions = ["a cat", "", "na\u00efve \u2603", "a dog on a mat", "x"]
        assert f["txt"] == [captions[i] for i in samples]
        assert batch["txt"] == f["txt"]
        assert f["meta.json"] == [{"i": i, "k": [i]} for i in samples]
        assert f["bin"] == [[i, 0, 255] for i in samples]
        # arrays of one shape are stacked; of several, a list of views
        assert f["pose.npy"]["shape"] == [n, 3]
        assert f["pose.npy"]["dtype"].endswith("float64")
        assert f["pose.npy"]["values"] == [[i, i + 0.25, i + 0.5] for i in samples]
        assert batch["ragged"] == "list"
        emb = f["emb.npy"]
        for i, arr in zip(samples, emb):
            rows = 0 if i == 3 else i % 2 + 1
            assert arr["shape"] == ([0] if rows == 0 else [rows, 2])
            assert arr["dtype"].endswith("float32")
            flat = [x for row in arr["values"] for x in row] if rows else []
            assert flat == [10 * i + k for k in range(rows * 2)]
        seg = f["seg.png"]
        assert seg["shape"] == [n, 2, 4]
        if output == "numpy":
            assert seg["dtype"] == "uint16"
        elif torch_version.startswith("1."):
            assert seg["dtype"] == "torch.int32"
        else:
            assert seg["dtype"] == "torch.uint16"
        assert seg["values"] == [[[1000 * i + 4 * y + x for x in range(4)]
                                  for y in range(2)] for i in samples]
        g = batch["geometry"]
        assert g["crop"]["shape"] == [n, 4]
        assert g["crop"]["values"] == [[i, 2 * i, 10, 5] for i in samples]
        assert g["flipped"]["values"] == [bool(i % 2) for i in samples]
        assert g["source_size"]["values"] == [[40, 30]] * n


@pytest.mark.parametrize("name,python", interpreters())
@pytest.mark.parametrize("output", ["numpy", "torch"])
def test_batch_fields(name, python, output):
    if output == "torch" and name == "numpy2":
        pytest.skip("the numpy 2 venv has Debian's torch 1.13, built for numpy 1")
    got = run(python, output)
    check(got, output, got["torch"] or "")


# -- the whole chain: spdlsrc's sidecars, spdldecode, spdlbatch, the loader

E2E = r"""
import json, sys
import numpy as np
import spdlgst

root, output = sys.argv[1], sys.argv[2]
line = (f"spdlsrc location={root} fields=txt,json,npy,seg.png:label "
        "! spdldecode width=12 height=10 ! spdlbatch batch-size=4 ! "
        "spdlappsink name=sink")
out = []
with spdlgst.Loader(line, output=output) as loader:
    for batch in loader:
        images, labels = batch
        f = batch.fields
        npy = f["npy"]
        out.append({
            "indices": [int(i) for i in batch.indices],
            "labels": [int(x) for x in np.asarray(labels)],
            "txt": f["txt"], "json": f["json"],
            "npy": [np.asarray(a).tolist() for a in npy],
            "npy_dtype": str(npy.dtype) if hasattr(npy, "dtype") else "list",
            "seg": np.asarray(f["seg.png"]).tolist(),
            "seg_dtype": str(f["seg.png"].dtype),
            "crop": np.asarray(batch.geometry.crop).tolist(),
            "flipped": np.asarray(batch.geometry.flipped).tolist(),
            "size": np.asarray(batch.geometry.source_size).tolist(),
            "images": list(images.shape)})
print(json.dumps(out))
"""


def make_captions(root, n=6):
    """A folder of images with sidecars, as caption and segmentation
    exports lay them out: x.jpg, x.txt, x.json, x.npy, x.seg.png"""
    from PIL import Image
    import numpy as np

    rng = np.random.default_rng(1)
    folder = root / "c0"
    folder.mkdir(parents=True)
    expected = {}
    for i in range(n):
        stem = folder / f"x{i}"
        img = rng.integers(0, 256, (10, 12, 3), dtype=np.uint8)
        Image.fromarray(img).save(f"{stem}.jpg", quality=95)
        caption = ["a cat", "", "na\u00efve \u2603", "a dog", "x", "y z"][i]
        (folder / f"x{i}.txt").write_text(caption, encoding="utf-8")
        (folder / f"x{i}.json").write_text(json.dumps({"i": i, "tags": ["a"] * i}))
        arr = np.arange(3, dtype=np.float32) + i
        np.save(folder / f"x{i}.npy", arr)
        seg = rng.integers(0, 5, (10, 12), dtype=np.uint8)
        Image.fromarray(seg, mode="L").save(folder / f"x{i}.seg.png")
        expected[f"x{i}"] = (caption, {"i": i, "tags": ["a"] * i},
                             arr.tolist(), seg.tolist())
    return expected


@pytest.mark.parametrize("output", ["numpy", "torch"])
def test_fields_through_the_chain(tmp_path, output):
    """spdlsrc's sidecar fields reach the loader's batches, each with its
    own image: captions, JSON objects, npy arrays (stacked: one shape),
    label maps, and the geometry (a stretch: the whole image)"""
    expected = make_captions(tmp_path / "ds")
    res = subprocess.run([sys.executable, "-c", E2E, str(tmp_path / "ds"),
                          output], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    batches = json.loads(res.stdout.splitlines()[-1])
    assert [len(b["indices"]) for b in batches] == [4, 2]
    seen = 0
    for b in batches:
        n = len(b["indices"])
        assert b["images"][0] == n
        assert b["npy_dtype"] in ("float32", "torch.float32")
        assert b["seg_dtype"] in ("uint8", "torch.uint8")
        assert b["size"] == [[12, 10]] * n
        assert b["crop"] == [[0, 0, 12, 10]] * n
        assert b["flipped"] == [False] * n
        for k, index in enumerate(b["indices"]):
            # the folder lists x0..x5 in order
            caption, obj, arr, seg = expected[f"x{index}"]
            assert b["txt"][k] == caption
            assert b["json"][k] == obj
            assert b["npy"][k] == arr
            assert b["seg"][k] == seg
            seen += 1
    assert seen == 6


def test_c_example_prints_the_fields(tmp_path):
    """tests/examples/batch-fields, the C application, on the same folder: each
    sample's caption, JSON text, array shape and mask size"""
    expected = make_captions(tmp_path / "ds")
    example = os.path.join(os.environ["SPDL_BUILD_ROOT"], "tests", "examples",
                           "batch-fields", "spdl-batch-fields")
    res = subprocess.run([example, str(tmp_path / "ds"),
                          "txt,json,npy,seg.png:label"], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = [line for line in res.stdout.splitlines()
             if line.startswith("sample ")]
    assert len(lines) == 6
    for i, line in enumerate(lines):
        caption, obj, _, _ = expected[f"x{i}"]
        assert line == (f'sample {i} label 0: txt="{caption}" '
                        f'json="{json.dumps(obj)}" npy=float32(3) '
                        "seg.png=uint8[224x224]"), line


def test_bad_npy_skipped_by_its_policy(tmp_path):
    """An npy no batch can hold (Fortran order, big-endian) is a bad value
    where spdlsrc reads it: the sample is skipped with its reason, the
    others' fields stay with their own images"""
    import numpy as np

    expected = make_captions(tmp_path / "ds")
    np.save(tmp_path / "ds" / "c0" / "x1.npy",
            np.asfortranarray(np.ones((2, 3), np.float32)))
    np.save(tmp_path / "ds" / "c0" / "x4.npy", np.arange(3, dtype=">f4"))
    res = subprocess.run([sys.executable, "-c", E2E, str(tmp_path / "ds"),
                          "numpy"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    batches = json.loads(res.stdout.splitlines()[-1])
    indices = [i for b in batches for i in b["indices"]]
    assert indices == [0, 2, 3, 5]
    for b in batches:
        for k, index in enumerate(b["indices"]):
            assert b["txt"][k] == expected[f"x{index}"][0]
            assert b["npy"][k] == expected[f"x{index}"][2]
    assert "Fortran order" in res.stderr and "big-endian" in res.stderr, \
        res.stderr[-2000:]
