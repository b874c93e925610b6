"""An applier waiting on a lock no earlier rule named is named on the live lab, by the real
pipeline, with the server's own words and the session that could hold it.

The locks: ``FLUSH TABLES WITH READ LOCK`` in a session on replica1 (what a backup tool takes),
and ``BACKUP STAGE BLOCK_COMMIT`` (what mariadb-backup takes). MariaDB 10.4+ implements both with
the backup lock: the SQL thread shows *Waiting for backup lock* while the source's writes pile up
in the relay log, and the holder sits idle, its statement gone, in no transaction — so neither
InnoDB's lock waits nor a transaction-based candidate can name it. Until the state table
classified every applier wait, this backlog read *behind, cause not identified* (and, held at its
commit with its rows changed, *one large transaction*) for as long as it lasted.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from lagscope.lab import Lab
from lagscope.lab import incidents as inc

from .pipeline_stack import Pipeline
from .test_causes_named_live import (
    EVIDENCE_TARGET_POLLS,
    Naming,
    _causes,
    await_naming,
    watch_more,
)
from .waiting import wait_until

pytestmark = pytest.mark.integration

TABLE = "waits_backlog"
REPLICA = "replica1"
BACKUP_WAIT = "Waiting for backup lock"


@pytest.fixture(autouse=True)
def quiet_lab(lab: Lab, pipeline: Pipeline) -> None:
    """Start from a lab that has caught up, under a pipeline naming nothing but clock skew."""
    pipeline.assert_alive()
    lab.wait_caught_up(timeout_s=120)
    cid = pipeline.channel_id(REPLICA)

    def quiet() -> bool:
        return cid is not None and all(c["cause"] == "clock_skew" for c in _causes(pipeline, cid))

    wait_until(quiet, timeout_s=60, interval_s=0.2, message=f"no cause named on {REPLICA}")


# Each lock: the statements a session takes it with, and the one that releases it. A backup
# stage at BLOCK_COMMIT holds the applier at its commit, its rows already changed.
LOCKS = {
    "flush_tables_with_read_lock": (("FLUSH TABLES WITH READ LOCK",), "UNLOCK TABLES"),
    "backup_stage_block_commit": (
        ("BACKUP STAGE START", "BACKUP STAGE BLOCK_COMMIT"),
        "BACKUP STAGE END",
    ),
}


@contextlib.contextmanager
def _lock_held(lab: Lab, lock: str) -> Iterator[tuple[int, float]]:
    """A session on the replica holding ``lock``, its CONNECTION_ID() and when it took it;
    released and closed on leaving."""
    take, release = LOCKS[lock]
    conn = lab.connect(REPLICA)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            row = cur.fetchone()
            assert row is not None
            for statement in take:
                cur.execute(statement)
        yield int(row[0]), time.time()
    finally:
        with contextlib.suppress(pymysql.err.MySQLError), conn.cursor() as cur:
            cur.execute(release)
        conn.close()


def _holder_named(session_id: int) -> Any:
    def check(row: dict[str, Any]) -> bool:
        evidence = row["evidence"]
        named = {str(evidence.get("blocker_thread_id")), str(evidence.get("candidate_thread_id"))}
        listed = f"{session_id} " in str(evidence.get("candidate_sessions") or "")
        return (
            evidence.get("applier_state") == BACKUP_WAIT
            and (str(session_id) in named or listed)
            and f"“{BACKUP_WAIT}”" in str(row["sentence"])
        )

    return check


def name_lock(
    lab: Lab,
    pipeline: Pipeline,
    lock: str,
    exact: bool = False,
    target_polls: int = EVIDENCE_TARGET_POLLS,
) -> tuple[Naming, dict[str, set[str]]]:
    """Take ``lock`` in a session on the replica while the source writes; wait until Lagscope
    names it with the server's words and the session (the holder itself when ``exact``)."""
    inc.query(lab, "source", f"CREATE DATABASE IF NOT EXISTS {inc.SCHEMA}")
    inc.query(lab, "source", f"DROP TABLE IF EXISTS {inc.SCHEMA}.{TABLE}")
    inc.query(
        lab,
        "source",
        f"CREATE TABLE {inc.SCHEMA}.{TABLE} (id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL)",
    )
    lab.wait_caught_up(timeout_s=60)
    try:
        with _lock_held(lab, lock) as (session_id, locked_at):
            insert = f"INSERT INTO {inc.SCHEMA}.{TABLE} (n) VALUES (1)"
            with inc._Load(lab, insert, rate=20.0) as load:
                thread = inc.wait_for(
                    lambda: inc._state_shown(lab, REPLICA, BACKUP_WAIT),
                    timeout_s=30,
                    what=f"{REPLICA}'s applier to wait for the backup lock",
                )
                made = inc.Incident(
                    lock,
                    "blocked_by_session",
                    REPLICA,
                    inc.SCHEMA,
                    TABLE,
                    session_id,
                    details={"applier_thread_id": int(thread["ID"])},
                    started_at=locked_at,
                )
                start = time.time()
                check = _holder_named(session_id)
                if exact:
                    check = _exact_holder(session_id)
                naming, seen = await_naming(pipeline, made, start, timeout_s=60, check=check)
                watch_more(pipeline, REPLICA, seen)
                assert not load.errors, load.errors
    finally:
        lab.wait_caught_up(timeout_s=120)
        inc.query(lab, "source", f"DROP TABLE IF EXISTS {inc.SCHEMA}.{TABLE}")
    print(
        f"\n{lock} named in {naming.polls_shown} polls ({naming.seconds_shown:.1f} s) after the"
        f" applier showed the wait: {naming.sentence}"
    )
    assert naming.evidence["lock"] == "backup"
    assert naming.polls_shown <= target_polls, naming
    # Never "not identified" beside the lock, and the open transaction is not "large".
    wrong = seen[REPLICA] & {"unexplained", "large_transaction", "no_usable_key", "ddl"}
    assert not wrong, seen
    return naming, seen


def _exact_holder(session_id: int) -> Any:
    def check(row: dict[str, Any]) -> bool:
        evidence = row["evidence"]
        return (
            evidence.get("applier_state") == BACKUP_WAIT
            and evidence.get("blocker_thread_id") == session_id
        )

    return check


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_a_backup_lock_on_a_replica_is_named_in_the_servers_words_with_its_holder(
    lab: Lab, pipeline: Pipeline, lock: str
) -> None:
    name_lock(lab, pipeline, lock)
