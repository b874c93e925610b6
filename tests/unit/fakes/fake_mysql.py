"""A fake MySQL server on loopback that asks the client for its password.

It speaks just enough of the protocol for PyMySQL: a Handshake v10 (announcing ``plugin``), an
optional TLS upgrade when the client sends an SSLRequest (``tls`` = a server-side context), an
AuthSwitchRequest to ``switch_to`` (``mysql_clear_password``, ``dialog`` with a "Password: "
prompt, ``sha256_password`` or ``caching_sha2_password``; None: no switch, the announced plugin
goes on), then OK to every command until the client leaves. Every byte the client sends —
after TLS decryption, so the check is as strict as it can be — is kept in ``received``.

The SHA-2 plugins behave as a rogue MySQL 8 would: ``caching_sha2_password`` answers the
scramble with "full authentication needed" (bytes ``01 04``; ``fast_ok`` answers ``01 03``
instead), and a public key request (``01`` for sha256_password, ``02`` for caching_sha2)
is answered with ``rsa_key``'s public key, as the server's own. ``auth_answers`` holds each
authentication answer of the client in order (the handshake response's first), and
``auth_salt`` the salt the password exchange used, so a test can decrypt what it received.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import struct
import threading
from types import TracebackType

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
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
SWITCH_SALT = b"ABCDEFGHIJKLMNOPQRST"  # a new salt with an AuthSwitchRequest, as MySQL sends
SHA2 = ("sha256_password", "caching_sha2_password")
# OK packet: header 0, 0 rows, insert id 0, status SERVER_STATUS_AUTOCOMMIT, 0 warnings.
OK = b"\x00\x00\x00\x02\x00\x00\x00"


def close_listener(listener: socket.socket) -> None:
    """Close a listening socket and wake the thread blocked in its ``accept`` (closing alone does
    not on Linux: a test whose client never connects would wait out the accept timeout)."""
    with contextlib.suppress(OSError):
        listener.shutdown(socket.SHUT_RDWR)
    listener.close()


class FakeMySQL:
    def __init__(
        self,
        plugin: str = "mysql_native_password",
        switch_to: str | None = "mysql_clear_password",
        tls: ssl.SSLContext | None = None,
        rsa_key: RSAPrivateKey | None = None,
        fast_ok: bool = False,
    ) -> None:
        self.plugin = plugin.encode()
        self.switch_to = switch_to.encode() if switch_to is not None else None
        self.tls = tls
        self.rsa_key = rsa_key
        self.fast_ok = fast_ok
        self.auth_answers: list[bytes] = []
        self.auth_salt = SALT
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
        close_listener(self._listener)
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
        answer, client_plugin = _auth_response(response)
        self.auth_answers.append(answer)
        plugin = self.plugin.decode()
        switch_to = self.switch_to
        if switch_to is None and client_plugin != self.plugin:
            switch_to = self.plugin  # as MySQL does when the client answered another plugin
        if switch_to is not None:
            plugin = switch_to.decode()
            # dialog: flag 4 (a password question, echo off) and the prompt PyMySQL answers.
            data = b"\x04Password: " if plugin == "dialog" else b""
            if plugin in SHA2:
                data, self.auth_salt = SWITCH_SALT + b"\x00", SWITCH_SALT
            _send(conn, seq + 1, b"\xfe" + switch_to + b"\x00" + data)
            seq = self._answer(conn)
        if plugin in SHA2:
            seq = self._sha2(conn, seq, plugin)
        _send(conn, seq + 1, OK)
        while True:  # SET NAMES, autocommit …: OK to everything until COM_QUIT or hang-up
            _, command = _recv(conn)
            self.received += command
            if command[:1] == b"\x01":
                return
            _send(conn, 1, OK)

    def _answer(self, conn: socket.socket) -> int:
        seq, answer = _recv(conn)
        self.received += answer
        self.auth_answers.append(answer)
        return seq

    def _sha2(self, conn: socket.socket, seq: int, plugin: str) -> int:
        """After the client's first answer: ask for full authentication (caching_sha2), hand
        out our public key when asked, and take whatever comes next."""
        if plugin == "caching_sha2_password":
            if self.fast_ok:
                _send(conn, seq + 1, b"\x01\x03")
                return seq + 1
            _send(conn, seq + 1, b"\x01\x04")
            seq = self._answer(conn)
        if self.auth_answers[-1] in (b"\x01", b"\x02") and self.rsa_key is not None:
            pem = self.rsa_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            _send(conn, seq + 1, b"\x01" + pem)
            seq = self._answer(conn)
        return seq


def _auth_response(response: bytes) -> tuple[bytes, bytes]:
    """The auth data and plugin name of a HandshakeResponse41 (PyMySQL: a 1-byte length, no
    LENENC flag; no database)."""
    if len(response) <= 32:
        return b"", b""
    user_end = response.index(b"\x00", 32)
    length = response[user_end + 1]
    rest = response[user_end + 2 + length :]
    return response[user_end + 2 : user_end + 2 + length], rest.split(b"\x00", 1)[0]


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
