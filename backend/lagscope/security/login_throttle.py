"""Login throttling: exponential back-off per (username, client address) and per address.

A few failures are free (typos); after that each failure doubles the wait, capped, so guessing
passwords costs an attacker hours while a person who mistypes waits seconds. The counters live
in the store so every API process agrees; a quiet spell forgets them.

There is no lock on a username alone: it would let anyone lock anyone out, the admin included,
by typing five wrong passwords. A client is throttled for a username it failed on, and for
everything once its address failed often; the right password from any other client works.
An IPv6 client counts by its /64, the block one host or one LAN is handed: otherwise a single
machine would have 2^64 fresh addresses to guess from.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.orm import Session

from lagscope.errors import Throttled
from lagscope.models import LoginThrottle

FORGET_AFTER = timedelta(minutes=15)
MAX_BLOCK_S = 900.0


@dataclass(frozen=True, slots=True)
class Policy:
    # Per (username, address): a person mistyping their own password.
    free_per_user: int = 5
    # An office behind one NAT shares an address: more failures are free there.
    free_per_address: int = 20


def block_s(failures: int, free: int) -> float:
    """Seconds to wait after ``failures`` consecutive failures: 0 within the free ones, then
    1, 2, 4 … capped at 15 minutes."""
    if failures <= free:
        return 0.0
    return min(2.0 ** (failures - free - 1), MAX_BLOCK_S)


def client_key(address: str | None) -> str:
    """The client as throttling counts it: the address, or an IPv6 address's /64."""
    if not address:
        return "-"  # no address known (a Unix socket): all such clients count as one
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:90]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def keys(username: str, address: str | None) -> list[tuple[str, str]]:
    """(key, kind) pairs. The username is compared case-insensitively like logins are; ``|``
    cannot occur in a username, so a key names one pair only."""
    client = client_key(address)
    found = [(f"user:{username.lower()[:64]}|{client}", "user")]
    if address:
        found.append((f"addr:{client}", "addr"))
    return found


def check(session: Session, username: str, address: str | None, now: datetime) -> None:
    """Raise Throttled when this client must wait, for this username or for every one."""
    for key, _ in keys(username, address):
        row = session.get(LoginThrottle, key)
        if row is not None and row.blocked_until is not None and row.blocked_until > now:
            wait = math.ceil((row.blocked_until - now).total_seconds())
            raise Throttled(f"too many failed logins; try again in {wait} s", wait)


def record_failure(
    session: Session, username: str, address: str | None, now: datetime, policy: Policy
) -> None:
    # Forgotten rows go at each failure: counting per pair makes a row per guess at most, and
    # the table must not grow with every address and username ever tried.
    session.execute(delete(LoginThrottle).where(LoginThrottle.updated_at < now - FORGET_AFTER))
    for key, kind in keys(username, address):
        row = session.get(LoginThrottle, key)
        if row is None:
            row = LoginThrottle(key=key, failures=0, updated_at=now)
            session.add(row)
        row.failures += 1
        row.updated_at = now
        free = policy.free_per_user if kind == "user" else policy.free_per_address
        wait = block_s(row.failures, free)
        row.blocked_until = now + timedelta(seconds=wait) if wait else None
    session.flush()


def record_success(session: Session, username: str, address: str | None) -> None:
    """A good password clears this client's count for the username (not the address's: one
    right guess among many must not reset an attacker's budget)."""
    row = session.get(LoginThrottle, keys(username, address)[0][0])
    if row is not None:
        session.delete(row)
        session.flush()
