"""spdlbatch dtype/mean/std: torchvision's Normalize(mean, std)(ToTensor())."""
import numpy as np
import pytest
import torch
import torchvision.transforms as T

import spdlgst

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
VAL = "spdldecode width=224 height=224 mode=center-crop resize-shorter=256"


def batches(root, layout, dtype="uint8", norm="", output="torch"):
    pipeline = (f"spdlsrc location={root} ! {VAL} ! spdlbatch batch-size=4 "
                f"layout={layout} dtype={dtype} {norm} ! spdlappsink name=sink")
    with spdlgst.Loader(pipeline, output=output) as loader:
        return [(images.clone() if output == "torch" else images.copy(), labels)
                for images, labels in loader]


def reference(images_u8, layout, mean, std):
    """torchvision on the same pixels: ToTensor (HWC uint8) then Normalize."""
    out = []
    for img in images_u8:
        hwc = img.permute(1, 2, 0) if layout == "nchw" else img
        t = T.Normalize(mean, std)(T.ToTensor()(hwc.numpy()))
        out.append(t if layout == "nchw" else t.permute(1, 2, 0))
    return torch.stack(out)


NORM = 'mean="<0.485,0.456,0.406>" std="<0.229,0.224,0.225>"'


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_float32_equals_torchvision_normalize(kinds_dataset, layout):
    plain = batches(kinds_dataset, layout)
    got = batches(kinds_dataset, layout, "float32", NORM)
    assert len(got) == len(plain)
    for (images, labels), (u8, ref_labels) in zip(got, plain):
        assert images.dtype == torch.float32
        assert images.shape == u8.shape
        assert torch.equal(labels, ref_labels)
        ref = reference(u8, layout, MEAN, STD)
        # one multiply-add against torchvision's divide, subtract, divide:
        # a few float32 rounding steps apart, at most 1e-6 of the range
        torch.testing.assert_close(images, ref, rtol=1e-6, atol=1e-6)


def test_float32_default_is_to_tensor(kinds_dataset):
    u8 = batches(kinds_dataset, "nchw")[0][0]
    got = batches(kinds_dataset, "nchw", "float32")[0][0]
    torch.testing.assert_close(got, u8.float() / 255, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype,torch_dtype", [("float16", torch.float16),
                                               ("bfloat16", torch.bfloat16)])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_half_types_round_to_nearest(kinds_dataset, dtype, torch_dtype, layout):
    plain = batches(kinds_dataset, layout)
    got = batches(kinds_dataset, layout, dtype, NORM)
    for (images, _), (u8, _) in zip(got, plain):
        assert images.dtype == torch_dtype
        exact = reference(u8, layout, MEAN, STD)
        # torch's own float32 -> half conversion rounds to nearest even: the
        # float32 value is within 1e-6 of exact, so at most a tie may differ
        rounded = exact.to(torch_dtype)
        mismatch = (images.float() != rounded.float())
        ulp = torch.finfo(torch_dtype).eps * exact.abs().clamp(min=2 ** -14)
        assert ((images.float() - rounded.float()).abs()[mismatch]
                <= ulp[mismatch] + 1e-7).all()
        assert mismatch.float().mean().item() < 1e-3


def test_bfloat16_numpy_is_uint16_view(kinds_dataset):
    got = batches(kinds_dataset, "nchw", "bfloat16", NORM, output="numpy")
    torch_got = batches(kinds_dataset, "nchw", "bfloat16", NORM)
    images = got[0][0]
    assert images.dtype == np.uint16
    as_bf16 = torch.from_numpy(images.view(np.int16)).view(torch.bfloat16)
    assert torch.equal(as_bf16, torch_got[0][0])


def test_mean_with_uint8_is_an_error(kinds_dataset):
    with pytest.raises(spdlgst.LoaderError, match="float dtype"):
        batches(kinds_dataset, "nchw", "uint8", 'mean="<0.5>"')


def test_wrong_channel_count_is_an_error(kinds_dataset):
    with pytest.raises(spdlgst.LoaderError, match="one per channel"):
        batches(kinds_dataset, "nchw", "float32", 'mean="<0.5,0.5>"')
