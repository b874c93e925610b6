"""Runs a scenario plan (:mod:`lagscope.demo.scenario`) against the lab's replicas, in a thread.

At each phase it writes the phase's note through the annotation service (so the journal shows
the step with its words), runs the phase's statements on every replica, waits the phase's
length, then prints the phase's figures read back from the store: the measured story, phase by
phase, on the demo's console. After the last phase it holds (the load keeps running with the
last phase's settings) or, with ``loop``, starts again at the first.

An incident step is played through ``play`` (the demo's lab: :mod:`lagscope.lab.incidents`):
once the servers show the cause, its note is written (a range note, closed when the incident is
undone), it is held for the step's length, undone (the lab waits for the replicas to catch up),
and the scenario stays quiet for the step's ``quiet_s``.

Failures on a replica (it restarts, the lab is stopping) or in the store (a locked SQLite file)
are printed and the story goes on: the demo must never die because a scenario step did.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

import pymysql
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from lagscope.demo.incident_plan import IncidentStep, Step
from lagscope.demo.scenario import (
    CURRENT_APPLIER_SQL,
    NOTE_AUTHOR,
    NOTE_TAGS,
    Flavor,
    Parallel,
    Phase,
    applier,
    replica_statements,
)
from lagscope.demo.scenario_figures import ReplicaFigures, phase_report, replica_figures
from lagscope.errors import LagscopeError
from lagscope.journal.annotations import create_annotation, get_annotation, update_annotation
from lagscope.models import Channel, Instance, Sample

Connect = Callable[[str], "pymysql.connections.Connection[Any]"]
Annotate = Callable[[str, datetime], None]  # (the note's text, its time)
Figures = Callable[[datetime, datetime], Mapping[str, ReplicaFigures]]
# Makes an incident happen (entering returns once the servers show it) and undoes it.
Play = Callable[[IncidentStep], AbstractContextManager[object]]
# An incident's note: (text, tags, its start) -> an id; then (id, its end).
OpenNote = Callable[[str, Sequence[str], datetime], int | None]
CloseNote = Callable[[int, datetime], None]
SetLoad = Callable[[float | None], None]  # transactions/s; None: the scenario's own


class ScenarioRunner:
    def __init__(
        self,
        plan: Sequence[Step],
        replicas: Sequence[str],
        connect: Connect,
        annotate: Annotate,
        figures: Figures | None = None,
        emit: Callable[[str], None] = print,
        loop: bool = False,
        flavor: Flavor = "mariadb",
        play: Play | None = None,
        notes: tuple[OpenNote, CloseNote] | None = None,
        set_load: SetLoad | None = None,
    ) -> None:
        self._plan = tuple(plan)
        self._play = play
        self._notes = notes
        self._set_load = set_load
        self._replicas = tuple(replicas)
        self._connect = connect
        self._annotate = annotate
        self._figures = figures
        self._emit = emit
        self._loop = loop
        self._flavor: Flavor = flavor
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.entered: list[tuple[str, datetime]] = []  # (phase, when), for the curious and tests

    def start(self) -> ScenarioRunner:
        if self._plan:
            self._thread = threading.Thread(target=self._run, name="scenario", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        """Ends the story between two statements; a phase under way is left as it is."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)

    def _run(self) -> None:
        while not self._stop.is_set():
            for step in self._plan:
                if isinstance(step, IncidentStep):
                    if self.play_incident(step):
                        return
                    continue
                began = datetime.now(UTC)
                self.enter(step, began)
                if self._stop.wait(step.seconds):
                    return
                self._report(step, began)
            if not self._loop:
                last = self._plan[-1]
                if isinstance(last, Phase):
                    self._emit(
                        f"scenario: done; the load goes on with phase {last.name}'s settings"
                    )
                else:
                    self._emit("scenario: done; the load goes on")
                return

    def play_incident(self, step: IncidentStep) -> bool:
        """Make it happen, note it, hold it, undo it, stay quiet; True when stopped meanwhile.
        A failure (the lab could not make it happen, or not undo it in time) is printed and
        the story goes on."""
        if self._play is None:
            self._emit(f"scenario: no lab to play {step.incident} on; skipped")
            return False
        if step.load_tps is not None and self._set_load is not None:
            self._set_load(step.load_tps)
        self._emit(f"scenario: setting up {step.incident} …")
        stopped, note, ended = False, None, None
        try:
            with self._play(step):
                began = datetime.now(UTC)
                self.entered.append((step.incident, began))
                self._emit(f"scenario: {step.note}")
                note = self._open_note(step, began)
                stopped = self._stop.wait(step.seconds)
                ended = datetime.now(UTC)
                undo_began = time.monotonic()
            self._emit(
                f"scenario: {step.incident} undone after {(ended - began).total_seconds():.0f} s;"
                f" replicas caught up {time.monotonic() - undo_began:.0f} s later"
            )
        except (LagscopeError, OSError, SQLAlchemyError, pymysql.err.MySQLError) as exc:
            self._emit(f"scenario: incident {step.incident} failed: {exc}")
        finally:
            if step.load_tps is not None and self._set_load is not None:
                self._set_load(None)
            self._close_note(note, ended or datetime.now(UTC))
        return stopped or self._stop.wait(step.quiet_s)

    def _open_note(self, step: IncidentStep, at: datetime) -> int | None:
        try:
            if self._notes is not None:
                return self._notes[0](step.note, step.tags, at)
            self._annotate(step.note, at)
        except (LagscopeError, OSError, SQLAlchemyError) as exc:
            self._emit(f"scenario: could not write the note of {step.incident}: {exc}")
        return None

    def _close_note(self, note: int | None, at: datetime) -> None:
        if note is None or self._notes is None:
            return
        try:
            self._notes[1](note, at)
        except (LagscopeError, OSError, SQLAlchemyError) as exc:
            self._emit(f"scenario: could not close note {note}: {exc}")

    def enter(self, phase: Phase, began: datetime) -> None:
        note = phase.note_for(self._flavor)
        self._emit(f"scenario: {note}")
        self.entered.append((phase.name, began))
        try:
            self._annotate(note, began)
        except (LagscopeError, OSError, SQLAlchemyError) as exc:
            self._emit(f"scenario: could not write the note of phase {phase.name}: {exc}")
        for name in self._replicas:
            if self._stop.is_set():
                return
            try:
                apply_phase(self._connect(name), phase, self._flavor)
            except pymysql.err.MySQLError as exc:
                self._emit(f"scenario: phase {phase.name} on {name} failed: {exc}")

    def _report(self, phase: Phase, began: datetime) -> None:
        if self._figures is None:
            return
        ended = datetime.now(UTC)
        try:
            figures = self._figures(began, ended)
        except (LagscopeError, OSError, SQLAlchemyError) as exc:
            self._emit(f"scenario: no figures for phase {phase.name}: {exc}")
            return
        self._emit(phase_report(phase, (ended - began).total_seconds(), figures))


def apply_phase(
    conn: pymysql.connections.Connection[Any], phase: Phase, flavor: Flavor = "mariadb"
) -> None:
    """Run the phase's statements on one replica (and close the connection)."""
    try:
        with conn.cursor() as cur:
            cur.execute(CURRENT_APPLIER_SQL[flavor])
            row = cur.fetchone()
            names = [name for name, _ in applier(Parallel(0), flavor)]
            current = {} if row is None else {n: str(v) for n, v in zip(names, row, strict=True)}
            for statement in replica_statements(phase, current, flavor):
                cur.execute(statement)
    finally:
        conn.close()


def store_annotator(sessions: sessionmaker[Session], cluster_id: int) -> Annotate:
    """Notes go through the annotation service, as a user's would through the API."""

    def annotate(note: str, at: datetime) -> None:
        with sessions() as session, session.begin():
            create_annotation(session, cluster_id, NOTE_AUTHOR, at, note, tags=list(NOTE_TAGS))

    return annotate


def store_notes(sessions: sessionmaker[Session], cluster_id: int) -> tuple[OpenNote, CloseNote]:
    """An incident's note is a range: opened when the cause shows, closed when it is undone."""

    def open_note(text: str, tags: Sequence[str], at: datetime) -> int:
        with sessions() as session, session.begin():
            note = create_annotation(session, cluster_id, NOTE_AUTHOR, at, text, tags=list(tags))
            return note.id

    def close_note(note_id: int, at: datetime) -> None:
        with sessions() as session, session.begin():
            update_annotation(
                session, get_annotation(session, note_id), {"ends_at": at}, NOTE_AUTHOR
            )

    return open_note, close_note


def store_figures(sessions: sessionmaker[Session], cluster_id: int) -> Figures:
    """Each replica's lag and rates over ``[start, end)``, from the stored samples."""

    def figures(start: datetime, end: datetime) -> dict[str, ReplicaFigures]:
        columns: dict[str, tuple[list[float | None], ...]] = defaultdict(lambda: ([], [], [], []))
        with sessions() as session:
            rows = session.execute(
                select(
                    Instance.name,
                    Sample.ts,
                    Sample.lag_s,
                    Sample.apply_rate,
                    Sample.source_rate,
                )
                .join(Channel, Sample.channel_id == Channel.id)
                .join(Instance, Channel.instance_id == Instance.id)
                .where(Instance.cluster_id == cluster_id, Sample.ts >= start, Sample.ts < end)
                .order_by(Sample.ts)
            )
            for name, ts, lag, apply_rate, source_rate in rows:
                lags, applies, loads, offsets = columns[name]
                lags.append(lag)
                applies.append(apply_rate)
                loads.append(source_rate)
                offsets.append((ts - start).total_seconds())
        return {
            name: replica_figures(lags, applies, loads, [t or 0.0 for t in offsets])
            for name, (lags, applies, loads, offsets) in columns.items()
        }

    return figures
