"""Judging the rules on what a batch of ticks just computed, instead of reading it back.

A poll owner keeps its clusters in memory and knows the rows its ticks wrote, so reloading the
cluster and reading its newest ``samples`` and ``instance_samples`` back (what
:func:`~lagscope.alerts.evaluation.evaluate_cluster` does) was most of the cost of having rules.
:func:`evaluate_ticks` judges with :func:`~lagscope.alerts.evaluation.judge`, like it, on
:class:`TickFigures`: the same states, events and deliveries from the same store.

A figure is taken as the store gives it back (:func:`as_stored`): a lag of 10.0004 s is stored
as 10.000 and must not fire a rule at 10 that the read-back path would not fire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.engine.default import DefaultDialect
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeDecorator

from lagscope.alerts.evaluation import Newest, judge, judged_after_tick, tick_rules_query
from lagscope.alerts.readings import CHANNEL_METRICS
from lagscope.alerts.state_writes import KeptStates
from lagscope.history.status import latest_instance_samples, latest_samples
from lagscope.models import AlertRule, Cluster, Sample


@dataclass(frozen=True, slots=True)
class TickFigures:
    """One cluster's tick as it was recorded.

    ``cluster``: as the tick left it in memory, its instances and their channels loaded (it may
    be detached: only those are touched, never ``instance.cluster``). ``samples``: by channel
    id, the ``samples`` row the tick wrote (the column names as keys, ``ts`` an aware datetime,
    codes as ints); ``polled``: by instance id, the ``instance_samples`` row."""

    cluster: Cluster
    samples: Mapping[int, Mapping[str, Any]]
    polled: Mapping[int, Mapping[str, Any]]
    # By instance id, the parameters the tick read (none for a server it could not read).
    params: Mapping[int, Mapping[str, str | None]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredSample:
    """The columns of a ``samples`` row a rule reads, as the store gives them back."""

    ts: datetime
    verdict: int
    lag_s: float | None
    trx_behind: int | None
    not_received: int | None
    received_not_applied: int | None
    errant_trx: int | None
    io_state: int | None
    sql_running: bool | None
    disagreement: bool
    apply_rate: float | None
    source_rate: float | None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> StoredSample:
        return cls(**{name: as_stored(Sample.__table__.c[name], row[name]) for name in _READ})


_READ = tuple(f.name for f in fields(StoredSample))
# The project's column types (EpochMicros, Scaled) convert without looking at the dialect.
_DIALECT = DefaultDialect()


def as_stored(column: ColumnElement[Any], value: Any) -> Any:
    """``value`` written to ``column`` and read back, without the round trip."""
    kind = column.type
    if value is None or not isinstance(kind, TypeDecorator):
        return value
    return kind.process_result_value(kind.process_bind_param(value, _DIALECT), _DIALECT)


def evaluate_ticks(
    session: Session,
    figures: Sequence[TickFigures],
    now_s: float,
    rules: Sequence[AlertRule] | None = None,
    kept: KeptStates | None = None,
) -> list[int]:
    """Judge the rules of every ticked cluster on its tick's figures, in the caller's one
    transaction; returns the ids of the deliveries to send. Raises Conflict on a lost race.

    ``rules``: those the caller keeps (they may be detached; the disabled and the watchdog's
    are passed over); None reads them, in one query. ``kept``: the states a poll owner keeps
    (alerts/state_writes.py). The states are read in one query, the
    silences and maintenance windows in two, whatever the number of clusters."""
    if not figures:
        return []
    if rules is None:
        rules = session.scalars(tick_rules_query([f.cluster.id for f in figures])).all()
    else:
        rules = judged_after_tick(rules)
    newest = [
        Newest(
            f.cluster,
            {cid: StoredSample.of(row) for cid, row in f.samples.items()},
            {iid: bool(row["reachable"]) for iid, row in f.polled.items()},
        )
        for f in figures
        if any(r.cluster_id in (None, f.cluster.id) for r in rules)
    ]
    if not newest:  # no rule for any of them: the store is not asked
        return []
    return judge(session, _completed(session, newest, rules), rules, now_s, kept)


def _completed(
    session: Session, clusters: list[Newest], rules: Sequence[AlertRule]
) -> list[Newest]:
    """The figures, with what a tick did not write for a subject read back from the store, as
    the read-back path would read it (a server the tick had no reading of keeps its last
    sample: judged already, it may still refresh a firing alert). A tick that wrote a row for
    every subject, as ticks do, asks the store nothing."""
    missing_samples: list[int] = []
    missing_polled: list[int] = []
    for newest in clusters:
        per_channel = [
            r.metric in CHANNEL_METRICS for r in rules if r.cluster_id in (None, newest.cluster.id)
        ]
        for instance in (i for i in newest.cluster.instances if i.enabled):
            if any(per_channel):
                missing_samples += [
                    c.id
                    for c in instance.channels
                    if c.gone_at is None and c.id not in newest.samples
                ]
            if not all(per_channel) and instance.id not in newest.reachable:
                missing_polled.append(instance.id)
    if not missing_samples and not missing_polled:
        return clusters
    samples = latest_samples(session, missing_samples) if missing_samples else {}
    polled = latest_instance_samples(session, missing_polled) if missing_polled else {}
    reachable = {iid: row.reachable for iid, row in polled.items()}
    # Ids are the store's: another cluster's rows in these maps are never looked up.
    return [
        Newest(n.cluster, {**samples, **n.samples}, {**reachable, **n.reachable}) for n in clusters
    ]
