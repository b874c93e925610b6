"""A bounded window of a source's binlog over the replication protocol: commit parents.

MySQL writes each transaction's ``last_committed`` and ``sequence_number`` (its commit parent
and its own logical timestamp) into the binary GTID event, which ``SHOW BINLOG EVENTS`` does not
print. Reading them takes what a replica does: ``COM_BINLOG_DUMP`` from a position, here with
``BINLOG_DUMP_NON_BLOCK`` so the server ends the stream at the end of its log instead of
waiting, and at most ``EVENTS_PER_SAMPLE`` events read. The user needs ``REPLICATION SLAVE``
(``REPLICATION REPLICA``): optional, the only privilege Lagscope asks for beyond reading, and
only for this. Without it the server refuses the dump and the source simply has no sample.

Bounded: the read stops at an overall deadline (a watchdog shuts the socket down then, so a
source that trickles bytes cannot hold it), at a byte budget for the whole window, and at an
event whose packet header announces more than the per-event cap (refused on the header, before
its body is read). The window then holds the whole transactions read so far and ``problem``
says why it stopped.

Only event headers and GTID event bodies are decoded: a statement or row event is skipped by
its length, never parsed, so nothing it holds (a ``CREATE USER … IDENTIFIED BY`` password, row
images) is kept. Nothing is registered on the source (no ``COM_REGISTER_SLAVE``): the dump
thread lives for one read. ``server_id`` must differ from every other reader's: a source ends an
older dump connection that uses the same id (MariaDB: error 4052 on the replica whose dump was
ended, which then reconnects and ends ours). So the id is per installation
(:func:`installation_server_id`), and before the dump the source's own id, the replicas it lists
(``SHOW REPLICAS`` / ``SHOW SLAVE HOSTS``, when the login may) and the ids Lagscope knows from
its own samples are compared with it: a taken id is not used, and ``problem`` says so.

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

import contextlib
import hashlib
import socket
import struct
import threading
import time
from collections.abc import Iterable
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
# Who we say we are to the source: an id in 0x4C530001–0x4C53FFFF (1,280,507,905 upwards),
# chosen per installation. Operators number servers from 1, or after an IPv4 address of their
# own network (10.x, 172.16–31.x, 192.168.x: other ranges); this block reads as a public
# address (76.83.x.x) that no private topology derives ids from.
DUMP_ID_BASE = 0x4C53_0000
DUMP_ID_SPAN = 0xFFFF
DUMP_SERVER_ID = 0x4C53_5032  # an installation without a store (the lab's checks)
# The read's bounds (settings: LAGSCOPE_BINLOG_WINDOW_*).
DEADLINE_S = 10.0
MAX_BYTES = 64 * 1024 * 1024
MAX_EVENT_BYTES = 16 * 1024 * 1024
_PACKET_MAX = 0xFF_FFFF  # a protocol packet's largest payload; a longer event spans several
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
    problem: str | None = None  # why the window stopped early, or was not read


@dataclass(frozen=True, slots=True)
class Bounds:
    """How long and how much one window may take."""

    deadline_s: float = DEADLINE_S
    max_bytes: int = MAX_BYTES
    max_event_bytes: int = MAX_EVENT_BYTES


DEFAULT_BOUNDS = Bounds()


def installation_server_id(installation: bytes) -> int:
    """The dump's server id for an installation (its store's random salt, made once): stable
    across restarts and key rotations, different between two Lagscopes on one source."""
    digest = hashlib.sha256(b"lagscope binlog dump server id\0" + installation).digest()
    return DUMP_ID_BASE + 1 + int.from_bytes(digest[:4], "big") % DUMP_ID_SPAN


class _Stopped(Exception):
    """The window's read ended by a bound; the message is the row's problem."""


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
    known_ids: Iterable[int] = (),
    bounds: Bounds = DEFAULT_BOUNDS,
) -> DumpedWindow:
    """The window after ``mark``: at most ``limit`` events, ending early at the end of the log,
    at a rotation or at a bound (``problem`` says which). Not read when ``server_id`` is the
    source's, a replica's it lists, or in ``known_ids`` (the monitored servers' ids).
    AccessDenied when the user lacks REPLICATION SLAVE."""
    started = time.monotonic()
    conn = _connect(spec)
    watchdog = threading.Timer(bounds.deadline_s, _cut, args=(conn,))
    watchdog.daemon = True
    watchdog.start()
    spans: list[Span] = []
    tagged = events = 0
    checksum = False
    problem: str | None = None
    try:
        try:
            if holder := _id_taken(conn, server_id, known_ids):
                return DumpedWindow(
                    problem=f"not read: server id {server_id} is {holder}; reading with it "
                    "would end that reader's binlog dump (set LAGSCOPE_BINLOG_DUMP_SERVER_ID to "
                    "an id no server of this topology uses)"
                )
            checksum = _announce(conn, mariadb)
            payload = struct.pack("<IHI", mark.pos, BINLOG_DUMP_NON_BLOCK, server_id)
            payload += mark.file.encode()
            # PyMySQL has no public call for a raw command or packet: its replication clients
            # (python-mysql-replication) use _execute_command the same way.
            conn._execute_command(COM_BINLOG_DUMP, payload)  # type: ignore[attr-defined]
            budget = bounds.max_bytes
            while events < limit:
                data = _read_event_packet(conn, bounds.max_event_bytes, budget, events)
                budget -= len(data)
                if data[:1] == b"\xfe" and len(data) < 9:
                    break  # EOF: the end of the log (non-blocking dump)
                if data[:1] == b"\xff":
                    pymysql.err.raise_mysql_exception(data)
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
        except _Stopped as stop:
            problem = str(stop)
        except (pymysql.err.MySQLError, OSError) as exc:
            if time.monotonic() - started < bounds.deadline_s:
                raise _explained(spec, exc) from exc
            problem = _late(bounds, events)  # the watchdog shut the socket down
        window = window_from_spans(spans, tagged, events)
        window.checksum = checksum
        window.problem = problem
        return window
    finally:
        watchdog.cancel()
        conn.close()


def _late(bounds: Bounds, events: int) -> str:
    return (
        f"stopped after {bounds.deadline_s:g} s: the source sent {events} events in that time "
        "(the window's deadline, LAGSCOPE_BINLOG_WINDOW_DEADLINE_S)"
    )


def _cut(conn: pymysql.connections.Connection[Any]) -> None:
    """The deadline: wake a read blocked on a source that trickles, from another thread."""
    sock = getattr(conn, "_sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):  # closed already
            sock.shutdown(socket.SHUT_RDWR)


def _read_event_packet(
    conn: pymysql.connections.Connection[Any], cap: int, budget: int, events: int
) -> bytes:
    """One event's packet(s), each refused on its header's length before its body is read."""
    data = b""
    while True:
        header = conn._read_bytes(4)  # type: ignore[attr-defined]
        length = int.from_bytes(header[:3], "little")
        conn._next_seq_id = (header[3] + 1) % 256  # type: ignore[attr-defined]
        if len(data) + length > cap:
            raise _Stopped(
                f"stopped at an event of {len(data) + length}+ bytes, over the "
                f"{cap} bytes one event may have (LAGSCOPE_BINLOG_WINDOW_MAX_EVENT_BYTES); "
                f"{events} events read before it"
            )
        if len(data) + length > budget:
            raise _Stopped(
                f"stopped after {events} events: the window's byte budget is spent "
                "(LAGSCOPE_BINLOG_WINDOW_MAX_BYTES)"
            )
        data += bytes(conn._read_bytes(length))  # type: ignore[attr-defined]
        if length < _PACKET_MAX:
            return data


_LISTS = ("SHOW REPLICAS", "SHOW SLAVE HOSTS")


def _id_taken(
    conn: pymysql.connections.Connection[Any], server_id: int, known_ids: Iterable[int]
) -> str | None:
    """Who uses ``server_id`` already, or None: the source itself, a replica it lists, a
    monitored server. A source that will not list its replicas to this login (MariaDB wants
    REPLICATION MASTER ADMIN for it) is judged by the rest."""
    if server_id in set(known_ids):
        return "a server Lagscope monitors in this cluster"
    with conn.cursor() as cur:
        cur.execute("SELECT @@server_id")
        row = cur.fetchone()
        if row and row[0] is not None and int(row[0]) == server_id:
            return "the source's own"
        for statement in _LISTS:
            try:
                cur.execute(statement)
            except pymysql.err.MySQLError:
                continue  # the other name on this version, or not allowed to this login
            names = [d[0].lower() for d in cur.description or ()]
            if "server_id" not in names:
                continue
            at = names.index("server_id")
            if any(r[at] is not None and int(r[at]) == server_id for r in cur.fetchall()):
                return "a replica's the source lists"
            return None
    return None


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
