"""The quickstart's demo (python3 -m spdlgst.demo): what a new user sees
first must work and show the batches it promises."""
import os
import re
import subprocess
import sys


def test_demo_shows_image_and_clip_batches(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "spdlgst.demo", "--count", "64", "--epochs",
         "2", "--batch-size", "32", "--videos", "4"],
        env=env, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    # images: two epochs of two batches, uint8 NCHW, labels of 8 classes
    assert out.count("images torch.uint8 (32, 3, 224, 224), labels "
                     "torch.int64 (32,)") == 2, out
    assert len(re.findall(r"epoch \d: 2 batches, 64 images, 8 classes", out)) == 2
    # clips: [B, 3, T, H, W] with the pts of 16 frames 2 apart
    m = re.search(r"clips torch.uint8 \((\d+), 3, 16, 112, 112\), labels "
                  r"torch.int64 \[([\d, ]+)\], pts \(s\) of the first clip "
                  r"\[([-\d., e]+)\]", out)
    assert m, out
    labels = [int(x) for x in m.group(2).split(",")]
    assert int(m.group(1)) == len(labels) and all(0 <= x < 4 for x in labels)
    pts = [float(x) for x in m.group(3).split(",")]
    steps = [b - a for a, b in zip(pts, pts[1:])]
    # every second frame at 30 or 25 fps (printed to the millisecond)
    assert len(pts) == 16 and (all(abs(d - 2 / 30) < 0.002 for d in steps) or
                               all(abs(d - 2 / 25) < 0.002 for d in steps)), pts
    assert "one epoch: 4 clips of 4 videos" in out, out
    assert "skipped" not in out, out
    assert out.count("gst-launch-1.0: one epoch in") == 2, out
    # the temporary datasets are gone
    assert not [p for p in os.listdir(tmp_path) if p.startswith("spdl-demo")]
