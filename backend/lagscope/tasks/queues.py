"""Two queues: the polls' and the slow jobs'.

A poll tick is worth one second; a binlog window may take its whole deadline, a rollup or a
retention purge minutes on a large store. Celery gives a worker process one pool for every
queue it consumes, so a slow job in that pool holds a slot a poll needs, and with a pool of two
a rollup and a binlog window at once stop polling. The slow jobs therefore go to their own
queue, consumed by a worker process of its own: ``lagscope worker`` runs both (the polls'
worker, and a child process with one slot for the slow queue), ``--queues polls`` or
``--queues slow`` runs one, for deployments that scale them apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

# Celery's default queue: poll ticks and deliveries, and any message an older version queued.
POLL_QUEUE = "celery"
SLOW_QUEUE = "lagscope.slow"
# Every periodic job but the poll dispatcher and the delivery sweep, which only enqueue.
SLOW_TASKS = ("lagscope.rollup", "lagscope.enforce_retention", "lagscope.sample_commit_groups")
Role = Literal["all", "polls", "slow"]
# The share of a slow job's time limit after which Celery raises SoftTimeLimitExceeded in it
# (a chance to stop cleanly) before the hard limit kills its pool process.
SOFT_SHARE = 0.9


def routes() -> dict[str, dict[str, str]]:
    """Celery's ``task_routes``: the slow tasks to the slow queue, the rest by default."""
    return {task: {"queue": SLOW_QUEUE} for task in SLOW_TASKS}


def time_limits(limit_s: float) -> dict[str, dict[str, float]]:
    """Celery's ``task_annotations``: every slow job's soft and hard time limit, so that one
    that hangs (a store lock, a source holding a read) frees the slow queue's slot."""
    limits = {"soft_time_limit": limit_s * SOFT_SHARE, "time_limit": limit_s}
    return {task: dict(limits) for task in SLOW_TASKS}


def worker_argv(role: Role, concurrency: int, extra: Sequence[str] = ()) -> list[str]:
    """Celery's arguments for one worker process of ``role`` (not "all": that is two)."""
    extra = list(extra)
    given = _node_name(extra)
    if role == "slow":
        # One slot: slow jobs run one after the other, never beside the polls. A name given
        # for the pair is the polls' worker's; this one is told apart from it.
        queue, name, slots = SLOW_QUEUE, f"slow.{given}" if given else "slow@%h", 1
    else:
        queue, name, slots = POLL_QUEUE, given or "polls@%h", concurrency
    return ["worker", "--loglevel=INFO", f"--concurrency={slots}", "-Q", queue, "-n", name, *extra]


def _node_name(extra: list[str]) -> str | None:
    """Remove Celery's ``-n``/``--hostname`` from ``extra`` and return its value."""
    for at, arg in enumerate(extra):
        if arg in ("-n", "--hostname") and at + 1 < len(extra):
            value = extra[at + 1]
            del extra[at : at + 2]
            return value
        if arg.startswith("--hostname="):
            del extra[at]
            return arg.split("=", 1)[1]
    return None
