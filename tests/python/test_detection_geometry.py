"""spdldecode's detection geometry: mode=shorter (torchvision's
Resize(size, max_size), sizes drawn per image for DETR's multi-scale) and
mode=letterbox (ultralytics' LetterBox), pixels against PIL's resize, output
sizes against torchvision 0.29's _compute_resized_output_size (the torch 2
venv), and the geometry each sample reports (its crop box maps boxes)."""
import json
import subprocess

import numpy as np
import pytest
from PIL import Image

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

from test_torch2 import torch2_python  # noqa: E402

Gst.init(None)

# odd sizes, portrait and landscape, square, an extreme aspect ratio
SIZES = [(97, 61), (61, 97), (151, 150), (40, 211), (320, 203), (64, 64)]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """An ImageFolder of PNGs (lossless: PIL's pixels are the reference)."""
    root = tmp_path_factory.mktemp("geom")
    (root / "c").mkdir()
    rng = np.random.default_rng(7)
    images = []
    for i, (w, h) in enumerate(SIZES):
        yy, xx = np.mgrid[0:h, 0:w]
        arr = np.stack([(xx * 255 // max(w - 1, 1)), (yy * 255 // max(h - 1, 1)),
                        rng.integers(0, 256, (h, w))], axis=2).astype(np.uint8)
        Image.fromarray(arr).save(root / "c" / f"img{i:02d}.png")
        images.append(arr)
    return root, images


def pull(launch, convert, setup=None):
    """[convert(sample)] of each sample of @launch (ending in an appsink
    named sink), until EOS, after setup(pipeline); a pipeline error raises
    RuntimeError."""
    pipeline = Gst.parse_launch(launch)
    if setup:
        setup(pipeline)
    sink, bus = pipeline.get_by_name("sink"), pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    out = []
    try:
        while True:
            sample = sink.emit("try-pull-sample", 5 * Gst.SECOND)
            if sample is None:
                msg = bus.pop_filtered(Gst.MessageType.ERROR)
                if msg is not None:
                    raise RuntimeError(msg.parse_error()[0].message)
                assert sink.get_property("eos"), "pipeline timed out"
                break
            out.append(convert(sample))
            del sample
    finally:
        pipeline.set_state(Gst.State.NULL)
    return out


def image_and_geometry(sample):
    caps = sample.get_caps().get_structure(0)
    w, h = caps.get_value("width"), caps.get_value("height")
    buf = sample.get_buffer()
    data = buf.extract_dup(0, buf.get_size())
    stride = (w * 3 + 3) // 4 * 4
    arr = np.frombuffer(data, np.uint8).reshape(h, stride)[:, :w * 3]
    meta = buf.get_custom_meta("GstSpdlSampleMeta").get_structure()
    crop = [meta.get_value("crop")[i] for i in range(4)]
    return (arr.reshape(h, w, 3).copy(), crop, meta.get_value("flipped"),
            (meta.get_value("source-width"), meta.get_value("source-height")))


def decode(root, props):
    """[(array HxWx3, crop, flipped, (source w, h))] in dataset order."""
    return pull(f"spdlsrc location={root} extensions=png ! spdldecode {props} "
                "! appsink name=sink sync=false", image_and_geometry)


def batch_of(sample):
    """A batch's tensors (numpy, copied out) and metadata."""
    from spdlgst.batch import host_tensors, sample_batch, tensor_names
    b = sample_batch(sample, host_tensors(sample))
    out = dict(images=b.images.copy(), labels=b.labels.copy(),
               sizes=None if b.image_sizes is None else b.image_sizes.copy(),
               mask=None if b.padding_mask is None else b.padding_mask.copy(),
               indices=list(b.indices), n=len(b),
               names=tensor_names(sample.get_caps()))
    for name, value in b.fields.items():
        out[name] = value.copy()
    return out


_TV_CACHE = {}


def tv_sizes(queries):
    """torchvision 0.29's [new_h, new_w] for (h, w, size, max_size); the
    queries of the whole module in one run of the torch 2 venv."""
    missing = [q for q in queries if tuple(q) not in _TV_CACHE]
    if missing:
        all_queries = missing + [
            [h, w, s, m] for w, h in SIZES
            for s, m in [(50, None), (50, 80), (33, 71), (120, None),
                         (29, 30), (None, 90), (31, 90), (40, 90), (47, 90),
                         (55, 90)]]
        for q, r in zip(all_queries, _tv_run(all_queries)):
            _TV_CACHE[tuple(q)] = r
    return [_TV_CACHE[tuple(q)] for q in queries]


def _tv_run(queries):
    script = (
        "import json, sys\n"
        "from torchvision.transforms.v2.functional._geometry import "
        "_compute_resized_output_size as f\n"
        "print(json.dumps([f((h, w), None if s is None else [s], "
        "max_size=m) for h, w, s, m in json.loads(sys.argv[1])]))\n")
    res = subprocess.run([torch2_python(), "-c", script, json.dumps(queries)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.splitlines()[-1])


def pil_resize(arr, w, h):
    return np.asarray(Image.fromarray(arr).resize((w, h), Image.BILINEAR))


@pytest.mark.parametrize("size,max_size", [(50, 0), (50, 80), (33, 71),
                                           (120, 0), (29, 30), (0, 90)])
def test_shorter_matches_torchvision_resize(folder, size, max_size):
    root, images = folder
    # resize-shorter=0 with a max-size: Resize(None, max_size)
    props = f"mode=shorter resize-shorter={size}"
    if max_size:
        props += f" max-size={max_size}"
    out = decode(root, props)
    assert len(out) == len(images)
    expected = tv_sizes([[a.shape[0], a.shape[1], size or None,
                          max_size or None] for a in images])
    for (arr, crop, flipped, source), src, (eh, ew) in zip(out, images,
                                                           expected):
        assert arr.shape[:2] == (eh, ew), (src.shape, size, max_size)
        assert np.array_equal(arr, pil_resize(src, ew, eh))
        assert crop == [0, 0, src.shape[1], src.shape[0]]
        assert source == (src.shape[1], src.shape[0]) and not flipped


def test_shorter_sizes_drawn_per_image_by_seed(folder):
    root, images = folder
    sizes = [31, 40, 47, 55]
    props = ("mode=shorter sizes=\"<31,40,47,55>\" max-size=90 "
             "flip=random-horizontal")
    runs = {seed: decode(root, f"{props} seed={seed}") for seed in (1, 2)}
    again = decode(root, f"{props} seed=1")
    # deterministic from the seed, pixels too
    for a, b in zip(runs[1], again):
        assert np.array_equal(a[0], b[0]) and a[2] == b[2]
    drawn = {}
    for seed, out in runs.items():
        queries = [[src.shape[0], src.shape[1], s, 90] for src in images
                   for s in sizes]
        table = tv_sizes(queries)
        for i, ((arr, crop, flipped, _), src) in enumerate(zip(out, images)):
            # the output is one of the sizes' resizes, pixel for pixel
            options = {tuple(table[i * len(sizes) + k]): s
                       for k, s in enumerate(sizes)}
            assert arr.shape[:2] in options, (arr.shape, options)
            ref = pil_resize(src, arr.shape[1], arr.shape[0])
            if flipped:
                ref = ref[:, ::-1]
            assert np.array_equal(arr, ref)
            drawn[seed, i] = options[arr.shape[:2]]
    per_seed = [[drawn[s, i] for i in range(len(images))] for s in (1, 2)]
    # varies from image to image, and with the seed
    assert len(set(per_seed[0])) > 1 and per_seed[0] != per_seed[1], per_seed


def test_sizes_set_from_python(folder):
    """Python's ints (a Gst.ValueArray) set the sizes as gst-launch's
    <31,40> does."""
    root, images = folder

    def setup(pipeline):
        pipeline.get_by_name("dec").set_property("sizes",
                                                 Gst.ValueArray([31, 40]))

    out = pull(f"spdlsrc location={root} extensions=png ! spdldecode "
               "name=dec mode=shorter seed=4 ! appsink name=sink sync=false",
               image_and_geometry, setup)
    shorter = [min(a.shape[:2]) for a, _, _, _ in out]
    assert set(shorter) == {31, 40}, shorter


def test_shorter_refuses_max_size_not_above_size(folder):
    root, _ = folder
    with pytest.raises(RuntimeError, match="max-size=50 must be larger"):
        decode(root, "mode=shorter resize-shorter=50 max-size=50")
    with pytest.raises(RuntimeError, match="width and height must be 0"):
        decode(root, "mode=shorter resize-shorter=50 width=64")


def letterbox_ref(arr, W, H, pad):
    """ultralytics' LetterBox (center=True, scaleup=True) with PIL's resize:
    the image, the left and top padding and the resized size."""
    h, w = arr.shape[:2]
    r = min(H / h, W / w)
    nw, nh = int(round(w * r)), int(round(h * r))
    dw, dh = (W - nw) / 2, (H - nh) / 2
    top, left = int(round(dh - 0.1)), int(round(dw - 0.1))
    out = np.full((H, W, 3), pad, np.uint8)
    out[top:top + nh, left:left + nw] = pil_resize(arr, nw, nh)
    return out, left, top, nw, nh


@pytest.mark.parametrize("W,H,pad", [(64, 64, 114), (75, 49, 0), (48, 81, 7)])
def test_letterbox_matches_ultralytics_with_pil(folder, W, H, pad):
    root, images = folder
    out = decode(root, f"mode=letterbox width={W} height={H} pad-value={pad} "
                 "flip=random-horizontal seed=3")
    assert len(out) == len(images)
    flips = set()
    for (arr, crop, flipped, source), src in zip(out, images):
        ref, left, top, nw, nh = letterbox_ref(src, W, H, pad)
        if flipped:
            ref = ref[:, ::-1]
        flips.add(flipped)
        assert arr.shape == (H, W, 3)
        assert np.array_equal(arr, ref), (src.shape, W, H, flipped)
        # the crop box reaches past the image by the padding: a box
        # (x1, y1, x2, y2) maps to ((x - cx) * W / cw, (y - cy) * H / ch)
        # then, flipped, x' = W - x
        h, w = src.shape[:2]
        np.testing.assert_allclose(crop, [-left * w / nw, -top * h / nh,
                                          W * w / nw, H * h / nh], rtol=1e-12)
        x = (np.array([0.0, w]) - crop[0]) * W / crop[2]
        y = (np.array([0.0, h]) - crop[1]) * H / crop[3]
        np.testing.assert_allclose(x, [left, left + nw], atol=1e-9)
        np.testing.assert_allclose(y, [top, top + nh], atol=1e-9)
        assert source == (w, h)
    assert flips == {True, False}


def test_letterbox_needs_width_and_height(folder):
    root, _ = folder
    with pytest.raises(RuntimeError, match="letterbox needs width and height"):
        decode(root, "mode=letterbox width=64")


def batches(root, decode_props, batch_props):
    """[batch_of (batch)] of spdldecode ! spdlbatch."""
    return pull(f"spdlsrc location={root} extensions=png ! spdldecode "
                f"{decode_props} ! spdlbatch {batch_props} ! appsink "
                "name=sink sync=false", batch_of)


SHORTER = "mode=shorter resize-shorter=40 max-size=100"


@pytest.mark.parametrize("multiple", [32, 1, 7])
def test_padded_batch_holds_each_image_top_left(folder, multiple):
    root, images = folder
    singles = [a for a, _, _, _ in decode(root, SHORTER)]
    got = batches(root, SHORTER, f"batch-size=4 pad-multiple={multiple}")
    assert [b["indices"] for b in got] == [[0, 1, 2, 3], [4, 5]]
    for b in got:
        assert b["n"] == 2, "the tuple stays (images, labels)"
        assert b["names"] == ["images", "labels", "image-sizes",
                              "padding-mask"]
        ims = [singles[i] for i in b["indices"]]
        H = -(-max(a.shape[0] for a in ims) // multiple) * multiple
        W = -(-max(a.shape[1] for a in ims) // multiple) * multiple
        assert b["images"].shape == (len(ims), H, W, 3)
        assert b["mask"].shape == (len(ims), H, W)
        assert b["mask"].dtype == np.uint8 and b["sizes"].dtype == np.int64
        for k, a in enumerate(ims):
            h, w = a.shape[:2]
            assert list(b["sizes"][k]) == [h, w]
            assert np.array_equal(b["images"][k, :h, :w], a)
            rest = b["images"][k].copy()
            rest[:h, :w] = 0
            assert not rest.any(), "zeros around the image"
            mask = np.ones((H, W), np.uint8)
            mask[:h, :w] = 0
            assert np.array_equal(b["mask"][k], mask)
    # images of different sizes went into one batch
    assert len({a.shape for a in singles[:4]}) > 1


def test_padded_batch_normalized_nchw(folder):
    root, images = folder
    singles = [a for a, _, _, _ in decode(root, SHORTER)]
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    got = batches(root, SHORTER, "batch-size=3 pad-multiple=32 layout=nchw "
                  "dtype=float32 mean=\"<0.485,0.456,0.406>\" "
                  "std=\"<0.229,0.224,0.225>\"")
    assert [b["indices"] for b in got] == [[0, 1, 2], [3, 4, 5]]
    for b in got:
        H, W = b["images"].shape[2:]
        assert H % 32 == 0 and W % 32 == 0
        for k, i in enumerate(b["indices"]):
            a = singles[i]
            h, w = a.shape[:2]
            ref = ((a.astype(np.float32) / 255 - np.float32(mean)) /
                   np.float32(std)).transpose(2, 0, 1)
            np.testing.assert_allclose(b["images"][k, :, :h, :w], ref,
                                       atol=1e-5)
            rest = b["images"][k].copy()
            rest[:, :h, :w] = 0
            # GeneralizedRCNNTransform pads the normalized image with 0
            assert not rest.any()
            assert list(b["sizes"][k]) == [h, w]


def test_padded_batch_of_letterboxed_images(folder):
    """Fixed-size images too: sizes and a mask of no padding."""
    root, _ = folder
    got = batches(root, "mode=letterbox width=50 height=40",
                  "batch-size=6 pad-multiple=32")
    assert len(got) == 1
    b = got[0]
    assert b["images"].shape == (6, 64, 64, 3)
    assert (b["sizes"] == [40, 50]).all()
    assert not b["mask"][:, :40, :50].any() and b["mask"][:, 40:].all()


def test_without_pad_multiple_sizes_must_match(folder):
    root, _ = folder
    with pytest.raises(RuntimeError, match="Image size changed"):
        batches(root, SHORTER, "batch-size=4")


@pytest.fixture(scope="module")
def fields_folder(tmp_path_factory):
    """Images of different sizes with an image and a label sidecar each."""
    root = tmp_path_factory.mktemp("geomfields")
    folder = root / "c"
    folder.mkdir()
    rng = np.random.default_rng(11)
    for i, (w, h) in enumerate(SIZES[:5]):
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        Image.fromarray(img).save(folder / f"x{i}.jpg", quality=95)
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(
            folder / f"x{i}.alt.png")
        Image.fromarray(rng.integers(1, 9, (h, w), dtype=np.uint8),
                        mode="L").save(folder / f"x{i}.seg.png")
    return root


def field_batches(root, batch_props, decode_props=SHORTER):
    return pull(f"spdlsrc location={root} fields=alt.png:image,seg.png:label "
                f"! spdldecode {decode_props} ! spdlbatch {batch_props} ! "
                "appsink name=sink sync=false", batch_of)


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
def test_padded_batch_pads_image_and_label_fields(fields_folder, layout):
    alone = field_batches(fields_folder, f"batch-size=1 pad-multiple=1 "
                          f"layout={layout}")
    got = field_batches(fields_folder, f"batch-size=3 pad-multiple=16 "
                        f"layout={layout}")
    assert [b["indices"] for b in got] == [[0, 1, 2], [3, 4]]
    nchw = layout == "nchw"
    for b in got:
        H, W = b["seg.png"].shape[1:]
        assert H % 16 == 0 and W % 16 == 0
        assert (b["images"].shape[2:4] if nchw
                else b["images"].shape[1:3]) == (H, W)
        assert b["alt.png"].shape == ((len(b["indices"]), 3, H, W) if nchw else
                                  (len(b["indices"]), H, W, 3))
        for k, i in enumerate(b["indices"]):
            h, w = b["sizes"][k]
            one = alone[i]
            assert list(one["sizes"][0]) == [h, w]
            seg = np.zeros((H, W), np.uint8)
            seg[:h, :w] = one["seg.png"][0]
            assert np.array_equal(b["seg.png"][k], seg)
            assert one["seg.png"][0].min() >= 1, "labels are 1..8: zeros padding"
            if nchw:
                alt = np.zeros((3, H, W), np.uint8)
                alt[:, :h, :w] = one["alt.png"][0]
            else:
                alt = np.zeros((H, W, 3), np.uint8)
                alt[:h, :w] = one["alt.png"][0]
            assert np.array_equal(b["alt.png"][k], alt)


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
def test_letterbox_pads_image_fields_with_pad_value(fields_folder, layout):
    """Decoded into spdlbatch's slots (packed or planar): the media image
    and an image field are letterboxed (pad-value around PIL's resize), a
    label field's padding is 0."""
    got = field_batches(fields_folder, f"batch-size=5 layout={layout}",
                        "mode=letterbox width=40 height=36 pad-value=99")
    assert len(got) == 1 and got[0]["indices"] == list(range(5))
    planar = (lambda a: a.transpose(2, 0, 1)) if layout == "nchw" else \
        (lambda a: a)
    for k in range(5):
        media = np.asarray(Image.open(fields_folder / "c" / f"x{k}.jpg")
                           .convert("RGB"))
        assert np.array_equal(got[0]["images"][k],
                              planar(letterbox_ref(media, 40, 36, 99)[0]))
        alt = np.asarray(Image.open(fields_folder / "c" / f"x{k}.alt.png"))
        ref, left, top, nw, nh = letterbox_ref(alt, 40, 36, 99)
        assert np.array_equal(got[0]["alt.png"][k], planar(ref))
        seg = got[0]["seg.png"][k]
        inside = np.zeros(seg.shape, bool)
        inside[top:top + nh, left:left + nw] = True
        assert (seg[inside] >= 1).all() and not seg[~inside].any()


@pytest.mark.parametrize("recipe", ["shorter", "letterbox"])
def test_every_kind_of_jpeg_as_pil(kinds_dataset, recipe):
    """JPEGs as phones and cameras make them (4:2:0, 4:4:4, progressive,
    gray, CMYK, 2000x1500): torchvision's Resize(size, max_size) on PIL
    images, and the letterbox of PIL's resize, pixel for pixel."""
    import torchvision.transforms as T
    from torchvision.datasets import ImageFolder

    if recipe == "shorter":
        props = "mode=shorter resize-shorter=120 max-size=150"
        transform = T.Resize(120, max_size=150)
    else:
        props = "mode=letterbox width=96 height=80"
        transform = None
    out = pull(f"spdlsrc location={kinds_dataset} ! spdldecode {props} ! "
               "appsink name=sink sync=false", image_and_geometry)
    ref = ImageFolder(str(kinds_dataset), transform=transform)
    assert len(out) == len(ref) == 20
    for (arr, crop, _, source), (img, _) in zip(out, ref):
        expected = np.asarray(img.convert("RGB"))
        if recipe == "letterbox":
            expected = letterbox_ref(expected, 96, 80, 114)[0]
        assert arr.shape == expected.shape
        assert np.array_equal(arr, expected), source


def test_loader_gives_padded_batches(folder):
    """Through spdlappsink and the Loader (torch): each batch's own shape,
    the sizes and the mask as attributes, (images, labels) the tuple."""
    import torch
    from spdlgst import Loader

    root, _ = folder
    singles = [a for a, _, _, _ in decode(root, SHORTER)]
    loader = Loader(f"spdlsrc location={root} extensions=png ! spdldecode "
                    f"{SHORTER} ! spdlbatch batch-size=4 pad-multiple=16 ! "
                    "spdlappsink name=sink", output="torch")
    try:
        got = list(loader)
    finally:
        loader.close()
    assert [len(b.indices) for b in got] == [4, 2]
    shapes = set()
    for b in got:
        images, labels = b
        assert images.dtype == torch.uint8 and labels.dtype == torch.int64
        assert b.image_sizes.dtype == torch.int64
        assert b.padding_mask.dtype == torch.uint8
        shapes.add(tuple(images.shape[1:3]))
        for k, i in enumerate(b.indices):
            h, w = (int(v) for v in b.image_sizes[k])
            assert (h, w) == singles[i].shape[:2]
            assert np.array_equal(images[k, :h, :w].numpy(), singles[i])
            assert int(b.padding_mask[k].sum()) == (
                images.shape[1] * images.shape[2] - h * w)
    assert len(shapes) == 2, "each batch its own padded size"
