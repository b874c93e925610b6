"""Live views over the real pipeline: the lab polled by the real worker, beat and heartbeat
writer, and the API served by uvicorn over the same store.

Checks that status, topology, the SSE stream and /metrics say what the store holds, and that a
stopped SQL thread shows within a few polls. Each test leaves the lab replicating.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from lagscope.analysis.codes import LagSource, Verdict
from lagscope.analysis.eta import eta_from_json
from lagscope.db import make_engine, make_session_factory
from lagscope.history.status import FEED_BATCH, FEED_LOOKBACK, eta_band, open_feed
from lagscope.inventory import instances as inventory
from lagscope.models import Channel, Instance, ParamValue, Sample
from lagscope.models.types import from_micros, to_micros
from lagscope.store_setup import upgrade
from tests.factories import secret_box

from .api_stack import ApiServer, sqlite_url
from .pipeline_stack import Pipeline
from .waiting import wait_until

pytestmark = pytest.mark.integration

REPLICAS = {"replica1": "near", "replica2": "far"}


@pytest.fixture(scope="module")
def api_store(pipeline: Pipeline) -> str:
    return pipeline.url


@pytest.fixture
def client(api: ApiServer) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


def status(client: httpx.Client, pipeline: Pipeline) -> dict:
    response = client.get(f"/api/v1/clusters/{pipeline.cluster_id}/status")
    assert response.status_code == 200, response.text
    return response.json()


def channels_by_instance(body: dict) -> dict[str, dict]:
    return {c["instance"]: c for c in body["channels"]}


def all_caught_up(client: httpx.Client, pipeline: Pipeline) -> dict | None:
    body = status(client, pipeline)
    channels = channels_by_instance(body)
    ok = set(channels) == set(REPLICAS) and all(
        c["verdict"] == "caught_up" and c["lag_source"] == "heartbeat" and not c["stale"]
        for c in channels.values()
    )
    return body if ok else None


def newest_ts(pipeline: Pipeline, channel_id: int) -> datetime | None:
    with pipeline.session() as s:
        return s.scalar(select(func.max(Sample.ts)).where(Sample.channel_id == channel_id))


def status_with_the_etas_stored(
    client: httpx.Client, pipeline: Pipeline
) -> tuple[dict, dict[int, dict]] | None:
    """The status, and each channel's ETA as its newest poll stored it (``channels.eta``),
    read in one transaction that still has the status's newest samples as its newest: the ETA
    is rewritten every poll, so a poll in between cannot be told from a wrong ETA."""
    body = status(client, pipeline)
    with pipeline.session() as s:
        etas = {}
        for shown in body["channels"]:
            newest = s.scalar(select(func.max(Sample.ts)).where(Sample.channel_id == shown["id"]))
            if newest != datetime.fromisoformat(shown["sample_at"]):
                return None  # another poll was stored since: ask again
            channel = s.get(Channel, shown["id"])
            assert channel is not None
            etas[shown["id"]] = channel.eta
    return body, etas


def test_status_matches_the_store(client: httpx.Client, pipeline: Pipeline):
    wait_until(lambda: all_caught_up(client, pipeline), timeout_s=20, message="caught up")
    ids = {name: pipeline.channel_id(name) for name in REPLICAS}
    before = {name: newest_ts(pipeline, cid) for name, cid in ids.items() if cid is not None}
    body, etas = wait_until(
        lambda: status_with_the_etas_stored(client, pipeline),
        timeout_s=20,
        message="a status read between two polls",
    )
    assert body["name"] == "lab" and body["stale_after_s"] == 3 * body["poll_interval_s"]
    instances = {i["name"]: i for i in body["instances"]}
    assert {n: (i["role"], i["region"]) for n, i in instances.items()} == {
        "source": ("source", "near"),
        "replica1": ("replica", "near"),
        "replica2": ("replica", "far"),
    }
    for instance in instances.values():
        assert instance["reachable"] is True and not instance["stale"]
        assert instance["last_ok_at"] and instance["last_error"] is None
        assert instance["clock_offset_s"] is not None
        assert instance["clock_resolution_s"] is not None and instance["clock_resolution_s"] > 0
    channels = channels_by_instance(body)
    with pipeline.session() as s:
        for name, shown in channels.items():
            assert shown["id"] == ids[name] and shown["name"] == ""
            at = datetime.fromisoformat(shown["sample_at"])
            assert at >= before[name]  # the newest sample, not an older one
            stored = s.get(Sample, (shown["id"], at))
            assert stored is not None, f"{name}: no stored sample at {at}"
            assert Verdict(stored.verdict).label == shown["verdict"] == "caught_up"
            assert LagSource(stored.lag_source).label == shown["lag_source"] == "heartbeat"
            for key in (
                "lag_s",
                "seconds_behind_source",
                "heartbeat_lag_s",
                "applier_lag_s",
                "trx_behind",
                "not_received",
                "received_not_applied",
                "apply_rate",
                "source_rate",
                "sql_running",
                "relay_log_space",
                "disagreement",
            ):
                assert shown[key] == getattr(stored, key), (name, key)
            assert shown["lag_s"] == shown["heartbeat_lag_s"] and shown["lag_s"] < 5
            assert shown["io_state"] == "yes" and shown["io_running"] is True
            assert shown["trx_behind"] == shown["not_received"] + shown["received_not_applied"]
            # The ETA the poll worked out from its unrounded rates (the sample keeps them to
            # 0.001/s, so an ETA recomputed from the sample may differ in its last digits).
            found = eta_from_json(etas[shown["id"]])
            assert found is not None, name
            expected = eta_band(found)
            assert shown["eta"] == {
                "seconds": expected.seconds,
                "catching_up": expected.catching_up,
                "falling_behind_per_s": expected.falling_behind_per_s,
                "low_s": expected.low_s,
                "high_s": expected.high_s,
                "never": expected.never,
                "basis": expected.basis,
            }


def test_stopped_sql_thread_shows_in_status(lab, client: httpx.Client, pipeline: Pipeline):
    replica = lab.connect("replica1")
    try:
        with replica.cursor() as cur:
            cur.execute("STOP SLAVE SQL_THREAD")

        def stopped() -> dict | None:
            shown = channels_by_instance(status(client, pipeline))["replica1"]
            return shown if shown["verdict"] == "stopped" and not shown["sql_running"] else None

        # A deadline, not a pace: "stopped" needs two polls that a busy box spaces out.
        shown = wait_until(stopped, timeout_s=30, message="replica1 stopped in the status")
        assert shown["io_running"] is True and shown["seconds_behind_source"] is None
        assert channels_by_instance(status(client, pipeline))["replica2"]["sql_running"] is True
    finally:
        with replica.cursor() as cur:
            cur.execute("START SLAVE SQL_THREAD")
        replica.close()
    lab.wait_caught_up(timeout_s=60)
    wait_until(lambda: all_caught_up(client, pipeline), timeout_s=20, message="caught up again")


def test_broken_replication_shows_why(lab, client: httpx.Client, pipeline: Pipeline):
    """A duplicate key stops replica1's applier: the status says broken, and why."""
    replica = lab.connect("replica1")
    try:
        with lab.connect("source") as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS live")
            cur.execute("CREATE TABLE IF NOT EXISTS live.t (id INT PRIMARY KEY)")
        lab.wait_caught_up(timeout_s=30)
        with replica.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("INSERT INTO live.t VALUES (7)")
        with lab.connect("source") as conn, conn.cursor() as cur:
            cur.execute("INSERT INTO live.t VALUES (7)")

        def broken() -> dict | None:
            shown = channels_by_instance(status(client, pipeline))["replica1"]
            return shown if shown["verdict"] == "broken" else None

        shown = wait_until(broken, timeout_s=30, message="replica1 broken in the status")
        assert shown["sql_running"] is False
        assert "Duplicate entry '7'" in (shown["last_sql_error"] or "")
    finally:
        with replica.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("DELETE FROM live.t WHERE id = 7")
            cur.execute("START SLAVE SQL_THREAD")
        replica.close()
    lab.wait_caught_up(timeout_s=60)
    wait_until(lambda: all_caught_up(client, pipeline), timeout_s=20, message="caught up again")
    assert channels_by_instance(status(client, pipeline))["replica1"]["last_sql_error"] is None


def test_topology_has_nodes_with_regions_and_an_edge_per_replica(
    client: httpx.Client, pipeline: Pipeline
):
    wait_until(lambda: all_caught_up(client, pipeline), timeout_s=20, message="caught up")
    response = client.get(f"/api/v1/clusters/{pipeline.cluster_id}/topology")
    assert response.status_code == 200, response.text
    body = response.json()
    nodes = {n["name"]: n for n in body["nodes"]}
    assert {n: (v["role"], v["region"]) for n, v in nodes.items()} == {
        "source": ("source", "near"),
        "replica1": ("replica", "near"),
        "replica2": ("replica", "far"),
    }
    assert all(n["flavor"] == "mariadb" and n["version"] and n["reachable"] for n in nodes.values())
    edges = body["edges"]
    assert len(edges) == 2
    assert {e["source_id"] for e in edges} == {nodes["source"]["id"]}
    assert {e["replica_id"] for e in edges} == {nodes["replica1"]["id"], nodes["replica2"]["id"]}
    # Matched from each replica's own report (server_id): replica2 connects through the proxy,
    # so its source host/port is the proxy's, and only the server_id names the source.
    assert all(e["source_matched"] for e in edges)
    for edge in edges:
        assert edge["verdict"] == "caught_up" and edge["lag_s"] is not None
        assert edge["trx_behind"] == edge["not_received"] + edge["received_not_applied"]


def read_events(response: httpx.Response, count: int, within_s: float) -> list[dict]:
    """The first ``count`` sample events (with their ids), or fail after ``within_s``."""
    events: list[dict] = []
    current: dict = {}
    deadline = time.monotonic() + within_s
    for line in response.iter_lines():
        if line.startswith("id: "):
            current["id"] = int(line[4:])
        elif line.startswith("event: "):
            current["event"] = line[7:]
        elif line.startswith("data: "):
            current["data"] = json.loads(line[6:])
        elif line == "" and current:
            if current.get("event") == "sample":
                events.append(current)
            current = {}
        if len(events) >= count:
            return events
        assert time.monotonic() < deadline, f"{len(events)} sample events in {within_s} s"
    raise AssertionError(f"the stream ended after {len(events)} sample events")


def test_stream_delivers_new_samples_and_resumes(client: httpx.Client, pipeline: Pipeline):
    channel_ids = {pipeline.channel_id(name) for name in REPLICAS}
    params = {"cluster_id": pipeline.cluster_id}
    with client.stream("GET", "/api/v1/stream", params=params, timeout=30) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = read_events(response, 3, within_s=30)  # a deadline: polls are ~1 s apart
    assert {e["data"]["channel_id"] for e in events} <= channel_ids
    for event in events:
        data = event["data"]
        assert set(data) == {
            "channel_id",
            "ts",
            "lag_s",
            "lag_source",
            "verdict",
            "not_received",
            "received_not_applied",
        }
        assert data["verdict"] in {v.label for v in Verdict}
        assert abs(data["ts"] / 1000 - time.time()) < 30
    ids = [e["id"] for e in events]
    assert ids == sorted(ids)
    resume_from = ids[0]
    headers = {"Last-Event-ID": str(resume_from)}
    with client.stream(
        "GET", "/api/v1/stream", params=params, headers=headers, timeout=30
    ) as response:
        resumed = read_events(response, 2, within_s=30)
    # Resumed right after the first event: with the oldest stored sample newer than its id.
    assert all(e["id"] > resume_from for e in resumed)
    with pipeline.session() as s:
        first = s.scalars(
            select(Sample)
            .where(Sample.channel_id.in_(channel_ids), Sample.ts > from_micros(resume_from))
            .order_by(Sample.ts, Sample.channel_id)
            .limit(1)
        ).one()
    assert (resumed[0]["data"]["channel_id"], resumed[0]["data"]["ts"]) == (
        first.channel_id,
        to_micros(first.ts) // 1000,
    )


def test_metrics_exposition_carries_the_labels(client: httpx.Client, pipeline: Pipeline):
    wait_until(lambda: all_caught_up(client, pipeline), timeout_s=20, message="caught up")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    found: dict[str, list] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append(sample)
    lags = {s.labels["server"]: s for s in found["lagscope_lag_seconds"]}
    assert set(lags) == set(REPLICAS)
    for name, sample in lags.items():
        assert sample.labels == {
            "cluster": "lab",
            "server": name,
            "channel": "",
            "region": REPLICAS[name],
        }
        assert 0 <= sample.value < 5
    for family in ("lagscope_verdict", "lagscope_lag_source"):
        ones = [(s.labels["server"], s.labels) for s in found[family] if s.value == 1]
        assert sorted(i for i, _ in ones) == sorted(REPLICAS), family
    current = {
        s.labels["server"]: s.labels["verdict"] for s in found["lagscope_verdict"] if s.value
    }
    assert current == dict.fromkeys(REPLICAS, "caught_up")
    for name in ("lagscope_io_running", "lagscope_sql_running"):
        assert {s.labels["server"]: s.value for s in found[name]} == dict.fromkeys(REPLICAS, 1)
    assert {s.labels["server"]: s.value for s in found["lagscope_up"]} == {
        "source": 1.0,
        "replica1": 1.0,
        "replica2": 1.0,
    }
    assert {s.labels["region"] for s in found["lagscope_poll_round_trip_seconds"]} == {
        "near",
        "far",
    }
    for name in ("lagscope_clock_offset_seconds", "lagscope_last_poll_timestamp_seconds"):
        assert len(found[name]) == 3, name
    # Numbers match the store: the sample each channel's timestamp names.
    sampled = {s.labels["server"]: s.value for s in found["lagscope_last_sample_timestamp_seconds"]}
    trx = {s.labels["server"]: s.value for s in found["lagscope_trx_behind"]}
    with pipeline.session() as s:
        for name, at_s in sampled.items():
            # A float of epoch seconds keeps microseconds only to within a few.
            around = (from_micros(round(at_s * 1e6) - 5), from_micros(round(at_s * 1e6) + 5))
            stored = s.scalars(
                select(Sample).where(
                    Sample.channel_id == pipeline.channel_id(name), Sample.ts.between(*around)
                )
            ).one()
            assert lags[name].value == stored.lag_s and trx[name] == stored.trx_behind
    # Each server's parameters as stored: numbers as gauges, text as info.
    parameters = {
        (s.labels["server"], s.labels["parameter"]): s.value for s in found["lagscope_parameter"]
    }
    texts = {
        (s.labels["server"], s.labels["parameter"]): s.labels["value"]
        for s in found["lagscope_parameter_info"]
    }
    with pipeline.session() as s:
        stored_params = s.execute(
            select(Instance.name, ParamValue.name, ParamValue.value).join(Instance)
        ).all()
    assert stored_params
    for server, name, value in stored_params:
        if value is None:
            assert (server, name) not in parameters and (server, name) not in texts
        elif value in ("ON", "OFF"):
            assert parameters[(server, name)] == float(value == "ON"), (server, name)
        elif _number(value) is not None:
            assert parameters[(server, name)] == _number(value), (server, name)
        else:
            assert texts[(server, name)] == value, (server, name)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def test_every_live_endpoint_needs_a_token(api: ApiServer, pipeline: Pipeline):
    cid = pipeline.cluster_id
    with api.client(token="") as anonymous:
        for path in (
            f"/api/v1/clusters/{cid}/status",
            f"/api/v1/clusters/{cid}/topology",
            f"/api/v1/stream?cluster_id={cid}",
            "/metrics",
        ):
            response = anonymous.get(path)
            assert response.status_code == 401, path
            assert response.headers["www-authenticate"] == "Bearer"
        assert anonymous.get("/healthz").status_code == 200
    with api.client() as c:
        assert c.get("/api/v1/clusters/9999/status").status_code == 404
        assert c.get("/api/v1/stream", params={"cluster_id": 9999}).status_code == 404


def test_feed_pages_a_backlog_and_delivers_a_late_commit_once(tmp_path):
    """The SSE feed over a real store without the lab: a resume's backlog comes in batches,
    and a tick committed after a newer one (two workers) is still sent, exactly once."""
    url = sqlite_url(tmp_path)
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    start = datetime(2024, 1, 1, tzinfo=UTC)

    def add(session, channel_id: int, at: datetime) -> None:
        session.add(Sample(channel_id=channel_id, ts=at, verdict=0, lag_s=0.5))

    try:
        with sessions() as s, s.begin():
            cluster = inventory.create_cluster(s, "feed")
            replica = inventory.add_instance(s, secret_box(), cluster, "r", "h", 1, "u", "p")
            replica.channels.extend(Channel(name=n, first_seen_at=start) for n in ("a", "b"))
            s.flush()
            a, b = (c.id for c in replica.channels)
            for k in range(FEED_BATCH + 500):
                add(s, a if k % 2 else b, start + timedelta(milliseconds=10 * (k + 1)))
            cluster_id = cluster.id
        with sessions() as s:
            feed = open_feed(s, cluster_id, start)
            first = feed.poll(s)
            assert len(first) == FEED_BATCH and feed.more
            second = feed.poll(s)
            assert len(second) == 500 and not feed.more
            assert [x.ts for x in first + second] == sorted(x.ts for x in first + second)
            assert feed.poll(s) == []
            newest = feed.cursor
        late = newest - timedelta(seconds=1, microseconds=3)  # between two stored samples
        with sessions() as s, s.begin():
            add(s, a, late)  # committed late, inside the look-back: sent
            add(s, b, newest - FEED_LOOKBACK - timedelta(microseconds=3))  # too late: not sent
            add(s, b, newest + timedelta(seconds=1))
        with sessions() as s:
            delivered = feed.poll(s)
            assert [(x.channel_id, x.ts) for x in delivered] == [
                (a, late),
                (b, newest + timedelta(seconds=1)),
            ]
            assert delivered[0].verdict == "caught_up" and delivered[0].lag_s == 0.5
            assert feed.poll(s) == []
            assert open_feed(s, cluster_id, None).cursor == newest + timedelta(seconds=1)
    finally:
        engine.dispose()
