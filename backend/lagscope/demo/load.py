"""A write load for the lab: N threads committing small transactions on the source.

Each thread has its own connection and commits one INSERT per transaction (autocommit), so
with several threads the source group-commits and can outrun a replica that applies serially
or fsyncs on every relay-log event. ``target_tps`` caps the total rate (None = as fast as the
source allows).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pymysql

SCHEMA_SQL = (
    "CREATE DATABASE IF NOT EXISTS lagscope_load",
    "CREATE TABLE IF NOT EXISTS lagscope_load.events ("
    " id BIGINT PRIMARY KEY AUTO_INCREMENT, writer INT NOT NULL, payload VARCHAR(200) NOT NULL,"
    " created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))",
)
INSERT_SQL = "INSERT INTO lagscope_load.events (writer, payload) VALUES (%s, %s)"


class WriteLoad:
    def __init__(
        self,
        connect: Callable[[], pymysql.connections.Connection[Any]],
        threads: int = 4,
        target_tps: float | None = None,
    ) -> None:
        self._connect = connect
        self._threads = threads
        self._target_tps = target_tps
        self._stop = threading.Event()
        self._workers: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.committed = 0
        self.errors = 0

    def prepare(self) -> None:
        conn = self._connect()
        try:
            with conn.cursor() as cur:
                for sql in SCHEMA_SQL:
                    cur.execute(sql)
        finally:
            conn.close()

    def start(self) -> WriteLoad:
        self.prepare()
        self._stop.clear()
        for n in range(self._threads):
            worker = threading.Thread(target=self._run, args=(n,), daemon=True, name=f"load-{n}")
            worker.start()
            self._workers.append(worker)
        return self

    def set_rate(self, target_tps: float | None) -> None:
        """A new total rate from the next transaction on (None: as fast as the source allows)."""
        self._target_tps = target_tps

    def stop(self) -> None:
        self._stop.set()
        for worker in self._workers:
            worker.join(timeout=10)
        self._workers.clear()

    def __enter__(self) -> WriteLoad:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self, writer: int) -> None:
        payload = "x" * 120
        conn = None
        next_at = time.monotonic()
        paced_at = self._target_tps
        while not self._stop.is_set():
            try:
                conn = conn or self._connect()
                with conn.cursor() as cur:
                    cur.execute(INSERT_SQL, (writer, payload))
                with self._lock:
                    self.committed += 1
            except pymysql.err.MySQLError:
                with self._lock:
                    self.errors += 1
                conn = None
                self._stop.wait(0.2)  # the source restarts or refuses: back off, then reconnect
            rate = self._target_tps  # read each time: set_rate changes it while running
            if rate != paced_at:
                # A new rate counts from now: no burst to make up for the old one.
                next_at, paced_at = time.monotonic(), rate
            if rate:
                next_at += self._threads / rate
                self._stop.wait(max(0.0, next_at - time.monotonic()))
        if conn is not None:
            conn.close()
