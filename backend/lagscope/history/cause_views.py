"""A cause as the API and the alerts show it: a stored cause code or label made its label and
operator words, its evidence and text cleaned and bounded, its segment of an episode, and a
channel's current causes.

A code this version does not know (a newer writer) is left out rather than guessed. Evidence and
text are data from monitored servers: only flat scalar values are passed on, text bounded to
:data:`EVIDENCE_TEXT_MAX` characters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lagscope.analysis.causes import words
from lagscope.analysis.causes.model import Cause
from lagscope.analysis.server_text import clean_text
from lagscope.models.episodes import EpisodeCause

EVIDENCE_TEXT_MAX = 500

Scalar = str | int | float | bool | None

_LABELS: Mapping[str, Cause] = {c.label: c for c in Cause}


def cause_of(code: int | None) -> Cause | None:
    if code is None:
        return None
    try:
        return Cause(code)
    except ValueError:
        return None


def cause_from_label(label: Any) -> Cause | None:
    return _LABELS.get(str(label)) if label is not None else None


def bounded(text: Any) -> str:
    return clean_text(str(text)[:EVIDENCE_TEXT_MAX])


def clean_evidence(raw: Any, full_text: bool = False) -> dict[str, Scalar]:
    """Flat scalars only (a nested value is shown as its text), keys and text bounded and
    cleaned. A statement's full text only with ``full_text`` (an editor asks); a statement
    stored before digests were kept is digested here."""
    if not isinstance(raw, Mapping):
        return {}
    out: dict[str, Scalar] = {}
    for key, value in list(raw.items())[:100]:
        name = bounded(key)
        if words.is_full_text(name) and not full_text:
            continue
        if value is None or isinstance(value, bool | int | float):
            out[name] = value
        elif name.endswith("statement"):
            out[name] = words.statement(str(value))
        else:
            out[name] = bounded(value)
    return out


@dataclass(frozen=True, slots=True)
class CauseRef:
    cause: str
    words: str


def cause_ref(cause: Cause | None) -> CauseRef | None:
    return CauseRef(cause.label, cause.words) if cause is not None else None


@dataclass(frozen=True, slots=True)
class CauseSegment:
    cause: str
    words: str
    started_at: datetime
    ended_at: datetime | None
    confidence: float
    sentence: str
    action: str
    evidence: dict[str, Scalar]
    needs: str | None


@dataclass(frozen=True, slots=True)
class CurrentCause:
    cause: str
    words: str
    since: datetime | None
    confidence: float
    sentence: str
    action: str
    evidence: dict[str, Scalar]
    needs: str | None


def segment(row: EpisodeCause, full_text: bool = False) -> CauseSegment | None:
    cause = cause_of(row.cause)
    if cause is None:
        return None
    return CauseSegment(
        cause=cause.label,
        words=cause.words,
        started_at=row.started_at,
        ended_at=row.ended_at,
        confidence=float(row.confidence or 0.0),
        sentence=bounded(row.sentence or ""),
        action=bounded(row.action or ""),
        evidence=clean_evidence(row.evidence, full_text),
        needs=bounded(row.needs) if row.needs else None,
    )


def segments(rows: Iterable[EpisodeCause], full_text: bool = False) -> list[CauseSegment]:
    return [s for s in (segment(r, full_text) for r in rows) if s is not None]


def current_causes(raw: Sequence[Any] | None) -> list[CurrentCause]:
    """A channel's stored ``current_causes`` (serial.finding_to_json + ``since``) for display."""
    out = []
    for item in raw or ():
        if not isinstance(item, Mapping):
            continue
        cause = cause_from_label(item.get("cause"))
        if cause is None:
            continue
        since = item.get("since")
        try:
            confidence = float(item.get("confidence") or 0.0)
            at = datetime.fromtimestamp(float(since), UTC) if since is not None else None
        except (TypeError, ValueError, OverflowError, OSError):
            continue
        out.append(
            CurrentCause(
                cause=cause.label,
                words=cause.words,
                since=at,
                confidence=confidence,
                sentence=bounded(item.get("sentence") or ""),
                action=bounded(item.get("action") or ""),
                evidence=clean_evidence(item.get("evidence")),
                needs=bounded(item["needs"]) if item.get("needs") else None,
            )
        )
    return out
