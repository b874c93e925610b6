"""The rows a batch of ticks writes, gathered while the ticks are worked out and sent at the end
of the batch: one executemany per table (per set of columns, for updates), in a fixed order.

Sent tick by tick, a batch of four clusters cost some forty statements, each built, compiled
from the cache and executed on its own; most of a tick's recording CPU was that, not the rows
(``bench/profile_tick.py --engine owner --plain`` under py-spy). Gathered, the batch sends a
dozen: each an executemany over every row of the batch (SQLite's ``executemany``; on
PostgreSQL psycopg 3's, which pipelines the rows in one round trip).

Only what nothing in the same batch reads back goes through here: the rows a tick appends
(samples, instance samples, source progress, applier workers) and the columns it changes on
the rows it loaded (tick_rows.py). A tick that needs a row's id at once (a new channel, a new
episode) still inserts it through the session.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Connection, Insert, Table, Update, bindparam, insert, update


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
            db.execute(_update_statement(table, columns), rows)
            self.statements += 1
            self.rows += len(rows)
        for table, rows in sorted(self._inserts.items(), key=lambda item: item[0].name):
            if rows:
                db.execute(_insert_statement(table), rows)
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
