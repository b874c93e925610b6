"""A channel's catching-up state as the status and ``/metrics`` serve it, read from its current
causes (the finding analysis/causes/catching_up.py names, stored with the others)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from lagscope.analysis.causes.model import Cause
from lagscope.history.cause_views import CauseRef, CurrentCause, cause_from_label, cause_ref


@dataclass(frozen=True, slots=True)
class CatchingUp:
    """Catching up since ``since``, after a step (``step``, on ``step_instance`` at ``step_at``)
    or after the episode's main cause ended; how fast the lag drains, the ETA, the cause that
    made the backlog, and what limits the drain when a rule names it."""

    since: datetime | None
    after: str  # "step" or "cause_ended"
    step: str | None
    step_instance: str | None
    step_at: datetime | None
    main_cause: CauseRef | None
    limit: CauseRef | None
    drain_s_per_s: float | None
    eta_s: float | None
    sentence: str


def catching_up(causes: Sequence[CurrentCause]) -> CatchingUp | None:
    """The catching-up state among a channel's current causes (None: not catching up)."""
    found = next((c for c in causes if c.cause == Cause.CATCHING_UP.label), None)
    if found is None:
        return None
    ev = found.evidence
    return CatchingUp(
        since=_time(ev.get("since")) or found.since,
        after="step" if ev.get("after") == "step" else "cause_ended",
        step=_text(ev.get("step")),
        step_instance=_text(ev.get("step_instance")),
        step_at=_time(ev.get("step_at")),
        main_cause=cause_ref(cause_from_label(ev.get("main_cause"))),
        limit=cause_ref(cause_from_label(ev.get("limit"))),
        drain_s_per_s=_number(ev.get("drain_s_per_s")),
        eta_s=_number(ev.get("eta_s")),
        sentence=found.sentence,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
