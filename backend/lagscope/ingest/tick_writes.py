"""The rows a batch of ticks writes, gathered while the ticks are worked out and sent at the end
of the batch: one executemany per table (per set of columns, for updates), in a fixed order.

Sent tick by tick, a batch of four clusters cost some forty statements, each built, compiled
from the cache and executed on its own; most of a tick's recording CPU was that, not the rows
(``bench/profile_tick.py --engine owner --plain`` under py-spy). Gathered, the batch sends a
dozen: each an executemany over every row of the batch (SQLite's ``executemany``; on
PostgreSQL psycopg 3's, which pipelines the rows in one round trip).

The rows go to the driver's ``executemany`` as they are (``exec_driver_sql``): each statement is
compiled once per table, set of columns and dialect, with its columns' bind processors (the
types' own conversions: microseconds, scaled integers, JSON), applied here in one pass per row.
Through ``Connection.execute`` SQLAlchemy built and processed a parameter dictionary per row,
a tenth of a poll owner's CPU.

Only what nothing in the same batch reads back goes through here: the rows a tick appends
(samples, instance samples, source progress, applier workers) and the columns it changes on
the rows it loaded (tick_rows.py). A tick that needs a row's id at once (a new channel, a new
episode) still inserts it through the session.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Dialect, Insert, Table, Update, bindparam, insert, update


class TickWrites:
    def __init__(self) -> None:
        self._inserts: dict[Table, list[Mapping[str, Any]]] = defaultdict(list)
        self._updates: dict[tuple[Table, tuple[str, ...]], list[Mapping[str, Any]]] = defaultdict(
            list
        )
        self.statements = 0
        self.rows = 0

    def insert(self, table: Table, rows: Iterable[Mapping[str, Any]]) -> None:
        """Rows to append; every row of a table gives the same keys (one executemany)."""
        self._inserts[table].extend(rows)

    def update(self, table: Table, columns: tuple[str, ...], row: Mapping[str, Any]) -> None:
        """One row's changed ``columns`` (sorted), its primary key under ``_pk``."""
        self._updates[(table, columns)].append(row)

    def __bool__(self) -> bool:
        return bool(self._inserts or self._updates)

    def send(self, db: Connection) -> None:
        """Everything gathered, then nothing: the updates of rows loaded before the batch
        first, then the appended rows (which may name rows updated, never the other way)."""
        for (table, columns), rows in sorted(self._updates.items(), key=_update_order):
            _prepared(db.dialect, _update_statement(table, columns), ("_pk", *columns)).send(
                db, rows
            )
            self.statements += 1
            self.rows += len(rows)
        for table, rows in sorted(self._inserts.items(), key=lambda item: item[0].name):
            if rows:
                _prepared(db.dialect, _insert_statement(table), tuple(rows[0])).send(db, rows)
                self.statements += 1
                self.rows += len(rows)
        self._inserts.clear()
        self._updates.clear()


def _update_order(item: tuple[tuple[Table, tuple[str, ...]], Any]) -> tuple[str, tuple[str, ...]]:
    # Always the same order of tables (clusters, channels, instances): two transactions that
    # update rows of the same tables never wait on each other in opposite orders.
    (table, columns), _ = item
    return table.name, columns


_INSERTS: dict[Table, Insert] = {}
_UPDATES: dict[tuple[Table, tuple[str, ...]], Update] = {}


def _insert_statement(table: Table) -> Insert:
    # Built once per table: building a statement cost more than sending its rows.
    statement = _INSERTS.get(table)
    if statement is None:
        statement = _INSERTS[table] = insert(table)
    return statement


def _update_statement(table: Table, columns: tuple[str, ...]) -> Update:
    key = (table, columns)
    statement = _UPDATES.get(key)
    if statement is None:
        (key_column,) = table.primary_key.columns
        statement = _UPDATES[key] = update(table).where(key_column == bindparam("_pk"))
    return statement


Processor = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A statement compiled for one dialect and one set of row keys: its SQL, and for each
    parameter in the driver's order its name, the row key it takes and the type's bind
    processor."""

    sql: str
    params: tuple[tuple[str, str, Processor], ...]  # (name, row key, processor)
    positional: bool
    through_sqlalchemy: Insert | Update | None  # sent as before when not None

    def send(self, db: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        if self.through_sqlalchemy is not None:
            db.execute(self.through_sqlalchemy, rows)
            return
        params = self.params
        if self.positional:
            db.exec_driver_sql(
                self.sql,
                [
                    tuple([row[key] if p is None else p(row[key]) for _, key, p in params])
                    for row in rows
                ],
            )
        else:
            db.exec_driver_sql(
                self.sql,
                [
                    {name: row[key] if p is None else p(row[key]) for name, key, p in params}
                    for row in rows
                ],
            )


_PREPARED: dict[tuple[str, int, tuple[str, ...]], _Prepared] = {}


def _prepared(dialect: Dialect, statement: Insert | Update, keys: tuple[str, ...]) -> _Prepared:
    """``statement`` (built once, module-level) compiled for rows of ``keys``."""
    cache_key = (dialect.name, id(statement), keys)
    prepared = _PREPARED.get(cache_key)
    if prepared is None:
        compiled = statement.compile(dialect=dialect, column_keys=[k for k in keys if k != "_pk"])
        if compiled.insert_prefetch or compiled.update_prefetch:
            # A column the rows do not give whose default or onupdate Python works out per
            # row: only SQLAlchemy's own execution fills it in.
            prepared = _PREPARED[cache_key] = _Prepared("", (), False, statement)
            return prepared
        names = compiled.positiontup or list(compiled.binds)
        params = tuple(
            (name, compiled.binds[name].key, _processor(compiled.binds[name].type, dialect))
            for name in names
        )
        prepared = _PREPARED[cache_key] = _Prepared(
            compiled.string, params, compiled.positiontup is not None, None
        )
    return prepared


def _processor(type_: Any, dialect: Dialect) -> Processor:
    processor: Processor = type_.dialect_impl(dialect).bind_processor(dialect)
    return processor
