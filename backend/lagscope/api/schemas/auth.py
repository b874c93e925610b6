"""Auth schemas. Tokens are shown once, when issued."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from lagscope.api.schemas.common import Name, Password, Schema

Role = Literal["viewer", "editor", "admin"]
Username = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.@-]{1,64}$")]


class LoginIn(Schema):
    username: Username
    password: Password


class TokenOut(Schema):
    token: str = Field(description="Send as 'Authorization: Bearer <token>'. Shown only once.")


class TokenIn(Schema):
    name: Name


class MeOut(Schema):
    username: str
    role: Role


class UserIn(Schema):
    username: Username
    password: Annotated[str, StringConstraints(min_length=10, max_length=1024)]
    role: Role = "viewer"


class UserOut(Schema):
    id: int
    username: str
    role: Role
    disabled: bool
