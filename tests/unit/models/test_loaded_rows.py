"""Rows written back by hand (models/loaded.py): what changed since they were loaded, and
``assign``, which sets only the columns whose value differs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import inspect
from sqlalchemy.orm import Session

from lagscope.inventory import instances as inventory
from lagscope.models import Cluster
from lagscope.models.loaded import assign, changes, loaded_values
from tests.factories import memory_session


@pytest.fixture
def session() -> Iterator[Session]:
    yield from memory_session()


def cluster(session: Session) -> Cluster:
    row = inventory.create_cluster(session, "c")
    session.commit()
    session.refresh(row)  # loaded, as a tick's rows are
    return row


def test_equal_values_leave_an_attached_row_unmodified(session: Session) -> None:
    row = cluster(session)
    assign(row, {"name": "c", "poll_interval_s": row.poll_interval_s})
    assert not inspect(row).modified and row not in session.dirty
    assign(row, {"name": "c", "poll_interval_s": 7.0})
    assert row in session.dirty
    assert inspect(row).attrs.poll_interval_s.history.added == [7.0]
    assert inspect(row).attrs.name.history.added == ()


def test_a_detached_row_reports_what_assign_changed(session: Session) -> None:
    row = cluster(session)
    session.expunge(row)
    before = loaded_values(row, ("name", "poll_interval_s"))
    assign(row, {"name": "c", "poll_interval_s": 5.0})
    assert changes(row, before) == {"poll_interval_s": 5.0}
