"""Every flavor we cannot run here, replayed from recorded result sets (tests/fixtures/).

Each fixture records what one server of a flavor answers, built from the reference manual's
column list (the file names its sources), and the normalized values a correct collector must
produce. The poller runs against it end to end: we check the statements it chose for that
flavor as well as what it made of the answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lagscope.analysis.timeline import binlog_coordinate, replica_streams, source_streams
from lagscope.collectors import applier_workers, counters, server_state
from lagscope.collectors.dialect import dialect_for
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.flavor import FLAVOR_SQL, parse_flavor
from lagscope.collectors.gtid import GtidSet, gtid_counts
from lagscope.collectors.params import discovery_statement
from lagscope.collectors.poller import InstancePoller
from tests.unit.fakes.executor import FakeExecutor, no_cause_evidence, rs

FIXTURES = Path(__file__).parent.parent.parent / "fixtures"
FILES = sorted(p.name for p in FIXTURES.glob("*.json"))
CHANNEL_FIELDS = (
    "channel", "seconds_behind_source", "source_host", "source_port", "source_server_id",
    "source_log_file", "read_source_log_pos", "relay_source_log_file", "exec_source_log_pos",
    "relay_log_space", "sql_delay", "sql_remaining_delay", "last_io_errno", "last_io_error",
    "last_sql_errno", "last_sql_error", "retrieved_gtids", "executed_gtids", "using_gtid",
    "parallel_mode", "sql_running",
)  # fmt: skip


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text())


def result(recorded: dict[str, Any]) -> ResultSet:
    return rs(recorded["columns"], *recorded["rows"])


def replay(fixture: dict[str, Any]) -> tuple[FakeExecutor, InstancePoller]:
    """An executor answering the recorded statements, plus neutral answers for our own SELECTs."""
    results = fixture["results"]
    version, comment = results["flavor"]["rows"][0]
    flavor = parse_flavor(version, comment)
    assert flavor is not None
    dialect = dialect_for(flavor)
    if dialect.gtid_kind == "mysql":
        columns = ("now_ts", "server_id", "server_uuid", "read_only", "gtid_executed", "gtid_mode")
        state = rs(columns, ("1700000000.0", 9, "u", 1, "", "ON"))
    else:
        state = rs(("now_ts", "server_id", "read_only", "gtid_binlog_pos", "gtid_slave_pos",
                    "gtid_current_pos", "gtid_strict_mode", "gtid_domain_id"),
                   ("1700000000.0", 9, 1, "", "", "", 1, 0))  # fmt: skip
    answers = {
        FLAVOR_SQL: result(results["flavor"]),
        discovery_statement(dialect): rs(("VARIABLE_NAME", "VARIABLE_VALUE")),
        server_state.statement(dialect): state,
        results["replica_status"]["statement"]: result(results["replica_status"]),
        results["source_status"]["statement"]: result(results["source_status"]),
        counters.statement(dialect): rs(("VARIABLE_NAME", "VARIABLE_VALUE")),
        applier_workers.statement(dialect): result(results["workers"]),
    }
    fake = FakeExecutor(answers, fallback=no_cause_evidence)  # these replicas are behind
    return fake, InstancePoller(fake)


@pytest.mark.parametrize("name", FILES)
def test_fixture_says_where_its_columns_come_from(name: str):
    fixture = load(name)
    assert fixture["sources"], "every recorded set names the manual page or source it follows"
    assert fixture["expected"]["channels"]


@pytest.mark.parametrize("name", FILES)
def test_the_flavors_own_statements_run(name: str):
    fixture = load(name)
    fake, poller = replay(fixture)
    poller.poll()
    poll_batch = fake.batches[-1]
    assert fixture["results"]["replica_status"]["statement"] in poll_batch
    assert fixture["results"]["source_status"]["statement"] in poll_batch
    # Never a statement this flavor would refuse or deprecate.
    text = " ".join(fake.statements)
    if "8.4" in fixture["flavor"]:
        assert "SHOW SLAVE STATUS" not in text and "SHOW MASTER STATUS" not in text


@pytest.mark.parametrize("name", FILES)
def test_channels_normalize_to_the_expected_values(name: str):
    fixture = load(name)
    _, poller = replay(fixture)
    snapshot = poller.poll()
    expected = fixture["expected"]["channels"]
    assert [c.channel for c in snapshot.channels] == sorted(expected)
    for channel in snapshot.channels:
        want = expected[channel.channel]
        got = {f: getattr(channel, f) for f in CHANNEL_FIELDS}
        assert got == {f: want[f] for f in CHANNEL_FIELDS}
        assert channel.io_state.value == want["io_state"]


@pytest.mark.parametrize("name", FILES)
def test_source_status_and_applier_lag(name: str):
    fixture = load(name)
    _, poller = replay(fixture)
    snapshot = poller.poll()
    want = fixture["expected"]["source_status"]
    assert snapshot.source is not None
    assert snapshot.source.binlog_file == want["binlog_file"]
    assert snapshot.source.binlog_position == want["binlog_position"]
    assert snapshot.source.gtid_executed == want["gtid_executed"]
    lag = fixture["expected"]["applier_lag"]
    if lag is None:
        assert dict(snapshot.applier_lag_s) == {}
    else:
        assert dict(snapshot.applier_lag_s) == pytest.approx(lag)
    assert len(snapshot.workers) >= 1


def test_mysql57_broken_channel_is_broken_and_null_is_null():
    _, poller = replay(load("mysql57_multichannel.json"))
    west = poller.poll().channel("west")
    assert west is not None
    assert west.broken and west.last_sql_errno == 1062
    assert west.seconds_behind_source is None


def test_mysql57_gtid_sets_with_newlines_parse_and_count():
    fixture = load("mysql57_multichannel.json")
    _, poller = replay(fixture)
    east = poller.poll().channel("east")
    assert east is not None
    raw = fixture["results"]["replica_status"]
    executed_raw = dict(zip(raw["columns"], raw["rows"][0], strict=True))["Executed_Gtid_Set"]
    assert "\n" in executed_raw  # the recorded server text keeps its newline
    assert GtidSet.parse(east.executed_gtids) == GtidSet.parse(executed_raw)


def test_mysql84_connecting_io_and_tagged_gtids():
    _, poller = replay(load("mysql84_replica.json"))
    snapshot = poller.poll()
    channel = snapshot.channel("")
    assert channel is not None and channel.io_state.value == "connecting"
    assert channel.last_io_errno == 2003 and channel.seconds_behind_source is None
    assert snapshot.source is not None and snapshot.source.gtid_executed
    source_ids = GtidSet.parse(snapshot.source.gtid_executed).source_ids()
    assert any(sid.endswith(":billing") for sid in source_ids)  # a tagged GTID (8.3+)


def test_mariadb_multisource_keeps_connections_apart():
    _, poller = replay(load("mariadb1011_multisource.json"))
    snapshot = poller.poll()
    eu, us = snapshot.channel("eu"), snapshot.channel("us")
    assert eu is not None and us is not None
    assert eu.seconds_behind_source == 0 and us.seconds_behind_source is None
    assert us.sql_delay > 0 and us.sql_remaining_delay is not None
    assert eu.parallel_mode != us.parallel_mode
    # Per-domain arithmetic on the recorded positions, not an average of the two connections.
    counts = gtid_counts("mariadb", "1-10-5000,2-20-400", eu.retrieved_gtids, eu.executed_gtids)
    assert counts.per_domain is not None and set(counts.per_domain) >= {1, 2}


@pytest.mark.parametrize(
    "name", ["mysql57_multichannel.json", "mysql80_replica.json", "mysql84_replica.json"]
)
def test_timeline_streams_from_recorded_mysql_sets(name: str):
    # The timeline's progress from each MySQL version's own set text (5.7 newlines,
    # 8.4 tags): against a source that has what the replica received, the replica's applied
    # progress is the source's count minus what it has not applied, and the binlog coordinate
    # the applier executed up to is usable where there are no GTIDs.
    _, poller = replay(load(name))
    checked = 0
    for channel in poller.poll().channels:
        if not channel.executed_gtids:
            continue
        checked += 1
        source = str(GtidSet.parse(channel.retrieved_gtids) | GtidSet.parse(channel.executed_gtids))
        counts = gtid_counts("mysql", source, channel.retrieved_gtids, channel.executed_gtids)
        total = source_streams("mysql", source)["gtid"]
        assert total == GtidSet.parse(source).count()
        applied = replica_streams("mysql", source, channel.executed_gtids)
        assert applied == {"gtid": total - counts.trx_behind}
        coordinate = binlog_coordinate(channel.relay_source_log_file, channel.exec_source_log_pos)
        no_gtids = replica_streams(
            "mysql", "", "", channel.relay_source_log_file, channel.exec_source_log_pos
        )
        assert no_gtids == ({} if coordinate is None else {"binlog": coordinate})
    assert checked
