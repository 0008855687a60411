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
    n = int(round(rate * seconds))
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


# words of the made-up transcripts: plain ASCII, and some that a JSON
# manifest escapes (quotes, a backslash, non-ASCII letters)
WORDS = ("the", "a", "speech", "model", "reads", "whole", "utterances",
         "with", "their", "transcripts", "batch", "padded", "longest",
         "offset", "duration", "recording", "seven", "forty", "two",
         "café", "naïve", "straße", "'quoted'", "\"said\"", "back\\slash",
         "日本", "zoë")
# the recordings' (extension, sample rate): FLAC and Opus at 16 and 48 kHz
ASR_KINDS = (("flac", 16000), ("opus", 48000), ("flac", 48000),
             ("opus", 16000))


def transcript(rng):
    """A made-up transcript of 3 to 20 words."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 20)))


def asr_segments(rng, seconds, shortest=2.0, longest=20.0):
    """[(offset, duration)] of utterances cut from a recording of @seconds:
    one after the other with pauses of up to 1 s, each of @shortest to
    @longest seconds, to the millisecond, none past the end."""
    out = []
    t = round(rng.uniform(0.0, 0.5), 3)
    while True:
        d = round(rng.uniform(shortest, longest), 3)
        if t + d > seconds - 0.05:
            break
        out.append((t, d))
        t = round(t + d + rng.uniform(0.0, 1.0), 3)
    return out


def make_asr(root, recordings=8, short_files=16, seed=0, jobs=1,
             recording_seconds=60.0, short_seconds=(2.0, 15.0),
             kinds=ASR_KINDS):
    """An ASR set under @root as NeMo ships one: @recordings recordings of
    @recording_seconds (FLAC and Opus at 16 and 48 kHz in turn, @kinds) in
    recordings/, cut into 2 to 20 s utterances by a NeMo manifest, and
    @short_files whole files in short/ (one entry each, no offset).
    Writes manifest.json (NeMo's JSON Lines: audio_filepath relative to
    the manifest's folder, offset, duration, text) and manifest.csv (the
    same rows, offset 0 for whole files). Returns the manifest entries
    as dicts (audio_filepath, offset or None, duration, text)."""
    import csv
    import json
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(seed)
    work, entries = [], []
    for i in range(recordings):
        ext, rate = kinds[i % len(kinds)]
        rel = f"recordings/rec{i:04d}.{ext}"
        work.append((os.path.join(root, rel), rate, 1, recording_seconds,
                     seed * 100003 + i))
        for offset, duration in asr_segments(rng, recording_seconds):
            entries.append({"audio_filepath": rel, "offset": offset,
                            "duration": duration, "text": transcript(rng)})
    for i in range(short_files):
        ext, rate = kinds[i % len(kinds)]
        rel = f"short/utt{i:04d}.{ext}"
        # whole samples at either rate: to the 1/1000 s
        seconds = round(rng.uniform(*short_seconds), 3)
        work.append((os.path.join(root, rel), rate, 1, seconds,
                     seed * 100003 + recordings + i))
        entries.append({"audio_filepath": rel, "offset": None,
                        "duration": seconds, "text": transcript(rng)})
    for sub in ("recordings", "short"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(lambda j: make_file(*j), work))
    with open(os.path.join(root, "manifest.json"), "w", encoding="utf-8") as f:
        for e in entries:
            line = {k: v for k, v in e.items() if v is not None}
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(os.path.join(root, "manifest.csv"), "w", encoding="utf-8",
              newline="") as f:
        w = csv.writer(f)
        w.writerow(["audio_filepath", "offset", "duration", "text"])
        for e in entries:
            w.writerow([e["audio_filepath"], e["offset"] or 0, e["duration"],
                        e["text"]])
    return entries
