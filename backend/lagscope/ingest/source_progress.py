"""Keep each source's progress history in the store: the lookups a tick's judgement makes, and
the writes of what it decided.

The history (table ``source_progress``) is written once per tick for every instance that some
channel replicates from, so whichever worker polls the cluster next can use it, and it survives
restarts. The decisions (streams, went-back, pruning, interpolation) are in analysis/tick/
sources.py and analysis/timeline.py; this module only loads and saves. A channel needs at most
three rows per stream: the newest, and the two around its applied value, fetched by the primary
key (instance, stream, ts).
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import BigInteger, Connection, Table, bindparam, delete, insert, select, type_coerce

from lagscope.analysis.tick.decisions import ProgressJudged
from lagscope.analysis.timeline import ProgressPoint
from lagscope.ingest.tick_memory import TickMemory
from lagscope.ingest.tick_writes import TickWrites
from lagscope.models import SourceProgress
from lagscope.models.types import from_micros

_TS = type_coerce(SourceProgress.ts, BigInteger())  # the stored µs, no datetime round trip


class StoreHistory:
    """The judgement's :class:`~lagscope.analysis.tick.before.SourceHistory`, read from the
    store; the newest point per stream from ``memory`` when the cluster's last tick stored it.

    Core statements on the session's connection: they must not autoflush the tick's pending
    ORM changes one by one (that doubled the cost of a tick), and times stay integers."""

    def __init__(self, db: Connection, memory: TickMemory | None = None) -> None:
        self._db = db
        self._memory = TickMemory() if memory is None else memory

    def newest(self, instance_id: int, stream: str) -> tuple[int, int] | None:
        if (known := self._memory.newest_progress.get((instance_id, stream))) is not None:
            return known
        row = self._db.execute(_NEWEST, {"instance_id": instance_id, "stream": stream}).first()
        return None if row is None else (int(row[0]), int(row[1]))

    def around(self, instance_id: int, stream: str, target: int) -> list[ProgressPoint]:
        key = {"instance_id": instance_id, "stream": stream, "target": target}
        before = self._db.execute(_BEFORE, key).first()
        if before is None:
            after = self._db.execute(_AFTER, key).first()
        else:
            after = self._db.execute(_AFTER_TS, {**key, "ts": before[0]}).first()
        return [ProgressPoint(r[0] / 1e6, int(r[1])) for r in (before, after) if r is not None]


def write_progress(
    db: Connection,
    progress: ProgressJudged,
    writes: TickWrites | None = None,
    memory: TickMemory | None = None,
) -> None:
    """The deletes run at once (before this tick's point, which ``writes`` may send later)."""
    instance_id = progress.instance_id
    if progress.forget_all:
        db.execute(delete(SourceProgress).where(SourceProgress.instance_id == instance_id))
        if memory is not None:
            for known in [k for k in memory.newest_progress if k[0] == instance_id]:
                del memory.newest_progress[known]
    for stream in progress.went_back:
        db.execute(_DELETE_STREAM, {"instance_id": instance_id, "stream": stream})
    for stream in progress.prune:
        scope = {"instance_id": instance_id, "stream": stream, "cutoff": progress.cutoff_us}
        db.execute(_PRUNE_STREAM, scope)
    if not progress.streams:
        return
    ts = from_micros(progress.at_us)
    rows = [
        {"instance_id": instance_id, "stream": s, "ts": ts, "value": v}
        for s, v in progress.streams.items()
    ]
    if writes is None:
        db.execute(_INSERT, rows)
    else:
        writes.insert(_TABLE, rows)
    if memory is not None:
        for stream, value in progress.streams.items():
            memory.newest_progress[(instance_id, stream)] = (progress.at_us, value)


# Built once with bound parameters: a tick runs them for every stream and lagging channel, and
# building the statement cost more than running it.
_SCOPE = (
    SourceProgress.instance_id == bindparam("instance_id"),
    SourceProgress.stream == bindparam("stream"),
)
_NEWEST = (
    select(_TS, SourceProgress.value).where(*_SCOPE).order_by(SourceProgress.ts.desc()).limit(1)
)
_BEFORE = (
    select(_TS, SourceProgress.value)
    .where(*_SCOPE, SourceProgress.value < bindparam("target"))
    .order_by(SourceProgress.ts.desc())
    .limit(1)
)
_AFTER = (
    select(_TS, SourceProgress.value)
    .where(*_SCOPE, SourceProgress.value >= bindparam("target"))
    .order_by(SourceProgress.ts)
    .limit(1)
)
_AFTER_TS = _AFTER.where(bindparam("ts", type_=BigInteger()) < _TS)
_DELETE_STREAM = delete(SourceProgress).where(*_SCOPE)
_PRUNE_STREAM = _DELETE_STREAM.where(bindparam("cutoff", type_=BigInteger()) > _TS)
_TABLE = cast(Table, SourceProgress.__table__)
_INSERT = insert(_TABLE)
