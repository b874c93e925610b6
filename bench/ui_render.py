"""How fast the dashboard draws, in Debian's Chromium on localhost (printed, not asserted).

1. Cluster page to first chart: a fresh browser context (nothing cached) opens the explorer of a
   cluster with two replicas and an hour of 1 s samples; the figure is the time from navigation
   start until both lag lines are in the page (Performance.now() when they appear). Beside it,
   in the same run, the page's bare HTML load: the same URL in a fresh context with JavaScript
   off, from ``goto`` to its ``load`` event (the HTML and the stylesheet, no script run), and
   the ratio of the two medians.
2. 20 series × 2,000 points: the explorer of a cluster with 20 replicas, 2,000 s of 1 s samples
   each, asked for 2,000 points per line (``pts=2000``); the figure is the time from the end of
   the lag series' response (Resource Timing) until all 20 lines are drawn: building the chart
   model and rendering it. Since the app asks the explorer's lag series at start-up
   (frontend/src/prefetch.ts), the answer can arrive before the page's code has loaded, and
   then this figure includes that wait too: it is an upper bound of the drawing time.

Needs the UI build (``make ui``). The store is a throwaway SQLite file with hand-made rows; the
API runs in this process (demo mode, loopback). Targets (bench/README.md): ≤ 1 s and ≤ 300 ms.

    make ui && .venv/bin/python bench/ui_render.py [--runs 5]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import uvicorn
from playwright.sync_api import Page, sync_playwright
from sqlalchemy import insert

from lagscope.analysis.codes import LagSource, Verdict
from lagscope.api.app import create_app
from lagscope.api.webui import DEFAULT_DIST
from lagscope.config import PLACEHOLDER_SECRET, Settings
from lagscope.db import make_engine, make_session_factory
from lagscope.demo.processes import free_port
from lagscope.inventory import instances as inventory
from lagscope.models import Channel, Sample
from lagscope.security.demo_store import mark_demo_store
from lagscope.security.secret_box import SecretBox
from lagscope.store_setup import upgrade

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def make_cluster(sessions: Any, name: str, replicas: int, seconds: int, end: datetime) -> int:
    rng = random.Random(name)
    with sessions() as session, session.begin():
        box = SecretBox(PLACEHOLDER_SECRET, b"unpolled-salt")
        cluster = inventory.create_cluster(session, name)
        add = inventory.add_instance
        add(session, box, cluster, "source", "127.0.0.1", 3306, "m", "", "source")
        channels = []
        for n in range(replicas):
            replica = inventory.add_instance(
                session, box, cluster, f"r{n + 1}", "127.0.0.1", 4000 + n, "m", "", "replica"
            )
            channel = Channel(name="", first_seen_at=end - timedelta(seconds=seconds))
            replica.channels.append(channel)
            channels.append(channel)
        session.flush()
        rows = []
        for channel in channels:
            lag = rng.uniform(0, 5)
            for s in range(seconds):
                lag = max(0.0, lag + rng.gauss(0, 0.3) + 0.2 * math.sin(s / 120))
                rows.append(
                    {"channel_id": channel.id, "ts": end - timedelta(seconds=seconds - s),
                     "verdict": Verdict.CAUGHT_UP, "lag_s": round(lag, 3),
                     "lag_source": LagSource.HEARTBEAT, "heartbeat_lag_s": round(lag, 3),
                     "disagreement": False}
                )  # fmt: skip
        session.execute(insert(Sample), rows)
        return cluster.id


def serve(url: str) -> tuple[str, uvicorn.Server]:
    settings = Settings(database_url=url, secret_key=PLACEHOLDER_SECRET, demo=True)
    app = create_app(settings, make_session_factory(make_engine(url)))
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return f"http://127.0.0.1:{port}", server


def lines_drawn_at(page: Page, count: int) -> float:
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=lag-chart] .recharts-line-curve').length"
        " >= n",
        arg=count,
        polling="raf",
        timeout=60_000,
    )
    return float(page.evaluate("performance.now()"))


def lag_response_end(page: Page) -> float:
    return float(
        page.evaluate(
            "Math.max(...performance.getEntriesByType('resource')"
            ".filter(e => e.name.includes('metric=lag_s')).map(e => e.responseEnd))"
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not (DEFAULT_DIST / "index.html").is_file():
        raise SystemExit("no UI build: run `make ui` first")
    end = datetime.now(UTC).replace(microsecond=0)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        upgrade(url)
        sessions = make_session_factory(make_engine(url))
        with sessions() as session, session.begin():
            mark_demo_store(session)  # a throwaway store served in demo mode (no login)
        small = make_cluster(sessions, "two-replicas", 2, 3600, end)
        big = make_cluster(sessions, "twenty-replicas", 20, 2000, end)
        base, server = serve(url)
        start_iso = (end - timedelta(seconds=2000)).isoformat().replace("+00:00", "Z")
        big_path = f"/clusters/{big}?from={start_iso}&to={end.isoformat().replace('+00:00', 'Z')}"
        first, render, bare = [], [], []
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                for _ in range(args.runs):
                    context = browser.new_context(viewport={"width": 1440, "height": 900})
                    page = context.new_page()
                    page.goto(f"{base}/clusters/{small}?range=1h")
                    first.append(lines_drawn_at(page, 2))
                    context.close()
                    context = browser.new_context(
                        viewport={"width": 1440, "height": 900}, java_script_enabled=False
                    )
                    page = context.new_page()
                    began = time.perf_counter()
                    page.goto(f"{base}/clusters/{small}?range=1h", wait_until="load")
                    bare.append((time.perf_counter() - began) * 1000)
                    context.close()
                    context = browser.new_context(viewport={"width": 1440, "height": 900})
                    page = context.new_page()
                    page.goto(f"{base}{big_path}&pts=2000")
                    drawn = lines_drawn_at(page, 20)
                    render.append(drawn - lag_response_end(page))
                    context.close()
                browser.close()
        finally:
            server.should_exit = True
    print(f"Chromium, {args.runs} runs, fresh context each (no cache), 1440x900")
    print(
        f"cluster page to first chart drawn: median {statistics.median(first):.0f} ms "
        f"(min {min(first):.0f}, max {max(first):.0f})  target <= 1000 ms"
    )
    print(
        f"the same page's bare HTML load (JavaScript off): median {statistics.median(bare):.0f} ms"
        f" (min {min(bare):.0f}, max {max(bare):.0f}); first chart / bare HTML ="
        f" {statistics.median(first) / statistics.median(bare):.1f}x"
    )
    print(
        f"20 series x 2000 points, data received to drawn: median {statistics.median(render):.0f}"
        f" ms (min {min(render):.0f}, max {max(render):.0f})  target <= 300 ms"
    )


if __name__ == "__main__":
    main()
