"""Manifests whose rows are spans of audio files (NeMo's JSON Lines, CSV
with start/end): each row one sample, decoded exactly over
[offset, offset + duration) as FFmpeg decodes the whole file sliced there
(lossless exact, resampled within 60 dB and one sample of its length),
transcripts byte-equal, bad entries skipped by reason or an error."""
import csv
import json
import os
import subprocess

import numpy as np
import pytest
from gi.repository import Gst

import audiogen
import spdltest

RATE = 16000


def ffmpeg_f32(path, rate, channels, opts=()):
    """FFmpeg's float decode of the whole file at @rate: [channels, n];
    @opts: decoder options, before the input."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", *opts, "-i",
                          path, "-f", "f32le", "-ac", str(channels), "-ar",
                          str(rate), "-"], check=True, capture_output=True,
                         timeout=120).stdout
    return np.frombuffer(out, "<f4").reshape(-1, channels).T.copy()


def snr_db(ref, x):
    return 10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / max(
        np.sum((x.astype(np.float64) - ref) ** 2), 1e-30))


def audio_of(sample):
    """The tensor [C, N] and the sample meta as a dict, the record's
    values in "values" (read now: its structure is the buffer's)."""
    st = sample.get_caps().get_structure(0)
    dims = [int(d) for d in st.get_value("dimensions").split(":")]
    buf = sample.get_buffer()
    ok, info = buf.map(Gst.MapFlags.READ)
    assert ok
    arr = np.frombuffer(info.data, "<f4").reshape(dims[::-1]).copy()
    buf.unmap(info)
    s = buf.get_custom_meta("GstSpdlSampleMeta").get_structure()
    meta = {s.nth_field_name(i): s.get_value(s.nth_field_name(i))
            for i in range(s.n_fields())}
    rec = meta.pop("record", None)
    meta["values"] = [rec.get_value(f"v{i}") for i in
                      range(rec.n_fields())] if rec else []
    return arr, meta


def run(launch):
    """[(array [C, N], meta)], the warnings, the error (or None), and the
    skipped counts of spdlsrc ("src") and the decoder ("dec")."""
    return spdltest.run_samples(launch, audio_of, counts_of=("src", "dec"))


TEXTS = ['hello, "world"', "na\u00efve caf\u00e9 \u2603, \u65e5\u672c\u8a9e",
         "", "line\twith tab", 'quote " and , comma', "\u00e9\u00e8",
         "x" * 300, "a b c"]


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    """FLAC and WAV at 16 kHz (mono, stereo), Opus at 48 kHz, MP3 at
    44.1 kHz, 4 s each, in audio/ below the manifests' folder."""
    root = tmp_path_factory.mktemp("spans")
    os.makedirs(root / "audio")
    files = {}
    for name, rate, ch, n in (("a.flac", 16000, 1, 0), ("b.wav", 16000, 2, 1),
                              ("c.opus", 48000, 1, 2),
                              ("d.mp3", 44100, 1, 3)):
        audiogen.make(str(root / "audio" / name), "tone", rate, 4.0, ch, n)
        files[name] = (rate, ch)
    return root, files


# (file, offset, duration) rows: several per file, overlapping, out of
# order, one to the file's end, offsets not on a frame boundary
ROWS = [("a.flac", 0.0, 1.25), ("a.flac", 2.3171, 0.9), ("a.flac", 1.0, 3.0),
        ("b.wav", 0.5, 1.5), ("b.wav", 3.1, 0.9), ("c.opus", 1.21, 1.3),
        ("c.opus", 0.0, 2.0), ("d.mp3", 0.7, 2.2), ("d.mp3", 3.0, 1.0)]


def write_nemo(path, rows, texts=TEXTS, extra=None):
    with open(path, "w", encoding="utf-8") as f:
        for i, (name, offset, duration) in enumerate(rows):
            entry = {"audio_filepath": f"audio/{name}", "offset": offset,
                     "duration": duration, "text": texts[i % len(texts)]}
            if extra:
                entry.update(extra(i))
            f.write(json.dumps(entry, ensure_ascii=i % 2 == 0) + "\n")


def write_jsonl(path, entries):
    with open(path, "w", encoding="utf-8") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")


def expected_span(root, name, offset, duration, rate, channels, file_ch):
    """FFmpeg's decode sliced at round(offset * rate) .. round((offset +
    duration) * rate), mixed as audioconvert mixes (stereo to mono: the
    mean; mono to stereo: copied)."""
    ref = ffmpeg_f32(str(root / "audio" / name), rate, file_ch)
    if channels == 1 and file_ch == 2:
        ref = (ref * np.float32(0.5)).sum(axis=0, dtype=np.float32)[None]
    elif channels == 2 and file_ch == 1:
        ref = np.concatenate([ref, ref])
    first = int(round(offset * rate))
    last = int(round((offset + duration) * rate))
    return ref[:, first:min(last, ref.shape[1])]


def check_spans(root, files, rows, got, channels):
    assert len(got) == len(rows)
    for (arr, meta), (name, offset, duration) in zip(got, rows):
        rate, file_ch = files[name]
        assert meta["path"].endswith("audio/" + name)
        assert meta["span-start"] == offset
        assert meta["span-duration"] == duration
        ref = expected_span(root, name, offset, duration, RATE, channels,
                            file_ch)
        assert arr.shape[0] == channels
        if rate == RATE:
            # lossless at its own rate: FFmpeg's samples exactly
            assert arr.shape == ref.shape, (name, offset, arr.shape,
                                            ref.shape)
            if name.endswith((".flac", ".wav")):
                assert np.array_equal(arr, ref), name
        else:
            # resampled: one sample more or less at an edge, 60 dB
            assert abs(arr.shape[1] - ref.shape[1]) <= 1, (
                name, offset, arr.shape, ref.shape)
            n = min(arr.shape[1], ref.shape[1])
            assert snr_db(ref[:, :n], arr[:, :n]) >= 60, (
                name, offset, snr_db(ref[:, :n], arr[:, :n]))
        assert meta["length"] == arr.shape[1]


@pytest.mark.parametrize("channels", [1, 2])
def test_nemo_spans_equal_ffmpeg(media, channels):
    """A NeMo manifest named .json, relative paths: one sample per row in
    the manifest's order, each FFmpeg's decode of its span, its
    transcript byte-equal."""
    root, files = media
    write_nemo(root / "train.json", ROWS)
    got, warnings, error, counts = run(
        f"spdlsrc name=src location={root}/train.json fields=text ! "
        f"spdlaudiodecode name=dec threads=2 duration=0 channels={channels}")
    assert error is None and not warnings, (error, warnings)
    check_spans(root, files, ROWS, got, channels)
    for i, (arr, meta) in enumerate(got):
        assert meta["index"] == i
        assert meta["row"] == f"{root}/train.json:{i + 1}"
        text, = meta["values"]
        assert text.encode("utf-8") == TEXTS[i % len(TEXTS)].encode("utf-8")


def test_nemo_text_from_text_filepath_and_normalized_text(media):
    """NeMo's transcript: text, else the file text_filepath names
    (relative to the manifest, its bytes without its line breaks, as
    NeMo's f.read().replace('\\n', '')), else
    normalized_text; "" is a transcript."""
    root, _ = media
    os.makedirs(root / "txt", exist_ok=True)
    (root / "txt" / "t1.txt").write_bytes("from a file, \u00e9\n".encode())
    rows = [{"audio_filepath": "audio/a.flac", "duration": 1.0,
             "text": "plain", "normalized_text": "no"},
            {"audio_filepath": "audio/a.flac", "duration": 1.0,
             "text_filepath": "txt/t1.txt", "normalized_text": "no"},
            {"audio_filepath": "audio/a.flac", "duration": 1.0,
             "normalized_text": "normalized \"q\""},
            {"audio_filepath": "audio/a.flac", "duration": 1.0, "text": ""}]
    write_jsonl(root / "texts.json", rows)
    got, warnings, error, _ = run(
        f"spdlsrc name=src location={root}/texts.json fields=text ! "
        "spdlaudiodecode name=dec duration=0")
    assert error is None and not warnings, (error, warnings)
    assert [m["values"][0] for _, m in got] == [
        "plain", "from a file, \u00e9", 'normalized "q"', ""]
    assert all(a.shape == (1, 16000) for a, _ in got)


def test_csv_start_end_and_captions(media):
    """A CSV with a path column, start and end in seconds and a caption
    with commas, quotes and a line break (Python's csv module writes it):
    one sample per row, each its span, captions byte-equal; other columns
    as fields when fields= names them."""
    root, files = media
    rows = [("a.flac", 0.5, 1.75), ("d.mp3", 1.0, 2.5), ("b.wav", 2.0, 4.0)]
    captions = ['a "cat", sitting', "two\nlines, \u00e9", ""]
    with open(root / "clips.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["path", "start", "end", "caption", "speaker"])
        for (name, start, end), cap, spk in zip(rows, captions,
                                                ("s1", "s2", "s3")):
            w.writerow([f"audio/{name}", start, end, cap, spk])
    got, warnings, error, _ = run(
        f"spdlsrc name=src location={root}/clips.csv "
        "fields=caption:string:empty,speaker:string ! "
        "spdlaudiodecode name=dec duration=0")
    assert error is None and not warnings, (error, warnings)
    check_spans(root, files, [(n, s, e - s) for n, s, e in rows], got, 1)
    assert [m["values"] for _, m in got] == [
        [captions[0], "s1"], [captions[1], "s2"], ["", "s3"]]


def test_jsonl_offset_to_the_end_and_audio_filename(media):
    """A row with an offset and no duration in a manifest that is not
    NeMo's runs to the file's end, one without either is the whole file;
    audio_filename is NeMo's other path column."""
    root, files = media
    write_jsonl(root / "tail.jsonl", [{"path": "audio/a.flac",
                                       "offset": 2.5},
                                      {"path": "audio/b.wav"}])
    write_jsonl(root / "named.json", [{"audio_filename": "audio/b.wav",
                                       "offset": 1.5, "duration": 2.0}])
    got, warnings, error, _ = run(
        f"spdlsrc name=src location={root}/tail.jsonl ! "
        "spdlaudiodecode name=dec duration=0")
    assert error is None and not warnings, (error, warnings)
    assert [m["span-start"] for _, m in got] == [2.5, 0.0]
    assert [m["span-duration"] for _, m in got] == [-1.0, -1.0]
    check_spans(root, files, [("a.flac", 2.5, 10.0), ("b.wav", 0.0, 10.0)],
                [(a, dict(m, **{"span-duration": 10.0})) for a, m in got], 1)
    got, warnings, error, _ = run(
        f"spdlsrc name=src location={root}/named.json ! "
        "spdlaudiodecode name=dec duration=0")
    assert error is None and not warnings, (error, warnings)
    check_spans(root, files, [("b.wav", 1.5, 2.0)], got, 1)


def test_clips_drawn_inside_the_span(media):
    """duration > 0: clips are drawn inside each row's span, never
    outside it, each equal to FFmpeg's samples there."""
    root, files = media
    rows = [("a.flac", 1.0, 1.5), ("b.wav", 2.2, 1.0)]
    write_nemo(root / "clips.json", rows)
    got, warnings, error, _ = run(
        f"spdlsrc name=src location={root}/clips.json ! "
        "spdlaudiodecode name=dec duration=0.5 clips-per-file=4 seed=7")
    assert error is None and not warnings, (error, warnings)
    assert len(got) == 8
    starts = set()
    for arr, meta in got:
        name, offset, duration = rows[meta["index"]]
        assert offset <= meta["start"] <= offset + duration - 0.5 + 1e-9
        starts.add(meta["start"])
        ref = expected_span(root, name, meta["start"], 0.5, RATE, 1,
                            files[name][1])
        assert np.array_equal(arr, ref)
    assert len(starts) > 2


def test_bad_entries_skipped_by_reason(media):
    """Negative offset, an end before its start, no duration in a NeMo
    row, a missing file (spdlsrc), a span past the file's end, one whose
    duration runs past it, one longer than max-span (spdlaudiodecode):
    each skipped by its reason, counted, warned naming the manifest row
    and the file; the good rows delivered in order."""
    root, files = media
    entries = [
        {"audio_filepath": "audio/a.flac", "offset": 0.5, "duration": 1.0},
        {"audio_filepath": "audio/a.flac", "offset": -0.5, "duration": 1.0},
        {"audio_filepath": "audio/a.flac", "offset": 0.5},
        {"audio_filepath": "audio/a.flac", "offset": 1.0, "duration": -1},
        {"audio_filepath": "audio/gone.flac", "offset": 0, "duration": 1.0},
        {"audio_filepath": "audio/b.wav", "offset": 4.5, "duration": 1.0},
        {"audio_filepath": "audio/b.wav", "offset": 3.0, "duration": 1.5},
        {"audio_filepath": "audio/b.wav", "offset": 3.0, "duration": 1.0005},
        {"audio_filepath": "audio/c.opus", "offset": 0, "duration": 3.5},
        {"audio_filepath": "audio/d.mp3", "offset": 1, "duration": "x"},
        {"audio_filepath": "audio/d.mp3", "offset": 2, "duration": 1.0},
    ]
    write_jsonl(root / "bad.json", entries)
    got, warnings, error, counts = run(
        f"spdlsrc name=src location={root}/bad.json ! spdlaudiodecode "
        "name=dec duration=0 max-span=3.0")
    assert error is None
    assert [m["index"] for _, m in got] == [0, 7, 10]
    # within 1 ms of the end: the file's samples to its end
    assert got[1][0].shape == (1, 16000)
    assert counts["src"] == {"total": 5, "bad-span": 4, "unreadable": 1}
    assert counts["dec"] == {"total": 3, "past-end": 1, "bad-duration": 1,
                             "too-long": 1}
    assert len(warnings) == 8
    for line, name in ((2, "a.flac"), (3, "a.flac"), (4, "a.flac"),
                       (5, "gone.flac"), (6, "b.wav"), (7, "b.wav"),
                       (9, "c.opus"), (10, "d.mp3")):
        assert any(f"bad.json:{line})" in w and name in w
                   for w in warnings), (line, warnings)


@pytest.mark.parametrize("entry,reason", [
    ({"offset": -1.0, "duration": 1.0}, "negative offset"),
    ({"offset": 0.0}, "no duration"),
    ({"offset": 5.0, "duration": 1.0}, "past the file's end"),
    ({"offset": 3.5, "duration": 1.0}, "disagrees"),
])
def test_bad_entry_is_an_error_with_missing_field_error(media, entry,
                                                         reason):
    """missing-field=error: a bad entry stops the pipeline, the message
    naming the file, the manifest row and why."""
    root, _ = media
    write_jsonl(root / "one.json", [
        {"audio_filepath": "audio/a.flac", "offset": 0.0, "duration": 1.0},
        dict({"audio_filepath": "audio/a.flac"}, **entry)])
    got, warnings, error, _ = run(
        f"spdlsrc name=src location={root}/one.json missing-field=error ! "
        "spdlaudiodecode name=dec duration=0")
    assert error is not None, warnings
    assert len(got) <= 1
    assert "a.flac" in error and reason in error, error
    assert "one.json:2" in error, error


def tensors_of(sample):
    """A batch's tensors by their caps' names (a variable-length tensor,
    0 in its caps' dimensions, flat)."""
    st = sample.get_caps().get_structure(0)
    names = st.get_value("names").split(",")
    dims = [[int(d) for d in t.split(":")][::-1]
            for t in st.get_value("dimensions").split(",")]
    types = st.get_value("types").split(",")
    buf = sample.get_buffer()
    arrays = {}
    for i, (name, shape, t) in enumerate(zip(names, dims, types)):
        ok, info = buf.get_memory(i).map(Gst.MapFlags.READ)
        a = np.frombuffer(info.data, t).copy()
        buf.get_memory(i).unmap(info)
        arrays[name] = a if 0 in shape else a.reshape(shape)
    return arrays


def test_batch_pads_spans_with_their_lengths_and_texts(media):
    """spdlbatch: each span padded to the batch's longest, lengths its own
    samples, the transcripts alongside in order."""
    root, files = media
    write_nemo(root / "batch.json", ROWS)
    got, _, error, _ = run(
        f"spdlsrc name=src location={root}/batch.json fields=text ! "
        "spdlaudiodecode name=dec duration=0")
    assert error is None
    batches, _, error, _ = spdltest.run_samples(
        f"spdlsrc location={root}/batch.json fields=text ! "
        "spdlaudiodecode duration=0 ! spdlbatch batch-size=4", tensors_of)
    assert error is None
    assert [len(b["lengths"]) for b in batches] == [4, 4, 1]
    k = 0
    for b in batches:
        longest = max(got[k + j][0].shape[1] for j in range(len(b["lengths"])))
        assert b["audio"].shape[2] == longest
        for j in range(len(b["lengths"])):
            arr, meta = got[k + j]
            assert b["lengths"][j] == arr.shape[1]
            assert np.array_equal(b["audio"][j, :, :arr.shape[1]], arr)
            assert not b["audio"][j, :, arr.shape[1]:].any()
            o = b["text/offsets"]
            text = bytes(b["text/values"][o[j]:o[j + 1]]).decode("utf-8")
            assert text == TEXTS[(k + j) % len(TEXTS)]
        k += len(b["lengths"])


def test_opus_speech_and_stereo_spans_equal_ffmpeg(tmp_path):
    """Opus as speech sets hold it (16 kHz speech at 24 kb/s, SILK) and
    stereo music (CELT, 48 kb/s), read at Opus's 48 kHz: every span within
    60 dB of FFmpeg's decode sliced there (FFmpeg's decoder: the same
    samples), as torchcodec reads them (stereo: FFmpeg without phase
    inversion of intensity-coded bands, which the reader does not apply,
    as opusdec). libopus and FFmpeg's decoder differ by 10 to 20 dB on
    these (SILK's resampling to 48 kHz is not normative)."""
    from spdlgst.sampleaudio import speech
    os.makedirs(tmp_path / "audio")
    pcm = speech(16000, 8.0, 1, 3).T
    audiogen.write_wav(str(tmp_path / "s.wav"), pcm, 16000)
    audiogen.encode(str(tmp_path / "s.wav"), str(tmp_path / "audio/s.opus"),
                    "opusenc bitrate=24000 ! oggmux")
    t = np.arange(6 * 48000) / 48000
    rng = np.random.default_rng(1)
    music = np.stack([0.3 * np.sin(2 * np.pi * 220 * (1 + t) * t),
                      0.3 * np.sin(2 * np.pi * 440 * (1 + t) * t)]) + \
        0.05 * rng.standard_normal((2, len(t)))
    audiogen.write_wav(str(tmp_path / "m.wav"), audiogen.pcm16(music), 48000)
    audiogen.encode(str(tmp_path / "m.wav"), str(tmp_path / "audio/m.opus"),
                    "opusenc bitrate=48000 ! oggmux")
    rows = [("s.opus", 0.0, 2.5), ("s.opus", 1.337, 4.2), ("s.opus", 5.0, 3.0),
            ("m.opus", 0.25, 2.0), ("m.opus", 3.3, 2.7)]
    write_nemo(tmp_path / "m.json", rows)
    rate = 48000
    refs = {"s.opus": ffmpeg_f32(str(tmp_path / "audio/s.opus"), rate, 1),
            "m.opus": ffmpeg_f32(str(tmp_path / "audio/m.opus"), rate, 2,
                                 ["-apply_phase_inv", "0"])}
    got, warnings, error, _ = run(
        f"spdlsrc name=src location={tmp_path}/m.json ! spdlaudiodecode "
        f"name=dec duration=0 channels=2 sample-rate={rate}")
    assert error is None and not warnings, (error, warnings)
    assert len(got) == len(rows)
    for (arr, meta), (name, offset, duration) in zip(got, rows):
        ref = refs[name]
        if ref.shape[0] == 1:
            ref = np.concatenate([ref, ref])
        first = int(round(offset * rate))
        ref = ref[:, first:int(round((offset + duration) * rate))]
        assert arr.shape == ref.shape, (name, offset)
        n = min(arr.shape[1], ref.shape[1])
        assert np.abs(arr[:, :n]).max() > 0.05, (name, offset)
        assert snr_db(ref[:, :n], arr[:, :n]) >= 60, (
            name, offset, snr_db(ref[:, :n], arr[:, :n]))


def test_opus_damaged_page_span_skipped(tmp_path):
    """A page of an Opus file damaged (its checksum no longer matches): a
    span reading through it is skipped as corrupt with a warning naming
    the file; spans before it decode, FFmpeg's samples."""
    from spdlgst.sampleaudio import speech
    os.makedirs(tmp_path / "audio")
    audiogen.write_wav(str(tmp_path / "s.wav"), speech(16000, 8.0, 1, 4).T,
                       16000)
    path = tmp_path / "audio/s.opus"
    audiogen.encode(str(tmp_path / "s.wav"), str(path),
                    "opusenc bitrate=24000 ! oggmux")
    ref = ffmpeg_f32(str(path), 48000, 1)
    data = bytearray(path.read_bytes())
    # a byte inside a page past the middle: its CRC fails
    at = data.find(b"OggS", len(data) * 2 // 3)
    assert at > 0
    data[at + 40] ^= 0x5A
    path.write_bytes(bytes(data))
    rows = [("s.opus", 0.5, 2.0), ("s.opus", 5.0, 3.0)]
    write_nemo(tmp_path / "m.json", rows)
    got, warnings, error, counts = run(
        f"spdlsrc name=src location={tmp_path}/m.json ! spdlaudiodecode "
        f"name=dec duration=0 sample-rate=48000")
    assert error is None, error
    assert len(got) == 1, [m["span-start"] for _, m in got]
    arr, meta = got[0]
    assert meta["span-start"] == 0.5
    r = ref[:, 24000:24000 + arr.shape[1]]
    assert r.shape == arr.shape
    assert snr_db(r, arr) >= 60, snr_db(r, arr)
    assert any("s.opus" in w for w in warnings), warnings
    assert counts["dec"].get("corrupt") == 1, counts


def test_span_longer_than_max_duration_skipped_before_decoding(media):
    """A whole span longer than max-duration is skipped as too-large (its
    tensor is never allocated); clips inside it are not."""
    root, _ = media
    write_jsonl(root / "long.json", [
        {"audio_filepath": "audio/a.flac", "offset": 0.5, "duration": 2.5},
        {"audio_filepath": "audio/a.flac", "offset": 0.5, "duration": 0.75}])
    got, warnings, error, counts = run(
        f"spdlsrc name=src location={root}/long.json ! spdlaudiodecode "
        "name=dec duration=0 max-duration=1.0")
    assert error is None
    assert [m["index"] for _, m in got] == [1]
    assert counts["dec"] == {"total": 1, "too-large": 1}
    assert any("max-duration" in w and "long.json:1" in w for w in warnings)
    got, _, error, counts = run(
        f"spdlsrc name=src location={root}/long.json ! spdlaudiodecode "
        "name=dec duration=0.5 max-duration=1.0")
    assert error is None and len(got) == 2 and counts["dec"] == {}


def meta_of(sample):
    s = sample.get_buffer().get_custom_meta("GstSpdlSampleMeta") \
        .get_structure()
    return (s.get_value("index"), s.get_value("span-start"),
            s.get_value("span-duration"), s.get_value("path"))


def test_shuffled_ranks_take_each_row_once_with_its_span(media):
    """Shuffled over 3 ranks: every row once over the ranks, each sample's
    span its own row's (several rows of one file stay apart)."""
    root, _ = media
    write_nemo(root / "ranks.json", ROWS)
    seen = []
    for rank in range(3):
        got, _, error, _ = spdltest.run_samples(
            f"spdlsrc location={root}/ranks.json shuffle=true seed=5 "
            f"num-shards=3 shard-index={rank}", meta_of)
        assert error is None
        seen += got
    assert sorted(i for i, _, _, _ in seen) == list(range(len(ROWS)))
    for index, start, duration, path in seen:
        name, offset, length = ROWS[index]
        assert path.endswith(name) and (start, duration) == (offset, length)


@pytest.mark.parametrize("name", ["c.opus", "d.mp3"])
def test_lossy_spans_at_their_own_rate_equal_ffmpeg(media, name):
    """Opus and MP3 spans at the file's own rate (no resampling): FFmpeg's
    sample count exactly, within the lossy bound of the audio tests
    (1e-4), at offsets inside a frame."""
    root, files = media
    rate, ch = files[name]
    rows = [(name, 0.0, 1.0), (name, 0.4817, 1.3), (name, 2.9, 1.1)]
    write_nemo(root / f"own-{name}.json", rows)
    got, warnings, error, _ = run(
        f"spdlsrc name=src location={root}/own-{name}.json ! "
        f"spdlaudiodecode name=dec duration=0 sample-rate={rate}")
    assert error is None and not warnings, (error, warnings)
    assert len(got) == len(rows)
    for (arr, meta), (_, offset, duration) in zip(got, rows):
        ref = expected_span(root, name, offset, duration, rate, 1, ch)
        assert arr.shape == ref.shape, (offset, arr.shape, ref.shape)
        assert np.abs(arr - ref).max() <= 1e-4, (
            offset, np.abs(arr - ref).max())


def test_loader_skipped_names_span_reasons_where_they_apply(media):
    """spdlgst's skipped(): a span manifest's bad row counted as bad-span;
    a folder, which has no spans, lists no such reason."""
    import spdlgst

    root, _ = media
    write_jsonl(root / "loader.json", [
        {"audio_filepath": "audio/a.flac", "offset": 0.5, "duration": 1.0},
        {"audio_filepath": "audio/a.flac", "offset": -1.0, "duration": 1.0},
        {"audio_filepath": "audio/b.wav", "offset": 1.0, "duration": 1.0}])
    with spdlgst.AudioLoader(str(root / "loader.json"), batch_size=2,
                             duration=0.5, epochs=1, shuffle=False,
                             output="numpy", log_limit=0) as loader:
        n = sum(b[0].shape[0] for b in loader)
        skipped = loader.skipped()
    assert n == 2 and skipped["bad-span"] == 1
    assert "too-long" in skipped and "past-end" in skipped
    with spdlgst.AudioLoader(str(root), batch_size=2, duration=0.5,
                             epochs=1, shuffle=False, output="numpy",
                             log_limit=0) as loader:
        for _ in loader:
            pass
        skipped = loader.skipped()
    assert "bad-span" not in skipped


def ogg_crc(data):
    """Ogg's page checksum (CRC-32, polynomial 0x04c11db7, not reflected)."""
    crc = 0
    for b in data:
        crc ^= b << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7 if crc & 0x80000000 else
                   crc << 1) & 0xFFFFFFFF
    return crc


def test_opus_undecodable_packets_span_skipped(tmp_path):
    """Opus packets that do not decode in a page whose checksum is right
    (each says one frame, as before, followed by more padding than the
    packet holds, which FFmpeg's decoder rejects as it does in the ffmpeg
    tool): the span over them is skipped as corrupt, naming the file; a
    clean file's span beside it decodes."""
    from spdlgst.sampleaudio import speech
    os.makedirs(tmp_path / "audio")
    audiogen.write_wav(str(tmp_path / "s.wav"), speech(16000, 6.0, 1, 5).T,
                       16000)
    clean = tmp_path / "audio/clean.opus"
    audiogen.encode(str(tmp_path / "s.wav"), str(clean),
                    "opusenc bitrate=24000 ! oggmux")
    data = bytearray(clean.read_bytes())
    at = data.find(b"OggS", len(data) // 2)
    n_segments = data[at + 26]
    lacing = data[at + 27:at + 27 + n_segments]
    packet = at + 27 + n_segments
    for length in lacing:
        if length > 3:
            data[packet] |= 3          # code 3: a frame count follows
            data[packet + 1] = 0x41    # padded, one frame: same duration
            data[packet + 2] = 0xFE    # 254 bytes of padding
        packet += length
    data[at + 22:at + 26] = b"\0\0\0\0"
    data[at + 22:at + 26] = ogg_crc(bytes(data[at:packet])).to_bytes(
        4, "little")
    (tmp_path / "audio/bad.opus").write_bytes(bytes(data))
    rows = [("bad.opus", 0.5, 5.0), ("clean.opus", 0.5, 5.0)]
    write_nemo(tmp_path / "m.json", rows)
    got, warnings, error, counts = run(
        f"spdlsrc name=src location={tmp_path}/m.json ! spdlaudiodecode "
        f"name=dec duration=0 sample-rate=48000")
    assert error is None, error
    assert [m["path"].rsplit("/", 1)[1] for _, m in got] == ["clean.opus"]
    assert got[0][0].shape == (1, 5 * 48000)
    assert any("bad.opus" in w for w in warnings), warnings
    assert counts["dec"].get("corrupt") == 1, counts
