"""A generated fleet for the overview's tests: ``count`` clusters of a source and 2–6 replicas
each (100 clusters: 500 servers), four regions, written straight into a store's tables.

Nothing polls it: the clusters' poll interval is 10 minutes, so what is written stays current
(not stale) for half an hour. Most clusters are caught up (under a second); a few have each
problem the overview sorts first, at fixed positions (``Fleet.special``):

    firing       index 3:   a replica 35 s behind with a firing alert on it
    stopped      index 44:  a replica whose SQL thread is stopped (no lag)
    unreachable  17, 58:    a replica that did not answer its last poll
    behind       9 (120 s, blocked by a session), 26 (40 s, one large transaction),
                 71 (12 s, receive-bound: the link)
    disabled     index 90

``advance`` writes one more round of samples, each lag moved by a factor, as a poll would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.codes import LagSource, Verdict
from lagscope.models import AlertRule, AlertState, Channel, Instance, InstanceSample, Sample

from .store import make_cluster

REGIONS = ("beijing", "ningxia", "frankfurt", "virginia")
WORDS = ("orders", "billing", "search", "ledger", "users")
POLL_INTERVAL_S = 600.0
HISTORY = timedelta(minutes=15)
STEP = timedelta(seconds=15)

FIRING, STOPPED, DISABLED = 3, 44, 90
UNREACHABLE = (17, 58)
# index → (lag of its first replica, verdict, cause code, cause words)
BEHIND: dict[int, tuple[float, Verdict, str, str]] = {
    3: (35.0, Verdict.APPLY_BOUND, "large_transaction", "one large transaction"),
    9: (120.0, Verdict.APPLY_BOUND, "blocked_by_session", "blocked by a session on the replica"),
    26: (40.0, Verdict.APPLY_BOUND, "large_transaction", "one large transaction"),
    71: (12.0, Verdict.RECEIVE_BOUND, "network", "the link to the source"),
}


def cluster_name(index: int) -> str:
    return f"{WORDS[index % len(WORDS)]}-{index:03d}"


@dataclass
class Fleet:
    ids: list[int]  # by index
    names: list[str]
    regions: list[str]  # each cluster's source region
    channels: dict[int, list[int]] = field(default_factory=dict)  # cluster index → channel ids
    lags: dict[int, float | None] = field(default_factory=dict)  # channel id → newest lag
    verdicts: dict[int, Verdict] = field(default_factory=dict)  # channel id → verdict

    def index(self, name: str) -> int:
        return self.names.index(name)


def _lag(index: int, replica: int) -> tuple[float | None, Verdict]:
    if index == STOPPED and replica == 0:
        return None, Verdict.STOPPED
    if index in UNREACHABLE and replica == 0:
        return None, Verdict.UNREACHABLE
    if index in BEHIND and replica == 0:
        lag, verdict, _, _ = BEHIND[index]
        return lag, verdict
    return round(0.1 + ((index * 7 + replica * 3) % 8) / 10, 3), Verdict.CAUGHT_UP


def _sample(channel_id: int, ts: datetime, lag: float | None, verdict: Verdict) -> dict[str, Any]:
    return {"channel_id": channel_id, "ts": ts, "verdict": verdict, "lag_s": lag,
            "lag_source": LagSource.HEARTBEAT if lag is not None else None,
            "heartbeat_lag_s": lag, "disagreement": False}  # fmt: skip


def make_fleet(sessions: sessionmaker[Session], count: int, now: datetime, first: int = 0) -> Fleet:
    """``count`` clusters (indexes ``first`` on) with 15 minutes of samples (one per 15 s)
    ending at ``now``; the alert fires when the firing cluster is among them."""
    fleet = Fleet([], [], [])
    with sessions() as session, session.begin():
        for index in range(first, first + count):
            name, region = cluster_name(index), REGIONS[index % len(REGIONS)]
            replicas = 2 + index % 5
            servers: list[tuple[Any, ...]] = [(f"{name}-db0", 3306, "source", region)]
            for r in range(replicas):
                # Every third cluster keeps its last replica in the next region.
                far = index % 3 == 0 and r == replicas - 1
                servers.append(
                    (
                        f"{name}-db{r + 1}",
                        3307 + r,
                        "replica",
                        REGIONS[(index + far) % len(REGIONS)],
                    )
                )
            cluster, named = make_cluster(
                session, name, servers, password="", poll_interval_s=POLL_INTERVAL_S
            )
            cluster.enabled = index != DISABLED
            fleet.ids.append(cluster.id)
            fleet.names.append(name)
            fleet.regions.append(region)
            channel_ids = []
            for r in range(replicas):
                replica = named[f"{name}-db{r + 1}"]
                channel = Channel(name="", first_seen_at=now - HISTORY)
                lag, verdict = _lag(index, r)
                if index in BEHIND and r == 0:
                    _, _, cause, words = BEHIND[index]
                    channel.current_causes = [_cause(cause, words, now)]
                replica.channels.append(channel)
                session.flush()
                channel_ids.append(channel.id)
                fleet.lags[channel.id] = lag
                fleet.verdicts[channel.id] = verdict
            fleet.channels[index] = channel_ids
            for instance in named.values():
                instance.last_polled_at = now
                instance.last_ok_at = now
        session.flush()
        _write_round(session, fleet, now, history=True)
        if first <= FIRING < first + count:
            _alert(session, fleet, now, FIRING - first)
    return fleet


def _cause(cause: str, words: str, now: datetime) -> dict[str, Any]:
    return {"cause": cause, "words": words, "since": (now - timedelta(minutes=5)).timestamp(),
            "confidence": 0.9, "sentence": f"{words} (generated)", "action": "none",
            "evidence": {}}  # fmt: skip


def _write_round(session: Session, fleet: Fleet, now: datetime, history: bool) -> None:
    steps = int(HISTORY / STEP) if history else 1
    rows = [
        _sample(
            channel_id,
            now - STEP * (steps - 1 - s),
            fleet.lags[channel_id],
            fleet.verdicts[channel_id],
        )
        for channel_id in fleet.lags
        for s in range(steps)
    ]
    session.execute(insert(Sample), rows)
    unreachable = {
        fleet.ids[fleet.index(cluster_name(i))]
        for i in UNREACHABLE
        if cluster_name(i) in fleet.names
    }
    instances = session.execute(select(Instance.id, Instance.cluster_id, Instance.name)).all()
    session.execute(
        insert(InstanceSample),
        [
            {"instance_id": iid, "ts": now,
             "reachable": not (cid in unreachable and name.endswith("-db1")),
             "round_trip_s": 0.001}
            for iid, cid, name in instances
        ],
    )  # fmt: skip
    session.execute(
        update(Instance)
        .where(Instance.cluster_id.in_(unreachable), Instance.name.like("%-db1"))
        .values(last_error="Can't connect to server (generated)")
    )
    session.execute(update(Instance).values(last_polled_at=now))


def _alert(session: Session, fleet: Fleet, now: datetime, position: int) -> None:
    rule = AlertRule(
        name="lag over 30 s", metric="lag", threshold=30.0, severity="critical",
        created_at=now, updated_at=now,
    )  # fmt: skip
    session.add(rule)
    session.flush()
    channel_id = fleet.channels[FIRING][0]
    cluster_id = fleet.ids[position]
    instance_id = session.scalar(select(Channel.instance_id).where(Channel.id == channel_id))
    assert instance_id is not None
    session.add(
        AlertState(rule_id=rule.id, subject=f"c{channel_id}", cluster_id=cluster_id,
                   instance_id=instance_id, channel_id=channel_id, phase="firing",
                   since=now - timedelta(minutes=2), breaching=True, value=35.0)
    )  # fmt: skip


def advance(sessions: sessionmaker[Session], fleet: Fleet, now: datetime, factor: float) -> None:
    """One more poll round at ``now``: every known lag times ``factor`` (verdicts kept)."""
    for channel_id, lag in fleet.lags.items():
        fleet.lags[channel_id] = None if lag is None else round(lag * factor, 3)
    with sessions() as session, session.begin():
        _write_round(session, fleet, now, history=False)
