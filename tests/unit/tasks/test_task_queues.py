"""Slow jobs never share the polls' pool: every periodic job that reads or rewrites much (the
binlog windows, rollups, retention) goes to the slow queue, and ``lagscope worker`` runs a
worker for each queue."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest

from lagscope.config import Settings, generate_key, get_settings
from lagscope.tasks.queues import POLL_QUEUE, SLOW_QUEUE, SLOW_TASKS, worker_argv

FAST = {"lagscope.dispatch_polls", "lagscope.sweep_deliveries"}
KEY = generate_key()


@pytest.fixture
def celery_app(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The Celery app as a worker builds it (from the settings, under a throwaway key)."""
    monkeypatch.setenv("LAGSCOPE_SECRET_KEY", KEY)
    get_settings.cache_clear()
    try:
        yield importlib.import_module("lagscope.tasks.app").make_app()
    finally:
        get_settings.cache_clear()


def test_every_periodic_job_but_the_dispatchers_goes_to_the_slow_queue(celery_app: Any) -> None:
    def queue_of(task: str) -> str:
        return str(celery_app.amqp.router.route({}, task)["queue"].name)

    jobs = {job.task for job in Settings(secret_key=KEY).periodic_jobs()}
    assert jobs - FAST == set(SLOW_TASKS)
    for task in jobs - FAST:
        assert queue_of(task) == SLOW_QUEUE, task
    for task in (*FAST, "lagscope.poll_clusters", "lagscope.poll_cluster", "lagscope.deliver"):
        assert queue_of(task) == POLL_QUEUE, task


def test_each_worker_consumes_one_queue() -> None:
    polls = worker_argv("polls", 4, ["--without-gossip"])
    assert polls[polls.index("-Q") + 1] == POLL_QUEUE and "--concurrency=4" in polls
    assert polls[-1] == "--without-gossip"
    slow = worker_argv("slow", 4)
    assert slow[slow.index("-Q") + 1] == SLOW_QUEUE and "--concurrency=1" in slow
    assert polls[polls.index("-n") + 1] != slow[slow.index("-n") + 1]


def test_every_slow_job_has_a_soft_and_a_hard_time_limit(celery_app: Any) -> None:
    def registered(name: str) -> Any:
        # The job's own module registers on the module-level app; a stand-in of the same
        # name gets the same annotations from this one.
        def job() -> None:
            pass

        return celery_app.task(name=name)(job)

    limit = get_settings().slow_job_time_limit_s
    for task in SLOW_TASKS:
        job = registered(task)
        assert job.time_limit == limit, task
        assert 0 < job.soft_time_limit < job.time_limit, task
    # The polls keep Celery's default (none): their own reads are bounded per server.
    assert registered("lagscope.poll_clusters").time_limit is None


def test_a_node_name_given_for_the_pair_names_the_polls_worker_and_sets_the_slow_one_apart() -> (
    None
):
    extra = ["-n", "worker-a@%h", "--without-gossip"]
    polls, slow = worker_argv("polls", 2, extra), worker_argv("slow", 2, extra)
    assert polls.count("-n") == 1 and polls[polls.index("-n") + 1] == "worker-a@%h"
    assert slow.count("-n") == 1 and slow[slow.index("-n") + 1] == "slow.worker-a@%h"
    assert polls[-1] == slow[-1] == "--without-gossip"
    assert extra == ["-n", "worker-a@%h", "--without-gossip"]  # the caller's list untouched
