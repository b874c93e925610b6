"""A fake MySQL server on loopback that asks the client for a clear-text password.

It speaks just enough of the protocol for PyMySQL: a Handshake v10 (announcing ``plugin``), an
optional TLS upgrade when the client sends an SSLRequest (``tls`` = a server-side context), an
AuthSwitchRequest to ``switch_to`` (``mysql_clear_password`` or ``dialog`` with a "Password: "
prompt), then OK to every command until the client leaves. Every byte the client sends —
after TLS decryption, so the check is as strict as it can be — is kept in ``received``.
"""

from __future__ import annotations

import socket
import ssl
import struct
import threading
from types import TracebackType

from pymysql.constants import CLIENT

CAPABILITIES = (
    CLIENT.LONG_PASSWORD
    | CLIENT.LONG_FLAG
    | CLIENT.CONNECT_WITH_DB
    | CLIENT.PROTOCOL_41
    | CLIENT.TRANSACTIONS
    | CLIENT.SECURE_CONNECTION
    | CLIENT.MULTI_STATEMENTS
    | CLIENT.MULTI_RESULTS
    | CLIENT.PLUGIN_AUTH
)
SALT = b"abcdefgh" + b"ijklmnopqrst"
# OK packet: header 0, 0 rows, insert id 0, status SERVER_STATUS_AUTOCOMMIT, 0 warnings.
OK = b"\x00\x00\x00\x02\x00\x00\x00"


class FakeMySQL:
    def __init__(
        self,
        plugin: str = "mysql_native_password",
        switch_to: str = "mysql_clear_password",
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.plugin = plugin.encode()
        self.switch_to = switch_to.encode()
        self.tls = tls
        self.received = bytearray()
        self.used_tls = False
        self.errors: list[BaseException] = []
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(30)
        self.port: int = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> FakeMySQL:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._listener.close()
        self._thread.join(timeout=30)

    def _serve(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        self._sockets.append(conn)
        try:
            conn.settimeout(30)
            self._session(conn)
        except (OSError, EOFError) as exc:  # the client hung up: expected when it refuses
            self.errors.append(exc)
        finally:
            for sock in reversed(self._sockets):  # the TLS wrapper, then the plain socket
                sock.close()

    def _session(self, sock: socket.socket) -> None:
        flags = CAPABILITIES | (CLIENT.SSL if self.tls else 0)
        handshake = (
            b"\x0a5.7.99-fake\x00"
            + struct.pack("<I", 7)
            + SALT[:8]
            + b"\x00"
            + struct.pack("<H", flags & 0xFFFF)
            + bytes([45])  # utf8mb4_general_ci
            + struct.pack("<H", 2)
            + struct.pack("<H", flags >> 16)
            + bytes([len(SALT) + 1])
            + b"\x00" * 10
            + SALT[8:]
            + b"\x00"
            + self.plugin
            + b"\x00"
        )
        conn: socket.socket = sock
        _send(conn, 0, handshake)
        seq, response = _recv(conn)
        self.received += response
        client_flags = struct.unpack("<I", response[:4])[0]
        if self.tls and client_flags & CLIENT.SSL and len(response) == 32:
            conn = self.tls.wrap_socket(conn, server_side=True)
            self._sockets.append(conn)
            self.used_tls = True
            seq, response = _recv(conn)
            self.received += response
        # dialog: flag 4 (a password question, echo off) and the prompt PyMySQL answers.
        data = b"\x04Password: " if self.switch_to == b"dialog" else b""
        _send(conn, seq + 1, b"\xfe" + self.switch_to + b"\x00" + data)
        seq, answer = _recv(conn)
        self.received += answer
        _send(conn, seq + 1, OK)
        while True:  # SET NAMES, autocommit …: OK to everything until COM_QUIT or hang-up
            _, command = _recv(conn)
            self.received += command
            if command[:1] == b"\x01":
                return
            _send(conn, 1, OK)


def _send(sock: socket.socket, seq: int, payload: bytes) -> None:
    sock.sendall(struct.pack("<I", len(payload))[:3] + bytes([seq % 256]) + payload)


def _recv(sock: socket.socket) -> tuple[int, bytes]:
    header = _exactly(sock, 4)
    length = int.from_bytes(header[:3], "little")
    return header[3], _exactly(sock, length)


def _exactly(sock: socket.socket, count: int) -> bytes:
    data = bytearray()
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise EOFError("client closed the connection")
        data += chunk
    return bytes(data)
