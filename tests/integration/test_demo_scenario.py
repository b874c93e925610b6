"""`lagscope demo --scenario tuning` tells its story, and the API shows it (docs/demo.md).

The demo runs headless with short phases; everything is checked through the HTTP API as a user
(or the UI) sees it: samples for the three servers, lag rising in phase A on both replicas, and
the journal listing phase B's flush changes and phase C's parallel-apply changes on each replica
in the same step as the scenario's note. Nothing asserts how fast this machine drains a backlog.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from .stack import free_port
from .test_demo import processes_working_in
from .waiting import wait_until

pytestmark = pytest.mark.integration

PHASE_S = 20  # the journal below: settle 5 s, then 5+ samples in each 20 s window
FLUSH = {
    "innodb_flush_log_at_trx_commit": ("1", "2"),
    "sync_binlog": ("1", "0"),
    "sync_relay_log": ("1", "0"),
    "sync_relay_log_info": ("1", "0"),
    "sync_master_info": ("1", "0"),
}
PARALLEL = {"slave_parallel_threads": ("0", "4")}


class Demo:
    def __init__(self, tmp_path: Path) -> None:
        self.log_path = tmp_path / "demo.log"
        self.port = free_port()
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lagscope",
                "demo",
                "--scenario",
                "tuning",
                "--phase-seconds",
                str(PHASE_S),
                "--port",
                str(self.port),
                "--dir",
                str(tmp_path / "demo"),
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{self.port}/api/v1"

    def get(self, path: str, **params: Any) -> Any:
        assert self.proc.poll() is None, self.log_path.read_text()
        response = httpx.get(f"{self.url}{path}", params=params, timeout=10)
        response.raise_for_status()
        return response.json()

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
            raise
        finally:
            self._log.close()


def iso(moment: datetime) -> str:
    return moment.isoformat()


def test_tuning_scenario_builds_lag_then_the_journal_shows_each_step(tmp_path):
    demo = Demo(tmp_path)
    began = datetime.now(UTC) - timedelta(minutes=1)
    try:
        cluster = wait_until(
            lambda: [c for c in demo.get("/clusters") if c["name"] == "demo"],
            timeout_s=120,
            interval_s=1,
            message="the demo cluster",
            ignore=(httpx.HTTPError,),
        )[0]
        cid = cluster["id"]
        wait_until(
            lambda: all(i["last_ok_at"] for i in demo.get("/clusters")[0]["instances"]),
            timeout_s=120,
            interval_s=1,
            message="all three servers polled",
        )

        def notes() -> dict[str, dict[str, Any]]:
            end = datetime.now(UTC) + timedelta(minutes=1)
            found = demo.get("/annotations", cluster_id=cid, start=iso(began), end=iso(end))
            return {n["text"][:7]: n for n in found if "scenario" in n["tags"]}

        def phase_notes() -> dict[str, dict[str, Any]]:
            return {k: n for k, n in notes().items() if k.startswith("phase ")}

        # Three phases and a generous margin: the box may be shared and slow to start.
        wait_until(
            lambda: "phase C" in notes(),
            timeout_s=2 * PHASE_S + 300,
            interval_s=2,
            message="the scenario to reach phase C",
        )
        # The story opens with a blocked applier (a range note, closed when it was undone).
        opening = notes()["inciden"]
        assert "blocked by a session on the replica" in opening["text"]
        assert {"scenario", "incident", "blocked_by_session"} <= set(opening["tags"])
        assert opening["ends_at"] is not None
        by_phase = phase_notes()
        assert set(by_phase) == {"phase A", "phase B", "phase C"}
        assert datetime.fromisoformat(opening["ends_at"]) <= datetime.fromisoformat(
            by_phase["phase A"]["starts_at"]
        )
        assert all(n["author"] == "scenario" for n in by_phase.values())
        phase_at = {k[-1]: datetime.fromisoformat(n["starts_at"]) for k, n in by_phase.items()}

        instances = {i["name"]: i["id"] for i in cluster["instances"]}
        check_samples_for_all_servers(demo, instances, began)
        check_lag_rose_in_phase_a(demo, instances, phase_at["A"], phase_at["B"])

        steps = wait_until(
            lambda: journal_steps_with_changes(demo, cid, began),
            timeout_s=120,
            interval_s=2,
            message="the journal to list phase B's and phase C's changes on both replicas",
        )
        print_journal(steps)
    finally:
        demo.stop()
    assert demo.proc.returncode == 0, demo.log_path.read_text()
    assert processes_working_in(tmp_path) == [], "redis/worker/beat/heartbeat left behind"
    log = demo.log_path.read_text()
    assert "scenario: phase A (strict durability" in log  # the per-phase figures are printed
    print("\n".join(line for line in log.splitlines() if line.startswith("scenario: phase")))


def series(demo: Demo, metric: str, start: datetime, end: datetime, **ids: int) -> list[Any]:
    found = demo.get("/series", metric=metric, start=iso(start), end=iso(end), points=2000, **ids)
    return [p for s in found["series"] for p in s["points"]]


def check_samples_for_all_servers(demo: Demo, instances: dict[str, int], since: datetime) -> None:
    end = datetime.now(UTC) + timedelta(seconds=5)
    # The source has no channel: its samples are its own metrics (round trip, commit rate).
    assert series(demo, "round_trip_s", since, end, instance_id=instances["source"])
    assert series(demo, "commits_per_s", since, end, instance_id=instances["source"])
    for replica in ("replica1", "replica2"):
        assert series(demo, "lag_s", since, end, instance_id=instances[replica]), replica


def check_lag_rose_in_phase_a(
    demo: Demo, instances: dict[str, int], a_at: datetime, b_at: datetime
) -> None:
    for replica in ("replica1", "replica2"):
        points = series(demo, "lag_s", a_at, b_at, instance_id=instances[replica])
        lags = [p["max"] for p in points if p["max"] is not None]
        assert len(lags) >= 5, (replica, points)
        first, peak = lags[0], max(lags[len(lags) // 2 :])
        print(f"phase A, {replica}: lag {first:.1f} s at its start, {peak:.1f} s at most later")
        # Strict flush makes either replica apply several times slower than the source commits.
        assert peak >= first + 5, (replica, lags)


def journal_steps_with_changes(
    demo: Demo, cid: int, began: datetime
) -> dict[str, dict[str, Any]] | None:
    """Phase B's and C's steps once each holds its note and every expected change on both
    replicas; the journal's windows scaled to the short phases."""
    end = datetime.now(UTC) + timedelta(minutes=1)
    journal = demo.get(
        f"/clusters/{cid}/journal",
        start=iso(began),
        end=iso(end),
        width_s=PHASE_S,
        settle_s=5,
        min_samples=5,
    )
    found: dict[str, dict[str, Any]] = {}
    for step in journal["steps"]:
        texts = [a["text"] for a in step["annotations"] if "scenario" in a["tags"]]
        for phase, expected in (("B", FLUSH), ("C", PARALLEL)):
            if any(t.startswith(f"phase {phase}:") for t in texts):
                changes = {
                    (c["instance_name"], c["name"]): (c["old_value"], c["new_value"])
                    for c in step["changes"]
                }
                wanted = {
                    (replica, name): values
                    for replica in ("replica1", "replica2")
                    for name, values in expected.items()
                }
                if all(changes.get(key) == values for key, values in wanted.items()):
                    found[phase] = step
    return found if set(found) == {"B", "C"} else None


def print_journal(steps: dict[str, dict[str, Any]]) -> None:
    for phase, step in sorted(steps.items()):
        for impact in step["impacts"]:
            before, after = impact["before"], impact["after"]
            print(
                f"journal phase {phase} {impact['channel']['instance_name']}: "
                f"lag p50 {before['lag_p50']} -> {after['lag_p50']} s, "
                f"{impact['impact']['verdict']}"
            )
