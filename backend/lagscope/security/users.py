"""Users, roles and tokens: argon2id password hashes, bearer tokens stored as SHA-256 only."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from lagscope.errors import Conflict, InvalidInput, NotAuthenticated, PermissionDenied
from lagscope.models import ApiToken, User
from lagscope.models.users import ROLES

_HASHER = PasswordHasher()
TOKEN_PREFIX = "lgs_"
SESSION_TTL = timedelta(hours=12)
MIN_PASSWORD = 10
LAST_USED_EVERY = timedelta(minutes=1)
_DUMMY_HASH = _HASHER.hash(secrets.token_urlsafe(16))


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: enough for authorisation and for an annotation's author.
    ``token_kind`` is the kind of token the call carries: "session" (a password login), "api"
    (a script's token), None for the demo."""

    user_id: int | None
    username: str
    role: str
    token_kind: str | None = None

    def can(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)

    def require(self, role: str) -> None:
        if not self.can(role):
            raise PermissionDenied(f"this needs the {role} role; {self.username} is {self.role}")


DEMO_PRINCIPAL = Principal(None, "demo", "admin")


def create_user(session: Session, username: str, password: str, role: str = "viewer") -> User:
    if role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}")
    if len(password) < MIN_PASSWORD:
        raise InvalidInput(f"password must have at least {MIN_PASSWORD} characters")
    # Unique case-insensitively: "Admin" beside "admin" would be a phishing aid in logs.
    if find_user(session, username) is not None:
        raise Conflict(f"user {username!r} exists")
    user = User(
        username=username, password_hash=hash_password(password), role=role, created_at=_now()
    )
    session.add(user)
    session.flush()
    return user


def ensure_admin(session: Session, username: str | None, password: str | None) -> User | None:
    """Create the first admin from settings when the store has no user yet."""
    if not username or not password or session.scalar(select(User.id).limit(1)) is not None:
        return None
    return create_user(session, username, password, "admin")


def login(
    session: Session,
    username: str,
    password: str,
    allowed: bool = True,
    refusal: str = "wrong username or password",
) -> str:
    """A session token (plaintext, shown once) for a valid username and password.

    ``allowed`` False (password sign-in off for this username: LAGSCOPE_LOCAL_LOGIN) refuses
    like a wrong password, after the same work, with the same ``refusal``: neither the answer
    nor its time tells which username is the break-glass one."""
    user = find_user(session, username) if allowed else None
    if user is None:
        # Verify against a dummy hash so an unknown name costs the same argon2 work as a wrong
        # password: the answer time must not tell which usernames exist.
        _verify(_DUMMY_HASH, password)
        raise NotAuthenticated(refusal)
    if not _verify(user.password_hash, password) or user.disabled:
        raise NotAuthenticated(refusal)
    # Expired tokens are useless and would pile up (a login every 12 h per person): purge them.
    session.execute(delete(ApiToken).where(ApiToken.expires_at <= _now()))
    return issue_token(session, user, "login", kind="session", ttl=SESSION_TTL)


def find_user(session: Session, username: str) -> User | None:
    return session.scalar(select(User).where(func.lower(User.username) == username.lower()))


def issue_token(
    session: Session, user: User, name: str, kind: str = "api", ttl: timedelta | None = None
) -> str:
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = _now()
    session.add(
        ApiToken(
            user_id=user.id,
            name=name,
            token_hash=token_digest(plaintext),
            kind=kind,
            created_at=now,
            expires_at=now + ttl if ttl else None,
        )
    )
    session.flush()
    return plaintext


def authenticate(session: Session, token: str) -> Principal:
    row = session.execute(
        select(ApiToken, User).join(User).where(ApiToken.token_hash == token_digest(token))
    ).first()
    if row is None:
        raise NotAuthenticated("unknown or revoked token")
    api_token, user = row
    now = _now()
    if user.disabled or (api_token.expires_at is not None and api_token.expires_at <= now):
        raise NotAuthenticated("token expired or user disabled")
    # At most one write a minute per token: every read taking SQLite's write lock to record
    # "used just now" would serialise the API behind the poller's writes.
    if api_token.last_used_at is None or now - api_token.last_used_at >= LAST_USED_EVERY:
        api_token.last_used_at = now
    return Principal(user.id, user.username, user.role, api_token.kind)


def check_password(session: Session, user_id: int, password: str) -> bool:
    """Whether ``password`` is the user's own (an unknown id costs the same work)."""
    user = session.get(User, user_id)
    return _verify(user.password_hash if user else _DUMMY_HASH, password) and user is not None


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def _verify(password_hash: str, password: str) -> bool:
    try:
        return _HASHER.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def token_digest(token: str) -> str:
    """What is stored of a token (users' and check tokens alike): its SHA-256."""
    return hashlib.sha256(token.encode()).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)
