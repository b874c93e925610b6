"""Tuning steps as the journal sees them: which events make one step, and what a step can touch.

Pure: the journal (services/journal.py) loads the events and samples; these decide.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TypeVar

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
