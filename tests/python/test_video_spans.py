"""Video-text manifests (WebVid-style CSV: a path, start and end seconds,
a caption): spdlvideodecode takes each row's clips inside its span only,
frames equal to FFmpeg's at those times, captions byte-equal; a span past
the video's end skipped by reason."""
import csv

import numpy as np
import pytest
from gi.repository import Gst

import spdltest
import videogen

CAPTIONS = ['A "red" car, driving', "caf\u00e9 \u2603\nsecond line", "",
            "plain"]


def clip_of(sample):
    """The clip [T, 3, H, W] and its meta: index, path, pts, the record's
    values."""
    st = sample.get_caps().get_structure(0)
    dims = [int(d) for d in st.get_value("dimensions").split(":")]
    buf = sample.get_buffer()
    ok, info = buf.map(Gst.MapFlags.READ)
    arr = np.frombuffer(info.data, np.uint8).reshape(dims[::-1]).copy()
    buf.unmap(info)
    s = buf.get_custom_meta("GstSpdlSampleMeta").get_structure()
    pts, rec = s.get_value("pts"), s.get_value("record")
    return arr, dict(index=s.get_value("index"), path=s.get_value("path"),
                     pts=[pts[i] for i in range(len(pts))],
                     values=[rec.get_value(f"v{i}") for i in
                             range(rec.n_fields())] if rec else [])


def run(launch):
    clips, warnings, error, counts = spdltest.run_samples(
        launch, clip_of, counts_of=("dec",))
    return clips, warnings, error, counts["dec"]


@pytest.fixture(scope="module")
def webvid(tmp_path_factory):
    """Two 4 s H.264 videos (25 fps, B-frames, 2 s GOPs) in videos/."""
    root = tmp_path_factory.mktemp("webvid")
    (root / "videos").mkdir()
    refs = {}
    for name in ("v1.mp4", "v2.mp4"):
        path = root / "videos" / name
        videogen.make(path, "160x120", 25, 4, [
            "-c:v", "libx264", "-g", "50", "-bf", "2", "-pix_fmt", "yuv420p"])
        refs[name] = (videogen.probe_pts(path), videogen.decode_rgb(path))
    return root, refs


ROWS = [("v1.mp4", 1.0, 2.0), ("v2.mp4", 2.2, 3.9), ("v1.mp4", 0.0, 0.8),
        ("v2.mp4", 0.5, "")]


def write_csv(path, rows, captions=CAPTIONS):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["videoid", "path", "start", "end", "name", "page_dir"])
        for i, (name, start, end) in enumerate(rows):
            w.writerow([name[:-4], f"videos/{name}", start, end,
                        captions[i % len(captions)], "pages/001"])


def test_clips_inside_each_rows_span(webvid):
    """Every clip of a row lies in [start, end) from the video's first
    frame (to the end without one), its frames FFmpeg's there, the
    caption beside it; clips of the whole span are spread over it."""
    root, refs = webvid
    write_csv(root / "clips.csv", ROWS)
    clips, warnings, error, counts = run(
        f"spdlsrc location={root}/clips.csv fields=name:string:empty ! "
        "spdlvideodecode name=dec frames=4 stride=2 clips-per-video=3 "
        "sampling=uniform")
    assert error is None and not warnings, (error, warnings)
    assert len(clips) == 3 * len(ROWS)
    for arr, meta in clips:
        name, start, end = ROWS[meta["index"]]
        ref_pts, ref = refs[name]
        first = ref_pts[0]
        end = float(end) if end != "" else 1e9
        assert all(first + start - 1e-6 <= t < first + end for t in
                   meta["pts"]), (name, start, end, meta["pts"])
        idx = [int(np.argmin(np.abs(ref_pts - t))) for t in meta["pts"]]
        for k, i in enumerate(idx):
            # [T, 3, H, W] against FFmpeg's rgb24 [H, W, 3]
            frame = arr[k].transpose(1, 2, 0).astype(int)
            assert np.abs(frame - ref[i]).mean() <= 0.8
        assert meta["values"] == [CAPTIONS[meta["index"]]]
    # uniform sampling: the first clip at the span's first frame
    for i, (name, start, _) in enumerate(ROWS):
        ref_pts = refs[name][0]
        firsts = [m["pts"][0] for _, m in clips if m["index"] == i]
        want = ref_pts[np.searchsorted(ref_pts, ref_pts[0] + start - 1e-6)]
        assert abs(min(firsts) - want) < 1e-6, (name, firsts, want)


def test_bad_spans_skipped_by_reason(webvid):
    """A span starting past the last frame (past-end), one ending more
    than a frame past the video's end (bad-duration), a negative start
    (spdlsrc's bad-span): skipped, warned with the manifest row; the good
    rows delivered."""
    root, refs = webvid
    rows = [("v1.mp4", 1.0, 2.0), ("v1.mp4", 4.5, 5.0),
            ("v2.mp4", 3.0, 4.5), ("v2.mp4", -1.0, 1.0),
            ("v2.mp4", 3.0, 4.01)]
    write_csv(root / "bad.csv", rows)
    clips, warnings, error, counts = run(
        f"spdlsrc location={root}/bad.csv ! spdlvideodecode name=dec "
        "frames=2 stride=1")
    assert error is None
    assert [m["index"] for _, m in clips] == [0, 4]
    assert counts == {"total": 2, "past-end": 1, "bad-duration": 1}
    # the manifest's lines: the second caption holds a line break
    assert any("bad.csv:3)" in w and "v1.mp4" in w and "past" in w
               for w in warnings), warnings
    assert any("bad.csv:5)" in w and "v2.mp4" in w and "disagrees" in w
               for w in warnings), warnings
    assert any("bad.csv:6)" in w and "negative offset" in w
               for w in warnings), warnings


def test_webvid_csv_path_formed_from_columns(webvid):
    """WebVid's own columns: the path formed as "{page_dir}/{videoid}.mp4"
    (path-column as a template), start and end, the caption in name."""
    root, refs = webvid
    with open(root / "webvid.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["videoid", "contentUrl", "duration", "page_dir", "name",
                    "start", "end"])
        w.writerow(["v2", "https://example.invalid/v2.mp4", "PT00H00M04S",
                    "videos", CAPTIONS[0], 1.0, 3.0])
        w.writerow(["v1", "https://example.invalid/v1.mp4", "PT00H00M04S",
                    "videos", CAPTIONS[1], 0.0, 1.0])
    clips, warnings, error, _ = run(
        f"spdlsrc location={root}/webvid.csv "
        "path-column={page_dir}/{videoid}.mp4 fields=name:string ! "
        "spdlvideodecode name=dec frames=2 stride=1 sampling=uniform")
    assert error is None and not warnings, (error, warnings)
    assert [m["path"].split("/")[-2:] for _, m in clips] == [
        ["videos", "v2.mp4"], ["videos", "v1.mp4"]]
    assert [m["values"] for _, m in clips] == [[CAPTIONS[0]], [CAPTIONS[1]]]
    for (arr, meta), (name, start, end) in zip(
            clips, [("v2.mp4", 1.0, 3.0), ("v1.mp4", 0.0, 1.0)]):
        first = refs[name][0][0]
        assert all(first + start - 1e-6 <= t < first + end
                   for t in meta["pts"])
    _, _, error, _ = spdltest.run_samples(
        f"spdlsrc location={root}/webvid.csv path-column={{page}}/{{id}}",
        lambda s: None)
    assert "names no column \"page\"" in error, error
