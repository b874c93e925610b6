"""Cutting someone off: tokens listed and revoked, logout, users disabled, deleted, re-roled or
given a new password (disabling, deleting and a new password revoke every token they hold).

Revoking deletes the token row: ``authenticate`` then answers "unknown or revoked token" on the
very next request, and a live stream that re-checks its token ends. The last enabled admin
cannot be disabled, demoted or deleted, so nobody can lock the whole team out by mistake.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from lagscope.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from lagscope.models import Annotation, ApiToken, User
from lagscope.models.users import ROLES
from lagscope.security.users import (
    MIN_PASSWORD,
    Principal,
    hash_password,
    issue_token,
    token_digest,
)


def create_api_token(
    session: Session,
    principal: Principal,
    name: str,
    expires_in: timedelta | None,
    max_lifetime: timedelta | None,
) -> str:
    """Only editors and admins hold API tokens: a viewer's reads need no script access.

    Only a session from a password login mints tokens, never an API token: a minted token
    outlives the revocation of the one that minted it, so a leaked script token could
    otherwise keep the account for good (and "no later than itself" is no bound when the
    leaked token never expires)."""
    principal.require("editor")
    if principal.token_kind != "session":
        raise PermissionDenied(
            "an API token cannot create tokens: sign in (password or single sign-on) to create one"
        )
    user = _user(session, principal.user_id)
    if expires_in is not None and expires_in <= timedelta(0):
        raise InvalidInput("expires_in_days must be positive")
    if max_lifetime is not None:
        if expires_in is None:
            expires_in = max_lifetime  # a site maximum makes "never" mean "the maximum"
        elif expires_in > max_lifetime:
            raise InvalidInput(f"API tokens may live {max_lifetime.days} days at most here")
    return issue_token(session, user, name, kind="api", ttl=expires_in)


def list_tokens(
    session: Session, principal: Principal, user_id: int | None = None
) -> list[tuple[ApiToken, User]]:
    """The caller's own tokens; an admin may list anyone's (``user_id``) or everyone's."""
    query = select(ApiToken, User).join(User).order_by(ApiToken.id)
    if user_id is not None and user_id != principal.user_id:
        principal.require("admin")
        query = query.where(ApiToken.user_id == user_id)
    elif user_id is None and principal.can("admin"):
        pass
    else:
        query = query.where(ApiToken.user_id == principal.user_id)
    return [(token, user) for token, user in session.execute(query)]


def revoke_token(session: Session, principal: Principal, token_id: int) -> None:
    token = session.get(ApiToken, token_id)
    if token is None or (token.user_id != principal.user_id and not principal.can("admin")):
        raise NotFound(f"token {token_id} not found")  # not 403: ids of others stay unknown
    session.delete(token)
    session.flush()


def logout(session: Session, plaintext: str) -> None:
    session.execute(delete(ApiToken).where(ApiToken.token_hash == token_digest(plaintext)))


def set_disabled(session: Session, user_id: int, disabled: bool) -> User:
    """Disabling revokes every token the user holds. Refusing them while disabled is not
    enough: re-enabling would revive a token that leaked before, or one an admin meant to end
    by disabling its owner. Re-enabled, the user logs in again."""
    user = _user(session, user_id)
    if disabled and user.role == "admin":
        _keep_an_admin(session, user)
    user.disabled = disabled
    if disabled:
        session.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
    session.flush()
    return user


def set_role(session: Session, user_id: int, role: str) -> User:
    if role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}")
    user = _user(session, user_id)
    if user.role == "admin" and role != "admin":
        _keep_an_admin(session, user)
    user.role = role
    session.flush()
    return user


def set_password(session: Session, user_id: int, password: str) -> User:
    """A new password revokes every token the user holds: whoever had one must log in again."""
    if len(password) < MIN_PASSWORD:
        raise InvalidInput(f"password must have at least {MIN_PASSWORD} characters")
    user = _user(session, user_id)
    user.password_hash = hash_password(password)
    session.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
    session.flush()
    return user


def delete_user(session: Session, user_id: int) -> None:
    user = _user(session, user_id)
    if user.role == "admin":
        _keep_an_admin(session, user)
    session.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
    # The foreign key does this too; said here as well because SQLite may hand the deleted
    # id to the next user created, who must not inherit these notes.
    session.execute(
        update(Annotation).where(Annotation.author_id == user.id).values(author_id=None)
    )
    session.delete(user)
    session.flush()


def may_manage(principal: Principal, user_id: int) -> None:
    """Admins manage anyone; others only their own password."""
    if principal.user_id != user_id:
        principal.require("admin")


def _keep_an_admin(session: Session, leaving: User) -> None:
    others = session.scalar(
        select(func.count())
        .select_from(User)
        .where(User.role == "admin", User.disabled.is_(False), User.id != leaving.id)
    )
    if not others:
        raise Conflict(f"{leaving.username} is the last enabled admin")


def get_user(session: Session, user_id: int) -> User:
    return _user(session, user_id)


def _user(session: Session, user_id: int | None) -> User:
    if user_id is None:
        raise PermissionDenied("the demo user has no account")
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(f"user {user_id} not found")
    return user
