"""Errors as RFC 9457 problem bodies, mapped in one place.

Domain errors become their HTTP status; malformed input is a 422 naming each bad field; an
unexpected exception is a 500 that says nothing about internals (it is logged instead).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from lagscope.errors import (
    AccessDenied,
    CollectorError,
    Conflict,
    CredentialsUnreadable,
    InvalidInput,
    LagscopeError,
    NotAuthenticated,
    NotFound,
    Overloaded,
    PermissionDenied,
    SeriesStoreUnavailable,
    ServerUnreachable,
    TargetNotAllowed,
    Throttled,
    UnsupportedServer,
)

log = logging.getLogger(__name__)
MEDIA_TYPE = "application/problem+json"

# Most specific first. A monitored server's failure is not the API's: 502 with the cause.
_STATUS: tuple[tuple[type[LagscopeError], int], ...] = (
    (NotFound, 404),
    (Conflict, 409),
    (InvalidInput, 422),
    # A stored credential no key decrypts: the caller's to type again (only the connection
    # test reads one in a request; the workers report it on the instance).
    (CredentialsUnreadable, 422),
    (NotAuthenticated, 401),
    (PermissionDenied, 403),
    (Overloaded, 503),
    (SeriesStoreUnavailable, 503),
    (Throttled, 429),
    (TargetNotAllowed, 422),
    (ServerUnreachable, 502),
    (AccessDenied, 502),
    (UnsupportedServer, 502),
    (CollectorError, 502),
)


def problem_type(title: str) -> str:
    """``NotFound`` / ``Not Found`` → ``/problems/not-found``; an acronym stays one word
    (``HTTPError`` → ``http-error``, never ``h-t-t-p-error``)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", title)
    return "/problems/" + "-".join(re.findall(r"[A-Za-z0-9]+", words)).lower()


def problem(
    status: int,
    title: str,
    detail: str = "",
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body = {
        "type": problem_type(title),
        "title": title,
        "status": status,
        "detail": detail,
        **extra,
    }
    sent = dict(headers or {})
    if status == 401:
        sent["WWW-Authenticate"] = "Bearer"
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=sent)


def _malformed_json(exc: RequestValidationError) -> str | None:
    """A body that is not JSON at all reads as prose, with where the parser stopped."""
    for error in exc.errors():
        if error.get("type") == "json_invalid":
            loc = error.get("loc", ())
            position = loc[-1] if len(loc) > 1 and isinstance(loc[-1], int) else None
            reason = (error.get("ctx") or {}).get("error", "cannot be parsed")
            where = f" at position {position}" if position is not None else ""
            return f"the request body is not valid JSON: {str(reason).lower()}{where}"
    return None


def install(app: FastAPI) -> None:
    @app.exception_handler(LagscopeError)
    async def domain_error(_: Request, exc: LagscopeError) -> JSONResponse:
        status = next((code for kind, code in _STATUS if isinstance(exc, kind)), 400)
        extra: dict[str, Any] = {}
        headers: dict[str, str] = {}
        if isinstance(exc, CollectorError):
            extra = {"server": exc.server, "code": exc.code}
        if isinstance(exc, Throttled):
            headers["Retry-After"] = str(max(1, round(exc.retry_after_s)))
            extra = {"retry_after_s": max(1, round(exc.retry_after_s))}
        return problem(status, type(exc).__name__, str(exc), headers=headers, **extra)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        if malformed := _malformed_json(exc):
            return problem(422, "MalformedJson", malformed)
        errors = [
            {
                "field": ".".join(str(p) for p in e.get("loc", ()) if p != "body"),
                "message": e.get("msg", ""),
            }
            for e in exc.errors()
        ]
        fields = ", ".join(e["field"] or "body" for e in errors)
        return problem(422, "InvalidRequest", f"invalid: {fields}", errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        # The status's own phrase names the problem: /problems/not-found, method-not-allowed…
        try:
            title = HTTPStatus(exc.status_code).phrase
        except ValueError:
            title = "HTTP Error"
        return problem(exc.status_code, title, str(exc.detail), headers=exc.headers)

    @app.exception_handler(OperationalError)
    async def store_unavailable(request: Request, exc: OperationalError) -> JSONResponse:
        # The store refused or dropped the connection, or stayed locked past the busy timeout:
        # the request's transaction rolled back, so nothing of it was written. Say so, and when
        # to try again, instead of a 500 that reads like a bug.
        log.warning(
            "store unavailable on %s %s: %s",
            request.method,
            request.url.path,
            type(exc.orig).__name__ if exc.orig is not None else type(exc).__name__,
        )
        return problem(
            503,
            "StoreUnavailable",
            "the store is unreachable or busy; nothing was written: try again shortly",
            headers={"Retry-After": "5"},
        )

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem(500, "InternalError", "an unexpected error occurred; see the server log")
