"""The readings a poll takes, in batch order: one row each, the poller loops over :data:`READINGS`.

A :class:`Reading` names its statement (from the connection's :class:`Setup`: the dialect, and
for parameters and the heartbeat what was learned or configured for this instance, which is why
a statement takes the setup rather than the dialect alone), how its answer becomes snapshot
fields, whether a failure fails the whole poll (``required``), whether it is read only every
``slow_every_s`` (``slow``), and what to tell an operator when the server refuses it.

Order matters twice: the server clock is read first (the clock offset is measured against the
batch's send time), and a parser may look at what an earlier reading left in the
:class:`Readout` (the heartbeat needs the server's clock, the worker check needs the channels).

Adding a reading: a collector module (statement + parse), a row here, and the snapshot field
it fills.

Cause readings (``cause_readings/``, docs/causes.md, "The cause readings") carry ``when``:
they are sent only while it holds for the instance's previous poll, so a healthy poll's batch is
what it was without them. Some need that previous poll for their statements too (the relay log
position of each channel behind, the tables its row events named): ``statements``, one statement
per channel or table, whose answers (same columns) reach the parser as one result. A reading that
reads several tables sends one statement per table the same way and joins their answers
(``ResultSet.each()``): no statement joins information_schema tables in the server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from lagscope.collectors import (
    applier_workers,
    cause_readings,
    counters,
    file_io,
    replica_status,
    server_state,
    source_status,
)
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.params import ParamPlan
from lagscope.collectors.snapshot import InstanceSnapshot


@dataclass(frozen=True, slots=True)
class Setup:
    """What the statements and parsers may depend on, fixed for a connection."""

    dialect: Dialect
    params: ParamPlan
    heartbeat: HeartbeatTable | None = None
    # Learned by the cause readings on this connection (plugin probe, table keys): mutable.
    cause: cause_readings.CauseMemory = field(
        default_factory=cause_readings.CauseMemory, compare=False
    )


@dataclass(slots=True)
class Readout:
    """One poll's answers as they are parsed, in reading order.

    ``values``: what a reading leaves for later ones (by name); ``problems``: readings that
    answered but could not be used (a privilege hides the rows)."""

    sent_at: float
    received_at: float
    values: dict[str, Any] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    previous: InstanceSnapshot | None = None  # the instance's previous poll, if any


Fields = Mapping[str, Any]  # InstanceSnapshot fields a reading fills


def _never(dialect: Dialect) -> bool:
    return False


Trigger = Callable[[InstanceSnapshot], bool]


@dataclass(frozen=True, slots=True)
class Reading:
    """One statement of the poll's batch and what its answer fills in the snapshot.

    ``statement`` returns None when there is nothing to read on this instance (no heartbeat
    table configured, no tracked parameter). ``slow(dialect)``: read at most every
    ``slow_every_s``. ``privilege_hint`` is appended to an access-denied error; ``refused``,
    when set, is the whole problem text instead (the words the workers view shows).
    """

    name: str
    statement: Callable[[Setup], str | None]
    parse: Callable[[Setup, ResultSet, Readout], Fields]
    required: bool = False
    slow: Callable[[Dialect], bool] = _never
    privilege_hint: str | None = None
    refused: Callable[[Dialect], str] | None = None
    # Sent only while this holds for the previous poll (None: every poll).
    when: Trigger | None = None
    # Instead of ``statement``: several, from the previous poll (only with ``when``).
    statements: Callable[[Setup, InstanceSnapshot], tuple[str, ...]] | None = None
    # A slow reading that is also sent every poll while this holds for the previous poll.
    hurry: Trigger | None = None

    def wanted(
        self,
        setup: Setup,
        previous: InstanceSnapshot | None,
        slow: bool,
        held: Held | None = None,
    ) -> tuple[str, ...]:
        """The statements this reading sends in this poll (none: skipped)."""
        held = held or Held(previous)
        if self.when is not None and not held(self.when):
            return ()
        if not slow and self.slow(setup.dialect) and not held(self.hurry):
            return ()
        if self.statements is not None:
            assert previous is not None  # only with ``when``, which needs a previous poll
            return self.statements(setup, previous)
        sql = self.statement(setup)
        return (sql,) if sql else ()


class Held:
    """Whether a trigger holds for the previous poll, each trigger asked once per poll (a
    healthy poll then costs one look at its channels and workers, not one per reading)."""

    def __init__(self, previous: InstanceSnapshot | None, behind_elsewhere: bool = False) -> None:
        self.previous = previous
        self.behind_elsewhere = behind_elsewhere
        self.answers: dict[Trigger, bool] = {}

    def __call__(self, trigger: Trigger | None) -> bool:
        if trigger is None or self.previous is None:
            return False
        if self.behind_elsewhere:
            return True
        if trigger not in self.answers:
            self.answers[trigger] = trigger(self.previous)
        return self.answers[trigger]


def plan(
    readings: Iterable[Reading],
    setup: Setup,
    previous: InstanceSnapshot | None,
    slow: bool,
    disabled: Mapping[str, str],
    behind_elsewhere: bool = False,
) -> list[tuple[str, str]]:
    """This poll's batch: (reading name, statement) in registry order. ``behind_elsewhere``:
    the store says the instance was behind at its last tick, which another worker process may
    have polled (this process's previous poll is then older): the triggers hold."""
    held = Held(previous, behind_elsewhere)
    return [
        (reading.name, sql)
        for reading in readings
        if reading.name not in disabled
        for sql in reading.wanted(setup, previous, slow, held)
    ]


def _server_state(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    state = server_state.parse(setup.dialect, result)
    readout.values["server_now"] = state.server_now
    clock = server_state.clock_reading(state.server_now, readout.sent_at, readout.received_at)
    return {
        "server_id": state.server_id,
        "server_uuid": state.server_uuid,
        "read_only": state.read_only,
        "clock": clock,
        "gtid": state.gtid,
    }


def _replica_status(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    channels = replica_status.parse(setup.dialect, result)
    readout.values["channels"] = channels
    return {"channels": channels}


def _source_status(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    return {"source": source_status.parse(setup.dialect, result)}


def _params(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    values = setup.params.parse(result)
    if values is None:
        readout.problems["params"] = "the parameters' answer could not be split into values"
        return {"params": MappingProxyType({}), "params_read": False}
    return {"params": values, "params_read": True}


def _counters(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    found = counters.parse(setup.dialect, result) or MappingProxyType({})
    readout.values["counters"] = found
    return {"counters": found}


def _file_io(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    # Joins the counters read just before: one mapping, one rate computation.
    fsyncs = file_io.parse(result)
    if not fsyncs:
        return {}
    merged = {**readout.values.get("counters", {}), **fsyncs}
    return {"counters": MappingProxyType(merged)}


def _workers(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    d = setup.dialect
    if applier_workers.hidden_by_privilege(d, result, readout.values.get("channels", ())):
        readout.problems["workers"] = applier_workers.privilege_problem(d.product)
        return {}
    return {
        "workers": applier_workers.parse(d, result),
        "applier_lag_s": applier_workers.applier_lag(d, result),
    }


def _heartbeat(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    assert setup.heartbeat is not None  # no statement without a table
    return {"heartbeat": setup.heartbeat.parse(result, readout.values["server_now"])}


def _heartbeat_statement(setup: Setup) -> str | None:
    return setup.heartbeat.statement() if setup.heartbeat else None


def _workers_slow(dialect: Dialect) -> bool:
    # MySQL 8.0+ workers carry the applier lag and are read every poll; elsewhere they only
    # describe the threads, like parameters.
    return not dialect.has_worker_timestamps


def _none(setup: Setup) -> str | None:
    return None


def _parts(readout: Readout) -> cause_readings.EvidenceParts:
    parts = readout.values.get("evidence")
    if not isinstance(parts, cause_readings.EvidenceParts):
        parts = readout.values["evidence"] = cause_readings.EvidenceParts()
    return parts


def _evidence(readout: Readout) -> Fields:
    # Each cause reading returns the evidence so far: the last one parsed leaves all of it.
    return {"evidence": _parts(readout).freeze()}


def _sessions(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    # Read once for the cause readings after it, which join it with their own tables.
    readout.values["sessions"] = cause_readings.parse_sessions(result)
    return {}


def _sessions_for(setup: Setup, readout: Readout, key: str) -> cause_readings.Sessions | None:
    """This poll's sessions; without them (that reading failed) a reading that joins them
    says so under ``key`` (the evidence problem the rules look up), rather than report that
    it found nothing."""
    sessions = readout.values.get("sessions")
    if isinstance(sessions, cause_readings.Sessions):
        return sessions
    if cause_readings.sessions_statement(setup.dialect) is not None:
        _parts(readout).problems[key] = (
            "the sessions reading (information_schema.PROCESSLIST) gave no answer this poll"
        )
    return None


def _transactions(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    sessions = _sessions_for(setup, readout, "transactions")
    found = cause_readings.parse_transactions(setup.dialect, result.each(), sessions)
    _parts(readout).transactions.extend(found)
    return _evidence(readout)


def _row_blockers(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    sessions = _sessions_for(setup, readout, "blockers")  # the rules ask "who blocks it"
    found = cause_readings.parse_row_blockers(setup.dialect, result.each(), sessions)
    _parts(readout).blockers.extend(found)
    return _evidence(readout)


def _mdl_probe(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    cause_readings.parse_mdl_probe(result, setup.cause)
    return {}


def _mdl_blockers(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    parts = _parts(readout)
    sessions = _sessions_for(setup, readout, "metadata_blockers")
    now = readout.values.get("server_now")
    found = cause_readings.parse_mdl_blockers(result.each(), sessions, now)
    parts.blockers.extend(found)
    channels = readout.values.get("channels", ())
    if problem := cause_readings.mdl_problem(setup.dialect, channels, bool(found), setup.cause):
        parts.problems.setdefault("metadata_blockers", problem)
    return _evidence(readout)


def _backup_holders(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    sessions = _sessions_for(setup, readout, "backup_holders")
    _parts(readout).blockers.extend(cause_readings.parse_backup_holders(result.each(), sessions))
    return _evidence(readout)


def _lock_sessions(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    sessions = _sessions_for(setup, readout, "lock_sessions")
    _parts(readout).blockers.extend(cause_readings.parse_lock_sessions(result.each(), sessions))
    return _evidence(readout)


def _receive(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    _parts(readout).receive.extend(cause_readings.parse_receive(result))
    return _evidence(readout)


def _table_keys_statements(setup: Setup, previous: InstanceSnapshot) -> tuple[str, ...]:
    if setup.dialect.product == "mariadb":
        # MariaDB 10.11.19 crashed (signal 11, in the temporary table's clean-up) on this
        # TABLES ⋈ STATISTICS query while applying a large transaction, both replicas of the
        # lab at once: the monitor must never harm what it watches. InnoDB's dictionary
        # (table_dictionary) answers the same question there.
        return ()
    asked = cause_readings.unchecked_tables(previous, setup.cause)
    return tuple(sql for s, t in asked for sql in cause_readings.table_keys_statements(s, t) or ())


def _table_keys(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    assert readout.previous is not None  # sent only with a previous poll
    asked = cause_readings.unchecked_tables(readout.previous, setup.cause)
    cause_readings.parse_table_keys(result, asked, setup.cause)
    return {}


def _table_dictionary_statements(setup: Setup, previous: InstanceSnapshot) -> tuple[str, ...]:
    asked = cause_readings.unchecked_tables(previous, setup.cause)
    return tuple(
        sql
        for s, t in asked
        for sql in cause_readings.table_dictionary_statements(setup.dialect, s, t) or ()
    )


def _table_dictionary(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    # On MariaDB the dictionary is the only key check: a table it does not show (not InnoDB)
    # is remembered as unknown, so it is not asked again on every poll.
    asked = (
        cause_readings.unchecked_tables(readout.previous, setup.cause)
        if setup.dialect.product == "mariadb" and readout.previous is not None
        else []
    )
    cause_readings.parse_table_dictionary(result, setup.cause, asked)
    return {}


def _relay_events_statements(setup: Setup, previous: InstanceSnapshot) -> tuple[str, ...]:
    return tuple(
        sql
        for channel in cause_readings.relay_positions(previous)
        if (sql := cause_readings.relay_events_statement(setup.dialect, channel)) is not None
    )


def _relay_events(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    assert readout.previous is not None  # sent only with a previous poll
    channels = cause_readings.relay_positions(readout.previous)
    tables = cause_readings.parse_relay_events(result, channels, setup.cause)
    parts = _parts(readout)
    parts.tables.extend(tables)
    if hidden := cause_readings.hidden_tables(tables, setup.cause):
        parts.problems["table_keys"] = (
            "not visible to the monitoring user: "
            + ", ".join(hidden)[:400]
            + " (needs a privilege on the table, e.g. SELECT)"
        )
    return _evidence(readout)


def standing_problems(setup: Setup) -> dict[str, str]:
    """Problems of the connection rather than of one poll: tracked parameters the server lacks."""
    if setup.params.missing:
        return {"params": "not on this server: " + ", ".join(setup.params.missing)}
    return {}


# In batch order. The hints say what to grant when the user is refused (docs/replication.md).
READINGS: tuple[Reading, ...] = (
    Reading("server_state", lambda s: server_state.statement(s.dialect), _server_state,
            required=True),
    Reading("replica_status", lambda s: replica_status.statement(s.dialect), _replica_status,
            required=True,
            privilege_hint="needs REPLICA MONITOR (MariaDB 10.5.9+) or REPLICATION CLIENT "
            "(MySQL)"),
    Reading("source_status", lambda s: source_status.statement(s.dialect), _source_status,
            privilege_hint="needs BINLOG MONITOR (MariaDB) or REPLICATION CLIENT (MySQL)"),
    Reading("params", lambda s: s.params.statement(), _params),
    Reading("counters", lambda s: counters.statement(s.dialect), _counters,
            privilege_hint="needs SELECT on performance_schema (MySQL)"),
    # The fsync cost is wanted where a backlog shows what the replica can apply.
    Reading("file_io", lambda s: file_io.statement(), _file_io, when=cause_readings.behind,
            privilege_hint="needs SELECT on performance_schema"),
    Reading("workers", lambda s: applier_workers.statement(s.dialect), _workers,
            slow=_workers_slow, hurry=cause_readings.behind,
            privilege_hint="needs SELECT on performance_schema (MySQL) or PROCESS (MariaDB)",
            refused=lambda d: applier_workers.privilege_problem(d.product)),
    Reading("heartbeat", _heartbeat_statement, _heartbeat,
            privilege_hint="needs SELECT on the heartbeat table"),
    # Cause readings: only while the previous poll showed a channel behind or an applier busy.
    # None joins information_schema tables in the server (cause_readings/): the sessions are
    # read once for all of them, each reading reads its own tables one statement each.
    Reading("sessions", lambda s: cause_readings.sessions_statement(s.dialect), _sessions,
            when=cause_readings.behind),
    Reading("transactions", _none, _transactions, when=cause_readings.behind,
            statements=lambda s, _: cause_readings.transactions_statements(s.dialect),
            privilege_hint="needs PROCESS (and SELECT on performance_schema on MySQL)"),
    Reading("row_blockers", _none, _row_blockers, when=cause_readings.behind,
            statements=lambda s, _: cause_readings.row_blockers_statements(s.dialect),
            privilege_hint="needs PROCESS (and SELECT on performance_schema on MySQL)"),
    Reading("mdl_probe", lambda s: cause_readings.mdl_probe_statement(s.dialect, s.cause),
            _mdl_probe, when=cause_readings.behind),
    Reading("metadata_blockers", _none, _mdl_blockers, when=cause_readings.behind,
            statements=lambda s, _: cause_readings.mdl_blockers_statements(s.dialect, s.cause),
            privilege_hint="needs PROCESS (and SELECT on performance_schema on MySQL)"),
    Reading("backup_holders", _none, _backup_holders, when=cause_readings.behind,
            statements=lambda s, _: cause_readings.backup_holders_statements(s.dialect, s.cause),
            privilege_hint="needs PROCESS"),
    Reading("lock_sessions", _none, _lock_sessions, when=cause_readings.behind,
            statements=lambda s, _: cause_readings.lock_sessions_statements(s.dialect),
            privilege_hint="needs PROCESS (and SELECT on performance_schema on MySQL)"),
    Reading("receive", lambda s: cause_readings.receive_statement(s.dialect), _receive,
            when=cause_readings.behind,
            privilege_hint="needs SELECT on performance_schema"),
    # Keys first: the relay log's parse reads the keys this poll cached.
    Reading("table_keys", _none, _table_keys, when=cause_readings.behind,
            statements=_table_keys_statements),
    # The same tables from InnoDB's dictionary, for those the user's grants hide (PROCESS).
    Reading("table_dictionary", _none, _table_dictionary, when=cause_readings.behind,
            statements=_table_dictionary_statements,
            privilege_hint="needs PROCESS"),
    Reading("relay_events", _none, _relay_events, when=cause_readings.behind,
            statements=_relay_events_statements,
            privilege_hint="needs REPLICA MONITOR (MariaDB) or REPLICATION SLAVE (MySQL)"),
)  # fmt: skip
BY_NAME: Mapping[str, Reading] = MappingProxyType({r.name: r for r in READINGS})
