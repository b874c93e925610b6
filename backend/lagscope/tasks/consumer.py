"""The worker's broker consumer, reconnecting every second instead of backing off to 30 s.

Celery's consumer retries a lost broker with kombu's defaults (2 s, then 2 s more each time, up
to 30 s between tries): after a 60 s Redis outage polling came back ~13 s after Redis did. A
poll tick is worth one second; a connection attempt to a dead broker costs one refused
connect. So: retry at once, then every ``RETRY_STEP_S`` up to ``RETRY_MAX_S``.
"""

from __future__ import annotations

import functools
from typing import Any

from celery.worker.consumer import Consumer as CeleryConsumer

RETRY_STEP_S = 0.5
RETRY_MAX_S = 1.0


class Consumer(CeleryConsumer):  # type: ignore[misc]
    def ensure_connected(self, conn: Any) -> Any:
        conn.ensure_connection = functools.partial(
            conn.ensure_connection,
            interval_start=0,
            interval_step=RETRY_STEP_S,
            interval_max=RETRY_MAX_S,
        )
        return super().ensure_connected(conn)
