"""The ``polling_stopped`` alert: no reading from an instance for N poll intervals.

Every other rule is judged by the worker after its tick; this one is about the worker (or beat)
no longer ticking, so it cannot be judged there. Every Lagscope process runs :class:`Watchdog`
rounds from its self-watch thread (health/self_watch.py): a round compares each instance's
``last_polled_at`` with the clock and advances the rule's stored state exactly like the worker
does (same state machine, same compare-and-set rows, same events), then sends the deliveries
itself: Celery is what may be down. While it is at it, it also sends any delivery left due for
longer than a grace period (e.g. a "resolved" recorded when a rule was switched off while the
worker is dead).

Several processes run rounds: the state rows' compare-and-set lets one of them notify (the
others get Conflict and try again next round), and a delivery is claimed by one sender.
"""

from __future__ import annotations

import logging
import time

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from lagscope.alerts import delivery as alert_delivery
from lagscope.alerts import state as sm
from lagscope.alerts.advance import advance
from lagscope.alerts.mutes import active_mutes
from lagscope.alerts.readings import at_datetime, spec_for, subjects
from lagscope.config import Settings
from lagscope.errors import Conflict
from lagscope.models import AlertRule, AlertState, Cluster, Delivery, Instance
from lagscope.security.secret_box import SecretBox

log = logging.getLogger(__name__)

METRIC = "polling_stopped"
# A delivery due this long and still pending has no worker sending it: the watchdog sends it.
ORPHAN_GRACE_S = 60.0


def poll_period_s(cluster: Cluster) -> float:
    """How often the beat really dispatches the cluster's polls (whole seconds, at least 1)."""
    return float(max(1, round(cluster.poll_interval_s)))


def intervals_without_reading(
    rule: AlertRule, cluster: Cluster, instance: Instance, now_s: float
) -> float:
    """Poll intervals since the instance's last reading (or since the rule was made, for an
    instance never polled: nothing has arrived since it started watching)."""
    last = instance.last_polled_at or rule.created_at
    return max(0.0, now_s - last.timestamp()) / poll_period_s(cluster)


def watch(session: Session, now_s: float) -> list[int]:
    """Judge every ``polling_stopped`` rule on every instance in scope; returns the ids of the
    deliveries to send. Raises Conflict when another process judged the same states."""
    rules = session.scalars(
        select(AlertRule)
        .where(AlertRule.enabled.is_(True), AlertRule.metric == METRIC)
        .order_by(AlertRule.id)
    ).all()
    if not rules:
        return []
    clusters = session.scalars(
        select(Cluster)
        .where(Cluster.enabled.is_(True))
        .options(selectinload(Cluster.instances).selectinload(Instance.channels))
        .order_by(Cluster.id)
    ).all()
    deliveries: list[Delivery] = []
    try:
        for cluster in clusters:
            scoped = [r for r in rules if r.cluster_id in (None, cluster.id)]
            if not scoped:
                continue
            states = {
                (s.rule_id, s.subject): s
                for s in session.scalars(
                    select(AlertState).where(AlertState.cluster_id == cluster.id)
                )
            }
            mutes = active_mutes(session, cluster.id, at_datetime(now_s))
            for rule in scoped:
                for subject in subjects(rule, cluster.instances):
                    spec = spec_for(rule, subject.instance.id)
                    if spec is None:
                        continue
                    value = intervals_without_reading(rule, cluster, subject.instance, now_s)
                    obs = sm.Observation(at=now_s, value=value)
                    row = states.get((rule.id, subject.key))
                    deliveries += advance(session, cluster, rule, spec, subject, obs, row, mutes)
        session.flush()
    except (StaleDataError, IntegrityError) as exc:
        raise Conflict("another process judged polling_stopped at the same time") from exc
    return [d.id for d in deliveries]


def orphaned(session: Session, now_s: float, grace_s: float = ORPHAN_GRACE_S) -> list[int]:
    """Deliveries due for longer than ``grace_s`` that nobody holds."""
    return alert_delivery.due(session, now_s - grace_s)


class Watchdog:
    """Rounds of judging polling_stopped and sending what they record, and orphans."""

    def __init__(self, sessions: sessionmaker[Session], box: SecretBox, settings: Settings) -> None:
        self.sessions, self.box, self.settings = sessions, box, settings

    def round(self, now_s: float) -> list[int]:
        """One look; returns the deliveries it tried to send."""
        try:
            with self.sessions() as session, session.begin():
                ids = watch(session, now_s)
        except Conflict:
            log.info("alert watchdog raced another process; next round")
            ids = []
        with self.sessions() as session:
            ids += [i for i in orphaned(session, now_s) if i not in ids]
        for delivery_id in ids:
            self.deliver(delivery_id)
        return ids

    def deliver(self, delivery_id: int) -> None:
        """One attempt, as the worker's deliver task makes it (a failure is retried by the
        worker's sweeper, or by this watchdog once it is overdue)."""
        with self.sessions() as session, session.begin():
            request = alert_delivery.prepare(
                session, self.box, self.settings, delivery_id, time.time()
            )
        if request is None:
            return
        outcome = alert_delivery.send(request, self.settings)
        with self.sessions() as session, session.begin():
            alert_delivery.record(session, self.settings, delivery_id, outcome, time.time())
