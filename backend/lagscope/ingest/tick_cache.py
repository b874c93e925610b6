"""A poll owner's clusters kept in memory between ticks: the cluster, its instances and channels
with everything the next tick needs of them (counters, GTID progress, the verdict window, the
cause memory, the open episode's state), detached from any session, and what its ticks
remember of the rows they appended (ingest/tick_memory.py).

Loading that graph from the store every second was a fifth of a tick's CPU (the joined load,
the JSON columns decoded, the rows tracked). An owner is the only writer of a tick's columns
(the shard's fence refuses any other), so what it wrote last is what the store holds; what it
cannot know is an edit made elsewhere (a password, an instance disabled, a login reset), and
every such edit bumps ``clusters.revision`` (models/revisions.py). So each batch asks the store
for its clusters' revisions in one query and reloads only those that moved, those it does not
hold yet (a shard just taken over: the graph is rebuilt from the store, so an episode or a
cause memory goes on where the last owner left it) and those whose last tick failed (what was
in memory may be ahead of what was committed).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Table, bindparam, select
from sqlalchemy.orm import Session

from lagscope.ingest.tick_memory import TickMemory
from lagscope.ingest.tick_rows import TickRows
from lagscope.models import Cluster

_CLUSTERS: Table = Cluster.__table__  # type: ignore[assignment]
# Asked by every batch: built once, over the table (the ORM's select cost more than its rows).
_REVISIONS = select(_CLUSTERS.c.id, _CLUSTERS.c.revision).where(
    _CLUSTERS.c.id.in_(bindparam("ids", expanding=True)), _CLUSTERS.c.enabled.is_(True)
)


@dataclass(slots=True)
class Kept:
    revision: int
    cluster: Cluster
    rows: TickRows
    memory: TickMemory


class TickCache:
    def __init__(self) -> None:
        self._kept: dict[int, Kept] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.loads = 0

    def current(self, session: Session, cluster_ids: Sequence[int]) -> dict[int, int]:
        """The enabled clusters' revisions in the store (one query for a batch)."""
        rows = session.connection().execute(_REVISIONS, {"ids": list(cluster_ids)}).all()
        return {cid: int(rev or 0) for cid, rev in rows}

    def take(self, cluster_id: int, revision: int) -> Kept | None:
        """The cluster as its last committed tick left it, if the store's revision is the one
        it was loaded at (None: the caller loads it again). Taken out of the cache: only a
        tick that commits puts it back (:meth:`keep`), so a failed one leaves nothing behind
        that may be ahead of the store."""
        with self._lock:
            kept = self._kept.pop(cluster_id, None)
        if kept is not None and kept.revision == revision:
            self.hits += 1
            return kept
        self.loads += 1
        return None

    def keep(self, cluster: Cluster, rows: TickRows, memory: TickMemory) -> None:
        """After the tick's transaction committed."""
        with self._lock:
            self._kept[cluster.id] = Kept(int(cluster.revision or 0), cluster, rows, memory)

    def forget(self, cluster_ids: Collection[int]) -> None:
        with self._lock:
            for cluster_id in cluster_ids:
                self._kept.pop(cluster_id, None)

    def note_expired(self, cluster_ids: Collection[int], at_s: float) -> set[int]:
        """Ticks of kept clusters that were dropped (their owner too busy): noted on the
        cluster in memory, written with its next tick; returns the clusters noted."""
        at = datetime.fromtimestamp(at_s, UTC)
        with self._lock:
            noted = {c for c in cluster_ids if c in self._kept}
            for cluster_id in noted:
                self._kept[cluster_id].cluster.tick_expired_at = at
        return noted

    def ids(self) -> list[int]:
        with self._lock:
            return list(self._kept)
