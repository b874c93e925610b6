"""The demo plays an incident on a live lab (docs/demo.md): the lab makes it happen, the
runner notes it as a range on the timeline, holds it, undoes it, and the load it set is back.

Short (one blocked applier held 3 s, ~15 s with the table's set-up): the whole
``--scenario incidents`` runs ~10 minutes and is not part of the suite (docs/demo.md has its
measured run); the scenario's table is checked in tests/unit/demo/test_demo_incidents.py."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import select

from lagscope.analysis.causes.model import Cause
from lagscope.demo.incident_plan import TUNING_INCIDENT, IncidentStep
from lagscope.demo.load import WriteLoad
from lagscope.demo.scenario_runner import ScenarioRunner, store_annotator, store_notes
from lagscope.lab import Lab
from lagscope.lab.incidents import Incident, applier_transactions, incident
from lagscope.models import Annotation
from tests.factories import make_cluster, sqlite_store

pytestmark = pytest.mark.integration


def test_the_demo_plays_a_blocked_applier_and_notes_it(lab: Lab, tmp_path):
    step = replace(TUNING_INCIDENT, seconds=3.0, quiet_s=0.0, load_tps=50.0)
    shown: list[Incident] = []
    held: list[list[dict[str, object]]] = []

    @contextlib.contextmanager
    def play(step: IncidentStep) -> Iterator[Incident]:
        with incident(lab, step.incident, **dict(step.options)) as made:
            shown.append(made)
            yield made
            held.append(applier_transactions(lab, made.replica))  # just before it is undone

    lines: list[str] = []
    rates: list[float | None] = []
    with (
        sqlite_store(tmp_path) as sessions,
        WriteLoad(lambda: lab.connect("source"), threads=1, target_tps=20.0) as load,
    ):
        with sessions() as session, session.begin():
            cluster, _ = make_cluster(session, "demo")
            cluster_id = cluster.id

        def set_load(tps: float | None) -> None:
            rates.append(tps)
            load.set_rate(20.0 if tps is None else tps)

        runner = ScenarioRunner(
            [step],
            [r.name for r in lab.replicas],
            lab.connect,
            store_annotator(sessions, cluster_id),
            emit=lines.append,
            play=play,
            notes=store_notes(sessions, cluster_id),
            set_load=set_load,
        )
        assert runner.play_incident(step) is False, lines
        with sessions() as session:
            [note] = session.scalars(select(Annotation)).all()
            text, tags, starts, ends = note.text, note.tags, note.starts_at, note.ends_at

    [made] = shown
    assert (made.cause, made.replica) == (Cause.BLOCKED_BY_SESSION.label, "replica1")
    assert isinstance(made.session_id, int) and made.details["lock"] == "row"
    # Held for the step's length: the applier was still waiting on the session's row locks.
    assert any(t["trx_state"] == "LOCK WAIT" for t in held[0]), held
    assert text == step.note and "blocked by a session on the replica" in text
    assert list(tags) == ["scenario", "incident", "blocked_by_session"]
    assert ends is not None and timedelta(seconds=3) <= ends - starts < timedelta(seconds=15)
    assert rates == [50.0, None]
    assert any("row_lock undone after 3 s" in line for line in lines), lines
    assert [name for name, _ in runner.entered] == ["row_lock"]
    lab.wait_caught_up(timeout_s=60)
