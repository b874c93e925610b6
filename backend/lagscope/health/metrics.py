"""Lagscope's own figures in ``/metrics`` (``lagscope_self_*``), next to the monitored servers'.

Read from the store and the health judgement at scrape time, not counted in one process: the
API that is scraped is not the worker that ticks. Windowed figures are gauges over the last
hour (missed ticks by reason, failed webhook attempts), so a scrape of any API replica gives
the same answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.poll_gaps import GapReason
from lagscope.analysis.readiness import PROCESS_KINDS, Facts, Readiness, State, assess, running
from lagscope.config import Settings
from lagscope.health.facts import gather_with
from lagscope.models import Cluster, DeliveryAttempt, PollGap

WINDOW = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class TickFigures:
    cluster: str
    last_tick_s: float | None
    took_s: float | None


@dataclass(frozen=True, slots=True)
class SelfFigures:
    readiness: Readiness
    facts: Facts
    ticks: tuple[TickFigures, ...]
    missed: dict[str, int]
    failed_attempts: int


def read_figures(session: Session, readiness: Readiness, facts: Facts) -> SelfFigures:
    since = datetime.fromtimestamp(facts.now_s, UTC) - WINDOW
    ticks = tuple(
        TickFigures(name, at.timestamp() if at else None, took)
        for name, at, took in session.execute(
            select(Cluster.name, Cluster.last_tick_at, Cluster.last_tick_s)
            .where(Cluster.enabled.is_(True))
            .order_by(Cluster.name)
        )
    )
    missed = dict.fromkeys((r.value for r in GapReason), 0)
    for reason, count in session.execute(
        select(PollGap.reason, func.sum(PollGap.missed))
        .where(PollGap.ended_at >= since)
        .group_by(PollGap.reason)
    ):
        if reason in missed:  # a bounded label set, whatever the store holds
            missed[reason] = int(count or 0)
    failed = session.scalar(
        select(func.count(DeliveryAttempt.id)).where(
            # Every attempt not accepted has its error (the HTTP status, at least).
            DeliveryAttempt.at >= since,
            DeliveryAttempt.error.is_not(None),
        )
    )
    return SelfFigures(readiness, facts, ticks, missed, int(failed or 0))


class SelfCollector(Collector):
    def __init__(self, figures: SelfFigures) -> None:
        self.figures = figures

    def collect(self) -> Iterator[Metric]:
        yield from _part_families(self.figures)
        yield from _work_families(self.figures)


def _part_families(f: SelfFigures) -> Iterator[Metric]:
    """Lagscope's parts: each component up or down, the processes alive, the poll owners and
    the clusters none holds, the broker's queue."""
    up = GaugeMetricFamily(
        "lagscope_self_up",
        "1 when the part of Lagscope works (ok or warn in /readyz), 0 when it is down.",
        labels=("component",),
    )
    for component in f.readiness.components:
        up.add_metric([component.name], float(component.state is not State.DOWN))
    yield up
    processes = GaugeMetricFamily(
        "lagscope_self_processes",
        "Lagscope processes that reported in the last three report periods, by kind.",
        labels=("kind",),
    )
    alive = running(f.facts)
    for kind in PROCESS_KINDS:
        processes.add_metric([kind], float(sum(p.kind == kind for p in alive)))
    yield processes
    if f.facts.poll_engine == "owner":
        yield GaugeMetricFamily(
            "lagscope_self_poll_owners",
            "Poll owners holding a live shard lease (the owner engine).",
            value=float(f.facts.owners),
        )
        yield GaugeMetricFamily(
            "lagscope_self_unowned_clusters",
            "Enabled clusters in shards no poll owner holds: not polled (the owner engine).",
            value=float(f.facts.unowned_clusters),
        )
    if f.facts.queue_depth is not None:
        yield GaugeMetricFamily(
            "lagscope_self_queue_depth",
            "Tasks waiting in the broker's queue.",
            value=float(f.facts.queue_depth),
        )


def _work_families(f: SelfFigures) -> Iterator[Metric]:
    """Lagscope's work: the oldest delivery waiting, each cluster's newest tick, the ticks
    missed and the deliveries refused in the last hour."""
    oldest = GaugeMetricFamily(
        "lagscope_self_oldest_undelivered_seconds",
        "Age of the oldest webhook delivery still pending (0: none).",
        value=0.0
        if f.facts.oldest_pending_s is None
        else max(0.0, f.facts.now_s - f.facts.oldest_pending_s),
    )
    yield oldest
    lag = GaugeMetricFamily(
        "lagscope_self_tick_lag_seconds",
        "Seconds since the cluster's newest recorded tick (its poll interval when healthy).",
        labels=("cluster",),
    )
    took = GaugeMetricFamily(
        "lagscope_self_tick_duration_seconds",
        "How long the cluster's newest tick took: prepare, poll every server, record.",
        labels=("cluster",),
    )
    for tick in f.ticks:
        if tick.last_tick_s is not None:
            lag.add_metric([tick.cluster], max(0.0, f.facts.now_s - tick.last_tick_s))
        if tick.took_s is not None:
            took.add_metric([tick.cluster], tick.took_s)
    yield from (lag, took)
    missed = GaugeMetricFamily(
        "lagscope_self_missed_ticks_1h",
        "Ticks missed in the last hour, by reason (expired: dropped as too late to start,"
        " an owner's batch half a second after its second or a Celery tick past its"
        " interval in the queue; slow; not_polled).",
        labels=("reason",),
    )
    for reason, count in f.missed.items():
        missed.add_metric([reason], float(count))
    yield missed
    yield GaugeMetricFamily(
        "lagscope_self_delivery_failures_1h",
        "Webhook attempts in the last hour that the receiver refused or never answered.",
        value=float(f.failed_attempts),
    )


def scrape(
    sessions: sessionmaker[Session], session: Session, settings: Settings, now_s: float
) -> bytes:
    facts = gather_with(sessions, settings, now_s)
    figures = read_figures(session, assess(facts), facts)
    return exposition(figures)


def exposition(figures: SelfFigures) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SelfCollector(figures))
    return generate_latest(registry)
