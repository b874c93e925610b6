"""Tracked server parameters: parallel apply, durability, group commit.

The list and its names per flavor and version: docs/replication.md, "Tracked parameters".

SQL:
- once per connection, discovery: ``SELECT VARIABLE_NAME, VARIABLE_VALUE FROM
  performance_schema.global_variables`` (MySQL) / ``information_schema.GLOBAL_VARIABLES``
  (MariaDB), the whole catalog (~650 rows, once): it tells which names exist on this server
  (old/new names, removed variables) and which are booleans (SHOW-style ``ON``/``OFF``);
- every poll: ``SELECT @@global.a, @@global.b, …`` for the names found. About 5× less
  server CPU than a filtered ``SHOW GLOBAL VARIABLES``, cheap enough to catch a change within one
  poll.

A parameter is reported under the name the server uses (what an operator would ``SET GLOBAL``),
values are text (``LOGICAL_CLOCK`` and ``optimistic`` stay strings; booleans read as ``ON``/``OFF``
as in ``SHOW VARIABLES``). A name the server lacks is simply absent. Only names the server itself
listed ever reach the ``@@global`` SELECT, so no SQL is built from user text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.values import as_text


@dataclass(frozen=True, slots=True)
class TrackedParam:
    """One tuning knob; candidate server names in order of preference per product."""

    concept: str
    mysql: tuple[str, ...] = ()
    mariadb: tuple[str, ...] = ()


def _both(name: str) -> TrackedParam:
    return TrackedParam(name, (name,), (name,))


TRACKED_PARAMS: tuple[TrackedParam, ...] = (
    # Parallel apply. MySQL renamed slave_* → replica_* in 8.0.26 (both listed there, prefer new);
    # MariaDB's pool is slave_parallel_threads (slave_parallel_workers is its alias).
    TrackedParam(
        "parallel_workers",
        ("replica_parallel_workers", "slave_parallel_workers"),
        ("slave_parallel_threads",),
    ),
    TrackedParam("parallel_type", ("replica_parallel_type", "slave_parallel_type")),
    TrackedParam(
        "preserve_commit_order",
        ("replica_preserve_commit_order", "slave_preserve_commit_order"),
    ),
    TrackedParam("parallel_mode", (), ("slave_parallel_mode",)),
    TrackedParam("parallel_max_queued", (), ("slave_parallel_max_queued",)),
    TrackedParam("domain_parallel_threads", (), ("slave_domain_parallel_threads",)),
    TrackedParam("dependency_tracking", ("binlog_transaction_dependency_tracking",)),
    TrackedParam("write_set_extraction", ("transaction_write_set_extraction",)),
    # Group commit.
    TrackedParam("group_commit_sync_delay", ("binlog_group_commit_sync_delay",)),
    TrackedParam("group_commit_sync_no_delay_count", ("binlog_group_commit_sync_no_delay_count",)),
    TrackedParam("commit_wait_count", (), ("binlog_commit_wait_count",)),
    TrackedParam("commit_wait_usec", (), ("binlog_commit_wait_usec",)),
    # Durability.
    _both("sync_binlog"),
    _both("innodb_flush_log_at_trx_commit"),
    _both("innodb_flush_log_at_timeout"),
    _both("sync_relay_log"),
    _both("sync_relay_log_info"),
    TrackedParam(
        "sync_source_info", ("sync_source_info", "sync_master_info"), ("sync_master_info",)
    ),
    TrackedParam("master_info_repository", ("master_info_repository",)),
    TrackedParam("relay_log_info_repository", ("relay_log_info_repository",)),
    _both("innodb_doublewrite"),
    _both("innodb_flush_method"),
    _both("innodb_flush_neighbors"),
    _both("innodb_flush_sync"),
    _both("innodb_io_capacity"),
    _both("innodb_io_capacity_max"),
    # Replication shape.
    TrackedParam(
        "log_replica_updates", ("log_replica_updates", "log_slave_updates"), ("log_slave_updates",)
    ),
    _both("binlog_format"),
    _both("binlog_row_image"),
    _both("read_only"),
    TrackedParam("super_read_only", ("super_read_only",)),
    TrackedParam("gtid_mode", ("gtid_mode",)),
    TrackedParam("gtid_strict_mode", (), ("gtid_strict_mode",)),
    TrackedParam(
        "replica_net_timeout", ("replica_net_timeout", "slave_net_timeout"), ("slave_net_timeout",)
    ),
    # Semi-sync: only one plugin generation is loaded on MySQL; MariaDB has it built in.
    TrackedParam(
        "semi_sync_source_enabled",
        ("rpl_semi_sync_source_enabled", "rpl_semi_sync_master_enabled"),
        ("rpl_semi_sync_master_enabled",),
    ),
    TrackedParam(
        "semi_sync_replica_enabled",
        ("rpl_semi_sync_replica_enabled", "rpl_semi_sync_slave_enabled"),
        ("rpl_semi_sync_slave_enabled",),
    ),
)

# A server variable name: what discovery may hand on to the @@global SELECT.
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def discovery_statement(dialect: Dialect) -> str:
    return f"SELECT VARIABLE_NAME, VARIABLE_VALUE FROM {dialect.variables_table}"  # noqa: S608 - constant table name


@dataclass(frozen=True, slots=True)
class ParamPlan:
    """Which variables this server has, in poll order, and which of them are booleans."""

    names: tuple[str, ...]
    booleans: frozenset[str]
    missing: tuple[str, ...]  # requested extra names the server does not have

    def statement(self) -> str | None:
        """One text column, the values joined by a unit separator (NUL for NULL): read every
        poll, a change is on the timeline one poll later. The client decodes one column instead
        of one per variable: 4× less CPU than ``SELECT @@global.a, @@global.b, …`` (40 µs
        against 170 µs for 27 variables, measured on MariaDB 10.11), so every poll costs no
        more than the wide SELECT every fifth did."""
        if not self.names:
            return None
        values = ", ".join(f"IFNULL(@@global.{n}, CHAR(0))" for n in self.names)
        return f"SELECT CONCAT_WS(CHAR(31), {values})"

    def parse(self, result: ResultSet) -> Mapping[str, str | None] | None:
        """The joined column, or (a recorded answer) one column per variable."""
        row: Sequence[Any] = result.rows[0] if result.rows else (None,) * len(self.names)
        if len(row) == 1 and row[0] is not None:
            row = [None if v == _NULL else _joined_text(v) for v in as_text(row[0]).split(_SEP)]
        if len(row) != len(self.names):
            return None  # a value holding the separator: unreadable, never misattributed
        return MappingProxyType(
            {n: _param_text(n in self.booleans, v) for n, v in zip(self.names, row, strict=True)}
        )


def plan_params(
    product: Literal["mysql", "mariadb"],
    catalog: ResultSet,
    extra: Iterable[str] = (),
    tracked: Sequence[TrackedParam] = TRACKED_PARAMS,
) -> ParamPlan:
    """Choose the names to poll from the server's own catalog (the discovery result)."""
    listed = {as_text(r[0]).lower(): as_text(r[1]) for r in catalog.rows}
    names: list[str] = []
    for param in tracked:
        candidates = param.mysql if product == "mysql" else param.mariadb
        found = next((c for c in candidates if c in listed), None)
        if found is not None and found not in names:
            names.append(found)
    missing: list[str] = []
    for name in extra:
        wanted = name.strip().lower()
        if wanted in listed and _NAME_RE.match(wanted):
            if wanted not in names:
                names.append(wanted)
        else:
            missing.append(name)
    booleans = frozenset(n for n in names if listed[n].upper() in ("ON", "OFF"))
    return ParamPlan(tuple(names), booleans, tuple(missing))


_SEP, _NULL = "\x1f", "\x00"
_DECIMAL = re.compile(r"^-?[0-9]+\.[0-9]+$")


def _joined_text(value: str) -> str:
    """A value as the typed column read it: a DOUBLE is text in CONCAT (``10.000000``) but a
    float through the driver (``10.0``); the stored values keep the driver's form, so an
    upgrade records no change."""
    return str(float(value)) if _DECIMAL.match(value) else value


def _param_text(boolean: bool, value: Any) -> str | None:
    if value is None:
        return None
    if boolean and isinstance(value, int):
        return "ON" if value else "OFF"
    if boolean and value in ("0", "1"):  # MySQL's booleans in a text context
        return "ON" if value == "1" else "OFF"
    return as_text(value)


def concept_of(name: str) -> str | None:
    """The flavor-neutral concept of a server variable name (for comparisons across flavors)."""
    for param in TRACKED_PARAMS:
        if name in param.mysql or name in param.mariadb:
            return param.concept
    return None
