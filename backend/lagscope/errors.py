"""The one error tree of Lagscope.

Driver exceptions (``pymysql.*``) are translated at the collector boundary with
``raise … from exc``; nothing above the collectors ever catches a driver error::

    LagscopeError
    ├── NotFound                    a stored object does not exist
    ├── Conflict                    a write clashes with stored state
    ├── InvalidInput                a value from a user or a config is not acceptable
    ├── NotAuthenticated            no valid credentials were presented
    ├── PermissionDenied            the caller's role does not allow this
    ├── Throttled                   too many attempts: retry after some seconds
    │   └── Overloaded              the server is busy with this kind of work: retry later
    ├── CredentialsUnreadable       a stored credential decrypts with none of the secret keys
    ├── FencingLost                 a shard's lease changed owner: its old owner's write refused
    └── CollectorError              anything that went wrong talking to a monitored server
        ├── ServerUnreachable       connect refused / timed out, connection lost, read timeout
        ├── AccessDenied            wrong credentials, or a privilege the monitoring user lacks
        │   └── LoginRefused        the login itself was refused (wrong password, locked account)
        ├── ReplicationNotConfigured  a replica-only reading on a server with no channel
        ├── UnsupportedServer       not MySQL ≥ 5.7 or MariaDB ≥ 10.5
        ├── TlsFailed               TLS the instance requires could not be set up or verified
        ├── ClearTextAuthRefused    the server asked for the password in clear; not sent
        ├── Sha2AuthRefused         sha256/caching_sha2 wanted the password unprotected; not sent
        ├── TargetNotAllowed        outside LAGSCOPE_ALLOWED_TARGETS: never contacted
        ├── UnexpectedAnswer        an answer Lagscope cannot use (malformed, too large, too slow)
        └── QueryFailed             the server refused a statement for another reason

Every ``CollectorError`` names the server (``host:port``) so a message on its own says where.
"""

from __future__ import annotations


class LagscopeError(Exception):
    """Base of every error Lagscope raises on purpose."""


class NotFound(LagscopeError):
    """A stored object (cluster, instance, channel …) does not exist."""


class Conflict(LagscopeError):
    """A write clashes with stored state (duplicate name, stale version …)."""


class InvalidInput(LagscopeError):
    """A value given by a user or a config file is not acceptable."""


class NotAuthenticated(LagscopeError):
    """No valid token or password was presented."""


class Throttled(LagscopeError):
    """Too many failed attempts: try again after ``retry_after_s`` seconds."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Overloaded(Throttled):
    """Not the caller's fault: too much of this work is already queued (answered 503)."""


class PermissionDenied(LagscopeError):
    """The caller is known, but their role does not allow the operation."""


class CredentialsUnreadable(LagscopeError):
    """A stored credential cannot be decrypted with LAGSCOPE_SECRET_KEY nor any old key."""


class SeriesStoreUnavailable(LagscopeError):
    """The raw-series store (VictoriaMetrics) did not answer a read, or not with series: the
    API answers 503, as for any store of its own that is down."""


class FencingLost(LagscopeError):
    """A tick's write named a shard lease token that is no longer the shard's: another owner
    took the shard over, so this write is refused (engine/leases.py)."""

    def __init__(self, message: str, shard: int) -> None:
        super().__init__(message)
        self.shard = shard


class CollectorError(LagscopeError):
    """Talking to a monitored server failed.

    ``server`` is ``host:port``; ``code`` the server or client error number when there is one.
    """

    def __init__(self, server: str, detail: str, code: int | None = None) -> None:
        self.server = server
        self.detail = detail
        self.code = code
        super().__init__(f"{server}: {detail}" + (f" (error {code})" if code else ""))


class ServerUnreachable(CollectorError):
    """Connection refused, connect or read timeout, or the connection was lost."""


class AccessDenied(CollectorError):
    """Wrong user/password, or the monitoring user lacks a privilege a reading needs."""


class LoginRefused(AccessDenied):
    """The server refused the login (not a statement): bad password, locked or blocked account.

    Every such refusal counts towards the account's lock-out (MySQL ``FAILED_LOGIN_ATTEMPTS``,
    MariaDB ``max_password_errors``, the connection-control plugin's delays), so the pollers
    back off instead of retrying every tick.
    """


class ReplicationNotConfigured(CollectorError):
    """A replica-only reading was asked of a server that has no replication channel."""


class UnsupportedServer(CollectorError):
    """The server is neither MySQL ≥ 5.7 nor MariaDB ≥ 10.5, or says something we cannot parse."""


class TlsFailed(CollectorError):
    """The instance's ``tls`` setting asks for TLS the connection could not have: the server
    offers none, the certificate does not verify or name the host, or the CA bundle cannot be
    loaded. Never followed by a clear-text attempt."""


class ClearTextAuthRefused(CollectorError):
    """The server asked for a clear-text auth plugin (``mysql_clear_password``, ``dialog``)
    on a connection that is not TLS with a verified certificate; the password was not sent."""


class Sha2AuthRefused(CollectorError):
    """The server asked for the password by ``sha256_password`` or ``caching_sha2_password``
    full authentication, and it could go only to a key the server supplied or inside TLS whose
    certificate was not verified: not sent. The message names the plugin and the fix
    (verified TLS, or a pinned ``server_public_key_path`` for a server without TLS)."""


class UnexpectedAnswer(CollectorError):
    """The server answered, but not as a MySQL/MariaDB server answers Lagscope's statements:
    fewer or more result sets than statements, a row or value a parser cannot use, a packet or
    an answer over its byte cap, or bytes arriving too slowly to finish within the deadline.

    The connection is closed after it (the protocol's state is unknown); the next poll
    reconnects. ``reading`` names the reading whose answer it was, when known.
    """

    def __init__(self, server: str, what: str, reading: str | None = None) -> None:
        self.what = what
        self.reading = reading
        named = f"{reading}: " if reading else ""
        super().__init__(server, f"unexpected answer: {named}{what}")

    def of(self, reading: str) -> UnexpectedAnswer:
        """The same error, naming the reading it came from."""
        return UnexpectedAnswer(self.server, self.what, reading)


class QueryFailed(CollectorError):
    """The server refused a statement for a reason that is neither access nor reachability."""


class TargetNotAllowed(CollectorError):
    """The server's address is outside ``LAGSCOPE_ALLOWED_TARGETS``; it was not contacted.

    A collector error, so polling reports it on the instance like any other failure; the API
    answers it 422 (the request names a target the configuration refuses)."""
