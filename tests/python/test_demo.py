"""The quickstart's demo (python3 -m spdlgst.demo): what a new user sees
first must work and show the batches it promises."""
import os
import re
import subprocess
import sys


def test_demo_shows_image_clip_and_audio_batches(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "spdlgst.demo", "--count", "64", "--epochs",
         "2", "--batch-size", "32", "--videos", "4", "--audio", "4"],
        env=env, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    # images: two epochs of two batches, uint8 NCHW, labels of 8 classes
    assert out.count("images torch.uint8 (32, 3, 224, 224), labels "
                     "torch.int64 (32,)") == 2, out
    assert len(re.findall(r"epoch \d: 2 batches, 64 images, 8 classes", out)) == 2
    # images with their captions and masks (sidecars): masks through the
    # image's crop, class ids kept (6 regions: 0..5)
    m = re.search(r"images torch.uint8 \(8, 3, 224, 224\), captions \['[a-z ]+', "
                  r"'[a-z ]+'\], masks torch.uint8 \(8, 224, 224\) with class "
                  r"ids \[([\d, ]+)\]; the first sample's crop box", out)
    assert m, out
    assert set(int(x) for x in m.group(1).split(",")) <= set(range(6))
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
    # audio: 1 s mono clips at 16 kHz from FLAC, MP3, Opus and WAV files
    # of 0.5 to 4 s (shorter ones padded: lengths tell)
    m = re.search(r"audio torch.float32 \((\d+), 1, 16000\), labels "
                  r"torch.int64 \[([\d, ]+)\], starts \(s\) \[([\d., e-]+)\], "
                  r"lengths \[([\d, ]+)\]", out)
    assert m, out
    n = int(m.group(1))
    labels = [int(x) for x in m.group(2).split(",")]
    starts = [float(x) for x in m.group(3).split(",")]
    lengths = [int(x) for x in m.group(4).split(",")]
    assert n == len(labels) == len(starts) == len(lengths) == 4
    assert all(0 <= x < 4 for x in labels) and all(0 <= s < 3 for s in starts)
    assert all(8000 - 200 <= x <= 16000 for x in lengths), lengths
    assert "one epoch: 4 clips of 4 files in" in out, out
    assert "skipped" not in out, out
    assert out.count("gst-launch-1.0: one epoch in") == 3, out
    # the temporary datasets are gone
    assert not [p for p in os.listdir(tmp_path) if p.startswith("spdl-demo")]
