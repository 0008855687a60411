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

RATE = 16000


def ffmpeg_f32(path, rate, channels):
    """FFmpeg's float decode of the whole file at @rate: [channels, n]."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path,
                          "-f", "f32le", "-ac", str(channels), "-ar",
                          str(rate), "-"], check=True, capture_output=True,
                         timeout=120).stdout
    return np.frombuffer(out, "<f4").reshape(-1, channels).T.copy()


def snr_db(ref, x):
    return 10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / max(
        np.sum((x.astype(np.float64) - ref) ** 2), 1e-30))


def run(launch, timeout_s=120, element="dec"):
    """[(array [C, N], meta dict, record values)], the warnings, the
    error (or None), and the skipped counts of spdlsrc and @element."""
    pipeline = Gst.parse_launch(launch + " ! appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    out, warnings, error = [], [], None
    try:
        while error is None:
            sample = sink.emit("try-pull-sample", Gst.SECOND)
            while True:
                msg = bus.pop_filtered(Gst.MessageType.ERROR |
                                       Gst.MessageType.WARNING)
                if msg is None:
                    break
                if msg.type == Gst.MessageType.ERROR:
                    error = msg.parse_error()[0].message
                else:
                    warnings.append(msg.parse_warning()[0].message)
            if sample is None:
                if sink.get_property("eos") or error:
                    break
                timeout_s -= 1
                assert timeout_s > 0, "pipeline timed out"
                continue
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
            # the record's values now: its structure is the buffer's
            rec = meta.pop("record", None)
            meta["values"] = [rec.get_value(f"v{i}") for i in
                              range(rec.n_fields())] if rec else []
            out.append((arr, meta))
        counts = {}
        for name in ("src", element):
            el = pipeline.get_by_name(name)
            if el is None:
                continue
            c = el.get_property("error-counts")
            counts[name] = {c.nth_field_name(i): c.get_value(
                c.nth_field_name(i)) for i in range(c.n_fields())
                if c.get_value(c.nth_field_name(i))}
    finally:
        pipeline.set_state(Gst.State.NULL)
    return out, warnings, error, counts


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
