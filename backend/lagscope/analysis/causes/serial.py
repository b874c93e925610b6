"""JSON forms of findings and episode state: what the store keeps on a channel and an episode.

Reading is forgiving: a stored state written by an older version (missing keys) or naming a
cause this version does not know reads as what it can (the unknown segment is dropped), never
as an error that would stop the channel's polling.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from lagscope.analysis.causes.episodes import EpisodeState, OpenSegment
from lagscope.analysis.causes.model import Cause, EvidenceValue, Finding
from lagscope.analysis.server_text import clean_text
from lagscope.collectors.snapshot import EVIDENCE_TEXT_MAX


def finding_to_json(finding: Finding) -> dict[str, Any]:
    """The stored form: every text cleaned (server text may hold NUL, which PostgreSQL refuses
    in text and JSON, and characters that forge what a reader sees)."""
    return {
        "cause": finding.cause.label,
        "confidence": round(finding.confidence, 3),
        "sentence": clean_text(finding.sentence),
        "action": clean_text(finding.action),
        "evidence": {clean_text(k): _bounded(v) for k, v in finding.evidence.items()},
        "needs": None if finding.needs is None else clean_text(finding.needs),
    }


def _bounded(value: EvidenceValue) -> EvidenceValue:
    """Server text is data: stored at most ``EVIDENCE_TEXT_MAX`` characters, whoever built it."""
    if isinstance(value, str):
        return clean_text(value[:EVIDENCE_TEXT_MAX])
    return value


def finding_from_json(raw: Mapping[str, Any]) -> Finding:
    return Finding(
        cause=Cause[str(raw["cause"]).upper()],
        confidence=float(raw.get("confidence", 0.0)),
        sentence=str(raw.get("sentence", "")),
        action=str(raw.get("action", "")),
        evidence=MappingProxyType(dict(raw.get("evidence") or {})),
        needs=raw.get("needs"),
    )


def _segment_to_json(s: OpenSegment) -> dict[str, Any]:
    return {
        "started_at": s.started_at,
        "last_seen_at": s.last_seen_at,
        "missed_polls": s.missed_polls,
        "missed_since": s.missed_since,
        "finding": finding_to_json(s.finding),
    }


def _segments_from_json(raw: Any) -> tuple[OpenSegment, ...]:
    segments = []
    for s in raw or ():
        try:
            finding = finding_from_json(s["finding"])
        except (KeyError, TypeError, ValueError):
            continue  # a cause this version does not know
        segments.append(
            OpenSegment(
                finding.cause,
                float(s["started_at"]),
                float(s.get("last_seen_at", s["started_at"])),
                int(s.get("missed_polls") or 0),
                finding,
                s.get("missed_since"),
            )
        )
    return tuple(segments)


def episode_state_to_json(state: EpisodeState) -> dict[str, Any]:
    return {
        "started_at": state.started_at,
        "peak_lag_s": state.peak_lag_s,
        "peak_at": state.peak_at,
        "caught_up_since": state.caught_up_since,
        "growing_polls": state.growing_polls,
        "last_trx_behind": state.last_trx_behind,
        "segments": [_segment_to_json(s) for s in state.segments],
        "pending": [_segment_to_json(s) for s in state.pending],
        "held": [[c.label, round(s, 3)] for c, s in state.held],
        "main_cause": state.main_cause.label if state.main_cause is not None else None,
        "saved_at": state.saved_at,
    }


def _cause(label: Any) -> Cause | None:
    try:
        return Cause[str(label).upper()]
    except KeyError:
        return None


def episode_state_from_json(raw: Mapping[str, Any] | None) -> EpisodeState:
    if not raw:
        return EpisodeState()
    held = tuple(
        (cause, float(seconds))
        for label, seconds in raw.get("held") or ()
        if (cause := _cause(label)) is not None
    )
    main = raw.get("main_cause")
    return EpisodeState(
        started_at=raw.get("started_at"),
        peak_lag_s=raw.get("peak_lag_s"),
        peak_at=raw.get("peak_at"),
        caught_up_since=raw.get("caught_up_since"),
        growing_polls=int(raw.get("growing_polls") or 0),
        last_trx_behind=raw.get("last_trx_behind"),
        segments=_segments_from_json(raw.get("segments")),
        pending=_segments_from_json(raw.get("pending")),
        held=held,
        main_cause=_cause(main) if main is not None else None,
        saved_at=raw.get("saved_at"),
    )
