"""Poll one instance: every reading in one round trip over one cached connection.

Per connection, once: ``SELECT @@version, @@version_comment`` (flavor → dialect), then the
variable catalog (which tracked parameters exist). Per poll, one multi-statement batch in this
order: server state (clock first), replica status, source status, parameters, counters, applier
workers, heartbeat.

Parameters change rarely (DESIGN.md §11): with ``slow_every_s`` they are read at most that
often (and on MariaDB the worker threads too, which only describe; MySQL's workers carry the
applier lag and are read every poll). ``snapshot.params_read`` says whether this poll read them.

Server state and replica status are required: if they fail, the poll fails with the translated
error. The others are optional: a reading the server refuses (a missing privilege, a missing
heartbeat table) is reported in ``snapshot.problems`` and skipped, to be tried again after
``RETRY_REFUSED_S``; the statements after it are re-sent at once, so one bad reading never costs
the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from lagscope.collectors import (
    applier_workers,
    counters,
    params,
    replica_status,
    server_state,
    source_status,
)
from lagscope.collectors.dialect import Dialect, dialect_for
from lagscope.collectors.executor import BatchFailed, Executor, ResultSet
from lagscope.collectors.flavor import FLAVOR_SQL, ServerFlavor, parse_flavor
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.snapshot import InstanceSnapshot
from lagscope.errors import AccessDenied, CollectorError, ServerUnreachable, UnsupportedServer

_REQUIRED = ("server_state", "replica_status")
# One refused statement a minute per instance costs nothing; a fixed GRANT shows within a minute.
RETRY_REFUSED_S = 60.0

# What to tell an operator when the monitoring user is refused a reading (REPLICATION.md §6.2).
_PRIVILEGE_HINTS = {
    "replica_status": "needs REPLICA MONITOR (MariaDB 10.5.9+) or REPLICATION CLIENT (MySQL)",
    "source_status": "needs BINLOG MONITOR (MariaDB) or REPLICATION CLIENT (MySQL)",
    "workers": "needs SELECT on performance_schema (MySQL) or PROCESS (MariaDB)",
    "heartbeat": "needs SELECT on the heartbeat table",
    "counters": "needs SELECT on performance_schema (MySQL)",
}


@dataclass(slots=True)
class _Session:
    """What we learned about the server on this connection."""

    flavor: ServerFlavor
    dialect: Dialect
    plan: params.ParamPlan
    disabled: dict[str, str] = field(default_factory=dict)
    disabled_at: dict[str, float] = field(default_factory=dict)
    slow_read_at: float | None = None


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

    @property
    def server(self) -> str:
        return self.executor.server

    def poll(self) -> InstanceSnapshot:
        try:
            session = self._session or self._start_session()
            return self._poll(session)
        except ServerUnreachable:
            # Connection gone: learn the server again on the next connection (it may have been
            # upgraded or replaced while it was away).
            self._session = None
            raise

    def close(self) -> None:
        self._session = None
        self.executor.close()

    def _start_session(self) -> _Session:
        version_row = self._run_required(["flavor"], [FLAVOR_SQL])[0].rows
        version, comment = (str(v) for v in version_row[0]) if version_row else ("", "")
        flavor = parse_flavor(version, comment)
        if flavor is None:
            raise UnsupportedServer(self.server, f"cannot parse server version {version!r}")
        dialect = dialect_for(flavor, self.server)
        catalog = self._run_required(["catalog"], [params.discovery_statement(dialect)])[0]
        plan = params.plan_params(dialect.product, catalog, self.extra_params)
        self._session = _Session(flavor, dialect, plan)
        return self._session

    def _poll(self, session: _Session) -> InstanceSnapshot:
        sent_at = self._clock()
        self._retry_refused(session, sent_at)
        slow = session.slow_read_at is None or sent_at - session.slow_read_at >= self.slow_every_s
        readings = self._readings(session, slow)
        results = self._run_batch(session, readings)
        received_at = self._clock()
        if slow:
            session.slow_read_at = sent_at
        return self._snapshot(session, results, sent_at, received_at)

    @staticmethod
    def _retry_refused(session: _Session, now: float) -> None:
        """A refused reading is tried again after ``RETRY_REFUSED_S``: an operator who runs the
        GRANT the problem names sees the reading come back without a reconnect."""
        for name, at in list(session.disabled_at.items()):
            if now - at >= RETRY_REFUSED_S:
                session.disabled.pop(name, None)
                del session.disabled_at[name]

    def _readings(self, session: _Session, slow: bool) -> list[tuple[str, str]]:
        d = session.dialect
        skip = set(session.disabled)
        if not slow:
            skip.add("params")
            if not d.has_worker_timestamps:
                skip.add("workers")
        wanted: list[tuple[str, str | None]] = [
            ("server_state", server_state.statement(d)),
            ("replica_status", replica_status.statement(d)),
            ("source_status", source_status.statement(d)),
            ("params", session.plan.statement()),
            ("counters", counters.statement(d)),
            ("workers", applier_workers.statement(d)),
            ("heartbeat", self.heartbeat.statement() if self.heartbeat else None),
        ]
        return [(n, sql) for n, sql in wanted if sql and n not in skip]

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
                if name in _REQUIRED:
                    raise self._explain(name, failed.error) from failed
                session.disabled[name] = self._problem(session, name, failed.error)
                session.disabled_at[name] = self._clock()
                results.update(zip((n for n, _ in pending), answers, strict=False))
                pending = pending[failed.index + 1 :]
                continue
            results.update(zip((n for n, _ in pending), answers, strict=True))
            pending = []
        return results

    def _run_required(self, names: list[str], statements: list[str]) -> list[ResultSet]:
        try:
            return self.executor.run(statements)
        except BatchFailed as failed:
            raise self._explain(names[failed.index], failed.error) from failed

    def _problem(self, session: _Session, reading: str, error: CollectorError) -> str:
        if reading == "workers" and isinstance(error, AccessDenied):
            # The words the workers view shows: what is missing and the GRANT that fixes it.
            return applier_workers.privilege_problem(session.dialect.product)
        return str(self._explain(reading, error))

    def _explain(self, reading: str, error: CollectorError) -> CollectorError:
        hint = _PRIVILEGE_HINTS.get(reading)
        if isinstance(error, AccessDenied) and hint:
            return AccessDenied(error.server, f"{reading}: {error.detail}; {hint}", error.code)
        return type(error)(error.server, f"{reading}: {error.detail}", error.code)

    def _snapshot(
        self, session: _Session, results: dict[str, ResultSet], sent_at: float, received_at: float
    ) -> InstanceSnapshot:
        d = session.dialect
        state = server_state.parse(d, results["server_state"])
        problems = dict(session.disabled)
        if session.plan.missing:
            problems["params"] = "not on this server: " + ", ".join(session.plan.missing)
        heartbeat = None
        if self.heartbeat is not None and "heartbeat" in results:
            heartbeat = self.heartbeat.parse(results["heartbeat"], state.server_now)
        channels = replica_status.parse(d, results["replica_status"])
        workers_rs = results.get("workers")
        if workers_rs is not None and applier_workers.hidden_by_privilege(d, workers_rs, channels):
            problems["workers"] = applier_workers.privilege_problem(d.product)
            workers_rs = None
        return InstanceSnapshot(
            server=self.server,
            flavor=session.flavor,
            dialect=d.name,
            taken_at=datetime.fromtimestamp((sent_at + received_at) / 2, UTC),
            round_trip_s=received_at - sent_at,
            server_id=state.server_id,
            server_uuid=state.server_uuid,
            read_only=state.read_only,
            clock=server_state.clock_reading(state.server_now, sent_at, received_at),
            gtid=state.gtid,
            channels=channels,
            source=_optional(results, "source_status", lambda rs: source_status.parse(d, rs)),
            params=_optional(results, "params", session.plan.parse) or MappingProxyType({}),
            params_read="params" in results,
            counters=_optional(results, "counters", lambda rs: counters.parse(d, rs))
            or MappingProxyType({}),
            heartbeat=heartbeat,
            workers=applier_workers.parse(d, workers_rs) if workers_rs else (),
            applier_lag_s=applier_workers.applier_lag(d, workers_rs)
            if workers_rs
            else MappingProxyType({}),
            problems=MappingProxyType(problems),
        )


def _optional(results: dict[str, ResultSet], name: str, parse: Callable[[ResultSet], Any]) -> Any:
    return parse(results[name]) if name in results else None
