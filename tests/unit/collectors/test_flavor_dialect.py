"""Flavor parsing and the one version switch."""

from __future__ import annotations

import pytest

from lagscope.collectors.dialect import dialect_for
from lagscope.collectors.flavor import ServerFlavor, parse_flavor
from lagscope.errors import UnsupportedServer


@pytest.mark.parametrize(
    ("version", "comment", "product", "numbers"),
    [
        ("10.11.19-MariaDB-0+deb12u1", "Debian 12", "mariadb", (10, 11, 19)),
        ("5.5.5-10.6.12-MariaDB-log", "", "mariadb", (10, 6, 12)),
        ("11.4.2-MariaDB", "MariaDB Server", "mariadb", (11, 4, 2)),
        ("8.0.36", "MySQL Community Server - GPL", "mysql", (8, 0, 36)),
        ("5.7.44-log", "MySQL Community Server (GPL)", "mysql", (5, 7, 44)),
        ("8.4.3-commercial", "MySQL Enterprise Server", "mysql", (8, 4, 3)),
        ("8.0.35-27", "Percona Server (GPL)", "mysql", (8, 0, 35)),
    ],
)
def test_parse_flavor(version: str, comment: str, product: str, numbers: tuple[int, int, int]):
    flavor = parse_flavor(version, comment)
    assert flavor is not None
    assert (flavor.product, flavor.version) == (product, numbers)


def test_unparseable_version_is_none():
    assert parse_flavor("banana") is None


@pytest.mark.parametrize(
    ("product", "version", "replica_sql", "source_sql", "workers"),
    [
        ("mysql", (5, 7, 44), "SHOW SLAVE STATUS", "SHOW MASTER STATUS", "perf_schema_basic"),
        ("mysql", (8, 0, 21), "SHOW SLAVE STATUS", "SHOW MASTER STATUS", "perf_schema_timestamps"),
        (
            "mysql",
            (8, 0, 22),
            "SHOW REPLICA STATUS",
            "SHOW MASTER STATUS",
            "perf_schema_timestamps",
        ),
        ("mysql", (8, 1, 0), "SHOW REPLICA STATUS", "SHOW MASTER STATUS", "perf_schema_timestamps"),
        (
            "mysql",
            (8, 2, 0),
            "SHOW REPLICA STATUS",
            "SHOW BINARY LOG STATUS",
            "perf_schema_timestamps",
        ),
        (
            "mysql",
            (8, 4, 0),
            "SHOW REPLICA STATUS",
            "SHOW BINARY LOG STATUS",
            "perf_schema_timestamps",
        ),
        (
            "mysql",
            (9, 1, 0),
            "SHOW REPLICA STATUS",
            "SHOW BINARY LOG STATUS",
            "perf_schema_timestamps",
        ),
        ("mariadb", (10, 5, 0), "SHOW ALL SLAVES STATUS", "SHOW MASTER STATUS", "processlist"),
        ("mariadb", (11, 4, 2), "SHOW ALL SLAVES STATUS", "SHOW MASTER STATUS", "processlist"),
    ],
)
def test_dialect_for_version_ranges(product, version, replica_sql, source_sql, workers):
    dialect = dialect_for(ServerFlavor(product, version))
    assert dialect.replica_status_sql == replica_sql
    assert dialect.source_status_sql == source_sql
    assert dialect.workers == workers


@pytest.mark.parametrize(
    ("product", "version"),
    [("mysql", (5, 6, 51)), ("mariadb", (10, 4, 32)), ("mariadb", (5, 5, 68))],
)
def test_old_servers_are_refused_by_name(product, version):
    with pytest.raises(UnsupportedServer, match="older than"):
        dialect_for(ServerFlavor(product, version), "db1:3306")


def test_mariadb_reads_information_schema_because_its_performance_schema_is_off_by_default():
    dialect = dialect_for(ServerFlavor("mariadb", (10, 11, 6)))
    assert dialect.variables_table.startswith("information_schema.")
    assert dialect.sbm_null_unless_io_yes
