"""The loader over a training job's life: epochs left early, the bus, exit."""
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import spdlgst
from gi.repository import GLib, GObject, Gst
from spdlgst._buslog import BusLog

HERE = os.path.dirname(os.path.abspath(__file__))


def loader(root, batch, extra_src="", **kw):
    return spdlgst.Loader(
        f"spdlsrc location={root} shuffle=true seed=7 {extra_src} ! "
        "spdldecode width=32 height=32 mode=center-crop threads=2 ! "
        f"spdlbatch batch-size={batch} layout=nchw ! spdlappsink name=sink", **kw)


def epoch_indices(root, batch, epochs):
    """Each epoch's batches' indices from a loader that is never interrupted."""
    with loader(root, batch, f"num-epochs={epochs}") as ref:
        return [[b.indices for b in ref] for _ in range(epochs)]


@pytest.mark.parametrize("batch", [2, 5])
def test_break_then_next_loop_is_the_next_epoch(kinds_dataset, batch):
    # batch 2: 10 batches per epoch, 8 left after the break: the pipeline
    # restarts at the next epoch; batch 5: 4 per epoch, 2 left: drained
    expected = epoch_indices(kinds_dataset, batch, 4)
    with loader(kinds_dataset, batch, "num-epochs=4") as l:
        got = []
        for i, b in enumerate(l):
            got.append(b.indices)
            if i == 1:
                kept = b.images
                pixels = np.array(kept)
                break
        assert got == expected[0][:2]
        second = [(b.epoch, b.indices) for b in l]
        assert [e for e, _ in second] == [1] * len(expected[1])
        assert [i for _, i in second] == expected[1]
        # a batch kept from the abandoned epoch still holds its pixels
        assert np.array_equal(np.asarray(kept), pixels)
        # leave the third epoch at once: the fourth comes whole, then the end
        for b in l:
            assert b.epoch == 2
            break
        assert [b.indices for b in l] == expected[3]
        assert list(l) == []


def test_break_in_an_endless_pipeline_and_stale_iterators(kinds_dataset):
    expected = epoch_indices(kinds_dataset, 2, 3)
    with loader(kinds_dataset, 2, "num-epochs=-1") as l:
        old = iter(l)
        assert next(old).indices == expected[0][0]
        assert [b.indices for b in l] == expected[1]
        # the older iterator ended when a newer loop started: its next use
        # says so
        with pytest.raises(RuntimeError, match="ended by a newer loop"):
            next(old)
        assert list(old) == []
        assert next(iter(l)).indices == expected[2][0]


def test_break_in_the_last_epoch_ends_the_loader(kinds_dataset):
    with loader(kinds_dataset, 2, "num-epochs=2") as l:
        assert len(list(l)) == 10
        for _ in l:
            break
        assert list(l) == []


def dirty(root):
    (root / "class0" / "empty.jpg").write_bytes(b"")
    (root / "class1" / "notjpeg.jpg").write_bytes(b"plain text, not an image" * 10)
    (root / "class1" / "cut.jpg").write_bytes((root / "class1" / "img001.jpg").read_bytes()[:400])


def test_bus_is_drained_into_logging(kinds_dataset, caplog):
    dirty(kinds_dataset)
    epochs = 30
    caplog.set_level(logging.INFO, logger="spdlgst")
    with loader(kinds_dataset, 4, f"num-epochs={epochs}", log_limit=1) as l:
        for _ in range(epochs):
            assert sum(len(b.labels) for b in l) == 20
        assert list(l) == []
        # nothing piles up on the bus: what is left is the last few state
        # changes, not a message per skipped sample and epoch
        left = 0
        while l._bus.pop() is not None:
            left += 1
        assert left < 10, left
        assert l.skipped()["empty"] == epochs
    records = [r for r in caplog.records if r.name == "spdlgst"]
    single = [r for r in records if getattr(r, "spdl_reason", None)]
    summaries = [r for r in records if getattr(r, "spdl_counts", None)]
    # log_limit=1: one warning per epoch one by one (naming the file), the
    # rest counted in the epoch's summary
    assert all(r.levelno == logging.WARNING for r in single)
    assert all(r.spdl_path for r in single)
    assert epochs - 1 <= len(single) <= epochs + 1
    totals = {}
    for r in summaries:
        for reason, n in r.spdl_counts.items():
            totals[reason] = totals.get(reason, 0) + n
    assert totals == {"empty": epochs, "not-jpeg": epochs, "truncated": epochs}
    assert sum(r.spdl_hidden for r in summaries) == 2 * epochs
    assert len(summaries) >= epochs - 1
    assert "skipped 3 samples" in summaries[0].getMessage()


def test_errors_still_raise_after_warnings(kinds_dataset):
    dirty(kinds_dataset)
    with pytest.raises(spdlgst.LoaderError, match="max-errors"):
        with spdlgst.Loader(f"spdlsrc location={kinds_dataset} ! spdldecode "
                            "width=32 height=32 max-errors=2 ! spdlbatch ! "
                            "spdlappsink") as l:
            list(l)


EXIT_SCRIPT = textwrap.dedent("""
    import atexit
    import sys
    order, output, ending = sys.argv[1:4]
    # runs after spdlgst's own exit hook: the batch must still be readable
    atexit.register(lambda: print("still", int(view.sum()) == total, flush=True))
    if order == "torch-first":
        import torch
    import spdlgst
    loader = spdlgst.Loader(
        "spdlsrc location=%s num-epochs=-1 ! spdldecode width=32 height=32 ! "
        "spdlbatch batch-size=3 ! spdlappsink name=sink", output=output)
    it = iter(loader)
    batch = next(it)
    images, labels = batch
    view = images[1:]
    total = int(view.sum())
    if ending == "closed":
        loader.close()
    if order == "torch-last":
        import torch
    print("done", flush=True)
""")


# torch imported before spdlgst, or after the loader (with numpy output: a
# torch loader imports torch when it is made); the loader running or closed
@pytest.mark.parametrize("order,output,ending", [
    ("torch-first", "torch", "running"), ("torch-last", "numpy", "running"),
    ("torch-first", "numpy", "closed"), ("torch-last", "torch", "closed")])
def test_exit_with_the_last_batch_alive_is_clean(kinds_dataset, tmp_path, order,
                                                 output, ending):
    script = tmp_path / "train.py"
    script.write_text(EXIT_SCRIPT % kinds_dataset)
    done = subprocess.run([sys.executable, str(script), order, output, ending],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "done\nstill True\n"
    assert "CRITICAL" not in done.stderr and "WARNING" not in done.stderr, \
        done.stderr[-2000:]


def post_skip(bus, element, reason, name):
    error = GLib.Error.new_literal(Gst.StreamError.quark(), f'Skipping sample "{name}": bad',
                                   int(Gst.StreamError.DECODE))
    bus.post(Gst.Message.new_warning(element, error, f"reason: {reason}; 1 samples skipped"))


def post_summary(bus, element, epoch, suppressed, **reasons):
    s = Gst.Structure.new_empty("spdl-skipped")
    for reason, n in reasons.items():
        s.set_value(reason.replace("_", "-"), GObject.Value(GObject.TYPE_UINT64, n))
    s.set_value("total", GObject.Value(GObject.TYPE_UINT64, sum(reasons.values())))
    s.set_value("epoch", GObject.Value(GObject.TYPE_UINT, epoch))
    s.set_value("suppressed", GObject.Value(GObject.TYPE_UINT64, suppressed))
    bus.post(Gst.Message.new_element(element, s))


def summaries(caplog):
    return [(r.spdl_epoch, r.spdl_element, r.spdl_counts, r.spdl_hidden)
            for r in caplog.records if hasattr(r, "spdl_counts")]


def test_buslog_limits_and_summaries(caplog):
    """Warnings of elements that summarize their own epochs (spdl-skipped
    with an epoch) and of elements that do not, received ahead of the loop."""
    caplog.set_level(logging.INFO, logger="spdlgst")
    bus = Gst.Bus.new()
    src, dec = Gst.ElementFactory.make("identity", "src"), Gst.ElementFactory.make("identity", "dec")
    log = BusLog(bus, 2, spdlgst.LoaderError)
    # the source ran two epochs ahead; it held back 5 warnings of epoch 0
    for i in range(4):
        post_skip(bus, src, "unreadable", f"a{i}.jpg")
    post_summary(bus, src, 0, 5, unreadable=9, not_a_file=0)
    for i in range(3):
        post_skip(bus, src, "not-a-file", f"b{i}.jpg")
    post_summary(bus, src, 1, 0, unreadable=0, not_a_file=3)
    for i in range(3):
        post_skip(bus, dec, "corrupt" if i else "truncated", f"c{i}.jpg")
    log.end_of_epoch(0)
    singles = [r for r in caplog.records if hasattr(r, "spdl_reason")]
    assert [(r.spdl_element, r.spdl_path) for r in singles] == [
        ("src", "a0.jpg"), ("src", "a1.jpg"), ("src", "b0.jpg"), ("src", "b1.jpg"),
        ("dec", "c0.jpg"), ("dec", "c1.jpg")]
    assert summaries(caplog) == [
        (0, "src", {"unreadable": 9}, 5 + 2),
        (0, "dec", {"truncated": 1, "corrupt": 2}, 1)]
    caplog.clear()
    log.end_of_epoch(1)
    assert summaries(caplog) == [(1, "src", {"not-a-file": 3}, 1)]
    caplog.clear()
    log.end_of_epoch(2)            # nothing skipped
    log.end_of_stream()
    assert summaries(caplog) == []
    assert bus.pop() is None
    # an error raises, naming the element
    bus.post(Gst.Message.new_error(dec, GLib.Error.new_literal(
        Gst.StreamError.quark(), "broken", int(Gst.StreamError.DECODE)), "detail"))
    with pytest.raises(spdlgst.LoaderError, match="dec: broken") as info:
        log.drain()
    assert info.value.debug == "detail"


class Flood(logging.Handler):
    """A pipeline outpacing the loop: each warning logged brings a new one
    on the bus (up to a cap, so that an unbounded drain ends too)."""

    def __init__(self, bus, element, cap=1000):
        super().__init__()
        self.bus, self.element, self.cap, self.posted = bus, element, cap, 0

    def emit(self, record):
        if self.posted < self.cap:
            self.posted += 1
            post_skip(self.bus, self.element, "corrupt", f"new{self.posted}.jpg")


def logged_paths(caplog):
    paths = [r.spdl_path for r in caplog.records if hasattr(r, "spdl_path")]
    caplog.clear()
    return paths


def test_drain_returns_while_the_bus_floods(caplog):
    """A drain handles what was queued when it began, in order; what comes
    meanwhile waits for the next one, and an error still raises at once."""
    caplog.set_level(logging.INFO, logger="spdlgst")
    bus = Gst.Bus.new()
    dec = Gst.ElementFactory.make("identity", "dec")
    log = BusLog(bus, 10**6, spdlgst.LoaderError)
    for i in range(3):
        post_skip(bus, dec, "corrupt", f"old{i}.jpg")
    flood = Flood(bus, dec)
    logging.getLogger("spdlgst").addHandler(flood)
    try:
        log.drain()
        assert logged_paths(caplog) == ["old0.jpg", "old1.jpg", "old2.jpg"]
        log.drain()
        assert logged_paths(caplog) == ["new1.jpg", "new2.jpg", "new3.jpg"]
        bus.post(Gst.Message.new_error(dec, GLib.Error.new_literal(
            Gst.StreamError.quark(), "broken", int(Gst.StreamError.DECODE)),
            "detail"))
        with pytest.raises(spdlgst.LoaderError, match="dec: broken"):
            log.drain()
        assert logged_paths(caplog) == ["new4.jpg", "new5.jpg", "new6.jpg"]
        log.drain()
        assert logged_paths(caplog) == ["new7.jpg", "new8.jpg", "new9.jpg"]
    finally:
        logging.getLogger("spdlgst").removeHandler(flood)


def test_error_raised_again_by_later_loops(tmp_path):
    # after an error the stopped pipeline would only report "Internal data
    # stream error" or a failed state change: the loader repeats the cause
    from PIL import Image
    for i in range(3):
        (tmp_path / "ppms" / "a").mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (20, 20)).save(tmp_path / "ppms" / "a" / f"{i}.ppm")
    line = (f"spdlsrc location={tmp_path / 'ppms'} ! spdldecode width=32 "
            "height=32 max-errors=0 ! spdlbatch batch-size=2 ! "
            "spdlappsink name=sink")
    with spdlgst.Loader(line, log_limit=0) as L:
        for _ in range(2):
            with pytest.raises(spdlgst.LoaderError,
                               match=r"spdldecode.*more than max-errors=0"):
                for _ in L:
                    pass
    with loader(tmp_path / "missing", 2) as L:
        with pytest.raises(spdlgst.LoaderError, match="does not exist"):
            len(L)
        with pytest.raises(spdlgst.LoaderError,
                           match="does not exist.*make a new one"):
            list(L)


def test_loops_past_the_last_epoch_say_so(kinds_dataset, caplog):
    """A line without num-epochs runs one epoch: the second loop yields
    nothing and a warning says why, once."""
    line = (f"spdlsrc location={kinds_dataset} ! spdldecode width=8 height=8 "
            "! spdlbatch batch-size=4 ! spdlappsink name=sink")
    with caplog.at_level(logging.WARNING, logger="spdlgst"):
        with spdlgst.Loader(line) as loader:
            assert len(list(loader)) > 0
            assert not [r for r in caplog.records if "no more batches" in r.message]
            assert list(loader) == [] and list(loader) == []
    said = [r.getMessage() for r in caplog.records if "no more batches" in r.getMessage()]
    assert len(said) == 1 and "(the last: epoch 0)" in said[0]


def test_past_the_last_epoch_after_a_move(kinds_dataset, caplog):
    """Moved to a later epoch (as a resume does), the warning still names
    the run's last epoch, not what is left of num-epochs."""
    kw = dict(recipe="val", batch_size=4, size=8, output="numpy", epochs=3)
    with spdlgst.ImageLoader(kinds_dataset, **kw) as loader:
        loader.set_epoch(2)
        assert len(list(loader)) > 0
        with caplog.at_level(logging.WARNING, logger="spdlgst"):
            assert list(loader) == []
    said = [r.getMessage() for r in caplog.records if "no more batches" in r.getMessage()]
    assert len(said) == 1 and "(the last: epoch 2)" in said[0], said
