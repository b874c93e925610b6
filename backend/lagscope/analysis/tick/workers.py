"""A replica's applier workers at this tick: the per-channel counts and masks to store
(analysis/workers.py), and the reading the next tick compares with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lagscope.analysis.workers import ChannelWorkers, summarize
from lagscope.collectors import applier_workers
from lagscope.collectors.snapshot import InstanceSnapshot

WORKER_FIELDS = (
    "channel", "worker_id", "thread_id", "state", "busy", "idle_s", "last_applied_trx",
    "applying_trx", "last_error_number", "last_error_message",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class WorkersBefore:
    """An instance's newest stored workers reading."""

    read_at: float  # epoch s: when ``workers`` were read
    problem: str | None
    workers: Sequence[Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class WorkersJudged:
    rows: list[ChannelWorkers]
    problem: str | None
    # The workers as read, each as WORKER_FIELDS; None: not read (a problem), the last stay.
    workers: list[dict[str, Any]] | None
    stored_before: bool  # whether a reading was stored before (an update, else an insert)


def reads_workers(snap: InstanceSnapshot) -> bool:
    """Whether this poll read a replica's workers, or learnt why it could not."""
    return snap.is_replica and bool(snap.workers or "workers" in snap.problems)


def judge_workers(
    snap: InstanceSnapshot, read_at: float, before: WorkersBefore | None, user: str
) -> WorkersJudged | None:
    """None when the poll read no workers. ``user``: the monitoring user, named in the grant
    a missing privilege needs."""
    if not reads_workers(snap):
        return None
    stored = before is not None
    if "workers" in snap.problems and not snap.workers:
        problem = snap.problems["workers"]
        if "lacks the privilege" in problem:
            problem = applier_workers.privilege_problem(
                snap.flavor.product, f"'{user}'@'<lagscope host>'"
            )
        return WorkersJudged([], problem, None, stored)
    previous = {
        (w["channel"], w["worker_id"]): w.get("last_applied_trx") or ""
        for w in (before.workers if before and before.problem is None else [])
    }
    interval = read_at - before.read_at if before else None
    rows = summarize(snap.workers, previous, interval)
    workers = [{f: getattr(w, f) for f in WORKER_FIELDS} for w in snap.workers]
    return WorkersJudged(rows, None, workers, stored)
