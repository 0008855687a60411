"""Checkpoint and resume: exact, at any number of ranks, equal batches."""
import collections
import gc
import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import spdlgst

HERE = os.path.dirname(os.path.abspath(__file__))


def make_folder(root, n, classes=3, bad=()):
    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        folder = root / f"c{i % classes}"
        folder.mkdir(exist_ok=True)
        arr = rng.integers(0, 256, (24 + i % 5, 32, 3), dtype=np.uint8)
        Image.fromarray(arr).save(folder / f"img{i:03d}.jpg", quality=90)
    for name in bad:
        (root / "c0" / name).write_bytes(b"\xff\xd8 not a jpeg")
    return root


def train_line(location, extra=""):
    return (f"spdlsrc location={location} shuffle=true seed=3 num-epochs=3 "
            f"{extra} ! spdldecode width=16 height=16 mode=random-resized-crop "
            "flip=random-horizontal ! spdlbatch batch-size=4 ! "
            "spdlappsink name=sink")


def fingerprint(batch):
    images, labels = batch
    return (batch.epoch, tuple(batch.indices), np.asarray(images).tobytes(),
            tuple(np.asarray(labels).tolist()))


def run_all(line):
    with spdlgst.Loader(line) as loader:
        return [fingerprint(b) for _ in range(3) for b in loader]


def run_interrupted(line, stop):
    """Takes @stop batches, saves, and resumes in a new loader."""
    head, state = [], None
    with spdlgst.Loader(line) as loader:
        for _ in range(3):
            for batch in loader:
                head.append(fingerprint(batch))
                if len(head) == stop:
                    # saved inside the loop, as a training step does
                    state = json.loads(json.dumps(loader.state_dict()))
                    break
            if len(head) == stop:
                break
    tail = []
    with spdlgst.Loader(line) as loader:
        loader.load_state_dict(state)
        for _ in range(3):
            tail += [fingerprint(b) for b in loader]
    return head, tail, state


@pytest.mark.parametrize("stop", [1, 3, 5, 6, 11])
def test_resume_is_bit_identical(tmp_path, stop):
    # 22 samples: 6 batches an epoch (the last of 2), 3 epochs; stop 6 is
    # an epoch's end, 11 the middle of the second epoch
    root = make_folder(tmp_path, 22)
    full = run_all(train_line(root))
    assert len(full) == 18
    head, tail, state = run_interrupted(train_line(root), stop)
    assert head == full[:stop]
    assert tail == full[stop:]
    # at an epoch's last batch, the state is that epoch's end
    assert state["epoch"] == (stop - 1) // 6
    assert state.get("end_of_epoch", False) == (stop % 6 == 0)



def drop_last_line(location):
    return train_line(location).replace(
        "spdlbatch batch-size=4", "spdlbatch batch-size=4 drop-last=true")


@pytest.mark.parametrize("stop", [5, 6, 7, 11])
def test_resume_after_a_dropped_partial_batch(tmp_path, stop):
    """drop_last: the first batch of an epoch after one whose partial batch
    was dropped is that epoch's first, not its end (the dropped batch's
    position was carried into it: a checkpoint there resumed at the next
    epoch, the rest of this one lost)."""
    root = make_folder(tmp_path, 22)      # 5 whole batches an epoch, 3 epochs
    line = drop_last_line(root)
    full = run_all(line)
    assert len(full) == 15
    head, tail, state = run_interrupted(line, stop)
    assert head == full[:stop]
    assert tail == full[stop:]
    assert (state["epoch"], state["offset"]) == \
        {5: (0, 20), 6: (1, 4), 7: (1, 8), 11: (2, 4)}[stop]

def test_resume_manifest_and_skipped_samples(tmp_path):
    root = make_folder(tmp_path, 14, bad=["bad0.jpg", "bad1.jpg"])
    manifest = tmp_path / "list.tsv"
    lines = [f"{p.relative_to(tmp_path)}\t{i % 3}"
             for i, p in enumerate(sorted(tmp_path.glob("c*/*.jpg")))]
    manifest.write_text("\n".join(lines) + "\n")
    line = train_line(manifest)
    full = run_all(line)
    for stop in (2, 4, 7):
        head, tail, _ = run_interrupted(line, stop)
        assert head + tail == full


def test_state_is_small_and_checked(tmp_path):
    root = make_folder(tmp_path, 30)
    with spdlgst.Loader(train_line(root)) as loader:
        epoch = iter(loader)        # a loop in progress
        next(epoch)
        state = loader.state_dict()
        del epoch                   # abandoned, collected: the state stays
        gc.collect()
        assert loader.state_dict() == state
    assert len(json.dumps(state)) < 300
    assert state["offset"] == 4 and state["epoch"] == 0
    other = spdlgst.Loader(train_line(root).replace("seed=3", "seed=4"))
    with pytest.raises(ValueError, match="seed"):
        other.load_state_dict(state)
    other.close()
    with spdlgst.Loader(train_line(root)) as loader:
        next(iter(loader))
        with pytest.raises(RuntimeError, match="before"):
            loader.load_state_dict(state)



def test_len_before_load_state_dict(tmp_path):
    """An LR scheduler sized from len(loader) before the checkpoint is
    restored: the resumed batches are those of a loader without len()."""
    root = make_folder(tmp_path, 22)
    line = train_line(root)
    _, tail, state = run_interrupted(line, 3)
    with spdlgst.Loader(line) as loader:
        assert len(loader) == 6
        loader.load_state_dict(state)
        resumed = [fingerprint(b) for _ in range(3) for b in loader]
    assert resumed == tail and len(tail) == 18 - 3

def batch_sizes_on_three_ranks(location):
    """Per rank, per epoch: the batch sizes (checked against len())."""
    counts = []
    for rank in range(3):
        line = (f"spdlsrc location={location} num-shards=3 shard-index={rank} "
                "num-epochs=2 ! spdldecode width=8 height=8 ! "
                "spdlbatch batch-size=3 ! spdlappsink name=sink")
        with spdlgst.Loader(line) as loader:
            per_epoch = [[len(b.indices) for b in loader] for _ in range(2)]
            assert all(len(e) == len(loader) for e in per_epoch)
            counts.append(per_epoch)
    return counts


@pytest.mark.parametrize("kind", ["folder", "manifest"])
def test_equal_batches_on_three_ranks(tmp_path, kind):
    root = make_folder(tmp_path / "d", 20, bad=["bad0.jpg", "bad1.jpg",
                                                "bad2.jpg", "bad3.jpg"])
    location = root
    if kind == "manifest":
        location = tmp_path / "list.tsv"
        location.write_text("".join(
            f"{p.relative_to(tmp_path)}\t0\n" for p in sorted(root.glob("c*/*.jpg"))))
    counts = batch_sizes_on_three_ranks(location)
    # 24 samples, 8 per rank: batches of 3, 3, 2 on every rank
    assert counts == [[[3, 3, 2]] * 2] * 3



def test_one_rank_pads_nothing(tmp_path):
    """What the README promises: equal batches per rank are for num-shards
    >= 2; on one rank an epoch with skipped samples yields fewer batches
    than len(loader)."""
    root = make_folder(tmp_path, 20, bad=["bad0.jpg", "bad1.jpg",
                                          "bad2.jpg", "bad3.jpg"])
    line = (f"spdlsrc location={root} ! spdldecode width=8 height=8 ! "
            "spdlbatch batch-size=3 ! spdlappsink name=sink")
    with spdlgst.Loader(line) as loader:
        sizes = [len(b.indices) for b in loader]
        assert len(loader) == 8                  # 24 files listed
    assert sizes == [3] * 6 + [2]                # 20 decoded

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(world, env):
    # torchrun of Debian's torch 1.13 spells its options with underscores, and
    # on Python 3.11 its default --redirects/--tee "0" fails to parse; a port
    # of our own, not --standalone's fixed 29400
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1",
           "--nproc_per_node", str(world), "--rdzv_backend", "c10d",
           "--rdzv_endpoint", f"127.0.0.1:{free_port()}",
           "--redirects", "2", "--tee", "2",
           os.path.join(HERE, "ckpt_worker.py")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_torchrun_stop_on_two_resume_on_one_and_three(tmp_path):
    root = make_folder(tmp_path / "d", 24)
    env = dict(os.environ, SPDL_TEST_DATASET=str(root), SPDL_TEST_OUT=str(tmp_path),
               OMP_NUM_THREADS="1", SPDL_TEST_STOP="2", SPDL_TEST_PHASE="save")
    torchrun(2, env)
    taken = [i for r in range(2)
             for i in json.loads((tmp_path / f"save-2-{r}.json").read_text())]
    assert len(taken) == 2 * 2 * 2
    everything = set(range(24))
    remaining = everything - set(taken)
    for world in (1, 3):
        torchrun(world, dict(env, SPDL_TEST_PHASE="resume"))
        rest = [i for r in range(world) for i in
                json.loads((tmp_path / f"resume-{world}-{r}.json").read_text())]
        counts = collections.Counter(rest)
        # every remaining sample exactly once; padding only repeats samples
        # taken before the checkpoint
        assert all(counts[i] == 1 for i in remaining)
        padding = [i for i in rest if i not in remaining]
        assert set(padding) <= set(taken)
        assert len(padding) == -(-16 // world) * world - 16


MAKE_SHARDS = os.path.join(HERE, "..", "..", "tools", "make-shards")


def make_shards(tmp_path, n):
    make_folder(tmp_path / "folder", n)
    done = subprocess.run(["/usr/bin/python3", MAKE_SHARDS, str(tmp_path / "folder"),
                           str(tmp_path / "shards"), "--samples-per-shard", "5"],
                          check=True, capture_output=True, text=True)
    return '"' + done.stdout.strip().rsplit(" ", 1)[-1] + '"'


@pytest.mark.parametrize("stop", [2, 6, 8])
def test_resume_shards_is_bit_identical(tmp_path, stop):
    # 22 samples in 5 shards, 2 ranks: 11 each, 3 batches of 4/4/3 an epoch;
    # rank 1, shard order and shuffle buffer per epoch
    location = make_shards(tmp_path, 22)
    line = train_line(location, "num-shards=2 shard-index=1 shuffle-buffer=6")
    full = run_all(line)
    assert len(full) == 9
    head, tail, state = run_interrupted(line, stop)
    assert head == full[:stop]
    assert tail == full[stop:]
    assert state["world_size"] == 2 and state["elastic"] is True


def per_sample(batch):
    """{index: (label, pixels)} of a batch's samples."""
    images, labels = (np.asarray(x) for x in batch)
    return [(i, (int(labels[k]), images[k].tobytes()))
            for k, i in enumerate(batch.indices)]


def rank_line(location, world, rank, extra=""):
    return (f"spdlsrc location={location} shuffle=true seed=3 num-epochs=1 "
            f"shuffle-buffer=6 num-shards={world} shard-index={rank} {extra} ! "
            "spdldecode width=16 height=16 mode=random-resized-crop "
            "flip=random-horizontal ! spdlbatch batch-size=3 ! "
            "spdlappsink name=sink")


def check_elastic_resume(location, n, stop, extra=""):
    """2 ranks take @stop batches of 3 each and save; the combined state
    resumes on 1 and on 3 ranks: interleaved, the new ranks' samples are
    the rest of the epoch's global order (each once; the tail padded from
    its start), with the labels and pixels of the uninterrupted run."""
    with spdlgst.Loader(rank_line(location, 1, 0, extra)) as loader:
        whole = [s for b in loader for s in per_sample(b)]
    order = [i for i, _ in whole]
    truth = dict(whole)
    assert sorted(order) == list(range(n))
    states = []
    for rank in range(2):
        with spdlgst.Loader(rank_line(location, 2, rank, extra)) as loader:
            for k, batch in enumerate(loader):
                if k + 1 == stop:
                    states.append(loader.state_dict())
                    break
    state = json.loads(json.dumps(spdlgst.combine_states(states)))
    offset = 2 * 3 * stop
    assert (state["epoch"], state["offset"]) == (0, offset)
    for world in (1, 3):
        ranks = []
        for rank in range(world):
            with spdlgst.Loader(rank_line(location, world, rank, extra)) as loader:
                loader.load_state_dict(state)
                ranks.append([s for b in loader for s in per_sample(b)])
        assert len({len(r) for r in ranks}) == 1       # equal per rank
        taken = [ranks[k % world][k // world] for k in range(len(ranks[0]) * world)]
        rest = order[offset:]
        assert [i for i, _ in taken] == rest + order[:len(taken) - len(rest)]
        for i, sample in taken:
            assert sample == truth[i]


@pytest.mark.parametrize("stop", [1, 2])
def test_resume_shards_on_other_world_sizes(tmp_path, stop):
    check_elastic_resume(make_shards(tmp_path, 22), 22, stop)


def test_contiguous_shards_resume_only_on_as_many_ranks(tmp_path):
    location = make_shards(tmp_path, 22)
    line = rank_line(location, 2, 0, "elastic=false")
    with spdlgst.Loader(line) as loader:
        batches = iter(loader)          # in the loop: mid-epoch
        next(batches)
        state = loader.state_dict()
    assert state["elastic"] is False
    with spdlgst.Loader(rank_line(location, 3, 0, "elastic=false")) as loader:
        with pytest.raises(ValueError, match="elastic=false"):
            loader.load_state_dict(state)
    with spdlgst.Loader(rank_line(location, 3, 0)) as loader:
        with pytest.raises(ValueError, match="elastic"):
            loader.load_state_dict(state)
    # a state from before the elastic order (no "elastic") is contiguous
    old = {k: v for k, v in state.items()
           if k not in ("elastic", "elastic-order", "shuffle-buffer-bytes")}
    with spdlgst.Loader(rank_line(location, 2, 0)) as loader:
        with pytest.raises(ValueError, match="elastic=False"):
            loader.load_state_dict(old)
    with spdlgst.Loader(rank_line(location, 2, 0, "elastic=false")) as loader:
        loader.load_state_dict(old)
        assert len([b for b in loader]) == 3     # of 4 (11 samples, batches of 3)


def test_shards_without_member_index_resume_only_on_as_many_ranks(tmp_path):
    # elastic=true (the default) but no shards.members: the ranks split the
    # shards in contiguous parts, so the state must not resume on 2 of 4
    location = make_shards(tmp_path, 22)
    os.remove(tmp_path / "shards" / "shards.members")
    with spdlgst.Loader(rank_line(location, 4, 0)) as loader:
        batches = iter(loader)
        next(batches)
        state = loader.state_dict()
    assert state["elastic"] is True and state["elastic-order"] is False
    with spdlgst.Loader(rank_line(location, 2, 0)) as loader:
        with pytest.raises(ValueError, match="shards.members"):
            loader.load_state_dict(state)
    with spdlgst.Loader(rank_line(location, 4, 1)) as loader:
        loader.load_state_dict(state)


def test_equal_batches_on_three_ranks_shards(tmp_path):
    location = make_shards(tmp_path, 22)
    counts = batch_sizes_on_three_ranks(location)
    # 22 samples, ceil(22 / 3) = 8 per rank: batches of 3, 3, 2
    assert counts == [[[3, 3, 2]] * 2] * 3


def test_equal_batches_on_three_ranks_shards_with_bad_members(tmp_path):
    # the last shard cut after its first member: its 3 other samples are
    # skipped where they stand (by range), padded back by spdlbatch
    location = make_shards(tmp_path, 24)
    last = tmp_path / "shards" / "train-000004.tar"
    last.write_bytes(last.read_bytes()[:3000])
    counts = batch_sizes_on_three_ranks(location)
    assert counts == [[[3, 3, 2]] * 2] * 3


def write_shards(tmp_path, bad=(("s1", 2),)):
    """3 tar shards of 5 samples (no index: counted from the headers); the
    samples named in @bad have a label member that is not an integer."""
    import io
    import tarfile

    rng = np.random.default_rng(7)
    folder = tmp_path / "raw"
    folder.mkdir()
    for s in range(3):
        with tarfile.open(folder / f"s{s}.tar", "w") as tar:
            for i in range(5):
                buf = io.BytesIO()
                Image.fromarray(rng.integers(0, 256, (20, 24, 3), dtype=np.uint8)
                                ).save(buf, format="JPEG", quality=90)
                label = b"x" if (f"s{s}", i) in bad else str(i % 3).encode()
                for ext, data in (("jpg", buf.getvalue()), ("cls", label)):
                    info = tarfile.TarInfo(f"k{s}{i}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    return f'"{folder}/s{{0..2}}.tar"'


@pytest.mark.parametrize("stop", [2, 3, 5])
def test_resume_shards_after_a_skipped_member(tmp_path, stop):
    # the bad sample comes before some of the stops: resuming must count it
    line = train_line(write_shards(tmp_path), "shuffle-buffer=4")
    full = run_all(line)
    assert sum(len(f[1]) for f in full) == 3 * 14
    head, tail, _ = run_interrupted(line, stop)
    assert head + tail == full


def test_state_after_break_is_the_last_batch(tmp_path):
    """The preemption pattern (a flag, a break, a save): the state is the
    last batch the loop received, and a restarted job gets the rest of that
    epoch. The live loader's next loop starts the next epoch, as a
    DataLoader's does, and its state then says so."""
    root = make_folder(tmp_path, 22)
    line = train_line(root)
    full = run_all(line)
    with spdlgst.Loader(line) as loader:
        for batch in loader:
            break                       # leaves epoch 0 after one batch
        gc.collect()
        state = loader.state_dict()
        rest_live = [fingerprint(b) for _ in range(2) for b in loader]
        after = loader.state_dict()
    assert (state["epoch"], state["offset"]) == (0, 4)
    assert (after["epoch"], after["offset"]) == (3, 0)
    with spdlgst.Loader(line) as loader:
        loader.load_state_dict(state)
        rest_resumed = [fingerprint(b) for _ in range(3) for b in loader]
    assert rest_live == full[6:]
    assert rest_resumed == full[1:]



def position(loader):
    state = loader.state_dict()
    return state["epoch"], state["offset"]


def test_state_stays_at_the_end_of_the_run(tmp_path):
    """Once the last epoch is left, the state is the end of the run, for
    every later (empty) loop, and in a loader restored from it."""
    root = make_folder(tmp_path, 60)      # 15 batches an epoch, 3 epochs
    line = train_line(root)
    with spdlgst.Loader(line) as loader:
        assert [len(list(loader)) for _ in range(2)] == [15, 15]
        for i, _ in enumerate(loader):
            if i == 2:
                break                     # 12 batches of the last epoch left
        positions = [position(loader)]   # the last batch's, until a loop
        for _ in range(2):
            assert list(loader) == []
            positions.append(position(loader))
        end = loader.state_dict()
    assert positions == [(2, 12), (3, 0), (3, 0)]
    with spdlgst.Loader(line) as loader:
        loader.load_state_dict(end)
        assert list(loader) == []
        assert position(loader) == (3, 0)

def test_state_after_a_padded_last_batch(tmp_path):
    # rank 0 of 2 takes the last listed samples, which are bad: its last
    # batch is padded, and a checkpoint after it is the next epoch
    root = make_folder(tmp_path, 10, bad=["zz0.jpg", "zz1.jpg"])
    line = (f"spdlsrc location={root} num-shards=2 shard-index=0 num-epochs=2 "
            "! spdldecode width=8 height=8 ! spdlbatch batch-size=4 ! "
            "spdlappsink name=sink")
    with spdlgst.Loader(line) as loader:
        batches = [b for b in loader]
        assert [len(b.indices) for b in batches] == [4, 2]
        state = loader.state_dict()
    assert (state["epoch"], state["offset"]) == (1, 0)


def test_resume_on_a_changed_dataset_is_an_error(tmp_path):
    """Files added or removed since the save: a clear error, not repeated
    and lost samples; check_dataset=False resumes knowingly."""
    root = make_folder(tmp_path / "ds", 22)
    line = train_line(root)
    _, _, state = run_interrupted(line, 3)
    assert state["dataset"].startswith("22:")
    os.remove(root / "c1" / "img004.jpg")
    with spdlgst.Loader(line) as loader:
        with pytest.raises(ValueError, match="22 samples then, 21 now"):
            loader.load_state_dict(state)
    with spdlgst.Loader(line) as loader:
        loader.load_state_dict(state, check_dataset=False)
        assert sum(len(b.indices) for b in loader) > 0
    # as many files, one renamed: the listing's hash tells
    (root / "c2" / "img005.jpg").rename(root / "c2" / "zz-renamed.jpg")
    make_folder(tmp_path / "ds2", 22)
    (tmp_path / "ds2" / "c1" / "img004.jpg").rename(root / "c1" / "img004.jpg")
    with spdlgst.Loader(line) as loader:
        with pytest.raises(ValueError, match="not the same: their paths, labels"):
            loader.load_state_dict(state)
    # the same files under another root: the same dataset
    (tmp_path / "ds").rename(tmp_path / "moved")
    (tmp_path / "moved" / "c2" / "zz-renamed.jpg").rename(
        tmp_path / "moved" / "c2" / "img005.jpg")
    with spdlgst.Loader(train_line(tmp_path / "moved")) as loader:
        loader.load_state_dict(state)
        assert len(list(loader)) > 0


def test_state_at_an_epochs_last_batch(tmp_path, caplog):
    """A checkpoint inside the loop at an epoch's last batch (the docs' loop
    saves there when its step count says so) is the end of that epoch, not
    the next one: a resumed loader's next loop is its empty rest, as for
    torchdata's StatefulDataLoader, and the caller's epoch count, saved
    beside it, stays in step. Taken after the loop, it is the next epoch."""
    root = make_folder(tmp_path, 22)         # 6 batches an epoch, 3 epochs
    line = train_line(root)
    full = run_all(line)
    with spdlgst.Loader(line) as loader:
        for i, _ in enumerate(loader):
            if i == 5:
                inside = json.loads(json.dumps(loader.state_dict()))
        after = loader.state_dict()
        for i, _ in enumerate(loader):
            if i == 5:
                break                   # the preemption flag, at the last one
        at_break = loader.state_dict()
        live = [fingerprint(b) for b in loader]
    assert (inside["epoch"], inside["offset"], inside["end_of_epoch"]) == \
        (0, 22, True)
    assert (after["epoch"], after["offset"]) == (1, 0)
    assert "end_of_epoch" not in after
    assert (at_break["epoch"], at_break["offset"]) == (1, 22)
    assert live == full[12:]
    # the ranks' states combine to the earliest: mid-epoch before the end
    mid = dict(inside, offset=20)
    del mid["end_of_epoch"]
    assert spdlgst.combine_states([inside, mid]) == mid
    assert spdlgst.combine_states([inside, after]) == inside

    with spdlgst.Loader(line) as loader:        # resumed
        loader.load_state_dict(inside)
        assert loader.state_dict()["end_of_epoch"]
        assert list(loader) == []               # the rest of epoch 0
        assert position(loader) == (1, 0)
        assert [fingerprint(b) for b in loader] == full[6:12]
        assert [fingerprint(b) for b in loader] == full[12:]
    with spdlgst.Loader(line) as loader:        # with the usual set_epoch
        loader.load_state_dict(inside)
        loader.set_epoch(0)
        assert list(loader) == []
        loader.set_epoch(1)
        assert [fingerprint(b) for b in loader] == full[6:12]
    with spdlgst.Loader(line) as loader:        # straight to the next epoch
        loader.load_state_dict(inside)
        assert len(loader) == 6
        loader.set_epoch(1)
        assert [fingerprint(b) for b in loader] == full[6:12]
    # the last epoch's end: an empty rest, then the run's end (said once)
    with spdlgst.Loader(line) as loader:
        loader.load_state_dict(dict(inside, epoch=2))
        caplog.clear()
        assert list(loader) == []
        assert "no more batches" not in caplog.text
        assert position(loader) == (3, 0)
        assert list(loader) == []
        assert "no more batches" in caplog.text


def test_state_at_the_last_batch_on_two_ranks(tmp_path):
    """Each rank's state at its last batch of the epoch, combined, resumes
    on one rank as the (empty) rest of that epoch, then the next whole."""
    root = make_folder(tmp_path, 22)
    states = []
    for rank in range(2):
        with spdlgst.Loader(train_line(
                root, f"num-shards=2 shard-index={rank}")) as loader:
            for i, _ in enumerate(loader):
                if i == len(loader) - 1:
                    states.append(loader.state_dict())
    state = spdlgst.combine_states(states)
    assert (state["epoch"], state["offset"], state["end_of_epoch"]) == \
        (0, 22, True)
    line = train_line(root)
    full = run_all(line)
    with spdlgst.Loader(line) as loader:
        loader.load_state_dict(state)
        assert list(loader) == []
        assert [fingerprint(b) for b in loader] == full[6:12]


def run_training(root, out, phase, set_epoch, drop_last):
    """train_worker.py (the docs' loop) in a fresh process."""
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "train_worker.py"), str(root),
         str(out), phase, str(int(set_epoch)), str(int(drop_last))],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(out / f"{phase}.json") as f:
        return json.load(f)


@pytest.mark.parametrize("set_epoch,drop_last", [
    (False, False), (True, False), (False, True)])
def test_training_resumes_from_a_checkpoint_at_an_epochs_last_batch(
        tmp_path, set_epoch, drop_last):
    """The docs' training loop, its checkpoint (torch.save) taken at epoch
    0's last batch, resumed in a new process (torch.load): the same steps
    follow, each in the same epoch of the loop, to the same final weights;
    OneCycleLR, sized for the run, would raise on one step too many. The
    checkpoint after the epoch's loop resumes the same way."""
    root = make_folder(tmp_path / "ds", 22)
    out = tmp_path / "out"
    out.mkdir()
    full = run_training(root, out, "full", set_epoch, drop_last)
    per_epoch = 5 if drop_last else 6
    assert len(full["steps"]) == 2 * per_epoch
    assert all(loop == got for loop, got, _, _ in full["steps"])
    for name in ("ckpt-0", "end-0"):
        resumed = run_training(root, out, f"resume-{name}", set_epoch,
                               drop_last)
        assert resumed["steps"] == full["steps"][per_epoch:], name
        assert resumed["params"] == full["params"], name
