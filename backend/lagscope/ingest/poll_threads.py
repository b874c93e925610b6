"""The reading threads of a worker process: a tick's polls run side by side, and the tick waits
for all of them or its deadline, whichever comes first.

``concurrent.futures`` did the same with a ``Future`` per poll: a condition, its lock and a
waiter on every future for each ``wait``, a few microseconds each, for every server polled
every second (the second largest cost of handing out the polls in a py-spy profile of the poll
owner, after the interpreter changing hands). Here a round is one counter and one event, and
the polls go to long-lived threads through one ``queue.SimpleQueue`` (written in C).

A poll still running when its round's deadline passes keeps its thread; its result is dropped
(the reader reports the server unanswered and skips it until that poll returns). Threads are
started as the rounds need them, up to ``max_threads``.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

K = TypeVar("K")
R = TypeVar("R")


class _Round(Generic[K, R]):
    """One ``run``: the results in, and how many polls are still out."""

    __slots__ = ("closed", "done", "left", "lock", "results")

    def __init__(self, count: int) -> None:
        self.left = count
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.results: list[tuple[K, R]] = []
        self.closed = False

    def finish(self, key: K, result: R, answered: bool = True) -> None:
        with self.lock:
            if self.closed:
                return  # past the deadline: the caller reported this poll unanswered
            if answered:
                self.results.append((key, result))
            self.left -= 1
            if self.left == 0:
                self.done.set()


_Task = tuple[Callable[[], object], object, _Round[object, object]]
_STOP = None


class PollThreads:
    def __init__(self, max_threads: int, name: str = "lagscope-poll") -> None:
        self._max = max_threads
        self._name = name
        self._tasks: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        # Calls handed out and not finished, late ones included: as many threads as that are
        # started (up to the maximum), so the rounds of batches ticked at once never queue
        # behind each other's polls, as ThreadPoolExecutor's reservations ensured too.
        self._outstanding = 0
        self._closed = False

    def run(
        self, calls: Sequence[tuple[K, Callable[[], R]]], timeout_s: float
    ) -> tuple[list[tuple[K, R]], list[K]]:
        """Each ``(key, call)`` on a thread of its own; waits at most ``timeout_s`` for all of
        them. Returns the results in by then, as ``(key, result)``, and the keys still out.
        A call must not raise (the reader's poll catches everything): one that does is logged
        and counted out."""
        if not calls:
            return [], []
        todo: _Round[K, R] = _Round(len(calls))
        self._start_threads(len(calls))
        for key, call in calls:
            self._tasks.put((call, key, todo))  # type: ignore[arg-type]
        todo.done.wait(timeout_s)
        with todo.lock:
            todo.closed = True
            results = list(todo.results)
        answered = {id(key) for key, _ in results}
        late = [key for key, _ in calls if id(key) not in answered]
        return results, late

    def close(self) -> None:
        """Stop the idle threads now and the busy ones once their poll returns (not waited
        for)."""
        with self._lock:
            self._closed = True
            count = len(self._threads)
        while True:  # polls not started yet are dropped, as cancelled futures were
            try:
                task = self._tasks.get_nowait()
            except queue.Empty:
                break
            if task is not _STOP:
                _, key, todo = task
                todo.finish(key, None, answered=False)
                with self._lock:
                    self._outstanding -= 1
        for _ in range(count):
            self._tasks.put(_STOP)

    def _start_threads(self, wanted: int) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the reading threads are closed")
            self._outstanding += wanted
            missing = min(self._outstanding, self._max) - len(self._threads)
            for _ in range(max(0, missing)):
                thread = threading.Thread(
                    target=self._work, name=f"{self._name}_{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()

    def _work(self) -> None:
        tasks = self._tasks
        while True:
            task = tasks.get()
            if task is _STOP:
                return
            call, key, todo = task
            try:
                todo.finish(key, call())
            except BaseException:
                log.exception("a reading thread's call raised")
                todo.finish(key, None, answered=False)
            finally:
                with self._lock:
                    self._outstanding -= 1
