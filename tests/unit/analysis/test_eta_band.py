"""eta_band: the ETA with a band from recent rates, "never" when apply ≤ arrival, and a large
transaction's progress (analysis/eta.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from lagscope.analysis.eta import (
    ETA_WINDOW,
    Eta,
    EtaMemory,
    TrxProgress,
    applier_transaction,
    eta_band,
    eta_from_json,
    eta_to_json,
)
from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.snapshot import (
    ApplierWorker,
    CauseEvidence,
    ChannelStatus,
    ClockReading,
    GtidState,
    InstanceSnapshot,
    IoState,
    OpenTransaction,
)

AT = datetime(2026, 1, 1, tzinfo=UTC)


def channel_status(channel: str = "") -> ChannelStatus:
    return ChannelStatus(channel, IoState.YES, True, 30)


def snapshot(
    channels: tuple[ChannelStatus, ...],
    evidence: CauseEvidence,
    workers: tuple[ApplierWorker, ...] = (),
) -> InstanceSnapshot:
    return InstanceSnapshot(
        server="replica",
        flavor=ServerFlavor("mariadb", (10, 11, 9)),
        dialect="mariadb",
        taken_at=AT,
        round_trip_s=0.002,
        server_id=2,
        server_uuid=None,
        read_only=True,
        clock=ClockReading(2.0, 0.001),  # the replica's clock 2 s ahead
        gtid=GtidState(executed="0-1-5"),
        channels=channels,
        workers=workers,
        evidence=evidence,
    )


def feed(
    backlog: int, rates: list[tuple[float, float]], memory: EtaMemory | None = None
) -> tuple[Eta, EtaMemory]:
    memory = memory or EtaMemory()
    result = Eta(None, False, None)
    for i, (apply_rate, arrival) in enumerate(rates):
        result, memory = eta_band(backlog, apply_rate, arrival, memory, float(i))
        memory = EtaMemory.from_json(memory.to_json())  # stored between polls
    return result, memory


def test_steady_rates_give_a_narrow_band_around_the_mean() -> None:
    e, _ = feed(600, [(150.0, 100.0)] * 5)
    assert e.seconds == pytest.approx(12.0)
    assert (e.low_s, e.high_s) == (pytest.approx(12.0), pytest.approx(12.0))
    assert e.catching_up and not e.never and e.basis == "rates"


def test_noisy_rates_widen_the_band_and_the_mean_is_used() -> None:
    e, _ = feed(600, [(140.0, 100.0), (160.0, 100.0), (150.0, 100.0), (150.0, 100.0)])
    assert e.seconds == pytest.approx(12.0)
    assert e.low_s < 12.0 < e.high_s


def test_slow_end_that_does_not_catch_up_has_no_high() -> None:
    e, _ = feed(600, [(101.0, 100.0), (140.0, 100.0), (99.0, 100.0), (100.0, 100.0)])
    assert e.catching_up and e.seconds is not None and e.high_s is None


def test_apply_not_above_arrival_is_never() -> None:
    e, _ = feed(600, [(90.0, 100.0), (100.0, 100.0), (95.0, 100.0)])
    assert e.never and not e.catching_up and e.seconds is None
    assert e.falling_behind_per_s == pytest.approx(5.0)


def test_one_good_interval_does_not_outvote_the_window() -> None:
    e, _ = feed(600, [(90.0, 100.0)] * 4 + [(130.0, 100.0)])
    assert e.never  # mean gain −2/s


def test_window_is_bounded_and_a_gap_empties_it() -> None:
    _, memory = feed(600, [(150.0, 100.0)] * (ETA_WINDOW + 5))
    assert len(memory.rates) == ETA_WINDOW
    e, later = eta_band(600, None, None, memory, 1000.0)
    assert later.rates == () and e.seconds is None and not e.never


def test_no_backlog_is_caught_up() -> None:
    e, _ = eta_band(0, None, None, EtaMemory(), 0.0)
    assert e.seconds == 0.0 and e.catching_up


def test_a_large_transaction_shows_its_progress_and_an_unknown_time() -> None:
    memory = EtaMemory()
    for i, rows in enumerate([1000, 21000, 41000]):
        trx = TrxProgress("421", rows, float(i), age_s=10.0 + i)
        # counted in transactions the replica applies nothing: the rates alone would say never
        e, memory = eta_band(3, 0.0, 1.0, memory, float(i), trx)
    assert e.basis == "transaction_progress"
    assert not e.never and e.seconds is None
    assert (e.trx_rows_done, e.trx_rows_per_s, e.trx_rows_total) == (41000, 20000.0, None)


def test_a_large_transaction_with_a_known_total_gives_its_remaining_time() -> None:
    memory = EtaMemory(rates=((0.0, 50.0, 10.0),))
    first = TrxProgress("7", 10_000, 0.5, age_s=30.0, rows_total=100_000)
    _, memory = eta_band(1, None, None, memory, 0.5, first)
    e, _ = eta_band(1, None, None, memory, 1.5, replace(first, rows_done=20_000, at=1.5))
    assert e.basis == "transaction_progress" and e.seconds == pytest.approx(8.0)


def test_a_young_transaction_is_not_large() -> None:
    e, _ = eta_band(600, 150.0, 100.0, EtaMemory(), 0.0, TrxProgress("9", 5, 0.0, age_s=0.5))
    assert e.basis == "rates"


def test_json_round_trip() -> None:
    e, _ = feed(600, [(140.0, 100.0), (160.0, 100.0)])
    assert eta_from_json(eta_to_json(e)) == e
    assert eta_to_json(None) is None and eta_from_json(None) is None
    assert EtaMemory.from_json({"rates": [["x"]]}) == EtaMemory()


def test_applier_transaction_of_a_serial_replica() -> None:
    # Started 40 s before the poll on the replica's own clock (2 s ahead of ours).
    trx = OpenTransaction(
        12, "99", "RUNNING", started_at=AT.timestamp() + 2 - 40, rows_modified=5000
    )
    snap = snapshot((channel_status(),), CauseEvidence(transactions=(trx,)))
    progress = applier_transaction(snap.channels[0], snap)
    assert progress is not None
    assert (progress.trx_id, progress.rows_done) == ("99", 5000)
    assert progress.age_s == pytest.approx(40.0)
    workers = (ApplierWorker(channel="other", worker_id=1, thread_id=13, state="x"),)
    multi = snapshot(
        (channel_status(), channel_status("other")), CauseEvidence(transactions=(trx,)), workers
    )
    assert applier_transaction(multi.channels[0], multi) is None
