"""pip install into a user's own virtual environment: one wheel (meson-python,
pyproject.toml) that carries the plugins and registers them at import.

A copy of the clone (a git repository) is built by `pip install .` into a
venv without system site packages (PyGObject from PyPI, built against the
system's girepository) and by `pip wheel .`. That wheel goes into a venv
over the PyPI-torch venv's packages and into one over Debian's
python3-gi; `pip install "gst-spdl[torch] @ git+URL"` into one over
Debian's gi and torch. In each, from a folder outside the clone,
with no GST_PLUGIN_PATH and no PYTHONPATH, one epoch each of ImageLoader,
VideoLoader and AudioLoader on data made here. PyPI must be reachable
(pip's cache, XDG_CACHE_HOME/pip, spares later runs the downloads)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

import audiogen
import videogen
from test_checkpoint import make_folder

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("SPDL_BUILD_ROOT", os.path.join(ROOT, "build"))
PIP_TIMEOUT = 1200

# one epoch of each loader, in the venv under test; JSON on the last line
SCRIPT = r"""
import importlib.metadata, json, os, sys
import gi
import spdlgst
from gi.repository import Gst

output = sys.argv[2]
out = {"spdlgst": spdlgst.__file__, "gi": gi.__file__,
       "pygobject": importlib.metadata.version("PyGObject"),
       "gst_overrides": sys.modules["gi.overrides.Gst"].__file__,
       "version": spdlgst.__version__,
       "dist_version": importlib.metadata.version("gst-spdl"),
       "plugin": Gst.Registry.get().find_plugin("spdl").get_filename(),
       "plugin_version": Gst.Registry.get().find_plugin("spdl").get_version()}
if output == "torch":
    import torch
    out["torch"] = [torch.__version__, torch.__file__]
loaders = [("images", spdlgst.ImageLoader, dict(size=16)),
           ("videos", spdlgst.VideoLoader, dict(frames=4, stride=2, size=32,
                                                resize=40)),
           ("audio", spdlgst.AudioLoader, dict(duration=0.5))]
for name, cls, args in loaders:
    root = os.path.join(sys.argv[1], name)
    with cls(root, batch_size=4, epochs=1, threads=2, output=output,
             **args) as loader:
        batches = list(loader)
        paths = [p for p, _ in loader.samples]
    out[name] = {
        "types": sorted({type(t).__module__.split(".")[0] for b in batches
                         for t in b[:2]}),
        "shapes": [list(b[0].shape) for b in batches],
        "dtypes": sorted({str(b[0].dtype) for b in batches}),
        "samples": sorted([os.path.relpath(paths[i], root), int(label)]
                          for b in batches
                          for i, label in zip(b.indices, b[1].tolist())),
    }
print(json.dumps(out))
"""


def clean_env(**extra):
    """What a user's shell has: no build-tree plugin or source paths."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GST_PLUGIN", "GST_REGISTRY", "PYTHONPATH",
                                "VIRTUAL_ENV"))}
    env.update(extra)
    return env


def run(cmd, env, cwd, timeout=300):
    res = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd,
                         capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, (
        f"{' '.join(map(str, cmd))} failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    return res


def make_venv(path, system_site_packages):
    args = [sys.executable, "-m", "venv", str(path)]
    if system_site_packages:
        args.insert(3, "--system-site-packages")
    subprocess.run(args, check=True, timeout=300)
    return path / "bin" / "python"


def site_packages(python):
    return subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        text=True).strip()


def source_files():
    """The clone's files as git has them (tracked, or new and not ignored)."""
    if shutil.which("git") and os.path.exists(os.path.join(ROOT, ".git")):
        out = subprocess.check_output(
            ["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"])
        return [f for f in out.decode().split("\0")
                if f and os.path.isfile(os.path.join(ROOT, f))]
    pytest.skip("not a git clone")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("pip")


@pytest.fixture(scope="module")
def source(work):
    """A copy of the clone: pip builds it without writing into the checkout."""
    dst = work / "gst-spdl"
    for f in source_files():
        os.makedirs(dst / os.path.dirname(f), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), dst / f)
    # a git repository, as a clone is: pip install git+URL clones it, and
    # python -m build's sdist (meson dist) archives its commit
    git = ["git", "-C", dst, "-c", "user.name=test", "-c", "user.email=test@localhost",
           "-c", "commit.gpgsign=false"]
    for args in [["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]]:
        subprocess.run([str(a) for a in git + args], check=True, timeout=120,
                       capture_output=True)
    return dst


@pytest.fixture(scope="module")
def isolated_venv(work):
    """A venv without the system's site packages: gi must come from pip."""
    return make_venv(work / "isolated", system_site_packages=False)


@pytest.fixture(scope="module")
def built(work, source, isolated_venv):
    """pip install of the source into the isolated venv, then pip wheel of
    it: the wheel the other venvs install (two builds in all)."""
    env = clean_env(GST_REGISTRY=str(work / "registry-build.bin"))
    # as README says them, in the clone's folder
    run([isolated_venv, "-m", "pip", "install", "."], env, source, PIP_TIMEOUT)
    dist = work / "dist"
    run([isolated_venv, "-m", "pip", "wheel", "--no-deps", "-w", dist, "."],
        env, source, PIP_TIMEOUT)
    (wheel,) = dist.glob("gst_spdl-*.whl")
    return wheel


H264 = ["-c:v", "libx264", "-g", "15", "-pix_fmt", "yuv420p"]


@pytest.fixture(scope="module")
def media(work):
    """Class folders of JPEGs, videos and audio files made here."""
    root = work / "media"
    make_folder(root / "images", 10)
    for c, name in enumerate(["ant", "zebra"]):
        (root / "videos" / name).mkdir(parents=True)
        (root / "audio" / name).mkdir(parents=True)
        for v in range(3):
            videogen.make(root / "videos" / name / f"v{v}.mp4", "96x64", 25,
                          1 + 0.3 * v, H264)
            ext = ["flac", "wav", "mp3"][v]
            audiogen.make(str(root / "audio" / name / f"u{v}.{ext}"), "tone",
                          16000, 0.8 + 0.2 * v, 1, 3 * c + v)
    return root


def expected_samples(root):
    classes = sorted(os.listdir(root))
    return sorted([os.path.join(c, f), i] for i, c in enumerate(classes)
                  for f in os.listdir(os.path.join(root, c)))


def load_all(python, media, output, env, cwd):
    res = run([python, "-c", SCRIPT, media, output], env, cwd)
    assert "CRITICAL" not in res.stderr, res.stderr[-3000:]
    got = json.loads(res.stdout.splitlines()[-1])
    for name, shape in [("images", [3, 16, 16]), ("videos", [4, 3, 32, 32]),
                        ("audio", [1, 8000])]:
        loaded = got[name]
        # every file once, with its folder's label, in batches of 4
        assert loaded["samples"] == expected_samples(media / name), name
        assert [s[0] for s in loaded["shapes"]] == [4] * (len(loaded["samples"]) // 4) + (
            [len(loaded["samples"]) % 4] if len(loaded["samples"]) % 4 else []), name
        assert all(s[1:] == shape for s in loaded["shapes"]), (name, loaded["shapes"])
        assert loaded["types"] == [output], (name, loaded["types"])
    assert got["images"]["dtypes"] == [f"{output}.uint8" if output == "torch" else "uint8"]
    assert got["audio"]["dtypes"] == [f"{output}.float32" if output == "torch" else "float32"]
    # the plugin the package carries, its version the package's
    assert got["version"] == got["plugin_version"] == got["dist_version"]
    assert got["plugin"] == os.path.join(os.path.dirname(got["spdlgst"]),
                                         "gstreamer-1.0", "libgstspdl.so")
    return got


def meson_version():
    with open(os.path.join(ROOT, "meson.build")) as f:
        return re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)


def test_pip_install_in_a_venv_without_system_packages(work, built, media,
                                                       isolated_venv):
    elsewhere = work / "elsewhere-isolated"
    elsewhere.mkdir()
    env = clean_env(GST_REGISTRY=str(work / "registry-isolated.bin"))
    got = load_all(isolated_venv, media, "numpy", env, elsewhere)
    site = site_packages(isolated_venv)
    assert got["spdlgst"] == os.path.join(site, "spdlgst", "__init__.py")
    # PyPI's PyGObject, built here against the system's girepository
    assert got["gi"].startswith(site + os.sep), got["gi"]
    if sys.version_info < (3, 12):
        major, minor = map(int, got["pygobject"].split(".")[:2])
        assert (major, minor) < (3, 51), got["pygobject"]
    assert got["version"] == meson_version()
    # PyPI's gi has no GStreamer overrides: those of the system's
    # python3-gst-1.0, or a clear error (not copied batches, not a
    # TypeError on the first)
    assert got["gst_overrides"].startswith("/usr/lib/python3/dist-packages/gi/overrides/")
    res = subprocess.run([isolated_venv, "-c", "import site; "
                          "site.getsitepackages = lambda *a: []; import spdlgst"],
                         env=env, cwd=elsewhere, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 1
    assert res.stderr.splitlines()[-1].startswith(
        "ImportError: spdlgst needs GStreamer's Python overrides (gst-python)"), res.stderr
    assert "python3-gst-1.0" in res.stderr


def torch2_venv():
    venv = os.environ.get("SPDL_TORCH2_VENV", "")
    if not venv or not os.path.exists(os.path.join(venv, "bin", "python")):
        pytest.skip("no torch 2 venv (tools/make-test-venv makes it)")
    return venv


def test_wheel_with_pypi_torch_gives_torch_tensors(work, built, media):
    torch2 = torch2_venv()
    # a venv that sees the torch 2 venv's packages (a .pth) and then
    # Debian's: the wheel goes in here, the shared torch 2 venv stays as it is
    venv = work / "torch2-overlay"
    python = make_venv(venv, system_site_packages=True)
    site = site_packages(python)
    with open(os.path.join(site, "torch2-venv.pth"), "w") as f:
        f.write(site_packages(os.path.join(torch2, "bin", "python")) + "\n")
    env = clean_env(GST_REGISTRY=str(work / "registry-torch2.bin"))
    run([python, "-m", "pip", "install", built], env, work, PIP_TIMEOUT)
    # numpy 2 from the torch venv, gi from Debian: neither pulled in
    installed = {d.split("-")[0].lower() for d in os.listdir(site)
                 if d.endswith(".dist-info")}
    assert "gst_spdl" in installed
    assert not installed & {"numpy", "pygobject", "torch"}, installed
    elsewhere = work / "elsewhere-torch2"
    elsewhere.mkdir()
    got = load_all(python, media, "torch", env, elsewhere)
    assert got["torch"][0].startswith("2."), got["torch"]
    assert got["torch"][1].startswith(torch2.rstrip("/") + os.sep) or \
        os.path.realpath(got["torch"][1]).startswith(os.path.realpath(torch2) + os.sep)
    assert got["spdlgst"] == os.path.join(site, "spdlgst", "__init__.py")
    assert got["gi"].startswith("/usr/lib/python3/dist-packages/"), got["gi"]


def listing(path):
    return sorted(os.path.relpath(os.path.join(d, f), path)
                  for d, _, files in os.walk(path) for f in files)


def test_wheel_in_a_venv_over_system_gi(work, built, media):
    """Debian's python3-gi and numpy; the metadata, the plugin path for
    GStreamer's tools, GST_PLUGIN_PATH first, the console script, and
    pip uninstall leaving nothing behind."""
    venv = work / "system-gi"
    python = make_venv(venv, system_site_packages=True)
    before = listing(venv)
    env = clean_env(GST_REGISTRY=str(work / "registry-system.bin"))
    run([python, "-m", "pip", "install", built], env, work, PIP_TIMEOUT)
    elsewhere = work / "elsewhere-system"
    elsewhere.mkdir()
    got = load_all(python, media, "numpy", env, elsewhere)
    assert got["gi"].startswith("/usr/lib/python3/dist-packages/"), got["gi"]

    meta = json.loads(run([python, "-c", "import importlib.metadata as m, json; "
                           "d = m.metadata('gst-spdl'); print(json.dumps("
                           "[d['License-Expression'], d.get_all('Requires-Dist')]))"],
                          env, elsewhere).stdout)
    assert meta[0] == "LGPL-2.1-or-later"
    assert any(r.startswith("numpy") and "extra" not in r for r in meta[1]), meta
    assert any(r.startswith("torch") and 'extra == "torch"' in r for r in meta[1]), meta

    # gst-inspect-1.0 through the folder python -m spdlgst prints
    folder = run([python, "-m", "spdlgst", "--gst-plugin-path"], env,
                 elsewhere).stdout.strip()
    assert folder == os.path.join(os.path.dirname(got["spdlgst"]), "gstreamer-1.0")
    inspect = run(["gst-inspect-1.0", "spdldecode"],
                  dict(env, GST_PLUGIN_PATH=folder), elsewhere, 120)
    assert os.path.join(folder, "libgstspdl.so") in inspect.stdout

    # a plugin of the same name on GST_PLUGIN_PATH wins over the wheel's
    build_plugin = os.path.join(BUILD, "gst", "spdl")
    if os.path.exists(os.path.join(build_plugin, "libgstspdl.so")):
        res = run([python, "-c", "import spdlgst; from gi.repository import Gst; "
                   "print(Gst.Registry.get().find_plugin('spdl').get_filename()); "
                   "print(Gst.ElementFactory.make('spdldecode') is not None)"],
                  dict(env, GST_PLUGIN_PATH=build_plugin), elsewhere)
        assert res.stdout.split() == [os.path.join(build_plugin, "libgstspdl.so"),
                                      "True"], res.stdout

    # the shard writer as a console script
    tool = venv / "bin" / "spdl-make-shards"
    run([tool, media / "images", work / "shards"], env, elsewhere, 120)
    assert (work / "shards" / "train-000000.tar").exists()

    run([python, "-m", "pip", "uninstall", "-y", "gst-spdl"], env, elsewhere)
    # all but the dependency pip pulled in for Debian's gi (its metadata
    # asks for pycairo, Debian's python3-cairo not being installed)
    left = sorted(set(listing(venv)) - set(before))
    assert all(re.match(r"lib/python3[.\d]*/site-packages/(py)?cairo", f)
               for f in left), left
    assert not set(before) - set(listing(venv))


def wheel_files(wheel):
    with zipfile.ZipFile(wheel) as z:
        return sorted(z.namelist())


def test_git_url_with_torch_extra_and_python_build(work, source, built, media):
    """README's pip install "gst-spdl[torch] @ git+URL" (a file URL with a
    host: pip 23's PEP 508 parser refuses git+file:/// with none) into a
    venv over Debian's gi and torch, an epoch of each loader from
    elsewhere with torch tensors out; python -m build in the clone: an
    sdist (meson dist of the commit) and, built from it, a wheel holding
    what pip wheel's holds."""
    venv = work / "git-url"
    python = make_venv(venv, system_site_packages=True)
    env = clean_env(GST_REGISTRY=str(work / "registry-git.bin"))
    elsewhere = work / "elsewhere-git"
    elsewhere.mkdir()
    run([python, "-m", "pip", "install", f"gst-spdl[torch] @ git+file://localhost{source}"],
        env, elsewhere, PIP_TIMEOUT)
    got = load_all(python, media, "torch", env, elsewhere)
    # the extra satisfied by Debian's torch (1.13.0a0+gitunknown), numpy
    # and gi, not pulled from PyPI
    assert got["torch"][1].startswith("/usr/lib/python3/dist-packages/"), got["torch"]
    site = site_packages(python)
    installed = {d.split("-")[0].lower() for d in os.listdir(site)
                 if d.endswith(".dist-info")}
    assert not installed & {"numpy", "pygobject", "torch"}, installed
    assert got["spdlgst"] == os.path.join(site, "spdlgst", "__init__.py")

    run([python, "-m", "pip", "install", "build"], env, elsewhere, PIP_TIMEOUT)
    dist = work / "dist-build"
    run([python, "-m", "build", "--outdir", dist], env, source, PIP_TIMEOUT)
    (sdist,) = dist.glob("gst_spdl-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "meson.build", "gst/spdl/gstspdl.c",
            "python/spdlgst/__init__.py", "COPYING"} <= names, sorted(names)[:50]
    (wheel,) = dist.glob("gst_spdl-*.whl")
    assert wheel.name == built.name
    assert wheel_files(wheel) == wheel_files(built)
    assert "spdlgst/gstreamer-1.0/libgstspdl.so" in wheel_files(wheel)


def test_missing_development_packages_named_in_one_error(work, source,
                                                         isolated_venv):
    """pip on a machine without the -dev packages: one message naming them
    (here pkg-config finds none), no meson traceback."""
    empty = work / "no-pkg-config-files"
    empty.mkdir()
    env = clean_env(PKG_CONFIG_LIBDIR=str(empty), PKG_CONFIG_PATH="")
    res = subprocess.run([isolated_venv, "-m", "pip", "wheel", "--no-deps", "-w",
                          work / "dist-missing", source], env=env, cwd=work,
                         capture_output=True, text=True, timeout=PIP_TIMEOUT)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert "On Debian/Ubuntu install them with" in out, out[-3000:]
    (line,) = [x for x in out.splitlines() if "sudo apt-get install" in x]
    named = line.split("sudo apt-get install", 1)[1].split()
    for package in ["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev",
                    "libglib2.0-dev", "libjpeg-dev", "libpng-dev", "libwebp-dev",
                    "libtiff-dev", "libcurl4-openssl-dev", "libflac-dev",
                    "libmpg123-dev", "libopusfile-dev", "libavcodec-dev",
                    "libvorbis-dev"]:
        assert package in named, (package, named)
    assert len(named) == len(set(named)), named
    assert "Traceback" not in out, out[-3000:]


def test_editable_install_rebuilds_on_import(work, source, media):
    """pip install --no-build-isolation -e: the source's Python files and
    the build folder's plugins, rebuilt by meson-python at import."""
    venv = work / "editable"
    python = make_venv(venv, system_site_packages=True)
    env = clean_env(GST_REGISTRY=str(work / "registry-editable.bin"))
    run([python, "-m", "pip", "install", "meson-python", "meson"], env, work,
        PIP_TIMEOUT)
    run([python, "-m", "pip", "install", "--no-build-isolation", "-e", source],
        env, work, PIP_TIMEOUT)
    elsewhere = work / "elsewhere-editable"
    elsewhere.mkdir()
    code = ("import spdlgst; from gi.repository import Gst; "
            "p = Gst.Registry.get().find_plugin('spdl'); "
            "print(spdlgst.__file__); print(p.get_filename()); "
            "print(p.get_description()); "
            f"l = spdlgst.ImageLoader({str(media / 'images')!r}, batch_size=4, "
            "size=16, epochs=1, output='numpy'); "
            "print(sum(len(b[1]) for b in l)); l.close()")
    lines = run([python, "-c", code], env, elsewhere).stdout.splitlines()[-4:]
    assert lines[0] == str(source / "python" / "spdlgst" / "__init__.py")
    # the plugin in meson-python's build folder of the source
    assert lines[1].startswith(str(source / "build") + os.sep), lines[1]
    assert lines[1].endswith(os.path.join("gst", "spdl", "libgstspdl.so"))
    assert lines[3] == "10"

    plugin_c = source / "gst" / "spdl" / "gstspdl.c"
    text = plugin_c.read_text()
    assert lines[2] in text
    plugin_c.write_text(text.replace(lines[2], lines[2] + " (edited)"))
    try:
        res = run([python, "-c", code], env, elsewhere)
    finally:
        plugin_c.write_text(text)
    assert res.stdout.splitlines()[-2:] == [lines[2] + " (edited)", "10"], res.stdout


def test_source_tree_spdlgst_carries_no_plugins(tmp_path):
    """The source tree's spdlgst (PYTHONPATH, as the tests and ./quickstart
    use it) adds no plugins, and --gst-plugin-path says why."""
    res = subprocess.run([sys.executable, "-m", "spdlgst", "--gst-plugin-path"],
                         env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")),
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and res.stdout == ""
    assert "carries no plugins" in res.stderr, res.stderr
    res = subprocess.run([sys.executable, "-m", "spdlgst", "--version"],
                         env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")),
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.stdout.strip() == meson_version()


def test_source_tree_spdlgst_without_plugins_says_how(tmp_path):
    """The source tree's spdlgst on PYTHONPATH (before a wheel installed in
    the same venv) with no GST_PLUGIN_PATH: the loader's error says that
    no spdl plugin was found and how to give GStreamer one, not only
    'no element "spdlsrc"'."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GST_PLUGIN")}
    env.update(PYTHONPATH=os.path.join(ROOT, "python"),
               GST_PLUGIN_SYSTEM_PATH_1_0="",
               GST_REGISTRY=str(tmp_path / "registry.bin"))
    res = subprocess.run([sys.executable, "-c", "import spdlgst\n"
                          "try:\n spdlgst.ImageLoader(%r, batch_size=2)\n"
                          "except spdlgst.LoaderError as e:\n print(e)"
                          % str(tmp_path)],
                         env=env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert 'no element "spdlsrc"' in res.stdout, res.stdout
    assert "GST_PLUGIN_PATH" in res.stdout and "pip install" in res.stdout, res.stdout
