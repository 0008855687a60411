"""Makes a small ImageNet-like dataset and runs the loader on it, then the
same for video clips and audio clips.

    python3 -m spdlgst.demo [--dataset DIR] [--count 512] [--epochs 2]
                            [--fields 32] [--videos 16] [--audio 12]

Shows both ways to run it: the Python loop over spdlgst.ImageLoader (what a
training loop sees: batches, shapes, dtypes, labels, images/s, how long the
loop waited for data) and the same pipeline as a gst-launch-1.0 command;
then a batch of images with their captions and segmentation masks from
sidecar files (--fields 0 leaves it out); then one epoch of spdlgst.VideoLoader's clip batches on short videos it
makes with FFmpeg (--videos 0 leaves them out), and one of
spdlgst.AudioLoader's on short speech-like files it makes with
GStreamer's encoders (--audio 0 leaves them out).
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np

from .recipes import AudioLoader, ImageLoader, VideoLoader, gst_launch_command


def make_dataset(root, count, classes, seed=0):
    """count JPEGs in ImageFolder layout: ImageNet's sizes, qualities and
    content statistics (see sampledata; bench/make-dataset makes the same)."""
    from . import sampledata

    sampledata.make_dataset(root, count, classes, seed=seed,
                            jobs=os.cpu_count() or 1)
    return root


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", help="an ImageFolder tree (default: make one)")
    ap.add_argument("--count", type=int, default=512)
    ap.add_argument("--classes", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--recipe", default="train", choices=("train", "val"))
    ap.add_argument("--fields", type=int, default=32,
                    help="images with a caption and a mask for the fields "
                    "demo (0: none)")
    ap.add_argument("--videos", type=int, default=16,
                    help="videos to make for the clip demo (0: none)")
    ap.add_argument("--audio", type=int, default=12,
                    help="audio files to make for the audio demo (0: none)")
    args = ap.parse_args(argv)
    if args.videos < 0:
        ap.error("--videos must be 0 or more")
    if args.fields < 0:
        ap.error("--fields must be 0 or more")
    if args.audio < 0:
        ap.error("--audio must be 0 or more")

    tmp = None
    dataset = args.dataset
    if dataset is None:
        tmp = tempfile.TemporaryDirectory(prefix="spdl-demo-")
        print(f"making a sample dataset: {args.count} JPEGs, {args.classes} "
              f"classes in {tmp.name} ...", flush=True)
        dataset = make_dataset(tmp.name, args.count, args.classes)

    print("The Python way:\n\n"
          "    import spdlgst\n"
          f"    loader = spdlgst.ImageLoader({dataset!r}, recipe={args.recipe!r}, "
          f"batch_size={args.batch_size})\n"
          "    for images, labels in loader:   # one epoch per loop\n"
          "        ...\n", flush=True)
    with ImageLoader(dataset, recipe=args.recipe, batch_size=args.batch_size) as loader:
        print(f"{len(loader)} batches per epoch")
        for epoch in range(args.epochs):
            start = time.perf_counter()
            images_seen = batches = 0
            labels_seen = set()
            for images, labels in loader:
                if batches == 0:
                    print(f"epoch {epoch}: images {images.dtype} "
                          f"{tuple(images.shape)}, labels {labels.dtype} "
                          f"{tuple(labels.shape)} first labels "
                          f"{labels[:8].tolist()}")
                batches += 1
                images_seen += len(labels)
                labels_seen.update(labels.tolist())
            elapsed = time.perf_counter() - start
            print(f"epoch {epoch}: {batches} batches, {images_seen} images, "
                  f"{len(labels_seen)} classes, {images_seen / elapsed:.0f} "
                  f"images/s ({elapsed:.2f} s)")
        stats = loader.stats()
        print(f"the loop waited {stats['loader']['wait_seconds']:.2f} s for "
              f"data in {stats['loader']['batches']} batches")
    # one epoch of the same pipeline (an ImageLoader runs until closed)
    line = ImageLoader.launch_line_for(dataset, recipe=args.recipe,
                                       batch_size=args.batch_size, epochs=1)
    command = gst_launch_command(line)
    print("\nThe GStreamer way, the same pipeline for one epoch "
          "(ImageLoader(...).launch_line):\n\n    "
          + command.replace(" ! ", " ! \\\n        ") + "\n", flush=True)
    ok, elapsed = run_launch_command(command)
    if not ok:
        print("gst-launch-1.0 failed")
        return 1
    print(f"gst-launch-1.0: one epoch in {elapsed:.2f} s")
    if tmp is not None:
        tmp.cleanup()
    if args.fields and fields_demo(args.fields) != 0:
        return 1
    if args.videos and video_demo(args.videos) != 0:
        return 1
    if args.audio:
        return audio_demo(args.audio)
    return 0


def run_launch_command(command):
    """Runs a gst-launch-1.0 command; (ok, seconds)."""
    start = time.perf_counter()
    done = subprocess.run(shlex.split(command), stdout=subprocess.DEVNULL)
    return done.returncode == 0, time.perf_counter() - start


def run_clip_demo(loader_class, root, kwargs, describe, what):
    """One epoch of @loader_class on @root (@describe prints the first
    batch), then the same pipeline with gst-launch-1.0; 0, or 1 when
    gst-launch-1.0 failed."""
    clips_seen = 0
    start = time.perf_counter()
    with loader_class(root, **kwargs) as loader:
        for batch in loader:
            if clips_seen == 0:
                describe(batch)
            clips_seen += len(batch.labels)
        elapsed = time.perf_counter() - start
        skipped = {k: n for k, n in loader.skipped().items() if n}
    print(f"one epoch: {clips_seen} clips of {what} in {elapsed:.2f} s, "
          "start-up included" + (f", skipped {skipped}" if skipped else ""))
    command = gst_launch_command(loader_class.launch_line_for(root, **kwargs))
    print(f"\nThe GStreamer way ({loader_class.__name__}(...).launch_line):"
          "\n\n    " + command.replace(" ! ", " ! \\\n        ") + "\n",
          flush=True)
    ok, elapsed = run_launch_command(command)
    if not ok:
        print("gst-launch-1.0 failed")
        return 1
    print(f"gst-launch-1.0: one epoch in {elapsed:.2f} s")
    return 0


def video_demo(count, classes=4):
    """One epoch of R3D-18 clip batches (16 frames, stride 2, 112x112) on
    count short videos made with FFmpeg, both ways."""
    from .samplevideos import make_videos

    def describe(batch):
        clips, labels = batch
        print(f"clips {clips.dtype} {tuple(clips.shape)}, labels "
              f"{labels.dtype} {labels.tolist()}, pts (s) of the first clip "
              f"{np.round(np.asarray(batch.pts[0]), 3).tolist()}")

    with tempfile.TemporaryDirectory(prefix="spdl-demo-videos-") as root:
        print(f"\nmaking {count} videos (3 s, H.264/VP9, 25-30 fps), "
              f"{classes} classes in {root} ...", flush=True)
        make_videos(root, count, classes, seconds=3.0,
                    jobs=os.cpu_count() or 1)
        print("Video clips, the Python way:\n\n"
              "    loader = spdlgst.VideoLoader("
              f"{root!r}, batch_size=4, frames=16, stride=2, layout='CTHW')\n"
              "    for clips, labels in loader:\n"
              "        ...\n", flush=True)
        return run_clip_demo(VideoLoader, root, dict(
            batch_size=4, frames=16, stride=2, layout="CTHW", epochs=1),
            describe, f"{count} videos")


def fields_demo(count):
    """A batch of images with what each carries beside it: x.txt (a
    caption) and x.seg.png (a palette mask: class ids) beside x.jpg,
    the mask through the image's own random resized crop and flip."""
    from PIL import Image

    rng = np.random.default_rng(0)
    words = ["a", "red", "small", "dog", "cat", "on", "the", "grass", "sofa",
             "near", "water", "sleeping", "running"]
    with tempfile.TemporaryDirectory(prefix="spdl-demo-fields-") as root:
        print(f"\nmaking {count} images with a caption (x.txt) and a "
              f"segmentation mask (x.seg.png) beside each, in {root} ...",
              flush=True)
        os.makedirs(os.path.join(root, "all"))
        for i in range(count):
            h, w = int(rng.integers(200, 400)), int(rng.integers(200, 400))
            ys, xs = np.mgrid[0:h, 0:w]
            mask = ((xs * 3 // w) + 3 * (ys * 2 // h)).astype(np.uint8)
            img = (mask[..., None] * np.array([40, 25, 60]) +
                   rng.integers(0, 30, (h, w, 3))).astype(np.uint8)
            stem = os.path.join(root, "all", f"img{i:03d}")
            Image.fromarray(img).save(stem + ".jpg", quality=90)
            seg = Image.fromarray(mask, "P")
            seg.putpalette([v for c in range(256) for v in (c * 40 % 256, c * 90 % 256, 200)])
            seg.save(stem + ".seg.png")
            with open(stem + ".txt", "w") as f:
                f.write(" ".join(rng.choice(words, int(rng.integers(3, 8)))))
        print("Images with their fields, the Python way:\n\n"
              f"    loader = spdlgst.ImageLoader({root!r}, recipe='train', "
              "batch_size=8,\n"
              "                                 fields=('jpg', 'txt', "
              "'seg.png:label'))\n"
              "    for images, captions, masks in loader:\n"
              "        ...\n", flush=True)
        with ImageLoader(root, recipe="train", batch_size=8, epochs=1,
                         fields=("jpg", "txt", "seg.png:label")) as loader:
            images, captions, masks = batch = next(iter(loader))
            x, y, w, h = (round(float(v), 1) for v in batch.geometry.crop[0])
            print(f"images {images.dtype} {tuple(images.shape)}, captions "
                  f"{captions[:2]}, masks {masks.dtype} "
                  f"{tuple(masks.shape)} with class ids "
                  f"{sorted(set(masks.unique().tolist()))}; the first "
                  f"sample's crop box (x, y, w, h) in its source: "
                  f"({x}, {y}, {w}, {h}), flipped "
                  f"{bool(batch.geometry.flipped[0])}", flush=True)
    return 0


def audio_demo(count, classes=4):
    """One epoch of 1 s, 16 kHz mono clip batches on count short
    speech-like files (FLAC, MP3, Opus, WAV), both ways."""
    from .sampleaudio import make_audio

    def describe(batch):
        audio, labels = batch
        print(f"audio {audio.dtype} {tuple(audio.shape)}, labels "
              f"{labels.dtype} {labels.tolist()}, starts (s) "
              f"{np.round(np.asarray(batch.start), 3).tolist()}, "
              f"lengths {np.asarray(batch.lengths).tolist()}")

    kinds = [("flac", 16000, 1), ("mp3", 44100, 1), ("opus", 48000, 1),
             ("wav", 44100, 2)]
    with tempfile.TemporaryDirectory(prefix="spdl-demo-audio-") as root:
        print(f"\nmaking {count} audio files (0.5 to 4 s, FLAC, MP3, Opus, "
              f"WAV), {classes} classes in {root} ...", flush=True)
        make_audio(root, count, classes, seconds=(0.5, 4.0), kinds=kinds,
                   jobs=os.cpu_count() or 1)
        print("Audio clips, the Python way:\n\n"
              f"    loader = spdlgst.AudioLoader({root!r}, batch_size=8, "
              "sample_rate=16000, duration=1.0)\n"
              "    for audio, labels in loader:\n"
              "        ...\n", flush=True)
        return run_clip_demo(AudioLoader, root, dict(
            batch_size=8, sample_rate=16000, duration=1.0, epochs=1),
            describe, f"{count} files")


if __name__ == "__main__":
    sys.exit(main())
