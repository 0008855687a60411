"""spdlgst.VideoLoader: labels as torchvision's folder datasets give them,
batch shapes per layout, every clip once per epoch, resume mid-epoch,
arguments checked before any pipeline."""
import json
import os

import numpy as np
import pytest
from gi.repository import Gst

import spdlgst
import videogen

H264 = ["-c:v", "libx264", "-g", "15", "-pix_fmt", "yuv420p"]
VP9 = ["-c:v", "libvpx-vp9", "-b:v", "200k", "-g", "15"]


@pytest.fixture(scope="module")
def clips_dataset(tmp_path_factory):
    """Three class folders of small videos, mixed containers and lengths."""
    root = tmp_path_factory.mktemp("clips")
    kinds = [("mp4", H264), ("webm", VP9), ("mkv", H264), ("mov", H264)]
    n = 0
    for c, name in enumerate(["zebra", "ant", "moose"]):
        (root / name).mkdir()
        for v in range(3 + c % 2):
            ext, opts = kinds[n % len(kinds)]
            videogen.make(root / name / ("v%d.%s" % (v, ext)), "96x64", 25,
                          1 + 0.3 * n, opts)
            n += 1
    (root / "ant" / "notes.txt").write_text("not a video\n")
    return root


def all_batches(loader, epochs=1):
    out = []
    for _ in range(epochs):
        out.append([b for b in loader])
    return out


def test_labels_are_torchvisions_and_batches_have_pts(clips_dataset):
    classes = sorted(os.listdir(clips_dataset))
    with spdlgst.VideoLoader(clips_dataset, batch_size=4, frames=4, stride=2,
                             size=32, resize=40, epochs=1, threads=2,
                             output="numpy") as loader:
        assert loader.classes == classes
        (batches,) = all_batches(loader)
    n = sum(len(b.labels) for b in batches)
    assert n == 10
    for batch in batches:
        clips, labels = batch
        assert clips is batch.clips and clips.dtype == np.uint8
        assert clips.shape[1:] == (4, 3, 32, 32)
        assert labels.dtype == np.int64
        assert batch.pts.dtype == np.float64
        assert batch.pts.shape == (len(labels), 4)
        for path, label, pts in zip(batch.paths, labels, batch.pts):
            assert classes[label] == os.path.basename(os.path.dirname(path))
            ref = videogen.probe_pts(path)
            idx = [int(np.argmin(np.abs(ref - t))) for t in pts]
            np.testing.assert_allclose(ref[idx], pts, atol=1e-6)
            assert np.all(np.diff(idx) == 2)


@pytest.mark.parametrize("layout,shape", [("TCHW", (4, 3, 24, 24)),
                                          ("CTHW", (3, 4, 24, 24)),
                                          ("thwc", (4, 24, 24, 3))])
def test_layouts(clips_dataset, layout, shape):
    import torch

    with spdlgst.VideoLoader(clips_dataset, batch_size=4, frames=4, size=24,
                             resize=24, layout=layout, epochs=1,
                             threads=2) as loader:
        assert "layout=%s" % layout.lower() in loader.launch_line
        (batches,) = all_batches(loader)
    assert [tuple(b.clips.shape) for b in batches] == [
        (4,) + shape, (4,) + shape, (2,) + shape]
    assert isinstance(batches[0].clips, torch.Tensor)
    assert batches[0].labels.dtype == torch.int64
    assert batches[0].pts.dtype == torch.float64


def clip_keys(batches):
    return [(e, i, c) for b in batches for e, i, c in
            zip([b.epoch] * len(b.indices), b.indices, b.clip_numbers)]


def test_shuffle_gives_every_clip_once_per_epoch(clips_dataset):
    with spdlgst.VideoLoader(clips_dataset, batch_size=3, frames=3,
                             clips_per_video=2, size=16, resize=16, epochs=2,
                             seed=7, threads=2, output="numpy") as loader:
        n = len(loader)             # batches of clips, not of files
        epochs = all_batches(loader, 2)
    assert n == 7 and [len(batches) for batches in epochs] == [n, n]
    orders = []
    for e, batches in enumerate(epochs):
        keys = [(i, c) for _, i, c in clip_keys(batches)]
        assert sorted(keys) == [(i, c) for i in range(10) for c in range(2)]
        assert {b.epoch for b in batches} == {e}
        orders.append([i for i, _ in keys])
    assert orders[0] != orders[1]
    assert orders[0] != sorted(orders[0])


@pytest.mark.parametrize("clips_per_video,stop", [(1, 2), (2, 3)])
def test_resume_mid_epoch_gives_the_rest(clips_dataset, clips_per_video, stop):
    kwargs = dict(batch_size=3, frames=3, clips_per_video=clips_per_video,
                  size=16, resize=16, epochs=1, seed=3, threads=2,
                  output="numpy")
    with spdlgst.VideoLoader(clips_dataset, **kwargs) as loader:
        (full,) = all_batches(loader)
    with spdlgst.VideoLoader(clips_dataset, **kwargs) as loader:
        head = []
        for batch in loader:
            head.append(batch)
            if len(head) == stop:
                state = json.loads(json.dumps(loader.state_dict()))
                break
    with spdlgst.VideoLoader(clips_dataset, **kwargs) as loader:
        loader.load_state_dict(state)
        (tail,) = all_batches(loader)
    every = clip_keys(full)
    head_keys, tail_keys = clip_keys(head), clip_keys(tail)
    assert len(set(every)) == len(every) == 10 * clips_per_video
    assert set(head_keys) | set(tail_keys) == set(every)
    # the same clips as the uninterrupted run: pixels and pts
    by_key = {k: (np.asarray(b.clips[j]), np.asarray(b.pts[j]))
              for b in full for j, k in enumerate(clip_keys([b]))}
    for b in tail:
        for j, k in enumerate(clip_keys([b])):
            np.testing.assert_array_equal(b.clips[j], by_key[k][0])
            np.testing.assert_array_equal(b.pts[j], by_key[k][1])
    repeated = set(head_keys) & set(tail_keys)
    if clips_per_video == 1:
        assert not repeated
    else:
        # only the clips of a video the checkpoint split come again
        assert len({i for _, i, _ in repeated}) <= 1


@pytest.mark.parametrize("kwargs,error,name", [
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(frames=0), ValueError, "frames"),
    (dict(frames=1.5), TypeError, "frames"),
    (dict(stride=0), ValueError, "stride"),
    (dict(frame_rate=0), ValueError, "frame_rate"),
    (dict(frame_rate="fast"), TypeError, "frame_rate"),
    (dict(clips_per_video=0), ValueError, "clips_per_video"),
    (dict(sampling="middle"), ValueError, "sampling"),
    (dict(size=0), ValueError, "size"),
    (dict(size=112, resize=100), ValueError, "resize"),
    (dict(crop="left"), ValueError, "crop"),
    (dict(flip="yes"), TypeError, "flip"),
    (dict(autorotate="yes"), TypeError, "autorotate"),
    (dict(max_decode_frames=-1), ValueError, "max_decode_frames"),
    (dict(max_decode_frames=1.5), TypeError, "max_decode_frames"),
    (dict(short_videos="pad"), ValueError, "short_videos"),
    (dict(layout="NCHW"), ValueError, "layout"),
    (dict(output="jax"), ValueError, "output"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(threads=0), ValueError, "threads"),
    (dict(extensions=["mp4", "../x"]), ValueError, "extensions"),
    (dict(src_properties={"extensions": "mp4"}), ValueError, "extensions"),
    (dict(location="/nonexistent/videos"), ValueError, "location"),
])
def test_bad_arguments_are_named_before_any_pipeline(clips_dataset,
                                                     monkeypatch, kwargs,
                                                     error, name):
    def no_pipeline(*a):
        raise AssertionError("a pipeline was built")

    monkeypatch.setattr(Gst, "parse_launch", no_pipeline)
    kwargs = dict(kwargs)
    location = kwargs.pop("location", clips_dataset)
    with pytest.raises(error, match=name):
        spdlgst.VideoLoader(location, **kwargs)


def test_launch_line(clips_dataset):
    line = spdlgst.VideoLoader.launch_line_for(
        clips_dataset, frames=16, stride=2, frame_rate=15, clips_per_video=3)
    assert "extensions=mp4,mkv,webm,mov,avi" in line
    assert "frames=16 stride=2 frame-rate=15.0 clips-per-video=3" in line
    assert "size=112 resize=128 crop=random flip=true" in line
    assert "shuffle=true" in line and "spdlbatch batch-size=8" in line


def test_r3d18_pipeline_runs(clips_dataset):
    from spdlgst.pipelines import launch_line

    line = launch_line("r3d18-train", clips_dataset, batch_size=4,
                       num_epochs=1)
    with spdlgst.Loader(line) as loader:
        batches = list(loader)
    assert [b[0].shape for b in batches] == [(4, 3, 16, 112, 112)] * 2 + [
        (2, 3, 16, 112, 112)]
    assert batches[0][2].shape == (4, 16)


def test_undecodable_folder_is_an_error_at_the_end_of_epoch_0(tmp_path):
    # a truncated MP4 and random bytes named as videos: with unbounded
    # epochs (the default) the loop used to give empty epochs for ever
    rng = np.random.default_rng(5)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    videogen.make(tmp_path / "whole.mp4", "96x64", 25, 1.0, H264)
    data = (tmp_path / "whole.mp4").read_bytes()
    (tmp_path / "whole.mp4").unlink()
    (tmp_path / "a" / "cut.mp4").write_bytes(data[:len(data) // 3])
    for i in range(3):
        (tmp_path / "b" / f"x{i}.mkv").write_bytes(
            rng.integers(0, 256, 5000, dtype=np.uint8).tobytes())
    with spdlgst.VideoLoader(tmp_path, batch_size=2, frames=4, size=32,
                             resize=32, threads=2, log_limit=0) as loader:
        batches = []
        with pytest.raises(spdlgst.LoaderError,
                           match=r"spdlvideodecode\d*: No sample could be "
                                 r"decoded: all 4 up to the end of epoch 0 "
                                 r"were skipped"):
            for batch in loader:
                batches.append(batch)
        assert batches == []


def test_videos_that_keep_some_clips_are_not_undecodable(tmp_path):
    # every video's tail is corrupt (moov first, bytes past 55% garbled):
    # of 4 uniform clips the last is dropped ("1 of its 4 clips dropped",
    # counted as corrupt), the other 3 are delivered. Clips were decoded,
    # so the end of epoch 0 is no "No sample could be decoded" error.
    (tmp_path / "a").mkdir()
    videogen.make(tmp_path / "whole.mp4", "160x120", 25, 4.0,
                  ["-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p",
                   "-movflags", "+faststart"])
    data = bytearray((tmp_path / "whole.mp4").read_bytes())
    (tmp_path / "whole.mp4").unlink()
    data[int(len(data) * 0.55):int(len(data) * 0.85)] = \
        b"\xff" * (int(len(data) * 0.85) - int(len(data) * 0.55))
    for i in range(20):
        (tmp_path / "a" / f"v{i:02d}.mp4").write_bytes(bytes(data))
    with spdlgst.VideoLoader(tmp_path, batch_size=4, frames=8, size=32,
                             resize=32, clips_per_video=4, sampling="uniform",
                             threads=2, epochs=1, log_limit=0) as loader:
        clips = sum(b[0].shape[0] for b in loader)
        skipped = loader.skipped()
    assert clips > 0 and skipped["corrupt"] > 0
