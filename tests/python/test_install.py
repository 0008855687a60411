"""meson install: the plugins into GStreamer's plugin folder of the prefix,
spdlgst into the prefix's Python site folder, both usable from anywhere."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("SPDL_BUILD_ROOT", os.path.join(ROOT, "build"))
INSTALL_DIR_TOOL = os.path.join(ROOT, "tools", "python-install-dir")

needs_build = pytest.mark.skipif(
    not os.path.isdir(os.path.join(BUILD, "meson-info")) or not shutil.which("meson"),
    reason="no meson build folder")


def site_packages(prefix):
    """The site folders Debian's interpreter searches for @prefix."""
    code = f"import site; print('\\n'.join(site.getsitepackages([{prefix!r}])))"
    return subprocess.check_output([sys.executable, "-c", code], text=True).split()


@pytest.mark.parametrize("prefix", ["/usr", "/usr/local"])
def test_python_install_dir_is_searched_by_the_interpreter(prefix):
    rel = subprocess.check_output([sys.executable, INSTALL_DIR_TOOL, prefix],
                                  text=True).strip()
    path = os.path.join(prefix, rel)
    assert path in site_packages("/usr"), path
    if prefix == "/usr" and os.path.exists("/usr/lib/python3/dist-packages/gi"):
        # Debian: the folder python3-gi itself is in
        assert path == "/usr/lib/python3/dist-packages"


def meson_json(*args):
    return json.loads(subprocess.check_output(["meson", "introspect", BUILD, *args]))


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GST_PLUGIN", "GST_REGISTRY", "PYTHONPATH"))}
    env.update(extra)
    return env


@needs_build
def test_meson_install_into_a_temporary_prefix(tmp_path):
    options = {o["name"]: o["value"] for o in meson_json("--buildoptions")}
    prefix, libdir = options["prefix"], options["libdir"]
    installed = meson_json("--installed")
    dest = tmp_path / "dest"
    subprocess.run(["meson", "install", "-C", BUILD, "--destdir", str(dest),
                    "--no-rebuild", "--quiet"], check=True, capture_output=True)

    plugin = next(v for k, v in installed.items() if k.endswith("/libgstspdl.so"))
    init = next(v for k, v in installed.items() if k.endswith("spdlgst/__init__.py"))
    # every module of the package, so that its imports (the demo's sample
    # generators) work where it is installed, and py.typed (PEP 561: type
    # checkers read its annotations)
    modules = sorted([f for f in os.listdir(os.path.join(ROOT, "python", "spdlgst"))
                      if f.endswith(".py")] + ["py.typed"])
    assert sorted(os.path.basename(v) for v in installed.values()
                  if os.path.dirname(v) == os.path.dirname(init)) == modules
    plugin_dir, site_dir = os.path.dirname(plugin), os.path.dirname(os.path.dirname(init))
    # where GStreamer and the interpreter look for this prefix
    assert plugin_dir == os.path.join(prefix, libdir, "gstreamer-1.0")
    rel = subprocess.check_output([sys.executable, INSTALL_DIR_TOOL, prefix],
                                  text=True).strip()
    assert site_dir == os.path.normpath(os.path.join(prefix, rel))
    if prefix in ("/usr", "/usr/local"):
        # found without PYTHONPATH (other prefixes need it)
        assert site_dir in site_packages("/usr")

    staged_plugins = str(dest) + plugin_dir
    staged_site = str(dest) + site_dir
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env(GST_PLUGIN_PATH_1_0=staged_plugins,
                    GST_REGISTRY=str(tmp_path / "registry.bin"),
                    PYTHONPATH=staged_site)

    inspect = subprocess.run(["gst-inspect-1.0", "spdldecode"], env=env, cwd=elsewhere,
                             capture_output=True, text=True, timeout=120)
    assert inspect.returncode == 0, inspect.stderr
    assert os.path.join(staged_plugins, "libgstspdl.so") in inspect.stdout

    images = tmp_path / "data" / "cat"
    images.mkdir(parents=True)
    for i in range(3):
        Image.fromarray(np.full((40, 60, 3), 50 * i, np.uint8)).save(images / f"{i}.jpg")
    code = ("import spdlgst, spdlgst.pipelines; print(spdlgst.__file__); "
            "print(spdlgst.pipelines.available()); "
            f"l = spdlgst.ImageLoader({str(tmp_path / 'data')!r}, batch_size=3, size=32, "
            "output='numpy'); print(next(iter(l)).images.shape); l.close()")
    run = subprocess.run([sys.executable, "-c", code], env=env, cwd=elsewhere,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    file_, pipelines, shape = run.stdout.splitlines()
    assert file_ == os.path.join(staged_site, "spdlgst", "__init__.py")
    # every ready line of pipelines/, as in the source tree
    source = sorted(f[:-len(".launch")] for f in
                    os.listdir(os.path.join(ROOT, "pipelines"))
                    if f.endswith(".launch"))
    assert pipelines == repr(source)
    assert shape == "(3, 3, 32, 32)"
    assert "CRITICAL" not in run.stderr

    # the shard writer, on the prefix's PATH: shards of the same images
    tool = str(dest) + os.path.join(prefix, options["bindir"], "spdl-make-shards")
    assert os.access(tool, os.X_OK), tool
    made = subprocess.run([tool, str(tmp_path / "data"), str(tmp_path / "shards")],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "shards" / "train-000000.tar").exists()


@needs_build
def test_prefix_usr_is_gstreamers_own_plugin_folder():
    """With --prefix=/usr the plugins land where GStreamer looks by itself."""
    if not shutil.which("pkg-config"):
        pytest.skip("no pkg-config")
    options = {o["name"]: o["value"] for o in meson_json("--buildoptions")}
    libdir = options["libdir"]
    if os.path.isabs(libdir):
        pytest.skip(f"absolute libdir {libdir}")
    pluginsdir = subprocess.check_output(
        ["pkg-config", "--variable=pluginsdir", "gstreamer-1.0"], text=True).strip()
    assert os.path.join("/usr", libdir, "gstreamer-1.0") == pluginsdir
