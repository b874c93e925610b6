"""Causes read off the applier itself: a session blocking it, row lookups without a usable key,
one large transaction, a schema change (docs/causes.md), and a wait only the server's words name.

A lock wait of any kind the state table names (a row or metadata lock, the global read or backup
lock, a table-level or user lock…) is *blocked by a session*: its holder where the server
exposes one, else the replica sessions that could hold it. A state the table does not know,
held past a passing step, is *the applier waits*, quoting the server (:mod:`.waits`). Both
findings are worded by :mod:`.rules_blocked`; this module decides which waits there are.

The applier's InnoDB transaction decides between a lock wait and a scan: MariaDB 10.11.19 shows
the same ``Update_rows_log_event::find_row()`` state for both; ``LOCK WAIT`` is a blocker,
``RUNNING`` on a table without a usable key is a scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from lagscope.analysis.causes import states, waits, words
from lagscope.analysis.causes.history import wait_since
from lagscope.analysis.causes.model import Cause, Finding
from lagscope.analysis.causes.rules_blocked import applier_wait, blocked_by_session
from lagscope.analysis.causes.seen import Seen
from lagscope.analysis.causes.waits import ThreadState
from lagscope.collectors.snapshot import OpenTransaction

# One transaction applied for longer than this is "large" (the naming target is ≤ 10 s).
LARGE_TRX_S = 5.0
_NEEDS_PROCESS = "unknown: needs PROCESS"
# The memory's wait kind for a state the table does not know.
_STATE_KIND = "state:"


@dataclass(frozen=True, slots=True)
class ApplierFindings:
    findings: tuple[Finding, ...]
    wait: dict[str, Any] | None  # the memory's wait entry after this poll


def _lock_wait(trx: OpenTransaction) -> bool:
    return trx.state.strip().upper() == "LOCK WAIT"


def _oldest(trxs: tuple[OpenTransaction, ...]) -> OpenTransaction | None:
    return min(trxs, key=lambda t: t.started_at if t.started_at is not None else 0.0, default=None)


def _trx_age(seen: Seen) -> float | None:
    trx = seen.trx
    if trx is None:
        return None
    started = trx.get("started")
    if isinstance(started, int | float):
        return max(0.0, seen.at - float(started))
    return seen.at - float(trx.get("first_at", seen.at))


def _rows_per_s(seen: Seen) -> float | None:
    trx = seen.trx
    if trx is None or trx.get("rows") is None or trx.get("rows0") is None:
        return None
    elapsed = float(trx["at"]) - float(trx["first_at"])
    if elapsed <= 0:
        return None
    return (int(trx["rows"]) - int(trx["rows0"])) / elapsed


def applier_findings(seen: Seen) -> ApplierFindings:
    states_now = seen.applier_states()
    trxs = seen.transactions()
    blockers = seen.blockers()
    waiting_trx = [t for t in trxs if _lock_wait(t)]
    mdl_wait = any(s.lower().startswith(states.METADATA_LOCK_WAIT) for s in states_now) or any(
        b.lock == "metadata" for b in blockers
    )
    ddl_state = _ddl_state(seen, states_now, mdl_wait)
    found: list[Finding] = []
    threads = waits.thread_states(seen.inputs.status, seen.channel_workers())
    lock = None if mdl_wait else waits.lock_wait(threads)
    unknown_now = waits.unknown_states(threads)
    before = str((seen.wait or {}).get("kind") or "")
    wait, waited = wait_since(seen, _wait_kind(mdl_wait, ddl_state, lock, unknown_now))
    unknown = None
    if lock is None and not mdl_wait and ddl_state is None and not waiting_trx:
        previous = before.removeprefix(_STATE_KIND) if before.startswith(_STATE_KIND) else None
        unknown = waits.unknown_wait(threads, previous)
    if mdl_wait:
        found.append(blocked_by_session(seen, "metadata", waited, blockers))
    if lock is not None and lock.lock is not None:
        found.append(blocked_by_session(seen, lock.lock, waited, blockers, lock))
    if unknown is not None:
        found.append(applier_wait(seen, unknown, waited, blockers))
    if waiting_trx or any(b.lock == "row" for b in blockers):
        found.append(blocked_by_session(seen, "row", _row_wait_s(seen, waiting_trx), blockers))
    if ddl_state is not None and not mdl_wait:
        found.append(_ddl(seen, ddl_state, waited))
    no_key = _no_usable_key(seen, trxs, waiting_trx)
    if no_key is not None:
        found.append(no_key)
        if seen.trx is not None and seen.trx_current:
            seen.trx["scan"] = True  # kept with the transaction's memory until it ends
    # A transaction scanning a keyless table lasts long because of the scans: "large" would
    # send the operator to split it at the source, when the fix is a key on the replica. The
    # same transaction stays a scan in a poll that misses the evidence (live lab: a poll without
    # the relay log's table named it large beside the scan).
    scanning = no_key is not None or bool(seen.trx and seen.trx.get("scan"))
    # A transaction held up by a lock (or a wait the server names) is waiting, not large.
    held = lock is not None or unknown is not None
    if not mdl_wait and not waiting_trx and ddl_state is None and not scanning and not held:
        large = _large_transaction(seen, trxs)
        if large is not None:
            found.append(large)
    return ApplierFindings(tuple(found), wait)


def _ddl_state(seen: Seen, states_now: tuple[str, ...], mdl_wait: bool) -> str | None:
    """The state of a schema change the applier runs: a DDL state, else (outside a metadata
    lock wait) any state while the statement it runs is DDL."""
    ddl_state = next((s for s in states_now if states.matches(s, states.DDL_STATES)), None)
    statement = seen.inputs.applier_statement
    if ddl_state is None and states.is_ddl_statement(statement) and not mdl_wait:
        ddl_state = next(iter(states_now), "") or "applying"
    return ddl_state


def _wait_kind(
    mdl_wait: bool,
    ddl_state: str | None,
    lock: ThreadState | None,
    unknown_now: tuple[ThreadState, ...],
) -> str | None:
    """The memory's name for what the applier waits on: the same name poll after poll keeps
    the wait's start."""
    return (
        "metadata"
        if mdl_wait
        else "ddl"
        if ddl_state
        else f"lock:{lock.lock}"
        if lock is not None
        else f"{_STATE_KIND}{waits.key(unknown_now[0])}"
        if unknown_now
        else None
    )


def _row_wait_s(seen: Seen, waiting_trx: list[OpenTransaction]) -> float | None:
    """How long the applier's transaction has waited for a row lock, by the server's clock."""
    trx = waiting_trx[0] if waiting_trx else None
    since = seen.server_time(trx.lock_wait_started_at) if trx is not None else None
    return None if since is None else max(0.0, seen.at - since)


def _ddl(seen: Seen, state: str, waited: float | None) -> Finding:
    times = [w.state_time_s for w in seen.channel_workers() if w.state_time_s is not None]
    for_s = max([waited or 0.0, *times])
    statement = seen.inputs.applier_statement
    what = "a schema change"
    if states.is_ddl_statement(statement):
        what = words.quote(words.statement(statement))
    else:
        table = seen.table()
        if table is not None and table.table:
            what += f" on {table.schema}.{table.table}"
    lasted = f" for {words.seconds(for_s)}" if for_s >= 1 else ""
    return Finding(
        Cause.DDL,
        0.9 if states.is_ddl_statement(statement) else 0.85,
        f"{seen.name} has been applying {what}{lasted} (state {words.quote(state)}); DDL applies "
        "alone and holds the applier until it ends.",
        "Let it finish; next time run such changes online (ALGORITHM=INSTANT/INPLACE, or an "
        "online schema change tool) so replicas do not stall.",
        MappingProxyType(
            {
                "state": words.bounded(state),
                "for_s": round(for_s, 1),
                **words.statement_evidence("statement", statement),
            }
        ),
    )


def _no_usable_key(
    seen: Seen, trxs: tuple[OpenTransaction, ...], waiting_trx: list[OpenTransaction]
) -> Finding | None:
    if waiting_trx:
        return None  # the same state under LOCK WAIT is a blocker, not a scan
    lookup = next((s for s in seen.applier_states() if states.matches(s, states.ROW_LOOKUP)), None)
    held, polls = seen.count(seen.sql, "row")
    # A poll can land between two lookups (on the row's update itself): while the applier is
    # still on the keyless table and a recent poll saw it scanning, it is the same scan, not
    # suddenly "one large transaction".
    if lookup is None and held == 0:
        return None
    table = seen.table()
    if table is None or table.has_usable_key is not False:
        return None
    state = lookup or next(iter(seen.applier_states()), "")
    running = next((t for t in trxs if t.state.strip().upper() == "RUNNING"), None)
    name = f"{table.schema}.{table.table}"
    keyless = "no primary key" if table.has_primary_key is False else "no usable key"
    rows = running.rows_modified if running is not None else None
    progress = f"; {words.count(rows)} rows changed so far" if rows else ""
    confidence = 0.9 if running is not None and held >= 2 else 0.75 if running else 0.6
    needs = None
    if running is None:
        needs = seen.needs("transactions") or _NEEDS_PROCESS
    return Finding(
        Cause.NO_USABLE_KEY,
        confidence,
        f"Each row event on {seen.name} scans {name} ({keyless}) to find its row under row-based "
        f"replication{progress}.",
        f"Add a primary key (or a unique key over NOT NULL columns) to {name}.",
        MappingProxyType(
            {
                "table": words.bounded(name),
                "has_primary_key": table.has_primary_key,
                "has_usable_key": table.has_usable_key,
                "event": words.bounded(table.event),
                "state": words.bounded(state),
                "state_polls": held,
                "polls": polls,
                "trx_state": running.state if running is not None else None,
                "rows_modified": rows,
            }
        ),
        needs,
    )


def _large_transaction(seen: Seen, trxs: tuple[OpenTransaction, ...]) -> Finding | None:
    age = _trx_age(seen)
    if age is None or age < LARGE_TRX_S or seen.trx is None or not seen.trx_current:
        return None
    trx = _oldest(trxs)
    rows = trx.rows_modified if trx is not None else seen.trx.get("rows")
    if trx is not None and not rows:
        # An open transaction that changed nothing is waiting, not large (a metadata-lock wait
        # shows this way).
        return None
    rate = _rows_per_s(seen)
    key = str(seen.trx.get("key", ""))
    gtid = (trx.gtid if trx is not None else "") or (
        key.removeprefix("gtid:") if key.startswith("gtid:") else ""
    )
    ident = f" ({words.bounded(gtid, 60)})" if gtid else ""
    # The relay log's Table_map at the applier's position: the table its row events change.
    table = seen.table()
    name = f"{table.schema}.{table.table}" if table is not None and table.table else None
    on = f" on {name}" if name else ""
    figures = f", {words.count(rows)} rows changed so far" if rows else ""
    if rate is not None and rate > 0:
        figures += f" ({words.count(rate)} rows/s)"
    confidence = 0.85 if rows and (rate or 0) > 0 else 0.7
    return Finding(
        Cause.LARGE_TRANSACTION,
        confidence,
        f"{seen.name} has been applying one transaction{ident}{on} for {words.seconds(age)}"
        f"{figures}.",
        "Nothing to tune on the replica: it catches up when this transaction commits; split "
        "such transactions at the source.",
        MappingProxyType(
            {
                "trx_age_s": round(age, 1),
                "trx_id": words.bounded(trx.trx_id) if trx is not None else None,
                "gtid": words.bounded(gtid) or None,
                "rows_modified": rows,
                "rows_per_s": None if rate is None else round(rate, 1),
                "trx_state": trx.state if trx is not None else None,
                "table": words.bounded(name) if name else None,
            }
        ),
        None if trxs else seen.needs("transactions"),
    )
