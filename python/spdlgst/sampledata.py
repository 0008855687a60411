"""ImageNet-like JPEG datasets made from nothing: for demos, tests and
benchmarks, where no photos can be shipped.

Each image is procedural, with the statistics that make natural photos cost
what they cost to encode and decode: smooth colour gradients and a horizon,
a few objects with soft edges, texture with a natural image's 1/f amplitude
spectrum whose strength varies across the image (sky next to foliage), a
little colour noise and sensor grain. Sizes, aspect ratios, JPEG qualities
and the chroma subsampling mix follow the ImageNet training set: most
images 500 px on the long side, about 100 KB, 4:2:0; some 4:4:4, a few
progressive or grayscale. Layout: ROOT/<class>/<class>_<index>.JPEG.

Deterministic: the same seed and index give the same file.
"""
import colorsys
import os
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

# Texture contrast, calibrated against crops of real photos re-encoded the
# same way: ~3.4 bits per pixel, ~80 KB at 500x375, ~105 KB mean over
# ImageNet's sizes, the same libjpeg-turbo decode time per pixel.
TEXTURE_MEDIAN = 19.5


def pick_size(rng):
    """(width, height): 80% with a long side of 500, the rest 160..1400."""
    long_side = 500 if rng.random() < 0.8 else rng.randint(160, 1400)
    aspect = rng.choice([4 / 3, 4 / 3, 4 / 3, 3 / 2, 3 / 2, 1.0, 16 / 9, 5 / 4])
    short_side = max(16, round(long_side / aspect))
    return (long_side, short_side) if rng.random() < 0.75 else (short_side, long_side)


def pick_encoding(rng):
    """PIL save options with ImageNet's quality and subsampling mix."""
    return dict(quality=rng.randint(88, 97),
                subsampling=0 if rng.random() < 0.1 else 2,
                progressive=rng.random() < 0.05,
                optimize=rng.random() < 0.5)


def pink_noise(nprng, height, width, beta):
    """A field with a 1/f^beta amplitude spectrum, unit deviation: octaves
    of white noise, each upsampled onto the next (beta 1: natural images)."""
    levels = []
    h, w = height, width
    while min(h, w) >= 4:
        levels.append((h, w))
        h, w = (h + 1) // 2, (w + 1) // 2
    levels.append((h, w))
    gain = 2.0 ** (beta - 1.0)
    field = None
    for h, w in reversed(levels):
        # uniform, 3x cheaper than normal: the sum of octaves is Gaussian anyway
        noise = nprng.random((h, w), dtype=np.float32) - 0.5
        if field is None:
            field = noise
        else:
            up = Image.fromarray(field, "F").resize((w, h), Image.BICUBIC)
            field = np.asarray(up) * gain + noise
    return field / (field.std() + 1e-6)


def smooth_field(nprng, height, width):
    """A smooth field in 0..1: where texture is strong and where faint."""
    small = nprng.random((3, 4), dtype=np.float32)
    return np.asarray(Image.fromarray(small, "F").resize((width, height),
                                                         Image.BICUBIC))


def natural_colour(rng):
    """An RGB colour (float32): any hue, mostly muted, rarely black or white."""
    hue = rng.random()
    sat = rng.uniform(0.05, 0.7)
    val = rng.uniform(0.15, 0.95)
    return np.array(colorsys.hsv_to_rgb(hue, sat, val), np.float32) * 255


def background(rng, height, width):
    """Two vertical gradients split at a soft horizon: sky and ground."""
    horizon = rng.uniform(0.2, 0.8) * height
    softness = rng.uniform(2, 30)
    y = np.arange(height, dtype=np.float32)[:, None]
    t = y / max(1, height - 1)
    top = natural_colour(rng) * (1 - t) + natural_colour(rng) * t
    bottom = natural_colour(rng) * (1 - t) + natural_colour(rng) * t
    below = 0.5 + 0.5 * np.tanh((y - horizon) / (2 * softness))
    column = top * (1 - below) + bottom * below
    return np.broadcast_to(column[:, None, :], (height, width, 3))


def objects(rng, img, texture):
    """Draws 2..10 soft-edged ellipses and polygons, each with its own colour
    and texture strength, onto img (float32 HxWx3) and texture (HxW)."""
    height, width = texture.shape
    for _ in range(rng.randint(2, 10)):
        x0, y0 = rng.uniform(-0.2, 0.9) * width, rng.uniform(-0.2, 0.9) * height
        sw, sh = rng.uniform(0.05, 0.6) * width, rng.uniform(0.05, 0.6) * height
        ellipse = rng.random() < 0.5
        corners = [(x0 + rng.uniform(0, sw), y0 + rng.uniform(0, sh))
                   for _ in range(rng.randint(3, 7))]
        # out-of-focus edges: a photo's objects are rarely pixel-sharp
        blur = rng.uniform(0.6, 3.0)
        colour, strength = natural_colour(rng), rng.uniform(0.2, 2.0)
        # drawn in its own box (with room for the blur), not the whole frame
        pad = int(3 * blur) + 2
        left, top = max(0, int(x0) - pad), max(0, int(y0) - pad)
        right = min(width, int(x0 + sw) + pad + 1)
        bottom = min(height, int(y0 + sh) + pad + 1)
        if right <= left or bottom <= top:
            continue
        mask = Image.new("L", (right - left, bottom - top), 0)
        draw = ImageDraw.Draw(mask)
        if ellipse:
            draw.ellipse([x0 - left, y0 - top, x0 + sw - left, y0 + sh - top],
                         fill=255)
        else:
            draw.polygon([(x - left, y - top) for x, y in corners], fill=255)
        mask = mask.filter(ImageFilter.GaussianBlur(blur))
        alpha = np.asarray(mask, np.float32) / 255
        box = (slice(top, bottom), slice(left, right))
        img[box] += (colour - img[box]) * alpha[..., None]
        texture[box] += (strength - texture[box]) * alpha


def natural_image(seed, index, width, height):
    """uint8 RGB array (height, width, 3): a procedural photo-like image."""
    rng = random.Random(f"{seed}/{index}/content")
    nprng = np.random.default_rng([seed, index])
    img = np.array(background(rng, height, width), np.float32)
    # texture strength: faint to strong across the image, per object
    texture = 0.2 + 1.6 * smooth_field(nprng, height, width)
    objects(rng, img, texture)
    amplitude = TEXTURE_MEDIAN * float(np.exp(nprng.normal(0, 0.45)))
    luma = pink_noise(nprng, height, width, rng.uniform(0.95, 1.3))
    img += (luma * texture * amplitude)[..., None]
    # colour varies less and more smoothly than brightness
    ch, cw = (height + 3) // 4, (width + 3) // 4
    for c in range(3):
        small = pink_noise(nprng, ch, cw, 1.3)
        chroma = np.asarray(Image.fromarray(small, "F").resize((width, height),
                                                              Image.BILINEAR))
        img[..., c] += chroma * amplitude * 0.25
    grain = nprng.random(img.shape, dtype=np.float32) - 0.5
    img += grain * (rng.uniform(1.0, 4.0) * 12 ** 0.5)   # deviation 1..4
    return np.clip(img, 0, 255).astype(np.uint8)


def class_name(label):
    return f"n{label:08d}"


def make_image(root, index, classes, seed=0, size=None):
    """Writes image @index of the dataset (seed >= 0; size: (width, height)
    instead of ImageNet's mix); returns (path, bytes)."""
    rng = random.Random(f"{seed}/{index}/format")
    width, height = size or pick_size(rng)
    options = pick_encoding(rng)
    img = Image.fromarray(natural_image(seed, index, width, height))
    if rng.random() < 0.01:
        img = img.convert("L")
    name = class_name(index % classes)
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}_{index}.JPEG")
    img.save(path, **options)
    return path, os.path.getsize(path)


def _make_one(job):
    return make_image(*job)[1]


def make_dataset(root, count, classes, seed=0, jobs=1, size=None):
    """count JPEGs in ImageFolder layout; returns their total size in bytes.
    jobs > 1 encodes in worker processes (the files do not depend on it)."""
    work = [(root, i, classes, seed, size) for i in range(count)]
    if jobs <= 1:
        return sum(map(_make_one, work))
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(jobs) as pool:
        return sum(pool.map(_make_one, work, chunksize=16))
