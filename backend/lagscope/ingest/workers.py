"""Applier workers, recorded: each tick's readings stored for the heatmap (history/workers.py).

Once per tick for the instances whose poll read the workers or learnt why it could not: one
SELECT of the instances' previous readings (what each worker applied last, and when), one
executemany of the per-channel rows, and the newest reading kept per instance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from lagscope.analysis.workers import summarize
from lagscope.collectors import applier_workers
from lagscope.collectors.snapshot import InstanceSnapshot
from lagscope.models import ApplierWorkerSample, ApplierWorkerState, Instance

_WORKER_FIELDS = (
    "channel", "worker_id", "thread_id", "state", "busy", "idle_s", "last_applied_trx",
    "applying_trx", "last_error_number", "last_error_message",
)  # fmt: skip


def record_workers(
    session: Session, polled: Sequence[tuple[Instance, InstanceSnapshot, datetime]]
) -> int:
    """Store this tick's worker readings; returns the per-channel rows written."""
    wanted = [
        (i, s, at) for i, s, at in polled if s.is_replica and (s.workers or "workers" in s.problems)
    ]
    if not wanted:
        return 0
    ids = [i.id for i, _, _ in wanted]
    states = {
        s.instance_id: s
        for s in session.scalars(
            select(ApplierWorkerState).where(ApplierWorkerState.instance_id.in_(ids))
        )
    }
    rows: list[dict[str, Any]] = []
    for instance, snap, at in wanted:
        state = states.get(instance.id)
        if "workers" in snap.problems and not snap.workers:
            problem = applier_workers.privilege_problem(
                snap.flavor.product, f"'{instance.user}'@'<lagscope host>'"
            )
            if "lacks the privilege" not in snap.problems["workers"]:
                problem = snap.problems["workers"]
            _keep(session, state, instance.id, at, problem, None)
            continue
        previous = {
            (w["channel"], w["worker_id"]): w.get("last_applied_trx") or ""
            for w in (state.workers if state and state.problem is None else [])
        }
        interval = (at - state.read_at).total_seconds() if state else None
        for summary in summarize(snap.workers, previous, interval):
            rows.append({"instance_id": instance.id, "ts": at, **asdict(summary)})
        workers = [{f: getattr(w, f) for f in _WORKER_FIELDS} for w in snap.workers]
        _keep(session, state, instance.id, at, None, workers)
    if rows:
        session.execute(insert(ApplierWorkerSample), rows)
    return len(rows)


def _keep(
    session: Session,
    state: ApplierWorkerState | None,
    instance_id: int,
    at: datetime,
    problem: str | None,
    workers: list[dict[str, Any]] | None,
) -> None:
    if state is None:
        state = ApplierWorkerState(instance_id=instance_id, read_at=at, workers=[])
        session.add(state)
    state.problem = problem
    if workers is not None:
        state.read_at, state.workers = at, workers
