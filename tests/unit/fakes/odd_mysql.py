"""A fake MariaDB 10.11 on loopback that answers Lagscope's statements oddly, from a corpus.

It speaks the protocol at the packet level (PyMySQL on the other side is the real client):
a Handshake v10 announcing ``mysql_native_password``, OK to any login and to ``SET …``, a
normal answer to the session's first statements (the version, an empty variable catalog),
and then, to every other query — the poll's multi-statement batch, discovery's statements,
the connection test's — the corpus answer it was started with. Every connection is served
in its own thread (the poller reconnects after each odd answer, while a trickle may still be
sending), until :meth:`OddMySQL.stop`.

Each :class:`OddAnswer` builds the bytes of its answer for a batch of ``n`` statements (the
first result set is where the poll's server state is due) and says what the client should
make of it: ``unexpected`` (an ``UnexpectedAnswer``), ``unreachable`` (the connection was
lost) or ``any`` (an answer a tolerant parser may use, odd as it is).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Literal

from lagscope.collectors.flavor import FLAVOR_SQL
from tests.unit.fakes.fake_mysql import CAPABILITIES

VERSION = "10.11.99-MariaDB-fake"
# The caps of collectors/answer_limits.py (per packet, per answer), as their docs give them.
PACKET_BYTES = 4 * 1024 * 1024
ANSWER_BYTES = 16 * 1024 * 1024
SALT = b"abcdefghijklmnopqrst"
AUTOCOMMIT = 0x0002
MORE_RESULTS = 0x0008
TEXT, LONGLONG = 0xFD, 0x08
UTF8MB4 = 45
# The poll's first reading on MariaDB (collectors/server_state.py), as the lab answers it.
STATE_COLUMNS = (
    "now_ts",
    "server_id",
    "read_only",
    "gtid_binlog_pos",
    "gtid_slave_pos",
    "gtid_current_pos",
    "gtid_strict_mode",
    "gtid_domain_id",
)
STATE_TYPES = (TEXT, LONGLONG, LONGLONG, TEXT, TEXT, TEXT, LONGLONG, LONGLONG)
Cell = bytes | None


def state_row(now: float | None = None) -> list[Cell]:
    at = f"{time.time() if now is None else now:.6f}".encode()
    return [at, b"7", b"0", b"0-7-10", b"", b"0-7-10", b"0", b"0"]


class Wire:
    """Packets of one answer, numbered as the client expects (1, 2, … after its command)."""

    def __init__(self) -> None:
        self.seq = 1
        self.chunks: list[bytes] = []

    def packet(self, payload: bytes) -> Wire:
        self.chunks.append(_frame(self.seq, payload))
        self.seq = (self.seq + 1) % 256
        return self

    def raw(self, data: bytes) -> Wire:
        self.chunks.append(data)
        return self

    def result_set(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[Cell]],
        more: bool = False,
        types: Sequence[int] | None = None,
        charsets: Sequence[int] | None = None,
    ) -> Wire:
        self.packet(_lenenc_int(len(columns)))
        for n, name in enumerate(columns):
            kind = (types or ())[n] if types and n < len(types) else TEXT
            charset = charsets[n] if charsets and n < len(charsets) else UTF8MB4
            self.packet(_column(name, kind, charset))
        self.packet(_eof(0))
        for row in rows:
            self.packet(b"".join(_cell(v) for v in row))
        return self.packet(_eof(AUTOCOMMIT | (MORE_RESULTS if more else 0)))

    def empty_sets(self, count: int) -> Wire:
        for n in range(count):
            self.result_set(("x",), (), more=n < count - 1)
        return self

    def bytes(self) -> bytes:
        return b"".join(self.chunks)


def _state_then_empty(
    n: int,
    columns: Sequence[str] = STATE_COLUMNS,
    rows: Sequence[Sequence[Cell]] | None = None,
    types: Sequence[int] | None = STATE_TYPES,
) -> Wire:
    """The first result set as given (the server state by default), the others empty."""
    wire = Wire().result_set(columns, [state_row()] if rows is None else rows, n > 1, types)
    return wire.empty_sets(n - 1)


Expect = Literal["unexpected", "unreachable", "any"]


@dataclass(frozen=True, slots=True)
class OddAnswer:
    name: str
    build: Callable[[int], bytes]
    expect: Expect
    # Seconds between bytes (a trickle); 0: sent at once.
    trickle_s: float = 0.0
    # Close the connection after sending (a server that dies mid-result).
    hang_up: bool = False


def _one_result_set(n: int) -> bytes:
    return Wire().result_set(STATE_COLUMNS, [state_row()], False, STATE_TYPES).bytes()


def _more_result_sets(n: int) -> bytes:
    return _state_then_empty(n + 1).bytes()


def _no_row(n: int) -> bytes:
    return _state_then_empty(n, rows=[]).bytes()


def _two_rows(n: int) -> bytes:
    return _state_then_empty(n, rows=[state_row(), state_row()]).bytes()


def _short_row(n: int) -> bytes:
    return _state_then_empty(n, rows=[state_row()[:3]]).bytes()


def _extra_columns(n: int) -> bytes:
    columns = (*STATE_COLUMNS, "surprise", "another")
    row = [*state_row(), b"x", b"y"]
    return _state_then_empty(n, columns, [row], (*STATE_TYPES, TEXT, TEXT)).bytes()


def _missing_columns(n: int) -> bytes:
    return _state_then_empty(n, STATE_COLUMNS[:2], [state_row()[:2]], STATE_TYPES[:2]).bytes()


def _null_everywhere(n: int) -> bytes:
    return _state_then_empty(n, rows=[[None] * len(STATE_COLUMNS)]).bytes()


def _wrong_types(n: int) -> bytes:
    row = state_row()
    row[1] = b"seven"  # a LONGLONG column the driver converts with int()
    return _state_then_empty(n, rows=[row]).bytes()


def _overflow(n: int) -> bytes:
    row = state_row()
    row[1] = str(2**64).encode()
    return _state_then_empty(n, rows=[row]).bytes()


def _negative_server_id(n: int) -> bytes:
    row = state_row()
    row[1] = b"-5"
    return _state_then_empty(n, rows=[row]).bytes()


def _not_a_number(n: int) -> bytes:
    row = state_row()
    row[0] = b"nan"
    return _state_then_empty(n, rows=[row]).bytes()


def _invalid_utf8(n: int) -> bytes:
    row = state_row()
    row[3] = b"0-7-\xff\xfe10"
    return _state_then_empty(n, rows=[row]).bytes()


def _control_characters(n: int) -> bytes:
    row = state_row()
    row[3] = "0-7-10\x00\x1b[31m\u202e\r\n".encode()
    return _state_then_empty(n, rows=[row]).bytes()


def _packet_over_cap(n: int) -> bytes:
    # A header announcing a body far over the cap, and a little of it: a client that trusted
    # the length would wait for (and allocate) all of it.
    return struct.pack("<I", 0xFFFFFF)[:3] + b"\x01" + b"\x00" * 64


def huge_packet(n: int) -> bytes:
    """One logical packet of 32 MiB in full (two 16 MiB frames and a short last one): what a
    client without a cap reads, and holds, whole."""
    body = b"\x00" * 0xFFFFFF
    return _frame(1, body) + _frame(2, body) + _frame(3, b"\x00" * 16)


def _answer_over_cap(n: int) -> bytes:
    # Rows each under the packet cap, together over the answer cap.
    cell = b"9" * (PACKET_BYTES // 2)
    rows = [[cell] for _ in range(ANSWER_BYTES // len(cell) + 2)]
    wire = Wire().result_set(("big",), rows, n > 1)
    return wire.empty_sets(n - 1).bytes()


def _sequence_out_of_order(n: int) -> bytes:
    wire = Wire()
    wire.seq = 9
    return wire.result_set(STATE_COLUMNS, [state_row()], n > 1, STATE_TYPES).bytes()


def _closed_mid_result(n: int) -> bytes:
    wire = Wire().packet(_lenenc_int(len(STATE_COLUMNS)))
    wire.packet(_column(STATE_COLUMNS[0], TEXT))
    return wire.bytes()


def _trickled(n: int) -> bytes:
    return _state_then_empty(n).bytes()


CORPUS: tuple[OddAnswer, ...] = (
    OddAnswer("one_result_set", _one_result_set, "unexpected"),
    OddAnswer("more_result_sets", _more_result_sets, "unexpected"),
    OddAnswer("no_row", _no_row, "unexpected"),
    OddAnswer("two_rows", _two_rows, "unexpected"),
    OddAnswer("short_row", _short_row, "unexpected"),
    OddAnswer("extra_columns", _extra_columns, "any"),
    OddAnswer("missing_columns", _missing_columns, "any"),
    OddAnswer("null_everywhere", _null_everywhere, "any"),
    OddAnswer("wrong_types", _wrong_types, "unexpected"),
    OddAnswer("overflow_64_bit", _overflow, "unexpected"),
    OddAnswer("negative_server_id", _negative_server_id, "unexpected"),
    OddAnswer("not_a_number", _not_a_number, "unexpected"),
    OddAnswer("invalid_utf8", _invalid_utf8, "unexpected"),
    OddAnswer("nul_and_control_characters", _control_characters, "any"),
    OddAnswer("packet_over_cap", _packet_over_cap, "unexpected"),
    OddAnswer("answer_over_cap", _answer_over_cap, "unexpected"),
    OddAnswer("sequence_out_of_order", _sequence_out_of_order, "unexpected"),
    OddAnswer("closed_mid_result", _closed_mid_result, "unreachable", hang_up=True),
    OddAnswer("trickled", _trickled, "unexpected", trickle_s=0.05),
)
BY_NAME = {a.name: a for a in CORPUS}


class OddMySQL:
    """Listens on 127.0.0.1 until stopped; ``answer`` may be changed between polls."""

    def __init__(self, answer: OddAnswer) -> None:
        self.answer = answer
        self.connections = 0
        self.batches = 0
        self.errors: list[BaseException] = []
        self._stopped = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port: int = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> OddMySQL:
        self._accepting.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopped.set()
        self._accepting.join(timeout=10)
        self._listener.close()
        for thread in self._threads:
            thread.join(timeout=10)

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(1.0)
            try:
                self._session(conn)
            except (OSError, EOFError) as exc:  # the client hung up, as it should after odd
                self.errors.append(exc)

    def _session(self, conn: socket.socket) -> None:
        handshake = (
            b"\x0a"
            + VERSION.encode()
            + b"\x00"
            + struct.pack("<I", 11)
            + SALT[:8]
            + b"\x00"
            + struct.pack("<H", CAPABILITIES & 0xFFFF)
            + bytes([UTF8MB4])
            + struct.pack("<H", AUTOCOMMIT)
            + struct.pack("<H", CAPABILITIES >> 16)
            + bytes([len(SALT) + 1])
            + b"\x00" * 10
            + SALT[8:]
            + b"\x00"
            + b"mysql_native_password\x00"
        )
        conn.sendall(_frame(0, handshake))
        seq, _ = self._recv(conn)
        conn.sendall(_frame(seq + 1, _ok()))
        while not self._stopped.is_set():
            _, command = self._recv(conn)
            if command[:1] == b"\x01":  # COM_QUIT
                return
            if command[:1] != b"\x03":  # COM_PING and the like
                conn.sendall(_frame(1, _ok()))
                continue
            sql = command[1:].decode("utf-8", "replace")
            if sql.upper().startswith("SET "):
                conn.sendall(_frame(1, _ok()))
            elif sql == FLAVOR_SQL:
                row: list[Cell] = [VERSION.encode(), b"fake"]
                conn.sendall(Wire().result_set(("@@version", "@@version_comment"), [row]).bytes())
            elif sql.startswith("SELECT VARIABLE_NAME, VARIABLE_VALUE FROM"):
                wire = Wire().result_set(("VARIABLE_NAME", "VARIABLE_VALUE"), [])
                conn.sendall(wire.bytes())
            else:
                self.batches += 1
                self._play(conn, sql.count(";\n") + 1)
                if self.answer.hang_up:
                    return

    def _play(self, conn: socket.socket, statements: int) -> None:
        data = self.answer.build(statements)
        if not self.answer.trickle_s:
            conn.sendall(data)
            return
        for n in range(len(data)):
            if self._stopped.wait(self.answer.trickle_s):
                return
            conn.sendall(data[n : n + 1])

    def _recv(self, conn: socket.socket) -> tuple[int, bytes]:
        header = self._exactly(conn, 4)
        length = int.from_bytes(header[:3], "little")
        return header[3], self._exactly(conn, length)

    def _exactly(self, conn: socket.socket, count: int) -> bytes:
        data = bytearray()
        while len(data) < count:
            try:
                chunk = conn.recv(count - len(data))
            except TimeoutError:
                if self._stopped.is_set():
                    raise EOFError("stopped") from None
                continue
            if not chunk:
                raise EOFError("client closed the connection")
            data += chunk
        return bytes(data)


def _frame(seq: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([seq % 256]) + payload


def _ok() -> bytes:
    return b"\x00\x00\x00" + struct.pack("<HH", AUTOCOMMIT, 0)


def _eof(status: int) -> bytes:
    return b"\xfe" + struct.pack("<HH", 0, status)


def _lenenc_int(value: int) -> bytes:
    if value < 251:
        return bytes([value])
    if value < 2**16:
        return b"\xfc" + struct.pack("<H", value)
    if value < 2**24:
        return b"\xfd" + struct.pack("<I", value)[:3]
    return b"\xfe" + struct.pack("<Q", value)


def _lenenc_str(value: bytes) -> bytes:
    return _lenenc_int(len(value)) + value


def _cell(value: Cell) -> bytes:
    return b"\xfb" if value is None else _lenenc_str(value)


def _column(name: str, kind: int, charset: int = UTF8MB4) -> bytes:
    encoded = name.encode()
    return (
        _lenenc_str(b"def")
        + _lenenc_str(b"")
        + _lenenc_str(b"")
        + _lenenc_str(b"")
        + _lenenc_str(encoded)
        + _lenenc_str(encoded)
        + b"\x0c"
        + struct.pack("<HIBHB", charset, 1024, kind, 0, 0)
        + b"\x00\x00"
    )


def quietly_stop(servers: Sequence[OddMySQL]) -> None:
    for server in servers:
        with contextlib.suppress(Exception):
            server.stop()
