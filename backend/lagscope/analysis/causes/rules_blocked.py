"""The applier waiting on a lock, or on what only the server's words name: *blocked by a session*
(its holder where the server exposes one, else the replica sessions that could hold it) and
*the applier waits* (a state the table does not know, quoting the server).

Kept apart from the applier's other causes because naming a holder is its own craft: which
sessions could hold a lock the server does not attribute, and what naming it exactly needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from lagscope.analysis.causes import words
from lagscope.analysis.causes.model import Cause, EvidenceValue, Finding
from lagscope.analysis.causes.seen import Seen
from lagscope.analysis.causes.waits import ThreadState
from lagscope.collectors.cause_readings import SESSION_LOCK
from lagscope.collectors.snapshot import BlockingSession

# Sessions offered as metadata-lock candidates in the sentence (all of them in the evidence).
_CANDIDATES_IN_SENTENCE = 2
# BlockingSession.lock of a replica session offered as a candidate for any lock (the
# lock_sessions reading).
SESSION = SESSION_LOCK


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


@dataclass(frozen=True, slots=True)
class _Wording:
    """What every sentence about one lock wait says: who waits, for what kind of lock, how long,
    in the server's words, and what releases that kind of lock."""

    name: str
    kind: str
    waited: str
    says: str
    release: tuple[str, str] | None


@dataclass(frozen=True, slots=True)
class _Told:
    sentence: str
    action: str
    confidence: float
    needs: str | None = None


def blocked_by_session(
    seen: Seen,
    lock: str,
    wait_s: float | None,
    blockers: tuple[BlockingSession, ...],
    state: ThreadState | None = None,
) -> Finding:
    """The applier waiting for ``lock``: its holder when the server names one, else the sessions
    that could hold it, else what naming the holder needs."""
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
    wording = _Wording(seen.name, kind, waited, says, _RELEASE.get(lock))
    if certain:
        told = _held_by(wording, certain[0], evidence)
    elif candidates:
        told = _likely_held_by(wording, seen, lock, candidates, in_trx, evidence)
    else:
        told = _holder_unknown(wording, seen, lock)
    return Finding(
        Cause.BLOCKED_BY_SESSION,
        told.confidence,
        told.sentence,
        told.action,
        MappingProxyType(evidence),
        told.needs,
    )


def _held_by(w: _Wording, b: BlockingSession, evidence: dict[str, EvidenceValue]) -> _Told:
    """The holder the server named."""
    on = f" on {b.object_name}" if b.object_name else ""
    sentence = (
        f"{w.name}'s applier has been waiting{w.waited} for {w.kind}{on}{w.says} held by "
        f"{_session(b)}."
    )
    action = (
        f"Ask the owner of session {b.thread_id} ({b.user}@{b.host}) to "
        + (w.release[1] if w.release else "commit or roll back")
        + "; the applier resumes as soon as the lock is released."
    )
    evidence.update(_blocker_evidence(b))
    evidence["blocked_thread_id"] = b.blocked_thread_id
    return _Told(sentence, action, 0.95)


def _likely_held_by(
    w: _Wording,
    seen: Seen,
    lock: str,
    candidates: list[BlockingSession],
    in_trx: bool,
    evidence: dict[str, EvidenceValue],
) -> _Told:
    """Sessions that could hold the lock, when the server names no holder."""
    why = (
        "sessions idle in a transaction that began before the wait"
        if in_trx
        else "sessions in their current command since before the wait began"
    )
    sentence = (
        f"{w.name}'s applier has been waiting{w.waited} for {w.kind}{w.says}; likely held by "
        f"{_candidate_list(candidates)} — {why}."
    )
    action = (
        (f"{_taken_by(w.release)}: a" if w.release else "A")
        + "sk the owners of these sessions to "
        + (w.release[1] if w.release else "commit or roll back")
        + "; to name the holder exactly, install the METADATA_LOCK_INFO plugin (MariaDB)."
    )
    evidence.update(_candidate_evidence(candidates))
    needs = "the exact holder: needs the METADATA_LOCK_INFO plugin"
    if lock == "table-level":
        needs = "the exact holder: the server does not show who holds a table-level lock"
    elif seen.product == "mysql":
        needs = "the exact holder: performance_schema.metadata_locks showed none"
    return _Told(sentence, action, 0.85, needs)


def _holder_unknown(w: _Wording, seen: Seen, lock: str) -> _Told:
    """Neither a holder nor a candidate: what the operator can look for, and what it needs."""
    sentence = (
        f"{w.name}'s applier has been waiting{w.waited} for {w.kind}{w.says} another session holds."
    )
    action = (
        f"{_taken_by(w.release)}: find that session (SHOW PROCESSLIST) and ask its owner to "
        f"{w.release[1]}."
        if w.release
        else "Find the session holding it (SHOW PROCESSLIST) and ask its owner to finish."
    )
    return _Told(sentence, action, 0.8, _why_no_holder(seen, lock))


def applier_wait(
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
