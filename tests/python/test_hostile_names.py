"""File names a web-scale dataset holds reach Python as text, never as a
UnicodeDecodeError: warnings and errors name the file (display name), and
the sample metadata carries the real bytes."""
import os

import pytest
from PIL import Image

import spdlgst


def write_jpeg(path):
    Image.new("RGB", (40, 30), (200, 100, 50)).save(path, format="JPEG", quality=90)


@pytest.fixture
def latin1_dataset(tmp_path):
    root = os.fsencode(tmp_path)
    folder = os.path.join(root, b"c0")
    os.mkdir(folder)
    write_jpeg(os.path.join(folder, b"good.jpg"))
    write_jpeg(os.path.join(folder, b"caf\xe9.jpg"))   # Latin-1, not UTF-8
    with open(os.path.join(folder, b"bad\xff.jpg"), "wb") as f:
        f.write(b"not a jpeg at all")
    return tmp_path


def test_error_naming_non_utf8_file_is_loader_error(latin1_dataset):
    line = (f"spdlsrc location={latin1_dataset} ! spdldecode width=16 height=16 "
            "max-errors=0 ! spdlbatch batch-size=1 ! spdlappsink name=sink")
    with spdlgst.Loader(line) as loader:
        with pytest.raises(spdlgst.LoaderError) as info:
            for _ in loader:
                pass
    message = str(info.value)
    assert "bad" in message and ".jpg" in message
    assert "unknown sample" not in message


def test_non_utf8_path_in_metadata(latin1_dataset):
    from gi.repository import Gst

    pipeline = Gst.parse_launch(f"spdlsrc location={latin1_dataset} "
                                "! appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    paths, raw = [], []
    try:
        while True:
            sample = sink.emit("try-pull-sample", 5 * Gst.SECOND)
            if sample is None:
                break
            s = sample.get_buffer().get_custom_meta(
                "GstSpdlSampleMeta").get_structure()
            paths.append(s.get_value("path"))
            if s.has_field("path-bytes"):
                raw.append(s.get_value("path-bytes").get_data())
    finally:
        pipeline.set_state(Gst.State.NULL)
    assert len(paths) == 3
    assert all(isinstance(p, str) for p in paths)
    want = os.path.join(os.fsencode(latin1_dataset), b"c0", b"caf\xe9.jpg")
    assert want in raw
    # the bytes open the file
    assert os.path.exists(want)


def test_samples_give_the_name_that_opens_the_file(latin1_dataset):
    """loader.samples decodes a name that is not UTF-8 as os.fsdecode does
    (torchvision's ImageFolder: 'caf\\udce9.jpg'), so the path opens."""
    from torchvision.datasets import ImageFolder

    line = (f"spdlsrc location={latin1_dataset} ! spdldecode width=16 height=16 "
            "! spdlbatch batch-size=1 ! spdlappsink name=sink")
    with spdlgst.Loader(line) as loader:
        next(iter(loader))
        samples = list(loader.samples)
    expected = ImageFolder(str(latin1_dataset), is_valid_file=lambda p: True).samples
    assert samples == expected
    assert any(p.endswith("caf\udce9.jpg") for p, _ in samples)
    for path, _ in samples:
        assert os.path.exists(path)
