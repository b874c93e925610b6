"""Faults of Lagscope's own parts, with real processes: what /readyz says, what happens to the
samples and the alerts, and how soon polling is back once the part is back (docs/operations.md).

One pipeline per poll engine (the lab, Redis, a SQLite store, a worker, beat, the heartbeat
writer and the API), every process reporting each second: the default engine's (the owner) for
most tests; the Celery engine's for the tests of what a broker or beat outage does to polling,
since only there are Redis and beat in the polls' path (``@celery_engine``; their owner-engine
counterparts say polling goes on). Each test breaks one part, checks how it shows and what it
cost, brings the part back and leaves the pipeline healthy for the next. Detection and recovery
times are printed (``-s``), never asserted beyond the waits' bounds: the box is shared.
``FAULT_OUTAGE_S=60`` runs the outages at 60 s (the figures in docs/operations.md).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, func, select

from lagscope.models import (
    AlertEvent,
    AlertRule,
    Channel,
    Cluster,
    Delivery,
    Instance,
    LagscopeProcess,
    PollGap,
    Sample,
)

from .pipeline_stack import Pipeline, start_pipeline, worker_command
from .receiver import Receiver, receiver
from .stack import (
    ManagedProcess,
    RedisServer,
    free_port,
    lagscope_command,
    poll_engine,
    sleep_s,
    wait_worker_ready,
)
from .test_alerts_pipeline import add_rule, bodies, statuses, target
from .waiting import assert_never, wait_until

pytestmark = pytest.mark.integration

# Long enough that Celery's own reconnect back-off (2, 4, 6 … s between tries) would come
# back ~6 s after Redis does; ours tries every second (tasks/consumer.py).
OUTAGE_S = float(os.environ.get("FAULT_OUTAGE_S", "14"))
# The store locked: no reconnect back-off to tell apart, a few seconds show it all.
LOCK_S = float(os.environ.get("FAULT_OUTAGE_S", "6"))
RECOVERY_BOUND_S = 5.0
FAULT_ENV = {
    "LAGSCOPE_REPORT_EVERY_S": "1",
    "LAGSCOPE_ALERT_WATCHDOG_EVERY_S": "1",
    "LAGSCOPE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
    "LAGSCOPE_WEBHOOK_BACKOFF_BASE_S": "1",
    "LAGSCOPE_DELIVERY_SWEEP_EVERY_S": "2",
    # A delivery's lease is 4 tries of these plus the margin (alerts/delivery.py): 13 s here.
    "LAGSCOPE_WEBHOOK_CONNECT_TIMEOUT_S": "0.5",
    "LAGSCOPE_WEBHOOK_READ_TIMEOUT_S": "1.5",
    "LAGSCOPE_WEBHOOK_LEASE_MARGIN_S": "5",
}
DEFAULT_ENGINE = poll_engine({})
# The Celery engine, pinned: beat dispatches every tick through Redis, so a broker or beat
# outage stops the polls, which is what these tests check. The owner engine polls on without
# either (the *_polling_goes_on tests below; test_poll_owner.py on PostgreSQL).
celery_engine = pytest.mark.parametrize("engine", ["celery"], indirect=True)


class Faults:
    """The pipeline, its Redis and its API, and the means to break each."""

    def __init__(self, pipeline: Pipeline, redis: RedisServer, api_url: str) -> None:
        self.pipeline, self.redis, self.api_url = pipeline, redis, api_url
        self.restarts = 0

    def readyz(self) -> dict[str, Any]:
        answer = httpx.get(f"{self.api_url}/readyz", timeout=10)
        assert answer.status_code in (200, 503), answer.text
        body: dict[str, Any] = answer.json()
        body["http"] = answer.status_code
        return body

    def component(self, name: str) -> dict[str, Any] | None:
        return next((c for c in self.readyz()["components"] if c["name"] == name), None)

    def state(self, name: str) -> str | None:
        found = self.component(name)
        return None if found is None else str(found["state"])

    def answers(self) -> bool:
        try:
            return httpx.get(f"{self.api_url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def healthy(self) -> bool:
        if not self.answers():
            return False
        body = self.readyz()
        return body["http"] == 200 and all(c["state"] == "ok" for c in body["components"])

    def process(self, name: str) -> ManagedProcess:
        return next(p for p in self.pipeline.processes if p.name == name)

    def kill(self, name: str) -> None:
        """SIGKILL the process and its children (its own process group), as an OOM kill would."""
        process = self.process(name)
        os.killpg(process.pid, signal.SIGKILL)
        process.proc.wait(timeout=30)
        process.stop()  # closes its log
        self.pipeline.processes.remove(process)

    def start(self, name: str, argv: list[str]) -> ManagedProcess:
        assert self.pipeline.workdir is not None and self.pipeline.env is not None
        self.restarts += 1
        process = ManagedProcess(
            name, argv, self.pipeline.workdir, self.pipeline.env, log_name=f"{name}-{self.restarts}"
        )
        self.pipeline.processes.append(process)
        return process

    def start_worker(self) -> ManagedProcess:
        assert self.pipeline.env is not None
        worker = self.start("worker", worker_command())
        wait_worker_ready(worker, self.pipeline.env)
        return worker

    def start_beat(self, name: str = "beat") -> ManagedProcess:
        assert self.pipeline.workdir is not None
        schedule = self.pipeline.workdir / f"{name}-{self.restarts + 1}-schedule"
        return self.start(name, lagscope_command("beat", "-s", str(schedule)))

    def last_tick(self) -> datetime | None:
        with self.pipeline.session() as s:
            return s.scalar(
                select(Cluster.last_tick_at).where(Cluster.id == self.pipeline.cluster_id)
            )

    def ticked_after(self, moment: datetime) -> Callable[[], bool]:
        def check() -> bool:
            tick = self.last_tick()
            return tick is not None and tick > moment

        return check

    def gaps_since(self, moment: datetime) -> list[PollGap]:
        with self.pipeline.session() as s:
            return list(
                s.scalars(
                    select(PollGap)
                    .where(
                        PollGap.cluster_id == self.pipeline.cluster_id, PollGap.ended_at >= moment
                    )
                    .order_by(PollGap.ended_at)
                )
            )

    def duplicate_samples(self) -> int:
        """Samples of one channel at one time, more than once: never."""
        with self.pipeline.session() as s:
            twice = (
                select(Sample.channel_id, Sample.ts)
                .group_by(Sample.channel_id, Sample.ts)
                .having(func.count() > 1)
                .subquery()
            )
            return int(s.scalar(select(func.count()).select_from(twice)) or 0)


@pytest.fixture(scope="module")
def engine(request: pytest.FixtureRequest) -> str:
    """The module pipeline's poll engine: the default, unless the test is ``@celery_engine``."""
    return str(getattr(request, "param", DEFAULT_ENGINE))


@pytest.fixture(scope="module")
def faults(lab, tmp_path_factory, engine: str) -> Iterator[Faults]:
    workdir = tmp_path_factory.mktemp(f"own-faults-{engine}")
    env = {**FAULT_ENV, "LAGSCOPE_POLL_ENGINE": engine}
    with start_pipeline(lab, workdir, params_every_s=2.0, extra_env=env) as pipeline:
        assert pipeline.env is not None
        port = free_port()
        api = ManagedProcess(
            "api", lagscope_command("api", "--port", str(port)), workdir, pipeline.env
        )
        pipeline.processes.append(api)
        assert pipeline.redis is not None
        faults = Faults(pipeline, pipeline.redis, f"http://127.0.0.1:{port}")
        wait_until(faults.healthy, timeout_s=60, message="/readyz all ok")
        yield faults


def _since(moment: float) -> str:
    return f"{time.monotonic() - moment:.2f} s"


@celery_engine
def test_redis_stopped_then_back_and_restarted_empty(faults: Faults):
    before = datetime.now(UTC)
    stopped_at, stopped_mono = datetime.now(UTC), time.monotonic()
    faults.redis.stop()
    try:
        wait_until(lambda: faults.state("broker") == "down", timeout_s=10, message="broker down")
        print(f"\nRedis stopped: /readyz says broker down after {_since(stopped_mono)}")
        wait_until(lambda: faults.state("polling") == "down", timeout_s=15, message="polling down")
        print(f"Redis stopped: polling down after {_since(stopped_mono)}")
        body = faults.readyz()
        assert body["http"] == 503 and body["state"] == "down"
        polling = faults.component("polling")
        assert polling is not None and polling["message"].startswith("No worker has polled for")
        remaining = OUTAGE_S - (time.monotonic() - stopped_mono)
        assert_never(
            faults.ticked_after(stopped_at + timedelta(seconds=1)),
            for_s=max(0.0, remaining),
            message="a tick while the broker is down",
        )
    finally:
        faults.redis.start()
    back, back_mono = datetime.now(UTC), time.monotonic()
    wait_until(
        faults.ticked_after(back), timeout_s=RECOVERY_BOUND_S, message="polling back after Redis"
    )
    print(f"Redis back (empty) after {OUTAGE_S:g} s: first tick {_since(back_mono)} later")
    wait_until(faults.healthy, timeout_s=15, message="/readyz ok again")
    gaps = faults.gaps_since(before)
    assert gaps, "the outage is a recorded gap"
    assert gaps[0].started_at <= stopped_at + timedelta(seconds=1) and gaps[0].missed >= 5
    assert gaps[0].reason in ("not_polled", "expired"), gaps[0].reason
    print(f"gap: {gaps[0].missed} ticks missed, reason {gaps[0].reason}: {gaps[0].detail}")

    # Restarted at once, empty: the queue and the workers' bindings are gone.
    restart_mono = time.monotonic()
    faults.redis.stop()
    faults.redis.start()
    again = datetime.now(UTC)
    wait_until(faults.ticked_after(again), timeout_s=15, message="polling back after a restart")
    print(f"Redis restarted empty: first tick {_since(restart_mono)} after the restart")
    assert faults.duplicate_samples() == 0


def test_sqlite_locked_by_a_long_writer(faults: Faults):
    """Another writer holds the SQLite store: ticks wait (busy timeout), polling shows down,
    and once the lock is gone the ticks that waited are recorded and the gap is named."""
    engine = create_engine(faults.pipeline.url, connect_args={"timeout": 1})
    before, locked_mono = datetime.now(UTC), time.monotonic()
    conn = engine.raw_connection()
    try:
        conn.execute("BEGIN IMMEDIATE")  # type: ignore[attr-defined]
        wait_until(lambda: faults.state("polling") == "down", timeout_s=20, message="polling down")
        polling = faults.component("polling")
        print(f"\nSQLite locked: polling down after {_since(locked_mono)}: {polling}")
        store = faults.component("store")
        assert store is not None and store["state"] == "ok"  # reads go on (WAL)
        sleep_s(max(0.0, LOCK_S - (time.monotonic() - locked_mono)))  # the lock held
    finally:
        conn.rollback()
        conn.close()
        engine.dispose()
    released, released_mono = datetime.now(UTC), time.monotonic()
    wait_until(faults.ticked_after(released), timeout_s=20, message="polling back after the lock")
    print(f"lock released: first tick {_since(released_mono)} later")
    gaps = faults.gaps_since(before)
    print(f"gaps: {[(g.missed, g.reason) for g in gaps]}")
    assert gaps and {g.reason for g in gaps} <= {"slow", "expired", "not_polled"}
    assert faults.duplicate_samples() == 0
    wait_until(faults.healthy, timeout_s=20, message="/readyz ok again")


def test_two_beats_poll_once_per_interval(faults: Faults):
    second = faults.start_beat("beat-extra")
    try:
        wait_until(lambda: faults.state("beat") == "warn", timeout_s=15, message="two beats seen")
        beat = faults.component("beat")
        assert beat is not None and beat["message"].startswith("2 beats are running")
        start = datetime.now(UTC)
        time_window = 8.0
        sleep_s(time_window + 1)  # the window, and its last second recorded
        with faults.pipeline.session() as s:
            per_channel = s.execute(
                select(Sample.channel_id, func.count())
                .join(Channel)
                .join(Instance)
                .where(
                    Instance.cluster_id == faults.pipeline.cluster_id,
                    Sample.ts >= start,
                    Sample.ts < start + timedelta(seconds=time_window),
                )
                .group_by(Sample.channel_id)
            ).all()
        counts = [n for _, n in per_channel]
        print(f"\ntwo beats: samples per channel in {time_window:g} s: {counts}")
        assert counts and max(counts) <= time_window + 1, counts  # one tick a second, not two
    finally:
        second.stop()
        faults.pipeline.processes.remove(second)
    wait_until(lambda: faults.state("beat") == "ok", timeout_s=15, message="one beat again")


@celery_engine
def test_beat_killed_then_restarted(faults: Faults):
    killed_at, killed_mono = datetime.now(UTC), time.monotonic()
    faults.kill("beat")
    wait_until(lambda: faults.state("beat") == "down", timeout_s=15, message="beat down")
    print(f"\nbeat killed: /readyz says beat down after {_since(killed_mono)}")
    wait_until(lambda: faults.state("polling") == "down", timeout_s=15, message="polling down")
    back, back_mono = datetime.now(UTC), time.monotonic()
    faults.start_beat()
    wait_until(faults.ticked_after(back), timeout_s=20, message="polling back after beat")
    print(f"beat restarted: first tick {_since(back_mono)} later")
    gaps = faults.gaps_since(killed_at)
    assert gaps and gaps[0].reason == "not_polled", [(g.reason, g.detail) for g in gaps]
    wait_until(faults.healthy, timeout_s=15, message="/readyz ok again")
    assert faults.duplicate_samples() == 0


def owner_only(engine: str) -> None:
    if engine != "owner":
        pytest.skip("the owner engine's counterpart of a @celery_engine test")


def ticks_go_on(faults: Faults, ticks: int = 5) -> None:
    """``ticks`` new ticks one after another, each within a bound (the polls never waited)."""
    for _ in range(ticks):
        last = faults.last_tick() or datetime.now(UTC)
        wait_until(faults.ticked_after(last), timeout_s=RECOVERY_BOUND_S, message="a new tick")


def test_redis_stopped_polling_goes_on(faults: Faults, engine: str):
    """The owner engine polls with the store alone: the broker gone is a warning (webhooks
    and the slow jobs wait) and the ticks go on; Redis back empty, the workers are back on it."""
    owner_only(engine)
    stopped_mono = time.monotonic()
    faults.redis.stop()
    try:
        wait_until(lambda: faults.state("broker") == "warn", timeout_s=10, message="broker warns")
        print(f"\nRedis stopped: /readyz warns about the broker after {_since(stopped_mono)}")
        ticks_go_on(faults)
        body = faults.readyz()
        assert body["http"] == 200 and body["state"] == "warn", body
        broker, polling = faults.component("broker"), faults.component("polling")
        assert broker is not None and "polling and recording go on" in broker["message"]
        assert polling is not None and polling["state"] == "ok", polling
    finally:
        faults.redis.start()
    wait_until(faults.healthy, timeout_s=30, message="/readyz ok again")
    ticks_go_on(faults, 2)
    assert faults.duplicate_samples() == 0


def test_beat_killed_polling_goes_on(faults: Faults, engine: str):
    """The owner engine needs no beat to poll: beat killed is a warning (no periodic job runs)
    and the ticks go on."""
    owner_only(engine)
    killed_mono = time.monotonic()
    faults.kill("beat")
    try:
        wait_until(lambda: faults.state("beat") == "warn", timeout_s=15, message="beat warns")
        print(f"\nbeat killed: /readyz warns about beat after {_since(killed_mono)}")
        ticks_go_on(faults)
        beat, polling = faults.component("beat"), faults.component("polling")
        assert beat is not None and "polling goes on" in beat["message"], beat
        assert polling is not None and polling["state"] == "ok", polling
    finally:
        faults.start_beat()
    wait_until(faults.healthy, timeout_s=15, message="/readyz ok again")
    assert faults.duplicate_samples() == 0


def test_heartbeat_writer_killed_is_a_warning_and_lag_goes_on(faults: Faults):
    killed_mono = time.monotonic()
    faults.kill("heartbeat")
    try:
        wait_until(lambda: faults.state("heartbeat") == "warn", timeout_s=15, message="warned")
        print(f"\nheartbeat writer killed: /readyz warns after {_since(killed_mono)}")
        body = faults.readyz()
        assert body["http"] == 200 and body["state"] == "warn"
        since = datetime.now(UTC)
        wait_until(
            lambda: len(faults.pipeline.answered("replica2", since)) >= 3,
            timeout_s=15,
            message="replica2 still measured",
        )
        assert all(s.lag_s is not None for s in faults.pipeline.answered("replica2", since))
    finally:
        faults.start("heartbeat", lagscope_command("heartbeat", "--refresh", "1"))
    wait_until(faults.healthy, timeout_s=20, message="/readyz ok again")


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with receiver() as started:
        yield started


@celery_engine
def test_api_killed_polling_stopped_still_fires_once_from_the_others(
    faults: Faults, hook: Receiver
):
    """With the API dead, beat killed stops polling: the worker's and the heartbeat writer's
    watchdogs both judge polling_stopped; the receiver gets one firing and one resolved."""
    polling_stopped_fires_once(faults, hook, "beat", faults.start_beat)


def test_api_and_worker_killed_polling_stopped_still_fires_once_from_the_others(
    faults: Faults, hook: Receiver, engine: str
):
    """The owner engine's polls stop with the worker (its poll owner dies with it): with the
    API dead too, beat's and the heartbeat writer's watchdogs both judge polling_stopped; the
    receiver gets one firing and one resolved."""
    owner_only(engine)
    polling_stopped_fires_once(faults, hook, "worker", faults.start_worker)


def polling_stopped_fires_once(
    faults: Faults, hook: Receiver, poller: str, restart: Callable[[], object]
) -> None:
    """Kill the API and ``poller`` (what polls stop without), then ``restart`` it."""
    pipeline = faults.pipeline
    made: list[int] = []
    with pipeline.session() as s:
        replica2 = s.scalar(select(Instance.id).where(Instance.name == "replica2"))
    rule = add_rule(
        pipeline,
        made,
        target(pipeline, hook, "stopped"),
        name="polling stopped",
        metric="polling_stopped",
        threshold=4.0,
        instance_id=replica2,
    )
    api = faults.process("api")
    argv = list(api.proc.args)  # type: ignore[arg-type]
    with pipeline.session() as s:  # every kind of process runs the watchdog, the API too
        kinds = set(s.scalars(select(LagscopeProcess.kind)))
    assert kinds == {"api", "worker", "beat", "heartbeat"}, kinds
    try:
        assert_never(lambda: bodies(hook, rule), for_s=3, message="fired while polling runs")
        faults.kill("api")
        faults.kill(poller)
        stopped_mono = time.monotonic()
        wait_until(lambda: bodies(hook, rule, "firing"), timeout_s=30, message="fired")
        print(f"\nAPI and {poller} killed: polling_stopped delivered after {_since(stopped_mono)}")
        assert_never(lambda: len(bodies(hook, rule)) > 1, for_s=4, message="a second firing")
        restart()
        wait_until(lambda: bodies(hook, rule, "resolved"), timeout_s=30, message="resolved")
        assert_never(lambda: len(bodies(hook, rule)) > 2, for_s=3, message="a third notification")
        assert statuses(hook, rule) == ["firing", "resolved"]
        keys = [r.headers.get("Idempotency-Key") for r in hook.accepted()]
        assert len(set(keys)) == len(keys) == 2, keys
    finally:
        with pipeline.session() as s, s.begin():
            s.get_one(AlertRule, rule).enabled = False
        if not any(p.name == poller for p in pipeline.processes):
            restart()
        faults.start("api", argv)
    wait_until(faults.healthy, timeout_s=60, message="/readyz ok again")


def test_worker_killed_mid_delivery_the_receiver_gets_the_same_key_again(
    faults: Faults, hook: Receiver
):
    """The receiver has the request; the worker sending it dies before the answer. The
    delivery's lease runs out and the next worker sends it again with the same
    Idempotency-Key: the receiver sees two requests, one key, and dedupes."""
    pipeline = faults.pipeline
    made: list[int] = []
    with pipeline.session() as s:
        replica2 = s.scalar(select(Instance.id).where(Instance.name == "replica2"))
    release = hook.hold_next()
    rule = add_rule(
        pipeline,
        made,
        target(pipeline, hook, "held"),
        name="always (clock skew)",
        metric="clock_skew",
        threshold=-1.0,
        null_policy="firing",
        instance_id=replica2,
    )
    try:
        wait_until(lambda: hook.all(), timeout_s=30, message="the request arrived")
        faults.kill("worker")
        release.set()
        killed_mono = time.monotonic()
        faults.start_worker()
        wait_until(lambda: len(hook.all()) >= 2, timeout_s=120, message="sent again")
        print(f"\nworker killed mid-delivery: sent again {_since(killed_mono)} after the kill")
        wait_until(
            lambda: delivery_status(faults, rule) == "delivered", timeout_s=30, message="delivered"
        )
        seen = [(r.headers.get("Idempotency-Key"), r.status) for r in hook.all()]
        print(f"the receiver saw: {seen}")
        assert len(seen) == 2 and seen[0][0] == seen[1][0] and seen[0][0], seen
        assert_never(lambda: len(hook.all()) > 2, for_s=3, message="a third request")
    finally:
        release.set()
        with pipeline.session() as s, s.begin():
            s.get_one(AlertRule, rule).enabled = False
    wait_until(faults.healthy, timeout_s=30, message="/readyz ok again")


def delivery_status(faults: Faults, rule: int) -> str | None:
    with faults.pipeline.session() as s:
        return s.scalar(
            select(Delivery.status).join(AlertEvent).where(AlertEvent.rule_id == rule).limit(1)
        )
