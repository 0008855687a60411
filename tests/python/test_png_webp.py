"""spdldecode on PNG and WebP against torchvision's PIL recipe, per kind
(BMP, GIF and TIFF: test_more_formats.py).

Every colour type and bit depth of PNG (palette with tRNS, interlaced,
16-bit), and lossy, lossless, alpha and animated WebP: Resize(256) +
CenterCrop(224) of PIL.Image.open(f).convert("RGB"), within 1 level.
"""
import numpy as np
import pytest
import torchvision.transforms as T
from PIL import Image
from torchvision.datasets import ImageFolder

from conftest import smooth_image
from pngwrite import (GRAY, GRAY_ALPHA, PALETTE, RGB, RGBA, png_bytes,
                      png_of_rows)
from spdltest import decode_folder, run_frames

MAX_MEAN_DIFF = 1.0
W, H = 400, 300


def base(rng, w=W, h=H):
    return np.asarray(smooth_image(rng, w, h))


def gray(rgb):
    return np.asarray(Image.fromarray(rgb).convert("L"))


def wide(rng, a):
    """16-bit samples whose high byte is @a's value."""
    return a.astype(np.uint16) * 256 + rng.integers(0, 256, a.shape)


def alpha(rng, a):
    return np.dstack([a, rng.integers(0, 256, a.shape[:2], dtype=np.uint8)])


def palette_of(rgb, colours):
    p = Image.fromarray(rgb).quantize(colours)
    pal = np.asarray(p.getpalette()[: 3 * colours], np.uint8).reshape(-1, 3)
    return np.asarray(p), pal


def write_pil(img, **opts):
    def write(path):
        img.save(path, **opts)
    return write


def write_raw(data):
    def write(path):
        path.write_bytes(data)
    return write


def png_kinds(rng):
    rgb = base(rng)
    g = gray(rgb)
    idx16, pal16 = palette_of(rgb, 16)
    idx256, pal256 = palette_of(rgb, 256)
    idx4, pal4 = palette_of(rgb, 4)
    trns = bytes(rng.integers(0, 256, 200, dtype=np.uint8))
    return {
        "rgb8": write_pil(Image.fromarray(rgb), format="PNG"),
        "rgba8": write_pil(Image.fromarray(alpha(rng, rgb), "RGBA"), format="PNG"),
        "gray8": write_pil(Image.fromarray(g), format="PNG"),
        "gray-alpha8": write_pil(Image.fromarray(alpha(rng, g[:, :, None]), "LA"),
                                 format="PNG"),
        "gray1": write_pil(Image.fromarray(g).convert("1"), format="PNG"),
        "gray2": write_raw(png_bytes(g >> 6, GRAY, 2)),
        "gray4": write_raw(png_bytes(g >> 4, GRAY, 4)),
        # PIL opens 16-bit gray as "I" and clips it to 255 in convert("RGB")
        "gray16": write_raw(png_bytes(g.astype(np.uint16) * 2 +
                                      rng.integers(0, 2, g.shape), GRAY, 16)),
        "gray-alpha16": write_raw(png_bytes(wide(rng, alpha(rng, g[:, :, None])),
                                            GRAY_ALPHA, 16)),
        "rgb16": write_raw(png_bytes(wide(rng, rgb), RGB, 16)),
        "rgba16": write_raw(png_bytes(wide(rng, alpha(rng, rgb)), RGBA, 16)),
        "palette8": write_raw(png_bytes(idx256, PALETTE, 8, palette=pal256)),
        "palette4-trns": write_raw(png_bytes(idx16, PALETTE, 4, palette=pal16,
                                             trns=trns[:16])),
        "palette2": write_raw(png_bytes(idx4, PALETTE, 2, palette=pal4)),
        "palette8-trns": write_raw(png_bytes(idx256, PALETTE, 8, palette=pal256,
                                             trns=trns)),
        "gray8-trns": write_raw(png_bytes(g, GRAY, 8, trns=b"\0\x80")),
        "rgb8-trns": write_raw(png_bytes(rgb, RGB, 8, trns=b"\0\x10\0\x20\0\x30")),
        "rgb8-interlaced": write_raw(png_bytes(rgb, RGB, 8, interlace=True)),
        "palette4-interlaced": write_raw(png_bytes(idx16, PALETTE, 4, palette=pal16,
                                                   interlace=True)),
        "gray16-interlaced": write_raw(png_bytes(g.astype(np.uint16) + 100, GRAY, 16,
                                                 interlace=True)),
        "rgba16-interlaced": write_raw(png_bytes(wide(rng, alpha(rng, rgb)), RGBA, 16,
                                                 interlace=True)),
        "small-rgb8": write_pil(Image.fromarray(base(rng, 150, 100)), format="PNG"),
    }


def webp_kinds(rng):
    rgb = Image.fromarray(base(rng))
    rgba = Image.fromarray(alpha(rng, base(rng)), "RGBA")
    frames = [Image.fromarray(base(rng)) for _ in range(3)]
    return {
        "lossy": write_pil(rgb, format="WEBP", quality=80),
        "lossless": write_pil(rgb, format="WEBP", lossless=True),
        "lossy-alpha": write_pil(rgba, format="WEBP", quality=80),
        "lossless-alpha": write_pil(rgba, format="WEBP", lossless=True),
        "animated": write_pil(frames[0], format="WEBP", save_all=True,
                              append_images=frames[1:], duration=100, quality=80),
        "animated-lossless-alpha": write_pil(
            rgba, format="WEBP", save_all=True, lossless=True, duration=100,
            append_images=[Image.fromarray(alpha(rng, base(rng)), "RGBA")]),
    }


PNG_KINDS = list(png_kinds(np.random.default_rng(0)))
WEBP_KINDS = list(webp_kinds(np.random.default_rng(0)))


def decode_and_compare(root, options=""):
    """{file name: mean |diff|} of every file under @root against PIL."""
    frames = run_frames(f"spdlsrc location={root} ! spdldecode width=224 "
                        f"height=224 mode=center-crop resize-shorter=256 {options}")
    ref = ImageFolder(str(root),
                      transform=T.Compose([T.Resize(256), T.CenterCrop(224)]))
    assert len(frames) == len(ref)
    out = {}
    for (got, meta), (img, label), (path, _) in zip(frames, ref, ref.samples):
        assert meta["label"] == label and meta["path"].endswith(path[-30:])
        expected = np.asarray(img)
        assert got.shape == expected.shape, path
        out[path.rsplit("/", 1)[1]] = np.abs(got.astype(int) -
                                             expected.astype(int)).mean()
    return out


@pytest.fixture(scope="module")
def kinds_root(tmp_path_factory):
    """Every kind in its own class folder."""
    root = tmp_path_factory.mktemp("kinds")
    for ext, kinds in (("png", png_kinds), ("webp", webp_kinds)):
        for kind, write in kinds(np.random.default_rng(0)).items():
            folder = root / f"{ext}-{kind}"
            folder.mkdir()
            write(folder / f"{kind}.{ext}")
    return root


@pytest.fixture(scope="module")
def kind_diffs(kinds_root):
    """Every kind decoded in one pipeline run."""
    return decode_and_compare(kinds_root)


def check_kind(tmp_path, write, name):
    folder = tmp_path / "class0"
    folder.mkdir()
    write(folder / name)
    diff = decode_and_compare(tmp_path)[name]
    assert diff < MAX_MEAN_DIFF, diff
    return diff


# the resampler is PIL's, and libwebp is the one PIL uses: exact on every kind
@pytest.mark.parametrize("kind", PNG_KINDS)
def test_png_matches_torchvision(kind_diffs, kind):
    assert kind_diffs[f"{kind}.png"] == 0.0


@pytest.mark.parametrize("kind", WEBP_KINDS)
def test_webp_matches_torchvision(kind_diffs, kind):
    assert kind_diffs[f"{kind}.webp"] == 0.0


def test_format_from_bytes_not_name(tmp_path):
    """A PNG named .jpg and a WebP named .png decode as what they are."""
    rng = np.random.default_rng(3)
    png = png_kinds(rng)["rgb8"]
    webp = webp_kinds(rng)["lossy"]
    check_kind(tmp_path, png, "png-named.jpg")
    other = tmp_path / "other"
    other.mkdir()
    check_kind(other, webp, "webp-named.png")


def test_unsupported_formats_are_skipped_by_reason(tmp_path):
    from gi.repository import Gst

    folder = tmp_path / "class0"
    folder.mkdir()
    img = Image.fromarray(base(np.random.default_rng(4), 64, 48))
    img.save(folder / "a.ppm", format="PPM")
    img.save(folder / "b.png", format="PNG")
    pipeline = Gst.parse_launch(
        f"spdlsrc location={tmp_path} ! spdldecode name=dec width=32 height=32 "
        "! fakesink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    warnings = []
    while True:
        msg = bus.timed_pop_filtered(10 * Gst.SECOND, Gst.MessageType.EOS |
                                     Gst.MessageType.ERROR | Gst.MessageType.WARNING)
        assert msg is not None and msg.type != Gst.MessageType.ERROR
        if msg.type == Gst.MessageType.EOS:
            break
        err, debug = msg.parse_warning()
        warnings.append(err.message + " " + debug)
    dec = pipeline.get_by_name("dec")
    counts = dec.get_property("error-counts")
    decoded = dec.get_property("decoded")
    pipeline.set_state(Gst.State.NULL)
    assert counts.get_value("unsupported-format") == 1
    assert decoded == 1
    assert any("a.ppm" in w and "PPM" in w for w in warnings), warnings


def test_png_every_filter_and_chunking_exact(tmp_path):
    """The rows of every 8-bit layout, each row under a random filter type
    (random bytes: every Sub, Up, Average and Paeth case), from one IDAT,
    from 7-byte IDATs, behind a 512-byte zlib window and in stored blocks
    (IDATs longer than the rows: libpng reads those): PIL's pixels, bit for
    bit, at full size and through the validation recipe's crop."""
    rng = np.random.default_rng(11)
    w, h = 61, 23
    folder = tmp_path / "class0"
    folder.mkdir()
    layouts = {"gray": (GRAY, 1), "gray-alpha": (GRAY_ALPHA, 2),
               "rgb": (RGB, 3), "rgba": (RGBA, 4), "palette": (PALETTE, 1)}
    for name, (color_type, channels) in layouts.items():
        raw = b"".join(bytes([rng.integers(0, 5)]) + rng.integers(
            0, 256, w * channels, dtype=np.uint8).tobytes() for _ in range(h))
        palette = rng.integers(0, 256, (256, 3)) if name == "palette" else None
        for variant, opts in {"one": {}, "split": dict(idat_size=7),
                              "window": dict(wbits=9),
                              "stored": dict(level=0)}.items():
            (folder / f"{name}-{variant}.png").write_bytes(png_of_rows(
                raw, w, h, color_type, 8, palette=palette, **opts))
    full, warnings, _ = decode_folder(folder, f"width={w} height={h}", "png")
    cropped, _, _ = decode_folder(folder, "width=16 height=16 "
                                  "mode=center-crop resize-shorter=20", "png")
    assert not warnings and len(full) == len(cropped) == 20
    recipe = T.Compose([T.Resize(20), T.CenterCrop(16)])
    for path in sorted(folder.iterdir()):
        img = Image.open(path).convert("RGB")
        np.testing.assert_array_equal(full[path.name], np.asarray(img),
                                      err_msg=path.name)
        np.testing.assert_array_equal(cropped[path.name],
                                      np.asarray(recipe(img)), err_msg=path.name)


def test_inexact_close_to_torchvision(kinds_root):
    """exact=false: PNG and WebP get the fast resize only (no DCT scaling):
    with AVX2 the exact resize (faster there), torchvision's pixels; without,
    the 16-bit weights' rounding, a small fraction of a level."""
    diffs = decode_and_compare(kinds_root, "exact=false")
    assert len(diffs) == len(PNG_KINDS) + len(WEBP_KINDS)
    assert max(diffs.values()) < 0.5, diffs
    with open("/proc/cpuinfo") as f:
        avx2 = " avx2" in f.read()
    if avx2:
        assert max(diffs.values()) == 0.0, diffs
    else:
        assert max(diffs.values()) > 0.0, "the fast resize did not run"
