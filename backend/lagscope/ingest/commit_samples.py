"""Every few minutes, a window of each MariaDB source's binlog, grouped by group commit.

Each run reads, per source, the window that starts where the previous run left its mark, then
marks the source's position for the next: two statements, a bounded read
(collectors/binlog_sample.py). The store keeps the groups (transaction sizes), not the
speed-ups: those are computed when asked (history/parallelism.py), so a better simulation
applies to the samples already stored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.collectors.binlog_sample import BinlogMark, CommitGroups, read_mark, read_window
from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.targets import AllowList
from lagscope.errors import CredentialsUnreadable, LagscopeError
from lagscope.inventory.instances import connection_spec
from lagscope.models import Cluster, CommitSample, Instance
from lagscope.security.secret_box import SecretBox

log = logging.getLogger(__name__)

KEEP = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class SourceToSample:
    instance_id: int
    spec: ConnectionSpec
    mark: BinlogMark | None


def sources(
    session: Session, box: SecretBox, allowed: AllowList | None, timeout_s: float
) -> list[SourceToSample]:
    """The enabled MariaDB sources of enabled clusters, each with its newest mark."""
    found: list[SourceToSample] = []
    rows = session.scalars(
        select(Instance)
        .join(Cluster)
        .where(
            Cluster.enabled.is_(True),
            Instance.enabled.is_(True),
            Instance.role == "source",
            Instance.flavor == "mariadb",
        )
        .order_by(Instance.id)
    )
    for instance in rows:
        newest = session.scalars(
            select(CommitSample)
            .where(CommitSample.instance_id == instance.id)
            .order_by(CommitSample.taken_at.desc())
            .limit(1)
        ).first()
        mark = None
        if newest is not None and newest.next_file and newest.next_pos is not None:
            mark = BinlogMark(newest.next_file, newest.next_pos)
        try:
            spec = connection_spec(box, instance, timeout_s, timeout_s * 2, allowed)
        except CredentialsUnreadable:
            continue
        found.append(SourceToSample(instance.id, spec, mark))
    return found


def read(source: SourceToSample) -> tuple[CommitGroups | None, BinlogMark | None]:
    """The window after the mark (None on the first run or when the mark's file is gone),
    then the new mark."""
    executor = PyMySQLExecutor(source.spec)
    try:
        groups = None
        if source.mark is not None:
            try:
                groups = read_window(executor, source.mark)
            except LagscopeError as exc:  # purged or rotated away: start again from a new mark
                log.info("binlog window of instance %s not read: %s", source.instance_id, exc)
        return groups, read_mark(executor)
    finally:
        executor.close()


def sample_all(
    sessions: sessionmaker[Session],
    box: SecretBox,
    allowed: AllowList | None,
    now_s: float,
    timeout_s: float = 3.0,
) -> int:
    """One run over every source; returns the windows stored. One unreachable source costs the
    others nothing but its timeout."""
    with sessions() as session:
        todo = sources(session, box, allowed, timeout_s)
    stored = 0
    now = datetime.fromtimestamp(now_s, UTC)
    for source in todo:
        try:
            groups, mark = read(source)
        except LagscopeError as exc:
            log.info("binlog sample of instance %s skipped: %s", source.instance_id, exc)
            continue
        with sessions() as session, session.begin():
            session.add(
                CommitSample(
                    instance_id=source.instance_id,
                    taken_at=now,
                    transactions=groups.transactions if groups else 0,
                    groups=[list(g) for g in groups.groups] if groups else [],
                    next_file=mark.file if mark else None,
                    next_pos=mark.pos if mark else None,
                )
            )
            session.execute(delete(CommitSample).where(CommitSample.taken_at < now - KEEP))
        stored += bool(groups and groups.transactions)
    return stored
