"""What a lag check reads from the store (api/routers/check.py), never from a monitored server:
two small indexed reads — the cluster's instances and current channels (by the names' unique
keys; a check token's clusters joined to them, so the token is checked in the same read), then
each channel's polls of the hysteresis window (a range of the samples' ``(channel_id, ts)``
key) — and each replica judged from them (analysis/lag_check.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from sqlalchemy import and_, bindparam, func, or_, select
from sqlalchemy.orm import Session, aliased

from lagscope.analysis.codes import Verdict, io_state_code
from lagscope.analysis.lag_check import (
    ChannelJudgement,
    CheckVerdict,
    Poll,
    Thresholds,
    judge_channel,
    worst,
)
from lagscope.collectors.snapshot import IoState
from lagscope.errors import NotFound
from lagscope.history.status import STALE_POLLS
from lagscope.models import Channel, Cluster, Instance, Sample
from lagscope.security import check_tokens

_IO_NO = io_state_code(IoState.NO)


@dataclass(slots=True)
class CheckedChannel:
    id: int
    name: str
    causes: Any
    episode_id: int | None
    eta: Any
    polls: list[Poll] = field(default_factory=list)
    lag_source: int | None = None
    last_sample_at: datetime | None = None


@dataclass(slots=True)
class CheckedReplica:
    id: int
    name: str
    enabled: bool
    last_polled_at: datetime | None
    failed: bool  # the newest poll of the server failed
    channels: list[CheckedChannel] = field(default_factory=list)


@dataclass(slots=True)
class CheckedCluster:
    name: str
    stale_after_s: float
    replicas: list[CheckedReplica]


def read_cluster(
    session: Session,
    token_hash: str | None,
    cluster_ref: str,
    replica_ref: str | None,
    window_polls: int,
    now: datetime,
) -> CheckedCluster:
    """The cluster (by name or id) within a check token's clusters (``token_hash``; None: a
    user's token, every cluster), with the replica named (every replica when None), its
    current channels and their polls of the last ``window_polls`` intervals."""
    statement, params = _topology(token_hash, cluster_ref, replica_ref)
    rows = _by_name(session.execute(statement, params).all(), 1, cluster_ref)
    if not rows:
        if token_hash is not None and not check_tokens.known(session, token_hash):
            raise check_tokens.unknown_token()
        # Also for a cluster outside the token's list: the same answer as for none at all.
        raise NotFound(f"cluster {cluster_ref!r} not found")
    if token_hash is not None:  # the token's id and last use, after the check's columns
        check_tokens.used(session, rows[0][13], rows[0][14])
    name, interval = rows[0][1], rows[0][2]
    if replica_ref is not None:
        rows = _by_name(rows, 4, replica_ref)
    replicas: dict[int, CheckedReplica] = {}
    channels: dict[int, CheckedChannel] = {}
    for row in rows:
        if row[3] is None:  # the cluster has no such instance (no replica)
            continue
        replica = replicas.get(row[3])
        if replica is None:
            replica = replicas[row[3]] = CheckedReplica(
                row[3], row[4], row[5], row[6], row[7] is not None
            )
        if row[8] is not None:
            channel = CheckedChannel(row[8], row[9], row[10], row[11], row[12])
            replica.channels.append(channel)
            channels[channel.id] = channel
    if channels:
        _read_polls(session, channels, now - timedelta(seconds=window_polls * interval))
    return CheckedCluster(name, STALE_POLLS * interval, list(replicas.values()))


def _topology(
    token_hash: str | None, cluster_ref: str, replica_ref: str | None
) -> tuple[Any, dict[str, Any]]:
    """The cluster named (or numbered) ``cluster_ref`` within the check token's clusters, with the
    instance ``replica_ref`` (every replica when None) and its current channels: one read."""
    params: dict[str, Any] = {"cluster_name": cluster_ref}
    cluster_id, replica_id = _as_id(cluster_ref), _as_id(replica_ref)
    if cluster_id is not None:
        params["cluster_id"] = cluster_id
    if replica_ref is not None:
        params["instance_name"] = replica_ref
        if replica_id is not None:
            params["instance_id"] = replica_id
    if token_hash is not None:
        params["token_hash"] = token_hash
    shape = (
        cluster_id is not None,
        replica_ref is not None,
        replica_id is not None,
        token_hash is not None,
    )
    return _topology_statement(*shape), params


@lru_cache(maxsize=16)
def _topology_statement(by_id: bool, one: bool, one_by_id: bool, scoped: bool) -> Any:
    """Built once per shape, its values bound at each check: a check builds no SQL."""
    instance_match: Any = Instance.role == "replica"
    if one:
        instance_match = Instance.name == bindparam("instance_name")
        if one_by_id:
            instance_match = or_(instance_match, Instance.id == bindparam("instance_id"))
    cluster_match: Any = Cluster.name == bindparam("cluster_name")
    if by_id:
        cluster_match = or_(cluster_match, Cluster.id == bindparam("cluster_id"))
    query = (
        select(
            Cluster.id,
            Cluster.name,
            Cluster.poll_interval_s,
            Instance.id,
            Instance.name,
            Instance.enabled,
            Instance.last_polled_at,
            Instance.last_error_kind,
            Channel.id,
            Channel.name,
            Channel.current_causes,
            Channel.episode_id,
            Channel.eta,
        )
        .select_from(Cluster)
        .outerjoin(Instance, and_(Instance.cluster_id == Cluster.id, instance_match))
        .outerjoin(Channel, and_(Channel.instance_id == Instance.id, Channel.gone_at.is_(None)))
        .where(cluster_match)
        .order_by(Instance.id, Channel.name)
    )
    if scoped:  # a check token: only its clusters, and the token checked in the same read
        query = check_tokens.scope_joins(query, Cluster.id)
    return query


def _as_id(ref: str | None) -> int | None:
    return int(ref) if ref is not None and ref.isdigit() and len(ref) < 10 else None


def _by_name(rows: Sequence[Any], at: int, ref: str) -> list[Any]:
    """A name wins over an id: when ``ref`` is one's name and another's id, the one named."""
    named = [r for r in rows if r[at] == ref]
    return named if named else list(rows)


_POLLS = (
    select(
        Sample.channel_id,
        Sample.ts,
        Sample.lag_s,
        Sample.lag_source,
        Sample.verdict,
        Sample.io_state,
        Sample.sql_running,
    )
    .where(
        Sample.channel_id.in_(bindparam("channels", expanding=True)),
        Sample.ts >= bindparam("since"),
    )
    .order_by(Sample.channel_id, Sample.ts)
)


def _read_polls(session: Session, channels: dict[int, CheckedChannel], since: datetime) -> None:
    """Each channel's polls since ``since``, oldest first: a range of the samples' key each."""
    rows = session.execute(_POLLS, {"channels": sorted(channels), "since": since})
    for channel_id, ts, lag_s, lag_source, verdict, io_state, sql_running in rows:
        channel = channels[channel_id]
        channel.polls.append(
            Poll(
                at=ts,
                lag_s=lag_s,
                answered=io_state is not None or sql_running is not None,
                sql_running=sql_running,
                io_running=None if io_state is None else io_state != _IO_NO,
                broken=verdict == Verdict.BROKEN,
                caught_up=verdict == Verdict.CAUGHT_UP,
            )
        )
        channel.lag_source = lag_source
    quiet = [c for c in channels.values() if not c.polls]
    if quiet:  # no poll in the window: when was the last one (a seek on the key each)?
        newest = aliased(Sample)
        last = (
            select(func.max(newest.ts))
            .where(newest.channel_id == Channel.id)
            .correlate(Channel)
            .scalar_subquery()
        )
        for channel_id, at in session.execute(
            select(Channel.id, last).where(Channel.id.in_([c.id for c in quiet]))
        ):
            channels[channel_id].last_sample_at = at


def judge_replica(
    found: CheckedCluster, replica: CheckedReplica, limits: Thresholds, now: datetime
) -> tuple[CheckVerdict, ChannelJudgement, CheckedChannel | None]:
    """The replica's verdict: its worst channel's (or, with none, its own newest poll's), with
    the judgement and the channel that decided it."""
    judged: list[tuple[ChannelJudgement, CheckedChannel | None]] = [
        (judge_channel(c.polls, now, found.stale_after_s, limits, c.last_sample_at), c)
        for c in replica.channels
    ]
    if not judged:
        judged = [(_without_channel(replica, found.stale_after_s, now), None)]
    decided = worst(j.verdict for j, _ in judged)
    assert decided is not None
    judgement, channel = next((j, c) for j, c in judged if j.verdict is decided)
    return decided, judgement, channel


def _without_channel(
    replica: CheckedReplica, stale_after_s: float, now: datetime
) -> ChannelJudgement:
    """A server with no current channel: judged on its own newest poll."""
    polled = replica.last_polled_at
    if polled is None:
        return ChannelJudgement(CheckVerdict.NOT_POLLED, None, None)
    if (now - polled).total_seconds() > stale_after_s:
        return ChannelJudgement(CheckVerdict.STALE, None, polled)
    if replica.failed:
        return ChannelJudgement(CheckVerdict.UNREACHABLE, None, polled)
    return ChannelJudgement(CheckVerdict.NO_REPLICATION, None, polled)
