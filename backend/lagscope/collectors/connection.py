"""Opening a PyMySQL connection to a server: TLS as the instance asks, no password in clear.

Every connection Lagscope opens — polls, ``POST /instances/test``, ``lagscope probe``, the
heartbeat writer and the lab — goes through :func:`open_connection`, so these rules hold everywhere:

* **TLS per instance** (``ConnectionSpec.tls``):

  ``preferred`` (default)
      TLS when the server offers it, without checking its certificate; clear text when it
      offers none. This is PyMySQL's own behaviour when given no ``ssl`` argument (it sets
      ``CLIENT.SSL`` only if the server's handshake advertises it), the same as the ``mysql``
      client's ``--ssl-mode=PREFERRED``. It protects against a passive listener only.
  ``required``
      TLS or no connection; the certificate is not checked (PyMySQL refuses with CR 2026 when
      the server offers no TLS, it never falls back).
  ``verify_ca``
      TLS, and the certificate chain must lead to the CA bundle (``tls_ca_path``, or the
      system's CAs when none is given). The host name is not compared.
  ``verify_identity``
      ``verify_ca`` plus the certificate must name the host we connect to (SAN DNS or IP).

* **No clear-text password without a verified server.** ``mysql_clear_password`` and the
  ``dialog`` plugin (PAM) make PyMySQL send the password as is — without TLS too. A server, or
  anyone between us and it, could ask for it that way and read it. :class:`_Connection`
  refuses both plugins (:class:`~lagscope.errors.ClearTextAuthRefused`, nothing is sent)
  unless the session is TLS whose certificate was verified in a way that pins the server
  (:func:`clear_text_allowed`: ``verify_identity``, or ``verify_ca`` with the operator's own
  CA bundle; ``verify_ca`` against the system CAs accepts any publicly trusted certificate,
  which a man in the middle can buy for his own domain).

* **No password to a key or a TLS session the server vouches for itself.** ``sha256_password``
  and ``caching_sha2_password`` *full* authentication (the server's cache does not hold the
  account: the first login after a restart or ``FLUSH PRIVILEGES``) need the password itself.
  PyMySQL sends it as is inside any TLS session, verified or not, and without TLS encrypts it
  with an RSA public key it asks *the server* for (a ``0x01`` / ``0x02`` request): a rogue
  server at the instance's address sends its own key and reads the password. As the ``mysql``
  client does by default for caching_sha2 (``--get-server-public-key`` off), and for both
  plugins here, :class:`~lagscope.collectors.sha2_auth.Sha2Auth` never uses a key the server sends.
  It answers only (a) inside TLS that passes the clear-text rule above — an unverified TLS
  session is a session with whoever answered, so it is treated like no TLS at all, or (b)
  without TLS, with the public key the operator pinned (``server_public_key_path``; the server
  reads an RSA blob as the password itself inside TLS, so a pin serves only servers that
  offer no TLS, under ``tls=preferred``). Otherwise :class:`~lagscope.errors.Sha2AuthRefused`
  names the plugin and the fix; nothing is sent. The caching_sha2 *fast* path (a scramble,
  never the password) is untouched.

This module, :mod:`~lagscope.collectors.sha2_auth` and :mod:`lagscope.collectors.executor` are
the collectors' only PyMySQL imports; errors here are raised as PyMySQL raises them (the lab's
callers expect that), except the refusals and an unreadable CA bundle, which are Lagscope
errors already. The executor translates.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

import pymysql
import pymysql.connections
import pymysql.err
from pymysql.constants import CLIENT
from pymysql.constants.CR import CR_SERVER_LOST

from lagscope.collectors.answer_limits import AnswerBudget, AnswerLimits
from lagscope.collectors.sha2_auth import Sha2Auth
from lagscope.collectors.targets import AllowList
from lagscope.errors import ClearTextAuthRefused, InvalidInput, TlsFailed, UnexpectedAnswer

TlsMode = Literal["preferred", "required", "verify_ca", "verify_identity"]
TLS_MODES: Final[tuple[str, ...]] = get_args(TlsMode)
VERIFYING_MODES: Final = frozenset({"verify_ca", "verify_identity"})

# The client-side plugins that put the password itself on the wire (PyMySQL 1.2
# ``Connection._process_auth``): mysql_clear_password (MySQL's LDAP/PAM, MariaDB's PAM with
# pam_use_cleartext_plugin) and dialog (MariaDB's PAM, answering the "Password: " prompt).
CLEAR_TEXT_PLUGINS: Final = frozenset({"mysql_clear_password", "dialog"})
CLEAR_TEXT_REFUSAL: Final = (
    "server asked for clear-text password auth ({plugin}); refused without a verified TLS "
    "connection (allowed only with tls verify_identity, or verify_ca with a tls_ca_path)"
)
# A socket timeout is lowered to the answer's time left only once that is under 90 % of it:
# a poll answered in a millisecond never pays for settimeout (two per packet, as PyMySQL puts
# its own back), and a trickle overshoots the deadline by at most a tenth of the timeout.
_LOWER_TIMEOUT_BELOW: Final = 0.9
_READ_BUFFER: Final = 65536
# The plugins whose password step needs either TLS or the server's RSA public key.
SHA2_PLUGINS: Final = frozenset({"sha256_password", "caching_sha2_password"})


@dataclass(frozen=True, slots=True)
class ConnectionSpec:
    """Where a server is, how to log in, and how to protect the session.

    ``repr`` never shows the password. Frozen and compared by value: a poller whose stored
    instance changed (another address, password or TLS setting) sees a different spec and
    reconnects.
    """

    host: str
    port: int = 3306
    user: str = "lagscope"
    password: str = field(default="", repr=False)
    unix_socket: str | None = None
    # Connect 2 s / read 2 s: a dead or partitioned server must fail one instance's poll quickly
    # and never stall the cluster's 1 s cadence for long; a locked replica can hold SHOW SLAVE
    # STATUS for seconds, and we would rather report that than wait. None: no read timeout
    # (the lab's load generators, which block on a busy server on purpose).
    connect_timeout_s: float = 2.0
    read_timeout_s: float | None = 2.0
    tls: TlsMode = "preferred"
    # PEM bundle for verify_ca / verify_identity; None means the system's CAs.
    tls_ca_path: str | None = None
    # The server's RSA public key (PEM), pinned by the operator: the only key a
    # sha256_password / caching_sha2_password password is encrypted with (no TLS only).
    server_public_key_path: str | None = None
    # LAGSCOPE_ALLOWED_TARGETS, checked by the executor at every (re)connection (targets.py).
    allowed: AllowList | None = None

    @property
    def server(self) -> str:
        return f"{self.host}:{self.port}"


def clear_text_allowed(spec: ConnectionSpec) -> bool:
    """Whether a verified session to ``spec`` may answer a clear-text auth request: only when
    verification pins the server — its name (verify_identity) or a private CA (verify_ca with
    a bundle). The session must still turn out verified (checked on the socket)."""
    return spec.tls == "verify_identity" or (
        spec.tls == "verify_ca" and spec.tls_ca_path is not None
    )


class _Connection(pymysql.connections.Connection):
    """PyMySQL's connection with the clear-text refusal, a shared "preferred" context and,
    given ``limits``, bounded reads (collectors/answer_limits.py)."""

    def __init__(
        self,
        *args: Any,
        clear_text_allowed: bool = False,
        pinned_key_path: str | None = None,
        limits: AnswerLimits | None = None,
        **kwargs: Any,
    ) -> None:
        # Set before PyMySQL's __init__, which connects (and so authenticates) right away.
        self._clear_text_allowed = clear_text_allowed
        self._pinned_key_path = pinned_key_path
        self._limits = limits
        self._budget: AnswerBudget | None = None
        self._reader: io.BufferedReader | None = None
        super().__init__(*args, **kwargs)

    def connect(self, sock: Any = None) -> None:
        # The greeting and the login are an answer too: a foreign port that announces a huge
        # packet or trickles its greeting is cut off like a poll.
        state: Any = self  # PyMySQL's timeouts are untyped
        read_timeout: float | None = state._read_timeout
        deadline = (state.connect_timeout or 0.0) + read_timeout if read_timeout else None
        with self.answer_budget(deadline):
            super().connect(sock)

    @contextlib.contextmanager
    def answer_budget(self, deadline_s: float | None) -> Iterator[None]:
        """Bound what is read inside the block by ``limits`` and ``deadline_s`` (no bound
        when the connection was opened without limits)."""
        if self._limits is None:
            yield
            return
        self._budget = AnswerBudget(f"{self.host}:{self.port}", self._limits, deadline_s)
        try:
            yield
        finally:
            self._budget = None

    def buffered_packet(self) -> bytes | None:
        """The next packet's payload when the whole packet already sits in the read buffer
        (most of a poll's answer arrives in one or two reads), taken with one buffer read
        instead of two and the same checks as :meth:`_read_bytes`; None when it is not whole
        there, is numbered out of order or spans packets: the caller then reads it packet
        header first, as PyMySQL does, and that read says what is wrong."""
        reader = self._reader
        state: Any = self
        budget = self._budget
        try:
            # At most one read of the socket, and only when nothing is buffered.
            buffered = reader.peek(4)  # type: ignore[union-attr]
        except OSError as exc:
            state._force_close()
            raise self._lost(exc, budget) from exc
        except BaseException:
            state._force_close()
            raise
        if len(buffered) < 4:
            return None
        length = buffered[0] | buffered[1] << 8 | buffered[2] << 16
        end = 4 + length
        if len(buffered) < end or length == 0xFFFFFF or buffered[3] != state._next_seq_id:
            return None
        if budget is not None:
            try:
                budget.take(4)
                budget.take(length)
            except UnexpectedAnswer:
                state._force_close()
                raise
        state._next_seq_id = (buffered[3] + 1) % 256
        return reader.read(end)[4:]  # type: ignore[union-attr]

    def _lost(self, exc: OSError, budget: AnswerBudget | None) -> Exception:
        # The socket timed out because the answer's time was up (_DeadlineReader).
        if budget is not None and (left := budget.seconds_left()) is not None and left <= 0:
            return budget.late()
        return pymysql.err.OperationalError(
            CR_SERVER_LOST, f"Lost connection to MySQL server during query ({exc})"
        )

    def _read_bytes(self, num_bytes: int) -> bytes:
        # PyMySQL reads every packet as a 4-byte header, then the body by the header's length:
        # the one place a length can be refused before its bytes are allocated.
        # PyMySQL's own read is inlined (what it raises, and that it closes the connection
        # first): this runs twice per packet, a hundred packets a poll.
        budget = self._budget
        state: Any = self
        if budget is not None:
            try:
                budget.take(num_bytes)
            except UnexpectedAnswer:
                state._force_close()
                raise
        try:
            data: bytes = self._reader.read(num_bytes)  # type: ignore[union-attr]
        except OSError as exc:
            state._force_close()
            raise self._lost(exc, budget) from exc
        except BaseException:
            state._force_close()
            raise
        if len(data) < num_bytes:
            state._force_close()
            raise pymysql.err.OperationalError(
                CR_SERVER_LOST, "Lost connection to MySQL server during query"
            )
        return data

    @property
    def _rfile(self) -> io.BufferedReader | None:
        return self._reader

    @_rfile.setter
    def _rfile(self, reader: io.BufferedReader | None) -> None:
        # PyMySQL sets this to sock.makefile("rb") at connect and again after the TLS
        # upgrade: each recv under it then sees the answer's time left (a trickle's every
        # recv returns before the socket's own timeout, which restarts each time).
        if reader is not None and getattr(self, "_limits", None) is not None:
            # detach: the given reader would close the socket's stream when collected.
            # 64 KiB: a poll's whole answer (~10 KB) in one read of the socket, not two.
            reader = io.BufferedReader(_DeadlineReader(reader.detach(), self), _READ_BUFFER)
        self._reader = reader

    def answer_time_left(self) -> float | None:
        budget = self._budget
        return None if budget is None else budget.seconds_left()

    def answer_late(self) -> UnexpectedAnswer:
        assert self._budget is not None
        return self._budget.late()

    def _create_ssl_ctx(self, sslp: Any) -> ssl.SSLContext:
        # PyMySQL ≥ 1.2 builds a new SSLContext (loading the system CA bundle, milliseconds of
        # CPU) for every connection in its default preferred mode. Hundreds of monitored
        # servers reconnecting after an outage would pay that each time: share one.
        if sslp:
            return super()._create_ssl_ctx(sslp)  # type: ignore[misc,no-any-return]
        return _unverified_context()

    def _process_auth(self, plugin_name: Any, auth_packet: Any, handler: Any = None) -> Any:
        # Called for an AuthSwitchRequest, before PyMySQL answers it: the one place every
        # plugin's answer is written (the first handshake never carries a clear-text password:
        # PyMySQL sends an empty answer for a plugin it does not scramble; sha256_password is
        # the exception, see _request_authentication).
        if isinstance(plugin_name, bytes):
            name = plugin_name.decode("ascii", "replace")
        else:
            name = str(plugin_name)
        if name in CLEAR_TEXT_PLUGINS and not self._password_may_go_in_clear():
            raise ClearTextAuthRefused(
                f"{self.host}:{self.port}", CLEAR_TEXT_REFUSAL.format(plugin=name)
            )
        return super()._process_auth(plugin_name, auth_packet, handler)  # type: ignore[misc]

    def _request_authentication(self) -> None:
        # A handshake announcing sha256_password makes PyMySQL put the password itself in its
        # very first answer whenever TLS is up, verified or not. Unless the clear-text rule
        # allows that, answer as caching_sha2_password instead: a scramble, no password (what
        # a server announcing that plugin gets anyway). A server whose account really uses
        # sha256_password switches to it, and Sha2Auth answers or refuses the switch.
        state: Any = self  # PyMySQL's handshake state is untyped
        tls_coming = bool(self.ssl and state.server_capabilities & CLIENT.SSL)
        announced = state._auth_plugin_name == "sha256_password"
        if announced and self.password and tls_coming and not self._clear_text_allowed:
            state._auth_plugin_name = "caching_sha2_password"
        super()._request_authentication()  # type: ignore[misc]

    def _get_auth_plugin_handler(self, plugin_name: Any) -> Any:
        # PyMySQL's own hook for plugins: a handler it asks both after an AuthSwitchRequest
        # (_process_auth) and for the extra auth data following the first handshake.
        name = plugin_name.decode("ascii", "replace") if isinstance(plugin_name, bytes) else ""
        if name in SHA2_PLUGINS:
            return Sha2Auth(self, name)
        return super()._get_auth_plugin_handler(plugin_name)  # type: ignore[misc]

    def _password_may_go_in_clear(self) -> bool:
        return self._clear_text_allowed and self._verified_tls()

    def _verified_tls(self) -> bool:
        """TLS is up and the server's certificate chain was checked (PyMySQL calls a unix
        socket "secure" too; it is not exempt: we cannot verify who listens there)."""
        sock = getattr(self, "_sock", None)
        return isinstance(sock, ssl.SSLSocket) and sock.context.verify_mode == ssl.CERT_REQUIRED


class _DeadlineReader(io.RawIOBase):
    """The socket's reads, each waiting only for the answer's time left: checked per ``recv``
    (a few per poll, buffered), not per packet."""

    def __init__(self, raw: Any, conn: _Connection) -> None:
        super().__init__()
        self._raw = raw
        self._conn = conn

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        left = self._conn.answer_time_left()
        if left is not None:
            if left <= 0:
                raise self._conn.answer_late()
            state: Any = self._conn
            current = state._current_timeout
            if current is None or left < current * _LOWER_TIMEOUT_BELOW:
                # PyMySQL restores its read timeout at the next packet (_read_packet).
                state._sock.settimeout(left)
                state._current_timeout = left
        return self._raw.readinto(buffer)  # type: ignore[no-any-return]

    def close(self) -> None:
        self._raw.close()
        super().close()


def check_tls_setting(tls: str, ca_path: str | None, ca_dir: str | None = None) -> None:
    """Refuse a setting that would not do what it seems to (InvalidInput names the fix).

    ``ca_dir`` (``LAGSCOPE_TLS_CA_DIR``, given by the API): the CA path must lie inside it once
    symbolic links are resolved. The workers read the file as a CA bundle, so without such a
    bound an editor could name any file on their machines and learn from the stored error
    whether it exists and what it holds. The CLI, run by the operator, passes none.
    """
    if tls not in TLS_MODES:
        raise InvalidInput(f"tls must be one of {', '.join(TLS_MODES)}")
    if ca_path and tls not in VERIFYING_MODES:
        # A CA bundle with preferred/required would suggest a check that never happens.
        raise InvalidInput(
            f"tls_ca_path is used only by verify_ca and verify_identity, not by {tls}: choose "
            "one of those, or drop the CA path"
        )
    if ca_path is not None and not os.path.isabs(ca_path):
        # Relative to what? The API and the workers run in different directories.
        raise InvalidInput("tls_ca_path must be an absolute path on the workers' machines")
    if ca_path is not None:
        _check_inside("tls_ca_path", "the CA bundle", ca_path, ca_dir)


def check_public_key_setting(tls: str, key_path: str | None, ca_dir: str | None = None) -> None:
    """Refuse a pinned ``server_public_key_path`` that would not be used, or lies outside
    ``ca_dir`` (``LAGSCOPE_TLS_CA_DIR``, read like a CA bundle: the same bound, same reason).

    Only ``tls=preferred`` can have a session without TLS, the one place a pinned key is
    used (inside TLS a MySQL server reads the password itself, not an RSA blob)."""
    if key_path is None:
        return
    if tls != "preferred":
        raise InvalidInput(
            f"server_public_key_path is used only without TLS (tls preferred, a server that "
            f"offers none), never with tls {tls}: drop it (a verified TLS session carries "
            "the password)"
        )
    if not os.path.isabs(key_path):
        raise InvalidInput(
            "server_public_key_path must be an absolute path on the workers' machines"
        )
    _check_inside("server_public_key_path", "the server's public key", key_path, ca_dir)


def _check_inside(field: str, what: str, path: str, ca_dir: str | None) -> None:
    if not ca_dir:
        return
    inside = os.path.realpath(ca_dir)
    if os.path.commonpath([os.path.realpath(path), inside]) != inside:
        raise InvalidInput(
            f"{field} must be inside {ca_dir} (LAGSCOPE_TLS_CA_DIR): put {what} there on the "
            "workers' machines"
        )


def open_connection(
    spec: ConnectionSpec, limits: AnswerLimits | None = None, **options: Any
) -> pymysql.connections.Connection[Any]:
    """A PyMySQL connection for ``spec``; ``options`` go to PyMySQL as they are (autocommit,
    client_flag, charset, cursorclass, database, defer_connect …). With ``limits``, the
    handshake is bounded, and :func:`answer_budget` bounds what a block reads."""
    return _Connection(
        host=spec.host,
        port=spec.port,
        user=spec.user,
        password=spec.password,
        unix_socket=spec.unix_socket,
        connect_timeout=spec.connect_timeout_s,
        read_timeout=spec.read_timeout_s,
        write_timeout=spec.read_timeout_s,
        ssl=tls_context(spec),
        clear_text_allowed=clear_text_allowed(spec),
        pinned_key_path=spec.server_public_key_path,
        limits=limits,
        **options,
    )


def answer_budget(
    conn: pymysql.connections.Connection[Any], deadline_s: float | None
) -> contextlib.AbstractContextManager[None]:
    """Bound the answer read inside the block (a connection from :func:`open_connection`
    with ``limits``; others are read without bounds)."""
    if isinstance(conn, _Connection):
        return conn.answer_budget(deadline_s)
    return contextlib.nullcontext()


def tls_context(spec: ConnectionSpec) -> ssl.SSLContext | None:
    """The ``ssl`` argument for PyMySQL: None for preferred (PyMySQL's opportunistic mode), a
    context for the others (any ``ssl`` argument makes PyMySQL require TLS)."""
    if spec.tls == "preferred":
        return None
    if spec.tls == "required":
        return _unverified_context()
    if spec.tls not in VERIFYING_MODES:
        raise TlsFailed(spec.server, f"unknown tls mode {spec.tls!r}")
    stamp = None
    if spec.tls_ca_path is not None:
        try:
            found = os.stat(spec.tls_ca_path)
        except OSError:
            raise TlsFailed(spec.server, _unloadable(spec.tls_ca_path)) from None
        # Keyed on the file's mtime and size: a renewed bundle is read again, an unchanged one
        # is not parsed on every reconnect.
        stamp = (found.st_mtime_ns, found.st_size)
    try:
        return _verifying_context(spec.tls_ca_path, stamp, spec.tls == "verify_identity")
    except (OSError, ssl.SSLError, ValueError):
        # Without the reason on purpose: an instance's CA path is an editor's input, and the
        # OS's reason would tell them about files on the worker.
        raise TlsFailed(spec.server, _unloadable(spec.tls_ca_path)) from None


def _unloadable(path: str | None) -> str:
    return f"cannot load the CA bundle {path} (missing, unreadable, or not PEM certificates)"


@functools.cache
def _unverified_context() -> ssl.SSLContext:
    # What PyMySQL builds for preferred mode: TLS, no certificate check.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


@functools.lru_cache(maxsize=64)
def _verifying_context(
    ca_path: str | None, stamp: tuple[int, int] | None, check_hostname: bool
) -> ssl.SSLContext:
    del stamp  # part of the cache key only
    context = ssl.create_default_context(cafile=ca_path)
    # Python 3.13 turns on VERIFY_X509_STRICT, which the certificates MySQL generates for
    # itself fail (no Authority Key Identifier); PyMySQL drops it for the same reason.
    context.verify_flags &= ~ssl.VERIFY_X509_STRICT
    context.check_hostname = check_hostname
    context.verify_mode = ssl.CERT_REQUIRED
    return context
