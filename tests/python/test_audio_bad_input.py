"""spdlaudiodecode on bad audio input: truncated FLAC and MP3, an absurd
declared sample rate, files that are not audio (a GIF, an HLS playlist),
and a long file whose 1 s clip decodes only its span (memory and time
stay small)."""
import http.server
import io
import os
import threading
import time
import subprocess
import sys
import textwrap

import numpy as np

import audiogen
from test_audio import EXT, RATE, run_clips


def test_truncated_flac_and_mp3(tmp_path):
    """Cut at 60%: clips inside what is left decode as from the whole
    file; a file whose declared length promises a clip past the cut is
    skipped as truncated, naming the file."""
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    for d in (whole, cut):
        os.makedirs(d / "a")
    for ext in ("flac", "mp3"):
        audiogen.make(str(whole / "a" / f"x.{ext}"), "tone", RATE, 4.0)
        data = open(whole / "a" / f"x.{ext}", "rb").read()
        open(cut / "a" / f"x.{ext}", "wb").write(data[:len(data) * 6 // 10])
    props = "duration=0.5 sampling=uniform clips-per-file=4"
    ref, _, _ = run_clips(f"spdlsrc location={whole} extensions={EXT} ! "
                          "spdlaudiodecode threads=2 duration=0")
    got, warnings, counts = run_clips(
        f"spdlsrc location={cut} extensions={EXT} ! "
        f"spdlaudiodecode threads=2 {props}")
    # the FLAC declares 4 s: its clip past the cut is missing, and the
    # file is skipped whole as truncated, named; the MP3 declares no
    # length: its clips spread over what is left
    names = {os.path.basename(m["path"]) for _, m in got}
    assert names == {"x.mp3"} and len(got) == 4
    assert counts["total"] == 1 and counts["truncated"] == 1, counts
    assert any("x.flac" in w and "no audio at" in w for w in warnings), \
        warnings
    by_name = {os.path.basename(m["path"]): a for a, m in ref}
    for arr, meta in got:
        start = int(round(meta["start"] * RATE))
        assert meta["start"] < 2.4 and meta["length"] == 8000
        np.testing.assert_allclose(
            arr[0], by_name[os.path.basename(meta["path"])][0,
                                                            start:start + 8000],
            atol=1e-4, err_msg=meta["path"])


def test_absurd_declared_sample_rate(tmp_path):
    os.makedirs(tmp_path / "a")
    audiogen.make(str(tmp_path / "a" / "good.wav"), "tone", RATE, 1.0)
    data = bytearray(open(tmp_path / "a" / "good.wav", "rb").read())
    data[24:28] = (2_000_000_000).to_bytes(4, "little")     # sample rate
    data[28:32] = (4_000_000_000).to_bytes(4, "little")     # byte rate
    open(tmp_path / "a" / "rate.wav", "wb").write(bytes(data))
    clips, warnings, counts = run_clips(
        f"spdlsrc location={tmp_path} extensions={EXT} ! "
        "spdlaudiodecode threads=2 duration=0.5")
    assert [os.path.basename(m["path"]) for _, m in clips] == ["good.wav"]
    assert counts["total"] == 1, counts
    assert any("rate.wav" in w for w in warnings), warnings


def test_gif_and_playlist_named_audio_skipped_at_once(tmp_path):
    """A GIF and an HLS playlist named as audio files are skipped at once
    as unsupported-format, each named in a warning, and the rest of the
    epoch is delivered. gst-libav's GIF demuxer (the only one) reads on
    forever at the end of the data: a stall until the chain's 30 s
    timeout for each; an HLS demuxer would fetch the playlist's URIs."""
    from PIL import Image

    requests = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        os.makedirs(tmp_path / "x")
        frames = [Image.new("RGB", (32, 24), (40 * i, 0, 255 - 40 * i))
                  for i in range(6)]
        gif = io.BytesIO()
        frames[0].save(gif, "GIF", save_all=True, append_images=frames[1:],
                       duration=100, loop=0)
        (tmp_path / "x" / "anim.wav").write_bytes(gif.getvalue())
        (tmp_path / "x" / "gif89a.mp3").write_bytes(
            b"GIF89a" + np.random.default_rng(1).bytes(4000))
        url = "http://127.0.0.1:%d/" % server.server_address[1]
        (tmp_path / "x" / "list.mp3").write_text(
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-VERSION:3\n"
            "#EXTINF:2.0,\n%sseg0.mp3\n#EXTINF:2.0,\n%sseg1.mp3\n"
            "#EXT-X-ENDLIST\n" % (url, url))
        audiogen.make(str(tmp_path / "x" / "good.flac"), "tone", RATE, 1.0)
        start = time.monotonic()
        clips, warnings, counts = run_clips(
            f"spdlsrc location={tmp_path} extensions={EXT},mp3 ! "
            "spdlaudiodecode threads=2 duration=0.5")
        elapsed = time.monotonic() - start
    finally:
        server.shutdown()
        server.server_close()
    assert [os.path.basename(m["path"]) for _, m in clips] == ["good.flac"]
    for name, kind in (("anim.wav", "image/gif"), ("gif89a.mp3", "image/gif"),
                       ("list.mp3", "application/x-hls")):
        assert any(name in w and f"the file is {kind}, not an audio file" in w
                   for w in warnings), (name, warnings)
    assert len(warnings) == 3, warnings
    assert counts["unsupported-format"] == 3 and counts["total"] == 3, counts
    assert requests == []
    # the whole epoch, well under the chain's 30 s timeout
    assert elapsed < 20, elapsed


PEAK = textwrap.dedent("""
    import resource, sys, time
    sys.path.insert(0, {here!r})
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    Gst.init(None)
    from test_audio import run_clips
    t = time.monotonic()
    clips, _, _ = run_clips("spdlsrc location=" + sys.argv[1] +
                            " extensions=flac ! spdlaudiodecode threads=1 "
                            "duration=1.0 seed=5")
    assert len(clips) == 1 and clips[0][0].shape == (1, 16000)
    assert abs(clips[0][0]).max() > 0.1
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
          time.monotonic() - t, clips[0][1]["start"])
""")


def peak_kib_and_seconds(root):
    out = subprocess.run(
        [sys.executable, "-c", PEAK.format(here=os.path.dirname(__file__)),
         str(root)], check=True, capture_output=True, text=True,
        timeout=300).stdout.split()
    return int(out[0]), float(out[1]), float(out[2])


def flac_tone(path, seconds):
    subprocess.run(["gst-launch-1.0", "-q", "audiotestsrc", "wave=sine",
                    "samplesperbuffer=16000", f"num-buffers={seconds}", "!",
                    "audio/x-raw,rate=16000,channels=1,format=S16LE", "!",
                    "flacenc", "!", "filesink", f"location={path}"],
                   check=True, timeout=300)


def test_long_file_decodes_only_the_clip(tmp_path):
    """A 1 s clip of a 30-minute FLAC (115 MB as float samples): peak
    memory within 50 MB of a 10 s file's, and a few seconds."""
    for name, seconds in (("short", 10), ("long", 1800)):
        os.makedirs(tmp_path / name / "a")
        flac_tone(tmp_path / name / "a" / "x.flac", seconds)
    short_kib, _, _ = peak_kib_and_seconds(tmp_path / "short")
    long_kib, elapsed, start = peak_kib_and_seconds(tmp_path / "long")
    assert long_kib - short_kib < 50 * 1024, (short_kib, long_kib)
    assert elapsed < 20, elapsed
    assert 0 <= start <= 1799


def id3_tagged(data):
    """@data behind an ID3v2.3 tag with one TIT2 frame: the WAV reader
    declines it, and decodebin plugs id3demux before the demuxer."""
    frame = b"TIT2" + (2).to_bytes(4, "big") + b"\0\0" + b"\0x"
    return b"ID3\x03\0\0" + bytes([0, 0, 0, len(frame)]) + frame + data


def wav_bytes(pcm, rate, odd_tail=b""):
    """A WAV of int16 [channels, n] @pcm; @odd_tail appended to the data
    chunk (not whole frames), then its pad byte when odd."""
    frames = np.ascontiguousarray(pcm.T).tobytes() + odd_tail
    data = b"data" + len(frames).to_bytes(4, "little") + frames
    if len(frames) % 2:
        data += b"\0"
    channels = pcm.shape[0]
    fmt = (b"fmt " + (16).to_bytes(4, "little") + (1).to_bytes(2, "little")
           + channels.to_bytes(2, "little") + rate.to_bytes(4, "little")
           + (rate * 2 * channels).to_bytes(4, "little")
           + (2 * channels).to_bytes(2, "little") + (16).to_bytes(2, "little"))
    body = b"WAVE" + fmt + data
    return b"RIFF" + len(body).to_bytes(4, "little") + body


def test_pipeline_path_ends_without_waiting_for_the_timeout(tmp_path):
    """Files the readers decline, decoded by the pipeline, with a 5 s
    timeout: each is decoded or skipped with its reason at once, never
    after waiting out the timeout. A WAV behind an ID3 tag decodes as the
    same WAV without it; one whose data chunk ends in a part frame (odd,
    with its pad byte) gives wavparse 1.22 in pull mode no sample (caps,
    then EOS while prerolling: the first span waited for an EOS appsink
    had already reported) and is skipped as empty. A chained Ogg (two
    Opus or two Vorbis files one after the other, which the Opus reader
    declines) decodes as its links one after the other (decodebin's next
    group continues the audio, where it went to a fakesink); clips are cut
    from the whole file (seeking into another link stalls decodebin); a
    chain whose links differ in rate is skipped as unsupported. Without
    reused chains every file's new pipeline links its audio (the first
    file's stream was taken as still linked: a timeout for each after
    it)."""
    ref, pipe = tmp_path / "ref", tmp_path / "pipe"
    os.makedirs(ref / "a")
    os.makedirs(pipe / "a")
    pcm = audiogen.pcm16(audiogen.signal("tone", RATE, 1.5, channels=2))
    (ref / "a" / "tagged.wav").write_bytes(wav_bytes(pcm, RATE))
    (pipe / "a" / "tagged.wav").write_bytes(id3_tagged(wav_bytes(pcm, RATE)))
    (pipe / "a" / "odd.wav").write_bytes(
        id3_tagged(wav_bytes(pcm, RATE, odd_tail=b"\x01")))
    links = {}
    for name, ext, rate, seconds in (("o1", "opus", 48000, 0.7),
                                     ("o2", "opus", 48000, 1.1),
                                     ("o3", "opus", 16000, 0.8),
                                     ("v1", "ogg", 44100, 0.6),
                                     ("v2", "ogg", 44100, 0.9)):
        path = str(ref / "a" / f"{name}.{ext}")
        audiogen.make(path, "sweep", rate, seconds, number=len(links))
        links[name] = open(path, "rb").read()
    (pipe / "a" / "chained.opus").write_bytes(links["o1"] + links["o2"])
    (pipe / "a" / "rates.opus").write_bytes(links["o1"] + links["o3"])
    (pipe / "a" / "chained.ogg").write_bytes(links["v1"] + links["v2"])

    def run(root, props):
        return run_clips(f"spdlsrc location={root} extensions={EXT} ! "
                         f"spdlaudiodecode threads=1 timeout=5000000000 "
                         f"{props}", timeout_s=60)

    want, _, _ = run(ref, "duration=0")
    want = {os.path.basename(m["path"]): a for a, m in want}
    # reuse-chains=false: a new pipeline for every file, where the first
    # file's linked audio stream was still taken as linked
    for props in ("duration=0", "duration=0.5 clips-per-file=3 seed=3",
                  "duration=0 reuse-chains=false"):
        got, warnings, counts = run(pipe, props)
        assert counts["timeout"] == 0, (props, counts, warnings)
        assert counts["total"] == 2, (props, counts, warnings)
        assert counts["empty"] == 1 and counts["unsupported"] == 1, counts
        assert any("odd.wav" in w and "no audio sample" in w
                   for w in warnings), warnings
        assert any("rates.opus" in w and "from 48000 Hz, 1 channels to "
                   "16000 Hz, 1 channels" in w for w in warnings), warnings
        # the whole files: each link decoded, one after the other
        whole = {"tagged.wav": want["tagged.wav"],
                 "chained.opus": np.concatenate(
                     [want["o1.opus"], want["o2.opus"]], axis=1),
                 "chained.ogg": np.concatenate(
                     [want["v1.ogg"], want["v2.ogg"]], axis=1)}
        names = sorted(os.path.basename(m["path"]) for _, m in got)
        per_file = 1 if props.startswith("duration=0 ") or \
            props == "duration=0" else 3
        assert names == sorted(list(whole) * per_file), names
        for arr, meta in got:
            name = os.path.basename(meta["path"])
            start = int(round(meta["start"] * RATE))
            ref_arr = whole[name][:, start:start + arr.shape[1]]
            # a lossy link's samples where they meet differ (the Opus
            # reader, opusdec's S16; the second link's resampler history)
            tol = 1e-6 if name.endswith(".wav") else 1e-4
            assert abs(arr.shape[1] - whole[name].shape[1]) <= 2 \
                if per_file == 1 else arr.shape[1] == 8000, (name, arr.shape)
            n = min(arr.shape[1], ref_arr.shape[1])
            err = np.abs(arr[:, :n] - ref_arr[:, :n])
            assert np.median(err) < tol and err.mean() < 10 * tol, \
                (name, props, meta["start"], np.median(err), err.mean())
