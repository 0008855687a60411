"""spdlgst with what most PyTorch users have: torch 2.x and numpy 2 from
PyPI in a virtual environment (tools/make-test-venv makes it over Debian's
python3 and gi, PyPI's torch and numpy shadowing Debian's torch 1.13 and
numpy 1.24). The same loaders give the same batches there as under
Debian's torch: pixels, labels, order, dtypes and shapes, and the tensors
are still the batch's GStreamer memory, not copies of it."""
import json
import os
import subprocess
import sys

import pytest

from test_checkpoint import make_folder

# run under both interpreters: every batch's fingerprint, and whether its
# tensors are views of the mapped GstMemory (the zero-copy path)
SCRIPT = r"""
import hashlib, json, sys
import numpy, torch
import spdlgst, spdlgst.batch

mapped = set()
init = spdlgst.batch._MappedTensor.__init__

def record(self, *args, **kwargs):
    init(self, *args, **kwargs)
    mapped.add(self.__array_interface__["data"][0])

spdlgst.batch._MappedTensor.__init__ = record

def digest(t):
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return hashlib.sha1(t.contiguous().numpy().tobytes()).hexdigest()

CONFIGS = [dict(recipe="train", epochs=2),
           dict(recipe="val", epochs=1, dtype="bfloat16", mean="imagenet",
                std="imagenet"),
           dict(recipe="train", epochs=1, dtype="float32", layout="nhwc",
                mean="imagenet", std="imagenet")]
out = []
for config in CONFIGS:
    epochs = config.pop("epochs")
    with spdlgst.ImageLoader(sys.argv[1], batch_size=4, size=8, output="torch",
                             epochs=epochs, **config) as loader:
        for batch in (b for _ in range(epochs) for b in loader):
            images, labels = batch
            assert isinstance(images, torch.Tensor), type(images)
            assert isinstance(labels, torch.Tensor), type(labels)
            out.append({"epoch": batch.epoch,
                        "indices": [int(i) for i in batch.indices],
                        "images": [str(images.dtype), list(images.shape),
                                   images.is_contiguous(), digest(images)],
                        "labels": [str(labels.dtype), list(labels.shape),
                                   labels.tolist()],
                        "zero_copy": [images.data_ptr() in mapped,
                                      labels.data_ptr() in mapped],
                        # the loop's own normalization of uint8 batches
                        "normalized": digest(spdlgst.normalize(
                            images, "imagenet", "imagenet"))
                        if images.dtype == torch.uint8 else None})
print(json.dumps({"torch": torch.__version__, "torch_file": torch.__file__,
                  "numpy": numpy.__version__, "batches": out}))
"""


def run(python, root):
    res = subprocess.run([python, "-c", SCRIPT, str(root)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.splitlines()[-1])


def torch2_python():
    venv = os.environ.get("SPDL_TORCH2_VENV", "")
    python = os.path.join(venv, "bin", "python")
    if not venv or not os.path.exists(python):
        why = "no torch 2 venv (tools/make-test-venv makes it)"
        try:
            with open(venv + ".skipped") as f:
                why = f"no torch 2 venv: {' '.join(f.read().split())}"
        except OSError:
            pass
        pytest.skip(why)
    return python


def test_pypi_torch2_gives_the_same_batches(tmp_path):
    python = torch2_python()
    root = make_folder(tmp_path / "ds", 10)
    got = run(python, root)
    assert got["torch"].startswith("2."), got["torch"]
    assert int(got["numpy"].split(".")[0]) >= 2, got["numpy"]
    # PyPI's torch from the venv, not Debian's under /usr/lib
    assert got["torch_file"].startswith(os.path.dirname(os.path.dirname(python)))
    expected = run(sys.executable, root)
    assert not expected["torch"].startswith("2."), "Debian's torch is 1.13"
    # 3 batches a epoch: 2 epochs uint8, one bfloat16, one float32
    assert len(expected["batches"]) == 12
    assert got["batches"] == expected["batches"]
    kinds = {(b["images"][0], tuple(b["images"][1][1:])) for b in got["batches"]}
    assert kinds == {("torch.uint8", (3, 8, 8)), ("torch.bfloat16", (3, 8, 8)),
                     ("torch.float32", (8, 8, 3))}, kinds
    assert all(b["labels"][0] == "torch.int64" for b in got["batches"])
    assert all(b["zero_copy"] == [True, True] for b in got["batches"])
