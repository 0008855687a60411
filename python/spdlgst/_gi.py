"""gi with GStreamer's Python overrides (gst-python: Debian/Ubuntu
python3-gst-1.0), which spdlgst needs: a mapped GstMemory as a memoryview
(the batches' zero-copy arrays) and GstValueArray fields as lists.

In a venv without the system's site packages, gi is PyPI's PyGObject and
its overrides folder lacks Gst's; the system's gst-python overrides (for
the same interpreter) are added to it, as PyGObject itself looks for
overrides in every gi/overrides folder on sys.path. Without them spdlgst
stops at import with what to install, rather than copying each batch or
failing on the first.
"""
import importlib.util
import os
import site
import sys

import gi


def system_overrides():
    """The base interpreter's gi/overrides folders that hold Gst's."""
    dirs = []
    for d in site.getsitepackages([sys.base_prefix]):
        path = os.path.join(d, "gi", "overrides")
        if os.path.isfile(os.path.join(path, "Gst.py")) and path not in dirs:
            dirs.append(path)
    return dirs


def require_gst_overrides():
    """Imports Gst with gst-python's overrides, or raises ImportError."""
    import gi.overrides

    if importlib.util.find_spec("gi.overrides.Gst") is None:
        for path in system_overrides():
            if path not in gi.overrides.__path__:
                gi.overrides.__path__.append(path)
    from gi.repository import Gst  # noqa: F401

    if "gi.overrides._gi_gst" not in sys.modules:
        raise ImportError(
            "spdlgst needs GStreamer's Python overrides (gst-python), which "
            "this gi (PyGObject %s at %s) does not find: install Debian/"
            "Ubuntu's python3-gst-1.0 (for this Python, %d.%d), or make the "
            "venv with --system-site-packages to use the system's gi" % (
                getattr(gi, "__version__", "?"), os.path.dirname(gi.__file__),
                sys.version_info[0], sys.version_info[1]))
