"""The poll owner: a long-lived loop that polls the shards this process holds.

One per ``lagscope worker`` (in a child process of its own, engine/process.py), instead of
beat sending every second's ticks as Celery tasks:

- every ``renew_every_s`` a beat (engine/leases.py) renews this owner's leases and membership
  and takes or gives up shards, so owners that join or leave rebalance them;
- on every whole second, the clusters of its shards due then are ticked, one shard's clusters
  as one batch (ingest/tick_batch.py: one read of all their servers, one transaction), the
  shards side by side in a thread pool, so a slow or dead server costs only its own shard the
  wait for the read's deadline;
- each tick's transaction ends with the shard's fence: a shard taken over meanwhile refuses
  the old owner's write, and the old owner lets the shard go;
- one :class:`~lagscope.ingest.reader.ClusterReader` keeps one connection per monitored server
  it polls; the connections of a shard given up or lost are closed at once, so a server never
  holds connections from two owners for long.

Alerts are judged after each cluster's tick as on the Celery path, and a delivery is queued
through the broker; with the broker down the delivery waits in the store for the sweep, while
polling and recording go on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.engine.assignment import shard_of
from lagscope.engine.leases import Holdings, Leases, fence
from lagscope.errors import Conflict, FencingLost
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import TickOptions, due_clusters
from lagscope.ingest.tick_batch import poll_clusters
from lagscope.models import Instance
from lagscope.security.secret_box import SecretBox

log = logging.getLogger(__name__)

AlertHook = Callable[[int], None]


@dataclass(slots=True)
class OwnerStats:
    """What the loop has done (for tests, logs and the bench)."""

    ticks: int = 0
    shard_ticks: int = 0
    fenced: int = 0
    skipped_busy: int = 0
    beats: int = 0
    holdings: Holdings = field(default_factory=Holdings)


class PollOwner:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        box: SecretBox,
        reader: ClusterReader,
        options: TickOptions,
        leases: Leases,
        renew_every_s: float,
        after_tick: AlertHook | None = None,
        max_shards_at_once: int = 8,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sessions = sessions
        self.box = box
        self.reader = reader
        self.options = options
        self.leases = leases
        self.renew_every_s = renew_every_s
        self.after_tick = after_tick
        self.clock = clock
        self.stats = OwnerStats()
        self._pool = ThreadPoolExecutor(max_shards_at_once, thread_name_prefix="lagscope-shard")
        self._running: dict[int, Future[None]] = {}
        self._held: dict[int, int] = {}
        self._lock = threading.Lock()

    # The loop -------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Until ``stop`` is set; then the leases are given up for the others to take."""
        next_beat = 0.0
        next_second = float(int(self.clock()) + 1)
        try:
            while not stop.is_set():
                now = self.clock()
                if now >= next_beat:
                    self._beat()
                    next_beat = now + self.renew_every_s
                if now >= next_second:
                    self._tick_second(next_second)
                    next_second = float(int(now) + 1)
                wake = min(next_beat, next_second)
                stop.wait(max(0.0, wake - self.clock()))
        finally:
            self.close()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        try:
            self.leases.release_all()
        except Exception:
            log.exception(
                "giving up the shard leases failed: the others take them when they run out"
            )
        self.reader.close()

    # One beat: leases and membership ---------------------------------------------------

    def _beat(self) -> None:
        with self._lock:
            busy = frozenset(s for s, f in self._running.items() if not f.done())
        try:
            holdings = self.leases.beat(busy)
        except Exception:
            log.exception("the lease beat failed: ticking on with the leases held")
            return
        self.stats.beats += 1
        self.stats.holdings = holdings
        with self._lock:
            self._held = dict(holdings.held)
        if holdings.gained:
            log.info("shards taken: %s", sorted(holdings.gained))
        if holdings.lost:
            log.info("shards given up or lost: %s", sorted(holdings.lost))
            self._close_connections_not_held()

    def _close_connections_not_held(self) -> None:
        """Close the connections to the servers of shards no longer held: the new owner opens
        its own, and a server should not hold two owners' sessions."""
        with self.sessions() as session:
            rows = session.execute(select(Instance.id, Instance.cluster_id)).all()
        shards = self.leases.shards
        with self._lock:
            held = set(self._held)
        keep = {iid for iid, cid in rows if shard_of(cid, shards) in held}
        self.reader.close_all_but(keep)

    # One second: the due clusters of every shard held ----------------------------------

    def _tick_second(self, second: float) -> None:
        with self._lock:
            held = dict(self._held)
        if not held:
            return
        with self.sessions() as session:
            due = due_clusters(session, second)
        by_shard: dict[int, list[int]] = defaultdict(list)
        for cluster_id, _interval, _instances in due:
            shard = shard_of(cluster_id, self.leases.shards)
            if shard in held:
                by_shard[shard].append(cluster_id)
        for shard, cluster_ids in by_shard.items():
            with self._lock:
                running = self._running.get(shard)
                if running is not None and not running.done():
                    self.stats.skipped_busy += 1
                    self._note_skipped(cluster_ids, second)
                    continue
                token = held[shard]
                self._running[shard] = self._pool.submit(
                    self._tick_shard, shard, token, cluster_ids
                )

    def _note_skipped(self, cluster_ids: list[int], second: float) -> None:
        """The shard's previous tick still runs: this one is skipped, and the gap the next tick
        finds says so (the previous tick's duration, over the interval)."""
        log.info("shard tick still running: skipping the clusters %s at %s", cluster_ids, second)

    def _tick_shard(self, shard: int, token: int, cluster_ids: list[int]) -> None:
        try:
            summaries = poll_clusters(
                self._fenced(shard, token), self.box, self.reader, cluster_ids, self.options
            )
        except FencingLost as exc:
            self.stats.fenced += 1
            log.warning("%s: its tick is not recorded", exc)
            with self._lock:
                if self._held.get(shard) == token:
                    del self._held[shard]
            self._close_connections_not_held()
            return
        except Exception:
            log.exception("shard %s: its tick failed", shard)
            return
        self.stats.shard_ticks += 1
        self.stats.ticks += len(summaries)
        if self.after_tick is not None:
            for cluster_id in summaries:
                try:
                    self.after_tick(cluster_id)
                except Conflict:
                    log.info("cluster %s: alert evaluation raced another owner", cluster_id)
                except Exception:
                    log.exception("cluster %s: judging its alerts failed", cluster_id)

    def _fenced(self, shard: int, token: int) -> Callable[[], AbstractContextManager[Session]]:
        owner = self.leases.name

        @contextmanager
        def transaction() -> Iterator[Session]:
            with self.sessions() as session, session.begin():
                yield session
                fence(session, shard, owner, token)

        return transaction
