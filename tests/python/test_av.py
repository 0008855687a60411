"""spdlgst.VideoLoader(audio=True): each clip's span of its video's audio,
compared with FFmpeg's decode of the same file; silence and has_audio
False for a video without audio; batch shapes; arguments checked."""
import subprocess

import numpy as np
import pytest

import audiogen
import gstbugs
import spdlgst
import videogen

RATE = 16000
FPS = 25
FRAMES = 8
STRIDE = 2
H264 = ["-c:v", "libx264", "-g", "10", "-pix_fmt", "yuv420p"]
VP9 = ["-c:v", "libvpx-vp9", "-b:v", "200k", "-g", "10"]
# a chirp (120 Hz rising by 400 Hz a second): a misplaced span does not
# match the reference at another offset, as a steady tone would
CHIRP = "0.5*sin(2*PI*(120+200*t)*t)"
# name: (video options, audio options); the audio an audio frame apart at
# most: AAC 1024 samples, Opus 960 (20 ms), Vorbis up to 2048
KINDS = {
    "aac.mp4": (H264, ["-c:a", "aac", "-b:a", "128k"]),
    "opus.mkv": (H264, ["-c:a", "libopus", "-b:a", "96k"]),
}


def make(path, audio_opts, video_opts, seconds=4.0, rate=44100):
    cmd = [videogen.FFMPEG, "-nostdin", "-v", "error", "-y", "-f", "lavfi",
           "-i", "testsrc2=size=64x48:rate=%d:duration=%g" % (FPS, seconds)]
    if audio_opts is not None:
        cmd += ["-f", "lavfi", "-i", "aevalsrc=%s:s=%d:d=%g" % (
            CHIRP, rate, seconds)]
    cmd += video_opts + (audio_opts or []) + [str(path)]
    subprocess.run(cmd, check=True, env=videogen.ENV,
                   stdin=subprocess.DEVNULL)


def ffmpeg_audio(path):
    """FFmpeg's decode of the whole audio stream, mono, at RATE, from the
    time of its first decoded frame on (silence before it): a span is
    sliced from it (-ss on each span would add FFmpeg's own seek rounding
    to what is compared). Vorbis in WebM starts at 3 ms (FFmpeg's muxer
    moves the encoder's first packet, which decodes to nothing, to 0),
    as does its video."""
    first = subprocess.run([videogen.FFPROBE, "-v", "error",
                            "-select_streams", "a", "-read_intervals",
                            "%+#8", "-show_entries", "frame=pts_time", "-of",
                            "csv=p=0", str(path)], check=True,
                           capture_output=True, text=True, env=videogen.ENV,
                           stdin=subprocess.DEVNULL).stdout.split()[0]
    out = subprocess.run([videogen.FFMPEG, "-nostdin", "-v", "error", "-i",
                          str(path), "-vn", "-f", "f32le", "-ac", "1", "-ar",
                          str(RATE), "-"], check=True, capture_output=True,
                         env=videogen.ENV, stdin=subprocess.DEVNULL).stdout
    return np.concatenate([np.zeros(max(0, round(float(first) * RATE)),
                                    np.float32),
                           np.frombuffer(out, np.float32)])


@pytest.fixture(scope="module")
def av_dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("av")
    (root / "sound").mkdir()
    (root / "silent").mkdir()
    for name, (video, audio) in KINDS.items():
        make(root / "sound" / name, audio, video)
    make(root / "silent" / "none.mp4", None, H264)
    return root


def loader(root, **kw):
    args = dict(batch_size=2, frames=FRAMES, stride=STRIDE, frame_rate=FPS,
                clips_per_video=3, sampling="uniform", size=32, resize=32,
                crop="center", flip=False, shuffle=False, epochs=1,
                output="numpy", audio=True, sample_rate=RATE)
    args.update(kw)
    return spdlgst.VideoLoader(root, **args)


def clips_of(ld):
    """(path, pts, audio [C, N], has_audio) of every clip of an epoch"""
    out = []
    for b in ld:
        n = len(b.labels)
        assert b.audio.shape[0] == n and b.audio.dtype == np.float32
        assert b.has_audio.shape == (n,) and b.has_audio.dtype == np.bool_
        for i in range(n):
            out.append((b.paths[i], b.pts[i], b.audio[i], bool(b.has_audio[i])))
    return out


def best_lag(clip, ref, start, reach):
    """The offset within ±reach of start where ref matches clip best"""
    n = len(clip)
    errs = {}
    for lag in range(-reach, reach + 1):
        s = start + lag
        if s < 0 or s + n > len(ref):
            continue
        errs[lag] = float(np.mean((ref[s:s + n] - clip) ** 2))
    return min(errs, key=errs.get), errs


def best_snr(clip, ref, start):
    """The SNR in dB of clip against ref from start, ref delayed by the
    best fraction of a sample (-1 to 1, in 1/20): ref is band-limited,
    delayed by a phase shift on a stretch 256 samples longer each side"""
    n, pad = len(clip), 256
    lo = max(0, start - pad)
    seg = ref[lo:start + n + pad].astype(np.float64)
    freqs = np.fft.rfftfreq(len(seg))
    spec = np.fft.rfft(seg)
    best = -np.inf
    for frac in np.arange(-1, 1.0001, 0.05):
        shifted = np.fft.irfft(spec * np.exp(-2j * np.pi * freqs * frac),
                               len(seg))[start - lo:start - lo + n]
        err = float(np.mean((shifted - clip) ** 2))
        best = max(best, 10 * np.log10(float(np.mean(shifted ** 2)) /
                                       max(err, 1e-20)))
    return best


def test_clip_audio_is_the_span_of_its_video(av_dataset):
    clips = clips_of(loader(av_dataset))
    n_expected = round(FRAMES * STRIDE / FPS * RATE)
    assert len(clips) == 3 * 3
    refs = {}
    for path, pts, audio, has_audio in clips:
        assert audio.shape == (1, n_expected)
        if path.endswith("none.mp4"):
            assert not has_audio
            assert not audio.any()
            continue
        assert has_audio, path
        # past the audio's end the clip is zeros
        ref = refs.setdefault(path, np.concatenate(
            [ffmpeg_audio(path), np.zeros(n_expected + 743, np.float32)]))
        start = round(pts[0] * RATE)
        clip = audio[0]
        # the start matches the clip's first pts within one audio frame
        # (2048 samples at 44.1 kHz: 743 at 16 kHz) ...
        lag, errs = best_lag(clip, ref, start, 743)
        # ... and in fact to 1 ms (Matroska's timestamps: measured 16
        # samples for Opus in mkv, 0 for AAC in mp4)
        assert abs(lag) <= RATE // 1000, (path, pts[0], lag)
        # the same samples, before the audio's last 50 ms (the end
        # padding is trimmed differently: GStreamer's AAC ends 2 ms early,
        # FFmpeg's 17 ms late) and after the stream's first 20 ms (decoder
        # warm-up differs): two decoders and two resamplers agree to 30 dB
        # (measured 59 to 102 dB)
        lo = max(0, 320 - start)
        hi = min(len(clip), 4 * RATE - 800 - start - lag)
        seg = ref[start + lag + lo:start + lag + hi]
        power = float(np.mean(seg ** 2))
        err = float(np.mean((seg - clip[lo:hi]) ** 2))
        snr = 10 * np.log10(power / max(err, 1e-20))
        assert snr > 30, (path, pts[0], snr)
        # and the chirp's frequency at the span's middle
        spec = np.abs(np.fft.rfft(clip * np.hanning(len(clip))))
        peak = np.argmax(spec) * RATE / len(clip)
        t = pts[0] + len(clip) / RATE / 2
        assert abs(peak - (120 + 400 * t)) < 40, (path, peak, t)


def test_batch_shapes_and_flags(av_dataset):
    ld = loader(av_dataset, audio_channels=2, batch_size=4, output="torch")
    batches = list(ld)
    n = round(FRAMES * STRIDE / FPS * RATE)
    assert [tuple(b.audio.shape) for b in batches] == [(4, 2, n), (4, 2, n), (1, 2, n)]
    flags = [bool(f) for b in batches for f in b.has_audio]
    paths = [p for b in batches for p in b.paths]
    assert flags == [not p.endswith("none.mp4") for p in paths]
    for b in batches:
        # mono copied to both channels
        assert (b.audio[:, 0] == b.audio[:, 1]).all()


def test_without_audio_the_batch_is_unchanged(av_dataset):
    b = next(iter(loader(av_dataset, audio=False)))
    assert b.audio is None and b.has_audio is None
    assert "audio=true" not in loader(av_dataset, audio=False).launch_line


@pytest.mark.parametrize("kw, word", [
    (dict(frame_rate=None), "frame_rate"),
    (dict(sample_rate=10), "sample_rate"),
    (dict(audio_channels=0), "audio_channels"),
    (dict(audio="yes"), "audio"),
])
def test_audio_arguments_checked(av_dataset, kw, word):
    with pytest.raises((ValueError, TypeError), match=word):
        loader(av_dataset, **kw)


def test_vorbis_webm(tmp_path):
    """Vorbis in WebM: Matroska's timestamps are rounded to 1 ms, and a
    Vorbis packet of 1024 samples at 44.1 kHz lasts 23.22 ms: the
    decoded buffers follow one another sample for sample, not at their
    rounded times (which cut the audio every 23 ms: gaps and skips of up
    to half a millisecond, 10 dB from FFmpeg's decode at 1 kHz)."""
    (tmp_path / "a").mkdir()
    make(tmp_path / "a" / "v.webm", ["-c:a", "libvorbis", "-q:a", "6"], VP9)
    clips = clips_of(loader(tmp_path))
    assert len(clips) == 3
    for path, pts, audio, has_audio in clips:
        ref = np.concatenate([ffmpeg_audio(path), np.zeros(20000, np.float32)])
        start = round(pts[0] * RATE)
        lag, _ = best_lag(audio[0], ref, start, 743)
        assert abs(lag) <= RATE // 1000, (pts[0], lag)
        # the whole span follows FFmpeg's decode: a span after a seek
        # starts where its first packet's rounded time says (up to 0.5 ms,
        # a fraction of a sample beyond the lag), and the rest of it at
        # that same offset (before the audio's last 50 ms, whose end
        # padding is trimmed differently)
        hi = min(audio.shape[1], 4 * RATE - 800 - start - lag)
        assert best_snr(audio[0, :hi], ref, start + lag) > 30, pts[0]


def ts_clips(tmp_path):
    (tmp_path / "a").mkdir()
    make(tmp_path / "a" / "v.ts", ["-c:a", "aac", "-b:a", "128k"], H264)
    ld = loader(tmp_path, extensions=spdlgst.recipes.VIDEO_EXTENSIONS + ("ts",))
    for path, pts, audio, has_audio in clips_of(ld):
        assert has_audio
        ref = np.concatenate([ffmpeg_audio(path), np.zeros(20000, np.float32)])
        yield pts[0], audio[0], ref


def test_aac_in_ts_is_read_in_the_videos_timeline(tmp_path):
    """The video's pts are FFmpeg's (tsdemux's plus the first PCR, 0.7 s
    for a file FFmpeg writes); the audio chain is in tsdemux's timeline:
    a clip's span is read 0.7 s later than its frames unless taken back."""
    for start, clip, ref in ts_clips(tmp_path):
        errs = {}
        for lag in range(-16000, 16001, 16):
            s = round(start * RATE) + lag
            if 0 <= s and s + len(clip) <= len(ref):
                errs[lag] = float(np.mean((ref[s:s + len(clip)] - clip) ** 2))
        lag = min(errs, key=errs.get)
        assert abs(lag) < 0.2 * RATE, (start, lag)


def test_aac_in_ts_equals_ffmpeg(tmp_path):
    """Every span where FFmpeg's decode has it, the first one too: a seek
    before the audio's first timestamp (the first clip's span starts 0.1 s
    before it) gets a segment from tsdemux whose time is the position asked
    for, not its start; read as such, the span landed 110 ms late."""
    for start, clip, ref in ts_clips(tmp_path):
        lag, _ = best_lag(clip, ref, round(start * RATE), 743)
        assert abs(lag) <= RATE // 1000, (start, lag)


@gstbugs.QTDEMUX_EDIT_LIST_END
def test_aac_in_mp4_ends_where_its_edit_list_ends(tmp_path):
    """AAC at 48 kHz in a 4 s MP4 (as ffmpeg writes it: an edit list of
    192000 samples from sample 1024): the clip over the video's end has
    FFmpeg's decode up to the edit list's end, and zeros after it (FFmpeg
    goes on through the encoder's padding). With qtdemux 1.22.0 its last
    512 samples before the end were zeros too (the frame the edit list
    ends in is dropped); with its fix (1.22.3) they are FFmpeg's."""
    rate, end = 48000, 4 * 48000
    (tmp_path / "a").mkdir()
    path = tmp_path / "a" / "v.mp4"
    make(path, ["-c:a", "aac", "-b:a", "128k"], H264, 4.0, rate)
    ref = audiogen.ffmpeg_decode(str(path))[0]
    assert len(ref) > end
    clips = clips_of(loader(tmp_path, sample_rate=rate, clips_per_video=4))
    _, pts, audio, has_audio = max(clips, key=lambda c: c[1][0])
    start = round(pts[0] * rate)
    assert has_audio and start + audio.shape[1] > end, (pts[0], audio.shape)
    assert np.abs(audio[0, :end - start] - ref[start:end]).max() <= 1e-4
    assert not audio[0, end - start:].any()
