"""Which parameter change an episode ended after: a step is credited to the replica it changed.

Pure: ingest (ingest/episodes.py) loads the changes made inside the episode and the cluster's
replication edges; this decides. A change can move a channel's lag only when it was made on the
channel's own replica or on a server the channel replicates from (its source, that source's
source …). A sibling replica's step, even one made in the same second, touches neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StepCandidate:
    """One parameter change inside the episode: its id, the instance it was made on, when."""

    change_id: int
    instance_id: int
    at: float  # epoch s (first seen with the new value)


def upstream_of(
    first_source: int | None, feeds: Mapping[int, Iterable[int]], sources: Iterable[int]
) -> frozenset[int]:
    """The instances a channel replicates from: its own source, then theirs (a chain), given
    which instances feed each instance (``feeds[replica] = its sources``). A channel whose
    source is not one of the cluster's instances is taken to replicate from ``sources`` (the
    instances with the source role)."""
    start = [first_source] if first_source is not None else list(sources)
    seen: set[int] = set()
    todo = list(start)
    while todo:
        instance = todo.pop()
        if instance in seen:
            continue  # a ring (A feeds B feeds A) ends here
        seen.add(instance)
        todo.extend(feeds.get(instance, ()))
    return frozenset(seen)


def credited_step(
    candidates: Iterable[StepCandidate], own_instance: int, upstream: frozenset[int]
) -> int | None:
    """The change an episode of a channel on ``own_instance`` ended after: the latest made on
    that replica itself; else the latest made upstream of it; else none (it ended by itself).
    Ties in time go to the later id (the later write)."""
    changes = tuple(candidates)
    own = [c for c in changes if c.instance_id == own_instance]
    pool = own or [c for c in changes if c.instance_id in upstream]
    if not pool:
        return None
    return max(pool, key=lambda c: (c.at, c.change_id)).change_id
