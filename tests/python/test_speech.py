"""Speech and video-text manifests through the recipe loaders: each NeMo
entry's whole segment [offset, offset + duration) as FFmpeg decodes it,
transcripts byte-equal to the manifest's, batches padded to the longest
with lengths, entries over max_duration skipped and counted, duration
buckets and batches by total seconds (deterministic, resumable, len()
right), and VideoLoader clips from each entry's start with captions."""
import csv
import json
import os

import numpy as np
import pytest
import scipy.signal as sps
from gi.repository import Gst

import audiogen
import spdlgst
import videogen
from spdlgst.sampleaudio import make_asr

Gst.init(None)


@pytest.fixture(scope="module")
def asr(tmp_path_factory):
    """4 recordings of 25 s (FLAC and Opus at 16 and 48 kHz) cut by a NeMo
    manifest into 2 to 20 s utterances, and 4 whole short files."""
    root = tmp_path_factory.mktemp("asr")
    entries = make_asr(str(root), recordings=4, short_files=4, seed=3,
                       recording_seconds=25.0, short_seconds=(2.0, 6.0))
    return root, entries


def read_epoch(location, **kwargs):
    """{dataset index: (audio [C, length] float32, text, length)}, the
    batches (as lists of indices), and the loader's skip counts."""
    args = dict(duration=None, shuffle=False, epochs=1, threads=2,
                batch_size=4, output="numpy")
    args.update(kwargs)
    out, batches = {}, []
    with spdlgst.AudioLoader(location, **args) as loader:
        for b in loader:
            audio, lengths, text = b.audio, b.lengths, b["text"]
            assert audio.dtype == np.float32 and lengths.dtype == np.int64
            assert isinstance(text, list) and len(text) == len(lengths)
            assert b.text == text
            batches.append(list(b.indices))
            for i, index in enumerate(b.indices):
                assert index not in out, f"entry {index} twice"
                out[index] = (audio[i, :, :lengths[i]].copy(), text[i],
                              int(lengths[i]))
        skipped = loader.skipped()
    return out, batches, skipped


def reference_resample(x, rate, out_rate):
    """scipy's resample_poly with a Kaiser filter of 64 zero crossings a
    side and beta 14 (well over 100 dB stop band)."""
    g = np.gcd(rate, out_rate)
    up, down = out_rate // g, rate // g
    m = max(up, down)
    h = sps.firwin(2 * 64 * m + 1, 1.0 / m, window=("kaiser", 14.0))
    return sps.resample_poly(x.astype(np.float64), up, down, window=h)


def same(x, y):
    """Equal samples: bit for bit, but for float denormals (below 1e-30),
    which one run of the resampler can flush to zero and another not (a
    decoding thread's flush-to-zero state)."""
    return x.shape == y.shape and np.allclose(x, y, rtol=0, atol=1e-30)


def snr_db(ref, x):
    return 10 * np.log10(np.sum(ref ** 2) / max(np.sum((x - ref) ** 2),
                                                 1e-30))


@pytest.mark.parametrize("sample_rate", [16000, 48000])
def test_segments_equal_ffmpeg_decode(asr, sample_rate):
    """Each entry's segment is FFmpeg's decode of the whole file sliced at
    [offset, offset + duration): bit-exact for FLAC at its own rate, within
    1e-4 for Opus (FFmpeg's decoder) at its 48 kHz, 60 dB from the reference
    resampling of FFmpeg's decode otherwise (in the band both resamplers
    pass); as many samples (one more or less where resampled)."""
    root, entries = asr
    got, _, skipped = read_epoch(root / "manifest.json",
                                 sample_rate=sample_rate)
    assert sorted(got) == list(range(len(entries)))
    assert sum(skipped.values()) == 0, skipped
    decoded = {}
    for index, e in enumerate(entries):
        path = str(root / e["audio_filepath"])
        if path not in decoded:
            decoded[path] = ffmpeg_decode(path)
        # FFmpeg decodes Ogg Opus at 48 kHz whatever rate it was made from
        rate = 48000 if path.endswith(".opus") else _flac_rate(path)
        x, _, length = got[index]
        offset = e["offset"] or 0.0
        start = round(offset * sample_rate)
        n = round(e["duration"] * sample_rate)
        if rate == sample_rate:
            ref = decoded[path][start:start + n]
            assert length == n == len(ref), (e, length, n, len(ref))
            if path.endswith(".flac"):
                assert np.array_equal(x[0], ref), e
            else:
                assert np.abs(x[0] - ref).max() <= 1e-4, e
        else:
            key = (path, sample_rate)
            if key not in decoded:
                decoded[key] = reference_resample(decoded[path], rate,
                                                  sample_rate)
            ref = decoded[key][start:start + n]
            assert abs(length - n) <= 1, (e, length, n)
            m = min(length, len(ref))
            # in the band both resamplers pass (below 0.85 of the lower
            # Nyquist): above it their anti-alias filters differ by design,
            # and this speech's fricatives are white noise up to 24 kHz
            # (full band, the two differ by 19 to 28 dB, as FFmpeg's swr
            # and GStreamer's do)
            band = sps.firwin(1023, 0.85 * min(rate, sample_rate) / 2,
                              fs=sample_rate, window=("kaiser", 14.0))
            r = np.convolve(ref[:m], band)
            y = np.convolve(x[0, :m].astype(np.float64), band)
            assert snr_db(r, y) >= 60.0, (e, snr_db(r, y))


def ffmpeg_decode(path):
    """FFmpeg's float decode of the whole file at its own rate, mono; Ogg
    Opus with FFmpeg's own decoder, which the chain decodes with (as
    torchcodec does): libopus differs from it by 10 to 14 dB SNR on this
    speech, though both are Opus decoders."""
    import subprocess

    out = subprocess.run(["ffmpeg", "-v", "error",
                          "-i", path, "-f", "f32le", "-ac", "1", "-"],
                         check=True, capture_output=True, timeout=120).stdout
    return np.frombuffer(out, "<f4").copy()


def _flac_rate(path):
    import subprocess

    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries",
                          "stream=sample_rate", "-of", "csv=p=0", path],
                         capture_output=True, text=True, check=True).stdout
    return int(out.strip())


def test_transcripts_byte_equal_and_padding(asr):
    """batch["text"] is each entry's text, byte for byte (quotes, a
    backslash, non-ASCII letters from JSON escapes); audio is padded with
    zeros to the longest of its batch, lengths in samples."""
    root, entries = asr
    with spdlgst.AudioLoader(root / "manifest.json", duration=None,
                             batch_size=3, shuffle=True, seed=5, epochs=1,
                             threads=2) as loader:
        seen = 0
        for b in loader:
            assert tuple(b.audio.shape[:2]) == (len(b.indices), 1)
            assert b.audio.shape[2] == int(b.lengths.max())
            for i, index in enumerate(b.indices):
                e = entries[index]
                assert b["text"][i].encode() == e["text"].encode()
                assert b.paths[i] == str(root / e["audio_filepath"])
                length = int(b.lengths[i])
                assert abs(length - round(e["duration"] * 16000)) <= 1
                assert not b.audio[i, :, length:].any()
                assert b.audio[i, :, :length].abs().max() > 0.05
                seen += 1
    assert seen == len(entries)


def test_csv_manifest_gives_the_same_segments(asr):
    """The same rows as a CSV (path, offset, duration, text) give the same
    samples and transcripts as NeMo's JSON Lines."""
    root, entries = asr
    nemo, _, _ = read_epoch(root / "manifest.json")
    table, _, _ = read_epoch(root / "manifest.csv")
    assert sorted(table) == sorted(nemo)
    for index, (x, text, length) in nemo.items():
        y, text2, length2 = table[index]
        assert text2 == text and length2 == length
        assert same(x, y), entries[index]


def test_max_duration_skips_counted(asr):
    """Entries longer than max_duration are skipped (too-long, counted),
    the others all delivered."""
    root, entries = asr
    durations = sorted(e["duration"] for e in entries)
    limit = (durations[len(durations) // 2] +
             durations[len(durations) // 2 + 1]) / 2
    long = {i for i, e in enumerate(entries) if e["duration"] > limit}
    assert 0 < len(long) < len(entries)
    got, _, skipped = read_epoch(root / "manifest.json", max_duration=limit)
    assert set(got) == set(range(len(entries))) - long
    assert skipped.get("too-long") == len(long), skipped


def test_entries_without_transcripts(asr, tmp_path):
    """A manifest whose entries have transcripts: one without is skipped,
    named and counted (missing-field), never given an empty text; a
    manifest without any (a CSV without a text column) gives the segments
    with batch.text None."""
    root, entries = asr
    some = tmp_path / "some.json"
    with open(some, "w", encoding="utf-8") as f:
        for i, e in enumerate(entries[:5]):
            line = {"audio_filepath": str(root / e["audio_filepath"]),
                    "offset": e["offset"] or 0.0, "duration": e["duration"]}
            if i % 2 == 0:
                line["text"] = e["text"]
            f.write(json.dumps(line) + "\n")
    got, _, skipped = read_epoch(some)
    assert sorted(got) == [0, 2, 4]
    assert [got[i][1] for i in (0, 2, 4)] == \
        [entries[i]["text"] for i in (0, 2, 4)]
    assert skipped.get("missing-field") == 2, skipped
    bare = tmp_path / "bare.csv"
    with open(bare, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["audio_filepath", "offset", "duration"])
        for e in entries[:3]:
            w.writerow([root / e["audio_filepath"], e["offset"] or 0,
                        e["duration"]])
    with spdlgst.AudioLoader(bare, duration=None, shuffle=False, epochs=1,
                             threads=2, output="numpy") as loader:
        assert "fields=" not in loader.launch_line
        batches = list(loader)
        assert sum(v for v in loader.skipped().values()) == 0
    assert [list(b.indices) for b in batches] == [[0, 1, 2]]
    assert batches[0].text is None


def test_bucket_arguments_checked(tmp_path):
    """buckets and batch_duration need whole segments; bad values name
    their argument; the launch line carries them."""
    with pytest.raises(ValueError, match="duration=None"):
        spdlgst.AudioLoader(tmp_path, buckets=4)
    with pytest.raises(ValueError, match="duration=None"):
        spdlgst.AudioLoader(tmp_path, batch_duration=60)
    with pytest.raises(ValueError, match="batch_duration"):
        spdlgst.AudioLoader(tmp_path, duration=None, batch_duration=0)
    with pytest.raises(ValueError, match="max_duration"):
        spdlgst.AudioLoader(tmp_path, duration=None, max_duration=-1)
    with pytest.raises(TypeError, match="buckets"):
        spdlgst.AudioLoader(tmp_path, duration=None, buckets=2.5)
    with pytest.raises(ValueError, match="src_properties"):
        spdlgst.AudioLoader(tmp_path, duration=None,
                            src_properties={"buckets": 2})
    line = spdlgst.AudioLoader.launch_line_for(
        tmp_path, duration=None, buckets=3, bucket_window=500,
        batch_duration=90, max_duration=20)
    assert "buckets=3 bucket-window=500 batch-duration=90.0" in line
    assert "max-span=20.0" in line and "duration=0" in line
    # batch_size caps a batch by count: 1024 unless given
    assert "batch-size=1024" in line
    assert "batch-size=7" in spdlgst.AudioLoader.launch_line_for(
        tmp_path, duration=None, batch_duration=90, batch_size=7)
    assert "batch-size=32" in spdlgst.AudioLoader.launch_line_for(tmp_path)


def boundaries(durations, buckets):
    """spdlsrc's bucket boundaries (gstspdlbuckets.h): boundary k is the
    (k x n / buckets)-th smallest duration."""
    d = sorted(durations)
    return [d[k * len(d) // buckets] for k in range(1, buckets)]


def bucket_of(duration, bounds):
    return sum(b <= duration for b in bounds)


def test_buckets_keep_batches_within_a_bucket(asr):
    """With buckets every batch's entries are of one duration bucket;
    every entry comes once; batch_size caps a batch."""
    root, entries = asr
    durations = [e["duration"] for e in entries]
    bounds = boundaries(durations, 3)
    got, batches, _ = read_epoch(root / "manifest.json", buckets=3,
                                 shuffle=True, seed=1, batch_size=3)
    assert sorted(got) == list(range(len(entries)))
    assert max(len(b) for b in batches) <= 3
    for b in batches:
        assert len({bucket_of(durations[i], bounds) for i in b}) == 1, \
            ([durations[i] for i in b], bounds)


def test_batch_duration_respected(asr):
    """batch_duration caps each batch's total seconds (a longer entry is a
    batch of its own); every entry comes once."""
    root, entries = asr
    durations = [e["duration"] for e in entries]
    got, batches, _ = read_epoch(root / "manifest.json", buckets=2,
                                 batch_duration=25.0, batch_size=None,
                                 shuffle=True, seed=2)
    assert sorted(got) == list(range(len(entries)))
    assert any(len(b) > 1 for b in batches)
    for b in batches:
        assert len(b) == 1 or sum(durations[i] for i in b) <= 25.0, \
            [durations[i] for i in b]


def bucketed(root, **kwargs):
    args = dict(duration=None, buckets=2, batch_duration=20.0, shuffle=True,
                epochs=1, threads=2, output="numpy")
    args.update(kwargs)
    return spdlgst.AudioLoader(root / "manifest.json", **args)


def test_bucketed_order_deterministic_by_seed_and_len(asr):
    """The same seed gives the same batches; another seed another order;
    len() is the number of batches the epoch gives."""
    root, _ = asr

    def epoch(seed):
        with bucketed(root, seed=seed) as loader:
            n = len(loader)
            out = [list(b.indices) for b in loader]
        assert n == len(out)
        return out
    a = epoch(7)
    assert epoch(7) == a
    assert epoch(8) != a


def test_bucketed_resume_gives_the_same_batches(asr):
    """A state taken mid-epoch with buckets on resumes with exactly the
    batches (samples and audio) an uninterrupted run gives next."""
    root, _ = asr

    def rows(b):
        return (list(b.indices), [x[:, :n].copy() for x, n in
                                  zip(b.audio, b.lengths)], list(b["text"]))
    with bucketed(root, seed=4) as loader:
        whole = [rows(b) for b in loader]
    assert len(whole) >= 4
    with bucketed(root, seed=4) as loader:
        it = iter(loader)
        for _ in range(2):
            next(it)
        state = json.loads(json.dumps(loader.state_dict()))
    with bucketed(root, seed=4) as loader:
        loader.load_state_dict(state)
        rest = [rows(b) for b in loader]
    assert [r[0] for r in rest] == [r[0] for r in whole[2:]]
    for r, w in zip(rest, whole[2:]):
        assert r[2] == w[2]
        for index, x, y in zip(r[0], r[1], w[1]):
            assert same(x, y), \
                (index, x.shape, y.shape, np.abs(x - y).max()
                 if x.shape == y.shape else None)


def test_bucketed_ranks_take_whole_batches(asr):
    """ranks=(r, 2): each rank's batches are whole batches of the one-rank
    order (none split or merged), len() is the rank's count, and the two
    ranks together give every batch (a short one padded from the rank's
    own)."""
    root, entries = asr
    with bucketed(root, seed=6, ranks=None) as loader:
        whole = [tuple(b.indices) for b in loader]
    got = []
    for rank in (0, 1):
        with bucketed(root, seed=6, ranks=(rank, 2)) as loader:
            n = len(loader)
            mine = [tuple(b.indices) for b in loader]
        assert n == len(mine) == -(-len(whole) // 2), (n, len(mine))
        assert set(mine) <= set(whole), (mine, whole)
        got += mine
    assert set(got) == set(whole)


@pytest.fixture(scope="module")
def webvid(tmp_path_factory):
    """A 4 s 25 fps video and a CSV of three entries of it in WebVid's
    columns (videoid, contentUrl, duration as ISO 8601, page_dir, name:
    the caption; the file at page_dir/videoid.mp4 as its downloaders store
    it) with start and end: two spans of exactly 4 frames, one of 1.5 s."""
    root = tmp_path_factory.mktemp("webvid")
    os.makedirs(root / "010001_010050")
    videogen.make(str(root / "010001_010050" / "1066674.mp4"), "320x240",
                  25, 4, ["-c:v", "libx264", "-g", "12", "-bf", "2",
                          "-pix_fmt", "yuv420p"])
    rows = [("1066674", 0.0, 0.16, "a dog runs, \"fast\""),
            ("1066674", 1.24, 1.4, "café at night"),
            ("1066674", 2.0, 3.5, "the end")]
    with open(root / "webvid.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["videoid", "contentUrl", "duration", "page_dir",
                    "name", "start", "end"])
        for vid, start, end, name in rows:
            w.writerow([vid, f"https://example.invalid/{vid}.mp4",
                        "PT00H00M04S", "010001_010050", name, start, end])
    return root, rows


def test_video_manifest_clips_from_start_with_captions(webvid):
    """Each entry's clip is taken inside its [start, end) (times from the
    first frame, as FFmpeg's pts say); a span of exactly a clip's frames
    gives the clip from its start: FFmpeg's frames there. Captions are
    byte-equal to the CSV's."""
    root, rows = webvid
    path = str(root / "010001_010050" / "1066674.mp4")
    pts = list(videogen.probe_pts(path))
    frames = videogen.decode_rgb(path)
    with spdlgst.VideoLoader(
            root / "webvid.csv", captions="name", frames=4, batch_size=3,
            size=None, resize=None, shuffle=False, epochs=1, threads=2,
            layout="THWC", output="numpy",
            src_properties={"path-column": "{page_dir}/{videoid}.mp4"}) \
            as loader:
        batches = list(loader)
        assert batches[0].paths == [path] * 3
    assert len(batches) == 1
    b = batches[0]
    assert b.captions == [r[3] for r in rows] == b["name"]
    for i, (_, start, end, _) in enumerate(rows):
        assert all(start - 1e-6 <= p < end for p in b.pts[i]), \
            (start, end, list(b.pts[i]))
        if round((end - start) * 25) == 4:
            first = pts.index(min(p for p in pts if p >= start - 1e-6))
            assert abs(b.pts[i][0] - pts[first]) < 1e-6, list(b.pts[i])
            for k in range(4):
                diff = np.abs(b.clips[i, k].astype(int) -
                              frames[first + k].astype(int))
                assert diff.mean() < 1.0, (start, k, diff.mean())


def test_video_captions_checked(tmp_path):
    with pytest.raises(ValueError, match="captions"):
        spdlgst.VideoLoader(tmp_path, captions="a,b")
    with pytest.raises(ValueError, match="captions"):
        spdlgst.VideoLoader(tmp_path, captions="name", fields=("video", "name"))
    line = spdlgst.VideoLoader.launch_line_for(tmp_path, captions="name")
    assert "fields=name:string" in line


def _write_nemo(path, lines, newline="\n", bom=False):
    with open(path, "w", encoding="utf-8", newline="") as f:
        if bom:
            f.write("\ufeff")
        for line in lines:
            f.write((line if isinstance(line, str) else
                     json.dumps(line, ensure_ascii=False)) + newline)


def test_nemo_manifest_as_nemo_reads_it(tmp_path):
    """A NeMo manifest as tools write them: a BOM, CRLF lines, a trailing
    blank line, extra keys, unicode transcripts, entries of one file at
    offsets with many decimals, audio_filename on some rows beside
    audio_filepath on others (NeMo takes either, row by row), and a
    text_filepath whose file ends with a newline (NeMo's manifest reader
    drops its newlines: f.read().replace('\\n', ''))."""
    rate = 16000
    audiogen.make(str(tmp_path / "a.flac"), "sweep", rate, 5.0)
    ref = ffmpeg_decode(str(tmp_path / "a.flac"))
    (tmp_path / "t.txt").write_text("two lines\nof text\n", encoding="utf-8")
    lines = [
        {"audio_filepath": "a.flac", "duration": 1.25,
         "offset": 0.123456789, "text": "héllo wörld 中文", "lang": "de"},
        {"audio_filename": str(tmp_path / "a.flac"), "duration": 1.0,
         "offset": 2.0, "text": "second"},
        {"audio_filepath": "a.flac", "duration": 1.0, "offset": 2.0,
         "text_filepath": "t.txt"},
        {"audio_filepath": "a.flac", "duration": 0.5,
         "normalized_text": "norm"},
        "",
    ]
    _write_nemo(tmp_path / "m.json", lines, newline="\r\n", bom=True)
    got, _, skipped = read_epoch(tmp_path / "m.json")
    assert sorted(got) == [0, 1, 2, 3], skipped
    assert [got[i][1] for i in range(4)] == [
        "héllo wörld 中文", "second", "two linesof text", "norm"]
    for i, (offset, duration) in enumerate(((0.123456789, 1.25), (2.0, 1.0),
                                            (2.0, 1.0), (0.0, 0.5))):
        first = round(offset * rate)
        want = ref[first:first + round(duration * rate)]
        assert same(got[i][0][0], want), i


def test_rounded_manifest_durations_keep_whole_files(tmp_path):
    """Whole-file entries whose durations a tool rounded up (to 2
    decimals, or from an MP3's padded length) by up to Lhotse's 25 ms
    tolerance are the file to its end, not skipped: only a duration
    further past the file's end disagrees with it (bad-duration)."""
    rate = 16000
    n = round(3.0051 * rate)
    audiogen.make(str(tmp_path / "a.flac"), "tone", rate, n / rate)
    assert ffmpeg_decode(str(tmp_path / "a.flac")).shape == (n,)
    lines = [{"audio_filepath": "a.flac", "duration": d, "text": str(d)}
             for d in (3.0, 3.01, 3.02, 3.1)]
    _write_nemo(tmp_path / "m.json", lines)
    got, _, skipped = read_epoch(tmp_path / "m.json")
    assert sorted(got) == [0, 1, 2]
    assert [got[i][2] for i in range(3)] == [48000, n, n]
    assert skipped.get("bad-duration") == 1, skipped


def test_manifest_fields_never_taken_for_the_audio(tmp_path):
    """fields= on a manifest naming only its other keys (NeMo's "lang")
    would have the first taken for the audio and silently never given:
    an error telling to name the audio first; named so, the key comes
    beside the transcript."""
    (tmp_path / "m.json").write_text(json.dumps(
        {"audio_filepath": "a.wav", "duration": 1.0, "text": "t",
         "lang": "de"}) + "\n")
    (tmp_path / "m.csv").write_text("path,text,lang\na.wav,t,de\n")
    for location in ("m.json", "m.csv"):
        for fields in (("lang",), ("text", "lang")):
            with pytest.raises(ValueError, match="none names the media"):
                spdlgst.AudioLoader.launch_line_for(
                    str(tmp_path / location), duration=None, fields=fields)
    line = spdlgst.AudioLoader.launch_line_for(
        str(tmp_path / "m.json"), duration=None, fields=("audio", "lang"))
    assert "fields=lang,text" in line
    line = spdlgst.AudioLoader.launch_line_for(
        str(tmp_path / "m.json"), duration=None,
        fields=("audio_filename", "lang"))
    assert "fields=lang,text" in line


def test_max_duration_left_out_of_bucketed_batches(tmp_path):
    """max_duration with buckets and batches by seconds filters the
    manifest before its batches are made (as Lhotse and NeMo filter by
    duration before bucketing): the entries over it are skipped unread
    and counted as too-long, no batch is left empty by them, so len() is
    the batches one rank yields and two ranks yield their real batches,
    no padded copies (without the filter, a bucket of long entries gave
    empty batches: 17 of 45 delivered, and ranks repeating batches)."""
    rate = 16000
    audiogen.make(str(tmp_path / "a.flac"), "sweep", rate, 40.0)
    rng = np.random.default_rng(4)
    lines = []
    for i in range(120):
        d = float(rng.uniform(0.5, 15.0))
        lines.append({"audio_filepath": "a.flac", "duration": round(d, 3),
                      "offset": round(float(rng.uniform(0, 39.9 - d)), 3),
                      "text": f"u{i}"})
    _write_nemo(tmp_path / "m.json", lines)
    short = {i for i, e in enumerate(lines) if e["duration"] <= 6.0}
    assert 30 < len(short) < 90

    def run(ranks):
        with spdlgst.AudioLoader(tmp_path / "m.json", duration=None,
                                 buckets=3, batch_duration=20.0,
                                 max_duration=6.0, seed=3, epochs=1,
                                 threads=2, output="numpy",
                                 ranks=ranks) as loader:
            n = len(loader)
            batches = [list(b.indices) for b in loader]
            return n, batches, loader.skipped()
    n, batches, skipped = run(None)
    assert len(batches) == n
    assert sorted(i for b in batches for i in b) == sorted(short)
    assert skipped["too-long"] == len(lines) - len(short), skipped
    got = []
    for rank in (0, 1):
        n, mine, _ = run((rank, 2))
        assert len(mine) == n
        got += mine
    assert sorted(map(tuple, got)) == sorted(map(tuple, batches))


def test_nemo_spans_of_rows_after_a_first_row_without_them(tmp_path):
    """A JSON Lines row's span is its own, whatever the first row holds:
    after a first row without duration (a NeMo row missing it: bad-span,
    as NeMo requires one), the next rows' offset and duration are theirs,
    never dropped for the whole file; a list of files none of which has a
    duration stays one of whole files."""
    rate = 16000
    audiogen.make(str(tmp_path / "a.flac"), "sweep", rate, 6.0)
    ref = ffmpeg_decode(str(tmp_path / "a.flac"))
    _write_nemo(tmp_path / "m.json", [
        {"audio_filepath": "a.flac", "text": "no duration"},
        {"audio_filepath": "a.flac", "offset": 2.5, "duration": 1.0,
         "text": "span"},
        {"audio_filepath": "a.flac", "duration": 0.5, "text": "head"}])
    got, _, skipped = read_epoch(tmp_path / "m.json")
    assert sorted(got) == [1, 2], skipped
    assert skipped["bad-span"] == 1
    assert same(got[1][0][0], ref[round(2.5 * rate):round(3.5 * rate)])
    assert same(got[2][0][0], ref[:round(0.5 * rate)])
    _write_nemo(tmp_path / "files.jsonl", [
        {"audio_filepath": "a.flac", "text": "one"},
        {"audio_filepath": "a.flac", "text": "two"}])
    got, _, _ = read_epoch(tmp_path / "files.jsonl")
    assert [got[i][2] for i in (0, 1)] == [len(ref), len(ref)]
    # a JSON Lines table of videos or audio: a later row's start counts
    _write_nemo(tmp_path / "t.jsonl", [
        {"path": "a.flac", "text": "whole"},
        {"path": "a.flac", "start": 1.0, "end": 1.25, "text": "cut"}])
    got, _, _ = read_epoch(tmp_path / "t.jsonl")
    assert got[0][2] == len(ref)
    assert same(got[1][0][0], ref[rate:round(1.25 * rate)])


def test_transcripts_found_past_a_first_entry_without_one(tmp_path):
    """A NeMo manifest whose first entry has no transcript but the others
    do gives the others' (the first skipped as missing-field, counted),
    not batch.text None for all; a BOM before the first entry changes
    nothing."""
    audiogen.make(str(tmp_path / "a.flac"), "sweep", 16000, 2.0)
    lines = [
        {"audio_filepath": "a.flac", "duration": 1.0},
        {"audio_filepath": "a.flac", "duration": 1.0, "text": "two"},
        {"audio_filepath": "a.flac", "duration": 1.0, "text": "three"}]
    for bom in (False, True):
        _write_nemo(tmp_path / "m.json", lines, bom=bom)
        got, _, skipped = read_epoch(tmp_path / "m.json")
        assert {i: g[1] for i, g in got.items()} == {1: "two", 2: "three"}
        assert skipped["missing-field"] == 1


@pytest.mark.parametrize("batches", ["count", "seconds"])
def test_rank_with_every_sample_skipped_is_an_error(tmp_path, batches):
    """ranks=(1, 2) whose every entry the decoder skips (spans past the
    file's end): an error naming the cause, not an epoch of no batches
    while rank 0 yields its own (distributed training would wait for the
    empty rank forever; spdlsrc already stops a rank whose every file is
    unreadable)."""
    audiogen.make(str(tmp_path / "a.flac"), "sweep", 16000, 2.0)
    _write_nemo(tmp_path / "m.json", [
        {"audio_filepath": "a.flac", "offset": 0.0 if i % 2 == 0 else 5.0,
         "duration": 1.0, "text": str(i)} for i in range(4)])
    kwargs = dict(batch_duration=1.0) if batches == "seconds" else {}

    def run(rank):
        with spdlgst.AudioLoader(tmp_path / "m.json", duration=None,
                                 batch_size=1, shuffle=False, epochs=1,
                                 threads=2, output="numpy",
                                 ranks=(rank, 2), **kwargs) as loader:
            return len(loader), [list(b.indices) for b in loader]
    assert run(0) == (2, [[0], [2]])
    with pytest.raises(spdlgst.errors.LoaderError, match="would wait"):
        run(1)
