"""The poll owner's alert judge (engine/alert_judge.py) on a SQLite file store fed owner ticks
(tests/owner_ticks.py): a batch judged on its figures and its deliveries queued once, a lost
race judged again from the store, the rules kept in memory but never judged stale, a broker
that is down."""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.alerts import rules as alert_rules
from lagscope.alerts.evaluation import evaluate_cluster
from lagscope.alerts.state_writes import KeptStates
from lagscope.alerts.tick_figures import TickFigures
from lagscope.analysis.codes import Verdict
from lagscope.config import generate_key, get_settings
from lagscope.engine.alert_judge import AlertJudge
from lagscope.models import AlertEvent, AlertRule, AlertState, Channel, Delivery, WebhookTarget
from tests.factories import make_cluster, sqlite_file
from tests.owner_ticks import OwnerTicks

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
STOPPED = {"sql_running": False, "verdict": int(Verdict.STOPPED)}


@dataclass
class Fleet:
    sessions: sessionmaker[Session]
    owners: list[OwnerTicks]
    rule_id: int
    queued: list[int] = field(default_factory=list)
    now: float = T0.timestamp()  # the judge's clock: half a second after the last tick

    def judge(self) -> AlertJudge:
        return AlertJudge(self.sessions, queue=self.queued.append, clock=lambda: self.now)

    def tick(self, k: int, sql_running: bool = True) -> list[TickFigures]:
        """Every channel of every cluster at second ``k``, its SQL thread running or not."""
        self.now = (T0 + timedelta(seconds=k)).timestamp() + 0.5
        figures = []
        for ticks in self.owners:
            cluster = ticks.cluster
            values = {} if sql_running else STOPPED
            samples = {c.id: values for i in cluster.instances for c in i.channels}
            polled = {i.id: {} for i in cluster.instances}
            figures.append(ticks.tick(T0 + timedelta(seconds=k), samples, polled))
        return figures

    def deliveries(self) -> list[tuple[int, str]]:
        with self.sessions() as s:
            rows = s.execute(
                select(AlertEvent.cluster_id, Delivery.kind)
                .join(AlertEvent, AlertEvent.id == Delivery.event_id)
                .order_by(Delivery.id)
            )
            return [(cid, kind) for cid, kind in rows]

    def delivery_ids(self) -> list[int]:
        with self.sessions() as s:
            return list(s.scalars(select(Delivery.id).order_by(Delivery.id)))


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    """Two clusters of a source and a replica with one channel; a rule firing at once when a
    SQL thread stops, to one webhook."""
    with sqlite_file(tmp_path / "store.db") as sessions:
        with sessions() as s, s.begin():
            ids = []
            for n in range(2):
                cluster, named = make_cluster(s, f"c{n}", [("src", 3306, "source"), ("r1", 3307)])
                named["r1"].channels.append(Channel(name="", first_seen_at=T0))
                s.flush()
                ids.append(cluster.id)
            hook = WebhookTarget(name="hook", kind="generic", url="http://h/", created_at=T0)
            s.add(hook)
            s.flush()
            rule = AlertRule(name="stopped", metric="sql_stopped", threshold=0.0,
                             target_ids=[hook.id], created_at=T0, updated_at=T0)  # fmt: skip
            s.add(rule)
            s.flush()
            rule_id = rule.id
        yield Fleet(sessions, [OwnerTicks(sessions, cid) for cid in ids], rule_id)


@pytest.fixture
def tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """lagscope.tasks.jobs (the read-back path), imported as test_beat_schedule does: the
    Celery app is built from the settings on import, which want a key."""
    monkeypatch.setenv("LAGSCOPE_SECRET_KEY", generate_key())
    monkeypatch.delenv("LAGSCOPE_DEMO", raising=False)
    monkeypatch.delenv("LAGSCOPE_OLD_SECRET_KEYS", raising=False)
    get_settings.cache_clear()
    try:
        importlib.import_module("lagscope.tasks.jobs")
    finally:
        get_settings.cache_clear()


@pytest.fixture
def statements(fleet: Fleet) -> Iterator[list[str]]:
    engine = fleet.sessions.kw["bind"]
    seen: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", note)
    yield seen
    event.remove(engine, "before_cursor_execute", note)


def test_a_batch_is_judged_on_its_figures_and_each_delivery_queued_once(
    fleet: Fleet, statements: list[str]
) -> None:
    judge = fleet.judge()
    judge(fleet.tick(0))
    judge(fleet.tick(1, sql_running=False))
    assert fleet.deliveries() == [(o.cluster.id, "firing") for o in fleet.owners]
    assert fleet.queued == fleet.delivery_ids()
    figures = fleet.tick(2, sql_running=False)
    mark = len(statements)
    judge(figures)  # still firing: nothing more to send, and no sample read back
    assert fleet.queued == fleet.delivery_ids()
    assert not any(re.search(r"\b(instance_)?samples\b", q) for q in statements[mark:])


@pytest.mark.usefixtures("tasks")
def test_a_lost_race_is_judged_again_from_the_store_and_delivers_once(fleet: Fleet) -> None:
    """Another worker judges the first cluster's tick and commits while the batch is being
    judged: the batch's compare-and-set fails, nothing of it is kept, and each cluster is
    judged again from the store. The first was judged already (by the other: it sends its
    own delivery), the second's firing is recorded and queued once."""
    judge = fleet.judge()
    judge(fleet.tick(0))
    first, second = (o.cluster.id for o in fleet.owners)
    raced = []

    def other_worker(session: Session, *_: Any) -> None:
        if raced:
            return
        raced.append(session)
        with fleet.sessions() as other, other.begin():
            raced.append(evaluate_cluster(other, first, fleet.now))

    figures = fleet.tick(1, sql_running=False)
    event.listen(fleet.sessions, "before_flush", other_worker)
    try:
        judge(figures)
    finally:
        event.remove(fleet.sessions, "before_flush", other_worker)
    (theirs,) = raced[1]
    assert fleet.deliveries() == [(first, "firing"), (second, "firing")]
    assert fleet.queued == [d for d in fleet.delivery_ids() if d != theirs]


def test_a_rule_switched_off_is_not_judged_again_from_memory(fleet: Fleet) -> None:
    """Switching a firing rule off resolves its alerts and drops their states; the judge's
    rules in memory must not bring them back firing at the next tick."""
    judge = fleet.judge()
    judge.RULES_EVERY_S = 3600.0  # only the store's list of rules can say it changed
    judge(fleet.tick(0, sql_running=False))
    with fleet.sessions() as s, s.begin():
        rule = alert_rules.get_rule(s, fleet.rule_id)
        alert_rules.update_rule(s, rule, {"enabled": False}, "ann")
    judge(fleet.tick(1, sql_running=False))
    kinds = [kind for _, kind in fleet.deliveries()]
    assert kinds == ["firing", "firing", "resolved", "resolved"]
    with fleet.sessions() as s:
        assert s.scalars(select(AlertState)).all() == []


def test_with_no_rule_a_batch_asks_the_store_once_a_period(
    fleet: Fleet, statements: list[str]
) -> None:
    with fleet.sessions() as s, s.begin():
        s.get_one(AlertRule, fleet.rule_id).metric = "polling_stopped"  # not judged at a tick
    judge = fleet.judge()
    judge.RULES_EVERY_S = 3600.0
    statements.clear()
    for k in range(3):
        figures = fleet.tick(k, sql_running=False)
        mark = len(statements)
        judge(figures)
        assert len(statements) - mark == (1 if k == 0 else 0)
    assert fleet.queued == []


def test_with_rules_kept_a_batch_asks_for_their_list_not_the_rules(
    fleet: Fleet, statements: list[str]
) -> None:
    judge = fleet.judge()
    judge.RULES_EVERY_S = 3600.0
    judge(fleet.tick(0))
    figures = fleet.tick(1)
    mark = len(statements)
    judge(figures)
    reads = [q for q in statements[mark:] if q.lstrip().startswith("SELECT")]
    assert len(reads) == 4  # the rules' ids and edits, the states, silences, maintenance
    assert sum(q.startswith("SELECT alert_rules.id, alert_rules.updated_at") for q in reads) == 1


def test_a_broker_that_is_down_leaves_the_delivery_for_the_sweep(
    fleet: Fleet, caplog: pytest.LogCaptureFixture
) -> None:
    def refused(delivery_id: int) -> None:
        raise ConnectionError("redis is down")

    judge = AlertJudge(fleet.sessions, queue=refused, clock=lambda: fleet.now)
    with caplog.at_level(logging.WARNING, "lagscope.engine.alert_judge"):
        judge(fleet.tick(0, sql_running=False))
    assert len(fleet.delivery_ids()) == 2
    assert "waits for the sweep" in caplog.text
    with fleet.sessions() as s:
        assert {d.status for d in s.scalars(select(Delivery))} == {"pending"}


def _state_loads(statements: list[str]) -> int:
    """Statements that load whole alert states (the kept check reads ids and versions only)."""
    return sum(
        1 for q in statements if re.search(r"SELECT alert_states\.id, alert_states\.\w+, ", q)
    )


def test_the_states_are_kept_between_batches_and_loaded_again_when_the_store_moved(
    fleet: Fleet, statements: list[str]
) -> None:
    judge = fleet.judge()
    judge(fleet.tick(0))
    mark = len(statements)
    for k in (1, 2, 3):
        judge(fleet.tick(k, sql_running=k != 1))  # fires at 1, resolves at 2
    assert _state_loads(statements[mark:]) == 0, statements[mark:]
    assert judge.kept.hits == 3
    assert [kind for _, kind in fleet.deliveries()] == ["firing", "firing", "resolved", "resolved"]

    # Another judge moves the first cluster's states: the next batch loads them again and
    # judges on what the store holds, with no conflict and nothing sent twice.
    first = fleet.owners[0].cluster.id
    fleet.tick(4, sql_running=False)
    with fleet.sessions() as other, other.begin():
        theirs = evaluate_cluster(other, first, fleet.now)
    mark, loads = len(statements), judge.kept.loads
    judge(fleet.tick(5, sql_running=False))
    assert judge.kept.loads == loads + 1
    assert _state_loads(statements[mark:]) == 1
    kinds = [(cid == first, kind) for cid, kind in fleet.deliveries()]
    assert kinds[4:] == [(True, "firing"), (False, "firing")]
    assert theirs and fleet.queued == [d for d in fleet.delivery_ids() if d not in theirs]


def test_a_batch_that_does_not_commit_keeps_nothing(fleet: Fleet) -> None:
    judge = fleet.judge()
    judge(fleet.tick(0))
    figures = fleet.tick(1, sql_running=False)

    def fail(session: Session, *_: Any) -> None:
        raise RuntimeError("the store went away at commit")

    event.listen(fleet.sessions, "before_commit", fail)
    try:
        with pytest.raises(RuntimeError):
            judge(figures)
    finally:
        event.remove(fleet.sessions, "before_commit", fail)
    # What the failed batch moved in memory is gone: the next one judges from the store.
    loads = judge.kept.loads
    judge(fleet.tick(2, sql_running=False))
    assert judge.kept.loads == loads + 1
    assert [kind for _, kind in fleet.deliveries()] == ["firing", "firing"]


def _state_writes(statements: list[str]) -> int:
    return sum(1 for q in statements if q.lstrip().startswith("UPDATE alert_states"))


def test_a_kept_state_that_only_moved_its_value_is_written_at_its_checkpoint(
    fleet: Fleet, statements: list[str]
) -> None:
    """An alert that stays ok moves only its value and reading time each second: kept, it is
    written once per checkpoint; a state whose phase moves is written by the judgement that
    moved it."""
    monotonic = [100.0]
    judge = fleet.judge()
    judge.kept = KeptStates(checkpoint_s=5.0, clock=lambda: monotonic[0])
    judge(fleet.tick(0))  # the states are inserted
    mark = len(statements)
    for k in (1, 2, 3):
        monotonic[0] += 1.0
        judge(fleet.tick(k))
    assert _state_writes(statements[mark:]) == 0
    with fleet.sessions() as s:
        assert {st.evaluated_at for st in s.scalars(select(AlertState))} == {T0}

    monotonic[0] += 2.5  # 5.5 s after they were written
    mark = len(statements)
    judge(fleet.tick(4))
    assert _state_writes(statements[mark:]) == 1  # one executemany, both states
    with fleet.sessions() as s:
        assert {st.evaluated_at for st in s.scalars(select(AlertState))} == {
            T0 + timedelta(seconds=4)
        }

    monotonic[0] += 1.0
    judge(fleet.tick(5, sql_running=False))  # fires: written at once, and sent
    with fleet.sessions() as s:
        assert {st.phase for st in s.scalars(select(AlertState))} == {"firing"}
    assert [kind for _, kind in fleet.deliveries()] == ["firing", "firing"]
    assert judge.kept.hits == 5 and judge.kept.loads == 1


def test_what_a_checkpoint_held_back_is_judged_again_by_another_judge_without_an_event(
    fleet: Fleet,
) -> None:
    """The store's reading time lags the owner's: another judge taking the states from the
    store (a takeover, a lost race) judges a reading the owner judged already, moves nothing
    but the value, and the owner, seeing the store moved, judges on from it."""
    monotonic = [100.0]
    judge = fleet.judge()
    judge.kept = KeptStates(checkpoint_s=5.0, clock=lambda: monotonic[0])
    judge(fleet.tick(0))
    monotonic[0] += 1.0
    judge(fleet.tick(1))  # held back: the store says the reading of second 0 was judged last
    first = fleet.owners[0].cluster.id
    with fleet.sessions() as other, other.begin():
        assert evaluate_cluster(other, first, fleet.now) == []  # the reading of second 1
    with fleet.sessions() as s:
        states = list(s.scalars(select(AlertState).order_by(AlertState.cluster_id)))
    assert [(st.phase, st.evaluated_at) for st in states] == [
        ("ok", T0 + timedelta(seconds=1)),
        ("ok", T0),
    ]
    monotonic[0] += 1.0
    loads = judge.kept.loads
    judge(fleet.tick(2, sql_running=False))
    assert judge.kept.loads == loads + 1
    assert [kind for _, kind in fleet.deliveries()] == ["firing", "firing"]
