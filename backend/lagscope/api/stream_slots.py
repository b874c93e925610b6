"""How many live streams (``GET /api/v1/stream``) this API process holds open, per user and in
all: each holds a connection and a poll of the store every second for as long as a tab is open.

Counted in memory, per process: a stream lives in exactly one process, and its slot is given
back when its response ends, however it ends (the client left, the token was revoked, the
server stopped).
"""

from __future__ import annotations

import threading
from collections import Counter

from lagscope.errors import Overloaded, Throttled

# What a refused client is told to wait: streams are long-lived, so a slot frees at a human pace.
RETRY_AFTER_S = 30.0


class StreamSlots:
    def __init__(self, per_user: int, per_process: int) -> None:
        self.per_user = per_user
        self.per_process = per_process
        self._lock = threading.Lock()
        self._held: Counter[str] = Counter()

    def acquire(self, holder: str) -> StreamSlot:
        """A slot for ``holder`` (a user), or Throttled (429: that user holds the most) or
        Overloaded (503: the process holds the most, whoever asks)."""
        with self._lock:
            if self._held[holder] >= self.per_user:
                raise Throttled(
                    f"you have {self.per_user} live streams open already (close a tab, or "
                    "raise LAGSCOPE_STREAMS_PER_USER)",
                    RETRY_AFTER_S,
                )
            if self._held.total() >= self.per_process:
                raise Overloaded(
                    f"this API process serves {self.per_process} live streams already "
                    "(LAGSCOPE_STREAMS_PER_PROCESS)",
                    RETRY_AFTER_S,
                )
            self._held[holder] += 1
        return StreamSlot(self, holder)

    def held(self, holder: str | None = None) -> int:
        with self._lock:
            return self._held.total() if holder is None else self._held[holder]

    def _release(self, holder: str) -> None:
        with self._lock:
            self._held[holder] -= 1
            if self._held[holder] <= 0:
                del self._held[holder]


class StreamSlot:
    """One held slot; :meth:`release` gives it back once, however often it is called."""

    def __init__(self, slots: StreamSlots, holder: str) -> None:
        self._slots = slots
        self._holder: str | None = holder

    def release(self) -> None:
        holder, self._holder = self._holder, None
        if holder is not None:
            self._slots._release(holder)
