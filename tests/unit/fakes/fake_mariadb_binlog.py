"""A fake MariaDB source on loopback whose binlog window is slow or oversized.

Built on tests/unit/fakes/odd_mysql.py's fake (the real PyMySQL on the other side, any number of
connections, each in its own thread): ``SHOW MASTER STATUS`` answers a mark at once, ``SHOW
BINLOG EVENTS`` answers by ``window``, and every other statement (a poll's batch) gets the
corpus answer ``poll`` at once. So the source can sit in a live pipeline: it is polled (and
its poll costs only its own sample), while the binlog reader alone is held.

``window``:

- ``("trickle", rows, gap_s)``: ``rows`` GTID + Xid rows, one every ``gap_s`` (each inside the
  read timeout, all of them far outside the window's deadline), then the end of the answer;
- ``("huge", length)``: the header of a row's packet announcing ``length`` bytes, a few bytes
  of it, and silence;
- ``("rows", rows)``: ``rows`` rows at once.

``windows_started`` counts the ``SHOW BINLOG EVENTS`` answers begun, ``rows_sent`` the rows
sent, ``trickling`` the trickles being sent now and ``trickles_ended`` those that ended (sent
whole, or their reader hung up).
"""

from __future__ import annotations

import socket
import threading

from tests.unit.fakes.odd_mysql import BY_NAME, Cell, OddAnswer, OddMySQL, Wire, _frame

MARK_FILE = "mariadb-bin.000001"
MARK_COLUMNS = ("File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB")
EVENT_COLUMNS = ("Log_name", "Pos", "Event_type", "Server_id", "End_log_pos", "Info")
Window = tuple[object, ...]


class FakeMariaDBBinlog(OddMySQL):
    def __init__(self, window: Window, poll: OddAnswer = BY_NAME["one_result_set"]) -> None:
        super().__init__(poll)
        self.window = window
        self.windows_started = 0
        self.rows_sent = 0
        self.trickling = 0
        self.trickles_ended = 0
        self._count = threading.Lock()
        self._statement = threading.local()

    def __enter__(self) -> FakeMariaDBBinlog:
        super().__enter__()
        return self

    def _recv(self, conn: socket.socket) -> tuple[int, bytes]:
        seq, command = super()._recv(conn)
        # The statement being answered, for _play (which the base class gives only a count).
        self._statement.sql = command[1:].decode("utf-8", "replace").strip().upper()
        return seq, command

    def _play(self, conn: socket.socket, statements: int) -> None:
        sql: str = getattr(self._statement, "sql", "")
        if sql == "SHOW MASTER STATUS":
            row: list[Cell] = [MARK_FILE.encode(), b"4", b"", b""]
            conn.sendall(Wire().result_set(MARK_COLUMNS, [row]).bytes())
        elif sql.startswith("SHOW BINLOG EVENTS"):
            self.windows_started += 1
            self._window(conn)
        else:
            super()._play(conn, statements)

    def _window(self, conn: socket.socket) -> None:
        kind = self.window[0]
        wire = Wire()
        wire.packet(bytes([len(EVENT_COLUMNS)]))
        header = Wire().result_set(EVENT_COLUMNS, [])
        # The column definitions and their EOF: all of an empty result set but its last EOF.
        head = header.chunks[:-1]
        wire.chunks, wire.seq = list(head), len(head) + 1
        if kind == "huge":
            length = int(str(self.window[1]))
            conn.sendall(wire.bytes() + length.to_bytes(3, "little") + bytes([wire.seq]))
            conn.sendall(b"\x00" * 64)
            self._stopped.wait(30)
            return
        rows = int(str(self.window[1]))
        gap_s = float(str(self.window[2])) if kind == "trickle" else 0.0
        conn.sendall(wire.bytes())
        wire.chunks = []
        with self._count:
            self.trickling += 1
        try:
            for n in range(rows):
                wire.chunks = []
                for cells in _transaction(n):
                    wire.packet(b"".join(_cell(c) for c in cells))
                conn.sendall(wire.bytes())
                self.rows_sent += 2
                if gap_s and self._stopped.wait(gap_s):
                    return
            conn.sendall(_frame(wire.seq, b"\xfe\x00\x00\x02\x00"))
        finally:
            with self._count:
                self.trickling -= 1
                self.trickles_ended += 1


def _transaction(n: int) -> list[list[bytes]]:
    """A GTID and an Xid row of transaction ``n`` (60 bytes each, from position 4)."""
    start = 4 + n * 120
    gtid = f"BEGIN GTID 0-1-{n + 1} cid={n // 2 + 1}".encode()
    return [
        [MARK_FILE.encode(), str(start).encode(), b"Gtid", b"1", str(start + 60).encode(), gtid],
        [
            MARK_FILE.encode(),
            str(start + 60).encode(),
            b"Xid",
            b"1",
            str(start + 120).encode(),
            f"COMMIT /* xid={n} */".encode(),
        ],
    ]


def _cell(value: bytes) -> bytes:
    return bytes([len(value)]) + value
