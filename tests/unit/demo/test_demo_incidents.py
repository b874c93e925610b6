"""`lagscope demo --scenario incidents` and the tuning story's opening, as data, and how the
runner plays an incident step."""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime

import pytest

from lagscope.analysis.causes.model import Cause
from lagscope.demo.incident_plan import INCIDENTS_PLAN, TUNING_INCIDENT, IncidentStep, demo_plan
from lagscope.demo.scenario import DEMO_SCENARIOS, Phase, plan_for
from lagscope.demo.scenario_runner import ScenarioRunner
from lagscope.errors import InvalidInput
from lagscope.lab.incidents import INCIDENTS
from lagscope.lab.servers import LabError

LABELS = {c.label for c in Cause}


def test_the_incidents_scenario_plays_each_cause_of_the_lab():
    plan = demo_plan("incidents")
    assert plan == INCIDENTS_PLAN
    assert [s.incident for s in plan] == [
        "row_lock",
        "metadata_lock",
        "large_transaction",
        "long_alter",
        "no_primary_key",
        "network_bound",
    ]
    assert [s.cause for s in plan] == [
        Cause.BLOCKED_BY_SESSION,
        Cause.BLOCKED_BY_SESSION,
        Cause.LARGE_TRANSACTION,
        Cause.DDL,
        Cause.NO_USABLE_KEY,
        Cause.NETWORK,
    ]
    # Long enough to be seen, and quiet after, so each episode closes before the next begins.
    assert all(40 <= s.seconds <= 75 and s.quiet_s >= 20 for s in plan)
    # Under ~12 minutes of causes and quiet (the lab's set-up and catch-up come on top).
    assert sum(s.seconds + s.quiet_s for s in plan) <= 12 * 60


def test_the_first_incident_outlasts_the_demo_alert_rule():
    """The row lock is held past 30 s of lag plus the rule's 30 s, so the inbox gets an alert."""
    from lagscope.demo.alerting import LAG_FOR_S, LAG_THRESHOLD_S

    first = INCIDENTS_PLAN[0]
    assert first.cause is Cause.BLOCKED_BY_SESSION
    assert first.seconds >= LAG_THRESHOLD_S + LAG_FOR_S + 10


@pytest.mark.parametrize("step", [*INCIDENTS_PLAN, TUNING_INCIDENT], ids=lambda s: s.incident)
def test_each_step_names_a_lab_incident_with_options_it_takes(step: IncidentStep):
    maker = INCIDENTS[step.incident]
    accepted = inspect.signature(maker).parameters
    assert all(name in accepted for name, _ in step.options), step.options
    assert step.cause.label in LABELS
    # The note says what was done and what Lagscope should name, in words, no identifiers.
    assert step.note.startswith("incident: ")
    assert step.note.endswith(f"Lagscope should say: {step.cause.words}")
    assert step.cause.label not in step.note
    assert step.tags == ("scenario", "incident", step.cause.label)


def test_the_tuning_story_opens_with_a_short_blocked_applier_at_a_light_load():
    plan = demo_plan("tuning")
    assert plan[0] == TUNING_INCIDENT
    assert [p.name for p in plan[1:] if isinstance(p, Phase)] == ["A", "B", "C"]
    assert TUNING_INCIDENT.cause is Cause.BLOCKED_BY_SESSION
    assert TUNING_INCIDENT.seconds <= 30 and TUNING_INCIDENT.load_tps == 200.0
    # `lagscope scenario` on servers of one's own has no lab to play incidents on.
    assert all(isinstance(p, Phase) for p in plan_for("tuning"))
    assert demo_plan("steady") == ()
    assert set(DEMO_SCENARIOS) == {"tuning", "incidents", "steady"}
    with pytest.raises(InvalidInput):
        demo_plan("chaos")
    with pytest.raises(InvalidInput):
        plan_for("incidents")


class FakeLab:
    def __init__(self, fail: str | None = None) -> None:
        self.log: list[str] = []
        self.fail = fail

    @contextlib.contextmanager
    def play(self, step: IncidentStep) -> Iterator[object]:
        if self.fail == "enter":
            raise LabError("timed out waiting for the applier")
        self.log.append(f"make {step.incident}")
        try:
            yield object()
        finally:
            self.log.append(f"undo {step.incident}")


def runner(lab: FakeLab, plan: Sequence[IncidentStep], notes: list, loads: list) -> ScenarioRunner:
    def open_note(text: str, tags: Sequence[str], at: datetime) -> int:
        notes.append(["open", text, tuple(tags), at])
        return len(notes)

    def close_note(note: int, at: datetime) -> None:
        notes.append(["close", note, at])

    return ScenarioRunner(
        plan,
        ["replica1", "replica2"],
        lambda _: pytest.fail("an incident runs no phase statements"),  # type: ignore[arg-type,return-value]
        lambda *_: pytest.fail("incident notes are range notes"),
        emit=lambda line: lab.log.append(line),
        play=lab.play,
        notes=(open_note, close_note),
        set_load=loads.append,
    )


def quick(step: IncidentStep) -> IncidentStep:
    return IncidentStep(
        step.incident, step.title, step.cause, 0.01, step.options, 0.01, step.load_tps
    )


def test_an_incident_is_made_noted_held_undone_and_its_note_closed():
    lab, notes, loads = FakeLab(), [], []
    plan = [quick(TUNING_INCIDENT), quick(INCIDENTS_PLAN[2])]
    run = runner(lab, plan, notes, loads)
    run.start()
    run._thread.join(10)  # type: ignore[union-attr]
    assert [line for line in lab.log if not line.startswith("scenario: setting up")][:3] == [
        "make row_lock",
        f"scenario: {TUNING_INCIDENT.note}",
        "undo row_lock",
    ]
    assert [e for e in lab.log if e.startswith(("make", "undo"))] == [
        "make row_lock",
        "undo row_lock",
        "make large_transaction",
        "undo large_transaction",
    ]
    (o1, t1, tags1, start1), (c1, n1, end1) = notes[0], notes[1]
    assert (o1, c1, n1, t1, tags1) == (
        "open",
        "close",
        1,
        TUNING_INCIDENT.note,
        TUNING_INCIDENT.tags,
    )
    assert start1 <= end1
    assert [n[0] for n in notes] == ["open", "close", "open", "close"]
    # The opening's light load, then back to the story's (None) after it; the next sets none.
    assert loads == [200.0, None]
    assert [name for name, _ in run.entered] == ["row_lock", "large_transaction"]
    assert lab.log[-1] == "scenario: done; the load goes on"


def test_an_incident_the_lab_cannot_make_is_reported_and_the_story_goes_on():
    lab, notes, loads = FakeLab(fail="enter"), [], []
    run = runner(lab, [quick(TUNING_INCIDENT)], notes, loads)
    assert run.play_incident(quick(TUNING_INCIDENT)) is False
    assert any("incident row_lock failed: timed out" in line for line in lab.log)
    assert notes == [] and loads == [200.0, None]


def test_stopping_during_an_incident_undoes_it():
    lab, notes, loads = FakeLab(), [], []
    long = IncidentStep("row_lock", "held", Cause.BLOCKED_BY_SESSION, 3600.0)
    run = runner(lab, [long], notes, loads)
    run.start()
    entered = threading.Event()
    for _ in range(200):
        if run.entered:
            entered.set()
            break
        threading.Event().wait(0.01)
    assert entered.is_set()
    run.stop(timeout_s=5)
    assert "undo row_lock" in lab.log
    assert [n[0] for n in notes] == ["open", "close"]
