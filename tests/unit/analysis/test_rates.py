"""rate and counter_rates: per-second deltas, resets, restarts, flavor-dependent counters."""

from __future__ import annotations

import pytest

from lagscope.analysis.rates import CounterRates, counter_rates, rate


def test_rate_is_delta_over_elapsed_seconds() -> None:
    assert rate(100, 1000.0, 350, 1010.0) == 25.0


def test_rate_of_an_unchanged_counter_is_zero() -> None:
    assert rate(7, 1000.0, 7, 1002.0) == 0.0


@pytest.mark.parametrize(
    ("prev", "prev_at", "cur", "cur_at"),
    [
        (None, 1000.0, 5, 1010.0),  # no previous reading
        (5, None, 5, 1010.0),  # no previous time
        (5, 1000.0, None, 1010.0),  # counter absent now
        (5, 1000.0, 9, 1000.0),  # no time passed
        (5, 1000.0, 9, 990.0),  # time went backwards
        (500, 1000.0, 20, 1010.0),  # counter went down: a reset
    ],
)
def test_rate_is_none_when_it_cannot_be_trusted(
    prev: int | None, prev_at: float | None, cur: int | None, cur_at: float
) -> None:
    assert rate(prev, prev_at, cur, cur_at) is None


MYSQL_PREV = {
    "Uptime": 1000,
    "Handler_commit": 10_000,
    "Com_commit": 10,
    "Innodb_os_log_fsyncs": 2_000,
    "Innodb_data_fsyncs": 3_000,
    "Innodb_data_written": 1_000_000,
    "Innodb_os_log_written": 500_000,
    "Innodb_dblwr_pages_written": 400,
    "Innodb_redo_log_enabled": 1,
    "Rpl_semi_sync_source_status": 1,
    "Rpl_semi_sync_source_tx_avg_wait_time": 900,
}
MYSQL_CUR = {
    **MYSQL_PREV,
    "Uptime": 1010,
    "Handler_commit": 12_000,
    "Com_commit": 12,
    "Innodb_os_log_fsyncs": 2_500,
    "Innodb_data_fsyncs": 3_600,
    "Innodb_data_written": 3_000_000,
    "Innodb_os_log_written": 1_500_000,
    "Innodb_dblwr_pages_written": 600,
    "Rpl_semi_sync_source_tx_avg_wait_time": 1_250,
}


def test_mysql_counter_rates() -> None:
    assert counter_rates(MYSQL_PREV, 100.0, MYSQL_CUR, 110.0) == CounterRates(
        commits_per_s=200.0,  # Handler_commit, not Com_commit (which would give 0.2)
        binlog_commits_per_s=None,
        binlog_group_commits_per_s=None,
        log_fsyncs_per_s=50.0,
        data_fsyncs_per_s=60.0,
        data_written_per_s=200_000.0,
        log_written_per_s=100_000.0,
        dblwr_pages_per_s=20.0,
        semi_sync_avg_wait_s=0.00125,
        semi_sync_on=True,
        redo_log_enabled=True,
    )


def test_mysql_has_no_group_commit_ratio() -> None:
    assert counter_rates(MYSQL_PREV, 100.0, MYSQL_CUR, 110.0).commits_per_group is None


MARIADB_PREV = {
    "Uptime": 50,
    "Handler_commit": 90_000,
    "Binlog_commits": 1_000,
    "Binlog_group_commits": 400,
    "Innodb_data_fsyncs": 10,
    "Rpl_semi_sync_master_status": 0,
    "Rpl_semi_sync_master_tx_avg_wait_time": 0,
}
MARIADB_CUR = {
    **MARIADB_PREV,
    "Uptime": 55,
    "Handler_commit": 99_000,
    "Binlog_commits": 1_500,
    "Binlog_group_commits": 500,
    "Innodb_data_fsyncs": 20,
}


def test_mariadb_commits_come_from_binlog_commits() -> None:
    rates = counter_rates(MARIADB_PREV, 0.0, MARIADB_CUR, 5.0)
    assert rates.commits_per_s == 100.0  # Binlog_commits; Handler_commit would say 1800
    assert rates.binlog_commits_per_s == 100.0
    assert rates.binlog_group_commits_per_s == 20.0
    assert rates.commits_per_group == 5.0


def test_mariadb_1011_without_log_fsyncs_reports_none() -> None:
    rates = counter_rates(MARIADB_PREV, 0.0, MARIADB_CUR, 5.0)
    assert rates.log_fsyncs_per_s is None
    assert rates.data_fsyncs_per_s == 2.0


def test_old_semi_sync_names_and_off_state() -> None:
    rates = counter_rates(MARIADB_PREV, 0.0, MARIADB_CUR, 5.0)
    assert rates.semi_sync_on is False
    assert rates.semi_sync_avg_wait_s == 0.0
    assert rates.redo_log_enabled is None  # MariaDB has no such status


def test_no_group_commits_in_the_interval_gives_no_ratio() -> None:
    cur = {**MARIADB_CUR, "Binlog_commits": 1_000, "Binlog_group_commits": 400}
    rates = counter_rates(MARIADB_PREV, 0.0, cur, 5.0)
    assert rates.binlog_group_commits_per_s == 0.0
    assert rates.commits_per_group is None


def test_uptime_going_down_voids_every_rate_but_keeps_gauges() -> None:
    # Counters are all higher than before, so only Uptime can tell that the server restarted.
    restarted = {k: v * 2 for k, v in MYSQL_CUR.items()} | {"Uptime": 3}
    assert counter_rates(MYSQL_PREV, 100.0, restarted, 110.0) == CounterRates(
        semi_sync_avg_wait_s=0.0025,
        semi_sync_on=True,
        redo_log_enabled=True,
    )


def test_first_poll_has_gauges_only() -> None:
    rates = counter_rates(None, None, MYSQL_CUR, 110.0)
    assert rates.commits_per_s is None
    assert rates.data_written_per_s is None
    assert rates.semi_sync_on is True
    assert rates.redo_log_enabled is True


def test_one_counter_reset_voids_only_that_rate() -> None:
    cur = {**MYSQL_CUR, "Innodb_dblwr_pages_written": 0}
    rates = counter_rates(MYSQL_PREV, 100.0, cur, 110.0)
    assert rates.dblwr_pages_per_s is None
    assert rates.commits_per_s == 200.0


def test_fsync_time_per_class_and_mean_latency_from_the_file_summary() -> None:
    """performance_schema's picoseconds become seconds per second; the latency is the time of
    all timed fsyncs over their count in the interval (binlog 0.4 ms, relay log 0.2 ms)."""
    prev = {"fsync_binlog_ops": 1000, "fsync_binlog_ps": 10**12,
            "fsync_relaylog_ops": 5000, "fsync_relaylog_ps": 2 * 10**12}  # fmt: skip
    cur = {"fsync_binlog_ops": 1500, "fsync_binlog_ps": 10**12 + 2 * 10**11,
           "fsync_relaylog_ops": 7000, "fsync_relaylog_ps": 2 * 10**12 + 4 * 10**11}  # fmt: skip
    r = counter_rates(prev, 100.0, cur, 101.0)
    assert r.binlog_fsync_s_per_s == pytest.approx(0.2)
    assert r.relay_log_fsync_s_per_s == pytest.approx(0.4)
    assert r.redo_fsync_s_per_s is None  # MariaDB does not time its redo log
    assert r.fsync_latency_s == pytest.approx(0.6 / 2500)


def test_fsync_latency_is_none_without_fsyncs_and_skips_a_truncated_summary() -> None:
    idle = {"fsync_binlog_ops": 10, "fsync_binlog_ps": 5000}
    assert counter_rates(idle, 1.0, idle, 2.0).fsync_latency_s is None
    assert counter_rates({}, 1.0, {}, 2.0).binlog_fsync_s_per_s is None
    # TRUNCATE TABLE on the summary resets one class: only the other one counts.
    prev = {"fsync_binlog_ops": 900, "fsync_binlog_ps": 9 * 10**8,
            "fsync_relaylog_ops": 100, "fsync_relaylog_ps": 10**8}  # fmt: skip
    cur = {"fsync_binlog_ops": 5, "fsync_binlog_ps": 10**6,
           "fsync_relaylog_ops": 200, "fsync_relaylog_ps": 3 * 10**8}  # fmt: skip
    r = counter_rates(prev, 1.0, cur, 2.0)
    assert r.binlog_fsync_s_per_s is None
    assert r.fsync_latency_s == pytest.approx(2 * 10**8 / 100 / 10**12)
