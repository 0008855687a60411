"""spdlsrc on remote data: tar shards and single objects over HTTP from
Python's http.server on 127.0.0.1, through a fault-injecting proxy
(resets, 503s, truncation, hangs). S3: test_s3.py."""
import getpass
import hashlib
import io
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time

import pytest
from gi.repository import Gst

from test_shards import (make_image_folder, make_shards, run_src, key_of,
                         read_members_index)
from test_checkpoint import check_elastic_resume

HERE = os.path.dirname(os.path.abspath(__file__))
N_SAMPLES = 40


class Server:
    """A server process on 127.0.0.1 that prints its port."""

    def __init__(self, argv, port_re=r"(\d+)"):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.search(port_re, line)
        assert m, "server did not start: %r" % line
        self.port = int(m.group(1))
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def http_server(root):
    return Server([sys.executable, "-u", "-m", "http.server", "0", "--bind",
                   "127.0.0.1", "--directory", root], r"port (\d+)")


def proxy(upstream, *faults, log=None):
    argv = [sys.executable, "-u", os.path.join(HERE, "faultproxy.py"), upstream]
    argv += [str(f) for f in faults]
    if log:
        argv += ["--log", log]
    return Server(argv)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """An ImageFolder, its shards, and an http.server serving both."""
    base = tmp_path_factory.mktemp("remote")
    truth = make_image_folder(str(base / "folder"), N_SAMPLES, seed=1)
    location = make_shards(str(base / "folder"), str(base / "shards"), 8)
    server = http_server(str(base))
    yield base, truth, os.path.basename(location), server
    server.stop()


def summary(out):
    return [(i, label, hashlib.sha1(d).hexdigest()) for i, label, _, _, d in out]


def test_shards_over_http_match_local(data):
    base, truth, pattern, server = data
    props = " shuffle=true seed=9 shuffle-buffer=6 num-epochs=2"
    local, _, error, _ = run_src('location="%s/shards/%s"' % (base, pattern) + props)
    assert error is None and len(local) == 2 * N_SAMPLES
    stats = []
    remote, warnings, error, _ = run_src(
        'location="%s/shards/%s"' % (server.url, pattern) + props, stats=stats)
    # http.server has no Range support: each shard streamed once an epoch,
    # the order that of ranged reads; one rank streams them anyway
    # (remote-reads=auto): nothing to warn of
    assert error is None and warnings == []
    assert summary(remote) == summary(local)
    assert stats[0].get_value("http-range-ignored") == 0
    for _, label, _, path, d in remote:
        assert path.startswith(server.url) and (label, d) == truth[key_of(path)]
    # ranks: equal counts, together every sample; said once, naming the
    # server (each rank downloads every shard)
    seen = []
    for rank in range(3):
        out, warnings, error, _ = run_src(
            'location="%s/shards/%s" num-shards=3 shard-index=%d'
            % (server.url, pattern, rank) + props)
        assert error is None and len(out) == 2 * 14
        assert len(warnings) == 1
        assert server.url in warnings[0] and "byte ranges" in warnings[0]
        seen += [o[0] for o in out if o[2] == 0]
    assert set(seen) == set(range(N_SAMPLES))


@pytest.mark.parametrize("ranges,reads", [(True, "ranges"), (True, "stream"),
                                          (False, "auto")])
def test_shards_over_http_resume_on_other_world_sizes(data, tmp_path, ranges, reads):
    """Saved on 2 ranks mid-epoch, resumed on 1 and 3, over HTTP: each
    remaining sample once, with its label and pixels (the last rank of 3
    wrapping round to the epoch's start); from a server that answers byte
    ranges, by range or streaming each shard (remote-reads), and from one
    that does not (http.server behind the proxy: shards streamed whole,
    the same order)."""
    base, truth, pattern, server = data
    log = str(tmp_path / "requests.log")
    p = proxy(str(base) if ranges else server.url, log=log)
    try:
        check_elastic_resume('"%s/shards/%s"' % (p.url, pattern), N_SAMPLES, 2,
                             "remote-reads=" + reads)
    finally:
        p.stop()
    with open(log) as f:
        requests = [r.split() for r in f.read().splitlines() if ".tar" in r]
    requests = [r for r in requests if r[-1] != "HEAD"]
    assert requests
    if reads == "ranges":   # members by range, never whole shards
        assert all(r[1].startswith("bytes=") for r in requests)
    else:                   # whole shards, never a range
        assert all(r[1] == "-" for r in requests)


def test_adjacent_members_share_a_request(data, tmp_path):
    """Unshuffled, a rank's members lie close together: one ranged request
    reads several (here a shard each). On 2 ranks the other rank's members
    lie between them, as large as its own: not read over (that would move
    every byte on each rank), a request each."""
    base, truth, pattern, server = data
    n_shards = N_SAMPLES // 8
    for world, requests in ((1, n_shards), (2, N_SAMPLES // 2)):
        log = str(tmp_path / ("requests-%d.log" % world))
        p = proxy(str(base), log=log)
        try:
            out, warnings, error, _ = run_src(
                'location="%s/shards/%s" num-shards=%d remote-reads=ranges'
                % (p.url, pattern, world))
        finally:
            p.stop()
        assert error is None and warnings == []
        assert [o[0] for o in out] == list(range(0, N_SAMPLES, world))
        for _, label, _, path, d in out:
            assert (label, d) == truth[key_of(path)]
        with open(log) as f:
            tars = [r.split() for r in f.read().splitlines() if ".tar" in r]
        assert len(tars) == requests
        assert all(r[1].startswith("bytes=") for r in tars)


class CountingServer:
    """Python's http.server in a thread on 127.0.0.1, counting the body
    bytes it sent per path, and the GETs. Without @ranges every GET is
    answered whole (http.server has no Range support); with them it says
    Accept-Ranges: bytes and answers a single range "bytes=N-M" with a
    206, as object stores do."""

    def __init__(self, root, ranges=False):
        import http.server
        import threading

        self.sent = {}
        self.gets = []          # (path, Range or None)
        lock = threading.Lock()
        sent, gets = self.sent, self.gets

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=root, **kw)

            def log_message(self, *a):
                pass

            def end_headers(self):
                if ranges:
                    self.send_header("Accept-Ranges", "bytes")
                super().end_headers()

            def send_head(self):
                if self.command == "GET":
                    with lock:
                        gets.append((self.path, self.headers.get("Range")))
                m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
                if not ranges or m is None:
                    return super().send_head()
                path = self.translate_path(self.path)
                with open(path, "rb") as f:
                    whole = f.read()
                first = int(m.group(1))
                last = min(int(m.group(2) or len(whole) - 1), len(whole) - 1)
                if first >= len(whole):
                    self.send_error(416)
                    return None
                self.send_response(206)
                self.send_header("Content-Type", "application/x-tar")
                self.send_header("Content-Range", "bytes %d-%d/%d"
                                 % (first, last, len(whole)))
                self.send_header("Content-Length", str(last - first + 1))
                self.send_header("Last-Modified", self.date_time_string(
                    int(os.path.getmtime(path))))
                self.end_headers()
                return io.BytesIO(whole[first:last + 1])

            def copyfile(self, source, outputfile):
                while True:
                    chunk = source.read(16 * 1024)
                    if not chunk:
                        break
                    try:
                        outputfile.write(chunk)
                    except OSError:
                        break       # the client hung up
                    with lock:
                        sent[self.path] = sent.get(self.path, 0) + len(chunk)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def tar_bytes(self):
        return sum(n for path, n in self.sent.items() if path.endswith(".tar"))

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_server_without_ranges_streams_each_shard_once(tmp_path):
    """One shard of 200 samples (about 0.8 MB) from a server without Range
    support: a shuffled epoch reads about the shard once (each member read
    by a ranged GET would download the shard up to it: ~100x), every
    sample once with its label, in the order a ranged read gives. On 2
    ranks, each rank streams it once, and one warning names the server."""
    n = 200
    truth = make_image_folder(str(tmp_path / "folder"), n, seed=4)
    location = make_shards(str(tmp_path / "folder"), str(tmp_path / "shards"), n)
    pattern = os.path.basename(location)
    size = sum(os.path.getsize(str(f)) for f in (tmp_path / "shards").glob("*.tar"))
    props = " shuffle=true seed=3 shuffle-buffer=50"
    local, _, error, _ = run_src('location="%s/shards/%s"' % (tmp_path, pattern) + props)
    assert error is None and len(local) == n
    server = CountingServer(str(tmp_path))
    try:
        stats = []
        out, warnings, error, _ = run_src(
            'location="%s/shards/%s"' % (server.url, pattern) + props, stats=stats)
        ratio = server.tar_bytes() / size
        assert error is None and warnings == []
        assert summary(out) == summary(local)
        assert sorted(o[0] for o in out) == list(range(n))
        for _, label, _, path, d in out:
            assert (label, d) == truth[key_of(path)]
        assert stats[0].get_value("http-range-ignored") == 0
        assert ratio <= 1.5, ratio
        print("bytes served / shard size, one rank: %.3f" % ratio)
        # two ranks: each streams the shard once, together every sample
        seen = []
        for rank in range(2):
            server.sent.clear()
            out, warnings, error, _ = run_src(
                'location="%s/shards/%s" num-shards=2 shard-index=%d'
                % (server.url, pattern, rank) + props)
            assert error is None and len(out) == n // 2
            assert len(warnings) == 1 and server.url in warnings[0]
            assert "does not answer byte ranges" in warnings[0]
            assert server.tar_bytes() / size <= 1.5
            seen += [o[0] for o in out]
        assert sorted(seen) == list(range(n))
    finally:
        server.stop()


def shard_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, f))
               for f in os.listdir(folder) if f.endswith(".tar"))


def test_one_rank_streams_each_shard_once(data):
    """One rank reads every member of every shard: by default
    (remote-reads=auto) each shard is streamed once, a GET each, no more
    than the shards' bytes; the samples, labels and order those of ranged
    reads (remote-reads=ranges: a GET per sample or a few) and of the local
    shards. Two epochs: each streams the shards again."""
    base, truth, pattern, _ = data
    n_shards = N_SAMPLES // 8
    size = shard_bytes(str(base / "shards"))
    props = " shuffle=true seed=9 shuffle-buffer=6 num-epochs=2"
    local, _, error, _ = run_src('location="%s/shards/%s"' % (base, pattern) + props)
    assert error is None and len(local) == 2 * N_SAMPLES
    server = CountingServer(str(base), ranges=True)
    gets = {}
    try:
        for mode in ("auto", "ranges", "stream"):
            server.sent.clear()
            del server.gets[:]
            out, warnings, error, _ = run_src(
                'location="%s/shards/%s" remote-reads=%s' % (server.url, pattern, mode)
                + props)
            assert error is None and warnings == []
            assert summary(out) == summary(local)
            for _, label, _, path, d in out:
                assert (label, d) == truth[key_of(path)]
            gets[mode] = ([g for g in server.gets if g[0].endswith(".tar")],
                          server.tar_bytes() / size)
    finally:
        server.stop()
    for mode in ("auto", "stream"):
        tars, moved = gets[mode]
        assert len(tars) == 2 * n_shards and all(r is None for _, r in tars)
        assert len({p for p, _ in tars}) == n_shards
        assert moved <= 2 * 1.1, moved
    tars, moved = gets["ranges"]
    assert all(r is not None for _, r in tars)
    assert len(tars) > 2 * N_SAMPLES // 2, len(tars)
    print("GETs of .tar, 2 epochs of %d samples: auto %d, ranges %d; bytes / "
          "shard bytes: auto %.3f, ranges %.3f" % (
              N_SAMPLES, len(gets["auto"][0]), len(tars), gets["auto"][1], moved))


@pytest.mark.parametrize("bound", [1, 4000])
def test_streamed_members_held_within_shuffle_buffer_bytes(data, bound):
    """Streaming on one rank holds the members read ahead of their turn
    within shuffle-buffer-bytes: one that would pass it is read by a
    ranged GET at its turn, the member whose turn it is comes from the
    stream whatever its size (every image here, about 1.4 kB, is larger
    than 1 byte; 4000 holds two). The same samples and order."""
    base, truth, pattern, _ = data
    props = " shuffle=true seed=4 shuffle-buffer=10"
    local, _, error, _ = run_src('location="%s/shards/%s"' % (base, pattern) + props)
    assert error is None and len(local) == N_SAMPLES
    sizes = [len(d) for *_, d in local]
    assert 1000 < min(sizes) and max(sizes) < 2000
    server = CountingServer(str(base), ranges=True)
    try:
        out, warnings, error, _ = run_src(
            'location="%s/shards/%s" shuffle-buffer-bytes=%d' % (server.url, pattern, bound)
            + props)
        tars = [g for g in server.gets if g[0].endswith(".tar")]
    finally:
        server.stop()
    assert error is None and warnings == []
    assert summary(out) == summary(local)
    whole = [g for g in tars if g[1] is None]
    ranged = [g for g in tars if g[1] is not None]
    assert len(whole) == N_SAMPLES // 8
    # without a bound no member is read twice; here some are, by range
    assert 0 < len(ranged) < N_SAMPLES
    if bound == 1:
        # the first sample's is streamed, as is each at its turn
        assert len(ranged) >= N_SAMPLES // 4


# ---------------------------------------------------------------------------
# Streaming's warm-up: members far ahead in the streams fetched by range

BIG_N = 240
BIG_PER_SHARD = 60
WARMUP_AHEAD = 1024 * 1024      # gstspdlshards.c
WARMUP_SHARE = 25


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """4 shards of 60 members of 24-40 kB (random bytes: spdlsrc does not
    decode) and their shards.members: (root, pattern, {key: (label, bytes)},
    {member name: (shard, offset, size)}, shards' bytes)."""
    base = tmp_path_factory.mktemp("bigremote")
    rng = random.Random(12)
    truth = {}
    for i in range(BIG_N):
        label = i % 3
        os.makedirs(str(base / "folder" / ("c%d" % label)), exist_ok=True)
        data = rng.randbytes(rng.randrange(24000, 40000))
        name = "c%d/m%03d.jpg" % (label, i)
        with open(str(base / "folder" / name), "wb") as f:
            f.write(data)
        truth[name] = (label, data)
    location = make_shards(str(base / "folder"), str(base / "shards"),
                           BIG_PER_SHARD, "--shuffle", "1")
    members = {name: (shard, offset, size) for shard, offset, size, _, name
               in read_members_index(str(base / "shards"))}
    return (base, os.path.basename(location), truth, members,
            shard_bytes(str(base / "shards")))


def member_of(path):
    return path.split(".tar:", 1)[1]


def warmup_bound(members, epochs):
    """The most ranged GETs the warm-up may make: its bytes are 1/25 of
    the epoch's members' (with their headers)."""
    sizes = [512 + size for _, _, size in members.values()]
    return epochs * (sum(sizes) // WARMUP_SHARE // min(sizes) + 1)


def tar_gets(server):
    tars = [g for g in server.gets if g[0].endswith(".tar")]
    return [g for g in tars if g[1] is None], [g for g in tars if g[1] is not None]


def test_streamed_epoch_starts_with_ranged_reads(big):
    """One rank streaming each shard (http-requests=8: http.server's
    listen backlog drops more connections at once): the first turns'
    members lie up to a
    shuffle buffer (here about 4 MB) ahead in the streams, so those more
    than 1 MiB ahead are fetched by ranged GETs (the first sample's among
    them) and passed over in the streams; a bounded few (1/25 of
    the epoch's bytes), then the streams alone: a GET per shard an epoch,
    no more than 1.1x the shards' bytes. The samples, labels and order of
    the local shards and of remote-reads=ranges; two epochs."""
    base, pattern, truth, members, size = big
    n_shards = BIG_N // BIG_PER_SHARD
    props = " shuffle=true seed=2 shuffle-buffer=120 http-requests=8 num-epochs=2"
    local, _, error, _ = run_src('location="%s/shards/%s"' % (base, pattern) + props)
    assert error is None and len(local) == 2 * BIG_N
    server = CountingServer(str(base), ranges=True)
    try:
        runs = {}
        for mode in ("ranges", "auto"):
            del server.gets[:]
            server.sent.clear()
            out, warnings, error, _ = run_src(
                'location="%s/shards/%s" remote-reads=%s' % (server.url, pattern, mode)
                + props)
            assert error is None and warnings == []
            assert summary(out) == summary(local)
            for _, label, _, path, d in out:
                assert (label, d) == truth[member_of(path)]
            runs[mode] = out, tar_gets(server), server.tar_bytes() / size
    finally:
        server.stop()
    out, (whole, ranged), moved = runs["auto"]
    assert len(whole) == 2 * n_shards and len({p for p, _ in whole}) == n_shards
    # the first sample came by range: it lies far into the streams
    shard, offset, length = members[member_of(out[0][3])]
    assert ("/shards/" + shard, "bytes=%d-%d" % (
        offset - 512, offset + length - 1)) in ranged
    assert len(ranged) <= warmup_bound(members, 2), len(ranged)
    assert moved <= 2 * 1.1, moved
    assert len(runs["ranges"][1][1]) > BIG_N
    print("2 epochs of %d: %d whole GETs, %d ranged (bound %d), %.3f x the "
          "shards' bytes" % (BIG_N, len(whole), len(ranged),
                             warmup_bound(members, 2), moved / 2))


def test_streamed_warmup_resumes_mid_epoch(big):
    """Resumed mid-epoch (start-offset) on one rank: the rest of the order,
    the warm-up bounded by the rest's bytes."""
    base, pattern, truth, members, size = big
    props = " shuffle=true seed=2 shuffle-buffer=120 http-requests=8"
    local, _, error, _ = run_src('location="%s/shards/%s"' % (base, pattern) + props)
    assert error is None and len(local) == BIG_N
    server = CountingServer(str(base), ranges=True)
    try:
        out, warnings, error, _ = run_src(
            'location="%s/shards/%s" start-offset=100' % (server.url, pattern) + props)
        whole, ranged = tar_gets(server)
    finally:
        server.stop()
    assert error is None and warnings == []
    assert summary(out) == summary(local)[100:]
    assert len(whole) <= BIG_N // BIG_PER_SHARD
    assert 0 < len(ranged) <= warmup_bound(members, 1)
    assert server.tar_bytes() <= 1.1 * size


def test_streamed_warmup_without_ranges(big):
    """A server without Range support: no ranged GET, the warm-up too; each
    shard streamed once, the same order, no warning (one rank streams
    anyway)."""
    base, pattern, truth, members, size = big
    props = " shuffle=true seed=2 shuffle-buffer=120 http-requests=8"
    local, _, error, _ = run_src('location="%s/shards/%s"' % (base, pattern) + props)
    server = CountingServer(str(base), ranges=False)
    try:
        out, warnings, error, _ = run_src(
            'location="%s/shards/%s"' % (server.url, pattern) + props)
        whole, ranged = tar_gets(server)
    finally:
        server.stop()
    assert error is None and warnings == []
    assert summary(out) == summary(local)
    assert ranged == [] and len(whole) == BIG_N // BIG_PER_SHARD
    assert server.tar_bytes() <= 1.05 * size


def test_streamed_warmup_with_shards_past_the_bound(big):
    """shuffle-buffer-bytes (300 kB) below a shard's bytes (about 2 MB):
    members that would pass it are streamed past and read at their turn,
    the warm-up's are fetched ahead; each member once, the same order."""
    base, pattern, truth, members, size = big
    props = " shuffle=true seed=2 shuffle-buffer=120 http-requests=8"
    local, _, error, _ = run_src('location="%s/shards/%s"' % (base, pattern) + props)
    server = CountingServer(str(base), ranges=True)
    try:
        out, warnings, error, _ = run_src(
            'location="%s/shards/%s" shuffle-buffer-bytes=300000' % (server.url, pattern)
            + props)
        whole, ranged = tar_gets(server)
    finally:
        server.stop()
    assert error is None and warnings == []
    assert summary(out) == summary(local)
    for _, label, _, path, d in out:
        assert (label, d) == truth[member_of(path)]
    assert len(whole) == BIG_N // BIG_PER_SHARD
    assert 0 < len(ranged) < BIG_N
    assert len(set(ranged)) == len(ranged)      # none fetched twice


def test_ranged_get_answered_whole_switches_to_streaming(data, tmp_path):
    """A server that says Accept-Ranges: bytes and answers a ranged GET
    whole: the reads in flight are cut out of their answers, the rest of
    the epoch is streamed; every sample once, with its label."""
    base, truth, pattern, server = data
    # the proxy's folder mode says Accept-Ranges; in front of http.server
    # it forwards the whole answers of a server that ignores Range, with
    # Accept-Ranges added by --claim-ranges
    log = str(tmp_path / "requests.log")
    p = proxy(server.url, "--claim-ranges", log=log)
    stats = []
    try:
        out, warnings, error, _ = run_src(
            'location="%s/shards/%s" shuffle=true seed=5 http-requests=2 '
            'remote-reads=ranges' % (p.url, pattern),
            stats=stats)
    finally:
        p.stop()
    assert error is None and warnings == []
    assert sorted(o[0] for o in out) == list(range(N_SAMPLES))
    for _, label, _, path, d in out:
        assert (label, d) == truth[key_of(path)]
    assert 0 < stats[0].get_value("http-range-ignored") <= 2
    with open(log) as f:
        tars = [r.split() for r in f.read().splitlines() if ".tar" in r]
    ranged = [r for r in tars if r[1] != "-"]
    assert 0 < len(ranged) <= 2 and len(tars) - len(ranged) <= N_SAMPLES // 8


def test_truncated_shard_over_http_by_range(data, tmp_path):
    """A shard cut short on the server (which honours Range): the members
    past the cut are skipped as truncated-shard, each where it stands."""
    base, truth, pattern, _ = data
    shutil.copytree(base / "shards", tmp_path / "shards")
    members = read_members_index(str(tmp_path / "shards"))
    with open(tmp_path / "shards" / "train-000001.tar", "r+b") as f:
        f.truncate(members[13][1] + 10)         # inside sample 13's image
    p = proxy(str(tmp_path))
    stats = []
    try:
        out, warnings, error, counts = run_src(
            'location="%s/shards/%s"' % (p.url, pattern), stats=stats)
    finally:
        p.stop()
    assert error is None
    assert stats[0].get_value("http-range-ignored") == 0
    assert counts.get_value("truncated-shard") == 3
    assert any("train-000001.tar" in w and "shard ends" in w for w in warnings)
    assert [o[0] for o in out] == [i for i in range(N_SAMPLES) if not 13 <= i < 16]
    for _, label, _, path, d in out:
        assert (label, d) == truth[key_of(path)]


def manifest(dest, server_url, truth, extra=()):
    """A manifest of the ImageFolder's files as URLs."""
    lines = ["%s/folder/%s.jpg\t%d\n" % (server_url, key, label)
             for key, (label, _) in sorted(truth.items())]
    lines += list(extra)
    path = os.path.join(str(dest), "remote.tsv")
    with open(path, "w") as f:
        f.writelines(lines)
    return path


def test_manifest_of_urls(data, tmp_path):
    base, truth, _, server = data
    path = manifest(tmp_path, server.url, truth, extra=[
        "%s/folder/missing.jpg\t1\n" % server.url])
    out, warnings, error, counts = run_src('location="%s" http-requests=8' % path)
    assert error is None
    assert len(out) == N_SAMPLES
    for _, label, _, p, d in out:
        key = p.split("/folder/", 1)[1].rsplit(".", 1)[0]
        assert (label, d) == truth[key]
    assert counts.get_value("http-error") == 1
    assert len(warnings) == 1 and "missing.jpg" in warnings[0] and "404" in warnings[0]


@pytest.mark.parametrize("fault", [["--fail-first", 2], ["--fail-first", 1, "--status-first", 429],
                                   ["--reset-first", 1], ["--truncate-first", 1]])
def test_transient_faults_are_retried(data, tmp_path, fault):
    base, truth, pattern, server = data
    log = str(tmp_path / "requests.log")
    p = proxy(server.url, *fault, log=log)
    try:
        out, warnings, error, counts = run_src(
            'location="%s/shards/%s" http-retries=3' % (p.url, pattern))
        # http.server behind the proxy: shards streamed (one rank streams
        # them anyway: no warning), a stream cut off resumed by a Range
        # request it answers whole
        assert error is None and counts.get_value("total") == 0
        assert warnings == []
        assert sorted(o[0] for o in out) == list(range(N_SAMPLES))
        for _, label, _, path, d in out:
            assert (label, d) == truth[key_of(path)]
        objs = manifest(tmp_path, p.url, truth)
        out, warnings, error, counts = run_src('location="%s"' % objs)
        assert error is None and warnings == [] and len(out) == N_SAMPLES
    finally:
        p.stop()
    with open(log) as f:
        requests = f.read().splitlines()
    # each shard was asked again; a shard cut mid-way resumed with a range
    assert len(requests) > 2 * (N_SAMPLES // 8)
    if fault[0] in ("--reset-first", "--truncate-first"):
        assert any(r.split()[1].startswith("bytes=") for r in requests
                   if ".tar" in r)


# elastic: each sample is a ranged request of its own, skipped and counted
# alone; the contiguous split skips a shard's stream at once
@pytest.mark.parametrize("elastic,per_shard", [("true", 8), ("false", 1)])
def test_persistent_faults_are_skipped_and_counted(data, tmp_path, elastic, per_shard):
    base, truth, pattern, server = data
    p = proxy(server.url, "--status", "000002.tar=503", "--status", "000003.tar=403",
              "--hang", "000004.tar")
    try:
        t0 = time.monotonic()
        out, warnings, error, counts = run_src(
            'location="%s/shards/%s" http-retries=2 http-timeout=1000 elastic=%s'
            % (p.url, pattern, elastic))
        took = time.monotonic() - t0
    finally:
        p.stop()
    assert error is None
    assert sorted(o[0] for o in out) == list(range(16))
    assert counts.get_value("http-error") == 2 * per_shard
    assert counts.get_value("timeout") == per_shard
    assert any("train-000002.tar" in w and "503" in w and "retries" in w for w in warnings)
    assert any("train-000003.tar" in w and "403" in w for w in warnings)
    assert any("train-000004.tar" in w for w in warnings)
    assert took < 30
    # past max-errors: the pipeline fails instead
    p = proxy(server.url, "--status", "000002.tar=404")
    try:
        _, _, error, _ = run_src('location="%s/shards/%s" max-errors=0' % (p.url, pattern))
    finally:
        p.stop()
    assert error is not None and "000002.tar" in error


def test_first_sample_before_the_shard_is_downloaded_and_prompt_stop(data):
    """A shard that trickles in: samples flow from its first bytes, and
    going to NULL with the transfer in flight returns at once."""
    base, truth, pattern, server = data
    p = proxy(server.url, "--throttle-after", 40000)
    one = pattern.replace("{000000..000004}", "000000")
    pipeline = Gst.parse_launch('spdlsrc location="%s/shards/%s" ! appsink name=sink '
                                'sync=false' % (p.url, one))
    sink = pipeline.get_by_name("sink")
    try:
        pipeline.set_state(Gst.State.PLAYING)
        sample = sink.emit("try-pull-sample", 20 * Gst.SECOND)
        assert sample is not None
        assert not sink.get_property("eos")
        t0 = time.monotonic()
        pipeline.set_state(Gst.State.NULL)
        assert time.monotonic() - t0 < 3
    finally:
        pipeline.set_state(Gst.State.NULL)
        p.stop()


# ---------------------------------------------------------------------------
# The bound on bytes in flight, and resumed reads of changed objects

BOUND = 1024 * 1024
CURL_WRITE_CHUNK = 16 * 1024    # CURL_MAX_WRITE_SIZE: curl's largest write
STREAM_WRITE_CHUNK = 256 * 1024  # a stream's receive buffer (gstspdlhttp.c)


def random_objects(root, sizes, seed):
    """Files of random bytes: {name: bytes}."""
    rng = random.Random(seed)
    os.makedirs(root, exist_ok=True)
    objects = {}
    for i, size in enumerate(sizes):
        name = "obj%03d.bin" % i
        objects[name] = rng.randbytes(size)
        with open(os.path.join(root, name), "wb") as f:
            f.write(objects[name])
    return objects


def big_shards(root, n_shards, per_shard, member_size, seed):
    """WebDataset shards with large members and their shards.idx:
    {key: (label, bytes)} and the brace pattern."""
    rng = random.Random(seed)
    os.makedirs(root, exist_ok=True)
    truth = {}
    with open(os.path.join(root, "shards.idx"), "w") as idx:
        for s in range(n_shards):
            name = "big-%06d.tar" % s
            with tarfile.open(os.path.join(root, name), "w", format=tarfile.USTAR_FORMAT) as tar:
                for j in range(per_shard):
                    key = "s%dm%d" % (s, j)
                    truth[key] = (rng.randrange(10), rng.randbytes(member_size))
                    for ext, data in (("jpg", truth[key][1]), ("cls", b"%d" % truth[key][0])):
                        info = tarfile.TarInfo("%s.%s" % (key, ext))
                        info.size = len(data)
                        tar.addfile(info, io.BytesIO(data))
            idx.write("%s\t%d\n" % (name, per_shard))
    return truth, "big-{000000..%06d}.tar" % (n_shards - 1)


def test_bytes_in_flight_bound_single_objects(tmp_path):
    """16 requests of 300-600 KB objects under a 1 MiB bound: received and
    not handed over never passes it; an object larger than the bound alone
    still comes (no deadlock)."""
    sizes = [300000 + 10000 * i for i in range(30)]
    objects = random_objects(str(tmp_path / "objs"), sizes + [3 * BOUND], seed=5)
    server = proxy(str(tmp_path / "objs"))
    try:
        names = sorted(objects)
        small = tmp_path / "small.tsv"
        small.write_text("".join("%s/%s\t%d\n" % (server.url, n, i % 3)
                                 for i, n in enumerate(names[:-1])))
        stats = []
        out, warnings, error, _ = run_src(
            'location="%s" http-requests=16 max-bytes-in-flight=%d' % (small, BOUND),
            stats=stats)
        assert error is None and warnings == [] and len(out) == len(names) - 1
        for _, _, _, path, data in out:
            assert data == objects[path.rsplit("/", 1)[1]]
        peak = stats[0].get_value("http-peak-bytes-in-flight")
        assert 0 < peak <= BOUND + CURL_WRITE_CHUNK
        assert stats[0].get_value("http-responses") == len(names) - 1
        # with the one larger than the bound among them
        every = tmp_path / "every.tsv"
        every.write_text("".join("%s/%s\t0\n" % (server.url, n) for n in names))
        out, warnings, error, _ = run_src(
            'location="%s" http-requests=16 max-bytes-in-flight=%d' % (every, BOUND))
        assert error is None and warnings == [] and len(out) == len(names)
        assert sorted(len(o[4]) for o in out) == sorted(len(d) for d in objects.values())
    finally:
        server.stop()


def test_bytes_in_flight_bound_shard_streams(tmp_path):
    """8 shards of 300 KB members downloading ahead under a 1 MiB bound."""
    truth, pattern = big_shards(str(tmp_path / "big"), 8, 5, 300000, seed=6)
    server = proxy(str(tmp_path / "big"))
    try:
        stats = []
        out, warnings, error, _ = run_src(
            'location="%s/%s" http-requests=8 max-bytes-in-flight=%d shuffle=true'
            % (server.url, pattern, BOUND), stats=stats)
    finally:
        server.stop()
    assert error is None and warnings == [] and len(out) == len(truth)
    for _, label, _, path, data in out:
        assert (label, data) == truth[key_of(path)]
    peak = stats[0].get_value("http-peak-bytes-in-flight")
    assert BOUND // 2 < peak <= BOUND + STREAM_WRITE_CHUNK


def read_log(log):
    with open(log) as f:
        return [line.split() for line in f.read().splitlines()]


def test_resume_validated_with_if_range(data, tmp_path):
    """A shard cut off mid-way resumes with Range + If-Range (the ETag of
    the first response), answered with a 206: every sample once."""
    base, truth, pattern, _ = data
    log = str(tmp_path / "requests.log")
    p = proxy(str(base), "--reset-first", 1, log=log)
    try:
        out, warnings, error, counts = run_src('location="%s/shards/%s" elastic=false' % (p.url, pattern))
    finally:
        p.stop()
    assert error is None and warnings == [] and counts.get_value("total") == 0
    assert sorted(o[0] for o in out) == list(range(N_SAMPLES))
    for _, label, _, path, d in out:
        assert (label, d) == truth[key_of(path)]
    resumed = [r for r in read_log(log) if ".tar" in r[0] and r[1] != "-"]
    assert resumed and all(r[1].startswith("bytes=") and r[3].startswith('"')
                           for r in resumed)


@pytest.mark.parametrize("server_fault", [[], ["--ignore-if-range"]])
def test_object_changed_during_read_is_not_spliced(data, tmp_path, server_fault):
    """The shard changes between the cut and the resumed request: If-Range
    gets the new version whole (a 200), or a server that ignores If-Range a
    206 with another ETag: the rest of the
    shard is skipped with a warning naming it, no byte of the new version
    is used."""
    base, truth, pattern, _ = data
    p = proxy(str(base), "--reset-first", 1, "--change", "000001.tar", *server_fault)
    try:
        stats = []
        out, warnings, error, counts = run_src(
            'location="%s/shards/%s" elastic=false' % (p.url, pattern), stats=stats)
    finally:
        p.stop()
    assert error is None
    assert counts.get_value("http-error") == 1 and counts.get_value("total") == 1
    assert len(warnings) == 1
    assert "train-000001.tar" in warnings[0] and "changed during read" in warnings[0]
    # the other shards whole, shard 1 up to the cut, each sample as written
    indices = sorted(o[0] for o in out)
    assert [i for i in indices if not 8 <= i < 16] == list(range(8)) + list(range(16, N_SAMPLES))
    assert len(indices) < N_SAMPLES
    for _, label, _, path, d in out:
        assert (label, d) == truth[key_of(path)]
    assert stats[0].get_value("http-changed") == 1


def test_resumed_range_elsewhere_is_not_spliced(data, tmp_path):
    """A 206 whose Content-Range does not start where the stream was cut."""
    base, truth, pattern, _ = data
    p = proxy(str(base), "--reset-first", 1, "--bad-range")
    try:
        out, warnings, error, counts = run_src('location="%s/shards/%s" elastic=false' % (p.url, pattern))
    finally:
        p.stop()
    assert error is None and counts.get_value("http-error") == 5
    assert sorted(w.split("train-")[1][:6] for w in warnings) == ["%06d" % i for i in range(5)]
    assert all("changed during read" in w and "Content-Range" in w for w in warnings)
    assert 0 < len(out) < N_SAMPLES
    for _, label, _, path, d in out:
        assert (label, d) == truth[key_of(path)]


# ---------------------------------------------------------------------------
# HTTPS and HTTP/2 (nginx on 127.0.0.1, a certificate made here)

# Debian's nginx binary, unpacked by tools/make-test-venv (not installed:
# no system service), else an installed one
NGINX = next((p for p in (os.environ.get("SPDL_TEST_NGINX", ""), "/usr/sbin/nginx")
              if p and os.access(p, os.X_OK)), "")
NGINX_CONF = """
user %(user)s;
worker_processes 1;
daemon off;
pid %(dir)s/nginx.pid;
error_log %(dir)s/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %(dir)s/body;
  proxy_temp_path %(dir)s/proxy;
  fastcgi_temp_path %(dir)s/fastcgi;
  uwsgi_temp_path %(dir)s/uwsgi;
  scgi_temp_path %(dir)s/scgi;
  server {
    listen 127.0.0.1:%(port)d ssl http2;
    ssl_certificate %(dir)s/cert.pem;
    ssl_certificate_key %(dir)s/key.pem;
    root %(root)s;
  }
}
"""


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def https(data, tmp_path_factory):
    """nginx serving the data over HTTPS and HTTP/2, and its certificate
    (self-signed for 127.0.0.1, its own CA)."""
    if not NGINX:
        pytest.skip("no nginx (tools/make-test-venv unpacks Debian's)")
    base, truth, pattern, _ = data
    d = tmp_path_factory.mktemp("nginx")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
                   check=True, capture_output=True)
    port = free_port()
    (d / "nginx.conf").write_text(NGINX_CONF % {"dir": d, "port": port, "root": base,
                                             "user": getpass.getuser()})
    proc = subprocess.Popen([NGINX, "-p", str(d), "-c", str(d / "nginx.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import socket
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            break
        except OSError:
            assert proc.poll() is None, (d / "error.log").read_text()
            time.sleep(0.1)
    try:
        yield "https://127.0.0.1:%d" % port, str(d / "cert.pem")
    finally:
        proc.terminate()
        proc.wait()


def test_https_and_http2_with_ca_file(data, https, tmp_path, monkeypatch):
    base, truth, pattern, _ = data
    url, ca = https
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    stats = []
    out, warnings, error, _ = run_src('location="%s/shards/%s" ca-file="%s"'
                                      % (url, pattern, ca), stats=stats)
    assert error is None and warnings == []
    assert sorted(o[0] for o in out) == list(range(N_SAMPLES))
    for _, label, _, path, d in out:
        assert path.startswith(url) and (label, d) == truth[key_of(path)]
    # nginx offers h2 over TLS (ALPN): every response came over HTTP/2
    responses = stats[0].get_value("http-responses")
    assert responses > 0 and stats[0].get_value("http-responses-http2") == responses
    # single objects, the CA from the environment as the curl tool reads it
    monkeypatch.setenv("SSL_CERT_FILE", ca)
    objs = manifest(tmp_path, url, truth)
    out, warnings, error, _ = run_src('location="%s"' % objs, stats=stats)
    assert error is None and warnings == [] and len(out) == N_SAMPLES
    for _, label, _, p, d in out:
        assert (label, d) == truth[p.split("/folder/", 1)[1].rsplit(".", 1)[0]]
    assert stats[1].get_value("http-responses-http2") == N_SAMPLES


def test_https_untrusted_certificate_is_an_error(data, https, tmp_path, monkeypatch):
    """Never silently insecure: without the CA, every read fails naming the
    URL and the certificate."""
    base, truth, pattern, _ = data
    url, _ = https
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    _, _, error, _ = run_src('location="%s/shards/%s"' % (url, pattern))
    assert error is not None and url in error and "certificate" in error
    objs = manifest(tmp_path, url, truth)
    out, warnings, error, counts = run_src('location="%s" max-errors=-1' % objs)
    assert out == [] and counts.get_value("http-error") == N_SAMPLES
    assert all("untrusted certificate" in w and url in w for w in warnings)


def test_paused_transfers_do_not_time_out(tmp_path):
    """A consumer slower than the bound lets through keeps transfers paused
    for longer than http-timeout: paused is not stalled, nothing is lost."""
    truth, pattern = big_shards(str(tmp_path / "big"), 4, 5, 300000, seed=7)
    server = proxy(str(tmp_path / "big"))
    pipeline = Gst.parse_launch(
        'spdlsrc name=src location="%s/%s" http-timeout=1000 max-bytes-in-flight=%d '
        '! appsink name=sink sync=false max-buffers=1' % (server.url, pattern, BOUND))
    sink, bus = pipeline.get_by_name("sink"), pipeline.get_bus()
    try:
        pipeline.set_state(Gst.State.PLAYING)
        got = 0
        while sink.emit("try-pull-sample", 10 * Gst.SECOND) is not None:
            got += 1
            time.sleep(0.15)        # 20 samples: 3 s, paused most of it
        assert sink.get_property("eos") and got == len(truth)
        assert bus.pop_filtered(Gst.MessageType.ERROR | Gst.MessageType.WARNING) is None
        counts = pipeline.get_by_name("src").get_property("error-counts")
        assert counts.get_value("total") == 0
    finally:
        pipeline.set_state(Gst.State.NULL)
        server.stop()


# ---------------------------------------------------------------------------
# Servers that never answer: bounded waits, and Ctrl-C

def silent_server():
    """A socket on 127.0.0.1 that listens and never accepts: connections
    complete (the kernel's backlog) and no byte ever comes back."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock, "http://127.0.0.1:%d" % sock.getsockname()[1]


def test_silent_server_fails_in_bounded_time(data):
    """A server that accepts and never answers: the start fails after two
    attempts of http-timeout each (retries or not), naming the URL and
    the wait."""
    sock, url = silent_server()
    try:
        t0 = time.monotonic()
        _, _, error, _ = run_src('location="%s/shards/train-{000000..000004}.tar" '
                                 'http-timeout=1000 http-retries=5' % url)
        took = time.monotonic() - t0
    finally:
        sock.close()
    assert error is not None and "no response within 1 s" in error
    assert url + "/shards/shards.members" in error
    assert took < 6, took


INTERRUPTED = r"""
import sys, time
import spdlgst
loader = spdlgst.Loader(sys.argv[1])
print("made", flush=True)
if sys.argv[2] == "len":
    len(loader)
for batch in loader:
    print("batch", flush=True)
print("ended", flush=True)
"""


def interrupt(location, after, how="iterate", delay=1.0):
    """A process making a loader of @location and iterating it (or asking
    its len()) gets SIGINT @delay s after printing @after: the seconds it
    took to exit, and its stderr."""
    import signal

    line = ('spdlsrc location="%s" ! spdldecode width=32 height=32 ! '
            'spdlbatch batch-size=4 ! spdlappsink name=sink' % location)
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED, line, how],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while True:
            out = proc.stdout.readline()
            assert out, "exited early: %s" % proc.stderr.read()
            if out.strip() == after:
                break
        time.sleep(delay)
        assert proc.poll() is None
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        return time.monotonic() - t0, err
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("how", ["iterate", "len"])
def test_ctrl_c_while_the_index_is_read_from_a_silent_server(how):
    """Ctrl-C while the pipeline starts (spdlsrc waits for the shard index
    of a server that never answers): KeyboardInterrupt within a second or
    two, not after the timeouts."""
    sock, url = silent_server()
    try:
        took, err = interrupt("%s/shards/train-{000000..000004}.tar" % url, "made", how)
    finally:
        sock.close()
    assert "KeyboardInterrupt" in err, err
    assert took < 2, took
    print("SIGINT to exit, starting (%s): %.2f s" % (how, took))


def test_ctrl_c_while_iterating_over_a_hung_server(data):
    """Ctrl-C while batches are awaited from shards that never come."""
    base, truth, pattern, server = data
    p = proxy(server.url, "--hang", ".tar")
    try:
        took, err = interrupt("%s/shards/%s" % (p.url, pattern), "made", delay=2.0)
    finally:
        p.stop()
    assert "KeyboardInterrupt" in err, err
    assert took < 2, took
    print("SIGINT to exit, iterating: %.2f s" % took)


SECRETS = ("PASSWSECRET", "SIGSECRET", "TOKSECRET", "KEYSECRET", "SESSIONSECRET",
           "AKIAHIDDENPART")


@pytest.mark.parametrize("kind", ["ImageLoader", "VideoLoader", "AudioLoader",
                                  "Loader"])
def test_loader_secrets_masked_everywhere(kind, caplog):
    """Credentials never shown: the secret key and session token (and the
    access key but for its last 4 characters, as `aws configure list`
    shows it), a URL's password and its presigned signature and token;
    in the repr, the launch lines shown, a pipeline's error (that names
    the URL) and the warnings logged. The pipeline still gets them."""
    import logging
    import spdlgst
    from gi.repository import GLib
    location = ("http://user:PASSWSECRET@127.0.0.1:1/s/x-{0..1}.tar"
                "?X-Amz-Signature=SIGSECRET&X-Amz-Security-Token=TOKSECRET")
    props = {"s3-secret-key": "KEYSECRET", "s3-session-token": "SESSIONSECRET",
             "s3-access-key": "AKIAHIDDENPARTABCD", "http-retries": 0}
    if kind == "Loader":
        line = ('spdlsrc location="%s" s3-secret-key=KEYSECRET '
                's3-session-token="SESSIONSECRET" s3-access-key=AKIAHIDDENPARTABCD '
                'http-retries=0 ! spdlappsink name=sink' % location)
        loader = spdlgst.Loader(line)
        shown = [repr(loader), str(loader), loader.launch_line]
    else:
        cls = getattr(spdlgst, kind)
        loader = cls(location, src_properties=props, epochs=1)
        shown = [repr(loader), str(loader), loader.launch_line,
                 loader.gst_launch_command,
                 cls.launch_line_for(location, src_properties=props, epochs=1)]
        # a bad argument's error shows the dict it refuses
        with pytest.raises(TypeError) as refused:
            cls(location, src_properties=dict(props, Bad_Name=1))
        shown.append(str(refused.value))
    src = loader._find("spdlsrc")
    assert src.get_property("location") == location     # the real one
    for text in shown:
        assert "***" in text, text
    # the access key's last 4 characters say which key it is
    assert "s3-access-key=***ABCD" in loader.launch_line
    # a warning an element posts, naming the URL, is logged masked
    src.post_message(Gst.Message.new_warning(
        src, GLib.Error("Skipping shard %s: HTTP status 503" % location),
        "reason: http-error; s3-secret-key=KEYSECRET"))
    with caplog.at_level(logging.INFO, logger="spdlgst"):
        with pytest.raises(spdlgst.LoaderError) as failed:
            for _ in loader:
                pass
    loader.close()
    error = failed.value
    assert "127.0.0.1:1" in str(error)       # the error names the URL...
    shown += [str(error), repr(error), error.debug or ""]
    logged = [r.getMessage() + str(getattr(r, "spdl_debug", "")) for r in caplog.records]
    assert any("Skipping shard" in m for m in logged), logged
    shown += logged
    for text in shown:
        for secret in SECRETS:
            assert secret not in text, (secret, text)   # ...masked


def test_trickling_server_is_under_the_low_speed_bound(data):
    """A server that trickles (16 bytes a second after its first 2000):
    an attempt under http-low-speed-limit over http-low-speed-time fails,
    is retried, then the shard's rest is skipped as a timeout with a
    warning naming it and the bound; the samples before are delivered.
    (http-timeout alone waits as long as a byte keeps coming: hours.)"""
    base, truth, pattern, server = data
    p = proxy(str(base), "--throttle-after", 2000)
    one = pattern.replace("{000000..000004}", "000000")
    try:
        out, warnings, error, counts = run_src(
            'location="%s/shards/%s" http-retries=1 http-low-speed-limit=1000 '
            'http-low-speed-time=1' % (p.url, one), timeout_s=30)
    finally:
        p.stop()
    assert error is None
    for _, label, _, path, d in out:
        assert (label, d) == truth[key_of(path)]
    assert len(out) < 8
    assert counts.get_value("timeout") == 8 - len(out)
    slow = [w for w in warnings if "slower than 1000 bytes/s" in w]
    assert slow and all(one in w and "retries exhausted" in w for w in slow), warnings


@pytest.mark.parametrize("mode,says", [
    ("html", ['an HTML page, "<!DOCTYPE html><html><body>Pleas',
              "Content-Type: text/html"]),
    ("gzip-encoded", ["a gzip stream", "gunzip",
                      "Content-Type: application/x-tar, Content-Encoding: gzip"])])
def test_bodies_that_are_not_tar_say_what_came(tmp_path, mode, says):
    """A server's login page sent with status 200, or shards sent gzipped
    (Content-Encoding: gzip): the error says it is not a tar archive, what
    came (its first bytes, its Content-Type and Content-Encoding), and
    does not blame the keys."""
    truth, pattern = big_shards(str(tmp_path / "s"), 2, 3, 5000, seed=2)
    os.unlink(tmp_path / "s" / "shards.idx")
    srv = Server([sys.executable, "-u", os.path.join(HERE, "rangeserver.py"),
                  str(tmp_path), mode], r"port (\d+)")
    try:
        out, _, error, _ = run_src('location="%s/s/%s" shard-cache=""'
                                   % (srv.url, pattern))
    finally:
        srv.stop()
    assert out == [] and error is not None
    assert "not a tar archive" in error and "big-000000.tar" in error, error
    for text in says:
        assert text in error, error
    assert "image-key" not in error, error


def test_local_shards_that_are_not_tar(tmp_path):
    """A gzipped shard named .tar says so; shards whose groups hold no
    image still get the hint about the keys."""
    truth, pattern = big_shards(str(tmp_path / "s"), 2, 3, 5000, seed=2)
    os.unlink(tmp_path / "s" / "shards.idx")
    import gzip
    for name in os.listdir(tmp_path / "s"):
        path = tmp_path / "s" / name
        path.write_bytes(gzip.compress(path.read_bytes()))
    _, _, error, _ = run_src('location="%s/s/%s" shard-cache=""' % (tmp_path, pattern))
    assert error is not None and "not a tar archive" in error, error
    assert "a gzip stream" in error and "image-key" not in error, error
    # no image member in any group: the keys are what to look at
    os.makedirs(tmp_path / "t")
    with tarfile.open(tmp_path / "t" / "x-0.tar", "w") as tar:
        for key in ("a", "b"):
            info = tarfile.TarInfo(key + ".txt")
            info.size = 2
            tar.addfile(info, io.BytesIO(b"hi"))
    _, _, error, _ = run_src('location="%s/t/x-{0..0}.tar" shard-cache=""' % tmp_path)
    assert error is not None and "see image-key, label-key, label-field" in error, error


@pytest.mark.parametrize("name", ["x-0.tar.gz", "x-0.tgz"])
def test_one_compressed_shard_is_refused_as_one(tmp_path, name):
    """One .tar.gz (or .tgz) shard named alone, as WebDataset writes them:
    read as a shard and refused as a gzip stream, naming it, through
    spdlsrc and ImageLoader; it was read as a list file and its error
    showed the gzip bytes as a bad line."""
    import gzip
    import spdlgst
    truth, pattern = big_shards(str(tmp_path / "s"), 1, 3, 5000, seed=2)
    shard = tmp_path / "s" / pattern.replace("{000000..000000}", "000000")
    path = tmp_path / name
    path.write_bytes(gzip.compress(shard.read_bytes()))
    _, _, error, _ = run_src('location="%s" shard-cache=""' % path)
    assert error is not None and "not a tar archive" in error, error
    assert "a gzip stream" in error and "gunzip" in error and name in error, error
    with pytest.raises(spdlgst.LoaderError) as failed:
        loader = spdlgst.ImageLoader(str(path), batch_size=1, shuffle=False,
                                     src_properties={"shard-cache": ""})
        try:
            for _ in loader:
                pass
        finally:
            loader.close()
    assert "a gzip stream" in str(failed.value), failed.value


def test_redirect_to_untrusted_https_names_where_it_failed(data, https, monkeypatch):
    """A 302 from http to an https URL whose certificate is not trusted:
    the error names the https URL that failed (its query, which may hold
    a signature, left out), not only the http one asked for."""
    import http.server
    import threading
    base, truth, pattern, _ = data
    url, _ = https
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)

    class Redirect(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", url + self.path + "?X-Amz-Signature=SIGSECRET")
            self.send_header("Content-Length", "0")
            self.end_headers()
        do_HEAD = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        one = pattern.replace("{000000..000004}", "000000")
        http_url = "http://127.0.0.1:%d" % server.server_address[1]
        _, _, error, _ = run_src('location="%s/shards/%s" http-retries=0'
                                 % (http_url, one))
    finally:
        server.shutdown()
        server.server_close()
    assert error is not None and "certificate" in error, error
    assert re.search(re.escape(url) + r"/shards/\S+\?\.\.\. \(where it was "
                     r"redirected\)", error), error
    assert "SIGSECRET" not in error


@pytest.mark.parametrize("learn", ["stream", "headers"])
def test_two_ranks_first_run_move_the_shards_twice(data, tmp_path, learn):
    """Two ranks, unshuffled small samples, merged ranged reads, no index
    files: the first run moves the shards' bytes about twice (once to
    learn the index, once for the epoch between them), as one rank does;
    a rank's requests read over the other rank's samples only within a
    quarter of what they keep (reading over all of them moved 2.9x)."""
    base, truth, pattern, _ = data
    os.makedirs(tmp_path / "shards")
    for name in os.listdir(base / "shards"):
        if name.endswith(".tar"):
            shutil.copy(base / "shards" / name, tmp_path / "shards" / name)
    size = shard_bytes(str(tmp_path / "shards"))
    server = CountingServer(str(tmp_path), ranges=True)
    seen = []
    try:
        for rank in range(2):
            out, warnings, error, _ = run_src(
                'location="%s/shards/%s" num-shards=2 shard-index=%d '
                'remote-reads=ranges shard-cache="%s" shard-learn=%s'
                % (server.url, pattern, rank, tmp_path / "cache", learn))
            assert error is None and warnings == []
            for _, label, _, path, d in out:
                assert (label, d) == truth[key_of(path)]
            seen += [o[0] for o in out]
        moved = server.tar_bytes() / size
    finally:
        server.stop()
    assert sorted(seen) == list(range(N_SAMPLES))
    assert moved <= 2 * 1.1, moved
    print("two ranks' first run, learned by %s: bytes / shard bytes %.3f"
          % (learn, moved))


FAILED_STARTS = r"""
import os, socket, spdlgst
# a port on 127.0.0.1 that refuses connections: bound, not listening
with socket.socket() as closed:
    closed.bind(("127.0.0.1", 0))
    endpoint = "http://127.0.0.1:%d" % closed.getsockname()[1]
    for _ in range(3):
        loader = spdlgst.ImageLoader("s3://data/ds/", batch_size=4, size=16,
                                     epochs=1, src_properties={
                                         "s3-endpoint": endpoint,
                                         "s3-region": "eu-west-1"})
        try:
            next(iter(loader))
        except spdlgst.LoaderError as e:
            print("failed:", str(e).splitlines()[0][:80])
        loader.close()
        del loader
names = [open("/proc/self/task/%s/comm" % t).read().strip()
         for t in os.listdir("/proc/self/task")]
print("spdlhttp threads:", names.count("spdlhttp"))
"""


def test_failed_remote_start_leaves_no_client():
    """A start that fails listing remote data (an S3 endpoint that refuses
    connections): stop() is not called after it, and its HTTP client (an
    I/O thread each) was left running, its canceller freed under it with
    a GLib 'runtime check failed' warning on the user's stderr."""
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKIAEXAMPLEEXAMPLE12",
               AWS_SECRET_ACCESS_KEY="secret", AWS_EC2_METADATA_DISABLED="true")
    res = subprocess.run([sys.executable, "-c", FAILED_STARTS], env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.count("failed:") == 3, res.stdout
    assert "spdlhttp threads: 0" in res.stdout, res.stdout
    assert "runtime check failed" not in res.stderr, res.stderr[-2000:]



PRESIGNED = ("?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE"
             "%2F20261206%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=5ec2e7")


@pytest.mark.parametrize("n_shards,name", [
    # published shards in a public S3 bucket read over https:// (no
    # s3:ListBucket for anyone): the start failed with 'Could not read
    # the shards' folder: HTTP status 403'
    (2, "big-{000000..000001}.tar"),
    # one shard by a presigned GET URL (its name ends before the query):
    # taken for a local path, 'Dataset location ... does not exist'
    (1, "big-000000.tar" + PRESIGNED)])
def test_index_refused_as_s3_refuses_a_missing_key(tmp_path, n_shards, name):
    """S3 answers the shards.members and shards.idx that are not there
    with 403 AccessDenied to a caller without s3:ListBucket, or to a URL
    without a signature; the shards themselves can be read, so the index
    is absent and learned."""
    truth, _ = big_shards(str(tmp_path / "s"), n_shards, 3, 5000, seed=3)
    os.unlink(tmp_path / "s" / "shards.idx")
    srv = Server([sys.executable, "-u", os.path.join(HERE, "rangeserver.py"),
                  str(tmp_path), "missing-403"], r"port (\d+)")
    try:
        out, _, error, _ = run_src('location="%s/s/%s" shard-cache=""'
                                   % (srv.url, name))
    finally:
        srv.stop()
    assert error is None, error
    assert len(out) == 3 * n_shards
    for _, label, _, path, d in out:
        assert (label, d) == truth[key_of(path)]


STOP_MID_BODY = """
import sys, time
from gi.repository import Gst
Gst.init(None)
pipeline = Gst.parse_launch('spdlsrc location="%s" remote-reads=stream '
                            'shard-cache="" ! fakesink' % sys.argv[1])
pipeline.set_state(Gst.State.PLAYING)
time.sleep(1.5)                 # the body under way, trickling
pipeline.set_state(Gst.State.NULL)
print("stopped")
"""


def test_stop_while_a_body_trickles(data):
    """Stopping while a shard's body is under way (a slow server): the
    HTTP client drops the transfer, and curl's progress callback that the
    drop calls must not wait for the lock the dropping thread holds (it
    hung there, the stop with it)."""
    base, _, pattern, _ = data
    p = proxy(str(base), "--throttle-after", 2000)
    try:
        for _ in range(3):
            res = subprocess.run([sys.executable, "-c", STOP_MID_BODY,
                                  "%s/shards/%s" % (p.url, pattern)],
                                 capture_output=True, text=True, timeout=60)
            assert res.returncode == 0 and "stopped" in res.stdout, res.stderr[-2000:]
    finally:
        p.stop()


def secret_query_names():
    """The query parameters python/spdlgst/_secrets.py masks."""
    from spdlgst import _secrets
    m = re.search(r"\(\?:([^()]*)\)=", _secrets._QUERY.pattern)
    return m.group(1).split("|")


@pytest.mark.parametrize("userinfo", ["", "reader:PASSWSECRET@"])
def test_presigned_url_secret_never_printed_by_spdlsrc(tmp_path, userinfo):
    """A presigned shard URL whose shard is not there: gst-launch-1.0's
    error and spdlsrc's level-9 debug log name the shard, its path and its
    query as python/spdlgst/_secrets.py masks it (every parameter that
    carries a signature or a token, a userinfo password: the C side masks
    the same), and no secret; the request still carries them (http.server
    logs it). The error printed the whole URL, signature and all."""
    from spdlgst._secrets import masked
    names = secret_query_names()
    secrets = ["SeCrEt%02dx" % i for i in range(len(names))]
    query = "X-Amz-Algorithm=AWS4-HMAC-SHA256&" + "&".join(
        "%s=%s" % (n.title(), s) for n, s in zip(names, secrets))
    os.makedirs(tmp_path / "s")
    with open(tmp_path / "requests.log", "w") as log:
        srv = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0",
                                "--bind", "127.0.0.1", "--directory", str(tmp_path)],
                               stdout=subprocess.PIPE, stderr=log, text=True)
    port = int(re.search(r"port (\d+)", srv.stdout.readline()).group(1))
    url = "http://%s127.0.0.1:%d/s/train-000007.tar?%s" % (userinfo, port, query)
    env = dict(os.environ, GST_DEBUG="spdl*:9", GST_DEBUG_NO_COLOR="1")
    try:
        res = subprocess.run(["gst-launch-1.0", "spdlsrc", "location=" + url,
                              "shard-cache=\"\"", "http-retries=0", "!", "fakesink"],
                             env=env, capture_output=True, text=True, timeout=120)
    finally:
        srv.kill()
        srv.wait()
    # the request carried the signature
    assert "?" + query + " HTTP/1.1\" 404" in (tmp_path / "requests.log").read_text(), res.stderr[-3000:]
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "HTTP status 404" in out, out[-3000:]
    shown = masked(url)
    assert shown != url and "/s/train-000007.tar?X-Amz-Algorithm=AWS4-HMAC-SHA256&" in shown
    assert 'Could not read shard "%s"' % shown in out, out[-3000:]
    assert "spdlshards gstspdlshards.c" in out   # the debug log was on
    for s in secrets + ["PASSWSECRET"]:
        assert s not in out, out[max(out.find(s) - 300, 0):out.find(s) + 100]
