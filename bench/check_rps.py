"""How many lag checks one API process answers per second (``GET /api/v1/check/…``).

The store: a temporary SQLite file with one cluster of ``--replicas`` replicas (default 3, one
channel each) and ``--hours`` of 1 s polls per channel (default 24: 86,400 rows each), written
straight into ``samples``; while the bench runs a thread appends one poll per channel every
second, as the poll owner would, so the checks judge fresh data (``usable``, 200) and SQLite
sees the writes it sees in production. A check token for the cluster and an admin's API token
are made in the store.

The server: ``lagscope api`` (one uvicorn process, as deployed) on a free loopback port. The
load: a separate client process keeping ``--concurrency`` HTTP/1.1 keep-alive connections busy
(raw asyncio sockets: a client this cheap leaves most of the 2 cores to the server), for
``--seconds`` per case and run. Cases, alternated within each run:

- ``replica``: ``GET /api/v1/check/bench/replica1?max_lag=5`` with the check token;
- ``cluster``: ``GET /api/v1/check/bench?max_lag=5`` (every replica) with the check token;
- ``status`` (for scale): ``GET /api/v1/clusters/{id}/status`` with the admin's token;
- ``healthz`` (the floor: a route that opens a session and sends ``SELECT 1``): ``/healthz``.

Printed per run and as medians over ``--runs``: requests per second, the API process's CPU per
request (from /proc), and the answers that were not the expected status. Then the SQL statements
one check sends to the store, counted in-process on the same store. Figures, never asserted.

    .venv/bin/python bench/check_rps.py [--runs 5] [--seconds 8] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # for tests.integration (the in-process API server)

from sqlalchemy import event, insert, text  # noqa: E402

from lagscope.analysis.codes import LagSource, Verdict, io_state_code  # noqa: E402
from lagscope.collectors.snapshot import IoState  # noqa: E402
from lagscope.db import make_engine, make_session_factory  # noqa: E402
from lagscope.demo.processes import free_port  # noqa: E402
from lagscope.inventory import instances as inventory  # noqa: E402
from lagscope.models import Channel, Sample  # noqa: E402
from lagscope.security import check_tokens, users  # noqa: E402
from lagscope.security.secret_box import store_box  # noqa: E402
from lagscope.store_setup import upgrade  # noqa: E402

BATCH = 50_000
CLUSTER = "bench"


def fill(url: str, replicas: int, hours: float) -> dict[str, Any]:
    """The cluster, its history of polls, and the tokens."""
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    box = store_box(sessions, os.environ["LAGSCOPE_SECRET_KEY"])
    with sessions() as session, session.begin():
        cluster = inventory.create_cluster(session, CLUSTER, poll_interval_s=1.0)
        names = ["source", *(f"replica{i + 1}" for i in range(replicas))]
        for name in names:
            role = "source" if name == "source" else "replica"
            inventory.add_instance(
                session, box, cluster, name, "10.0.0.1", 3306, "u", "p", role, ""
            )
        session.flush()
        now = datetime.now(UTC)
        channel_ids = []
        for instance in cluster.instances:
            instance.last_polled_at = now
            if instance.role == "replica":
                channel = Channel(instance_id=instance.id, name="", first_seen_at=now)
                session.add(channel)
                session.flush()
                channel_ids.append(channel.id)
        cluster_id = cluster.id
        admin = users.create_user(session, "bench-admin", secrets.token_urlsafe(16), "admin")
        admin_token = users.issue_token(session, admin, "bench")
        _, check_token = check_tokens.create_check_token(session, "bench", [CLUSTER], "bench")
    start = time.time() - hours * 3600
    count = int(hours * 3600)
    with engine.begin() as conn:
        for channel_id in channel_ids:
            for first in range(0, count, BATCH):
                conn.execute(
                    insert(Sample),
                    [
                        _sample(channel_id, start + i)
                        for i in range(first, min(count, first + BATCH))
                    ],
                )
    engine.dispose()
    return {
        "cluster_id": cluster_id,
        "channel_ids": channel_ids,
        "admin_token": admin_token,
        "check_token": check_token,
        "rows": count * len(channel_ids),
    }


def _sample(channel_id: int, at: float) -> dict[str, Any]:
    return {
        "channel_id": channel_id,
        "ts": datetime.fromtimestamp(at, UTC),
        "verdict": Verdict.CAUGHT_UP,
        "lag_s": 0.2,
        "lag_source": LagSource.HEARTBEAT,
        "io_state": io_state_code(IoState.YES),
        "sql_running": True,
        "disagreement": False,
    }


def poller(url: str, channel_ids: list[int], stop: threading.Event) -> None:
    """One poll per channel a second, as the poll owner writes them."""
    engine = make_engine(url)
    try:
        while not stop.wait(1.0 - time.time() % 1.0):
            now = time.time()
            with engine.begin() as conn:
                conn.execute(insert(Sample), [_sample(cid, now) for cid in channel_ids])
    finally:
        engine.dispose()


# -- the load ---------------------------------------------------------------------------------


async def _one_connection(
    port: int, request: bytes, expect: int, until: float, counts: list[int]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.monotonic() < until:
            writer.write(request)
            status_line = await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
            counts[0 if int(status_line.split()[1]) == expect else 1] += 1
    finally:
        writer.close()


def load(port: int, path: str, token: str, expect: int, seconds: float, concurrency: int) -> Any:
    """In a process of its own: (answers as expected, others, client CPU s)."""
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n"
    ).encode()
    counts = [0, 0]

    async def run() -> None:
        until = time.monotonic() + seconds
        await asyncio.gather(
            *(_one_connection(port, request, expect, until, counts) for _ in range(concurrency))
        )

    cpu = time.process_time()
    asyncio.run(run())
    return counts[0], counts[1], time.process_time() - cpu


def _run_load(queue: Any, *args: Any) -> None:
    queue.put(load(*args))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    pid: int, port: int, path: str, token: str, seconds: float, concurrency: int
) -> dict[str, float]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    before = cpu_seconds(pid)
    started = time.monotonic()
    client = ctx.Process(
        target=_run_load, args=(queue, port, path, token, 200, seconds, concurrency)
    )
    client.start()
    ok, other, client_cpu = queue.get(timeout=seconds + 60)
    client.join()
    wall = time.monotonic() - started
    server_cpu = cpu_seconds(pid) - before
    done = ok + other
    return {
        "rps": ok / seconds,
        "cpu_ms": 1000 * server_cpu / done if done else float("nan"),
        "other": other,
        "client_cpu_share": client_cpu / wall,
    }


# -- statements per check ---------------------------------------------------------------------


def statements_per_check(url: str, made: dict[str, Any]) -> dict[str, float]:
    """The route run in this process (the app over ASGI, no server) with a counter on the
    store's engine."""
    import httpx

    from lagscope.api.app import create_app
    from lagscope.config import Settings

    engine = make_engine(url)
    app = create_app(Settings(database_url=url), make_session_factory(engine))
    seen = [0]

    def count(*_: Any) -> None:
        seen[0] += 1

    async def run() -> dict[str, float]:
        counts: dict[str, float] = {}
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {made['check_token']}"}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1", headers=headers
        ) as client:
            for name, path in (
                ("replica", f"/api/v1/check/{CLUSTER}/replica1"),
                ("cluster", f"/api/v1/check/{CLUSTER}"),
            ):
                await client.get(path)  # the once-a-minute last_used_at write happens here
                seen[0] = 0
                for _ in range(20):
                    assert (await client.get(path)).status_code == 200
                counts[name] = seen[0] / 20
        return counts

    event.listen(engine, "before_cursor_execute", count)
    try:
        return asyncio.run(run())
    finally:
        event.remove(engine, "before_cursor_execute", count)
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--hours", type=float, default=24.0)
    args = parser.parse_args()

    os.environ.setdefault("LAGSCOPE_SECRET_KEY", secrets.token_urlsafe(32))
    workdir = Path(tempfile.mkdtemp(prefix="check-rps-"))
    url = f"sqlite:///{workdir / 'store.db'}"
    began = time.monotonic()
    made = fill(url, args.replicas, args.hours)
    print(
        f"store: {made['rows']:,} polls of {args.replicas} replicas "
        f"({args.hours:g} h at 1 s), filled in {time.monotonic() - began:.1f} s"
    )
    stop = threading.Event()
    writer = threading.Thread(target=poller, args=(url, made["channel_ids"], stop), daemon=True)
    writer.start()
    port = free_port()
    env = {**os.environ, "LAGSCOPE_DATABASE_URL": url}
    api = subprocess.Popen(
        [sys.executable, "-m", "lagscope", "api", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    cases: list[tuple[str, str, str]] = [
        ("replica", f"/api/v1/check/{CLUSTER}/replica1?max_lag=5", made["check_token"]),
        ("cluster", f"/api/v1/check/{CLUSTER}?max_lag=5", made["check_token"]),
        ("status", f"/api/v1/clusters/{made['cluster_id']}/status", made["admin_token"]),
        ("healthz", "/healthz", ""),
    ]
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in cases}
    try:
        _wait_listening(port, api)
        for _name, path, token in cases:  # warm-up: imports, the first connections
            measure(api.pid, port, path, token, 1.0, args.concurrency)
        print(
            f"{args.runs} runs × {args.seconds:g} s per case, {args.concurrency} keep-alive "
            f"connections, one API process (pid {api.pid}), {os.cpu_count()} cores"
        )
        for run in range(args.runs):
            figures = []
            for name, path, token in cases:
                found = measure(api.pid, port, path, token, args.seconds, args.concurrency)
                results[name].append(found)
                figures.append(
                    f"{name} {found['rps']:,.0f}/s ({found['cpu_ms']:.2f} ms CPU each"
                    + (f", {found['other']:.0f} unexpected" if found["other"] else "")
                    + ")"
                )
            print(f"run {run + 1}: " + "; ".join(figures))
    finally:
        api.send_signal(signal.SIGINT)
        try:
            api.wait(timeout=15)
        except subprocess.TimeoutExpired:
            api.kill()
        stop.set()
        writer.join(timeout=5)
    print("medians:")
    for name, _, _ in cases:
        rows = results[name]
        print(
            f"  {name:8} {statistics.median(r['rps'] for r in rows):8,.0f} requests/s   "
            f"API CPU {statistics.median(r['cpu_ms'] for r in rows):.2f} ms per request   "
            f"client CPU {statistics.median(r['client_cpu_share'] for r in rows):.0%} of a core"
        )
    per_check = statements_per_check(url, made)
    print(
        "SQL statements per check (after the token's once-a-minute write): "
        + ", ".join(f"{name} {count:g}" for name, count in per_check.items())
    )
    engine = make_engine(url)
    with engine.connect() as conn:
        plan = conn.execute(
            text("EXPLAIN QUERY PLAN SELECT ts FROM samples WHERE channel_id IN (1, 2) AND ts >= 0")
        ).all()
    engine.dispose()
    print("samples read by:", "; ".join(str(row[-1]) for row in plan))


def _wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    import socket

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("lagscope api exited")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("lagscope api did not listen")


if __name__ == "__main__":
    main()
