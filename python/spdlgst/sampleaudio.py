"""Speech-like audio files made with GStreamer's encoders: the data the
quickstart's audio demo and bench/make-audio use.

Class folders of utterance-length files the way speech commands and
speaker sets are distributed: mostly 16 kHz mono FLAC, some 44.1 kHz MP3,
48 kHz Opus (Ogg) and WAV (16 or 44.1 kHz, some stereo). The signal is
speech-like: voiced syllables (a wandering pitch with formant-shaped
harmonics) and fricative noise, 3 to 6 per second, with pauses.
Deterministic for a given seed. Needs gst-launch-1.0 with flacenc,
lamemp3enc and opusenc (Debian's gstreamer1.0-plugins-good and -bad).
"""
import os
import random
import subprocess
import wave

import numpy as np

ENCODERS = {
    "flac": ["flacenc"],
    "mp3": ["lamemp3enc", "target=bitrate", "bitrate=96"],
    "opus": ["opusenc", "bitrate=32000", "!", "oggmux"],
}


def kind_of(rng):
    """(extension, sample rate, channels) of one file."""
    r = rng.random()
    if r < 0.7:
        return "flac", 16000, 1
    if r < 0.8:
        return "mp3", 44100, 1
    if r < 0.9:
        return "opus", 48000, 1
    return "wav", rng.choice((16000, 44100)), rng.choice((1, 2))


def speech(rate, seconds, channels, seed):
    """int16 [n, channels]: syllables of harmonics and noise, and pauses."""
    rng = np.random.default_rng(seed)
    n = int(rate * seconds)
    out = np.zeros(n)
    t = 0
    while t < n:
        length = int(rate * rng.uniform(0.08, 0.3))
        seg = np.arange(min(length, n - t)) / rate
        env = np.sin(np.pi * np.arange(len(seg)) / max(len(seg), 1)) ** 2
        if rng.random() < 0.75:
            f0 = rng.uniform(90, 260) * (1 + 0.1 * np.sin(2 * np.pi * 3 * seg))
            phase = 2 * np.pi * np.cumsum(f0) / rate
            formants = rng.uniform((300, 900, 2200), (900, 2000, 3200))
            x = sum(np.sin(k * phase) / k *
                    sum(np.exp(-((k * f0 - f) / 150) ** 2) for f in formants)
                    for k in range(1, 30))
        else:
            x = rng.standard_normal(len(seg)) * 0.3
        out[t:t + len(seg)] = 0.3 * env * x
        t += len(seg) + int(rate * rng.uniform(0.0, 0.25))
    pcm = np.clip(out * 32767, -32768, 32767).astype("<i2")
    return np.repeat(pcm[:, None], channels, axis=1)


def make_file(path, rate, channels, seconds, seed):
    """Writes one file; its extension (wav, flac, mp3, opus) says the
    format."""
    ext = os.path.splitext(path)[1][1:]
    wav = path if ext == "wav" else path + ".src.wav"
    with wave.open(wav, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(speech(rate, seconds, channels, seed).tobytes())
    if ext != "wav":
        try:
            subprocess.run(["gst-launch-1.0", "-q", "filesrc",
                            f"location={wav}", "!", "wavparse", "!",
                            "audioconvert", "!", "audioresample", "!"] +
                           ENCODERS[ext] + ["!", "filesink",
                                            f"location={path}"],
                           check=True, stdin=subprocess.DEVNULL)
        finally:
            os.unlink(wav)


def make_audio(root, count, classes, seed=0, jobs=1, seconds=(2.0, 15.0),
               kinds=None):
    """@count files in @classes class folders under @root, each of a
    length drawn from @seconds; @kinds: a list of (extension, rate,
    channels) to take in turn instead of the speech-set mix. Returns the
    paths."""
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(seed)
    work = []
    for i in range(count):
        ext, rate, channels = kinds[i % len(kinds)] if kinds else kind_of(rng)
        folder = os.path.join(root, f"class{i % classes:03d}")
        os.makedirs(folder, exist_ok=True)
        work.append((os.path.join(folder, f"utt{i:05d}.{ext}"), rate,
                     channels, rng.uniform(*seconds), seed * 100003 + i))
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(lambda j: make_file(*j), work))
    return [w[0] for w in work]
