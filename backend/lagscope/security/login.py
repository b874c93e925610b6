"""Logging in (and confirming a password): throttle, verify, record — in three short
transactions.

The failure must be recorded even though the attempt fails (the request's own transaction rolls
back on the error), so this use-case owns its transactions instead of the route. It runs in a
worker thread under a small capacity limit: argon2 costs tens of milliseconds of CPU and 40
parallel guesses must queue here, not occupy every thread the API serves other requests with.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from sqlalchemy.orm import Session, sessionmaker

from lagscope.errors import NotAuthenticated, PermissionDenied
from lagscope.security import login_throttle as throttle
from lagscope.security import users

log = logging.getLogger("lagscope.auth")


def login(
    sessions: sessionmaker[Session],
    username: str,
    password: str,
    address: str | None,
    policy: throttle.Policy,
    allowed: bool = True,
    refusal: str = "wrong username or password",
) -> str:
    """``allowed`` and ``refusal``: see ``users.login`` (password sign-in turned off)."""
    now = datetime.now(UTC)
    with sessions() as session, session.begin():
        throttle.check(session, username, address, now)
    try:
        with sessions() as session, session.begin():
            token = users.login(session, username, password, allowed, refusal)
            throttle.record_success(session, username, address)
            return token
    except NotAuthenticated:
        with sessions() as session, session.begin():
            throttle.record_failure(session, username, address, now, policy)
        # Who and from where, never the password: enough to spot a guessing campaign.
        log.warning("failed login for username=%r from %s", username, address or "unknown")
        raise


def confirm_password(
    sessions: sessionmaker[Session],
    user_id: int,
    username: str,
    password: str,
    address: str | None,
    policy: throttle.Policy,
) -> None:
    """Check a signed-in user's current password before they change it: a token alone (a
    leaked script token, a browser left open) must not be enough to take the account. A wrong
    one counts against this client like a failed login, and a throttled client waits."""
    now = datetime.now(UTC)
    with sessions() as session, session.begin():
        throttle.check(session, username, address, now)
    with sessions() as session, session.begin():
        if users.check_password(session, user_id, password):
            throttle.record_success(session, username, address)
            return
    with sessions() as session, session.begin():
        throttle.record_failure(session, username, address, now, policy)
    log.warning("wrong current password for username=%r from %s", username, address or "unknown")
    raise PermissionDenied("current_password is not your password")
