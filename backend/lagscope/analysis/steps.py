"""Tuning steps as the journal sees them: which events make one step, and what a step can touch.

Pure: the journal loads the events (journal/events.py) and samples (journal/samples.py); these
decide.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from lagscope.analysis.impact import Window, windows

E = TypeVar("E")

# Variables that change only how the replica *receives* (the link, its framing and timeouts):
# such a step can only move the receive side, so it is judged there (analysis.impact, network).
NETWORK_PARAMS = frozenset(
    {
        "slave_compressed_protocol",
        "replica_compressed_protocol",
        "slave_net_timeout",
        "replica_net_timeout",
        "net_buffer_length",
        "max_allowed_packet",
        "slave_max_allowed_packet",
        "replica_max_allowed_packet",
    }
)
NETWORK_TAGS = frozenset({"network", "link", "latency", "bandwidth"})


def group_in_bursts(
    events: Iterable[E], at: Callable[[E], datetime], group_s: float
) -> list[list[E]]:
    """Chain events (in any order) closer than ``group_s`` to the previous one into bursts,
    each in time order: one tuning step is often several SET GLOBALs seconds apart."""
    bursts: list[list[E]] = []
    for event in sorted(events, key=at):
        if bursts and (at(event) - at(bursts[-1][-1])).total_seconds() <= group_s:
            bursts[-1].append(event)
        else:
            bursts.append([event])
    return bursts


def is_network_step(param_names: Sequence[str], tags: Sequence[str]) -> bool:
    """Every change is a network variable, or a note is tagged as network work (and there is no
    other change): then only the receive side can show the step's effect."""
    if any(name.lower() not in NETWORK_PARAMS for name in param_names):
        return False
    return bool(param_names) or any(tag.lower() in NETWORK_TAGS for tag in tags)


@dataclass(frozen=True, slots=True)
class StepFrame:
    """A step's windows in seconds relative to its ``at`` (small numbers keep floats exact)."""

    previous_s: float | None
    next_s: float | None
    changed_after_s: float
    before: Window
    after: Window

    @property
    def span(self) -> tuple[float, float]:
        """Where both windows' samples lie (either window may be empty)."""
        return min(self.before.start, 0.0), max(self.after.end, 0.0)


def step_frame(
    previous_at_s: float | None,
    next_changed_after_s: float | None,
    changed_after_s: float,
    width_s: float,
    settle_s: float,
) -> StepFrame:
    """The windows of a step at 0 (docs/lag.md, "How the journal judges"), given, relative to it,
    the previous step's time, when the next step's change may have begun, and when this step's
    change may have begun (the last read of the old value): that uncertain stretch belongs to
    neither window."""
    # The next step's change may predate this step's `at` when its read window was wide.
    next_s = None if next_changed_after_s is None else max(0.0, next_changed_after_s)
    before, after = windows(0.0, previous_at_s, next_s, width_s, settle_s)
    changed_after_s = min(0.0, changed_after_s)
    # Reported as they hold samples: the uncertain stretch cut off, an empty window as [t, t).
    before = Window(before.start, max(before.start, min(before.end, changed_after_s)))
    after = Window(after.start, max(after.start, after.end))
    return StepFrame(previous_at_s, next_s, changed_after_s, before, after)
