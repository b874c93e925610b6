"""The web UI: the production build of ``frontend/`` (``npm run build`` → ``frontend/dist``)
served by the API process at ``/``.

Hashed files under ``/assets`` are cached for a year (their names change with their content);
every other path that is not a file of the build answers ``index.html``, so a reloaded or shared
URL of a client-side route (``/clusters/1?range=6h``) opens the right page. That fallback never
shadows the API: ``/api/…``, ``/metrics`` and ``/healthz`` keep their own routes, and an unknown
path under them is the API's 404 problem, not a page. Without a build, ``GET /`` keeps sending
people to the API docs (routers/docs.py).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from lagscope.api.routers.docs import DOCS_URL

DEFAULT_DIST = Path(__file__).resolve().parents[3] / "frontend" / "dist"
# Never a page: the API, the scrape endpoint and the liveness check answer for themselves.
RESERVED = ("api", "metrics", "healthz", "readyz")
# The Content-Security-Policy is set on every answer by api/middleware.py.
_PAGE_HEADERS = {"Cache-Control": "no-cache"}


def has_build(dist: Path | None = None) -> bool:
    return ((dist or DEFAULT_DIST) / "index.html").is_file()


def install(app: FastAPI, dist: Path | None = None) -> None:
    """Serve the build in ``dist`` (default: the repository's frontend/dist) if it has an
    index.html; otherwise ``GET /`` redirects to the API docs."""
    root = (dist or DEFAULT_DIST).resolve()
    index = root / "index.html"
    if not index.is_file():

        @app.get("/", include_in_schema=False)
        def home() -> RedirectResponse:
            return RedirectResponse(DOCS_URL, status_code=307)

        return

    assets = root / "assets"
    if assets.is_dir():
        app.mount("/assets", _ImmutableFiles(directory=assets), name="ui-assets")

    @app.get("/{path:path}", include_in_schema=False)
    def page(path: str, request: Request) -> Response:
        first = path.split("/", 1)[0]
        if first in RESERVED:
            raise HTTPException(404)  # the API's own 404 problem
        if path:
            candidate = (root / path).resolve()
            if candidate.is_relative_to(root) and candidate.is_file():
                return FileResponse(candidate, headers={"Cache-Control": "no-cache"})
        return FileResponse(index, media_type="text/html", headers=_PAGE_HEADERS)


class _ImmutableFiles(StaticFiles):
    """Vite names every asset by its content hash: a browser may keep it forever."""

    def file_response(self, *args: object, **kwargs: object) -> Response:
        response = super().file_response(*args, **kwargs)  # type: ignore[arg-type]
        response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        return response
