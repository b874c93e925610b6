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
from lagscope.errors import Conflict
from lagscope.ingest import rollups as maintenance
from lagscope.ingest.tick import due_clusters, note_expired_tick, poll_cluster
from lagscope.inventory.server_logins import Backoff
from lagscope.tasks.app import app
from lagscope.tasks.context import context

log = logging.getLogger(__name__)


@app.task(name="lagscope.dispatch_polls", ignore_result=True)
def dispatch_polls() -> int:
    """Enqueue a poll for every cluster due this second, expiring with its interval."""
    ctx = context()
    with ctx.transaction() as session:
        due = due_clusters(session, time.time())
    for cluster_id, interval in due:
        poll_cluster_task.apply_async(args=[cluster_id], expires=interval)
    return len(due)


@app.task(name="lagscope.poll_cluster", ignore_result=True)
def poll_cluster_task(cluster_id: int) -> None:
    ctx = context()
    with ctx.transaction() as session:
        summary = poll_cluster(
            session,
            ctx.box,
            ctx.reader,
            cluster_id,
            ctx.settings.connect_timeout_s,
            ctx.settings.read_timeout_s,
            ctx.settings.params_every_s,
            allowed=ctx.settings.allow_list(),
            backoff=Backoff(
                ctx.settings.login_backoff_base_s,
                ctx.settings.login_backoff_max_s,
                ctx.settings.login_give_up_after,
            ),
            episode_caught_up_s=ctx.settings.episode_caught_up_s,
            worker=f"{socket.gethostname()}:{os.getpid()}",
        )
    if summary is not None:
        evaluate_alerts(cluster_id)
    if summary and (summary.unreachable or summary.param_changes):
        log.info(
            "cluster %s: unreachable=%s param_changes=%s",
            cluster_id,
            summary.unreachable,
            summary.param_changes,
        )


@task_revoked.connect
def note_expired_poll(
    sender: Any = None, request: Any = None, expired: bool = False, **_: Any
) -> None:
    """A tick that waited in the queue past its interval is dropped (``expires``), in the
    worker's main process: keep that in the store, so the next tick's gap says why."""
    if not expired or request is None or getattr(sender, "name", None) != poll_cluster_task.name:
        return
    try:
        with context().transaction() as session:
            note_expired_tick(session, int(request.args[0]), time.time())
    except Exception:  # the drop itself must go on; the gap is then "not polled"
        log.exception("could not note an expired tick")


@app.task(name="lagscope.rollup", ignore_result=True)
def rollup_task() -> None:
    with context().transaction() as session:
        maintenance.roll_up(session, time.time())


@app.task(name="lagscope.enforce_retention", ignore_result=True)
def retention_task() -> None:
    ctx = context()
    with ctx.transaction() as session:
        maintenance.enforce_retention(session, time.time(), ctx.settings.retention())


def evaluate_alerts(cluster_id: int) -> None:
    """After a tick (its own transaction: a lost compare-and-set race with another worker is
    retried once on fresh state, and never undoes the tick's samples)."""
    ctx = context()
    for attempt in (1, 2):
        try:
            with ctx.transaction() as session:
                delivery_ids = evaluate_cluster(session, cluster_id, time.time())
        except Conflict:
            log.info(
                "cluster %s: alert evaluation raced another worker (try %s)", cluster_id, attempt
            )
            continue
        for delivery_id in delivery_ids:
            deliver_task.delay(delivery_id)
        return


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
