"""The lag check over HTTP, on polls written into the store by the test: 200 / 429 / 503, the
hysteresis, stale data, check tokens (scope, revocation, Basic for gh-ost, refused elsewhere),
malformed thresholds, the CLI, demo mode, an unreachable store — and that a burst of checks
opens no connection to any monitored server (the instances are the lab's servers; no worker
runs, so only a check could connect to them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, select

from lagscope.analysis.codes import LagSource, Verdict, io_state_code
from lagscope.collectors.snapshot import IoState
from lagscope.inventory import instances as inventory
from lagscope.models import Channel, Cluster, Instance, Sample
from lagscope.security import users
from lagscope.security.secret_box import store_box

from .api_stack import ApiServer, api_server, sqlite_url

pytestmark = pytest.mark.integration

REPLICAS = ("replica1", "replica2")


@pytest.fixture(scope="module")
def api_settings() -> dict[str, Any]:
    return {"check_max_lag_s": 5.0, "check_recover_ratio": 0.8, "check_window_polls": 10}


@pytest.fixture(scope="module")
def shop(api: ApiServer, lab) -> dict[str, int]:
    """Cluster "shop" (the lab's servers, polled by nobody) and "other"; their ids."""
    box = store_box(api.sessions, api.settings.secret_key)
    user, password = lab.credentials.monitor
    ids = {}
    with api.sessions() as session, session.begin():
        for name in ("shop", "other"):
            cluster = inventory.create_cluster(session, name, poll_interval_s=1.0)
            for server in ("source", *REPLICAS):
                where = lab.server(server)
                role = "source" if server == "source" else "replica"
                inventory.add_instance(
                    session, box, cluster, server, where.host, where.port, user, password, role, ""
                )
            session.flush()
            ids[name] = cluster.id
    return ids


def seed(
    api: ApiServer,
    replica: str,
    lags: list[float | None],
    cluster: str = "shop",
    newest_age_s: float = 0.1,
    **newest: Any,
) -> None:
    """Replace the replica's polls with ``lags`` one second apart, the newest ``newest_age_s``
    old (its other columns changed by ``newest``); the instance polled then too."""
    now = datetime.now(UTC)
    with api.sessions() as session, session.begin():
        instance = session.scalars(
            select(Instance).join(Cluster).where(Cluster.name == cluster, Instance.name == replica)
        ).one()
        channel = session.scalars(select(Channel).where(Channel.instance_id == instance.id)).first()
        if channel is None:
            channel = Channel(instance_id=instance.id, name="", first_seen_at=now)
            session.add(channel)
            session.flush()
        session.execute(delete(Sample).where(Sample.channel_id == channel.id))
        for i, lag in enumerate(lags):
            at = now - timedelta(seconds=newest_age_s + len(lags) - 1 - i)
            row = {
                "verdict": Verdict.CAUGHT_UP if (lag or 0) < 1 else Verdict.APPLY_BOUND,
                "lag_s": lag,
                "lag_source": LagSource.HEARTBEAT,
                "io_state": io_state_code(IoState.YES),
                "sql_running": True,
            }
            if i == len(lags) - 1:
                row.update(newest)
            session.add(Sample(channel_id=channel.id, ts=at, **row))
        instance.last_polled_at = now - timedelta(seconds=newest_age_s)


def all_usable(api: ApiServer, cluster: str = "shop") -> None:
    for replica in REPLICAS:
        seed(api, replica, [0.2, 0.1, 0.0], cluster=cluster)


@pytest.fixture(scope="module")
def admin(api: ApiServer) -> Iterator[httpx.Client]:
    with api.client() as client:
        yield client


@pytest.fixture(scope="module")
def shop_token(admin: httpx.Client, shop: dict[str, int]) -> str:
    made = admin.post("/api/v1/check-tokens", json={"name": "haproxy", "clusters": ["shop"]})
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


def check(api: ApiServer, path: str, token: str, **params: Any) -> httpx.Response:
    with api.client(token) as client:
        return client.get(f"/api/v1/check/{path}", params=params)


def test_usable_lagging_and_recovering(api: ApiServer, shop_token: str) -> None:
    all_usable(api)
    ok = check(api, "shop/replica1", shop_token)
    assert ok.status_code == 200, ok.text
    body = ok.json()
    assert body["verdict"] == "usable" and body["usable"] is True
    assert body["lag_s"] == 0.0 and body["lag_source"] == "heartbeat"
    assert (body["max_lag_s"], body["recover_lag_s"]) == (5.0, 4.0)  # the settings' defaults
    assert body["cluster"] == "shop" and body["replica"] == "replica1" and body["channel"] == ""
    assert 0 <= body["age_s"] < 3 and ok.headers["cache-control"] == "no-store"

    seed(api, "replica1", [0.0, 3.0, 7.5])
    lagging = check(api, "shop/replica1", shop_token)
    assert lagging.status_code == 429 and lagging.json()["verdict"] == "lagging"
    assert lagging.json()["reason"] == "lag 7.5 s is over max_lag 5 s"
    assert check(api, "shop/replica1", shop_token, max_lag=10).status_code == 200

    # Down to 4.5 s: under max_lag, not yet under recover_lag since it was over: still 429.
    seed(api, "replica1", [7.5, 6.0, 4.5])
    recovering = check(api, "shop/replica1", shop_token)
    assert recovering.status_code == 429 and recovering.json()["verdict"] == "recovering"
    assert check(api, "shop/replica1", shop_token, recover_lag=4.5).status_code == 200
    seed(api, "replica1", [7.5, 6.0, 4.5, 3.9, 4.6])  # came down to 3.9 s, then 4.6 s is fine
    assert check(api, "shop/replica1", shop_token).status_code == 200


@pytest.mark.parametrize(
    ("newest", "verdict"),
    [
        ({"sql_running": False, "lag_s": None, "verdict": Verdict.STOPPED}, "stopped"),
        ({"io_state": io_state_code(IoState.NO), "verdict": Verdict.STOPPED}, "stopped"),
        ({"sql_running": False, "verdict": Verdict.BROKEN}, "broken"),
        ({"io_state": None, "sql_running": None, "lag_s": None}, "unreachable"),
    ],
)
def test_replication_not_running_is_429_whatever_the_lag(
    api: ApiServer, shop_token: str, newest: dict[str, Any], verdict: str
) -> None:
    seed(api, "replica2", [0.0, 0.0, 0.0], **newest)
    answer = check(api, "shop/replica2", shop_token)
    assert (answer.status_code, answer.json()["verdict"]) == (429, verdict), answer.text


def test_stale_or_never_polled_is_503_never_healthy(api: ApiServer, shop_token: str) -> None:
    seed(api, "replica1", [0.0, 0.0, 0.0], newest_age_s=3.5)  # > 3 polls of 1 s ago
    stale = check(api, "shop/replica1", shop_token)
    assert (stale.status_code, stale.json()["verdict"]) == (503, "stale"), stale.text
    assert stale.json()["age_s"] >= 3.5
    seed(api, "replica1", [0.0, 0.0, 0.0], newest_age_s=600)  # older than the whole window
    stale = check(api, "shop/replica1", shop_token)
    assert (stale.status_code, stale.json()["verdict"]) == (503, "stale"), stale.text
    assert stale.json()["sample_at"] is not None  # when the last poll was, read apart
    # The source has no channel; never polled: Lagscope cannot say anything about it.
    never = check(api, "shop/source", shop_token)
    assert (never.status_code, never.json()["verdict"]) == (503, "not_polled"), never.text


def test_the_cluster_check_is_200_only_if_every_replica_is_usable(
    api: ApiServer, shop_token: str
) -> None:
    all_usable(api)
    every = check(api, "shop", shop_token, max_lag=2)
    assert every.status_code == 200, every.text
    assert [r["replica"] for r in every.json()["replicas"]] == list(REPLICAS)
    assert every.json()["max_lag_s"] == 2.0 and every.json()["recover_lag_s"] == 1.6
    seed(api, "replica2", [0.0, 1.0, 2.5])
    one = check(api, "shop", shop_token, max_lag=2)
    assert one.status_code == 429 and one.json()["verdict"] == "lagging"
    assert one.json()["reason"].startswith("replica2: lag 2.5 s")
    seed(api, "replica2", [0.0, 0.0, 0.0], newest_age_s=10)
    assert check(api, "shop", shop_token).status_code == 503
    seed(api, "replica1", [0.0, 9.0])  # known unusable wins over cannot judge
    assert check(api, "shop", shop_token).json()["verdict"] == "lagging"
    with api.client(shop_token) as client:  # HEAD, as gh-ost sends it: same status, no body
        head = client.head("/api/v1/check/shop")
    assert head.status_code == 429 and head.content == b""


def test_cause_and_eta_of_an_open_episode(api: ApiServer, shop_token: str) -> None:
    seed(api, "replica1", [6.0, 7.0, 8.0])
    since = datetime.now(UTC) - timedelta(seconds=3)
    with api.sessions() as session, session.begin():
        channel = session.scalars(
            select(Channel).join(Instance).join(Cluster)
            .where(Cluster.name == "shop", Instance.name == "replica1")
        ).one()  # fmt: skip
        channel.episode_id = 1
        channel.current_causes = [
            {
                "cause": "blocked_by_session",
                "since": since.timestamp(),
                "confidence": 0.9,
                "sentence": "session 42 of app@10.0.0.9 holds a lock",
                "evidence": {"user": "app"},
            }
        ]
        channel.eta = {"seconds": 12.5, "catching_up": True}
    body = check(api, "shop/replica1", shop_token).json()
    assert body["cause"]["cause"] == "blocked_by_session" and body["cause"]["words"]
    assert "sentence" not in body["cause"] and "10.0.0.9" not in json.dumps(body)
    assert body["eta_s"] == 12.5
    with api.sessions() as session, session.begin():
        channel = session.get(Channel, channel.id)
        assert channel is not None
        channel.episode_id, channel.current_causes, channel.eta = None, [], None


def test_names_or_ids(api: ApiServer, shop: dict[str, int], shop_token: str) -> None:
    all_usable(api)
    with api.sessions() as session:
        replica_id = session.scalar(
            select(Instance.id).where(
                Instance.cluster_id == shop["shop"], Instance.name == "replica1"
            )
        )
    assert check(api, f"{shop['shop']}/{replica_id}", shop_token).json()["replica"] == "replica1"
    missing = check(api, "shop/replica9", shop_token)
    assert missing.status_code == 404 and "replica9" in missing.json()["detail"]


def test_a_token_sees_its_clusters_only_and_learns_nothing_of_others(
    api: ApiServer, shop: dict[str, int], shop_token: str
) -> None:
    all_usable(api, "other")
    mine = check(api, "shop/replica1", shop_token)
    assert mine.status_code in (200, 429, 503)
    for ref in ("other", str(shop["other"]), "no-such-cluster"):
        for path in (ref, f"{ref}/replica1"):
            refused = check(api, path, shop_token)
            assert refused.status_code == 404, refused.text
            assert refused.json()["detail"] == f"cluster {ref!r} not found"
    # A check token is no API token: every other route refuses it.
    with api.client(shop_token) as client:
        assert client.get("/api/v1/clusters").status_code == 401
        assert client.get(f"/api/v1/clusters/{shop['shop']}/status").status_code == 401
        assert client.get("/api/v1/check-tokens").status_code == 401
        assert client.get("/metrics").status_code == 401


def test_basic_credentials_for_gh_ost(api: ApiServer, shop_token: str) -> None:
    all_usable(api)
    # What Go's client sends for http://check:<token>@host/… (gh-ost's --throttle-http).
    url = f"{api.url}/api/v1/check/shop"
    assert httpx.get(url, auth=("check", shop_token)).status_code == 200
    assert httpx.head(url, auth=("", shop_token)).status_code == 200
    assert httpx.get(url, auth=("check", "lgc_wrong")).status_code == 401
    malformed = httpx.get(url, headers={"Authorization": "Basic %%%"})
    assert malformed.status_code == 401
    assert httpx.get(url).status_code == 401


def test_tokens_are_made_listed_and_revoked_by_admins(
    api: ApiServer, admin: httpx.Client, shop: dict[str, int]
) -> None:
    made = admin.post(
        "/api/v1/check-tokens", json={"name": "proxysql", "clusters": ["shop", str(shop["other"])]}
    )
    assert made.status_code == 201 and made.headers["cache-control"] == "no-store"
    created = made.json()
    token = created["token"]
    assert token.startswith("lgc_") and created["clusters"] == ["shop", "other"]
    listed = {t["id"]: t for t in admin.get("/api/v1/check-tokens").json()}
    assert listed[created["id"]]["clusters"] == ["shop", "other"]
    assert all("token" not in t for t in listed.values())
    with api.sessions() as session:  # stored hashed, never the token itself
        raw = session.connection().exec_driver_sql("SELECT * FROM check_tokens").all()
    assert token not in repr(raw)
    assert check(api, "other", token).status_code in (200, 429, 503)
    used = {t["id"]: t for t in admin.get("/api/v1/check-tokens").json()}[created["id"]]
    assert used["last_used_at"] is not None

    assert admin.delete(f"/api/v1/check-tokens/{created['id']}").status_code == 204
    revoked = check(api, "shop", token)
    assert (
        revoked.status_code == 401 and revoked.json()["detail"] == "unknown or revoked check token"
    )
    assert admin.delete(f"/api/v1/check-tokens/{created['id']}").status_code == 404
    assert created["id"] not in {t["id"] for t in admin.get("/api/v1/check-tokens").json()}

    bad = admin.post("/api/v1/check-tokens", json={"name": "x", "clusters": ["nope"]})
    assert bad.status_code == 422 and "nope" in bad.json()["detail"]
    assert admin.post("/api/v1/check-tokens", json={"name": "x", "clusters": []}).status_code == 422


def test_viewers_may_check_but_not_make_tokens(api: ApiServer, shop: dict[str, int]) -> None:
    all_usable(api)
    with api.sessions() as session, session.begin():
        viewer = users.create_user(session, "viewer1", "a-long-password-1", "viewer")
        token = users.issue_token(session, viewer, "script")
    assert check(api, "shop/replica1", token).status_code == 200
    with api.client(token) as client:
        refused = client.post("/api/v1/check-tokens", json={"name": "x", "clusters": ["shop"]})
        assert refused.status_code == 403
        assert client.get("/api/v1/check-tokens").status_code == 403


@pytest.mark.parametrize(
    "params",
    [
        {"max_lag": "abc"},
        {"max_lag": "0"},
        {"max_lag": "-1"},
        {"max_lag": "nan"},
        {"max_lag": "inf"},
        {"max_lag": "1e12"},
        {"recover_lag": "-0.5"},
        {"max_lag": "2", "recover_lag": "3"},
    ],
)
def test_malformed_thresholds_are_422(
    api: ApiServer, shop_token: str, params: dict[str, str]
) -> None:
    answer = check(api, "shop/replica1", shop_token, **params)
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"] == "application/problem+json"


def test_a_burst_of_checks_connects_to_no_monitored_server(
    api: ApiServer, lab, shop_token: str
) -> None:
    """The instances are the lab's servers. Each server's own count of connection attempts,
    read over one connection kept open, does not move across 300 checks."""
    all_usable(api)
    # The polls seeded stay fresh however long 300 checks take on a busy machine (stale after
    # three intervals): a 503 here would say nothing about connections.
    set_interval(api, "shop", 600.0)
    watchers = {name: lab.connect(name) for name in ("source", *REPLICAS)}

    def attempts() -> dict[str, int]:
        counts = {}
        for name, conn in watchers.items():
            with conn.cursor() as cur:
                cur.execute("SHOW GLOBAL STATUS LIKE 'Connections'")
                counts[name] = int(cur.fetchone()[1])
        return counts

    try:
        before = attempts()
        with api.client(shop_token) as client:
            for i in range(100):
                for path in ("shop", "shop/replica1", "shop/replica2"):
                    assert client.get(f"/api/v1/check/{path}").status_code == 200, i
        assert attempts() == before
    finally:
        for conn in watchers.values():
            conn.close()
        set_interval(api, "shop", 1.0)


def set_interval(api: ApiServer, cluster: str, seconds: float) -> None:
    with api.sessions() as session, session.begin():
        found = session.scalars(select(Cluster).where(Cluster.name == cluster)).one()
        found.poll_interval_s = seconds


def run_cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LAGSCOPE_DATABASE_URL": url, "LAGSCOPE_DEMO": "1"}
    return subprocess.run(
        [sys.executable, "-m", "lagscope", "check-token", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_cli_makes_lists_and_revokes_tokens(api: ApiServer, shop: dict[str, int]) -> None:
    all_usable(api)
    url = api.settings.database_url
    made = run_cli(url, "create", "--cluster", "shop", "--name", "gh-ost")
    assert made.returncode == 0, made.stderr
    created = json.loads(made.stdout)
    assert created["clusters"] == ["shop"] and created["created_by"] == "cli"
    assert check(api, "shop", created["token"]).status_code == 200
    listed = [json.loads(line) for line in run_cli(url, "list").stdout.splitlines()]
    assert created["id"] in {t["id"] for t in listed} and "token" not in listed[0]
    assert run_cli(url, "revoke", str(created["id"])).returncode == 0
    assert check(api, "shop", created["token"]).status_code == 401
    again = run_cli(url, "revoke", str(created["id"]))
    assert again.returncode == 2 and "not found" in again.stderr
    unknown = run_cli(url, "create", "--cluster", "nope")
    assert unknown.returncode == 2 and "nope" in unknown.stderr


def test_demo_mode_checks_from_this_machine_without_a_token(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    store = sqlite_url(tmp_path_factory.mktemp("check-demo"))
    with api_server(store, demo=True) as demo:
        with demo.sessions() as session, session.begin():
            inventory.create_cluster(session, "demo", poll_interval_s=1.0)
        answer = httpx.get(f"{demo.url}/api/v1/check/demo")
        assert (answer.status_code, answer.json()["verdict"]) == (503, "no_replicas")
        with httpx.Client(base_url=demo.url) as client:  # and the admin's routes, as elsewhere
            made = client.post("/api/v1/check-tokens", json={"name": "n", "clusters": ["demo"]})
        assert made.status_code == 201 and made.json()["created_by"] == "demo"


def test_an_unreachable_store_is_503(api: ApiServer, shop_token: str) -> None:
    """The store's file replaced by a directory: nothing can be read, so nothing is judged."""
    all_usable(api)
    path = Path(api.settings.database_url.removeprefix("sqlite:///"))
    moved = path.with_name("moved")
    moved.mkdir()
    engine = api.sessions.kw["bind"]
    engine.dispose()
    for part in path.parent.glob(path.name + "*"):
        shutil.move(part, moved / part.name)
    path.mkdir()
    try:
        answer = check(api, "shop/replica1", shop_token)
        assert answer.status_code == 503, answer.text
        assert answer.json()["title"] == "StoreUnavailable"
    finally:
        path.rmdir()
        for part in moved.iterdir():
            shutil.move(part, path.parent / part.name)
        moved.rmdir()
        engine.dispose()
    assert check(api, "shop/replica1", shop_token).status_code == 200
