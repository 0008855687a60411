"""Device batches handed to PyTorch (needs a GPU and a CUDA build of torch)."""
import os

import pytest
import torch

import spdlgst
from gi.repository import Gst


def cuda_plugin():
    return Gst.ElementFactory.find("spdlcudaupload") is not None


needs_gpu = pytest.mark.skipif(
    not cuda_plugin() or not torch.cuda.is_available(),
    reason="no CUDA device (or the spdlcuda plugin / a CUDA build of torch is missing)")


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
