"""The status's ETA band (history/status.eta_band): the band fields come from the ETA analysis
when it has them, else null; ``never`` says apply does not outrun arrival."""

from __future__ import annotations

from dataclasses import dataclass

from lagscope.analysis.eta import eta
from lagscope.history.status import EtaBand, eta_band


def test_plain_eta_serves_no_band_and_never_from_the_rates() -> None:
    assert eta_band(eta(1000, 150.0, 100.0)) == EtaBand(20.0, True, None)
    assert eta_band(eta(1000, 80.0, 100.0)) == EtaBand(None, False, 20.0, never=True)
    assert eta_band(eta(1000, 100.0, 100.0)).never  # equal rates: it does not catch up
    assert not eta_band(eta(0, 80.0, 100.0)).never  # nothing behind: not "never"
    assert not eta_band(eta(1000, None, None)).never  # unknown rates: unknown, not never


@dataclass(frozen=True)
class BandedEta:
    seconds: float | None
    catching_up: bool
    falling_behind_per_s: float | None
    low_s: float | None
    high_s: float | None
    never: bool
    basis: str | None


def test_a_band_from_the_analysis_is_passed_on() -> None:
    found = eta_band(BandedEta(300.0, True, None, 240.0, 400.0, False, "transaction_progress"))  # type: ignore[arg-type]
    assert found == EtaBand(300.0, True, None, 240.0, 400.0, False, "transaction_progress")
    odd = eta_band(BandedEta(None, False, 3.0, None, None, True, "guess"))  # type: ignore[arg-type]
    assert odd.never and odd.basis is None  # only the documented bases
