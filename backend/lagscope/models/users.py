"""People and scripts that use the API: users with a role, and API tokens (stored hashed)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros

ROLES = ("viewer", "editor", "admin")


class User(Base):
    __tablename__ = "users"
    # A single sign-on user is found by who the provider says they are, never by username.
    # A unique index rather than a constraint: added to an existing store without rebuilding
    # the table (migration sso33a000001).
    __table_args__ = (
        Index("uq_users_oidc_issuer_oidc_subject", "oidc_issuer", "oidc_subject", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default="viewer")
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
    # Set for a user made by single sign-on (security/sso.py): the provider's issuer and the
    # ID token's subject. Such a user has no password; their role is their groups' at sign-in.
    oidc_issuer: Mapped[str | None] = mapped_column(String(255), default=None)
    oidc_subject: Mapped[str | None] = mapped_column(String(255), default=None)

    tokens: Mapped[list[ApiToken]] = relationship(
        back_populates="user", cascade="all, delete-orphan"
    )


class ApiToken(Base):
    """A bearer token. Only its SHA-256 is stored: a leaked database leaks no usable token."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # "session" tokens come from a login and expire; "api" tokens are for scripts.
    kind: Mapped[str] = mapped_column(String(16), default="api")
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
    expires_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    last_used_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)

    user: Mapped[User] = relationship(back_populates="tokens")


class LoginThrottle(Base):
    """Failed logins per key (``user:<name>|<client>`` or ``addr:<client>``), in the store so
    every API process applies the same back-off."""

    __tablename__ = "login_throttles"

    key: Mapped[str] = mapped_column(String(160), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    blocked_until: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    # Indexed: rows quiet for FORGET_AFTER are deleted by it at each failure.
    updated_at: Mapped[datetime] = mapped_column(EpochMicros, index=True)
