"""The poll owner's process: what ``lagscope worker`` runs beside Celery with the owner engine.

It needs the store and the monitored servers, not the broker: with Redis down it goes on
polling and recording; only the deliveries its alerts queue wait (in the store, for the sweep).
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Sequence

from lagscope.alerts.tick_figures import TickFigures
from lagscope.config import Settings, get_settings
from lagscope.db import make_engine, make_session_factory
from lagscope.engine.alert_judge import AlertJudge
from lagscope.engine.leases import Leases
from lagscope.engine.owner import BatchHook, PollOwner
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import options_from
from lagscope.remote_write.sender import RemoteWriter
from lagscope.security.secret_box import store_box
from lagscope.series_store.victoria import series_writer

log = logging.getLogger(__name__)

# Reading threads of one owner: every server of its shards due in a second is read at once, and
# a silent one holds a thread for its connect timeout.
READ_THREADS = 64


def owner_name() -> str:
    """host:pid and a random part: a restarted process with the same pid is a new owner."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def run_owner(settings: Settings | None = None) -> None:
    settings = settings or get_settings()
    logging.basicConfig(
        level=logging.INFO, format="[%(asctime)s: %(levelname)s/poll-owner] %(message)s"
    )
    engine = make_engine(settings.database_url)
    sessions = make_session_factory(engine)
    name = owner_name()
    hooks: list[BatchHook] = [AlertJudge(sessions)]
    writers = [w for w in (remote_writer(settings), series_writer(settings)) if w]
    for writer in writers:
        hooks.append(writer)
        writer.start()
        log.info("%s to %s every %g s", writer.name, writer.url, writer.every_s)
    owner = PollOwner(
        sessions,
        store_box(sessions, settings.secret_key, settings.old_keys()),
        ClusterReader(max_threads=READ_THREADS),
        options_from(settings, name),
        Leases(sessions, name, settings.shards, settings.shard_lease_s, time.time),
        settings.shard_renew_every_s,
        after_batch=each_of(hooks),
        batch_instances=settings.owner_batch_instances,
        max_batches_at_once=settings.owner_batches_at_once,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    log.info("poll owner %s ready: %d shards shared among the owners alive", name, settings.shards)
    try:
        owner.run(stop)
    finally:
        for writer in writers:
            writer.stop()
    log.info("poll owner %s stopped: its shards given up", name)


def remote_writer(settings: Settings) -> RemoteWriter | None:
    if not settings.remote_write_url:
        return None
    return RemoteWriter(
        settings.remote_write_url,
        bearer_token=settings.remote_write_bearer_token,
        every_s=settings.remote_write_every_s,
        max_waiting=settings.remote_write_max_waiting,
        timeout_s=settings.remote_write_timeout_s,
    )


def each_of(hooks: Sequence[BatchHook]) -> BatchHook:
    """The hooks called in turn after a batch; one that fails does not keep the next from it."""

    def after_batch(figures: Sequence[TickFigures]) -> None:
        for hook in hooks:
            try:
                hook(figures)
            except Exception:
                log.exception("after a batch: %r failed", hook)

    return after_batch
