"""The process around the loaders: a clean interpreter exit, and fork.

Exit. Arrays, tensors and batches hold GStreamer objects (mapped
memories). Left to the interpreter's final teardown, they would be
unmapped and released through a half torn-down PyGObject: a flood of
GLib-GObject-CRITICALs, or a segfault, depending on the import order of
torch. So at exit, while everything is still alive, every loader is
stopped (its threads joined) and every holder still referenced is kept
for good: its memory stays mapped and valid (tensors can still be read by
later exit hooks) and the operating system takes it back with the
process. Nothing touches GStreamer after that.

Fork (PyTorch's DataLoader forks its workers by default). A child has the
parent's memory but none of its threads:
- the parent's loaders are inert there: using one raises, closing one or
  exiting the child does nothing (joining threads that do not exist would
  wait for ever), and the parent's batches are never released there;
- GLib's thread pools share idle threads process-wide and would hand the
  child's work to threads that exist only in the parent; so before a fork
  the idle ones are let go (GLib keeps a pool's idle thread for half a
  second before it becomes process-wide: a fork that soon after a loader
  stopped waits the rest) and the child starts its own;
- a loader running in the parent at the fork may hold GLib and GStreamer
  locks mid-operation in its threads: a child of such a process cannot
  start pipelines, and creating a loader there raises an error saying to
  create it before forking or to use the "spawn" start method.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import sys
import time
import weakref

# loaders (anything with _shutdown(), _running(), _forked()) and holders of
# GStreamer objects
_loaders: "weakref.WeakSet" = weakref.WeakSet()
_holders: "weakref.WeakSet" = weakref.WeakSet()
_exiting = False
# what a forked child inherits: whether a loader ran at the fork
_forked_while_running = False
_last_stop = 0.0            # time.monotonic() when a pipeline last stopped
_pipeline_ran = False
_glib = None
_saved_max_unused = None
# how long GLib keeps a non-exclusive pool's idle thread before it becomes
# a process-wide unused one (g_thread_pool_wait_for_new_task: 1/2 s)
_POOL_IDLE_S = 0.55


def track_loader(loader) -> None:
    """Has @loader stopped at exit (its _shutdown() called) and made inert
    in a forked child (its _forked() called)."""
    _loaders.add(loader)


def track_holder(holder) -> None:
    """Has @holder kept alive for good at exit."""
    _holders.add(holder)


def keep_forever(obj) -> None:
    """One reference nobody drops: @obj is never deallocated."""
    if obj is not None:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


def exiting() -> bool:
    """True once GStreamer objects must no longer be released."""
    return _exiting or sys.is_finalizing()


def pipeline_started() -> None:
    global _pipeline_ran
    _pipeline_ran = True


def pipeline_stopped() -> None:
    global _last_stop
    _last_stop = time.monotonic()


def check_can_start() -> None:
    """Raises RuntimeError in a child forked while a loader ran."""
    if _forked_while_running:
        raise RuntimeError(
            "this process was forked while a spdlgst loader was running in "
            "its parent: its GLib and GStreamer threads (and the locks they "
            "held) did not come along, and no pipeline can start here. "
            "Create loaders in the process that uses them, before any fork "
            "or after closing the parent's loaders, or start workers with "
            "the 'spawn' method (multiprocessing.set_start_method('spawn'), "
            "DataLoader(multiprocessing_context='spawn'))")


def _at_exit() -> None:
    global _exiting
    _exiting = True
    for loader in list(_loaders):
        loader._shutdown()
    for holder in list(_holders):
        keep_forever(holder)        # never deallocated, never unmapped


def _glib_lib():
    global _glib
    if _glib is None:
        _glib = ctypes.CDLL("libglib-2.0.so.0")
        _glib.g_thread_pool_get_max_unused_threads.restype = ctypes.c_int
        _glib.g_thread_pool_get_num_unused_threads.restype = ctypes.c_uint
        _glib.g_thread_pool_set_max_unused_threads.argtypes = [ctypes.c_int]
    return _glib


def _before_fork() -> None:
    global _saved_max_unused
    if not _pipeline_ran or any(l._running() for l in list(_loaders)):
        return
    # no loader runs: let GLib's idle threads go, so that the child's
    # pools start threads of their own
    wait = _POOL_IDLE_S - (time.monotonic() - _last_stop)
    if wait > 0:
        time.sleep(wait)
    glib = _glib_lib()
    _saved_max_unused = glib.g_thread_pool_get_max_unused_threads()
    glib.g_thread_pool_set_max_unused_threads(0)
    glib.g_thread_pool_stop_unused_threads()
    deadline = time.monotonic() + 1.0
    while glib.g_thread_pool_get_num_unused_threads() > 0 and \
            time.monotonic() < deadline:
        time.sleep(0.001)


def _after_fork_in_parent() -> None:
    global _saved_max_unused
    if _saved_max_unused is not None:
        _glib_lib().g_thread_pool_set_max_unused_threads(_saved_max_unused)
        _saved_max_unused = None


def _after_fork_in_child() -> None:
    global _forked_while_running, _saved_max_unused
    running = any(l._running() for l in list(_loaders))
    _forked_while_running = _forked_while_running or running
    for loader in list(_loaders):
        loader._forked()
    _loaders.clear()
    # the parent's buffers: never released here (a pool's lock may be held
    # by a parent thread that is not in this process)
    for holder in list(_holders):
        keep_forever(holder)
    _holders.clear()
    if _saved_max_unused is not None:
        _glib_lib().g_thread_pool_set_max_unused_threads(_saved_max_unused)
        _saved_max_unused = None


atexit.register(_at_exit)
os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)
