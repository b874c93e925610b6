"""Several clusters' ticks in one task: one read of all their servers, one transaction.

One Celery task per cluster per second made Celery's own work (the message from the broker,
the hand-over to a pool process, its log line) about a third of a worker's CPU
(``py-spy`` on ``bench/poll_throughput.py``). Beat's dispatcher therefore sends the clusters
due in a second in batches (:func:`batches`), and a task ticks its batch:

- every cluster is loaded and locked (``prepare_tick``), then all their servers are read at
  once by the worker's reader, as one cluster's were: a slow or dead server costs the others
  nothing but the wait for the deadline, which every tick already had;
- the ticks are worked out one after the other in one transaction, the rows they append and
  the columns they change sent together at the end (ingest/tick_writes.py: a multi-row insert
  per table, an executemany update per table and set of columns), one commit for the batch.

A tick whose recording fails rolls the batch's transaction back; then each cluster of the batch
is recorded in its own transaction, with the readings already taken, so one cluster's failure
never loses the others' tick.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from itertools import groupby

from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from lagscope.errors import FencingLost
from lagscope.ingest.reader import ClusterReader, PollResult
from lagscope.ingest.recording import TickSummary
from lagscope.ingest.tick import PreparedTick, TickOptions, prepare_tick, record_prepared
from lagscope.ingest.tick_cache import TickCache
from lagscope.ingest.tick_writes import TickWrites
from lagscope.security.secret_box import SecretBox

log = logging.getLogger(__name__)

Transaction = Callable[[], AbstractContextManager[Session]]


def batches(
    due: Sequence[tuple[int, float, int]], max_instances: int
) -> Iterator[tuple[float, list[int]]]:
    """Group ``(cluster id, interval, instances)`` into ``(interval, cluster ids)`` batches:
    one interval per batch (a batch shares its read's deadline), and at most ``max_instances``
    servers in it unless one cluster alone has more (it is then a batch of its own)."""
    ordered = sorted(due, key=lambda d: (d[1], d[0]))
    for interval, group in groupby(ordered, key=lambda d: d[1]):
        batch: list[int] = []
        size = 0
        for cluster_id, _, instances in group:
            if batch and size + instances > max_instances:
                yield interval, batch
                batch, size = [], 0
            batch.append(cluster_id)
            size += instances
        if batch:
            yield interval, batch


def poll_clusters(
    transaction: Transaction,
    box: SecretBox,
    reader: ClusterReader,
    cluster_ids: Sequence[int],
    options: TickOptions,
    cache: TickCache | None = None,
) -> dict[int, TickSummary]:
    """One tick of each cluster (those gone, disabled or still ticking are skipped); the
    summaries of the ticks recorded, by cluster id. ``cache``: a poll owner's clusters kept
    in memory between ticks (ingest/tick_cache.py), kept again once the ticks committed."""
    readings: dict[int, PollResult] | None = None
    read_s = 0.0
    summaries: dict[int, TickSummary] = {}
    try:
        with transaction() as session:
            ticks = _prepare(session, box, cluster_ids, options, cache)
            if not ticks:
                return {}
            read_at = options.clock()
            readings = _read(reader, ticks)
            read_s = options.clock() - read_at
            writes = TickWrites()
            for tick in ticks:
                mine = _readings_of(tick, readings)
                summaries[tick.cluster.id] = record_prepared(
                    session, tick, mine, options, read_s, writes
                )
            writes.send(session.connection())
        if cache is not None:  # committed: what is in memory is what the store holds
            for tick in ticks:
                cache.keep(tick.cluster, tick.rows, tick.memory)
        return summaries
    except FencingLost:
        raise  # the shard changed owner: none of its ticks may be recorded by this one
    except Exception:
        if readings is None:
            raise  # nothing was read: the store or the reader failed, as the task will say
        log.exception("a batch of %d ticks failed: recording each on its own", len(cluster_ids))
    return _one_by_one(transaction, box, cluster_ids, readings, options, read_s)


def _prepare(
    session: Session,
    box: SecretBox,
    cluster_ids: Sequence[int],
    options: TickOptions,
    cache: TickCache | None = None,
) -> list[PreparedTick]:
    """The batch's ticks; a cluster whose tick cannot be prepared (a bug, not the store: that
    fails the batch) is logged and left out, the others go on."""
    revisions = cache.current(session, cluster_ids) if cache is not None else {}
    ticks = []
    for cluster_id in cluster_ids:
        if cache is not None and cluster_id not in revisions:
            cache.forget([cluster_id])  # gone or disabled
            continue
        try:
            tick = prepare_tick(session, box, cluster_id, options, cache, revisions.get(cluster_id))
        except DBAPIError:
            raise
        except Exception:
            log.exception("cluster %s: preparing its tick failed", cluster_id)
            continue
        if tick is not None:
            ticks.append(tick)
    return ticks


def _read(reader: ClusterReader, ticks: Sequence[PreparedTick]) -> dict[int, PollResult]:
    targets = [target for tick in ticks for target in tick.targets]
    deadline_s = min(tick.deadline_s for tick in ticks)
    behind = set().union(*(tick.behind for tick in ticks))
    return {r.instance_id: r for r in reader.read(targets, deadline_s, behind)}


def _readings_of(tick: PreparedTick, readings: Mapping[int, PollResult]) -> list[PollResult]:
    return [readings[t.instance_id] for t in tick.targets if t.instance_id in readings]


def _one_by_one(
    transaction: Transaction,
    box: SecretBox,
    cluster_ids: Sequence[int],
    readings: Mapping[int, PollResult],
    options: TickOptions,
    read_s: float,
) -> dict[int, TickSummary]:
    summaries: dict[int, TickSummary] = {}
    for cluster_id in cluster_ids:
        try:
            summary = None
            with transaction() as session:
                tick = prepare_tick(session, box, cluster_id, options)
                if tick is not None:
                    mine = _readings_of(tick, readings)
                    summary = record_prepared(session, tick, mine, options, read_s)
            if summary is not None:  # committed: only then is the tick recorded
                summaries[cluster_id] = summary
        except FencingLost:
            raise
        except Exception:
            log.exception("cluster %s: recording its tick failed", cluster_id)
    return summaries
