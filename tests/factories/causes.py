"""Builders for the cause rules' inputs (analysis/causes): one channel's poll as diagnose reads
it, with the state strings the servers show (MariaDB 10.11.19 as docs/causes.md records them; MySQL
from the manual). ``run`` plays polls through ``diagnose`` with the memory round-tripped through
JSON, as the store keeps it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from lagscope.analysis.causes.diagnose import diagnose
from lagscope.analysis.causes.model import (
    CauseInputs,
    DiagnosisMemory,
    Finding,
    SiblingView,
    SourceFacts,
)
from lagscope.analysis.channel_metrics import ChannelMetrics
from lagscope.analysis.codes import Verdict
from lagscope.analysis.eta import Eta
from lagscope.analysis.rates import CounterRates
from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.snapshot import (
    ApplierWorker,
    CauseEvidence,
    ChannelStatus,
    ClockReading,
    GtidState,
    InstanceSnapshot,
    IoState,
)

NOW = 1_795_000_000.0  # epoch s
GOOD_CLOCK = ClockReading(0.0, 0.001)

# Thread states as the servers show them.
IO_WAITING = "Waiting for master to send event"
IO_QUEUEING = "Queueing master event to the relay log"
SQL_IDLE = "Slave has read all relay log; waiting for more updates"
SQL_COMMIT = "Commit"
SQL_FIND_ROW = "Update_rows_log_event::find_row()"
SQL_MDL = "Waiting for table metadata lock"
WORKER_IDLE = "Waiting for work from SQL thread"
WORKER_PRIOR = "Waiting for prior transaction to commit"

SERIAL_DURABLE = MappingProxyType(
    {
        "slave_parallel_threads": "0",
        "slave_parallel_mode": "optimistic",
        "innodb_flush_log_at_trx_commit": "1",
        "sync_binlog": "1",
        "log_slave_updates": "ON",
        "sync_relay_log": "10000",
        "sync_master_info": "10000",
    }
)
PARALLEL_RELAXED = MappingProxyType(
    {
        "slave_parallel_threads": "4",
        "slave_parallel_mode": "optimistic",
        "innodb_flush_log_at_trx_commit": "2",
        "sync_binlog": "0",
        "log_slave_updates": "ON",
        "sync_relay_log": "10000",
        "sync_master_info": "10000",
    }
)


def status(**kw: Any) -> ChannelStatus:
    base: dict[str, Any] = {
        "channel": "",
        "io_state": IoState.YES,
        "sql_running": True,
        "seconds_behind_source": 0,
        "io_thread_state": IO_WAITING,
        "sql_thread_state": SQL_IDLE,
    }
    base.update(kw)
    return ChannelStatus(**base)


def snapshot(
    channel: ChannelStatus | None = None,
    *,
    at: float = NOW,
    product: str = "mariadb",
    params: Mapping[str, str | None] = SERIAL_DURABLE,
    workers: tuple[ApplierWorker, ...] = (),
    evidence: CauseEvidence | None = None,
    clock: ClockReading = GOOD_CLOCK,
) -> InstanceSnapshot:
    flavor = (
        ServerFlavor("mariadb", (10, 11, 9))
        if product == "mariadb"
        else ServerFlavor("mysql", (8, 4, 2))
    )
    return InstanceSnapshot(
        server="replica",
        flavor=flavor,
        dialect=product,
        taken_at=datetime.fromtimestamp(at, UTC),
        round_trip_s=0.002,
        server_id=2,
        server_uuid=None,
        read_only=True,
        clock=clock,
        gtid=GtidState(),
        channels=(channel or status(),),
        params=MappingProxyType(dict(params)),
        workers=workers,
        evidence=evidence,
    )


def metrics(verdict: Verdict = Verdict.CAUGHT_UP, **kw: Any) -> ChannelMetrics:
    return ChannelMetrics(verdict=verdict, **kw)


def behind_on_apply(
    lag_s: float = 30.0, trx: int = 3000, apply_rate: float = 800.0, source_rate: float = 1200.0
) -> ChannelMetrics:
    return metrics(
        Verdict.APPLY_BOUND,
        lag_s=lag_s,
        trx_behind=trx,
        not_received=5,
        received_not_applied=trx - 5,
        apply_rate=apply_rate,
        source_rate=source_rate,
        eta=Eta(None, False, source_rate - apply_rate),
    )


def behind_on_receive(lag_s: float = 30.0, not_received: int = 3000) -> ChannelMetrics:
    return metrics(
        Verdict.RECEIVE_BOUND,
        lag_s=lag_s,
        trx_behind=not_received + 5,
        not_received=not_received,
        received_not_applied=5,
        apply_rate=900.0,
        source_rate=1200.0,
    )


def source(**kw: Any) -> SourceFacts:
    base: dict[str, Any] = {"name": "src", "region": "eu", "commit_rate": 1200.0}
    base.update(kw)
    return SourceFacts(**base)


def sibling(
    replica: str = "replica1", region: str = "eu", lag_s: float | None = 0.2
) -> SiblingView:
    verdict = Verdict.CAUGHT_UP if (lag_s or 0) < 1 else Verdict.APPLY_BOUND
    return SiblingView(replica, region, lag_s, 0, 0, int(verdict))


def inputs(
    m: ChannelMetrics | None = None,
    *,
    at: float = NOW,
    name: str = "replica2",
    region: str = "us",
    channel: ChannelStatus | None = None,
    replica: InstanceSnapshot | None = None,
    unreachable: bool = False,
    rates: CounterRates | None = None,
    src: SourceFacts | None = None,
    siblings: tuple[SiblingView, ...] = (),
    interval_s: float = 1.0,
    **snapshot_kw: Any,
) -> CauseInputs:
    """One poll; ``replica`` defaults to a snapshot holding ``channel`` taken at ``at``."""
    chan = channel or status()
    snap = None if unreachable else replica or snapshot(chan, at=at, **snapshot_kw)
    return CauseInputs(
        at=at,
        replica_name=name,
        region=region,
        channel=chan.channel,
        metrics=m or metrics(),
        status=None if snap is None else snap.channel(chan.channel),
        replica=snap,
        params=snap.params if snap is not None else MappingProxyType({}),
        rates=rates,
        source=src,
        siblings=siblings,
        interval_s=interval_s,
    )


def at(poll: CauseInputs, when: float) -> CauseInputs:
    """The same poll at another time (its snapshot re-timed too)."""
    snap = poll.replica
    if snap is not None:
        snap = replace(snap, taken_at=datetime.fromtimestamp(when, UTC))
    return replace(poll, at=when, replica=snap)


def run(
    polls: Iterable[CauseInputs], memory: DiagnosisMemory | None = None
) -> list[tuple[Finding, ...]]:
    """Each poll's findings; the memory goes through JSON between polls, as the store keeps it.
    Each poll is also diagnosed with the memory as the last poll left it (as a poll owner keeps
    it between checkpoints): the findings and the memory must be the same either way."""
    memory = memory or DiagnosisMemory()
    kept = memory
    out = []
    for poll in polls:
        findings, memory = diagnose(poll, memory)
        from_kept, kept = diagnose(poll, kept)
        assert from_kept == findings, "a kept memory named other causes than a stored one"
        assert kept.to_json() == memory.to_json(), "a kept memory went on differently"
        memory = DiagnosisMemory.from_json(json.loads(json.dumps(memory.to_json())))
        out.append(findings)
    return out


def last(polls: Iterable[CauseInputs]) -> tuple[Finding, ...]:
    return run(polls)[-1]


def repeat(poll: CauseInputs, n: int, step_s: float = 1.0) -> list[CauseInputs]:
    """``poll`` ``n`` times, ``step_s`` apart, ending at the poll's own time."""
    return [at(poll, poll.at - (n - 1 - i) * step_s) for i in range(n)]


def causes(findings: Iterable[Finding]) -> list[str]:
    return [f.cause.label for f in findings]
