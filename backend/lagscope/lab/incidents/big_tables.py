"""The incidents of one heavy statement on a big table: a large transaction, a long copying
``ALTER TABLE``, and a bulk update of a keyless table that makes every row event a scan on the
replica. Each table is sized to this machine so the applier stays busy past the diagnosis's
thresholds.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from typing import Any

from lagscope.lab.incidents.common import (
    ALTER_COST,
    LARGE_TRX_LASTING_S,
    LONG_ALTER_LASTING_S,
    NO_KEY_LASTING_S,
    SCHEMA,
    Incident,
    _check_replica,
    _source_gtid,
    _sql,
    _state_shown,
    _table_name,
    applier_threads,
    applier_transactions,
    query,
    wait_for,
)
from lagscope.lab.incidents.tables import (
    _create,
    _fill_everywhere,
    _fill_for,
    _scan_s_per_row,
    _table_lifetime,
)
from lagscope.lab.servers import LabError
from lagscope.lab.topology import Lab


@contextlib.contextmanager
def large_transaction(
    lab: Lab,
    *,
    rows: int | None = None,
    lasting_s: float = LARGE_TRX_LASTING_S,
    replica: str = "replica1",
    table: str = "large_trx",
) -> Iterator[Incident]:
    """One ``UPDATE`` of every row of a table on the source; returns once ``replica``'s applier
    has the transaction open (its INNODB_TRX row), which it then applies for several seconds.
    ``rows=None``: as many rows as this machine's replicas take about ``lasting_s`` to apply
    (at least 300,000; with the index on n a quiet 2-core box applied a million in 5 s)."""
    _check_replica(lab, replica)
    table = _table_name(table)
    # The index on n makes each changed row cost more to apply than to fill (measured on the
    # lab: 1.8 times), so a long apply needs fewer rows filled first.
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL, KEY (n)")
    with _table_lifetime(lab, table):
        if rows is None:
            rows = _fill_for(lab, table, lasting_s, cost=1.5, least=300_000)
        else:
            _fill_everywhere(lab, table, rows)
        began = time.monotonic()
        query(lab, "source", _sql("UPDATE {t} SET n = n + 1", table))
        source_s = time.monotonic() - began
        committed = time.time()  # replicated from its commit on
        gtid = _source_gtid(lab)
        trx = wait_for(
            lambda: next(
                (t for t in applier_transactions(lab, replica) if t["trx_rows_modified"]), None
            ),
            timeout_s=60,
            what=f"{replica}'s applier to start the {rows}-row transaction",
        )
        yield Incident(
            "large_transaction",
            "large_transaction",
            replica,
            SCHEMA,
            table,
            details={
                "rows": rows,
                "gtid": gtid,
                "source_seconds": round(source_s, 3),
                "applier_thread_id": int(trx["trx_mysql_thread_id"]),
            },
            started_at=committed,
        )


@contextlib.contextmanager
def long_alter(
    lab: Lab,
    *,
    rows: int | None = None,
    lasting_s: float = LONG_ALTER_LASTING_S,
    replica: str = "replica1",
    table: str = "long_alter",
) -> Iterator[Incident]:
    """``ALTER TABLE … ALGORITHM=COPY`` of a big table on the source; returns once ``replica``'s
    applier shows the ALTER (it copies the table for seconds). ``rows=None``: as many rows as
    this machine's replicas take about ``lasting_s`` to copy (at least 200,000)."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    with _table_lifetime(lab, table):
        if rows is None:
            rows = _fill_for(lab, table, lasting_s, cost=ALTER_COST, least=200_000)
        else:
            _fill_everywhere(lab, table, rows)
        statement = _sql(
            "ALTER TABLE {t} ADD COLUMN note CHAR(64) AS (SHA2(id, 256)) STORED, ALGORITHM=COPY",
            table,
        )
        query(lab, "source", statement)
        committed = time.time()  # binlogged once done on the source
        thread = wait_for(
            lambda: next(
                (
                    t
                    for t in applier_threads(lab, replica)
                    if str(t["INFO"] or "").upper().startswith("ALTER TABLE")
                ),
                None,
            ),
            timeout_s=60,
            what=f"{replica}'s applier to run the ALTER",
        )
        yield Incident(
            "long_alter",
            "ddl",
            replica,
            SCHEMA,
            table,
            details={"rows": rows, "statement": statement, "applier_thread_id": int(thread["ID"])},
            started_at=committed,
        )


@contextlib.contextmanager
def no_primary_key(
    lab: Lab,
    *,
    rows: int | None = None,
    lasting_s: float = NO_KEY_LASTING_S,
    replica: str = "replica1",
    table: str = "no_key",
) -> Iterator[Incident]:
    """A table without any key, all its rows updated in one statement on the source (the lab's
    binlog_format is ROW): the replica looks up each row by scanning the table, about rows²/2
    row reads. ``rows=None``: as many rows as ``replica`` takes about ``lasting_s`` to scan
    through (a scan of the table on it is timed first; at least 4,000 rows). Returns once the
    applier shows ``find_row()`` on a RUNNING transaction."""
    _check_replica(lab, replica)
    table = _table_name(table)
    fmt = query(lab, "source", "SELECT @@global.binlog_format AS fmt")[0]["fmt"]
    if str(fmt).upper() != "ROW":
        raise LabError(f"the source's binlog_format is {fmt}, not ROW: no row events to scan for")
    _create(lab, table, "id INT UNSIGNED NOT NULL, n INT NOT NULL")
    with _table_lifetime(lab, table):
        if rows is None:
            least = 4_000
            _fill_everywhere(lab, table, least)
            # rows²/2 row reads at a scan's cost per row read (the applier's reads cost 1.3
            # times a SELECT's on the lab: the real scan lasts a little longer).
            per_read_s = _scan_s_per_row(lab, replica, table, least)
            rows = min(200_000, max(least, int(math.sqrt(2 * lasting_s / max(per_read_s, 1e-12)))))
            if rows > least:
                _fill_everywhere(lab, table, rows, first=least + 1)
        else:
            _fill_everywhere(lab, table, rows)
        query(lab, "source", _sql("UPDATE {t} SET n = n + 1", table))
        committed = time.time()

        def scanning() -> dict[str, Any] | None:
            thread = _state_shown(lab, replica, r"find_row\(\)")
            running = [t for t in applier_transactions(lab, replica) if t["trx_state"] == "RUNNING"]
            return thread if thread and running else None

        thread = wait_for(scanning, timeout_s=60, what=f"{replica}'s applier to scan for rows")
        yield Incident(
            "no_primary_key",
            "no_usable_key",
            replica,
            SCHEMA,
            table,
            details={"rows": rows, "applier_thread_id": int(thread["ID"])},
            started_at=committed,
        )
