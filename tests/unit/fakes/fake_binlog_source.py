"""A fake binlog source on loopback: answers the few queries the dump reader sends, then streams
binlog events slowly, or announces one event larger than any cap.

It speaks the protocol as tests/unit/fakes/fake_mysql.py does (Handshake v10, mysql_native_password,
no TLS): ``SELECT @@server_id`` answers ``server_id``; ``SHOW SLAVE HOSTS`` lists ``replicas``
(``SHOW REPLICAS`` is refused, as on MariaDB and MySQL before 8.0.22); ``SELECT
@@global.binlog_checksum`` answers NONE; anything else is OK. ``COM_BINLOG_DUMP`` is recorded
in ``dumps`` (its server id) and answered by ``stream``:

- ``("events", n, gap_s)``: n GTID+Xid transactions' events (MySQL layout), one every
  ``gap_s``, then EOF;
- ``("bytes", gap_s)``: one event's header, then its bytes one at a time every ``gap_s``;
- ``("huge", length)``: a packet header announcing ``length`` bytes (at most 0xFFFFFF: a
  longer event spans packets), then a few bytes and silence.
"""

from __future__ import annotations

import socket
import struct
import threading
from types import TracebackType

from tests.unit.collectors.test_binlog_dump import event, mysql_gtid
from tests.unit.fakes.fake_mysql import CAPABILITIES, OK, SALT, _recv, _send, close_listener

COM_QUERY = 0x03
COM_BINLOG_DUMP = 0x12
XID = 16
EOF = b"\xfe\x00\x00\x02\x00"
Stream = tuple[object, ...]


class FakeBinlogSource:
    def __init__(self, stream: Stream, server_id: int = 1, replicas: tuple[int, ...] = ()) -> None:
        self.stream = stream
        self.server_id = server_id
        self.replicas = replicas
        self.dumps: list[int] = []
        self.sent_events = 0
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(30)
        self.port: int = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> FakeBinlogSource:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        close_listener(self._listener)
        self._thread.join(timeout=30)

    def _serve(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        try:
            conn.settimeout(30)
            self._session(conn)
        except (OSError, EOFError):
            pass  # the reader hung up: what a bounded read does
        finally:
            conn.close()

    def _session(self, conn: socket.socket) -> None:
        flags = CAPABILITIES
        handshake = (
            b"\x0a8.0.99-fake\x00" + struct.pack("<I", 7) + SALT[:8] + b"\x00"
            + struct.pack("<H", flags & 0xFFFF) + bytes([45]) + struct.pack("<H", 2)
            + struct.pack("<H", flags >> 16) + bytes([len(SALT) + 1]) + b"\x00" * 10
            + SALT[8:] + b"\x00" + b"mysql_native_password\x00"
        )  # fmt: skip
        _send(conn, 0, handshake)
        seq, _ = _recv(conn)
        _send(conn, seq + 1, OK)
        while not self._stop.is_set():
            _, command = _recv(conn)
            if command[:1] == b"\x01":
                return
            if command[0] == COM_BINLOG_DUMP:
                self.dumps.append(struct.unpack_from("<I", command, 7)[0])
                self._dump(conn)
                return
            query = command[1:].decode(errors="replace").strip().upper()
            if query == "SELECT @@SERVER_ID":
                _result(conn, ["@@server_id"], [[str(self.server_id)]])
            elif query == "SHOW SLAVE HOSTS":
                rows = [[str(r), "", "3306", str(self.server_id)] for r in self.replicas]
                _result(conn, ["Server_id", "Host", "Port", "Master_id"], rows)
            elif query == "SHOW REPLICAS":
                err = b"\xff" + struct.pack("<H", 1064) + b"#42000" + b"syntax"
                _send(conn, 1, err)
            elif query == "SELECT @@GLOBAL.BINLOG_CHECKSUM":
                _result(conn, ["@@global.binlog_checksum"], [["NONE"]])
            else:
                _send(conn, 1, OK)

    def _dump(self, conn: socket.socket) -> None:
        kind = self.stream[0]
        seq = 1
        if kind == "events":
            count, gap_s = int(str(self.stream[1])), float(str(self.stream[2]))
            pos = 4
            for n in range(count):
                body = mysql_gtid(n + 1, n, n + 1)
                gtid = event(33, body, pos + 19 + len(body), checksum=False)
                pos += len(gtid)
                xid = event(XID, struct.pack("<Q", n), pos + 27, checksum=False)
                pos += len(xid)
                for one in (gtid, xid):
                    _send(conn, seq, b"\x00" + one)
                    seq += 1
                self.sent_events += 2
                if self._stop.wait(gap_s):
                    return
            _send(conn, seq, EOF)
        elif kind == "bytes":
            gap_s = float(str(self.stream[1]))
            body = b"\x00" + event(33, mysql_gtid(1, 0, 1), 79, checksum=False)
            conn.sendall(struct.pack("<I", len(body))[:3] + bytes([seq]))
            for byte in body:
                conn.sendall(bytes([byte]))
                if self._stop.wait(gap_s):
                    return
        elif kind == "huge":
            length = int(str(self.stream[1]))
            conn.sendall(struct.pack("<I", length)[:3] + bytes([seq]) + b"\x00" * 64)
            self._stop.wait(30)


def _result(conn: socket.socket, names: list[str], rows: list[list[str]]) -> None:
    seq = 1
    _send(conn, seq, bytes([len(names)]))
    for name in names:
        seq += 1
        _send(conn, seq, _column(name))
    seq += 1
    _send(conn, seq, EOF)
    for row in rows:
        seq += 1
        _send(conn, seq, b"".join(_lenenc(v.encode()) for v in row))
    seq += 1
    _send(conn, seq, EOF)


def _column(name: str) -> bytes:
    return (
        _lenenc(b"def") + _lenenc(b"") + _lenenc(b"") + _lenenc(b"") + _lenenc(name.encode())
        + _lenenc(name.encode()) + b"\x0c" + struct.pack("<HIBHB", 33, 255, 253, 0, 0)
        + b"\x00\x00"
    )  # fmt: skip


def _lenenc(value: bytes) -> bytes:
    return bytes([len(value)]) + value
