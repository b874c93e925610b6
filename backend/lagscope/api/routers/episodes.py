"""Routes: a cluster's lag episodes, one episode with its cause timeline, and the cause
segments over a window (the why strip)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from lagscope.api.deps import PrincipalDep, SessionDep
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.api.schemas.episodes import ClusterCausesOut, EpisodeOut, EpisodesOut
from lagscope.api.schemas.window import From, TimeRange, To, from_to
from lagscope.history import episodes as episodes_service

router = APIRouter(tags=["episodes"])


def episodes_window(start: From = None, end: To = None) -> TimeRange:
    """Default: the 30 days before ``to`` (episodes are few; the list is newest first)."""
    return from_to(start, end, timedelta(days=30))


def causes_window(start: From = None, end: To = None) -> TimeRange:
    """Default: the 24 hours before ``to``, like the lag chart it sits under."""
    return from_to(start, end, timedelta(hours=24))


@router.get("/clusters/{cluster_id}/episodes", response_model=EpisodesOut)
def list_cluster_episodes(
    cluster_id: PathId,
    window: Annotated[TimeRange, Depends(episodes_window)],
    _: PrincipalDep,
    session: SessionDep,
    channel_id: QueryId | None = None,
    limit: Annotated[int, Query(ge=1, le=episodes_service.MAX_EPISODES)] = 100,
) -> EpisodesOut:
    """Episodes overlapping ``[from, to)``, newest first: replica, start, duration, peak, the
    main cause and how it ended (by itself, or after a tuning step: which change)."""
    found = episodes_service.list_episodes(
        session, cluster_id, window.start, window.end, datetime.now(UTC), channel_id, limit
    )
    return EpisodesOut.model_validate({"episodes": found})


@router.get("/episodes/{episode_id}", response_model=EpisodeOut)
def get_episode(episode_id: PathId, principal: PrincipalDep, session: SessionDep) -> EpisodeOut:
    """One episode with its cause timeline and evidence, the cluster's other replicas' peak lag
    during it, and the parameter changes inside it. Statements as digests; their full text
    (``*_statement_text``, when an admin keeps it) to editors and admins only."""
    found = episodes_service.get_episode(
        session, episode_id, datetime.now(UTC), full_text=principal.can("editor")
    )
    return EpisodeOut.model_validate(found)


@router.get("/clusters/{cluster_id}/causes", response_model=ClusterCausesOut)
def get_cluster_causes(
    cluster_id: PathId,
    window: Annotated[TimeRange, Depends(causes_window)],
    principal: PrincipalDep,
    session: SessionDep,
) -> ClusterCausesOut:
    """Per channel, the cause segments overlapping ``[from, to)`` in time order. Statements as
    digests; their full text (when kept) to editors and admins only."""
    found = episodes_service.cluster_causes(
        session, cluster_id, window.start, window.end, full_text=principal.can("editor")
    )
    return ClusterCausesOut.model_validate({"channels": found})
