"""One look at Lagscope's own state: the store, the broker, the processes' reports, the newest
tick and the oldest undelivered webhook, as :class:`lagscope.analysis.readiness.Facts`."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import and_, case, exists, func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.readiness import Facts, ProcessSeen
from lagscope.analysis.shards import shard_of
from lagscope.config import Settings
from lagscope.health import broker
from lagscope.models import Cluster, Delivery, Instance, LagscopeProcess, ShardLease

# The engine and shard count a look assumes when not told (those of a process run with no
# LAGSCOPE_POLL_ENGINE or LAGSCOPE_SHARDS set); a process's own look uses :func:`gather_with`.
DEFAULT_ENGINE = str(Settings.model_fields["poll_engine"].default)
DEFAULT_SHARDS = int(Settings.model_fields["shards"].default)


def gather(
    sessions: sessionmaker[Session],
    broker_url: str,
    report_every_s: float,
    now_s: float,
    poll_engine: str = DEFAULT_ENGINE,
    shards: int = DEFAULT_SHARDS,
) -> Facts:
    look = broker.look(broker_url)
    facts = Facts(
        now_s=now_s,
        report_every_s=report_every_s,
        broker_error=look.error,
        queue_depth=look.queue_depth,
        poll_engine=poll_engine,
    )
    try:
        with sessions() as session:
            found = _from_store(session, facts)
            return _owners(session, found, shards) if poll_engine == "owner" else found
    except SQLAlchemyError as exc:
        # The class only: a driver's message may name the server and user.
        cause = getattr(exc, "orig", None) or exc
        return replace(facts, store_error=type(cause).__name__)


def gather_with(sessions: sessionmaker[Session], settings: Settings, now_s: float) -> Facts:
    """:func:`gather` with the process's settings."""
    return gather(
        sessions,
        settings.broker_url,
        settings.report_every_s,
        now_s,
        settings.poll_engine,
        settings.shards,
    )


def _from_store(session: Session, facts: Facts) -> Facts:
    processes = tuple(
        ProcessSeen(
            p.kind,
            p.name,
            p.seen_at.timestamp(),
            p.last_dispatch_at.timestamp() if p.last_dispatch_at else None,
        )
        for p in session.scalars(select(LagscopeProcess))
    )
    polled = exists().where(Instance.cluster_id == Cluster.id, Instance.enabled.is_(True))
    clusters, fastest, newest, heartbeat = session.execute(
        select(
            func.count(Cluster.id),
            func.min(Cluster.poll_interval_s),
            func.max(Cluster.last_tick_at),
            # SUM(CASE …), not COUNT(…) FILTER: MySQL and MariaDB have no FILTER clause.
            func.sum(case((Cluster.heartbeat_mode == "lagscope", 1), else_=0)),
        ).where(and_(Cluster.enabled.is_(True), polled))
    ).one()
    pending, oldest = session.execute(
        select(func.count(Delivery.id), func.min(Delivery.created_at)).where(
            Delivery.status == "pending"
        )
    ).one()
    return replace(
        facts,
        processes=processes,
        clusters=int(clusters or 0),
        fastest_interval_s=float(fastest) if fastest is not None else None,
        newest_tick_s=newest.timestamp() if newest is not None else None,
        heartbeat_clusters=int(heartbeat or 0),
        pending_deliveries=int(pending or 0),
        oldest_pending_s=oldest.timestamp() if oldest is not None else None,
    )


def _owners(session: Session, facts: Facts, shards: int) -> Facts:
    """The poll owners holding a live lease, and the enabled clusters in shards none covers."""
    live = session.execute(
        select(ShardLease.shard, ShardLease.owner).where(
            ShardLease.owner.is_not(None), ShardLease.expires_at > facts.now_s
        )
    ).all()
    held = {shard for shard, _ in live}
    owners = len({owner for _, owner in live})
    polled = exists().where(Instance.cluster_id == Cluster.id, Instance.enabled.is_(True))
    cluster_ids = session.scalars(select(Cluster.id).where(Cluster.enabled.is_(True), polled))
    unowned = sum(1 for cid in cluster_ids if shard_of(cid, shards) not in held)
    return replace(facts, owners=owners, unowned_clusters=unowned)
