"""A bounded window of the source's binlog: which transactions group-committed together.

MariaDB writes each transaction's GTID event with the commit id of its group commit when the
group held more than one (``BEGIN GTID 0-1-180016 cid=181385`` in ``SHOW BINLOG EVENTS``'s
Info); those are the transactions a replica in ``conservative`` mode may apply at once. Reading
them needs ``BINLOG MONITOR`` (MariaDB ≥ 10.5.2), which the monitoring user has already.

The window: ``SHOW BINLOG EVENTS IN file FROM pos LIMIT n`` from a position the source reported
earlier (``SHOW MASTER STATUS``: an event boundary), so a sample is the first ``n`` events
written after that moment and never a scan of the log. Only the GTID events' Info is parsed
(and only for its ``cid``); every other Info (statements, with whatever they hold: a
``CREATE USER … IDENTIFIED BY`` has a password in it) is dropped unread.

MySQL writes ``last_committed``/``sequence_number`` into the binary GTID event, which ``SHOW
BINLOG EVENTS`` does not show: reading them needs the replication protocol (a binlog client,
``REPLICATION SLAVE``); not built yet, so a MySQL source has no sample.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lagscope.collectors.executor import BatchFailed, Executor, ResultSet
from lagscope.collectors.values import as_int, as_text

# A binlog file name as servers make them (basename + .NNNNNN); anything else is not quoted
# into a statement.
_FILE = re.compile(r"^[A-Za-z0-9._-]{1,255}$")
_CID = re.compile(r"\bcid=(\d+)\b")
MARK_STATEMENT = "SHOW MASTER STATUS"
EVENTS_PER_SAMPLE = 5000


@dataclass(frozen=True, slots=True)
class BinlogMark:
    file: str
    pos: int


@dataclass(frozen=True, slots=True)
class CommitGroups:
    """Whole transactions of the window in binlog order, grouped by group commit; each
    transaction's cost is its size in the binlog (bytes)."""

    groups: tuple[tuple[int, ...], ...]
    events: int  # events read

    @property
    def transactions(self) -> int:
        return sum(len(g) for g in self.groups)


def parse_mark(result: ResultSet) -> BinlogMark | None:
    records = result.records()
    if not records:
        return None
    file, pos = as_text(records[0].get("file")), as_int(records[0].get("position"))
    if not file or pos is None or not _FILE.match(file):
        return None
    return BinlogMark(file, pos)


def events_statement(mark: BinlogMark, limit: int = EVENTS_PER_SAMPLE) -> str:
    """The window's statement: the file name is one the server reported, checked against the
    shape of a binlog name before it is quoted; the numbers are ints."""
    if not _FILE.match(mark.file):
        raise ValueError(f"not a binlog file name: {mark.file!r}")
    return f"SHOW BINLOG EVENTS IN '{mark.file}' FROM {int(mark.pos)} LIMIT {int(limit)}"


def parse_events(result: ResultSet) -> CommitGroups:
    """Group the window's transactions. A transaction runs from its GTID event to the next
    one; the last is dropped unless its commit (Xid, or a COMMIT query) was read, and so is a
    group cut by the window's end."""
    rows = result.records()
    trxs: list[tuple[int | None, int, int]] = []  # (cid, start, end)
    current: tuple[int | None, int] | None = None
    end: int | None = None
    for row in rows:
        kind = as_text(row.get("event_type"))
        pos, end_pos = as_int(row.get("pos")), as_int(row.get("end_log_pos"))
        if pos is None or end_pos is None:
            continue
        if kind == "Gtid":
            if current is not None and end is not None:
                trxs.append((current[0], current[1], end))
            found = _CID.search(as_text(row.get("info")) or "")
            current, end = (int(found.group(1)) if found else None, pos), None
        elif current is not None and _commits(kind, row):
            end = end_pos
    if current is not None and end is not None:
        trxs.append((current[0], current[1], end))
    groups: list[list[int]] = []
    previous: int | None = None
    for cid, start, stop in trxs:
        if cid is not None and cid == previous and groups:
            groups[-1].append(stop - start)
        else:
            groups.append([stop - start])
        previous = cid
    if trxs and trxs[-1][0] is not None:
        groups.pop()  # its last members may be past the window
    return CommitGroups(tuple(tuple(g) for g in groups), len(rows))


def _commits(kind: str | None, row: dict[str, object]) -> bool:
    """The event that ends a transaction: Xid (InnoDB), or the Query ``COMMIT`` of a
    non-transactional one; a DDL ends at its own Query (no BEGIN)."""
    if kind == "Xid":
        return True
    if kind == "Query":
        info = (as_text(row.get("info")) or "").lstrip().upper()
        return not info.startswith("BEGIN")
    return False


def read_mark(executor: Executor) -> BinlogMark | None:
    return parse_mark(run_one(executor, MARK_STATEMENT))


def read_window(executor: Executor, mark: BinlogMark) -> CommitGroups:
    """The window, or the :class:`~lagscope.errors.CollectorError` that ended it (a purged
    file's refusal; an answer over the executor's bounds, as UnexpectedAnswer)."""
    return parse_events(run_one(executor, events_statement(mark)))


def run_one(executor: Executor, statement: str) -> ResultSet:
    try:
        (result,) = executor.run([statement])
    except BatchFailed as failed:
        # One statement: its error is the whole story, raised as the collectors' own.
        raise failed.error from failed
    return result
