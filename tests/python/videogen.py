"""Small test videos made with ffmpeg, and FFmpeg's own decode of them (the
reference the loader's frames and pts are compared with)."""
import json
import os
import subprocess

import numpy as np

FFMPEG = "/usr/bin/ffmpeg"
FFPROBE = "/usr/bin/ffprobe"

# meson test sets MALLOC_PERTURB_ for the tests; FFmpeg and libx264 are
# not under test (a run once made a file FFmpeg could not decode)
ENV = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}


def _run(cmd, path):
    """stdout of @cmd; its whole stderr and the file's size and hash when
    it fails (a reference FFmpeg once failed to decode inside the full
    suite only)."""
    import hashlib

    done = subprocess.run(cmd, capture_output=True, env=ENV,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        data = open(path, "rb").read() if os.path.exists(path) else b""
        raise RuntimeError("%s failed (%d) on %s (%d bytes, sha1 %s): %s" % (
            cmd[0], done.returncode, path, len(data),
            hashlib.sha1(data).hexdigest(), done.stderr.decode(errors="replace")))
    return done.stdout

# name: (size, rate, seconds, ffmpeg output options)
KINDS = {
    # B-frames and a 250-frame GOP: one keyframe in the whole clip
    "gop250.mp4": ("340x256", 30, 3, ["-c:v", "libx264", "-g", "250",
                                      "-bf", "2", "-pix_fmt", "yuv420p"]),
    "short.mp4": ("320x240", 25, 1, ["-c:v", "libx264", "-g", "12",
                                     "-pix_fmt", "yuv420p"]),
    "vp9.webm": ("320x240", 25, 2, ["-c:v", "libvpx-vp9", "-b:v", "400k",
                                    "-g", "30"]),
    # audio first, then video
    "audio.mkv": ("256x192", 30, 2, ["-c:v", "libx264", "-g", "15",
                                     "-pix_fmt", "yuv420p", "-c:a", "aac"]),
    # the moov atom after the media data
    "moovend.mov": ("320x180", 24, 2, ["-c:v", "libx264", "-g", "24",
                                       "-pix_fmt", "yuv420p"]),
}


def make(path, size, rate, seconds, opts, audio=False, vfr=False,
         source="testsrc2"):
    """@source: an FFmpeg lavfi video source that takes size, rate and
    duration, with options of its own or not (testsrc2,
    "gradients=n=4:seed=1", ...)."""
    cmd = [FFMPEG, "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
           "%s%ssize=%s:rate=%d:duration=%g" % (
               source, ":" if "=" in source else "=", size, rate, seconds)]
    if audio:
        cmd += ["-f", "lavfi", "-i", "sine=frequency=440:duration=%g" % seconds]
    if vfr:
        # 30 fps for 20 frames, then 10 fps: timestamps only a VFR-aware
        # reader gets right
        cmd += ["-vf", "setpts='if(lt(N,20),N/30,20/30+(N-20)/10)/TB'",
                "-fps_mode", "passthrough"]
    cmd += opts + [str(path)]
    _run(cmd, str(path))
    # what the references decode from it must decode
    _run([FFMPEG, "-nostdin", "-v", "error", "-i", str(path), "-f", "null", "-"],
         str(path))


# H.264 with B-frames in Matroska at a variable frame rate, made the way
# bench/make-videos makes its VFR files: 25 fps for 2 s, then a third of
# it. setpts' arithmetic rounds 29/25 s down onto 1/25 s, so two frames
# share the time 1.12 s (FFmpeg shows both at it; a parser drops the
# second of two equal container timestamps).
VFR_BFRAMES = ("320x240", 25, 3, [
    "-vf", "setpts='if(lt(N,50),N/25,2+(N-50)*3/25)/TB'",
    "-fps_mode", "passthrough", "-c:v", "libx264", "-g", "250", "-bf", "2",
    "-pix_fmt", "yuv420p"])


# x264's open GOPs (as cameras and some encoders write them): keyframes
# after the first are I-frames that are not IDR pictures (recovery
# points), and the B-frames decoded after each are shown before it
OPEN_GOP = ["-c:v", "libx264", "-bf", "3", "-x264-params",
            "open-gop=1:keyint=50:min-keyint=50:scenecut=0",
            "-pix_fmt", "yuv420p"]
CLOSED_GOP = ["-c:v", "libx264", "-bf", "3", "-x264-params",
              "keyint=50:min-keyint=50:scenecut=0", "-pix_fmt", "yuv420p"]


def convert(src, dst, opts, input_opts=()):
    """ffmpeg [input_opts] -i src [opts] dst: a stream copy, a cut, new
    metadata (`-ss 1.3 ... -c copy` writes an MP4 edit list)."""
    _run([FFMPEG, "-nostdin", "-v", "error", "-y"] + list(input_opts) +
         ["-i", str(src)] + list(opts) + [str(dst)], str(src))


def make_set(root):
    """Class folders "a" and "b" of the kinds above plus a VFR mkv."""
    os.makedirs(os.path.join(root, "a"), exist_ok=True)
    os.makedirs(os.path.join(root, "b"), exist_ok=True)
    paths = []
    for i, (name, (size, rate, seconds, opts)) in enumerate(KINDS.items()):
        path = os.path.join(root, "ab"[i % 2], name)
        make(path, size, rate, seconds, opts, audio=name == "audio.mkv")
        paths.append(path)
    path = os.path.join(root, "b", "vfr.mkv")
    make(path, "320x240", 30, 3, ["-c:v", "libx264", "-bf", "0",
                                  "-pix_fmt", "yuv420p"], vfr=True)
    paths.append(path)
    return paths


def probe_pts(path):
    """pts_time of every frame FFmpeg shows, in presentation order."""
    out = subprocess.run(
        [FFPROBE, "-v", "error", "-select_streams", "v:0", "-show_frames",
         "-show_entries", "frame=pts_time,best_effort_timestamp_time",
         "-of", "json", str(path)], check=True, capture_output=True,
        env=ENV).stdout
    frames = json.loads(out)["frames"]
    pts = [float(f.get("pts_time", f.get("best_effort_timestamp_time")))
           for f in frames]
    return np.array(sorted(pts))


def decode_rgb(path, autorotate=True):
    """Every frame as FFmpeg decodes it, rgb24, [N, H, W, 3]: as FFmpeg
    shows it (its display matrix applied; @autorotate False: as
    stored)."""
    info = subprocess.run(
        [FFPROBE, "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height:stream_side_data=rotation", "-of", "json",
         str(path)], check=True, capture_output=True, env=ENV,
        stdin=subprocess.DEVNULL).stdout
    stream = json.loads(info)["streams"][0]
    w, h = stream["width"], stream["height"]
    rotation = [d.get("rotation", 0) for d in stream.get("side_data_list", [])]
    if autorotate and rotation and round(rotation[0]) % 180 == 90:
        w, h = h, w
    raw = _run(
        [FFMPEG, "-nostdin", "-v", "error"] +
        ([] if autorotate else ["-noautorotate"]) +
        ["-i", str(path), "-map", "0:v:0",
         "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24",
         "-"], str(path))
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)


def decode_yuv420(path):
    """Every frame's Y, U and V planes as FFmpeg decodes them: [N, H, W],
    [N, H/2, W/2] twice (even sizes)."""
    info = subprocess.run(
        [FFPROBE, "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height", "-of", "json", str(path)], check=True,
        capture_output=True, env=ENV,
        stdin=subprocess.DEVNULL).stdout
    stream = json.loads(info)["streams"][0]
    w, h = stream["width"], stream["height"]
    raw = subprocess.run(
        [FFMPEG, "-nostdin", "-v", "error", "-i", str(path), "-map", "0:v:0",
         "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p",
         "-"], check=True, capture_output=True, env=ENV,
        stdin=subprocess.DEVNULL).stdout
    frames = np.frombuffer(raw, np.uint8).reshape(-1, h * w * 3 // 2)
    y = frames[:, :h * w].reshape(-1, h, w)
    u = frames[:, h * w:h * w * 5 // 4].reshape(-1, h // 2, w // 2)
    v = frames[:, h * w * 5 // 4:].reshape(-1, h // 2, w // 2)
    return y, u, v


def bt601_rgb(y, u, v):
    """Limited-range BT.601 YCbCr to RGB, exact and rounded, each chroma
    sample for its 2x2 pixels."""
    kr, kb = 0.299, 0.114
    kg = 1 - kr - kb
    u = u.repeat(2, -2).repeat(2, -1).astype(float)
    v = v.repeat(2, -2).repeat(2, -1).astype(float)
    yn = (y.astype(float) - 16) / 219
    cb, cr = (u - 128) / 224, (v - 128) / 224
    r = yn + 2 * (1 - kr) * cr
    b = yn + 2 * (1 - kb) * cb
    g = (yn - kr * r - kb * b) / kg
    rgb = np.stack([r, g, b], -1) * 255
    return np.clip(np.floor(rgb + 0.5), 0, 255).astype(np.uint8)
