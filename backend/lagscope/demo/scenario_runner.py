"""Runs a scenario plan (:mod:`lagscope.demo.scenario`) against the lab's replicas, in a thread.

At each phase it writes the phase's note through the annotation service (so the journal shows
the step with its words), runs the phase's statements on every replica, waits the phase's
length, then prints the phase's figures read back from the store: the measured story, phase by
phase, on the demo's console. After the last phase it holds (the load keeps running with the
last phase's settings) or, with ``loop``, starts again at the first.

Failures on a replica (it restarts, the lab is stopping) or in the store (a locked SQLite file)
are printed and the story goes on: the demo must never die because a scenario step did.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pymysql
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from lagscope.demo.scenario import (
    CURRENT_APPLIER_SQL,
    NOTE_AUTHOR,
    NOTE_TAGS,
    Flavor,
    Parallel,
    Phase,
    ReplicaFigures,
    applier,
    phase_report,
    replica_figures,
    replica_statements,
)
from lagscope.errors import LagscopeError
from lagscope.journal.annotations import create_annotation
from lagscope.models import Channel, Instance, Sample

Connect = Callable[[str], "pymysql.connections.Connection[Any]"]
Annotate = Callable[[str, datetime], None]  # (the note's text, its time)
Figures = Callable[[datetime, datetime], Mapping[str, ReplicaFigures]]


class ScenarioRunner:
    def __init__(
        self,
        plan: Sequence[Phase],
        replicas: Sequence[str],
        connect: Connect,
        annotate: Annotate,
        figures: Figures | None = None,
        emit: Callable[[str], None] = print,
        loop: bool = False,
        flavor: Flavor = "mariadb",
    ) -> None:
        self._plan = tuple(plan)
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
            for phase in self._plan:
                began = datetime.now(UTC)
                self.enter(phase, began)
                if self._stop.wait(phase.seconds):
                    return
                self._report(phase, began)
            if not self._loop:
                last = self._plan[-1]
                self._emit(f"scenario: done; the load goes on with phase {last.name}'s settings")
                return

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
