"""The real pipeline for tests: Redis, a SQLite store, ``lagscope worker`` / ``beat`` /
``heartbeat`` processes, and a cluster over the lab (source, replica1, replica2 "far").

``start_pipeline`` is a context manager; everything it started stops when it exits.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.db import make_engine, make_session_factory
from lagscope.inventory import instances as inventory
from lagscope.models import Channel, Instance, InstanceSample, Sample
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

from .stack import ManagedProcess, RedisServer, lagscope_command, wait_worker_ready
from .waiting import wait_until

SECRET = "pipeline-test-secret-8d1f4c2e9b7a6350-Qz"


@dataclass
class Pipeline:
    url: str
    cluster_id: int
    processes: list[ManagedProcess]
    sessions: sessionmaker[Session]
    workdir: Path | None = None
    env: dict[str, str] | None = None
    redis: RedisServer | None = None

    def kill_worker(self) -> None:
        """SIGKILL the Celery worker and its pool children (its own process group)."""
        worker = next(p for p in self.processes if p.name.startswith("worker"))
        os.killpg(worker.pid, signal.SIGKILL)
        worker.proc.wait(timeout=30)
        worker.stop()  # closes its log
        self.processes.remove(worker)

    def start_worker(self, name: str) -> ManagedProcess:
        assert self.workdir is not None and self.env is not None
        worker = ManagedProcess(name, worker_command(), self.workdir, self.env)
        self.processes.insert(0, worker)
        wait_worker_ready(worker, self.env)
        return worker

    def restart(self, name: str, **env: str) -> ManagedProcess:
        """Stop the process ``name`` and start it again with ``env`` changed (e.g. new keys)."""
        assert self.workdir is not None and self.env is not None
        old = next(p for p in self.processes if p.name == name)
        old.stop()
        self.env.update(env)
        new = ManagedProcess(name, list(old.proc.args), self.workdir, self.env)  # type: ignore[arg-type]
        self.processes[self.processes.index(old)] = new
        return new

    def session(self) -> Session:
        return self.sessions()

    def channel_id(self, instance: str, channel: str = "") -> int | None:
        with self.session() as s:
            return s.scalar(
                select(Channel.id)
                .join(Instance)
                .where(Instance.name == instance, Channel.name == channel)
            )

    def samples(self, instance: str, since: datetime, channel: str = "") -> list[Sample]:
        cid = self.channel_id(instance, channel)
        if cid is None:  # not polled successfully yet
            return []
        with self.session() as s:
            rows = s.scalars(
                select(Sample)
                .where(Sample.channel_id == cid, Sample.ts >= since)
                .order_by(Sample.ts)
            )
            return list(rows)

    def answered(self, instance: str, since: datetime, channel: str = "") -> list[Sample]:
        """The samples of polls the server answered. A poll that got no answer (in time) is
        stored too, with no readings and the verdict of the last three polls, which may still
        say e.g. "receive_bound": only the instance's own row says it was not reachable."""
        with self.session() as s:
            unanswered = set(
                s.scalars(
                    select(InstanceSample.ts)
                    .join(Instance)
                    .where(
                        Instance.name == instance,
                        InstanceSample.ts >= since,
                        InstanceSample.reachable.is_(False),
                    )
                )
            )
        return [r for r in self.samples(instance, since, channel) if r.ts not in unanswered]

    def latest(self, instance: str, channel: str = "") -> Sample | None:
        rows = self.samples(instance, datetime.fromtimestamp(time.time() - 5, UTC), channel)
        return rows[-1] if rows else None

    def lag(self, instance: str) -> float:
        row = self.latest(instance)
        return (row.lag_s or 0.0) if row else 0.0

    def verdict(self, instance: str) -> int | None:
        row = self.latest(instance)
        return row.verdict if row else None

    def assert_alive(self) -> None:
        for process in self.processes:
            assert process.alive(), f"{process.name} died:\n{process.log_tail()}"


def now() -> datetime:
    return datetime.now(UTC)


def worker_command() -> list[str]:
    return lagscope_command("worker", "--concurrency", "2", "--without-gossip", "--without-mingle")


@contextmanager
def start_pipeline(
    lab,
    workdir: Path,
    params_every_s: float = 2.0,
    heartbeat: bool = True,
    extra_env: Mapping[str, str] | None = None,
    secret: str = SECRET,
    store_url: str | None = None,
) -> Iterator[Pipeline]:
    """``heartbeat=False``: no heartbeat configured at all (mode off, no writer process), as most
    users run Lagscope; lag then comes from the source timeline.

    ``secret`` encrypts the credentials registered here; ``extra_env`` is added to the processes'
    environment (it may set another LAGSCOPE_SECRET_KEY, with ``secret`` among the old keys).
    ``store_url``: an empty store elsewhere (a throwaway PostgreSQL) instead of a SQLite file."""
    redis = RedisServer(workdir)
    url = store_url or f"sqlite:///{workdir / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    box = store_box(sessions, secret)
    with sessions() as session, session.begin():
        cluster = inventory.create_cluster(
            session,
            "lab",
            poll_interval_s=1.0,
            heartbeat_mode="lagscope" if heartbeat else "off",
            heartbeat_interval_s=0.25,
        )
        user, password = lab.credentials.monitor
        for name in ("source", "replica1", "replica2"):
            server = lab.server(name)
            role = "source" if name == "source" else "replica"
            region = "far" if name == "replica2" else "near"
            inventory.add_instance(
                session, box, cluster, name, server.host, server.port, user, password, role, region
            )
        if heartbeat:
            inventory.set_heartbeat_writer(session, box, cluster, *lab.credentials.heartbeat)
        cluster_id = cluster.id
    env = {
        **os.environ,
        "LAGSCOPE_DATABASE_URL": url,
        "LAGSCOPE_BROKER_URL": redis.url,
        "LAGSCOPE_SECRET_KEY": secret,
        "LAGSCOPE_PARAMS_EVERY_S": str(params_every_s),
        "PYTHONUNBUFFERED": "1",
        **(extra_env or {}),
    }
    processes: list[ManagedProcess] = []
    try:
        worker = ManagedProcess("worker", worker_command(), workdir, env)
        processes.append(worker)
        wait_worker_ready(worker, env)
        processes.append(
            ManagedProcess(
                "beat", lagscope_command("beat", "-s", str(workdir / "beat-schedule")), workdir, env
            )
        )
        if heartbeat:
            processes.append(
                ManagedProcess(
                    "heartbeat", lagscope_command("heartbeat", "--refresh", "1"), workdir, env
                )
            )
        pipe = Pipeline(url, cluster_id, processes, sessions, workdir, env, redis)
        wait_until(
            lambda: pipe.latest("replica2") is not None, timeout_s=30, message="first samples"
        )
        yield pipe
    finally:
        for process in reversed(processes):
            process.stop()
        redis.stop()
        engine.dispose()
