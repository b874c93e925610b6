"""ProbeGate: per-user rate window (429) and a bounded queue (503), without a server."""

from __future__ import annotations

import anyio
import pytest

from lagscope.collectors.executor import ConnectionSpec
from lagscope.errors import Overloaded, ServerUnreachable, Throttled
from lagscope.inventory import probe as probe_service


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def unreachable(spec: ConnectionSpec) -> probe_service.ProbeReport:
    raise ServerUnreachable(spec.server, probe_service.NO_SERVER)


def test_rate_is_per_user_and_says_when_to_retry(monkeypatch):
    monkeypatch.setattr(probe_service, "probe", unreachable)
    clock = Clock()
    gate = probe_service.ProbeGate(concurrency=2, queue=2, per_minute=3, clock=clock)
    spec = ConnectionSpec("192.0.2.1", connect_timeout_s=0.0)

    async def attempts(user: str) -> str:
        try:
            await gate.test(user, spec)
        except Throttled as exc:
            return f"429 after {exc.retry_after_s:.0f}"
        except ServerUnreachable:
            return "502"
        return "200"

    async def main() -> list[str]:
        seen = [await attempts("ann") for _ in range(4)]
        seen.append(await attempts("bob"))  # another user is not held back by ann
        clock.now += 45
        seen.append(await attempts("ann"))
        clock.now += 16  # the first three left the window
        seen.append(await attempts("ann"))
        return seen

    assert anyio.run(main) == ["502", "502", "502", "429 after 60", "502", "429 after 15", "502"]


def test_beyond_the_queue_the_answer_is_503_at_once(monkeypatch):
    release = anyio.Event()
    started: list[str] = []

    def slow(spec: ConnectionSpec) -> probe_service.ProbeReport:
        started.append(spec.host)
        anyio.from_thread.run(release.wait)  # hold the pool like a silent server would
        raise ServerUnreachable(spec.server, probe_service.NO_SERVER)

    monkeypatch.setattr(probe_service, "probe", slow)
    gate = probe_service.ProbeGate(concurrency=2, queue=1, per_minute=100)
    outcomes: list[str] = []

    async def one(i: int) -> None:
        try:
            await gate.test(f"user{i}", ConnectionSpec(f"host{i}", connect_timeout_s=0.0))
        except Overloaded as exc:
            assert exc.retry_after_s > 0
            outcomes.append("503")
        except ServerUnreachable:
            outcomes.append("502")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(one, i)
            with anyio.fail_after(30):
                while len(started) < 2 or len(outcomes) < 2:
                    await anyio.sleep(0.01)
            # Two running, one waiting, two refused without waiting for anything.
            assert sorted(outcomes) == ["503", "503"] and len(started) == 2
            release.set()
        assert sorted(outcomes) == ["502", "502", "502", "503", "503"]

    anyio.run(main)


def test_a_quick_failure_is_not_answered_before_the_timeout(monkeypatch):
    monkeypatch.setattr(probe_service, "probe", unreachable)
    gate = probe_service.ProbeGate(concurrency=1, queue=0, per_minute=10)

    async def main() -> float:
        started = anyio.current_time()
        with pytest.raises(ServerUnreachable):
            await gate.test("ann", ConnectionSpec("192.0.2.1", connect_timeout_s=0.3))
        return anyio.current_time() - started

    assert anyio.run(main) >= 0.3
