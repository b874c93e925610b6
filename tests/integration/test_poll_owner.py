"""The owner engine on the live lab, PostgreSQL store, three ``lagscope worker`` processes
(LAGSCOPE_POLL_ENGINE=owner; no beat: the owners tick their shards themselves):

- each lab server holds exactly one Lagscope polling session, whichever of the three workers
  owns the cluster's shard (counted in each server's PROCESSLIST);
- the owner is killed with SIGKILL in the middle of an episode (replica1's SQL thread stopped
  under a write load): another worker takes the shard over once the lease has run out, the
  episode goes on with the same id, no poll is recorded twice, the hole is a recorded gap, and
  each server again holds one Lagscope session;
- then Redis is stopped: the owners go on polling and recording, and readiness says the broker
  is degraded, polling fine.

Figures are printed (``pytest -s``): the takeover time and the sessions per server.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.readiness import assess
from lagscope.db import make_engine, make_session_factory
from lagscope.health.facts import gather
from lagscope.inventory import instances as inventory
from lagscope.lab import Lab
from lagscope.lab import incidents as inc
from lagscope.models import Channel, Cluster, Episode, EpisodeCause, Instance, PollGap, Sample
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

from .postgres import ThrowawayPostgres
from .stack import ManagedProcess, RedisServer, lagscope_command
from .waiting import wait_until

pytestmark = pytest.mark.integration

SECRET = "owner-test-secret-5e1a9c7d3b2f8046-Wq"
INTERVAL_S = 1.0
LEASE_S = 1.2
WORKERS = 3
TABLE = f"{inc.SCHEMA}.owner_takeover"


def _pid_of(owner: str | None) -> int | None:
    """An owner's name is host:pid:random (engine/process.py)."""
    if not owner:
        return None
    return int(owner.split(":")[1])


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _sessions_on(lab: Lab, server: str, user: str) -> int:
    """Lagscope's polling sessions on a lab server: the monitoring user's, but ours."""
    with lab.connect(server) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = %s AND ID <> "
            "CONNECTION_ID()",
            (user,),
        )
        (count,) = cur.fetchone()
    return int(count)


class Load:
    def __init__(self, lab: Lab) -> None:
        self._lab = lab
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Load:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        with self._lab.connect("source") as conn, conn.cursor() as cur:
            while not self._stop.is_set():
                cur.execute(f"INSERT INTO {TABLE} (n) VALUES (1)")
                self._stop.wait(0.01)


def _sql_thread(lab: Lab, running: bool) -> None:
    with lab.connect("replica1") as conn, conn.cursor() as cur:
        cur.execute("START SLAVE SQL_THREAD" if running else "STOP SLAVE SQL_THREAD")


def _tick(sessions: sessionmaker[Session], cluster_id: int) -> tuple[datetime | None, str | None]:
    with sessions() as s:
        cluster = s.get(Cluster, cluster_id)
        assert cluster is not None
        return cluster.last_tick_at, cluster.last_tick_by


@pytest.mark.timeout(600)
def test_one_session_per_server_and_a_killed_owner_taken_over_mid_episode(
    lab: Lab, postgres: ThrowawayPostgres, tmp_path: Path
) -> None:
    url = postgres.url
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    box = store_box(sessions, SECRET)
    user, password = lab.credentials.monitor
    with sessions() as s, s.begin():
        cluster = inventory.create_cluster(s, "owned", poll_interval_s=INTERVAL_S)
        for name in ("source", "replica1", "replica2"):
            server = lab.server(name)
            role = "source" if name == "source" else "replica"
            inventory.add_instance(
                s, box, cluster, name, server.host, server.port, user, password, role
            )
        cluster_id = cluster.id
    inc.query(lab, "source", f"CREATE DATABASE IF NOT EXISTS {inc.SCHEMA}")
    inc.query(lab, "source", f"DROP TABLE IF EXISTS {TABLE}")
    inc.query(lab, "source", f"CREATE TABLE {TABLE} (id BIGINT AUTO_INCREMENT PRIMARY KEY, n INT)")
    redis = RedisServer(tmp_path)
    env = {
        **os.environ,
        "LAGSCOPE_DATABASE_URL": url,
        "LAGSCOPE_BROKER_URL": redis.url,
        "LAGSCOPE_SECRET_KEY": SECRET,
        "LAGSCOPE_POLL_ENGINE": "owner",
        "LAGSCOPE_SHARDS": "8",
        "LAGSCOPE_SHARD_LEASE_S": str(LEASE_S),
        "PYTHONUNBUFFERED": "1",
    }
    workers: dict[int, ManagedProcess] = {}
    try:
        for n in range(WORKERS):
            argv = lagscope_command(
                "worker", "--concurrency", "2", "--without-gossip", "--without-mingle",
                "-n", f"w{n}@%h",
            )  # fmt: skip
            worker = ManagedProcess(f"worker-{n}", argv, tmp_path, env)
            worker.wait_for_log("ready.", timeout_s=60)
            workers[worker.pid] = worker
        began = datetime.now(UTC)
        wait_until(
            lambda: (at := _tick(sessions, cluster_id)[0]) is not None and at > began,
            timeout_s=60,
            message="the cluster ticked by an owner",
        )

        def one_session_each(observed: list[dict[str, int]]) -> bool:
            counts = {n: _sessions_on(lab, n, user) for n in ("source", "replica1", "replica2")}
            observed.append(counts)
            return all(c == 1 for c in counts.values())

        # Ten ticks in a row, each seen with one session per server.
        before_kill: list[dict[str, int]] = []
        for _ in range(10):
            last = _tick(sessions, cluster_id)[0]
            wait_until(lambda: _tick(sessions, cluster_id)[0] != last, timeout_s=30)  # noqa: B023
            wait_until(lambda: one_session_each(before_kill), timeout_s=10, interval_s=0.2)
        print(f"\nsessions per server with {WORKERS} workers: {before_kill[-1]}")

        with Load(lab):
            _sql_thread(lab, False)
            replica1 = _channel(sessions, "replica1")

            def episode_open() -> int | None:
                """replica1's open episode, once it has a main cause."""
                with sessions() as s:
                    return s.scalar(
                        select(Episode.id).where(
                            Episode.channel_id == replica1,
                            Episode.ended_at.is_(None),
                            Episode.main_cause.is_not(None),
                        )
                    )

            episode_id = wait_until(episode_open, timeout_s=60, message="replica1's episode")
            _, owner = _tick(sessions, cluster_id)
            owner_pid = _pid_of(owner)
            assert owner_pid is not None
            victim = workers.pop(_parent(owner_pid) or -1)
            os.killpg(victim.pid, signal.SIGKILL)
            killed = time.time()
            victim.proc.wait(timeout=30)
            victim.stop()

            def taken_over() -> float | None:
                at, by = _tick(sessions, cluster_id)
                if at is None or by is None or by == owner or at.timestamp() <= killed:
                    return None
                assert _parent(_pid_of(by) or -1) in workers, by
                return at.timestamp() - killed

            took_s = wait_until(taken_over, timeout_s=30, interval_s=0.05, message="takeover")
            print(f"takeover: the next tick {took_s:.2f} s after SIGKILL (lease {LEASE_S} s)")
            # A few ticks by the new owner while replica1 is still stopped.
            for _ in range(5):
                last = _tick(sessions, cluster_id)[0]
                wait_until(lambda: _tick(sessions, cluster_id)[0] != last, timeout_s=30)  # noqa: B023
            assert episode_open() == episode_id, "the episode goes on with the same id"
            after_kill: list[dict[str, int]] = []
            wait_until(lambda: one_session_each(after_kill), timeout_s=30, interval_s=0.2)
            print(f"sessions per server after the takeover: {after_kill[-1]}")
            _sql_thread(lab, True)
        lab.wait_caught_up(timeout_s=120)

        # The broker gone: polling and recording go on; the health strip says what waits.
        redis.stop()
        stopped = datetime.now(UTC)
        for _ in range(5):
            last = _tick(sessions, cluster_id)[0]
            wait_until(lambda: _tick(sessions, cluster_id)[0] != last, timeout_s=30)  # noqa: B023
        assert (_tick(sessions, cluster_id)[0] or stopped) > stopped
        look = assess(gather(sessions, redis.url, 5.0, time.time(), "owner", 8))
        parts = {c.name: c for c in look.components}
        print(f"broker down: {parts['broker'].message} / {parts['polling'].message}")
        assert parts["broker"].state == "warn" and "polling and recording go on" in (
            parts["broker"].message
        )
        assert parts["polling"].state == "ok", parts["polling"].message

        with sessions() as s:
            gaps = s.scalars(
                select(PollGap).where(
                    PollGap.cluster_id == cluster_id,
                    PollGap.ended_at > datetime.fromtimestamp(killed, UTC),
                )
            ).all()
            print("gaps after the kill:", [(g.missed, g.reason, g.detail) for g in gaps])
            assert gaps, "the hole left by the killed owner is a recorded gap"
            assert any(f"{owner} stopped recording" in g.detail for g in gaps), (
                "the gap names the owner lost"
            )
            # No poll recorded twice: per channel, no two samples of one tick.
            stamps: dict[int, list[datetime]] = {}
            for channel_id, ts in s.execute(
                select(Sample.channel_id, Sample.ts).where(Sample.ts >= began).order_by(Sample.ts)
            ):
                stamps.setdefault(channel_id, []).append(ts)
            closest = min(
                (b - a).total_seconds()
                for series in stamps.values()
                for a, b in itertools.pairwise(series)
            )
            print(f"closest two samples of one channel: {closest:.3f} s")
            assert closest > 0.1 * INTERVAL_S
            # The episode's cause timeline: no hole wider than the recorded gap.
            segments = s.scalars(
                select(EpisodeCause)
                .where(EpisodeCause.episode_id == episode_id)
                .order_by(EpisodeCause.started_at)
            ).all()
            episode = s.get(Episode, episode_id)
            assert episode is not None and segments
            widest_gap = max((g.ended_at - g.started_at).total_seconds() for g in gaps)
            main = [seg for seg in segments if seg.cause == episode.main_cause]
            for a, b in itertools.pairwise(main):
                if a.ended_at is not None:
                    hole = (b.started_at - a.ended_at).total_seconds()
                    assert hole <= widest_gap + INTERVAL_S, (hole, widest_gap)
    finally:
        for worker in workers.values():
            worker.stop()
        redis.stop()
        inc.query(lab, "source", f"DROP TABLE IF EXISTS {TABLE}")
        engine.dispose()


def _channel(sessions: sessionmaker[Session], instance: str) -> int:
    with sessions() as s:
        channel_id = s.scalar(
            select(Channel.id).join(Instance).where(Instance.name == instance, Channel.name == "")
        )
    assert channel_id is not None
    return channel_id
