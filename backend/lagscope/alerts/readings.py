"""What an alert rule looks at: one observation per rule × subject, from what the tick recorded.

A subject is a channel (``c<id>``) for channel metrics, or an instance (``i<id>``) for the
metrics of a whole server (reachability, credentials, parameters, clock), so a source with no
channel can still be unreachable. Nothing here talks to a monitored server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from lagscope.alerts.state import Observation, RuleSpec, Unknown
from lagscope.analysis.codes import Verdict
from lagscope.analysis.eta import eta
from lagscope.metrics_catalog import CHANNEL_ALERTS, INSTANCE_ALERTS, WATCHDOG_ALERTS
from lagscope.models import AlertRule, Channel, Cluster, Instance, ParamChange

# From the metric catalog: rules on channel metrics are judged per channel on its samples, the
# others per instance; the watchdog's (polling_stopped) without a tick (alert_watchdog.py).
CHANNEL_METRICS = CHANNEL_ALERTS
INSTANCE_METRICS = INSTANCE_ALERTS
WATCHDOG_METRICS = WATCHDOG_ALERTS
METRICS = CHANNEL_METRICS + INSTANCE_METRICS
# param_changed looks back this far unless the rule says otherwise (params.window_s).
PARAM_WINDOW_S = 600.0
# The server's words for a login or privilege problem (errors 1045, 1142, 1227, 1370).
_CREDENTIALS = re.compile(r"access denied|denied to user|\b(1045|1142|1227|1370)\b", re.I)


class SampleFields(Protocol):
    """What a rule reads of a channel's sample: a stored ``Sample``, a row of its columns, or
    the row a tick just wrote (alerts/tick_figures.py)."""

    @property
    def ts(self) -> datetime: ...
    @property
    def verdict(self) -> int: ...
    @property
    def lag_s(self) -> float | None: ...
    @property
    def trx_behind(self) -> int | None: ...
    @property
    def not_received(self) -> int | None: ...
    @property
    def received_not_applied(self) -> int | None: ...
    @property
    def errant_trx(self) -> int | None: ...
    @property
    def io_state(self) -> int | None: ...
    @property
    def sql_running(self) -> bool | None: ...
    @property
    def disagreement(self) -> bool: ...
    @property
    def apply_rate(self) -> float | None: ...
    @property
    def source_rate(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Subject:
    key: str
    instance: Instance
    channel: Channel | None


def spec_for(rule: AlertRule, instance_id: int, channel_id: int | None = None) -> RuleSpec | None:
    """The rule's numbers for one instance (and channel), with its overrides applied (the
    instance's, then the channel's); None when an override leaves it out."""
    fields: dict[str, Any] = {
        "threshold": rule.threshold,
        "for_s": rule.for_s,
        "resolve_threshold": rule.resolve_threshold,
    }
    overrides = rule.overrides or ()
    mine = [o for o in overrides if o.get("instance_id") == instance_id and not o.get("channel_id")]
    if channel_id is not None:
        mine += [o for o in overrides if o.get("channel_id") == channel_id]
    for override in mine:
        if override.get("enabled") is False:
            return None
        fields.update({k: override[k] for k in fields if override.get(k) is not None})
    return RuleSpec(
        threshold=float(fields["threshold"]),
        for_s=float(fields["for_s"]),
        resolve_threshold=fields["resolve_threshold"],
        keep_firing_s=rule.keep_firing_s,
        repeat_s=rule.repeat_s,
        unknown=Unknown(rule.null_policy),
    )


def in_scope(rule: AlertRule, instance: Instance, channel: Channel | None) -> bool:
    if rule.cluster_id is not None and rule.cluster_id != instance.cluster_id:
        return False
    if rule.instance_id is not None and rule.instance_id != instance.id:
        return False
    if rule.region and rule.region != instance.region:
        return False
    if rule.channel_id is not None:
        if channel is not None:
            return channel.id == rule.channel_id
        return any(c.id == rule.channel_id for c in instance.channels)
    return True


def subjects(rule: AlertRule, instances: Sequence[Instance]) -> list[Subject]:
    found: list[Subject] = []
    for instance in instances:
        if not instance.enabled:
            continue
        if rule.metric in INSTANCE_METRICS:
            if in_scope(rule, instance, None):
                found.append(Subject(f"i{instance.id}", instance, None))
            continue
        for channel in instance.channels:
            if channel.gone_at is None and in_scope(rule, instance, channel):
                found.append(Subject(f"c{channel.id}", instance, channel))
    return found


def finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def sample_value(metric: str, s: SampleFields, channel: Channel | None) -> float | None:
    """A channel metric's value in one sample (booleans as 0/1; ETA ∞ when not catching up)."""
    if metric == "lag":
        return s.lag_s
    if metric in ("trx_behind", "not_received", "received_not_applied", "errant_trx"):
        raw = getattr(s, metric)
        return None if raw is None else float(raw)
    if metric == "io_stopped":
        return None if s.io_state is None else float(s.io_state == 0)
    if metric == "sql_stopped":
        return None if s.sql_running is None else float(not s.sql_running)
    if metric == "lag_disagreement":
        return float(s.disagreement)
    if metric == "replication_error":
        if s.verdict == Verdict.UNREACHABLE or channel is None:
            return None
        return float(max(channel.last_io_errno or 0, channel.last_sql_errno or 0))
    if metric == "eta":
        if s.trx_behind is None:
            return None
        e = eta(s.trx_behind, s.apply_rate, s.source_rate)
        if e.seconds is not None:
            return e.seconds
        return math.inf if e.falling_behind_per_s is not None else None
    raise ValueError(f"not a channel metric: {metric}")


def answered(s: SampleFields) -> bool:
    """Did the server answer the poll of this sample? A poll that read the channel's status
    always records ``sql_running`` (true or false); one that got no answer records nothing but
    its verdict, which is judged over the last three polls and may still say "stopped"."""
    return s.sql_running is not None


def sample_observation(metric: str, s: SampleFields, channel: Channel | None) -> Observation:
    return Observation(
        at=s.ts.timestamp(),
        value=sample_value(metric, s, channel),
        sql_stopped=s.sql_running is False,
        unreachable=s.verdict == Verdict.UNREACHABLE,
        sql_delay_s=float(channel.sql_delay_s or 0) if channel and metric == "lag" else 0.0,
        unanswered=not answered(s),
    )


def instance_observation(
    session: Session,
    rule: AlertRule,
    cluster: Cluster,
    instance: Instance,
    reachable: bool | None,
) -> Observation | None:
    """``reachable``: the instance's newest instance sample said so (None: it has none).
    ``cluster`` is the instance's: a poll owner's instance, detached, may not have it loaded."""
    if instance.last_polled_at is None:
        return None
    at = instance.last_polled_at.timestamp()
    unreachable = reachable is False
    value: float | None
    if rule.metric == "unreachable":
        value = None if reachable is None else float(unreachable)
    elif rule.metric == "credentials_problem":
        value = float(bool(instance.last_error and _CREDENTIALS.search(instance.last_error)))
    elif rule.metric == "clock_skew":
        value = None if instance.clock_offset_s is None else abs(instance.clock_offset_s)
    elif rule.metric == "heartbeat_writer_stale":
        stopped = instance.role == "source" and cluster.heartbeat_stopped_at is not None
        value = float(stopped)
    else:  # param_changed
        value = float(_param_changes(session, rule, instance.id, instance.last_polled_at))
    return Observation(at=at, value=value, unreachable=unreachable)


def _param_changes(session: Session, rule: AlertRule, instance_id: int, now: datetime) -> int:
    params = rule.params or {}
    window = float(params.get("window_s") or PARAM_WINDOW_S)
    query = select(func.count(ParamChange.id)).where(
        ParamChange.instance_id == instance_id,
        ParamChange.first_new_at > now - timedelta(seconds=window),
    )
    names = [str(n) for n in params.get("names") or ()]
    if names:
        query = query.where(ParamChange.name.in_(names))
    # The judging writes no parameter change: flushing the states judged so far before each
    # count (autoflush) would only split their updates into one flush per server.
    with session.no_autoflush:
        return int(session.scalar(query) or 0)


def at_datetime(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)
