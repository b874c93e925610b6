"""The poll owner's alerts: after a batch of ticks, their rules judged on the figures the ticks
just computed (alerts/tick_figures.py) and the deliveries they make queued.

The rules are kept in memory (detached), re-read every ``RULES_EVERY_S`` and at once when the
store's list of them changed (their ids and ``updated_at``, one small query per batch while
any exists): a rule switched off or deleted resets its alerts, and judging it again from memory
would fire them again with nobody left to resolve them. A fleet without rules pays one query
every ``RULES_EVERY_S``, no matter how many ticks.

The alert states are kept between batches too (alerts/state_writes.py ``KeptStates``), checked
against the store's ids and versions each batch and forgotten when a batch's transaction does
not commit.

A broker that is down loses nothing: a delivery is a row, and the sweep queues it again.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from lagscope.alerts.evaluation import tick_rules_query
from lagscope.alerts.state_writes import KeptStates
from lagscope.alerts.tick_figures import TickFigures, evaluate_ticks
from lagscope.errors import Conflict
from lagscope.models import AlertRule

log = logging.getLogger(__name__)

Listed = tuple[tuple[int, datetime], ...]  # the rules' (id, updated_at) as read


def queue_delivery(delivery_id: int) -> None:
    from lagscope.tasks.jobs import deliver_task

    deliver_task.delay(delivery_id)


class AlertJudge:
    """Called with a batch's :class:`TickFigures` (one per cluster tick it recorded), from the
    batch's own thread: several batches may be judged at once."""

    RULES_EVERY_S = 5.0

    def __init__(
        self,
        sessions: sessionmaker[Session],
        queue: Callable[[int], None] = queue_delivery,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._sessions = sessions
        self._queue = queue
        self._clock = clock
        self._lock = threading.Lock()
        self._rules: list[AlertRule] = []
        self._listed: Listed = ()
        self._read_at = -math.inf  # never
        self.kept = KeptStates()

    def __call__(self, ticks: Sequence[TickFigures]) -> None:
        for delivery_id in self._judge(ticks):
            try:
                self._queue(delivery_id)
            except Exception as exc:
                log.warning(
                    "delivery %s waits for the sweep: the broker refused it (%s)", delivery_id, exc
                )

    def _judge(self, figures: Sequence[TickFigures]) -> list[int]:
        """One transaction for the batch; a lost race judges each cluster again from the store
        (the read-back path, which retries), so what the other worker did is seen."""
        if not figures:
            return []
        with self._lock:
            rules, listed, due = self._rules, self._listed, self._due()
        if not rules and not due:
            return []
        cluster_ids = [f.cluster.id for f in figures]
        try:
            with self._sessions() as session, session.begin():
                if due or listed != _listed(session):
                    rules = self._reread(session)
                return evaluate_ticks(session, figures, self._clock(), rules, self.kept)
        except BaseException as exc:
            self.kept.forget(cluster_ids)  # not committed: what was kept is not the store's
            if not isinstance(exc, Conflict):
                raise
            log.info("clusters %s: alert evaluation raced another worker", cluster_ids)
            return self._read_back(cluster_ids)

    def _read_back(self, cluster_ids: Sequence[int]) -> list[int]:
        from lagscope.tasks.jobs import evaluate_cluster_deliveries

        return [d for c in cluster_ids for d in evaluate_cluster_deliveries(c, self._transaction)]

    @contextmanager
    def _transaction(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    def _due(self) -> bool:
        return time.monotonic() - self._read_at >= self.RULES_EVERY_S

    def _reread(self, session: Session) -> list[AlertRule]:
        rules = list(session.scalars(tick_rules_query()))
        for rule in rules:
            session.expunge(rule)  # read-only from here, by any batch's thread
        with self._lock:
            self._rules, self._read_at = rules, time.monotonic()
            self._listed = tuple((r.id, r.updated_at) for r in rules)
        return rules


def _listed(session: Session) -> Listed:
    """The tick-judged rules' ids and last edits, in the order :func:`tick_rules_query` gives."""
    query = tick_rules_query().with_only_columns(AlertRule.id, AlertRule.updated_at)
    return tuple((rid, at) for rid, at in session.execute(query))
