"""Kinetics-like video datasets made from nothing, with Debian's FFmpeg: for
the demo, tests and benchmarks, where no videos can be shipped.

Class folders of short clips the way Kinetics-400 is distributed after the
usual re-encode: mostly 340x256 (some 640x360), 30 or 25 fps, H.264 with
250-frame GOPs and B-frames, some VP9 in WebM, some with an AAC audio
track, a few with a variable frame rate (Matroska). The picture is FFmpeg's
testsrc2 with moving noise, so the encoder and decoder have real work.
Layout: ROOT/class<NNN>/video<NNNNN>.<ext>. Deterministic for a given seed.

Needs /usr/bin/ffmpeg with libx264 and libvpx (Debian's ffmpeg package).
"""
import os
import random
import subprocess
from concurrent.futures import ThreadPoolExecutor

FFMPEG = "/usr/bin/ffmpeg"
H264 = ["-c:v", "libx264", "-preset", "veryfast", "-g", "250", "-bf", "2",
        "-pix_fmt", "yuv420p"]
VP9 = ["-c:v", "libvpx-vp9", "-b:v", "600k", "-g", "250", "-deadline",
       "realtime", "-cpu-used", "8"]


def kind_of(rng):
    """(extension, size, rate, audio, vfr, codec options) of one video."""
    r = rng.random()
    size = "640x360" if rng.random() < 0.2 else "340x256"
    rate = 30 if rng.random() < 0.6 else 25
    if r < 0.15:
        return "webm", size, rate, False, False, VP9
    if r < 0.2:
        return "mkv", size, rate, False, True, H264
    return "mp4", size, rate, rng.random() < 0.3, False, H264


def make_video(path, size, rate, seconds, audio, vfr, opts, seed):
    """Writes one video with FFmpeg (CalledProcessError when it fails)."""
    cmd = [FFMPEG, "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
           f"testsrc2=size={size}:rate={rate}:duration={seconds},"
           f"noise=alls=12:allf=t+u:all_seed={seed}"]
    if audio:
        cmd += ["-f", "lavfi", "-i", f"sine=frequency={220 + seed % 500}:"
                f"duration={seconds}", "-c:a", "aac", "-b:a", "64k"]
    if vfr:
        # the first two seconds at the full rate, then a third of it
        cmd += ["-vf", f"setpts='if(lt(N,{2 * rate}),N/{rate},"
                f"2+(N-{2 * rate})*3/{rate})/TB'", "-fps_mode", "passthrough"]
    subprocess.run(cmd + opts + ["-threads", "1", path], check=True,
                   stdin=subprocess.DEVNULL)


def make_videos(root, count, classes, seconds=10.0, seed=0, jobs=1):
    """count videos of seconds each in class folders under root; returns
    their paths in index order (the files do not depend on jobs)."""
    rng = random.Random(seed)
    work = []
    for i in range(count):
        ext, size, rate, audio, vfr, opts = kind_of(rng)
        folder = os.path.join(root, f"class{i % classes:03d}")
        os.makedirs(folder, exist_ok=True)
        work.append((os.path.join(folder, f"video{i:05d}.{ext}"), size, rate,
                     seconds, audio, vfr, opts, seed * 100003 + i))
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for _ in pool.map(lambda job: make_video(*job), work):
            pass
    return [job[0] for job in work]
