"""The poll owner's remote-write sender: an after-batch hook that only queues, and a thread of
its own that sends.

A batch's thread hands over its ticks' rows and their labels (worked out there, where the
cluster in memory is not being changed) and goes back to polling; the sender turns them into
series every ``every_s`` and posts them, at most ``MAX_SAMPLES_PER_REQUEST`` samples a request.
A receiver that is slow, down or answering 5xx/429 never holds a poll: what it did not take
waits, oldest first, and is tried again with a growing pause (1 s doubling to 30 s); past
``max_waiting`` samples the oldest are dropped and counted. A 4xx other than 429 means the
receiver will never take that request (a sample out of order after a takeover, a label it
refuses): it is dropped, counted and logged, not retried.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from lagscope.alerts.tick_figures import TickFigures
from lagscope.remote_write.points import NamedTick, Point, named_tick, tick_points
from lagscope.remote_write.wire import HEADERS, Series, compress, write_request

log = logging.getLogger(__name__)

MAX_SAMPLES_PER_REQUEST = 5_000
BACKOFF_FIRST_S = 1.0
BACKOFF_CAP_S = 30.0


@dataclass(slots=True)
class SenderStats:
    samples_sent: int = 0
    requests_sent: int = 0
    samples_dropped: int = 0
    requests_refused: int = 0
    failures: int = 0
    last_error: str | None = None
    waiting: int = 0


class RemoteWriter:
    def __init__(
        self,
        url: str,
        bearer_token: str = "",
        every_s: float = 1.0,
        max_waiting: int = 1_000_000,
        timeout_s: float = 5.0,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        to_points: Callable[[NamedTick], Iterable[Any]] = tick_points,
        encode: Callable[[list[Any]], bytes] | None = None,
        headers: Mapping[str, str] = HEADERS,
        name: str = "remote write",
    ) -> None:
        """By default a tick's samples under the ``/metrics`` names, sent as remote write.
        ``to_points``, ``encode`` and ``headers`` send something else: the raw-series store's
        lines (series_store/points.py), a request's body made of up to
        ``MAX_SAMPLES_PER_REQUEST`` of them by ``encode``. ``name``: for the log."""
        self.url = url
        self.name = name
        self._to_points = to_points
        self._encode = encode or _remote_write_body
        self.every_s = every_s
        self.max_waiting = max_waiting
        self.stats = SenderStats()
        self._clock = clock
        headers = dict(headers)
        if bearer_token:
            headers["Authorization"] = f"Bearer {bearer_token}"
        # No redirects: the token goes to the URL it was configured for and nowhere else.
        self._client = httpx.Client(
            headers=headers, timeout=timeout_s, follow_redirects=False, transport=transport
        )
        self._lock = threading.Lock()
        self._handed: list[NamedTick] = []
        self._waiting: deque[Any] = deque()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._retry_at = 0.0
        self._backoff_s = BACKOFF_FIRST_S

    def __call__(self, figures: Sequence[TickFigures]) -> None:
        """A batch's figures, from the batch's thread: named here, converted by the sender."""
        named = [named_tick(tick) for tick in figures]
        with self._lock:
            self._handed.extend(named)

    def start(self) -> None:
        thread_name = "lagscope-" + self.name.replace(" ", "-")
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Sends what is waiting once more (within ``timeout_s``), then ends."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
        self._client.close()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(self.every_s)
            self._wake.clear()
            self.send_waiting()
        self._retry_at = 0.0
        self.send_waiting()

    def send_waiting(self) -> None:
        """Everything handed over so far, converted and sent (or left waiting)."""
        with self._lock:
            handed, self._handed = self._handed, []
        for tick in handed:
            self._waiting.extend(self._to_points(tick))
        over = len(self._waiting) - self.max_waiting
        if over > 0:
            for _ in range(over):
                self._waiting.popleft()
            self.stats.samples_dropped += over
            log.warning("%s: %d samples dropped, the receiver is behind", self.name, over)
        if self._clock() < self._retry_at:
            self.stats.waiting = len(self._waiting)
            return
        while self._waiting:
            chunk = [
                self._waiting[i] for i in range(min(MAX_SAMPLES_PER_REQUEST, len(self._waiting)))
            ]
            if not self._post(chunk):
                break
            for _ in chunk:
                self._waiting.popleft()
        self.stats.waiting = len(self._waiting)

    def _post(self, points: list[Any]) -> bool:
        """True when the chunk is done with (taken, or refused for good)."""
        body = self._encode(points)
        try:
            answer = self._client.post(self.url, content=body)
        except httpx.HTTPError as exc:
            return self._failed(f"{type(exc).__name__}: {exc}")
        if answer.is_success:
            self.stats.samples_sent += len(points)
            self.stats.requests_sent += 1
            self._backoff_s = BACKOFF_FIRST_S
            return True
        if answer.status_code == 429 or answer.status_code >= 500:
            return self._failed(f"HTTP {answer.status_code}: {_excerpt(answer)}")
        self.stats.requests_refused += 1
        self.stats.samples_dropped += len(points)
        self.stats.last_error = f"HTTP {answer.status_code}: {_excerpt(answer)}"
        log.warning(
            "%s: %s refused %d samples for good (%s)",
            self.name,
            self.url,
            len(points),
            self.stats.last_error,
        )
        return True

    def _failed(self, error: str) -> bool:
        self.stats.failures += 1
        self.stats.last_error = error
        self._retry_at = self._clock() + self._backoff_s
        log.warning(
            "%s: %s failed (%s); %d samples wait, next try in %.0f s",
            self.name,
            self.url,
            error,
            len(self._waiting),
            self._backoff_s,
        )
        self._backoff_s = min(self._backoff_s * 2, BACKOFF_CAP_S)
        return False


def _remote_write_body(points: list[Point]) -> bytes:
    return compress(write_request(as_series(points)))


def as_series(points: Sequence[Point]) -> list[Series]:
    """Points grouped by series, each series' samples oldest first."""
    grouped: dict[tuple[tuple[str, str], ...], list[tuple[int, float]]] = {}
    for labels, at_ms, value in points:
        grouped.setdefault(labels, []).append((at_ms, value))
    # Most series have one sample a request (a request per second, a poll per second).
    return [
        Series(labels, samples if len(samples) == 1 else sorted(samples))
        for labels, samples in grouped.items()
    ]


def _excerpt(answer: httpx.Response) -> str:
    return answer.text[:200].strip()
