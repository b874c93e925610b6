"""Status counters and heartbeat rows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lagscope.collectors import counters
from lagscope.collectors.dialect import MARIADB, MYSQL_84
from lagscope.collectors.heartbeat import HeartbeatTable, parse_pt_timestamp
from lagscope.errors import InvalidInput
from tests.unit.fakes.executor import rs


def test_counters_statement_per_flavor():
    assert "information_schema.GLOBAL_STATUS" in counters.statement(MARIADB)
    assert "performance_schema.global_status" in counters.statement(MYSQL_84)
    assert "'Binlog_group_commits'" in counters.statement(MARIADB)


def test_counters_normalise_case_states_and_skip_junk():
    result = rs(
        ("VARIABLE_NAME", "VARIABLE_VALUE"),
        ("BINLOG_COMMITS", "1200"),
        ("BINLOG_GROUP_COMMITS", "300"),
        ("RPL_SEMI_SYNC_MASTER_STATUS", "OFF"),
        ("Innodb_redo_log_enabled", "ON"),
        ("Uptime", 99),
        ("SOMETHING_ELSE", "5"),
        ("Handler_commit", "n/a"),
    )
    values = counters.parse(MARIADB, result)
    assert values == {
        "Binlog_commits": 1200,
        "Binlog_group_commits": 300,
        "Rpl_semi_sync_master_status": 0,
        "Innodb_redo_log_enabled": 1,
        "Uptime": 99,
    }


@pytest.mark.parametrize("bad", ["hb`; DROP", "a.b", "", "x" * 65, "héllo"])
def test_heartbeat_table_names_must_be_plain_identifiers(bad: str):
    with pytest.raises(InvalidInput):
        HeartbeatTable(schema=bad)


def test_lagscope_heartbeat_reads_microseconds_since_epoch():
    table = HeartbeatTable()
    assert table.statement().endswith("FROM `lagscope`.`heartbeat`")
    reading = table.parse(rs(("server_id", "us"), (1, 1_700_000_000_250_000), (7, None)), 1.0)
    assert reading.rows[0].server_id == 1
    assert reading.rows[0].ts == pytest.approx(1_700_000_000.25)
    assert len(reading.rows) == 1
    assert reading.newest() == reading.rows[0]
    assert reading.newest(server_id=9) is None


def test_pt_heartbeat_iso_text_in_utc_or_a_fixed_offset():
    expected = datetime(2024, 3, 1, 12, 0, 0, 123456, tzinfo=UTC).timestamp()
    assert parse_pt_timestamp("2024-03-01T12:00:00.123456") == pytest.approx(expected)
    assert parse_pt_timestamp("2024-03-01 13:00:00.123456", 60) == pytest.approx(expected)
    assert parse_pt_timestamp("") is None
    assert parse_pt_timestamp("yesterday") is None
    table = HeartbeatTable(kind="pt-heartbeat", schema="percona", table="heartbeat")
    assert table.statement() == "SELECT server_id, ts FROM `percona`.`heartbeat`"
