"""A minimal PNG writer for the kinds PIL cannot write (16-bit colour,
2- and 4-bit samples, tRNS on any colour type, Adam7 interlacing)."""
import struct
import zlib

import numpy as np

# (x0, y0, dx, dy) of the seven Adam7 passes
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
GRAY, RGB, PALETTE, GRAY_ALPHA, RGBA = 0, 2, 3, 4, 6


def chunk(tag, data):
    body = tag + data
    return struct.pack(">I", len(data)) + body + struct.pack(
        ">I", zlib.crc32(body) & 0xFFFFFFFF)


def _pack_rows(a, depth):
    """(h, w, c) integer samples -> packed bytes of each row."""
    rows = []
    for r in a:
        flat = r.reshape(-1)
        if depth == 16:
            rows.append(flat.astype(">u2").tobytes())
        elif depth == 8:
            rows.append(flat.astype(np.uint8).tobytes())
        else:
            per = 8 // depth
            flat = np.concatenate([flat, np.zeros((-len(flat)) % per, flat.dtype)])
            groups = flat.astype(np.uint8).reshape(-1, per)
            packed = np.zeros(len(groups), np.uint8)
            for i in range(per):
                packed |= (groups[:, i] << (8 - depth * (i + 1))).astype(np.uint8)
            rows.append(packed.tobytes())
    return rows


def png_bytes(a, color_type, depth, palette=None, trns=None, interlace=False,
              extra_chunks=b""):
    """PNG file bytes of samples @a ((h, w) or (h, w, c))."""
    a = np.asarray(a)
    if a.ndim == 2:
        a = a[:, :, None]
    h, w = a.shape[:2]
    raw = b""
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    for x0, y0, dx, dy in passes:
        sub = a[y0::dy, x0::dx]
        if sub.size:
            raw += b"".join(b"\0" + r for r in _pack_rows(sub, depth))
    return png_of_rows(raw, w, h, color_type, depth, palette, trns,
                       interlace, extra_chunks)


def png_of_rows(raw, w, h, color_type, depth, palette=None, trns=None,
                interlace=False, extra_chunks=b"", idat_size=None, wbits=15,
                level=6):
    """PNG file bytes of @raw, the filtered rows (each a filter type byte
    and its packed samples), compressed at @level with a window of 2**@wbits
    bytes, in IDAT chunks of @idat_size bytes (None: one chunk)."""
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(
        ">IIBBBBB", w, h, depth, color_type, 0, 0, 1 if interlace else 0))
    out += extra_chunks
    if palette is not None:
        out += chunk(b"PLTE", np.asarray(palette, np.uint8).tobytes())
    if trns is not None:
        out += chunk(b"tRNS", trns)
    z = zlib.compressobj(level, zlib.DEFLATED, wbits)
    data = z.compress(raw) + z.flush()
    size = idat_size or len(data)
    for i in range(0, len(data), size):
        out += chunk(b"IDAT", data[i:i + size])
    return out + chunk(b"IEND", b"")
