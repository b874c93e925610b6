"""The alert states a judgement loaded, written back without the ORM's unit of work.

Every tick moves each rule × subject's state a step (its value and when it was judged, at the
least), so a judgement rewrote every state it loaded. Through the session's flush that was one
versioned ``UPDATE`` per state and the unit of work's bookkeeping per row: with three rules
over 150 servers judged every second it cost the poll owner more CPU than recording the ticks
(``bench/poll_throughput.py --engine owner --rules 3`` under py-spy). :class:`LoadedStates`
takes the loaded rows out of the session (the judgement goes on setting their attributes as
before, nothing flushes them) and writes the changed columns in one executemany per set of
columns: ``UPDATE … SET …, version = :next WHERE id = :id AND version = :seen``. The version
check stays: a state another judge wrote since it was loaded matches no row, and the
judgement raises :class:`~lagscope.errors.Conflict`, as the ORM's ``StaleDataError`` made it.
New states are still inserted through the session.

A poll owner judges the same clusters every second: loading their states as ORM objects each
time was then the largest part of its judgement. :class:`KeptStates` keeps them between its
judgements, checked against the store by one query of ids and versions (every writer of a state
bumps its version; a deleted or new row changes the ids), and loaded again when anything
differs or a judgement failed.

Kept, a state whose judgement moved only its value and the time of the reading judged (an
alert that stays ok, the fleet's usual case) is written at most every
``STATE_CHECKPOINT_S``, not every second: with three rules over 150 servers those rewrites were
the largest part of a judgement on PostgreSQL (``bench/poll_throughput.py --engine owner
--store postgresql --rules 3`` under py-spy). Every other change (phase, breach, notification)
is written by the judgement that made it. What the store then lags behind is harmless: the
alerts page shows a value up to that old, and a judge that takes the states from the store
(after a takeover, or a lost race) may judge a reading the owner judged already, which moves
nothing but the value: the rest of the state is the store's.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, Update, bindparam, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from lagscope.errors import Conflict
from lagscope.models import AlertState
from lagscope.models.loaded import changes, loaded_values

_TABLE = cast(Table, AlertState.__table__)
_COLUMNS = tuple(c.key for c in _TABLE.columns if c.key not in ("id", "version"))
# What every judgement of a state moves; alone, a kept state's change waits for its checkpoint.
DEFERRABLE = frozenset({"value", "evaluated_at"})
STATE_CHECKPOINT_S = 5.0


@dataclass(slots=True)
class StoredState:
    """A state's columns as the store holds them, and when (monotonic) they were written or
    loaded."""

    values: dict[str, Any]
    written_at: float


class LoadedStates:
    """The states loaded for one judgement, with their values as the store holds them.

    ``stored``: what a :class:`KeptStates` knows the store holds of kept rows (a row without
    an entry is taken as stored as it is now). ``defer_s``: how long a change of only the
    :data:`DEFERRABLE` columns may wait (0: written at once)."""

    def __init__(
        self,
        session: Session,
        rows: Sequence[AlertState],
        stored: Mapping[int, StoredState] | None = None,
        defer_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        now = clock()
        for row in rows:
            if row in session:  # kept rows (KeptStates) are detached already
                session.expunge(row)
        known = stored or {}
        self._loaded = [
            (row, known.get(row.id) or StoredState(loaded_values(row, _COLUMNS), now))
            for row in rows
        ]
        self._defer_s = defer_s
        self._clock = clock

    @property
    def pairs(self) -> list[tuple[AlertState, StoredState]]:
        """Each row with what the store holds of it (after :meth:`write`: as written)."""
        return list(self._loaded)

    def write(self, session: Session) -> None:
        """Write the changed columns (those that may wait, once due). Raises Conflict when a
        written state's version is no longer the one loaded."""
        now = self._clock()
        groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
        written: list[tuple[AlertState, StoredState, dict[str, Any], int]] = []
        for row, stored in self._loaded:
            changed = changes(row, stored.values)
            if not changed:
                continue
            if changed.keys() <= DEFERRABLE and now - stored.written_at < self._defer_s:
                continue
            version = row.version
            groups[tuple(sorted(changed))].append(
                {"_pk": row.id, "_seen": version, "_next": version + 1, **changed}
            )
            written.append((row, stored, changed, version + 1))
        db = session.connection()
        for columns, rows in sorted(groups.items()):
            result = db.execute(_statement(columns), rows)
            if result.rowcount != len(rows):
                raise Conflict("another worker judged the same alerts at the same time")
        for row, stored, changed, version in written:
            stored.values.update(changed)
            stored.written_at = now
            # The row as the store now has it, for a caller that keeps it (KeptStates).
            set_committed_value(row, "version", version)


class KeptStates:
    """The alert states of a poll owner's clusters, kept (detached) between its judgements,
    with what the store holds of each. Batches of other clusters are judged at once from other
    threads; a cluster is in one batch at a time."""

    def __init__(
        self,
        checkpoint_s: float = STATE_CHECKPOINT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.checkpoint_s = checkpoint_s
        self.clock = clock
        self._lock = threading.Lock()
        self._by_cluster: dict[int, list[tuple[AlertState, StoredState]]] = {}
        self.hits = 0
        self.loads = 0

    def take(
        self, session: Session, cluster_ids: Collection[int]
    ) -> tuple[list[AlertState], dict[int, StoredState]]:
        """The clusters' states and what the store holds of them: those kept when the store
        holds exactly them at the same versions, else loaded (as stored). Taken out of the
        memory until :meth:`keep` (a judgement that fails leaves nothing kept)."""
        with self._lock:
            kept = [self._by_cluster.pop(c, None) for c in cluster_ids]
        where = AlertState.cluster_id.in_(cluster_ids)
        if all(pairs is not None for pairs in kept):
            pairs = [pair for found in kept if found is not None for pair in found]
            stored = session.execute(select(AlertState.id, AlertState.version).where(where))
            if {i: v for i, v in stored} == {row.id: row.version for row, _ in pairs}:
                self.hits += 1
                return [row for row, _ in pairs], {row.id: st for row, st in pairs}
        self.loads += 1
        return list(session.scalars(select(AlertState).where(where))), {}

    def loaded(
        self, session: Session, rows: Sequence[AlertState], stored: Mapping[int, StoredState]
    ) -> LoadedStates:
        """:class:`LoadedStates` of taken ``rows``, their value-only changes kept till due."""
        return LoadedStates(session, rows, stored, self.checkpoint_s, self.clock)

    def keep(
        self,
        cluster_ids: Collection[int],
        loaded: LoadedStates,
        new: Sequence[AlertState] = (),
    ) -> None:
        """After a judgement wrote them: ``loaded``'s rows and the ``new`` ones (inserted,
        detached) are the clusters' states as its transaction leaves them. Call
        :meth:`forget` if it does not commit."""
        now = self.clock()
        by_cluster: dict[int, list[tuple[AlertState, StoredState]]] = {c: [] for c in cluster_ids}
        fresh = [(row, StoredState(loaded_values(row, _COLUMNS), now)) for row in new]
        for pair in [*loaded.pairs, *fresh]:
            by_cluster.setdefault(pair[0].cluster_id, []).append(pair)
        with self._lock:
            self._by_cluster.update(by_cluster)

    def forget(self, cluster_ids: Collection[int]) -> None:
        with self._lock:
            for cluster_id in cluster_ids:
                self._by_cluster.pop(cluster_id, None)


_STATEMENTS: dict[tuple[str, ...], Update] = {}


def _statement(columns: tuple[str, ...]) -> Update:
    # Built once per set of columns: building a statement cost more than sending its rows.
    statement = _STATEMENTS.get(columns)
    if statement is None:
        statement = _STATEMENTS[columns] = (
            update(_TABLE)
            .where(_TABLE.c.id == bindparam("_pk"), _TABLE.c.version == bindparam("_seen"))
            .values(version=bindparam("_next"))
        )
    return statement
