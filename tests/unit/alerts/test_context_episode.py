"""The episode an alert carries, gathered from the store by the evaluation (alerts/context.py):
polls recorded by ``record_tick`` on an in-memory store, rules judged by ``evaluate_cluster``,
the recorded events' contexts read back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.alerts import rules as alert_rules
from lagscope.alerts.evaluation import evaluate_cluster
from lagscope.alerts.payloads import AlertContext, context_from_json
from lagscope.inventory import instances as inventory
from lagscope.models import AlertEvent, Cluster
from lagscope.models.episodes import Episode
from lagscope.security.secret_box import SecretBox
from tests.factories import memory_session
from tests.unit.ingest.test_ingest_episodes import T0, tick


@pytest.fixture
def session() -> Iterator[Session]:
    yield from memory_session()


@pytest.fixture
def cluster(session: Session) -> Cluster:
    box = SecretBox("a-test-key-long-enough-for-the-kdf-0123", b"0" * 16)
    cluster = inventory.create_cluster(session, "c")
    for name, port, role in (("src", 3306, "source"), ("r1", 3307, "replica")):
        inventory.add_instance(session, box, cluster, name, "127.0.0.1", port, "u", "pw", role)
    session.flush()
    return cluster


def judge(session: Session, cluster: Cluster, second: float) -> None:
    evaluate_cluster(session, cluster.id, (T0 + timedelta(seconds=second)).timestamp())
    session.flush()


def contexts(session: Session, kind: str) -> list[AlertContext]:
    rows = session.scalars(
        select(AlertEvent).where(AlertEvent.kind == kind).order_by(AlertEvent.id)
    )
    return [context_from_json(e.context) for e in rows]


def test_firing_and_resolved_carry_the_episodes_main_cause_and_its_evidence(
    session: Session, cluster: Cluster
) -> None:
    alert_rules.create_rule(
        session,
        {"name": "stopped", "metric": "sql_stopped", "threshold": 0.0, "for_s": 2.0,
         "cluster_id": cluster.id},
    )  # fmt: skip
    tick(session, cluster, 0, source_seq=10, applied_seq=10)
    judge(session, cluster, 0)
    for second in range(1, 6):  # the SQL thread stopped while the source writes on
        tick(session, cluster, second, source_seq=10 + second, applied_seq=10, sql_running=False)
        judge(session, cluster, second)
    (firing,) = contexts(session, "firing")
    episode = session.scalar(select(Episode))
    assert episode is not None and firing.episode is not None
    assert firing.episode.id == episode.id
    assert firing.episode.cause == "stopped" and firing.episode.words == "replication stopped"
    assert "stopped" in firing.episode.sentence and firing.episode.action
    assert firing.episode.started_at == episode.started_at.timestamp()
    assert firing.state == "replication stopped"
    for second in range(6, 14):  # started again: caught up at once, the episode ends
        tick(session, cluster, second, source_seq=20, applied_seq=20)
        judge(session, cluster, second)
    (resolved,) = contexts(session, "resolved")
    session.refresh(episode)
    assert resolved.episode is not None and resolved.episode.id == episode.id
    assert resolved.episode.cause == "stopped"
    assert resolved.state != "replication stopped"


def test_an_alert_outside_any_episode_carries_none(session: Session, cluster: Cluster) -> None:
    alert_rules.create_rule(
        session,
        {"name": "any lag", "metric": "lag", "threshold": -1.0, "for_s": 0.0,
         "cluster_id": cluster.id},
    )  # fmt: skip
    for second in range(3):
        tick(session, cluster, second, source_seq=10 + second, applied_seq=10 + second)
        judge(session, cluster, second)
    (firing,) = contexts(session, "firing")
    assert firing.episode is None and firing.state == "caught up"
