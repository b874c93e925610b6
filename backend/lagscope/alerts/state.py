"""Alert rule evaluation as a pure state machine: ok → pending → firing → resolved.

One ``AlertState`` per rule × channel is kept in the store; each tick feeds an ``Observation`` and
the previous state into :func:`step`, which returns the new state and at most one notification.
The caller persists the new state and the notification in one transaction, so a worker restart or
another worker taking the next tick neither loses nor repeats a notification.

Why the extra knobs: lag alerts flap on one-sample spikes (``for_s``), around the threshold
(``resolve_threshold`` hysteresis, ``keep_firing_s``), and go silent on NULL lag (``unknown``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum


class Phase(StrEnum):
    OK = "ok"
    PENDING = "pending"
    FIRING = "firing"


class Unknown(StrEnum):
    """What a NULL value means for a threshold rule (a NULL lag never counts as fine)."""

    # default: breach when SQL thread stopped or unreachable; one unanswered poll keeps the last
    FIRING_IF_BROKEN = "firing_if_broken"
    FIRING = "firing"
    KEEP = "keep"  # keep the previous judgement
    OK = "ok"


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """The part of a rule the state machine needs. Thresholds compare with ``>``."""

    threshold: float
    for_s: float = 0.0
    resolve_threshold: float | None = None  # None: same as threshold
    keep_firing_s: float = 0.0
    repeat_s: float | None = None  # re-notify while firing; None: never
    unknown: Unknown = Unknown.FIRING_IF_BROKEN


@dataclass(frozen=True, slots=True)
class Observation:
    """One tick's value for a channel. ``sql_delay_s`` is subtracted (delayed replicas).

    ``unreachable`` is the verdict (a window of polls); ``unanswered`` says this one poll got no
    answer, which the window may not call unreachable yet: one slow poll on a busy box."""

    at: float  # epoch seconds of the tick
    value: float | None
    sql_stopped: bool = False
    unreachable: bool = False
    sql_delay_s: float = 0.0
    unanswered: bool = False


@dataclass(frozen=True, slots=True)
class AlertState:
    phase: Phase = Phase.OK
    since: float | None = None  # when the current phase began (pending start / firing start)
    last_breach_at: float | None = None
    last_notified_at: float | None = None
    breaching: bool = False  # the last judgement (used by Unknown.KEEP)


@dataclass(frozen=True, slots=True)
class Notification:
    kind: str  # "firing" | "resolved" | "repeat"
    at: float
    starts_at: float
    value: float | None


def judge(rule: RuleSpec, obs: Observation, prev: AlertState) -> bool:
    """Is this observation a breach? Uses the resolve threshold while firing (hysteresis)."""
    if obs.value is None:
        if rule.unknown is Unknown.FIRING:
            return True
        if rule.unknown is Unknown.OK:
            return False
        if rule.unknown is Unknown.KEEP:
            return prev.breaching
        if obs.sql_stopped or obs.unreachable:
            return True
        # A poll that got no answer says nothing about the channel: the last judgement stands,
        # so one slow poll neither resolves a firing alert (to fire it again on the next poll)
        # nor starts one. Two in a window of three make the verdict unreachable, a breach.
        return prev.breaching if obs.unanswered else False
    value = obs.value - obs.sql_delay_s
    if prev.phase is Phase.FIRING:
        bound = rule.threshold if rule.resolve_threshold is None else rule.resolve_threshold
        return value > bound
    return value > rule.threshold


def step(
    rule: RuleSpec, prev: AlertState, obs: Observation
) -> tuple[AlertState, Notification | None]:
    """Advance one tick. Returns the new state and the notification to record, if any."""
    breach = judge(rule, obs, prev)
    value = obs.value
    now = obs.at
    st = replace(prev, breaching=breach, last_breach_at=now if breach else prev.last_breach_at)
    if prev.phase is Phase.OK:
        if not breach:
            return st, None
        st = replace(st, phase=Phase.PENDING, since=now)
        prev = st
    if prev.phase is Phase.PENDING:
        if not breach:
            return replace(st, phase=Phase.OK, since=None), None
        since = prev.since if prev.since is not None else now
        if now - since >= rule.for_s:
            fired = replace(st, phase=Phase.FIRING, since=now, last_notified_at=now)
            return fired, Notification("firing", now, now, value)
        return st, None
    # FIRING
    starts = prev.since if prev.since is not None else now
    if breach:
        last = prev.last_notified_at if prev.last_notified_at is not None else starts
        if rule.repeat_s is not None and now - last >= rule.repeat_s:
            return replace(st, last_notified_at=now), Notification("repeat", now, starts, value)
        return st, None
    last_breach = prev.last_breach_at if prev.last_breach_at is not None else starts
    if now - last_breach < rule.keep_firing_s:
        return st, None
    resolved = AlertState(phase=Phase.OK, last_notified_at=now, last_breach_at=prev.last_breach_at)
    return resolved, Notification("resolved", now, starts, value)
