"""Applier workers, recorded: each tick's readings stored for the heatmap (history/workers.py).

The judgement (analysis/tick/workers.py) gives, for each instance whose poll read the workers
or learnt why it could not, the per-channel rows and its newest reading; here they are loaded
(the previous reading: from the tick's memory, else one SELECT) and written, both sent with the
batch's writes (ingest/tick_writes.py) as Core rows: no ORM object, no autoflush.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from lagscope.analysis.tick.workers import WorkersBefore, WorkersJudged
from lagscope.ingest.tick_memory import WorkerReading
from lagscope.ingest.tick_writes import TickWrites
from lagscope.models import ApplierWorkerSample, ApplierWorkerState

_SAMPLES = cast(Table, ApplierWorkerSample.__table__)
_STATES = cast(Table, ApplierWorkerState.__table__)


def load_workers(
    session: Session, known: dict[int, WorkerReading | None], instance_ids: Iterable[int]
) -> None:
    """The stored readings of the instances ``known`` lacks, into it (None: none stored)."""
    missing = [i for i in instance_ids if i not in known]
    if not missing:
        return
    found = session.connection().execute(
        select(
            _STATES.c.instance_id, _STATES.c.read_at, _STATES.c.problem, _STATES.c.workers
        ).where(_STATES.c.instance_id.in_(missing))
    )
    known.update(dict.fromkeys(missing))
    for instance_id, read_at, problem, workers in found:
        known[instance_id] = WorkerReading(read_at, problem, list(workers or []))


def workers_before(reading: WorkerReading | None) -> WorkersBefore | None:
    if reading is None:
        return None
    return WorkersBefore(reading.read_at.timestamp(), reading.problem, reading.workers)


def write_workers(
    writes: TickWrites,
    known: dict[int, WorkerReading | None],
    instance_id: int,
    at: datetime,
    judged: WorkersJudged,
) -> None:
    """The per-channel rows, and the instance's newest reading stored and remembered in
    ``known`` (a problem keeps the workers last read, and when they were read)."""
    if judged.rows:
        writes.insert(
            _SAMPLES, [{"instance_id": instance_id, "ts": at, **asdict(r)} for r in judged.rows]
        )
    problem, workers = judged.problem, judged.workers
    if not judged.stored_before:
        new = WorkerReading(at, problem, workers if workers is not None else [])
        row: dict[str, Any] = {"instance_id": instance_id, "read_at": at, "problem": problem}
        writes.insert(_STATES, [{**row, "workers": new.workers}])
        known[instance_id] = new
        return
    state = known.get(instance_id)
    if state is not None:
        state.problem = problem
    if workers is None:
        writes.update(_STATES, ("problem",), {"_pk": instance_id, "problem": problem})
        return
    if state is not None:
        state.read_at, state.workers = at, workers
    values = {"_pk": instance_id, "problem": problem, "read_at": at, "workers": workers}
    writes.update(_STATES, ("problem", "read_at", "workers"), values)
