"""Dependencies: a session per request (the route's transaction) and the calling principal."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from lagscope.config import Settings, is_loopback
from lagscope.errors import NotAuthenticated
from lagscope.history.series import RawSeries
from lagscope.models.auditing import AUDIT, Who
from lagscope.security.check_tokens import is_check_token
from lagscope.security.secret_box import SecretBox
from lagscope.security.users import DEMO_PRINCIPAL, Principal, authenticate, token_digest

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
        return _audited(request, session, DEMO_PRINCIPAL)
    if credentials is None:
        raise NotAuthenticated("send 'Authorization: Bearer <token>'")
    return _audited(request, session, authenticate(session, credentials.credentials))


def _audited(request: Request, session: Session, principal: Principal) -> Principal:
    """A request that may change things says who makes its changes: the audit trail records
    them under that name (models/auditing.py)."""
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        client = request.client.host if request.client else ""
        via = f"{request.method} {request.url.path}"
        session.info[AUDIT] = Who(principal.username, client, via)
    return principal


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


@dataclass(frozen=True, slots=True)
class CheckCaller:
    """Who asks a lag check: a check token (its SHA-256; checked, with its clusters, inside
    the check's own read: security/check_tokens.py), or None for a user's token or the demo,
    which may ask about every cluster."""

    token_hash: str | None


def _basic_password(request: Request) -> str | None:
    """The password of ``Authorization: Basic``: gh-ost's ``--throttle-http`` sends no header of
    its own, but Go's HTTP client turns a URL's ``user:password@`` into Basic credentials."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode()
    except (binascii.Error, ValueError):
        raise NotAuthenticated("malformed Basic credentials") from None
    return decoded.partition(":")[2] or None


def check_caller(
    request: Request,
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> CheckCaller:
    """The lag check routes take a check token (Bearer, or as the Basic password), or anything
    every other route takes: a user's token of any role, or, in demo mode, no token from this
    machine (as ``get_principal`` says, which decides in demo mode whatever is sent)."""
    settings: Settings = request.app.state.settings
    token = credentials.credentials if credentials else _basic_password(request)
    if token is not None and is_check_token(token) and not settings.demo:
        return CheckCaller(token_digest(token))
    if credentials is None and token is not None:
        credentials = HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)
    get_principal(request, session, credentials)
    return CheckCaller(None)


CheckCallerDep = Annotated[CheckCaller, Depends(check_caller)]
# The bearer credentials alone (an async dependency: no thread of its own), for a route that
# authenticates inside its own transaction (the lag check, which a proxy asks twice a second).
BearerCredentialsDep = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
