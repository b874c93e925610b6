"""One cluster's live status: each instance's state (reachable, stale, its login, heartbeat and
settings problems) and each channel's (lag, verdict, where the lag was measured, its ETA band,
the causes named now), as the status page and the alerts read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.analysis.codes import LagSource, Verdict, io_state_from_code
from lagscope.analysis.errant import errant_problem
from lagscope.analysis.eta import Eta, eta, eta_from_json
from lagscope.collectors.snapshot import IoState
from lagscope.history.catching_up import CatchingUp, catching_up
from lagscope.history.cause_views import CurrentCause, current_causes
from lagscope.history.status.latest import (
    STALE_POLLS,
    ChannelRow,
    is_stale,
    latest_channel_rows,
    latest_instance_samples,
)
from lagscope.inventory.instances import get_cluster
from lagscope.inventory.server_logins import ACCESS_DENIED
from lagscope.metrics_catalog import STREAMED
from lagscope.models import Channel, Instance, InstanceSample, ParamValue, Sample


@dataclass(frozen=True, slots=True)
class InstanceState:
    id: int
    name: str
    role: str
    region: str
    enabled: bool
    flavor: str | None
    version: str | None
    reachable: bool | None  # None: never polled
    stale: bool
    last_polled_at: datetime | None
    last_ok_at: datetime | None
    last_error: str | None
    round_trip_s: float | None
    clock_offset_s: float | None
    clock_resolution_s: float | None
    # Durability shortcuts worth a warning: Innodb_redo_log_enabled (MySQL 8.0.21+; None where
    # the server has no such switch) and innodb_doublewrite's current value.
    redo_log_enabled: bool | None = None
    doublewrite: str | None = None
    login_state: str | None = None
    next_attempt_at: datetime | None = None
    # On the cluster's source only: the heartbeat writer has stopped (its last beat), in words.
    heartbeat_stopped_at: datetime | None = None
    heartbeat_problem: str | None = None


@dataclass(frozen=True, slots=True)
class ChannelState:
    id: int
    instance_id: int
    instance: str
    name: str
    sample_at: datetime | None
    stale: bool
    verdict: str | None
    lag_s: float | None
    lag_source: str | None
    seconds_behind_source: int | None
    heartbeat_lag_s: float | None
    applier_lag_s: float | None
    timeline_lag_s: float | None
    timeline_resolution_s: float | None
    io_state: str | None
    io_running: bool | None
    sql_running: bool | None
    # Not recorded per channel yet (the Channel model has no error columns): always None.
    last_io_error: str | None
    last_sql_error: str | None
    relay_log_space: int | None
    trx_behind: int | None
    not_received: int | None
    received_not_applied: int | None
    apply_rate: float | None
    source_rate: float | None
    eta: EtaBand | None
    disagreement: bool
    # Why it is behind: the newest poll's causes, strongest first, and the ongoing episode.
    causes: list[CurrentCause] = field(default_factory=list)
    episode_id: int | None = None
    # Draining a backlog after what made it ended (or a step): None when not catching up.
    catching_up: CatchingUp | None = None
    # GTIDs executed on the replica that its source never wrote: how many (newest sample), which
    # (newest poll) and, when there are some, what to do about them in words.
    errant_trx: int | None = None
    errant_gtids: str | None = None
    errant_problem: str | None = None


@dataclass(frozen=True, slots=True)
class EtaBand:
    """The ETA as served: ``seconds`` with a band (``low_s``–``high_s``), ``never`` when apply
    does not outrun arrival, and what the figure rests on (``basis``)."""

    seconds: float | None
    catching_up: bool
    falling_behind_per_s: float | None
    low_s: float | None = None
    high_s: float | None = None
    never: bool = False
    basis: str | None = None


def eta_band(found: Eta) -> EtaBand:
    """The ETA as served; ``basis`` only from the two names the API documents."""
    return EtaBand(
        seconds=found.seconds,
        catching_up=found.catching_up,
        falling_behind_per_s=found.falling_behind_per_s,
        low_s=found.low_s,
        high_s=found.high_s,
        never=found.never,
        basis=found.basis if found.basis in ("rates", "transaction_progress") else None,
    )


def _channel_eta(channel: Channel, s: Sample | None) -> EtaBand | None:
    """The ETA the newest poll worked out (with its band over recent intervals), or, for a
    channel polled before ETAs were stored, the plain one from the newest sample."""
    stored = eta_from_json(channel.eta)
    if stored is not None:
        return eta_band(stored)
    return eta_band(eta(s.trx_behind, s.apply_rate, s.source_rate)) if s else None


@dataclass(frozen=True, slots=True)
class ClusterStatus:
    id: int
    name: str
    poll_interval_s: float
    stale_after_s: float
    generated_at: datetime
    instances: list[InstanceState] = field(default_factory=list)
    channels: list[ChannelState] = field(default_factory=list)


def cluster_status(session: Session, cluster_id: int, now: datetime) -> ClusterStatus:
    cluster = get_cluster(session, cluster_id)
    interval = cluster.poll_interval_s
    polled = latest_instance_samples(session, [i.id for i in cluster.instances])
    doublewrite = current_param(session, [i.id for i in cluster.instances], "innodb_doublewrite")
    return ClusterStatus(
        id=cluster.id,
        name=cluster.name,
        poll_interval_s=interval,
        stale_after_s=STALE_POLLS * interval,
        generated_at=now,
        instances=[
            _instance_state(
                i,
                polled.get(i.id),
                interval,
                now,
                doublewrite.get(i.id),
                cluster.heartbeat_stopped_at if i.role == "source" else None,
            )
            for i in cluster.instances
        ],
        channels=[
            _channel_state(row, interval, now) for row in latest_channel_rows(session, [cluster_id])
        ],
    )


def current_param(
    session: Session, instance_ids: Sequence[int], name: str
) -> dict[int, str | None]:
    """One tracked parameter's current value per instance (instances never read: absent)."""
    rows = session.execute(
        select(ParamValue.instance_id, ParamValue.value).where(
            ParamValue.instance_id.in_(instance_ids), ParamValue.name == name
        )
    )
    return {instance_id: value for instance_id, value in rows}


def _instance_state(
    instance: Instance,
    polled: InstanceSample | None,
    interval_s: float,
    now: datetime,
    doublewrite: str | None = None,
    heartbeat_stopped_at: datetime | None = None,
) -> InstanceState:
    return InstanceState(
        id=instance.id,
        name=instance.name,
        role=instance.role,
        region=instance.region,
        enabled=instance.enabled,
        flavor=instance.flavor,
        version=instance.version,
        reachable=polled.reachable if polled else None,
        stale=is_stale(instance.last_polled_at, interval_s, now),
        last_polled_at=instance.last_polled_at,
        last_ok_at=instance.last_ok_at,
        last_error=instance.last_error,
        round_trip_s=polled.round_trip_s if polled else None,
        clock_offset_s=instance.clock_offset_s,
        clock_resolution_s=instance.clock_resolution_s,
        redo_log_enabled=polled.redo_log_enabled if polled else None,
        doublewrite=doublewrite,
        login_state=instance.login_state,
        next_attempt_at=instance.next_attempt_at if instance.login_state == ACCESS_DENIED else None,
        heartbeat_stopped_at=heartbeat_stopped_at,
        heartbeat_problem=heartbeat_problem(heartbeat_stopped_at),
    )


def heartbeat_problem(stopped_at: datetime | None) -> str | None:
    """The reason, in words, that the heartbeat lag is not shown as the lag."""
    if stopped_at is None:
        return None
    since = stopped_at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return (
        f"heartbeat writer stopped since {since}: its row on the source no longer advances, "
        "so the heartbeat lag is ignored"
    )


def _channel_state(row: ChannelRow, interval_s: float, now: datetime) -> ChannelState:
    s, channel = row.sample, row.channel
    io_state = io_state_from_code(s.io_state) if s and s.io_state is not None else None
    verdict = s.verdict if s else channel.verdict
    causes = current_causes(channel.current_causes)
    return ChannelState(
        id=channel.id,
        instance_id=row.instance.id,
        instance=row.instance.name,
        name=channel.name,
        sample_at=s.ts if s else None,
        stale=is_stale(s.ts if s else None, interval_s, now),
        verdict=verdict_label(verdict),
        lag_source=lag_source_label(s.lag_source) if s else None,
        io_state=io_state.value if io_state else None,
        io_running=io_state is IoState.YES if io_state else None,
        last_io_error=channel.last_io_error,
        last_sql_error=channel.last_sql_error,
        eta=_channel_eta(channel, s),
        causes=causes,
        episode_id=channel.episode_id,
        catching_up=catching_up(causes),
        errant_gtids=channel.errant_gtids,
        errant_problem=errant_problem(
            row.instance.name,
            row.instance.flavor,
            (s.errant_trx if s else None) or 0,
            channel.errant_gtids or "",
        ),
        **_streamed(s),
    )


# The channel values the live status shows as stored, from the metric catalog.
_STREAMED = tuple(m.name for m in STREAMED if m.per == "channel")


def _streamed(s: Sample | None) -> dict[str, Any]:
    values = {name: getattr(s, name) if s else None for name in _STREAMED}
    values["disagreement"] = bool(values["disagreement"])  # no sample: no disagreement
    return values


def verdict_label(code: int | None) -> str | None:
    return Verdict(code).label if code is not None else None


def lag_source_label(code: int | None) -> str | None:
    return LagSource(code).label if code is not None else None
