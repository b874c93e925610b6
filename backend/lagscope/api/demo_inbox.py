"""The demo's webhook inbox: where the demo's own alert rule delivers, so a newcomer sees an alert
fire and the body a receiver gets, without setting up a receiver (docs/demo.md).

It exists in demo mode only: :func:`lagscope.api.app.create_app` makes one only then, and the
routes (``routers/demo.py``) answer 404 without it.

Kept in the API process's memory, the newest :data:`CAPACITY` only, not in the store:

- it is a demo's toy, and a table for it would sit in every deployment's store forever;
- the demo runs one API process, the one the worker delivers to, so memory is where it is seen;
- what was sent stays on record anyway: each delivery, its body's context and every attempt
  are in the store's ``alert_deliveries`` / ``alert_delivery_attempts`` (the Alerts page);
- bounded twice (entries and bytes per body): a runaway rule or a caller posting in a loop
  costs at most ``CAPACITY × MAX_BODY_BYTES`` (~13 MB), and a restart empties it.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from lagscope.alerts.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify

INBOX_PATH = "/api/v1/demo/inbox"
CAPACITY = 200
# An alert body is a few kB (the generic payload with its context and "why"); 64 kB is ample.
MAX_BODY_BYTES = 64 * 1024
HEADER_TEXT_MAX = 500
# What a receiver looks at: the key it dedupes on, the signature and its timestamp, who sent it.
KEPT_HEADERS = (
    "Idempotency-Key",
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    "X-Lagscope-Delivery",
    "Content-Type",
    "User-Agent",
)
SignatureCheck = Literal["valid", "invalid", "unsigned"]


@dataclass(frozen=True, slots=True)
class InboxEntry:
    id: int
    received_at: datetime
    last_received_at: datetime
    # Redeliveries with the same Idempotency-Key and body (at-least-once delivery) are counted
    # on the first entry, as a receiver deduplicating on the key would.
    times_received: int
    headers: Mapping[str, str]
    payload: Any
    # "valid" | "invalid" | "unsigned": checked against the secrets of the targets aimed here.
    signature: SignatureCheck


class DemoInbox:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self._entries: deque[InboxEntry] = deque(maxlen=capacity)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def receive(
        self,
        headers: Mapping[str, str],
        payload: Any,
        signature: SignatureCheck,
        now: datetime | None = None,
    ) -> InboxEntry:
        at = now or datetime.now(UTC)
        kept = kept_headers(headers)
        key = kept.get("Idempotency-Key")
        with self._lock:
            for i, seen in enumerate(self._entries):
                if key is not None and (seen.headers.get("Idempotency-Key"), seen.payload) == (
                    key,
                    payload,
                ):
                    again = replace(
                        seen, times_received=seen.times_received + 1, last_received_at=at
                    )
                    self._entries[i] = again
                    return again
            entry = InboxEntry(next(self._ids), at, at, 1, kept, payload, signature)
            self._entries.append(entry)
            return entry

    def entries(self) -> list[InboxEntry]:
        """Newest first."""
        with self._lock:
            return list(reversed(self._entries))

    @property
    def capacity(self) -> int:
        return self._entries.maxlen or 0


def kept_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers worth showing, under their usual spelling, each bounded."""
    lowered = {name.lower(): value for name, value in headers.items()}
    return {
        name: lowered[name.lower()][:HEADER_TEXT_MAX]
        for name in KEPT_HEADERS
        if name.lower() in lowered
    }


def signature_check(
    headers: Mapping[str, str], body: bytes, secrets: Iterable[bytes], now_s: float
) -> SignatureCheck:
    """Checks the signature as docs/alerts.md tells a receiver to (the same ``verify``)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    signature = lowered.get(SIGNATURE_HEADER.lower())
    if signature is None:
        return "unsigned"
    timestamp = lowered.get(TIMESTAMP_HEADER.lower(), "")
    if any(verify(secret, timestamp, body, signature, now_s) for secret in secrets):
        return "valid"
    return "invalid"
