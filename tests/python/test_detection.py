"""Detection datasets through ImageLoader(task="detection"): COCO instances
files (and WebDataset shards with a COCO-layout JSON member) as
``for images, targets in loader``, equal to torchvision 0.29's v2 ops on
``CocoDetection`` wrapped for transforms v2, masks equal to pycocotools'
``annToMask``. The references run in the torch 2 venv (PyPI torch 2,
torchvision 0.29, pycocotools: tools/make-test-venv); the datasets are
bench/make-coco's (spdlgst.samplecoco)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import spdlgst
from gi.repository import Gst
from spdlgst.samplecoco import (CATEGORIES, make_coco, make_coco_shards,
                                rle_counts, rle_string)

HERE = os.path.dirname(os.path.abspath(__file__))


def torch2_python():
    venv = os.environ.get("SPDL_TORCH2_VENV", "")
    python = os.path.join(venv, "bin", "python")
    if not venv or not os.path.exists(python):
        pytest.skip("no torch 2 venv with torchvision 0.29 and pycocotools "
                    "(tools/make-test-venv makes it)")
    return python


def run_torch2(script, *args):
    """@script's stdout, run by the torch 2 venv's python (no gi there)."""
    done = subprocess.run([torch2_python(), "-c", script, *map(str, args)],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=""))
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


@pytest.fixture(scope="module")
def coco(tmp_path_factory):
    """12 COCO-like images of mixed sizes (+1 without annotations)."""
    root = tmp_path_factory.mktemp("coco")
    ann, images, _ = make_coco(str(root), 12, seed=3, empty=1)
    return ann, images


@pytest.fixture(scope="module")
def coco_fixed(tmp_path_factory):
    """8 images of 96x64, so that a resize to 64 is the identity."""
    root = tmp_path_factory.mktemp("coco_fixed")
    ann, images, _ = make_coco(str(root), 8, seed=5, size=(96, 64))
    return ann, images


def load(path):
    with open(path) as f:
        return json.load(f)


# -- the dataset maker --------------------------------------------------------

def test_make_coco_has_what_coco_has(coco, tmp_path):
    ann, images = coco
    doc = load(ann)
    ids = [i["id"] for i in doc["images"]]
    assert len(ids) == 13 == len(set(ids)) and ids != sorted(ids)
    for entry in doc["images"]:
        with Image.open(os.path.join(images, entry["file_name"])) as img:
            assert img.format == "JPEG"
            assert img.size == (entry["width"], entry["height"])
    sizes = {(i["width"], i["height"]) for i in doc["images"]}
    assert any(w < h for w, h in sizes) and any(w > h for w, h in sizes)
    cats = [c["id"] for c in doc["categories"]]
    assert cats == [c for c, _ in CATEGORIES] and len(cats) == 80 and max(cats) == 90
    per_image = {}
    for a in doc["annotations"]:
        per_image.setdefault(a["image_id"], []).append(a)
        assert a["image_id"] in ids and a["category_id"] in cats
        x, y, w, h = a["bbox"]
        assert w > 0 and h > 0 and a["area"] > 0
    empty = [i for i in ids if i not in per_image]
    assert 1 <= len(empty) <= 3
    assert 4 <= len(doc["annotations"]) / 12 <= 12
    crowd = [a for a in doc["annotations"] if a["iscrowd"]]
    kinds = {type(a["segmentation"]["counts"]) for a in crowd}
    assert kinds == {str, list}
    polys = [a["segmentation"] for a in doc["annotations"] if not a["iscrowd"]]
    assert all(len(p) >= 6 and len(p) % 2 == 0 for s in polys for p in s)
    assert any(len(s) > 1 for s in polys)
    # deterministic
    again, _, _ = make_coco(str(tmp_path), 12, seed=3, empty=1)
    assert load(again) == doc


def test_rle_as_pycocotools_writes_it():
    rng = np.random.default_rng(0)
    mask = (rng.random((7, 9)) < 0.4).astype(np.uint8)
    counts = rle_counts(mask)
    assert sum(counts) == 63
    flat = mask.flatten(order="F")
    assert counts[0] == (0 if flat[0] else np.argmax(flat != 0))
    out, value, at = np.zeros(63, np.uint8), 0, 0
    for c in counts:
        out[at:at + c] = value
        at, value = at + c, 1 - value
    assert (out == flat).all()
    # what pycocotools' frPyObjects makes of these counts (maskApi.c's
    # rleToString: deltas past the second count, 5-bit groups)
    assert rle_string([3, 5, 3, 40]) == "353S1"
    assert rle_string([0, 2, 30, 1, 27, 3]) == "02n0OM2"


REFERENCE_DATASET = r"""
import json, sys
import numpy as np
from pycocotools import mask as M
from pycocotools.coco import COCO
from torchvision.datasets import CocoDetection, wrap_dataset_for_transforms_v2
ann, images = sys.argv[1], sys.argv[2]
coco = COCO(ann)
bad = []
for a in coco.dataset["annotations"]:
    if not a["iscrowd"]:
        continue
    m = coco.annToMask(a)
    seg = a["segmentation"]
    if isinstance(seg["counts"], str):
        enc = M.encode(np.asfortranarray(m))["counts"].decode()
        if enc != seg["counts"]:
            bad.append(("string", a["id"]))
    if int(m.sum()) != int(a["area"]):
        bad.append(("area", a["id"], int(m.sum()), a["area"]))
ds = wrap_dataset_for_transforms_v2(CocoDetection(images, ann),
    target_keys=("boxes", "labels", "masks", "image_id"))
n = 0
for i in range(len(ds)):
    img, t = ds[i]
    if "boxes" in t:
        n += len(t["boxes"])
print(json.dumps({"bad": bad, "images": len(ds), "objects": n}))
"""


def test_make_coco_reads_in_pycocotools_and_torchvision(coco):
    ann, images = coco
    out = json.loads(run_torch2(REFERENCE_DATASET, ann, images).splitlines()[-1])
    assert out["bad"] == []
    assert out["images"] == 13
    assert out["objects"] == len(load(ann)["annotations"])


def test_make_coco_shards(tmp_path):
    pattern, _ = make_coco_shards(str(tmp_path), 5, seed=3, per_shard=3)
    assert pattern.endswith("coco-{000000..000001}.tar")
    import tarfile
    names = []
    for s in range(2):
        with tarfile.open(tmp_path / f"coco-{s:06d}.tar") as tar:
            for m in tar.getmembers():
                names.append(m.name)
                if m.name.endswith(".json"):
                    doc = json.load(tar.extractfile(m))
                    assert set(doc) >= {"image_id", "annotations"}
                    assert all(a["image_id"] == doc["image_id"]
                               for a in doc["annotations"])
    assert len(names) == 10 and sum(n.endswith(".jpg") for n in names) == 5


def test_make_coco_script(tmp_path):
    done = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench",
                                                        "make-coco"),
                           "--out", str(tmp_path), "--count", "3", "--jobs", "1",
                           "--size", "80x60"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    doc = load(tmp_path / "annotations" / "instances_train2017.json")
    assert [(i["width"], i["height"]) for i in doc["images"]] == [(80, 60)] * 3


# -- arguments ----------------------------------------------------------------

BAD = [
    (dict(recipe="detection"), ValueError, "task='detection'"),
    (dict(recipe="letterbox"), ValueError, "task='detection'"),
    (dict(masks=True), ValueError, "masks"),
    (dict(task="detection"), ValueError, "annotations"),
    (dict(task="segmentation"), ValueError, "task"),
    (dict(annotations="/no/such.json"), ValueError, "annotations"),
    (dict(annotations=3), TypeError, "annotations"),
    (dict(ANN=1, size=0), ValueError, "size"),
    (dict(ANN=1, size=[480, "512"]), TypeError, "size"),
    (dict(ANN=1, size=[]), ValueError, "size"),
    (dict(ANN=1, size=800, max_size=800), ValueError, "max_size"),
    (dict(ANN=1, size=[480, 1400]), ValueError, "max_size"),
    (dict(ANN=1, recipe="letterbox", max_size=1333), ValueError, "max_size"),
    (dict(ANN=1, pad_value=0), ValueError, "pad_value"),
    (dict(ANN=1, recipe="letterbox", pad_value=256), ValueError, "pad_value"),
    (dict(ANN=1, resize=256), ValueError, "resize"),
    (dict(ANN=1, masks="yes"), TypeError, "masks"),
    (dict(ANN=1, sanitize=None, masks=1), TypeError, "masks"),
    (dict(ANN=1, sanitize="no"), TypeError, "sanitize"),
    (dict(ANN=1, empty_images="skip"), ValueError, "empty_images"),
    (dict(ANN=1, fields=("jpg", "json")), ValueError, "fields"),
    (dict(ANN=1, annotations_key="json"), ValueError, "annotations_key"),
]


@pytest.mark.parametrize("kwargs,error,words", BAD,
                         ids=[f"{b[2]}-{i}" for i, b in enumerate(BAD)])
def test_bad_detection_arguments_are_named(coco, monkeypatch, kwargs, error,
                                           words):
    def no_pipeline(*a):
        raise AssertionError("a pipeline was built")

    monkeypatch.setattr(Gst, "parse_launch", no_pipeline)
    kwargs = dict(kwargs)
    if kwargs.pop("ANN", None):
        kwargs["annotations"] = coco[0]
    with pytest.raises(error, match=words):
        spdlgst.ImageLoader(coco[1], **kwargs)


def test_bad_shard_arguments_are_named(tmp_path):
    pattern, _ = make_coco_shards(str(tmp_path), 2, per_shard=2)
    with pytest.raises(ValueError, match="annotations_key"):
        spdlgst.ImageLoader(pattern, annotations_key="a b")
    with pytest.raises(ValueError, match="empty_images"):
        spdlgst.ImageLoader(pattern, task="detection", empty_images="drop")
    with pytest.raises(ValueError, match="annotations="):
        spdlgst.ImageLoader(pattern, annotations=str(tmp_path / "x.json"))


def test_detection_launch_lines(coco):
    ann, images = coco
    line = spdlgst.ImageLoader.launch_line_for(images, annotations=ann)
    assert f"annotations={ann}" in line
    assert "spdldecode mode=shorter resize-shorter=800 max-size=1333 " \
        "flip=random-horizontal" in line
    assert "shuffle=true" in line and "pad-multiple=32" in line
    assert "instance-masks" not in line and "box-min" not in line
    line = spdlgst.ImageLoader.launch_line_for(
        images, annotations=ann, size=[480, 512, 544], max_size=1000,
        flip=False, shuffle=False, masks=True, sanitize=False,
        empty_images="drop")
    assert 'sizes="<480,512,544>" max-size=1000' in line
    assert "empty-images=drop" in line and "shuffle=false" in line
    assert "instance-masks=true box-min-size=0 box-min-area=0" in line
    assert "flip=" not in line
    line = spdlgst.ImageLoader.launch_line_for(images, annotations=ann,
                                               recipe="letterbox")
    assert "width=640 height=640 mode=letterbox pad-value=114" in line
    assert "pad-multiple" not in line and "flip=" not in line
    line = spdlgst.ImageLoader.launch_line_for(images, annotations=ann,
                                               recipe="train", size=320)
    assert "mode=random-resized-crop" in line and "flip=random-horizontal" in line
    line = spdlgst.ImageLoader.launch_line_for(images, annotations=ann,
                                               recipe="val", size=320)
    assert "mode=center-crop resize-shorter=366" in line


def test_shards_launch_line(tmp_path):
    pattern, _ = make_coco_shards(str(tmp_path), 2, per_shard=2)
    line = spdlgst.ImageLoader.launch_line_for(pattern, task="detection")
    assert 'fields="json:objects,json#image_id:int:empty"' in line
    line = spdlgst.ImageLoader.launch_line_for(pattern, annotations_key="coco.json")
    assert 'fields="coco.json:objects,coco.json#image_id:int:empty"' in line


def test_classification_line_is_unchanged(coco):
    images = coco[1]
    assert spdlgst.ImageLoader.launch_line_for(images) == (
        f"spdlsrc location={images} shuffle=false seed=0 num-epochs=-1 ! "
        "spdldecode width=224 height=224 mode=center-crop resize-shorter=256 "
        "seed=0 ! spdlbatch batch-size=256 layout=nchw ! spdlappsink name=sink")


# -- loading, against the references -----------------------------------------

def collect(loader):
    """Per image, in the loader's order: its id, output, targets and
    geometry as numpy."""
    out = []
    for batch in loader:
        images, targets = batch
        assert batch.images is images and batch.targets is targets
        g = batch.geometry
        sizes = batch.image_sizes
        flat = batch.objects
        for i, t in enumerate(targets):
            if sizes is not None:
                h, w = (int(v) for v in sizes[i])
            else:
                h, w = images.shape[2:4]
            img = np.asarray(images[i])
            if sizes is not None:
                # padding is zeros, and the padding mask says where
                assert not img[:, h:, :].any() and not img[:, :, w:].any()
                mask = np.asarray(batch.padding_mask[i])
                assert not mask[:h, :w].any() and mask[h:, :].all() and \
                    mask[:, w:].all()
            rec = dict(image_id=int(t["image_id"]), h=h, w=w,
                       image=img[:, :h, :w].copy(),
                       crop=np.asarray(g.crop[i]).copy(),
                       flipped=bool(g.flipped[i]),
                       source=np.asarray(g.source_size[i]).copy(),
                       index=batch.indices[i])
            for key in ("boxes", "labels", "area", "iscrowd", "masks"):
                if key in t:
                    rec[key] = np.array(t[key])
            # views of the flat tensors, no copy
            if len(t["boxes"]):
                assert np.shares_memory(np.asarray(t["boxes"]),
                                        np.asarray(flat.boxes))
            out.append(rec)
    return out


def save(records, path):
    data = {}
    for k, r in enumerate(records):
        for key, value in r.items():
            data[f"{k}/{key}"] = np.asarray(value)
    data["n"] = np.array(len(records))
    np.savez(path, **data)


REFERENCE = r"""
import json, math, sys
import numpy as np
import torch
from torchvision import tv_tensors
from torchvision.datasets import CocoDetection, wrap_dataset_for_transforms_v2
from torchvision.transforms.v2 import functional as F
from pycocotools.coco import COCO

npz, ann, images, recipe, size, sanitize, masks = sys.argv[1:8]
sanitize, masks, size = sanitize == "1", masks == "1", int(size)
d = np.load(npz)
keys = ("boxes", "labels", "masks", "image_id", "area", "iscrowd")
ds = wrap_dataset_for_transforms_v2(CocoDetection(images, ann), target_keys=keys)
coco = COCO(ann)
by_id = {img_id: k for k, img_id in enumerate(ds.ids)}
bad, worst = [], 0.0
for k in range(int(d["n"])):
    r = lambda key: d[f"{k}/{key}"]
    image_id = int(r("image_id"))
    _, t = ds[by_id[image_id]]
    W, H = (int(v) for v in r("source"))
    h, w = int(r("h")), int(r("w"))
    if "boxes" in t:
        boxes, m = t["boxes"], t["masks"]
        labels = t["labels"]
        area = torch.tensor([float(a) for a in t["area"]], dtype=torch.float32)
        crowd = torch.tensor([int(c) for c in t["iscrowd"]], dtype=torch.int64)
    else:
        boxes = tv_tensors.BoundingBoxes(torch.zeros(0, 4), format="XYXY",
                                         canvas_size=(H, W))
        m = tv_tensors.Mask(torch.zeros(0, H, W, dtype=torch.uint8))
        labels = torch.zeros(0, dtype=torch.int64)
        area = torch.zeros(0)
        crowd = torch.zeros(0, dtype=torch.int64)
    x, y, cw, ch = (float(v) for v in r("crop"))
    if recipe == "detection":
        boxes, m = F.resize(boxes, [h, w]), F.resize(m, [h, w])
    elif recipe == "letterbox":
        ratio = min(size / H, size / W)
        rw, rh = round(W * ratio), round(H * ratio)
        dw, dh = (size - rw) / 2, (size - rh) / 2
        top, left = round(dh - 0.1), round(dw - 0.1)
        pad = [left, top, size - rw - left, size - rh - top]
        boxes, m = F.resize(boxes, [rh, rw]), F.resize(m, [rh, rw])
        boxes, m = F.pad(boxes, pad), F.pad(m, pad)
    elif recipe == "train":
        args = dict(top=int(y), left=int(x), height=int(ch), width=int(cw),
                    size=[h, w])
        boxes, m = F.resized_crop(boxes, **args), F.resized_crop(m, **args)
    else:
        resize = int(sys.argv[8])
        boxes, m = F.resize(boxes, [resize]), F.resize(m, [resize])
        boxes, m = F.center_crop(boxes, [h, w]), F.center_crop(m, [h, w])
    if bool(r("flipped")):
        boxes, m = F.horizontal_flip(boxes), F.horizontal_flip(m)
    if sanitize:
        boxes, valid = F.sanitize_bounding_boxes(boxes, min_size=1, min_area=1)
        m, labels, area, crowd = m[valid], labels[valid], area[valid], crowd[valid]
    got = r("boxes")
    if got.shape != tuple(boxes.shape):
        bad.append((image_id, "count", got.shape, tuple(boxes.shape)))
        continue
    if len(got):
        diff = float(np.abs(got - boxes.numpy()).max())
        worst = max(worst, diff)
        if diff > 1e-3:
            bad.append((image_id, "boxes", diff))
    for name, ref in (("labels", labels), ("area", area), ("iscrowd", crowd)):
        if not np.array_equal(r(name), ref.numpy()):
            bad.append((image_id, name))
    if masks:
        gm, rm = r("masks"), m.numpy()
        if gm.shape != rm.shape or not np.array_equal(gm, rm):
            bad.append((image_id, "masks", gm.shape, rm.shape,
                        int((gm != rm).sum()) if gm.shape == rm.shape else -1))
print(json.dumps({"bad": bad, "worst": worst, "n": int(d["n"])}))
"""


def reference(tmp_path, records, coco, recipe, size, sanitize, masks,
              resize=0):
    ann, images = coco
    save(records, tmp_path / "got.npz")
    out = run_torch2(REFERENCE, tmp_path / "got.npz", ann, images, recipe,
                     size, int(sanitize), int(masks), resize)
    return json.loads(out.splitlines()[-1])


def expected_shorter(W, H, size, max_size):
    """torchvision's Resize(size, max_size) output (height, width)."""
    short, long = min(W, H), max(W, H)
    new_short, new_long = size, int(size * long / short)
    if max_size and new_long > max_size:
        new_short, new_long = int(max_size * new_short / new_long), max_size
    return (new_short, new_long) if H <= W else (new_long, new_short)


def pil_image(images, doc, image_id):
    entry = next(i for i in doc["images"] if i["id"] == image_id)
    with Image.open(os.path.join(images, entry["file_name"])) as img:
        return img.convert("RGB")


CASES = [
    ("detection", dict(size=96, max_size=160), False),
    ("detection", dict(size=96, max_size=160), True),
    ("detection", dict(size=[64, 80, 96], max_size=200), True),
    ("letterbox", dict(size=128), True),
    ("train", dict(size=96), True),
    ("val", dict(size=96), False),
]


@pytest.mark.parametrize("recipe,kwargs,masks", CASES,
                         ids=[f"{c[0]}-{i}-masks{int(c[2])}"
                              for i, c in enumerate(CASES)])
def test_targets_equal_torchvision_v2(coco, tmp_path, recipe, kwargs, masks):
    """Boxes, labels, area, iscrowd (and masks) of each image equal
    torchvision 0.29's v2 ops given the batch's own geometry, then
    SanitizeBoundingBoxes(min_size=1, min_area=1); images equal PIL's
    recipe; every image once, in image id order."""
    ann, images = coco
    doc = load(ann)
    with spdlgst.ImageLoader(images, annotations=ann, recipe=recipe,
                             batch_size=4, masks=masks, epochs=1, seed=7,
                             flip=True, shuffle=False, output="numpy",
                             **kwargs) as loader:
        records = collect(loader)
    ids = sorted(i["id"] for i in doc["images"])
    assert [r["image_id"] for r in records] == ids
    assert [r["index"] for r in records] == list(range(len(ids)))
    flips = [r["flipped"] for r in records]
    assert any(flips) and not all(flips)
    for r in records:
        W, H = (int(v) for v in r["source"])
        if recipe == "detection":
            if isinstance(kwargs["size"], int):
                assert (r["h"], r["w"]) == expected_shorter(
                    W, H, kwargs["size"], kwargs["max_size"])
            else:
                assert any((r["h"], r["w"]) == expected_shorter(
                    W, H, s, kwargs["max_size"]) for s in kwargs["size"])
            src = pil_image(images, doc, r["image_id"])
            ref = np.asarray(src.resize((r["w"], r["h"]), Image.BILINEAR))
            if r["flipped"]:
                ref = ref[:, ::-1]
            assert np.array_equal(r["image"], ref.transpose(2, 0, 1)), \
                r["image_id"]
        elif recipe == "letterbox":
            # ultralytics' LetterBox with PIL's resize, then the flip
            S = kwargs["size"]
            ratio = min(S / H, S / W)
            rw, rh = round(W * ratio), round(H * ratio)
            top, left = round((S - rh) / 2 - 0.1), round((S - rw) / 2 - 0.1)
            src = pil_image(images, doc, r["image_id"])
            ref = np.full((S, S, 3), 114, np.uint8)
            ref[top:top + rh, left:left + rw] = np.asarray(
                src.resize((rw, rh), Image.BILINEAR))
            if r["flipped"]:
                ref = ref[:, ::-1]
            assert np.array_equal(r["image"], ref.transpose(2, 0, 1)), \
                r["image_id"]
    resize = round(96 * 256 / 224) if recipe == "val" else 0
    size = kwargs["size"] if isinstance(kwargs["size"], int) else 0
    out = reference(tmp_path, records, coco, recipe, size, True, masks, resize)
    assert out["bad"] == [], out
    assert out["n"] == len(ids)


def test_masks_before_geometry_equal_ann_to_mask(coco_fixed, tmp_path):
    """With the identity geometry (96x64 images resized to a shorter side
    of 64 and center-cropped to 64x96, no flip, no sanitizing), every
    object's mask is pycocotools' annToMask byte for byte (polygons,
    several polygons, crowd RLEs compressed and not), boxes are COCO's
    xywh as xyxy, and nothing is dropped."""
    ann, images = coco_fixed
    doc = load(ann)
    with spdlgst.ImageLoader(images, annotations=ann, recipe="val",
                             size=(64, 96), resize=64,
                             flip=False, shuffle=False, masks=True,
                             sanitize=False, batch_size=3, epochs=1,
                             output="numpy") as loader:
        records = collect(loader)
    by_image = {}
    for a in doc["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    for r in records:
        assert (r["h"], r["w"]) == (64, 96)
        anns = by_image.get(r["image_id"], [])
        assert len(r["boxes"]) == len(anns)
        xywh = np.array([a["bbox"] for a in anns], np.float32).reshape(-1, 4)
        xyxy = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], 1)
        np.testing.assert_allclose(r["boxes"], xyxy, atol=1e-4)
        assert r["labels"].tolist() == [a["category_id"] for a in anns]
        assert r["iscrowd"].tolist() == [a["iscrowd"] for a in anns]
        np.testing.assert_allclose(r["area"], [a["area"] for a in anns],
                                   rtol=1e-6)
        assert r["masks"].dtype == np.uint8
    save(records, tmp_path / "got.npz")
    script = r"""
import json, sys
import numpy as np
from pycocotools.coco import COCO
d = np.load(sys.argv[1]); coco = COCO(sys.argv[2])
bad = []
for k in range(int(d["n"])):
    image_id = int(d[f"{k}/image_id"])
    anns = coco.loadAnns(coco.getAnnIds(imgIds=image_id))
    got = d[f"{k}/masks"]
    for j, a in enumerate(anns):
        ref = coco.annToMask(a)
        if not np.array_equal(got[j], ref):
            bad.append((image_id, a["id"], int((got[j] != ref).sum())))
print(json.dumps(bad))
"""
    assert json.loads(run_torch2(script, tmp_path / "got.npz",
                                 ann).splitlines()[-1]) == []
    assert any(len(a["segmentation"]) > 1 for a in doc["annotations"]
               if not a["iscrowd"])


@pytest.mark.parametrize("empty", ["keep", "drop"])
def test_empty_images_kept_or_dropped(coco, empty):
    """Images without annotations are kept with N = 0 (torchvision's
    CocoDetection keeps them), or dropped at listing time, len() right."""
    ann, images = coco
    doc = load(ann)
    with_anns = {a["image_id"] for a in doc["annotations"]}
    ids = sorted(i["id"] for i in doc["images"])
    if empty == "drop":
        ids = [i for i in ids if i in with_anns]
    with spdlgst.ImageLoader(images, annotations=ann, recipe="val", size=64,
                             batch_size=5, epochs=1, shuffle=False,
                             empty_images=empty, output="numpy") as loader:
        assert len(loader) == -(-len(ids) // 5)
        records = collect(loader)
    assert [r["image_id"] for r in records] == ids
    counts = {r["image_id"]: len(r["boxes"]) for r in records}
    for image_id in ids:
        assert (counts[image_id] == 0) == (image_id not in with_anns)


def test_torch_targets_are_views_with_a_padded_form(coco):
    """torch output: targets as torchvision's detection models take them,
    views of the batch's flat tensors; batch.padded() holds the same."""
    import torch
    ann, images = coco
    with spdlgst.ImageLoader(images, annotations=ann, size=64, max_size=100,
                             batch_size=4, epochs=1, masks=True) as loader:
        batch = next(iter(loader))
    images_t, targets = batch
    assert images_t.dtype == torch.uint8 and images_t.shape[0] == 4
    assert images_t.shape[2] % 32 == 0 and images_t.shape[3] % 32 == 0
    flat = batch.objects
    for i, t in enumerate(targets):
        assert t["boxes"].dtype == torch.float32 and t["boxes"].shape[1] == 4
        assert t["labels"].dtype == torch.int64
        assert t["image_id"].dtype == torch.int64 and t["image_id"].dim() == 0
        assert t["area"].dtype == torch.float32
        assert t["iscrowd"].dtype == torch.int64
        h, w = batch.image_sizes[i].tolist()
        assert t["masks"].dtype == torch.uint8 and \
            t["masks"].shape == (len(t["boxes"]), h, w)
        a, b = int(flat.offsets[i]), int(flat.offsets[i + 1])
        if b > a:
            assert t["boxes"].data_ptr() == flat.boxes[a].data_ptr()
    padded = batch.padded()
    for i, t in enumerate(targets):
        n = len(t["boxes"])
        assert int(padded.counts[i]) == n
        assert torch.equal(padded.boxes[i, :n], t["boxes"])
        assert torch.equal(padded.labels[i, :n], t["labels"])
        assert (padded.labels[i, n:] == -1).all()
    assert [list(im.shape) for im in batch.image_list] == \
        [[3] + batch.image_sizes[i].tolist() for i in range(4)]


def test_webdataset_shards_give_the_same_targets(tmp_path, coco_fixed):
    """Shards with a COCO-layout JSON member per image give the objects of
    the same images as the instances file."""
    pattern, _ = make_coco_shards(str(tmp_path), 8, seed=5, size=(96, 64),
                                  per_shard=3)
    kw = dict(recipe="val", size=(64, 96), resize=64, flip=False, shuffle=False, masks=True,
              sanitize=False, batch_size=3, epochs=1, output="numpy")
    with spdlgst.ImageLoader(pattern, task="detection", **kw) as loader:
        shards = {r["image_id"]: r for r in collect(loader)}
    ann, images = coco_fixed
    with spdlgst.ImageLoader(images, annotations=ann, **kw) as loader:
        files = {r["image_id"]: r for r in collect(loader)}
    assert sorted(shards) == sorted(files)
    for image_id, r in files.items():
        s = shards[image_id]
        for key in ("boxes", "labels", "area", "iscrowd", "masks", "image"):
            assert np.array_equal(s[key], r[key]), (image_id, key)


def test_broken_annotations_file_is_a_clear_error(coco, tmp_path):
    """A truncated instances file stops the loader with an error naming
    it, at the first iteration (nothing is loaded from half a file)."""
    ann, images = coco
    text = open(ann).read()
    bad = tmp_path / "instances_truncated.json"
    bad.write_text(text[:len(text) // 2])
    with spdlgst.ImageLoader(images, annotations=str(bad), recipe="val",
                             size=64, batch_size=4, epochs=1) as loader:
        with pytest.raises(spdlgst.LoaderError, match="instances_truncated"):
            next(iter(loader))


def test_resume_gives_the_rest_of_the_epoch(coco):
    """state_dict mid-epoch, then a new loader: the same images, flips and
    boxes as the uninterrupted epoch, from where it stopped."""
    ann, images = coco
    kw = dict(annotations=ann, size=64, max_size=100, batch_size=3, seed=11,
              output="numpy")

    def ids_boxes(batch):
        return [(int(t["image_id"]), np.asarray(t["boxes"]).round(3).tolist())
                for t in batch.targets]

    with spdlgst.ImageLoader(images, epochs=1, **kw) as loader:
        whole = [x for b in loader for x in ids_boxes(b)]
    with spdlgst.ImageLoader(images, epochs=1, **kw) as loader:
        it = iter(loader)
        head = ids_boxes(next(it)) + ids_boxes(next(it))
        state = json.loads(json.dumps(loader.state_dict()))
    with spdlgst.ImageLoader(images, epochs=1, **kw) as loader:
        loader.load_state_dict(state)
        tail = [x for b in loader for x in ids_boxes(b)]
    assert head + tail == whole
    assert sorted(i for i, _ in whole) == sorted(i["id"] for i in
                                                  load(ann)["images"])


def test_coco_over_http_equals_local(coco):
    """The instances file and its images over HTTP (http.server on
    127.0.0.1) give the same batches as the local files."""
    import re
    ann, images = coco
    root = os.path.dirname(images)
    server = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0",
                               "--bind", "127.0.0.1", "--directory", root],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(re.search(r"port (\d+)", server.stdout.readline()).group(1))
        url = f"http://127.0.0.1:{port}"
        kw = dict(recipe="val", size=64, masks=True, batch_size=4, epochs=1,
                  output="numpy")
        with spdlgst.ImageLoader(images, annotations=ann, **kw) as loader:
            local = collect(loader)
        with spdlgst.ImageLoader(
                f"{url}/{os.path.basename(images)}",
                annotations=f"{url}/annotations/{os.path.basename(ann)}",
                **kw) as loader:
            remote = collect(loader)
    finally:
        server.kill()
        server.wait()
    assert len(remote) == len(local) == 13
    for r, l in zip(remote, local):
        for key in ("image_id", "boxes", "labels", "masks", "image"):
            assert np.array_equal(r[key], l[key]), key


def test_annotation_counts_reach_python(tmp_path):
    """What the listing passed over (an annotation naming no image, an
    image listed twice, an unknown category) and what the decoder dropped
    (a bbox of 3 numbers, a NaN one) or sanitized are counted by reason
    and reachable from the loader, not only as warnings."""
    (tmp_path / "img").mkdir()
    Image.new("RGB", (40, 30)).save(tmp_path / "img" / "a.png")
    Image.new("RGB", (40, 30)).save(tmp_path / "img" / "b.png")
    good = dict(bbox=[2, 3, 10, 8], category_id=1, area=80, iscrowd=0)
    doc = {"images": [dict(id=1, file_name="a.png", width=40, height=30),
                      dict(id=2, file_name="b.png", width=40, height=30),
                      dict(id=2, file_name="b.png", width=40, height=30)],
           "categories": [dict(id=1, name="x")],
           "annotations": [dict(good, id=1, image_id=1),
                           dict(good, id=2, image_id=9),
                           dict(good, id=3, image_id=2, category_id=5),
                           dict(good, id=4, image_id=2, bbox=[1, 2, 3]),
                           dict(good, id=5, image_id=1, bbox=[1, 1, 0.5, 9])]}
    text = json.dumps(doc)[:-2] + ', {"id": 6, "image_id": 1, ' \
        '"category_id": 1, "bbox": [NaN, 1, 2, 3]}]}'
    (tmp_path / "ann.json").write_text(text)
    with spdlgst.ImageLoader(tmp_path / "img", annotations=tmp_path / "ann.json",
                             recipe="val", resize=30, size=(30, 40),
                             batch_size=2, epochs=1, shuffle=False,
                             flip=False) as loader:
        n = sum(len(t["boxes"]) for _, targets in loader for t in targets)
        counts = loader.annotation_counts()
    assert n == 2
    assert counts["images"] == 2
    assert counts["unknown-image"] == 1
    assert counts["duplicate-image"] == 1
    assert counts["unknown-category"] == 1
    assert counts["bad-annotation"] == 2
    assert counts["sanitized"] == 1
    assert counts["box-empty"] == 0


def test_letterbox_keeps_boxes_on_the_image_edge(tmp_path):
    """A 47x29 image letterboxed into 101x101 is scaled by float32(101 /
    47): a box reaching the image's right edge (x + w = 47) comes to
    101.0000076 past the 101-pixel canvas, and SanitizeBoundingBoxes'
    canvas check dropped it. torchvision's F.pad clamps boxes to the new
    canvas (as ultralytics clips them): the box is kept, x2 = 101."""
    (tmp_path / "img").mkdir()
    Image.new("RGB", (47, 29)).save(tmp_path / "img" / "a.png")
    anns = [dict(id=1, image_id=1, category_id=1, bbox=[30, 5, 17, 10],
                 area=170, iscrowd=0),
            dict(id=2, image_id=1, category_id=2, bbox=[3, 5, 10, 10],
                 area=100, iscrowd=0)]
    doc = {"images": [dict(id=1, file_name="a.png", width=47, height=29)],
           "annotations": anns, "categories": [dict(id=1), dict(id=2)]}
    (tmp_path / "ann.json").write_text(json.dumps(doc))
    with spdlgst.ImageLoader(tmp_path / "img", annotations=tmp_path / "ann.json",
                             recipe="letterbox", size=101, batch_size=1,
                             epochs=1, flip=False, output="numpy") as loader:
        targets = [t for _, ts in loader for t in ts]
    # F.resize's float32 ratios to 101x62, then F.pad's shift and clamp
    rh = round(29 * 101 / 47)
    ratios = np.array([101 / 47, rh / 29] * 2, np.float32)
    top = round((101 - rh) / 2 - 0.1)
    xyxy = np.array([[30, 5, 47, 15], [3, 5, 13, 15]], np.float32)
    want = xyxy * ratios + np.array([0, top, 0, top], np.float32)
    want = np.minimum(want, np.float32(101))
    assert targets[0]["labels"].tolist() == [1, 2]
    np.testing.assert_array_equal(targets[0]["boxes"], want)
    assert targets[0]["boxes"][0, 2] == 101


def test_masks_past_their_limit_are_a_bad_field(tmp_path):
    """2700 three-point polygons (210 KB of JSON) on one 640x480 image are
    1.1 GB of 640x640 masks: the sample is skipped as a bad field naming
    the limit (spdldecode max-masks-size, 1 GiB) before anything is
    allocated, not decoded into memory a shard's few bytes ask for; the
    next sample goes on."""
    import tarfile
    import io
    anns = [dict(bbox=[1, 1, 5, 5], category_id=1,
                 segmentation=[[1, 1, 6, 1, 6, 6]])]
    members = [("a.json", json.dumps({"annotations": anns * 2700})),
               ("b.json", json.dumps({"annotations": anns * 3}))]
    jpeg = io.BytesIO()
    Image.new("RGB", (640, 480)).save(jpeg, "JPEG")
    with tarfile.open(tmp_path / "s.tar", "w") as tar:
        for name, text in members:
            for member, data in ((name[0] + ".jpg", jpeg.getvalue()),
                                 (name, text.encode())):
                info = tarfile.TarInfo(member)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    with spdlgst.ImageLoader(tmp_path / "s.tar", task="detection",
                             recipe="letterbox", size=640, masks=True,
                             batch_size=1, epochs=1, shuffle=False) as loader:
        counts = [len(t["masks"]) for _, targets in loader for t in targets]
        skipped = loader.skipped()
    assert counts == [3]
    assert skipped["bad-field"] == 1
