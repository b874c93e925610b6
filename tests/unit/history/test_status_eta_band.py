"""The status's ETA (history/status.eta_band): the analysis's figures and band passed on,
``never`` when apply does not outrun arrival, and only the documented bases."""

from __future__ import annotations

from dataclasses import replace

from lagscope.analysis.eta import eta
from lagscope.history.status import EtaBand, eta_band


def test_one_interval_gives_a_zero_width_band_and_never_from_the_rates() -> None:
    assert eta_band(eta(1000, 150.0, 100.0)) == EtaBand(
        20.0, True, None, 20.0, 20.0, False, "rates"
    )
    assert eta_band(eta(1000, 80.0, 100.0)) == EtaBand(None, False, 20.0, never=True, basis="rates")
    assert eta_band(eta(1000, 100.0, 100.0)).never  # equal rates: it does not catch up
    assert not eta_band(eta(0, 80.0, 100.0)).never  # nothing behind: not "never"
    assert not eta_band(eta(1000, None, None)).never  # unknown rates: unknown, not never


def test_a_band_from_the_analysis_is_passed_on_with_only_documented_bases() -> None:
    banded = replace(
        eta(1000, 150.0, 100.0),
        seconds=300.0,
        low_s=240.0,
        high_s=400.0,
        basis="transaction_progress",
    )
    assert eta_band(banded) == EtaBand(
        300.0, True, None, 240.0, 400.0, False, "transaction_progress"
    )
    assert eta_band(replace(banded, basis="guess")).basis is None
