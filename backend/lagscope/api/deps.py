"""Dependencies: a session per request (the route's transaction) and the calling principal."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from lagscope.config import Settings, is_loopback
from lagscope.errors import NotAuthenticated
from lagscope.history.series import RawSeries
from lagscope.security.secret_box import SecretBox
from lagscope.security.users import DEMO_PRINCIPAL, Principal, authenticate

_bearer = HTTPBearer(auto_error=False, description="An API token or a login token")


def get_session(request: Request) -> Iterator[Session]:
    """One transaction per request: committed when the route returns, rolled back on error."""
    with request.app.state.sessions() as session, session.begin():
        yield session


# scope="function": commit before the response is sent. With FastAPI's default ("request")
# the commit ran after the client already had its 200/201, so a client reading right after its
# own write could miss it, and a failed commit was reported as a success.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.box
    return box


def get_raw_series(request: Request) -> RawSeries | None:
    raw: RawSeries | None = request.app.state.raw_series
    return raw


SettingsDep = Annotated[Settings, Depends(get_settings)]
# Where raw series are read from: None for the store's own tables (history/series.py).
RawSeriesDep = Annotated[RawSeries | None, Depends(get_raw_series)]
BoxDep = Annotated[SecretBox, Depends(get_box)]


def get_principal(
    request: Request,
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    settings: Settings = request.app.state.settings
    if settings.demo:
        # Explicit demo mode only (settings refuse it with a real secret), and only for this
        # machine: a demo reached through a port forward must not make strangers admins.
        client = request.client.host if request.client else ""
        if not settings.demo_allow_remote and not is_loopback(client):
            raise NotAuthenticated("demo mode answers loopback clients only")
        return DEMO_PRINCIPAL
    if credentials is None:
        raise NotAuthenticated("send 'Authorization: Bearer <token>'")
    return authenticate(session, credentials.credentials)


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def bearer_token(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str | None:
    return credentials.credentials if credentials else None


BearerDep = Annotated[str | None, Depends(bearer_token)]


def editor(principal: PrincipalDep) -> Principal:
    principal.require("editor")
    return principal


def admin(principal: PrincipalDep) -> Principal:
    principal.require("admin")
    return principal


EditorDep = Annotated[Principal, Depends(editor)]


def editor_apart(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """An editor, checked in a transaction of its own, for a route that then waits long (a
    connection test): the request's session would hold a pooled database connection, and
    possibly SQLite's write lock, for the whole wait."""
    with request.app.state.sessions() as session, session.begin():
        principal = get_principal(request, session, credentials)
    principal.require("editor")
    return principal


EditorApartDep = Annotated[Principal, Depends(editor_apart)]
AdminDep = Annotated[Principal, Depends(admin)]
