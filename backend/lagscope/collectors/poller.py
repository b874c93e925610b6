"""Poll one instance: every reading in one round trip over one cached connection.

Per connection, once: ``SELECT @@version, @@version_comment`` (flavor → dialect), then the
variable catalog (which tracked parameters exist). Per poll, one multi-statement batch of the
readings in ``collectors/readings.py`` (one row each, in batch order): server state (clock
first), replica status, source status, parameters, counters, applier workers, heartbeat.

While the previous poll showed a channel behind or an applier busy on one transaction, the batch
also carries the cause readings (applier transactions, lock blockers, the relay log's table;
``collectors/cause_readings/``); a healthy poll's batch is the same without them.

Parameters are read every poll as one joined text column (collectors/params.py),
so a change is on the timeline one poll after it is made. ``slow_every_s`` paces the slow
readings: on MariaDB the worker threads, which only describe (MySQL's workers carry the applier
lag and are read every poll). ``snapshot.params_read`` says whether this poll read the
parameters.

Server state and replica status are required: if they fail, the poll fails with the translated
error. The others are optional: a reading the server refuses (a missing privilege, a missing
heartbeat table) is reported in ``snapshot.problems`` and skipped, to be tried again after
``RETRY_REFUSED_S``; the statements after it are re-sent at once, so one bad reading never costs
the others.

An answer Lagscope cannot use — fewer or more result sets than statements, a row or value a
parser stumbles on, a bound of collectors/answer_limits.py broken — fails the poll with
:class:`~lagscope.errors.UnexpectedAnswer` naming the reading, whichever reading it was, and
closes the connection: the next poll starts a new session.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from lagscope.collectors import params
from lagscope.collectors.answer_limits import ODD_ANSWER, odd_answer
from lagscope.collectors.dialect import Dialect, dialect_for
from lagscope.collectors.executor import BatchFailed, Executor, ResultSet
from lagscope.collectors.flavor import FLAVOR_SQL, ServerFlavor, parse_flavor
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.readings import (
    BY_NAME,
    READINGS,
    Readout,
    Setup,
    plan,
    standing_problems,
)
from lagscope.collectors.snapshot import InstanceSnapshot
from lagscope.errors import (
    AccessDenied,
    CollectorError,
    ServerUnreachable,
    UnexpectedAnswer,
    UnsupportedServer,
)

# One refused statement a minute per instance costs nothing; a fixed GRANT shows within a minute.
RETRY_REFUSED_S = 60.0


@dataclass(slots=True)
class _Session:
    """What we learned about the server on this connection."""

    flavor: ServerFlavor
    dialect: Dialect
    plan: params.ParamPlan
    setup: Setup
    disabled: dict[str, str] = field(default_factory=dict)
    disabled_at: dict[str, float] = field(default_factory=dict)
    slow_read_at: float | None = None
    # The cause readings' trigger looks at the previous poll (readings.plan).
    previous: InstanceSnapshot | None = None


class InstancePoller:
    """Polls one instance; the connection and what was learned on it are cached between polls."""

    def __init__(
        self,
        executor: Executor,
        heartbeat: HeartbeatTable | None = None,
        extra_params: Sequence[str] = (),
        clock: Callable[[], float] = time.time,
        slow_every_s: float = 0.0,
    ) -> None:
        self.executor = executor
        self.heartbeat = heartbeat
        self.extra_params = tuple(extra_params)
        self.slow_every_s = slow_every_s
        self._clock = clock
        self._session: _Session | None = None
        # The reading whose answer is being parsed, to name it when a parser stumbles.
        self._parsing = "flavor"

    @property
    def server(self) -> str:
        return self.executor.server

    def poll(self, behind_elsewhere: bool = False) -> InstanceSnapshot:
        """``behind_elsewhere``: the instance was behind at its last tick as stored (maybe
        polled by another worker process): take the cause readings now, not one poll later."""
        try:
            session = self._session or self._start_session()
            return self._poll(session, behind_elsewhere)
        except ServerUnreachable:
            # Connection gone: learn the server again on the next connection (it may have been
            # upgraded or replaced while it was away).
            self._session = None
            raise
        except UnexpectedAnswer:
            self.close()  # already closed by the executor when it saw it; a parser did not
            raise
        except ODD_ANSWER as exc:
            self.close()
            raise odd_answer(self.server, exc, self._parsing) from exc

    def close(self) -> None:
        self._session = None
        self.executor.close()

    def _start_session(self) -> _Session:
        self._parsing = "flavor"
        version_row = self._run_required(["flavor"], [FLAVOR_SQL])[0].rows
        version, comment = (str(v) for v in version_row[0]) if version_row else ("", "")
        flavor = parse_flavor(version, comment)
        if flavor is None:
            raise UnsupportedServer(self.server, f"cannot parse server version {version!r}")
        dialect = dialect_for(flavor, self.server)
        self._parsing = "catalog"
        catalog = self._run_required(["catalog"], [params.discovery_statement(dialect)])[0]
        plan = params.plan_params(dialect.product, catalog, self.extra_params)
        self._session = _Session(flavor, dialect, plan, Setup(dialect, plan, self.heartbeat))
        return self._session

    def _poll(self, session: _Session, behind_elsewhere: bool) -> InstanceSnapshot:
        sent_at = self._clock()
        self._retry_refused(session, sent_at)
        slow = session.slow_read_at is None or sent_at - session.slow_read_at >= self.slow_every_s
        readings = plan(
            READINGS, session.setup, session.previous, slow, session.disabled, behind_elsewhere
        )
        self._parsing = "batch"
        results = self._run_batch(session, readings)
        received_at = self._clock()
        if slow:
            session.slow_read_at = sent_at
        session.previous = self._snapshot(session, results, sent_at, received_at)
        return session.previous

    @staticmethod
    def _retry_refused(session: _Session, now: float) -> None:
        """A refused reading is tried again after ``RETRY_REFUSED_S``: an operator who runs the
        GRANT the problem names sees the reading come back without a reconnect."""
        for name, at in list(session.disabled_at.items()):
            if now - at >= RETRY_REFUSED_S:
                session.disabled.pop(name, None)
                del session.disabled_at[name]

    def _run_batch(
        self, session: _Session, readings: list[tuple[str, str]]
    ) -> dict[str, ResultSet]:
        results: dict[str, ResultSet] = {}
        pending = readings
        while pending:
            try:
                answers = self.executor.run([sql for _, sql in pending])
            except BatchFailed as failed:
                answers = failed.results
                name = pending[failed.index][0]
                if BY_NAME[name].required or isinstance(failed.error, UnexpectedAnswer):
                    raise self._explain(name, failed.error) from failed
                session.disabled[name] = self._problem(session, name, failed.error)
                session.disabled_at[name] = self._clock()
                _collect(results, pending[: failed.index], answers)
                results.pop(name, None)  # a refused reading gives nothing this poll
                # The refused reading's other statements (one per channel) go with it.
                pending = [(n, sql) for n, sql in pending[failed.index + 1 :] if n != name]
                continue
            _collect(results, pending, answers)
            pending = []
        return results

    def _run_required(self, names: list[str], statements: list[str]) -> list[ResultSet]:
        try:
            return self.executor.run(statements)
        except BatchFailed as failed:
            raise self._explain(names[failed.index], failed.error) from failed

    def _problem(self, session: _Session, reading: str, error: CollectorError) -> str:
        refused = BY_NAME[reading].refused if reading in BY_NAME else None
        if refused is not None and isinstance(error, AccessDenied):
            return refused(session.dialect)
        return str(self._explain(reading, error))

    def _explain(self, reading: str, error: CollectorError) -> CollectorError:
        if isinstance(error, UnexpectedAnswer):
            return error.of(reading)
        hint = BY_NAME[reading].privilege_hint if reading in BY_NAME else None
        if isinstance(error, AccessDenied) and hint:
            return AccessDenied(error.server, f"{reading}: {error.detail}; {hint}", error.code)
        return type(error)(error.server, f"{reading}: {error.detail}", error.code)

    def _snapshot(
        self, session: _Session, results: dict[str, ResultSet], sent_at: float, received_at: float
    ) -> InstanceSnapshot:
        readout = Readout(sent_at, received_at, previous=session.previous)
        fields: dict[str, Any] = {}
        for reading in READINGS:  # in batch order: a parser may use what an earlier one left
            if reading.name in results:
                self._parsing = reading.name
                fields.update(reading.parse(session.setup, results[reading.name], readout))
        problems = {**session.disabled, **standing_problems(session.setup), **readout.problems}
        return InstanceSnapshot(
            server=self.server,
            flavor=session.flavor,
            dialect=session.dialect.name,
            taken_at=datetime.fromtimestamp((sent_at + received_at) / 2, UTC),
            round_trip_s=received_at - sent_at,
            problems=MappingProxyType(problems),
            **fields,
        )


def _collect(
    results: dict[str, ResultSet], sent: list[tuple[str, str]], answers: list[ResultSet]
) -> None:
    """File each answer under its reading; a reading that sent several statements gets the
    rows of those shaped like its first (one per channel or table) as one result, and every
    statement's own answer in ``parts`` (one per table it joins)."""
    for (name, _), answer in zip(sent, answers, strict=True):
        kept = results.get(name)
        if kept is None:
            results[name] = answer
            continue
        parts = (*kept.each(), answer)
        rows = kept.rows + answer.rows if kept.columns == answer.columns else kept.rows
        results[name] = ResultSet(kept.columns, rows, parts)
