"""The journal's events and their steps: param changes and annotations read from the store, and
chained into bursts (a step) when each lies within ``group_s`` of the previous one.

A step is timed when its change is known to be in effect (``first_new_at``), and remembers the
earliest moment it may have begun (``changed_after``): the samples between are nobody's side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.analysis.steps import group_in_bursts
from lagscope.history.window import require_window
from lagscope.inventory.instances import get_cluster, instance_in_cluster
from lagscope.models import Annotation, Instance, ParamChange


def param_changes(
    session: Session,
    cluster_id: int,
    start: datetime,
    end: datetime,
    instance_id: int | None = None,
) -> list[tuple[ParamChange, str]]:
    """The cluster's changes with ``first_new_at`` in [start, end), in time order, with the
    instance name."""
    require_window(start, end)
    cluster = get_cluster(session, cluster_id)
    query = (
        select(ParamChange, Instance.name)
        .join(Instance, ParamChange.instance_id == Instance.id)
        .where(
            Instance.cluster_id == cluster.id,
            ParamChange.first_new_at >= start,
            ParamChange.first_new_at < end,
        )
        .order_by(ParamChange.first_new_at, Instance.name, ParamChange.name)
    )
    if instance_id is not None:
        query = query.where(Instance.id == instance_in_cluster(session, cluster, instance_id).id)
    return [(change, name) for change, name in session.execute(query)]


@dataclass(frozen=True, slots=True)
class Event:
    """A change (made in ``(changed_after, at]``) or an annotation (``changed_after == at``)."""

    at: datetime
    changed_after: datetime
    change: tuple[ParamChange, str] | None = None
    annotation: Annotation | None = None


@dataclass(frozen=True, slots=True)
class Step:
    at: datetime
    changed_after: datetime
    changes: tuple[tuple[ParamChange, str], ...]
    annotations: tuple[Annotation, ...]


def _whole_ms(moment: datetime) -> datetime:
    """Down to the millisecond: a step's windows are then named exactly by a client that keeps
    milliseconds (the UI's compare link), and judge the same samples there as here. A sample
    taken in the dropped microseconds after a change is the change's own poll, on the after
    side either way."""
    return moment.replace(microsecond=moment.microsecond - moment.microsecond % 1000)


def group_events(events: Sequence[Event], group_s: float) -> list[Step]:
    """Chain events (in any order) closer than ``group_s`` to the previous one into steps."""
    steps = group_in_bursts(events, lambda e: e.at, group_s)
    return [
        Step(
            at=_whole_ms(max(e.at for e in burst)),
            changed_after=_whole_ms(min(e.changed_after for e in burst)),
            changes=tuple(e.change for e in burst if e.change is not None),
            annotations=tuple(e.annotation for e in burst if e.annotation is not None),
        )
        for burst in steps
    ]


def read_events(session: Session, cluster_id: int, lo: datetime, hi: datetime) -> list[Event]:
    changes = session.execute(
        select(ParamChange, Instance.name)
        .join(Instance, ParamChange.instance_id == Instance.id)
        .where(
            Instance.cluster_id == cluster_id,
            ParamChange.first_new_at >= lo,
            ParamChange.first_new_at < hi,
        )
        .order_by(ParamChange.first_new_at, Instance.name, ParamChange.name)
    )
    notes = session.scalars(
        select(Annotation)
        .where(
            Annotation.cluster_id == cluster_id,
            Annotation.starts_at >= lo,
            Annotation.starts_at < hi,
        )
        .order_by(Annotation.starts_at, Annotation.id)
    )
    # min(): a change read by two workers with skewed clocks must not get an inverted window.
    return [
        Event(c.first_new_at, min(c.last_old_at, c.first_new_at), change=(c, name))
        for c, name in changes
    ] + [Event(n.starts_at, n.starts_at, annotation=n) for n in notes]
