"""Take README's screenshot of the explorer (docs/explorer.png) from the real demo.

``make ui && .venv/bin/python scripts/screenshot.py`` starts ``lagscope demo --scenario tuning``
with short phases (its own MariaDB lab, Redis, worker, beat, heartbeat, API on a free port, store
in a temporary directory), waits until phase C has been reported, opens the explorer over the
story's window in Debian's Chromium at 1440×900 (the browser, arguments and viewport of
tests/e2e), waits until the lag lines, the parameter lanes, a change marker and a phase note are
drawn, and saves the view. Then it stops the demo with SIGINT, as Ctrl-C would, and waits for it.

Takes about 4 minutes; it changes nothing outside its temporary directory and docs/explorer.png.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, VIEWPORT  # noqa: E402

OUTPUT = ROOT / "docs" / "explorer.png"
# A: lag builds to ~35-40 s; B: relaxed flush; C: parallel apply drains it. Long enough for the
# lanes to read as segments and for the chart to show the rise and the fall.
PHASES = "45,45,60"
STORY_TIMEOUT_S = 900.0  # a busy 2-core box runs the story late, never early
DRAW_TIMEOUT_MS = 120_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Demo:
    """``lagscope demo`` as a child process whose output is followed line by line."""

    def __init__(self, workdir: Path, port: int) -> None:
        argv = [str(ROOT / ".venv" / "bin" / "lagscope"), "demo", "--port", str(port)]
        argv += ["--dir", str(workdir), "--phase-seconds", PHASES]
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT
        )
        self.lines: list[str] = []
        threading.Thread(target=self._follow, daemon=True).start()

    def _follow(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())
            print("demo |", line.rstrip(), flush=True)

    def wait_for(self, pattern: str, timeout_s: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if found := re.search(pattern, line):
                    return found
            if self.proc.poll() is not None:
                raise SystemExit(f"the demo exited ({self.proc.returncode}) before {pattern!r}")
            time.sleep(0.5)
        raise SystemExit(f"no {pattern!r} from the demo within {timeout_s:.0f} s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # the demo stops everything it started
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def shoot(base: str, started: float, output: Path) -> None:
    clusters = json.load(urllib.request.urlopen(f"{base}api/v1/clusters", timeout=30))
    cluster_id = clusters[0]["id"]
    window = f"from={iso(started - 5)}&to={iso(time.time() + 5)}"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.set_default_timeout(DRAW_TIMEOUT_MS)
            page.goto(f"{base}clusters/{cluster_id}?{window}")
            chart = page.get_by_test_id("lag-chart")
            expect(chart.locator(".recharts-line-curve")).to_have_count(2, timeout=DRAW_TIMEOUT_MS)
            lane = page.get_by_role("listitem", name=re.compile("slave_parallel_threads"))
            expect(lane.first).to_be_visible(timeout=DRAW_TIMEOUT_MS)
            expect(chart.locator(".marker-param-change").first).to_be_attached()
            expect(chart.locator(".marker-annotation").first).to_be_attached()
            page.wait_for_load_state("networkidle")
            output.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(output))
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    if not (ROOT / "frontend" / "dist" / "index.html").is_file():
        raise SystemExit("no UI build in frontend/dist: run `make ui` first")
    with tempfile.TemporaryDirectory(prefix="lagscope-screenshot-") as workdir:
        demo = Demo(Path(workdir), free_port())
        try:
            base = demo.wait_for(r"Lagscope demo: (http://\S+/) ", 300).group(1)
            started = time.time()
            demo.wait_for(r"scenario: phase C \(.* s — ", STORY_TIMEOUT_S)
            shoot(base, started, args.output)
        finally:
            demo.stop()
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
