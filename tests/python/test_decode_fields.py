"""spdldecode's label fields against torchvision: a segmentation mask made
with PIL (palette and gray, 8 and 16-bit) goes through the geometry of its
image as torchvision's F.resized_crop (mask, top, left, h, w, size,
NEAREST) and F.hflip transform it, pixel for pixel, given the geometry the
sample meta reports; under torch 2 (tools/make-test-venv) against
torch.nn.functional.interpolate (mode="nearest"), what F.resize does
with a tensor. Samples are pushed as spdlsrc makes them (a sample meta
with the record's values, caps with "fields") and read before spdlbatch."""
import ctypes
import io
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

FIELDS = "seg.png:label:skip,gray.png:label:skip,depth.png:label:skip"
W, H = 83, 61

_gst = ctypes.CDLL("libgstreamer-1.0.so.0")
_gst.gst_buffer_get_custom_meta.restype = ctypes.c_void_p
_gst.gst_buffer_get_custom_meta.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_gst.gst_custom_meta_get_structure.restype = ctypes.c_void_p
_gst.gst_custom_meta_get_structure.argtypes = [ctypes.c_void_p]
_gst.gst_structure_get_type.restype = ctypes.c_size_t
G_TYPE_UINT64 = 11 << 2


def png_bytes(img):
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def make_sample(image, index, values):
    """A buffer as spdlsrc makes it. PyGObject hands out copies of a
    meta's structure, so the record goes in through the C API (hash() of
    a boxed wrapper is its pointer)."""
    buf = Gst.Buffer.new_wrapped(image)
    buf.add_custom_meta("GstSpdlSampleMeta")
    record = Gst.Structure.new_empty("record")
    for i, value in enumerate(values):
        record.set_value(f"v{i}", value if isinstance(value, str)
                         else GLib.Bytes.new(value))
    meta = _gst.gst_buffer_get_custom_meta(hash(buf), b"GstSpdlSampleMeta")
    s = _gst.gst_custom_meta_get_structure(meta)
    _gst.gst_structure_set(ctypes.c_void_p(s), b"index",
                           ctypes.c_size_t(G_TYPE_UINT64),
                           ctypes.c_uint64(index), b"record",
                           ctypes.c_size_t(_gst.gst_structure_get_type()),
                           ctypes.c_void_p(hash(record)), None)
    return buf


def make_masks(rng, W=W, H=H):
    """A palette mask (indices far from their colours), an 8-bit gray
    label map and a 16-bit depth map (PIL's I;16), with blocky regions
    as segmentation masks have, and one-pixel details."""
    classes = rng.integers(0, 21, (H // 6 + 1, W // 6 + 1))
    seg = np.kron(classes, np.ones((6, 6), int))[:H, :W].astype(np.uint8)
    seg[::7, ::5] = 255                       # a "void" label, isolated
    pal = Image.fromarray(seg, mode="P")
    pal.putpalette([(i * 37) % 256 for i in range(768)])
    gray = rng.integers(0, 256, (H, W)).astype(np.uint8)
    depth = rng.integers(0, 65536, (H, W)).astype(np.uint16)
    depth_img = Image.fromarray(depth, mode="I;16")
    return ([png_bytes(pal), png_bytes(Image.fromarray(gray, mode="L")),
             png_bytes(depth_img)], [seg, gray, depth])


def start(fields, props, sink_props=""):
    """appsrc (PNG samples with @fields) ! spdldecode @props ! appsink,
    playing."""
    pipeline = Gst.parse_launch(
        f"appsrc name=src format=time ! spdldecode {props} ! "
        f"appsink name=sink sync=false {sink_props}")
    src = pipeline.get_by_name("src")
    src.set_property("caps", Gst.Caps.from_string(
        f'image/png, parsed=true, fields="{fields}"'))
    pipeline.set_state(Gst.State.PLAYING)
    return pipeline, src


def label_array(value):
    """A decoded label field (a GstSample): its format and its values."""
    s = value.get_caps().get_structure(0)
    w, h = s.get_int("width")[1], s.get_int("height")[1]
    fmt = s.get_string("format")
    buf = value.get_buffer()
    data = buf.extract_dup(0, buf.get_size())
    dtype = np.uint16 if fmt == "GRAY16_LE" else np.uint8
    return fmt, np.frombuffer(data, dtype=dtype).reshape(h, w)


def decode(props, image, masks, n):
    pipeline, src = start(FIELDS, f"threads=2 {props}")
    sink = pipeline.get_by_name("sink")
    for k in range(n):
        src.emit("push-buffer", make_sample(image, k, masks))
    src.emit("end-of-stream")
    outs = []
    for _ in range(n):
        sample = sink.emit("pull-sample")
        assert sample is not None
        caps = sample.get_caps().get_structure(0)
        assert caps.get_string("fields") == FIELDS
        meta = sample.get_buffer().get_custom_meta(
            "GstSpdlSampleMeta").get_structure()
        crop = [meta.get_value("crop")[i] for i in range(4)]
        record = meta.get_value("record")
        labels = []
        for i in range(3):
            labels.append(label_array(record.get_value(f"v{i}"))[1])
        outs.append(dict(crop=crop, flipped=meta.get_value("flipped"),
                         source=(meta.get_value("source-width"),
                                 meta.get_value("source-height")),
                         labels=labels))
    pipeline.set_state(Gst.State.NULL)
    return outs


def image_bytes(W=W, H=H):
    rng = np.random.default_rng(3)
    return png_bytes(Image.fromarray(
        rng.integers(0, 256, (H, W, 3)).astype(np.uint8)))


MODES = [
    ("stretch", "width=40 height=90", (90, 40)),
    # 14 -> 46 and 12 -> 74: torch's single-precision scale picks another
    # source pixel than exact arithmetic would (at 23 and 37)
    ("stretch-float32", "width=46 height=74", (74, 46), (14, 12)),
    ("center-crop", "mode=center-crop resize-shorter=50 width=48 height=44",
     (44, 48)),
    # a crop larger than the resized image (54x40): zeros around it, odd
    # margins split as CenterCrop's padding splits them
    ("center-crop-padded", "mode=center-crop resize-shorter=40 width=61 "
     "height=45", (45, 61)),
    ("random-resized-crop", "mode=random-resized-crop width=32 height=32 "
     "flip=random-horizontal seed=11", (32, 32)),
]


@pytest.mark.parametrize("mode", MODES, ids=[m[0] for m in MODES])
def test_labels_equal_torchvision(mode):
    import torch
    import torchvision.transforms.functional as F
    from torchvision.transforms import InterpolationMode

    name, props, size = mode[:3]
    W, H = mode[3] if len(mode) > 3 else (globals()["W"], globals()["H"])
    encoded, arrays = make_masks(np.random.default_rng(7), W, H)
    outs = decode(props, image_bytes(W, H), encoded, 8)
    flips = 0
    for out in outs:
        assert out["source"] == (W, H)
        x, y, w, h = out["crop"]
        for array, got in zip(arrays, out["labels"]):
            assert got.dtype == array.dtype
            # uint16 has no tensor type in torch 1.13: int32 keeps it
            mask = torch.from_numpy(array.astype(np.int32))[None]
            if name.startswith("center-crop"):
                shorter = int(props.split("resize-shorter=")[1].split()[0])
                ref = F.center_crop(F.resize(mask, shorter,
                                             InterpolationMode.NEAREST),
                                    list(size))
                # the box reported is that window, in source pixels
                rw = int(shorter * W / H)
                left = (round((rw - size[1]) / 2) if size[1] <= rw
                        else -((size[1] - rw) // 2))
                assert abs(x - left * W / rw) < 1e-9
                assert abs(w - size[1] * W / rw) < 1e-9
            else:
                assert (x, y, w, h) == tuple(int(v) for v in (x, y, w, h))
                ref = F.resized_crop(mask, int(y), int(x), int(h), int(w),
                                     list(size), InterpolationMode.NEAREST)
            if out["flipped"]:
                ref = F.hflip(ref)
            np.testing.assert_array_equal(got, ref[0].numpy().astype(
                array.dtype))
            # values are the mask's own: a palette's indices, never colours
            assert set(np.unique(got)) <= set(np.unique(array)) | {0}
        flips += out["flipped"]
    if name == "random-resized-crop":
        assert 0 < flips < len(outs)


TORCH2_CHECK = r"""
import sys, numpy as np, torch
d = np.load(sys.argv[1])
n = int(d["n"])
for k in range(n):
    x, y, w, h = (int(v) for v in d[f"crop{k}"])
    for j in range(3):
        src = torch.from_numpy(d[f"src{j}"].astype(np.int32))[None, None]
        got = d[f"got{k}_{j}"]
        crop = src[..., y:y + h, x:x + w].float()
        ref = torch.nn.functional.interpolate(crop, size=got.shape,
                                              mode="nearest")
        if d[f"flip{k}"]:
            ref = ref.flip(-1)
        ref = ref[0, 0].to(torch.int32).numpy()
        assert (ref == got.astype(np.int32)).all(), (k, j)
print("ok", torch.__version__, n)
"""


@pytest.mark.parametrize("mode", [MODES[1], MODES[4]],
                         ids=[MODES[1][0], MODES[4][0]])
def test_labels_equal_torch2(tmp_path, mode):
    """The same rule under PyPI's torch 2 (its nearest kernel)."""
    venv = os.environ.get("SPDL_TORCH2_VENV", "")
    python = os.path.join(venv, "bin", "python")
    if not venv or not os.path.exists(python):
        pytest.skip("no torch 2 venv (tools/make-test-venv makes it)")
    W, H = mode[3] if len(mode) > 3 else (globals()["W"], globals()["H"])
    encoded, arrays = make_masks(np.random.default_rng(9), W, H)
    outs = decode(mode[1], image_bytes(W, H), encoded, 10)
    data = dict(n=len(outs))
    for j, array in enumerate(arrays):
        data[f"src{j}"] = array
    for k, out in enumerate(outs):
        data[f"crop{k}"] = np.array(out["crop"])
        data[f"flip{k}"] = out["flipped"]
        for j, got in enumerate(out["labels"]):
            data[f"got{k}_{j}"] = got
    np.savez(tmp_path / "labels.npz", **data)
    script = tmp_path / "check.py"
    script.write_text(TORCH2_CHECK)
    # the venv's python alone: numpy and torch, no gi needed
    result = subprocess.run([python, str(script), str(tmp_path / "labels.npz")],
                            capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, PYTHONPATH=""))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("ok 2."), result.stdout


def run_bad(policy, bad_mask):
    # EOS reaches the bus with the samples still in the sink
    pipeline, src = start("seg.png:label:" + policy, "width=16 height=16",
                          "wait-on-eos=false")
    bus = pipeline.get_bus()
    encoded, _ = make_masks(np.random.default_rng(1))
    src.emit("push-buffer", make_sample(image_bytes(), 0, [bad_mask]))
    src.emit("push-buffer", make_sample(image_bytes(), 1, [encoded[0]]))
    src.emit("end-of-stream")
    msgs, indices = [], []
    while True:
        msg = bus.timed_pop_filtered(
            10 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR |
            Gst.MessageType.WARNING)
        assert msg is not None
        if msg.type == Gst.MessageType.EOS:
            break
        err, _ = (msg.parse_error() if msg.type == Gst.MessageType.ERROR
                  else msg.parse_warning())
        msgs.append((msg.type, err.message))
        if msg.type == Gst.MessageType.ERROR:
            break
    sink = pipeline.get_by_name("sink")
    while True:
        sample = sink.emit("try-pull-sample", 0)
        if sample is None:
            break
        meta = sample.get_buffer().get_custom_meta(
            "GstSpdlSampleMeta").get_structure()
        record = meta.get_value("record")
        value = record.get_value("v0")
        buf = value.get_buffer()
        indices.append((meta.get_value("index"),
                        buf.extract_dup(0, buf.get_size())))
    pipeline.set_state(Gst.State.NULL)
    return msgs, indices


def label_layouts():
    """Every PNG layout a mask or label map comes in, as PIL and
    pngwrite.py write them: palette of 8, 4, 2 and 1 bits, gray of 16, 8,
    4, 2 and 1 bits, interlaced too."""
    import pngwrite

    rng = np.random.default_rng(5)
    palette = [(i * 53) % 256 for i in range(768)]
    out = []
    for depth in (8, 4, 2, 1):
        a = rng.integers(0, 1 << depth, (H, W))
        out.append((f"palette{depth}", pngwrite.png_bytes(
            a, pngwrite.PALETTE, depth, palette=palette[:3 << depth])))
        out.append((f"gray{depth}", pngwrite.png_bytes(
            a, pngwrite.GRAY, depth)))
    out.append(("gray16", pngwrite.png_bytes(
        rng.integers(0, 65536, (H, W)), pngwrite.GRAY, 16)))
    out.append(("palette-interlaced", pngwrite.png_bytes(
        rng.integers(0, 256, (H, W)), pngwrite.PALETTE, 8, palette=palette,
        interlace=True)))
    img = Image.fromarray(rng.integers(0, 21, (H, W)).astype(np.uint8), "P")
    img.putpalette(palette)
    out.append(("pil-palette", png_bytes(img)))
    return out


def test_label_values_as_pil():
    """At the image's own size a label is numpy.asarray(Image.open(f)):
    indices and gray values as they are, whatever the layout."""
    layouts = label_layouts()
    pipeline, src = start(",".join(f"{name}.png:label:skip"
                                   for name, _ in layouts), "")
    src.emit("push-buffer", make_sample(image_bytes(), 0,
                                        [data for _, data in layouts]))
    src.emit("end-of-stream")
    sample = pipeline.get_by_name("sink").emit("pull-sample")
    # each step kept: a value is borrowed from the structure it is in
    meta = sample.get_buffer().get_custom_meta(
        "GstSpdlSampleMeta").get_structure()
    record = meta.get_value("record")
    for i, (name, data) in enumerate(layouts):
        want = np.asarray(Image.open(io.BytesIO(data)))
        fmt, got = label_array(record.get_value(f"v{i}"))
        # PIL 9.4 opens 16-bit gray as "I" (int32), of 16-bit values
        assert fmt == ("GRAY16_LE" if name == "gray16" else "GRAY8")
        np.testing.assert_array_equal(got, want.astype(got.dtype),
                                      err_msg=name)
    pipeline.set_state(Gst.State.NULL)


BAD = [
    ("another-size", lambda: png_bytes(Image.new("P", (W + 3, H))), "86x61"),
    ("rgb", lambda: png_bytes(Image.new("RGB", (W, H), (1, 2, 3))), "RGB"),
    ("corrupt", lambda: make_masks(np.random.default_rng(1))[0][0][:-30],
     "truncated"),
]


@pytest.mark.parametrize("policy", ["skip", "error", "empty"])
@pytest.mark.parametrize("what,make,words", BAD, ids=[b[0] for b in BAD])
def test_bad_label(policy, what, make, words):
    msgs, samples = run_bad(policy, make())
    assert msgs, "no message"
    kind, text = msgs[0]
    assert '"seg.png"' in text and words in text, text
    if policy == "skip":
        assert kind == Gst.MessageType.WARNING
        assert [i for i, _ in samples] == [1]
    elif policy == "error":
        assert kind == Gst.MessageType.ERROR
        assert 0 not in [i for i, _ in samples]
    else:
        assert kind == Gst.MessageType.WARNING
        assert [i for i, _ in samples] == [0, 1]
        assert samples[0][1] == bytes(16 * 16)


def test_audio_carries_the_record(tmp_path):
    """spdlaudiodecode passes the caps' fields and each sample's record
    on to its clips (spdlvideodecode's C test does the same for video)."""
    import audiogen

    audiogen.make(str(tmp_path / "a.wav"), "tone", 16000, 1.0)
    pipeline = Gst.parse_launch(
        "appsrc name=src format=time ! spdlaudiodecode threads=1 ! "
        "appsink name=sink sync=false")
    src = pipeline.get_by_name("src")
    src.set_property("caps", Gst.Caps.from_string(
        'audio/x-wav, fields="txt:string:skip"'))
    pipeline.set_state(Gst.State.PLAYING)
    src.emit("push-buffer", make_sample((tmp_path / "a.wav").read_bytes(), 4,
                                        ["a bird sings"]))
    src.emit("end-of-stream")
    sample = pipeline.get_by_name("sink").emit("pull-sample")
    assert sample is not None
    assert sample.get_caps().get_structure(0).get_string("fields") == \
        "txt:string:skip"
    meta = sample.get_buffer().get_custom_meta(
        "GstSpdlSampleMeta").get_structure()
    record = meta.get_value("record")
    assert meta.get_value("index") == 4
    assert record.get_value("v0") == "a bird sings"
    pipeline.set_state(Gst.State.NULL)
