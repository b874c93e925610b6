"""``/readyz``: Lagscope's own parts, for compose, Kubernetes and the UI's health strip.

``/healthz`` stays liveness (this process answers and reaches its store). ``/readyz`` judges
the whole pipeline and answers 503 when a part is down; ``check=`` narrows which parts decide
the status (every part is still in the body): a Kubernetes readiness probe for the API
would use ``check=store`` so the dashboard stays reachable to show a dead worker. No
authentication: it names no server, host or user, only states, counts and ages.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from lagscope.analysis.readiness import Readiness
from lagscope.api.schemas.health import ComponentName, ReadinessOut
from lagscope.health.check import check

router = APIRouter(tags=["root"])


def readiness_out(readiness: Readiness) -> ReadinessOut:
    return ReadinessOut.model_validate(
        {
            "state": readiness.state.value,
            "checked_at": datetime.fromtimestamp(readiness.checked_at_s, UTC),
            "components": [
                {
                    "name": c.name,
                    "state": c.state.value,
                    "message": c.message,
                    "age_s": c.age_s,
                    "count": c.count,
                }
                for c in readiness.components
            ],
        }
    )


@router.get(
    "/readyz",
    operation_id="readyz",
    response_model=ReadinessOut,
    responses={503: {"model": ReadinessOut, "description": "A part that decides is down."}},
)
def readyz(
    request: Request,
    check_: Annotated[
        list[ComponentName] | None,
        Query(alias="check", description="The parts that decide the status (default: all)."),
    ] = None,
) -> JSONResponse:
    readiness = check(request.app.state.sessions, request.app.state.settings)
    body = readiness_out(readiness)
    failing = readiness.failing(frozenset(check_) if check_ else None)
    return JSONResponse(body.model_dump(mode="json"), status_code=503 if failing else 200)
