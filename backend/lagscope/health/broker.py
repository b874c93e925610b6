"""The broker as the health check sees it: does Redis answer, and how many tasks wait.

Asked with redis-py directly and short timeouts (not through Celery, whose connection retries
for as long as the broker is gone): a health check must answer while the broker is down.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import redis

# Celery's queue and the keys kombu adds for its priority steps (kombu's redis transport
# keeps one list per step: "celery", "celery\x06\x163", …).
QUEUE = "celery"
PRIORITY_SEP = "\x06\x16"
TIMEOUT_S = 1.0


@dataclass(frozen=True, slots=True)
class BrokerLook:
    error: str | None
    queue_depth: int | None


_clients: dict[str, redis.Redis] = {}
_lock = threading.Lock()


def redis_client(url: str) -> redis.Redis | None:
    """One client per broker URL for this process (short timeouts: a caller must not hang on
    a dead broker); None when the broker is not Redis."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return None
    with _lock:
        client = _clients.get(url)
        if client is None:
            client = redis.Redis.from_url(
                url, socket_connect_timeout=TIMEOUT_S, socket_timeout=TIMEOUT_S
            )
            _clients[url] = client
        return client


def look(url: str) -> BrokerLook:
    """The broker's state; ``error`` names the failure without the URL (it may hold a
    password)."""
    client = redis_client(url)
    if client is None:
        return BrokerLook(None, None)
    try:
        with client.pipeline(transaction=False) as pipe:
            pipe.llen(QUEUE)
            for step in (3, 6, 9):
                pipe.llen(f"{QUEUE}{PRIORITY_SEP}{step}")
            depths = pipe.execute()
    except redis.RedisError as exc:
        return BrokerLook(_what(exc), None)
    return BrokerLook(None, sum(int(d) for d in depths))


def _what(exc: redis.RedisError) -> str:
    if isinstance(exc, redis.TimeoutError):
        return "timed out"
    if isinstance(exc, redis.ConnectionError):
        return "connection refused or lost"
    if isinstance(exc, redis.AuthenticationError):
        return "authentication failed"
    return type(exc).__name__
