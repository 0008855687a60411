"""The Loader: a pipeline ending in spdlappsink, one epoch per loop."""
from __future__ import annotations

import inspect
import operator
import os
import re
import threading
import time
from collections.abc import Sequence
from typing import Any, Dict, Iterator, List, Optional, Tuple

from gi.repository import GLib, Gst

from . import _state
from ._process import (check_can_start, exiting, keep_forever,
                       pipeline_started, pipeline_stopped, track_loader)
from ._buslog import EPOCH_END, BusLog, logger
from ._secrets import masked
from .batch import Batch, host_tensors, in_field_order, sample_batch
from .errors import LoaderError

_CUDA_FEATURE = "memory:SpdlCUDA"
_OUTPUTS = ("numpy", "torch")
# skip reasons an element's error-counts list that it never counts
_SKIP_REASONS_NOT = {
    "spdldecode": ("no-video", "no-audio", "too-short", "timeout",
                   "too-many-decode-frames", "too-long", "past-end",
                   "bad-duration"),
    "spdlaudiodecode": ("no-video", "not-jpeg", "recovered",
                        "too-many-decode-frames"),
    "spdlvideodecode": ("not-jpeg", "recovered", "too-long"),
}
# the elements' stats fields that are times, in nanoseconds
_NS_STATS = frozenset(("busy", "mean", "p90", "p99", "elapsed", "cpu",
                       "cpu-mean", "wait-total", "wait-max", "wait-last"))
_SHARD_REASONS = ("truncated-shard", "corrupt-member", "no-image",
                  "unsupported-image", "no-label", "bad-label")
_REMOTE_REASONS = ("http-error", "timeout")
# a sample whose record's field (fields=) is absent, bad or too large
_FIELD_REASONS = ("missing-field", "bad-field", "field-too-large")
# what to use instead of torch.utils.data.DataLoader's arguments
_SAMPLER = ("the order is spdlsrc's: shuffle= and seed= (a new order each "
            "epoch from (seed, epoch)), set_epoch() as DistributedSampler's, "
            "ranks= (or RANK/WORLD_SIZE under torchrun) to split it")
_DATALOADER_ARGS = {
    "num_workers": "decoding runs on the pipeline's native threads, not in "
                   "worker processes: threads= (recipe loaders) or the "
                   "decoder's threads property sets how many",
    "pin_memory": "device='cuda:N' (ImageLoader) has batches uploaded by "
                  "spdlcudaupload and handed out as CUDA tensors",
    "collate_fn": "spdlbatch collates: a batch is a tuple (images, labels) "
                  "with attributes (epoch, indices, paths, ...): reshape it "
                  "in the loop",
    "worker_init_fn": "there are no worker processes; the shuffle and the "
                      "random crops and flips follow seed=",
    "prefetch_factor": "batches are prepared ahead by the pipeline "
                       "(spdlappsink max-buffers, 4 by default)",
    "persistent_workers": "the pipeline stays up between epochs already",
    "sampler": _SAMPLER,
    "batch_sampler": _SAMPLER,
    "generator": "the shuffle and the random augmentations follow seed=",
    "transform": "the recipe's arguments (size, scale, ratio, flip, dtype, "
                 "mean, std) transform in the pipeline; more augmentation "
                 "goes on the batch in the loop, then spdlgst.normalize "
                 "(docs/plugins/spdlgst.md, Custom augmentation)",
    "timeout": "there are no workers to wait on: remote reads take "
               "src_properties={'http-timeout': ms}",
}


def _no_plugin_hint(message: str) -> str:
    """Where GStreamer has no spdl plugin at all (the source tree's spdlgst
    on PYTHONPATH, which carries none, without GST_PLUGIN_PATH): how to
    give it one."""
    if 'no element "spdl' not in message or \
            Gst.Registry.get().find_plugin("spdl") is not None:
        return ""
    return (f": GStreamer found no spdl plugin and spdlgst at "
            f"{os.path.dirname(os.path.abspath(__file__))} carries none (the "
            "source tree, or a meson install): set GST_PLUGIN_PATH to the "
            "build tree's gst/spdl or the installed plugin folder, or pip "
            "install gst-spdl (README: With pip)")


def _parse_launch(line: str) -> Gst.Pipeline:
    """Gst.parse_launch, where an out-of-range value (batch-size=0) is an
    error naming the property: GObject would only warn on stderr and keep
    the default."""
    refused = []

    def on_warning(domain, level, message, *user_data):
        refused.append(message)

    levels = GLib.LogLevelFlags.LEVEL_WARNING | GLib.LogLevelFlags.LEVEL_CRITICAL
    handler = GLib.log_set_handler("GLib-GObject", levels, on_warning, None)
    try:
        pipeline = Gst.parse_launch(line)
    except GLib.Error as e:
        raise LoaderError(f"could not build the pipeline: {e.message}"
                          + _no_plugin_hint(e.message)) from None
    finally:
        GLib.log_remove_handler("GLib-GObject", handler)
    if refused:
        pipeline.set_state(Gst.State.NULL)
        raise LoaderError("could not build the pipeline: " + "; ".join(refused))
    return pipeline


def _src_makes_batches(src: Gst.Element) -> bool:
    """Whether spdlsrc cuts the batches itself (buckets, batch-duration)."""
    return src.find_property("buckets") is not None and (
        src.get_property("buckets") > 0 or
        src.get_property("batch-duration") > 0)


class Samples(Sequence):
    """A listing's (path, label) pairs, read from spdlsrc when indexed:
    millions of samples are not copied into Python at once."""

    def __init__(self, src: Gst.Element):
        self._src = src
        fingerprint = src.get_property("dataset-fingerprint")
        if fingerprint is None or _state.is_shards(src):
            raise TypeError("samples are listed for folders and manifests "
                            "(tar shards name each sample in its metadata)")
        self._n = int(fingerprint.split(":", 1)[0])

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        index = operator.index(index)
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(f"sample index {index} out of range "
                             f"(0..{self._n - 1})")
        s = self._src.emit("get-sample", index)
        if s is None:
            raise LoaderError("the listing is gone (the loader is closed)")
        path = s.get_value("path")
        if s.has_field("path-bytes"):
            # not UTF-8: os.fsdecode's str (surrogateescape), which opens
            # the file, as torchvision's ImageFolder lists it
            path = os.fsdecode(s.get_value("path-bytes").get_data())
        return path, s.get_value("label")


class Loader:
    """Iterates over the batches a pipeline ending in spdlappsink produces.

    Each ``for`` loop over the loader yields one epoch, as with PyTorch's
    DataLoader: a loop that ends early (``break``) leaves the rest of its
    epoch behind, and the next loop starts at the first batch of the next
    epoch (see :meth:`__iter__`). The pipeline stays up between epochs.

    ``output`` is "numpy" (default) or "torch" (torch is imported only
    then): a launch line may end in any tensors, for any framework, and
    numpy costs no torch import; :class:`ImageLoader`, made for PyTorch
    training, defaults to torch. A line without spdlsrc ``num-epochs`` runs
    one epoch (spdlsrc's default): later loops yield nothing, said once as
    a warning on the ``spdlgst`` logger; ``num-epochs=-1`` runs until the
    loader is closed. Under torchrun, RANK and WORLD_SIZE set spdlsrc's
    shard-index and num-shards unless the pipeline sets them
    (``num-shards=1`` in the line: all of the data on every rank), and
    LOCAL_WORLD_SIZE gives each rank's decoding element (threads left at
    0) its share of the CPUs. Element warnings go to the ``spdlgst``
    logger: at most ``log_limit`` per element and epoch one by one, then a
    summary per epoch with the counts of all of them.
    ``launch_line``, the repr, errors and warnings show credentials masked
    (``s3-secret-key=***``, a presigned URL's signature; docs/remote.md):
    the line as given reaches only the parser.
    """

    def __new__(cls, *args, **kwargs):
        for name in kwargs:
            # a subclass may take one of these names for itself
            if name in _DATALOADER_ARGS and \
                    name not in inspect.signature(cls.__init__).parameters:
                raise TypeError(
                    f"{cls.__name__}() takes no {name} (a DataLoader "
                    f"argument): {_DATALOADER_ARGS[name]}")
        return super().__new__(cls)

    def __init__(self, pipeline: str, *, sink: Optional[str] = "sink",
                 output: str = "numpy", poll_interval: float = 0.1,
                 log_limit: int = 20):
        if not isinstance(pipeline, str):
            raise TypeError(f"pipeline must be a launch line (str), not "
                            f"{type(pipeline).__name__}")
        if output not in _OUTPUTS:
            raise ValueError(f"output must be 'numpy' or 'torch', not {output!r}")
        if isinstance(log_limit, bool) or not isinstance(log_limit, int) or log_limit < 0:
            raise ValueError(f"log_limit must be an int >= 0, not {log_limit!r}")
        self._foreign = False        # made in the parent of a fork
        self._abandoned = False      # interrupted mid state change
        self._closed = True          # until the pipeline is built
        try:
            check_can_start()
        except RuntimeError as e:
            raise LoaderError(str(e)) from None
        Gst.init(None)
        # what users print and log: credentials masked (_secrets); the line
        # as given reaches only the parser
        self.launch_line = masked(pipeline)
        self.output = output
        self._poll = int(poll_interval * Gst.SECOND)
        self.pipeline = _parse_launch(pipeline)
        self.sink = self.pipeline.get_by_name(sink) if sink else None
        if self.sink is None:
            self.sink = self._find("spdlappsink")
        if self.sink is None:
            self.pipeline.set_state(Gst.State.NULL)
            raise LoaderError("the pipeline has no spdlappsink "
                              "(end it with '! spdlappsink name=sink')")
        self._src = self._find("spdlsrc")
        self._apply_distributed_env(pipeline)
        self._bus = self.pipeline.get_bus()
        self._buslog = BusLog(self._bus, log_limit, LoaderError)
        self._started = False
        self._eos = False
        self._closed = False
        # the error the pipeline stopped on: every later use raises it again
        self._failure: Optional[LoaderError] = None
        self._torch = None
        if output == "torch":
            self._import_torch()     # now, not in the first epoch's timing
        self._wait = 0.0
        self._batches = 0
        self._loop = 0               # which for-loop may pull (see __iter__)
        self._loop_ended_by = ""     # what ended the loops before it
        self._epoch: Optional[int] = None   # epoch of the last batch
        self._epoch_open = False     # batches of an epoch pulled, not its end
        self._in_epoch = 0           # batches of that epoch pulled
        # (epoch, offset) where the loader stands while the sink's
        # resume-state still names an older position: a restart at the next
        # epoch (until its first batch), past the last epoch, a state
        # restored past it
        self._end_position: Optional[Tuple[int, int]] = None
        # (epoch, offset) of a state restored just after an epoch's last
        # batch (taken inside its loop): the next loop is that epoch's rest,
        # empty, and the pipeline (spdlsrc) already stands at the next one
        self._epoch_done: Optional[Tuple[int, int]] = None
        # skips of epochs left mid-way (no summary came for them)
        self._skipped_unsummarized: Dict[str, int] = {}
        self._said_over = False      # the "no more batches" warning given
        self._past_end = False       # set before the start past the last epoch
        track_loader(self)

    # -- set-up -------------------------------------------------------------

    def _find(self, factory: str) -> Optional[Gst.Element]:
        it = self.pipeline.iterate_recurse()
        while True:
            ok, element = it.next()
            if ok != Gst.IteratorResult.OK:
                return None
            f = element.get_factory()
            if f is not None and f.get_name() == factory:
                return element

    def _apply_distributed_env(self, launch: str) -> None:
        self._share_cpus(launch)
        rank, world = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
        if self._src is None or rank is None or world is None:
            return
        taken = []
        sets_world = re.search(r"\bnum-shards\s*=", launch)
        # num-shards=1 in the line: not split, whatever the rank
        if not re.search(r"\bshard-index\s*=", launch) and not \
                (sets_world and self._src.get_property("num-shards") == 1):
            self._src.set_property("shard-index", int(rank))
            taken.append("RANK")
        if not sets_world:
            self._src.set_property("num-shards", int(world))
            taken.append("WORLD_SIZE")
        if taken:
            logger.info(
                "rank %d of %d from the environment (%s): each epoch is split "
                "between the ranks; a loader that must read all of the data "
                "(evaluation on one rank) takes ranks=None, or num-shards=1 "
                "in its launch line",
                self._src.get_property("shard-index"),
                self._src.get_property("num-shards"), ", ".join(taken))

    def _share_cpus(self, launch: str) -> None:
        """Under torchrun, LOCAL_WORLD_SIZE ranks share this machine: each
        decoding element left at threads=0 (one per CPU) gets its share of
        the CPUs, so that the ranks together run one decoding thread per
        CPU rather than one per CPU each. A rank already bound to a part
        of the machine (taskset, numactl, SLURM's --cpu-bind) keeps that
        part's count."""
        try:
            local = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
        except ValueError:
            return
        if local < 2:
            return
        cpus = len(os.sched_getaffinity(0))
        if cpus >= (os.cpu_count() or cpus):
            cpus = max(1, cpus // local)
        for factory in ("spdldecode", "spdlvideodecode", "spdlaudiodecode"):
            element = self._find(factory)
            if element is not None and element.get_property("threads") == 0:
                element.set_property("threads", cpus)

    def start(self) -> None:
        """Starts the pipeline (done by the first iteration otherwise)."""
        if self._foreign:
            raise LoaderError(
                "this loader was made in the parent of a fork: its pipeline's "
                "threads are not in this process; make a new loader here")
        if self._closed:
            raise LoaderError("the loader is closed")
        self._raise_failure()
        if self._started:
            return
        self._started = True
        if self._past_end:          # set_epoch() past the last epoch
            self._eos = True
            return
        self._play()

    def _running(self) -> bool:
        """Its pipeline's threads may be at work (see spdlgst._process)."""
        return (self._started and not self._closed and not self._foreign
                and not self._eos)

    def _forked(self) -> None:
        """In a forked child: inert, its threads are the parent's; its
        pipeline never disposed here (disposing a running pipeline joins
        them)."""
        self._foreign = True
        keep_forever(getattr(self, "pipeline", None))

    def _play(self) -> None:
        pipeline_started()
        # a pull-batch before the start (None: nothing yet) makes the sink
        # hold the pipeline 4 epochs ahead at most from its first epoch
        self.sink.emit("try-pull-batch", 0)
        if self._set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
            self._drain()
            self._failure = LoaderError("the pipeline could not start")
            raise self._failure

    def _set_state(self, state: Gst.State) -> Gst.StateChangeReturn:
        """The pipeline's set_state, on a thread of its own and waited for
        in short steps, so that Ctrl-C (KeyboardInterrupt) stops it: a
        start lists the dataset or reads and learns a shard index, which
        takes long on a slow server, and a thread inside a C call does not
        see signals. Interrupted, spdlsrc is cancelled (its remote reads
        end, the state change fails) and given a second; a state change
        still under way then (a local listing) is left to the process's
        end, and the loader is never used again."""
        result = []
        worker = threading.Thread(
            target=lambda: result.append(self.pipeline.set_state(state)),
            name="spdlgst-set-state", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.05)
        except KeyboardInterrupt:
            self._interrupt(worker)
            raise
        return result[0]

    def _interrupt(self, worker: threading.Thread) -> None:
        """KeyboardInterrupt during a state change on @worker."""
        self._failure = LoaderError("interrupted (KeyboardInterrupt) while "
                                    "the pipeline started")
        if self._src is not None:
            self._src.emit("cancel")
        deadline = time.monotonic() + 1.0
        try:
            while worker.is_alive() and time.monotonic() < deadline:
                worker.join(0.05)
        except KeyboardInterrupt:
            pass
        if worker.is_alive():
            # it holds the pipeline's state lock: closing would wait for it
            self._abandoned = True
            keep_forever(self.pipeline)
            logger.debug("interrupted: the state change under way is left "
                         "to the process's end")

    def _wait_started(self, src: Gst.Element) -> None:
        """Waits (10 s at most, in Ctrl-C-able steps) for @src to reach
        its state: it lists the dataset when it starts."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            ret, _, _ = src.get_state(50 * Gst.MSECOND)
            if ret != Gst.StateChangeReturn.ASYNC:
                return

    def _drain(self) -> None:
        """The bus's messages; an error among them stops the loader."""
        try:
            self._buslog.drain()
        except LoaderError as e:
            self._failure = e
            raise

    def _raise_failure(self) -> None:
        """After an error, the same error: the pipeline that stopped on it
        would only report a failed state change or stream error."""
        if self._failure is not None:
            raise LoaderError(f"{self._failure} (this loader stopped on "
                              "that error; make a new one to retry)")

    # -- iteration ----------------------------------------------------------

    def __iter__(self) -> Iterator[Batch]:
        """Yields the batches of one epoch.

        A new loop while an earlier one stopped in the middle of its epoch
        first leaves that epoch: when at most a few batches are left (those
        already decoded and queued), they are pulled and dropped; otherwise
        the pipeline restarts at the next epoch (stopped, spdlsrc's
        start-epoch set, started again): nothing more of the old epoch is
        read or decoded, and the shuffle and the random crops of the next
        epoch are the same as without the break (they depend only on seed,
        epoch and sample). An older iterator stops when a newer loop
        starts: its next use raises RuntimeError saying so (``zip(loader,
        loader)`` raises, rather than yield nothing).
        """
        self._loop += 1
        self._loop_ended_by = "a newer loop over the same loader (iter())"
        return self._epoch_batches(self._loop)

    def _check_loop(self, loop: int) -> bool:
        """Whether @loop is still the one that may pull; False once the
        loader is closed; raises for a loop a newer one (or set_epoch())
        ended, which would otherwise stop short without a word."""
        if loop == self._loop:
            return True
        if self._closed:
            return False
        raise RuntimeError(
            f"this iterator was ended by {self._loop_ended_by}: a loader runs "
            "one loop at a time, each loop (iter()) starting the next epoch, "
            "so two iterators over one loader (zip(loader, loader), nested "
            "loops, a kept iter(loader)) cannot both run; iterate one loop at "
            "a time, or make a second loader for a second stream of batches")

    def _epoch_batches(self, loop: int) -> Iterator[Batch]:
        if not self._check_loop(loop):
            return
        self.start()
        if self._epoch_done is not None:
            # restored after the last batch of an epoch whose loop had not
            # ended: this loop ends it (nothing left), as the saved run's did
            self._end_position = (self._epoch_done[0] + 1, 0)
            self._epoch_done = None
            return
        if self._epoch_open:
            self._leave_epoch()
        yielded = False
        while self._check_loop(loop):
            batch = self._next_batch()
            if batch is None:
                break
            yielded = True
            yield batch
        if not yielded and self._eos and not self._said_over and \
                loop == self._loop:
            self._said_over = True
            self._warn_epochs_over()

    def _warn_epochs_over(self) -> None:
        """A loop after the last epoch yields nothing: said once, since a
        launch line without num-epochs runs one epoch (spdlsrc's default)
        where a training loop expects one per loop."""
        last = None
        if self._src is not None:
            # start-epoch + num-epochs: a resume moves the start and shortens
            # num-epochs (see _move_start), the last epoch stays
            epochs = self._src.get_property("num-epochs")
            if epochs > 0:
                last = self._src.get_property("start-epoch") + epochs - 1
        logger.warning(
            "no more batches: the pipeline ran all its epochs%s; each later "
            "loop yields nothing (spdlsrc num-epochs=-1 runs until the "
            "loader is closed, as ImageLoader(epochs=None) does)",
            f" (the last: epoch {last})" if last is not None else "")

    def _pull(self) -> Optional[Gst.Sample]:
        """The next batch's sample; None at the end of an epoch or at EOS."""
        while not self._eos:
            started = time.perf_counter()
            sample = self.sink.emit("try-pull-batch", self._poll)
            self._wait += time.perf_counter() - started
            self._drain()
            if sample is None:
                if self.sink.get_property("eos"):
                    self._eos = True
                    self._epoch_open = False
                    self._buslog.end_of_stream()
                continue
            if sample.get_buffer() is None:
                info = sample.get_info()
                if info is not None and info.get_name() == EPOCH_END:
                    self._epoch_open = False
                    self._in_epoch = 0
                    self._buslog.end_of_epoch(info.get_value("epoch"))
                    return None
                continue
            self._epoch_open = True
            self._in_epoch += 1
            return sample
        return None

    def _next_batch(self) -> Optional[Batch]:
        sample = self._pull()
        if sample is None:
            return None
        self._batches += 1
        self._end_position = None       # the sink's position holds again
        batch = self._convert(sample)
        self._epoch = batch.epoch
        order = getattr(self, "_field_order", None)
        if order is not None:
            # the recipe loaders' fields=: the tuple in the order asked
            batch = in_field_order(batch, *order)
        return batch

    def _leave_epoch(self) -> None:
        """Skips what an abandoned loop left of its epoch."""
        left = self._batches_left()
        queued = self.sink.get_property("max-buffers") + 1
        if left is not None and left > queued and self._epoch is not None:
            self._restart_at(self._epoch + 1)
            return
        while self._pull() is not None:
            pass

    def _batches_left(self) -> Optional[int]:
        if self._src is None or self._find("spdlbatch") is None:
            return None
        return len(self) - self._in_epoch

    def _restart_at(self, epoch: int) -> None:
        """Restarts the pipeline at the first sample of @epoch."""
        self._drain()
        # what the elements skipped of the epoch left behind: their counts
        # less what their per-epoch summaries said (they start again at 0)
        for element, totals in self._element_error_counts().items():
            summarized = self._buslog.run_counts.get(element, {})
            for reason, n in totals.items():
                left = n - summarized.get(reason, 0)
                if left > 0:
                    self._skipped_unsummarized[reason] = (
                        self._skipped_unsummarized.get(reason, 0) + left)
        self._buslog.run_counts.clear()
        # NULL, not READY: a sink flushes its queue only when it stops
        self.pipeline.set_state(Gst.State.NULL)
        pipeline_stopped()
        self._epoch_open = False
        self._in_epoch = 0
        if not self._move_start(epoch):
            self._eos = True
            self._end_position = (epoch, 0)
            return
        # a run that had ended goes on (set_epoch back into the run)
        self._eos = self._said_over = False
        # where the live loader stands until the new epoch's first batch
        self._end_position = (epoch, 0)
        logger.debug("restarting at epoch %d", epoch)
        self._play()

    def _move_start(self, epoch: int) -> bool:
        """spdlsrc (stopped) starts at @epoch's first sample, its last
        epoch kept; False when @epoch is past it."""
        src = self._src
        epochs = src.get_property("num-epochs")
        if epochs >= 0:
            left = src.get_property("start-epoch") + epochs - epoch
            if left <= 0:
                return False
            src.set_property("num-epochs", left)
        src.set_property("start-epoch", epoch)
        src.set_property("start-index", 0)
        src.set_property("start-offset", 0)
        return True

    def set_epoch(self, epoch: int) -> None:
        """The next loop yields epoch @epoch, for code written for
        DistributedSampler (``sampler.set_epoch(e)`` before each epoch's
        loop). The usual call, the epoch the next loop would yield anyway,
        changes nothing; another epoch restarts the pipeline at its first
        sample (its order and crops, from (seed, epoch), are those of that
        epoch). Call it before a loop, not inside one."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"epoch must be an int >= 0, not {epoch!r}")
        if self._src is None:
            raise TypeError("set_epoch needs spdlsrc in the pipeline")
        if epoch == self._next_epoch():
            return
        if self._epoch_done is not None:
            done, self._epoch_done = self._epoch_done[0], None
            if epoch == done + 1:
                return          # spdlsrc starts there already
        offset = self._src.get_property("start-offset")
        if not self._batches and offset > 0:
            # a state restored mid-epoch, then another epoch asked for
            logger.warning(
                "set_epoch(%d): the restored position (epoch %d, offset %d) "
                "is left: the rest of that epoch is not read", epoch,
                self._src.get_property("start-epoch"), offset)
        if not self._started:
            # the pipeline starts where spdlsrc's start properties say
            self._past_end = not self._move_start(epoch)
            self._end_position = (epoch, 0) if self._past_end else None
            return
        self._loop += 1             # an iterator of the old epoch stops
        self._loop_ended_by = f"set_epoch({epoch}) (call it before a loop)"
        self._restart_at(epoch)

    def _next_epoch(self) -> int:
        """The epoch the next loop starts."""
        if self._epoch_done is not None:
            return self._epoch_done[0]
        if self._end_position is not None:
            return self._end_position[0]
        if self._epoch is None:
            return self._src.get_property("start-epoch")
        return self._epoch + 1

    def _convert(self, sample: Gst.Sample) -> Batch:
        if sample.get_caps().get_features(0).contains(_CUDA_FEATURE):
            # device memory: spdlgst.cuda makes it ready on torch's stream
            from .cuda import device_tensors

            tensors = device_tensors(sample, self._import_torch(), LoaderError)
        else:
            torch = self._import_torch() if self.output == "torch" else None
            tensors = host_tensors(sample, torch)
        return sample_batch(sample, tensors)

    def _import_torch(self):
        if self._torch is None:
            import torch

            self._torch = torch
        return self._torch

    # -- information --------------------------------------------------------

    def __len__(self) -> int:
        """Batches of a whole epoch of the listed samples (starts the
        pipeline to list them); for videos and audio files, of their clips
        (clips-per-video, clips-per-file each).

        With spdlsrc num-shards >= 2 every rank yields this many per epoch
        (skipped samples padded, spdlbatch pad-short-epochs); on one rank
        skipped samples can make an epoch's batches fewer, and a resumed
        epoch yields only its rest. With spdlsrc ``buckets`` or
        ``batch-duration`` spdlsrc makes the batches: its ``num-batches``,
        those of the first epoch (batches by seconds may number a few
        more or fewer in later epochs)."""
        self.start()
        src, batch = self._src, self._find("spdlbatch")
        if src is None or batch is None:
            raise TypeError("length needs spdlsrc and spdlbatch")
        # spdlsrc lists when it reaches PAUSED; not the whole pipeline's
        # preroll, which epochs without a batch never complete
        self._wait_started(src)
        if _src_makes_batches(src):
            # buckets or batch-duration: spdlsrc's own count of its batches
            return src.get_property("num-batches")
        # a video or audio file gives several clips, each a batch slot
        n = src.get_property("num-samples") * self._clips_per_sample()
        size = batch.get_property("batch-size")
        return n // size if batch.get_property("drop-last") else -(-n // size)

    def _clips_per_sample(self) -> int:
        """Clips spdlvideodecode or spdlaudiodecode make of each sample."""
        for factory, prop in (("spdlvideodecode", "clips-per-video"),
                              ("spdlaudiodecode", "clips-per-file")):
            element = self._find(factory)
            if element is not None:
                if factory == "spdlaudiodecode" and \
                        element.get_property("duration") == 0:
                    return 1        # whole files: one clip each
                return element.get_property(prop)
        return 1

    def _listed_src(self) -> Gst.Element:
        """spdlsrc once it has listed the dataset (starts the pipeline)."""
        if self._src is None:
            raise TypeError("the dataset's listing needs spdlsrc")
        self.start()
        self._wait_started(self._src)
        return self._src

    @property
    def classes(self) -> Optional[List[str]]:
        """An ImageFolder's class names, sorted: label i is classes[i], as
        torchvision's ``ImageFolder.classes`` (None for manifests and tar
        shards, whose labels have no names). Starts the pipeline."""
        names = self._listed_src().get_property("classes")
        return list(names) if names is not None else None

    @property
    def class_to_idx(self) -> Optional[Dict[str, int]]:
        """{class name: label}, as torchvision's ``ImageFolder.class_to_idx``."""
        classes = self.classes
        return ({name: i for i, name in enumerate(classes)}
                if classes is not None else None)

    @property
    def samples(self) -> "Samples":
        """The listed samples as (path, label), indexed by the dataset index
        a batch's ``indices`` hold: ``loader.samples[batch.indices[0]]``, as
        torchvision's ``ImageFolder.samples``. Folders and manifests (tar
        shards: their samples' paths come in each sample's metadata). A
        path that is not UTF-8 is decoded as ``os.fsdecode`` decodes it
        (surrogateescape), as torchvision lists it: it opens the file."""
        return Samples(self._listed_src())

    def _spdl_elements_with(self, prop: str):
        """The pipeline's spdl elements that have the property @prop."""
        it = self.pipeline.iterate_recurse()
        while True:
            ok, element = it.next()
            if ok != Gst.IteratorResult.OK:
                return
            factory = element.get_factory()
            name = factory.get_name() if factory else ""
            if name.startswith("spdl") and \
                    element.find_property(prop) is not None:
                yield element

    def _element_error_counts(self) -> Dict[str, Dict[str, int]]:
        """Each spdl element's error-counts since the pipeline started."""
        out: Dict[str, Dict[str, int]] = {}
        for element in self._spdl_elements_with("error-counts"):
            s = element.get_property("error-counts")
            out[element.get_name()] = {
                s.nth_field_name(i): s.get_value(s.nth_field_name(i))
                for i in range(s.n_fields()) if s.nth_field_name(i) != "total"}
        return out

    def _may_skip(self, element: str, reason: str) -> bool:
        """Whether @element of this pipeline can skip samples for @reason:
        an image decoder has no video to miss, local files no HTTP."""
        e = self.pipeline.get_by_name(element)
        factory = e.get_factory().get_name() if e is not None else ""
        kinds = _SKIP_REASONS_NOT.get(factory, ())
        if factory == "spdlsrc":
            location = e.get_property("location") or ""
            if not _state.is_shards(e):
                kinds = kinds + _SHARD_REASONS
            if not location.startswith(("http://", "https://", "s3://")):
                kinds = kinds + _REMOTE_REASONS
            if not e.get_property("fields"):
                kinds = kinds + _FIELD_REASONS
            # a manifest's rows are spans; folders and shards have none
            if _state.is_shards(e) or os.path.isdir(location):
                kinds = kinds + ("bad-span", "too-long")
        return reason not in kinds

    def skipped(self) -> Dict[str, int]:
        """Samples skipped by reason ({"unreadable": n, "truncated": n, ...},
        every reason that applies to the pipeline's spdl elements and its
        data: no shard reasons for a folder, no HTTP ones for local files,
        no video ones for images; a video or audio decoder's ``timeout``, a
        file taking too long to open or decode, applies to local files
        too), in the epochs the training loop has reached: not those the
        elements read and decoded ahead of it (also in the ``spdlgst`` log,
        per epoch)."""
        self._drain()
        out = {reason: 0 for element, counts in
               self._element_error_counts().items()
               for reason in counts if self._may_skip(element, reason)}
        for reason, n in self._buslog.counted(self._epoch).items():
            out[reason] = out.get(reason, 0) + n
        for reason, n in self._skipped_unsummarized.items():
            out[reason] = out.get(reason, 0) + n
        return out

    def annotation_counts(self) -> Dict[str, int]:
        """Detection annotations by what became of them ({} without any):
        spdlsrc's ``annotation-counts`` when an instances file is listed
        (``images`` and ``annotations`` listed, ``unknown-image``,
        ``duplicate-image``, ``unknown-category``, ``bad-image``,
        ``bad-annotation``: once per listing) plus spdldecode's
        ``object-counts`` (``bad-annotation`` dropped, ``box-outside-image``
        and ``box-empty`` kept with a warning, ``sanitized``: each sample
        decoded so far, those read ahead of the training loop too), the
        reasons both count summed."""
        self._drain()
        out: Dict[str, int] = {}
        for prop in ("annotation-counts", "object-counts"):
            for element in self._spdl_elements_with(prop):
                s = element.get_property(prop)
                if s is None:
                    continue
                for i in range(s.n_fields()):
                    name = s.nth_field_name(i)
                    out[name] = out.get(name, 0) + int(s.get_value(name))
        return out

    def recovered(self) -> int:
        """Samples delivered although their data was damaged, decoded as
        the reference decoder decodes them (images as PIL, audio files as
        FFmpeg: an MP3 of files joined, or with junk between frames), each
        warned about (reason ``recovered``), since the pipeline started;
        those an element skipped instead (``skip-recovered``) are in
        :meth:`skipped`."""
        self._drain()
        return sum(element.get_property("recovered")
                   for element in self._spdl_elements_with("recovered"))

    # -- checkpointing --------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """What the training loop has consumed: the position just after the
        last batch handed out.

        A small JSON-serializable dict (epoch, offset in the epoch's global
        order, and the settings the order depends on), whatever the
        dataset's size. Save it with the model; a new Loader with the same
        pipeline continues with :meth:`load_state_dict`, on any number of
        ranks. Batches prefetched inside the pipeline are not counted.

        After a ``break`` (a preemption handler's flag, say) the state is
        still the last batch's position, whenever it is taken and whether
        or not the iterator was dropped: a restarted job resumes the rest of
        that epoch. The live loader's next ``for`` starts the next epoch
        instead, as a DataLoader's does; from then on the state says so.

        Taken at an epoch's last batch, inside its loop (or after a
        ``break`` there), the state is the end of that epoch (``epoch`` E,
        ``offset`` its number of samples, ``end_of_epoch`` True): a resumed
        loader's next ``for`` is the rest of epoch E, empty, and the one
        after it epoch E + 1, so that a training loop's own epoch count
        saved beside the state stays in step (torchdata's
        StatefulDataLoader does the same). Taken after the loop ended, it
        is the start of epoch E + 1."""
        if self._src is None:
            raise TypeError("checkpointing needs spdlsrc in the pipeline")
        state = _state.capture(self.sink, self._src, self._batches)
        if self._epoch_done is not None:
            state.update(_state.end_of_epoch(*self._epoch_done))
        elif self._end_position is not None:
            state.update(epoch=self._end_position[0],
                         offset=self._end_position[1])
        elif self._epoch_open and self._epoch is not None and \
                (state["epoch"], state["offset"]) == (self._epoch + 1, 0):
            # the loop holds its epoch's last batch: the sink stands at the
            # next epoch, the loop (and its caller's epoch count) does not
            state.update(_state.end_of_epoch(
                self._epoch, _state.epoch_samples(self._src)))
        return state

    def load_state_dict(self, state: Dict[str, Any],
                        check_dataset: bool = True) -> None:
        """Continues from a :meth:`state_dict`: call before the first batch
        (after ``len()``, which starts the pipeline, is fine).

        The batches that follow are those the saved run would have produced
        next (same samples, order and random crops), into the following
        epochs; samples before the position are not read. The pipeline
        must list the same dataset with the same seed and shuffle; the
        number of ranks may differ. A folder or manifest whose samples
        changed since the save (files added, removed, renamed, relabelled)
        raises ValueError saying so: the order would differ, some samples
        would repeat and others never come. ``check_dataset=False`` resumes
        anyway."""
        if self._src is None:
            raise TypeError("checkpointing needs spdlsrc in the pipeline")
        if self._batches:
            raise RuntimeError("load_state_dict() must come before the "
                               "first batch")
        _state.validate(self._src, state)   # the settings first: no listing
        if check_dataset and state.get("dataset"):
            self.start()            # lists the dataset
            _state.check_dataset(
                state, self._src.get_property("dataset-fingerprint"))
        if self._started:
            self._unstart()         # len() lists the dataset by starting
        src = self._src
        done = None
        if state.get("end_of_epoch"):
            # the rest of that epoch is empty: spdlsrc starts at the next
            done = (state["epoch"], state["offset"])
            state = dict(state, epoch=state["epoch"] + 1, offset=0)
        if _state.restore(src, state, src.get_property("start-epoch"),
                          src.get_property("num-epochs")):
            self._end_position = None
        else:
            self._eos = True
            self._started = True
            self._end_position = (state["epoch"], state["offset"])
        self._epoch_done = done

    def _unstart(self) -> None:
        """Stops a pipeline that handed out no batch: the next iteration
        starts it afresh, from spdlsrc's start properties."""
        # its warnings first: stopping flushes the bus
        self._drain()
        self.pipeline.set_state(Gst.State.NULL)
        pipeline_stopped()
        self._started = False
        self._eos = False
        self._epoch_open = False
        self._in_epoch = 0

    def stats(self, units: bool = False) -> Dict[str, Dict[str, Any]]:
        """The elements' statistics and this loader's own wait, as a dict.

        The elements count from the pipeline's last start (see
        :meth:`__iter__` for when a loop restarts it); the loader's own
        entry counts from its creation (``batches``, ``wait_seconds``).
        The elements' times (``busy``, ``mean``, ``p90``, ``p99``,
        ``elapsed``, ``cpu``, ``cpu-mean``, ``wait-total``, ``wait-max``,
        ``wait-last``) are nanoseconds, ``utilisation`` a share of the
        element's threads' time, the rest counts; ``units=True`` names the
        times with their unit (``busy-ns``, ...)."""
        out = {"loader": {"batches": self._batches,
                          "wait_seconds": round(self._wait, 6)}}
        it = self.pipeline.iterate_recurse()
        while True:
            ok, element = it.next()
            if ok != Gst.IteratorResult.OK:
                break
            if element.find_property("stats") is None:
                continue
            s = element.get_property("stats")
            if s is not None:
                fields = (s.nth_field_name(i) for i in range(s.n_fields()))
                out[element.get_name()] = {
                    f"{f}-ns" if units and f in _NS_STATS else f:
                    s.get_value(f) for f in fields}
        return out

    def _status(self) -> str:
        """"running, 12 batches": its state, and the batches handed out."""
        state = "closed" if self._closed else "ended" if self._eos else \
            "running" if self._started else "not started"
        return f"{state}, {self._batches} batches"

    def __repr__(self) -> str:
        line = self.launch_line
        line = line if len(line) <= 100 else line[:97] + "..."
        return (f"<{type(self).__module__}.{type(self).__name__} {self.output}, "
                f"{self._status()}: {line!r}>")

    # -- teardown -----------------------------------------------------------

    def close(self) -> None:
        """Stops the pipeline; its threads are joined before this returns."""
        if self._foreign:
            return              # the parent's: nothing of it runs here
        if self._abandoned:
            self._closed = True     # its state change still holds it
            return
        if not self._closed:
            self._closed = True
            self._loop += 1
            self.pipeline.set_state(Gst.State.NULL)
            pipeline_stopped()

    def _shutdown(self) -> None:
        """At interpreter exit: stop, and let go of every GStreamer object."""
        try:
            self.close()
        finally:
            self._buslog = None

    def _not_copied(self):
        return TypeError(
            f"this {type(self).__name__} cannot be copied or pickled: its "
            "pipeline runs on threads of this process. Create the loader in "
            "each process that iterates over it (with PyTorch Lightning, in "
            "the DataModule's train_dataloader()); launch_line, or the "
            "recipe's arguments, make the same one anywhere")

    def __copy__(self):
        raise self._not_copied()

    def __deepcopy__(self, memo):
        raise self._not_copied()

    def __reduce_ex__(self, protocol):
        raise self._not_copied()

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def __del__(self) -> None:
        if exiting():
            return
        try:
            self.close()
        except Exception:
            pass
