"""Routes: single sign-on with OpenID Connect, and how one may sign in here.

The browser goes ``GET /auth/oidc/start`` → the provider (its login page) → ``GET
/auth/oidc/callback`` → ``/login?sso=1``, where the UI collects the outcome with ``POST
/auth/oidc/session``: a session token like a password login's, kept by the UI as it keeps
that one (a bearer token in localStorage, never a cookie that authorises a request).

Between the redirects two short-lived cookies carry what must come back, sealed (encrypted and
authenticated under a key derived from LAGSCOPE_SECRET_KEY), HttpOnly, SameSite, scoped to
``/api/v1/auth/oidc``, Secure when the redirect URL is https: the flow in progress (state,
nonce, PKCE verifier, the page to return to; 10 minutes) and the outcome (the token, or why
not; 2 minutes, taken once). The token never appears in a URL, so it is in no access log, no
browser history and no Referer. The browser is only ever sent to the provider's discovered
authorization endpoint (with the configured redirect URL) or to a path on this site.
"""

from __future__ import annotations

import hmac
import logging
import threading
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import RedirectResponse

from lagscope.api.deps import SettingsDep
from lagscope.api.problems import problem
from lagscope.api.schemas.auth import AuthMethodsOut, SsoSessionOut
from lagscope.config import Settings
from lagscope.errors import NotFound, PermissionDenied
from lagscope.security import sso
from lagscope.security.oidc import Flow, OidcClient, SsoFailed
from lagscope.security.sso_cookies import CookieSeal
from lagscope.security.sso_settings import password_login_mode, sso_config

router = APIRouter(tags=["auth"])
log = logging.getLogger("lagscope.auth")

COOKIE_PATH = "/api/v1/auth/oidc"
FLOW_COOKIE = "lagscope_sso_flow"
DONE_COOKIE = "lagscope_sso_done"
FLOW_MAX_AGE_S = 600
DONE_MAX_AGE_S = 120
BACK_TO_UI = "/login?sso=1"
_start_lock = threading.Lock()

ShortText = Annotated[str | None, Query(max_length=4096)]


@router.get("/auth/methods", response_model=AuthMethodsOut)
def auth_methods(settings: SettingsDep) -> AuthMethodsOut:
    """What the login page offers: password sign-in (for all, the break-glass account only, or
    off) and single sign-on with the named provider. Needs no token."""
    config = None if settings.demo else sso_config(settings)
    return AuthMethodsOut(
        password=password_login_mode(settings),
        sso_name=config.provider_name if config else None,
    )


@router.get(
    "/auth/oidc/start",
    response_class=RedirectResponse,
    status_code=302,
    responses={302: {"description": "to the provider's sign-in page"}},
)
def sso_start(
    request: Request, next_path: Annotated[str, Query(alias="next", max_length=2048)] = "/"
) -> Response:
    """Sign in with single sign-on: a browser navigation (not a fetch) that ends back at
    ``/login?sso=1``. ``next``: the page to return to, a path on this site."""
    client = _client(request)
    seal = _seal(request)
    try:
        url, flow = client.start(safe_next(next_path))
    except SsoFailed as exc:
        return _back_to_ui(request, {"status": 401, "detail": str(exc)})
    answer = RedirectResponse(url, status_code=302)
    _set_cookie(
        answer,
        request,
        FLOW_COOKIE,
        seal.seal(
            "flow",
            {
                "state": flow.state,
                "nonce": flow.nonce,
                "verifier": flow.code_verifier,
                "next": flow.next_path,
            },
        ),
        FLOW_MAX_AGE_S,
        same_site="lax",  # sent back on the provider's top-level redirect to the callback
    )
    return answer


@router.get(
    "/auth/oidc/callback",
    response_class=RedirectResponse,
    status_code=303,
    responses={303: {"description": "to /login?sso=1, where the UI collects the outcome"}},
)
def sso_callback(
    request: Request,
    code: ShortText = None,
    state: ShortText = None,
    error: ShortText = None,
    error_description: ShortText = None,
    iss: ShortText = None,
) -> Response:
    """Where the provider sends the browser back (the redirect URL registered there)."""
    client = _client(request)
    saved = _seal(request).open("flow", request.cookies.get(FLOW_COOKIE), FLOW_MAX_AGE_S)
    outcome: dict[str, Any]
    if saved is None or not state or not hmac.compare_digest(saved["state"], state):
        # Checked first: until the state matches, nothing here comes from our provider.
        outcome = _refusal(
            401,
            "this sign-in expired or was started elsewhere (another tab or browser): sign in again",
        )
    elif iss is not None and iss != client.config.issuer:  # RFC 9207 mix-up defence
        outcome = _refusal(401, "the answer came from another issuer than the configured one")
    elif error is not None:
        said = f" ({error_description[:200]})" if error_description else ""
        outcome = _refusal(401, f"{client.config.provider_name} refused: {error[:60]}{said}")
    elif not code:
        outcome = _refusal(401, f"{client.config.provider_name} sent no authorization code")
    else:
        flow = Flow(saved["state"], saved["nonce"], saved["verifier"], saved["next"])
        outcome = _sign_in(request, client, code, flow)
    return _back_to_ui(request, outcome, forget_flow=True)


@router.post(
    "/auth/oidc/session",
    response_model=SsoSessionOut,
    responses={
        401: {"description": "no sign-in to collect, or it failed"},
        403: {"description": "signed in at the provider, but no access here"},
    },
)
def sso_session(request: Request, response: Response) -> Any:
    """The outcome of the single sign-on that just came back to this browser, taken once: a
    session token (shown once, valid 12 hours) and the page to go to, or why not."""
    outcome = _seal(request).open("done", request.cookies.get(DONE_COOKIE), DONE_MAX_AGE_S)
    if outcome is None:
        answer: Response = problem(
            401, "Unauthorized", "no single sign-on to collect here: sign in again"
        )
    elif "token" in outcome:
        response.delete_cookie(DONE_COOKIE, path=COOKIE_PATH)
        return SsoSessionOut(token=outcome["token"], next=safe_next(outcome.get("next")))
    else:
        status = 403 if outcome.get("status") == 403 else 401
        title = "Forbidden" if status == 403 else "Unauthorized"
        answer = problem(status, title, str(outcome.get("detail", "single sign-on failed")))
    answer.delete_cookie(DONE_COOKIE, path=COOKIE_PATH)
    return answer


def safe_next(path: str | None) -> str:
    """A path on this site, or "/": never another origin (``//host``, ``/\\host``), never a
    control character."""
    if (
        not path
        or not path.startswith("/")
        or path.startswith(("//", "/\\"))
        or any(ord(c) < 0x20 or c == "\x7f" for c in path)
    ):
        return "/"
    return path


def _sign_in(request: Request, client: OidcClient, code: str, flow: Flow) -> dict[str, Any]:
    try:
        identity = client.finish(code, flow)
        address = request.client.host if request.client else None
        token = sso.sign_in(request.app.state.sessions, identity, client.config, address)
    except SsoFailed as exc:
        log.warning("single sign-on failed: %s", exc)
        return _refusal(401, str(exc))
    except PermissionDenied as exc:
        return _refusal(403, str(exc))
    return {"token": token, "next": flow.next_path}


def _refusal(status: int, detail: str) -> dict[str, Any]:
    return {"status": status, "detail": detail}


def _back_to_ui(request: Request, outcome: dict[str, Any], forget_flow: bool = False) -> Response:
    answer = RedirectResponse(BACK_TO_UI, status_code=303)
    _set_cookie(
        answer,
        request,
        DONE_COOKIE,
        _seal(request).seal("done", outcome),
        DONE_MAX_AGE_S,
        same_site="strict",  # collected by this site's own page only
    )
    if forget_flow:
        answer.delete_cookie(FLOW_COOKIE, path=COOKIE_PATH)
    return answer


def _set_cookie(
    answer: Response, request: Request, name: str, value: str, max_age_s: int, same_site: str
) -> None:
    config = _client(request).config
    answer.set_cookie(
        name,
        value,
        max_age=max_age_s,
        path=COOKIE_PATH,
        secure=config.secure_cookies,
        httponly=True,
        samesite=same_site,  # type: ignore[arg-type]
    )


def _client(request: Request) -> OidcClient:
    """This process's client for the configured provider; 404 when there is none."""
    state = request.app.state
    client: OidcClient | None = getattr(state, "oidc_client", None)
    if client is not None:
        return client
    settings: Settings = state.settings
    config = None if settings.demo else sso_config(settings)
    if config is None:
        raise NotFound("single sign-on is not configured here (LAGSCOPE_OIDC_ISSUER)")
    with _start_lock:
        client = getattr(state, "oidc_client", None)
        if client is None:
            client = state.oidc_client = OidcClient(config)
    return client


def _seal(request: Request) -> CookieSeal:
    state = request.app.state
    seal: CookieSeal | None = getattr(state, "sso_seal", None)
    if seal is None:
        settings: Settings = state.settings
        seal = state.sso_seal = CookieSeal(settings.secret_key)
    return seal
