"""The loaders as training code uses them: copies, second iterators,
rank-0 loaders under torchrun, user augmentation and normalize(), the
DataLoader arguments typed from habit."""
import copy
import inspect
import logging
import os
import pickle
import re
import warnings

import numpy as np
import pytest
import torch

import spdlgst
from test_checkpoint import make_folder


@pytest.fixture
def folder(tmp_path):
    return make_folder(tmp_path / "ds", 10)      # 3 batches of 4


def loader_of(root, **kwargs):
    kwargs.setdefault("size", 16)
    kwargs.setdefault("batch_size", 4)
    return spdlgst.ImageLoader(root, threads=1, **kwargs)


def test_copies_and_pickles_are_refused_with_a_hint(folder):
    with loader_of(folder) as loader:
        for make in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(TypeError, match=r"^this ImageLoader cannot be "
                               r"copied or pickled.*in each process.*"
                               r"train_dataloader\(\)"):
                make(loader)
        # the loader is whole: its epoch comes complete
        assert sum(len(b.indices) for b in loader) == 10
        assert sum(len(b.indices) for b in loader) == 10


def test_a_second_iterator_ends_the_first_and_its_next_use_raises(folder):
    with loader_of(folder, epochs=None) as loader:
        with pytest.raises(RuntimeError, match=r"ended by a newer loop.*\(zip\("
                           r"loader, loader\)"):
            list(zip(loader, loader))
        first = iter(loader)
        next(first)
        second = iter(loader)
        with pytest.raises(RuntimeError, match="ended by a newer loop"):
            next(first)
        assert sum(len(b.indices) for b in second) == 10
        kept = iter(loader)
        next(kept)
        loader.set_epoch(7)
        with pytest.raises(RuntimeError, match=r"set_epoch\(7\)"):
            next(kept)
        assert {b.epoch for b in loader} == {7}
        kept = iter(loader)
        next(kept)
    # closing ends a loop quietly: the caller asked for it
    assert list(kept) == []


def test_ranks_argument_and_the_environment(folder, monkeypatch, caplog):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    caplog.set_level(logging.INFO, logger="spdlgst")
    with loader_of(folder) as loader:             # ranks="auto"
        assert len(loader) == 2
        assert sum(len(b.indices) for b in loader) == 5
    said = [r.getMessage() for r in caplog.records
            if "from the environment" in r.getMessage()]
    assert said == [said[0]] and "rank 0 of 2" in said[0] and \
        "ranks=None" in said[0]
    caplog.clear()
    # an evaluation loader built on rank 0 only reads everything
    with loader_of(folder, ranks=None) as loader:
        assert "num-shards=1" in loader.launch_line
        assert len(loader) == 3
        assert sum(len(b.indices) for b in loader) == 10
    assert not [r for r in caplog.records
                if "from the environment" in r.getMessage()]
    with loader_of(folder, ranks=(1, 3)) as loader:
        src = loader._find("spdlsrc")
        assert (src.get_property("shard-index"),
                src.get_property("num-shards")) == (1, 3)
        assert sum(len(b.indices) for b in loader) == 4
    for cls in (spdlgst.VideoLoader, spdlgst.AudioLoader):
        line = cls.launch_line_for(str(folder), ranks=None)
        assert "shard-index=0 num-shards=1" in line.split(" ! ")[0]
    for bad, error in (((2, 2), ValueError), ("all", ValueError),
                       ((0, 0), ValueError), ((0.5, 2), TypeError)):
        with pytest.raises(error, match="ranks"):
            loader_of(folder, ranks=bad)
    # the error quotes what was typed, not the (0, 1) it stands for
    with pytest.raises(ValueError, match=r"\['num-shards'\] and ranks=None:"):
        loader_of(folder, ranks=None, src_properties={"num-shards": 1})
    with pytest.raises(ValueError, match=r"and ranks=\[1, 2\]:"):
        loader_of(folder, ranks=[1, 2], src_properties={"shard-index": 1})


def test_a_launch_line_with_one_shard_reads_everything_on_any_rank(
        folder, monkeypatch, caplog):
    """num-shards=1 in a launch line (the docs' opt-out for Loader, and the
    INFO line's) on rank 1 of 2: all of the data, not an error for a
    shard-index taken from RANK."""
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    caplog.set_level(logging.INFO, logger="spdlgst")
    line = spdlgst.ImageLoader.launch_line_for(str(folder), size=16,
                                               batch_size=4)
    line = line.replace("spdlsrc ", "spdlsrc num-shards=1 ", 1)
    with spdlgst.Loader(line, output="numpy") as loader:
        assert sum(len(b.indices) for b in loader) == 10
    assert not [r for r in caplog.records
                if "from the environment" in r.getMessage()]

@pytest.mark.parametrize("output", ["torch", "numpy"])
def test_batches_take_in_place_augmentation(folder, output):
    """uint8 batches are the pipeline's memory (no copy), writable and
    contiguous, as the custom augmentation pattern needs: an in-place
    augmentation on the CPU (here 255 - x) changes that batch only, not
    the batches after it nor the next epoch's, while the batch is kept.
    numpy's arrays say they are writable (torch's tensors are made from
    them; torch warns, once a process, on a read-only one)."""
    kept = []
    with loader_of(folder, output=output) as loader, \
            warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            for batch in loader:
                images = batch[0]
                if output == "torch":
                    assert images.is_contiguous() and \
                        images.dtype == torch.uint8
                    images.bitwise_not_()
                else:
                    assert images.flags.writeable and \
                        images.flags.c_contiguous
                    np.bitwise_not(images, out=images)
                kept.append(images)
        with loader_of(folder, output=output) as loader:
            reference = [np.array(images) for _ in range(2)
                         for images, _ in loader]
        assert len(kept) == len(reference) == 6
        for got, ref in zip(kept, reference):
            assert np.array_equal(np.asarray(got), 255 - ref)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_normalize_equals_the_loaders_own(folder, layout, dtype):
    """uint8 batches, augmented (here: not), then spdlgst.normalize: the
    values the loader's own dtype/mean/std give, bit for bit."""
    mean, std = (0.5, 0.4, 0.3), "imagenet"
    with loader_of(folder, layout=layout) as plain, \
            loader_of(folder, layout=layout, dtype=dtype, mean=mean,
                      std=std) as fused:
        pairs = list(zip(plain, fused))
    assert len(pairs) == 3
    for (u8, _), (ref, _) in pairs:
        got = spdlgst.normalize(u8, mean, std, layout=layout.upper(),
                                dtype=dtype)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        assert got.is_contiguous()
        assert torch.equal(got, ref)
        if dtype != "bfloat16":         # numpy arrays the same
            arr = spdlgst.normalize(u8.numpy(), mean, std, layout=layout,
                                    dtype=dtype)
            assert np.array_equal(arr, ref.numpy())


def test_normalize_layouts_and_arguments():
    rng = np.random.default_rng(0)
    clips = torch.from_numpy(rng.integers(0, 256, (2, 4, 3, 5, 6), np.uint8))
    mean, std = (0.1, 0.2, 0.3), (0.5, 0.25, 0.125)
    expected = (clips.double() / 255 - torch.tensor(mean).double().view(3, 1, 1)) \
        / torch.tensor(std).double().view(3, 1, 1)
    for layout, perm in (("TCHW", (0, 1, 2, 3, 4)), ("CTHW", (0, 2, 1, 3, 4)),
                         ("THWC", (0, 1, 3, 4, 2))):
        got = spdlgst.normalize(clips.permute(perm).contiguous(), mean, std,
                                layout=layout)
        assert torch.allclose(got.double(), expected.permute(perm), atol=1e-5)
    # one image, a channel-first layout without the batch dimension
    one = spdlgst.normalize(clips[0, 0], 0.5, 0.5, layout="CHW")
    assert torch.allclose(one.double(), (clips[0, 0].double() / 255 - 0.5) / 0.5,
                          atol=1e-6)
    out = torch.empty(2, 4, 3, 5, 6)
    assert spdlgst.normalize(clips, mean, std, layout="TCHW", out=out) is out
    with pytest.raises(ValueError, match="mean and std go together"):
        spdlgst.normalize(clips, mean, None, layout="TCHW")
    # float images in [0, 1] (after a float augmentation): (x - mean) / std
    unit = clips.float() / 255
    got = spdlgst.normalize(unit, mean, std, layout="TCHW")
    assert torch.allclose(got.double(), expected, atol=1e-5)
    with pytest.raises(TypeError, match="must be uint8"):
        spdlgst.normalize(clips.int(), layout="TCHW")
    with pytest.raises(ValueError, match="3 values for images of 5 channels"):
        spdlgst.normalize(clips, layout="THCW")


def test_normalize_makes_its_constants_once(monkeypatch):
    """The per-channel constants are made on the first call, not on each:
    on a CUDA device torch.tensor() is a copy from the host that waits
    for the stream, per batch."""
    rng = np.random.default_rng(1)
    images = torch.from_numpy(rng.integers(0, 256, (2, 3, 4, 4), np.uint8))
    made = []
    real = torch.tensor

    def counting(*args, **kwargs):
        made.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "tensor", counting)
    mean, std = (0.11, 0.22, 0.33), (0.3, 0.2, 0.1)
    first = spdlgst.normalize(images, mean, std)
    assert len(made) <= 2
    made.clear()
    for layout, batch in (("NCHW", images), ("NHWC", images.permute(0, 2, 3, 1)),
                          ("CHW", images[0])):
        got = spdlgst.normalize(batch.contiguous(), mean, std, layout=layout,
                                dtype="float16")
        assert got.dtype == torch.float16
    again = spdlgst.normalize(images, mean, std)
    assert made == []
    assert torch.equal(again, first)
    # other values, other constants
    other = spdlgst.normalize(images, 0.45, 0.55)
    assert len(made) == 2
    assert torch.allclose(other, (images.float() / 255 - 0.45) / 0.55)


def test_normalize_refuses_float_batches_of_0_to_255():
    """x.float() of a uint8 batch is not in [0, 1]: an error saying what to
    do, not values up to 1100."""
    rng = np.random.default_rng(2)
    u8 = rng.integers(0, 256, (2, 3, 4, 4), np.uint8)
    u8[1, 2, 3, 0] = 255
    for images in (torch.from_numpy(u8).float(), u8.astype(np.float32),
                   torch.from_numpy(u8).half()):
        with pytest.raises(ValueError, match=r"in \[0, 1\].*holds 255.*"
                           r"divide by 255 first"):
            spdlgst.normalize(images)
    # a little over 1 (an augmentation's overshoot) is taken
    images = torch.full((1, 3, 2, 2), 1.2)
    got = spdlgst.normalize(images, 0.5, 0.5)
    assert torch.allclose(got, torch.full_like(got, 1.4))
    assert spdlgst.normalize(torch.empty(0, 3, 2, 2)).shape == (0, 3, 2, 2)


def test_normalize_keeps_the_gradient():
    """An input that requires grad (a learned augmentation before it):
    the gradient goes through, not torch's out= error."""
    torch.manual_seed(0)
    mean, std = (0.1, 0.2, 0.3), (0.5, 0.25, 0.125)
    for dtype in ("float32", "float16"):
        images = torch.rand(2, 3, 4, 4, requires_grad=True)
        got = spdlgst.normalize(images, mean, std, dtype=dtype)
        assert got.requires_grad and got.dtype == getattr(torch, dtype)
        with torch.no_grad():
            plain = spdlgst.normalize(images, mean, std, dtype=dtype)
        assert torch.equal(got.detach(), plain)
        got.float().sum().backward()
        expected = (1 / torch.tensor(std)).view(1, 3, 1, 1).expand(2, 3, 4, 4)
        assert torch.allclose(images.grad, expected)
    images = torch.rand(2, 3, 4, 4, requires_grad=True)
    out = torch.empty(2, 3, 4, 4)
    assert spdlgst.normalize(images, out=out) is out
    assert out.requires_grad


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_normalize_on_the_gpu_equals_the_cpu():
    rng = np.random.default_rng(0)
    images = torch.from_numpy(rng.integers(0, 256, (4, 3, 8, 8), np.uint8))
    cpu = spdlgst.normalize(images)
    gpu = spdlgst.normalize(images.cuda())
    assert gpu.device.type == "cuda"
    assert torch.equal(gpu.cpu(), cpu)


@pytest.mark.parametrize("name,hint", [
    ("num_workers", "threads="), ("pin_memory", "device='cuda:N'"),
    ("collate_fn", "spdlbatch collates"), ("worker_init_fn", "seed="),
    ("prefetch_factor", "max-buffers"), ("persistent_workers", "stays up"),
    ("sampler", "set_epoch()"), ("generator", "seed="),
    ("transform", "spdlgst.normalize"), ("timeout", "http-timeout")])
def test_dataloader_arguments_say_what_to_use(folder, name, hint):
    for make in (lambda: loader_of(folder, **{name: 1}),
                 lambda: spdlgst.Loader("fakesrc ! spdlappsink", **{name: 1})):
        with pytest.raises(TypeError, match=f"takes no {name} .*") as e:
            make()
        assert hint in str(e.value)


def test_a_subclass_takes_a_dataloader_name_for_itself(folder):
    """A subclass whose own __init__ takes transform= (augmentation in its
    __iter__) gets it; names it does not take are still explained."""
    class Augmented(spdlgst.ImageLoader):
        def __init__(self, location, *, transform=None, **kwargs):
            super().__init__(location, **kwargs)
            self.transform = transform

        def __iter__(self):
            for images, labels in super().__iter__():
                yield self.transform(images), labels

    with Augmented(str(folder), transform=lambda x: x[:, :1], batch_size=2,
                   size=8) as loader:
        images, _ = next(iter(loader))
        assert tuple(images.shape) == (2, 1, 8, 8)
    with pytest.raises(TypeError, match="takes no num_workers .*threads="):
        Augmented(str(folder), num_workers=2)

def test_recipe_arguments_as_torchvision_takes_them(folder):
    line = spdlgst.ImageLoader.launch_line_for
    # size=[64] as torchvision's Resize/CenterCrop take it; layout in any case
    assert line(str(folder), size=[64]) == line(str(folder), size=64)
    assert line(str(folder), layout="NHWC") == line(str(folder), layout="nhwc")
    assert "layout=nchw" in line(str(folder), layout="NCHW")
    # mean and std together, as Normalize(mean, std)
    for kwargs in (dict(mean="imagenet"), dict(std=(0.5, 0.5, 0.5))):
        with pytest.raises(ValueError, match="mean and std go together"):
            line(str(folder), dtype="float32", **kwargs)


def test_repr_skipped_and_stats_units(folder):
    loader = loader_of(folder)
    assert repr(loader).endswith("): not started, 0 batches")
    assert repr(loader).startswith(f"ImageLoader({str(folder)!r}, ")
    next(iter(loader))
    assert repr(loader).endswith("): running, 1 batches")
    # an image folder: image decoding and local reads, no video, audio,
    # shard or HTTP reasons
    assert set(loader.skipped()) == {
        "empty", "not-jpeg", "truncated", "corrupt", "too-large",
        "unsupported", "unsupported-format", "unreadable", "not-a-file",
        "recovered", "bad-field"}
    stats = loader.stats()
    named = loader.stats(units=True)
    assert named["loader"] == stats["loader"]
    decoder = loader._find("spdldecode").get_name()
    dec = named[decoder]
    assert dec["busy-ns"] >= stats[decoder]["busy"] > 0
    assert {"busy-ns", "mean-ns", "p99-ns", "elapsed-ns", "cpu-ns"} <= set(dec)
    assert "busy" not in dec and "items-in" in dec
    assert "wait-total-ns" in named["sink"]
    loader.close()
    assert repr(loader).endswith("): closed, 1 batches")
    video = spdlgst.VideoLoader(folder, extensions=["jpg"])
    assert repr(video).endswith("): not started, 0 batches")
    video.close()


def test_loaders_are_typed():
    import inspect
    import os
    assert os.path.exists(os.path.join(os.path.dirname(spdlgst.__file__),
                                       "py.typed"))
    params = inspect.signature(spdlgst.ImageLoader.__init__).parameters
    for name in ("dtype", "device"):
        assert "object" not in str(params[name].annotation)


def _table_arguments(markdown, heading):
    """The argument names in the first table under @heading."""
    section = markdown.split(f"\n## {heading}", 1)[1].split("\n## ", 1)[0]
    names = set()
    for line in section.splitlines():
        if line.startswith("| `") and "|" in line[1:]:
            names.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return names


@pytest.mark.parametrize("cls", [spdlgst.ImageLoader, spdlgst.VideoLoader,
                                 spdlgst.AudioLoader])
def test_every_argument_is_documented_once(cls):
    """Each argument of a recipe loader is in its table in
    docs/plugins/spdlgst.md and in its docstring, there once."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    with open(os.path.join(root, "docs", "plugins", "spdlgst.md")) as f:
        markdown = f.read()
    arguments = [p for p in inspect.signature(cls.__init__).parameters
                 if p != "self"]
    table = _table_arguments(markdown, f"`{cls.__name__}(location")
    assert set(arguments) - table == set()
    doc = cls.__doc__
    assert [n for n in arguments if f"``{n}``" not in doc] == []
    listed = re.findall(r"^\s*- ``([a-z_]+)``", doc, re.M)
    assert len(listed) == len(set(listed)), listed


def test_recipe_reprs_end_with_the_state_and_mask_secrets(folder):
    secrets = {"s3-secret-key": "TOPSECRETvalue",
               "s3-access-key": "AKIAEXAMPLEKEY9876"}
    for cls in (spdlgst.VideoLoader, spdlgst.AudioLoader):
        line = cls.launch_line_for(str(folder), src_properties=secrets)
        assert "TOPSECRET" not in line and "AKIAEXAMPLE" not in line
    with loader_of(folder, src_properties=secrets) as loader:
        for text in (repr(loader), loader.launch_line):
            assert "TOPSECRET" not in text and "AKIAEXAMPLE" not in text
        text = repr(loader)
        assert text.endswith(": not started, 0 batches")
        next(iter(loader))
        assert repr(loader).endswith(": running, 1 batches")
    assert repr(loader).endswith(": closed, 1 batches")


def test_normalize_constants_made_in_inference_mode_serve_training():
    """Made first in a validation pass (Lightning's sanity check runs
    under torch.inference_mode), the cached constants still serve an input
    that requires grad: an inference tensor could not be saved for
    backward."""
    mean, std = (0.21, 0.31, 0.41), (0.26, 0.27, 0.28)
    with torch.inference_mode():
        spdlgst.normalize(torch.rand(1, 3, 2, 2), mean, std)
    images = torch.rand(1, 3, 2, 2, requires_grad=True)
    spdlgst.normalize(images, mean, std).sum().backward()
    expected = (1 / torch.tensor(std)).view(1, 3, 1, 1).expand(1, 3, 2, 2)
    assert torch.allclose(images.grad, expected)
