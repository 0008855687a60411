"""spdlsrc with annotations=: a COCO instances file's images are the
samples (in torchvision CocoDetection's order), each with its annotations
("objects") and image_id; locally, over HTTP (http.server on 127.0.0.1) and
on S3 (moto_server with its signature checks on)."""
import json
import os
import subprocess

import pytest
from gi.repository import Gst
from PIL import Image

from test_remote import http_server
from test_s3 import MotoServer, REGION, s3_env, venv_python

FIELDS = "objects:objects:skip,image_id:int:skip"


def make_coco(root, n=14, seed=5, pretty=False):
    """An image folder and its instances file: image ids out of order and
    not contiguous, 0 to 3 annotations per image (some none), listed
    interleaved across images, polygons and a crowd RLE. Returns
    (folder, annotations path, the file's dict)."""
    import random
    rng = random.Random(seed)
    folder = root / "images"
    (folder / "sub").mkdir(parents=True)
    images, annotations, empty = [], [], set()
    for i in range(n):
        image_id = 1000 - 37 * i if i % 2 else 7 * i + 3
        name = ("sub/" if i % 3 == 0 else "") + "img%02d.jpg" % i
        w, h = 20 + i, 16 + (i % 5)
        Image.new("RGB", (w, h), (i * 9, 100, 200 - i)).save(folder / name)
        images.append({"id": image_id, "file_name": name, "width": w,
                       "height": h})
        if i % 4 == 1:
            empty.add(image_id)
    rng.shuffle(images)
    ann_id = 1
    for _ in range(3):
        for im in images:
            if im["id"] in empty or rng.random() < 0.3:
                continue
            ann = {"id": ann_id, "image_id": im["id"],
                   "category_id": rng.choice([1, 3, 18]),
                   "bbox": [rng.randint(0, 5), 1.5, 4, 3.25],
                   "area": 13.0, "iscrowd": 0,
                   "segmentation": [[0, 0, 4, 0, 4, 3]]}
            if ann_id % 7 == 0:
                ann["iscrowd"] = 1
                ann["segmentation"] = {"counts": [0, 6, 3],
                                       "size": [im["height"], im["width"]]}
            annotations.append(ann)
            ann_id += 1
    data = {"info": {"description": "test"}, "images": images,
            "annotations": annotations,
            "categories": [{"id": c, "name": "c%d" % c} for c in (1, 3, 18)]}
    path = root / "instances.json"
    with open(path, "w") as f:
        json.dump(data, f, indent=2 if pretty else None)
    return folder, path, data


def expected(data, drop_empty=False):
    """[(image_id, file_name, objects text)] as torchvision's CocoDetection
    gives them: ids sorted, each image's annotations in file order."""
    out = []
    for im in sorted(data["images"], key=lambda im: im["id"]):
        anns = [a for a in data["annotations"] if a["image_id"] == im["id"]]
        if drop_empty and not anns:
            continue
        out.append((im["id"], im["file_name"],
                    json.dumps(anns, separators=(",", ":"))))
    return out


def run_coco(props, timeout_s=60):
    """The samples of spdlsrc @props: [dict(path, image_id, objects,
    position, bytes)], warnings (message + debug), the error, the
    annotation-counts and error-counts structures, num-samples, and the
    caps' fields."""
    pipeline = Gst.parse_launch(
        "spdlsrc name=src %s ! appsink name=sink sync=false" % props)
    sink, bus = pipeline.get_by_name("sink"), pipeline.get_bus()
    src = pipeline.get_by_name("src")
    pipeline.set_state(Gst.State.PLAYING)
    out, warnings, error, fields = [], [], None, None
    try:
        while True:
            sample = sink.emit("try-pull-sample", Gst.SECOND)
            while (msg := bus.pop_filtered(Gst.MessageType.ERROR |
                                           Gst.MessageType.WARNING)):
                if msg.type == Gst.MessageType.ERROR:
                    error = error or msg.parse_error()[0].message
                else:
                    err, debug = msg.parse_warning()
                    warnings.append(err.message + " | " + (debug or ""))
            if sample is None:
                if error or sink.get_property("eos"):
                    break
                timeout_s -= 1
                assert timeout_s > 0, "pipeline timed out"
                continue
            fields = sample.get_caps().get_structure(0).get_string("fields")
            buf = sample.get_buffer()
            s = buf.get_custom_meta("GstSpdlSampleMeta").get_structure()
            record = s.get_value("record")
            ok, info = buf.map(Gst.MapFlags.READ)
            assert ok
            out.append(dict(path=s.get_value("path"),
                            position=s.get_value("position"),
                            label=s.get_value("label"),
                            objects=record.get_value("v0"),
                            image_id=record.get_value("v1"),
                            extra=[record.get_value("v%d" % i) for i in
                                   range(2, record.n_fields())],
                            bytes=bytes(info.data)))
            buf.unmap(info)
        counts = src.get_property("annotation-counts")
        errors = src.get_property("error-counts")
        n = src.get_property("num-samples")
    finally:
        pipeline.set_state(Gst.State.NULL)
    return dict(samples=out, warnings=warnings, error=error, counts=counts,
                errors=errors, num_samples=n, fields=fields)


def check_samples(got, want, folder_bytes):
    assert [(s["image_id"], s["objects"]) for s in got] == \
        [(i, o) for i, _, o in want]
    for s, (_, name, _) in zip(got, want):
        assert s["path"].endswith("/" + name)
        assert s["bytes"] == folder_bytes[name]
        assert s["label"] == -1


def folder_bytes(folder):
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in folder.rglob("*.jpg")}


@pytest.mark.parametrize("pretty", [False, True])
def test_samples_are_the_images_by_id_with_their_objects(tmp_path, pretty):
    folder, ann, data = make_coco(tmp_path, pretty=pretty)
    r = run_coco(f'location="{folder}" annotations="{ann}"')
    assert r["error"] is None and r["warnings"] == []
    want = expected(data)
    assert any(o == "[]" for _, _, o in want)          # empty images kept
    check_samples(r["samples"], want, folder_bytes(folder))
    assert r["num_samples"] == len(data["images"])
    assert r["fields"] == FIELDS
    assert r["counts"].get_value("images") == len(data["images"])
    assert r["counts"].get_value("annotations") == len(data["annotations"])
    for reason in ("unknown-image", "duplicate-image", "unknown-category",
                   "bad-annotation", "bad-image"):
        assert r["counts"].get_value(reason) == 0


def test_equal_to_torchvision_coco_detection(tmp_path):
    """The order, image ids and targets torchvision 0.29's CocoDetection
    (pycocotools) gives, in the torch 2 venv."""
    py = os.path.join(os.environ.get("SPDL_TORCH2_VENV", ""), "bin", "python")
    if not os.path.exists(py):
        pytest.skip("no torch 2 venv (tools/make-test-venv)")
    folder, ann, data = make_coco(tmp_path, n=20, seed=11)
    script = (
        "import json, sys\n"
        "from torchvision.datasets import CocoDetection\n"
        "ds = CocoDetection(sys.argv[1], sys.argv[2])\n"
        "print(json.dumps([[i, ds.coco.imgs[i]['file_name'],"
        " ds._load_target(i)] for i in ds.ids]))\n")
    done = subprocess.run([py, "-c", script, str(folder), str(ann)],
                          check=True, capture_output=True, text=True)
    reference = json.loads(done.stdout.strip().splitlines()[-1])
    r = run_coco(f'location="{folder}" annotations="{ann}"')
    assert r["error"] is None
    assert [(s["image_id"], s["path"].split("/images/", 1)[1],
             json.loads(s["objects"])) for s in r["samples"]] == \
        [tuple(x) for x in reference]


def test_empty_images_dropped_at_listing(tmp_path):
    folder, ann, data = make_coco(tmp_path)
    r = run_coco(f'location="{folder}" annotations="{ann}" empty-images=drop')
    want = expected(data, drop_empty=True)
    assert 0 < len(want) < len(data["images"])
    assert r["error"] is None
    check_samples(r["samples"], want, folder_bytes(folder))
    assert r["num_samples"] == len(want)
    assert r["counts"].get_value("images") == len(want)


def test_hostile_annotations_counted_and_warned(tmp_path):
    folder, ann, data = make_coco(tmp_path, n=6)
    first = sorted(data["images"], key=lambda im: im["id"])[0]
    data["images"].append(dict(first, file_name="sub/img03.jpg"))  # again
    data["images"].append({"id": "x", "file_name": "img01.jpg"})   # bad
    data["annotations"] += [
        {"id": 9001, "image_id": 123456, "category_id": 1},     # no image
        {"id": 9002, "image_id": first["id"], "category_id": 77},
        [1, 2, 3],
        {"id": 9004, "image_id": "%d" % first["id"]},
        {"id": 9005, "category_id": 1},
    ]
    ann.write_text(json.dumps(data))
    r = run_coco(f'location="{folder}" annotations="{ann}"')
    assert r["error"] is None
    counts = r["counts"]
    assert [counts.get_value(k) for k in
            ("unknown-image", "duplicate-image", "unknown-category",
             "bad-annotation", "bad-image")] == [1, 1, 1, 3, 1]
    ok = [a for a in data["annotations"] if isinstance(a, dict) and
          a.get("id") not in (9001, 9004, 9005)]
    want = expected(dict(data, images=data["images"][:-2], annotations=ok))
    check_samples(r["samples"], want, folder_bytes(folder))
    # the unknown category kept, raw, in file order
    assert '"category_id":77' in r["samples"][0]["objects"]

    def warned(*words):
        return any(all(w in m for w in words) for m in r["warnings"])
    name = str(ann)
    assert warned(name, "annotation id 9001", "123456", "unknown-image")
    assert warned(name, "image id %d" % first["id"], "sub/img03.jpg",
                  "duplicate-image")
    assert warned(name, "annotation id 9002", "77", "unknown-category")
    assert warned(name, "is an array", "bad-annotation")
    assert warned(name, "annotation id 9004", "image_id", "bad-annotation")
    assert warned(name, "annotation id 9005", "bad-annotation")
    assert warned(name, "no integer \"id\"", "bad-image")
    assert len(r["warnings"]) == 7


def test_missing_image_file_skipped_as_unreadable(tmp_path):
    folder, ann, data = make_coco(tmp_path, n=6)
    gone = sorted(data["images"], key=lambda im: im["id"])[2]
    (folder / gone["file_name"]).unlink()
    r = run_coco(f'location="{folder}" annotations="{ann}"')
    assert r["error"] is None
    want = [w for w in expected(data) if w[1] != gone["file_name"]]
    check_samples(r["samples"], want, folder_bytes(folder))
    assert r["errors"].get_value("unreadable") == 1
    assert any(gone["file_name"] in w for w in r["warnings"])


@pytest.mark.parametrize("cut", ["truncated", "broken", "not-coco", "absent"])
def test_broken_annotations_are_an_error_naming_file_and_where(tmp_path, cut):
    folder, ann, data = make_coco(tmp_path, n=4)
    text = ann.read_text()
    if cut == "truncated":
        ann.write_text(text[:len(text) // 2])
        says = "byte %d" % (len(text) // 2)
    elif cut == "broken":
        at = text.index('"annotations"')
        ann.write_text(text[:at] + "," + text[at:])
        says = "byte %d" % at
    elif cut == "not-coco":
        ann.write_text(json.dumps({"annotations": []}))
        says = "no \"images\" array"
    else:
        ann.unlink()
        says = "No such file"
    r = run_coco(f'location="{folder}" annotations="{ann}"')
    assert r["samples"] == []
    assert r["error"] and str(ann) in r["error"] and says in r["error"], \
        r["error"]


def test_location_required(tmp_path):
    folder, ann, data = make_coco(tmp_path, n=2)
    r = run_coco(f'annotations="{ann}"')
    assert r["error"] and "location" in r["error"]


def test_order_shards_and_resume_as_folders(tmp_path):
    """Shuffled epochs, ranks and a resumed offset follow spdlsrc's one
    rule over the listed images: rank r of W at O + r, O + r + W, ..."""
    folder, ann, data = make_coco(tmp_path, n=13)
    base = f'location="{folder}" annotations="{ann}" shuffle=true seed=4'
    whole = run_coco(base)["samples"]
    assert len(whole) == 13
    by_position = {s["position"]: (s["image_id"], s["objects"])
                   for s in whole}
    assert sorted(s["image_id"] for s in whole) == \
        sorted(im["id"] for im in data["images"])
    assert [s["image_id"] for s in whole] != \
        sorted(s["image_id"] for s in whole)             # shuffled
    for world, offset in ((2, 0), (3, 4), (1, 6)):
        ranks = [run_coco(f"{base} num-shards={world} shard-index={r} "
                          f"start-offset={offset}") for r in range(world)]
        m = -(-(13 - offset) // world)
        for r, got in enumerate(ranks):
            assert got["num_samples"] == -(-13 // world)  # a whole epoch
            positions = [offset + r + k * world for k in range(m)]
            assert [s["position"] for s in got["samples"]] == positions
            assert [(s["image_id"], s["objects"]) for s in got["samples"]] \
                == [by_position[p % 13] for p in positions]


def test_sidecar_fields_after_objects_and_image_id(tmp_path):
    folder, ann, data = make_coco(tmp_path, n=5)
    for im in data["images"]:
        stem = os.path.splitext(im["file_name"])[0]
        (folder / (stem + ".txt")).write_text("caption %d" % im["id"])
    r = run_coco(f'location="{folder}" annotations="{ann}" fields=txt')
    assert r["error"] is None
    assert r["fields"] == FIELDS + ",txt:string:skip"
    assert [s["extra"] for s in r["samples"]] == \
        [["caption %d" % i] for i, _, _ in expected(data)]


def test_annotations_and_images_over_http(tmp_path):
    folder, ann, data = make_coco(tmp_path)
    server = http_server(str(tmp_path))
    try:
        r = run_coco(f'location="{server.url}/images" '
                     f'annotations="{server.url}/instances.json"')
        missing = run_coco(f'location="{server.url}/images" '
                           f'annotations="{server.url}/nothing.json"')
    finally:
        server.stop()
    assert r["error"] is None and r["warnings"] == []
    check_samples(r["samples"], expected(data), folder_bytes(folder))
    assert all(s["path"].startswith(server.url + "/images/")
               for s in r["samples"])
    assert missing["samples"] == [] and "nothing.json" in missing["error"]
    assert "404" in missing["error"]


@pytest.fixture(scope="module")
def coco_s3(tmp_path_factory):
    """moto_server holding a COCO set under s3://data/coco/, signatures
    checked once it is written."""
    python = venv_python()
    root = tmp_path_factory.mktemp("coco-s3")
    folder, ann, data = make_coco(root)
    server = MotoServer(python)
    setup = (
        "import json, os, sys, boto3\n"
        "url, root, region = sys.argv[1:4]\n"
        "kw = dict(endpoint_url=url, region_name=region,"
        " aws_access_key_id='AKIDSETUP', aws_secret_access_key='setup')\n"
        "iam = boto3.client('iam', **kw)\n"
        "iam.create_user(UserName='loader')\n"
        "iam.put_user_policy(UserName='loader', PolicyName='data',"
        " PolicyDocument=json.dumps({'Version': '2012-10-17', 'Statement':"
        " [{'Effect': 'Allow', 'Action': ['s3:GetObject', 's3:ListBucket'],"
        " 'Resource': ['arn:aws:s3:::data', 'arn:aws:s3:::data/*']}]}))\n"
        "k = iam.create_access_key(UserName='loader')['AccessKey']\n"
        "s3 = boto3.client('s3', **kw)\n"
        "s3.create_bucket(Bucket='data', CreateBucketConfiguration="
        "{'LocationConstraint': region})\n"
        "for d, _, files in os.walk(root):\n"
        "    for f in files:\n"
        "        p = os.path.join(d, f)\n"
        "        s3.upload_file(p, 'data', 'coco/' + os.path.relpath(p, root))\n"
        "print(json.dumps({'loader': [k['AccessKeyId'],"
        " k['SecretAccessKey']]}))\n")
    try:
        out = subprocess.run([python, "-c", setup, server.url, str(root),
                              REGION], check=True, timeout=180,
                             capture_output=True, text=True).stdout
        server.keys = json.loads(out)
        server.require_signatures()
        yield server, folder, data
    finally:
        server.stop()


def test_annotations_and_images_on_s3(coco_s3, monkeypatch):
    server, folder, data = coco_s3
    s3_env(monkeypatch, server)
    r = run_coco('location="s3://data/coco/images" '
                 'annotations="s3://data/coco/instances.json"')
    assert r["error"] is None and r["warnings"] == []
    check_samples(r["samples"], expected(data), folder_bytes(folder))
    assert all(s["path"].startswith("s3://data/coco/images/")
               for s in r["samples"])
    # unsigned by a stranger's key: refused, the file named, no secret
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
    r = run_coco('location="s3://data/coco/images" '
                 'annotations="s3://data/coco/instances.json"')
    assert r["samples"] == [] and "instances.json" in r["error"]
    assert "wrong-secret" not in r["error"]


def test_file_names_with_spaces_and_unicode_over_http(tmp_path):
    """COCO's file_name is a file's name, not a URL: under an http://
    location "IMG 0001.jpg", "ü/ñ.jpg" and "50%.jpg" are fetched
    percent-encoded, as they are read from a local folder."""
    root = tmp_path / "images"
    (root / "ü").mkdir(parents=True)
    names = ["IMG 0001.jpg", "ü/ñ.jpg", "50%.jpg"]
    for i, name in enumerate(names):
        Image.new("RGB", (8 + i, 8), (i * 60, 0, 0)).save(root / name)
    doc = {"images": [dict(id=i + 1, file_name=n, width=8 + i, height=8)
                      for i, n in enumerate(names)],
           "annotations": [dict(id=1, image_id=2, category_id=1,
                                bbox=[1, 1, 2, 2])],
           "categories": [dict(id=1, name="x")]}
    (tmp_path / "instances.json").write_text(json.dumps(doc,
                                                        ensure_ascii=False))
    server = http_server(str(tmp_path))
    try:
        r = run_coco(f'location="{server.url}/images" '
                     f'annotations="{server.url}/instances.json"')
    finally:
        server.stop()
    assert r["error"] is None and r["warnings"] == [], r["warnings"]
    assert [s["image_id"] for s in r["samples"]] == [1, 2, 3]
    assert [s["bytes"] for s in r["samples"]] == \
        [(root / n).read_bytes() for n in names]
