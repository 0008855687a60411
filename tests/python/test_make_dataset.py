"""bench/make-dataset and spdlgst.sampledata: the project's own ImageNet-like
dataset, made without photos."""
import os
import random
import subprocess
import sys

from PIL import Image

from spdlgst import sampledata

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_DATASET = os.path.join(HERE, "..", "..", "bench", "make-dataset")


def make(out, *args):
    done = subprocess.run([sys.executable, MAKE_DATASET, "--out", str(out), *args],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def tree(root):
    """{relative path: bytes} of every file under root."""
    files = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, root)] = f.read()
    return files


def test_layout_count_and_labels(tmp_path):
    out = make(tmp_path / "a", "--count", "23", "--classes", "5", "--seed", "3")
    assert "23 images, 5 classes" in out
    files = tree(tmp_path / "a")
    assert len(files) == 23
    assert sorted(os.listdir(tmp_path / "a")) == [f"n{c:08d}" for c in range(5)]
    for rel, data in files.items():
        folder, name = rel.split(os.sep)
        index = int(name[len(folder) + 1:-len(".JPEG")])
        assert name == f"{folder}_{index}.JPEG" and folder == f"n{index % 5:08d}"
        assert data[:2] == b"\xff\xd8"
    assert sorted(int(r.split("_")[1].split(".")[0]) for r in files) == list(range(23))


def test_deterministic_for_a_seed_whatever_the_jobs(tmp_path):
    make(tmp_path / "a", "--count", "6", "--classes", "2", "--seed", "7", "--jobs", "2")
    make(tmp_path / "b", "--count", "6", "--classes", "2", "--seed", "7", "--jobs", "1")
    make(tmp_path / "c", "--count", "6", "--classes", "2", "--seed", "8", "--jobs", "1")
    a, b, c = tree(tmp_path / "a"), tree(tmp_path / "b"), tree(tmp_path / "c")
    assert a == b
    assert a.keys() == c.keys() and all(a[k] != c[k] for k in a)


def test_fixed_size(tmp_path):
    make(tmp_path / "a", "--count", "3", "--classes", "1", "--size", "320x200")
    for rel in tree(tmp_path / "a"):
        with Image.open(tmp_path / "a" / rel) as img:
            assert img.size == (320, 200)
    for bad in ("320", "0x200", "axb", "320x200x3"):
        done = subprocess.run([sys.executable, MAKE_DATASET, "--out",
                               str(tmp_path / "b"), "--size", bad],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "--size" in done.stderr, bad


def test_imagenet_sizes_and_encodings():
    rng = random.Random(0)
    sizes = [sampledata.pick_size(rng) for _ in range(4000)]
    long500 = sum(max(s) == 500 for s in sizes) / len(sizes)
    assert 0.75 < long500 < 0.85
    assert all(160 <= max(s) <= 1400 and min(s) >= 16 for s in sizes)
    assert 0.65 < sum(w > h for w, h in sizes) / len(sizes) < 0.85   # landscape
    enc = [sampledata.pick_encoding(rng) for _ in range(4000)]
    assert {e["quality"] for e in enc} == set(range(88, 98))
    assert 0.07 < sum(e["subsampling"] == 0 for e in enc) / len(enc) < 0.13
    assert 0.03 < sum(e["progressive"] for e in enc) / len(enc) < 0.07


def test_content_encodes_like_photos(tmp_path):
    """Photo-like detail: at 500x375 ImageNet's JPEGs are mostly 50..150 KB;
    flat or noise-only content would be far smaller or larger."""
    sizes = [sampledata.make_image(str(tmp_path), i, 4, seed=1, size=(500, 375))[1]
             for i in range(12)]
    mean = sum(sizes) / len(sizes)
    assert 50_000 < mean < 130_000, sizes
    assert max(sizes) > 1.3 * min(sizes)        # images differ in detail
    with Image.open(next(p for p in (tmp_path / "n00000000").iterdir())) as img:
        assert img.size == (500, 375) and img.format == "JPEG"
