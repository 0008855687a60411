"""The pipeline's bus, drained into Python ``logging`` (logger ``spdlgst``).

Every skipped sample posts a warning and every epoch an element message;
nothing else reads the bus of a loader, so the loader drains it at each
step: errors become :class:`LoaderError`, warnings become log records, at
most ``limit`` per element and epoch, and a summary per element and epoch
keeps the counts of all of them (by reason).
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Callable, Dict, Optional

from gi.repository import Gst

from ._secrets import masked

logger = logging.getLogger("spdlgst")

SKIPPED = "spdl-skipped"
EPOCH_END = "spdl-epoch-end"
# the application message that ends a drain
_MARK = "spdlgst-drain-mark"
# fields of an spdl-skipped structure that are not reasons
_NOT_REASONS = {"total", "epoch", "suppressed"}
# "reason: corrupt; 3 samples skipped so far" in a warning's debug detail
_REASON = re.compile(r"reason: ([A-Za-z0-9-]+)")
_PATH = re.compile(r'^Skipping sample "(.*)": ')
# a sample delivered from damaged data (reason recovered): warned, not skipped
_DELIVERED = re.compile(
    r'^(?:Sample|Audio file) "(.*)" decoded from damaged data: ')


def _text(parse):
    """(message, debug) of a warning or error, whatever bytes it holds."""
    try:
        err, debug = parse()
        return masked(err.message), masked(debug)
    except (UnicodeDecodeError, TypeError):
        return "(a message that is not valid UTF-8)", None


class _ElementCounts:
    """What one element skipped since the last summary."""

    def __init__(self) -> None:
        self.received: Counter = Counter()   # warnings seen, by reason
        self.shown = 0                       # logged one by one
        self.hidden = 0                      # counted only (our limit)
        # epoch -> (counts by reason, warnings not shown: held back by the
        # element or by us), from the element's own per-epoch summaries
        self.element_summaries: Dict[int, tuple] = {}


class BusLog:
    """Drains a bus: raises errors, logs warnings with a per-epoch limit."""

    def __init__(self, bus: Gst.Bus, limit: int,
                 make_error: Callable[[str, Optional[str], Optional[str]], Exception]):
        self.bus = bus
        self.limit = limit
        self.make_error = make_error
        self.counts: Dict[str, _ElementCounts] = {}
        # elements that post their own per-epoch spdl-skipped summaries
        self.summarizing = set()
        # every summary kept, by element and epoch: what the training loop
        # reached is counted, not what elements processed ahead of it
        self.epoch_counts: Dict[str, Dict[int, Counter]] = {}
        # summaries since the pipeline (re)started, by element
        self.run_counts: Dict[str, Counter] = {}

    def drain(self) -> None:
        """Handles the messages queued when it was called, in order; raises
        the first error among them. Those posted meanwhile wait for the
        next drain: a pipeline that posts faster than they are handled
        (every sample undecodable, say) cannot hold the loop here."""
        mark = self._post_mark()
        while True:
            msg = self.bus.pop()
            if msg is None or (msg.type == Gst.MessageType.APPLICATION and
                               msg.get_seqnum() == mark):
                return
            self._handle(msg)

    def _post_mark(self) -> int:
        """Queues the message that ends a drain; returns its seqnum (a
        mark left behind by a drain that raised is handled as nothing)."""
        mark = Gst.Message.new_application(None, Gst.Structure.new_empty(_MARK))
        seqnum = mark.get_seqnum()
        self.bus.post(mark)
        return seqnum

    def _handle(self, msg: Gst.Message) -> None:
        kind = msg.type
        if kind == Gst.MessageType.ERROR:
            text, debug = _text(msg.parse_error)
            raise self.make_error(text, debug,
                                  msg.src.get_name() if msg.src else None)
        if kind == Gst.MessageType.WARNING:
            self._warning(msg)
        elif kind == Gst.MessageType.INFO:
            text, debug = _text(msg.parse_info)
            logger.info("%s: %s", msg.src.get_name() if msg.src else "?", text)
        elif kind == Gst.MessageType.ELEMENT:
            self._element(msg)
        # state changes, stream status, latency, marks...: nothing to keep

    def _warning(self, msg: Gst.Message) -> None:
        text, debug = _text(msg.parse_warning)
        element = msg.src.get_name() if msg.src else "?"
        found = _REASON.search(debug or "")
        if found is None:
            # not about a sample (an empty class folder, a listing): said,
            # not counted as a skipped sample
            logger.warning("%s: %s", element, text, extra={
                "spdl_element": element, "spdl_reason": None,
                "spdl_path": None, "spdl_debug": debug})
            return
        reason = found.group(1)
        counts = self.counts.setdefault(element, _ElementCounts())
        path = _DELIVERED.match(text)
        if path is None:
            counts.received[reason] += 1
            path = _PATH.match(text)
        if counts.shown >= self.limit:
            counts.hidden += 1
            return
        counts.shown += 1
        logger.warning("%s: %s", element, text, extra={
            "spdl_element": element, "spdl_reason": reason,
            "spdl_path": path.group(1) if path else None, "spdl_debug": debug})

    def _element(self, msg: Gst.Message) -> None:
        s = msg.get_structure()
        if s is None or s.get_name() != SKIPPED or not s.has_field("epoch"):
            return          # epoch ends and end-of-run totals: properties say it
        element = msg.src.get_name() if msg.src else "?"
        self.summarizing.add(element)
        reasons = {s.nth_field_name(i): s.get_value(s.nth_field_name(i))
                   for i in range(s.n_fields())
                   if s.nth_field_name(i) not in _NOT_REASONS}
        suppressed = s.get_value("suppressed") if s.has_field("suppressed") else 0
        epoch = s.get_value("epoch")
        self.epoch_counts.setdefault(element, {}).setdefault(
            epoch, Counter()).update(reasons)
        self.run_counts.setdefault(element, Counter()).update(reasons)
        counts = self.counts.setdefault(element, _ElementCounts())
        # the element posts it after the epoch's last warning: what we held
        # back since the previous one belongs to this epoch, and the limit
        # starts again
        counts.element_summaries[s.get_value("epoch")] = (reasons,
                                                          suppressed + counts.hidden)
        counts.received.clear()
        counts.shown = counts.hidden = 0

    def counted(self, last_epoch: Optional[int]) -> Counter:
        """Skipped samples of the epochs up to @last_epoch, by reason, from
        the elements' per-epoch summaries."""
        total: Counter = Counter()
        if last_epoch is None:
            return total
        for epochs in self.epoch_counts.values():
            for epoch, reasons in epochs.items():
                if epoch <= last_epoch:
                    total.update(reasons)
        return total

    def end_of_epoch(self, epoch: Optional[int]) -> None:
        """Logs the summaries of the epoch the training loop just finished."""
        self.drain()
        self._summarize(epoch)

    def end_of_stream(self) -> None:
        self._summarize(None)

    def _summarize(self, epoch: Optional[int]) -> None:
        for element, counts in self.counts.items():
            if element in self.summarizing:
                # the element's own summaries, in the epochs they name
                done = sorted(e for e in counts.element_summaries
                              if epoch is None or e <= epoch)
                for e in done:
                    reasons, hidden = counts.element_summaries.pop(e)
                    self._log_summary(e, element, reasons, hidden)
                continue
            if counts.received:
                # warnings seen since the last summary: a warning does not
                # say its epoch, so samples the element processed ahead of
                # the loop count in this summary
                self._log_summary(epoch, element, dict(counts.received),
                                  counts.hidden)
            counts.received.clear()
            counts.shown = counts.hidden = 0

    @staticmethod
    def _log_summary(epoch, element, reasons, hidden):
        reasons = {k: v for k, v in reasons.items() if v}
        total = sum(reasons.values())
        if total == 0:
            return
        by_reason = ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items()))
        when = f"epoch {epoch}" if epoch is not None else "end of stream"
        tail = f"; {hidden} of their warnings not shown" if hidden else ""
        logger.log(logging.WARNING if hidden else logging.INFO,
                   "%s: %s skipped %d sample%s (%s)%s", when, element, total,
                   "" if total == 1 else "s", by_reason, tail,
                   extra={"spdl_element": element, "spdl_epoch": epoch,
                          "spdl_counts": reasons, "spdl_hidden": hidden})
