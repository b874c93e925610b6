"""One round trip for many statements, and the driver-error boundary.

A poll sends all its statements joined by ``;`` as one multi-statement query
(``CLIENT.MULTI_STATEMENTS``) and reads the result sets back in order: one network round trip
instead of one per statement (DESIGN.md §11: ~0.56 ms vs ~1.16 ms for four trips).

This is the only module that imports ``pymysql``; :func:`translate_error` turns every driver
exception into the :mod:`lagscope.errors` tree.
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

from lagscope.errors import (
    AccessDenied,
    CollectorError,
    QueryFailed,
    ServerUnreachable,
)

# Client-side error numbers (CR_*) and server ones (ER_*) that mean "cannot talk to it".
_UNREACHABLE_CODES = frozenset({2002, 2003, 2005, 2006, 2013, 2055, 1040, 1129, 1053})
# ER_ACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR, ER_SPECIFIC_ACCESS_DENIED_ERROR,
# ER_TABLEACCESS_DENIED_ERROR, ER_COLUMNACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR,
# ER_PROCACCESS_DENIED_ERROR.
_ACCESS_CODES = frozenset({1045, 1044, 1227, 1142, 1143, 1698, 1370})


class _Connection(pymysql.connections.Connection):
    """PyMySQL ≥ 1.2 builds a new SSLContext (loading the system CA bundle, milliseconds of CPU)
    for every connection in its default "preferred TLS" mode. Hundreds of monitored servers
    reconnecting after an outage would pay that each time: share one context per process."""

    def _create_ssl_ctx(self, sslp: Any) -> ssl.SSLContext:
        if sslp:
            return super()._create_ssl_ctx(sslp)  # type: ignore[misc,no-any-return]
        return _preferred_tls_context()


_PREFERRED_TLS: ssl.SSLContext | None = None


def _preferred_tls_context() -> ssl.SSLContext:
    global _PREFERRED_TLS
    if _PREFERRED_TLS is None:
        # What PyMySQL builds for {} : TLS when the server offers it, no certificate check.
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        _PREFERRED_TLS = context
    return _PREFERRED_TLS


@dataclass(frozen=True, slots=True)
class ResultSet:
    """One statement's answer: column names as the server sent them, and the rows."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by lower-cased column name (server column case varies)."""
        keys = [c.lower() for c in self.columns]
        return [dict(zip(keys, row, strict=True)) for row in self.rows]


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


@dataclass(frozen=True, slots=True)
class ConnectionSpec:
    """Where a server is and how to log in. ``repr`` never shows the password."""

    host: str
    port: int = 3306
    user: str = "lagscope"
    password: str = field(default="", repr=False)
    unix_socket: str | None = None
    # Connect 2 s / read 2 s: a dead or partitioned server must fail one instance's poll quickly
    # and never stall the cluster's 1 s cadence for long; a locked replica can hold SHOW SLAVE
    # STATUS for seconds, and we would rather report that than wait.
    connect_timeout_s: float = 2.0
    read_timeout_s: float = 2.0

    @property
    def server(self) -> str:
        return f"{self.host}:{self.port}"


class PyMySQLExecutor:
    """An :class:`Executor` over one persistent PyMySQL connection, reconnecting lazily."""

    def __init__(self, spec: ConnectionSpec) -> None:
        self.spec = spec
        self.server = spec.server
        self._conn: pymysql.connections.Connection[Any] | None = None

    @property
    def connected(self) -> bool:
        return self._conn is not None

    def connect(self) -> None:
        if self._conn is not None:
            return
        try:
            self._conn = _Connection(
                host=self.spec.host,
                port=self.spec.port,
                user=self.spec.user,
                password=self.spec.password,
                unix_socket=self.spec.unix_socket,
                connect_timeout=self.spec.connect_timeout_s,
                read_timeout=self.spec.read_timeout_s,
                write_timeout=self.spec.read_timeout_s,
                client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS,
                autocommit=True,
                charset="utf8mb4",
                cursorclass=pymysql.cursors.Cursor,
            )
        except Exception as exc:
            raise translate_error(self.server, exc) from exc

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        self.connect()
        assert self._conn is not None
        results: list[ResultSet] = []
        cursor = self._conn.cursor()
        try:
            cursor.execute(";\n".join(statements))
            while True:
                results.append(_result(cursor))
                if len(results) == len(statements) or not cursor.nextset():
                    break
        except Exception as exc:
            error = translate_error(self.server, exc)
            if isinstance(error, ServerUnreachable):
                self.close()
                raise error from exc
            # The server stops a multi-statement batch at the first error and the connection
            # stays usable; drain nothing further.
            raise BatchFailed(len(results), error, results) from exc
        finally:
            cursor.close()
        return results

    def write(self, sql: str, args: Sequence[object] = ()) -> int:
        """One parameterised write (the heartbeat writer's only use); rows affected."""
        self.connect()
        assert self._conn is not None
        try:
            with self._conn.cursor() as cursor:
                return int(cursor.execute(sql, tuple(args)))
        except Exception as exc:
            error = translate_error(self.server, exc)
            if isinstance(error, ServerUnreachable):
                self.close()
            raise error from exc

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            # Closing a broken socket may fail; it is gone either way.
            with contextlib.suppress(Exception):
                conn.close()


def _result(cursor: pymysql.cursors.Cursor) -> ResultSet:
    description = cursor.description or ()
    rows = cursor.fetchall() if description else ()
    return ResultSet(tuple(d[0] for d in description), tuple(tuple(r) for r in rows))


def translate_error(server: str, exc: BaseException) -> CollectorError:
    """Map a driver or socket exception to the Lagscope error tree."""
    if isinstance(exc, CollectorError):
        return exc
    code, message = _code_and_message(exc)
    if code in _ACCESS_CODES:
        return AccessDenied(server, message, code)
    if code in _UNREACHABLE_CODES or isinstance(
        exc, socket.timeout | TimeoutError | ConnectionError | OSError
    ):
        return ServerUnreachable(server, message, code)
    if isinstance(exc, pymysql.err.InterfaceError):
        return ServerUnreachable(server, message or "connection is closed", code)
    return QueryFailed(server, message, code)


def _code_and_message(exc: BaseException) -> tuple[int | None, str]:
    args: tuple[object, ...] = tuple(getattr(exc, "args", ()))
    if isinstance(exc, pymysql.err.MySQLError) and args and isinstance(args[0], int):
        message = _clean(str(args[1])) if len(args) >= 2 else type(exc).__name__
        return args[0] or None, message
    return None, _clean(str(exc)) or type(exc).__name__


def _clean(message: str) -> str:
    return " ".join(message.split())
