"""A minimal TIFF writer for the kinds PIL cannot write (2- and 4-bit gray
and palette, 16-bit colour, associated alpha, several strips, any tag),
uncompressed or Deflate."""
import struct
import zlib

import numpy as np

from pngwrite import _pack_rows

SHORT, LONG = 3, 4


def tiff_bytes(a, bits, photometric, extra=(), colormap=None,
               rows_per_strip=None, big_endian=False, tags=None,
               deflate=False):
    """TIFF file bytes of samples @a ((h, w) or (h, w, c)); @colormap:
    (2**bits, 3) 16-bit entries; @tags: {tag: (type, values)} added;
    @deflate: each strip compressed (Compression 8)."""
    a = np.asarray(a)
    if a.ndim == 2:
        a = a[:, :, None]
    h, w, spp = a.shape
    e = ">" if big_endian else "<"
    if bits == 16:
        rows = [r.reshape(-1).astype(e + "u2").tobytes() for r in a]
    else:
        rows = _pack_rows(a, bits)
    rps = rows_per_strip or h
    strips = [b"".join(rows[i:i + rps]) for i in range(0, h, rps)]
    if deflate:
        strips = [zlib.compress(s) for s in strips]
    entries = {256: (LONG, [w]), 257: (LONG, [h]), 258: (SHORT, [bits] * spp),
               259: (SHORT, [8 if deflate else 1]), 262: (SHORT, [photometric]),
               277: (SHORT, [spp]), 278: (LONG, [rps]),
               273: (LONG, [0] * len(strips)),
               279: (LONG, [len(s) for s in strips])}
    if extra:
        entries[338] = (SHORT, list(extra))
    if colormap is not None:
        entries[320] = (SHORT, list(np.asarray(colormap).T.reshape(-1)))
    entries.update(tags or {})
    # header, strips, then the directory and the values it points to
    data = b"".join(strips)
    offsets, pos = [], 8
    for s in strips:
        offsets.append(pos)
        pos += len(s)
    entries[273] = (LONG, offsets)
    ifd_pos = 8 + len(data) + len(data) % 2
    values_pos = ifd_pos + 2 + 12 * len(entries) + 4
    ifd, values = b"", b""
    for tag in sorted(entries):
        typ, vals = entries[tag]
        fmt = e + ("H" if typ == SHORT else "I") * len(vals)
        packed = struct.pack(fmt, *vals)
        if len(packed) <= 4:
            field = packed + b"\0" * (4 - len(packed))
        else:
            field = struct.pack(e + "I", values_pos + len(values))
            values += packed + b"\0" * (len(packed) % 2)
        ifd += struct.pack(e + "HHI", tag, typ, len(vals)) + field
    head = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(e + "I", ifd_pos)
    return (head + data + b"\0" * (len(data) % 2) + struct.pack(e + "H", len(entries))
            + ifd + b"\0\0\0\0" + values)
