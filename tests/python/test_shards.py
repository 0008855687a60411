"""spdlsrc on WebDataset tar shards written by tools/make-shards: every
sample once per epoch with its bytes and label, deterministic shuffles,
equal counts per rank, resume, and corrupt or truncated shards."""
import hashlib
import io
import os
import shutil
import subprocess
import tarfile

import numpy as np
import pytest
import spdlgst
from gi.repository import Gst

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MAKE_SHARDS = os.path.join(ROOT, "tools", "make-shards")
N_SAMPLES = 53
PER_SHARD = 10


def make_image_folder(root, count, classes=3, seed=0):
    """Small JPEGs in ImageFolder layout; returns {relative key: (label, bytes)}."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    truth = {}
    for i in range(count):
        label = i % classes
        folder = os.path.join(root, "class%02d" % label)
        os.makedirs(folder, exist_ok=True)
        img = Image.fromarray(rng.integers(0, 256, (24, 32, 3), dtype=np.uint8))
        path = os.path.join(folder, "img%04d.jpg" % i)
        img.save(path, quality=90)
        with open(path, "rb") as f:
            truth["class%02d/img%04d" % (label, i)] = (label, f.read())
    return truth


def make_shards(source, out, per_shard=PER_SHARD, *extra):
    res = subprocess.run(["/usr/bin/python3", MAKE_SHARDS, source, out,
                          "--samples-per-shard", str(per_shard)] + list(extra),
                         check=True, capture_output=True, text=True)
    return res.stdout.strip().rsplit(" ", 1)[-1]


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    base = tmp_path_factory.mktemp("shards")
    truth = make_image_folder(str(base / "folder"), N_SAMPLES)
    location = make_shards(str(base / "folder"), str(base / "out"))
    return location, truth, str(base / "out")


def run_src(props, timeout_s=60, stats=None):
    """[(index, label, epoch, path, bytes)] and the bus messages of interest;
    the source's "stats" structure appended to @stats at the end if given."""
    pipeline = Gst.parse_launch("spdlsrc name=src %s ! appsink name=sink sync=false" % props)
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    out, warnings, error = [], [], None
    try:
        while True:
            sample = sink.emit("try-pull-sample", Gst.SECOND)
            while True:
                msg = bus.pop_filtered(Gst.MessageType.ERROR | Gst.MessageType.WARNING)
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
            buf = sample.get_buffer()
            s = buf.get_custom_meta("GstSpdlSampleMeta").get_structure()
            ok, info = buf.map(Gst.MapFlags.READ)
            assert ok
            data = bytes(info.data)
            buf.unmap(info)
            out.append((s.get_value("index"), s.get_value("label"),
                        s.get_value("epoch"), s.get_value("path"), data))
        counts = pipeline.get_by_name("src").get_property("error-counts")
        if stats is not None:
            stats.append(pipeline.get_by_name("src").get_property("stats"))
    finally:
        pipeline.set_state(Gst.State.NULL)
    return out, warnings, error, counts


def key_of(path):
    member = path.rsplit(":", 1)[1]
    return member.split(".", 1)[0]


def test_every_sample_once_with_bytes_and_label(shards):
    location, truth, _ = shards
    out, warnings, error, _ = run_src('location="%s"' % location)
    assert error is None and warnings == []
    assert len(out) == N_SAMPLES
    keys = [key_of(p) for _, _, _, p, _ in out]
    assert sorted(keys) == sorted(truth)
    for index, label, epoch, path, data in out:
        assert epoch == 0
        assert (label, data) == truth[key_of(path)]
        assert path.startswith(os.path.dirname(location)) and ".tar:" in path
    # unshuffled: listing order, the index is the global position
    assert [o[0] for o in out] == list(range(N_SAMPLES))


def test_shuffle_deterministic_per_seed_and_epoch(shards):
    location, truth, _ = shards
    props = 'location="%s" shuffle=true shuffle-buffer=16 num-epochs=2' % location
    a = run_src(props + " seed=7")[0]
    b = run_src(props + " seed=7")[0]
    c = run_src(props + " seed=8")[0]
    order = lambda run, e: [o[0] for o in run if o[2] == e]
    assert order(a, 0) == order(b, 0) and order(a, 1) == order(b, 1)
    assert order(a, 0) != order(a, 1)
    assert order(a, 0) != order(c, 0)
    for e in (0, 1):
        assert sorted(order(a, e)) == list(range(N_SAMPLES))
    # the buffer mixes across shards: not just the shard order shuffled
    shard_runs = [o[0] // PER_SHARD for o in a if o[2] == 0]
    changes = sum(1 for x, y in zip(shard_runs, shard_runs[1:]) if x != y)
    assert changes > N_SAMPLES // PER_SHARD + 1


@pytest.mark.parametrize("drop", [False, True])
def test_ranks_get_equal_counts(shards, drop):
    location, truth, _ = shards
    world = 4
    runs = []
    for rank in range(world):
        out, _, error, _ = run_src('location="%s" shuffle=true seed=3 num-shards=%d '
                                   'shard-index=%d drop-uneven=%s' % (
                                       location, world, rank, str(drop).lower()))
        assert error is None
        runs.append([o[0] for o in out])
    per = N_SAMPLES // world if drop else -(-N_SAMPLES // world)
    assert [len(r) for r in runs] == [per] * world
    seen = [i for r in runs for i in r]
    if drop:
        assert len(set(seen)) == len(seen) == per * world
    else:
        assert set(seen) == set(range(N_SAMPLES))
        assert len(seen) - len(set(seen)) == per * world - N_SAMPLES


@pytest.mark.parametrize("elastic", [True, False])
def test_order_independent_of_ranks(shards, elastic):
    """Elastic: rank r of W takes global positions r, r + W, ...; the ranks'
    outputs interleaved are the W = 1 order, whatever W. The contiguous
    split (elastic=false) depends on W."""
    location, truth, _ = shards
    props = ('location="%s" shuffle=true seed=4 shuffle-buffer=12 '
             'elastic=%s' % (location, str(elastic).lower()))
    single = run_src(props)[0]
    assert sorted(o[0] for o in single) == list(range(N_SAMPLES))
    for world in (2, 3):
        ranks = [run_src(props + " num-shards=%d shard-index=%d" % (world, r))[0]
                 for r in range(world)]
        interleaved = [ranks[k % world][k // world]
                       for k in range(len(ranks[0]) * world)]
        for index, label, _, path, data in interleaved:
            assert (label, data) == truth[key_of(path)]
        same = [o[0] for o in interleaved[:N_SAMPLES]] == [o[0] for o in single]
        assert same == elastic
        if elastic:     # the padding wraps round to the epoch's start
            assert [o[0] for o in interleaved[N_SAMPLES:]] == \
                [o[0] for o in single[:len(interleaved) - N_SAMPLES]]


def read_members_index(outdir):
    members, shard = [], None
    with open(os.path.join(outdir, "shards.members"), "rb") as f:
        for line in f.read().decode().splitlines():
            if line.startswith("#"):
                continue
            if not line.startswith("\t"):
                shard = line.split("\t")[0]
                continue
            offset, size, label, name = line[1:].split("\t")
            members.append((shard, int(offset), int(size), int(label), name))
    return members


def test_member_index_matches_the_shards(shards):
    """tools/make-shards' shards.members: each sample's byte range holds its
    image, with its label, in listing order (the global indices)."""
    location, truth, outdir = shards
    members = read_members_index(outdir)
    assert len(members) == N_SAMPLES
    for shard, offset, size, label, name in members:
        with open(os.path.join(outdir, shard), "rb") as f:
            f.seek(offset)
            data = f.read(size)
        assert (label, data) == truth[name.split(".", 1)[0]]


def copy_shards(outdir, dest, members=True):
    for name in os.listdir(outdir):
        if name.endswith(".tar") or name == "shards.idx" or (
                members and name == "shards.members"):
            shutil.copy(os.path.join(outdir, name), dest / name)


def test_elastic_truncated_and_corrupt_members_are_skipped(shards, tmp_path):
    """Read by range: a cut shard loses the members past the cut, a header
    that does not match the index loses its one member; each skipped
    sample keeps its position (ranks stay aligned)."""
    location, truth, outdir = shards
    copy_shards(outdir, tmp_path)
    names = sorted(n for n in os.listdir(outdir) if n.endswith(".tar"))
    members = read_members_index(outdir)
    cut = members[13][1] + 10           # inside shard 1's 4th image
    with open(tmp_path / names[1], "r+b") as f:
        f.truncate(cut)
    with open(tmp_path / names[2], "r+b") as f:
        f.seek(members[22][1] - 512 + 130)      # shard 2's 3rd image header
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x5A]))
    loc = str(tmp_path / os.path.basename(location))
    out, warnings, error, counts = run_src('location="%s"' % loc)
    assert error is None
    assert counts.get_value("truncated-shard") == 7     # samples 13..19
    assert counts.get_value("corrupt-member") == 1      # sample 22
    assert any(names[1] in w and "shard ends" in w for w in warnings)
    assert any(names[2] in w and "index does not match" in w for w in warnings)
    assert [o[0] for o in out] == [i for i in range(N_SAMPLES)
                                   if not 13 <= i < 20 and i != 22]
    for index, label, _, path, data in out:
        assert (label, data) == truth[key_of(path)]


def test_stale_member_index_is_an_error(shards, tmp_path):
    """An index that no longer matches its shards (every member's header
    differs: shards rewritten after indexing) skips every sample: that is
    an error naming the epoch, not an empty epoch, with max-errors
    unlimited too; the warnings name the shards."""
    import spdlgst

    location, _, outdir = shards
    copy_shards(outdir, tmp_path)
    path = tmp_path / "shards.members"
    stale = []
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("\t"):
            offset, rest = line[1:].split("\t", 1)
            line = "\t%d\t%s" % (int(offset) + 1024, rest)
        stale.append(line)
    path.write_text("".join(stale))
    loc = str(tmp_path / os.path.basename(location))
    out, warnings, error, counts = run_src('location="%s"' % loc)
    assert out == []
    assert error is not None and \
        "None of the %d samples of epoch 0 could be read" % N_SAMPLES in error, error
    assert "corrupt-member: %d" % N_SAMPLES in error, error
    assert any(".tar" in w for w in warnings), warnings
    line = ('spdlsrc location="%s" ! spdldecode width=16 height=16 ! '
            'spdlbatch batch-size=4 ! spdlappsink name=sink' % loc)
    with spdlgst.Loader(line, log_limit=0) as loader:
        with pytest.raises(spdlgst.LoaderError, match="None of the"):
            for _ in loader:
                pass


def test_bad_member_index_is_an_error(shards, tmp_path):
    location, _, outdir = shards
    copy_shards(outdir, tmp_path)
    path = tmp_path / "shards.members"
    lines = path.read_text().splitlines(keepends=True)
    lines[3] = "\t512\tbig\t0\tx.jpg\n"
    path.write_text("".join(lines))
    loc = str(tmp_path / os.path.basename(location))
    _, _, error, _ = run_src('location="%s"' % loc)
    assert error is not None and "shards.members" in error and "line 4" in error

def test_contiguous_shuffle_buffer_byte_bound(shards):
    """elastic=false: the per-rank buffer holds images, at most
    shuffle-buffer-bytes of them (one at least)."""
    location, truth, _ = shards
    props = ('location="%s" elastic=false shuffle=true seed=7 shuffle-buffer=16'
             % location)
    order = lambda extra: [o[0] for o in run_src(props + extra)[0]]
    unbounded = order("")
    unmixed = order(" shuffle-buffer=0")
    one = order(" shuffle-buffer-bytes=1")
    mean = sum(len(d) for _, d in truth.values()) // len(truth)
    few = order(" shuffle-buffer-bytes=%d" % (4 * mean))
    assert one == unmixed
    for run in (unbounded, few):
        assert sorted(run) == list(range(N_SAMPLES))
    assert len({tuple(unbounded), tuple(few), tuple(unmixed)}) == 3

def test_without_index_files_the_index_is_learned(shards, tmp_path):
    """Neither index file: the member index is learned from the shards
    (test_learned_index.py), the elastic order as with shards.members;
    elastic=false streams contiguous parts counted from the tar headers.
    shards.idx alone: contiguous parts, with a warning that a resume needs
    as many ranks."""
    location, truth, outdir = shards
    copy = tmp_path / "noindex"
    copy.mkdir()
    for name in os.listdir(outdir):
        if name.endswith(".tar"):
            os.link(os.path.join(outdir, name), copy / name)
    loc = str(copy / os.path.basename(location))
    props = ' shuffle=true seed=5 num-shards=2 shard-index=1'
    learned, warnings = run_src('location="%s"' % loc + props)[:2]
    indexed = run_src('location="%s"' % location + props)[0]
    assert warnings == [] and len(learned) == 27
    assert [o[:3] + o[4:] for o in learned] == [o[:3] + o[4:] for o in indexed]
    a, quiet = run_src('location="%s"' % loc + props + " elastic=false")[:2]
    b = run_src('location="%s"' % location + props + " elastic=false")[0]
    assert [o[0] for o in a] == [o[0] for o in b] and len(a) == 27
    assert quiet == []
    assert sorted(o[0] for o in a) != sorted(o[0] for o in learned)
    shutil.copy(os.path.join(outdir, "shards.idx"), copy / "shards.idx")
    c, warnings = run_src('location="%s"' % loc + props)[:2]
    assert [o[0] for o in c] == [o[0] for o in b]
    assert any("shards.members" in w and "resumes only on 2 ranks" in w
               for w in warnings), warnings


def test_resume_mid_epoch(shards):
    location, _, _ = shards
    props = 'location="%s" shuffle=true seed=11 shuffle-buffer=8' % location
    full = [o[0] for o in run_src(props)[0]]
    rest = [o[0] for o in run_src(props + " start-index=20")[0]]
    assert rest == full[20:]


def test_long_names_and_other_members(tmp_path):
    """GNU long names, PAX paths, folders and extra members, in one shard."""
    path = str(tmp_path / "mixed.tar")
    long_key = "d/" + "x" * 150
    members = [
        ("%s.jpg" % long_key, b"\xff\xd8long", tarfile.GNU_FORMAT),
        ("%s.cls" % long_key, b"4\n", tarfile.GNU_FORMAT),
        ("%s.json" % long_key, b"{}", tarfile.GNU_FORMAT),
        ("p/" + "\u00e9" * 120 + ".png", b"png-bytes", tarfile.PAX_FORMAT),
        ("p/" + "\u00e9" * 120 + ".cls", b"2", tarfile.PAX_FORMAT),
        ("onlylabel.cls", b"1", tarfile.USTAR_FORMAT),
        ("plain.JPEG", b"plain", tarfile.USTAR_FORMAT),
    ]
    with open(path, "wb") as f:
        for name, data, fmt in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            f.write(info.tobuf(fmt, "utf-8", "surrogateescape"))
            f.write(data + b"\0" * (-len(data) % 512))
            if name.startswith("plain"):
                d = tarfile.TarInfo("folder")
                d.type = tarfile.DIRTYPE
                f.write(d.tobuf(tarfile.USTAR_FORMAT))
        f.write(b"\0" * 1024)
    out, warnings, error, counts = run_src('location="%s"' % path)
    # a group without an image is no sample: counted and named
    assert error is None and counts.get_value("no-image") == 1
    assert len(warnings) == 1 and "mixed.tar:onlylabel" in warnings[0], warnings
    got = [(o[0], o[1], o[3].rsplit(":", 1)[1], o[4]) for o in out]
    assert got == [(0, 4, long_key + ".jpg", b"\xff\xd8long"),
                   (1, 2, "p/" + "\u00e9" * 120 + ".png", b"png-bytes"),
                   (2, -1, "plain.JPEG", b"plain")]
    # indexed afterwards (make-shards --index-only): read by range, the same
    done = subprocess.run(["/usr/bin/python3", MAKE_SHARDS, "--index-only", str(tmp_path)],
                          check=True, capture_output=True, text=True)
    assert "group onlylabel has no image member" in done.stderr
    assert (tmp_path / "shards.members").exists()
    streamed_warnings = warnings
    out, warnings, error, _ = run_src('location="%s"' % path)
    # the group without an image skipped as the stream skipped it
    assert error is None and warnings == streamed_warnings
    assert [(o[0], o[1], o[3].rsplit(":", 1)[1], o[4]) for o in out] == got
    # elastic now: resumed at an offset no contiguous split could take
    out, _, error, _ = run_src('location="%s" num-shards=2 start-offset=1' % path)
    assert error is None and [o[0] for o in out] == [1]


def test_truncated_and_corrupt_shards_are_skipped(shards, tmp_path):
    location, truth, outdir = shards
    names = sorted(n for n in os.listdir(outdir) if n.endswith(".tar"))
    for name in names:
        os.link(os.path.join(outdir, name), tmp_path / name)
    with open(os.path.join(outdir, "shards.idx")) as f:
        (tmp_path / "shards.idx").write_text(f.read())
    # shard 1 cut in its 4th sample, shard 2 with a corrupt 3rd header
    with open(os.path.join(outdir, names[1]), "rb") as f:
        data = f.read()
    os.unlink(tmp_path / names[1])
    (tmp_path / names[1]).write_bytes(data[:len(data) * 35 // 100 + 100])
    with tarfile.open(os.path.join(outdir, names[2])) as t:
        third = t.getmembers()[4].offset
    with open(os.path.join(outdir, names[2]), "rb") as f:
        data = bytearray(f.read())
    data[third + 130] ^= 0x5A
    os.unlink(tmp_path / names[2])
    (tmp_path / names[2]).write_bytes(bytes(data))

    loc = str(tmp_path / os.path.basename(location))
    out, warnings, error, counts = run_src('location="%s"' % loc)
    assert error is None
    assert counts.get_value("truncated-shard") == 1
    assert counts.get_value("corrupt-member") == 1
    assert any(names[1] in w and "ends inside" in w for w in warnings)
    assert any(names[2] in w and "checksum" in w for w in warnings)
    got = sorted(o[0] for o in out)
    # every sample that could be read: shard 1 up to the cut, shard 2's first two
    lost1 = [i for i in range(10, 20) if i not in got]
    assert 10 in got and lost1 and lost1 == list(range(lost1[0], 20))
    assert [i for i in range(20, 30) if i in got] == [20, 21]
    for index, label, _, path, data in out:
        assert (label, data) == truth[key_of(path)]
    # past max-errors the pipeline fails, naming the shard
    _, _, error, _ = run_src('location="%s" max-errors=1' % loc)
    assert error is not None and "max-errors=1" in error


def test_missing_shard_fails_at_start_without_index(tmp_path):
    _, _, error, _ = run_src('location="%s/none-{0..3}.tar"' % tmp_path)
    assert error is not None and "none-0.tar" in error


def test_bad_brace_range(tmp_path):
    _, _, error, _ = run_src('location="%s/x-{5..1}.tar"' % tmp_path)
    assert error is not None and "brace range" in error


def test_matches_webdataset_reader(shards):
    """The shards read back with the webdataset package (PyPI) give the
    same samples, bytes and labels as the ImageFolder, and as spdlsrc."""
    venv = os.environ.get("SPDL_TEST_VENV", "")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        pytest.skip("no test venv with webdataset (tools/make-test-venv)")
    location, truth, _ = shards
    script = (
        "import hashlib, sys, webdataset as wds\n"
        "for s in wds.WebDataset(sys.argv[1], shardshuffle=False, empty_check=False):\n"
        "    img = s.get('jpg')\n"
        "    print(s['__key__'], int(s['cls']), hashlib.sha1(img).hexdigest())\n")
    res = subprocess.run([python, "-c", script, "file:" + location],
                         check=True, capture_output=True, text=True, timeout=300)
    theirs = [line.split() for line in res.stdout.splitlines()]
    ours, _, error, _ = run_src('location="%s"' % location)
    assert error is None
    mine = [[key_of(p), str(label), hashlib.sha1(data).hexdigest()]
            for _, label, _, p, data in ours]
    assert [[k, int(c), h] for k, c, h in theirs] == [
        [k, int(c), h] for k, c, h in mine]
    assert sorted(k for k, _, _ in theirs) == sorted(truth)
    for k, c, h in theirs:
        assert (int(c), h) == (truth[k][0], hashlib.sha1(truth[k][1]).hexdigest())


def test_shard_recipes(shards):
    """pipelines' shard recipes run on shards found from their index."""
    from spdlgst import pipelines

    location, truth, outdir = shards
    assert pipelines.shard_location_from_index(outdir) == location
    assert pipelines.shard_location("s3://b/x/", 1024) == \
        "s3://b/x/train-{000000..001023}.tar"
    assert {"imagenet-train-shards", "imagenet-val-shards"} <= set(pipelines.available())
    for name, overrides in (("imagenet-val-shards", {}),
                            ("imagenet-train-shards", {"num_epochs": 1})):
        line = pipelines.launch_line(name, location, batch_size=16, **overrides)
        line = line.replace("spdlappsink name=sink", "fakesink")
        pipeline = Gst.parse_launch(line)
        pipeline.set_state(Gst.State.PLAYING)
        msg = pipeline.get_bus().timed_pop_filtered(
            60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        pipeline.set_state(Gst.State.NULL)
        assert msg is not None and msg.type == Gst.MessageType.EOS, name


def test_python_loader_on_shards(shards):
    """spdlgst.Loader on shards: batches per epoch, labels that belong to
    the batch's dataset indices, every sample once per epoch."""
    import spdlgst

    location, truth, _ = shards
    labels_by_index = {o[0]: o[1] for o in run_src('location="%s"' % location)[0]}
    line = ('spdlsrc location="%s" shuffle=true num-epochs=2 ! '
            'spdldecode width=16 height=16 mode=center-crop ! '
            'spdlbatch batch-size=8 ! spdlappsink name=sink' % location)
    with spdlgst.Loader(line) as loader:
        assert len(loader) == -(-N_SAMPLES // 8)
        for epoch in range(2):
            seen = []
            for batch in loader:
                images, labels = batch
                assert images.shape[1:] == (16, 16, 3) and batch.epoch == epoch
                assert list(labels) == [labels_by_index[i] for i in batch.indices]
                seen += batch.indices
            assert sorted(seen) == list(range(N_SAMPLES))


def test_bad_labels_are_skipped(tmp_path):
    """.cls members must hold a non-negative decimal integer: others skip
    their sample with a warning naming the shard and the member."""
    path = str(tmp_path / "labels.tar")
    labels = [("neg", b"-3"), ("frac", b"2.5"), ("word", b"cat"), ("empty", b""),
              ("huge", b"99999999999"), ("plus", b"+2"), ("nul", b"7\0junk"),
              ("good", b" 7\n")]
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for key, cls in labels:
            for name, data in (("%s.jpg" % key, b"\xff\xd8" + key.encode()),
                               ("%s.cls" % key, cls)):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    out, warnings, error, counts = run_src('location="%s"' % path)
    assert error is None
    assert [(o[1], o[4]) for o in out] == [(7, b"\xff\xd8good")]
    assert counts.get_value("bad-label") == len(labels) - 1
    for key, _ in labels[:-1]:
        assert any("labels.tar" in w and "%s.cls" % key in w and "non-negative integer" in w
                   for w in warnings), (key, warnings)
    # the member index of such a shard leaves them out: the elastic order
    # yields the same samples
    done = subprocess.run(["/usr/bin/python3", MAKE_SHARDS, "--index-only",
                           str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("left out of the index") == len(labels) - 1
    out, warnings, error, counts = run_src('location="%s" elastic=true' % path)
    assert error is None
    assert [(o[1], o[4]) for o in out] == [(7, b"\xff\xd8good")]


def test_existing_paths_with_braces_are_taken_as_named(shards, tmp_path):
    """A local file or folder that exists is not a brace pattern: a shard
    file named "a-{0..1}.tar" is one shard, a folder "set-{0..1}" an
    ImageFolder; a pattern of names that do not exist is expanded."""
    location, truth, outdir = shards
    first = sorted(n for n in os.listdir(outdir) if n.endswith(".tar"))[0]
    literal = tmp_path / "a-{0..1}.tar"
    os.link(os.path.join(outdir, first), literal)
    out, warnings, error, _ = run_src('location="%s"' % literal)
    assert error is None and warnings == [] and len(out) == PER_SHARD
    assert all(o[3].startswith(str(literal) + ":") for o in out)
    folder = tmp_path / "set-{0..1}"
    os.makedirs(folder / "cat")
    (folder / "cat" / "x.jpg").write_bytes(truth[sorted(truth)[0]][1])
    out, warnings, error, _ = run_src('location="%s"' % folder)
    assert error is None and len(out) == 1 and out[0][3].startswith(str(folder))
    _, _, error, _ = run_src('location="%s/none-{0..999999999}.tar"' % tmp_path)
    assert error is not None and "more than 1000000 shards" in error


def test_resume_on_changed_shards_is_an_error(tmp_path):
    """A state names the shard set and index it was taken on: resumed on
    shards with a sample removed, a clear error (not samples repeated and
    lost); on the same shards with their index file deleted (learned
    again, the same), it resumes."""
    make_image_folder(str(tmp_path / "folder"), 24, seed=4)
    location = make_shards(str(tmp_path / "folder"), str(tmp_path / "shards"), 6)
    line = ('spdlsrc location=%s shuffle=true seed=2 num-epochs=1 shard-cache="" '
            "! spdldecode width=8 height=8 ! spdlbatch batch-size=4 ! "
            "spdlappsink name=sink" % location)
    with spdlgst.Loader(line) as loader:
        it = iter(loader)
        seen = [i for _ in range(2) for i in next(it).indices]
        state = loader.state_dict()
    assert state["dataset"].startswith("24:")
    os.remove(str(tmp_path / "shards" / "shards.members"))
    os.remove(str(tmp_path / "shards" / "shards.idx"))
    with spdlgst.Loader(line) as loader:
        loader.load_state_dict(state)
        rest = [i for b in loader for i in b.indices]
    assert sorted(seen + rest) == list(range(24))
    # a sample less: the shards are written again from the folder
    victim = sorted(os.listdir(str(tmp_path / "folder" / os.listdir(
        str(tmp_path / "folder"))[0])))[0]
    os.remove(os.path.join(str(tmp_path / "folder"), os.listdir(
        str(tmp_path / "folder"))[0], victim))
    shutil.rmtree(str(tmp_path / "shards"))
    make_shards(str(tmp_path / "folder"), str(tmp_path / "shards"), 6)
    with spdlgst.Loader(line) as loader:
        with pytest.raises(ValueError, match="24 samples then, 23 now"):
            loader.load_state_dict(state)


def test_dotted_file_names_each_their_own_sample(tmp_path):
    """photo.2019.jpg and photo.2020.jpg: two samples with keys of their
    own (a WebDataset key ends at the first dot), every member name once."""
    from PIL import Image
    src = tmp_path / "src" / "cat"
    src.mkdir(parents=True)
    names = ["photo.2019.jpg", "photo.2020.jpg", "photo_2019.jpg", "x.y.z.png", "a.JPG"]
    for i, name in enumerate(names):
        Image.new("RGB", (4, 4), (i, 2, 3)).save(src / name,
                                                 format="PNG" if name.endswith("png") else "JPEG")
    location = make_shards(str(tmp_path / "src"), str(tmp_path / "out"), 10)
    with tarfile.open(str(tmp_path / "out" / "train-000000.tar")) as tar:
        members = tar.getnames()
    assert len(members) == len(set(members)) == 2 * len(names)
    out, warnings, error, _ = run_src('location="%s"' % location)
    assert error is None and warnings == [] and len(out) == len(names)


def test_every_image_format_in_shards_is_a_sample(tmp_path):
    """BMP, GIF, TIFF and PPM members are samples (decoded, or skipped by
    spdldecode with a reason), never dropped unseen by the reader."""
    from PIL import Image
    src = tmp_path / "src" / "c"
    src.mkdir(parents=True)
    for i, ext in enumerate(["jpg", "png", "bmp", "gif", "tiff", "ppm"]):
        Image.new("RGB", (6, 4), (i * 40, 10, 20)).save(src / f"s{i}.{ext}")
    location = make_shards(str(tmp_path / "src"), str(tmp_path / "out"), 10)
    out, warnings, error, _ = run_src('location="%s"' % location)
    assert error is None and len(out) == 6, (error, warnings)
    line = ("spdlsrc location=%s num-epochs=1 ! spdldecode width=4 height=4 ! "
            "spdlbatch batch-size=8 ! spdlappsink name=sink" % location)
    with spdlgst.Loader(line) as loader:
        got = sum(len(b.indices) for b in loader)
        skipped = loader.skipped()
    assert got == 5 and skipped["unsupported-format"] == 1, skipped


def write_groups(path, groups):
    """A shard of (key, image bytes or None, .cls bytes or None) groups."""
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for key, image, cls in groups:
            for name, data in (("%s.jpg" % key, image), ("%s.cls" % key, cls),
                               ("%s.txt" % key, b"caption")):
                if data is None:
                    continue
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def labelled_shards(folder, n_shards=3, per_shard=7, bad=((0, 1), (0, 6), (1, 0)),
                    no_image=((2, 3),)):
    """Shards with some bad .cls labels (the last group of shard 0 among
    them) and a group without an image: (truth {key: (label, bytes)},
    bad-label keys, no-image keys)."""
    os.makedirs(folder, exist_ok=True)
    truth, bad_keys, no_image_keys = {}, [], []
    for s in range(n_shards):
        groups = []
        for g in range(per_shard):
            key = "s%d_%02d" % (s, g)
            image = b"\xff\xd8" + key.encode()
            if (s, g) in bad:
                groups.append((key, image, b"cat"))
                bad_keys.append(key)
            elif (s, g) in no_image:
                groups.append((key, None, b"1"))
                no_image_keys.append(key)
            else:
                label = (s * per_shard + g) % 5
                groups.append((key, image, b"%d" % label))
                truth[key] = (label, image)
        write_groups(os.path.join(folder, "lab-%06d.tar" % s), groups)
    return truth, bad_keys, no_image_keys


@pytest.mark.parametrize("world", [1, 2])
def test_bad_labels_agree_across_indexes(tmp_path, world):
    """A group whose .cls is no label is no sample anywhere: the index
    make-shards --index-only writes, the learned one (and its cache) and a
    stream of the shards (elastic=false) all leave it out of the counts and
    skip it as bad-label once an epoch; every other sample is read once."""
    # 16 samples: as many for each of 2 ranks
    truth, bad_keys, no_image_keys = labelled_shards(
        str(tmp_path / "bare"), bad=((0, 1), (0, 6), (1, 0), (2, 5)))
    shutil.copytree(tmp_path / "bare", tmp_path / "indexed")
    done = subprocess.run(["/usr/bin/python3", MAKE_SHARDS, "--index-only",
                           str(tmp_path / "indexed")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "indexed" / "shards.idx") as f:
        assert [line.split() for line in f if not line.startswith("#")] == [
            ["lab-000000.tar", "5"], ["lab-000001.tar", "6"], ["lab-000002.tar", "5"]]
    pattern = "lab-{000000..000002}.tar"
    cache = tmp_path / "cache"
    runs = {
        "members": ("indexed", "", "shards.members"),
        "idx-streamed": ("indexed", "elastic=false", "shards.idx"),
        "learned": ("bare", 'shard-cache="%s"' % cache, "learned"),
        "cached": ("bare", 'shard-cache="%s"' % cache, "cached"),
        "learned-streamed": ("bare", 'elastic=false shard-cache=""', "learned"),
        "cached-streamed": ("bare", 'elastic=false shard-cache="%s"' % cache, "cached"),
    }
    for name, (folder, props, source) in runs.items():
        seen, skipped, reasons = [], [], {"bad-label": 0, "no-image": 0}
        for rank in range(world):
            stats = []
            out, warnings, error, counts = run_src(
                'location="%s/%s" num-shards=%d shard-index=%d shuffle=true seed=5 %s'
                % (tmp_path / folder, pattern, world, rank, props), stats=stats)
            assert error is None, (name, error)
            # (rank 1 finds what rank 0 learned in the cache)
            assert stats[0].get_value("shard-index-source") in (
                source, "cached" if rank else source), name
            for index, label, epoch, path, data in out:
                assert (label, data) == truth[key_of(path)], (name, path)
            seen += [key_of(o[3]) for o in out]
            for reason in reasons:
                reasons[reason] += counts.get_value(reason)
            skipped += [w for w in warnings if "Skipping" in w or "skip" in w.lower()]
        assert sorted(seen) == sorted(truth), name
        assert reasons == {"bad-label": len(bad_keys),
                           "no-image": len(no_image_keys)}, name
        for key in bad_keys:
            assert sum(":%s.jpg" % key in w for w in skipped) == 1, (name, key, skipped)


def test_streamed_shuffle_starts_before_the_buffer_is_full(tmp_path):
    """elastic=false mixes through a shuffle buffer as WebDataset's
    shuffle(1000, initial=100): the first sample leaves once 100 are in,
    one for every second read while it grows, so the i-th out was among
    the first 100 + 2i read; every sample once, the same order again."""
    n = 400
    write_groups(str(tmp_path / "one.tar"),
                 [("k%04d" % i, b"\xff\xd8%d" % i, b"%d" % (i % 7)) for i in range(n)])
    for seed in range(5):
        props = ('location="%s" elastic=false shard-cache="" shuffle=true '
                 'seed=%d shuffle-buffer=1000' % (tmp_path / "one.tar", seed))
        out, warnings, error, _ = run_src(props)
        assert error is None and warnings == []
        read_at = [int(key_of(o[3])[1:]) for o in out]
        assert sorted(read_at) == list(range(n))
        assert all(at < 100 + 2 * i for i, at in enumerate(read_at)), (seed, read_at[:10])
        assert read_at != list(range(n))
        assert [o[3] for o in run_src(props)[0]] == [o[3] for o in out]


@pytest.mark.parametrize("props", ["elastic=false", "elastic=false shard-cache=\"\"",
                                   "", "shard-cache=\"\""])
@pytest.mark.parametrize("indexed", [True, False])
def test_padding_rank_reports_dropped_groups_once(tmp_path, props, indexed):
    """17 samples on 2 ranks: rank 1 wraps round to shard 0's start to pad
    its share; the groups there that are no sample (the bad label ahead of
    shard 0's first sample) are reported once an epoch, by rank 0."""
    truth, bad_keys, no_image_keys = labelled_shards(
        str(tmp_path), bad=((0, 0), (0, 3), (1, 0)))
    assert len(truth) == 17
    if indexed:
        subprocess.run(["/usr/bin/python3", MAKE_SHARDS, "--index-only", str(tmp_path)],
                       check=True, capture_output=True)
    seen, reasons, named = [], {"bad-label": 0, "no-image": 0}, []
    for rank in range(2):
        out, warnings, error, counts = run_src(
            'location="%s/lab-{000000..000002}.tar" num-shards=2 shard-index=%d '
            'num-epochs=2 %s' % (tmp_path, rank, props))
        assert error is None
        seen += [(o[2], key_of(o[3])) for o in out]
        for reason in reasons:
            reasons[reason] += counts.get_value(reason)
        named += warnings
    for epoch in range(2):
        keys = [k for e, k in seen if e == epoch]
        assert len(keys) == 18 and set(keys) == set(truth)
    assert reasons == {"bad-label": 2 * len(bad_keys), "no-image": 2}
    for key in bad_keys:
        assert sum(":%s.jpg" % key in w for w in named) == 2, (key, named)


def test_json_labels_without_label_key_warn_once(tmp_path):
    """The default label-key (cls) finding no .cls member in any group of
    the shards while they have .json members: one warning naming a shard
    and suggesting label-key=json (labels are -1 otherwise), also when the
    learned index comes from the cache; none once label-key=json is set."""
    def write(s, cls=None):
        with tarfile.open(tmp_path / ("j-%d.tar" % s), "w", format=tarfile.USTAR_FORMAT) as tar:
            for g in range(3):
                for name, data in (("k%d_%d.jpg" % (s, g), b"\xff\xd8"),
                                   ("k%d_%d.json" % (s, g), b'{"label": %d}' % g),
                                   ("k%d_%d.cls" % (s, g), cls)):
                    if data is None:
                        continue
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    for s in range(2):
        write(s)
    location = "%s/j-{0..1}.tar" % tmp_path
    cache = tmp_path / "cache"
    for source in ("learned", "cached"):
        stats = []
        out, warnings, error, _ = run_src('location="%s" shard-cache="%s"'
                                          % (location, cache), stats=stats)
        assert error is None and stats[0].get_value("shard-index-source") == source
        assert [o[1] for o in out] == [-1] * 6
        assert len(warnings) == 1, warnings
        assert "j-0.tar" in warnings[0] and "label-key=json" in warnings[0] \
            and "1 other shard" in warnings[0], warnings
    out, warnings, error, _ = run_src('location="%s" shard-cache="" label-key=json'
                                      % location)
    assert error is None and warnings == [] and [o[1] for o in out] == [0, 1, 2] * 2
    # fields that read the .json members (captions, detection targets):
    # they are no labels, so no hint, from the cache or learned afresh
    for cache_dir in (cache, ""):
        out, warnings, error, _ = run_src('location="%s" shard-cache="%s" '
                                          'fields="json#label:int"' % (location, cache_dir))
        assert error is None and warnings == [], warnings
        assert [o[1] for o in out] == [-1] * 6
    # a field of other members leaves the hint
    out, warnings, error, _ = run_src('location="%s" shard-cache="" fields="txt:string:empty"'
                                      % location)
    assert error is None and len(warnings) == 1 and "label-key=json" in warnings[0], warnings
    # a .cls in the shards: no warning
    write(1, b"5")
    out, warnings, error, _ = run_src('location="%s" shard-cache=""' % location)
    assert error is None and len(warnings) == 1 and "j-0.tar" in warnings[0] \
        and "other shard" not in warnings[0]
