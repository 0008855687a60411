"""The training loop of docs/plugins/spdlgst.md, small, for the checkpoint
tests: a CNN on 16 x 16 crops, OneCycleLR sized for the whole run (it
raises when stepped once too often), and a checkpoint (torch.save) with the
loader's state inside the loop, when the step count says so.

    train_worker.py DATASET OUT PHASE SET_EPOCH DROP_LAST

phase "full": trains EPOCHS epochs from scratch and saves, as the docs'
loop does, a checkpoint at each epoch's last batch (the mid-epoch
checkpoint's `step % every == every - 1` falling there: ckpt-E.pt) and one
after each epoch (end-E.pt). phase "resume-ckpt-0" / "resume-end-0": a
fresh process loads that file with torch.load and trains to the end.
Each phase writes OUT/PHASE.json: the (epoch, indices, loss) of each step
its loop saw, with the loop's own epoch, and the final parameters' sum.
"""
import json
import os
import sys

import torch

import spdlgst

EPOCHS = 2
root, out, phase = sys.argv[1:4]
use_set_epoch = sys.argv[4] == "1"
drop_last = sys.argv[5] == "1"
torch.set_num_threads(1)            # bit-identical runs
torch.manual_seed(0)

train = spdlgst.ImageLoader(root, recipe="train", batch_size=4, size=16,
                            seed=5, dtype="float32", mean="imagenet",
                            std="imagenet", drop_last=drop_last, threads=1)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.OneCycleLR(
    optimizer, max_lr=0.1, total_steps=EPOCHS * len(train))
loss_fn = torch.nn.CrossEntropyLoss()
every = len(train)                  # "step % 1000 == 999" at the last batch


def save(name, epoch):
    torch.save({"epoch": epoch, "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "loader": train.state_dict()}, os.path.join(out, name))


first_epoch = 0
if phase.startswith("resume-"):
    ckpt = torch.load(os.path.join(out, phase[len("resume-"):] + ".pt"))
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    train.load_state_dict(ckpt["loader"])          # before iterating
    first_epoch = ckpt["epoch"]

seen = []
for epoch in range(first_epoch, EPOCHS):
    if use_set_epoch:
        train.set_epoch(epoch)
    model.train()
    for step, batch in enumerate(train):
        images, labels = batch
        loss = loss_fn(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        seen.append([epoch, batch.epoch, batch.indices, loss.item()])
        if step % every == every - 1 and phase == "full":
            save(f"ckpt-{epoch}.pt", epoch)
    if phase == "full":
        save(f"end-{epoch}.pt", epoch + 1)

with open(os.path.join(out, phase + ".json"), "w") as f:
    json.dump({"steps": seen,
               "params": sum(p.double().sum().item()
                             for p in model.parameters())}, f)
train.close()
