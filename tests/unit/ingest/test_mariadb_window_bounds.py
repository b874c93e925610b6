"""MariaDB's binlog window (``SHOW BINLOG EVENTS … LIMIT 5000``) has the dump's bounds: an
overall deadline however slowly the rows come, a per-event cap judged on the packet header, a
byte budget; a window cut by one says why in its row's ``problem`` and the next mark is still
taken. Against a fake MariaDB source on 127.0.0.1 (tests/unit/fakes/fake_mariadb_binlog.py) and a
SQLite store, through the job's own entry point."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.db import make_engine, make_session_factory
from lagscope.ingest import commit_samples
from lagscope.inventory import instances as inventory
from lagscope.models import CommitSample
from lagscope.security.secret_box import SecretBox, store_box
from lagscope.store_setup import upgrade
from tests.unit.fakes.fake_mariadb_binlog import MARK_FILE, FakeMariaDBBinlog, Window

SECRET = "mariadb-window-test-secret-3f8a1c7e5d2b9046-Kp"
Start = Callable[[Window], FakeMariaDBBinlog]


@dataclass
class Store:
    sessions: sessionmaker[Session]
    box: SecretBox
    instance_id: int


@pytest.fixture
def store(tmp_path: Path) -> Store:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    return Store(sessions, store_box(sessions, SECRET), 0)


@pytest.fixture
def source_of(store: Store) -> Iterator[Start]:
    started: list[FakeMariaDBBinlog] = []

    def start(window: Window) -> FakeMariaDBBinlog:
        fake = FakeMariaDBBinlog(window).__enter__()
        started.append(fake)
        with store.sessions() as s, s.begin():
            cluster = inventory.create_cluster(s, f"fake{len(started)}")
            instance = inventory.add_instance(
                s, store.box, cluster, "source", "127.0.0.1", fake.port, "mon", "pw", "source"
            )
            instance.flavor = "mariadb"
            s.flush()
            store.instance_id = instance.id
            # A mark from an earlier run, so this run reads a window.
            s.add(
                CommitSample(
                    instance_id=instance.id,
                    taken_at=datetime.now(UTC),
                    transactions=0,
                    groups=[],
                    next_file=MARK_FILE,
                    next_pos=4,
                )
            )
        return fake

    yield start
    for fake in started:
        fake.stop()


def newest(store: Store) -> CommitSample:
    with store.sessions() as s:
        row = s.scalars(
            select(CommitSample)
            .where(CommitSample.instance_id == store.instance_id)
            .order_by(CommitSample.id.desc())
            .limit(1)
        ).one()
        s.expunge(row)
        return row


@pytest.mark.slow
def test_a_source_that_trickles_its_window_is_cut_at_the_deadline(
    store: Store, source_of: Start
) -> None:
    # 40 transactions, one every second: each row well inside the 6 s read timeout the job
    # gives a recv, the whole window four times the default 10 s deadline.
    fake = source_of(("trickle", 40, 1.0))
    commit_samples.sample_all(store.sessions, store.box, None, time.time(), timeout_s=3.0)
    sent = fake.rows_sent
    row = newest(store)
    assert fake.windows_started == 1
    assert sent < 80, "the reader waited for the whole trickle"
    assert row.problem is not None, "the cut window's row does not say why"
    assert row.problem.startswith("not read: the answer did not arrive within 10.0 s")
    assert "LAGSCOPE_BINLOG_WINDOW_DEADLINE_S" in row.problem
    assert row.transactions == 0
    # The source's position is still marked: the next run reads from there.
    assert (row.next_file, row.next_pos) == (MARK_FILE, 4)


@pytest.mark.slow
def test_a_row_over_the_event_cap_is_refused_on_its_header(store: Store, source_of: Start) -> None:
    # The header announces a full 16 MiB packet; the body never comes. Refused on the header,
    # so the reader neither waits for it nor allocates it.
    from lagscope.collectors.binlog_dump import Bounds  # the settings' bounds, passed in

    fake = source_of(("huge", 0xFF_FFFF))
    bounds = Bounds(deadline_s=30, max_event_bytes=1024 * 1024)
    commit_samples.sample_all(store.sessions, store.box, None, time.time(), bounds=bounds)
    row = newest(store)
    assert fake.windows_started == 1
    assert row.problem is not None
    assert row.problem.startswith("not read: a packet of 16777215 bytes, over 1048576 bytes")


@pytest.mark.slow
def test_the_window_byte_budget_stops_the_read(store: Store, source_of: Start) -> None:
    from lagscope.collectors.binlog_dump import Bounds

    source_of(("rows", 200))
    bounds = Bounds(max_bytes=4000)
    commit_samples.sample_all(store.sessions, store.box, None, time.time(), bounds=bounds)
    row = newest(store)
    assert row.problem is not None
    assert row.problem.startswith("not read: an answer over 4000 bytes")


@pytest.mark.slow
def test_a_window_inside_its_bounds_is_read_whole(store: Store, source_of: Start) -> None:
    source_of(("rows", 20))
    stored = commit_samples.sample_all(store.sessions, store.box, None, time.time())
    row = newest(store)
    assert stored == 1 and row.problem is None
    # 20 transactions, two per group commit; the last group may run past the window.
    assert row.transactions == 18 and row.groups == [[120, 120]] * 9
