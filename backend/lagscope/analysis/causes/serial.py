"""JSON forms of findings and episode state: what the store keeps on a channel and an episode."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from lagscope.analysis.causes.episodes import EpisodeState, OpenSegment
from lagscope.analysis.causes.model import Cause, Finding


def finding_to_json(finding: Finding) -> dict[str, Any]:
    return {
        "cause": finding.cause.label,
        "confidence": round(finding.confidence, 3),
        "sentence": finding.sentence,
        "action": finding.action,
        "evidence": dict(finding.evidence),
        "needs": finding.needs,
    }


def finding_from_json(raw: Mapping[str, Any]) -> Finding:
    return Finding(
        cause=Cause[str(raw["cause"]).upper()],
        confidence=float(raw.get("confidence", 0.0)),
        sentence=str(raw.get("sentence", "")),
        action=str(raw.get("action", "")),
        evidence=MappingProxyType(dict(raw.get("evidence") or {})),
        needs=raw.get("needs"),
    )


def episode_state_to_json(state: EpisodeState) -> dict[str, Any]:
    return {
        "started_at": state.started_at,
        "peak_lag_s": state.peak_lag_s,
        "peak_at": state.peak_at,
        "caught_up_since": state.caught_up_since,
        "growing_polls": state.growing_polls,
        "last_trx_behind": state.last_trx_behind,
        "segments": [
            {
                "started_at": s.started_at,
                "last_seen_at": s.last_seen_at,
                "missed_polls": s.missed_polls,
                "finding": finding_to_json(s.finding),
            }
            for s in state.segments
        ],
    }


def episode_state_from_json(raw: Mapping[str, Any] | None) -> EpisodeState:
    if not raw:
        return EpisodeState()
    segments = []
    for s in raw.get("segments") or ():
        finding = finding_from_json(s["finding"])
        segments.append(
            OpenSegment(
                finding.cause, s["started_at"], s["last_seen_at"], s["missed_polls"], finding
            )
        )
    return EpisodeState(
        started_at=raw.get("started_at"),
        peak_lag_s=raw.get("peak_lag_s"),
        peak_at=raw.get("peak_at"),
        caught_up_since=raw.get("caught_up_since"),
        growing_polls=int(raw.get("growing_polls") or 0),
        last_trx_behind=raw.get("last_trx_behind"),
        segments=tuple(segments),
    )
