"""Whole-image decodes (interlaced PNG, WebP, RLE BMP, interlaced GIF,
rotated TIFF) are bounded by spdldecode's max-decode-memory like
progressive JPEGs: over it, a sample is skipped as too-large and the
others decode."""
import numpy as np
from gi.repository import Gst
from PIL import Image

from bmpwrite import RLE8, bmp_bytes
from pngwrite import RGB, png_bytes


def decode_counts(root, memory):
    pipeline = Gst.parse_launch(
        f"spdlsrc location={root} ! spdldecode name=dec width=32 height=32 "
        f"max-decode-memory={memory} ! fakesink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    msg = bus.timed_pop_filtered(60 * Gst.SECOND,
                                 Gst.MessageType.EOS | Gst.MessageType.ERROR)
    assert msg is not None and msg.type == Gst.MessageType.EOS
    dec = pipeline.get_by_name("dec")
    decoded = dec.get_property("decoded")
    counts = dec.get_property("error-counts")
    too_large = counts.get_value("too-large")
    pipeline.set_state(Gst.State.NULL)
    return decoded, too_large


def test_whole_image_decodes_are_bounded(tmp_path):
    rng = np.random.default_rng(3)
    folder = tmp_path / "c0"
    folder.mkdir()
    pixels = rng.integers(0, 256, (600, 800, 3), dtype=np.uint8)   # 1.4 MB RGB
    (folder / "interlaced.png").write_bytes(png_bytes(pixels, RGB, 8, interlace=True))
    (folder / "plain.png").write_bytes(png_bytes(pixels, RGB, 8))   # row by row
    Image.fromarray(pixels).save(folder / "lossy.webp", quality=70)
    Image.fromarray(pixels).save(folder / "small.jpg", quality=90)
    # 1 MB: the interlaced PNG and the WebP need the whole image
    assert decode_counts(tmp_path, 1000000) == (2, 2)
    # enough memory: all four
    assert decode_counts(tmp_path, 0) == (4, 0)


def test_bmp_gif_tiff_whole_image_decodes_are_bounded(tmp_path):
    """RLE BMPs, interlaced GIFs and TIFFs PIL rotates need the whole image
    (1.5 MB of indices, 1.5 MB of RGB); their row-by-row kinds do not."""
    rng = np.random.default_rng(4)
    folder = tmp_path / "c0"
    folder.mkdir()
    img = Image.fromarray(rng.integers(0, 256, (1000, 1500, 3), dtype=np.uint8))
    idx = np.asarray(img.quantize(16))
    pal = np.asarray(img.quantize(16).getpalette()[:48]).reshape(16, 3)
    (folder / "rle.bmp").write_bytes(bmp_bytes(idx, 8, palette=pal,
                                               compression=RLE8))
    (folder / "plain.bmp").write_bytes(bmp_bytes(idx, 8, palette=pal))
    img.quantize(16).save(folder / "interlaced.gif")
    img.quantize(16).save(folder / "plain.gif", interlace=False)
    img.save(folder / "rotated.tif", tiffinfo={274: 6})
    img.save(folder / "plain.tif", compression="tiff_lzw")
    root = str(tmp_path) + " extensions=bmp,gif,tif"
    assert decode_counts(root, 1000000) == (3, 3)
    assert decode_counts(root, 0) == (6, 0)
