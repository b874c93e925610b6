"""How much parallelism the source's writes offer a replica: the newest binlog window of the
cluster's source, simulated under the commit-parent rule for 1…16 workers
(analysis/parallel_apply.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.analysis.parallel_apply import (
    WORKER_COUNTS,
    Trx,
    from_commit_groups,
    from_parents,
    independent,
    mean_group_size,
    speedups,
)
from lagscope.errors import NotFound
from lagscope.models import Cluster, CommitSample, Instance


@dataclass(frozen=True, slots=True)
class Parallelism:
    source: str | None
    sampled_at: datetime | None
    transactions: int
    groups: int  # group commits (MariaDB) or distinct commit parents (MySQL)
    mean_group_size: float
    conservative: dict[int, float]  # workers → speed-up (MariaDB conservative; LOGICAL_CLOCK)
    optimistic: dict[int, float]  # the bound without commit parents
    # Why the newest run read no window (a MySQL source without REPLICATION SLAVE …).
    problem: str | None = None


def parallelism(session: Session, cluster_id: int) -> Parallelism:
    if session.get(Cluster, cluster_id) is None:
        raise NotFound(f"cluster {cluster_id} not found")
    row = session.execute(
        select(CommitSample, Instance.name)
        .join(Instance, Instance.id == CommitSample.instance_id)
        .where(Instance.cluster_id == cluster_id, CommitSample.transactions > 0)
        .order_by(CommitSample.taken_at.desc())
        .limit(1)
    ).first()
    if row is None:
        return Parallelism(None, None, 0, 0, 0.0, {}, {}, _problem(session, cluster_id))
    sample, source = row
    trxs = _transactions(sample)
    conservative, optimistic = _tables(trxs)
    return Parallelism(
        source=source,
        sampled_at=sample.taken_at,
        transactions=len(trxs),
        groups=len(sample.groups) if not sample.parents else len({t.last_committed for t in trxs}),
        mean_group_size=mean_group_size(trxs),
        conservative=conservative,
        optimistic=optimistic,
    )


def _problem(session: Session, cluster_id: int) -> str | None:
    """The newest run's reason for reading nothing, when it had one."""
    newest = session.execute(
        select(CommitSample.problem, Instance.name)
        .join(Instance, Instance.id == CommitSample.instance_id)
        .where(Instance.cluster_id == cluster_id)
        .order_by(CommitSample.taken_at.desc())
        .limit(1)
    ).first()
    if newest is None or newest[0] is None:
        return None
    return f"{newest[1]}: {newest[0]}"


def _transactions(sample: CommitSample) -> list[Trx]:
    if sample.parents:
        return from_parents([(int(lc), int(seq), float(size)) for lc, seq, size in sample.parents])
    return from_commit_groups([[float(c) for c in g] for g in sample.groups])


def _tables(trxs: list[Trx]) -> tuple[dict[int, float], dict[int, float]]:
    """(conservative, optimistic) speed-ups for every worker count."""
    return speedups(trxs, WORKER_COUNTS), speedups(independent(trxs), WORKER_COUNTS)


def speedups_at(
    session: Session, cluster_id: int, at: datetime
) -> tuple[dict[int, float], dict[int, float]] | None:
    """(conservative, optimistic) from the cluster's newest window taken at or before ``at``
    (the source's writes as they were when the step was made), else the first one after."""
    base = (
        select(CommitSample)
        .join(Instance, Instance.id == CommitSample.instance_id)
        .where(Instance.cluster_id == cluster_id, CommitSample.transactions > 0)
    )
    sample = (
        session.scalars(
            base.where(CommitSample.taken_at <= at).order_by(CommitSample.taken_at.desc()).limit(1)
        ).first()
        or session.scalars(
            base.where(CommitSample.taken_at > at).order_by(CommitSample.taken_at).limit(1)
        ).first()
    )
    return None if sample is None else _tables(_transactions(sample))
