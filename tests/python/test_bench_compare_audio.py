"""bench/compare-audio at tiny size: every loader it can run gives a row of
rates, CPU and memory from one epoch of clips of the asked length; a peer
that is not installed, or whose python fails, is a row "skipped: why"; the
limit (audio-limit-bench) decodes every file."""
import json
import os
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench")


def make_audio(out):
    subprocess.run([sys.executable, os.path.join(BENCH, "make-audio"), "--out", str(out),
                    "--count", "8", "--classes", "2", "--jobs", "2"],
                   check=True, capture_output=True, timeout=300)
    return out


def failing_python(venv, message):
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f"#!/bin/sh\necho '{message}' >&2\nexit 1\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return venv


def test_compare_audio_rows_and_skips(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare-audio")
    data = make_audio(tmp / "audio")
    venv = failing_python(tmp / "spdl-venv", "ModuleNotFoundError: No module named spdl")
    out = tmp / "out"
    done = subprocess.run([sys.executable, os.path.join(BENCH, "compare-audio"), str(data),
                           "--only", "gst,torchaudio,spdl,limit", "--rounds", "1",
                           "--durations", "1,2.5", "--batch-size", "2", "--out", str(out)],
                          env=dict(os.environ, SPDL_AUDIO_VENV=str(tmp / "no-venv"),
                                   SPDL_VENV=str(venv)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    table = (out / "compare-audio.md").read_text()
    assert "8 files (" in table, table
    for seconds in ("1", "2.5"):
        section = table.split(f"### {seconds} s clips")[1].split("###")[0]
        rows = {r.split("|")[1].strip(): r.split("|")[2:-1]
                for r in section.splitlines() if r.startswith("| ") and "---" not in r}
        gst = rows["gst-spdl AudioLoader (%d threads)" % os.cpu_count()]
        limit = rows["limit: the same chain, %d threads, no batching" % os.cpu_count()]
        # clips/s, whole-epoch clips/s, CPU ms per clip (both), peak PSS and RSS
        for row in (gst, limit):
            assert all(float(row[i]) > 0 for i in (0, 2, 7, 9, 10)), row
        assert gst[11].strip() == "0" and limit[11].strip() == "0", (gst, limit)
        assert "skipped: not installed" in rows[
            "torchaudio.load + functional.resample, DataLoader"][0]
        assert "bench/compare-audio --install" in rows[
            "torchaudio.load + functional.resample, DataLoader"][0]
        assert rows["SPDL 0.8 load_audio + pipeline"][0].strip() == \
            "skipped: ModuleNotFoundError: No module named spdl", rows
    saved = json.loads((out / "compare-audio.json").read_text())
    assert saved["files"] == 8 and sum(saved["kinds"].values()) == 8
    assert sorted(saved["summary"]) == ["1", "2.5"]
    assert sorted(saved["skipped"]) == ["spdl", "torchaudio"]
    # one epoch: every file gave one clip (the first batch's apart)
    for seconds in ("1", "2.5"):
        run = saved["runs"][f"limit {seconds}"][0]
        assert run["failed"] == 0
