"""spdldecode on TIFF delivers exactly where PIL's convert("RGB") does, with
PIL's pixels.

TIFF as scanners, microscopes and ImageMagick write it (tiled, separate
planes, JPEG-compressed, YCbCr subsampled or not, FillOrder 2), made by
libtiff's tiffcp from PIL's files; a Deflate TIFF damaged where a centre
crop does not look; and each kind of tests/python/test_more_formats.py and
of this file mutated (bits flipped, cut short, junk appended): where PIL
fails, the file is skipped, counted and named in a warning; where PIL
decodes, the validation recipe's pixels equal torchvision's on PIL's.
"""
import shutil
import subprocess

import numpy as np
import pytest
import torchvision.transforms as T
from PIL import Image

from conftest import smooth_image
import spdltest
from test_more_formats import pil_bytes, pil_rgb, tiff_kinds
from tiffwrite import SHORT, tiff_bytes

VAL224 = ("width=224 height=224 mode=center-crop resize-shorter=256",
          T.Compose([T.Resize(256), T.CenterCrop(224)]))
VAL56 = ("width=56 height=56 mode=center-crop resize-shorter=64",
         T.Compose([T.Resize(64), T.CenterCrop(56)]))


def tiffcp(tmp_path, data, *args):
    """@data rewritten by libtiff's tiffcp with @args."""
    assert shutil.which("tiffcp"), "tools/install-deps installs libtiff-tools"
    src, dst = tmp_path / "tiffcp-in.tif", tmp_path / "tiffcp-out.tif"
    src.write_bytes(data)
    subprocess.run(["tiffcp", *args, str(src), str(dst)], check=True)
    return dst.read_bytes()


def ycbcr_bytes(rgb, sub, deflate=False):
    """A YCbCr TIFF of @rgb, chroma subsampled by @sub (h, v), as libtiff's
    YCbCr data units lay it out."""
    h, w = rgb.shape[0] // sub[1] * sub[1], rgb.shape[1] // sub[0] * sub[0]
    f = rgb[:h, :w].astype(float)
    y = 0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2]
    cb = (f[..., 2] - y) / 1.772 + 128
    cr = (f[..., 0] - y) / 1.402 + 128
    y, cb, cr = (np.clip(np.rint(c), 0, 255).astype(np.uint8)
                 for c in (y, cb, cr))
    units = []
    for by in range(0, h, sub[1]):
        for bx in range(0, w, sub[0]):
            units.append(y[by:by + sub[1], bx:bx + sub[0]].reshape(-1))
            units.append([cb[by:by + sub[1], bx:bx + sub[0]].mean().round(),
                          cr[by:by + sub[1], bx:bx + sub[0]].mean().round()])
    data = np.concatenate(units).astype(np.uint8)
    return tiff_bytes(data[None, :], 8, 6, tags={
        256: (4, [w]), 257: (4, [h]), 258: (SHORT, [8, 8, 8]),
        277: (SHORT, [3]), 278: (4, [h]), 530: (SHORT, list(sub))},
        deflate=deflate)


def layouts(tmp_path):
    """{name: TIFF bytes} of the layouts PIL reads through libtiff."""
    rng = np.random.default_rng(3)
    rgb = np.asarray(smooth_image(rng, 500, 375))
    img = Image.fromarray(rgb)
    src = {"rgb": pil_bytes(img, "TIFF"),
           "gray": pil_bytes(img.convert("L"), "TIFF"),
           "rgba": pil_bytes(img.convert("RGBA"), "TIFF"),
           "bw": pil_bytes(img.convert("1"), "TIFF")}
    tiled = ["-t", "-w", "64", "-l", "48"]
    out = {}
    for kind in ("rgb", "gray", "rgba", "bw"):
        out[f"{kind}-tiled"] = tiffcp(tmp_path, src[kind], *tiled)
        out[f"{kind}-tiled-deflate"] = tiffcp(tmp_path, src[kind], *tiled,
                                              "-c", "zip")
    for kind in ("rgb", "gray", "bw"):
        out[f"{kind}-fillorder2-lzw"] = tiffcp(tmp_path, src[kind], "-f",
                                               "lsb2msb", "-c", "lzw")
    out["gray4-fillorder2"] = tiffcp(tmp_path, tiff_bytes(
        rgb[:, :, 1] >> 4, 4, 1), "-f", "lsb2msb")
    out["palette-fillorder2-packbits"] = tiffcp(
        tmp_path, pil_bytes(img.quantize(200), "TIFF"), "-f", "lsb2msb",
        "-c", "packbits")
    out["bw-fillorder2"] = tiffcp(tmp_path, src["bw"], "-f", "lsb2msb")
    out["bw-fillorder2-group4"] = tiffcp(tmp_path, src["bw"], "-f", "lsb2msb",
                                         "-c", "g4")
    out["bw-tiled-packbits"] = tiffcp(tmp_path, src["bw"], *tiled, "-c",
                                      "packbits")
    for kind in ("rgb", "rgba"):
        out[f"{kind}-planes"] = tiffcp(tmp_path, src[kind], "-p", "separate")
        out[f"{kind}-planes-lzw"] = tiffcp(tmp_path, src[kind], "-p",
                                           "separate", "-c", "lzw", "-r", "40")
        out[f"{kind}-planes-tiled-deflate"] = tiffcp(
            tmp_path, src[kind], "-p", "separate", *tiled, "-c", "zip")
    out["rgb-jpeg-ycbcr"] = tiffcp(tmp_path, src["rgb"], "-c", "jpeg",
                                   "-r", "32")
    out["rgb-jpeg-ycbcr-tiled"] = tiffcp(tmp_path, src["rgb"], *tiled, "-c",
                                         "jpeg:90")
    out["rgb-jpeg-rgb"] = tiffcp(tmp_path, src["rgb"], "-c", "jpeg:r",
                                 "-r", "16")
    for codec in ("lzma", "zstd", "webp"):
        out[f"rgb-{codec}"] = tiffcp(tmp_path, src["rgb"], "-c", codec)
    out["gray-jpeg"] = tiffcp(tmp_path, src["gray"], "-c", "jpeg", "-r", "64")
    out["rgb-jpeg-planes"] = tiffcp(tmp_path, src["rgb"], "-p", "separate",
                                    "-c", "jpeg:r", "-r", "32")
    for sub in ((1, 1), (2, 2), (4, 1)):
        out[f"ycbcr-{sub[0]}x{sub[1]}-deflate"] = ycbcr_bytes(rgb, sub,
                                                              deflate=True)
    out["ycbcr-planes-lzw"] = tiffcp(tmp_path, ycbcr_bytes(rgb, (1, 1)),
                                     "-p", "separate", "-c", "lzw")
    return out


def layouts_pil_fails(tmp_path):
    """{name: TIFF bytes} of layouts PIL 9.4 fails on: uncompressed YCbCr
    (it reads RGBX), FillOrder 2 past gray, palette and 8-bit RGB."""
    rgb = np.asarray(smooth_image(np.random.default_rng(4), 120, 90))
    rgba = pil_bytes(Image.fromarray(rgb).convert("RGBA"), "TIFF")
    return {"rgb": pil_bytes(Image.fromarray(rgb), "TIFF"),   # one delivered
            "ycbcr-uncompressed": ycbcr_bytes(rgb, (1, 1)),
            "ycbcr-uncompressed-2x2": ycbcr_bytes(rgb, (2, 2)),
            "rgba-fillorder2-lzw": tiffcp(tmp_path, rgba, "-f", "lsb2msb",
                                          "-c", "lzw"),
            "gray-alpha-fillorder2": tiffcp(tmp_path, pil_bytes(
                Image.fromarray(rgb).convert("LA"), "TIFF"), "-f", "lsb2msb")}


def decode_folder(folder, tail):
    return spdltest.decode_folder(folder, tail, "tif")


def pil_outcome(path):
    """PIL's RGB image of @path, or None where torchvision's loader fails."""
    try:
        return pil_rgb(path)
    except Exception:       # OSError, SyntaxError, ValueError ... all fail
        return None


def pil_ignores_strip_errors(name):
    """PIL reads YCbCr other than JPEG's through libtiff's RGBA interface
    without stopping on errors: a strip that fails to decode is delivered
    as whatever PIL's buffer held. spdldecode stops there (corrupt, or
    truncated where a strip lies past the end)."""
    return name.startswith("ycbcr")


def rows_left_out(warning):
    """Damaged CCITT data: a strip that ends early (libtiff goes on past a
    bad code word, and may end so) leaves its last rows unwritten, black
    here and whatever PIL's buffer held in PIL (memory it never
    initialised), so only the decision is compared."""
    return "Fax3Decode" in warning or "Fax4Decode" in warning


def assert_as_pil(folder, tail, transform):
    """Delivered exactly where PIL decodes, with its pixels; the rest skipped,
    counted and named (and damaged YCbCr PIL delivers regardless skipped as
    corrupt). Returns (delivered, skipped) names; the samples delivered from
    damaged data are among the delivered, warned about and counted as
    recovered."""
    decoded, warnings, counts = decode_folder(folder, tail)
    recovered = {n: w for n, w in warnings.items() if "damaged data" in w}
    assert counts.get_value("recovered") == len(recovered)
    assert set(recovered) <= set(decoded)
    warnings = {n: w for n, w in warnings.items() if n not in recovered}
    names = {p.name for p in folder.iterdir()}
    pil = {n: pil_outcome(folder / n) for n in sorted(names)}
    pil_failed = {n for n, im in pil.items() if im is None}
    for n in names - pil_failed - set(decoded):
        if pil_ignores_strip_errors(n) and any(
                w in warnings.get(n, "") for w in ("corrupt: TIFF image data",
                                                   "truncated:")):
            pil_failed.add(n)
    assert set(decoded) == names - pil_failed, (
        "delivered where PIL fails: "
        f"{sorted(set(decoded) & pil_failed)}; skipped where PIL decodes: "
        f"{ {n: warnings.get(n) for n in names - pil_failed - set(decoded)} }")
    assert set(warnings) == pil_failed
    total = counts.get_value("total")
    assert total == len(pil_failed), counts.to_string()
    wrong = {}
    for name, got in decoded.items():
        if rows_left_out(recovered.get(name, "")):
            continue
        expected = np.asarray(transform(pil[name]))
        if not np.array_equal(got, expected):
            wrong[name] = np.abs(got.astype(int) - expected).mean()
    assert not wrong, wrong
    return set(decoded), pil_failed


def write_folder(tmp_path, files):
    folder = tmp_path / "class0"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


@pytest.mark.parametrize("recipe", ["val224", "val56"])
def test_tiff_layouts_as_pil(tmp_path, recipe):
    """Tiled, separate planes, JPEG, YCbCr and FillOrder 2: PIL's pixels."""
    folder = write_folder(tmp_path, {f"{name}.tif": data for name, data in
                                     layouts(tmp_path).items()})
    tail, transform = VAL224 if recipe == "val224" else VAL56
    delivered, skipped = assert_as_pil(folder, tail, transform)
    assert not skipped


def test_tiff_layouts_pil_fails_on_skipped(tmp_path):
    """The layouts PIL fails on are skipped as unsupported, named."""
    files = layouts_pil_fails(tmp_path)
    folder = write_folder(tmp_path, {f"{n}.tif": d for n, d in files.items()})
    delivered, skipped = assert_as_pil(folder, *VAL56)
    assert delivered == {"rgb.tif"}
    counts = decode_folder(folder, VAL56[0])[2]
    assert counts.get_value("unsupported") == len(files) - 1, counts.to_string()


def last_strip(data):
    """(offset, byte count) of @data's last strip, as PIL reads them."""
    import io

    tags = Image.open(io.BytesIO(data)).tag_v2
    return tags[273][-1], tags[279][-1]


def test_deflate_damaged_past_the_crop_as_pil(tmp_path):
    """A bit flipped in the last strip of a Deflate TIFF, which the centre
    crop reads little or nothing of: PIL fails most (a bad code or the
    Adler-32), and those are skipped as corrupt whatever the crop reads."""
    rng = np.random.default_rng(5)
    data = pil_bytes(smooth_image(rng, 500, 375), "TIFF",
                     compression="tiff_adobe_deflate")
    off, count = last_strip(data)
    files = {"intact.tif": data}
    for i in range(40):
        bad = bytearray(data)
        at = off + int(rng.integers(count // 3, count))
        bad[at] ^= 1 << int(rng.integers(0, 8))
        files[f"flipped-{i}.tif"] = bytes(bad)
    folder = write_folder(tmp_path, files)
    delivered, skipped = assert_as_pil(folder, *VAL224)
    assert len(skipped) >= 30 and "intact.tif" in delivered, delivered
    warnings = decode_folder(folder, VAL224[0])[1]
    assert all("corrupt" in w for w in warnings.values()), warnings


def mutants(name, data, rng):
    """{file name: bytes} of @data with bits flipped (in its first half,
    where the directory and most strips lie, and anywhere), cut short, and
    with junk appended."""
    out = {}
    for i, span in enumerate((len(data) // 2, len(data), len(data))):
        bad = bytearray(data)
        for at in rng.choice(span, int(rng.integers(1, 4)), replace=False):
            bad[at] ^= 1 << int(rng.integers(0, 8))
        out[f"{name}-flipped{i}.tif"] = bytes(bad)
    out[f"{name}-cut.tif"] = data[:int(rng.integers(len(data) // 4,
                                                    len(data)))]
    out[f"{name}-junk.tif"] = data + rng.bytes(int(rng.integers(1, 3000)))
    return out


def test_mutated_tiffs_as_pil(tmp_path):
    """Every TIFF kind of test_more_formats.py and this file, mutated:
    delivered exactly where PIL's convert("RGB") succeeds, with its pixels;
    the rest skipped, counted and named."""
    rng = np.random.default_rng(11)
    files = {}
    bases = dict(tiff_kinds(np.random.default_rng(0)))
    bases.update(layouts(tmp_path))
    for name, data in bases.items():
        files.update(mutants(name, data, rng))
    folder = write_folder(tmp_path, files)
    delivered, skipped = assert_as_pil(folder, *VAL56)
    # both outcomes, many times
    assert len(delivered) > 50 and len(skipped) > 50, (len(delivered),
                                                       len(skipped))


def with_entry(data, tag, typ=None, count=None):
    """@data (little-endian, from tiffwrite) with the type or count of
    directory entry @tag changed."""
    import struct

    ifd = struct.unpack_from("<I", data, 4)[0]
    n = struct.unpack_from("<H", data, ifd)[0]
    out = bytearray(data)
    for at in range(ifd + 2, ifd + 2 + 12 * n, 12):
        t, old_typ, old_count = struct.unpack_from("<HHI", data, at)
        if t == tag:
            struct.pack_into("<HI", out, at + 2, typ or old_typ,
                             count or old_count)
            return bytes(out)
    raise KeyError(tag)


def test_tiff_layout_tags_libtiff_ignores_as_pil(tmp_path):
    """Tags libtiff ignores with a warning ("tag ignored") but PIL reads to
    lay the image out, and fails on: skipped as corrupt, named. The one
    difference kept: a single-valued tag given more values, of which PIL
    reads the first, is skipped too (libtiff ignores the tag; delivering
    the image laid out by defaults would differ from PIL)."""
    rgb = np.asarray(smooth_image(np.random.default_rng(6), 120, 90))
    idx = Image.fromarray(rgb).quantize(16)
    pal = np.asarray(idx.getpalette()[:48]).reshape(16, 3) * 257
    palette = tiff_bytes(np.asarray(idx), 4, 3, colormap=pal)
    plain = tiff_bytes(rgb, 8, 2)
    files = {"intact.tif": plain,
             "colormap-cut.tif": palette[:-40],
             "photometric-ascii.tif": with_entry(plain, 262, typ=2),
             "bits-count-5.tif": with_entry(plain, 258, count=5)}
    folder = write_folder(tmp_path, files)
    delivered, skipped = assert_as_pil(folder, *VAL56)
    assert delivered == {"intact.tif"}
    warnings = decode_folder(folder, VAL56[0])[1]
    assert all("corrupt: TIFF directory" in w for w in warnings.values()), \
        warnings

    (folder / "photometric-count-2.tif").write_bytes(
        with_entry(plain, 262, count=2))
    assert pil_outcome(folder / "photometric-count-2.tif") is not None
    warnings = decode_folder(folder, VAL56[0])[1]
    assert "Incorrect count" in warnings["photometric-count-2.tif"]


def test_fuzzed_ccitt_and_packbits_recovered(tmp_path):
    """Group 4 and PackBits strips with bytes overwritten: where PIL
    delivers what libtiff made of them (it warns "Bad code word", "Discarding
    N bytes"), they are delivered too, warned about and counted as
    recovered (PackBits with PIL's pixels); skip-recovered=true skips them
    by that reason."""
    rng = np.random.default_rng(8)
    img = smooth_image(rng, 300, 200)
    sources = {"group4": pil_bytes(img.convert("1"), "TIFF",
                                   compression="group4"),
               "packbits": pil_bytes(img.convert("1"), "TIFF",
                                     compression="packbits")}
    files = {}
    for name, data in sources.items():
        off, count = last_strip(data)
        for i in range(20):
            bad = bytearray(data)
            for at in rng.integers(off, off + count, 2):
                bad[at] = int(rng.integers(0, 256))
            files[f"{name}-{i}.tif"] = bytes(bad)
    folder = write_folder(tmp_path, files)
    delivered, skipped = assert_as_pil(folder, *VAL56)
    decoded, warnings, counts = decode_folder(folder, VAL56[0])
    recovered = {n for n, w in warnings.items() if "damaged data" in w}
    for kind in sources:
        assert len([n for n in recovered if n.startswith(kind)]) >= 3, \
            (kind, recovered)

    skipping = decode_folder(folder, VAL56[0] + " skip-recovered=true")
    assert set(skipping[0]) == delivered - recovered
    assert skipping[2].get_value("recovered") == 0
    assert set(decoded) == delivered


def test_strip_over_max_decode_memory_read_by_rows(tmp_path):
    """A Deflate TIFF in one strip larger than max-decode-memory is read a
    row at a time (to its end: damage past the crop is still found), with
    PIL's pixels, not skipped as too-large."""
    rgb = np.asarray(smooth_image(np.random.default_rng(9), 1200, 900))
    data = tiff_bytes(rgb, 8, 2, deflate=True)
    assert last_strip(data)[1] > 1 << 20 and len(Image.open(
        __import__("io").BytesIO(data)).tag_v2[273]) == 1
    off, count = last_strip(data)
    bad = bytearray(data)
    bad[off + count - 2] ^= 0x10            # in the Adler-32
    folder = write_folder(tmp_path, {"one-strip.tif": data,
                                     "one-strip-bad-adler.tif": bytes(bad)})
    tail = VAL224[0] + " max-decode-memory=2000000"
    delivered, skipped = assert_as_pil(folder, tail, VAL224[1])
    assert delivered == {"one-strip.tif"}
