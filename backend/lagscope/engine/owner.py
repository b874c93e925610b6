"""The poll owner: a long-lived loop that polls the shards this process holds.

One per ``lagscope worker`` (in a child process of its own, engine/process.py), instead of
beat sending every second's ticks as Celery tasks:

- every ``renew_every_s`` a beat (engine/leases.py) renews this owner's leases and membership
  and takes or gives up shards, so owners that join or leave rebalance them;
- on every whole second, the clusters of its shards due then are ticked in batches of at most
  ``batch_instances`` servers, a shard's clusters side by side (ingest/tick_batch.py: one read
  of a batch's servers, one transaction), the batches side by side in a thread pool, so a slow
  or dead server costs only its own batch the wait for the read's deadline;
- each batch's transaction ends with the fence of every shard it covers: a shard taken over
  meanwhile refuses the old owner's write, and the old owner lets the shard go;
- its clusters stay in memory between ticks (ingest/tick_cache.py), reloaded from the store
  when edited elsewhere or taken over;
- one :class:`~lagscope.ingest.reader.ClusterReader` keeps one connection per monitored server
  it polls; the connections of a shard given up or lost are closed at once, so a server never
  holds connections from two owners for long.

Alerts are judged after each batch on the figures its ticks just computed, not read back
(engine/alert_judge.py), and a delivery is queued through the broker; with the broker down the
delivery waits in the store for the sweep, while polling and recording go on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.alerts.tick_figures import TickFigures
from lagscope.analysis.shards import shard_of, tick_batches
from lagscope.engine.leases import Holdings, Leases, fence_all
from lagscope.errors import FencingLost
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.recording import TickSummary
from lagscope.ingest.tick import TickOptions, due_clusters, note_expired_tick
from lagscope.ingest.tick_batch import poll_clusters
from lagscope.ingest.tick_cache import TickCache
from lagscope.models import Instance
from lagscope.security.secret_box import SecretBox

log = logging.getLogger(__name__)

# After a batch: its recorded ticks' figures, for the alert rules (engine/alert_judge.py) and
# the remote write (remote_write/sender.py).
BatchHook = Callable[[Sequence[TickFigures]], None]
REPORT_EVERY_S = 30.0
# A batch that could not start within this many seconds of its second is dropped.
LATE_START_S = 0.5
WARN_EVERY_S = 10.0


@dataclass(slots=True)
class OwnerStats:
    """What the loop has done (for tests, logs and the bench)."""

    ticks: int = 0
    batches: int = 0
    fenced: int = 0
    skipped_busy: int = 0
    late: int = 0
    beats: int = 0
    holdings: Holdings = field(default_factory=Holdings)


def batch_figures(summaries: Iterable[TickSummary]) -> list[TickFigures]:
    """What a batch's recorded ticks give its after-batch hook (the clusters still there)."""
    return [
        TickFigures(summary.cluster, summary.sample_rows, summary.instance_rows, summary.params)
        for summary in summaries
        if summary.cluster is not None
    ]


class PollOwner:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        box: SecretBox,
        reader: ClusterReader,
        options: TickOptions,
        leases: Leases,
        renew_every_s: float,
        after_batch: BatchHook | None = None,
        batch_instances: int = 20,
        max_batches_at_once: int = 4,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sessions = sessions
        self.box = box
        self.reader = reader
        self.options = options
        self.leases = leases
        self.renew_every_s = renew_every_s
        self.after_batch = after_batch
        self.clock = clock
        self.stats = OwnerStats()
        self.cache = TickCache()
        self._warned_at = -WARN_EVERY_S
        self.batch_instances = batch_instances
        self._pool = ThreadPoolExecutor(max_batches_at_once, thread_name_prefix="lagscope-tick")
        # Batches in flight per shard (a shard is not given up while one runs) and the
        # clusters they tick (a cluster is never ticked twice at once).
        self._running: dict[int, int] = {}
        self._ticking: set[int] = set()
        self._held: dict[int, int] = {}
        self._lock = threading.Lock()

    # The loop -------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Until ``stop`` is set; then the leases are given up for the others to take.

        The beats run in a thread of their own: a second's ticks (the store's due query, the
        batches handed out) must never make a lease late, or a busy owner would lose its shards
        to the others and take them back a moment later."""
        beats = threading.Thread(target=self._beats, args=(stop,), name="lagscope-lease-beat")
        beats.start()
        next_second = float(int(self.clock()) + 1)
        next_report = self.clock() + REPORT_EVERY_S
        try:
            while not stop.is_set():
                now = self.clock()
                if now >= next_report:
                    self._report()
                    next_report = now + REPORT_EVERY_S
                if now >= next_second:
                    try:
                        self._tick_second(next_second)
                    except Exception:  # the store, for a second: the next one tries again
                        log.exception("the ticks of %s could not be handed out", next_second)
                    next_second = float(int(self.clock()) + 1)
                stop.wait(max(0.0, next_second - self.clock()))
        finally:
            stop.set()
            beats.join()
            self.close()

    def _beats(self, stop: threading.Event) -> None:
        while not stop.is_set():
            began = self.clock()
            self._beat()
            stop.wait(max(0.0, began + self.renew_every_s - self.clock()))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        try:
            self.leases.release_all()
        except Exception:
            log.exception(
                "giving up the shard leases failed: the others take them when they run out"
            )
        self.reader.close()

    def _note_dropped(self, cluster_ids: list[int], second: float) -> None:
        stored = self.cache.note_expired(cluster_ids, second)
        if len(stored) == len(cluster_ids):
            return
        try:
            with self.sessions() as session, session.begin():
                for cluster_id in set(cluster_ids) - stored:
                    note_expired_tick(session, cluster_id, second)
        except Exception:  # the drop goes on; the gap is then "not polled"
            log.exception("could not note the dropped ticks of clusters %s", cluster_ids)

    def _warn_late(self, cluster_ids: list[int], late_s: float) -> None:
        now = self.clock()
        if now - self._warned_at >= WARN_EVERY_S:
            self._warned_at = now
            log.warning(
                "ticks dropped: clusters %s could not start until %.1f s after their second"
                " (this owner has more to poll than it can; %d dropped so far)",
                cluster_ids,
                late_s,
                self.stats.late,
            )

    def _report(self) -> None:
        """A line a minute in the worker's log: what this owner holds and has done."""
        st = self.stats
        log.info(
            "owner %s: %d shards held, %d owners alive; %d ticks in %d batches, %d skipped"
            " (previous tick still running), %d dropped (started late), %d refused by a fence;"
            " clusters from memory %d, loaded %d",
            self.leases.name,
            len(self._held),
            len(st.holdings.members),
            st.ticks,
            st.batches,
            st.skipped_busy,
            st.late,
            st.fenced,
            self.cache.hits,
            self.cache.loads,
        )

    # One beat: leases and membership ---------------------------------------------------

    def _beat(self) -> None:
        with self._lock:
            busy = frozenset(self._running)
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
        if moved := holdings.gained | holdings.lost:
            # Another owner may have ticked them meanwhile: rebuilt from the store next tick.
            shards = self.leases.shards
            self.cache.forget([c for c in self.cache.ids() if shard_of(c, shards) in moved])

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
        self.cache.forget([c for c in self.cache.ids() if shard_of(c, shards) not in held])

    # One second: the due clusters of every shard held ----------------------------------

    def _tick_second(self, second: float) -> None:
        with self._lock:
            held = dict(self._held)
        if not held:
            return
        shards = self.leases.shards
        with self.sessions() as session:
            due = [d for d in due_clusters(session, second) if shard_of(d[0], shards) in held]
        for batch in tick_batches(due, shards, self.batch_instances):
            with self._lock:
                busy = [c for c in batch if c in self._ticking]
                if busy:
                    # Their previous tick still runs: skipped now, and the gap the next tick
                    # finds says so (the previous tick's duration, over the interval).
                    self.stats.skipped_busy += len(busy)
                    batch = [c for c in batch if c not in self._ticking]
                if not batch:
                    continue
                tokens = {shard_of(c, shards): held[shard_of(c, shards)] for c in batch}
                self._ticking.update(batch)
                future = self._pool.submit(self._tick_batch, batch, tokens, second)
                for shard in tokens:
                    self._running[shard] = self._running.get(shard, 0) + 1
                future.add_done_callback(self._when_done(batch, tokens))

    def _when_done(
        self, batch: list[int], tokens: dict[int, int]
    ) -> Callable[[Future[None]], None]:
        def done(_: Future[None]) -> None:
            with self._lock:
                self._ticking.difference_update(batch)
                for shard in tokens:
                    self._running[shard] -= 1
                    if not self._running[shard]:
                        del self._running[shard]

        return done

    def _tick_batch(self, cluster_ids: list[int], tokens: dict[int, int], second: float) -> None:
        late_s = self.clock() - second
        if late_s > LATE_START_S:
            # Waited for a free thread past its second (more due than this owner can tick):
            # dropped, not run late, so an overloaded owner sheds ticks instead of piling up
            # stale ones. Noted as an expired tick, so the next tick's gap says why.
            self.stats.late += len(cluster_ids)
            self._warn_late(cluster_ids, late_s)
            self._note_dropped(cluster_ids, second)
            return
        try:
            summaries = poll_clusters(
                self._fenced(tokens), self.box, self.reader, cluster_ids, self.options, self.cache
            )
        except FencingLost as exc:
            self.stats.fenced += 1
            log.warning("%s: its tick is not recorded", exc)
            with self._lock:
                if self._held.get(exc.shard) == tokens.get(exc.shard):
                    del self._held[exc.shard]
            self._close_connections_not_held()
            return
        except Exception:
            log.exception("clusters %s: their tick failed", cluster_ids)
            return
        self.stats.batches += 1
        self.stats.ticks += len(summaries)
        if self.after_batch is not None and summaries:
            try:
                self.after_batch(batch_figures(summaries.values()))
            except Exception:  # the ticks are recorded; the next batch judges its own
                log.exception("clusters %s: judging their alerts failed", sorted(summaries))

    def _fenced(self, tokens: dict[int, int]) -> Callable[[], AbstractContextManager[Session]]:
        owner = self.leases.name

        @contextmanager
        def transaction() -> Iterator[Session]:
            with self.sessions() as session, session.begin():
                yield session
                fence_all(session, owner, tokens)

        return transaction
