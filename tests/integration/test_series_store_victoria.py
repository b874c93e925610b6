"""The raw-series store past one box, against Debian's VictoriaMetrics: the lab polled by the owner
engine with ``LAGSCOPE_SERIES_URL`` set writes every poll's raw series there as well as into the
store, and the explorer's ``/series`` gives identical series read from SQLite, from PostgreSQL
(the same run's tables copied there) and from VictoriaMetrics: every series metric, per channel
and per server, at poll resolution and in wider buckets. The journal's windows and the
comparisons read their samples through the same seam: the same answers from either store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.orm import Session, sessionmaker

from lagscope.db import make_engine, make_session_factory
from lagscope.demo.processes import free_port
from lagscope.errors import SeriesStoreUnavailable
from lagscope.journal.annotations import create_annotation
from lagscope.lab import Lab
from lagscope.metrics_catalog import SERIES
from lagscope.models import Base, Channel, Instance
from lagscope.remote_write.points import NamedTick
from lagscope.series_store.points import HEADERS, encode, series_lines
from lagscope.series_store.victoria import VictoriaMetrics
from lagscope.store_setup import upgrade
from tests.factories import make_cluster

from .api_stack import ApiServer, api_server
from .pipeline_stack import Pipeline, start_pipeline
from .postgres import ThrowawayPostgres
from .victoria_server import victoria_server
from .waiting import wait_until

pytestmark = pytest.mark.integration

CHANNEL_METRICS = [m.name for m in SERIES if m.per == "channel"]
INSTANCE_METRICS = [m.name for m in SERIES if m.per == "instance"]


@pytest.fixture
def victoria(tmp_path: Path) -> Iterator[str]:
    with victoria_server(tmp_path / "victoria") as url:
        yield url


@pytest.fixture
def pipeline(lab: Lab, tmp_path: Path, victoria: str) -> Iterator[Pipeline]:
    env = {"LAGSCOPE_SERIES_URL": victoria}
    with start_pipeline(lab, tmp_path, heartbeat=False, extra_env=env) as started:
        yield started


def whole_ms(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def copy_store(source: sessionmaker[Session], url: str) -> None:
    """Every table's rows, as they are, into the store at ``url`` (migrated here, then emptied
    of the rows its migrations made)."""
    upgrade(url)
    engine = make_engine(url)
    try:
        with source() as read, make_session_factory(engine)() as write, write.begin():
            for table in reversed(Base.metadata.sorted_tables):
                write.execute(table.delete())
            for table in Base.metadata.sorted_tables:
                rows = [dict(r) for r in read.execute(select(table)).mappings()]
                if rows:
                    write.execute(insert(table), rows)
                if rows and "id" in table.c:  # the next id after the copied ones
                    write.execute(text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                        f"(SELECT max(id) FROM {table.name}))"
                    ))  # fmt: skip
    finally:
        engine.dispose()


def explorer(api: ApiServer, params: dict[str, Any]) -> list[dict[str, Any]]:
    with api.client() as client:
        answer = client.get("/api/v1/series", params=params)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["series"])


def answer(api: ApiServer, path: str, params: dict[str, Any]) -> Any:
    with api.client() as client:
        got = client.get(path, params=params)
    assert got.status_code == 200, got.text
    return got.json()


def test_same_run_reads_the_same_from_sqlite_postgresql_and_victoriametrics(
    pipeline: Pipeline, victoria: str, postgres: ThrowawayPostgres, tmp_path: Path
):
    since = datetime.now(UTC)
    wait_until(
        lambda: len(pipeline.answered("replica2", since)) >= 20,
        timeout_s=90,
        message="20 answered polls of the far replica",
    )
    start = whole_ms(since)
    end = whole_ms(datetime.now(UTC) - timedelta(seconds=2))
    with pipeline.session() as session:
        instance_ids = list(session.scalars(select(Instance.id)))
    channel_ids = [pipeline.channel_id(name) for name in ("replica1", "replica2")]
    # Poll resolution (a bucket per poll), a few polls a bucket, one bucket for the range.
    asks = [
        {"metric": metrics, key: ids, "start": start.isoformat(), "end": end.isoformat(),
         "points": points}
        for points in (2000, 7, 1)
        for metrics, key, ids in ((CHANNEL_METRICS, "channel_id", channel_ids),
                                  (INSTANCE_METRICS, "instance_id", instance_ids))
    ]  # fmt: skip
    # Two tuning steps to judge, a third of the way in and two thirds.
    third = (end - start) / 3
    with pipeline.session() as session, session.begin():
        for k in (1, 2):
            create_annotation(session, pipeline.cluster_id, "test", start + k * third, f"step {k}")
    # Windows of a few seconds: the run is ~20 s long.
    steps = {"start": start.isoformat(), "end": end.isoformat(), "width_s": 5, "settle_s": 1,
             "min_samples": 2, "group_s": 0}  # fmt: skip
    mid = start + third
    readings = [
        (f"/api/v1/clusters/{pipeline.cluster_id}/journal", steps),
        ("/api/v1/compare", {"channel_id": channel_ids[1], "a_start": start.isoformat(),
                             "a_end": mid.isoformat(), "b_start": mid.isoformat(),
                             "b_end": end.isoformat(), "min_samples": 2}),
        ("/api/v1/compare", {"channel_id": channel_ids[1], "other_channel_id": channel_ids[0],
                             "start": start.isoformat(), "end": end.isoformat()}),
    ]  # fmt: skip
    store_url = pipeline.url
    with (
        api_server(store_url) as sqlite_api,
        api_server(store_url, series_url=victoria) as victoria_api,
    ):
        from_sqlite = [explorer(sqlite_api, ask) for ask in asks]
        # VictoriaMetrics is sent each second and searchable shortly after.
        wait_until(
            lambda: [explorer(victoria_api, ask) for ask in asks] == from_sqlite,
            timeout_s=30,
            message="VictoriaMetrics gives the series SQLite gives",
        )
        read_sqlite = [answer(sqlite_api, path, params) for path, params in readings]
        assert [answer(victoria_api, path, params) for path, params in readings] == read_sqlite
    journal = read_sqlite[0]
    assert len(journal["steps"]) == 2, journal
    judged = [i["before"]["samples"] + i["after"]["samples"] for s in journal["steps"]
              for i in s["impacts"]]  # fmt: skip
    assert len(judged) == 4 and all(n >= 2 for n in judged), judged
    lag = next(s for s in from_sqlite[0] if s["metric"] == "lag_s" and s["points"])
    assert len(lag["points"]) >= 15, lag
    assert all(p["n"] == 1 for p in lag["points"])  # poll resolution: one poll a bucket
    assert sum(len(s["points"]) for answer in from_sqlite for s in answer) > 500
    postgres_url = postgres.new_database("series")
    copy_store(pipeline.sessions, postgres_url)
    with api_server(postgres_url) as postgres_api:
        assert [explorer(postgres_api, ask) for ask in asks] == from_sqlite


def test_the_explorer_answers_503_naming_a_series_store_that_does_not_answer(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    with make_session_factory(engine)() as session, session.begin():
        _, named = make_cluster(session, "c", [("r1", 3307)])
        instance_id = named["r1"].id
    engine.dispose()
    down = f"http://127.0.0.1:{free_port()}"  # bound and let go: nothing listens there
    with pytest.raises(SeriesStoreUnavailable, match="did not answer"):
        VictoriaMetrics(down).export('lagscope_raw_commits_per_s{instance_id="1"}', 0, 1000)
    with api_server(url, series_url=down) as api, api.client() as client:
        answer = client.get(
            "/api/v1/series", params={"metric": "commits_per_s", "instance_id": instance_id}
        )
    assert answer.status_code == 503, answer.text
    assert answer.json()["title"] == "SeriesStoreUnavailable"
    assert down in answer.json()["detail"]


def one_poll(row: dict[str, Any]) -> NamedTick:
    """One channel's poll as the owner hands it to the writer."""
    return NamedTick({}, {}, {row["channel_id"]: row}, {}, {})


def test_raw_ranges_reach_as_far_back_as_the_raw_series_store_keeps_them(
    tmp_path: Path, victoria: str
):
    """With the SQL store keeping one day of raw rows and VictoriaMetrics thirty, a ten-minute
    range two days ago is read at poll resolution from VictoriaMetrics; told nothing of its
    retention, the explorer keeps to the SQL's and gives minute buckets at best."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    with make_session_factory(engine)() as session, session.begin():
        _, named = make_cluster(session, "c", [("r1", 3307)])
        channel = Channel(instance_id=named["r1"].id, name="", first_seen_at=datetime.now(UTC))
        session.add(channel)
        session.flush()
        channel_id = channel.id
    engine.dispose()
    start = whole_ms(datetime.now(UTC) - timedelta(days=2))
    polls = [start + timedelta(seconds=k, microseconds=k * 1001) for k in range(30)]
    lines = [
        {"channel_id": channel_id, "ts": at, "lag_s": k / 4, "verdict": 1}
        for k, at in enumerate(polls)
    ]
    body = encode([line for tick in lines for line in series_lines(one_poll(tick))])
    written = httpx.post(f"{victoria}/influx/write?precision=ms", content=body, headers=HEADERS)
    assert written.status_code == 204, written.text
    ask = {"metric": "lag_s", "channel_id": channel_id, "start": start.isoformat(),
           "end": (start + timedelta(minutes=10)).isoformat(), "points": 2000}  # fmt: skip
    kept = {"series_url": victoria, "retention_raw_days": 1.0}
    with (
        api_server(url, **kept, series_retention_raw_days=30.0) as far,
        api_server(url, **kept) as near,
    ):
        wait_until(
            lambda: len(explorer(far, ask)[0]["points"]) == 30,
            timeout_s=30,
            message="the old polls read from VictoriaMetrics",
        )
        (series,) = explorer(far, ask)
        assert series["resolution"] == "raw"
        assert [p["last"] for p in series["points"]] == [k / 4 for k in range(30)]
        (rolled,) = explorer(near, ask)
        assert rolled["resolution"] == "1m"  # minute buckets (of the same polls)
        assert sum(p["n"] for p in rolled["points"]) == 30
