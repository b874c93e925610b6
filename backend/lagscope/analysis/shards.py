"""Which owner should hold which shard: pure, so every owner works it out alike.

Clusters are grouped into shards by id (:func:`shard_of`). The owners alive now share the
shards by rendezvous hashing (:func:`preferred_owner`): each shard goes to the owner with the
highest hash of (shard, owner). Every owner computes the same answer from the same list of
members without talking to the others, and when an owner joins or leaves only the shards it
gains or loses move (about 1/n of them), so a rebalance never reshuffles the whole fleet.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Collection, Iterable


def shard_of(cluster_id: int, shards: int) -> int:
    return cluster_id % shards


@functools.lru_cache(maxsize=1 << 16)
def _weight(shard: int, owner: str) -> int:
    # Cached: every lease beat (five a second) weighs every shard for every owner alive, and
    # the owners change rarely.
    digest = hashlib.blake2b(f"{shard}\0{owner}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def preferred_owner(shard: int, members: Collection[str]) -> str | None:
    """The member that should hold ``shard`` (None when no member is alive)."""
    if not members:
        return None
    return max(sorted(members), key=lambda owner: _weight(shard, owner))


def shards_for(owner: str, shards: Iterable[int], members: Collection[str]) -> set[int]:
    """The shards of ``shards`` that ``owner`` should hold, ``members`` being the owners alive
    (``owner`` counts as one of them)."""
    everyone = {*members, owner}
    return {shard for shard in shards if preferred_owner(shard, everyone) == owner}


def tick_batches(
    due: Iterable[tuple[int, float, int]], shards: int, max_instances: int
) -> list[list[int]]:
    """Group the due ``(cluster id, interval, enabled instances)`` into batches of cluster ids:
    one interval per batch (a batch shares its read's deadline), the clusters of one shard
    side by side (a batch's write is fenced on each shard it covers), and at most
    ``max_instances`` servers in a batch unless one cluster alone has more."""
    ordered = sorted(due, key=lambda d: (d[1], shard_of(d[0], shards), d[0]))
    found: list[list[int]] = []
    batch: list[int] = []
    size, interval = 0, None
    for cluster_id, every, instances in ordered:
        if batch and (every != interval or size + instances > max_instances):
            found.append(batch)
            batch, size = [], 0
        batch.append(cluster_id)
        size += instances
        interval = every
    if batch:
        found.append(batch)
    return found
