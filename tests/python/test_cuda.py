"""spdlcudaupload from Python.

Without a GPU, host memory stands in for the device (GST_SPDL_CUDA_EMULATE,
test-only): the element's normalization is compared with torchvision's
Normalize(ToTensor()) there. With a GPU and a CUDA build of torch, the device
batches are checked as torch tensors on cuda:0: zero-copy, equal to the CPU
batches, ready on torch's stream without a host sync, and safe to release
while kernels still read them.
"""
import numpy as np
import pytest
import torch

import spdlgst
import spdlgst.cuda
from gi.repository import Gst

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
PROPS = 'mean="<0.485,0.456,0.406>" std="<0.229,0.224,0.225>"'


def cuda_plugin():
    return Gst.ElementFactory.find("spdlcudaupload") is not None


def cuda_device():
    return cuda_plugin() and torch.cuda.is_available()


needs_plugin = pytest.mark.skipif(not cuda_plugin(), reason="the spdlcuda plugin is not built")
needs_gpu = pytest.mark.skipif(
    not cuda_device(),
    reason="no CUDA device (or the spdlcuda plugin / a CUDA build of torch is missing)")


def torchvision_reference(images):
    """Normalize(MEAN, STD)(ToTensor()(PIL image)) per image: N x C x H x W."""
    from PIL import Image
    import torchvision.transforms as T

    tf = T.Compose([T.ToTensor(), T.Normalize(MEAN, STD)])
    return torch.stack([tf(Image.fromarray(img)) for img in images])


def run_upload(props, images):
    """appsrc (one NHWC uint8 batch + labels) ! spdlcudaupload ! appsink."""
    n, h, w, c = images.shape
    caps = (f'other/tensors,format=static,num_tensors=2,dimensions="{c}:{w}:{h}:{n},{n}",'
            'types="uint8,int64",framerate=0/1')
    pipeline = Gst.parse_launch(f"appsrc name=src caps=\"{caps}\" ! spdlcudaupload {props} ! "
                                "appsink name=sink sync=false")
    src, sink = pipeline.get_by_name("src"), pipeline.get_by_name("sink")
    buf = Gst.Buffer.new_wrapped(images.tobytes())
    labels = Gst.Buffer.new_wrapped(np.arange(n, dtype=np.int64).tobytes())
    buf.append_memory(labels.get_memory(0))
    pipeline.set_state(Gst.State.PLAYING)
    src.emit("push-buffer", buf)
    src.emit("end-of-stream")
    sample = sink.emit("try-pull-sample", 10 * Gst.SECOND)
    pipeline.set_state(Gst.State.NULL)
    assert sample is not None, "no batch came out"
    return sample


def mapped(sample, index, dtype):
    mem = sample.get_buffer().get_memory(index)
    ok, info = mem.map(Gst.MapFlags.READ)
    assert ok
    try:
        return np.frombuffer(info.data, dtype).copy()
    finally:
        mem.unmap(info)


@pytest.fixture
def emulated(monkeypatch):
    monkeypatch.setenv("GST_SPDL_CUDA_EMULATE", "1")


@needs_plugin
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_normalize_equals_torchvision(emulated, dtype):
    rng = np.random.default_rng(3)
    images = rng.integers(0, 256, (4, 24, 20, 3), dtype=np.uint8)
    # every uint8 value in every channel
    images[0, :, :, :] = np.arange(24 * 20 * 3).reshape(24, 20, 3) % 256
    sample = run_upload(f"dtype={dtype} layout=nchw {PROPS}", images)
    s = sample.get_caps().get_structure(0)
    assert s.get_value("types") == f"{dtype},int64"
    assert spdlgst.cuda.parse_tensors(sample.get_caps())[0] == ((4, 3, 24, 20), dtype)
    ref = torchvision_reference(images)
    if dtype == "float32":
        got = torch.from_numpy(mapped(sample, 0, np.float32).reshape(4, 3, 24, 20))
        assert torch.allclose(got, ref, rtol=1e-6, atol=0)
        assert torch.equal(got, ref)        # the same float32 steps
    else:
        bits = mapped(sample, 0, np.int16).reshape(4, 3, 24, 20)
        ref_bits = (ref.half() if dtype == "float16" else ref.bfloat16()).view(torch.int16)
        assert torch.equal(torch.from_numpy(bits), ref_bits)
    assert list(mapped(sample, 1, np.int64)) == [0, 1, 2, 3]


@needs_plugin
def test_nhwc_output_and_plain_scaling(emulated):
    """No mean/std: ToTensor's x / 255; layout nhwc keeps the input's."""
    images = np.random.default_rng(4).integers(0, 256, (2, 8, 6, 3), dtype=np.uint8)
    sample = run_upload("dtype=float32", images)
    got = mapped(sample, 0, np.float32).reshape(2, 8, 6, 3)
    assert np.array_equal(got, images.astype(np.float32) / np.float32(255))


class _FakeTorch:
    """What spdlgst.cuda uses of torch, over host memory (emulated device)."""

    bfloat16 = "bfloat16"

    class cuda:
        class _Stream:
            cuda_stream = 77

        @staticmethod
        def current_stream(device):
            return _FakeTorch.cuda._Stream()

    class Tensor:
        def __init__(self, array, holder):
            self.array, self.holder, self.dtype = array, holder, None

        def view(self, dtype):
            view = _FakeTorch.Tensor(self.array, self.holder)
            view.dtype = dtype
            return view

    @staticmethod
    def as_tensor(holder, device):
        import ctypes

        cai = holder.__cuda_array_interface__
        dtype = np.dtype(cai["typestr"])
        count = int(np.prod(cai["shape"]))
        raw = (ctypes.c_uint8 * (count * dtype.itemsize)).from_address(cai["data"][0])
        array = np.frombuffer(raw, dtype).reshape(cai["shape"]).copy()
        return _FakeTorch.Tensor(array, holder)


@needs_plugin
def test_device_tensors_wrap_the_batch(emulated, monkeypatch):
    """spdlgst.cuda over an emulated device: shapes, types (bfloat16 as a
    view of int16), the pointers' bytes, the array interface it hands on."""
    calls = []

    class FakeLib:
        def gst_spdl_cuda_stream_wait_event(self, *args):
            calls.append(("wait",) + args)
            return 0

    monkeypatch.setattr(spdlgst.cuda, "_plugin_library", FakeLib)
    images = np.random.default_rng(5).integers(0, 256, (4, 24, 20, 3), dtype=np.uint8)
    sample = run_upload(f"dtype=bfloat16 layout=nchw {PROPS}", images)
    tensors = spdlgst.cuda.device_tensors(sample, _FakeTorch)
    assert [t.dtype for t in tensors] == ["bfloat16", None]
    assert tensors[0].array.shape == (4, 3, 24, 20)
    assert np.array_equal(tensors[0].array.reshape(-1), mapped(sample, 0, np.int16))
    assert list(tensors[1].array) == [0, 1, 2, 3]
    cai = tensors[0].holder.__cuda_array_interface__
    assert cai["version"] == 3 and cai["typestr"] == "<i2" and cai["strides"] is None
    assert calls == []          # an emulated device has no events to wait on


@needs_gpu
def test_cuda_tensors_are_the_device_buffers(kinds_dataset):
    with spdlgst.Loader(
            f"spdlsrc location={kinds_dataset} ! spdldecode width=32 height=32 "
            "mode=center-crop ! spdlbatch batch-size=4 layout=nchw ! "
            "spdlcudaupload ! spdlappsink name=sink") as loader:
        cpu = spdlgst.Loader(
            f"spdlsrc location={kinds_dataset} ! spdldecode width=32 height=32 "
            "mode=center-crop ! spdlbatch batch-size=4 layout=nchw ! spdlappsink")
        for (images, labels), (ref_images, ref_labels) in zip(loader, cpu):
            assert images.is_cuda and labels.is_cuda
            assert torch.equal(images.cpu(), torch.from_numpy(ref_images))
            assert torch.equal(labels.cpu(), torch.from_numpy(ref_labels))
        cpu.close()
        batch = next(iter(spdlgst.Loader(
            f"spdlsrc location={kinds_dataset} ! spdldecode width=32 height=32 ! "
            "spdlbatch batch-size=4 ! spdlcudaupload ! spdlappsink")))
        meta = batch.sample.get_buffer().get_custom_meta("GstSpdlCudaMeta")
        pointers = list(meta.get_structure().get_value("pointers"))
        assert batch[0].data_ptr() == pointers[0]
        assert batch[1].data_ptr() == pointers[1]


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_cuda_normalized_equal_cpu_batches(kinds_dataset, dtype):
    line = (f"spdlsrc location={kinds_dataset} ! spdldecode width=32 height=32 "
            "mode=center-crop ! spdlbatch batch-size=4 ! ")
    with spdlgst.Loader(line + f"spdlcudaupload dtype={dtype} layout=nchw {PROPS} ! "
                        "spdlappsink") as gpu, \
            spdlgst.Loader(line + "spdlappsink") as cpu:
        n = 0
        for (images, _), (ref_images, _) in zip(gpu, cpu):
            assert images.dtype == getattr(torch, dtype)
            ref = torchvision_reference(ref_images)
            ref = ref.to(getattr(torch, dtype))
            assert torch.equal(images.cpu(), ref)
            n += 1
        assert n == 5


@needs_gpu
def test_ready_and_release_on_a_side_stream(kinds_dataset):
    """On a stream of its own, the training loop reads each batch after a
    long kernel and drops it at once: no host sync, and the element's next
    copies into the same two device batches wait for those reads."""
    line = (f"spdlsrc location={kinds_dataset} num-epochs=4 ! spdldecode width=64 "
            "height=64 mode=center-crop ! spdlbatch batch-size=2 layout=nchw ! ")
    side = torch.cuda.Stream()
    copies = []
    with torch.cuda.stream(side), spdlgst.Loader(
            line + "spdlcudaupload device-buffers=2 ! spdlappsink", output="torch") as loader:
        for _ in range(4):
            for images, _ in loader:
                torch.cuda._sleep(20_000_000)      # keep the stream busy
                copies.append(images.clone())
                del images
    torch.cuda.synchronize()
    with spdlgst.Loader(line + "spdlappsink") as cpu:
        refs = [torch.from_numpy(images) for _ in range(4) for images, _ in cpu]
    assert len(copies) == len(refs) == 40
    for got, ref in zip(copies, refs):
        assert torch.equal(got.cpu(), ref)


@needs_gpu
def test_current_device_unchanged(kinds_dataset):
    before = torch.cuda.current_device()
    with spdlgst.Loader(f"spdlsrc location={kinds_dataset} ! spdldecode width=32 "
                        "height=32 ! spdlbatch batch-size=4 ! spdlcudaupload "
                        "cuda-device-id=0 ! spdlappsink") as loader:
        for images, labels in loader:
            del images, labels
    assert torch.cuda.current_device() == before
