"""The catching-up finding in words: since when, after what, how fast the backlog drains or that
it only keeps pace, the two rates and the ETA, what made the backlog and what limits the drain,
with the same figures as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType

from lagscope.analysis.causes import words
from lagscope.analysis.causes.catching_up_pace import (
    BARELY_DRAINING,
    BARELY_S_PER_S,
    DRAINING,
    NOT_DRAINING,
    Pace,
    lag_rise_s_per_s,
)
from lagscope.analysis.causes.model import Cause, EpisodeContext, EvidenceValue, Finding, StepSeen
from lagscope.analysis.causes.seen import Seen

CONFIDENCE = 0.8


@dataclass(frozen=True, slots=True)
class Drain:
    """What this poll's catching up was judged to be: since when, how the backlog goes (and its
    drain in s of lag per s, its pace), after which step or main cause, what still limits it,
    and the turn the drain is measured from."""

    since: float
    how: str
    per_s: float | None
    pace: Pace | None
    step: StepSeen | None
    main: Cause | None
    limit: Finding | None
    turn: float | None


def clock(epoch_s: float) -> str:
    """``04:44:03 UTC``: a time inside a sentence."""
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%H:%M:%S UTC")


def iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _eta_s(seen: Seen, per_s: float | None) -> float | None:
    """The status's ETA while it says the replica gains; else the lag over its drain rate."""
    metrics = seen.inputs.metrics
    eta = metrics.eta
    if eta is not None and eta.catching_up and eta.seconds is not None:
        return eta.seconds
    if per_s and metrics.lag_s is not None:
        return metrics.lag_s / per_s
    return None


def _s_per_s(value: float) -> str:
    """``1.4 s/s``; under BARELY_S_PER_S two decimals, so "barely draining 0.19 s/s" does not
    read as the 0.2 s/s of a drain."""
    return f"{value:.1f} s/s" if value >= BARELY_S_PER_S else f"{value:.2f} s/s"


_HEADS = {
    DRAINING: "is catching up",
    BARELY_DRAINING: "is keeping pace but barely draining",
    NOT_DRAINING: "is keeping pace, not draining,",
}


def catching_up_finding(seen: Seen, episode: EpisodeContext, d: Drain) -> Finding:
    """The finding for this poll's catching up, ``d`` as judged."""
    rising = lag_rise_s_per_s(seen, d.turn) if d.how == NOT_DRAINING else None
    eta_s = None if d.how == NOT_DRAINING else _eta_s(seen, d.per_s)
    figures = _figures(seen, d, rising, eta_s)
    main, limit = d.main, d.limit
    made = (
        f"the backlog was made by {main.words}"
        if main is not None
        else "what made the backlog was not identified"
    )
    limited = f"; what limits the drain: {limit.cause.words}" if limit is not None else ""
    sentence = (
        f"{seen.name} {_HEADS[d.how]} since {clock(d.since)} {_after(d)}: {', '.join(figures)}; "
        f"{made}{limited}."
    )
    return Finding(
        Cause.CATCHING_UP,
        CONFIDENCE,
        sentence,
        _action(d),
        MappingProxyType(_evidence(seen, episode, d, rising, eta_s)),
    )


def _after(d: Drain) -> str:
    """After what the backlog drains: the step taken, or the main cause that ended."""
    step, main = d.step, d.main
    if step is not None:
        return f"after {step.what} on {step.instance} ({clock(step.at)})"
    return f"after {main.words if main else 'its cause'} ended"


def _figures(seen: Seen, d: Drain, rising: float | None, eta_s: float | None) -> list[str]:
    """The lag, how it goes, the rates and the ETA, as the sentence lists them."""
    metrics, pace, per_s = seen.inputs.metrics, d.pace, d.per_s
    rates = (
        f"apply {words.per_s(pace.apply_rate)} vs source {words.per_s(pace.source_rate)}"
        if pace is not None
        else None
    )
    figures = []
    if metrics.lag_s is not None:
        figures.append(f"{words.seconds(metrics.lag_s)} behind")
    if rising is not None:
        figures.append(f"its lag still growing {_s_per_s(rising)}")
    if d.how == NOT_DRAINING:
        if rates is not None:
            figures.append(rates)
    elif per_s is not None:
        figures.append(f"draining {_s_per_s(per_s)}" + (f" ({rates})" if rates else ""))
    elif metrics.trx_behind is not None:
        figures.append(f"{words.count(metrics.trx_behind)} transactions to apply, falling")
    if eta_s is not None:
        figures.append(f"ETA {words.seconds(eta_s)}")
    elif d.how == NOT_DRAINING:
        figures.append("no ETA at this pace")
    return figures


def _action(d: Drain) -> str:
    """What still limits the drain says what to do; else wait, or raise the apply capacity."""
    if d.limit is not None:
        return d.limit.action
    if d.how == DRAINING:
        return (
            "Nothing to do while it drains; the episode shows what made the backlog. If it "
            "stops gaining, look at the replica's thread states and the source's write rate."
        )
    return (
        "At this pace the backlog drains slowly or not at all: raise the replica's apply "
        "capacity (parallel apply, lighter durability) or let the source write less, and "
        "record the change as a journal step; the episode shows what made the backlog."
    )


def _evidence(
    seen: Seen, episode: EpisodeContext, d: Drain, rising: float | None, eta_s: float | None
) -> dict[str, EvidenceValue]:
    metrics, step, main, limit, pace, per_s = (
        seen.inputs.metrics, d.step, d.main, d.limit, d.pace, d.per_s
    )  # fmt: skip
    return {
        "since": iso(d.since),
        "after": "step" if step is not None else "cause_ended",
        "step": step.what if step is not None else None,
        "step_instance": step.instance if step is not None else None,
        "step_at": iso(step.at) if step is not None else None,
        "main_cause": main.label if main is not None else None,
        "main_cause_words": main.words if main is not None else None,
        "limit": limit.cause.label if limit is not None else None,
        "limit_words": limit.cause.words if limit is not None else None,
        "pace": d.how,
        "drain_s_per_s": round(per_s, 3) if per_s is not None else None,
        "eta_s": round(eta_s, 1) if eta_s is not None else None,
        "lag_s": metrics.lag_s,
        "trx_behind": metrics.trx_behind,
        "apply_rate": round(pace.apply_rate, 1) if pace is not None else None,
        "source_rate": round(pace.source_rate, 1) if pace is not None else None,
        "trx_drain_per_s": round(-pace.trx_per_s, 1) if pace is not None else None,
        "pace_polls": pace.polls if pace is not None else None,
        "lag_rise_s_per_s": round(rising, 3) if rising is not None else None,
        "episode_started_at": iso(episode.started_at),
    }
