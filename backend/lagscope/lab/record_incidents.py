"""Record what MariaDB shows during each lab incident, as a test fixture.

``python -m lagscope.lab.record_incidents [--out tests/fixtures/causes/mariadb1011_incidents.json]
[--state LAB.json] [--samples 4] [--only NAME …]`` plays every incident of
:mod:`lagscope.lab.incidents` on a lab (a fresh one unless ``--state`` names a running one) and,
while each is in force, samples the replica's ``SHOW ALL SLAVES STATUS`` (thread states, delay,
lag), its replication threads in ``information_schema.PROCESSLIST``, ``INNODB_TRX`` and
``INNODB_LOCK_WAITS``, the blocking session's PROCESSLIST row, and the source's binlog-dump
sessions. The state strings in it are what the collectors and the diagnosis match on: recorded
from a real server, not typed from a manual.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import json
import time
from pathlib import Path
from typing import Any

from lagscope.lab import incidents
from lagscope.lab.incidents import SYSTEM_USER, Incident, query
from lagscope.lab.topology import Lab, LabConfig

DEFAULT_OUT = Path("tests/fixtures/causes/mariadb1011_incidents.json")
_TEXT_MAX = 500
_STATUS_COLUMNS = (
    "Connection_name",
    "Slave_IO_State",
    "Slave_IO_Running",
    "Slave_SQL_Running",
    "Slave_SQL_Running_State",
    "Seconds_Behind_Master",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Gtid_IO_Pos",
    "Last_SQL_Errno",
    "Last_SQL_Error",
)


def _plain(value: Any) -> Any:
    """JSON-able, bounded: server text is data."""
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    if isinstance(value, str):
        return value[:_TEXT_MAX]
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date | dt.timedelta):
        return str(value)
    return value


def _rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: _plain(v) for k, v in row.items()} for row in rows]


def sample(lab: Lab, replica: str, session_id: int | None) -> dict[str, Any]:
    """One look at ``replica`` (and the source's dump threads) while an incident is in force."""
    status = [
        {column: _plain(row.get(column)) for column in _STATUS_COLUMNS}
        for row in query(lab, replica, "SHOW ALL SLAVES STATUS")
    ]
    threads = query(
        lab,
        replica,
        "SELECT ID, USER, COMMAND, TIME_MS, STATE, INFO FROM information_schema.PROCESSLIST"
        " WHERE USER = %s ORDER BY ID",
        (SYSTEM_USER,),
    )
    trx = query(
        lab,
        replica,
        "SELECT trx_id, trx_state, trx_started, trx_wait_started, trx_mysql_thread_id,"
        " trx_query, trx_operation_state, trx_tables_in_use, trx_tables_locked,"
        " trx_rows_locked, trx_rows_modified, trx_is_read_only"
        " FROM information_schema.INNODB_TRX ORDER BY trx_started",
    )
    lock_waits = query(lab, replica, "SELECT * FROM information_schema.INNODB_LOCK_WAITS")
    blocker = (
        query(
            lab,
            replica,
            "SELECT ID, USER, COMMAND, TIME, STATE, INFO FROM information_schema.PROCESSLIST"
            " WHERE ID = %s",
            (session_id,),
        )
        if session_id is not None
        else []
    )
    dumps = query(
        lab,
        "source",
        "SELECT ID, COMMAND, STATE FROM information_schema.PROCESSLIST"
        " WHERE COMMAND = 'Binlog Dump' ORDER BY ID",
    )
    return {
        "slave_status": status,
        "applier_threads": _rows(threads),
        "innodb_trx": _rows(trx),
        "innodb_lock_waits": _rows(lock_waits),
        "blocking_session": _rows(blocker),
        "source_binlog_dumps": _rows(dumps),
        "not_received": incidents.not_received(lab, replica),
        "not_applied": incidents.not_applied(lab, replica),
    }


def record_one(lab: Lab, name: str, samples: int, every_s: float) -> dict[str, Any]:
    began = time.monotonic()
    with incidents.incident(lab, name) as made:
        entered_s = time.monotonic() - began
        taken = []
        for i in range(samples):
            if i:
                time.sleep(every_s)  # the recording's cadence, not a wait for a state
            taken.append(sample(lab, made.replica, made.session_id))
        others = {
            replica.name: sample(lab, replica.name, None)
            for replica in lab.replicas
            if replica.name != made.replica
        }
    return {
        "incident": _incident_json(made),
        "entered_after_s": round(entered_s, 2),
        "samples": taken,
        "other_replicas_last": others,
        "undone_after_s": round(time.monotonic() - began - entered_s, 2),
    }


def _incident_json(made: Incident) -> dict[str, Any]:
    data = made.to_json()
    data["details"] = {k: _plain(v) for k, v in data["details"].items()}
    return data


def record(lab: Lab, names: list[str], samples: int, every_s: float) -> dict[str, Any]:
    version = query(lab, "source", "SELECT VERSION() AS v")[0]["v"]
    return {
        "about": (
            "What MariaDB showed during each lab incident (lagscope.lab.incidents), sampled by"
            " lagscope.lab.record_incidents; regenerate with"
            " `python -m lagscope.lab.record_incidents`."
        ),
        "server_version": str(version),
        "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "incidents": {name: record_one(lab, name, samples, every_s) for name in names},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lagscope.lab.record_incidents")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--state", type=Path, help="a running lab's state file (default: start one)"
    )
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--every-s", type=float, default=1.0)
    parser.add_argument("--only", nargs="*", choices=sorted(incidents.INCIDENTS))
    args = parser.parse_args(argv)
    names = args.only or list(incidents.INCIDENTS)
    lab = Lab.load(args.state) if args.state else Lab.start(LabConfig(proxied=("replica2",)))
    try:
        recorded = record(lab, names, args.samples, args.every_s)
    finally:
        if not args.state:
            lab.stop()
    args.out.write_text(json.dumps(recorded, indent=1, sort_keys=False) + "\n")
    print(f"recorded {len(names)} incidents into {args.out}")


if __name__ == "__main__":
    main()
