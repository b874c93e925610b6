"""Whether the table the applier is changing has a key row lookups can use (a table without one
makes every row event a scan): ``information_schema`` for that one table, else InnoDB's own
dictionary by the table's id, cached per table for the connection (never a schema scan, never
``SHOW CREATE TABLE``: replication-manager#728).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lagscope.collectors.cause_readings.common import CauseMemory, Record, _has, sql_string
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import InstanceSnapshot, RowEventTable
from lagscope.collectors.values import as_int, as_text


def unchecked_tables(previous: InstanceSnapshot, memory: CauseMemory) -> list[tuple[str, str]]:
    """Tables the previous poll's row events named whose keys this connection has not read."""
    tables = previous.evidence.tables if previous.evidence else ()
    wanted = {(t.schema, t.table) for t in tables if (t.schema, t.table) not in memory.keys}
    return sorted(wanted)


def table_keys_statements(schema: str, table: str) -> tuple[str, str] | None:
    """One named table (``TABLES`` tells "no index" from "not visible to this user") and its
    indexes, each table read alone; the equalities on both names let the server open that one
    table only."""
    s, t = sql_string(schema), sql_string(table)
    if s is None or t is None:
        return None
    where = f"WHERE TABLE_SCHEMA = {s} AND TABLE_NAME = {t}"
    return (
        "SELECT TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name "  # noqa: S608 - literals quoted by sql_string
        f"FROM information_schema.TABLES {where}",
        "SELECT TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name, "  # noqa: S608 - literals quoted by sql_string
        "INDEX_NAME AS index_name, NON_UNIQUE AS non_unique, NULLABLE AS nullable "
        f"FROM information_schema.STATISTICS {where}",
    )


def _name(r: Mapping[str, Any]) -> tuple[str, str]:
    return as_text(r.get("table_schema")), as_text(r.get("table_name"))


def table_index_records(parts: Sequence[ResultSet]) -> list[Record]:
    """Index rows per table. The tables' own answers (no ``index_name``) stand for the
    ``TABLES LEFT JOIN STATISTICS`` the server is not asked to make: a table it shows
    without an index gives one row without one; with no such answer (InnoDB's dictionary),
    the index rows are all there is. Empty answers (a ``SET``) carry nothing."""
    tables = [r for p in parts if p.columns and not _has(p, "index_name") for r in p.records()]
    indexes = [r for p in parts if _has(p, "index_name") for r in p.records()]
    if not tables:
        return indexes
    by_table: dict[tuple[str, str], list[Record]] = {}
    for r in indexes:
        by_table.setdefault(_name(r), []).append(r)
    found: list[Record] = []
    for t in tables:
        rows = by_table.get(_name(t))
        found.extend(rows or [{**t, "index_name": None, "non_unique": None, "nullable": None}])
    return found


def _rows_by_table(records: Iterable[Record]) -> dict[tuple[str, str], list[Record]]:
    rows: dict[tuple[str, str], list[Record]] = {}
    for r in records:
        rows.setdefault(_name(r), []).append(r)
    return rows


def _keys(rows: Iterable[Mapping[str, Any]]) -> tuple[bool, bool]:
    """(has primary key, has a unique key over NOT NULL columns only) from index rows."""
    unique: dict[str, bool] = {}  # index → every column NOT NULL
    for r in rows:
        index = as_text(r.get("index_name"))
        if not index or as_int(r.get("non_unique")):
            continue
        not_null = as_text(r.get("nullable")).upper() != "YES"
        unique[index] = unique.get(index, True) and not_null
    return "PRIMARY" in unique, any(unique.values())


def parse_table_keys(
    result: ResultSet, asked: Iterable[tuple[str, str]], memory: CauseMemory
) -> None:
    """Cache, per asked table, (has primary key, has a unique key over NOT NULL columns only),
    or None when the server shows no such table (this user may not see it). The answers of
    several tables arrive together; their name columns tell them apart."""
    rows = _rows_by_table(table_index_records(result.each()))
    for name in asked:
        memory.keys[name] = _keys(rows[name]) if name in rows else None


# InnoDB's own dictionary answers for a table the user has no privilege on (a monitoring user
# rarely has SELECT on the application's tables, and ``information_schema.TABLES`` hides those):
# it needs PROCESS only, which the applier readings need anyway. InnoDB clusters a table on its
# primary key, else on its first UNIQUE index over NOT NULL columns, else on a hidden row id
# (GEN_CLUST_INDEX): the clustered index alone (TYPE bit 1; bit 2 = unique) says both answers.
_DICTIONARY_TABLES = {
    "old": ("INNODB_SYS_TABLES", "INNODB_SYS_INDEXES"),  # MariaDB, MySQL 5.7
    "new": ("INNODB_TABLES", "INNODB_INDEXES"),  # MySQL 8.0+
}
# The table's id, from the first statement to the second of the same batch (session scope): the
# dictionary's indexes name their table by id only, and a statement reading both tables is the
# join this module never sends. Set on every use (NULL when the table is not found), so a value
# from an earlier poll is never read.
_TABLE_ID_VARIABLE = "@lagscope_table_id"


def table_dictionary_statements(
    dialect: Dialect, schema: str, table: str
) -> tuple[str, str] | None:
    """The clustered index of one InnoDB table, from InnoDB's dictionary (``db/table`` names;
    a name InnoDB stores encoded does not match: the keys then stay unknown): the table's id,
    then that id's clustered index."""
    s, t = sql_string(schema), sql_string(table)
    if s is None or t is None:
        return None
    old = dialect.product == "mariadb" or dialect.name == "mysql-5.7"
    tables, indexes = _DICTIONARY_TABLES["old" if old else "new"]
    return (
        f"SET {_TABLE_ID_VARIABLE} = (SELECT TABLE_ID FROM information_schema.{tables} "  # noqa: S608 - literals quoted by sql_string
        f"WHERE NAME = CONCAT({s}, '/', {t}))",
        f"SELECT {s} AS table_schema, {t} AS table_name, NAME AS index_name, "  # noqa: S608 - literals quoted by sql_string
        "IF(TYPE & 3 = 3, 0, 1) AS non_unique, 'NO' AS nullable "
        f"FROM information_schema.{indexes} "
        f"WHERE TABLE_ID = {_TABLE_ID_VARIABLE} AND TYPE & 1 = 1",
    )


def parse_table_dictionary(
    result: ResultSet, memory: CauseMemory, asked: Iterable[tuple[str, str]] = ()
) -> None:
    """Fill in the keys of the tables no earlier check answered for this user; ``asked`` tables
    the dictionary does not show either are remembered as unknown."""
    asked = list(asked)
    for name, rows in _rows_by_table(table_index_records(result.each())).items():
        if name in asked or (name in memory.keys and memory.keys[name] is None):
            memory.keys[name] = _keys(rows)
    for name in asked:
        memory.keys.setdefault(name, None)


def hidden_tables(tables: Iterable[RowEventTable], memory: CauseMemory) -> list[str]:
    return [
        f"{t.schema}.{t.table}"
        for t in tables
        if (t.schema, t.table) in memory.keys and memory.keys[(t.schema, t.table)] is None
    ]
