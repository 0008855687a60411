"""Makes a small ImageNet-like dataset and runs the loader on it.

    python3 -m spdlgst.demo [--dataset DIR] [--count 512] [--epochs 2]

Prints what a training loop sees: batches, shapes, dtypes, labels, images/s
and how long the loop waited for data.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

from . import Loader
from .pipelines import launch_line


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
    ap.add_argument("--pipeline", default="imagenet-train")
    args = ap.parse_args(argv)

    tmp = None
    dataset = args.dataset
    if dataset is None:
        tmp = tempfile.TemporaryDirectory(prefix="spdl-demo-")
        print(f"making a sample dataset: {args.count} JPEGs, {args.classes} "
              f"classes in {tmp.name} ...", flush=True)
        dataset = make_dataset(tmp.name, args.count, args.classes)

    launch = launch_line(args.pipeline, dataset, batch_size=args.batch_size)
    print(f"pipeline: {launch}\n", flush=True)
    with Loader(launch) as loader:
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
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
