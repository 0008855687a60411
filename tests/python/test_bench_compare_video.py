"""bench/compare-video at a tiny size: every loader gives one row, measured
or "skipped: why" (a peer whose venv is not there is skipped, not a crash),
the limits decode frames, and the JSON has the figures the report is made
from. Rates are not checked: timings."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench")
BUILD = os.environ.get("SPDL_BUILD_ROOT", os.path.join(HERE, "..", "..", "build"))
# the venv the peers and the decode-only limit (PyAV) run from
VIDEO_VENV = os.environ.get("SPDL_VIDEO_VENV", os.path.join(BUILD, "video-venv"))
LOADERS = ("gst", "pyav", "torchcodec", "decord", "spdl", "limit", "limit-gst-pipeline",
           "gst-timed", "gst-audio")


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    out = tmp_path_factory.mktemp("videos")
    subprocess.run([sys.executable, os.path.join(BENCH, "make-videos"), "--out", str(out),
                    "--count", "5", "--classes", "2", "--seconds", "2"],
                   check=True, capture_output=True, timeout=300)
    return out


def run_compare(videos, out, only, env=None, extra=()):
    done = subprocess.run([sys.executable, os.path.join(BENCH, "compare-video"), str(videos),
                           "--only", only, "--rounds", "1", "--no-sweep",
                           "--batch-size", "2", "--out", str(out), *extra],
                          env=dict(os.environ, **(env or {})),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    table = (out / "compare-video.md").read_text()
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if cells and cells[0] in LOADERS:
            assert cells[0] not in rows, table
            rows[cells[0]] = cells
    return table, rows, json.loads((out / "compare-video.json").read_text())


def test_every_loader_has_a_row(videos, tmp_path):
    table, rows, saved = run_compare(videos, tmp_path, ",".join(LOADERS[:7]))
    assert sorted(rows) == sorted(LOADERS[:7]), table
    have_venv = os.path.exists(os.path.join(VIDEO_VENV, "bin", "python"))
    for name, cells in rows.items():
        if cells[1].startswith("skipped: "):
            assert name not in ("gst", "limit-gst-pipeline"), table
            # the decode-only limit runs wherever PyAV's venv is
            assert name != "limit" or not have_venv, table
            assert saved["skipped"][name] in cells[1], saved["skipped"]
            continue
        # clips/s, CPU s per clip in the steady state and all, peak RSS
        assert all(float(cells[i]) > 0 for i in (1, 4, 6, 8)), cells
        assert name in saved["summary"], saved
    # the limits decode at least the 16 frames an R3D clip takes (of the
    # 31 it spans, unreferenced ones are skipped), from the keyframe before
    # it: the same clips, so about the same frames
    gst_pipeline = float(rows["limit-gst-pipeline"][9])
    assert gst_pipeline >= 16, rows["limit-gst-pipeline"]
    if have_venv:
        limit = float(rows["limit"][9])
        assert limit >= 16, rows["limit"]
        assert abs(limit - gst_pipeline) <= 0.1 * gst_pipeline + 1, table
        assert saved["summary"]["limit"]["decoded_per_clip"] == pytest.approx(limit, abs=0.05)
        assert "- gst-spdl at " in table and \
            "of the limit's clips/s (target >= 0.8" in table, table
    else:
        assert rows["limit"][1].startswith("skipped: not installed: no "), table
    assert "limit-gst-pipeline's clips/s (a pipeline per clip: not a bound)" in table
    # 5 videos less the variable-frame-rate ones, each one clip
    assert saved["videos"] + saved["vfr_left_out"] == 5
    assert saved["recipe"] == "r3d" and saved["best_peer"] in (None, *LOADERS)


def test_a_peer_not_installed_is_skipped_with_the_reason(videos, tmp_path):
    table, rows, saved = run_compare(
        videos, tmp_path, "gst,pyav,torchcodec",
        env={"SPDL_VIDEO_VENV": str(tmp_path / "no-venv")})
    for name in ("pyav", "torchcodec"):
        assert rows[name][1].startswith("skipped: not installed: no "), table
        assert "bench/compare-video --install" in rows[name][1]
    assert float(rows["gst"][1]) > 0 and rows["gst"][2] == "n/a", table
    assert "best peer" not in "\n".join(l for l in table.splitlines()
                                        if l.startswith("- ")), table


def test_audio_against_the_same_clips_without(videos, tmp_path):
    """--with-audio keeps the videos with an audio stream; gst-audio
    (audio=True) is compared with gst-timed, the same clips without."""
    table, rows, saved = run_compare(videos, tmp_path, "gst-timed,gst-audio",
                                     extra=["--with-audio", "--batch-size", "1"])
    assert sorted(rows) == ["gst-audio", "gst-timed"], table
    assert all(float(rows[n][4]) > 0 for n in rows), table
    assert "with an audio stream" in table
    assert "audio=True (gst-audio against gst-timed):" in table
    assert "x the CPU per clip in the steady state" in table
    assert 0 < saved["videos"] < 5
