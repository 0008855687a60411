"""spdlgst.AudioLoader: labels as torchvision's folder datasets give them,
shapes, every clip once per shuffled epoch, resume mid-epoch, whole files
padded per batch, arguments checked before any pipeline, numpy and torch."""
import json
import os
import re

import numpy as np
import pytest
from gi.repository import Gst

import audiogen
import spdlgst


@pytest.fixture(scope="module")
def speech(tmp_path_factory):
    """Three class folders of short files: mixed formats, rates, lengths."""
    root = tmp_path_factory.mktemp("speech")
    kinds = [("flac", 16000), ("wav", 44100), ("mp3", 48000), ("opus", 48000),
             ("flac", 16000)]
    n = 0
    for c, name in enumerate(["yes", "no", "stop"]):
        (root / name).mkdir()
        for v in range(3 + c % 2):
            ext, rate = kinds[n % len(kinds)]
            audiogen.make(str(root / name / f"u{v}.{ext}"), "tone", rate,
                          0.6 + 0.25 * n, 1 + n % 2, n)
            n += 1
    (root / "no" / "notes.txt").write_text("not audio\n")
    return root


def keys(batches):
    return [(b.epoch, i, c) for b in batches
            for i, c in zip(b.indices, b.clip_numbers)]


def test_labels_shapes_and_numpy(speech):
    classes = sorted(os.listdir(speech))
    with spdlgst.AudioLoader(speech, batch_size=4, duration=0.5,
                             epochs=1, threads=2, output="numpy") as loader:
        assert loader.classes == classes
        batches = list(loader)
    assert [len(b.labels) for b in batches] == [4, 4, 2]
    for batch in batches:
        audio, labels = batch
        assert audio is batch.audio and audio.dtype == np.float32
        assert audio.shape[1:] == (1, 8000)
        assert labels.dtype == np.int64 and batch.start.dtype == np.float64
        assert batch.lengths.dtype == np.int64
        assert np.all(batch.lengths == 8000)
        assert np.abs(audio).max() <= 1.0 and np.abs(audio).max() > 0.1
        for path, label, start in zip(batch.paths, labels, batch.start):
            assert classes[label] == os.path.basename(os.path.dirname(path))
            assert 0 <= start


def test_torch_output_and_whole_files(speech):
    import torch

    with spdlgst.AudioLoader(speech, batch_size=3, duration=None,
                             sample_rate=8000, channels=2, shuffle=False,
                             epochs=1, threads=2) as loader:
        assert "duration=0" in loader.launch_line
        batches = list(loader)
    assert sum(len(b.labels) for b in batches) == 10
    for b in batches:
        assert isinstance(b.audio, torch.Tensor) and b.audio.dtype == torch.float32
        assert b.labels.dtype == torch.int64 and b.lengths.dtype == torch.int64
        assert b.audio.shape[1] == 2
        # padded to the longest of the batch, zeros after each length
        assert b.audio.shape[2] == int(b.lengths.max())
        for row, length in zip(b.audio, b.lengths):
            assert not row[:, int(length):].any()
            assert row[:, :int(length)].abs().max() > 0.1
        assert torch.all(b.start == 0)


def test_shuffle_gives_every_clip_once_per_epoch(speech):
    with spdlgst.AudioLoader(speech, batch_size=3, duration=0.25,
                             clips_per_file=2, epochs=2, seed=7, threads=2,
                             output="numpy") as loader:
        n = len(loader)             # batches of clips, not of files
        epochs = [list(loader) for _ in range(2)]
    assert n == 7 and [len(batches) for batches in epochs] == [n, n]
    orders = []
    for e, batches in enumerate(epochs):
        k = [(i, c) for _, i, c in keys(batches)]
        assert sorted(k) == [(i, c) for i in range(10) for c in range(2)]
        assert {b.epoch for b in batches} == {e}
        orders.append([i for i, _ in k])
    assert orders[0] != orders[1]
    assert orders[0] != sorted(orders[0])


@pytest.mark.parametrize("clips_per_file,stop", [(1, 2), (2, 3)])
def test_resume_mid_epoch_gives_the_rest(speech, clips_per_file, stop):
    kwargs = dict(batch_size=3, duration=0.25, clips_per_file=clips_per_file,
                  epochs=1, seed=3, threads=2, output="numpy")
    with spdlgst.AudioLoader(speech, **kwargs) as loader:
        full = list(loader)
    with spdlgst.AudioLoader(speech, **kwargs) as loader:
        head = []
        for batch in loader:
            head.append(batch)
            if len(head) == stop:
                state = json.loads(json.dumps(loader.state_dict()))
                break
    with spdlgst.AudioLoader(speech, **kwargs) as loader:
        loader.load_state_dict(state)
        tail = list(loader)
    every = keys(full)
    head_keys, tail_keys = keys(head), keys(tail)
    assert len(set(every)) == len(every) == 10 * clips_per_file
    assert set(head_keys) | set(tail_keys) == set(every)
    by_key = {k: (np.asarray(b.audio[j]), b.start[j], b.paths[j])
              for b in full for j, k in enumerate(keys([b]))}
    for b in tail:
        for j, k in enumerate(keys([b])):
            # every format bit for bit: the readers decode a span the same
            # whatever was read before (Opus: a fresh decoder and a 1 s
            # pre-roll for every seek)
            np.testing.assert_array_equal(b.audio[j], by_key[k][0])
            assert b.start[j] == by_key[k][1]
    repeated = set(head_keys) & set(tail_keys)
    if clips_per_file == 1:
        assert not repeated
    else:
        # only the clips of a file the checkpoint split come again
        assert len({i for _, i, _ in repeated}) <= 1


def test_resume_at_an_epochs_first_batch_with_drop_last(speech):
    """drop_last: a checkpoint at the first batch of epoch 1, after epoch 0's
    partial batch was dropped, resumes with the rest of epoch 1 (it said
    epoch 2, the rest of epoch 1 lost)."""
    kwargs = dict(batch_size=3, duration=0.25, drop_last=True, epochs=2,
                  seed=3, threads=2, output="numpy")
    with spdlgst.AudioLoader(speech, **kwargs) as loader:
        full = [keys([b]) for _ in range(2) for b in loader]
    assert len(full) == 6           # 10 files: 3 batches an epoch, 1 dropped
    with spdlgst.AudioLoader(speech, **kwargs) as loader:
        list(loader)
        next(iter(loader))
        state = json.loads(json.dumps(loader.state_dict()))
    assert (state["epoch"], state["offset"]) == (1, 3)
    with spdlgst.AudioLoader(speech, **kwargs) as loader:
        loader.load_state_dict(state)
        assert [keys([b]) for b in loader] == full[4:]


@pytest.mark.parametrize("kwargs,error,name", [
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(sample_rate=100), ValueError, "sample_rate"),
    (dict(sample_rate=16000.0), TypeError, "sample_rate"),
    (dict(channels=0), ValueError, "channels"),
    (dict(duration=0), ValueError, "duration"),
    (dict(duration=-1.0), ValueError, "duration"),
    (dict(duration=float("nan")), ValueError, "duration"),
    (dict(duration="1s"), TypeError, "duration"),
    (dict(duration=1e-5), ValueError, "duration"),
    (dict(clips_per_file=0), ValueError, "clips_per_file"),
    (dict(duration=None, clips_per_file=2), ValueError, "clips_per_file"),
    (dict(sampling="middle"), ValueError, "sampling"),
    (dict(short_files="wrap"), ValueError, "short_files"),
    (dict(shuffle="yes"), TypeError, "shuffle"),
    (dict(quality=11), ValueError, "quality"),
    (dict(exact="no"), TypeError, "exact"),
    (dict(output="jax"), ValueError, "output"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(threads=0), ValueError, "threads"),
    (dict(epochs=0), ValueError, "epochs"),
    (dict(max_errors=-1), ValueError, "max_errors"),
    (dict(extensions=["wav", "../x"]), ValueError, "extensions"),
    (dict(src_properties={"extensions": "wav"}), ValueError, "extensions"),
    (dict(src_properties={"seed": 3}), ValueError, "seed"),
    (dict(location="/nonexistent/speech"), ValueError, "location"),
])
def test_bad_arguments_are_named_before_any_pipeline(speech, monkeypatch,
                                                     kwargs, error, name):
    def no_pipeline(*a):
        raise AssertionError("a pipeline was built")

    monkeypatch.setattr(Gst, "parse_launch", no_pipeline)
    kwargs = dict(kwargs)
    location = kwargs.pop("location", speech)
    with pytest.raises(error, match=name):
        spdlgst.AudioLoader(location, **kwargs)


def test_launch_line(speech):
    line = spdlgst.AudioLoader.launch_line_for(
        speech, sample_rate=22050, duration=2.5, clips_per_file=3,
        sampling="uniform", short_files="repeat", max_errors=5)
    assert "extensions=wav,flac,mp3,ogg,opus,m4a" in line
    assert ("spdlaudiodecode sample-rate=22050 channels=1 duration=2.5 "
            "clips-per-file=3 sampling=uniform short-files=repeat") in line
    assert "shuffle=false" in line and "spdlbatch batch-size=32" in line
    assert "max-errors=5" in line
    assert spdlgst.AudioLoader.launch_line_for(speech).count(
        "shuffle=true") == 1
    assert "exact" not in spdlgst.AudioLoader.launch_line_for(speech)
    assert "spdlaudiodecode" in spdlgst.AudioLoader.launch_line_for(
        speech, exact=False).split("exact=false")[0]


def test_inexact_changes_opus_only(tmp_path):
    """exact=False: Opus clips from the codec's 80 ms pre-roll, the same
    from run to run and (at 16 kb/s) not the file decoded from its start;
    every other format the same either way."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    pcm = audiogen.pcm16(audiogen.signal("sweep", 48000, 4.0))
    audiogen.write_wav(str(tmp_path / "src.wav"), pcm, 48000)
    audiogen.encode(str(tmp_path / "src.wav"), str(tmp_path / "a" / "low.opus"),
                    encoder="opusenc bitrate=16000 ! oggmux")
    audiogen.make(str(tmp_path / "b" / "tone.flac"), "tone", 16000, 3.0)
    audiogen.make(str(tmp_path / "b" / "tone.mp3"), "tone", 44100, 3.0)
    os.unlink(tmp_path / "src.wav")

    def clips(exact):
        with spdlgst.AudioLoader(tmp_path, batch_size=9, duration=0.5,
                                 clips_per_file=3, sampling="uniform",
                                 exact=exact, epochs=1, output="numpy") as l:
            assert ("exact=false" in l.launch_line) == (not exact)
            return {(os.path.basename(p), s): a for b in l
                    for p, s, a in zip(b.paths, b.start, b.audio)}

    exact, inexact, again = clips(True), clips(False), clips(False)
    assert sorted(exact) == sorted(inexact) == sorted(again)
    assert len(exact) == 9
    for k in exact:
        assert np.array_equal(inexact[k], again[k]), k
        if k[0].endswith(".opus"):
            continue
        assert np.array_equal(exact[k], inexact[k]), k
    worst = max(np.abs(exact[k] - inexact[k]).max() for k in exact
                if k[0] == "low.opus" and k[1] > 0.2)
    assert 1e-4 < worst < 1.0, worst


def test_audio_pipeline_runs(speech):
    from spdlgst.pipelines import launch_line

    line = launch_line("audio-1s-16k", speech, batch_size=4, num_epochs=1)
    with spdlgst.Loader(line) as loader:
        batches = list(loader)
    assert [tuple(b[0].shape) for b in batches] == [(4, 1, 16000)] * 2 + [
        (2, 1, 16000)]
    assert [tuple(b[i].shape) for i in (1, 2, 3) for b in batches[:1]] == [
        (4,)] * 3
    # the files are 0.6 to 2.9 s long: the short ones padded, lengths tell
    lengths = np.concatenate([np.asarray(b[3]) for b in batches])
    assert lengths.min() < 16000 and lengths.max() == 16000


def test_undecodable_folder_is_an_error_at_the_end_of_epoch_0(tmp_path):
    # random bytes named as audio: with unbounded epochs (the default) the
    # loop used to give empty epochs for ever, warned in the log only
    rng = np.random.default_rng(3)
    for name, ext in (("a", "wav"), ("b", "flac")):
        (tmp_path / name).mkdir()
        for i in range(3):
            (tmp_path / name / f"x{i}.{ext}").write_bytes(
                rng.integers(0, 256, 3000, dtype=np.uint8).tobytes())
    with spdlgst.AudioLoader(tmp_path, batch_size=4, threads=2,
                             log_limit=0) as loader:
        batches = []
        with pytest.raises(spdlgst.LoaderError,
                           match=r"spdlaudiodecode\d*: No sample could be "
                                 r"decoded: all 6 up to the end of epoch 0 "
                                 r"were skipped \(unsupported-format: 6\)"):
            for batch in loader:
                batches.append(batch)
        assert batches == []


def test_log_limit_lifts_the_elements_warning_limit(tmp_path, caplog):
    """AudioLoader(log_limit=30) names each of 25 bad files, not the first
    20 spdlaudiodecode posts by default (as ImageLoader's log_limit does);
    VideoLoader's line lifts its elements' limit the same way."""
    rng = np.random.default_rng(4)
    (tmp_path / "a").mkdir()
    for i in range(25):
        (tmp_path / "a" / f"bad{i:02d}.wav").write_bytes(
            rng.integers(0, 256, 3000, dtype=np.uint8).tobytes())
    audiogen.make(str(tmp_path / "a" / "fine.flac"), "tone", 16000, 1.0)
    with spdlgst.AudioLoader(tmp_path, batch_size=4, threads=2, epochs=1,
                             log_limit=30) as loader:
        assert "log_limit=30" in repr(loader)
        batches = list(loader)
        assert sum(loader.skipped().values()) == 25
    assert sum(len(b.labels) for b in batches) == 1
    named = {m for r in caplog.records
             for m in re.findall(r"/(bad\d\d\.wav)\b", r.getMessage())}
    assert named == {f"bad{i:02d}.wav" for i in range(25)}
    for cls in (spdlgst.AudioLoader, spdlgst.VideoLoader):
        stages = cls.launch_line_for(str(tmp_path), log_limit=50).split(" ! ")
        assert "warning-limit=50" in stages[0]      # spdlsrc
        assert "warning-limit=50" in stages[1]      # the decoder
        assert "warning-limit" not in cls.launch_line_for(str(tmp_path))
