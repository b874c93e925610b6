"""Check tokens: read-only bearer tokens for proxies and throttlers (HAProxy's health checks, a
ProxySQL scheduler, gh-ost's ``--throttle-http``).

A check token is accepted by the lag check routes only (``/api/v1/check/…``) and only for the
clusters it lists: every other route looks tokens up among the users' tokens, where it is not,
so it answers 401 there. It is made, listed and revoked by an admin (the API or ``lagscope
check-token``), shown once when made and stored as its SHA-256 only. A token asking about a
cluster outside its list gets the same 404 as for a cluster that does not exist: it learns
nothing about the others.

The list holds cluster ids (rows of ``check_token_clusters`` that go with their cluster): a
cluster deleted and another created later under its name is not in the token's list.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, select, update
from sqlalchemy.orm import Session, selectinload

from lagscope.errors import InvalidInput, NotAuthenticated, NotFound
from lagscope.models import CheckToken, CheckTokenCluster, Cluster
from lagscope.security.users import token_digest

CHECK_TOKEN_PREFIX = "lgc_"  # "lgs_" is a user's token: the prefix tells them apart in logs
LAST_USED_EVERY = timedelta(minutes=1)
MAX_CLUSTERS = 1000


@dataclass(frozen=True, slots=True)
class CheckTokenInfo:
    """A check token as listed (never the token itself)."""

    id: int
    name: str
    clusters: list[str]
    cluster_ids: list[int]
    created_by: str
    created_at: datetime
    last_used_at: datetime | None


def is_check_token(token: str) -> bool:
    return token.startswith(CHECK_TOKEN_PREFIX)


def create_check_token(
    session: Session, name: str, clusters: Sequence[str], created_by: str
) -> tuple[CheckTokenInfo, str]:
    """A new token for ``clusters`` (names, or ids; a name wins over an id) and its plaintext,
    to be shown once."""
    if not clusters:
        raise InvalidInput("clusters: name at least one cluster the token may ask about")
    if len(clusters) > MAX_CLUSTERS:
        raise InvalidInput(f"clusters: at most {MAX_CLUSTERS}")
    found = {_cluster(session, ref).id for ref in clusters}
    plaintext = CHECK_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = CheckToken(
        name=name,
        token_hash=token_digest(plaintext),
        created_by=created_by[:64],
        created_at=_now(),
        clusters=[CheckTokenCluster(cluster_id=cid) for cid in sorted(found)],
    )
    session.add(token)
    session.flush()
    return _info(session, token), plaintext


def list_check_tokens(session: Session) -> list[CheckTokenInfo]:
    tokens = session.scalars(
        select(CheckToken).options(selectinload(CheckToken.clusters)).order_by(CheckToken.id)
    ).all()
    names: dict[int, str] = {
        cid: name for cid, name in session.execute(select(Cluster.id, Cluster.name))
    }
    return [_info(session, token, names) for token in tokens]


def revoke_check_token(session: Session, token_id: int) -> None:
    """Deleted: its next check answers 401. Through the ORM, so the audit trail records it;
    its scope rows go with it (delete-orphan)."""
    token = session.get(CheckToken, token_id)
    if token is None:
        raise NotFound(f"check token {token_id} not found")
    session.delete(token)
    session.flush()


def scope_joins(query: Any, cluster_key: Any) -> Any:
    """``query`` narrowed to the clusters of the check token whose hash is bound as
    ``token_hash``, with the token's id and ``last_used_at`` as two more columns (:func:`used`
    takes them): the token is checked inside the check's own read, not by a query of its own.
    No row: the token is unknown (:func:`known` tells) or the cluster is not in its list."""
    return (
        query.add_columns(CheckToken.id, CheckToken.last_used_at)
        .join(CheckTokenCluster, CheckTokenCluster.cluster_id == cluster_key)
        .join(
            CheckToken,
            and_(
                CheckToken.id == CheckTokenCluster.token_id,
                CheckToken.token_hash == bindparam("token_hash"),
            ),
        )
    )


def known(session: Session, token_hash: str) -> bool:
    """Whether a check token with this hash exists (asked only when a check found nothing)."""
    return session.scalar(_KNOWN, {"token_hash": token_hash}) is not None


_KNOWN = select(CheckToken.id).where(CheckToken.token_hash == bindparam("token_hash"))


def used(session: Session, token_id: int, last_used_at: datetime | None) -> None:
    """Record the token's use, at most once a minute: a proxy checks every half second, and a
    write per check would take SQLite's write lock as often."""
    now = _now()
    if last_used_at is None or now - last_used_at >= LAST_USED_EVERY:
        session.execute(
            update(CheckToken).where(CheckToken.id == token_id).values(last_used_at=now)
        )


def unknown_token() -> NotAuthenticated:
    return NotAuthenticated("unknown or revoked check token")


def _cluster(session: Session, ref: str) -> Cluster:
    """By name, else by id (the convention of ``?cluster=`` elsewhere)."""
    found = session.scalar(select(Cluster).where(Cluster.name == ref))
    if found is None and ref.isdigit() and len(ref) < 10:
        found = session.get(Cluster, int(ref))
    if found is None:
        raise InvalidInput(f"clusters: cluster {ref!r} does not exist")
    return found


def _info(
    session: Session, token: CheckToken, names: dict[int, str] | None = None
) -> CheckTokenInfo:
    ids = [row.cluster_id for row in token.clusters]
    if names is None:
        found = session.execute(select(Cluster.id, Cluster.name).where(Cluster.id.in_(ids)))
        names = {cid: name for cid, name in found}
    return CheckTokenInfo(
        id=token.id,
        name=token.name,
        clusters=[names[cid] for cid in ids if cid in names],
        cluster_ids=ids,
        created_by=token.created_by,
        created_at=token.created_at,
        last_used_at=token.last_used_at,
    )


def _now() -> datetime:
    return datetime.now(UTC)
