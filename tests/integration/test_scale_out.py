"""Several workers on one Redis and one PostgreSQL store: the clusters spread over them, a
worker killed with SIGKILL has its clusters polled by the other, no tick is recorded twice, and
every hole in polling is a recorded gap with its reason. All real: the lab's servers, a
throwaway PostgreSQL, Redis, two ``lagscope worker`` processes and ``lagscope beat``."""

from __future__ import annotations

import itertools
import os
import signal
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.poll_gaps import GAP_FACTOR
from lagscope.analysis.readiness import assess
from lagscope.db import make_engine, make_session_factory
from lagscope.health.facts import gather
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import poll_cluster
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster, Instance, InstanceSample, PollGap
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

from .api_stack import api_server
from .stack import ManagedProcess, RedisServer, lagscope_command, sleep_s
from .waiting import wait_until

pytestmark = pytest.mark.integration

SECRET = "scale-out-test-secret-2c9e7b41d05f8a63-Kp"
CLUSTERS = 6
INTERVAL_S = 1.0
STORE_OUTAGE_S = float(os.environ.get("FAULT_OUTAGE_S", "5"))


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _ticks(sessions: sessionmaker[Session]) -> dict[int, tuple[datetime | None, str | None]]:
    with sessions() as s:
        rows = s.execute(select(Cluster.id, Cluster.last_tick_at, Cluster.last_tick_by)).all()
    return {cid: (at, by) for cid, at, by in rows}


def _worker(name: str, workdir: Path, env: dict[str, str]) -> ManagedProcess:
    argv = lagscope_command(
        "worker", "--concurrency", "2", "--without-gossip", "--without-mingle", "-n", f"{name}@%h"
    )
    worker = ManagedProcess(name, argv, workdir, env)
    worker.wait_for_log("ready.", timeout_s=60)
    return worker


def test_two_workers_share_the_clusters_and_one_takes_over_when_the_other_is_killed(
    lab, postgres, tmp_path
):
    url = postgres.url
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    box = store_box(sessions, SECRET)
    user, password = lab.credentials.monitor
    with sessions() as session, session.begin():
        for n in range(CLUSTERS):
            cluster = inventory.create_cluster(session, f"fleet-{n}", poll_interval_s=INTERVAL_S)
            for name in ("source", "replica1"):
                server = lab.server(name)
                role = "source" if name == "source" else "replica"
                inventory.add_instance(
                    session, box, cluster, name, server.host, server.port, user, password, role
                )
    redis = RedisServer(tmp_path)
    env = {
        **os.environ,
        "LAGSCOPE_DATABASE_URL": url,
        "LAGSCOPE_BROKER_URL": redis.url,
        "LAGSCOPE_SECRET_KEY": SECRET,
        # The Celery engine, pinned: any worker takes any batch beat dispatched, and a frozen
        # beat stops every cluster's polls (the owner engine's takeover, with its leases, is
        # tests/integration/test_poll_owner.py).
        "LAGSCOPE_POLL_ENGINE": "celery",
        "PYTHONUNBUFFERED": "1",
    }
    processes: list[ManagedProcess] = []
    try:
        a, b = _worker("worker-a", tmp_path, env), _worker("worker-b", tmp_path, env)
        processes += [a, b]
        beat = ManagedProcess(
            "beat", lagscope_command("beat", "-s", str(tmp_path / "beat-schedule")), tmp_path, env
        )
        processes.append(beat)
        began = datetime.now(UTC)

        # Both workers take ticks (the clusters are not pinned: any tick goes to a free one).
        seen: set[int] = set()

        def both_polled() -> bool:
            for _, by in _ticks(sessions).values():
                if by:
                    seen.add(_parent(int(by.rsplit(":", 1)[1])) or -1)
            return {a.pid, b.pid} <= seen

        wait_until(both_polled, timeout_s=60, interval_s=0.2, message="both workers polling")

        os.killpg(a.pid, signal.SIGKILL)
        killed_at = datetime.now(UTC)
        a.proc.wait(timeout=30)
        a.stop()
        processes.remove(a)

        # Every cluster is polled again, by the survivor.
        resumed: dict[int, float] = {}

        def all_resumed() -> bool:
            for cid, (at, by) in _ticks(sessions).items():
                if cid in resumed or at is None or at <= killed_at or by is None:
                    continue
                assert _parent(int(by.rsplit(":", 1)[1])) == b.pid, f"polled by {by}"
                resumed[cid] = (at - killed_at).total_seconds()
            return len(resumed) == CLUSTERS

        wait_until(all_resumed, timeout_s=60, interval_s=0.1, message="the survivor's ticks")
        print(f"\ntakeover after SIGKILL (s, per cluster): {sorted(resumed.values())}")

        # A few more ticks by the survivor alone.
        def ticks_since_kill() -> int:
            with sessions() as s:
                return int(
                    s.scalar(
                        select(func.count())
                        .select_from(InstanceSample)
                        .join(Instance)
                        .where(Instance.role == "source", InstanceSample.ts > killed_at)
                    )
                    or 0
                )

        wait_until(
            lambda: ticks_since_kill() >= CLUSTERS * 6, timeout_s=60, message="ticks after kill"
        )
        assert b.alive(), b.log_tail()

        # A hole every cluster has: beat frozen until no cluster has been polled for 2.5
        # intervals, then thawed. Each cluster's next tick records it.
        def silent_for(seconds: float) -> bool:
            cutoff = datetime.now(UTC).timestamp() - seconds
            return all(
                at is not None and at.timestamp() < cutoff for at, _ in _ticks(sessions).values()
            )

        os.kill(beat.pid, signal.SIGSTOP)
        try:
            frozen_at = datetime.now(UTC)
            wait_until(lambda: silent_for(2.5 * INTERVAL_S), timeout_s=30, message="no ticks")
        finally:
            os.kill(beat.pid, signal.SIGCONT)

        def gap_after_freeze() -> set[int]:
            with sessions() as s:
                return set(
                    s.scalars(
                        select(PollGap.cluster_id).where(PollGap.ended_at > frozen_at).distinct()
                    )
                )

        wait_until(lambda: len(gap_after_freeze()) == CLUSTERS, timeout_s=30, message="freeze gaps")

        # The store gone: PostgreSQL stopped for a while, then back with its data. Nothing is
        # recorded meanwhile (no invented values); every cluster ticks again once it is back,
        # and the hole is a recorded gap (checked with the others below).
        paused_at = datetime.now(UTC)
        postgres.pause()
        try:
            look = assess(gather(sessions, redis.url, 5.0, datetime.now(UTC).timestamp()))
            assert look.components[0].name == "store" and look.components[0].state == "down"
            print(f"store down: {look.components[0].message}")
            sleep_s(max(0.0, STORE_OUTAGE_S - (datetime.now(UTC) - paused_at).total_seconds()))
        finally:
            postgres.resume()
        back = datetime.now(UTC)

        def all_back() -> bool:
            return all(at is not None and at > back for at, _ in _ticks(sessions).values())

        wait_until(all_back, timeout_s=30, interval_s=0.1, message="every cluster ticks again")
        took = (datetime.now(UTC) - back).total_seconds()
        print(f"store back: every cluster ticked within {took:.2f} s")
        with sessions() as s:
            store_gaps = s.scalars(select(PollGap).where(PollGap.ended_at > back)).all()
            assert {g.cluster_id for g in store_gaps} == set(_ticks(sessions)), store_gaps
            assert all(g.started_at <= paused_at for g in store_gaps)
            print("store outage gaps:", sorted({(g.missed, g.reason) for g in store_gaps}))

        with sessions() as s:
            frozen_gaps = s.scalars(select(PollGap).where(PollGap.ended_at > frozen_at)).all()
            assert all(g.reason == "not_polled" and g.missed >= 2 for g in frozen_gaps), [
                (g.reason, g.missed) for g in frozen_gaps
            ]
            # No tick recorded twice, and no two ticks of one cluster at once: per channel, each
            # sample was read after the transaction that stored the one before it committed (a
            # tick locks its cluster's row until it commits). A spacing threshold would not do:
            # two dispatches legitimately run back to back after a late beat or a store outage.
            stamps: dict[int, list[tuple[int, datetime]]] = {}
            for channel_id, ts_us, committed in s.execute(
                text(
                    "SELECT channel_id, ts, pg_xact_commit_timestamp(xmin) FROM samples"
                    " WHERE ts >= :began ORDER BY channel_id, ts"
                ),
                {"began": int(began.timestamp() * 1_000_000)},
            ):
                stamps.setdefault(channel_id, []).append((ts_us, committed))
            overlaps = [
                (channel_id, earlier, later)
                for channel_id, series in stamps.items()
                for earlier, later in itertools.pairwise(series)
                if later[0] <= earlier[1].timestamp() * 1_000_000
            ]
            closest = min(
                later[0] - earlier[0]
                for series in stamps.values()
                for earlier, later in itertools.pairwise(series)
            )
            print(f"closest two samples of one channel: {closest / 1e6:.3f} s")
            assert sum(len(v) for v in stamps.values()) > CLUSTERS * 10
            assert not overlaps, overlaps[:5]

            # Every hole in a cluster's ticks is a recorded gap, with its reason.
            gaps = s.scalars(select(PollGap)).all()
            print("gaps:", [(g.cluster_id, g.missed, g.reason) for g in gaps])
            sources = s.execute(
                select(Instance.cluster_id, InstanceSample.ts)
                .join(InstanceSample, InstanceSample.instance_id == Instance.id)
                .where(Instance.role == "source", InstanceSample.ts >= began)
                .order_by(InstanceSample.ts)
            ).all()
        by_cluster: dict[int, list[datetime]] = {}
        for cid, ts in sources:
            by_cluster.setdefault(cid, []).append(ts)
        holes = [
            (cid, earlier, later)
            for cid, series in by_cluster.items()
            for earlier, later in itertools.pairwise(series)
            if (later - earlier).total_seconds() > (GAP_FACTOR + 0.5) * INTERVAL_S
        ]
        print(f"holes over {(GAP_FACTOR + 0.5) * INTERVAL_S:g} s: {len(holes)}")
        for cid, earlier, later in holes:
            assert any(
                g.cluster_id == cid and g.started_at <= earlier and earlier < g.ended_at <= later
                for g in gaps
            ), f"cluster {cid}: no recorded gap for the hole {earlier} → {later}"
        assert all(g.reason in {"slow", "expired", "not_polled"} and g.detail for g in gaps)
    finally:
        for process in reversed(processes):
            process.stop()
        redis.stop()
        engine.dispose()


def test_a_tick_that_finds_its_cluster_mid_tick_elsewhere_is_skipped(lab, postgres):
    """Two ticks of one cluster at once (a slow tick and the next one, in two processes): the
    second finds the row locked and records nothing, so no moment is recorded twice."""
    upgrade(postgres.url)
    engine = make_engine(postgres.url)
    sessions = make_session_factory(engine)
    box = store_box(sessions, SECRET)
    user, password = lab.credentials.monitor
    with sessions() as session, session.begin():
        cluster = inventory.create_cluster(session, "overlapping", poll_interval_s=INTERVAL_S)
        server = lab.server("source")
        inventory.add_instance(
            session, box, cluster, "source", server.host, server.port, user, password, "source"
        )
        cluster_id = cluster.id
    reader = ClusterReader(max_threads=4)
    try:
        with sessions() as first, first.begin():
            assert poll_cluster(first, box, reader, cluster_id, worker="first:1") is not None
            with sessions() as second, second.begin():  # while the first is uncommitted
                # Without the skip it would wait for the first: fail instead of hanging.
                second.execute(text("SET LOCAL lock_timeout = '5s'"))
                assert poll_cluster(second, box, reader, cluster_id, worker="second:2") is None
        with sessions() as s:
            polled = s.get(Cluster, cluster_id)
            assert polled is not None and polled.last_tick_by == "first:1"
            recorded = s.scalar(
                select(func.count())
                .select_from(InstanceSample)
                .join(Instance)
                .where(Instance.cluster_id == cluster_id)
            )
            assert recorded == 1
        with sessions() as third, third.begin():  # once it is committed, the next tick runs
            assert poll_cluster(third, box, reader, cluster_id, worker="third:3") is not None
    finally:
        reader.close()
        engine.dispose()


def test_the_api_answers_503_while_the_store_is_down_and_loses_nothing_acknowledged(postgres):
    """An annotation written while PostgreSQL is stopped gets a 503 problem (nothing written,
    try again); the one written after it is back is kept; no other appears."""
    with api_server(postgres.url) as api, api.client() as client:
        with api.sessions() as s, s.begin():
            cluster_id = inventory.create_cluster(s, "notes").id
        note = {"cluster_id": cluster_id, "starts_at": datetime.now(UTC).isoformat()}
        postgres.pause()
        try:
            refused = client.post("/api/v1/annotations", json={**note, "text": "during"})
            readyz = client.get("/readyz")
        finally:
            postgres.resume()
        assert refused.status_code == 503, refused.text
        assert refused.json()["title"] == "StoreUnavailable"
        assert refused.headers["Retry-After"] == "5"
        assert readyz.status_code == 503 and readyz.json()["components"][0]["state"] == "down"
        kept = wait_until(
            lambda: (
                (
                    r := client.post("/api/v1/annotations", json={**note, "text": "after"})
                ).status_code
                == 201
                and r
            ),
            timeout_s=30,
            message="the write accepted once the store is back",
        )
        listed = client.get("/api/v1/annotations", params={"cluster_id": cluster_id}).json()
        assert [a["text"] for a in listed] == ["after"], listed
        assert listed[0]["id"] == kept.json()["id"]
