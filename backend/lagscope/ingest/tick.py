"""``poll_cluster``: read every instance of a cluster at once and record the tick."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from lagscope.analysis.causes.episodes import CAUGHT_UP_HOLD_S
from lagscope.analysis.codes import Verdict
from lagscope.collectors.targets import AllowList
from lagscope.errors import CredentialsUnreadable
from lagscope.ingest import login_backoff
from lagscope.ingest.reader import ClusterReader, Reading, Target
from lagscope.ingest.recording import TickSummary, record_tick, stored_classes
from lagscope.inventory import server_logins as logins
from lagscope.inventory.instances import connection_spec, heartbeat_table
from lagscope.models import Channel, Cluster, Instance
from lagscope.security.secret_box import SecretBox

# Share of the poll interval the readers may take: the rest is for the write, so a tick ends
# before the next one starts.
DEADLINE_SHARE = 0.8
_BEHIND = frozenset({Verdict.RECEIVE_BOUND, Verdict.APPLY_BOUND})


def poll_cluster(
    session: Session,
    box: SecretBox,
    reader: ClusterReader,
    cluster_id: int,
    connect_timeout_s: float = 2.0,
    read_timeout_s: float = 2.0,
    params_every_s: float = 0.0,
    allowed: AllowList | None = None,
    backoff: logins.Backoff = logins.DEFAULT_BACKOFF,
    clock: Callable[[], float] = time.time,
    episode_caught_up_s: float = CAUGHT_UP_HOLD_S,
) -> TickSummary | None:
    """One tick. Returns None when the cluster is gone or disabled (a stale queued task).

    An instance backing off after a refused login is not tried; one whose password decrypts
    with no key is not tried either. Both are recorded as failed readings of that instance
    only: the others are read as usual."""
    cluster = session.scalar(
        select(Cluster)
        .where(Cluster.id == cluster_id)
        .options(selectinload(Cluster.instances).selectinload(Instance.channels))
    )
    if cluster is None or not cluster.enabled:
        return None
    heartbeat = heartbeat_table(cluster)
    extra = tuple(cluster.extra_params or ())
    now = datetime.fromtimestamp(clock(), UTC)
    targets: list[Target] = []
    skipped: list[Reading] = []
    for instance in cluster.instances:
        if not instance.enabled:
            continue
        if logins.waiting(instance, now):
            skipped.append(login_backoff.backing_off(instance, now))
            continue
        try:
            spec = connection_spec(box, instance, connect_timeout_s, read_timeout_s, allowed)
        except CredentialsUnreadable as exc:
            skipped.append(login_backoff.unreadable(instance, now, str(exc)))
            continue
        targets.append(Target(instance.id, spec, heartbeat, extra, params_every_s))
    deadline_s = min(cluster.poll_interval_s * DEADLINE_SHARE, connect_timeout_s + read_timeout_s)
    by_id = {i.id: i for i in cluster.instances}
    readings = [
        login_backoff.note(by_id[reading.instance_id], reading, backoff)
        for reading in [*reader.read(targets, deadline_s, behind_at_last_tick(cluster)), *skipped]
    ]
    return record_tick(session, cluster, readings, episode_caught_up_s)


def behind_at_last_tick(cluster: Cluster) -> set[int]:
    """Instances with a channel whose last stored poll (or verdict) says behind: the tick before
    this one may have run in another worker process, whose poll this process's poller never
    saw."""
    return {
        instance.id
        for instance in cluster.instances
        if any(c.gone_at is None and _behind(c) for c in instance.channels)
    }


def _behind(channel: Channel) -> bool:
    classes = stored_classes(channel)
    return channel.verdict in _BEHIND or (bool(classes) and classes[-1] in _BEHIND)


def due_clusters(session: Session, now_s: float) -> list[tuple[int, float]]:
    """Clusters whose interval has a tick in the current second, with their interval."""
    rows = session.execute(
        select(Cluster.id, Cluster.poll_interval_s).where(Cluster.enabled.is_(True))
    ).all()
    second = int(now_s)
    return [(cid, interval) for cid, interval in rows if second % max(1, round(interval)) == 0]
