"""Each tick's login outcome, noted on the instance row (the state: inventory/server_logins.py).

A refused login starts or lengthens the back-off, a reading that got past the login clears it,
credentials that cannot be decrypted are flagged; an instance that is backing off, or whose
credentials are unreadable, is not tried and reads as such for this tick.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from lagscope.ingest.reader import PollResult
from lagscope.inventory.server_logins import (
    ACCESS_DENIED,
    CREDENTIALS_UNREADABLE,
    INSTANCE_RETRY,
    OK,
    Backoff,
    gave_up,
)
from lagscope.models import Instance
from lagscope.models.loaded import assign

# Error kinds (reading.error_kind) raised after the login worked: whatever failed, the
# credentials are good and no lock-out is counting. ServerUnreachable says nothing either way.
_LOGGED_IN_KINDS = frozenset(
    {
        "AccessDenied",
        "QueryFailed",
        "ReplicationNotConfigured",
        "UnsupportedServer",
        "UnexpectedAnswer",
    }
)


# Refusals that back off alike: the server refused the password, or Lagscope withheld it
# (a clear-text or SHA-2 exchange without a verified server: connection.py) and dropped the
# handshake, which MySQL counts towards max_connect_errors (the host is blocked after 100).
# Neither can succeed before someone edits the instance.
_REFUSED_KINDS = frozenset({"LoginRefused", "ClearTextAuthRefused", "Sha2AuthRefused"})


def backing_off(instance: Instance, now: datetime) -> PollResult:
    """This tick's reading of an instance not tried because it is backing off (or gave up:
    its last error, kept, says until what)."""
    if instance.next_attempt_at is None:
        fallback = gave_up(instance.login_failures, INSTANCE_RETRY.format(id=instance.id))
    else:
        fallback = f"login refused; next attempt at {instance.next_attempt_at.isoformat()}"
    return PollResult(
        instance.id,
        now.timestamp(),
        error=instance.last_error or fallback,
        error_kind="LoginBackoff",
    )


def unreadable(instance: Instance, now: datetime, message: str) -> PollResult:
    return PollResult(
        instance.id,
        now.timestamp(),
        error=f"{CREDENTIALS_UNREADABLE}: {message}",
        error_kind="CredentialsUnreadable",
    )


def note(instance: Instance, reading: PollResult, backoff: Backoff) -> PollResult:
    """Update the instance's login state from this tick's reading of it; the reading to
    record (the refusal that makes polling give up says so)."""
    kind = reading.error_kind
    if reading.ok or kind in _LOGGED_IN_KINDS:
        # Every good poll: set only what differs (models/loaded.py).
        assign(instance, {"login_state": OK, "login_failures": 0, "next_attempt_at": None})
    elif kind in _REFUSED_KINDS:
        instance.login_failures += 1
        instance.login_state = ACCESS_DENIED
        if instance.login_failures >= backoff.give_up_after:
            instance.next_attempt_at = None
            why = gave_up(instance.login_failures, INSTANCE_RETRY.format(id=instance.id))
            return replace(reading, error=f"{reading.error} ({why})")
        delay = timedelta(seconds=backoff.delay_s(instance.login_failures))
        instance.next_attempt_at = datetime.fromtimestamp(reading.read_at, UTC) + delay
    elif kind == "CredentialsUnreadable":
        instance.login_state, instance.next_attempt_at = CREDENTIALS_UNREADABLE, None
    elif instance.login_state == CREDENTIALS_UNREADABLE:
        instance.login_state = None  # it decrypts now (re-entered, or the old key is back)
    return reading
