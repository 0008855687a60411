"""Objects fields (one image's COCO annotations) through spdlsrc !
spdldecode ! spdlbatch: boxes, labels, area, iscrowd and instance masks
equal to torchvision 0.29's v2 ops (resized_crop / resize + center_crop,
horizontal_flip, SanitizeBoundingBoxes) given each batch's geometry, and
masks before any geometry equal to pycocotools' annToMask, byte for byte.
The references run in the torch 2 venv (SPDL_TORCH2_VENV)."""
import io
import json
import os
import subprocess
import tarfile

import numpy as np
import pytest
from PIL import Image

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)

SIZES = [(97, 73), (64, 80), (120, 90), (75, 75), (88, 61), (101, 67)]


def rle_string(counts):
    """COCO's compressed RLE text (pycocotools' rleToString)."""
    out = []
    for i, c in enumerate(counts):
        x = c - counts[i - 2] if i > 2 else c
        more = True
        while more:
            ch = x & 0x1F
            x >>= 5
            more = (x != -1) if ch & 0x10 else (x != 0)
            if more:
                ch |= 0x20
            out.append(chr(ch + 48))
    return "".join(out)


def region_counts(w, h, x0, y0, x1, y1):
    """Column-major runs of the rectangle [x0, x1) x [y0, y1)."""
    m = np.zeros((h, w), np.uint8)
    m[y0:y1, x0:x1] = 1
    flat = m.T.reshape(-1)
    counts, value, run = [], 0, 0
    for v in flat:
        if v != value:
            counts.append(run)
            value, run = v, 0
        run += 1
    counts.append(run)
    return counts


def polygon(rng, cx, cy, r, k):
    angles = np.sort(rng.uniform(0, 2 * np.pi, k))
    radii = rng.uniform(0.4, 1.0, k) * r
    pts = np.stack([cx + radii * np.cos(angles), cy + radii * np.sin(angles)],
                   1)
    return [round(float(v), 2) for v in pts.reshape(-1)]


def bounds(polys):
    xs = [v for p in polys for v in p[0::2]]
    ys = [v for p in polys for v in p[1::2]]
    return [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)]


def annotations(rng, w, h, first_id):
    anns = []
    for j in range(4):
        # some reach past the image: crops clamp them
        cx, cy = rng.uniform(-5, w + 5), rng.uniform(-5, h + 5)
        polys = [polygon(rng, cx, cy, rng.uniform(4, 25), rng.integers(3, 9))]
        if j == 3:      # an object in two parts
            polys.append(polygon(rng, w / 2, h / 2, 6, 5))
        box = bounds(polys)
        anns.append(dict(id=first_id + j, category_id=int(rng.integers(1, 91)),
                         bbox=box, area=float(box[2] * box[3] * 0.6),
                         iscrowd=0, segmentation=polys))
    x0, y0 = int(rng.integers(0, w // 2)), int(rng.integers(0, h // 2))
    x1, y1 = x0 + int(rng.integers(3, w // 2)), y0 + int(rng.integers(3, h // 2))
    counts = region_counts(w, h, x0, y0, x1, y1)
    anns.append(dict(id=first_id + 4, category_id=1, iscrowd=1,
                     bbox=[x0, y0, x1 - x0, y1 - y0], area=(x1 - x0) * (y1 - y0),
                     segmentation=dict(size=[h, w], counts=rle_string(counts))))
    anns.append(dict(id=first_id + 5, category_id=2, iscrowd=1,
                     bbox=[x0 + 0.5, y0, x1 - x0, y1 - y0], area=5.0,
                     segmentation=dict(size=[h, w], counts=counts)))
    # a sliver SanitizeBoundingBoxes drops
    anns.append(dict(id=first_id + 6, category_id=3, iscrowd=0,
                     bbox=[10.0, 10.0, 0.5, 7.0], area=3.5,
                     segmentation=[[10, 10, 10.5, 10, 10.5, 17, 10, 17]]))
    return anns


def make_folder(root, wrap=False):
    """root/c/x0.png with x0.json beside it, ...; the annotations by name."""
    rng = np.random.default_rng(5)
    (root / "c").mkdir(parents=True)
    truth = {}
    for i, (w, h) in enumerate(SIZES):
        img = rng.integers(0, 256, (h, w, 3)).astype(np.uint8)
        Image.fromarray(img).save(root / "c" / f"x{i}.png")
        anns = annotations(rng, w, h, 100 * i)
        text = json.dumps(dict(annotations=anns) if wrap else anns)
        (root / "c" / f"x{i}.json").write_text(text)
        truth[f"x{i}"] = dict(size=[h, w], anns=anns)
    return truth


def make_shard(path):
    """A WebDataset shard: x.png and x.json ({"annotations": [...]})."""
    rng = np.random.default_rng(5)
    truth = {}
    with tarfile.open(path, "w") as tar:
        for i, (w, h) in enumerate(SIZES):
            img = rng.integers(0, 256, (h, w, 3)).astype(np.uint8)
            out = io.BytesIO()
            Image.fromarray(img).save(out, format="PNG")
            anns = annotations(rng, w, h, 100 * i)
            for name, data in ((f"x{i}.png", out.getvalue()),
                               (f"x{i}.json", json.dumps(
                                   dict(annotations=anns)).encode())):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            truth[f"x{i}"] = dict(size=[h, w], anns=anns)
    return truth


DTYPES = {"boxes": np.float32, "offsets": np.int64, "labels": np.int64,
          "area": np.float32, "iscrowd": np.int64, "masks": np.uint8}


def run_batches(location, decode, batch="batch-size=3", fields="json:objects",
                source="", name="json"):
    """Each batch's objects tensors (field @name), geometry and image
    size; the decoder's object-counts and the warnings posted."""
    source = source or f'fields="{fields}"'
    pipeline = Gst.parse_launch(
        f'spdlsrc location={location} {source} ! spdldecode '
        f"name=dec threads=2 {decode} ! spdlbatch {batch} ! "
        "appsink name=sink sync=false")
    sink, bus = pipeline.get_by_name("sink"), pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    batches = []
    try:
        while True:
            sample = sink.emit("try-pull-sample", 30 * Gst.SECOND)
            if sample is None:
                break
            caps = sample.get_caps().get_structure(0)
            names = caps.get_string("names").split(",")
            buf = sample.get_buffer()
            assert buf.n_memory() == len(names)
            out = {}
            for k, tensor in enumerate(names):
                mem = buf.peek_memory(k)
                ok, info = mem.map(Gst.MapFlags.READ)
                data = bytes(info.data)
                mem.unmap(info)
                key = tensor.split("/")[-1]
                if tensor.startswith(name + "/"):
                    out[key] = np.frombuffer(data, DTYPES[key])
                elif tensor == "images":
                    out["images_bytes"] = len(data)
            meta = buf.get_custom_meta("GstSpdlBatchMeta").get_structure()
            crop, flipped = meta.get_value("crop"), meta.get_value("flipped")
            size = meta.get_value("source-size")
            b = len(out["offsets"]) - 1
            out["crop"] = [[crop[4 * i + j] for j in range(4)]
                           for i in range(b)]
            out["flipped"] = [bool(flipped[i]) for i in range(b)]
            out["source"] = [[size[2 * i], size[2 * i + 1]] for i in range(b)]
            out["names"] = names
            batches.append(out)
        warnings = []
        while (msg := bus.pop_filtered(Gst.MessageType.WARNING |
                                       Gst.MessageType.ERROR)) is not None:
            assert msg.type == Gst.MessageType.WARNING, \
                msg.parse_error()[0].message
            warnings.append(msg.parse_warning()[0].message)
        counts = pipeline.get_by_name("dec").get_property("object-counts")
        counts = {counts.nth_field_name(i): counts.get_value(
            counts.nth_field_name(i)) for i in range(counts.n_fields())}
    finally:
        pipeline.set_state(Gst.State.NULL)
    return batches, counts, warnings


REFERENCE = r"""
import json, sys
import numpy as np, torch
from pycocotools import mask as cocomask
from torchvision import tv_tensors
from torchvision.transforms.v2 import functional as F

d = json.load(open(sys.argv[1]))
coco = None
if d.get("coco"):
    from torchvision.datasets import CocoDetection, wrap_dataset_for_transforms_v2
    coco = wrap_dataset_for_transforms_v2(
        CocoDetection(d["coco"]["root"], d["coco"]["file"]),
        target_keys={"boxes", "labels", "masks", "image_id", "area",
                     "iscrowd"})
for k, s in enumerate(d["samples"]):
    h, w = s["size"]
    anns = s["anns"]
    if coco is not None:
        # torchvision's own wrapper: CocoDetection's k-th image
        _, target = coco[k]
        assert target["image_id"] == s["image_id"], (k, s["image_id"])
        boxes, mask = target["boxes"], target["masks"]
        labels_all = target["labels"].tolist()
        crowd, area_all = target["iscrowd"], target["area"]
    else:
        masks = []
        for a in anns:
            seg = a["segmentation"]
            if isinstance(seg, list):
                rle = cocomask.merge(cocomask.frPyObjects(seg, h, w))
            elif isinstance(seg["counts"], list):
                rle = cocomask.frPyObjects(seg, h, w)
            else:
                rle = seg
            masks.append(cocomask.decode(rle))
        boxes = tv_tensors.BoundingBoxes(
            torch.tensor([a["bbox"] for a in anns], dtype=torch.float32),
            format="XYWH", canvas_size=(h, w))
        boxes = F.convert_bounding_box_format(boxes, new_format="XYXY")
        mask = tv_tensors.Mask(torch.from_numpy(np.stack(masks)))
        labels_all = [a["category_id"] for a in anns]
        crowd = [a["iscrowd"] for a in anns]
        area_all = [a["area"] for a in anns]
    x, y, cw, ch = s["crop"]
    oh, ow = s["out"]
    if s["mode"] == "center-crop":
        boxes = F.resize(boxes, [s["shorter"]])
        mask = F.resize(mask, [s["shorter"]])
        boxes = F.center_crop(boxes, [oh, ow])
        mask = F.center_crop(mask, [oh, ow])
    else:
        x, y, cw, ch = (int(v) for v in (x, y, cw, ch))
        boxes = F.resized_crop(boxes, y, x, ch, cw, [oh, ow])
        mask = F.resized_crop(mask, y, x, ch, cw, [oh, ow])
    if s["flipped"]:
        boxes = F.horizontal_flip(boxes)
        mask = F.horizontal_flip(mask)
    if s["sanitize"]:
        boxes, valid = F.sanitize_bounding_boxes(boxes, min_size=1.0,
                                                 min_area=1.0)
    else:
        valid = torch.ones(len(anns), dtype=torch.bool)
    got = np.array(s["got_boxes"], dtype=np.float32).reshape(-1, 4)
    ref = boxes.as_subclass(torch.Tensor).numpy()
    assert got.shape == ref.shape, (s["name"], got.shape, ref.shape)
    assert (got.view(np.uint32) == ref.view(np.uint32)).all(), (s["name"], got, ref)
    labels = torch.tensor(labels_all)[valid].tolist()
    assert s["got_labels"] == labels, (s["name"], s["got_labels"], labels)
    assert s["got_iscrowd"] == torch.tensor(crowd)[valid].tolist()
    area = np.array(area_all, np.float32)[valid.numpy()]
    assert (np.array(s["got_area"], np.float32) == area).all()
    if s.get("got_masks") is not None:
        ref_masks = mask[valid].numpy()
        got_masks = np.load(s["got_masks"])
        assert got_masks.shape == ref_masks.shape, (got_masks.shape, ref_masks.shape)
        assert (got_masks == ref_masks).all(), s["name"]
    if s.get("raw_masks"):
        assert (np.load(s["got_masks"]) == np.stack(masks)).all()
print("ok", len(d["samples"]))
"""


def venv_python():
    venv = os.environ.get("SPDL_TORCH2_VENV", "")
    python = os.path.join(venv, "bin", "python")
    if not venv or not os.path.exists(python):
        pytest.skip("no torch 2 venv (tools/make-test-venv makes it)")
    return python


def check_reference(tmp_path, truth, batches, mode, out_size, shorter=0,
                    sanitize=True, masks=True, raw_masks=False, coco=None,
                    order=None):
    """Each sample of @batches (in the order of @order, names of @truth)
    against the reference; with @coco (dict(root, file)) the targets are
    torchvision's CocoDetection + wrap_dataset_for_transforms_v2's."""
    samples = []
    names = order or sorted(truth)
    k = 0
    for b in batches:
        offsets = b["offsets"]
        h, w = out_size
        for i in range(len(offsets) - 1):
            lo, hi = int(offsets[i]), int(offsets[i + 1])
            name = names[k]
            k += 1
            s = dict(name=name, size=truth[name]["size"],
                     anns=truth[name]["anns"], crop=b["crop"][i],
                     flipped=b["flipped"][i], mode=mode, shorter=shorter,
                     out=[h, w], sanitize=sanitize,
                     got_boxes=b["boxes"][4 * lo:4 * hi].tolist(),
                     got_labels=b["labels"][lo:hi].tolist(),
                     got_iscrowd=b["iscrowd"][lo:hi].tolist(),
                     got_area=b["area"][lo:hi].tolist(), raw_masks=raw_masks,
                     image_id=truth[name].get("image_id"))
            assert b["source"][i] == truth[name]["size"][::-1]
            if masks:
                m = b["masks"].reshape(-1, h, w)[lo:hi]
                path = tmp_path / f"{name}.npy"
                np.save(path, m)
                s["got_masks"] = str(path)
            samples.append(s)
    assert k == len(truth)
    (tmp_path / "ref.json").write_text(json.dumps(dict(samples=samples,
                                                       coco=coco)))
    script = tmp_path / "reference.py"
    script.write_text(REFERENCE)
    res = subprocess.run([venv_python(), str(script), str(tmp_path / "ref.json")],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=""))
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.splitlines()[-1].startswith("ok"), res.stdout


def test_masks_equal_anntomask_before_geometry(tmp_path):
    """No resize (the image's own size), no sanitizing: every annotation,
    its mask byte for byte pycocotools' annToMask (polygons, several
    polygons merged, compressed and uncompressed RLE)."""
    venv_python()
    truth = make_folder(tmp_path / "ds")
    for i, (w, h) in enumerate(SIZES):
        batches, counts, _ = run_batches(
            tmp_path / "ds", "instance-masks=true box-min-size=0 "
            "box-min-area=0", batch="batch-size=1")
        break
    # one image a batch: each at its own size
    for i, b in enumerate(batches):
        w, h = SIZES[i]
        check_reference(tmp_path, {f"x{i}": truth[f"x{i}"]}, [b], "stretch",
                        (h, w), sanitize=False, raw_masks=True)
    assert counts["sanitized"] == 0


@pytest.mark.parametrize("decode,mode,shorter", [
    ("width=64 height=48 flip=random-horizontal seed=3", "stretch", 0),
    ("width=56 height=56 mode=center-crop resize-shorter=64", "center-crop",
     64),
    ("width=56 height=56 mode=center-crop resize-shorter=40", "center-crop",
     40),
    ("width=64 height=64 mode=random-resized-crop scale-min=0.3 "
     "flip=random-horizontal seed=11", "random-resized-crop", 0),
], ids=["stretch-flip", "center-crop", "center-crop-padded", "rrc-flip"])
def test_objects_equal_torchvision(tmp_path, decode, mode, shorter):
    venv_python()
    truth = make_folder(tmp_path / "ds")
    size = [int(v.split("=")[1]) for v in decode.split()[:2]][::-1]
    batches, counts, _ = run_batches(tmp_path / "ds",
                                     decode + " instance-masks=true")
    assert [b["names"][2:] for b in batches[:1]] == [[
        "json/boxes", "json/offsets", "json/labels", "json/area",
        "json/iscrowd", "json/masks"]]
    assert counts["sanitized"] >= len(SIZES)     # the slivers at least
    check_reference(tmp_path, truth, batches, mode, size, shorter)


def test_shard_json_member(tmp_path):
    """A WebDataset shard's json member {"annotations": [...]}, no masks:
    five tensors, boxes as torchvision's."""
    venv_python()
    truth = make_shard(tmp_path / "s.tar")
    batches, _, _ = run_batches(tmp_path / "s.tar",
                                "width=64 height=48 flip=random-horizontal")
    assert batches[0]["names"][2:] == ["json/boxes", "json/offsets",
                                       "json/labels", "json/area",
                                       "json/iscrowd"]
    check_reference(tmp_path, truth, batches, "stretch", [48, 64],
                    masks=False)


def test_hostile_annotations(tmp_path):
    """Bad annotations are dropped, counted and warned naming the sample
    and the annotation; boxes outside the image or empty are kept for the
    geometry and sanitizing to judge; the good ones go on."""
    root = tmp_path / "ds" / "c"
    root.mkdir(parents=True)
    Image.new("RGB", (40, 30)).save(root / "a.png")
    good = dict(id=1, category_id=7, bbox=[2, 3, 10, 8],
                segmentation=[[2, 3, 12, 3, 12, 11, 2, 11]])
    anns = [good,
            dict(id=2, category_id=7, bbox=[1, 2, 3]),
            dict(id=3, category_id=7, bbox=[1, 2, "x", 4]),
            dict(id=4, category_id=7, bbox=[1, 2, 3, 4],
                 segmentation=[[1, 2, 3, 4]]),
            dict(id=5, category_id=7, bbox=[1, 2, 3, 4],
                 segmentation=dict(size=[30, 40], counts=[5, 6, 7])),
            dict(id=6, category_id="cat", bbox=[1, 2, 3, 4]),
            dict(id=7, category_id=7, bbox=[1, 2, 3, 4],
                 segmentation=dict(size=[30, 40], counts="0\x7f")),
            dict(id=8, category_id=7, bbox=[50, 40, 5, 5],
                 segmentation=[[50, 40, 55, 40, 55, 45]]),
            dict(id=9, category_id=7, bbox=[5, 5, -3, 4],
                 segmentation=[[5, 5, 2, 5, 2, 9]]),
            "not an object"]
    # NaN is JSON as Python writes it
    text = json.dumps(anns)[:-1] + ', {"id": 10, "category_id": 7, ' \
        '"bbox": [NaN, 1, 2, 3]}]'
    (root / "a.json").write_text(text)
    batches, counts, warnings = run_batches(
        tmp_path / "ds", "instance-masks=true max-errors=-1",
        batch="batch-size=1")
    assert len(batches) == 1
    b = batches[0]
    assert b["labels"].tolist() == [7]
    assert b["boxes"].tolist() == [2, 3, 12, 11]
    assert counts["bad-annotation"] == 8
    assert counts["box-outside-image"] == 1
    assert counts["box-empty"] == 1
    assert counts["sanitized"] == 2
    text = " ".join(warnings)
    assert "a.png" in text
    for words in ("annotation 2: no \"bbox\" of 4 numbers",
                  "annotation 4: a polygon of 2 points",
                  "annotation 5: RLE counts sum to 18, not 30x40",
                  "annotation 6: no integer \"category_id\"",
                  "annotation 10: a \"bbox\" that is not finite",
                  "annotation 8: a box reaching past the image",
                  "annotation #9 (no id): not an object"):
        assert words in text, (words, text)


def test_not_annotations_is_a_bad_field(tmp_path):
    root = tmp_path / "ds" / "c"
    root.mkdir(parents=True)
    for name, text in (("a", "[]"), ("b", '{"annotations": 5}'), ("c", "[]")):
        Image.new("RGB", (20, 10)).save(root / f"{name}.png")
        (root / f"{name}.json").write_text(text)
    batches, counts, warnings = run_batches(
        tmp_path / "ds", "max-errors=-1", batch="batch-size=4")
    assert [b["offsets"].tolist() for b in batches] == [[0, 0, 0]]
    assert any("b.png" in w and "not an array" in w for w in warnings), \
        warnings


def test_c_example_prints_objects(tmp_path):
    """tests/examples/batch-fields reads the flat form in C: each sample's
    labels and boxes from NAME/offsets, NAME/labels and NAME/boxes."""
    root = tmp_path / "ds" / "c"
    root.mkdir(parents=True)
    for i in range(3):
        Image.new("RGB", (40, 20)).save(root / f"x{i}.png")
        anns = [dict(category_id=10 + i + j, bbox=[4 * j, 2, 8, 4])
                for j in range(i)]
        (root / f"x{i}.json").write_text(json.dumps(anns))
    example = os.path.join(os.environ["SPDL_BUILD_ROOT"], "tests", "examples",
                           "batch-fields", "spdl-batch-fields")
    res = subprocess.run([example, str(tmp_path / "ds"), "json:objects"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = [line for line in res.stdout.splitlines()
             if line.startswith("sample ")]
    # spdl-batch-fields decodes at 224x224: x scaled by 224/40, y by 224/20
    assert lines == [
        "sample 0 label 0: json=[]",
        "sample 1 label 0: json=[11 (0 22.4 44.8 67.2)]",
        "sample 2 label 0: json=[12 (0 22.4 44.8 67.2), "
        "13 (22.4 22.4 67.2 67.2)]"], lines


def test_missing_annotations_under_empty(tmp_path):
    """json:objects:empty: an image without its sidecar has no object
    (the fill value []), one with a bad value too, with a warning."""
    root = tmp_path / "ds" / "c"
    root.mkdir(parents=True)
    for name in "abc":
        Image.new("RGB", (20, 10)).save(root / f"{name}.png")
    (root / "a.json").write_text('[{"category_id": 4, "bbox": [1, 1, 5, 5], '
                                 '"segmentation": [[1, 1, 6, 1, 6, 6]]}]')
    (root / "c.json").write_text('{"annotations": "none"}')
    batches, _, warnings = run_batches(
        tmp_path / "ds", "instance-masks=true", batch="batch-size=4",
        fields="json:objects:empty")
    b = batches[0]
    assert b["offsets"].tolist() == [0, 1, 1, 1]
    assert b["labels"].tolist() == [4]
    assert b["masks"].reshape(-1, 10, 20).shape == (1, 10, 20)
    assert any("c.png" in w and "no object instead" in w for w in warnings), \
        warnings


def test_coco_file_equals_cocodetection(tmp_path):
    """spdlsrc annotations= (a COCO instances file) ! spdldecode !
    spdlbatch: the objects of each image equal torchvision's CocoDetection
    wrapped for transforms v2, then resized_crop, flip and
    SanitizeBoundingBoxes, masks included; image ids in CocoDetection's
    order."""
    venv_python()
    truth = make_folder(tmp_path / "ds")
    images, annotations, order = [], [], []
    for i, name in enumerate(sorted(truth)):
        h, w = truth[name]["size"]
        image_id = 900 - 97 * i         # listed out of id order
        truth[name]["image_id"] = image_id
        images.append(dict(id=image_id, file_name=f"c/{name}.png", width=w,
                           height=h))
        for a in truth[name]["anns"]:
            annotations.append(dict(a, image_id=image_id))
    categories = [dict(id=c, name=f"c{c}") for c in range(1, 91)]
    (tmp_path / "instances.json").write_text(json.dumps(dict(
        images=images, annotations=annotations, categories=categories)))
    order = [n for _, n in sorted((truth[n]["image_id"], n) for n in truth)]
    batches, _, _ = run_batches(
        tmp_path / "ds", "width=64 height=64 mode=random-resized-crop "
        "scale-min=0.3 flip=random-horizontal seed=5 instance-masks=true",
        source=f"annotations={tmp_path / 'instances.json'}", name="objects")
    assert batches[0]["names"][2:8] == [
        "objects/boxes", "objects/offsets", "objects/labels", "objects/area",
        "objects/iscrowd", "objects/masks"]
    check_reference(tmp_path, truth, batches, "random-resized-crop", [64, 64],
                    coco=dict(root=str(tmp_path / "ds"),
                              file=str(tmp_path / "instances.json")),
                    order=order)


def test_objects_count_against_16_tensors(tmp_path):
    """An objects field takes 5 tensors, 6 with masks: images, labels, 4
    strings (8), an int and objects make 16 and go; with masks 17 are
    refused when the stream starts, with the count."""
    root = tmp_path / "ds" / "c"
    root.mkdir(parents=True)
    Image.new("RGB", (20, 10)).save(root / "a.png")
    for ext in "pqrs":
        (root / f"a.{ext}.txt").write_text("x")
    (root / "a.n.txt").write_text("3")
    (root / "a.json").write_text("[]")
    fields = "p.txt,q.txt,r.txt,s.txt,n.txt:int,json:objects"
    batches, _, _ = run_batches(tmp_path / "ds", "", batch="batch-size=1",
                                fields=fields)
    assert len(batches[0]["names"]) == 16
    pipeline = Gst.parse_launch(
        f'spdlsrc location={tmp_path / "ds"} fields="{fields}" ! spdldecode '
        "instance-masks=true ! spdlbatch batch-size=1 ! fakesink")
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(
        30 * Gst.SECOND, Gst.MessageType.ERROR | Gst.MessageType.EOS)
    pipeline.set_state(Gst.State.NULL)
    assert msg is not None and msg.type == Gst.MessageType.ERROR
    text = msg.parse_error()[0].message
    assert "need 15 tensors beside the media's 2" in text, text
    assert "objects 5, or 6 with masks" in text, text
