"""The tasks: a few lines each over a service (parse, open a session, call, return)."""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Any

from celery.signals import task_revoked

from lagscope.alerts import delivery as alert_delivery
from lagscope.alerts.evaluation import evaluate_cluster
from lagscope.collectors.binlog_dump import Bounds
from lagscope.errors import Conflict
from lagscope.ingest import commit_samples
from lagscope.ingest import rollups as maintenance
from lagscope.ingest.recording import TickSummary
from lagscope.ingest.tick import TickOptions, due_clusters, note_expired_tick, options_from
from lagscope.ingest.tick_batch import Transaction, batches, poll_clusters
from lagscope.tasks import dispatch_claim
from lagscope.tasks.app import app
from lagscope.tasks.context import context
from lagscope.tasks.queues import SOFT_SHARE

log = logging.getLogger(__name__)


@app.task(name="lagscope.dispatch_polls", ignore_result=True)
def dispatch_polls() -> int:
    """Enqueue the polls of the clusters due this second, in batches (ingest/tick_batch.py),
    each expiring with its interval."""
    ctx = context()
    if ctx.settings.poll_engine == "owner":
        return 0  # the poll owners tick their shards themselves (engine/owner.py)
    now_s = time.time()
    if not dispatch_claim.claim(ctx.settings.broker_url, int(now_s)):
        log.info("this second's polls were dispatched already (is a second beat running?)")
        return 0
    with ctx.transaction() as session:
        due = due_clusters(session, now_s)
    for interval, cluster_ids in batches(due, ctx.settings.poll_batch_instances):
        poll_clusters_task.apply_async(args=[cluster_ids], expires=interval)
    return len(due)


@app.task(name="lagscope.poll_clusters", ignore_result=True)
def poll_clusters_task(cluster_ids: list[int]) -> int:
    """Returns the ticks recorded (Celery's "succeeded" log line shows it)."""
    ctx = context()
    summaries = poll_clusters(ctx.transaction, ctx.box, ctx.reader, cluster_ids, _options())
    for cluster_id, summary in summaries.items():
        evaluate_alerts(cluster_id)
        _log_summary(cluster_id, summary)
    return len(summaries)


@app.task(name="lagscope.poll_cluster", ignore_result=True)
def poll_cluster_task(cluster_id: int) -> int:
    """One cluster's tick (what beat sent before batches; kept for messages still queued)."""
    return int(poll_clusters_task(cluster_ids=[cluster_id]))


def _options() -> TickOptions:
    return options_from(context().settings, f"{socket.gethostname()}:{os.getpid()}")


def _log_summary(cluster_id: int, summary: TickSummary) -> None:
    if summary.unreachable or summary.param_changes:
        log.info(
            "cluster %s: unreachable=%s param_changes=%s",
            cluster_id,
            summary.unreachable,
            summary.param_changes,
        )


_POLL_TASKS = frozenset({poll_clusters_task.name, poll_cluster_task.name})


@task_revoked.connect
def note_expired_poll(
    sender: Any = None, request: Any = None, expired: bool = False, **_: Any
) -> None:
    """A tick that waited in the queue past its interval is dropped (``expires``), in the
    worker's main process: keep that in the store, so the next tick's gap says why."""
    name = getattr(sender, "name", None)
    if not expired or request is None or name not in _POLL_TASKS:
        return
    first = request.args[0]
    cluster_ids = [int(c) for c in first] if isinstance(first, list) else [int(first)]
    try:
        with context().transaction() as session:
            for cluster_id in cluster_ids:
                note_expired_tick(session, cluster_id, time.time())
    except Exception:  # the drop itself must go on; the gap is then "not polled"
        log.exception("could not note an expired tick")


@app.task(name="lagscope.rollup", ignore_result=True)
def rollup_task() -> None:
    with context().transaction() as session:
        maintenance.roll_up(session, time.time())


@app.task(name="lagscope.sample_commit_groups", ignore_result=True)
def sample_commit_groups_task() -> int:
    ctx = context()
    settings = ctx.settings
    return commit_samples.sample_all(
        ctx.sessions,
        ctx.box,
        settings.allow_list(),
        time.time(),
        settings.connect_timeout_s,
        settings.binlog_dump_server_id,
        Bounds(
            settings.binlog_window_deadline_s,
            settings.binlog_window_max_bytes,
            settings.binlog_window_max_event_bytes,
        ),
        until=time.monotonic() + settings.slow_job_time_limit_s * SOFT_SHARE,
    )


@app.task(name="lagscope.enforce_retention", ignore_result=True)
def retention_task() -> None:
    ctx = context()
    with ctx.transaction() as session:
        maintenance.enforce_retention(session, time.time(), ctx.settings.retention())


def evaluate_alerts(cluster_id: int) -> None:
    """After a tick: judge the cluster's rules and queue the deliveries they made."""
    for delivery_id in evaluate_cluster_deliveries(cluster_id):
        deliver_task.delay(delivery_id)


def evaluate_cluster_deliveries(
    cluster_id: int, transaction: Transaction | None = None
) -> list[int]:
    """The cluster's rules judged in a transaction of their own (a lost compare-and-set race
    with another worker is retried once on fresh state, and never undoes the tick's samples);
    the deliveries to send. ``transaction``: the caller's (a poll owner's), else the worker's."""
    transaction = transaction or context().transaction
    for attempt in (1, 2):
        try:
            with transaction() as session:
                return evaluate_cluster(session, cluster_id, time.time())
        except Conflict:
            log.info(
                "cluster %s: alert evaluation raced another worker (try %s)", cluster_id, attempt
            )
    return []


@app.task(name="lagscope.deliver", ignore_result=True)
def deliver_task(delivery_id: int) -> None:
    """One attempt of one delivery; the next is queued with its back-off delay (and found by
    the sweeper if that message is lost)."""
    ctx = context()
    with ctx.transaction() as session:
        request = alert_delivery.prepare(session, ctx.box, ctx.settings, delivery_id, time.time())
    if request is None:
        return
    outcome = alert_delivery.send(request, ctx.settings)
    with ctx.transaction() as session:
        delay = alert_delivery.record(session, ctx.settings, delivery_id, outcome, time.time())
    if delay is not None:
        deliver_task.apply_async(args=[delivery_id], countdown=delay)


@app.task(name="lagscope.sweep_deliveries", ignore_result=True)
def sweep_deliveries_task() -> int:
    with context().transaction() as session:
        due = alert_delivery.due(session, time.time())
    for delivery_id in due:
        deliver_task.delay(delivery_id)
    return len(due)
