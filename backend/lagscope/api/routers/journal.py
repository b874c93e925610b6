"""Routes: param changes and the tuning journal, with its export (everyone signed in reads).
Annotations, the journal's notes, are routers/annotations.py."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Response

from lagscope.api.deps import PrincipalDep, RawSeriesDep, SessionDep, SettingsDep
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.api.schemas.journal import JournalOut, ParamChangeOut, journal_out, param_change_out
from lagscope.api.schemas.window import TimeRange, time_range
from lagscope.journal import export as journal_export
from lagscope.journal import steps as journal
from lagscope.journal.prediction import predicted
from lagscope.journal.steps import JournalSettings

router = APIRouter(tags=["steps"])
TimeRangeDep = Annotated[TimeRange, Depends(time_range)]
_WIDTH = "seconds in each before/after window (W)"
_SETTLE = "seconds after a step left out before its after window"
_MIN_SAMPLES = "lag samples each window needs for a verdict"
_GROUP = "events at most this many seconds apart make one step"


@router.get("/clusters/{cluster_id}/param-changes", response_model=list[ParamChangeOut])
def list_param_changes(
    cluster_id: PathId,
    window: TimeRangeDep,
    _: PrincipalDep,
    session: SessionDep,
    instance_id: QueryId | None = None,
) -> list[ParamChangeOut]:
    """Auto-detected changes with ``first_new_at`` in the window, in time order."""
    changes = journal.param_changes(session, cluster_id, window.start, window.end, instance_id)
    return [param_change_out(change, name) for change, name in changes]


@router.get("/clusters/{cluster_id}/journal", response_model=JournalOut)
def get_journal(
    cluster_id: PathId,
    window: TimeRangeDep,
    _: PrincipalDep,
    session: SessionDep,
    app_settings: SettingsDep,
    raw: RawSeriesDep,
    width_s: Annotated[float, Query(ge=1, le=86_400, description=_WIDTH)] = 600,
    settle_s: Annotated[float, Query(ge=0, le=3_600, description=_SETTLE)] = 30,
    min_samples: Annotated[int, Query(ge=1, le=100_000, description=_MIN_SAMPLES)] = 10,
    group_s: Annotated[float, Query(ge=0, le=600, description=_GROUP)] = 10,
) -> JournalOut:
    """Tuning steps in time order, each with its before/after impact per replica channel; a
    step that changed a replica's applier workers or relaxed its flush settings also with the
    capacity predicted for it (from the source's writes; from its fsync cost) and the capacity
    measured after it."""
    settings = JournalSettings(width_s, settle_s, min_samples, group_s)
    found = journal.journal(session, cluster_id, window.start, window.end, settings, raw)
    return journal_out(predicted(session, found, app_settings.replica_cores or None))


_EXPORT_TYPES = {"csv": "text/csv; charset=utf-8", "md": "text/markdown; charset=utf-8"}


@router.get(
    "/clusters/{cluster_id}/journal/export",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}, "text/markdown": {}}}},
)
def export_journal(
    cluster_id: PathId,
    window: TimeRangeDep,
    _: PrincipalDep,
    session: SessionDep,
    app_settings: SettingsDep,
    raw: RawSeriesDep,
    format: Annotated[Literal["csv", "md"], Query(description="csv or md (Markdown)")] = "csv",
    width_s: Annotated[float, Query(ge=1, le=86_400, description=_WIDTH)] = 600,
    settle_s: Annotated[float, Query(ge=0, le=3_600, description=_SETTLE)] = 30,
    min_samples: Annotated[int, Query(ge=1, le=100_000, description=_MIN_SAMPLES)] = 10,
    group_s: Annotated[float, Query(ge=0, le=600, description=_GROUP)] = 10,
) -> Response:
    """The journal as a table to paste into a ticket (step, when, what changed, each replica's
    lag p95 before → after, verdict with its reason, predicted vs measured capacity),
    downloaded as CSV or Markdown. The header ``X-Lagscope-Truncated: true`` says more steps
    follow (ask again from the last one)."""
    settings = JournalSettings(width_s, settle_s, min_samples, group_s)
    found = predicted(
        session,
        journal.journal(session, cluster_id, window.start, window.end, settings, raw),
        app_settings.replica_cores or None,
    )
    stamp = window.start.strftime("%Y%m%dT%H%M%SZ")
    filename = f"lagscope-journal-{cluster_id}-{stamp}.{format}"
    return Response(
        journal_export.export(found, format),
        media_type=_EXPORT_TYPES[format],
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "X-Lagscope-Truncated": "true" if found.truncated else "false",
        },
    )
