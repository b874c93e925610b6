"""Tracked parameters: discovery picks the server's own names; values stay text."""

from __future__ import annotations

from lagscope.collectors.dialect import MARIADB, MYSQL_57
from lagscope.collectors.params import concept_of, discovery_statement, plan_params
from tests.unit.fakes.executor import rs

COLUMNS = ("VARIABLE_NAME", "VARIABLE_VALUE")


def test_mysql_80_26_prefers_new_names_when_both_are_listed():
    catalog = rs(
        COLUMNS,
        ("replica_parallel_workers", "4"),
        ("slave_parallel_workers", "4"),
        ("replica_parallel_type", "LOGICAL_CLOCK"),
        ("slave_parallel_type", "LOGICAL_CLOCK"),
        ("sync_binlog", "1"),
    )
    plan = plan_params("mysql", catalog)
    assert plan.names == ("replica_parallel_workers", "replica_parallel_type", "sync_binlog")
    assert plan.statement() == (
        "SELECT CONCAT_WS(CHAR(31), IFNULL(@@global.replica_parallel_workers, CHAR(0)), "
        "IFNULL(@@global.replica_parallel_type, CHAR(0)), IFNULL(@@global.sync_binlog, CHAR(0)))"
    )


def test_one_joined_column_reads_like_the_typed_columns():
    """MySQL gives booleans as 1/0 and DOUBLEs with six decimals in a text context; a NULL is a
    NUL character. Each reads as the wide, typed SELECT read it."""
    catalog = rs(
        COLUMNS,
        ("read_only", "OFF"),
        ("long_query_time", "10.000000"),
        ("gtid_mode", "ON"),
        ("sync_binlog", "1"),
        ("innodb_flush_method", ""),
    )
    plan = plan_params("mysql", catalog, extra=["long_query_time", "innodb_flush_method"])
    wide = plan.parse(rs(tuple("abcde"), (1, None, 1, "ON", 10.0)))
    joined = plan.parse(rs(("p",), ("\x1f".join(["1", "\x00", "1", "ON", "10.000000"]),)))
    assert plan.names == ("sync_binlog", "innodb_flush_method", "read_only", "gtid_mode",
                          "long_query_time")  # fmt: skip
    assert (
        dict(joined or {})
        == dict(wide or {})
        == {
            "sync_binlog": "1",
            "read_only": "ON",
            "gtid_mode": "ON",
            "long_query_time": "10.0",
            "innodb_flush_method": None,
        }
    )


def test_an_answer_that_does_not_split_into_the_names_is_not_read():
    plan = plan_params("mysql", rs(COLUMNS, ("sync_binlog", "1"), ("read_only", "OFF")))
    assert plan.parse(rs(("p",), ("1\x1fON\x1fextra",))) is None


def test_mysql_57_old_names_and_removed_variables_tolerated():
    catalog = rs(COLUMNS, ("slave_parallel_workers", "0"), ("slave_parallel_type", "DATABASE"))
    plan = plan_params("mysql", catalog)
    assert plan.names == ("slave_parallel_workers", "slave_parallel_type")
    values = plan.parse(rs(("a", "b"), (0, "DATABASE")))
    assert dict(values) == {"slave_parallel_workers": "0", "slave_parallel_type": "DATABASE"}


def test_mariadb_uses_slave_parallel_threads_and_keeps_strings():
    catalog = rs(
        COLUMNS,
        ("SLAVE_PARALLEL_THREADS", "0"),
        ("SLAVE_PARALLEL_WORKERS", "0"),  # alias: must not be polled twice
        ("SLAVE_PARALLEL_MODE", "optimistic"),
        ("LOG_SLAVE_UPDATES", "ON"),
        ("SYNC_BINLOG", "0"),
    )
    plan = plan_params("mariadb", catalog)
    assert plan.names == (
        "slave_parallel_threads",
        "slave_parallel_mode",
        "sync_binlog",
        "log_slave_updates",
    )
    values = plan.parse(rs(("a", "b", "c", "d"), (4, "aggressive", 0, 1)))
    assert values["slave_parallel_threads"] == "4"
    assert values["slave_parallel_mode"] == "aggressive"
    assert values["log_slave_updates"] == "ON"  # @@global gives 1; SHOW VARIABLES says ON
    assert values["sync_binlog"] == "0"  # an integer 0 is not a boolean


def test_extra_params_only_when_the_server_lists_them():
    catalog = rs(COLUMNS, ("SYNC_BINLOG", "0"), ("MAX_CONNECTIONS", "151"))
    evil = "x; DROP TABLE t"
    plan = plan_params("mariadb", catalog, extra=["max_connections", "no_such_var", evil])
    assert "max_connections" in plan.names
    assert plan.missing == ("no_such_var", evil)
    assert evil not in (plan.statement() or "")


def test_null_value_stays_none():
    plan = plan_params("mysql", rs(COLUMNS, ("sync_binlog", "1")))
    assert plan.parse(rs(("x",), (None,))) == {"sync_binlog": None}


def test_discovery_reads_the_flavors_catalog():
    assert "performance_schema.global_variables" in discovery_statement(MYSQL_57)
    assert "information_schema.GLOBAL_VARIABLES" in discovery_statement(MARIADB)


def test_concepts_span_flavors():
    assert concept_of("slave_parallel_threads") == concept_of("replica_parallel_workers")
    assert concept_of("slave_parallel_threads") == "parallel_workers"
    assert concept_of("not_tracked") is None
