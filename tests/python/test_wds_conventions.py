"""WebDataset's conventions on shards written by webdataset's own
ShardWriter: spdlsrc groups members as webdataset groups them, takes the
image and label members image-key and label-key name (JSON labels by
label-field), and yields the same keys, image bytes and labels as
webdataset's reader with to_tuple(); every group that is no sample is
counted by reason and named in a warning."""
import hashlib
import io
import json
import os
import subprocess
import tarfile

import numpy as np
import pytest
from gi.repository import Gst  # noqa: F401 (spdlgst's Gst, initialized)
import spdlgst  # noqa: F401

from test_shards import run_src

WRITER = r"""
import io, json, sys
import numpy as np
import webdataset as wds
from PIL import Image

def image(v, fmt):
    b = io.BytesIO()
    Image.fromarray(np.full((8, 12, 3), v, np.uint8)).save(b, fmt)
    return b.getvalue()

with wds.TarWriter(sys.argv[1]) as sink:
    for i in range(12):
        s = {"__key__": "s%03d" % i,
             "input.jpg": image(i * 10, "JPEG"),
             "output.png": image(255 - i * 10, "PNG"),
             "txt": b"caption"}
        if i == 3:
            s["json"] = {"label": "cat"}            # not an integer
        elif i == 4:
            pass                                    # no label member
        elif i == 5:
            s["json"] = {"label": 2 ** 40}          # out of range
        elif i == 6:
            del s["input.jpg"]                      # no input image
        else:
            s["json"] = {"label": i, "meta": {"h": [1, 2.5]}}
        sink.write(s)
    sink.write({"__key__": "meta-only", "json": {"label": 1}})
"""

READER = r"""
import hashlib, json, sys
import webdataset as wds
image, label = sys.argv[2], sys.argv[3]
out = []
ds = wds.WebDataset(sys.argv[1], shardshuffle=False, empty_check=False,
                    handler=wds.warn_and_continue).to_tuple(
    "__key__", image, label if label != "-" else image,
    handler=wds.warn_and_continue)
for key, img, lab in ds:
    if label == "-":
        lab = -1
    elif label.endswith("json"):
        lab = json.loads(lab)["label"]
        if not isinstance(lab, int) or not 0 <= lab < 2 ** 31:
            continue
    else:
        lab = int(lab)
    print(key, lab, hashlib.sha1(img).hexdigest())
"""


def venv_python():
    python = os.path.join(os.environ.get("SPDL_TEST_VENV", ""), "bin", "python")
    if not os.path.exists(python):
        pytest.skip("no test venv with webdataset (tools/make-test-venv)")
    return python


@pytest.fixture(scope="module")
def wds_shard(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("wds") / "multi-000000.tar")
    subprocess.run([venv_python(), "-c", WRITER, path], check=True, timeout=120)
    return path


def theirs(path, image, label):
    res = subprocess.run([venv_python(), "-c", READER, "file:" + path, image, label],
                         check=True, capture_output=True, text=True, timeout=120)
    return [tuple(line.split()) for line in res.stdout.splitlines()]


def ours(path, props):
    out, warnings, error, counts = run_src('location="%s" shard-cache="" %s'
                                           % (path, props))
    assert error is None, error
    got = [(p.rsplit(":", 1)[1].split(".")[0], str(label),
            hashlib.sha1(data).hexdigest()) for _, label, _, p, data in out]
    return got, warnings, counts


@pytest.mark.parametrize("elastic", ["true", "false"])
@pytest.mark.parametrize("image", ["input.jpg", "output.png"])
def test_json_labels_and_image_key_match_webdataset(wds_shard, image, elastic):
    got, warnings, counts = ours(wds_shard, 'image-key="%s" label-key=json '
                                 'elastic=%s' % (image, elastic))
    want = theirs(wds_shard, image, "json")
    assert got == want and len(want) >= 8
    # every group that is no sample: counted and named
    assert counts.get_value("bad-label") == 2
    # s006 has no input.jpg, and no label member either
    assert counts.get_value("no-label") == (1 if image == "input.jpg" else 2)
    assert counts.get_value("no-image") == (2 if image == "input.jpg" else 1)
    named = {"s003": "bad-label", "s004": "no-label", "s005": "bad-label",
             "meta-only": "no-image", "s006": "either"}
    for key in named:
        assert sum(":%s" % key in w for w in warnings) == 1, (key, warnings)
    assert len(warnings) == len(named)


def test_default_rules(wds_shard):
    """No image-key: input.jpg ends in jpg (first of the list) and is the
    image; no label-key: no .cls, label -1, nothing skipped for it (one
    warning suggests label-key=json)."""
    got, warnings, counts = ours(wds_shard, "")
    want = theirs(wds_shard, "input.jpg", "-")
    # s006 has no input.jpg: its output.png is the image by default
    assert [g for g in got if g[0] != "s006"] == want and len(want) == 11
    assert len(got) == 12
    assert counts.get_value("no-image") == 1 and len(warnings) == 2
    assert "multi-000000.tar" in warnings[0] and "label-key=json" in warnings[0]
    assert ":meta-only" in warnings[1]


def test_changed_rules_change_the_fingerprint(wds_shard):
    fingerprints = []
    for props in ({}, {"label-key": "json"}, {"label-key": "json", "label-field": "meta.h.0"}):
        src = Gst.ElementFactory.make("spdlsrc")
        src.set_property("location", wds_shard)
        src.set_property("shard-cache", "")
        for k, v in props.items():
            src.set_property(k, v)
        pipeline = Gst.Pipeline()
        sink = Gst.ElementFactory.make("fakesink")
        pipeline.add(src)
        pipeline.add(sink)
        src.link(sink)
        pipeline.set_state(Gst.State.PAUSED)
        pipeline.get_state(10 * Gst.SECOND)
        fingerprints.append(src.get_property("dataset-fingerprint"))
        pipeline.set_state(Gst.State.NULL)
    assert None not in fingerprints and len(set(fingerprints)) == 3, fingerprints


def test_dotted_keys_and_meta_names(tmp_path):
    """Keys end at the first dot of the base name (a.b.c.jpg: key "a",
    extension "b.c.jpg", an image by its last part); names without a dot
    and __KEY__ names are passed over without ending a group; a group
    of only an AVIF is "unsupported-image"."""
    path = str(tmp_path / "dots.tar")
    members = [("a.b.c.jpg", b"\xff\xd8abc"), ("a.cls", b"1"),
               ("README", b"x"), ("__key__", b"y"),
               ("x.img.jpg", b"\xff\xd8x"), ("x.cls", b"2"),
               ("y.avif", b"avif"), ("z.json", b"{}")]
    with tarfile.open(path, "w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out, warnings, error, counts = run_src('location="%s" shard-cache=""' % path)
    assert error is None
    assert [(o[1], o[3].rsplit(":", 1)[1], o[4]) for o in out] == [
        (1, "a.b.c.jpg", b"\xff\xd8abc"), (2, "x.img.jpg", b"\xff\xd8x")]
    assert counts.get_value("unsupported-image") == 1
    assert counts.get_value("no-image") == 1
    assert any(":y" in w and "avif" in w for w in warnings)
    assert any(":z" in w and "json" in w for w in warnings)
    # an image-key of the whole extension, as to_tuple("img.jpg")
    out, warnings, error, counts = run_src(
        'location="%s" shard-cache="" image-key=img.jpg label-key=cls' % path)
    assert error is None and [o[4] for o in out] == [b"\xff\xd8x"]
    assert counts.get_value("no-image") == 2
    assert counts.get_value("unsupported-image") == 1


@pytest.mark.parametrize("index", ["learned", "make-shards"])
def test_dotted_key_labels_as_their_images(tmp_path, index):
    """By default a label member is found as the image is: "a.b.cls" beside
    "a.b.jpg" (key "a") is its label, not -1; an exact ".cls" wins over
    one by its last part. The learned index and make-shards' agree."""
    from test_shards import MAKE_SHARDS
    folder = tmp_path / "shards"
    folder.mkdir()
    path = str(folder / "dots-000000.tar")
    members = [("a.b.jpg", b"\xff\xd8a"), ("a.b.cls", b"4"),
               ("c.jpg", b"\xff\xd8c"), ("c.v.cls", b"7"), ("c.cls", b"5"),
               ("d.x.jpg", b"\xff\xd8d"), ("d.x.cls", b"no")]
    with tarfile.open(path, "w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    if index == "make-shards":
        res = subprocess.run(["/usr/bin/python3", MAKE_SHARDS, "--index-only",
                              str(folder)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert "d.x.cls" in res.stderr and "bad-label" in res.stderr
    out, warnings, error, counts = run_src('location="%s" shard-cache=""' % path)
    assert error is None
    assert [(o[1], o[4]) for o in out] == [(4, b"\xff\xd8a"), (5, b"\xff\xd8c")]
    assert counts.get_value("bad-label") == 1
    assert any("d.x.cls" in w for w in warnings), warnings


def test_no_sample_at_all_says_why(tmp_path):
    path = str(tmp_path / "labels-only.tar")
    with tarfile.open(path, "w") as tar:
        for i in range(3):
            info = tarfile.TarInfo("k%d.json" % i)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"{}"))
    out, warnings, error, counts = run_src('location="%s" shard-cache=""' % path)
    assert error is not None and "0 samples" in error and "no-image: 3" in error
