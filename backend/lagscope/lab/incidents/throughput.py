"""The incidents where the replica cannot keep up with the source's rate: a serial applier behind
group-committing writers, relay log fsyncs on every queued event, and a replica fsyncing every
applied transaction; with the settings they change and put back.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from lagscope.errors import InvalidInput
from lagscope.lab.incidents.common import (
    SCHEMA,
    Incident,
    _check_replica,
    _sql,
    _table_name,
    not_applied,
    not_received,
    query,
    wait_for,
)
from lagscope.lab.incidents.load import _Load
from lagscope.lab.incidents.tables import _create, _table_lifetime
from lagscope.lab.servers import LabError
from lagscope.lab.topology import Lab


@contextlib.contextmanager
def serial_apply(
    lab: Lab,
    *,
    threads: int = 16,
    replica: str = "replica1",
    table: str = "group_commit",
    min_ratio: float = 1.5,
) -> Iterator[Incident]:
    """``threads`` sessions committing small inserts on the source with ``sync_binlog=1`` (so
    commits wait for the binlog's fsync together and group), while ``replica`` applies serially
    (``slave_parallel_threads=0``; set for the incident if it was not). Returns once the source's
    ``Binlog_commits / Binlog_group_commits`` over a second exceeds ``min_ratio`` and the
    replica's apply backlog grows; the load runs until leaving."""
    _check_replica(lab, replica)
    table = _table_name(table)
    if not 1 <= threads <= 64:
        raise InvalidInput(f"threads must be 1…64, not {threads}")
    _create(lab, table, "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL")
    sync_binlog = int(query(lab, "source", "SELECT @@global.sync_binlog AS v")[0]["v"])
    parallel = int(query(lab, replica, "SELECT @@global.slave_parallel_threads AS v")[0]["v"])
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        if parallel != 0:
            _set_parallel_threads(lab, replica, 0)
            undo.callback(_set_parallel_threads, lab, replica, parallel)
        query(lab, "source", "SET GLOBAL sync_binlog = 1")
        undo.callback(query, lab, "source", "SET GLOBAL sync_binlog = %s", (sync_binlog,))
        began = time.time()
        load = undo.enter_context(
            _Load(lab, _sql("INSERT INTO {t} (n) VALUES (1)", table), threads=threads)
        )
        ratio = wait_for(
            lambda: _group_commit_ratio(lab, load, window_s=1.0, above=min_ratio),
            timeout_s=60,
            what=f"the source to commit more than {min_ratio} transactions per binlog group",
        )
        # Grouped commits are not yet lag: with 8 committers a fast box's serial applier kept
        # within a second of the source. Returns once the backlog grows.
        wait_for(
            lambda: _grew(lambda: not_applied(lab, replica), by=200),
            timeout_s=60,
            what=f"{replica}'s apply backlog to grow",
        )
        yield Incident(
            "serial_apply",
            "serial_apply",
            replica,
            SCHEMA,
            table,
            details={"threads": threads, "commits_per_group": round(ratio, 2)},
            started_at=began,
        )


@contextlib.contextmanager
def relay_log_durability(
    lab: Lab, *, replica: str = "replica1", threads: int = 4, table: str = "relay_sync"
) -> Iterator[Incident]:
    """``sync_relay_log=1`` and ``sync_master_info=1`` on every replica (the IO thread fsyncs
    each event it queues) under a write load of ``threads`` committers on the source: the near
    and the far replica fall behind on receiving alike. Returns once ``replica`` has a receive
    backlog that grew over a poll; the settings and the load stay until leaving."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL")
    names = [r.name for r in lab.replicas if lab.is_running(r.name)]
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        for name in names:
            before = query(
                lab, name, "SELECT @@global.sync_relay_log AS r, @@global.sync_master_info AS m"
            )[0]
            undo.callback(_set_relay_sync, lab, name, int(before["r"]), int(before["m"]))
            _set_relay_sync(lab, name, 1, 1)
        began = time.time()
        undo.enter_context(
            _Load(lab, _sql("INSERT INTO {t} (n) VALUES (1)", table), threads=threads)
        )
        backlog = wait_for(
            lambda: _grew(lambda: not_received(lab, replica), by=20),
            timeout_s=60,
            what=f"{replica}'s receive backlog to grow with sync_relay_log=1",
        )
        yield Incident(
            "relay_log_durability",
            "relay_log_durability",
            replica,
            SCHEMA,
            table,
            details={"threads": threads, "not_received_at_start": backlog, "replicas": names},
            started_at=began,
        )


def _set_relay_sync(lab: Lab, replica: str, relay_log: int, master_info: int) -> None:
    with lab.connect(replica) as conn, conn.cursor() as cur:
        cur.execute("SET GLOBAL sync_relay_log = %s", (relay_log,))
        cur.execute("SET GLOBAL sync_master_info = %s", (master_info,))


def _grew(read: Callable[[], int], by: int) -> int | None:
    """``read()`` twice, a poll apart: the second value when it is ``by`` or more above the
    first (a backlog that grows, not one left over)."""
    first = read()
    time.sleep(0.5)  # the measuring interval of a growth rate, not a wait for a state
    second = read()
    return second if second >= first + by else None


@contextlib.contextmanager
def durable_apply(
    lab: Lab, *, replica: str = "replica1", threads: int = 4, table: str = "durable_apply"
) -> Iterator[Incident]:
    """The source commits cheaply (``innodb_flush_log_at_trx_commit=2``, ``sync_binlog=0``)
    from ``threads`` committers while ``replica`` applies serially and durably
    (``slave_parallel_threads=0``, ``innodb_flush_log_at_trx_commit=1``, ``sync_binlog=1``: each
    applied transaction waits for its fsyncs). Returns once its apply backlog grows."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL")
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        _override(lab, "source", undo, innodb_flush_log_at_trx_commit=2, sync_binlog=0)
        _override(lab, replica, undo, innodb_flush_log_at_trx_commit=1, sync_binlog=1)
        parallel = int(query(lab, replica, "SELECT @@global.slave_parallel_threads AS v")[0]["v"])
        if parallel != 0:
            _set_parallel_threads(lab, replica, 0)
            undo.callback(_set_parallel_threads, lab, replica, parallel)
        began = time.time()
        undo.enter_context(
            _Load(lab, _sql("INSERT INTO {t} (n) VALUES (1)", table), threads=threads)
        )
        backlog = wait_for(
            lambda: _grew(lambda: not_applied(lab, replica), by=50),
            timeout_s=60,
            what=f"{replica}'s apply backlog to grow under durable serial apply",
        )
        yield Incident(
            "durable_apply",
            "durable_apply",
            replica,
            SCHEMA,
            table,
            details={"threads": threads, "not_applied_at_start": backlog},
            started_at=began,
        )


_OVERRIDABLE = frozenset({"innodb_flush_log_at_trx_commit", "sync_binlog"})


def _override(lab: Lab, name: str, undo: contextlib.ExitStack, **settings: int) -> None:
    """SET GLOBAL each of ``settings`` on ``name``; the old values are put back by ``undo``."""
    for variable, value in settings.items():
        if variable not in _OVERRIDABLE:  # names go into SQL: only known ones
            raise InvalidInput(f"not a setting incidents change: {variable}")
        old = query(lab, name, f"SELECT @@global.{variable} AS v")[0]["v"]
        undo.callback(query, lab, name, f"SET GLOBAL {variable} = %s", (int(old),))
        query(lab, name, f"SET GLOBAL {variable} = %s", (int(value),))


def _group_commit_ratio(lab: Lab, load: _Load, window_s: float, above: float) -> float | None:
    if load.errors:
        raise LabError(f"the committers failed: {load.errors[0]}") from load.errors[0]
    first = binlog_commits(lab)
    # A measuring window, not a wait for state: the ratio is a rate over time.
    time.sleep(window_s)
    second = binlog_commits(lab)
    groups = second[1] - first[1]
    ratio = (second[0] - first[0]) / groups if groups > 0 else 0.0
    return ratio if ratio > above else None


def binlog_commits(lab: Lab) -> tuple[int, int]:
    """The source's ``(Binlog_commits, Binlog_group_commits)``."""
    rows = query(
        lab,
        "source",
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Binlog_commits', 'Binlog_group_commits')",
    )
    values = {str(r["Variable_name"]): int(r["Value"]) for r in rows}
    return values["Binlog_commits"], values["Binlog_group_commits"]


def _set_parallel_threads(lab: Lab, replica: str, threads: int) -> None:
    with lab.connect(replica) as conn, conn.cursor() as cur:
        cur.execute("STOP ALL SLAVES")
        cur.execute("SET GLOBAL slave_parallel_threads = %s", (threads,))
        cur.execute("START ALL SLAVES")
