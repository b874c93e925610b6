"""``GET /api/v1/series`` over real HTTP, on SQLite, a throwaway PostgreSQL and MariaDB.

The store holds hand-made rows, written through ``api.sessions``, that say which table they came
from by their value: channel A's lag is 1 s in raw samples (with one 500 s spike), 2 s in the
1-minute rollups (one minute with a 900 s max) and 3 s in the 1-hour rollups (one hour with a
700 s max). ``E`` is the last full hour before the module started:

    raw samples, every second   [E − 1 h, E)          channels A, B (1 s) and C (4 s)
    1-minute rollups            [E − 2 days, E − 1 h)  channels A, B
    1-hour rollups              [E − 90 days, E − 1 h) channels A, B
    instance samples, every 10 s [E − 1 h, E)          replica r1 (round trip 1 ms, one 250 ms)

So a range's answer shows which table was read, that the rollups' missing tail was read from the
finer tables, and that spikes survive as maxima however wide the buckets.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import URL, insert

from lagscope.analysis.codes import Verdict
from lagscope.api.schemas.series import SeriesResponse
from lagscope.history import series as series_service
from lagscope.lab import Lab
from lagscope.models import Channel, InstanceSample, Sample, SampleRollup1h, SampleRollup1m
from tests.factories import make_cluster

from .api_stack import ApiServer, api_server, sqlite_url
from .postgres import start_postgres

pytestmark = pytest.mark.integration

HOUR, DAY = timedelta(hours=1), timedelta(days=1)
RAW_SPIKE_AT = HOUR / 2  # before E
MINUTE_SPIKE_AT = 12 * HOUR
HOUR_SPIKE_AT = 10 * DAY


@dataclass(frozen=True)
class Store:
    api: ApiServer
    end: datetime  # E
    a: int
    b: int
    c: int
    r1: int


def write_fixture(api: ApiServer, end: datetime) -> Store:
    with api.sessions() as session, session.begin():
        servers = [("src", 3306, "source"), ("r1", 3307), ("r2", 3308)]
        _, named = make_cluster(session, "series", servers, password="")
        r1, r2 = named["r1"], named["r2"]
        seen = end - 800 * DAY
        a, c = Channel(name="", first_seen_at=seen), Channel(name="east", first_seen_at=seen)
        b = Channel(name="", first_seen_at=seen)
        r1.channels.extend([a, c])
        r2.channels.append(b)
        session.flush()
        raw: list[dict[str, Any]] = []
        for second in range(3600):
            ts = end - HOUR + timedelta(seconds=second)
            spike = ts == end - RAW_SPIKE_AT
            for channel, lag in ((a, 500.0 if spike else 1.0), (b, 1.0), (c, 4.0)):
                raw.append(sample(channel.id, ts, lag))
        session.execute(insert(Sample), raw)
        for model, step, since, spike_at, lag in (
            (SampleRollup1m, timedelta(minutes=1), 2 * DAY, MINUTE_SPIKE_AT, 2.0),
            (SampleRollup1h, HOUR, 90 * DAY, HOUR_SPIKE_AT, 3.0),
        ):
            rows = []
            bucket = end - since
            while bucket < end - HOUR:
                peak = lag + (900.0 if model is SampleRollup1m else 697.0)
                for channel in (a, b):
                    spiky = channel is a and bucket == end - spike_at
                    rows.append(rollup(channel.id, bucket, step, lag, peak if spiky else lag))
                bucket += step
            session.execute(insert(model), rows)
        session.execute(
            insert(InstanceSample),
            [
                {
                    "instance_id": r1.id,
                    "ts": end - HOUR + timedelta(seconds=s),
                    "reachable": True,
                    "round_trip_s": 0.25 if s == 1800 else 0.001,
                }
                for s in range(0, 3600, 10)
            ],
        )
        return Store(api, end, a.id, b.id, c.id, r1.id)


def sample(channel_id: int, ts: datetime, lag: float) -> dict[str, Any]:
    verdict = Verdict.CAUGHT_UP if lag < 2 else Verdict.APPLY_BOUND
    return {"channel_id": channel_id, "ts": ts, "verdict": verdict, "lag_s": lag,
            "apply_rate": 100.0, "disagreement": False}  # fmt: skip


def rollup(channel_id: int, bucket: datetime, step: timedelta, lag: float, peak: float) -> dict:
    samples = int(step.total_seconds())
    return {"channel_id": channel_id, "bucket": bucket, "samples": samples, "caught_up": 0,
            "last_verdict": Verdict.APPLY_BOUND, "lag_min": lag, "lag_avg": lag, "lag_max": peak,
            "lag_last": lag, "apply_rate_avg": 100.0}  # fmt: skip


@contextmanager
def mariadb_store(lab: Lab) -> Iterator[str]:
    """A database of its own on the lab's MariaDB source, dropped afterwards."""
    name = f"lagscope_series_{secrets.token_hex(4)}"
    source, (user, password) = lab.server("source"), lab.credentials.admin
    admin = lab.connect("source")
    try:
        with admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
        url = URL.create(
            "mysql+pymysql", username=user, password=password, host=source.host,
            port=source.port, database=name, query={"charset": "utf8mb4"},
        )  # fmt: skip
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        admin.close()


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mariadb"])
def store(request, tmp_path_factory) -> Iterator[Store]:
    """Each backend once per module; MariaDB (the lab's source) checks the ``DIV`` switch."""
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    with ExitStack() as stack:
        if request.param == "sqlite":
            url = sqlite_url(tmp_path_factory.mktemp("api-series"))
        elif request.param == "postgresql":
            server = start_postgres()
            stack.callback(server.stop)
            url = server.url
        else:
            url = stack.enter_context(mariadb_store(request.getfixturevalue("lab")))
        api = stack.enter_context(api_server(url))
        yield write_fixture(api, end)


def get(store: Store, since: timedelta, points: int = 500, **params: Any) -> dict[str, Any]:
    query = {
        "metric": "lag_s",
        "start": (store.end - since).isoformat(),
        "end": store.end.isoformat(),
        "points": points,
        **params,
    }
    with store.api.client() as client:
        response = client.get("/api/v1/series", params=query)
    assert response.status_code == 200, response.text
    # The route serializes the service's results itself: hold them to the documented shape.
    SeriesResponse.model_validate(response.json())
    return response.json()


def one(body: dict[str, Any]) -> dict[str, Any]:
    (series,) = body["series"]
    return series


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def test_the_last_hour_reads_raw_samples_and_the_spike_survives(store: Store):
    series = one(get(store, HOUR, channel_id=store.a))
    points = series["points"]
    assert (series["resolution"], series["bucket_ms"], series["note"]) == ("raw", 7215, None)
    assert 495 <= len(points) <= 500
    assert sum(p["n"] for p in points) == 3600
    spiky = [p for p in points if p["max"] == 500.0]
    assert len(spiky) == 1 and spiky[0]["min"] == 1.0 and 1.0 < spiky[0]["avg"] < 500.0
    assert spiky[0]["t"] <= ms(store.end - RAW_SPIKE_AT) < spiky[0]["t"] + 7215
    assert all(p["max"] == 1.0 for p in points if p is not spiky[0])
    assert points[-1]["last"] == 1.0 and points[-1]["t"] < ms(store.end)


def test_few_points_read_a_rollup_and_take_what_it_lacks_from_raw(store: Store):
    # 20 points over an hour ask for ≥ 189 s buckets: the 1-minute table (4-minute buckets),
    # which has nothing after E − 1 h, so every bucket comes from raw samples.
    series = one(get(store, HOUR, points=20, channel_id=store.a))
    assert (series["resolution"], series["bucket_ms"]) == ("1m", 240_000)
    assert len(series["points"]) <= 20
    assert max(p["max"] for p in series["points"]) == 500.0
    assert sum(p["n"] for p in series["points"]) == 3600


def test_a_day_reads_minute_rollups_then_the_raw_tail(store: Store):
    series = one(get(store, DAY, channel_id=store.a))
    points = series["points"]
    assert (series["resolution"], series["bucket_ms"]) == ("1m", 180_000)
    assert len(points) <= 500
    rolled = [p for p in points if p["t"] + 180_000 <= ms(store.end - HOUR)]
    tail = [p for p in points if p["t"] >= ms(store.end - HOUR)]
    assert {p["avg"] for p in rolled} == {2.0} and {p["n"] for p in rolled} == {180}
    assert max(p["max"] for p in rolled) == 902.0  # the minute with a 900 s spike
    assert max(p["max"] for p in tail) == 500.0 and tail[-1]["last"] == 1.0
    assert sum(p["n"] for p in points) == 23 * 3600 + 3600


def test_thirty_days_read_hourly_rollups_in_two_hour_buckets(store: Store):
    series = one(get(store, 30 * DAY, channel_id=store.a))
    points = series["points"]
    assert (series["resolution"], series["bucket_ms"]) == ("1h", 7_200_000)
    assert 355 <= len(points) <= 361
    assert max(p["max"] for p in points) == 700.0
    # The newest bucket holds the hourly rows' end and the raw hour after them.
    assert points[-1]["max"] == 500.0 and points[-1]["last"] == 1.0
    assert sum(p["n"] for p in points) == (30 * 24 - 1) * 3600 + 3600


def test_a_range_the_minute_table_no_longer_keeps_reads_hourly_rollups(store: Store):
    # 2000 points over 70 days ask for 50-minute buckets, but 1-minute rows are kept 60 days.
    series = one(get(store, 70 * DAY, points=2000, channel_id=store.a))
    assert (series["resolution"], series["bucket_ms"]) == ("1h", 3_600_000)
    assert len(series["points"]) == 70 * 24  # 1 h rows for 70 days − 1 h, plus the raw hour


def test_two_years(store: Store):
    series = one(get(store, 730 * DAY, channel_id=store.a))
    assert series["resolution"] == "1h" and len(series["points"]) <= 500
    assert max(p["max"] for p in series["points"]) == 700.0


def test_rollups_that_keep_only_an_average_say_so(store: Store):
    series = one(get(store, DAY, metric="apply_rate", channel_id=store.b))
    assert series["resolution"] == "1m" and "min/max/last" in series["note"]
    old = series["points"][0]
    assert (old["min"], old["avg"], old["max"], old["last"]) == (None, 100.0, None, None)
    assert series["points"][-1]["max"] == 100.0  # the raw tail keeps everything


def test_an_instance_metric_reads_instance_samples(store: Store):
    series = one(get(store, HOUR, metric="round_trip_s", instance_id=store.r1))
    assert (series["channel_id"], series["instance_id"]) == (None, store.r1)
    assert series["resolution"] == "raw" and "poll resolution" in series["note"]
    assert max(p["max"] for p in series["points"]) == 0.25
    assert sum(p["n"] for p in series["points"]) == 360


def test_an_instance_stands_for_its_channels(store: Store):
    body = get(store, HOUR, points=10, instance_id=store.r1, channel_id=store.b)
    by_channel = {s["channel_id"]: s for s in body["series"]}
    assert list(by_channel) == [store.b, store.a, store.c]
    assert {s["instance_id"] for s in body["series"]} == {
        store.r1,
        by_channel[store.b]["instance_id"],
    }
    assert {p["avg"] for p in by_channel[store.c]["points"]} == {4.0}


def test_epoch_milliseconds_and_iso_give_the_same_answer(store: Store):
    iso = get(store, HOUR, channel_id=store.a)
    with store.api.client() as client:
        response = client.get(
            "/api/v1/series",
            params={"metric": "lag_s", "channel_id": store.a,
                    "start": ms(store.end - HOUR), "end": ms(store.end)},
        )  # fmt: skip
    assert response.json() == iso
    assert (iso["start"], iso["end"]) == (ms(store.end - HOUR), ms(store.end))


def test_the_default_range_is_the_last_hour(store: Store):
    with store.api.client() as client:
        body = client.get("/api/v1/series", params={"metric": "lag_s", "channel_id": store.a})
    assert body.status_code == 200
    now = datetime.now(UTC).timestamp() * 1000
    assert body.json()["end"] - body.json()["start"] == 3_600_000
    assert abs(body.json()["end"] - now) < 60_000
    assert one(body.json())["resolution"] == "raw"


def test_several_metrics_in_one_request_answer_as_each_alone(store: Store):
    """``metric`` repeated: each metric's series, in the order asked, as its own request."""
    asked = ["received_not_applied", "lag_s", "apply_rate", "lag_s"]
    body = get(store, HOUR, points=50, metric=asked, instance_id=store.r1)
    assert body["metrics"] == ["received_not_applied", "lag_s", "apply_rate"]
    assert body["metric"] == "received_not_applied"
    channels = [store.a, store.c]
    assert [(s["metric"], s["channel_id"]) for s in body["series"]] == [
        (m, c) for m in body["metrics"] for c in channels
    ]
    for metric in body["metrics"]:
        alone = get(store, HOUR, points=50, metric=metric, instance_id=store.r1)
        assert alone["metrics"] == [metric]
        assert [s for s in body["series"] if s["metric"] == metric] == alone["series"]


def test_channel_and_instance_metrics_together(store: Store):
    body = get(store, HOUR, points=10, metric=["round_trip_s", "lag_s"], instance_id=store.r1)
    kinds = [(s["metric"], s["channel_id"], s["instance_id"]) for s in body["series"]]
    assert kinds == [
        ("round_trip_s", None, store.r1),
        ("lag_s", store.a, store.r1),
        ("lag_s", store.c, store.r1),
    ]


def test_several_metrics_keep_to_one_answers_points(store: Store, monkeypatch):
    # The budget (series × points) is 200,000: more than this fixture's channels can fill, so
    # it is lowered here to what two metrics of two channels at 50 points exceed.
    monkeypatch.setattr(series_service, "MAX_ANSWER_POINTS", 150)
    params = {"metric": ["lag_s", "apply_rate"], "instance_id": store.r1, "points": 50}
    assert "200" not in problem(store, params, 422)["detail"]
    assert "150 points" in problem(store, params, 422)["detail"]
    get(store, HOUR, points=50, metric="lag_s", instance_id=store.r1)  # one metric: 100 points


def problem(store: Store, params: dict[str, Any], status: int) -> dict[str, Any]:
    with store.api.client() as client:
        response = client.get("/api/v1/series", params=params)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    return response.json()


def test_unknown_channels_and_instances_are_404(store: Store):
    body = problem(store, {"metric": "lag_s", "channel_id": [store.a, 99_999]}, 404)
    assert "channel_id" in body["detail"] and "99999" in body["detail"]
    body = problem(store, {"metric": "round_trip_s", "instance_id": 99_999}, 404)
    assert "instance_id" in body["detail"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"metric": "lag"}, "query.metric.0"),
        ({"metric": ["lag_s", "lag"]}, "query.metric.1"),
        ({"points": 0}, "query.points"),
        ({"points": 2001}, "query.points"),
        ({"start": "2026-01-02T00:00:00Z", "end": "2026-01-01T00:00:00Z"}, "query.end"),
        ({"start": "2020-01-01T00:00:00Z", "end": "2026-01-01T00:00:00Z"}, "query.end"),
        ({"start": "2026-01-01T00:00:00"}, "query.start"),
        ({"start": "last tuesday"}, "query.start"),
        ({"channel_id": "one"}, "query.channel_id.0"),
    ],
)
def test_bad_parameters_are_422_naming_the_field(store: Store, params, field):
    body = problem(store, {"metric": "lag_s", "channel_id": store.a, **params}, 422)
    assert field in [e["field"] for e in body["errors"]], body


def test_what_to_chart_must_be_given_and_fit_the_metric(store: Store):
    assert "channel_id" in problem(store, {"metric": "lag_s"}, 422)["detail"]
    wrong = problem(store, {"metric": "round_trip_s", "channel_id": store.a}, 422)
    assert "instance_id" in wrong["detail"]


def test_a_token_is_required(store: Store):
    with store.api.client("") as anonymous:
        response = anonymous.get("/api/v1/series", params={"metric": "lag_s", "channel_id": 1})
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/problem+json")


def test_openapi_names_the_operation_and_its_parameters(store: Store):
    with store.api.client() as client:
        spec = client.get("/api/v1/openapi.json").json()
    operation = spec["paths"]["/api/v1/series"]["get"]
    assert operation["operationId"] == "get_series"
    names = {p["name"] for p in operation["parameters"]}
    assert names == {"metric", "channel_id", "instance_id", "start", "end", "points"}
