"""The lab incidents' pure parts: names that may go into SQL, GTID arithmetic, what an incident
returns, and the clock-offset plumbing of the lab's servers (the live behaviour is in
tests/integration/test_lab_incidents.py)."""

from pathlib import Path

import pytest

from lagscope.errors import InvalidInput
from lagscope.lab import incidents as inc
from lagscope.lab import servers
from lagscope.lab.servers import LabServer
from lagscope.lab.topology import LabConfig


@pytest.mark.parametrize("name", ["large_trx", "t1", "a" * 64])
def test_plain_table_names_are_accepted(name: str) -> None:
    assert inc._sql("SELECT 1 FROM {t}", name) == f"SELECT 1 FROM lab_incidents.{name}"


@pytest.mark.parametrize("name", ["", "1t", "T", "a-b", "x; DROP TABLE y", "a" * 65, "a`b"])
def test_anything_else_is_refused_before_it_reaches_sql(name: str) -> None:
    with pytest.raises(InvalidInput):
        inc._sql("SELECT 1 FROM {t}", name)


def test_domain_zero_sequence_is_read_from_a_gtid_list() -> None:
    assert inc._seq("0-1-120") == 120
    assert inc._seq("1-3-7, 0-2-55") == 55
    assert inc._seq("") == 0
    assert inc._seq("1-3-7") == 0


def test_incident_json_is_plain() -> None:
    made = inc.Incident("row_lock", "blocked_by_session", "replica1", "s", "t", 42, {"rows": 10})
    assert made.to_json() == {
        "name": "row_lock",
        "cause": "blocked_by_session",
        "replica": "replica1",
        "schema": "s",
        "table": "t",
        "session_id": 42,
        "started_at": None,
        "details": {"rows": 10},
    }


def test_every_incident_is_in_the_catalogue_and_unknown_names_are_refused() -> None:
    assert set(inc.INCIDENTS) == {
        "large_transaction",
        "long_alter",
        "metadata_lock",
        "row_lock",
        "no_primary_key",
        "serial_apply",
        "relay_log_durability",
        "durable_apply",
        "delayed",
        "stopped",
        "broken",
        "network_bound",
        "clock_offset",
    }
    with pytest.raises(InvalidInput):
        inc.incident(object(), "meteor_strike")  # type: ignore[arg-type]


def _server() -> LabServer:
    return LabServer("replica2", "127.0.0.1", 3307, 3, Path("/tmp/x/data"), Path("/tmp/x/s"))


def test_a_server_with_a_clock_offset_runs_under_libfaketime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(servers, "mariadbd_path", lambda: "/usr/sbin/mariadbd")
    monkeypatch.setattr(servers, "libfaketime_path", lambda: "/lib/libfaketime.so.1")
    server = _server()
    assert server.argv()[0] == "/usr/sbin/mariadbd"
    server.clock_offset_s = 2.5
    argv = server.argv()
    assert argv[:4] == [
        "/usr/bin/env",
        "LD_PRELOAD=/lib/libfaketime.so.1",
        "FAKETIME=+2.500000",
        "FAKETIME_DONT_FAKE_MONOTONIC=1",
    ]
    assert argv[4] == "/usr/sbin/mariadbd"
    # The lab finds its processes by the datadir in their command line.
    assert f"--datadir={server.datadir}" in argv
    assert LabServer.from_state(server.to_state()).clock_offset_s == 2.5


def test_clock_offsets_must_name_a_server_and_stay_within_a_day() -> None:
    LabConfig(replicas=2, clock_offsets=(("replica2", -3.0),)).validate()
    with pytest.raises(InvalidInput):
        LabConfig(replicas=2, clock_offsets=(("replica3", 1.0),)).validate()
    with pytest.raises(InvalidInput):
        LabConfig(replicas=2, clock_offsets=(("source", 90_000.0),)).validate()
