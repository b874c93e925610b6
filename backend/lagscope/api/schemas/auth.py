"""Auth schemas. Tokens are shown once, when issued."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from lagscope.api.schemas.common import Name, Password, PatchSchema, Schema

Role = Literal["viewer", "editor", "admin"]
Username = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.@-]{1,64}$")]


class LoginIn(Schema):
    username: Username
    password: Password


class TokenOut(Schema):
    token: str = Field(description="Send as 'Authorization: Bearer <token>'. Shown only once.")


class TokenIn(Schema):
    name: Name
    expires_in_days: Annotated[float, Field(gt=0, le=36500)] | None = Field(
        default=None, description="none: never (unless the server sets a maximum)"
    )


class TokenInfoOut(Schema):
    """A token's metadata; the token itself is never shown again."""

    id: int
    name: str
    kind: Literal["api", "session"]
    user_id: int
    username: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None = Field(description="to the minute")


class UserPatch(PatchSchema):
    """Admins change role and disabled; anyone may change their own password, giving the
    current one (an admin resetting another user's needs none). A new password revokes all of
    that user's tokens, the caller's too."""

    role: Role | None = None
    disabled: bool | None = None
    password: Annotated[str, StringConstraints(min_length=10, max_length=1024)] | None = None
    current_password: Password | None = Field(
        default=None, description="your password now: needed to change your own"
    )


class MeOut(Schema):
    user_id: int | None = Field(description="null in demo mode (no account)")
    username: str
    role: Role
    demo: bool = Field(
        default=False, description="demo mode: every caller this admin (`lagscope demo`)"
    )


class UserIn(Schema):
    username: Username
    password: Annotated[str, StringConstraints(min_length=10, max_length=1024)]
    role: Role = "viewer"


class UserOut(Schema):
    id: int
    username: str
    role: Role
    disabled: bool


class AuthMethodsOut(Schema):
    """How one may sign in here (asked before signing in: no token needed)."""

    password: Literal["on", "break_glass", "off"] = Field(
        description="password sign-in: for everyone, for the break-glass account only, or off"
    )
    sso_name: str | None = Field(
        description="the single sign-on provider's name ('Sign in with …'); null: none here"
    )


class SsoSessionOut(TokenOut):
    next: str = Field(description="the page the sign-in started from (a path on this site)")
