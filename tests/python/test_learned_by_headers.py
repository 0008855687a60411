"""spdlsrc shard-learn=headers: remote shards without index files learned
from their tar headers by small ranged GETs give the byte-identical index
streaming them gives, on tars with GNU long names, pax headers, large JSON
labels, directories, zero-size members and no end-of-archive blocks, from
S3 too; servers that misbehave with ranges are learned as a stream of
them is; a stall or a cancel mid-walk ends the start."""
import io
import json
import os
import random
import sys
import tarfile

import pytest

from test_learned_index import run, cache_files, tar_requests
from test_remote import Server, proxy, big_shards
from test_s3 import s3, s3_env  # noqa: F401 (s3: a fixture)
from test_shards import key_of


def add(tar, name, data, **kw):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for k, v in kw.items():
        setattr(info, k, v)
    tar.addfile(info, io.BytesIO(data))


def write_shards(root, kind, rng):
    os.makedirs(root)
    for s in range(2):
        path = os.path.join(root, "x-%06d.tar" % s)
        fmt = tarfile.PAX_FORMAT if kind == "pax" else tarfile.GNU_FORMAT
        with tarfile.open(path, "w", format=fmt) as tar:
            if kind == "dirs":
                d = tarfile.TarInfo("sub")
                d.type = tarfile.DIRTYPE
                tar.addfile(d)
            for j in range(6):
                key = "s%dm%d" % (s, j)
                if kind in ("gnu", "pax"):
                    key = "dir.with.dots/" + ("long" * 40) + key
                img = rng.randbytes(60000 + rng.randrange(3) * 512)
                if kind == "pax":
                    add(tar, key + ".jpg", img,
                        pax_headers={"comment": "x" * (5000 if j % 2 else 10)})
                else:
                    add(tar, key + ".jpg", img)
                if kind == "json":
                    label = {"meta": {"pad": "y" * (6000 if j % 2 else 3),
                                      "cls": j % 4}}
                    add(tar, key + ".json", json.dumps(label).encode())
                else:
                    add(tar, key + ".cls", b"%d" % (j % 4))
                if kind == "dirs":
                    add(tar, key + ".txt", b"")
                    d = tarfile.TarInfo(key + ".d")
                    d.type = tarfile.DIRTYPE
                    tar.addfile(d)
                    if j == 3:
                        add(tar, "s%dzero.jpg" % s, b"")
        if kind == "boundary":
            # no end-of-archive blocks and a size a multiple of 4096
            with open(path, "rb") as f:
                data = f.read()
            end = len(data)
            while end > 0 and data[end - 512:end] == bytes(512):
                end -= 512
            data = data[:end]
            # pad the last member's data to a 4096 boundary via an extra member
            with open(path, "wb") as f:
                f.write(data)
    return "x-{000000..000001}.tar"


@pytest.mark.parametrize("kind", ["gnu", "pax", "json", "dirs", "boundary"])
def test_headers_equal_stream(tmp_path, kind):
    """The same samples, warnings and cache file as streamed learning,
    and no shard streamed."""
    rng = random.Random(kind)
    pattern = write_shards(str(tmp_path / "s"), kind, rng)
    extra = ' label-key=json label-field=meta.cls' if kind == "json" else ""
    log = str(tmp_path / "requests.log")
    p = proxy(str(tmp_path), log=log)
    res = {}
    try:
        loc = "%s/s/%s" % (p.url, pattern)
        for mode in ("stream", "headers"):
            open(log, "w").close()
            res[mode] = run(loc, 'shard-cache="%s" shard-learn=%s '
                            'remote-reads=ranges%s' % (tmp_path / mode, mode, extra))
            res[mode + "-log"] = tar_requests(log)
    finally:
        p.stop()
    s, h = res["stream"], res["headers"]
    assert (s[1], s[2]) == (h[1], h[2])
    assert [(o[1], o[3], o[4]) for o in s[0]] == [(o[1], o[3], o[4]) for o in h[0]]
    (a,) = [n for n in cache_files(tmp_path / "stream") if n.endswith(".members")]
    (b,) = [n for n in cache_files(tmp_path / "headers") if n.endswith(".members")]
    assert (tmp_path / "stream" / a).read_bytes() == (tmp_path / "headers" / b).read_bytes()
    # learned by headers, not streamed
    assert res["headers-log"][1] == []


@pytest.mark.parametrize("mode,n", [("ignore-after", 3), ("ignore-after", 1),
                                    ("head-bigger", 0), ("head-smaller", 0)])
def test_misbehaving_servers_learn_as_a_stream_does(tmp_path, mode, n):
    """A server that answers some ranges and then ignores Range, or whose
    HEAD says another size than its GETs give: the samples and errors are
    those of streamed learning (the cache files too, but for a HEAD that
    lies)."""
    truth, pattern = big_shards(str(tmp_path / "big"), 3, 6, 50000, seed=1)
    os.unlink(tmp_path / "big" / "shards.idx")
    srv = Server([sys.executable, "-u", os.path.join(os.path.dirname(os.path.abspath(__file__)), "rangeserver.py"), str(tmp_path), mode, str(n)],
                 r"port (\d+)")
    try:
        loc = "%s/big/%s" % (srv.url, pattern)
        res = {}
        for m in ("stream", "headers"):
            stats = []
            res[m] = run(loc, 'shard-cache="%s" shard-learn=%s http-retries=0 '
                         'remote-reads=ranges' % (tmp_path / m, m), stats)
    finally:
        srv.stop()
    s, h = res["stream"], res["headers"]
    assert sorted(key_of(o[3]) for o in s[0]) == sorted(key_of(o[3]) for o in h[0])
    assert (s[2] is None) == (h[2] is None)
    if mode.startswith("head-"):
        # a HEAD that always says another size: streaming, which sees the
        # GET's, does not keep the index; the walk reads the tar as it is
        # (the same samples) and keeps it under what the HEAD says, which
        # a next run's HEAD says again
        return
    assert cache_files(tmp_path / "stream") == cache_files(tmp_path / "headers")


@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_stall_mid_walk(tmp_path, how):
    """A server that stops answering mid-walk: an error within the
    http-timeout (no second try as a stream), or at once when cancelled."""
    import threading, time
    from gi.repository import Gst
    truth, pattern = big_shards(str(tmp_path / "big"), 40, 6, 50000, seed=1)
    os.unlink(tmp_path / "big" / "shards.idx")
    srv = Server([sys.executable, "-u", os.path.join(os.path.dirname(os.path.abspath(__file__)), "rangeserver.py"), str(tmp_path), "stall", "3"],
                 r"port (\d+)")
    try:
        loc = "%s/big/%s" % (srv.url, pattern)
        timeout = 1500 if how == "timeout" else 60000
        pipeline = Gst.parse_launch(
            'spdlsrc name=src location="%s" shard-cache="%s" shard-learn=headers '
            'http-retries=0 http-timeout=%d ! fakesink' % (loc, tmp_path / "c", timeout))
        starting = threading.Thread(target=lambda: pipeline.set_state(Gst.State.PAUSED))
        t0 = time.monotonic()
        starting.start()
        time.sleep(1.0)
        if how == "cancel":
            assert starting.is_alive()
            t0 = time.monotonic()
            pipeline.get_by_name("src").emit("cancel")
        msg = pipeline.get_bus().timed_pop_filtered(20 * Gst.SECOND, Gst.MessageType.ERROR)
        dt = time.monotonic() - t0
        assert msg is not None
        starting.join(10)
        assert not starting.is_alive()
        pipeline.set_state(Gst.State.NULL)
        assert dt < (1.0 if how == "cancel" else 5.0)
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    base = tmp_path_factory.mktemp("headers-s3")
    truth, pattern = big_shards(str(base / "big"), 3, 6, 50000, seed=3)
    os.unlink(base / "big" / "shards.idx")
    return base, truth, pattern, None


def test_s3_headers_equal_stream(data, s3, monkeypatch, tmp_path):
    """From S3 (moto, signature checks on): the same index, no shard
    streamed."""
    base, truth, pattern, _ = data
    s3_env(monkeypatch, s3)
    log = str(tmp_path / "log")
    p = proxy(s3.url, log=log)
    monkeypatch.setenv("AWS_ENDPOINT_URL", p.url)
    res = {}
    try:
        for m in ("stream", "headers"):
            open(log, "w").close()
            stats = []
            res[m] = run("s3://data/ds/big/%s" % pattern,
                         'shard-cache="%s" shard-learn=%s remote-reads=ranges'
                         % (tmp_path / m, m), stats)
            res[m + "log"] = tar_requests(log)
    finally:
        p.stop()
    for m in ("stream", "headers"):
        assert res[m][2] is None and len(res[m][0]) == len(truth)
    (a,) = [n for n in cache_files(tmp_path / "stream") if n.endswith(".members")]
    (b,) = [n for n in cache_files(tmp_path / "headers") if n.endswith(".members")]
    assert (tmp_path / "stream" / a).read_bytes() == (tmp_path / "headers" / b).read_bytes()
    assert res["headerslog"][1] == []


@pytest.mark.parametrize("learn", ["stream", "headers"])
def test_body_short_of_its_head_is_a_truncated_shard(tmp_path, learn):
    """A server whose GETs end at a sample boundary, short of the size its
    HEAD announced (200s with a correct Content-Length): each shard is
    reported truncated, naming it and both sizes, counted as
    truncated-shard, its samples before the cut delivered and no index
    kept; however it is read (learned streaming or by headers, read
    streaming or by range)."""
    truth, pattern = big_shards(str(tmp_path / "big"), 3, 6, 50000, seed=1)
    os.unlink(tmp_path / "big" / "shards.idx")
    sizes = {n: os.path.getsize(tmp_path / "big" / n)
             for n in os.listdir(tmp_path / "big")}
    before = []         # the keys rangeserver's cut leaves whole
    for name, size in sizes.items():
        with tarfile.open(tmp_path / "big" / name) as tar:
            starts = {}
            for m in tar.getmembers():
                starts.setdefault(m.name.split(".", 1)[0], m.offset)
        cut = min(o for o in starts.values() if o >= 0.6 * size)
        before += [k for k, o in starts.items() if o < cut]
    srv = Server([sys.executable, "-u", os.path.join(os.path.dirname(os.path.abspath(__file__)), "rangeserver.py"), str(tmp_path), "get-shorter"],
                 r"port (\d+)")
    try:
        loc = "%s/big/%s" % (srv.url, pattern)
        for reads in ("stream", "ranges"):
            out, warnings, error, counts = run(
                loc, 'shard-cache="%s" shard-learn=%s http-retries=0 '
                'remote-reads=%s' % (tmp_path / "c", learn, reads))
            assert error is None
            # the samples before the cut, each with its label and bytes
            assert sorted(key_of(o[3]) for o in out) == sorted(before), out
            for _, label, _, path, d in out:
                assert (label, d) == truth[key_of(path)]
            truncated = [w for w in warnings if "truncated" in w.lower()]
            assert len(truncated) == 3, warnings
            for name, size in sizes.items():
                (w,) = [w for w in truncated if name in w]
                assert str(size) in w, w            # the HEAD's size
            assert counts.get_value("truncated-shard") == 3
            assert [n for n in cache_files(tmp_path / "c")
                    if n.endswith(".members")] == []
    finally:
        srv.stop()


@pytest.mark.parametrize("mode", ["no-validators", "no-validators+refuse-head"])
def test_no_validators_said_once_per_run(tmp_path, mode):
    """A server that sends neither ETag nor Last-Modified: the learned
    index cannot be cached (a changed shard could not be told), so it is
    learned on every run, and each run says so once, and why. The same
    where HEAD is refused and the first byte's GET stands for it."""
    truth, pattern = big_shards(str(tmp_path / "big"), 3, 4, 20000, seed=3)
    os.unlink(tmp_path / "big" / "shards.idx")
    srv = Server([sys.executable, "-u", os.path.join(os.path.dirname(os.path.abspath(__file__)), "rangeserver.py"), str(tmp_path), mode],
                 r"port (\d+)")
    try:
        for _ in range(2):
            stats = []
            out, warnings, error, _ = run("%s/big/%s" % (srv.url, pattern),
                                          'shard-cache="%s"' % (tmp_path / "c"), stats)
            assert error is None and len(out) == 12
            assert len(warnings) == 1, warnings
            assert "neither an ETag nor a Last-Modified" in warnings[0]
            assert "learned again on every run" in warnings[0]
            assert "big-000000.tar" in warnings[0] and "3 of 3 shards" in warnings[0]
            assert stats[0].get_value("shard-index-source") == "learned"
            for _, label, _, path, d in out:
                assert (label, d) == truth[key_of(path)]
            assert [n for n in cache_files(tmp_path / "c")
                    if n.endswith(".members")] == []
    finally:
        srv.stop()
