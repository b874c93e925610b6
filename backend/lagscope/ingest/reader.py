"""Read every instance of a cluster at (almost) the same instant, without letting one wait.

Per worker process: one cached :class:`InstancePoller` (one open connection) per instance and a
thread pool. A tick submits every instance at once, so the source is read together with its
replicas, and waits at most ``deadline_s``: an instance that has not answered by then is
reported unreachable for this tick while its poll finishes in the background, and the next tick
skips it until that poll returns. A dead or frozen server therefore costs the others nothing.

The reader serves every cluster a process polls, so no single tick knows which instances are
still monitored: a connection no tick has used for ``idle_close_s`` (a deleted or disabled
instance, a cluster now polled by another worker) is closed.

An instance no MySQL/MariaDB server has answered for (a refused, silent or foreign port) reads
exactly what the connection test says of it (inventory/probe.py): "unreachable, or not a
MySQL/MariaDB server", at the tick's time, whether it failed at once, after the deadline or is
still connecting from an earlier tick; its ``last_error`` must not tell an editor more about a
port than the test does. The real reason goes to the worker's log, once per change.

A poll never raises out of :meth:`ClusterReader.read`: a server's odd answer is a failed
reading of that server (``UnexpectedAnswer``, from the poller), and anything else a poll thread
raises — a bug — is too (``PollFailed``, its traceback logged once per change), so the other
servers of the tick are recorded as usual.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from lagscope.collectors.answer_limits import describe
from lagscope.collectors.executor import ConnectionSpec, Executor, PyMySQLExecutor
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.poller import InstancePoller
from lagscope.collectors.snapshot import InstanceSnapshot
from lagscope.errors import CollectorError, LagscopeError, ServerUnreachable
from lagscope.ingest.poll_threads import PollThreads
from lagscope.inventory.probe import NO_SERVER, before_mysql

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Target:
    """What to read and how; compared between ticks to notice an edited instance."""

    instance_id: int
    spec: ConnectionSpec
    heartbeat: HeartbeatTable | None = None
    extra_params: tuple[str, ...] = ()
    params_every_s: float = 0.0


@dataclass(frozen=True, slots=True)
class PollResult:
    """One instance at one tick: a snapshot, or why there is none. ``read_at`` is epoch s."""

    instance_id: int
    read_at: float
    snapshot: InstanceSnapshot | None = None
    error: str | None = None
    error_kind: str | None = None

    @property
    def ok(self) -> bool:
        return self.snapshot is not None


@dataclass(slots=True)
class _Entry:
    target: Target
    poller: InstancePoller
    last_used: float
    busy: threading.Lock = field(default_factory=threading.Lock)
    # A refused login that came back after its tick's deadline (the connection-control plugin
    # delays failed logins by seconds): reported at the next tick instead of trying again, so
    # the back-off sees it.
    late_refusal: PollResult | None = None
    # The real reason last hidden behind NO_SERVER (logged when it changes).
    hidden: str | None = None
    # The last unexpected exception of a poll thread (its traceback logged when it changes).
    crashed: str | None = None


class ClusterReader:
    """Cached pollers and a thread pool for one worker process (create it after the fork)."""

    def __init__(
        self,
        max_threads: int = 32,
        executor_factory: Callable[[ConnectionSpec], Executor] = PyMySQLExecutor,
        clock: Callable[[], float] = time.time,
        idle_close_s: float = 300.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pid = os.getpid()
        self._threads = PollThreads(max_threads)
        self._entries: dict[int, _Entry] = {}
        self._lock = threading.Lock()
        self._factory = executor_factory
        self._clock = clock
        self._idle_close_s = idle_close_s
        self._monotonic = monotonic
        self._pruned_at = monotonic()

    def read(
        self, targets: Sequence[Target], deadline_s: float, behind: Collection[int] = ()
    ) -> list[PollResult]:
        """One tick's readings of ``targets``. ``behind``: instance ids the store shows behind
        at their last tick (whichever worker process polled it): their cause readings are taken
        in this poll although this process's previous poll of them may be older."""
        if os.getpid() != self._pid:
            raise RuntimeError("ClusterReader used across a fork: create one per process")
        tick_at = self._clock()
        readings: list[PollResult] = []
        calls: list[tuple[_Entry, Callable[[], PollResult]]] = []
        for target in targets:
            entry = self._entry(target)
            if not entry.busy.acquire(blocking=False):
                busy = "the previous poll has not returned yet"
                readings.append(self._unanswered(entry, tick_at) or self._failed(target, busy))
                continue
            if (refusal := entry.late_refusal) is not None:
                entry.late_refusal = None
                entry.busy.release()
                readings.append(refusal)
                continue
            hinted = target.instance_id in behind
            calls.append((entry, functools.partial(self._poll, entry, tick_at, hinted)))
        done, late = self._threads.run(calls, deadline_s)
        for entry, reading in done:
            if entry.late_refusal is reading:
                entry.late_refusal = None  # in time after all: reported now, once
            readings.append(reading)
        for entry in late:
            silent = f"no answer within {deadline_s:.2f} s"
            readings.append(self._unanswered(entry, tick_at) or self._failed(entry.target, silent))
        self._close_idle()
        return sorted(readings, key=lambda r: r.instance_id)

    def close(self) -> None:
        with self._lock:
            entries, self._entries = list(self._entries.values()), {}
        for entry in entries:
            entry.poller.close()
        self._threads.close()

    def close_all_but(self, keep: Collection[int]) -> None:
        """Close the connections of every instance not in ``keep`` (shards this process no
        longer polls); a poll still running keeps its connection until it returns."""
        with self._lock:
            gone = [i for i, e in self._entries.items() if i not in keep and not e.busy.locked()]
            closing = [self._entries.pop(i) for i in gone]
        for entry in closing:
            entry.poller.close()

    def _close_idle(self) -> None:
        now = self._monotonic()
        if now - self._pruned_at < self._idle_close_s / 10:
            return  # a sweep over every entry is cheap, but not needed every tick
        self._pruned_at = now
        with self._lock:
            idle = [
                i
                for i, e in self._entries.items()
                if now - e.last_used > self._idle_close_s and not e.busy.locked()
            ]
            closing = [self._entries.pop(i) for i in idle]
        for entry in closing:
            entry.poller.close()

    def _entry(self, target: Target) -> _Entry:
        with self._lock:
            entry = self._entries.get(target.instance_id)
            if entry is not None and entry.target != target:
                entry.poller.close()  # edited instance: new credentials, heartbeat or params
                entry = None
            if entry is not None:
                entry.last_used = self._monotonic()
            else:
                poller = InstancePoller(
                    self._factory(target.spec),
                    heartbeat=target.heartbeat,
                    extra_params=target.extra_params,
                    clock=self._clock,
                    slow_every_s=target.params_every_s,
                )
                entry = _Entry(target, poller, self._monotonic())
                self._entries[target.instance_id] = entry
            return entry

    def _poll(self, entry: _Entry, tick_at: float, behind: bool = False) -> PollResult:
        reading: PollResult | None = None
        connected = _connected(entry)
        try:
            snapshot = entry.poller.poll(behind)
            reading = PollResult(entry.target.instance_id, snapshot.taken_at.timestamp(), snapshot)
            entry.hidden = None
        except CollectorError as exc:
            if not connected and before_mysql(exc):
                if entry.hidden != str(exc):
                    entry.hidden = str(exc)
                    log.info("poll: no MySQL/MariaDB server at %s: %s", exc.server, exc)
                reading = self._no_server(entry, tick_at)
            else:
                reading = self._failed(entry.target, str(exc), type(exc).__name__)
        except LagscopeError as exc:  # e.g. a heartbeat table name that is not an identifier
            reading = self._failed(entry.target, str(exc), type(exc).__name__)
        except Exception as exc:
            reading = self._crashed(entry, exc)
        finally:
            if reading is not None and reading.error_kind == "LoginRefused":
                # Kept before the entry is free: a tick that finds it free must also find the
                # refusal, or it would log in again (a done-callback runs after the release).
                # read() drops it when the refusal came back within its own deadline.
                entry.late_refusal = reading
            entry.busy.release()
        return reading

    def _crashed(self, entry: _Entry, exc: Exception) -> PollResult:
        """The last line of defence: whatever escaped the poller costs this server's reading
        only; its connection is closed (its state is unknown)."""
        what = describe(exc)
        if entry.crashed != what:
            entry.crashed = what
            log.exception("poll of %s failed unexpectedly", entry.poller.server)
        try:
            entry.poller.close()
        except Exception:
            log.warning("closing %s after a failed poll failed too", entry.poller.server)
        error = f"{entry.poller.server}: the poll failed: {what}"
        return self._failed(entry.target, error, "PollFailed")

    def _failed(self, target: Target, error: str, kind: str = "ServerUnreachable") -> PollResult:
        return PollResult(target.instance_id, self._clock(), None, error, kind)

    def _unanswered(self, entry: _Entry, tick_at: float) -> PollResult | None:
        """A late or still-busy poll of a server that has not answered as MySQL yet: the same
        reading as a refused port, at the same time (None: it had answered)."""
        return None if _connected(entry) else self._no_server(entry, tick_at)

    @staticmethod
    def _no_server(entry: _Entry, tick_at: float) -> PollResult:
        error = ServerUnreachable(entry.poller.server, NO_SERVER)
        return PollResult(entry.target.instance_id, tick_at, None, str(error), "ServerUnreachable")


def _connected(entry: _Entry) -> bool:
    """Whether the entry's connection is open (a MySQL server answered and the login worked).
    An executor that does not say (a recorded one in tests) counts as connected."""
    return bool(getattr(entry.poller.executor, "connected", True))
