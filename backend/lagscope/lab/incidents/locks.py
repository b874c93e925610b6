"""The incidents of a replica session holding what the applier needs: a metadata lock (an open
transaction that read the table the source alters) and row locks (``SELECT … FOR UPDATE`` on
the rows the source updates).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from lagscope.lab.incidents.common import (
    SCHEMA,
    Incident,
    _check_replica,
    _session,
    _sql,
    _state_shown,
    _table_name,
    applier_transactions,
    query,
    wait_for,
)
from lagscope.lab.incidents.tables import _create, _fill_everywhere, _table_lifetime
from lagscope.lab.topology import Lab


@contextlib.contextmanager
def metadata_lock(
    lab: Lab, *, replica: str = "replica1", table: str = "mdl_held"
) -> Iterator[Incident]:
    """A session on ``replica`` in an open transaction that read the table (it holds the table's
    metadata lock), then an ALTER on the source: the applier waits for the metadata lock until
    the session ends. ``session_id`` is that session's CONNECTION_ID()."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    query(lab, "source", _sql("INSERT INTO {t} VALUES (1, 0), (2, 0), (3, 0)", table))
    lab.wait_caught_up(timeout_s=60)
    with _table_lifetime(lab, table), _session(lab, replica) as (session, session_id):
        with session.cursor() as cur:
            cur.execute("START TRANSACTION")
            cur.execute(_sql("SELECT COUNT(*) FROM {t}", table))
            cur.fetchall()
        began = time.time()
        query(lab, "source", _sql("ALTER TABLE {t} ADD COLUMN extra INT NULL", table))
        thread = wait_for(
            lambda: _state_shown(lab, replica, r"Waiting for table metadata lock"),
            timeout_s=30,
            what=f"{replica}'s applier to wait for the metadata lock",
        )
        yield Incident(
            "metadata_lock",
            "blocked_by_session",
            replica,
            SCHEMA,
            table,
            session_id,
            details={"lock": "metadata", "applier_thread_id": int(thread["ID"])},
            started_at=began,
        )


@contextlib.contextmanager
def row_lock(
    lab: Lab, *, replica: str = "replica1", table: str = "rows_held", rows: int = 10
) -> Iterator[Incident]:
    """A session on ``replica`` holding ``SELECT … FOR UPDATE`` locks on ``rows`` rows, then an
    UPDATE of those rows on the source: the applier's transaction waits in LOCK WAIT on the
    session's (the applier retries after ``innodb_lock_wait_timeout``, and waits again)."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    with _table_lifetime(lab, table):
        _fill_everywhere(lab, table, max(100, rows))
        with _session(lab, replica) as (session, session_id):
            with session.cursor() as cur:
                cur.execute("START TRANSACTION")
                cur.execute(_sql("SELECT id FROM {t} WHERE id <= %s FOR UPDATE", table), (rows,))
                cur.fetchall()
            began = time.time()
            query(lab, "source", _sql("UPDATE {t} SET n = n + 1 WHERE id <= %s", table), (rows,))
            waiting = wait_for(
                lambda: next(
                    (
                        t
                        for t in applier_transactions(lab, replica)
                        if t["trx_state"] == "LOCK WAIT"
                    ),
                    None,
                ),
                timeout_s=30,
                what=f"{replica}'s applier transaction to wait for the session's row locks",
            )
            blocker = query(
                lab,
                replica,
                "SELECT trx_id FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = %s",
                (session_id,),
            )
            yield Incident(
                "row_lock",
                "blocked_by_session",
                replica,
                SCHEMA,
                table,
                session_id,
                details={
                    "lock": "row",
                    "rows": rows,
                    "applier_thread_id": int(waiting["trx_mysql_thread_id"]),
                    "applier_trx_id": str(waiting["trx_id"]),
                    "blocking_trx_id": str(blocker[0]["trx_id"]) if blocker else None,
                },
                started_at=began,
            )
