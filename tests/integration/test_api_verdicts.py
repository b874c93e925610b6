"""``GET /clusters/{id}/verdicts`` over hand-made samples: runs per channel, raw and rolled up.

Channel A: caught up for 10 min, stopped for 5 min (lag NULL), caught up again; channel B:
apply-bound throughout. One-minute rollups before that say A was receive-bound for 20 minutes.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert

from lagscope.analysis.codes import Verdict
from lagscope.models import Channel, Sample, SampleRollup1m
from tests.factories import make_cluster

from .api_stack import ApiServer, api_server, sqlite_url

pytestmark = pytest.mark.integration

# Within the raw retention (3 days) of today: older raw samples are read from the rollups.
END = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=1)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Iterator[tuple[ApiServer, int, int, int]]:
    with api_server(sqlite_url(tmp_path_factory.mktemp("verdicts"))) as api:
        with api.sessions() as session, session.begin():
            cluster, named = make_cluster(session, "runs", [("r1", 3307)], password="")
            r1 = named["r1"]
            seen = END - timedelta(days=3)
            a, b = Channel(name="", first_seen_at=seen), Channel(name="b", first_seen_at=seen)
            r1.channels.extend([a, b])
            session.flush()
            rows: list[dict[str, Any]] = []
            for second in range(1800):  # [END − 30 min, END), one sample a second
                ts = END - timedelta(minutes=30) + timedelta(seconds=second)
                stopped = 600 <= second < 900
                verdict = Verdict.STOPPED if stopped else Verdict.CAUGHT_UP
                rows.append(_sample(a.id, ts, verdict, None if stopped else 0.1))
                rows.append(_sample(b.id, ts, Verdict.APPLY_BOUND, 5.0))
            session.execute(insert(Sample), rows)
            rollups = [
                {"channel_id": a.id, "bucket": END - timedelta(hours=2) + timedelta(minutes=m),
                 "samples": 60, "caught_up": 0, "last_verdict": Verdict.RECEIVE_BOUND}
                for m in range(20)
            ]  # fmt: skip
            session.execute(insert(SampleRollup1m), rollups)
            ids = cluster.id, a.id, b.id
        yield api, *ids


def _sample(channel_id: int, ts: datetime, verdict: Verdict, lag: float | None) -> dict[str, Any]:
    return {"channel_id": channel_id, "ts": ts, "verdict": verdict, "lag_s": lag,
            "disagreement": False}  # fmt: skip


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def test_raw_runs_show_the_stop(store):
    api, cluster_id, a, b = store
    with api.client() as c:
        got = c.get(
            f"/api/v1/clusters/{cluster_id}/verdicts",
            params={"start": (END - timedelta(minutes=30)).isoformat(), "end": END.isoformat()},
        )
    assert got.status_code == 200, got.text
    body = got.json()
    by_channel = {ch["channel_id"]: ch for ch in body["channels"]}
    assert by_channel[a]["resolution"] == "raw"
    runs = [(r["verdict"], r["start"], r["end"]) for r in by_channel[a]["runs"]]
    assert [v for v, _, _ in runs] == ["caught_up", "stopped", "caught_up"]
    stop_start, stop_end = runs[1][1], runs[1][2]
    # Buckets are a few seconds wide: the stop's edges are within one bucket of the truth.
    width = by_channel[a]["bucket_ms"]
    assert abs(stop_start - ms(END - timedelta(minutes=20))) <= width
    assert abs(stop_end - ms(END - timedelta(minutes=15))) <= width
    assert [r["verdict"] for r in by_channel[b]["runs"]] == ["apply_bound"]


def test_rolled_up_runs_and_the_raw_tail(store):
    api, cluster_id, a, _ = store
    with api.client() as c:
        got = c.get(
            f"/api/v1/clusters/{cluster_id}/verdicts",
            params={
                "start": (END - timedelta(hours=3)).isoformat(),
                "end": END.isoformat(),
                "points": 60,
            },
        )
    assert got.status_code == 200, got.text
    runs = {ch["channel_id"]: ch for ch in got.json()["channels"]}[a]
    assert runs["resolution"] == "1m"
    verdicts = [r["verdict"] for r in runs["runs"]]
    assert verdicts[0] == "receive_bound"
    assert "stopped" in verdicts and verdicts[-1] == "caught_up"


def test_unknown_cluster_and_bad_points(store):
    api, cluster_id, _, _ = store
    with api.client() as c:
        assert c.get("/api/v1/clusters/99999/verdicts").status_code == 404
        bad = c.get(f"/api/v1/clusters/{cluster_id}/verdicts", params={"points": 0})
        assert bad.status_code == 422
