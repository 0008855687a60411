"""The preemption checkpoint pattern of real training jobs: a signal
handler sets a flag, the loop sees it and breaks, the job saves
loader.state_dict() and exits; a restarted job (a new process) loads the
state and gets every remaining sample of the epoch exactly once."""
import json
import os
import subprocess
import sys

import pytest

from test_checkpoint import make_folder
from test_shards import make_shards

HERE = os.path.dirname(os.path.abspath(__file__))

# One rank of a job. argv: launch line, state file, stop after N batches
# (0: run to the end), state to resume from ("" for none). Prints the
# dataset indices of the samples it received, by epoch, as JSON.
JOB = r"""
import json, os, signal, sys
import spdlgst

line, state_file, stop, resume = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
preempted = False

def on_signal(signum, frame):
    global preempted
    preempted = True

signal.signal(signal.SIGUSR1, on_signal)
seen = {}
loader = spdlgst.Loader(line)
if resume:
    with open(resume) as f:
        loader.load_state_dict(json.load(f))
batches = 0
for epoch in range(2):
    for batch in loader:
        seen.setdefault(str(batch.epoch), []).extend(int(i) for i in batch.indices)
        batches += 1
        if batches == stop:
            os.kill(os.getpid(), signal.SIGUSR1)    # the scheduler's notice
        if preempted:
            break
    if preempted:
        break
with open(state_file, "w") as f:
    json.dump(loader.state_dict(), f)
loader.close()
print(json.dumps(seen))
"""


def run_job(line, state_file, stop=0, resume="", rank=None, world=None):
    env = dict(os.environ)
    env.pop("RANK", None)
    env.pop("WORLD_SIZE", None)
    if rank is not None:
        env.update(RANK=str(rank), WORLD_SIZE=str(world))
    res = subprocess.run([sys.executable, "-c", JOB, line, str(state_file),
                          str(stop), str(resume)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return {int(k): v for k, v in json.loads(res.stdout.splitlines()[-1]).items()}


def line_for(location, epochs):
    return (f"spdlsrc location={location} shuffle=true seed=5 num-epochs={epochs} "
            "! spdldecode width=8 height=8 mode=random-resized-crop "
            "! spdlbatch batch-size=4 ! spdlappsink name=sink")


@pytest.fixture(scope="module", params=["folder", "shards"])
def dataset(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("preempt")
    make_folder(root / "folder", 26)
    if request.param == "folder":
        return str(root / "folder"), 26
    return make_shards(str(root / "folder"), str(root / "shards"), 7), 26


@pytest.mark.parametrize("world", [1, 2])
def test_signal_break_save_restart(dataset, tmp_path, world):
    """Epoch 0 is cut after 3 batches on every rank; the restarted job
    (same number of ranks) finishes it, then runs epoch 1 whole."""
    location, n = dataset
    line = line_for(location, 2)
    first, second = {}, {}
    for rank in range(world):
        r = rank if world > 1 else None
        state = tmp_path / f"state{rank}.json"
        first[rank] = run_job(line, state, stop=3, rank=r, world=world)
        assert first[rank] == {0: first[rank][0]} and len(first[rank][0]) == 12
    for rank in range(world):
        r = rank if world > 1 else None
        state = tmp_path / f"state{rank}.json"
        with open(state) as f:
            saved = json.load(f)
        assert saved["epoch"] == 0 and saved["offset"] == 12 * world
        second[rank] = run_job(line, tmp_path / f"after{rank}.json",
                               resume=state, rank=r, world=world)
    epoch0 = [i for rank in range(world) for i in first[rank][0] + second[rank][0]]
    epoch1 = [i for rank in range(world) for i in second[rank][1]]
    # exactly once each (2 ranks pad 26 to 28: two samples twice, as
    # DistributedSampler pads, in the uncut epoch as in the cut one)
    padded = -(-n // world) * world
    assert sorted(set(epoch0)) == list(range(n)) and len(epoch0) == padded
    assert sorted(set(epoch1)) == list(range(n)) and len(epoch1) == padded
    if world == 1:
        assert sorted(epoch0) == list(range(n))


def test_resumed_single_epoch_loader_finishes_the_epoch(dataset, tmp_path):
    """A job of one epoch (num-epochs=1) preempted in it: the restarted job
    of one epoch yields the rest of epoch 0, not nothing."""
    location, n = dataset
    line = line_for(location, 1)
    state = tmp_path / "state.json"
    head = run_job(line, state, stop=2)
    tail = run_job(line, tmp_path / "after.json", resume=state)
    assert list(head) == [0] and list(tail) == [0]
    assert sorted(head[0] + tail[0]) == list(range(n))
