"""Known answers for the source-timeline lag (analysis/timeline.py)."""

from __future__ import annotations

import pytest

from lagscope.analysis.timeline import (
    ProgressPoint,
    binlog_coordinate,
    bracket,
    replica_streams,
    source_streams,
    stream_lag,
    timeline_lag,
    went_back,
)

UUID_A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
UUID_B = "4f22fa47-71ca-11e1-9e33-c80aa9429562"
GAP = 30.0


def steady(
    rate: float, start: float = 1000.0, polls: int = 60, base: int = 0
) -> list[ProgressPoint]:
    """A source committing ``rate`` trx/s, polled every second."""
    return [ProgressPoint(start + i, base + round(rate * i)) for i in range(polls)]


def test_steady_writes_lag_is_the_time_since_the_source_was_there() -> None:
    history = steady(100.0)  # t=1000..1059, value 0..5900
    # The replica has applied 3050 trx: the source reached that at t=1030.5.
    lag = stream_lag(history, 3050, now=1059.0, max_gap_s=GAP)
    assert lag.lag_s == pytest.approx(28.5)
    assert lag.resolution_s == pytest.approx(1.0)


def test_caught_up_and_ahead_of_the_sources_last_poll_are_zero() -> None:
    history = steady(100.0)
    assert stream_lag(history, 5900, now=1059.2, max_gap_s=GAP).lag_s == 0.0
    # Replica read a moment after the source: it already has trx the source poll did not see.
    assert stream_lag(history, 5950, now=1059.2, max_gap_s=GAP).lag_s == 0.0


def test_burst_interpolates_inside_the_burst_poll_only() -> None:
    # Idle at 10 until t=1005; 1000 trx in the poll t=1005..1006; idle again at 1010.
    history = [ProgressPoint(1000.0 + i, 10) for i in range(6)]
    history += [ProgressPoint(1006.0 + i, 1010) for i in range(10)]
    lag = stream_lag(history, 510, now=1015.0, max_gap_s=GAP)
    assert lag.lag_s == pytest.approx(1015.0 - 1005.5)
    assert lag.resolution_s == pytest.approx(1.0)


def test_idle_source_lag_is_zero_once_applied_and_grows_while_not() -> None:
    history = [ProgressPoint(1000.0, 90), ProgressPoint(1001.0, 100)]
    history += [ProgressPoint(1001.0 + i, 100) for i in range(1, 300)]
    assert stream_lag(history, 100, now=1300.0, max_gap_s=GAP).lag_s == 0.0
    stuck = stream_lag(history, 95, now=1300.0, max_gap_s=GAP)
    assert stuck.lag_s == pytest.approx(1300.0 - 1000.5)


def test_replica_older_than_the_history_kept_is_unknown_not_zero() -> None:
    history = steady(100.0, base=10_000)
    lag = stream_lag(history, 5_000, now=1059.0, max_gap_s=GAP)
    assert lag.lag_s is None
    assert lag.unknown_reason is not None and "older" in lag.unknown_reason


def test_a_gap_in_the_history_wider_than_allowed_is_unknown() -> None:
    # Source not polled for 10 minutes (Lagscope down): when it reached 150 is not known.
    history = [ProgressPoint(1000.0, 100), ProgressPoint(1600.0, 200), ProgressPoint(1601.0, 210)]
    lag = stream_lag(history, 150, now=1601.0, max_gap_s=GAP)
    assert lag.lag_s is None and lag.unknown_reason is not None and "gap" in lag.unknown_reason
    assert stream_lag([], 1, now=0.0, max_gap_s=GAP).lag_s is None


def test_source_restart_keeps_its_progress_and_the_lag_continues() -> None:
    # MySQL persists gtid_executed: after a restart (polls failed for 8 s) the count continues.
    history = steady(100.0, polls=20) + steady(100.0, start=1028.0, polls=10, base=2000)
    assert not went_back({"gtid": 1900}, {"gtid": 2000})
    lag = stream_lag(history, 1950, now=1037.0, max_gap_s=GAP)
    # Bracket (1019, 1900) .. (1028, 2000): reached at 1019 + 0.5 × 9.
    assert lag.lag_s == pytest.approx(1037.0 - 1023.5)
    assert lag.resolution_s == pytest.approx(9.0)


def test_failover_progress_going_back_starts_a_new_history() -> None:
    assert went_back({"gtid": 5000, "0": 7}, {"gtid": 4200, "0": 7}) == {"gtid"}
    # After the reset only the new source's points exist: a replica still at the old source's
    # numbers is older than this history (unknown) until it follows the new source.
    new_history = steady(50.0, start=2000.0, polls=5, base=4200)
    assert stream_lag(new_history, 4100, now=2004.0, max_gap_s=GAP).lag_s is None
    assert stream_lag(new_history, 4400, now=2004.0, max_gap_s=GAP).lag_s == 0.0


def test_mariadb_multi_domain_takes_the_worst_domain() -> None:
    assert source_streams("mariadb", "0-1-500,1-1-80") == {"0": 500, "1": 80}
    histories = {
        "0": steady(10.0, polls=51),  # domain 0: 10 trx/s up to 500
        "1": [ProgressPoint(1000.0 + i, 80) for i in range(51)],  # domain 1 idle at 80
    }
    applied = replica_streams("mariadb", "0-1-500,1-1-80", "0-1-400,1-1-80,7-9-3")
    assert applied == {"0": 400, "1": 80}  # domain 7 (a local or other-source domain) ignored
    lag = timeline_lag(histories, applied, now=1050.0, max_gap_s=GAP)
    assert lag.lag_s == pytest.approx(10.0)
    behind_in_1 = timeline_lag(histories, {"0": 500, "1": 0}, now=1050.0, max_gap_s=GAP)
    assert behind_in_1.lag_s is None  # nothing applied from domain 1 at all: not 0


def test_multi_channel_each_channel_against_its_own_source() -> None:
    # Two sources (multi-source replica): the same replica position means different lags.
    busy = {"0": steady(100.0, polls=61)}
    quiet = {"1": [ProgressPoint(1000.0 + i, 42) for i in range(61)]}
    replica_pos = "0-1-3000,1-2-42"
    lag_busy = timeline_lag(busy, replica_streams("mariadb", "0-1-6000", replica_pos), 1060.0, GAP)
    lag_quiet = timeline_lag(quiet, replica_streams("mariadb", "1-2-42", replica_pos), 1060.0, GAP)
    assert lag_busy.lag_s == pytest.approx(30.0)
    assert lag_quiet.lag_s == 0.0


def test_mysql_errant_transactions_are_not_progress() -> None:
    source = f"{UUID_A}:1-1000"
    # The replica applied up to 700 from the source and wrote 500 of its own.
    replica = f"{UUID_A}:1-700,{UUID_B}:1-500"
    assert replica_streams("mysql", source, replica) == {"gtid": 700}
    assert source_streams("mysql", source) == {"gtid": 1000}
    history = steady(10.0, polls=101)  # reaches 700 at t=1070
    assert timeline_lag({"gtid": history}, {"gtid": 700}, 1100.0, GAP).lag_s == pytest.approx(30.0)


def test_binlog_coordinates_without_gtids() -> None:
    assert binlog_coordinate("mysql-bin.000003", 1540) == (3 << 40) | 1540
    assert binlog_coordinate("INVALID", 0) is None  # GTID_ONLY after a restart
    assert binlog_coordinate("mysql-bin.000003", 0) is None
    assert source_streams("mysql", "", "bin.000002", 100) == {"binlog": (2 << 40) | 100}
    assert replica_streams("mysql", "", "", "bin.000001", 900) == {"binlog": (1 << 40) | 900}
    # A rotation is progress: file 2 position 4 is after file 1 position 900.
    assert binlog_coordinate("bin.000002", 4) > binlog_coordinate("bin.000001", 900)  # type: ignore[operator]


def test_unparseable_sets_give_no_streams() -> None:
    assert source_streams("mysql", "not a set") == {}
    assert replica_streams("mariadb", "0-1-5", "garbage") == {}


def test_bracket_returns_the_points_around_the_applied_value() -> None:
    history = steady(100.0, polls=5)
    assert bracket(history, 150) == (history[1], history[2])
    assert bracket(history, 0) == (None, history[0])
    assert bracket(history, 10_000) == (history[-1], None)
