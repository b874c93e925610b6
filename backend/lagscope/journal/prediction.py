"""A journal step that changed a replica's applier workers, with the capacity its source's
writes predicted for it and the capacity measured after it
(docs/prediction.md, "Checked after the step").

Computed when the journal is read, from what the store kept: the binlog window of the source
nearest before the step (history/parallelism.py) and the step's windows' capacities (apply
rate while a backlog existed). A step whose after window never had a backlog has no measured
capacity: the replica kept up, so what it could apply is not known, only that it was enough.
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.analysis.parallel_apply import WORKER_PARAMS, applier_workers, predict_capacity
from lagscope.history.parallelism import speedups_at
from lagscope.journal.durability import with_durability
from lagscope.journal.steps import Entry, Journal
from lagscope.models import ParamValue

MODE_PARAM = "slave_parallel_mode"


def predicted(session: Session, found: Journal, cores: int | None) -> Journal:
    """The journal with its worker-count and flush-setting steps' predictions."""
    entries = with_predictions(session, found.cluster.id, found.entries, cores)
    return replace(found, entries=with_durability(session, entries))


def with_predictions(
    session: Session, cluster_id: int, entries: list[Entry], cores: int | None
) -> list[Entry]:
    """The entries, each impact of a replica whose workers the step changed given its
    prediction (when a binlog window of the source exists)."""
    out: list[Entry] = []
    for entry in entries:
        workers = {
            change.instance_id: (
                applier_workers(change.old_value),
                applier_workers(change.new_value),
            )
            for change, _ in entry.step.changes
            if change.name in WORKER_PARAMS
        }
        if not workers:
            out.append(entry)
            continue
        tables = speedups_at(session, cluster_id, entry.step.at)
        if tables is None:
            out.append(entry)
            continue
        modes = {
            change.instance_id: change.new_value
            for change, _ in entry.step.changes
            if change.name == MODE_PARAM
        }
        impacts = []
        for found in entry.impacts:
            counts = workers.get(found.instance.id)
            if counts is None:
                impacts.append(found)
                continue
            mode = modes.get(found.instance.id) or _mode_now(session, found.instance.id)
            prediction = predict_capacity(
                *tables,
                *counts,
                mode,
                cores,
                found.impact.before.capacity,
                found.impact.after.capacity,
            )
            impacts.append(replace(found, prediction=prediction))
        out.append(replace(entry, impacts=impacts))
    return out


def _mode_now(session: Session, instance_id: int) -> str | None:
    return session.scalar(
        select(ParamValue.value).where(
            ParamValue.instance_id == instance_id, ParamValue.name == MODE_PARAM
        )
    )
