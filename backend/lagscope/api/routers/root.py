"""Routes outside /api/v1: liveness and the Prometheus exposition."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Request, Response
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from sqlalchemy import text

from lagscope.api.deps import PrincipalDep, SessionDep
from lagscope.health import metrics as self_metrics
from lagscope.history import prometheus as metrics

router = APIRouter(tags=["root"])


@router.get("/healthz", operation_id="healthz")
def healthz(session: SessionDep) -> dict[str, str]:
    """Liveness and store reachability; needs no authentication."""
    session.execute(text("SELECT 1"))
    return {"status": "ok"}


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_PLAIN_0_0_4: {}}, "description": "Gauges"}},
)
def metrics_exposition(request: Request, _: PrincipalDep, session: SessionDep) -> Response:
    """Prometheus text format 0.0.4. Needs a bearer token like the API (scrape configs take
    ``authorization: {credentials: …}``): the labels name servers and regions. The monitored
    servers' gauges, then Lagscope's own (``lagscope_self_*``, health/metrics.py)."""
    now = datetime.now(UTC)
    body = metrics.scrape(session, now) + self_metrics.scrape(
        request.app.state.sessions, session, request.app.state.settings, now.timestamp()
    )
    return Response(body, media_type=CONTENT_TYPE_PLAIN_0_0_4)
