"""Login throttling: exponential back-off per username and per client address.

A few failures are free (typos); after that each failure doubles the wait, capped, so guessing
passwords costs an attacker hours while a person who mistypes waits seconds. The counters live
in the store so every API process agrees; a quiet spell forgets them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from lagscope.errors import Throttled
from lagscope.models import LoginThrottle

FORGET_AFTER = timedelta(minutes=15)
MAX_BLOCK_S = 900.0


@dataclass(frozen=True, slots=True)
class Policy:
    free_per_user: int = 5
    # An office behind one NAT shares an address: more failures are free there.
    free_per_address: int = 20


def block_s(failures: int, free: int) -> float:
    """Seconds to wait after ``failures`` consecutive failures: 0 within the free ones, then
    1, 2, 4 … capped at 15 minutes."""
    if failures <= free:
        return 0.0
    return min(2.0 ** (failures - free - 1), MAX_BLOCK_S)


def keys(username: str, address: str | None) -> list[tuple[str, str]]:
    """(key, kind) pairs; the username is compared case-insensitively like logins are."""
    found = [(f"user:{username.lower()[:150]}", "user")]
    if address:
        found.append((f"addr:{address[:150]}", "addr"))
    return found


def check(session: Session, username: str, address: str | None, now: datetime) -> None:
    """Raise Throttled when the username or the address must wait."""
    for key, _ in keys(username, address):
        row = session.get(LoginThrottle, key)
        if row is not None and row.blocked_until is not None and row.blocked_until > now:
            wait = math.ceil((row.blocked_until - now).total_seconds())
            raise Throttled(f"too many failed logins; try again in {wait} s", wait)


def record_failure(
    session: Session, username: str, address: str | None, now: datetime, policy: Policy
) -> None:
    for key, kind in keys(username, address):
        row = session.get(LoginThrottle, key)
        if row is None:
            row = LoginThrottle(key=key, failures=0, updated_at=now)
            session.add(row)
        elif now - row.updated_at > FORGET_AFTER:
            row.failures = 0
        row.failures += 1
        row.updated_at = now
        free = policy.free_per_user if kind == "user" else policy.free_per_address
        wait = block_s(row.failures, free)
        row.blocked_until = now + timedelta(seconds=wait) if wait else None
    session.flush()


def record_success(session: Session, username: str, now: datetime) -> None:
    """A good password clears the username's count (not the address's: one right guess
    among many must not reset an attacker's budget)."""
    row = session.get(LoginThrottle, keys(username, None)[0][0])
    if row is not None:
        session.delete(row)
        session.flush()
