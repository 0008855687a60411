"""VideoLoader and AudioLoader on WebDataset tar shards (written by
webdataset's TarWriter), local, over HTTP and on S3, and on manifests:
every clip once per shuffled epoch, labels and pixels/samples equal to the
folder run of the same files (a clip is chosen from seed, epoch, sample
index and clip number, and the shards hold the files in the folder's
order, so the indices agree), ranks disjoint and complete, resume
mid-epoch, members over max-file-size counted as skipped."""
import json
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest
from gi.repository import Gst  # noqa: F401 (spdlgst's Gst, initialized)

import audiogen
import spdlgst
import videogen
from test_remote import proxy
from test_s3 import MotoServer, SETUP, REGION, s3_env, venv_python

H264 = ["-c:v", "libx264", "-g", "10", "-pix_fmt", "yuv420p"]
# one TarWriter sample per line: [key, {extension: file to read or text}]
WRITER = r"""
import json, sys
import webdataset as wds
for tar, samples in json.loads(sys.stdin.read()):
    with wds.TarWriter(tar) as sink:
        for key, members in samples:
            s = {"__key__": key}
            for ext, (kind, value) in members.items():
                s[ext] = open(value, "rb").read() if kind == "file" \
                    else value.encode()
            sink.write(s)
"""
PER_SHARD = 3


def write_shards(folder_loader, dest, ext_label):
    """Shards of @folder_loader's samples in its listing order (so a
    sample's shard index is its folder index), PER_SHARD each; labels as
    ".cls" or ".json" members; a caption member the loaders ignore."""
    samples = folder_loader.samples
    listing = [samples[i] for i in range(len(samples))]
    os.makedirs(dest)
    spec = []
    for s in range(0, len(listing), PER_SHARD):
        group = []
        for i, (path, label) in enumerate(listing[s:s + PER_SHARD], s):
            ext = path.rsplit(".", 1)[1]
            label_member = (["text", str(label)] if ext_label == "cls" else
                            ["text", json.dumps({"label": label, "i": i})])
            group.append(["s%04d" % i, {ext: ["file", path],
                                        ext_label: label_member,
                                        "txt": ["text", "caption %d" % i]}])
        spec.append([os.path.join(dest, "part-%06d.tar" % (s // PER_SHARD)),
                     group])
    subprocess.run([venv_python(), "-c", WRITER], input=json.dumps(spec),
                   text=True, check=True, timeout=120)
    last = (len(listing) - 1) // PER_SHARD
    return os.path.join(dest, "part-{000000..%06d}.tar" % last), listing


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    """Class folders of videos (mostly MP4, one MKV, one WebM) and of audio
    files (FLAC and WAV), their shards, a manifest of the videos."""
    base = tmp_path_factory.mktemp("media")
    videos, audio = base / "videos", base / "audio"
    n = 0
    for c, name in enumerate(["cat", "dog", "owl"]):
        (videos / name).mkdir(parents=True)
        (audio / name).mkdir(parents=True)
        for v in range(3 - c % 2):
            ext = {4: "mkv", 6: "webm"}.get(n, "mp4")
            opts = (["-c:v", "libvpx-vp9", "-b:v", "200k", "-g", "10"]
                    if ext == "webm" else H264)
            videogen.make(videos / name / ("v%d.%s" % (v, ext)), "64x48", 25,
                          0.8 + 0.2 * n, opts)
            ext = "wav" if n % 3 == 1 else "flac"
            audiogen.make(str(audio / name / ("a%d.%s" % (v, ext))), "tone",
                          16000 if ext == "flac" else 22050, 0.5 + 0.1 * n,
                          1 + n % 2, n)
            n += 1
    (videos / "dog" / "notes.txt").write_text("not a video\n")
    with spdlgst.VideoLoader(videos, epochs=1) as folder:
        video_shards, video_list = write_shards(folder, str(base / "vshards"),
                                                "cls")
    with spdlgst.AudioLoader(audio, epochs=1) as folder:
        audio_shards, audio_list = write_shards(folder, str(base / "ashards"),
                                                "json")
    manifest = base / "videos.tsv"
    manifest.write_text("".join(
        "%s\t%d\n" % (os.path.relpath(p, base), label)
        for p, label in video_list))
    return dict(base=base, videos=videos, audio=audio, n=n,
                video_shards=video_shards, audio_shards=audio_shards,
                manifest=manifest)


VIDEO_ARGS = dict(batch_size=3, frames=3, stride=2, size=16, resize=20,
                  seed=5, threads=2, output="numpy")
AUDIO_ARGS = dict(batch_size=3, duration=0.25, sample_rate=8000, seed=5,
                  threads=2, output="numpy")
# shards: labels from the .json members; no learned index kept
AUDIO_SHARD_PROPS = {"label-key": "json", "shard-cache": ""}
SHARD_PROPS = {"shard-cache": ""}


def loader_for(kind, location, props=None, **kwargs):
    if kind == "video":
        return spdlgst.VideoLoader(location, **dict(VIDEO_ARGS, **kwargs),
                                   src_properties=props)
    return spdlgst.AudioLoader(location, **dict(AUDIO_ARGS, **kwargs),
                               src_properties=props)


def shard_location(media, kind):
    return media["video_shards" if kind == "video" else "audio_shards"]


def shard_props(kind):
    return dict(SHARD_PROPS if kind == "video" else AUDIO_SHARD_PROPS)


def clips(batches):
    """[(epoch, index, clip number, label, data, times)] in batch order."""
    out = []
    for b in batches:
        data, labels = b
        times = b.pts if hasattr(b, "pts") else b.start
        for k, (i, c) in enumerate(zip(b.indices, b.clip_numbers)):
            out.append((b.epoch, i, c, int(labels[k]), np.array(data[k]),
                        np.array(times[k])))
    return out


def run(kind, location, props=None, epochs=1, **kwargs):
    with loader_for(kind, location, props, epochs=epochs, **kwargs) as loader:
        return clips(b for _ in range(epochs) for b in loader), loader


def assert_same_clips(got, want):
    """Same (epoch, index, clip) set; equal label, data, times for each."""
    by_key = {(e, i, c): rest for e, i, c, *rest in want}
    assert sorted((e, i, c) for e, i, c, *_ in got) == sorted(by_key)
    for e, i, c, label, data, times in got:
        w_label, w_data, w_times = by_key[(e, i, c)]
        assert label == w_label, (e, i, c)
        np.testing.assert_array_equal(data, w_data, err_msg=str((e, i, c)))
        np.testing.assert_array_equal(times, w_times)


@pytest.mark.parametrize("kind", ["video", "audio"])
def test_local_shards_match_folder_every_clip_once(media, kind):
    folder = media["videos" if kind == "video" else "audio"]
    want, _ = run(kind, folder, epochs=2)
    with loader_for(kind, shard_location(media, kind), shard_props(kind),
                    epochs=2) as loader:
        exts = ("mp4;mkv;webm;mov;avi" if kind == "video" else
                "wav;flac;mp3;ogg;opus;m4a")
        assert 'image-key="%s"' % exts in loader.launch_line
        got = clips(b for _ in range(2) for b in loader)
        assert loader.skipped().get("no-image", 0) == 0
    n = media["n"]
    for e in range(2):
        keys = [(i, c) for ep, i, c, *_ in got if ep == e]
        assert sorted(keys) == [(i, 0) for i in range(n)]
    orders = [[i for ep, i, *_ in got if ep == e] for e in range(2)]
    assert orders[0] != orders[1]
    assert_same_clips(got, want)
    # the labels are the class folders' (shards: .cls / .json members)
    assert sorted({label for _, _, _, label, _, _ in got}) == [0, 1, 2]
    # a folder location names no image-key
    with loader_for(kind, folder, epochs=1) as loader:
        assert "image-key" not in loader.launch_line


def test_own_image_key_and_extensions(media):
    """extensions name the members of shards too; an image-key in
    src_properties wins: groups without such a member are counted."""
    props = dict(SHARD_PROPS)
    with loader_for("video", media["video_shards"], props, epochs=1,
                    extensions=["mp4"]) as loader:
        assert 'image-key=mp4' in loader.launch_line
        got = clips(loader)
        skipped = loader.skipped()
    assert skipped.get("no-image") == 2             # the mkv and the webm
    assert len(got) == media["n"] - 2
    props["image-key"] = "webm"
    with loader_for("video", media["video_shards"], props, epochs=1) as loader:
        assert loader.launch_line.count("image-key") == 1
        got = clips(loader)
        assert loader.skipped().get("no-image") == media["n"] - 1
    # the WebM of class 2, the only sample (number 0) of the learned index
    assert [(i, label) for _, i, _, label, *_ in got] == [(0, 2)]


@pytest.mark.parametrize("kind", ["video", "audio"])
def test_two_ranks_disjoint_and_complete(media, kind, monkeypatch):
    location = shard_location(media, kind)
    want, _ = run(kind, location, shard_props(kind))
    n = media["n"]
    seen = []
    monkeypatch.setenv("WORLD_SIZE", "2")
    for rank in range(2):
        monkeypatch.setenv("RANK", str(rank))
        got, _ = run(kind, location, shard_props(kind))
        assert len(got) == n // 2
        seen += got
    assert_same_clips(seen, want)


@pytest.mark.parametrize("kind", ["video", "audio"])
def test_resume_mid_epoch_gives_the_rest(media, kind):
    location = shard_location(media, kind)
    full, _ = run(kind, location, shard_props(kind))
    with loader_for(kind, location, shard_props(kind), epochs=1) as loader:
        head = []
        for batch in loader:
            assert batch.paths is None      # shards: no listing by index
            head += clips([batch])
            state = json.loads(json.dumps(loader.state_dict()))
            break
    with loader_for(kind, location, shard_props(kind), epochs=1) as loader:
        loader.load_state_dict(state)
        rest = clips(loader)
    assert len(head) == 3 and len(rest) == media["n"] - 3
    assert [k[:3] for k in head + rest] == [k[:3] for k in full]
    assert_same_clips(head + rest, full)


def big_mp4(src, dest, size):
    """@src with a top-level "free" box appended: @size bytes in all."""
    data = open(src, "rb").read()
    pad = size - len(data)
    with open(dest, "wb") as f:
        f.write(data + struct.pack(">I4s", pad, b"free") + bytes(pad - 8))


def test_large_members_pass_and_too_large_are_counted(media, tmp_path):
    """A 10 MB video member is read with the defaults; under a lower
    max-file-size it is skipped as "too-large", named and counted."""
    folder = tmp_path / "big"
    (folder / "a").mkdir(parents=True)
    small = str(media["videos"] / "cat" / "v0.mp4")
    big_mp4(small, str(folder / "a" / "big.mp4"), 10 * 1000 * 1000)
    for v in range(2):
        shutil.copy(small, str(folder / "a" / ("small%d.mp4" % v)))
    with spdlgst.VideoLoader(folder, epochs=1) as loader:
        location, listing = write_shards(loader, str(tmp_path / "shards"),
                                         "cls")
    want, _ = run("video", folder, shuffle=False)
    got, _ = run("video", location, SHARD_PROPS, shuffle=False)
    assert_same_clips(got, want)
    big = [i for i, (p, _) in enumerate(listing) if p.endswith("big.mp4")]
    props = dict(SHARD_PROPS, **{"max-file-size": 1000 * 1000})
    with loader_for("video", location, props, epochs=1,
                    shuffle=False) as loader:
        got = clips(loader)
        assert loader.skipped().get("too-large") == 1
    assert sorted(i for _, i, *_ in got) == [i for i in range(3)
                                             if i not in big]


@pytest.mark.parametrize("kind", ["video", "audio"])
def test_http_shards_match_local(media, kind):
    """Over HTTP (a range-capable server on 127.0.0.1): the same clips."""
    location = shard_location(media, kind)
    want, _ = run(kind, location, shard_props(kind), epochs=2)
    server = proxy(str(media["base"]))
    try:
        url = server.url + "/" + os.path.relpath(location, media["base"])
        got, _ = run(kind, url, shard_props(kind), epochs=2)
    finally:
        server.stop()
    assert [k[:3] for k in got] == [k[:3] for k in want]
    assert_same_clips(got, want)


@pytest.fixture(scope="module")
def s3(media):
    python = venv_python()
    server = MotoServer(python)
    try:
        out = subprocess.run([python, "-c", SETUP, server.url,
                              str(media["base"]), REGION], check=True,
                             timeout=180, capture_output=True,
                             text=True).stdout
        server.keys = json.loads(out)
        server.require_signatures()
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("kind", ["video", "audio"])
def test_s3_shards_match_local(media, s3, kind, monkeypatch):
    """On S3 (moto, SigV4 signatures checked): the same clips."""
    location = shard_location(media, kind)
    want, _ = run(kind, location, shard_props(kind))
    s3_env(monkeypatch, s3)
    got, _ = run(kind, "s3://data/ds/" +
                 os.path.relpath(location, media["base"]), shard_props(kind))
    assert [k[:3] for k in got] == [k[:3] for k in want]
    assert_same_clips(got, want)


def test_video_manifest_matches_folder(media):
    """A manifest listing the videos (in the folder's order): its clips and
    labels are the folder's."""
    want, _ = run("video", media["videos"], epochs=2)
    got, loader = run("video", media["manifest"], epochs=2)
    assert "image-key" not in loader.launch_line
    assert_same_clips(got, want)
