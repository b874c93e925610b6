"""Time spent in fsync per durability file class, from ``performance_schema``: the
relaxed-flush prediction's input (docs/prediction.md, "Relaxed flush").

SQL: ``SELECT EVENT_NAME, COUNT_MISC, SUM_TIMER_MISC FROM
performance_schema.file_summary_by_event_name WHERE EVENT_NAME IN (<the classes below>)``.
``MISC`` is every file operation that is neither a read nor a write: sync, open, close, stat …
On these append-only files it is almost all ``fsync``, which is what makes it the fsync cost:
the counters (``Innodb_data_fsyncs``, ``Binlog_group_commits``) say how many fsyncs a
transaction costs, these say how long one takes on this server's disk.

The classes: the binary log and the relay log on both flavors, InnoDB's redo log on MySQL.
MariaDB 10.8+ does not instrument its redo log (``ib_logfile0``): there the prediction uses the
binary log's latency for the redo fsyncs the counters count (analysis/durability.py).

Present only where ``performance_schema`` is on with the ``wait/io/file/%`` instruments: the
default on MySQL 5.7+, off by default on MariaDB (``performance_schema=ON``). When it is off
the table answers no rows and nothing is read; a user without ``SELECT`` on
``performance_schema`` is refused, which disables this reading for the connection only.
The timer is in picoseconds; the values join the counters under the names below, so the rates
are computed like every other counter's.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from lagscope.collectors.executor import ResultSet
from lagscope.collectors.values import as_int, as_text

# performance_schema event name → the counters' prefix.
FILE_CLASSES: Mapping[str, str] = MappingProxyType(
    {
        "wait/io/file/sql/binlog": "fsync_binlog",
        "wait/io/file/sql/relaylog": "fsync_relaylog",
        "wait/io/file/innodb/innodb_log_file": "fsync_redo",
    }
)
# Suffixes: operations, and their time in picoseconds.
OPS, PICOS = "_ops", "_ps"
COUNTER_NAMES: tuple[str, ...] = tuple(
    prefix + suffix for prefix in FILE_CLASSES.values() for suffix in (OPS, PICOS)
)


def statement() -> str:
    names = ", ".join(f"'{name}'" for name in FILE_CLASSES)
    return (
        "SELECT EVENT_NAME, COUNT_MISC, SUM_TIMER_MISC "  # noqa: S608 - constants of this module
        "FROM performance_schema.file_summary_by_event_name "
        f"WHERE EVENT_NAME IN ({names})"
    )


def parse(result: ResultSet) -> Mapping[str, int]:
    """The pseudo-counters of the classes this server answered for (none with P_S off)."""
    found: dict[str, int] = {}
    for raw_name, raw_ops, raw_picos in result.rows:
        prefix = FILE_CLASSES.get(as_text(raw_name))
        ops, picos = as_int(raw_ops), as_int(raw_picos)
        if prefix is None or ops is None or picos is None:
            continue
        found[prefix + OPS] = ops
        found[prefix + PICOS] = picos
    return MappingProxyType(found)
