"""Routes: log in and out, who am I, API tokens (list, create, revoke), users (admin); single
sign-on's routes are in oidc.py, included here."""

from __future__ import annotations

from datetime import timedelta
from functools import partial

import anyio
import anyio.to_thread
from fastapi import APIRouter, Request, Response
from sqlalchemy import select

from lagscope.api.deps import AdminDep, BearerDep, PrincipalDep, SessionDep, SettingsDep
from lagscope.api.routers import oidc
from lagscope.api.schemas.auth import (
    LoginIn,
    MeOut,
    TokenIn,
    TokenInfoOut,
    TokenOut,
    UserIn,
    UserOut,
    UserPatch,
)
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.config import Settings
from lagscope.errors import InvalidInput
from lagscope.models import User
from lagscope.security import access, users
from lagscope.security import login as login_service
from lagscope.security import login_throttle as throttle
from lagscope.security.sso_settings import password_login_allowed, sso_config

router = APIRouter(tags=["auth"])
router.include_router(oidc.router)


@router.post(
    "/auth/login",
    response_model=TokenOut,
    responses={429: {"description": "Too many failed logins; see Retry-After"}},
)
async def login(body: LoginIn, request: Request) -> TokenOut:
    """Exchange a username and password for a bearer token valid 12 hours. Repeated failures
    for a username or from an address are answered 429 with ``Retry-After``. With
    LAGSCOPE_LOCAL_LOGIN off, only the break-glass account signs in with a password."""
    state = request.app.state
    settings: Settings = state.settings
    if getattr(state, "login_limiter", None) is None:
        state.login_limiter = anyio.CapacityLimiter(settings.login_concurrency)
    work = partial(
        login_service.login,
        state.sessions,
        body.username,
        body.password,
        _client(request),
        _policy(settings),
        password_login_allowed(settings, body.username),
        _refusal(settings),
    )
    token = await anyio.to_thread.run_sync(work, limiter=state.login_limiter)
    return TokenOut(token=token)


@router.post("/auth/logout", status_code=204, response_class=Response)
def logout(_: PrincipalDep, token: BearerDep, session: SessionDep) -> Response:
    """Revoke the token this request carries."""
    if token:
        access.logout(session, token)
    return Response(status_code=204)


@router.get("/auth/me", response_model=MeOut)
def me(principal: PrincipalDep, settings: SettingsDep) -> MeOut:
    return MeOut(
        user_id=principal.user_id,
        username=principal.username,
        role=principal.role,
        demo=settings.demo,
    )


@router.get("/auth/tokens", response_model=list[TokenInfoOut])
def list_tokens(
    principal: PrincipalDep, session: SessionDep, user_id: QueryId | None = None
) -> list[TokenInfoOut]:
    """Your own tokens; an admin sees everyone's (or one user's with ``user_id``)."""
    return [
        TokenInfoOut(
            id=token.id,
            name=token.name,
            kind="session" if token.kind == "session" else "api",
            user_id=user.id,
            username=user.username,
            created_at=token.created_at,
            expires_at=token.expires_at,
            last_used_at=token.last_used_at,
        )
        for token, user in access.list_tokens(session, principal, user_id)
    ]


@router.post("/auth/tokens", response_model=TokenOut, status_code=201)
def create_token(
    body: TokenIn, principal: PrincipalDep, session: SessionDep, settings: SettingsDep
) -> TokenOut:
    """An API token for scripts, acting as the caller (editors and admins); shown once."""
    expires_in = timedelta(days=body.expires_in_days) if body.expires_in_days else None
    maximum = timedelta(days=settings.api_token_max_days) if settings.api_token_max_days else None
    token = access.create_api_token(session, principal, body.name, expires_in, maximum)
    return TokenOut(token=token)


@router.delete("/auth/tokens/{token_id}", status_code=204, response_class=Response)
def revoke_token(token_id: PathId, principal: PrincipalDep, session: SessionDep) -> Response:
    """Revoke one of your tokens (an admin: anyone's); it fails on its next request."""
    access.revoke_token(session, principal, token_id)
    return Response(status_code=204)


@router.get("/users", response_model=list[UserOut])
def list_users(_: AdminDep, session: SessionDep) -> list[User]:
    return list(session.scalars(select(User).order_by(User.id)))


@router.post("/users", response_model=UserOut, status_code=201)
def create_user(body: UserIn, _: AdminDep, session: SessionDep) -> User:
    return users.create_user(session, body.username, body.password, body.role)


@router.patch(
    "/users/{user_id}",
    response_model=UserOut,
    responses={429: {"description": "Too many wrong passwords; see Retry-After"}},
)
def update_user(
    user_id: PathId,
    body: UserPatch,
    request: Request,
    principal: PrincipalDep,
    session: SessionDep,
    settings: SettingsDep,
) -> User:
    """Role and disabled: admins. Password: the user, with ``current_password`` (a wrong one
    answers 403 and counts like a failed login), or an admin resetting someone else's; it
    revokes all of that user's tokens."""
    if body.role is not None or body.disabled is not None:
        principal.require("admin")
    access.may_manage(principal, user_id)
    if body.password is not None and principal.user_id == user_id:
        if body.current_password is None:
            raise InvalidInput("current_password: needed to change your own password")
        # Checked in transactions of its own, before this request's session writes anything:
        # the failure must be recorded although this request then fails.
        login_service.confirm_password(
            request.app.state.sessions,
            user_id,
            principal.username,
            body.current_password,
            _client(request),
            _policy(settings),
        )
    user = None
    if body.role is not None:
        user = access.set_role(session, user_id, body.role)
    if body.disabled is not None:
        user = access.set_disabled(session, user_id, body.disabled)
    if body.password is not None:
        user = access.set_password(session, user_id, body.password)
    return user or access.get_user(session, user_id)


def _client(request: Request) -> str | None:
    return request.client.host if request.client else None


def _policy(settings: Settings) -> throttle.Policy:
    return throttle.Policy(settings.login_free_failures_user, settings.login_free_failures_address)


def _refusal(settings: Settings) -> str:
    """What a failed password login says: the same for every username, the break-glass one
    included (nothing tells which it is)."""
    if settings.local_login:
        return "wrong username or password"
    config = sso_config(settings)
    via = f"sign in with {config.provider_name}" if config else "password sign-in is off"
    return f"wrong username or password (passwords sign in the break-glass account only: {via})"


@router.delete("/users/{user_id}", status_code=204, response_class=Response)
def delete_user(user_id: PathId, _: AdminDep, session: SessionDep) -> Response:
    access.delete_user(session, user_id)
    return Response(status_code=204)
