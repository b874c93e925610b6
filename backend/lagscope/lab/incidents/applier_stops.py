"""The incidents where the applier is held on purpose or by an error: a configured delay
(``MASTER_DELAY``), the SQL thread stopped by hand, and a duplicate-key error on a row written on
the replica alone (repaired on leaving).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

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
from lagscope.lab.incidents.tables import _create, _table_lifetime
from lagscope.lab.topology import Lab


@contextlib.contextmanager
def delayed(
    lab: Lab, *, replica: str = "replica1", delay_s: int = 30, table: str = "delayed"
) -> Iterator[Incident]:
    """``CHANGE MASTER TO MASTER_DELAY=delay_s`` on ``replica``, and one write on the source so
    the applier has an event to hold back; undone with MASTER_DELAY=0 (and a catch-up wait)."""
    _check_replica(lab, replica)
    table = _table_name(table)
    if not 1 <= delay_s <= 3600:
        raise InvalidInput(f"delay_s must be 1…3600, not {delay_s}")
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, at DATETIME(6) NOT NULL")
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        _set_master_delay(lab, replica, delay_s)
        undo.callback(_set_master_delay, lab, replica, 0)
        began = time.time()
        query(lab, "source", _sql("INSERT INTO {t} VALUES (1, NOW(6))", table))
        status = wait_for(
            lambda: next(
                (
                    s
                    for s in query(lab, replica, "SHOW ALL SLAVES STATUS")
                    if int(s["SQL_Delay"] or 0) == delay_s
                    and "MASTER_DELAY" in str(s["Slave_SQL_Running_State"] or "")
                ),
                None,
            ),
            timeout_s=30,
            what=f"{replica} to hold events back by MASTER_DELAY",
        )
        yield Incident(
            "delayed",
            "delayed_by_design",
            replica,
            SCHEMA,
            table,
            details={"delay_s": delay_s, "sql_state": str(status["Slave_SQL_Running_State"])},
            started_at=began,
        )


def _set_master_delay(lab: Lab, replica: str, delay_s: int) -> None:
    with lab.connect(replica) as conn, conn.cursor() as cur:
        cur.execute("STOP SLAVE")
        cur.execute("CHANGE MASTER TO MASTER_DELAY = %s", (int(delay_s),))
        cur.execute("START SLAVE")


@contextlib.contextmanager
def stopped(lab: Lab, *, replica: str = "replica1", table: str = "stopped") -> Iterator[Incident]:
    """``STOP SLAVE SQL_THREAD`` on ``replica`` and one write on the source: received, not
    applied, and the SQL thread not running. ``START SLAVE`` on leaving."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        began = time.time()
        query(lab, replica, "STOP SLAVE SQL_THREAD")
        undo.callback(query, lab, replica, "START SLAVE")
        query(lab, "source", _sql("INSERT INTO {t} VALUES (1, 0)", table))
        wait_for(
            lambda: not_received(lab, replica) == 0 and not_applied(lab, replica) > 0,
            timeout_s=30,
            what=f"{replica} to receive the write it does not apply",
        )
        yield Incident("stopped", "stopped", replica, SCHEMA, table, started_at=began)


@contextlib.contextmanager
def broken(lab: Lab, *, replica: str = "replica1", table: str = "broken") -> Iterator[Incident]:
    """A row written on ``replica`` alone (not logged), then the same key inserted on the
    source: the SQL thread stops with a duplicate-key error (1062). On leaving the replica's
    stray row is removed and the SQL thread started again, which applies the source's row."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        with lab.connect(replica) as conn, conn.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute(_sql("INSERT INTO {t} VALUES (1, -1)", table))
        undo.callback(_repair, lab, replica, table)
        began = time.time()
        query(lab, "source", _sql("INSERT INTO {t} VALUES (1, 0)", table))
        status = wait_for(
            lambda: next(
                (
                    s
                    for s in query(lab, replica, "SHOW ALL SLAVES STATUS")
                    if s["Slave_SQL_Running"] == "No" and s["Last_SQL_Errno"]
                ),
                None,
            ),
            timeout_s=30,
            what=f"{replica}'s SQL thread to stop on the duplicate key",
        )
        yield Incident(
            "broken",
            "broken",
            replica,
            SCHEMA,
            table,
            details={
                "errno": int(status["Last_SQL_Errno"]),
                "error": str(status["Last_SQL_Error"])[:500],
            },
            started_at=began,
        )


def _repair(lab: Lab, replica: str, table: str) -> None:
    with lab.connect(replica) as conn, conn.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute(_sql("DELETE FROM {t} WHERE id = 1", table))
        cur.execute("START SLAVE")
