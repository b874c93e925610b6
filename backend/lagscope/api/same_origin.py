"""Demo mode takes state-changing requests from its own pages only.

Demo mode makes every caller an admin by the client's address alone, so any web page the user
visits could make the browser send it a request: a ``<form>`` or a ``fetch(…, {mode:
"no-cors"})`` to ``http://127.0.0.1:8000/api/v1/…`` needs no CORS grant to be *sent*, only to
read the answer — and a body-less POST (retry a login, discover replicas, test a webhook) does
its harm by being sent. Outside demo mode nothing of the kind is possible: a request is
authorised only by the bearer token the UI's own script adds, which no other page can read or
make the browser attach (there is no cookie, and no CORS grant).

A browser says where a request comes from: ``Sec-Fetch-Site`` (every current browser), else
``Origin`` (sent with every cross-origin POST, PUT, PATCH and DELETE). The decision:

- reads (GET, HEAD, OPTIONS) pass: they change nothing, and the answer of a cross-origin one
  stays unreadable to the page;
- ``Sec-Fetch-Site: same-origin`` passes, and ``none`` (the user typed or bookmarked it: no
  page asked); ``same-site`` does not — every other port on 127.0.0.1 is the same *site*;
- without it, an ``Origin`` equal to this request's own origin (scheme, host, port) passes;
- with neither header the request comes from no browser (curl, ``lagscope annotate``, a webhook
  delivery to the demo's inbox): it passes, since no page can send one without them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lagscope.api.problems import problem

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TRUSTED_FETCH_SITES = frozenset({"same-origin", "none"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def cross_site_reason(
    method: str, scheme: str, host: str, origin: str | None, fetch_site: str | None
) -> str | None:
    """Why a request must be refused as coming from another site, or None when it may go on.

    ``host`` is the request's ``Host`` header, ``scheme`` the one it came in on."""
    if method.upper() in SAFE_METHODS:
        return None
    if fetch_site is not None:
        site = fetch_site.strip().lower()
        return None if site in TRUSTED_FETCH_SITES else f"Sec-Fetch-Site: {_shown(fetch_site)}"
    if origin is None:
        return None
    if _origin_of(origin) is not None and _origin_of(origin) == _request_origin(scheme, host):
        return None
    return f"Origin: {_shown(origin)}"


def _origin_of(origin: str) -> tuple[str, str, int] | None:
    """``http://127.0.0.1:8000`` → (scheme, host, port); None for ``null`` or anything else
    that is not a plain scheme://host[:port]."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme]


def _request_origin(scheme: str, host: str) -> tuple[str, str, int] | None:
    return _origin_of(f"{scheme}://{host}") if scheme in _DEFAULT_PORTS else None


def _shown(text: str) -> str:
    return repr(text[:100].encode("unicode_escape").decode())


class DemoSameOriginMiddleware:
    """403 for a state-changing request a browser marks as sent from another site (demo mode)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            reason = cross_site_reason(
                scope["method"],
                scope.get("scheme", "http"),
                headers.get(b"host", ""),
                headers.get(b"origin"),
                headers.get(b"sec-fetch-site"),
            )
            if reason is not None:
                response = problem(
                    403,
                    "Forbidden",
                    "demo mode takes changes only from its own pages, and this request came "
                    f"from another site ({reason}): open the dashboard itself "
                    "(http://127.0.0.1:<port>/) and act there",
                )
                await response(scope, _no_body, send)
                return
        await self.app(scope, receive, send)


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}
