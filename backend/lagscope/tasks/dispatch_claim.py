"""One dispatch per second, however many beats run.

Two beats started by mistake each send the dispatcher every second, and each dispatch would
send every due cluster's tick: polls twice a second, samples twice. The dispatcher claims its
second with ``SET NX`` on the broker (Redis, which every dispatch needs anyway); the second
claim of the same second dispatches nothing. A broker that is not Redis is not claimed on.
"""

from __future__ import annotations

from lagscope.health.broker import redis_client

KEY = "lagscope:dispatch:{second}"
# Long enough that a late duplicate still finds the claim; short enough to leave no litter.
CLAIM_TTL_S = 120


def claim(broker_url: str, second: int) -> bool:
    """True when this dispatch is the first for ``second``."""
    client = redis_client(broker_url)
    if client is None:
        return True
    return bool(client.set(KEY.format(second=second), 1, nx=True, ex=CLAIM_TTL_S))
