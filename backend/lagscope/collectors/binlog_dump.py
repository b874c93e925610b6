"""A bounded window of a source's binlog over the replication protocol: commit parents.

MySQL writes each transaction's ``last_committed`` and ``sequence_number`` (its commit parent
and its own logical timestamp) into the binary GTID event, which ``SHOW BINLOG EVENTS`` does not
print. Reading them takes what a replica does: ``COM_BINLOG_DUMP`` from a position, here with
``BINLOG_DUMP_NON_BLOCK`` so the server ends the stream at the end of its log instead of
waiting, and at most ``EVENTS_PER_SAMPLE`` events read. The user needs ``REPLICATION SLAVE``
(``REPLICATION REPLICA``): optional, the only privilege Lagscope asks for beyond reading, and
only for this. Without it the server refuses the dump and the source simply has no sample.

Only event headers and GTID event bodies are decoded: a statement or row event is skipped by
its length, never parsed, so nothing it holds (a ``CREATE USER … IDENTIFIED BY`` password, row
images) is kept. Nothing is registered on the source (no ``COM_REGISTER_SLAVE``): the dump
thread lives for one read. ``server_id`` must differ from every real replica's, as a source
ends an older dump connection that uses the same id.

Event layouts (v4 header: timestamp 4, type 1, server_id 4, event_size 4, log_pos 4, flags 2):
- MySQL ``GTID_LOG_EVENT`` (33) and ``ANONYMOUS_GTID_LOG_EVENT`` (34): flags 1, sid 16, gno 8,
  lt_type 1, last_committed 8, sequence_number 8 (libbinlogevents ``Gtid_event``); numbers are
  per binlog file, so the window ends at a rotation. MySQL 8.4's tagged GTIDs
  (``GTID_TAGGED_LOG_EVENT``, 42) are a different serialization: counted, not decoded.
- MariaDB ``GTID_EVENT`` (162): seq_no 8, domain_id 4, flags2 1, then commit_id 8 when flags2
  has ``FL_GROUP_COMMIT_ID`` (2) (sql/log_event.h). MariaDB's own sampling reads the same ids
  from ``SHOW BINLOG EVENTS`` (collectors/binlog_sample.py); this reader decodes them too, which
  is how the protocol path is checked against a real server here.

A transaction's cost is its size in the binlog, as collectors/binlog_sample.py measures it: from
its GTID event's start to the end of its last Xid or Query event (its commit; a DDL's own query).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import pymysql

from lagscope.collectors.binlog_sample import EVENTS_PER_SAMPLE, BinlogMark
from lagscope.collectors.connection import ConnectionSpec, open_connection
from lagscope.collectors.executor import translate_error
from lagscope.errors import AccessDenied, CollectorError, LoginRefused

COM_BINLOG_DUMP = 0x12
BINLOG_DUMP_NON_BLOCK = 0x01
QUERY_EVENT = 2
ROTATE_EVENT = 4
XID_EVENT = 16
FORMAT_DESCRIPTION_EVENT = 15
MYSQL_GTID_EVENTS = frozenset({33, 34})
MYSQL_TAGGED_GTID_EVENT = 42
MARIADB_GTID_EVENT = 162
FL_GROUP_COMMIT_ID = 0x02
HEADER = struct.Struct("<IBIIIH")
# Who we say we are to the source (a 32-bit id no replica of a real topology is likely to use).
DUMP_SERVER_ID = 0x4C53_5032
# MariaDB sends its GTID events as such only to a client that says it understands them.
MARIADB_CAPABILITY_GTID = 4


@dataclass(frozen=True, slots=True)
class Gtid:
    """One transaction's GTID event: MySQL's parents, or MariaDB's group-commit id."""

    start_pos: int
    last_committed: int | None = None
    sequence_number: int | None = None
    commit_id: int | None = None


@dataclass(frozen=True, slots=True)
class Span:
    """A transaction as read: its GTID event and where its commit ended (None: not seen)."""

    gtid: Gtid
    end_pos: int | None


@dataclass(slots=True)
class DumpedWindow:
    """Whole transactions of the window in binlog order (the last one, cut by the window's
    edge, is dropped). ``parents``: MySQL's ``(last_committed, sequence_number, size)``;
    ``groups``: MariaDB's group commits as sizes."""

    parents: list[tuple[int, int, int]] = field(default_factory=list)
    groups: list[list[int]] = field(default_factory=list)
    events: int = 0
    tagged: int = 0  # MySQL 8.4 tagged GTID events, not decoded
    checksum: bool = False


def decode_event(event: bytes, checksum: bool) -> tuple[int, int, Gtid | None]:
    """``(type, log_pos, gtid)`` of one event (``gtid`` only for a GTID event)."""
    if len(event) < HEADER.size:
        raise CollectorError("binlog", f"an event of {len(event)} bytes has no header")
    _, kind, _, size, log_pos, _ = HEADER.unpack_from(event)
    body = event[HEADER.size : len(event) - (4 if checksum else 0)]
    start = log_pos - size
    if kind in MYSQL_GTID_EVENTS and len(body) >= 42:
        last_committed, sequence_number = struct.unpack_from("<qq", body, 26)
        return kind, log_pos, Gtid(start, last_committed, sequence_number)
    if kind == MARIADB_GTID_EVENT and len(body) >= 13:
        flags2 = body[12]
        commit_id = None
        if flags2 & FL_GROUP_COMMIT_ID and len(body) >= 21:
            (commit_id,) = struct.unpack_from("<Q", body, 13)
        return kind, log_pos, Gtid(start, commit_id=commit_id)
    return kind, log_pos, None


def begins(event: bytes) -> bool:
    """A Query event that opens a transaction (``BEGIN``): not its commit. Only the first bytes
    of the statement are looked at (thread id 4, exec time 4, db length 1, error 2, status vars
    length 2, the status vars, the db name and its NUL, then the statement)."""
    body = event[HEADER.size :]
    if len(body) < 13:
        return False
    db_len = body[8]
    (status_len,) = struct.unpack_from("<H", body, 11)
    at = 13 + status_len + db_len + 1
    return body[at : at + 5].upper() == b"BEGIN"


def window_from_spans(spans: list[Span], tagged: int = 0, events: int = 0) -> DumpedWindow:
    """Whole transactions only: one whose commit was not read is dropped, and so is a MariaDB
    group cut by the window's end (its last members may be past it)."""
    window = DumpedWindow(events=events, tagged=tagged)
    done = [s for s in spans if s.end_pos is not None]
    previous_cid: int | None = None
    for span in done:
        gtid, size = span.gtid, max(1, (span.end_pos or 0) - span.gtid.start_pos)
        if gtid.sequence_number is not None and gtid.last_committed is not None:
            window.parents.append((gtid.last_committed, gtid.sequence_number, size))
        elif gtid.commit_id is not None and gtid.commit_id == previous_cid and window.groups:
            window.groups[-1].append(size)
        else:
            window.groups.append([size])
        previous_cid = gtid.commit_id
    if done and done[-1].gtid.commit_id is not None:
        window.groups.pop()
    return window


def read_dump_window(
    spec: ConnectionSpec,
    mark: BinlogMark,
    mariadb: bool,
    limit: int = EVENTS_PER_SAMPLE,
    server_id: int = DUMP_SERVER_ID,
) -> DumpedWindow:
    """The window after ``mark``: at most ``limit`` events, ending early at the end of the log
    or at a rotation. AccessDenied when the user lacks REPLICATION SLAVE."""
    conn = _connect(spec)
    try:
        checksum = _announce(conn, mariadb)
        payload = struct.pack("<IHI", mark.pos, BINLOG_DUMP_NON_BLOCK, server_id)
        payload += mark.file.encode()
        try:
            # PyMySQL has no public call for a raw command or packet: its replication clients
            # (python-mysql-replication) use these two the same way.
            conn._execute_command(COM_BINLOG_DUMP, payload)  # type: ignore[attr-defined]
            spans: list[Span] = []
            tagged = events = 0
            while events < limit:
                packet = conn._read_packet()  # type: ignore[no-untyped-call]
                data = packet.get_all_data()
                if packet.is_eof_packet():
                    break
                kind, log_pos, gtid = decode_event(data[1:], checksum)
                if kind == ROTATE_EVENT and log_pos != 0:
                    break  # a real rotation: MySQL's numbers start again in the next file
                if kind in (ROTATE_EVENT, FORMAT_DESCRIPTION_EVENT):
                    continue  # the stream's preamble, not the window
                events += 1
                if kind == MYSQL_TAGGED_GTID_EVENT:
                    tagged += 1
                elif gtid is not None:
                    spans.append(Span(gtid, None))
                elif spans and (
                    kind == XID_EVENT or (kind == QUERY_EVENT and not begins(data[1:]))
                ):  # the commit; a DDL is its own Query
                    spans[-1] = Span(spans[-1].gtid, log_pos)
        except (pymysql.err.MySQLError, OSError) as exc:
            raise _explained(spec, exc) from exc
        window = window_from_spans(spans, tagged, events)
        window.checksum = checksum
        return window
    finally:
        conn.close()


def _connect(spec: ConnectionSpec) -> pymysql.connections.Connection[Any]:
    try:
        return open_connection(spec, autocommit=True)
    except (pymysql.err.MySQLError, OSError) as exc:
        raise _explained(spec, exc) from exc


def _announce(conn: pymysql.connections.Connection[Any], mariadb: bool) -> bool:
    """Tell the source what this client handles; True when its events carry a CRC32."""
    with conn.cursor() as cur:
        cur.execute("SELECT @@global.binlog_checksum")
        row = cur.fetchone()
        checksum = bool(row and row[0] and str(row[0]).upper() != "NONE")
        # A source refuses a client that does not say it knows the checksum in use.
        cur.execute("SET @master_binlog_checksum = @@global.binlog_checksum")
        if mariadb:
            cur.execute(f"SET @mariadb_slave_capability = {MARIADB_CAPABILITY_GTID}")
    return checksum


def _explained(spec: ConnectionSpec, exc: BaseException) -> CollectorError:
    """The executor's translation; a refused statement (not a refused login) is the dump's
    privilege, named."""
    error = translate_error(spec.server, exc)
    if isinstance(error, AccessDenied) and not isinstance(error, LoginRefused):
        detail = f"{error.detail} (reading commit parents needs REPLICATION SLAVE; optional)"
        return AccessDenied(error.server, detail, error.code)
    return error
