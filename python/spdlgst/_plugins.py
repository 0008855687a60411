"""The plugins a wheel of gst-spdl carries (spdlgst/gstreamer-1.0/), added
to GStreamer's registry at import: no GST_PLUGIN_PATH, no root.

A plugin of the same file name that GStreamer found first (the user's
GST_PLUGIN_PATH, or the system's plugin folder) wins: the registry keeps
one plugin per file name, the first it scanned, and Gst.init scans those
folders before spdlgst adds its own. Installed with meson or used from the
source tree, spdlgst carries no plugins and adds nothing.
"""
import importlib.resources
import os

FOLDER = "gstreamer-1.0"


def plugin_dirs():
    """The folders holding the plugins this spdlgst carries (none when
    installed with meson or used from the source tree)."""
    folder = importlib.resources.files(__package__) / FOLDER
    if isinstance(folder, os.PathLike):
        return [os.fspath(folder)] if os.path.isdir(folder) else []
    if not folder.is_dir():
        return []
    # meson-python's editable install: the build tree's files, each in its
    # own folder (gst/spdl, ext/cuda), listed by its import hook
    return sorted({os.path.dirname(os.fspath(f)) for f in folder.iterdir()
                   if isinstance(f, os.PathLike)})


def register():
    """Adds the carried plugins to the registry (Gst.init first); returns
    the folders added."""
    dirs = plugin_dirs()
    if dirs:
        from gi.repository import Gst
        Gst.init(None)
        registry = Gst.Registry.get()
        for path in dirs:
            registry.scan_path(path)
        warn_other_version(registry, dirs)
    return dirs


def warn_other_version(registry, dirs):
    """A plugin found before the wheel's (GST_PLUGIN_PATH, the system's
    folder) wins; one of another version than this spdlgst is a likely
    mistake (an old build tree, a stale install): said once, at WARNING."""
    import logging
    from ._version import __version__
    for name in ("spdl", "spdlcuda"):
        plugin = registry.find_plugin(name)
        if plugin is None or plugin.get_version() == __version__:
            continue
        path = plugin.get_filename() or ""
        if any(path.startswith(d + os.sep) for d in dirs):
            continue
        logging.getLogger("spdlgst").warning(
            "GStreamer uses the %s plugin %s, version %s, not the one of this "
            "spdlgst (%s): unset GST_PLUGIN_PATH or remove that plugin to use "
            "the wheel's", name, path, plugin.get_version(), __version__)
