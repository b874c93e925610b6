"""``poll_cluster``: read every instance of a cluster at once and record the tick."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, joinedload

from lagscope.analysis.causes.episodes import CAUGHT_UP_HOLD_S
from lagscope.analysis.codes import Verdict
from lagscope.analysis.poll_gaps import tick_gap
from lagscope.collectors.targets import AllowList
from lagscope.config import Settings
from lagscope.errors import CredentialsUnreadable
from lagscope.ingest import login_backoff, tick_rows
from lagscope.ingest.reader import ClusterReader, PollResult, Target
from lagscope.ingest.recording import TickSummary, record_tick
from lagscope.ingest.tick_before import stored_classes
from lagscope.ingest.tick_cache import TickCache
from lagscope.ingest.tick_memory import TickMemory
from lagscope.ingest.tick_writes import TickWrites
from lagscope.inventory import server_logins as logins
from lagscope.inventory.instances import connection_spec, heartbeat_table
from lagscope.models import Channel, Cluster, Instance, PollGap
from lagscope.models.loaded import assign
from lagscope.security.secret_box import SecretBox

# Share of the poll interval the readers may take: the rest is for the write, so a tick ends
# before the next one starts.
DEADLINE_SHARE = 0.8
_BEHIND = frozenset({Verdict.RECEIVE_BOUND, Verdict.APPLY_BOUND})


@dataclass(frozen=True, slots=True)
class TickOptions:
    """How ticks read and record (the worker's settings)."""

    connect_timeout_s: float = 2.0
    read_timeout_s: float = 2.0
    params_every_s: float = 0.0
    allowed: AllowList | None = None
    backoff: logins.Backoff = logins.DEFAULT_BACKOFF
    clock: Callable[[], float] = time.time
    episode_caught_up_s: float = CAUGHT_UP_HOLD_S
    # The process that runs the tick (host:pid), kept with the cluster's last tick.
    worker: str | None = None
    # Keep statements' full text (values included) beside their digests (docs/security.md).
    keep_statement_text: bool = False


def options_from(settings: Settings, worker: str) -> TickOptions:
    """How a worker's ticks read and record, from its settings; ``worker`` names it."""
    return TickOptions(
        connect_timeout_s=settings.connect_timeout_s,
        read_timeout_s=settings.read_timeout_s,
        params_every_s=settings.params_every_s,
        allowed=settings.allow_list(),
        backoff=logins.Backoff(
            settings.login_backoff_base_s,
            settings.login_backoff_max_s,
            settings.login_give_up_after,
        ),
        episode_caught_up_s=settings.episode_caught_up_s,
        worker=worker,
        keep_statement_text=settings.keep_statement_text,
    )


@dataclass(slots=True)
class PreparedTick:
    """A cluster loaded (detached, its row locked) with what to read of it."""

    cluster: Cluster
    rows: tick_rows.TickRows
    targets: list[Target]
    skipped: list[PollResult]
    started: float
    deadline_s: float
    behind: set[int]
    prepare_s: float = 0.0
    memory: TickMemory = field(default_factory=TickMemory)


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
    worker: str | None = None,
) -> TickSummary | None:
    """One tick. Returns None when the cluster is gone or disabled (a stale queued task).

    An instance backing off after a refused login is not tried; one whose password decrypts
    with no key is not tried either. Both are recorded as failed readings of that instance
    only: the others are read as usual.

    ``worker`` names the process that ran the tick (host:pid), kept with the cluster's last
    tick; a tick that finds a hole since that one records it (analysis/poll_gaps.py)."""
    options = TickOptions(
        connect_timeout_s,
        read_timeout_s,
        params_every_s,
        allowed,
        backoff,
        clock,
        episode_caught_up_s,
        worker,
    )
    tick = prepare_tick(session, box, cluster_id, options)
    if tick is None:
        return None
    read_at = options.clock()
    readings = reader.read(tick.targets, tick.deadline_s, tick.behind)
    return record_prepared(session, tick, readings, options, options.clock() - read_at)


def prepare_tick(
    session: Session,
    box: SecretBox,
    cluster_id: int,
    options: TickOptions,
    cache: TickCache | None = None,
    revision: int | None = None,
) -> PreparedTick | None:
    """Load and lock the cluster, note a gap before this tick, and say what to read. None when
    the cluster is gone, disabled, or its previous tick still runs (and holds the row).

    With ``cache`` (a poll owner's, with the store's ``revision`` of the cluster) the cluster
    its last tick left in memory is used when nothing edited it since, and no row lock is taken:
    the shard's fence keeps every other tick out (ingest/tick_cache.py)."""
    started = options.clock()
    kept = cache.take(cluster_id, revision) if cache is not None and revision is not None else None
    memory = TickMemory()
    if kept is not None:
        cluster, rows, memory = kept.cluster, kept.rows, kept.memory
    else:
        loaded = _load(session, cluster_id, lock=cache is None)
        if loaded is None or not loaded.enabled:
            return None
        cluster, rows = loaded, tick_rows.detach(session, loaded)
    heartbeat = heartbeat_table(cluster)
    extra = tuple(cluster.extra_params or ())
    now = datetime.fromtimestamp(started, UTC)
    _note_gap(session, cluster, started, options.worker if cache is not None else None)
    targets: list[Target] = []
    skipped: list[PollResult] = []
    for instance in cluster.instances:
        if not instance.enabled:
            continue
        if logins.waiting(instance, now):
            skipped.append(login_backoff.backing_off(instance, now))
            continue
        try:
            spec = connection_spec(
                box, instance, options.connect_timeout_s, options.read_timeout_s, options.allowed
            )
        except CredentialsUnreadable as exc:
            skipped.append(login_backoff.unreadable(instance, now, str(exc)))
            continue
        targets.append(Target(instance.id, spec, heartbeat, extra, options.params_every_s))
    deadline_s = min(
        cluster.poll_interval_s * DEADLINE_SHARE,
        options.connect_timeout_s + options.read_timeout_s,
    )
    behind = behind_at_last_tick(cluster)
    prepared = PreparedTick(
        cluster, rows, targets, skipped, started, deadline_s, behind, memory=memory
    )
    prepared.prepare_s = options.clock() - started
    return prepared


def record_prepared(
    session: Session,
    tick: PreparedTick,
    read: Sequence[PollResult],
    options: TickOptions,
    read_s: float,
    writes: TickWrites | None = None,
) -> TickSummary:
    """Record the tick's readings (``read``: those of its targets; ``read_s``: how long the
    read took). The tick's duration is its own: preparing, reading, recording. ``writes``: the
    batch's, sent by the caller before it commits (None: sent here)."""
    send_now = writes is None
    writes = TickWrites() if writes is None else writes
    recording = options.clock()
    cluster = tick.cluster
    by_id = {i.id: i for i in cluster.instances}
    readings = [
        login_backoff.note(by_id[reading.instance_id], reading, options.backoff)
        for reading in [*read, *tick.skipped]
    ]
    _add_new_channels(session, tick.rows, cluster, readings)
    summary = record_tick(
        session,
        cluster,
        readings,
        options.episode_caught_up_s,
        options.keep_statement_text,
        writes,
        tick.memory,
    )
    took = tick.prepare_s + read_s + (options.clock() - recording)
    last_tick = datetime.fromtimestamp(tick.started, UTC)
    assign(
        cluster, {"last_tick_at": last_tick, "last_tick_s": took, "last_tick_by": options.worker}
    )
    tick.rows.collect(writes)
    if send_now:
        writes.send(session.connection())
    return summary


def _add_new_channels(
    session: Session, rows: tick_rows.TickRows, cluster: Cluster, readings: list[PollResult]
) -> None:
    """Channels a replica shows for the first time, stored before the tick is recorded (their
    samples need their ids)."""
    by_id = {i.id: i for i in cluster.instances}
    for reading in readings:
        if reading.snapshot is None:
            continue
        instance = by_id[reading.instance_id]
        known = {c.name for c in instance.channels}
        at = datetime.fromtimestamp(reading.read_at, UTC)
        new = [
            Channel(name=s.channel, first_seen_at=at)
            for s in reading.snapshot.channels
            if s.channel not in known
        ]
        if new:
            rows.add_channels(session, instance, new)


def _load(session: Session, cluster_id: int, lock: bool = True) -> Cluster | None:
    """The cluster with its instances and channels, its row locked for the tick: a tick that
    finds it locked (the previous one still running in another process) gets None and is
    skipped, so two ticks never record the same cluster at once. SQLite has no row locks, and
    needs none: one writer at a time.

    The lock is its own statement: PostgreSQL refuses FOR UPDATE next to the outer joins of the
    load, and one joined load costs half the CPU of the three statements of selectinload."""
    if lock and session.get_bind().dialect.name != "sqlite":
        row_lock = (
            select(Cluster.id).where(Cluster.id == cluster_id).with_for_update(skip_locked=True)
        )
        if session.execute(row_lock).first() is None:
            return None
    query = (
        select(Cluster)
        .where(Cluster.id == cluster_id)
        .options(joinedload(Cluster.instances).joinedload(Instance.channels))
    )
    return session.execute(query).unique().scalar_one_or_none()


def _note_gap(session: Session, cluster: Cluster, now_s: float, owner: str | None) -> None:
    """``owner``: the poll owner running this tick (None on Celery, whose ticks any worker of
    the pool may run: another process there is no sign of a loss)."""

    def epoch(moment: datetime | None) -> float | None:
        return moment.timestamp() if moment is not None else None

    gap = tick_gap(
        epoch(cluster.last_tick_at),
        cluster.last_tick_s,
        epoch(cluster.tick_expired_at),
        now_s,
        cluster.poll_interval_s,
        cluster.last_tick_by,
        owner,
    )
    if gap is not None:
        session.add(
            PollGap(
                cluster_id=cluster.id,
                started_at=datetime.fromtimestamp(gap.started_at, UTC),
                ended_at=datetime.fromtimestamp(gap.ended_at, UTC),
                missed=gap.missed,
                reason=gap.reason.value,
                detail=gap.detail,
            )
        )


def note_expired_tick(session: Session, cluster_id: int, at_s: float) -> None:
    """A tick of the cluster expired in the queue: the next tick names that as its gap's reason."""
    session.execute(
        update(Cluster)
        .where(Cluster.id == cluster_id)
        .values(tick_expired_at=datetime.fromtimestamp(at_s, UTC))
    )


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


# Built once: an owner asks every second, and building the statement cost more than running it.
_ENABLED_INSTANCES = (
    select(func.count(Instance.id))
    .where(Instance.cluster_id == Cluster.id, Instance.enabled.is_(True))
    .scalar_subquery()
)
_ENABLED_CLUSTERS = select(Cluster.id, Cluster.poll_interval_s, _ENABLED_INSTANCES).where(
    Cluster.enabled.is_(True)
)


def due_clusters(session: Session, now_s: float) -> list[tuple[int, float, int]]:
    """Clusters whose interval has a tick in the current second: (id, interval, enabled
    instances), the last for sizing batches."""
    rows = session.execute(_ENABLED_CLUSTERS).all()
    second = int(now_s)
    return [
        (cid, interval, count)
        for cid, interval, count in rows
        if second % max(1, round(interval)) == 0
    ]
