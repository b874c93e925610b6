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

from lagscope.config import Settings, get_settings
from lagscope.db import make_engine, make_session_factory
from lagscope.engine.alert_judge import AlertJudge
from lagscope.engine.leases import Leases
from lagscope.engine.owner import PollOwner
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import options_from
from lagscope.security.secret_box import store_box

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
    owner = PollOwner(
        sessions,
        store_box(sessions, settings.secret_key, settings.old_keys()),
        ClusterReader(max_threads=READ_THREADS),
        options_from(settings, name),
        Leases(sessions, name, settings.shards, settings.shard_lease_s, time.time),
        settings.shard_renew_every_s,
        after_batch=AlertJudge(sessions),
        batch_instances=settings.owner_batch_instances,
        max_batches_at_once=settings.owner_batches_at_once,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    log.info("poll owner %s ready: %d shards shared among the owners alive", name, settings.shards)
    owner.run(stop)
    log.info("poll owner %s stopped: its shards given up", name)
