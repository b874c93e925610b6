"""A multi-statement answer read straight off its packets: each result set's column names and
rows, every value decoded exactly as PyMySQL decodes it, without PyMySQL's objects per field.

A poll's answer is a dozen small result sets, one of them SHOW SLAVE STATUS with some sixty
columns: most of the bytes are column definitions, not rows. PyMySQL's cursor builds a packet
object, a ``FieldDescriptorPacket`` with eleven attributes and a DB-API description tuple for
every column of every result set, and reads each length-coded string through three method
calls. That was more than half of a poll's client CPU (``bench/poll_throughput.py``'s bare poll
is exactly that cursor). Here a column definition is read for the three things a value's
decoding needs — its name, type and character set — and a row's values are cut out of the
packet in one loop.

What stays PyMySQL's: the command is sent by ``Connection._execute_command``; each packet's
bytes come through ``Connection._read_bytes``, or, on Lagscope's own connection, at once from
its buffer when the packet is whole there (either way the answer's caps and deadline of
collectors/answer_limits.py see every header and body); an error packet raises through
``pymysql.err.raise_mysql_exception``; the converters and encodings are the connection's own.
A packet sequence number out of order, a connection lost mid-answer and a value cut short raise
what PyMySQL raises, so :func:`~lagscope.collectors.executor.translate_error` tells them apart
the same way. ``tests/unit/collectors/test_answer_reader.py`` compares every value with
PyMySQL's cursor over generated answers.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any, Final

import pymysql.converters
import pymysql.err
from pymysql.constants import COMMAND, CR, FIELD_TYPE, SERVER_STATUS

# Column definitions and rows: what one statement answered.
Answer = tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]
Decoder = tuple[str | None, Callable[[Any], Any] | None]

_MAX_PACKET: Final = 0xFFFFFF
_MORE_RESULTS: Final = SERVER_STATUS.SERVER_MORE_RESULTS_EXISTS
# PyMySQL's TEXT_TYPES (connections.py): string types whose charset says text or binary.
_TEXT_TYPES: Final = frozenset(
    {
        FIELD_TYPE.BIT,
        FIELD_TYPE.BLOB,
        FIELD_TYPE.LONG_BLOB,
        FIELD_TYPE.MEDIUM_BLOB,
        FIELD_TYPE.STRING,
        FIELD_TYPE.TINY_BLOB,
        FIELD_TYPE.VAR_STRING,
        FIELD_TYPE.VARCHAR,
        FIELD_TYPE.GEOMETRY,
    }
)
_BINARY_CHARSET: Final = 63
# Column definitions remembered per connection (a poll's batch has about a hundred); a server
# sending new ones every time only empties the memory now and then.
_COLUMNS_KEPT: Final = 1024
_HEADER: Final = struct.Struct("<HBB")
_STATUS: Final = struct.Struct("<HH")
# After a column definition's six strings: a filler, charset, length, type, flags, decimals and
# two filler bytes (PyMySQL reads all of them: a shorter definition is an odd answer there too).
_FIELD_TAIL: Final = struct.Struct("<xHIBHBxx")


def query(conn: Any, sql: str) -> Iterator[Answer]:
    """Send ``sql`` on PyMySQL connection ``conn`` and yield each statement's answer in order
    (an OK packet's answer is ``((), ())``). Multi-statement: the server says whether another
    result set follows; it stops at the first error, which is raised."""
    # PyMySQL's own send: it refuses a closed connection and first drains what a cursor may
    # have left unread on it.
    conn._execute_command(COMMAND.COM_QUERY, sql)
    more = True
    while more:
        answer, status = _answer(conn)
        conn.server_status = status
        more = bool(status & _MORE_RESULTS)
        yield answer


def _answer(conn: Any) -> tuple[Answer, int]:
    first = _packet(conn)
    head = first[0]
    if head == 0 and len(first) >= 7:
        return ((), ()), _ok_status(first)
    if head == 0xFB:
        # LOAD DATA LOCAL: a server asking for a file of ours. Never sent (the connection
        # does not allow local infile), never answered.
        raise ValueError("the server asked for a local file (LOAD DATA LOCAL), not sent")
    count, _ = _length(first, 0)
    if count is None:
        raise ValueError("a result set announcing no column count")
    names: list[str] = []
    decoders: list[Decoder] = []
    seen = _columns_seen(conn)
    for _ in range(count):
        packet = _packet(conn)
        column = seen.get(packet)
        if column is None:
            if len(seen) >= _COLUMNS_KEPT:
                seen.clear()
            name, type_code, charset = _column(packet, conn.encoding)
            decoder = _decoder(type_code, charset, conn.use_unicode, conn.encoding, conn.decoders)
            column = seen[packet] = (name, decoder)
        names.append(column[0])
        decoders.append(column[1])
    if not _is_eof(_packet(conn)):
        raise AssertionError("Protocol error, expecting EOF")
    rows: list[tuple[Any, ...]] = []
    while True:
        packet = _packet(conn)
        if _is_eof(packet):
            return (tuple(names), tuple(rows)), _STATUS.unpack_from(packet, 1)[1]
        rows.append(_row(packet, decoders))


def _columns_seen(conn: Any) -> dict[bytes, tuple[str, Decoder]]:
    """The column definitions this connection was sent, with what they decode to: a poll's
    statements bring the same definitions every second, byte for byte."""
    seen: dict[bytes, tuple[str, Decoder]] | None = getattr(conn, "_lagscope_columns", None)
    if seen is None:
        seen = conn._lagscope_columns = {}
    return seen


def _packet(conn: Any) -> bytes:
    """One packet's payload, as ``Connection._read_packet`` reads it (the socket's timeout put
    back first: the answer's deadline lowers it while a read waits)."""
    if conn._current_timeout != conn._read_timeout:
        conn._sock.settimeout(conn._read_timeout)
        conn._current_timeout = conn._read_timeout
    # Lagscope's own connections (collectors/connection.py) hand over a packet already
    # buffered whole in one step; a plain PyMySQL connection reads it header first.
    whole = getattr(conn, "buffered_packet", None)
    if whole is not None and (data := whole()) is not None:
        if data[0] == 0xFF:
            pymysql.err.raise_mysql_exception(data)
        return data  # type: ignore[no-any-return]
    read = conn._read_bytes
    chunks = []
    while True:
        low, high, seq = _HEADER.unpack(read(4))
        length = low + (high << 16)
        if seq != conn._next_seq_id:
            conn._force_close()
            if seq == 0:
                # MariaDB sends its shutdown error numbered 0.
                raise pymysql.err.OperationalError(
                    CR.CR_SERVER_LOST, "Lost connection to MySQL server during query"
                )
            raise pymysql.err.InternalError(
                f"Packet sequence number wrong - got {seq} expected {conn._next_seq_id}"
            )
        conn._next_seq_id = (seq + 1) % 256
        chunks.append(read(length))
        if length < _MAX_PACKET:
            break
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if data[0] == 0xFF:
        pymysql.err.raise_mysql_exception(data)
    return data


def _is_eof(packet: bytes) -> bool:
    return packet[0] == 0xFE and len(packet) < 9


def _ok_status(packet: bytes) -> int:
    _, pos = _length(packet, 1)  # affected rows
    _, pos = _length(packet, pos)  # insert id
    return int(_STATUS.unpack_from(packet, pos)[0])


def _length(data: bytes, pos: int) -> tuple[int | None, int]:
    """A length-encoded integer at ``pos`` and the position after it (None: NULL, and PyMySQL
    reads a first byte of 0xFF as NULL too)."""
    first = data[pos]
    if first < 251:
        return first, pos + 1
    if first == 252:
        return data[pos + 1] | data[pos + 2] << 8, pos + 3
    if first == 253:
        return data[pos + 1] | data[pos + 2] << 8 | data[pos + 3] << 16, pos + 4
    if first == 254:
        return int.from_bytes(data[pos + 1 : pos + 9], "little"), pos + 9
    return None, pos + 1


def _column(data: bytes, encoding: str) -> tuple[str, int, int]:
    """A column definition's name, type and character set number."""
    pos = 0
    name = ""
    for index in range(6):  # catalog, schema, table, original table, name, original name
        size, pos = _length(data, pos)
        if size is None:
            raise ValueError("NULL in a column definition")
        end = pos + size
        if end > len(data):
            raise AssertionError("a column definition shorter than its lengths")
        if index >= 2:
            # PyMySQL decodes all four names: one it cannot decode is an odd answer.
            text = data[pos:end].decode(encoding)
            if index == 4:
                name = text
        pos = end
    charset, _, type_code, _, _ = _FIELD_TAIL.unpack_from(data, pos)
    return name, type_code, charset


def _decoder(
    type_code: int,
    charset: int,
    use_unicode: bool,
    encoding: str,
    known: dict[int, Callable[[Any], Any]],
) -> Decoder:
    """How PyMySQL's ``MySQLResult._get_descriptions`` decodes this column's values."""
    text: str | None = None
    if use_unicode:
        if type_code == FIELD_TYPE.JSON:
            text = encoding
        elif type_code in _TEXT_TYPES:
            text = None if charset == _BINARY_CHARSET else encoding
        else:
            text = "ascii"
    convert = known.get(type_code)
    if convert is pymysql.converters.through:
        convert = None
    return text, convert


def _row(data: bytes, decoders: list[Decoder]) -> tuple[Any, ...]:
    """One row's values; a row shorter than its columns ends where its bytes do (as PyMySQL's),
    a value cut short is an odd answer."""
    values: list[Any] = []
    pos, end = 0, len(data)
    for text, convert in decoders:
        if pos >= end:
            break
        size = data[pos]
        if size < 251:
            pos += 1
        else:
            size_or_null, pos = _length(data, pos)
            if size_or_null is None:
                values.append(None)
                continue
            size = size_or_null
        stop = pos + size
        if stop > end:
            raise AssertionError("a value shorter than its length")
        value: Any = data[pos:stop]
        pos = stop
        if text is not None:
            value = value.decode(text)
        if convert is not None:
            value = convert(value)
        values.append(value)
    return tuple(values)
