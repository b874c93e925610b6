"""The tasks: a few lines each over a service (parse, open a session, call, return)."""

from __future__ import annotations

import logging
import time

from lagscope.services import maintenance
from lagscope.services.polling import due_clusters, poll_cluster
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
        )
    if summary and (summary.unreachable or summary.param_changes):
        log.info(
            "cluster %s: unreachable=%s param_changes=%s",
            cluster_id,
            summary.unreachable,
            summary.param_changes,
        )


@app.task(name="lagscope.rollup", ignore_result=True)
def rollup_task() -> None:
    with context().transaction() as session:
        maintenance.roll_up(session, time.time())


@app.task(name="lagscope.enforce_retention", ignore_result=True)
def retention_task() -> None:
    ctx = context()
    with ctx.transaction() as session:
        maintenance.enforce_retention(session, time.time(), ctx.settings.retention())
