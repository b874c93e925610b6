"""Apply side (docs/causes.md): durability-bound serial apply, one thread with parallelism
available, parallel workers waiting on each other, a source burst — and no 'serial apply' for a
replica whose parallel workers are busy."""

from __future__ import annotations

from types import MappingProxyType

from lagscope.analysis.causes.model import Cause
from lagscope.analysis.codes import Verdict
from lagscope.analysis.rates import CounterRates
from lagscope.collectors.snapshot import ApplierWorker
from tests.factories.causes import (
    NOW,
    PARALLEL_RELAXED,
    SERIAL_DURABLE,
    SQL_COMMIT,
    WORKER_IDLE,
    WORKER_PRIOR,
    behind_on_apply,
    causes,
    inputs,
    last,
    metrics,
    run,
    source,
    status,
)
from tests.unit.analysis.causes.test_causes_diagnose import assert_operator_words

ONE_BY_ONE = CounterRates(binlog_commits_per_s=1200.0, binlog_group_commits_per_s=1150.0)
GROUPED = CounterRates(binlog_commits_per_s=1200.0, binlog_group_commits_per_s=387.0)


def _serial(t: float, sql_state: str = SQL_COMMIT, m=None, **kw):  # type: ignore[no-untyped-def]
    base = {
        "at": t,
        "channel": status(sql_thread_state=sql_state),
        "params": SERIAL_DURABLE,
        "src": source(rates=ONE_BY_ONE),
    }
    base.update(kw)
    return inputs(m or behind_on_apply(), **base)


def test_durable_serial_apply_by_the_second_poll() -> None:
    seen = run([_serial(NOW + i) for i in range(3)])
    assert causes(seen[1]) == ["durable_apply"]
    finding = seen[-1][0]
    assert "innodb_flush_log_at_trx_commit=1, sync_binlog=1" in finding.sentence
    assert "applies 800 trx/s while the source writes 1,200 trx/s" in finding.sentence
    assert_operator_words(finding)


def test_durable_apply_from_fsyncs_per_commit_by_the_second_poll() -> None:
    rates = CounterRates(commits_per_s=800.0, log_fsyncs_per_s=1650.0)
    polls = [
        _serial(NOW + i, sql_state="Reading event from the relay log", rates=rates)
        for i in range(2)
    ]
    (finding,) = last(polls)
    assert finding.cause is Cause.DURABLE_APPLY
    assert "about 2.1 fsyncs per transaction" in finding.sentence
    assert finding.evidence["fsyncs_per_trx"] == 2.06


def test_relaxed_durability_is_not_durable_apply() -> None:
    params = MappingProxyType(
        {**SERIAL_DURABLE, "innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0"}
    )
    found = last([_serial(NOW + i, params=params) for i in range(3)])
    assert Cause.DURABLE_APPLY not in [f.cause for f in found]


def test_sync_binlog_does_not_count_without_a_binlog_on_the_replica() -> None:
    params = MappingProxyType(
        {**SERIAL_DURABLE, "innodb_flush_log_at_trx_commit": "2", "log_slave_updates": "OFF"}
    )
    found = last([_serial(NOW + i, params=params) for i in range(3)])
    assert Cause.DURABLE_APPLY not in [f.cause for f in found]


def test_serial_apply_when_the_source_groups_commits() -> None:
    found = last(
        [_serial(NOW + i, sql_state="Reading event", src=source(rates=GROUPED)) for i in range(3)]
    )
    assert causes(found)[0] == "serial_apply"
    finding = found[0]
    assert "the source commits 3.1 transactions per group" in finding.sentence
    assert "up to ~3 threads" in finding.sentence
    assert "slave_parallel_threads=4" in finding.action
    assert_operator_words(finding)


def test_serial_apply_not_named_when_the_source_commits_one_by_one() -> None:
    found = last([_serial(NOW + i, sql_state="Reading event") for i in range(3)])
    assert Cause.SERIAL_APPLY not in [f.cause for f in found]


def test_serial_apply_without_the_group_size_says_it_is_not_measured() -> None:
    found = last([_serial(NOW + i, sql_state="Reading event", src=source()) for i in range(3)])
    finding = next(f for f in found if f.cause is Cause.SERIAL_APPLY)
    assert finding.confidence < 0.5
    assert finding.needs is not None and finding.needs.startswith("unknown")


def _workers(states: list[str]) -> tuple[ApplierWorker, ...]:
    return tuple(
        ApplierWorker("", i, 100 + i, s, busy=s != WORKER_IDLE) for i, s in enumerate(states)
    )


def test_busy_parallel_workers_with_a_heartbeat_lag_are_not_serial_apply() -> None:
    from lagscope.analysis.codes import LagSource

    m = behind_on_apply()
    m = type(m)(**{**{f: getattr(m, f) for f in m.__slots__}, "lag_source": LagSource.HEARTBEAT})
    workers = _workers(["Update_rows_log_event::ha_update_row()"] * 3 + [SQL_COMMIT])
    polls = [
        inputs(
            m,
            at=NOW + i,
            params=PARALLEL_RELAXED,
            workers=workers,
            src=source(rates=GROUPED),
            channel=status(sql_thread_state="Waiting for room in worker thread event queue"),
        )
        for i in range(5)
    ]
    for found in run(polls):
        assert Cause.SERIAL_APPLY not in [f.cause for f in found]
        assert Cause.ORDERING not in [f.cause for f in found]
        assert Cause.DURABLE_APPLY not in [f.cause for f in found]


def test_ordering_when_workers_mostly_wait_for_prior_commits() -> None:
    workers = _workers([SQL_COMMIT, WORKER_PRIOR, WORKER_PRIOR, WORKER_PRIOR])
    polls = [
        inputs(
            behind_on_apply(),
            at=NOW + i,
            params=PARALLEL_RELAXED,
            workers=workers,
            channel=status(
                sql_thread_state="Waiting for room in worker thread event queue",
                retried_transactions=100 + 7 * i,
            ),
        )
        for i in range(3)
    ]
    seen = run(polls)
    assert causes(seen[1])[0] == "ordering"
    finding = seen[-1][0]
    assert "4 applier threads but on average 1.0 apply while 3.0 wait" in finding.sentence
    assert "7.0 transactions a second are retried" in finding.sentence
    assert finding.confidence >= 0.8
    assert_operator_words(finding)


def test_mysql_database_type_on_one_schema_is_serial() -> None:
    params = {"replica_parallel_workers": "4", "replica_parallel_type": "DATABASE"}
    workers = _workers(
        ["Applying batch of row changes (write)"] + ["Waiting for an event from Coordinator"] * 3
    )
    workers = tuple(
        ApplierWorker("", w.worker_id, w.thread_id, w.state, busy=w.worker_id == 0) for w in workers
    )
    polls = [
        inputs(behind_on_apply(), at=NOW + i, product="mysql", params=params, workers=workers)
        for i in range(3)
    ]
    finding = next(f for f in last(polls) if f.cause is Cause.SERIAL_APPLY)
    assert "replica_parallel_type=DATABASE" in finding.sentence
    assert "LOGICAL_CLOCK" in finding.action


def _quiet_source(polls: int, rate: float = 600.0) -> list:  # type: ignore[type-arg]
    """A caught-up replica while the source writes its usual ``rate``, ending at NOW - 1."""
    return [
        inputs(
            metrics(
                Verdict.CAUGHT_UP,
                lag_s=0.1,
                trx_behind=0,
                not_received=0,
                received_not_applied=0,
                apply_rate=rate,
                source_rate=rate,
            ),
            at=NOW - polls + i,
            params=PARALLEL_RELAXED,
        )
        for i in range(polls)
    ]


def test_source_burst_when_the_replica_applies_at_capacity_and_nothing_else_holds_it() -> None:
    polls = _quiet_source(8)
    for i in range(5):
        m = behind_on_apply(
            trx=1000 + 400 * i, apply_rate=1150.0 if i else 1200.0, source_rate=1800.0
        )
        polls.append(inputs(m, at=NOW + i, params=PARALLEL_RELAXED))
    seen = run(polls)
    assert "source_burst" in causes(seen[9])  # the burst's second poll
    assert causes(seen[-1]) == ["source_burst"]
    finding = seen[-1][0]
    assert (
        "The source has written 1,800 trx/s for 3.0 s, above replica2's capacity of 1,200 trx/s"
        in finding.sentence
    )
    assert "falls 650 trx/s further behind" in finding.sentence
    assert finding.evidence["usual_source_rate"] == 600.0
    assert_operator_words(finding)


def test_a_long_burst_stays_a_burst() -> None:
    """The usual rate is the one the burst started from, not the burst's own (kept 60 polls)."""
    polls = _quiet_source(8)
    for i in range(90):
        m = behind_on_apply(trx=1000 + 600 * i, apply_rate=1200.0, source_rate=1800.0)
        polls.append(inputs(m, at=NOW + i, params=PARALLEL_RELAXED))
    assert causes(last(polls)) == ["source_burst"]


def test_a_constant_load_above_capacity_is_no_burst() -> None:
    """Seen live (bench/no_false_cause.py, the tuning story's phase B on a busy box): the source
    wrote 2,000 trx/s all along (per-second rates 1,600-2,350), the serial replica applied
    1,100-1,700/s, and 9 polls said "the source has written 2,270 trx/s … catches up once the
    source slows down". The source never rose: that is the replica's capacity, not a burst."""
    rates = (2000.0, 2350.0, 1600.0, 2270.0, 1800.0, 2100.0)
    polls = [
        inputs(
            behind_on_apply(
                lag_s=60.0 + i,
                trx=90_000 + 500 * i,
                apply_rate=1700.0 if i % 7 == 0 else 1150.0,
                source_rate=rates[i % len(rates)],
            ),
            at=NOW + i,
            params=PARALLEL_RELAXED,
        )
        for i in range(60)
    ]
    for found in run(polls):
        assert Cause.SOURCE_BURST not in [f.cause for f in found]
    assert causes(last(polls)) == ["unexplained"]


def test_a_source_within_ten_percent_of_capacity_is_no_burst() -> None:
    polls = [
        inputs(
            behind_on_apply(trx=1000 + 100 * i, apply_rate=1200.0, source_rate=1300.0),
            at=NOW + i,
            params=PARALLEL_RELAXED,
        )
        for i in range(4)
    ]
    assert causes(last(polls)) == ["unexplained"]


def test_no_source_burst_when_a_replica_side_cause_is_named() -> None:
    polls = [
        _serial(NOW + i, m=behind_on_apply(trx=1000 + 400 * i, source_rate=1800.0))
        for i in range(4)
    ]
    seen = run(polls)
    assert causes(seen[-1]) == ["durable_apply"]
    for found in seen:
        assert Cause.SOURCE_BURST not in [f.cause for f in found]


def test_half_the_workers_waiting_their_turn_is_no_ordering() -> None:
    """Seen live (bench/no_false_cause.py, the tuning story's phase C): 4 optimistic workers
    draining a backlog fast, sampled (applying, waiting) = (3, 1), (2, 2), (1, 3), (3, 1), then
    mostly (4, 0) and (3, 1): 2.0 vs 2.0 over the last three polls, twice, named ordering. Commit
    order keeps some workers waiting at any moment; half of them is not "mostly"."""
    rows = [(4, 0), (3, 1), (2, 2), (1, 3), (3, 1), (4, 0), (3, 1)]
    polls = [
        inputs(
            behind_on_apply(),
            at=NOW + i,
            params=PARALLEL_RELAXED,
            workers=_workers(["Write_rows_log_event::write_row()"] * a + [WORKER_PRIOR] * w),
            channel=status(sql_thread_state="Waiting for room in worker thread event queue"),
        )
        for i, (a, w) in enumerate(rows)
    ]
    for found in run(polls):
        assert Cause.ORDERING not in [f.cause for f in found]


def test_parallel_settings_by_flavor() -> None:
    from lagscope.analysis.causes.history import observe
    from lagscope.analysis.causes.model import DiagnosisMemory
    from lagscope.analysis.causes.rules_apply import parallel_of

    def serial(product: str, params: dict[str, str]) -> bool | None:
        poll = inputs(behind_on_apply(), product=product, params=params)
        return parallel_of(observe(poll, DiagnosisMemory())).serial

    assert serial("mariadb", {"slave_parallel_threads": "0"}) is True
    assert serial("mariadb", {"slave_parallel_threads": "8", "slave_parallel_mode": "none"})
    assert serial("mariadb", {"slave_parallel_threads": "8"}) is False
    assert serial("mysql", {"replica_parallel_workers": "1"}) is True
    assert serial("mysql", {"slave_parallel_workers": "4"}) is False
    assert serial("mysql", {}) is None


def test_mysql_one_worker_committing_is_durable_serial_apply() -> None:
    params = {
        "replica_parallel_workers": "1",
        "innodb_flush_log_at_trx_commit": "1",
        "sync_binlog": "1",
        "log_replica_updates": "ON",
    }
    worker = ApplierWorker("", 1, 40, "waiting for handler commit", busy=True)
    polls = [
        inputs(
            behind_on_apply(),
            at=NOW + i,
            product="mysql",
            params=params,
            workers=(worker,),
            channel=status(sql_thread_state="Waiting for Replica Workers to free pending events"),
        )
        for i in range(2)
    ]
    found = last(polls)
    assert causes(found)[0] == "durable_apply"
    assert "replica_parallel_workers" in found[0].evidence
