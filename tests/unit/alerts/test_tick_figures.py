"""``evaluate_ticks`` (the rules judged on the figures a tick just computed) against
``evaluate_cluster`` (the same rules on the tick read back from the store): two SQLite stores
built alike and fed the same owner ticks (tests/owner_ticks.py), one judged each way, must end
with the same states, events and deliveries. Then what the figures path asks the store, and a
detached cluster judged as the poll owner keeps it."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, event, select
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import DetachedInstanceError

from lagscope.alerts.evaluation import evaluate_cluster, tick_rules_query
from lagscope.alerts.payloads import context_from_json
from lagscope.alerts.readings import WATCHDOG_METRICS
from lagscope.alerts.tick_figures import StoredSample, TickFigures, evaluate_ticks
from lagscope.analysis.codes import Verdict
from lagscope.metrics_catalog import CHANNEL_ALERTS, INSTANCE_ALERTS
from lagscope.models import (
    AlertEvent,
    AlertRule,
    AlertState,
    Annotation,
    Channel,
    Delivery,
    ParamChange,
    Silence,
    WebhookTarget,
)
from tests.factories import make_cluster, sqlite_file
from tests.owner_ticks import ANSWERED, UNREACHABLE, OwnerTicks

T0 = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
STEP_S = 10.0
TICKS = 40
QUICK = 8  # ticks enough to fire (for_s is 15 s), for the tests beside the whole scenario
METRICS = [m for m in (*CHANNEL_ALERTS, *INSTANCE_ALERTS) if m not in WATCHDOG_METRICS]
# Thresholds put where the scenario's values cross them; the lag's 10 sits between 9.9996 and
# 10.0004, which the store keeps as 10.000 (judged unrounded, it would fire).
THRESHOLDS = {"lag": 10.0, "trx_behind": 20.0, "not_received": 5.0, "received_not_applied": 5.0,
              "eta": 10.0, "clock_skew": 1.0, "heartbeat_writer_stale": 0.5}  # fmt: skip
LAGS = (0.5, 9.9996, 10.0004, 12.3456, 31.25, None)


@dataclass
class Store:
    sessions: sessionmaker[Session]
    cluster_ids: list[int]
    rules: list[AlertRule] = field(default_factory=list)  # detached, as the owner keeps them


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Callable[[str], Store]]:
    with ExitStack() as stack:

        def make(name: str) -> Store:
            sessions = stack.enter_context(sqlite_file(tmp_path / f"{name}.db"))
            store = Store(sessions, fleet(sessions))
            with sessions() as session:
                store.rules = list(session.scalars(tick_rules_query()))
            return store

        yield make


def fleet(sessions: sessionmaker[Session]) -> list[int]:
    """Two clusters of a source and two replicas (r1 with channels "" and "b", r2 in region eu,
    delayed by 5 s), a rule per metric to both targets, and rules with a scope, an override,
    hysteresis, repeats, a null policy; silences and a maintenance window on the way."""
    with sessions() as s, s.begin():
        ids = []
        for n in range(2):
            cluster, named = make_cluster(
                s, f"c{n}", [("src", 3306, "source"), ("r1", 3307), ("r2", 3308, "replica", "eu")]
            )
            named["r1"].channels += [Channel(name=c, first_seen_at=T0) for c in ("", "b")]
            named["r2"].channels.append(Channel(name="", first_seen_at=T0, sql_delay_s=5))
            s.flush()
            ids.append(cluster.id)
        c0, c1 = ids
        hook, am = (
            WebhookTarget(name=kind, kind=kind, url="http://127.0.0.1:9/", created_at=T0)
            for kind in ("generic", "alertmanager_api")
        )
        s.add_all([hook, am])
        s.flush()
        targets = [hook.id, am.id]
        c0_r2 = s.scalars(select(Channel).where(Channel.sql_delay_s == 5)).first()
        assert c0_r2 is not None
        for metric in METRICS:
            threshold = THRESHOLDS.get(metric, 0.0)
            s.add(rule(metric, threshold=threshold, for_s=15.0, target_ids=targets))
        s.add_all([
            rule("lag", name="lag c1", cluster_id=c1, threshold=5.0, resolve_threshold=1.0,
                 repeat_s=60.0, target_ids=targets),
            rule("lag", name="lag eu", region="eu", keep_firing_s=30.0, target_ids=[am.id],
                 overrides=[{"instance_id": c0_r2.instance_id, "threshold": 20.0}]),
            rule("clock_skew", name="skew kept", null_policy="keep", threshold=2.0,
                 target_ids=targets),
            rule("eta", name="eta unknown fires", null_policy="firing", threshold=30.0),
        ])  # fmt: skip
        s.flush()
        lag_rule = s.scalars(select(AlertRule).where(AlertRule.name == "lag")).one()
        s.add_all([
            Silence(rule_id=lag_rule.id, cluster_id=c0, starts_at=at(8), ends_at=at(20),
                    created_at=T0),
            Silence(region="eu", starts_at=at(24), ends_at=at(30), created_at=T0),
            Annotation(cluster_id=c1, instance_id=named["r1"].id, starts_at=at(12),
                       ends_at=at(26), text="patching", tags=["maintenance"], created_at=T0),
        ])  # fmt: skip
    return ids


def rule(metric: str, **fields: Any) -> AlertRule:
    return AlertRule(
        **{"name": metric, "metric": metric, "created_at": T0, "updated_at": T0, **fields}
    )


def at(k: float) -> datetime:
    return T0 + timedelta(seconds=k * STEP_S)


def owner_tick(ticks: OwnerTicks, k: int) -> TickFigures:
    """Tick ``k`` of the scenario: values held for stretches of 6 ticks (an alert fires, stays,
    refreshes, resolves), a small jitter every tick, the same in every store."""
    cluster = ticks.cluster
    samples: dict[int, dict[str, Any]] = {}
    polled: dict[int, dict[str, Any]] = {}
    also = []
    stretch = random.Random(f"{k // 6}:{cluster.name}")
    cluster.heartbeat_stopped_at = at(k) if stretch.random() < 0.4 else None
    for instance in cluster.instances:
        held = random.Random(f"{k // 6}:{cluster.name}:{instance.name}")
        reachable = held.random() > 0.2
        polled[instance.id] = {"reachable": reachable, "round_trip_s": 0.0012345}
        if reachable:
            instance.last_error = held.choice([None, None, "Access denied for user 'm'@'h'"])
            instance.clock_offset_s = held.choice([0.01, 2.5, -3.25, None])
        else:
            instance.last_error = "timed out"
        if instance.name == "r1" and held.random() < 0.3:
            also.append(
                ParamChange(instance_id=instance.id, name="sync_binlog", old_value="1",
                            new_value="0", last_old_at=at(k - 1), first_new_at=at(k))
            )  # fmt: skip
        for channel in instance.channels:
            if cluster.name == "c1" and channel.name == "b" and k >= 30:
                channel.gone_at = channel.gone_at or at(k)  # RESET REPLICA ALL
                continue
            if not reachable:
                samples[channel.id] = UNREACHABLE
                continue
            samples[channel.id] = channel_figures(channel, k)
    return ticks.tick(at(k), samples, polled, also)


def channel_figures(channel: Channel, k: int) -> dict[str, Any]:
    held = random.Random(f"{k // 6}:{channel.id}")
    jitter = random.Random(f"{k}:{channel.id}").uniform(-0.0004, 0.0004)
    channel.last_io_errno = held.choice([0, 0, 0, 1236])
    sql_running = held.choice([True, True, True, False, None])  # None: the poll unanswered
    lag = held.choice(LAGS)
    behind = held.choice([0, 3, 40, None])
    return {
        "verdict": int(Verdict.STOPPED if sql_running is False else Verdict.APPLY_BOUND),
        "lag_s": None if lag is None else lag + jitter,
        "trx_behind": behind,
        "not_received": held.choice([0, 8]),
        "received_not_applied": held.choice([0, 12]),
        "errant_trx": held.choice([0, 0, 2]),
        "io_state": held.choice([1, 1, 0]),
        "sql_running": sql_running,
        "disagreement": held.random() < 0.25,
        "apply_rate": held.choice([3.33333, 0.5]) + jitter,
        "source_rate": held.choice([1.11111, 2.0]),
    }


Judge = Callable[[Store, list[TickFigures], float], list[int]]
Change = Callable[[int, list[TickFigures]], list[TickFigures]]


def on_figures(store: Store, figures: list[TickFigures], now_s: float) -> list[int]:
    with store.sessions() as s, s.begin():
        return evaluate_ticks(s, figures, now_s, store.rules)


def read_back(store: Store, figures: list[TickFigures], now_s: float) -> list[int]:
    ids = []
    for cluster_id in store.cluster_ids:
        with store.sessions() as s, s.begin():
            ids += evaluate_cluster(s, cluster_id, now_s)
    return ids


def as_given(_: int, figures: list[TickFigures]) -> list[TickFigures]:
    return figures


def run(
    store: Store,
    judge: Judge,
    change: Change = as_given,
    ticks: int = TICKS,
    tick: Callable[[OwnerTicks, int], TickFigures] = owner_tick,
) -> dict[str, Any]:
    """The scenario's ticks, each judged half a second later, then one more judgement with no
    tick (a firing alert refreshed on its last reading); everything the judging wrote."""
    owners = [OwnerTicks(store.sessions, cid) for cid in store.cluster_ids]
    returned = []
    figures: list[TickFigures] = []
    for k in range(ticks):
        figures = change(k, [tick(o, k) for o in owners])
        returned.append(judge(store, figures, at(k).timestamp() + 0.5))
    returned.append(judge(store, figures, at(ticks + 10).timestamp()))
    return {"returned": returned, **written(store.sessions)}


def written(sessions: sessionmaker[Session]) -> dict[str, list[dict[str, Any]]]:
    def rows(model: Any, skip: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
        keys = [c.key for c in model.__table__.columns if c.key not in skip]
        with sessions() as s:
            found = s.scalars(select(model).order_by(model.id))
            return [{k: getattr(r, k) for k in keys} for r in found]

    return {
        "states": rows(AlertState),
        "events": rows(AlertEvent),
        "deliveries": rows(Delivery, frozenset({"created_at"})),  # the wall clock's
    }


@pytest.mark.slow
def test_the_figures_judge_as_the_store_read_back(stores: Callable[[str], Store]) -> None:
    store = stores("figures")
    ours, theirs = run(store, on_figures), run(stores("read_back"), read_back)
    assert ours == theirs
    # Not a vacuous equality: every rule fired, and each way of notifying happened.
    events = theirs["events"]
    assert {e["rule_id"] for e in events if e["kind"] == "firing"} == {r.id for r in store.rules}
    assert {e["kind"] for e in events} == {"firing", "resolved", "repeat"}
    reasons = {(e["suppressed_by"] or "").split(" ")[0] for e in events}
    assert reasons == {"", "silence", "maintenance"}
    kinds = {d["kind"] for d in theirs["deliveries"]}
    assert kinds == {"firing", "resolved", "repeat", "refresh"}


def test_a_figure_other_than_the_row_written_judges_otherwise(
    stores: Callable[[str], Store],
) -> None:
    """The control: the comparison sees one changed figure (the lag of one channel at one
    tick, not what the tick wrote)."""

    def lag_changed(k: int, figures: list[TickFigures]) -> list[TickFigures]:
        if not 2 <= k <= 5:  # long enough to fire
            return figures
        first, *rest = figures
        cid = next(c for c, row in first.samples.items() if row["lag_s"] is not None)
        samples = {**first.samples, cid: {**first.samples[cid], "lag_s": 99.0}}
        return [TickFigures(first.cluster, samples, first.polled), *rest]

    ours = run(stores("figures"), on_figures, lag_changed, ticks=QUICK)
    theirs = run(stores("read_back"), read_back, ticks=QUICK)
    assert ours != theirs
    assert run(stores("figures_again"), on_figures, ticks=QUICK) == theirs  # unchanged: alike


def stopped_then_unread(ticks: OwnerTicks, k: int) -> TickFigures:
    """r2's SQL thread stopped (its alert fires at the third tick), then from the fourth tick
    no reading of r2 at all: nothing is written for it."""
    read = [i for i in ticks.cluster.instances if i.name != "r2" or k < 3]
    stopped = {"sql_running": False, "verdict": int(Verdict.STOPPED)}
    samples = {c.id: stopped if i.name == "r2" else {} for i in read for c in i.channels}
    return ticks.tick(at(k), samples, {i.id: {} for i in read})


def test_a_server_the_tick_did_not_read_is_judged_on_its_stored_rows(
    stores: Callable[[str], Store],
) -> None:
    """What a tick wrote nothing for is missing from its figures: judged on its last stored
    rows, as the read-back path judges it, its firing alert is still refreshed in Alertmanager
    (a replica that cannot be polled stays firing there)."""
    store = stores("figures")
    owners = [OwnerTicks(store.sessions, cid) for cid in store.cluster_ids]
    on_figures(store, [stopped_then_unread(o, 0) for o in owners], at(0).timestamp())
    figures = [stopped_then_unread(o, 3) for o in owners]
    with statements(store.sessions) as seen:
        on_figures(store, figures, at(3).timestamp())
    assert sum(bool(re.search(r"\bFROM samples\b", q)) for q in seen) == 1
    assert sum(bool(re.search(r"\bFROM instance_samples\b", q)) for q in seen) == 1

    ours = run(stores("again"), on_figures, ticks=12, tick=stopped_then_unread)
    assert ours == run(stores("read_back"), read_back, ticks=12, tick=stopped_then_unread)
    unread_since = at(3)
    refreshed = [d for d in ours["deliveries"] if d["kind"] == "refresh"]
    assert refreshed and all(d["next_attempt_at"] > unread_since for d in refreshed)


def test_stored_sample_rounds_as_the_columns_do() -> None:
    row = {**ANSWERED, "ts": T0, "lag_s": 10.0004, "apply_rate": 3.33333, "trx_behind": 7}
    sample = StoredSample.of(row)
    assert (sample.lag_s, sample.apply_rate, sample.trx_behind) == (10.0, 3.333, 7)
    assert sample.ts == T0 and sample.ts.tzinfo is not None


# What the figures path asks the store -------------------------------------------------------


@contextmanager
def statements(sessions: sessionmaker[Session]) -> Iterator[list[str]]:
    """The SQL statements sent through ``sessions``' engine inside the block."""
    engine = sessions.kw["bind"]
    seen: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", note)


def steady(stores: Callable[[str], Store], clusters: int) -> tuple[Store, list[OwnerTicks]]:
    """A store with ``clusters`` clusters (the fleet's two, more added alike) and the rules
    judged every tick except param_changed (a count of its own per server)."""
    store = stores(f"steady{clusters}")
    with store.sessions() as s, s.begin():
        for n in range(2, clusters):
            cluster, named = make_cluster(s, f"c{n}", [("src", 3306, "source"), ("r1", 3307)])
            named["r1"].channels.append(Channel(name="", first_seen_at=T0))
            s.flush()
            store.cluster_ids.append(cluster.id)
        s.execute(delete(AlertRule).where(AlertRule.metric == "param_changed"))
    store.cluster_ids = store.cluster_ids[:clusters]
    store.rules = [r for r in store.rules if r.metric != "param_changed"]
    return store, [OwnerTicks(store.sessions, cid) for cid in store.cluster_ids]


def quiet_tick(owners: Sequence[OwnerTicks], k: int) -> list[TickFigures]:
    """Every server answering, every channel caught up: nothing fires."""
    figures = []
    for ticks in owners:
        cluster = ticks.cluster
        samples = {c.id: {} for i in cluster.instances for c in i.channels}
        figures.append(ticks.tick(at(k), samples, {i.id: {} for i in cluster.instances}))
    return figures


@pytest.mark.parametrize("rules_given", [True, False])
def test_a_quiet_tick_costs_the_same_statements_for_one_cluster_or_five(
    stores: Callable[[str], Store], rules_given: bool
) -> None:
    """Reads: the states, the silences, the maintenance windows (and the rules, when the caller
    keeps none), whatever the number of clusters; never a sample. Writes: each state's
    compare-and-set, nothing else."""
    reads: dict[int, list[str]] = {}
    for clusters in (1, 5):
        store, owners = steady(stores, clusters)
        rules = store.rules if rules_given else None
        for k in range(2):  # the first makes the states
            figures = quiet_tick(owners, k)
            with store.sessions() as s, s.begin(), statements(store.sessions) as seen:
                assert evaluate_ticks(s, figures, at(k).timestamp(), rules) == []
        reads[clusters] = [q for q in seen if q.lstrip().startswith("SELECT")]
        writes = [q for q in seen if not q.lstrip().startswith("SELECT")]
        assert writes and all(q.startswith("UPDATE alert_states SET") for q in writes)
        assert not any(re.search(r"\b(instance_)?samples\b", q) for q in seen)
    assert len(reads[1]) == len(reads[5]) == (3 if rules_given else 4)


def test_clusters_no_rule_applies_to_ask_the_store_nothing(stores: Callable[[str], Store]) -> None:
    store, owners = steady(stores, 1)
    elsewhere = [r for r in store.rules if r.cluster_id not in (None, store.cluster_ids[0])]
    assert elsewhere  # "lag c1"
    figures = quiet_tick(owners, 0)
    with store.sessions() as s, statements(store.sessions) as seen:
        assert evaluate_ticks(s, figures, at(0).timestamp(), elsewhere) == []
        assert evaluate_ticks(s, [], at(0).timestamp()) == []
    assert seen == []


def test_the_read_back_path_reads_samples_per_cluster(stores: Callable[[str], Store]) -> None:
    """The control for the counter: ``evaluate_cluster`` over the same quiet tick reads the
    samples back and asks more of the store with each cluster."""
    store, owners = steady(stores, 5)
    quiet_tick(owners, 0)
    with statements(store.sessions) as seen:
        read_back(store, [], at(0).timestamp())
    assert sum(bool(re.search(r"\bFROM samples\b", q)) for q in seen) == 5
    assert sum(bool(re.search(r"\bFROM instance_samples\b", q)) for q in seen) == 5


# A detached cluster ----------------------------------------------------------------------------


def test_a_detached_cluster_is_judged_and_its_firing_gets_its_context(
    stores: Callable[[str], Store],
) -> None:
    store = stores("detached")
    ticks = OwnerTicks(store.sessions, store.cluster_ids[0])
    cluster = ticks.cluster
    src = cluster.instances[0]
    with pytest.raises(DetachedInstanceError):
        _ = src.cluster  # what a rule must not touch (heartbeat_writer_stale did)
    stopped = {c.id: {"sql_running": False, "verdict": int(Verdict.STOPPED)}
               for i in cluster.instances for c in i.channels}  # fmt: skip
    cluster.heartbeat_stopped_at = at(0)
    src.clock_offset_s = 4.0
    fired = []
    for k in range(3):  # for_s is 15 s: pending, then firing
        figures = ticks.tick(at(k), stopped, {i.id: {} for i in cluster.instances})
        with store.sessions() as s, s.begin():
            fired += evaluate_ticks(s, [figures], at(k).timestamp(), store.rules)
            assert cluster not in s and src not in s
    assert fired
    with store.sessions() as s:
        events = {e.rule_id: e for e in s.scalars(select(AlertEvent))}
        names = {r.id: r.metric for r in s.scalars(select(AlertRule))}
    by_metric = {names[rid]: context_from_json(e.context) for rid, e in events.items()}
    assert {"sql_stopped", "heartbeat_writer_stale", "clock_skew"} <= by_metric.keys()
    stale = by_metric["heartbeat_writer_stale"]
    assert (stale.cluster_name, stale.instance, stale.channel) == ("c0", "src", "")
    assert by_metric["sql_stopped"].instance in ("r1", "r2")
