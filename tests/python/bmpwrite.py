"""A minimal BMP writer for the kinds PIL cannot write (4-bit, 16-bit,
bitfields, top-down, OS/2 headers, RLE4 and RLE8)."""
import struct

import numpy as np

RGB, RLE8, RLE4, BITFIELDS = 0, 1, 2, 3


def _rows(a, bits):
    """(h, w) indices or (h, w, k) bytes -> the padded rows, top first."""
    out = []
    for r in np.asarray(a):
        if bits < 8:
            per = 8 // bits
            flat = np.concatenate([r, np.zeros((-len(r)) % per, r.dtype)])
            g = flat.astype(np.uint8).reshape(-1, per)
            packed = np.zeros(len(g), np.uint8)
            for i in range(per):
                packed |= (g[:, i] << (8 - bits * (i + 1))).astype(np.uint8)
            row = packed.tobytes()
        else:
            row = np.ascontiguousarray(r).astype(np.uint8).tobytes()
        out.append(row + b"\0" * (-len(row) % 4))
    return out


def _rle_row(r, rle4):
    """One row of indices as RLE commands: runs where pixels repeat (or
    alternate, for RLE4), absolute runs of 3 or more elsewhere."""
    out, i, n = bytearray(), 0, len(r)

    def run_at(j):
        k = j + 1
        while k < n and k - j < 255 and r[k] == r[j + (k - j) % 2 if rle4 else j]:
            k += 1
        return k - j

    while i < n:
        k = run_at(i)
        if k >= 3 or n - i < 3:
            k = max(1, min(k, n - i))
            v = (r[i] << 4 | r[i + 1 if k > 1 else i]) if rle4 else r[i]
            out += bytes([k, v])
            i += k
            continue
        j = i
        while j < n and j - i < 255 and run_at(j) < 3:
            j += 1
        if rle4 and (j - i) % 2 and j - i > 1:
            j -= 1      # PIL reads an odd RLE4 literal one pixel short
        lit = [int(v) for v in r[i:j]]
        if len(lit) < 3:
            for v in lit:
                out += bytes([1, (v << 4 | v) if rle4 else v])
        else:
            if rle4:
                body = bytes((lit[m] << 4) | (lit[m + 1] if m + 1 < len(lit) else 0)
                             for m in range(0, len(lit), 2))
            else:
                body = bytes(lit)
            out += bytes([0, len(lit)]) + body + b"\0" * (len(body) % 2)
        i = j
    return bytes(out) + b"\0\0"


def bmp_bytes(a, bits, palette=None, header=40, top_down=False,
              compression=RGB, masks=None, colors=0):
    """BMP file bytes: @a is (h, w) palette indices for 1-8 bits, (h, w)
    16-bit values, or (h, w, 3 or 4) bytes in file order (B, G, R, ...).
    @palette: (n, 3) RGB. @masks: bitfields, in the header from V4 on."""
    a = np.asarray(a)
    h, w = a.shape[:2]
    if bits == 16:
        a = a.astype("<u2").view(np.uint8).reshape(h, w, 2)
    if compression in (RLE8, RLE4):
        rows = a[::-1] if not top_down else a
        data = b"".join(_rle_row(r, compression == RLE4) for r in rows)
        data = data[:-2] + b"\0\1"
    else:
        rows = _rows(a, bits)
        data = b"".join(rows if top_down else rows[::-1])
    entry = 3 if header == 12 else 4
    pal = b""
    if palette is not None:
        pal = b"".join(bytes([b, g, r]) + b"\0" * (entry - 3)
                       for r, g, b in np.asarray(palette, np.uint8))
    if header == 12:
        info = struct.pack("<IHHHH", 12, w, h, 1, bits)
    else:
        info = struct.pack("<IiiHHIIiiII", header, w, -h if top_down else h, 1,
                           bits, compression, len(data), 2835, 2835, colors, 0)
        if masks is not None and header > 40:
            info += struct.pack("<%dI" % len(masks), *masks)
        info += b"\0" * (header - len(info))
    extra = b""
    if masks is not None and header == 40:
        extra = struct.pack("<III", *masks[:3])
    offset = 14 + len(info) + len(extra) + len(pal)
    body = info + extra + pal + data
    return b"BM" + struct.pack("<IHHI", 14 + len(body), 0, 0, offset) + body
