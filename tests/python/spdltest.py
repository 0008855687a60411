"""Runs a launch line into an appsink and collects what comes out."""
import numpy as np
from gi.repository import Gst


def run_frames(launch, timeout_s=60):
    """Returns [(array HxWxC, meta dict)] for each sample of @launch."""
    pipeline = Gst.parse_launch(launch + " ! appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    frames = []
    try:
        while True:
            sample = sink.emit("try-pull-sample", Gst.SECOND)
            if sample is None:
                msg = bus.pop_filtered(Gst.MessageType.ERROR)
                if msg is not None:
                    raise RuntimeError(msg.parse_error()[0].message)
                if sink.get_property("eos"):
                    break
                timeout_s -= 1
                assert timeout_s > 0, "pipeline timed out"
                continue
            frames.append(frame_of(sample))
    finally:
        pipeline.set_state(Gst.State.NULL)
    return frames


def run_samples(launch, convert, timeout_s=120, counts_of=()):
    """[convert(sample)] for each sample of @launch, the warnings, the
    first error (None without one: the run stops there) and the
    error-counts of the elements named in @counts_of, by name, reasons
    with a count only."""
    pipeline = Gst.parse_launch(launch + " ! appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    out, warnings, error, counts = [], [], None, {}
    try:
        while error is None:
            sample = sink.emit("try-pull-sample", Gst.SECOND)
            while True:
                msg = bus.pop_filtered(Gst.MessageType.ERROR |
                                       Gst.MessageType.WARNING)
                if msg is None:
                    break
                if msg.type == Gst.MessageType.ERROR:
                    error = error or msg.parse_error()[0].message
                else:
                    warnings.append(msg.parse_warning()[0].message)
            if sample is None:
                if error or sink.get_property("eos"):
                    break
                timeout_s -= 1
                assert timeout_s > 0, "pipeline timed out"
                continue
            out.append(convert(sample))
        for name in counts_of:
            c = pipeline.get_by_name(name).get_property("error-counts")
            counts[name] = {c.nth_field_name(i): c.get_value(
                c.nth_field_name(i)) for i in range(c.n_fields())
                if c.get_value(c.nth_field_name(i))}
    finally:
        pipeline.set_state(Gst.State.NULL)
    return out, warnings, error, counts


def decode_folder(folder, tail, ext):
    """({file name: frame} delivered, {file name: warning text},
    error-counts) of spdldecode (@tail, max-errors=-1, every warning
    posted) over the files of @ext in @folder, a class folder; the counts
    also hold "recovered", the samples delivered from damaged data. Each
    warning names one file."""
    pipeline = Gst.parse_launch(
        f"spdlsrc location={folder.parent} extensions={ext} ! spdldecode "
        f"name=dec {tail} max-errors=-1 warning-limit=100000 ! "
        "appsink name=sink sync=false")
    sink, bus = pipeline.get_by_name("sink"), pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    decoded, warnings = {}, {}
    names = {p.name for p in folder.iterdir()}
    try:
        while True:
            sample = sink.emit("try-pull-sample", 30 * Gst.SECOND)
            if sample is None:
                break
            got, meta = frame_of(sample)
            decoded[meta["path"].rsplit("/", 1)[1]] = got
        assert sink.get_property("eos")
        while (msg := bus.pop_filtered(Gst.MessageType.WARNING |
                                       Gst.MessageType.ERROR)) is not None:
            assert msg.type == Gst.MessageType.WARNING, msg.parse_error()
            err, debug = msg.parse_warning()
            named = [n for n in names if f"/{n}" in debug + err.message]
            assert len(named) == 1, (err.message, debug)
            warnings[named[0]] = err.message + " " + debug
        dec = pipeline.get_by_name("dec")
        counts = dec.get_property("error-counts")
        counts.set_value("recovered", dec.get_property("recovered"))
    finally:
        pipeline.set_state(Gst.State.NULL)
    return decoded, warnings, counts


def frame_of(sample):
    caps = sample.get_caps().get_structure(0)
    width, height = caps.get_value("width"), caps.get_value("height")
    channels = 1 if caps.get_value("format") == "GRAY8" else 3
    buf = sample.get_buffer()
    ok, info = buf.map(Gst.MapFlags.READ)
    assert ok
    stride = (width * channels + 3) // 4 * 4
    rows = np.frombuffer(info.data, np.uint8).reshape(height, stride)
    arr = rows[:, : width * channels].reshape(height, width, channels).copy()
    buf.unmap(info)
    meta = buf.get_custom_meta("GstSpdlSampleMeta")
    s = meta.get_structure()
    return arr, {k: s.get_value(k) for k in ("index", "label", "epoch", "path")}
