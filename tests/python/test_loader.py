"""The spdlgst loader as a training loop uses it."""
import logging
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torchvision.transforms as T
from torchvision.datasets import ImageFolder

import spdlgst
from gi.repository import Gst

HERE = os.path.dirname(os.path.abspath(__file__))
VAL = "spdldecode width=224 height=224 mode=center-crop resize-shorter=256"


def val_loader(root, extra_src="", batch=4, sink="spdlappsink name=sink", **kw):
    return spdlgst.Loader(f"spdlsrc location={root} {extra_src} ! {VAL} ! "
                          f"spdlbatch batch-size={batch} layout=nchw ! {sink}", **kw)


def test_batches_equal_torchvision_dataloader(kinds_dataset):
    ref = torch.utils.data.DataLoader(
        ImageFolder(str(kinds_dataset), transform=T.Compose(
            [T.Resize(256), T.CenterCrop(224), T.PILToTensor()])),
        batch_size=4, num_workers=0)
    with val_loader(kinds_dataset, output="torch") as loader:
        got = list(loader)
    expected = list(ref)
    assert len(got) == len(expected)
    for (images, labels), (ref_images, ref_labels) in zip(got, expected):
        assert images.dtype == torch.uint8 and labels.dtype == torch.int64
        assert images.shape == ref_images.shape
        assert torch.equal(labels, ref_labels)
        assert torch.equal(images, ref_images)


def _jpeg(path, shade):
    from PIL import Image
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (40, 30), (shade, 100, 200)).save(path)


def test_hidden_folders_labelled_as_imagefolder(tmp_path, caplog):
    # torchvision counts every folder as a class, hidden ones too
    # (.ipynb_checkpoints, .cache): skipping them shifted every label
    for i, rel in enumerate([".hidden/4.jpg", "a/1.jpg", "c/3.JPG", "d/.5.jpg",
                             "d/.sub/6.jpg"]):
        _jpeg(tmp_path / "tree" / rel, 40 * i)
    ref = ImageFolder(str(tmp_path / "tree"))
    assert ref.classes == [".hidden", "a", "c", "d"]
    with val_loader(tmp_path / "tree", batch=5) as loader:
        (images, labels), = list(loader)
    assert list(labels) == ref.targets == [0, 1, 2, 3, 3]

    # a hidden folder without images (torchvision refuses the tree) still
    # takes its label, with a warning naming it
    (tmp_path / "tree" / ".hidden" / "4.jpg").unlink()
    (tmp_path / "tree" / ".ipynb_checkpoints").mkdir()
    with caplog.at_level("WARNING", logger="spdlgst"):
        with val_loader(tmp_path / "tree", batch=4) as loader:
            (images, labels), = list(loader)
    warnings = [r.getMessage() for r in caplog.records
                if "holds no image" in r.getMessage()]
    assert list(labels) == [2, 3, 4, 4]
    assert any('".hidden"' in w and "label 0" in w for w in warnings), warnings
    assert any('".ipynb_checkpoints"' in w and "label 1" in w
               for w in warnings), warnings


def memory_range(sample, i):
    memory = sample.get_buffer().peek_memory(i)
    ok, info = memory.map(Gst.MapFlags.READ)
    start = np.frombuffer(info.data, np.uint8).ctypes.data
    size = info.size
    memory.unmap(info)
    return start, start + size


def test_zero_copy(kinds_dataset):
    with val_loader(kinds_dataset) as loader:
        batch = next(iter(loader))
        images, labels = batch
        for i, arr in enumerate((images, labels)):
            start, end = memory_range(batch.sample, i)
            address = arr.__array_interface__["data"][0]
            assert start <= address and address + arr.nbytes <= end
        # the buffer outlives the loader's reference while the array lives
        view = images[0]
        del batch, images
        assert view.base is not None and view.sum() > 0
    with val_loader(kinds_dataset, output="torch") as loader:
        batch = next(iter(loader))
        start, end = memory_range(batch.sample, 0)
        assert start <= batch[0].data_ptr() < end


def test_epochs_iterate_and_shuffle(kinds_dataset):
    n = len(ImageFolder(str(kinds_dataset)))
    with val_loader(kinds_dataset, "shuffle=true seed=3 num-epochs=3", batch=5) as loader:
        assert len(loader) == -(-n // 5)
        orders = []
        for epoch in range(3):
            indices = []
            for batch in loader:
                assert batch.epoch == epoch
                indices += batch.indices
            assert sorted(indices) == list(range(n))
            orders.append(indices)
        assert orders[0] != orders[1]
        assert list(loader) == []          # the pipeline reached EOS
        stats = loader.stats()
        assert stats["sink"]["batches"] == 3 * len(loader)
        assert stats["sink"]["epochs"] == 3


def test_errors_become_exceptions(tmp_path, kinds_dataset):
    with pytest.raises(spdlgst.LoaderError, match="does not exist"):
        with val_loader(tmp_path / "missing") as loader:
            list(loader)
    bad = kinds_dataset / "class0" / "broken.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 this is not a jpeg")
    with pytest.raises(spdlgst.LoaderError, match="broken.jpg"):
        with spdlgst.Loader(f"spdlsrc location={kinds_dataset} ! spdldecode "
                            "width=32 height=32 max-errors=0 ! spdlbatch ! "
                            "spdlappsink") as loader:
            list(loader)
    with pytest.raises(spdlgst.LoaderError, match="no spdlappsink"):
        spdlgst.Loader("fakesrc ! fakesink")


def test_skipped_counts_by_reason(kinds_dataset):
    (kinds_dataset / "class0" / "empty.jpg").write_bytes(b"")
    (kinds_dataset / "class1" / "cut.jpg").write_bytes(
        (kinds_dataset / "class1" / "img001.jpg").read_bytes()[:300])
    with val_loader(kinds_dataset) as loader:
        n = sum(len(labels) for _, labels in loader)
        skipped = loader.skipped()
    assert n == 20
    assert skipped["empty"] == 1 and skipped["truncated"] == 1
    assert skipped["unreadable"] == 0 and skipped["corrupt"] == 0


def thread_count():
    return len(os.listdir("/proc/self/task"))


def test_close_stops_every_thread(kinds_dataset):
    before = thread_count()
    for _ in range(3):
        with val_loader(kinds_dataset, "num-epochs=-1", batch=2) as loader:
            it = iter(loader)
            next(it)
            next(it)           # mid-epoch, the consumer walks away
        assert loader.pipeline.get_state(0)[1] == Gst.State.NULL
    # GLib keeps a few idle pool threads; decoder workers must be gone
    assert thread_count() <= before + 4


def test_distributed_environment(kinds_dataset, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    loader = val_loader(kinds_dataset)
    src = loader._find("spdlsrc")
    assert src.get_property("shard-index") == 1
    assert src.get_property("num-shards") == 3
    loader.close()
    loader = val_loader(kinds_dataset, "num-shards=1")
    assert loader._find("spdlsrc").get_property("num-shards") == 1
    loader.close()


def test_local_ranks_share_the_cpus(kinds_dataset, monkeypatch):
    # torchrun's LOCAL_WORLD_SIZE ranks on one machine: one decoding thread
    # per CPU between them, not per CPU each
    cpus = len(os.sched_getaffinity(0))
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    loader = val_loader(kinds_dataset)
    assert loader._find("spdldecode").get_property("threads") == max(1, cpus // 2)
    loader.close()
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(4 * cpus))
    loader = val_loader(kinds_dataset)
    assert loader._find("spdldecode").get_property("threads") == 1
    loader.close()
    # threads set by the user stay as they are
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    loader = spdlgst.ImageLoader(str(kinds_dataset), batch_size=2, size=32,
                                 resize=40, threads=3, output="numpy")
    assert loader._find("spdldecode").get_property("threads") == 3
    loader.close()
    # a rank bound to a part of the machine keeps that part
    monkeypatch.setattr(os, "cpu_count", lambda: 4 * cpus)
    loader = val_loader(kinds_dataset)
    assert loader._find("spdldecode").get_property("threads") == cpus
    loader.close()
    monkeypatch.undo()
    loader = val_loader(kinds_dataset)
    assert loader._find("spdldecode").get_property("threads") == 0
    loader.close()


def test_torchrun_two_ranks(kinds_dataset, tmp_path):
    out = tmp_path / "ranks.txt"
    env = dict(os.environ, SPDL_TEST_DATASET=str(kinds_dataset),
               SPDL_TEST_OUT=str(out), OMP_NUM_THREADS="1")
    # torchrun of Debian's torch 1.13 spells its options with underscores, and
    # on Python 3.11 its default --redirects/--tee "0" fails to parse (IntFlag
    # iteration changed), so name a single stream explicitly
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           "--nproc_per_node", "2", "--redirects", "2", "--tee", "2",
           os.path.join(HERE, "ddp_worker.py")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert out.read_text().strip() == "ok", out.read_text()


def test_out_of_range_values_are_errors(tmp_path):
    """batch-size=0 would fall back to the default with a GLib warning on
    stderr: an error naming the property instead."""
    from test_checkpoint import make_folder
    root = make_folder(tmp_path / "ds", 4)
    with pytest.raises(spdlgst.LoaderError, match="batch-size"):
        spdlgst.Loader(f"spdlsrc location={root} ! spdldecode ! "
                       "spdlbatch batch-size=0 ! spdlappsink name=sink")
    with pytest.raises(spdlgst.LoaderError, match="threads"):
        spdlgst.Loader(f"spdlsrc location={root} ! spdldecode threads=100000 "
                       "! spdlbatch ! spdlappsink name=sink")


def test_skipped_counts_the_epochs_the_loop_reached(tmp_path, caplog):
    """Two bad files an epoch: 2 after the first epoch, not 3 or 4 (the
    decoder reads ahead into the next); an empty class folder is said, not
    counted as a skipped sample; an epoch left by a break still counts."""
    from test_checkpoint import make_folder
    root = make_folder(tmp_path / "ds", 24)
    (root / "c0" / "bad1.jpg").write_bytes(b"not a jpeg")
    (root / "c1" / "bad2.jpg").write_bytes(b"\xff\xd8 cut")
    (root / "empty-class").mkdir()
    line = (f"spdlsrc location={root} num-epochs=4 ! spdldecode width=8 height=8 "
            "! spdlbatch batch-size=2 ! spdlappsink name=sink")
    with caplog.at_level(logging.WARNING, logger="spdlgst"):
        with spdlgst.Loader(line, log_limit=0) as loader:
            list(loader)
            first = loader.skipped()
            list(loader)
            second = loader.skipped()
            for _ in loader:
                break                   # epoch 2 left after a batch
            list(loader)                # epoch 3 (a restart)
            last = loader.skipped()
    assert sum(first.values()) == 2, first
    assert sum(second.values()) == 4, second
    # epoch 2's skips up to where it was left (0 to 2), and epoch 3's 2
    assert 6 <= sum(last.values()) <= 8, last
    assert "other" not in first
    said = [r.getMessage() for r in caplog.records if "holds no image" in r.getMessage()]
    assert said, [r.getMessage() for r in caplog.records]
