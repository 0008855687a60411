"""spdlgst.ImageLoader: torchvision's ImageNet recipes from arguments."""
import logging
import os
import pydoc
import time

import numpy as np
import pytest
import torch
from PIL import Image
import torchvision.transforms as T
from torchvision.datasets import ImageFolder

import spdlgst
from gi.repository import Gst


def test_val_recipe_equals_torchvision(kinds_dataset):
    ref = torch.utils.data.DataLoader(
        ImageFolder(str(kinds_dataset), transform=T.Compose(
            [T.Resize(256), T.CenterCrop(224), T.PILToTensor()])),
        batch_size=4, num_workers=0)
    with spdlgst.ImageLoader(kinds_dataset, batch_size=4) as loader:
        assert "mode=center-crop resize-shorter=256" in loader.launch_line
        got = list(loader)
    expected = list(ref)
    assert len(got) == len(expected) == 5
    for batch, (ref_images, ref_labels) in zip(got, expected):
        images, labels = batch
        assert images is batch.images and labels is batch.labels
        assert images.dtype == torch.uint8 and images.shape == ref_images.shape
        assert torch.equal(labels, ref_labels)
        assert torch.equal(images, ref_images)
    assert [i for b in got for i in b.indices] == list(range(20))
    assert {b.epoch for b in got} == {0}


def test_inexact_is_close_to_torchvision(kinds_dataset):
    ref = ImageFolder(str(kinds_dataset),
                      transform=T.Compose([T.Resize(256), T.CenterCrop(224)]))
    with spdlgst.ImageLoader(kinds_dataset, batch_size=20, exact=False) as loader:
        assert "exact=false" in loader.launch_line
        (images, labels), = list(loader)
    assert "exact=" not in spdlgst.ImageLoader.launch_line_for(kinds_dataset)
    assert labels.tolist() == [label for _, label in ref.samples]
    expected = np.stack([np.asarray(img.convert("RGB")) for img, _ in ref])
    diff = np.abs(images.permute(0, 2, 3, 1).int().numpy() - expected.astype(int))
    per_image = diff.reshape(len(ref), -1).mean(axis=1)
    # sizes and crops are torchvision's; pixels within a level or two
    assert per_image.mean() < 1.0 and per_image.max() < 2.0, per_image
    assert per_image.max() > 0.0


def test_launch_line_runs_the_same_pipeline(kinds_dataset):
    with spdlgst.ImageLoader(kinds_dataset, batch_size=8, recipe="train", size=64,
                             seed=3, output="numpy") as loader:
        line = loader.launch_line
        first = [np.array(b.images) for b in loader]
    with spdlgst.Loader(line) as copy:
        second = [np.array(b.images) for b in copy]
    assert len(first) == len(second) == 3
    for a, b in zip(first, second):
        assert np.array_equal(a, b)
    assert line.endswith("spdlappsink name=sink")
    assert "gst-launch-1.0 spdlsrc" in spdlgst.ImageLoader(kinds_dataset).gst_launch_command


def test_train_recipe(kinds_dataset):
    with spdlgst.ImageLoader(kinds_dataset, batch_size=5, recipe="train",
                             size=48, seed=1) as loader:
        line = loader.launch_line
        epochs = [[b for b in loader] for _ in range(2)]
    for part in ("shuffle=true", "mode=random-resized-crop", "flip=random-horizontal",
                 "num-epochs=-1", "seed=1"):
        assert part in line
    assert "drop-last" not in line and "scale-min" not in line   # the defaults
    other = spdlgst.ImageLoader.launch_line_for(kinds_dataset, recipe="train",
                                                scale=(0.25, 1), ratio=(0.5, 2))
    assert "scale-min=0.25 scale-max=1.0 ratio-min=0.5 ratio-max=2.0" in other
    orders = [[i for b in e for i in b.indices] for e in epochs]
    assert sorted(orders[0]) == sorted(orders[1]) == list(range(20))
    assert orders[0] != orders[1] and orders[0] != list(range(20))
    assert [b.epoch for b in epochs[1]] == [1] * 4
    assert epochs[0][0].images.shape == (5, 3, 48, 48)


def test_manifest_and_awkward_paths(kinds_dataset, tmp_path):
    spaced = tmp_path / "my data \"set\""
    spaced.mkdir()
    lines = []
    for i, path in enumerate(sorted((kinds_dataset / "class1").glob("*.jpg"))[:3]):
        target = spaced / f"image {i}.jpg"
        target.write_bytes(path.read_bytes())
        lines.append(f"{target.name}\t{i + 5}\n")
    manifest = spaced / "list.tsv"
    manifest.write_text("".join(lines))
    with spdlgst.ImageLoader(str(manifest), batch_size=3, size=32) as loader:
        (batch,) = list(loader)
    assert batch.labels.tolist() == [5, 6, 7]


def test_float_output_is_asked_of_spdlbatch(kinds_dataset):
    kw = dict(batch_size=4, dtype=torch.bfloat16, mean="imagenet", std=(0.5,))
    line = spdlgst.ImageLoader.launch_line_for(kinds_dataset, **kw)
    if Gst.ElementFactory.make("spdlbatch").find_property("dtype") is None:
        # an spdlbatch without normalization says so when the pipeline is built
        with pytest.raises(spdlgst.LoaderError, match='no property "dtype"'):
            spdlgst.ImageLoader(kinds_dataset, **kw)
    assert 'dtype=bfloat16 mean="<0.485,0.456,0.406>" std="<0.5>"' in line
    for dtype in (np.float16, np.dtype("float16"), torch.float16, "float16"):
        assert "dtype=float16 " in spdlgst.ImageLoader.launch_line_for(
            kinds_dataset, dtype=dtype, mean=0.5, std=1)


def test_cuda_device(kinds_dataset):
    if Gst.ElementFactory.find("spdlcudaupload") is None:
        with pytest.raises(spdlgst.LoaderError, match="spdlcudaupload"):
            spdlgst.ImageLoader(kinds_dataset, device="cuda:0")
        return
    loader = spdlgst.ImageLoader(kinds_dataset, device="cuda:1", batch_size=4)
    assert "spdlbatch batch-size=4 layout=nchw ! " \
           "spdlcudaupload cuda-device-id=1 ! spdlappsink name=sink" in loader.launch_line
    loader.close()
    if torch.cuda.is_available():
        return          # tests/python/test_cuda.py checks the tensors
    with spdlgst.ImageLoader(kinds_dataset, device="cuda", batch_size=4) as loader:
        with pytest.raises(spdlgst.LoaderError, match="spdlcudaupload.*CUDA"):
            next(iter(loader))


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    (root / "a").mkdir()
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(root / "a" / "0.jpg")
    return root


BAD = [
    (dict(location=42), TypeError, "location"),
    (dict(location="/no/such/folder"), ValueError, "location"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(batch_size=2.0), TypeError, "batch_size"),
    (dict(batch_size=True), TypeError, "batch_size"),
    (dict(recipe="test"), ValueError, "recipe"),
    (dict(size=0), ValueError, "size"),
    (dict(size=(224, 224, 3)), ValueError, "size"),
    (dict(size="224"), TypeError, "size"),
    (dict(resize=-1), ValueError, "resize"),
    (dict(recipe="train", resize=256), ValueError, "resize"),
    (dict(recipe="train", scale=(0.5, 0.1)), ValueError, "scale"),
    (dict(recipe="train", ratio=1.0), TypeError, "ratio"),
    (dict(shuffle="yes"), TypeError, "shuffle"),
    (dict(flip=1), TypeError, "flip"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(epochs=0), ValueError, "epochs"),
    (dict(start_epoch=-2), ValueError, "start_epoch"),
    (dict(drop_last="no"), TypeError, "drop_last"),
    (dict(threads=0), ValueError, "threads"),
    (dict(dtype="int32"), ValueError, "dtype"),
    (dict(dtype="float32", mean=(0.5, 0.5)), ValueError, "mean"),
    (dict(dtype="float32", mean=("a",)), TypeError, "mean"),
    (dict(dtype="float32", std=float("nan")), ValueError, "std"),
    (dict(dtype="float32", std=0.0), ValueError, "std"),
    (dict(dtype="float32", std="cifar"), ValueError, "std"),
    (dict(mean=0.5), ValueError, "mean"),                  # uint8 output
    (dict(dtype="bfloat16", output="numpy"), ValueError, "bfloat16"),
    (dict(device="gpu"), ValueError, "device"),
    (dict(device="cuda:0", output="numpy"), ValueError, "device"),
    (dict(output="jax"), ValueError, "output"),
    (dict(exact="no"), TypeError, "exact"),
    (dict(exact=0), TypeError, "exact"),
    (dict(log_limit=-1), ValueError, "log_limit"),
]


@pytest.mark.parametrize("kwargs,error,name", BAD, ids=[f"{b[2]}-{i}" for i, b in enumerate(BAD)])
def test_bad_arguments_are_named_before_any_pipeline(tiny_dataset, monkeypatch,
                                                     kwargs, error, name):
    def no_pipeline(*a):
        raise AssertionError("a pipeline was built")

    monkeypatch.setattr(Gst, "parse_launch", no_pipeline)
    kwargs = dict(kwargs)
    location = kwargs.pop("location", tiny_dataset)
    with pytest.raises(error, match=name):
        spdlgst.ImageLoader(location, **kwargs)


def test_reprs_and_help(kinds_dataset):
    with spdlgst.ImageLoader(kinds_dataset, batch_size=4, size=32) as loader:
        assert repr(loader).startswith(f"ImageLoader({str(kinds_dataset)!r}, batch_size=4, "
                                       "recipe='val', size=(32, 32)")
        batch = next(iter(loader))
        assert repr(batch) == ("Batch(images=torch.uint8[4, 3, 32, 32], "
                               "labels=torch.int64[4], epoch=0, indices=[0, 1, 2, 3])")
    plain = spdlgst.Loader(loader.launch_line, output="numpy")
    assert "numpy, not started, 0 batches: 'spdlsrc location=" in repr(plain)
    plain.close()
    text = pydoc.render_doc(spdlgst.ImageLoader)
    for word in ("recipe", "RandomResizedCrop", "launch_line", "ValueError"):
        assert word in text
    assert "tuple" in pydoc.render_doc(spdlgst.Batch)
    assert spdlgst.ImageLoader.__init__.__annotations__["batch_size"] in (int, "int")


def _folder(root, ext, per_class=5, size=(40, 30)):
    for cls in ("a", "b"):
        (root / cls).mkdir(parents=True)
        for i in range(per_class):
            Image.new("RGB", size, (i * 40, 80, 120)).save(root / cls / f"{i}{ext}")
    return root


def test_undecodable_dataset_is_an_error(tmp_path):
    # PPMs are listed (as ImageFolder lists them) but not decoded: with
    # unbounded epochs (the default) the loop used to spin forever, then
    # to give empty epochs until 16 samples had been skipped. One rank
    # that skipped a whole epoch, having decoded nothing, fails at its end:
    # the first loop raises, never ends empty
    root = _folder(tmp_path / "ppms", ".ppm")
    with spdlgst.ImageLoader(root, batch_size=4, size=16, log_limit=0) as loader:
        batches = []
        with pytest.raises(spdlgst.LoaderError,
                           match=r"No sample could be decoded: all 10 up to "
                                 r"the end of epoch 0 were skipped "
                                 r"\(unsupported-format: 10\)"):
            for batch in loader:
                batches.append(batch)
        assert batches == []


def test_partly_undecodable_dataset_goes_on(tmp_path):
    # one decodable image among undecodable ones: its epochs go on, the
    # rest skipped and counted
    root = _folder(tmp_path / "ppms", ".ppm")
    Image.new("RGB", (40, 30), (1, 2, 3)).save(root / "a" / "ok.png")
    with spdlgst.ImageLoader(root, batch_size=4, size=16, epochs=3,
                             log_limit=0, output="numpy") as loader:
        per_epoch = [sum(len(b.labels) for b in loader) for _ in range(3)]
    assert per_epoch == [1, 1, 1]


def _settled(count, within_s=5.0, still_s=0.3):
    """COUNT() once it stopped changing for STILL_S, or None."""
    end = time.monotonic() + within_s
    last = count()
    while time.monotonic() < end:
        time.sleep(still_s)
        now = count()
        if now == last:
            return now
        last = now
    return None


def test_epochs_without_batches_stay_bounded(tmp_path):
    # drop_last with fewer samples than a batch: every epoch is empty, and
    # the pipeline must not run epochs ahead of the loop without bound
    root = _folder(tmp_path / "small", ".jpg")
    with spdlgst.ImageLoader(root, batch_size=64, size=16, drop_last=True,
                             output="numpy", threads=1) as loader:
        assert len(loader) == 0
        for _ in range(3):
            assert sum(1 for _ in loader) == 0
        read = _settled(lambda: next(
            v["items-out"] for k, v in loader.stats().items()
            if k.startswith("spdlsrc")))
    # the pipeline waits for the loop (it ran 1,000 epochs a second ahead):
    # 3 epochs looped, 4 queued, one waiting, and the samples in flight
    assert read is not None, "spdlsrc kept reading"
    assert read < (3 + 5) * 10 + 100, read


def test_set_epoch_as_with_distributed_sampler(kinds_dataset):
    """sampler.set_epoch(e) before each loop: the usual calls change
    nothing; another epoch is that epoch's order."""
    kw = dict(recipe="train", batch_size=4, size=8, output="numpy", epochs=4)
    with spdlgst.ImageLoader(kinds_dataset, **kw) as loader:
        plain = [[tuple(b.indices) for b in loader] for _ in range(3)]
    with spdlgst.ImageLoader(kinds_dataset, **kw) as loader:
        got = []
        for epoch in range(3):
            loader.set_epoch(epoch)
            got.append([tuple(b.indices) for b in loader])
        assert got == plain
        loader.set_epoch(1)                       # back: epoch 1 again
        assert [tuple(b.indices) for b in loader] == plain[1]
        assert {b.epoch for b in loader} == {2}   # then on from there
    with spdlgst.ImageLoader(kinds_dataset, **kw) as loader:
        loader.set_epoch(2)                       # before the first loop
        assert [tuple(b.indices) for b in loader] == plain[2]
        loader.set_epoch(9)                       # past the last: nothing
        assert list(loader) == []
    with pytest.raises(ValueError, match="epoch"):
        spdlgst.ImageLoader(kinds_dataset, **kw).set_epoch(-1)


def test_layout_max_errors_and_remote_locations(kinds_dataset, tmp_path):
    kw = dict(batch_size=4, size=8, output="numpy", epochs=1)
    with spdlgst.ImageLoader(kinds_dataset, **kw) as loader:
        nchw = next(iter(loader)).images
    with spdlgst.ImageLoader(kinds_dataset, layout="nhwc", **kw) as loader:
        nhwc = next(iter(loader)).images
    assert nchw.shape[1:] == (3, 8, 8) and nhwc.shape[1:] == (8, 8, 3)
    assert (np.transpose(nhwc, (0, 3, 1, 2)) == nchw).all()
    line = spdlgst.ImageLoader.launch_line_for(kinds_dataset, max_errors=3,
                                               **kw)
    assert line.count("max-errors=3") == 2      # spdlsrc and spdldecode
    # every location spdlsrc takes: shards, URLs (not listed here)
    for location in ("s3://bucket/train-{000..009}.tar",
                     "https://host/data/train-{0..9}.tar", "s3://bucket/prefix/",
                     str(tmp_path / "train-{000..009}.tar")):
        line = spdlgst.ImageLoader.launch_line_for(location, shuffle_buffer=500,
                                                   **kw)
        assert "shuffle-buffer=500" in line and "train" in line or "prefix" in line
    with pytest.raises(ValueError, match="folder"):
        spdlgst.ImageLoader.launch_line_for(str(tmp_path / "no" / "t-{0..1}.tar"))
    with pytest.raises(ValueError, match="layout"):
        spdlgst.ImageLoader.launch_line_for(kinds_dataset, layout="chw")


def test_classes_and_samples_as_imagefolder(tmp_path):
    """classes, class_to_idx and samples[index] equal torchvision's
    ImageFolder's, and a batch's indices map back to paths and labels."""
    rng = np.random.default_rng(3)
    for cls, n in (("zebra", 3), ("ant", 2), (".hidden", 1), ("Bee", 2)):
        (tmp_path / cls).mkdir()
        for i in range(n):
            Image.fromarray(rng.integers(0, 256, (12, 10, 3), dtype=np.uint8)).save(
                tmp_path / cls / f"{i}.jpg")
    ref = ImageFolder(str(tmp_path), allow_empty=True) if "allow_empty" in \
        ImageFolder.__init__.__code__.co_varnames else ImageFolder(str(tmp_path))
    with spdlgst.ImageLoader(tmp_path, batch_size=3, size=8, output="numpy",
                             epochs=1) as loader:
        assert loader.classes == ref.classes
        assert loader.class_to_idx == ref.class_to_idx
        samples = loader.samples
        assert len(samples) == len(ref.samples)
        assert list(samples) == [(p, c) for p, c in ref.samples]
        assert samples[-1] == tuple(ref.samples[-1])
        with pytest.raises(IndexError):
            samples[len(ref.samples)]
        for batch in loader:
            for i, label in zip(batch.indices, batch.labels):
                assert samples[i][1] == label



def test_unreadable_class_folder_is_an_error(tmp_path):
    """A class folder that cannot be read is an error naming it, not a
    class without samples (run as an unprivileged user: root reads all)."""
    import shutil
    import subprocess
    import tempfile
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run as another user")
    top = tempfile.mkdtemp(prefix="spdl-unreadable-")
    try:
        os.chmod(top, 0o1777)
        rng = np.random.default_rng(0)
        for cls in ("a", "b"):
            os.makedirs(os.path.join(top, "ds", cls))
            Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)).save(
                os.path.join(top, "ds", cls, "0.jpg"))
        os.chmod(os.path.join(top, "ds"), 0o755)
        os.chmod(os.path.join(top, "ds", "a"), 0o755)
        os.chmod(os.path.join(top, "ds", "b"), 0)
        env = dict(os.environ, GST_REGISTRY=os.path.join(top, "registry.bin"))
        res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                              "--clear-groups", "gst-launch-1.0", "spdlsrc",
                              "location=" + os.path.join(top, "ds"), "!", "fakesink"],
                             env=env, capture_output=True, text=True, timeout=60)
        out = res.stdout + res.stderr
        assert res.returncode != 0
        assert 'Class folder "%s" cannot be read: Permission denied' % \
            os.path.join(top, "ds", "b") in out, out
    finally:
        shutil.rmtree(top)


def test_set_epoch_back_into_a_finished_run(kinds_dataset, caplog):
    """After the last epoch, set_epoch to one of the run goes on there; set
    past the end then back, the same; the first empty loop says why."""
    kw = dict(recipe="train", batch_size=4, size=8, output="numpy", epochs=2)
    with spdlgst.ImageLoader(kinds_dataset, **kw) as loader:
        first = [tuple(b.indices) for b in loader]
        [b for b in loader]
        with caplog.at_level(logging.WARNING, logger="spdlgst"):
            assert list(loader) == []
        assert any("no more batches" in r.getMessage() for r in caplog.records)
        loader.set_epoch(0)
        assert [tuple(b.indices) for b in loader] == first
    with spdlgst.ImageLoader(kinds_dataset, **kw) as loader:
        loader.set_epoch(7)
        loader.set_epoch(0)
        assert [tuple(b.indices) for b in loader] == first


def test_src_properties_pass_through(kinds_dataset):
    line = spdlgst.ImageLoader.launch_line_for(
        kinds_dataset, src_properties={"prefetch": 2, "drop-uneven": True,
                                       "shard-cache": ""})
    assert 'prefetch=2' in line and "drop-uneven=true" in line
    assert 'shard-cache=""' in line
    with pytest.raises(spdlgst.LoaderError, match="prefetch"):
        spdlgst.ImageLoader(kinds_dataset, src_properties={"prefetch": -4})
    with pytest.raises(ValueError, match="seed"):
        spdlgst.ImageLoader(kinds_dataset, src_properties={"seed": 3})
    with pytest.raises(TypeError):
        spdlgst.ImageLoader(kinds_dataset, src_properties=["prefetch"])
