"""sha256_password and caching_sha2_password, answered without trusting the server.

The rule (connection.py's docstring): the password itself goes only inside TLS that passes the
clear-text rule, or RSA-encrypted with the public key the operator pinned; never under a key
the server sends. :class:`Sha2Auth` is the handler the connection (connection.py's
``_Connection``) gives PyMySQL for both plugins through PyMySQL's own hook,
``_get_auth_plugin_handler``, which PyMySQL asks both after an AuthSwitchRequest and for the
extra auth data following the handshake. With connection.py and the executor, the third
module that imports PyMySQL. The connection supplies ``_password_may_go_in_clear()`` (TLS up
and verified as the clear-text rule wants) and ``_pinned_key_path``.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import pymysql.err
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from pymysql import _auth

from lagscope.errors import Sha2AuthRefused

_VERIFY_FIX = "use tls verify_identity, or verify_ca with a tls_ca_path"


class Sha2Auth:
    """sha256_password and caching_sha2_password, answered without trusting the server.

    PyMySQL's ``_auth.sha256_password_auth`` / ``caching_sha2_password_auth`` do what the
    protocol allows a client to do; this handler does what Lagscope allows (module docstring):
    it sends the password only inside verified TLS, or RSA-encrypted with the pinned key, and
    ignores any key the server sends. It reuses PyMySQL's scramble and RSA helpers, and hands
    the exchanges that carry no password (an empty one) to PyMySQL as they are.
    """

    def __init__(self, conn: Any, plugin: str) -> None:
        # Any: PyMySQL's auth state (salt, _secure, _read_packet …) is untyped.
        self.conn: Any = conn
        self.plugin = plugin

    def authenticate(self, pkt: Any) -> Any:
        conn = self.conn
        if not conn.password:  # nothing secret to protect
            if self.plugin == "sha256_password":
                return _auth.sha256_password_auth(conn, pkt)  # type: ignore[no-untyped-call]
            return _auth.caching_sha2_password_auth(conn, pkt)
        if pkt.is_auth_switch_request():
            salt = pkt.read_all()
            conn.salt = salt[:-1] if salt.endswith(b"\0") else salt
            if self.plugin == "sha256_password":
                return self._send_password()
            # caching_sha2's fast path: a scramble of the password with the salt.
            pkt = self._roundtrip(_auth.scramble_caching_sha2(conn.password, conn.salt))
        elif self.plugin == "sha256_password":
            # Extra data after the handshake's key request (b"\1" without TLS): the server's
            # own key. Never used.
            return self._send_password()
        if not pkt.is_extra_auth_data():
            raise pymysql.err.OperationalError(
                f"caching sha2: unknown packet for fast auth: {pkt.get_all_data()[:1]!r}"
            )
        pkt.advance(1)
        result = pkt.read_uint8()
        if result == 3:  # fast auth succeeded: the server's OK follows
            pkt = conn._read_packet()
            pkt.check_error()
            return pkt
        if result != 4:  # 4: full authentication, the password itself is needed
            raise pymysql.err.OperationalError(f"caching sha2: unknown fast auth result {result}")
        return self._send_password()

    def _send_password(self) -> Any:
        conn = self.conn
        if conn._secure:
            if conn._password_may_go_in_clear():
                return self._roundtrip(conn.password + b"\0")
            raise self._refusal(
                "over TLS it would be sent as it is, and this session's certificate was not "
                "verified against the server's name or a CA of the operator's; "
                + _VERIFY_FIX
                + (
                    " (the pinned server_public_key_path serves only a server without TLS)"
                    if conn._pinned_key_path
                    else ""
                )
            )
        if conn._pinned_key_path is None:
            raise self._refusal(
                "without TLS it would be encrypted with a public key the server itself sends; "
                "pin the server's RSA public key (server_public_key_path), or " + _VERIFY_FIX
            )
        key = _pinned_key(conn._pinned_key_path, _stamp(conn._pinned_key_path))
        if key is None:
            raise self._refusal(
                f"cannot load the pinned server_public_key_path {conn._pinned_key_path} "
                "(missing, unreadable, or not a PEM RSA public key)"
            )
        return self._roundtrip(_auth.sha2_rsa_encrypt(conn.password, conn.salt, key))

    def _refusal(self, why: str) -> Sha2AuthRefused:
        what = self.plugin + (" full authentication" if self.plugin != "sha256_password" else "")
        return Sha2AuthRefused(
            f"{self.conn.host}:{self.conn.port}",
            f"server asked for the password by {what}; not sent: {why}",
        )

    def _roundtrip(self, data: bytes) -> Any:
        self.conn.write_packet(data)
        pkt: Any = self.conn._read_packet()
        pkt.check_error()
        return pkt


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_mtime_ns, found.st_size)


@functools.lru_cache(maxsize=64)
def _pinned_key(path: str, stamp: tuple[int, int] | None) -> bytes | None:
    """The PEM at ``path`` if it is an RSA public key (keyed on mtime and size, like the CA
    bundles: a replaced key is read again). None says nothing about why: the path is an
    editor's input, the reason would tell them about files on the worker."""
    if stamp is None:
        return None
    try:
        with open(path, "rb") as pem:
            data = pem.read(64 * 1024)
        key = load_pem_public_key(data)
    except (OSError, ValueError, TypeError):
        return None
    return data if isinstance(key, RSAPublicKey) else None
