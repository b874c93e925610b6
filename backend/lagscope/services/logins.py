"""Logging in to monitored servers: back off after a refused login, flag unreadable credentials.

Every refused login (:class:`~lagscope.errors.LoginRefused`: a wrong password, a locked,
blocked or expired account) counts towards the account's lock-out on the server: MySQL's
``FAILED_LOGIN_ATTEMPTS``/``PASSWORD_LOCK_TIME``, MariaDB's ``max_password_errors``, the
connection-control plugin's growing delays. Retrying every 1 s tick would lock a MySQL account
with ``FAILED_LOGIN_ATTEMPTS 3`` within three seconds of a password change. So after the n-th
refusal in a row the instance is tried again only after ``min(max_s, base_s × 2^(n-1))``.

The state lives on the instance row (``login_state``, ``login_failures``, ``next_attempt_at``)
and not in a worker's memory: any worker, or a restarted one, honours it. Editing the
instance's credentials clears it (:func:`reset`), so a fixed password is tried at the next tick.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from lagscope.models import Instance
from lagscope.services.reading import Reading

OK = "ok"
ACCESS_DENIED = "access_denied"
CREDENTIALS_UNREADABLE = "credentials_unreadable"

# Error kinds (reading.error_kind) raised after the login worked: whatever failed, the
# credentials are good and no lock-out is counting. ServerUnreachable says nothing either way.
_LOGGED_IN_KINDS = frozenset(
    {"AccessDenied", "QueryFailed", "ReplicationNotConfigured", "UnsupportedServer"}
)


# Refusals that back off alike: the server refused the password, or Lagscope withheld it
# (a clear-text or SHA-2 exchange without a verified server: connection.py) and dropped the
# handshake, which MySQL counts towards max_connect_errors (the host is blocked after 100).
# Neither can succeed before someone edits the instance.
_REFUSED_KINDS = frozenset({"LoginRefused", "ClearTextAuthRefused", "Sha2AuthRefused"})


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delay before the next try after ``failures`` refused logins in a row."""

    base_s: float = 1.0
    max_s: float = 300.0

    def delay_s(self, failures: int) -> float:
        # The exponent is bounded so a long-refused instance cannot overflow the float.
        return min(self.max_s, self.base_s * 2.0 ** min(max(failures, 1) - 1, 60))


DEFAULT_BACKOFF = Backoff()


def waiting(instance: Instance, now: datetime) -> bool:
    """Whether the instance is backing off after a refused login and must not be tried now."""
    return (
        instance.login_state == ACCESS_DENIED
        and instance.next_attempt_at is not None
        and now < instance.next_attempt_at
    )


def backing_off(instance: Instance, now: datetime) -> Reading:
    """This tick's reading of an instance not tried because it is backing off."""
    until = instance.next_attempt_at.isoformat() if instance.next_attempt_at else "?"
    return Reading(
        instance.id,
        now.timestamp(),
        error=instance.last_error or f"login refused; next attempt at {until}",
        error_kind="LoginBackoff",
    )


def unreadable(instance: Instance, now: datetime, message: str) -> Reading:
    return Reading(
        instance.id,
        now.timestamp(),
        error=f"{CREDENTIALS_UNREADABLE}: {message}",
        error_kind="CredentialsUnreadable",
    )


def note(instance: Instance, reading: Reading, backoff: Backoff) -> None:
    """Update the instance's login state from this tick's reading of it."""
    kind = reading.error_kind
    if reading.ok or kind in _LOGGED_IN_KINDS:
        instance.login_state, instance.login_failures, instance.next_attempt_at = OK, 0, None
    elif kind in _REFUSED_KINDS:
        instance.login_failures += 1
        delay = timedelta(seconds=backoff.delay_s(instance.login_failures))
        instance.login_state = ACCESS_DENIED
        instance.next_attempt_at = datetime.fromtimestamp(reading.read_at, UTC) + delay
    elif kind == "CredentialsUnreadable":
        instance.login_state, instance.next_attempt_at = CREDENTIALS_UNREADABLE, None
    elif instance.login_state == CREDENTIALS_UNREADABLE:
        instance.login_state = None  # it decrypts now (re-entered, or the old key is back)


def reset(instance: Instance) -> None:
    """New credentials: forget the refusals, try at the next tick."""
    instance.login_state, instance.login_failures, instance.next_attempt_at = None, 0, None
