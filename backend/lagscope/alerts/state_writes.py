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
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, Update, bindparam, update
from sqlalchemy.orm import Session

from lagscope.errors import Conflict
from lagscope.models import AlertState
from lagscope.models.loaded import loaded_values, take_changes

_TABLE = cast(Table, AlertState.__table__)
_COLUMNS = tuple(c.key for c in _TABLE.columns if c.key not in ("id", "version"))


class LoadedStates:
    """The states loaded for one judgement, with their values as loaded."""

    def __init__(self, session: Session, rows: Sequence[AlertState]) -> None:
        for row in rows:
            session.expunge(row)
        self._loaded = [(row, loaded_values(row, _COLUMNS)) for row in rows]

    def write(self, session: Session) -> None:
        """Write the changed columns. Raises Conflict when a state's version is no longer the
        one loaded."""
        groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
        for row, before in self._loaded:
            changed = take_changes(row, before)
            if changed:
                version = row.version
                groups[tuple(sorted(changed))].append(
                    {"_pk": row.id, "_seen": version, "_next": version + 1, **changed}
                )
        db = session.connection()
        for columns, rows in sorted(groups.items()):
            result = db.execute(_statement(columns), rows)
            if result.rowcount != len(rows):
                raise Conflict("another worker judged the same alerts at the same time")


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
