"""The measuring side the bench/compare* scripts share: where the build is,
running a loader in its own process while sampling the memory of its
process tree, CPU time of a process tree, and small formatting helpers.

Each loader runs as a child process printing one JSON line at its end;
measure() returns that line with the CPU seconds of the whole tree (user +
system, from wait4: the process and every child it reaped) and the peak
RSS and PSS summed over the tree, sampled every 50 ms.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the build folder: SPDL_BUILD, else the one meson test runs from, else build/
BUILD = (os.environ.get("SPDL_BUILD") or os.environ.get("SPDL_BUILD_ROOT") or
         os.path.join(ROOT, "build"))
PLUGIN_PATH = os.path.join(BUILD, "gst", "spdl")
# pip's SPDL, installed by bench/compare (tools/install-deps --bench gives
# the FFmpeg libraries it links against)
SPDL_VENV = os.environ.get("SPDL_VENV", os.path.join(BUILD, "spdl-venv"))
CORES = os.cpu_count()
# NVIDIA DALI from PyPI in its own venv (bench/compare, compare-detection)
DALI_VENV = os.environ.get("SPDL_DALI_VENV", os.path.join(BUILD, "dali-venv"))
DALI_PACKAGE = "nvidia-dali-cuda120==2.4.0"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def process_tree(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def rss_pss_kb(pid):
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def measure(cmd, env=None, memory=True):
    """Runs cmd; returns (result dict, cpu seconds, peak PSS MB or 0
    without @memory, wall s); the peak RSS summed over the processes (MB)
    is the result's "peak_rss_mb"."""
    env = dict(os.environ, **(env or {}))
    errors = tempfile.TemporaryFile(mode="w+")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, env=env)
    peak = [0, 0]
    done = threading.Event()

    def sample():
        while memory and not done.is_set():
            rss = pss = 0
            for p in process_tree(proc.pid):
                r, s = rss_pss_kb(p)
                rss, pss = rss + r, pss + s
            peak[0] = max(peak[0], pss)
            peak[1] = max(peak[1], rss)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    out = proc.stdout.read().decode()
    errors.seek(0)
    error_text = errors.read()
    errors.close()
    sys.stderr.write(error_text)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"exited with {proc.returncode}: "
                           f"{failure_reason(error_text)}")
    result = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
    result["peak_rss_mb"] = peak[1] / 1024
    return result, usage.ru_utime + usage.ru_stime, peak[0] / 1024, wall


def failure_reason(text):
    """Why a loader failed, in one line, from its error output."""
    # SPDL's wheel carries one build per FFmpeg major version and loads the
    # first whose shared libraries are found: name what each one lacked
    missing = re.findall(r"_spdl_(ffmpeg\d+): (lib\w+\.so\.\d+): cannot open", text)
    if missing:
        return ("SPDL cannot load its FFmpeg libraries (missing "
                + ", ".join(f"{lib} for its {build} build" for build, lib in missing)
                + "; on Debian 12: tools/install-deps --bench)")
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else "no error output"


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def tree_cpu_s():
    """CPU seconds so far of this process, its threads and its children,
    live (from /proc) or reaped: what a loader has spent up to a point of
    its run (e.g. its first batch, to leave start-up out)."""
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    tick = os.sysconf("SC_CLK_TCK")
    for pid in process_tree(os.getpid())[1:]:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def load_average():
    """The 1-minute load average (other work on the machine), or None."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


DALI_SMOKE = """
import sys
from nvidia.dali import fn, pipeline_def
@pipeline_def(batch_size=1, num_threads=1, device_id=None)
def pipe():
    data, _ = fn.readers.file(files=[sys.argv[1]])
    return fn.decoders.image(data, device="cpu")
p = pipe()
p.build()
p.run()
"""


def ensure_dali(sample, install=True):
    """Installs DALI into its venv once (unless not @install); raises
    RuntimeError with the reason when it cannot decode @sample on the CPU
    or is not installed."""
    py = os.path.join(DALI_VENV, "bin", "python")
    if not os.path.exists(py) and not install:
        raise RuntimeError(f"not installed: no {py} (bench/compare without "
                           "--no-install installs it)")
    if not os.path.exists(py):
        log(f"installing {DALI_PACKAGE} into {DALI_VENV} ...")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                        DALI_VENV], check=True)
        done = subprocess.run([os.path.join(DALI_VENV, "bin", "pip"), "install", "-q",
                               "--no-cache-dir", DALI_PACKAGE], capture_output=True,
                              text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"pip install {DALI_PACKAGE} failed: "
                               f"{failure_reason(done.stderr)}")
    done = subprocess.run([py, "-c", DALI_SMOKE, sample], capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"DALI cannot decode on the CPU: {failure_reason(done.stderr)}")
