"""Routes: the lag check for proxies and throttlers, and the check tokens they use.

``GET /check/{cluster}/{replica}`` answers 200 when the replica is usable for reads, 429 when it
is not (lagging past ``max_lag``, replication stopped or broken, the server not answering), 503
when Lagscope cannot judge (no recent poll, the store unreachable); ``GET /check/{cluster}``
answers for every enabled replica of the cluster at once (200 only if all are usable). HEAD
answers the same without a body (gh-ost's ``--throttle-http`` sends HEAD).

A check never speaks to a monitored server: it reads what polling stored, in two small indexed
reads — the cluster's instances and current channels (by the names' unique keys; a check
token's clusters joined to them, so the token is checked in the same read), then each channel's
polls of the hysteresis window (a range of the samples' ``(channel_id, ts)`` key). The
judgement is analysis/lag_check.py's. (These reads belong with the other status reads in
history/; they sit here while that package is being edited by others.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import Field
from sqlalchemy import and_, bindparam, func, or_, select
from sqlalchemy.orm import Session, aliased

from lagscope.analysis.codes import LagSource, Verdict, io_state_code
from lagscope.analysis.eta import eta_from_json
from lagscope.analysis.lag_check import (
    ChannelJudgement,
    CheckVerdict,
    Poll,
    Thresholds,
    http_status,
    judge_channel,
    reason,
    thresholds,
    worst,
)
from lagscope.api.deps import (
    AdminDep,
    BearerCredentialsDep,
    CheckCaller,
    SessionDep,
    check_caller,
)
from lagscope.api.schemas.common import Name, PathId, Schema
from lagscope.collectors.snapshot import IoState
from lagscope.config import Settings
from lagscope.errors import InvalidInput, NotFound
from lagscope.history.episodes import current_causes
from lagscope.history.status import STALE_POLLS
from lagscope.models import Channel, Cluster, Instance, Sample
from lagscope.security import check_tokens

router = APIRouter(tags=["check"])

MAX_LAG_LIMIT_S = 366 * 86400.0
_IO_NO = io_state_code(IoState.NO)
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
VerdictLabel = Literal[
    "usable",
    "broken",
    "stopped",
    "unreachable",
    "no_replication",
    "lag_unknown",
    "lagging",
    "recovering",
    "stale",
    "not_polled",
    "no_replicas",
]


class CheckCauseOut(Schema):
    """The strongest cause of the episode in progress (its label and words only: no server
    text reaches a check token)."""

    cause: str
    words: str
    since: datetime | None


class ReplicaCheckOut(Schema):
    cluster: str
    replica: str
    verdict: VerdictLabel = Field(description="usable: 200; stale, not_polled: 503; else 429")
    usable: bool
    reason: str
    lag_s: float | None = Field(description="the newest poll's lag (of the deciding channel)")
    lag_source: str | None = Field(
        description="heartbeat, applier, source_timeline or seconds_behind_source"
    )
    channel: str | None = Field(description="the channel that decided; '' is the default one")
    sample_at: datetime | None = Field(description="the newest poll judged")
    age_s: float | None
    cause: CheckCauseOut | None = Field(description="while a lag episode is open")
    eta_s: float | None = Field(description="time to catch up, when known")
    max_lag_s: float
    recover_lag_s: float


class ClusterCheckOut(Schema):
    cluster: str
    verdict: VerdictLabel = Field(description="the worst replica's")
    usable: bool
    reason: str
    max_lag_s: float
    recover_lag_s: float
    replicas: list[ReplicaCheckOut]


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
    settings: Settings = request.app.state.settings
    limits = _limits(settings, max_lag, recover_lag)
    # One transaction opened here rather than by dependencies (each sync dependency is a hop
    # to the thread pool and back): a check is small, and asked often.
    with request.app.state.sessions() as session, session.begin():
        caller = check_caller(request, session, credentials)
        now = datetime.now(UTC)
        found = _read(session, caller, cluster, replica, settings.check_window_polls, now)
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
    settings: Settings = request.app.state.settings
    limits = _limits(settings, max_lag, recover_lag)
    with request.app.state.sessions() as session, session.begin():
        caller = check_caller(request, session, credentials)
        now = datetime.now(UTC)
        found = _read(session, caller, cluster, None, settings.check_window_polls, now)
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


def _answer(body: dict[str, Any], status: int) -> Response:
    return JSONResponse(body, status_code=status, headers=_NO_STORE)


def _limits(settings: Settings, max_lag: float | None, recover_lag: float | None) -> Thresholds:
    chosen = max_lag if max_lag is not None else settings.check_max_lag_s
    try:
        return thresholds(chosen, recover_lag, settings.check_recover_ratio)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


# -- what polling stored ----------------------------------------------------------------------


@dataclass(slots=True)
class _Channel:
    id: int
    name: str
    causes: Any
    episode_id: int | None
    eta: Any
    polls: list[Poll] = field(default_factory=list)
    lag_source: int | None = None
    last_sample_at: datetime | None = None


@dataclass(slots=True)
class _Replica:
    id: int
    name: str
    enabled: bool
    last_polled_at: datetime | None
    failed: bool  # the newest poll of the server failed
    channels: list[_Channel] = field(default_factory=list)


@dataclass(slots=True)
class _Found:
    name: str
    stale_after_s: float
    replicas: list[_Replica]


def _read(
    session: Session,
    caller: CheckCaller,
    cluster_ref: str,
    replica_ref: str | None,
    window_polls: int,
    now: datetime,
) -> _Found:
    statement, params = _topology(caller, cluster_ref, replica_ref)
    rows = _by_name(session.execute(statement, params).all(), 1, cluster_ref)
    if not rows:
        if caller.token_hash is not None and not check_tokens.known(session, caller.token_hash):
            raise check_tokens.unknown_token()
        # Also for a cluster outside the token's list: the same answer as for none at all.
        raise NotFound(f"cluster {cluster_ref!r} not found")
    if caller.token_hash is not None:  # the token's id and last use, after the check's columns
        check_tokens.used(session, rows[0][13], rows[0][14])
    name, interval = rows[0][1], rows[0][2]
    if replica_ref is not None:
        rows = _by_name(rows, 4, replica_ref)
    replicas: dict[int, _Replica] = {}
    channels: dict[int, _Channel] = {}
    for row in rows:
        if row[3] is None:  # the cluster has no such instance (no replica)
            continue
        replica = replicas.get(row[3])
        if replica is None:
            replica = replicas[row[3]] = _Replica(
                row[3], row[4], row[5], row[6], row[7] is not None
            )
        if row[8] is not None:
            channel = _Channel(row[8], row[9], row[10], row[11], row[12])
            replica.channels.append(channel)
            channels[channel.id] = channel
    if channels:
        _read_polls(session, channels, now - timedelta(seconds=window_polls * interval))
    return _Found(name, STALE_POLLS * interval, list(replicas.values()))


def _topology(
    caller: CheckCaller, cluster_ref: str, replica_ref: str | None
) -> tuple[Any, dict[str, Any]]:
    """The cluster named (or numbered) ``cluster_ref`` within the caller's clusters, with the
    instance ``replica_ref`` (every replica when None) and its current channels: one read."""
    params: dict[str, Any] = {"cluster_name": cluster_ref}
    cluster_id, replica_id = _as_id(cluster_ref), _as_id(replica_ref)
    if cluster_id is not None:
        params["cluster_id"] = cluster_id
    if replica_ref is not None:
        params["instance_name"] = replica_ref
        if replica_id is not None:
            params["instance_id"] = replica_id
    if caller.token_hash is not None:
        params["token_hash"] = caller.token_hash
    shape = (
        cluster_id is not None,
        replica_ref is not None,
        replica_id is not None,
        caller.token_hash is not None,
    )
    return _topology_statement(*shape), params


@lru_cache(maxsize=16)
def _topology_statement(by_id: bool, one: bool, one_by_id: bool, scoped: bool) -> Any:
    """Built once per shape, its values bound at each check: a check builds no SQL."""
    instance_match: Any = Instance.role == "replica"
    if one:
        instance_match = Instance.name == bindparam("instance_name")
        if one_by_id:
            instance_match = or_(instance_match, Instance.id == bindparam("instance_id"))
    cluster_match: Any = Cluster.name == bindparam("cluster_name")
    if by_id:
        cluster_match = or_(cluster_match, Cluster.id == bindparam("cluster_id"))
    query = (
        select(
            Cluster.id,
            Cluster.name,
            Cluster.poll_interval_s,
            Instance.id,
            Instance.name,
            Instance.enabled,
            Instance.last_polled_at,
            Instance.last_error_kind,
            Channel.id,
            Channel.name,
            Channel.current_causes,
            Channel.episode_id,
            Channel.eta,
        )
        .select_from(Cluster)
        .outerjoin(Instance, and_(Instance.cluster_id == Cluster.id, instance_match))
        .outerjoin(Channel, and_(Channel.instance_id == Instance.id, Channel.gone_at.is_(None)))
        .where(cluster_match)
        .order_by(Instance.id, Channel.name)
    )
    if scoped:  # a check token: only its clusters, and the token checked in the same read
        query = check_tokens.scope_joins(query, Cluster.id)
    return query


def _as_id(ref: str | None) -> int | None:
    return int(ref) if ref is not None and ref.isdigit() and len(ref) < 10 else None


def _by_name(rows: Sequence[Any], at: int, ref: str) -> list[Any]:
    """A name wins over an id: when ``ref`` is one's name and another's id, the one named."""
    named = [r for r in rows if r[at] == ref]
    return named if named else list(rows)


_POLLS = (
    select(
        Sample.channel_id,
        Sample.ts,
        Sample.lag_s,
        Sample.lag_source,
        Sample.verdict,
        Sample.io_state,
        Sample.sql_running,
    )
    .where(
        Sample.channel_id.in_(bindparam("channels", expanding=True)),
        Sample.ts >= bindparam("since"),
    )
    .order_by(Sample.channel_id, Sample.ts)
)


def _read_polls(session: Session, channels: dict[int, _Channel], since: datetime) -> None:
    """Each channel's polls since ``since``, oldest first: a range of the samples' key each."""
    rows = session.execute(_POLLS, {"channels": sorted(channels), "since": since})
    for channel_id, ts, lag_s, lag_source, verdict, io_state, sql_running in rows:
        channel = channels[channel_id]
        channel.polls.append(
            Poll(
                at=ts,
                lag_s=lag_s,
                answered=io_state is not None or sql_running is not None,
                sql_running=sql_running,
                io_running=None if io_state is None else io_state != _IO_NO,
                broken=verdict == Verdict.BROKEN,
                caught_up=verdict == Verdict.CAUGHT_UP,
            )
        )
        channel.lag_source = lag_source
    quiet = [c for c in channels.values() if not c.polls]
    if quiet:  # no poll in the window: when was the last one (a seek on the key each)?
        newest = aliased(Sample)
        last = (
            select(func.max(newest.ts))
            .where(newest.channel_id == Channel.id)
            .correlate(Channel)
            .scalar_subquery()
        )
        for channel_id, at in session.execute(
            select(Channel.id, last).where(Channel.id.in_([c.id for c in quiet]))
        ):
            channels[channel_id].last_sample_at = at


def _replica_out(
    found: _Found, replica: _Replica, limits: Thresholds, now: datetime
) -> ReplicaCheckOut:
    judged: list[tuple[ChannelJudgement, _Channel | None]] = [
        (
            judge_channel(c.polls, now, found.stale_after_s, limits, c.last_sample_at),
            c,
        )
        for c in replica.channels
    ]
    if not judged:
        judged = [(_without_channel(replica, found.stale_after_s, now), None)]
    decided = worst(j.verdict for j, _ in judged)
    assert decided is not None
    judgement, channel = next((j, c) for j, c in judged if j.verdict is decided)
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


def _without_channel(replica: _Replica, stale_after_s: float, now: datetime) -> ChannelJudgement:
    """A server with no current channel: judged on its own newest poll."""
    polled = replica.last_polled_at
    if polled is None:
        return ChannelJudgement(CheckVerdict.NOT_POLLED, None, None)
    if (now - polled).total_seconds() > stale_after_s:
        return ChannelJudgement(CheckVerdict.STALE, None, polled)
    if replica.failed:
        return ChannelJudgement(CheckVerdict.UNREACHABLE, None, polled)
    return ChannelJudgement(CheckVerdict.NO_REPLICATION, None, polled)


# -- check tokens -----------------------------------------------------------------------------


class CheckTokenIn(Schema):
    name: Name
    clusters: list[Name] = Field(
        min_length=1, max_length=check_tokens.MAX_CLUSTERS, description="names, or ids"
    )


class CheckTokenOut(Schema):
    """A check token's metadata; the token itself is shown once, when made."""

    id: int
    name: str
    clusters: list[str]
    cluster_ids: list[int]
    created_by: str
    created_at: datetime
    last_used_at: datetime | None = Field(description="to the minute")


class CheckTokenCreatedOut(CheckTokenOut):
    token: str = Field(
        description="Send as 'Authorization: Bearer <token>' to /api/v1/check/… only. Shown once."
    )


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
