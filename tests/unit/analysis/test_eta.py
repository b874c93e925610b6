"""eta: backlog ÷ net gain, or how fast the replica falls behind."""

from __future__ import annotations

import pytest

from lagscope.analysis.eta import Eta, eta


def test_no_backlog_is_caught_up_even_without_rates() -> None:
    assert eta(0, None, None) == Eta(0.0, True, None, 0.0, 0.0, basis="rates")


def test_gaining_replica_gets_seconds() -> None:
    # 600 trx behind, applying 150/s while the source writes 100/s: 50/s net gain.
    assert eta(600, 150.0, 100.0) == Eta(12.0, True, None, 12.0, 12.0, basis="rates")


def test_losing_replica_reports_the_rate_it_falls_behind() -> None:
    assert eta(600, 80.0, 100.0) == Eta(None, False, 20.0, never=True, basis="rates")


def test_equal_rates_fall_behind_at_zero_not_minus_zero() -> None:
    result = eta(600, 100.0, 100.0)
    assert result == Eta(None, False, 0.0, never=True, basis="rates")
    assert result.falling_behind_per_s is not None
    assert str(result.falling_behind_per_s) == "0.0"


@pytest.mark.parametrize(
    ("backlog", "apply_rate", "source_rate"),
    [(None, 100.0, 50.0), (10, None, 50.0), (10, 100.0, None)],
)
def test_missing_inputs_are_unknown(
    backlog: int | None, apply_rate: float | None, source_rate: float | None
) -> None:
    assert eta(backlog, apply_rate, source_rate) == Eta(None, False, None)
