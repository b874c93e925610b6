"""Test a connection as an operator would before adding an instance (``POST /instances/test``).

The endpoint connects wherever an editor points it, so it is also a tool for mapping a network.
Three things keep it from being one, and from hurting the API while it waits on silent hosts:

- Every failure to reach a MySQL/MariaDB server reads the same: a refused port, a silent one
  and a port that speaks another protocol all answer "unreachable, or not a MySQL/MariaDB
  server", with no error number, no driver message and no timing; and such an answer never
  comes sooner than the test's own timeout, so the response time does not tell them apart
  either. The real reason goes to the server log. Once a server has answered as MySQL (access
  denied, an unsupported version, a missing privilege) the detail is the operator's to see.
- :class:`ProbeGate` runs tests in a small pool of their own with a bounded queue (503 beyond
  it) and a per-user rate (429 beyond it), so forty slow tests hold neither the API's shared
  worker threads nor its database connections.
- ``LAGSCOPE_ALLOWED_TARGETS`` applies (collectors/targets.py), through the connection spec.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import anyio
import anyio.to_thread

from lagscope.collectors import privileges
from lagscope.collectors.answer_limits import ODD_ANSWER, odd_answer
from lagscope.collectors.executor import BatchFailed, ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.poller import InstancePoller
from lagscope.collectors.snapshot import InstanceSnapshot
from lagscope.errors import CollectorError, Overloaded, QueryFailed, ServerUnreachable, Throttled

log = logging.getLogger("lagscope.probe")
T = TypeVar("T")

NO_SERVER = "unreachable, or not a MySQL/MariaDB server"
# What a refused, silent or foreign port raises while connecting: before a MySQL greeting and
# login there is nothing the caller should learn. (AccessDenied, and whatever a server that
# did answer as MySQL refuses, keep their detail.)
_BEFORE_MYSQL = (ServerUnreachable, QueryFailed)
# Below this, an error number came in a server's own error packet (ER_*: 1130 "host is not
# allowed to connect", 1040 too many connections …): only a MySQL/MariaDB server sends one, so
# it says nothing a port scan wants and much an operator needs. 2000 and up are the client's.
_FIRST_CLIENT_ERROR = 2000


def before_mysql(exc: CollectorError) -> bool:
    """Whether ``exc``, raised while connecting, came before any MySQL/MariaDB server answered
    (a refused, silent or foreign port): then it reads :data:`NO_SERVER` and nothing more, in
    the connection test and in an instance's stored ``last_error`` alike (ingest/reader.py)."""
    return isinstance(exc, _BEFORE_MYSQL) and (exc.code is None or exc.code >= _FIRST_CLIENT_ERROR)


@dataclass(frozen=True, slots=True)
class ProbeReport:
    snapshot: InstanceSnapshot
    privileges: privileges.PrivilegeReport


def probe(spec: ConnectionSpec) -> ProbeReport:
    """One snapshot and the user's privileges; raises the collector error naming the cause,
    or the uniform ``ServerUnreachable(NO_SERVER)`` when no MySQL server answered."""
    executor = PyMySQLExecutor(spec)
    poller = InstancePoller(executor)
    try:
        try:
            executor.connect()
        except _BEFORE_MYSQL as exc:
            if not before_mysql(exc):
                raise
            log.info("connection test: no MySQL/MariaDB server at %s: %s", spec.server, exc)
            raise ServerUnreachable(spec.server, NO_SERVER) from exc
        snapshot = poller.poll()
        try:
            grants = executor.run([privileges.STATEMENT])[0]
            return ProbeReport(snapshot, privileges.parse(snapshot.flavor.product, grants))
        except BatchFailed as failed:
            raise failed.error from failed
        except ODD_ANSWER as exc:
            raise odd_answer(spec.server, exc, "privileges") from exc
    finally:
        poller.close()


@dataclass(frozen=True, slots=True)
class _Attempt:
    report: ProbeReport | None
    error: CollectorError | None
    elapsed_s: float


def _attempt(spec: ConnectionSpec, clock: Callable[[], float]) -> _Attempt:
    started = clock()
    try:
        return _Attempt(probe(spec), None, clock() - started)
    except CollectorError as exc:
        return _Attempt(None, exc, clock() - started)


class ProbeGate:
    """Admission and a pool of their own for connection tests; one per API process.

    All bookkeeping happens on the event loop (no locks needed); only the test itself runs in
    a worker thread, under this gate's :class:`anyio.CapacityLimiter` instead of the default
    limiter every sync route shares. The rate window is per process: with several API
    processes a user gets ``per_minute`` in each.
    """

    WINDOW_S = 60.0

    def __init__(
        self,
        concurrency: int,
        queue: int,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._concurrency = concurrency
        self._limiter: anyio.CapacityLimiter | None = None  # made on the loop, at first use
        self._max_admitted = concurrency + queue
        self._admitted = 0
        self._per_minute = per_minute
        self._recent: dict[str, deque[float]] = {}
        self._clock = clock

    async def run(self, user: str, work: Callable[[], T]) -> T:
        """Run ``work`` (something that connects to a server) in this gate's pool, admitted
        and counted like a connection test: replica discovery goes through here too."""
        self._admit(user)
        self._admitted += 1
        try:
            if self._limiter is None:
                self._limiter = anyio.CapacityLimiter(self._concurrency)
            return await anyio.to_thread.run_sync(work, limiter=self._limiter)
        finally:
            self._admitted -= 1

    async def test(self, user: str, spec: ConnectionSpec) -> ProbeReport:
        attempt = await self.run(user, partial(_attempt, spec, self._clock))
        if attempt.report is not None:
            return attempt.report
        assert attempt.error is not None
        if isinstance(attempt.error, ServerUnreachable) and attempt.error.detail == NO_SERVER:
            # A refused port fails at once, a silent one after the timeout: wait out the rest
            # (off the pool) so the time taken does not say which it was.
            await anyio.sleep(max(0.0, spec.connect_timeout_s - attempt.elapsed_s))
        raise attempt.error

    def _admit(self, user: str) -> None:
        now = self._clock()
        self._forget_idle(now)
        recent = self._recent.setdefault(user, deque())
        while recent and recent[0] <= now - self.WINDOW_S:
            recent.popleft()
        if len(recent) >= self._per_minute:
            raise Throttled(
                f"at most {self._per_minute} connection tests a minute per user",
                recent[0] + self.WINDOW_S - now,
            )
        if self._admitted >= self._max_admitted:
            # Everyone's slots are taken by slow tests; a retry after a typical timeout may
            # find one free. Not counted against the user's rate: nothing ran.
            raise Overloaded("too many connection tests are running; try again shortly", 5.0)
        recent.append(now)

    def _forget_idle(self, now: float) -> None:
        # Bounded memory: drop users whose window is empty (cheap at the rates allowed here).
        idle = [u for u, r in self._recent.items() if not r or r[-1] <= now - self.WINDOW_S]
        for user in idle:
            del self._recent[user]
