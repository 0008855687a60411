"""Audio files of known signals, written with Python's wave module and
encoded with GStreamer's own encoders (gst-launch-1.0)."""
import os
import subprocess
import wave

import numpy as np

ENCODERS = {
    "flac": "flacenc",
    "mp3": "lamemp3enc target=bitrate bitrate=128",
    "ogg": "vorbisenc ! oggmux",
    "opus": "opusenc bitrate=64000 ! oggmux",
    "m4a": "avenc_aac ! mp4mux",
}


def signal(kind, rate, seconds, channels=1, number=0):
    """float64 [channels, n] in [-1, 1]: a log sweep (kind "sweep") or
    tone number @number (kind "tone"), channel c a different tone."""
    n = int(round(rate * seconds))
    t = np.arange(n) / rate
    out = np.empty((channels, n))
    for c in range(channels):
        if kind == "sweep":
            f0, f1 = 60.0 * (c + 1), min(6000.0, rate * 0.4)
            k = np.log(f1 / f0) / max(t[-1], 1e-9)
            out[c] = 0.5 * np.sin(2 * np.pi * f0 * (np.exp(k * t) - 1) / k)
        else:
            f = 220.0 + 37.0 * number + 101.0 * c
            out[c] = 0.25 * np.sin(2 * np.pi * f * t) + \
                0.2 * np.sin(2 * np.pi * 3.1 * f * t + c)
    return out


def pcm16(x):
    return np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")


def write_wav(path, pcm, rate):
    """@pcm int16 [channels, n]."""
    with wave.open(path, "wb") as w:
        w.setnchannels(pcm.shape[0])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.ascontiguousarray(pcm.T).tobytes())


def read_wav(path):
    """int16 [channels, n] and the rate."""
    with wave.open(path, "rb") as w:
        raw = w.readframes(w.getnframes())
        data = np.frombuffer(raw, "<i2").reshape(-1, w.getnchannels()).T
        return data.copy(), w.getframerate()


def encode(wav, out, encoder=None):
    """@out's extension picks the encoder, unless @encoder says it."""
    ext = os.path.splitext(out)[1][1:]
    subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={wav}",
                    "!", "wavparse", "!", "audioconvert", "!"] +
                   (encoder or ENCODERS[ext]).split() + ["!", "filesink",
                                            f"location={out}"],
                   check=True, timeout=120)


def make(path, kind, rate, seconds, channels=1, number=0):
    """Writes @path (its extension says the format) from the signal; the
    int16 samples of the WAV it was made from."""
    pcm = pcm16(signal(kind, rate, seconds, channels, number))
    if path.endswith(".wav"):
        write_wav(path, pcm, rate)
    else:
        tmp = path + ".src.wav"
        write_wav(tmp, pcm, rate)
        encode(tmp, path)
        os.unlink(tmp)
    return pcm


def ffmpeg_decode(path, channels=1):
    """FFmpeg's float decode at the file's own rate: [channels, n]."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "f32le",
                          "-ac", str(channels), "-"], check=True,
                         capture_output=True, timeout=120).stdout
    return np.frombuffer(out, "<f4").reshape(-1, channels).T.copy()


def video_without_audio(path):
    """An MP4 with one H.264 video stream and no audio."""
    subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=10",
                    "!", "x264enc", "!", "mp4mux", "!", "filesink",
                    f"location={path}"], check=True, timeout=120)
