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
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Collection, Sequence
from typing import Any, cast

from sqlalchemy import Table, Update, bindparam, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from lagscope.errors import Conflict
from lagscope.models import AlertState
from lagscope.models.loaded import loaded_values, take_changes

_TABLE = cast(Table, AlertState.__table__)
_COLUMNS = tuple(c.key for c in _TABLE.columns if c.key not in ("id", "version"))


class LoadedStates:
    """The states loaded for one judgement, with their values as loaded."""

    def __init__(self, session: Session, rows: Sequence[AlertState]) -> None:
        for row in rows:
            if row in session:  # kept rows (KeptStates) are detached already
                session.expunge(row)
        self._loaded = [(row, loaded_values(row, _COLUMNS)) for row in rows]

    @property
    def rows(self) -> list[AlertState]:
        return [row for row, _ in self._loaded]

    def write(self, session: Session) -> None:
        """Write the changed columns. Raises Conflict when a state's version is no longer the
        one loaded."""
        groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
        written: list[tuple[AlertState, int]] = []
        for row, before in self._loaded:
            changed = take_changes(row, before)
            if changed:
                version = row.version
                groups[tuple(sorted(changed))].append(
                    {"_pk": row.id, "_seen": version, "_next": version + 1, **changed}
                )
                written.append((row, version + 1))
        db = session.connection()
        for columns, rows in sorted(groups.items()):
            result = db.execute(_statement(columns), rows)
            if result.rowcount != len(rows):
                raise Conflict("another worker judged the same alerts at the same time")
        for row, version in written:
            # The row as the store now has it, for a caller that keeps it (KeptStates).
            set_committed_value(row, "version", version)


class KeptStates:
    """The alert states of a poll owner's clusters, kept (detached) between its judgements.
    Batches of other clusters are judged at once from other threads; a cluster is in one batch
    at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_cluster: dict[int, list[AlertState]] = {}
        self.hits = 0
        self.loads = 0

    def take(self, session: Session, cluster_ids: Collection[int]) -> list[AlertState]:
        """The clusters' states: those kept when the store holds exactly them at the same
        versions, else loaded. Taken out of the memory until :meth:`keep` (a judgement that
        fails leaves nothing kept)."""
        with self._lock:
            kept = [self._by_cluster.pop(c, None) for c in cluster_ids]
        where = AlertState.cluster_id.in_(cluster_ids)
        if all(rows is not None for rows in kept):
            rows = [row for rows in kept if rows is not None for row in rows]
            stored = session.execute(select(AlertState.id, AlertState.version).where(where))
            if {i: v for i, v in stored} == {row.id: row.version for row in rows}:
                self.hits += 1
                return rows
        self.loads += 1
        return list(session.scalars(select(AlertState).where(where)))

    def keep(self, cluster_ids: Collection[int], rows: Sequence[AlertState]) -> None:
        """After a judgement wrote them: ``rows`` (loaded or new, detached) are the clusters'
        states as its transaction leaves them. Call :meth:`forget` if it does not commit."""
        by_cluster: dict[int, list[AlertState]] = {c: [] for c in cluster_ids}
        for row in rows:
            by_cluster.setdefault(row.cluster_id, []).append(row)
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
