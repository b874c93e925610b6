"""Lagscope's heartbeat writer: the source stamps its own clock into ``lagscope.heartbeat``.

SQL (source only, with the narrowly granted heartbeat login — INSERT, UPDATE on the table):
``INSERT INTO `lagscope`.`heartbeat` (server_id, ts) VALUES (%s, UTC_TIMESTAMP(6))
ON DUPLICATE KEY UPDATE ts = UTC_TIMESTAMP(6)``.

The server_id is the source's ``@@server_id`` read once per connection and sent as a literal:
``@@server_id`` inside the statement would be evaluated on each replica under statement-based
replication (REPLICATION.md §6.1). ``UTC_TIMESTAMP(6)`` is the source's clock; replicas see the
value the source wrote (row events copy it; statement events carry the source's timestamp).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.values import as_int
from lagscope.errors import (
    ClearTextAuthRefused,
    CollectorError,
    InvalidInput,
    LoginRefused,
    Sha2AuthRefused,
)


class HeartbeatWriter:
    def __init__(
        self,
        spec: ConnectionSpec,
        table: HeartbeatTable | None = None,
        executor_factory: Callable[[ConnectionSpec], PyMySQLExecutor] = PyMySQLExecutor,
    ) -> None:
        self.table = table or HeartbeatTable()
        if self.table.kind != "lagscope":
            raise InvalidInput("only the Lagscope heartbeat table is written by Lagscope")
        self._executor = executor_factory(spec)
        self._server_id: int | None = None
        self.last_error: CollectorError | None = None

    @property
    def server(self) -> str:
        return self._executor.server

    def beat(self) -> None:
        """Write one heartbeat; raises a CollectorError (and reconnects next time) on failure."""
        if self._server_id is None or not self._executor.connected:
            rows = self._executor.run(["SELECT @@server_id"])[0].rows
            self._server_id = as_int(rows[0][0]) if rows else None
        sql = (
            f"INSERT INTO {self.table.qualified} (server_id, ts) "  # noqa: S608 - validated name
            "VALUES (%s, UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE ts = UTC_TIMESTAMP(6)"
        )
        self._executor.write(sql, (self._server_id,))

    def run(self, interval_s: float, stop: threading.Event, max_backoff_s: float = 300.0) -> None:
        """Beat every ``interval_s`` on a fixed schedule until ``stop`` is set.

        A refused login (or one whose password Lagscope withheld) is retried after 2, 4, 8 …
        intervals (capped at ``max_backoff_s``), not every beat: each refusal counts towards the
        heartbeat account's lock-out on the source.
        New credentials start a new writer (HeartbeatService), so a fixed password is tried
        at once."""
        next_at = time.monotonic()
        refusals = 0
        while not stop.is_set():
            try:
                self.beat()
                self.last_error, refusals = None, 0
            except (LoginRefused, ClearTextAuthRefused, Sha2AuthRefused) as exc:
                # The two refusals of ours: the password was withheld, the handshake dropped
                # (MySQL counts that towards max_connect_errors): no retry every beat either.
                self.last_error, refusals = exc, refusals + 1
                next_at = time.monotonic() + min(
                    max_backoff_s, interval_s * 2.0 ** min(refusals, 30)
                )
                stop.wait(next_at - time.monotonic())
                continue
            except CollectorError as exc:
                self.last_error = exc  # the gap in heartbeats is itself the signal on replicas
            next_at += interval_s
            delay = next_at - time.monotonic()
            if delay < 0:  # fell behind (slow source): skip the missed beats, do not burst
                next_at, delay = time.monotonic(), 0.0
            stop.wait(delay)

    def close(self) -> None:
        self._executor.close()
