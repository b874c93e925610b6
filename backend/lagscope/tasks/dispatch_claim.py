"""One dispatch per second, however many beats run.

Two beats started by mistake each send the dispatcher every second, and each dispatch would
send every due cluster's tick: polls twice a second, samples twice. The dispatcher claims its
second with ``SET NX`` on the broker (Redis, which every dispatch needs anyway); the second
claim of the same second dispatches nothing. A broker that is not Redis is not claimed on.
"""

from __future__ import annotations

import threading

import redis

KEY = "lagscope:dispatch:{second}"
# Long enough that a late duplicate still finds the claim; short enough to leave no litter.
CLAIM_TTL_S = 120

_clients: dict[str, redis.Redis] = {}
_lock = threading.Lock()


def claim(broker_url: str, second: int) -> bool:
    """True when this dispatch is the first for ``second``."""
    if not broker_url.startswith(("redis://", "rediss://", "unix://")):
        return True
    with _lock:
        client = _clients.get(broker_url)
        if client is None:
            client = _clients[broker_url] = redis.Redis.from_url(
                broker_url, socket_connect_timeout=2, socket_timeout=2
            )
    return bool(client.set(KEY.format(second=second), 1, nx=True, ex=CLAIM_TTL_S))
