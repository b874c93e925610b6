"""Applier workers, recorded: each tick's readings stored for the heatmap (history/workers.py).

Once per tick for the instances whose poll read the workers or learnt why it could not: the
instances' previous readings (what each worker applied last, and when: from the tick's memory,
else one SELECT), the per-channel rows and the newest reading per instance, both sent with the
batch's writes (ingest/tick_writes.py) as Core rows: no ORM object, no autoflush.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from lagscope.analysis.workers import summarize
from lagscope.collectors import applier_workers
from lagscope.collectors.snapshot import InstanceSnapshot
from lagscope.ingest.tick_memory import TickMemory, WorkerReading
from lagscope.ingest.tick_writes import TickWrites
from lagscope.models import ApplierWorkerSample, ApplierWorkerState, Instance

_WORKER_FIELDS = (
    "channel", "worker_id", "thread_id", "state", "busy", "idle_s", "last_applied_trx",
    "applying_trx", "last_error_number", "last_error_message",
)  # fmt: skip


def record_workers(
    session: Session,
    polled: Sequence[tuple[Instance, InstanceSnapshot, datetime]],
    writes: TickWrites | None = None,
    memory: TickMemory | None = None,
) -> int:
    """Store this tick's worker readings; returns the per-channel rows written. With
    ``writes`` the rows go out with the batch, else now; ``memory``: the readings the cluster's
    last ticks stored (read from the store for the instances it does not know)."""
    wanted = [
        (i, s, at) for i, s, at in polled if s.is_replica and (s.workers or "workers" in s.problems)
    ]
    if not wanted:
        return 0
    now = writes is None
    writes = TickWrites() if writes is None else writes
    memory = TickMemory() if memory is None else memory
    _load(session, memory, [i.id for i, _, _ in wanted if i.id not in memory.workers])
    rows: list[dict[str, Any]] = []
    for instance, snap, at in wanted:
        state = memory.workers[instance.id]
        if "workers" in snap.problems and not snap.workers:
            problem = applier_workers.privilege_problem(
                snap.flavor.product, f"'{instance.user}'@'<lagscope host>'"
            )
            if "lacks the privilege" not in snap.problems["workers"]:
                problem = snap.problems["workers"]
            _keep(writes, memory, instance.id, state, at, problem, None)
            continue
        previous = {
            (w["channel"], w["worker_id"]): w.get("last_applied_trx") or ""
            for w in (state.workers if state and state.problem is None else [])
        }
        interval = (at - state.read_at).total_seconds() if state else None
        for summary in summarize(snap.workers, previous, interval):
            rows.append({"instance_id": instance.id, "ts": at, **asdict(summary)})
        workers = [{f: getattr(w, f) for f in _WORKER_FIELDS} for w in snap.workers]
        _keep(writes, memory, instance.id, state, at, None, workers)
    if rows:
        writes.insert(_SAMPLES, rows)
    if now:
        writes.send(session.connection())
    return len(rows)


_SAMPLES = cast(Table, ApplierWorkerSample.__table__)
_STATES = cast(Table, ApplierWorkerState.__table__)


def _load(session: Session, memory: TickMemory, instance_ids: list[int]) -> None:
    if not instance_ids:
        return
    found = session.connection().execute(
        select(
            _STATES.c.instance_id, _STATES.c.read_at, _STATES.c.problem, _STATES.c.workers
        ).where(_STATES.c.instance_id.in_(instance_ids))
    )
    memory.workers.update(dict.fromkeys(instance_ids))
    for instance_id, read_at, problem, workers in found:
        memory.workers[instance_id] = WorkerReading(read_at, problem, list(workers or []))


def _keep(
    writes: TickWrites,
    memory: TickMemory,
    instance_id: int,
    state: WorkerReading | None,
    at: datetime,
    problem: str | None,
    workers: list[dict[str, Any]] | None,
) -> None:
    """The instance's newest reading, stored and remembered (a problem keeps the workers last
    read, and when they were read)."""
    if state is None:
        state = WorkerReading(at, problem, workers if workers is not None else [])
        row = {"instance_id": instance_id, "read_at": at, "problem": problem}
        writes.insert(_STATES, [{**row, "workers": state.workers}])
        memory.workers[instance_id] = state
        return
    state.problem = problem
    if workers is None:
        writes.update(_STATES, ("problem",), {"_pk": instance_id, "problem": problem})
        return
    state.read_at, state.workers = at, workers
    values = {"_pk": instance_id, "problem": problem, "read_at": at, "workers": workers}
    writes.update(_STATES, ("problem", "read_at", "workers"), values)
