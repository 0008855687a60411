"""Audio files as FFmpeg and phones write them: 5.1 mixed down, AAC
(PNS, its end), an MP3 with a LAME tag damaged in its middle, a FLAC
with a damaged frame. References: FFmpeg's decode (f32le) and, for the
mix, GStreamer's audioconvert with its default matrix."""
import os
import subprocess

import numpy as np
import pytest

import audiogen
import gstbugs
from test_audio import run_clips

RATE = 48000
# a tone per channel of FFmpeg's 5.1 (FL FR FC LFE SL SR)
TONES = (220, 330, 440, 55, 660, 770)


def ffmpeg(args, path):
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y"] + args +
                   [path], check=True, timeout=120)


def surround(path, gains=(1, 1, 1, 1, 1, 1)):
    expr = "|".join(f"{0.3 * g}*sin(2*PI*{f}*t)"
                    for f, g in zip(TONES, gains))
    codec = {".wav": ["-c:a", "pcm_s16le"], ".ogg": ["-c:a", "libvorbis"]}
    ffmpeg(["-f", "lavfi", "-i", f"aevalsrc={expr}:c=5.1:s={RATE}:d=2"] +
           codec.get(os.path.splitext(path)[1], []), path)


def audioconvert_decode(path, channels):
    """GStreamer's decode mixed by audioconvert's default matrix."""
    out = subprocess.run(
        ["gst-launch-1.0", "-q", "filesrc", f"location={path}", "!",
         "decodebin", "!", "audioconvert", "!",
         f"audio/x-raw,format=F32LE,channels={channels},layout=interleaved",
         "!", "fdsink", "fd=1"], check=True, capture_output=True,
        timeout=120).stdout
    return np.frombuffer(out, "<f4").reshape(-1, channels).T.copy()


@pytest.mark.parametrize("ext", ["flac", "wav", "ogg"])
def test_surround_mixed_down_as_audioconvert(tmp_path, ext):
    """5.1 to stereo and to mono: audioconvert's default matrix, every
    channel kept (the centre's dialogue in both sides), not FL/FR only;
    clips equal GStreamer's own mixed decode. FLAC and WAV by their
    readers, 5.1 Vorbis by decodebin (the readers take mono and stereo
    Vorbis only): one mix on both paths."""
    os.makedirs(tmp_path / "a")
    path = str(tmp_path / "a" / f"s.{ext}")
    surround(path)
    for channels in (2, 1):
        ref = audioconvert_decode(path, channels)
        (whole, _), = run_clips(
            f"spdlsrc location={tmp_path} extensions={ext} ! "
            f"spdlaudiodecode sample-rate={RATE} channels={channels} "
            "duration=0")[0]
        assert whole.shape == ref.shape
        assert np.abs(whole - ref).max() <= 1e-5, channels
    # the centre alone: in both sides, equally
    os.unlink(path)
    surround(path, (0, 0, 1, 0, 0, 0))
    (lr, _), = run_clips(f"spdlsrc location={tmp_path} extensions={ext} ! "
                         f"spdlaudiodecode sample-rate={RATE} channels=2 "
                         "duration=0")[0]
    assert np.abs(lr[0]).max() > 0.05
    np.testing.assert_array_equal(lr[0], lr[1])


@pytest.mark.parametrize("layout,channels", [
    ("3.0", 3), ("quad", 4), ("5.0", 5), ("5.1", 6), ("6.1", 7), ("7.1", 8)])
def test_surround_flac_channels_in_ffmpegs_order(tmp_path, layout, channels):
    """FLAC of 3 to 8 channels, a tone in each: every channel where FFmpeg
    (and FLAC's format) puts it. flacdec (1.22) swaps 6.1's and 7.1's
    FC, LFE with the back pair; libFLAC's reader does not."""
    os.makedirs(tmp_path / "a")
    path = str(tmp_path / "a" / "s.flac")
    expr = "|".join(f"0.3*sin(2*PI*{110 * (k + 2)}*t)"
                    for k in range(channels))
    ffmpeg(["-f", "lavfi", "-i", f"aevalsrc={expr}:c={layout}:s={RATE}:d=1"],
           path)
    # the file's channels as stored (-ac N would remix 3.0 to 2.1, ...)
    ref = np.frombuffer(subprocess.run(
        ["ffmpeg", "-v", "error", "-i", path, "-f", "f32le", "-"],
        check=True, capture_output=True, timeout=120).stdout,
        "<f4").reshape(-1, channels).T
    assert (np.abs(ref).max(axis=1) > 0.2).all()    # no silent channel
    (whole, _), = run_clips(
        f"spdlsrc location={tmp_path} extensions=flac ! spdlaudiodecode "
        f"sample-rate={RATE} channels={channels} duration=0")[0]
    np.testing.assert_array_equal(whole, ref)


def damage(path, at, n, seed=0):
    """@n bytes from @at (a fraction of the size) overwritten with noise."""
    data = bytearray(open(path, "rb").read())
    pos = int(len(data) * at)
    data[pos:pos + n] = np.random.default_rng(seed).integers(
        0, 256, n, dtype=np.uint8).tobytes()
    open(path, "wb").write(bytes(data))


def test_damaged_lame_tagged_mp3_skipped_not_shifted(tmp_path):
    """An MP3 with a LAME tag (as ffmpeg writes it) and 4 KiB of damage
    in its middle: skipped as corrupt, the file and the damage named,
    counted; not decoded with every sample 1105 late (the encoder delay
    untrimmed). Its undamaged copy equals FFmpeg's decode."""
    os.makedirs(tmp_path / "a")
    for name in ("clean.mp3", "damaged.mp3"):
        ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=44100:"
                "duration=6:amplitude=0.3:seed=3", "-c:a", "libmp3lame",
                "-b:a", "128k"], str(tmp_path / "a" / name))
    damage(str(tmp_path / "a" / "damaged.mp3"), 0.5, 4096)
    ref = audiogen.ffmpeg_decode(str(tmp_path / "a" / "clean.mp3"))
    clips, warnings, counts = run_clips(
        f"spdlsrc location={tmp_path} extensions=mp3 ! spdlaudiodecode "
        "sample-rate=44100 duration=0.5 clips-per-file=3 sampling=uniform")
    assert {os.path.basename(m["path"]) for _, m in clips} == {"clean.mp3"}
    assert counts["total"] == 1 and counts["corrupt"] == 1, counts
    assert any("damaged.mp3" in w and "damaged" in w.split("damaged.mp3")[1]
               for w in warnings), warnings
    for arr, meta in clips:
        start = int(round(meta["start"] * 44100))
        assert np.abs(arr - ref[:, start:start + arr.shape[1]]).max() <= 1e-4


def clean_flac_clips(tmp_path, n_damaged):
    """Six 1 s clips of 5.1 FLACs: all of clean.flac's, the @n_damaged
    others skipped as corrupt. Returns the clips and the warnings."""
    clips, warnings, counts = run_clips(
        f"spdlsrc location={tmp_path} extensions=flac ! spdlaudiodecode "
        f"sample-rate={RATE} channels=6 duration=1 clips-per-file=6 "
        "sampling=uniform")
    assert {os.path.basename(m["path"]) for _, m in clips} == {"clean.flac"}
    assert len(clips) == 6
    assert counts["total"] == n_damaged == counts["corrupt"], counts
    return clips, warnings


def test_damaged_surround_flac_skipped_not_silently_off(tmp_path):
    """A 5.1 FLAC (as ffmpeg writes it) with one damaged frame: libFLAC's
    frame CRC catches it, so the file is skipped as corrupt, named and
    counted; its clips across the frame are not delivered off (flacdec
    decoded them 0.3 off, silently). Its clean copy equals FFmpeg's
    decode, all six channels."""
    os.makedirs(tmp_path / "a")
    for name in ("clean.flac", "damaged.flac"):
        ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate="
                f"{RATE}:duration=6:amplitude=0.3:seed=3", "-ac", "6"],
               str(tmp_path / "a" / name))
    damage(str(tmp_path / "a" / "damaged.flac"), 0.5, 16)
    ref = audiogen.ffmpeg_decode(str(tmp_path / "a" / "clean.flac"), 6)
    clips, warnings = clean_flac_clips(tmp_path, 1)
    assert any("damaged.flac" in w and "damaged" in w.split("damaged.flac")[1]
               for w in warnings), warnings
    for arr, meta in clips:
        start = int(round(meta["start"] * RATE))
        np.testing.assert_array_equal(arr, ref[:, start:start + arr.shape[1]])


def pink_m4a(root, name, opts=()):
    os.makedirs(root / "a", exist_ok=True)
    path = str(root / "a" / name)
    ffmpeg(["-f", "lavfi", "-i", f"anoisesrc=color=pink:sample_rate={RATE}:"
            "duration=5:amplitude=0.3:seed=3", "-c:a", "aac"] + list(opts),
           path)
    return path


def test_aac_noise_substitution_as_readme_says(tmp_path):
    """The README's AAC exception: FFmpeg's default AAC (perceptual noise
    substitution) gives clips after 0 that differ from FFmpeg's decode
    from the start by more than 1e-4 (0.09 on pink noise); with
    -aac_pns 0 the same clips are bit-exact."""
    worst = {}
    for opts in ((), ("-aac_pns", "0")):
        root = tmp_path / f"pns{len(opts)}"
        ref = audiogen.ffmpeg_decode(pink_m4a(root, "x.m4a", opts))
        clips, warnings, _ = run_clips(
            f"spdlsrc location={root} extensions=m4a ! spdlaudiodecode "
            f"sample-rate={RATE} duration=0.5 clips-per-file=8 "
            "sampling=uniform")
        assert len(clips) == 8 and not warnings
        diffs = []
        for arr, meta in clips:
            start = int(round(meta["start"] * RATE))
            if start == 0 or start + arr.shape[1] > 4.9 * RATE:
                continue        # the start; the end (below)
            diffs.append(np.abs(arr - ref[:, start:start + arr.shape[1]]).max())
        assert len(diffs) == 6
        worst[opts] = max(diffs)
    assert worst[()] > 1e-2, worst
    assert worst[("-aac_pns", "0")] == 0, worst


@gstbugs.QTDEMUX_EDIT_LIST_END
def test_m4a_ends_where_its_edit_list_ends(tmp_path):
    """A 5 s M4A (as ffmpeg writes it, edit list of 240000 samples from
    sample 1024): its whole decode is those 240000 samples, equal to
    FFmpeg's (which goes on through the encoder's padding). With qtdemux
    1.22.0 the last 384 are missing (the frame the edit list ends in);
    with its fix (1.22.3), all are there and equal."""
    path = pink_m4a(tmp_path, "x.m4a", ("-aac_pns", "0"))
    ref = audiogen.ffmpeg_decode(path)
    (whole, _), = run_clips(
        f"spdlsrc location={tmp_path} extensions=m4a ! spdlaudiodecode "
        f"sample-rate={RATE} duration=0")[0]
    assert whole.shape[1] == 5 * RATE, whole.shape
    assert np.abs(whole - ref[:, :5 * RATE]).max() == 0


def streamed_flac(path, expr, layout, seconds):
    """A FLAC as ffmpeg writes it to a pipe: STREAMINFO without a length
    (total_samples 0)."""
    with open(path, "wb") as f:
        subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi",
                        "-i", f"aevalsrc={expr}:c={layout}:s={RATE}:"
                        f"d={seconds}", "-f", "flac", "-"], stdout=f,
                       check=True, timeout=120)
    data = open(path, "rb").read()
    # STREAMINFO's last 36 bits before the MD5: the sample count
    assert int.from_bytes(data[21:26], "big") & 0xfffffffff == 0


@pytest.mark.parametrize("layout,channels", [("5.1", 6), ("6.1", 7),
                                             ("7.1", 8)])
def test_streamed_flac_channels_in_ffmpegs_order(tmp_path, layout, channels):
    """A FLAC with no length in its STREAMINFO goes through libFLAC too:
    every channel where FFmpeg puts it (flacdec moved 6.1's and 7.1's
    back channels before FC and LFE), clips at exact positions."""
    os.makedirs(tmp_path / "a")
    path = str(tmp_path / "a" / "s.flac")
    streamed_flac(path, "|".join(f"0.3*sin(2*PI*{110 * (k + 2)}*t)"
                                 for k in range(channels)), layout, 3)
    ref = np.frombuffer(subprocess.run(
        ["ffmpeg", "-v", "error", "-i", path, "-f", "f32le", "-"],
        check=True, capture_output=True, timeout=120).stdout,
        "<f4").reshape(-1, channels).T
    (whole, _), = run_clips(
        f"spdlsrc location={tmp_path} extensions=flac ! spdlaudiodecode "
        f"sample-rate={RATE} channels={channels} duration=0")[0]
    np.testing.assert_array_equal(whole, ref)
    clips, _, _ = run_clips(
        f"spdlsrc location={tmp_path} extensions=flac ! spdlaudiodecode "
        f"sample-rate={RATE} channels={channels} duration=0.5 "
        "clips-per-file=4 sampling=uniform")
    assert len(clips) == 4
    for arr, meta in clips:
        start = int(round(meta["start"] * RATE))
        np.testing.assert_array_equal(arr, ref[:, start:start + arr.shape[1]])


def test_streamed_flac_damage_skipped_and_placed(tmp_path):
    """A FLAC with no length and a damaged frame in its middle is skipped
    as corrupt (flacdec decoded it silently), and so is one with a
    length; both messages name the sample near the damage, not 0."""
    os.makedirs(tmp_path / "a")
    expr = "|".join(f"0.3*sin(2*PI*{110 * (k + 2)}*t)" for k in range(6))
    streamed_flac(str(tmp_path / "a" / "streamed.flac"), expr, "5.1", 6)
    ffmpeg(["-f", "lavfi", "-i", f"aevalsrc={expr}:c=5.1:s={RATE}:d=6"],
           str(tmp_path / "a" / "sized.flac"))
    for name in ("streamed.flac", "sized.flac"):
        damage(str(tmp_path / "a" / name), 0.5, 16)
    streamed_flac(str(tmp_path / "a" / "clean.flac"), expr, "5.1", 6)
    _, warnings = clean_flac_clips(tmp_path, 2)
    for name in ("streamed.flac", "sized.flac"):
        w, = [w for w in warnings if name in w]
        at = int(w.split("near sample ")[1].split(":")[0])
        # the damage is half way through the bytes: about 3 s in
        assert 2 * RATE < at < 4 * RATE, w


def mp3_frame_starts(data, first):
    """The byte offsets of the MPEG-1 layer 2 or 3 frames from @first on
    (as long as frames follow each other)."""
    rates = {2: (0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256,
                 320, 384),
             1: (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224,
                 256, 320)}
    starts, pos = [], first
    while pos + 4 <= len(data) and data[pos] == 0xff and \
            data[pos + 1] & 0xe0 == 0xe0:
        kbps = rates[(data[pos + 1] >> 1) & 3][data[pos + 2] >> 4]
        sr = (44100, 48000, 32000)[(data[pos + 2] >> 2) & 3]
        starts.append(pos)
        pos += 144 * kbps * 1000 // sr + ((data[pos + 2] >> 1) & 1)
    return starts


def pink_mp3(path, seed, *opts, seconds=3):
    ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=44100:"
            f"duration={seconds}:amplitude=0.3:seed={seed}", *opts], path)


LAME = ("-c:a", "libmp3lame", "-b:a", "128k")
UNTAGGED = LAME + ("-write_xing", "0", "-id3v2_version", "0")
MP2 = ("-c:a", "mp2", "-b:a", "192k", "-f", "mp2")


def damaged_mp3(path, kind):
    """MP3s FFmpeg decodes with a "Header missing": two ffmpeg-made files
    joined (the second's ID3v2 tag and LAME tag between them; a second
    file under 1/16 of the first leaves the first's LAME tag in use, its
    padding trimmed in the middle), a file without tags with 200 zero
    bytes, or 4 KiB of junk, between two frames (junk: layer 2 and layer
    3). Returns where the damage is."""
    if kind.startswith("joined"):
        pink_mp3(path + ".1.mp3", 3, *LAME)
        pink_mp3(path + ".2.mp3", 4, *LAME,
                 seconds=0.15 if kind == "joined-short" else 3)
        first = open(path + ".1.mp3", "rb").read()
        data = first + open(path + ".2.mp3", "rb").read()
        at = len(first)
    else:
        pink_mp3(path + ".1.mp3", 3, *(MP2 if kind == "junk-mp2" else
                                       UNTAGGED))
        data = open(path + ".1.mp3", "rb").read()
        at = mp3_frame_starts(data, 0)[60]
        # no byte is 0 or 0xff: not zeros, and no header inside
        junk = bytes(200) if kind == "zeros" else \
            np.random.default_rng(1).integers(1, 255, 4096,
                                              dtype=np.uint8).tobytes()
        data = data[:at] + junk + data[at:]
    for tmp in (path + ".1.mp3", path + ".2.mp3"):
        if os.path.exists(tmp):
            os.unlink(tmp)
    open(path, "wb").write(data)
    return at


@pytest.mark.parametrize("kind", ["joined", "joined-short", "zeros",
                                  "junk-mp2"])
def test_mp3_ffmpeg_decodes_past_damage(tmp_path, kind):
    """MP3s that FFmpeg decodes past bytes that are no frame (files joined,
    zeros or junk between frames): decoded as FFmpeg decodes them (junk
    and the frame after it dropped), the first file's encoder delay
    trimmed as FFmpeg trims it, clips exact, with a warning naming the
    file and the bytes, counted as recovered, not skipped."""
    os.makedirs(tmp_path / "a")
    path = str(tmp_path / "a" / "x.mp3")
    at = damaged_mp3(path, kind)
    ref = audiogen.ffmpeg_decode(path)
    stats = {}
    clips, warnings, counts = run_clips(
        f"spdlsrc location={tmp_path} extensions=mp3 ! spdlaudiodecode "
        "name=dec sample-rate=44100 duration=0", stats=stats)
    (whole, _), = clips
    assert whole.shape == ref.shape
    assert np.abs(whole - ref).max() <= 1e-4
    assert counts["total"] == 0 and stats["recovered"] == 1
    w, = warnings
    assert "x.mp3" in w and f"bytes {at} to " in w
    assert ("ID3v2 tag: files joined" in w) == kind.startswith("joined")
    clips, _, _ = run_clips(
        f"spdlsrc location={tmp_path} extensions=mp3 ! spdlaudiodecode "
        "sample-rate=44100 duration=0.25 clips-per-file=12 sampling=uniform")
    assert len(clips) == 12
    for arr, meta in clips:
        start = int(round(meta["start"] * 44100))
        assert np.abs(arr - ref[:, start:start + arr.shape[1]]).max() <= 1e-4


def test_mp3_junk_decoded_unlike_ffmpeg_skipped(tmp_path):
    """4 KiB of junk between two layer 3 frames: FFmpeg drops the frame
    after it and decodes the next from the bit reservoir's stale bytes,
    which libmpg123 cannot repeat: skipped as corrupt, the bytes named."""
    os.makedirs(tmp_path / "a")
    at = damaged_mp3(str(tmp_path / "a" / "junk.mp3"), "junk")
    pink_mp3(str(tmp_path / "a" / "clean.mp3"), 3, *UNTAGGED)
    clips, warnings, counts = run_clips(
        f"spdlsrc location={tmp_path} extensions=mp3 ! spdlaudiodecode "
        "sample-rate=44100 duration=0")
    assert [os.path.basename(m["path"]) for _, m in clips] == ["clean.mp3"]
    assert counts["total"] == 1 and counts["corrupt"] == 1, counts
    w, = [w for w in warnings if "junk.mp3" in w]
    assert f"bytes {at} to {at + 4096} " in w, w


@pytest.mark.parametrize("channels,layout", [(2, "stereo"), (6, "5.1")])
def test_pcm_in_matroska_whole_and_clips_equal_ffmpeg(tmp_path, channels,
                                                      layout):
    """PCM in Matroska (ffmpeg -c:a pcm_s16le x.mka): its blocks are
    stamped in whole milliseconds, 0.33 ms off the samples they hold. The
    whole file (duration 0) is FFmpeg's samples exactly, and a clip a
    contiguous run of them; the whole file gave the first block's 2032
    samples of 96000, silently, and clips had 32 samples of silence
    every 63 ms."""
    os.makedirs(tmp_path / "a")
    path = str(tmp_path / "a" / "pcm.mka")
    expr = "|".join(f"{0.3}*sin(2*PI*{f}*t)" for f in TONES[:channels])
    ffmpeg(["-f", "lavfi", "-i",
            f"aevalsrc={expr}:c={layout}:s={RATE}:d=2", "-c:a", "pcm_s16le"],
           path)
    out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path,
                          "-f", "f32le", "-"], check=True,
                         capture_output=True, timeout=120).stdout
    ref = np.frombuffer(out, "<f4").reshape(-1, channels).T
    assert ref.shape[1] == 2 * RATE
    clips, warnings, counts = run_clips(
        f"spdlsrc location={tmp_path} extensions=mka ! "
        f"spdlaudiodecode name=dec duration=0 "
        f"sample-rate={RATE} channels={channels}")
    assert len(clips) == 1 and not warnings, warnings
    whole, _ = clips[0]
    assert whole.shape == ref.shape
    assert np.array_equal(whole, ref)
    # a clip is read after a seek, which lands where the block's stamp
    # says: within half a millisecond (24 samples) of FFmpeg's count from
    # the start, as FLAC in Matroska (docs/performance.md); from there on
    # contiguous, no silence between blocks
    clips, warnings, counts = run_clips(
        f"spdlsrc location={tmp_path} extensions=mka ! "
        f"spdlaudiodecode name=dec duration=0.5 "
        f"clips-per-file=3 sampling=random seed=5 sample-rate={RATE} "
        f"channels={channels}")
    assert len(clips) == 3 and not warnings, warnings
    for arr, meta in clips:
        start = int(round(meta["start"] * RATE))
        n = arr.shape[1]
        assert n == RATE // 2
        shifts = [d for d in range(-24, 25) if start + d >= 0 and
                  np.array_equal(arr, ref[:, start + d:start + d + n])]
        assert shifts, start
