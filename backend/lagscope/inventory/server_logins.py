"""Logging in to monitored servers: back off after a refused login, flag unreadable credentials.

Every refused login (:class:`~lagscope.errors.LoginRefused`: a wrong password, a locked,
blocked or expired account) counts towards the account's lock-out on the server: MySQL's
``FAILED_LOGIN_ATTEMPTS``/``PASSWORD_LOCK_TIME``, MariaDB's ``max_password_errors``, the
connection-control plugin's growing delays. Retrying every 1 s tick would lock a MySQL account
with ``FAILED_LOGIN_ATTEMPTS 3`` within three seconds of a password change. So after the n-th
refusal in a row the instance is tried again only after ``min(max_s, base_s × 2^(n-1))``, and
after ``give_up_after`` refusals in a row (about 8.5 minutes with the defaults) it is not tried
again at all: ``access_denied`` with no ``next_attempt_at``, until someone acts. Acting is
editing the instance's password (``PATCH`` with ``password``, which a move needs anyway),
re-enabling it (``enabled`` false, then true), or ``POST /instances/{id}/retry-login`` (the
account was fixed on the server). A password that stays wrong is therefore tried a bounded
number of times, however long nobody looks.

The state lives on the instance row (``login_state``, ``login_failures``, ``next_attempt_at``)
and not in a worker's memory: any worker, or a restarted one, honours it. Editing the
instance's credentials clears it (:func:`reset`), so a fixed password is tried at the next tick.
This module is that state and its words; the tick notes each reading's outcome on the row with
ingest/login_backoff.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lagscope.models import Instance

OK = "ok"
ACCESS_DENIED = "access_denied"
CREDENTIALS_UNREADABLE = "credentials_unreadable"


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delay before the next try after ``failures`` refused logins in a row; none (stop
    trying) from ``give_up_after`` refusals on."""

    base_s: float = 1.0
    max_s: float = 300.0
    # 1 + 2 + … + 256 s: ten tries in ~8.5 min. Enough to ride out a password rotated on the
    # server a few minutes before Lagscope, few enough for any lock-out policy's counter.
    give_up_after: int = 10

    def delay_s(self, failures: int) -> float:
        # The exponent is bounded so a long-refused instance cannot overflow the float.
        return min(self.max_s, self.base_s * 2.0 ** min(max(failures, 1) - 1, 60))


DEFAULT_BACKOFF = Backoff()


def waiting(instance: Instance, now: datetime) -> bool:
    """Whether the instance is backing off after a refused login, or has given up, and must
    not be tried now."""
    return instance.login_state == ACCESS_DENIED and (
        instance.next_attempt_at is None or now < instance.next_attempt_at
    )


def gave_up(failures: int, retry_hint: str) -> str:
    """What a login refused ``failures`` times in a row says once it is no longer tried."""
    return f"login refused {failures} times in a row: not tried again until {retry_hint}"


INSTANCE_RETRY = (
    "the instance's password is edited, it is disabled and enabled again, "
    "or POST /api/v1/instances/{id}/retry-login"
)


def reset(instance: Instance) -> None:
    """New credentials, or someone says the account is fixed: forget the refusals, try at
    the next tick."""
    instance.login_state, instance.login_failures, instance.next_attempt_at = None, 0, None
