"""The figures the scenario reports per phase: each replica's lag (median, peak, last), apply and
source rates, and when it drained, read from the store's samples and printed as one line.

These are the numbers docs/demo.md quotes, so they are computed apart from the plan that makes
them happen.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lagscope.demo.scenario import Phase


@dataclass(frozen=True, slots=True)
class ReplicaFigures:
    """One replica over one phase, from the store's samples."""

    samples: int
    lag_p50: float | None
    lag_max: float | None
    lag_last: float | None
    apply_rate: float | None
    source_rate: float | None
    # Seconds from the phase's start until it drained: the first sample under CAUGHT_UP_S
    # after the phase's highest lag (None: it did not).
    caught_up_after_s: float | None = None


CAUGHT_UP_S = 2.0  # "under 2 s": the story's mark for a replica that has caught up


def replica_figures(
    lags: Sequence[float | None],
    apply_rates: Sequence[float | None],
    source_rates: Sequence[float | None],
    offsets_s: Sequence[float] = (),
) -> ReplicaFigures:
    """``offsets_s``: each sample's seconds since the phase began, in the order of ``lags``."""
    known = [lag for lag in lags if lag is not None]
    timed = [(t, lag) for t, lag in zip(offsets_s, lags, strict=False) if lag is not None]
    # Drained: the first sample under the mark after the phase's peak (a rising phase has
    # none); a phase that never reached the mark was caught up from its first sample.
    peak = max(range(len(timed)), key=lambda i: timed[i][1], default=0)
    if timed and timed[peak][1] < CAUGHT_UP_S:
        peak = 0
    caught_up = next((t for t, lag in timed[peak:] if lag < CAUGHT_UP_S), None)

    def median(values: Sequence[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return statistics.median(present) if present else None

    return ReplicaFigures(
        samples=len(known),
        lag_p50=statistics.median(known) if known else None,
        lag_max=max(known) if known else None,
        lag_last=known[-1] if known else None,
        apply_rate=median(apply_rates),
        source_rate=median(source_rates),
        caught_up_after_s=caught_up,
    )


def phase_report(phase: Phase, elapsed_s: float, figures: Mapping[str, ReplicaFigures]) -> str:
    """One console line per phase: what a reader of docs/demo.md's figures compares."""

    def num(value: float | None, unit: str, digits: int = 1) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}{unit}"

    parts = [
        f"{name}: lag p50 {num(f.lag_p50, ' s')}, max {num(f.lag_max, ' s')}, "
        f"at end {num(f.lag_last, ' s')}, drained under {CAUGHT_UP_S:g} s after "
        f"{num(f.caught_up_after_s, ' s', 0)}, apply {num(f.apply_rate, '/s', 0)}, "
        f"source {num(f.source_rate, '/s', 0)} ({f.samples} samples)"
        for name, f in sorted(figures.items())
    ]
    return f"scenario: phase {phase.name} ({phase.title}) {elapsed_s:.0f} s — " + "; ".join(parts)
