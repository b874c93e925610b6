"""The reading registry: the poller sends and parses exactly the rows of ``READINGS``.

Adding a reading is one row in collectors/readings.py (plus its collector and snapshot field):
nothing in the poller names a reading.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from lagscope.collectors import poller as poller_module
from lagscope.collectors.dialect import MARIADB
from lagscope.collectors.poller import InstancePoller
from lagscope.collectors.readings import READINGS, Reading
from lagscope.errors import AccessDenied
from tests.unit.collectors.test_poller import HEARTBEAT, mariadb_answers
from tests.unit.fakes.executor import FakeExecutor, rs

EXTRA_SQL = "SELECT 'extra' AS word"


def test_the_batch_is_the_registry_in_order() -> None:
    fake = FakeExecutor(mariadb_answers())
    poller = InstancePoller(fake, heartbeat=HEARTBEAT)
    poller.poll()
    assert poller._session is not None
    setup = poller._session.setup
    assert setup.dialect is MARIADB
    # The first poll has no previous one: no cause reading (``when``) is sent.
    assert list(fake.batches[-1]) == [r.statement(setup) for r in READINGS if r.when is None]
    assert [r.name for r in READINGS if r.required] == ["server_state", "replica_status"]


def test_a_new_reading_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reading added to the tuple is sent, parsed into the snapshot, and refused like the
    others with its own hint, without an edit to the poller."""
    extra = Reading(
        "extra",
        lambda setup: EXTRA_SQL,
        lambda setup, result, readout: {"counters": MappingProxyType({"extra": len(result.rows)})},
        privilege_hint="needs SELECT on extra",
    )
    grown = (*READINGS, extra)
    monkeypatch.setattr(poller_module, "READINGS", grown)
    monkeypatch.setattr(poller_module, "BY_NAME", {r.name: r for r in grown})
    answers = mariadb_answers(**{EXTRA_SQL: rs(("word",), ("a",), ("b",))})
    fake = FakeExecutor(answers)
    snap = InstancePoller(fake, heartbeat=HEARTBEAT).poll()
    assert fake.batches[-1][-1] == EXTRA_SQL
    assert snap.counters == {"extra": 2}

    denied = AccessDenied("db:3306", "Access denied", 1142)
    fake = FakeExecutor({**answers, EXTRA_SQL: denied})
    snap = InstancePoller(fake, heartbeat=HEARTBEAT).poll()
    assert "extra: Access denied; needs SELECT on extra" in snap.problems["extra"]


def test_the_poller_names_no_reading() -> None:
    source = Path(poller_module.__file__).read_text(encoding="utf-8")
    for reading in READINGS:
        assert f'"{reading.name}"' not in source, reading.name
