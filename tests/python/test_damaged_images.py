"""Damaged images: delivered or skipped exactly where PIL delivers or fails.

Files as users have them (a bit flipped by a disk or a transfer, a few
corrupt bytes in a JPEG's scan): spdldecode decodes what PIL's
``Image.open(f).convert("RGB")`` decodes, with PIL's pixels, and skips what
PIL refuses. Damaged data PIL decodes all the same is delivered with a
warning and counted as ``recovered`` (``skip-recovered`` skips it instead).
"""
import io

import numpy as np
import pytest
import torchvision.transforms as T
from gi.repository import Gst
from PIL import Image

import spdlgst
from conftest import smooth_image
from spdltest import frame_of

VAL = T.Compose([T.Resize(256), T.CenterCrop(224)])
VAL_LINE = "width=224 height=224 mode=center-crop resize-shorter=256"


def pil_bytes(img, fmt, **opts):
    buf = io.BytesIO()
    img.save(buf, format=fmt, **opts)
    return buf.getvalue()


def photo(seed, w=500, h=375):
    return smooth_image(np.random.default_rng(seed), w, h)


def pil_decode(data):
    """PIL's convert("RGB") of @data, or None where PIL raises."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            return img.convert("RGB")
    except Exception:           # what PIL raises on bad data varies
        return None


class Run:
    """What one spdldecode run over a folder gave: frames by file name,
    warnings, the element's counts."""

    def __init__(self, root, options="", extensions=None):
        ext = f" extensions={extensions}" if extensions else ""
        pipeline = Gst.parse_launch(
            f"spdlsrc location={root}{ext} ! spdldecode name=dec {options} ! "
            "appsink name=sink sync=false")
        sink = pipeline.get_by_name("sink")
        bus = pipeline.get_bus()
        pipeline.set_state(Gst.State.PLAYING)
        self.frames, self.warnings, self.errors = {}, [], []
        self.by_path = {}
        try:
            idle = 0
            while idle < 120:             # seconds without a sample
                sample = sink.emit("try-pull-sample", Gst.SECOND)
                if sample is not None:
                    arr, meta = frame_of(sample)
                    self.frames[meta["path"].rsplit("/", 1)[1]] = arr
                    self.by_path[meta["path"]] = arr
                    idle = 0
                    continue
                idle += 1
                if sink.get_property("eos") or self._errored(bus):
                    break
            self._drain(bus)
            dec = pipeline.get_by_name("dec")
            counts = dec.get_property("error-counts")
            self.counts = {counts.nth_field_name(i):
                           counts.get_value(counts.nth_field_name(i))
                           for i in range(counts.n_fields())}
            self.recovered = dec.get_property("recovered")
            self.stats = dec.get_property("stats")
        finally:
            pipeline.set_state(Gst.State.NULL)
        assert not self.errors, self.errors

    def _errored(self, bus):
        self._drain(bus)
        return bool(self.errors)

    def _drain(self, bus):
        while True:
            msg = bus.pop_filtered(Gst.MessageType.ERROR | Gst.MessageType.WARNING)
            if msg is None:
                return
            if msg.type == Gst.MessageType.ERROR:
                self.errors.append(msg.parse_error()[0].message)
            else:
                err, debug = msg.parse_warning()
                self.warnings.append((err.message, debug))

    def warned(self, name, reason):
        return [m for m, d in self.warnings
                if f'/{name}"' in m and f"reason: {reason}" in d]


def write_files(root, files):
    folder = root / "class0"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return root


def corrupt_scan(jpeg, marker=b"\xff\xd3"):
    """@jpeg, whole, with two bytes two thirds into its scan replaced by a
    marker: libjpeg's "premature end of data segment"."""
    data = bytearray(jpeg)
    at = len(data) * 2 // 3
    data[at:at + len(marker)] = marker
    return bytes(data)


# -- recovered ----------------------------------------------------------------

def test_whole_jpeg_with_corrupt_scan_is_delivered_as_recovered(tmp_path):
    """PIL decodes a whole JPEG with a few corrupt bytes in its scan: so do
    we, with PIL's pixels, a warning naming it and the recovered count;
    never called truncated."""
    damaged = corrupt_scan(pil_bytes(photo(1), "JPEG", quality=90))
    expected = pil_decode(damaged)
    assert expected is not None
    root = write_files(tmp_path, {"damaged.jpg": damaged,
                                  "fine.jpg": pil_bytes(photo(2), "JPEG")})
    run = Run(root, VAL_LINE)
    assert sorted(run.frames) == ["damaged.jpg", "fine.jpg"]
    assert np.array_equal(run.frames["damaged.jpg"], np.asarray(VAL(expected)))
    assert run.recovered == 1 and run.stats.get_value("recovered") == 1
    assert len(run.warned("damaged.jpg", "recovered")) == 1, run.warnings
    assert "premature end of data segment" in run.warned("damaged.jpg",
                                                         "recovered")[0]
    assert run.counts["truncated"] == 0 and run.counts["total"] == 0


def test_skip_recovered_skips_them_by_reason(tmp_path):
    damaged = corrupt_scan(pil_bytes(photo(1), "JPEG", quality=90))
    root = write_files(tmp_path, {"damaged.jpg": damaged,
                                  "fine.jpg": pil_bytes(photo(2), "JPEG")})
    run = Run(root, VAL_LINE + " skip-recovered=true")
    assert sorted(run.frames) == ["fine.jpg"]
    assert run.recovered == 0
    assert run.counts["recovered"] == 1 and run.counts["total"] == 1
    assert run.stats.get_value("skipped-recovered") == 1
    assert len(run.warned("damaged.jpg", "recovered")) == 1, run.warnings


def test_imageloader_reports_and_skips_recovered(tmp_path, caplog):
    damaged = corrupt_scan(pil_bytes(photo(1), "JPEG", quality=90))
    root = write_files(tmp_path, {"damaged.jpg": damaged,
                                  "fine.jpg": pil_bytes(photo(2), "JPEG")})
    with spdlgst.ImageLoader(root, batch_size=2, epochs=1) as loader:
        batches = list(loader)
        assert batches[0][0].shape[0] == 2
        assert loader.recovered() == 1
        assert loader.skipped().get("recovered", 0) == 0
    records = [r for r in caplog.records
               if getattr(r, "spdl_reason", None) == "recovered"]
    assert records and records[0].spdl_path.endswith("damaged.jpg")
    # a delivered sample is not summarized as skipped
    assert not any("skipped" in r.getMessage() and "recovered" in r.getMessage()
                   for r in caplog.records)
    with spdlgst.ImageLoader(root, batch_size=2, epochs=1,
                             skip_recovered=True) as loader:
        assert "skip-recovered=true" in loader.launch_line
        batches = list(loader)
        assert batches[0][0].shape[0] == 1
        assert loader.skipped()["recovered"] == 1
        assert loader.recovered() == 0


def test_jpeg_marker_running_past_the_end_after_the_rows(tmp_path):
    """A whole JPEG where a flipped bit made a marker (APP13) whose length
    runs past the end of the file: PIL's decoder is done at the last row
    and ignores the rest, so a baseline JPEG with it after or inside its
    scan is delivered with PIL's pixels, as recovered (it was skipped as
    truncated: "Premature end of JPEG file"). A progressive JPEG reads all
    its scans before any row, and a marker in the header has no rows
    before it: PIL fails, so they are skipped, as corrupt, not truncated
    (the files end in their end-of-image marker: they are whole). The same
    file cut short is truncated."""
    bogus = b"\xff\xed\xf3\xd7"            # APP13 of 62423 bytes
    baseline = pil_bytes(photo(4), "JPEG", quality=90)
    progressive = pil_bytes(photo(5), "JPEG", quality=90, progressive=True)
    small = pil_bytes(photo(4, 120, 90), "JPEG")    # shorter than the APP13
    files = {"after.jpg": baseline[:-2] + bogus + bytes(10) + b"\xff\xd9",
             "inside.jpg": corrupt_scan(baseline, bogus),
             "progressive.jpg": progressive[:-2] + bogus + bytes(10) +
             b"\xff\xd9",
             "header.jpg": small[:2] + bogus + small[2:],
             "cut.jpg": progressive[:len(progressive) * 2 // 3]}
    assert [pil_decode(files[n]) is None for n in sorted(files)] == [
        False, True, True, False, True]
    run = Run(write_files(tmp_path, files), VAL_LINE)
    assert sorted(run.frames) == ["after.jpg", "inside.jpg"], run.warnings
    for name in ("after.jpg", "inside.jpg"):
        assert np.array_equal(run.frames[name],
                              np.asarray(VAL(pil_decode(files[name]))))
        assert len(run.warned(name, "recovered")) == 1, run.warnings
    assert "runs past the end" in run.warned("after.jpg", "recovered")[0]
    assert run.recovered == 2 and run.counts["truncated"] == 1
    assert run.warned("cut.jpg", "truncated")
    assert run.counts["corrupt"] == 2, run.warnings
    for name in ("progressive.jpg", "header.jpg"):
        (warning,) = run.warned(name, "corrupt")
        assert "end-of-image marker of a whole file" in warning


def test_jpeg_damaged_below_the_crop_is_refused_as_pil_refuses(tmp_path):
    """A broken marker in the rows the center crop leaves out: PIL fails
    ("broken data stream"), so the sample is skipped, not delivered from
    the rows above it."""
    jpeg = pil_bytes(photo(3), "JPEG", quality=90)
    data = bytearray(jpeg)
    at = len(data) - 40
    data[at:at + 3] = b"\xff\xc4\x00"       # a DHT of length 0
    assert pil_decode(bytes(data)) is None
    root = write_files(tmp_path, {"broken.jpg": bytes(data),
                                  "fine.jpg": jpeg})
    run = Run(root, VAL_LINE)
    assert sorted(run.frames) == ["fine.jpg"]
    assert run.counts["corrupt"] == 1 and run.recovered == 0
    assert run.warned("broken.jpg", "corrupt")


# -- PNG: the whole data, as PIL reads it -------------------------------------

def png_chunks(data):
    """[(type, offset of its length field, length)] of a well-formed PNG."""
    out, pos = [], 8
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        out.append((data[pos + 4:pos + 8], pos, length))
        pos += 12 + length
    return out


def last_idat(data):
    return [c for c in png_chunks(data) if c[0] == b"IDAT"][-1]


@pytest.mark.parametrize("recipe", [VAL_LINE, "width=224 height=224 "
                                    "mode=random-resized-crop seed=1"])
def test_png_damaged_in_its_last_idat_is_refused_under_region_decoding(
        tmp_path, recipe):
    """A bit flipped in the last IDAT of a PIL-saved PNG: PIL fails
    ("broken data stream"); the sample is skipped as corrupt whatever the
    crop, never delivered with damaged or unchecked rows."""
    png = pil_bytes(photo(5), "PNG")
    _, pos, length = last_idat(png)
    files = {}
    for i, back in enumerate((3, 40, length // 2)):
        data = bytearray(png)
        data[pos + 8 + length - back] ^= 0x10
        assert pil_decode(bytes(data)) is None
        files[f"flip{i}.png"] = bytes(data)
    files["fine.png"] = png
    run = Run(write_files(tmp_path, files), recipe)
    assert sorted(run.frames) == ["fine.png"]
    assert run.counts["corrupt"] == 3, run.warnings
    for i in range(3):
        assert run.warned(f"flip{i}.png", "corrupt")


def test_tiff_damaged_outside_the_crop_is_refused_as_pil_refuses(tmp_path):
    """Deflate and LZW TIFFs with bytes broken in their last strip, below
    the rows the center crop reads: PIL decodes the whole image and fails,
    so the samples are skipped as corrupt (they were delivered from the
    rows above the damage)."""
    files = {}
    for kind in ("tiff_deflate", "tiff_lzw"):
        tiff = pil_bytes(photo(6), "TIFF", compression=kind)
        with Image.open(io.BytesIO(tiff)) as img:
            offsets, counts = img.tag_v2[273], img.tag_v2[279]
        assert len(offsets) > 4
        data = bytearray(tiff)
        at = offsets[-1] + counts[-1] // 2
        data[at:at + 8] = b"\xff" * 8
        assert pil_decode(bytes(data)) is None
        files[f"{kind}.tif"] = bytes(data)
        files[f"fine-{kind}.tif"] = tiff
    run = Run(write_files(tmp_path, files), VAL_LINE, extensions="tif")
    assert sorted(run.frames) == ["fine-tiff_deflate.tif", "fine-tiff_lzw.tif"]
    for kind in ("tiff_deflate", "tiff_lzw"):
        assert run.warned(f"{kind}.tif", "corrupt"), run.warnings
        assert np.array_equal(run.frames[f"fine-{kind}.tif"], np.asarray(
            VAL(pil_decode(files[f"fine-{kind}.tif"]))))


def test_png_read_as_pil_reads_its_ends(tmp_path):
    """No IEND, bytes after the image data that are no chunk, a bad CRC on
    an IDAT (PIL reads none of them): delivered with PIL's pixels. A chunk
    after the data that runs past the end of the file (PIL: "Truncated
    File Read"): skipped."""
    png = pil_bytes(photo(6), "PNG")
    iend = png_chunks(png)[-1][1]
    _, pos, length = last_idat(png)
    bad_crc = bytearray(png)
    bad_crc[pos + 8 + length] ^= 1
    files = {
        "no-iend.png": png[:iend],
        "junk-after.png": png[:iend] + b"\x00\x01",
        "junk-after-iend.png": png + b"garbage bytes, not chunks",
        "idat-crc.png": bytes(bad_crc),
        "chunk-past-end.png": png[:iend] + (1000).to_bytes(4, "big") + b"tEXtab",
    }
    decided = {name: pil_decode(data) for name, data in files.items()}
    assert [n for n, img in decided.items() if img is None] == ["chunk-past-end.png"]
    for line in (VAL_LINE, ""):           # region decoding, and whole
        run = Run(write_files(tmp_path, files), line)
        assert sorted(run.frames) == sorted(n for n, img in decided.items() if img)
        for name, img in decided.items():
            if img is not None:
                expected = np.asarray(VAL(img) if line else img)
                assert np.array_equal(run.frames[name], expected), name
        assert run.counts["total"] == 1 and run.counts["truncated"] == 1
        assert run.warned("chunk-past-end.png", "truncated")


def with_chunk(png, kind, payload, after_data=False):
    """@png with a @kind chunk of @payload before its first IDAT, or after
    its image data (before IEND)."""
    import zlib

    at = (png_chunks(png)[-1] if after_data else
          [c for c in png_chunks(png) if c[0] == b"IDAT"][0])[1]
    chunk = (len(payload).to_bytes(4, "big") + kind + payload +
             zlib.crc32(kind + payload).to_bytes(4, "big"))
    return png[:at] + chunk + png[at:]


def test_png_text_and_icc_chunks_read_as_pil_reads_them(tmp_path):
    """PIL's text and ICC chunk handlers fail on a compressed chunk that
    inflates past 1 MiB ("Decompressed Data Too Large"), before or after
    the image data, on text past 64 MiB in all, and on a zTXt of an
    unknown compression method: skipped (too-large, corrupt). Broken
    compressed text, an iTXt of an unknown method, ordinary text and
    profiles: delivered with PIL's pixels."""
    import zlib

    png = pil_bytes(photo(12, 200, 150), "PNG")
    bomb = zlib.compress(bytes(2 << 20), 9)
    under = zlib.compress(bytes((1 << 20) - 16), 9)
    files = {
        "ztxt.png": with_chunk(png, b"zTXt", b"Comment\0\0" +
                               zlib.compress(b"a caption " * 100)),
        "itxt-after.png": with_chunk(png, b"iTXt", b"Comment\0\1\0en\0\0" +
                                     zlib.compress(b"text " * 100), True),
        "iccp.png": with_chunk(png, b"iCCP", b"icc\0\0" +
                               zlib.compress(bytes(3000))),
        "ztxt-broken.png": with_chunk(png, b"zTXt", b"Comment\0\0" +
                                      b"\x78\x9c not deflate data"),
        "itxt-method-5.png": with_chunk(png, b"iTXt", b"Comment\0\1\5\0\0" +
                                        bomb),
        "ztxt-bomb.png": with_chunk(png, b"zTXt", b"Comment\0\0" + bomb),
        "ztxt-bomb-after.png": with_chunk(png, b"zTXt", b"Comment\0\0" +
                                          bomb, True),
        "itxt-bomb.png": with_chunk(png, b"iTXt", b"Comment\0\1\0\0\0" +
                                    bomb),
        "iccp-bomb.png": with_chunk(png, b"iCCP", b"icc\0\0" + bomb),
        "ztxt-method-1.png": with_chunk(png, b"zTXt", b"Comment\0\1" +
                                        zlib.compress(b"text")),
    }
    many = png
    for i in range(65):            # 65 x (1 MiB - 16) of text: over 64 MiB
        many = with_chunk(many, b"zTXt", b"k%d\0\0" % i + under)
    files["text-memory.png"] = many
    decided = {name: pil_decode(data) for name, data in files.items()}
    fails = {"ztxt-bomb.png", "ztxt-bomb-after.png", "itxt-bomb.png",
             "iccp-bomb.png", "ztxt-method-1.png", "text-memory.png"}
    assert {n for n, img in decided.items() if img is None} == fails
    run = Run(write_files(tmp_path, files), VAL_LINE)
    assert sorted(run.frames) == sorted(set(files) - fails), run.warnings
    for name in run.frames:
        assert np.array_equal(run.frames[name], np.asarray(VAL(decided[name])))
    for name in fails - {"ztxt-method-1.png"}:
        assert run.warned(name, "too-large"), (name, run.warnings)
    assert run.warned("ztxt-method-1.png", "corrupt")
    assert "Decompressed Data Too Large" in run.warned("iccp-bomb.png",
                                                       "too-large")[0]
    assert "64 MiB" in run.warned("text-memory.png", "too-large")[0]


# -- limits: every photo a phone or camera makes ------------------------------

@pytest.fixture(scope="module")
def large_photos(tmp_path_factory):
    """A 6000x4000 progressive 4:4:4 JPEG (137 MiB of coefficients), a
    6000x4000 16-bit interlaced PNG (137 MiB decoded whole) and a
    10240x10240 gray PNG (105 M pixels): PIL reads them all."""
    from pngwrite import ADAM7, png_of_rows

    root = tmp_path_factory.mktemp("large")
    folder = root / "class0"
    folder.mkdir()
    big = photo(7, 1500, 1000).resize((6000, 4000))
    big.save(folder / "progressive.jpg", quality=90, progressive=True,
             subsampling=0)
    deep = (np.asarray(big, np.uint16) << 8) | np.random.default_rng(7).integers(
        0, 256, (4000, 6000, 3), dtype=np.uint16)
    raw = b""
    for x0, y0, dx, dy in ADAM7:        # each pass's rows, filter type 0
        sub = deep[y0::dy, x0::dx].astype(">u2").view(np.uint8)
        raw += np.concatenate([np.zeros((sub.shape[0], 1), np.uint8),
                               sub.reshape(sub.shape[0], -1)], 1).tobytes()
    (folder / "deep-interlaced.png").write_bytes(
        png_of_rows(raw, 6000, 4000, 2, 16, interlace=True, level=1))
    gray = photo(8, 1024, 1024).convert("L").resize((10240, 10240))
    gray.save(folder / "gray.png", compress_level=1)
    return root


def test_large_photos_decode_by_default(large_photos):
    run = Run(large_photos, VAL_LINE)
    assert sorted(run.frames) == ["deep-interlaced.png", "gray.png",
                                  "progressive.jpg"], run.warnings
    for name in run.frames:
        with Image.open(large_photos / "class0" / name) as img:
            expected = np.asarray(VAL(img.convert("RGB")))
        assert np.array_equal(run.frames[name], expected), name


def test_imageloader_limits(large_photos):
    with spdlgst.ImageLoader(large_photos, batch_size=2, epochs=1,
                             max_pixels=50_000_000) as loader:
        assert "max-pixels=50000000" in loader.launch_line
        assert sum(len(labels) for _, labels in loader) == 2
        assert loader.skipped()["too-large"] == 1       # the gray PNG
    with spdlgst.ImageLoader(large_photos, batch_size=2, epochs=1,
                             max_decode_memory=100 << 20) as loader:
        assert sum(len(labels) for _, labels in loader) == 1
        assert loader.skipped()["too-large"] == 2       # the 137 MiB ones
    with pytest.raises(ValueError, match="max_pixels"):
        spdlgst.ImageLoader(large_photos, max_pixels=-1)


# -- formats PIL reads and we do not ------------------------------------------

def test_formats_not_decoded_are_named(tmp_path):
    """JPEG 2000, ICO and TGA named .jpg or .png (PIL reads them) are
    skipped as unsupported-format, naming the format and the formats that
    are decoded; bytes of no known format are not-jpeg, with the same
    list."""
    img = photo(9, 64, 48)
    files = {"j2k.jpg": pil_bytes(img, "JPEG2000"), "icon.png": pil_bytes(img, "ICO"),
             "targa.jpg": pil_bytes(img, "TGA"),
             "targa-rle.png": pil_bytes(img, "TGA", compression="tga_rle"),
             "noise.jpg": bytes(np.random.default_rng(0).integers(
                 0, 256, 3000, dtype=np.uint8)),
             "fine.jpg": pil_bytes(img, "JPEG")}
    run = Run(write_files(tmp_path, files), "width=32 height=32")
    assert sorted(run.frames) == ["fine.jpg"]
    assert run.counts["unsupported-format"] == 4 and run.counts["not-jpeg"] == 1
    decoded = "JPEG, PNG, WebP, BMP, GIF and TIFF"
    for name, fmt in (("j2k.jpg", "JPEG 2000"), ("icon.png", "ICO"),
                      ("targa.jpg", "TGA"), ("targa-rle.png", "TGA")):
        (warning,) = run.warned(name, "unsupported-format")
        assert f"a {fmt} image" in warning and decoded in warning
    (warning,) = run.warned("noise.jpg", "not-jpeg")
    assert decoded in warning


def gif_parts(data):
    """(header with its global palette, the records after it)."""
    gct = 3 * 2 ** ((data[10] & 7) + 1) if data[10] & 0x80 else 0
    return data[:13 + gct], data[13 + gct:]


def test_gif_bytes_before_a_record_are_skipped_as_pil_skips_them(tmp_path):
    """A GIF whose header is written twice, or with stray bytes between its
    records: PIL skips every byte that starts no record; so do we, with
    PIL's pixels."""
    img = photo(10, 120, 90).quantize(64)
    # a palette without the bytes that start records: PIL would read a
    # record there in the repeated header
    img.putpalette([v + 1 if v in b",!;" else v for v in img.getpalette()])
    gif = pil_bytes(img, "GIF")
    header, records = gif_parts(gif)
    assert not set(header) & set(b",!;")
    files = {"repeated-header.gif": header + header + records,
             "stray-bytes.gif": header + b"\x00\x07junk" + records}
    expected = {name: pil_decode(data) for name, data in files.items()}
    run = Run(write_files(tmp_path, files), "width=224 height=224 "
              "mode=center-crop resize-shorter=256", extensions="gif")
    assert sorted(run.frames) == sorted(files), run.warnings
    for name, img in expected.items():
        assert img is not None
        assert np.array_equal(run.frames[name], np.asarray(VAL(img))), name


def with_descriptor(gif, left=None, top=None, width=None, height=None):
    """@gif with its first image descriptor's fields replaced."""
    header, records = gif_parts(gif)
    at = len(header) + records.index(b",") + 1
    out = bytearray(gif)
    for i, value in enumerate((left, top, width, height)):
        if value is not None:
            out[at + 2 * i:at + 2 * i + 2] = value.to_bytes(2, "little")
    return bytes(out)


def test_gif_frame_of_width_0_at_the_left_as_pil(tmp_path):
    """A frame of width 0 at the left edge is the whole image to PIL (a
    tile of left and right 0): its data fills the screen, grown by the
    frame's bottom; at another left PIL fails. Delivered exactly where PIL
    reads them, with its pixels."""
    img = photo(13, 120, 90).quantize(64)
    gif = pil_bytes(img, "GIF")
    files = {"width-0.gif": with_descriptor(gif, width=0),
             "width-0-height-0.gif": with_descriptor(gif, width=0, height=0),
             "width-0-lower.gif": with_descriptor(gif, width=0, top=1),
             "width-0-left-5.gif": with_descriptor(gif, width=0, left=5),
             "height-0.gif": with_descriptor(gif, height=0)}
    decided = {name: pil_decode(data) for name, data in files.items()}
    assert decided["width-0.gif"] is not None
    run = Run(write_files(tmp_path, files), VAL_LINE, extensions="gif")
    assert sorted(run.frames) == sorted(n for n, im in decided.items()
                                        if im is not None), run.warnings
    for name in run.frames:
        assert np.array_equal(run.frames[name],
                              np.asarray(VAL(decided[name]))), name


def test_imageloader_log_limit_lifts_the_elements_warning_limit(tmp_path, caplog):
    """ImageLoader(log_limit=30) names each of 25 bad files, not the
    first 20 spdldecode posts by default."""
    files = {f"bad{i:02d}.jpg": b"\xff\xd8\xff" + bytes(40) for i in range(25)}
    files["fine.jpg"] = pil_bytes(photo(11, 64, 48), "JPEG")
    root = write_files(tmp_path, files)
    with spdlgst.ImageLoader(root, batch_size=4, size=32, epochs=1,
                             log_limit=30) as loader:
        assert "warning-limit=30" in loader.launch_line
        list(loader)
        assert sum(loader.skipped().values()) == 25
    named = {r.spdl_path.rsplit("/", 1)[1] for r in caplog.records
             if getattr(r, "spdl_path", None)}
    assert named == {f"bad{i:02d}.jpg" for i in range(25)}


# -- the rule: delivered exactly where PIL delivers, with PIL's pixels --------

HOSTILE_EXTENSIONS = ("jpg", "jpeg", "png", "webp", "bmp", "gif", "tif",
                      "tiff", "ppm", "pgm")


def hostile_trees(tmp_path, binary):
    """The folders of hostile images the C test @binary makes, kept."""
    import os
    import subprocess

    exe = os.path.join(os.environ["SPDL_BUILD_ROOT"], "tests", "check", binary)
    assert os.path.exists(exe), f"{exe}: built with the C tests"
    keep = tmp_path / binary
    keep.mkdir()
    env = dict(os.environ, SPDL_TEST_KEEP_TREES=str(keep),
               GST_PLUGIN_LOADING_WHITELIST="gstreamer:gst-plugins-base:"
               "gst-spdl")
    subprocess.run([exe], env=env, check=True, capture_output=True,
                   timeout=300)
    return sorted(keep.iterdir())


def frame_name(name):
    """@name (os.listdir's, surrogateescape) as a sample's path gives it."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@pytest.mark.parametrize("binary", ["elements_spdlimageformats",
                                    "pipelines_hostile", "elements_spdldecode"])
def test_hostile_corpora_delivered_exactly_where_pil_delivers(tmp_path,
                                                               binary):
    """Every image of the hostile sets the C tests make (a bomb, a zTXt
    bomb, cut and broken files of each format, odd names): delivered
    exactly where PIL's convert("RGB") succeeds (its bomb warning an
    error, as max-pixels' default is its limit), with PIL's pixels at the
    image's own size; PPM and PGM, which PIL reads, are skipped as
    unsupported-format (documented)."""
    import warnings

    checked, wrong = 0, []
    for tree in hostile_trees(tmp_path, binary):
        paths = [p for p in tree.rglob("*") if p.is_file() and
                 p.suffix.lower().lstrip(".") in HOSTILE_EXTENSIONS]
        if not paths:
            continue
        run = Run(tree, f"warning-limit={len(paths) + 1}",
                  extensions=",".join(HOSTILE_EXTENSIONS))
        for path in paths:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                try:                # a sparse file of GBs among them
                    with Image.open(path) as img:
                        expected = img.convert("RGB")
                except Exception:   # what PIL raises on bad data varies
                    expected = None
            name = frame_name(str(path))
            why = [(m, d) for m, d in run.warnings if f'{name}"' in m]
            if path.suffix.lower() in (".ppm", ".pgm"):
                if not any("reason: unsupported-format" in d for _, d in why):
                    wrong.append(f"{name}: {why}")
            elif (expected is None) == (name in run.by_path):
                pil = "fails" if expected is None else "reads"
                wrong.append(f"{name}: PIL {pil}, spdldecode "
                             f"{why or 'delivers'}")
            elif expected is not None and not np.array_equal(
                    run.by_path[name], np.asarray(expected)):
                wrong.append(f"{name}: pixels differ from PIL's")
            checked += 1
    assert not wrong, "\n".join(wrong)
    assert checked > 20

# the pixel bound of both sides: PIL's bomb check at this many pixels (its
# warning an error, as spdldecode's max-pixels is a skip), so that a size
# a bit flip makes huge costs neither side the memory
RULE_MAX_PIXELS = 4_000_000


def rule_corpus(tmp_path):
    """{name: bytes}: every kind the format tests build (JPEG, PNG, WebP,
    BMP, GIF; TIFF has its own), then per format mutations of two of them:
    bits flipped, cut short, junk appended."""
    from conftest import JPEG_KINDS
    from test_more_formats import bmp_kinds, gif_kinds
    from test_png_webp import png_kinds, webp_kinds

    corpus = {}
    rng = np.random.default_rng(42)
    for i, (w, h, mode, opts) in enumerate(JPEG_KINDS):
        if w * h <= 1_000_000:
            corpus[f"jpeg-{i}.jpg"] = pil_bytes(
                smooth_image(rng, w, h).convert(mode), "JPEG", **opts)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    for ext, kinds in (("png", png_kinds), ("webp", webp_kinds)):
        for kind, write in kinds(np.random.default_rng(0)).items():
            write(scratch / f"{kind}.{ext}")
            corpus[f"{ext}-{kind}.{ext}"] = (scratch / f"{kind}.{ext}").read_bytes()
    for ext, kinds in (("bmp", bmp_kinds), ("gif", gif_kinds)):
        for kind, data in kinds(np.random.default_rng(0)).items():
            corpus[f"{ext}-{kind}.{ext}"] = data
    for ext in ("jpg", "png", "webp", "bmp", "gif"):
        bases = sorted(n for n in corpus if n.endswith("." + ext))[:2]
        for base in bases:
            data = corpus[base]
            stem = base.rsplit(".", 1)[0]
            for m in range(4):
                flipped = bytearray(data)
                for at in rng.integers(len(data) // 8, len(data), 1 + m):
                    flipped[at] ^= 1 << int(rng.integers(0, 8))
                corpus[f"{stem}-flip{m}.{ext}"] = bytes(flipped)
                cut = int(rng.integers(len(data) // 4, len(data)))
                corpus[f"{stem}-cut{m}.{ext}"] = data[:cut]
                junk = bytes(rng.integers(0, 256, int(rng.integers(1, 64)),
                                          dtype=np.uint8))
                corpus[f"{stem}-junk{m}.{ext}"] = data + junk
    return corpus


def pil_decode_bounded(data):
    """pil_decode with the bomb check at RULE_MAX_PIXELS, its warning an
    error."""
    import warnings

    saved = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = RULE_MAX_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            return pil_decode(data)
    finally:
        Image.MAX_IMAGE_PIXELS = saved


# Where giflib and PIL's own GIF decoder part, documented in
# docs/plugins/notes/spdldecode.md: exactly these, or the test fails.
KNOWN_DIVERGENCES = {
    # a flipped bit makes an end code before the frame is full: PIL reads
    # on past it (the bytes after it as more codes, garbage rows), giflib
    # stops ("Image EOF detected before image complete")
    "gif-animated-transparent-disposal-flip0.gif",
}


def test_delivered_exactly_where_pil_delivers(tmp_path):
    corpus = rule_corpus(tmp_path)
    expected = {name: pil_decode_bounded(data) for name, data in corpus.items()}
    run = Run(write_files(tmp_path / "data", corpus),
              f"{VAL_LINE} max-pixels={RULE_MAX_PIXELS} "
              f"warning-limit={len(corpus)}",
              extensions="jpg,png,webp,bmp,gif")
    wrong = []
    for name, img in sorted(expected.items()):
        if (img is not None) != (name in run.frames):
            why = [m for m, _ in run.warnings if f"/{name}\"" in m]
            wrong.append(f"{name}: PIL {'reads' if img else 'fails'}, "
                         f"spdldecode {'delivers' if name in run.frames else why}")
        elif img is not None and not np.array_equal(run.frames[name],
                                                    np.asarray(VAL(img))):
            wrong.append(f"{name}: pixels differ from PIL's")
    assert {w.split(":", 1)[0] for w in wrong} == KNOWN_DIVERGENCES, \
        "\n".join(wrong)
    # the mutations reach both decisions
    assert 0 < sum(img is None for img in expected.values()) < len(corpus)
    # the skip reasons are truthful: a file cut short is truncated, a whole
    # one (bits flipped, junk appended) never is
    reasons = {name: skip_reason(run, name) for name in corpus
               if name not in run.frames}
    untrue = {name: reason for name, reason in reasons.items()
              if (reason == "truncated") != ("-cut" in name)}
    assert not untrue, untrue
    assert list(reasons.values()).count("truncated") > 10


def skip_reason(run, name):
    """The reason of @name's skip warning in @run, None if none."""
    for message, debug in run.warnings:
        if f'/{name}"' in message and "reason: " in debug:
            return debug.split("reason: ", 1)[1].split()[0].rstrip(",;)")
    return None
