"""Applier causes (docs/causes.md): a blocking session (row lock, metadata lock and its
candidates), row lookups without a usable key (the transaction state tells a scan from a lock
wait), one large transaction, a schema change."""

from __future__ import annotations

from dataclasses import replace

from lagscope.analysis.causes.model import Cause
from lagscope.collectors.snapshot import (
    ApplierWorker,
    BlockingSession,
    CauseEvidence,
    OpenTransaction,
    RowEventTable,
)
from tests.factories.causes import (
    NOW,
    PARALLEL_RELAXED,
    SQL_FIND_ROW,
    SQL_MDL,
    behind_on_apply,
    causes,
    inputs,
    last,
    run,
    status,
)
from tests.unit.analysis.causes.test_causes_diagnose import assert_operator_words

APPLIER = 17
REPORT_SESSION = BlockingSession(
    thread_id=4711,
    blocked_thread_id=APPLIER,
    lock="row",
    user="report",
    host="10.0.3.4",
    command="Sleep",
    time_s=1200.0,
    statement="SELECT * FROM shop.orders WHERE id = 7 FOR UPDATE",
    object_name="shop.orders",
)


def _poll(t: float, sql_state: str, evidence: CauseEvidence | None, **kw):  # type: ignore[no-untyped-def]
    return inputs(
        behind_on_apply(lag_s=95.0),
        at=t,
        channel=status(sql_thread_state=sql_state),
        params=PARALLEL_RELAXED,
        evidence=evidence,
        **kw,
    )


def _trx(state: str, rows: int = 1, started: float = NOW - 100, wait_from: float | None = None):  # type: ignore[no-untyped-def]
    return OpenTransaction(
        thread_id=APPLIER,
        trx_id="4242",
        state=state,
        started_at=started,
        rows_modified=rows,
        lock_wait_started_at=wait_from,
        operation="starting index read",
    )


KEYLESS = RowEventTable("", "shop", "audit_log", has_primary_key=False, has_usable_key=False)
KEYED = RowEventTable("", "shop", "orders", has_primary_key=True, has_usable_key=True)


def test_row_lock_names_the_blocking_session_and_never_suggests_killing_it() -> None:
    evidence = CauseEvidence(
        transactions=(_trx("LOCK WAIT", wait_from=NOW - 95),),
        blockers=(REPORT_SESSION,),
        tables=(KEYED,),
    )
    (finding,) = last([_poll(NOW, SQL_FIND_ROW, evidence)])
    assert finding.cause is Cause.BLOCKED_BY_SESSION
    assert "for 95 s" in finding.sentence
    assert "session 4711 (report@10.0.3.4, idle in a transaction for 20 min" in finding.sentence
    assert "FOR UPDATE" in finding.sentence
    assert "kill" not in (finding.sentence + finding.action).lower()
    assert finding.evidence["blocker_thread_id"] == 4711
    assert finding.evidence["blocker_user"] == "report"
    assert finding.evidence["lock"] == "row"
    assert finding.confidence >= 0.9
    assert_operator_words(finding)


def test_the_same_find_row_state_on_a_keyless_table_is_a_scan_when_running() -> None:
    evidence = CauseEvidence(transactions=(_trx("RUNNING", rows=120_000),), tables=(KEYLESS,))
    seen = run([_poll(NOW + i, SQL_FIND_ROW, evidence) for i in range(2)])
    assert seen[0][0].cause is Cause.NO_USABLE_KEY
    finding = seen[1][0]
    assert finding.cause is Cause.NO_USABLE_KEY
    assert "shop.audit_log (no primary key)" in finding.sentence
    assert "Add a primary key" in finding.action
    assert finding.evidence["table"] == "shop.audit_log"
    assert finding.evidence["trx_state"] == "RUNNING"
    assert Cause.BLOCKED_BY_SESSION not in [f.cause for f in seen[1]]
    # Open for 100 s, yet not "one large transaction": the scans make it long (live lab).
    assert Cause.LARGE_TRANSACTION not in [f.cause for f in seen[1]]
    assert_operator_words(finding)


def test_a_poll_between_two_lookups_on_a_keyless_table_is_still_the_scan() -> None:
    """Live lab (seen in CI): one poll caught the applier on the row's update, not its
    lookup; the scan's transaction, open for 100 s, was then called "one large transaction"."""
    evidence = CauseEvidence(transactions=(_trx("RUNNING", rows=120_000),), tables=(KEYLESS,))
    between = "Update_rows_log_event::ha_update_row()"
    seen = run([_poll(NOW, SQL_FIND_ROW, evidence), _poll(NOW + 1, between, evidence)])
    assert causes(seen[1]) == ["no_usable_key"]
    assert seen[1][0].evidence["state"] == between


def test_a_scanning_transaction_stays_a_scan_when_a_poll_misses_the_table() -> None:
    """Live lab: polls named the scan, then one poll had no relay-log table (and another state);
    the transaction, open for 100 s, was called "one large transaction" beside the scan."""
    scan = CauseEvidence(transactions=(_trx("RUNNING", rows=120_000),), tables=(KEYLESS,))
    missed = CauseEvidence(transactions=(_trx("RUNNING", rows=121_000),), tables=())
    seen = run(
        [
            _poll(NOW, SQL_FIND_ROW, scan),
            _poll(NOW + 1, SQL_FIND_ROW, scan),
            _poll(NOW + 2, "Reading event from the relay log", missed),
            _poll(NOW + 3, "Reading event from the relay log", missed),
        ]
    )
    assert causes(seen[1]) == ["no_usable_key"]
    assert Cause.LARGE_TRANSACTION not in [f.cause for found in seen for f in found]


def test_a_keyless_table_without_any_lookup_seen_is_not_a_scan() -> None:
    evidence = CauseEvidence(transactions=(_trx("RUNNING", rows=120_000),), tables=(KEYLESS,))
    between = "Update_rows_log_event::ha_update_row()"
    found = last([_poll(NOW + i, between, evidence) for i in range(3)])
    assert Cause.NO_USABLE_KEY not in [f.cause for f in found]


def test_the_same_state_under_lock_wait_is_a_blocker_even_on_a_keyless_table() -> None:
    evidence = CauseEvidence(
        transactions=(_trx("LOCK WAIT", wait_from=NOW - 30),),
        blockers=(REPORT_SESSION,),
        tables=(KEYLESS,),
    )
    found = last([_poll(NOW + i, SQL_FIND_ROW, evidence) for i in range(3)])
    assert causes(found) == ["blocked_by_session"]


def test_find_row_on_a_keyed_table_is_no_key_finding() -> None:
    evidence = CauseEvidence(transactions=(_trx("RUNNING", rows=5),), tables=(KEYED,))
    found = last([_poll(NOW + i, SQL_FIND_ROW, evidence) for i in range(3)])
    assert Cause.NO_USABLE_KEY not in [f.cause for f in found]


def test_metadata_lock_with_a_known_holder() -> None:
    holder = BlockingSession(
        thread_id=88,
        blocked_thread_id=APPLIER,
        lock="metadata",
        user="app",
        host="h1",
        command="Sleep",
        time_s=300.0,
        object_name="shop.orders",
    )
    evidence = CauseEvidence(blockers=(holder,))
    seen = run([_poll(NOW + i * 2, SQL_MDL, evidence) for i in range(3)])
    finding = seen[-1][0]
    assert finding.cause is Cause.BLOCKED_BY_SESSION
    assert "for 4.0 s for a metadata lock on shop.orders held by session 88" in finding.sentence
    assert finding.needs is None


def test_metadata_lock_without_the_plugin_offers_candidates() -> None:
    candidates = tuple(
        BlockingSession(
            thread_id=tid,
            blocked_thread_id=APPLIER,
            lock="metadata",
            certain=False,
            user="app",
            host=f"h{tid}",
            command="Sleep",
            time_s=60.0 * tid,
        )
        for tid in (31, 32, 33)
    )
    alter = "ALTER TABLE shop.orders ADD COLUMN note INT"
    poll = replace(_poll(NOW, SQL_MDL, CauseEvidence(blockers=candidates)), applier_statement=alter)
    (finding,) = last([poll])
    assert finding.cause is Cause.BLOCKED_BY_SESSION
    # The table comes from what the applier waits to run: the candidates cannot name it.
    assert finding.evidence["waiting_statement"] == alter
    assert "likely held by session 31 (app@h31" in finding.sentence
    assert "session 32" in finding.sentence and "(and 1 more)" in finding.sentence
    assert finding.needs is not None and "METADATA_LOCK_INFO" in finding.needs
    assert finding.evidence["candidates"] == 3
    assert "33 app@h33" in str(finding.evidence["candidate_sessions"])
    assert_operator_words(finding)


def test_metadata_lock_without_readings_says_what_it_needs() -> None:
    evidence = CauseEvidence(problems={"blockers": "unknown: needs PROCESS"})
    (finding,) = last([_poll(NOW, SQL_MDL, evidence)])
    assert finding.cause is Cause.BLOCKED_BY_SESSION
    assert finding.needs == "unknown: needs PROCESS"
    (bare,) = last([_poll(NOW, SQL_MDL, None)])
    assert bare.needs is not None and bare.needs.startswith("unknown: the blocking session")
    (empty,) = last([_poll(NOW, SQL_MDL, CauseEvidence())])
    assert empty.needs is not None and "METADATA_LOCK_INFO" in empty.needs


def test_a_metadata_lock_wait_is_not_a_large_transaction() -> None:
    evidence = CauseEvidence(transactions=(_trx("RUNNING", rows=0, started=NOW - 300),))
    found = last([_poll(NOW + i, SQL_MDL, evidence) for i in range(3)])
    assert causes(found) == ["blocked_by_session"]


def test_large_transaction_within_ten_seconds_with_its_progress() -> None:
    start = NOW
    polls = [
        _poll(
            start + t,
            "Update_rows_log_event::ha_update_row()",
            CauseEvidence(
                transactions=(_trx("RUNNING", rows=20_000 * t, started=start),),
                tables=(KEYED,),
            ),
        )
        for t in range(1, 12)
    ]
    seen = run(polls)
    named_at = next(i + 1 for i, found in enumerate(seen) if "large_transaction" in causes(found))
    assert named_at <= 10
    finding = next(f for f in seen[-1] if f.cause is Cause.LARGE_TRANSACTION)
    assert "for 11 s" in finding.sentence
    assert "220,000 rows changed so far (20,000 rows/s)" in finding.sentence
    assert finding.evidence["rows_per_s"] == 20_000.0
    # The table from the relay log's Table_map at the applier's position.
    assert finding.evidence["table"] == f"{KEYED.schema}.{KEYED.table}"
    assert f" on {KEYED.schema}.{KEYED.table} for " in finding.sentence
    assert_operator_words(finding)


def test_mysql_large_transaction_from_the_applying_gtid() -> None:
    gtid = "3e11fa47-71ca-11e1-9e33-c80aa9429562:77"
    worker = ApplierWorker(
        "", 1, APPLIER, "Applying batch of row changes (update)",
        applying_trx=gtid, applying_start_apply_ts=NOW - 30, busy=True,
    )  # fmt: skip
    polls = [
        inputs(
            behind_on_apply(),
            at=NOW + i,
            product="mysql",
            params={"replica_parallel_workers": "4"},
            workers=(worker,),
        )
        for i in range(2)
    ]
    found = last(polls)
    finding = next(f for f in found if f.cause is Cause.LARGE_TRANSACTION)
    assert gtid in finding.sentence
    assert "for 31 s" in finding.sentence


def test_short_transactions_under_load_are_not_large() -> None:
    polls = [
        _poll(
            NOW + i,
            "Commit",
            CauseEvidence(transactions=(_trx("RUNNING", rows=3, started=NOW + i - 0.01),)),
        )
        for i in range(10)
    ]
    assert all(Cause.LARGE_TRANSACTION not in [f.cause for f in found] for found in run(polls))


def test_ddl_is_named_with_its_state_and_duration() -> None:
    polls = [_poll(NOW + i * 60, "copy to tmp table", None, interval_s=60) for i in range(12)]
    polls.append(_poll(NOW + 720, "Enabling keys", None, interval_s=60))
    seen = run(polls)
    assert causes(seen[0]) == ["ddl"]
    finding = seen[-1][0]
    assert "schema change for 12 min" in finding.sentence
    assert "“Enabling keys”" in finding.sentence
    assert_operator_words(finding)


def test_applier_rules_stay_quiet_when_caught_up() -> None:
    from lagscope.analysis.codes import Verdict
    from tests.factories.causes import metrics

    evidence = CauseEvidence(transactions=(_trx("RUNNING", rows=9, started=NOW - 60),))
    poll = inputs(metrics(Verdict.CAUGHT_UP, lag_s=0.1), evidence=evidence)
    assert last([poll]) == ()


def test_ddl_from_the_applier_statement_names_it() -> None:
    from dataclasses import replace

    alter = "ALTER TABLE shop.orders ADD COLUMN note TEXT"
    polls = [
        replace(_poll(NOW + i, "System lock", None), applier_statement=alter) for i in range(3)
    ]
    finding = last(polls)[0]
    assert finding.cause is Cause.DDL
    assert f"applying “{alter}” for 2.0 s" in finding.sentence
    assert finding.evidence["statement"] == alter
    dml = replace(_poll(NOW, "System lock", None), applier_statement="UPDATE shop.orders SET a=1")
    assert Cause.DDL not in [f.cause for f in last([dml])]


def test_one_finding_per_cause_when_row_and_metadata_locks_show_together() -> None:
    evidence = CauseEvidence(
        transactions=(_trx("LOCK WAIT", wait_from=NOW - 10),), blockers=(REPORT_SESSION,)
    )
    found = last([_poll(NOW, SQL_MDL, evidence)])
    assert causes(found) == ["blocked_by_session"]
    assert found[0].evidence["blocker_thread_id"] == 4711


def test_large_transaction_rate_survives_a_poll_without_readings() -> None:
    def poll(t: int, evidence: CauseEvidence | None):  # type: ignore[no-untyped-def]
        return _poll(NOW + t, "Update_rows_log_event::ha_update_row()", evidence)

    def trx(rows: int) -> CauseEvidence:
        return CauseEvidence(transactions=(_trx("RUNNING", rows=rows, started=NOW - 20),))

    seen = run([poll(0, trx(100_000)), poll(1, None), poll(2, trx(140_000))])
    assert Cause.LARGE_TRANSACTION not in [f.cause for f in seen[1]]  # nothing read: not named
    finding = next(f for f in seen[2] if f.cause is Cause.LARGE_TRANSACTION)
    assert finding.evidence["rows_per_s"] == 20_000.0


def test_a_refused_cause_reading_is_what_the_finding_needs() -> None:
    """Without PROCESS the server refuses the blockers reading: the poller keeps that in the
    snapshot's problems (the evidence is then absent), and the finding says what it needs."""
    refused = "row_blockers: (1227) Access denied; you need the PROCESS privilege; needs PROCESS"
    seen = _poll(NOW, SQL_MDL, None)
    replica = seen.replica
    assert replica is not None
    seen = replace(seen, replica=replace(replica, problems={"row_blockers": refused}))
    (finding,) = last([seen])
    assert finding.cause is Cause.BLOCKED_BY_SESSION
    assert finding.needs == f"unknown: {refused}"
