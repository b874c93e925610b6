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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from lagscope.collectors import (
    applier_workers,
    counters,
    replica_status,
    server_state,
    source_status,
)
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.params import ParamPlan


@dataclass(frozen=True, slots=True)
class Setup:
    """What the statements and parsers may depend on, fixed for a connection."""

    dialect: Dialect
    params: ParamPlan
    heartbeat: HeartbeatTable | None = None


@dataclass(slots=True)
class Readout:
    """One poll's answers as they are parsed, in reading order.

    ``values``: what a reading leaves for later ones (by name); ``problems``: readings that
    answered but could not be used (a privilege hides the rows)."""

    sent_at: float
    received_at: float
    values: dict[str, Any] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)


Fields = Mapping[str, Any]  # InstanceSnapshot fields a reading fills


def _never(dialect: Dialect) -> bool:
    return False


def _always(dialect: Dialect) -> bool:
    return True


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
    return {"params": setup.params.parse(result) or MappingProxyType({}), "params_read": True}


def _counters(setup: Setup, result: ResultSet, readout: Readout) -> Fields:
    return {"counters": counters.parse(setup.dialect, result) or MappingProxyType({})}


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
    # describe the threads, like parameters (DESIGN.md §11).
    return not dialect.has_worker_timestamps


def standing_problems(setup: Setup) -> dict[str, str]:
    """Problems of the connection rather than of one poll: tracked parameters the server lacks."""
    if setup.params.missing:
        return {"params": "not on this server: " + ", ".join(setup.params.missing)}
    return {}


# In batch order. The hints say what to grant when the user is refused (REPLICATION.md §6.2).
READINGS: tuple[Reading, ...] = (
    Reading("server_state", lambda s: server_state.statement(s.dialect), _server_state,
            required=True),
    Reading("replica_status", lambda s: replica_status.statement(s.dialect), _replica_status,
            required=True,
            privilege_hint="needs REPLICA MONITOR (MariaDB 10.5.9+) or REPLICATION CLIENT "
            "(MySQL)"),
    Reading("source_status", lambda s: source_status.statement(s.dialect), _source_status,
            privilege_hint="needs BINLOG MONITOR (MariaDB) or REPLICATION CLIENT (MySQL)"),
    Reading("params", lambda s: s.params.statement(), _params, slow=_always),
    Reading("counters", lambda s: counters.statement(s.dialect), _counters,
            privilege_hint="needs SELECT on performance_schema (MySQL)"),
    Reading("workers", lambda s: applier_workers.statement(s.dialect), _workers,
            slow=_workers_slow,
            privilege_hint="needs SELECT on performance_schema (MySQL) or PROCESS (MariaDB)",
            refused=lambda d: applier_workers.privilege_problem(d.product)),
    Reading("heartbeat", _heartbeat_statement, _heartbeat,
            privilege_hint="needs SELECT on the heartbeat table"),
)  # fmt: skip
BY_NAME: Mapping[str, Reading] = MappingProxyType({r.name: r for r in READINGS})
