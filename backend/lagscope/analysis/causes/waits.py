"""What the applier threads wait on, from their states and the state table (:mod:`.states`).

Pure: one poll's applier threads (the SQL thread from the replica status, MariaDB's threads from
PROCESSLIST with their time in the state) classified by family. Two answers matter to the rules:

- a **lock wait** of a kind the other applier rules do not read from transactions (a global
  read or backup lock, a table-level lock, a user lock, a metadata lock on something other than
  a table…): the state says which lock, the cause readings who may hold it;
- an **unknown wait**: a state the table does not know, shown by two polls in a row (more than
  a passing step). The server's own words are then the evidence, quoted, never dropped.

MySQL's worker rows carry their service state ("ON"), not a thread state: only states read
from a process list (which say how long they have lasted) count as worker states.
"""

from __future__ import annotations

from dataclasses import dataclass

from lagscope.analysis.causes import states
from lagscope.analysis.causes.states import Family, State
from lagscope.collectors.snapshot import ApplierWorker, ChannelStatus

# A state the table does not know is a wait once two polls in a row showed it: a step any
# statement passes through lasts far less, and naming one from a single poll would be a guess.
# The server's TIME cannot say it sooner: an applier thread's TIME counts from the timestamp of
# the event it applies (it is the lag), not from when it entered its state.
# A state as the channel's memory keeps it between polls (stored as JSON).
KEY_MAX = 120


@dataclass(frozen=True, slots=True)
class ThreadState:
    """One applier thread's state in one poll: the server's text, the table's row (None:
    unknown), its thread id and how long it has been in the state when the server says."""

    text: str
    row: State | None
    thread_id: int | None = None
    for_s: float | None = None

    @property
    def family(self) -> Family | None:
        return self.row.family if self.row is not None else None

    @property
    def lock(self) -> str | None:
        return self.row.lock if self.row is not None else None


def thread_states(
    status: ChannelStatus | None, workers: tuple[ApplierWorker, ...]
) -> tuple[ThreadState, ...]:
    """The SQL thread's state and the workers' process-list states, each classified; the same
    text once (MariaDB's serial SQL thread is also its worker 0, with the time in the state)."""
    found: dict[str, ThreadState] = {}
    for w in workers:
        if w.state_time_s is None or not w.state.strip():
            continue  # a MySQL service state, or nothing
        key = w.state.strip()
        before = found.get(key)
        if before is None or (before.for_s or 0.0) < w.state_time_s:
            found[key] = ThreadState(key, states.lookup(key), w.thread_id, w.state_time_s)
    sql = (status.sql_thread_state if status is not None else "").strip()
    if sql and sql not in found:
        found[sql] = ThreadState(sql, states.lookup(sql))
    return tuple(found.values())


def lock_wait(threads: tuple[ThreadState, ...]) -> ThreadState | None:
    """The longest-lasting applier thread waiting on a lock the state names, table metadata
    locks aside (their own rule reads them with the waiting statement)."""
    waiting = [t for t in threads if t.family is Family.LOCK and t.lock != "metadata"]
    return max(waiting, key=lambda t: t.for_s or 0.0, default=None)


def key(state: ThreadState) -> str:
    return state.text[:KEY_MAX]


def unknown_states(threads: tuple[ThreadState, ...]) -> tuple[ThreadState, ...]:
    return tuple(t for t in threads if t.row is None)


def unknown_wait(threads: tuple[ThreadState, ...], seen_before: str | None) -> ThreadState | None:
    """An applier thread in a state the table does not know that the previous poll showed too
    (``seen_before``, as :func:`key` kept it)."""
    return next((t for t in unknown_states(threads) if key(t) == seen_before), None)
