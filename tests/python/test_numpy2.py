"""spdlgst where most PyTorch users run it: a virtual environment with
numpy 2 from PyPI over Debian's python3 and its gi (tools/make-test-venv
makes it: python3 -m venv --system-site-packages, pip install numpy).
The batches are the same as under Debian's numpy."""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import spdlgst
from test_checkpoint import make_folder

SCRIPT = r"""
import hashlib, json, sys
import numpy
import spdlgst
assert int(numpy.__version__.split(".")[0]) >= 2, numpy.__version__
out = []
with spdlgst.ImageLoader(sys.argv[1], recipe="train", batch_size=4, size=8,
                         output="numpy", epochs=2, dtype="float32",
                         mean="imagenet", std="imagenet") as loader:
  for epoch in range(2):
    for batch in loader:
        images, labels = batch
        assert isinstance(images, numpy.ndarray) and images.dtype == numpy.float32
        out.append([batch.epoch, [int(i) for i in batch.indices],
                    hashlib.sha1(numpy.ascontiguousarray(images).tobytes()).hexdigest(),
                    [int(x) for x in labels]])
print(json.dumps({"numpy": numpy.__version__, "batches": out}))
"""


def test_numpy2_venv_gives_the_same_batches(tmp_path):
    venv = os.environ.get("SPDL_NUMPY2_VENV", "")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        pytest.skip("no numpy 2 venv (tools/make-test-venv)")
    root = make_folder(tmp_path / "ds", 10)
    res = subprocess.run([python, "-c", SCRIPT, str(root)], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.splitlines()[-1])
    assert got["numpy"].startswith("2.")
    expected = []
    with spdlgst.ImageLoader(root, recipe="train", batch_size=4, size=8,
                             output="numpy", epochs=2, dtype="float32",
                             mean="imagenet", std="imagenet") as loader:
        for batch in (b for _ in range(2) for b in loader):
            images, labels = batch
            expected.append([batch.epoch, [int(i) for i in batch.indices],
                             hashlib.sha1(np.ascontiguousarray(images).tobytes()).hexdigest(),
                             [int(x) for x in labels]])
    assert got["batches"] == expected and len(expected) == 6
