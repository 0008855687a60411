"""One rank of the elastic checkpoint test (run by torchrun, gloo).

phase "save": take SPDL_TEST_STOP batches of epoch 0, then gather the ranks'
states, combine them and write the state (rank 0) and what each rank took.
phase "resume": load the state and take the rest of epoch 0."""
import json
import os

import torch.distributed as dist

import spdlgst

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
root = os.environ["SPDL_TEST_DATASET"]
out = os.environ["SPDL_TEST_OUT"]
phase = os.environ["SPDL_TEST_PHASE"]
loader = spdlgst.Loader(
    f"spdlsrc location={root} shuffle=true seed=11 num-epochs=1 ! "
    "spdldecode width=16 height=16 mode=random-resized-crop ! "
    "spdlbatch batch-size=2 ! spdlappsink name=sink")
taken = []
if phase == "save":
    stop = int(os.environ["SPDL_TEST_STOP"])
    for batch in loader:
        taken += batch.indices
        if len(taken) == 2 * stop:
            state = loader.state_dict()     # in the loop: mid-epoch
            break
    states = [None] * world
    dist.all_gather_object(states, state)
    if rank == 0:
        with open(os.path.join(out, "state.json"), "w") as f:
            json.dump(spdlgst.combine_states(states), f)
else:
    with open(os.path.join(out, "state.json")) as f:
        loader.load_state_dict(json.load(f))
    for batch in loader:
        taken += batch.indices
    counts = [None] * world
    dist.all_gather_object(counts, len(taken))
    assert len(set(counts)) == 1, f"ranks took {counts}"
    assert len(loader) * 2 >= len(taken)
with open(os.path.join(out, f"{phase}-{world}-{rank}.json"), "w") as f:
    json.dump(taken, f)
loader.close()
dist.destroy_process_group()
