"""After a tick, advance every rule × subject of a cluster one step (:func:`judge`).

Two ways in: :func:`evaluate_cluster` reads the cluster and its newest samples back from the
store (the Celery path); :func:`~lagscope.alerts.tick_figures.evaluate_ticks` judges a batch of
ticks on the figures they just computed (the poll owner's). Both judge alike.

The state, the event and its deliveries are written in the caller's one transaction, and the
state row is updated compare-and-set on its ``version`` (SQLAlchemy's version counter issues
``UPDATE … WHERE id = :id AND version = :seen``): two workers judging the same subject at once
cannot both notify, and a worker killed before commit leaves nothing half-sent. A lost race is
:class:`~lagscope.errors.Conflict`; the caller judges again in a fresh transaction. One step of
one rule × subject is :func:`~lagscope.alerts.advance.advance`; the mutes in force come from
:mod:`lagscope.alerts.mutes`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import Select, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload
from sqlalchemy.orm.exc import StaleDataError

from lagscope.alerts import state as sm
from lagscope.alerts.advance import advance
from lagscope.alerts.mutes import active_mutes_of
from lagscope.alerts.readings import (
    CHANNEL_METRICS,
    WATCHDOG_METRICS,
    SampleFields,
    Subject,
    at_datetime,
    instance_observation,
    sample_observation,
    spec_for,
    subjects,
)
from lagscope.alerts.state_writes import KeptStates, LoadedStates
from lagscope.errors import Conflict
from lagscope.history.status import latest_instance_samples, latest_samples
from lagscope.models import (
    AlertRule,
    AlertState,
    Cluster,
    Delivery,
    Instance,
)

StateKey = tuple[int, int, str]  # cluster id, rule id, subject


@dataclass(frozen=True, slots=True)
class Newest:
    """A cluster with its newest readings, as its rules look at them: the samples by channel id,
    and by instance id whether the newest instance sample found the server reachable."""

    cluster: Cluster
    samples: Mapping[int, SampleFields]
    reachable: Mapping[int, bool]


def tick_rules_query(cluster_ids: Collection[int] | None = None) -> Select[AlertRule]:
    """The enabled rules judged after a tick (those of every cluster, or that may apply to
    these), by id."""
    query = select(AlertRule).where(
        AlertRule.enabled.is_(True),
        AlertRule.metric.not_in(WATCHDOG_METRICS),  # judged without a tick
    )
    if cluster_ids is not None:
        query = query.where(
            or_(AlertRule.cluster_id.is_(None), AlertRule.cluster_id.in_(cluster_ids))
        )
    return query.order_by(AlertRule.id)


def judged_after_tick(rules: Sequence[AlertRule]) -> list[AlertRule]:
    """Of rules a caller kept, those :func:`tick_rules_query` would give, in its order."""
    kept = [r for r in rules if r.enabled and r.metric not in WATCHDOG_METRICS]
    return sorted(kept, key=lambda r: r.id)


def evaluate_cluster(session: Session, cluster_id: int, now_s: float) -> list[int]:
    """Judge the cluster's newest readings, read back from the store; returns the ids of the
    deliveries to send."""
    rules = session.scalars(tick_rules_query([cluster_id])).all()
    if not rules:
        return []
    cluster = (
        session.execute(
            select(Cluster)
            .where(Cluster.id == cluster_id)
            .options(joinedload(Cluster.instances).joinedload(Instance.channels))
        )
        .unique()
        .scalar_one_or_none()
    )
    if cluster is None:
        return []
    samples = latest_samples(
        session,
        [c.id for i in cluster.instances for c in i.channels if c.gone_at is None],
    )
    polled = latest_instance_samples(session, [i.id for i in cluster.instances])
    reachable = {iid: row.reachable for iid, row in polled.items()}
    return judge(session, [Newest(cluster, samples, reachable)], rules, now_s)


def judge(
    session: Session,
    clusters: Sequence[Newest],
    rules: Sequence[AlertRule],
    now_s: float,
    kept: KeptStates | None = None,
) -> list[int]:
    """Advance every rule × subject of each cluster one step on its newest readings, the
    states in one query and the mutes in two; returns the ids of the deliveries to send.
    ``rules``: enabled, tick-judged, in id order (a rule of another cluster is passed over).
    ``kept``: a poll owner's states kept between judgements (None: loaded every time); the
    caller forgets the clusters' if its transaction does not commit."""
    cluster_ids = [c.cluster.id for c in clusters]
    if kept is not None:
        rows, stored = kept.take(session, cluster_ids)
        loaded = kept.loaded(session, rows, stored)  # written below, not flushed
    else:
        where = AlertState.cluster_id.in_(cluster_ids)
        rows = list(session.scalars(select(AlertState).where(where)))
        loaded = LoadedStates(session, rows)
    states: dict[StateKey, AlertState] = {(s.cluster_id, s.rule_id, s.subject): s for s in rows}
    mutes = active_mutes_of(session, cluster_ids, at_datetime(now_s))
    deliveries: list[Delivery] = []
    try:
        for newest in clusters:
            cluster = newest.cluster
            for rule in rules:
                if rule.cluster_id not in (None, cluster.id):
                    continue
                for subject in subjects(rule, cluster.instances):
                    spec = spec_for(
                        rule, subject.instance.id, subject.channel.id if subject.channel else None
                    )
                    obs = _observe(session, rule, subject, newest) if spec else None
                    if spec is None or obs is None:
                        continue
                    row = states.get((cluster.id, rule.id, subject.key))
                    deliveries += advance(
                        session, cluster, rule, spec, subject, obs, row, mutes[cluster.id], now_s
                    )
        new = [row for row in session.new if isinstance(row, AlertState)]
        session.flush()
        loaded.write(session)
        if kept is not None:
            for row in new:
                session.expunge(row)
            kept.keep(cluster_ids, loaded, new)
    except (StaleDataError, IntegrityError) as exc:
        raise Conflict("another worker judged the same alerts at the same time") from exc
    return [d.id for d in deliveries]


def _observe(
    session: Session, rule: AlertRule, subject: Subject, newest: Newest
) -> sm.Observation | None:
    if rule.metric in CHANNEL_METRICS:
        assert subject.channel is not None
        sample = newest.samples.get(subject.channel.id)
        if sample is None:
            return None
        return sample_observation(rule.metric, sample, subject.channel)
    reachable = newest.reachable.get(subject.instance.id)
    return instance_observation(session, rule, newest.cluster, subject.instance, reachable)
