"""One rank of the torchrun test: each rank loads its shard through the
loader (RANK/WORLD_SIZE come from torchrun) and rank 0 checks the union."""
import os

import torch
import torch.distributed as dist

import spdlgst

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
root = os.environ["SPDL_TEST_DATASET"]
loader = spdlgst.Loader(
    f"spdlsrc location={root} shuffle=true seed=5 num-epochs=2 ! "
    "spdldecode width=32 height=32 mode=center-crop ! "
    "spdlbatch batch-size=3 ! spdlappsink name=sink")
per_epoch = []
for epoch in range(2):
    indices = [i for batch in loader for i in batch.indices]
    per_epoch.append(indices)
loader.close()

n = max(len(e) for e in per_epoch)
mine = torch.tensor([e + [-1] * (n - len(e)) for e in per_epoch])
gathered = [torch.zeros_like(mine) for _ in range(world)]
sizes = [torch.zeros(2, dtype=torch.long) for _ in range(world)]
dist.all_gather(gathered, mine)
dist.all_gather(sizes, torch.tensor([len(e) for e in per_epoch]))

if rank == 0:
    total = len(spdlgst.Loader(f"spdlsrc location={root} num-shards=1 ! spdldecode ! "
                               "spdlbatch batch-size=1 ! spdlappsink"))
    problems = []
    for epoch in range(2):
        counts = [int(s[epoch]) for s in sizes]
        if len(set(counts)) != 1:
            problems.append(f"epoch {epoch}: ranks got {counts} samples")
        shards = [set(g[epoch].tolist()) - {-1} for g in gathered]
        if shards[0] & shards[1]:
            problems.append(f"epoch {epoch}: ranks overlap")
        if set.union(*shards) != set(range(total)):
            problems.append(f"epoch {epoch}: union is not the dataset")
    with open(os.environ["SPDL_TEST_OUT"], "w") as f:
        f.write("ok\n" if not problems else "\n".join(problems))
dist.destroy_process_group()
