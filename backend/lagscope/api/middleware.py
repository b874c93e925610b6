"""Pure ASGI middleware at the edge: a request-body size limit and the headers every answer
carries (``nosniff``, and a Content-Security-Policy on every answer that sets none of its own:
the UI's pages, ``/index.html``, its files and the API alike, so no page of this origin can be
framed or run a script from elsewhere).

Pure ASGI rather than ``BaseHTTPMiddleware`` so the SSE stream is not buffered and the limit
counts bytes as they arrive: a client that sends no ``Content-Length`` (chunked) is cut off at
the limit instead of being read whole into memory first.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lagscope.api.problems import problem

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
