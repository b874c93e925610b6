"""Retention of what holds text from monitored servers: ended episodes with their cause
segments, alert events with their deliveries and attempts go after their retention; an ongoing
episode, the episode a channel points at and a pending delivery (with its event) stay.

A real store (SQLite file, schema by Alembic), rows written straight in, the job run as beat
runs it, the rows read back."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.config import Retention, Settings
from lagscope.ingest.rollups import enforce_retention
from lagscope.models import Channel
from lagscope.models.alerts import AlertEvent, AlertRule, Delivery, DeliveryAttempt, WebhookTarget
from lagscope.models.episodes import Episode, EpisodeCause
from tests.factories import make_cluster, sqlite_store

pytestmark = pytest.mark.integration

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
RETENTION = Retention(raw_days=3, minute_days=60, hour_days=730, episode_days=30, alert_days=10)
OLD_EPISODE = NOW - timedelta(days=31)
OLD_ALERT = NOW - timedelta(days=11)
RECENT = NOW - timedelta(days=1)
SECRET_SENTENCE = "session 9 (statement “UPDATE app.users SET email = 'alice@example.com'”)"


@dataclass(frozen=True)
class Aged:
    sessions: sessionmaker[Session]
    episodes: dict[str, int]
    deliveries: dict[str, int]
    events: dict[str, int]


def _episode(
    session: Session, cluster_id: int, channel_id: int, start: datetime, end: datetime | None
) -> int:
    episode = Episode(cluster_id=cluster_id, channel_id=channel_id, started_at=start, ended_at=end)
    session.add(episode)
    session.flush()
    session.add(
        EpisodeCause(episode_id=episode.id, cause=1, started_at=start, sentence=SECRET_SENTENCE)
    )
    return episode.id


def _event(session: Session, rule: AlertRule, instance_id: int, at: datetime, key: str) -> int:
    event = AlertEvent(
        rule_id=rule.id,
        cluster_id=rule.cluster_id,
        instance_id=instance_id,
        kind="firing",
        at=at,
        starts_at=at,
        idempotency_key=key,
        context={"why": [{"sentence": SECRET_SENTENCE}]},
    )
    session.add(event)
    session.flush()
    return event.id


def _delivery(session: Session, event_id: int, target_id: int, at: datetime, status: str) -> int:
    delivery = Delivery(
        event_id=event_id,
        target_id=target_id,
        kind="firing",
        idempotency_key=f"d{event_id}",
        context={"why": [{"sentence": SECRET_SENTENCE}]},
        status=status,
        next_attempt_at=at,
        created_at=at,
    )
    session.add(delivery)
    session.flush()
    session.add(DeliveryAttempt(delivery_id=delivery.id, number=1, at=at, error=SECRET_SENTENCE))
    return delivery.id


@pytest.fixture
def aged(tmp_path: Path) -> Iterator[Aged]:
    with sqlite_store(tmp_path) as sessions:
        with sessions() as session, session.begin():
            cluster, named = make_cluster(session, "kept", [("src", 3306, "source"), ("r1", 3307)])
            replica = named["r1"]
            channel, pointed = (
                Channel(name="", first_seen_at=OLD_EPISODE),
                Channel(name="b", first_seen_at=OLD_EPISODE),
            )
            replica.channels.extend([channel, pointed])
            session.flush()
            episodes = {
                "old_ended": _episode(session, cluster.id, channel.id, OLD_EPISODE, OLD_EPISODE),
                "recent_ended": _episode(session, cluster.id, channel.id, OLD_EPISODE, RECENT),
                "old_ongoing": _episode(session, cluster.id, channel.id, OLD_EPISODE, None),
                "old_pointed": _episode(session, cluster.id, pointed.id, OLD_EPISODE, OLD_EPISODE),
            }
            pointed.episode_id = episodes["old_pointed"]
            rule = AlertRule(
                name="lag", metric="lag_s", cluster_id=cluster.id, created_at=NOW, updated_at=NOW
            )
            target = WebhookTarget(
                name="hook", kind="generic", url="http://127.0.0.1:9/", created_at=NOW
            )
            session.add_all([rule, target])
            session.flush()
            events = {
                "old_sent": _event(session, rule, replica.id, OLD_ALERT, "e1"),
                "old_pending": _event(session, rule, replica.id, OLD_ALERT, "e2"),
                "recent": _event(session, rule, replica.id, RECENT, "e3"),
            }
            deliveries = {
                "old_sent": _delivery(
                    session, events["old_sent"], target.id, OLD_ALERT, "delivered"
                ),
                "old_pending": _delivery(
                    session, events["old_pending"], target.id, OLD_ALERT, "pending"
                ),
                "recent": _delivery(session, events["recent"], target.id, RECENT, "failed"),
            }
        yield Aged(sessions, episodes, deliveries, events)


def _ids(session: Session, column: object) -> set[int]:
    return set(session.scalars(select(column)))  # type: ignore[call-overload]


def test_retention_purges_old_episodes_causes_events_and_deliveries(aged: Aged) -> None:
    with aged.sessions() as session, session.begin():
        deleted = enforce_retention(session, NOW.timestamp(), RETENTION)
    assert deleted["episodes"] == 1
    assert deleted["episode_causes"] == 1
    assert deleted["alert_deliveries"] == 1
    assert deleted["alert_delivery_attempts"] == 1
    assert deleted["alert_events"] == 1
    e, d, ev = aged.episodes, aged.deliveries, aged.events
    with aged.sessions() as session:
        assert _ids(session, Episode.id) == {e["recent_ended"], e["old_ongoing"], e["old_pointed"]}
        assert set(session.scalars(select(EpisodeCause.episode_id))) == _ids(session, Episode.id)
        assert _ids(session, Delivery.id) == {d["old_pending"], d["recent"]}
        assert set(session.scalars(select(DeliveryAttempt.delivery_id))) == {
            d["old_pending"],
            d["recent"],
        }
        assert _ids(session, AlertEvent.id) == {ev["old_pending"], ev["recent"]}
    with aged.sessions() as session, session.begin():
        again = enforce_retention(session, NOW.timestamp(), RETENTION)
    assert {k: again[k] for k in ("episodes", "alert_events", "alert_deliveries")} == {
        "episodes": 0,
        "alert_events": 0,
        "alert_deliveries": 0,
    }


def test_the_settings_give_the_job_its_retention() -> None:
    settings = Settings(demo=True, retention_episodes_days=7, retention_alerts_days=14)
    assert (settings.retention().episode_days, settings.retention().alert_days) == (7, 14)
