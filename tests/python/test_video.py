"""spdlvideodecode against FFmpeg: the pts of every frame and its pixels
(native size), on H.264 with B-frames and a 250-frame GOP, VP9, Matroska
with audio, a moov atom at the end and a variable-frame-rate file; bad
files skipped by reason."""
import os
import subprocess

import numpy as np
import pytest
import torchvision.transforms as T
from gi.repository import Gst
from PIL import Image

import videogen

EXTENSIONS = "mp4,mkv,webm,mov,avi,ts"


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    root = tmp_path_factory.mktemp("videos")
    videogen.make_set(str(root))
    return root


def run_clips(launch, timeout_s=120, stats=None):
    """[(array, meta structure)] and the warnings, of @launch; its
    decoder's stats appended to @stats."""
    pipeline = Gst.parse_launch(launch + " ! appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    clips, warnings, counts = [], [], None
    try:
        while True:
            sample = sink.emit("try-pull-sample", Gst.SECOND)
            while True:
                msg = bus.pop_filtered(Gst.MessageType.ERROR |
                                       Gst.MessageType.WARNING)
                if msg is None:
                    break
                if msg.type == Gst.MessageType.ERROR:
                    raise RuntimeError(msg.parse_error()[0].message)
                warnings.append(msg.parse_warning()[0].message)
            if sample is None:
                if sink.get_property("eos"):
                    break
                timeout_s -= 1
                assert timeout_s > 0, "pipeline timed out"
                continue
            st = sample.get_caps().get_structure(0)
            dims = [int(d) for d in st.get_value("dimensions").split(":")]
            buf = sample.get_buffer()
            ok, info = buf.map(Gst.MapFlags.READ)
            assert ok
            arr = np.frombuffer(info.data, np.uint8).reshape(
                dims[::-1]).copy()
            buf.unmap(info)
            # a copy: the meta dies with the buffer
            meta = buf.get_custom_meta(
                "GstSpdlSampleMeta").get_structure().copy()
            clips.append((arr, meta))
        dec = pipeline.get_by_name("dec")
        if dec is not None:
            counts = dec.get_property("error-counts")
            if stats is not None:
                stats.append(dec.get_property("stats"))
    finally:
        pipeline.set_state(Gst.State.NULL)
    return clips, warnings, counts


def pts_of(meta):
    v = meta.get_value("pts")
    return [v[i] for i in range(len(v))]


class References:
    """FFmpeg's pts and rgb24 frames of each video, decoded once."""

    def __init__(self):
        self.refs = {}

    def __getitem__(self, path):
        if path not in self.refs:
            self.refs[path] = (videogen.probe_pts(path),
                               videogen.decode_rgb(path))
        return self.refs[path]


@pytest.fixture(scope="module")
def references():
    return References()


def assert_clips_equal_ffmpeg(clips, references, frames, stride):
    """Each clip's pts are FFmpeg's pts of the video named in its meta,
    every stride-th one, and its pixels are FFmpeg's frames at those pts."""
    for arr, meta in clips:
        path = meta.get_string("path")
        ref_pts, ref = references[path]
        pts = pts_of(meta)
        assert len(pts) == frames and arr.shape[0] == frames
        idx = [int(np.argmin(np.abs(ref_pts - t))) for t in pts]
        np.testing.assert_allclose(ref_pts[idx], pts, atol=1e-6,
                                   err_msg=path)
        assert all(b - a == stride for a, b in zip(idx, idx[1:])), (path, idx)
        assert arr.shape[1:] == ref.shape[1:], (path, arr.shape, ref.shape)
        for k, i in enumerate(idx):
            mad = np.abs(arr[k].astype(int) - ref[i].astype(int)).mean()
            # about 0.65: FFmpeg's rgb24 is itself under the exact values
            assert mad <= 0.8, (path, k, i, mad)


@pytest.mark.parametrize("clips_per_video,sampling", [(2, "random"),
                                                      (3, "uniform")])
def test_frames_and_pts_equal_ffmpeg(videos, references, clips_per_video,
                                     sampling):
    clips, warnings, _ = run_clips(
        "spdlsrc location=%s extensions=%s ! spdlvideodecode name=dec "
        "frames=8 stride=2 threads=2 layout=thwc clips-per-video=%d "
        "sampling=%s" % (videos, EXTENSIONS, clips_per_video, sampling))
    assert warnings == []
    assert len(clips) == 6 * clips_per_video
    assert_clips_equal_ffmpeg(clips, references, 8, 2)
    if sampling == "uniform":
        # the last clip of each video ends at its last frame
        ends = {}
        for arr, meta in clips:
            ends.setdefault(meta.get_string("path"), []).append(
                pts_of(meta)[-1])
        for path, last in ends.items():
            ref_pts = references[path][0]
            assert max(last) == pytest.approx(ref_pts[-1]) or \
                max(last) == pytest.approx(ref_pts[-2])


@pytest.fixture(scope="module")
def same_size_videos(tmp_path_factory):
    """Videos of one size and rate in different containers and codecs, so
    that one decoding thread opens each right after another of its kind."""
    root = tmp_path_factory.mktemp("same_size")
    kinds = [
        ("mp4", ["-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p"]),
        ("webm", ["-c:v", "libvpx-vp9", "-b:v", "400k", "-g", "30"]),
        ("mkv", ["-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p"]),
        ("mov", ["-c:v", "libx264", "-g", "10", "-pix_fmt", "yuv420p",
                 "-movflags", "+faststart"]),
    ]
    for i in range(8):
        ext, opts = kinds[i % len(kinds)]
        folder = root / ("c%d" % (i % 2))
        folder.mkdir(exist_ok=True)
        # lengths differ, so a clip planned on another video's index shows
        videogen.make(folder / ("v%d.%s" % (i, ext)), "320x240", 25,
                      1 + 0.4 * i, opts)
    return root


def test_clips_are_of_the_video_in_their_meta(same_size_videos, references):
    """A decoding thread reuses its demuxer and decoder from video to video:
    nothing of one video may reach the next (giostreamsrc keeps its read
    cache across streams: a reused one gave a video another one's header
    and index). Every clip's pts and pixels are those of the file its meta
    names, and a clip does not depend on the thread count, the order or
    which video its thread decoded before: only on (seed, epoch, video,
    clip)."""
    launch = ("spdlsrc location=%s extensions=%s shuffle=%s seed=3 ! "
              "spdlvideodecode name=dec frames=6 stride=2 threads=%d "
              "reuse-chains=%s layout=thwc clips-per-video=2 "
              "sampling=random seed=5")
    runs = {}
    for threads, shuffle, reuse in ((1, False, False), (1, False, True),
                                    (3, True, True)):
        clips, warnings, _ = run_clips(launch % (
            same_size_videos, EXTENSIONS, str(shuffle).lower(), threads,
            str(reuse).lower()))
        assert warnings == []
        assert len(clips) == 16
        assert_clips_equal_ffmpeg(clips, references, 6, 2)
        runs[threads, shuffle, reuse] = {
            (m.get_string("path"), m.get_value("clip")): (a, pts_of(m))
            for a, m in clips}
    # each video on a fresh demuxer and decoder
    alone = runs[1, False, False]
    assert len(alone) == 16
    for key in ((1, False, True), (3, True, True)):
        assert runs[key].keys() == alone.keys()
        for clip, (arr, pts) in runs[key].items():
            assert pts == alone[clip][1], (key, clip)
            np.testing.assert_array_equal(arr, alone[clip][0])


def test_rgb_is_the_exact_conversion_of_the_decoded_planes(videos):
    """The decoded planes (bit-exact in every H.264 and VP9 decoder) to
    RGB: exact BT.601 (what an untagged SD stream is), rounded. FFmpeg's
    own rgb24 is on average about 0.6 levels under it (its SIMD
    conversion truncates); GstVideoConverter's 8-bit path 1.5."""
    clips, warnings, _ = run_clips(
        "spdlsrc location=%s extensions=%s ! spdlvideodecode frames=4 "
        "stride=3 threads=2 layout=thwc sampling=uniform" % (videos,
                                                             EXTENSIONS))
    assert warnings == [] and len(clips) == 6
    for arr, meta in clips:
        path = meta.get_string("path")
        ref_pts = videogen.probe_pts(path)
        y, u, v = videogen.decode_yuv420(path)
        for k, t in enumerate(pts_of(meta)):
            i = int(np.argmin(np.abs(ref_pts - t)))
            exact = videogen.bt601_rgb(y[i], u[i], v[i])
            diff = np.abs(arr[k].astype(int) - exact)
            # 1: a sum that lands on .5 exactly in one and not the other
            assert diff.max() <= 1 and diff.mean() < 0.01, (path, k,
                                                            diff.mean())


def test_crops_are_pils_resize_of_the_whole_frame(videos):
    """A frame is converted to RGB only where its clips' resize reads:
    each resized crop is, bit for bit, PIL's resize (torchvision's
    Resize) of the whole converted frame, cropped at one offset and
    flipped or not, the same for all the frames of a clip."""
    launch = ("spdlsrc location=%s extensions=%s ! spdlvideodecode "
              "frames=4 stride=2 threads=2 layout=thwc clips-per-video=2 "
              "sampling=random seed=7 " % (videos, EXTENSIONS))
    whole, warnings, _ = run_clips(launch + "size=0 resize=0")
    assert warnings == []
    crops, warnings, _ = run_clips(launch + "size=40 resize=56 crop=random "
                                   "flip=true")
    assert warnings == [] and len(crops) == len(whole) == 12
    full = {(m.get_string("path"), m.get_value("clip")): (a, pts_of(m))
            for a, m in whole}
    places = set()
    for arr, meta in crops:
        frames, pts = full[meta.get_string("path"), meta.get_value("clip")]
        assert pts_of(meta) == pts
        resized = np.stack([np.asarray(T.Resize(56)(Image.fromarray(f)))
                            for f in frames])
        found = [(flip, y, x) for flip in (False, True)
                 for y in range(resized.shape[1] - 39)
                 for x in range(resized.shape[2] - 39)
                 if np.array_equal(arr, (resized[:, :, ::-1] if flip else
                                         resized)[:, y:y + 40, x:x + 40])]
        assert found, meta.get_string("path")
        places.add(found[0])
    # crops at several places, flipped and not
    assert len(places) > 4 and {f for f, _, _ in places} == {False, True}


def test_time_based_clips_on_vfr(videos):
    """frame-rate=5: frame k is the one shown at start + k / 5."""
    clips, warnings, _ = run_clips(
        "spdlsrc location=%s extensions=mkv ! spdlvideodecode name=dec "
        "frames=6 frame-rate=5 sampling=uniform clips-per-video=2 "
        "threads=1" % videos)
    assert not [w for w in warnings if "Skipping" in w]
    vfr = [(a, m) for a, m in clips if m.get_string("path").endswith(
        "vfr.mkv")]
    assert len(vfr) == 2
    ref_pts = videogen.probe_pts(vfr[0][1].get_string("path"))
    for arr, meta in vfr:
        pts = pts_of(meta)
        start = pts[0]
        for k, t in enumerate(pts):
            shown = ref_pts[ref_pts <= start + k / 5 + 1e-6][-1]
            assert t == pytest.approx(shown, abs=1e-6)


def test_bad_files_skipped_by_reason(videos, tmp_path):
    root = tmp_path / "bad"
    (root / "x").mkdir(parents=True)
    good = videos / "a" / "gop250.mp4"
    data = good.read_bytes()
    (root / "x" / "empty.mp4").write_bytes(b"")
    (root / "x" / "garbage.mp4").write_bytes(os.urandom(5000))
    (root / "x" / "text.mp4").write_text("hello, not a video\n" * 50)
    # several: qtdemux finds a truncated file's missing streams while
    # parsebin still filters its errors, more often on a reused parsebin
    for i in range(6):
        (root / "x" / ("truncated%d.mp4" % i)).write_bytes(
            data[: len(data) // 3])
    (root / "x" / "good.mp4").write_bytes(data)
    # an image, not a video container (parsebin exposes image/jpeg)
    subprocess.run([videogen.FFMPEG, "-nostdin", "-v", "error", "-f", "lavfi",
                    "-i", "testsrc2=size=64x48", "-frames:v", "1", "-f",
                    "image2", "-c:v", "mjpeg", str(root / "x" / "jpeg.mp4")],
                   check=True)
    subprocess.run([videogen.FFMPEG, "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                    "sine=duration=1", str(root / "x" / "audio.mp4")],
                   check=True)
    clips, warnings, counts = run_clips(
        "spdlsrc location=%s extensions=mp4 ! spdlvideodecode name=dec "
        "frames=4 threads=2 warning-limit=100 timeout=10000000000" % root)
    paths = [m.get_string("path") for _, m in clips]
    assert any(p.endswith("good.mp4") for p in paths)
    for name in ("empty", "garbage", "text", "audio", "jpeg"):
        assert any(name + ".mp4" in w for w in warnings), (name, warnings)
    assert counts.get_value("empty") == 1
    # its audio stream ends; nothing waits for a video stream that is not
    # there (it used to wait for the timeout)
    assert counts.get_value("no-video") == 1
    assert not counts.has_field("timeout") or \
        counts.get_value("timeout") == 0, warnings
    # skipped at once as corrupt (no playable stream), not at the timeout
    assert counts.get_value("corrupt") >= 6, (counts.to_string(), warnings)
    assert any("jpeg.mp4" in w and "not a video container" in w
               for w in warnings), warnings
    assert counts.get_value("total") >= 11


def test_gif_named_mp4_is_skipped_at_once(videos, tmp_path):
    """A GIF is an image, not a video container: skipped at once as
    unsupported-format, with a warning naming it. gst-libav's GIF demuxer
    (the only one) reads on forever at the end of some files, a stall
    until the chain's 30 s timeout for each; its NUT demuxer as well."""
    import time

    (tmp_path / "x").mkdir()
    # a real animated GIF, and "GIF89a" followed by garbage
    subprocess.run([videogen.FFMPEG, "-nostdin", "-v", "error", "-f", "lavfi",
                    "-i", "testsrc2=size=64x48:rate=10:duration=1",
                    str(tmp_path / "x" / "anim.gif")], check=True)
    (tmp_path / "x" / "anim.gif").rename(tmp_path / "x" / "anim.mp4")
    (tmp_path / "x" / "gif89a.mp4").write_bytes(
        b"GIF89a" + np.random.default_rng(1).bytes(4000))
    subprocess.run([videogen.FFMPEG, "-nostdin", "-v", "error", "-f", "lavfi",
                    "-i", "testsrc2=size=64x48:rate=10:duration=1",
                    "-c:v", "mpeg4", "-f", "nut",
                    str(tmp_path / "x" / "nut.mp4")], check=True)
    (tmp_path / "x" / "good.mp4").write_bytes(
        (videos / "a" / "gop250.mp4").read_bytes())
    start = time.monotonic()
    clips, warnings, counts = run_clips(
        "spdlsrc location=%s extensions=mp4 ! spdlvideodecode name=dec "
        "frames=4 threads=2" % tmp_path)
    elapsed = time.monotonic() - start
    assert [m.get_string("path") for _, m in clips] == [
        str(tmp_path / "x" / "good.mp4")]
    for name in ("anim.mp4", "gif89a.mp4"):
        assert any(name in w and "image/gif, not a video container" in w
                   for w in warnings), (name, warnings)
    assert any("nut.mp4" in w and "no GStreamer demuxer for" in w
               for w in warnings), warnings
    assert len(warnings) == 3, warnings
    assert counts.get_value("unsupported-format") == 3, counts.to_string()
    assert counts.get_value("total") == 3
    # the whole epoch, well under the chain's 30 s timeout
    assert elapsed < 20, elapsed


def run_batches(launch, timeout_s=120):
    """[(tensors as numpy copies, batch meta structure)] of @launch, and
    the first error message (or None)."""
    from spdlgst.batch import host_tensors

    pipeline = Gst.parse_launch(launch + " ! appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    batches, error = [], None
    try:
        while True:
            sample = sink.emit("try-pull-sample", Gst.SECOND)
            msg = bus.pop_filtered(Gst.MessageType.ERROR)
            if msg is not None:
                error = msg.parse_error()[0].message
                break
            if sample is None:
                if sink.get_property("eos"):
                    break
                timeout_s -= 1
                assert timeout_s > 0, "pipeline timed out"
                continue
            tensors = [np.array(t) for t in host_tensors(sample)]
            meta = sample.get_buffer().get_custom_meta(
                "GstSpdlBatchMeta").get_structure().copy()
            batches.append((tensors, meta))
    finally:
        pipeline.set_state(Gst.State.NULL)
    return batches, error


@pytest.mark.parametrize("layout,shape", [("tchw", (4, 3, 48, 48)),
                                          ("cthw", (3, 4, 48, 48)),
                                          ("thwc", (4, 48, 48, 3))])
def test_batches_of_clips(videos, layout, shape):
    """spdlbatch stacks clips in their layout, [B, ...], with labels [B]
    and pts [B, T] float64; the batch meta has each slot's index and clip.
    Every clip is the one spdlvideodecode gave, in order."""
    decode = ("spdlsrc location=%s extensions=%s ! spdlvideodecode "
              "frames=4 stride=2 size=48 resize=56 crop=random flip=true "
              "clips-per-video=2 threads=2 layout=%s" % (videos, EXTENSIONS,
                                                         layout))
    clips, warnings, _ = run_clips(decode)
    assert warnings == [] and len(clips) == 12
    batches, error = run_batches(decode + " ! spdlbatch batch-size=5")
    assert error is None
    assert [b[0][0].shape for b in batches] == [(5,) + shape] * 2 + [
        (2,) + shape]
    images = np.concatenate([b[0][0] for b in batches])
    labels = np.concatenate([b[0][1] for b in batches])
    pts = np.concatenate([b[0][2] for b in batches])
    assert labels.dtype == np.int64 and pts.dtype == np.float64
    assert pts.shape == (12, 4)
    indices = [i for b in batches for i in b[1].get_value("indices")]
    numbers = [c for b in batches for c in b[1].get_value("clips")]
    for k, (arr, meta) in enumerate(clips):
        np.testing.assert_array_equal(images[k], arr)
        assert labels[k] == meta.get_value("label")
        assert list(pts[k]) == pts_of(meta)
        assert indices[k] == meta.get_value("index")
        assert numbers[k] == meta.get_value("clip")
    # two clips of one video: same video, two clips
    assert numbers[:2] == [0, 1] and indices[0] == indices[1]


def test_batch_of_clips_of_different_sizes_is_an_error(videos):
    """size=0: clips keep their video's size; a batch cannot mix them."""
    _, error = run_batches(
        "spdlsrc location=%s extensions=%s ! spdlvideodecode frames=2 "
        "size=0 resize=0 threads=1 ! spdlbatch batch-size=6" % (
            videos, EXTENSIONS))
    assert error is not None and "different shapes" in error, error
    # both shapes named: 340x256 (gop250.mp4, first) and the next video's
    assert "2,3,256,340" in error and error.count("[") == 2, error


def test_batch_of_clips_is_uint8(videos):
    _, error = run_batches(
        "spdlsrc location=%s extensions=mp4 ! spdlvideodecode frames=2 "
        "size=32 ! spdlbatch batch-size=2 dtype=float32" % videos)
    assert error is not None and "uint8" in error, error


@pytest.fixture(scope="module")
def vfr_bframes(tmp_path_factory):
    root = tmp_path_factory.mktemp("vfr_bframes")
    (root / "a").mkdir()
    path = root / "a" / "vfrb.mkv"
    videogen.make(path, *videogen.VFR_BFRAMES)
    return root, str(path)


def test_vfr_with_bframes_and_a_repeated_timestamp(vfr_bframes, references):
    """A VFR Matroska file with B-frames in which two frames share a time
    (h264parse gives the second no timestamp: it was skipped as 'video
    packet N has no presentation time'). Every frame is delivered, at
    FFmpeg's pts, with FFmpeg's pixels, in one whole-video clip and in
    short clips decoded from their keyframe."""
    root, path = vfr_bframes
    ref_pts, ref = references[path]
    n = len(ref_pts)
    assert n == 75 and len(set(ref_pts)) < n     # the file as meant
    clips, warnings, counts = run_clips(
        "spdlsrc location=%s extensions=mkv ! spdlvideodecode name=dec "
        "frames=%d threads=1 layout=thwc" % (root, n))
    assert warnings == [] and len(clips) == 1
    arr, meta = clips[0]
    np.testing.assert_allclose(pts_of(meta), ref_pts, atol=1e-6)
    for k in range(n):
        mad = np.abs(arr[k].astype(int) - ref[k].astype(int)).mean()
        assert mad <= 0.8, (k, mad)
    clips, warnings, counts = run_clips(
        "spdlsrc location=%s extensions=mkv ! spdlvideodecode name=dec "
        "frames=3 threads=2 layout=thwc sampling=uniform "
        "clips-per-video=37" % root)
    assert warnings == [] and len(clips) == 37
    for arr, meta in clips:
        pts = np.array(pts_of(meta))
        starts = [s for s in range(n - 2)
                  if np.allclose(ref_pts[s:s + 3], pts, atol=1e-6)]
        assert starts, pts
        mads = [max(np.abs(arr[k].astype(int) - ref[s + k].astype(int))
                    .mean() for k in range(3)) for s in starts]
        assert min(mads) <= 0.8, (pts, mads)


# codecs and containers beyond those above: (file name, ffmpeg options)
OTHER_KINDS = {
    # vp8alphadecodebin ranks above vp8dec but takes alpha streams only
    "vp8": ("a.webm", ["-c:v", "libvpx", "-b:v", "400k", "-g", "30"]),
    # AVI (UCF-101, HMDB-51): decode order, DTS only for some packets
    "mpeg4-avi": ("a.avi", ["-c:v", "mpeg4", "-bf", "0", "-g", "12"]),
    "h264-avi": ("a.avi", ["-c:v", "libx264", "-bf", "0", "-g", "12",
                           "-pix_fmt", "yuv420p"]),
    "theora-mkv": ("a.mkv", ["-c:v", "libtheora", "-g", "12"]),
    # image/jpeg from the demuxer
    "mjpeg-avi": ("a.avi", ["-c:v", "mjpeg", "-q:v", "3"]),
    # MPEG-TS: pts are the stream's PTS (first 1.4 s here), not times from
    # the first clock reference (0.7 s before)
    "h264-ts": ("a.ts", ["-c:v", "libx264", "-bf", "2", "-g", "12",
                         "-pix_fmt", "yuv420p"]),
    "h264-ts-offset": ("a.ts", ["-c:v", "libx264", "-bf", "0", "-g", "12",
                                "-pix_fmt", "yuv420p",
                                "-output_ts_offset", "7.5"]),
}


@pytest.mark.parametrize("kind", sorted(OTHER_KINDS))
def test_other_codecs_equal_ffmpeg(kind, tmp_path, references):
    """Every frame of a 2 s video, in one clip and in short clips, at
    FFmpeg's pts with FFmpeg's pixels."""
    name, opts = OTHER_KINDS[kind]
    (tmp_path / "a").mkdir()
    path = tmp_path / "a" / name
    videogen.make(path, "320x240", 25, 2, opts)
    ref_pts, ref = references[str(path)]
    n = len(ref_pts)
    assert n == 50
    clips, warnings, _ = run_clips(
        "spdlsrc location=%s extensions=%s ! spdlvideodecode name=dec "
        "frames=%d threads=1 layout=thwc" % (tmp_path, EXTENSIONS, n))
    assert warnings == [] and len(clips) == 1
    arr, meta = clips[0]
    np.testing.assert_allclose(pts_of(meta), ref_pts, atol=1e-6)
    for k in range(n):
        mad = np.abs(arr[k].astype(int) - ref[k].astype(int)).mean()
        assert mad <= 0.8, (k, mad)
    clips, warnings, _ = run_clips(
        "spdlsrc location=%s extensions=%s ! spdlvideodecode name=dec "
        "frames=4 stride=3 threads=2 layout=thwc sampling=random "
        "clips-per-video=5" % (tmp_path, EXTENSIONS))
    assert warnings == [] and len(clips) == 5
    assert_clips_equal_ffmpeg(clips, references, 4, 3)


def test_avi_with_bframes_is_skipped_as_unsupported(tmp_path):
    """AVI has no presentation times (only keyframes have one): with
    B-frames, which frame is shown when is not known before decoding
    (FFmpeg gives them no pts either): skipped, not shown out of order."""
    (tmp_path / "a").mkdir()
    for name, codec in (("mpeg4.avi", ["-c:v", "mpeg4"]),
                        ("h264.avi", ["-c:v", "libx264", "-pix_fmt",
                                      "yuv420p"])):
        videogen.make(tmp_path / "a" / name, "320x240", 25, 1,
                      codec + ["-bf", "2", "-g", "12"])
    # with a video that decodes beside them (an epoch of nothing decoded
    # is an error of its own)
    videogen.make(tmp_path / "a" / "ok.avi", "320x240", 25, 1,
                  ["-c:v", "mpeg4", "-bf", "0", "-g", "12"])
    clips, warnings, counts = run_clips(
        "spdlsrc location=%s extensions=avi ! spdlvideodecode name=dec "
        "frames=4 threads=1" % tmp_path)
    assert [m.get_value("path").rsplit("/", 1)[1] for _, m in clips] == \
        ["ok.avi"]
    assert counts.get_value("unsupported") == 2, counts.to_string()
    assert len(warnings) == 2 and all("B-frames" in w for w in warnings)


def test_pixel_formats_gstreamer_lacks_are_skipped_not_a_crash(tmp_path):
    """FFV1 at 9 and 14 bits (as archives keep video): FFmpeg's decoder
    gives a pixel format GStreamer has none of, and gst-libav's direct
    rendering made a buffer pool of it unchecked, a NULL dereference
    that killed the process (SIGSEGV; the video chain's fuzzer found it
    on a damaged MJPEG frame read as 16 bits). Skipped as unsupported,
    named; the H.264 beside them decoded, also after them on the same
    reused decoder thread. Run in a child process: a crash is a
    failure, not the end of the test run."""
    import json
    import sys

    (tmp_path / "a").mkdir()
    for fmt in ("yuv420p9le", "yuv444p14le", "gbrp14le"):
        videogen.make(tmp_path / "a" / ("ffv1-%s.mkv" % fmt), "64x48", 10,
                      1, ["-c:v", "ffv1", "-pix_fmt", fmt])
    for name in ("h264.mkv", "zz-h264.mkv"):
        videogen.make(tmp_path / "a" / name, "64x48", 10, 1,
                      ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
    code = (
        "import json, gi\n"
        "gi.require_version('Gst', '1.0')\n"
        "from gi.repository import Gst\n"
        "Gst.init(None)\n"
        "from test_video import run_clips\n"
        "clips, warnings, counts = run_clips('spdlsrc location=%s "
        "extensions=mkv ! spdlvideodecode name=dec frames=4 "
        "threads=1')\n"
        "print(json.dumps([[m.get_string('path') for _, m in clips], "
        "warnings, counts.get_value('unsupported')]))\n" % tmp_path)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         timeout=120, cwd=os.path.dirname(__file__),
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    paths, warnings, unsupported = json.loads(out.stdout.decode()
                                              .splitlines()[-1])
    assert sorted(os.path.basename(p) for p in paths) == [
        "h264.mkv", "zz-h264.mkv"]
    assert unsupported == 3, warnings
    for fmt in ("yuv420p9le", "yuv444p14le", "gbrp14le"):
        assert any("ffv1-%s.mkv" % fmt in w and "pixel format" in w
                   for w in warnings), (fmt, warnings)
    assert b"CRITICAL" not in out.stderr, out.stderr[-2000:]


def test_frames_of_another_size_than_the_containers_are_skipped(tmp_path):
    """A WebM whose track states 64x48 while its VP8 frames are 640x480
    (the video chain's fuzzer made such files; a keyframe of a new size
    does the same): the clips, planned and sized on the container's size,
    were delivered as zeros without a word. Skipped as unsupported,
    naming both sizes; the good video beside it decoded."""
    (tmp_path / "a").mkdir()
    src = tmp_path / "src.webm"
    videogen.make(src, "640x480", 10, 1, ["-c:v", "libvpx", "-b:v", "1M"])
    data = bytearray(src.read_bytes())
    # Matroska's PixelWidth (0xB0) and PixelHeight (0xBA), 2-byte values
    for element, stated in ((b"\xb0", 64), (b"\xba", 48)):
        actual = 640 if element == b"\xb0" else 480
        i = data.find(element + b"\x82" + actual.to_bytes(2, "big"))
        assert i >= 0
        data[i + 2:i + 4] = stated.to_bytes(2, "big")
    (tmp_path / "a" / "lie.webm").write_bytes(bytes(data))
    videogen.make(tmp_path / "a" / "ok.webm", "64x48", 10, 1,
                  ["-c:v", "libvpx", "-b:v", "200k"])
    clips, warnings, counts = run_clips(
        "spdlsrc location=%s extensions=webm ! spdlvideodecode name=dec "
        "frames=4 threads=1 layout=thwc" % tmp_path)
    assert [os.path.basename(m.get_string("path")) for _, m in clips] == [
        "ok.webm"]
    assert clips[0][0].mean() > 20          # the good one: a picture
    assert counts.get_value("unsupported") == 1, counts.to_string()
    assert len(warnings) == 1 and "lie.webm" in warnings[0] and \
        "640x480" in warnings[0] and "64x48" in warnings[0], warnings


def test_unreferenced_frames_before_a_clip_are_not_decoded(tmp_path,
                                                           references):
    """H.264 with x264's B-frames (3, a pyramid: about half the frames
    unreferenced) in one 100-frame GOP: clips at its start and end decode
    the reference frames between them, not the unreferenced B-frames
    (FFmpeg's skip_frame=nonref, through gst-libav's QoS), and every frame
    delivered is FFmpeg's. By frame and by time (7 fps on a 25 fps video:
    the frame shown at a clip's start time is before it)."""
    (tmp_path / "a").mkdir()
    path = tmp_path / "a" / "gop.mp4"
    videogen.make(path, "320x240", 25, 4, ["-c:v", "libx264", "-g", "250",
                                           "-bf", "3", "-pix_fmt", "yuv420p"])
    ref_pts, ref = references[str(path)]
    n = len(ref_pts)
    assert n == 100
    types = subprocess.run(
        [videogen.FFPROBE, "-v", "error", "-select_streams", "v:0",
         "-show_entries", "frame=pict_type", "-of", "csv=p=0", str(path)],
        check=True, capture_output=True, env=videogen.ENV,
        stdin=subprocess.DEVNULL).stdout.decode().split()
    assert types.count("B") > n // 2          # the file as meant
    # I- and P-frames are always references: decoded
    references_min = n - types.count("B")

    stats = []
    clips, warnings, _ = run_clips(
        "spdlsrc location=%s extensions=mp4 ! spdlvideodecode name=dec "
        "frames=4 threads=1 layout=thwc sampling=uniform clips-per-video=2"
        % tmp_path, stats=stats)
    assert warnings == [] and len(clips) == 2
    assert_clips_equal_ffmpeg(clips, references, 4, 1)
    assert sorted(pts_of(m)[0] for _, m in clips) == pytest.approx(
        [ref_pts[0], ref_pts[n - 4]])
    decoded = stats[0].get_value("frames-decoded")
    # one pass from the keyframe to the last frame: 100 without skipping
    assert references_min <= decoded <= 0.75 * n, (decoded, references_min)

    clips, warnings, _ = run_clips(
        "spdlsrc location=%s extensions=mp4 ! spdlvideodecode name=dec "
        "frames=4 frame-rate=7 threads=1 layout=thwc sampling=uniform "
        "clips-per-video=2" % tmp_path, stats=stats)
    assert warnings == [] and len(clips) == 2
    for arr, meta in clips:
        pts = pts_of(meta)
        for k, t in enumerate(pts):
            i = int(np.argmin(np.abs(ref_pts - t)))
            assert ref_pts[i] == pytest.approx(t, abs=1e-6)
            if k:
                # the frames shown 1/7 s apart: within a frame of it
                assert abs(t - pts[k - 1] - 1 / 7) < 1 / 25, pts
            mad = np.abs(arr[k].astype(int) - ref[i].astype(int)).mean()
            assert mad <= 0.8, (k, i, mad)
    decoded = stats[1].get_value("frames-decoded")
    assert references_min <= decoded <= 0.75 * n, (decoded, references_min)


def run_all_frames_and_clips(root, path, references, clip_opts):
    """Clips of @path (the only video under @root) by @clip_opts, each at
    FFmpeg's pts with FFmpeg's pixels, none dropped."""
    clips, warnings, counts = run_clips(
        "spdlsrc location=%s extensions=%s ! spdlvideodecode name=dec "
        "threads=1 layout=thwc %s" % (root, EXTENSIONS, clip_opts))
    assert warnings == [], warnings
    return clips


@pytest.mark.parametrize("ext", ["mp4", "mkv"])
def test_open_gop_h264_equals_ffmpeg(tmp_path, references, ext):
    """x264 open GOPs with B-frames: the keyframes after the first are not
    IDR pictures, and gst-libav cannot start decoding at one (the frames
    after it were garbage, MAE 6-21, and a clip at the keyframe at 6 s was
    dropped as corrupt). Clips across keyframes, at keyframes and at the
    leading B-frames before them, are FFmpeg's frames."""
    (tmp_path / "a").mkdir()
    path = tmp_path / "a" / ("opengop." + ext)
    videogen.make(path, "320x240", 25, 8, videogen.OPEN_GOP)
    ref_pts = references[str(path)][0]
    assert len(ref_pts) == 200
    for opts, n, frames, stride in [
            ("frames=16 stride=2 clips-per-video=3 sampling=uniform", 3, 16,
             2),
            ("frames=8 clips-per-video=1 sampling=random seed=1", 1, 8, 1),
            # every 4-frame window start, keyframes and leading B-frames
            # among them
            ("frames=4 clips-per-video=66 sampling=uniform", 66, 4, 1)]:
        clips = run_all_frames_and_clips(tmp_path, path, references, opts)
        assert len(clips) == n, opts
        assert_clips_equal_ffmpeg(clips, references, frames, stride)


@pytest.mark.parametrize("source,start", [(videogen.CLOSED_GOP, 1.3),
                                          (videogen.OPEN_GOP, 1.3),
                                          (videogen.CLOSED_GOP, 0.5),
                                          ("no-edit-list", None)])
def test_stream_copy_cut_follows_the_edit_list(tmp_path, references, source,
                                               start):
    """`ffmpeg -ss 1.3 -i in.mp4 -c copy cut.mp4` keeps the packets from
    the keyframe before 1.3 s and an edit list that starts at 1.3 s:
    qtdemux gave no packet before the edit (the first clip was dropped
    as corrupt, a cut of an open GOP was MAE 31), and every pts was
    0.02 s late (FFmpeg shows the first frame in the edit at 0). After
    its first packet qtdemux also leaves out those shown before the edit:
    a cut at 0.5 s lost B-frames that later frames refer to (2-4 off
    FFmpeg up to the next keyframe)."""
    (tmp_path / "a").mkdir()
    src = tmp_path / "src.mp4"
    path = tmp_path / "a" / "cut.mp4"
    if source == "no-edit-list":
        # B-frames with no edit list: FFmpeg shows the first frame at
        # 0.08 s, not shifted to 0 as under an edit list
        videogen.make(path, "320x240", 25, 2, videogen.CLOSED_GOP +
                      ["-use_editlist", "0"])
        ref_pts = references[str(path)][0]
        assert ref_pts[0] == pytest.approx(0.08)      # the file as meant
        # qtdemux ends a track with no edit list at the movie's duration
        # (2 s): the last two frames shown (2.00, 2.04 s) are not given
        # (docs/video.md, Open)
        ref_pts = ref_pts[:-2]
    else:
        videogen.make(src, "320x240", 25, 8, source)
        videogen.convert(src, path, ["-c", "copy"], ["-ss", str(start)])
        ref_pts = references[str(path)][0]
        assert ref_pts[0] == 0 and len(ref_pts) < 200     # the cut as meant
    ref = references[str(path)][1]
    clips = run_all_frames_and_clips(
        tmp_path, path, references,
        "frames=%d clips-per-video=1" % len(ref_pts))
    arr, meta = clips[0]
    np.testing.assert_allclose(pts_of(meta), ref_pts, atol=1e-6)
    for k in range(len(ref_pts)):
        mad = np.abs(arr[k].astype(int) - ref[k].astype(int)).mean()
        assert mad <= 0.8, (k, mad)
    if source == "no-edit-list":
        return
    clips = run_all_frames_and_clips(
        tmp_path, path, references,
        "frames=4 stride=2 clips-per-video=20 sampling=uniform")
    assert len(clips) == 20
    assert_clips_equal_ffmpeg(clips, references, 4, 2)


# the issue's phone-like picture, its colours fixed (gradients' default
# seed is random)
GRADIENTS = "gradients=n=4:seed=1"

# colour as the stream states it, FFmpeg's defaults for what it leaves out:
# (file name, size, ffmpeg options, lavfi source)
COLOUR_KINDS = {
    # phones: full range (yuvj420p, color_range=pc), no matrix in the VUI
    "full-range": ("a.mp4", "320x240", ["-c:v", "libx264", "-pix_fmt",
                                        "yuvj420p"], GRADIENTS),
    # limited-range samples tagged pc: FFmpeg follows the tag
    "tagged-pc": ("a.mp4", "320x240", ["-c:v", "libx264", "-pix_fmt",
                                       "yuv420p", "-color_range", "pc"],
                  GRADIENTS),
    # untagged HD: BT.601, not GStreamer's BT.709 for HD caps
    "untagged-720p": ("a.mp4", "1280x720", ["-c:v", "libx264", "-pix_fmt",
                                            "yuv420p"], "testsrc2"),
    "untagged-1080p": ("a.mkv", "1920x1080", ["-c:v", "libx264", "-pix_fmt",
                                              "yuv420p"], "testsrc2"),
    # tagged BT.709, in HD and in SD (where GStreamer's default is 601)
    "bt709-720p": ("a.mp4", "1280x720", [
        "-c:v", "libx264", "-pix_fmt", "yuv420p", "-colorspace", "bt709",
        "-color_primaries", "bt709", "-color_trc", "bt709"], "testsrc2"),
    "bt709-sd": ("a.mp4", "320x240", [
        "-c:v", "libx264", "-pix_fmt", "yuv420p", "-colorspace", "bt709",
        "-color_primaries", "bt709", "-color_trc", "bt709"], "testsrc2"),
    # full range (yuvj420p), the JPEG decoder's own planes (libjpeg's
    # IDCT, not FFmpeg's: testsrc2 as test_other_codecs_equal_ffmpeg)
    "mjpeg": ("a.avi", "320x240", ["-c:v", "mjpeg", "-q:v", "3"],
              "testsrc2"),
}


@pytest.mark.parametrize("kind", sorted(COLOUR_KINDS))
def test_colour_is_the_streams_as_ffmpeg_reads_it(kind, tmp_path,
                                                  references):
    """The matrix and range the bitstream states (VUI, JPEG), BT.601 and
    limited range where it states none, as FFmpeg converts: a phone's
    full-range H.264 was converted as limited (MAE 8.1 off FFmpeg), a
    limited stream tagged pc 14.7 off, untagged HD with BT.709 (8.8 and
    4.9 off)."""
    name, size, opts, source = COLOUR_KINDS[kind]
    (tmp_path / "a").mkdir()
    path = tmp_path / "a" / name
    videogen.make(path, size, 25, 0.4, opts, source=source)
    ref_pts, ref = references[str(path)]
    clips, warnings, _ = run_clips(
        "spdlsrc location=%s extensions=%s ! spdlvideodecode name=dec "
        "frames=%d threads=1 layout=thwc" % (tmp_path, EXTENSIONS,
                                             len(ref_pts)))
    assert warnings == [] and len(clips) == 1
    arr, meta = clips[0]
    np.testing.assert_allclose(pts_of(meta), ref_pts, atol=1e-6)
    for k in range(len(ref_pts)):
        mad = np.abs(arr[k].astype(int) - ref[k].astype(int)).mean()
        # swscale's chroma smoothing (FFmpeg's rgb24) against the exact
        # conversion: 0.3-0.81 on these files; the faults this test
        # catches are 4.9 to 14.7 off
        assert mad <= 1.0, (k, mad)


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_rotation_is_applied_as_ffmpeg_shows_it(tmp_path, rotate):
    """A display matrix (`-metadata:s:v:0 rotate=N`, as phones record
    portrait video) is applied by default, as FFmpeg and players show the
    video (clips were as stored: 320x240 for a 240x320 video);
    autorotate=false keeps the frames as stored. Both with a resize and
    a crop (the region converted is of the frame as shown), and through
    VideoLoader's autorotate."""
    import spdlgst

    (tmp_path / "a").mkdir()
    plain = tmp_path / "plain.mp4"
    videogen.make(plain, "320x240", 25, 0.4, ["-c:v", "libx264", "-pix_fmt",
                                              "yuv420p"])
    path = tmp_path / "a" / "rot.mp4"
    videogen.convert(plain, path, ["-c", "copy", "-metadata:s:v:0",
                                   "rotate=%d" % rotate])
    for autorotate in (True, False):
        ref = videogen.decode_rgb(path, autorotate=autorotate)
        if autorotate:
            assert ref.shape[1:3] == ((320, 240) if rotate != 180 else
                                      (240, 320))   # the file as meant
        clips, warnings, _ = run_clips(
            "spdlsrc location=%s extensions=mp4 ! spdlvideodecode name=dec "
            "frames=%d threads=1 layout=thwc autorotate=%s" % (
                tmp_path, len(ref), "true" if autorotate else "false"))
        assert warnings == [] and len(clips) == 1
        arr = clips[0][0]
        assert arr.shape == ref.shape, (autorotate, arr.shape, ref.shape)
        for k in range(len(ref)):
            mad = np.abs(arr[k].astype(int) - ref[k].astype(int)).mean()
            assert mad <= 0.8, (autorotate, k, mad)
        # a crop of a resize reads part of the frame: that of the frame
        # as shown (bit for bit PIL's resize of the whole frame, cropped)
        clips, warnings, _ = run_clips(
            "spdlsrc location=%s extensions=mp4 ! spdlvideodecode name=dec "
            "frames=1 threads=1 layout=thwc size=40 resize=56 crop=random "
            "flip=false sampling=uniform seed=3 autorotate=%s" % (tmp_path,
                                      "true" if autorotate else "false"))
        assert warnings == [] and len(clips) == 1
        crop = clips[0][0][0]
        resized = np.asarray(T.Resize(56)(Image.fromarray(arr[0])))
        found = [(y, x) for y in range(resized.shape[0] - 39)
                 for x in range(resized.shape[1] - 39)
                 if np.array_equal(crop, resized[y:y + 40, x:x + 40])]
        assert found, autorotate
        # VideoLoader's knob: the same frames, as shown or as stored
        with spdlgst.VideoLoader(tmp_path, frames=len(ref), size=None,
                                 resize=None, flip=False, shuffle=False,
                                 batch_size=1, epochs=1, threads=1,
                                 layout="THWC", output="numpy",
                                 autorotate=autorotate) as loader:
            (batch,) = list(loader)
        np.testing.assert_array_equal(batch.clips[0], arr)


def test_max_decode_frames_bounds_each_clip(tmp_path):
    """max-decode-frames counts the frames one clip decodes from its
    keyframes, not all clips of a video together: a 2-minute video with
    10 s GOPs and 32 clips (about 130 frames each) was skipped as
    too-large (over 2000 together) and the epoch failed. A clip over the
    limit is left out, counted as too-many-decode-frames; VideoLoader
    has the knob."""
    import spdlgst

    (tmp_path / "a").mkdir()
    path = tmp_path / "a" / "long.mp4"
    videogen.make(path, "160x120", 25, 120, ["-c:v", "libx264", "-preset",
                                             "ultrafast", "-g", "250",
                                             "-pix_fmt", "yuv420p"])
    ref_pts = videogen.probe_pts(path)
    assert len(ref_pts) == 3000
    launch = ("spdlsrc location=%s extensions=mp4 ! spdlvideodecode "
              "name=dec frames=8 clips-per-video=32 sampling=uniform "
              "threads=1 layout=thwc" % tmp_path)
    clips, warnings, counts = run_clips(launch)
    assert warnings == [] and len(clips) == 32
    # clip c starts at frame (3000 - 8) * c / 31: at most 250 frames
    # after its keyframe
    clips, warnings, counts = run_clips(launch + " max-decode-frames=100")
    starts = [int((3000 - 8) * c / 31) for c in range(32)]
    near = [s for s in starts if s % 250 + 8 <= 100]
    assert 0 < len(near) < 32
    assert sorted(pts_of(m)[0] for _, m in clips) == pytest.approx(
        [ref_pts[s] for s in near])
    assert counts.get_value("too-many-decode-frames") == 1
    assert len(warnings) == 1 and "max-decode-frames=100" in warnings[0]
    with spdlgst.VideoLoader(tmp_path, frames=8, clips_per_video=32,
                             sampling="uniform", size=None, resize=None,
                             flip=False, shuffle=False, batch_size=8,
                             epochs=1, threads=1, output="numpy",
                             max_decode_frames=100) as loader:
        assert "max-decode-frames=100" in loader.launch_line
        n = sum(len(b.labels) for b in loader)
    assert n == len(near)


def test_cut_starting_at_a_recovery_point_skips_its_first_gop(tmp_path,
                                                              references):
    """A stream-copy cut of an open-GOP video at 2.5 s starts at the
    non-IDR keyframe of 2 s: no keyframe before it to start decoding at,
    and gst-libav cannot start at it. The clips in its first GOP are left
    out, counted as unsupported with a warning saying why (they were
    garbage or 'could not be decoded'); every other clip is FFmpeg's."""
    (tmp_path / "a").mkdir()
    src = tmp_path / "src.mp4"
    videogen.make(src, "320x240", 25, 8, videogen.OPEN_GOP)
    path = tmp_path / "a" / "cut.mp4"
    videogen.convert(src, path, ["-c", "copy"], ["-ss", "2.5"])
    ref_pts = references[str(path)][0]
    clips, warnings, counts = run_clips(
        "spdlsrc location=%s extensions=mp4 ! spdlvideodecode name=dec "
        "frames=4 threads=1 layout=thwc clips-per-video=12 "
        "sampling=uniform" % tmp_path)
    # the first GOP: up to the cut's second keyframe (4 s in the source)
    keys = subprocess.run(
        [videogen.FFPROBE, "-v", "error", "-select_streams", "v:0",
         "-show_entries", "frame=key_frame,pts_time", "-of", "csv=p=0",
         str(path)], check=True, capture_output=True, env=videogen.ENV,
        stdin=subprocess.DEVNULL).stdout.decode().split()
    second_key = sorted(float(t) for k, t in (line.split(",")
                                              for line in keys)
                        if k == "1" and float(t) > 0.5)[0]
    n = len(ref_pts)
    starts = [ref_pts[int((n - 4) * c / 11)] for c in range(12)]
    kept = [t for t in starts if t >= second_key - 1e-6]
    assert 0 < len(kept) < 12
    assert sorted(pts_of(m)[0] for _, m in clips) == pytest.approx(kept)
    assert counts.get_value("unsupported") == 1, counts.to_string()
    assert len(warnings) == 1 and "recovery point" in warnings[0]
    assert_clips_equal_ffmpeg(clips, references, 4, 1)
    # with a low max-decode-frames too, the clips over it are named and
    # counted in the same warning (they were left out unnamed: only the
    # first reason was given)
    few, warnings, counts = run_clips(
        "spdlsrc location=%s extensions=mp4 ! spdlvideodecode name=dec "
        "frames=4 threads=1 layout=thwc clips-per-video=12 "
        "sampling=uniform max-decode-frames=80" % tmp_path)
    assert 0 < len(few) < len(kept) and len(warnings) == 1, warnings
    assert "%d of its 12 clips dropped; %d: " % (
        12 - len(few), 12 - len(kept)) in warnings[0], warnings
    assert "recovery point" in warnings[0]
    assert "%d: one needs" % (len(kept) - len(few)) in warnings[0]
    assert "max-decode-frames=80" in warnings[0]
