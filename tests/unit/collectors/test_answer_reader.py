"""collectors/answer_reader.py decodes every answer exactly as PyMySQL's cursor does: the same
column names and the same Python values (ints, decimals, dates, text, bytes, NULL), result set
after result set, for answers generated over the types a poll meets. The odd answers (cut
short, out of sequence, over the caps) are tests/unit/collectors/test_odd_answers.py's, through the
executor."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable
from typing import Any

import pymysql
import pymysql.err
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymysql.constants import FIELD_TYPE

from lagscope.collectors import answer_reader
from lagscope.collectors.answer_reader import Answer
from tests.unit.fakes.odd_mysql import Wire

BINARY, UTF8MB4 = 63, 45
# (type, charset, values as the server sends them)
_DIGITS = st.integers(-(2**63), 2**64 - 1).map(lambda n: str(n).encode())
_TEXT = st.text(max_size=300).map(str.encode)
_DECIMALS = st.decimals(allow_nan=False, allow_infinity=False, places=6)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False)
KINDS: list[tuple[int, int, st.SearchStrategy[bytes]]] = [
    (FIELD_TYPE.LONGLONG, BINARY, _DIGITS),
    (FIELD_TYPE.LONG, BINARY, st.integers(-(2**31), 2**31 - 1).map(lambda n: str(n).encode())),
    (FIELD_TYPE.TINY, BINARY, st.integers(-128, 127).map(lambda n: str(n).encode())),
    (FIELD_TYPE.NEWDECIMAL, BINARY, _DECIMALS.map(lambda d: str(d).encode())),
    (FIELD_TYPE.DOUBLE, BINARY, _FLOATS.map(lambda f: repr(f).encode())),
    (FIELD_TYPE.DATETIME, BINARY, st.datetimes().map(lambda d: str(d).encode())),
    (FIELD_TYPE.VAR_STRING, UTF8MB4, _TEXT),
    (FIELD_TYPE.VAR_STRING, BINARY, st.binary(max_size=300)),
    (FIELD_TYPE.BLOB, UTF8MB4, st.text(max_size=70_000).map(str.encode)),
    (FIELD_TYPE.JSON, BINARY, _TEXT),
]


@st.composite
def result_sets(draw: st.DrawFn) -> tuple[list[str], list[int], list[int], list[list[Any]]]:
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=8))
    names = draw(st.lists(st.text(min_size=1, max_size=40), min_size=len(kinds),
                          max_size=len(kinds)))  # fmt: skip
    rows = draw(
        st.lists(
            st.tuples(*(st.none() | values for _, _, values in kinds)).map(list),
            max_size=4,
        )
    )
    return names, [k[0] for k in kinds], [k[1] for k in kinds], rows


def answer_bytes(sets: list[Any], ok_between: bool) -> bytes:
    wire = Wire()
    for n, (names, types, charsets, rows) in enumerate(sets):
        wire.result_set(names, rows, True, types, charsets)
        if ok_between and n == 0:
            wire.packet(b"\x00\x00\x00" + struct.pack("<HH", 0x000A, 0))  # more results
    # The last one says no more.
    wire.packet(b"\x00\x00\x00" + struct.pack("<HH", 0x0002, 0))
    return wire.bytes()


def served(answer: bytes, read: Callable[[Any], Any]) -> tuple[Any, Any]:
    """What ``read`` makes of ``answer`` sent over a socket to a PyMySQL connection (as after
    its login), and the connection."""
    ours, server = socket.socketpair()

    def serve() -> None:
        server.recv(1 << 16)  # the command
        server.sendall(answer)

    thread = threading.Thread(target=serve)
    thread.start()
    conn = connection(ours)
    try:
        return read(conn), conn
    finally:
        thread.join(10)
        conn._rfile.close()
        ours.close()
        server.close()


def connection(sock: socket.socket) -> Any:
    conn = pymysql.connections.Connection(defer_connect=True, autocommit=True)
    conn._sock = sock
    conn._rfile = sock.makefile("rb")
    conn._read_timeout = None
    conn._current_timeout = None
    conn._result = None
    return conn


def by_cursor(conn: Any) -> list[Answer]:
    out = []
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        while True:
            names = tuple(d[0] for d in cur.description or ())
            out.append((names, tuple(cur.fetchall()) if names else ()))
            if not cur.nextset():
                break
    return out


def by_reader(conn: Any) -> list[Answer]:
    return list(answer_reader.query(conn, "SELECT 1"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sets=st.lists(result_sets(), min_size=1, max_size=3), ok_between=st.booleans())
def test_every_value_is_decoded_as_pymysqls_cursor_decodes_it(
    sets: list[Any], ok_between: bool
) -> None:
    answer = answer_bytes(sets, ok_between)
    expected, expected_conn = served(answer, by_cursor)
    got, got_conn = served(answer, by_reader)
    assert got == expected
    assert [type(v) for _, rows in got for row in rows for v in row] == [
        type(v) for _, rows in expected for row in rows for v in row
    ]
    assert got_conn.server_status == expected_conn.server_status == 0x0002


def test_a_column_definition_seen_before_is_not_read_again() -> None:
    types = [FIELD_TYPE.LONGLONG, FIELD_TYPE.VAR_STRING]
    answer = Wire().result_set(["n", "s"], [[b"1", b"x"]], False, types).bytes()
    ours, server = socket.socketpair()
    conn = connection(ours)
    try:
        for _ in range(3):
            server.sendall(answer)
            assert by_reader(conn) == [(("n", "s"), ((1, "x"),))]
            server.recv(1 << 16)
    finally:
        conn._rfile.close()
        ours.close()
        server.close()
    assert len(conn._lagscope_columns) == 2


def test_an_error_packet_is_raised_as_pymysql_raises_it() -> None:
    error = b"\xff" + struct.pack("<H", 1227) + b"#42000Access denied; you need SUPER"
    first = Wire().result_set(["n"], [[b"1"]], True, [FIELD_TYPE.LONGLONG])

    def read(conn: Any) -> tuple[Answer, BaseException | None]:
        answers = answer_reader.query(conn, "SELECT 1; SELECT 2")
        head = next(answers)
        try:
            next(answers)
        except pymysql.err.MySQLError as exc:
            return head, exc
        return head, None

    (head, error_raised), _ = served(first.packet(error).bytes(), read)
    assert head == (("n",), ((1,),))
    assert isinstance(error_raised, pymysql.err.OperationalError)
    assert error_raised.args[0] == 1227


def test_a_request_for_a_local_file_is_refused() -> None:
    def read(conn: Any) -> str:
        with pytest.raises(ValueError, match="local file") as raised:
            by_reader(conn)
        return str(raised.value)

    refused, _ = served(Wire().packet(b"\xfb/etc/passwd").bytes(), read)
    assert "not sent" in refused
