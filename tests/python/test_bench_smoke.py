"""Every row of every bench script, once, on a few items: each gst-spdl row
measures (a rate above zero), each peer row measures or, where its venv is
not built (SPDL, DALI, PyAV, torchaudio ...: PyPI venvs CI does not make),
says "skipped: " and why. So that no script breaks unseen between the
runs that measure (bench/compare once stopped at its gst-launch row with
a KeyError). Rates are not checked: timings."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(ROOT, "bench")
BUILD = os.environ.get("SPDL_BUILD_ROOT", os.path.join(ROOT, "build"))
TEST_VENV = os.environ.get("SPDL_TEST_VENV", os.path.join(BUILD, "test-venv"))


def bench(script, *args, env=None, timeout=300):
    """Runs bench/@script (a built program: its path); its standard output
    (the report)."""
    cmd = [script] if os.path.isabs(script) else [sys.executable,
                                                 os.path.join(BENCH, script)]
    done = subprocess.run(cmd + [str(a) for a in args],
                          env=dict(os.environ, SPDL_BUILD=BUILD, **(env or {})),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    return done.stdout


def rows(table):
    """{first cell: [the other cells of each row it starts]} of the
    markdown tables in @table."""
    out = {}
    for line in table.splitlines():
        if not line.startswith("|") or line.startswith("|-"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        out.setdefault(cells[0], []).append(cells[1:])
    return out


def measured(cells):
    try:
        return float(cells[0]) > 0
    except ValueError:
        return False


def check(table, ours, peers=()):
    """Each of @ours has a measured row in every table it is in, each of
    @peers a measured or skipped one."""
    got = rows(table)
    for name in ours:
        assert name in got, (name, table)
        assert all(measured(c) for c in got[name]), (name, got[name])
    for name in peers:
        assert name in got, (name, table)
        for cells in got[name]:
            assert measured(cells) or cells[0].startswith("skipped: "), (name, cells)
    return got


def make(script, out, *args):
    """@out filled by bench/@script (make-dataset, make-videos ...)."""
    subprocess.run([sys.executable, os.path.join(BENCH, script), "--out", out,
                    "--classes", "2", *map(str, args)],
                   check=True, capture_output=True, timeout=300)
    return out


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    return make("make-dataset", tmp_path_factory.mktemp("images"), "--count", 12,
                "--jobs", 1)


def test_compare_every_row(images, tmp_path):
    """The main table's loaders and the thread sweep. (Its other rows run
    in test_bench_compare.py: gst-launch, spdl, dali, the limits, and the
    GIL, memory and sharded tables.)"""
    out = tmp_path / "out"
    ours = ["gst-python", "gst-numpy", "gst-stock", "gst-python-float32",
            "gst-python-bfloat16", "gst-python-inexact"]
    bench("compare", images, "--rounds", 1, "--batch-size", 4, "--no-install",
          "--only", ",".join(ours + ["dataloader"]), "--out", out)
    table = (out / "compare.md").read_text()
    got = check(table, ours + ["dataloader"])
    cores = os.cpu_count()
    assert all(str(t) in got for t in range(1, cores + 1)), table
    saved = json.loads((out / "results.json").read_text())
    assert sorted(saved["sweep"]) == [str(t) for t in range(1, cores + 1)]


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    return make("make-videos", tmp_path_factory.mktemp("videos"), "--count", 5,
                "--seconds", 2)


def test_compare_video_time_recipe(videos, tmp_path):
    """The time recipe (test_bench_compare_video.py runs every loader on
    the R3D one, and gst-audio)."""
    out = tmp_path / "out"
    bench("compare-video", videos, "--rounds", 1, "--batch-size", 2, "--recipe", "time",
          "--only", "gst,gst-timed", "--no-sweep", "--out", out)
    check((out / "compare-video.md").read_text(), ["gst", "gst-timed"])


def test_compare_video_gst_audio_needs_with_audio(videos, tmp_path):
    """gst-audio without --with-audio: a clear error at once (it failed in
    its worker, an assertion on the first batch without audio)."""
    done = subprocess.run([sys.executable, os.path.join(BENCH, "compare-video"), videos,
                           "--only", "gst-audio", "--out", tmp_path],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "gst-audio measures clips with their audio: give --with-audio" in done.stderr


def test_compare_audio_every_row(tmp_path):
    """The rows test_bench_compare_audio.py does not run: exact=False,
    soundfile, torchcodec (measured or skipped), beside gst."""
    data = make("make-audio", tmp_path / "audio", "--count", 6, "--jobs", 2)
    out = tmp_path / "out"
    bench("compare-audio", data, "--rounds", 1, "--durations", 1, "--batch-size", 2,
          "--only", "gst,gst-inexact,soundfile,torchcodec", "--out", out)
    table = (out / "compare-audio.md").read_text()
    got = rows(table)
    ours = [k for k in got if k.startswith("gst-spdl AudioLoader")]
    peers = [k for k in got if k.startswith(("soundfile", "torchcodec"))]
    assert len(ours) == 2 and len(peers) == 2, table
    check(table, ours, peers)


def test_compare_audio_asr_every_row(tmp_path):
    """compare-audio --asr (whole utterances of a bench/make-asr manifest):
    gst-spdl and the limit measure, each peer measures or is skipped; and
    compare-audio-decoders' rows (avdec, reference, chain) per codec."""
    data = tmp_path / "asr"
    subprocess.run([sys.executable, os.path.join(BENCH, "make-asr"), "--out",
                    str(data), "--recordings", "2", "--seconds", "12",
                    "--short", "4", "--jobs", "2"],
                   check=True, capture_output=True, timeout=300)
    out = tmp_path / "out"
    bench("compare-audio", data / "manifest.json", "--asr", "--rounds", 1,
          "--batch-size", 2, "--out", out)
    table = (out / "compare-audio-asr.md").read_text()
    got = rows(table)
    ours = [k for k in got if k.startswith(("gst-spdl AudioLoader", "limit"))]
    peers = [k for k in got if k.startswith(("torchaudio", "soundfile",
                                             "torchcodec"))]
    assert len(ours) == 3 and len(peers) == 3, table   # gst, exact=False, limit
    check(table, ours, peers)
    assert "of the limit's audio s/s" in table
    table = bench("compare-audio-decoders", data / "manifest.json",
                  "--rounds", 1, "--files", 1, "--out", out)
    got = rows(table)
    kinds = [k for k in got if k.endswith("Hz")]
    assert len(kinds) == 4, table           # FLAC and Opus at 16 and 48 kHz
    for kind in kinds:
        assert [c[2].split(" ")[0] for c in got[kind]] == \
            ["avdec_flac" if "flac" in kind else "avdec_opus",
             "flacdec" if "flac" in kind else "opusdec", "the"], got[kind]


def test_remote_bench_every_row(tmp_path):
    if not os.path.exists(os.path.join(TEST_VENV, "bin", "python")):
        pytest.skip(f"no {TEST_VENV} (tools/make-test-venv): remote-bench's "
                    "webdataset and moto come from it")
    report = bench("remote-bench", "--count", 16, "--per-shard", 4, "--rounds", 1,
                   "--delay-ms", 1)
    configs = ["spdl-local"] + ["spdl-%s%s" % (w, k) for w in ("http", "s3") for k in
                                ("", "-cached", "-headers", "-ranges", "-ranges-cached",
                                 "-stream", "-stream-cached")]
    check(report, configs + ["wds-local", "wds-http", "wds-s3"])


def test_format_bench_every_row(tmp_path):
    report = bench("format-bench", "--count", 2, "--size", "64x48", "--rounds", 1,
                   "--baseline", BUILD, tmp_path)
    got = check(report, ["JPEG q90", "PNG RGB", "PNG RGBA", "PNG palette",
                         "WebP lossy q80", "WebP lossy alpha", "WebP lossless",
                         "TIFF Deflate", "TIFF LZW"])
    # the baseline build's column
    assert all(float(got[k][0][3]) > 0 for k in ("JPEG q90", "TIFF LZW")), got


def test_listing_bench_every_row(tmp_path):
    report = bench("listing-bench", "--lines", 300, "--files", 50, "--rounds", 1,
                   "--workdir", tmp_path)
    got = rows(report)
    names = [k for k in got if k.startswith(("1-file", "manifest", "folder tree"))]
    assert len(names) == 5, report
    assert all(float(got[k][0][0]) > 0 for k in names), got


def test_soak(images):
    report = bench("soak", images, "--epochs", 3, "--batch-size", 4)
    got = rows(report)
    assert [got[str(e)][0][0] for e in range(3)] == ["3", "3", "3"], report
    assert "skipped samples: 0" in report


def test_decode_bench_every_row(images):
    decode = os.path.join(BUILD, "bench", "decode-bench")
    env = {"GST_PLUGIN_PATH": os.path.join(BUILD, "gst", "spdl")}
    for recipe in ("val", "train"):
        report = bench(decode, "--rounds", 1, "--recipe", recipe, images, env=env)
        got = rows(report)
        assert len([k for k in got if k.startswith(("decode-only", "libjpeg-full",
                                                    "fused", "spdldecode"))]) == 9, report
    for flag in ("--inexact", "--limit-only", "--meta-cost"):
        assert bench(decode, "--rounds", 1, flag, images, env=env)


def test_resampler_bench_every_row():
    """GStreamer's resampler and the chain's, timed on the same noise:
    one JSON line per rate pair, the two outputs the same samples."""
    exe = os.path.join(BUILD, "bench", "resampler-bench")
    pairs = ["48000:16000", "44100:16000", "8000:16000"]
    done = subprocess.run([exe, "--seconds", "2", "--rounds", "1", "--channels",
                           "2", *pairs], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [f"{r['in_rate']}:{r['out_rate']}" for r in lines] == pairs
    for r in lines:
        assert r["gstreamer_ms_per_audio_s"] > 0 and r["spdl_ms_per_audio_s"] > 0
        assert r["max_abs_diff"] < 1e-5, r
    # no audio to time is a usage error (it read past the outputs)
    for seconds in ("0", "0.00001"):
        done = subprocess.run([exe, "--seconds", seconds, "48000:16000"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and not done.stdout, (seconds, done)


def test_cuda_upload_bench(images):
    exe = os.path.join(BUILD, "bench", "cuda-upload-bench")
    if not os.path.exists(exe):
        pytest.skip("cuda-upload-bench not built (no CUDA toolkit)")
    done = subprocess.run([exe, "--batches", "2", "--batch-size", "4", "--rounds", "1",
                           str(images)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, GST_PLUGIN_PATH=os.pathsep.join(
                              [os.path.join(BUILD, "gst", "spdl"),
                               os.path.join(BUILD, "ext", "cuda")])))
    if done.returncode == 77:
        pytest.skip("cuda-upload-bench: " + done.stdout.strip())
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert "|" in done.stdout, done.stdout


def test_compare_fields_every_row(images, tmp_path):
    """Fields beside the image: gst-spdl with and without fields against
    webdataset (CLIP-style), and with a mask against torchvision v2
    (segmentation; skipped with the reason without the torch 2 venv)."""
    if not os.path.exists(os.path.join(TEST_VENV, "bin", "python")):
        pytest.skip("no test venv with webdataset (tools/make-test-venv)")
    out = tmp_path / "out"
    bench("compare-fields", images, "--rounds", 1, "--batch-size", 4,
          "--out", out)
    table = (out / "compare-fields.md").read_text()
    check(table, ["gst-fields", "gst-nofields", "webdataset", "gst-seg"],
          ["torchvision-v2"])


def test_compare_detection_every_row(tmp_path):
    """COCO detection: gst-spdl with and without masks against torchvision
    CocoDetection + transforms v2 (the torch 2 venv) and DALI's COCO reader
    (skipped with the reason where its venv is missing)."""
    data = tmp_path / "coco"
    subprocess.run([sys.executable, os.path.join(BENCH, "make-coco"), "--out",
                    str(data), "--count", "6", "--jobs", "1"], check=True,
                   capture_output=True, timeout=300)
    out = tmp_path / "out"
    bench("compare-detection", data, "--rounds", 1, "--batch-size", 2,
          "--no-install", "--out", out)
    table = (out / "compare-detection.md").read_text()
    check(table, ["gst", "gst-masks"],
          ["torchvision", "torchvision-masks", "dali"])
