"""Batches by duration (spdlsrc buckets, bucket-window, batch-duration,
batch-size) through spdlsrc ! spdlaudiodecode ! spdlbatch: every utterance
once an epoch, a batch never mixing buckets nor passing its seconds, the
same batches from the same seed, whole batches per rank, a resumed run
given exactly the rest, and skipped utterances never merging two batches."""
import json
import os

import numpy as np
import pytest
from gi.repository import Gst

import audiogen

RATE = 8000
N_FILES = 30


def durations():
    """0.25 to 1.7 s, in an order unlike their lengths"""
    return [0.25 + ((i * 7) % N_FILES) * 0.05 for i in range(N_FILES)]


@pytest.fixture(scope="module")
def speech(tmp_path_factory):
    """A NeMo manifest of WAV files of known lengths."""
    root = tmp_path_factory.mktemp("buckets")
    with open(root / "train.json", "w") as f:
        for i, d in enumerate(durations()):
            audiogen.make(str(root / f"u{i:02d}.wav"), "tone", RATE, d,
                          number=i)
            f.write(json.dumps({"audio_filepath": f"u{i:02d}.wav",
                                "duration": d, "text": f"utterance {i}"})
                    + "\n")
    return root


def launch(manifest, src="", batch="batch-size=64"):
    return (f"spdlsrc name=src location={manifest} {src} ! spdlaudiodecode "
            f"sample-rate={RATE} duration=0 ! spdlbatch {batch} ! "
            f"spdlappsink name=sink")


def run(description, pulls=None, start=None, timeout_s=60, padded=None):
    """The batches pulled, as (epoch, indices, lengths), until EOS or
    @pulls of them; spdlsrc's num-batches; the error (or None); the
    sink's resume-state after the last pull. @start: (epoch, offset).
    @padded: a list that gets each batch's padded slots."""
    pipeline = Gst.parse_launch(description)
    src, sink = pipeline.get_by_name("src"), pipeline.get_by_name("sink")
    if start:
        src.set_property("start-epoch", start[0])
        src.set_property("start-offset", start[1])
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    batches, error, waited = [], None, 0
    try:
        while pulls is None or len(batches) < pulls:
            msg = bus.pop_filtered(Gst.MessageType.ERROR)
            if msg:
                error = msg.parse_error()[0].message
                break
            sample = sink.emit("try-pull-batch", Gst.SECOND)
            if sample is None:
                if sink.get_property("eos"):
                    # a source's fatal flow error ends the stream too
                    msg = bus.pop_filtered(Gst.MessageType.ERROR)
                    error = msg.parse_error()[0].message if msg else None
                    break
                waited += 1
                assert waited < timeout_s, "pipeline timed out"
                continue
            buf = sample.get_buffer()
            if buf is None:             # an epoch's end
                continue
            meta = buf.get_custom_meta("GstSpdlBatchMeta").get_structure()
            st = sample.get_caps().get_structure(0)
            dims = [[int(x) for x in d.split(":")] for d in
                    st.get_value("dimensions").split(",")]
            # tensors: audio, labels, start, lengths (int64 [B])
            mem = buf.peek_memory(3)
            ok, info = mem.map(Gst.MapFlags.READ)
            assert ok
            lengths = np.frombuffer(info.data, "<i8")[:dims[3][0]].copy()
            mem.unmap(info)
            indices = list(meta.get_value("indices"))
            if padded is not None:
                padded.append(meta.get_value("padded"))
            assert len(indices) == dims[0][-1]
            batches.append((meta.get_value("epoch"), indices,
                            lengths.tolist()))
        state = sink.get_property("resume-state")
        resume = (state.get_value("epoch"), state.get_value("offset")) \
            if state else None
        return batches, src.get_property("num-batches"), error, resume
    finally:
        pipeline.set_state(Gst.State.NULL)


def buckets_of(ds, n_buckets):
    """spdlsrc's rule: boundaries at the (k * n / B)-th smallest duration"""
    s = sorted(ds)
    bounds = [s[k * len(s) // n_buckets] for k in range(1, n_buckets)]
    return [sum(b <= d for b in bounds) for d in ds]


def by_epoch(batches):
    out = {}
    for epoch, indices, lengths in batches:
        out.setdefault(epoch, []).append((indices, lengths))
    return out


def test_batches_of_one_bucket_within_their_seconds(speech):
    ds = durations()
    bucket = buckets_of(ds, 3)
    batches, num_batches, error, _ = run(launch(
        speech / "train.json", "shuffle=true seed=3 num-epochs=2 buckets=3 "
        "bucket-window=10 batch-duration=2.5"))
    assert error is None
    epochs = by_epoch(batches)
    assert sorted(epochs) == [0, 1]
    assert num_batches == len(epochs[0])
    for epoch, got in epochs.items():
        seen = [i for indices, _ in got for i in indices]
        assert sorted(seen) == list(range(N_FILES)), "each utterance once"
        for indices, lengths in got:
            assert len({bucket[i] for i in indices}) == 1, indices
            assert len(indices) == 1 or sum(ds[i] for i in indices) <= 2.5
            # whole utterances, padded to the batch's longest
            assert lengths == [round(ds[i] * RATE) for i in indices]
    assert [i for i, _ in epochs[0]] != [i for i, _ in epochs[1]]
    # buckets keep padding small: a batch spans less than the whole range
    spread = [max(ds[i] for i in ix) - min(ds[i] for i in ix)
              for ix, _ in epochs[0]]
    assert max(spread) < (max(ds) - min(ds)) / 2


def test_same_seed_same_batches_other_seed_others(speech):
    desc = launch(speech / "train.json", "shuffle=true seed=5 buckets=2 "
                  "batch-duration=3")
    a = run(desc)[0]
    assert a == run(desc)[0]
    other = run(launch(speech / "train.json", "shuffle=true seed=6 "
                       "buckets=2 batch-duration=3"))[0]
    assert [i for _, i, _ in a] != [i for _, i, _ in other]


def test_batches_by_count(speech):
    bucket = buckets_of(durations(), 4)
    batches, num_batches, error, _ = run(launch(
        speech / "train.json", "shuffle=true seed=1 buckets=4 batch-size=3",
        "batch-size=3"))
    assert error is None and num_batches == len(batches)
    for _, indices, _ in batches:
        assert 1 <= len(indices) <= 3
        assert len({bucket[i] for i in indices}) == 1
    assert sorted(i for _, ix, _ in batches for i in ix) == \
        list(range(N_FILES))


@pytest.mark.parametrize("world,drop", [(2, False), (3, False), (4, True)])
def test_ranks_get_whole_batches_equally(speech, world, drop):
    src = "shuffle=true seed=2 buckets=3 batch-duration=2.5"
    whole = [tuple(ix) for _, ix, _ in run(launch(speech / "train.json",
                                                  src))[0]]
    ranks = []
    for rank in range(world):
        got, num_batches, error, _ = run(launch(
            speech / "train.json", f"{src} num-shards={world} "
            f"shard-index={rank} drop-uneven={str(drop).lower()}"))
        assert error is None and num_batches == len(got)
        ranks.append([tuple(ix) for _, ix, _ in got])
    share = len(whole) // world if drop else -(-len(whole) // world)
    assert [len(r) for r in ranks] == [share] * world
    # rank r takes batches r, r + W, ... (past the end: the first again)
    for rank, got in enumerate(ranks):
        assert got == [whole[(rank + k * world) % len(whole)]
                       for k in range(share)]


def test_resume_gives_exactly_the_rest(speech):
    desc = launch(speech / "train.json", "shuffle=true seed=9 num-epochs=2 "
                  "buckets=3 bucket-window=12 batch-duration=2")
    whole = run(desc)[0]
    first_epoch = sum(1 for e, _, _ in whole if e == 0)
    for k in (1, 4, first_epoch - 1, first_epoch, first_epoch + 2):
        head, _, error, resume = run(desc, pulls=k)
        assert error is None and head == whole[:k]
        rest, _, error, _ = run(desc.replace("num-epochs=2", "num-epochs=" +
                                             str(2 - resume[0])),
                                start=resume)
        assert error is None
        assert rest == whole[k:], f"resumed after {k} batches at {resume}"


def test_resume_inside_a_batch_is_refused(speech):
    desc = launch(speech / "train.json", "shuffle=true seed=9 buckets=3 "
                  "batch-duration=2")
    whole = run(desc)[0]
    inside = len(whole[0][1]) + 1 if len(whole[1][1]) > 1 else 1
    _, _, error, _ = run(desc, start=(0, inside))
    assert error and "inside a batch" in error


def test_skipped_utterances_never_merge_batches(speech, tmp_path):
    """A missing file (spdlsrc skips it) and an undecodable one (the
    decoder skips it), wherever they fall in their batches: the others
    keep their batches, smaller by them."""
    ds = durations()
    rows = [json.loads(line) for line in open(speech / "train.json")]
    for row in rows:
        row["audio_filepath"] = str(speech / row["audio_filepath"])
    with open(tmp_path / "good.json", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    src = "shuffle=true seed=4 buckets=2 batch-duration=2.5"
    reference = run(launch(tmp_path / "good.json", src))[0]
    # the last utterance of two batches, the first of another
    gone = {reference[0][1][-1], reference[2][1][-1], reference[4][1][0]}
    bad = sorted(gone)
    rows[bad[0]]["audio_filepath"] = str(tmp_path / "missing.wav")
    for i in bad[1:]:
        path = tmp_path / f"garbage{i}.wav"
        path.write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunk" + os.urandom(64))
        rows[i]["audio_filepath"] = str(path)
    with open(tmp_path / "bad.json", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    got, _, error, _ = run(launch(tmp_path / "bad.json", src))
    assert error is None
    expected = [[i for i in ix if i not in gone] for _, ix, _ in reference]
    assert [ix for _, ix, _ in got] == [ix for ix in expected if ix]
    assert all(len(ix) == 1 or sum(ds[i] for i in ix) <= 2.5
               for _, ix, _ in got)


def test_a_sample_without_duration_is_an_error(tmp_path):
    (tmp_path / "a").mkdir()
    audiogen.make(str(tmp_path / "a" / "x.wav"), "tone", RATE, 0.5)
    _, _, error, _ = run(launch(tmp_path, "extensions=wav buckets=2 "
                                "batch-duration=5"))
    assert error and "has no known duration" in error and "x.wav" in error


def test_buckets_need_a_batch_size(speech):
    _, _, error, _ = run(launch(speech / "train.json", "buckets=2"))
    assert error and "batch-size" in error and "batch-duration" in error


def test_spdlbatch_smaller_than_the_batches_is_an_error(speech):
    _, _, error, _ = run(launch(speech / "train.json", "buckets=2 "
                                "batch-duration=10", "batch-size=2"))
    assert error and "smaller than spdlsrc's batches" in error


def test_resume_on_another_number_of_ranks(speech):
    """Saved on rank 0 of 2 after k batches (every rank took k): the first
    2k batches of the epoch are consumed; one rank resumed there takes the
    rest, each batch once."""
    src = "shuffle=true seed=8 buckets=3 batch-duration=2"
    whole = run(launch(speech / "train.json", src))[0]
    for k in (1, 3):
        _, _, error, resume = run(launch(
            speech / "train.json", f"{src} num-shards=2 shard-index=0"),
            pulls=k)
        assert error is None
        assert resume == (0, sum(len(ix) for _, ix, _ in whole[:2 * k]))
        rest, _, error, _ = run(launch(speech / "train.json", src),
                                start=resume)
        assert error is None and rest == whole[2 * k:]


def test_a_rank_short_of_a_batch_is_padded(speech, tmp_path):
    """Every utterance of one of rank 0's batches undecodable: the rank
    still gives as many batches as the others (DDP would wait for it
    otherwise), the last a copy of its last real one, all slots padded."""
    rows = [json.loads(line) for line in open(speech / "train.json")]
    for row in rows:
        row["audio_filepath"] = str(speech / row["audio_filepath"])
    with open(tmp_path / "good.json", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    src = "shuffle=true seed=4 buckets=3 batch-duration=2.5 num-shards=2"
    reference, num_batches, error, _ = run(launch(tmp_path / "good.json",
                                                  src))
    assert error is None and num_batches == len(reference)
    gone = reference[1][1]
    for i in gone:
        path = tmp_path / f"garbage{i}.wav"
        path.write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunk" + os.urandom(64))
        rows[i]["audio_filepath"] = str(path)
    with open(tmp_path / "bad.json", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    padded = []
    got, _, error, _ = run(launch(tmp_path / "bad.json", src),
                           padded=padded)
    assert error is None
    assert len(got) == len(reference)
    assert got[:-1] == reference[:1] + reference[2:]
    assert got[-1] == got[-2] and padded[-1] == len(got[-1][1])
    assert padded[:-1] == [0] * (len(got) - 1)
