"""No statement a poll sends joins information_schema tables in the server.

MariaDB fills an internal temporary table (Aria) for each information_schema table a statement
reads and drops them when the statement's tables close; 10.11.19 crashed there (signal 11,
``ha_maria::drop_table`` ← ``free_tmp_table`` ← ``close_thread_tables``) six times while it ran
the cause readings as joins of ``INNODB_TRX``, ``PROCESSLIST``, ``INNODB_LOCK_WAITS``,
``METADATA_LOCK_INFO``. Every statement the registry can plan while a replica is behind, for
every dialect and every state of the METADATA_LOCK_INFO probe, is read here for its tables.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lagscope.collectors.cause_readings import CauseMemory
from lagscope.collectors.dialect import MARIADB, MYSQL_57, MYSQL_80_OLD, MYSQL_84, Dialect
from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.params import ParamPlan
from lagscope.collectors.readings import READINGS, Setup, plan
from lagscope.collectors.snapshot import (
    ApplierWorker,
    CauseEvidence,
    ChannelStatus,
    ClockReading,
    GtidState,
    InstanceSnapshot,
    IoState,
    RowEventTable,
)
from tests.sql_tables import joins_information_schema, schema_tables, tables_read

DIALECTS = (MARIADB, MYSQL_57, MYSQL_80_OLD, MYSQL_84)


def _behind(dialect: Dialect) -> InstanceSnapshot:
    """A previous poll that triggers every cause reading: a channel 40 s behind with its relay
    log position, a busy worker, and a row event's table whose keys are not known yet."""
    channel = ChannelStatus(
        channel="",
        io_state=IoState.YES,
        sql_running=True,
        seconds_behind_source=40,
        relay_log_file="relay-bin.000002",
        relay_log_pos=4072,
        sql_thread_state="Waiting for table metadata lock",
    )
    return InstanceSnapshot(
        server="r",
        flavor=ServerFlavor("mariadb" if dialect is MARIADB else "mysql", (10, 11, 19)),
        dialect=dialect.name,
        taken_at=datetime(2026, 1, 1, tzinfo=UTC),
        round_trip_s=0.001,
        server_id=2,
        server_uuid=None,
        read_only=True,
        clock=ClockReading(0.0, 0.001),
        gtid=GtidState(),
        channels=(channel,),
        workers=(ApplierWorker("", 1, 7, "Update_rows_log_event::find_row()", busy=True),),
        evidence=CauseEvidence(tables=(RowEventTable("", "shop", "orders"),)),
    )


def planned(dialect: Dialect) -> set[str]:
    """Every statement of every poll batch while behind, with the plugin unknown, absent and
    present, the slow readings due."""
    found: set[str] = set()
    params = ParamPlan(("read_only",), frozenset({"read_only"}), ())
    for plugin in (None, False, True):
        setup = Setup(dialect, params, HeartbeatTable(), CauseMemory(mdl_plugin=plugin))
        found |= {sql for _, sql in plan(READINGS, setup, _behind(dialect), True, {})}
    return found


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_no_statement_joins_an_information_schema_table(dialect: Dialect) -> None:
    statements = planned(dialect)
    joined = [sql for sql in statements if joins_information_schema(sql)]
    assert joined == []


def test_on_mariadb_every_statement_reads_one_table_at_most() -> None:
    """MariaDB, the server that crashed: no join at all, of either schema."""
    wide = {sql: tables_read(sql) for sql in planned(MARIADB) if len(tables_read(sql)) > 1}
    assert wide == {}


@pytest.mark.parametrize("dialect", [MYSQL_57, MYSQL_80_OLD, MYSQL_84], ids=lambda d: d.name)
def test_mysql_joins_only_performance_schema_tables(dialect: Dialect) -> None:
    """performance_schema tables are engine tables with indexes (data_locks looked up by lock
    id, never scanned): MySQL's joins among them stay in the server, and only those."""
    for sql in planned(dialect):
        tables = tables_read(sql)
        if len(tables) > 1:
            assert all(t.startswith("performance_schema.") for t in tables), sql


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_the_cause_readings_are_among_the_statements_checked(dialect: Dialect) -> None:
    """The checks above see the readings that used to be joins (else they would pass on
    nothing)."""
    read = {t for sql in planned(dialect) for t in schema_tables(sql)}
    assert "information_schema.innodb_trx" in read
    if dialect.has_worker_timestamps:
        assert {"performance_schema.data_lock_waits", "performance_schema.metadata_locks"} <= read
        assert {"information_schema.innodb_tables", "information_schema.innodb_indexes"} <= read
    else:
        assert {"information_schema.processlist", "information_schema.innodb_lock_waits"} <= read
        assert "information_schema.innodb_locks" in read
    if dialect is MARIADB:
        assert "information_schema.metadata_lock_info" in read
        assert {
            "information_schema.innodb_sys_tables",
            "information_schema.innodb_sys_indexes",
        } <= read
    else:
        assert {"information_schema.tables", "information_schema.statistics"} <= read


# --- the reading of tables, on the joins it must catch ------------------------------------------

# The cause readings as they were sent before (excerpts): each joined information_schema tables.
OLD_JOINS = [
    "SELECT t.trx_mysql_thread_id AS thread_id, '' AS gtid FROM information_schema.INNODB_TRX t "
    "JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "
    "WHERE p.USER = 'system user' ORDER BY t.trx_mysql_thread_id",
    "SELECT COALESCE(w.APPLYING_TRANSACTION, '') AS gtid FROM information_schema.INNODB_TRX t "
    "JOIN performance_schema.threads th ON th.PROCESSLIST_ID = t.trx_mysql_thread_id "
    "LEFT JOIN performance_schema.replication_applier_status_by_worker w "
    "ON w.THREAD_ID = th.THREAD_ID",
    "SELECT p.ID AS thread_id FROM (SELECT ID FROM information_schema.PROCESSLIST "
    "WHERE USER = 'system user' ORDER BY ID LIMIT 1) a "
    "JOIN information_schema.PROCESSLIST p ON p.USER <> 'system user' "
    "LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID",
    "SELECT tb.TABLE_SCHEMA FROM information_schema.TABLES tb "
    "LEFT JOIN information_schema.STATISTICS st ON st.TABLE_NAME = tb.TABLE_NAME "
    "WHERE tb.TABLE_SCHEMA = 'shop' AND tb.TABLE_NAME = 'orders'",
    "SELECT i.NAME FROM information_schema.INNODB_SYS_TABLES tt "
    "JOIN information_schema.INNODB_SYS_INDEXES i ON i.TABLE_ID = tt.TABLE_ID "
    "WHERE tt.NAME = CONCAT('shop', '/', 'orders') AND i.TYPE & 1 = 1",
]
# The same joins written the other ways SQL allows.
OTHER_JOINS = [
    "SELECT a.ID FROM information_schema.PROCESSLIST a, information_schema.INNODB_TRX t "
    "WHERE t.trx_mysql_thread_id = a.ID",
    "SELECT ID FROM information_schema.PROCESSLIST "
    "WHERE ID IN (SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX)",
    "SELECT ID, (SELECT COUNT(*) FROM information_schema.INNODB_TRX) AS n "
    "FROM information_schema.PROCESSLIST",
    "SET @t = (SELECT TABLE_ID FROM information_schema.INNODB_SYS_TABLES tt "
    "JOIN information_schema.INNODB_SYS_INDEXES i ON i.TABLE_ID = tt.TABLE_ID)",
    "SELECT ID FROM information_schema.PROCESSLIST p STRAIGHT_JOIN lagscope.heartbeat h",
    "select id from `information_schema`.`processlist` natural join information_schema.innodb_trx",
]


@pytest.mark.parametrize("sql", OLD_JOINS + OTHER_JOINS)
def test_a_join_of_information_schema_is_seen(sql: str) -> None:
    assert joins_information_schema(sql)


def test_single_table_statements_and_literals_are_not_joins() -> None:
    literal = "SELECT 'FROM information_schema.A JOIN information_schema.B' AS x FROM t"
    assert tables_read(literal) == ["t"]
    assert tables_read("SHOW RELAYLOG '' EVENTS IN 'relay-bin.000002' FROM 4 LIMIT 10") == []
    sessions = (
        "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() "
        "AND COMMAND NOT IN ('Binlog Dump', 'Binlog Dump GTID') ORDER BY TIME DESC LIMIT 200"
    )
    assert tables_read(sessions) == ["information_schema.processlist"]
    assert not joins_information_schema(sessions)
    p_s = (
        "SELECT 1 FROM performance_schema.data_lock_waits w "
        "JOIN performance_schema.threads rt ON rt.THREAD_ID = w.REQUESTING_THREAD_ID"
    )
    assert tables_read(p_s) == ["performance_schema.data_lock_waits", "performance_schema.threads"]
    assert not joins_information_schema(p_s)
