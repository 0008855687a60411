"""A clean interpreter exit while loaders and batches are still alive.

Arrays, tensors and batches hold GStreamer objects (mapped memories).
Left to the interpreter's final teardown, they would be unmapped and
released through a half torn-down PyGObject: a flood of
GLib-GObject-CRITICALs, or a segfault, depending on the import order of
torch. So at exit, while everything is still alive, every loader is
stopped (its threads joined) and every holder still referenced is kept
for good: its memory stays mapped and valid (tensors can still be read by
later exit hooks) and the operating system takes it back with the
process. Nothing touches GStreamer after that.
"""
from __future__ import annotations

import atexit
import ctypes
import sys
import weakref

# loaders (anything with _shutdown()) and holders of GStreamer objects
_loaders: "weakref.WeakSet" = weakref.WeakSet()
_holders: "weakref.WeakSet" = weakref.WeakSet()
_exiting = False


def track_loader(loader) -> None:
    """Has @loader stopped at exit (its _shutdown() called)."""
    _loaders.add(loader)


def track_holder(holder) -> None:
    """Has @holder kept alive for good at exit."""
    _holders.add(holder)


def exiting() -> bool:
    """True once GStreamer objects must no longer be released."""
    return _exiting or sys.is_finalizing()


def _at_exit() -> None:
    global _exiting
    _exiting = True
    for loader in list(_loaders):
        loader._shutdown()
    for holder in list(_holders):
        # one reference nobody drops: never deallocated, never unmapped
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(holder))


atexit.register(_at_exit)
