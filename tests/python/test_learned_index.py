"""spdlsrc on tar shards published without index files (no shards.members,
no shards.idx: most WebDataset sets): the member index learned from the
shards, locally, over HTTP and from S3, used as shards.members would be
(the elastic order, resumable on other world sizes), and kept in the
shard-cache folder so that a second run reads no shard to start."""
import io
import json
import os
import stat
import shutil
import subprocess
import tarfile

import pytest
from gi.repository import Gst

from test_shards import (make_image_folder, make_shards, run_src, key_of,
                         read_members_index)
from test_remote import Server, http_server, proxy, read_log  # noqa: F401
from test_checkpoint import check_elastic_resume

N = 29
PER_SHARD = 5
N_SHARDS = -(-N // PER_SHARD)
PATTERN = "train-{000000..%06d}.tar" % (N_SHARDS - 1)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """Shards by tools/make-shards, their index files moved aside:
    (folder of the index-less shards, truth, folder with the index)."""
    base = tmp_path_factory.mktemp("learned")
    truth = make_image_folder(str(base / "folder"), N, seed=3)
    make_shards(str(base / "folder"), str(base / "indexed"), PER_SHARD)
    os.makedirs(base / "bare")
    for name in os.listdir(base / "indexed"):
        if name.endswith(".tar"):
            shutil.copy2(base / "indexed" / name, base / "bare" / name)
    return str(base / "bare"), truth, str(base / "indexed")


def bare_copy(published, dest):
    """A fresh copy of the index-less shards (to change or damage)."""
    bare, _, _ = published
    shutil.copytree(bare, dest)
    return str(dest)


def summary(out):
    return [(i, label, epoch, key_of(p), data) for i, label, epoch, p, data in out]


def run(location, extra="", stats=None):
    got = run_src('location="%s" %s' % (location, extra), stats=stats)
    return got


def cache_files(folder):
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def test_learned_index_is_what_make_shards_writes(published, tmp_path):
    """The cache file is in the shards.members format and lists, per shard,
    the same byte ranges, labels and member names make-shards wrote."""
    bare, truth, indexed = published
    cache = tmp_path / "cache"
    stats = []
    out, warnings, error, _ = run("%s/%s" % (bare, PATTERN),
                                  'shard-cache="%s"' % cache, stats)
    assert error is None and warnings == []
    assert stats[0].get_value("shard-index-source") == "learned"
    assert stats[0].get_value("shard-order") == "elastic"
    (name,) = cache_files(cache)
    assert len(name) == 64 + len(".members")
    os.makedirs(tmp_path / "copy")
    shutil.copy(cache / name, tmp_path / "copy" / "shards.members")
    learned = read_members_index(str(tmp_path / "copy"))
    published_members = read_members_index(indexed)
    assert [(os.path.basename(s), o, z, l, m) for s, o, z, l, m in learned] == \
        published_members
    # the same samples, in the same order, as with the published index
    theirs = run("%s/%s" % (indexed, PATTERN))[0]
    assert summary(out) == summary(theirs)
    assert [o[0] for o in out] == list(range(N))
    for _, label, _, path, data in out:
        assert (label, data) == truth[key_of(path)]


def test_shuffled_epochs_and_the_cache(published, tmp_path):
    """Shuffled epochs as with the published index; the second run reads
    its index from the cache: a shard whose headers were damaged since
    (size and modification time kept) is not read to start."""
    bare, truth, indexed = published
    shards = bare_copy(published, tmp_path / "shards")
    cache = tmp_path / "cache"
    props = 'shuffle=true seed=5 shuffle-buffer=7 num-epochs=2 shard-cache="%s"' % cache
    stats = []
    first = run("%s/%s" % (shards, PATTERN), props, stats)
    assert first[2] is None and first[1] == []
    theirs = run("%s/%s" % (indexed, PATTERN), props)[0]
    assert summary(first[0]) == summary(theirs)
    for e in (0, 1):
        assert sorted(o[0] for o in first[0] if o[2] == e) == list(range(N))
    assert [o[0] for o in first[0] if o[2] == 0] != [o[0] for o in first[0] if o[2] == 1]
    # private to the user: shard URLs may carry tokens
    kept = os.listdir(cache)
    assert len(kept) == 1 and stat.S_IMODE(os.stat(cache / kept[0]).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    # the last header of shard 0 (its last sample's .cls, after the image:
    # not read by range) damaged, its size and modification time kept
    path = os.path.join(shards, "train-000000.tar")
    st = os.stat(path)
    with tarfile.open(path) as t:
        last = t.getmembers()[-1].offset
        last_key = t.getmembers()[-1].name.split(".")[0]
    with open(path, "r+b") as f:
        f.seek(last + 130)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x5A]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = run("%s/%s" % (shards, PATTERN), props, stats)
    assert second[2] is None and second[1] == []
    assert stats[1].get_value("shard-index-source") == "cached"
    assert summary(second[0]) == summary(first[0])
    # learned again (no cache): the damage is seen
    third = run("%s/%s" % (shards, PATTERN), props.replace(
        'shard-cache="%s"' % cache, 'shard-cache=""'), stats)
    assert stats[2].get_value("shard-index-source") == "learned"
    assert third[2] is None and third[3].get_value("corrupt-member") == 2
    assert any("train-000000.tar" in w and "checksum" in w for w in third[1])
    # as the reader would: the sample before the bad header has no label
    assert len(third[0]) == 2 * N
    assert {o[1] for o in third[0] if key_of(o[3]) == last_key} == {-1}


def test_changed_shard_invalidates_the_cache(published, tmp_path):
    bare, truth, _ = published
    shards = bare_copy(published, tmp_path / "shards")
    cache = tmp_path / "cache"
    loc = "%s/%s" % (shards, PATTERN)
    props = 'shard-cache="%s"' % cache
    stats = []
    assert len(run(loc, props, stats)[0]) == N
    assert len(run(loc, props, stats)[0]) == N
    assert [s.get_value("shard-index-source") for s in stats] == ["learned", "cached"]
    # the same files spelled otherwise: the same key and index
    rel = os.path.relpath(loc)
    assert rel != loc and len(run(rel, props, stats)[0]) == N
    assert stats[-1].get_value("shard-index-source") == "cached"
    # shard 1 rewritten without its last sample
    path = os.path.join(shards, "train-000001.tar")
    with tarfile.open(path) as t:
        members = [(m, t.extractfile(m).read()) for m in t.getmembers()]
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for m, data in members[:-2]:
            t.addfile(m, io.BytesIO(data))
    out, warnings, error, _ = run(loc, props, stats)
    assert error is None and warnings == [] and len(out) == N - 1
    assert stats[3].get_value("shard-index-source") == "learned"
    for _, label, _, p, data in out:
        assert (label, data) == truth[key_of(p)]
    assert len(cache_files(cache)) == 2
    assert run(loc, props, stats)[0] == out
    assert stats[4].get_value("shard-index-source") == "cached"
    # the same bytes written again: another modification time, learned again
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 1000))
    assert run(loc, props, stats)[0] == out
    assert stats[5].get_value("shard-index-source") == "learned"


def test_cache_off_default_folder_and_bad_files(published, tmp_path):
    """shard-cache="" keeps nothing; the default is $XDG_CACHE_HOME's
    gst-spdl/shards; a cache file that does not parse or lists other
    shards is learned again with one warning and replaced; one that cannot
    be written is a warning."""
    bare, truth, _ = published
    shards = bare_copy(published, tmp_path / "shards")
    loc = "%s/%s" % (shards, PATTERN)
    default = os.path.join(os.environ.get("XDG_CACHE_HOME") or
                           os.path.expanduser("~/.cache"), "gst-spdl", "shards")
    before = set(cache_files(default))
    stats = []
    for _ in range(2):
        out, warnings, error, _ = run(loc, 'shard-cache=""', stats)
        assert error is None and warnings == [] and len(out) == N
    assert [s.get_value("shard-index-source") for s in stats] == ["learned"] * 2
    assert set(cache_files(default)) == before
    out, warnings, error, _ = run(loc, "", stats)
    assert error is None and warnings == [] and len(out) == N
    (new,) = set(cache_files(default)) - before
    assert shards in open(os.path.join(default, new)).read()
    assert run(loc, "", stats)[0] == out
    assert stats[-1].get_value("shard-index-source") == "cached"
    os.unlink(os.path.join(default, new))

    cache = tmp_path / "cache"
    props = 'shard-cache="%s"' % cache
    run(loc, props)
    (name,) = cache_files(cache)
    text = (cache / name).read_text()
    lines = text.splitlines(keepends=True)
    for bad in (text[:len(text) // 2],                       # cut short
                "".join(lines[:2] + lines[3:]),               # a member gone
                text.replace("train-000003.tar", "other.tar"),  # other shards
                "garbage\n"):
        (cache / name).write_text(bad)
        out, warnings, error, _ = run(loc, props, stats)
        assert error is None and len(out) == N
        assert len(warnings) == 1 and "Ignoring the learned shard index cache" in \
            warnings[0] and name in warnings[0], warnings
        assert stats[-1].get_value("shard-index-source") == "learned"
        assert (cache / name).read_text() == text
        out, warnings, _, _ = run(loc, props, stats)
        assert warnings == [] and stats[-1].get_value("shard-index-source") == "cached"
    # a folder that cannot be made: a warning, every sample read
    (tmp_path / "file").write_text("")
    out, warnings, error, _ = run(loc, 'shard-cache="%s/file/sub"' % tmp_path)
    assert error is None and len(out) == N
    assert len(warnings) == 1 and "Could not keep the learned shard index" in warnings[0]


def test_unreadable_index_file_is_no_missing_one(published, tmp_path):
    """An index file that is there but cannot be read is an error, not a
    reason to learn (ranks that can read it would use another order)."""
    shards = bare_copy(published, tmp_path / "shards")
    os.makedirs(os.path.join(shards, "shards.idx"))
    _, _, error, _ = run("%s/%s" % (shards, PATTERN), 'shard-cache=""')
    assert error is not None and "shards.idx" in error, error


def test_elastic_resume_on_other_world_sizes(published, tmp_path):
    """A state saved on 2 ranks resumes on 3 and on 1: every remaining
    sample once, with its label and pixels (index-less shards)."""
    bare, _, _ = published
    check_elastic_resume('"%s/%s"' % (bare, PATTERN), N, 2,
                         'shard-cache="%s"' % (tmp_path / "cache"))


def damage(shards, indexed):
    """Shard 1 cut inside its 4th sample's image, shard 2 with a corrupt
    3rd header; the keys lost."""
    members = read_members_index(indexed)
    cut = members[PER_SHARD + 3][1] + 10
    with open(os.path.join(shards, "train-000001.tar"), "r+b") as f:
        f.truncate(cut)
    with open(os.path.join(shards, "train-000002.tar"), "r+b") as f:
        f.seek(members[2 * PER_SHARD + 2][1] - 512 + 130)   # its size field
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x5A]))
    lost = [m[4].split(".")[0] for m in members[PER_SHARD + 3:2 * PER_SHARD]]
    lost += [m[4].split(".")[0] for m in members[2 * PER_SHARD + 2:3 * PER_SHARD]]
    return lost


@pytest.mark.parametrize("where", ["local", "http"])
def test_damaged_shards_while_learning(published, tmp_path, where):
    """What the streaming reader reads of a cut or corrupt shard is
    learned; the rest is skipped with a warning naming the shard, counted
    once an epoch over the ranks, from the cache too; no hang."""
    bare, truth, indexed = published
    shards = bare_copy(published, tmp_path / "shards")
    lost = damage(shards, indexed)
    server = proxy(str(tmp_path)) if where == "http" else None
    loc = ("%s/shards/%s" % (server.url, PATTERN) if server else
           "%s/%s" % (shards, PATTERN))
    props = 'shard-cache="%s" num-epochs=2 shuffle=true' % (tmp_path / "cache")
    stats = []
    try:
        for source in ("learned", "cached"):
            out, warnings, error, counts = run(loc, props, stats)
            assert error is None and stats[-1].get_value("shard-index-source") == source
            assert counts.get_value("truncated-shard") == 2
            assert counts.get_value("corrupt-member") == 2
            assert any("train-000001.tar" in w and "ends inside" in w for w in warnings)
            assert any("train-000002.tar" in w and "checksum" in w for w in warnings)
            for e in (0, 1):
                keys = [key_of(o[3]) for o in out if o[2] == e]
                assert sorted(keys) == sorted(set(truth) - set(lost))
            for _, label, _, p, data in out:
                assert (label, data) == truth[key_of(p)]
        # on 2 ranks: each skip once over both
        totals = {"truncated-shard": 0, "corrupt-member": 0}
        seen = []
        for rank in range(2):
            out, _, error, counts = run(loc, props + " num-shards=2 shard-index=%d" % rank)
            assert error is None
            seen += [key_of(o[3]) for o in out if o[2] == 0]
            for reason in totals:
                totals[reason] += counts.get_value(reason)
        assert totals == {"truncated-shard": 2, "corrupt-member": 2}
        assert set(seen) == set(truth) - set(lost)
    finally:
        if server:
            server.stop()


def test_bad_labels_left_out_and_counted(tmp_path):
    """A .cls member that holds no label: the sample is left out of the
    learned index (as make-shards --index-only leaves it out) and skipped
    as bad-label, named, each epoch."""
    path = tmp_path / "labels.tar"
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for key, cls in (("a", b"1"), ("bad", b"x"), ("c", b"2"), ("long", b"3" * 65)):
            for name, data in (("%s.jpg" % key, b"\xff\xd8" + key.encode()),
                               ("%s.cls" % key, cls)):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    out, warnings, error, counts = run(str(path), 'num-epochs=2 shard-cache="%s"'
                                       % (tmp_path / "cache"))
    assert error is None
    assert [(o[0], o[1], o[2], o[4]) for o in out] == [
        (0, 1, 0, b"\xff\xd8a"), (1, 2, 0, b"\xff\xd8c"),
        (0, 1, 1, b"\xff\xd8a"), (1, 2, 1, b"\xff\xd8c")]
    assert counts.get_value("bad-label") == 4
    assert sum("labels.tar:bad.jpg" in w and "bad.cls" in w and
               "non-negative integer" in w for w in warnings) == 2
    assert sum("labels.tar:long.jpg" in w and "65 bytes long" in w
               for w in warnings) == 2
    # streamed in contiguous parts, the counts are the stream's
    out, warnings, error, counts = run(str(path), 'elastic=false shard-cache="%s"'
                                       % (tmp_path / "cache"))
    assert error is None and [o[4] for o in out] == [b"\xff\xd8a", b"\xff\xd8c"]
    assert counts.get_value("bad-label") == 2


# ---------------------------------------------------------------------------
# Over HTTP


def tar_requests(log):
    """(HEADs, whole GETs, ranged GETs) of shards in the proxy's log."""
    rows = [r for r in read_log(log) if r[0].endswith(".tar")]
    heads = [r for r in rows if r[-1] == "HEAD"]
    gets = [r for r in rows if r[-1] != "HEAD"]
    return heads, [r for r in gets if r[1] == "-"], [r for r in gets if r[1] != "-"]


def test_http_learned_then_cached(published, tmp_path):
    """Over HTTP (a server with Range support, and http.server without):
    learned from one GET of each shard, then from the cache with a HEAD of
    each and only the members' ranged GETs; a changed shard is learned
    again."""
    bare, truth, indexed = published
    shards = bare_copy(published, tmp_path / "shards")
    log = str(tmp_path / "requests.log")
    p = proxy(str(tmp_path), log=log)
    cache = tmp_path / "cache"
    props = ('shuffle=true seed=3 num-epochs=2 shard-cache="%s" '
             'remote-reads=ranges' % cache)
    stats = []
    try:
        loc = "%s/shards/%s" % (p.url, PATTERN)
        first = run(loc, props, stats)
        assert first[2] is None and first[1] == []
        heads, whole, ranged = tar_requests(log)
        assert len(heads) == N_SHARDS and len(whole) == N_SHARDS and ranged
        local = run("%s/%s" % (indexed, PATTERN), props)[0]
        assert [o[:3] + (o[4],) for o in first[0]] == [o[:3] + (o[4],) for o in local]
        open(log, "w").close()
        second = run(loc, props, stats)
        assert second[2] is None and second[1] == []
        assert [o[:3] + (o[4],) for o in second[0]] == [o[:3] + (o[4],) for o in local]
        heads, whole, ranged = tar_requests(log)
        assert len(heads) == N_SHARDS and whole == [] and ranged
        assert [s.get_value("shard-index-source") for s in stats] == ["learned", "cached"]
        # shard 3 rewritten on the server: learned again, that shard too
        path = os.path.join(shards, "train-000003.tar")
        with open(path, "ab") as f:
            f.write(b"\0" * 10240)
        open(log, "w").close()
        third = run(loc, props, stats)
        assert third[2] is None and [o[4] for o in third[0]] == [o[4] for o in second[0]]
        heads, whole, _ = tar_requests(log)
        assert len(whole) == N_SHARDS and stats[2].get_value("shard-index-source") == "learned"
    finally:
        p.stop()
    # http.server: no Range support, Last-Modified as its validator
    server = http_server(str(tmp_path))
    try:
        for source in ("learned", "cached"):
            out, warnings, error, _ = run("%s/shards/%s" % (server.url, PATTERN),
                                          'shard-cache="%s" remote-reads=ranges'
                                          % cache, stats)
            # learned or cached, the shards' HEADs tell: streamed, once said
            # (ranged reads were asked for)
            assert error is None and len(out) == N
            assert len(warnings) == 1 and "does not answer byte ranges" in warnings[0]
            assert stats[-1].get_value("shard-index-source") == source
            for _, label, _, path, d in out:
                assert (label, d) == truth[key_of(path)]
        # a missing shard is an error naming it, as locally
        _, _, error, _ = run("%s/shards/train-{000000..000099}.tar" % server.url)
        assert error is not None and "train-%06d.tar" % N_SHARDS in error
        assert "404" in error
    finally:
        server.stop()


def test_learning_remote_shards_holds_none_whole(tmp_path):
    """Shards of 3 MB learned 6 at once under a 2 MiB bound on bytes in
    flight: streamed, never held whole (the contiguous reads that follow
    too)."""
    from test_remote import big_shards, STREAM_WRITE_CHUNK
    bound = 2 * 1024 * 1024
    truth, pattern = big_shards(str(tmp_path / "big"), 6, 5, 600000, seed=8)
    os.unlink(tmp_path / "big" / "shards.idx")
    server = proxy(str(tmp_path / "big"))
    stats = []
    try:
        out, warnings, error, _ = run(
            "%s/%s" % (server.url, pattern), 'http-requests=8 elastic=false '
            'max-bytes-in-flight=%d shard-cache=""' % bound, stats)
    finally:
        server.stop()
    assert error is None and warnings == [] and len(out) == len(truth)
    for _, label, _, path, data in out:
        assert (label, data) == truth[key_of(path)]
    assert stats[0].get_value("shard-index-source") == "learned"
    assert stats[0].get_value("http-peak-bytes-in-flight") <= bound + STREAM_WRITE_CHUNK


def test_http_elastic_resume_learns_once(published, tmp_path):
    bare, _, _ = published
    shards = bare_copy(published, tmp_path / "shards")
    log = str(tmp_path / "requests.log")
    p = proxy(str(tmp_path), log=log)
    try:
        check_elastic_resume('"%s/shards/%s"' % (p.url, PATTERN), N, 2,
                             'shard-cache="%s" remote-reads=ranges' % (tmp_path / "cache"))
    finally:
        p.stop()
    heads, whole, ranged = tar_requests(log)
    # seven pipelines (or more starts): the first learned, the others
    # found the cache
    assert len(whole) == N_SHARDS and ranged
    assert len(heads) >= 7 * N_SHARDS and len(heads) % N_SHARDS == 0


# ---------------------------------------------------------------------------
# Shards by webdataset's own writer


def test_webdataset_writer_shards(tmp_path):
    """Shards written by webdataset's ShardWriter (PyPI): read locally and
    over HTTP with the samples, labels and bytes webdataset reads."""
    venv = os.environ.get("SPDL_TEST_VENV", "")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        pytest.skip("no test venv with webdataset (tools/make-test-venv)")
    truth = make_image_folder(str(tmp_path / "folder"), 17, seed=4)
    items = {"s%04d" % i: v for i, (_, v) in enumerate(sorted(truth.items()))}
    (tmp_path / "items.json").write_text(json.dumps(
        {k: [label, data.hex()] for k, (label, data) in items.items()}))
    os.makedirs(tmp_path / "wds")
    script = (
        "import json, sys, webdataset as wds\n"
        "items = json.load(open(sys.argv[1]))\n"
        "with wds.ShardWriter(sys.argv[2] + '/part-%03d.tar', maxcount=4) as w:\n"
        "    for k, (label, data) in sorted(items.items()):\n"
        "        w.write({'__key__': k, 'jpg': bytes.fromhex(data), 'cls': label})\n"
        "for s in wds.WebDataset(sys.argv[2] + '/part-{000..004}.tar',\n"
        "                        shardshuffle=False, empty_check=False):\n"
        "    print(s['__key__'], int(s['cls']))\n")
    res = subprocess.run([python, "-c", script, str(tmp_path / "items.json"),
                          str(tmp_path / "wds")], check=True, capture_output=True,
                         text=True, timeout=300)
    assert sorted(os.listdir(tmp_path / "wds")) == ["part-%03d.tar" % i for i in range(5)]
    theirs = [line.split() for line in res.stdout.splitlines()
              if not line.startswith("#")]      # ShardWriter's progress
    server = http_server(str(tmp_path))
    try:
        for loc in ("%s/wds/part-{000..004}.tar" % tmp_path,
                    "%s/wds/part-{000..004}.tar" % server.url):
            out, warnings, error, _ = run(loc, 'shard-cache="%s"' % (tmp_path / "cache"))
            assert error is None
            # http.server has no Range support: one rank streams each
            # shard anyway (remote-reads=auto), so nothing to say
            assert warnings == []
            assert [[key_of(p), str(label)] for _, label, _, p, _ in out] == theirs
            for _, label, _, p, data in out:
                assert (label, data) == items[key_of(p)]
    finally:
        server.stop()


# ---------------------------------------------------------------------------
# From S3 (moto with its signature checks on, as test_s3.py)

UPLOAD = """
import os, sys, boto3
url, region, key, secret, root = sys.argv[1:6]
s3 = boto3.client("s3", endpoint_url=url, region_name=region,
                  aws_access_key_id=key, aws_secret_access_key=secret)
for name in sorted(os.listdir(root)):
    s3.upload_file(os.path.join(root, name), "data", "bare/" + name)
"""


def test_s3_learned_then_cached(published, tmp_path, monkeypatch):
    from test_s3 import MotoServer, SETUP, REGION, s3_env, venv_python
    python = venv_python()
    bare, truth, indexed = published
    server = MotoServer(python)
    try:
        empty = tmp_path / "empty"
        os.makedirs(empty)
        out = subprocess.run([python, "-c", SETUP, server.url, str(empty), REGION],
                             check=True, timeout=180, capture_output=True,
                             text=True).stdout
        server.keys = json.loads(out)
        key, secret = server.keys["admin"]
        subprocess.run([python, "-c", UPLOAD, server.url, REGION, key, secret, bare],
                       check=True, timeout=180, capture_output=True)
        server.require_signatures()
        log = str(tmp_path / "requests.log")
        p = proxy(server.url, log=log)
        s3_env(monkeypatch, server)
        monkeypatch.setenv("AWS_ENDPOINT_URL", p.url)
        loc = "s3://data/bare/%s" % PATTERN
        props = 'shuffle=true seed=3 shard-cache="%s" remote-reads=ranges' % (
            tmp_path / "cache")
        stats = []
        try:
            first = run(loc, props, stats)
            assert first[2] is None and first[1] == []
            heads, whole, ranged = tar_requests(log)
            assert len(heads) == N_SHARDS and len(whole) == N_SHARDS and ranged
            open(log, "w").close()
            second = run(loc, props, stats)
            assert second[2] is None and second[1] == []
            heads, whole, ranged = tar_requests(log)
            assert len(heads) == N_SHARDS and whole == [] and ranged
        finally:
            p.stop()
        assert [s.get_value("shard-index-source") for s in stats] == ["learned", "cached"]
        local = run("%s/%s" % (indexed, PATTERN), props)[0]
        for got in (first[0], second[0]):
            assert [o[:3] + (o[4],) for o in got] == [o[:3] + (o[4],) for o in local]
        # a missing key: named, with S3's code, after the missing indexes
        monkeypatch.setenv("AWS_ENDPOINT_URL", server.url)
        _, _, error, _ = run("s3://data/bare/train-{000000..000099}.tar")
        assert error is not None and "train-%06d.tar" % N_SHARDS in error
        assert "NoSuchKey" in error and secret not in error
        # refused: an error, not learning
        s3_env(monkeypatch, server, "stranger")
        _, _, error, _ = run(loc, props)
        assert error is not None and "AccessDenied" in error, error
    finally:
        server.stop()


# ---------------------------------------------------------------------------
# make-shards --index-only on remote shards: the index spdlsrc learns,
# written where make-shards writes a local one

MAKE_SHARDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                           "tools", "make-shards")


def index_only(*args):
    return subprocess.run(["/usr/bin/python3", MAKE_SHARDS, "--index-only"] +
                          [str(a) for a in args], capture_output=True, text=True,
                          timeout=120)


def local_index(published, dest):
    """make-shards --index-only on a local copy of the index-less shards:
    {file name: bytes} of its index files."""
    index_only(bare_copy(published, dest))
    return {n: (dest / n).read_bytes() for n in ("shards.idx", "shards.members")}


def one_line_error(res, *words):
    assert res.returncode != 0 and res.stdout == ""
    assert "Traceback" not in res.stderr and len(res.stderr.splitlines()) == 1, res.stderr
    for w in words:
        assert w in res.stderr, res.stderr


def test_make_shards_index_of_http_shards(published, tmp_path):
    """--index-only URL --out DIR: the index files of shards served over
    HTTP, byte for byte what --index-only writes for the same files
    locally; beside the shards, spdlsrc reads its samples by them."""
    bare, truth, indexed = published
    expected = local_index(published, tmp_path / "local")
    served = tmp_path / "served"
    shutil.copytree(bare, served / "shards")
    server = http_server(str(served))
    try:
        out = tmp_path / "out"
        os.makedirs(out)
        loc = "%s/shards/%s" % (server.url, PATTERN)
        res = index_only(loc, "--out", out)
        assert res.returncode == 0 and res.stderr == "", res.stderr
        assert "%d samples in %d shards" % (N, N_SHARDS) in res.stdout
        assert "%s/shards/shards.members" % server.url in res.stdout
        assert sorted(os.listdir(out)) == sorted(expected)
        for name, data in expected.items():
            assert (out / name).read_bytes() == data, name
        # copied beside the shards: spdlsrc uses it (and learns nothing)
        for name in expected:
            shutil.copy(out / name, served / "shards" / name)
        stats = []
        got, warnings, error, _ = run(loc, 'shuffle=true seed=4 shard-cache="%s"'
                                      % (tmp_path / "cache"), stats)
        # http.server answers no byte ranges: one rank streams each shard
        # anyway (remote-reads=auto), nothing to warn of
        assert error is None and warnings == [], warnings
        assert stats[0].get_value("shard-index-source") == "shards.members"
        assert stats[0].get_value("shard-order") == "elastic"
        assert cache_files(tmp_path / "cache") == []
        theirs = run("%s/%s" % (indexed, PATTERN), "shuffle=true seed=4")[0]
        assert summary(got) == summary(theirs)
        for _, label, _, path, data in got:
            assert (label, data) == truth[key_of(path)]
        # indexed now: make-shards says so rather than read the index back
        one_line_error(index_only(loc, "--out", out), "shards.members",
                       "beside them already")
    finally:
        server.stop()


def test_make_shards_remote_errors(published, tmp_path):
    """Missing shards, no server, a file that is no tar, no tar location,
    no --out: a line naming what is wrong, a failure status, no index."""
    served = tmp_path / "served"
    shutil.copytree(published[0], served / "shards")
    with open(served / "shards" / ("train-%06d.tar" % N_SHARDS), "wb") as f:
        f.write(b"<html>not a tar</html>\n" * 40)
    out = tmp_path / "out"
    os.makedirs(out)
    server = http_server(str(served))
    try:
        url = "%s/shards/train-{000000..%06d}.tar" % (server.url, N_SHARDS + 1)
        one_line_error(index_only(url, "--out", out), "train-%06d.tar" % (N_SHARDS + 1),
                       "404")
        url = "%s/shards/train-{000000..%06d}.tar" % (server.url, N_SHARDS)
        one_line_error(index_only(url, "--out", out), "train-%06d.tar" % N_SHARDS,
                       "not a readable tar archive", "no index written")
        one_line_error(index_only("%s/shards/" % server.url, "--out", out),
                       "not a tar shard location")
        one_line_error(index_only("%s/shards/%s" % (server.url, PATTERN)), "--out DIR")
        one_line_error(index_only("%s/shards/%s" % (server.url, PATTERN), "--out",
                                  tmp_path / "nowhere"), "not a folder")
    finally:
        server.stop()
    one_line_error(index_only("http://127.0.0.1:%d/shards/%s" % (server.port, PATTERN),
                              "--out", out), "127.0.0.1:%d" % server.port,
                   "connect")
    assert os.listdir(out) == []
    # a local shard tarfile cannot read: the same words, no traceback
    damaged = bare_copy(published, tmp_path / "damaged")
    with open(os.path.join(damaged, "train-000001.tar"), "r+b") as f:
        f.truncate(700)
    one_line_error(index_only(damaged), "train-000001.tar", "not a readable tar archive")
    one_line_error(index_only(tmp_path / "nothing"), "nothing", "not a folder")


def test_make_shards_index_of_s3_shards(published, tmp_path, monkeypatch):
    """--index-only s3://... --out DIR through spdlsrc's signed requests
    (moto checking signatures): the bytes of the local index; uploaded
    beside the shards, spdlsrc reads its samples by it."""
    from test_s3 import MotoServer, SETUP, REGION, s3_env, venv_python
    python = venv_python()
    bare, truth, indexed = published
    expected = local_index(published, tmp_path / "local")
    server = MotoServer(python)
    try:
        empty = tmp_path / "empty"
        os.makedirs(empty)
        out = subprocess.run([python, "-c", SETUP, server.url, str(empty), REGION],
                             check=True, timeout=180, capture_output=True,
                             text=True).stdout
        server.keys = json.loads(out)
        key, secret = server.keys["admin"]
        subprocess.run([python, "-c", UPLOAD, server.url, REGION, key, secret, bare],
                       check=True, timeout=180, capture_output=True)
        server.require_signatures()
        s3_env(monkeypatch, server)
        loc = "s3://data/bare/%s" % PATTERN
        out = tmp_path / "out"
        os.makedirs(out)
        res = index_only(loc, "--out", out)
        assert res.returncode == 0 and res.stderr == "", res.stderr
        assert "aws s3 cp %s s3://data/bare/shards.members" % (out / "shards.members") \
            in res.stdout
        for name, data in expected.items():
            assert (out / name).read_bytes() == data, name
        # a key that may not read the shards: S3's refusal, one line
        s3_env(monkeypatch, server, "stranger")
        one_line_error(index_only(loc, "--out", tmp_path), "AccessDenied")
        assert secret not in res.stdout
        # uploaded (as the printed command would), spdlsrc reads by it
        upload = tmp_path / "upload"
        os.makedirs(upload)
        for name in expected:
            shutil.copy(out / name, upload / name)
        subprocess.run([python, "-c", UPLOAD, server.url, REGION, key, secret, upload],
                       check=True, timeout=180, capture_output=True)
        s3_env(monkeypatch, server)
        stats = []
        got, warnings, error, _ = run(loc, 'shuffle=true seed=2 shard-cache="%s"'
                                      % (tmp_path / "cache"), stats)
        assert error is None and warnings == []
        assert stats[0].get_value("shard-index-source") == "shards.members"
        theirs = run("%s/%s" % (indexed, PATTERN), "shuffle=true seed=2")[0]
        assert summary(got) == summary(theirs)
    finally:
        server.stop()


def test_ranks_started_together_learn_once(published, tmp_path):
    """Two ranks started together on one machine (one cache folder), over
    a server that answers every request 300 ms late: one streams the
    shards to learn the index, the other waits for its cache file instead
    of streaming them too. Each still reads its own half, every sample
    once between them."""
    import threading
    bare, truth, indexed = published
    bare_copy(published, tmp_path / "shards")
    log = str(tmp_path / "requests.log")
    p = proxy(str(tmp_path), "--delay-ms", 300, log=log)
    cache = tmp_path / "cache"
    results, stats = [None, None], [[], []]

    def rank(i):
        results[i] = run("%s/shards/%s" % (p.url, PATTERN),
                         'shuffle=true seed=5 num-shards=2 shard-index=%d '
                         'shard-cache="%s"' % (i, cache), stats[i])
    try:
        threads = [threading.Thread(target=rank, args=(i,)) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        p.stop()
    for out, warnings, error, _ in results:
        assert error is None and warnings == []
    _, whole, _ = tar_requests(log)
    assert len(whole) == N_SHARDS, whole
    assert sorted(s[0].get_value("shard-index-source") for s in stats) == \
        ["cached", "learned"]
    got = [key_of(o[3]) for out, _, _, _ in results for o in out]
    assert sorted(set(got)) == sorted(truth) and len(got) == 2 * (-(-N // 2))
    for out, _, _, _ in results:
        for _, label, _, path, data in out:
            assert (label, data) == truth[key_of(path)]
    # the learner's lock went with it: only the index is left
    assert [n.endswith(".members") for n in cache_files(cache)] == [True]


def test_no_lock_files_left_beside_the_cache(published, tmp_path):
    """Each list of shards learned over HTTP has its own cache file and,
    while it is learned, its lock file: the lock goes when its holder lets
    go, after several runs on several lists only their indexes are in the
    folder. A lock file a killed learner left behind goes with the next
    learner of those shards."""
    bare_copy(published, tmp_path / "shards")
    p = proxy(str(tmp_path))
    cache = tmp_path / "cache"
    lists = ["train-{000000..%06d}.tar" % last for last in range(N_SHARDS)]
    first = None
    try:
        for pattern in lists + lists[:2]:
            out, warnings, error, _ = run("%s/shards/%s" % (p.url, pattern),
                                          'shard-cache="%s"' % cache)
            assert error is None and warnings == [] and out
            if pattern == lists[0] and first is None:
                (first,) = cache_files(cache)
        names = cache_files(cache)
        assert len(names) == len(lists)
        assert all(n.endswith(".members") for n in names), names
        # a killed learner's lock file (no lock held on it any more)
        os.unlink(cache / first)
        open(cache / (first + ".lock"), "w").close()
        stats = []
        loc = "%s/shards/%s" % (p.url, lists[0])
        out, warnings, error, _ = run(loc, 'shard-cache="%s"' % cache, stats)
        assert error is None and out
        assert stats[0].get_value("shard-index-source") == "learned"
    finally:
        p.stop()
    assert cache_files(cache) == names


def test_waiting_for_another_learner_is_cancellable(published, tmp_path):
    """While another process holds the learning lock, a start waits for it
    (nothing read), ends at once when cancelled, learns on its own once
    the lock is released without a cache file (the holder failed), and
    reads the file as soon as it appears, the lock still held (by a
    process the holder forked)."""
    import fcntl
    import threading
    import time
    from gi.repository import Gst
    bare, truth, _ = published
    cache = tmp_path / "cache"
    log = str(tmp_path / "requests.log")
    bare_copy(published, tmp_path / "shards")
    # each request 300 ms late: two learners that start together overlap
    p = proxy(str(tmp_path), "--delay-ms", 300, log=log)
    try:
        loc = "%s/shards/%s" % (p.url, PATTERN)
        run(loc, 'shard-cache="%s"' % cache)
        (name,) = cache_files(cache)[:1]
        assert name.endswith(".members")
        os.unlink(cache / name)
        holder = open(cache / (name + ".lock"), "a")
        fcntl.flock(holder, fcntl.LOCK_EX)
        # cancelled while it waits: an error within a second
        pipeline = Gst.parse_launch('spdlsrc name=src location="%s" '
                                    'shard-cache="%s" ! fakesink' % (loc, cache))
        open(log, "w").close()
        # the start (the index) runs in set_state(): on a thread, as
        # spdlgst's loaders run it
        starting = threading.Thread(
            target=lambda: pipeline.set_state(Gst.State.PAUSED))
        starting.start()
        time.sleep(1.0)
        assert starting.is_alive()
        # the index files looked for, the shards' HEADs: no shard read
        assert tar_requests(log)[1:] == ([], [])
        t0 = time.monotonic()
        pipeline.get_by_name("src").emit("cancel")
        msg = pipeline.get_bus().timed_pop_filtered(5 * Gst.SECOND,
                                                    Gst.MessageType.ERROR)
        assert msg is not None and time.monotonic() - t0 < 1.0
        assert "cancelled" in msg.parse_error()[0].message
        starting.join(5)
        assert not starting.is_alive()
        pipeline.set_state(Gst.State.NULL)
        # the holder goes without writing the file (it failed): the two
        # waiters learn at once, each on its own (ranks that fail fail
        # together, not one after another)
        results, stats = [], [[], []]
        waiters = [threading.Thread(target=lambda i=i: results.append(
            run(loc, 'shard-cache="%s"' % cache, stats[i]))) for i in (0, 1)]
        for w in waiters:
            w.start()
        # both past the index files' lookups (300 ms each) and waiting
        time.sleep(2.0)
        assert all(w.is_alive() for w in waiters)
        holder.close()
        for w in waiters:
            w.join(60)
        assert [s[0].get_value("shard-index-source") for s in stats] == \
            ["learned", "learned"]
        for out, warnings, error, _ in results:
            assert error is None and warnings == [] and len(out) == N
        # the lock kept by a process the holder forked after the holder
        # wrote the file: the waiter reads the file once it appears
        written = (cache / name).read_bytes()
        os.unlink(cache / name)
        holder = open(cache / (name + ".lock"), "a")
        fcntl.flock(holder, fcntl.LOCK_EX)
        result, stats = [], []
        waiter = threading.Thread(target=lambda: result.append(
            run(loc, 'shard-cache="%s"' % cache, stats)))
        waiter.start()
        time.sleep(0.5)
        assert waiter.is_alive()
        tmp = cache / "written.tmp"
        tmp.write_bytes(written)
        os.rename(tmp, cache / name)
        waiter.join(10)
        assert not waiter.is_alive()
        holder.close()
    finally:
        p.stop()
    out, warnings, error, _ = result[0]
    assert error is None and warnings == [] and len(out) == N
    assert stats[0].get_value("shard-index-source") == "cached"


def ranged_bytes(rows):
    """The bytes the ranged GETs in @rows asked for."""
    total = 0
    for r in rows:
        first, last = r[1][len("bytes="):].split("-")
        total += int(last) - int(first) + 1
    return total


def test_learned_by_headers(tmp_path):
    """shard-learn=headers: the same index as streaming learns, from the
    tar headers by ranged GETs of a few KiB, about one a sample, no shard
    streamed: a few % of the shards' bytes. Shards of small members (where
    the windows would move more than a quarter of the bytes) and a server
    without byte ranges are streamed instead, the same index learned."""
    from test_remote import big_shards
    truth, pattern = big_shards(str(tmp_path / "big"), 4, 6, 100000, seed=4)
    os.unlink(tmp_path / "big" / "shards.idx")
    shard_bytes = sum(os.path.getsize(tmp_path / "big" / n)
                      for n in os.listdir(tmp_path / "big"))
    log = str(tmp_path / "requests.log")
    p = proxy(str(tmp_path), log=log)
    try:
        loc = "%s/big/%s" % (p.url, pattern)
        run(loc, 'shard-cache="%s" num-epochs=0' % (tmp_path / "streamed"))
        open(log, "w").close()
        stats = []
        out, warnings, error, _ = run(
            loc, 'shard-cache="%s" shard-learn=headers shuffle=true seed=2 '
            'remote-reads=ranges' % (tmp_path / "headers"), stats)
        assert error is None and warnings == [] and len(out) == len(truth)
        assert stats[0].get_value("shard-index-source") == "learned"
        for _, label, _, path, data in out:
            assert (label, data) == truth[key_of(path)]
        _, whole, ranged = tar_requests(log)
    finally:
        p.stop()
    (streamed,) = [n for n in cache_files(tmp_path / "streamed") if n.endswith(".members")]
    (headers,) = [n for n in cache_files(tmp_path / "headers") if n.endswith(".members")]
    assert streamed == headers
    assert (tmp_path / "streamed" / streamed).read_bytes() == \
        (tmp_path / "headers" / headers).read_bytes()
    # learning: HEADs and 4 KiB ranged GETs, about one a sample; then the
    # epoch's ranged reads of the members
    assert whole == []
    learning = [r for r in ranged if ranged_bytes([r]) <= 4096]
    assert len(truth) <= len(learning) <= 2 * len(truth)
    assert ranged_bytes(learning) < 0.1 * shard_bytes


def test_learned_by_headers_streams_where_cheaper(published, tmp_path):
    """Members of a few KiB (the windows would move more than streaming),
    a server without byte ranges: streamed, the index make-shards writes."""
    bare, truth, indexed = published
    bare_copy(published, tmp_path / "shards")
    log = str(tmp_path / "requests.log")
    p = proxy(str(tmp_path), log=log)
    server = http_server(str(tmp_path))
    try:
        for url, cache in ((p.url, "small"), (server.url, "plain")):
            out, warnings, error, _ = run(
                "%s/shards/%s" % (url, PATTERN),
                'shard-cache="%s" shard-learn=headers' % (tmp_path / cache))
            assert error is None and len(out) == N
            for _, label, _, path, data in out:
                assert (label, data) == truth[key_of(path)]
            (name,) = [n for n in cache_files(tmp_path / cache)
                       if n.endswith(".members")]
            os.makedirs(tmp_path / ("copy-" + cache))
            shutil.copy(tmp_path / cache / name,
                        tmp_path / ("copy-" + cache) / "shards.members")
            assert [(os.path.basename(s), o, z, l, m) for s, o, z, l, m in
                    read_members_index(str(tmp_path / ("copy-" + cache)))] == \
                read_members_index(indexed)
    finally:
        p.stop()
        server.stop()
    _, whole, _ = tar_requests(log)
    assert len(whole) == N_SHARDS


def test_damaged_shards_learned_by_headers(tmp_path):
    """A cut and a corrupt shard learned from their headers: the samples
    before the damage learned, the rest of each shard skipped with a
    warning naming it, as when they are streamed."""
    from test_remote import big_shards
    truth, pattern = big_shards(str(tmp_path / "big"), 3, 6, 60000, seed=9)
    os.unlink(tmp_path / "big" / "shards.idx")
    members = {}
    for s in (1, 2):
        with tarfile.open(tmp_path / "big" / ("big-%06d.tar" % s)) as tar:
            members[s] = tar.getmembers()
    # shard 1 cut inside its 4th sample's image; shard 2's 3rd sample's
    # image header (its size field) corrupted
    with open(tmp_path / "big" / "big-000001.tar", "r+b") as f:
        f.truncate(members[1][6].offset_data + 10)
    with open(tmp_path / "big" / "big-000002.tar", "r+b") as f:
        f.seek(members[2][4].offset + 130)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x5A]))
    lost = ["s1m%d" % j for j in range(3, 6)] + ["s2m%d" % j for j in range(2, 6)]
    log = str(tmp_path / "requests.log")
    server = proxy(str(tmp_path), log=log)
    stats = []
    try:
        out, warnings, error, counts = run(
            "%s/big/%s" % (server.url, pattern),
            'shard-cache="%s" shard-learn=headers shuffle=true '
            'remote-reads=ranges' % (tmp_path / "cache"), stats)
    finally:
        server.stop()
    assert error is None and stats[0].get_value("shard-index-source") == "learned"
    assert tar_requests(log)[1] == []       # learned from headers, no stream
    assert counts.get_value("truncated-shard") == 1
    assert counts.get_value("corrupt-member") == 1
    assert any("big-000001.tar" in w and "ends inside" in w for w in warnings)
    assert any("big-000002.tar" in w and "checksum" in w for w in warnings)
    assert sorted(key_of(o[3]) for o in out) == sorted(set(truth) - set(lost))
    for _, label, _, p, data in out:
        assert (label, data) == truth[key_of(p)]


def test_corrupt_cache_waiter_keeps_waiting(tmp_path):
    """A damaged cache file while another process holds the learning lock:
    the waiter keeps waiting for the holder's file, not taking the damaged
    file's presence for it and learning on its own."""
    import fcntl, threading, time
    from test_remote import big_shards
    truth, pattern = big_shards(str(tmp_path / "big"), 3, 4, 50000, seed=4)
    os.unlink(tmp_path / "big" / "shards.idx")
    log = str(tmp_path / "requests.log")
    p = proxy(str(tmp_path), log=log)
    cache = tmp_path / "cache"
    try:
        loc = "%s/big/%s" % (p.url, pattern)
        run(loc, 'shard-cache="%s"' % cache)
        (name,) = [n for n in cache_files(cache) if n.endswith(".members")]
        (cache / name).write_text("damaged\n")
        holder = open(cache / (name + ".lock"), "a")
        fcntl.flock(holder, fcntl.LOCK_EX)
        open(log, "w").close()
        result = []
        t = threading.Thread(target=lambda: result.append(
            run(loc, 'shard-cache="%s"' % cache)))
        t.start()
        time.sleep(1.5)
        learned_meanwhile = tar_requests(log)[1]
        holder.close()
        t.join(60)
    finally:
        p.stop()
    assert result and result[0][2] is None
    assert learned_meanwhile == [], "learned while the lock was held"


def test_shard_cache_quotes_lost_in_a_shell(published, tmp_path):
    """`shard-cache=""` typed in a shell reaches gst-launch-1.0 as
    "shard-cache=", which takes the next argument as the folder: an error
    naming the mistake, not a folder named "http-timeout=2000" in the
    current one and the timeout silently dropped."""
    bare, _, _ = published
    proc = subprocess.run(
        ["gst-launch-1.0", "-q", "spdlsrc", 'location=%s/%s' % (bare, PATTERN),
         "shard-cache=", "http-timeout=2000", "!", "fakesink"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "reads like the property http-timeout" in proc.stderr + proc.stdout
    assert os.listdir(tmp_path) == []
    # a folder whose name holds "=" but is no property is used as asked
    cache = tmp_path / "run=1"
    out, warnings, error, _ = run("%s/%s" % (bare, PATTERN),
                                  'shard-cache="%s"' % cache)
    assert error is None and len(out) == N and cache_files(cache)


@pytest.mark.parametrize("code", [403, 405])
def test_server_refusing_head(published, tmp_path, code):
    """A server that refuses HEAD (presigned GET URLs and some CDNs: 403;
    others 405) and serves GETs: each shard's size and validators come
    from a GET of its first byte (Content-Range), the samples are read,
    learned then cached as with HEADs; without validators nothing is
    cached."""
    bare, truth, indexed = published
    bare_copy(published, tmp_path / "shards")      # served by the proxy
    log = str(tmp_path / "requests.log")
    p = proxy(str(tmp_path), "--refuse-head", code, log=log)
    cache = tmp_path / "cache"
    stats = []
    try:
        loc = "%s/shards/%s" % (p.url, PATTERN)
        for source in ("learned", "cached"):
            open(log, "w").close()
            out, warnings, error, _ = run(loc, 'shard-cache="%s" remote-reads=ranges'
                                          % cache, stats)
            assert error is None and warnings == [] and len(out) == N
            for _, label, _, path, d in out:
                assert (label, d) == truth[key_of(path)]
            assert stats[-1].get_value("shard-index-source") == source
            heads, whole, ranged = tar_requests(log)
            assert len(heads) == N_SHARDS
            firsts = [r for r in ranged if r[1] == "bytes=0-0"]
            assert len(firsts) == N_SHARDS, ranged
    finally:
        p.stop()


def test_learning_says_how_far_it_is(published, tmp_path):
    """A long index learned (here a second per shard, one at a time) says
    how far it is every 5 s, and when done, as INFO messages (which the
    loaders log): the shards read of how many, the samples found."""
    bare_copy(published, tmp_path / "shards")      # served by the proxy
    p = proxy(str(tmp_path), "--delay-ms", 1000)
    pipeline = Gst.parse_launch(
        'spdlsrc location="%s/shards/%s" shard-cache="" http-requests=1 ! '
        'fakesink' % (p.url, PATTERN))
    infos = []
    try:
        pipeline.set_state(Gst.State.PLAYING)
        bus = pipeline.get_bus()
        while True:
            msg = bus.timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.EOS |
                                         Gst.MessageType.ERROR | Gst.MessageType.INFO)
            assert msg is not None and msg.type != Gst.MessageType.ERROR
            assert msg.type != Gst.MessageType.EOS, infos
            infos.append(msg.parse_info()[0].message)
            if "%d of %d shards read" % (N_SHARDS, N_SHARDS) in infos[-1]:
                break       # learned (the reads would take a second each)
    finally:
        pipeline.set_state(Gst.State.NULL)
        p.stop()
    learning = [m for m in infos if m.startswith("Learning the shards' member index")]
    assert len(learning) >= 2, infos         # under way, then done
    assert "of %d shards read" % N_SHARDS in learning[0]
    assert learning[0] != learning[-1]
    assert "%d of %d shards read, %d samples" % (N_SHARDS, N_SHARDS, N) in learning[-1]


def learning_infos(location, *faults):
    """spdlsrc's INFO messages on learning the two first shards at
    @location (through a proxy that breaks them with @faults) until its
    start ends; and its error."""
    p = proxy(location, *faults)
    pipeline = Gst.parse_launch('spdlsrc location="%s/train-{000000..000001}.tar" '
                                'shard-cache="" http-requests=1 http-retries=0 ! '
                                'fakesink' % p.url)
    infos, error = [], None
    try:
        pipeline.set_state(Gst.State.PAUSED)
        bus = pipeline.get_bus()
        while error is None:
            msg = bus.timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.ERROR |
                                         Gst.MessageType.INFO |
                                         Gst.MessageType.ASYNC_DONE)
            assert msg is not None
            if msg.type == Gst.MessageType.ASYNC_DONE:
                break
            if msg.type == Gst.MessageType.ERROR:
                error = msg.parse_error()[0].message
            else:
                infos.append(msg.parse_info()[0].message)
    finally:
        pipeline.set_state(Gst.State.NULL)
        p.stop()
    return [m for m in infos if m.startswith("Learning the shards' member index")], error


def test_learning_says_the_end_once(published, tmp_path):
    """Each shard read more than the progress period (5 s) after the last
    line: the end was said twice ('2 of 2 shards read' twice)."""
    bare_copy(published, tmp_path / "shards")
    learning, error = learning_infos(str(tmp_path / "shards"), "--delay-ms", 5500)
    assert error is None
    assert len(learning) == 2, learning        # under way, then done
    assert "1 of 2 shards read, %d samples" % PER_SHARD in learning[0]
    assert "2 of 2 shards read, %d samples" % (2 * PER_SHARD) in learning[1]


def test_learning_counts_no_failed_shard_as_read(published, tmp_path):
    """A shard that failed more than the progress period (5 s) in was
    counted as read: '1 of 2 shards read, 0 samples', then the error that
    it could not be read."""
    bare_copy(published, tmp_path / "shards")
    # each path's first GET answered 404 (the index files: absent; the
    # first shard after 5.5 s)
    learning, error = learning_infos(str(tmp_path / "shards"), "--delay-ms", 5500,
                                     "--fail-first", 1, "--status-first", 404)
    assert error is not None and "train-000000.tar" in error, error
    assert learning == [], learning
