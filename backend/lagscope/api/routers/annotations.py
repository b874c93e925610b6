"""Routes: annotations, the journal's notes (editors write them, and change or delete only their
own unless admin; everyone signed in reads). Tagged ``steps`` with the journal, as before."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from lagscope.api.deps import EditorDep, PrincipalDep, SessionDep
from lagscope.api.schemas.annotations import (
    AnnotationIn,
    AnnotationOut,
    AnnotationPatch,
    GrafanaAnnotationIn,
    GrafanaAnnotationOut,
    annotation_out,
)
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.api.schemas.window import TimeRange, time_range
from lagscope.journal import annotations as notes_service
from lagscope.journal import grafana

router = APIRouter(tags=["steps"])
# Grafana's own path, outside /api/v1: a deploy tool that posts annotations to Grafana posts
# here by changing only its base URL.
grafana_router = APIRouter(tags=["steps"])
TimeRangeDep = Annotated[TimeRange, Depends(time_range)]


@router.get("/annotations", response_model=list[AnnotationOut])
def list_annotations(
    cluster_id: QueryId, window: TimeRangeDep, _: PrincipalDep, session: SessionDep
) -> list[AnnotationOut]:
    """Notes overlapping the window, by start time."""
    notes = notes_service.list_annotations(session, cluster_id, window.start, window.end)
    return [annotation_out(a) for a in notes]


@router.post("/annotations", response_model=AnnotationOut, status_code=201)
def create_annotation(
    body: AnnotationIn, principal: EditorDep, session: SessionDep
) -> AnnotationOut:
    note = notes_service.create_annotation(
        session,
        body.cluster_id,
        principal.username,
        body.starts_at,
        body.text,
        body.ends_at,
        body.tags,
        body.instance_id,
        body.channel_id,
        author_id=principal.user_id,
    )
    return annotation_out(note)


@router.get("/annotations/{annotation_id}", response_model=AnnotationOut)
def get_annotation(annotation_id: PathId, _: PrincipalDep, session: SessionDep) -> AnnotationOut:
    return annotation_out(notes_service.get_annotation(session, annotation_id))


@router.patch("/annotations/{annotation_id}", response_model=AnnotationOut)
def update_annotation(
    annotation_id: PathId, body: AnnotationPatch, principal: EditorDep, session: SessionDep
) -> AnnotationOut:
    note = notes_service.get_annotation(session, annotation_id)
    notes_service.require_author_or_admin(principal, note)
    changes = body.model_dump(exclude_unset=True)
    return annotation_out(
        notes_service.update_annotation(session, note, changes, principal.username)
    )


@router.delete("/annotations/{annotation_id}", status_code=204, response_class=Response)
def delete_annotation(annotation_id: PathId, principal: EditorDep, session: SessionDep) -> Response:
    note = notes_service.get_annotation(session, annotation_id)
    notes_service.require_author_or_admin(principal, note)
    notes_service.delete_annotation(session, note)
    return Response(status_code=204)


ClusterRef = Annotated[
    str | None,
    Query(
        max_length=128,
        description="The cluster's name or id; else a tag 'cluster:NAME' says which.",
    ),
]


@router.post("/annotations/grafana", response_model=GrafanaAnnotationOut)
@grafana_router.post(
    "/api/annotations",
    response_model=GrafanaAnnotationOut,
    operation_id="create_grafana_annotation_on_grafanas_path",
)
def create_grafana_annotation(
    body: GrafanaAnnotationIn, principal: EditorDep, session: SessionDep, cluster: ClusterRef = None
) -> GrafanaAnnotationOut:
    """A note from Grafana's annotation body: the cluster from ``?cluster=`` or a
    ``cluster:NAME`` tag, one server with an ``instance:NAME`` tag."""
    note = grafana.create_from_grafana(
        session,
        text=body.text,
        tags=body.tags,
        time_ms=body.time,
        time_end_ms=body.time_end,
        cluster=cluster,
        author=principal.username,
        author_id=principal.user_id,
    )
    return GrafanaAnnotationOut(message="Annotation added", id=note.id)
