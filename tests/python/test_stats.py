"""Per-element statistics and the spdlstats tracer."""
import os
import re
import subprocess

import pytest

import spdlgst


def test_stats_consistent_with_what_was_pushed(kinds_dataset):
    (kinds_dataset / "class0" / "bad.jpg").write_bytes(b"not a jpeg at all")
    with spdlgst.Loader(f"spdlsrc name=src location={kinds_dataset} ! "
                        "spdldecode name=dec width=64 height=64 threads=2 ! "
                        "spdlbatch name=batch batch-size=6 ! "
                        "spdlappsink name=sink") as loader:
        batches = list(loader)
        st = loader.stats()
    src, dec, batch, sink = st["src"], st["dec"], st["batch"], st["sink"]
    assert src["items-in"] == src["items-out"] == 21
    assert dec["items-in"] == 21 and dec["items-out"] == 20
    assert dec["skipped-not-jpeg"] == 1
    assert batch["items-in"] == 20 and batch["items-out"] == len(batches) == 4
    assert sink["items-in"] == sink["items-out"] == sink["batches"] == 4
    assert st["loader"]["batches"] == 4
    for s in (src, dec, batch, sink):
        assert s["busy"] > 0 and s["elapsed"] > 0
        assert 0 < s["mean"] <= s["busy"]
        assert s["p90"] <= s["p99"]
    assert dec["threads"] == 2
    assert 0.0 <= dec["utilisation"] <= 1.0
    assert dec["max-in-flight"] == 8


def test_tracer_reports_every_element(kinds_dataset):
    env = dict(os.environ, GST_TRACERS="spdlstats(interval=50)",
               GST_DEBUG="GST_TRACER:7", GST_DEBUG_NO_COLOR="1")
    cmd = ["gst-launch-1.0", "-q", "spdlsrc", f"location={kinds_dataset}",
           "num-epochs=4", "name=src", "!", "spdldecode", "threads=1", "width=32",
           "height=32", "name=dec",
           "!", "queue", "name=q", "!", "videoconvert", "name=conv", "!",
           "spdlbatch", "batch-size=4", "name=batch", "!", "fakesink", "name=sink"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True,
                         timeout=120).stderr
    # the line a user reads
    lines = [l for l in out.splitlines() if l.startswith("spdlstats:")]
    assert lines, out[-2000:]
    for name in ("src", "dec", "q", "conv", "batch", "sink"):
        assert any(f" {name} " in l for l in lines), name
    assert any(re.search(r" q [0-9.]+/s \(empty \d+% full \d+%\)", l) for l in lines)
    # the structured records a script parses
    records = re.findall(r"spdlstats-element, element=\(string\)(\w+), "
                         r"factory=\(string\)(\w+), buffers=\(guint64\)(\d+)", out)
    assert {r[0] for r in records} >= {"src", "dec", "q", "conv", "batch", "sink"}
    pushed = {}
    for name, _, n in records:
        pushed[name] = pushed.get(name, 0) + int(n)
    assert pushed["src"] > 0 and pushed["batch"] > 0
    assert re.search(r"spdlstats-queue, element=\(string\)q, empty=\(double\)", out)
