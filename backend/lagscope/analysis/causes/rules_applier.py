"""Causes read off the applier itself: a session blocking it, row lookups without a usable key,
one large transaction, a schema change (docs/causes.md), and a wait only the server's words name.

A lock wait of any kind the state table names (a row or metadata lock, the global read or backup
lock, a table-level or user lock…) is *blocked by a session*: its holder where the server
exposes one, else the replica sessions that could hold it. A state the table does not know,
held past a passing step, is *the applier waits*, quoting the server (:mod:`.waits`).

The applier's InnoDB transaction decides between a lock wait and a scan: MariaDB 10.11.19 shows
the same ``Update_rows_log_event::find_row()`` state for both; ``LOCK WAIT`` is a blocker,
``RUNNING`` on a table without a usable key is a scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from lagscope.analysis.causes import states, waits, words
from lagscope.analysis.causes.history import Seen, wait_since
from lagscope.analysis.causes.model import Cause, EvidenceValue, Finding
from lagscope.analysis.causes.waits import ThreadState
from lagscope.collectors.cause_readings import SESSION_LOCK
from lagscope.collectors.snapshot import BlockingSession, OpenTransaction

# One transaction applied for longer than this is "large" (the naming target is ≤ 10 s).
LARGE_TRX_S = 5.0
# Sessions offered as metadata-lock candidates in the sentence (all of them in the evidence).
_CANDIDATES_IN_SENTENCE = 2
_NEEDS_PROCESS = "unknown: needs PROCESS"
# BlockingSession.lock of a replica session offered as a candidate for any lock (the
# lock_sessions reading), and the memory's wait kind for a state the table does not know.
SESSION = SESSION_LOCK
_STATE_KIND = "state:"


@dataclass(frozen=True, slots=True)
class ApplierFindings:
    findings: tuple[Finding, ...]
    wait: dict[str, Any] | None  # the memory's wait entry after this poll


def _lock_wait(trx: OpenTransaction) -> bool:
    return trx.state.strip().upper() == "LOCK WAIT"


def _session(b: BlockingSession) -> str:
    """``session 4711 (report@10.0.3.4, idle in a transaction for 20 min, last statement …)``"""
    who = f"{b.user}@{b.host}" if b.user or b.host else "user unknown"
    parts = [who]
    # A row lock's holder is always in a transaction; another session only when InnoDB says so
    # (a FLUSH TABLES WITH READ LOCK holder sits idle outside one).
    in_trx = b.lock == "row" or b.trx_started_at is not None
    if b.command.lower() == "sleep" and b.time_s is not None:
        idle = "idle in a transaction" if in_trx else "idle"
        parts.append(f"{idle} for {words.seconds(b.time_s)}")
    elif b.time_s is not None:
        parts.append(f"{b.command or 'busy'} for {words.seconds(b.time_s)}")
    if b.statement:
        parts.append(f"statement {words.quote(words.statement(b.statement))}")
    return f"session {b.thread_id} ({', '.join(parts)})"


def _blocker_evidence(b: BlockingSession, prefix: str = "blocker_") -> dict[str, EvidenceValue]:
    return {
        f"{prefix}thread_id": b.thread_id,
        f"{prefix}user": words.bounded(b.user),
        f"{prefix}host": words.bounded(b.host),
        f"{prefix}command": words.bounded(b.command),
        f"{prefix}time_s": b.time_s,
        f"{prefix}state": words.bounded(b.state),
        **words.statement_evidence(f"{prefix}statement", b.statement),
        f"{prefix}object": words.bounded(b.object_name),
    }


_LOCK_WORDS = {"row": "a row lock", "metadata": "a metadata lock"}
# Per kind of lock (the state table's): what usually takes it, and what its owner does to
# release it, for the action.
_RELEASE = {
    "global read": (
        "FLUSH TABLES WITH READ LOCK (a backup tool?)",
        "let the backup finish or UNLOCK TABLES",
    ),
    "backup": (
        "FLUSH TABLES WITH READ LOCK or a BACKUP STAGE (a backup tool?)",
        "let the backup finish, or UNLOCK TABLES / BACKUP STAGE END",
    ),
    "table-level": ("LOCK TABLES", "UNLOCK TABLES"),
    "table flush": (
        "FLUSH TABLES waiting for a long statement",
        "let that statement end",
    ),
    "user": ("GET_LOCK() in a session", "RELEASE_LOCK()"),
}


def _taken_by(release: tuple[str, str]) -> str:
    return f"Taken by {release[0]}"


def _lock_words(lock: str) -> str:
    return _LOCK_WORDS.get(lock, f"the {lock} lock")


def _session_candidates(
    blockers: tuple[BlockingSession, ...], wait_s: float | None
) -> list[BlockingSession]:
    """Replica sessions in their current command since before the applier's wait began (whole
    seconds on the server, hence the second's margin): any of them could hold a lock the server
    names but does not attribute."""
    since = max(0.0, (wait_s or 0.0) - 1.0)
    return [b for b in blockers if b.lock == SESSION and (b.time_s is None or b.time_s >= since)]


def _candidate_list(candidates: list[BlockingSession]) -> str:
    shown = "; or ".join(_session(b) for b in candidates[:_CANDIDATES_IN_SENTENCE])
    more = len(candidates) - _CANDIDATES_IN_SENTENCE
    return shown + (f" (and {more} more)" if more > 0 else "")


def _candidate_evidence(candidates: list[BlockingSession]) -> dict[str, EvidenceValue]:
    return {
        "candidates": len(candidates),
        "candidate_sessions": words.bounded(
            "; ".join(f"{b.thread_id} {b.user}@{b.host}" for b in candidates)
        ),
        **_blocker_evidence(candidates[0], "candidate_"),
    }


def _blocked(
    seen: Seen,
    lock: str,
    wait_s: float | None,
    blockers: tuple[BlockingSession, ...],
    state: ThreadState | None = None,
) -> Finding:
    kind = _lock_words(lock)
    # The first poll of a wait has no duration yet: say nothing rather than "for 0.0 s".
    waited = f" for {words.seconds(wait_s)}" if wait_s is not None and wait_s >= 1 else ""
    says = f" (the server says {words.quote(state.text)})" if state is not None else ""
    certain = [b for b in blockers if b.certain and b.lock == lock]
    candidates = [b for b in blockers if not b.certain and b.lock == lock]
    in_trx = bool(candidates)
    if not candidates and lock != "row":
        candidates = _session_candidates(blockers, wait_s)
    # What the applier waits to run (MariaDB's PROCESSLIST INFO): names the table of a metadata
    # lock even when the holder's own readings cannot (no METADATA_LOCK_INFO plugin).
    waiting = seen.inputs.applier_statement
    evidence: dict[str, EvidenceValue] = {
        "lock": lock,
        "wait_s": _round(wait_s),
        **words.statement_evidence("waiting_statement", waiting),
    }
    if state is not None:
        evidence["applier_state"] = words.bounded(state.text)
    release = _RELEASE.get(lock)
    needs: str | None = None
    if certain:
        b = certain[0]
        on = f" on {b.object_name}" if b.object_name else ""
        sentence = (
            f"{seen.name}'s applier has been waiting{waited} for {kind}{on}{says} held by "
            f"{_session(b)}."
        )
        action = (
            f"Ask the owner of session {b.thread_id} ({b.user}@{b.host}) to "
            + (release[1] if release else "commit or roll back")
            + "; the applier resumes as soon as the lock is released."
        )
        evidence.update(_blocker_evidence(b))
        evidence["blocked_thread_id"] = b.blocked_thread_id
        confidence = 0.95
    elif candidates:
        why = (
            "sessions idle in a transaction that began before the wait"
            if in_trx
            else "sessions in their current command since before the wait began"
        )
        sentence = (
            f"{seen.name}'s applier has been waiting{waited} for {kind}{says}; likely held by "
            f"{_candidate_list(candidates)} — {why}."
        )
        action = (
            (f"{_taken_by(release)}: a" if release else "A")
            + "sk the owners of these sessions to "
            + (release[1] if release else "commit or roll back")
            + "; to name the holder exactly, install the METADATA_LOCK_INFO plugin (MariaDB)."
        )
        evidence.update(_candidate_evidence(candidates))
        needs = "the exact holder: needs the METADATA_LOCK_INFO plugin"
        if lock == "table-level":
            needs = "the exact holder: the server does not show who holds a table-level lock"
        elif seen.product == "mysql":
            needs = "the exact holder: performance_schema.metadata_locks showed none"
        confidence = 0.85
    else:
        sentence = (
            f"{seen.name}'s applier has been waiting{waited} for {kind}{says} another session "
            "holds."
        )
        action = (
            f"{_taken_by(release)}: find that session (SHOW PROCESSLIST) and ask its owner to "
            f"{release[1]}."
            if release
            else "Find the session holding it (SHOW PROCESSLIST) and ask its owner to finish."
        )
        needs = _why_no_holder(seen, lock)
        confidence = 0.8
    return Finding(
        Cause.BLOCKED_BY_SESSION, confidence, sentence, action, MappingProxyType(evidence), needs
    )


def _unknown_wait(
    seen: Seen, state: ThreadState, wait_s: float | None, blockers: tuple[BlockingSession, ...]
) -> Finding:
    """A state the table does not know: the server's words, and who could be behind them."""
    waited = f" for {words.seconds(wait_s)}" if wait_s is not None and wait_s >= 1 else ""
    candidates = _session_candidates(blockers, wait_s)
    evidence: dict[str, EvidenceValue] = {
        "applier_state": words.bounded(state.text),
        "applier_thread_id": state.thread_id,
        "wait_s": _round(wait_s),
        **words.statement_evidence("waiting_statement", seen.inputs.applier_statement),
    }
    if candidates:
        tail = f"; sessions that could hold what it waits for: {_candidate_list(candidates)}."
        evidence.update(_candidate_evidence(candidates))
    else:
        tail = "; no replica session has been in its command since before the wait."
    return Finding(
        Cause.APPLIER_WAIT,
        0.6 if candidates else 0.5,
        f"{seen.name}'s applier waits: {words.quote(state.text)}{waited}{tail}",
        "The server names what the applier waits for: if a session on the replica holds it, "
        "ask its owner to release it; the applier resumes then.",
        MappingProxyType(evidence),
        None if candidates else seen.needs("lock_sessions"),
    )


def _why_no_holder(seen: Seen, lock: str) -> str:
    """What naming the holder needs, when the readings did not name it."""
    problem = seen.needs("blockers")
    if problem:
        return problem
    replica = seen.inputs.replica
    if replica is None or replica.evidence is None:
        return "unknown: the blocking session is read from the next poll on (needs PROCESS)"
    if lock == "metadata":
        return "unknown: no holder found; naming it needs the METADATA_LOCK_INFO plugin (MariaDB)"
    if lock != "row":
        return seen.needs("lock_sessions") or (
            "unknown: no replica session has been in its command since the wait began (the "
            "holder may have just released it)"
        )
    return "unknown: the blocking transaction was not found (it may have just finished)"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


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
    ddl_state = next((s for s in states_now if states.matches(s, states.DDL_STATES)), None)
    statement = seen.inputs.applier_statement
    if ddl_state is None and states.is_ddl_statement(statement) and not mdl_wait:
        ddl_state = next(iter(states_now), "") or "applying"
    found: list[Finding] = []
    threads = waits.thread_states(seen.inputs.status, seen.channel_workers())
    lock = None if mdl_wait else waits.lock_wait(threads)
    unknown_now = waits.unknown_states(threads)
    before = str((seen.wait or {}).get("kind") or "")
    kind = (
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
    wait, waited = wait_since(seen, kind)
    unknown = None
    if lock is None and not mdl_wait and ddl_state is None and not waiting_trx:
        previous = before.removeprefix(_STATE_KIND) if before.startswith(_STATE_KIND) else None
        unknown = waits.unknown_wait(threads, previous)
    if mdl_wait:
        found.append(_blocked(seen, "metadata", waited, blockers))
    if lock is not None and lock.lock is not None:
        found.append(_blocked(seen, lock.lock, waited, blockers, lock))
    if unknown is not None:
        found.append(_unknown_wait(seen, unknown, waited, blockers))
    if waiting_trx or any(b.lock == "row" for b in blockers):
        trx = waiting_trx[0] if waiting_trx else None
        since = seen.server_time(trx.lock_wait_started_at) if trx is not None else None
        wait_s = None if since is None else max(0.0, seen.at - since)
        found.append(_blocked(seen, "row", wait_s, blockers))
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
