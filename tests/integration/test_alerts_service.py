"""Alert evaluation and delivery bookkeeping on a real store (SQLite file, schema by Alembic),
fed recorded samples by hand: the lab cannot make a lag oscillate around a threshold on cue,
so the no-flapping requirement is shown here, one sample per second as the recorder writes them.

No lab is needed; marked ``integration`` because it migrates a real store.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import insert, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.alerts import delivery as alert_delivery
from lagscope.alerts.evaluation import evaluate_cluster
from lagscope.alerts.payloads import context_from_json
from lagscope.analysis.channel_metrics import unreachable_metrics
from lagscope.analysis.codes import LagSource, Verdict
from lagscope.config import Settings
from lagscope.errors import Conflict
from lagscope.ingest import recording
from lagscope.ingest.tick_before import channel_state
from lagscope.inventory import instances as inventory
from lagscope.models import (
    AlertEvent,
    AlertRule,
    AlertState,
    Annotation,
    Channel,
    Delivery,
    DeliveryAttempt,
    InstanceSample,
    ParamChange,
    Sample,
    Silence,
    WebhookTarget,
)
from tests.factories import make_cluster, secret_box, sqlite_store

pytestmark = pytest.mark.integration

T0 = datetime(2026, 11, 23, 6, 0, tzinfo=UTC)
SETTINGS = Settings(
    secret_key="alerts-service-test-3c9e1f7a0b2d4e6f8a1c",
    webhook_allowed_hosts="127.0.0.1,hooks.example",
    webhook_backoff_base_s=1.0,
    webhook_retry_horizon_s=10.0,
)


@dataclass
class Store:
    sessions: sessionmaker[Session]
    cluster_id: int
    instance_id: int
    channel_id: int
    target_id: int
    t: float = T0.timestamp()

    def rule(self, **fields: object) -> int:
        defaults: dict[str, object] = {
            "name": "lag",
            "metric": "lag",
            "threshold": 10.0,
            "for_s": 3.0,
            "target_ids": [self.target_id],
            "created_at": T0,
            "updated_at": T0,
        }
        with self.sessions() as s, s.begin():
            rule = AlertRule(**{**defaults, **fields})
            s.add(rule)
            s.flush()
            return rule.id

    def tick(
        self, lag: float | None, sql_running: bool = True, verdict: int = 0, step_s: float = 1.0
    ) -> list[int]:
        """One recorded poll ``step_s`` after the last, then the evaluation the worker runs."""
        self.t += step_s
        at = datetime.fromtimestamp(self.t, UTC)
        with self.sessions() as s, s.begin():
            s.add(
                Sample(
                    channel_id=self.channel_id,
                    ts=at,
                    verdict=verdict,
                    lag_s=lag,
                    lag_source=LagSource.HEARTBEAT if lag is not None else None,
                    not_received=0,
                    received_not_applied=int(lag or 0) * 10,
                    sql_running=sql_running,
                    io_state=1,
                )
            )
            s.add(InstanceSample(instance_id=self.instance_id, ts=at, reachable=True))
            inventory.get_instance(s, self.instance_id).last_polled_at = at
        with self.sessions() as s, s.begin():
            return evaluate_cluster(s, self.cluster_id, self.t)

    def unanswered(self) -> list[int]:
        """One poll the replica did not answer in time, stored as the recorder stores it (the
        same row builder), then the evaluation."""
        self.t += 1.0
        at = datetime.fromtimestamp(self.t, UTC)
        with self.sessions() as s, s.begin():
            channel = s.get_one(Channel, self.channel_id)
            metrics = unreachable_metrics(channel_state(channel), self.t)
            recording._remember(channel, metrics, at, keep_progress_time=True)
            s.execute(insert(Sample), [recording.sample_row(self.channel_id, at, metrics)])
            s.add(InstanceSample(instance_id=self.instance_id, ts=at, reachable=False))
            inventory.get_instance(s, self.instance_id).last_polled_at = at
        with self.sessions() as s, s.begin():
            return evaluate_cluster(s, self.cluster_id, self.t)

    def events(self) -> list[tuple[str, str | None]]:
        with self.sessions() as s:
            rows = s.scalars(select(AlertEvent).order_by(AlertEvent.id))
            return [(e.kind, e.suppressed_by) for e in rows]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with make_store(tmp_path) as made:
        yield made


@contextmanager
def make_store(tmp_path: Path) -> Iterator[Store]:
    """A migrated SQLite store with a cluster (source, replica r1 and its channel) and a
    generic webhook target (also used by test_alertmanager_compat)."""
    with sqlite_store(tmp_path) as sessions:
        with sessions() as s, s.begin():
            cluster, named = make_cluster(s, "alerts", [("src", 3306, "source"), ("r1", 3307)])
            channel = Channel(name="", first_seen_at=T0)
            named["r1"].channels.append(channel)
            target = WebhookTarget(
                name="hook", kind="generic", url="http://127.0.0.1:9/hook", created_at=T0
            )
            s.add(target)
            s.flush()
            ids = (cluster.id, named["r1"].id, channel.id, target.id)
        yield Store(sessions, *ids)


OSCILLATING = [8.0, 12.0, 9.0, 13.0, 11.0, 12.0, 9.5, 12.0, 8.0, 11.0, 9.0, 12.5, 9.0, 11.0]


def test_hysteresis_fires_once_on_an_oscillating_lag(store: Store):
    store.rule(resolve_threshold=5.0, for_s=2.0)
    for lag in [12.0, 12.0, 12.0, *OSCILLATING * 3]:
        store.tick(lag)
    assert store.events() == [("firing", None)]
    for lag in (4.0, 3.0):
        store.tick(lag)
    assert store.events() == [("firing", None), ("resolved", None)]


def test_without_hysteresis_the_same_lag_flaps(store: Store):
    """The control: the same samples with resolve = threshold notify again and again."""
    store.rule(for_s=0.0)
    for lag in OSCILLATING * 3:
        store.tick(lag)
    assert len(store.events()) > 10


def test_for_duration_ignores_one_sample_spikes(store: Store):
    store.rule(for_s=3.0)
    for lag in [0.5, 40.0, 0.5, 40.0, 0.5, 0.5, 40.0, 0.4]:
        store.tick(lag)
    assert store.events() == []


def test_null_lag_with_the_sql_thread_stopped_fires_after_for(store: Store):
    store.rule(for_s=2.0)
    for _ in range(4):
        store.tick(None, sql_running=False, verdict=Verdict.STOPPED)
    assert store.events() == [("firing", None)]


def test_one_unanswered_poll_does_not_resolve_a_stopped_sql_thread(store: Store):
    """A poll that misses its deadline (a busy box, a worker just restarted)
    is stored with no reading and the verdict of the last three polls, still "stopped". That
    sample resolved the incident and the next one fired it again."""
    store.rule(name="sql stopped", metric="sql_stopped", threshold=0.0, for_s=2.0)
    for _ in range(4):
        store.tick(None, sql_running=False, verdict=Verdict.STOPPED)
    with store.sessions() as s, s.begin():
        s.get_one(Channel, store.channel_id).recent_classes = "4,4,4"
        s.get_one(Channel, store.channel_id).verdict = Verdict.STOPPED
    store.unanswered()
    with store.sessions() as s:
        stored = s.scalars(select(Sample).order_by(Sample.ts.desc()).limit(1)).one()
        assert (stored.verdict, stored.sql_running) == (Verdict.STOPPED, None)
    for _ in range(3):
        store.tick(None, sql_running=False, verdict=Verdict.STOPPED)
    assert store.events() == [("firing", None)]
    store.tick(0.0)
    assert store.events() == [("firing", None), ("resolved", None)]


def test_delayed_replica_is_judged_on_lag_minus_sql_delay(store: Store):
    store.rule(threshold=60.0, for_s=0.0)
    with store.sessions() as s, s.begin():
        s.get_one(Channel, store.channel_id).sql_delay_s = 3600
    for lag in (3605.0, 3610.0, 3630.0):
        store.tick(lag)
    assert store.events() == []
    store.tick(3700.0)
    assert store.events() == [("firing", None)]


def test_silence_holds_the_firing_until_it_ends(store: Store):
    store.rule(for_s=0.0)
    until = datetime.fromtimestamp(store.t + 3.5, UTC)
    with store.sessions() as s, s.begin():
        s.add(Silence(starts_at=T0, ends_at=until, reason="upgrade", author="a", created_at=T0))
    ids = [store.tick(20.0) for _ in range(5)]
    assert store.events() == [("firing", "silence 1"), ("firing", None)]
    assert [len(i) for i in ids] == [0, 0, 0, 1, 0]


def test_maintenance_annotation_mutes_and_resolved_follows_only_a_sent_firing(store: Store):
    store.rule(for_s=0.0)
    with store.sessions() as s, s.begin():
        s.add(
            Annotation(
                cluster_id=store.cluster_id,
                starts_at=T0,
                ends_at=T0 + timedelta(hours=1),
                text="rebuild replica",
                tags=["maintenance"],
                created_at=T0,
            )
        )
    store.tick(20.0)
    store.tick(0.0)
    assert store.events() == [("firing", "maintenance 1")]


def test_payload_context_lists_parameter_changes_of_the_hour_before(store: Store):
    store.rule(for_s=0.0)
    with store.sessions() as s, s.begin():
        s.add(
            ParamChange(
                instance_id=store.instance_id,
                name="slave_parallel_threads",
                old_value="4",
                new_value="0",
                last_old_at=T0 - timedelta(minutes=10),
                first_new_at=T0 - timedelta(minutes=9),
            )
        )
        s.add(
            ParamChange(
                instance_id=store.instance_id,
                name="sync_binlog",
                old_value="1",
                new_value="0",
                last_old_at=T0 - timedelta(hours=3),
                first_new_at=T0 - timedelta(hours=2),
            )
        )
    (delivery_id,) = store.tick(25.0)
    with store.sessions() as s:
        ctx = context_from_json(s.get_one(Delivery, delivery_id).context)
    assert [(c.name, c.old, c.new) for c in ctx.changes] == [("slave_parallel_threads", "4", "0")]
    assert (ctx.lag_s, ctx.lag_source, ctx.received_not_applied) == (25.0, "heartbeat", 250.0)


def test_payload_context_says_why_the_channel_is_behind(store: Store):
    store.rule(for_s=0.0)
    with store.sessions() as s, s.begin():
        s.get_one(Channel, store.channel_id).current_causes = [
            {
                "cause": "large_transaction",
                "confidence": 0.9,
                "sentence": "Applying one transaction for 40 s, 2.1 M rows changed so far.",
                "action": "Split such transactions at the source.",
                "evidence": {"rows_modified": 2100000},
                "needs": None,
                "since": T0.timestamp(),
            },
            {"cause": "not_a_cause_of_this_version", "sentence": "left out"},
        ]
    (delivery_id,) = store.tick(25.0)
    with store.sessions() as s:
        ctx = context_from_json(s.get_one(Delivery, delivery_id).context)
    assert [(w.cause, w.words, w.sentence, w.action) for w in ctx.why] == [
        (
            "large_transaction",
            "one large transaction",
            "Applying one transaction for 40 s, 2.1 M rows changed so far.",
            "Split such transactions at the source.",
        )
    ]


def test_a_reading_is_judged_once_and_a_lost_race_is_a_conflict(store: Store):
    store.rule(for_s=0.0)
    store.tick(20.0)
    with store.sessions() as s, s.begin():
        assert evaluate_cluster(s, store.cluster_id, store.t) == []  # same sample again
    store.t += 1
    with store.sessions() as s, s.begin():
        s.add(
            Sample(
                channel_id=store.channel_id,
                ts=datetime.fromtimestamp(store.t, UTC),
                verdict=0,
                lag_s=1.0,
                sql_running=True,
            )
        )
    version, judged_first = _judged_while_another_held_the_state(store)
    assert version == 1 and len(judged_first) == 1  # the resolved
    with store.sessions() as s:
        assert s.scalars(select(AlertState.phase)).one() == "ok"
        assert [k for k, _ in store.events()] == ["firing", "resolved"]


def test_a_state_another_judge_wrote_since_it_was_read_is_a_conflict(store: Store):
    """No event to record (the rule waits an hour before firing): only the state's version
    tells that another judge moved it, and the later judgement must not overwrite it."""
    store.rule(for_s=3600.0)
    store.tick(20.0)
    store.t += 1
    with store.sessions() as s, s.begin():
        at = datetime.fromtimestamp(store.t, UTC)
        s.add(Sample(channel_id=store.channel_id, ts=at, verdict=0, lag_s=25.0, sql_running=True))
    version, judged_first = _judged_while_another_held_the_state(store)
    assert judged_first == []
    with store.sessions() as s:
        state = s.scalars(select(AlertState)).one()
        assert (state.phase, state.value, state.version) == ("pending", 25.0, version + 1)
    assert store.events() == []


def _judged_while_another_held_the_state(store: Store) -> tuple[int, list[int]]:
    """Session b reads the state, a judges the newest reading and commits, then b judges the
    same reading: b's judgement must be a Conflict. Returns the version b read and a's
    deliveries."""
    a, b = store.sessions(), store.sessions()
    try:
        with b.begin():
            (held,) = b.scalars(select(AlertState)).all()  # read before a judged (kept: weak map)
            version = held.version
            with a.begin():
                judged_first = evaluate_cluster(a, store.cluster_id, store.t)
            with pytest.raises(Conflict):
                evaluate_cluster(b, store.cluster_id, store.t)
    finally:
        a.close()
        b.close()
    return version, judged_first


def _outcomes(store: Store, *outcomes: alert_delivery.Outcome) -> list[float | None]:
    (delivery_id,) = store.tick(30.0) if not store.events() else (1,)
    delays = []
    for outcome in outcomes:
        with store.sessions() as s, s.begin():
            delays.append(
                alert_delivery.record(s, SETTINGS, delivery_id, outcome, store.t, random.Random(1))
            )
    return delays


def test_two_failures_then_success_log_three_attempts(store: Store):
    store.rule(for_s=0.0)
    delays = _outcomes(
        store,
        alert_delivery.Outcome(500, 0.01, None),
        alert_delivery.Outcome(None, 3.0, "ReadTimeout: timed out"),
        alert_delivery.Outcome(202, 0.01, None),
    )
    assert delays[0] is not None and delays[1] is not None and delays[2] is None
    with store.sessions() as s:
        (delivery,) = s.scalars(select(Delivery)).all()
        attempts = s.scalars(select(DeliveryAttempt).order_by(DeliveryAttempt.number)).all()
    assert delivery.status == "delivered" and delivery.attempts == 3
    assert [(a.status_code, a.error) for a in attempts] == [
        (500, "HTTP 500"),
        (None, "ReadTimeout: timed out"),
        (202, None),
    ]


def test_a_client_error_is_not_retried(store: Store):
    store.rule(for_s=0.0)
    assert _outcomes(store, alert_delivery.Outcome(400, 0.01, None)) == [None]
    with store.sessions() as s:
        assert s.scalars(select(Delivery.status)).one() == "failed"


def test_redirect_to_another_host_is_refused():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "hooks.example":
            return httpx.Response(307, headers={"location": "http://169.254.169.254/latest"})
        raise AssertionError("followed a redirect to another host")

    request = alert_delivery.Request(1, "http://hooks.example/h", b"{}", {}, ("hooks.example",))
    outcome = alert_delivery.send(request, SETTINGS, httpx.MockTransport(handler))
    assert outcome.error and outcome.error.startswith("refused: redirect to another host")
    assert not outcome.retryable


def test_same_host_redirect_is_followed():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if request.url.path == "/old":
            return httpx.Response(308, headers={"location": "/new"})
        return httpx.Response(204)

    request = alert_delivery.Request(1, "http://hooks.example/old", b"{}", {}, ("hooks.example",))
    outcome = alert_delivery.send(request, SETTINGS, httpx.MockTransport(handler))
    assert outcome.accepted and seen == ["/old", "/new"]


def test_a_url_no_longer_allowed_is_refused_at_send_time():
    request = alert_delivery.Request(1, "http://10.0.0.5/h", b"{}", {}, ("hooks.example",))
    outcome = alert_delivery.send(request, SETTINGS)
    assert outcome.error and "allow-list" in outcome.error and not outcome.retryable


def test_claim_is_taken_by_one_worker_only(store: Store):
    store.rule(for_s=0.0)
    (delivery_id,) = store.tick(30.0)
    now = datetime.fromtimestamp(store.t, UTC)
    with store.sessions() as s, s.begin():
        assert alert_delivery.claim(s, delivery_id, now, 60)
    with store.sessions() as s, s.begin():
        assert not alert_delivery.claim(s, delivery_id, now, 60)
        assert alert_delivery.due(s, store.t) == []
        # The lease ran out (the worker holding it died): another may take it.
        assert alert_delivery.claim(s, delivery_id, now + timedelta(seconds=61), 60)


def test_a_secret_that_no_longer_decrypts_fails_the_delivery_with_a_logged_attempt(store: Store):
    with store.sessions() as s, s.begin():
        s.get_one(WebhookTarget, store.target_id).secret_enc = secret_box("old-key").encrypt("x")
    store.rule(for_s=0.0)
    (delivery_id,) = store.tick(30.0)
    box = secret_box("the-key-now")
    with store.sessions() as s, s.begin():
        request = alert_delivery.prepare(s, box, SETTINGS, delivery_id, store.t)
    assert request is not None
    outcome = alert_delivery.send(request, SETTINGS)
    with store.sessions() as s, s.begin():
        assert alert_delivery.record(s, SETTINGS, delivery_id, outcome, store.t) is None
    with store.sessions() as s:
        delivery = s.get_one(Delivery, delivery_id)
        assert delivery.status == "failed"
        assert delivery.last_error and "LAGSCOPE_SECRET_KEY" in delivery.last_error
