"""A write load on the source: threads running one statement in a loop, paced when a rate is given,
for the incidents whose cause is a rate (serial apply, fsyncs, a narrow network).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from lagscope.lab.topology import Lab


class _Load:
    """Threads running ``statement`` on the source in a loop until stopped; at most ``rate``
    statements per second each when given (pacing, not waiting)."""

    def __init__(
        self,
        lab: Lab,
        statement: str,
        args: tuple[Any, ...] = (),
        threads: int = 1,
        rate: float | None = None,
    ) -> None:
        self._lab, self._statement, self._args, self._rate = lab, statement, args, rate
        self._stop = threading.Event()
        self.done = 0
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._run, name=f"incident-load-{i}", daemon=True)
            for i in range(threads)
        ]

    def __enter__(self) -> _Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _run(self) -> None:
        try:
            with self._lab.connect("source") as conn, conn.cursor() as cur:
                began = time.monotonic()
                count = 0
                while not self._stop.is_set():
                    cur.execute(self._statement, self._args)
                    count += 1
                    with self._lock:
                        self.done += 1
                    if self._rate is not None:
                        ahead = began + count / self._rate - time.monotonic()
                        if ahead > 0:
                            self._stop.wait(ahead)
        except BaseException as exc:
            self.errors.append(exc)
