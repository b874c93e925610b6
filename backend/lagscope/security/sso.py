"""Signing in with single sign-on: the person the provider vouched for becomes (or stays) a
Lagscope user with the role their groups give *now*, and gets a session token exactly like a
password login's (``users.issue_token``, kind "session", 12 hours).

Users are found by (issuer, subject), never by username: a provider account named like a local
one ("admin") must not take that local account over. A new one gets the provider's
``preferred_username`` (else e-mail, else subject), made to fit Lagscope's usernames and
suffixed when a local user already has it.

The role is recomputed at every sign-in: someone removed from the admin group is an editor or
a viewer from their next sign-in on (their API tokens act with the new role too, since a token
acts with its user's role). Someone in none of the mapped groups is refused, and every token
they still hold is revoked then: the provider says they no longer have access here.

Like ``login``, this owns its transactions: the revocation must stick although the sign-in is
refused. What it changes (a user made, a role changed, tokens revoked) is in the audit trail as
made by "single sign-on"; the session token itself is a login, not recorded.
"""

from __future__ import annotations

import hashlib
import logging
import re

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.errors import Conflict, PermissionDenied
from lagscope.models import ApiToken, User
from lagscope.models.auditing import AUDIT, Who
from lagscope.security.oidc_claims import Identity
from lagscope.security.sso_settings import SsoConfig
from lagscope.security.users import SESSION_TTL, _now, find_user, issue_token

log = logging.getLogger("lagscope.auth")

# No password: argon2 refuses this as a hash, so a password never signs a provider user in.
NO_PASSWORD = "!sso"
_NOT_IN_USERNAMES = re.compile(r"[^A-Za-z0-9_.@-]")


ACTOR = "single sign-on"
VIA = "GET /api/v1/auth/oidc/callback"


def sign_in(
    sessions: sessionmaker[Session],
    identity: Identity,
    config: SsoConfig,
    address: str | None = None,
) -> str:
    """A session token for the person, or PermissionDenied saying why not. ``address``: the
    browser's, for the audit trail."""
    role = config.role_for(identity.groups)
    with sessions() as session, session.begin():
        session.info[AUDIT] = Who(ACTOR, address or "", VIA)
        user = find_sso_user(session, identity.issuer, identity.subject)
        if user is not None and user.disabled:
            refusal = (
                f"{user.username} is disabled in Lagscope: an administrator can enable the account"
            )
        elif role is None:
            refusal = (
                f"your account at {config.provider_name} is in none of the groups that give a "
                "role in Lagscope: ask an administrator to add you to one"
            )
            if user is not None:
                session.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
        else:
            if user is None:
                user = _create(session, identity, role)
                log.info("single sign-on: new user %s (%s)", user.username, role)
            elif user.role != role:
                log.info("single sign-on: %s is now %s (was %s)", user.username, role, user.role)
                user.role = role
            session.execute(delete(ApiToken).where(ApiToken.expires_at <= _now()))
            log.info("single sign-on: %s signed in as %s", user.username, role)
            return issue_token(session, user, "single sign-on", kind="session", ttl=SESSION_TTL)
    log.warning(
        "single sign-on refused for %s (subject %s): %s",
        identity.username,
        identity.subject,
        refusal,
    )
    raise PermissionDenied(refusal)


def find_sso_user(session: Session, issuer: str, subject: str) -> User | None:
    return session.scalar(
        select(User).where(User.oidc_issuer == issuer, User.oidc_subject == subject)
    )


def _create(session: Session, identity: Identity, role: str) -> User:
    wanted = _NOT_IN_USERNAMES.sub("_", identity.username)[:64] or "sso-user"
    tag = hashlib.sha256(f"{identity.issuer} {identity.subject}".encode()).hexdigest()[:8]
    for candidate in (wanted, f"{wanted[:55]}-{tag}"):
        if find_user(session, candidate) is None:
            user = User(
                username=candidate,
                password_hash=NO_PASSWORD,
                role=role,
                created_at=_now(),
                oidc_issuer=identity.issuer,
                oidc_subject=identity.subject,
            )
            session.add(user)
            session.flush()
            return user
    raise Conflict(f"no free username for {identity.username!r}")
