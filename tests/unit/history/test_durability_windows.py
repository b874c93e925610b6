"""The side panel's relaxed-flush prediction and the journal's, from the same stored polls:
one window rule and one function, so a replica in one state gets one figure from both.

Built rows in a migrated SQLite store, shaped like the demo's story: a short incident (a
blocked applier, then its drain at the lab's relaxed defaults), phase A's strict flush
(receive-bound: the receiver fsyncs each event), then the step that relaxes the flush settings.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, update
from sqlalchemy.orm import Session

from lagscope.analysis.codes import Verdict
from lagscope.analysis.durability import DurabilityPrediction
from lagscope.history.durability import durability_now
from lagscope.journal import steps as journal
from lagscope.journal.prediction import predicted
from lagscope.models import (
    Annotation,
    ApplierWorkerSample,
    Channel,
    InstanceSample,
    ParamChange,
    ParamValue,
    Sample,
)
from tests.factories import make_cluster, sqlite_store

T0 = datetime(2030, 1, 1, 4, 40, tzinfo=UTC)
INCIDENT_S = 100  # blocked for 70 s, then 30 s of drain
A_AT = T0 + timedelta(seconds=INCIDENT_S)  # phase A: strict flush
PHASE_A_S = 90
STEP_AT = A_AT + timedelta(seconds=PHASE_A_S)  # phase B: relaxed flush
LAST_OLD = STEP_AT - timedelta(seconds=2)  # the last read of the strict values
STRICT = {"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1", "sync_relay_log": "1"}
DEFAULTS = {"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "0", "sync_relay_log": "10000"}
RELAXED = {"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0", "sync_relay_log": "0"}


def _poll(second: int) -> dict[str, Any]:
    """One poll's figures: the channel, the instance's fsync cost, the applier."""
    if second < 70:  # a session holds the applier's rows: received, not applied
        return {"verdict": Verdict.APPLY_BOUND, "apply": 0.0, "missing": 0,
                "queued": 50 * (second + 1), "busy": 1, "relay": 0,
                "binlog": 0.0, "redo": 0.004, "relay_log": 0.0}  # fmt: skip
    if second < INCIDENT_S:  # the drain, fast at the lab's relaxed defaults
        return {"verdict": Verdict.APPLY_BOUND, "apply": 2_000.0, "missing": 0,
                "queued": max(0, 3_500 - 1_950 * (second - 69)) + 20, "busy": 1, "relay": 0,
                "binlog": 0.0, "redo": 0.05, "relay_log": 0.0}  # fmt: skip
    a = second - INCIDENT_S
    if a < PHASE_A_S:  # strict flush: the receiver fsyncs each event, the applier waits
        return {"verdict": Verdict.RECEIVE_BOUND, "apply": 700.0, "missing": 2_300 * (a + 1),
                "queued": 100, "busy": 1, "relay": int(a % 5 < 3),
                "binlog": 0.2, "redo": 0.2, "relay_log": 0.8}  # fmt: skip
    after = second - INCIDENT_S - PHASE_A_S  # relaxed: draining at ~5× the rate
    return {"verdict": Verdict.APPLY_BOUND, "apply": 3_500.0,
            "missing": max(0, 200_000 - 500 * after), "queued": 300, "busy": 1, "relay": 0,
            "binlog": 0.0, "redo": 0.0, "relay_log": 0.0}  # fmt: skip


def _insert_polls(session: Session, ids: tuple[int, int, int], seconds: range) -> None:
    _, replica_id, channel_id = ids
    samples, instance_samples, workers = [], [], []
    for second in seconds:
        at = T0 + timedelta(seconds=second)
        p = _poll(second)
        backlog = p["missing"] + p["queued"]
        samples.append({
            "channel_id": channel_id, "ts": at, "verdict": int(p["verdict"]),
            "lag_s": backlog / 3_000, "apply_rate": p["apply"], "source_rate": 3_000.0,
            "not_received": p["missing"], "received_not_applied": p["queued"],
        })  # fmt: skip
        instance_samples.append({
            "instance_id": replica_id, "ts": at, "reachable": True,
            "binlog_fsync_s_per_s": p["binlog"], "redo_fsync_s_per_s": p["redo"],
            "relay_log_fsync_s_per_s": p["relay_log"], "fsync_latency_s": 0.0003,
            "binlog_group_commits_per_s": p["apply"], "data_fsyncs_per_s": p["apply"],
        })  # fmt: skip
        workers.append({
            "instance_id": replica_id, "ts": at, "channel": "", "workers": 1,
            "busy": p["busy"], "busy_mask": b"\x01", "active": 1, "active_mask": b"\x01",
            "errors": 0, "relay_waiting": p["relay"],
        })  # fmt: skip
    session.execute(insert(Sample), samples)
    session.execute(insert(InstanceSample), instance_samples)
    session.execute(insert(ApplierWorkerSample), workers)


def _change(session: Session, replica_id: int, old: dict[str, str], new: dict[str, str],
            at: datetime) -> None:  # fmt: skip
    for name in new:
        session.add(
            ParamChange(
                instance_id=replica_id, name=name, old_value=old[name], new_value=new[name],
                last_old_at=at - timedelta(seconds=2), first_new_at=at,
            )
        )  # fmt: skip
        session.execute(
            update(ParamValue)
            .where(ParamValue.instance_id == replica_id, ParamValue.name == name)
            .values(value=new[name], since=at)
        )


def _panel(session: Session, cluster_id: int, at: datetime) -> DurabilityPrediction:
    (found,) = durability_now(session, cluster_id, at)
    return found.prediction


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with sqlite_store(tmp_path) as sessions:
        with sessions() as session, session.begin():
            cluster, named = make_cluster(
                session, "story", [("source", 3306, "source"), ("replica1", 3307)]
            )
            replica = named["replica1"]
            channel = Channel(instance=replica, name="", first_seen_at=T0)
            session.add(channel)
            session.add_all(
                ParamValue(instance_id=replica.id, name=n, value=v, since=T0)
                for n, v in DEFAULTS.items()
            )
            session.add(Annotation(cluster_id=cluster.id, starts_at=T0, text="incident",
                                   tags=[], author="scenario", created_at=T0))  # fmt: skip
            session.flush()
            ids = (named["source"].id, replica.id, channel.id)
            _insert_polls(session, ids, range(INCIDENT_S))
            _change(session, replica.id, DEFAULTS, STRICT, A_AT)
            session.add(Annotation(cluster_id=cluster.id, starts_at=A_AT, text="phase A",
                                   tags=[], author="scenario", created_at=A_AT))  # fmt: skip
            # Phase A up to the step: the side panel is read before anyone relaxes anything.
            _insert_polls(session, ids, range(INCIDENT_S, INCIDENT_S + PHASE_A_S))
        yield sessions, cluster.id, ids


def _journal_prediction(sessions: Any, cluster_id: int, ids: tuple[int, int, int]) -> Any:
    with sessions() as session, session.begin():
        _change(session, ids[1], STRICT, RELAXED, STEP_AT)
        end = INCIDENT_S + PHASE_A_S
        _insert_polls(session, ids, range(end, end + 60))
    with sessions() as session:
        found = predicted(
            session,
            journal.journal(
                session, cluster_id, T0, STEP_AT + timedelta(minutes=2), journal.JournalSettings()
            ),
            None,
        )
        (entry,) = [e for e in found.entries if e.step.at == STEP_AT]
        (mine,) = [i for i in entry.impacts if i.instance.id == ids[1]]
        assert mine.durability is not None
        return mine.durability


def test_the_panel_read_just_before_the_step_says_what_the_journal_predicted_for_it(store):
    """Demo: the panel said ~1.2× and ~2.9× while the journal's prediction at the step was
    4.8× and 4.7×: the panel's last 2 minutes reached back into the incident before phase A."""
    sessions, cluster_id, ids = store
    with sessions() as session:
        panel = _panel(session, cluster_id, LAST_OLD)
    step = _journal_prediction(sessions, cluster_id, ids)
    print(f"\npanel x{panel.factor} ({panel.predicted} trx/s), "
          f"journal x{step.factor} ({step.predicted} trx/s)")  # fmt: skip
    assert panel.settings == step.settings
    assert panel.factor == pytest.approx(step.factor)
    assert panel.predicted == pytest.approx(step.predicted)
    assert panel.note == step.note
    assert [r.what for r in panel.removed] == [r.what for r in step.removed]
    for mine, journals in zip(panel.removed, step.removed, strict=True):
        assert mine.s_per_trx == pytest.approx(journals.s_per_trx)
    # The receiver bound of phase A's readings: its relay-log fsyncs were 80 % of its time.
    assert step.factor == pytest.approx(5.0)
    assert step.error == pytest.approx(0.0)


def test_early_in_phase_a_the_panel_reads_phase_a_only(store):
    """45 s into phase A: the panel's figure is phase A's (the journal's later one), not a mix
    with the incident that ended just before it."""
    sessions, cluster_id, ids = store
    with sessions() as session:
        early = _panel(session, cluster_id, A_AT + timedelta(seconds=45))
    step = _journal_prediction(sessions, cluster_id, ids)
    print(f"\nearly panel x{early.factor}, journal x{step.factor}")
    assert early.factor == pytest.approx(step.factor)
    assert early.predicted == pytest.approx(step.predicted)


def test_before_the_step_settles_the_panel_has_no_window_yet(store):
    """10 s into phase A the previous step is still settling: no figure from the incident."""
    sessions, cluster_id, _ = store
    with sessions() as session:
        assert durability_now(session, cluster_id, A_AT + timedelta(seconds=10)) == []
