"""Every CPU launch line of pipelines/ runs on a small dataset."""
import numpy as np
import pytest
from PIL import Image

import spdlgst
from spdlgst.pipelines import available, launch_line
from test_checkpoint import make_folder

# video and audio recipes run in test_video_loader and test_audio_loader
CPU_PIPELINES = [p for p in available()
                 if "cuda" not in p and not p.startswith(("r3d", "audio"))]


def test_there_are_cpu_pipelines():
    assert {"imagenet-train", "imagenet-val"} <= set(CPU_PIPELINES)


@pytest.mark.parametrize("name", CPU_PIPELINES)
def test_pipeline_runs(name, kinds_dataset):
    line = launch_line(name, kinds_dataset, batch_size=4)
    with spdlgst.Loader(line) as loader:
        batches = list(loader)            # one epoch
    assert batches, name
    n = sum(len(labels) for _, labels in batches)
    dropped = "drop-last=true" in line
    assert n == (20 // 4) * 4 if dropped else n == 20
    images, labels = batches[0]
    assert images.shape == (4, 3, 224, 224) and images.dtype == np.uint8
    assert set(labels.tolist()) <= {0, 1}


def test_png_frames_batch_through_decodebin(tmp_path):
    """spdlbatch takes images from any GStreamer decoder chain."""
    for i in range(6):
        arr = np.full((20, 30, 3), i * 40, np.uint8)
        Image.fromarray(arr).save(tmp_path / f"img{i:03d}.png")
    with spdlgst.Loader(
            f"multifilesrc location={tmp_path}/img%03d.png index=0 stop-index=5 "
            "caps=image/png,framerate=1/1 ! pngdec ! videoconvert ! "
            "videoscale ! video/x-raw,format=RGB,width=15,height=10 ! "
            "spdlbatch batch-size=4 ! spdlappsink name=sink") as loader:
        batches = list(loader)
    assert [b[0].shape for b in batches] == [(4, 10, 15, 3), (2, 10, 15, 3)]
    assert batches[1][0][1].mean() == pytest.approx(200, abs=1)
    assert (batches[0][1] == -1).all()    # no labels in a plain decoder chain


def test_override_not_in_the_line_reaches_its_element(kinds_dataset):
    """imagenet-val sets no num-epochs, drop-last, shuffle or threads: the
    overrides go to the one element that has each property."""
    line = launch_line("imagenet-val", kinds_dataset, batch_size=8,
                       num_epochs=2, drop_last=True, shuffle=True, threads=2)
    with spdlgst.Loader(line) as loader:
        decode, = [e for e in loader.pipeline.children
                   if e.get_factory().get_name() == "spdldecode"]
        assert decode.get_property("threads") == 2
        epochs = [[i for b in loader for i in b.indices] for _ in range(3)]
    # 20 samples: two epochs of 2 full batches each, then the end
    assert [len(e) for e in epochs] == [16, 16, 0]
    assert epochs[0] != sorted(epochs[0])          # shuffled


def test_override_no_element_or_several_elements_take_is_refused(kinds_dataset):
    # spdlsrc and spdldecode both have a seed; imagenet-val sets neither
    with pytest.raises(ValueError, match=r"'seed'.*spdlsrc.*spdldecode"):
        launch_line("imagenet-val", kinds_dataset, seed=1)
    with pytest.raises(ValueError, match=r"'no-such-thing'.*spdlsrc"):
        launch_line("imagenet-val", kinds_dataset, no_such_thing=1)


@pytest.mark.parametrize("folder", ["sp ace/d s", 'we!rd"q', 'a "b c" ! d'])
def test_location_with_spaces_and_quotes(tmp_path, folder):
    root = make_folder(tmp_path / folder, 6)
    line = launch_line("imagenet-val", root, batch_size=4)
    with spdlgst.Loader(line) as loader:
        assert sum(len(b.indices) for b in loader) == 6
