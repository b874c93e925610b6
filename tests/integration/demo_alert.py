"""The demo's alert as phase B of the tuning story sends it, without the lab: replica1's store
holds an episode whose main cause is the receiver's fsyncs (its segment closed when the flush
settings were relaxed) while its newest poll names no cause, and its lag stays over the demo
rule's 30 s for the rule's 30 s as the backlog drains. Lagscope's own evaluation records the
firing (then the resolved) and its own delivery code sends it to the demo's inbox."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select

from lagscope.alerts.delivery import build_request, record, send
from lagscope.alerts.evaluation import evaluate_cluster
from lagscope.analysis.causes.model import Cause, Finding
from lagscope.analysis.causes.serial import finding_to_json
from lagscope.analysis.codes import LagSource, Verdict
from lagscope.models import Channel, Delivery, Instance, InstanceSample, Sample, WebhookTarget
from lagscope.models.episodes import Episode, EpisodeCause
from lagscope.security.secret_box import store_box

from .api_stack import ApiServer

FSYNC_SENTENCE = (
    "replica1's receiver fsyncs every event it writes to the relay log (sync_relay_log=1, "
    "sync_master_info=1) and was busy writing in 44 of the last 45 polls; replica2 (far) lags "
    "alike (52 s vs 54 s), so it is not the network."
)
FSYNC_ACTION = (
    "Set sync_relay_log=0 and sync_master_info=0 on replica1 (with GTID positions and "
    "relay_log_recovery=ON the replica recovers without them), or give the relay log faster "
    "storage; record it as a journal step to verify."
)
NOT_IDENTIFIED = Finding(
    Cause.UNEXPLAINED, 0.3, "replica1 is 41 s behind; no known cause matched the readings.", ""
)


@dataclass(frozen=True)
class DemoAlert:
    episode_id: int
    channel_id: int


def _dt(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, UTC)


def seed_draining_replica(server: ApiServer, cluster_id: int, now_s: float) -> DemoAlert:
    """replica1 in phase B: 180 s into an episode of fsyncs that ended 40 s ago, no cause now."""
    with server.sessions() as s, s.begin():
        replica = s.scalars(
            select(Instance).where(Instance.cluster_id == cluster_id, Instance.name == "replica1")
        ).one()
        channel = Channel(name="", first_seen_at=_dt(now_s - 600), source_server_id=1)
        replica.channels.append(channel)
        s.flush()
        episode = Episode(
            cluster_id=cluster_id,
            channel_id=channel.id,
            started_at=_dt(now_s - 180),
            peak_lag_s=54.0,
            peak_at=_dt(now_s - 40),
            main_cause=int(Cause.RELAY_LOG_DURABILITY),
        )
        s.add(episode)
        s.flush()
        s.add(
            EpisodeCause(
                episode_id=episode.id,
                cause=int(Cause.RELAY_LOG_DURABILITY),
                started_at=_dt(now_s - 175),
                ended_at=_dt(now_s - 40),
                confidence=0.9,
                sentence=FSYNC_SENTENCE,
                action=FSYNC_ACTION,
                evidence={"io_queueing_polls": 44, "polls": 45, "sync_relay_log": "1"},
            )
        )
        channel.episode_id = episode.id
        channel.current_causes = [{**finding_to_json(NOT_IDENTIFIED), "since": now_s - 40}]
        return DemoAlert(episode.id, channel.id)


def poll(server: ApiServer, cluster_id: int, alert: DemoAlert, at_s: float, lag_s: float) -> None:
    """One recorded poll of replica1, then the evaluation the worker runs after a tick."""
    at = _dt(at_s)
    with server.sessions() as s, s.begin():
        s.add(
            Sample(
                channel_id=alert.channel_id,
                ts=at,
                verdict=Verdict.APPLY_BOUND if lag_s > 1 else Verdict.CAUGHT_UP,
                lag_s=lag_s,
                lag_source=LagSource.HEARTBEAT,
                not_received=0,
                received_not_applied=int(lag_s * 40),
                sql_running=True,
                io_state=1,
            )
        )
        replica = s.get_one(Channel, alert.channel_id).instance
        s.add(InstanceSample(instance_id=replica.id, ts=at, reachable=True))
        replica.last_polled_at = at
    with server.sessions() as s, s.begin():
        evaluate_cluster(s, cluster_id, at_s)


def deliver_pending(server: ApiServer) -> int:
    """Send every pending delivery once with Lagscope's own request builder and sender."""
    box = store_box(server.sessions, server.settings.secret_key)
    sent = 0
    with server.sessions() as s, s.begin():
        pending = select(Delivery).where(Delivery.status == "pending").order_by(Delivery.id)
        for delivery in s.scalars(pending).all():
            target = s.get_one(WebhookTarget, delivery.target_id)
            now = time.time()
            outcome = send(
                build_request(box, server.settings, delivery, target, now), server.settings
            )
            record(s, server.settings, delivery.id, outcome, now)
            sent += 1
    return sent


def fire_and_resolve(server: ApiServer, cluster_id: int) -> DemoAlert:
    """The demo's rule fires on replica1 draining a backlog the fsyncs made, then resolves."""
    start = time.time() - 120
    alert = seed_draining_replica(server, cluster_id, start)
    for second in range(36):  # over 30 s for the rule's 30 s
        poll(server, cluster_id, alert, start + second, 41.0 - second * 0.2)
    for second in range(36, 40):  # drained
        poll(server, cluster_id, alert, start + second, 0.1)
    return alert
