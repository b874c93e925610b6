"""Routes: log in, who am I, API tokens, users (admin)."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import select

from lagscope.api.deps import AdminDep, PrincipalDep, SessionDep
from lagscope.api.schemas.auth import LoginIn, MeOut, TokenIn, TokenOut, UserIn, UserOut
from lagscope.errors import NotAuthenticated
from lagscope.models import User
from lagscope.services import users

router = APIRouter(tags=["auth"])


@router.post("/auth/login", response_model=TokenOut)
def login(body: LoginIn, session: SessionDep) -> TokenOut:
    """Exchange a username and password for a bearer token valid 12 hours."""
    return TokenOut(token=users.login(session, body.username, body.password))


@router.get("/auth/me", response_model=MeOut)
def me(principal: PrincipalDep) -> MeOut:
    return MeOut(username=principal.username, role=principal.role)


@router.post("/auth/tokens", response_model=TokenOut, status_code=201)
def create_token(body: TokenIn, principal: PrincipalDep, session: SessionDep) -> TokenOut:
    """An API token for scripts, acting as the caller; shown once."""
    if principal.user_id is None:
        raise NotAuthenticated("the demo user cannot hold tokens")
    user = session.get(User, principal.user_id)
    assert user is not None
    return TokenOut(token=users.issue_token(session, user, body.name))


@router.get("/users", response_model=list[UserOut])
def list_users(_: AdminDep, session: SessionDep) -> list[User]:
    return list(session.scalars(select(User).order_by(User.id)))


@router.post("/users", response_model=UserOut, status_code=201)
def create_user(body: UserIn, _: AdminDep, session: SessionDep) -> User:
    return users.create_user(session, body.username, body.password, body.role)
