"""The loader over a training job's life: epochs left early, the bus, exit."""
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import spdlgst
from gi.repository import Gst

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
        # the older iterator stopped when a newer loop started
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
