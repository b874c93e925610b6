"""Time to catch up: backlog ÷ (apply rate − source rate) when the replica gains (DESIGN.md §4).

Backlog is in transactions (GTID counts) and rates in transactions per second, or both in
binlog bytes when there are no GTIDs: only the units' agreement matters here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Eta:
    """``seconds`` to catch up (None if not catching up or unknown); if falling behind, how fast."""

    seconds: float | None
    catching_up: bool
    falling_behind_per_s: float | None


def eta(backlog: int | None, apply_rate: float | None, source_rate: float | None) -> Eta:
    """ETA from the backlog and the two rates of the same interval."""
    if backlog is None:
        return Eta(None, False, None)
    # Counts are never negative by construction; <= keeps a stray negative from reading "behind".
    if backlog <= 0:
        return Eta(0.0, True, None)
    if apply_rate is None or source_rate is None:
        return Eta(None, False, None)
    gain_per_s = apply_rate - source_rate
    if gain_per_s > 0:
        return Eta(backlog / gain_per_s, True, None)
    # source − apply rather than −gain: equal rates give 0.0, not −0.0.
    return Eta(None, False, source_rate - apply_rate)
