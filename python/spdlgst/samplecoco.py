"""COCO-like detection datasets made from nothing: for tests and benchmarks.

Each image is a procedural photo-like picture (:mod:`spdlgst.sampledata`'s
texture, gradients and grain, so that it costs what a photo costs to
decode) around COCO's 640x480, landscape and portrait, with about seven
objects drawn into it. Each object is an annotation in COCO's layout:
``segmentation`` a list of polygons (an occluded object has several),
``bbox`` [x, y, w, h] their extent, ``area`` their area; crowd regions
(``iscrowd`` 1) are run-length encoded masks, some with COCO's compressed
``counts`` string, some with the uncompressed list of counts. A few images
have no annotation. Category ids are COCO's 1..90 with its gaps; image ids
are not in file order, and the annotations are listed in no image's order
(COCO's instances files are so). Layout::

    ROOT/annotations/instances_<split>.json
    ROOT/<split>/<image id, 12 digits>.jpg

or, with shards, WebDataset tar shards whose samples are ``KEY.jpg`` and
``KEY.json`` (``{"image_id": ..., "annotations": [...]}``, one image's
annotations in the COCO layout).

Deterministic: the same seed and index give the same image and objects.
"""
import io
import json
import math
import os
import random
import tarfile

import numpy as np
from PIL import Image, ImageDraw

from .sampledata import natural_colour, natural_image

# COCO 2017's categories: 80 ids in 1..90
CATEGORIES = [
    (1, "person"), (2, "bicycle"), (3, "car"), (4, "motorcycle"),
    (5, "airplane"), (6, "bus"), (7, "train"), (8, "truck"), (9, "boat"),
    (10, "traffic light"), (11, "fire hydrant"), (13, "stop sign"),
    (14, "parking meter"), (15, "bench"), (16, "bird"), (17, "cat"),
    (18, "dog"), (19, "horse"), (20, "sheep"), (21, "cow"), (22, "elephant"),
    (23, "bear"), (24, "zebra"), (25, "giraffe"), (27, "backpack"),
    (28, "umbrella"), (31, "handbag"), (32, "tie"), (33, "suitcase"),
    (34, "frisbee"), (35, "skis"), (36, "snowboard"), (37, "sports ball"),
    (38, "kite"), (39, "baseball bat"), (40, "baseball glove"),
    (41, "skateboard"), (42, "surfboard"), (43, "tennis racket"),
    (44, "bottle"), (46, "wine glass"), (47, "cup"), (48, "fork"),
    (49, "knife"), (50, "spoon"), (51, "bowl"), (52, "banana"),
    (53, "apple"), (54, "sandwich"), (55, "orange"), (56, "broccoli"),
    (57, "carrot"), (58, "hot dog"), (59, "pizza"), (60, "donut"),
    (61, "cake"), (62, "chair"), (63, "couch"), (64, "potted plant"),
    (65, "bed"), (67, "dining table"), (70, "toilet"), (72, "tv"),
    (73, "laptop"), (74, "mouse"), (75, "remote"), (76, "keyboard"),
    (77, "cell phone"), (78, "microwave"), (79, "oven"), (80, "toaster"),
    (81, "sink"), (82, "refrigerator"), (84, "book"), (85, "clock"),
    (86, "vase"), (87, "scissors"), (88, "teddy bear"), (89, "hair drier"),
    (90, "toothbrush")]

# shares of images without objects and of crowd objects, as in COCO train
EMPTY_SHARE = 0.01
CROWD_SHARE = 0.01


def image_size(rng):
    """(width, height): COCO's 640 on the long side, 360..512 on the
    other, a quarter portrait; a few smaller ones."""
    long_side = 640 if rng.random() < 0.9 else rng.randint(320, 640)
    short_side = round(long_side * rng.choice([0.75, 0.75, 0.75, 0.5625,
                                               0.6667, 0.8, 1.0]))
    return (long_side, short_side) if rng.random() < 0.75 else (short_side, long_side)


def image_id(seed, index):
    """A COCO-style id: unique per index, not in index order."""
    return (index * 7919 + 104729 * (seed + 1)) % 999983 + index * 1000003


def _polygon(rng, cx, cy, rx, ry, points):
    """A star-shaped polygon around (cx, cy): its corners as floats."""
    angles = sorted(rng.uniform(0, 2 * math.pi) for _ in range(points))
    out = []
    for a in angles:
        r = rng.uniform(0.55, 1.0)
        out.append((cx + r * rx * math.cos(a), cy + r * ry * math.sin(a)))
    return out


def _clip(points, width, height):
    return [(min(max(x, 0.0), width - 1e-3), min(max(y, 0.0), height - 1e-3))
            for x, y in points]


def _shoelace(points):
    s = 0.0
    for (x0, y0), (x1, y1) in zip(points, points[1:] + points[:1]):
        s += x0 * y1 - x1 * y0
    return abs(s) / 2


def rle_counts(mask):
    """COCO's run lengths of a uint8 mask (H, W): column-major, starting
    with a run of zeros (pycocotools' ``encode``, uncompressed)."""
    flat = np.asarray(mask, np.uint8).flatten(order="F")
    changes = np.flatnonzero(np.diff(flat)) + 1
    bounds = np.concatenate(([0], changes, [flat.size]))
    runs = np.diff(bounds).tolist()
    if flat.size and flat[0] == 1:
        runs = [0] + runs
    return runs


def rle_string(counts):
    """COCO's compressed counts string (maskApi.c's rleToString): each
    count as a difference from the count two before (after the first two),
    in 5-bit groups with a continuation bit, offset by 48."""
    out = []
    for i, x in enumerate(counts):
        if i > 2:
            x -= counts[i - 2]
        more = True
        while more:
            c = x & 0x1f
            x >>= 5
            more = (x != -1) if (c & 0x10) else (x != 0)
            if more:
                c |= 0x20
            out.append(chr(c + 48))
    return "".join(out)


def _paint(img, mask, colour, rng):
    """Draws an object: its colour over the texture, which shows through."""
    alpha = np.asarray(mask, np.float32)[..., None] * rng.uniform(0.55, 0.8)
    img += (colour - img) * alpha


def _object(rng, img, width, height, crowd, compressed):
    """Draws one object into @img (float32 H x W x 3); returns its
    annotation without ids, or None when nothing of it is in the image."""
    small = rng.random() < 0.15
    scale = rng.uniform(0.01, 0.04) if small else rng.uniform(0.06, 0.4)
    rx, ry = scale * width, scale * height * rng.uniform(0.6, 1.6)
    cx, cy = rng.uniform(0, width), rng.uniform(0, height)
    mask = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(mask)
    if crowd:
        # a crowd: several blobs in one region, one RLE mask
        for _ in range(rng.randint(3, 8)):
            bx, by = cx + rng.uniform(-rx, rx), cy + rng.uniform(-ry, ry)
            bw, bh = rx * rng.uniform(0.2, 0.5), ry * rng.uniform(0.3, 0.7)
            draw.ellipse([bx - bw, by - bh, bx + bw, by + bh], fill=1)
        m = np.asarray(mask, np.uint8)
        if not m.any():
            return None
        ys, xs = np.nonzero(m)
        counts = rle_counts(m)
        segmentation = {"counts": rle_string(counts) if compressed else counts,
                        "size": [height, width]}
        x0, y0 = float(xs.min()), float(ys.min())
        bbox = [x0, y0, float(xs.max() + 1) - x0, float(ys.max() + 1) - y0]
        area = float(m.sum())
    else:
        # occluded objects come in parts: one polygon each
        parts = 1 if rng.random() < 0.8 else rng.randint(2, 3)
        polygons = []
        for p in range(parts):
            px = cx + (p * rx * 1.1 if parts > 1 else 0)
            points = _clip(_polygon(rng, px, cy, rx / parts ** 0.5, ry,
                                    rng.randint(5, 14)), width, height)
            if _shoelace(points) < 0.5:
                continue
            polygons.append([round(v, 2) for xy in points for v in xy])
            draw.polygon(points, fill=1)
        if not polygons:
            return None
        xs = [v for poly in polygons for v in poly[0::2]]
        ys = [v for poly in polygons for v in poly[1::2]]
        x0, y0 = min(xs), min(ys)
        bbox = [round(x0, 2), round(y0, 2), round(max(xs) - x0, 2),
                round(max(ys) - y0, 2)]
        area = round(sum(_shoelace(list(zip(poly[0::2], poly[1::2])))
                         for poly in polygons), 2)
        segmentation = polygons
    _paint(img, mask, natural_colour(rng), rng)
    return {"segmentation": segmentation, "area": area, "iscrowd": int(crowd),
            "bbox": bbox}


def make_sample(seed, index, size=None):
    """(image entry without file_name, uint8 RGB array, [annotations
    without ids]) of image @index; @size: (width, height) instead of
    COCO's mix."""
    rng = random.Random(f"{seed}/{index}/coco")
    width, height = image_size(rng)
    if size is not None:
        width, height = size
    img = natural_image(seed, index, width, height).astype(np.float32)
    # a few of each, even in a small dataset: images 5, 45, 85 ... have
    # no objects; 3, 13, 23 ... start with a crowd RLE compressed, 7, 17,
    # 27 ... with one uncompressed
    empty = index % 40 == 5 or rng.random() < EMPTY_SHARE
    count = 0 if empty else min(30, max(1, round(rng.expovariate(1 / 7))))
    anns = []
    for k in range(count):
        crowd = (k == 0 and index % 10 in (3, 7)) or \
            rng.random() < CROWD_SHARE
        ann = _object(rng, img, width, height, crowd,
                      compressed=index % 10 == 3 if k == 0
                      else rng.random() < 0.5)
        if ann is not None:
            ann["category_id"] = rng.choice(CATEGORIES[:40] if rng.random() < 0.7
                                            else CATEGORIES)[0]
            anns.append(ann)
    entry = {"id": image_id(seed, index), "width": width, "height": height}
    pixels = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    return entry, pixels, anns


def _encode(pixels, rng):
    data = io.BytesIO()
    Image.fromarray(pixels).save(data, "JPEG", quality=rng.randint(85, 95),
                                 optimize=rng.random() < 0.5)
    return data.getvalue()


def _make_one(job):
    seed, index, size = job
    entry, pixels, anns = make_sample(seed, index, size)
    return entry, _encode(pixels, random.Random(f"{seed}/{index}/jpeg")), anns


def _samples(count, seed, jobs, empty, size):
    """(entry, jpeg bytes, annotations) of each image, in index order;
    @empty more images (at the end) without objects."""
    work = [(seed, i, size) for i in range(count)]
    if jobs <= 1:
        done = list(map(_make_one, work))
    else:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(jobs) as pool:
            done = list(pool.map(_make_one, work, chunksize=8))
    for k in range(empty):
        entry, data, _ = done[k % len(done)]
        entry = dict(entry, id=image_id(seed, count + k))
        done.append((entry, data, []))
    return done


def _listing(samples, seed):
    """(images, annotations) of the instances file: images in no id order,
    annotations in no image order, with their ids."""
    images, annotations = [], []
    for entry, data, anns in samples:
        images.append(dict(entry, file_name=f"{entry['id']:012d}.jpg"))
        for ann in anns:
            annotations.append(dict(ann, image_id=entry["id"]))
    order = random.Random(f"{seed}/order")
    order.shuffle(images)
    order.shuffle(annotations)
    for n, ann in enumerate(annotations):
        ann["id"] = 900100581904 + n * 13 if n % 5 == 0 else 1 + n
    return images, annotations


def make_coco(root, count, seed=0, jobs=1, split="train2017", empty=0,
              size=None):
    """A COCO-like dataset of @count images (and @empty more without any
    annotation) under @root (@size: every image (width, height)); returns
    (instances file path, images folder, total JPEG bytes)."""
    samples = _samples(count, seed, jobs, empty, size)
    images_dir = os.path.join(root, split)
    os.makedirs(images_dir, exist_ok=True)
    os.makedirs(os.path.join(root, "annotations"), exist_ok=True)
    total = 0
    for entry, data, _ in samples:
        with open(os.path.join(images_dir, f"{entry['id']:012d}.jpg"), "wb") as f:
            f.write(data)
        total += len(data)
    images, annotations = _listing(samples, seed)
    doc = {"info": {"description": "gst-spdl bench/make-coco", "version": "1.0",
                    "year": 2026},
           "licenses": [{"id": 1, "name": "CC0"}],
           "images": images, "annotations": annotations,
           "categories": [{"supercategory": "object", "id": cid, "name": name}
                          for cid, name in CATEGORIES]}
    path = os.path.join(root, "annotations", f"instances_{split}.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    return path, images_dir, total


def make_coco_shards(root, count, seed=0, jobs=1, per_shard=100, empty=0,
                     size=None):
    """The same images as WebDataset tar shards, in index order: ``KEY.jpg``
    and ``KEY.json`` (``{"image_id", "width", "height", "annotations":
    [...]}``, the image's annotations as make_coco's instances file lists
    them, ids too); returns the shards' brace pattern and the total JPEG
    bytes."""
    samples = _samples(count, seed, jobs, empty, size)
    _, annotations = _listing(samples, seed)
    per_image = {}
    for ann in annotations:
        per_image.setdefault(ann["image_id"], []).append(ann)
    os.makedirs(root, exist_ok=True)
    shards = max(1, (len(samples) + per_shard - 1) // per_shard)
    total = 0
    for s in range(shards):
        with tarfile.open(os.path.join(root, f"coco-{s:06d}.tar"), "w") as tar:
            for entry, data, _ in samples[s * per_shard:(s + 1) * per_shard]:
                key = f"{entry['id']:012d}"
                text = json.dumps({"image_id": entry["id"],
                                   "width": entry["width"],
                                   "height": entry["height"],
                                   "annotations": per_image.get(entry["id"], [])
                                   }).encode()
                for name, blob in ((key + ".jpg", data), (key + ".json", text)):
                    info = tarfile.TarInfo(name)
                    info.size, info.mtime = len(blob), 1700000000
                    tar.addfile(info, io.BytesIO(blob))
                total += len(data)
    pattern = os.path.join(root, "coco-{%06d..%06d}.tar" % (0, shards - 1))
    return pattern, total
