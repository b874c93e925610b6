"""What a notification says, as data: the alert, the channel's causes and episode, the changes
and notes of the hour before, and the JSON form a delivery stores them in.

Gathered once when the notification is recorded and stored with it, so a delivery retried an
hour later, by another worker, sends the same body as its first attempt.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Change:
    at: float
    name: str
    old: str | None
    new: str | None


@dataclass(frozen=True, slots=True)
class Note:
    at: float
    text: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Why:
    """One cause the channel's newest poll named when the notification was recorded: its label,
    its words, what is happening and what to do (plain text, bounded by the analysis)."""

    cause: str
    words: str
    sentence: str
    action: str


EvidenceValue = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class EpisodeFacts:
    """The lag episode the alert's channel is in (or was in, for a resolved alert): its main
    cause and that cause's latest evidence — sentence, action, and the evidence's figures."""

    id: int
    started_at: float
    ended_at: float | None
    peak_lag_s: float | None
    cause: str | None  # label; None while no cause is named yet
    words: str
    sentence: str = ""
    action: str = ""
    evidence: dict[str, EvidenceValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AlertContext:
    """One notification's facts, gathered by the service from the store."""

    rule_id: int
    rule_name: str
    metric: str
    severity: str
    status: str  # "firing" | "resolved"
    starts_at: float
    ends_at: float | None
    cluster_id: int
    cluster_name: str
    instance: str
    channel: str
    value: float | None
    threshold: float
    lag_s: float | None = None
    lag_source: str | None = None
    not_received: float | None = None
    received_not_applied: float | None = None
    verdict: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    changes: tuple[Change, ...] = ()
    notes: tuple[Note, ...] = ()
    idempotency_key: str = ""
    # Firing only: until when the evaluation that sent it vouches for it (Alertmanager endsAt).
    valid_until: float | None = None
    # Channel-scoped alerts: why the channel is behind, strongest first ([] when no cause named).
    why: tuple[Why, ...] = ()
    # Channel-scoped alerts: the channel's state now in words (its strongest current cause, else
    # its verdict), and the episode it is in.
    state: str | None = None
    episode: EpisodeFacts | None = None


def context_to_json(ctx: AlertContext) -> dict[str, Any]:
    """The stored form of a notification's facts: a delivery retried an hour later, by another
    worker, sends the same body as its first attempt."""
    data = asdict(ctx)
    data["changes"] = [asdict(c) for c in ctx.changes]
    data["notes"] = [{**asdict(n), "tags": list(n.tags)} for n in ctx.notes]
    data["why"] = [asdict(w) for w in ctx.why]
    data["episode"] = None if ctx.episode is None else asdict(ctx.episode)
    return data


def context_from_json(data: dict[str, Any]) -> AlertContext:
    fields = dict(data)
    fields["changes"] = tuple(Change(**c) for c in data.get("changes", ()))
    fields["notes"] = tuple(
        Note(n["at"], n["text"], tuple(n.get("tags", ()))) for n in data.get("notes", ())
    )
    fields["labels"] = dict(data.get("labels", {}))
    # Contexts stored before causes were named carry no "why".
    fields["why"] = tuple(Why(**w) for w in data.get("why", ()))
    # ... and contexts stored before alerts carried the episode, none.
    episode = data.get("episode")
    fields["episode"] = None if episode is None else EpisodeFacts(**episode)
    return AlertContext(**fields)
