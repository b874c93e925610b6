"""Every applier wait the server names becomes a cause: a lock of any kind the state table knows
is *blocked by a session* with its holder or the sessions that could hold it, and a state the
table does not know is quoted as *the applier waits* — *not identified* only without a hint."""

from __future__ import annotations

from typing import Any

from lagscope.analysis.causes.model import Cause, CauseInputs, Finding
from lagscope.collectors.snapshot import (
    ApplierWorker,
    BlockingSession,
    CauseEvidence,
    OpenTransaction,
)
from tests.factories.causes import (
    NOW,
    PARALLEL_RELAXED,
    behind_on_apply,
    causes,
    inputs,
    run,
    status,
)
from tests.unit.analysis.causes.test_causes_diagnose import assert_operator_words

APPLIER = 17
BACKUP = "Waiting for backup lock"
ODD = "Waiting for the storage engine's own hold"  # a state no table row knows

# What the lock_sessions reading gives for a FLUSH TABLES WITH READ LOCK holder: idle, its
# statement gone, in no transaction.
FTWRL_HOLDER = BlockingSession(
    thread_id=12,
    blocked_thread_id=APPLIER,
    lock="session",
    certain=False,
    user="backup",
    host="localhost",
    command="Sleep",
    time_s=31.0,
)
# The applier's transaction: open 30 s with its rows changed, waiting at commit.
APPLYING = OpenTransaction(
    thread_id=APPLIER,
    trx_id="4242",
    state="RUNNING",
    started_at=NOW - 30,
    rows_modified=119,
)


def _poll(
    t: float,
    state: str,
    evidence: CauseEvidence | None,
    in_state_s: float | None = 30.0,
    params: Any = PARALLEL_RELAXED,
    **kw: Any,
) -> CauseInputs:
    # MariaDB's serial SQL thread stands in as worker 0, with its time in the state.
    worker = ApplierWorker("", 0, APPLIER, state, state_time_s=in_state_s, busy=True)
    return inputs(
        behind_on_apply(lag_s=30.0, trx=119),
        at=t,
        channel=status(sql_thread_state=state),
        params=params,
        evidence=evidence,
        workers=(worker,) if in_state_s is not None else (),
        **kw,
    )


def _polls(state: str, evidence: CauseEvidence, n: int = 3, **kw: Any) -> list[tuple[Finding, ...]]:
    return run([_poll(NOW + i, state, evidence, 30.0 + i, **kw) for i in range(n)])


def test_a_backup_lock_names_the_sessions_that_could_hold_it_and_quotes_the_server() -> None:
    """The lab's FLUSH TABLES WITH READ LOCK on a replica: the SQL thread "Waiting for backup
    lock" for 30 s, 119 transactions waiting; on 69acfa2 this was "not identified"."""
    evidence = CauseEvidence(transactions=(APPLYING,), blockers=(FTWRL_HOLDER,))
    seen = _polls(BACKUP, evidence)
    for findings in seen:
        assert causes(findings) == ["blocked_by_session"], findings
    finding = seen[-1][0]
    assert "“Waiting for backup lock”" in finding.sentence
    assert "the backup lock" in finding.sentence
    assert "session 12 (backup@localhost, idle for 31 s)" in finding.sentence
    assert "in a transaction" not in finding.sentence  # FTWRL's holder is in none
    assert finding.action.startswith("Taken by FLUSH TABLES WITH READ LOCK or a BACKUP STAGE")
    assert "UNLOCK TABLES / BACKUP STAGE END" in finding.action
    assert finding.evidence["lock"] == "backup"
    assert finding.evidence["applier_state"] == BACKUP
    assert finding.evidence["candidate_thread_id"] == 12
    assert finding.evidence["candidates"] == 1
    assert finding.confidence == 0.85
    assert finding.needs is not None and "METADATA_LOCK_INFO" in finding.needs
    assert_operator_words(finding)


def test_a_transaction_waiting_for_a_lock_at_commit_is_not_large() -> None:
    """BACKUP STAGE BLOCK_COMMIT holds the applier at its commit with its rows changed: open for
    30 s, it is waiting, not "one large transaction"."""
    evidence = CauseEvidence(transactions=(APPLYING,), blockers=(FTWRL_HOLDER,))
    for findings in _polls(BACKUP, evidence, n=4):
        assert Cause.LARGE_TRANSACTION not in [f.cause for f in findings]


def test_a_named_lock_without_any_candidate_still_says_which_lock() -> None:
    seen = _polls("Waiting for table level lock", CauseEvidence(transactions=(APPLYING,)))
    finding = seen[-1][0]
    assert finding.cause is Cause.BLOCKED_BY_SESSION and finding.confidence == 0.8
    assert "the table-level lock" in finding.sentence
    assert "“Waiting for table level lock”" in finding.sentence
    assert "UNLOCK TABLES" in finding.action


def test_mysql_global_read_lock_holder_is_named_from_metadata_locks() -> None:
    holder = BlockingSession(
        thread_id=4713,
        blocked_thread_id=APPLIER,
        lock="global read",
        user="xtrabackup",
        host="10.0.3.9",
        command="Sleep",
        time_s=40.0,
    )
    seen = _polls(
        "Waiting for global read lock",
        CauseEvidence(blockers=(holder, FTWRL_HOLDER)),
        product="mysql",
        params={"replica_parallel_workers": "4"},
    )
    finding = seen[-1][0]
    assert finding.cause is Cause.BLOCKED_BY_SESSION and finding.confidence == 0.95
    assert "the global read lock" in finding.sentence
    assert "held by session 4713 (xtrabackup@10.0.3.9, idle for 40 s)" in finding.sentence
    assert finding.evidence["blocker_thread_id"] == 4713
    assert "UNLOCK TABLES" in finding.action


def test_a_table_metadata_lock_from_lock_tables_offers_the_idle_sessions() -> None:
    """LOCK TABLES … WRITE holds the table's metadata lock outside any transaction: the
    transaction candidates find nobody, the replica's sessions are offered instead."""
    holder = BlockingSession(
        thread_id=14,
        blocked_thread_id=APPLIER,
        lock="session",
        certain=False,
        user="ops",
        host="localhost",
        command="Sleep",
        time_s=50.0,
    )
    seen = _polls("Waiting for table metadata lock", CauseEvidence(blockers=(holder,)))
    finding = seen[-1][0]
    assert finding.cause is Cause.BLOCKED_BY_SESSION
    assert finding.evidence["lock"] == "metadata"
    assert finding.evidence["candidate_thread_id"] == 14
    assert "session 14 (ops@localhost, idle for 50 s)" in finding.sentence


def test_a_state_the_table_does_not_know_is_quoted_with_the_sessions_that_could_hold_it() -> None:
    evidence = CauseEvidence(transactions=(APPLYING,), blockers=(FTWRL_HOLDER,))
    seen = _polls(ODD, evidence)
    finding = seen[-1][0]
    assert causes(seen[-1]) == ["applier_wait"]
    assert finding.sentence.startswith(f"replica2's applier waits: “{ODD}” for 2.0 s")
    assert "session 12 (backup@localhost, idle for 31 s)" in finding.sentence
    assert finding.evidence["applier_state"] == ODD
    assert finding.evidence["candidate_thread_id"] == 12
    assert finding.confidence == 0.6
    assert "not identified" not in finding.sentence
    assert_operator_words(finding)


def test_an_unknown_state_with_no_session_about_is_still_the_servers_words() -> None:
    seen = _polls(ODD, CauseEvidence(transactions=(APPLYING,)))
    finding = seen[-1][0]
    assert finding.cause is Cause.APPLIER_WAIT and finding.confidence == 0.5
    assert f"“{ODD}”" in finding.sentence
    assert "no replica session" in finding.sentence


def test_an_unknown_state_is_named_at_its_second_poll() -> None:
    """MySQL's coordinator state (no worker rows with a thread state): two polls decide."""
    polls = [
        _poll(NOW + i, ODD, CauseEvidence(), in_state_s=None, product="mysql") for i in range(2)
    ]
    seen = run(polls)
    assert Cause.APPLIER_WAIT not in [f.cause for f in seen[0]]
    assert causes(seen[1]) == ["applier_wait"]


def test_a_known_passing_step_in_a_backlog_is_still_not_identified() -> None:
    """Nothing invented from a step every statement passes through."""
    seen = _polls("Opening tables", CauseEvidence())
    assert causes(seen[-1]) == ["unexplained"]
