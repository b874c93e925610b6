"""Pure ASGI middleware at the edge: a request-body size limit and the headers every answer
carries (``nosniff``, and a Content-Security-Policy on every answer that sets none of its own:
the UI's pages, ``/index.html``, its files and the API alike, so no page of this origin can be
framed or run a script from elsewhere).

Pure ASGI rather than ``BaseHTTPMiddleware`` so the SSE stream is not buffered and the limit
counts bytes as they arrive: a client that sends no ``Content-Length`` (chunked) is cut off at
the limit instead of being read whole into memory first.
"""

from __future__ import annotations

import ipaddress

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lagscope.api.problems import problem
from lagscope.config import is_loopback

# Login, logout and token answers carry secrets: no shared cache may keep them.
NO_STORE_PREFIXES = ("/api/v1/auth",)


def content_security_policy(*inline_script_hashes: str) -> str:
    """The UI needs nothing from elsewhere: scripts and data from this origin only. Inline style
    attributes are allowed (the chart library positions tooltips with them); inline scripts are
    not, except one whose ``sha256-…`` hash a page names (the API docs' start-up script)."""
    scripts = " ".join(("'self'", *(f"'{h}'" for h in inline_script_hashes)))
    return (
        f"default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'none'; form-action 'self'"
    )


CSP = content_security_policy()


class EdgeMiddleware:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        no_store = path.startswith(NO_STORE_PREFIXES)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() not in (b"server", b"x-content-type-options")
                ]
                headers.append((b"x-content-type-options", b"nosniff"))
                if not any(k.lower() == b"content-security-policy" for k, _ in headers):
                    headers.append((b"content-security-policy", CSP.encode()))
                if no_store:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await self._too_large(scope, send_with_headers)
            return
        seen = 0

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    # FastAPI re-raises an HTTPException met while reading the body, so the
                    # one problem mapping answers it (413), like the declared-length case.
                    raise HTTPException(413, self._detail())
            return message

        await self.app(scope, counting_receive, send_with_headers)

    def _detail(self) -> str:
        return f"the request body is larger than {self.max_body_bytes} bytes"

    async def _too_large(self, scope: Scope, send: Send) -> None:
        response = problem(413, "Content Too Large", self._detail())
        await response(scope, _no_body, send)


class DemoHostMiddleware:
    """Demo mode answers requests addressed to a loopback name only (``Host: localhost``,
    127.0.0.0/8, ``[::1]``, any port); anything else gets 421.

    Demo mode makes every caller an admin and trusts the loopback client address, but a web
    page on any site can reach a loopback port through DNS rebinding (its own name re-pointed
    at 127.0.0.1): the browser then sends that site's name as ``Host``, which is refused here.
    With ``LAGSCOPE_DEMO_ALLOW_REMOTE`` an IP address is accepted too (a demo on a VM, reached
    by address); a name never is, since a name is what a rebinding page controls.
    """

    def __init__(self, app: ASGIApp, allow_ip_literals: bool = False) -> None:
        self.app = app
        self.allow_ip_literals = allow_ip_literals

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            host = _header(scope, b"host")
            if not demo_host_allowed(host, self.allow_ip_literals):
                shown = host[:100].encode("unicode_escape").decode()
                response = problem(
                    421,
                    "Misdirected Request",
                    "demo mode answers requests for localhost, 127.0.0.0/8 or [::1] only "
                    f"(Host: {shown!r}); open the demo at http://127.0.0.1:<port>/",
                )
                await response(scope, _no_body, send)
                return
        await self.app(scope, receive, send)


def demo_host_allowed(host: str, allow_ip_literals: bool = False) -> bool:
    """Whether a ``Host`` header names a loopback host (or, allowed, any IP address)."""
    name, port = _split_host(host.strip().lower())
    if name is None or not (port == "" or port.isdigit()):
        return False
    if is_loopback(name):
        return True
    if not allow_ip_literals:
        return False
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _split_host(host: str) -> tuple[str | None, str]:
    """``name[:port]`` or ``[v6][:port]`` → (name, port); (None, "") when malformed."""
    if host.startswith("["):
        end = host.find("]")
        rest = host[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            return None, ""
        return host[1:end], rest[1:]
    name, _, port = host.partition(":")
    if ":" in port:
        return None, ""  # a bare IPv6 address: not a valid Host
    return name, port


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return ""


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
