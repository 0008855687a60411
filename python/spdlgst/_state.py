"""Checkpoint and resume: what Loader.state_dict() saves and restores.

The state is the position just after the last batch handed to the caller:
the epoch, and how many samples of that epoch's global order all ranks
together consumed (spdlappsink's resume-state, from spdlsrc's events). It is
small (no sample lists) and JSON-serializable, and independent of the world
size: a state saved by W ranks resumes on any number of ranks, each
remaining sample of the epoch taken once across them (spdlsrc's rule).
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List

VERSION = 1
# spdlsrc settings a resumed pipeline must share with the saved one
_CHECKED = ("seed", "shuffle", "drop-uneven", "shuffle-buffer")


def capture(sink, src, batches: int) -> Dict[str, Any]:
    """The state of a pipeline: spdlappsink @sink, spdlsrc @src."""
    resume = sink.get_property("resume-state")
    if resume is not None:
        epoch, offset = resume.get_value("epoch"), resume.get_value("offset")
    else:           # nothing pulled yet: where the pipeline starts
        epoch = src.get_property("start-epoch")
        offset = (src.get_property("start-offset") +
                  src.get_property("start-index") * src.get_property("num-shards"))
    state = {"version": VERSION, "epoch": int(epoch), "offset": int(offset),
             "world_size": src.get_property("num-shards"),
             "batches": batches}
    for name in _CHECKED:
        state[name] = src.get_property(name)
    state["seed"] = int(state["seed"])
    state["shards"] = is_shards(src)
    fingerprint = src.get_property("dataset-fingerprint")
    if fingerprint:
        state["dataset"] = fingerprint
    if state["shards"]:
        state["elastic"] = src.get_property("elastic")
        # the order actually used: shards with shards.idx and no
        # shards.members are split in contiguous parts even with elastic=true
        # (shards with neither get their member index learned: elastic)
        order = src.get_property("stats").get_value("shard-order")
        state["elastic-order"] = (order == "elastic" if order is not None
                                  else state["elastic"])
        state["shuffle-buffer-bytes"] = src.get_property("shuffle-buffer-bytes")
    return state


def epoch_samples(src) -> int:
    """The samples of an epoch's global order (all ranks together)."""
    fingerprint = src.get_property("dataset-fingerprint")
    if fingerprint:
        return int(fingerprint.split(":", 1)[0])
    return src.get_property("num-samples") * src.get_property("num-shards")


def end_of_epoch(epoch: int, offset: int) -> Dict[str, Any]:
    """The position just after @epoch's last batch, inside its loop: the
    whole epoch consumed (@offset: its samples), its loop not yet ended. A
    resumed loader's next loop is the (empty) rest of @epoch, as for
    torchdata's StatefulDataLoader, and the caller's own epoch count, saved
    beside the state, stays in step."""
    return {"epoch": int(epoch), "offset": int(offset), "end_of_epoch": True}


def is_shards(src) -> bool:
    """Tar shards: elastic with their member index, else split in
    contiguous parts per rank (resumed on as many ranks only)."""
    # once started spdlsrc says which (its stats' shard-order)
    if src.get_property("stats").get_value("shard-order") is not None:
        return True
    return is_shards_location(src.get_property("location") or "")


def is_shards_location(location: str) -> bool:
    """Whether spdlsrc reads @location as tar shards: a brace pattern or a
    ".tar" name (".tar.gz", ".tgz": refused as compressed), unless it is a
    local folder that exists (taken as named)."""
    if not location.startswith(("http://", "https://", "s3://")) and \
            os.path.isdir(location):
        return False
    return location.split("?")[0].endswith((".tar", ".tar.gz", ".tgz")) or \
        is_shard_pattern(location)


def is_shard_pattern(location: str) -> bool:
    """WebDataset's brace pattern: train-{000000..000099}.tar"""
    return bool(re.search(r"\{\d+\.\.\d+\}", location))


def restore(src, state: Dict[str, Any], first_epoch: int,
            num_epochs: int) -> bool:
    """Sets spdlsrc @src (not yet started) to continue from @state.

    @first_epoch and @num_epochs are the pipeline's own; returns False when
    the state is past its last epoch (nothing is left to run)."""
    validate(src, state)
    epoch = state["epoch"]
    if num_epochs >= 0:
        left = first_epoch + num_epochs - epoch
        if left <= 0:
            return False
        src.set_property("num-epochs", left)
    src.set_property("start-epoch", epoch)
    src.set_property("start-index", 0)
    src.set_property("start-offset", state["offset"])
    return True


def validate(src, state: Dict[str, Any]) -> None:
    """Raises TypeError or ValueError when @state cannot continue in spdlsrc
    @src: not a state, or saved with settings that order samples otherwise."""
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict from state_dict(), not "
                        f"{type(state).__name__}")
    if state.get("version") != VERSION:
        raise ValueError(f"state version {state.get('version')!r} is not "
                         f"{VERSION}")
    for key in ("epoch", "offset"):
        if not isinstance(state.get(key), int) or state[key] < 0:
            raise ValueError(f"state[{key!r}] must be an int >= 0, not "
                             f"{state.get(key)!r}")
    if not isinstance(state.get("end_of_epoch", False), bool):
        raise ValueError(f"state['end_of_epoch'] must be True or False, not "
                         f"{state['end_of_epoch']!r}")
    if state.get("shards") and \
            not state.get("elastic-order", state.get("elastic", False)) and \
            state.get("world_size") != src.get_property("num-shards"):
        raise ValueError(
            f"state was saved on {state.get('world_size')} ranks with tar "
            "shards split in contiguous parts (spdlsrc elastic=false, or "
            "shards.idx and no shards.members next to the shards): they resume "
            "only on as many "
            f"(this pipeline has num-shards={src.get_property('num-shards')})")
    # states of shards saved before the elastic order have no "elastic":
    # their order is the contiguous split's
    if state.get("shards") and \
            state.get("elastic", False) != src.get_property("elastic"):
        raise ValueError(
            f"state was saved with spdlsrc elastic={state.get('elastic', False)!r}, "
            f"this pipeline has elastic={src.get_property('elastic')!r}: the "
            "order of the samples would differ")
    if state.get("shards") and not state.get("elastic", False) and \
            "shuffle-buffer-bytes" in state and \
            state["shuffle-buffer-bytes"] != src.get_property("shuffle-buffer-bytes"):
        raise ValueError(
            "state was saved with spdlsrc shuffle-buffer-bytes="
            f"{state['shuffle-buffer-bytes']!r}, this pipeline has "
            f"{src.get_property('shuffle-buffer-bytes')!r}: the order of the "
            "samples would differ")
    for name in _CHECKED:
        if name in state and state[name] != src.get_property(name):
            raise ValueError(
                f"state was saved with spdlsrc {name}={state[name]!r}, this "
                f"pipeline has {name}={src.get_property(name)!r}: the order "
                "of the samples would differ")


def check_dataset(state: Dict[str, Any], fingerprint) -> None:
    """Raises ValueError when @state was saved on another listing than the
    one spdlsrc now has (@fingerprint, "N:SHA256" or None)."""
    saved = state.get("dataset")
    if not saved or not fingerprint or saved == fingerprint:
        return
    then, now = saved.split(":", 1)[0], fingerprint.split(":", 1)[0]
    what = (f"{then} samples then, {now} now" if then != now else
            f"as many samples ({now}), but not the same: their paths, labels "
            "or the shards' member index differ")
    raise ValueError(
        f"the dataset changed since the state was saved ({what}): resumed, "
        "the epoch's order would differ and samples would repeat or never "
        "be seen; load_state_dict(state, check_dataset=False) resumes anyway")


def combine(states: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One state for all ranks: the earliest position of theirs.

    Ranks that skipped different numbers of bad samples stand at slightly
    different places of the epoch; resuming from the earliest loses no
    sample (a few may be seen twice)."""
    if not states:
        raise ValueError("no state to combine")
    return dict(min(states, key=lambda s: (s["epoch"], s["offset"])))
