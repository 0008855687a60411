"""bench/compare reports a loader that cannot run as skipped, with the
reason, instead of crashing: here SPDL 0.8 as pip installs it on a machine
without the FFmpeg shared libraries it was built against (it imports, then
fails on the first decode)."""
import json
import os
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "..", "..", "bench", "compare")

# what SPDL 0.8 raises on Debian 12 without libavdevice59 and libavfilter8
SPDL_ERROR = ('RuntimeError: Failed to import libspdl. "spdl.io.lib._spdl_ffmpeg6: '
              'libavutil.so.58: cannot open shared object file: No such file or '
              'directory", "spdl.io.lib._spdl_ffmpeg5: libavdevice.so.59: cannot '
              'open shared object file: No such file or directory"')


def fake_spdl_venv(root):
    """A venv whose python imports spdl fine but fails to decode."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text("#!/bin/sh\n"
                      'case "$*" in *"import spdl.io, spdl.pipeline"|*"-c import"*) '
                      "exit 0;; esac\n"
                      f"echo '{SPDL_ERROR}' >&2\nexit 1\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return root


def test_spdl_without_ffmpeg_is_skipped_with_the_reason(kinds_dataset, tmp_path):
    venv = fake_spdl_venv(tmp_path / "venv")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, COMPARE, str(kinds_dataset), "--only", "spdl",
                           "--rounds", "1", "--no-sweep", "--out", str(out)],
                          env=dict(os.environ, SPDL_VENV=str(venv)),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    table = (out / "compare.md").read_text()
    row = [l for l in table.splitlines() if l.startswith("| spdl |")]
    assert len(row) == 1, table
    assert "skipped: SPDL cannot load its FFmpeg libraries" in row[0]
    assert "libavdevice.so.59 for its ffmpeg5 build" in row[0]
    assert "tools/install-deps --bench" in row[0]


def test_webdataset_row_without_webdataset_is_skipped(kinds_dataset, tmp_path):
    """The sharded table: gst-spdl on the shards measured, webdataset's
    loader skipped with the reason when its venv lacks it."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, COMPARE, str(kinds_dataset), "--only", "webdataset",
                           "--rounds", "1", "--no-sweep", "--batch-size", "4",
                           "--out", str(out)],
                          env=dict(os.environ, SPDL_TEST_VENV=str(tmp_path / "no-venv")),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    table = (out / "compare.md").read_text()
    shards = [l for l in table.splitlines() if l.startswith("| gst-python-shards |")]
    assert len(shards) == 1 and float(shards[0].split("|")[2]) > 0, table
    row = [l for l in table.splitlines() if l.startswith("| webdataset + DataLoader")]
    assert len(row) == 1 and "skipped: webdataset is not installed in" in row[0], table
    assert "tools/make-test-venv" in row[0]


def test_limit_rows_and_rounds_are_reported(kinds_dataset, tmp_path):
    """The wiring of the limits from decode-bench to the report: the rows
    of one thread per core at once (the limit the ratios use) and of one
    thread alone times the cores, each a rate, and every round's four
    figures kept for the paired ratios. (How decode-bench measures them is
    not checked here: timings.)"""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, COMPARE, str(kinds_dataset), "--only", "limit",
                           "--rounds", "2", "--no-sweep", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    cores = os.cpu_count()
    table = (out / "compare.md").read_text()
    rates = {}
    for label in (f"decode-only limit (libjpeg-turbo, every pixel, {cores} threads at once)",
                  f"fused limit (gst-spdl's decode path, {cores} threads at once)",
                  f"decode-only, 1 thread alone x {cores}"):
        row = [l for l in table.splitlines() if l.startswith(f"| {label} |")]
        assert len(row) == 1, table
        rates[label] = float(row[0].split("|")[2])
        assert rates[label] > 0, row[0]
    saved = json.loads((out / "results.json").read_text())
    assert len(saved["limit_rounds"]) == 2
    for figures in saved["limit_rounds"]:
        assert sorted(figures) == ["decode", "decode-all", "fused", "fused-all"]
        assert all(v > 0 for v in figures.values()), figures


def test_dali_that_cannot_decode_is_skipped_with_the_reason(kinds_dataset,
                                                           tmp_path_factory):
    """A DALI venv whose python fails (here: no DALI at all) gives a skipped
    row with DALI's error, in the main table and the GIL table, and the
    rest of those tables is measured: the GIL table's rows with and
    without the loop's work, the memory table's row per worker count."""
    tmp_path = tmp_path_factory.mktemp("compare")  # not in the dataset's tree
    venv = tmp_path / "dali-venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named "
                      "nvidia.dali' >&2\nexit 1\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, COMPARE, str(kinds_dataset), "--only",
                           "dali,gil,memory", "--rounds", "1", "--no-sweep",
                           "--batch-size", "4", "--gil-work-ms", "5",
                           "--memory-workers", "1,2", "--out", str(out)],
                          env=dict(os.environ, SPDL_DALI_VENV=str(venv),
                                   SPDL_VENV=str(tmp_path / "no-spdl")),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    table = (out / "compare.md").read_text()
    rows = [l for l in table.splitlines() if l.startswith("| dali |")]
    assert len(rows) == 2, table
    assert all("skipped: DALI cannot decode on the CPU: ModuleNotFoundError: "
               "No module named nvidia.dali" in r for r in rows), rows
    for name in ("gst-python", "dataloader"):
        row = [l for l in table.splitlines() if l.startswith(f"| {name} | ")
               and l.count("|") == 8]
        assert len(row) == 1, table
        # no work, native work, pure-Python work
        assert all(float(row[0].split("|")[i]) > 0 for i in (2, 3, 5)), row
    assert "| spdl | skipped: not installed" in table
    memory = [l.split("|") for l in table.splitlines()
              if l.startswith(("| 1 |", "| 2 |")) and l.count("|") == 10]
    assert [int(r[1]) for r in memory] == [1, 2], table
    # RSS and PSS of both loaders, summed over their processes
    assert all(float(r[i]) > 0 for r in memory for i in (2, 3, 5, 6)), memory


def test_gst_launch_row_runs(kinds_dataset, tmp_path):
    """The gst-launch row measures, as README gives bench/compare (they
    once stopped the script with KeyError: 'peak_rss_mb')."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, COMPARE, str(kinds_dataset), "--only",
                           "gst-launch", "--rounds", "1", "--no-sweep",
                           "--batch-size", "4", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    table = (out / "compare.md").read_text()
    row = [l for l in table.splitlines() if l.startswith("| gst-launch |")]
    assert len(row) == 1 and "skipped" not in row[0], table
