"""Per-element statistics and the spdlstats tracer."""
import os
import re
import subprocess
import sys
import textwrap

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
    # the decoding threads' own CPU time: some per decode, never more than
    # the wall time they took (1 ms of slack for the clocks' granularity)
    assert 0 < dec["cpu-mean"] <= dec["mean"] + 1_000_000
    assert 0 < dec["cpu"] <= dec["busy"] + 21 * 1_000_000
    assert "cpu" not in src and "cpu" not in batch
    assert dec["max-in-flight"] == 16


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
    # a sink pushes nothing: its rate is what it receives
    assert any(float(m) > 0 for l in lines
               for m in re.findall(r" sink ([0-9.]+)/s received;", l)), lines
    order = ["src", "dec", "q", "conv", "batch", "sink"]
    for l in lines:
        if l.startswith("spdlstats: final"):
            continue
        assert re.findall(r" (\w+) [0-9.]+/s", l) == order, l
    # the structured records a script parses
    records = re.findall(r"spdlstats-element, element=\(string\)(\w+), "
                         r"factory=\(string\)(\w+), buffers=\(guint64\)(\d+)", out)
    assert {r[0] for r in records} >= {"src", "dec", "q", "conv", "batch", "sink"}
    pushed = {}
    for name, _, n in records:
        pushed[name] = pushed.get(name, 0) + int(n)
    assert pushed["src"] > 0 and pushed["batch"] > 0
    assert re.search(r"spdlstats-queue, element=\(string\)q, empty=\(double\)", out)


FINAL_ENTRY = re.compile(r" (\w+) (\d+) (buffers|received) ([0-9.]+)/s")


def final_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("spdlstats: final")]


def test_tracer_summarizes_a_pipeline_shorter_than_its_interval(kinds_dataset):
    # elements declared sink first: the report still goes upstream to downstream
    env = dict(os.environ, GST_TRACERS="spdlstats(interval=600000)",
               GST_DEBUG="GST_TRACER:7", GST_DEBUG_NO_COLOR="1")
    line = ("fakesink name=sink  spdlbatch batch-size=4 name=batch ! sink.  "
            "videoconvert name=conv ! batch.  queue name=q ! conv.  "
            f"spdlsrc location={kinds_dataset} name=src ! "
            "spdldecode width=32 height=32 name=dec ! q.")
    out = subprocess.run(["gst-launch-1.0", "-q"] + line.split(), env=env,
                         capture_output=True, text=True, timeout=120).stderr
    assert not [l for l in out.splitlines() if l.startswith("spdlstats: ") and
                "final" not in l], "no interval has passed"
    finals = final_lines(out)
    assert len(finals) == 1, out[-2000:]   # at EOS, not again at the stop
    entries = FINAL_ENTRY.findall(finals[0])
    assert [e[0] for e in entries] == ["src", "dec", "q", "conv", "batch", "sink"]
    counts = {name: (int(n), kind, float(rate)) for name, n, kind, rate in entries}
    for name in ("src", "dec", "q", "conv"):
        assert counts[name][:2] == (20, "buffers"), counts
    assert counts["batch"][:2] == (5, "buffers")
    assert counts["sink"][:2] == (5, "received")
    assert all(rate > 0 for _, _, rate in counts.values())
    assert re.search(r" dec 20 buffers [0-9.]+/s \(empty \d+% full \d+%\);",
                     finals[0])
    totals = dict(re.findall(r"spdlstats-total, element=\(string\)(\w+), "
                             r"factory=\(string\)\w+, buffers=\(guint64\)\d+, "
                             r"rate=\(double\)[0-9.e+-]+, received=\(guint64\)(\d+)",
                             out))
    assert totals["sink"] == "5" and totals["src"] == "0"


def test_tracer_summarizes_a_loader_stopped_mid_epoch(kinds_dataset):
    script = textwrap.dedent(f"""
        import spdlgst
        loader = spdlgst.Loader(
            "spdlsrc name=src location={kinds_dataset} num-epochs=-1 ! "
            "spdldecode name=dec width=32 height=32 ! "
            "spdlbatch name=batch batch-size=2 ! spdlappsink name=sink")
        for i, _ in enumerate(loader):
            if i == 2:
                break
        loader.close()
        print("closed", flush=True)
        """)
    env = dict(os.environ, GST_TRACERS="spdlstats(interval=600000)")
    done = subprocess.run([sys.executable, "-c", script], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "closed" in done.stdout, done.stderr[-2000:]
    finals = final_lines(done.stderr)
    assert len(finals) == 1, done.stderr[-2000:]
    entries = FINAL_ENTRY.findall(finals[0])
    assert [e[0] for e in entries] == ["src", "dec", "batch", "sink"]
    sink = entries[-1]
    assert sink[2] == "received" and int(sink[1]) >= 3


def test_tracer_follows_buffers_into_bins(kinds_dataset):
    """Elements inside bins are listed in place, and a sink behind a ghost
    pad still counts what it receives."""
    env = dict(os.environ, GST_TRACERS="spdlstats(interval=600000)")
    line = (f"spdlsrc location={kinds_dataset} name=src ! "
            "spdldecode width=32 height=32 name=dec ! "
            "( queue name=inq ! videoconvert name=inconv ) ! "
            "spdlbatch batch-size=4 name=batch ! ( fakesink name=insink )")
    out = subprocess.run(["gst-launch-1.0", "-q"] + line.split(), env=env,
                         capture_output=True, text=True, timeout=120).stderr
    finals = final_lines(out)
    assert len(finals) == 1, out[-2000:]
    entries = FINAL_ENTRY.findall(finals[0])
    assert [e[0] for e in entries] == ["src", "dec", "inq", "inconv", "batch", "insink"]
    assert entries[-1][1:3] == ("5", "received")
