"""Lagscope's heartbeat writer: the source stamps its own clock into ``lagscope.heartbeat``.

SQL (source only, with the narrowly granted heartbeat login — INSERT, UPDATE on the table):
``INSERT INTO `lagscope`.`heartbeat` (server_id, ts) VALUES (%s, UTC_TIMESTAMP(6))
ON DUPLICATE KEY UPDATE ts = UTC_TIMESTAMP(6)``.

The server_id is the source's ``@@server_id`` read once per connection and sent as a literal:
``@@server_id`` inside the statement would be evaluated on each replica under statement-based
replication (docs/replication.md, "The heartbeat table"). ``UTC_TIMESTAMP(6)`` is the source's
clock; replicas see the value the source wrote (row events copy it; statement events carry the
source's timestamp).
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

# What ends a writer's run: the server refused the password, or Lagscope withheld it.
Refusal = LoginRefused | ClearTextAuthRefused | Sha2AuthRefused


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

    def run(
        self,
        interval_s: float,
        stop: threading.Event,
        on_refused: Callable[[Refusal], object] | None = None,
        on_first_ok: Callable[[], object] | None = None,
    ) -> None:
        """Beat every ``interval_s`` on a fixed schedule until ``stop`` is set, or until the
        login is refused.

        A refused login (or one whose password Lagscope withheld: a clear-text or SHA-2
        exchange without a verified server) ends the run after ``on_refused``: each refusal
        counts towards the heartbeat account's lock-out on the source (a dropped handshake
        towards MySQL's max_connect_errors), so whoever runs writers decides when to try again
        (HeartbeatService keeps that back-off in the store, as the pollers do).
        ``on_first_ok`` is called after the first beat written."""
        next_at = time.monotonic()
        written = False
        while not stop.is_set():
            try:
                self.beat()
                self.last_error = None
                if not written and on_first_ok is not None:
                    on_first_ok()
                written = True
            except (LoginRefused, ClearTextAuthRefused, Sha2AuthRefused) as exc:
                self.last_error = exc
                if on_refused is not None:
                    on_refused(exc)
                return
            except CollectorError as exc:
                self.last_error = exc  # the gap in heartbeats is itself the signal on replicas
            next_at += interval_s
            delay = next_at - time.monotonic()
            if delay < 0:  # fell behind (slow source): skip the missed beats, do not burst
                next_at, delay = time.monotonic(), 0.0
            stop.wait(delay)

    def close(self) -> None:
        self._executor.close()
