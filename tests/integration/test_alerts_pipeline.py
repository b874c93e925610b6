"""Alerts end to end: the real lab, Redis, a real Celery worker and beat, and a real HTTP receiver
on loopback. Rules are stored as the API stores them; everything else is the product running.

Each test filters what the receiver got by its own rule id, and leaves the lab replicating.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from lagscope.alerts import rules as alert_rules
from lagscope.alerts import targets as alert_targets
from lagscope.analysis.causes.model import Cause
from lagscope.lab import incidents as inc
from lagscope.models import (
    AlertEvent,
    AlertRule,
    AlertState,
    Channel,
    Delivery,
    DeliveryAttempt,
    Instance,
    ParamChange,
)
from lagscope.models.episodes import Episode
from lagscope.security.secret_box import store_box

from .pipeline_stack import SECRET, Pipeline, now, start_pipeline
from .receiver import Receiver, receiver
from .test_api_alerts import documented_verify
from .waiting import assert_never, wait_until

pytestmark = pytest.mark.integration

HOOK_SECRET = b"pipeline-hook-secret"
ALERT_ENV = {
    "LAGSCOPE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
    "LAGSCOPE_WEBHOOK_BACKOFF_BASE_S": "1",
    "LAGSCOPE_DELIVERY_SWEEP_EVERY_S": "2",
    "LAGSCOPE_EXTERNAL_URL": "https://lagscope.example",
}


@pytest.fixture(scope="module")
def hook() -> Iterator[Receiver]:
    with receiver() as started:
        yield started


@pytest.fixture(scope="module")
def pipeline(lab, tmp_path_factory) -> Iterator[Pipeline]:
    workdir = tmp_path_factory.mktemp("alerts-pipeline")
    with start_pipeline(lab, workdir, params_every_s=2.0, extra_env=ALERT_ENV) as started:
        yield started


def target(pipe: Pipeline, hook: Receiver, name: str) -> int:
    with pipe.session() as s, s.begin():
        made = alert_targets.create_target(
            s,
            store_box(pipe.sessions, SECRET),
            ["127.0.0.1"],
            name,
            "generic",
            f"{hook.url}/{name}",
            HOOK_SECRET.decode(),
        )
        return made.id


def instance_id(pipe: Pipeline, name: str) -> int:
    with pipe.session() as s:
        found = s.scalar(select(Instance.id).where(Instance.name == name))
        assert found is not None
        return found


@pytest.fixture
def rules(pipeline: Pipeline) -> Iterator[list[int]]:
    """Rules a test adds; disabled afterwards so they do not fire into the next test."""
    made: list[int] = []
    yield made
    with pipeline.session() as s, s.begin():
        for rule_id in made:
            s.get_one(AlertRule, rule_id).enabled = False


def add_rule(pipe: Pipeline, made: list[int], target_id: int, **fields: Any) -> int:
    with pipe.session() as s, s.begin():
        rule = alert_rules.create_rule(s, {**fields, "target_ids": [target_id]})
        made.append(rule.id)
        return rule.id


def bodies(hook: Receiver, rule_id: int, status: str | None = None) -> list[dict[str, Any]]:
    found = [r.json() for r in hook.accepted()]
    return [
        b for b in found if b["rule"]["id"] == rule_id and (status is None or b["status"] == status)
    ]


def statuses(hook: Receiver, rule_id: int) -> list[str]:
    return [b["status"] for b in bodies(hook, rule_id)]


def recorded(pipe: Pipeline, rule_id: int) -> list[str]:
    """The kinds of the rule's events, as the evaluation recorded them (before any delivery)."""
    with pipe.session() as s:
        return list(
            s.scalars(
                select(AlertEvent.kind).where(AlertEvent.rule_id == rule_id).order_by(AlertEvent.id)
            )
        )


def sql_thread(lab, name: str, running: bool) -> None:
    conn = lab.connect(name)
    try:
        with conn.cursor() as cur:
            cur.execute("START SLAVE SQL_THREAD" if running else "STOP SLAVE SQL_THREAD")
    finally:
        conn.close()


@pytest.fixture
def restart_sql(lab) -> Iterator[None]:
    yield
    sql_thread(lab, "replica1", True)
    lab.wait_caught_up(timeout_s=120)


def test_sql_stopped_fires_once_after_for_and_resolves_once(
    lab, pipeline: Pipeline, hook: Receiver, rules: list[int], restart_sql: None
):
    rule = add_rule(
        pipeline,
        rules,
        target(pipeline, hook, "sqlstop"),
        name="sql thread stopped",
        metric="sql_stopped",
        for_s=3.0,
        instance_id=instance_id(pipeline, "replica1"),
    )
    stopped_at = now()
    sql_thread(lab, "replica1", False)
    wait_until(lambda: bodies(hook, rule, "firing"), timeout_s=90, message="firing delivered")
    first_stopped = min(
        r.ts for r in pipeline.samples("replica1", stopped_at) if r.sql_running is False
    )
    with pipeline.session() as s:
        fired = s.scalars(
            select(AlertEvent).where(AlertEvent.rule_id == rule, AlertEvent.kind == "firing")
        ).one()
    # Judged on sample times: the first stopped poll, then at least `for` of stopped polls.
    assert fired.at - first_stopped >= timedelta(seconds=3)
    sql_thread(lab, "replica1", True)
    wait_until(lambda: bodies(hook, rule, "resolved"), timeout_s=90, message="resolved")
    assert_never(lambda: len(bodies(hook, rule)) > 2, for_s=5, message="a third notification")
    assert statuses(hook, rule) == ["firing", "resolved"]
    requests = [r for r in hook.accepted() if r.json()["rule"]["id"] == rule]
    verify = documented_verify()
    assert all(verify(HOOK_SECRET, r.headers, r.body) for r in requests)


def test_worker_killed_mid_incident_sends_no_duplicate_and_the_resolved(
    lab, pipeline: Pipeline, hook: Receiver, rules: list[int], restart_sql: None
):
    rule = add_rule(
        pipeline,
        rules,
        target(pipeline, hook, "killed"),
        name="sql thread stopped (restart)",
        metric="sql_stopped",
        for_s=1.0,
        instance_id=instance_id(pipeline, "replica1"),
    )
    sql_thread(lab, "replica1", False)
    wait_until(lambda: bodies(hook, rule, "firing"), timeout_s=90, message="firing delivered")
    pipeline.kill_worker()
    pipeline.start_worker("worker-restarted")
    restarted_at = now()

    def judged_by_new_worker() -> bool:
        with pipeline.session() as s:
            state = s.scalars(select(AlertState).where(AlertState.rule_id == rule)).one()
            return (
                state.phase == "firing"
                and state.evaluated_at is not None
                and state.evaluated_at > restarted_at + timedelta(seconds=3)
            )

    wait_until(judged_by_new_worker, timeout_s=90, message="the new worker judging the incident")
    assert recorded(pipeline, rule) == ["firing"]
    assert statuses(hook, rule) == ["firing"]
    sql_thread(lab, "replica1", True)
    wait_until(lambda: bodies(hook, rule, "resolved"), timeout_s=90, message="resolved")
    assert_never(lambda: len(bodies(hook, rule)) > 2, for_s=5, message="a third notification")
    assert statuses(hook, rule) == ["firing", "resolved"]
    pipeline.assert_alive()


def test_a_replica_frozen_for_a_poll_does_not_resolve_a_stopped_sql_thread(
    lab, pipeline: Pipeline, hook: Receiver, rules: list[int], restart_sql: None
):
    """A poll that misses its deadline (SIGSTOP here; a busy box or a worker
    just restarted in CI) is stored with no reading and the verdict of the last three polls,
    still "stopped". It resolved the incident, and the next stopped poll fired it again."""
    rule = add_rule(
        pipeline,
        rules,
        target(pipeline, hook, "frozen"),
        name="sql thread stopped (frozen poll)",
        metric="sql_stopped",
        for_s=1.0,
        instance_id=instance_id(pipeline, "replica1"),
    )
    sql_thread(lab, "replica1", False)
    wait_until(lambda: bodies(hook, rule, "firing"), timeout_s=90, message="firing delivered")
    pid = lab.server("replica1").pid
    assert pid
    frozen_at = now()
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_until(
            lambda: any(r.sql_running is None for r in pipeline.samples("replica1", frozen_at)),
            timeout_s=60,
            message="a poll of the frozen replica stored without an answer",
        )
    finally:
        os.kill(pid, signal.SIGCONT)
    thawed_at = now()

    def judged_after_thaw() -> bool:
        with pipeline.session() as s:
            state = s.scalars(select(AlertState).where(AlertState.rule_id == rule)).one()
            return state.evaluated_at is not None and state.evaluated_at > thawed_at

    wait_until(judged_after_thaw, timeout_s=60, message="a stopped poll judged after the thaw")
    assert recorded(pipeline, rule) == ["firing"]
    assert statuses(hook, rule) == ["firing"]
    sql_thread(lab, "replica1", True)
    wait_until(lambda: bodies(hook, rule, "resolved"), timeout_s=90, message="resolved")
    assert statuses(hook, rule) == ["firing", "resolved"]


@pytest.mark.parametrize("how", ["disabled", "deleted"])
def test_a_firing_rule_switched_off_or_deleted_sends_resolved_once(
    lab, pipeline: Pipeline, restart_sql: None, how: str
):
    # A receiver of its own: SQLite gives a deleted rule's id to the next rule made, and the
    # shared receiver's bodies are told apart by rule id.
    with receiver() as hook:
        _switched_off_or_deleted(lab, pipeline, hook, how)


def _switched_off_or_deleted(lab, pipeline: Pipeline, hook: Receiver, how: str) -> None:
    made: list[int] = []
    rule = add_rule(
        pipeline,
        made,
        target(pipeline, hook, f"gone-{how}"),
        name=f"sql thread stopped ({how} while firing)",
        metric="sql_stopped",
        for_s=1.0,
        instance_id=instance_id(pipeline, "replica1"),
    )
    try:
        sql_thread(lab, "replica1", False)
        wait_until(lambda: bodies(hook, rule, "firing"), timeout_s=90, message="firing delivered")
        with pipeline.session() as s, s.begin():  # as PATCH / DELETE /alerts/rules/{id} do
            found = alert_rules.get_rule(s, rule)
            if how == "disabled":
                alert_rules.update_rule(s, found, {"enabled": False}, "ops")
            else:
                alert_rules.delete_rule(s, found, "ops")
        (resolved,) = wait_until(
            lambda: bodies(hook, rule, "resolved"), timeout_s=90, message="resolved sent"
        )
        assert_never(lambda: len(bodies(hook, rule)) > 2, for_s=6, message="a third notification")
        assert statuses(hook, rule) == ["firing", "resolved"]
        assert any(
            f"rule {'switched off' if how == 'disabled' else 'deleted'} by ops" in n["text"]
            for n in resolved["context"]["annotations"]
        ), resolved["context"]
    finally:
        with pipeline.session() as s, s.begin():
            left = s.get(AlertRule, rule)
            if left is not None:
                left.enabled = False


def test_receiver_failing_twice_gets_one_accepted_delivery_and_two_logged_failures(
    pipeline: Pipeline, rules: list[int]
):
    with receiver() as flaky:
        flaky.fail_next(500, 503)
        rule = add_rule(
            pipeline,
            rules,
            target(pipeline, flaky, "flaky"),
            name="always (clock skew above -1 s)",
            metric="clock_skew",
            threshold=-1.0,
            null_policy="firing",
            instance_id=instance_id(pipeline, "replica2"),
        )
        wait_until(lambda: bodies(flaky, rule), timeout_s=90, message="an accepted delivery")

        def settled() -> tuple[Delivery, list[DeliveryAttempt]] | None:
            """The worker logs the answer after the receiver has it: wait for that commit."""
            with pipeline.session() as s:
                (delivery,) = s.scalars(
                    select(Delivery).join(AlertEvent).where(AlertEvent.rule_id == rule)
                ).all()
                attempts = s.scalars(
                    select(DeliveryAttempt)
                    .where(DeliveryAttempt.delivery_id == delivery.id)
                    .order_by(DeliveryAttempt.number)
                ).all()
                return (delivery, list(attempts)) if delivery.status != "pending" else None

        delivery, attempts = wait_until(settled, timeout_s=60, message="the delivery settled")
        assert delivery.status == "delivered" and delivery.attempts == 3
        assert [(a.status_code, a.error) for a in attempts] == [
            (500, "HTTP 500"),
            (503, "HTTP 503"),
            (200, None),
        ]
        seen = flaky.all()
        assert [r.status for r in seen] == [500, 503, 200]
        assert len({r.headers["Idempotency-Key"] for r in seen}) == 1
        assert len(flaky.accepted()) == 1


def _global(lab, name: str, statement: str) -> None:
    conn = lab.connect(name)
    try:
        with conn.cursor() as cur:
            cur.execute("STOP SLAVE")
            cur.execute(statement)
            cur.execute("START SLAVE")
    finally:
        conn.close()


def _threads(lab) -> str:
    conn = lab.connect("replica1")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@GLOBAL.slave_parallel_threads")
            return str(cur.fetchone()[0])
    finally:
        conn.close()


def _change_recorded(pipe: Pipeline, new: str, since: datetime) -> bool:
    with pipe.session() as s:
        return (
            s.scalar(
                select(ParamChange.id)
                .join(Instance)
                .where(
                    Instance.name == "replica1",
                    ParamChange.name == "slave_parallel_threads",
                    ParamChange.new_value == new,
                    ParamChange.first_new_at >= since,
                )
            )
            is not None
        )


def test_lag_alert_after_a_parallel_threads_change_lists_it(
    lab, pipeline: Pipeline, hook: Receiver, rules: list[int], restart_sql: None
):
    original = _threads(lab)
    try:
        if original == "0":
            # The poller must see 4 before 0, or it sees no change at all.
            before = now()
            _global(lab, "replica1", "SET GLOBAL slave_parallel_threads = 4")
            wait_until(
                lambda: _change_recorded(pipeline, "4", before), timeout_s=60, message="4 seen"
            )
        started = now()
        _global(lab, "replica1", "SET GLOBAL slave_parallel_threads = 0")
        wait_until(
            lambda: _change_recorded(pipeline, "0", started), timeout_s=60, message="change seen"
        )
        rule = add_rule(
            pipeline,
            rules,
            target(pipeline, hook, "lag"),
            name="replica1 lag",
            metric="lag",
            threshold=2.0,
            resolve_threshold=1.0,
            for_s=2.0,
            instance_id=instance_id(pipeline, "replica1"),
        )
        sql_thread(lab, "replica1", False)  # heartbeats arrive, none applied: the lag grows
        (body,) = wait_until(
            lambda: bodies(hook, rule, "firing"), timeout_s=90, message="lag firing"
        )
        changes = body["context"]["param_changes"]
        assert {"name": "slave_parallel_threads", "new": "0"}.items() <= next(
            c for c in changes if c["name"] == "slave_parallel_threads" and c["new"] == "0"
        ).items()
        assert body["context"]["lag_source"] is not None
        assert body["links"]["dashboard"].startswith("https://lagscope.example/clusters/")
    finally:
        sql_thread(lab, "replica1", True)
        if _threads(lab) != original:
            _global(lab, "replica1", f"SET GLOBAL slave_parallel_threads = {int(original)}")


def _episode_of(pipe: Pipeline, channel_id: int) -> Episode | None:
    """The channel's ongoing episode."""
    with pipe.session() as s:
        episode_id = s.scalar(select(Channel.episode_id).where(Channel.id == channel_id))
        return s.get(Episode, episode_id) if episode_id is not None else None


def _episode_named(pipe: Pipeline, channel_id: int, cause: Cause) -> int | None:
    """The channel's ongoing episode, once its main cause is ``cause``."""
    episode = _episode_of(pipe, channel_id)
    return episode.id if episode is not None and episode.main_cause == cause else None


def test_firing_and_resolved_bodies_name_the_episodes_main_cause_and_link_its_page(
    lab, pipeline: Pipeline, hook: Receiver, rules: list[int]
):
    """A session on replica1 holds row locks the applier needs: the episode's main cause is
    "blocked by a session on the replica", named with the session's id. The firing body says
    so, and so does the resolved one, sent once the lock is gone and the lag drained (when the
    newest poll names that cause no more), each with a link to the episode's page."""
    channel = pipeline.channel_id("replica1")
    assert channel is not None
    # An episode left by an earlier test (a stopped SQL thread) would go on through the lock,
    # its main cause the stop: this one starts on a replica that has been caught up for 30 s.
    lab.wait_caught_up(timeout_s=120)
    wait_until(
        lambda: _episode_of(pipeline, channel) is None,
        timeout_s=120,
        message="replica1 out of any episode",
    )
    with inc.row_lock(lab) as made:
        episode_id = wait_until(
            lambda: _episode_named(pipeline, channel, Cause.BLOCKED_BY_SESSION),
            timeout_s=90,
            message="replica1's episode named blocked by a session",
        )
        rule = add_rule(
            pipeline,
            rules,
            target(pipeline, hook, "episode"),
            name="replica1 lag, with its episode",
            metric="lag",
            threshold=2.0,
            resolve_threshold=1.0,
            for_s=2.0,
            instance_id=instance_id(pipeline, "replica1"),
        )
        (firing,) = wait_until(
            lambda: bodies(hook, rule, "firing"), timeout_s=90, message="lag firing"
        )
    (resolved,) = wait_until(
        lambda: bodies(hook, rule, "resolved"), timeout_s=180, message="resolved after the lock"
    )
    url = f"https://lagscope.example/clusters/{pipeline.cluster_id}/episodes/{episode_id}"
    for body in (firing, resolved):
        episode = body["episode"]
        assert episode is not None, body
        assert episode["id"] == episode_id and episode["url"] == url
        assert body["links"]["episode"] == url
        main = episode["main_cause"]
        assert main["cause"] == "blocked_by_session", main
        assert main["words"] == "blocked by a session on the replica"
        assert f"session {made.session_id}" in main["sentence"], main
        assert main["evidence"]["blocker_thread_id"] == made.session_id, main
        assert main["action"]
        assert body["summary"].endswith("— cause: blocked by a session on the replica")
        assert isinstance(body["state"], str) and body["state"]
        # The statements are server text: this target did not opt in to them.
        assert "FOR UPDATE" not in json.dumps(body, ensure_ascii=False)
    assert resolved["episode"]["started_at"] == firing["episode"]["started_at"]
