"""Replica discovery: the source's answers normalised per flavor (collectors/discovery.py, over
recorded result sets whose columns follow the MariaDB KB "SHOW REPLICA HOSTS" page and the
MySQL 5.7 "SHOW SLAVE HOSTS" / 8.4 "SHOW REPLICAS" pages), and the pure decision of what to
propose (inventory/discovery.py ``propose``)."""

from __future__ import annotations

import pytest

from lagscope.collectors import privileges
from lagscope.collectors.dialect import MARIADB, MYSQL_57, MYSQL_84
from lagscope.collectors.discovery import (
    IDENTITY_SQL,
    DumpSession,
    RegisteredReplica,
    SourceView,
    peer_address,
    processlist_statement,
    read_source_view,
)
from lagscope.collectors.flavor import FLAVOR_SQL, ServerFlavor
from lagscope.errors import AccessDenied
from lagscope.inventory.discovery_proposals import Known, propose
from tests.unit.fakes.executor import FakeExecutor, rs

MARIADB_VERSION = rs(["@@version", "@@version_comment"], ["10.11.19-MariaDB-0+deb12u1", "Debian"])
MYSQL_84_VERSION = rs(["@@version", "@@version_comment"], ["8.4.3", "MySQL Community Server"])
MYSQL_57_VERSION = rs(["@@version", "@@version_comment"], ["5.7.44-log", "MySQL Community"])
IDENTITY = rs(["server_id", "account"], [1, "monitor@%"])
ALL_GRANTS = rs(
    ["Grants for monitor@%"],
    ["GRANT BINLOG MONITOR, REPLICA MONITOR, PROCESS ON *.* TO `monitor`@`%`"],
)
NO_PROCESS = rs(["Grants for monitor@%"], ["GRANT REPLICA MONITOR ON *.* TO `monitor`@`%`"])
DENIED = AccessDenied(
    "db:3306",
    "Access denied; you need (at least one of) the REPLICATION MASTER ADMIN privilege(s)",
    1227,
)
SESSIONS = ["id", "user", "host", "command"]


def answers(version, hosts, sessions, grants=ALL_GRANTS, dialect=MARIADB):
    return {
        FLAVOR_SQL: version,
        IDENTITY_SQL: IDENTITY,
        privileges.STATEMENT: grants,
        dialect.replica_hosts_sql: hosts,
        processlist_statement(dialect): sessions,
    }


def test_mariadb_registered_replicas_and_sessions():
    hosts = rs(
        ["Server_id", "Host", "Port", "Master_id"],
        [2, "127.0.0.1", 40001, 1],
        [3, "db3.example", 0, 1],
    )
    sessions = rs(SESSIONS, [10, "repl", "127.0.0.1:51234", "Binlog Dump"])
    fake = FakeExecutor(answers(MARIADB_VERSION, hosts, sessions))
    view = read_source_view(fake)
    assert view.server_id == 1 and view.flavor.product == "mariadb"
    assert view.registered == (
        RegisteredReplica(2, "127.0.0.1", 40001, 1, None),
        RegisteredReplica(3, "db3.example", 0, 1, None),
    )
    assert view.sessions == (DumpSession(10, "repl", "127.0.0.1"),)
    assert view.problems == ()
    assert "SHOW SLAVE HOSTS" in fake.statements
    assert any("information_schema.PROCESSLIST" in s for s in fake.statements)


def test_mysql_84_uses_show_replicas_and_its_column_names():
    hosts = rs(
        ["Server_Id", "Host", "Port", "Source_Id", "Replica_UUID"],
        [21, "athena", 3306, 1, "07af4990-f41f-11df-a566-7ac56fdaf645"],
    )
    sessions = rs(SESSIONS, [7, "repl", "10.0.0.21:40022", "Binlog Dump GTID"])
    fake = FakeExecutor(answers(MYSQL_84_VERSION, hosts, sessions, dialect=MYSQL_84))
    view = read_source_view(fake)
    assert view.registered == (
        RegisteredReplica(21, "athena", 3306, 1, "07af4990-f41f-11df-a566-7ac56fdaf645"),
    )
    assert "SHOW REPLICAS" in fake.statements and "SHOW SLAVE HOSTS" not in fake.statements
    assert any("performance_schema.processlist" in s for s in fake.statements)


def test_mysql_57_uses_the_old_statement_and_names():
    hosts = rs(
        ["Server_id", "Host", "Port", "Master_id", "Slave_UUID"],
        [5, "", 3306, 1, "14cb6624-7f93-11e0-b2c0-c80aa9429562"],
    )
    fake = FakeExecutor(answers(MYSQL_57_VERSION, hosts, rs(SESSIONS), dialect=MYSQL_57))
    view = read_source_view(fake)
    assert view.registered == (
        RegisteredReplica(5, "", 3306, 1, "14cb6624-7f93-11e0-b2c0-c80aa9429562"),
    )
    assert "SHOW SLAVE HOSTS" in fake.statements


def test_refused_hosts_fall_back_to_sessions_and_name_the_grant():
    sessions = rs(SESSIONS, [10, "repl", "10.0.0.9:51234", "Binlog Dump"])
    view = read_source_view(FakeExecutor(answers(MARIADB_VERSION, DENIED, sessions)))
    assert view.registered is None
    assert view.sessions == (DumpSession(10, "repl", "10.0.0.9"),)
    (problem,) = view.problems
    assert "GRANT REPLICATION MASTER ADMIN ON *.* TO 'monitor'@'%'" in problem


def test_refused_hosts_without_process_is_an_error_naming_both_grants():
    fake = FakeExecutor(answers(MARIADB_VERSION, DENIED, rs(SESSIONS), grants=NO_PROCESS))
    with pytest.raises(AccessDenied) as raised:
        read_source_view(fake)
    assert "REPLICATION MASTER ADMIN" in str(raised.value) and "PROCESS" in str(raised.value)


def test_mysql_names_its_own_grant():
    fake = FakeExecutor(answers(MYSQL_84_VERSION, DENIED, rs(SESSIONS), dialect=MYSQL_84))
    (problem,) = read_source_view(fake).problems
    assert "GRANT REPLICATION SLAVE ON *.* TO 'monitor'@'%'" in problem


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("10.0.0.7:51234", "10.0.0.7"),
        ("db2.example.com:40000", "db2.example.com"),
        ("[::1]:51234", "::1"),
        ("::1:51234", "::1"),
        ("localhost", None),
        ("", None),
    ],
)
def test_peer_address_strips_the_ephemeral_port(host: str, address: str | None):
    assert peer_address(host) == address


def test_local_socket_sessions_are_counted_not_proposed():
    sessions = rs(SESSIONS, [10, "repl", "localhost", "Binlog Dump"])
    view = read_source_view(FakeExecutor(answers(MARIADB_VERSION, rs(["Server_id"]), sessions)))
    assert view.sessions == () and "local socket" in view.problems[0]


# --- propose ---------------------------------------------------------------------------------

FLAVOR = ServerFlavor("mariadb", (10, 11, 19))
SOURCE = Known("source", "127.0.0.1", 40000, 1, "source")


def view_of(registered, sessions=(), server_id=1) -> SourceView:
    return SourceView("127.0.0.1:40000", FLAVOR, server_id, registered, tuple(sessions), ())


def reg(server_id: int, host: str, port: int) -> RegisteredReplica:
    return RegisteredReplica(server_id, host, port, 1, None)


def dump(address: str) -> DumpSession:
    return DumpSession(None, "repl", address)


def test_registered_replicas_are_proposed_with_their_reported_address():
    view = view_of(
        (reg(2, "127.0.0.1", 40001), reg(3, "127.0.0.1", 40002)),
        [dump("127.0.0.1"), dump("127.0.0.1")],  # replica3 through a proxy: same peer
    )
    proposals = propose(view, [SOURCE])
    assert [(p.host, p.port, p.server_id, p.seen_as) for p in proposals] == [
        ("127.0.0.1", 40001, 2, "registered"),
        ("127.0.0.1", 40002, 3, "registered"),
    ]
    assert [p.suggested_name for p in proposals] == ["replica-2", "replica-3"]
    assert all(p.monitored_as is None for p in proposals)


def test_known_by_address_or_server_id_is_marked_not_proposed_again():
    known = [
        SOURCE,
        Known("near", "127.0.0.1", 40001, None),
        Known("far", "far.example", 3306, 3),  # added under another name: same server id
    ]
    view = view_of((reg(2, "127.0.0.1", 40001), reg(3, "127.0.0.1", 40002), reg(4, "x", 3306)))
    monitored = {p.server_id: p.monitored_as for p in propose(view, known)}
    assert monitored == {2: "near", 3: "far", 4: None}


def test_the_host_is_compared_without_case():
    known = [SOURCE, Known("a", "DB2.example", 3306, None)]
    (p,) = propose(view_of((reg(2, "db2.EXAMPLE", 3306),)), known)
    assert p.monitored_as == "a"


def test_the_source_itself_and_hostless_rows_are_not_proposed():
    view = view_of((reg(1, "127.0.0.1", 40000), reg(5, "", 3306)))
    assert propose(view, [SOURCE]) == []


def test_an_unreported_port_is_never_guessed():
    (p,) = propose(view_of((reg(2, "db2", 0),)), [SOURCE])
    assert p.port is None
    # Not taken for an instance on the default port either.
    (p,) = propose(view_of((reg(2, "db2", 0),)), [SOURCE, Known("db2", "db2", 3306, None)])
    assert p.monitored_as is None


def test_sessions_beyond_the_registered_ones_are_proposed_without_a_port():
    view = view_of(
        (reg(2, "10.0.0.2", 3306), reg(5, "", 3306)),  # replica 5 reports no host (MySQL)
        [dump("10.0.0.2"), dump("10.0.0.5")],
    )
    proposals = propose(view, [SOURCE])
    last = proposals[-1]
    assert (last.host, last.port, last.seen_as) == ("10.0.0.5", None, "dump_session")
    assert last.server_id == 5  # the one hostless replica, the one unmatched address
    assert len(proposals) == 2


def test_sessions_of_replicas_that_reported_a_name_are_not_proposed_again():
    # Both replicas report names, their sessions come from IPs: nothing extra to offer.
    view = view_of(
        (reg(2, "db2.example", 3306), reg(3, "db3.example", 3306)),
        [dump("10.0.0.2"), dump("10.0.0.3")],
    )
    assert [p.host for p in propose(view, [SOURCE])] == ["db2.example", "db3.example"]


def test_refused_hosts_give_one_guess_per_address_until_enough_replicas_are_known():
    view = view_of(None, [dump("127.0.0.1"), dump("127.0.0.1")])
    (p,) = propose(view, [SOURCE])
    assert (p.host, p.port, p.server_id, p.monitored_as) == ("127.0.0.1", None, None, None)
    assert p.suggested_name == "replica-127.0.0.1"
    one_known = [SOURCE, Known("r1", "127.0.0.1", 40001, 2)]
    assert propose(view, one_known)[0].monitored_as is None  # two sessions, one replica known
    both = [*one_known, Known("r2", "127.0.0.1", 40002, 3)]
    assert propose(view, both)[0].monitored_as == "r1"


def test_suggested_names_do_not_clash_with_instances():
    known = [SOURCE, Known("replica-2", "elsewhere", 3306, None)]
    (p,) = propose(view_of((reg(2, "db2", 3306),)), known)
    assert p.suggested_name == "replica-2-2"


def test_a_duplicate_registration_is_proposed_once():
    view = view_of((reg(2, "db2", 3306), reg(2, "DB2", 3306)))
    assert len(propose(view, [SOURCE])) == 1
