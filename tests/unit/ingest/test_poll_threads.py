"""The reading threads (ingest/poll_threads.py): a round's results in by its deadline, the rest
named late and dropped when they come back, a call that raises counted out, threads reused."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from lagscope.ingest.poll_threads import PollThreads


class Key:
    def __init__(self, name: str) -> None:
        self.name = name


def answer(value: str) -> Callable[[], str]:
    return lambda: value


@pytest.fixture
def threads() -> Iterator[PollThreads]:
    pool = PollThreads(4, name="test-poll")
    yield pool
    pool.close()


def test_every_result_comes_back_with_its_key(threads: PollThreads) -> None:
    keys = [Key(str(i)) for i in range(10)]  # more calls than threads: they queue
    done, late = threads.run([(k, answer(k.name)) for k in keys], timeout_s=30)
    assert late == []
    assert sorted((k.name, r) for k, r in done) == sorted((k.name, k.name) for k in keys)


def test_a_call_past_the_deadline_is_late_and_its_result_dropped(threads: PollThreads) -> None:
    release = threading.Event()
    slow, fast = Key("slow"), Key("fast")

    def stuck() -> str:
        release.wait(30)
        return "slow"

    done, late = threads.run([(slow, stuck), (fast, answer("fast"))], timeout_s=0.2)
    assert [(k.name, r) for k, r in done] == [("fast", "fast")]
    assert late == [slow]
    release.set()
    # The next round is not given the old round's result.
    again, late_again = threads.run([(fast, answer("again"))], timeout_s=30)
    assert [(k.name, r) for k, r in again] == [("fast", "again")]
    assert late_again == []


def test_a_call_that_raises_is_counted_out_and_the_round_still_ends(
    threads: PollThreads,
) -> None:
    def broken() -> str:
        raise RuntimeError("a bug in a poll")

    bad, good = Key("bad"), Key("good")
    started = time.monotonic()
    done, late = threads.run([(bad, broken), (good, answer("ok"))], timeout_s=30)
    assert [(k.name, r) for k, r in done] == [("good", "ok")]
    assert late == [bad]
    assert time.monotonic() - started < 30  # ended when both were in, not at the deadline


def test_threads_are_reused_and_never_more_than_the_maximum(threads: PollThreads) -> None:
    for _ in range(20):
        threads.run([(Key(str(i)), answer("x")) for i in range(6)], timeout_s=30)
    names = {t.name for t in threading.enumerate() if t.name.startswith("test-poll")}
    assert 1 <= len(names) <= 4


def test_closed_threads_refuse_a_round_and_stop() -> None:
    pool = PollThreads(2, name="test-closing")
    pool.run([(Key("a"), answer("a"))], timeout_s=30)
    pool.close()
    with pytest.raises(RuntimeError):
        pool.run([(Key("b"), answer("b"))], timeout_s=30)
    for thread in [t for t in threading.enumerate() if t.name.startswith("test-closing")]:
        thread.join(timeout=30)
        assert not thread.is_alive()


def test_rounds_at_once_never_queue_behind_each_others_polls() -> None:
    """Batches are ticked side by side: a round whose polls hang must not hold back another
    round's polls for want of a thread (threads follow the calls out, up to the maximum)."""
    pool = PollThreads(16, name="test-rounds")
    release = threading.Event()
    try:
        hung = [(Key(f"hung{i}"), lambda: release.wait(30) and "late") for i in range(6)]
        first = threading.Thread(target=pool.run, args=(hung, 30.0))
        first.start()
        for _ in range(20):
            quick = [(Key(f"quick{i}"), answer("ok")) for i in range(6)]
            done, late = pool.run(quick, timeout_s=5.0)
            assert late == [] and len(done) == 6
        release.set()
        first.join(timeout=30)
    finally:
        release.set()
        pool.close()
