"""Routes: the lag check for proxies and throttlers, and the check tokens they use.

``GET /check/{cluster}/{replica}`` answers 200 when the replica is usable for reads, 429 when it
is not (lagging past ``max_lag``, replication stopped or broken, the server not answering), 503
when Lagscope cannot judge (no recent poll, the store unreachable); ``GET /check/{cluster}``
answers for every enabled replica of the cluster at once (200 only if all are usable). HEAD
answers the same without a body (gh-ost's ``--throttle-http`` sends HEAD).

A check never speaks to a monitored server: it reads what polling stored (history/lag_check.py,
two small indexed reads) and judges it (analysis/lag_check.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials

from lagscope.analysis.codes import LagSource
from lagscope.analysis.eta import eta_from_json
from lagscope.analysis.lag_check import (
    CheckVerdict,
    Thresholds,
    http_status,
    reason,
    thresholds,
    worst,
)
from lagscope.api.deps import AdminDep, BearerCredentialsDep, SessionDep, check_caller
from lagscope.api.schemas.check import (
    CheckCauseOut,
    CheckTokenCreatedOut,
    CheckTokenIn,
    CheckTokenOut,
    ClusterCheckOut,
    ReplicaCheckOut,
)
from lagscope.api.schemas.common import PathId
from lagscope.config import Settings
from lagscope.errors import InvalidInput, NotFound
from lagscope.history.episodes import current_causes
from lagscope.history.lag_check import CheckedCluster, CheckedReplica, judge_replica, read_cluster
from lagscope.security import check_tokens

router = APIRouter(tags=["check"])

MAX_LAG_LIMIT_S = 366 * 86400.0
_NO_STORE = {"Cache-Control": "no-store"}

Ref = Annotated[str, Path(min_length=1, max_length=128, description="a name, or an id")]
MaxLag = Annotated[
    float | None,
    Query(
        gt=0,
        le=MAX_LAG_LIMIT_S,
        allow_inf_nan=False,
        description="seconds; over it a replica is not usable (default: LAGSCOPE_CHECK_MAX_LAG_S)",
    ),
]
RecoverLag = Annotated[
    float | None,
    Query(
        ge=0,
        le=MAX_LAG_LIMIT_S,
        allow_inf_nan=False,
        description="seconds, at most max_lag; once over max_lag, a replica is usable again "
        "at or under it (default: LAGSCOPE_CHECK_RECOVER_RATIO × max_lag)",
    ),
]
_ANSWERS: dict[int | str, dict[str, Any]] = {
    429: {"description": "Not usable: lagging, recovering, stopped, broken or not answering"},
    503: {"description": "Lagscope cannot judge: no recent poll, or the store is unreachable"},
}


@router.get(
    "/check/{cluster}/{replica}",
    response_model=ReplicaCheckOut,
    responses={429: {**_ANSWERS[429], "model": ReplicaCheckOut}, 503: _ANSWERS[503]},
)
def check_replica(
    cluster: Ref,
    replica: Ref,
    request: Request,
    credentials: BearerCredentialsDep,
    max_lag: MaxLag = None,
    recover_lag: RecoverLag = None,
) -> Response:
    """Is this replica usable for reads: 200 yes, 429 no, 503 Lagscope cannot judge. Accepts a
    check token for the cluster (Bearer, or as the Basic password) or any user's token."""
    limits, found, now = _read(request, credentials, cluster, replica, max_lag, recover_lag)
    if not found.replicas:
        raise NotFound(f"cluster {found.name!r} has no instance {replica!r}")
    out = _replica_out(found, found.replicas[0], limits, now)
    return _answer(out.model_dump(mode="json"), http_status(CheckVerdict(out.verdict)))


@router.head("/check/{cluster}/{replica}", include_in_schema=False)
def check_replica_head(
    cluster: Ref,
    replica: Ref,
    request: Request,
    credentials: BearerCredentialsDep,
    max_lag: MaxLag = None,
    recover_lag: RecoverLag = None,
) -> Response:
    return check_replica(cluster, replica, request, credentials, max_lag, recover_lag)


@router.get(
    "/check/{cluster}",
    response_model=ClusterCheckOut,
    responses={429: {**_ANSWERS[429], "model": ClusterCheckOut}, 503: _ANSWERS[503]},
)
def check_cluster(
    cluster: Ref,
    request: Request,
    credentials: BearerCredentialsDep,
    max_lag: MaxLag = None,
    recover_lag: RecoverLag = None,
) -> Response:
    """Every enabled replica of the cluster at once: 200 only if all are usable (for a
    migration tool's throttle, e.g. gh-ost ``--throttle-http``), 429 if one is not, 503 if
    Lagscope cannot judge one (and none is known to be unusable)."""
    limits, found, now = _read(request, credentials, cluster, None, max_lag, recover_lag)
    replicas = [_replica_out(found, r, limits, now) for r in found.replicas if r.enabled]
    decided = worst(CheckVerdict(r.verdict) for r in replicas) or CheckVerdict.NO_REPLICAS
    deciding = next((r for r in replicas if r.verdict == decided), None)
    words = f"{deciding.replica}: {deciding.reason}" if deciding else reason(decided, None, limits)
    if decided is CheckVerdict.USABLE:
        words = f"all {len(replicas)} replicas are within max_lag {limits.max_lag_s:g} s"
    out = ClusterCheckOut(
        cluster=found.name,
        verdict=decided.value,
        usable=decided is CheckVerdict.USABLE,
        reason=words,
        max_lag_s=limits.max_lag_s,
        recover_lag_s=limits.recover_lag_s,
        replicas=replicas,
    )
    return _answer(out.model_dump(mode="json"), http_status(decided))


@router.head("/check/{cluster}", include_in_schema=False)
def check_cluster_head(
    cluster: Ref,
    request: Request,
    credentials: BearerCredentialsDep,
    max_lag: MaxLag = None,
    recover_lag: RecoverLag = None,
) -> Response:
    return check_cluster(cluster, request, credentials, max_lag, recover_lag)


def _read(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None,
    cluster: str,
    replica: str | None,
    max_lag: float | None,
    recover_lag: float | None,
) -> tuple[Thresholds, CheckedCluster, datetime]:
    settings: Settings = request.app.state.settings
    limits = _limits(settings, max_lag, recover_lag)
    # One transaction opened here rather than by dependencies (each sync dependency is a hop
    # to the thread pool and back): a check is small, and asked often.
    with request.app.state.sessions() as session, session.begin():
        caller = check_caller(request, session, credentials)
        now = datetime.now(UTC)
        found = read_cluster(
            session, caller.token_hash, cluster, replica, settings.check_window_polls, now
        )
    return limits, found, now


def _answer(body: dict[str, Any], status: int) -> Response:
    return JSONResponse(body, status_code=status, headers=_NO_STORE)


def _limits(settings: Settings, max_lag: float | None, recover_lag: float | None) -> Thresholds:
    chosen = max_lag if max_lag is not None else settings.check_max_lag_s
    try:
        return thresholds(chosen, recover_lag, settings.check_recover_ratio)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def _replica_out(
    found: CheckedCluster, replica: CheckedReplica, limits: Thresholds, now: datetime
) -> ReplicaCheckOut:
    decided, judgement, channel = judge_replica(found, replica, limits, now)
    causes = current_causes(channel.causes) if channel and channel.episode_id else []
    eta = eta_from_json(channel.eta) if channel else None
    at = judgement.sample_at
    return ReplicaCheckOut(
        cluster=found.name,
        replica=replica.name,
        verdict=decided.value,
        usable=decided is CheckVerdict.USABLE,
        reason=reason(decided, judgement.lag_s, limits),
        lag_s=judgement.lag_s,
        lag_source=(
            LagSource(channel.lag_source).label
            if channel and channel.lag_source is not None and judgement.lag_s is not None
            else None
        ),
        channel=channel.name if channel else None,
        sample_at=at,
        age_s=round((now - at).total_seconds(), 3) if at else None,
        cause=(
            CheckCauseOut(cause=causes[0].cause, words=causes[0].words, since=causes[0].since)
            if causes
            else None
        ),
        eta_s=eta.seconds if eta else None,
        max_lag_s=limits.max_lag_s,
        recover_lag_s=limits.recover_lag_s,
    )


# -- check tokens -----------------------------------------------------------------------------


@router.post("/check-tokens", response_model=CheckTokenCreatedOut, status_code=201)
def create_check_token(
    body: CheckTokenIn, principal: AdminDep, session: SessionDep, response: Response
) -> CheckTokenCreatedOut:
    """A read-only token for proxies and throttlers, accepted by the check routes only and only
    for these clusters (admins); shown once."""
    info, token = check_tokens.create_check_token(
        session, body.name, body.clusters, principal.username
    )
    response.headers.update(_NO_STORE)
    return CheckTokenCreatedOut.model_validate({**_token_fields(info), "token": token})


@router.get("/check-tokens", response_model=list[CheckTokenOut])
def list_check_tokens(_: AdminDep, session: SessionDep) -> list[CheckTokenOut]:
    """Every check token (admins), never the tokens themselves."""
    return [
        CheckTokenOut.model_validate(_token_fields(info))
        for info in check_tokens.list_check_tokens(session)
    ]


@router.delete("/check-tokens/{token_id}", status_code=204, response_class=Response)
def revoke_check_token(token_id: PathId, _: AdminDep, session: SessionDep) -> Response:
    """Revoke a check token: its next check answers 401."""
    check_tokens.revoke_check_token(session, token_id)
    return Response(status_code=204)


def _token_fields(info: check_tokens.CheckTokenInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "name": info.name,
        "clusters": info.clusters,
        "cluster_ids": info.cluster_ids,
        "created_by": info.created_by,
        "created_at": info.created_at,
        "last_used_at": info.last_used_at,
    }
