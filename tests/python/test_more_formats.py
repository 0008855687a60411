"""spdldecode on BMP, TIFF and GIF against torchvision's PIL recipe.

Every kind PIL 9.4 reads: BMP of each depth (palette, 16-bit 5-5-5 and
5-6-5, bitfields, top-down, OS/2, RLE4 and RLE8), TIFF RGB/RGBA/L/LA/P/
I;16/1-bit/CMYK uncompressed and LZW/deflate/PackBits/CCITT compressed,
rotated by its Orientation tag, and GIF static, interlaced, animated (the
first frame), transparent and smaller than its screen: the validation
recipe at two sizes and GRAY8 against torchvision on
PIL.Image.open(f).convert("RGB"), and the training recipe against the
same recipe on a PNG of PIL's pixels (its random crop and flip are
spdldecode's own), bit for bit.
"""
import io
import struct

import numpy as np
import pytest
import torchvision.transforms as T
from PIL import Image

from bmpwrite import BITFIELDS, RLE4, RLE8, bmp_bytes
from conftest import smooth_image
from spdltest import decode_folder, run_frames
from tiffwrite import SHORT, tiff_bytes

W, H = 400, 300
EXTENSIONS = "extensions=bmp,tif,tiff,gif,png"


def base(rng, w=W, h=H):
    return np.asarray(smooth_image(rng, w, h))


def quantized(rgb, colours):
    """(indices, (n, 3) palette) of @rgb in @colours colours."""
    p = Image.fromarray(rgb).quantize(colours)
    pal = np.asarray(p.getpalette()[: 3 * colours], np.uint8).reshape(-1, 3)
    return np.asarray(p), pal


def pil_bytes(img, fmt, **opts):
    buf = io.BytesIO()
    img.save(buf, format=fmt, **opts)
    return buf.getvalue()


def bmp_kinds(rng):
    rgb = base(rng)
    odd = base(rng, 301, 203)
    bgr = rgb[:, :, ::-1]
    idx16, pal16 = quantized(rgb, 16)
    idx256, pal256 = quantized(rgb, 256)
    idx2, pal2 = quantized(rgb, 2)
    v16 = rng.integers(0, 65536, (H, W))
    alpha = rng.integers(0, 256, (H, W, 1), dtype=np.uint8)
    bgrx = np.concatenate([bgr, alpha], axis=2)
    few = (idx256 % 40).astype(np.uint8)          # indices past a 20 colours
    return {
        "rgb24": pil_bytes(Image.fromarray(rgb), "BMP"),
        "rgb24-odd-width": pil_bytes(Image.fromarray(odd), "BMP"),
        "rgb24-top-down": bmp_bytes(bgr, 24, top_down=True),
        "rgba32": pil_bytes(Image.fromarray(np.dstack([rgb, alpha])), "BMP"),
        "bgrx32-v5-bitfields": bmp_bytes(
            bgrx, 32, header=124, compression=BITFIELDS,
            masks=(0xFF0000, 0xFF00, 0xFF, 0xFF000000)),
        "rgba32-v4-bitfields": bmp_bytes(
            np.concatenate([rgb, alpha], axis=2), 32, header=108,
            compression=BITFIELDS, masks=(0xFF, 0xFF00, 0xFF0000, 0xFF000000)),
        "xbgr32-bitfields": bmp_bytes(
            np.concatenate([alpha, bgr], axis=2), 32, compression=BITFIELDS,
            masks=(0xFF000000, 0xFF0000, 0xFF00)),
        "rgb555": bmp_bytes(v16 & 0x7FFF, 16),
        "rgb565-bitfields": bmp_bytes(v16, 16, compression=BITFIELDS,
                                      masks=(0xF800, 0x7E0, 0x1F)),
        "rgb555-v4-bitfields-top-down": bmp_bytes(
            v16, 16, header=108, compression=BITFIELDS, top_down=True,
            masks=(0x7C00, 0x3E0, 0x1F, 0)),
        "palette8": pil_bytes(Image.fromarray(rgb).quantize(256), "BMP"),
        "palette8-20-colours": bmp_bytes(few, 8, palette=pal256[:20], colors=20),
        "palette4": bmp_bytes(idx16, 4, palette=pal16),
        "palette4-odd-width-top-down": bmp_bytes(quantized(odd, 16)[0], 4,
                                                 palette=pal16, top_down=True),
        "palette1": bmp_bytes(idx2, 1, palette=pal2),
        "bw1": pil_bytes(Image.fromarray(rgb).convert("1"), "BMP"),
        "gray8": pil_bytes(Image.fromarray(rgb).convert("L"), "BMP"),
        "os2-rgb24": bmp_bytes(bgr, 24, header=12),
        "os2-palette8": bmp_bytes(idx256, 8, palette=pal256, header=12),
        "rle8": bmp_bytes(idx256, 8, palette=pal256, compression=RLE8),
        "rle8-top-down": bmp_bytes(idx16, 8, palette=pal16, compression=RLE8,
                                   top_down=True),
        "rle4": bmp_bytes(idx16, 4, palette=pal16, compression=RLE4),
        "rle4-odd-width": bmp_bytes(quantized(odd, 16)[0], 4, palette=pal16,
                                    compression=RLE4),
        "rle-quirks": rle_quirks(),
    }


def rle_quirks():
    """What PIL's RLE decoder makes of odd commands: an RLE4 literal of 3
    (it reads one byte), a run past the row's end, a literal run over it,
    and a delta (it reads four bytes)."""
    pal = np.random.default_rng(9).integers(0, 256, (16, 3))
    rle = bytes([0, 3, 0x12, 0x30, 9, 0x45, 0, 0,
                 0, 6, 0x12, 0x34, 0x56, 0, 2, 0x77, 0, 0,
                 0, 2, 1, 0, 0, 1, 2, 0xab, 0, 0,
                 8, 0xcd, 0, 1])
    data = bmp_bytes(np.zeros((5, 8), np.uint8), 4, palette=pal)
    off = struct.unpack_from("<I", data, 10)[0]
    data = data[:30] + struct.pack("<I", 2) + data[34:off] + rle
    return data[:2] + struct.pack("<I", len(data)) + data[6:]


def gif_parts(data):
    """(screen flags, global palette, records before the image, image
    descriptor without its flags byte, its flags, its local palette, the
    LZW data to the end) of a GIF PIL wrote."""
    flags = data[10]
    pos = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    gpal = data[13:pos]
    start = pos
    while data[pos] == 0x21:
        pos += 2
        while data[pos]:
            pos += 1 + data[pos]
        pos += 1
    records = data[start:pos]
    desc, iflags = data[pos:pos + 9], data[pos + 9]
    pos += 10
    lpal = b""
    if iflags & 0x80:
        n = 3 << ((iflags & 7) + 1)
        lpal, pos = data[pos:pos + n], pos + n
    return flags, gpal, records, desc, iflags, lpal, data[pos:]


def gif_rebuilt(data, screen=None, at=None, local=False, gce=None):
    """@data (one frame) with another screen size, the frame placed @at,
    its palette made local (the global one then all black), or a graphic
    control extension (flags, index) of its own."""
    flags, gpal, records, desc, iflags, lpal, rest = gif_parts(data)
    w, h = struct.unpack("<HH", data[6:10])
    screen = screen or (w, h)
    x, y = at or struct.unpack("<HH", desc[1:5])
    desc = desc[:1] + struct.pack("<HH", x, y) + desc[5:9]
    if local and flags & 0x80:
        iflags |= 0x80 | (flags & 7)
        lpal, gpal = gpal, bytes(len(gpal))
    if gce is not None:
        records = bytes([0x21, 0xF9, 4, gce[0], 0, 0, gce[1], 0])
    return (data[:6] + struct.pack("<HH", *screen) + data[10:13] + gpal +
            records + desc + bytes([iflags]) + lpal + rest)


def gif_kinds(rng):
    rgb = base(rng)
    pal = Image.fromarray(rgb).quantize(256)
    few = Image.fromarray(rgb).quantize(4)
    frames = [Image.fromarray(base(rng)).quantize(64) for _ in range(3)]
    plain = pil_bytes(pal, "GIF", interlace=False)
    small = pil_bytes(Image.fromarray(base(rng, 150, 100)).quantize(32), "GIF",
                      interlace=False)
    return {
        "static": plain,
        "interlaced": pil_bytes(pal, "GIF"),
        "rgb-quantized-by-pil": pil_bytes(Image.fromarray(rgb), "GIF"),
        "gray": pil_bytes(Image.fromarray(rgb).convert("L"), "GIF"),
        "gray-ramp": pil_bytes(Image.fromarray(rgb).convert("L"), "GIF",
                               optimize=False),
        "4-colours": pil_bytes(few, "GIF", interlace=False),
        "odd-size-interlaced": pil_bytes(
            Image.fromarray(base(rng, 37, 301)).quantize(16), "GIF"),
        "transparent": pil_bytes(pal, "GIF", transparency=7, interlace=False),
        "animated": pil_bytes(frames[0], "GIF", save_all=True,
                              append_images=frames[1:], duration=100, loop=0),
        "animated-transparent-disposal": pil_bytes(
            frames[1], "GIF", save_all=True, append_images=frames[::-1],
            duration=[50, 60, 70, 80], transparency=3, disposal=2),
        "local-palette": gif_rebuilt(plain, local=True),
        "frame-in-screen": gif_rebuilt(small, screen=(300, 200), at=(40, 30)),
        "frame-in-screen-transparent": gif_rebuilt(
            small, screen=(300, 200), at=(100, 7), gce=(1, 5)),
        "frame-past-screen": gif_rebuilt(small, screen=(120, 90), at=(30, 60)),
        "no-trailer": plain[:-2],
    }


def tiff_kinds(rng):
    rgb = base(rng)
    img = Image.fromarray(rgb)
    gray = img.convert("L")
    g = np.asarray(gray)
    odd = base(rng, 301, 203)
    idx16, pal16 = quantized(rgb, 16)
    alpha = rng.integers(0, 256, (H, W, 1), dtype=np.uint8)
    premultiplied = np.dstack([(rgb.astype(int) * alpha // 255), alpha])
    wide = rgb.astype(np.uint16) * 256 + rng.integers(0, 256, rgb.shape)
    cmap16 = pal16.astype(np.uint16) * 257 + rng.integers(0, 2, pal16.shape)
    rgba = Image.fromarray(np.dstack([rgb, alpha]))
    palette = img.quantize(256)
    gray16 = Image.fromarray(g.astype(np.uint16) * 2 + 3)
    kinds = {}
    for comp in ("raw", "tiff_lzw", "tiff_adobe_deflate", "tiff_deflate",
                 "packbits"):
        name = comp.replace("tiff_", "")
        for mode, im in (("rgb", img), ("gray", gray), ("rgba", rgba),
                         ("palette8", palette), ("gray16", gray16)):
            kinds[f"{mode}-{name}"] = pil_bytes(im, "TIFF", compression=comp)
    kinds.update({
        "rgb-lzw-predictor": pil_bytes(img, "TIFF", compression="tiff_lzw",
                                       tiffinfo={317: 2}),
        "rgb-odd-width": pil_bytes(Image.fromarray(odd), "TIFF"),
        "rgbx": pil_bytes(img.convert("RGBX"), "TIFF"),
        "rgba-premultiplied": tiff_bytes(premultiplied, 8, 2, extra=(1,)),
        "rgb16": tiff_bytes(wide, 16, 2),
        "rgb16-big-endian": tiff_bytes(wide, 16, 2, big_endian=True),
        "rgba16": tiff_bytes(np.dstack([wide, wide[:, :, :1]]), 16, 2,
                             extra=(2,)),
        "gray-min-is-white": pil_bytes(gray, "TIFF", compression="tiff_lzw",
                                       tiffinfo={262: 0}),
        "gray4": tiff_bytes(g >> 4, 4, 1),
        "gray2-min-is-white": tiff_bytes(g >> 6, 2, 0),
        "gray16-big-endian": pil_bytes(Image.frombytes(
            "I;16B", (W, H), (g.astype(">u2") + 100).tobytes()), "TIFF"),
        "gray-alpha-deflate": pil_bytes(img.convert("LA"), "TIFF",
                                        compression="tiff_deflate"),
        "bw1-group4": pil_bytes(img.convert("1"), "TIFF", compression="group4"),
        "bw1-group3": pil_bytes(img.convert("1"), "TIFF", compression="group3"),
        "bw1-packbits": pil_bytes(img.convert("1"), "TIFF",
                                  compression="packbits"),
        "bw1-min-is-white": tiff_bytes(g >> 7, 1, 0),
        "palette4-odd-width": tiff_bytes(quantized(odd, 16)[0], 4, 3,
                                         colormap=cmap16),
        "palette4-strips": tiff_bytes(idx16, 4, 3, colormap=cmap16,
                                      rows_per_strip=7),
        "cmyk-lzw": pil_bytes(img.convert("CMYK"), "TIFF",
                              compression="tiff_lzw"),
        "multi-page": pil_bytes(img, "TIFF", save_all=True,
                                append_images=[gray]),
    })
    for o in range(2, 9):
        kinds[f"orientation{o}"] = pil_bytes(Image.fromarray(odd), "TIFF",
                                             tiffinfo={274: o})
    kinds["orientation6-gray-lzw"] = pil_bytes(gray, "TIFF",
                                               compression="tiff_lzw",
                                               tiffinfo={274: 6})
    kinds["orientation2-strips"] = tiff_bytes(rgb, 8, 2, rows_per_strip=16,
                                              tags={274: (SHORT, [2])})
    return kinds


KINDS = {"bmp": bmp_kinds, "gif": gif_kinds, "tif": tiff_kinds}


def all_kinds():
    return [(ext, kind) for ext, kinds in KINDS.items()
            for kind in kinds(np.random.default_rng(0))]


def pil_rgb(path):
    """torchvision's pil_loader."""
    with open(path, "rb") as f:
        return Image.open(f).convert("RGB")


@pytest.fixture(scope="module")
def kinds_root(tmp_path_factory):
    """Every kind in its own class folder, and a PNG of PIL's pixels of
    each under twins/ with the same class and file names."""
    root = tmp_path_factory.mktemp("kinds")
    twins = tmp_path_factory.mktemp("twins")
    for ext, kinds in KINDS.items():
        for kind, data in kinds(np.random.default_rng(0)).items():
            for top in (root, twins):
                (top / f"{ext}-{kind}").mkdir()
            path = root / f"{ext}-{kind}" / f"{kind}.{ext}"
            path.write_bytes(data)
            pil_rgb(path).save(twins / f"{ext}-{kind}" / f"{kind}.png")
    return root, twins


def diffs_against(root, launch_tail, transform):
    """{file name: mean |diff|} of spdldecode against @transform on PIL."""
    frames = run_frames(f"spdlsrc location={root} {EXTENSIONS} ! "
                        f"spdldecode {launch_tail}")
    out = {}
    for got, meta in frames:
        expected = np.asarray(transform(pil_rgb(meta["path"])))
        if expected.ndim == 2:
            expected = expected[:, :, None]
        assert got.shape == expected.shape, meta["path"]
        out[meta["path"].rsplit("/", 1)[1]] = np.abs(
            got.astype(int) - expected.astype(int)).mean()
    return out


VALIDATION = {
    "val224": ("width=224 height=224 mode=center-crop resize-shorter=256",
               T.Compose([T.Resize(256), T.CenterCrop(224)])),
    "val56": ("width=56 height=56 mode=center-crop resize-shorter=64",
              T.Compose([T.Resize(64), T.CenterCrop(56)])),
    "gray64": ("format=GRAY8 width=64 height=64 mode=center-crop",
               T.Compose([T.Grayscale(), T.Resize(64), T.CenterCrop(64)])),
}


@pytest.fixture(scope="module", params=list(VALIDATION))
def validation_diffs(request, kinds_root):
    tail, transform = VALIDATION[request.param]
    return diffs_against(kinds_root[0], tail, transform)


@pytest.fixture(scope="module")
def training_pairs(kinds_root):
    """Every kind and its PNG twin through random-resized-crop and flip."""
    tail = ("width=224 height=224 mode=random-resized-crop "
            "flip=random-horizontal seed=7")
    got = run_frames(f"spdlsrc location={kinds_root[0]} {EXTENSIONS} ! "
                     f"spdldecode {tail}")
    want = run_frames(f"spdlsrc location={kinds_root[1]} ! spdldecode {tail}")
    assert len(got) == len(want)
    return {g[1]["path"].rsplit("/", 1)[1]: (g, w) for g, w in zip(got, want)}


@pytest.mark.parametrize("ext,kind", all_kinds())
def test_validation_matches_torchvision(validation_diffs, ext, kind):
    assert validation_diffs[f"{kind}.{ext}"] == 0.0


@pytest.mark.parametrize("ext,kind", all_kinds())
def test_training_matches_png_of_pil_pixels(training_pairs, ext, kind):
    (got, meta), (want, wmeta) = training_pairs[f"{kind}.{ext}"]
    assert meta["index"] == wmeta["index"]
    assert got.shape == want.shape
    assert np.array_equal(got, want)


def gif_data_bytes(data):
    """Offsets of the LZW data bytes of @data's frame (not block lengths)."""
    rest = gif_parts(data)[-1]
    pos, out = len(data) - len(rest) + 1, []       # past the code size
    while pos < len(data) and data[pos]:
        out += range(pos + 1, pos + 1 + data[pos])
        pos += 1 + data[pos]
    return out


def test_corrupt_gif_lzw_data_as_pil(tmp_path):
    """GIFs with a few LZW data bytes overwritten at random: where PIL
    fails (codes past the table, a first code after a clear code that is
    no pixel, an end code too soon), spdldecode skips the file, counted,
    with a warning naming it; where PIL decodes, the pixels are PIL's."""
    rng = np.random.default_rng(1)
    sources = {
        "plain": pil_bytes(Image.fromarray(base(rng, 120, 90)).quantize(64),
                           "GIF", interlace=False),
        "interlaced": pil_bytes(Image.fromarray(base(rng, 90, 120)).quantize(256),
                                "GIF"),
        "4-colours": pil_bytes(Image.fromarray(base(rng, 100, 70)).quantize(4),
                               "GIF", interlace=False),
    }
    folder = tmp_path / "class0"
    folder.mkdir()
    pil_failed = set()
    for name, data in sources.items():
        offsets = gif_data_bytes(data)
        for i in range(40):
            bad = bytearray(data)
            for at in rng.choice(offsets, rng.integers(1, 4), replace=False):
                bad[at] = rng.integers(0, 256)
            path = folder / f"{name}-{i}.gif"
            path.write_bytes(bad)
            try:
                pil_rgb(path)
            except OSError:
                pil_failed.add(path.name)
    # both outcomes, and not only one kind of failure
    assert 30 < len(pil_failed) < 100, len(pil_failed)

    tail, transform = VALIDATION["val56"]
    decoded, warnings, counts = decode_folder(folder, tail, "gif")
    assert set(decoded) | pil_failed == {p.name for p in folder.iterdir()}
    assert not set(decoded) & pil_failed
    assert set(warnings) == pil_failed
    assert all("corrupt" in w for w in warnings.values()), warnings
    assert counts.get_value("corrupt") == len(pil_failed)
    for name, got in decoded.items():
        expected = np.asarray(transform(pil_rgb(folder / name)))
        assert np.array_equal(got, expected), name
