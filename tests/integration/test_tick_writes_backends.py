"""The batch's rows go to the driver as they are (ingest/tick_writes.py: statements compiled
once, the types' bind processors applied per row, ``exec_driver_sql``): on SQLite, PostgreSQL
and MariaDB stores, a row written that way reads back exactly as the same row written through
SQLAlchemy's ``Connection.execute``, for every column type a tick writes (microsecond times,
scaled integers, booleans, JSON, text, NULLs)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from sqlalchemy import JSON, Boolean, Float, Integer, Table, insert, select, update
from sqlalchemy.orm import Session

from lagscope.db import make_engine, make_session_factory
from lagscope.ingest.tick_writes import TickWrites
from lagscope.lab import Lab
from lagscope.metrics_catalog import CHANNEL_COLUMNS
from lagscope.models import Channel, Instance, InstanceSample, Sample
from lagscope.models.types import EpochMicros, Scaled
from lagscope.store_setup import upgrade
from tests.factories import make_cluster
from tests.integration.postgres import start_postgres
from tests.integration.test_api_series import mariadb_store

pytestmark = pytest.mark.integration

AT = datetime(2026, 12, 6, 9, 30, 1, 123456, tzinfo=UTC)
SAMPLES = cast(Table, Sample.__table__)
INSTANCE_SAMPLES = cast(Table, InstanceSample.__table__)
INSTANCES = cast(Table, Instance.__table__)


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with ExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path / 'writes.db'}"
        elif request.param == "postgresql":
            server = start_postgres()
            stack.callback(server.stop)
            url = server.url
        else:
            lab = cast(Lab, request.getfixturevalue("lab"))
            url = stack.enter_context(mariadb_store(lab))
        upgrade(url)
        yield url


def _sample(channel_id: int, n: int) -> dict[str, Any]:
    row: dict[str, Any] = {"channel_id": channel_id, "ts": AT}
    for i, column in enumerate(CHANNEL_COLUMNS):
        # Every other column NULL, the rest a value of the column's kind.
        row[column.name] = None if (i + n) % 2 else _value_for(SAMPLES.c[column.name], i)
    return row


def _value_for(column: Any, i: int) -> Any:
    kind = column.type
    if isinstance(kind, Scaled):
        return 12.345 + i
    if isinstance(kind, EpochMicros):
        return AT
    if isinstance(kind, Boolean):
        return i % 3 == 0
    if isinstance(kind, Integer):
        return 1000 + i
    if isinstance(kind, Float):
        return 12.345 + i
    if isinstance(kind, JSON):
        return {"i": i, "x": [1.5, None, "ü"]}
    return f"text {i} ‘quoted’ %s %(x)s ?"


def _rows(session: Session, table: Table, key: str, value: int) -> list[dict[str, Any]]:
    result = session.execute(select(table).where(table.c[key] == value))
    return [{k: v for k, v in row._mapping.items() if k != "id"} for row in result]


def test_rows_sent_to_the_driver_read_back_as_sqlalchemy_writes_them(store_url: str) -> None:
    engine = make_engine(store_url)
    sessions = make_session_factory(engine)
    try:
        with sessions() as s, s.begin():
            _, named = make_cluster(s, "writes", [("i0", 3306, "replica"), ("i1", 3307)])
            instances = [named["i0"], named["i1"]]
            channels = [Channel(instance_id=i.id, name="", first_seen_at=AT) for i in instances]
            s.add_all(channels)
            s.flush()
            ours, theirs = channels
            inst_ours, inst_theirs = instances
            ids = (ours.id, theirs.id, inst_ours.id, inst_theirs.id)
        ours_id, theirs_id, inst_ours_id, inst_theirs_id = ids

        counters = {"Binlog_commits": 2**40, "note": "ünïcode ‘x’", "nested": {"a": [1, None]}}
        changed = ("clock_offset_s", "last_counters", "last_error", "last_ok_at")
        for n, (channel_id, instance_id, ours_path) in enumerate(
            [(ours_id, inst_ours_id, True), (theirs_id, inst_theirs_id, False)]
        ):
            sample = _sample(channel_id, 0)
            polled = {"instance_id": instance_id, "ts": AT, "reachable": True,
                      "round_trip_s": 0.0123, "clock_offset_s": -0.5,
                      "commits_per_s": None}  # fmt: skip
            values = {"clock_offset_s": 0.25 + n * 0, "last_counters": counters,
                      "last_error": "it's 100% \"odd\"", "last_ok_at": AT}  # fmt: skip
            with sessions() as s, s.begin():
                db = s.connection()
                if ours_path:
                    writes = TickWrites()
                    writes.update(INSTANCES, changed, {"_pk": instance_id, **values})
                    writes.insert(SAMPLES, [sample])
                    writes.insert(INSTANCE_SAMPLES, [polled])
                    writes.send(db)
                else:
                    db.execute(update(INSTANCES).where(INSTANCES.c.id == instance_id), values)
                    db.execute(insert(SAMPLES), [sample])
                    db.execute(insert(INSTANCE_SAMPLES), [polled])

        with sessions() as s:
            got = _rows(s, SAMPLES, "channel_id", ours_id)
            want = _rows(s, SAMPLES, "channel_id", theirs_id)
            assert len(got) == 1 and len(want) == 1
            got[0]["channel_id"] = want[0]["channel_id"]
            assert got == want
            assert got[0]["ts"] == AT  # to the microsecond

            got_polls = _rows(s, INSTANCE_SAMPLES, "instance_id", inst_ours_id)
            want_polls = _rows(s, INSTANCE_SAMPLES, "instance_id", inst_theirs_id)
            got_polls[0]["instance_id"] = want_polls[0]["instance_id"]
            assert got_polls == want_polls

            a, b = s.get_one(Instance, inst_ours_id), s.get_one(Instance, inst_theirs_id)
            for column in changed:
                assert getattr(a, column) == getattr(b, column), column
            assert a.last_counters == counters and a.last_ok_at == AT
    finally:
        engine.dispose()
