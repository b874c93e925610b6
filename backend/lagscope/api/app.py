"""The FastAPI application factory.

Operation ids are the route function names (stable, so the UI's generated client does not
change when a route moves). Everything is under ``/api/v1`` except ``/healthz`` and ``/metrics``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from sqlalchemy.orm import Session, sessionmaker

from lagscope import __version__
from lagscope.api import problems, webui
from lagscope.api.demo_inbox import DemoInbox
from lagscope.api.middleware import DemoHostMiddleware, EdgeMiddleware
from lagscope.api.routers import (
    alerts,
    audit,
    auth,
    check,
    clusters,
    compare,
    demo,
    discovery,
    docs,
    episodes,
    health,
    instances,
    journal,
    poll_gaps,
    root,
    series,
    status,
    stream,
    webhooks,
    workers,
)
from lagscope.api.routers import annotations as annotation_routes  # `annotations`: __future__'s
from lagscope.api.same_origin import DemoSameOriginMiddleware
from lagscope.api.stream_slots import StreamSlots
from lagscope.config import Settings, get_settings
from lagscope.db import make_engine, make_session_factory
from lagscope.health.self_watch import SelfWatch
from lagscope.security.demo_store import require_demo_store
from lagscope.security.secret_box import store_box
from lagscope.security.users import ensure_admin
from lagscope.series_store.victoria import from_settings as raw_series_store


def _operation_id(route: APIRoute) -> str:
    return route.name


def create_app(
    settings: Settings | None = None, sessions: sessionmaker[Session] | None = None
) -> FastAPI:
    settings = settings or get_settings()
    sessions = sessions or make_session_factory(make_engine(settings.database_url))
    if settings.demo:
        with sessions() as session:
            require_demo_store(session)  # before anything answers as the anonymous admin
    app = FastAPI(
        lifespan=_lifespan(settings, sessions),
        title="Lagscope",
        version=__version__,
        openapi_url="/api/v1/openapi.json",
        docs_url=None,  # served from local assets by routers/docs.py (no CDN)
        redoc_url=None,
        generate_unique_id_function=_operation_id,
    )
    app.state.settings = settings
    app.state.sessions = sessions
    app.state.box = store_box(sessions, settings.secret_key, settings.old_keys())
    # The demo's webhook inbox exists in demo mode only; its routes answer 404 without it.
    app.state.demo_inbox = DemoInbox() if settings.demo else None
    app.state.stream_slots = StreamSlots(settings.streams_per_user, settings.streams_per_process)
    # Raw ranges read from the raw-series store when one is configured (series_store/).
    app.state.raw_series = raw_series_store(settings)
    problems.install(app)
    _add_middleware(app, settings)
    _include_routers(app)
    docs.install(app)
    webui.install(app, Path(settings.ui_dist) if settings.ui_dist else None)  # last: fallback
    with sessions() as session, session.begin():
        ensure_admin(session, settings.admin_username, settings.admin_password)
    return app


def _lifespan(
    settings: Settings, sessions: sessionmaker[Session]
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The API reports itself and judges polling_stopped like every Lagscope process
        # (health/self_watch.py): the alert must fire whichever of them has stopped.
        watch = SelfWatch("api", settings, sessions, app.state.box)
        watch.start()
        try:
            yield
        finally:
            watch.stop()
            if app.state.raw_series is not None:
                app.state.raw_series.close()

    return lifespan


def _add_middleware(app: FastAPI, settings: Settings) -> None:
    if settings.demo:  # inside the edge middleware: its refusals carry the edge's headers
        # Added first, so it runs after the Host check: an origin is judged on a loopback Host.
        app.add_middleware(DemoSameOriginMiddleware)
        app.add_middleware(DemoHostMiddleware, allow_ip_literals=settings.demo_allow_remote)
    app.add_middleware(EdgeMiddleware, max_body_bytes=settings.max_body_bytes)


def _include_routers(app: FastAPI) -> None:
    api = APIRouter(prefix="/api/v1")
    for module in (
        auth,
        clusters,
        discovery,
        instances,
        status,
        series,
        journal,
        annotation_routes,
        compare,
        episodes,
        poll_gaps,
        stream,
        workers,
        alerts,
        webhooks,
        check,
        audit,
        demo,
    ):
        api.include_router(module.router)
    app.include_router(api)
    app.include_router(annotation_routes.grafana_router)
    app.include_router(root.router)
    app.include_router(health.router)
