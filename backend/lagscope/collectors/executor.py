"""One round trip for many statements, and the driver-error boundary.

A poll sends all its statements joined by ``;`` as one multi-statement query
(``CLIENT.MULTI_STATEMENTS``) and reads the result sets back in order: one network round trip
instead of one per statement (~0.56 ms vs ~1.16 ms for four trips: docs/architecture.md, "The
cost of a poll").

Connections are opened by :func:`lagscope.collectors.connection.open_connection` (TLS, and the
refusals to send a password in clear or to a key the server supplies); :func:`translate_error`
turns every driver exception into the :mod:`lagscope.errors` tree.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pymysql
import pymysql.constants.CLIENT
import pymysql.cursors
import pymysql.err

from lagscope.collectors import answer_reader
from lagscope.collectors.answer_limits import DEFAULT_LIMITS, AnswerLimits, odd_answer
from lagscope.collectors.connection import ConnectionSpec, answer_budget, open_connection
from lagscope.errors import (
    AccessDenied,
    CollectorError,
    LoginRefused,
    QueryFailed,
    ServerUnreachable,
    TlsFailed,
    UnexpectedAnswer,
)

__all__ = ["EMPTY", "BatchFailed", "ConnectionSpec", "Executor", "PyMySQLExecutor", "ResultSet"]

# Client-side error numbers (CR_*) and server ones (ER_*) that mean "cannot talk to it".
_UNREACHABLE_CODES = frozenset({2002, 2003, 2005, 2006, 2013, 2055, 1040, 1129, 1053})
# ER_ACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR, ER_SPECIFIC_ACCESS_DENIED_ERROR,
# ER_TABLEACCESS_DENIED_ERROR, ER_COLUMNACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR,
# ER_PROCACCESS_DENIED_ERROR.
_ACCESS_CODES = frozenset({1045, 1044, 1227, 1142, 1143, 1698, 1370})
# CR_SSL_CONNECTION_ERROR: PyMySQL's "SSL is required but the server doesn't support it".
_TLS_REQUIRED_CODE = 2026
# The subset refused at login, each counted by the server as a failed login (lock-out):
# ER_ACCESS_DENIED_ERROR (bad password), ER_ACCESS_DENIED_NO_PASSWORD_ERROR, and the ones that
# say retrying cannot help: ER_MUST_CHANGE_PASSWORD_LOGIN (expired), MySQL's
# ER_ACCOUNT_HAS_BEEN_LOCKED and ..._ACCOUNT_BLOCKED_BY_PASSWORD_LOCK (FAILED_LOGIN_ATTEMPTS),
# MariaDB's ER_USER_IS_BLOCKED (max_password_errors) and ER_ACCOUNT_HAS_BEEN_LOCKED.
# 1044/1227/1142… are statement privileges: the login worked, nothing is being locked.
_LOGIN_CODES = frozenset({1045, 1698, 1862, 3118, 3955, 4150, 4151})


@dataclass(frozen=True, slots=True)
class ResultSet:
    """One statement's answer: column names as the server sent them, and the rows."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    # A reading that sent several statements: each one's own answer, in order (a reading that
    # reads several tables one statement each joins them from these; cause_readings/).
    parts: tuple[ResultSet, ...] = field(default=(), compare=False, repr=False)

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by lower-cased column name (server column case varies)."""
        keys = [c.lower() for c in self.columns]
        return [dict(zip(keys, row, strict=True)) for row in self.rows]

    def each(self) -> tuple[ResultSet, ...]:
        """The answer of each statement behind this one (itself, for a single statement)."""
        return self.parts or (self,)


EMPTY = ResultSet((), ())


@dataclass(slots=True)
class BatchFailed(Exception):
    """Statement ``index`` of a batch failed; ``results`` holds the ones before it."""

    index: int
    error: CollectorError
    results: list[ResultSet] = field(default_factory=list)

    def __str__(self) -> str:
        return f"statement {self.index}: {self.error}"


class Executor(Protocol):
    """Runs a batch of statements in one round trip; tests substitute recorded answers."""

    server: str

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        """Return one :class:`ResultSet` per statement, or raise :class:`BatchFailed`.

        Connection-level failures raise a :class:`CollectorError` directly.
        """
        ...

    def close(self) -> None: ...


class PyMySQLExecutor:
    """An :class:`Executor` over one persistent PyMySQL connection, reconnecting lazily.

    Every answer is bounded (collectors/answer_limits.py): ``limits`` per packet and per
    batch, and the spec's read timeout for the whole batch. An answer that breaks a bound or
    the protocol (fewer or more result sets than statements, a packet the driver cannot
    parse) fails the batch with :class:`~lagscope.errors.UnexpectedAnswer` and closes the
    connection: what the server would send next is unknown."""

    def __init__(self, spec: ConnectionSpec, limits: AnswerLimits = DEFAULT_LIMITS) -> None:
        self.spec = spec
        self.server = spec.server
        self.limits = limits
        self._conn: pymysql.connections.Connection[Any] | None = None

    @property
    def connected(self) -> bool:
        return self._conn is not None

    def connect(self) -> None:
        if self._conn is not None:
            return
        try:
            checked = self.spec.allowed is not None and not self.spec.unix_socket
            conn = open_connection(
                self.spec,
                self.limits,
                client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS,
                autocommit=True,
                charset="utf8mb4",
                cursorclass=pymysql.cursors.Cursor,
                defer_connect=checked,
            )
            if checked:
                # PyMySQL's own path would resolve the name again; given the socket, it keeps
                # the name as the connection's host, for TLS name checks.
                conn.connect(self._checked_socket())
            self._conn = conn
        except Exception as exc:
            error = translate_error(self.server, exc)
            if isinstance(error, UnexpectedAnswer):
                # Before a login, an odd answer is a port that is not a MySQL server (or one
                # that misbehaves): it reads as unreachable, like any foreign port
                # (inventory/probe.py).
                error = ServerUnreachable(self.server, error.detail)
            raise error from exc

    def _checked_socket(self) -> socket.socket:
        """LAGSCOPE_ALLOWED_TARGETS: resolve once, check every address, connect to the checked
        one (never re-resolving: DNS rebinding). A unix socket path is this machine, not a
        network target, and is not checked."""
        assert self.spec.allowed is not None
        address = self.spec.allowed.address_for(self.spec.host, self.spec.port)
        sock = socket.create_connection((address, self.spec.port), self.spec.connect_timeout_s)
        # What PyMySQL sets on the sockets it makes itself.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        return sock

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        self.connect()
        assert self._conn is not None
        results: list[ResultSet] = []
        try:
            with answer_budget(self._conn, self.spec.read_timeout_s):
                for columns, rows in answer_reader.query(self._conn, ";\n".join(statements)):
                    if len(results) == len(statements):
                        raise UnexpectedAnswer(
                            self.server,
                            f"more result sets than the {len(statements)} statement(s) sent",
                        )
                    results.append(ResultSet(columns, rows))
                if len(results) < len(statements):
                    raise UnexpectedAnswer(
                        self.server,
                        f"{len(results)} result set(s) where {len(statements)} were due",
                    )
        except Exception as exc:
            error = translate_error(self.server, exc)
            if isinstance(error, ServerUnreachable):
                self.close()
                raise error from exc
            if isinstance(error, UnexpectedAnswer):
                self.close()
                index = max(0, min(len(results), len(statements) - 1))
                raise BatchFailed(index, error, results) from exc
            # The server stops a multi-statement batch at the first error and the connection
            # stays usable; drain nothing further.
            raise BatchFailed(len(results), error, results) from exc
        return results

    def write(self, sql: str, args: Sequence[object] = ()) -> int:
        """One parameterised write (the heartbeat writer's only use); rows affected."""
        self.connect()
        assert self._conn is not None
        try:
            with answer_budget(self._conn, self.spec.read_timeout_s), self._conn.cursor() as cursor:
                return int(cursor.execute(sql, tuple(args)))
        except Exception as exc:
            error = translate_error(self.server, exc)
            if isinstance(error, ServerUnreachable | UnexpectedAnswer):
                self.close()
            raise error from exc

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            # Closing a broken socket may fail; it is gone either way.
            with contextlib.suppress(Exception):
                conn.close()


def translate_error(server: str, exc: BaseException) -> CollectorError:
    """Map a driver or socket exception to the Lagscope error tree."""
    if isinstance(exc, CollectorError):
        return exc
    if tls := _tls_failure(server, exc):
        return tls
    code, message = _code_and_message(exc)
    if code in _LOGIN_CODES:
        return LoginRefused(server, message, code)
    if code in _ACCESS_CODES:
        return AccessDenied(server, message, code)
    if code in _UNREACHABLE_CODES or isinstance(
        exc, socket.timeout | TimeoutError | ConnectionError | OSError
    ):
        return ServerUnreachable(server, message, code)
    if isinstance(exc, pymysql.err.InterfaceError):
        return ServerUnreachable(server, message or "connection is closed", code)
    if not isinstance(exc, pymysql.err.MySQLError) or (
        isinstance(exc, pymysql.err.InternalError) and code is None
    ):
        # Not the server's error packet: the driver could not read what came (a value it
        # cannot decode, a packet shorter than its header says, a sequence number out of
        # order).
        return odd_answer(server, exc)
    return QueryFailed(server, message, code)


def _tls_failure(server: str, exc: BaseException) -> TlsFailed | None:
    """TLS failures during connect, told apart from an unreachable server: PyMySQL wraps the
    ``ssl`` error of the handshake into CR 2003 "Can't connect" (keeping the original)."""
    code, _ = _code_and_message(exc)
    if code == _TLS_REQUIRED_CODE:
        return TlsFailed(
            server, "the server offers no TLS and the instance's tls setting requires it", code
        )
    original = getattr(exc, "original_exception", None)
    if isinstance(original, ssl.SSLCertVerificationError):
        # verify_message is the short reason ("IP address mismatch, certificate is not valid
        # for '127.0.0.1'."); the ssl module sets it, so a hand-made error may lack it.
        reason = _clean(str(getattr(original, "verify_message", None) or original))
        return TlsFailed(server, f"the server's TLS certificate was not accepted: {reason}")
    if isinstance(original, ssl.SSLError):
        return TlsFailed(server, f"TLS handshake failed: {_clean(str(original))}")
    return None


def _code_and_message(exc: BaseException) -> tuple[int | None, str]:
    args: tuple[object, ...] = tuple(getattr(exc, "args", ()))
    if isinstance(exc, pymysql.err.MySQLError) and args and isinstance(args[0], int):
        message = _clean(str(args[1])) if len(args) >= 2 else type(exc).__name__
        return args[0] or None, message
    return None, _clean(str(exc)) or type(exc).__name__


def _clean(message: str) -> str:
    return " ".join(message.split())
